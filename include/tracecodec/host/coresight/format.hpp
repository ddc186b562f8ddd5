// SPDX-License-Identifier: Apache-2.0
// Printable forms of the CoreSight deformatter's and decode tree's diagnostics, in the style
// of the ETE ones (host/ete/format.hpp):
//   text: "Idx:<offset>; frame <name>: <message> (<length> bytes)", with "; trace ID 0x<hex>" after
//         the message for unrouted_data (the trace ID, given by decode_tree::unrouted_id())
//   JSON: {"session":<s>,"offset":<offset>,"frame_error":"<name>","message":"...","length":<n>}
//         and "id" for unrouted_data
// Hosted code (std::string).
#pragma once

#include <cstddef>
#include <string>

#include "../../coresight/deformatter.hpp"
#include "../format_fields.hpp"

namespace tracecodec::coresight {

inline std::string format_text(const diagnostic& d, int trace_id = -1) {
  using namespace field_format;
  std::string s = "Idx:";
  append_decimal(s, d.offset);
  s += "; frame ";
  s += error_name(d.code);
  s += ": ";
  s += error_message(d.code);
  if (trace_id >= 0) {
    s += "; trace ID ";
    append_hex(s, static_cast<std::uint64_t>(trace_id), 2);
  }
  s += " (";
  append_decimal(s, d.length);
  s += d.length == 1 ? " byte)" : " bytes)";
  return s;
}

inline std::string format_json(const diagnostic& d, std::size_t session, int trace_id = -1) {
  using namespace field_format;
  std::string s = "{\"session\":";
  append_decimal(s, session);
  s += ",\"offset\":";
  append_decimal(s, d.offset);
  s += ",\"frame_error\":";
  json_value(s, error_name(d.code));
  s += ",\"message\":";
  json_value(s, error_message(d.code));
  s += ",\"length\":";
  append_decimal(s, d.length);
  if (trace_id >= 0) {
    s += ",\"id\":";
    append_decimal(s, static_cast<std::uint64_t>(trace_id));
  }
  s += '}';
  return s;
}

}  // namespace tracecodec::coresight
