// SPDX-License-Identifier: Apache-2.0
// te_inst codec configuration: the parameters validated, in a compile-time form
// (fixed_config<parameters{...}>: an invalid set fails to compile, every width folds into a
// constant) and a run-time form (runtime_config: an invalid set makes every operation report
// error_code::invalid_config).
#pragma once

#include <cstdint>

#include "error.hpp"
#include "layout.hpp"
#include "parameters.hpp"

namespace tracecodec::etrace {

// Both example transports carry a 5-bit payload length: at most 31 bytes.
inline constexpr unsigned max_payload_bytes = 31;

// Why a parameter set is invalid.
enum class parameter_error : std::uint8_t {
  none = 0,
  iaddress_width,              // iaddress_width_p not 1..64
  iaddress_lsb,                // iaddress_lsb_p >= iaddress_width_p (no address bits left)
  privilege_width,             // privilege_width_p above 8
  ecause_width,                // ecause_width_p above 64
  context_width,               // context_width_p above 64 (when present)
  time_width,                  // time_width_p above 64 (when present)
  irdepth_width,               // irdepth wider than 32 bits
  cache_size,                  // cache_size_p above 32
  f0s_width,                   // f0s_width_p above 8, or 0 with both optional formats enabled
  support_widths,              // encoder_mode above 32 bits, ioptions or doptions above 64
  implicit_exception_ioption,  // names an ioptions bit the field does not have
  payload_too_large,           // the largest te_inst exceeds 31 bytes (248 bits)
};

constexpr const char* parameter_error_name(parameter_error e) noexcept {
  switch (e) {
    case parameter_error::none: return "none";
    case parameter_error::iaddress_width: return "iaddress_width";
    case parameter_error::iaddress_lsb: return "iaddress_lsb";
    case parameter_error::privilege_width: return "privilege_width";
    case parameter_error::ecause_width: return "ecause_width";
    case parameter_error::context_width: return "context_width";
    case parameter_error::time_width: return "time_width";
    case parameter_error::irdepth_width: return "irdepth_width";
    case parameter_error::cache_size: return "cache_size";
    case parameter_error::f0s_width: return "f0s_width";
    case parameter_error::support_widths: return "support_widths";
    case parameter_error::implicit_exception_ioption: return "implicit_exception_ioption";
    case parameter_error::payload_too_large: return "payload_too_large";
  }
  return "unknown";
}

constexpr parameter_error validate(const parameters& p) noexcept {
  if (p.iaddress_width_p < 1 || p.iaddress_width_p > 64) return parameter_error::iaddress_width;
  if (p.iaddress_lsb_p >= p.iaddress_width_p) return parameter_error::iaddress_lsb;
  if (p.privilege_width_p > 8) return parameter_error::privilege_width;
  if (p.ecause_width_p > 64) return parameter_error::ecause_width;
  if (!p.nocontext_p && p.context_width_p > 64) return parameter_error::context_width;
  if (!p.notime_p && p.time_width_p > 64) return parameter_error::time_width;
  const unsigned irdepth = p.return_stack_size_p + (p.return_stack_size_p > 0 ? 1u : 0u) +
                           p.call_counter_size_p;
  if (irdepth > 32) return parameter_error::irdepth_width;
  if (p.cache_size_p > 32) return parameter_error::cache_size;
  if (p.f0s_width_p > 8 || (p.f0s_width_p == 0 && p.branch_prediction && p.jump_target_cache))
    return parameter_error::f0s_width;
  if (p.encoder_mode_width > 32 || p.ioptions_width > 64 || p.doptions_width > 64)
    return parameter_error::support_widths;
  if (p.implicit_exception_ioption != no_ioption && p.implicit_exception_ioption >= p.ioptions_width)
    return parameter_error::implicit_exception_ioption;
  if (max_payload_bits(field_widths::from(p)) > 8 * max_payload_bytes)
    return parameter_error::payload_too_large;
  return parameter_error::none;
}

// Bytes of the largest payload these widths allow (sign-extended to a byte).
constexpr unsigned max_payload_size(const field_widths& w) noexcept {
  return (max_payload_bits(w) + 7) / 8;
}

// Compile-time configuration: a parameter set as template argument; an invalid one fails to
// compile with the reason.
template <parameters P>
struct fixed_config {
  static_assert(validate(P) != parameter_error::iaddress_width, "invalid te_inst parameters: iaddress_width_p must be 1..64");
  static_assert(validate(P) != parameter_error::iaddress_lsb, "invalid te_inst parameters: iaddress_lsb_p must be below iaddress_width_p");
  static_assert(validate(P) != parameter_error::privilege_width, "invalid te_inst parameters: privilege_width_p above 8");
  static_assert(validate(P) != parameter_error::ecause_width, "invalid te_inst parameters: ecause_width_p above 64");
  static_assert(validate(P) != parameter_error::context_width, "invalid te_inst parameters: context_width_p above 64");
  static_assert(validate(P) != parameter_error::time_width, "invalid te_inst parameters: time_width_p above 64");
  static_assert(validate(P) != parameter_error::irdepth_width, "invalid te_inst parameters: irdepth wider than 32 bits");
  static_assert(validate(P) != parameter_error::cache_size, "invalid te_inst parameters: cache_size_p above 32");
  static_assert(validate(P) != parameter_error::f0s_width, "invalid te_inst parameters: f0s_width_p above 8, or 0 with two optional formats");
  static_assert(validate(P) != parameter_error::support_widths, "invalid te_inst parameters: support packet field too wide");
  static_assert(validate(P) != parameter_error::implicit_exception_ioption, "invalid te_inst parameters: implicit_exception_ioption beyond ioptions_width");
  static_assert(validate(P) != parameter_error::payload_too_large, "invalid te_inst parameters: largest te_inst payload exceeds 31 bytes");

