// SPDX-License-Identifier: Apache-2.0
// A fixed-seed generator for the register round-trip tests (same values on every run).
#pragma once

#include <cstdint>

namespace test {
struct splitmix64 {
  std::uint64_t state;
  constexpr std::uint64_t next() noexcept {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};
}  // namespace test
