// SPDX-License-Identifier: Apache-2.0
// Instantiates the E-Trace payload codec, stream decoder and encoder, with a fixed and a
// run-time configuration, as firmware would: the freestanding check compiles the template
// bodies and looks for allocation, exception and RTTI symbols.
#include <tracecodec/etrace/etrace.hpp>

namespace et = tracecodec::etrace;
using rv32 = et::fixed_config<et::presets::rv32>;

extern "C" unsigned etrace_decode(const unsigned char* data, unsigned size) {
  et::stream_decoder<rv32> fixed{et::encapsulation{.recovery = et::boundary_recovery::zero_run}};
  et::stream_decoder<> runtime{et::runtime_config{et::presets::rv64_full},
                               et::encapsulation{.recovery = et::boundary_recovery::blocks}};
  unsigned n = 0;
  fixed.decode(data, size, [&](const et::packet& p) { n += p.size; }, [&](const et::diagnostic&) { ++n; });
  runtime.decode(data, size, [&](const et::packet& p) { n += p.inst.branches; },
                 [&](const et::diagnostic& d) { n += static_cast<unsigned>(d.code); });
  return n;
}

extern "C" unsigned etrace_encode(unsigned long long address, unsigned char* out, unsigned capacity) {
  static et::encoder<rv32> fixed{et::encapsulation{.recovery = et::boundary_recovery::zero_run}};
  static et::encoder<> runtime{et::runtime_config{et::presets::rv64_full}};
  et::te_inst p{};
  p.format = et::format::addr_only;
  p.address = address & 0xfffffffe;
  const et::encode_result a = fixed.encode(p, {}, out, capacity);
  const et::encode_result b = runtime.encode(p, {.has_timestamp = true}, out + a.size, capacity - a.size);
  return static_cast<unsigned>(a.size + b.size);
}
