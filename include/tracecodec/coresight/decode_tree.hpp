// SPDX-License-Identifier: Apache-2.0
// A decode tree: the trace of several sources in one CoreSight formatted capture (a trace
// buffer or a TPIU/DSTREAM capture behind a funnel), each source with its own decoder.
//
// The frames are split by trace ID (deformatter.hpp) and each source's bytes go to the
// decoder added for its ID (its TRCTRACEIDR), which keeps its own configuration and state:
// ete::decoder (packets), ete::element_reader (resolved elements) or ete::flow_decoder
// (program flow), for ETE or ETMv4, or any type with the same streaming interface:
//   decode_part(bytes, n, on_item, on_error), decode_end(on_item, on_error), reset().
//
// What comes out is the decoders' own items and diagnostics, tagged with the source:
//   on_item(const item_origin& o, const Item& x)       a packet, element, flow element, ...
//   on_error(const item_origin& o, const Diagnostic& d) the decoder's errors
//   on_frame_error(const coresight::diagnostic& d)     the deformatter's, and unrouted_data
// in each source's stream order, and in capture order between sources except that a
// decoder may hold an item back (a packet cut by a frame, an element awaiting resolution).
// x.offset and d.offset are input offsets: where the item's first byte is in the capture
// (its packet's, for an element), or unknown_offset when that byte is older than the last
// HistoryFrames frames of the source. o.stream_offset is the same byte's place in the
// source's own deformatted stream, counted across sessions.
//
// A barrier (four FSYNCs: trace was lost there) ends every source's session: its decoder
// gets decode_end and reset, so it resynchronizes, as it does at the start. Data of a trace
// ID with no decoder is dropped and reported once per ID (unrouted_data).
//
// Freestanding, no allocation: the caller owns the decoders (statically, on the stack or on
// the heap: a flow decoder is large) and adds each with its trace ID; the tree holds, per
// source, where its recent frames were (HistoryFrames entries of 24 bytes) and its last
// tail_bytes bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "deformatter.hpp"

namespace tracecodec::coresight {

inline constexpr std::uint64_t unknown_offset = ~std::uint64_t{0};

enum class tree_status : std::uint8_t {
  ok = 0,
  invalid_id = 1,    // trace ID 0 (null) or 0x70-0x7F (reserved): no source can have it
  duplicate_id = 2,  // the tree already has a source with that trace ID
  full = 3,          // the tree holds MaxSources sources
};

// Which source an item came from, and where its first byte is in that source's stream.
struct item_origin {
  std::uint8_t id = 0;
  std::uint64_t stream_offset = 0;
};

template <class Decoder, std::size_t MaxSources = 8, std::size_t HistoryFrames = 1024>
class decode_tree {
  static_assert(MaxSources >= 1 && MaxSources <= 111, "at most the 111 usable trace IDs");
  static_assert(HistoryFrames >= 1 && (HistoryFrames & (HistoryFrames - 1)) == 0,
                "HistoryFrames must be a power of two");

 public:
  constexpr explicit decode_tree(frame_format f = frame_format::memory_aligned) noexcept
      : deformatter_(f) {
    for (std::uint8_t& s : slot_) s = no_slot;
  }
  decode_tree(const decode_tree&) = delete;  // the sources' decoders are not copied with it
  decode_tree& operator=(const decode_tree&) = delete;

  // Adds the source with trace ID `id`, decoded by `decoder` (configured for that source),
  // which must outlive the tree's decoding. Sources may be added before decoding starts or
  // between decode_part calls (data of the ID before that was unrouted).
  constexpr tree_status add_source(std::uint8_t id, Decoder& decoder) noexcept {
    if (!valid_trace_id(id) || id >= 128) return tree_status::invalid_id;
    if (slot_[id] != no_slot) return tree_status::duplicate_id;
    if (count_ == MaxSources) return tree_status::full;
    sources_[count_].id = id;
    sources_[count_].decoder = &decoder;
    slot_[id] = static_cast<std::uint8_t>(count_++);
    return tree_status::ok;
  }

