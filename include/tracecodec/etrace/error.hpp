// SPDX-License-Identifier: Apache-2.0
// Error values of the RISC-V E-Trace codec: stable numeric codes, never exceptions.
#pragma once

#include <cstdint>

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

constexpr const char* error_name(error_code e) noexcept {
  switch (e) {
    case error_code::ok: return "ok";
    case error_code::invalid_config: return "invalid_config";
    case error_code::invalid_encapsulation: return "invalid_encapsulation";
    case error_code::reserved_format: return "reserved_format";
    case error_code::reserved_branch_fmt: return "reserved_branch_fmt";
    case error_code::inconsistent_irdepth: return "inconsistent_irdepth";
    case error_code::empty_payload: return "empty_payload";
    case error_code::payload_too_long: return "payload_too_long";
    case error_code::bad_sign_extension: return "bad_sign_extension";
    case error_code::malformed_header: return "malformed_header";
    case error_code::truncated_packet: return "truncated_packet";
    case error_code::block_overrun: return "block_overrun";
    case error_code::buffer_too_small: return "buffer_too_small";
    case error_code::unencodable: return "unencodable";
  }
  return "unknown";
}

constexpr const char* error_message(error_code e) noexcept {
  switch (e) {
    case error_code::ok: return "no error";
    case error_code::invalid_config: return "invalid te_inst parameters";
    case error_code::invalid_encapsulation: return "invalid encapsulation settings";
    case error_code::reserved_format: return "format 0 subformat reserved or not enabled";
    case error_code::reserved_branch_fmt: return "branch_fmt 0b01 cannot occur";
    case error_code::inconsistent_irdepth: return "irdepth bits differ from irreport";
    case error_code::empty_payload: return "payload of zero bytes";
    case error_code::payload_too_long: return "payload longer than its fields";
    case error_code::bad_sign_extension: return "payload padding is not sign extension";
    case error_code::malformed_header: return "malformed encapsulation header";
    case error_code::truncated_packet: return "trace ended inside a packet";
    case error_code::block_overrun: return "packet crosses a block boundary";
    case error_code::buffer_too_small: return "output buffer too small";
    case error_code::unencodable: return "value cannot be encoded in a te_inst packet";
  }
  return "unknown error";
}

// A stream decoder diagnostic: the error, the byte offset of the packet (or header byte) that
// caused it, and the number of bytes it discarded.
struct diagnostic {
  error_code code = error_code::ok;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  constexpr bool operator==(const diagnostic&) const = default;
};

}  // namespace tracecodec::etrace
