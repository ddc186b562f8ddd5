// SPDX-License-Identifier: Apache-2.0
// Produce ETE trace from firmware: software instrumentation, a trace-unit model or a
// bare-metal test writes packets the way a trace unit would, so that the usual tools
// (ete-dump, OpenCSD, perf) read them. The encoder is configured at compile time and keeps
// the address history, timestamp and context itself: the caller hands it full values and the
// packet form it wants. No heap, no exceptions: the codec headers build with
// arm-none-eabi-g++ -ffreestanding. Packets go into a static buffer.
//
// The example checks itself by decoding the buffer (which firmware would leave to the host)
// and by replacing operator new: the encoder must never call it.
#include <cstdio>
#include <cstdlib>
#include <new>

#include <tracecodec/ete/packet/decoder.hpp>

// [readme:firmware]
#include <tracecodec/ete/packet/encoder.hpp>
using namespace tracecodec::ete;

using unit = fixed_config<presets::ete_1_1_tsmark>;  // the trace unit the trace claims to be

static encoder<unit> enc;               // 80 bytes of state
static std::uint8_t trace_buffer[256];  // a RAM buffer, a FIFO, a DMA region, ...
static std::size_t used = 0;

// Appends one packet; false if it cannot be encoded (nothing is written then).
static bool emit(const packet& p) {
  const encode_result r = enc.encode(p, trace_buffer + used, sizeof trace_buffer - used);
  used += r.size;  // r.size bytes, or r.error: buffer_too_small, unencodable, ...
  return static_cast<bool>(r);
}
static packet make(packet_kind kind, std::uint64_t address = 0) {
  packet p{};
  p.kind = kind;
  p.address = address;
  return p;
}

static bool trace_start(std::uint64_t pc) {  // A-Sync, Trace Info, Trace On, where we are
  packet at = make(packet_kind::address_ctx_64_is0, pc);
  at.ctx = context{.el = 1, .ns = true, .sf = true};
  return emit(make(packet_kind::async)) && emit(make(packet_kind::trace_info)) &&
         emit(make(packet_kind::trace_on)) && emit(at);
}
// 1-3 atoms: formats 1-3; more: format 6, whose patterns the encoder checks (unencodable).
static bool trace_branches(std::uint32_t taken_bits, unsigned count) {  // oldest in bit 0
  packet p = make(count == 1 ? packet_kind::atom_f1 : count == 2 ? packet_kind::atom_f2
                  : count == 3 ? packet_kind::atom_f3 : packet_kind::atom_f6);
  p.atoms = taken_bits;
  p.atom_count = static_cast<std::uint8_t>(count);
  return emit(p);
}
static bool trace_target(std::uint64_t pc) {  // only the low bits that changed are emitted
  return emit(make(packet_kind::address_short_is0, pc));
}
static bool trace_timestamp(std::uint64_t ts) {  // only the bits that changed are emitted
  packet p = make(packet_kind::timestamp);
  p.timestamp = ts;
  return emit(p);
}
// [/readme:firmware]

static unsigned long allocations = 0;
void* operator new(std::size_t n) {
  ++allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

int main() {
  bool ok = trace_start(0xffff800010081000u) && trace_branches(0b011, 3) &&
            trace_target(0xffff800010081040u) && trace_timestamp(0x1234567) &&
            trace_branches(0b011111, 6) && trace_target(0xffff800010081000u) &&
            trace_timestamp(0x1234600);
  // An atom pattern format 6 cannot express (E E N E E N) is refused, and nothing is written.
  const std::size_t before = used;
  ok = ok && !trace_branches(0b011011, 6) && used == before;

  // Many packets at once: stops at the first one that cannot be encoded (m.packets were).
  packet more[3] = {make(packet_kind::timestamp_marker), make(packet_kind::atom_f1),
                    make(packet_kind::address_exact, 0xffff800010081040u)};
  more[1].atom_count = 1;  // N
  more[2].index = 1;       // the address history's entry 1
  const encode_many_result m = enc.encode(more, 3, trace_buffer + used, sizeof trace_buffer - used);
  used += m.size;
  ok = ok && m && m.packets == 3 && allocations == 0;

  // The host side: decode what the firmware wrote.
  decoder<unit> dec;
  unsigned packets = 0, atoms = 0, errors = 0;
  std::uint64_t last_address = 0, last_timestamp = 0;
  dec.decode(trace_buffer, used,
             [&](const packet& p) {
               ++packets;
               if (has_atoms(p.kind)) atoms += p.atom_count;
               if (has_address(p.kind)) last_address = p.address;
               if (p.kind == packet_kind::timestamp) last_timestamp = p.timestamp;
             },
             [&](const diagnostic&) { ++errors; });
  std::printf("firmware wrote %zu bytes: %u packets, %u atoms, %u errors\n", used, packets, atoms,
              errors);
  ok = ok && packets == 13 && atoms == 10 && errors == 0 && last_address == 0xffff800010081040u &&
       last_timestamp == 0x1234600;
  if (!ok) std::fprintf(stderr, "firmware_trace: unexpected result\n");
  return ok ? 0 : 1;
}