  // The decoder of trace ID id, or null.
  constexpr Decoder* decoder_of(std::uint8_t id) noexcept {
    return id < 128 && slot_[id] != no_slot ? sources_[slot_[id]].decoder : nullptr;
  }
  constexpr std::size_t size() const noexcept { return count_; }
  constexpr std::uint8_t id_at(std::size_t i) const noexcept { return sources_[i].id; }

  // Bytes of trace IDs without a source, dropped so far; the trace ID of the latest
  // unrouted_data notice (during its on_frame_error call: the ID it is about).
  std::uint64_t unrouted_bytes() const noexcept { return unrouted_bytes_; }
  std::uint8_t unrouted_id() const noexcept { return unrouted_id_; }
  const deformatter& frames() const noexcept { return deformatter_; }

  // Streaming: the capture in chunks of any size (frames may be split anywhere).
  template <class OnItem, class OnError, class OnFrameError>
  void decode_part(const std::uint8_t* data, std::size_t size, OnItem&& on_item, OnError&& on_error,
                   OnFrameError&& on_frame_error) noexcept {
    sinks<OnItem, OnError, OnFrameError> s{this, on_item, on_error, on_frame_error};
    deformatter_.decode_part(data, size, s, s);
  }
  // The end of the capture: the deformatter reports a cut frame, every decoder ends its session.
  template <class OnItem, class OnError, class OnFrameError>
  void decode_end(OnItem&& on_item, OnError&& on_error, OnFrameError&& on_frame_error) noexcept {
    sinks<OnItem, OnError, OnFrameError> s{this, on_item, on_error, on_frame_error};
    deformatter_.decode_end(s, s);
    end_sessions(s, false);
  }
  template <class OnItem, class OnError, class OnFrameError>
  void decode(const std::uint8_t* data, std::size_t size, OnItem&& on_item, OnError&& on_error,
              OnFrameError&& on_frame_error) noexcept {
    decode_part(data, size, on_item, on_error, on_frame_error);
    decode_end(on_item, on_error, on_frame_error);
  }

  // The input offset of byte `stream_offset` of source id's stream (item_origin's), or
  // unknown_offset when it is older than the last HistoryFrames frames or not yet seen.
  std::uint64_t input_offset(std::uint8_t id, std::uint64_t stream_offset) const noexcept {
    if (id >= 128 || slot_[id] == no_slot) return unknown_offset;
    return sources_[slot_[id]].input_offset(stream_offset);
  }

  // OpenCSD's index of the same byte (its trc_pkt_lister's "Idx:" for a packet that begins
  // there), as OpenCSD 1.8.0's frame deformatter numbers a formatted capture: from the offset
  // of the frame, or of the ID byte, that began the byte's run of its source in its frame,
  // counting the run's data bytes only; a DSTREAM capture numbered without its footers; 0 for
  // the end of a source that had no data. Equal to input_offset on memory-aligned frames
  // without ID bytes. For tools that print OpenCSD-compatible listings.
  std::uint64_t opencsd_index(std::uint8_t id, std::uint64_t stream_offset) const noexcept {
    if (id >= 128 || slot_[id] == no_slot) return unknown_offset;
    return sources_[slot_[id]].opencsd_index(stream_offset,
                                             deformatter_.format() == frame_format::dstream);
  }

  // Copies n bytes of source id's stream from stream_offset into out; during a callback, the
  // bytes of the item being delivered (at most tail_bytes before the data handed to the
  // decoder in the current step, and that data). False when they are no longer held.
  bool stream_bytes(std::uint8_t id, std::uint64_t stream_offset, std::size_t n,
                    std::uint8_t* out) const noexcept {
    if (id >= 128 || slot_[id] == no_slot) return false;
    return sources_[slot_[id]].copy(stream_offset, n, out);
  }
  static constexpr std::size_t tail_bytes = 64;

 private:
  static constexpr std::uint8_t no_slot = 0xff;

  // Where each of a source's recent frames put its bytes: the stream offset of the frame's
  // first byte of this source, the frame's input offset, and which frame bytes were its.
  struct frame_entry {
    std::uint64_t stream_pos;
    std::uint64_t input_at;
    std::uint16_t mask;
    std::uint8_t segment;  // data_batch::first_segment for the batch's first frame, else 0
  };

