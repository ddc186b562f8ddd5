// SPDX-License-Identifier: Apache-2.0
// A synthetic ETE trace made by the library's own encoder, shaped like real trace (atoms and
// short addresses are most packets), so benchmarks run without ../shared.
#pragma once

#include <tracecodec/tracecodec.hpp>

#include <cstdint>
#include <random>
#include <vector>

namespace bench {
using namespace tracecodec::ete;

inline constexpr registers synthetic_regs = presets::ete_1_1_tsmark;

inline std::vector<std::uint8_t> synthetic_trace(std::size_t min_bytes, std::uint64_t seed = 1) {
  std::vector<std::uint8_t> out;
  encoder<fixed_config<synthetic_regs>> enc;
  std::mt19937_64 rng(seed);
  std::uint8_t buf[64];
  auto put = [&](const packet& p) {
    const auto r = enc.encode(p, buf, sizeof buf);
    out.insert(out.end(), buf, buf + r.size);
    return r.error == error_code::ok;
  };
  std::uint64_t pc = 0x0000aaaa00400000, ts = 0x100000;
  while (out.size() < min_bytes) {
    packet p{};
    p.kind = packet_kind::async;
    put(p);
    p = packet{};
    p.kind = packet_kind::trace_info;
    put(p);
    p = packet{};
    p.kind = packet_kind::trace_on;
    put(p);
    p = packet{};
    p.kind = packet_kind::address_ctx_64_is0;
    p.address = pc;
    p.ctx.el = 0;
    p.ctx.sf = true;
    p.ctx.ns = true;
    put(p);
    for (int i = 0; i < 4000; ++i) {
      p = packet{};
      const unsigned r = static_cast<unsigned>(rng() % 100);
      if (r < 55) {  // atoms
        static constexpr packet_kind fmts[] = {packet_kind::atom_f1, packet_kind::atom_f2,
                                               packet_kind::atom_f3};
        const unsigned f = static_cast<unsigned>(rng() % 3);
        p.kind = fmts[f];
        p.atom_count = static_cast<std::uint8_t>(f + 1);
        p.atoms = static_cast<std::uint32_t>(rng()) & ((1u << p.atom_count) - 1u);
      } else if (r < 60) {
        p.kind = packet_kind::atom_f6;
        p.atom_count = static_cast<std::uint8_t>(4 + rng() % 10);
        p.atoms = (1u << p.atom_count) - 1u;
      } else if (r < 78) {  // short branch
        pc = (pc & ~std::uint64_t{0xffff}) | ((rng() & 0x3fff) << 2);
        p.kind = packet_kind::address_short_is0;
        p.address = pc;
      } else if (r < 84) {  // return to a recent address
        p.kind = packet_kind::address_exact;
        p.index = static_cast<std::uint8_t>(rng() % 3);
        p.address = enc.state().history.entry[p.index].address;
        p.sub_isa = enc.state().history.entry[p.index].sub_isa;
        pc = p.address;
      } else if (r < 92) {  // far branch
        pc = (pc & ~std::uint64_t{0xffffffff}) | ((rng() & 0x3fffffff) << 2);
        p.kind = packet_kind::address_32_is0;
        p.address = pc;
      } else if (r < 95) {
        ts += rng() % 5000;
        p.kind = packet_kind::timestamp;
        p.timestamp = ts;
      } else if (r < 97) {
        p.kind = packet_kind::exception_short_is0;
        p.e = 1;
        p.exception_type = 0x0e;
        pc = (pc & ~std::uint64_t{0x1ff}) | ((rng() & 0x7f) << 2);
        p.address = pc;
        p.addr_bytes = 2;
      } else if (r < 99) {
        p.kind = packet_kind::context;
        p.ctx = enc.state().ctx;
        p.ctx.el = static_cast<std::uint8_t>(rng() % 2);
        p.ctx.context_id = static_cast<std::uint32_t>(rng() % 64);
        p.flags = packet_flag::has_context_id;
      } else {
        p.kind = packet_kind::timestamp_marker;
      }
      put(p);
    }
  }
  return out;
}

}  // namespace bench
