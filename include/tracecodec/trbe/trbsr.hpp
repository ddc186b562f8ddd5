// SPDX-License-Identifier: Apache-2.0
// TRBSR_EL1, the Trace Buffer Extension's status/syndrome register (Part E), both ways.
// Field positions (Arm ARM TRBSR_EL1; Part E names the fields but has no register layout):
//   [63:32] RES0  [31:26] EC  [25:23] RES0  [22] IRQ  [21] TRG  [20] WRAP  [19] RES0
//   [18] EA  [17] S  [16] RES0  [15:0] MSS
// EC values from Part E: 0x00 other buffer management event (R_MBSHC, R_XRRRWP), 0x1F
// IMPLEMENTATION DEFINED event (R_CHNSL), 0x24 / 0x25 stage 1 / stage 2 Data Abort on write to
// trace buffer (R_FSPBK, R_XRLSC). MSS is BSC, FSC (the table shared with PMBSR_EL1) or
// IMPLEMENTATION DEFINED by EC.
#pragma once

#include <cstdint>

#include "../arm/register_field.hpp"
#include "../arm/fault_status.hpp"

namespace tracecodec::trbe {

using arm::encode_error;
using arm::encode_result;
using namespace arm::buffer_syndrome;  // the MSS layouts and fault status codes (arm/fault_status.hpp)

// [63:32], [25:23], [19], [16]
inline constexpr std::uint64_t trbsr_res0_mask = 0xffff'ffff'0389'0000ull;

// EC, bits [31:26]. The enumerator value is the EC code; every other code is reserved.
enum class exception_class : std::uint8_t {
  other_buffer_management_event = 0x00,
  implementation_defined_event = 0x1f,  // IMPLEMENTATION DEFINED buffer management event
  stage1_data_abort = 0x24,             // stage 1 Data Abort on write to trace buffer
  stage2_data_abort = 0x25,             // stage 2 Data Abort on write to trace buffer
  reserved = 0xff,
};

constexpr exception_class exception_class_of(std::uint8_t ec) noexcept {
  switch (ec) {
    case 0x00: case 0x1f: case 0x24: case 0x25: return static_cast<exception_class>(ec);
    default: return exception_class::reserved;
  }
}

constexpr mss_format mss_format_of(exception_class ec) noexcept {
  switch (ec) {
    case exception_class::other_buffer_management_event: return mss_format::bsc;
    case exception_class::stage1_data_abort:
    case exception_class::stage2_data_abort: return mss_format::fsc;
    case exception_class::implementation_defined_event: return mss_format::implementation_defined;
    default: return mss_format::unknown;
  }
}

// BSC, MSS bits [5:0], for EC 0x00.
enum class buffer_status : std::uint8_t {
  not_filled = 0b000000,     // E1.2.3.8: "the trace buffer is not full"
  filled = 0b000001,         // buffer full event in Fill mode (R_MBSHC)
  trigger_event = 0b000010,  // Trigger Event in Stop on trigger mode (R_XRRRWP)
  reserved = 0xff,
};

constexpr buffer_status buffer_status_of(std::uint8_t bsc) noexcept {
  return bsc <= 2 ? static_cast<buffer_status>(bsc) : buffer_status::reserved;
}

// The raw fields of one TRBSR_EL1 value. `res0` holds the register's RES0 bits that were set;
// MSS is kept whole in `mss`, so encode_trbsr(decode_trbsr(x)) == x.
struct trbsr {
  std::uint8_t ec = 0;     // EC, bits [31:26]
  std::uint8_t irq = 0;    // IRQ, bit [22]: trace buffer management event, TRBIRQ asserted
  std::uint8_t trg = 0;    // TRG, bit [21]: a Detected Trigger has occurred
  std::uint8_t wrap = 0;   // WRAP, bit [20]: the current write pointer has wrapped
  std::uint8_t ea = 0;     // EA, bit [18]: External Abort
  std::uint8_t s = 0;      // S, bit [17]: collection stopped
  std::uint16_t mss = 0;   // MSS, bits [15:0]
  std::uint64_t res0 = 0;  // RES0 bits found set outside MSS

  constexpr bool operator==(const trbsr&) const = default;

  constexpr exception_class event() const noexcept { return exception_class_of(ec); }
  constexpr mss_format syndrome() const noexcept { return mss_format_of(event()); }
  constexpr std::uint8_t mss_code() const noexcept { return arm::mss_code_of(mss); }  // BSC or FSC
  // BSC; reserved unless syndrome() is mss_format::bsc.
  constexpr buffer_status bsc() const noexcept {
    return arm::mss_buffer_status(syndrome(), mss, buffer_status_of);
  }
  // FSC; reserved unless syndrome() is mss_format::fsc.
  constexpr fault_status fsc() const noexcept { return arm::mss_fault_status(syndrome(), mss); }
  // Every RES0 bit that is set: the register's, and MSS bits [15:6] when EC gives MSS a layout
  // (BSC or FSC).
  constexpr std::uint64_t res0_set() const noexcept {
    return res0 | arm::mss_res0_set(syndrome(), mss);
  }
};

// The fields of TRBSR_EL1, in the order the formatters print them; every other bit is RES0.
inline constexpr arm::register_field<trbsr> trbsr_fields[] = {
    {"EC", "ec", 31, 26, &trbsr::ec},
    {"IRQ", "irq", 22, 22, &trbsr::irq},
    {"TRG", "trg", 21, 21, &trbsr::trg},
    {"WRAP", "wrap", 20, 20, &trbsr::wrap},
    {"EA", "ea", 18, 18, &trbsr::ea},
    {"S", "s", 17, 17, &trbsr::s},
    {"MSS", "mss", 15, 0, &trbsr::mss},
};
static_assert(arm::is_valid_layout(trbsr_fields, trbsr_res0_mask));

constexpr trbsr decode_trbsr(std::uint64_t v) noexcept {
  return arm::decode_register(trbsr_fields, v);
}

constexpr encode_result encode_trbsr(const trbsr& r) noexcept {
  return arm::encode_register(trbsr_fields, r);
}

}  // namespace tracecodec::trbe
