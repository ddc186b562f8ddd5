// SPDX-License-Identifier: Apache-2.0
// Printable forms of BRBINF<n>_EL1 values and Branch records: one line per field with its
// meaning (text), and one JSON object. Hosted code (std::string, std::snprintf).
//
// JSON keys: "register" ("BRBINF_EL1"), "value" ("0x" + 16 hex digits), then raw integers
// "valid", "type", "el", "mpred", "t", "lastfailed", "ccu", "cc", each with "<field>_meaning"
// (a field that VALID marks not valid has the meaning "not valid in a ... Branch record");
// "not_valid" (array of those field names); "cycle_counter_bits"; "cycles" (the decoded count,
// null when the count is not known: CCU 1, CC all ones, a value the counter cannot hold, or CC
// not valid); "cycles_overflow" (true when CCU is 0 and CC is all ones in a valid record);
// "res0" ("0x" + 16 hex digits, the RES0 bits that are set). For a branch_record also
// "brbsrc" and "brbtgt" ("0x" + 16 hex digits, or null when VALID marks them not valid).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "brbinf.hpp"
#include "cycle_count.hpp"
#include "record.hpp"

namespace tracecodec::brbe {

inline const char* validity_meaning(record_validity v) {
  switch (v) {
    case record_validity::invalid: return "This Branch record is not valid";
    case record_validity::half_target:
      return "Half-target Branch record: valid; source information not valid";
    case record_validity::half_source:
      return "Half-source Branch record: valid; target information not valid";
    case record_validity::full: return "Full Branch record: valid";
  }
  return "";
}

inline const char* branch_type_meaning(branch_type t) {
  switch (t) {
    case branch_type::direct: return "Unconditional direct branch, excluding Branch with link";
    case branch_type::indirect:
      return "Indirect branch, excluding Branch with link, Return from subroutine, and "
             "Exception return";
    case branch_type::direct_call: return "Direct Branch with link";
    case branch_type::indirect_call: return "Indirect Branch with link";
    case branch_type::subroutine_return: return "Return from subroutine";
    case branch_type::exception_return: return "Exception return";
    case branch_type::conditional_direct: return "Conditional direct branch";
    case branch_type::debug_halt: return "Debug halt";
    case branch_type::call: return "Call";
    case branch_type::trap: return "Trap";
    case branch_type::serror: return "SError";
    case branch_type::instruction_debug: return "Instruction debug";
    case branch_type::data_debug: return "Data debug";
    case branch_type::alignment: return "Alignment";
    case branch_type::instruction_fault: return "Inst Fault";
    case branch_type::data_fault: return "Data Fault";
    case branch_type::irq: return "IRQ";
    case branch_type::fiq: return "FIQ";
    case branch_type::implementation_defined_exception_to_el3:
      return "IMPLEMENTATION DEFINED exception to EL3";
    case branch_type::debug_state_exit: return "Debug State Exit";
    case branch_type::reserved: break;
  }
  return "reserved";
}

inline const char* exception_level_meaning(exception_level el) {
  switch (el) {
    case exception_level::el0: return "EL0 (Exception level at the target address)";
    case exception_level::el1: return "EL1 (Exception level at the target address)";
    case exception_level::el2: return "EL2 (Exception level at the target address)";
    case exception_level::el3:
      return "EL3 (Exception level at the target address; FEAT_BRBEv1p1)";
  }
  return "";
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

inline const char* record_name(record_validity v) {
  switch (v) {
    case record_validity::invalid: return "not valid in an invalid Branch record";
    case record_validity::half_target: return "not valid in a Half-target Branch record";
    case record_validity::half_source: return "not valid in a Half-source Branch record";
    case record_validity::full: break;
  }
  return "";
}

struct field_text {
  const char* key;   // JSON key (spec field name in lowercase)
  const char* name;  // spec field name
  const char* bits;
  std::uint64_t value;
  std::string shown;    // value as printed in text
  std::string meaning;  // meaning, or "not valid in ..." when VALID says so
  bool valid;
};

inline std::string cc_meaning(const brbinf& r, unsigned counter_bits) {
  const unsigned e = cc_exponent(r.cc), m = cc_mantissa(r.cc);
  const std::string em = "E=" + decimal(e) + ", M=" + hex(m, 2) + ": ";
  const cycle_count c = r.cycles(counter_bits);
  switch (c.status) {
    case cycle_status::unknown:
      return std::string("not used: CCU is 1, the count is UNKNOWN") +
             (r.cc != 0 ? " (CC should be all zeros when CCU is 1)" : "");
    case cycle_status::overflow:
      return "all ones: the cycle count exceeded the size of the cycle counter (" +
             decimal(counter_bits) + " bits)";
    case cycle_status::known:
      if (cc_resolution(r.cc) == 1) return em + decimal(c.cycles) + " cycles (exact)";
      return em + decimal(c.cycles) + " cycles (rounded toward zero to a multiple of " +
             decimal(cc_resolution(r.cc)) + ")";
    case cycle_status::out_of_range:
      if (cc_formula(r.cc).fits)
        return em + decimal(c.cycles) + " cycles, more than a " + decimal(counter_bits) +
               "-bit cycle counter holds: not a value the hardware writes";
      return em + "'1':M:Zeros(" + decimal(e - 1) + ") is " + decimal(8 + e) +
             " bits, more than a " + decimal(counter_bits) +
             "-bit cycle counter holds: not a value the hardware writes";
  }
  return "";
}

inline void fields_of(const brbinf& r, unsigned counter_bits, field_text (&f)[8]) {
  const record_validity v = r.validity();
  auto meaning = [&](record_field which, const std::string& text) {
    return is_field_valid(v, which) ? text : std::string(record_name(v));
  };
  f[0] = {"valid", "VALID", "[1:0]", r.valid, binary(r.valid, 2), validity_meaning(v), true};
  f[1] = {"type", "TYPE", "[13:8]", r.type, binary(r.type, 6),
          meaning(record_field::type, branch_type_meaning(r.branch())),
          is_field_valid(v, record_field::type)};
  f[2] = {"el", "EL", "[7:6]", r.el, binary(r.el, 2),
          meaning(record_field::el, exception_level_meaning(r.target_el())),
          is_field_valid(v, record_field::el)};
  f[3] = {"mpred", "MPRED", "[5]", r.mpred, decimal(r.mpred),
          meaning(record_field::mpred,
                  r.mpred ? "Branch was incorrectly predicted"
                          : "Branch was correctly predicted or the result of the prediction "
                            "was not captured"),
          is_field_valid(v, record_field::mpred)};
  f[4] = {"t", "T", "[16]", r.t, decimal(r.t),
          meaning(record_field::t, r.t ? "The branch or exception was executed in "
                                         "Transactional state"
                                       : "The branch or exception was not executed in "
                                         "Transactional state"),
          is_field_valid(v, record_field::t)};
  f[5] = {"lastfailed", "LASTFAILED", "[17]", r.lastfailed, decimal(r.lastfailed),
          meaning(record_field::lastfailed,
                  r.lastfailed ? "At least one transaction in a non-prohibited region has "
                                 "failed or been canceled since the previous Branch record"
                               : "No transaction in a non-prohibited region has failed or been "
                                 "canceled since the previous Branch record"),
          is_field_valid(v, record_field::lastfailed)};
  f[6] = {"ccu", "CCU", "[46]", r.ccu, decimal(r.ccu),
          meaning(record_field::ccu, r.ccu ? "The number of PE clock cycles since the last "
                                             "Branch record is UNKNOWN"
                                           : "The number of PE clock cycles since the last "
                                             "Branch record is indicated by CC"),
          is_field_valid(v, record_field::ccu)};
  f[7] = {"cc", "CC", "[45:32]", r.cc, hex(r.cc, 4),
          meaning(record_field::cc, cc_meaning(r, counter_bits)),
          is_field_valid(v, record_field::cc)};
}

inline void json_string(std::string& out, const std::string& text) {
  out += '"';
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  out += '"';
}
inline void json_key(std::string& out, const char* key) {
  if (out.back() != '{') out += ',';
  json_string(out, key);
  out += ':';
}

// The count a valid record states, if it is known.
inline maybe<std::uint64_t> stated_cycles(const brbinf& r, unsigned counter_bits) {
  if (!r.is_valid(record_field::cc)) return {};
  const cycle_count c = r.cycles(counter_bits);
  return {c.cycles, c.known()};
}
inline bool stated_overflow(const brbinf& r, unsigned counter_bits) {
  return r.is_valid(record_field::cc) && r.cycles(counter_bits).status == cycle_status::overflow;
}

inline void brbinf_text(std::string& out, const brbinf& r, unsigned counter_bits) {
  field_text f[8];
  fields_of(r, counter_bits, f);
  for (const field_text& x : f) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "  %-10s %-8s = %-10s ", x.name, x.bits, x.shown.c_str());
    out += buf;
    out += x.meaning;
    out += '\n';
  }
  out += "  cycles: ";
  const maybe<std::uint64_t> c = stated_cycles(r, counter_bits);
  if (c.known) out += decimal(c.value);
  else if (stated_overflow(r, counter_bits))
    out += "overflow (more than " + decimal(counter_bits) + " bits)";
  else out += "unknown";
  out += '\n';
}

