// SPDX-License-Identifier: Apache-2.0
// The two field sinks every hosted formatter writes through (ETE packets, elements and
// diagnostics, E-Trace packets and diagnostics, BRBINF/Branch records, PMBSR_EL1, TRBSR_EL1).
// Each record type has one visitor, `visit_fields(record, sink)`, that names the record's
// fields in order; text_sink and json_sink turn those calls into the text and the JSON form,
// so that the two forms cannot drift apart. Hosted code (std::string, std::snprintf).
//
// A visitor calls:
//   v.field(key, value)          the field in both forms, "key=value" and "key":value
//   v.field(key, label, value)   the text form names it `label` ("" shows the value alone)
//   v.open(key) ... v.close()    a nested object: "key={...}" and "key":{...}
//   v.group()                    text: the next field starts a "; "-separated group
//   v.separator(s)               text: the next field follows `s` instead of " "
//   v.register_value, v.field(field_position, ...), v.res0, v.line: the line-per-field form
//                                of a system register (text) and its JSON keys
// Where the two forms differ in what they show or where, the visitor names the field for one
// form only through json_only(v) or text_only(v). A value's type says how each form writes it
// (the value types below, integers, bool, strings, nullptr).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>

#include "../arm/register_field.hpp"

namespace tracecodec::field_format {

// ---- numbers -------------------------------------------------------------------------------

inline void append_decimal(std::string& s, std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(v));
  s += buf;
}
// "0x" and at least `digits` lowercase hex digits (as printf's "0x%0*llx").
inline void append_hex(std::string& s, std::uint64_t v, int digits) {
  int n = 1;
  while (n < 16 && (v >> (4 * n)) != 0) ++n;
  if (n < digits) n = digits;
  s += "0x";
  for (int i = n; i-- > 0;) s += i < 16 ? "0123456789abcdef"[(v >> (4 * i)) & 0xfu] : '0';
}
inline std::string decimal(std::uint64_t v) {
  std::string s;
  append_decimal(s, v);
  return s;
}
inline std::string hex(std::uint64_t v, int digits) {
  std::string s;
  append_hex(s, v, digits);
  return s;
}
inline std::string binary(std::uint64_t v, unsigned width) {
  std::string s = "0b";
  for (unsigned i = width; i-- > 0;) s += ((v >> i) & 1u) ? '1' : '0';
  return s;
}

