// SPDX-License-Identifier: Apache-2.0
// Trace elements (D2, D15.1): what the PE did, as the packets encode it. Stage 1 of the trace
// analyzer (D9.2, element_decoder.hpp) turns packets into elements; stage 2 (D9.3/D9.4,
// resolver.hpp) resolves speculation and transactions and passes on the committed elements.
#pragma once

#include <cstdint>

#include "../packet/packet.hpp"

namespace tracecodec::ete {

#define TRACECODEC_ETE_ELEMENT_KINDS(K) \
  K(trace_info)                         \
  K(trace_on)                           \
  K(atom)                               \
  K(exception)                          \
  K(target_address)                     \
  K(source_address)                     \
  K(context)                            \
  K(q)                                  \
  K(timestamp)                          \
  K(timestamp_marker)                   \
  K(cycle_count)                        \
  K(commit)                             \
  K(cancel)                             \
  K(mispredict)                         \
  K(discard)                            \
  K(overflow)                           \
  K(event)                              \
  K(transaction_start)                  \
  K(transaction_commit)                 \
  K(transaction_failure)                \
  K(instrumentation)                    \
  K(exception_return)                   \
  K(function_return)

enum class element_kind : std::uint8_t {
#define TRACECODEC_ETE_ELEMENT_ENUM(id) id,
  TRACECODEC_ETE_ELEMENT_KINDS(TRACECODEC_ETE_ELEMENT_ENUM)
#undef TRACECODEC_ETE_ELEMENT_ENUM
};

inline constexpr unsigned element_kind_count =
    static_cast<unsigned>(element_kind::function_return) + 1;

constexpr const char* element_name(element_kind k) noexcept {
  constexpr const char* names[element_kind_count] = {
#define TRACECODEC_ETE_ELEMENT_NAME(id) #id,
      TRACECODEC_ETE_ELEMENT_KINDS(TRACECODEC_ETE_ELEMENT_NAME)
#undef TRACECODEC_ETE_ELEMENT_NAME
  };
  return names[static_cast<unsigned>(k)];
}

namespace element_flag {
inline constexpr std::uint8_t cycles_unknown = 1;  // Cycle Count element with UNKNOWN count
inline constexpr std::uint8_t count_unknown = 2;   // Q element without instruction count
inline constexpr std::uint8_t has_cycles = 4;      // Timestamp element with a cycle count
inline constexpr std::uint8_t cc_enabled = 8;      // Trace Info: cycle counting enabled
inline constexpr std::uint8_t in_transaction = 16; // Trace Info: PE in Transactional state
inline constexpr std::uint8_t unknown_address = 32; // Exception/Target Address with UNKNOWN address
// ETMv4 Context: the packet carried a context ID (C bit) / a VMID (V bit).
inline constexpr std::uint8_t has_context_id = 64;
inline constexpr std::uint8_t has_vmid = 128;
// ETMv4 Exception: E = 0b10, its address is also the target of the P0 element before it.
inline constexpr std::uint8_t return_is_target = 64;
}  // namespace element_flag

struct element {
  std::uint64_t offset = 0;     // offset of the packet that produced the element
  std::uint64_t address = 0;    // target / source / exception return / Q address;
                                // instrumentation payload
  std::uint64_t timestamp = 0;  // Timestamp element value
  context ctx{};                // Context element
  std::uint32_t count = 0;      // Commit / Cancel P0 count, Q instruction count,
                                // Trace Info current speculation depth
  std::uint32_t cycles = 0;     // Cycle Count (threshold included); Timestamp's cycle count;
                                // Trace Info cycle count threshold
  std::uint32_t atom_bits = 0;  // Atom run (count >= 1): bit i = atom i taken, oldest first
  element_kind kind = element_kind::trace_info;
  isa sub_isa = isa::is0;
  bool taken = false;           // Atom (single, count 0): E (true) or N (false)
  bool p0 = false;              // a P0 element: counted by the speculation depth (D9.2)
  std::uint16_t exception_type = 0;  // TYPE (D5.13); ETMv4 M-profile: 10 bits
  std::uint8_t number = 0;      // Event: ETEEvent number 0-3; Instrumentation: EL byte
  std::uint8_t flags = 0;       // element_flag bits

  constexpr bool operator==(const element&) const = default;
  constexpr bool is(std::uint8_t f) const noexcept { return (flags & f) != 0; }
};

// Atom elements come one per atom (count 0, `taken`), or, when the reader is asked for atom
// runs, one per atom packet: count = number of atoms (1-32), atom_bits their E/N pattern. A
// run stands for `count` consecutive Atom elements with the same offset: each is a P0 element.
constexpr unsigned atom_count(const element& e) noexcept { return e.count ? e.count : 1u; }
constexpr bool atom_taken(const element& e, unsigned i) noexcept {
  return e.count ? ((e.atom_bits >> i) & 1u) != 0 : e.taken;
}
// Atom i of an atom element as the one-per-atom form gives it (count 0, `taken`).
constexpr element single_atom(const element& e, unsigned i) noexcept {
  element a = e;
  a.count = 0;
  a.atom_bits = 0;
  a.taken = atom_taken(e, i);
  return a;
}
// P0 elements an element stands for (D9.2): an atom run counts each of its atoms.
constexpr std::uint32_t p0_weight(const element& e) noexcept {
  return !e.p0 ? 0u : e.kind == element_kind::atom && e.count ? e.count : 1u;
}

// The Target Address element of a Target Address packet at `offset` (D9.2.14.4-7), from its
// fields: for the layers that are handed the packet's fields instead of the packet.
constexpr element target_address_element(std::uint64_t offset, std::uint64_t address, isa sub_isa) noexcept {
  element e{};
  e.offset = offset;
  e.kind = element_kind::target_address;
  e.address = address;
  e.sub_isa = sub_isa;
  return e;
}

// The Cycle Count element of a Cycle Count packet of format 2 or 3 under COMMOPT 1 at
// `offset` (D5.32, D5.34), from its count: for the same layers.
constexpr element cycle_count_element(std::uint64_t offset, std::uint32_t cycles) noexcept {
  element e{};
  e.offset = offset;
  e.kind = element_kind::cycle_count;
  e.cycles = cycles;
  return e;
}

// Same element, wherever it came from in the byte stream (offsets differ between encodings).
constexpr bool same_element(const element& a, const element& b) noexcept {
  element x = a, y = b;
  x.offset = y.offset = 0;
  return x == y;
}

}  // namespace tracecodec::ete
