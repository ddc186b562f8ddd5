// SPDX-License-Identifier: Apache-2.0
// Round trips on random field values for seven parameter sets (address widths 32, 39 and 64;
// notime/nocontext both ways; return stack and call counter sizes zero and non-zero; jump
// target cache on and off; f0s_width_p 0, 1 and 2), for the compile-time and the run-time
// configuration; and random payload bytes: whatever decodes re-encodes to the same bytes.
#include <doctest/doctest.h>

#include "common.hpp"

using namespace etest;
using et::te_inst;
using et::te_inst_kind;

namespace {

constexpr et::parameters P1 = et::presets::rv32;
constexpr et::parameters P2 = et::presets::rv64_full;
constexpr et::parameters P3{.iaddress_width_p = 64, .time_width_p = 64, .notime_p = false,
                            .call_counter_size_p = 4, .cache_size_p = 4, .jump_target_cache = true};
constexpr et::parameters P4{.iaddress_lsb_p = 2, .context_width_p = 16, .nocontext_p = false,
                            .branch_prediction = true};
constexpr et::parameters P5{.iaddress_lsb_p = 0, .privilege_width_p = 3, .ecause_width_p = 10,
                            .return_stack_size_p = 5, .call_counter_size_p = 2,
                            .cache_size_p = 8, .f0s_width_p = 2, .branch_prediction = true,
                            .jump_target_cache = true, .encoder_mode_width = 3,
                            .ioptions_width = 7, .doptions_width = 0,
                            .implicit_exception_ioption = 6};
constexpr et::parameters P6{.iaddress_width_p = 64, .context_width_p = 64, .time_width_p = 16,
                            .notime_p = false, .nocontext_p = false,
                            .implicit_exception_ioption = et::no_ioption};
constexpr et::parameters P7{.iaddress_width_p = 39, .return_stack_size_p = 1, .cache_size_p = 5,
                            .f0s_width_p = 1, .jump_target_cache = true};

template <et::parameters P>
void round_trip(std::uint64_t seed, int iterations) {
  const et::payload_codec<et::fixed_config<P>> fixed;
  const et::payload_codec<> runtime{P};
  REQUIRE(runtime.status() == et::error_code::ok);
  const et::field_widths& w = runtime.widths();
  rng r(seed);
  int checked = 0;
  for (int it = 0; it < iterations; ++it) {
    const auto k = static_cast<te_inst_kind>(r.below(et::te_inst_kind_count));
    if (!et::is_enabled(k, w)) continue;
    const et::trace_mode m{.implicit_exception = r.coin()};
    const te_inst p = random_inst(r, w, k, m);
    et::error_code err{};
    const bytes b = encode(fixed, p, m, 0, &err);
    REQUIRE(err == et::error_code::ok);
    REQUIRE(b == encode(runtime, p, m));  // both configuration forms: the same bytes
    const et::decode_result d = decode(fixed, b, m);
    REQUIRE(d.error == et::error_code::ok);
    CHECK(d.kind == k);
    CHECK(d.inst == p);
    CHECK(decode(runtime, b, m).inst == p);
    // Shortest: the payload one byte shorter does not restore this packet.
    if (b.size() > 1) {
      const bytes shorter(b.begin(), b.end() - 1);
      const et::decode_result s = decode(fixed, shorter, m);
      CHECK((s.error != et::error_code::ok || !(s.inst == p)));
    }
    // Uncompressed (full length) decodes the same and re-encodes byte for byte.
    const std::size_t full = (fixed.full_bits(p, m) + 7) / 8;
    const bytes u = encode(fixed, p, m, full);
    CHECK(u.size() == full);
    CHECK(restores(b, u));
    CHECK(decode(fixed, u, m).inst == p);
    ++checked;
  }
  CHECK(checked > iterations / 3);
}

template <et::parameters P>
void random_bytes(std::uint64_t seed, int iterations) {
  const et::payload_codec<et::fixed_config<P>> c;
  rng r(seed);
  int decoded = 0;
  for (int it = 0; it < iterations; ++it) {
    bytes b(1 + r.below(c.max_payload()));
    for (auto& x : b) x = static_cast<std::uint8_t>(r.value(8));
    const et::trace_mode m{.implicit_exception = r.coin()};
    const et::decode_result d = decode(c, b, m);
    if (d.error != et::error_code::ok) continue;
    ++decoded;
    // Bit-exact: the decoded packet, asked for the received length, gives the same bytes,
    // and its shortest form restores them.
    CHECK(hex(encode(c, d.inst, m, b.size())) == hex(b));
    const bytes s = encode(c, d.inst, m);
    CHECK(restores(s, b));
    CHECK(d.full_bits == c.full_bits(d.inst, m));
  }
  CHECK(decoded > 0);
}

}  // namespace

TEST_CASE("round trip: random field values, seven parameter sets, fixed and run-time") {
  round_trip<P1>(1, 20000);
  round_trip<P2>(2, 20000);
  round_trip<P3>(3, 20000);
  round_trip<P4>(4, 20000);
  round_trip<P5>(5, 20000);
  round_trip<P6>(6, 20000);
  round_trip<P7>(7, 20000);
}

TEST_CASE("random payload bytes: decode is bit-exact or an error") {
  random_bytes<P1>(11, 20000);
  random_bytes<P2>(12, 20000);
  random_bytes<P3>(13, 20000);
  random_bytes<P4>(14, 20000);
  random_bytes<P5>(15, 20000);
  random_bytes<P6>(16, 20000);
  random_bytes<P7>(17, 20000);
}
