// SPDX-License-Identifier: Apache-2.0
// te_inst payload codec, both directions, by walking the layout tables: decode restores the
// full payload by sign extension and reads each field; encode packs each field LSB first,
// sign-extends to a byte and drops the identical top bytes (always the shortest payload).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "bits.hpp"
#include "config.hpp"
#include "error.hpp"
#include "layout.hpp"
#include "sign_compression.hpp"
#include "te_inst.hpp"

namespace tracecodec::etrace {

struct decode_result {
  te_inst inst{};
  te_inst_kind kind = te_inst_kind::sync_start;
  error_code error = error_code::ok;
  std::uint16_t full_bits = 0;  // uncompressed payload length in bits
};

struct encode_result {
  std::size_t size = 0;  // bytes written (0 on error)
  error_code error = error_code::ok;
};

struct kind_result {
  te_inst_kind kind = te_inst_kind::sync_start;
  error_code error = error_code::ok;
};

namespace detail {

// Format 0 subformat when f0s_width_p is 0: the one optional format enabled.
constexpr kind_result inferred_opt_ext(const field_widths& w) noexcept {
  if (w.branch_prediction && !w.jump_target_cache) return {te_inst_kind::branch_count, error_code::ok};
  if (w.jump_target_cache && !w.branch_prediction) return {te_inst_kind::jump_target_cache, error_code::ok};
  return {te_inst_kind::branch_count, error_code::reserved_format};
}

constexpr std::uint8_t subformat_of(te_inst_kind k) noexcept {
  switch (k) {
    case te_inst_kind::sync_start: return 0;
    case te_inst_kind::sync_trap: return 1;
    case te_inst_kind::sync_context: return 2;
    case te_inst_kind::sync_support: return 3;
    case te_inst_kind::jump_target_cache:
    case te_inst_kind::jump_target_cache_no_map: return 1;
    default: return 0;
  }
}

// Which layout a received payload has: format (bits 1:0), then the subformat, and for
// formats 1 and 0 the branches / branch_fmt field at its fixed position.
constexpr kind_result classify(const bit_reader& r, const field_widths& w) noexcept {
  switch (static_cast<format>(r.peek(0, 2))) {
    case format::sync:
      return {static_cast<te_inst_kind>(static_cast<unsigned>(te_inst_kind::sync_start) + r.peek(2, 2)),
              error_code::ok};
    case format::addr_only: return {te_inst_kind::addr_only, error_code::ok};
    case format::diff_delta:
      return {r.peek(2, 5) == 0 ? te_inst_kind::diff_delta_full_map : te_inst_kind::diff_delta,
              error_code::ok};
    case format::opt_ext: break;
  }
  te_inst_kind sub = te_inst_kind::branch_count;
  if (w.f0s == 0) {
    const kind_result k = inferred_opt_ext(w);
    if (k.error != error_code::ok) return k;
    sub = k.kind;
  } else {
    const std::uint64_t s = r.peek(2, w.f0s);
    if (s == 0 && w.branch_prediction) sub = te_inst_kind::branch_count;
    else if (s == 1 && w.jump_target_cache) sub = te_inst_kind::jump_target_cache;
    else return {te_inst_kind::branch_count, error_code::reserved_format};
  }
  const unsigned after_sub = 2u + w.f0s;
  if (sub == te_inst_kind::branch_count) {
    const std::uint64_t fmt = r.peek(after_sub + 32, 2);
    if (fmt == 1) return {sub, error_code::reserved_branch_fmt};
    return {fmt == 0 ? te_inst_kind::branch_count : te_inst_kind::branch_count_address, error_code::ok};
  }
  return {r.peek(after_sub + w.index, 5) == 0 ? te_inst_kind::jump_target_cache_no_map
                                              : te_inst_kind::jump_target_cache,
          error_code::ok};
}

}  // namespace detail

// The layout a te_inst to be encoded has, or unencodable for a reserved or disabled one.
constexpr kind_result kind_of(const te_inst& p, const field_widths& w) noexcept {
  const kind_result bad{te_inst_kind::sync_start, error_code::unencodable};
  switch (p.format) {
    case format::sync:
      if (p.subformat > 3) return bad;
      return {static_cast<te_inst_kind>(p.subformat), error_code::ok};
    case format::addr_only: return {te_inst_kind::addr_only, error_code::ok};
    case format::diff_delta:
      if (p.branches > 31) return bad;
      return {p.branches == 0 ? te_inst_kind::diff_delta_full_map : te_inst_kind::diff_delta,
              error_code::ok};
    case format::opt_ext: break;
    default: return bad;
  }
  bool count = false;
  if (w.f0s == 0) {
    const kind_result k = detail::inferred_opt_ext(w);
    if (k.error != error_code::ok || p.subformat != detail::subformat_of(k.kind)) return bad;
    count = k.kind == te_inst_kind::branch_count;
  } else if (p.subformat == 0 && w.branch_prediction) {
    count = true;
  } else if (!(p.subformat == 1 && w.jump_target_cache)) {
    return bad;
  }
  if (count) {
    switch (p.branch_fmt) {
      case branch_fmt::no_addr: return {te_inst_kind::branch_count, error_code::ok};
      case branch_fmt::addr:
      case branch_fmt::addr_fail: return {te_inst_kind::branch_count_address, error_code::ok};
      default: return bad;
    }
  }
  if (p.branches > 31) return bad;
  return {p.branches == 0 ? te_inst_kind::jump_target_cache_no_map : te_inst_kind::jump_target_cache,
          error_code::ok};
}

namespace detail {

// Holds a configuration: nothing for a fixed one (its widths are constants), a copy otherwise.
template <class Config>
class configured {
 public:
  template <class C = Config, std::enable_if_t<C::is_fixed, int> = 0>
  constexpr configured() noexcept {}
  constexpr explicit configured(const Config& c) noexcept : cfg_(c) {}
  constexpr const field_widths& widths() const noexcept { return cfg_.widths(); }
  constexpr const parameters& params() const noexcept { return cfg_.get(); }
  constexpr unsigned max_payload() const noexcept { return cfg_.max_payload(); }
  constexpr error_code status() const noexcept { return cfg_.status(); }
  constexpr parameter_error reason() const noexcept { return cfg_.reason(); }

