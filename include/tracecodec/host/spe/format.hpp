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

#include "../arm/fault_status.hpp"
#include "../../spe/pmbsr.hpp"

namespace tracecodec::spe {

inline const char* exception_class_meaning(exception_class ec) {
  switch (ec) {
    case exception_class::stage1_data_abort:
      return "Stage 1 Data Abort on write to Profiling Buffer";
    case exception_class::stage2_data_abort:
      return "Stage 2 Data Abort on write to Profiling Buffer";
    default: return arm::format_detail::shared_ec_meaning(ec);
  }
}

inline const char* buffer_status_meaning(buffer_status b) {
  return arm::format_detail::shared_bsc_meaning(b);
}

// The meaning of every field of pmbsr_fields, in its order.
inline constexpr arm::format_util::field_meaning<pmbsr> pmbsr_meanings[] = {
    {"ec", arm::format_detail::ec_meaning<pmbsr>},
    {"dl",
     "PMBPTR_EL1 points to the first byte after the last complete record written to the "
     "Profiling Buffer",
     "Part of a record was lost because of a buffer management event or synchronous External "
     "abort; PMBPTR_EL1 might not point to the first byte after the last complete record"},
    {"ea", "An External abort has not been asserted",
     "An External abort has been asserted and detected by the Statistical Profiling Extension"},
    {"s", "PMBIRQ is not asserted",
     "PMBIRQ is asserted; all profiling data has either been written to the buffer or "
     "discarded"},
    {"coll", "No collision events detected", "At least one collision event was recorded"},
    {"mss", arm::format_detail::mss_meaning<pmbsr>},
};
static_assert(arm::format_util::keys_match(pmbsr_fields, pmbsr_meanings));

inline std::string format_text(const pmbsr& r) {
  return arm::format_detail::syndrome_text("PMBSR_EL1", pmbsr_fields, pmbsr_meanings, r);
}
inline std::string format_json(const pmbsr& r) {
  return arm::format_detail::syndrome_json("PMBSR_EL1", pmbsr_fields, pmbsr_meanings, r);
}

}  // namespace tracecodec::spe