inline void append_json_string(std::string& out, const char* text, std::size_t n) {
  out += '"';
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

// ---- values: how the text and the JSON form write them ---------------------------------------

// An address or identifier: "0x" + at least `digits` hex digits in both forms (a JSON string).
struct hex_value {
  std::uint64_t value;
  int digits;
};
// A code the text form shows in hex ("0x" + at least `digits` digits), JSON as an integer.
struct code_value {
  std::uint64_t value;
  int digits;
};
// A one-bit flag: text 1/0, JSON true/false.
struct bit_value {
  bool value;
};
// A flag: text yes/no, JSON true/false.
struct yes_no {
  bool value;
};
// A number that may not be known: text `unknown` (a word), JSON null.
struct maybe_value {
  std::uint64_t value;
  bool known;
  const char* unknown;
};
// An enumerated value: text its name, JSON its number.
struct named_value {
  std::uint64_t value;
  const char* name;
};
// A count with its unit: text "<n><unit>" (`one` when n is 1), JSON the number.
struct counted {
  std::uint64_t value;
  const char* one;
  const char* many;
};
// Text: the value in parentheses; JSON: the value.
template <class T>
struct in_parens {
  T value;
};
template <class T>
in_parens(T) -> in_parens<T>;

template <class T>
inline constexpr bool is_number = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <class T, std::enable_if_t<is_number<T>, int> = 0>
void text_value(std::string& s, T v) {
  append_decimal(s, static_cast<std::uint64_t>(v));
}
inline void text_value(std::string& s, bool v) { s += v ? "true" : "false"; }
inline void text_value(std::string& s, const char* v) { s += v; }
inline void text_value(std::string& s, const std::string& v) { s += v; }
inline void text_value(std::string& s, std::nullptr_t) { s += "null"; }
inline void text_value(std::string& s, const hex_value& v) { append_hex(s, v.value, v.digits); }
inline void text_value(std::string& s, const code_value& v) { append_hex(s, v.value, v.digits); }
inline void text_value(std::string& s, bit_value v) { s += v.value ? '1' : '0'; }
inline void text_value(std::string& s, yes_no v) { s += v.value ? "yes" : "no"; }
inline void text_value(std::string& s, const maybe_value& v) {
  if (v.known) append_decimal(s, v.value);
  else s += v.unknown;
}
inline void text_value(std::string& s, const named_value& v) { s += v.name; }
inline void text_value(std::string& s, const counted& v) {
  append_decimal(s, v.value);
  s += v.value == 1 ? v.one : v.many;
}
template <class T>
void text_value(std::string& s, const in_parens<T>& v) {
  s += '(';
  text_value(s, v.value);
  s += ')';
}

template <class T, std::enable_if_t<is_number<T>, int> = 0>
void json_value(std::string& s, T v) {
  append_decimal(s, static_cast<std::uint64_t>(v));
}
inline void json_value(std::string& s, bool v) { s += v ? "true" : "false"; }
inline void json_value(std::string& s, const char* v) {
  append_json_string(s, v, std::char_traits<char>::length(v));
}
inline void json_value(std::string& s, const std::string& v) {
  append_json_string(s, v.data(), v.size());
}
inline void json_value(std::string& s, std::nullptr_t) { s += "null"; }
inline void json_value(std::string& s, const hex_value& v) {
  s += '"';
  append_hex(s, v.value, v.digits);
  s += '"';
}
inline void json_value(std::string& s, const code_value& v) { append_decimal(s, v.value); }
inline void json_value(std::string& s, bit_value v) { json_value(s, v.value); }
inline void json_value(std::string& s, yes_no v) { json_value(s, v.value); }
inline void json_value(std::string& s, const maybe_value& v) {
  if (v.known) append_decimal(s, v.value);
  else s += "null";
}
inline void json_value(std::string& s, const named_value& v) { append_decimal(s, v.value); }
inline void json_value(std::string& s, const counted& v) { append_decimal(s, v.value); }
template <class T>
void json_value(std::string& s, const in_parens<T>& v) {
  json_value(s, v.value);
}

// ---- register lines (text form of a system register) ----------------------------------------

// "[hi:lo]", or "[hi]" for a one-bit field.
inline std::string bits_text(const arm::field_position& f) {
  return "[" + decimal(f.hi) + (f.hi == f.lo ? "" : ":" + decimal(f.lo)) + "]";
}
// A register field's value as the text form shows it: decimal for one bit, binary up to 8
// bits, hex (a digit per 4 bits) above.
inline std::string value_text(const arm::field_position& f, std::uint64_t v) {
  if (f.width() == 1) return decimal(v);
  if (f.width() <= 8) return binary(v, f.width());
  return hex(v, static_cast<int>((f.width() + 3) / 4));
}

// ---- the sinks -----------------------------------------------------------------------------

// The text form. Fields of a trace record go on one line: "label=value", " " between the
// fields of a group, "; " between groups, `lead` before the first field (nothing at all when
// the record has no field). A system register takes a line per field.
class text_sink {
 public:
  static constexpr bool is_json = false;

  explicit text_sink(std::string& out, const char* lead = ": ") noexcept : out_(out), sep_(lead) {}

  template <class T>
  void field(const char* key, const T& value) {
    field(key, key, value);
  }
  template <class T>
  void field(const char*, const char* label, const T& value) {
    item(label);
    text_value(out_, value);
  }
  void open(const char* key) {
    item(key);
    out_ += '{';
    sep_ = "";
  }
  void close() {
    out_ += '}';
    sep_ = " ";
  }
  void group() { separator("; "); }
  void separator(const char* s) {
    if (started_) sep_ = s;
  }

  // "NAME = 0x" + 16 hex digits.
  void register_value(const char* text_name, const char*, std::uint64_t value) {
    out_ += text_name;
    out_ += " = ";
    append_hex(out_, value, 16);
    out_ += '\n';
  }
  // "  NAME       [hi:lo]  = value      meaning".
  void field(const arm::field_position& f, std::uint64_t v, const std::string& meaning) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "  %-10s %-8s = %-10s ", f.name, bits_text(f).c_str(),
                  value_text(f, v).c_str());
    out_ += buf;
    out_ += meaning;
    out_ += '\n';
  }
  void res0(std::uint64_t bits) {
    out_ += "  RES0 bits set: ";
    if (bits == 0) {
      out_ += "none";
    } else {
      append_hex(out_, bits, 16);
      out_ += " (should be zero)";
    }
    out_ += '\n';
  }
  void line(const std::string& text) {
    out_ += text;
    out_ += '\n';
  }

 private:
  void item(const char* label) {
    out_ += sep_;
    sep_ = " ";
    started_ = true;
    if (*label != '\0') {
      out_ += label;
      out_ += '=';
    }
  }

  std::string& out_;
  const char* sep_;
  bool started_ = false;
};

