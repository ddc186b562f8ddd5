// SPDX-License-Identifier: Apache-2.0
// Program flow: the fixed configuration against the run-time one, memory that is not there
// (address_not_accessible), the reader callback form of the image, and the walk limit.
#include <doctest/doctest.h>

#include <tracecodec/ete/flow/decoder.hpp>
#include <tracecodec/ete/packet/encoder.hpp>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace tracecodec::ete;

namespace {

// A loop calling a function three times (examples/program_flow.cpp).
constexpr std::uint32_t loop_code[] = {
    0xd2800060,  // 0x400000  mov  x0, #3
    0x94000007,  // 0x400004  bl   0x400020
    0xf1000400,  // 0x400008  subs x0, x0, #1
    0x54ffffc1,  // 0x40000c  b.ne 0x400004
    0x14000000,  // 0x400010  b    .
    0xd503201f, 0xd503201f, 0xd503201f,
    0xd503201f,  // 0x400020  nop
    0xd65f03c0,  // 0x400024  ret
};
constexpr registers unit_regs = presets::ete_1_0;

struct trace_builder {
  encoder<runtime_config> enc{unit_regs};
  std::vector<std::uint8_t> bytes;
  void put(const packet& p) {
    std::uint8_t buf[32];
    const encode_result r = enc.encode(p, buf, sizeof buf);
    REQUIRE(r);
    bytes.insert(bytes.end(), buf, buf + r.size);
  }
  void kind(packet_kind k) {
    packet p{};
    p.kind = k;
    put(p);
  }
  void start(std::uint64_t address) {
    kind(packet_kind::async);
    kind(packet_kind::trace_info);
    kind(packet_kind::trace_on);
    packet p{};
    p.kind = packet_kind::address_ctx_64_is0;
    p.address = address;
    p.ctx.ns = true;
    p.ctx.sf = true;
    put(p);
  }
  void atom(bool taken) {
    packet p{};
    p.kind = packet_kind::atom_f1;
    p.atom_count = 1;
    p.atoms = taken ? 1u : 0u;
    put(p);
  }
  void address(std::uint64_t a) {
    packet p{};
    p.kind = packet_kind::address_64_is0;
    p.address = a;
    put(p);
  }
};

std::vector<std::uint8_t> loop_trace() {
  trace_builder t;
  t.start(0x400000);
  for (int i = 0; i < 3; ++i) {
    t.atom(true);
    t.atom(true);
    t.address(0x400008);
    t.atom(i < 2);
  }
  t.atom(true);
  return t.bytes;
}

template <class Decoder>
std::vector<flow_element> decode_all(Decoder& d, const std::vector<std::uint8_t>& trace) {
  std::vector<flow_element> out;
  unsigned errors = 0;
  d.decode(trace.data(), trace.size(), [&](const flow_element& f) { out.push_back(f); },
           [&](const diagnostic&) { ++errors; });
  CHECK(errors == 0);
  return out;
}

const std::uint8_t* code_bytes() { return reinterpret_cast<const std::uint8_t*>(loop_code); }

}  // namespace

TEST_CASE("flow: a fixed configuration gives what the run-time one gives") {
  const std::vector<std::uint8_t> trace = loop_trace();
  const memory_region regions[] = {{0x400000, code_bytes(), sizeof loop_code, memory_space::any}};
  program_image image(regions, 1);
  auto fixed = std::make_unique<flow_decoder<fixed_config<unit_regs>>>(image);
  auto runtime = std::make_unique<flow_decoder<>>(unit_regs, image);
  const std::vector<flow_element> a = decode_all(*fixed, trace), b = decode_all(*runtime, trace);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i] == b[i]);
  unsigned ranges = 0, instructions = 0;
  for (const flow_element& f : a)
    if (f.kind == flow_kind::instruction_range) ++ranges, instructions += f.count;
  CHECK(ranges == 10);
  CHECK(instructions == 17);
  CHECK(a.front().kind == flow_kind::no_sync);
  CHECK(a.back().kind == flow_kind::end_of_trace);
}

