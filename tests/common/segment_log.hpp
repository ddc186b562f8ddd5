// SPDX-License-Identifier: Apache-2.0
// What a decode gave, in order (items and diagnostics), and a consumer per segment that
// records it (parallel::decode_*_by_segment): the parallel tests and the parallel fuzz target
// compare such logs with the serial decode's.
#pragma once

#include <tracecodec/ete/error.hpp>

#include <variant>
#include <vector>

namespace test {

template <class Item>
using event_log = std::vector<std::variant<Item, tracecodec::ete::diagnostic>>;

template <class Item>
struct recorder {
  event_log<Item> seen;
  void operator()(const Item& x) { seen.emplace_back(x); }
  void operator()(const tracecodec::ete::diagnostic& d) { seen.emplace_back(d); }
};

// The segments' logs one after the other: the whole decode's.
template <class Item>
event_log<Item> concatenated(const std::vector<recorder<Item>>& parts) {
  event_log<Item> all;
  for (const recorder<Item>& r : parts) all.insert(all.end(), r.seen.begin(), r.seen.end());
  return all;
}

}  // namespace test
