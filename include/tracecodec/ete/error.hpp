// SPDX-License-Identifier: Apache-2.0
// Error values of the ETE codec: stable numeric codes, never exceptions.
#pragma once

#include <cstdint>

namespace tracecodec::ete {

// Stable codes: the numbers are part of the API (tools log them) and never change meaning.
enum class error_code : std::uint8_t {
  ok = 0,
  reserved_header = 1,    // header byte reserved in this configuration (D9.2.2 ReservedEncoding)
  malformed_payload = 2,  // a payload field holds a reserved value (E=00/11, bad address header,
                          // exact-match index 3, Cancel of 0, unknown extension byte, ...)
  overlong_field = 3,     // a continuation run longer than the field allows (D5.3.1)
  bad_async = 4,          // A-Sync not 11+ zero bytes followed by 0x80 (D5.4)
  truncated_packet = 5,   // input ended inside a packet
  config_mismatch = 6,    // packet uses a feature the configuration lacks (CID with CIDSIZE 0, ...)
  invalid_config = 7,     // register values that no ETE trace unit can have
  buffer_too_small = 8,   // encoder: output buffer cannot hold the packet (nothing written)
  unencodable = 9,        // encoder: value not representable in the requested packet form
  unsynchronized = 10,    // notice: bytes skipped while searching for an A-Sync
  resolution_overflow = 11,  // element layer: more speculative or transactional elements
                             // than the bounded queues hold
  unsupported_config = 12,   // element layer: a valid MAXSPEC larger than the resolution queue
                             // was sized for (element_reader's Capacity)
};

constexpr const char* error_name(error_code e) noexcept {
  switch (e) {
    case error_code::ok: return "ok";
    case error_code::reserved_header: return "reserved_header";
    case error_code::malformed_payload: return "malformed_payload";
    case error_code::overlong_field: return "overlong_field";
    case error_code::bad_async: return "bad_async";
    case error_code::truncated_packet: return "truncated_packet";
    case error_code::config_mismatch: return "config_mismatch";
    case error_code::invalid_config: return "invalid_config";
    case error_code::buffer_too_small: return "buffer_too_small";
    case error_code::unencodable: return "unencodable";
    case error_code::unsynchronized: return "unsynchronized";
    case error_code::resolution_overflow: return "resolution_overflow";
    case error_code::unsupported_config: return "unsupported_config";
  }
  return "unknown";
}

constexpr const char* error_message(error_code e) noexcept {
  switch (e) {
    case error_code::ok: return "no error";
    case error_code::reserved_header: return "reserved header byte for this configuration";
    case error_code::malformed_payload: return "packet payload holds a reserved value";
    case error_code::overlong_field: return "continuation run longer than the field allows";
    case error_code::bad_async: return "malformed A-Sync sequence";
    case error_code::truncated_packet: return "trace ended inside a packet";
    case error_code::config_mismatch: return "packet needs a feature the configuration lacks";
    case error_code::invalid_config: return "invalid trace unit configuration";
    case error_code::buffer_too_small: return "output buffer too small";
    case error_code::unencodable: return "value cannot be encoded in the requested packet form";
    case error_code::unsynchronized: return "bytes skipped before an A-Sync";
    case error_code::resolution_overflow: return "resolution queue full: oldest elements committed early";
    case error_code::unsupported_config:
      return "MAXSPEC larger than this element reader resolves (give it a larger Capacity)";
  }
  return "unknown error";
}

// A decoder diagnostic: an error (or the unsynchronized notice) with the byte offset of the
// packet that caused it. `length` is the number of bytes skipped for `unsynchronized`.
struct diagnostic {
  error_code code = error_code::ok;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  constexpr bool operator==(const diagnostic&) const = default;
};

}  // namespace tracecodec::ete