TEST_CASE("flow: memory that is not there gives address_not_accessible, then waits for an address") {
  const std::vector<std::uint8_t> trace = loop_trace();
  // Only the function at 0x400020 is in the image: the loop's code is missing.
  const memory_region regions[] = {
      {0x400020, code_bytes() + 0x20, sizeof loop_code - 0x20, memory_space::any}};
  program_image image(regions, 1);
  auto d = std::make_unique<flow_decoder<>>(unit_regs, image);
  const std::vector<flow_element> out = decode_all(*d, trace);
  unsigned nacc = 0;
  for (const flow_element& f : out) {
    if (f.kind == flow_kind::address_not_accessible) {
      ++nacc;
      CHECK(f.address >= 0x400000);
      CHECK(f.address < 0x400020);
      CHECK(f.space == memory_space::el1n);  // EL0, Non-secure
    }
    if (f.kind == flow_kind::instruction_range) CHECK(f.address >= 0x400020);  // nothing invented
  }
  // The first atom, then the atom after each of the three returns (to 0x400008, missing).
  CHECK(nacc == 4);
}

namespace {
struct served {
  const std::uint8_t* data;
  std::size_t size;
  std::uint64_t base;
  unsigned calls = 0;
  std::size_t chunk = ~std::size_t{0};  // at most this many bytes per call
};
std::size_t serve(void* context, std::uint64_t address, std::uint8_t, std::uint8_t* out,
                  std::size_t size) noexcept {
  auto* s = static_cast<served*>(context);
  ++s->calls;
  if (address < s->base || address - s->base >= s->size) return 0;
  const std::size_t at = static_cast<std::size_t>(address - s->base);
  std::size_t n = s->size - at < size ? s->size - at : size;
  if (n > s->chunk) n = s->chunk;
  std::memcpy(out, s->data + at, n);
  return n;
}
}  // namespace

TEST_CASE("flow: the reader callback serves what a region serves") {
  const std::vector<std::uint8_t> trace = loop_trace();
  const memory_region regions[] = {{0x400000, code_bytes(), sizeof loop_code, memory_space::any}};
  program_image with_region(regions, 1);
  served s{code_bytes(), sizeof loop_code, 0x400000};
  program_image with_reader;
  with_reader.set_reader(serve, &s);
  auto a = std::make_unique<flow_decoder<>>(unit_regs, with_region);
  auto b = std::make_unique<flow_decoder<>>(unit_regs, with_reader);
  const std::vector<flow_element> x = decode_all(*a, trace), y = decode_all(*b, trace);
  REQUIRE(x.size() == y.size());
  for (std::size_t i = 0; i < x.size(); ++i) CHECK(x[i] == y[i]);
  CHECK(s.calls > 0);
}

// Fuzz finding 9 (fuzz/README.md): an instruction whose bytes a view cuts (a reader callback
// that delivers fewer bytes than asked, or two adjoining regions) is read across the views;
// whether the memory is there must not depend on how it is delivered.
TEST_CASE("flow: an instruction is read across views (short reader deliveries, adjoining regions)") {
  const std::vector<std::uint8_t> trace = loop_trace();
  const memory_region whole[] = {{0x400000, code_bytes(), sizeof loop_code, memory_space::any}};
  program_image with_region(whole, 1);
  auto a = std::make_unique<flow_decoder<>>(unit_regs, with_region);
  const std::vector<flow_element> want = decode_all(*a, trace);
  auto ranges = [](const std::vector<flow_element>& v) {
    unsigned n = 0;
    for (const flow_element& f : v) n += f.kind == flow_kind::instruction_range;
    return n;
  };
  REQUIRE(ranges(want) == 10);
  for (const std::size_t chunk : {1u, 2u, 3u, 5u, 10u, 4096u}) {
    CAPTURE(chunk);
    served s{code_bytes(), sizeof loop_code, 0x400000};
    s.chunk = chunk;
    program_image with_reader;
    with_reader.set_reader(serve, &s);
    auto b = std::make_unique<flow_decoder<>>(unit_regs, with_reader);
    CHECK(decode_all(*b, trace) == want);
  }
  for (const std::size_t cut : {2u, 6u, 0x16u, 0x23u}) {  // inside the words at 0x0, 0x4, 0x14, 0x20
    CAPTURE(cut);
    const memory_region split[] = {
        {0x400000, code_bytes(), cut, memory_space::any},
        {0x400000 + cut, code_bytes() + cut, sizeof loop_code - cut, memory_space::any}};
    program_image two(split, 2);
    auto b = std::make_unique<flow_decoder<>>(unit_regs, two);
    CHECK(decode_all(*b, trace) == want);
  }
}

