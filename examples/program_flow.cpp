// SPDX-License-Identifier: Apache-2.0
// Reconstruct the executed instructions (D9.5 program flow) from trace and the program's
// memory. The program is six A64 instructions, a loop that calls a function three times; the
// trace is what an ETE 1.0 trace unit writes while it runs, made here with the packet
// encoder (examples/firmware_trace.cpp shows producing trace in firmware).
#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

#include <tracecodec/ete/packet/encoder.hpp>

// [readme:program-flow]
#include <tracecodec/ete/flow/decoder.hpp>
using namespace tracecodec::ete;

// The memory the traced code ran from: regions you own (file contents, a DSO, a dump).
constexpr std::uint32_t code[] = {
    0xd2800060,  // 0x400000  mov  x0, #3
    0x94000007,  // 0x400004  bl   0x400020
    0xf1000400,  // 0x400008  subs x0, x0, #1
    0x54ffffc1,  // 0x40000c  b.ne 0x400004
    0x14000000,  // 0x400010  b    .
    0xd503201f, 0xd503201f, 0xd503201f,
    0xd503201f,  // 0x400020  nop
    0xd65f03c0,  // 0x400024  ret
};

struct totals {
  unsigned ranges = 0, instructions = 0, calls = 0, errors = 0;
};

totals follow(const registers& regs, const std::uint8_t* trace, std::size_t size) {
  const memory_region regions[] = {
      {0x400000, reinterpret_cast<const std::uint8_t*>(code), sizeof code, memory_space::any}};
  program_image image(regions, 1);
  // ~1.7 MiB with its block cache, atom memos and queue: on the heap (or static), not on the stack.
  auto flow = std::make_unique<flow_decoder<>>(regs, image);
  totals t;
  flow->decode(trace, size,
              [&](const flow_element& f) {
                if (f.kind != flow_kind::instruction_range) return;  // exceptions, context, ...
                ++t.ranges;
                t.instructions += f.count;  // [f.address, f.end): f.count instructions
                if (f.last_subtype == tracecodec::arm::instruction_subtype::link && f.taken) ++t.calls;
                std::printf("0x%llx-0x%llx %u instructions, last %s\n",
                            static_cast<unsigned long long>(f.address),
                            static_cast<unsigned long long>(f.end), f.count,
                            f.taken ? "taken" : "not taken");
              },
              [&](const diagnostic&) { ++t.errors; });
  return t;
}
// [/readme:program-flow]

// The trace of that run: where it starts, an atom per branch (E taken, N not), the return
// address after each RET (no return stack: TRCCONFIGR.RS is 0).
std::vector<std::uint8_t> make_trace(const registers& regs) {
  encoder<runtime_config> enc(regs);
  std::vector<std::uint8_t> out;
  auto put = [&](packet p) {
    std::uint8_t buf[32];
    const encode_result r = enc.encode(p, buf, sizeof buf);
    out.insert(out.end(), buf, buf + (r ? r.size : 0));
  };
  auto kind = [](packet_kind k) {
    packet p{};
    p.kind = k;
    return p;
  };
  auto atom = [&](bool taken) {
    packet p = kind(packet_kind::atom_f1);
    p.atom_count = 1;
    p.atoms = taken ? 1u : 0u;
    put(p);
  };
  auto address = [&](std::uint64_t a) {
    packet p = kind(packet_kind::address_64_is0);
    p.address = a;
    put(p);
  };
  put(kind(packet_kind::async));
  put(kind(packet_kind::trace_info));
  put(kind(packet_kind::trace_on));
  packet start = kind(packet_kind::address_ctx_64_is0);
  start.address = 0x400000;
  start.ctx.el = 0;
  start.ctx.ns = true;
  start.ctx.sf = true;
  put(start);
  for (int i = 0; i < 3; ++i) {
    atom(true);  // bl
    atom(true);  // ret ...
    address(0x400008);  // ... to here
    atom(i < 2);  // b.ne: back twice, then falls through
  }
  atom(true);  // b .
  return out;
}

int main() {
  const registers regs = presets::ete_1_0;
  const std::vector<std::uint8_t> trace = make_trace(regs);
  const totals t = follow(regs, trace.data(), trace.size());
  std::printf("%u ranges, %u instructions, %u calls, %u errors\n", t.ranges, t.instructions,
              t.calls, t.errors);
  // mov bl | nop ret | subs b.ne | bl | nop ret | subs b.ne | bl | nop ret | subs b.ne | b .
  const bool ok = t.ranges == 10 && t.instructions == 17 && t.calls == 3 && t.errors == 0;
  if (!ok) std::fprintf(stderr, "program_flow: unexpected result\n");
  return ok ? 0 : 1;
}
