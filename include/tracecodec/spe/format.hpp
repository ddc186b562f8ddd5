// SPDX-License-Identifier: Apache-2.0
// Printable forms of a PMBSR_EL1 value: one line per field with its meaning (text), and one
// JSON object. Hosted code (std::string, std::snprintf).
//
// JSON keys: "register" ("PMBSR_EL1"), "value" ("0x" + 16 hex digits), then raw integers
// "ec", "dl", "ea", "s", "coll", "mss", each with "<field>_meaning"; "bsc" + "bsc_meaning" when
// EC is 0b000000, "fsc" + "fsc_meaning" + "fsc_level" (integer or null) when EC is 0b100100 or
// 0b100101; "res0" ("0x" + 16 hex digits: every RES0 bit that is set, MSS[15:6] included when
// EC gives MSS a layout).
#pragma once

#include <cstdint>
#include <string>

#include "format_fault_status.hpp"
#include "pmbsr.hpp"

namespace tracecodec::spe {

inline const char* exception_class_meaning(exception_class ec) {
  switch (ec) {
    case exception_class::other_buffer_management_event:
      return "Other buffer management event";
    case exception_class::stage1_data_abort:
      return "Stage 1 Data Abort on write to Profiling Buffer";
    case exception_class::stage2_data_abort:
      return "Stage 2 Data Abort on write to Profiling Buffer";
    case exception_class::reserved: break;
  }
  return "reserved";
}

inline const char* buffer_status_meaning(buffer_status b) {
  switch (b) {
    case buffer_status::not_filled: return "Buffer not filled";
    case buffer_status::filled: return "Buffer filled";
    case buffer_status::reserved: break;
  }
  return "reserved";
}

inline const char* dl_meaning(const pmbsr& r) {
  return r.dl ? "Part of a record was lost because of a buffer management event or synchronous "
                "External abort; PMBPTR_EL1 might not point to the first byte after the last "
                "complete record"
              : "PMBPTR_EL1 points to the first byte after the last complete record written to "
                "the Profiling Buffer";
}
inline const char* ea_meaning(const pmbsr& r) {
  return r.ea ? "An External abort has been asserted and detected by the Statistical Profiling "
                "Extension"
              : "An External abort has not been asserted";
}
inline const char* s_meaning(const pmbsr& r) {
  return r.s ? "PMBIRQ is asserted; all profiling data has either been written to the buffer or "
               "discarded"
             : "PMBIRQ is not asserted";
}
inline const char* coll_meaning(const pmbsr& r) {
  return r.coll ? "At least one collision event was recorded" : "No collision events detected";
}

inline std::string format_text(const pmbsr& r) {
  using namespace format_detail;
  std::string out = "PMBSR_EL1 = " + hex(encode_pmbsr(r).value, 16) + "\n";
  field_line(out, "EC", "[31:26]", binary(r.ec, 6), exception_class_meaning(r.event()));
  field_line(out, "DL", "[19]", decimal(r.dl), dl_meaning(r));
  field_line(out, "EA", "[18]", decimal(r.ea), ea_meaning(r));
  field_line(out, "S", "[17]", decimal(r.s), s_meaning(r));
  field_line(out, "COLL", "[16]", decimal(r.coll), coll_meaning(r));
  mss_text(out, r.syndrome(), r.mss, buffer_status_meaning(r.bsc()));
  res0_text(out, r.res0_set());
  return out;
}

inline std::string format_json(const pmbsr& r) {
  using namespace format_detail;
  std::string out = "{";
  json_text(out, "register", "PMBSR_EL1");
  json_text(out, "value", hex(encode_pmbsr(r).value, 16));
  json_int(out, "ec", r.ec);
  json_text(out, "ec_meaning", exception_class_meaning(r.event()));
  json_int(out, "dl", r.dl);
  json_text(out, "dl_meaning", dl_meaning(r));
  json_int(out, "ea", r.ea);
  json_text(out, "ea_meaning", ea_meaning(r));
  json_int(out, "s", r.s);
  json_text(out, "s_meaning", s_meaning(r));
  json_int(out, "coll", r.coll);
  json_text(out, "coll_meaning", coll_meaning(r));
  mss_json(out, r.syndrome(), r.mss, buffer_status_meaning(r.bsc()));
  json_text(out, "res0", hex(r.res0_set(), 16));
  out += '}';
  return out;
}

}  // namespace tracecodec::spe