inline void brbinf_json(std::string& out, const brbinf& r, unsigned counter_bits) {
  field_text f[8];
  fields_of(r, counter_bits, f);
  json_key(out, "register");
  json_string(out, "BRBINF_EL1");
  json_key(out, "value");
  json_string(out, hex(encode_brbinf(r).value, 16));
  for (const field_text& x : f) {
    json_key(out, x.key);
    out += decimal(x.value);
    json_key(out, (std::string(x.key) + "_meaning").c_str());
    json_string(out, x.meaning);
  }
  json_key(out, "not_valid");
  out += '[';
  bool first = true;
  for (const field_text& x : f) {
    if (x.valid) continue;
    if (!first) out += ',';
    first = false;
    json_string(out, x.key);
  }
  out += ']';
  json_key(out, "cycle_counter_bits");
  out += decimal(counter_bits);
  json_key(out, "cycles");
  const maybe<std::uint64_t> c = stated_cycles(r, counter_bits);
  out += c.known ? decimal(c.value) : std::string("null");
  json_key(out, "cycles_overflow");
  out += stated_overflow(r, counter_bits) ? "true" : "false";
  json_key(out, "res0");
  json_string(out, hex(r.res0, 16));
}

inline void res0_text(std::string& out, std::uint64_t res0) {
  out += "  RES0 bits set: ";
  out += res0 == 0 ? std::string("none") : hex(res0, 16) + " (should be zero)";
  out += '\n';
}

}  // namespace format_detail

