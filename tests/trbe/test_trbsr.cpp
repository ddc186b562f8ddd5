// SPDX-License-Identifier: Apache-2.0
// TRBSR_EL1 field by field, against Part E of the Armv9 supplement (E1.2.2) for the codes and
// the Arm ARM register layout for the positions.
#include <doctest/doctest.h>

#include <tracecodec/host/trbe/format.hpp>
#include <tracecodec/trbe/trbsr.hpp>

#include <cstdint>
#include <initializer_list>
#include <string>

#include "../common/json_check.hpp"
#include "../common/random.hpp"
#include "../common/register_check.hpp"
#include "../common/syndrome_check.hpp"

using namespace tracecodec::trbe;
using test::contains;

namespace {

// EC [31:26], IRQ [22], TRG [21], WRAP [20], EA [18], S [17], MSS [15:0]; the rest RES0.
constexpr test::position fields[] = {
    {"EC", 26, 6}, {"IRQ", 22, 1}, {"TRG", 21, 1}, {"WRAP", 20, 1},
    {"EA", 18, 1}, {"S", 17, 1},   {"MSS", 0, 16},
};

std::uint64_t field_of(const trbsr& r, const std::string& n) {
  if (n == "EC") return r.ec;
  if (n == "IRQ") return r.irq;
  if (n == "TRG") return r.trg;
  if (n == "WRAP") return r.wrap;
  if (n == "EA") return r.ea;
  if (n == "S") return r.s;
  return r.mss;
}

// The EC codes Part E names, the MSS layout each gives, and their text.
constexpr test::ec_row<exception_class> ec_table[] = {
    {0x00, exception_class::other_buffer_management_event, mss_format::bsc,  // R_MBSHC, R_XRRRWP
     "Other buffer management event"},
    {0x1f, exception_class::implementation_defined_event, mss_format::implementation_defined,
     "IMPLEMENTATION DEFINED buffer management event"},  // R_CHNSL
    {0x24, exception_class::stage1_data_abort, mss_format::fsc,  // R_FSPBK, R_XRLSC
     "Stage 1 Data Abort on write to trace buffer"},
    {0x25, exception_class::stage2_data_abort, mss_format::fsc,
     "Stage 2 Data Abort on write to trace buffer"},
};

constexpr test::code_row<buffer_status> bsc_table[] = {
    {0b000000, buffer_status::not_filled, "Buffer not filled"},  // E1.2.3.8
    {0b000001, buffer_status::filled, "Buffer filled"},          // R_MBSHC
    {0b000010, buffer_status::trigger_event, "Trigger Event"},   // R_XRRRWP
};

// Inside static_assert: R_MBSHC buffer full in Fill mode sets IRQ, WRAP, S, EC 0x00, BSC
// 0b000001: (1 << 22) | (1 << 20) | (1 << 17) | 1 = 0x520001.
constexpr trbsr full = decode_trbsr(0x520001);
static_assert(full.irq == 1 && full.wrap == 1 && full.s == 1 && full.trg == 0);
static_assert(full.event() == exception_class::other_buffer_management_event);
static_assert(full.bsc() == buffer_status::filled);
static_assert(encode_trbsr(full).value == 0x520001);
static_assert(decode_trbsr(0x25ull << 26 | 0b001111).fsc() ==
              fault_status{fault_kind::permission, 3, true});
static_assert(decode_trbsr(0x1full << 26 | 0xffff).res0_set() == 0);

}  // namespace

TEST_CASE("TRBSR: each bit lands in its field") {
  CHECK(test::res0_from_table(fields) == 0xffffffff03890000ull);  // [63:32], [25:23], [19], [16]
  test::check_each_bit(fields, decode_trbsr, field_of);
}

TEST_CASE("TRBSR: every EC Part E names, and every other code reserved") {
  const unsigned reserved = test::check_every_ec(ec_table, decode_trbsr, exception_class_meaning);
  CHECK(reserved == 64 - 4);
}

TEST_CASE("TRBSR: BSC codes of Part E, and every other code reserved") {
  CHECK(test::check_every_bsc(bsc_table, decode_trbsr, buffer_status_meaning) == 64 - 3);
}

