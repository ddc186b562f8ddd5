// SPDX-License-Identifier: Apache-2.0
// The 256-entry header dispatch table, computed at compile time from a configuration
// (D9.2.2.1 Parse_Trace()). Single-byte packets (atoms, mispredict, cancel format 2/3,
// cycle count format 3, events) are fully decoded by the table: the decoder only copies.
#pragma once

#include <cstdint>
#include <type_traits>

#include "config.hpp"
#include "packet.hpp"

namespace tracecodec::ete {

// How the payload after the header is read. One entry per payload layout, shared by every
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
};

struct alignas(16) header_entry {  // 16 bytes: an index is one shift
  std::uint32_t atoms = 0;  // atom bits, oldest in bit 0, 1 = E
  packet_kind kind = packet_kind::async;
  payload_op op = payload_op::reserved;
  std::uint8_t atom_count = 0;
  std::uint8_t aux = 0;     // isa (address ops), exact index, event bits, cycle-count BB(BB)
  std::uint8_t count = 0;   // cancel count (Cancel 2/3), commit count (Cycle Count 3_0)
  std::uint8_t flags = 0;   // packet_flag bits preset by the header
  std::uint8_t ignored = 0; // Cycle Count 2_1/3_1 ignored bits (see packet::ignored_bits)
  bool plain = false;       // header-only, and kind, atoms, atom_count are all its fields
};

struct header_table {
  header_entry entry[256];
  constexpr const header_entry& operator[](std::uint8_t h) const noexcept { return entry[h]; }
};

