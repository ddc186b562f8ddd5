// SPDX-License-Identifier: Apache-2.0
// ETE packet encoder: packet values -> bytes in a caller-provided buffer. It keeps the same
// retained state as the decoder (address history, timestamp, context, cycle-count threshold),
// so a producer hands it full addresses and timestamps plus the packet form it wants and gets
// the compressed bytes a trace unit would emit. Zero allocation; nothing is written on error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "config.hpp"
#include "../error.hpp"
#include "fields.hpp"
#include "header_table.hpp"
#include "../../detail/hot.hpp"
#include "packet.hpp"
#include "state.hpp"

namespace tracecodec::ete {

struct encode_result {
  std::uint32_t size = 0;  // bytes written (0 on error)
  error_code error = error_code::ok;
  constexpr explicit operator bool() const noexcept { return error == error_code::ok; }
};

// What encoding a sequence of packets did: the first `packets` were encoded into `size` bytes;
// when error is not ok, packet number `packets` was not (and nothing of it was written).
struct encode_many_result {
  std::size_t size = 0;
  std::size_t packets = 0;
  error_code error = error_code::ok;
  constexpr explicit operator bool() const noexcept { return error == error_code::ok; }
};

namespace detail {
// Which ways the element compressor (element/compressor.hpp) may take: its lean paths for the
// commonest elements (the default), or only the general one that builds a packet and encodes
// it (the reference the lean paths are tested against).
enum class compressor_paths : bool { general, lean };
}  // namespace detail

template <class Config, std::size_t Staging, detail::compressor_paths Paths>
class compressor;

template <class Config = runtime_config>
class encoder {
 public:
  template <class C = Config, class = std::enable_if_t<C::is_fixed>>
  constexpr encoder() noexcept { find_headers(); }
  constexpr explicit encoder(const runtime_config& c) noexcept : conf_(c) { find_headers(); }
  constexpr explicit encoder(const registers& r) noexcept : conf_(runtime_config(r)) {
    find_headers();
  }

  constexpr const config& cfg() const noexcept { return conf_.get(); }
  constexpr const stream_state& state() const noexcept { return st_; }
  constexpr error_code status() const noexcept { return conf_.status(); }
  constexpr void reset() noexcept { st_ = stream_state{}; }

  // Encodes one packet. Fields of `p` that give an encoding choice (addr_bytes, value_bytes, count_bytes,
  // size of an A-Sync) may be 0 for "shortest"; offset is ignored.
  TRACECODEC_HOT constexpr encode_result encode(const packet& p, std::uint8_t* out,
                                                std::size_t capacity) noexcept {
    // Atom packets are most of real trace (D6.11.2) and need no retained state. Anything
    // else, or an atom packet that is not well formed, takes the general path, which also
    // says why it fails.
    if (const int h = atom_header_of(p); h >= 0 && capacity != 0 &&
                                         conf_.status() == error_code::ok) [[likely]] {
      out[0] = static_cast<std::uint8_t>(h);
      return {1, error_code::ok};
    }
    return encode_general(p, out, capacity);
  }
  // The same into a buffer with room for any packet (room_bytes at out; an A-Sync at most
  // that long), for a producer that writes into a buffer of its own (the element compressor):
  // nothing is checked, copied or kept, and the bytes after the packet's may change, also when
  // it fails.
  static constexpr std::size_t room_bytes = 32;
  constexpr encode_result encode_in_room(const packet& p, std::uint8_t* out) noexcept {
    if (conf_.status() != error_code::ok) return {0, conf_.status()};
    // The atom path first, but in the compact form, where build() does them too.
    if (const int h = tracecodec::detail::compact ? -1 : atom_header_of(p); h >= 0) {
      out[0] = static_cast<std::uint8_t>(h);
      return {1, error_code::ok};
    }
    if (p.kind == packet_kind::async) {  // D5.4: 11 or more zeros then 0x80
      const std::uint64_t n = p.size ? p.size : 12;
      if (n < 12 || n > room_bytes) return {0, error_code::unencodable};
      for (std::uint64_t i = 0; i + 1 < n; ++i) out[i] = 0;
      out[n - 1] = 0x80;
      return {static_cast<std::uint32_t>(n), error_code::ok};
    }
    const int n = build(p, out, st_);
    if (n < 0) return {0, static_cast<error_code>(-n)};
    apply(p, st_);
    return {static_cast<std::uint32_t>(n), error_code::ok};
  }
  // ---- Packets whose form the element compressor chose against state() ---------------
  // Each writes one packet at o (room_bytes there) and updates the state as encode_in_room()
  // of the same packet would, without a packet struct or build()'s general checks. 0: nothing
  // written or changed (a header this configuration lacks, a value the form cannot carry);
  // the compressor then builds the packet, and build() says why. (Private: the caller must have
  // chosen a form that holds the value against the current state.)
 private:
  template <class, std::size_t, detail::compressor_paths>
  friend class compressor;

