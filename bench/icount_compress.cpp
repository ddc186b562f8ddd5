// SPDX-License-Identifier: Apache-2.0
// The compress stages of the instruction-count gate (icount.cpp). A translation unit of their
// own: compressor::push() is then compiled as in a program that compresses, not next to every
// decoder, whose inlined code took icount.cpp past GCC's limit on a unit's growth by inlining.
#include "icount_compress.hpp"

#include <tracecodec/ete/element/compressor.hpp>

#include <memory>

using namespace tracecodec::ete;

namespace {

template <bool Array>
std::uint64_t compress_elements(const bench::corpus& c, std::vector<std::uint8_t>& out) {
  compressor_options opt;
  opt.input = input_kind::resolved;
  auto comp = std::make_unique<compressor<>>(c.regs, opt);
  std::size_t at = 0;
  if constexpr (Array) {
    for (std::size_t i = 0; i < c.elements.size();) {
      const auto r = comp->push(c.elements.data() + i, c.elements.size() - i);
      i += r.taken;
      if (r.error == error_code::buffer_too_small)
        at += comp->drain(out.data() + at, out.size() - at);
      else if (r.error != error_code::ok)
        return ~0ull;
    }
  } else {
    for (const element& e : c.elements) {
      if (comp->push(e) == error_code::buffer_too_small) {
        at += comp->drain(out.data() + at, out.size() - at);
        if (comp->push(e) != error_code::ok) return ~0ull;
      }
    }
  }
  comp->finish(true);
  at += comp->drain(out.data() + at, out.size() - at);
  return at;
}

}  // namespace

std::uint64_t bench::compress(const corpus& c, std::vector<std::uint8_t>& out, bool array) {
  return array ? compress_elements<true>(c, out) : compress_elements<false>(c, out);
}
