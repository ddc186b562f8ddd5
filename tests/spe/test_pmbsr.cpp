// SPDX-License-Identifier: Apache-2.0
// PMBSR_EL1 field by field, against spe-PMBSR_EL1-register.txt.
#include <doctest/doctest.h>

#include <tracecodec/spe/format.hpp>
#include <tracecodec/spe/pmbsr.hpp>

#include <cstdint>
#include <string>

#include "../brbe/random.hpp"

using namespace tracecodec::spe;

namespace {

struct position {
  const char* name;
  unsigned lo;
  unsigned width;
};
// EC [31:26], DL [19], EA [18], S [17], COLL [16], MSS [15:0]; everything else RES0.
constexpr position fields[] = {
    {"EC", 26, 6}, {"DL", 19, 1}, {"EA", 18, 1}, {"S", 17, 1}, {"COLL", 16, 1}, {"MSS", 0, 16},
};

std::uint64_t field_of(const pmbsr& r, const std::string& n) {
  if (n == "EC") return r.ec;
  if (n == "DL") return r.dl;
  if (n == "EA") return r.ea;
  if (n == "S") return r.s;
  if (n == "COLL") return r.coll;
  return r.mss;
}

std::uint64_t res0_from_table() {
  std::uint64_t used = 0;
  for (const position& p : fields)
    for (unsigned i = 0; i < p.width; ++i) used |= 1ull << (p.lo + i);
  return ~used;
}

}  // namespace

TEST_CASE("PMBSR: each bit lands in the field the register description gives it") {
  const std::uint64_t res0 = res0_from_table();
  CHECK(res0 == 0xffffffff03f00000ull);  // [63:32], [25:20]
  for (unsigned bit = 0; bit < 64; ++bit) {
    CAPTURE(bit);
    const pmbsr r = decode_pmbsr(1ull << bit);
    for (const position& p : fields) {
      const bool inside = bit >= p.lo && bit < p.lo + p.width;
      CHECK(field_of(r, p.name) == (inside ? 1ull << (bit - p.lo) : 0));
    }
    CHECK(r.res0 == (((res0 >> bit) & 1) ? 1ull << bit : 0));
  }
}

TEST_CASE("PMBSR: every EC the register names, and every other code reserved") {
  for (unsigned ec = 0; ec < 64; ++ec) {
    CAPTURE(ec);
    const pmbsr r = decode_pmbsr(std::uint64_t{ec} << 26);
    const std::string meaning = exception_class_meaning(r.event());
    switch (ec) {
      case 0b000000:
        CHECK(r.event() == exception_class::other_buffer_management_event);
        CHECK(r.syndrome() == mss_format::bsc);
        CHECK(meaning == "Other buffer management event");
        break;
      case 0b100100:
        CHECK(r.event() == exception_class::stage1_data_abort);
        CHECK(r.syndrome() == mss_format::fsc);
        CHECK(meaning == "Stage 1 Data Abort on write to Profiling Buffer");
        break;
      case 0b100101:
        CHECK(r.event() == exception_class::stage2_data_abort);
        CHECK(r.syndrome() == mss_format::fsc);
        CHECK(meaning == "Stage 2 Data Abort on write to Profiling Buffer");
        break;
      default:
        CHECK(r.event() == exception_class::reserved);
        CHECK(r.syndrome() == mss_format::unknown);
        CHECK(meaning == "reserved");
    }
  }
}

TEST_CASE("PMBSR: BSC codes for the other buffer management event") {
  CHECK(decode_pmbsr(0x0).bsc() == buffer_status::not_filled);
  CHECK(decode_pmbsr(0x1).bsc() == buffer_status::filled);
  CHECK(std::string(buffer_status_meaning(buffer_status::not_filled)) == "Buffer not filled");
  CHECK(std::string(buffer_status_meaning(buffer_status::filled)) == "Buffer filled");
  for (unsigned bsc = 2; bsc < 64; ++bsc) {
    CAPTURE(bsc);
    CHECK(decode_pmbsr(bsc).bsc() == buffer_status::reserved);
  }
  // For a Data Abort, MSS is an FSC, not a BSC: 0b000001 is Address Size fault level 1.
  const pmbsr abort = decode_pmbsr(0x24ull << 26 | 0x1);
  CHECK(abort.bsc() == buffer_status::reserved);
  CHECK(abort.fsc() == fault_status{fault_kind::address_size, 1, true});
  CHECK(decode_pmbsr(0x1).fsc().kind == fault_kind::reserved);
}

