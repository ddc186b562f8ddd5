// SPDX-License-Identifier: Apache-2.0
// One mechanism for every Arm system register codec (BRBINF<n>_EL1, BRBIDR0_EL1, PMBSR_EL1,
// TRBSR_EL1): a register is a struct of raw field values plus a `res0` member, described by a
// constexpr table of register_field entries (the field's name as the Arm ARM spells it, its
// lowercase JSON key, its bits [hi:lo] and the struct member that holds it). The table drives
//   - decode_register: every field extracted, and the RES0 bits that are set kept in `res0`;
//   - encode_register: range checks (a value wider than its bits), RES0 checks (a `res0` bit
//     that is a field bit), then the value, so that encode(decode(x)) == x for every x;
//   - the text and JSON formatters (arm/format_util.hpp): one line and one key per field.
// The RES0 bits are every bit that no field of the table covers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tracecodec::arm {

// Bits [hi:lo] set (hi >= lo, hi <= 63).
constexpr std::uint64_t bit_mask(unsigned hi, unsigned lo) noexcept {
  const unsigned w = hi - lo + 1;
  return (w >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << w) - 1) << lo;
}

// Bits [hi:lo] of `v`, shifted down to bit 0.
constexpr std::uint64_t bits(std::uint64_t v, unsigned hi, unsigned lo) noexcept {
  return (v & bit_mask(hi, lo)) >> lo;
}

// Where a field sits: its name as the specification spells it ("LASTFAILED"), its JSON key
// (the name in lowercase, "lastfailed") and its bits [hi:lo] (a one-bit field has hi == lo).
struct field_position {
  const char* name;
  const char* key;
  unsigned hi;
  unsigned lo;

  constexpr unsigned width() const noexcept { return hi - lo + 1; }
  constexpr std::uint64_t mask() const noexcept { return bit_mask(hi, lo); }  // in place
  constexpr std::uint64_t max() const noexcept { return bit_mask(hi - lo, 0); }
  constexpr std::uint64_t extract(std::uint64_t v) const noexcept { return bits(v, hi, lo); }
};

// A field of register struct `Reg`: its position and the member that holds its raw value
// (a std::uint8_t or a std::uint16_t member).
template <class Reg>
struct register_field : field_position {
  std::uint8_t Reg::*u8 = nullptr;
  std::uint16_t Reg::*u16 = nullptr;

  constexpr register_field(const char* name, const char* key, unsigned hi, unsigned lo,
                           std::uint8_t Reg::*member) noexcept
      : field_position{name, key, hi, lo}, u8(member) {}
  constexpr register_field(const char* name, const char* key, unsigned hi, unsigned lo,
                           std::uint16_t Reg::*member) noexcept
      : field_position{name, key, hi, lo}, u16(member) {}

  constexpr std::uint64_t get(const Reg& r) const noexcept { return u8 ? r.*u8 : r.*u16; }
  // Stores `v` as the member's type holds it (a decoded value always fits).
  constexpr void set(Reg& r, std::uint64_t v) const noexcept {
    if (u8) r.*u8 = static_cast<std::uint8_t>(v);
    else r.*u16 = static_cast<std::uint16_t>(v);
  }
  // Whether the member's value fits the field's bits.
  constexpr bool fits(const Reg& r) const noexcept { return get(r) <= max(); }
};

// The bits some field of the table covers.
template <class Reg, std::size_t N>
constexpr std::uint64_t field_bits(const register_field<Reg> (&fields)[N]) noexcept {
  std::uint64_t used = 0;
  for (const register_field<Reg>& f : fields) used |= f.mask();
  return used;
}

// The RES0 bits: every bit that no field of the table covers.
template <class Reg, std::size_t N>
constexpr std::uint64_t res0_bits(const register_field<Reg> (&fields)[N]) noexcept {
  return ~field_bits(fields);
}

// A table is well formed when every field lies within 64 bits, is no wider than its member,
// and no two fields share a bit (checked by each register header with static_assert).
template <class Reg, std::size_t N>
constexpr bool is_valid_layout(const register_field<Reg> (&fields)[N]) noexcept {
  std::uint64_t used = 0;
  for (const register_field<Reg>& f : fields) {
    if (f.hi > 63 || f.lo > f.hi) return false;
    if (f.width() > (f.u8 ? 8u : 16u)) return false;
    if ((used & f.mask()) != 0) return false;
    used |= f.mask();
  }
  return true;
}
// ... and its RES0 bits are exactly `res0_mask` (the register's documented RES0 bits).
template <class Reg, std::size_t N>
constexpr bool is_valid_layout(const register_field<Reg> (&fields)[N],
                               std::uint64_t res0_mask) noexcept {
  return is_valid_layout(fields) && res0_bits(fields) == res0_mask;
}

// Every field's raw value; `res0` holds the RES0 bits that are set, in place.
template <class Reg, std::size_t N>
constexpr Reg decode_register(const register_field<Reg> (&fields)[N], std::uint64_t v) noexcept {
  Reg r{};
  for (const register_field<Reg>& f : fields) f.set(r, f.extract(v));
  r.res0 = v & res0_bits(fields);
  return r;
}

enum class encode_error : std::uint8_t {
  none,
  field_out_of_range,  // a field value wider than its bits
  res0_outside_mask,   // `res0` has a bit that is not a RES0 bit of the register
};

struct encode_result {
  std::uint64_t value = 0;  // 0 on error
  encode_error error = encode_error::none;
  constexpr bool ok() const noexcept { return error == encode_error::none; }
};

// The register value of `r`: every field in place, and the RES0 bits of `r.res0`.
template <class Reg, std::size_t N>
constexpr encode_result encode_register(const register_field<Reg> (&fields)[N],
                                        const Reg& r) noexcept {
  for (const register_field<Reg>& f : fields)
    if (!f.fits(r)) return {0, encode_error::field_out_of_range};
  if ((r.res0 & ~res0_bits(fields)) != 0) return {0, encode_error::res0_outside_mask};
  std::uint64_t v = r.res0;
  for (const register_field<Reg>& f : fields) v |= f.get(r) << f.lo;
  return {v, encode_error::none};
}

}  // namespace tracecodec::arm
