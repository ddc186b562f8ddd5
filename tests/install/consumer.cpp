// SPDX-License-Identifier: Apache-2.0
// A downstream program: finds tracecodec through pkg-config or as a meson subproject.
#include <tracecodec/tracecodec.hpp>

int main() {
  using namespace tracecodec::ete;
  const unsigned char trace[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x01, 0x00, 0xf7};
  decoder<fixed_config<presets::ete_1_0>> d;
  unsigned packets = 0;
  d.decode(trace, sizeof trace, [&](const packet&) { ++packets; }, [](const diagnostic&) {});
  return packets == 3 ? 0 : 1;
}
