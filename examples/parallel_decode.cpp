// SPDX-License-Identifier: Apache-2.0
// Decode one large buffer on several threads (hosted: tracecodec/host/ete/parallel.hpp). The
// buffer is split at its A-Sync packets; each segment decodes from its own A-Sync, and the
// results are exactly the serial decode's, in stream order. Two forms:
// - each segment to a consumer of its own (decode_packets_by_segment): for results that
//   merge, such as counts or an AutoFDO/BOLT branch profile; scales with the threads;
// - one consumer, called in stream order (decode_packets): for consumers that need the
//   whole stream in order; delivering decoded packets through memory costs about as much as
//   decoding them, so this form gains little on packets (bench/README.md).
//
// The trace is examples/decode_buffer.cpp's (A-Sync, Trace Info, Trace On, an address with
// context, atoms, an exception, a timestamp), repeated: each copy begins with an A-Sync.
#include <cstdint>
#include <cstdio>
#include <vector>

// [readme:parallel-decode]
#include <tracecodec/host/ete/parallel.hpp>

#include <bit>
using namespace tracecodec::ete;

// What one segment's packets add up to; the segments' sums are added in the end.
struct atom_totals {
  std::uint64_t atoms = 0, taken = 0, errors = 0;
  void operator()(const packet& p) {
    if (has_atoms(p.kind)) atoms += p.atom_count, taken += std::popcount(p.atoms);
  }
  void operator()(const diagnostic&) { ++errors; }
};

atom_totals count_atoms(const registers& unit, const std::vector<std::uint8_t>& trace) {
  parallel::options o;  // o.threads = 0: one per core; o.segment_bytes: the split spacing
  atom_totals total;
  for (const atom_totals& part :
       parallel::decode_packets_by_segment(unit, trace.data(), trace.size(), atom_totals{}, o)) {
    total.atoms += part.atoms;
    total.taken += part.taken;
    total.errors += part.errors;
  }
  return total;
}
// [/readme:parallel-decode]

int main() {
  static constexpr std::uint8_t one[] = {
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80,  // A-Sync
      0x01, 0x00,                                                              // Trace Info
      0x04,                                                                    // Trace On
      0x85, 0x00, 0x08, 0x08, 0x10, 0x00, 0x80, 0xff, 0xff, 0x31,  // address + context
      0xfb,                                                        // atoms E E N
      0x95, 0x10,                                                  // short address
      0xf6,                                                        // atom N
      0x06, 0x1d, 0x9a, 0x00, 0x10, 0x08, 0x10,                    // exception: IRQ
      0x02, 0xe7, 0x8a, 0x8d, 0x09,                                // timestamp
  };
  std::vector<std::uint8_t> trace;
  for (int i = 0; i < 100000; ++i) trace.insert(trace.end(), one, one + sizeof one);

  const atom_totals by_segment = count_atoms(presets::ete_1_0, trace);

  // The same, one consumer in stream order, and serially.
  atom_totals ordered, serial;
  parallel::decode_packets(presets::ete_1_0, trace.data(), trace.size(),
                           [&](const packet& p) { ordered(p); },
                           [&](const diagnostic& d) { ordered(d); });
  decoder<> dec(presets::ete_1_0);
  dec.decode(trace.data(), trace.size(), [&](const packet& p) { serial(p); },
             [&](const diagnostic& d) { serial(d); });

  std::printf("%llu atoms (%llu taken), %llu errors\n",
              static_cast<unsigned long long>(by_segment.atoms),
              static_cast<unsigned long long>(by_segment.taken),
              static_cast<unsigned long long>(by_segment.errors));
  const bool ok = by_segment.atoms == 400000 && by_segment.taken == 200000 &&
                  by_segment.errors == 0 && ordered.atoms == serial.atoms &&
                  ordered.taken == serial.taken && by_segment.atoms == serial.atoms;
  if (!ok) std::fprintf(stderr, "parallel_decode: unexpected result\n");
  return ok ? 0 : 1;
}