  struct source {
    std::uint8_t id = 0;
    Decoder* decoder = nullptr;
    std::uint64_t delivered = 0;     // bytes of the stream so far
    std::uint64_t session_base = 0;  // stream offset of the decoder's session start
    std::uint64_t frames = 0;        // frame entries written (history_[frames % H] is next)
    frame_entry history[HistoryFrames] = {};
    // The stream bytes the decoder is working on: the tail before the current data, the data.
    std::uint8_t tail[tail_bytes] = {};
    std::size_t tail_size = 0;
    const std::uint8_t* current = nullptr;
    std::size_t current_size = 0;

    std::uint64_t input_offset(std::uint64_t at) const noexcept { return offset_of(at, false, false); }
    std::uint64_t opencsd_index(std::uint64_t at, bool dstream) const noexcept {
      return offset_of(at, true, dstream);
    }

    // The input offset of stream byte `at` (opencsd: OpenCSD's index of it, see the public
    // opencsd_index; dstream: the capture has DSTREAM footers), or unknown_offset.
    std::uint64_t offset_of(std::uint64_t at, bool opencsd, bool dstream) const noexcept {
      // A source without data: OpenCSD gives its end of trace index 0.
      if (frames == 0) return opencsd && at == 0 ? 0 : unknown_offset;
      // The end of the stream (where an end-of-trace element sits): after its last byte.
      if (at == delivered + current_size && at != 0) {
        const std::uint64_t last = offset_of(at - 1, opencsd, dstream);
        return last == unknown_offset ? last : last + 1;
      }
      if (at > delivered + current_size) return unknown_offset;
      const std::uint64_t held = frames < HistoryFrames ? frames : HistoryFrames;
      // Binary search for the newest entry with stream_pos <= at, among the held ones.
      std::uint64_t lo = frames - held, hi = frames;  // entries [lo, hi)
      if (entry(lo).stream_pos > at) return unknown_offset;
      while (hi - lo > 1) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        if (entry(mid).stream_pos <= at) lo = mid;
        else hi = mid;
      }
      const frame_entry& e = entry(lo);
      unsigned k = static_cast<unsigned>(at - e.stream_pos);  // < bytes in the frame (<= 15)
      if (!opencsd) {
        unsigned m = e.mask;
        for (; k != 0; --k) m &= m - 1;  // drop the k lowest set bits: the byte is the next
        unsigned b = 0;
        while (b < 15 && !((m >> b) & 1u)) ++b;
        return e.input_at + b;
      }
      // OpenCSD numbers a source's bytes in a frame from the frame's offset, or from the ID
      // byte that switched to it (an entry holds one such segment), counting data bytes only;
      // in a DSTREAM capture, without the 8-byte footers.
      const std::uint64_t frame =
          dstream ? e.input_at - (dstream_block - dstream_stream) * (e.input_at / dstream_block) : e.input_at;
      return frame + e.segment + k;
    }
    const frame_entry& entry(std::uint64_t i) const noexcept { return history[i & (HistoryFrames - 1)]; }

