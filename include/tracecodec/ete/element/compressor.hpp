// SPDX-License-Identifier: Apache-2.0
// The element compressor (producer side): an element stream in, the shortest legal packet
// stream for the configuration out (D6.11). It packs atoms with a shortest-packing search over
// formats 1-6 (D6.11.2), folds atoms into Cancel/Mispredict packets, picks the shortest
// address form against the address history (exact, short, 32-bit, 64-bit; D6.11.3), sends
// Context Same when nothing changed, replaces only the changed timestamp bits (D6.11.5),
// folds commits into Cycle Count packets (COMMOPT 0) and relies on implied commits
// (D6.11.1) instead of Commit packets wherever MAXSPEC allows.
//
// Input: either a stage-1 element stream (element_decoder output: speculation elements
// included) or, with input_kind::resolved, a committed stream (resolver output), for which every
// P0 element counts as committed and Commit packets are added where needed. Zero allocation.
// Output goes one of two ways:
// - a staging buffer inside the compressor (Staging bytes) that the caller drains into its
//   own buffers; push() refuses an element (buffer_too_small) until enough has been drained,
//   so it resumes cleanly;
// - the caller's buffer (compressor_output), handed to a chunk sink whenever the next packet
//   might not fit (a full chunk) and at flush_output(). Staging may then be 0: no staging
//   buffer at all, as a firmware producer (producer.hpp) wants.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../packet/config.hpp"
#include "element.hpp"
#include "../packet/encoder.hpp"
#include "../error.hpp"
#include "../packet/packet.hpp"

namespace tracecodec::ete {

enum class input_kind : std::uint8_t { stage1, resolved };

// Where a compressor's chunks go (a ring buffer, a UART, a DMA channel, a file): `size` bytes
// at `data`, a whole chunk of the caller's buffer, or what is left at flush_output(). The
// bytes may be reused once the call returns.
using chunk_sink = void (*)(void* context, const std::uint8_t* data, std::size_t size) noexcept;

// The caller's output buffer and the sink its full chunks go to. The buffer must hold at
// least compressor_output::min_size bytes (one packet of any kind).
struct compressor_output {
  static constexpr std::size_t min_size = 32;
  std::uint8_t* buffer = nullptr;
  std::size_t size = 0;
  chunk_sink sink = nullptr;
  void* context = nullptr;
};

struct compressor_options {
  input_kind input = input_kind::stage1;
  // Insert A-Sync + Trace Info after this many output bytes (0: only where the input has
  // Trace Info elements).
  std::uint32_t sync_interval = 0;
};

namespace detail {

// The leading zero bits of x (x != 0).
constexpr unsigned leading_zeros(std::uint32_t x) noexcept {
#if defined(__GNUC__) || defined(__clang__)
  return static_cast<unsigned>(__builtin_clz(x));
#else
  unsigned t = 0;
  while (((x >> (31 - t)) & 1u) == 0) ++t;
  return t;
#endif
}

// The longest atom packet (D5.41-D5.46) that can end with the last of `have` atoms, have >= 1,
// from those atoms in the top bits of `top` (the last in bit 31, the one before it in bit 30,
// ...; at most 24 are needed) and zeros below them.
constexpr unsigned longest_atom_packet_top(std::uint32_t top, unsigned have) noexcept {
  unsigned l = have < 3 ? have : 3;  // formats 1-3: any pattern
  // The patterns formats 4 and 5 carry, as bit sets over the last 4 / 5 atoms (oldest in bit
  // 0 of the index): one test each.
  constexpr std::uint32_t format4 = 1u << 0b1110 | 1u << 0 | 1u << 0b1010 | 1u << 0b0101;
  constexpr std::uint32_t format5 = 1u << 0b11110 | 1u << 0 | 1u << 0b01010 | 1u << 0b10101;
  if (have >= 4 && ((format4 >> (top >> 28)) & 1u)) l = 4;  // format 4
  if (have >= 5 && ((format5 >> (top >> 27)) & 1u)) l = 5;  // format 5
  // Format 6: E^(l-1) then any atom, 4 <= l <= 24: the E atoms in a row before the last
  // (bit 0 of the complement is set, so the count stops by bit 30).
  const unsigned e_run = leading_zeros(~(top << 1));
  const unsigned run = e_run < have - 1 ? e_run : have - 1;
  if (run + 1 >= 4 && run + 1 > l) l = run + 1;
  return l;
}
// The same from the atoms in bits [0, have) of w (the oldest in bit 0, the last in bit
// have - 1).
constexpr unsigned longest_atom_packet(std::uint32_t w, unsigned have) noexcept {
  return longest_atom_packet_top(w << (32 - have), have);
}

// The shortest packing of up to packed_atoms atoms, worked out at compile time by the same
// rule as compressor::emit_atoms (packets found from the end, longest first): entry
// (1 << n) | bits, for n atoms with the oldest in bit 0 of bits, holds the packets' headers
// in stream order. Most atoms go out a few at a time, between addresses; this spares them the
// search. (Not in the compact form: 2 KB of table.)
inline constexpr unsigned packed_atoms = 8;
struct atom_packing {
  std::uint8_t count = 0;      // packets
  std::uint8_t header[3] = {};  // 8 atoms take at most 3 (formats 1-3 carry any 3)
};
struct atom_packing_table {
  atom_packing entry[2u << packed_atoms];
};
constexpr atom_packing_table make_atom_packings() noexcept {
  atom_packing_table t{};
  for (unsigned n = 1; n <= packed_atoms; ++n)
    for (std::uint32_t bits = 0; bits < (1u << n); ++bits) {
      unsigned ends[packed_atoms] = {}, k = 0;
      for (unsigned i = n; i > 0; i -= longest_atom_packet(bits & ((1u << i) - 1u), i)) ends[k++] = i;
      atom_packing& e = t.entry[(1u << n) | bits];
      e.count = static_cast<std::uint8_t>(k);
      for (unsigned j = 0, from = 0; j < k; ++j) {
        const unsigned to = ends[k - 1 - j], l = to - from;
        e.header[j] = static_cast<std::uint8_t>(atom_header_for(static_cast<std::uint8_t>(l), (bits >> from) & ((1u << l) - 1u)));
        from = to;
      }
    }
  return t;
}
inline constexpr atom_packing_table atom_packings = make_atom_packings();

// Checked against a second way: each entry's packets decode (the decoder's atom headers,
// atom_entry) to exactly its atoms, and no packing has fewer packets (a search over every
// packing, each atom packet one byte).
constexpr bool atom_packings_shortest() noexcept {
  for (unsigned n = 1; n <= packed_atoms; ++n)
    for (std::uint32_t bits = 0; bits < (1u << n); ++bits) {
      const atom_packing& e = atom_packings.entry[(1u << n) | bits];
      unsigned from = 0;
      for (unsigned j = 0; j < e.count; ++j) {
        const header_entry h = atom_entry(e.header[j]);
        if (h.atom_count == 0 || from + h.atom_count > n) return false;
        if (h.atoms != ((bits >> from) & ((1u << h.atom_count) - 1u))) return false;
        from += h.atom_count;
      }
      if (from != n) return false;
      unsigned fewest[packed_atoms + 1] = {};  // fewest packets for atoms [0, i)
      for (unsigned i = 1; i <= n; ++i) {
        fewest[i] = ~0u;
        for (unsigned l = 1; l <= i; ++l) {
          const std::uint32_t part = (bits >> (i - l)) & ((1u << l) - 1u);
          if (atom_header_for(static_cast<std::uint8_t>(l), part) >= 0 && fewest[i - l] + 1 < fewest[i])
            fewest[i] = fewest[i - l] + 1;
        }
      }
      if (e.count != fewest[n]) return false;
    }
  return true;
}
static_assert(atom_packings_shortest());

// The last packet of a long packing from the last 8 atoms alone (index: atom i - 8 in bit 0,
// atom i - 1 in bit 7), with at least 8 atoms to pack: its length and header, or length 0
// when the 7 atoms before the last are all E (format 6 may then reach further back). Spares
// the longest-packet tests for most packets of a long run. (Not in the compact form.)
struct last_atom_packet {
  std::uint8_t length = 0;
  std::uint8_t header = 0;
};
struct last_atom_packet_table {
  last_atom_packet entry[256];
};
constexpr last_atom_packet_table make_last_atom_packets() noexcept {
  last_atom_packet_table t{};
  for (std::uint32_t last8 = 0; last8 < 256; ++last8) {
    if ((last8 & 0x7fu) == 0x7fu) continue;
    const unsigned l = longest_atom_packet(last8, 8);
    t.entry[last8].length = static_cast<std::uint8_t>(l);
    t.entry[last8].header = static_cast<std::uint8_t>(atom_header_for(static_cast<std::uint8_t>(l), last8 >> (8 - l)));
  }
  return t;
}
inline constexpr last_atom_packet_table last_atom_packets = make_last_atom_packets();

}  // namespace detail

// Staging: bytes of the staging buffer (the push/drain form); 0 for a compressor that only
// writes to a compressor_output. Paths: leave as is (detail::compressor_paths::general is the
// reference the tests compare the lean paths with).
template <class Config = runtime_config, std::size_t Staging = 1024,
          detail::compressor_paths Paths = detail::compressor_paths::lean>
class compressor {
  // The lean paths: the commonest elements (atoms, target addresses, timestamps, cycle counts,
  // one-byte packets) written straight to bytes by the encoder's write_*() functions, and,
  // while nothing but atoms and a target address is held back, without take()'s checks.
  // Everything else, and what they refuse, goes the general way: a packet built (fresh()),
  // checked and encoded. Not in the compact form (firmware size).
  static constexpr bool lean =
      !tracecodec::detail::compact && Paths == detail::compressor_paths::lean;