// The JSON form: the members of the object `out` is writing (the caller writes its braces),
// a comma before every member but the first of an object.
class json_sink {
 public:
  static constexpr bool is_json = true;

  explicit json_sink(std::string& out) noexcept : out_(out) {}

  template <class T>
  void field(const char* key, const T& value) {
    name(key);
    json_value(out_, value);
  }
  template <class T>
  void field(const char* key, const char*, const T& value) {
    field(key, value);
  }
  void open(const char* key) {
    name(key);
    out_ += '{';
  }
  void close() { out_ += '}'; }
  void group() {}
  void separator(const char*) {}

  void register_value(const char*, const char* json_name, std::uint64_t value) {
    field("register", json_name);
    field("value", hex_value{value, 16});
  }
  // `"key":value,"key_meaning":"meaning"`.
  void field(const arm::field_position& f, std::uint64_t v, const std::string& meaning) {
    field(f.key, v);
    name(f.key, "_meaning");
    json_value(out_, meaning);
  }
  void res0(std::uint64_t bits) { field("res0", hex_value{bits, 16}); }

 private:
  void name(const char* key, const char* suffix = "") {
    if (!out_.empty() && out_.back() != '{') out_ += ',';
    out_ += '"';
    out_ += key;
    out_ += suffix;
    out_ += "\":";
  }

  std::string& out_;
};

// The sink `V` for one form only: the calls reach V when Show, and vanish otherwise.
template <class V, bool Show>
struct only_in {
  static constexpr bool is_json = V::is_json;
  V& sink;

  template <class... A>
  void field(const A&... a) {
    if constexpr (Show) sink.field(a...);
  }
  void open(const char* key) {
    if constexpr (Show) sink.open(key);
  }
  void close() {
    if constexpr (Show) sink.close();
  }
  void group() {
    if constexpr (Show) sink.group();
  }
  void separator(const char* s) {
    if constexpr (Show) sink.separator(s);
  }
  void res0(std::uint64_t bits) {
    if constexpr (Show) sink.res0(bits);
  }
  void line(const std::string& text) {
    if constexpr (Show) sink.line(text);
  }
};
template <class V>
only_in<V, V::is_json> json_only(V& v) noexcept {
  return {v};
}
template <class V>
only_in<V, !V::is_json> text_only(V& v) noexcept {
  return {v};
}

// The text and the JSON form of one record: `head` holds what precedes the fields (offset,
// bytes, kind; for JSON the opening brace and those members), `visit` writes the fields.
template <class Visit>
std::string text_form(std::string head, Visit&& visit, const char* lead = ": ") {
  text_sink v(head, lead);
  visit(v);
  return head;
}
template <class Visit>
std::string json_form(std::string head, Visit&& visit) {
  json_sink v(head);
  visit(v);
  head += '}';
  return head;
}

}  // namespace tracecodec::field_format
