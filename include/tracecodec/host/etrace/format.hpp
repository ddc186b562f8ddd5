// SPDX-License-Identifier: Apache-2.0
// Printable forms of decoded te_inst packets and diagnostics: one text line, and one JSON
// object per packet whose keys are the spec's field names (a stable format, see
// docs/etrace.md). Hosted code (std::string, std::snprintf); the codec headers stay
// freestanding. Each record has one field visitor (visit_fields) that writes both forms
// through the sinks of format_fields.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "../../etrace/encapsulation.hpp"
#include "../../etrace/error.hpp"
#include "../../etrace/layout.hpp"
#include "../../etrace/stream_decoder.hpp"
#include "../../etrace/te_inst.hpp"
#include "../format_fields.hpp"

namespace tracecodec::etrace {

constexpr const char* kind_name(te_inst_kind k) noexcept {
  switch (k) {
    case te_inst_kind::sync_start: return "sync_start";
    case te_inst_kind::sync_trap: return "sync_trap";
    case te_inst_kind::sync_context: return "sync_context";
    case te_inst_kind::sync_support: return "sync_support";
    case te_inst_kind::addr_only: return "addr_only";
    case te_inst_kind::diff_delta: return "diff_delta";
    case te_inst_kind::diff_delta_full_map: return "diff_delta_full_map";
    case te_inst_kind::branch_count: return "branch_count";
    case te_inst_kind::branch_count_address: return "branch_count_address";
    case te_inst_kind::jump_target_cache: return "jump_target_cache";
    case te_inst_kind::jump_target_cache_no_map: return "jump_target_cache_no_map";
  }
  return "unknown";
}

constexpr const char* format_name(format f) noexcept {
  switch (f) {
    case format::opt_ext: return "opt-ext";
    case format::diff_delta: return "diff-delta";
    case format::addr_only: return "addr-only";
    case format::sync: return "sync";
  }
  return "reserved";
}

constexpr const char* subformat_name(const te_inst& p) noexcept {
  if (p.format == format::sync) {
    constexpr const char* names[] = {"start", "trap", "context", "support"};
    return p.subformat < 4 ? names[p.subformat] : "reserved";
  }
  if (p.format == format::opt_ext)
    return p.subformat == 0 ? "correctly predicted branches" : p.subformat == 1 ? "jump target cache" : "reserved";
  return "";
}

constexpr const char* qual_status_name(qual_status q) noexcept {
  switch (q) {
    case qual_status::no_change: return "no_change";
    case qual_status::ended_rep: return "ended_rep";
    case qual_status::trace_lost: return "trace_lost";
    case qual_status::ended_ntr: return "ended_ntr";
  }
  return "reserved";
}

constexpr const char* branch_fmt_name(branch_fmt f) noexcept {
  switch (f) {
    case branch_fmt::no_addr: return "no-addr";
    case branch_fmt::addr: return "addr";
    case branch_fmt::addr_fail: return "addr-fail";
  }
  return "reserved";
}

namespace format_detail {

using namespace field_format;

inline void append_bytes(std::string& s, const std::uint8_t* p, std::size_t n, bool spaced) {
  static constexpr char digits[] = "0123456789abcdef";
  for (std::size_t i = 0; i < n; ++i) {
    if (spaced && i != 0) s += ' ';
    s += digits[p[i] >> 4];
    s += digits[p[i] & 0xfu];
  }
}

// Calls fn(field) for every field the packet carries (present, at least one bit wide), in
// transmission order, skipping format and subformat.
template <class Fn>
void for_each_field(const te_inst& p, te_inst_kind k, const field_widths& w, trace_mode m, Fn&& fn) {
  const layout& l = layout_of(k);
  for (unsigned i = 0; i < l.size; ++i) {
    const layout_entry& e = l.fields[i];
    if (e.f == field::format || e.f == field::sync_subformat || e.f == field::opt_ext_subformat)
      continue;
    if (!is_present(e, p, m) || width_of(e.f, w, p) == 0) continue;
    fn(e.f);
  }
}

// The value printed: the field's value, except the byte address for address.
inline std::uint64_t value_of(const te_inst& p, field f) {
  return f == field::address ? p.address : field_value(p, f, field_widths{});
}

// The te_inst fields under their spec names. Addresses and identifiers are hex in both forms
// (a JSON string), the option and branch-map bit fields hex in the text form only; qual_status
// and branch_fmt are named in the text form.
template <class V>
void visit_fields(const te_inst& p, te_inst_kind k, const field_widths& w, trace_mode m, V& v) {
  for_each_field(p, k, w, m, [&](field f) {
    const char* name = info_of(f).name;
    switch (info_of(f).coding) {
      case coding::differential: v.field(name, yes_no{field_value(p, f, field_widths{}) != 0}); return;
      case coding::irdepth: v.field(name, maybe_value{p.irdepth, p.irreport != 0, "-"}); return;
      case coding::plain: break;
    }
    const std::uint64_t value = value_of(p, f);
    if (f == field::qual_status) v.field(name, named_value{value, qual_status_name(p.qual_status)});
    else if (f == field::branch_fmt) v.field(name, named_value{value, branch_fmt_name(p.branch_fmt)});
    else if (f == field::address || f == field::tval || f == field::context) v.field(name, hex_value{value, 1});
    else if (f == field::branch_map || f == field::ioptions || f == field::doptions) v.field(name, code_value{value, 1});
    else v.field(name, value);
  });
}

// The encapsulation header: text "flow=0 index=0x3 ts=0x1234 len=5" (flow and index for the
// Siemens transport, index when it has index bits, ts when present), JSON the "header" object
// {"length", "flow" and "index" (Siemens), "timestamp" (null when absent)}.
template <class V>
void visit_fields(const header& h, const encapsulation& e, V& v) {
  auto json = json_only(v);
  auto text = text_only(v);
  json.open("header");
  json.field("length", h.length);
  if (e.transport == transport::siemens) {
    v.field("flow", h.flow);
    if (e.index_width) text.field("index", hex_value{h.index, 1});
    json.field("index", h.index);
  }
  if (h.has_timestamp) text.field("ts", hex_value{h.timestamp, 1});
  json.field("timestamp", maybe_value{h.timestamp, h.has_timestamp, ""});
  text.field("len", h.length);
  json.close();
}

// A diagnostic: text "ERROR <name> (<code>): <message>; <n> bytes discarded".
template <class V>
void visit_fields(const diagnostic& d, V& v) {
  text_only(v).field("", "ERROR");
  v.field("error", "", error_name(d.code));
  v.field("code", "", in_parens{static_cast<unsigned>(d.code)});
  v.separator(": ");
  v.field("message", "", error_message(d.code));
  v.group();
  v.field("length", "", counted{d.length, " bytes discarded", " bytes discarded"});
}

// "format 3 (sync) subformat 1 (trap)": the te_inst's format and subformat, named.
inline std::string format_head(const te_inst& p) {
  std::string s = "format ";
  append_decimal(s, static_cast<unsigned>(p.format));
  s += " (";
  s += format_name(p.format);
  s += ")";
  if (p.format == format::sync || p.format == format::opt_ext) {
    s += " subformat ";
    append_decimal(s, p.subformat);
    s += " (";
    s += subformat_name(p);
    s += ")";
  }
  return s + ":";
}

// "kind", "format", "subformat" (null for formats 1 and 2), then the fields.
inline void append_json_fields(std::string& s, const te_inst& p, te_inst_kind k,
                               const field_widths& w, trace_mode m) {
  json_sink v(s);
  v.field("kind", kind_name(k));
  v.field("format", static_cast<unsigned>(p.format));
  if (p.format == format::sync || p.format == format::opt_ext) v.field("subformat", p.subformat);
  else v.field("subformat", nullptr);
  visit_fields(p, k, w, m, v);
}

inline std::string text_head(std::uint64_t offset) {
  std::string s = "Idx:";
  append_decimal(s, offset);
  s += "; ";
  return s;
}

}  // namespace format_detail

// "format 3 (sync) subformat 1 (trap): branch=1 privilege=3 ..."
inline std::string format_text(const te_inst& p, te_inst_kind k, const field_widths& w,
                               trace_mode m = {}) {
  using namespace format_detail;
  return text_form(format_head(p), [&](auto& v) { visit_fields(p, k, w, m, v); }, " ");
}

// The te_inst members of a JSON object (no braces): "kind", "format", "subformat" (null for
// formats 1 and 2), then every field of the layout (present and at least one bit wide) under
// its spec name.
inline std::string format_json_fields(const te_inst& p, te_inst_kind k, const field_widths& w,
                                      trace_mode m = {}) {
  std::string s;
  format_detail::append_json_fields(s, p, k, w, m);
  return s;
}

// "Idx:12; [73 00 00 00 e0]; flow=0 ts=0x1234; format 3 (sync) ..."
inline std::string format_text(const packet& pk, const field_widths& w, const encapsulation& e) {
  using namespace format_detail;
  std::string s = text_head(pk.offset);
  s += '[';
  append_bytes(s, pk.bytes, pk.size, true);
  s += "]; ";
  s = text_form(std::move(s), [&](auto& v) { visit_fields(pk.header, e, v); }, "");
  s += "; ";
  s += format_text(pk.inst, pk.kind, w, pk.mode);
  return s;
}

// {"offset":12,"size":6,"bytes":"0573000000e0","header":{...},"kind":...,"format":3,...}
inline std::string format_json(const packet& pk, const field_widths& w, const encapsulation& e) {
  using namespace format_detail;
  std::string s = "{";
  json_sink v(s);
  v.field("offset", pk.offset);
  v.field("size", pk.size);
  s += ",\"bytes\":\"";
  append_bytes(s, pk.bytes, pk.size, false);
  s += '"';
  visit_fields(pk.header, e, v);
  append_json_fields(s, pk.inst, pk.kind, w, pk.mode);
  s += '}';
  return s;
}

inline std::string format_text(const diagnostic& d) {
  using namespace format_detail;
  return text_form(text_head(d.offset), [&d](auto& v) { visit_fields(d, v); }, "");
}

inline std::string format_json(const diagnostic& d) {
  using namespace format_detail;
  std::string s = "{";
  json_sink(s).field("offset", d.offset);
  return json_form(std::move(s), [&d](auto& v) { visit_fields(d, v); });
}

}  // namespace tracecodec::etrace