 public:
  static constexpr std::size_t staging_size = Staging;
  static constexpr std::size_t max_element_bytes = 320;  // worst case one push() can produce
  // What push() and finish() want free in the staging buffer: what one push() can produce,
  // and room for any packet after it (each packet is built in place, encoder::room_bytes).
  static constexpr std::size_t push_room = max_element_bytes + encoder<Config>::room_bytes;
  static_assert(Staging == 0 || Staging >= push_room,
                "a staging buffer must hold what one push() can produce");

  template <class C = Config, class = std::enable_if_t<C::is_fixed>>
  constexpr explicit compressor(compressor_options o = {}) noexcept : opt_(o) {
    static_assert(Staging != 0, "without a staging buffer, give a compressor_output");
    status_ = check();
  }
  constexpr compressor(const registers& r, compressor_options o = {}) noexcept
      : enc_(r), opt_(o) {
    static_assert(Staging != 0, "without a staging buffer, give a compressor_output");
    status_ = check();
  }
  // Output to the caller's buffer, full chunks to out.sink (flush_output() for the rest).
  template <class C = Config, class = std::enable_if_t<C::is_fixed>>
  constexpr explicit compressor(const compressor_output& out, compressor_options o = {}) noexcept
      : opt_(o), out_(out) {
    status_ = check();
  }
  constexpr compressor(const registers& r, const compressor_output& out,
                       compressor_options o = {}) noexcept
      : enc_(r), opt_(o), out_(out) {
    status_ = check();
  }

  constexpr const config& cfg() const noexcept { return enc_.cfg(); }
  // Bytes written and not yet drained (or handed to the sink).
  constexpr std::size_t pending() const noexcept { return len_; }
  constexpr std::uint64_t bytes_out() const noexcept { return total(); }
  // ok, or why nothing can be compressed: the configuration (invalid_config), or an output
  // buffer below compressor_output::min_size or without a sink (buffer_too_small).
  constexpr error_code status() const noexcept { return status_; }

  // Takes one element. buffer_too_small (staging buffer only): drain() first; the element was
  // not taken.
  constexpr error_code push(const element& e) noexcept {
    if (const error_code s = status(); s != error_code::ok) return s;
    if (out_.buffer == nullptr && Staging - len_ < push_room)
      return error_code::buffer_too_small;
    if (e.kind == element_kind::atom && e.count > 32) return error_code::unencodable;  // a run
    err_ = error_code::ok;
    // Atoms with nothing held back, most of the elements of real trace: what take() does for
    // them (each of its checks passes, flush_pending() has nothing to flush), without its
    // calls. Not in the compact form, which keeps one path (firmware size).
    if (!tracecodec::detail::compact && e.kind == element_kind::atom &&
        !(holds_back() | has_target_)) {
      if (e.p0 && opt_.input == input_kind::stage1) in_depth_ += p0_weight(e);
      append_atoms(e);
    } else if (!take_lean(e)) {
      take(e);
    }
    if (opt_.sync_interval && total() - last_sync_ >= opt_.sync_interval) periodic_sync();
    return err_;
  }

  // push() for each of elements[0, count), in order, until one gives an error: `taken` counts
  // the elements taken (the one that gave the error too, unless it was buffer_too_small: drain()
  // and go on from elements + taken). The same bytes as a push() each; runs of atoms with
  // nothing held back go in without a call each (not in the compact form).
  struct push_result {
    std::size_t taken = 0;
    error_code error = error_code::ok;
  };
  constexpr push_result push(const element* elements, std::size_t count) noexcept {
    std::size_t i = 0;
    while (i < count) {
      if constexpr (lean) {
        err_ = error_code::ok;
        i = take_run(elements, i, count);
        if (err_ != error_code::ok) return {i, err_};
        if (i == count) break;
      } else if constexpr (!tracecodec::detail::compact) {
        if (elements[i].kind == element_kind::atom) {
          i = take_atoms(elements, i, count);
          if (i == count) break;
        }
      }
      const error_code r = push(elements[i]);
      if (r == error_code::buffer_too_small) return {i, r};
      ++i;
      if (r != error_code::ok) return {i, r};
    }
    return {i, error_code::ok};
  }

  // Flushes everything held back. With commit_all, also commits every outstanding P0 element
  // (a resolved input is fully committed); otherwise only the commits the input asked for.
  // (With a compressor_output, flush_output() then hands the bytes to the sink.)
  constexpr error_code finish(bool commit_all = false) noexcept {
    if (const error_code s = status(); s != error_code::ok) return s;
    if (out_.buffer == nullptr && Staging - len_ < push_room)
      return error_code::buffer_too_small;
    err_ = error_code::ok;
    flush_all();
    if (commit_all) in_depth_ = 0;
    emit_commits();
    return err_;
  }

  // A periodic synchronization point now (A-Sync, Trace Info, the current context), as
  // compressor_options::sync_interval makes them.
  constexpr error_code sync() noexcept {
    if (const error_code s = status(); s != error_code::ok) return s;
    if (out_.buffer == nullptr && Staging - len_ < push_room)
      return error_code::buffer_too_small;
    err_ = error_code::ok;
    periodic_sync();
    return err_;
  }

  // The producer API (producer.hpp) pushes through the committed path only (see
  // take_committed()).
  template <class> friend class producer;

  // Moves up to `capacity` staged bytes to `out`; returns the count.
  constexpr std::size_t drain(std::uint8_t* out, std::size_t capacity) noexcept {
    std::uint8_t* const b = base();
    const std::size_t n = capacity < len_ ? capacity : len_;
    for (std::size_t i = 0; i < n; ++i) out[i] = b[i];
    for (std::size_t i = n; i < len_; ++i) b[i - n] = b[i];
    len_ -= n;
    drained_ += n;
    return n;
  }

  // With a compressor_output: the bytes written so far go to the sink (a last, partial chunk).
  constexpr void flush_output() noexcept {
    if (out_.sink != nullptr && len_ != 0) hand_over();
  }

 private:
  // push(), finish() and sync() for the producer, its elements through take_committed(); and
  // its most frequent calls without an element: atoms (count 1-32, the oldest in bit 0 of
  // bits) and a target address, as take_committed() makes them. Each begins as push() does,
  // and refuses while push() holds something back (never, for a producer, which uses only these).
  constexpr error_code committed_start() noexcept {
    if (status_ != error_code::ok) return status_;
    if (out_.buffer == nullptr && Staging - len_ < push_room) return error_code::buffer_too_small;
    if (has_cancel_ || has_discard_ || has_q_ || skip_tf_) return error_code::unencodable;
    err_ = error_code::ok;
    return error_code::ok;
  }
  TRACECODEC_FLAT constexpr error_code committed_end() noexcept {
    if (opt_.sync_interval && total() - last_sync_ >= opt_.sync_interval) periodic_sync<false>();
    return err_;
  }
  constexpr error_code push_committed(const element& e) noexcept {
    if (e.kind == element_kind::atom && e.count > 32) return error_code::unencodable;
    if (const error_code s = committed_start(); s != error_code::ok) return s;
    if (!take_committed(e)) return error_code::unencodable;
    return committed_end();
  }
  constexpr error_code atoms_committed(std::uint32_t bits, unsigned count) noexcept {
    if (const error_code s = committed_start(); s != error_code::ok) return s;
    if (opt_.input == input_kind::stage1) in_depth_ += count;
    if (has_ctx_ || has_target_) flush_pending();
    for (unsigned i = 0; i < count; ++i) {
      if (natoms_ == max_atoms) flush_atoms();
      set_atom(natoms_++, (bits >> i) & 1u);
    }
    return committed_end();
  }
  constexpr error_code target_committed(std::uint64_t address, isa s) noexcept {
    if (const error_code st = committed_start(); st != error_code::ok) return st;
    flush_atoms();
    count_behind();
    if (has_target_) flush_pending();
    // add_target() without the copy: a held target's address, isa and flags are all that
    // is read of it.
    target_.kind = element_kind::target_address;
    target_.address = address;
    target_.sub_isa = s;
    target_.flags = 0;
    has_target_ = true;
    return committed_end();
  }
  constexpr error_code finish_committed() noexcept {
    if (const error_code s = committed_start(); s != error_code::ok) return s;
    flush_atoms();
    flush_pending();
    in_depth_ = 0;  // everything the producer said is committed
    emit_commits();
    return err_;
  }
  constexpr error_code sync_committed() noexcept {
    if (const error_code s = committed_start(); s != error_code::ok) return s;
    periodic_sync<false>();
    return err_;
  }

