// SPDX-License-Identifier: Apache-2.0
// What stage 2 (D9.3, D9.4) does with each element kind, as the spec gives it: a table, one
// row per kind, read by the resolver and by the tests' independent PE model, so that the two
// cannot drift apart. Each column is also a bitmask over element_kind, so that a lookup is one
// shift and test (the resolver's cancel, discard and transaction paths use these).
#pragma once

#include <cstdint>

#include "element.hpp"

namespace tracecodec::ete {

// Whether an element of a kind is a P0 element: one the speculation depth counts, that a
// Commit or Cancel element counts (D9.3.3.1 ProcessCommit(), D9.3.4.1 ProcessCancel()).
enum class p0_rule : std::uint8_t {
  never,
  always,                 // Atom, Exception, Q, Source Address
  unless_commtrans,       // Transaction Start, when TRCIDR0.COMMTRANS == 0 (D9.2.15.1)
  from_exception_packet,  // Transaction Failure in place of an exception (Exception packet
                          // TYPE 0x18: D9.2.13.2 ExceptionPacket() then UpdateSpecDepth(1));
                          // not the one a Discard, Overflow or PE Reset adds (D9.2.4.1)
  m_profile,              // ETMv4 Exception Return: P0 on an M-profile PE only (IHI0064 6.4)
};

struct element_behaviour {
  element_kind kind;
  p0_rule p0;
  // A Cancel leaves it in place when the P0 elements before and after it are canceled:
  // Table D9.2 "Keep" or "Process" (D9.3.4.1 ProcessCancel(): AnalyzeElement, not removed).
  // Timestamp Marker is not in Table D9.2: D2.4.3 R_CRVRK, not canceled. Commit, Discard,
  // Overflow are "Illegal" there; Transaction Commit and Instrumentation are not in the table
  // and ProcessCancel() pops them.
  bool survives_cancel;
  // Passed on when a Discard drops the speculative elements (D9.3.5.1 ProcessDiscard():
  // Event, Trace Info, Timestamp). Timestamp Marker, not named there, is passed on with the
  // Timestamps (the analysis ignores one a Discard separates from its Timestamp: R_JNMJY).
  bool survives_discard;
  // Passed on when a transaction ends without a Transaction Commit (D9.4.4.1
  // ProcessTransactionFailure(), and a Discard's EndTransaction()): what is not execution.
  // Events (R_XPKFL), Cycle Counts (R_XZBFV: the cumulative count keeps them), Timestamps and
  // Timestamp Markers, Trace Info, Overflow.
  bool survives_transaction_failure;
};

// One row per element kind, in element_kind order (checked below).
inline constexpr element_behaviour element_behaviours[] = {
    //  kind                                P0 rule                      cancel discard failure
    {element_kind::trace_info,           p0_rule::never,                 true,  true,  true},
    {element_kind::trace_on,             p0_rule::never,                 false, false, false},
    {element_kind::atom,                 p0_rule::always,                false, false, false},
    {element_kind::exception,            p0_rule::always,                false, false, false},
    {element_kind::target_address,       p0_rule::never,                 false, false, false},
    {element_kind::source_address,       p0_rule::always,                false, false, false},
    {element_kind::context,              p0_rule::never,                 false, false, false},
    {element_kind::q,                    p0_rule::always,                false, false, false},
    {element_kind::timestamp,            p0_rule::never,                 true,  true,  true},
    {element_kind::timestamp_marker,     p0_rule::never,                 true,  true,  true},
    {element_kind::cycle_count,          p0_rule::never,                 true,  false, true},
    {element_kind::commit,               p0_rule::never,                 false, false, false},
    {element_kind::cancel,               p0_rule::never,                 false, false, false},
    {element_kind::mispredict,           p0_rule::never,                 false, false, false},
    {element_kind::discard,              p0_rule::never,                 false, false, false},
    {element_kind::overflow,             p0_rule::never,                 false, false, true},
    {element_kind::event,                p0_rule::never,                 true,  true,  true},
    {element_kind::transaction_start,    p0_rule::unless_commtrans,      false, false, false},
    {element_kind::transaction_commit,   p0_rule::never,                 false, false, false},
    {element_kind::transaction_failure,  p0_rule::from_exception_packet, false, false, false},
    {element_kind::instrumentation,      p0_rule::never,                 false, false, false},
    // ETMv4 only (not in Table D9.2): execution, as the atoms and exceptions are.
    {element_kind::exception_return,     p0_rule::m_profile,             false, false, false},
    {element_kind::function_return,      p0_rule::always,                false, false, false},
};

constexpr const element_behaviour& behaviour_of(element_kind k) noexcept {
  return element_behaviours[static_cast<unsigned>(k)];
}

namespace detail {
constexpr bool has_behaviour_row(element_kind k) noexcept {
  for (const element_behaviour& row : element_behaviours)
    if (row.kind == k) return true;
  return false;
}
constexpr bool behaviour_rows_in_kind_order() noexcept {
  for (unsigned i = 0; i < element_kind_count; ++i)
    if (static_cast<unsigned>(element_behaviours[i].kind) != i) return false;
  return true;
}
// The kinds whose row has `column` set, as bits (1 << kind).
constexpr std::uint32_t kinds_where(bool element_behaviour::*column) noexcept {
  std::uint32_t mask = 0;
  for (const element_behaviour& row : element_behaviours)
    if (row.*column) mask |= 1u << static_cast<unsigned>(row.kind);
  return mask;
}
}  // namespace detail

// Every kind of the element list has a row, and row i is kind i (behaviour_of() indexes).
#define TRACECODEC_ETE_BEHAVIOUR_ROW(id)                  \
  static_assert(detail::has_behaviour_row(element_kind::id), \
                "element_behaviours has no row for element_kind::" #id);
TRACECODEC_ETE_ELEMENT_KINDS(TRACECODEC_ETE_BEHAVIOUR_ROW)
#undef TRACECODEC_ETE_BEHAVIOUR_ROW
static_assert(sizeof element_behaviours / sizeof element_behaviours[0] == element_kind_count,
              "element_behaviours needs exactly one row per element kind");
static_assert(detail::behaviour_rows_in_kind_order(),
              "element_behaviours rows must be in element_kind order");
static_assert(element_kind_count <= 32, "the behaviour masks are 32 bits wide");

inline constexpr std::uint32_t survives_cancel_kinds =
    detail::kinds_where(&element_behaviour::survives_cancel);
inline constexpr std::uint32_t survives_discard_kinds =
    detail::kinds_where(&element_behaviour::survives_discard);
inline constexpr std::uint32_t survives_transaction_failure_kinds =
    detail::kinds_where(&element_behaviour::survives_transaction_failure);

constexpr bool survives_cancel(element_kind k) noexcept {
  return ((survives_cancel_kinds >> static_cast<unsigned>(k)) & 1u) != 0;
}
constexpr bool survives_discard(element_kind k) noexcept {
  return ((survives_discard_kinds >> static_cast<unsigned>(k)) & 1u) != 0;
}
constexpr bool survives_transaction_failure(element_kind k) noexcept {
  return ((survives_transaction_failure_kinds >> static_cast<unsigned>(k)) & 1u) != 0;
}

// Whether an element of kind `k` is P0 under TRCIDR0.COMMTRANS `commtrans`, where that
// depends only on the kind and TRCIDR0.COMMTRANS (not for p0_rule::from_exception_packet,
// which depends on the packet, nor p0_rule::m_profile, which depends on the PE: false here).
constexpr bool p0_by_kind(element_kind k, bool commtrans) noexcept {
  const p0_rule r = behaviour_of(k).p0;
  return r == p0_rule::always || (r == p0_rule::unless_commtrans && !commtrans);
}

}  // namespace tracecodec::ete