  // Target Address without context (D5.47-D5.54) of a, s: form 0 exact match (history entry
  // `index`), 1 short (`bytes` 1 or 2), 2 32-bit, 3 64-bit.
  constexpr unsigned write_target(std::uint8_t* o, std::uint64_t a, isa s, int form,
                                  unsigned index, unsigned bytes) noexcept {
    return write_address_form(o, headers_.target[form][s == isa::is1], a, s, form, index, bytes);
  }
  // Q with the address of a, s (D5.71-D5.75: form 0 exact match, 1 short, 2 32-bit; no 64-bit
  // form) and COUNT `count`.
  constexpr unsigned write_q(std::uint8_t* o, std::uint64_t a, isa s, int form, unsigned index,
                             unsigned bytes, std::uint32_t count) noexcept {
    if (form > 2) return 0;
    const unsigned n = write_address_form(o, headers_.q[form][s == isa::is1], a, s, form, index, bytes);
    if (n == 0) return 0;
    return n + detail::write_leb(o + n, count, detail::leb_size(count, detail::leb32), detail::leb32);
  }
  // The header h (0: none) and address payload of an address form, as write_target() says.
  constexpr unsigned write_address_form(std::uint8_t* o, std::uint8_t h, std::uint64_t a, isa s,
                                        int form, unsigned index, unsigned bytes) noexcept {
    if (h == 0) return 0;
    if (form == 0)
      h = static_cast<std::uint8_t>(h | (index & 3u));
    else if (a & detail::isa_alignment_mask(s))
      return 0;
    o[0] = h;
    unsigned n = 1;
    if (form == 1) {  // D9.2.14.4
      const unsigned shift = s == isa::is0 ? 2 : 1;
      o[1] = static_cast<std::uint8_t>(((a >> shift) & 0x7fu) | (bytes == 2 ? 0x80u : 0u));
      o[2] = static_cast<std::uint8_t>(a >> (shift + 7));  // a byte past the packet if bytes is 1
      n += bytes;
    } else if (form >= 2) {
      detail::write_long_address(o + 1, a, s, form == 3);
      n += form == 3 ? 8u : 4u;
    }
    st_.history.add(a, s);
    return n;
  }
  // The headers of the Target Address and Q address forms (form_header()), and of Timestamp,
  // Trace On and Timestamp Marker: found once, not per packet.
  constexpr void find_headers() noexcept {
    if constexpr (!tracecodec::detail::compact) {
      for (unsigned w = 0; w < 4; ++w)
        for (unsigned i = 0; i < 2; ++i) {
          const isa s = i ? isa::is1 : isa::is0;
          const auto width = static_cast<address_width>(w);
          headers_.target[w][i] = form_header(address_kind(address_family::target, width, s), w);
          if (w < 3) headers_.q[w][i] = form_header(address_kind(address_family::q, width, s), w);
        }
      headers_.timestamp = single_header(packet_kind::timestamp);
      headers_.trace_on = single_header(packet_kind::trace_on);
      headers_.timestamp_marker = single_header(packet_kind::timestamp_marker);
    }
  }
  // The header of address form `form` of kind k, if the configuration has it (for the exact
  // match, all three indexes), else 0.
  constexpr std::uint8_t form_header(packet_kind k, unsigned form) const noexcept {
    const std::uint8_t h = header_of(k);
    bool ok = header_ok(h, k);
    if (form == 0)
      ok = ok && header_ok(static_cast<std::uint8_t>(h | 1u), k) &&
           header_ok(static_cast<std::uint8_t>(h | 2u), k);
    return ok ? h : 0;
  }
  constexpr std::uint8_t single_header(packet_kind k) const noexcept {
    return exists(k) && header_ok(header_of(k), k) ? header_of(k) : 0;
  }
  // Timestamp without COUNT (D5.9), only the low bits that changed (D6.11.5).
  constexpr unsigned write_timestamp(std::uint8_t* o, std::uint64_t ts) noexcept {
    if (headers_.timestamp == 0) return 0;
    const detail::leb_field f = detail::leb_ts(cfg().ts_max_bytes());
    const std::uint64_t changed = ts ^ st_.timestamp;
    unsigned len = 1;
    while (len < f.max_bytes && (changed & ~detail::leb_mask(len)) != 0) ++len;
    if ((changed & ~detail::leb_mask(len)) != 0) return 0;
    o[0] = headers_.timestamp;
    const unsigned n = 1 + detail::write_leb(o + 1, ts & detail::leb_mask(len), len, f);
    st_.timestamp = ts;
    return n;
  }
  // Trace On or Timestamp Marker (k): the header alone.
  constexpr unsigned write_single(std::uint8_t* o, packet_kind k) noexcept {
    const std::uint8_t h = k == packet_kind::trace_on ? headers_.trace_on : headers_.timestamp_marker;
    if (h == 0) return 0;
    o[0] = h;
    return 1;
  }
  // Cycle Count of known cycles (D5.26-D5.34) in form k, carrying `count` commits in the COMMOPT
  // 0 forms; the form is one that holds them.
  constexpr unsigned write_cycle_count(std::uint8_t* o, packet_kind k, std::uint32_t cycles,
                                       std::uint32_t count) noexcept {
    using K = packet_kind;
    // (build() asks for Cycle Count format 2 with COMMOPT 0 by its small form, either form.)
    if (!exists(k == K::cycle_count_f2_0_large ? K::cycle_count_f2_0_small : k) ||
        cycles < st_.cc_threshold)
      return 0;
    const std::uint32_t v = cycles - st_.cc_threshold;
    unsigned n = 1;
    o[0] = header_of(k);
    switch (k) {
      case K::cycle_count_f3_0:  // D5.34
        o[0] = static_cast<std::uint8_t>(o[0] | ((count - 1) << 2) | v);
        break;
      case K::cycle_count_f3_1: o[0] = static_cast<std::uint8_t>(o[0] | v); break;
      case K::cycle_count_f2_0_small:  // D5.31-D5.33
        o[1] = static_cast<std::uint8_t>(((count - 1) << 4) | v);
        n = 2;
        break;
      case K::cycle_count_f2_0_large:
        o[1] = static_cast<std::uint8_t>(((count - cfg().maxspec + 15) << 4) | v);
        n = 2;
        break;
      case K::cycle_count_f2_1:
        o[0] = cycle_count_f2_1_f1;
        o[1] = static_cast<std::uint8_t>(0xf0u | v);
        n = 2;
        break;
      case K::cycle_count_f1_0:  // D5.27-D5.30
        n += detail::write_leb(o + n, count, detail::leb_size(count, detail::leb32), detail::leb32);
        [[fallthrough]];
      case K::cycle_count_f1_1:
        if (v >> detail::leb_count.width) return 0;
        n += detail::write_leb(o + n, v, detail::leb_size(v, detail::leb_count), detail::leb_count);
        break;
      default: return 0;
    }
    return header_ok(o[0], k) ? n : 0;
  }

