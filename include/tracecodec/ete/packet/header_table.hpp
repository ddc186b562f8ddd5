// SPDX-License-Identifier: Apache-2.0
// The 256-entry header dispatch table, computed at compile time from a configuration
// (D9.2.2.1 Parse_Trace()). Single-byte packets (atoms, mispredict, cancel format 2/3,
// cycle count format 3, events) are fully decoded by the table: the decoder only copies.
#pragma once

#include <cstddef>
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
  // The same for h < 256 held in a full-width register: the decoder's hot loop tests the
  // byte too, and an 8-bit index there made GCC keep a second, widened copy of it.
  constexpr const header_entry& at(std::size_t h) const noexcept { return entry[h]; }
};

namespace detail {

TRACECODEC_FLAT constexpr header_entry make(packet_kind k, payload_op op, std::uint8_t aux = 0) noexcept {
  header_entry e{};
  e.kind = k;
  e.op = op;
  e.aux = aux;
  return e;
}

TRACECODEC_FLAT constexpr header_entry atoms(packet_kind k, std::uint32_t bits, std::uint8_t n) noexcept {
  header_entry e = make(k, payload_op::none);
  e.atoms = bits;
  e.atom_count = n;
  return e;
}

// D9.2.10: atom headers 0xC0-0xFF.
TRACECODEC_FLAT constexpr header_entry atom_entry(std::uint8_t h) noexcept {
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

// atom_entry() of every atom header h, at [h & 0x3f]: for the layers that have a run of atom
// header bytes but not the decoder's table (atom headers mean the same in every
// configuration).
struct atom_entry_table {
  header_entry entry[64];
  constexpr const header_entry& operator[](std::uint8_t h) const noexcept { return entry[h & 0x3fu]; }
};
inline constexpr atom_entry_table atom_entries = [] {
  atom_entry_table t{};
  for (unsigned h = 0; h < 64; ++h) t.entry[h] = atom_entry(static_cast<std::uint8_t>(0xc0 | h));
  return t;
}();
// One to eight atom packets at offset, offset+1, ..., their header bytes in word (offset's in
// the low byte, zero bytes above the last; atom headers are never zero, D9.2.10):
// f(offset, atom bits, atom count) for each, in order.
template <class F>
constexpr void each_atom_packet(std::uint64_t offset, std::uint64_t word, F&& f) noexcept {
  for (unsigned i = 0; word != 0; ++i, word >>= 8) {
    const header_entry& a = atom_entries[static_cast<std::uint8_t>(word)];
    f(offset + i, a.atoms, static_cast<unsigned>(a.atom_count));
  }
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

// Format 6 of n atoms (6 to 24): n - 1 E atoms, then the last, E or N (D5.46).
constexpr std::uint8_t atom_f6_header(unsigned n, bool last_taken) noexcept {
  return static_cast<std::uint8_t>(0xc0u | (last_taken ? 0u : 0x20u) | (n - 4u));
}
// The same mapping computed instead of looked up (the encoder's compact form, the element
// compressor's atom packing). The header of the atom packet that carries exactly these n
// atoms (bits, oldest in bit 0), or -1: formats 1-3 take any pattern of their count; 4 and 5 a
// few (D5.44-D5.46); format 6 is COUNT+3 E atoms then E (A=0) or N (A=1), COUNT 0..20. No
// pattern fits two formats, so the atoms alone choose the header.
constexpr int atom_header_for(std::uint8_t n, std::uint32_t atoms) noexcept {
  if (n <= 3) {
    if (n == 0 || (atoms >> n) != 0) return -1;
    return static_cast<int>((n == 1 ? 0xf6u : n == 2 ? 0xd8u : 0xf8u) | atoms);
  }
  if (n == 4) {
    if (atoms == 0b1110) return 0xdc;
    if (atoms == 0b0000) return 0xdd;
    if (atoms == 0b1010) return 0xde;
    if (atoms == 0b0101) return 0xdf;
  } else if (n == 5) {
    if (atoms == 0b11110) return 0xf5;
    if (atoms == 0b00000) return 0xd5;
    if (atoms == 0b01010) return 0xd6;
    if (atoms == 0b10101) return 0xd7;
  }
  if (n > 24 || (atoms >> n) != 0) return -1;
  const std::uint32_t es = (1u << (n - 1u)) - 1u;  // format 6: E^(n-1) first
  if ((atoms & es) != es) return -1;
  return atom_f6_header(n, ((atoms >> (n - 1u)) & 1u) != 0);
}
// The kind an atom header (0xC0-0xFF) decodes to (D9.2.10).
constexpr packet_kind atom_kind_of(std::uint8_t h) noexcept {
  using K = packet_kind;
  if ((h & 0xfe) == 0xf6) return K::atom_f1;
  if ((h & 0xfc) == 0xd8) return K::atom_f2;
  if ((h & 0xf8) == 0xf8) return K::atom_f3;
  if ((h & 0xfc) == 0xdc) return K::atom_f4;
  if (h == 0xf5) return K::atom_f5_1;
  if (h >= 0xd5 && h <= 0xd7) return K::atom_f5_2;
  return K::atom_f6;
}
// The header of a well-formed atom packet (kind, atoms, count), or -1.
constexpr int atom_header(packet_kind k, std::uint32_t atoms, std::uint8_t n) noexcept {
  const int h = atom_header_for(n, atoms);
  return h >= 0 && atom_kind_of(static_cast<std::uint8_t>(h)) == k ? h : -1;
}
// Every atom header's own packet maps back to it.
constexpr bool atom_header_matches_table() noexcept {
  for (unsigned h = 0xc0; h <= 0xff; ++h) {
    const header_entry e = atom_entry(static_cast<std::uint8_t>(h));
    if (atom_header(e.kind, e.atoms, e.atom_count) != static_cast<int>(h)) return false;
  }
  return true;
}
static_assert(atom_header_matches_table());

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
// The decoder's hot loop tells atom packets by their header byte alone (0xC0-0xFF, D9.2.10)
// and sends the other plain headers to the consumer as packets, never to an on_atoms: each of
// those headers is a plain atom packet whatever the configuration, and no other header is a
// plain packet with atoms.
constexpr bool atoms_are_headers_c0_to_ff() noexcept {
  for (unsigned h = 0; h < 256; ++h) {
    // An atom row legal in some configurations only would leave the others an empty entry.
    if (h >= 0xc0 && (candidates.count[h] == 0 || candidates.legal[h][candidates.count[h] - 1] != legal_when::always))
      return false;
    for (unsigned i = 0; i < candidates.count[h]; ++i) {
      const header_entry& e = candidates.entry[h][i];
      if ((h >= 0xc0) != (e.plain && e.atom_count != 0)) return false;
    }
  }
  return true;
}
static_assert(atoms_are_headers_c0_to_ff());

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
// The compact form of a configuration's table (firmware images, TRACECODEC_COMPACT): for each
// header an index into the table's distinct entries, each packed into 8 bytes; the atoms a
// header carries (atom formats, Mispredict and Cancel field A) are computed from the header
// byte as the header table computes them. About 0.9 KB instead of 4 KB; a lookup is an extra
// load and a few operations, so the other forms keep the 16-byte entries.
struct packed_entry {
  packet_kind kind = packet_kind::async;
  payload_op op = payload_op::reserved;
  std::uint8_t aux = 0, count = 0, flags = 0, ignored = 0;
  std::uint8_t bits = 0;  // 1 complete, 2 plain, [3:2] where the atoms come from (atoms_from)
  std::uint8_t unused = 0;
  constexpr bool operator==(const packed_entry&) const = default;
};
enum atoms_from : std::uint8_t { no_atoms, atom_header_bits, field_a, cancel_f3_bit };

constexpr atoms_from atom_source(header_bits b) noexcept {
  return b == header_bits::atoms                                          ? atom_header_bits
         : b == header_bits::mispredict_a || b == header_bits::cancel_f2 ? field_a
         : b == header_bits::cancel_f3                                    ? cancel_f3_bit
                                                                          : no_atoms;
}
// The atoms-source of the row header h resolves to in c (its entry's kind names the row).
constexpr atoms_from atom_source_of(const header_entry& e) noexcept {
  for (const packet_description& d : packet_descriptions.row)
    if (d.kind == e.kind) return atom_source(d.bits);
  return no_atoms;
}
constexpr packed_entry pack(const header_entry& e) noexcept {
  packed_entry p{};
  p.kind = e.kind;
  p.op = e.op;
  p.aux = e.aux;
  p.count = e.count;
  p.flags = e.flags;
  p.ignored = e.ignored;
  p.bits = static_cast<std::uint8_t>((e.complete ? 1u : 0u) | (e.plain ? 2u : 0u) |
                                     (e.op == payload_op::reserved ? 0u : atom_source_of(e) << 2));
  return p;
}
TRACECODEC_FLAT constexpr header_entry unpack(const packed_entry& p, std::uint8_t h) noexcept {
  header_entry e{};
  e.kind = p.kind;
  e.op = p.op;
  e.aux = p.aux;
  e.count = p.count;
  e.flags = p.flags;
  e.ignored = p.ignored;
  e.complete = (p.bits & 1u) != 0;
  e.plain = (p.bits & 2u) != 0;
  switch (static_cast<atoms_from>(p.bits >> 2)) {
    case atom_header_bits: {
      const header_entry a = atom_entry(h);
      e.atoms = a.atoms;
      e.atom_count = a.atom_count;
      break;
    }
    case field_a:
      e.atoms = mispredict_atoms[h & 3u];
      e.atom_count = mispredict_count[h & 3u];
      break;
    case cancel_f3_bit:
      e.atoms = h & 1u;
      e.atom_count = h & 1u;
      break;
    default: break;
  }
  return e;
}
constexpr unsigned distinct_entries(const config& c) noexcept {
  packed_entry seen[256]{};
  unsigned n = 0;
  for (unsigned h = 0; h < 256; ++h) {
    const packed_entry p = pack(entry_for(static_cast<std::uint8_t>(h), c));
    unsigned i = 0;
    while (i < n && !(seen[i] == p)) ++i;
    if (i == n) seen[n++] = p;
  }
  return n;
}
template <unsigned N>
struct compact_header_table {
  std::uint8_t index[256]{};
  packed_entry entry[N]{};
  TRACECODEC_FLAT constexpr header_entry operator[](std::uint8_t h) const noexcept {
    return unpack(entry[index[h]], h);
  }
  constexpr header_entry at(std::size_t h) const noexcept { return (*this)[static_cast<std::uint8_t>(h)]; }
};
template <unsigned N>
constexpr compact_header_table<N> make_compact_header_table(const config& c) noexcept {
  compact_header_table<N> t{};
  unsigned n = 0;
  for (unsigned h = 0; h < 256; ++h) {
    const packed_entry p = pack(entry_for(static_cast<std::uint8_t>(h), c));
    unsigned i = 0;
    while (i < n && !(t.entry[i] == p)) ++i;
    if (i == n) t.entry[n++] = p;
    t.index[h] = static_cast<std::uint8_t>(i);
  }
  return t;
}
// Each header means the same in both forms.
template <unsigned N>
constexpr bool same_as_full_table(const compact_header_table<N>& t, const config& c) noexcept {
  for (unsigned h = 0; h < 256; ++h) {
    const header_entry a = t[static_cast<std::uint8_t>(h)];
    const header_entry b = entry_for(static_cast<std::uint8_t>(h), c);
    if (a.atoms != b.atoms || a.kind != b.kind || a.op != b.op || a.atom_count != b.atom_count ||
        a.aux != b.aux || a.count != b.count || a.flags != b.flags || a.ignored != b.ignored ||
        a.complete != b.complete || a.plain != b.plain)
      return false;
  }
  return true;
}
template <class FixedConfig>
inline constexpr auto compact_header_table_for =
    make_compact_header_table<distinct_entries(FixedConfig::value)>(FixedConfig::value);
}  // namespace detail

namespace detail {
// Which kinds' rows a configuration allows, a bit per kind: the encoder's check that a
// header it writes exists and means its kind (a fixed configuration needs no table of 256
// headers for that). Where a row's header range holds other rows too (0x00, the Exception
// packet 0x06), the payload says the kind: those rows count as allowed.
struct legal_kind_bits {
  std::uint64_t bits[(packet_kind_count + 63) / 64]{};
};
constexpr bool header_means(std::uint8_t h, packet_kind k, const config& c) noexcept {
  const header_entry e = entry_for(h, c);
  if (e.op == payload_op::reserved || e.op == payload_op::unsupported) return false;
  if (e.op == payload_op::exception || e.op == payload_op::extension) return true;
  return e.kind == k;
}
constexpr legal_kind_bits legal_kinds(const config& c) noexcept {
  legal_kind_bits t{};
  for (const packet_description& d : packet_descriptions.row) {
    bool ok = false;  // some header of the row means the row's kind
    for (unsigned h = 0; h < 256 && !ok; ++h)
      ok = d.matches(h) && header_means(static_cast<std::uint8_t>(h), d.kind, c);
    const unsigned i = static_cast<unsigned>(d.kind);
    if (ok) t.bits[i / 64] |= std::uint64_t{1} << (i % 64);
  }
  return t;
}
// Whether a kind of packet exists in a configuration: always so for a run-time one (its
// table decides); a compile-time constant for a fixed one, so that the code that writes a
// kind the configuration has not folds away.
template <class Config>
constexpr bool kind_exists(packet_kind k) noexcept {
  if constexpr (Config::is_fixed) {
    constexpr legal_kind_bits legal = legal_kinds(Config::value);
    const unsigned i = static_cast<unsigned>(k);
    return ((legal.bits[i / 64] >> (i % 64)) & 1u) != 0;
  } else {
    return true;
  }
}
// For every row and header of its range, the bit (and, for an Event, the events
// implemented, D5.68) says what the table says.
constexpr bool legal_kinds_agree(const legal_kind_bits& t, const config& c) noexcept {
  for (const packet_description& d : packet_descriptions.row) {
    const unsigned i = static_cast<unsigned>(d.kind);
    const bool bit = ((t.bits[i / 64] >> (i % 64)) & 1u) != 0;
    for (unsigned h = 0; h < 256; ++h) {
      if (!d.matches(h)) continue;
      const bool by_bit = bit && (d.kind != packet_kind::event || ((h & 0xfu) >> c.numevent) == 0);
      if (by_bit != header_means(static_cast<std::uint8_t>(h), d.kind, c)) return false;
    }
  }
  return true;
}
}  // namespace detail

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
  // A fixed configuration's table is a constant; in the compact form, the compact one.
  constexpr const auto& table() const noexcept {
    if constexpr (Config::is_fixed && tracecodec::detail::compact) {
      static_assert(same_as_full_table(compact_header_table_for<Config>, Config::value));
      return compact_header_table_for<Config>;
    } else if constexpr (Config::is_fixed) {
      return header_table_for<Config>;
    } else {
      return table_;
    }
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
