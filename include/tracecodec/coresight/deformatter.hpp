// SPDX-License-Identifier: Apache-2.0
// CoreSight trace formatter, decoding side: the byte streams of several trace sources that a
// formatter (ETB, ETF, ETR, TPIU) interleaved in 16-byte frames, split back by trace ID.
//
// A frame (CoreSight Architecture Specification, "Trace Formatter"): bytes 0, 2, ..., 14 are
// each an ID byte (bit 0 = 1: bits 7:1 are the new trace ID) or a data byte whose bit 0 is
// kept in the auxiliary byte 15 (bit k for byte 2k); bytes 1, 3, ..., 13 are always data. On
// an ID byte, aux bit k says when the change takes effect: 0 = at once (byte 2k + 1 is the new
// source's), 1 = after byte 2k + 1 (it is still the previous source's).
//
// Streams: memory-aligned frames (trace buffers: frames back to back from the first byte); a
// TPIU port stream (full-frame syncs FSYNC = FF FF FF 7F between frames, half-word syncs
// HSYNC = FF 7F in place of a data half-word; frame alignment is found at an FSYNC); a DSTREAM
// capture (the TPIU stream in 512-byte blocks: 504 bytes of stream, then an 8-byte footer).
//
// Freestanding, no allocation, streaming: chunks may split frames anywhere. The data of each
// source comes out in order, a run of one source's bytes at a time:
//   on_data(std::uint8_t id, const std::uint8_t* bytes, std::size_t n, std::uint64_t offset)
// with the input offset of the run's first byte (runs are at most 15 bytes: a frame's data
// bytes are not contiguous in the input, and bit 0 of every other byte comes from the
// auxiliary byte, so they are copied once). Errors and notices: on_error(const diagnostic&).
#pragma once

#include <cstddef>
#include <cstdint>

#include "../detail/error_text.hpp"
#include "../detail/hot.hpp"

namespace tracecodec::coresight {

// Stable codes: the numbers are part of the API and never change meaning.
enum class error_code : std::uint8_t {
  ok = 0,
  null_id_data = 1,     // notice: data under trace ID 0 (the null source, padding): dropped;
                        // offset = its ID byte, length = bytes dropped
  reserved_id = 2,      // an ID byte names a reserved trace ID (0x70-0x7F): the data under it
                        // is dropped until the next ID byte; offset = the ID byte
  no_id_data = 3,       // notice: data before the first ID byte of the stream (its source is
                        // not known): dropped; length = bytes dropped
  truncated_frame = 4,  // the input ended inside a frame: its bytes are dropped
  unsynchronized = 5,   // TPIU/DSTREAM: stream bytes skipped before frame alignment (an FSYNC)
                        // was found; length = bytes skipped
  bad_sync = 6,         // TPIU/DSTREAM: FF at an even byte of a frame that is not an HSYNC (an
                        // FSYNC inside a frame, or an ID byte for 0x7F): alignment is lost; the
                        // frame's bytes are dropped and the next FSYNC is searched for
  barrier = 7,          // notice: a memory-aligned frame of four FSYNCs, the barrier Linux writes
                        // where trace was lost: the current trace ID is forgotten; each source's
                        // decoder should resynchronize (its stream has a gap here)
};

inline constexpr ::tracecodec::detail::error_text error_texts[] = {
    {"ok", "no error"},
    {"null_id_data", "data under trace ID 0 (null source) dropped"},
    {"reserved_id", "reserved trace ID: its data dropped"},
    {"no_id_data", "data before the first trace ID byte dropped"},
    {"truncated_frame", "trace ended inside a formatter frame"},
    {"unsynchronized", "bytes skipped before frame alignment (FSYNC) was found"},
    {"bad_sync", "FF at an even frame byte that is not an HSYNC: frame alignment lost"},
    {"barrier", "a frame of four FSYNCs (trace lost before it): trace ID forgotten"},
};
static_assert(::tracecodec::detail::dense_error_table(error_texts, error_code::barrier));

constexpr const char* error_name(error_code e) noexcept {
  return ::tracecodec::detail::error_text_of(error_texts, e).name;
}
constexpr const char* error_message(error_code e) noexcept {
  return ::tracecodec::detail::error_text_of(error_texts, e).message;
}

using diagnostic = ::tracecodec::detail::diagnostic<error_code>;

inline constexpr std::uint8_t null_trace_id = 0x00;
// 0x70-0x7F are reserved (0x7D: trigger, 0x7F never used: an ID byte 0xFF would be a sync).
constexpr bool reserved_trace_id(std::uint8_t id) noexcept { return id >= 0x70; }
constexpr bool valid_trace_id(std::uint8_t id) noexcept {
  return id != null_trace_id && !reserved_trace_id(id);
}

enum class frame_format : std::uint8_t {
  memory_aligned,  // frames back to back from the first byte (ETB/ETF/ETR buffers)
  tpiu,            // a TPIU port stream: FSYNCs between frames, HSYNCs inside them
  dstream,         // a DSTREAM capture: 512-byte blocks of 504 TPIU stream bytes + 8 footer
};

inline constexpr std::size_t frame_size = 16;
inline constexpr std::size_t dstream_block = 512, dstream_stream = 504;

class deformatter {
 public:
  constexpr explicit deformatter(frame_format f = frame_format::memory_aligned) noexcept
      : format_(f), synced_(f == frame_format::memory_aligned) {}

