// SPDX-License-Identifier: Apache-2.0
// Trace from firmware with the producer API: the program says what it did, one call per event
// (a branch taken or not, an indirect branch, an interrupt and its return, a timestamp), and
// the producer writes the shortest ETE stream for the trace unit it claims to be into a small
// buffer, handing each full chunk to a function (a UART, a DMA, a ring buffer; here an array).
// No heap, no exceptions; under -Os each call's stack stays under 256 bytes (README, Firmware).
// examples/firmware/ runs the same on an emulated Cortex-M under QEMU.
//
// The example checks itself on the host: it decodes what it wrote (which firmware would leave
// to ete-dump) and compares the elements with the events it traced.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>

#include <tracecodec/ete/element/reader.hpp>

// [readme:producer]
#include <tracecodec/ete/element/producer.hpp>
using namespace tracecodec::ete;

using unit = fixed_config<presets::ete_1_0>;  // a decoder needs these registers too

std::uint8_t log_area[4096];  // where the chunks end up: a UART, a DMA, a ring buffer ...
std::size_t logged = 0;
void to_log(void*, const std::uint8_t* data, std::size_t size) noexcept {
  for (std::size_t i = 0; i < size && logged < sizeof log_area; ++i) log_area[logged++] = data[i];
}

std::uint8_t chunk[64];                          // the producer writes here
producer<unit> trace(chunk, sizeof chunk, to_log);  // every call returns an error_code

void traced_program() {
  constexpr context thread{.el = 0, .ns = true, .sf = false};  // Cortex-M: AArch32, T32
  trace.start({.address = 0x8000, .set = code_set::t32, .ctx = thread});
  for (int i = 0; i < 10; ++i) trace.branch(i < 9);  // a loop's branch: taken 9 times, then not
  trace.indirect_branch(0x8201);                      // BLX r3 (bit 0: T32, dropped)
  trace.timestamp(1000);
  trace.exception(exception_number::irq, 0x8204, 0x9000);  // interrupted before 0x8204
  trace.exception_return(0x8204);                         // and back
  trace.sync(0x8204);  // now and then: a decoder can start here
  trace.flush();       // the rest of the chunk goes to to_log
}
// [/readme:producer]

// One line per element, as the check below compares them.
void describe(const element& e, char* out, std::size_t size) {
  const char* name = element_name(e.kind);
  switch (e.kind) {
    case element_kind::atom: std::snprintf(out, size, "atom %c", e.taken ? 'E' : 'N'); break;
    case element_kind::target_address:
    case element_kind::exception:
      std::snprintf(out, size, "%s 0x%llx", name, static_cast<unsigned long long>(e.address));
      break;
    case element_kind::timestamp:
      std::snprintf(out, size, "%s %llu", name, static_cast<unsigned long long>(e.timestamp));
      break;
    default: std::snprintf(out, size, "%s", name); break;
  }
}

int main() {
  traced_program();
  if (trace.status() != error_code::ok) return 1;

  // What the calls stand for (D2): start, the loop, BLX, the timestamp, the interrupt and its
  // return (an E atom and the address), the sync point.
  const char* const want[] = {
      "trace_info", "trace_on", "context", "target_address 0x8000",
      "atom E", "atom E", "atom E", "atom E", "atom E", "atom E", "atom E", "atom E", "atom E",
      "atom N", "atom E", "target_address 0x8200", "timestamp 1000", "exception 0x8204",
      "target_address 0x9000", "atom E", "target_address 0x8204", "trace_info", "context",
      "target_address 0x8204"};
  static element_reader<unit> reader;
  std::size_t at = 0, errors = 0;
  bool ok = true;
  reader.decode(
      log_area, logged,
      [&](const element& e) {
        char line[64];
        describe(e, line, sizeof line);
        if (at == std::size(want) || std::strcmp(line, want[at]) != 0) {
          std::printf("element %zu: %s, expected %s\n", at, line,
                      at < std::size(want) ? want[at] : "nothing");
          ok = false;
        }
        ++at;
      },
      [&](const diagnostic&) { ++errors; });
  ok = ok && at == std::size(want) && errors == 0;
  std::printf("%zu trace bytes for %zu elements: %s\n", logged, std::size(want),
              ok ? "decoded back as traced" : "MISMATCH");
  return ok ? 0 : 1;
}
