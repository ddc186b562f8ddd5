// SPDX-License-Identifier: Apache-2.0
// Sign-based compression edge cases: all zeros, all ones, one sign flip at the top bit, flips
// at byte boundaries, and the decoder's checks of padding and length.
#include <doctest/doctest.h>

#include "common.hpp"

using namespace etest;
using et::te_inst;
using et::format;

namespace {
std::size_t shortest(bytes b) { return et::compressed_size(b.data(), b.size()); }
}  // namespace

TEST_CASE("compressed_size: drops trailing bytes equal to the fill of the bit before them") {
  CHECK(shortest({0x00}) == 1);
  CHECK(shortest({0xff}) == 1);
  CHECK(shortest({0x00, 0x00, 0x00, 0x00}) == 1);  // all zeros: one byte remains
  CHECK(shortest({0xff, 0xff, 0xff, 0xff}) == 1);  // all ones
  CHECK(shortest({0x7f, 0x00}) == 1);  // bit 7 = 0: 0x00 is its fill
  CHECK(shortest({0x80, 0x00}) == 2);  // bit 7 = 1: the fill would be 0xff
  CHECK(shortest({0x80, 0xff}) == 1);
  CHECK(shortest({0x7f, 0xff}) == 2);
  CHECK(shortest({0x12, 0x00, 0x80}) == 3);  // a sign flip at the very top bit: nothing goes
  CHECK(shortest({0x12, 0x80, 0xff, 0xff}) == 2);
  CHECK(shortest({0x12, 0x00, 0x00, 0xff}) == 4);
}

TEST_CASE("sign_extend_to_byte and check_payload_length") {
  std::uint8_t a[2] = {0x10, 0x00};  // 5 bits, bit 4 set: bits 5-7 become ones
  et::sign_extend_to_byte(a, 5);
  CHECK(a[0] == 0xf0);
  std::uint8_t b[2] = {0xef, 0x00};  // 5 bits, bit 4 clear: bits 5-7 become zeros
  et::sign_extend_to_byte(b, 5);
  CHECK(b[0] == 0x0f);
  std::uint8_t c[1] = {0x5a};  // 8 bits: nothing to do
  et::sign_extend_to_byte(c, 8);
  CHECK(c[0] == 0x5a);
  const std::uint8_t ok[1] = {0xf0}, bad[1] = {0x70}, two[2] = {0xf0, 0xff};
  CHECK(et::check_payload_length(ok, 1, 5) == et::error_code::ok);
  CHECK(et::check_payload_length(bad, 1, 5) == et::error_code::bad_sign_extension);
  CHECK(et::check_payload_length(two, 2, 5) == et::error_code::payload_too_long);
  CHECK(et::check_payload_length(two, 1, 13) == et::error_code::ok);  // shorter: implied
}

TEST_CASE("whole payloads: all zeros, all ones, one sign flip at the top bit") {
  // D (format 0 subformat 0 only, f0s_width_p 0): format 00 | branch_count 0 | branch_fmt 00:
  // 36 zero bits -> the single byte 0x00.
  const et::payload_codec<> d{et::parameters{.branch_prediction = true}};
  const te_inst zeros{.format = format::opt_ext};
  CHECK(hex(encode(d, zeros)) == "00");
  CHECK(decode(d, {0x00}).inst == zeros);
  CHECK(decode(d, {0x00, 0x00, 0x00, 0x00, 0x00}).inst == zeros);  // uncompressed: 5 bytes
  CHECK(decode(d, {0x00, 0x00, 0x00, 0x00, 0x00, 0x00}).error == et::error_code::payload_too_long);

  // A (RV32): support packet with every bit one: 19 ones -> 0xff.
  const et::payload_codec<> a{et::presets::rv32};
  const te_inst ones{.format = format::sync, .subformat = 3, .ienable = true, .encoder_mode = 1,
                     .qual_status = et::qual_status::ended_ntr, .ioptions = 0x1f,
                     .denable = true, .dloss = true, .doptions = 0xf};
  CHECK(hex(encode(a, ones)) == "ff");
  CHECK(decode(a, {0xff}).inst == ones);
  // The same with only the top bit (doptions bit 3, bit 18) clear: ff ff then bits 16-17 one,
  // bit 18 zero, padding zero = 0x03. Nothing can be dropped.
  te_inst flip = ones;
  flip.doptions = 0x7;
  CHECK(hex(encode(a, flip)) == "ff ff 03");
  CHECK(decode(a, {0xff, 0xff, 0x03}).inst == flip);

  // Format 2 with only the address MSB set (bit 32): notify/updiscon/irreport repeat it, so the
  // flip is the top bit of a 36-bit payload: 02 00 00 00 ff, full length.
  const te_inst top{.format = format::addr_only, .address = 0x80000000};
  CHECK(hex(encode(a, top)) == "02 00 00 00 ff");
  CHECK(decode(a, {0x02, 0x00, 0x00, 0x00, 0xff}).inst == top);
  // Every address bit one (a -2 byte difference): all bits after the format are one: 0xfe.
  const te_inst minus2{.format = format::addr_only, .address = 0xfffffffe};
  CHECK(hex(encode(a, minus2)) == "fe");
  CHECK(decode(a, {0xfe}).inst == minus2);
  // One byte of 0xfe read with sign extension restores all 36 bits; a second byte 0xff is
  // still valid (not compressed), a third is too long.
  CHECK(decode(a, {0xfe, 0xff}).inst == minus2);
  CHECK(decode(a, {0xfe, 0xff, 0xff, 0xff, 0xff}).inst == minus2);
  CHECK(decode(a, {0xfe, 0xff, 0xff, 0xff, 0xff, 0xff}).error == et::error_code::payload_too_long);
  // Bits 36-39 of the fifth byte must repeat bit 35.
  CHECK(decode(a, {0xfe, 0xff, 0xff, 0xff, 0x0f}).error == et::error_code::bad_sign_extension);
}

TEST_CASE("minimum size: a received non-minimal payload re-encodes byte for byte") {
  const et::payload_codec<> a{et::presets::rv32};
  const te_inst p{.format = format::addr_only, .address = 0x100};
  for (std::size_t n = 2; n <= 5; ++n) {
    bytes b = encode(a, p, {}, n);
    CHECK(b.size() == n);
    CHECK(decode(a, b).inst == p);
  }
  et::error_code err{};
  CHECK(encode(a, p, {}, 6, &err).empty());  // beyond the full length
  CHECK(err == et::error_code::unencodable);
}