  constexpr error_code check() const noexcept {  // status(), once
    if (enc_.status() != error_code::ok) return enc_.status();
    if (out_.buffer != nullptr &&
        (out_.size < compressor_output::min_size || out_.sink == nullptr))
      return error_code::buffer_too_small;
    if (Staging == 0 && out_.buffer == nullptr) return error_code::buffer_too_small;
    return error_code::ok;
  }

  // ---- output -------------------------------------------------------------------------
  constexpr std::uint8_t* base() noexcept { return out_.buffer != nullptr ? out_.buffer : buf_; }
  constexpr std::size_t capacity() const noexcept {
    return out_.buffer != nullptr ? out_.size : Staging;
  }
  constexpr void hand_over() noexcept {
    out_.sink(out_.context, out_.buffer, len_);
    drained_ += len_;
    len_ = 0;
  }
  // Where the next packet goes, with room for any (encoder::room_bytes): a full chunk goes to
  // the sink first. nullptr (the error noted) if there is no room, which the bounds on what
  // one push() writes (push_room, min_size) rule out.
  constexpr std::uint8_t* room() noexcept {
    static_assert(compressor_output::min_size >= encoder<Config>::room_bytes);
    if (out_.buffer != nullptr && out_.size - len_ < compressor_output::min_size) hand_over();
    if (capacity() - len_ < encoder<Config>::room_bytes) {
      note(error_code::buffer_too_small);
      return nullptr;
    }
    return base() + len_;
  }
  // ... and before the stream's first packet, an A-Sync (D5.4 R_VRKLP). One comparison on
  // the usual path: room_end_ says where room() would hand over or fail.
  constexpr std::uint8_t* next_room() noexcept {
    if (len_ < room_end_) return base() + len_;
    return next_room_slow();
  }
  TRACECODEC_OUT_OF_LINE constexpr std::uint8_t* next_room_slow() noexcept {
    if (room_end_ == 0) {
      start();
      put_async();
    }
    return room();
  }
  // The stream has begun (its A-Sync follows): next_room() may take its short path.
  constexpr void start() noexcept {
    room_end_ = (out_.buffer != nullptr ? out_.size - compressor_output::min_size
                                        : Staging - encoder<Config>::room_bytes) + 1;
  }
  constexpr void note(error_code e) noexcept {
    if (err_ == error_code::ok) err_ = e;
  }
  constexpr void advance(std::size_t n) noexcept { len_ += n; }
  constexpr std::uint64_t total() const noexcept { return drained_ + len_; }
  // The 12-byte A-Sync (D5.4), written here: no packet built, and put() calls no put().
  constexpr void put_async() noexcept {
    std::uint8_t* const o = room();
    if (o == nullptr) return;
    for (unsigned i = 0; i < 11; ++i) o[i] = 0;
    o[11] = 0x80;
    advance(12);
  }
  constexpr void put(const packet& p) noexcept {
    std::uint8_t* const o = next_room();
    if (o == nullptr) return;
    const encode_result r = enc_.encode_in_room(p, o);  // built in place
    if (!r) return note(r.error);
    advance(r.size);
  }
  // An atom packet, header h (or -1: not a packet): one byte, no state (D5.41-D5.46), so no
  // trip through the encoder's general path (nor its frames on a firmware stack).
  constexpr void put_atoms(int h) noexcept {
    if (h < 0) return note(error_code::unencodable);
    std::uint8_t* const o = next_room();
    if (o == nullptr) return;
    *o = static_cast<std::uint8_t>(h);
    advance(1);
  }
  // The packet being built: one, in the compressor, rather than a 72-byte local in each
  // function on the way to put() (firmware stacks are small). Each is put before the next.
  TRACECODEC_OWN_FRAME constexpr packet& fresh(packet_kind k) noexcept {
    tracecodec::detail::zero_fill(pk_);
    pk_.kind = k;
    return pk_;
  }

  // ---- speculation bookkeeping (mirrors element_decoder) -----------------------------
  // depth_ is the decoder's speculation depth after what was emitted; in_depth_ the input's
  // (stage 1) depth, counting P0 elements still held back here. Output commits lag the input's
  // (never lead), so the decoder commits a subset of what the input committed, oldest first.
  constexpr void p0_emitted(std::uint32_t n = 1) noexcept {
    depth_ += n;
    if (depth_ > cfg().maxspec) depth_ = cfg().maxspec;  // D6.11.1: the rest is implied
  }
  // Commits the input made that the output has not expressed yet.
  // Counted as if the P0 elements held back here were emitted (with their implied commits).
  constexpr std::uint32_t owed() const noexcept {
    const std::uint32_t held = natoms_ + (has_q_ ? 1u : 0u);
    std::uint32_t d = depth_ + held;
    if (d > cfg().maxspec) d = cfg().maxspec;
    return d > in_depth_ ? d - in_depth_ : 0;
  }
  constexpr void emit_commits() noexcept {
    const std::uint32_t n = owed();
    if (n == 0) return;
    packet& p = fresh(packet_kind::commit);
    p.count = n;
    put(p);
    depth_ -= n;
  }

  // A decoder holds every element behind its oldest uncommitted P0 element (D9.3), in a
  // bounded queue: at least 4 x (MAXSPEC + 1) + 64 places (resolution_capacity()). Implied
  // commits bound the P0 elements there to MAXSPEC, not the others: a resolved input that
  // committed after one atom and then gave thousands of events would overflow a decoder of
  // the output, where the input did not. So after relief_interval() elements other than atoms
  // (each makes at most one element in the decoder) the outstanding P0 elements are committed,
  // when the input has nothing outstanding (in_depth_ 0: always for a resolved input, so the
  // commit is the input's own and no later Mispredict applies differently).
  // MAXSPEC 0 commits every P0 element as it comes (a relief there commits nothing). A
  // shorter interval is as safe: 16 bits, which fit in the compressor's padding.
  constexpr std::uint16_t relief_interval() const noexcept {
    const std::uint64_t n = 3u * (std::uint64_t{cfg().maxspec} + 1u) + 32u;
    return cfg().maxspec == 0 || n > 0xffffu ? 0xffffu : static_cast<std::uint16_t>(n);
  }
  constexpr void count_behind() noexcept {
    if (--relief_left_ == 0) relieve();
  }
  // (A held context or target address stays held: it goes out after the Commit.)
  TRACECODEC_OUT_OF_LINE constexpr void relieve() noexcept {
    if (in_depth_ == 0 && (has_cancel_ || has_discard_ || has_q_ || skip_tf_)) {
      relief_left_ = 1;  // at the next element, which flushes what is held back
      return;
    }
    relief_left_ = relief_interval();
    if (in_depth_ != 0) return;  // the input's own speculation: its commits govern
    flush_atoms();
    emit_commits();
  }

  // ---- atoms (D6.11.2) ---------------------------------------------------------------
  static constexpr unsigned max_atoms = 240;

  // The atoms are bits in 32-bit words (as cheap on a 64-bit host, and no 64-bit shifts on a
  // 32-bit core).
  constexpr bool atom_at(unsigned i) const noexcept { return (abits_[i / 32] >> (i % 32)) & 1u; }
  TRACECODEC_FLAT constexpr void set_atom(unsigned i, bool e) noexcept {
    const std::uint32_t bit = std::uint32_t{1} << (i % 32);
    abits_[i / 32] = e ? (abits_[i / 32] | bit) : (abits_[i / 32] & ~bit);
  }
  // Atoms [at, at+l) as bits, oldest in bit 0 (l <= 32).
  constexpr std::uint32_t atom_bits(unsigned at, unsigned l) const noexcept {
    const unsigned w = at / 32, o = at % 32;
    std::uint32_t x = abits_[w] >> o;
    if (o + l > 32) x |= abits_[w + 1] << (32 - o);  // o > 0 here
    return l == 32 ? x : x & ((std::uint32_t{1} << l) - 1u);
  }