namespace detail {

constexpr header_entry make(packet_kind k, payload_op op, std::uint8_t aux = 0) noexcept {
  header_entry e{};
  e.kind = k;
  e.op = op;
  e.aux = aux;
  return e;
}

constexpr header_entry atoms(packet_kind k, std::uint32_t bits, std::uint8_t n) noexcept {
  header_entry e = make(k, payload_op::none);
  e.atoms = bits;
  e.atom_count = n;
  return e;
}

// D9.2.10: atom headers 0xC0-0xFF.
constexpr header_entry atom_entry(std::uint8_t h) noexcept {
  using K = packet_kind;
  if ((h & 0xfe) == 0xf6) return atoms(K::atom_f1, h & 1u, 1);
  if ((h & 0xfc) == 0xd8) return atoms(K::atom_f2, h & 3u, 2);
  if ((h & 0xf8) == 0xf8) return atoms(K::atom_f3, h & 7u, 3);
  if ((h & 0xfc) == 0xdc) {
    constexpr std::uint32_t f4[4] = {0b1110, 0b0000, 0b1010, 0b0101};  // NEEE NNNN NENE ENEN
    return atoms(K::atom_f4, f4[h & 3u], 4);
  }
  if (h == 0xf5) return atoms(K::atom_f5_1, 0b11110, 5);  // NEEEE
  if (h == 0xd5 || h == 0xd6 || h == 0xd7) {
    constexpr std::uint32_t f52[4] = {0, 0b00000, 0b01010, 0b10101};  // -, NNNNN, NENEN, ENENE
    return atoms(K::atom_f5_2, f52[h & 3u], 5);
  }
  // Format 6: COUNT+3 E atoms then E (A=0) or N (A=1); COUNT is 0..20 (0xC0-0xD4, 0xE0-0xF4).
  const unsigned count = h & 0x1fu;
  const bool last_n = (h >> 5) & 1u;
  const unsigned e = count + 3;
  return atoms(K::atom_f6, ((1u << e) - 1u) | (last_n ? 0u : (1u << e)),
               static_cast<std::uint8_t>(e + 1));
}

// The encoder's atom path (D9.2.10): from an atom packet's fields to its header by one
// multiply and two loads. The key packs atoms (bits 0-31), kind (32-39) and atom_count
// (40-47), as struct packet stores them; multiplying by atom_hash_multiplier and keeping the
// top 8 bits sends each of the 64 atom headers 0xC0-0xFF to a slot of its own (the multiplier
// was found by a search; make_atom_slots() checks at compile time that no two collide). An
// empty slot holds a key no packet has (bits above 47 set). A packet's key equals its slot's
// exactly when atom_entry(header) decodes to that very packet, and atom headers mean the
// same in every configuration (entry_for), so a match is a header the decoder's own table
// turns back into this packet.
constexpr std::uint64_t atom_key(std::uint32_t atoms, packet_kind k, std::uint8_t n) noexcept {
  return atoms | (std::uint64_t{static_cast<std::uint8_t>(k)} << 32) | (std::uint64_t{n} << 40);
}
inline constexpr std::uint64_t atom_hash_multiplier = 0xa8bd5ab0e2f11075ull;
inline constexpr std::uint64_t atom_key_mask = (1ull << 48) - 1;
constexpr unsigned atom_slot(std::uint64_t key) noexcept {
  return static_cast<unsigned>((key * atom_hash_multiplier) >> 56);
}
struct atom_slot_table {
  std::uint64_t key[256]{};
  std::uint8_t header[256]{};
  bool perfect = true;
};
constexpr atom_slot_table make_atom_slots() noexcept {
  atom_slot_table t{};
  for (auto& k : t.key) k = ~0ull;
  for (unsigned h = 0xc0; h <= 0xff; ++h) {
    const header_entry e = atom_entry(static_cast<std::uint8_t>(h));
    const std::uint64_t key = atom_key(e.atoms, e.kind, e.atom_count);
    const unsigned i = atom_slot(key);
    if (t.key[i] != ~0ull) t.perfect = false;
    t.key[i] = key;
    t.header[i] = static_cast<std::uint8_t>(h);
  }
  return t;
}
inline constexpr atom_slot_table atom_slots = make_atom_slots();
static_assert(atom_slots.perfect, "two atom headers share a hash slot: choose another multiplier");

// Atoms of Mispredict / Cancel format 2 field A (D9.2.9.2, D9.2.8.5): -, E, EE, N.
constexpr std::uint32_t mispredict_atoms[4] = {0, 1, 3, 0};
constexpr std::uint8_t mispredict_count[4] = {0, 1, 2, 1};

constexpr header_entry entry_for(std::uint8_t h, const config& c) noexcept {
  using K = packet_kind;
  using O = payload_op;
  const header_entry reserved{};
  switch (h) {
    case 0x00: return make(K::async, O::extension);
    case 0x01: return make(K::trace_info, O::trace_info);
    case 0x02:
    case 0x03: {
      if (c.tssize == 0) return reserved;
      header_entry e = make(K::timestamp, O::timestamp);
      e.flags = (h & 1u) ? packet_flag::has_count : 0;
      return e;
    }
    case 0x04: return make(K::trace_on, O::none);
    case 0x06: return make(K::exception_exact, O::exception);
    case 0x09: return c.has_instrumentation() ? make(K::instrumentation, O::instrumentation)
                                              : reserved;
    case 0x0a: return make(K::transaction_start, O::none);
    case 0x0b: return make(K::transaction_commit, O::none);
    case 0x0c:
    case 0x0d: {
      if (!c.trccci) return reserved;
      if (c.commopt) {
        header_entry e = make(K::cycle_count_f2_1, O::cycle_count_f2);
        e.ignored = static_cast<std::uint8_t>(((h & 1u) ^ 1u) << 4);  // F, canonical 1
        return e;
      }
      return make(h == 0x0c ? K::cycle_count_f2_0_small : K::cycle_count_f2_0_large,
                  O::cycle_count_f2);
    }
    case 0x0e:
      if (!c.trccci) return reserved;
      return make(c.commopt ? K::cycle_count_f1_1 : K::cycle_count_f1_0, O::cycle_count_f1);
    case 0x0f: {
      if (!c.trccci) return reserved;
      if (!c.commopt) return make(K::cycle_count_f1_0_unknown, O::cycle_count_f1);
      header_entry e = make(K::cycle_count_f1_1_unknown, O::none);
      e.flags = packet_flag::cycles_unknown;
      return e;
    }
    case 0x2d: return c.maxspec ? make(K::commit, O::leb_count) : reserved;
    case 0x2e:
    case 0x2f: {
      if (!c.maxspec) return reserved;
      header_entry e = make(K::cancel_f1, O::leb_count);
      e.flags = (h & 1u) ? packet_flag::mispredict : 0;
      return e;
    }
    case 0x70: return make(K::ignore, O::none);
    case 0x80: return make(K::context_same, O::none);
    case 0x81: return make(K::context, O::context);
    case 0x82: return make(K::address_ctx_32_is0, O::addr_ctx_32, 0);
    case 0x83: return make(K::address_ctx_32_is1, O::addr_ctx_32, 1);
    case 0x85: return make(K::address_ctx_64_is0, O::addr_ctx_64, 0);
    case 0x86: return make(K::address_ctx_64_is1, O::addr_ctx_64, 1);
    case 0x88: return (c.tsmark && c.tssize) ? make(K::timestamp_marker, O::none) : reserved;
    case 0x90:
    case 0x91:
    case 0x92: return make(K::address_exact, O::addr_exact, h & 3u);
    case 0x95: return make(K::address_short_is0, O::addr_short, 0);
    case 0x96: return make(K::address_short_is1, O::addr_short, 1);
    case 0x9a: return make(K::address_32_is0, O::addr_32, 0);
    case 0x9b: return make(K::address_32_is1, O::addr_32, 1);
    case 0x9d: return make(K::address_64_is0, O::addr_64, 0);
    case 0x9e: return make(K::address_64_is1, O::addr_64, 1);
    case 0xb0:
    case 0xb1:
    case 0xb2: return make(K::source_exact, O::addr_exact, h & 3u);
    case 0xb4: return make(K::source_short_is0, O::addr_short, 0);
    case 0xb5: return make(K::source_short_is1, O::addr_short, 1);
    case 0xb6: return make(K::source_32_is0, O::addr_32, 0);
    case 0xb7: return make(K::source_32_is1, O::addr_32, 1);
    case 0xb8: return make(K::source_64_is0, O::addr_64, 0);
    case 0xb9: return make(K::source_64_is1, O::addr_64, 1);
    default: break;
  }
  if (h >= 0x10 && h <= 0x1f) {  // Cycle Count format 3 (D9.2.16.2)
    if (!c.trccci) return reserved;
    header_entry e = make(c.commopt ? K::cycle_count_f3_1 : K::cycle_count_f3_0, O::none);
    e.aux = h & 3u;  // BB
    if (c.commopt)
      e.ignored = (h >> 2) & 3u;  // AA, canonical 00 (D5.34)
    else
      e.count = static_cast<std::uint8_t>(((h >> 2) & 3u) + 1);  // AA + 1 committed
    return e;
  }
  if (h >= 0x30 && h <= 0x33) {  // Mispredict (D5.39): any configuration
    header_entry e = atoms(K::mispredict, mispredict_atoms[h & 3u], mispredict_count[h & 3u]);
    e.flags = packet_flag::mispredict;
    return e;
  }
  if (h >= 0x34 && h <= 0x37) {  // Cancel format 2 (D5.37)
    if (!c.maxspec) return reserved;
    header_entry e = atoms(K::cancel_f2, mispredict_atoms[h & 3u], mispredict_count[h & 3u]);
    e.count = 1;
    e.flags = packet_flag::mispredict;
    return e;
  }
  if (h >= 0x38 && h <= 0x3f) {  // Cancel format 3 (D5.38)
    if (!c.maxspec) return reserved;
    header_entry e = atoms(K::cancel_f3, h & 1u, h & 1u);
    e.count = static_cast<std::uint8_t>(((h >> 1) & 3u) + 2);
    e.flags = packet_flag::mispredict;
    return e;
  }
  if (h >= 0x71 && h <= 0x7f) {  // Event (D5.68): only the implemented ETEEvents
    if ((h & 0xfu) >> c.numevent) return reserved;
    header_entry e = make(K::event, O::none);
    e.aux = h & 0xfu;
    return e;
  }
  if (h >= 0xa0 && h <= 0xaf) {  // Q (D9.2.11.1); QSUPP bit 0: counted, bit 1: uncounted
    const bool counted = c.qsupp & 1u, uncounted = c.qsupp & 2u;
    switch (h & 0xfu) {
      case 0x0:
      case 0x1:
      case 0x2: return counted ? make(K::q_exact, O::q_exact, h & 3u) : reserved;
      case 0x5: return counted ? make(K::q_short_is0, O::q_short, 0) : reserved;
      case 0x6: return counted ? make(K::q_short_is1, O::q_short, 1) : reserved;
      case 0xa: return counted ? make(K::q_32_is0, O::q_32, 0) : reserved;
      case 0xb: return counted ? make(K::q_32_is1, O::q_32, 1) : reserved;
      case 0xc: return counted ? make(K::q_count, O::q_count) : reserved;
      case 0xf: {
        if (!uncounted) return reserved;
        header_entry e = make(K::q, O::none);
        e.flags = packet_flag::count_unknown;
        return e;
      }
      default: return reserved;
    }
  }
  if (h >= 0xc0) return atom_entry(h);
  return reserved;
}

}  // namespace detail

