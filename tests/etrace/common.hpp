// SPDX-License-Identifier: Apache-2.0
// Test helpers for the E-Trace codec. `pack` builds a payload bit vector from fields listed in
// transmission order, each LSB first, exactly as the spec tables say; it is deliberately
// independent of the codec (no layout tables, no compression).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include <tracecodec/etrace/etrace.hpp>

namespace etest {

namespace et = tracecodec::etrace;
using bytes = std::vector<std::uint8_t>;

struct bitfield {
  std::uint64_t value;
  unsigned width;
};

// The full (uncompressed) payload: fields concatenated, then sign-extended to a byte.
inline bytes pack(std::initializer_list<bitfield> fields, unsigned* bits = nullptr) {
  std::vector<bool> v;
  for (const bitfield& f : fields)
    for (unsigned i = 0; i < f.width; ++i) v.push_back(((f.value >> i) & 1u) != 0);
  if (bits) *bits = static_cast<unsigned>(v.size());
  const bool sign = !v.empty() && v.back();
  while (v.size() % 8) v.push_back(sign);
  bytes out(v.size() / 8, 0);
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i]) out[i / 8] = static_cast<std::uint8_t>(out[i / 8] | (1u << (i % 8)));
  return out;
}

// True if `full` is `compressed` sign-extended from its last bit (the decoder's rule).
inline bool restores(const bytes& compressed, const bytes& full) {
  if (compressed.empty() || compressed.size() > full.size()) return false;
  const std::uint8_t fill = (compressed.back() & 0x80) ? 0xff : 0x00;
  for (std::size_t i = 0; i < full.size(); ++i)
    if (full[i] != (i < compressed.size() ? compressed[i] : fill)) return false;
  return true;
}

inline std::string hex(const bytes& b) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (std::uint8_t x : b) {
    if (!s.empty()) s += ' ';
    s += d[x >> 4];
    s += d[x & 15];
  }
  return s;
}

template <class Codec>
bytes encode(const Codec& c, const et::te_inst& p, et::trace_mode m = {}, std::size_t min_size = 0,
             et::error_code* err = nullptr) {
  std::uint8_t out[64]{};
  const et::encode_result r = c.encode(p, out, sizeof out, m, min_size);
  if (err) *err = r.error;
  return bytes(out, out + r.size);
}

template <class Codec>
et::decode_result decode(const Codec& c, const bytes& b, et::trace_mode m = {}) {
  return c.decode(b.data(), b.size(), m);
}

// Uniform random values; reproducible.
class rng {
 public:
  explicit rng(std::uint64_t seed) : g_(seed) {}
  std::uint64_t bits(unsigned n) {
    if (n == 0) return 0;
    const std::uint64_t v = g_();
    return n >= 64 ? v : (v & ((std::uint64_t{1} << n) - 1));
  }
  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : g_() % n; }
  bool coin() { return (g_() & 1u) != 0; }
  // Mostly small values or runs of equal top bits, so compression is exercised.
  std::uint64_t value(unsigned width) {
    if (width == 0) return 0;
    const std::uint64_t mask = width >= 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << width) - 1);
    switch (below(4)) {
      case 0: return bits(width);
      case 1: return bits(static_cast<unsigned>(below(width + 1)));
      case 2: return (~bits(static_cast<unsigned>(below(width + 1)))) & mask;
      default: return below(2) ? 0 : mask;
    }
  }

 private:
  std::mt19937_64 g_;
};

// A te_inst of layout `k` with random values in every field the layout carries (the layout
// table decides which; fields it does not carry stay 0, as the decoder leaves them).
inline et::te_inst random_inst(rng& r, const et::field_widths& w, et::te_inst_kind k,
                                et::trace_mode m) {
  using et::te_inst_kind;
  et::te_inst p{};
  switch (k) {
    case te_inst_kind::sync_start:
    case te_inst_kind::sync_trap:
    case te_inst_kind::sync_context:
    case te_inst_kind::sync_support:
      p.format = et::format::sync;
      p.subformat = static_cast<std::uint8_t>(k);
      break;
    case te_inst_kind::addr_only: p.format = et::format::addr_only; break;
    case te_inst_kind::diff_delta:
    case te_inst_kind::diff_delta_full_map: p.format = et::format::diff_delta; break;
    case te_inst_kind::branch_count:
    case te_inst_kind::branch_count_address:
      p.format = et::format::opt_ext;
      p.subformat = 0;
      break;
    case te_inst_kind::jump_target_cache:
    case te_inst_kind::jump_target_cache_no_map:
      p.format = et::format::opt_ext;
      p.subformat = 1;
      break;
  }
  const et::layout& l = et::layout_of(k);
  for (unsigned i = 0; i < l.size; ++i) {
    const et::layout_entry& e = l.fields[i];
    if (!et::is_present(e, p, m)) continue;
    switch (e.f) {
      case et::field::format:
      case et::field::sync_subformat:
      case et::field::opt_ext_subformat: break;
      case et::field::branches:
        p.branches = (k == te_inst_kind::diff_delta || k == te_inst_kind::jump_target_cache)
                         ? static_cast<std::uint8_t>(1 + r.below(31)) : 0;
        break;
      case et::field::branch_fmt:
        p.branch_fmt = k == te_inst_kind::branch_count ? et::branch_fmt::no_addr
                       : r.coin()                      ? et::branch_fmt::addr
                                                       : et::branch_fmt::addr_fail;
        break;
      case et::field::address: p.address = r.value(w.address) << w.iaddress_lsb; break;
      case et::field::irdepth: p.irdepth = p.irreport ? static_cast<std::uint32_t>(r.value(w.irdepth)) : 0; break;
      default: et::set_field(p, e.f, r.value(et::width_of(e.f, w, p)), w); break;
    }
  }
  return p;
}


// A te_inst of a random layout the parameters enable.
inline et::te_inst random_inst(rng& r, const et::field_widths& w, et::trace_mode m) {
  for (;;) {
    const auto k = static_cast<et::te_inst_kind>(r.below(et::te_inst_kind_count));
    if (et::is_enabled(k, w)) return random_inst(r, w, k, m);
  }
}

}  // namespace etest
