// SPDX-License-Identifier: Apache-2.0
// The 256-entry header dispatch table, computed at compile time from a configuration
// (D9.2.2.1 Parse_Trace()). Single-byte packets (atoms, mispredict, cancel format 2/3,
// cycle count format 3, events) are fully decoded by the table: the decoder only copies.
#pragma once

#include <cstdint>
#include <type_traits>

#include "../../detail/hot.hpp"
#include "config.hpp"
#include "description.hpp"
#include "packet.hpp"

namespace tracecodec::ete {

struct alignas(16) header_entry {  // 16 bytes: an index is one shift
  std::uint32_t atoms = 0;  // atom bits, oldest in bit 0, 1 = E
  packet_kind kind = packet_kind::async;
  payload_op op = payload_op::reserved;
  std::uint8_t atom_count = 0;
  std::uint8_t aux = 0;     // isa (address ops), exact index, event bits, cycle-count BB(BB)
  std::uint8_t count = 0;   // cancel count (Cancel 2/3), commit count (Cycle Count 3_0)
  std::uint8_t flags = 0;   // packet_flag bits preset by the header
  std::uint8_t ignored = 0; // Cycle Count 2_1/3_1 ignored bits (see packet::ignored_bits)
  bool complete = false;    // header-only, and every field comes from this entry
  bool plain = false;       // complete, and kind, atoms, atom_count are all its fields
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
inline constexpr std::uint32_t mispredict_atoms[4] = {0, 1, 3, 0};
inline constexpr std::uint8_t mispredict_count[4] = {0, 1, 2, 1};

// Whether a row's header is legal in this configuration (D9.2.2.1 Parse_Trace()).
constexpr bool legal(legal_when when, std::uint8_t h, const config& c) noexcept {
  switch (when) {
    case legal_when::always: return true;
    case legal_when::timestamps: return c.tssize != 0;
    case legal_when::ts_marker: return c.tsmark && c.tssize != 0;
    case legal_when::cycles_commit: return c.trccci && !c.commopt;
    case legal_when::cycles_only: return c.trccci && c.commopt;
    case legal_when::speculation: return c.maxspec != 0;
    case legal_when::q_counted: return (c.qsupp & 1u) != 0;
    case legal_when::q_uncounted: return (c.qsupp & 2u) != 0;
    case legal_when::events: return ((h & 0xfu) >> c.numevent) == 0;  // implemented ETEEvents
    case legal_when::instrumentation: return c.has_instrumentation();
    case legal_when::ete: return !c.etmv4();
    case legal_when::etmv4: return c.etmv4();
    case legal_when::etmv4_m:  // Armv8-M Function Return, from ETMv4.2 on
      return c.etmv4() && c.profile == pe_profile::m && c.version_minor >= 2;
    case legal_when::ignore: return !c.etmv4() || c.version_minor >= 3;  // ETMv4.3 added it
  }
  return false;
}

// The entry of header h for row d: what the header bits say (the row's header_bits).
constexpr header_entry entry_of(const packet_description& d, std::uint8_t h) noexcept {
  header_entry e = make(d.kind, d.layout);
  e.flags = d.flags;
  if (d.form.family != address_family::none) e.aux = static_cast<std::uint8_t>(d.form.sub_isa);
  switch (d.bits) {
    case header_bits::none: break;
    case header_bits::index: e.aux = h & 3u; break;
    case header_bits::atoms: {
      const header_entry a = atom_entry(h);
      e.atoms = a.atoms;
      e.atom_count = a.atom_count;
      break;
    }
    case header_bits::cancel_f2:
      e.count = 1;
      [[fallthrough]];
    case header_bits::mispredict_a:
      e.atoms = mispredict_atoms[h & 3u];
      e.atom_count = mispredict_count[h & 3u];
      break;
    case header_bits::cancel_f3:
      e.atoms = h & 1u;
      e.atom_count = h & 1u;
      e.count = static_cast<std::uint8_t>(((h >> 1) & 3u) + 2);
      break;
    case header_bits::cycles_f3:
      e.aux = h & 3u;  // BB
      if (d.legal == legal_when::cycles_only)
        e.ignored = (h >> 2) & 3u;  // AA, canonical 00 (D5.34)
      else
        e.count = static_cast<std::uint8_t>(((h >> 2) & 3u) + 1);  // AA + 1 committed
      break;
    case header_bits::cycles_f2_f:
      e.ignored = static_cast<std::uint8_t>(((h & 1u) ^ 1u) << 4);  // F, canonical 1
      break;
    case header_bits::low_bit_flag: e.flags = (h & 1u) ? d.flags : 0; break;
    case header_bits::event: e.aux = h & 0xfu; break;
  }
  // Header-only packets that need nothing but the table: no count, no header field in aux,
  // nothing from the retained state (context, cycle count threshold).
  e.complete = e.op == payload_op::none && e.count == 0 && e.aux == 0 &&
               !has_context(e.kind) && !is_cycle_count(e.kind);
  // ... and whose only fields are kind, atoms and atom_count.
  e.plain = e.complete && e.flags == 0 && e.ignored == 0;
  return e;
}

// What a header can mean, whatever the configuration: the entries of the rows whose header
// range holds it, in row order, up to the first row legal in every configuration (rows after
// it can never be chosen). A configuration's table takes the first legal one, so a run-time
// configuration's table is a few tests per header.
inline constexpr unsigned max_header_candidates = 2;
struct header_candidates {
  header_entry entry[256][max_header_candidates]{};
  legal_when legal[256][max_header_candidates]{};
  std::uint8_t count[256]{};
  bool fits = true;
};
constexpr header_candidates make_header_candidates() noexcept {
  header_candidates t{};
  for (unsigned h = 0; h < 256; ++h) {
    for (const packet_description& d : packet_descriptions.row) {
      if (!d.matches(h)) continue;
      if (t.count[h] == max_header_candidates) {
        t.fits = false;
        break;
      }
      t.entry[h][t.count[h]] = entry_of(d, static_cast<std::uint8_t>(h));
      t.legal[h][t.count[h]] = d.legal;
      ++t.count[h];
      if (d.legal == legal_when::always) break;
    }
  }
  return t;
}
inline constexpr header_candidates candidates = make_header_candidates();
static_assert(candidates.fits, "more rows share a header than max_header_candidates");

// The first row whose header range holds h and that this configuration allows. Rows that
// share a header (0x00, 0x06) resolve to the first of their group; rows that differ only in
// the configuration that allows them (the COMMOPT 0/1 Cycle Count forms) to the legal one.
constexpr header_entry entry_for(std::uint8_t h, const config& c) noexcept {
  for (unsigned i = 0; i < candidates.count[h]; ++i)
    if (legal(candidates.legal[h][i], h, c)) return candidates.entry[h][i];
  return header_entry{};
}

// The Exception packet's kind from the address header after its information byte
// (D9.2.13.1): the exception form of the target address form that header starts.
// packet_kind_count (as a packet_kind) where the byte starts no target address form.
struct exception_kind_table {
  packet_kind kind[256];
};
constexpr exception_kind_table make_exception_kinds() noexcept {
  exception_kind_table t{};
  for (unsigned h = 0; h < 256; ++h) {
    t.kind[h] = static_cast<packet_kind>(packet_kind_count);
    for (const packet_description& d : packet_descriptions.row)
      if (d.form.family == address_family::target && d.matches(h))
        t.kind[h] = address_kind(address_family::exception, d.form.width, d.form.sub_isa,
                                 d.form.with_context);
  }
  return t;
}
inline constexpr exception_kind_table exception_kinds = make_exception_kinds();

}  // namespace detail

constexpr header_table make_header_table(const config& c) noexcept {
  header_table t{};
  for (unsigned h = 0; h < 256; ++h) t.entry[h] = detail::entry_for(static_cast<std::uint8_t>(h), c);
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
    if constexpr (!Config::is_fixed) {
      if (std::is_constant_evaluated())
        table_ = make_header_table(cfg_.get());
      else
        make_table_out_of_line(table_, cfg_.get());
    }
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
  // At run time the table is built by a call, so that the decode functions that construct a
  // decoder do not carry its loop (see bench/README.md, issue 15).
  TRACECODEC_OUT_OF_LINE static void make_table_out_of_line(header_table& t, const config& c) noexcept {
    t = make_header_table(c);
  }
  struct no_table {};
  [[no_unique_address]] Config cfg_{};
  [[no_unique_address]] std::conditional_t<Config::is_fixed, no_table, header_table> table_{};
};
}  // namespace detail

}  // namespace tracecodec::ete
