// SPDX-License-Identifier: Apache-2.0
// Printable forms of decoded packets and diagnostics: a one-line text form in the spirit of
// OpenCSD's packet lister, and a JSON Lines form whose key names are a stable public format.
// Hosted code (std::string, std::snprintf); the codec headers themselves stay freestanding.
//
// JSON keys (each object is one line without the trailing newline):
//   every packet:   "session", "offset", "bytes" (lowercase hex), "packet" (kind_name)
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
//   diagnostics:    "session", "offset", "error", "message", and "length" for unsynchronized
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "../../ete/error.hpp"
#include "../../ete/element/element.hpp"
#include "../../ete/packet/packet.hpp"

namespace tracecodec::ete {

namespace format_detail {

inline void append_u64(std::string& s, std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(v));
  s += buf;
}
inline void append_hex64(std::string& s, std::uint64_t v) {  // 0x + 16 digits
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  s += buf;
}
inline void append_hex32(std::string& s, std::uint32_t v) {  // 0x + 8 digits
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08lx", static_cast<unsigned long>(v));
  s += buf;
}
inline void append_hex(std::string& s, std::uint64_t v) {  // 0x + minimal digits
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  s += buf;
}
inline void append_hex8(std::string& s, unsigned v) {  // 0x + 2 digits
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", v & 0xffu);
  s += buf;
}

// An A-Sync's bytes are known from its size (D5.4: zeros, then 0x80), so they are never read
// from the trace: a zero run may be longer than anything a tool keeps in memory.
inline constexpr std::uint64_t async_bytes_shown = 16;
inline std::uint8_t async_byte(const packet& p, std::uint64_t i) {
  return i + 1 == p.size ? 0x80 : 0x00;
}

inline void append_atoms(std::string& s, const packet& p) {
  for (unsigned i = 0; i < p.atom_count && i < 32; ++i) s += p.atom(i) ? 'E' : 'N';
}

inline const char* isa_name(isa i) { return i == isa::is1 ? "IS1" : "IS0"; }

// Security state from NSE:NS (RME): Secure, Non-secure, Root, Realm.
inline const char* security_name(const context& c) {
  if (c.nse) return c.ns ? "Realm" : "Root";
  return c.ns ? "NS" : "S";
}

inline bool is_commit_cycle_count(packet_kind k) {
  return k == packet_kind::cycle_count_f1_0 || k == packet_kind::cycle_count_f1_0_unknown ||
         k == packet_kind::cycle_count_f2_0_small || k == packet_kind::cycle_count_f2_0_large ||
         k == packet_kind::cycle_count_f3_0;
}
inline bool is_cancel(packet_kind k) {
  return k == packet_kind::cancel_f1 || k == packet_kind::cancel_f2 || k == packet_kind::cancel_f3;
}

inline void json_string(std::string& s, const char* text) {
  s += '"';
  for (const char* c = text; *c != '\0'; ++c) {
    const unsigned char ch = static_cast<unsigned char>(*c);
    if (ch == '"' || ch == '\\') {
      s += '\\';
      s += static_cast<char>(ch);
    } else if (ch < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", ch);
      s += buf;
    } else {
      s += static_cast<char>(ch);
    }
  }
  s += '"';
}
inline void json_key(std::string& s, const char* key) {
  s += ',';
  json_string(s, key);
  s += ':';
}
inline void json_bool(std::string& s, bool b) { s += b ? "true" : "false"; }
inline void json_hex64(std::string& s, std::uint64_t v) {
  s += '"';
  append_hex64(s, v);
  s += '"';
}
inline void json_hex32(std::string& s, std::uint32_t v) {
  s += '"';
  append_hex32(s, v);
  s += '"';
}
// The "context" key of packets and elements: {"el","ns","nse","sf","cid","vmid"}.
inline void json_context(std::string& s, const context& c) {
  json_key(s, "context");
  s += "{\"el\":";
  append_u64(s, c.el);
  s += ",\"ns\":";
  json_bool(s, c.ns);
  s += ",\"nse\":";
  json_bool(s, c.nse);
  s += ",\"sf\":";
  json_bool(s, c.sf);
  s += ",\"cid\":";
  json_hex32(s, c.context_id);
  s += ",\"vmid\":";
  json_hex32(s, c.vmid);
  s += '}';
}

}  // namespace format_detail

