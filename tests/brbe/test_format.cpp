// SPDX-License-Identifier: Apache-2.0
// Text and JSON forms of BRBINF<n>_EL1 values and Branch records.
#include <doctest/doctest.h>

#include <tracecodec/host/brbe/format.hpp>
#include <tracecodec/brbe/record.hpp>

#include <initializer_list>
#include <string>

#include "../common/json_check.hpp"
#include "../common/register_check.hpp"

using namespace tracecodec::brbe;

using test::contains;

TEST_CASE("format: a full indirect call with 1000 cycles") {
  const brbinf r = decode_brbinf(0x000002f400000343ull);
  const test::json_object j{format_json(r, 20)};
  REQUIRE(j.ok());
  CHECK(j["register"] == "\"BRBINF_EL1\"");
  CHECK(j["value"] == "\"0x000002f400000343\"");
  CHECK(j["valid"] == "3");
  CHECK(j["valid_meaning"] == "\"Full Branch record: valid\"");
  CHECK(j["type"] == "3");
  CHECK(j["type_meaning"] == "\"Indirect Branch with link\"");
  CHECK(j["el"] == "1");
  CHECK(j["mpred"] == "0");
  CHECK(j["t"] == "0");
  CHECK(j["lastfailed"] == "0");
  CHECK(j["ccu"] == "0");
  CHECK(j["cc"] == "756");  // 0x2f4
  CHECK(j["cycles"] == "1000");
  CHECK(j["cycles_overflow"] == "false");
  CHECK(j["cycle_counter_bits"] == "20");
  CHECK(j["not_valid"] == "[]");
  CHECK(j["res0"] == "\"0x0000000000000000\"");
  for (const char* k : {"valid", "type", "el", "mpred", "t", "lastfailed", "ccu", "cc"})
    CHECK(j.has(std::string(k) + "_meaning"));

  const std::string text = format_text(r, 20);
  CHECK(contains(text, "BRBINF<n>_EL1 = 0x000002f400000343\n"));
  CHECK(contains(text, "TYPE       [13:8]   = 0b000011   Indirect Branch with link\n"));
  CHECK(contains(text, "EL         [7:6]    = 0b01       EL1"));
  CHECK(contains(text, "CC         [45:32]  = 0x02f4     E=2, M=0xf4: 1000 cycles"));
  CHECK(contains(text, "  cycles: 1000\n"));
  CHECK(contains(text, "  RES0 bits set: none\n"));
}

TEST_CASE("format: half-target, reserved TYPE, unknown count, RES0 set") {
  // bit 63 (RES0) | CCU | TYPE 0b111111 | VALID 0b01
  const brbinf r = decode_brbinf(0x8000'4000'0000'3f01ull);
  const test::json_object j{format_json(r, 20)};
  REQUIRE(j.ok());
  CHECK(j["type"] == "63");
  CHECK(j["type_meaning"] == "\"reserved\"");
  CHECK(j["mpred_meaning"] == "\"not valid in a Half-target Branch record\"");
  CHECK(j["t_meaning"] == "\"not valid in a Half-target Branch record\"");
  CHECK(j["not_valid"] == "[\"mpred\",\"t\"]");
  CHECK(j["ccu"] == "1");
  CHECK(j["cycles"] == "null");
  CHECK(j["cycles_overflow"] == "false");
  CHECK(j["res0"] == "\"0x8000000000000000\"");
  const std::string text = format_text(r, 20);
  CHECK(contains(text, "= 0b111111   reserved\n"));
  CHECK(contains(text, "  cycles: unknown\n"));
  CHECK(contains(text, "RES0 bits set: 0x8000000000000000"));
}

TEST_CASE("format: overflow, and cycle fields of an invalid record") {
  const test::json_object o{format_json(decode_brbinf(0x0000'3fff'0000'0003ull), 20)};
  REQUIRE(o.ok());
  CHECK(o["cycles"] == "null");
  CHECK(o["cycles_overflow"] == "true");
  CHECK(contains(format_text(decode_brbinf(0x0000'3fff'0000'0003ull), 20),
                 "  cycles: overflow (more than 20 bits)\n"));
  // VALID 0b00: nothing else is valid, CC all ones included.
  const test::json_object n{format_json(decode_brbinf(0x0000'3fff'0000'0000ull), 20)};
  REQUIRE(n.ok());
  CHECK(n["cycles"] == "null");
  CHECK(n["cycles_overflow"] == "false");
  CHECK(n["not_valid"] == "[\"type\",\"el\",\"mpred\",\"t\",\"lastfailed\",\"ccu\",\"cc\"]");
  // CC beyond a 20-bit counter: E = 13.
  const test::json_object w{format_json(decode_brbinf(0x0000'0d00'0000'0003ull), 20)};
  REQUIRE(w.ok());
  CHECK(w["cycles"] == "null");
  CHECK(contains(w["cc_meaning"], "1048576 cycles, more than a 20-bit cycle counter holds"));
}

TEST_CASE("format: a Branch record with its addresses") {
  const record_codec<fixed_config<presets::brbidr0_64_records>> codec;
  // Half-source direct call: VALID 0b10 | TYPE 0b000010 << 8.
  const branch_record rec = codec.decode({0x0202, 0xffff800010001234ull, 0x42}).record;
  const test::json_object j{format_json(rec)};
  REQUIRE(j.ok());
  CHECK(j["brbsrc"] == "\"0xffff800010001234\"");
  CHECK(j["brbtgt"] == "null");
  CHECK(j["type_meaning"] == "\"Direct Branch with link\"");
  CHECK(j["not_valid"] == "[\"el\"]");
  const std::string text = format_text(rec);
  CHECK(contains(text, "BRBSRC<n>_EL1 = 0xffff800010001234  source address\n"));
  CHECK(contains(text, "BRBTGT<n>_EL1 = 0x0000000000000042  not valid in a Half-source"));
}