 public:
  template <class Bytes>
  constexpr auto encode(const packet& p, Bytes& out) noexcept
      -> decltype(out.data(), out.size(), encode_result{}) {
    return encode(p, reinterpret_cast<std::uint8_t*>(out.data()), out.size());
  }

  // Encodes `count` packets in order, stopping at the first that cannot be encoded:
  // `packets` says how many were, `size` how many bytes they took, and `error` why the next
  // one was not (buffer_too_small: drain and call again from there). The state is that after
  // the last packet encoded, as if each had gone through encode(p, ...). For a producer that
  // queues packets, and for re-encoding a decoded stream: the loop keeps the configuration,
  // the cursor and the atom table in registers, which one call per packet cannot.
  constexpr encode_many_result encode(const packet* first, std::size_t count, std::uint8_t* out,
                                      std::size_t capacity) noexcept {
    if (conf_.status() != error_code::ok) return {0, 0, conf_.status()};
    if constexpr (tracecodec::detail::compact) {  // firmware: a packet at a time, less code
      std::size_t at = 0;
      for (std::size_t i = 0; i < count; ++i) {
        const encode_result r = encode(first[i], out + at, capacity - at);
        if (!r) return {at, i, r.error};
        at += r.size;
      }
      return {at, count, error_code::ok};
    }
    std::size_t at = 0, i = 0;
    while (i < count) {
      // Atom packets take one byte each, so up to `stop` none can overflow the buffer and
      // the inner loop needs no capacity test.
      const std::size_t room = capacity - at, left = count - i;
      const packet* q = first + i;
      const packet* const stop = q + (room < left ? room : left);
      std::uint8_t* o = out + at;
      bool other = false;  // q is a packet that is not an atom packet
      for (; stop - q >= 2; q += 2, o += 2) {  // two at a time: half the loop's own work
        prefetch_key(q + 0);
        prefetch_key(q + 1);
        const int h0 = atom_header_of(q[0]), h1 = atom_header_of(q[1]);
        if ((h0 | h1) < 0) {
          if (h0 >= 0) *o++ = static_cast<std::uint8_t>(h0), ++q;
          other = true;
          break;
        }
        o[0] = static_cast<std::uint8_t>(h0);
        o[1] = static_cast<std::uint8_t>(h1);
      }
      if (!other && q != stop) {
        if (const int h = atom_header_of(*q); h >= 0) *o++ = static_cast<std::uint8_t>(h), ++q;
      }
      i = static_cast<std::size_t>(q - first);
      at = static_cast<std::size_t>(o - out);
      if (i == count) break;
      // Exact-match target addresses are most of the rest (D9.2.14.6: the address is in the
      // history, so only its index is sent); header 0x90-0x92 exists in every configuration.
      const packet& p = first[i];
      if (p.kind == packet_kind::address_exact && at < capacity && exact_match(p, st_.history)) {
        out[at++] = static_cast<std::uint8_t>(header_of(packet_kind::address_exact) | p.index);
        st_.history.add(p.address, p.sub_isa);
        ++i;
        continue;
      }
      const encode_result r = encode_general(p, out + at, capacity - at);
      if (!r) return {at, i, r.error};
      at += r.size;
      ++i;
    }
    return {at, i, error_code::ok};
  }

 private:
  constexpr encode_result encode_general(const packet& p, std::uint8_t* out,
                                         std::size_t capacity) noexcept {
    if (conf_.status() != error_code::ok) return {0, conf_.status()};
    if (p.kind == packet_kind::async) {  // D5.4: 11 or more zeros then 0x80
      // encode_result counts 32 bits: a longer zero run is the producer's to write.
      if (p.size > 0xffffffffu) return {0, error_code::unencodable};
      const std::uint32_t n = p.size ? static_cast<std::uint32_t>(p.size) : 12;
      if (n < 12) return {0, error_code::unencodable};
      if (n > capacity) return {0, error_code::buffer_too_small};
      for (std::uint32_t i = 0; i < n - 1; ++i) out[i] = 0;
      out[n - 1] = 0x80;
      return {n, error_code::ok};
    }
    // build() only writes bytes; the state the packet leaves behind is applied once it is
    // written (apply()), so a packet that fails or does not fit changes nothing.
    if constexpr (tracecodec::detail::compact) {
      std::uint8_t tmp[32];  // the compact form: one path, built aside and copied
      const int n = build(p, tmp, st_);
      if (n < 0) return {0, static_cast<error_code>(-n)};
      if (static_cast<std::size_t>(n) > capacity) return {0, error_code::buffer_too_small};
      for (int i = 0; i < n; ++i) out[i] = tmp[i];
      apply(p, st_);
      return {static_cast<std::uint32_t>(n), error_code::ok};
    }
    if (capacity >= 32) {
      // Room for any packet: built in place. (Built elsewhere and copied, the copy's wide
      // loads of build()'s byte stores cannot be forwarded: a stall on every packet.) A packet
      // that fails leaves the bytes after `out` as they were.
      std::uint8_t keep[32];
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push  // the caller's bytes may be indeterminate: copied, never used
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
      copy_small(keep, out, 32);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
      const int n = build(p, out, st_);
      if (n < 0) {
        copy_small(out, keep, 32);
        return {0, static_cast<error_code>(-n)};
      }
      apply(p, st_);
      return {static_cast<std::uint32_t>(n), error_code::ok};
    }
    std::uint8_t tmp[32];  // build() writes the bytes it counts; only those are copied
    const int n = build(p, tmp, st_);
    if (n < 0 || static_cast<std::size_t>(n) > capacity)
      return {0, n < 0 ? static_cast<error_code>(-n) : error_code::buffer_too_small};
    copy_small(out, tmp, static_cast<unsigned>(n));
    apply(p, st_);
    return {static_cast<std::uint32_t>(n), error_code::ok};
  }

