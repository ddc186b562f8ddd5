// SPDX-License-Identifier: Apache-2.0
// Parameter validation: every reason, in the run-time form (the compile-time form is checked
// by the compile-fail test), and operations on an invalid configuration.
#include <doctest/doctest.h>

#include "common.hpp"

using namespace etest;

TEST_CASE("invalid parameter sets are rejected with their reason") {
  using E = et::parameter_error;
  const auto reason = [](et::parameters p) { return et::runtime_config(p).reason(); };
  CHECK(reason({}) == E::none);
  CHECK(reason({.iaddress_width_p = 0}) == E::iaddress_width);
  CHECK(reason({.iaddress_width_p = 65}) == E::iaddress_width);
  CHECK(reason({.iaddress_width_p = 8, .iaddress_lsb_p = 8}) == E::iaddress_lsb);
  CHECK(reason({.privilege_width_p = 9}) == E::privilege_width);
  CHECK(reason({.ecause_width_p = 65}) == E::ecause_width);
  CHECK(reason({.context_width_p = 65, .nocontext_p = false}) == E::context_width);
  CHECK(reason({.context_width_p = 65, .nocontext_p = true}) == E::none);  // no context field
  CHECK(reason({.time_width_p = 65, .notime_p = false}) == E::time_width);
  CHECK(reason({.return_stack_size_p = 20, .call_counter_size_p = 12}) == E::irdepth_width);
  CHECK(reason({.return_stack_size_p = 20, .call_counter_size_p = 11}) == E::none);  // 32 bits
  CHECK(reason({.cache_size_p = 33}) == E::cache_size);
  CHECK(reason({.f0s_width_p = 9}) == E::f0s_width);
  CHECK(reason({.f0s_width_p = 0, .branch_prediction = true, .jump_target_cache = true}) == E::f0s_width);
  CHECK(reason({.encoder_mode_width = 33}) == E::support_widths);
  CHECK(reason({.ioptions_width = 1, .implicit_exception_ioption = 1}) == E::implicit_exception_ioption);
  CHECK(reason({.ioptions_width = 0, .implicit_exception_ioption = et::no_ioption}) == E::none);
  // 64-bit trap with 64-bit time and context: 2+2+1+2+64+64+6+1+1+63+64 = 270 bits > 248.
  CHECK(reason({.iaddress_width_p = 64, .context_width_p = 64, .time_width_p = 64,
                .notime_p = false, .nocontext_p = false}) == E::payload_too_large);
  CHECK(reason({.iaddress_width_p = 64, .context_width_p = 42, .time_width_p = 64,
                .notime_p = false, .nocontext_p = false}) == E::none);  // 248 bits: 31 bytes
}

TEST_CASE("an invalid run-time configuration makes every operation report invalid_config") {
  const et::runtime_config bad{et::parameters{.iaddress_width_p = 0}};
  CHECK(bad.status() == et::error_code::invalid_config);
  const et::payload_codec<> c{bad};
  const std::uint8_t b[1] = {0x02};
  CHECK(c.decode(b, 1).error == et::error_code::invalid_config);
  std::uint8_t out[8];
  CHECK(c.encode(et::te_inst{}, out, sizeof out).error == et::error_code::invalid_config);
  et::stream_decoder<> dec(bad);
  dec.feed(b, 1);
  dec.finish();
  et::packet p{};
  CHECK(dec.next(p) == et::decode_status::error);
  CHECK(dec.last_diagnostic().code == et::error_code::invalid_config);
  CHECK(dec.next(p) == et::decode_status::end);
  et::encoder<> e(bad);
  CHECK(e.encode(et::te_inst{}, {}, out, sizeof out).error == et::error_code::invalid_config);
}

TEST_CASE("field widths follow the parameter tables") {
  const et::field_widths w = et::field_widths::from(et::presets::rv64_full);
  CHECK(w.address == 63);          // iaddress_width_p - iaddress_lsb_p
  CHECK(w.tval == 64);             // iaddress_width_p
  CHECK(w.irdepth == 3 + 1 + 0);   // return_stack_size_p + 1 + call_counter_size_p
  CHECK(w.time == 40);
  CHECK(w.context == 32);
  CHECK(et::field_widths::from(et::parameters{.call_counter_size_p = 5}).irdepth == 5);
  CHECK(et::field_widths::from(et::parameters{.time_width_p = 40}).time == 0);  // notime_p
}