  // Shortest packing of atoms [0, n). Every atom packet is one byte, and the fewest packets
  // for a prefix never exceed those for a longer one (a valid packet cut short is still one:
  // formats 4/5 shortened are format 3/4, format 6 shortened is format 6 or 1-3). So the
  // longest packet that can end at atom i is the best last packet, and the packing is found
  // from the end, a packet at a time: no table per atom, a few words of stack.
  //
  // The longest packet that can end just before atom i (covering [i - l, i)), i >= 1, from
  // the (at most) 24 atoms before it: atom i - have in bit 0, atom i - 1 in bit have - 1.
  constexpr unsigned longest_ending_at(unsigned i) const noexcept {
    const unsigned have = i < 24 ? i : 24;
    return detail::longest_atom_packet(atom_bits(i - have, have), have);
  }
  // The lowest set bit of x (x != 0).
  static constexpr unsigned low_bit(std::uint32_t x) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    return static_cast<unsigned>(__builtin_ctz(x));
#else
    unsigned t = 0;
    while (((x >> t) & 1u) == 0) ++t;
    return t;
#endif
  }
  // Packets in the shortest packing of atoms [0, n).
  constexpr unsigned packet_count(unsigned n) const noexcept {
    unsigned k = 0;
    for (unsigned i = n; i > 0; i -= longest_ending_at(i)) ++k;
    return k;
  }
  // Emits atoms [0, n) in the shortest packing: the packets' ends are found from the end
  // (one bit per atom marks where a packet ends), then the packets go out in order.
  constexpr void emit_atoms(unsigned n) noexcept {
    if (n == 0) return;
    if (!tracecodec::detail::compact && n <= detail::packed_atoms) {
      if constexpr (lean) {
        if (n == natoms_) return put_packed_atoms();
      }
      const detail::atom_packing& e = detail::atom_packings.entry[(1u << n) | atom_bits(0, n)];
      for (unsigned j = 0; j < e.count; ++j) put_atoms(e.header[j]);
      return emitted_atoms(n);
    }
    if constexpr (!tracecodec::detail::compact) {
      // Longer runs: each packet's header is made as the search finds it (from the end), then
      // the headers go out in stream order. (The compact form marks the packets' ends in a
      // few words instead: a firmware stack has no room for max_atoms bytes.)
      std::uint8_t headers[max_atoms];
      unsigned k = max_atoms;
      // Atoms [i - avail, i) in the top bits of `top`, atom i - 1 in bit 63, zeros below them;
      // a word of older atoms comes in below when fewer than 24 are there.
      unsigned i = n, avail = n % 32;
      int next = static_cast<int>(n / 32) - 1;  // the next word of older atoms
      std::uint64_t top = avail ? std::uint64_t{abits_[n / 32]} << (64 - avail) : 0;
      while (i > 0) {
        if (avail < 24 && next >= 0) {
          top |= std::uint64_t{abits_[next--]} << (32 - avail);
          avail += 32;
        }
        unsigned l = 0;
        if (i >= 8) {
          const detail::last_atom_packet p = detail::last_atom_packets.entry[top >> 56];
          l = p.length;
          headers[k - 1] = p.header;
        }
        if (l == 0) {  // fewer than 8 atoms left, or a format 6 of 8 or more atoms
          l = detail::longest_atom_packet_top(static_cast<std::uint32_t>(top >> 32), i < 24 ? i : 24);
          // Formats 1-5 from the table (one packet: the longest for their atoms); longer ones
          // are format 6, E atoms then the last (D5.46).
          headers[k - 1] = l <= 5 ? detail::atom_packings.entry[(1u << l) | (top >> (64 - l))].header[0]
                                  : detail::atom_f6_header(l, (top >> 63) != 0);
        }
        --k;
        top <<= l;
        avail -= l;
        i -= l;
      }
      if constexpr (lean) {
        while (k < max_atoms) {  // up to 16 packets per room() (at least 32 bytes there)
          std::uint8_t* const o = next_room();
          if (o == nullptr) break;
          const unsigned m = max_atoms - k < 16 ? max_atoms - k : 16;
          for (unsigned j = 0; j < m; ++j) o[j] = headers[k + j];
          advance(m);
          k += m;
        }
      } else {
        for (; k < max_atoms; ++k) put_atoms(headers[k]);
      }
      return emitted_atoms(n);
    }
    std::uint32_t ends[max_atoms / 32 + 1];
    for (std::uint32_t& w : ends) w = 0;
    for (unsigned i = n; i > 0; i -= longest_ending_at(i))
      ends[(i - 1) / 32] |= std::uint32_t{1} << ((i - 1) % 32);
    unsigned from = 0;
    while (from < n) {
      // The packet ends after the first marked atom at or after `from` (atom n - 1 is one).
      unsigned w = from / 32, to = from;
      std::uint32_t m = ends[w] >> (from % 32);
      if (m == 0) {
        do m = ends[++w];
        while (m == 0);
        to = w * 32;
      }
      to += low_bit(m) + 1;
      const std::uint32_t bits = atom_bits(from, to - from);
      const unsigned l = to - from;
      put_atoms(detail::atom_header_for(static_cast<std::uint8_t>(l), bits));
      from = to;
    }
    emitted_atoms(n);
  }
  // Atoms [0, n) are out: the rest move down.
  constexpr void emitted_atoms(unsigned n) noexcept {
    p0_emitted(n);
    for (unsigned i = n; i < natoms_; ++i) set_atom(i - n, atom_at(i));
    natoms_ -= n;
  }
  constexpr void flush_atoms() noexcept { emit_atoms(natoms_); }

  // Tail of the pending atoms a Mispredict / Cancel format 2 packet can carry: -, E, EE, N.
  // Returns the field A, choosing the tail that minimises the total packet count.
  constexpr unsigned best_tail(bool cancel_f3) noexcept {
    const unsigned n = natoms_;
    unsigned choice = 0, cost = packet_count(n);
    const bool last_e = n >= 1 && atom_at(n - 1);
    // The last atom: E (either packet), or N (Mispredict / Cancel format 2 only).
    if (n >= 1 && (last_e || !cancel_f3)) {
      if (const unsigned c = packet_count(n - 1); c < cost) {
        cost = c;
        choice = last_e ? 1 : 3;
      }
    }
    // The last two, both E (Mispredict / Cancel format 2 only).
    if (!cancel_f3 && last_e && n >= 2 && atom_at(n - 2) && packet_count(n - 2) < cost) choice = 2;
    return choice;
  }
  static constexpr unsigned tail_count(unsigned a) noexcept { return a == 0 ? 0 : a == 2 ? 2 : 1; }

  // ---- addresses (D6.11.3) -----------------------------------------------------------
  // Cost in bytes of each address form for an address against the current history.
  struct address_choice {
    int form;  // 0 exact, 1 short, 2 32-bit, 3 64-bit
    std::uint8_t index;
    unsigned bytes;  // payload bytes (exact: 0)
  };
  constexpr address_choice choose_address(std::uint64_t a, isa s, bool allow64 = true,
                                          bool long_only = false) const noexcept {
    const address_history& h = enc_.state().history;
    if (!long_only)
      for (std::uint8_t i = 0; i < 3; ++i)
        if (h.entry[i].address == a && h.entry[i].sub_isa == s) return {0, i, 0};
    const std::uint64_t last = h.entry[0].address;
    if (!long_only) {
      if ((a & ~detail::short_address_mask(s, 1)) == (last & ~detail::short_address_mask(s, 1)))
        return {1, 0, 1};
      if ((a & ~detail::short_address_mask(s, 2)) == (last & ~detail::short_address_mask(s, 2)))
        return {1, 0, 2};
    }
    if ((a >> 32) == (last >> 32)) return {2, 0, 4};
    return {allow64 ? 3 : -1, 0, 8};
  }
  // The packet kind of an address family's form (description.hpp).
  static constexpr packet_kind form_kind(address_family f, int form, isa s,
                                         bool with_context = false) noexcept {
    return address_kind(f, static_cast<address_width>(form), s, with_context);
  }
  constexpr void fill_address(packet& p, const address_choice& c, std::uint64_t a, isa s) const noexcept {
    p.address = a;
    p.sub_isa = s;
    p.index = c.index;
    p.addr_bytes = static_cast<std::uint8_t>(c.form == 1 ? c.bytes : 0);
  }

  // ---- context --------------------------------------------------------------------
  // Flags for a context payload: send CONTEXTID / VMID only when they changed.
  constexpr std::uint8_t context_flags(const context& c) const noexcept {
    const context& now = enc_.state().ctx;
    std::uint8_t f = 0;
    if (c.context_id != now.context_id) f |= packet_flag::has_context_id;
    if (c.vmid != now.vmid) f |= packet_flag::has_vmid;
    return f;
  }
  static constexpr unsigned context_bytes(std::uint8_t f) noexcept {
    return 1u + ((f & packet_flag::has_context_id) ? 4u : 0u) + ((f & packet_flag::has_vmid) ? 4u : 0u);
  }
  constexpr void put_context(const context& c) noexcept {
    if (c == enc_.state().ctx) {
      packet& p = fresh(packet_kind::context_same);
      p.ctx = c;
      put(p);
      return;
    }
    packet& p = fresh(packet_kind::context);
    p.ctx = c;
    p.flags = context_flags(c);
    put(p);
  }

