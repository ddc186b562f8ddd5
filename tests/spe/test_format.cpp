// SPDX-License-Identifier: Apache-2.0
// Text and JSON forms of PMBSR_EL1 values.
#include <doctest/doctest.h>

#include <tracecodec/host/spe/format.hpp>

#include <string>

#include "../common/json_check.hpp"
#include "../common/register_check.hpp"

using namespace tracecodec::spe;
using test::contains;

TEST_CASE("format: stage 1 Data Abort, level-2 Translation fault") {
  const pmbsr r = decode_pmbsr(0x90020006);
  const test::json_object j{format_json(r)};
  REQUIRE(j.ok());
  CHECK(j["register"] == "\"PMBSR_EL1\"");
  CHECK(j["value"] == "\"0x0000000090020006\"");
  CHECK(j["ec"] == "36");
  CHECK(j["ec_meaning"] == "\"Stage 1 Data Abort on write to Profiling Buffer\"");
  CHECK(j["dl"] == "0");
  CHECK(j["ea"] == "0");
  CHECK(j["s"] == "1");
  CHECK(j["coll"] == "0");
  CHECK(j["mss"] == "6");
  CHECK(j["fsc"] == "6");
  CHECK(j["fsc_meaning"] == "\"Translation fault, level 2\"");
  CHECK(j["fsc_level"] == "2");
  CHECK_FALSE(j.has("bsc"));
  CHECK(j["res0"] == "\"0x0000000000000000\"");
  for (const char* k : {"ec", "dl", "ea", "s", "coll", "mss"})
    CHECK(j.has(std::string(k) + "_meaning"));

  const std::string text = format_text(r);
  CHECK(contains(text, "PMBSR_EL1 = 0x0000000090020006\n"));
  CHECK(contains(text, "EC         [31:26]  = 0b100100   Stage 1 Data Abort on write to"));
  CHECK(contains(text, "FSC        [5:0]    = 0b000110   Translation fault, level 2\n"));
  CHECK(contains(text, "S          [17]     = 1          PMBIRQ is asserted"));
}

TEST_CASE("format: buffer filled, External abort without level, reserved EC") {
  const test::json_object f{format_json(decode_pmbsr(0x20001))};
  REQUIRE(f.ok());
  CHECK(f["bsc"] == "1");
  CHECK(f["bsc_meaning"] == "\"Buffer filled\"");
  CHECK_FALSE(f.has("fsc"));

  const test::json_object a{format_json(decode_pmbsr(0x94000010))};  // stage 2, 0b010000
  REQUIRE(a.ok());
  CHECK(a["fsc_meaning"] == "\"Synchronous External abort on write\"");
  CHECK(a["fsc_level"] == "null");

  // EC 0b000010 is reserved: named "reserved", MSS given no layout.
  const pmbsr r = decode_pmbsr(0x08000001);
  const test::json_object j{format_json(r)};
  REQUIRE(j.ok());
  CHECK(j["ec"] == "2");
  CHECK(j["ec_meaning"] == "\"reserved\"");
  CHECK(j["mss"] == "1");
  CHECK_FALSE(j.has("bsc"));
  CHECK_FALSE(j.has("fsc"));
  CHECK(contains(format_text(r), "= 0b000010   reserved\n"));

  // RES0 bits: bit 40 and MSS bit 6 under a BSC layout.
  const test::json_object z{format_json(decode_pmbsr(0x100'0000'0040ull))};
  REQUIRE(z.ok());
  CHECK(z["res0"] == "\"0x0000010000000040\"");
}
