// SPDX-License-Identifier: Apache-2.0
// Printable forms of decoded packets and diagnostics: a one-line text form in the spirit of
// OpenCSD's packet lister, and a JSON Lines form whose key names are a stable public format.
// Hosted code (std::string); the codec headers themselves stay freestanding.
//
// JSON keys (each object is one line without the trailing newline):
//   every packet:   "session", "id" (trace ID; only for a source of a CoreSight formatted
//                   buffer), "offset" (null when not known), "bytes" (lowercase hex),
//                   "packet" (kind_name)
//   async:          "size" when longer than 16 bytes ("bytes" then holds its first 16)
//   address kinds:  "address" ("0x" + 16 hex digits), "isa" ("IS0"/"IS1")
//   atom kinds, mispredict, cancel_f2/f3: "atoms" (E/N, oldest first)
//   context-carrying kinds except context_same: "context" {"el","ns","nse","sf","cid","vmid"}
//   timestamp:      "timestamp" (decimal), "cycle_count" when the packet has a COUNT field
//   cycle counts:   "cycle_count" (integer or null when UNKNOWN), "commit" for the _0 forms
//   commit:         "commit";  cancel kinds: "cancel", "mispredict";  mispredict: "mispredict"
//   exceptions:     "exception_type", "exception_name"
//   event:          "events";  Q kinds: "q_count" (integer or null when not counted)
//   trace_info:     "info", "cc_enabled", "cc_threshold", "spec"
//   instrumentation: "el", "payload"
//   diagnostics:    "session", "id", "offset", "error", "message", and "length" for unsynchronized
//
// Each record type has one field visitor (visit_fields) that writes both forms through the
// sinks of format_fields.hpp; where the text form (after OpenCSD's lister) shows a field
// differently or elsewhere, the visitor names it for one form with text_only/json_only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "../../ete/error.hpp"
#include "../../ete/element/element.hpp"
#include "../../ete/packet/packet.hpp"
#include "../format_fields.hpp"

