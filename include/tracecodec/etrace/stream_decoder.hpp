// SPDX-License-Identifier: Apache-2.0
// Streaming decoder of encapsulated te_inst packets: bytes in any chunking -> packets. One byte
// at a time through a small state machine, so a chunk may end anywhere and the result is the
// same; it never reads outside the chunk it was given and consumes at least one byte per step.
// After an error it finds packet boundaries again with the configured recovery scheme:
// zero_run: the first non-zero byte after >= 2^N zero bytes is a header (a packet body is
// shorter than 2^N, so the run is never inside one); blocks: every M-byte boundary is a
// packet boundary (no packet crosses one). Either way, whatever bytes came before, every
// packet after such a boundary decodes exactly as in a clean stream.
// Zero allocation, no exceptions; errors are values with the offset of the offending packet.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "config.hpp"
#include "encapsulation.hpp"
#include "error.hpp"
#include "payload.hpp"
#include "te_inst.hpp"

namespace tracecodec::etrace {

enum class decode_status : std::uint8_t {
  packet,      // `out` holds the next packet
  error,       // last_diagnostic() says what and where
  need_input,  // feed() the next chunk (or finish())
  end,         // finish() was called and everything is reported
};

struct decoder_stats {
  std::uint64_t packets = 0;
  std::uint64_t errors = 0;
  std::uint64_t idle_bytes = 0;     // zero bytes between packets (idle, padding, sync runs)
  std::uint64_t bytes_skipped = 0;  // bytes of failed packets and bytes skipped while resyncing
};

// One decoded packet: where it was, its bytes, its encapsulation fields and its payload.
struct packet {
  std::uint64_t offset = 0;  // byte offset of the header byte in the stream
  std::uint8_t size = 0;     // bytes, header included
  std::uint8_t bytes[max_packet_size]{};
  etrace::header header{};
  te_inst inst{};
  te_inst_kind kind = te_inst_kind::sync_start;
  trace_mode mode{};         // the mode it was decoded with (implicit exception)
  constexpr bool operator==(const packet&) const = default;
};

struct decoder_options {
  trace_mode mode{};                // initial mode (support packets update it)
  bool synchronized_at_start = true;  // the stream begins at a packet boundary
};

template <class Config = runtime_config>
class stream_decoder {
 public:
  template <class C = Config, std::enable_if_t<C::is_fixed, int> = 0>
  constexpr explicit stream_decoder(const encapsulation& e = {}, const decoder_options& o = {}) noexcept
      : enc_(e), opt_(o) {
    init();
  }
  template <class C = Config, std::enable_if_t<!C::is_fixed, int> = 0>
  constexpr explicit stream_decoder(const runtime_config& c, const encapsulation& e = {},
                                    const decoder_options& o = {}) noexcept
      : codec_(c), enc_(e), opt_(o) {
    init();
  }

  constexpr error_code status() const noexcept { return status_; }
  constexpr const decoder_stats& stats() const noexcept { return stats_; }
  constexpr const diagnostic& last_diagnostic() const noexcept { return diag_; }
  constexpr trace_mode mode() const noexcept { return mode_; }
  // Sets the mode for the packets that follow (when it is known from elsewhere).
  constexpr void set_mode(trace_mode m) noexcept { mode_ = m; }
  constexpr const payload_codec<Config>& codec() const noexcept { return codec_; }
  constexpr const encapsulation& encapsulation_settings() const noexcept { return enc_; }

  // Hands the decoder the next chunk; the previous one must be consumed (need_input). The
  // bytes must stay valid until then.
  constexpr void feed(const std::uint8_t* data, std::size_t size) noexcept {
    cur_ = data;
    end_ = data + size;
  }
  // No more input follows: a partial packet left over is reported as truncated.
  constexpr void finish() noexcept { finished_ = true; }

