// SPDX-License-Identifier: Apache-2.0
// Streaming ETE packet decoder (D9.2 stage 1): bytes in any chunking -> fully resolved packets.
// Zero allocation, no exceptions; errors are values with the offset of the offending packet.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "async_search.hpp"
#include "config.hpp"
#include "../error.hpp"
#include "fields.hpp"
#include "header_table.hpp"
#include "../../detail/hot.hpp"
#include "packet.hpp"
#include "state.hpp"

namespace tracecodec::ete {

enum class decode_status : std::uint8_t {
  packet,      // `out` holds the next packet
  error,       // diagnostic() says what and where; decoding resumes at the next A-Sync
  need_input,  // feed() the next chunk (or finish())
  end,         // finish() was called and everything is reported
};

struct decoder_stats {
  std::uint64_t packets = 0;
  std::uint64_t errors = 0;
  std::uint64_t bytes_skipped = 0;  // bytes not part of any packet (before/after sync loss)
};

// Largest packet other than A-Sync: Exception 64-bit with context, CID and VMID (20 bytes;
// 21 with ETMv4's second exception byte).
inline constexpr unsigned max_packet_size = 21;

template <class Config = runtime_config>
class decoder {
 public:
  template <class C = Config, class = std::enable_if_t<C::is_fixed>>
  constexpr decoder() noexcept {}
  constexpr explicit decoder(const runtime_config& c) noexcept : conf_(c) {}
  constexpr explicit decoder(const registers& r) noexcept : conf_(runtime_config(r)) {}

  constexpr const config& cfg() const noexcept { return conf_.get(); }
  constexpr const stream_state& state() const noexcept { return st_; }
  constexpr const decoder_stats& stats() const noexcept { return stats_; }
  constexpr const diagnostic& last_diagnostic() const noexcept { return diag_; }

  // Starts a new trace session: unsynchronized, offset 0, state reset.
  constexpr void reset() noexcept {
    const auto keep = conf_;
    *this = decoder(keep);
  }

  // reset(), for a session whose first byte is at stream offset `offset` (a segment of a
  // larger buffer, decoded on its own: host/ete/parallel.hpp): packets and diagnostics give
  // offsets counted from the start of that larger buffer.
  constexpr void reset_at(std::uint64_t offset) noexcept {
    reset();
    pos_ = scan_from_ = run_start_ = start_ = offset;
  }

  // Synchronized, between two packets, nothing of a packet held back: what follows decodes
  // exactly as a fresh decoder decodes it when it begins with an A-Sync (D5.4).
  constexpr bool between_packets() const noexcept {
    return !scanning_ && buf_len_ == 0 && !has_pending_ && conf_.status() == error_code::ok;
  }

