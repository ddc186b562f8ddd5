// SPDX-License-Identifier: Apache-2.0
// PMBSR_EL1, the Statistical Profiling Extension's Profiling Buffer Status/syndrome Register,
// both ways. Field positions:
//   [63:32] RES0  [31:26] EC  [25:20] RES0  [19] DL  [18] EA  [17] S  [16] COLL  [15:0] MSS
// MSS is read by EC: BSC for EC 0b000000, FSC for EC 0b100100 / 0b100101 (bits [15:6] RES0 in
// both); a reserved EC leaves MSS without a layout.
#pragma once

#include <cstdint>

#include "fault_status.hpp"

namespace tracecodec::spe {

namespace detail {
constexpr std::uint64_t bits(std::uint64_t v, unsigned hi, unsigned lo) noexcept {
  return (v >> lo) & ((std::uint64_t{1} << (hi - lo + 1)) - 1);  // fields are < 64 bits wide
}
}  // namespace detail

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
  constexpr std::uint8_t mss_code() const noexcept {  // BSC or FSC, MSS bits [5:0]
    return static_cast<std::uint8_t>(mss & mss_code_mask);
  }
  // BSC; reserved unless syndrome() is mss_format::bsc.
  constexpr buffer_status bsc() const noexcept {
    return syndrome() == mss_format::bsc ? buffer_status_of(mss_code()) : buffer_status::reserved;
  }
  // FSC; reserved unless syndrome() is mss_format::fsc.
  constexpr fault_status fsc() const noexcept {
    return syndrome() == mss_format::fsc ? decode_fault_status(mss_code()) : fault_status{};
  }
  // Every RES0 bit that is set: the register's, and MSS bits [15:6] when EC gives MSS a layout.
  constexpr std::uint64_t res0_set() const noexcept {
    const bool laid_out = syndrome() == mss_format::bsc || syndrome() == mss_format::fsc;
    return res0 | (laid_out ? static_cast<std::uint64_t>(mss & mss_res0_mask) : 0);
  }
};

constexpr pmbsr decode_pmbsr(std::uint64_t v) noexcept {
  using detail::bits;
  pmbsr r;
  r.ec = static_cast<std::uint8_t>(bits(v, 31, 26));
  r.dl = static_cast<std::uint8_t>(bits(v, 19, 19));
  r.ea = static_cast<std::uint8_t>(bits(v, 18, 18));
  r.s = static_cast<std::uint8_t>(bits(v, 17, 17));
  r.coll = static_cast<std::uint8_t>(bits(v, 16, 16));
  r.mss = static_cast<std::uint16_t>(bits(v, 15, 0));
  r.res0 = v & pmbsr_res0_mask;
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

constexpr encode_result encode_pmbsr(const pmbsr& r) noexcept {
  if (r.ec > 0x3f || r.dl > 1 || r.ea > 1 || r.s > 1 || r.coll > 1)
    return {0, encode_error::field_out_of_range};
  if ((r.res0 & ~pmbsr_res0_mask) != 0) return {0, encode_error::res0_outside_mask};
  return {std::uint64_t{r.ec} << 26 | std::uint64_t{r.dl} << 19 | std::uint64_t{r.ea} << 18 |
              std::uint64_t{r.s} << 17 | std::uint64_t{r.coll} << 16 | r.mss | r.res0,
          encode_error::none};
}

}  // namespace tracecodec::spe
