// SPDX-License-Identifier: Apache-2.0
// What an element says, as far as the producer API determines it: the fields each kind
// defines. Decoded elements and the elements a test or fuzz harness writes down for producer
// calls (from D2, not from the producer) compare through it (tests/ete/test_producer.cpp,
// fuzz/fuzz_producer.cpp).
#pragma once

#include <tracecodec/ete/element/element.hpp>

#include <cstdint>

namespace test {
using namespace tracecodec::ete;

struct element_fields {
  element_kind kind{};
  bool taken = false;
  std::uint64_t address = 0;
  isa sub_isa = isa::is0;
  std::uint16_t type = 0;
  context ctx{};
  std::uint64_t timestamp = 0;
  std::uint32_t cycles = 0;
  std::uint8_t number = 0;
  bool cc = false;  // Trace Info: cycle counting on
  bool operator==(const element_fields&) const = default;
};

inline element_fields fields_of(const element& e) {
  element_fields f;
  f.kind = e.kind;
  switch (e.kind) {
    case element_kind::atom: f.taken = e.taken; break;
    case element_kind::target_address:
      f.address = e.address;
      f.sub_isa = e.sub_isa;
      break;
    case element_kind::exception:
      f.address = e.address;
      f.sub_isa = e.sub_isa;
      f.type = e.exception_type;
      break;
    case element_kind::context: f.ctx = e.ctx; break;
    case element_kind::timestamp: f.timestamp = e.timestamp; break;
    case element_kind::cycle_count: f.cycles = e.cycles; break;
    case element_kind::event: f.number = e.number; break;
    case element_kind::trace_info: f.cc = e.is(element_flag::cc_enabled); break;
    default: break;
  }
  return f;
}

// The fields of the elements producer calls stand for.
inline element_fields kind_only(element_kind k) {
  element_fields f;
  f.kind = k;
  return f;
}
inline element_fields atom_fields(bool taken) {
  element_fields f = kind_only(element_kind::atom);
  f.taken = taken;
  return f;
}
inline element_fields target_fields(std::uint64_t address, isa s) {
  element_fields f = kind_only(element_kind::target_address);
  f.address = address;
  f.sub_isa = s;
  return f;
}
inline element_fields context_fields(const context& c) {
  element_fields f = kind_only(element_kind::context);
  f.ctx = c;
  return f;
}
inline element_fields exception_fields(std::uint16_t type, std::uint64_t address, isa s) {
  element_fields f = kind_only(element_kind::exception);
  f.type = type;
  f.address = address;
  f.sub_isa = s;
  return f;
}
inline element_fields trace_info_fields(bool cycle_counting) {
  element_fields f = kind_only(element_kind::trace_info);
  f.cc = cycle_counting;
  return f;
}

}  // namespace test