TEST_CASE("flow: a walk that meets no P0 instruction stops at the walk limit") {
  // 80000 NOPs: an atom from the first one finds no P0 instruction within flow_walk_limit.
  std::vector<std::uint32_t> nops(80000, 0xd503201f);
  const memory_region regions[] = {{0x100000, reinterpret_cast<const std::uint8_t*>(nops.data()),
                                    nops.size() * 4, memory_space::any}};
  program_image image(regions, 1);
  trace_builder t;
  t.start(0x100000);
  t.atom(true);
  t.address(0x100000);
  t.atom(true);
  auto d = std::make_unique<flow_decoder<>>(unit_regs, image);
  const std::vector<flow_element> out = decode_all(*d, t.bytes);
  unsigned limits = 0, instructions = 0;
  for (const flow_element& f : out) {
    if (f.kind == flow_kind::no_sync && f.reason == sync_reason::walk_limit) ++limits;
    if (f.kind == flow_kind::instruction_range) {
      instructions += f.count;
      CHECK(f.last_type == tracecodec::arm::instruction_type::other);
    }
  }
  CHECK(limits == 2);
  CHECK(instructions == 2 * flow_walk_limit);
}

// MAXSPEC 15 with the return stack (TRCCONFIGR.RS): the Mispredict is resolved in stage 2,
// behind its uncommitted atom. 0x1000 BL 0x2000 traced E, then a Mispredict (N); 0x1004 NOP;
// 0x1008 BR X1 traced E with no Target Address; then N. The BL's push stays although its
// final status is N (D9.5.3 I_GBVND, R_HYMQH), so the BR's target is 0x1004. A resolver that
// applied the Mispredict before the analysis would show the BL as N and push nothing: the BR's
// target would be unknown and the last atom not analyzed.
TEST_CASE("flow: with MAXSPEC > 0 a BL that a Mispredict turns to N keeps its return-stack entry") {
  constexpr std::uint32_t code[] = {
      0x94000400,  // 0x1000  bl   0x2000
      0xd503201f,  // 0x1004  nop
      0xd61f0020,  // 0x1008  br   x1
      0xd503201f,  // 0x100c  nop
  };
  registers regs = unit_regs;
  regs.trcidr0 |= 1u << 9;     // TRCIDR0.RETSTACK
  regs.trcidr8 = 15;           // MAXSPEC
  regs.trcconfigr |= 1u << 12;  // TRCCONFIGR.RS
  trace_builder t;
  t.start(0x1000);
  t.atom(true);
  t.bytes.push_back(0x30);  // Mispredict packet, A = 0b00: the Mispredict alone (D5.39)
  t.atom(true);
  t.atom(false);
  t.bytes.insert(t.bytes.end(), {0x2D, 0x03});  // Commit 3
  const memory_region regions[] = {
      {0x1000, reinterpret_cast<const std::uint8_t*>(code), sizeof code, memory_space::any}};
  program_image image(regions, 1);
  auto d = std::make_unique<flow_decoder<>>(regs, image);
  REQUIRE(d->status() == error_code::ok);
  struct r {
    std::uint64_t address, end;
    std::uint32_t count;
    bool taken;
    bool operator==(const r&) const = default;
  };
  std::vector<r> ranges;
  for (const flow_element& f : decode_all(*d, t.bytes))
    if (f.kind == flow_kind::instruction_range) ranges.push_back({f.address, f.end, f.count, f.taken});
  const std::vector<r> want = {{0x1000, 0x1004, 1, false}, {0x1004, 0x100c, 2, true},
                               {0x1004, 0x100c, 2, false}};
  CHECK(ranges == want);
}

