// SPDX-License-Identifier: Apache-2.0
// Printable forms shared by the PMBSR_EL1 and TRBSR_EL1 formatters: the meaning of a fault
// status code (FSC) and of an MSS layout, and the whole text/JSON form of a buffer syndrome
// register from its field table. Hosted code (std::string); the codec headers stay
// freestanding.
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

// The BSC or FSC line under MSS, given the EC's MSS layout and the meaning of the BSC (the
// BSC tables differ).
inline void mss_code_text(std::string& out, mss_format fmt, std::uint16_t mss,
                          const std::string& bsc_meaning) {
  const std::uint8_t code = mss_code_of(mss);
  if (fmt == mss_format::bsc) field_line(out, mss_bsc_field, code, bsc_meaning);
  if (fmt == mss_format::fsc)
    field_line(out, mss_fsc_field, code, fault_status_meaning(decode_fault_status(code)));
}
inline void mss_code_json(std::string& out, mss_format fmt, std::uint16_t mss,
                          const std::string& bsc_meaning) {
  const std::uint8_t code = mss_code_of(mss);
  if (fmt == mss_format::bsc) json_field(out, mss_bsc_field, code, bsc_meaning);
  if (fmt == mss_format::fsc) {
    const fault_status f = decode_fault_status(code);
    json_field(out, mss_fsc_field, code, fault_status_meaning(f));
    if (f.has_level) json_int(out, "fsc_level", f.level);
    else json_null(out, "fsc_level");
  }
}

// The text form of a buffer syndrome register: "NAME = value", a line per field of the table,
// the BSC or FSC line, the RES0 bits that are set (MSS[15:6] included, see res0_set()).
template <class Reg, std::size_t N>
std::string syndrome_text(const char* name, const arm::register_field<Reg> (&fields)[N],
                          const field_meaning<Reg> (&meanings)[N], const Reg& r,
                          const std::string& bsc_meaning) {
  std::string out = register_line(name, arm::encode_register(fields, r).value);
  write_fields(out, field_line, fields, meanings, r, r);
  mss_code_text(out, r.syndrome(), r.mss, bsc_meaning);
  res0_text(out, r.res0_set());
  return out;
}

// The JSON form: "register", "value", the fields' keys, "bsc"/"fsc", "res0".
template <class Reg, std::size_t N>
std::string syndrome_json(const char* name, const arm::register_field<Reg> (&fields)[N],
                          const field_meaning<Reg> (&meanings)[N], const Reg& r,
                          const std::string& bsc_meaning) {
  std::string out = "{";
  json_text(out, "register", name);
  json_text(out, "value", hex(arm::encode_register(fields, r).value, 16));
  write_fields(out, json_field, fields, meanings, r, r);
  mss_code_json(out, r.syndrome(), r.mss, bsc_meaning);
  json_text(out, "res0", hex(r.res0_set(), 16));
  out += '}';
  return out;
}

}  // namespace format_detail
}  // namespace tracecodec::arm
