// SPDX-License-Identifier: Apache-2.0
// Decode RISC-V E-Trace te_inst packets with the encoder parameters fixed at compile time, in
// the Siemens encapsulation with zero-run boundary recovery (a run of 2^N zero bytes before
// each start packet lets the decoder find packet boundaries again after lost bytes). The
// trace is made here by the E-Trace encoder: a start packet, a branch map, an address.
#include <cstdint>
#include <cstdio>
#include <initializer_list>

#include <tracecodec/etrace/etrace.hpp>

namespace {

namespace et = tracecodec::etrace;
using params = et::fixed_config<et::presets::rv64_full>;
constexpr et::encapsulation zero_runs{.recovery = et::boundary_recovery::zero_run};

std::uint8_t trace[512];
std::size_t used = 0;

bool produce() {
  et::encoder<params> enc{zero_runs};
  et::te_inst start{};
  start.format = et::format::sync;
  start.subformat = static_cast<std::uint8_t>(et::sync_subformat::start);
  start.privilege = 3;  // machine mode
  start.address = 0x80000000;
  et::te_inst branches{};
  branches.format = et::format::diff_delta;
  branches.branches = 5;
  branches.branch_map = 0x1b;  // taken, taken, not, taken, taken (oldest in bit 0)
  branches.address = 0x40;     // difference from the previous address
  for (const et::te_inst& p : {start, branches}) {
    const et::encode_result r = enc.encode(p, et::header{}, trace + used, sizeof trace - used);
    if (r.error != et::error_code::ok) return false;
    used += r.size;
  }
  return true;
}

}  // namespace

int main() {
  if (!produce()) return 1;
  const std::uint8_t* data = trace;
  const std::size_t size = used;
  unsigned packets = 0, errors = 0;
  std::uint64_t start_address = 0;
  std::uint32_t branch_map = 0;
  auto use = [&](const et::packet& p) {
    ++packets;
    if (p.inst.format == et::format::sync) start_address = p.inst.address;
    if (p.inst.format == et::format::diff_delta) branch_map = p.inst.branch_map;
  };
  // [readme:etrace]
  namespace et = tracecodec::etrace;
  et::stream_decoder<et::fixed_config<et::presets::rv64_full>> dec{
      et::encapsulation{.recovery = et::boundary_recovery::zero_run}};
  dec.decode(data, size, [&](const et::packet& p) { use(p); /* p.inst.format, p.inst.address, ... */ },
             [&](const et::diagnostic&) { ++errors; /* d.code, d.offset */ });
  // [/readme:etrace]
  std::printf("%zu bytes: %u te_inst packets, start at 0x%llx, branch map 0x%x, %u errors\n", size,
              packets, static_cast<unsigned long long>(start_address), branch_map, errors);
  const bool ok = packets == 2 && errors == 0 && start_address == 0x80000000 && branch_map == 0x1b;
  if (!ok) std::fprintf(stderr, "etrace_decode: unexpected result\n");
  return ok ? 0 : 1;
}
