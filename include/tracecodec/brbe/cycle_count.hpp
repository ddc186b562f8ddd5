// SPDX-License-Identifier: Apache-2.0
// The BRBE cycle count format, both ways: BRBINF<n>_EL1.CC (bits [45:32]) holds a mantissa
// M = CC[7:0] and an exponent E = CC[13:8], and the count is
//   if IsZero(E) then UInt(M) else UInt('1':M:Zeros(UInt(E)-1))
// A count is rounded toward zero to a multiple of 2^(E-1) before being encoded; CC all ones
// means the count exceeded the cycle counter; CCU (bit [46]) = 1 means the count is UNKNOWN
// and CC is all zeros (D19.1.2 / F1.1.2).
#pragma once

#include <cstdint>

namespace tracecodec::brbe {

inline constexpr unsigned cc_width = 14;                  // CC is bits [45:32]
inline constexpr std::uint16_t cc_mask = 0x3fff;
inline constexpr std::uint16_t cc_overflowed = 0x3fff;    // all ones in M and E
inline constexpr unsigned max_counter_bits = 64;          // a count this library can hold

constexpr std::uint8_t cc_mantissa(std::uint16_t cc) noexcept {  // M = CC[7:0]
  return static_cast<std::uint8_t>(cc & 0xffu);
}
constexpr std::uint8_t cc_exponent(std::uint16_t cc) noexcept {  // E = CC[13:8]
  return static_cast<std::uint8_t>((cc >> 8) & 0x3fu);
}
constexpr std::uint16_t make_cc(unsigned exponent, unsigned mantissa) noexcept {
  return static_cast<std::uint16_t>(((exponent & 0x3fu) << 8) | (mantissa & 0xffu));
}

// The CC formula's value. '1':M is 9 bits, so E <= 56 fits in 64 bits; larger exponents
// (E 57..63) give values of 65 to 71 bits that no 64-bit result can hold (fits = false).
struct cc_formula_value {
  std::uint64_t value = 0;
  bool fits = false;
};
constexpr cc_formula_value cc_formula(std::uint16_t cc) noexcept {
  const unsigned e = cc_exponent(cc), m = cc_mantissa(cc);
  if (e == 0) return {m, true};                                // IsZero(E): UInt(M)
  if (e > 56) return {0, false};
  return {(std::uint64_t{0x100} | m) << (e - 1), true};        // UInt('1':M:Zeros(E-1))
}

// What a CC/CCU pair says about the count, for a cycle counter of `counter_bits` bits
// (BRBIDR0_EL1.CC; the 20-bit counter is the only size it defines).
enum class cycle_status : std::uint8_t {
  known,         // CCU 0: `cycles` is the count since the previous Branch record
  unknown,       // CCU 1: Branch cycle count unknown (CC should be all zeros)
  overflow,      // CCU 0, CC all ones: the count exceeded the size of the cycle counter
  out_of_range,  // CCU 0, CC not all ones but its value is >= 2^counter_bits: a counter of that
                 // size never writes it; `cycles` holds the formula's value if it fits 64 bits
};

struct cycle_count {
  cycle_status status = cycle_status::unknown;
  std::uint64_t cycles = 0;  // the count when status is known (see out_of_range), else 0
  constexpr bool known() const noexcept { return status == cycle_status::known; }
  constexpr bool operator==(const cycle_count&) const = default;
};

namespace detail {
// 2^bits - 1, the largest value a `bits`-bit counter holds (bits clamped to 1..64).
constexpr std::uint64_t counter_max(unsigned bits) noexcept {
  if (bits >= 64) return ~std::uint64_t{0};
  if (bits == 0) bits = 1;
  return (std::uint64_t{1} << bits) - 1;
}
constexpr unsigned bit_width(std::uint64_t v) noexcept {
  unsigned n = 0;
  while (v != 0) {
    ++n;
    v >>= 1;
  }
  return n;
}
}  // namespace detail

// Decodes BRBINF<n>_EL1.{CCU, CC}. CCU = 1 takes precedence over CC (the count is UNKNOWN
// whatever CC holds); bits of `cc` above bit 13 are ignored.
constexpr cycle_count decode_cycles(std::uint16_t cc, bool ccu, unsigned counter_bits) noexcept {
  cc &= cc_mask;
  if (ccu) return {cycle_status::unknown, 0};
  if (cc == cc_overflowed) return {cycle_status::overflow, 0};
  const cc_formula_value f = cc_formula(cc);
  if (!f.fits) return {cycle_status::out_of_range, 0};
  if (f.value > detail::counter_max(counter_bits)) return {cycle_status::out_of_range, f.value};
  return {cycle_status::known, f.value};
}

// A CC value that a `counter_bits`-bit counter writes for some count: not all ones, and its
// value below 2^counter_bits. For the 20-bit counter these are exactly E <= 12.
constexpr bool is_canonical_cc(std::uint16_t cc, unsigned counter_bits) noexcept {
  return cc <= cc_mask && decode_cycles(cc, false, counter_bits).known();
}

struct cc_encoding {
  std::uint16_t cc = 0;   // BRBINF<n>_EL1.CC
  std::uint8_t ccu = 0;   // BRBINF<n>_EL1.CCU
  constexpr bool operator==(const cc_encoding&) const = default;
};

// Encodes a count as the hardware does: counts above the counter's maximum (2^counter_bits - 1)
// saturate to all ones; counts below 256 are exact (E = 0); larger counts take the exponent
// E = bit_width(cycles) - 8 and are rounded toward zero to a multiple of 2^(E-1), so that
//   decode(encode(c)) <= c  and  c - decode(encode(c)) < 2^(E-1)  (relative error < 1/256).
constexpr cc_encoding encode_cycles(std::uint64_t cycles, unsigned counter_bits) noexcept {
  if (cycles > detail::counter_max(counter_bits)) return {cc_overflowed, 0};
  if (cycles < 0x100) return {static_cast<std::uint16_t>(cycles), 0};
  const unsigned e = detail::bit_width(cycles) - 8;  // 1..56
  return {make_cc(e, static_cast<unsigned>((cycles >> (e - 1)) & 0xffu)), 0};
}

// The encoding of an UNKNOWN count: CCU = 1, CC all zeros (D19.1.2).
constexpr cc_encoding encode_unknown_cycles() noexcept { return {0, 1}; }

// The rounding step of the encoding a count gets: 2^(E-1), or 1 when E = 0 (exact).
constexpr std::uint64_t cc_resolution(std::uint16_t cc) noexcept {
  const unsigned e = cc_exponent(cc);
  return e <= 1 ? 1 : std::uint64_t{1} << (e - 1);
}

}  // namespace tracecodec::brbe
