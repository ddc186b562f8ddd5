// SPDX-License-Identifier: Apache-2.0
// Printable forms shared by the PMBSR_EL1 and TRBSR_EL1 formatters: the meaning of a fault
// status code (FSC) and of an MSS layout, and the whole text/JSON form of a buffer syndrome
// register from its field table (one visitor, visit_syndrome, writes both). Hosted code
// (std::string); the codec headers stay freestanding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "format_util.hpp"
#include "../../arm/register_field.hpp"
#include "../../arm/fault_status.hpp"

namespace tracecodec::arm {

// The FSC table's text, with the level for the level forms ("Translation fault, level 2").
inline std::string fault_status_meaning(const fault_status& f) {
  const char* base = "reserved";
  switch (f.kind) {
    case fault_kind::address_size: base = "Address Size fault"; break;
    case fault_kind::translation: base = "Translation fault"; break;
    case fault_kind::access_flag: base = "Access Flag fault"; break;
    case fault_kind::permission: base = "Permission fault"; break;
    case fault_kind::synchronous_external_abort:
      base = "Synchronous External abort on write";
      break;
    case fault_kind::asynchronous_external_abort:
      base = "Asynchronous External abort on write";
      break;
    case fault_kind::external_abort_on_table_walk:
      base = "Synchronous External abort on translation table walk or hardware update of "
             "translation table";
      break;
    case fault_kind::alignment: base = "Alignment fault"; break;
    case fault_kind::tlb_conflict: base = "TLB Conflict fault"; break;
    case fault_kind::unsupported_atomic_update:
      base = "Unsupported atomic hardware update fault";
      break;
    case fault_kind::reserved: break;
  }
  std::string s = base;
  if (f.has_level) {
    s += ", level ";
    s += static_cast<char>('0' + (f.level & 3u));
  }
  return s;
}

inline const char* mss_format_meaning(mss_format m) {
  switch (m) {
    case mss_format::bsc: return "BSC: MSS encoding for other buffer management events";
    case mss_format::fsc:
      return "FSC: MSS encoding for stage 1 or stage 2 Data Aborts on write to buffer";
    case mss_format::implementation_defined: return "IMPLEMENTATION DEFINED syndrome";
    case mss_format::unknown: break;
  }
  return "no defined encoding: EC is reserved";
}

namespace format_detail {

using namespace format_util;

// The codes PMBSR_EL1 and TRBSR_EL1 give the same meaning: EC 0b000000 (other buffer
// management event) and BSC 0b000000/0b000001 (buffer not filled, filled; PMBSR_EL1.BSC and
// TRBSR_EL1.BSC, whose TRBE table adds Trigger Event).
template <class ExceptionClass>
const char* shared_ec_meaning(ExceptionClass ec) {
  return ec == ExceptionClass::other_buffer_management_event ? "Other buffer management event"
                                                              : "reserved";
}
template <class BufferStatus>
const char* shared_bsc_meaning(BufferStatus b) {
  if (b == BufferStatus::not_filled) return "Buffer not filled";
  return b == BufferStatus::filled ? "Buffer filled" : "reserved";
}

// The meanings of EC and MSS in a buffer syndrome register (PMBSR_EL1, TRBSR_EL1): the
// register's exception class, and the layout that EC gives MSS.
template <class Reg>
std::string ec_meaning(const Reg& r) {
  return exception_class_meaning(r.event());
}
template <class Reg>
std::string mss_meaning(const Reg& r) {
  return mss_format_meaning(r.syndrome());
}

// A buffer syndrome register's fields: "NAME = value", a line per field of the table, the BSC
// or FSC line that EC gives MSS (with "fsc_level" in JSON), and the RES0 bits that are set
// (MSS[15:6] included, see res0_set()). `bsc_meaning` is the BSC's meaning (the BSC tables
// of SPE and TRBE differ).
template <class Reg, std::size_t N, class V>
void visit_syndrome(const char* name, const arm::register_field<Reg> (&fields)[N],
                    const field_meaning<Reg> (&meanings)[N], const Reg& r,
                    const std::string& bsc_meaning, V& v) {
  v.register_value(name, name, arm::encode_register(fields, r).value);
  visit_register_fields(fields, meanings, r, r, v);
  const std::uint8_t code = mss_code_of(r.mss);
  if (r.syndrome() == mss_format::bsc) v.field(mss_bsc_field, code, bsc_meaning);
  if (r.syndrome() == mss_format::fsc) {
    const fault_status f = decode_fault_status(code);
    v.field(mss_fsc_field, code, fault_status_meaning(f));
    json_only(v).field("fsc_level", maybe_value{f.level, f.has_level, ""});
  }
  v.res0(r.res0_set());
}

// The text form (a line per field) and the JSON form ("register", "value", the fields' keys,
// "bsc"/"fsc", "res0") of a buffer syndrome register; the BSC's meaning is the register's
// buffer_status_meaning (found next to its enum).
template <class Reg, std::size_t N>
std::string syndrome_text(const char* name, const arm::register_field<Reg> (&fields)[N],
                          const field_meaning<Reg> (&meanings)[N], const Reg& r) {
  return text_form({}, [&](auto& v) {
    visit_syndrome(name, fields, meanings, r, buffer_status_meaning(r.bsc()), v);
  });
}
template <class Reg, std::size_t N>
std::string syndrome_json(const char* name, const arm::register_field<Reg> (&fields)[N],
                          const field_meaning<Reg> (&meanings)[N], const Reg& r) {
  return json_form("{", [&](auto& v) {
    visit_syndrome(name, fields, meanings, r, buffer_status_meaning(r.bsc()), v);
  });
}

}  // namespace format_detail
}  // namespace tracecodec::arm