 private:
  [[no_unique_address]] Config cfg_{};
};

// Implicit exception mode as the ioptions of a support packet set it; `m` unchanged when the
// parameters name no ioptions bit.
constexpr trace_mode mode_after(const te_inst& p, const field_widths& w, trace_mode m) noexcept {
  if (p.format == format::sync && p.subformat == 3 && w.implicit_exception_ioption != no_ioption)
    m.implicit_exception = ((p.ioptions >> w.implicit_exception_ioption) & 1u) != 0;
  return m;
}

}  // namespace detail

template <class Config = runtime_config>
class payload_codec {
 public:
  template <class C = Config, std::enable_if_t<C::is_fixed, int> = 0>
  constexpr payload_codec() noexcept {}
  template <class C = Config, std::enable_if_t<!C::is_fixed, int> = 0>
  constexpr explicit payload_codec(const runtime_config& c) noexcept : cfg_(c) {}
  template <class C = Config, std::enable_if_t<!C::is_fixed, int> = 0>
  constexpr explicit payload_codec(const parameters& p) noexcept : cfg_(runtime_config(p)) {}

  constexpr error_code status() const noexcept { return cfg_.status(); }
  constexpr parameter_error reason() const noexcept { return cfg_.reason(); }
  constexpr const field_widths& widths() const noexcept { return cfg_.widths(); }
  constexpr const parameters& params() const noexcept { return cfg_.params(); }
  // Largest payload of these parameters, in bytes.
  constexpr unsigned max_payload() const noexcept { return cfg_.max_payload(); }

  // Decodes one payload of `size` bytes (as the encapsulation's length field gives it).
  constexpr decode_result decode(const std::uint8_t* data, std::size_t size,
                                 trace_mode mode = {}) const noexcept {
    decode_result r{};
    if (status() != error_code::ok) return fail(r, status());
    if (size == 0) return fail(r, error_code::empty_payload);
    if (size > max_payload_bytes) return fail(r, error_code::payload_too_long);
    const field_widths& w = widths();
    bit_reader rd(data, size);
    const kind_result k = detail::classify(rd, w);
    if (k.error != error_code::ok) return fail(r, k.error);
    r.kind = k.kind;
    const layout& l = layout_of(k.kind);
    bool prev = false;  // the bit transmitted last
    for (unsigned i = 0; i < l.size; ++i) {
      const layout_entry& e = l.fields[i];
      if (!is_present(e, r.inst, mode)) continue;
      const unsigned n = width_of(e.f, w, r.inst);
      const std::uint64_t raw = rd.get(n);
      switch (info_of(e.f).coding) {
        case coding::plain: set_field(r.inst, e.f, raw, w); break;
        case coding::differential: set_field(r.inst, e.f, (raw != 0) != prev, w); break;
        case coding::irdepth:
          if (r.inst.irreport) set_field(r.inst, e.f, raw, w);
          else if (raw != (prev ? low_bits(n) : 0)) return fail(r, error_code::inconsistent_irdepth);
          break;
      }
      if (n != 0) prev = ((raw >> (n - 1)) & 1u) != 0;
    }
    if (w.f0s == 0 && r.inst.format == format::opt_ext)
      r.inst.subformat = detail::subformat_of(k.kind);  // inferred (f0s_width_p = 0)
    r.full_bits = static_cast<std::uint16_t>(rd.position());
    const error_code len = check_payload_length(data, size, rd.position());
    if (len != error_code::ok) return fail(r, len);
    return r;
  }