TEST_CASE("PMBSR: hand-built syndromes") {
  // Stage 1 Data Abort (EC 0b100100 = 0x24 << 26 = 0x90000000), S = 1 (bit 17), FSC level-2
  // Translation fault 0b000110.
  const pmbsr a = decode_pmbsr(0x90020006);
  CHECK(a.event() == exception_class::stage1_data_abort);
  CHECK(a.s == 1);
  CHECK((a.dl == 0 && a.ea == 0 && a.coll == 0));
  CHECK(a.mss == 6);
  CHECK(a.fsc() == fault_status{fault_kind::translation, 2, true});
  CHECK(a.res0_set() == 0);
  // Stage 2 Data Abort (0x25 << 26 = 0x94000000) with DL (bit 19), EA (bit 18), S and an
  // asynchronous External abort on write (0b010001): 0x940e0011.
  const pmbsr b = decode_pmbsr(0x940e0011);
  CHECK(b.event() == exception_class::stage2_data_abort);
  CHECK((b.dl == 1 && b.ea == 1 && b.s == 1 && b.coll == 0));
  CHECK(b.fsc().kind == fault_kind::asynchronous_external_abort);
  // Buffer filled with a collision: S | COLL | BSC 1 = 0x30001.
  const pmbsr c = decode_pmbsr(0x30001);
  CHECK(c.event() == exception_class::other_buffer_management_event);
  CHECK((c.s == 1 && c.coll == 1));
  CHECK(c.bsc() == buffer_status::filled);

  pmbsr w;
  w.ec = static_cast<std::uint8_t>(exception_class::stage1_data_abort);
  w.s = 1;
  w.mss = encode_fault_status({fault_kind::translation, 2, true}).fsc;
  CHECK(encode_pmbsr(w).value == 0x90020006);
}

TEST_CASE("PMBSR: MSS bits [15:6] are RES0 only when EC gives MSS a layout") {
  // MSS = 0xffc1 with EC 0 (BSC) / 0x24 (FSC): bits [15:6] RES0, reported.
  CHECK(decode_pmbsr(0xffc1).res0_set() == 0xffc0);
  CHECK(decode_pmbsr(0x90000000 | 0xffc7).res0_set() == 0xffc0);
  CHECK(decode_pmbsr(0x90000000 | 0xffc7).fsc().kind == fault_kind::translation);
  // Reserved EC 0b111111: MSS has no layout, so nothing in it is RES0.
  CHECK(decode_pmbsr(0xfc00ffffull).res0_set() == 0);
  CHECK(decode_pmbsr(0xfc00ffffull).fsc().kind == fault_kind::reserved);
  CHECK(decode_pmbsr(0xfc00ffffull).bsc() == buffer_status::reserved);
}

TEST_CASE("PMBSR: random 64-bit values round-trip, RES0 bits reported") {
  const std::uint64_t res0 = res0_from_table();
  test::splitmix64 rng{0x5be};
  for (int i = 0; i < 200000; ++i) {
    std::uint64_t x = rng.next();
    if (i % 4 == 1) x &= ~res0;
    // A quarter with each defined EC, so every MSS layout is exercised.
    if (i % 4 == 2)
      x = (x & ~(0x3full << 26)) | (static_cast<std::uint64_t>(0x24 + (i & 1)) << 26);
    if (i % 4 == 3) x &= ~(0x3full << 26);
    const pmbsr r = decode_pmbsr(x);
    for (const position& p : fields)
      REQUIRE(field_of(r, p.name) == ((x >> p.lo) & ((1ull << p.width) - 1)));
    const unsigned ec = (x >> 26) & 0x3f;
    const bool laid_out = ec == 0 || ec == 0x24 || ec == 0x25;
    REQUIRE(r.res0 == (x & res0));
    REQUIRE(r.res0_set() == ((x & res0) | (laid_out ? x & 0xffc0 : 0)));
    const encode_result e = encode_pmbsr(r);
    REQUIRE(e.ok());
    REQUIRE(e.value == x);
  }
}

TEST_CASE("PMBSR: encode rejects fields wider than their bits") {
  pmbsr r;
  r.ec = 64;
  CHECK(encode_pmbsr(r).error == encode_error::field_out_of_range);
  r = {};
  r.coll = 2;
  CHECK(encode_pmbsr(r).error == encode_error::field_out_of_range);
  r = {};
  r.res0 = 1u << 16;  // COLL, not RES0
  CHECK(encode_pmbsr(r).error == encode_error::res0_outside_mask);
  r.res0 = 1u << 20;
  CHECK(encode_pmbsr(r).value == 1u << 20);
}
