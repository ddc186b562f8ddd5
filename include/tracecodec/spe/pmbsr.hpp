// SPDX-License-Identifier: Apache-2.0
// PMBSR_EL1, the Statistical Profiling Extension's Profiling Buffer Status/syndrome Register,
// both ways. Field positions:
//   [63:32] RES0  [31:26] EC  [25:20] RES0  [19] DL  [18] EA  [17] S  [16] COLL  [15:0] MSS
// MSS is read by EC: BSC for EC 0b000000, FSC for EC 0b100100 / 0b100101 (bits [15:6] RES0 in
// both); a reserved EC leaves MSS without a layout.
#pragma once

#include <cstdint>

#include "../arm/register_field.hpp"
#include "../arm/fault_status.hpp"

namespace tracecodec::spe {

using arm::encode_error;
using arm::encode_result;
using namespace arm::buffer_syndrome;  // the MSS layouts and fault status codes (arm/fault_status.hpp)

inline constexpr std::uint64_t pmbsr_res0_mask = 0xffff'ffff'03f0'0000ull;  // [63:32], [25:20]

// EC, bits [31:26]. The enumerator value is the EC code; every other code is reserved.
enum class exception_class : std::uint8_t {
  other_buffer_management_event = 0b000000,
  stage1_data_abort = 0b100100,  // stage 1 Data Abort on write to Profiling Buffer
  stage2_data_abort = 0b100101,  // stage 2 Data Abort on write to Profiling Buffer
  reserved = 0xff,
};

constexpr exception_class exception_class_of(std::uint8_t ec) noexcept {
  switch (ec) {
    case 0b000000: case 0b100100: case 0b100101: return static_cast<exception_class>(ec);
    default: return exception_class::reserved;
  }
}

constexpr mss_format mss_format_of(exception_class ec) noexcept {
  switch (ec) {
    case exception_class::other_buffer_management_event: return mss_format::bsc;
    case exception_class::stage1_data_abort:
    case exception_class::stage2_data_abort: return mss_format::fsc;
    default: return mss_format::unknown;
  }
}

// BSC, MSS bits [5:0], for EC 0b000000.
enum class buffer_status : std::uint8_t {
  not_filled = 0b000000,
  filled = 0b000001,
  reserved = 0xff,
};

constexpr buffer_status buffer_status_of(std::uint8_t bsc) noexcept {
  return bsc == 0 ? buffer_status::not_filled
                  : bsc == 1 ? buffer_status::filled : buffer_status::reserved;
}

// The raw fields of one PMBSR_EL1 value. `res0` holds the register's RES0 bits that were set
// ([63:32], [25:20]); MSS is kept whole in `mss`, so encode_pmbsr(decode_pmbsr(x)) == x.
struct pmbsr {
  std::uint8_t ec = 0;     // EC, bits [31:26]
  std::uint8_t dl = 0;     // DL, bit [19]: partial record lost
  std::uint8_t ea = 0;     // EA, bit [18]: External abort
  std::uint8_t s = 0;      // S, bit [17]: service (PMBIRQ asserted)
  std::uint8_t coll = 0;   // COLL, bit [16]: collision detected
  std::uint16_t mss = 0;   // MSS, bits [15:0]
  std::uint64_t res0 = 0;  // RES0 bits found set outside MSS

  constexpr bool operator==(const pmbsr&) const = default;

  constexpr exception_class event() const noexcept { return exception_class_of(ec); }
  constexpr mss_format syndrome() const noexcept { return mss_format_of(event()); }
  constexpr std::uint8_t mss_code() const noexcept { return mss_code_of(mss); }  // BSC or FSC
  // BSC; reserved unless syndrome() is mss_format::bsc.
  constexpr buffer_status bsc() const noexcept {
    return mss_buffer_status(syndrome(), mss, buffer_status_of);
  }
  // FSC; reserved unless syndrome() is mss_format::fsc.
  constexpr fault_status fsc() const noexcept { return mss_fault_status(syndrome(), mss); }
  // Every RES0 bit that is set: the register's, and MSS bits [15:6] when EC gives MSS a layout
  // (BSC or FSC).
  constexpr std::uint64_t res0_set() const noexcept {
    return res0 | mss_res0_set(syndrome(), mss);
  }
};

// The fields of PMBSR_EL1, in the order the formatters print them; every other bit is RES0.
inline constexpr arm::register_field<pmbsr> pmbsr_fields[] = {
    {"EC", "ec", 31, 26, &pmbsr::ec},
    {"DL", "dl", 19, 19, &pmbsr::dl},
    {"EA", "ea", 18, 18, &pmbsr::ea},
    {"S", "s", 17, 17, &pmbsr::s},
    {"COLL", "coll", 16, 16, &pmbsr::coll},
    {"MSS", "mss", 15, 0, &pmbsr::mss},
};
static_assert(arm::is_valid_layout(pmbsr_fields, pmbsr_res0_mask));

constexpr pmbsr decode_pmbsr(std::uint64_t v) noexcept {
  return arm::decode_register(pmbsr_fields, v);
}

constexpr encode_result encode_pmbsr(const pmbsr& r) noexcept {
  return arm::encode_register(pmbsr_fields, r);
}

}  // namespace tracecodec::spe