  constexpr decode_status next(packet& out) noexcept {
    if (status_ != error_code::ok) {
      if (!status_reported_) {
        status_reported_ = true;
        return report({status_, 0, 0});
      }
      cur_ = end_;
      return finished_ ? decode_status::end : decode_status::need_input;
    }
    while (cur_ != end_) {
      const std::uint8_t b = *cur_++;
      const std::uint64_t at = pos_++;
      const std::uint32_t run_before = zeros_;
      zeros_ = b != 0 ? 0 : (zeros_ < 0xffffu ? zeros_ + 1 : zeros_);

      if (!synced_) {
        if (!resynchronizes(b, at, run_before)) {
          ++stats_.bytes_skipped;
          continue;
        }
        synced_ = true;
      }
      if (have_ == 0) {  // a header is expected here
        if (b == 0) {
          ++stats_.idle_bytes;
          continue;
        }
        const header_byte_result h = decode_header_byte(enc_, b);
        if (h.error != error_code::ok) return fail(h.error, at, 1);
        if (h.fields.length > codec_.max_payload()) return fail(error_code::payload_too_long, at, 1);
        need_ = static_cast<std::uint8_t>(enc_.header_size(h.fields.has_timestamp) + h.fields.length);
        if (enc_.recovery == boundary_recovery::blocks && at % enc_.block_size + need_ > enc_.block_size)
          return fail(error_code::block_overrun, at, 1);
        hdr_ = h.fields;
        buf_[0] = b;
        have_ = 1;
        pkt_off_ = at;
        continue;
      }
      buf_[have_++] = b;
      if (have_ == need_) {
        have_ = 0;
        return complete(out);
      }
    }
    if (!finished_) return decode_status::need_input;
    if (have_ != 0) {
      const unsigned lost = have_;
      have_ = 0;
      return fail(error_code::truncated_packet, pkt_off_, lost);
    }
    return decode_status::end;
  }

  // Convenience: decodes a whole buffer, calling on_packet(const packet&) and
  // on_error(const diagnostic&).
  template <class OnPacket, class OnError>
  constexpr void decode(const std::uint8_t* data, std::size_t size, OnPacket&& on_packet,
                        OnError&& on_error) noexcept {
    feed(data, size);
    finish();
    packet p{};
    for (;;) {
      const decode_status s = next(p);
      if (s == decode_status::packet) on_packet(static_cast<const packet&>(p));
      else if (s == decode_status::error) on_error(static_cast<const diagnostic&>(diag_));
      else return;
    }
  }

 private:
  constexpr void init() noexcept {
    status_ = codec_.status();
    if (status_ == error_code::ok) status_ = validate(enc_, codec_.max_payload());
    mode_ = opt_.mode;
    synced_ = opt_.synchronized_at_start;
  }

  // While unsynchronized: does byte `b` at `at` start a packet region again?
  constexpr bool resynchronizes(std::uint8_t b, std::uint64_t at, std::uint32_t run_before) const noexcept {
    switch (enc_.recovery) {
      case boundary_recovery::zero_run: return b != 0 && run_before >= enc_.zero_run_length();
      case boundary_recovery::blocks: return at % enc_.block_size == 0;
      case boundary_recovery::none: return true;
    }
    return true;
  }

  constexpr decode_status complete(packet& out) noexcept {
    header h = hdr_;
    const error_code tail = decode_header_tail(enc_, buf_ + 1, h);
    if (tail != error_code::ok) return fail(tail, pkt_off_, need_);
    const unsigned hsize = enc_.header_size(h.has_timestamp);
    const decode_result r = codec_.decode(buf_ + hsize, h.length, mode_);
    if (r.error != error_code::ok) return fail(r.error, pkt_off_, need_);
    out.offset = pkt_off_;
    out.size = need_;
    for (unsigned i = 0; i < max_packet_size; ++i) out.bytes[i] = i < need_ ? buf_[i] : 0;
    out.header = h;
    out.inst = r.inst;
    out.kind = r.kind;
    out.mode = mode_;
    mode_ = detail::mode_after(r.inst, codec_.widths(), mode_);
    ++stats_.packets;
    return decode_status::packet;
  }

  // Reports an error; with a recovery scheme the decoder then waits for the next boundary.
  constexpr decode_status fail(error_code e, std::uint64_t offset, std::uint64_t length) noexcept {
    stats_.bytes_skipped += length;
    if (enc_.recovery != boundary_recovery::none) synced_ = false;
    return report({e, offset, length});
  }
  constexpr decode_status report(const diagnostic& d) noexcept {
    diag_ = d;
    ++stats_.errors;
    return decode_status::error;
  }

  payload_codec<Config> codec_{};
  encapsulation enc_{};
  decoder_options opt_{};
  error_code status_ = error_code::ok;
  bool status_reported_ = false;
  trace_mode mode_{};
  const std::uint8_t* cur_ = nullptr;
  const std::uint8_t* end_ = nullptr;
  bool finished_ = false;
  bool synced_ = true;
  std::uint64_t pos_ = 0;      // stream offset of the next byte
  std::uint32_t zeros_ = 0;    // zero bytes ending at pos_ - 1 (saturating)
  std::uint8_t have_ = 0;      // bytes of the current packet collected
  std::uint8_t need_ = 0;      // its total size
  std::uint64_t pkt_off_ = 0;  // its offset
  header hdr_{};
  std::uint8_t buf_[max_packet_size]{};
  decoder_stats stats_{};
  diagnostic diag_{};
};

}  // namespace tracecodec::etrace
