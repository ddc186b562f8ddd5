// SPDX-License-Identifier: Apache-2.0
// Zero heap allocation: encoding and stream decoding never call operator new.
#include <doctest/doctest.h>

#include <cstdlib>
#include <new>

#include "common.hpp"

namespace {
unsigned long g_allocations = 0;
}

void* operator new(std::size_t n) {
  ++g_allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

using namespace etest;

TEST_CASE("encoding and stream decoding allocate nothing") {
  const et::runtime_config cfg{et::presets::rv64_full};
  const et::encapsulation enc{.index_width = 8, .recovery = et::boundary_recovery::zero_run,
                              .zero_run_log2 = 6};
  static std::uint8_t buf[1 << 16];
  rng r(1);
  et::te_inst insts[64];
  for (auto& p : insts) p = random_inst(r, cfg.widths(), {});
  const unsigned long before = g_allocations;
  et::encoder<> e(cfg, enc);
  std::size_t n = 0;
  for (const auto& p : insts) {
    const et::encode_result res = e.encode(p, {.has_timestamp = true}, buf + n, sizeof buf - n);
    n += res.size;
  }
  et::stream_decoder<> dec(cfg, enc);
  unsigned packets = 0;
  dec.decode(buf, n, [&](const et::packet&) { ++packets; }, [&](const et::diagnostic&) {});
  et::stream_decoder<et::fixed_config<et::presets::rv64_full>> fixed(enc);
  unsigned fixed_packets = 0;
  fixed.decode(buf, n, [&](const et::packet&) { ++fixed_packets; }, [&](const et::diagnostic&) {});
  const unsigned long during = g_allocations - before;
  CHECK(during == 0);
  CHECK(packets == 64);
  CHECK(fixed_packets == 64);
}
