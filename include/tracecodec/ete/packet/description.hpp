// SPDX-License-Identifier: Apache-2.0
// One description per ETE packet kind (D5.4-D5.75, plus Instrumentation, ETE 1.3, and the
// headers of ETE's predecessor ETMv4 that ETE reserves: Exception Return 0x07, Function Return
// 0x05, and the data-trace and conditional headers ETMv4 has but this codec does not decode): its
// header byte(s), how its payload is read, which configuration makes it legal, what the
// header itself says, its traits and its address form. The decoder's 256-entry header table,
// the encoder's kind -> header mapping, the exception and address-form families and the
// formatter's field choices are all computed from these rows at compile time.
//
// A new packet kind that reuses a payload layout is one row. A new layout is one row, one
// case of the decoder's parse() and one of the encoder's build().
#pragma once

#include <cstdint>

namespace tracecodec::ete {

// Instruction-set qualifier of an address (D5.3.2): IS0 word-aligned, IS1 halfword-aligned.
enum class isa : std::uint8_t { is0 = 0, is1 = 1 };

// How the payload after the header is read. One value per payload layout, shared by every
// packet kind that uses it (target, source, exception and Q packets share the address readers).
enum class payload_op : std::uint8_t {
  reserved,         // ReservedEncoding() in this configuration
  none,             // header only: everything comes from the table
  extension,        // 0x00: A-Sync, Discard, Overflow (D9.2.3.1)
  trace_info,       // D9.2.6.1
  timestamp,        // D9.2.16.1
  exception,        // D9.2.13.1
  cycle_count_f1,   // D9.2.16.2, COMMOPT-aware
  cycle_count_f2,   // D9.2.16.2
  leb_count,        // Commit, Cancel format 1: one ULEB128 field
  context,          // 0x81: ContextBytes (D9.2.14.9)
  addr_exact,       // D9.2.14.6
  addr_short,       // D9.2.14.4
  addr_32,          // D9.2.14.2
  addr_64,
  addr_ctx_32,      // D9.2.14.8
  addr_ctx_64,
  q_exact,          // D9.2.11.1: address form followed by COUNT
  q_short,
  q_32,
  q_count,          // COUNT only
  instrumentation,  // ETE 1.3: EL byte + 8-byte payload
  unsupported,      // ETMv4 data trace, conditional-instruction trace, data-sync markers:
                    // reported as error_code::unsupported_packet, decoding resumes at an A-Sync
};

// What in the trace unit's configuration makes a header legal (D9.2.2.1 Parse_Trace()).
enum class legal_when : std::uint8_t {
  always,
  timestamps,      // TRCIDR0.TSSIZE != 0
  ts_marker,       // TRCIDR0.TSMARK and timestamps
  cycles_commit,   // TRCIDR0.TRCCCI, COMMOPT 0: Cycle Count packets also commit
  cycles_only,     // TRCIDR0.TRCCCI, COMMOPT 1
  speculation,     // TRCIDR8.MAXSPEC != 0: Commit and Cancel packets
  q_counted,       // TRCIDR0.QSUPP bit 0
  q_uncounted,     // TRCIDR0.QSUPP bit 1
  events,          // the event number is below NUMEVENT (D5.68)
  instrumentation, // ETE 1.3
  ete,             // ETE only (reserved in ETMv4)
  etmv4,           // ETMv4 only (reserved in ETE)
  etmv4_m,         // ETMv4.2+ on an M-profile PE only
  ignore,          // ETE, ETMv4.3+
};

// What the header byte says beyond the kind (the bits the header table decodes).
enum class header_bits : std::uint8_t {
  none,
  index,          // exact-match address: history index in bits [1:0] (D9.2.14.6)
  atoms,          // atom formats 1-6 (D9.2.10)
  mispredict_a,   // Mispredict field A: -, E, EE, N (D9.2.9.2)
  cancel_f2,      // Cancel format 2: cancels 1, field A as Mispredict (D9.2.8.5)
  cancel_f3,      // Cancel format 3: CC in bits [2:1], A in bit 0 (D5.38)
  cycles_f3,      // Cycle Count format 3: AA in bits [3:2], BB in bits [1:0] (D9.2.16.2)
  cycles_f2_f,    // Cycle Count format 2, COMMOPT 1: F in bit 0 is ignored (D5.32)
  low_bit_flag,   // bit 0 sets the row's flag (Timestamp COUNT, Cancel format 1 mispredict)
  event,          // Event: V3..V0 in bits [3:0] (D5.68)
};

namespace packet_flag {
inline constexpr std::uint8_t has_context_id = 1;  // Context payload C bit: CONTEXTID follows
inline constexpr std::uint8_t has_vmid = 2;        // Context payload V bit: VMID follows
inline constexpr std::uint8_t cycles_unknown = 4;  // Cycle Count with UNKNOWN count
inline constexpr std::uint8_t count_unknown = 8;   // Q packet without count
inline constexpr std::uint8_t mispredict = 16;     // Cancel: a Mispredict element follows
inline constexpr std::uint8_t has_count = 32;      // Timestamp with COUNT (header 0x03)
inline constexpr std::uint8_t fault_pending = 64;  // ETMv4 Exception: P bit of the second byte
}  // namespace packet_flag

// What a packet kind carries (the fields a formatter prints and a round trip compares).
namespace kind_trait {
inline constexpr std::uint8_t address = 1;      // an address (target, exception, source, Q)
inline constexpr std::uint8_t context = 2;      // may carry a context
inline constexpr std::uint8_t atoms = 4;        // atom bits
inline constexpr std::uint8_t exception = 8;    // Exception packet (header 0x06, D5.13)
inline constexpr std::uint8_t source = 16;      // source address (D5.60-D5.66)
inline constexpr std::uint8_t q = 32;           // Q packet (D5.69-D5.75)
inline constexpr std::uint8_t cycle_count = 64; // Cycle Count packet (D5.27-D5.34)
}  // namespace kind_trait

// Address forms (D9.2.14): which packet family, how the address is sent, its isa.
enum class address_family : std::uint8_t { none, target, exception, source, q };
enum class address_width : std::uint8_t { exact, short_form, bits32, bits64 };
struct address_form {
  address_family family = address_family::none;
  address_width width = address_width::exact;
  isa sub_isa = isa::is0;
  bool with_context = false;
  constexpr bool operator==(const address_form&) const = default;
};

namespace detail {
constexpr address_form af(address_family f, address_width w, isa s, bool ctx = false) noexcept {
  return {f, w, s, ctx};
}
}  // namespace detail

// The rows. Columns: kind; header range lo..hi of (header & mask); payload layout; when the
// header is legal; what the header bits say; flags the header sets; traits; address form.
// Kinds that share a header (A-Sync/Discard/Overflow at 0x00, the Exception packets at 0x06)
// are told apart by their payload: the first row of the group is the one the header table
// dispatches to. An Exception row's address form names the address header that follows it.
#define TRACECODEC_ETE_PACKET_KINDS(K)                                                          \
  K(async, 0x00, 0x00, 0xff, extension, always, none, 0, 0, {})                                 \
  K(discard, 0x00, 0x00, 0xff, extension, always, none, 0, 0, {})                               \
  K(overflow, 0x00, 0x00, 0xff, extension, always, none, 0, 0, {})                              \
  K(trace_info, 0x01, 0x01, 0xff, trace_info, always, none, 0, 0, {})                           \
  K(trace_on, 0x04, 0x04, 0xff, none, always, none, 0, 0, {})                                   \
  K(timestamp, 0x02, 0x03, 0xff, timestamp, timestamps, low_bit_flag, F::has_count, 0, {})      \
  K(timestamp_marker, 0x88, 0x88, 0xff, none, ts_marker, none, 0, 0, {})                        \
  K(transaction_start, 0x0a, 0x0a, 0xff, none, ete, none, 0, 0, {})                             \
  K(transaction_commit, 0x0b, 0x0b, 0xff, none, ete, none, 0, 0, {})                            \
  K(exception_exact, 0x06, 0x06, 0xff, exception, always, none, 0, T::address | T::exception,   \
    af(X, W::exact, isa::is0))                                                                  \
  K(exception_short_is0, 0x06, 0x06, 0xff, exception, always, none, 0,                          \
    T::address | T::exception, af(X, W::short_form, isa::is0))                                  \
  K(exception_short_is1, 0x06, 0x06, 0xff, exception, always, none, 0,                          \
    T::address | T::exception, af(X, W::short_form, isa::is1))                                  \
  K(exception_32_is0, 0x06, 0x06, 0xff, exception, always, none, 0, T::address | T::exception,  \
    af(X, W::bits32, isa::is0))                                                                 \
  K(exception_32_is1, 0x06, 0x06, 0xff, exception, always, none, 0, T::address | T::exception,  \
    af(X, W::bits32, isa::is1))                                                                 \
  K(exception_64_is0, 0x06, 0x06, 0xff, exception, always, none, 0, T::address | T::exception,  \
    af(X, W::bits64, isa::is0))                                                                 \
  K(exception_64_is1, 0x06, 0x06, 0xff, exception, always, none, 0, T::address | T::exception,  \
    af(X, W::bits64, isa::is1))                                                                 \
  K(exception_ctx_32_is0, 0x06, 0x06, 0xff, exception, always, none, 0,                         \
    T::address | T::exception | T::context, af(X, W::bits32, isa::is0, true))                   \
  K(exception_ctx_32_is1, 0x06, 0x06, 0xff, exception, always, none, 0,                         \
    T::address | T::exception | T::context, af(X, W::bits32, isa::is1, true))                   \
  K(exception_ctx_64_is0, 0x06, 0x06, 0xff, exception, always, none, 0,                         \
    T::address | T::exception | T::context, af(X, W::bits64, isa::is0, true))                   \
  K(exception_ctx_64_is1, 0x06, 0x06, 0xff, exception, always, none, 0,                         \
    T::address | T::exception | T::context, af(X, W::bits64, isa::is1, true))                   \
  K(exception_unknown_address, 0x06, 0x06, 0xff, exception, always, none, 0, T::exception, {})  \
  K(transaction_failure, 0x06, 0x06, 0xff, exception, always, none, 0, T::exception, {})        \
  K(pe_reset, 0x06, 0x06, 0xff, exception, always, none, 0, T::exception, {})                   \
  K(cycle_count_f1_0_unknown, 0x0f, 0x0f, 0xff, cycle_count_f1, cycles_commit, none, 0, T::cycle_count, {}) \
  K(cycle_count_f1_1_unknown, 0x0f, 0x0f, 0xff, none, cycles_only, none, F::cycles_unknown,     \
    T::cycle_count, {})                                                                         \
  K(cycle_count_f1_0, 0x0e, 0x0e, 0xff, cycle_count_f1, cycles_commit, none, 0, T::cycle_count, {}) \
  K(cycle_count_f1_1, 0x0e, 0x0e, 0xff, cycle_count_f1, cycles_only, none, 0, T::cycle_count, {}) \
  K(cycle_count_f2_0_small, 0x0c, 0x0c, 0xff, cycle_count_f2, cycles_commit, none, 0,           \
    T::cycle_count, {})                                                                         \
  K(cycle_count_f2_0_large, 0x0d, 0x0d, 0xff, cycle_count_f2, cycles_commit, none, 0,           \
    T::cycle_count, {})                                                                         \
  K(cycle_count_f2_1, 0x0c, 0x0d, 0xff, cycle_count_f2, cycles_only, cycles_f2_f, 0,            \
    T::cycle_count, {})                                                                         \
  K(cycle_count_f3_0, 0x10, 0x1f, 0xff, none, cycles_commit, cycles_f3, 0, T::cycle_count, {})  \
  K(cycle_count_f3_1, 0x10, 0x1f, 0xff, none, cycles_only, cycles_f3, 0, T::cycle_count, {})    \
  K(commit, 0x2d, 0x2d, 0xff, leb_count, speculation, none, 0, 0, {})                           \
  K(cancel_f1, 0x2e, 0x2f, 0xff, leb_count, speculation, low_bit_flag, F::mispredict, 0, {})    \
  K(cancel_f2, 0x34, 0x37, 0xff, none, speculation, cancel_f2, F::mispredict, T::atoms, {})  \
  K(cancel_f3, 0x38, 0x3f, 0xff, none, speculation, cancel_f3, F::mispredict, T::atoms, {})     \
  K(mispredict, 0x30, 0x33, 0xff, none, always, mispredict_a, F::mispredict, T::atoms, {})      \
  K(atom_f1, 0xf6, 0xf6, 0xfe, none, always, atoms, 0, T::atoms, {})                            \
  K(atom_f2, 0xd8, 0xd8, 0xfc, none, always, atoms, 0, T::atoms, {})                            \
  K(atom_f3, 0xf8, 0xf8, 0xf8, none, always, atoms, 0, T::atoms, {})                            \
  K(atom_f4, 0xdc, 0xdc, 0xfc, none, always, atoms, 0, T::atoms, {})                            \
  K(atom_f5_1, 0xf5, 0xf5, 0xff, none, always, atoms, 0, T::atoms, {})                          \
  K(atom_f5_2, 0xd5, 0xd7, 0xff, none, always, atoms, 0, T::atoms, {})                          \
  K(atom_f6, 0xc0, 0xd4, 0xdf, none, always, atoms, 0, T::atoms, {})                            \
  K(address_exact, 0x90, 0x92, 0xff, addr_exact, always, index, 0, T::address,                  \
    af(A, W::exact, isa::is0))                                                                  \
  K(address_short_is0, 0x95, 0x95, 0xff, addr_short, always, none, 0, T::address,              \
    af(A, W::short_form, isa::is0))                                                             \
  K(address_short_is1, 0x96, 0x96, 0xff, addr_short, always, none, 0, T::address,              \
    af(A, W::short_form, isa::is1))                                                             \
  K(address_32_is0, 0x9a, 0x9a, 0xff, addr_32, always, none, 0, T::address,                     \
    af(A, W::bits32, isa::is0))                                                                 \
  K(address_32_is1, 0x9b, 0x9b, 0xff, addr_32, always, none, 0, T::address,                     \
    af(A, W::bits32, isa::is1))                                                                 \
  K(address_64_is0, 0x9d, 0x9d, 0xff, addr_64, always, none, 0, T::address,                     \
    af(A, W::bits64, isa::is0))                                                                 \
  K(address_64_is1, 0x9e, 0x9e, 0xff, addr_64, always, none, 0, T::address,                     \
    af(A, W::bits64, isa::is1))                                                                 \
  K(context_same, 0x80, 0x80, 0xff, none, always, none, 0, T::context, {})                      \
  K(context, 0x81, 0x81, 0xff, context, always, none, 0, T::context, {})                        \
  K(address_ctx_32_is0, 0x82, 0x82, 0xff, addr_ctx_32, always, none, 0, T::address | T::context, \
    af(A, W::bits32, isa::is0, true))                                                           \
  K(address_ctx_32_is1, 0x83, 0x83, 0xff, addr_ctx_32, always, none, 0, T::address | T::context, \
    af(A, W::bits32, isa::is1, true))                                                           \
  K(address_ctx_64_is0, 0x85, 0x85, 0xff, addr_ctx_64, always, none, 0, T::address | T::context, \
    af(A, W::bits64, isa::is0, true))                                                           \
  K(address_ctx_64_is1, 0x86, 0x86, 0xff, addr_ctx_64, always, none, 0, T::address | T::context, \
    af(A, W::bits64, isa::is1, true))                                                           \
  K(source_exact, 0xb0, 0xb2, 0xff, addr_exact, ete, index, 0, T::address | T::source,          \
    af(S, W::exact, isa::is0))                                                                  \
  K(source_short_is0, 0xb4, 0xb4, 0xff, addr_short, ete, none, 0, T::address | T::source,       \
    af(S, W::short_form, isa::is0))                                                             \
  K(source_short_is1, 0xb5, 0xb5, 0xff, addr_short, ete, none, 0, T::address | T::source,       \
    af(S, W::short_form, isa::is1))                                                             \
  K(source_32_is0, 0xb6, 0xb6, 0xff, addr_32, ete, none, 0, T::address | T::source,             \
    af(S, W::bits32, isa::is0))                                                                 \
  K(source_32_is1, 0xb7, 0xb7, 0xff, addr_32, ete, none, 0, T::address | T::source,             \
    af(S, W::bits32, isa::is1))                                                                 \
  K(source_64_is0, 0xb8, 0xb8, 0xff, addr_64, ete, none, 0, T::address | T::source,             \
    af(S, W::bits64, isa::is0))                                                                 \
  K(source_64_is1, 0xb9, 0xb9, 0xff, addr_64, ete, none, 0, T::address | T::source,             \
    af(S, W::bits64, isa::is1))                                                                 \
  K(ignore, 0x70, 0x70, 0xff, none, ignore, none, 0, 0, {})                                     \
  K(event, 0x71, 0x7f, 0xff, none, events, event, 0, 0, {})                                     \
  K(q, 0xaf, 0xaf, 0xff, none, q_uncounted, none, F::count_unknown, T::q, {})                   \
  K(q_count, 0xac, 0xac, 0xff, q_count, q_counted, none, 0, T::q, {})                           \
  K(q_exact, 0xa0, 0xa2, 0xff, q_exact, q_counted, index, 0, T::q | T::address,                 \
    af(Q, W::exact, isa::is0))                                                                  \
  K(q_short_is0, 0xa5, 0xa5, 0xff, q_short, q_counted, none, 0, T::q | T::address,              \
    af(Q, W::short_form, isa::is0))                                                             \
  K(q_short_is1, 0xa6, 0xa6, 0xff, q_short, q_counted, none, 0, T::q | T::address,              \
    af(Q, W::short_form, isa::is1))                                                             \
  K(q_32_is0, 0xaa, 0xaa, 0xff, q_32, q_counted, none, 0, T::q | T::address,                    \
    af(Q, W::bits32, isa::is0))                                                                 \
  K(q_32_is1, 0xab, 0xab, 0xff, q_32, q_counted, none, 0, T::q | T::address,                    \
    af(Q, W::bits32, isa::is1))                                                                 \
  K(instrumentation, 0x09, 0x09, 0xff, instrumentation, instrumentation, none, 0, 0, {})       \
  K(exception_return, 0x07, 0x07, 0xff, none, etmv4, none, 0, 0, {})                            \
  K(function_return, 0x05, 0x05, 0xff, none, etmv4_m, none, 0, 0, {})                           \
  K(data_sync_marker, 0x20, 0x2c, 0xff, unsupported, etmv4, none, 0, 0, {})                     \
  K(conditional, 0x40, 0x6f, 0xff, unsupported, etmv4, none, 0, 0, {})

enum class packet_kind : std::uint8_t {
#define TRACECODEC_ETE_ENUM(id, ...) id,
  TRACECODEC_ETE_PACKET_KINDS(TRACECODEC_ETE_ENUM)
#undef TRACECODEC_ETE_ENUM
};

inline constexpr unsigned packet_kind_count = 0
#define TRACECODEC_ETE_COUNT(id, ...) +1
    TRACECODEC_ETE_PACKET_KINDS(TRACECODEC_ETE_COUNT)
#undef TRACECODEC_ETE_COUNT
    ;

// (The kinds' names are in the formatting header, host/ete/format.hpp: a codec image has no
// strings.)
struct packet_description {
  packet_kind kind;
  std::uint8_t lo, hi, mask;  // headers h with lo <= (h & mask) <= hi
  payload_op layout;
  legal_when legal;
  header_bits bits;
  std::uint8_t flags;   // packet_flag bits the header sets (with low_bit_flag: when bit 0 is 1)
  std::uint8_t traits;  // kind_trait bits
  address_form form;

