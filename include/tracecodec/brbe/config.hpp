// SPDX-License-Identifier: Apache-2.0
// BRBE configuration from BRBIDR0_EL1: NUMREC (bits [7:0]), FORMAT (bits [11:8]) and the
// cycle counter size CC (bits [15:12]); bits [63:16] are RES0. Defined values: NUMREC 0x08,
// 0x10, 0x20, 0x40 (8/16/32/64 records, F1.1.11); FORMAT 0b0000 (BRBSRC/BRBTGT hold a 64-bit
// ADDRESS); CC 0b0101 (20-bit cycle counter). Every other value is reserved, and a register
// value with one is not a BRBE implementation: rejected at compile time by fixed_config and
// reported by runtime_config::status().
#pragma once

#include <cstdint>

#include "brbinf.hpp"

namespace tracecodec::brbe {

inline constexpr std::uint64_t brbidr0_res0_mask = 0xffff'ffff'ffff'0000ull;

struct brbidr0 {
  std::uint8_t numrec = 0;  // NUMREC, bits [7:0]
  std::uint8_t format = 0;  // FORMAT, bits [11:8]
  std::uint8_t cc = 0;      // CC, bits [15:12]
  std::uint64_t res0 = 0;   // RES0 bits found set
  constexpr bool operator==(const brbidr0&) const = default;
};

inline constexpr arm::register_field<brbidr0> brbidr0_fields[] = {
    {"NUMREC", "numrec", 7, 0, &brbidr0::numrec},
    {"FORMAT", "format", 11, 8, &brbidr0::format},
    {"CC", "cc", 15, 12, &brbidr0::cc},
};
static_assert(arm::is_valid_layout(brbidr0_fields, brbidr0_res0_mask));

constexpr brbidr0 decode_brbidr0(std::uint64_t v) noexcept {
  return arm::decode_register(brbidr0_fields, v);
}

constexpr encode_result encode_brbidr0(const brbidr0& r) noexcept {
  return arm::encode_register(brbidr0_fields, r);
}

// Cycle counter bits for a BRBIDR0_EL1.CC value; 0 for a reserved value.
constexpr unsigned counter_bits_of(std::uint8_t cc) noexcept { return cc == 0b0101 ? 20 : 0; }

enum class config_error : std::uint8_t {
  none,
  reserved_numrec,  // NUMREC other than 8, 16, 32, 64
  reserved_format,  // FORMAT other than 0b0000
  reserved_cc,      // CC other than 0b0101
  res0_set,         // a bit of [63:16] set
};

constexpr config_error validate_brbidr0(std::uint64_t v) noexcept {
  const brbidr0 r = decode_brbidr0(v);
  if (r.numrec != 8 && r.numrec != 16 && r.numrec != 32 && r.numrec != 64)
    return config_error::reserved_numrec;
  if (r.format != 0) return config_error::reserved_format;
  if (counter_bits_of(r.cc) == 0) return config_error::reserved_cc;
  if (r.res0 != 0) return config_error::res0_set;
  return config_error::none;
}

// What a record codec needs from BRBIDR0_EL1.
struct config {
  unsigned num_records = 0;   // NUMREC: records 0 .. num_records-1 exist
  unsigned counter_bits = 0;  // cycle counter size (CC)
  unsigned format = 0;        // FORMAT
  constexpr bool operator==(const config&) const = default;
  static constexpr config from(std::uint64_t brbidr0_value) noexcept {
    const brbidr0 r = decode_brbidr0(brbidr0_value);
    return {r.numrec, counter_bits_of(r.cc), r.format};
  }
};

// Compile-time configuration: a BRBIDR0_EL1 value as template argument; an invalid one fails
// to compile.
template <std::uint64_t Brbidr0>
struct fixed_config {
  static_assert(validate_brbidr0(Brbidr0) == config_error::none,
                "invalid BRBIDR0_EL1 configuration");
  static constexpr bool is_fixed = true;
  static constexpr std::uint64_t brbidr0_value = Brbidr0;
  static constexpr config value = config::from(Brbidr0);
  static constexpr const config& get() noexcept { return value; }
  static constexpr config_error status() noexcept { return config_error::none; }
};

// Run-time configuration: validated when made; status() says why a value is invalid, and
// record_codec operations report record_error::invalid_config for it.
class runtime_config {
 public:
  static constexpr bool is_fixed = false;
  constexpr runtime_config() noexcept : runtime_config(0) {}
  constexpr explicit runtime_config(std::uint64_t brbidr0_value) noexcept
      : brbidr0_(brbidr0_value),
        value_(config::from(brbidr0_value)),
        status_(validate_brbidr0(brbidr0_value)) {}
  constexpr const config& get() const noexcept { return value_; }
  constexpr config_error status() const noexcept { return status_; }
  constexpr std::uint64_t brbidr0_value() const noexcept { return brbidr0_; }

 private:
  std::uint64_t brbidr0_;
  config value_;
  config_error status_;
};

namespace presets {
// CC 0b0101 (20-bit counter), FORMAT 0, NUMREC 32 / 64.
inline constexpr std::uint64_t brbidr0_32_records = 0x5020;
inline constexpr std::uint64_t brbidr0_64_records = 0x5040;
}  // namespace presets

}  // namespace tracecodec::brbe
