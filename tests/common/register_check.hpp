// SPDX-License-Identifier: Apache-2.0
// The checks every system register test makes (BRBINF, PMBSR, TRBSR), against a field table
// written from the register description (independent of the library's): each bit lands in the
// field that holds it or in `res0`, random values round-trip, and every code of a field is
// either one the description names (with its text) or reserved.
#pragma once

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace test {

// A field as the register description gives it: its name, low bit and width.
struct position {
  const char* name;
  unsigned lo;
  unsigned width;
};

constexpr std::uint64_t field_value(const position& p, std::uint64_t x) {
  return (x >> p.lo) & ((std::uint64_t{1} << p.width) - 1);
}

// Every bit that is in no field: the RES0 bits.
template <std::size_t N>
constexpr std::uint64_t res0_from_table(const position (&fields)[N]) {
  std::uint64_t used = 0;
  for (const position& p : fields)
    for (unsigned i = 0; i < p.width; ++i) used |= std::uint64_t{1} << (p.lo + i);
  return ~used;
}

// decode(1 << bit) for each bit: the bit shows in the field that holds it and in no other, or
// in `res0` when no field holds it. field_of(register, name) reads a field by its name.
template <std::size_t N, class Decode, class FieldOf>
void check_each_bit(const position (&fields)[N], Decode decode, FieldOf field_of) {
  const std::uint64_t res0 = res0_from_table(fields);
  for (unsigned bit = 0; bit < 64; ++bit) {
    CAPTURE(bit);
    const std::uint64_t x = std::uint64_t{1} << bit;
    const auto r = decode(x);
    for (const position& p : fields) CHECK(field_of(r, p.name) == field_value(p, x));
    CHECK(r.res0 == (x & res0));
  }
}

// `x` decodes to the fields the table gives and to its RES0 bits, and encodes back to `x`.
// Returns the decoded register for further checks.
template <std::size_t N, class Decode, class Encode, class FieldOf>
auto require_round_trip(const position (&fields)[N], std::uint64_t res0, std::uint64_t x,
                        Decode decode, Encode encode, FieldOf field_of) {
  const auto r = decode(x);
  for (const position& p : fields) REQUIRE(field_of(r, p.name) == field_value(p, x));
  REQUIRE(r.res0 == (x & res0));
  const auto e = encode(r);
  REQUIRE(e.ok());
  REQUIRE(e.value == x);
  return r;
}

// A code the register description names, the value the codec reads it as, and its text.
template <class Value>
struct code_row {
  unsigned code;
  Value value;
  const char* text;
};

// Every code of a `bits`-bit field: a code that `rows` names ({code, value, text}) reads as
// its value with its text, every other code as `reserved` with the text "reserved". of(code)
// reads a code as the codec does, meaning(value) is the formatter's text; also(code, row) is
// called for every code with its row (nullptr for a reserved code). Returns the number of
// reserved codes.
template <class Row, std::size_t N, class Of, class Meaning, class Also>
unsigned check_codes(const Row (&rows)[N], unsigned bits, Of of, Meaning meaning, Also also) {
  unsigned reserved = 0;
  for (unsigned code = 0; code < (1u << bits); ++code) {
    CAPTURE(code);
    const Row* row = nullptr;
    for (const Row& r : rows)
      if (r.code == code) row = &r;
    const auto v = of(code);
    if (row != nullptr) {
      CHECK(v == row->value);
      CHECK(std::string(meaning(v)) == row->text);
    } else {
      CHECK(v == decltype(v)::reserved);
      CHECK(std::string(meaning(v)) == "reserved");
      ++reserved;
    }
    also(code, row);
  }
  return reserved;
}
template <class Row, std::size_t N, class Of, class Meaning>
unsigned check_codes(const Row (&rows)[N], unsigned bits, Of of, Meaning meaning) {
  return check_codes(rows, bits, of, meaning, [](unsigned, const Row*) {});
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace test