constexpr header_table make_header_table(const config& c) noexcept {
  header_table t{};
  for (unsigned h = 0; h < 256; ++h) {
    header_entry e = detail::entry_for(static_cast<std::uint8_t>(h), c);
    using K = packet_kind;
    e.plain = e.op == payload_op::none &&
              ((e.kind >= K::atom_f1 && e.kind <= K::atom_f6) || e.kind == K::trace_on ||
               e.kind == K::timestamp_marker || e.kind == K::transaction_start ||
               e.kind == K::transaction_commit || e.kind == K::ignore);
    t.entry[h] = e;
  }
  return t;
}

// The table of a compile-time configuration: one constant per configuration type.
template <class FixedConfig>
inline constexpr header_table header_table_for = make_header_table(FixedConfig::value);

namespace detail {
// A configuration with its header table, as decoder and encoder hold it: for a fixed
// configuration both are compile-time constants and this object is empty; for a run-time one
// the table is computed once, when the configuration is given.
template <class Config>
class configured {
 public:
  template <class C = Config, class = std::enable_if_t<C::is_fixed>>
  constexpr configured() noexcept {}
  constexpr explicit configured(const Config& c) noexcept : cfg_(c) {
    if constexpr (!Config::is_fixed) table_ = make_header_table(cfg_.get());
  }
  constexpr const config& get() const noexcept { return cfg_.get(); }
  constexpr error_code status() const noexcept { return cfg_.status(); }
  constexpr const header_table& table() const noexcept {
    if constexpr (Config::is_fixed)
      return header_table_for<Config>;
    else
      return table_;
  }

 private:
  struct no_table {};
  [[no_unique_address]] Config cfg_{};
  [[no_unique_address]] std::conditional_t<Config::is_fixed, no_table, header_table> table_{};
};
}  // namespace detail

}  // namespace tracecodec::ete