  static constexpr bool is_fixed = true;
  static constexpr parameters params = P;
  static constexpr field_widths widths_value = field_widths::from(P);
  static constexpr unsigned max_size = max_payload_size(widths_value);
  static constexpr const parameters& get() noexcept { return params; }
  static constexpr const field_widths& widths() noexcept { return widths_value; }
  static constexpr unsigned max_payload() noexcept { return max_size; }
  static constexpr error_code status() noexcept { return error_code::ok; }
  static constexpr parameter_error reason() noexcept { return parameter_error::none; }
};

// Run-time configuration: validated when made.
class runtime_config {
 public:
  static constexpr bool is_fixed = false;
  constexpr runtime_config() noexcept : runtime_config(parameters{}) {}
  constexpr explicit runtime_config(const parameters& p) noexcept
      : params_(p), widths_(field_widths::from(p)), reason_(validate(p)),
        max_size_(reason_ == parameter_error::none ? max_payload_size(widths_) : 0) {}
  constexpr const parameters& get() const noexcept { return params_; }
  constexpr const field_widths& widths() const noexcept { return widths_; }
  constexpr unsigned max_payload() const noexcept { return max_size_; }
  constexpr error_code status() const noexcept {
    return reason_ == parameter_error::none ? error_code::ok : error_code::invalid_config;
  }
  constexpr parameter_error reason() const noexcept { return reason_; }

 private:
  parameters params_;
  field_widths widths_;
  parameter_error reason_;
  unsigned max_size_;
};

// Parameter sets for tests, examples and compile-time use.
namespace presets {
// RV32 with compressed instructions, machine/supervisor/user privilege, nothing optional.
inline constexpr parameters rv32{};
// RV64 with 40-bit time, 32-bit context, an 8-entry return stack (3 + 1 irdepth bits), both
// optional formats (1-bit subformat) and a 64-entry jump target cache.
inline constexpr parameters rv64_full{.iaddress_width_p = 64, .iaddress_lsb_p = 1,
                                      .privilege_width_p = 3, .ecause_width_p = 6,
                                      .context_width_p = 32, .time_width_p = 40,
                                      .notime_p = false, .nocontext_p = false,
                                      .return_stack_size_p = 3, .call_counter_size_p = 0,
                                      .cache_size_p = 6, .f0s_width_p = 1,
                                      .branch_prediction = true, .jump_target_cache = true};
}  // namespace presets

}  // namespace tracecodec::etrace
