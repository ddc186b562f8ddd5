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

#include "../arm/fault_status.hpp"
#include "../../trbe/trbsr.hpp"

namespace tracecodec::trbe {

inline const char* exception_class_meaning(exception_class ec) {
  switch (ec) {
    case exception_class::implementation_defined_event:
      return "IMPLEMENTATION DEFINED buffer management event";
    case exception_class::stage1_data_abort: return "Stage 1 Data Abort on write to trace buffer";
    case exception_class::stage2_data_abort: return "Stage 2 Data Abort on write to trace buffer";
    default: return arm::format_detail::shared_ec_meaning(ec);
  }
}

inline const char* buffer_status_meaning(buffer_status b) {
  if (b == buffer_status::trigger_event) return "Trigger Event";
  return arm::format_detail::shared_bsc_meaning(b);
}

// The meaning of every field of trbsr_fields, in its order.
inline constexpr arm::format_util::field_meaning<trbsr> trbsr_meanings[] = {
    {"ec", arm::format_detail::ec_meaning<trbsr>},
    {"irq", "Interrupt request not asserted",
     "Interrupt request asserted: a trace buffer management event occurred (TRBIRQ)"},
    {"trg", "No Detected Trigger has occurred", "A Detected Trigger has occurred"},
    {"wrap", "The current write pointer has not wrapped",
     "The current write pointer has wrapped to the Base pointer"},
    {"ea", "No External Abort has been reported to the Trace Buffer Unit",
     "An External Abort has been reported to the Trace Buffer Unit"},
    {"s", "Collection is not stopped",
     "Collection is stopped: the Trace Buffer Unit discards trace data"},
    {"mss", arm::format_detail::mss_meaning<trbsr>},
};
static_assert(arm::format_util::keys_match(trbsr_fields, trbsr_meanings));

inline std::string format_text(const trbsr& r) {
  return arm::format_detail::syndrome_text("TRBSR_EL1", trbsr_fields, trbsr_meanings, r);
}
inline std::string format_json(const trbsr& r) {
  return arm::format_detail::syndrome_json("TRBSR_EL1", trbsr_fields, trbsr_meanings, r);
}

}  // namespace tracecodec::trbe