    void record(const data_batch& b) noexcept {
      std::uint64_t pos = delivered;
      for (std::size_t j = 0; j < b.frames; ++j) {
        const std::uint16_t m = b.frame_masks[j];
        if (m == 0) continue;
        history[frames++ & (HistoryFrames - 1)] = {pos, b.offset + frame_size * j, m,
                                                   j == 0 ? b.first_segment : std::uint8_t{0}};
        for (unsigned v = m; v != 0; v &= v - 1) ++pos;  // its bytes
      }
      current = b.bytes;
      current_size = b.size;
    }
    // After the decoder took the current data: its last bytes join the tail.
    void retire() noexcept {
      const std::size_t n = current_size;
      if (n >= tail_bytes) {
        for (std::size_t i = 0; i < tail_bytes; ++i) tail[i] = current[n - tail_bytes + i];
        tail_size = tail_bytes;
      } else {
        const std::size_t keep = tail_size + n > tail_bytes ? tail_bytes - n : tail_size;
        for (std::size_t i = 0; i < keep; ++i) tail[i] = tail[tail_size - keep + i];
        for (std::size_t i = 0; i < n; ++i) tail[keep + i] = current[i];
        tail_size = keep + n;
      }
      delivered += n;
      current = nullptr;
      current_size = 0;
    }
    bool copy(std::uint64_t at, std::size_t n, std::uint8_t* out) const noexcept {
      const std::uint64_t first = delivered - tail_size;  // stream offset of tail[0]
      if (at < first || n > delivered + current_size - at) return false;
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t p = at + i;
        out[i] = p < delivered ? tail[p - first] : current[p - delivered];
      }
      return true;
    }
  };

  // The deformatter's callbacks: batches go to their source's decoder, whose items come back
  // through item_sink/error_sink with input offsets.
  template <class OnItem, class OnError, class OnFrameError>
  struct sinks {
    decode_tree* tree;
    OnItem& on_item;
    OnError& on_error;
    OnFrameError& on_frame_error;

    void operator()(const data_batch& b) noexcept { tree->route(b, *this); }
    void operator()(const diagnostic& d) noexcept {
      on_frame_error(d);
      if (d.code == error_code::barrier) tree->end_sessions(*this, true);  // new sessions after it
    }
  };

  // A decoder's callback for one source: each item (or, for Errors, diagnostic), its offset
  // made an input offset, goes to the user's on_item (on_error) with its origin.
  template <class Sinks, bool Errors>
  struct source_sink {
    const decode_tree* tree;
    const source* src;
    Sinks* s;
    template <class T>
    void operator()(const T& x) const noexcept {
      T y = x;
      const item_origin o = tree->origin(*src, y);
      if constexpr (Errors) s->on_error(o, static_cast<const T&>(y));
      else s->on_item(o, static_cast<const T&>(y));
    }
  };
  template <class Sinks>
  using item_sink = source_sink<Sinks, false>;
  template <class Sinks>
  using error_sink = source_sink<Sinks, true>;

  // Rewrites x.offset (its decoder's session offset) to the input offset; returns the origin.
  template <class T>
  item_origin origin(const source& src, T& x) const noexcept {
    item_origin o{src.id, src.session_base};
    if constexpr (requires { x.offset; }) {
      o.stream_offset = src.session_base + x.offset;
      x.offset = src.input_offset(o.stream_offset);
    }
    return o;
  }

  template <class Sinks>
  void route(const data_batch& b, Sinks& s) noexcept {
    const std::uint8_t slot = slot_[b.id & 0x7f];
    if (slot == no_slot) {
      unrouted_bytes_ += b.size;
      const std::uint64_t bit = std::uint64_t{1} << (b.id & 63);
      std::uint64_t& seen = unrouted_seen_[(b.id >> 6) & 1];
      if (!(seen & bit)) {
        seen |= bit;
        unrouted_id_ = b.id;
        s.on_frame_error(diagnostic{error_code::unrouted_data, b.offset_of(0), b.size});
      }
      return;
    }
    source& src = sources_[slot];
    src.record(b);
    src.decoder->decode_part(b.bytes, b.size, item_sink<Sinks>{this, &src, &s},
                            error_sink<Sinks>{this, &src, &s});
    src.retire();
  }

  // Ends every source's decoder session (at a barrier, when `restart`, also resets them for
  // the data that follows).
  template <class Sinks>
  void end_sessions(Sinks& s, bool restart) noexcept {
    for (std::size_t i = 0; i < count_; ++i) {
      source& src = sources_[i];
      if (restart && src.delivered == src.session_base) continue;  // nothing since its start
      src.decoder->decode_end(item_sink<Sinks>{this, &src, &s}, error_sink<Sinks>{this, &src, &s});
      if (restart) {
        src.decoder->reset();
        src.session_base = src.delivered;
      }
    }
  }

  deformatter deformatter_;
  std::uint8_t slot_[128];
  std::size_t count_ = 0;
  std::uint64_t unrouted_bytes_ = 0;
  std::uint64_t unrouted_seen_[2] = {0, 0};
  std::uint8_t unrouted_id_ = 0;
  source sources_[MaxSources];
};

}  // namespace tracecodec::coresight
