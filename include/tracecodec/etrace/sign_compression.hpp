// SPDX-License-Identifier: Apache-2.0
// Sign-based compression of a whole payload (te_inst packets introduction): identical bits
// at the most significant end are removed, the payload is sign-extended to a byte boundary,
// and a decoder restores the full packet by sign-extending from the last received bit.
#pragma once

#include <cstddef>
#include <cstdint>

#include "error.hpp"

namespace tracecodec::etrace {

// Fills the bits from `bits` up to the next byte boundary with bit `bits - 1` ("the payload
// must be sign-extended to the nearest byte boundary").
constexpr void sign_extend_to_byte(std::uint8_t* buf, unsigned bits) noexcept {
  if (bits == 0 || (bits & 7u) == 0) return;
  const unsigned last = bits - 1;
  const bool sign = (buf[last >> 3] >> (last & 7u)) & 1u;
  const unsigned at = bits >> 3, keep = bits & 7u;
  const unsigned low = (1u << keep) - 1u;
  buf[at] = static_cast<std::uint8_t>(sign ? (buf[at] | ~low) : (buf[at] & low));
}

// Shortest prefix (at least 1 byte) of a byte-aligned payload of `size` bytes that restores
// all of it by sign extension: trailing bytes that equal the fill of the bit before them go.
constexpr std::size_t compressed_size(const std::uint8_t* buf, std::size_t size) noexcept {
  std::size_t n = size;
  while (n > 1) {
    const std::uint8_t fill = (buf[n - 2] & 0x80u) ? 0xff : 0x00;
    if (buf[n - 1] != fill) break;
    --n;
  }
  return n;
}

// Decoder check of a received payload of `size` bytes whose fields took `bits` bits: no whole
// byte beyond the sign-extended fields, and padding bits in the last byte equal to bit
// `bits - 1`. (A shorter payload is always well formed: the rest is implied.)
constexpr error_code check_payload_length(const std::uint8_t* data, std::size_t size,
                                          unsigned bits) noexcept {
  const std::size_t full = (bits + 7u) / 8u;
  if (size > full) return error_code::payload_too_long;
  if (size < full || (bits & 7u) == 0) return error_code::ok;
  const unsigned last = bits - 1;
  const bool sign = (data[last >> 3] >> (last & 7u)) & 1u;
  const unsigned keep = bits & 7u;
  const unsigned pad = static_cast<unsigned>(data[size - 1] >> keep);
  const unsigned want = sign ? (0xffu >> keep) : 0u;
  return pad == want ? error_code::ok : error_code::bad_sign_extension;
}

}  // namespace tracecodec::etrace