  // Pending Context / Target Address elements, held to merge with what follows. (Each
  // packet is put last, after the flags: a call the compiler may make as a jump, so that a
  // firmware stack holds one of these frames, not three.)
  constexpr void flush_pending() noexcept {
    if (has_ctx_ && has_target_ && combined()) {
      has_ctx_ = has_target_ = false;
      put(pk_);
      return;
    }
    if (has_ctx_) {
      has_ctx_ = false;
      if (!has_target_) return put_context(ctx_.ctx);
      put_context(ctx_.ctx);
    }
    if (has_target_) {
      has_target_ = false;
      put_target(target_);
    }
  }
  // Whether the held context and target address are shorter as one Address with Context
  // packet (D5.55); if so it is built (fresh()). Out of line: its arithmetic does not widen
  // the frame that then puts the packet.
  TRACECODEC_OUT_OF_LINE constexpr bool combined() noexcept {
    const address_choice sep = choose_address(target_.address, target_.sub_isa);
    const std::uint8_t f = context_flags(ctx_.ctx);
    const unsigned ctx_cost = (ctx_.ctx == enc_.state().ctx) ? 1u : 1u + context_bytes(f);
    const unsigned separate = ctx_cost + 1u + sep.bytes;
    const address_choice lng = choose_address(target_.address, target_.sub_isa, true, true);
    const unsigned together = 1u + lng.bytes + context_bytes(f);
    if (together >= separate) return false;
    packet& p = fresh(form_kind(address_family::target, lng.form, target_.sub_isa, true));
    fill_address(p, lng, target_.address, target_.sub_isa);
    p.ctx = ctx_.ctx;
    p.flags = f;
    return true;
  }
  constexpr void put_target(const element& t) noexcept {
    if constexpr (lean) {
      const address_choice c = choose_address(t.address, t.sub_isa);
      std::uint8_t* const o = next_room();
      if (o == nullptr) return;
      if (const unsigned n = enc_.write_target(o, t.address, t.sub_isa, c.form, c.index, c.bytes)) {
        advance(n);
        return;
      }
    }
    target_packet(t);
    put(pk_);
  }
  // The Target Address packet of t in its shortest form, built (fresh()) out of line: the
  // form's arithmetic is not in a frame that stays while the packet is put.
  TRACECODEC_OUT_OF_LINE constexpr void target_packet(const element& t) noexcept {
    const address_choice c = choose_address(t.address, t.sub_isa);
    packet& p = fresh(form_kind(address_family::target, c.form, t.sub_isa));
    fill_address(p, c, t.address, t.sub_isa);
  }

  // ---- exceptions (D5.13-D5.25) ------------------------------------------------------
  constexpr void put_exception(const element& x, bool with_target, bool unknown) noexcept {
    exception_packet(x, with_target, unknown);
    put(pk_);
  }
  // The Exception packet (built, fresh(), out of line as target_packet()).
  TRACECODEC_OUT_OF_LINE constexpr void exception_packet(const element& x, bool with_target,
                                                         bool unknown) noexcept {
    packet& p = fresh(packet_kind::async);  // its kind follows
    p.exception_type = x.exception_type;
    p.exception_elements = with_target ? 2 : 1;
    if (unknown) {
      p.kind = x.kind == element_kind::transaction_failure ? packet_kind::transaction_failure
               : x.exception_type == 0                     ? packet_kind::pe_reset
                                                           : packet_kind::exception_unknown_address;
      if (x.kind == element_kind::transaction_failure) p.exception_type = 0x18;
      return;
    }
    if (with_target && has_ctx_) {  // Exception with context (E=0b10 only, D9.2.13.2)
      const address_choice lng = choose_address(x.address, x.sub_isa, true, true);
      p.kind = form_kind(address_family::exception, lng.form, x.sub_isa, true);
      fill_address(p, lng, x.address, x.sub_isa);
      p.ctx = ctx_.ctx;
      p.flags = context_flags(ctx_.ctx);
      has_ctx_ = false;
      return;
    }
    const address_choice c = choose_address(x.address, x.sub_isa);
    p.kind = form_kind(address_family::exception, c.form, x.sub_isa);
    fill_address(p, c, x.address, x.sub_isa);
    if (x.kind == element_kind::transaction_failure) p.exception_type = 0x18;
  }

  // A-Sync + Trace Info so that a decoder can start here, then the full current context.
  // Outstanding speculation carries across it in the SPEC field; owed commits stay owed (an
  // early commit could apply a later Mispredict differently, D9.3.3).
  template <bool Held = true>
  constexpr void periodic_sync() noexcept {
    if constexpr (Held) {
      flush_all();
    } else {  // take_committed() holds nothing else back
      flush_atoms();
      flush_pending();
    }
    const context now = enc_.state().ctx;
    const std::uint32_t th = enc_.state().cc_threshold;
    start();
    put_async();
    packet& p = fresh(packet_kind::trace_info);
    p.info = static_cast<std::uint8_t>((cc_ ? 1u : 0u) | (t_ ? 0x40u : 0u));
    p.count = depth_;
    p.cycles = cc_ ? th : 0;
    p.plctl = static_cast<std::uint8_t>((p.info ? 1u : 0u) | (p.count ? 4u : 0u) | (p.cycles ? 8u : 0u));
    put(p);
    packet& c = fresh(packet_kind::context);
    c.ctx = now;
    c.flags = static_cast<std::uint8_t>((cfg().cidsize ? packet_flag::has_context_id : 0) |
                                        (cfg().vmidsize ? packet_flag::has_vmid : 0));
    if (!cfg().cidsize) c.ctx.context_id = 0;
    if (!cfg().vmidsize) c.ctx.vmid = 0;
    put(c);
    last_sync_ = total();
  }

  // ---- the element dispatch ----------------------------------------------------------
  constexpr void flush_all() noexcept {
    flush_cancel();
    flush_q();
    flush_discard();
    flush_atoms();
    flush_pending();
  }

  constexpr void flush_q() noexcept {
    if (!has_q_) return;
    has_q_ = false;
    put_q(q_, nullptr);
  }
  constexpr void put_q(const element& q, const element* target) noexcept {
    if constexpr (lean) {
      if (target != nullptr && !q.is(element_flag::count_unknown) && write_q_with_target(q, *target)) return;
    }
    put_q_built(q, target);
  }
  constexpr void put_q_built(const element& q, const element* target) noexcept {
    const bool target_apart = q_packet(q, target);
    put(pk_);
    p0_emitted();
    if (target_apart) put_target(*target);  // the Q form cannot say it: a separate packet
  }
  // Lean: the Q packet with the target in its shortest Q address form (exact, short, 32-bit)
  // and the count (the callers have checked it is known), written straight to bytes
  // (encoder::write_q). False, nothing written, where the address needs the 64-bit form, which
  // Q lacks, or the writer refuses: put_q_built() then.
  constexpr bool write_q_with_target(const element& q, const element& t) noexcept {
    const address_choice c = choose_address(t.address, t.sub_isa, false);
    if (c.form < 0) return false;
    std::uint8_t* const o = next_room();
    if (o == nullptr) {  // the error noted; the Q counted as emitted, as put_q_built() would
      p0_emitted();
      return true;
    }
    const unsigned n = enc_.write_q(o, t.address, t.sub_isa, c.form, c.index, c.bytes, q.count);
    if (n == 0) return false;
    advance(n);
    p0_emitted();
    return true;
  }
  // The Q packet, carrying the Target Address after it where a Q form can (built, fresh(),
  // out of line as target_packet()); true if the target needs a packet of its own.
  TRACECODEC_OUT_OF_LINE constexpr bool q_packet(const element& q, const element* target) noexcept {
    packet& p = fresh(packet_kind::async);  // its kind follows
    if (q.is(element_flag::count_unknown)) {
      p.kind = packet_kind::q;
      p.flags = packet_flag::count_unknown;
    } else {
      p.count = q.count;
      p.kind = packet_kind::q_count;
      if (target) {
        const address_choice c = choose_address(target->address, target->sub_isa, false);
        if (c.form >= 0) {
          p.kind = form_kind(address_family::q, c.form, target->sub_isa);  // no 64-bit Q form
          fill_address(p, c, target->address, target->sub_isa);
          target = nullptr;
        }
      }
    }
    return target != nullptr;
  }

  constexpr void flush_discard() noexcept {
    if (!has_discard_) return;
    has_discard_ = false;
    put(fresh(packet_kind::discard));
    after_discard();
  }
  constexpr void after_discard() noexcept {
    depth_ = in_depth_ = 0;
    skip_tf_ = t_;  // the decoder adds the Transaction Failure itself (D9.2.4.1)
    t_ = false;
  }

