// SPDX-License-Identifier: Apache-2.0
// The BRBINF<n>_EL1.CC mantissa/exponent format: every one of the 2^14 encodings, and every
// count a 20-bit cycle counter holds.
#include <doctest/doctest.h>

#include <tracecodec/brbe/cycle_count.hpp>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "../common/random.hpp"

using namespace tracecodec::brbe;

namespace {

// The register text's formula, literally: if IsZero(E) then UInt(M) else
// UInt('1':M:Zeros(UInt(E)-1)), with E = CC[13:8], M = CC[7:0], built as a bit string.
// Returns false when the bit string is longer than 64 bits.
bool reference_value(unsigned cc, std::uint64_t& out) {
  const unsigned e = (cc >> 8) & 0x3f, m = cc & 0xff;
  std::string bits;
  for (int i = 7; i >= 0; --i) bits += ((m >> i) & 1) ? '1' : '0';
  if (e != 0) bits = "1" + bits + std::string(e - 1, '0');
  while (bits.size() > 1 && bits[0] == '0') bits.erase(0, 1);  // UInt ignores leading zeros
  if (bits.size() > 64) return false;
  std::uint64_t v = 0;
  for (const char c : bits) v = v * 2 + (c == '1');
  out = v;
  return true;
}

}  // namespace

TEST_CASE("CC: hand-computed encodings (register text formula)") {
  // E = 0: the count is M.
  CHECK(decode_cycles(0x0000, false, 20) == cycle_count{cycle_status::known, 0});
  CHECK(decode_cycles(0x0001, false, 20) == cycle_count{cycle_status::known, 1});
  CHECK(decode_cycles(0x00ff, false, 20) == cycle_count{cycle_status::known, 255});
  // E = 1: '1':M = 256 + M.
  CHECK(decode_cycles(0x0100, false, 20) == cycle_count{cycle_status::known, 256});
  CHECK(decode_cycles(0x01ff, false, 20) == cycle_count{cycle_status::known, 511});
  // E = 2: '1':M:'0'.
  CHECK(decode_cycles(0x0200, false, 20) == cycle_count{cycle_status::known, 512});
  CHECK(decode_cycles(0x02f4, false, 20) == cycle_count{cycle_status::known, 1000});
  // E = 12, M = 0xff: 0b1_1111_1111 followed by 11 zeros = 1046528, the largest 20-bit value.
  CHECK(decode_cycles(0x0cff, false, 20) == cycle_count{cycle_status::known, 1046528});
  // E = 13, M = 0: 2^20, which a 20-bit counter cannot hold.
  CHECK(decode_cycles(0x0d00, false, 20) == cycle_count{cycle_status::out_of_range, 1048576});
  CHECK(decode_cycles(0x0d00, false, 21) == cycle_count{cycle_status::known, 1048576});
  // All ones: the counter overflowed.
  CHECK(decode_cycles(0x3fff, false, 20) == cycle_count{cycle_status::overflow, 0});
  CHECK(decode_cycles(0x3fff, false, 64) == cycle_count{cycle_status::overflow, 0});
  // CCU = 1: unknown, whatever CC says.
  CHECK(decode_cycles(0x0000, true, 20) == cycle_count{cycle_status::unknown, 0});
  CHECK(decode_cycles(0x02f4, true, 20) == cycle_count{cycle_status::unknown, 0});
  CHECK(decode_cycles(0x3fff, true, 20) == cycle_count{cycle_status::unknown, 0});
  // E = 56, M = 0: 2^63; E = 57 no longer fits 64 bits.
  CHECK(decode_cycles(0x3800, false, 64) == cycle_count{cycle_status::known, 1ull << 63});
  CHECK(decode_cycles(0x38ff, false, 64) ==
        cycle_count{cycle_status::known, 0x1ffull << 55});
  CHECK(decode_cycles(0x3900, false, 64) == cycle_count{cycle_status::out_of_range, 0});
  CHECK_FALSE(cc_formula(0x3900).fits);

  CHECK(encode_cycles(0, 20) == cc_encoding{0x0000, 0});
  CHECK(encode_cycles(255, 20) == cc_encoding{0x00ff, 0});
  CHECK(encode_cycles(256, 20) == cc_encoding{0x0100, 0});
  CHECK(encode_cycles(511, 20) == cc_encoding{0x01ff, 0});
  CHECK(encode_cycles(512, 20) == cc_encoding{0x0200, 0});
  CHECK(encode_cycles(513, 20) == cc_encoding{0x0200, 0});    // rounds down to 512
  CHECK(encode_cycles(1000, 20) == cc_encoding{0x02f4, 0});
  CHECK(encode_cycles(1001, 20) == cc_encoding{0x02f4, 0});   // rounds down to 1000
  CHECK(encode_cycles(1048575, 20) == cc_encoding{0x0cff, 0});  // 2^20-1 -> 1046528
  CHECK(encode_cycles(1048576, 20) == cc_encoding{0x3fff, 0});  // 2^20: saturates
  CHECK(encode_cycles(~0ull, 20) == cc_encoding{0x3fff, 0});
  CHECK(encode_cycles(~0ull, 64) == cc_encoding{0x38ff, 0});    // E = 56, M = 0xff
  CHECK(encode_unknown_cycles() == cc_encoding{0x0000, 1});
}