  // The retained state a written packet leaves behind (D9.2.1): the address history, the
  // context, the timestamp, the cycle-count threshold.
  TRACECODEC_OWN_FRAME static constexpr void apply(const packet& p, stream_state& st) noexcept {
    using K = packet_kind;
    std::uint64_t a = 0;  // the address the history takes
    isa s = isa::is0;
    if (const address_header af = form_of(p.kind, p.index); af.form >= 0) {
      a = p.address;  // every address form (D9.2.18.4)
      s = p.sub_isa;
      if (af.with_context) st.ctx = p.ctx;
    } else {
      switch (p.kind) {
        case K::context: st.ctx = p.ctx; return;
        case K::trace_info: st.trace_info(p.info & 1u, p.cycles); return;
        case K::timestamp: st.timestamp = p.timestamp; return;
        case K::exception_unknown_address:
        case K::transaction_failure:
        case K::pe_reset: break;  // address 0, IS0 (D9.2.18.5)
        default: return;
      }
    }
    st.history.add(a, s);
  }

  // Copies n <= 32 bytes with a few overlapping fixed-size moves (no loop of n steps).
  static constexpr void copy_small(std::uint8_t* to, const std::uint8_t* from, unsigned n) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    if (!std::is_constant_evaluated()) {
      if (n >= 16) {
        __builtin_memcpy(to, from, 16);
        __builtin_memcpy(to + n - 16, from + n - 16, 16);
      } else if (n >= 8) {
        __builtin_memcpy(to, from, 8);
        __builtin_memcpy(to + n - 8, from + n - 8, 8);
      } else if (n >= 4) {
        __builtin_memcpy(to, from, 4);
        __builtin_memcpy(to + n - 4, from + n - 4, 4);
      } else if (n != 0) {
        to[0] = from[0];
        to[n / 2] = from[n / 2];
        to[n - 1] = from[n - 1];
      }
      return;
    }
#endif
    for (unsigned i = 0; i < n; ++i) to[i] = from[i];
  }

  // Each packet is a cache line or more of input for about one byte of output, so the atom
  // loop waits on reading packets more than on encoding them. Asking for the atom fields of
  // the packet 64 ahead keeps them arriving in time (bench/README.md, History). A prefetch
  // never faults; the address is formed as an integer, as it may lie past the end of the
  // caller's array.
  static constexpr void prefetch_key(const packet* p) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    if (!std::is_constant_evaluated())
      __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(p) +
                                                       64 * sizeof(packet) + offsetof(packet, atoms)));
#else
    (void)p;
