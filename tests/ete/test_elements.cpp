// SPDX-License-Identifier: Apache-2.0
// Element layer: stage 1 (element_decoder, D9.2), stage 2 (resolver, D9.3 speculation and D9.4
// transactions) and element_reader (bytes -> packets -> elements -> committed elements).
//
// Every expected element sequence below was worked out by hand from the D9.2 pseudocode
// (stage 1), D9.3/D9.4 (stage 2), the D5 element-sequence tables and D2; the arithmetic is in
// the comments. Nothing was pasted from the output of the code under test.
//
// Conventions:
//   * every byte stream starts with an A-Sync (11 x 0x00, 0x80) and a Trace Info, usually
//     0x01 0x00 (PLCTL 0: no INFO, SPEC 0, no CYCT); 0x01 0x04 <SPEC> starts at depth SPEC.
//   * atoms: F1 0xF6 = N, 0xF7 = E; F2 0xD8|A and F3 0xF8|A with A bit 0 the oldest atom;
//     F6 0xC0|A<<5|COUNT = COUNT+3 E atoms then one E (A=0) or N (A=1) (D9.2.10.8).
//   * short address IS0 (0x95 b, also the exception address form and Source 0xB4 b): bits 8:2
//     of the most recent address are replaced by b<6:0>; after a Trace Info the history holds
//     0, so b = 0x10 -> 0x40, 0x11 -> 0x44, 0x20 -> 0x80, 0x30 -> 0xc0 (D9.2.14.5, REXKEZ).
//   * Exception info byte: E[0] bit 0, TYPE bits 5:1, E[1] bit 6 (D9.2.13.1):
//       IRQ (0x0E): E=01 -> 0x1D, E=10 -> 0x5C;  TYPE 0x18: E=01 -> 0x31, E=10 -> 0x70;
//       PE Reset (0x00): E=01 -> 0x01, E=10 -> 0x40.  Address header 0x70 = unknown address.
//
// Elements are written as tokens: E/N atom, C<n> Commit, X<n> Cancel, M Mispredict,
// CC<n>/CC? Cycle Count, TI/TI:<spec> Trace Info, EXC<type>@<hex>/@? Exception,
// TA@<hex>/@? Target Address, SA@<hex> Source Address, CTX Context, Q<n> Q, TS=<n> Timestamp,
// EV<n> Event, ON Trace On, TSTART/TCOMMIT/TFAIL transactions, DISCARD, OVERFLOW.
//
// Where the implementation follows a documented interpretation the comment says so
// ("INTERPRETATION"). Behaviour that contradicts the specification and is not a documented
// interpretation was marked "SPEC-DISPUTE" until the resolver was changed to follow it.
#include <doctest/doctest.h>

#include <tracecodec/ete/element/reader.hpp>

#include "common.hpp"

#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace tracecodec::ete;

namespace {

using bytes = std::vector<std::uint8_t>;
using K = element_kind;

// TRCIDR0 0x0801cea1: TRCBB, TRCCCI, RETSTACK, NUMEVENT 3 (4 events), QSUPP 3, TSSIZE 64,
// COMMOPT 0 (bit 29), COMMTRANS 0 (bit 30). TRCIDR2 0xd0001088: 64-bit addresses, 32-bit
// CID/VMID, CCSIZE 20. TRCIDR8 = MAXSPEC.
registers regs(std::uint32_t maxspec, bool commopt = false, bool commtrans = false) {
  const std::uint32_t idr0 =
      0x0801cea1u | (commopt ? (1u << 29) : 0u) | (commtrans ? (1u << 30) : 0u);
  return registers{idr0, 0xd0001088u, maxspec, 0x47705a13u, 0x1u};
}

bytes async() {
  bytes v(11, 0x00);
  v.push_back(0x80);
  return v;
}

// A-Sync, then the given Trace Info bytes, then the rest.
bytes stream(std::initializer_list<std::uint8_t> trace_info, std::initializer_list<std::uint8_t> rest) {
  bytes v = async();
  v.insert(v.end(), trace_info.begin(), trace_info.end());
  v.insert(v.end(), rest.begin(), rest.end());
  return v;
}
// A-Sync, Trace Info with SPEC 0, then the rest.
bytes stream(std::initializer_list<std::uint8_t> rest) { return stream({0x01, 0x00}, rest); }

std::string token(const element& e) {
  char b[64];
  auto u = [](std::uint64_t v) { return static_cast<unsigned long long>(v); };
  switch (e.kind) {
    case K::atom:
      if (e.count) {  // an atom run: [EEN]
        std::string r = "[";
        for (unsigned i = 0; i < e.count; ++i) r += atom_taken(e, i) ? 'E' : 'N';
        return r + "]";
      }
      return e.taken ? "E" : "N";
    case K::commit: std::snprintf(b, sizeof b, "C%u", e.count); return b;
    case K::cancel: std::snprintf(b, sizeof b, "X%u", e.count); return b;
    case K::mispredict: return "M";
    case K::cycle_count:
      if (e.is(element_flag::cycles_unknown)) return "CC?";
      std::snprintf(b, sizeof b, "CC%u", e.cycles);
      return b;
    case K::trace_info:
      if (e.count == 0) return "TI";
      std::snprintf(b, sizeof b, "TI:%u", e.count);
      return b;
    case K::exception:
      if (e.is(element_flag::unknown_address))
        std::snprintf(b, sizeof b, "EXC%u@?", unsigned{e.exception_type});
      else
        std::snprintf(b, sizeof b, "EXC%u@%llx", unsigned{e.exception_type}, u(e.address));
      return b;
    case K::target_address:
      if (e.is(element_flag::unknown_address)) return "TA@?";
      std::snprintf(b, sizeof b, "TA@%llx", u(e.address));
      return b;
    case K::source_address: std::snprintf(b, sizeof b, "SA@%llx", u(e.address)); return b;
    case K::context: return "CTX";
    case K::q:
      if (e.is(element_flag::count_unknown)) return "Q?";
      std::snprintf(b, sizeof b, "Q%u", e.count);
      return b;
    case K::timestamp: std::snprintf(b, sizeof b, "TS=%llu", u(e.timestamp)); return b;
    case K::event: std::snprintf(b, sizeof b, "EV%u", unsigned{e.number}); return b;
    case K::trace_on: return "ON";
    case K::transaction_start: return "TSTART";
    case K::transaction_commit: return "TCOMMIT";
    case K::transaction_failure: return "TFAIL";
    case K::discard: return "DISCARD";
    case K::overflow: return "OVERFLOW";
    default: return element_name(e.kind);
  }
}

std::string tokens(const std::vector<element>& v, std::size_t from = 0) {
  std::string s;
  for (std::size_t i = from; i < v.size(); ++i) {
    if (!s.empty()) s += ' ';
    s += token(v[i]);
  }
  return s;
}

// `n` copies of `t`, space separated.
std::string rep(const std::string& t, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) {
    if (!s.empty()) s += ' ';
    s += t;
  }
  return s;
}
std::string cat(std::initializer_list<std::string> parts) {
  std::string s;
  for (const auto& p : parts) {
    if (p.empty()) continue;
    if (!s.empty()) s += ' ';
    s += p;
  }
  return s;
}

// Packets -> stage 1 -> stage 2, fed chunk by chunk so that the speculation depth and the
// committed output can be inspected between packets.
struct pipeline {
  decoder<> dec;
  element_decoder<> stage1;
  resolver<> stage2;
  std::vector<element> s1, out;
  std::vector<diagnostic> errors;

  explicit pipeline(const registers& r, bool runs = false) : dec(r), stage1(r), stage2(r) {
    stage1.atom_runs(runs);
  }

  // Feeds whole packets; returns the tokens of the stage-1 elements they produced.
  std::string feed(const bytes& b) {
    const std::size_t from = s1.size();
    dec.feed(b.data(), b.size());
    packet p{};
    for (;;) {
      const decode_status s = dec.next(p);
      if (s == decode_status::packet) {
        stage1.process(p, [&](const element& e) {
          s1.push_back(e);
          stage2.push(
              e, [&](const element& x) { out.push_back(x); },
              [&](const diagnostic& d) { errors.push_back(d); });
        });
      } else if (s == decode_status::error) {
        errors.push_back(dec.last_diagnostic());
      } else {
        break;
      }
    }
    return tokens(s1, from);
  }
  std::string feed(std::initializer_list<std::uint8_t> b) { return feed(bytes(b)); }
  std::uint32_t depth() const { return stage1.spec_depth(); }
  std::string resolved() const { return tokens(out); }
};

