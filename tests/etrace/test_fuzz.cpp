// SPDX-License-Identifier: Apache-2.0
// Random and mutated input for the payload codec and the streaming decoder, built with
// AddressSanitizer and UndefinedBehaviorSanitizer (etrace-fuzz-sanitized): every chunk lives in
// its own exactly sized heap block, so any read outside the input is caught.
#include <doctest/doctest.h>

#include "stream_util.hpp"

using namespace etest;

TEST_CASE("fuzz: payload codec on random bytes of every length") {
  const et::payload_codec<> codecs[] = {et::payload_codec<>{et::presets::rv32},
                                        et::payload_codec<>{et::presets::rv64_full}};
  rng r(4242);
  for (int it = 0; it < 200000; ++it) {
    const et::payload_codec<>& c = codecs[it & 1];
    const std::size_t n = r.below(34);
    auto block = std::make_unique<std::uint8_t[]>(n == 0 ? 1 : n);
    for (std::size_t i = 0; i < n; ++i) block[i] = static_cast<std::uint8_t>(r.bits(8));
    const et::decode_result d = c.decode(block.get(), n, {.implicit_exception = r.coin()});
    if (d.error == et::error_code::ok) {
      std::uint8_t out[32];
      CHECK(c.encode(d.inst, out, sizeof out, {.implicit_exception = false}).error != et::error_code::buffer_too_small);
    }
  }
}

TEST_CASE("fuzz: stream decoder on random and mutated streams, random chunking") {
  const et::runtime_config cfgs[] = {et::runtime_config{et::presets::rv32},
                                     et::runtime_config{et::presets::rv64_full}};
  const et::encapsulation encs[] = {
      {},
      {.index_width = 20},
      {.transport = et::transport::atb},
      {.index_width = 8, .recovery = et::boundary_recovery::zero_run, .zero_run_log2 = 6},
      {.transport = et::transport::atb, .recovery = et::boundary_recovery::blocks, .block_size = 40},
  };
  rng r(777);
  for (int trial = 0; trial < 1500; ++trial) {
    const et::runtime_config& cfg = cfgs[r.below(2)];
    const et::encapsulation& enc = encs[r.below(std::size(encs))];
    if (et::validate(enc, cfg.max_payload()) != et::error_code::ok) continue;
    bytes d;
    if (r.coin()) {
      d.resize(r.below(2000));
      for (auto& x : d) x = static_cast<std::uint8_t>(r.below(3) ? r.bits(8) : 0);
    } else {
      d = make_trace(cfg, enc, r, 60).data;
      for (int m = 0; m < 8; ++m) {
        if (d.empty()) break;
        const std::size_t at = r.below(d.size());
        switch (r.below(3)) {
          case 0: d[at] = static_cast<std::uint8_t>(r.bits(8)); break;
          case 1: d.erase(d.begin() + static_cast<std::ptrdiff_t>(at)); break;
          default: d.insert(d.begin() + static_cast<std::ptrdiff_t>(at), static_cast<std::uint8_t>(r.bits(8))); break;
        }
      }
    }
    std::vector<std::size_t> cuts;
    for (std::size_t i = 0; i < d.size(); i += 1 + r.below(50)) cuts.push_back(i);
    const std::vector<event> a = run(cfg, enc, d, cuts, {.synchronized_at_start = r.coin()});
    for (const event& e : a) {
      if (e.is_packet) CHECK(e.p.offset + e.p.size <= d.size());
      else CHECK(e.d.offset < d.size());
    }
  }
}