  constexpr frame_format format() const noexcept { return format_; }

  // A new stream: no frame alignment (TPIU), no current trace ID, offsets from 0.
  constexpr void reset() noexcept { *this = deformatter(format_); }

  template <class OnData, class OnError>
  constexpr void decode(const std::uint8_t* data, std::size_t size, OnData&& on_data,
                        OnError&& on_error) noexcept {
    decode_part(data, size, on_data, on_error);
    decode_end(on_data, on_error);
  }

  template <class OnData, class OnError>
  constexpr void decode_part(const std::uint8_t* data, std::size_t size, OnData&& on_data,
                             OnError&& on_error) noexcept {
    if (format_ == frame_format::memory_aligned) {
      aligned(data, size, on_data, on_error);
      return;
    }
    for (std::size_t i = 0; i < size;) {
      if (format_ == frame_format::dstream) {
        const std::size_t in_block = static_cast<std::size_t>(offset_ % dstream_block);
        if (in_block >= dstream_stream) {  // the footer: not stream bytes
          const std::size_t skip = dstream_block - in_block;
          const std::size_t n = size - i < skip ? size - i : skip;
          offset_ += n;
          i += n;
          continue;
        }
        const std::size_t room = dstream_stream - in_block;
        const std::size_t n = size - i < room ? size - i : room;
        port(data + i, n, on_data, on_error);
        i += n;
        continue;
      }
      port(data + i, size - i, on_data, on_error);
      break;
    }
  }

  template <class OnData, class OnError>
  constexpr void decode_end(OnData&& on_data, OnError&& on_error) noexcept {
    (void)on_data;
    if (!synced_ && skipped_ != 0) on_error(diagnostic{error_code::unsynchronized, skip_at_, skipped_});
    skipped_ = 0;
    end_episode(on_error);  // in stream order: the dropped data came before the cut frame
    // TPIU: a half-word begun, or FF FF held as the first half of a possible FSYNC, count too.
    const std::uint64_t cut = have_ + pending_ + (half_ff_ff_ ? 2u : 0u);
    if (cut != 0) {
      const std::uint64_t at = half_ff_ff_ ? held_at_ : have_ ? frame_at_ : pending_at_[0];
      on_error(diagnostic{error_code::truncated_frame, at, cut});
    }
    have_ = pending_ = 0;
    half_ff_ff_ = false;
  }

 private:
  // Memory-aligned frames: whole frames straight from the input, a split one through frame_.
  template <class OnData, class OnError>
  TRACECODEC_HOT constexpr void aligned(const std::uint8_t* data, std::size_t size, OnData& on_data,
                                        OnError& on_error) noexcept {
    std::size_t i = 0;
    if (have_ != 0) {
      while (have_ < frame_size && i < size) frame_[have_++] = data[i++];
      offset_ += i;
      if (have_ < frame_size) return;
      have_ = 0;
      aligned_frame(frame_, frame_at_, on_data, on_error);
    }
    for (; size - i >= frame_size; i += frame_size, offset_ += frame_size)
      aligned_frame(data + i, offset_, on_data, on_error);
    if (i < size) {
      frame_at_ = offset_;
      while (i < size) frame_[have_++] = data[i++];
      offset_ += have_;
    }
  }