// Text: a heading line with the register value, then one line per field.
inline std::string format_text(const brbinf& r, unsigned counter_bits) {
  using namespace format_detail;
  std::string out = "BRBINF<n>_EL1 = " + hex(encode_brbinf(r).value, 16) + "\n";
  brbinf_text(out, r, counter_bits);
  res0_text(out, r.res0);
  return out;
}

inline std::string format_json(const brbinf& r, unsigned counter_bits) {
  std::string out = "{";
  format_detail::brbinf_json(out, r, counter_bits);
  out += '}';
  return out;
}

inline std::string format_text(const branch_record& rec) {
  using namespace format_detail;
  std::string out = "BRBINF<n>_EL1 = " + hex(encode_brbinf(rec.info).value, 16) + "\n";
  brbinf_text(out, rec.info, rec.counter_bits);
  const maybe<std::uint64_t> src = rec.source_address(), tgt = rec.target_address();
  out += "  BRBSRC<n>_EL1 = " + hex(rec.source, 16) + "  " +
         (src.known ? std::string("source address") : std::string(record_name(rec.validity()))) +
         "\n";
  out += "  BRBTGT<n>_EL1 = " + hex(rec.target, 16) + "  " +
         (tgt.known ? std::string("target address") : std::string(record_name(rec.validity()))) +
         "\n";
  res0_text(out, rec.info.res0);
  return out;
}

inline std::string format_json(const branch_record& rec) {
  using namespace format_detail;
  std::string out = "{";
  brbinf_json(out, rec.info, rec.counter_bits);
  const maybe<std::uint64_t> src = rec.source_address(), tgt = rec.target_address();
  json_key(out, "brbsrc");
  if (src.known) json_string(out, hex(src.value, 16));
  else out += "null";
  json_key(out, "brbtgt");
  if (tgt.known) json_string(out, hex(tgt.value, 16));
  else out += "null";
  out += '}';
  return out;
}

}  // namespace tracecodec::brbe
