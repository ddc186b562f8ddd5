// SPDX-License-Identifier: Apache-2.0
// Target 5: differential against OpenCSD's ETMv4I packet processor (opencsd_packets.hpp). On
// inputs that begin with an A-Sync (one is put in front of those that do not), our packet
// boundaries and kinds must equal OpenCSD's, packet by packet, up to the first error either
// side reports, and that first error must be at the same offset. Every class of disagreement
// found is documented in README.md ("Differential testing") as an OpenCSD bug or an
// ETMv4-vs-ETE difference, with the spec rule; classify() recognises exactly those and ends
// the comparison there. Anything else aborts.
// Input: [configuration prefix][trace bytes]. FUZZ_VERBOSE=1 prints both packet lists.
#include <algorithm>
#include <cstdlib>
#include <string>

#include "common.hpp"
#include "opencsd_packets.hpp"

using namespace fuzz;

namespace {

constexpr int kError = -1;      // an error
constexpr int kTruncated = -2;  // the input ended inside a packet
constexpr int kUnknown = -3;    // no OpenCSD packet type for this header

// One packet as both sides can say it: its offset and OpenCSD packet type.
struct item {
  std::uint64_t offset = 0;
  int type = kError;  // ocsd_etmv4_i_pkt_type, or kError / kTruncated
  packet p{};                         // ours: the packet it came from
  error_code code = error_code::ok;   // ours: the error
  int ocsd_err = 0;                   // OpenCSD: the type its error packet replaced
};

bool ocsd_error(ocsd_etmv4_i_pkt_type t) {
  return t == ETM4_PKT_I_BAD_SEQUENCE || t == ETM4_PKT_I_BAD_TRACEMODE ||
         t == ETM4_PKT_I_RESERVED || t == ETM4_PKT_I_RESERVED_CFG;
}

// OpenCSD's packet type for a packet of ours with header h (an Exception: its first part).
int ocsd_type(packet_kind k, std::uint8_t h) {
  using K = packet_kind;
  if (is_exception(k)) {
    if (k == K::pe_reset) return ETE_PKT_I_PE_RESET;
    if (k == K::transaction_failure) return ETE_PKT_I_TRANS_FAIL;
    return ETM4_PKT_I_EXCEPT;
  }
  if (is_cycle_count(k))
    return (h & 0xf0u) == 0x10u ? ETM4_PKT_I_CCNT_F3
           : (h & 0xfeu) == 0x0eu ? ETM4_PKT_I_CCNT_F1
                                  : ETM4_PKT_I_CCNT_F2;
  if (is_q(k)) return ETM4_PKT_I_Q;
  switch (k) {
    case K::async: return ETM4_PKT_I_ASYNC;
    case K::discard: return ETM4_PKT_I_DISCARD;
    case K::overflow: return ETM4_PKT_I_OVERFLOW;
    case K::trace_info: return ETM4_PKT_I_TRACE_INFO;
    case K::trace_on: return ETM4_PKT_I_TRACE_ON;
    case K::timestamp: return ETM4_PKT_I_TIMESTAMP;
    case K::timestamp_marker: return ETE_PKT_I_TS_MARKER;
    case K::transaction_start: return ETE_PKT_I_TRANS_ST;
    case K::transaction_commit: return ETE_PKT_I_TRANS_COMMIT;
    case K::commit: return ETM4_PKT_I_COMMIT;
    case K::cancel_f1: return h == 0x2f ? ETM4_PKT_I_CANCEL_F1_MISPRED : ETM4_PKT_I_CANCEL_F1;
    case K::cancel_f2: return ETM4_PKT_I_CANCEL_F2;
    case K::cancel_f3: return ETM4_PKT_I_CANCEL_F3;
    case K::mispredict: return ETM4_PKT_I_MISPREDICT;
    case K::atom_f1: return ETM4_PKT_I_ATOM_F1;
    case K::atom_f2: return ETM4_PKT_I_ATOM_F2;
    case K::atom_f3: return ETM4_PKT_I_ATOM_F3;
    case K::atom_f4: return ETM4_PKT_I_ATOM_F4;
    case K::atom_f5_1:
    case K::atom_f5_2: return ETM4_PKT_I_ATOM_F5;
    case K::atom_f6: return ETM4_PKT_I_ATOM_F6;
    case K::context_same:
    case K::context: return ETM4_PKT_I_CTXT;
    case K::address_exact: return ETM4_PKT_I_ADDR_MATCH;
    case K::address_short_is0: return ETM4_PKT_I_ADDR_S_IS0;
    case K::address_short_is1: return ETM4_PKT_I_ADDR_S_IS1;
    case K::address_32_is0: return ETM4_PKT_I_ADDR_L_32IS0;
    case K::address_32_is1: return ETM4_PKT_I_ADDR_L_32IS1;
    case K::address_64_is0: return ETM4_PKT_I_ADDR_L_64IS0;
    case K::address_64_is1: return ETM4_PKT_I_ADDR_L_64IS1;
    case K::address_ctx_32_is0: return ETM4_PKT_I_ADDR_CTXT_L_32IS0;
    case K::address_ctx_32_is1: return ETM4_PKT_I_ADDR_CTXT_L_32IS1;
    case K::address_ctx_64_is0: return ETM4_PKT_I_ADDR_CTXT_L_64IS0;
    case K::address_ctx_64_is1: return ETM4_PKT_I_ADDR_CTXT_L_64IS1;
    case K::source_exact: return ETE_PKT_I_SRC_ADDR_MATCH;
    case K::source_short_is0: return ETE_PKT_I_SRC_ADDR_S_IS0;
    case K::source_short_is1: return ETE_PKT_I_SRC_ADDR_S_IS1;
    case K::source_32_is0: return ETE_PKT_I_SRC_ADDR_L_32IS0;
    case K::source_32_is1: return ETE_PKT_I_SRC_ADDR_L_32IS1;
    case K::source_64_is0: return ETE_PKT_I_SRC_ADDR_L_64IS0;
    case K::source_64_is1: return ETE_PKT_I_SRC_ADDR_L_64IS1;
    case K::ignore: return ETM4_PKT_I_IGNORE;
    case K::event: return ETM4_PKT_I_EVENT;
    case K::instrumentation: return ETE_PKT_I_COMMIT_WIN_MV;
    default: return kUnknown;
  }
}

// Our packet as OpenCSD lists it: one item, or two for an Exception (OpenCSD lists the two
// exception bytes, then the address as a packet of its own; an unknown address 0x70 as an
// Ignore packet). PE Reset and Transaction Failure with 0x70 are one 3-byte packet in both.
void to_items(const packet& p, const std::uint8_t* d, std::vector<item>& out) {
  const std::uint8_t h = d[p.offset];
  out.push_back({p.offset, ocsd_type(p.kind, h), p});
  if (is_exception(p.kind) && p.kind != packet_kind::pe_reset &&
      p.kind != packet_kind::transaction_failure) {
    const std::uint8_t ah = d[p.offset + 2];
    const int t = ah == 0x70 ? ETM4_PKT_I_IGNORE : ocsd_type(detail::entry_for(ah, config{}).kind, ah);
    out.push_back({p.offset + 2, t, p});
  }
}

// A configuration in which every header that exists in ETE is valid: ours plus every feature
// (cycle counting, Q, timestamps with markers, 4 events, CID/VMID, MAXSPEC, ETE 1.3).
config every_feature(config c) {
  c.trccci = true;
  c.qsupp = 3;
  c.tsmark = true;
  if (!c.tssize) c.tssize = 64;
  c.numevent = 4;
  c.cidsize = c.vmidsize = 32;
  if (c.maxspec == 0) c.maxspec = 255;
  c.version_major = 1;
  c.version_minor = 3;
  return c;
}

// FUZZ_CLASS_STATS=1: at exit, how many inputs ended in agreement or in each documented class
// (a corpus replay gives the table in README.md).
void count_outcome(const char* what) {
  static const bool on = std::getenv("FUZZ_CLASS_STATS") != nullptr;
  if (!on) return;
  static std::vector<std::pair<std::string, std::size_t>> counts;
  static const bool registered = [] {
    std::atexit([] {
      for (const auto& [name, k] : counts) std::fprintf(stderr, "class %8zu  %s\n", k, name.c_str());
    });
    return true;
  }();
  (void)registered;
  for (auto& [name, k] : counts)
    if (name == what) {
      ++k;
      return;
    }
  counts.emplace_back(what, 1);
}

// ---- documented disagreement classes (README.md, "Differential testing") --------------------
// Each recognises one difference precisely, at item i; the comparison ends there.
const char* classify(const std::vector<item>& ours, const std::vector<item>& theirs, std::size_t i,
                     const std::uint8_t* d, std::size_t n, const config& c) {
  const item* a = i < ours.size() ? &ours[i] : nullptr;
  const item* b = i < theirs.size() ? &theirs[i] : nullptr;
  // A. One of our packets has another length for OpenCSD: either the next items start at
  //    different offsets (ours[i - 1] is that packet), or OpenCSD ends with an error or the
  //    end of the input where we decoded a whole packet (ours[i]).
  const packet* lp = nullptr;
  if (i > 0 && ours[i - 1].type >= 0 && (!a || !b || a->offset != b->offset))
    lp = &ours[i - 1].p;
  else if (a && b && a->offset == b->offset && a->type >= 0 && b->type < 0)
    lp = &a->p;
  if (lp) {
    // A1. Trace Info: ETE has one PLCTL byte (INFO bit 0, SPEC bit 2, CYCT bit 3) and a
    //     one-byte INFO (D5.7, D9.2.6.1); in ETMv4 PLCTL and INFO are continuation-coded and
    //     PLCTL bit 1 adds a KEY section.
    if (lp->kind == packet_kind::trace_info &&
        ((lp->plctl & 0xf2u) || ((lp->plctl & 1u) && (lp->info & 0x80u))))
      return "A1 trace-info-etmv4-sections";
  }
  if (!a || !b || a->offset != b->offset) return nullptr;
  const std::uint64_t o = a->offset;
  const std::uint8_t h = d[o];
  const config all = every_feature(c);
  // A2. Exception TYPE 0 (PE Reset) or 0x18 (Transaction Failure) with an address header
  //     other than 0x70: D9.2.13.1 reads the address AH gives (D5.13 lists TYPE 0 with every
  //     address form); OpenCSD 1.3.3 makes every such packet 3 bytes long.
  //     (Also when the input ends inside our longer packet.)
  if (h == 0x06 && (a->type == ETM4_PKT_I_EXCEPT || a->code == error_code::truncated_packet) &&
      (b->type == ETE_PKT_I_PE_RESET || b->type == ETE_PKT_I_TRANS_FAIL) && o + 2 < n &&
      (((d[o + 1] >> 1) & 0x1fu) == 0 || ((d[o + 1] >> 1) & 0x1fu) == 0x18) && d[o + 2] != 0x70)
    return "A2 exception-type-0-or-0x18-with-address";
  // B. ETE 1.3 Instrumentation (header 0x09, FEAT_ITE) postdates OpenCSD 1.3.3: reserved.
  if (h == 0x09 && c.has_instrumentation() && b->type == kError &&
      (a->type == ETE_PKT_I_COMMIT_WIN_MV || a->code == error_code::truncated_packet))
    return "B instrumentation";
  // C. A header our configuration reserves (D5 "Configurations", D9.2.2): OpenCSD decodes it
  //    whatever TRCIDR0/TRCIDR8 say (Commit/Cancel with MAXSPEC 0, Cycle Count without
  //    TRCCCI, Timestamp without TSSIZE, TS Marker without TSMARK, Q without QSUPP, Events at
  //    or above NUMEVENT).
  //    (OpenCSD may also run into the end of the input reading that packet.)
  if (a->type == kError && a->code == error_code::reserved_header &&
      (b->type >= 0 || b->type == kTruncated)) {
    const header_entry e = detail::entry_for(h, all);
    if (detail::entry_for(h, c).op == payload_op::reserved && e.op != payload_op::reserved &&
        (b->type == kTruncated || b->type == ocsd_type(e.kind, h)))
      return "C header-reserved-in-this-configuration";
  }
  // I. ETMv4 data-trace and conditional-trace packets (data synchronization markers 0x20-0x2C,
  //    conditional instruction/result 0x40-0x6F): OpenCSD decodes them when TRCIDR0 says data
  //    or conditional tracing is implemented; ETE has neither (D9.2.2.1 Parse_Trace():
  //    ReservedEncoding()).
  if (a->type == kError && a->code == error_code::reserved_header &&
      ((h >= 0x20 && h <= 0x2c) || (h >= 0x40 && h <= 0x6f)) &&
      (b->type == ETM4_PKT_I_NUM_DS_MKR || b->type == ETM4_PKT_I_UNNUM_DS_MKR ||
       b->type == ETM4_PKT_I_COND_I_F1 || b->type == ETM4_PKT_I_COND_I_F2 ||
       b->type == ETM4_PKT_I_COND_I_F3 || b->type == ETM4_PKT_I_COND_FLUSH ||
       b->type == ETM4_PKT_I_COND_RES_F1 || b->type == ETM4_PKT_I_COND_RES_F2 ||
       b->type == ETM4_PKT_I_COND_RES_F3 || b->type == ETM4_PKT_I_COND_RES_F4 ||
       b->type == kTruncated))
    return "I etmv4-data-or-conditional-trace-header";
  // D. A continuation-coded field longer than its D5 layout (COMMIT, CANCEL, SPEC, Q COUNT 5
  //    bytes, cycle COUNT 3, CYCT 2, TS 9 or 7 with TSSIZE 48): overlong_field for us;
  //    OpenCSD reads longer runs (perhaps on to the end of the input).
  if (a->type == kError && a->code == error_code::overlong_field &&
      (b->type == kTruncated || b->type == ocsd_type(detail::entry_for(h, c).kind, h)))
    return "D overlong-continuation-field";
  // E. Exception info byte: E must be 0b01 or 0b10 and bit 7 is 0 (D9.2.13.1, D5.13); the
  //    address header must be an address form or 0x70. ETMv4 has E values and a second info
  //    byte ETE does not; OpenCSD lists the exception bytes and decodes whatever follows as
  //    the next packet.
  if (a->type == kError && a->code == error_code::malformed_payload && h == 0x06 &&
      (b->type == ETM4_PKT_I_EXCEPT || b->type == ETE_PKT_I_PE_RESET ||
       b->type == ETE_PKT_I_TRANS_FAIL) &&
      o + 2 < n) {
    const std::uint8_t info = d[o + 1], ah = d[o + 2];
    const unsigned e = (info & 1u) | ((info >> 5) & 2u);
    const bool address = ah == 0x70 || (ah >= 0x90 && ah <= 0x92) || ah == 0x95 || ah == 0x96 ||
                         ah == 0x9a || ah == 0x9b || ah == 0x9d || ah == 0x9e || ah == 0x82 ||
                         ah == 0x83 || ah == 0x85 || ah == 0x86;
    if ((info & 0x80u) || (e != 1 && e != 2) || !address) return "E exception-info-or-address-header";
  }
  // F. Values D5 reserves in an otherwise well-formed packet: Cycle Count format 2_0 large
  //    with a commit count <= 0 (D5.31), Cancel format 1 with CANCEL 0 (D5.36).
  if (a->type == kError && a->code == error_code::malformed_payload && b->type >= 0) {
    if (h == 0x0d && b->type == ETM4_PKT_I_CCNT_F2 && o + 1 < n &&
        static_cast<std::int64_t>(c.maxspec) + (d[o + 1] >> 4) - 15 <= 0)
      return "F cycle-count-2-large-commit-not-positive";
    if ((h == 0x2e || h == 0x2f) && b->type == ocsd_type(packet_kind::cancel_f1, h)) {
      const std::uint8_t* q = d + o + 1;
      std::uint64_t v = 1;
      std::uint8_t len = 0;
      if (detail::read_leb(q, d + n, detail::leb32, v, len) == detail::read_status::ok && v == 0)
        return "F cancel-of-zero";
    }
  }
  // G. A Context payload with the C or V bit although CIDSIZE / VMIDSIZE is 0: D9.2.14.9
  //    reads 4 bytes whatever the size; we report config_mismatch (README), or the end of the
  //    input if it comes first. OpenCSD sizes the field by CIDSIZE / VMIDSIZE, reads 0 bytes
  //    for it, yet still takes one byte after the payload byte into the packet: a packet of
  //    its own kind, or the end of the input if that byte is missing.
  if (a->type < 0 && (b->type >= 0 || b->type == kTruncated) &&
      (a->code == error_code::config_mismatch || a->code == error_code::truncated_packet)) {
    std::uint64_t at = 0;  // offset of the context payload byte
    const std::uint8_t form = h == 0x06 && o + 2 < n ? d[o + 2] : h;
    const std::uint64_t base = h == 0x06 ? o + 2 : o;
    if (form == 0x81) at = base + 1;
    if (form == 0x82 || form == 0x83) at = base + 5;
    if (form == 0x85 || form == 0x86) at = base + 9;
    if (at != 0 && at < n &&
        (((d[at] >> 6) & 1u && c.vmidsize == 0) || ((d[at] >> 7) & 1u && c.cidsize == 0)))
      return "G context-field-without-size";
  }
  // H. A-Sync: D9.2.3 allows a run of at least 11 zeros before 0x80 (one packet, D9.2.3.1);
  //    OpenCSD's ETMv4 A-Sync is exactly 11 zeros and 0x80 and reports longer runs as bad
  //    sequences, 12 bytes at a time. At the end of the input, a zero run is truncated for us.
  if (b->type == kError && b->ocsd_err == ETM4_PKT_I_ASYNC && h == 0x00) {
    if (a->type == ETM4_PKT_I_ASYNC && a->p.size > 12) return "H async-longer-than-12";
    if (a->code == error_code::truncated_packet) {
      bool zeros = true;
      for (std::uint64_t k = o; k < n; ++k) zeros = zeros && d[k] == 0;
      if (zeros) return "H async-zero-run-at-end";
    }
  }
  // (Not a disagreement: the end of the input inside an Exception's address. OpenCSD lists
  // the two exception bytes, then its incomplete address packet.)
  if (a->code == error_code::truncated_packet && h == 0x06 && o + 2 <= n &&
      b->type == ETM4_PKT_I_EXCEPT &&
      (i + 1 == theirs.size() ||
       (theirs[i + 1].type == kTruncated && theirs[i + 1].offset == o + 2)))
    return "exception-address-cut-by-the-end";
  return nullptr;
}

void print(const char* who, const std::vector<item>& v, std::size_t from, std::size_t to) {
  for (std::size_t i = from; i < v.size() && i < to; ++i)
    std::fprintf(stderr, "  %s[%zu] @%llu type 0x%x %s\n", who, i,
                 static_cast<unsigned long long>(v[i].offset), static_cast<unsigned>(v[i].type),
                 who[1] == 'u' ? (v[i].type < 0 ? error_name(v[i].code) : kind_name(v[i].p.kind))
                               : "");
}

void run(registers regs, const std::uint8_t* d, std::size_t n) {
  const runtime_tag t{regs};
  const packet_run ours_run = decode_packets(t, d, n);
  std::vector<item> ours;
  for (const event& e : ours_run.events) {
    if (e.is_error) {
      if (e.d.code == error_code::unsynchronized) continue;
      item x{e.d.offset, e.d.code == error_code::truncated_packet ? kTruncated : kError};
      x.code = e.d.code;
      ours.push_back(x);
      break;  // compare up to the first error
    }
    to_items(e.p, d, ours);
  }
  const bool verbose = std::getenv("FUZZ_VERBOSE") != nullptr;
  // An ETE unit's TRCIDR1 says TRCARCHMAJ = TRCARCHMIN = 0xF; OpenCSD's ETMv4 processor takes
  // its protocol version from there (other values select ETMv4.x packet tables).
  regs.trcidr1 = (regs.trcidr1 & ~0xff0u) | 0xff0u;
  const ocsd_run o = opencsd_packets(regs, d, n, verbose);
  std::vector<item> theirs;
  for (const ocsd_packet& p : o.packets) {
    if (p.type == ETM4_PKT_I_NOTSYNC) continue;
    if (p.type == ETM4_PKT_I_INCOMPLETE_EOT) {
      theirs.push_back({p.index, kTruncated});
      break;
    }
    if (ocsd_error(p.type)) {
      item x{p.index, kError};
      x.ocsd_err = p.err_type;
      theirs.push_back(x);
      break;
    }
    theirs.push_back({p.index, static_cast<int>(p.type)});
  }
  std::size_t i = 0;
  while (i < ours.size() && i < theirs.size() && ours[i].offset == theirs[i].offset &&
         ours[i].type == theirs[i].type && ours[i].type >= 0)
    ++i;
  // Equal lists, or both stop with an error (or the end of the input inside a packet) at the
  // same offset.
  const bool same = (i == ours.size() && i == theirs.size()) ||
                    (i < ours.size() && i < theirs.size() && ours[i].type < 0 &&
                     ours[i].type == theirs[i].type && ours[i].offset == theirs[i].offset);
  const char* why = same ? nullptr : classify(ours, theirs, i, d, n, config::from(regs));
  if (verbose) {
    const item* a = i < ours.size() ? &ours[i] : nullptr;
    const item* b = i < theirs.size() ? &theirs[i] : nullptr;
    std::fprintf(stderr, "%s at item %zu (ours %zu, OpenCSD %zu)\n",
                 same ? "same" : why ? why : "DIFFERENT", i, ours.size(), theirs.size());
    std::fprintf(stderr, "SIG prev=%s ours=%s ocsd=0x%x/0x%x same_offset=%d hdr=%02x\n",
                 i > 0 && ours[i - 1].type >= 0 ? kind_name(ours[i - 1].p.kind) : "-",
                 !a ? "end" : a->type >= 0 ? kind_name(a->p.kind) : error_name(a->code),
                 b ? static_cast<unsigned>(b->type) : 0u, b ? static_cast<unsigned>(b->ocsd_err) : 0u,
                 a && b && a->offset == b->offset, a && a->offset < n ? d[a->offset] : 0);
    print("ours", ours, i > 4 ? i - 4 : 0, i + 4);
    print("ocsd", theirs, i > 4 ? i - 4 : 0, i + 4);
    const std::uint64_t from = a ? a->offset : b ? b->offset : 0;
    for (const ocsd_packet& p : o.packets)
      if (p.index + 40 >= from && p.index <= from + 40)
        std::fprintf(stderr, "  ocsd packet %llu: %s\n", static_cast<unsigned long long>(p.index),
                     p.text.c_str());
    const std::uint64_t lo = from > 16 ? from - 16 : 0;
    std::fprintf(stderr, "  bytes from %llu:", static_cast<unsigned long long>(lo));
    for (std::uint64_t k = lo; k < n && k < from + 24; ++k) std::fprintf(stderr, " %02x", d[k]);
    std::fprintf(stderr, "\n");
  }
  count_outcome(same ? "same packets (or the same first error at the same offset)" : why);
  if (same || why) return;
  FUZZ_CHECK(!"packet boundaries and kinds differ from OpenCSD's");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const config_choice c = choose_config(data, size);
  if (c.consumed == 0) return 0;
  if (validate(c.regs) != error_code::ok) return 0;  // not an ETE unit: nothing to compare
  // The difference classes below are ETE's against OpenCSD's ETMv4 reading; ETMv4 units are
  // compared with OpenCSD's listings of real trace instead (tests/etmv4).
  if (c.regs.proto == protocol::etmv4) return 0;
  std::vector<std::uint8_t> d(data + c.consumed, data + size);
  static const std::uint8_t async[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80};
  if (d.size() < 12 || !std::equal(async, async + 12, d.begin()))
    d.insert(d.begin(), async, async + 12);
  run(c.regs, d.data(), d.size());
  return 0;
}