// element_reader over a whole buffer: stage-1 elements (resolve = false) or the committed
// stream (resolve = true).
struct read_result {
  std::vector<element> elements;
  std::vector<diagnostic> errors;
  std::string str() const { return tokens(elements); }
};
// pass_mispredicts: as the flow decoder reads (element_reader::pass_mispredicts).
read_result read(const registers& r, const bytes& b, bool resolve, bool pass_mispredicts = false) {
  read_result res;
  element_reader<> reader(r);
  reader.pass_mispredicts(pass_mispredicts);
  reader.decode(
      b.data(), b.size(), [&](const element& e) { res.elements.push_back(e); },
      [&](const diagnostic& d) { res.errors.push_back(d); }, resolve);
  return res;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Rule 1: speculation depth arithmetic (D9.2.8-D9.2.15, D9.2.18.3; R_JBGCR, R_PLYLR, R_RVVWE,
// R_ZEFZW, R_PSHDJ, R_NQHRY, R_8VEVY).
// ---------------------------------------------------------------------------------------------
TEST_CASE("elements r1: speculation depth follows every P0, commit, cancel and Trace Info") {
  // MAXSPEC 255 keeps UpdateSpecDepth from committing anything: depth = P0 seen - resolved.
  pipeline p(regs(255));
  p.feed(async());
  struct step {
    bytes in;
    const char* elements;
    std::uint32_t depth;
  };
  const step steps[] = {
      {{0x01, 0x00}, "TI", 0},                      // Trace Info: depth = SPEC = 0
      {{0xF7}, "E", 1},                             // Atom F1 E: 0 + 1
      {{0xDB}, "E E", 3},                           // Atom F2 A=11: two atoms, 1 + 2
      {{0xF8}, "N N N", 6},                         // Atom F3 A=000: three atoms, 3 + 3
      {{0x06, 0x1D, 0x95, 0x10}, "EXC14@40", 7},    // Exception E=01 IRQ: 6 + 1 (R_PER)
      {{0xAC, 0x05}, "Q5", 8},                      // Q with count 5, no address: 7 + 1
      {{0xB4, 0x20}, "SA@80", 9},                   // Source Address short IS0: 8 + 1
      {{0x0A}, "TSTART", 10},                       // Transaction Start, COMMTRANS 0: P0, + 1
      {{0x0B}, "TCOMMIT", 10},                      // Transaction Commit: not P0
      {{0x95, 0x11}, "TA@44", 10},                  // Target Address: not P0
      {{0x71}, "EV0", 10},                          // Event: not P0
      {{0x02, 0x05}, "TS=5", 10},                   // Timestamp: not P0
      {{0x2D, 0x04}, "C4", 6},                      // Commit 4: 10 - 4
      {{0x2E, 0x02}, "X2", 4},                      // Cancel F1 2: 6 - 2
      {{0x35}, "E X1 M", 4},                        // Cancel F2 A=01: + 1 atom, - 1 = 4
      {{0x3B}, "E X3 M", 2},                        // Cancel F3 CC=01 A=1: + 1, - (1+2) = 2
      {{0x32}, "E E M", 4},                         // Mispredict A=10: + 2 atoms
      {{0x14}, "C2 CC0", 2},                        // Cycle Count F3_0 AA=01 BB=00: - (1+1)
      {{0x01, 0x04, 0x07}, "TI:7", 7},              // Trace Info SPEC 7: depth = 7
      {{0xC0}, "E E E E", 11},                      // Atom F6 COUNT 0 A=0: 0+3 E, then E: + 4
      {{0x00, 0x03}, "DISCARD", 0},                 // Discard: depth = 0
      {{0xF6}, "N", 1},                             // 0 + 1
      {{0x00, 0x05}, "DISCARD OVERFLOW", 0},        // Overflow: depth = 0
  };
  for (const step& s : steps) {
    CAPTURE(s.elements);
    CHECK(p.feed(s.in) == s.elements);
    CHECK(p.depth() == s.depth);
  }
  CHECK(p.errors.empty());

  // P0 flags (D2.2) as element_behaviours gives them: atoms, exceptions, Q, Source Address and
  // (COMMTRANS 0) Transaction Start.
  for (const element& e : p.s1) {
    CAPTURE(token(e));
    CHECK(e.p0 == p0_by_kind(e.kind, false));
  }
}

// ---------------------------------------------------------------------------------------------
// The behaviour table (behaviour.hpp): one row per element kind, and the bitmasks the
// resolver tests say what the rows say.
// ---------------------------------------------------------------------------------------------
TEST_CASE("element behaviour table: a row for every kind, masks agree with the rows") {
  unsigned kinds = 0;
#define TRACECODEC_TEST_KIND(id)                                                    \
  {                                                                                 \
    const element_kind k = element_kind::id;                                        \
    CAPTURE(element_name(k));                                                       \
    ++kinds;                                                                        \
    CHECK(behaviour_of(k).kind == k);                                               \
    CHECK(survives_cancel(k) == behaviour_of(k).survives_cancel);                   \
    CHECK(survives_discard(k) == behaviour_of(k).survives_discard);                 \
    CHECK(survives_transaction_failure(k) == behaviour_of(k).survives_transaction_failure); \
  }
  TRACECODEC_ETE_ELEMENT_KINDS(TRACECODEC_TEST_KIND)
#undef TRACECODEC_TEST_KIND
  CHECK(kinds == element_kind_count);
  CHECK(std::size(element_behaviours) == element_kind_count);
  // P0 (D9.3.3.1): Transaction Start only when COMMTRANS is 0; nothing else depends on it.
  CHECK(p0_by_kind(K::transaction_start, false));
  CHECK_FALSE(p0_by_kind(K::transaction_start, true));
  CHECK(p0_by_kind(K::atom, true));
  CHECK_FALSE(p0_by_kind(K::transaction_failure, false));  // depends on the packet
}

// ---------------------------------------------------------------------------------------------
// Rule 2: implied commits, D9.2.18.3 UpdateSpecDepth(): beyond MAXSPEC a Commit element of
// (depth - MAXSPEC) follows the element that made the depth exceed MAXSPEC.
// ---------------------------------------------------------------------------------------------
TEST_CASE("elements r2: MAXSPEC 0 commits every P0 element at once") {
  pipeline p(regs(0));
  p.feed(async());
  CHECK(p.feed({0x01, 0x00}) == "TI");
  // Each HandleAtom: depth 0 + 1 = 1 > 0 -> Commit(1 - 0), depth 0.
  CHECK(p.feed({0xF7}) == "E C1");
  CHECK(p.feed({0xF6}) == "N C1");
  CHECK(p.feed({0xDA}) == "N C1 E C1");                        // F2 A=10: bit 0 N, bit 1 E
  CHECK(p.feed({0xC0}) == rep("E C1", 4));                     // F6 COUNT 0: 4 E atoms
  CHECK(p.feed({0xA5, 0x10, 0x03}) == "Q3 C1 TA@40");          // D9.2.11.2: Q, depth, address
  CHECK(p.feed({0x06, 0x5C, 0x95, 0x20}) == "TA@80 EXC14@80 C1");  // D9.2.13.2: depth last
  // INTERPRETATION (element_decoder.hpp "element before the depth update as for atoms"):
  // D9.2.12.1 calls UpdateSpecDepth(1) before Emit(SourceAddressElement), which would give
  // "C1 SA@c0"; the implementation emits the element first so the Commit follows its P0.
  CHECK(p.feed({0xB4, 0x30}) == "SA@c0 C1");
  CHECK(p.depth() == 0);
  // Stage 2: each Commit(1) releases the one queued P0 element; the Target Address elements
  // arrive with nothing speculative queued and pass at once.
  CHECK(p.resolved() == "TI E N N E E E E E Q3 TA@40 TA@80 EXC14@80 SA@c0");
  CHECK(p.stage2.speculative() == 0);
  CHECK(p.errors.empty());
}

TEST_CASE("elements r2: MAXSPEC 6 commits from the 7th uncommitted atom on") {
  pipeline p(regs(6));
  p.feed(async());
  CHECK(p.feed({0x01, 0x00}) == "TI");
  CHECK(p.feed({0xFF}) == "E E E");  // depth 3
  CHECK(p.feed({0xF8}) == "N N N");  // depth 6 = MAXSPEC: no commit yet
  CHECK(p.depth() == 6);
  CHECK(p.feed({0xF7}) == "E C1");        // 7 > 6 -> Commit(7 - 6 = 1), depth 6
  CHECK(p.feed({0xDB}) == "E C1 E C1");   // again 7 -> Commit(1) for each
  CHECK(p.depth() == 6);
  // 9 atoms E E E N N N E E E, 3 committed (the oldest): E E E.
  CHECK(p.resolved() == "TI E E E");
  CHECK(p.stage2.speculative() == 6);
  CHECK(p.feed({0x2D, 0x06}) == "C6");  // Commit 6: 6 - 6 = 0
  CHECK(p.depth() == 0);
  CHECK(p.resolved() == "TI E E E N N N E E E");
  CHECK(p.errors.empty());
}

TEST_CASE("elements r2: MAXSPEC 15 and an Atom F6 packet of 24 atoms") {
  pipeline p(regs(15));
  p.feed(async());
  p.feed({0x01, 0x00});
  // 0xF4 = 0b11110100: not F1 (0xF6/7), F3 (0xF8+), F5.1 (0xF5) -> F6 with A = bit 5 = 1,
  // COUNT = 0b10100 = 20: 20 + 3 = 23 E atoms, then N: 24 atoms.
  // Atoms 1..15 take the depth to 15; atoms 16..24 each make it 16 -> Commit(16 - 15 = 1).
  const std::string expect = cat({rep("E", 15), rep("E C1", 8), "N C1"});
  CHECK(p.feed({0xF4}) == expect);
  CHECK(p.depth() == 15);
  CHECK(p.resolved() == cat({"TI", rep("E", 9)}));  // 9 commits, 9 oldest atoms
  CHECK(p.stage2.speculative() == 15);
  CHECK(p.feed({0x2D, 0x0F}) == "C15");
  CHECK(p.resolved() == cat({"TI", rep("E", 23), "N"}));
  CHECK(p.errors.empty());
}

TEST_CASE("elements r2: MAXSPEC 255 depth limit") {
  SUBCASE("24 atoms from depth 0 stay speculative") {
    pipeline p(regs(255));
    p.feed(async());
    p.feed({0x01, 0x00});
    // 0xD4 = 0b11010100: F6 with A = 0, COUNT = 20: 23 E, then E: 24 atoms, 24 <= 255.
    CHECK(p.feed({0xD4}) == rep("E", 24));
    CHECK(p.depth() == 24);
    CHECK(p.resolved() == "TI");
  }
  SUBCASE("at depth 255 every atom implies Commit(1)") {
    pipeline p(regs(255));
    p.feed(async());
    // Trace Info PLCTL 0x04, SPEC ULEB 0xFF 0x01 = 0x7F + (0x01 << 7) = 255.
    CHECK(p.feed({0x01, 0x04, 0xFF, 0x01}) == "TI:255");
    CHECK(p.depth() == 255);
    CHECK(p.feed({0xF7}) == "E C1");  // 256 - 255 = 1
    CHECK(p.feed({0xD4}) == rep("E C1", 24));
    CHECK(p.depth() == 255);
    // Stage 2: the 25 commits all go to the 255 unseen P0 elements before the Trace Info
    // (D9.3.3.1 commits the not-yet-Aligned ones first), so nothing is output yet, not even
    // the Trace Info, which waits behind the remaining 230 unseen elements.
    CHECK(p.resolved() == "");
    CHECK(p.stage2.speculative() == 255);  // 255 - 25 unseen + 25 queued atoms
  }
}

TEST_CASE("elements r2: implied commit count is depth - MAXSPEC") {
  // A Trace Info SPEC above MAXSPEC cannot come from a conforming trace unit; it is used only
  // to make UpdateSpecDepth commit more than one element: MAXSPEC 6, SPEC 9, one atom:
  // depth 10 > 6 -> Commit(10 - 6 = 4), depth 6.
  pipeline p(regs(6));
  p.feed(async());
  CHECK(p.feed({0x01, 0x04, 0x09}) == "TI:9");
  CHECK(p.feed({0xF7}) == "E C4");
  CHECK(p.depth() == 6);
}

// FUZZ-FINDING: 10 (resolver, fuzz/README.md): the resolver took a Commit or Cancel of unseen P0 elements one element at a
// time, so a Trace Info SPEC of 2^32 - 1 and a Commit of as many took seconds per packet (a
// 1 KiB input of the flow fuzz target ran 33 s). The counts are 32-bit ULEBs (D6.11, Commit
// and Trace Info SPEC). The time limit is generous for a few packets and far below the
// element-by-element cost (several seconds here).
TEST_CASE("elements r2: a Commit or Cancel of 2^32 - 1 unseen elements is one step" *
          doctest::timeout(0.5)) {
  pipeline p(regs(255));
  p.feed(async());
  CHECK(p.feed({0x01, 0x04, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F}) == "TI:4294967295");
  CHECK(p.feed({0x2D, 0xFE, 0xFF, 0xFF, 0xFF, 0x0F}) == "C4294967294");
  CHECK(p.stage2.speculative() == 1);
  CHECK(p.feed({0xF7}) == "E");
  CHECK(p.stage2.speculative() == 2);
  CHECK(p.feed({0x2D, 0x02}) == "C2");  // the last unseen element, then the atom
  CHECK(p.resolved() == "TI:4294967295 E");
  // Cancel: MAXSPEC 2^32 - 1 (no implied commits), SPEC 2^32 - 2 and one atom; a Cancel of 2^32 - 1 takes the atom and every unseen
  // element at once (D9.3.4.1: the youngest first).
  pipeline q(regs(0xFFFFFFFFu));
  q.feed(async());
  CHECK(q.feed({0x01, 0x04, 0xFE, 0xFF, 0xFF, 0xFF, 0x0F}) == "TI:4294967294");
  CHECK(q.feed({0xF7}) == "E");
  CHECK(q.feed({0x2E, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F}) == "X4294967295");
  CHECK(q.stage2.speculative() == 0);
  CHECK(q.feed({0xF6, 0x2D, 0x01}) == "N C1");
  CHECK(q.resolved() == "TI:4294967294 N");
}

TEST_CASE("elements r2: atoms inside a Cancel packet imply commits too") {
  // MAXSPEC 2: E, E (depth 2); Cancel F2 A=01: HandleAtom(E) -> 3 > 2 -> Commit(1), depth 2;
  // Cancel 1 -> 1; Mispredict.
  pipeline p(regs(2));
  p.feed(async());
  p.feed({0x01, 0x00});
  CHECK(p.feed({0xF7, 0xF7, 0x35}) == "E E E C1 X1 M");
  CHECK(p.depth() == 1);
  // Stage 2: C1 commits atom 1; X1 removes atom 3; M flips atom 2 (E -> N).
  CHECK(p.resolved() == "TI E");
  CHECK(p.feed({0x2D, 0x01}) == "C1");
  CHECK(p.resolved() == "TI E N");
  CHECK(p.errors.empty());
}

// ---------------------------------------------------------------------------------------------
// Rule 3: Cycle Count commits (D9.2.16.2, D9.2.16.4-6; D5.26-D5.34).
// ---------------------------------------------------------------------------------------------
TEST_CASE("elements r3: cycle count commits under COMMOPT 0") {
  pipeline p(regs(15));
  p.feed(async());
  // Trace Info PLCTL 0x09 (INFO + CYCT), INFO 0x01 (cycle counting on), CYCT 0x0A = 10:
  // cc_threshold = 10 (D9.2.6.2).
  CHECK(p.feed({0x01, 0x09, 0x01, 0x0A}) == "TI");
  CHECK(p.s1.back().cycles == 10);
  CHECK(p.s1.back().is(element_flag::cc_enabled));
  // 0xCB: F6 A=0 COUNT=11 -> 14 E then E = 15 atoms, depth 15 (= MAXSPEC, no commit).
  CHECK(p.feed({0xCB}) == rep("E", 15));
  // F1_0: COMMIT 2, COUNT 5 -> Commit(2), Cycle Count 5 + 10 = 15; depth 13.
  CHECK(p.feed({0x0E, 0x02, 0x05}) == "C2 CC15");
  CHECK(p.depth() == 13);
  // F1_0 unknown: COMMIT 1 -> Commit(1), UNKNOWN count; depth 12.
  CHECK(p.feed({0x0F, 0x01}) == "C1 CC?");
  CHECK(p.depth() == 12);
  // F1_0: COMMIT 0 -> no Commit element (D9.2.16.4 "if UInt(COMMIT) > 0"); 3 + 10 = 13.
  CHECK(p.feed({0x0E, 0x00, 0x03}) == "CC13");
  CHECK(p.depth() == 12);
  // F2 small (0x0C), payload AAAA=2 BBBB=4: Commit(2 + 1 = 3), 10 + 4 = 14; depth 9.
  CHECK(p.feed({0x0C, 0x24}) == "C3 CC14");
  CHECK(p.depth() == 9);
  // F2 large (0x0D), AAAA=3 BBBB=1: Commit(MAXSPEC + AAAA - 15 = 15 + 3 - 15 = 3), 10 + 1 = 11;
  // depth 6.
  CHECK(p.feed({0x0D, 0x31}) == "C3 CC11");
  CHECK(p.depth() == 6);
  // F3 0x10|AA<<2|BB: 0x16 -> AA=1 BB=2: Commit(1 + 1 = 2), 10 + 2 = 12; depth 4.
  CHECK(p.feed({0x16}) == "C2 CC12");
  CHECK(p.depth() == 4);
  // 0x10 -> AA=0 BB=0: Commit(1), 10 + 0 = 10; depth 3.
  CHECK(p.feed({0x10}) == "C1 CC10");
  CHECK(p.depth() == 3);
  // Stage 2: 2+1+3+3+2+1 = 12 atoms committed. Each Cycle Count element is Stack()ed behind
  // the still-speculative atoms (D9.3.6.1), so none has been released yet.
  CHECK(p.resolved() == cat({"TI", rep("E", 12)}));
  CHECK(p.feed({0x2D, 0x03}) == "C3");
  CHECK(p.depth() == 0);
  CHECK(p.resolved() ==
        cat({"TI", rep("E", 15), "CC15 CC? CC13 CC14 CC11 CC12 CC10"}));
  CHECK(p.errors.empty());
}

TEST_CASE("elements r3: cycle count commit releases the cycle count with the committed atoms") {
  // E E, then F3_0 0x14 (AA=1 BB=0): Commit(2), Cycle Count 0 + 0 (cycle counting off in
  // the Trace Info, threshold 0). Both atoms are committed before the Cycle Count arrives,
  // so it passes straight on.
  const auto r = read(regs(15), stream({0xDB, 0x14}), true);
  CHECK(r.errors.empty());
  CHECK(r.str() == "TI E E CC0");
  CHECK(read(regs(15), stream({0xDB, 0x14}), false).str() == "TI E E C2 CC0");
}

TEST_CASE("elements r3: cycle count packets under COMMOPT 1 carry no commit") {
  pipeline p(regs(15, /*commopt=*/true));
  p.feed(async());
  CHECK(p.feed({0x01, 0x09, 0x01, 0x0A}) == "TI");  // cycle counting on, threshold 10
  CHECK(p.feed({0xF7, 0xF7}) == "E E");             // depth 2
  // F1_1: no COMMIT field (D9.2.16.2); COUNT 5 -> 5 + 10 = 15.
  CHECK(p.feed({0x0E, 0x05}) == "CC15");
  CHECK(p.feed({0x0F}) == "CC?");  // F1_1 unknown: header only
  // INTERPRETATION (element_decoder.hpp "D5.27/29/32/34: no Commit element"): for format 2
  // under COMMOPT 1 D9.2.16.2 calls CycleCountFormat2Packet('1', '1111', BBBB), whose
  // arithmetic would give commit_count = MAXSPEC + 15 - 15 = 15, i.e. "C15 CC14"; D5.32 says
  // the packet encodes only a Cycle Count element. BBBB 4 -> 10 + 4 = 14.
  CHECK(p.feed({0x0D, 0xF4}) == "CC14");
  CHECK(p.feed({0x0C, 0xF3}) == "CC13");  // 0x0C is format 2 too; F and AAAA ignored
  // INTERPRETATION: D9.2.16.6 emits nothing at all when commit_mode is set; D5.34 says the
  // packet encodes a Cycle Count element. 0x12: BB = 2 -> 12. 0x17: AA (ignored) = 1, BB = 3.
  CHECK(p.feed({0x12}) == "CC12");
  CHECK(p.feed({0x17}) == "CC13");
  CHECK(p.depth() == 2);  // no cycle count packet changed the depth
  CHECK(p.resolved() == "TI");
  CHECK(p.feed({0x2D, 0x02}) == "C2");
  CHECK(p.resolved() == "TI E E CC15 CC? CC14 CC13 CC12 CC13");
  CHECK(p.errors.empty());
}

TEST_CASE("elements r3: cycle count threshold only when the Trace Info enables cycle counting") {
  // COMMOPT 1, MAXSPEC 0 (the FVP configuration). cc_threshold = INFO<0> ? CYCT : 0.
  pipeline p(regs(0, /*commopt=*/true));
  p.feed(async());
  CHECK(p.feed({0x01, 0x08, 0x0A}) == "TI");  // PLCTL 0x08: CYCT 10 only, no INFO -> 0
  CHECK(p.s1.back().cycles == 0);
  CHECK(p.feed({0x0E, 0x05}) == "CC5");       // 5 + 0
  CHECK(p.feed({0x01, 0x09, 0x00, 0x0A}) == "TI");  // INFO 0x00: cycle counting off -> 0
  CHECK(p.feed({0x0E, 0x05}) == "CC5");
  CHECK(p.feed({0x01, 0x09, 0x01, 0x0A}) == "TI");  // INFO 0x01: on -> threshold 10
  CHECK(p.s1.back().cycles == 10);
  CHECK(p.feed({0x0E, 0x05}) == "CC15");      // 5 + 10
  CHECK(p.feed({0x13}) == "CC13");            // F3_1 BB=3: 3 + 10
  CHECK(p.resolved() == "TI CC5 TI CC5 TI CC15 CC13");
  CHECK(p.errors.empty());
}

// ---------------------------------------------------------------------------------------------
// Rule 4: Cancel and Mispredict (D9.2.8.4-6, D9.2.9.2, D5.36-D5.39; D9.3.4 Table D9.2; D2.5.4).
// ---------------------------------------------------------------------------------------------
TEST_CASE("elements r4: every cancel and mispredict form, stage 1 and resolved") {
  // Prefix: six F1 atoms E E N N E N, depth 6 (MAXSPEC 15, no implied commits).
  // After the packet under test a Commit of the remaining depth releases the survivors.
  // Cancel removes the youngest n atoms; Mispredict flips the newest remaining atom.
  struct row {
    bytes in;
    const char* stage1;
    std::uint32_t depth;
    const char* survivors;
  };
  const row rows[] = {
      // Cancel F1, M = 0: CANCEL 1 -> depth 5; [E E N N E]
      {{0x2E, 0x01}, "X1", 5, "E E N N E"},
      // Cancel F1, M = 0, CANCEL 3 -> depth 3; [E E N]
      {{0x2E, 0x03}, "X3", 3, "E E N"},
      // Cancel F1, M = 1: CANCEL 1 -> 5; [E E N N E], flip the 5th -> [E E N N N]
      {{0x2F, 0x01}, "X1 M", 5, "E E N N N"},
      // Cancel F1, M = 1, CANCEL 2 -> 4; [E E N N], flip -> [E E N E]
      {{0x2F, 0x02}, "X2 M", 4, "E E N E"},
      // Cancel F2 A=00: cancel 1 -> 5; [E E N N E] -> flip -> [E E N N N]
      {{0x34}, "X1 M", 5, "E E N N N"},
      // Cancel F2 A=01: E, cancel 1 -> 6 + 1 - 1 = 6; the new E goes; flip the 6th N -> E
      {{0x35}, "E X1 M", 6, "E E N N E E"},
      // Cancel F2 A=10: E E, cancel 1 -> 6 + 2 - 1 = 7; [.. N E] + E, flip the 7th E -> N
      {{0x36}, "E E X1 M", 7, "E E N N E N N"},
      // Cancel F2 A=11: N, cancel 1 -> 6; the N goes; flip the 6th N -> E
      {{0x37}, "N X1 M", 6, "E E N N E E"},
      // Cancel F3 0x38|CC<<1|A. CC=0 A=0: cancel 0 + 2 = 2 -> 4; [E E N N] -> [E E N E]
      {{0x38}, "X2 M", 4, "E E N E"},
      // CC=0 A=1: E, cancel 2 -> 6 + 1 - 2 = 5; [E E N N E] -> flip -> [E E N N N]
      {{0x39}, "E X2 M", 5, "E E N N N"},
      // CC=1 A=0: cancel 3 -> 3; [E E N] -> [E E E]
      {{0x3A}, "X3 M", 3, "E E E"},
      // CC=1 A=1: E, cancel 3 -> 4; [E E N N] -> [E E N E]
      {{0x3B}, "E X3 M", 4, "E E N E"},
      // CC=2 A=0: cancel 4 -> 2; [E E] -> [E N]
      {{0x3C}, "X4 M", 2, "E N"},
      // CC=2 A=1: E, cancel 4 -> 3; [E E N] -> [E E E]
      {{0x3D}, "E X4 M", 3, "E E E"},
      // CC=3 A=0: cancel 5 -> 1; [E] -> [N]
      {{0x3E}, "X5 M", 1, "N"},
      // CC=3 A=1: E, cancel 5 -> 2; [E E] -> [E N]
      {{0x3F}, "E X5 M", 2, "E N"},
      // Mispredict A=00: no atom -> 6; flip the 6th N -> E
      {{0x30}, "M", 6, "E E N N E E"},
      // Mispredict A=01: E -> 7; the mispredict corrects that E -> N
      {{0x31}, "E M", 7, "E E N N E N N"},
      // Mispredict A=10: E E -> 8; flip the 8th -> N
      {{0x32}, "E E M", 8, "E E N N E N E N"},
      // Mispredict A=11: N -> 7; flip the 7th -> E
      {{0x33}, "N M", 7, "E E N N E N E"},
  };
  for (const row& r : rows) {
    CAPTURE(r.stage1);
    CAPTURE(static_cast<unsigned>(r.in[0]));
    pipeline p(regs(15));
    p.feed(async());
    p.feed({0x01, 0x00});
    REQUIRE(p.feed({0xF7, 0xF7, 0xF6, 0xF6, 0xF7, 0xF6}) == "E E N N E N");
    // INTERPRETATION (element_decoder.hpp "D5.39: every A value ends in a Mispredict
    // element"): in D9.2.9.2 the `otherwise Emit(MispredictElement())` reads as if only A=00
    // emitted one; D5.39 lists a Mispredict element for every A value.
    CHECK(p.feed(r.in) == r.stage1);
    CHECK(p.depth() == r.depth);
    CHECK(p.resolved() == "TI");  // nothing committed yet
    CHECK(p.stage2.speculative() == r.depth);
    CHECK(p.feed({0x2D, static_cast<std::uint8_t>(r.depth)}) ==
          "C" + std::to_string(r.depth));
    CHECK(p.depth() == 0);
    CHECK(p.resolved() == cat({"TI", r.survivors}));
    CHECK(p.errors.empty());
  }
}

// The same cancel and mispredict forms with atom runs: the six atoms arrive as two Atom F3
// packets, [EEN] and [NEN], so Cancels end inside a run; then the survivors are committed
// all at once, and one at a time (a run split by every Commit, the Mispredict applied to
// the run's last atom when that atom is committed). Expected: the survivors above.
TEST_CASE("elements r4: atom runs split by Cancel and Commit, flipped by Mispredict") {
  struct row {
    bytes in;
    std::uint32_t depth;
    const char* survivors;
  };
  const row rows[] = {
      {{0x2E, 0x01}, 5, "E E N N E"},   {{0x2E, 0x03}, 3, "E E N"},
      {{0x2F, 0x01}, 5, "E E N N N"},   {{0x2F, 0x02}, 4, "E E N E"},
      {{0x34}, 5, "E E N N N"},         {{0x35}, 6, "E E N N E E"},
      {{0x36}, 7, "E E N N E N N"},     {{0x37}, 6, "E E N N E E"},
      {{0x38}, 4, "E E N E"},           {{0x39}, 5, "E E N N N"},
      {{0x3A}, 3, "E E E"},             {{0x3B}, 4, "E E N E"},
      {{0x3C}, 2, "E N"},               {{0x3D}, 3, "E E E"},
      {{0x3E}, 1, "N"},                 {{0x3F}, 2, "E N"},
      {{0x30}, 6, "E E N N E E"},       {{0x31}, 7, "E E N N E N N"},
      {{0x32}, 8, "E E N N E N E N"},   {{0x33}, 7, "E E N N E N E"},
  };
  for (const row& r : rows) {
    CAPTURE(static_cast<unsigned>(r.in[0]));
    for (const bool one_by_one : {false, true}) {
      CAPTURE(one_by_one);
      pipeline p(regs(15), true);
      p.feed(async());
      p.feed({0x01, 0x00});
      // Atom F3 (D5.44): 0xF8 | bits, oldest atom in bit 0.
      REQUIRE(p.feed({0xFB, 0xFA}) == "[EEN] [NEN]");
      p.feed(r.in);
      CHECK(p.depth() == r.depth);
      CHECK(p.stage2.speculative() == r.depth);
      CHECK(p.resolved() == "TI");
      if (one_by_one) {
        for (std::uint32_t i = 0; i < r.depth; ++i) {
          p.feed({0x2D, 0x01});
          CHECK(p.stage2.speculative() == r.depth - i - 1);
        }
      } else {
        p.feed({0x2D, static_cast<std::uint8_t>(r.depth)});
      }
      CHECK(p.stage2.speculative() == 0);
      std::vector<element> atoms;
      for (const element& e : p.out)
        if (e.kind == K::atom) atoms.push_back(e);
      CHECK(tokens(test::expand_atom_runs(atoms)) == r.survivors);
      if (one_by_one) CHECK(atoms.size() == r.depth);  // each Commit 1 delivers a run of one
      CHECK(p.errors.empty());
    }
  }
}

TEST_CASE("elements r2: atom runs with implied commits commit the same atoms") {
  // MAXSPEC 6; Atom F1 E, F1 N, then F3 packets EEN, NEN, EEE, NNN, EEN: 17 atoms. Per atom,
  // the 7th and later each imply Commit 1; as runs, one implied Commit of depth - MAXSPEC
  // follows each run. Either way the oldest 11 atoms are committed, the youngest 6 wait.
  const bytes in = stream({0xF7, 0xF6, 0xFB, 0xFA, 0xFF, 0xF8, 0xFB});
  const auto single = test::read_elements(regs(6), in.data(), in.size(), true, false);
  const auto run = test::read_elements(regs(6), in.data(), in.size(), true, true);
  CHECK(single.errors.empty());
  CHECK(run.errors.empty());
  CHECK(tokens(single.elements) == "TI E N E E N N E N E E E");
  CHECK(tokens(run.elements) == "TI [E] [N] [EEN] [NEN] [EEE]");
  const auto a = test::expand_atom_runs(run.elements);
  REQUIRE(a.size() == single.elements.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i] == single.elements[i]);
}

TEST_CASE("elements r4: cancel removes and keeps elements as Table D9.2 says") {
  pipeline p(regs(15));
  p.feed(async());
  p.feed({0x01, 0x00});
  CHECK(p.feed({0xF7}) == "E");                              // P0 #1, survives
  CHECK(p.feed({0x95, 0x10}) == "TA@40");                    // before the oldest canceled P0
  CHECK(p.feed({0x06, 0x1D, 0x95, 0x20}) == "EXC14@80");     // P0 #2: oldest canceled
  CHECK(p.feed({0x71}) == "EV0");                            // Event: Keep
  CHECK(p.feed({0x01, 0x04, 0x02}) == "TI:2");               // Trace Info (SPEC 2 = depth): Keep
  CHECK(p.feed({0x02, 0x05}) == "TS=5");                     // Timestamp: Process (kept)
  CHECK(p.feed({0x80}) == "CTX");                            // Context: Remove
  CHECK(p.feed({0x04}) == "ON");                             // Trace On: Remove
  CHECK(p.feed({0xAC, 0x03}) == "Q3");                       // P0 #3
  CHECK(p.feed({0x0E, 0x00, 0x07}) == "CC7");                // Cycle Count: Process (kept)
  CHECK(p.feed({0xB4, 0x30}) == "SA@c0");                    // P0 #4 (history reset by TI)
  CHECK(p.feed({0x0A}) == "TSTART");                         // P0 #5 (COMMTRANS 0): Remove
  CHECK(p.feed({0x95, 0x11}) == "TA@44");                    // Target Address: Remove
  CHECK(p.depth() == 5);
  // Cancel 4: the youngest four P0 elements are #5..#2; depth 5 - 4 = 1.
  CHECK(p.feed({0x2E, 0x04}) == "X4");
  CHECK(p.depth() == 1);
  CHECK(p.stage2.speculative() == 1);
  // INTERPRETATION (resolver.hpp "Kept elements stay in place, in order"): D9.3.4.1 hands
  // the kept Cycle Count/Event/Trace Info/Timestamp elements to AnalyzeElement() at once, in
  // reverse order while popping from the back; here they stay queued, in order, behind the
  // uncommitted atom #1, and are released when it is committed.
  CHECK(p.resolved() == "TI");
  CHECK(p.feed({0x2D, 0x01}) == "C1");
  CHECK(p.resolved() == "TI E TA@40 EV0 TI:2 TS=5 CC7");
  CHECK_FALSE(p.stage2.in_transaction());  // the Transaction Start was canceled
  CHECK(p.errors.empty());
}

TEST_CASE("elements r4: mispredict after the atom was committed (MAXSPEC 0)") {
  // MAXSPEC 0: A-Sync, Trace Info, 0xF7 (E), 0x30 (Mispredict A=00).
  // Stage 1: HandleAtom(E) -> Commit(1) at once (D9.2.18.3); Mispredict (D9.2.9.2).
  const bytes in = stream({0xF7, 0x30});
  const auto s1 = read(regs(0), in, false);
  CHECK(s1.errors.empty());
  CHECK(s1.str() == "TI E C1 M");
  const auto out = read(regs(0), in, true);
  CHECK(out.errors.empty());
  // The Mispredict element corrects "the most recent non-canceled Atom element" (D2.5.4
  // I_GBKKQ) whether or not it is committed. D9.3.1 Stack()s it and passes it on in order;
  // the analysis stage applies it (D9.5.11). The atom was committed before the Mispredict
  // arrived, so the committed stream carries the Mispredict element after it.
  CHECK(out.str() == "TI E M");
}

TEST_CASE("elements r4: a mispredict discards the target addresses between it and its atom") {
  // MAXSPEC 15: E, Address short IS0 (0x95 0x20 -> 0x80), Timestamp 5 (0x02 0x05), Mispredict
  // A=00, N, Commit 2.
  const bytes in = stream({0xF7, 0x95, 0x20, 0x02, 0x05, 0x30, 0xF6, 0x2D, 0x02});
  const auto s1 = read(regs(15), in, false);
  CHECK(s1.errors.empty());
  CHECK(s1.str() == "TI E TA@80 TS=5 M N C2");
  // D6.9.14: "When analyzing a Mispredict element, any Target Address elements between the
  // mispredicted Atom element and the Mispredict element must be discarded." The resolver
  // applies the Mispredict, so the address goes with it.
  const auto out = read(regs(15), in, true);
  CHECK(out.errors.empty());
  CHECK(out.str() == "TI N TS=5 N");
  // As the flow decoder reads (pass_mispredicts): the atom as first traced, its Mispredict
  // right after it, the address dropped.
  const auto pass = read(regs(15), in, true, true);
  CHECK(pass.errors.empty());
  CHECK(pass.str() == "TI E M TS=5 N");
  // An address after the Mispredict is not between them: it stays.
  const bytes after = stream({0xF7, 0x30, 0x95, 0x20, 0xF6, 0x2D, 0x02});
  const auto out2 = read(regs(15), after, true);
  CHECK(out2.errors.empty());
  CHECK(out2.str() == "TI N TA@80 N");
  // Other elements between them change nothing: a Context (0x80, no payload) stays, the
  // address goes.
  const bytes ctx = stream({0xF7, 0x95, 0x20, 0x80, 0x30, 0xF6, 0x2D, 0x02});
  const auto out3 = read(regs(15), ctx, true);
  CHECK(out3.errors.empty());
  CHECK(out3.str() == "TI N CTX N");
  const auto pass3 = read(regs(15), ctx, true, true);
  CHECK(pass3.errors.empty());
  CHECK(pass3.str() == "TI E M CTX N");
}

TEST_CASE("elements r4: a mispredict inside the canceled stretch is removed") {
  // MAXSPEC 15: E (P0 #1), Exception IRQ (P0 #2), Mispredict A=00, Cancel 1, Commit 1.
  const bytes in = stream({0xF7, 0x06, 0x1D, 0x95, 0x20, 0x30, 0x2E, 0x01, 0x2D, 0x01});
  const auto s1 = read(regs(15), in, false);
  CHECK(s1.errors.empty());
  CHECK(s1.str() == "TI E EXC14@80 M X1 C1");
  const auto out = read(regs(15), in, true);
  CHECK(out.errors.empty());
  // Cancel 1 removes the exception and everything after it, and Table D9.2 / R_ZLIVXG say a
  // Mispredict element in that stretch is removed too ("a trace analyzer must discard
  // Mispredict elements"; D9.3.4.1 pops it with the exception). So atom #1 keeps its E.
  CHECK(out.str() == "TI E");
}

// ---------------------------------------------------------------------------------------------
// Rule 5: transactions (D9.2.15, D9.4, D2.7).
// ---------------------------------------------------------------------------------------------
TEST_CASE("elements r5: transaction failure inside speculation") {
  // MAXSPEC 15, COMMTRANS 0: E, Transaction Start (P0), N, E, Exception TYPE 0x18 E=01
  // (0x06 0x31 0x70) = Transaction Failure, Commit 5.
  // Stage 1 depth: 1, 2, 3, 4, 5 (D9.2.13.2 calls UpdateSpecDepth(1) after the TF), 0.
  pipeline p(regs(15));
  p.feed(async());
  p.feed({0x01, 0x00});
  CHECK(p.feed({0xF7, 0x0A, 0xF6, 0xF7}) == "E TSTART N E");
  CHECK(p.stage1.in_transaction());
  CHECK(p.feed({0x06, 0x31, 0x70}) == "TFAIL");
  CHECK_FALSE(p.stage1.in_transaction());
  CHECK(p.depth() == 5);
  // INTERPRETATION: the Transaction Failure from an Exception packet is a P0 element in the
  // resolution queue, because stage 1 counted it in the depth (D9.2.13.2) and the trace unit's
  // Commit counts include it; D9.3.1 would act on it at once, before the elements of the
  // transaction still speculative in the resolution queue had reached the transaction queue.
  CHECK(p.s1.back().p0);
  CHECK(p.resolved() == "TI");
  CHECK(p.feed({0x2D, 0x05}) == "C5");
  // Committed: E (outside), TSTART (opens the transaction), N E (held), TFAIL drops them.
  CHECK(p.resolved() == "TI E TSTART TFAIL");
  CHECK_FALSE(p.stage2.in_transaction());
  CHECK(p.errors.empty());
}

TEST_CASE("elements r5: transaction commit passes the held elements on") {
  pipeline p(regs(15));
  p.feed(async());
  p.feed({0x01, 0x00});
  // E, TSTART (P0), N, E, Transaction Commit: depth 4.
  CHECK(p.feed({0xF7, 0x0A, 0xF6, 0xF7, 0x0B}) == "E TSTART N E TCOMMIT");
  CHECK_FALSE(p.stage1.in_transaction());
  CHECK(p.depth() == 4);
  // Commit 3: E, TSTART, N are committed; N enters the transaction queue and waits.
  CHECK(p.feed({0x2D, 0x03}) == "C3");
  CHECK(p.resolved() == "TI E TSTART");
  CHECK(p.stage2.in_transaction());
  // Commit 1: E joins the transaction; the TCOMMIT behind it is then committed (D9.4.3.1).
  CHECK(p.feed({0x2D, 0x01}) == "C1");
  CHECK(p.resolved() == "TI E TSTART N E TCOMMIT");
  CHECK_FALSE(p.stage2.in_transaction());
  CHECK(p.errors.empty());
}

TEST_CASE("elements r5: transaction failure discards committed elements since Transaction Start") {
  // D2.7.3 I_XHLPG: "discards all the execution since the most recent Transaction Start
  // element, including any P0 elements which have been committed by Commit elements";
  // D9.4.4 R_XPKFL: Events are not discarded.
  // MAXSPEC 15: TSTART, E, Event 1 (0x72), N, Commit 3, E, TF (E=01), Commit 2.
  const bytes in = stream({0x0A, 0xF7, 0x72, 0xF6, 0x2D, 0x03, 0xF7, 0x06, 0x31, 0x70, 0x2D, 0x02});
  const auto s1 = read(regs(15), in, false);
  CHECK(s1.errors.empty());
  // depth: TSTART 1, E 2, N 3, C3 0, E 1, TFAIL 2, C2 0.
  CHECK(s1.str() == "TI TSTART E EV1 N C3 E TFAIL C2");
  const auto out = read(regs(15), in, true);
  CHECK(out.errors.empty());
  // C3: TSTART out; E, EV1, N into the transaction queue. C2: E in, then TFAIL: E N E go,
  // EV1 stays.
  CHECK(out.str() == "TI TSTART EV1 TFAIL");
}

TEST_CASE("elements r5: a canceled Transaction Failure is removed") {
  // TSTART (P0), E, TF (P0), Cancel 1 (removes the TF, Table D9.2), Transaction Commit,
  // Commit 2 (TSTART, E).
  const bytes in = stream({0x0A, 0xF7, 0x06, 0x31, 0x70, 0x2E, 0x01, 0x0B, 0x2D, 0x02});
  CHECK(read(regs(15), in, false).str() == "TI TSTART E TFAIL X1 TCOMMIT C2");
  const auto out = read(regs(15), in, true);
  CHECK(out.errors.empty());
  CHECK(out.str() == "TI TSTART E TCOMMIT");
}

TEST_CASE("elements r5: Transaction Start is a P0 element only when COMMTRANS is 0") {
  // NOTE: D9.2.15.1 writes `if DSTATE.IA.comm_trans then UpdateSpecDepth(1)`, the opposite
  // polarity of D9.3.3.1/D9.3.4.1 (`TRCIDR0.COMMTRANS == '0'` counts it); the implementation
  // follows D9.3 and the register field (COMMTRANS 0: Transaction Start is a P0 element,
  // D2.2.5 R_CTLXL).
  SUBCASE("MAXSPEC 0") {
    const auto c0 = read(regs(0, false, /*commtrans=*/false), stream({0x0A}), false);
    CHECK(c0.str() == "TI TSTART C1");  // depth 1 > 0 -> Commit(1)
    REQUIRE(c0.elements.size() == 3);
    CHECK(c0.elements[1].p0);
    const auto c1 = read(regs(0, false, /*commtrans=*/true), stream({0x0A}), false);
    CHECK(c1.str() == "TI TSTART");  // not P0: depth stays 0
    REQUIRE(c1.elements.size() == 2);
    CHECK_FALSE(c1.elements[1].p0);
  }
  SUBCASE("MAXSPEC 15, commit 2 after E TSTART N") {
    const std::initializer_list<std::uint8_t> body = {0xF7, 0x0A, 0xF6};
    pipeline p0(regs(15, false, false));
    p0.feed(async());
    p0.feed({0x01, 0x00});
    p0.feed(body);
    CHECK(p0.depth() == 3);             // E, TSTART, N
    CHECK(p0.feed({0x2D, 0x02}) == "C2");
    CHECK(p0.depth() == 1);
    CHECK(p0.resolved() == "TI E TSTART");  // Commit 2 = E and TSTART; N still speculative
    CHECK(p0.stage2.speculative() == 1);

    pipeline p1(regs(15, false, true));
    p1.feed(async());
    p1.feed({0x01, 0x00});
    p1.feed(body);
    CHECK(p1.depth() == 2);             // E, N
    CHECK(p1.feed({0x2D, 0x02}) == "C2");
    CHECK(p1.depth() == 0);
    // Commit 2 = E and N; TSTART travels between them; N waits in the transaction queue.
    CHECK(p1.resolved() == "TI E TSTART");
    CHECK(p1.stage2.speculative() == 0);
    CHECK(p1.stage2.in_transaction());
    CHECK(p1.feed({0x0B}) == "TCOMMIT");
    CHECK(p1.resolved() == "TI E TSTART N TCOMMIT");
    CHECK(p0.errors.empty());
    CHECK(p1.errors.empty());
  }
}

// ---------------------------------------------------------------------------------------------
// Rule 6: Discard and Overflow (D9.2.4.1, D9.2.5.1, D9.3.5.1).
// ---------------------------------------------------------------------------------------------
TEST_CASE("elements r6: Discard and Overflow in stage 1") {
  pipeline p(regs(15));
  p.feed(async());
  p.feed({0x01, 0x00});
  CHECK(p.feed({0xF7, 0xF7}) == "E E");
  CHECK(p.depth() == 2);
  CHECK(p.feed({0x00, 0x03}) == "DISCARD");  // not in a transaction: no TF
  CHECK(p.depth() == 0);
  CHECK(p.feed({0xF6}) == "N");
  CHECK(p.feed({0x00, 0x05}) == "DISCARD OVERFLOW");
  CHECK(p.depth() == 0);
  // In a transaction: Transaction Failure after the Discard (and after the Overflow).
  CHECK(p.feed({0x0A}) == "TSTART");
  CHECK(p.feed({0x00, 0x03}) == "DISCARD TFAIL");
  CHECK_FALSE(p.stage1.in_transaction());
  CHECK(p.depth() == 0);
  CHECK(p.feed({0x0A}) == "TSTART");
  CHECK(p.feed({0x00, 0x05}) == "DISCARD OVERFLOW TFAIL");
  CHECK_FALSE(p.stage1.in_transaction());
  // Transactional state from a Trace Info (PLCTL 0x01, INFO bit 6).
  CHECK(p.feed({0x01, 0x01, 0x40}) == "TI");
  CHECK(p.stage1.in_transaction());
  CHECK(p.s1.back().is(element_flag::in_transaction));
  CHECK(p.feed({0x00, 0x03}) == "DISCARD TFAIL");
  CHECK(p.depth() == 0);
  // The Transaction Failure elements of Discard/Overflow are not P0 elements.
  for (const element& e : p.s1)
    if (e.kind == K::transaction_failure) CHECK_FALSE(e.p0);
  CHECK(p.errors.empty());
}

TEST_CASE("elements r6: Discard drops speculative elements but passes Event, Trace Info, Timestamp") {
  const std::initializer_list<std::uint8_t> body = {
      0xF7,              // E (P0)
      0x95, 0x10,        // TA@40
      0x71,              // EV0
      0x01, 0x04, 0x01,  // Trace Info SPEC 1 (= depth)
      0x02, 0x05,        // Timestamp 5 (the Trace Info reset the last timestamp to 0)
      0xF6,              // N (P0)
      0x0E, 0x00, 0x03,  // Cycle Count F1_0, COMMIT 0, COUNT 3
  };
  const std::string s1 = "TI E TA@40 EV0 TI:1 TS=5 N CC3";
  // INTERPRETATION (as for Cancel): D9.3.5.1 analyzes the kept elements while popping from
  // the back (TS, TI, EV0); the resolver passes them on in stream order.
  SUBCASE("Discard") {
    pipeline p(regs(15));
    p.feed(async());
    p.feed({0x01, 0x00});
    p.feed(body);
    CHECK(tokens(p.s1) == s1);
    CHECK(p.resolved() == "TI");
    CHECK(p.feed({0x00, 0x03}) == "DISCARD");
    CHECK(p.resolved() == "TI EV0 TI:1 TS=5");
    CHECK(p.stage2.speculative() == 0);
    CHECK(p.stage2.queued() == 0);
    // Trace continues from depth 0.
    CHECK(p.feed({0xF7, 0x2D, 0x01}) == "E C1");
    CHECK(p.resolved() == "TI EV0 TI:1 TS=5 E");
    CHECK(p.errors.empty());
  }
  SUBCASE("Overflow") {
    pipeline p(regs(15));
    p.feed(async());
    p.feed({0x01, 0x00});
    p.feed(body);
    CHECK(p.feed({0x00, 0x05}) == "DISCARD OVERFLOW");
    CHECK(p.resolved() == "TI EV0 TI:1 TS=5 OVERFLOW");
    CHECK(p.stage2.speculative() == 0);
    CHECK(p.errors.empty());
  }
}

TEST_CASE("elements r6: Discard forgets the unseen elements of the Trace Info") {
  // Trace Info SPEC 3, Discard (depth 0), E, Commit 1: the commit is for the E.
  const bytes in = stream({0x01, 0x04, 0x03}, {0x00, 0x03, 0xF7, 0x2D, 0x01});
  CHECK(read(regs(15), in, false).str() == "TI:3 DISCARD E C1");
  CHECK(read(regs(15), in, true).str() == "TI:3 E");
}

TEST_CASE("elements r6: Discard in a transaction") {
  SUBCASE("Transaction Start in the trace") {
    // TSTART, E, Commit 2 (both), N, Discard -> DISCARD TFAIL.
    const bytes in = stream({0x0A, 0xF7, 0x2D, 0x02, 0xF6, 0x00, 0x03});
    CHECK(read(regs(15), in, false).str() == "TI TSTART E C2 N DISCARD TFAIL");
    // The N is dropped as speculative; the committed E as part of the failed transaction.
    CHECK(read(regs(15), in, true).str() == "TI TSTART TFAIL");
  }
  SUBCASE("Transactional state from the Trace Info") {
    const bytes in = stream({0x01, 0x01, 0x40}, {0xF7, 0x2D, 0x01, 0x00, 0x03});
    CHECK(read(regs(15), in, false).str() == "TI E C1 DISCARD TFAIL");
    // D9.3.2.1: the Trace Info starts a transaction; E is held, then dropped.
    CHECK(read(regs(15), in, true).str() == "TI TFAIL");
  }
}

TEST_CASE("elements r6: Overflow in a transaction keeps the Overflow element") {
  // TSTART, E, Commit 2, Overflow -> DISCARD OVERFLOW TFAIL (D9.2.5.1).
  const bytes in = stream({0x0A, 0xF7, 0x2D, 0x02, 0x00, 0x05});
  CHECK(read(regs(15), in, false).str() == "TI TSTART E C2 DISCARD OVERFLOW TFAIL");
  const auto out = read(regs(15), in, true);
  CHECK(out.errors.empty());
  // The Overflow element says trace was lost (D2.6.2 I_RFQXZ); it is not execution of the
  // transaction (D2.7.3 discards "execution since the most recent Transaction Start
  // element"), so it survives the Transaction Failure right behind it (D9.4.4.1).
  CHECK(out.str() == "TI TSTART OVERFLOW TFAIL");
}

// ---------------------------------------------------------------------------------------------
// Rule 7: Trace Info with a nonzero SPEC (D9.3.2 R_JKLZY, D9.3.3.1 Align()).
// ---------------------------------------------------------------------------------------------
TEST_CASE("elements r7: commits first consume the unseen elements before the Trace Info") {
  pipeline p(regs(15));
  p.feed(async());
  CHECK(p.feed({0x01, 0x04, 0x03}) == "TI:3");  // SPEC 3
  CHECK(p.depth() == 3);
  CHECK(p.feed({0xF7, 0xF6}) == "E N");          // depth 5
  CHECK(p.stage2.speculative() == 5);            // 3 unseen + 2 queued
  // Commit 2: both go to unseen elements; nothing observed is committed.
  CHECK(p.feed({0x2D, 0x02}) == "C2");
  CHECK(p.depth() == 3);
  CHECK(p.resolved() == "");
  CHECK(p.stage2.speculative() == 3);
  // Commit 2: the last unseen one, then the Trace Info passes, then E.
  CHECK(p.feed({0x2D, 0x02}) == "C2");
  CHECK(p.resolved() == "TI:3 E");
  CHECK(p.feed({0x2D, 0x01}) == "C1");
  CHECK(p.resolved() == "TI:3 E N");
  CHECK(p.depth() == 0);
  CHECK(p.errors.empty());
}

TEST_CASE("elements r7: cancel with unseen elements cancels the youngest first") {
  // INTERPRETATION (resolver.hpp "more than the observed speculation: unseen elements"):
  // D9.3.4.1 tests !Aligned() before looking at the queue, which would spend a Cancel on the
  // unseen (oldest) elements first; D2.5.2 I_MRLGC says a Cancel cancels the youngest P0
  // elements, so the queued ones go first and only the excess reaches the unseen ones.
  SUBCASE("cancel within the observed elements") {
    // SPEC 2, E, N, Cancel 1 (the N), Commit 3 (2 unseen + E). depth 2+2-1 = 3, then 0.
    const bytes in = stream({0x01, 0x04, 0x02}, {0xF7, 0xF6, 0x2E, 0x01, 0x2D, 0x03});
    CHECK(read(regs(15), in, false).str() == "TI:2 E N X1 C3");
    CHECK(read(regs(15), in, true).str() == "TI:2 E");
  }
  SUBCASE("cancel reaching into the unseen elements") {
    // SPEC 2, E, Cancel 3: E and both unseen elements; the kept Trace Info is released.
    pipeline p(regs(15));
    p.feed(async());
    p.feed({0x01, 0x04, 0x02});
    CHECK(p.feed({0xF7, 0x2E, 0x03}) == "E X3");
    CHECK(p.depth() == 0);  // 2 + 1 - 3
    CHECK(p.stage2.speculative() == 0);
    CHECK(p.resolved() == "TI:2");
  }
}

TEST_CASE("elements r7: Trace Info SPEC at MAXSPEC") {
  // MAXSPEC 15, SPEC 15: the next atom makes 16 -> Commit(1), which goes to an unseen element.
  pipeline p(regs(15));
  p.feed(async());
  CHECK(p.feed({0x01, 0x04, 0x0F}) == "TI:15");
  CHECK(p.feed({0xF7}) == "E C1");
  CHECK(p.depth() == 15);
  CHECK(p.resolved() == "");
  CHECK(p.stage2.speculative() == 15);  // 14 unseen + E
}

TEST_CASE("elements r7: only the first Trace Info sets the unseen elements") {
  // D9.3.2.1: ResolutionQueue.Initialize() only while uninitialized. TI (0), E, then a Trace
  // Info with SPEC 1 (= the E): still one speculative element, not two.
  pipeline p(regs(15));
  p.feed(async());
  p.feed({0x01, 0x00});
  p.feed({0xF7});
  CHECK(p.feed({0x01, 0x04, 0x01}) == "TI:1");
  CHECK(p.depth() == 1);
  CHECK(p.stage2.speculative() == 1);
  CHECK(p.feed({0x2D, 0x01}) == "C1");
  CHECK(p.resolved() == "TI E TI:1");
}

// ---------------------------------------------------------------------------------------------
// Rule 8: exceptions (D9.2.13.2; D5.13-D5.25).
// ---------------------------------------------------------------------------------------------
TEST_CASE("elements r8: exception element sequences") {
  pipeline p(regs(15));
  p.feed(async());
  p.feed({0x01, 0x00});
  CHECK(p.feed({0x95, 0x10}) == "TA@40");
  // E=01 IRQ, short address 0x20 -> 0x80: the Exception element only.
  CHECK(p.feed({0x06, 0x1D, 0x95, 0x20}) == "EXC14@80");
  CHECK(p.s1.back().p0);
  CHECK(p.depth() == 1);
  // E=10 IRQ, 0x30 -> 0xc0: Target Address, then Exception (D5.14 E=0b10).
  // NOTE: in the extracted D9.2.13.2 the TargetAddressElement Emit sits inside the
  // "Long Address with Context" branch; D5.13-D5.19 list a Target Address element for every
  // E=0b10 form, which the implementation follows.
  CHECK(p.feed({0x06, 0x5C, 0x95, 0x30}) == "TA@c0 EXC14@c0");
  CHECK_FALSE(p.s1[p.s1.size() - 2].p0);
  CHECK(p.s1.back().p0);
  CHECK(p.depth() == 2);
  // E=10 with a 32-bit IS0 address with context (header 0x82): A[8:2] = 0x10, A[15:9] = 0,
  // A[23:16] = 0x10, A[31:24] = 0 -> 0x00100040; context byte 0x32: C=0 V=0 NS=1 SF=1 EL=2.
  // Context, Target Address, Exception.
  CHECK(p.feed({0x06, 0x5C, 0x82, 0x10, 0x00, 0x10, 0x00, 0x32}) ==
        "CTX TA@100040 EXC14@100040");
  {
    const element& ctx = p.s1[p.s1.size() - 3];
    CHECK(ctx.ctx.el == 2);
    CHECK(ctx.ctx.ns);
    CHECK(ctx.ctx.sf);
    CHECK_FALSE(ctx.p0);
  }
  CHECK(p.depth() == 3);
  // E=01 with the same form: A[8:2] = 0x20 -> 0x00100080; no Context, no Target Address.
  CHECK(p.feed({0x06, 0x1D, 0x82, 0x20, 0x00, 0x10, 0x00, 0x32}) == "EXC14@100080");
  CHECK(p.depth() == 4);
  // TYPE 0x18, E=01 (D5.24): Transaction Failure instead of the Exception; still counted.
  CHECK(p.feed({0x06, 0x31, 0x70}) == "TFAIL");
  CHECK(p.depth() == 5);
  // TYPE 0x18, E=10: Target Address (UNKNOWN), Transaction Failure.
  CHECK(p.feed({0x06, 0x70, 0x70}) == "TA@? TFAIL");
  CHECK(p.depth() == 6);
  // PE Reset E=01 / E=10, not in a transaction (D5.25).
  CHECK(p.feed({0x06, 0x01, 0x70}) == "EXC0@?");
  CHECK(p.feed({0x06, 0x40, 0x70}) == "TA@? EXC0@?");
  CHECK(p.depth() == 8);
  // In a transaction: E=01 PE Reset is just the Exception (D9.2.13.2 checks T only for E=10).
  CHECK(p.feed({0x0A}) == "TSTART");
  CHECK(p.feed({0x06, 0x01, 0x70}) == "EXC0@?");
  CHECK(p.stage1.in_transaction());
  CHECK(p.depth() == 10);
  // E=10 PE Reset in a transaction: Target Address, Transaction Failure, Exception; one P0
  // (the Exception), depth + 1.
  CHECK(p.feed({0x06, 0x40, 0x70}) == "TA@? TFAIL EXC0@?");
  CHECK(p.depth() == 11);
  CHECK_FALSE(p.s1[p.s1.size() - 2].p0);
  CHECK(p.s1.back().p0);
  // NOTE: D9.2.13.2 does not clear DSTATE.IA.T after emitting a Transaction Failure; the
  // implementation does, as D2.7.1 I_QMFVH ends the transaction at a Transaction Failure
  // element (otherwise a later Discard would emit a second Transaction Failure).
  CHECK_FALSE(p.stage1.in_transaction());
  CHECK(p.errors.empty());
}

TEST_CASE("elements r8: exceptions at MAXSPEC 0 are followed by their implied commit") {
  // E=01: Exception, Commit(1); E=10: Target Address, Exception, Commit(1) (UpdateSpecDepth is
  // the last step of D9.2.13.2). TYPE 0x18 E=01: Transaction Failure, Commit(1).
  const bytes in = stream({0x06, 0x1D, 0x95, 0x10, 0x06, 0x5C, 0x95, 0x20, 0x06, 0x31, 0x70});
  const auto s1 = read(regs(0), in, false);
  CHECK(s1.errors.empty());
  CHECK(s1.str() == "TI EXC14@40 C1 TA@80 EXC14@80 C1 TFAIL C1");
  CHECK(read(regs(0), in, true).str() == "TI EXC14@40 TA@80 EXC14@80 TFAIL");
}

TEST_CASE("elements r8: PE Reset in a transaction, resolved") {
  // MAXSPEC 15: TSTART (P0), E, PE Reset E=10 (TA, TFAIL, EXC; one P0), Commit 3.
  const bytes in = stream({0x0A, 0xF7, 0x06, 0x40, 0x70, 0x2D, 0x03});
  CHECK(read(regs(15), in, false).str() == "TI TSTART E TA@? TFAIL EXC0@? C3");
  // Commit 3 = TSTART, E, EXC. TSTART opens the transaction; E and the Target Address
  // (emitted before the Transaction Failure, so inside the transaction) are held and dropped
  // by the TFAIL; the PE Reset exception follows outside the transaction.
  CHECK(read(regs(15), in, true).str() == "TI TSTART TFAIL EXC0@?");
}

// ---------------------------------------------------------------------------------------------
// element_reader = decoder + element_decoder + resolver.
// ---------------------------------------------------------------------------------------------
TEST_CASE("elements reader: element_reader matches the stages run by hand") {
  const bytes in = stream({0xF7, 0x95, 0x10, 0x0A, 0xF6, 0x71, 0x2F, 0x01, 0xDB, 0x0B,
                           0x06, 0x5C, 0x95, 0x20, 0x2D, 0x05});
  // E, TA@40, TSTART, N, EV0, Cancel 1 + M (N goes, E is flipped, TA@40 discarded: D6.9.14),
  // E E, TCOMMIT, TA@80 EXC14@80, Commit 5 = E(flipped), TSTART, E, E, EXC.
  const char* s1 = "TI E TA@40 TSTART N EV0 X1 M E E TCOMMIT TA@80 EXC14@80 C5";
  const char* out = "TI N TSTART EV0 E E TCOMMIT TA@80 EXC14@80";
  pipeline p(regs(15));
  p.feed(in);
  CHECK(tokens(p.s1) == s1);
  CHECK(p.resolved() == out);
  const auto a = read(regs(15), in, false);
  const auto b = read(regs(15), in, true);
  CHECK(a.errors.empty());
  CHECK(b.errors.empty());
  CHECK(a.str() == s1);
  CHECK(b.str() == out);
  REQUIRE(a.elements.size() == p.s1.size());
  for (std::size_t i = 0; i < a.elements.size(); ++i) CHECK(a.elements[i] == p.s1[i]);
  REQUIRE(b.elements.size() == p.out.size());
  for (std::size_t i = 0; i < b.elements.size(); ++i) CHECK(b.elements[i] == p.out[i]);
}

// The element reader hands packets to process_non_atom(), which leaves atom packets (those
// that still come as packets) to the out-of-line path; process() takes them inline. Both must
// emit the same elements and leave the same state, for every packet kind the decoder makes.
TEST_CASE("elements: process_non_atom emits what process emits, packet for packet") {
  std::mt19937 rng(7);
  std::size_t packets = 0, atom_packets = 0;
  for (const registers& r : {regs(0), regs(4), regs(4, true), regs(255, false, true)}) {
    for (const bool runs : {false, true}) {
      // Runs of random bytes, each after an A-Sync and a Trace Info (the decoder resumes at
      // the next A-Sync after an error): every packet it makes goes through both entry points.
      bytes in;
      for (int run = 0; run < 500; ++run) {
        const bytes head = stream({});
        in.insert(in.end(), head.begin(), head.end());
        for (int i = 0; i < 48; ++i) in.push_back(static_cast<std::uint8_t>(rng()));
      }
      decoder<> dec(r);
      element_decoder<> inline_path(r), apart(r);
      inline_path.atom_runs(runs);
      apart.atom_runs(runs);
      dec.feed(in.data(), in.size());
      dec.finish();
      packet p{};
      std::vector<element> a, b;
      for (decode_status s; (s = dec.next(p)) == decode_status::packet || s == decode_status::error;) {
        if (s != decode_status::packet) continue;
        a.clear();
        b.clear();
        inline_path.process(p, [&](const element& e) { a.push_back(e); });
        apart.process_non_atom(p, [&](const element& e) { b.push_back(e); });
        ++packets;
        if (p.kind >= packet_kind::atom_f1 && p.kind <= packet_kind::atom_f6) ++atom_packets;
        REQUIRE(a == b);
        REQUIRE(inline_path.spec_depth() == apart.spec_depth());
        REQUIRE(inline_path.in_transaction() == apart.in_transaction());
      }
    }
  }
  CHECK(atom_packets > 1000);
  CHECK(packets > 5000);
}

// ---------------------------------------------------------------------------------------------
// Rule 9 (issue 14): after a decoding error, TSTATE against the traced stream, Discard in a
// transaction, and the bounds of the queues.
// ---------------------------------------------------------------------------------------------

namespace {
bytes operator+(bytes a, const bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
std::string errors_of(const read_result& r) {
  std::string s;
  for (const diagnostic& d : r.errors) {
    if (!s.empty()) s += ' ';
    s += std::string(error_name(d.code)) + "@" + std::to_string(d.offset);
  }
  return s;
}
read_result read_runs(const registers& r, const bytes& b, bool resolve = true) {
  read_result res;
  element_reader<> reader(r);
  reader.atom_runs(true);
  reader.decode(
      b.data(), b.size(), [&](const element& e) { res.elements.push_back(e); },
      [&](const diagnostic& d) { res.errors.push_back(d); }, resolve);
  return res;
}
}  // namespace

// element_reader hands Commit packets and Cancel format 1 packets without a mispredict straight
// to the resolver (commit_now, cancel_now: no element built, and a Commit that takes the one
// queued atom run without commit()'s loop). The stages run by hand build every element and
// push() it: both must commit the same elements, on streams dense in speculation.
TEST_CASE("elements reader: Commits and Cancels without their elements match push()") {
  std::mt19937 rng(11);
  const std::vector<bytes> pieces = {
      {0xF7}, {0xF6}, {0xDB}, {0xD9}, {0xFD}, {0xFA}, {0xDC}, {0xDF}, {0xC2}, {0xC0},  // atoms
      {0x2D, 0x01}, {0x2D, 0x02}, {0x2D, 0x03}, {0x2D, 0x06}, {0x2D, 0x09},           // Commit
      {0x2E, 0x01}, {0x2E, 0x02}, {0x2E, 0x04}, {0x2F, 0x01}, {0x2F, 0x03},           // Cancel F1
      {0x30}, {0x31}, {0x34}, {0x39},                        // Mispredict, Cancel F2/F3
      {0x95, 0x10}, {0x95, 0x24}, {0x71}, {0x72},            // address, events
      {0x0A}, {0x0B}, {0x00, 0x03},                          // TSTART, TCOMMIT, Discard
  };
  std::size_t commits = 0, compared = 0;
  for (const std::uint32_t maxspec : {4u, 15u, 255u}) {
    for (int trial = 0; trial < 300; ++trial) {
      bytes in = stream({});
      const int n = 8 + static_cast<int>(rng() % 120);
      for (int i = 0; i < n; ++i) {
        const bytes& piece = pieces[rng() % pieces.size()];
        if (piece[0] == 0x2D) ++commits;
        in.insert(in.end(), piece.begin(), piece.end());
      }
      CAPTURE(maxspec);
      CAPTURE(trial);
      for (const bool runs : {false, true}) {
        pipeline p(regs(maxspec), runs);
        p.feed(in);
        const read_result got = runs ? read_runs(regs(maxspec), in) : read(regs(maxspec), in, true);
        REQUIRE(p.errors.empty());
        REQUIRE(got.errors.empty());
        REQUIRE(got.elements.size() == p.out.size());
        for (std::size_t i = 0; i < got.elements.size(); ++i) REQUIRE(got.elements[i] == p.out[i]);
        ++compared;
      }
    }
  }
  CHECK(commits > 5000);
  CHECK(compared == 1800);
}

// A sink with a member atoms(offset, bits, count) gets the atom packets the decode loop hands
// over whole there under MAXSPEC 0 outside a transaction (flow_decoder's sink does), and every
// other atom as an Atom element: what it receives, with each atoms() call taken as the Atom run
// the reader would have built, must be the elements a plain sink gets, in order, with the same
// errors. Pieces in random order (transactions among them, so both paths run), and random
// bytes, which cut the stream with errors and restarts. Under MAXSPEC > 0, and without
// resolution, the hook is never called. A sink that also has atom_window(offset, word) gets
// two to eight atom packets in a row there (their header bytes, zero bytes above the last),
// taken here as that many runs: each window's bytes must be the input's at its offset, the
// reader's last packet the window's last, and every length from 2 to 8 must come. A sink that
// also has target_address(offset, address, isa) gets the Target Address packets there, taken
// here as their Target Address elements; Source Address packets (the same payload forms) must
// still come as elements. One that also has cycle_count(offset, cycles) gets the Cycle Count
// packets of formats 2 and 3 under COMMOPT 1 there (D5.32, D5.34), taken here as their Cycle
// Count elements; format 1 must still come as an element.
TEST_CASE("elements reader: a sink's atoms() gets the atom runs a plain sink gets as elements") {
  struct atoms_sink {
    std::vector<element>* out;
    std::size_t* calls;
    void operator()(const element& e) const { out->push_back(e); }
    void atoms(std::uint64_t offset, std::uint32_t bits, unsigned count) const {
      out->push_back(element{.offset = offset, .count = count, .atom_bits = bits, .kind = K::atom, .p0 = true});
      ++*calls;
    }
  };
  struct window_sink : atoms_sink {
    std::size_t* windows;
    const bytes* in;
    std::size_t* lengths;  // [9]: windows of each length
    std::size_t* wrong;    // windows whose bytes are not the input's atom headers at offset
    const element_reader<>* reader;  // its last packet: the window's last
    void atom_window(std::uint64_t offset, std::uint64_t word) const {
      unsigned n = 0;
      while (n < 8 && (word >> (8 * n) & 0xff) != 0) ++n;
      bool same = n >= 2 && (n == 8 || word >> (8 * n) == 0) && offset + n <= in->size() &&
                  reader->last_packet_offset() == offset + n - 1;
      for (unsigned i = 0; same && i < n; ++i)
        same = (*in)[offset + i] == (word >> (8 * i) & 0xff) && (*in)[offset + i] >= 0xC0;  // D9.2.10
      *wrong += !same;
      ++lengths[n];
      tracecodec::ete::detail::each_atom_packet(
          offset, word, [&](std::uint64_t at, std::uint32_t bits, unsigned k) { atoms(at, bits, k); });
      ++*windows;
    }
  };
  struct target_sink : window_sink {
    std::size_t* targets;
    void target_address(std::uint64_t offset, std::uint64_t address, tracecodec::ete::isa sub_isa) const {
      out->push_back(element{.offset = offset, .address = address, .kind = K::target_address, .sub_isa = sub_isa});
      ++*targets;
    }
  };
  struct cycle_sink : target_sink {
    std::size_t* cycle_counts;
    void cycle_count(std::uint64_t offset, std::uint32_t cycles) const {
      out->push_back(element{.offset = offset, .cycles = cycles, .kind = K::cycle_count});
      ++*cycle_counts;
    }
  };
  std::mt19937 rng(19);
  const std::vector<bytes> pieces = {
      {0xF7}, {0xF6}, {0xDB}, {0xD9}, {0xFD}, {0xFA}, {0xDC}, {0xDF}, {0xC2}, {0xC0},  // atoms
      {0xF7, 0xF6, 0xDB, 0xD9, 0xFD, 0xFA, 0xDC, 0xDF, 0xC2, 0xE5, 0xD5, 0xF5},     // twelve
      {0x30}, {0x95, 0x10}, {0x95, 0x24}, {0x71}, {0x72},  // Mispredict, address, events
      {0x96, 0x81, 0x02}, {0x90}, {0x9A, 1, 2, 3, 4},      // short IS1, exact, 32-bit IS0 addresses
      {0xB4, 0x22},                                        // Source Address, short IS0 (D5.60-D5.66)
      {0x0A}, {0x0B}, {0x00, 0x03},                        // TSTART, TCOMMIT, Discard
  };
  // Only in the configuration with COMMOPT 1 and cycle counting: in the others these headers
  // are other packets or reserved.
  const std::vector<bytes> cycle_pieces = {
      {0x10}, {0x1F}, {0x0C, 0x35}, {0x0D, 0xF2},  // Cycle Count F3_1, F2_1 (D5.34, D5.32)
      {0x0E, 0x85, 0x03}, {0x0F},                  // F1_1, F1_1 unknown: elements, not cycle_count()
  };
  std::size_t hooked = 0, windows = 0, atoms_in_tx = 0, errors = 0, compared = 0;
  std::size_t lengths[9] = {}, wrong_windows = 0, targets = 0, cycle_counts = 0;
  // The last: COMMOPT 1 with cycle counting (TRCCONFIGR.CCI), where 0x0C-0x1F are Cycle Counts.
  const registers cci{0x2801cea1u, 0xd0001088u, 0, 0x47705a13u, 0x11u};
  for (const registers& r : {regs(0), regs(0, true), regs(0, false, true), regs(4), regs(15, true), cci}) {
    const bool unspeculated = r.trcidr8 == 0;
    // With cycle counting, a Trace Info with INFO.CC_ENABLED and CYCT 22 (D5.7): the counts
    // are the threshold plus the packets' values.
    const bool cycles = (r.trcconfigr >> 4 & 1u) != 0;
    auto start = [&](std::initializer_list<std::uint8_t> rest) {
      return cycles ? stream({0x01, 0x09, 0x01, 0x16}, rest) : stream(rest);
    };
    for (const bool resolve : {true, false}) {
      for (int trial = 0; trial < 200; ++trial) {
        bytes in = start({});
        const int n = 8 + static_cast<int>(rng() % 120);
        for (int i = 0; i < n; ++i) {
          const bytes& piece = cycles && rng() % 4 == 0 ? cycle_pieces[rng() % cycle_pieces.size()]
                                                        : pieces[rng() % pieces.size()];
          in.insert(in.end(), piece.begin(), piece.end());
        }
        if (trial % 4 == 3)  // random bytes, then another stream
          for (int i = 0; i < 24; ++i) in.push_back(static_cast<std::uint8_t>(rng()));
        in = in + start({0xF7, 0x0A, 0xDB, 0x0B, 0xF6});
        CAPTURE(trial);
        CAPTURE(resolve);
        const read_result plain = read_runs(r, in, resolve);
        read_result got, got_w;
        std::size_t calls = 0, calls_w = 0, windows_here = 0;
        element_reader<> reader(r);
        reader.atom_runs(true);
        reader.decode(in.data(), in.size(), atoms_sink{&got.elements, &calls},
                      [&](const diagnostic& d) { got.errors.push_back(d); }, resolve);
        element_reader<> reader_w(r);
        reader_w.atom_runs(true);
        reader_w.decode(in.data(), in.size(),
                        window_sink{{&got_w.elements, &calls_w}, &windows_here, &in, lengths, &wrong_windows, &reader_w},
                        [&](const diagnostic& d) { got_w.errors.push_back(d); }, resolve);
        REQUIRE(errors_of(got) == errors_of(plain));
        REQUIRE(got.elements.size() == plain.elements.size());
        for (std::size_t i = 0; i < got.elements.size(); ++i) REQUIRE(got.elements[i] == plain.elements[i]);
        REQUIRE(errors_of(got_w) == errors_of(plain));
        REQUIRE(got_w.elements.size() == plain.elements.size());
        for (std::size_t i = 0; i < got_w.elements.size(); ++i) REQUIRE(got_w.elements[i] == plain.elements[i]);
        read_result got_t;
        std::size_t calls_t = 0, windows_t = 0, targets_here = 0;
        element_reader<> reader_t(r);
        reader_t.atom_runs(true);
        reader_t.decode(in.data(), in.size(),
                        target_sink{{{&got_t.elements, &calls_t}, &windows_t, &in, lengths, &wrong_windows, &reader_t},
                                    &targets_here},
                        [&](const diagnostic& d) { got_t.errors.push_back(d); }, resolve);
        REQUIRE(errors_of(got_t) == errors_of(plain));
        REQUIRE(got_t.elements.size() == plain.elements.size());
        for (std::size_t i = 0; i < got_t.elements.size(); ++i) REQUIRE(got_t.elements[i] == plain.elements[i]);
        read_result got_c;
        std::size_t calls_c = 0, windows_c = 0, targets_c = 0, cycles_here = 0;
        element_reader<> reader_c(r);
        reader_c.atom_runs(true);
        reader_c.decode(in.data(), in.size(),
                        cycle_sink{{{{&got_c.elements, &calls_c}, &windows_c, &in, lengths, &wrong_windows, &reader_c},
                                    &targets_c},
                                   &cycles_here},
                        [&](const diagnostic& d) { got_c.errors.push_back(d); }, resolve);
        REQUIRE(errors_of(got_c) == errors_of(plain));
        REQUIRE(got_c.elements.size() == plain.elements.size());
        for (std::size_t i = 0; i < got_c.elements.size(); ++i) REQUIRE(got_c.elements[i] == plain.elements[i]);
        targets += targets_here;
        cycle_counts += cycles_here;
        windows += windows_here;
        if (!(unspeculated && resolve)) {
          REQUIRE(calls == 0);
          REQUIRE(calls_w == 0);
          REQUIRE(calls_t == 0);
          REQUIRE(targets_here == 0);
          REQUIRE(cycles_here == 0);
          continue;
        }
        // The Atom elements of transactions (committed or failed), which only operator() gets.
        bool in_tx = false;
        for (const element& e : plain.elements) {
          if (e.kind == K::transaction_start) in_tx = true;
          if (e.kind == K::transaction_commit || e.kind == K::transaction_failure) in_tx = false;
          atoms_in_tx += in_tx && e.kind == K::atom;
        }
        hooked += calls;
        errors += plain.errors.size();
        ++compared;
      }
    }
  }
  CHECK(compared == 800);
  if (tracecodec::detail::compact) {
    CHECK(hooked == 0);  // the compact form's decoder hands every packet over as a packet
    CHECK(windows == 0);
    CHECK(targets == 0);
    CHECK(cycle_counts == 0);
  } else {
    CHECK(hooked > 10000);  // atoms() calls
    CHECK(windows > 1000);  // atom_window() calls
    CHECK(targets > 1000);  // target_address() calls
    CHECK(cycle_counts > 500);  // cycle_count() calls (the COMMOPT 1 configuration only)
    for (unsigned n = 2; n <= 8; ++n) {
      CAPTURE(n);
      CHECK(lengths[n] > 50);
    }
  }
  CHECK(lengths[0] + lengths[1] == 0);
  CHECK(wrong_windows == 0);
  CHECK(atoms_in_tx > 1000);  // Atom elements inside transactions, through operator()
  CHECK(errors > 50);
}

TEST_CASE("elements r9: after a decode error every layer starts afresh at the next A-Sync") {
  // Issue 14 D1, as reported (MAXSPEC 0, COMMOPT 1: 0x2D is reserved): Trace Info, Trace On,
  // Transaction Start (12-15), 0x2D at 16; A-Sync at 17, Trace Info 29, Trace On 31, Address
  // 32-bit IS0 at 32 (00 08 01 00: 0x11000), Atom E at 37.
  const registers r{0x2801cea1, 0xd0001088, 0, 0x47705a13, 0x1};
  const bytes in = stream({0x04, 0x0A, 0x2D}) + async() +
                   bytes{0x01, 0x00, 0x04, 0x9A, 0x00, 0x08, 0x01, 0x00, 0xF7};
  for (const bool runs : {false, true}) {
    CAPTURE(runs);
    const read_result got = runs ? read_runs(r, in) : read(r, in, true);
    CHECK(errors_of(got) == "reserved_header@16");
    // The transaction cut by the error ends as one the trace unit lost (R_NMWPJ: Transaction
    // Failure, outcome UNKNOWN) at the error; from the A-Sync on, what the bytes say.
    CHECK(got.str() == (runs ? "TI ON TSTART TFAIL TI ON TA@11000 [E]" : "TI ON TSTART TFAIL TI ON TA@11000 E"));
    REQUIRE(got.elements.size() == 8);
    CHECK(got.elements[3].offset == 16);
    CHECK(got.elements[4].offset == 29);
  }

  // With speculation (MAXSPEC 15, COMMTRANS 0): the first session's Trace Info has 2 unseen
  // P0 elements; Commit 3 commits them and the Transaction Start; E stays speculative; 0x05 is
  // reserved. The second session's Trace Info (SPEC 1) must set the unseen elements again
  // (the resolver restarted uninitialized): Commit 2 commits the unseen one and E.
  const bytes spec = stream({0x01, 0x04, 0x02}, {0x04, 0x0A, 0x2D, 0x03, 0xF7, 0x05}) + async() +
                     bytes{0x01, 0x04, 0x01, 0x04, 0xF7, 0x2D, 0x02};
  for (const bool runs : {false, true}) {
    CAPTURE(runs);
    const read_result got = runs ? read_runs(regs(15), spec) : read(regs(15), spec, true);
    CHECK(errors_of(got) == "reserved_header@20");
    CHECK(got.str() == (runs ? "TI:2 ON TSTART TFAIL TI:1 ON [E]" : "TI:2 ON TSTART TFAIL TI:1 ON E"));
  }
}

TEST_CASE("elements r9: a Trace Info whose TSTATE contradicts the traced stream restates it") {
  // D6.9.1 R_WMKVM/R_WJJKK: TSTATE says whether the trace unit has a traced transaction open.
  // (1) A transaction whose Transaction Commit was lost without a decode error (here simply
  // absent): the second Trace Info (TSTATE 0) closes it, its elements passed on before it.
  const bytes lost_commit = stream({0x04, 0x0A, 0xF7}) + async() + bytes{0x01, 0x00, 0x04, 0xF6};
  CHECK(read(regs(0), lost_commit, true).str() == "TI ON TSTART E TI ON N");
  CHECK(read_runs(regs(0), lost_commit).str() == "TI ON TSTART [E] TI ON [N]");
  CHECK(read(regs(0), lost_commit, true).errors.empty());

  // (2) A lost Transaction Start: a later Trace Info with TSTATE 1 (INFO 0x40) opens the
  // transaction (D9.3.2.1 StartTransaction()), so its Transaction Failure drops N.
  const bytes lost_start = stream({0x04, 0xF7}) + async() +
                           bytes{0x01, 0x01, 0x40, 0xF6, 0x06, 0x31, 0x70};
  CHECK(read(regs(0), lost_start, true).str() == "TI ON E TI TFAIL");

  // (3) Legal speculative trace that must not close anything (MAXSPEC 15, COMMTRANS 0):
  // TSTART, Commit 1 (the transaction is open), E, Transaction Commit (speculative), Trace
  // Info with TSTATE 0 (after the Commit: no contradiction), Cancel 1 (removes E and the
  // Transaction Commit after it; keeps the Trace Info, Table D9.2), N, Commit 1, Transaction
  // Failure (P0), Commit 1: the transaction was still open, N is dropped.
  const bytes legal = stream({0x04, 0x0A, 0x2D, 0x01, 0xF7, 0x0B, 0x01, 0x00, 0x2E, 0x01, 0xF6,
                              0x2D, 0x01, 0x06, 0x31, 0x70, 0x2D, 0x01});
  const read_result got = read(regs(15), legal, true);
  CHECK(got.errors.empty());
  CHECK(got.str() == "TI ON TSTART TI TFAIL");
  CHECK(read_runs(regs(15), legal).str() == "TI ON TSTART TI TFAIL");

  // (4) A Trace Info with TSTATE 1 inside the transaction it restates is held in stream order
  // with the transaction's elements, not passed on ahead of them.
  const bytes restated = stream({0x04, 0x0A, 0xF7, 0x01, 0x01, 0x40, 0xF6, 0x0B});
  CHECK(read(regs(0), restated, true).str() == "TI ON TSTART E TI N TCOMMIT");
}

TEST_CASE("elements r9: Discard ends the transaction (D9.3.5.1 EndTransaction)") {
  // MAXSPEC 15: TSTART, Commit 1 (transaction open), E, Transaction Commit (both speculative),
  // Discard: E and the Transaction Commit go; ProcessDiscard() ends the transaction, so the E
  // traced after it is not held for an outcome that will never come.
  const bytes in = stream({0x04, 0x0A, 0x2D, 0x01, 0xF7, 0x0B, 0x00, 0x03, 0xF7, 0x2D, 0x01});
  CHECK(read(regs(15), in, false).str() == "TI ON TSTART C1 E TCOMMIT DISCARD E C1");
  CHECK(read(regs(15), in, true).str() == "TI ON TSTART E");
  CHECK(read_runs(regs(15), in).str() == "TI ON TSTART [E]");
}

TEST_CASE("elements r9: MAXSPEC beyond what the queue resolves is refused at configuration") {
  // MAXSPEC is IMPLEMENTATION DEFINED and 32 bits wide (D6.7 I_RKYCD; SPEC fields are 32 bits,
  // D5.7), so every value is a valid configuration and the packet decoder takes it; the
  // resolver must hold MAXSPEC uncommitted P0 elements (R_GLQPL) without a heap, so a reader
  // refuses what its Capacity cannot hold.
  CHECK(max_resolved_maxspec(resolution_capacity(255)) >= 255);
  CHECK(max_resolved_maxspec(2048) == 487);
  CHECK(resolution_capacity(max_resolved_maxspec(2048)) == 2048);
  CHECK(validate(regs(0xffffffffu)) == error_code::ok);
  CHECK(element_reader<>(regs(487)).status() == error_code::ok);
  CHECK(element_reader<>(regs(488)).status() == error_code::unsupported_config);
  CHECK(element_reader<runtime_config, 8192>(regs(2023)).status() == error_code::ok);
  CHECK(element_reader<>(registers{}).status() == error_code::invalid_config);

  // Issue 14 D5: 2000 atom bytes with MAXSPEC 0xffffffff. Resolution reports once and decodes
  // nothing, in both atom forms; stage 1 decodes every atom.
  bytes in = stream({});
  for (int i = 0; i < 2000; ++i) in.push_back(0xF7);
  for (const bool runs : {false, true}) {
    CAPTURE(runs);
    auto reader = std::make_unique<element_reader<>>(regs(0xffffffffu));
    reader->atom_runs(runs);
    std::vector<element> out;
    std::vector<diagnostic> errors;
    for (int k = 0; k < 2; ++k)  // a second call does not report again
      reader->decode(in.data(), in.size(), [&](const element& e) { out.push_back(e); },
                     [&](const diagnostic& d) { errors.push_back(d); });
    CHECK(out.empty());
    REQUIRE(errors.size() == 1);
    CHECK(errors[0] == diagnostic{error_code::unsupported_config, 0, 0});
  }
  const read_result s1 = read(regs(0xffffffffu), in, false);
  CHECK(s1.errors.empty());
  CHECK(s1.elements.size() == 2001);  // Trace Info and 2000 atoms, no implied commits
}

namespace {
// Resolved elements of `in` with a small queue (MAXSPEC 7: 128 places, 96 usable), one Atom
// element per atom and atom runs expanded.
constexpr registers small_queue_regs{0x0801cea1u, 0xd0001088u, 7, 0x47705a13u, 0x1u};
static_assert(max_resolved_maxspec(128) == 7);
template <bool Runs>
read_result read_small(const bytes& in) {
  read_result res;
  auto reader = std::make_unique<element_reader<fixed_config<small_queue_regs>, 128>>();
  reader->atom_runs(Runs);
  reader->decode(
      in.data(), in.size(), [&](const element& e) { res.elements.push_back(e); },
      [&](const diagnostic& d) { res.errors.push_back(d); });
  if (Runs) res.elements = test::expand_atom_runs(res.elements);
  return res;
}
}  // namespace

TEST_CASE("elements r9: an overflowing queue is reported once per episode, atom runs agree") {
  // 7 atoms in one packet at 14 (Atom F6 0xC3: six E then E), then 150 Events from 15: with
  // the atoms, 89 Events fill the 96 places; the 90th (at 104) overflows and the oldest
  // elements are committed early, reported once; Commit 7 drains the queue; the same again
  // from 167: a second report at 168 + 89.
  bytes burst{0xC3};
  for (int i = 0; i < 150; ++i) burst.push_back(0x71);
  burst.push_back(0x2D);
  burst.push_back(0x07);
  const bytes in = stream({}) + burst + burst;
  const read_result single = read_small<false>(in), runs = read_small<true>(in);
  CHECK(errors_of(single) == "resolution_overflow@104 resolution_overflow@257");
  CHECK(errors_of(runs) == errors_of(single));
  CHECK(runs.str() == single.str());
  // Every element is passed on once: 1 Trace Info, 14 atoms, 300 Events.
  CHECK(single.elements.size() == 315);

  // Random packets (atoms of every format, Events, Commits, Cancels, Mispredicts, Timestamps)
  // into the small queue: whatever overflows, both forms commit the same.
  std::mt19937 rng(14);
  std::size_t overflows = 0;
  for (int round = 0; round < 300; ++round) {
    bytes t = stream({});
    std::uint32_t depth = 0;
    for (int i = 0; i < 200; ++i) {
      const unsigned r = rng() % 100;
      if (r < 45) {
        const std::uint8_t atoms[] = {0xF6, 0xF7, 0xD9, 0xFB, 0xC0, 0xC5, 0xE3, 0xD3, 0xD5};
        t.push_back(atoms[rng() % sizeof atoms]);
        depth = 7;  // (at most MAXSPEC after the implied commits)
      } else if (r < 80) {  // a burst of Events: they wait behind the uncommitted atoms
        for (unsigned k = rng() % 120; k > 0; --k) t.push_back(static_cast<std::uint8_t>(0x71 + rng() % 4));
      } else if (r < 88 && depth) {
        t.push_back(0x2D);
        t.push_back(static_cast<std::uint8_t>(1 + rng() % depth));
        depth = 0;
      } else if (r < 94 && depth) {
        t.push_back(0x2E);
        t.push_back(static_cast<std::uint8_t>(1 + rng() % depth));
        depth = 0;
      } else if (r < 97) {
        t.push_back(0x30);  // Mispredict
      } else {
        t.push_back(0x02);  // Timestamp
        t.push_back(static_cast<std::uint8_t>(rng() & 0x7f));
      }
    }
    const read_result a = read_small<false>(t), b = read_small<true>(t);
    CAPTURE(round);
    CHECK(errors_of(a) == errors_of(b));
    CHECK(a.elements == b.elements);
    overflows += a.errors.size();
  }
  CHECK(overflows > 100);  // the case this test is about happened
}

TEST_CASE("elements r9: a transaction longer than its queue is reported once, atom runs agree") {
  // MAXSPEC 0: Transaction Start, 300 atom packets of 1-8 atoms (more than the 1024 places of
  // the transaction queue), Transaction Commit.
  bytes in = stream({0x04, 0x0A});
  std::mt19937 rng(7);
  const std::uint8_t packets[] = {0xF7, 0xDB, 0xFF, 0xDF, 0xC0, 0xC5};  // 1 to 9 atoms
  for (int i = 0; i < 400; ++i) in.push_back(packets[rng() % 6]);
  in.push_back(0x0B);
  std::size_t atoms = 0;
  for (const packet& p : test::decode_all(regs(0), in).packets) atoms += p.atom_count;
  REQUIRE(atoms > 1100);
  const read_result single = read(regs(0), in, true), runs = read_runs(regs(0), in);
  REQUIRE(single.errors.size() == 1);
  CHECK(single.errors[0].code == error_code::resolution_overflow);
  CHECK(errors_of(runs) == errors_of(single));
  CHECK(test::expand_atom_runs(runs.elements) == single.elements);
  CHECK(single.elements.size() == 4 + atoms);  // TI ON TSTART, every atom, TCOMMIT
}