  // Whether a kind of packet exists in the configuration. Always so at run time; a fixed
  // configuration compiles out what makes the kinds it has not (the ETMv4 kinds under ETE,
  // Cancel without speculation, ...), and such an element gets the error the packet's
  // reserved header would give.
  static constexpr bool has_kind(packet_kind k) noexcept { return detail::kind_exists<Config>(k); }
  constexpr void refuse() noexcept {
    note(error_code::reserved_header);
  }
  // D5.35-D5.38: no Cancel packets without speculation (MAXSPEC 0).
  static constexpr bool can_cancel() noexcept { return has_kind(packet_kind::cancel_f1); }
  // Cancel held back to merge with a following Mispredict.
  constexpr void flush_cancel() noexcept {
    if (!can_cancel() || !has_cancel_) return;
    has_cancel_ = false;
    flush_atoms();
    emit_cancel(cancel_n_, false);
  }
  constexpr void emit_cancel(std::uint32_t n, bool mispredict) noexcept {
    // Commits the input made go out first: committing applies the Mispredict elements queued
    // behind an atom (D9.3.3), and a Cancel could otherwise remove one of them before the
    // delayed commit reaches its atom.
    if (owed() > 0) {
      flush_atoms();
      emit_commits();
    }
    if (mispredict && n == 1 && cfg().maxspec) {  // Cancel format 2, carrying up to 2 atoms
      const unsigned a = best_tail(false);
      emit_atoms(natoms_ - tail_count(a));
      packet& p = fresh(packet_kind::cancel_f2);
      p.count = 1;
      p.flags = packet_flag::mispredict;
      p.atoms = a == 1 ? 1u : a == 2 ? 3u : 0u;
      p.atom_count = static_cast<std::uint8_t>(tail_count(a));
      put(p);
      natoms_ = 0;  // the tail travelled in this packet
      p0_emitted(p.atom_count);
    } else if (mispredict && n >= 2 && n <= 5) {  // Cancel format 3, carrying one E atom
      const unsigned a = best_tail(true);
      emit_atoms(natoms_ - tail_count(a));
      packet& p = fresh(packet_kind::cancel_f3);
      p.count = n;
      p.flags = packet_flag::mispredict;
      p.atoms = a ? 1u : 0u;
      p.atom_count = a ? 1 : 0;
      put(p);
      natoms_ = 0;  // the tail travelled in this packet
      p0_emitted(p.atom_count);
    } else {
      flush_atoms();
      packet& p = fresh(packet_kind::cancel_f1);
      p.count = n;
      if (mispredict) p.flags = packet_flag::mispredict;
      put(p);
    }
    depth_ = n > depth_ ? 0 : depth_ - n;
    in_depth_ = n > in_depth_ ? 0 : in_depth_ - n;
  }

  // take() for the commonest elements while nothing but atoms and a target address is held
  // back: the same steps, without its tests for what is not held. False: not taken (take()).
  constexpr bool take_lean(const element& e) noexcept {
    if constexpr (!lean) {
      return false;
    } else {
      return !holds_back() && take_lean_unchecked(e);
    }
  }
  // take_lean() once holds_back() is known false (take_run() tests it once per run: none of
  // the lean kinds makes it true).
  constexpr bool take_lean_unchecked(const element& e) noexcept {
    using K = element_kind;
    switch (e.kind) {
      case K::atom:
      case K::target_address:
      case K::timestamp:
      case K::cycle_count:
      case K::trace_on: break;
      case K::timestamp_marker:
        if (!has_kind(packet_kind::timestamp_marker)) return false;
        break;
      default: return false;
    }
    if (e.kind == K::atom) {
      if (e.p0 && opt_.input == input_kind::stage1) in_depth_ += p0_weight(e);
      if (has_target_) put_held_target();
      append_atoms(e);
      return true;
    }
    count_behind();  // where take() counts: before the input's depth and any flush
    if (e.p0 && opt_.input == input_kind::stage1) in_depth_ += p0_weight(e);
    if (natoms_ != 0) {  // flush_atoms(), a few atoms (the usual case) without its call
      if (natoms_ <= detail::packed_atoms)
        put_packed_atoms();
      else
        emit_atoms(natoms_);
    }
    if (has_target_) put_held_target();
    switch (e.kind) {
      case K::target_address: hold_target(e); break;
      case K::timestamp: add_timestamp(e); break;
      case K::cycle_count: put_cycle_count(e); break;
      case K::trace_on: put_single(packet_kind::trace_on); break;
      default: put_single(packet_kind::timestamp_marker); break;
    }
    return true;
  }

  // Something other than atoms and a target address is held back: the lean paths
  // (take_lean(), take_atoms(), take_run()) do not apply.
  constexpr bool holds_back() const noexcept {
    return has_cancel_ | has_discard_ | has_q_ | skip_tf_ | has_ctx_;
  }
  // flush_pending() with only a target address held.
  constexpr void put_held_target() noexcept {
    has_target_ = false;
    put_target(target_);
  }
  // emit_atoms(natoms_) for 1 to detail::packed_atoms atoms: their packets from the table.
  constexpr void put_packed_atoms() noexcept {
    const unsigned n = natoms_;
    const detail::atom_packing& e =
        detail::atom_packings.entry[(1u << n) | (abits_[0] & ((1u << n) - 1u))];
    if (std::uint8_t* const o = next_room()) {
      o[0] = e.header[0];
      o[1] = e.header[1];
      o[2] = e.header[2];
      advance(e.count);
    }
    p0_emitted(n);
    natoms_ = 0;
  }

  constexpr void take(const element& e) noexcept {
    using K = element_kind;
    if (e.kind == K::commit) {  // paid by implied commits, Cycle Count packets or a Commit
      // A held-back Cancel or Discard came first in the input: it goes out first.
      if (has_cancel_) flush_cancel();
      if (has_discard_) flush_discard();
      in_depth_ = e.count > in_depth_ ? 0 : in_depth_ - e.count;
      return;
    }
    if (e.kind != K::atom && e.kind != K::cancel && e.kind != K::mispredict) count_behind();
    // Elements that complete something held back.
    if (can_cancel() && has_cancel_) {
      if (e.kind == K::mispredict) {
        has_cancel_ = false;
        emit_cancel(cancel_n_, true);
        return;
      }
      flush_cancel();
    }
    if (has_discard_) {
      if (e.kind == K::overflow) {
        has_discard_ = false;
        put(fresh(packet_kind::overflow));
        after_discard();
        return;
      }
      flush_discard();
    }
    if (has_q_) {
      // A Q packet can carry the Target Address after it, not an UNKNOWN one (that belongs
      // to an Exception packet with E=0b10).
      if (e.kind == K::target_address && !e.is(element_flag::unknown_address)) {
        flush_atoms();
        has_q_ = false;
        put_q(q_, &e);
        return;
      }
      flush_q();
    }
    if (skip_tf_) {
      skip_tf_ = false;
      if (e.kind == K::transaction_failure && !e.p0) return;
    }
    // The input's own speculation depth (a resolved input has nothing outstanding).
    if (e.p0 && opt_.input == input_kind::stage1) in_depth_ += p0_weight(e);
    switch (e.kind) {
      case K::atom: add_atoms(e); return;
      case K::cancel:
        if (!can_cancel()) return refuse();
        flush_pending();
        has_cancel_ = true;
        cancel_n_ = e.count;
        return;
      case K::mispredict: {  // Mispredict packet, carrying up to 2 atoms (D5.39)
        flush_pending();
        // The input committed first (or, resolved, everything is committed): the atom this
        // Mispredict corrects may be committed, so commit before it and carry no atoms.
        if (owed() > 0 || opt_.input == input_kind::resolved) {
          flush_atoms();
          emit_commits();
        }
        const unsigned a = best_tail(false);
        emit_atoms(natoms_ - tail_count(a));
        packet& p = fresh(packet_kind::mispredict);
        p.flags = packet_flag::mispredict;
        p.atoms = a == 1 ? 1u : a == 2 ? 3u : 0u;
        p.atom_count = static_cast<std::uint8_t>(tail_count(a));
        put(p);
        natoms_ = 0;  // the tail travelled in this packet
        p0_emitted(p.atom_count);
        return;
      }
      default: break;
    }
    flush_atoms();
    switch (e.kind) {
      case K::context: add_context(e); return;
      case K::target_address: add_target(e); return;
      case K::exception:
      case K::transaction_failure: add_exception(e); return;
      default: break;
    }
    flush_pending();
    switch (e.kind) {
      case K::trace_info: add_trace_info(e); return;
      case K::trace_on: put_single(packet_kind::trace_on); return;
      case K::exception_return:  // ETMv4 only
        if (!has_kind(packet_kind::exception_return)) return refuse();
        put(fresh(packet_kind::exception_return));
        if (e.p0) p0_emitted();
        return;
      case K::function_return:  // ETMv4 Armv8-M only
        if (!has_kind(packet_kind::function_return)) return refuse();
        put(fresh(packet_kind::function_return));
        p0_emitted();
        return;
      case K::timestamp: add_timestamp(e); return;
      case K::timestamp_marker:
        if (!has_kind(packet_kind::timestamp_marker)) return refuse();
        put_single(packet_kind::timestamp_marker);
        return;
      case K::cycle_count: put_cycle_count(e); return;
      case K::source_address: {
        const address_choice c = choose_address(e.address, e.sub_isa);
        packet& p = fresh(form_kind(address_family::source, c.form, e.sub_isa));
        fill_address(p, c, e.address, e.sub_isa);
        put(p);
        p0_emitted();
        return;
      }
      case K::q:
        q_ = e;
        has_q_ = true;
        return;
      case K::event: add_event(e); return;
      case K::discard:
        emit_commits();
        has_discard_ = true;
        return;
      case K::overflow:  // a resolved stream has no Discard before it
        emit_commits();
        put(fresh(packet_kind::overflow));
        after_discard();
        return;
      case K::transaction_start: {
        put(fresh(packet_kind::transaction_start));
        t_ = true;
        if (!cfg().commtrans) p0_emitted();
        return;
      }
      case K::transaction_commit:
        put(fresh(packet_kind::transaction_commit));
        t_ = false;
        return;
      case K::instrumentation: {
        if (!has_kind(packet_kind::instrumentation)) return refuse();
        packet& p = fresh(packet_kind::instrumentation);
        p.info = e.number;
        p.address = e.address;
        put(p);
        return;
      }
      default: return;
    }
  }

