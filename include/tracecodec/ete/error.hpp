// SPDX-License-Identifier: Apache-2.0
// Error values of the ETE codec: stable numeric codes, never exceptions.
#pragma once

#include <cstdint>

#include "../detail/error_text.hpp"

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
  unsupported_packet = 13,   // ETMv4 data-trace, conditional-instruction or data-sync marker
                             // packet: not decoded; decoding resumes at the next A-Sync
};

// One row per code, in numeric order.
inline constexpr ::tracecodec::detail::error_text error_texts[] = {
    {"ok", "no error"},
    {"reserved_header", "reserved header byte for this configuration"},
    {"malformed_payload", "packet payload holds a reserved value"},
    {"overlong_field", "continuation run longer than the field allows"},
    {"bad_async", "malformed A-Sync sequence"},
    {"truncated_packet", "trace ended inside a packet"},
    {"config_mismatch", "packet needs a feature the configuration lacks"},
    {"invalid_config", "invalid trace unit configuration"},
    {"buffer_too_small", "output buffer too small"},
    {"unencodable", "value cannot be encoded in the requested packet form"},
    {"unsynchronized", "bytes skipped before an A-Sync"},
    {"resolution_overflow", "resolution queue full: oldest elements committed early"},
    {"unsupported_config", "MAXSPEC larger than this element reader resolves (give it a larger Capacity)"},
    {"unsupported_packet", "ETMv4 data, conditional or data-sync packet: not decoded"},
};
static_assert(::tracecodec::detail::dense_error_table(error_texts, error_code::unsupported_packet));

constexpr const char* error_name(error_code e) noexcept {
  return ::tracecodec::detail::error_text_of(error_texts, e).name;
}
constexpr const char* error_message(error_code e) noexcept {
  return ::tracecodec::detail::error_text_of(error_texts, e).message;
}

// A decoder diagnostic: an error (or the unsynchronized notice) with the byte offset of the
// packet that caused it. `length` is the number of bytes skipped for `unsynchronized`.
using diagnostic = ::tracecodec::detail::diagnostic<error_code>;

}  // namespace tracecodec::ete
