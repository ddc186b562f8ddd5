// SPDX-License-Identifier: Apache-2.0
// Encapsulation of te_inst payloads for transport (te_inst packets introduction): the two
// example headers and the two packet-boundary recovery schemes.
//
// Siemens Messaging Infrastructure: header byte = length[4:0] (payload bytes, 1..31),
// flow[6:5], timestamp-present[7]; then the index field (index_width bits, sent in whole bytes,
// LSB first), the optional 16-bit timestamp (LSB first) and the payload.
// ATB: header byte = length[4:0], timestamp-present[5], bits [7:6] zero (the source is the ATID
// bus field); then the optional timestamp and the payload.
// A zero byte where a header is expected is idle/padding (no payload has length 0).
#pragma once

#include <cstddef>
#include <cstdint>

#include "config.hpp"
#include "error.hpp"

namespace tracecodec::etrace {

enum class transport : std::uint8_t { siemens = 0, atb = 1 };

enum class boundary_recovery : std::uint8_t {
  none = 0,      // packets back to back; after an error decoding resumes after that packet
  zero_run = 1,  // a run of at least 2^N zero bytes precedes a packet
  blocks = 2,    // packets never span M-byte blocks; blocks end in zero padding
};

struct encapsulation {
  etrace::transport transport = transport::siemens;
  std::uint8_t index_width = 0;  // Siemens index field bits, 0..32
  boundary_recovery recovery = boundary_recovery::none;
  std::uint8_t zero_run_log2 = 5;  // N: a packet boundary follows >= 2^N zero bytes
  std::uint32_t block_size = 1024;  // M

  constexpr bool operator==(const encapsulation&) const = default;
  constexpr unsigned index_bytes() const noexcept {
    return transport == transport::siemens ? (index_width + 7u) / 8u : 0u;
  }
  constexpr std::uint32_t zero_run_length() const noexcept { return std::uint32_t{1} << zero_run_log2; }
  constexpr unsigned header_size(bool has_timestamp) const noexcept {
    return 1u + index_bytes() + (has_timestamp ? 2u : 0u);
  }
};

// Largest encapsulated packet: header byte, 4 index bytes, timestamp, 31-byte payload.
inline constexpr unsigned max_packet_size = 1 + 4 + 2 + max_payload_bytes;

// The encapsulation fields of one packet.
struct header {
  std::uint8_t length = 0;  // payload bytes
  std::uint8_t flow = 0;    // Siemens only
  bool has_timestamp = false;
  std::uint32_t index = 0;  // Siemens only
  std::uint16_t timestamp = 0;
  constexpr bool operator==(const header&) const = default;
};

// Checks the settings against the parameters' largest payload (`max_payload`, bytes). A zero
// run of 2^N bytes must not fit inside a packet: 2^N > index bytes + 2 + max_payload (the
// header byte is never zero). A block must hold the largest packet.
constexpr error_code validate(const encapsulation& e, unsigned max_payload) noexcept {
  if (e.transport != transport::siemens && e.transport != transport::atb)
    return error_code::invalid_encapsulation;
  if (e.index_width > 32) return error_code::invalid_encapsulation;
  const unsigned largest = e.header_size(true) + max_payload;
  switch (e.recovery) {
    case boundary_recovery::none: return error_code::ok;
    case boundary_recovery::zero_run:
      if (e.zero_run_log2 > 12 || e.zero_run_length() <= largest - 1)
        return error_code::invalid_encapsulation;
      return error_code::ok;
    case boundary_recovery::blocks:
      return e.block_size >= largest ? error_code::ok : error_code::invalid_encapsulation;
  }
  return error_code::invalid_encapsulation;
}

struct header_byte_result {
  header fields{};
  error_code error = error_code::ok;
};

// Decodes a (non-zero) header byte: length, flow, timestamp-present.
constexpr header_byte_result decode_header_byte(const encapsulation& e, std::uint8_t b) noexcept {
  header_byte_result r{};
  r.fields.length = b & 0x1fu;
  if (e.transport == transport::siemens) {
    r.fields.flow = (b >> 5) & 3u;
    r.fields.has_timestamp = (b & 0x80u) != 0;
  } else {
    r.fields.has_timestamp = (b & 0x20u) != 0;
    if (b & 0xc0u) r.error = error_code::malformed_header;
  }
  if (r.fields.length == 0) r.error = error_code::malformed_header;
  return r;
}

// Reads the index and timestamp that follow the header byte (`p` points after it).
constexpr error_code decode_header_tail(const encapsulation& e, const std::uint8_t* p,
                                        header& h) noexcept {
  const unsigned nb = e.index_bytes();
  std::uint32_t index = 0;
  for (unsigned i = 0; i < nb; ++i) index |= static_cast<std::uint32_t>(p[i]) << (8 * i);
  if (e.index_width < 32 && (index >> e.index_width) != 0) return error_code::malformed_header;
  h.index = index;
  if (h.has_timestamp)
    h.timestamp = static_cast<std::uint16_t>(p[nb] | (static_cast<unsigned>(p[nb + 1]) << 8));
  return error_code::ok;
}

// Writes the header (header_size(h.has_timestamp) bytes) for a payload of h.length bytes.
constexpr error_code encode_header(const encapsulation& e, const header& h,
                                   std::uint8_t* out) noexcept {
  if (h.length == 0 || h.length > max_payload_bytes) return error_code::unencodable;
  if (e.transport == transport::siemens) {
    if (h.flow > 3) return error_code::unencodable;
    if (e.index_width < 32 && (h.index >> e.index_width) != 0) return error_code::unencodable;
    out[0] = static_cast<std::uint8_t>(h.length | (h.flow << 5) | (h.has_timestamp ? 0x80u : 0u));
  } else {
    if (h.flow != 0 || h.index != 0) return error_code::unencodable;
    out[0] = static_cast<std::uint8_t>(h.length | (h.has_timestamp ? 0x20u : 0u));
  }
  const unsigned nb = e.index_bytes();
  for (unsigned i = 0; i < nb; ++i) out[1 + i] = static_cast<std::uint8_t>(h.index >> (8 * i));
  if (h.has_timestamp) {
    out[1 + nb] = static_cast<std::uint8_t>(h.timestamp);
    out[2 + nb] = static_cast<std::uint8_t>(h.timestamp >> 8);
  }
  return error_code::ok;
}

}  // namespace tracecodec::etrace