  template <class OnData, class OnError>
  TRACECODEC_HOT constexpr void aligned_frame(const std::uint8_t* f, std::uint64_t at,
                                              OnData& on_data, OnError& on_error) noexcept {
    if (f[0] == 0xFF && barrier_frame(f)) {
      end_episode(on_error);
      on_error(diagnostic{error_code::barrier, at, frame_size});
      known_ = false;  // data before the next ID byte has no known source
      episode_ = true;
      episode_code_ = error_code::no_id_data;
      episode_at_ = at + frame_size;
      dropped_ = 0;
      return;
    }
    frame(f, at, on_data, on_error);
  }
  static constexpr bool barrier_frame(const std::uint8_t* f) noexcept {
    for (unsigned k = 0; k < frame_size; k += 4)
      if (f[k] != 0xFF || f[k + 1] != 0xFF || f[k + 2] != 0xFF || f[k + 3] != 0x7F) return false;
    return true;
  }

  // TPIU stream bytes (offsets count every input byte, DSTREAM footers included).
  template <class OnData, class OnError>
  constexpr void port(const std::uint8_t* data, std::size_t size, OnData& on_data,
                      OnError& on_error) noexcept {
    for (std::size_t i = 0; i < size; ++i, ++offset_) port_byte(data[i], on_data, on_error);
  }

  template <class OnData, class OnError>
  constexpr void port_byte(std::uint8_t b, OnData& on_data, OnError& on_error) noexcept {
    // The last four stream bytes, for FSYNC (FF FF FF 7F); a sync's bytes are not frame bytes.
    sync_window_ = (sync_window_ << 8) | b;
    ++window_fill_;
    if (!synced_) {
      if (window_fill_ >= 4 && sync_window_ == fsync_bytes) {
        const std::uint64_t fsync_at = offset_ - 3;  // skipped: what came before the FSYNC
        if (skipped_ != 0 && fsync_at > skip_at_)
          on_error(diagnostic{error_code::unsynchronized, skip_at_, fsync_at - skip_at_});
        skipped_ = 0;
        synced_ = true;
        pending_ = 0;
        have_ = 0;
        return;
      }
      if (skipped_++ == 0) skip_at_ = offset_;
      return;
    }
    // Synchronized: bytes go to the frame in half-words; FF FF FF 7F between frames (at a
    // frame boundary) is an FSYNC, FF 7F in a half-word is an HSYNC; both are dropped.
    pending_bytes_[pending_++] = b;
    pending_at_[pending_ - 1] = offset_;
    if (pending_ < 2) return;
    pending_ = 0;
    const std::uint8_t lo = pending_bytes_[0], hi = pending_bytes_[1];
    if (have_ == 0 && half_ff_ff_) {  // the first half of a candidate FSYNC was FF FF
      half_ff_ff_ = false;
      if (lo == 0xFF && hi == 0x7F) return;  // FSYNC
      lose_alignment(held_at_, 4, on_error);
      return;
    }
    if (have_ == 0 && lo == 0xFF && hi == 0xFF) {
      half_ff_ff_ = true;
      held_at_ = pending_at_[0];
      return;
    }
    if (lo == 0xFF && hi == 0x7F) return;  // HSYNC
    if (lo == 0xFF) {  // no frame has FF at an even byte (ID 0x7F is never used)
      lose_alignment(have_ ? frame_at_ : pending_at_[0], have_ + 2, on_error);
      return;
    }
    if (have_ == 0) frame_at_ = pending_at_[0];
    frame_[have_++] = lo;
    frame_[have_++] = hi;
    if (have_ == frame_size) {
      have_ = 0;
      frame(frame_, frame_at_, on_data, on_error);
    }
  }

  // TPIU: the frame begun so far is dropped and the next FSYNC searched for (the last stream
  // bytes, in sync_window_, may already be the start of it).
  template <class OnError>
  TRACECODEC_OUT_OF_LINE constexpr void lose_alignment(std::uint64_t at, std::uint64_t length,
                                                      OnError& on_error) noexcept {
    on_error(diagnostic{error_code::bad_sync, at, length});
    have_ = 0;
    synced_ = false;
    skipped_ = 0;
  }

  template <class OnError>
  constexpr void end_episode(OnError& on_error) noexcept {
    if (!episode_) return;
    episode_ = false;
    if (episode_code_ == error_code::reserved_id || dropped_ != 0)
      on_error(diagnostic{episode_code_, episode_at_, dropped_});
  }

