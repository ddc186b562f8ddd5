// SPDX-License-Identifier: Apache-2.0
// The pieces a firmware image instantiates, one per build (-DPIECE=...), for the size and
// stack budgets (budget.py): one fixed configuration, each public call as an extern "C"
// function (the entry points whose worst-case stack budget.py computes), called from main()
// with inputs the compiler cannot see so that nothing folds away.
#include <cstddef>
#include <cstdint>

#define PIECE_BASELINE 0
#define PIECE_ENCODER 1
#define PIECE_COMPRESSOR 2
#define PIECE_PRODUCER 3
#define PIECE_DECODER 4

#if PIECE != PIECE_BASELINE
#include <tracecodec/tracecodec.hpp>
#include <tracecodec/ete/element/producer.hpp>
using namespace tracecodec::ete;
using unit = fixed_config<presets::ete_1_0>;
#endif

extern "C" {
// What main() hands the entry points: volatile, so each call stays.
volatile std::uintptr_t input = 0;
volatile std::uint32_t result = 0;
}

namespace {
[[maybe_unused]] std::uint8_t out[256];
}  // namespace

#if PIECE == PIECE_ENCODER
namespace {
encoder<unit> enc;
}
extern "C" std::uint32_t tc_encode(const packet* p, std::uint8_t* o, std::size_t n) {
  return enc.encode(*p, o, n).size;
}
extern "C" std::size_t tc_encode_many(const packet* p, std::size_t count, std::uint8_t* o,
                                      std::size_t n) {
  return enc.encode(p, count, o, n).size;
}
static void use() {
  const auto* p = reinterpret_cast<const packet*>(input);
  result = tc_encode(p, out, sizeof out) + tc_encode_many(p, 2, out, sizeof out);
}

#elif PIECE == PIECE_COMPRESSOR
namespace {
compressor<unit> comp;
}
extern "C" int tc_push(const element* e) { return static_cast<int>(comp.push(*e)); }
extern "C" int tc_finish() { return static_cast<int>(comp.finish(true)); }
extern "C" std::size_t tc_drain(std::uint8_t* o, std::size_t n) { return comp.drain(o, n); }
extern "C" int tc_sync() { return static_cast<int>(comp.sync()); }
static void use() {
  result = static_cast<std::uint32_t>(tc_push(reinterpret_cast<const element*>(input)) +
                                      tc_finish() + static_cast<int>(tc_drain(out, sizeof out)) +
                                      tc_sync());
}

#elif PIECE == PIECE_PRODUCER
namespace {
std::uint8_t chunk[64];
void sink(void*, const std::uint8_t* data, std::size_t n) noexcept { result = result + data[0] + n; }
producer<unit> trace(chunk, sizeof chunk, sink);
}  // namespace
extern "C" int tc_start(const trace_start* s) { return static_cast<int>(trace.start(*s)); }
extern "C" int tc_branch(bool taken) { return static_cast<int>(trace.branch(taken)); }
extern "C" int tc_branches(std::uint32_t bits, unsigned n) {
  return static_cast<int>(trace.branches(bits, n));
}
extern "C" int tc_indirect_branch(std::uint64_t to) { return static_cast<int>(trace.indirect_branch(to)); }
extern "C" int tc_exception(std::uint16_t number, std::uint64_t ret, std::uint64_t handler) {
  return static_cast<int>(trace.exception(number, ret, handler));
}
extern "C" int tc_exception_return(std::uint64_t to) { return static_cast<int>(trace.exception_return(to)); }
extern "C" int tc_context_change(const context* c, std::uint64_t to) {
  return static_cast<int>(trace.context_change(*c, to, code_set::t32));
}
extern "C" int tc_timestamp(std::uint64_t t) { return static_cast<int>(trace.timestamp(t)); }
extern "C" int tc_cycle_count(std::uint32_t c) { return static_cast<int>(trace.cycle_count(c)); }
extern "C" int tc_event(unsigned n) { return static_cast<int>(trace.event(n)); }
extern "C" int tc_sync(std::uint64_t next) { return static_cast<int>(trace.sync(next)); }
extern "C" int tc_flush() { return static_cast<int>(trace.flush()); }
// Every call is kept through its address (an image that calls them all would measure the
// argument set-up of a dozen calls too).
void* const volatile calls[] = {
    reinterpret_cast<void*>(&tc_start),        reinterpret_cast<void*>(&tc_branch),
    reinterpret_cast<void*>(&tc_branches),     reinterpret_cast<void*>(&tc_indirect_branch),
    reinterpret_cast<void*>(&tc_exception),    reinterpret_cast<void*>(&tc_exception_return),
    reinterpret_cast<void*>(&tc_context_change), reinterpret_cast<void*>(&tc_timestamp),
    reinterpret_cast<void*>(&tc_cycle_count),  reinterpret_cast<void*>(&tc_event),
    reinterpret_cast<void*>(&tc_sync),         reinterpret_cast<void*>(&tc_flush)};
static void use() { result = static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(calls[input & 7])); }

#elif PIECE == PIECE_DECODER
namespace {
decoder<unit> dec;
std::uint32_t sum = 0;
}  // namespace
extern "C" void tc_decode_part(const std::uint8_t* data, std::size_t n) {
  dec.decode_part(
      data, n, [](const packet& p) { sum += static_cast<std::uint32_t>(p.size) + p.atoms; },
      [](const diagnostic& d) { sum += static_cast<std::uint32_t>(d.code); });
}
extern "C" void tc_decode_end() {
  dec.decode_end([](const packet& p) { sum += static_cast<std::uint32_t>(p.size) + p.atoms; },
                 [](const diagnostic& d) { sum += static_cast<std::uint32_t>(d.code); });
}
// The pull form: feed() a chunk, next() a packet at a time (into the caller's packet, here
// static as the decoder: the budget is next()'s own stack).
extern "C" int tc_next(const std::uint8_t* data, std::size_t n) {
  static decoder<unit> pull;
  static packet p;
  pull.feed(data, n);
  int packets = 0;
  while (pull.next(p) == decode_status::packet) ++packets;
  return packets;
}
static void use() {
  tc_decode_part(reinterpret_cast<const std::uint8_t*>(input), 64);
  tc_decode_end();
  result = sum + static_cast<std::uint32_t>(tc_next(reinterpret_cast<const std::uint8_t*>(input), 64));
}

#else
static void use() { result = static_cast<std::uint32_t>(input); }
#endif

int main() {
  use();
  return 0;
}
