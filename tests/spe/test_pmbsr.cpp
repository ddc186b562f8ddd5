// SPDX-License-Identifier: Apache-2.0
// PMBSR_EL1 field by field, against spe-PMBSR_EL1-register.txt.
#include <doctest/doctest.h>

#include <tracecodec/host/spe/format.hpp>
#include <tracecodec/spe/pmbsr.hpp>

#include <cstdint>
#include <string>

#include "../common/random.hpp"
#include "../common/register_check.hpp"
#include "../common/syndrome_check.hpp"

using namespace tracecodec::spe;

namespace {

// EC [31:26], DL [19], EA [18], S [17], COLL [16], MSS [15:0]; everything else RES0.
constexpr test::position fields[] = {
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

// The EC codes the register names, the MSS layout each gives, and their text.
constexpr test::ec_row<exception_class> ec_table[] = {
    {0b000000, exception_class::other_buffer_management_event, mss_format::bsc,
     "Other buffer management event"},
    {0b100100, exception_class::stage1_data_abort, mss_format::fsc,
     "Stage 1 Data Abort on write to Profiling Buffer"},
    {0b100101, exception_class::stage2_data_abort, mss_format::fsc,
     "Stage 2 Data Abort on write to Profiling Buffer"},
};

constexpr test::code_row<buffer_status> bsc_table[] = {
    {0b000000, buffer_status::not_filled, "Buffer not filled"},
    {0b000001, buffer_status::filled, "Buffer filled"},
};

}  // namespace

TEST_CASE("PMBSR: each bit lands in the field the register description gives it") {
  CHECK(test::res0_from_table(fields) == 0xffffffff03f00000ull);  // [63:32], [25:20]
  test::check_each_bit(fields, decode_pmbsr, field_of);
}

TEST_CASE("PMBSR: every EC the register names, and every other code reserved") {
  const unsigned reserved = test::check_every_ec(ec_table, decode_pmbsr, exception_class_meaning);
  CHECK(reserved == 64 - 3);
}

TEST_CASE("PMBSR: BSC codes for the other buffer management event") {
  CHECK(test::check_every_bsc(bsc_table, decode_pmbsr, buffer_status_meaning) == 64 - 2);
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
  const std::uint64_t res0 = test::res0_from_table(fields);
  test::splitmix64 rng{0x5be};
  for (int i = 0; i < 200000; ++i) {
    std::uint64_t x = rng.next();
    if (i % 4 == 1) x &= ~res0;
    // A quarter with each defined EC, so every MSS layout is exercised.
    if (i % 4 == 2)
      x = (x & ~(0x3full << 26)) | (static_cast<std::uint64_t>(0x24 + (i & 1)) << 26);
    if (i % 4 == 3) x &= ~(0x3full << 26);
    const pmbsr r = test::require_round_trip(fields, res0, x, decode_pmbsr, encode_pmbsr, field_of);
    const unsigned ec = (x >> 26) & 0x3f;
    test::require_res0_set(r, x, res0, ec == 0 || ec == 0x24 || ec == 0x25);
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
