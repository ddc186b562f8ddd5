// SPDX-License-Identifier: Apache-2.0
// Target 3: the same input split at fuzzer-chosen points decodes identically (packets and
// diagnostics, in order) to the whole-buffer decode(), and so does feeding it byte by byte;
// next() never reports without consuming input beyond a small bound.
// Input: [configuration prefix][k][k x 2-byte cut positions][trace bytes], k <= 32.
#include <algorithm>

#include "common.hpp"

using namespace fuzz;

namespace {

template <class Tag>
void run(const Tag& t, const std::uint8_t* d, std::size_t n, std::vector<std::size_t> cuts) {
  const packet_run whole = decode_packets(t, d, n);
  for (std::size_t& c : cuts) c %= n + 1;
  std::sort(cuts.begin(), cuts.end());
  const packet_run chunked = decode_chunks(t, d, n, cuts);
  FUZZ_CHECK(chunked.events == whole.events);
  FUZZ_CHECK(chunked.stats.packets == whole.stats.packets);
  FUZZ_CHECK(chunked.stats.errors == whole.stats.errors);
  FUZZ_CHECK(chunked.stats.bytes_skipped == whole.stats.bytes_skipped);
  if (n <= 4096) {
    std::vector<std::size_t> every;
    for (std::size_t i = 1; i < n; ++i) every.push_back(i);
    FUZZ_CHECK(decode_chunks(t, d, n, every).events == whole.events);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const config_choice c = choose_config(data, size);
  if (c.consumed == 0 || size <= c.consumed) return 0;
  std::size_t at = c.consumed;
  const unsigned k = data[at++] % 33u;
  if (size - at < 2u * k) return 0;
  std::vector<std::size_t> cuts;
  for (unsigned i = 0; i < k; ++i, at += 2) cuts.push_back(data[at] | (std::size_t{data[at + 1]} << 8));
  visit(c, [&](const auto& tag) { run(tag, data + at, size - at, cuts); });
  return 0;
}