  // Hands the decoder the next chunk. The previous chunk must have been consumed
  // (next() returned need_input). The bytes must stay valid until then.
  constexpr void feed(const std::uint8_t* data, std::size_t size) noexcept {
    cur_ = data;
    end_ = data + size;
  }
  template <class Bytes>
  constexpr auto feed(const Bytes& bytes) noexcept -> decltype(bytes.data(), bytes.size(), void()) {
    feed(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  }
  // No more input follows: a partial packet left over is reported as truncated.
  constexpr void finish() noexcept { finished_ = true; }

  // Decodes the next packet of the input fed so far.
  constexpr decode_status next(packet& out) noexcept {
    if (conf_.status() != error_code::ok) {
      if (config_reported_) return finished_ ? decode_status::end : drain();
      config_reported_ = true;
      return report({conf_.status(), 0, 0});
    }
    if (has_pending_) {
      has_pending_ = false;
      out = pending_;
      ++stats_.packets;
      return decode_status::packet;
    }
    for (;;) {
      if (scanning_) {
        const decode_status s = scan(out);
        if (s == decode_status::need_input) return at_end_of_input();
        return s;
      }
      if (buf_len_ == 0) {
        const std::size_t avail = static_cast<std::size_t>(end_ - cur_);
        if (avail == 0) return at_end_of_input();
        const std::uint64_t off = pos_;
        // The compact form (firmware) has one parser, the one that checks every read.
        const parse_result r = !tracecodec::detail::compact && avail >= 32
                                   ? parse<false>(cur_, end_, off, out)
                                   : parse<true>(cur_, end_, off, out);
        switch (r.status) {
          case parse_status::ok:
            note_tail(cur_, r.size);
            advance(r.size);
            ++stats_.packets;
            return decode_status::packet;
          case parse_status::async_overlap:
            advance(r.size);
            return overlap(out, r.size);
          case parse_status::need_more:  // keep the partial packet for the next chunk
            if (avail >= 32) return fail(error_code::malformed_payload, off);  // unreachable
            for (std::size_t i = 0; i < avail; ++i) buf_[i] = cur_[i];
            buf_len_ = static_cast<std::uint8_t>(avail);
            buf_off_ = pos_;
            advance(avail);
            return at_end_of_input();
          case parse_status::async_run:
            begin_async_run(off, r.size);
            advance(r.size);
            continue;
          case parse_status::error:
            advance(1);  // resume the A-Sync search at the byte after the header
            return fail(r.error, off);
        }
      } else {
        // A packet split across chunks: complete it in the carry buffer.
        const unsigned old = buf_len_;
        const std::size_t avail = static_cast<std::size_t>(end_ - cur_);
        const unsigned take = static_cast<unsigned>(avail < 32 - old ? avail : 32 - old);
        for (unsigned i = 0; i < take; ++i) buf_[old + i] = cur_[i];
        const parse_result r = parse<true>(buf_, buf_ + old + take, buf_off_, out);
        switch (r.status) {
          case parse_status::ok:
          case parse_status::async_run:
          case parse_status::async_overlap:
            if (r.status == parse_status::ok) note_tail(buf_, r.size);
            if (r.size >= old) {
              advance(r.size - old);
              buf_len_ = 0;
            } else {
              drop_front(r.size);
            }
            if (r.status == parse_status::async_run) {
              begin_async_run(out.offset, r.size);
              continue;
            }
            if (r.status == parse_status::async_overlap) return overlap(out, r.size);
            ++stats_.packets;
            return decode_status::packet;
          case parse_status::need_more:
            advance(take);
            buf_len_ = static_cast<std::uint8_t>(old + take);
            if (cur_ == end_) return at_end_of_input();
            {  // 32 bytes always hold a whole packet: unreachable, but never loop
              const std::uint64_t off = buf_off_;
              drop_front(1);
              return fail(error_code::malformed_payload, off);
            }
          case parse_status::error: {
            const std::uint64_t off = buf_off_;
            drop_front(1);  // rescan the carried bytes after the header for an A-Sync
            return fail(r.error, off);
          }
        }
      }
    }
  }

  // Convenience: decodes a whole buffer as one session, calling on_packet(const packet&) and
  // on_error(const diagnostic&).
  template <class OnPacket, class OnError>
  constexpr void decode(const std::uint8_t* data, std::size_t size, OnPacket&& on_packet,
                        OnError&& on_error) noexcept {
    decode(data, size, on_packet, on_error, nullptr);
  }

  // Streaming form of decode(): one session in chunks of any size. decode_part() decodes
  // every packet the chunk completes; a packet cut by the chunk's end is carried over, so the
  // bytes need not outlive the call. decode_end() ends the session: a packet left incomplete
  // is reported as truncated_packet.
  template <class OnPacket, class OnError>
  constexpr void decode_part(const std::uint8_t* data, std::size_t size, OnPacket&& on_packet,
                             OnError&& on_error) noexcept {
    decode(data, size, on_packet, on_error, nullptr, input::more);
  }
  template <class OnPacket, class OnError>
  constexpr void decode_end(OnPacket&& on_packet, OnError&& on_error) noexcept {
    decode(nullptr, 0, on_packet, on_error, nullptr, input::last);
  }

  // Whether more input follows the bytes of a decoding call (input::more: a chunk of a
  // stream) or the session ends with them (input::last).
  enum class input : bool { last, more };

  // The same, but atom packets (formats 1-6, most of real trace) are handed to
  // on_atoms(offset, atom bits, atom count) without building a packet: for consumers that
  // only want the atoms, such as the element layer. on_atoms = nullptr: every packet goes to
  // on_packet, as in the four-argument decode(). An on_atoms with a member
  // window(offset, word) gets two to eight atom packets in a row there at once, where the loop
  // finds them together: their header bytes in word, offset's in the low byte, zero bytes
  // above the last (detail::each_atom_packet). One with a member target(offset, address, isa)
  // gets the Target Address packets there too (D9.2.14.4-7), as their fields, and one with a
  // member cycle_count(offset, cycles) the Cycle Counts of formats 2 and 3 under COMMOPT 1.
  template <class OnPacket, class OnError, class OnAtoms>
  constexpr void decode(const std::uint8_t* data, std::size_t size, OnPacket&& on_packet,
                        OnError&& on_error, OnAtoms&& on_atoms, input end = input::last) noexcept {
    constexpr bool split = !std::is_same_v<std::remove_cvref_t<OnAtoms>, std::nullptr_t>;
    feed(data, size);
    if (end == input::last) finish();
    // The compact form (firmware) keeps the packet in the decoder, not on the stack.
    packet local{};
    packet& p = tracecodec::detail::compact ? scratch_ : local;
    for (;;) {
      // Hot loop: synchronized, nothing carried over, a whole packet surely in the input.
      // Anything unusual (errors, A-Sync runs, the input's tail) goes through next(). The
      // compact form (firmware) has only next(): the same packets, a third of the code.
      if (!tracecodec::detail::compact && !scanning_ && buf_len_ == 0 && !has_pending_ &&
          conf_.status() == error_code::ok) {
        // The cursor lives in locals here: as members, every store the consumer makes could
        // alias them, and reloading the cursor would chain each packet to the last one's stores.
        // stats(), the position and zero_tail_ catch up when the loop ends.
        const std::uint8_t* cur = cur_;
        const std::uint8_t* const end = end_;
        // stats_.packets is counted from the bytes passed when the loop ends: one packet per
        // byte, less `extra`, the bytes of each packet after its first. So the one-byte
        // packets (most of real trace) count nothing as they pass.
        std::uint64_t pos = pos_, extra = 0;
        // zero_tail_ (the zeros an A-Sync may have lost to the packets before it) is not kept
        // up to date at every packet: it is counted back from a header that may begin an
        // A-Sync, and when the loop ends.
        const std::uint8_t* const first = cur;
        const std::uint32_t ztail_before = zero_tail_;
        // Ends a packet x of the fast paths whose payload ends at q: its place, the cursor,
        // and the consumer's call.
        auto emit = [&](packet& x, const std::uint8_t* q) TRACECODEC_HOT_LAMBDA {
          const auto n = static_cast<std::uint32_t>(q - cur);
          x.offset = pos;
          x.size = n;
          cur = q;
          pos += n;
          extra += n - 1;
          on_packet(static_cast<const packet&>(x));
        };
        // Packets here are at most 32 bytes long; a bound computed once keeps the test to one
        // compare.
        const std::uint8_t* const limit = end - cur >= 32 ? end - 31 : cur;
        // The fast paths' packets: one for atom and other plain one-byte packets, one each for
        // target addresses, timestamps, Q, counts and the other one-byte packets, zeroed here
        // once, each path writing only its own fields.
        // Not p: the general parser and next() take p's address, so an inlined consumer would
        // reload every field of p for each packet; these never leave the loop but by const
        // reference, so an inlined consumer reads their untouched fields as the constant zero.
        packet one{}, ap{}, tp{}, qp{}, cp{}, np{};
        one.size = 1;
        tp.kind = packet_kind::timestamp;
        // A one-byte packet whose header entry holds all its fields (header_entry::plain).
        auto plain_packet = [&](const header_entry& e) TRACECODEC_HOT_LAMBDA {
          one.offset = pos;
          one.kind = e.kind;
          one.atoms = e.atoms;
          one.atom_count = e.atom_count;
          on_packet(static_cast<const packet&>(one));
        };
        while (cur < limit) {
          const std::size_t h = *cur;
          const header_entry& he = table().at(h);
          // Atom packets (most of real trace) are told by the header byte alone, 0xC0-0xFF in
          // every configuration (D9.2.10, detail::atoms_are_headers_c0_to_ff): where the
          // predictor misses this test (trace it cannot learn), the miss is found without
          // waiting for the entry's load.
          if (h >= 0xc0u) {
            if constexpr (split) {
              // Two to eight atom packets in a row go to an on_atoms with a member
              // window(offset, their header bytes) at once. The next byte is tested first:
              // one compare for an atom packet on its own (in some trace most are, e.g. an
              // atom before each address).
              if constexpr (requires { on_atoms.window(pos, std::uint64_t{}); }) {
                if (cur[1] >= 0xc0u) {  // cur + 31 < end
                  const std::uint64_t word = detail::load_le64(cur);
                  const std::uint64_t others = ~word & 0xc0c0c0c0c0c0c0c0u;  // bytes < 0xC0
                  // n >= 2 atom headers before the first other byte (none: all eight).
                  const unsigned n = others == 0 ? 8u : static_cast<unsigned>(__builtin_ctzll(others)) / 8;
                  on_atoms.window(pos, word & (~std::uint64_t{0} >> (64 - 8 * n)));
                  cur += n;
                  pos += n;
                  continue;
                }
              }
              on_atoms(pos, he.atoms, he.atom_count);
            } else {
              plain_packet(he);
            }
            ++cur;
            ++pos;
            continue;
          }
          if (he.plain) {  // the other one-byte packets whose entry holds all their fields
            plain_packet(he);
            ++cur;
            ++pos;
            continue;
          }
          switch (he.op) {
            case payload_op::timestamp: {
              // Timestamp without COUNT (D5.9), the bulk of timestamp-heavy trace: inline,
              // without the general parser's dispatch.
              if (he.flags & packet_flag::has_count) break;
              const std::uint8_t* q = cur + 1;
              std::uint64_t ts = 0;
              std::uint8_t len = 0;
              if (!detail::read_leb_short(q, ts, len) &&
                  detail::read_leb_unchecked(q, detail::leb_ts(cfg().ts_max_bytes()), ts, len) !=
                      detail::read_status::ok)
                break;
              const std::uint64_t mask = detail::leb_mask(len);
              st_.timestamp = (st_.timestamp & ~mask) | ts;
              tp.timestamp = st_.timestamp;
              tp.value_bytes = len;
              emit(tp, q);
              continue;
            }
            case payload_op::addr_short:
            case payload_op::addr_exact:
            case payload_op::addr_32:
            case payload_op::addr_64: {
              // Target addresses without context (D9.2.14.4-7), the most common packets after
              // atoms.
              const std::uint8_t* q = cur + 1;
              if constexpr (split && requires { on_atoms.target(pos, std::uint64_t{}, isa{}); }) {
                // The same payload forms carry Source Addresses (D5.60-D5.66, D9.2.12): only
                // the Target Address kinds (one run of the enum) go to target(), as their
                // address and isa (target_address<false>: no packet's encoding fields).
                static_assert(detail::target_kinds_are_a_run());
                constexpr auto first_target = static_cast<unsigned>(packet_kind::address_exact);
                if (static_cast<unsigned>(he.kind) - first_target <=
                    static_cast<unsigned>(packet_kind::address_64_is1) - first_target) {
                  const address_entry a = target_address<false>(he, q, ap);
                  st_.history.add(a.address, a.sub_isa);
                  const auto n = static_cast<std::uint32_t>(q - cur);
                  on_atoms.target(pos, a.address, a.sub_isa);
                  cur = q;
                  pos += n;
                  extra += n - 1;
                  continue;
                }
              }
              const address_entry a = target_address(he, q, ap);
              st_.history.add(a.address, a.sub_isa);
              ap.address = a.address;
              ap.sub_isa = a.sub_isa;
              emit(ap, q);
              continue;
            }
            case payload_op::q_short:
            case payload_op::q_exact:
            case payload_op::q_32: {  // Q (D9.2.11.1): an address, then the count
              const std::uint8_t* q = cur + 1;
              const address_entry a = target_address(he, q, qp);
              if (!fast_count(he, q, qp)) break;
              st_.history.add(a.address, a.sub_isa);
              qp.address = a.address;
              qp.sub_isa = a.sub_isa;
              emit(qp, q);
              continue;
            }
            case payload_op::leb_count:  // Commit, Cancel format 1 (D5.35, D5.36)
            {
              const std::uint8_t* q = cur + 1;
              if (!fast_count(he, q, cp)) break;
              emit(cp, q);
              continue;
            }
            default: break;
          }
          if constexpr (split && requires { on_atoms.cycle_count(pos, std::uint32_t{}); }) {
            // Cycle Counts of COMMOPT 1 (they commit nothing) to a sink with a member
            // cycle_count(offset, cycles), as their count: format 3 (D5.34, one byte) the
            // threshold plus the header's bits, format 2 (D5.32) the threshold plus BBBB. A fixed
            // configuration without them has no test.
            constexpr auto f3 = packet_kind::cycle_count_f3_1, f2 = packet_kind::cycle_count_f2_1;
            if (detail::kind_exists<Config>(f3) && he.kind == f3) {
              on_atoms.cycle_count(pos, st_.cc_threshold + he.aux);
              ++cur;
              ++pos;
              continue;
            }
            if (detail::kind_exists<Config>(f2) && he.kind == f2) {
              on_atoms.cycle_count(pos, st_.cc_threshold + (cur[1] & 0xfu));  // cur + 31 < end
              cur += 2;
              pos += 2;
              ++extra;
              continue;
            }
          }
          if (he.op == payload_op::none && he.kind != packet_kind::context_same) {
            // The other one-byte packets (Cycle Count format 3, Cancel formats 2 and 3, Event:
            // D5.33-D5.34, D5.37-D5.38, D5.68): the table's fields, as parse() gives them.
            // Tested after the switch, not as a case of it: as a case it changed how GCC
            // compiled the switch, at a cost to corpora without these packets (bench/README.md).
            np.kind = he.kind;
            np.atoms = he.atoms;
            np.atom_count = he.atom_count;
            np.flags = he.flags;
            np.ignored_bits = he.ignored;
            header_fields(he, np);
            emit(np, cur + 1);
            continue;
          }
          if (*cur == 0) zero_tail_ = zeros_before(first, cur, ztail_before);  // parse() reads it
          packet gp;  // as the fast paths' packets: not p, whose address next() takes
          const parse_result r = parse<false>(cur, end, pos, gp);
          if (r.status != parse_status::ok) break;
          cur += r.size;
          pos += r.size;
          extra += r.size - 1;
          on_packet(static_cast<const packet&>(gp));
        }
        stats_.packets += pos - pos_ - extra;
        cur_ = cur;
        pos_ = pos;
        zero_tail_ = zeros_before(first, cur, ztail_before);
      }
      const decode_status s = next(p);
      if (s == decode_status::packet)
        on_packet(static_cast<const packet&>(p));
      else if (s == decode_status::error)
        on_error(static_cast<const diagnostic&>(diag_));
      else
        return;
    }
  }

 private:
  constexpr explicit decoder(const detail::configured<Config>& c) noexcept : conf_(c) {}

  // async_overlap: an A-Sync whose first zeros were taken as the payload of packets decoded
  // out of alignment (after corruption): reported as bad_async, then as the A-Sync.
  enum class parse_status : std::uint8_t { ok, need_more, error, async_run, async_overlap };
  struct parse_result {
    parse_status status;
    error_code error;
    std::uint32_t size;
  };
  // Longest zero run parse() counts itself (parse_result::size is 32 bits).
  static constexpr std::ptrdiff_t async_parse_limit = std::ptrdiff_t{1} << 30;
  static constexpr parse_result ok(std::uint32_t n) noexcept { return {parse_status::ok, error_code::ok, n}; }
  static constexpr parse_result need_more() noexcept {
    return {parse_status::need_more, error_code::ok, 0};
  }
  static constexpr parse_result bad(error_code e) noexcept { return {parse_status::error, e, 0}; }

  constexpr const auto& table() const noexcept { return conf_.table(); }

  constexpr void advance(std::size_t n) noexcept {
    cur_ += n;
    pos_ += n;
  }
  constexpr void drop_front(unsigned n) noexcept {
    for (unsigned i = n; i < buf_len_; ++i) buf_[i - n] = buf_[i];
    buf_len_ = static_cast<std::uint8_t>(buf_len_ - n);
    buf_off_ += n;
  }
  constexpr decode_status report(const diagnostic& d) noexcept {
    diag_ = d;
    ++stats_.errors;
    return decode_status::error;
  }
  constexpr decode_status drain() noexcept {
    cur_ = end_;
    return decode_status::need_input;
  }
  // An error: report it, lose synchronization, look for the next A-Sync.
  constexpr decode_status fail(error_code e, std::uint64_t off) noexcept {
    zero_tail_ = 0;
    scan_from_ = off;
    scanning_ = true;
    expect_async_ = false;
    zeros_ = 0;
    return report({e, off, 0});
  }
  // Zero bytes at the end of what the parser consumed, so that an A-Sync whose first zeros
  // went into a packet decoded out of alignment is still found (D5.4: the pattern is unique).
  constexpr void note_tail(const std::uint8_t* p, std::uint32_t n) noexcept {
    zero_tail_ = zeros_before(p, p + n, zero_tail_);
  }
  // The zeros at the end of the bytes from `first` up to `at`, with `before` zeros before
  // `first` when they all are. Only whether it reaches 11 matters (an A-Sync's zeros), so it
  // stops at 64.
  static constexpr std::uint32_t zeros_before(const std::uint8_t* first, const std::uint8_t* at,
                                              std::uint32_t before) noexcept {
    std::uint32_t t = 0;
    while (t < 64 && at - t != first && at[-1 - static_cast<std::ptrdiff_t>(t)] == 0) ++t;
    if (t == 64) return 64;
    return at - t == first ? (before < 64 ? before + t : 64) : t;
  }
  // Reports the short zero run where it was found (bad_async), then the whole A-Sync at its
  // true offset (kept as the pending packet): it overlaps the packet that took its first zeros.
  constexpr decode_status overlap(const packet& async, std::uint32_t consumed) noexcept {
    if (&async != &pending_) pending_ = async;
    has_pending_ = true;
    zero_tail_ = 0;
    return report({error_code::bad_async, async.offset + async.size - consumed, 0});
  }

  constexpr void begin_async_run(std::uint64_t off, std::uint64_t zeros) noexcept {
    scanning_ = true;
    expect_async_ = true;
    zeros_ = zeros;
    run_start_ = off;
  }

  constexpr decode_status at_end_of_input() noexcept {
    if (!finished_) return decode_status::need_input;
    if (buf_len_ != 0) {  // a packet cut short by the end of the trace
      const std::uint64_t off = buf_off_;
      stats_.bytes_skipped += buf_len_;
      buf_len_ = 0;
      scanning_ = true;
      expect_async_ = false;
      zeros_ = 0;
      return report({error_code::truncated_packet, off, 0});
    }
    if (scanning_ && expect_async_) {
      expect_async_ = false;
      zeros_ = 0;
      return report({error_code::truncated_packet, run_start_, 0});
    }
    if (!synced_once_ && !skip_reported_ && pos_ != start_) {  // no A-Sync in the whole input
      skip_reported_ = true;
      stats_.bytes_skipped += pos_ - start_;
      return report({error_code::unsynchronized, start_, pos_ - start_});
    }
    return decode_status::end;
  }

  // Byte-level A-Sync search (D5.4: 11+ zero bytes then 0x80), over carried bytes then input.
  // With expect_async_ the run began at a packet boundary, and anything else is bad_async.
  TRACECODEC_OUT_OF_LINE constexpr decode_status scan(packet& out) noexcept {
    for (;;) {
      std::uint8_t b;
      std::uint64_t off;
      if (!tracecodec::detail::compact && !expect_async_ && buf_len_ == 0 && cur_ != end_) {
        // Searching: on to the 0x80 that ends the next A-Sync, or to the end of the input,
        // many bytes at a time (async_search.hpp); that byte is taken below.
        const detail::async_search_result h =
            detail::find_async(cur_, static_cast<std::size_t>(end_ - cur_), zeros_);
        if (h.zeros != 0 && h.zeros <= h.at) run_start_ = pos_ + (h.at - h.zeros);  // else it began before
        zeros_ = h.zeros;
        advance(h.at);
      }
      if (buf_len_ == 0 && cur_ != end_ && *cur_ == 0) {  // a zero run, a word at a time
        const std::uint8_t* z = skip_zeros(cur_, end_);
        if (zeros_ == 0) run_start_ = pos_;
        zeros_ += static_cast<std::uint64_t>(z - cur_);
        advance(static_cast<std::size_t>(z - cur_));
        continue;
      }
      if (buf_len_ != 0) {
        b = buf_[0];
        off = buf_off_;
        drop_front(1);
      } else if (cur_ != end_) {
        b = *cur_;
        off = pos_;
        advance(1);
      } else {
        return decode_status::need_input;
      }
      if (b == 0) {
        if (zeros_ == 0) run_start_ = off;
        ++zeros_;
        continue;
      }
      if (b == 0x80 && zeros_ >= 11) {
        scanning_ = false;
        const std::uint64_t skipped_before = run_start_ - scan_from_;
        out = packet{};
        out.kind = packet_kind::async;
        out.offset = run_start_;
        out.size = zeros_ + 1;
        zeros_ = 0;
        zero_tail_ = 0;
        if (!expect_async_) stats_.bytes_skipped += skipped_before;
        const bool first = !synced_once_;
        synced_once_ = true;
        scan_from_ = off + 1;
        if (first && !expect_async_ && skipped_before != 0) {
          skip_reported_ = true;
          pending_ = out;
          has_pending_ = true;
          return report({error_code::unsynchronized, 0, skipped_before});
        }
        ++stats_.packets;
        return decode_status::packet;
      }
      if (b == 0x80 && expect_async_ && zeros_ < 11 && zeros_ + zero_tail_ >= 11) {
        // As in parse(): the run's first zeros went into packets decoded out of alignment.
        packet& a = pending_;  // built where overlap() keeps it (no packet on the stack)
        a = packet{};
        a.kind = packet_kind::async;
        a.offset = run_start_ - (11 - zeros_);
        a.size = 12;
        const auto consumed = static_cast<std::uint32_t>(zeros_ + 1);  // at most 11
        scanning_ = expect_async_ = false;
        zeros_ = 0;
        synced_once_ = true;
        scan_from_ = off + 1;
        return overlap(a, consumed);
      }
      if (expect_async_) {  // D9.2.3.1: a run of zeros must end in 0x80
        expect_async_ = false;
        zeros_ = 0;
        scan_from_ = run_start_;
        return report({error_code::bad_async, run_start_, 0});
      }
      zeros_ = 0;
    }
  }

  // The first non-zero byte in [p, end), or end.
  static constexpr const std::uint8_t* skip_zeros(const std::uint8_t* p,
                                                  const std::uint8_t* end) noexcept {
    while (end - p >= 8 && (p[0] | p[1] | p[2] | p[3] | p[4] | p[5] | p[6] | p[7]) == 0) p += 8;
    while (p != end && *p == 0) ++p;
    return p;
  }

  // Parses one packet whose header is at p. Checked=false promises 32 readable bytes, so the
  // fixed-size reads skip their bounds checks. State is only changed once the packet is whole.
  template <bool Checked>
  TRACECODEC_HOT constexpr parse_result parse(const std::uint8_t* p, const std::uint8_t* end,
                               std::uint64_t offset, packet& out) noexcept {
    const std::uint8_t h = p[0];
    const header_entry& e = table()[h];
    const config& c = cfg();
    out = packet{};
    out.offset = offset;
    out.kind = e.kind;
    out.atoms = e.atoms;
    out.atom_count = e.atom_count;
    out.flags = e.flags;
    out.ignored_bits = e.ignored;

#define TRACECODEC_NEED(n)                                  \
  do {                                                      \
    if constexpr (Checked) {                                \
      if (end - q < static_cast<std::ptrdiff_t>(n)) return need_more(); \
    }                                                       \
  } while (0)

    const std::uint8_t* q = p + 1;
    if (e.complete) {  // the most common packets: atoms, all in the table
      out.size = 1;
      return ok(1);
    }
    switch (e.op) {
      case payload_op::none:
        if (e.kind == packet_kind::context_same)
          out.ctx = st_.ctx;  // resolves to the current context
        else
          header_fields(e, out);
        out.size = 1;
        return ok(1);
      case payload_op::reserved: return bad(error_code::reserved_header);
      case payload_op::unsupported: return bad(error_code::unsupported_packet);

      case payload_op::extension: {
        if (end - q < 1) return need_more();
        const std::uint8_t x = q[0];
        if (x == 0x03) {
          out.kind = packet_kind::discard;
        } else if (x == 0x05) {
          out.kind = packet_kind::overflow;
        } else if (x == 0x00) {
          // A-Sync: zeros up to a 0x80. The run may be longer than any buffer, so a run that
          // reaches the end of the input, or goes on past what a parse result counts, is
          // handed to the byte scanner, whose count cannot wrap.
          const std::uint8_t* z = q;
          const std::uint8_t* const stop =
              end - p > async_parse_limit ? p + async_parse_limit : end;
          while (z != stop && *z == 0) ++z;
          const auto zeros = static_cast<std::uint32_t>(z - p);
          if (z == stop) return {parse_status::async_run, error_code::ok, zeros};
          if (*z != 0x80) return bad(error_code::bad_async);
          out.kind = packet_kind::async;
          if (zeros < 11) {
            if (zero_tail_ + zeros < 11) return bad(error_code::bad_async);
            out.offset = offset - (11 - zeros);  // the shortest A-Sync that fits the run
            out.size = 12;
            return {parse_status::async_overlap, error_code::ok, zeros + 1};
          }
          out.size = zeros + 1;
          return ok(zeros + 1);
        } else {
          return bad(error_code::malformed_payload);
        }
        out.size = 2;
        return ok(2);
      }

      case payload_op::trace_info: {
        TRACECODEC_NEED(1);
        const std::uint8_t plctl = *q++;
        std::uint8_t info = 0;
        std::uint64_t spec = 0, cyct = 0;
        std::uint8_t value_bytes = 0, count_bytes = 0;
        if (plctl & 1u) {
          TRACECODEC_NEED(1);
          info = *q++;
        }
        if (plctl & 4u) {
          const auto s = leb<Checked>(q, end, detail::leb32, spec, value_bytes);
          if (s != detail::read_status::ok) return leb_fail(s);
        }
        if (plctl & 8u) {
          const auto s = leb<Checked>(q, end, detail::leb_cyct, cyct, count_bytes);
          if (s != detail::read_status::ok) return leb_fail(s);
        }
        out.plctl = plctl;
        out.info = info;
        out.count = static_cast<std::uint32_t>(spec);
        out.cycles = static_cast<std::uint32_t>(cyct);
        out.value_bytes = value_bytes;
        out.count_bytes = count_bytes;
        st_.trace_info(info & 1u, static_cast<std::uint32_t>(cyct));
        return finish_packet(out, p, q);
      }

      case payload_op::timestamp: {
        std::uint64_t ts = 0, count = 0;
        std::uint8_t value_bytes = 0, count_bytes = 0;
        const detail::leb_field tsf = detail::leb_ts(c.ts_max_bytes());
        auto s = leb<Checked>(q, end, tsf, ts, value_bytes);
        if (s != detail::read_status::ok) return leb_fail(s);
        if (h & 1u) {
          s = leb<Checked>(q, end, detail::leb_count, count, count_bytes);
          if (s != detail::read_status::ok) return leb_fail(s);
        }
        const std::uint64_t mask = detail::leb_mask(value_bytes);
        st_.timestamp = (st_.timestamp & ~mask) | (ts & mask);
        out.timestamp = st_.timestamp;
        out.cycles = static_cast<std::uint32_t>(count);
        out.value_bytes = value_bytes;
        out.count_bytes = count_bytes;
        return finish_packet(out, p, q);
      }

      case payload_op::cycle_count_f1: {
        std::uint64_t commit = 0, count = 0;
        std::uint8_t value_bytes = 0, count_bytes = 0;
        if (!c.commopt) {
          const auto s = leb<Checked>(q, end, detail::leb32, commit, value_bytes);
          if (s != detail::read_status::ok) return leb_fail(s);
        }
        if (h == 0x0e) {
          const auto s = leb<Checked>(q, end, detail::leb_count, count, count_bytes);
          if (s != detail::read_status::ok) return leb_fail(s);
          out.cycles = static_cast<std::uint32_t>(count) + st_.cc_threshold;
        } else {
          out.flags |= packet_flag::cycles_unknown;
        }
        out.count = static_cast<std::uint32_t>(commit);
        out.value_bytes = value_bytes;
        out.count_bytes = count_bytes;
        return finish_packet(out, p, q);
      }

      case payload_op::cycle_count_f2: {
        TRACECODEC_NEED(1);
        const std::uint8_t b = *q++;
        const unsigned aaaa = b >> 4, bbbb = b & 0xfu;
        if (c.commopt) {
          out.ignored_bits = static_cast<std::uint8_t>(out.ignored_bits | (aaaa ^ 0xfu));
        } else if (h == 0x0c) {
          out.count = aaaa + 1;  // D9.2.16.5, F = 0
        } else {
          const std::int64_t n = static_cast<std::int64_t>(c.maxspec) + aaaa - 15;
          if (n <= 0) return bad(error_code::malformed_payload);  // D5.31: must be > 0
          out.count = static_cast<std::uint32_t>(n);
        }
        out.cycles = st_.cc_threshold + bbbb;
        return finish_packet(out, p, q);
      }

      case payload_op::leb_count: {
        const parse_result r = read_count<Checked>(q, end, out);
        if (r.status != parse_status::ok) return r;
        if (e.kind == packet_kind::cancel_f1 && out.count == 0)
          return bad(error_code::malformed_payload);  // D5.36: CANCEL 0 is reserved
        return finish_packet(out, p, q);
      }

      case payload_op::context: {
        context ctx = st_.ctx;
        const parse_result r = read_context<Checked>(q, end, ctx, out.flags);
        if (r.status != parse_status::ok) return r;
        st_.ctx = ctx;
        out.ctx = ctx;
        return finish_packet(out, p, q);
      }

      case payload_op::addr_exact:
      case payload_op::addr_short:
      case payload_op::addr_32:
      case payload_op::addr_64:
      case payload_op::addr_ctx_32:
      case payload_op::addr_ctx_64:
      case payload_op::q_exact:
      case payload_op::q_short:
      case payload_op::q_32: return address_packet<Checked>(e.op, e.aux, p, q, end, out);

      case payload_op::q_count: {
        const parse_result r = read_count<Checked>(q, end, out);
        return r.status == parse_status::ok ? finish_packet(out, p, q) : r;
      }

      case payload_op::exception: {
        TRACECODEC_NEED(2);
        const std::uint8_t info = q[0];
        // D9.2.13.1: E = payload<6>:payload<0>, TYPE = payload<5:1>. Bit 7 is 0 in every ETE
        // layout; in ETMv4 it says a second byte follows, with TYPE<9:5> in bits [4:0] and
        // the fault-pending bit P in bit 5 (M-profile exception numbers above 31).
        const unsigned ebits = (info & 1u) | ((info >> 5) & 2u);
        if (ebits != 1 && ebits != 2) return bad(error_code::malformed_payload);
        out.exception_elements = static_cast<std::uint8_t>(ebits);
        out.exception_type = static_cast<std::uint16_t>((info >> 1) & 0x1fu);
        ++q;
        if (info & 0x80u) {
          if (!c.etmv4()) return bad(error_code::malformed_payload);
          TRACECODEC_NEED(2);
          const std::uint8_t x = *q++;
          if (x & 0xc0u) return bad(error_code::malformed_payload);  // no third byte
          out.exception_type = static_cast<std::uint16_t>(out.exception_type | ((x & 0x1fu) << 5));
          if (x & 0x20u) out.flags |= packet_flag::fault_pending;
          out.value_bytes = 2;
        }
        const std::uint8_t ah = *q++;
        if (ah == 0x70) {  // unknown address: PE Reset, Transaction Failure (D5.24, D5.25)
          if (c.etmv4()) return bad(error_code::malformed_payload);  // ETMv4: an address follows
          out.kind = out.exception_type == 0x00   ? packet_kind::pe_reset
                     : out.exception_type == 0x18 ? packet_kind::transaction_failure
                                                  : packet_kind::exception_unknown_address;
          st_.history.add(0, isa::is0);  // D9.2.18.5 UnknownAddressHistoryBuffer()
          return finish_packet(out, p, q);
        }
        const packet_kind xk = detail::exception_kinds.kind[ah];
        if (xk == static_cast<packet_kind>(packet_kind_count)) return bad(error_code::malformed_payload);
        const header_entry& ae = table()[ah];
        out.kind = xk;
        return address_packet<Checked>(ae.op, ae.aux, p, q, end, out);
      }

      case payload_op::instrumentation: {
        TRACECODEC_NEED(9);
        out.info = q[0];
        out.address = detail::load_le(q + 1, 8);
        q += 9;
        return finish_packet(out, p, q);
      }
    }
    return bad(error_code::reserved_header);
  }

  // The rest of every packet with an address form (target, exception, source, Q): the address
  // (D9.2.14), the context of the with-context forms (D9.2.14.8), the Q count (D9.2.11.1).
  // Nothing is committed to the state until the whole packet is present.
  template <bool Checked>
  TRACECODEC_HOT TRACECODEC_FLAT constexpr parse_result address_packet(payload_op op, std::uint8_t aux, const std::uint8_t* p,
                                        const std::uint8_t* q, const std::uint8_t* end,
                                        packet& out) noexcept {
    address_entry a{};
    parse_result r = read_address<Checked>(op, aux, q, end, a, out);
    if (r.status != parse_status::ok) return r;
    context ctx = st_.ctx;
    if (op == payload_op::addr_ctx_32 || op == payload_op::addr_ctx_64) {
      r = read_context<Checked>(q, end, ctx, out.flags);
      if (r.status != parse_status::ok) return r;
      out.ctx = ctx;
    }
    if (op == payload_op::q_exact || op == payload_op::q_short || op == payload_op::q_32) {
      r = read_count<Checked>(q, end, out);
      if (r.status != parse_status::ok) return r;
    }
    st_.ctx = ctx;
    st_.history.add(a.address, a.sub_isa);
    out.address = a.address;
    out.sub_isa = a.sub_isa;
    return finish_packet(out, p, q);
  }

  // A 32-bit count field (COMMIT, CANCEL, Q COUNT) into out.count / out.value_bytes.
  template <bool Checked>
  TRACECODEC_HOT TRACECODEC_FLAT static constexpr parse_result read_count(const std::uint8_t*& q, const std::uint8_t* end,
                                           packet& out) noexcept {
    std::uint64_t n = 0;
    std::uint8_t len = 0;
    const auto s = leb<Checked>(q, end, detail::leb32, n, len);
    if (s != detail::read_status::ok) return leb_fail(s);
    out.count = static_cast<std::uint32_t>(n);
    out.value_bytes = len;
    return ok(0);
  }

  // A continuation-coded field: the unchecked path reads it with one load (fields.hpp).
  template <bool Checked>
  TRACECODEC_HOT TRACECODEC_FLAT static constexpr detail::read_status leb(const std::uint8_t*& q, const std::uint8_t* end,
                                                          detail::leb_field f, std::uint64_t& value,
                                                          std::uint8_t& len) noexcept {
    if constexpr (Checked)
      return detail::read_leb(q, end, f, value, len);
    else
      return detail::read_leb_unchecked(q, f, value, len);
  }

  static constexpr parse_result leb_fail(detail::read_status s) noexcept {
    return s == detail::read_status::need_more ? need_more() : bad(error_code::overlong_field);
  }
  static constexpr parse_result finish_packet(packet& out, const std::uint8_t* p,
                                              const std::uint8_t* q) noexcept {
    const auto n = static_cast<std::uint32_t>(q - p);
    out.size = n;
    return ok(n);
  }

  // Reads an address payload of the given op (D9.2.14). Does not touch the history.
  template <bool Checked>
  TRACECODEC_HOT TRACECODEC_FLAT constexpr parse_result read_address(payload_op op, std::uint8_t aux, const std::uint8_t*& q,
                                      const std::uint8_t* end, address_entry& a,
                                      packet& out) const noexcept {
    const address_entry& last = st_.history.entry[0];
    switch (op) {
      case payload_op::addr_exact:
      case payload_op::q_exact:
        a = st_.history.entry[aux];
        out.index = aux;
        return ok(0);
      case payload_op::addr_short:
      case payload_op::q_short: {
        TRACECODEC_NEED(1);
        if (q[0] & 0x80u) TRACECODEC_NEED(2);
        a = short_address(q, static_cast<isa>(aux), last.address, out);
        return ok(0);
      }
      case payload_op::addr_32:
      case payload_op::addr_ctx_32:
      case payload_op::q_32: {
        TRACECODEC_NEED(4);
        const isa s = static_cast<isa>(aux);
        const std::uint64_t v = detail::read_long_address(q, s, false);
        a = {(last.address & ~std::uint64_t{0xffffffffu}) | v, s};  // address<63:32> unchanged
        q += 4;
        return ok(0);
      }
      case payload_op::addr_64:
      case payload_op::addr_ctx_64: {
        TRACECODEC_NEED(8);
        const isa s = static_cast<isa>(aux);
        a = {detail::read_long_address(q, s, true), s};
        q += 8;
        return ok(0);
      }
      default: return bad(error_code::malformed_payload);
    }
  }

  // The fields of a header-only packet other than Context (payload_op::none) that the
  // header's entry gives beyond kind, atoms and flags: the count of a Cancel format 2/3 and
  // the commit of a Cycle Count format 3_0 (0 in other entries), the cycle count of format 3
  // (BB over the threshold, D5.33), the Event number (D5.68). Written whether 0 or not, for the
  // hot loop's packet that is reused.
  TRACECODEC_HOT constexpr void header_fields(const header_entry& e, packet& out) const noexcept {
    const bool f3 = e.kind == packet_kind::cycle_count_f3_0 || e.kind == packet_kind::cycle_count_f3_1;
    out.count = e.count;
    out.cycles = f3 ? st_.cc_threshold + e.aux : 0u;
    out.events = e.kind == packet_kind::event ? e.aux : std::uint8_t{0};
  }

  // Short address payload (D9.2.14.4/5): one or two bytes (as bit 7 of the first says) that
  // replace the low bits of the last address. The caller has checked both bytes are there.
  template <bool Fields = true>
  TRACECODEC_HOT static constexpr address_entry short_address(const std::uint8_t*& q, isa s,
                                                              std::uint64_t last,
                                                              packet& out) noexcept {
    const std::uint8_t b0 = q[0];
    const unsigned bytes = (b0 & 0x80u) ? 2 : 1;
    std::uint64_t v = static_cast<std::uint64_t>(b0 & 0x7fu) << (s == isa::is0 ? 2 : 1);
    if (bytes == 2) v |= static_cast<std::uint64_t>(q[1]) << (s == isa::is0 ? 9 : 8);
    const std::uint64_t mask = detail::short_address_mask(s, bytes);
    if constexpr (Fields) out.addr_bytes = static_cast<std::uint8_t>(bytes);
    q += bytes;
    return {(last & ~mask) | v, s};
  }

  // The hot loop's address forms (no context): the address of header he's payload at q (q
  // advanced past it), its encoding in x's kind, index and addr_bytes. Unchecked: the loop
  // has 32 bytes. The history is the caller's to update. read_address() computes the same;
  // this switch of the context-free forms alone measured faster on the address-heavy
  // corpora (bench/README.md, "Packet decode: the fast paths' own packets").
  // Fields = false: the address alone, x untouched (program flow wants no more).
  template <bool Fields = true>
  TRACECODEC_HOT constexpr address_entry target_address(const header_entry& he, const std::uint8_t*& q,
                                                        packet& x) const noexcept {
    const isa s = static_cast<isa>(he.aux);
    const std::uint64_t last = st_.history.entry[0].address;
    if constexpr (Fields) {
      x.kind = he.kind;
      x.index = 0;
      x.addr_bytes = 0;
    }
    switch (he.op) {
      case payload_op::addr_short:
      case payload_op::q_short: return short_address<Fields>(q, s, last, x);
      case payload_op::addr_exact:
      case payload_op::q_exact:
        if constexpr (Fields) x.index = he.aux;
        return st_.history.entry[he.aux];
      case payload_op::addr_32:
      case payload_op::q_32: {  // address<63:32> unchanged
        const std::uint64_t v = detail::read_long_address(q, s, false);
        q += 4;
        return {(last & ~std::uint64_t{0xffffffffu}) | v, s};
      }
      default: {  // addr_64
        const std::uint64_t v = detail::read_long_address(q, s, true);
        q += 8;
        return {v, s};
      }
    }
  }
  // The hot loop's 32-bit counts (COMMIT, CANCEL, Q COUNT) into x, with header he's fields;
  // false for what the general parser must report (an overlong field, CANCEL 0: D5.36).
  TRACECODEC_HOT static constexpr bool fast_count(const header_entry& he, const std::uint8_t*& q,
                                                  packet& x) noexcept {
    std::uint64_t n = 0;
    std::uint8_t len = 0;
    if (!(q[0] & 0x80u)) {  // one byte: most Commit and Cancel counts
      n = q[0];
      len = 1;
      ++q;
    } else if (detail::read_leb_unchecked(q, detail::leb32, n, len) != detail::read_status::ok) {
      return false;
    }
    if (n == 0 && he.kind == packet_kind::cancel_f1) return false;
    x.kind = he.kind;
    x.atoms = he.atoms;
    x.atom_count = he.atom_count;
    x.flags = he.flags;
    x.count = static_cast<std::uint32_t>(n);
    x.value_bytes = len;
    return true;
  }

  // ContextBytes (D9.2.14.9): EL, NSE (RME), SF, NS, then VMID and CONTEXTID when V and C say.
  template <bool Checked>
  TRACECODEC_FLAT constexpr parse_result read_context(const std::uint8_t*& q, const std::uint8_t* end,
                                      context& ctx, std::uint8_t& flags) const noexcept {
    TRACECODEC_NEED(1);
    const std::uint8_t b = q[0];
    const bool v = (b >> 6) & 1u, cid = (b >> 7) & 1u;
    const unsigned vbytes = cfg().vmidsize / 8u;  // ETE: 4; ETMv4: 1, 2 or 4 (0: no VMID)
    const unsigned n = 1u + (v ? vbytes : 0u) + (cid ? 4u : 0u);
    TRACECODEC_NEED(n);
    if ((v && vbytes == 0) || (cid && cfg().cidsize == 0))
      return bad(error_code::config_mismatch);
    ctx.el = b & 3u;
    ctx.nse = (b >> 3) & 1u;
    ctx.sf = (b >> 4) & 1u;
    ctx.ns = (b >> 5) & 1u;
    const std::uint8_t* r = q + 1;
    if (v) {
      ctx.vmid = static_cast<std::uint32_t>(detail::load_le(r, vbytes));
      r += vbytes;
      flags |= packet_flag::has_vmid;
    }
    if (cid) {
      ctx.context_id = static_cast<std::uint32_t>(detail::load_le(r, 4));
      r += 4;
      flags |= packet_flag::has_context_id;
    }
    q = r;
    return ok(0);
  }
#undef TRACECODEC_NEED

  detail::configured<Config> conf_{};
  stream_state st_{};
  decoder_stats stats_{};
  diagnostic diag_{};
  packet pending_{};
  packet scratch_{};  // decode()'s packet in the compact form
  const std::uint8_t* cur_ = nullptr;
  const std::uint8_t* end_ = nullptr;
  std::uint64_t pos_ = 0;        // stream offset of cur_
  std::uint64_t start_ = 0;      // stream offset of the session's first byte (reset_at())
  std::uint64_t buf_off_ = 0;    // stream offset of buf_[0]
  std::uint64_t run_start_ = 0;  // offset of the current zero run
  std::uint64_t scan_from_ = 0;  // where the current unsynchronized stretch began
  std::uint64_t zeros_ = 0;      // of the zero run being scanned: 64 bits, so it never wraps
  std::uint32_t zero_tail_ = 0;  // see note_tail()
  std::uint8_t buf_[32 + 32]{};
  std::uint8_t buf_len_ = 0;
  bool scanning_ = true;  // starts unsynchronized: skip to the first A-Sync
  bool expect_async_ = false;
  bool synced_once_ = false;
  bool skip_reported_ = false;
  bool has_pending_ = false;
  bool finished_ = false;
  bool config_reported_ = false;
};

}  // namespace tracecodec::ete
