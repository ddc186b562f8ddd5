// SPDX-License-Identifier: Apache-2.0
// Printable forms shared by the PMBSR_EL1 and TRBSR_EL1 formatters: the meaning of a fault
// status code (FSC) and of an MSS layout, and the text/JSON building blocks both use.
// Hosted code (std::string, std::snprintf); the codec headers stay freestanding.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "fault_status.hpp"

namespace tracecodec::spe {

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

inline std::string hex(std::uint64_t v, int digits) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%0*llx", digits, static_cast<unsigned long long>(v));
  return buf;
}
inline std::string binary(std::uint64_t v, unsigned width) {
  std::string s = "0b";
  for (unsigned i = width; i-- > 0;) s += ((v >> i) & 1u) ? '1' : '0';
  return s;
}
inline std::string decimal(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(v));
  return buf;
}

// One text line: "  NAME  [bits]  = value  meaning".
inline void field_line(std::string& out, const char* name, const char* bits,
                       const std::string& value, const std::string& meaning) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "  %-10s %-8s = %-10s ", name, bits, value.c_str());
  out += buf;
  out += meaning;
  out += '\n';
}

inline void json_string(std::string& out, const std::string& text) {
  out += '"';
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  out += '"';
}
// Appends `,"key":` (no comma before the first key of an object).
inline void json_key(std::string& out, const char* key) {
  if (out.back() != '{') out += ',';
  json_string(out, key);
  out += ':';
}
inline void json_int(std::string& out, const char* key, std::uint64_t v) {
  json_key(out, key);
  out += decimal(v);
}
inline void json_text(std::string& out, const char* key, const std::string& v) {
  json_key(out, key);
  json_string(out, v);
}
inline void json_null(std::string& out, const char* key) {
  json_key(out, key);
  out += "null";
}

// The MSS lines and keys common to PMBSR_EL1 and TRBSR_EL1, given the EC's MSS layout and the
// meaning of the BSC (the BSC tables differ).
inline void mss_text(std::string& out, mss_format fmt, std::uint16_t mss,
                     const std::string& bsc_meaning) {
  field_line(out, "MSS", "[15:0]", hex(mss, 4), mss_format_meaning(fmt));
  const std::uint8_t code = static_cast<std::uint8_t>(mss & mss_code_mask);
  if (fmt == mss_format::bsc) field_line(out, "BSC", "[5:0]", binary(code, 6), bsc_meaning);
  if (fmt == mss_format::fsc)
    field_line(out, "FSC", "[5:0]", binary(code, 6),
               fault_status_meaning(decode_fault_status(code)));
}
inline void mss_json(std::string& out, mss_format fmt, std::uint16_t mss,
                     const std::string& bsc_meaning) {
  json_int(out, "mss", mss);
  json_text(out, "mss_meaning", mss_format_meaning(fmt));
  const std::uint8_t code = static_cast<std::uint8_t>(mss & mss_code_mask);
  if (fmt == mss_format::bsc) {
    json_int(out, "bsc", code);
    json_text(out, "bsc_meaning", bsc_meaning);
  }
  if (fmt == mss_format::fsc) {
    const fault_status f = decode_fault_status(code);
    json_int(out, "fsc", code);
    json_text(out, "fsc_meaning", fault_status_meaning(f));
    if (f.has_level) json_int(out, "fsc_level", f.level);
    else json_null(out, "fsc_level");
  }
}

inline void res0_text(std::string& out, std::uint64_t res0) {
  out += "  RES0 bits set: ";
  out += res0 == 0 ? std::string("none") : hex(res0, 16) + " (should be zero)";
  out += '\n';
}

}  // namespace format_detail
}  // namespace tracecodec::spe
