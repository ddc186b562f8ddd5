// SPDX-License-Identifier: Apache-2.0
// The ETE packet model: one plain value type that carries both what the bytes said and what
// they resolve to. The kinds and their descriptions are in description.hpp.
#pragma once

#include <cstdint>

#include "description.hpp"

namespace tracecodec::ete {

// Context state (D9.2.1 R_ZPNYS). `nse` is the RME security bit (payload bit 3): with `ns` it
// gives Secure (0,0), Non-secure (0,1), Root (1,0) or Realm (1,1).
struct context {
  std::uint32_t context_id = 0;
  std::uint32_t vmid = 0;
  std::uint8_t el = 0;
  bool ns = false;
  bool nse = false;
  bool sf = false;  // AArch64
  constexpr bool operator==(const context&) const = default;
};

// One decoded packet. Fields not used by a kind stay zero, so packets compare with ==.
struct packet {
  std::uint64_t offset = 0;     // byte offset of the header in its stream
  std::uint64_t address = 0;    // resolved 64-bit address (address, exception, Q, source);
                                // Instrumentation: the 64-bit payload
  std::uint64_t timestamp = 0;  // resolved timestamp after bit replacement (Timestamp)
  std::uint64_t size = 0;       // packet length in bytes (an A-Sync's zero run has no bound)
  context ctx{};                // resolved context after this packet (context-carrying packets)
  std::uint32_t count = 0;      // Commit/Cancel P0 count, commit of a Cycle Count packet,
                                // Q instruction count, Trace Info SPEC
  std::uint32_t cycles = 0;     // Cycle Count including the threshold; Timestamp COUNT;
                                // Trace Info CYCT (cycle count threshold)
  std::uint32_t atoms = 0;      // atom bits, oldest in bit 0, 1 = E, 0 = N
  packet_kind kind = packet_kind::async;
  std::uint8_t atom_count = 0;
  isa sub_isa = isa::is0;
  std::uint16_t exception_type = 0; // Exception TYPE (D5.13); ETMv4 M-profile: up to 10 bits
  std::uint8_t exception_elements = 0;  // Exception E field (D5.13): 1 = the Exception element,
                                        // 2 = a Target Address element, then the Exception
  std::uint8_t index = 0;           // exact-match address history index (QE)
  std::uint8_t events = 0;          // Event packet V3..V0
  std::uint8_t info = 0;            // Trace Info INFO byte; Instrumentation EL byte
  std::uint8_t plctl = 0;           // Trace Info PLCTL byte (which sections follow)
  std::uint8_t flags = 0;           // packet_flag bits
  // The encoding the hardware chose, so that re-encoding reproduces the bytes exactly.
  // 0 means "shortest" when a producer builds a packet.
  std::uint8_t addr_bytes = 0;    // short address forms: 1 or 2 payload bytes
  std::uint8_t value_bytes = 0;          // bytes of the first variable field (TS, COMMIT, CANCEL,
                                  // SPEC, Q COUNT)
  std::uint8_t count_bytes = 0;          // bytes of the second variable field (COUNT, CYCT)
  std::uint8_t ignored_bits = 0;  // Cycle Count 2_1/3_1: header/payload bits that COMMOPT=1
                                  // makes meaningless (D9.2.16.2), XOR the canonical D5 value

  constexpr bool operator==(const packet&) const = default;

  constexpr bool is(std::uint8_t flag) const noexcept { return (flags & flag) != 0; }
  constexpr bool atom(unsigned i) const noexcept { return (atoms >> i) & 1u; }
  // Trace Info INFO fields (D5.7).
  constexpr bool cc_enabled() const noexcept { return info & 1u; }
  constexpr bool transactional() const noexcept { return (info >> 6) & 1u; }
};

// Exception TYPE names (D5.13).
constexpr const char* exception_type_name(unsigned type) noexcept {
  switch (type) {
    case 0x00: return "PE Reset";
    case 0x01: return "Debug halt";
    case 0x02: return "Call";
    case 0x03: return "Trap";
    case 0x04: return "System Error";
    case 0x06: return "Inst debug";
    case 0x07: return "Data debug";
    case 0x0a: return "Alignment";
    case 0x0b: return "Inst Fault";
    case 0x0c: return "Data Fault";
    case 0x0e: return "IRQ";
    case 0x0f: return "FIQ";
    case 0x10: return "IMPLEMENTATION DEFINED 0";
    case 0x11: return "IMPLEMENTATION DEFINED 1";
    case 0x12: return "IMPLEMENTATION DEFINED 2";
    case 0x13: return "IMPLEMENTATION DEFINED 3";
    case 0x14: return "IMPLEMENTATION DEFINED 4";
    case 0x15: return "IMPLEMENTATION DEFINED 5";
    case 0x16: return "IMPLEMENTATION DEFINED 6";
    case 0x17: return "IMPLEMENTATION DEFINED 7";
    case 0x18: return "Transaction Failure";
    default: return "Reserved";
  }
}

}  // namespace tracecodec::ete
