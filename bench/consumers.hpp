// SPDX-License-Identifier: Apache-2.0
// The consumers every benchmark and the instruction-count gate use (ete_bench.cpp, icount.cpp,
// and opaque_consumer.cpp, which compiles them in a translation unit of their own): each reads
// every field a user's consumer would, folded into one word, so that no decode work can be
// optimized away, and the stages are measured with the same reads everywhere.
#pragma once

#include <tracecodec/coresight/deformatter.hpp>
#include <tracecodec/ete/element/element.hpp>
#include <tracecodec/ete/flow/element.hpp>
#include <tracecodec/ete/packet/packet.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace bench {

inline std::uint64_t fields(const tracecodec::ete::packet& p) noexcept {
  return p.address ^ p.timestamp ^ p.atoms ^ p.count ^ p.cycles ^ p.ctx.context_id ^ p.ctx.vmid ^ p.ctx.el ^
         static_cast<unsigned>(p.kind) ^ p.offset ^ p.size ^ p.exception_type;
}
inline std::uint64_t fields(const tracecodec::ete::element& e) noexcept {
  return e.address ^ e.timestamp ^ e.count ^ e.cycles ^ e.atom_bits ^ static_cast<unsigned>(e.kind) ^ e.taken ^
         e.ctx.context_id ^ e.offset;
}
inline std::uint64_t fields(const tracecodec::ete::flow_element& f) noexcept {
  return f.offset ^ f.address ^ f.end ^ f.timestamp ^ f.count ^ f.ctx.context_id ^ static_cast<unsigned>(f.kind) ^
         static_cast<unsigned>(f.last_type) ^ static_cast<unsigned>(f.last_subtype) ^ f.taken ^ f.conditional ^
         f.number;
}

// The consumer of deformatted bytes: reads every byte (a sum per trace ID). Eight bytes at a
// time, the last few as one word too (the last eight bytes, or four, two and one in a shorter
// run): a byte-at-a-time loop is a chain of dependent adds, one byte per cycle, slower than
// the deformatter it would measure. BM_opencsd_deformat_delivered gives OpenCSD's blocks to the
// same consumer.
struct id_sums {
  std::uint64_t per_id[128]{};
  void add(std::uint8_t id, const std::uint8_t* p, std::size_t n) noexcept {
    std::uint64_t pairs = 0;  // byte pairs in 16-bit lanes (a batch: at most 960 bytes, no overflow)
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      std::uint64_t w;
      std::memcpy(&w, p + i, 8);
      pairs += (w & 0x00FF00FF00FF00FFull) + ((w >> 8) & 0x00FF00FF00FF00FFull);
    }
    if (i < n) {  // the last 1-7 bytes as one word
      std::uint64_t w = 0;
      if (n >= 8) {  // the last 8 bytes, those already read shifted out
        std::memcpy(&w, p + n - 8, 8);
        w >>= 8 * (8 - (n - i));
      } else {  // a run of fewer than 8 bytes: four, two and one
        std::uint32_t w4 = 0;
        std::uint16_t w2 = 0;
        if (n & 4) std::memcpy(&w4, p, 4);
        if (n & 2) std::memcpy(&w2, p + (n & 4), 2);
        w = w4 | std::uint64_t{w2} << 32 | std::uint64_t{(n & 1) ? p[n - 1] : 0u} << 48;
      }
      pairs += (w & 0x00FF00FF00FF00FFull) + ((w >> 8) & 0x00FF00FF00FF00FFull);
    }
    const std::uint64_t quads = (pairs & 0x0000FFFF0000FFFFull) + ((pairs >> 16) & 0x0000FFFF0000FFFFull);
    const std::uint64_t sum = (quads & 0xFFFFFFFFu) + (quads >> 32);
    per_id[id & 0x7f] += sum + n;
  }
  void add(const tracecodec::coresight::data_batch& b) noexcept { add(b.id, b.bytes, b.size); }
  std::uint64_t folded() const noexcept {
    std::uint64_t acc = 0;
    for (std::uint64_t v : per_id) acc ^= v;
    return acc;
  }
};

}  // namespace bench