// The bytes of D6.9.14's case through the whole decoder: B.EQ traced E with its Target Address
// (branch broadcasting), a Timestamp, then a Mispredict. With MAXSPEC 15 all of it waits for the
// Commit, and the resolver passes the Mispredict on right after the atom and drops the address.
// With MAXSPEC 0 the elements come in stream order and the analyzer, still holding the atom's
// range (the Timestamp waits behind it, I_MDSCN), discards the address. Either way the walk
// goes on at 0x1004, and the Timestamp follows the corrected range.
TEST_CASE("flow: a Mispredict after a Target Address discards it, with MAXSPEC 0 and 15") {
  constexpr std::uint32_t code[] = {
      0x54008000,  // 0x1000  b.eq 0x2000
      0xd503201f,  // 0x1004  nop
      0x54000040,  // 0x1008  b.eq 0x1010
      0xd503201f,  // 0x100c  nop
  };
  for (const bool speculative : {false, true}) {
    CAPTURE(speculative);
    registers regs = unit_regs;
    if (speculative) regs.trcidr8 = 15;  // MAXSPEC
    trace_builder t;
    t.enc = encoder<runtime_config>{regs};
    t.start(0x1000);
    t.atom(true);
    t.address(0x2000);
    packet ts{};
    ts.kind = packet_kind::timestamp;
    ts.timestamp = 0x1234;
    t.put(ts);
    t.bytes.push_back(0x30);  // Mispredict packet, A = 0b00: the Mispredict alone (D5.39)
    t.atom(false);
    if (speculative) t.bytes.insert(t.bytes.end(), {0x2D, 0x02});  // Commit 2
    const memory_region regions[] = {
        {0x1000, reinterpret_cast<const std::uint8_t*>(code), sizeof code, memory_space::any}};
    program_image image(regions, 1);
    auto d = std::make_unique<flow_decoder<>>(regs, image);
    REQUIRE(d->status() == error_code::ok);
    std::vector<std::string> seen;  // ranges as start-end:E/N, and the timestamp
    for (const flow_element& f : decode_all(*d, t.bytes)) {
      if (f.kind == flow_kind::instruction_range)
        seen.push_back(std::to_string(f.address) + "-" + std::to_string(f.end) + (f.taken ? ":E" : ":N"));
      if (f.kind == flow_kind::timestamp) seen.push_back("ts " + std::to_string(f.timestamp));
    }
    const std::vector<std::string> want = {"4096-4100:N", "ts 4660", "4100-4108:N"};
    CHECK(seen == want);
  }
}

TEST_CASE("flow: a session without bytes is only its end; a refused configuration loses no sync") {
  const memory_region regions[] = {{0x400000, code_bytes(), sizeof loop_code, memory_space::any}};
  program_image image(regions, 1);
  struct run {
    std::vector<flow_element> flow;
    std::vector<diagnostic> errors;
  };
  auto decode = [](auto& d, const std::vector<std::uint8_t>& trace) {
    run r;
    d.decode(trace.data(), trace.size(), [&](const flow_element& f) { r.flow.push_back(f); },
             [&](const diagnostic& e) { r.errors.push_back(e); });
    return r;
  };
  const std::vector<std::uint8_t> none, trace = loop_trace();

  // A source with no trace in its buffer (OpenCSD reports such a source as its end only).
  auto good = std::make_unique<flow_decoder<>>(unit_regs, image);
  run r = decode(*good, none);
  REQUIRE(r.flow.size() == 1);
  CHECK(r.flow[0].kind == flow_kind::end_of_trace);
  CHECK(r.flow[0].offset == 0);
  CHECK(r.errors.empty());
  good->reset();  // the next session opens with its no_sync, as every session with bytes does
  r = decode(*good, trace);
  CHECK(r.flow.front().kind == flow_kind::no_sync);
  CHECK(r.flow.front().reason == sync_reason::new_session);
  CHECK(r.flow.front().offset == 0);

  // Registers no trace unit has (ETE with 32-bit addresses, D16): the error, no decode_error
  // no_sync (no byte was decoded), and every offset within the input (fuzz finding 13's
  // neighbour: a no_sync at 1 of 0 bytes).
  registers bad = unit_regs;
  bad.trcidr2 &= ~0x1fu;
  REQUIRE(validate(bad) == error_code::invalid_config);
  auto refused = std::make_unique<flow_decoder<>>(bad, image);
  CHECK(refused->status() == error_code::invalid_config);
  r = decode(*refused, none);
  REQUIRE(r.flow.size() == 1);
  CHECK(r.flow[0].kind == flow_kind::end_of_trace);
  CHECK(r.flow[0].offset == 0);
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].code == error_code::invalid_config);
  refused->reset();
  r = decode(*refused, trace);
  REQUIRE(r.flow.size() == 2);
  CHECK(r.flow[0].kind == flow_kind::no_sync);
  CHECK(r.flow[0].reason == sync_reason::new_session);
  CHECK(r.flow[1].kind == flow_kind::end_of_trace);
  for (const flow_element& f : r.flow) CHECK(f.offset <= trace.size());
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].code == error_code::invalid_config);
}