  // The elements a producer makes (producer.hpp): the kinds that hold nothing back for a
  // later element to complete. The same as take() for them, reached without take()'s
  // speculation paths (Cancel, Mispredict, Q, Discard), which an image that only produces then
  // leaves out. False (nothing done) for other kinds; committed_start() has checked that
  // push() holds nothing back.
  TRACECODEC_FLAT constexpr bool take_committed(const element& e) noexcept {
    using K = element_kind;
    switch (e.kind) {
      case K::atom:
      case K::context:
      case K::target_address:
      case K::exception:
      case K::trace_info:
      case K::trace_on:
      case K::timestamp:
      case K::cycle_count:
      case K::event: break;
      default: return false;
    }
    if (e.p0 && opt_.input == input_kind::stage1) in_depth_ += p0_weight(e);
    if (e.kind == K::atom) {
      add_atoms(e);
      return true;
    }
    flush_atoms();
    count_behind();
    if (e.kind == K::context) {
      add_context(e);
      return true;
    }
    if (e.kind == K::target_address) {
      add_target(e);
      return true;
    }
    if (e.kind == K::exception) {
      add_exception(e);
      return true;
    }
    flush_pending();
    switch (e.kind) {
      case K::trace_info: add_trace_info(e); break;
      case K::trace_on: put_single(packet_kind::trace_on); break;
      case K::timestamp: add_timestamp(e); break;
      case K::cycle_count: put_cycle_count(e); break;
      default: add_event(e); break;
    }
    return true;
  }

  constexpr void add_atoms(const element& e) noexcept {
    flush_pending();
    append_atoms(e);
  }
  // From elements[i]: the atoms push() would take one by one without writing a byte (nothing
  // held back, no periodic sync due, room for push(), and room among the held atoms, so no
  // flush), their bits inserted a run at a time, the count in a local. Returns the index of
  // the first element not taken.
  constexpr std::size_t take_atoms(const element* elements, std::size_t i, std::size_t count) noexcept {
    if (status() != error_code::ok || (out_.buffer == nullptr && Staging - len_ < push_room) ||
        holds_back() || has_target_ ||
        (opt_.sync_interval && total() - last_sync_ >= opt_.sync_interval))
      return i;
    return take_atoms_unchecked(elements, i, count);
  }
  // take_atoms() once its tests have passed (take_run() has made them for its whole run).
  // Out of line: a call per run of atoms, and take_run()'s loop keeps its own registers.
  TRACECODEC_OUT_OF_LINE constexpr std::size_t take_atoms_unchecked(const element* elements,
                                                                    std::size_t i,
                                                                    std::size_t count) noexcept {
    unsigned n = natoms_;
    std::uint32_t depth = in_depth_;
    const bool stage1 = opt_.input == input_kind::stage1;
    // The word being filled in a register: bits [0, o) of word w are the held atoms'.
    unsigned w = n / 32, o = n % 32;
    std::uint64_t word = abits_[w] & ((std::uint32_t{1} << o) - 1u);
    while (i < count && elements[i].kind == element_kind::atom) {
      const element& e = elements[i];
      if (e.count == 0) {  // single atoms, as a resolver without atom runs gives them all
        if (n == max_atoms) break;
        // A loop of their own, bounded by the room among the held atoms: each costs its bit
        // and no count of its own.
        const std::size_t end = count - i < max_atoms - n ? count : i + (max_atoms - n);
        const std::size_t from = i;
        const auto one = [&](const element& x) {
          word |= std::uint64_t{x.taken} << o;
          if (stage1) depth += x.p0 ? 1u : 0u;
          if (++o == 32) {
            abits_[w++] = static_cast<std::uint32_t>(word);
            word = 0;
            o = 0;
          }
        };
        // One at a time (most runs are short), and after four, four at a time while the next
        // four are all single atoms: one test and one OR for the four. (The one-at-a-time
        // loops test with &&, not single_atom_at(): a branch per field costs fewer
        // instructions there than loading and combining both.)
        const std::size_t stop = end - i > 4 ? i + 4 : end;
        do one(elements[i]);
        while (++i != stop && elements[i].kind == element_kind::atom && elements[i].count == 0);
        if (i == stop && stop != end) {
          while (end - i >= 4) {
            const element* const q = elements + i;
            if (!(single_atom_at(q[0]) & single_atom_at(q[1]) & single_atom_at(q[2]) &
                  single_atom_at(q[3])))
              break;
            word |= (std::uint64_t{q[0].taken} | std::uint64_t{q[1].taken} << 1 |
                     std::uint64_t{q[2].taken} << 2 | std::uint64_t{q[3].taken} << 3)
                    << o;
            if (stage1)
              depth += unsigned{q[0].p0} + unsigned{q[1].p0} + unsigned{q[2].p0} + unsigned{q[3].p0};
            i += 4;
            if ((o += 4) >= 32) {
              abits_[w++] = static_cast<std::uint32_t>(word);
              word >>= 32;
              o -= 32;
            }
          }
          for (; i != end && elements[i].kind == element_kind::atom && elements[i].count == 0; ++i)
            one(elements[i]);
        }
        n += static_cast<unsigned>(i - from);
        continue;
      }
      if (e.count > 32) break;
      const unsigned k = e.count;
      if (n + k > max_atoms) break;
      const std::uint32_t bits = k == 32 ? e.atom_bits : e.atom_bits & ((1u << k) - 1u);
      word |= std::uint64_t{bits} << o;
      o += k;
      if (o >= 32) {
        abits_[w++] = static_cast<std::uint32_t>(word);
        word >>= 32;
        o -= 32;
      }
      if (stage1 && e.p0) depth += k;
      n += k;
      ++i;
    }
    abits_[w] = static_cast<std::uint32_t>(word);
    natoms_ = n;
    in_depth_ = depth;
    return i;
  }
  static constexpr bool single_atom_at(const element& e) noexcept {
    return (e.kind == element_kind::atom) & (e.count == 0);
  }
  // From elements[i]: what push() would take through its lean paths (take_lean() and the
  // atoms), in one loop: the tests that hold for a whole run (status, no periodic sync,
  // nothing held back but atoms and a target address) made once, not once per element; runs
  // of single atoms as take_atoms() takes them. Returns the index of the first element not
  // taken, or (err_ set) the one after the element that gave an error, as push(elements,
  // count) counts them. Anything else is left to push().
  constexpr std::size_t take_run(const element* elements, std::size_t i, std::size_t count) noexcept {
    if (status() != error_code::ok || opt_.sync_interval != 0 || holds_back()) return i;
    // Held in a local: the compressor's members are read again after every byte written.
    const bool staging = out_.buffer == nullptr;
    while (i < count) {
      if (staging && Staging - len_ < push_room) return i;  // push() says so
      const element& e = elements[i];
      if (e.kind == element_kind::atom) {
        if (e.count > 32) return i;  // unencodable: push() says so
        if (!has_target_) {
          const std::size_t j = take_atoms_unchecked(elements, i, count);
          if (j != i) {
            i = j;
            continue;
          }
        }
        // After a held target, or with the held atoms full (take_atoms() takes nothing then):
        // take_lean_unchecked() puts the target, and append_atoms() flushes.
      }
      if (!take_lean_unchecked(e)) {
        // Tested where the lean kinds have failed: no test in their way.
        const unsigned k = e.kind == element_kind::q ? take_q_and_target(elements, i, count) : 0u;
        if (k == 0) return i;
        i += k;
        if (err_ != error_code::ok) return i;
        continue;
      }
      ++i;
      if (err_ != error_code::ok) return i;
    }
    return i;
  }
  // A Q element and the Target Address element after it (a Q packet with an address gives
  // both, D9.2.11.2 QPacket()), as take() takes them one after the other (the Q held back, then
  // put with the target in its address form, straight to bytes where it can), in one step.
  // Returns the elements taken: 0, with nothing done, if they are not such a pair or a relief
  // is due at either (take() defers it while the Q is held), for push() to take the Q; 1, the
  // Q held as take() holds it, if what was held before it gave an error (push() gives it for
  // the Q) or left the staging buffer without push()'s room for the target; else 2.
  TRACECODEC_OUT_OF_LINE constexpr unsigned take_q_and_target(const element* elements, std::size_t i,
                                                              std::size_t count) noexcept {
    const element& q = elements[i];
    if (count - i < 2 || relief_left_ <= 2 || q.is(element_flag::count_unknown)) return 0;
    const element& t = elements[i + 1];
    if (t.kind != element_kind::target_address || t.is(element_flag::unknown_address)) return 0;
    --relief_left_;  // count_behind() for the Q
    if (q.p0 && opt_.input == input_kind::stage1) in_depth_ += p0_weight(q);
    if (natoms_ != 0) flush_atoms();
    if (has_target_) put_held_target();
    if (err_ != error_code::ok || (out_.buffer == nullptr && Staging - len_ < push_room)) {
      q_ = q;
      has_q_ = true;
      return 1;
    }
    --relief_left_;  // count_behind() for the target
    if (!write_q_with_target(q, t)) put_q_built(q, &t);
    return 2;
  }
  // An atom run (at most 32 atoms, fewer than max_atoms) flushes the atoms at most once, as a
  // single atom may: it fits in max_element_bytes.
  constexpr void append_atoms(const element& e) noexcept {
    if (!tracecodec::detail::compact && e.count == 0) {  // a single atom, the commonest
      if (natoms_ == max_atoms) flush_atoms();
      return set_atom(natoms_++, e.taken);
    }
    for (unsigned i = 0, n = atom_count(e); i < n; ++i) {
      if (natoms_ == max_atoms) flush_atoms();
      set_atom(natoms_++, atom_taken(e, i));
    }
  }
  constexpr void add_context(const element& e) noexcept {
    if (has_ctx_ || has_target_) flush_pending();
    ctx_ = e;
    has_ctx_ = true;
  }
  constexpr void add_target(const element& e) noexcept {
    if (has_target_) flush_pending();
    hold_target(e);
  }
  // What is read of a held target: its address, isa and flags (not a whole element's copy).
  constexpr void hold_target(const element& e) noexcept {
    if constexpr (tracecodec::detail::compact) {  // less code
      target_ = e;
      has_target_ = true;
      return;
    }
    target_.kind = element_kind::target_address;
    target_.address = e.address;
    target_.sub_isa = e.sub_isa;
    target_.flags = e.flags;
    has_target_ = true;
  }
  constexpr void add_exception(const element& e) noexcept {
    using K = element_kind;
    const bool unknown = e.is(element_flag::unknown_address) || e.kind == K::transaction_failure;
    if (e.kind == K::transaction_failure && !e.p0) {
      // A PE Reset in a transaction: the pe_reset packet that follows regenerates it.
      if (has_target_ && target_.is(element_flag::unknown_address) && t_) return;
      // Otherwise only a Discard produces it: send a Discard.
      flush_pending();
      emit_commits();
      put(fresh(packet_kind::discard));
      depth_ = in_depth_ = 0;
      t_ = false;
      return;
    }
    const bool with_target =
        has_target_ && (unknown ? target_.is(element_flag::unknown_address)
                                : (!target_.is(element_flag::unknown_address) &&
                                   target_.address == e.address && target_.sub_isa == e.sub_isa));
    if (!with_target) {
      flush_pending();
    } else if (has_ctx_ && unknown) {
      put_context(ctx_.ctx);
      has_ctx_ = false;
    }
    has_target_ = false;
    put_exception(e, with_target, unknown);
    if (e.kind == K::transaction_failure || (e.exception_type == 0 && with_target)) t_ = false;
    p0_emitted();
  }
  constexpr void add_trace_info(const element& e) noexcept {  // A-Sync + Trace Info
    emit_commits();
    start();
    put_async();
    packet& p = fresh(packet_kind::trace_info);
    const bool cc = e.is(element_flag::cc_enabled);
    const bool tx = e.is(element_flag::in_transaction);
    p.info = static_cast<std::uint8_t>((cc ? 1u : 0u) | (tx ? 0x40u : 0u));
    p.count = depth_;  // SPEC: the decoder's depth here
    if (opt_.input == input_kind::stage1) in_depth_ = e.count;
    p.cycles = cc ? e.cycles : 0;
    p.plctl = static_cast<std::uint8_t>((p.info ? 1u : 0u) | (p.count ? 4u : 0u) | (p.cycles ? 8u : 0u));
    put(p);
    t_ = tx;
    cc_ = cc;
    last_sync_ = total();
  }
  constexpr void add_timestamp(const element& e) noexcept {
    if constexpr (lean) {
      if (!e.is(element_flag::has_cycles)) {
        std::uint8_t* const o = next_room();
        if (o == nullptr) return;
        if (const unsigned n = enc_.write_timestamp(o, e.timestamp)) return advance(n);
      }
    }
    packet& p = fresh(packet_kind::timestamp);
    p.timestamp = e.timestamp;
    if (e.is(element_flag::has_cycles)) {
      p.flags = packet_flag::has_count;
      p.cycles = e.cycles;
    }
    put(p);
  }
  constexpr void add_event(const element& e) noexcept {
    // Consecutive events with rising numbers share a packet (D9.2.17.2).
    if (last_event_len_ && len_ >= 1 && (last_event_bits_ >> e.number) == 0 &&
        last_event_at_ == total() && e.number < cfg().numevent) {  // only implemented events
      const std::uint8_t bits = static_cast<std::uint8_t>(last_event_bits_ | (1u << e.number));
      base()[len_ - 1] = static_cast<std::uint8_t>(0x70 | bits);
      last_event_bits_ = bits;
      return;
    }
    packet& p = fresh(packet_kind::event);
    p.events = static_cast<std::uint8_t>(1u << e.number);
    put(p);
    last_event_len_ = 1;
    last_event_bits_ = p.events;
    last_event_at_ = total();
  }

