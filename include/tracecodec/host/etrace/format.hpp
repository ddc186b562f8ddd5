// SPDX-License-Identifier: Apache-2.0
// Printable forms of decoded te_inst packets and diagnostics: one text line, and one JSON
// object per packet whose keys are the spec's field names (a stable format, see
// docs/etrace.md). Hosted code (std::string, std::snprintf); the codec headers stay
// freestanding.
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

inline void append_u64(std::string& s, std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(v));
  s += buf;
}
inline void append_hex(std::string& s, std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  s += buf;
}
inline void append_bytes(std::string& s, const std::uint8_t* p, std::size_t n, bool spaced) {
  char buf[4];
  for (std::size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, spaced && i ? " %02x" : "%02x", p[i]);
    s += buf;
  }
}

// Fields shown in hex (addresses and identifiers).
inline bool is_hex_field(field f) {
  return f == field::address || f == field::tval || f == field::context ||
         f == field::branch_map || f == field::ioptions || f == field::doptions;
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

}  // namespace format_detail

// "format 3 (sync) subformat 1 (trap): branch=1 privilege=3 ..."
inline std::string format_text(const te_inst& p, te_inst_kind k, const field_widths& w,
                               trace_mode m = {}) {
  using namespace format_detail;
  std::string s = "format ";
  append_u64(s, static_cast<unsigned>(p.format));
  s += " (";
  s += format_name(p.format);
  s += ")";
  if (p.format == format::sync || p.format == format::opt_ext) {
    s += " subformat ";
    append_u64(s, p.subformat);
    s += " (";
    s += subformat_name(p);
    s += ")";
  }
  s += ":";
  for_each_field(p, k, w, m, [&](field f) {
    s += ' ';
    s += info_of(f).name;
    s += '=';
    switch (info_of(f).coding) {
      case coding::differential: s += field_value(p, f, field_widths{}) ? "yes" : "no"; return;
      case coding::irdepth:
        if (p.irreport) append_u64(s, p.irdepth);
        else s += "-";
        return;
      case coding::plain: break;
    }
    if (f == field::qual_status) s += qual_status_name(p.qual_status);
    else if (f == field::branch_fmt) s += branch_fmt_name(p.branch_fmt);
    else if (is_hex_field(f)) append_hex(s, value_of(p, f));
    else append_u64(s, value_of(p, f));
  });
  return s;
}

// The te_inst members of a JSON object (no braces): "kind", "format", "subformat" (null for
// formats 1 and 2), then every field of the layout (present and at least one bit wide) under
// its spec name.
inline std::string format_json_fields(const te_inst& p, te_inst_kind k, const field_widths& w,
                                      trace_mode m = {}) {
  using namespace format_detail;
  std::string s = "\"kind\":\"";
  s += kind_name(k);
  s += "\",\"format\":";
  append_u64(s, static_cast<unsigned>(p.format));
  s += ",\"subformat\":";
  if (p.format == format::sync || p.format == format::opt_ext) append_u64(s, p.subformat);
  else s += "null";
  for_each_field(p, k, w, m, [&](field f) {
    s += ",\"";
    s += info_of(f).name;
    s += "\":";
    switch (info_of(f).coding) {
      case coding::differential: s += field_value(p, f, field_widths{}) ? "true" : "false"; return;
      case coding::irdepth:
        if (p.irreport) append_u64(s, p.irdepth);
        else s += "null";
        return;
      case coding::plain: break;
    }
    if (f == field::address || f == field::tval || f == field::context) {
      s += '"';
      append_hex(s, value_of(p, f));
      s += '"';
    } else {
      append_u64(s, value_of(p, f));
    }
  });
  return s;
}

// "Idx:12; [73 00 00 00 e0]; flow=0 ts=0x1234; format 3 (sync) ..."
inline std::string format_text(const packet& pk, const field_widths& w, const encapsulation& e) {
  using namespace format_detail;
  std::string s = "Idx:";
  append_u64(s, pk.offset);
  s += "; [";
  append_bytes(s, pk.bytes, pk.size, true);
  s += "]; ";
  if (e.transport == transport::siemens) {
    s += "flow=";
    append_u64(s, pk.header.flow);
    if (e.index_width) {
      s += " index=";
      append_hex(s, pk.header.index);
    }
    s += ' ';
  }
  if (pk.header.has_timestamp) {
    s += "ts=";
    append_hex(s, pk.header.timestamp);
    s += ' ';
  }
  s += "len=";
  append_u64(s, pk.header.length);
  s += "; ";
  s += format_text(pk.inst, pk.kind, w, pk.mode);
  return s;
}

// {"offset":12,"size":6,"bytes":"0573000000e0","header":{...},"kind":...,"format":3,...}
inline std::string format_json(const packet& pk, const field_widths& w, const encapsulation& e) {
  using namespace format_detail;
  std::string s = "{\"offset\":";
  append_u64(s, pk.offset);
  s += ",\"size\":";
  append_u64(s, pk.size);
  s += ",\"bytes\":\"";
  append_bytes(s, pk.bytes, pk.size, false);
  s += "\",\"header\":{\"length\":";
  append_u64(s, pk.header.length);
  if (e.transport == transport::siemens) {
    s += ",\"flow\":";
    append_u64(s, pk.header.flow);
    s += ",\"index\":";
    append_u64(s, pk.header.index);
  }
  s += ",\"timestamp\":";
  if (pk.header.has_timestamp) append_u64(s, pk.header.timestamp);
  else s += "null";
  s += "},";
  s += format_json_fields(pk.inst, pk.kind, w, pk.mode);
  s += '}';
  return s;
}

inline std::string format_text(const diagnostic& d) {
  using namespace format_detail;
  std::string s = "Idx:";
  append_u64(s, d.offset);
  s += "; ERROR ";
  s += error_name(d.code);
  s += " (";
  append_u64(s, static_cast<unsigned>(d.code));
  s += "): ";
  s += error_message(d.code);
  s += "; ";
  append_u64(s, d.length);
  s += " bytes discarded";
  return s;
}

inline std::string format_json(const diagnostic& d) {
  using namespace format_detail;
  std::string s = "{\"offset\":";
  append_u64(s, d.offset);
  s += ",\"error\":\"";
  s += error_name(d.code);
  s += "\",\"code\":";
  append_u64(s, static_cast<unsigned>(d.code));
  s += ",\"message\":\"";
  s += error_message(d.code);
  s += "\",\"length\":";
  append_u64(s, d.length);
  s += '}';
  return s;
}

}  // namespace tracecodec::etrace