namespace tracecodec::ete {

// The name of a packet kind (its identifier in description.hpp): what the text and JSON forms
// print. Here, not beside the rows, so that a codec image carries no strings.
constexpr const char* kind_name(packet_kind k) noexcept {
  constexpr const char* names[packet_kind_count] = {
#define TRACECODEC_ETE_KIND_NAME(id, ...) #id,
      TRACECODEC_ETE_PACKET_KINDS(TRACECODEC_ETE_KIND_NAME)
#undef TRACECODEC_ETE_KIND_NAME
  };
  return names[static_cast<unsigned>(k)];
}

namespace format_detail {

using namespace field_format;

// An A-Sync's bytes are known from its size (D5.4: zeros, then 0x80), so they are never read
// from the trace: a zero run may be longer than anything a tool keeps in memory.
inline constexpr std::uint64_t async_bytes_shown = 16;
inline std::uint8_t async_byte(const packet& p, std::uint64_t i) {
  return i + 1 == p.size ? 0x80 : 0x00;
}

// Calls fn(byte) for the bytes a packet's line shows: an A-Sync's first 16, or the p.size
// bytes at `bytes` (none when it is null).
template <class Fn>
void for_each_byte(const packet& p, const std::uint8_t* bytes, Fn&& fn) {
  if (p.kind == packet_kind::async) {
    for (std::uint64_t i = 0; i < p.size && i < async_bytes_shown; ++i) fn(async_byte(p, i));
  } else if (bytes != nullptr) {
    for (std::uint64_t i = 0; i < p.size; ++i) fn(bytes[i]);
  }
}

// Up to 32 atoms as their E/N letters, oldest first.
struct atom_letters {
  char text[33];
  template <class Taken>
  atom_letters(unsigned n, Taken&& taken) {
    const unsigned shown = n < 32 ? n : 32;
    for (unsigned i = 0; i < shown; ++i) text[i] = taken(i) ? 'E' : 'N';
    text[shown] = '\0';
  }
};

inline const char* isa_name(isa i) { return i == isa::is1 ? "IS1" : "IS0"; }

// Security state from NSE:NS (RME): Secure, Non-secure, Root, Realm.
inline const char* security_name(const context& c) {
  if (c.nse) return c.ns ? "Realm" : "Root";
  return c.ns ? "NS" : "S";
}

// Field choices from the packet descriptions (ete/packet/description.hpp).
inline bool is_commit_cycle_count(packet_kind k) {  // COMMOPT 0 forms carry a commit count
  return describe(k).legal == legal_when::cycles_commit;
}
inline bool is_cancel(packet_kind k) {  // Cancel formats 1-3: the speculation packets with atoms
  return describe(k).legal == legal_when::speculation && k != packet_kind::commit;
}
// The exact-match forms, which name an address history entry (QE).
inline bool has_match_index(packet_kind k) {
  return address_form_of(k).family != address_family::none &&
         address_form_of(k).width == address_width::exact;
}

// The "context" object of packets and elements: {"el","ns","nse","sf","cid","vmid"}.
template <class V>
void visit_context(const context& c, V&& v) {
  v.open("context");
  v.field("el", c.el);
  v.field("ns", c.ns);
  v.field("nse", c.nse);
  v.field("sf", c.sf);
  v.field("cid", hex_value{c.context_id, 8});
  v.field("vmid", hex_value{c.vmid, 8});
  v.close();
}

// A packet's fields. No kind has both atoms and an address, nor a kind-specific field and an
// address, so one order serves both forms except in two places: the text form puts a Cancel's
// atoms after its count and an exception's type before its address, and JSON the other way
// round. Those two are visited once per form.
template <class V>
void visit_fields(const packet& p, V& v) {
  using K = packet_kind;
  auto atoms = [&p](auto&& s) {
    if (!has_atoms(p.kind)) return;
    s.group();
    if (p.atom_count == 0) {
      json_only(s).field("atoms", "");
      text_only(s).field("atoms", "-");
      return;
    }
    s.field("atoms", atom_letters(p.atom_count, [&p](unsigned i) { return p.atom(i); }).text);
  };
  auto exception = [&p](auto&& s) {
    if (!is_exception(p.kind)) return;
    s.group();
    s.field("exception_type", "type", code_value{p.exception_type, 2});
    s.field("exception_name", "", in_parens{exception_type_name(p.exception_type)});
    text_only(s).field("e", p.exception_elements);
  };

  if (p.kind == K::async && p.size > async_bytes_shown)
    v.field("size", "", counted{p.size, " bytes", " bytes"});
  atoms(json_only(v));
  v.group();
  if (p.kind == K::trace_info) {
    text_only(v).field("plctl", code_value{p.plctl, 2});
    v.field("info", code_value{p.info, 2});
    v.field("cc_enabled", bit_value{p.cc_enabled()});
    v.field("cc_threshold", p.cycles);
    v.field("spec", p.count);
  } else if (p.kind == K::timestamp) {
    v.field("timestamp", "ts", code_value{p.timestamp, 1});
    text_only(v).field("", in_parens{p.timestamp});
    if (p.is(packet_flag::has_count)) v.field("cycle_count", "cycles", p.cycles);
  } else if (is_cycle_count(p.kind)) {
    v.field("cycle_count", "cycles",
            maybe_value{p.cycles, !p.is(packet_flag::cycles_unknown), "unknown"});
    if (is_commit_cycle_count(p.kind)) v.field("commit", p.count);
  } else if (p.kind == K::commit) {
    v.field("commit", p.count);
  } else if (is_cancel(p.kind)) {
    v.field("cancel", p.count);
    json_only(v).field("mispredict", p.is(packet_flag::mispredict));
    if (p.is(packet_flag::mispredict)) text_only(v).field("", "mispredict");
  } else if (p.kind == K::mispredict) {
    json_only(v).field("mispredict", true);
  } else if (p.kind == K::event) {
    v.field("events", code_value{p.events, 1});
  } else if (p.kind == K::instrumentation) {
    v.field("el", p.info);
    v.field("payload", hex_value{p.address, 16});
  }
  atoms(text_only(v));
  exception(text_only(v));
  if (has_address(p.kind)) {
    v.group();
    v.field("address", "addr", hex_value{p.address, 16});
    v.field("isa", "", isa_name(p.sub_isa));
    if (has_match_index(p.kind)) text_only(v).field("match", p.index);
  }
  if (has_context(p.kind) && p.kind != K::context_same) {
    visit_context(p.ctx, json_only(v));
    auto text = text_only(v);
    text.group();
    std::string summary = p.ctx.sf ? "AArch64,EL" : "AArch32,EL";
    append_decimal(summary, p.ctx.el);
    summary += ',';
    summary += security_name(p.ctx);
    text.field("ctx", summary);
    if (p.is(packet_flag::has_context_id)) text.field("cid", hex_value{p.ctx.context_id, 8});
    if (p.is(packet_flag::has_vmid)) text.field("vmid", hex_value{p.ctx.vmid, 8});
  }
  exception(json_only(v));
  if (is_q(p.kind)) {
    v.group();
    v.field("q_count", "count", maybe_value{p.count, !p.is(packet_flag::count_unknown), "none"});
  }
}

// A diagnostic's fields: text "error <name>: <message> (<n> bytes)".
template <class V>
void visit_fields(const diagnostic& d, V& v) {
  text_only(v).field("", "error");
  v.field("error", "", error_name(d.code));
  v.separator(": ");
  v.field("message", "", error_message(d.code));
  if (d.code == error_code::unsynchronized)
    v.field("length", "", in_parens{counted{d.length, " byte", " bytes"}});
}

// An element's fields; the text form names them as JSON does ("key=value", strings bare).
template <class V>
void visit_fields(const element& e, V& v) {
  using K = element_kind;
  auto address = [&] {
    if (e.is(element_flag::unknown_address)) {
      v.field("address", nullptr);
      return;
    }
    v.field("address", hex_value{e.address, 16});
    v.field("isa", isa_name(e.sub_isa));
  };
  switch (e.kind) {
    case K::atom:  // a run (count >= 1) as its E/N letters, oldest first: "EEN"
      v.field("taken", atom_letters(atom_count(e), [&e](unsigned i) { return atom_taken(e, i); })
                           .text);
      break;
    case K::exception:
      address();
      v.field("exception_type", e.exception_type);
      v.field("exception_name", exception_type_name(e.exception_type));
      break;
    case K::target_address:
    case K::source_address: address(); break;
    case K::context: visit_context(e.ctx, v); break;
    case K::q:
      v.field("q_count", maybe_value{e.count, !e.is(element_flag::count_unknown), "null"});
      break;
    case K::timestamp:
      v.field("timestamp", e.timestamp);
      if (e.is(element_flag::has_cycles)) v.field("cycle_count", e.cycles);
      break;
    case K::cycle_count:
      v.field("cycle_count", maybe_value{e.cycles, !e.is(element_flag::cycles_unknown), "null"});
      break;
    case K::commit: v.field("commit", e.count); break;
    case K::cancel: v.field("cancel", e.count); break;
    case K::event: v.field("event", e.number); break;
    case K::trace_info:
      v.field("spec", e.count);
      v.field("cc_enabled", e.is(element_flag::cc_enabled));
      v.field("cc_threshold", e.cycles);
      v.field("in_transaction", e.is(element_flag::in_transaction));
      break;
    case K::instrumentation:
      v.field("el", e.number);
      v.field("payload", hex_value{e.address, 16});
      break;
    default: break;
  }
}

// "Idx:<offset>; " and {"session":<session>,"offset":<offset>, which every record starts with;
// with a trace ID (a source of a CoreSight formatted buffer, trace_id >= 0) "Idx:<offset>;
// ID:<hex>; " as OpenCSD prints it, and {"session":..,"id":<decimal>,"offset":... An offset
// that is not known (coresight::unknown_offset, all ones) is "?" and null.
inline constexpr std::uint64_t offset_not_known = ~std::uint64_t{0};
inline std::string text_head(std::uint64_t offset, int trace_id = -1) {
  std::string s = "Idx:";
  if (offset == offset_not_known) s += '?';
  else append_decimal(s, offset);
  s += "; ";
  if (trace_id >= 0) {  // hex without 0x, as OpenCSD prints it
    s += "ID:";
    s += "0123456789abcdef"[(trace_id >> 4) & 7];
    s += "0123456789abcdef"[trace_id & 15];
    if (s[s.size() - 2] == '0') s.erase(s.size() - 2, 1);
    s += "; ";
  }
  return s;
}
inline std::string json_head(std::size_t session, std::uint64_t offset, int trace_id = -1) {
  std::string s = "{\"session\":";
  append_decimal(s, session);
  if (trace_id >= 0) {
    s += ",\"id\":";
    append_decimal(s, static_cast<std::uint64_t>(trace_id));
  }
  s += ",\"offset\":";
  if (offset == offset_not_known) s += "null";
  else append_decimal(s, offset);
  return s;
}

}  // namespace format_detail

// One text line (no trailing newline), e.g.
//   Idx:15; [0x82 0x32 0x08 0x0a 0x00 0x31 ]; address_ctx_32_is0: addr=0x00000000000a10c8 IS0; ctx=AArch64,EL1,NS
// `bytes` points at the packet's p.size raw bytes (may be null: the byte list is left empty).
inline std::string format_text(const packet& p, const std::uint8_t* bytes, int trace_id = -1) {
  using namespace format_detail;
  std::string s = text_head(p.offset, trace_id);
  s.reserve(128);
  s += '[';
  for_each_byte(p, bytes, [&s](std::uint8_t b) {
    append_hex(s, b, 2);
    s += ' ';
  });
  if (p.kind == packet_kind::async && p.size > async_bytes_shown) s += "... ";
  s += "]; ";
  s += kind_name(p.kind);
  return text_form(std::move(s), [&p](auto& v) { visit_fields(p, v); });
}

// One JSON object (no trailing newline). See the key list at the top of this header.
inline std::string format_json(const packet& p, std::size_t session, const std::uint8_t* bytes,
                               int trace_id = -1) {
  using namespace format_detail;
  std::string s = json_head(session, p.offset, trace_id);
  s.reserve(200);
  s += ",\"bytes\":\"";
  for_each_byte(p, bytes, [&s](std::uint8_t b) {
    s += "0123456789abcdef"[b >> 4];
    s += "0123456789abcdef"[b & 0xfu];
  });
  s += "\",\"packet\":";
  json_value(s, kind_name(p.kind));
  return json_form(std::move(s), [&p](auto& v) { visit_fields(p, v); });
}

// One text line for a diagnostic, e.g. "Idx:0; error unsynchronized: bytes skipped before an
// A-Sync (5 bytes)".
inline std::string format_text(const diagnostic& d, int trace_id = -1) {
  using namespace format_detail;
  return text_form(text_head(d.offset, trace_id), [&d](auto& v) { visit_fields(d, v); }, "");
}

inline std::string format_json(const diagnostic& d, std::size_t session, int trace_id = -1) {
  using namespace format_detail;
  return json_form(json_head(session, d.offset, trace_id), [&d](auto& v) { visit_fields(d, v); });
}

// ---- elements (ete-dump --elements) --------------------------------------------------------
// JSON keys are named like the packet keys: "element" (kind), "offset" (of the packet that
// produced it), and where the element has them "address", "isa", "taken" ("E"/"N"; an atom
// run's letters, oldest first),
// "context", "timestamp", "cycle_count", "commit", "cancel", "exception_type",
// "exception_name", "event", "q_count", "spec", "cc_threshold", "el", "payload".
inline std::string format_json(const element& e, std::size_t session, int trace_id = -1) {
  using namespace format_detail;
  std::string s = json_head(session, e.offset, trace_id);
  s += ",\"element\":";
  json_value(s, element_name(e.kind));
  return json_form(std::move(s), [&e](auto& v) { visit_fields(e, v); });
}

// Text: "Idx:<offset>; <element>: key=value ...", the keys and values of the JSON form
// (strings without quotes, the context as "context={el=1 ns=true ...}").
inline std::string format_text(const element& e, int trace_id = -1) {
  using namespace format_detail;
  return text_form(text_head(e.offset, trace_id) + element_name(e.kind),
                   [&e](auto& v) { visit_fields(e, v); });
}

}  // namespace tracecodec::ete