// One text line (no trailing newline), e.g.
//   Idx:15; [0x82 0x32 0x08 0x0a 0x00 0x31 ]; address_ctx_32_is0: addr=0x00000000000a10c8 IS0; ctx=AArch64,EL1,NS
// `bytes` points at the packet's p.size raw bytes (may be null: the byte list is left empty).
inline std::string format_text(const packet& p, const std::uint8_t* bytes) {
  using namespace format_detail;
  using K = packet_kind;
  std::string s;
  s.reserve(128);
  s += "Idx:";
  append_u64(s, p.offset);
  s += "; [";
  if (p.kind == K::async) {
    const bool clip = p.size > async_bytes_shown;
    for (std::uint64_t i = 0; i < (clip ? async_bytes_shown : p.size); ++i) {
      append_hex8(s, async_byte(p, i));
      s += ' ';
    }
    if (clip) s += "... ";
  } else if (bytes != nullptr) {
    for (std::uint64_t i = 0; i < p.size; ++i) {
      append_hex8(s, bytes[i]);
      s += ' ';
    }
  }
  s += "]; ";
  s += kind_name(p.kind);

  std::string f;  // the fields, "; "-separated
  auto field = [&f]() -> std::string& {
    if (!f.empty()) f += "; ";
    return f;
  };

  if (p.kind == K::async) {
    if (p.size > async_bytes_shown) {
      append_u64(field(), p.size);
      f += " bytes";
    }
  } else if (p.kind == K::trace_info) {
    std::string& o = field();
    o += "plctl=";
    append_hex8(o, p.plctl);
    o += " info=";
    append_hex8(o, p.info);
    o += p.cc_enabled() ? " cc_enabled=1" : " cc_enabled=0";
    o += " cc_threshold=";
    append_u64(o, p.cycles);
    o += " spec=";
    append_u64(o, p.count);
  } else if (p.kind == K::timestamp) {
    std::string& o = field();
    o += "ts=";
    append_hex(o, p.timestamp);
    o += " (";
    append_u64(o, p.timestamp);
    o += ')';
    if (p.is(packet_flag::has_count)) {
      o += " cycles=";
      append_u64(o, p.cycles);
    }
  } else if (is_cycle_count(p.kind)) {
    std::string& o = field();
    o += "cycles=";
    if (p.is(packet_flag::cycles_unknown))
      o += "unknown";
    else
      append_u64(o, p.cycles);
    if (is_commit_cycle_count(p.kind)) {
      o += " commit=";
      append_u64(o, p.count);
    }
  } else if (p.kind == K::commit) {
    append_u64(field() += "commit=", p.count);
  } else if (is_cancel(p.kind)) {
    std::string& o = field();
    o += "cancel=";
    append_u64(o, p.count);
    if (p.is(packet_flag::mispredict)) o += " mispredict";
  } else if (p.kind == K::event) {
    append_hex(field() += "events=", p.events);
  } else if (p.kind == K::instrumentation) {
    std::string& o = field();
    o += "el=";
    append_u64(o, p.info);
    o += " payload=";
    append_hex64(o, p.address);
  }

  if (has_atoms(p.kind)) {
    std::string& o = field();
    o += "atoms=";
    if (p.atom_count == 0)
      o += '-';
    else
      append_atoms(o, p);
  }
  if (is_exception(p.kind)) {
    std::string& o = field();
    o += "type=";
    append_hex8(o, p.exception_type);
    o += " (";
    o += exception_type_name(p.exception_type);
    o += ") e=";
    append_u64(o, p.e);
  }
  if (has_address(p.kind)) {
    std::string& o = field();
    o += "addr=";
    append_hex64(o, p.address);
    o += ' ';
    o += isa_name(p.sub_isa);
    if (p.kind == K::address_exact || p.kind == K::exception_exact ||
        p.kind == K::source_exact || p.kind == K::q_exact) {
      o += " match=";
      append_u64(o, p.index);
    }
  }
  if (has_context(p.kind) && p.kind != K::context_same) {
    std::string& o = field();
    o += "ctx=";
    o += p.ctx.sf ? "AArch64" : "AArch32";
    o += ",EL";
    append_u64(o, p.ctx.el);
    o += ',';
    o += security_name(p.ctx);
    if (p.is(packet_flag::has_context_id)) {
      o += " cid=";
      append_hex32(o, p.ctx.context_id);
    }
    if (p.is(packet_flag::has_vmid)) {
      o += " vmid=";
      append_hex32(o, p.ctx.vmid);
    }
  }
  if (is_q(p.kind)) {
    std::string& o = field();
    o += "count=";
    if (p.is(packet_flag::count_unknown))
      o += "none";
    else
      append_u64(o, p.count);
  }

  if (!f.empty()) {
    s += ": ";
    s += f;
  }
  return s;
}

