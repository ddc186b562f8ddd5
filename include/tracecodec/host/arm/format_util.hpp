// SPDX-License-Identifier: Apache-2.0
// The text and JSON building blocks of every system register formatter (brbe/format.hpp,
// spe/format.hpp, trbe/format.hpp), driven by a register's field table (register_field.hpp)
// and a parallel table of field meanings. Hosted code (std::string, std::snprintf).
//
// Text: one line per field, "  NAME       [hi:lo]  = value      meaning", the value in
// decimal for a one-bit field, in binary up to 8 bits and in hex (a digit per 4 bits) above.
// JSON: per field the raw integer under the field's key and the meaning under "<key>_meaning".
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "../../arm/register_field.hpp"

namespace tracecodec::arm::format_util {

// "0x" and at least `digits` lowercase hex digits (as printf's "0x%0*llx").
inline std::string hex(std::uint64_t v, int digits) {
  std::string s;  // least significant digit first
  do {
    s += "0123456789abcdef"[v & 0xfu];
    v >>= 4;
  } while (v != 0);
  while (static_cast<int>(s.size()) < digits) s += '0';
  return "0x" + std::string(s.rbegin(), s.rend());
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

// "[hi:lo]", or "[hi]" for a one-bit field.
inline std::string bits_text(const field_position& f) {
  return "[" + decimal(f.hi) + (f.hi == f.lo ? "" : ":" + decimal(f.lo)) + "]";
}

// A field's value as the text form shows it.
inline std::string value_text(const field_position& f, std::uint64_t v) {
  if (f.width() == 1) return decimal(v);
  if (f.width() <= 8) return binary(v, f.width());
  return hex(v, static_cast<int>((f.width() + 3) / 4));
}

// The first line of a text form: "NAME = 0x" + 16 hex digits.
inline std::string register_line(const char* name, std::uint64_t value) {
  return std::string(name) + " = " + hex(value, 16) + "\n";
}

// One text line: "  NAME  [bits]  = value  meaning".
inline void field_line(std::string& out, const field_position& f, std::uint64_t v,
                       const std::string& meaning) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "  %-10s %-8s = %-10s ", f.name, bits_text(f).c_str(),
                value_text(f, v).c_str());
  out += buf;
  out += meaning;
  out += '\n';
}

inline void res0_text(std::string& out, std::uint64_t res0) {
  out += "  RES0 bits set: ";
  out += res0 == 0 ? std::string("none") : hex(res0, 16) + " (should be zero)";
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
inline void json_key(std::string& out, const std::string& key) {
  if (out.back() != '{') out += ',';
  json_string(out, key);
  out += ':';
}
inline void json_int(std::string& out, const std::string& key, std::uint64_t v) {
  json_key(out, key);
  out += decimal(v);
}
inline void json_text(std::string& out, const std::string& key, const std::string& v) {
  json_key(out, key);
  json_string(out, v);
}
inline void json_null(std::string& out, const std::string& key) {
  json_key(out, key);
  out += "null";
}
inline void json_bool(std::string& out, const std::string& key, bool v) {
  json_key(out, key);
  out += v ? "true" : "false";
}
// `"key":value,"key_meaning":"meaning"`.
inline void json_field(std::string& out, const field_position& f, std::uint64_t v,
                       const std::string& meaning) {
  json_int(out, f.key, v);
  json_text(out, std::string(f.key) + "_meaning", meaning);
}

// What a field's value means, for the entry of a register's field table at the same index
// (`key` repeats that entry's key; keys_match checks it at compile time). A one-bit field
// names the meaning of 0 and of 1; any other field has a function of the formatted object
// `Ctx` (the register struct, or a struct that holds it with its context). `valid`, when
// given, says whether the field holds a value at all (BRBINF's VALID rules).
template <class Ctx>
struct field_meaning {
  const char* key;
  const char* if_clear = nullptr;
  const char* if_set = nullptr;
  std::string (*describe)(const Ctx&) = nullptr;
  bool (*valid)(const Ctx&) = nullptr;  // null: always valid

  constexpr field_meaning(const char* k, const char* clear, const char* set,
                          bool (*valid_fn)(const Ctx&) = nullptr) noexcept
      : key(k), if_clear(clear), if_set(set), valid(valid_fn) {}
  constexpr field_meaning(const char* k, std::string (*describe_fn)(const Ctx&),
                          bool (*valid_fn)(const Ctx&) = nullptr) noexcept
      : key(k), describe(describe_fn), valid(valid_fn) {}

  bool is_valid(const Ctx& c) const { return valid == nullptr || valid(c); }
  // The meaning of `value` in `c`, or `not_valid` when `c` marks the field not valid.
  std::string text(const Ctx& c, std::uint64_t value, const char* not_valid = "") const {
    if (!is_valid(c)) return not_valid;
    return describe ? describe(c) : std::string(value ? if_set : if_clear);
  }
};

constexpr bool same_text(const char* a, const char* b) noexcept {
  while (*a != '\0' && *a == *b) ++a, ++b;
  return *a == *b;
}

// Whether the meaning table describes the field table's fields, in its order.
template <class Reg, class Ctx, std::size_t N>
constexpr bool keys_match(const register_field<Reg> (&fields)[N],
                          const field_meaning<Ctx> (&meanings)[N]) noexcept {
  for (std::size_t i = 0; i < N; ++i)
    if (!same_text(fields[i].key, meanings[i].key)) return false;
  return true;
}

// Writes every field of `r` in table order with `write` (field_line for text, json_field for
// JSON); a field that `ctx` marks not valid has the meaning `not_valid`.
template <class Reg, class Ctx, std::size_t N>
void write_fields(std::string& out,
                  void (*write)(std::string&, const field_position&, std::uint64_t,
                                const std::string&),
                  const register_field<Reg> (&fields)[N], const field_meaning<Ctx> (&meanings)[N],
                  const Reg& r, const Ctx& ctx, const char* not_valid = "") {
  for (std::size_t i = 0; i < N; ++i) {
    const std::uint64_t v = fields[i].get(r);
    write(out, fields[i], v, meanings[i].text(ctx, v, not_valid));
  }
}

// A JSON array of the keys of the fields that `ctx` marks not valid, in table order.
template <class Reg, class Ctx, std::size_t N>
void not_valid_json(std::string& out, const register_field<Reg> (&fields)[N],
                    const field_meaning<Ctx> (&meanings)[N], const Ctx& ctx) {
  out += '[';
  bool first = true;
  for (std::size_t i = 0; i < N; ++i) {
    if (meanings[i].is_valid(ctx)) continue;
    if (!first) out += ',';
    first = false;
    json_string(out, fields[i].key);
  }
  out += ']';
}

}  // namespace tracecodec::arm::format_util
