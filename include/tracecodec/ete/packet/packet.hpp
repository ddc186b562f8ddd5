// SPDX-License-Identifier: Apache-2.0
// The ETE packet model: one kind per packet of D5.4-D5.75 (plus Instrumentation, ETE 1.3), and
// one plain value type that carries both what the bytes said and what they resolve to.
#pragma once

#include <cstdint>

namespace tracecodec::ete {

// X-macro: kind, name, traits. Traits: A = carries an address, C = may carry a context,
// T = atoms, X = exception, S = source address, Q = Q packet.
#define TRACECODEC_ETE_PACKET_KINDS(K)                                 \
  K(async, "async", 0)                                                 \
  K(discard, "discard", 0)                                             \
  K(overflow, "overflow", 0)                                           \
  K(trace_info, "trace_info", 0)                                       \
  K(trace_on, "trace_on", 0)                                           \
  K(timestamp, "timestamp", 0)                                         \
  K(timestamp_marker, "timestamp_marker", 0)                           \
  K(transaction_start, "transaction_start", 0)                         \
  K(transaction_commit, "transaction_commit", 0)                       \
  K(exception_exact, "exception_exact", kA | kX)                       \
  K(exception_short_is0, "exception_short_is0", kA | kX)               \
  K(exception_short_is1, "exception_short_is1", kA | kX)               \
  K(exception_32_is0, "exception_32_is0", kA | kX)                     \
  K(exception_32_is1, "exception_32_is1", kA | kX)                     \
  K(exception_64_is0, "exception_64_is0", kA | kX)                     \
  K(exception_64_is1, "exception_64_is1", kA | kX)                     \
  K(exception_ctx_32_is0, "exception_ctx_32_is0", kA | kX | kC)        \
  K(exception_ctx_32_is1, "exception_ctx_32_is1", kA | kX | kC)        \
  K(exception_ctx_64_is0, "exception_ctx_64_is0", kA | kX | kC)        \
  K(exception_ctx_64_is1, "exception_ctx_64_is1", kA | kX | kC)        \
  K(exception_unknown_address, "exception_unknown_address", kX)        \
  K(transaction_failure, "transaction_failure", kX)                    \
  K(pe_reset, "pe_reset", kX)                                          \
  K(cycle_count_f1_0_unknown, "cycle_count_f1_0_unknown", 0)           \
  K(cycle_count_f1_1_unknown, "cycle_count_f1_1_unknown", 0)           \
  K(cycle_count_f1_0, "cycle_count_f1_0", 0)                           \
  K(cycle_count_f1_1, "cycle_count_f1_1", 0)                           \
  K(cycle_count_f2_0_small, "cycle_count_f2_0_small", 0)               \
  K(cycle_count_f2_0_large, "cycle_count_f2_0_large", 0)               \
  K(cycle_count_f2_1, "cycle_count_f2_1", 0)                           \
  K(cycle_count_f3_0, "cycle_count_f3_0", 0)                           \
  K(cycle_count_f3_1, "cycle_count_f3_1", 0)                           \
  K(commit, "commit", 0)                                               \
  K(cancel_f1, "cancel_f1", 0)                                         \
  K(cancel_f2, "cancel_f2", kT)                                        \
  K(cancel_f3, "cancel_f3", kT)                                        \
  K(mispredict, "mispredict", kT)                                      \
  K(atom_f1, "atom_f1", kT)                                            \
  K(atom_f2, "atom_f2", kT)                                            \
  K(atom_f3, "atom_f3", kT)                                            \
  K(atom_f4, "atom_f4", kT)                                            \
  K(atom_f5_1, "atom_f5_1", kT)                                        \
  K(atom_f5_2, "atom_f5_2", kT)                                        \
  K(atom_f6, "atom_f6", kT)                                            \
  K(address_exact, "address_exact", kA)                                \
  K(address_short_is0, "address_short_is0", kA)                        \
  K(address_short_is1, "address_short_is1", kA)                        \
  K(address_32_is0, "address_32_is0", kA)                              \
  K(address_32_is1, "address_32_is1", kA)                              \
  K(address_64_is0, "address_64_is0", kA)                              \
  K(address_64_is1, "address_64_is1", kA)                              \
  K(context_same, "context_same", kC)                                  \
  K(context, "context", kC)                                            \
  K(address_ctx_32_is0, "address_ctx_32_is0", kA | kC)                 \
  K(address_ctx_32_is1, "address_ctx_32_is1", kA | kC)                 \
  K(address_ctx_64_is0, "address_ctx_64_is0", kA | kC)                 \
  K(address_ctx_64_is1, "address_ctx_64_is1", kA | kC)                 \
  K(source_exact, "source_exact", kA | kS)                             \
  K(source_short_is0, "source_short_is0", kA | kS)                     \
  K(source_short_is1, "source_short_is1", kA | kS)                     \
  K(source_32_is0, "source_32_is0", kA | kS)                           \
  K(source_32_is1, "source_32_is1", kA | kS)                           \
  K(source_64_is0, "source_64_is0", kA | kS)                           \
  K(source_64_is1, "source_64_is1", kA | kS)                           \
  K(ignore, "ignore", 0)                                               \
  K(event, "event", 0)                                                 \
  K(q, "q", kQ)                                                        \
  K(q_count, "q_count", kQ)                                            \
  K(q_exact, "q_exact", kQ | kA)                                       \
  K(q_short_is0, "q_short_is0", kQ | kA)                               \
  K(q_short_is1, "q_short_is1", kQ | kA)                               \
  K(q_32_is0, "q_32_is0", kQ | kA)                                     \
  K(q_32_is1, "q_32_is1", kQ | kA)                                     \
  K(instrumentation, "instrumentation", 0)

enum class packet_kind : std::uint8_t {
#define TRACECODEC_ETE_ENUM(id, name, traits) id,
  TRACECODEC_ETE_PACKET_KINDS(TRACECODEC_ETE_ENUM)
#undef TRACECODEC_ETE_ENUM
};

inline constexpr unsigned packet_kind_count = static_cast<unsigned>(packet_kind::instrumentation) + 1;

namespace kind_trait {
inline constexpr std::uint8_t kA = 1, kC = 2, kT = 4, kX = 8, kS = 16, kQ = 32;
}

namespace detail {
using namespace kind_trait;
struct kind_info {
  const char* name;
  std::uint8_t traits;
};
inline constexpr kind_info kind_table[packet_kind_count] = {
#define TRACECODEC_ETE_INFO(id, name, traits) {name, traits},
    TRACECODEC_ETE_PACKET_KINDS(TRACECODEC_ETE_INFO)
#undef TRACECODEC_ETE_INFO
};
}  // namespace detail

constexpr const char* kind_name(packet_kind k) noexcept {
  return detail::kind_table[static_cast<unsigned>(k)].name;
}
constexpr bool has_address(packet_kind k) noexcept {
  return detail::kind_table[static_cast<unsigned>(k)].traits & kind_trait::kA;
}
constexpr bool has_context(packet_kind k) noexcept {
  return detail::kind_table[static_cast<unsigned>(k)].traits & kind_trait::kC;
}
constexpr bool has_atoms(packet_kind k) noexcept {
  return detail::kind_table[static_cast<unsigned>(k)].traits & kind_trait::kT;
}
constexpr bool is_exception(packet_kind k) noexcept {
  return detail::kind_table[static_cast<unsigned>(k)].traits & kind_trait::kX;
}
constexpr bool is_source_address(packet_kind k) noexcept {
  return detail::kind_table[static_cast<unsigned>(k)].traits & kind_trait::kS;
}
constexpr bool is_q(packet_kind k) noexcept {
  return detail::kind_table[static_cast<unsigned>(k)].traits & kind_trait::kQ;
}
constexpr bool is_cycle_count(packet_kind k) noexcept {
  return k >= packet_kind::cycle_count_f1_0_unknown && k <= packet_kind::cycle_count_f3_1;
}

// Instruction-set qualifier of an address (D5.3.2): IS0 word-aligned, IS1 halfword-aligned.
enum class isa : std::uint8_t { is0 = 0, is1 = 1 };

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

namespace packet_flag {
inline constexpr std::uint8_t has_context_id = 1;  // Context payload C bit: CONTEXTID follows
inline constexpr std::uint8_t has_vmid = 2;        // Context payload V bit: VMID follows
inline constexpr std::uint8_t cycles_unknown = 4;  // Cycle Count with UNKNOWN count
inline constexpr std::uint8_t count_unknown = 8;   // Q packet without count
inline constexpr std::uint8_t mispredict = 16;     // Cancel: a Mispredict element follows
inline constexpr std::uint8_t has_count = 32;      // Timestamp with COUNT (header 0x03)
}  // namespace packet_flag

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
  std::uint8_t exception_type = 0;  // Exception TYPE (D5.13)
  std::uint8_t e = 0;               // Exception E field: 1 or 2
  std::uint8_t index = 0;           // exact-match address history index (QE)
  std::uint8_t events = 0;          // Event packet V3..V0
  std::uint8_t info = 0;            // Trace Info INFO byte; Instrumentation EL byte
  std::uint8_t plctl = 0;           // Trace Info PLCTL byte (which sections follow)
  std::uint8_t flags = 0;           // packet_flag bits
  // The encoding the hardware chose, so that re-encoding reproduces the bytes exactly.
  // 0 means "shortest" when a producer builds a packet.
  std::uint8_t addr_bytes = 0;    // short address forms: 1 or 2 payload bytes
  std::uint8_t len1 = 0;          // bytes of the first variable field (TS, COMMIT, CANCEL,
                                  // SPEC, Q COUNT)
  std::uint8_t len2 = 0;          // bytes of the second variable field (COUNT, CYCT)
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
