// SPDX-License-Identifier: Apache-2.0
// The ETMv4 corpus as the tests read it: where it is, and a snapshot buffer split into one
// byte stream per trace ID, with OpenCSD's index (Idx) of every byte (test_packets.cpp,
// test_flow.cpp).
#pragma once

#include <tracecodec/coresight/deformatter.hpp>
#include <tracecodec/host/ete/snapshot.hpp>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace test::etmv4 {

namespace snapshot = tracecodec::ete::snapshot;
namespace cs = tracecodec::coresight;

inline std::string etmv4_dir() {
  const char* d = std::getenv("TRACECODEC_ETMV4_DIR");
  return d ? d : "../shared/conformance/etmv4";
}

// One trace ID's bytes, with OpenCSD's index of each byte.
struct id_stream {
  std::vector<std::uint8_t> bytes;
  std::vector<std::uint64_t> index;
};

// OpenCSD's index of a deformatted byte: each run of one ID's data inside a frame counts from
// the frame's start, or from the ID byte that switched to this ID inside the frame; DSTREAM
// footers are not counted (see ../shared/conformance/etmv4/README.md).
inline std::map<int, id_stream> deformat(const snapshot::buffer& b) {
  std::map<int, id_stream> m;
  if (b.format == snapshot::buffer_format::source_data) {
    id_stream& s = m[static_cast<int>(b.trctraceidr)];
    s.bytes = b.data;
    for (std::size_t i = 0; i < b.data.size(); ++i) s.index.push_back(i);
    return m;
  }
  const bool dstream = b.format == snapshot::buffer_format::dstream_coresight;
  auto stream_pos = [&](std::uint64_t raw) { return dstream ? raw - 8 * (raw / 512) : raw; };
  // Frame starts, in stream positions: memory-aligned frames sit every 16 bytes; a DSTREAM
  // capture's frames follow FSYNCs, so they are found from the runs: a run that starts right
  // after an ID byte of the same ID began at that ID byte.
  cs::deformatter d(dstream ? cs::frame_format::dstream : cs::frame_format::memory_aligned);
  d.decode(
      b.data.data(), b.data.size(),
      [&](std::uint8_t id, const std::uint8_t* p, std::size_t n, std::uint64_t at) {
        id_stream& s = m[id];
        const std::uint64_t pos = stream_pos(at);
        std::uint64_t base = pos;
        auto id_byte = [&](std::uint64_t raw) {
          return raw < b.data.size() && (b.data[raw] & 1u) && (b.data[raw] >> 1) == id;
        };
        if (!dstream) {
          // The ID byte that switched to this ID: the nearest one of this ID before the run
          // in its frame (an ID change "after the next byte" puts other bytes between).
          const std::uint64_t frame = at & ~std::uint64_t{15};
          base = frame;  // else the frame start (a delayed ID byte 0 leaves byte 1 to the old ID)
          for (std::uint64_t q = at; q > frame;) {
            q = (q - 1) & ~std::uint64_t{1};
            if (id_byte(q)) {
              base = q;
              break;
            }
          }
        } else if (at >= 1 && id_byte(at - 1) && ((at - 1) % 512) < 504) {
          base = pos - 1;
        } else if (at >= 2 && id_byte(at - 2) && b.data[at - 1] != 0x7f && ((at - 2) % 512) < 504 &&
                   (at % 2) == 0) {
          base = pos - 2;
        }
        for (std::size_t k = 0; k < n; ++k) {
          s.bytes.push_back(p[k]);
          s.index.push_back(base + k);
        }
      },
      [&](const cs::diagnostic&) {});
  return m;
}

}  // namespace test::etmv4
