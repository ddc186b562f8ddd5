// SPDX-License-Identifier: Apache-2.0
// Hosted helper (std::vector): decode a buffer to committed elements, re-encode them with the
// element compressor, decode again, and compare. Used by ete-recompress and the tests.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "../../ete/element/compressor.hpp"
#include "../../ete/element/reader.hpp"

namespace tracecodec::ete {

// Elements equal in behaviour: the byte offset differs between encodings, and the Trace Info
// speculation depth is encoding state (the compressor restates its own depth).
inline bool same_behaviour(const element& a, const element& b) noexcept {
  element x = a, y = b;
  x.offset = y.offset = 0;
  if (x.kind == element_kind::trace_info) x.count = y.count = 0;
  return x == y;
}

struct resolved_trace {
  std::vector<element> elements;
  std::size_t errors = 0;  // decoding errors (the unsynchronized notice not counted)
};

inline resolved_trace resolve_elements(const registers& regs, const std::uint8_t* data,
                                       std::size_t size) {
  resolved_trace r;
  auto reader = std::make_unique<element_reader<>>(regs);
  reader->decode(data, size, [&](const element& e) { r.elements.push_back(e); },
                 [&](const diagnostic& d) {
                   if (d.code != error_code::unsynchronized) ++r.errors;
                 });
  return r;
}

struct recompressed {
  std::vector<std::uint8_t> bytes;
  resolved_trace before, after;
  error_code error = error_code::ok;
  std::size_t first_difference = 0;  // index of the first differing element
  bool elements_equal = false;
};

inline recompressed recompress(const registers& regs, const std::vector<std::uint8_t>& input) {
  recompressed r;
  r.before = resolve_elements(regs, input.data(), input.size());
  compressor_options opt;
  opt.input = input_kind::resolved;
  auto comp = std::make_unique<compressor<>>(regs, opt);
  std::uint8_t chunk[4096];
  auto drain = [&] {
    while (const std::size_t n = comp->drain(chunk, sizeof chunk))
      r.bytes.insert(r.bytes.end(), chunk, chunk + n);
  };
  auto note = [&](error_code e) {
    if (e != error_code::ok && r.error == error_code::ok) r.error = e;
  };
  for (const element& e : r.before.elements) {
    error_code c = comp->push(e);
    if (c == error_code::buffer_too_small) {
      drain();
      c = comp->push(e);
    }
    note(c);
  }
  drain();
  note(comp->finish(true));
  drain();
  r.after = resolve_elements(regs, r.bytes.data(), r.bytes.size());
  const auto& a = r.before.elements;
  const auto& b = r.after.elements;
  std::size_t i = 0;
  while (i < a.size() && i < b.size() && same_behaviour(a[i], b[i])) ++i;
  r.first_difference = i;
  r.elements_equal = r.error == error_code::ok && r.before.errors == 0 && r.after.errors == 0 &&
                     a.size() == b.size() && i == a.size();
  return r;
}

}  // namespace tracecodec::ete