  // Encodes `p` into out[0..capacity): the shortest payload, or at least `min_size` bytes
  // (up to the full length; to reproduce a received payload byte for byte). Nothing is
  // written on error.
  constexpr encode_result encode(const te_inst& p, std::uint8_t* out, std::size_t capacity,
                                 trace_mode mode = {}, std::size_t min_size = 0) const noexcept {
    if (status() != error_code::ok) return {0, status()};
    std::uint8_t buf[payload_buffer_size]{};
    const encode_result packed = pack(p, buf, mode);
    if (packed.error != error_code::ok) return packed;
    const std::size_t full = packed.size;
    std::size_t n = compressed_size(buf, full);
    if (min_size > full) return {0, error_code::unencodable};
    if (min_size > n) n = min_size;
    if (n > capacity) return {0, error_code::buffer_too_small};
    for (std::size_t i = 0; i < n; ++i) out[i] = buf[i];
    return {n, error_code::ok};
  }

  // Length in bits of `p`'s uncompressed payload (0 if it cannot be encoded).
  constexpr unsigned full_bits(const te_inst& p, trace_mode mode = {}) const noexcept {
    if (status() != error_code::ok) return 0;
    const kind_result k = kind_of(p, widths());
    if (k.error != error_code::ok) return 0;
    const layout& l = layout_of(k.kind);
    unsigned bits = 0;
    for (unsigned i = 0; i < l.size; ++i)
      if (is_present(l.fields[i], p, mode)) bits += width_of(l.fields[i].f, widths(), p);
    return bits;
  }

 private:
  static constexpr decode_result fail(decode_result r, error_code e) noexcept {
    r.error = e;
    return r;
  }

  // Packs every field into `buf` (zeroed, payload_buffer_size bytes) and sign-extends it to a
  // byte; size = the full length in bytes.
  constexpr encode_result pack(const te_inst& p, std::uint8_t* buf, trace_mode mode) const noexcept {
    const field_widths& w = widths();
    const kind_result k = kind_of(p, w);
    if (k.error != error_code::ok) return {0, k.error};
    const layout& l = layout_of(k.kind);
    bit_writer wr(buf);
    for (unsigned i = 0; i < l.size; ++i) {
      const layout_entry& e = l.fields[i];
      if (!is_present(e, p, mode)) continue;
      const unsigned n = width_of(e.f, w, p);
      if (e.f == field::opt_ext_subformat && n == 0) continue;  // inferred (checked by kind_of)
      if (e.f == field::address && ((p.address & low_bits(w.iaddress_lsb)) != 0 ||
                                    (p.address & ~low_bits(w.iaddress_width)) != 0))
        return {0, error_code::unencodable};  // not aligned, or wider than iaddress_width_p
      const std::uint64_t v = field_value(p, e.f, w);
      const bool prev = wr.last_bit();
      std::uint64_t raw = v;
      switch (info_of(e.f).coding) {
        case coding::plain: break;
        case coding::differential: raw = (v != 0) != prev ? 1u : 0u; break;
        case coding::irdepth: raw = p.irreport ? v : (prev ? low_bits(n) : 0); break;
      }
      if ((raw & ~low_bits(n)) != 0) return {0, error_code::unencodable};
      wr.put(raw, n);
    }
    const unsigned bits = wr.position();
    if (bits > 8 * max_payload_bytes) return {0, error_code::unencodable};  // unreachable
    sign_extend_to_byte(buf, bits);
    return {(bits + 7u) / 8u, error_code::ok};
  }

  [[no_unique_address]] detail::configured<Config> cfg_{};
};

}  // namespace tracecodec::etrace