#endif
  }

 public:
  // The header of a well-formed atom packet (D5.41-D5.46), or -1 for any other packet,
  // through the perfect hash of header_table.hpp: the key's three fields are next to each
  // other in struct packet, so on a little-endian target they are one 8-byte load. The
  // compact form (firmware) computes the header instead: no 2.3 KB hash table in the image.
  static constexpr int atom_header_of(const packet& p) noexcept {
    if constexpr (tracecodec::detail::compact)
      return detail::atom_header(p.kind, p.atoms, p.atom_count);
    std::uint64_t key = 0;
#if (defined(__GNUC__) || defined(__clang__)) && defined(__BYTE_ORDER__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    constexpr std::size_t at = offsetof(packet, atoms);
    if constexpr (offsetof(packet, kind) == at + 4 && offsetof(packet, atom_count) == at + 5 &&
                  at + 8 <= sizeof(packet)) {
      if (!std::is_constant_evaluated()) {
        __builtin_memcpy(&key, reinterpret_cast<const unsigned char*>(&p) + at, 8);
        key &= detail::atom_key_mask;
      } else {
        key = detail::atom_key(p.atoms, p.kind, p.atom_count);
      }
    } else
#endif
    {
      key = detail::atom_key(p.atoms, p.kind, p.atom_count);
    }
    const unsigned i = detail::atom_slot(key);
    return detail::atom_slots.key[i] == key ? detail::atom_slots.header[i] : -1;
  }
 private:
  constexpr const auto& table() const noexcept { return conf_.table(); }

  static constexpr int fail(error_code e) noexcept { return -static_cast<int>(e); }

  // The header must exist in this configuration and mean this kind (what the decoder's
  // table dispatches it to).
  constexpr bool header_ok(std::uint8_t h, packet_kind k) const noexcept {
    if constexpr (Config::is_fixed) {
      // A fixed configuration: whether the kind's row is legal, a bit per kind; only an
      // Event's header bits decide more (the events implemented, D5.68).
      constexpr detail::legal_kind_bits legal = detail::legal_kinds(Config::value);
      static_assert(detail::legal_kinds_agree(legal, Config::value));
      const unsigned i = static_cast<unsigned>(k);
      if (((legal.bits[i / 64] >> (i % 64)) & 1u) == 0) return false;
      return k != packet_kind::event || ((h & 0xfu) >> cfg().numevent) == 0;
    } else {
      const header_entry& e = table()[h];
      if (e.op == payload_op::reserved || e.op == payload_op::unsupported) return false;
      if (e.op == payload_op::exception || e.op == payload_op::extension) return true;
      return e.kind == k;
    }
  }

  // Chooses a run length: the requested one if it holds the value, else the shortest.
  TRACECODEC_FLAT static constexpr int leb_len(std::uint64_t value, std::uint8_t requested,
                                               detail::leb_field f) noexcept {
    const std::uint8_t min = detail::leb_size(value, f);
    if ((value & ~detail::width_mask(f)) != 0) return -1;
    if (requested == 0) return min;
    if (requested < min || requested > f.max_bytes) return -1;
    return requested;
  }

  // A continuation-coded field at o + at, in the requested number of bytes or the fewest;
  // returns where the packet goes on, or -1. One function (no closure): a leaf, so that a
  // firmware call's stack holds no frame below it.
  TRACECODEC_OWN_FRAME static constexpr int leb_at(std::uint8_t* o, int at, std::uint64_t v,
                                                     std::uint8_t req, detail::leb_field f) noexcept {
    const int len = leb_len(v, req, f);
    if (len < 0) return -1;
    return at + static_cast<int>(detail::write_leb(o + at, v, static_cast<unsigned>(len), f));
  }

  // Whether the kind exists in the configuration (a fixed one: a constant, see kind_exists).
  static constexpr bool exists(packet_kind k) noexcept { return detail::kind_exists<Config>(k); }

  // A packet that is its header h (of kind k): 1, or why not.
  constexpr int header_only(std::uint8_t* o, packet_kind k, std::uint8_t h) const noexcept {
    o[0] = h;
    return header_ok(h, k) ? 1 : fail(error_code::reserved_header);
  }

  // Mispredict / Cancel format 2 field A from its atoms (D5.39): -, E, EE, N.
  static constexpr int mispredict_a(const packet& p) noexcept {
    if (p.atom_count == 0 && p.atoms == 0) return 0;
    if (p.atom_count == 1 && p.atoms == 1) return 1;
    if (p.atom_count == 2 && p.atoms == 3) return 2;
    if (p.atom_count == 1 && p.atoms == 0) return 3;
    return -1;
  }

  // Exact match (D9.2.14.6): history entry `index` holds this very address and isa.
  static constexpr bool exact_match(const packet& p, const address_history& h) noexcept {
    return p.index <= 2 && h.entry[p.index] == address_entry{p.address, p.sub_isa};
  }

  // Address payload for an address form. `form`: 0 exact, 1 short, 2 32-bit, 3 64-bit.
  constexpr int write_address(std::uint8_t* o, int form, isa s, const packet& p,
                              const stream_state& st) const noexcept {
    const std::uint64_t a = p.address;
    const address_entry& last = st.history.entry[0];
    if (form == 0) {
      if (!exact_match(p, st.history)) return fail(error_code::unencodable);
      return 0;
    }
    if (p.sub_isa != s || (a & detail::isa_alignment_mask(s))) return fail(error_code::unencodable);
    int n = 0;
    if (form == 1) {
      unsigned bytes = p.addr_bytes;
      if (bytes == 0) bytes = ((a & ~detail::short_address_mask(s, 1)) ==
                               (last.address & ~detail::short_address_mask(s, 1)))
                                  ? 1u
                                  : 2u;
      if (bytes != 1 && bytes != 2) return fail(error_code::unencodable);
      const std::uint64_t mask = detail::short_address_mask(s, bytes);
      if ((a & ~mask) != (last.address & ~mask)) return fail(error_code::unencodable);
      const unsigned shift = s == isa::is0 ? 2 : 1;
      o[0] = static_cast<std::uint8_t>(((a >> shift) & 0x7fu) | (bytes == 2 ? 0x80u : 0u));
      if (bytes == 2) o[1] = static_cast<std::uint8_t>(a >> (shift + 7));
      n = static_cast<int>(bytes);
    } else if (form == 2) {
      if ((a >> 32) != (last.address >> 32)) return fail(error_code::unencodable);
      detail::write_long_address(o, a, s, false);
      n = 4;
    } else {
      detail::write_long_address(o, a, s, true);
      n = 8;
    }
    return n;
  }

  constexpr int write_context(std::uint8_t* o, const packet& p, const stream_state& st) const noexcept {
    const context& c = p.ctx;
    const bool v = p.flags & packet_flag::has_vmid, cid = p.flags & packet_flag::has_context_id;
    if ((v && cfg().vmidsize == 0) || (cid && cfg().cidsize == 0))
      return fail(error_code::config_mismatch);
    if (c.el > 3 || (!v && c.vmid != st.ctx.vmid) || (!cid && c.context_id != st.ctx.context_id))
      return fail(error_code::unencodable);  // an unsent field keeps its previous value
    const unsigned vbytes = cfg().vmidsize / 8u;  // ETE: 4; ETMv4: 1, 2 or 4
    if (v && vbytes < 4 && (c.vmid >> (8 * vbytes)) != 0) return fail(error_code::unencodable);
    o[0] = static_cast<std::uint8_t>(c.el | (c.nse ? 8u : 0u) | (c.sf ? 16u : 0u) |
                                     (c.ns ? 32u : 0u) | (v ? 64u : 0u) | (cid ? 128u : 0u));
    int n = 1;
    if (v) {
      detail::store_le(o + n, c.vmid, vbytes);
      n += static_cast<int>(vbytes);
    }
    if (cid) {
      detail::store_le(o + n, c.context_id, 4);
      n += 4;
    }
    return n;
  }

  // Per kind, from its row (description.hpp), two bytes: the header it is written with (the
  // first of its row's range; an Exception packet's address form: the header of the target
  // form it mirrors, D9.2.13.1) and what sort of packet it is. (Small arrays: build() reads
  // them at run time, and the rows themselves would take their whole size into an image.)
  struct kind_form {
    std::uint8_t header = 0;
    std::uint8_t bits = 0;
  };
  struct form_bit {
    static constexpr std::uint8_t width = 3;       // address_width, with `address`
    static constexpr std::uint8_t address = 4;     // an address form (target, exception, source, Q)
    static constexpr std::uint8_t is1 = 8;
    static constexpr std::uint8_t context = 16;    // the address form carries a context
    static constexpr std::uint8_t exception = 32;  // its Exception information byte comes first
    static constexpr std::uint8_t q = 64;          // a Q packet: COUNT follows
    static constexpr std::uint8_t single = 128;    // the header alone is the packet
    static constexpr std::uint8_t unsupported = 3; // (without `address`) a layout not decoded
  };
  struct kind_forms {
    kind_form of[packet_kind_count];
  };
  static constexpr kind_forms make_kind_forms() noexcept {
    kind_forms t{};
    for (const packet_description& d : packet_descriptions.row) {
      kind_form& k = t.of[static_cast<unsigned>(d.kind)];
      k.header = d.lo;
      if (d.layout == payload_op::none && d.bits == header_bits::none && d.flags == 0 &&
          d.traits == 0 && d.lo == d.hi)
        k.bits = form_bit::single;  // Trace On, Transaction Start/Commit, Timestamp Marker, Ignore
      if (d.layout == payload_op::unsupported) k.bits = form_bit::unsupported;
    }
    for (const packet_description& d : packet_descriptions.row) {
      const address_form& f = d.form;
      if (f.family == address_family::none) continue;
      const packet_kind sent = f.family == address_family::exception
                                   ? address_kind(address_family::target, f.width, f.sub_isa,
                                                  f.with_context)
                                   : d.kind;
      kind_form& k = t.of[static_cast<unsigned>(d.kind)];
      k.header = t.of[static_cast<unsigned>(sent)].header;
      k.bits = static_cast<std::uint8_t>(
          form_bit::address | static_cast<unsigned>(f.width) |
          (f.sub_isa == isa::is1 ? form_bit::is1 : 0u) | (f.with_context ? form_bit::context : 0u) |
          ((d.traits & kind_trait::exception) ? form_bit::exception : 0u) |
          ((d.traits & kind_trait::q) ? form_bit::q : 0u));
    }
    return t;
  }
  static constexpr kind_forms forms_ = make_kind_forms();
  // The header a kind is written with (not for the Exception kinds: see exception_info()).
  static constexpr std::uint8_t header_of(packet_kind k) noexcept {
    return forms_.of[static_cast<unsigned>(k)].header;
  }
  // Cycle Count format 2 with COMMOPT 1: F is bit 0 of the header (D5.32), canonical 1.
  static constexpr std::uint8_t cycle_count_f2_1_f1 = describe(packet_kind::cycle_count_f2_1).hi;
  static constexpr std::uint8_t exception_header = describe(packet_kind::exception_exact).lo;

  // How an address-form packet is written: the address header, the address width, isa,
  // whether a context follows, and whether it is an Exception or Q packet.
  struct address_header {
    std::uint8_t header = 0;
    int form = -1;  // address_width: 0 exact, 1 short, 2 32-bit, 3 64-bit; -1 no address form
    isa s = isa::is0;
    bool with_context = false;
    bool exception = false;  // an Exception packet: its information byte comes first
    bool q = false;          // a Q packet: its COUNT follows
  };
  TRACECODEC_FLAT static constexpr address_header form_of(packet_kind k, std::uint8_t index) noexcept {
    const kind_form p = forms_.of[static_cast<unsigned>(k)];
    address_header f;
    if (!(p.bits & form_bit::address)) return f;
    f.form = p.bits & form_bit::width;
    f.s = (p.bits & form_bit::is1) ? isa::is1 : isa::is0;
    f.with_context = (p.bits & form_bit::context) != 0;
    f.exception = (p.bits & form_bit::exception) != 0;
    f.q = (p.bits & form_bit::q) != 0;
    f.header = f.form == 0 ? static_cast<std::uint8_t>(p.header | (index & 3u)) : p.header;
    return f;
  }

  // Writes the packet into o (32 bytes) against the state st (apply() then updates it).
  // Returns the size or -error_code.
  constexpr int build(const packet& p, std::uint8_t* o, const stream_state& st) const noexcept {
    using K = packet_kind;
    const config& c = cfg();
    // Address forms first, from a table: they are most of what is not an atom, and this
    // spares them the switch's indirect jump.
    if (const address_header af = form_of(p.kind, p.index); af.form >= 0)
      return build_address(p, af, o, st);
    switch (p.kind) {
      case K::async: return fail(error_code::unencodable);  // handled by encode()
      case K::discard: o[0] = 0; o[1] = 3; return 2;
      case K::overflow: o[0] = 0; o[1] = 5; return 2;
      case K::context_same:  // says "unchanged": only the current context can be sent so
        if (!(p.ctx == st.ctx)) return fail(error_code::unencodable);
        return header_only(o, p.kind, header_of(K::context_same));
      case K::event:
        if (p.events == 0 || p.events > 15) return fail(error_code::unencodable);
        return header_only(o, p.kind, static_cast<std::uint8_t>(header_of(K::ignore) | p.events));  // D5.68: V=0 is Ignore
      case K::q:
        if (!exists(K::q)) return fail(error_code::reserved_header);
        if (!(p.flags & packet_flag::count_unknown)) return fail(error_code::unencodable);
        return header_only(o, p.kind, header_of(K::q));
      case K::q_count: {
        if (!exists(K::q_count)) return fail(error_code::reserved_header);
        o[0] = header_of(K::q_count);
        if (!header_ok(o[0], p.kind)) return fail(error_code::reserved_header);
        const int n = leb_at(o, 1, p.count, p.value_bytes, detail::leb32);
        return n < 0 ? fail(error_code::unencodable) : n;
      }

      case K::trace_info: {
        o[0] = header_of(K::trace_info);
        o[1] = p.plctl;
        int n = 2;
        if (p.plctl & 1u) o[n++] = p.info;
        else if (p.info) return fail(error_code::unencodable);
        if (p.plctl & 4u) {
          n = leb_at(o, n, p.count, p.value_bytes, detail::leb32);
          if (n < 0) return fail(error_code::unencodable);
        } else if (p.count) {
          return fail(error_code::unencodable);
        }
        if (p.plctl & 8u) {
          n = leb_at(o, n, p.cycles, p.count_bytes, detail::leb_cyct);
          if (n < 0) return fail(error_code::unencodable);
        } else if (p.cycles) {
          return fail(error_code::unencodable);
        }
        return n;
      }

      case K::timestamp: {
        if (!exists(K::timestamp)) return fail(error_code::reserved_header);
        const bool with_count = p.flags & packet_flag::has_count;
        o[0] = static_cast<std::uint8_t>(header_of(K::timestamp) | (with_count ? 1u : 0u));
        if (!header_ok(o[0], p.kind)) return fail(error_code::reserved_header);
        const detail::leb_field f = detail::leb_ts(c.ts_max_bytes());
        unsigned len = p.value_bytes;
        if (len == 0) {  // D6.11.5: send only the low bits that changed
          len = 1;
          while (len < f.max_bytes &&
                 ((p.timestamp ^ st.timestamp) & ~detail::leb_mask(len)) != 0)
            ++len;
        }
        if (len > f.max_bytes || ((p.timestamp ^ st.timestamp) & ~detail::leb_mask(len)) != 0)
          return fail(error_code::unencodable);
        // The low len bytes' worth of bits, exactly len bytes (the run the decoder replaces).
        int n = leb_at(o, 1, p.timestamp & detail::leb_mask(len), static_cast<std::uint8_t>(len), f);
        if (n < 0) return fail(error_code::unencodable);
        if (with_count) {
          n = leb_at(o, n, p.cycles, p.count_bytes, detail::leb_count);
          if (n < 0) return fail(error_code::unencodable);
        } else if (p.cycles) {
          return fail(error_code::unencodable);
        }
        return n;
      }

      case K::cycle_count_f1_0:
      case K::cycle_count_f1_0_unknown:
      case K::cycle_count_f1_1:
      case K::cycle_count_f1_1_unknown: {
        if (p.kind == K::cycle_count_f1_0 || p.kind == K::cycle_count_f1_0_unknown
                ? !exists(K::cycle_count_f1_0)
                : !exists(K::cycle_count_f1_1))
          return fail(error_code::reserved_header);
        const bool unknown = p.kind == K::cycle_count_f1_0_unknown || p.kind == K::cycle_count_f1_1_unknown;
        o[0] = header_of(p.kind);
        if (!header_ok(o[0], p.kind)) return fail(error_code::reserved_header);
        int n = 1;
        if (!c.commopt) {
          n = leb_at(o, n, p.count, p.value_bytes, detail::leb32);
          if (n < 0) return fail(error_code::unencodable);
        } else if (p.count) {
          return fail(error_code::unencodable);
        }
        if (!unknown) {
          if (p.cycles < st.cc_threshold) return fail(error_code::unencodable);
          n = leb_at(o, n, p.cycles - st.cc_threshold, p.count_bytes, detail::leb_count);
          if (n < 0) return fail(error_code::unencodable);
        }
        return n;
      }

      case K::cycle_count_f2_0_small:
      case K::cycle_count_f2_0_large:
      case K::cycle_count_f2_1: {
        if (p.kind == K::cycle_count_f2_1 ? !exists(K::cycle_count_f2_1)
                                           : !exists(K::cycle_count_f2_0_small))
          return fail(error_code::reserved_header);
        if (p.cycles < st.cc_threshold || p.cycles - st.cc_threshold > 15)
          return fail(error_code::unencodable);
        const unsigned bbbb = p.cycles - st.cc_threshold;
        unsigned aaaa = 0;
        if (p.kind == K::cycle_count_f2_0_small) {
          o[0] = header_of(p.kind);
          if (p.count < 1 || p.count > 16) return fail(error_code::unencodable);
          aaaa = p.count - 1;
        } else if (p.kind == K::cycle_count_f2_0_large) {
          o[0] = header_of(p.kind);
          const std::int64_t a = static_cast<std::int64_t>(p.count) - c.maxspec + 15;
          if (p.count == 0 || a < 0 || a > 15) return fail(error_code::unencodable);
          aaaa = static_cast<unsigned>(a);
        } else {
          if (p.count || (p.ignored_bits & ~0x1fu)) return fail(error_code::unencodable);
          o[0] = static_cast<std::uint8_t>(cycle_count_f2_1_f1 ^ ((p.ignored_bits >> 4) & 1u));
          aaaa = 0xfu ^ (p.ignored_bits & 0xfu);
        }
        if (!header_ok(o[0], p.kind)) return fail(error_code::reserved_header);
        o[1] = static_cast<std::uint8_t>((aaaa << 4) | bbbb);
        return 2;
      }

      case K::cycle_count_f3_0:
      case K::cycle_count_f3_1: {
        if (p.kind == K::cycle_count_f3_0 ? !exists(K::cycle_count_f3_0)
                                           : !exists(K::cycle_count_f3_1))
          return fail(error_code::reserved_header);
        if (p.cycles < st.cc_threshold || p.cycles - st.cc_threshold > 3)
          return fail(error_code::unencodable);
        const unsigned bb = p.cycles - st.cc_threshold;
        unsigned aa = 0;
        if (p.kind == K::cycle_count_f3_0) {
          if (p.count < 1 || p.count > 4) return fail(error_code::unencodable);
          aa = p.count - 1;
        } else {
          if (p.count || p.ignored_bits > 3) return fail(error_code::unencodable);
          aa = p.ignored_bits;
        }
        return header_only(o, p.kind, static_cast<std::uint8_t>(header_of(p.kind) | (aa << 2) | bb));
      }

      case K::commit:
      case K::cancel_f1: {
        if (!exists(K::commit)) return fail(error_code::reserved_header);  // speculation
        o[0] = header_of(p.kind);
        if (p.kind == K::cancel_f1 && (p.flags & packet_flag::mispredict)) o[0] |= 1u;
        if (!header_ok(o[0], p.kind)) return fail(error_code::reserved_header);
        if (p.kind == K::cancel_f1 && p.count == 0) return fail(error_code::unencodable);
        const int n = leb_at(o, 1, p.count, p.value_bytes, detail::leb32);
        return n < 0 ? fail(error_code::unencodable) : n;
      }

      case K::mispredict:
      case K::cancel_f2: {
        if (p.kind == K::cancel_f2 && !exists(K::cancel_f2)) return fail(error_code::reserved_header);
        const int a = mispredict_a(p);
        if (a < 0 || (p.kind == K::cancel_f2 && p.count != 1) || (p.kind == K::mispredict && p.count))
          return fail(error_code::unencodable);
        return header_only(o, p.kind, static_cast<std::uint8_t>(header_of(p.kind) | a));
      }
      case K::cancel_f3: {
        if (!exists(K::cancel_f3)) return fail(error_code::reserved_header);
        if (p.count < 2 || p.count > 5 || p.atom_count > 1 || p.atoms != p.atom_count)
          return fail(error_code::unencodable);
        return header_only(o, p.kind, static_cast<std::uint8_t>(header_of(p.kind) | ((p.count - 2) << 1) | p.atom_count));
      }

      case K::atom_f1:
      case K::atom_f2:
      case K::atom_f3:
      case K::atom_f4:
      case K::atom_f5_1:
      case K::atom_f5_2:
      case K::atom_f6: {
        // Only a malformed atom packet gets here: the hash in atom_header_of() is the
        // one test of which atom packets exist.
        const int h = atom_header_of(p);
        if (h < 0) return fail(error_code::unencodable);
        return header_only(o, p.kind, static_cast<std::uint8_t>(h));
      }

      case K::context: {
        o[0] = header_of(K::context);
        const int n = write_context(o + 1, p, st);
        return n < 0 ? n : 1 + n;
      }

      case K::exception_unknown_address:
      case K::transaction_failure:
      case K::pe_reset: {
        if ((p.kind == K::pe_reset) != (p.exception_type == 0x00) ||
            (p.kind == K::transaction_failure) != (p.exception_type == 0x18) || c.etmv4())
          return fail(error_code::unencodable);  // ETMv4 sends every exception's address
        const int n = exception_info(o, p);
        if (n < 0) return n;
        o[n] = header_of(K::ignore);  // D5.24: the address header 0x70 says UNKNOWN
        return n + 1;
      }

      case K::instrumentation:
        if (!exists(K::instrumentation)) return fail(error_code::reserved_header);
        o[0] = header_of(K::instrumentation);
        if (!header_ok(o[0], p.kind)) return fail(error_code::reserved_header);
        o[1] = p.info;
        detail::store_le(o + 2, p.address, 8);
        return 10;

      default: {
        // Header-only packets with nothing in their header bits (Trace On, Transaction
        // Start/Commit, Timestamp Marker, Ignore): the row's header is the packet.
        const unsigned k = static_cast<unsigned>(p.kind);
        if (k >= packet_kind_count) break;
        const kind_form f = forms_.of[k];
        if (f.bits == form_bit::unsupported) return fail(error_code::unsupported_packet);
        if (f.bits == form_bit::single) return header_only(o, p.kind, f.header);
        break;
      }
    }

    return fail(error_code::unencodable);
  }

  // Every packet with an address form: target, exception, source and Q packets.
  constexpr int build_address(const packet& p, const address_header& af, std::uint8_t* o,
                              const stream_state& st) const noexcept {
    int n = 0;
    if (af.exception) {
      n = exception_info(o, p);
      if (n < 0) return n;
      o[n++] = af.header;
    } else {
      o[0] = af.header;
      if (!header_ok(af.header, p.kind)) return fail(error_code::reserved_header);
      n = 1;
    }
    const int a = write_address(o + n, af.form, af.s, p, st);
    if (a < 0) return a;
    n += a;
    if (af.with_context) {
      const int k = write_context(o + n, p, st);
      if (k < 0) return k;
      n += k;
    }
    if (af.q) {
      n = leb_at(o, n, p.count, p.value_bytes, detail::leb32);
      if (n < 0) return fail(error_code::unencodable);
    }
    return n;
  }

  // Exception header and info byte (D5.13): C E[1] TYPE[4:0] E[0]; ETMv4 adds a second byte
  // (C = 1) with P and TYPE[9:5] when the type needs it or the trace unit sent it.
  constexpr int exception_info(std::uint8_t* o, const packet& p) const noexcept {
    const bool fault = p.flags & packet_flag::fault_pending;
    const bool second = p.exception_type > 31 || fault || p.value_bytes == 2;
    if ((p.exception_elements != 1 && p.exception_elements != 2) || p.exception_type > 0x3ff ||
        (second && !cfg().etmv4()) || p.value_bytes > 2)
      return fail(error_code::unencodable);
    o[0] = exception_header;
    o[1] = static_cast<std::uint8_t>((p.exception_elements & 1u) | ((p.exception_type & 0x1fu) << 1) |
                                     ((p.exception_elements >> 1) << 6) | (second ? 0x80u : 0u));
    if (!second) return 2;
    o[2] = static_cast<std::uint8_t>((p.exception_type >> 5) | (fault ? 0x20u : 0u));
    return 3;
  }

  detail::configured<Config> conf_{};
  stream_state st_{};
  // find_headers()'s answers (0: none); not in the compact form, which has no lean paths.
  struct lean_headers {
    std::uint8_t target[4][2]{};
    std::uint8_t q[3][2]{};  // Q with an address: exact match, short, 32-bit
    std::uint8_t timestamp = 0, trace_on = 0, timestamp_marker = 0;
  };
  struct no_lean_headers {};
  [[no_unique_address]] std::conditional_t<tracecodec::detail::compact, no_lean_headers,
                                           lean_headers> headers_{};
};

}  // namespace tracecodec::ete