TEST_CASE("TRBSR: hand-built syndromes from the Part E rules") {
  // R_XRRRWP Stop on trigger, after a Detected Trigger (R_KSQJW sets TRG): IRQ, TRG, S, EC 0,
  // BSC 0b000010: (1 << 22) | (1 << 21) | (1 << 17) | 2 = 0x620002.
  const trbsr t = decode_trbsr(0x620002);
  CHECK((t.irq == 1 && t.trg == 1 && t.s == 1 && t.wrap == 0 && t.ea == 0));
  CHECK(t.bsc() == buffer_status::trigger_event);
  // R_XRLSC External Abort, stage 1: IRQ, EA, S, EC 0x24, FSC synchronous External abort on
  // write 0b010000: 0x90000000 | 0x400000 | 0x40000 | 0x20000 | 0x10 = 0x90460010.
  const trbsr e = decode_trbsr(0x90460010);
  CHECK(e.event() == exception_class::stage1_data_abort);
  CHECK((e.irq == 1 && e.ea == 1 && e.s == 1));
  CHECK(e.fsc() == fault_status{fault_kind::synchronous_external_abort, 0, false});
  // R_FSPBK MMU fault at stage 2: EC 0x25, FSC Access Flag fault level 3 (0b001011).
  const trbsr m = decode_trbsr(0x94420000 | 0b001011);
  CHECK(m.event() == exception_class::stage2_data_abort);
  CHECK(m.fsc() == fault_status{fault_kind::access_flag, 3, true});
  CHECK(m.bsc() == buffer_status::reserved);
  // R_CHNSL IMPLEMENTATION DEFINED event: MSS is the implementation's, no RES0 bits in it.
  const trbsr i = decode_trbsr(0x7c42abcd);
  CHECK(i.event() == exception_class::implementation_defined_event);
  CHECK(i.mss == 0xabcd);
  CHECK(i.res0_set() == 0);
  CHECK(i.fsc().kind == fault_kind::reserved);
  // MSS bits [15:6] are RES0 for a BSC or FSC.
  CHECK(decode_trbsr(0x0000ffc1).res0_set() == 0xffc0);
  CHECK(decode_trbsr(0x9000ffc1).res0_set() == 0xffc0);

  trbsr w;
  w.irq = 1;
  w.wrap = 1;
  w.s = 1;
  w.mss = static_cast<std::uint16_t>(buffer_status::filled);
  CHECK(encode_trbsr(w).value == 0x520001);
}

TEST_CASE("TRBSR: random 64-bit values round-trip, RES0 bits reported") {
  const std::uint64_t res0 = test::res0_from_table(fields);
  test::splitmix64 rng{0x7b5e};
  for (int i = 0; i < 200000; ++i) {
    std::uint64_t x = rng.next();
    if (i % 4 == 1) x &= ~res0;
    if (i % 4 == 2) x = (x & ~(0x3full << 26)) | (std::uint64_t{0x24} << 26);
    if (i % 4 == 3) x &= ~(0x3full << 26);
    const trbsr r = test::require_round_trip(fields, res0, x, decode_trbsr, encode_trbsr, field_of);
    const unsigned ec = (x >> 26) & 0x3f;
    test::require_res0_set(r, x, res0, ec == 0 || ec == 0x24 || ec == 0x25);
  }
  trbsr bad;
  bad.wrap = 2;
  CHECK(encode_trbsr(bad).error == encode_error::field_out_of_range);
  bad = {};
  bad.res0 = 1u << 20;  // WRAP, not RES0
  CHECK(encode_trbsr(bad).error == encode_error::res0_outside_mask);
}

TEST_CASE("TRBSR format: buffer filled, and a reserved EC") {
  const test::json_object j{format_json(decode_trbsr(0x520001))};
  REQUIRE(j.ok());
  CHECK(j["register"] == "\"TRBSR_EL1\"");
  CHECK(j["value"] == "\"0x0000000000520001\"");
  CHECK(j["ec"] == "0");
  CHECK(j["ec_meaning"] == "\"Other buffer management event\"");
  CHECK(j["irq"] == "1");
  CHECK(j["trg"] == "0");
  CHECK(j["wrap"] == "1");
  CHECK(j["ea"] == "0");
  CHECK(j["s"] == "1");
  CHECK(j["mss"] == "1");
  CHECK(j["bsc"] == "1");
  CHECK(j["bsc_meaning"] == "\"Buffer filled\"");
  CHECK_FALSE(j.has("fsc"));
  CHECK(j["res0"] == "\"0x0000000000000000\"");
  for (const char* k : {"ec", "irq", "trg", "wrap", "ea", "s", "mss"})
    CHECK(j.has(std::string(k) + "_meaning"));
  const std::string text = format_text(decode_trbsr(0x520001));
  CHECK(contains(text, "TRBSR_EL1 = 0x0000000000520001\n"));
  CHECK(contains(text, "BSC        [5:0]    = 0b000001   Buffer filled\n"));
  CHECK(contains(text, "WRAP       [20]     = 1          The current write pointer has wrapped"));

  const test::json_object f{format_json(decode_trbsr(0x94420000 | 0b001011))};
  REQUIRE(f.ok());
  CHECK(f["fsc_meaning"] == "\"Access Flag fault, level 3\"");
  CHECK(f["fsc_level"] == "3");

  // EC 0x1e is reserved in Part E; bit 23 is RES0 there.
  const trbsr r = decode_trbsr(0x78800005);
  const test::json_object z{format_json(r)};
  REQUIRE(z.ok());
  CHECK(z["ec"] == "30");
  CHECK(z["ec_meaning"] == "\"reserved\"");
  CHECK_FALSE(z.has("bsc"));
  CHECK_FALSE(z.has("fsc"));
  CHECK(z["res0"] == "\"0x0000000000800000\"");
  CHECK(contains(format_text(r), "RES0 bits set: 0x0000000000800000"));
}
