// SPDX-License-Identifier: Apache-2.0
// Program-flow elements: what the analysis stage (D9.5) makes of the committed elements and
// the program image. Instruction ranges, exceptions, context, and the non-execution elements
// (timestamps, cycle counts, events, ...) passed through in order, each with the offset of
// the packet that produced it.
#pragma once

#include <cstdint>

#include "../../arm/instruction.hpp"
#include "../packet/packet.hpp"

namespace tracecodec::ete {

// Each kind with its name in the JSON and text forms.
#define TRACECODEC_ETE_FLOW_KINDS(K)                        \
  K(instruction_range, "instr_range")                       \
  K(range_without_path, "range_nopath")                     \
  K(exception, "exception")                                 \
  K(exception_return, "exception_return")                   \
  K(context, "context")                                     \
  K(address_not_accessible, "addr_nacc")                    \
  K(trace_on, "trace_on")                                   \
  K(no_sync, "no_sync")                                     \
  K(end_of_trace, "end_of_trace")                           \
  K(transaction_start, "transaction_start")                 \
  K(transaction_commit, "transaction_commit")               \
  K(transaction_failure, "transaction_failure")             \
  K(timestamp, "timestamp")                                 \
  K(cycle_count, "cycle_count")                             \
  K(event, "event")                                         \
  K(timestamp_marker, "timestamp_marker")                   \
  K(instrumentation, "instrumentation")

enum class flow_kind : std::uint8_t {
#define TRACECODEC_ETE_FLOW_ENUM(id, name) id,
  TRACECODEC_ETE_FLOW_KINDS(TRACECODEC_ETE_FLOW_ENUM)
#undef TRACECODEC_ETE_FLOW_ENUM
};

inline constexpr unsigned flow_kind_count = static_cast<unsigned>(flow_kind::instrumentation) + 1;

constexpr const char* flow_name(flow_kind k) noexcept {
  constexpr const char* names[flow_kind_count] = {
#define TRACECODEC_ETE_FLOW_NAME(id, name) name,
      TRACECODEC_ETE_FLOW_KINDS(TRACECODEC_ETE_FLOW_NAME)
#undef TRACECODEC_ETE_FLOW_NAME
  };
  return names[static_cast<unsigned>(k)];
}

// Why analysis is not synchronized (no_sync) or trace restarted (trace_on).
enum class sync_reason : std::uint8_t {
  start,          // start of the trace: waiting for an A-Sync and a Trace Info
  new_session,    // reset(): a new session (another buffer)
  discard,        // Discard element (D9.5.13)
  overflow,       // Overflow element (D9.5.14): trace was lost
  decode_error,   // the bytes could not be decoded; analysis restarts at the next A-Sync
  walk_limit,     // no P0 instruction within flow_walk_limit instructions (bad image or trace)
  trace_on,       // trace_on: tracing started or resumed after a filtered region
};

constexpr const char* sync_reason_name(sync_reason r) noexcept {
  constexpr const char* names[] = {"start",        "new_session", "discard",  "overflow",
                                   "decode_error", "walk_limit",  "trace_on"};
  return names[static_cast<unsigned>(r)];
}

namespace flow_flag {
inline constexpr std::uint8_t cycles_unknown = 1;   // cycle_count: the count is UNKNOWN
inline constexpr std::uint8_t count_unknown = 2;    // range_without_path: Q without a count
inline constexpr std::uint8_t has_cycles = 4;       // timestamp: carries a cycle count
inline constexpr std::uint8_t unknown_address = 8;  // exception: no preferred return address
// context: a context ID / a VMID has been traced (a Context element with the C / V bit since
// the session began): the value in ctx is the PE's, not a default.
inline constexpr std::uint8_t context_id_known = 16;
inline constexpr std::uint8_t vmid_known = 32;
// exception: the preferred return address is also the target of the P0 element before it
// (E = 0b10, D5.13).
inline constexpr std::uint8_t return_is_target = 64;
}  // namespace flow_flag

struct flow_element {
  std::uint64_t offset = 0;   // offset of the packet that produced it
  std::uint64_t address = 0;  // range: first instruction; range_without_path: first address;
                              // exception: preferred return address; address_not_accessible:
                              // the address; instrumentation: the payload
  std::uint64_t end = 0;      // range, range_without_path: the address after it (exclusive)
  std::uint64_t timestamp = 0;
  context ctx{};              // context: the PE context after this element
  std::uint32_t count = 0;    // range: instructions; range_without_path: instructions (Q count);
                              // cycle_count, timestamp with has_cycles: cycles
  flow_kind kind = flow_kind::instruction_range;
  arm::instruction_set isa = arm::instruction_set::a64;  // range, context: the instruction set
  arm::instruction_type last_type = arm::instruction_type::other;  // range: its last instruction
  arm::instruction_subtype last_subtype = arm::instruction_subtype::none;
  std::uint8_t last_size = 4;  // range: bytes of the last instruction
  bool taken = false;          // range: the last instruction was taken (E) or not (N)
  bool conditional = false;    // range: the last instruction is conditional
  std::uint16_t number = 0;    // exception: TYPE (D5.13; ETMv4 M profile: 10 bits); event:
                               // 0-3; instrumentation: EL byte
  sync_reason reason = sync_reason::start;  // no_sync, trace_on
  std::uint8_t space = 0;      // address_not_accessible: the memory_space bits looked in
  std::uint8_t flags = 0;      // flow_flag bits

  constexpr bool operator==(const flow_element&) const = default;
  constexpr bool is(std::uint8_t f) const noexcept { return (flags & f) != 0; }
};

}  // namespace tracecodec::ete
