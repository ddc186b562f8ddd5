// SPDX-License-Identifier: Apache-2.0
// Error values of the RISC-V E-Trace codec: stable numeric codes, never exceptions.
#pragma once

#include <cstdint>

#include "../detail/error_text.hpp"

namespace tracecodec::etrace {

// Stable codes: the numbers are part of the API (tools log them) and never change meaning.
enum class error_code : std::uint8_t {
  ok = 0,
  invalid_config = 1,         // parameters no te_inst encoder can have (see parameter_error)
  invalid_encapsulation = 2,  // encapsulation settings unusable with these parameters
  reserved_format = 3,        // format 0 subformat reserved or not enabled by the parameters
  reserved_branch_fmt = 4,    // format 0 subformat 0 branch_fmt 0b01 ("cannot occur")
  inconsistent_irdepth = 5,   // irreport equal to the bit before it, but irdepth not all that bit
  empty_payload = 6,          // a payload of zero bytes
  payload_too_long = 7,       // more bytes than the fields need once sign-extended to a byte
  bad_sign_extension = 8,     // bits after the last field differ from the last field's MSB
  malformed_header = 9,       // encapsulation header with reserved bits set or length 0
  truncated_packet = 10,      // input ended inside a packet
  block_overrun = 11,         // a packet would cross an M-byte block boundary
  buffer_too_small = 12,      // encoder: output buffer cannot hold the packet (nothing written)
  unencodable = 13,           // encoder: a field value does not fit its field, or a reserved
                              // format / subformat / branch_fmt
};

// One row per code, in numeric order.
inline constexpr ::tracecodec::detail::error_text error_texts[] = {
    {"ok", "no error"},
    {"invalid_config", "invalid te_inst parameters"},
    {"invalid_encapsulation", "invalid encapsulation settings"},
    {"reserved_format", "format 0 subformat reserved or not enabled"},
    {"reserved_branch_fmt", "branch_fmt 0b01 cannot occur"},
    {"inconsistent_irdepth", "irdepth bits differ from irreport"},
    {"empty_payload", "payload of zero bytes"},
    {"payload_too_long", "payload longer than its fields"},
    {"bad_sign_extension", "payload padding is not sign extension"},
    {"malformed_header", "malformed encapsulation header"},
    {"truncated_packet", "trace ended inside a packet"},
    {"block_overrun", "packet crosses a block boundary"},
    {"buffer_too_small", "output buffer too small"},
    {"unencodable", "value cannot be encoded in a te_inst packet"},
};
static_assert(::tracecodec::detail::dense_error_table(error_texts, error_code::unencodable));

constexpr const char* error_name(error_code e) noexcept {
  return ::tracecodec::detail::error_text_of(error_texts, e).name;
}
constexpr const char* error_message(error_code e) noexcept {
  return ::tracecodec::detail::error_text_of(error_texts, e).message;
}

// A stream decoder diagnostic: the error, the byte offset of the packet (or header byte) that
// caused it, and the number of bytes it discarded.
using diagnostic = ::tracecodec::detail::diagnostic<error_code>;

}  // namespace tracecodec::etrace
