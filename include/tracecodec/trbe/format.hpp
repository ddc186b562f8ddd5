// SPDX-License-Identifier: Apache-2.0
// Printable forms of a TRBSR_EL1 value: one line per field with its meaning (text), and one
// JSON object. Hosted code (std::string, std::snprintf).
//
// JSON keys: "register" ("TRBSR_EL1"), "value" ("0x" + 16 hex digits), then raw integers
// "ec", "irq", "trg", "wrap", "ea", "s", "mss", each with "<field>_meaning"; "bsc" +
// "bsc_meaning" when EC is 0x00, "fsc" + "fsc_meaning" + "fsc_level" (integer or null) when EC
// is 0x24 or 0x25; "res0" ("0x" + 16 hex digits: every RES0 bit that is set, MSS[15:6]
// included when EC is 0x00, 0x24 or 0x25).
#pragma once

#include <cstdint>
#include <string>

#include "../spe/format_fault_status.hpp"
#include "trbsr.hpp"

namespace tracecodec::trbe {

inline const char* exception_class_meaning(exception_class ec) {
  switch (ec) {
    case exception_class::other_buffer_management_event:
      return "Other buffer management event";
    case exception_class::implementation_defined_event:
      return "IMPLEMENTATION DEFINED buffer management event";
    case exception_class::stage1_data_abort: return "Stage 1 Data Abort on write to trace buffer";
    case exception_class::stage2_data_abort: return "Stage 2 Data Abort on write to trace buffer";
    case exception_class::reserved: break;
  }
  return "reserved";
}

inline const char* buffer_status_meaning(buffer_status b) {
  switch (b) {
    case buffer_status::not_filled: return "Buffer not filled";
    case buffer_status::filled: return "Buffer filled";
    case buffer_status::trigger_event: return "Trigger Event";
    case buffer_status::reserved: break;
  }
  return "reserved";
}

inline const char* irq_meaning(const trbsr& r) {
  return r.irq ? "Interrupt request asserted: a trace buffer management event occurred (TRBIRQ)"
               : "Interrupt request not asserted";
}
inline const char* trg_meaning(const trbsr& r) {
  return r.trg ? "A Detected Trigger has occurred" : "No Detected Trigger has occurred";
}
inline const char* wrap_meaning(const trbsr& r) {
  return r.wrap ? "The current write pointer has wrapped to the Base pointer"
                : "The current write pointer has not wrapped";
}
inline const char* ea_meaning(const trbsr& r) {
  return r.ea ? "An External Abort has been reported to the Trace Buffer Unit"
              : "No External Abort has been reported to the Trace Buffer Unit";
}
inline const char* s_meaning(const trbsr& r) {
  return r.s ? "Collection is stopped: the Trace Buffer Unit discards trace data"
             : "Collection is not stopped";
}

inline std::string format_text(const trbsr& r) {
  using namespace spe::format_detail;
  std::string out = "TRBSR_EL1 = " + hex(encode_trbsr(r).value, 16) + "\n";
  field_line(out, "EC", "[31:26]", binary(r.ec, 6), exception_class_meaning(r.event()));
  field_line(out, "IRQ", "[22]", decimal(r.irq), irq_meaning(r));
  field_line(out, "TRG", "[21]", decimal(r.trg), trg_meaning(r));
  field_line(out, "WRAP", "[20]", decimal(r.wrap), wrap_meaning(r));
  field_line(out, "EA", "[18]", decimal(r.ea), ea_meaning(r));
  field_line(out, "S", "[17]", decimal(r.s), s_meaning(r));
  mss_text(out, r.syndrome(), r.mss, buffer_status_meaning(r.bsc()));
  res0_text(out, r.res0_set());
  return out;
}

inline std::string format_json(const trbsr& r) {
  using namespace spe::format_detail;
  std::string out = "{";
  json_text(out, "register", "TRBSR_EL1");
  json_text(out, "value", hex(encode_trbsr(r).value, 16));
  json_int(out, "ec", r.ec);
  json_text(out, "ec_meaning", exception_class_meaning(r.event()));
  json_int(out, "irq", r.irq);
  json_text(out, "irq_meaning", irq_meaning(r));
  json_int(out, "trg", r.trg);
  json_text(out, "trg_meaning", trg_meaning(r));
  json_int(out, "wrap", r.wrap);
  json_text(out, "wrap_meaning", wrap_meaning(r));
  json_int(out, "ea", r.ea);
  json_text(out, "ea_meaning", ea_meaning(r));
  json_int(out, "s", r.s);
  json_text(out, "s_meaning", s_meaning(r));
  mss_json(out, r.syndrome(), r.mss, buffer_status_meaning(r.bsc()));
  json_text(out, "res0", hex(r.res0_set(), 16));
  out += '}';
  return out;
}

}  // namespace tracecodec::trbe
