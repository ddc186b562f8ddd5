// SPDX-License-Identifier: Apache-2.0
// Decode the trace of several sources in one CoreSight formatted capture: a decode tree splits
// the frames by trace ID and hands each source's bytes to its own decoder (here packet
// decoders for two ETMv4 cores; element readers or flow decoders work the same way).
#include <cstdint>
#include <cstdio>

// [readme:decode_tree]
#include <tracecodec/coresight/decode_tree.hpp>
#include <tracecodec/ete/packet/decoder.hpp>
#include <tracecodec/host/ete/format.hpp>  // kind_name
using namespace tracecodec;

// Three frames of a trace buffer: ID 0x10 (byte 0: 0x10 << 1 | 1 = 0x21) and 14 zeros; 0x80
// (the end of its A-Sync), Trace On (0x04), ID 0x11 (0x23) and 12 zeros; 0x80, Trace On, ID
// 0x10, Trace On, the null ID 0 (padding). Byte 15 (bit 0 of the even data bytes) is 0.
const std::uint8_t capture[] = {
    0x21, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0x80, 0x04, 0x23, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0x80, 0x04, 0x21, 0x04, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};

int run() {
  using packet_decoder = ete::decoder<ete::runtime_config>;
  packet_decoder cpu0(ete::presets::etmv4_0_juno), cpu1(ete::presets::etmv4_0_juno);
  coresight::decode_tree<packet_decoder> tree(coresight::frame_format::memory_aligned);
  tree.add_source(0x10, cpu0);  // each source: its trace ID (TRCTRACEIDR) and its decoder
  tree.add_source(0x11, cpu1);
  int packets = 0;
  tree.decode(
      capture, sizeof capture,
      [&](const coresight::item_origin& o, const ete::packet& p) {
        // p.offset: where the packet starts in the capture; o.stream_offset: in its source
        std::printf("ID 0x%x: %s at %llu (byte %llu of its stream)\n", o.id, ete::kind_name(p.kind),
                    static_cast<unsigned long long>(p.offset),
                    static_cast<unsigned long long>(o.stream_offset));
        ++packets;
      },
      [&](const coresight::item_origin& o, const ete::diagnostic& d) {
        std::printf("ID 0x%x: %s\n", o.id, ete::error_name(d.code));
      },
      [&](const coresight::diagnostic& d) {  // the deformatter's notices and errors
        std::printf("frames: %s at %llu\n", coresight::error_name(d.code),
                    static_cast<unsigned long long>(d.offset));
      });
  return packets == 5 ? 0 : 1;  // two A-Syncs, three Trace Ons
}
// [/readme:decode_tree]

int main() { return run(); }