  // Cycle Count packets (D5.26-D5.34): COMMOPT 0 forms carry the commits owed so far.
  constexpr void put_cycle_count(const element& e) noexcept {
    using K = packet_kind;
    const bool unknown = e.is(element_flag::cycles_unknown);
    const std::uint32_t th = enc_.state().cc_threshold;
    const std::uint32_t v = e.cycles >= th ? e.cycles - th : 0;
    const std::uint32_t c = cfg().commopt ? 0 : owed();
    const std::uint32_t ms = cfg().maxspec;
    K k;
    if (cfg().commopt)
      k = unknown ? K::cycle_count_f1_1_unknown
          : v <= 3 ? K::cycle_count_f3_1
          : v <= 15 ? K::cycle_count_f2_1
                    : K::cycle_count_f1_1;
    else
      k = unknown                                          ? K::cycle_count_f1_0_unknown
          : c >= 1 && c <= 4 && v <= 3                     ? K::cycle_count_f3_0
          : c >= 1 && c <= 16 && v <= 15                   ? K::cycle_count_f2_0_small
          : c >= 1 && v <= 15 && c + 15 >= ms && c <= ms ? K::cycle_count_f2_0_large
                                                           : K::cycle_count_f1_0;
    put_cycle_count(k, unknown ? 0 : e.cycles, c);
    depth_ -= c;
  }
  constexpr void put_cycle_count(packet_kind k, std::uint32_t cycles, std::uint32_t commits) noexcept {
    const bool unknown = k == packet_kind::cycle_count_f1_0_unknown ||
                         k == packet_kind::cycle_count_f1_1_unknown;
    if constexpr (lean) {
      if (!unknown) {
        std::uint8_t* const o = next_room();
        if (o == nullptr) return;
        if (const unsigned n = enc_.write_cycle_count(o, k, cycles, commits)) return advance(n);
      }
    }
    packet& p = fresh(k);
    p.cycles = cycles;
    p.count = commits;
    if (unknown) p.flags = packet_flag::cycles_unknown;
    put(p);
  }
  // A packet that is its header alone (Trace On, Timestamp Marker).
  constexpr void put_single(packet_kind k) noexcept {
    if constexpr (lean) {
      std::uint8_t* const o = next_room();
      if (o == nullptr) return;
      if (enc_.write_single(o, k)) return advance(1);
    }
    put(fresh(k));
  }

  encoder<Config> enc_{};
  compressor_options opt_{};
  error_code err_ = error_code::ok;
  compressor_output out_{};
  error_code status_ = error_code::ok;
  std::uint8_t buf_[Staging ? Staging : 1]{};
  std::size_t len_ = 0;
  // len_ below this: room for any packet without a hand-over; 0 until the stream's A-Sync.
  std::size_t room_end_ = 0;
  // Bytes drained or handed over: bytes_out() is this plus len_. (Not a second counter that
  // each packet adds to: GCC adds the two in one vector store, and the next packet's load of
  // len_ then waits for it, as a store cannot be forwarded to a narrower load.)
  std::uint64_t drained_ = 0;
  std::uint32_t abits_[max_atoms / 32 + 2]{};  // pending atoms, bit i = atom i, 1 = E
  unsigned natoms_ = 0;
  std::uint32_t depth_ = 0;  // the decoder's speculation depth after what was emitted
  std::uint32_t in_depth_ = 0;  // the input's speculation depth (stage 1)
  element ctx_{}, target_{}, q_{};
  packet pk_{};  // fresh()
  std::uint32_t cancel_n_ = 0;
  bool has_ctx_ = false, has_target_ = false, has_q_ = false, has_cancel_ = false;
  bool has_discard_ = false, skip_tf_ = false, t_ = false;
  std::uint8_t last_event_len_ = 0, last_event_bits_ = 0;
  std::uint16_t relief_left_ = relief_interval();  // elements other than atoms to relieve()
  std::uint64_t last_event_at_ = 0;
  std::uint64_t last_sync_ = 0;
  bool cc_ = false;
};

}  // namespace tracecodec::ete