TEST_CASE("CC: all 2^14 encodings decode per the formula") {
  unsigned known20 = 0, out_of_range20 = 0;
  for (unsigned cc = 0; cc <= 0x3fff; ++cc) {
    std::uint64_t ref = 0;
    const bool fits = reference_value(cc, ref);
    const cc_formula_value f = cc_formula(static_cast<std::uint16_t>(cc));
    REQUIRE(f.fits == fits);
    if (fits) REQUIRE(f.value == ref);

    const cycle_count c20 = decode_cycles(static_cast<std::uint16_t>(cc), false, 20);
    if (cc == 0x3fff) {
      REQUIRE(c20.status == cycle_status::overflow);
    } else if (fits && ref < (1u << 20)) {
      REQUIRE(c20 == cycle_count{cycle_status::known, ref});
      ++known20;
    } else {
      REQUIRE(c20.status == cycle_status::out_of_range);
      ++out_of_range20;
    }
    // CCU = 1 makes every encoding unknown.
    REQUIRE(decode_cycles(static_cast<std::uint16_t>(cc), true, 20).status ==
            cycle_status::unknown);
  }
  // 20-bit counter: E 0..12 are the encodings it writes (13 exponents x 256 mantissas).
  CHECK(known20 == 13 * 256);
  CHECK(out_of_range20 == 0x4000 - 13 * 256 - 1);
}

TEST_CASE("CC: canonical encodings are monotonic and re-encode to themselves") {
  for (const unsigned bits : {8u, 12u, 16u, 20u, 32u, 64u}) {
    CAPTURE(bits);
    std::uint64_t previous = 0;
    bool have_previous = false;
    unsigned canonical = 0;
    for (unsigned cc = 0; cc <= 0x3fff; ++cc) {
      const auto x = static_cast<std::uint16_t>(cc);
      if (!is_canonical_cc(x, bits)) continue;
      ++canonical;
      const cycle_count c = decode_cycles(x, false, bits);
      REQUIRE(c.known());
      if (have_previous) REQUIRE(c.cycles > previous);  // strictly increasing with CC
      previous = c.cycles;
      have_previous = true;
      REQUIRE(encode_cycles(c.cycles, bits) == cc_encoding{x, 0});
    }
    // Exponent E holds 256 values of bit length 8+E (E = 0: M itself), so a `bits`-bit
    // counter writes E = 0 .. bits-8: 256 * (bits-7) encodings (64 bits: E <= 56).
    CHECK(canonical == (bits <= 8 ? (1u << bits) : 256 * (bits - 7)));
  }
}

TEST_CASE("CC: every 20-bit count encodes to the largest representable count not above it") {
  // The canonical values in increasing order, from the reference formula.
  std::vector<std::uint64_t> representable;
  for (unsigned cc = 0; cc < 0x3fff; ++cc) {
    std::uint64_t v;
    if (reference_value(cc, v) && v < (1u << 20)) representable.push_back(v);
  }
  std::size_t k = 0;
  for (std::uint64_t c = 0; c < (1u << 20); ++c) {
    while (k + 1 < representable.size() && representable[k + 1] <= c) ++k;
    const cc_encoding enc = encode_cycles(c, 20);
    REQUIRE(enc.ccu == 0);
    const cycle_count d = decode_cycles(enc.cc, false, 20);
    REQUIRE(d.known());
    REQUIRE(d.cycles == representable[k]);  // round toward zero
    // The documented bound: below 2^(E-1) lost, E the encoding's exponent (exact for E <= 1).
    const unsigned e = cc_exponent(enc.cc);
    REQUIRE(d.cycles <= c);
    REQUIRE(c - d.cycles < (e <= 1 ? 1u : 1u << (e - 1)));
    REQUIRE(d.cycles % (e <= 1 ? 1u : 1u << (e - 1)) == 0);  // a multiple of 2^(E-1)
  }
}

TEST_CASE("CC: saturation and the rounding bound for wide counts") {
  for (std::uint64_t c = (1u << 20); c < (1u << 20) + 4096; ++c)
    REQUIRE(encode_cycles(c, 20) == cc_encoding{cc_overflowed, 0});
  test::splitmix64 rng{20260101};
  for (int i = 0; i < 200000; ++i) {
    const std::uint64_t c = rng.next() >> (rng.next() % 64);
    const cc_encoding enc = encode_cycles(c, 64);
    const cycle_count d = decode_cycles(enc.cc, false, 64);
    REQUIRE(d.known());
    const unsigned e = cc_exponent(enc.cc);
    REQUIRE(d.cycles <= c);
    REQUIRE(c - d.cycles < (e <= 1 ? 1ull : 1ull << (e - 1)));
    // Relative error below 1/256: the first 9 significant bits are kept.
    if (c >= 256) REQUIRE((c - d.cycles) * 256 < c);
  }
}