  static constexpr std::uint64_t load64(const std::uint8_t* p) noexcept {
    std::uint64_t v = 0;
    for (unsigned i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
    return v;
  }
  static constexpr void store64(std::uint8_t* p, std::uint64_t v) noexcept {
    for (unsigned i = 0; i < 8; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
  }
  // Auxiliary bits k = 0..3 to bit 16k (bit 0 of bytes 0, 2, 4, 6 of a little-endian word):
  // the four partial products of the multiply do not overlap, so nothing carries.
  static constexpr std::uint64_t spread(unsigned four_bits) noexcept {
    return (four_bits * 0x0000200040008001ull) & even_lsbs;
  }
  static constexpr std::uint64_t even_lsbs = 0x0001000100010001ull;  // bytes 0, 2, 4, 6

  // One 16-byte frame at input offset `at`. Most frames hold no ID byte: their 15 data bytes
  // are one run, unpacked a word at a time.
  template <class OnData, class OnError>
  TRACECODEC_HOT constexpr void frame(const std::uint8_t* f, std::uint64_t at, OnData& on_data,
                                      OnError& on_error) noexcept {
    const std::uint64_t w0 = load64(f), w1 = load64(f + 8);
    if (((w0 | w1) & even_lsbs) == 0 && known_) {
      if (!valid_trace_id(id_)) {
        dropped_ += 15;
        return;
      }
      const unsigned aux = f[15];
      std::uint8_t data[16]{};
      store64(data, w0 | spread(aux & 0xFu));
      store64(data + 8, w1 | spread(aux >> 4));  // byte 15 (the auxiliary byte) not passed on
      on_data(id_, static_cast<const std::uint8_t*>(data), std::size_t{15}, at);
      return;
    }
    frame_with_ids(f, at, on_data, on_error);
  }

  template <class OnData, class OnError>
  constexpr void frame_with_ids(const std::uint8_t* f, std::uint64_t at, OnData& on_data,
                                OnError& on_error) noexcept {
    std::uint8_t out[15]{};
    std::size_t n = 0;
    std::uint64_t run_at = 0;
    const unsigned aux = f[15];
    auto put = [&](std::uint8_t v, std::uint64_t o) {
      if (n == 0) run_at = o;
      out[n++] = v;
    };
    auto flush = [&] {
      if (n == 0) return;
      if (valid_trace_id(id_) && known_) on_data(id_, static_cast<const std::uint8_t*>(out), n, run_at);
      else dropped_ += n;
      n = 0;
    };
    for (unsigned k = 0; k < 8; ++k) {
      const std::uint8_t b = f[2 * k];
      const std::uint64_t o = at + 2 * k;
      if (b & 1u) {
        const bool delayed = ((aux >> k) & 1u) != 0 && k < 7;
        if (delayed) put(f[2 * k + 1], o + 1);  // still the previous source's byte
        const std::uint8_t id = static_cast<std::uint8_t>(b >> 1);
        if (id != id_ || !known_) {
          flush();
          switch_to(id, o, on_error);
        }
        if (k < 7 && !delayed) put(f[2 * k + 1], o + 1);
      } else {
        put(static_cast<std::uint8_t>(b | ((aux >> k) & 1u)), o);
        if (k < 7) put(f[2 * k + 1], o + 1);
      }
    }
    flush();
  }

  template <class OnError>
  constexpr void switch_to(std::uint8_t id, std::uint64_t at, OnError& on_error) noexcept {
    end_episode(on_error);
    known_ = true;
    id_ = id;
    if (valid_trace_id(id)) return;
    episode_ = true;
    episode_code_ = id == null_trace_id ? error_code::null_id_data : error_code::reserved_id;
    episode_at_ = at;
    dropped_ = 0;
  }

  static constexpr std::uint32_t fsync_bytes = 0xFFFFFF7Fu;  // FF FF FF 7F in stream order

  frame_format format_;
  bool synced_;            // frame alignment known (always for memory-aligned frames)
  bool known_ = false;     // an ID byte has been seen
  std::uint8_t id_ = 0;    // the current trace ID
  std::uint8_t frame_[frame_size]{};
  std::size_t have_ = 0;   // bytes of frame_ filled
  std::uint64_t frame_at_ = 0;
  std::uint64_t offset_ = 0;  // input offset of the next byte
  // Dropped data: before the first ID byte, under ID 0, or under a reserved ID.
  bool episode_ = true;
  error_code episode_code_ = error_code::no_id_data;
  std::uint64_t episode_at_ = 0, dropped_ = 0;
  // TPIU: FSYNC search and half-word assembly.
  std::uint32_t sync_window_ = 0;
  std::uint64_t window_fill_ = 0;
  std::uint64_t skipped_ = 0, skip_at_ = 0;
  std::uint8_t pending_bytes_[2]{};
  std::uint64_t pending_at_[2]{};
  unsigned pending_ = 0;
  bool half_ff_ff_ = false;
  std::uint64_t held_at_ = 0;
};

}  // namespace tracecodec::coresight
