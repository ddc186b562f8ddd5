// SPDX-License-Identifier: Apache-2.0
// The field tables of the system register formatters (brbe/format.hpp, spe/format.hpp,
// trbe/format.hpp): what each field of a register's field table (register_field.hpp) means,
// and the visitor that hands the fields to a text or JSON sink (../format_fields.hpp). Hosted
// code (std::string).
//
// Text: one line per field, "  NAME       [hi:lo]  = value      meaning", the value in
// decimal for a one-bit field, in binary up to 8 bits and in hex (a digit per 4 bits) above.
// JSON: per field the raw integer under the field's key and the meaning under "<key>_meaning".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "../format_fields.hpp"
#include "../../arm/register_field.hpp"

namespace tracecodec::arm::format_util {

using namespace field_format;

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

// Hands every field of `r` to `v` in table order with its meaning; a field that `ctx` marks
// not valid has the meaning `not_valid`.
template <class Reg, class Ctx, std::size_t N, class V>
void visit_register_fields(const register_field<Reg> (&fields)[N],
                           const field_meaning<Ctx> (&meanings)[N], const Reg& r, const Ctx& ctx,
                           V& v, const char* not_valid = "") {
  for (std::size_t i = 0; i < N; ++i) {
    const std::uint64_t value = fields[i].get(r);
    v.field(fields[i], value, meanings[i].text(ctx, value, not_valid));
  }
}

// The keys of the fields that `ctx` marks not valid, in table order: a JSON array (the JSON
// form only; BRBINF's "not_valid").
template <class Reg, class Ctx, std::size_t N>
struct not_valid_keys {
  const register_field<Reg> (&fields)[N];
  const field_meaning<Ctx> (&meanings)[N];
  const Ctx& ctx;
};
template <class Reg, class Ctx, std::size_t N>
void json_value(std::string& out, const not_valid_keys<Reg, Ctx, N>& k) {
  out += '[';
  bool first = true;
  for (std::size_t i = 0; i < N; ++i) {
    if (k.meanings[i].is_valid(k.ctx)) continue;
    if (!first) out += ',';
    first = false;
    field_format::json_value(out, k.fields[i].key);
  }
  out += ']';
}

}  // namespace tracecodec::arm::format_util
