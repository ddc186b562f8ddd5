// SPDX-License-Identifier: Apache-2.0
// Split a CoreSight formatted capture (an ETR/ETB buffer, a TPIU or DSTREAM capture) into the
// byte streams of its trace sources, by trace ID. Each stream then goes to that source's own
// decoder (for ETE: an ete::decoder or element_reader per ID, fed with decode_part).
#include <cstdint>
#include <cstdio>

// [readme:deformat]
#include <tracecodec/coresight/deformatter.hpp>
using namespace tracecodec;

// Two 16-byte frames from a memory buffer: ID 0x10 (byte 0: 0x21 = 0x10 << 1 | 1), data, ID
// 0x11 at byte 6, then ID 0x10 at byte 2 of frame 2; byte 15 holds bit 0 of each even data
// byte and, for ID bytes, whether the change waits one byte.
const std::uint8_t capture[] = {
    0x21, 0x95, 0xae, 0x31, 0xf6, 0x95, 0x23, 0x84, 0x26, 0xf6, 0x94, 0x00, 0x02, 0x03, 0x04, 0x12,
    0x04, 0x05, 0x21, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x00};

struct per_source {
  std::uint8_t bytes[2][32];
  std::size_t size[2] = {};
  void operator()(std::uint8_t id, const std::uint8_t* p, std::size_t n, std::uint64_t offset) {
    (void)offset;  // the input offset of p[0]
    if (id != 0x10 && id != 0x11) return;  // a source we do not decode
    for (std::size_t i = 0; i < n; ++i) bytes[id - 0x10][size[id - 0x10]++] = p[i];
  }
  void operator()(const coresight::diagnostic& d) {
    std::printf("%s at %llu (%llu bytes)\n", coresight::error_name(d.code),
                static_cast<unsigned long long>(d.offset), static_cast<unsigned long long>(d.length));
  }
};

int run() {
  coresight::deformatter d(coresight::frame_format::memory_aligned);  // or tpiu, dstream
  per_source s;
  d.decode_part(capture, 20, s, s);  // chunks may split frames anywhere
  d.decode_part(capture + 20, sizeof capture - 20, s, s);
  d.decode_end(s, s);
  std::printf("ID 0x10: %zu bytes, ID 0x11: %zu bytes\n", s.size[0], s.size[1]);
  return s.size[0] == 17 && s.size[1] == 10 && s.bytes[0][1] == 0xaf ? 0 : 1;  // 0xae | aux bit 1
}
// [/readme:deformat]

int main() { return run(); }
