// SPDX-License-Identifier: Apache-2.0
// The Management Event Specific Syndrome (MSS, bits [15:0]) shared by the profiling buffer
// (PMBSR_EL1) and the trace buffer (TRBSR_EL1): for a Data Abort on a write to the buffer it
// holds a fault status code FSC in bits [5:0], for the "other buffer management event" a
// buffer status code BSC in bits [5:0], with bits [15:6] RES0 in both. The FSC table is the
// one of PMBSR_EL1 ("MSS encoding for stage 1 or stage 2 Data Aborts on write to buffer");
// TRBSR_EL1 reports the same faults (E1.2.2.4, E1.2.2.5) with the same codes.
#pragma once

#include <cstdint>

#include "register_field.hpp"

namespace tracecodec::arm {

// Inline: the names are arm::fault_kind etc.; the SPE and TRBE codecs take them all with one
// using-directive.
inline namespace buffer_syndrome {

inline constexpr std::uint16_t mss_code_mask = 0x003f;  // BSC or FSC, bits [5:0]
inline constexpr std::uint16_t mss_res0_mask = 0xffc0;  // bits [15:6] RES0 for BSC and FSC

// How MSS is read, which the exception class decides.
enum class mss_format : std::uint8_t {
  bsc,                     // other buffer management event: buffer status code
  fsc,                     // stage 1 / stage 2 Data Abort on write: fault status code
  implementation_defined,  // IMPLEMENTATION DEFINED event (TRBSR_EL1 EC 0x1F)
  unknown,                 // reserved EC: MSS has no defined layout
};

// FSC, MSS bits [5:0].
enum class fault_kind : std::uint8_t {
  address_size,                  // 0b0000xx, level in bits [1:0]
  translation,                   // 0b0001xx, level
  access_flag,                   // 0b0010xx, level
  permission,                    // 0b0011xx, level
  synchronous_external_abort,    // 0b010000, on write
  asynchronous_external_abort,   // 0b010001, on write
  external_abort_on_table_walk,  // 0b0101xx, level: synchronous External abort on translation
                                 // table walk or hardware update of translation table
  alignment,                     // 0b100001
  tlb_conflict,                  // 0b110000
  unsupported_atomic_update,     // 0b110001, unsupported atomic hardware update (ARMv8.1-TTHM)
  reserved,                      // every other code
};

struct fault_status {
  fault_kind kind = fault_kind::reserved;
  std::uint8_t level = 0;  // translation table level 0..3 when has_level
  bool has_level = false;
  constexpr bool operator==(const fault_status&) const = default;
};

constexpr bool fault_has_level(fault_kind k) noexcept {
  return k == fault_kind::address_size || k == fault_kind::translation ||
         k == fault_kind::access_flag || k == fault_kind::permission ||
         k == fault_kind::external_abort_on_table_walk;
}

constexpr fault_status decode_fault_status(std::uint8_t fsc) noexcept {
  const std::uint8_t level = fsc & 0b11u;
  switch (fsc) {
    case 0b010000: return {fault_kind::synchronous_external_abort, 0, false};
    case 0b010001: return {fault_kind::asynchronous_external_abort, 0, false};
    case 0b100001: return {fault_kind::alignment, 0, false};
    case 0b110000: return {fault_kind::tlb_conflict, 0, false};
    case 0b110001: return {fault_kind::unsupported_atomic_update, 0, false};
    default: break;
  }
  switch (fsc >> 2) {  // the level forms 0bxxxxLL
    case 0b0000: return {fault_kind::address_size, level, true};
    case 0b0001: return {fault_kind::translation, level, true};
    case 0b0010: return {fault_kind::access_flag, level, true};
    case 0b0011: return {fault_kind::permission, level, true};
    case 0b0101: return {fault_kind::external_abort_on_table_walk, level, true};
    default: return {fault_kind::reserved, 0, false};
  }
}

struct fsc_encoding {
  std::uint8_t fsc = 0;
  bool ok = false;  // false: reserved kind, a level out of 0..3, or a level on a kind without
  constexpr bool operator==(const fsc_encoding&) const = default;
};

constexpr fsc_encoding encode_fault_status(const fault_status& f) noexcept {
  if (f.has_level != fault_has_level(f.kind) || f.level > 3 || (!f.has_level && f.level != 0))
    return {0, false};
  switch (f.kind) {
    case fault_kind::address_size: return {static_cast<std::uint8_t>(0b000000 | f.level), true};
    case fault_kind::translation: return {static_cast<std::uint8_t>(0b000100 | f.level), true};
    case fault_kind::access_flag: return {static_cast<std::uint8_t>(0b001000 | f.level), true};
    case fault_kind::permission: return {static_cast<std::uint8_t>(0b001100 | f.level), true};
    case fault_kind::external_abort_on_table_walk:
      return {static_cast<std::uint8_t>(0b010100 | f.level), true};
    case fault_kind::synchronous_external_abort: return {0b010000, true};
    case fault_kind::asynchronous_external_abort: return {0b010001, true};
    case fault_kind::alignment: return {0b100001, true};
    case fault_kind::tlb_conflict: return {0b110000, true};
    case fault_kind::unsupported_atomic_update: return {0b110001, true};
    default: return {0, false};
  }
}

// The MSS readings that PMBSR_EL1 and TRBSR_EL1 share (their bsc(), fsc(), res0_set()), given
// the layout their EC gives MSS. BSC or FSC, MSS bits [5:0]:
inline constexpr arm::field_position mss_bsc_field{"BSC", "bsc", 5, 0};
inline constexpr arm::field_position mss_fsc_field{"FSC", "fsc", 5, 0};

constexpr std::uint8_t mss_code_of(std::uint16_t mss) noexcept {
  return static_cast<std::uint8_t>(mss & mss_code_mask);
}
// The FSC when MSS is one, else fault_status{} (reserved).
constexpr fault_status mss_fault_status(mss_format fmt, std::uint16_t mss) noexcept {
  return fmt == mss_format::fsc ? decode_fault_status(mss_code_of(mss)) : fault_status{};
}
// The BSC when MSS is one (read by the register's BSC table `of`), else BufferStatus::reserved.
template <class BufferStatus>
constexpr BufferStatus mss_buffer_status(mss_format fmt, std::uint16_t mss,
                                         BufferStatus (*of)(std::uint8_t) noexcept) noexcept {
  return fmt == mss_format::bsc ? of(mss_code_of(mss)) : BufferStatus::reserved;
}
// MSS bits [15:6] that are set when MSS is a BSC or an FSC (RES0 there); 0 for any other layout.
constexpr std::uint64_t mss_res0_set(mss_format fmt, std::uint16_t mss) noexcept {
  const bool laid_out = fmt == mss_format::bsc || fmt == mss_format::fsc;
  return laid_out ? static_cast<std::uint64_t>(mss & mss_res0_mask) : 0;
}

}  // namespace buffer_syndrome
}  // namespace tracecodec::arm
