// SPDX-License-Identifier: Apache-2.0
// BRBINF<n>_EL1, the information register of a BRBE Branch record, both ways: every field as
// its raw value, the named meaning of VALID, TYPE and EL, and which fields a VALID value makes
// "not valid". Field positions:
//   [63:47] RES0  [46] CCU  [45:32] CC  [31:18] RES0  [17] LASTFAILED  [16] T  [15:14] RES0
//   [13:8] TYPE  [7:6] EL  [5] MPRED  [4:2] RES0  [1:0] VALID
#pragma once

#include <cstdint>

#include "../arm/register_field.hpp"
#include "cycle_count.hpp"

namespace tracecodec::brbe {

using arm::encode_error;
using arm::encode_result;

inline constexpr std::uint64_t brbinf_res0_mask = 0xffff'8000'fffc'c01cull;

// VALID, bits [1:0] (R_RPVXK, R_LPLYK, R_GSMRH, R_XRHTY).
enum class record_validity : std::uint8_t {
  invalid = 0b00,      // not a Branch record; no other field is valid
  half_target = 0b01,  // target information only (entered from a BRBE Prohibited region)
  half_source = 0b10,  // source information only (left for a BRBE Prohibited region)
  full = 0b11,         // source and target
};

// TYPE, bits [13:8]. The enumerator value is the TYPE code; every other code is reserved.
enum class branch_type : std::uint8_t {
  direct = 0b000000,                // unconditional direct branch, excluding branch with link
  indirect = 0b000001,              // indirect branch, excluding BLR, RET and exception return
  direct_call = 0b000010,           // direct branch with link
  indirect_call = 0b000011,         // indirect branch with link
  subroutine_return = 0b000101,     // return from subroutine
  exception_return = 0b000111,
  conditional_direct = 0b001000,    // conditional direct branch
  debug_halt = 0b100001,
  call = 0b100010,                  // Call exception
  trap = 0b100011,
  serror = 0b100100,
  instruction_debug = 0b100110,
  data_debug = 0b100111,
  alignment = 0b101010,
  instruction_fault = 0b101011,
  data_fault = 0b101100,
  irq = 0b101110,
  fiq = 0b101111,
  implementation_defined_exception_to_el3 = 0b110000,
  debug_state_exit = 0b111001,
  reserved = 0xff,                  // any other code ("All other values are reserved")
};

constexpr branch_type branch_type_of(std::uint8_t code) noexcept {
  switch (code) {
    case 0b000000: case 0b000001: case 0b000010: case 0b000011: case 0b000101:
    case 0b000111: case 0b001000: case 0b100001: case 0b100010: case 0b100011:
    case 0b100100: case 0b100110: case 0b100111: case 0b101010: case 0b101011:
    case 0b101100: case 0b101110: case 0b101111: case 0b110000: case 0b111001:
      return static_cast<branch_type>(code);
    default:
      return branch_type::reserved;
  }
}

// EL, bits [7:6]: the Exception level at the target address (EL3 with FEAT_BRBEv1p1).
enum class exception_level : std::uint8_t { el0 = 0, el1 = 1, el2 = 2, el3 = 3 };

// The BRBINF fields whose validity depends on VALID, plus the two address registers.
enum class record_field : std::uint8_t {
  ccu, cc, lastfailed, t, type, el, mpred,
  source_address,  // BRBSRC<n>_EL1
  target_address,  // BRBTGT<n>_EL1
};

// Whether `f` holds a meaningful value in a record with this VALID. From the per-field rules
// of BRBINF<n>_EL1: CCU, CC, LASTFAILED, TYPE "valid when VALID != 0b00"; T and MPRED when
// VALID is 0b10 or 0b11; EL when VALID is 0b01 or 0b11. BRBSRC follows the source side
// (0b10, 0b11) and BRBTGT the target side (0b01, 0b11), as half-source/half-target say.
constexpr bool is_field_valid(record_validity v, record_field f) noexcept {
  const bool source = v == record_validity::full || v == record_validity::half_source;
  const bool target = v == record_validity::full || v == record_validity::half_target;
  switch (f) {
    case record_field::t:
    case record_field::mpred:
    case record_field::source_address:
      return source;
    case record_field::el:
    case record_field::target_address:
      return target;
    default:
      return v != record_validity::invalid;
  }
}

// The raw fields of one BRBINF<n>_EL1 value. `res0` holds the RES0 bits that were set, in
// place, so that encode_brbinf(decode_brbinf(x)) == x for every x.
struct brbinf {
  std::uint8_t valid = 0;       // VALID, bits [1:0]
  std::uint8_t mpred = 0;       // MPRED, bit [5]
  std::uint8_t el = 0;          // EL, bits [7:6]
  std::uint8_t type = 0;        // TYPE, bits [13:8]
  std::uint8_t t = 0;           // T, bit [16]
  std::uint8_t lastfailed = 0;  // LASTFAILED, bit [17]
  std::uint16_t cc = 0;         // CC, bits [45:32]
  std::uint8_t ccu = 0;         // CCU, bit [46]
  std::uint64_t res0 = 0;       // RES0 bits found set (a subset of brbinf_res0_mask)

  constexpr bool operator==(const brbinf&) const = default;

  constexpr record_validity validity() const noexcept {
    return static_cast<record_validity>(valid & 0b11u);
  }
  constexpr branch_type branch() const noexcept { return branch_type_of(type); }
  constexpr exception_level target_el() const noexcept {
    return static_cast<exception_level>(el & 0b11u);
  }
  constexpr bool is_valid(record_field f) const noexcept { return is_field_valid(validity(), f); }
  constexpr cycle_count cycles(unsigned counter_bits) const noexcept {
    return decode_cycles(cc, ccu != 0, counter_bits);
  }
};

// The fields of BRBINF<n>_EL1, in the order the formatters print them; every other bit is RES0.
inline constexpr arm::register_field<brbinf> brbinf_fields[] = {
    {"VALID", "valid", 1, 0, &brbinf::valid},
    {"TYPE", "type", 13, 8, &brbinf::type},
    {"EL", "el", 7, 6, &brbinf::el},
    {"MPRED", "mpred", 5, 5, &brbinf::mpred},
    {"T", "t", 16, 16, &brbinf::t},
    {"LASTFAILED", "lastfailed", 17, 17, &brbinf::lastfailed},
    {"CCU", "ccu", 46, 46, &brbinf::ccu},
    {"CC", "cc", 45, 32, &brbinf::cc},
};
static_assert(arm::is_valid_layout(brbinf_fields, brbinf_res0_mask));
static_assert(arm::bit_mask(45, 32) >> 32 == cc_mask);

constexpr brbinf decode_brbinf(std::uint64_t v) noexcept {
  return arm::decode_register(brbinf_fields, v);
}

// field_out_of_range for a field wider than its bits, res0_outside_mask for a `res0` bit that
// is not RES0; otherwise the register value.
constexpr encode_result encode_brbinf(const brbinf& r) noexcept {
  return arm::encode_register(brbinf_fields, r);
}

}  // namespace tracecodec::brbe
