// SPDX-License-Identifier: Apache-2.0
// Independent spec vectors for the ETE packet decoder/encoder.
//
// Every byte vector below was built by hand from the packet layouts of
// DDI0608 chapter D5 and the parsing pseudocode of D9.2 (authoritative where the two differ,
// e.g. Cycle Count headers: 0x0C/0x0D = format 2, 0x0E/0x0F = format 1, 0x10-0x1F = format 3),
// and every expected value was computed by hand from the field definitions (the working is in
// the comments). Nothing here was pasted from the output of the code under test.
//
// Layout conventions used throughout:
//   * every vector starts with an A-Sync (11 x 0x00, 0x80 = 12 bytes, D9.2.3: header + at least
//     ten zero payload bytes + 0x80) at offset 0, usually followed by a Trace Info 0x01 0x00 at
//     offset 12 (D9.2.6.2 resets address history, timestamp and context), so the packets under
//     test start at offset 14;
//   * atoms: bit i = i-th (oldest first) atom element, 1 = E, 0 = N.

#include <doctest/doctest.h>

#include <cstdint>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include <tracecodec/ete/packet/decoder.hpp>
#include <tracecodec/ete/packet/encoder.hpp>
#include <tracecodec/host/ete/format.hpp>  // kind_name

namespace {

using namespace tracecodec::ete;
using bytes = std::vector<std::uint8_t>;
using K = packet_kind;
namespace pf = packet_flag;

// ---------------------------------------------------------------------------------------------
// Register sets (field positions from ../shared/conformance/ete/README.md)
//
// TRCIDR0 0x2801cea1 = 0010 1000 0000 0001 1100 1110 1010 0001:
//   bit 29 COMMOPT=1, [28:24] TSSIZE=01000 (64-bit), bit 23 TSMARK=0, [16:15] QSUPP=11,
//   [11:10] NUMEVENT=11 (4 events), bit 9 RETSTACK, bit 7 TRCCCI=1, bit 5 TRCBB.
// TRCIDR2 0xd0001088: [4:0] IASIZE=01000, [9:5] CIDSIZE=00100 (32), [14:10] VMIDSIZE=00100 (32),
//   [28:25] CCSIZE=1000 (20 bits).
constexpr std::uint32_t kDevarch10 = 0x47705a13;  // ETE 1.0
constexpr std::uint32_t kDevarch11 = 0x47715a13;  // ETE 1.1
constexpr std::uint32_t kDevarch13 = 0x47735a13;  // ETE 1.3

constexpr registers R_BASE{0x2801cea1, 0xd0001088, 0, kDevarch10, 0x1, 0};   // COMMOPT 1, MAXSPEC 0
constexpr registers R_SPEC15{0x2801cea1, 0xd0001088, 15, kDevarch10, 0x1, 0}; // COMMOPT 1, MAXSPEC 15
constexpr registers R_C0_255{0x0801cea1, 0xd0001088, 255, kDevarch10, 0x1, 0};  // COMMOPT 0
constexpr registers R_C0_6{0x0801cea1, 0xd0001088, 6, kDevarch10, 0x1, 0};
constexpr registers R_C0_15{0x0801cea1, 0xd0001088, 15, kDevarch10, 0x1, 0};
constexpr registers R_NOCTX{0x2801cea1, 0xd0000008, 0, kDevarch10, 0x1, 0};  // CIDSIZE=VMIDSIZE=0
constexpr registers R_TS48{0x2601cea1, 0xd0001088, 0, kDevarch10, 0x1, 0};   // TSSIZE 00110
constexpr registers R_TS0{0x2001cea1, 0xd0001088, 0, kDevarch10, 0x1, 0};    // TSSIZE 0
constexpr registers R_TSMARK{0x2881cea1, 0xd0001088, 0, kDevarch11, 0x1, 0}; // bit 23
constexpr registers R_NOQ{0x28000ea1, 0xd0001088, 0, kDevarch10, 0x1, 0};    // QSUPP 00
constexpr registers R_NOCCI{0x2801ce21, 0xd0001088, 15, kDevarch10, 0x1, 0}; // TRCCCI 0
constexpr registers R_ETE13{0x2801cea1, 0xd0001088, 0, kDevarch13, 0x1, 0};
constexpr registers R_1EVENT{0x2801c2a1, 0xd0001088, 0, kDevarch10, 0x1, 0};  // NUMEVENT 00
constexpr registers R_2EVENT{0x2801c6a1, 0xd0001088, 0, kDevarch10, 0x1, 0};  // NUMEVENT 01

// ---------------------------------------------------------------------------------------------
// Byte-vector helpers

bytes cat(std::initializer_list<bytes> parts) {
  bytes out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

bytes async_n(unsigned zeros) {
  bytes b(zeros, 0x00);
  b.push_back(0x80);
  return b;
}

const bytes ASYNC = async_n(11);        // 12 bytes
const bytes TI0 = {0x01, 0x00};         // Trace Info variant 1
bytes pre(const bytes& body) { return cat({ASYNC, TI0, body}); }  // body starts at offset 14

struct run_result {
  std::vector<packet> p;
  std::vector<diagnostic> d;
};

template <class Dec>
run_result run_with(Dec& dec, const bytes& in) {
  run_result out;
  dec.decode(in.data(), in.size(), [&](const packet& p) { out.p.push_back(p); },
             [&](const diagnostic& d) { out.d.push_back(d); });
  return out;
}

run_result run(const registers& r, const bytes& in) {
  decoder<runtime_config> dec(r);
  return run_with(dec, in);
}

std::string hex(std::uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

std::string dump(const bytes& b) {
  std::ostringstream s;
  for (auto x : b) s << std::hex << (x < 16 ? "0" : "") << unsigned(x) << ' ';
  return s.str();
}

// An expected packet. Offsets are filled in by expect_seq from the hand-counted sizes.
struct X : packet {
  bool any_ignored = false;  // only require ignored_bits != 0 (the packing is not in the spec)
  X(K k, std::uint32_t sz) {
    kind = k;
    size = sz;
  }
  X& addr(std::uint64_t a, isa s = isa::is0) { address = a; sub_isa = s; return *this; }
  X& cnt(std::uint32_t c) { count = c; return *this; }
  X& cyc(std::uint32_t c) { cycles = c; return *this; }
  X& at(std::uint32_t bits, std::uint8_t n) { atoms = bits; atom_count = n; return *this; }
  X& fl(std::uint8_t f) { flags = f; return *this; }
  X& exc(std::uint8_t type, std::uint8_t ee) { exception_type = type; exception_elements = ee; return *this; }
  X& idx(std::uint8_t i) { index = i; return *this; }
  X& ab(std::uint8_t n) { addr_bytes = n; return *this; }
  X& l1(std::uint8_t n) { value_bytes = n; return *this; }
  X& l2(std::uint8_t n) { count_bytes = n; return *this; }
  X& cx(std::uint32_t cid, std::uint32_t vm, std::uint8_t el_, bool ns_, bool sf_, bool nse_ = false) {
    ctx.context_id = cid; ctx.vmid = vm; ctx.el = el_; ctx.ns = ns_; ctx.sf = sf_; ctx.nse = nse_;
    return *this;
  }
  X& ev(std::uint8_t v) { events = v; return *this; }
  X& tinfo(std::uint8_t pl, std::uint8_t in) { plctl = pl; info = in; return *this; }
  X& ts(std::uint64_t t) { timestamp = t; return *this; }
  X& ign() { any_ignored = true; return *this; }
  X& at_offset(std::uint64_t o) { offset = o; return *this; }
};

#define TC_FIELD(f)                                                                           \
  CHECK_MESSAGE(static_cast<std::uint64_t>(g.f) == static_cast<std::uint64_t>(x.f),           \
                "field " #f ": got " << hex(static_cast<std::uint64_t>(g.f)) << " expected " \
                                     << hex(static_cast<std::uint64_t>(x.f)))

void expect_packet(const packet& g, const X& x) {
  INFO("packet @" << x.offset << " expected kind " << std::string(kind_name(x.kind))
                  << ", got " << std::string(kind_name(g.kind)));
  CHECK(std::string(kind_name(g.kind)) == std::string(kind_name(x.kind)));
  TC_FIELD(offset);
  TC_FIELD(size);
  TC_FIELD(address);
  TC_FIELD(sub_isa);
  TC_FIELD(timestamp);
  TC_FIELD(ctx.context_id);
  TC_FIELD(ctx.vmid);
  TC_FIELD(ctx.el);
  TC_FIELD(ctx.ns);
  TC_FIELD(ctx.nse);
  TC_FIELD(ctx.sf);
  TC_FIELD(count);
  TC_FIELD(cycles);
  TC_FIELD(atoms);
  TC_FIELD(atom_count);
  TC_FIELD(exception_type);
  TC_FIELD(exception_elements);
  TC_FIELD(index);
  TC_FIELD(events);
  TC_FIELD(info);
  TC_FIELD(plctl);
  TC_FIELD(flags);
  TC_FIELD(addr_bytes);
  TC_FIELD(value_bytes);
  TC_FIELD(count_bytes);
  if (x.any_ignored)
    CHECK_MESSAGE(g.ignored_bits != 0, "non-canonical COMMOPT=1 cycle count: ignored_bits must be set");
  else
    TC_FIELD(ignored_bits);
}

// Checks packets r.p[first..] against xs, assigning offsets cumulatively from `off`.
void expect_seq(const run_result& r, std::size_t first, std::uint64_t off, std::vector<X> xs) {
  REQUIRE(r.p.size() == first + xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) {
    xs[i].offset = off;
    off += xs[i].size;
    expect_packet(r.p[first + i], xs[i]);
  }
}

void expect_clean(const run_result& r) {
  for (const auto& d : r.d)
    FAIL_CHECK("unexpected diagnostic " << error_name(d.code) << " @" << d.offset << " len " << d.length);
}

// The A-Sync + Trace Info(0x01 0x00) preamble.
void expect_preamble(const run_result& r) {
  REQUIRE(r.p.size() >= 2);
  expect_packet(r.p[0], X(K::async, 12).at_offset(0));
  expect_packet(r.p[1], X(K::trace_info, 2).at_offset(12));
}

// Re-encodes decoded packets with a fresh encoder and requires the exact input bytes.
void expect_roundtrip(const registers& regs, const bytes& in, const std::vector<packet>& pk) {
  encoder<runtime_config> enc(regs);
  bytes out;
  for (const auto& p : pk) {
    std::uint8_t buf[64]{};
    const encode_result res = enc.encode(p, buf, sizeof buf);
    CHECK_MESSAGE(res.error == error_code::ok,
                  "encode of " << std::string(kind_name(p.kind)) << " @" << p.offset << ": " << error_name(res.error));
    out.insert(out.end(), buf, buf + res.size);
  }
  CHECK_MESSAGE(out == in, "re-encoded: " << dump(out) << "\n   input: " << dump(in));
}

// Decodes `in` and requires that the first diagnostic is {code, offset}.
void expect_error(const registers& regs, const bytes& in, error_code code, std::uint64_t offset) {
  const run_result r = run(regs, in);
  REQUIRE_MESSAGE(!r.d.empty(), "no diagnostic for " << dump(in));
  CHECK_MESSAGE(r.d[0].code == code, "got " << error_name(r.d[0].code) << " expected " << error_name(code)
                                          << " for " << dump(in));
  CHECK(r.d[0].offset == offset);
}

// A header byte alone after the preamble is reserved in this configuration; the decoder then
// recovers at the next A-Sync: append A-Sync, Trace Info and an E atom and check they decode.
void expect_reserved_header(const registers& regs, std::uint8_t h) {
  INFO("header " << hex(h));
  const bytes in = cat({pre({h}), ASYNC, TI0, {0xF7}});
  const run_result r = run(regs, in);
  REQUIRE(r.d.size() >= 1);
  CHECK_MESSAGE(r.d[0].code == error_code::reserved_header, "got " << error_name(r.d[0].code));
  CHECK(r.d[0].offset == 14);
  for (std::size_t i = 1; i < r.d.size(); ++i) CHECK(r.d[i].code == error_code::unsynchronized);
  // async@0, TI@12, (header@14 rejected), async@15, TI@27, atom@29
  REQUIRE(r.p.size() == 5);
  expect_preamble(r);
  expect_packet(r.p[2], X(K::async, 12).at_offset(15));
  expect_packet(r.p[3], X(K::trace_info, 2).at_offset(27));
  expect_packet(r.p[4], X(K::atom_f1, 1).at(1, 1).at_offset(29));
}

}  // namespace

// =============================================================================================
// D5.4 A-Sync, D5.5 Discard, D5.6 Overflow
// =============================================================================================

TEST_CASE("spec: A-Sync, 11 zeros + 0x80 (12 bytes) and a long 20-zero form") {
  {
    const bytes in = ASYNC;
    const run_result r = run(R_BASE, in);
    expect_clean(r);
    expect_seq(r, 0, 0, {X(K::async, 12)});
    expect_roundtrip(R_BASE, in, r.p);
  }
  {
    const bytes in = cat({async_n(20), TI0, async_n(15)});  // 21 + 2 + 16 bytes
    const run_result r = run(R_BASE, in);
    expect_clean(r);
    expect_seq(r, 0, 0, {X(K::async, 21), X(K::trace_info, 2), X(K::async, 16)});
    expect_roundtrip(R_BASE, in, r.p);
  }
}

TEST_CASE("spec: Discard (0x00 0x03) and Overflow (0x00 0x05)") {
  const bytes in = pre({0x00, 0x03, 0x00, 0x05});
  const run_result r = run(R_BASE, in);
  expect_clean(r);
  expect_preamble(r);
  expect_seq(r, 2, 14, {X(K::discard, 2), X(K::overflow, 2)});
  expect_roundtrip(R_BASE, in, r.p);
}

TEST_CASE("spec: malformed extension packets") {
  // D9.2.3.1: an extension byte other than 0x00/0x03/0x05 is reserved.
  expect_error(R_BASE, pre({0x00, 0x07}), error_code::malformed_payload, 14);
  // D9.2.3: at least ten zero payload bytes before the 0x80: header + 9 zeros + 0x80 is bad.
  expect_error(R_BASE, cat({pre(async_n(10)), ASYNC}), error_code::bad_async, 14);
  // A run of zeros that ends in something other than 0x80.
  expect_error(R_BASE, cat({pre({0x00, 0x00, 0x00, 0x01}), ASYNC}), error_code::bad_async, 14);
}

// =============================================================================================
// D5.7 Trace Info: PLCTL bit 0 INFO, bit 2 SPEC, bit 3 CYCT; D9.2.6.2 threshold
// =============================================================================================

TEST_CASE("spec: Trace Info, all 8 variants") {
  SUBCASE("variant 1: PLCTL 0x00") {
    const bytes in = cat({ASYNC, {0x01, 0x00}});
    const run_result r = run(R_BASE, in);
    expect_clean(r);
    expect_seq(r, 0, 0, {X(K::async, 12), X(K::trace_info, 2).tinfo(0x00, 0x00)});
    CHECK_FALSE(r.p[1].cc_enabled());
    CHECK_FALSE(r.p[1].transactional());
    expect_roundtrip(R_BASE, in, r.p);
  }
  SUBCASE("variant 2: PLCTL 0x01, INFO 0x41 (T=1, CC=1)") {
    const bytes in = cat({ASYNC, {0x01, 0x01, 0x41}});
    const run_result r = run(R_BASE, in);
    expect_clean(r);
    expect_seq(r, 0, 0, {X(K::async, 12), X(K::trace_info, 3).tinfo(0x01, 0x41)});
    CHECK(r.p[1].cc_enabled());
    CHECK(r.p[1].transactional());
    expect_roundtrip(R_BASE, in, r.p);
  }
  SUBCASE("variant 3: PLCTL 0x04, SPEC 300 = 0xAC 0x02") {
    // 300 = 0b10_0101100: byte 0 = 0x80 | 0x2C, byte 1 = 0x02.
    const bytes in = cat({ASYNC, {0x01, 0x04, 0xAC, 0x02}});
    const run_result r = run(R_BASE, in);
    expect_clean(r);
    expect_seq(r, 0, 0, {X(K::async, 12), X(K::trace_info, 4).tinfo(0x04, 0).cnt(300).l1(2)});
    expect_roundtrip(R_BASE, in, r.p);
  }
  SUBCASE("variant 4: PLCTL 0x05, INFO 0x00, SPEC 0xFFFFFFFF in 5 bytes") {
    // 32 ones: four bytes 0xFF (C0=1, 7 ones) then (0)(0)(0)(0) SPEC[31:28] = 0x0F.
    const bytes in = cat({ASYNC, {0x01, 0x05, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F}});
    const run_result r = run(R_BASE, in);
    expect_clean(r);
    expect_seq(r, 0, 0,
               {X(K::async, 12), X(K::trace_info, 8).tinfo(0x05, 0x00).cnt(0xFFFFFFFFu).l1(5)});
    expect_roundtrip(R_BASE, in, r.p);
  }
  SUBCASE("variant 5: PLCTL 0x08, CYCT 291 without INFO -> threshold 0") {
    // 291 = 0x123: byte 0 = 0x80 | 0x23 = 0xA3, byte 1 = 291 >> 7 = 2.
    // D9.2.6.2: cc_threshold = INFO<0> ? CYCT : 0, INFO is not output so it is 0.
    // Then Cycle Count 3_1 0x11 (BB = 1) -> cycles 0 + 1 = 1.
    const bytes in = cat({ASYNC, {0x01, 0x08, 0xA3, 0x02, 0x11}});
    const run_result r = run(R_BASE, in);
    expect_clean(r);
    expect_seq(r, 0, 0,
               {X(K::async, 12), X(K::trace_info, 4).tinfo(0x08, 0).cyc(291).l2(2),
                X(K::cycle_count_f3_1, 1).cyc(1)});
    expect_roundtrip(R_BASE, in, r.p);
  }
  SUBCASE("variant 6: PLCTL 0x09, INFO CC=1, CYCT 291 -> threshold 291") {
    const bytes in = cat({ASYNC, {0x01, 0x09, 0x01, 0xA3, 0x02, 0x11}});
    const run_result r = run(R_BASE, in);
    expect_clean(r);
    expect_seq(r, 0, 0,
               {X(K::async, 12), X(K::trace_info, 5).tinfo(0x09, 0x01).cyc(291).l2(2),
                X(K::cycle_count_f3_1, 1).cyc(292)});
    expect_roundtrip(R_BASE, in, r.p);
  }
  SUBCASE("variant 7: PLCTL 0x0C, SPEC 3, CYCT 7, no INFO -> threshold 0") {
    const bytes in = cat({ASYNC, {0x01, 0x0C, 0x03, 0x07, 0x13}});
    const run_result r = run(R_BASE, in);
    expect_clean(r);
    expect_seq(r, 0, 0,
               {X(K::async, 12), X(K::trace_info, 4).tinfo(0x0C, 0).cnt(3).cyc(7).l1(1).l2(1),
                X(K::cycle_count_f3_1, 1).cyc(3)});
    expect_roundtrip(R_BASE, in, r.p);
  }
  SUBCASE("variant 8: PLCTL 0x0D, INFO 0x01, SPEC 131, CYCT 4095 (max, 12 bits)") {
    // SPEC 131 = 0x83: 0x80|0x03 = 0x83, 0x01. CYCT 4095 = 0xFFF: 0xFF, 0x1F.
    // Threshold 4095: 0x13 (BB=3) -> 4098; Cycle Count 1_1 0x0E 0x0A (COUNT 10) -> 4105.
    const bytes in = cat({ASYNC, {0x01, 0x0D, 0x01, 0x83, 0x01, 0xFF, 0x1F, 0x13, 0x0E, 0x0A}});
    const run_result r = run(R_BASE, in);
    expect_clean(r);
    expect_seq(r, 0, 0,
               {X(K::async, 12),
                X(K::trace_info, 7).tinfo(0x0D, 0x01).cnt(131).l1(2).cyc(4095).l2(2),
                X(K::cycle_count_f3_1, 1).cyc(4098), X(K::cycle_count_f1_1, 2).cyc(4105).l2(1)});
    CHECK(r.p[1].cc_enabled());
    expect_roundtrip(R_BASE, in, r.p);
  }
}

TEST_CASE("spec: Trace Info resets address history, timestamp and context (D9.2.6.2)") {
  // Context 0x81 0xB3 + CID: C=1 V=0 NS=1 SF=1 EL=3, CID 0x11223344.
  // 64-bit address 0xFFFF000012345678 (bytes worked out in the Target Address test).
  // Timestamp 0x02 0x7F: TS[6:0] = 0x7F.
  // Then Trace Info, then: Context Same (context back to all-zero), exact match 0x92 (entry 2
  // is 0 after the reset), Timestamp 0x02 0x01 (bits above 6 come from the reset value 0).
  const bytes body1 = {0x81, 0xB3, 0x44, 0x33, 0x22, 0x11,                         // @14, 6
                       0x9D, 0x1E, 0x2B, 0x34, 0x12, 0x00, 0x00, 0xFF, 0xFF,       // @20, 9
                       0x02, 0x7F,                                                 // @29, 2
                       0x01, 0x00,                                                 // @31, 2
                       0x80,                                                       // @33, 1
                       0x92,                                                       // @34, 1
                       0x02, 0x01};                                                // @35, 2
  const bytes in = pre(body1);
  const run_result r = run(R_BASE, in);
  expect_clean(r);
  expect_preamble(r);
  expect_seq(r, 2, 14,
             {X(K::context, 6).cx(0x11223344, 0, 3, true, true).fl(pf::has_context_id),
              X(K::address_64_is0, 9).addr(0xFFFF000012345678),
              X(K::timestamp, 2).ts(0x7F).l1(1),
              X(K::trace_info, 2),
              X(K::context_same, 1).cx(0, 0, 0, false, false),
              X(K::address_exact, 1).addr(0, isa::is0).idx(2),
              X(K::timestamp, 2).ts(0x01).l1(1)});
  expect_roundtrip(R_BASE, in, r.p);
}

TEST_CASE("spec: A-Sync, Discard and Overflow do not reset the retained state") {
  // Only Trace Info resets (D9.2.6.2); D9.2.3.1 A-Sync, D9.2.4.1 Discard and D9.2.5.1 Overflow
  // leave the address history, timestamp and context alone.
  //   81 B1 44 33 22 11 @14: C1 V0 NS1 SF1 EL1, CID 0x11223344.
  //   9D ... @20: A1 = 0xFFFF000012345678.
  //   02 FF 01 @29: TS = 0x7F | 1 << 7 = 0xFF.
  //   A-Sync @32, 00 03 @44, 00 05 @46.
  //   90 @48: entry 0 is still A1.
  //   81 10 @49: C0 V0 NS0 SF1 EL0: CID 0x11223344 is kept.
  //   02 01 @51: TS[6:0] = 1: 0xFF -> 0x81 (it would be 0x01 after a reset).
  const bytes in = cat({pre({0x81, 0xB1, 0x44, 0x33, 0x22, 0x11, 0x9D, 0x1E, 0x2B, 0x34, 0x12,
                             0x00, 0x00, 0xFF, 0xFF, 0x02, 0xFF, 0x01}),
                        ASYNC, {0x00, 0x03, 0x00, 0x05, 0x90, 0x81, 0x10, 0x02, 0x01}});
  const run_result r = run(R_BASE, in);
  expect_clean(r);
  expect_preamble(r);
  expect_seq(r, 2, 14,
             {X(K::context, 6).cx(0x11223344, 0, 1, true, true).fl(pf::has_context_id),
              X(K::address_64_is0, 9).addr(0xFFFF000012345678ull),
              X(K::timestamp, 3).ts(0xFF).l1(2), X(K::async, 12), X(K::discard, 2),
              X(K::overflow, 2), X(K::address_exact, 1).idx(0).addr(0xFFFF000012345678ull),
              X(K::context, 2).cx(0x11223344, 0, 0, false, true),
              X(K::timestamp, 2).ts(0x81).l1(1)});
  expect_roundtrip(R_BASE, in, r.p);
}

// =============================================================================================
// D5.8 Trace On, D5.10 Timestamp Marker, D5.11/12 Transactions, D5.67 Ignore
// =============================================================================================

TEST_CASE("spec: single-byte packets Trace On, Transaction Start/Commit, Ignore") {
  const bytes in = pre({0x04, 0x0A, 0x0B, 0x70});
  const run_result r = run(R_BASE, in);
  expect_clean(r);
  expect_preamble(r);
  expect_seq(r, 2, 14,
             {X(K::trace_on, 1), X(K::transaction_start, 1), X(K::transaction_commit, 1),
              X(K::ignore, 1)});
  expect_roundtrip(R_BASE, in, r.p);
}

TEST_CASE("spec: Timestamp Marker 0x88 needs TSMARK (D5.10)") {
  const bytes in = pre({0x88});
  const run_result r = run(R_TSMARK, in);
  expect_clean(r);
  expect_preamble(r);
  expect_seq(r, 2, 14, {X(K::timestamp_marker, 1)});
  expect_roundtrip(R_TSMARK, in, r.p);
  expect_reserved_header(R_BASE, 0x88);  // TSMARK = 0
}

// =============================================================================================
// D5.9 Timestamp (bit replacement, D9.2.16.1)
// =============================================================================================

TEST_CASE("spec: Timestamp without COUNT, bit replacement, 9-byte full form") {
  // 0x02 0x81 0x01: TS[6:0] = 1, TS[13:7] = 1 -> 0x81.
  // 0x02 0x05: replaces TS[6:0] only: 0x81 -> 0x80 | 0x05 = 0x85.
  // 0x02 + 9 bytes: TS = 0x8123456789ABCDEF: eight 7-bit groups with C0 = 1
  //   (EF 9B AF CD F8 AC D1 91) and the 9th byte TS[63:56] = 0x81 (8 bits, no C0).
  // 0x02 0x85 0x02: replaces TS[13:0] with 0x05 | 0x02 << 7 = 0x105:
  //   0x8123456789ABCDEF & ~0x3FFF | 0x105 = 0x8123456789ABC105.
  const bytes in = pre({0x02, 0x81, 0x01,                                            // @14, 3
                        0x02, 0x05,                                                  // @17, 2
                        0x02, 0xEF, 0x9B, 0xAF, 0xCD, 0xF8, 0xAC, 0xD1, 0x91, 0x81,  // @19, 10
                        0x02, 0x85, 0x02});                                          // @29, 3
  const run_result r = run(R_BASE, in);
  expect_clean(r);
  expect_preamble(r);
  expect_seq(r, 2, 14,
             {X(K::timestamp, 3).ts(0x81).l1(2), X(K::timestamp, 2).ts(0x85).l1(1),
              X(K::timestamp, 10).ts(0x8123456789ABCDEFull).l1(9),
              X(K::timestamp, 3).ts(0x8123456789ABC105ull).l1(2)});
  expect_roundtrip(R_BASE, in, r.p);
}

TEST_CASE("spec: Timestamp with COUNT (header 0x03)") {
  // 0x03 0x05 0x83 0x01: TS[6:0] = 5; COUNT = 0x03 | 0x01 << 7 = 131.
  // 0x03 0xFF 0x7F 0xFF 0xFF 0x3F: TS[13:0] = 0x3FFF (0x7F | 0x7F << 7), previous TS was 5
  //   -> 0x3FFF; COUNT = 20 ones = 0xFFFFF in 3 bytes (0xFF 0xFF 0x3F).
  const bytes in = pre({0x03, 0x05, 0x83, 0x01,               // @14, 4
                        0x03, 0xFF, 0x7F, 0xFF, 0xFF, 0x3F});  // @18, 6
  const run_result r = run(R_BASE, in);
  expect_clean(r);
  expect_preamble(r);
  expect_seq(r, 2, 14,
             {X(K::timestamp, 4).ts(5).cyc(131).l1(1).l2(2).fl(pf::has_count),
              X(K::timestamp, 6).ts(0x3FFF).cyc(0xFFFFF).l1(2).l2(3).fl(pf::has_count)});
  expect_roundtrip(R_BASE, in, r.p);
}

TEST_CASE("spec: Timestamp with TSSIZE 48: at most 7 bytes") {
  // 0x02 + six 0xFF + 0x3F: 6 x 7 ones + TS[47:42] = 0x3F -> 48 ones = 0xFFFFFFFFFFFF.
  const bytes ok = pre({0x02, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x3F});
  const run_result r = run(R_TS48, ok);
  expect_clean(r);
  expect_preamble(r);
  expect_seq(r, 2, 14, {X(K::timestamp, 8).ts(0xFFFFFFFFFFFFull).l1(7)});
  expect_roundtrip(R_TS48, ok, r.p);
  // Seven bytes all with C0 = 1: an eighth byte would exceed the 48-bit field.
  expect_error(R_TS48, pre({0x02, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}),
               error_code::overlong_field, 14);
  // The same 9-byte form that is valid with TSSIZE 64 is overlong with TSSIZE 48.
  expect_error(R_TS48, pre({0x02, 0xEF, 0x9B, 0xAF, 0xCD, 0xF8, 0xAC, 0xD1, 0x91, 0x81}),
               error_code::overlong_field, 14);
}

TEST_CASE("spec: Timestamp headers are reserved when TSSIZE is 0 (D5.9 Configurations)") {
  expect_reserved_header(R_TS0, 0x02);
  expect_reserved_header(R_TS0, 0x03);
}

// =============================================================================================
// D5.13-D5.25 Exceptions (D9.2.13)
// Exception byte: bit 6 = E[1], bits 5:1 = TYPE, bit 0 = E[0].
//   E=01: TYPE << 1 | 1; E=10: 0x40 | TYPE << 1.
// =============================================================================================

TEST_CASE("spec: Exception exact match address 0x90-0x92") {
  // History after Trace Info: [0, 0, 0]. Then:
  //   0x9A 00 08 00 00: 32-bit IS0, A[15:9] = 8 -> 0x1000           history [0x1000]
  //   0x9B 01 20 00 00: 32-bit IS1, A[7:1] = 1, A[15:8] = 0x20 -> 0x2002 IS1
  //   0x9A 00 18 00 00: A[15:9] = 0x18 -> 0x3000                     [0x3000, 0x2002/1, 0x1000]
  //   0x06 0x1D 0x91: E=01 TYPE 0x0E (IRQ) entry 1 = 0x2002 IS1    [0x2002/1, 0x3000, 0x2002/1]
  //   0x06 0x5C 0x90: E=10 TYPE 0x0E entry 0 = 0x2002 IS1          [0x2002/1, 0x2002/1, 0x3000]
  //   0x06 0x05 0x92: E=01 TYPE 0x02 (Call) entry 2 = 0x3000 IS0   [0x3000, 0x2002/1, 0x2002/1]
  const bytes in = pre({0x9A, 0x00, 0x08, 0x00, 0x00, 0x9B, 0x01, 0x20, 0x00, 0x00, 0x9A, 0x00,
                        0x18, 0x00, 0x00, 0x06, 0x1D, 0x91, 0x06, 0x5C, 0x90, 0x06, 0x05, 0x92});
  decoder<runtime_config> dec(R_BASE);
  const run_result r = run_with(dec, in);
  expect_clean(r);
  expect_preamble(r);
  expect_seq(r, 2, 14,
             {X(K::address_32_is0, 5).addr(0x1000), X(K::address_32_is1, 5).addr(0x2002, isa::is1),
              X(K::address_32_is0, 5).addr(0x3000),
              X(K::exception_exact, 3).exc(0x0E, 1).idx(1).addr(0x2002, isa::is1),
              X(K::exception_exact, 3).exc(0x0E, 2).idx(0).addr(0x2002, isa::is1),
              X(K::exception_exact, 3).exc(0x02, 1).idx(2).addr(0x3000, isa::is0)});
  const auto& h = dec.state().history;
  CHECK(h.entry[0].address == 0x3000);
  CHECK(h.entry[0].sub_isa == isa::is0);
  CHECK(h.entry[1].address == 0x2002);
  CHECK(h.entry[1].sub_isa == isa::is1);
  CHECK(h.entry[2].address == 0x2002);
  CHECK(h.entry[2].sub_isa == isa::is1);
  expect_roundtrip(R_BASE, in, r.p);
}

TEST_CASE("spec: Exception short, 32-bit and 64-bit address forms") {
  // 0x9D 1E 2B 34 12 00 00 FF FF -> A1 = 0xFFFF000012345678 IS0 (see Target Address test).
  // 06 17 95 05: 0x17 -> E=01, TYPE 0x0B (Inst Fault); short IS0, 1 byte: A[8:2] = 5 ->
  //   bits [8:0] replaced by 0x14: 0xFFFF000012345614.
  // 06 58 95 85 A3: 0x58 -> E=10, TYPE 0x0C (Data Fault); 2 bytes: A[8:2] = 5, A[16:9] = 0xA3
  //   -> 0x14 | 0xA3 << 9 = 0x14614 replaces [16:0]: 0xFFFF000012354614.
  // 06 1D 96 10: IRQ; short IS1 1 byte: A[7:1] = 0x10 -> [7:0] = 0x20: 0xFFFF000012354620 IS1.
  // 06 1F 96 91 34: 0x1F -> E=01 TYPE 0x0F (FIQ); IS1 2 bytes: A[7:1] = 0x11, A[15:8] = 0x34
  //   -> [15:0] = 0x3422: 0xFFFF000012353422 IS1.
  // 06 03 9A 48 21 65 87: TYPE 1 (Debug halt); 32-bit IS0: 0x48 << 2 | 0x21 << 9 | 0x65 << 16 |
  //   0x87 << 24 = 0x87654320, bits [63:32] kept: 0xFFFF000087654320.
  // 06 07 9B 67 AB 00 00: TYPE 3 (Trap); 32-bit IS1: 0x67 << 1 | 0xAB << 8 = 0xABCE:
  //   0xFFFF00000000ABCE IS1.
  // 06 21 9D 00 08 00 80 00 00 00 00: TYPE 0x10 (IMP DEF 0); 64-bit IS0: 8 << 9 | 0x80 << 24 =
  //   0x0000000080001000.
  // 06 4E 9E 77 BE AD DE FF 7F 00 00: 0x4E -> E=10 TYPE 7 (Data debug); 64-bit IS1:
  //   0x77 << 1 = 0xEE, then 0xBE, 0xAD, 0xDE, 0xFF, 0x7F, 0, 0 -> 0x00007FFFDEADBEEE IS1.
  const bytes in = pre({0x9D, 0x1E, 0x2B, 0x34, 0x12, 0x00, 0x00, 0xFF, 0xFF,        // @14 9
                        0x06, 0x17, 0x95, 0x05,                                      // @23 4
                        0x06, 0x58, 0x95, 0x85, 0xA3,                                // @27 5
                        0x06, 0x1D, 0x96, 0x10,                                      // @32 4
                        0x06, 0x1F, 0x96, 0x91, 0x34,                                // @36 5
                        0x06, 0x03, 0x9A, 0x48, 0x21, 0x65, 0x87,                    // @41 7
                        0x06, 0x07, 0x9B, 0x67, 0xAB, 0x00, 0x00,                    // @48 7
                        0x06, 0x21, 0x9D, 0x00, 0x08, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00,  // 11
                        0x06, 0x4E, 0x9E, 0x77, 0xBE, 0xAD, 0xDE, 0xFF, 0x7F, 0x00, 0x00}); // 11
  const run_result r = run(R_BASE, in);
  expect_clean(r);
  expect_preamble(r);
  expect_seq(r, 2, 14,
             {X(K::address_64_is0, 9).addr(0xFFFF000012345678ull),
              X(K::exception_short_is0, 4).exc(0x0B, 1).ab(1).addr(0xFFFF000012345614ull),
              X(K::exception_short_is0, 5).exc(0x0C, 2).ab(2).addr(0xFFFF000012354614ull),
              X(K::exception_short_is1, 4).exc(0x0E, 1).ab(1).addr(0xFFFF000012354620ull, isa::is1),
              X(K::exception_short_is1, 5).exc(0x0F, 1).ab(2).addr(0xFFFF000012353422ull, isa::is1),
              X(K::exception_32_is0, 7).exc(0x01, 1).addr(0xFFFF000087654320ull),
              X(K::exception_32_is1, 7).exc(0x03, 1).addr(0xFFFF00000000ABCEull, isa::is1),
              X(K::exception_64_is0, 11).exc(0x10, 1).addr(0x0000000080001000ull),
              X(K::exception_64_is1, 11).exc(0x07, 2).addr(0x00007FFFDEADBEEEull, isa::is1)});
  expect_roundtrip(R_BASE, in, r.p);
}

TEST_CASE("spec: Exception with context, 32/64-bit IS0/IS1, with and without CID/VMID") {
  // Context byte: C(7) V(6) NS(5) SF(4) NSE(3) (0)(2) EL(1:0); VMID then CONTEXTID, LE.
  // 06 1D 82 48 21 65 87 31: IRQ, 32-bit IS0 0x87654320 (bits 63:32 = 0 after Trace Info);
  //   0x31: C0 V0 NS1 SF1 EL1.
  // 06 5C 83 67 AB 00 00 A2 78 56 34 12: E=10 IRQ; 32-bit IS1 0xABCE; 0xA2: C1 V0 NS1 SF0 EL2,
  //   CID 0x12345678.
  // 06 1D 85 1E 2B 34 12 00 00 FF FF 50 EF BE AD DE: 64-bit IS0 0xFFFF000012345678; 0x50:
  //   C0 V1 NS0 SF1 EL0, VMID 0xDEADBEEF, CID kept (0x12345678).
  // 06 1D 86 77 BE AD DE FF 7F 00 00 F9 01 00 00 00 02 00 00 00 (20 bytes, the longest packet):
  //   64-bit IS1 0x00007FFFDEADBEEE; 0xF9: C1 V1 NS1 SF1 NSE1 EL1, VMID 1, CID 2.
  // 06 1D 85 1E 2B 34 12 00 00 FF FF 10: 0x10: C0 V0 NS0 SF1 EL0, CID/VMID kept (2 and 1).
  const bytes in = pre({0x06, 0x1D, 0x82, 0x48, 0x21, 0x65, 0x87, 0x31,                    // 8
                        0x06, 0x5C, 0x83, 0x67, 0xAB, 0x00, 0x00, 0xA2, 0x78, 0x56, 0x34, 0x12,  // 12
                        0x06, 0x1D, 0x85, 0x1E, 0x2B, 0x34, 0x12, 0x00, 0x00, 0xFF, 0xFF, 0x50,
                        0xEF, 0xBE, 0xAD, 0xDE,                                              // 16
                        0x06, 0x1D, 0x86, 0x77, 0xBE, 0xAD, 0xDE, 0xFF, 0x7F, 0x00, 0x00, 0xF9,
                        0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,                      // 20
                        0x06, 0x1D, 0x85, 0x1E, 0x2B, 0x34, 0x12, 0x00, 0x00, 0xFF, 0xFF, 0x10});  // 12
  const run_result r = run(R_BASE, in);
  expect_clean(r);
  expect_preamble(r);
  expect_seq(r, 2, 14,
             {X(K::exception_ctx_32_is0, 8).exc(0x0E, 1).addr(0x87654320).cx(0, 0, 1, true, true),
              X(K::exception_ctx_32_is1, 12).exc(0x0E, 2).addr(0xABCE, isa::is1)
                  .cx(0x12345678, 0, 2, true, false).fl(pf::has_context_id),
              X(K::exception_ctx_64_is0, 16).exc(0x0E, 1).addr(0xFFFF000012345678ull)
                  .cx(0x12345678, 0xDEADBEEF, 0, false, true).fl(pf::has_vmid),
              X(K::exception_ctx_64_is1, 20).exc(0x0E, 1).addr(0x00007FFFDEADBEEEull, isa::is1)
                  .cx(2, 1, 1, true, true, true).fl(pf::has_context_id | pf::has_vmid),
              X(K::exception_ctx_64_is0, 12).exc(0x0E, 1).addr(0xFFFF000012345678ull)
                  .cx(2, 1, 0, false, true)});
  expect_roundtrip(R_BASE, in, r.p);
}

TEST_CASE("spec: Exception with unknown address 0x70: PE Reset, Transaction Failure, others") {
  // 9D ... -> A1 = 0xFFFF000012345678.            history [A1, 0, 0]
  // 06 01 70: E=01 TYPE 0 -> PE Reset (D5.25); pushes 0/IS0 (D9.2.18.5): [0, A1, 0]
  // 91: exact match entry 1 = A1 (proves exactly one push):              [A1, 0, A1]
  // 06 40 70: E=10 TYPE 0 -> PE Reset.
  // 06 31 70: 0x31 -> E=01 TYPE 0x18 -> Transaction Failure (D5.24).
  // 06 70 70: E=10 TYPE 0x18 -> Transaction Failure.
  // 06 1D 70: E=01 TYPE 0x0E -> exception with unknown address.
  // 90: entry 0 = 0 (pushed by the last unknown-address exception).
  const bytes in = pre({0x9D, 0x1E, 0x2B, 0x34, 0x12, 0x00, 0x00, 0xFF, 0xFF, 0x06, 0x01, 0x70,
                        0x91, 0x06, 0x40, 0x70, 0x06, 0x31, 0x70, 0x06, 0x70, 0x70, 0x06, 0x1D,
                        0x70, 0x90});
  const run_result r = run(R_BASE, in);
  expect_clean(r);
  expect_preamble(r);
  expect_seq(r, 2, 14,
             {X(K::address_64_is0, 9).addr(0xFFFF000012345678ull),
              X(K::pe_reset, 3).exc(0x00, 1),
              X(K::address_exact, 1).idx(1).addr(0xFFFF000012345678ull),
              X(K::pe_reset, 3).exc(0x00, 2),
              X(K::transaction_failure, 3).exc(0x18, 1),
              X(K::transaction_failure, 3).exc(0x18, 2),
              X(K::exception_unknown_address, 3).exc(0x0E, 1),
              X(K::address_exact, 1).idx(0).addr(0)});
  expect_roundtrip(R_BASE, in, r.p);
}

TEST_CASE("spec: Exception E = 00 / 11 and bad address headers are malformed") {
  // 0x1C: E[1] = 0, E[0] = 0 -> E = 00 (reserved, D5.13).
  expect_error(R_BASE, pre({0x06, 0x1C, 0x90}), error_code::malformed_payload, 14);
  // 0x5D: E[1] = 1, E[0] = 1 -> E = 11.
  expect_error(R_BASE, pre({0x06, 0x5D, 0x90}), error_code::malformed_payload, 14);
  // Address headers with no meaning in D9.2.13.1: 0x93, 0x9C, 0x84.
  expect_error(R_BASE, pre({0x06, 0x1D, 0x93}), error_code::malformed_payload, 14);
  expect_error(R_BASE, pre({0x06, 0x1D, 0x9C, 0, 0, 0, 0}), error_code::malformed_payload, 14);
  expect_error(R_BASE, pre({0x06, 0x1D, 0x84, 0, 0, 0, 0, 0, 0, 0, 0, 0}),
               error_code::malformed_payload, 14);
}

TEST_CASE("spec: Exception with context CONTEXTID but CIDSIZE 0 is a config mismatch") {
  // 0x82 + 32-bit address + 0x80 (C=1) + 4 bytes, TRCIDR2.CIDSIZE = 0.
  expect_error(R_NOCTX, pre({0x06, 0x1D, 0x82, 0x00, 0x00, 0x00, 0x00, 0x80, 1, 2, 3, 4}),
               error_code::config_mismatch, 14);
}

// =============================================================================================
// D5.26-D5.34 Cycle Count (D9.2.16.2)
// =============================================================================================

TEST_CASE("spec: Cycle Count formats under COMMOPT 1 with threshold 100") {
  // Trace Info 01 09 01 64: INFO CC=1, CYCT 100 -> threshold 100.
  //   0F           1_1 unknown count.
  //   0E 0A        1_1 COUNT 10 -> 110.
  //   0E FF FF 3F  1_1 COUNT 0xFFFFF -> 0xFFFFF + 100 = 0x100063.
  //   0D FB        2_1 (canonical AAAA = 1111) BBBB 11 -> 111.
  //   0D F0        2_1 BBBB 0 -> 100.
  //   10 11 12 13  3_1 (canonical AA = 00) BB 0..3 -> 100..103.
  //   0C 05        2_1 with F = 0, AAAA = 0 (D9.2.16.2 ignores both): BBBB 5 -> 105.
  //   0D 35        2_1 with AAAA = 3: -> 105.
  //   1E           3_1 with AA = 11: BB = 2 -> 102.
  const bytes in = cat({ASYNC, {0x01, 0x09, 0x01, 0x64},
                        {0x0F, 0x0E, 0x0A, 0x0E, 0xFF, 0xFF, 0x3F, 0x0D, 0xFB, 0x0D, 0xF0, 0x10,
                         0x11, 0x12, 0x13, 0x0C, 0x05, 0x0D, 0x35, 0x1E}});
  const run_result r = run(R_BASE, in);
  expect_clean(r);
  expect_seq(r, 0, 0,
             {X(K::async, 12), X(K::trace_info, 4).tinfo(0x09, 0x01).cyc(100).l2(1),
              X(K::cycle_count_f1_1_unknown, 1).fl(pf::cycles_unknown),
              X(K::cycle_count_f1_1, 2).cyc(110).l2(1),
              X(K::cycle_count_f1_1, 4).cyc(0xFFFFF + 100).l2(3),
              X(K::cycle_count_f2_1, 2).cyc(111), X(K::cycle_count_f2_1, 2).cyc(100),
              X(K::cycle_count_f3_1, 1).cyc(100), X(K::cycle_count_f3_1, 1).cyc(101),
              X(K::cycle_count_f3_1, 1).cyc(102), X(K::cycle_count_f3_1, 1).cyc(103),
              X(K::cycle_count_f2_1, 2).cyc(105).ign(), X(K::cycle_count_f2_1, 2).cyc(105).ign(),
              X(K::cycle_count_f3_1, 1).cyc(102).ign()});
  expect_roundtrip(R_BASE, in, r.p);
}

TEST_CASE("spec: Cycle Count formats under COMMOPT 0, MAXSPEC 255, threshold 100") {
  //   0F 03        1_0 unknown, COMMIT 3.
  //   0F 00        1_0 unknown, COMMIT 0 (no Commit element).
  //   0E 85 01 0A  1_0 COMMIT 5 | 1 << 7 = 133, COUNT 10 -> 110.
  //   0E 00 00     1_0 COMMIT 0, COUNT 0 -> 100.
  //   0C 3B        2_0 small: AAAA 3 -> commit 4; BBBB 11 -> 111.
  //   0C F0        2_0 small: AAAA 15 -> commit 16; BBBB 0 -> 100.
  //   0D 3B        2_0 large: 255 + 3 - 15 = 243; 111.
  //   0D FF        2_0 large: 255 + 15 - 15 = 255; 115.
  //   10           3_0: AA 00 -> commit 1, BB 0 -> 100.
  //   1E           3_0: 0001 1110: AA 11 -> 4, BB 10 -> 102.
  //   1F           3_0: AA 11 -> 4, BB 11 -> 103.
  //   17           3_0: 0001 0111: AA 01 -> 2, BB 11 -> 103.
  const bytes in = cat({ASYNC, {0x01, 0x09, 0x01, 0x64},
                        {0x0F, 0x03, 0x0F, 0x00, 0x0E, 0x85, 0x01, 0x0A, 0x0E, 0x00, 0x00, 0x0C,
                         0x3B, 0x0C, 0xF0, 0x0D, 0x3B, 0x0D, 0xFF, 0x10, 0x1E, 0x1F, 0x17}});
  const run_result r = run(R_C0_255, in);
  expect_clean(r);
  expect_seq(r, 0, 0,
             {X(K::async, 12), X(K::trace_info, 4).tinfo(0x09, 0x01).cyc(100).l2(1),
              X(K::cycle_count_f1_0_unknown, 2).cnt(3).l1(1).fl(pf::cycles_unknown),
              X(K::cycle_count_f1_0_unknown, 2).cnt(0).l1(1).fl(pf::cycles_unknown),
              X(K::cycle_count_f1_0, 4).cnt(133).l1(2).cyc(110).l2(1),
              X(K::cycle_count_f1_0, 3).cnt(0).l1(1).cyc(100).l2(1),
              X(K::cycle_count_f2_0_small, 2).cnt(4).cyc(111),
              X(K::cycle_count_f2_0_small, 2).cnt(16).cyc(100),
              X(K::cycle_count_f2_0_large, 2).cnt(243).cyc(111),
              X(K::cycle_count_f2_0_large, 2).cnt(255).cyc(115),
              X(K::cycle_count_f3_0, 1).cnt(1).cyc(100), X(K::cycle_count_f3_0, 1).cnt(4).cyc(102),
              X(K::cycle_count_f3_0, 1).cnt(4).cyc(103), X(K::cycle_count_f3_0, 1).cnt(2).cyc(103)});
  expect_roundtrip(R_C0_255, in, r.p);
}

TEST_CASE("spec: Cycle Count 2_0 large commit = MAXSPEC + AAAA - 15") {
  {  // MAXSPEC 6, threshold 0: 0D F0 -> 6 + 15 - 15 = 6, cycles 0; 0D A1 -> 6 + 10 - 15 = 1, 1.
    const bytes in = pre({0x0D, 0xF0, 0x0D, 0xA1});
    const run_result r = run(R_C0_6, in);
    expect_clean(r);
    expect_preamble(r);
    expect_seq(r, 2, 14,
               {X(K::cycle_count_f2_0_large, 2).cnt(6).cyc(0),
                X(K::cycle_count_f2_0_large, 2).cnt(1).cyc(1)});
    expect_roundtrip(R_C0_6, in, r.p);
  }
  {  // MAXSPEC 15: 0D 5F -> 15 + 5 - 15 = 5, cycles 15.
    const bytes in = pre({0x0D, 0x5F});
    const run_result r = run(R_C0_15, in);
    expect_clean(r);
    expect_preamble(r);
    expect_seq(r, 2, 14, {X(K::cycle_count_f2_0_large, 2).cnt(5).cyc(15)});
  }
  // D5.31: "The number of P0 elements to be resolved must be greater than 0":
  // MAXSPEC 6, AAAA 9 -> 6 + 9 - 15 = 0.
  expect_error(R_C0_6, pre({0x0D, 0x90}), error_code::malformed_payload, 14);
}

TEST_CASE("spec: Cycle Count headers are reserved without TRCIDR0.TRCCCI") {
  for (std::uint8_t h : {0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x13, 0x17, 0x1F})
    expect_reserved_header(R_NOCCI, h);
}

// =============================================================================================
// D5.35 Commit, D5.36-38 Cancel, D5.39 Mispredict
// =============================================================================================

TEST_CASE("spec: Commit packet") {
  // 2D 05 -> 5. 2D FF FF FF FF 0F -> 0xFFFFFFFF (5 bytes). 2D 80 00 -> 0 in 2 bytes.
  const bytes in = pre({0x2D, 0x05, 0x2D, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x2D, 0x80, 0x00});
  const run_result r = run(R_SPEC15, in);
  expect_clean(r);
  expect_preamble(r);
  expect_seq(r, 2, 14,
             {X(K::commit, 2).cnt(5).l1(1), X(K::commit, 6).cnt(0xFFFFFFFFu).l1(5),
              X(K::commit, 3).cnt(0).l1(2)});
  expect_roundtrip(R_SPEC15, in, r.p);
}

TEST_CASE("spec: Cancel formats 1, 2 and 3") {
  // Format 1 (0010111M + ULEB CANCEL): 2E 03 -> 3; 2F 81 01 -> 129, M=1.
  // Format 2 (001101 A): 34 -> cancel 1; 35 -> E, cancel 1; 36 -> E E; 37 -> N. All + Mispredict.
  // Format 3 (00111 CC A): 38 -> cancel 2; 39 -> E + cancel 2; 3A -> cancel 3; 3C -> 4;
  //   3F -> CC 11 = 5, A = 1: E.
  const bytes in = pre({0x2E, 0x03, 0x2F, 0x81, 0x01, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3A,
                        0x3C, 0x3F});
  const run_result r = run(R_SPEC15, in);
  expect_clean(r);
  expect_preamble(r);
  const auto m = pf::mispredict;
  expect_seq(r, 2, 14,
             {X(K::cancel_f1, 2).cnt(3).l1(1), X(K::cancel_f1, 3).cnt(129).l1(2).fl(m),
              X(K::cancel_f2, 1).cnt(1).fl(m), X(K::cancel_f2, 1).cnt(1).at(0b1, 1).fl(m),
              X(K::cancel_f2, 1).cnt(1).at(0b11, 2).fl(m), X(K::cancel_f2, 1).cnt(1).at(0b0, 1).fl(m),
              X(K::cancel_f3, 1).cnt(2).fl(m), X(K::cancel_f3, 1).cnt(2).at(1, 1).fl(m),
              X(K::cancel_f3, 1).cnt(3).fl(m), X(K::cancel_f3, 1).cnt(4).fl(m),
              X(K::cancel_f3, 1).cnt(5).at(1, 1).fl(m)});
  expect_roundtrip(R_SPEC15, in, r.p);
  // D5.36: CANCEL = 0 is reserved.
  expect_error(R_SPEC15, pre({0x2E, 0x00}), error_code::malformed_payload, 14);
}

TEST_CASE("spec: Commit and Cancel headers are reserved with MAXSPEC 0 (D5.35-D5.38)") {
  for (std::uint8_t h : {0x2D, 0x2E, 0x2F, 0x34, 0x35, 0x36, 0x37, 0x38, 0x3B, 0x3F})
    expect_reserved_header(R_BASE, h);
}

TEST_CASE("spec: Mispredict, all four A values (any MAXSPEC)") {
  // 30: Mispredict only; 31: E; 32: E E; 33: N (D5.39).
  const bytes in = pre({0x30, 0x31, 0x32, 0x33});
  const run_result r = run(R_BASE, in);
  expect_clean(r);
  expect_preamble(r);
  const auto m = pf::mispredict;
  expect_seq(r, 2, 14,
             {X(K::mispredict, 1).fl(m), X(K::mispredict, 1).at(1, 1).fl(m),
              X(K::mispredict, 1).at(3, 2).fl(m), X(K::mispredict, 1).at(0, 1).fl(m)});
  expect_roundtrip(R_BASE, in, r.p);
}

// =============================================================================================
// D5.68 Event
// =============================================================================================

TEST_CASE("spec: Event packets and NUMEVENT") {
  const bytes in = pre({0x71, 0x75, 0x7A, 0x7F});
  const run_result r = run(R_BASE, in);  // 4 events
  expect_clean(r);
  expect_preamble(r);
  expect_seq(r, 2, 14,
             {X(K::event, 1).ev(0x1), X(K::event, 1).ev(0x5), X(K::event, 1).ev(0xA),
              X(K::event, 1).ev(0xF)});
  expect_roundtrip(R_BASE, in, r.p);
  {  // one event: only V0 exists
    const run_result r1 = run(R_1EVENT, pre({0x71}));
    expect_clean(r1);
    expect_seq(r1, 2, 14, {X(K::event, 1).ev(1)});
    for (std::uint8_t h : {0x72, 0x73, 0x74, 0x78, 0x7F}) expect_reserved_header(R_1EVENT, h);
  }
  {  // two events: V0 and V1
    const run_result r2 = run(R_2EVENT, pre({0x73}));
    expect_clean(r2);
    expect_seq(r2, 2, 14, {X(K::event, 1).ev(3)});
    for (std::uint8_t h : {0x74, 0x77, 0x79}) expect_reserved_header(R_2EVENT, h);
  }
}

// =============================================================================================
// D5.54 Context Same, D5.55 Context
// =============================================================================================

TEST_CASE("spec: Context packet, all C/V variants, NSE, Context Same") {
  // 81 31:            C0 V0 NS1 SF1 EL1.
  // 81 B2 78 56 34 12: C1 V0 NS1 SF1 EL2, CID 0x12345678.
  // 81 52 EF BE AD DE: C0 V1 NS0 SF1 EL2, VMID 0xDEADBEEF (CID kept).
  // 81 DB 01 00 00 00 02 00 00 00: 1101 1011: C1 V1 NS0 SF1 NSE1 EL3, VMID 1 then CID 2.
  // 80: Context Same -> the context element is the current context (D9.2.14.8 ContextPacket
  //   with P = 0 changes nothing, then Emit(ContextElement(current))).
  const bytes in = pre({0x81, 0x31, 0x81, 0xB2, 0x78, 0x56, 0x34, 0x12, 0x81, 0x52, 0xEF, 0xBE,
                        0xAD, 0xDE, 0x81, 0xDB, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
                        0x80});
  const run_result r = run(R_BASE, in);
  expect_clean(r);
  expect_preamble(r);
  expect_seq(r, 2, 14,
             {X(K::context, 2).cx(0, 0, 1, true, true),
              X(K::context, 6).cx(0x12345678, 0, 2, true, true).fl(pf::has_context_id),
              X(K::context, 6).cx(0x12345678, 0xDEADBEEF, 2, false, true).fl(pf::has_vmid),
              X(K::context, 10).cx(2, 1, 3, false, true, true)
                  .fl(pf::has_context_id | pf::has_vmid),
              // Regression check (was a spec dispute against an earlier decoder revision, which
              // reported an all-zero ctx here): D5.54 Context Same "Indicates a Context
              // element"; D9.2.14.9 Parse_ContextPacket(): for P = 0 ContextPacket() changes
              // nothing and then Emit(ContextElement(DSTATE.IA.context_id, vmid,
              // exception_level, security, sixty_four_bit)), i.e. the current context, and
              // packet.hpp gives context_same the kC trait ("resolved context after this packet").
              X(K::context_same, 1).cx(2, 1, 3, false, true, true)});
  expect_roundtrip(R_BASE, in, r.p);
}

TEST_CASE("spec: Context with C or V but no CONTEXTID/VMID implemented is a config mismatch") {
  expect_error(R_NOCTX, pre({0x81, 0x80, 0x01, 0x02, 0x03, 0x04}), error_code::config_mismatch, 14);
  expect_error(R_NOCTX, pre({0x81, 0x40, 0x01, 0x02, 0x03, 0x04}), error_code::config_mismatch, 14);
  // Without C/V the packet is fine in that configuration.
  const run_result r = run(R_NOCTX, pre({0x81, 0x13}));
  expect_clean(r);
  expect_seq(r, 2, 14, {X(K::context, 2).cx(0, 0, 3, false, true)});
}

// =============================================================================================
// D5.47-D5.53 Target Address, D5.56-59 Target Address with Context
// =============================================================================================

TEST_CASE("spec: every Target Address form and the address history buffer") {
  // 1. 9D 1E 2B 34 12 00 00 FF FF: 64-bit IS0: A[8:2] = 0x1E -> 0x78, A[15:9] = 0x2B -> 0x5600,
  //    A[23:16] 0x34, A[31:24] 0x12, A[39:32] 0, A[47:40] 0, A[55:48] 0xFF, A[63:56] 0xFF
  //    -> 0xFFFF000012345678 IS0.
  // 2. 9A 48 21 65 87: 32-bit IS0 -> [31:0] = 0x87654320, [63:32] kept: 0xFFFF000087654320.
  // 3. 9B 67 AB 00 00: 32-bit IS1 -> [31:0] = 0x0000ABCE: 0xFFFF00000000ABCE IS1.
  // 4. 9E 77 BE AD DE FF 7F 00 00: 64-bit IS1 -> 0x00007FFFDEADBEEE IS1.
  // 5. 96 10: short IS1 1 byte, [7:0] = 0x20: 0x00007FFFDEADBE20 IS1.
  // 6. 96 91 34: short IS1 2 bytes, [15:0] = 0x3422: 0x00007FFFDEAD3422 IS1.
  // 7. 95 05: short IS0 1 byte, [8:0] = 0x14: 0x...3422 & ~0x1FF = 0x...3400 -> 0x00007FFFDEAD3414.
  // 8. 95 85 A3: short IS0 2 bytes, [16:0] = 0x14614: 0xDEAD3414 & ~0x1FFFF = 0xDEAC0000
  //    -> 0x00007FFFDEAD4614 IS0.
  //    history now [#8 ...4614 IS0, #7 ...3414 IS0, #6 ...3422 IS1]
  // 9. 92: entry 2 -> 0x00007FFFDEAD3422 IS1; history [3422/1, 4614, 3414]
  // 10. 91: entry 1 -> 0x00007FFFDEAD4614 IS0; history [4614, 3422/1, 4614]
  // 11. 90: entry 0 -> 0x00007FFFDEAD4614 IS0; history [4614, 4614, 3422/1]
  const bytes in = pre({0x9D, 0x1E, 0x2B, 0x34, 0x12, 0x00, 0x00, 0xFF, 0xFF,  // 9
                        0x9A, 0x48, 0x21, 0x65, 0x87,                          // 5
                        0x9B, 0x67, 0xAB, 0x00, 0x00,                          // 5
                        0x9E, 0x77, 0xBE, 0xAD, 0xDE, 0xFF, 0x7F, 0x00, 0x00,  // 9
                        0x96, 0x10, 0x96, 0x91, 0x34, 0x95, 0x05, 0x95, 0x85, 0xA3,
                        0x92, 0x91, 0x90});
  decoder<runtime_config> dec(R_BASE);
  const run_result r = run_with(dec, in);
  expect_clean(r);
  expect_preamble(r);
  expect_seq(r, 2, 14,
             {X(K::address_64_is0, 9).addr(0xFFFF000012345678ull),
              X(K::address_32_is0, 5).addr(0xFFFF000087654320ull),
              X(K::address_32_is1, 5).addr(0xFFFF00000000ABCEull, isa::is1),
              X(K::address_64_is1, 9).addr(0x00007FFFDEADBEEEull, isa::is1),
              X(K::address_short_is1, 2).ab(1).addr(0x00007FFFDEADBE20ull, isa::is1),
              X(K::address_short_is1, 3).ab(2).addr(0x00007FFFDEAD3422ull, isa::is1),
              X(K::address_short_is0, 2).ab(1).addr(0x00007FFFDEAD3414ull),
              X(K::address_short_is0, 3).ab(2).addr(0x00007FFFDEAD4614ull),
              X(K::address_exact, 1).idx(2).addr(0x00007FFFDEAD3422ull, isa::is1),
              X(K::address_exact, 1).idx(1).addr(0x00007FFFDEAD4614ull),
              X(K::address_exact, 1).idx(0).addr(0x00007FFFDEAD4614ull)});
  const auto& h = dec.state().history;
  CHECK(h.entry[0].address == 0x00007FFFDEAD4614ull);
  CHECK(h.entry[0].sub_isa == isa::is0);
  CHECK(h.entry[1].address == 0x00007FFFDEAD4614ull);
  CHECK(h.entry[1].sub_isa == isa::is0);
  CHECK(h.entry[2].address == 0x00007FFFDEAD3422ull);
  CHECK(h.entry[2].sub_isa == isa::is1);
  expect_roundtrip(R_BASE, in, r.p);
}

TEST_CASE("spec: Target Address with Context, 32/64-bit IS0/IS1") {
  // 82 48 21 65 87 A1 78 56 34 12: 32-bit IS0 0x87654320; 0xA1: C1 V0 NS1 SF0 EL1, CID 0x12345678.
  // 83 67 AB 00 00 42 04 03 02 01: 32-bit IS1, [63:32] kept (0) -> 0xABCE IS1;
  //   0x42: C0 V1 NS0 SF0 EL2, VMID 0x01020304.
  // 85 1E 2B 34 12 00 00 FF FF 30: 64-bit IS0 0xFFFF000012345678; 0x30: C0 V0 NS1 SF1 EL0.
  // 86 77 BE AD DE FF 7F 00 00 D1 AA 00 00 00 BB 00 00 00: 64-bit IS1 0x00007FFFDEADBEEE;
  //   0xD1: C1 V1 NS0 SF1 EL1, VMID 0xAA, CID 0xBB.
  const bytes in = pre({0x82, 0x48, 0x21, 0x65, 0x87, 0xA1, 0x78, 0x56, 0x34, 0x12,        // 10
                        0x83, 0x67, 0xAB, 0x00, 0x00, 0x42, 0x04, 0x03, 0x02, 0x01,        // 10
                        0x85, 0x1E, 0x2B, 0x34, 0x12, 0x00, 0x00, 0xFF, 0xFF, 0x30,        // 10
                        0x86, 0x77, 0xBE, 0xAD, 0xDE, 0xFF, 0x7F, 0x00, 0x00, 0xD1, 0xAA,
                        0x00, 0x00, 0x00, 0xBB, 0x00, 0x00, 0x00});                        // 18
  const run_result r = run(R_BASE, in);
  expect_clean(r);
  expect_preamble(r);
  expect_seq(r, 2, 14,
             {X(K::address_ctx_32_is0, 10).addr(0x87654320).cx(0x12345678, 0, 1, true, false)
                  .fl(pf::has_context_id),
              X(K::address_ctx_32_is1, 10).addr(0xABCE, isa::is1)
                  .cx(0x12345678, 0x01020304, 2, false, false).fl(pf::has_vmid),
              X(K::address_ctx_64_is0, 10).addr(0xFFFF000012345678ull)
                  .cx(0x12345678, 0x01020304, 0, true, true),
              X(K::address_ctx_64_is1, 18).addr(0x00007FFFDEADBEEEull, isa::is1)
                  .cx(0xBB, 0xAA, 1, false, true).fl(pf::has_context_id | pf::has_vmid)});
  expect_roundtrip(R_BASE, in, r.p);
}

TEST_CASE("spec: reserved address-space headers") {
  // D5.2 / D9.2.2.1: only 0x90-0x92, 0x95, 0x96, 0x9A, 0x9B, 0x9D, 0x9E are Target Address
  // packets; 0x82/83/85/86 with context; 0xB0-0xB2, 0xB4-0xB9 Source Address.
  for (std::uint8_t h : {0x84, 0x87, 0x89, 0x8F, 0x93, 0x94, 0x97, 0x98, 0x99, 0x9C, 0x9F, 0xB3,
                         0xBA, 0xBB, 0xBC, 0xBD, 0xBE, 0xBF})
    expect_reserved_header(R_BASE, h);
}

// =============================================================================================
// D5.60-D5.66 Source Address (D9.2.12)
// =============================================================================================

TEST_CASE("spec: every Source Address form") {
  // Same address encodings as the Target Address test, with headers 0xB8/B6/B7/B9/B5/B4/B2-B0.
  // Each Source Address packet pushes its address once to the history (D6.11.3 R_LMHFW).
  const bytes in = pre({0xB8, 0x1E, 0x2B, 0x34, 0x12, 0x00, 0x00, 0xFF, 0xFF,  // 9
                        0xB6, 0x48, 0x21, 0x65, 0x87,                          // 5
                        0xB7, 0x67, 0xAB, 0x00, 0x00,                          // 5
                        0xB9, 0x77, 0xBE, 0xAD, 0xDE, 0xFF, 0x7F, 0x00, 0x00,  // 9
                        0xB5, 0x10, 0xB5, 0x91, 0x34, 0xB4, 0x05, 0xB4, 0x85, 0xA3,
                        0xB2, 0xB1, 0xB0});
  decoder<runtime_config> dec(R_BASE);
  const run_result r = run_with(dec, in);
  expect_clean(r);
  expect_preamble(r);
  expect_seq(r, 2, 14,
             {X(K::source_64_is0, 9).addr(0xFFFF000012345678ull),
              X(K::source_32_is0, 5).addr(0xFFFF000087654320ull),
              X(K::source_32_is1, 5).addr(0xFFFF00000000ABCEull, isa::is1),
              X(K::source_64_is1, 9).addr(0x00007FFFDEADBEEEull, isa::is1),
              X(K::source_short_is1, 2).ab(1).addr(0x00007FFFDEADBE20ull, isa::is1),
              X(K::source_short_is1, 3).ab(2).addr(0x00007FFFDEAD3422ull, isa::is1),
              X(K::source_short_is0, 2).ab(1).addr(0x00007FFFDEAD3414ull),
              X(K::source_short_is0, 3).ab(2).addr(0x00007FFFDEAD4614ull),
              X(K::source_exact, 1).idx(2).addr(0x00007FFFDEAD3422ull, isa::is1),
              X(K::source_exact, 1).idx(1).addr(0x00007FFFDEAD4614ull),
              X(K::source_exact, 1).idx(0).addr(0x00007FFFDEAD4614ull)});
  const auto& h = dec.state().history;
  CHECK(h.entry[0].address == 0x00007FFFDEAD4614ull);
  CHECK(h.entry[1].address == 0x00007FFFDEAD4614ull);
  CHECK(h.entry[2].address == 0x00007FFFDEAD3422ull);
  CHECK(h.entry[2].sub_isa == isa::is1);
  expect_roundtrip(R_BASE, in, r.p);
}

TEST_CASE("spec: Source Address 64-bit IS0 pushes the history once") {
  // After Trace Info: [0, 0, 0]. B8 (A1) -> [A1, 0, 0]; 91 must then give entry 1 = 0.
  // (D9.2.12.1 prints AddressHistoryBuffer.Add(entry) twice for 0xB8 only; D6.11.3 R_LMHFW
  // says a Source Address packet pushes the address, and every other form pushes once.)
  const bytes in = pre({0xB8, 0x1E, 0x2B, 0x34, 0x12, 0x00, 0x00, 0xFF, 0xFF, 0x91});
  const run_result r = run(R_BASE, in);
  expect_clean(r);
  expect_seq(r, 2, 14,
             {X(K::source_64_is0, 9).addr(0xFFFF000012345678ull), X(K::address_exact, 1).idx(1)});
}

// =============================================================================================
// D5.69-D5.75 Q packets (D9.2.11)
// =============================================================================================

TEST_CASE("spec: every Q packet form") {
  // History set up as in the exception exact-match test: [0x3000, 0x2002/IS1, 0x1000].
  //   A2 03:          exact entry 2 = 0x1000, COUNT 3.      [0x1000, 0x3000, 0x2002/1]
  //   A1 81 01:       exact entry 1 = 0x3000, COUNT 129.     [0x3000, 0x1000, 0x3000]
  //   A0 00:          exact entry 0 = 0x3000, COUNT 0.       [0x3000, 0x3000, 0x1000]
  //   A5 05 07:       short IS0 1 byte: 0x3000 & ~0x1FF | 0x14 = 0x3014, COUNT 7.
  //   A5 85 01 07:    short IS0 2 bytes: 0x14 | 1 << 9 = 0x214 (bits [16:0]), COUNT 7.
  //   A6 7F 02:       short IS1 1 byte: 0x214 & ~0xFF | 0xFE = 0x2FE IS1, COUNT 2.
  //   A6 80 12 0A:    short IS1 2 bytes: 0x12 << 8 = 0x1200 IS1, COUNT 10.
  //   AA 48 21 65 87 FF FF FF FF 0F: 32-bit IS0 0x87654320, COUNT 0xFFFFFFFF.
  //   AB 67 AB 00 00 01: 32-bit IS1 0xABCE, COUNT 1.
  //   AC 81 80 80 80 01: COUNT = 1 | 1 << 28 = 0x10000001 (5 bytes), no address.
  //   AF:             Q without count.
  const bytes in = pre({0x9A, 0x00, 0x08, 0x00, 0x00, 0x9B, 0x01, 0x20, 0x00, 0x00, 0x9A, 0x00,
                        0x18, 0x00, 0x00,                                           // @14 15
                        0xA2, 0x03, 0xA1, 0x81, 0x01, 0xA0, 0x00,                   // @29
                        0xA5, 0x05, 0x07, 0xA5, 0x85, 0x01, 0x07, 0xA6, 0x7F, 0x02,
                        0xA6, 0x80, 0x12, 0x0A,
                        0xAA, 0x48, 0x21, 0x65, 0x87, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F,
                        0xAB, 0x67, 0xAB, 0x00, 0x00, 0x01,
                        0xAC, 0x81, 0x80, 0x80, 0x80, 0x01,
                        0xAF});
  const run_result r = run(R_BASE, in);
  expect_clean(r);
  expect_preamble(r);
  expect_seq(r, 2, 14,
             {X(K::address_32_is0, 5).addr(0x1000), X(K::address_32_is1, 5).addr(0x2002, isa::is1),
              X(K::address_32_is0, 5).addr(0x3000),
              X(K::q_exact, 2).idx(2).addr(0x1000).cnt(3).l1(1),
              X(K::q_exact, 3).idx(1).addr(0x3000).cnt(129).l1(2),
              X(K::q_exact, 2).idx(0).addr(0x3000).cnt(0).l1(1),
              X(K::q_short_is0, 3).ab(1).addr(0x3014).cnt(7).l1(1),
              X(K::q_short_is0, 4).ab(2).addr(0x214).cnt(7).l1(1),
              X(K::q_short_is1, 3).ab(1).addr(0x2FE, isa::is1).cnt(2).l1(1),
              X(K::q_short_is1, 4).ab(2).addr(0x1200, isa::is1).cnt(10).l1(1),
              X(K::q_32_is0, 10).addr(0x87654320).cnt(0xFFFFFFFFu).l1(5),
              X(K::q_32_is1, 6).addr(0xABCE, isa::is1).cnt(1).l1(1),
              X(K::q_count, 6).cnt(0x10000001).l1(5),
              X(K::q, 1).fl(pf::count_unknown)});
  expect_roundtrip(R_BASE, in, r.p);
}

TEST_CASE("spec: reserved Q headers, and every Q header without QSUPP") {
  // D9.2.11.1: TYPE 0011, 0100, 0111, 1000, 1001, 1101, 1110 -> ReservedEncoding.
  for (std::uint8_t h : {0xA3, 0xA4, 0xA7, 0xA8, 0xA9, 0xAD, 0xAE}) expect_reserved_header(R_BASE, h);
  for (std::uint8_t h : {0xA0, 0xA1, 0xA2, 0xA5, 0xA6, 0xAA, 0xAB, 0xAC, 0xAF})
    expect_reserved_header(R_NOQ, h);
}

// =============================================================================================
// D5.40-D5.46 Atoms (D9.2.10)
// =============================================================================================

TEST_CASE("spec: Atom formats 1 to 6") {
  struct v {
    std::uint8_t h;
    K kind;
    std::uint32_t atoms;
    std::uint8_t n;
  };
  const v vs[] = {
      {0xF6, K::atom_f1, 0b0, 1},          {0xF7, K::atom_f1, 0b1, 1},
      // format 2: A<0> first
      {0xD8, K::atom_f2, 0b00, 2},         {0xD9, K::atom_f2, 0b01, 2},
      {0xDA, K::atom_f2, 0b10, 2},         {0xDB, K::atom_f2, 0b11, 2},
      // format 3: A<0> first
      {0xF8, K::atom_f3, 0b000, 3},        {0xF9, K::atom_f3, 0b001, 3},
      {0xFA, K::atom_f3, 0b010, 3},        {0xFB, K::atom_f3, 0b011, 3},
      {0xFC, K::atom_f3, 0b100, 3},        {0xFD, K::atom_f3, 0b101, 3},
      {0xFE, K::atom_f3, 0b110, 3},        {0xFF, K::atom_f3, 0b111, 3},
      // format 4: 00 NEEE, 01 NNNN, 10 NENE, 11 ENEN (oldest in bit 0)
      {0xDC, K::atom_f4, 0b1110, 4},       {0xDD, K::atom_f4, 0b0000, 4},
      {0xDE, K::atom_f4, 0b1010, 4},       {0xDF, K::atom_f4, 0b0101, 4},
      // format 5.1: NEEEE; 5.2: 01 NNNNN, 10 NENEN, 11 ENENE
      {0xF5, K::atom_f5_1, 0b11110, 5},    {0xD5, K::atom_f5_2, 0b00000, 5},
      {0xD6, K::atom_f5_2, 0b01010, 5},    {0xD7, K::atom_f5_2, 0b10101, 5},
      // format 6: COUNT + 3 E atoms, then E (A=0) or N (A=1)
      {0xC0, K::atom_f6, 0xF, 4},          // 3 E + E
      {0xC1, K::atom_f6, 0x1F, 5},         // 4 E + E
      {0xCA, K::atom_f6, 0x3FFF, 14},      // COUNT 10: 13 E + E
      {0xD4, K::atom_f6, 0xFFFFFF, 24},    // COUNT 20: 23 E + E
      {0xE0, K::atom_f6, 0x7, 4},          // 3 E + N
      {0xE1, K::atom_f6, 0xF, 5},          // 4 E + N
      {0xEA, K::atom_f6, 0x1FFF, 14},      // 13 E + N
      {0xF4, K::atom_f6, 0x7FFFFF, 24},    // 23 E + N
  };
  bytes body;
  std::vector<X> xs;
  for (const auto& x : vs) {
    body.push_back(x.h);
    xs.push_back(X(x.kind, 1).at(x.atoms, x.n));
  }
  const bytes in = pre(body);
  const run_result r = run(R_BASE, in);
  expect_clean(r);
  expect_preamble(r);
  expect_seq(r, 2, 14, xs);
  expect_roundtrip(R_BASE, in, r.p);

  // Every format 6 header, by formula (D5.46: COUNT 0..20, 0xC0-0xD4 and 0xE0-0xF4).
  for (unsigned a = 0; a < 2; ++a)
    for (unsigned count = 0; count <= 20; ++count) {
      const std::uint8_t h = static_cast<std::uint8_t>(0xC0 | a << 5 | count);
      const unsigned e = count + 3;
      const std::uint32_t bits = ((1u << e) - 1u) | (a ? 0u : (1u << e));
      const run_result rr = run(R_BASE, pre({h}));
      expect_clean(rr);
      INFO("header " << hex(h));
      expect_seq(rr, 2, 14, {X(K::atom_f6, 1).at(bits, static_cast<std::uint8_t>(e + 1))});
    }
}

TEST_CASE("spec: atoms with a compile-time configuration") {
  decoder<fixed_config<registers{0x2801cea1, 0xd0001088, 0, 0x47705a13, 0x1, 0}>> dec;
  const bytes in = pre({0xDE, 0xF5, 0xE3});  // NENE, NEEEE, 6 E + N
  const run_result r = run_with(dec, in);
  expect_clean(r);
  expect_preamble(r);
  expect_seq(r, 2, 14,
             {X(K::atom_f4, 1).at(0b1010, 4), X(K::atom_f5_1, 1).at(0b11110, 5),
              X(K::atom_f6, 1).at(0b0111111, 7)});
}

// =============================================================================================
// Instrumentation (ETE 1.3, header 0x09): EL byte + 8-byte little-endian payload
// =============================================================================================

TEST_CASE("spec: Instrumentation packet on ETE 1.3, reserved on ETE 1.0") {
  const bytes in = pre({0x09, 0x02, 0xEF, 0xCD, 0xAB, 0x89, 0x67, 0x45, 0x23, 0x01});
  const run_result r = run(R_ETE13, in);
  expect_clean(r);
  expect_preamble(r);
  expect_seq(r, 2, 14, {X(K::instrumentation, 10).addr(0x0123456789ABCDEFull).tinfo(0, 0x02)});
  expect_roundtrip(R_ETE13, in, r.p);
  expect_reserved_header(R_BASE, 0x09);
}

// =============================================================================================
// Reserved headers, overlong fields, truncation, recovery
// =============================================================================================

TEST_CASE("spec: reserved single header bytes") {
  // D5.2 "All other values are reserved"; D9.2.2.1 otherwise -> ReservedEncoding.
  for (std::uint8_t h : {0x05, 0x07, 0x08, 0x20, 0x2C, 0x40, 0x6F, 0x8A, 0x93, 0x94, 0x97, 0x98,
                         0x99, 0x9C, 0x9F, 0xA3, 0xB3, 0xBA, 0xBF})
    expect_reserved_header(R_BASE, h);
}

TEST_CASE("spec: overlong continuation runs (D5.3.1)") {
  // COMMIT is at most 5 bytes; the 5th byte holds COMMIT[31:28] and no continuation bit.
  expect_error(R_SPEC15, pre({0x2D, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}), error_code::overlong_field, 14);
  // Cancel format 1 CANCEL, Q with count COUNT, Trace Info SPEC: same 32-bit field.
  expect_error(R_SPEC15, pre({0x2E, 0x81, 0x80, 0x80, 0x80, 0x80, 0x00}), error_code::overlong_field, 14);
  expect_error(R_BASE, pre({0xAC, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}), error_code::overlong_field, 14);
  expect_error(R_BASE, pre({0x01, 0x04, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}),
               error_code::overlong_field, 14);
  // Trace Info CYCT is 12 bits: 2 bytes, the second (0)(0)(0) CYCT[11:7].
  expect_error(R_BASE, pre({0x01, 0x08, 0x80, 0x80, 0x00}), error_code::overlong_field, 14);
  // Cycle Count COUNT is 20 bits: 3 bytes, the third (0)(0) COUNT[19:14].
  expect_error(R_BASE, pre({0x0E, 0x80, 0x80, 0x80, 0x00}), error_code::overlong_field, 14);
  // Timestamp COUNT is 20 bits as well.
  expect_error(R_BASE, pre({0x03, 0x00, 0x80, 0x80, 0x80, 0x00}), error_code::overlong_field, 14);
}

TEST_CASE("spec: packets cut short by the end of the trace") {
  expect_error(R_BASE, pre({0x9D, 0x1E, 0x2B}), error_code::truncated_packet, 14);
  expect_error(R_BASE, pre({0x02, 0x81}), error_code::truncated_packet, 14);
  expect_error(R_BASE, pre({0x06, 0x1D}), error_code::truncated_packet, 14);
  expect_error(R_BASE, pre({0x06, 0x1D, 0x9A, 0x00}), error_code::truncated_packet, 14);
  expect_error(R_BASE, pre({0x81, 0xC0, 0x01, 0x02}), error_code::truncated_packet, 14);
  expect_error(R_BASE, pre({0x01}), error_code::truncated_packet, 14);
  expect_error(R_BASE, pre({0x00, 0x00, 0x00}), error_code::truncated_packet, 14);
  expect_error(R_BASE, pre({0xA5, 0x85}), error_code::truncated_packet, 14);
  expect_error(R_BASE, pre({0x0D}), error_code::truncated_packet, 14);
  expect_error(R_ETE13, pre({0x09, 0x02, 0x01}), error_code::truncated_packet, 14);
  // A truncated packet after valid ones: the valid ones are still delivered.
  const run_result r = run(R_BASE, pre({0xF7, 0x2D}));  // 0x2D is reserved (MAXSPEC 0)...
  REQUIRE(r.p.size() == 3);
  expect_packet(r.p[2], X(K::atom_f1, 1).at(1, 1).at_offset(14));
  const run_result r2 = run(R_SPEC15, pre({0xF7, 0x2D, 0x81}));  // ...but truncated with MAXSPEC 15
  REQUIRE(r2.p.size() == 3);
  REQUIRE(r2.d.size() == 1);
  CHECK(r2.d[0].code == error_code::truncated_packet);
  CHECK(r2.d[0].offset == 15);
}

TEST_CASE("spec: garbage before the first A-Sync is skipped and reported") {
  // 55 12 9D FF 00 00 80 (7 bytes, the short zero run is not an A-Sync), then A-Sync @7,
  // Trace Info @19, E atom @21.
  const bytes in = cat({{0x55, 0x12, 0x9D, 0xFF, 0x00, 0x00, 0x80}, ASYNC, TI0, {0xF7}});
  const run_result r = run(R_BASE, in);
  REQUIRE(r.d.size() == 1);
  CHECK(r.d[0] == diagnostic{error_code::unsynchronized, 0, 7});
  expect_seq(r, 0, 7, {X(K::async, 12), X(K::trace_info, 2), X(K::atom_f1, 1).at(1, 1)});
}

TEST_CASE("spec: recovery after an error in the middle of the trace") {
  // A-Sync @0, TI @12, 9D 1E 2B 34 12 00 00 FF FF @14 (A1), reserved 0x05 @23, junk 9D 1E @24,
  // A-Sync @26, TI @38, 90 @40: the Trace Info resets the history, so the exact match gives 0.
  const bytes in = cat({pre({0x9D, 0x1E, 0x2B, 0x34, 0x12, 0x00, 0x00, 0xFF, 0xFF, 0x05, 0x9D, 0x1E}),
                        ASYNC, TI0, {0x90}});
  const run_result r = run(R_BASE, in);
  REQUIRE(!r.d.empty());
  CHECK(r.d[0] == diagnostic{error_code::reserved_header, 23, 0});
  for (std::size_t i = 1; i < r.d.size(); ++i) CHECK(r.d[i].code == error_code::unsynchronized);
  REQUIRE(r.p.size() == 6);
  expect_preamble(r);
  expect_packet(r.p[2], X(K::address_64_is0, 9).addr(0xFFFF000012345678ull).at_offset(14));
  expect_packet(r.p[3], X(K::async, 12).at_offset(26));
  expect_packet(r.p[4], X(K::trace_info, 2).at_offset(38));
  expect_packet(r.p[5], X(K::address_exact, 1).idx(0).addr(0).at_offset(40));
}
