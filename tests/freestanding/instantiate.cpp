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
