// SPDX-License-Identifier: Apache-2.0
// Instantiates the decoder and encoder for one fixed configuration, as firmware would, so that
// the freestanding check compiles the template bodies too (not only the declarations).
#include <tracecodec/tracecodec.hpp>

using namespace tracecodec::ete;
using cfg = fixed_config<presets::ete_1_0>;

extern "C" unsigned tracecodec_decode(const unsigned char* data, unsigned size) {
  decoder<cfg> d;
  unsigned n = 0;
  d.decode(data, size, [&](const packet& p) { n += p.size; }, [&](const diagnostic&) { ++n; });
  return n;
}

extern "C" unsigned tracecodec_encode_address(unsigned long long address, unsigned char* out,
                                              unsigned capacity) {
  static encoder<cfg> e;
  packet p{};
  p.kind = packet_kind::address_64_is0;
  p.address = address;
  return e.encode(p, out, capacity).size;
}

// Two sources of a CoreSight formatted buffer through a decode tree.
#include <tracecodec/coresight/decode_tree.hpp>

namespace {
decoder<cfg> source_a, source_b;
constinit tracecodec::coresight::decode_tree<decoder<cfg>, 2, 64> tree;
}  // namespace

extern "C" unsigned tracecodec_decode_formatted(const unsigned char* data, unsigned size) {
  unsigned n = 0;
  if (tree.size() == 0 && (tree.add_source(0x10, source_a) != tracecodec::coresight::tree_status::ok ||
                           tree.add_source(0x11, source_b) != tracecodec::coresight::tree_status::ok))
    return 0;
  tree.decode_part(
      data, size, [&](const tracecodec::coresight::item_origin&, const packet& p) { n += p.size; },
      [&](const tracecodec::coresight::item_origin&, const diagnostic&) { ++n; },
      [&](const tracecodec::coresight::diagnostic&) { ++n; });
  return n;
}

// The producer API: chunks of a static buffer to a function.
namespace {
unsigned char producer_chunk[64];
unsigned long producer_bytes = 0;
void producer_sink(void*, const std::uint8_t*, std::size_t n) noexcept { producer_bytes += n; }
constinit producer<cfg> firmware_trace(producer_chunk, sizeof producer_chunk, producer_sink);
}  // namespace

extern "C" unsigned long tracecodec_produce(unsigned pc, bool taken) {
  if (!taken) firmware_trace.start({.address = pc, .set = code_set::t32, .ctx = {.sf = false}});
  firmware_trace.branch(taken);
  firmware_trace.indirect_branch(pc + 0x40);
  firmware_trace.exception(exception_number::irq, pc, pc + 0x100);
  firmware_trace.flush();
  return producer_bytes;
}
