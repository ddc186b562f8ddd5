// SPDX-License-Identifier: Apache-2.0
// The encoder parameters that shape te_inst payloads (the spec's *_p names), and the field
// widths they give. Validation and the compile-time / run-time forms are in config.hpp.
#pragma once

#include <cstdint>

namespace tracecodec::etrace {

// implicit_exception_ioption value: the ioptions field carries no implicit-exception bit.
inline constexpr std::uint8_t no_ioption = 0xff;

struct parameters {
  std::uint8_t iaddress_width_p = 32;
  std::uint8_t iaddress_lsb_p = 1;
  std::uint8_t privilege_width_p = 2;
  std::uint8_t ecause_width_p = 6;
  std::uint8_t context_width_p = 0;
  std::uint8_t time_width_p = 0;
  bool notime_p = true;     // no time field in format 3
  bool nocontext_p = true;  // no context field in format 3
  std::uint8_t return_stack_size_p = 0;
  std::uint8_t call_counter_size_p = 0;
  std::uint8_t cache_size_p = 0;  // jump target cache index bits
  std::uint8_t f0s_width_p = 0;   // format 0 subformat bits (0: inferred, one format enabled)
  // Optional formats enabled: format 0 subformat 0 (correctly predicted branch count) and
  // subformat 1 (jump target cache index).
  bool branch_prediction = false;
  bool jump_target_cache = false;
  // Support packet (format 3 subformat 3) fields of implementation-defined width: encoder_mode
  // (N), ioptions (N), doptions (M). Defaults: the reference flow's encoder (1, 5, 4).
  std::uint8_t encoder_mode_width = 1;
  std::uint8_t ioptions_width = 5;
  std::uint8_t doptions_width = 4;
  // ioptions bit that enables implicit exception mode (reference flow: bit 1); no_ioption if
  // the encoder has none. Stream decoders and encoders follow it from support packets.
  std::uint8_t implicit_exception_ioption = 1;

  constexpr bool operator==(const parameters&) const = default;
};

// Field widths in bits, and the options that change the layouts.
struct field_widths {
  std::uint8_t privilege = 0;
  std::uint8_t time = 0;
  std::uint8_t context = 0;
  std::uint8_t ecause = 0;
  std::uint8_t address = 0;  // iaddress_width_p - iaddress_lsb_p
  std::uint8_t tval = 0;     // iaddress_width_p
  std::uint8_t f0s = 0;
  std::uint8_t index = 0;
  std::uint8_t irdepth = 0;
  std::uint8_t encoder_mode = 0;
  std::uint8_t ioptions = 0;
  std::uint8_t doptions = 0;
  std::uint8_t iaddress_lsb = 0;
  std::uint8_t iaddress_width = 0;
  bool branch_prediction = false;
  bool jump_target_cache = false;
  std::uint8_t implicit_exception_ioption = no_ioption;

  constexpr bool operator==(const field_widths&) const = default;

  // Widths as the tables give them; only meaningful for parameters that validate().
  static constexpr field_widths from(const parameters& p) noexcept {
    field_widths w{};
    w.privilege = p.privilege_width_p;
    w.time = p.notime_p ? 0 : p.time_width_p;
    w.context = p.nocontext_p ? 0 : p.context_width_p;
    w.ecause = p.ecause_width_p;
    w.address = static_cast<std::uint8_t>(p.iaddress_width_p - p.iaddress_lsb_p);
    w.tval = p.iaddress_width_p;
    w.f0s = p.f0s_width_p;
    w.index = p.cache_size_p;
    // irdepth: return_stack_size_p + (return_stack_size_p > 0 ? 1 : 0) + call_counter_size_p
    w.irdepth = static_cast<std::uint8_t>(p.return_stack_size_p + (p.return_stack_size_p > 0 ? 1 : 0) +
                                          p.call_counter_size_p);
    w.encoder_mode = p.encoder_mode_width;
    w.ioptions = p.ioptions_width;
    w.doptions = p.doptions_width;
    w.iaddress_lsb = p.iaddress_lsb_p;
    w.iaddress_width = p.iaddress_width_p;
    w.branch_prediction = p.branch_prediction;
    w.jump_target_cache = p.jump_target_cache;
    w.implicit_exception_ioption = p.implicit_exception_ioption;
    return w;
  }
};

}  // namespace tracecodec::etrace
