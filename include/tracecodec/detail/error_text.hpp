// SPDX-License-Identifier: Apache-2.0
// What every codec's error codes share: a name and a message per stable code, kept in one
// table indexed by the code, and the diagnostic (code + byte offset + length) its stream
// decoders report.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tracecodec::detail {

struct error_text {
  const char* name;
  const char* message;
};

inline constexpr error_text unknown_error_text{"unknown", "unknown error"};

// Row `e` of a table that lists every code in numeric order (checked by dense_error_table).
template <class Code, std::size_t N>
constexpr const error_text& error_text_of(const error_text (&table)[N], Code e) noexcept {
  const auto i = static_cast<std::size_t>(e);
  return i < N ? table[i] : unknown_error_text;
}

// True when the table has one row for each code 0..last: a code added to the enum without a
// row fails the static_assert next to the table.
template <class Code, std::size_t N>
constexpr bool dense_error_table(const error_text (&)[N], Code last) noexcept {
  return static_cast<std::size_t>(last) + 1 == N;
}

// An error (or notice) with the byte offset of what caused it and, for skipped input, how
// many bytes it covers.
template <class Code>
struct diagnostic {
  Code code = Code{};
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  constexpr bool operator==(const diagnostic&) const = default;
};

}  // namespace tracecodec::detail
