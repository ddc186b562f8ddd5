// SPDX-License-Identifier: Apache-2.0
// Packets and elements built from bytes: every field takes values a producer might hand over
// (history entries, nearby addresses, small counts) as well as arbitrary ones. Used by the
// encoder fuzz target and by the seed generator (random bytes -> packets the encoder accepts).
#pragma once

#include <tracecodec/tracecodec.hpp>

#include <cstddef>
#include <cstdint>

namespace fuzz {
using namespace tracecodec::ete;

// Reads the input as a sequence of values; zeros once it is exhausted.
struct reader {
  const std::uint8_t* p;
  std::size_t n;
  bool empty() const { return n == 0; }
  std::uint8_t u8() {
    if (n == 0) return 0;
    --n;
    return *p++;
  }
  // Little-endian; the reads are sequenced (operands of | are not).
  std::uint16_t u16() {
    const unsigned lo = u8();
    return static_cast<std::uint16_t>(lo | (unsigned{u8()} << 8));
  }
  std::uint32_t u32() {
    const std::uint32_t lo = u16();
    return lo | (static_cast<std::uint32_t>(u16()) << 16);
  }
  std::uint64_t u64() {
    const std::uint64_t lo = u32();
    return lo | (static_cast<std::uint64_t>(u32()) << 32);
  }
};

inline std::uint32_t small_or_wide(reader& r) {
  const std::uint8_t m = r.u8();
  switch (m & 3u) {
    case 0: return m >> 2;                    // 0..63
    case 1: return r.u8();                    // a byte
    case 2: return r.u16();                   // 16 bits
    default: return r.u32();                  // anything
  }
}

inline packet make_packet(reader& r, const stream_state& st) {
  packet p{};
  p.kind = static_cast<packet_kind>(r.u8() % packet_kind_count);
  const std::uint8_t am = r.u8();
  const address_entry& last = st.history.entry[0];
  p.index = static_cast<std::uint8_t>((am >> 3) % 4u);
  switch (am & 7u) {
    case 0: {  // an entry of the history (exact match), its own ISA
      const address_entry& e = st.history.entry[p.index % 3u];
      p.address = e.address;
      p.sub_isa = e.sub_isa;
      break;
    }
    case 1: p.address = (last.address & ~std::uint64_t{0x1ffff}) | (r.u16() << 1); break;
    case 2: p.address = (last.address & ~std::uint64_t{0xffffffff}) | r.u32(); break;
    case 3: p.address = (last.address & ~std::uint64_t{0x1ff}) | (r.u8() << 1); break;
    case 4: p.address = r.u64(); break;
    case 5: p.address = 0; break;
    default: p.address = last.address ^ r.u64(); break;
  }
  if ((am & 7u) != 0) {
    p.sub_isa = static_cast<isa>((am >> 5) & 1u);
    if (am & 0x40u) p.address &= ~detail::isa_alignment_mask(p.sub_isa);  // usually aligned
  }
  const std::uint8_t cm = r.u8();
  p.ctx = st.ctx;
  if (cm & 1u) {
    const std::uint8_t b = r.u8();
    p.ctx.el = b & 3u;
    p.ctx.nse = (b >> 2) & 1u;
    p.ctx.sf = (b >> 3) & 1u;
    p.ctx.ns = (b >> 4) & 1u;
    if (b & 0x20u) p.ctx.el = static_cast<std::uint8_t>(b >> 5);  // sometimes out of range
  }
  if (cm & 2u) p.ctx.context_id = r.u32();
  if (cm & 4u) p.ctx.vmid = r.u32();
  p.flags = static_cast<std::uint8_t>(r.u8());
  p.count = small_or_wide(r);
  const std::uint8_t ym = r.u8();
  p.cycles = (ym & 1u) ? st.cc_threshold + (ym >> 1) : small_or_wide(r);
  const std::uint8_t tm = r.u8();
  switch (tm & 3u) {
    case 0: p.timestamp = st.timestamp + (tm >> 2); break;
    case 1: p.timestamp = st.timestamp ^ r.u32(); break;
    case 2: p.timestamp = r.u64(); break;
    default: p.timestamp = st.timestamp; break;
  }
  p.atom_count = static_cast<std::uint8_t>(r.u8() % 27u);
  p.atoms = r.u32();
  if (p.atom_count < 32 && (r.u8() & 1u)) p.atoms &= (std::uint32_t{1} << p.atom_count) - 1u;
  p.exception_type = static_cast<std::uint8_t>(r.u8() % 40u);
  p.exception_elements = static_cast<std::uint8_t>(r.u8() % 4u);
  p.events = static_cast<std::uint8_t>(r.u8() % 18u);
  p.info = r.u8();
  p.plctl = r.u8();
  const std::uint8_t lm = r.u8();
  p.addr_bytes = lm & 3u;
  p.value_bytes = static_cast<std::uint8_t>((lm >> 2) % 11u);
  p.count_bytes = static_cast<std::uint8_t>((lm >> 6) & 3u);
  p.ignored_bits = static_cast<std::uint8_t>(r.u8() % 34u);
  p.size = p.kind == packet_kind::async ? r.u8() : 0;
  return p;
}

inline element make_element(reader& r, std::uint64_t& pc) {
  element e{};
  e.kind = static_cast<element_kind>(r.u8() % element_kind_count);
  const std::uint8_t f = r.u8();
  e.p0 = f & 1u;
  e.taken = (f >> 1) & 1u;
  e.sub_isa = static_cast<isa>((f >> 2) & 1u);
  e.flags = (f & 0x80u) ? r.u8() : 0;
  switch ((f >> 3) & 3u) {
    case 0: break;
    case 1: pc = (pc & ~std::uint64_t{0xffff}) | (r.u16() & ~3u); break;
    case 2: pc = (pc & ~std::uint64_t{0xffffffff}) | (r.u32() & ~3u); break;
    default: pc = r.u64(); break;
  }
  e.address = pc;
  if ((f >> 5) & 1u) e.address &= ~std::uint64_t{1};
  e.count = small_or_wide(r);
  if (e.kind == element_kind::atom) {  // single atoms, runs of 1-32 (element.hpp), and wider
    const std::uint8_t k = r.u8();
    e.count = k < 96 ? 0u : k < 250 ? k % 33u : e.count;
    e.atom_bits = r.u32();
  }
  e.cycles = small_or_wide(r);
  e.timestamp = (f & 0x40u) ? r.u64() : r.u8();
  e.exception_type = static_cast<std::uint8_t>(r.u8() % 34u);
  e.number = r.u8();
  if (e.kind == element_kind::event) e.number &= 3u;
  if (e.kind == element_kind::context) {
    const std::uint8_t b = r.u8();
    e.ctx.el = b & 3u;
    e.ctx.ns = (b >> 2) & 1u;
    e.ctx.nse = (b >> 3) & 1u;
    e.ctx.sf = (b >> 4) & 1u;
    if (b & 0x20u) e.ctx.context_id = r.u32();
    if (b & 0x40u) e.ctx.vmid = r.u32();
  }
  return e;
}

}  // namespace fuzz
