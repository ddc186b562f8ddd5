// SPDX-License-Identifier: Apache-2.0
// Encoder of encapsulated te_inst packets: payload (shortest, sign-compressed) behind its
// header, with the configured packet-boundary recovery scheme applied to the output:
// zero_run writes 2^N zero bytes before every format 3 subformat 0 (start) packet and on
// request; blocks pads with zeros to the next M-byte boundary when a packet would cross it.
// Zero allocation, no exceptions; nothing is written on error.
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

template <class Config = runtime_config>
class encoder {
 public:
  template <class C = Config, std::enable_if_t<C::is_fixed, int> = 0>
  constexpr explicit encoder(const encapsulation& e = {}, trace_mode m = {}) noexcept
      : enc_(e), mode_(m) {
    init();
  }
  template <class C = Config, std::enable_if_t<!C::is_fixed, int> = 0>
  constexpr explicit encoder(const runtime_config& c, const encapsulation& e = {},
                             trace_mode m = {}) noexcept
      : codec_(c), enc_(e), mode_(m) {
    init();
  }

  constexpr error_code status() const noexcept { return status_; }
  constexpr std::uint64_t position() const noexcept { return pos_; }
  constexpr trace_mode mode() const noexcept { return mode_; }
  constexpr void set_mode(trace_mode m) noexcept { mode_ = m; }
  constexpr const payload_codec<Config>& codec() const noexcept { return codec_; }

  // Encodes one packet. `h` gives flow, index and the optional timestamp (its length is
  // ignored); `min_payload` asks for at least that many payload bytes (see payload_codec).
  constexpr encode_result encode(const te_inst& p, const header& h, std::uint8_t* out,
                                 std::size_t capacity, std::size_t min_payload = 0) noexcept {
    if (status_ != error_code::ok) return {0, status_};
    std::uint8_t payload[max_payload_bytes]{};
    const encode_result pr = codec_.encode(p, payload, sizeof payload, mode_, min_payload);
    if (pr.error != error_code::ok) return pr;
    header hh = h;
    hh.length = static_cast<std::uint8_t>(pr.size);
    std::uint8_t head[max_packet_size - max_payload_bytes]{};
    const error_code he = encode_header(enc_, hh, head);
    if (he != error_code::ok) return {0, he};
    const std::size_t hsize = enc_.header_size(hh.has_timestamp);
    const std::size_t body = hsize + pr.size;
    std::size_t lead = 0;  // zero bytes before the header
    if (enc_.recovery == boundary_recovery::zero_run && p.format == format::sync && p.subformat == 0)
      lead = enc_.zero_run_length();
    if (enc_.recovery == boundary_recovery::blocks) {
      const std::size_t used = static_cast<std::size_t>(pos_ % enc_.block_size);
      if (used != 0 && used + body > enc_.block_size) lead = enc_.block_size - used;
    }
    if (lead + body > capacity) return {0, error_code::buffer_too_small};
    std::size_t n = 0;
    for (; n < lead; ++n) out[n] = 0;
    for (std::size_t i = 0; i < hsize; ++i) out[n++] = head[i];
    for (std::size_t i = 0; i < pr.size; ++i) out[n++] = payload[i];
    pos_ += n;
    mode_ = detail::mode_after(p, codec_.widths(), mode_);
    return {n, error_code::ok};
  }

  // zero_run: writes 2^N zero bytes (a boundary marker before the next packet); other
  // schemes: nothing.
  constexpr encode_result sync_run(std::uint8_t* out, std::size_t capacity) noexcept {
    if (status_ != error_code::ok) return {0, status_};
    const std::size_t n = enc_.recovery == boundary_recovery::zero_run ? enc_.zero_run_length() : 0;
    return zeros(out, capacity, n);
  }

  // blocks: pads the current block with zeros up to its end (nothing at a boundary); other
  // schemes: nothing.
  constexpr encode_result pad_block(std::uint8_t* out, std::size_t capacity) noexcept {
    if (status_ != error_code::ok) return {0, status_};
    std::size_t n = 0;
    if (enc_.recovery == boundary_recovery::blocks) {
      const std::size_t used = static_cast<std::size_t>(pos_ % enc_.block_size);
      n = used == 0 ? 0 : enc_.block_size - used;
    }
    return zeros(out, capacity, n);
  }

 private:
  constexpr void init() noexcept {
    status_ = codec_.status();
    if (status_ == error_code::ok) status_ = validate(enc_, codec_.max_payload());
  }
  constexpr encode_result zeros(std::uint8_t* out, std::size_t capacity, std::size_t n) noexcept {
    if (n > capacity) return {0, error_code::buffer_too_small};
    for (std::size_t i = 0; i < n; ++i) out[i] = 0;
    pos_ += n;
    return {n, error_code::ok};
  }

  payload_codec<Config> codec_{};
  encapsulation enc_{};
  trace_mode mode_{};
  error_code status_ = error_code::ok;
  std::uint64_t pos_ = 0;
};

}  // namespace tracecodec::etrace
