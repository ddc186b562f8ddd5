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

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>

#include "../arm/format_util.hpp"
#include "../../brbe/brbinf.hpp"
#include "../../brbe/cycle_count.hpp"
#include "../../brbe/record.hpp"

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

using namespace arm::format_util;

inline const char* record_name(record_validity v) {
  switch (v) {
    case record_validity::invalid: return "not valid in an invalid Branch record";
    case record_validity::half_target: return "not valid in a Half-target Branch record";
    case record_validity::half_source: return "not valid in a Half-source Branch record";
    case record_validity::full: break;
  }
  return "";
}

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

// The meanings below read a branch_record: BRBINF with the cycle counter size (and, for a
// record, BRBSRC and BRBTGT).
template <record_field F>
bool valid_in(const branch_record& rec) {
  return rec.info.is_valid(F);
}
inline std::string valid_text(const branch_record& rec) {
  return validity_meaning(rec.validity());
}
inline std::string type_text(const branch_record& rec) {
  return branch_type_meaning(rec.info.branch());
}
inline std::string el_text(const branch_record& rec) {
  return exception_level_meaning(rec.info.target_el());
}
inline std::string cc_text(const branch_record& rec) {
  return cc_meaning(rec.info, rec.counter_bits);
}

}  // namespace format_detail

// The meaning of every field of brbinf_fields, in its order; a field that VALID marks not
// valid reads "not valid in a ... Branch record" instead.
inline constexpr arm::format_util::field_meaning<branch_record> brbinf_meanings[] = {
    {"valid", format_detail::valid_text},
    {"type", format_detail::type_text, format_detail::valid_in<record_field::type>},
    {"el", format_detail::el_text, format_detail::valid_in<record_field::el>},
    {"mpred",
     "Branch was correctly predicted or the result of the prediction was not captured",
     "Branch was incorrectly predicted", format_detail::valid_in<record_field::mpred>},
    {"t", "The branch or exception was not executed in Transactional state",
     "The branch or exception was executed in Transactional state",
     format_detail::valid_in<record_field::t>},
    {"lastfailed",
     "No transaction in a non-prohibited region has failed or been canceled since the previous "
     "Branch record",
     "At least one transaction in a non-prohibited region has failed or been canceled since the "
     "previous Branch record",
     format_detail::valid_in<record_field::lastfailed>},
    {"ccu", "The number of PE clock cycles since the last Branch record is indicated by CC",
     "The number of PE clock cycles since the last Branch record is UNKNOWN",
     format_detail::valid_in<record_field::ccu>},
    {"cc", format_detail::cc_text, format_detail::valid_in<record_field::cc>},
};
static_assert(arm::format_util::keys_match(brbinf_fields, brbinf_meanings));

namespace format_detail {

// The count a valid record states, if it is known; whether it states an overflow.
inline maybe<std::uint64_t> stated_cycles(const branch_record& rec) {
  const maybe<cycle_count> c = rec.cycles();
  return {c.value.cycles, c.known && c.value.known()};
}
inline bool stated_overflow(const branch_record& rec) {
  const maybe<cycle_count> c = rec.cycles();
  return c.known && c.value.status == cycle_status::overflow;
}

// A brbinf with the cycle counter size, as the meanings read it.
inline branch_record with_counter(const brbinf& r, unsigned counter_bits) {
  return {r, 0, 0, counter_bits};
}

// BRBSRC<n>_EL1 or BRBTGT<n>_EL1: the text line shows the register as read, JSON the address
// or null when VALID marks it not valid.
template <class V>
void visit_address(const char* text_name, const char* key, const branch_record& rec,
                   const maybe<std::uint64_t>& a, std::uint64_t raw, const char* what, V& v) {
  text_only(v).line(std::string("  ") + text_name + " = " + hex(raw, 16) + "  " +
                    (a.known ? what : record_name(rec.validity())));
  if (a.known) json_only(v).field(key, hex_value{a.value, 16});
  else json_only(v).field(key, nullptr);
}

// A Branch record's fields: BRBINF with its decoded cycle count, then (`with_addresses`)
// BRBSRC and BRBTGT. The text form ends with the RES0 line, JSON has "res0" before the
// addresses.
template <class V>
void visit_fields(const branch_record& rec, bool with_addresses, V& v) {
  v.register_value("BRBINF<n>_EL1", "BRBINF_EL1", encode_brbinf(rec.info).value);
  visit_register_fields(brbinf_fields, brbinf_meanings, rec.info, rec, v,
                        record_name(rec.validity()));
  auto json = json_only(v);
  json.field("not_valid", not_valid_keys<brbinf, branch_record, std::size(brbinf_fields)>{
                              brbinf_fields, brbinf_meanings, rec});
  json.field("cycle_counter_bits", rec.counter_bits);
  const maybe<std::uint64_t> c = stated_cycles(rec);
  json.field("cycles", maybe_value{c.value, c.known, ""});
  json.field("cycles_overflow", stated_overflow(rec));
  std::string cycles = "  cycles: ";
  if (c.known) cycles += decimal(c.value);
  else if (stated_overflow(rec))
    cycles += "overflow (more than " + decimal(rec.counter_bits) + " bits)";
  else cycles += "unknown";
  text_only(v).line(cycles);
  json.res0(rec.info.res0);
  if (with_addresses) {
    visit_address("BRBSRC<n>_EL1", "brbsrc", rec, rec.source_address(), rec.source,
                  "source address", v);
    visit_address("BRBTGT<n>_EL1", "brbtgt", rec, rec.target_address(), rec.target,
                  "target address", v);
  }
  text_only(v).res0(rec.info.res0);
}

}  // namespace format_detail

// Text: a heading line with the register value, then one line per field.
inline std::string format_text(const brbinf& r, unsigned counter_bits) {
  using namespace format_detail;
  return text_form({}, [&](auto& v) { visit_fields(with_counter(r, counter_bits), false, v); });
}

inline std::string format_json(const brbinf& r, unsigned counter_bits) {
  using namespace format_detail;
  return json_form("{", [&](auto& v) { visit_fields(with_counter(r, counter_bits), false, v); });
}

inline std::string format_text(const branch_record& rec) {
  using namespace format_detail;
  return text_form({}, [&](auto& v) { visit_fields(rec, true, v); });
}

inline std::string format_json(const branch_record& rec) {
  using namespace format_detail;
  return json_form("{", [&](auto& v) { visit_fields(rec, true, v); });
}

}  // namespace tracecodec::brbe