// One JSON object (no trailing newline). See the key list at the top of this header.
inline std::string format_json(const packet& p, std::size_t session, const std::uint8_t* bytes) {
  using namespace format_detail;
  using K = packet_kind;
  static constexpr char hex[] = "0123456789abcdef";
  std::string s;
  s.reserve(200);
  s += "{\"session\":";
  append_u64(s, session);
  json_key(s, "offset");
  append_u64(s, p.offset);
  json_key(s, "bytes");
  s += '"';
  if (p.kind == K::async) {
    for (std::uint64_t i = 0; i < p.size && i < async_bytes_shown; ++i)
      s += async_byte(p, i) ? "80" : "00";
  } else if (bytes != nullptr) {
    for (std::uint64_t i = 0; i < p.size; ++i) {
      s += hex[bytes[i] >> 4];
      s += hex[bytes[i] & 0xfu];
    }
  }
  s += '"';
  json_key(s, "packet");
  json_string(s, kind_name(p.kind));
  if (p.kind == K::async && p.size > async_bytes_shown) {
    json_key(s, "size");
    append_u64(s, p.size);
  }

  if (has_address(p.kind)) {
    json_key(s, "address");
    json_hex64(s, p.address);
    json_key(s, "isa");
    json_string(s, isa_name(p.sub_isa));
  }
  if (has_atoms(p.kind)) {
    json_key(s, "atoms");
    s += '"';
    append_atoms(s, p);
    s += '"';
  }
  if (has_context(p.kind) && p.kind != K::context_same) {
    json_context(s, p.ctx);
  }
  if (p.kind == K::timestamp) {
    json_key(s, "timestamp");
    append_u64(s, p.timestamp);
    if (p.is(packet_flag::has_count)) {
      json_key(s, "cycle_count");
      append_u64(s, p.cycles);
    }
  }
  if (is_cycle_count(p.kind)) {
    json_key(s, "cycle_count");
    if (p.is(packet_flag::cycles_unknown))
      s += "null";
    else
      append_u64(s, p.cycles);
    if (is_commit_cycle_count(p.kind)) {
      json_key(s, "commit");
      append_u64(s, p.count);
    }
  }
  if (p.kind == K::commit) {
    json_key(s, "commit");
    append_u64(s, p.count);
  }
  if (is_cancel(p.kind)) {
    json_key(s, "cancel");
    append_u64(s, p.count);
    json_key(s, "mispredict");
    json_bool(s, p.is(packet_flag::mispredict));
  }
  if (p.kind == K::mispredict) {
    json_key(s, "mispredict");
    s += "true";
  }
  if (is_exception(p.kind)) {
    json_key(s, "exception_type");
    append_u64(s, p.exception_type);
    json_key(s, "exception_name");
    json_string(s, exception_type_name(p.exception_type));
  }
  if (p.kind == K::event) {
    json_key(s, "events");
    append_u64(s, p.events);
  }
  if (is_q(p.kind)) {
    json_key(s, "q_count");
    if (p.is(packet_flag::count_unknown))
      s += "null";
    else
      append_u64(s, p.count);
  }
  if (p.kind == K::trace_info) {
    json_key(s, "info");
    append_u64(s, p.info);
    json_key(s, "cc_enabled");
    json_bool(s, p.cc_enabled());
    json_key(s, "cc_threshold");
    append_u64(s, p.cycles);
    json_key(s, "spec");
    append_u64(s, p.count);
  }
  if (p.kind == K::instrumentation) {
    json_key(s, "el");
    append_u64(s, p.info);
    json_key(s, "payload");
    json_hex64(s, p.address);
  }
  s += '}';
  return s;
}

// One text line for a diagnostic, e.g. "Idx:0; error unsynchronized: bytes skipped before an
// A-Sync (5 bytes)".
inline std::string format_text(const diagnostic& d) {
  using namespace format_detail;
  std::string s;
  s += "Idx:";
  append_u64(s, d.offset);
  s += "; error ";
  s += error_name(d.code);
  s += ": ";
  s += error_message(d.code);
  if (d.code == error_code::unsynchronized) {
    s += " (";
    append_u64(s, d.length);
    s += d.length == 1 ? " byte)" : " bytes)";
  }
  return s;
}