  constexpr bool matches(unsigned h) const noexcept {
    return (h & mask) >= lo && (h & mask) <= hi;
  }
};

namespace detail {
struct packet_description_table {
  packet_description row[packet_kind_count];
};
constexpr packet_description_table make_packet_descriptions() noexcept {
  using O = payload_op;
  using L = legal_when;
  using B = header_bits;
  using W = address_width;
  namespace F = packet_flag;
  namespace T = kind_trait;
  constexpr auto A = address_family::target, X = address_family::exception,
                 S = address_family::source, Q = address_family::q;
  (void)A, (void)X, (void)S, (void)Q;
  return {{
#define TRACECODEC_ETE_ROW(id, lo, hi, mask, layout, legal, bits, flags, traits, ...) \
  {packet_kind::id, lo, hi, mask, O::layout, L::legal, B::bits, flags, traits, __VA_ARGS__},
      TRACECODEC_ETE_PACKET_KINDS(TRACECODEC_ETE_ROW)
#undef TRACECODEC_ETE_ROW
  }};
}
}  // namespace detail

inline constexpr detail::packet_description_table packet_descriptions =
    detail::make_packet_descriptions();

constexpr const packet_description& describe(packet_kind k) noexcept {
  return packet_descriptions.row[static_cast<unsigned>(k)];
}

namespace detail {
// The Target Address kinds without context (D9.2.14.4-7) are the run address_exact ..
// address_64_is1 of the enum: the packet decoder and the element decoder test them as a range.
constexpr bool target_kinds_are_a_run() noexcept {
  for (const packet_description& d : packet_descriptions.row) {
    const bool in = d.kind >= packet_kind::address_exact && d.kind <= packet_kind::address_64_is1;
    if (in != (d.form.family == address_family::target && !d.form.with_context)) return false;
  }
  return true;
}
}  // namespace detail

namespace detail {
// The traits alone, a byte per kind: what code that runs reads (the rows are for building
// tables at compile time, and would take their whole size into an image).
struct kind_trait_table {
  std::uint8_t of[packet_kind_count];
};
constexpr kind_trait_table make_kind_traits() noexcept {
  kind_trait_table t{};
  for (const packet_description& d : packet_descriptions.row) t.of[static_cast<unsigned>(d.kind)] = d.traits;
  return t;
}
inline constexpr kind_trait_table kind_traits = make_kind_traits();
constexpr bool has_trait(packet_kind k, std::uint8_t trait) noexcept {
  return (kind_traits.of[static_cast<unsigned>(k)] & trait) != 0;
}
}  // namespace detail

constexpr bool has_address(packet_kind k) noexcept { return detail::has_trait(k, kind_trait::address); }
constexpr bool has_context(packet_kind k) noexcept { return detail::has_trait(k, kind_trait::context); }
constexpr bool has_atoms(packet_kind k) noexcept { return detail::has_trait(k, kind_trait::atoms); }
constexpr bool is_exception(packet_kind k) noexcept { return detail::has_trait(k, kind_trait::exception); }
constexpr bool is_source_address(packet_kind k) noexcept { return detail::has_trait(k, kind_trait::source); }
constexpr bool is_q(packet_kind k) noexcept { return detail::has_trait(k, kind_trait::q); }
constexpr bool is_cycle_count(packet_kind k) noexcept {
  return detail::has_trait(k, kind_trait::cycle_count);
}
constexpr const address_form& address_form_of(packet_kind k) noexcept { return describe(k).form; }

namespace detail {
// Every address form's kind, by family, width, isa and context: a lookup instead of a search,
// as the compressor chooses forms at run time.
struct address_kind_table {
  packet_kind kind[5][4][2][2];
};
constexpr address_kind_table make_address_kinds() noexcept {
  address_kind_table t{};
  for (auto& f : t.kind)
    for (auto& w : f)
      for (auto& s : w)
        for (auto& c : s) c = static_cast<packet_kind>(packet_kind_count);
  for (const packet_description& d : packet_descriptions.row) {
    const address_form& a = d.form;
    if (a.family == address_family::none) continue;
    for (unsigned s = 0; s < 2; ++s) {  // an exact match takes its isa from the history
      if (a.width != address_width::exact && s != static_cast<unsigned>(a.sub_isa)) continue;
      t.kind[static_cast<unsigned>(a.family)][static_cast<unsigned>(a.width)][s][a.with_context] = d.kind;
    }
  }
  return t;
}
inline constexpr address_kind_table address_kinds = make_address_kinds();
}  // namespace detail

// The kind of an address family's form, or packet_kind_count (as a packet_kind) if none.
constexpr packet_kind address_kind(address_family f, address_width w, isa s,
                                   bool with_context = false) noexcept {
  return detail::address_kinds.kind[static_cast<unsigned>(f)][static_cast<unsigned>(w)]
                                   [static_cast<unsigned>(s)][with_context ? 1 : 0];
}

// Whether every kind in [first, last] (enum order), and no other, has the trait: for code that
// tests a trait as a range of kinds.
constexpr bool kinds_with_trait_are(std::uint8_t trait, packet_kind first, packet_kind last) noexcept {
  for (const packet_description& d : packet_descriptions.row) {
    const bool in = d.kind >= first && d.kind <= last;
    if (in != ((d.traits & trait) != 0)) return false;
  }
  return true;
}

namespace detail {
constexpr bool rows_in_enum_order() noexcept {
  for (unsigned k = 0; k < packet_kind_count; ++k)
    if (static_cast<unsigned>(packet_descriptions.row[k].kind) != k) return false;
  return true;
}
// Every address form of a family is one row, and exception forms mirror the target forms
// (the exception's address header is the target packet's header, D9.2.13.1).
constexpr bool address_families_complete() noexcept {
  for (const packet_description& d : packet_descriptions.row) {
    const address_form& a = d.form;
    if (a.family == address_family::none) continue;
    if (address_kind(a.family, a.width, a.sub_isa, a.with_context) != d.kind) return false;
    for (const packet_description& o : packet_descriptions.row)  // no two rows, one form
      if (o.kind != d.kind && o.form == a) return false;
    if (((d.traits & kind_trait::address) == 0)) return false;
    if (a.family == address_family::exception &&
        address_kind(address_family::target, a.width, a.sub_isa, a.with_context) ==
            static_cast<packet_kind>(packet_kind_count))
      return false;
  }
  return true;
}
static_assert(rows_in_enum_order());
static_assert(address_families_complete());
}  // namespace detail

}  // namespace tracecodec::ete
