// SPDX-License-Identifier: Apache-2.0
// Zero heap allocation in the decode and encode paths, with a counting global operator new.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "common.hpp"
#include "flow_model.hpp"

#include <tracecodec/ete/element/compressor.hpp>
#include <tracecodec/ete/element/producer.hpp>
#include <tracecodec/ete/element/reader.hpp>

namespace {
std::atomic<long> g_allocs{0};
}

void* operator new(std::size_t n) {
  ++g_allocs;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
// GCC, inlining these into the flow model's containers, pairs the free() with the builtin
// operator new it assumes: the counting operator new above uses malloc.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

using namespace test;

TEST_CASE("decoding and encoding allocate nothing") {
  std::vector<std::uint8_t> bytes(11, 0);
  bytes.push_back(0x80);
  const std::uint8_t tail[] = {0x01, 0x09, 0x01, 0x16, 0x04, 0x85, 0x00, 0x02, 0x10, 0x08, 0x00,
                               0x80, 0xff, 0xff, 0x31, 0xf7, 0xfd, 0xc2, 0x95, 0xa5, 0x01, 0x02,
                               0xd7, 0xdf, 0x01, 0x06, 0x1d, 0x9a, 0x10, 0x20, 0x30, 0x00, 0x0e,
                               0x21, 0x07, 0xf7};  // ends with a reserved header + garbage
  for (int i = 0; i < 50; ++i) {  // each repeat resynchronizes at its own A-Sync
    bytes.insert(bytes.end(), 11, 0x00);
    bytes.push_back(0x80);
    bytes.insert(bytes.end(), std::begin(tail), std::end(tail));
  }
  const registers regs{0x2801cea1, 0xd0001088, 0, 0x47705a13, 0x1, 0};
  packet ps[64];
  std::uint8_t out[64 * 32];
  const long before = g_allocs.load();
  decoder<> dec(regs);
  unsigned n = 0, errors = 0;
  dec.feed(bytes.data(), 100);  // split input exercises the carry path
  packet p{};
  for (int round = 0; round < 2; ++round) {
    for (;;) {
      const auto s = dec.next(p);
      if (s == decode_status::packet) {
        if (n < 64) ps[n] = p;
        ++n;
      } else if (s == decode_status::error) {
        ++errors;
      } else {
        break;
      }
    }
    dec.feed(bytes.data() + 100, bytes.size() - 100);
  }
  encoder<fixed_config<presets::ete_1_0>> enc;
  std::size_t at = 0;
  for (unsigned i = 0; i < 64 && i < n; ++i) at += enc.encode(ps[i], out + at, sizeof out - at).size;
  at += enc.encode(ps, n < 64 ? n : 64, out + at, sizeof out - at).size;  // the batch call
  const long after = g_allocs.load();
  CHECK(n > 100);
  CHECK(errors > 0);
  CHECK(at > 0);
  CHECK(after == before);
}

TEST_CASE("element decode, resolution and compression allocate nothing") {
  using cfg = fixed_config<presets::ete_1_3_spec>;  // COMMOPT 0, MAXSPEC 15
  static compressor<cfg> comp;
  static element_reader<cfg> reader;
  static std::uint8_t out[1 << 16];
  std::size_t n = 0;
  unsigned committed = 0;
  const long before = g_allocs.load();
  element ti{};
  ti.kind = element_kind::trace_info;
  CHECK(comp.push(ti) == error_code::ok);
  for (int i = 0; i < 2000; ++i) {
    element e{};
    e.kind = element_kind::atom;
    e.taken = (i % 3) != 0;
    e.p0 = true;
    if (comp.push(e) == error_code::buffer_too_small) {
      n += comp.drain(out + n, sizeof out - n);
      CHECK(comp.push(e) == error_code::ok);
    }
    if (i % 7 == 6) {
      element t{};
      t.kind = element_kind::target_address;
      t.address = 0x400000u + 4u * static_cast<unsigned>(i);
      CHECK(comp.push(t) == error_code::ok);
    }
    if (i % 10 == 9) {
      element c{};
      c.kind = element_kind::commit;
      c.count = 10;
      CHECK(comp.push(c) == error_code::ok);
    }
  }
  CHECK(comp.finish(true) == error_code::ok);
  n += comp.drain(out + n, sizeof out - n);
  reader.decode(out, n, [&](const element& e) { committed += e.kind == element_kind::atom; },
                [](const diagnostic&) {});
  unsigned run_atoms = 0;  // atom runs: the same atoms, no allocation either
  reader = element_reader<cfg>{};
  reader.atom_runs(true);
  reader.decode(out, n, [&](const element& e) { run_atoms += e.kind == element_kind::atom ? atom_count(e) : 0; },
                [](const diagnostic&) {});
  CHECK(run_atoms == committed);
  const long after = g_allocs.load();
  CHECK(n > 0);
  CHECK(committed == 2000);
  CHECK(after == before);
}

// The producer API writes into the caller's buffer and hands chunks to a function: no
// allocation on the way.
namespace {
std::size_t producer_bytes = 0;
void count_chunk(void*, const std::uint8_t*, std::size_t n) noexcept { producer_bytes += n; }
}  // namespace
TEST_CASE("the producer allocates nothing") {
  static std::uint8_t buffer[64];
  static producer<fixed_config<presets::ete_1_0>> p(buffer, sizeof buffer, count_chunk);
  const long before = g_allocs.load();
  CHECK(p.start(trace_start{.address = 0x80000000u}) == error_code::ok);
  for (unsigned i = 0; i < 3000; ++i) {
    CHECK(p.branch(i % 5 != 0) == error_code::ok);
    if (i % 9 == 0) CHECK(p.indirect_branch(0x80000000u + 4 * (i % 300)) == error_code::ok);
    if (i % 40 == 0) CHECK(p.exception(exception_number::irq, 0x80000100u, 0x80000400u) == error_code::ok);
    if (i % 50 == 0) CHECK(p.timestamp(1000 + i) == error_code::ok);
    if (i % 700 == 0) CHECK(p.sync(0x80000000u + 4 * i) == error_code::ok);
  }
  CHECK(p.flush() == error_code::ok);
  CHECK(g_allocs.load() == before);
  CHECK(producer_bytes == p.bytes_out());
  CHECK(producer_bytes > 500);
}

// A whole trace as a trace unit would write it (flow_model: a random A64 program, exceptions,
// return stack, timestamps, cycle counts, Trace Info sync points) decoded to program flow, in
// one call and in chunks: the element reader, resolver and analyzer allocate nothing.
TEST_CASE("flow decoding allocates nothing") {
  const registers regs{0x2801cea1, 0xd0001088, 0, 0x47705a13, 0x1811, 0};  // RS, TS, CCI
  flow_model::choices ch{test::splitmix64{42}};
  const flow_model::program p = flow_model::make_program(tracecodec::arm::instruction_set::a64, ch);
  flow_model::run_options o;
  o.instructions = 20000;
  const flow_model::run_result run = flow_model::run(p, regs, ch, o);
  error_code status;
  const std::vector<std::uint8_t> bytes = flow_model::compress(regs, run.stream, status);
  REQUIRE(status == error_code::ok);
  program_image image(p.regions.data(), p.regions.size());
  auto dec = std::make_unique<flow_decoder<>>(regs, image);
  std::size_t instructions = 0, errors = 0, elements = 0;
  auto on_flow = [&](const flow_element& f) {
    ++elements;
    if (f.kind == flow_kind::instruction_range) instructions += f.count;
  };
  auto on_error = [&](const diagnostic&) { ++errors; };
  const long before = g_allocs.load();
  dec->decode(bytes.data(), bytes.size(), on_flow, on_error);
  const std::size_t whole = instructions;
  dec->reset();
  instructions = 0;
  for (std::size_t at = 0; at < bytes.size(); at += 777)
    dec->decode_part(bytes.data() + at, std::min<std::size_t>(777, bytes.size() - at), on_flow, on_error);
  dec->decode_end(on_flow, on_error);
  const long after = g_allocs.load();
  CHECK(errors == 0);
  CHECK(whole == run.executed.size());
  CHECK(instructions == run.executed.size());
  CHECK(elements > 1000);
  CHECK(after == before);
}