inline std::string format_json(const diagnostic& d, std::size_t session) {
  using namespace format_detail;
  std::string s;
  s += "{\"session\":";
  append_u64(s, session);
  json_key(s, "offset");
  append_u64(s, d.offset);
  json_key(s, "error");
  json_string(s, error_name(d.code));
  json_key(s, "message");
  json_string(s, error_message(d.code));
  if (d.code == error_code::unsynchronized) {
    json_key(s, "length");
    append_u64(s, d.length);
  }
  s += '}';
  return s;
}


// ---- elements (ete-dump --elements) --------------------------------------------------------
// JSON keys are named like the packet keys: "element" (kind), "offset" (of the packet that
// produced it), and where the element has them "address", "isa", "taken" ("E"/"N"; an atom
// run's letters, oldest first),
// "context", "timestamp", "cycle_count", "commit", "cancel", "exception_type",
// "exception_name", "event", "q_count", "spec", "cc_threshold", "el", "payload".
inline std::string format_json(const element& e, std::size_t session) {
  using namespace format_detail;
  using K = element_kind;
  std::string o = "{\"session\":";
  append_u64(o, session);
  o += ",\"offset\":";
  append_u64(o, e.offset);
  json_key(o, "element");
  json_string(o, element_name(e.kind));
  auto address = [&] {
    json_key(o, "address");
    if (e.is(element_flag::unknown_address)) {
      o += "null";
      return;
    }
    json_hex64(o, e.address);
    json_key(o, "isa");
    json_string(o, e.sub_isa == isa::is1 ? "IS1" : "IS0");
  };
  switch (e.kind) {
    case K::atom: {  // a run (count >= 1) as its E/N letters, oldest first: "EEN"
      json_key(o, "taken");
      char letters[33];
      const unsigned n = atom_count(e);
      for (unsigned i = 0; i < n && i < 32; ++i) letters[i] = atom_taken(e, i) ? 'E' : 'N';
      letters[n < 32 ? n : 32] = 0;
      json_string(o, letters);
      break;
    }
    case K::exception:
      address();
      json_key(o, "exception_type");
      append_u64(o, e.exception_type);
      json_key(o, "exception_name");
      json_string(o, exception_type_name(e.exception_type));
      break;
    case K::target_address:
    case K::source_address: address(); break;
    case K::context: {
      json_context(o, e.ctx);
      break;
    }
    case K::q:
      json_key(o, "q_count");
      if (e.is(element_flag::count_unknown))
        o += "null";
      else
        append_u64(o, e.count);
      break;
    case K::timestamp:
      json_key(o, "timestamp");
      append_u64(o, e.timestamp);
      if (e.is(element_flag::has_cycles)) {
        json_key(o, "cycle_count");
        append_u64(o, e.cycles);
      }
      break;
    case K::cycle_count:
      json_key(o, "cycle_count");
      if (e.is(element_flag::cycles_unknown))
        o += "null";
      else
        append_u64(o, e.cycles);
      break;
    case K::commit:
      json_key(o, "commit");
      append_u64(o, e.count);
      break;
    case K::cancel:
      json_key(o, "cancel");
      append_u64(o, e.count);
      break;
    case K::event:
      json_key(o, "event");
      append_u64(o, e.number);
      break;
    case K::trace_info:
      json_key(o, "spec");
      append_u64(o, e.count);
      json_key(o, "cc_enabled");
      json_bool(o, e.is(element_flag::cc_enabled));
      json_key(o, "cc_threshold");
      append_u64(o, e.cycles);
      json_key(o, "in_transaction");
      json_bool(o, e.is(element_flag::in_transaction));
      break;
    case K::instrumentation:
      json_key(o, "el");
      append_u64(o, e.number);
      json_key(o, "payload");
      json_hex64(o, e.address);
      break;
    default: break;
  }
  o += '}';
  return o;
}

// Text: "Idx:<offset>; <element>: fields", the fields as in the JSON form.
inline std::string format_text(const element& e) {
  std::string j = format_json(e, 0);
  std::string o = "Idx:";
  format_detail::append_u64(o, e.offset);
  o += "; ";
  o += element_name(e.kind);
  // Reuse the JSON fields after "element": a compact key=value rendering.
  const std::size_t at = j.find(",", j.find("\"element\""));
  if (at != std::string::npos) {
    std::string rest = j.substr(at + 1, j.size() - at - 2);
    std::string kv;
    for (char c : rest) {
      if (c == '"') continue;
      kv += c == ':' ? '=' : c == ',' ? ' ' : c;
    }
    o += ": " + kv;
  }
  return o;
}

}  // namespace tracecodec::ete
