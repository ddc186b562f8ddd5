// SPDX-License-Identifier: Apache-2.0
// Decode a trace buffer with the trace unit's configuration fixed at compile time. The ID
// register values are a template argument, so the header table and every branch that depends
// on the configuration fold into constants, and an invalid register set does not compile.
// For firmware, or a tool made for one known SoC. The same code runs inside static_assert.
//
// The buffer is a short trace as an ETE 1.0 trace unit (the Arm FVP's, presets::ete_1_0)
// writes it: A-Sync, Trace Info, Trace On, an address with context, atoms E E N, a short
// address, atom N, an IRQ exception and a timestamp. examples/firmware_trace.cpp shows how
// such bytes are produced.
#include <cstdint>
#include <cstdio>

// [readme:decode-buffer]
#include <tracecodec/ete/packet/decoder.hpp>
using namespace tracecodec::ete;

// The trace unit's registers: a preset, or your own
// registers{.trcidr0 = 0x2801cea1, .trcidr2 = 0xd0001088, .trcidr8 = 0,
//           .trcdevarch = 0x47705a13, .trcconfigr = 0x1}.
using unit = fixed_config<presets::ete_1_0>;  // an invalid register set fails to compile

struct summary {
  unsigned packets = 0, atoms = 0, taken = 0, errors = 0;
  std::uint64_t last_address = 0;
};

constexpr summary summarize(const std::uint8_t* data, std::size_t size) {
  decoder<unit> dec;
  summary s;
  dec.decode(data, size,
             [&](const packet& p) {  // p.kind, p.offset, p.address, p.atoms, p.ctx, ...
               ++s.packets;
               if (has_atoms(p.kind))
                 for (unsigned i = 0; i < p.atom_count; ++i) ++s.atoms, s.taken += p.atom(i);
               if (has_address(p.kind)) s.last_address = p.address;
             },
             [&](const diagnostic&) { ++s.errors; });  // d.code, d.offset
  return s;
}
// [/readme:decode-buffer]

constexpr std::uint8_t trace[] = {
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80,  // A-Sync
    0x01, 0x00,                                                              // Trace Info
    0x04,                                                                    // Trace On
    0x85, 0x00, 0x08, 0x08, 0x10, 0x00, 0x80, 0xff, 0xff, 0x31,  // address + context, EL1 NS
    0xfb,                                                        // atoms E E N
    0x95, 0x10,                                                  // short address ...81040
    0xf6,                                                        // atom N
    0x06, 0x1d, 0x9a, 0x00, 0x10, 0x08, 0x10,                    // exception: IRQ
    0x02, 0xe7, 0x8a, 0x8d, 0x09,                                // timestamp 0x1234567
};

// Decoded by the compiler: the same function, the same result.
constexpr summary at_compile_time = summarize(trace, sizeof trace);
static_assert(at_compile_time.packets == 9 && at_compile_time.errors == 0);

int main() {
  const summary s = summarize(trace, sizeof trace);
  std::printf("%u packets, %u atoms (%u taken), %u errors, last address 0x%016llx\n", s.packets,
              s.atoms, s.taken, s.errors, static_cast<unsigned long long>(s.last_address));
  const bool ok = s.packets == 9 && s.atoms == 4 && s.taken == 2 && s.errors == 0 &&
                  s.last_address == 0xffff800010082000u &&
                  s.packets == at_compile_time.packets && s.taken == at_compile_time.taken;
  if (!ok) std::fprintf(stderr, "decode_buffer: unexpected result\n");
  return ok ? 0 : 1;
}
