// SPDX-License-Identifier: Apache-2.0
// Parallel decode of one buffer (host/ete/parallel.hpp): on every conformance snapshot,
// repeated, and on damaged copies, the consumer must see exactly what the serial decode gives
// (packets, stage-1 elements, committed elements; diagnostics in place), for several thread
// counts, segment sizes and chunk sizes; and the split points must actually be used.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <tracecodec/ete/packet/encoder.hpp>
#include <tracecodec/host/ete/parallel.hpp>
#include <tracecodec/host/ete/snapshot.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <variant>
#include <vector>

#include "../common/random.hpp"
#include "../common/conformance_main.hpp"
#include "../common/segment_log.hpp"

namespace fs = std::filesystem;
using namespace tracecodec::ete;

namespace {

std::string g_dir;

std::vector<std::string> snapshot_names() { return test::snapshot_names(g_dir); }

struct trace {
  std::string name;
  registers regs;
  std::vector<std::uint8_t> bytes;
};

// Each snapshot's first buffer, repeated to at least `size` bytes.
std::vector<trace> traces(std::size_t size) {
  std::vector<trace> v;
  for (const std::string& name : snapshot_names()) {
    const auto snap = snapshot::load(g_dir + "/snapshots/" + name);
    REQUIRE_MESSAGE(snap.error.empty(), snap.error);
    REQUIRE(!snap.buffers.empty());
    trace t{name, snap.buffers[0].regs, {}};
    const auto& one = snap.buffers[0].data;
    REQUIRE(!one.empty());
    while (t.bytes.size() < size) t.bytes.insert(t.bytes.end(), one.begin(), one.end());
    v.push_back(std::move(t));
  }
  return v;
}

using test::concatenated;
using test::event_log;
using test::recorder;

event_log<packet> serial_packets(const trace& t, const std::vector<std::uint8_t>& bytes) {
  event_log<packet> out;
  decoder<> d(t.regs);
  d.decode(bytes.data(), bytes.size(), [&](const packet& p) { out.emplace_back(p); },
           [&](const diagnostic& e) { out.emplace_back(e); });
  return out;
}
event_log<packet> parallel_packets(const trace& t, const std::vector<std::uint8_t>& bytes,
                             const parallel::options& o, parallel::stats* st = nullptr) {
  event_log<packet> out;
  const parallel::stats s = parallel::decode_packets(
      t.regs, bytes.data(), bytes.size(), [&](const packet& p) { out.emplace_back(p); },
      [&](const diagnostic& e) { out.emplace_back(e); }, o);
  if (st) *st = s;
  return out;
}

event_log<element> serial_elements(const trace& t, const std::vector<std::uint8_t>& bytes,
                             const parallel::element_options& eo) {
  event_log<element> out;
  auto r = std::make_unique<element_reader<>>(t.regs);
  r->atom_runs(eo.atom_runs);
  r->decode(bytes.data(), bytes.size(), [&](const element& e) { out.emplace_back(e); },
            [&](const diagnostic& e) { out.emplace_back(e); }, eo.resolve);
  return out;
}
event_log<element> parallel_elements(const trace& t, const std::vector<std::uint8_t>& bytes,
                               const parallel::element_options& eo, const parallel::options& o,
                               parallel::stats* st = nullptr) {
  event_log<element> out;
  const parallel::stats s = parallel::decode_elements(
      t.regs, bytes.data(), bytes.size(), [&](const element& e) { out.emplace_back(e); },
      [&](const diagnostic& e) { out.emplace_back(e); }, eo, o);
  if (st) *st = s;
  return out;
}

// The first place two logs differ (their size if one is a prefix of the other).
template <class Log>
std::size_t first_difference(const Log& a, const Log& b) {
  std::size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  return i;
}

const parallel::options option_sets[] = {
    {2, 16 << 10, 32 << 10, 0},   // segments decoded whole, ahead or straight
    {2, 4 << 10, 1000, 0},        // many segments, turns taken inside them
    {4, 8 << 10, 3000, 3},        // more threads than cores, a short window
    {3, 1 << 10, 100000, 1},      // one segment ahead at most
};

}  // namespace

TEST_CASE("parallel packets equal the serial decode on every snapshot, and the split points join") {
  std::size_t segments = 0, joined_snapshots = 0;
  const auto ts = traces(96 << 10);
  for (const trace& t : ts) {
    CAPTURE(t.name);
    const auto want = serial_packets(t, t.bytes);
    for (const parallel::options& o : option_sets) {
      CAPTURE(o.threads);
      CAPTURE(o.segment_bytes);
      CAPTURE(o.chunk_bytes);
      parallel::stats st;
      const auto got = parallel_packets(t, t.bytes, o, &st);
      CHECK(first_difference(got, want) == want.size());
      CHECK(got.size() == want.size());
      CHECK(st.segments >= 1);
      segments += st.segments;
      if (o.segment_bytes == (16 << 10) && st.segments > 1 && st.rejoined == 0) ++joined_snapshots;
      // Each segment to a consumer of its own: the same, segment after segment.
      parallel::stats bs;
      const auto parts = parallel::decode_packets_by_segment(t.regs, t.bytes.data(), t.bytes.size(),
                                                             recorder<packet>{}, o, &bs);
      CHECK(parts.size() == bs.segments);
      CHECK(bs.segments == st.segments);
      const auto all = concatenated(parts);
      CHECK(first_difference(all, want) == want.size());
      CHECK(all.size() == want.size());
    }
    // threads = 1: the serial decode itself, one segment.
    parallel::stats st;
    CHECK(parallel_packets(t, t.bytes, {1, 4 << 10, 1000, 0}, &st) == want);
    CHECK(st.segments == 1);
  }
  std::printf("parallel packets: %zu snapshots, %zu segments, %zu snapshots split with every split point joined\n",
              ts.size(), segments, joined_snapshots);
  // Splitting is not a formality: most snapshots split, and every split point joins.
  CHECK(joined_snapshots * 2 > ts.size());
}

TEST_CASE("parallel elements equal the serial decode on every snapshot (stage 1, resolved, atom runs)") {
  const auto ts = traces(64 << 10);
  const parallel::element_options modes[] = {{true, false}, {true, true}, {false, false}, {false, true}};
  std::size_t joined = 0, split = 0;
  for (const trace& t : ts) {
    CAPTURE(t.name);
    for (const parallel::element_options& eo : modes) {
      CAPTURE(eo.resolve);
      CAPTURE(eo.atom_runs);
      const auto want = serial_elements(t, t.bytes, eo);
      for (const parallel::options& o : option_sets) {
        CAPTURE(o.segment_bytes);
        CAPTURE(o.chunk_bytes);
        parallel::stats st;
        const auto got = parallel_elements(t, t.bytes, eo, o, &st);
        CHECK(first_difference(got, want) == want.size());
        CHECK(got.size() == want.size());
        if (st.segments > 1) {
          ++split;
          if (st.rejoined == 0) ++joined;
        }
        const auto all = concatenated(parallel::decode_elements_by_segment(
            t.regs, t.bytes.data(), t.bytes.size(), recorder<element>{}, eo, o));
        CHECK(first_difference(all, want) == want.size());
        CHECK(all.size() == want.size());
      }
    }
  }
  std::printf("parallel elements: %zu split decodes, %zu with every split point joined\n", split, joined);
  CHECK(split > 0);
  CHECK(joined * 2 > split);
}

TEST_CASE("parallel decode of damaged trace equals the serial decode") {
  // Bytes changed at random, most of them at or next to split points (where the stitching
  // is), some anywhere: a split point's A-Sync or Trace Info damaged, a packet running into
  // the next segment, speculation left open across it.
  const auto ts = traces(48 << 10);
  test::splitmix64 rng{0x5eed};
  std::size_t cases = 0;
  for (const trace& t : ts) {
    CAPTURE(t.name);
    const auto splits = parallel::find_split_points(decoder<>(t.regs), t.bytes.data(),
                                                    t.bytes.size(), 4 << 10, false);
    for (int round = 0; round < 12; ++round) {
      CAPTURE(round);
      std::vector<std::uint8_t> bytes = t.bytes;
      for (const parallel::split_point& p : splits) {
        const unsigned how = static_cast<unsigned>(rng.next() % 3);
        if (how == 0) continue;
        // 1: a byte just before the A-Sync (a header whose payload runs into the zeros);
        // 2: a byte anywhere near it (the A-Sync or the Trace Info damaged).
        const std::size_t at = how == 1 ? p.async_offset - 1 - rng.next() % 3
                                        : p.async_offset - 4 + rng.next() % 24;
        if (at < bytes.size()) bytes[at] = static_cast<std::uint8_t>(rng.next());
      }
      for (int i = 0; i < 8; ++i) bytes[rng.next() % bytes.size()] = static_cast<std::uint8_t>(rng.next());
      const parallel::options o{2, 4 << 10, 700, 0};
      CHECK(first_difference(parallel_packets(t, bytes, o), serial_packets(t, bytes)) ==
            serial_packets(t, bytes).size());
      const parallel::element_options eo{round % 2 == 0, round % 3 == 0};
      const auto want = serial_elements(t, bytes, eo);
      const auto got = parallel_elements(t, bytes, eo, o);
      CHECK(first_difference(got, want) == want.size());
      CHECK(got.size() == want.size());
      const auto by_segment = concatenated(parallel::decode_elements_by_segment(
          t.regs, bytes.data(), bytes.size(), recorder<element>{}, eo, o));
      CHECK(first_difference(by_segment, want) == want.size());
      CHECK(by_segment.size() == want.size());
      const auto packets = serial_packets(t, bytes);
      const auto packets_by_segment = concatenated(parallel::decode_packets_by_segment(
          t.regs, bytes.data(), bytes.size(), recorder<packet>{}, o));
      CHECK(first_difference(packets_by_segment, packets) == packets.size());
      ++cases;
    }
  }
  std::printf("parallel decode of damaged trace: %zu cases\n", cases);
}

// Program flow: every snapshot with a memory image, repeated, and damaged copies.
TEST_CASE("parallel program flow equals the serial decode on every snapshot with a memory image") {
  std::size_t decodes = 0, split = 0, joined = 0, damaged = 0;
  test::splitmix64 rng{0xf10f};
  for (const std::string& name : snapshot_names()) {
    CAPTURE(name);
    const snapshot::loaded snap = snapshot::load(g_dir + "/snapshots/" + name);
    REQUIRE_MESSAGE(snap.error.empty(), snap.error);
    if (snap.buffers.empty() || snap.regions.empty() || !snap.memory_error.empty()) continue;
    const snapshot::buffer& b = snap.buffers[0];
    std::vector<std::uint8_t> bytes;
    while (bytes.size() < (48u << 10)) bytes.insert(bytes.end(), b.data.begin(), b.data.end());
    const program_image image(snap.regions.data(), snap.regions.size());
    flow_options fo;
    fo.arch = snap.arch;
    auto serial = [&](const std::vector<std::uint8_t>& in) {
      event_log<flow_element> out;
      program_image own = image;
      auto fd = std::make_unique<flow_decoder<>>(b.regs, own, fo);
      fd->decode(in.data(), in.size(), [&](const flow_element& f) { out.emplace_back(f); },
                 [&](const diagnostic& d) { out.emplace_back(d); });
      return out;
    };
    for (int round = 0; round < 4; ++round) {
      CAPTURE(round);
      std::vector<std::uint8_t> in = bytes;
      if (round >= 2) {  // damaged: bytes around the split points, and anywhere
        for (const parallel::split_point& p : parallel::find_split_points(
                 decoder<>(b.regs), in.data(), in.size(), 2 << 10, true))
          if (rng.next() % 2) in[p.async_offset - 2 + rng.next() % 20] = static_cast<std::uint8_t>(rng.next());
        for (int i = 0; i < 6; ++i) in[rng.next() % in.size()] = static_cast<std::uint8_t>(rng.next());
        ++damaged;
      }
      const auto want = serial(in);
      const parallel::options o{round % 2 == 0 ? 2u : 3u, round % 2 == 0 ? std::size_t{2} << 10 : std::size_t{8} << 10, 1000, 0};
      parallel::stats st;
      const auto got = concatenated(parallel::decode_flow_by_segment(
          b.regs, image, fo, in.data(), in.size(), recorder<flow_element>{}, o, &st));
      CHECK(first_difference(got, want) == want.size());
      CHECK(got.size() == want.size());
      ++decodes;
      if (round < 2 && st.segments > 1) {
        ++split;
        if (st.rejoined == 0) ++joined;
      }
    }
  }
  std::printf("parallel flow: %zu decodes (%zu of damaged copies), %zu split, %zu with every split point joined\n",
              decodes, damaged, split, joined);
  CHECK(split > 0);
  CHECK(joined * 2 > split);
}

// A split point where the serial analysis knows more than a fresh one. After each A-Sync and
// Trace Info (no Trace On: D9.5.9, a Trace Info keeps the analysis state): an address, an
// atom for a BL (the serial analysis, which knows the context from before, walks it and
// pushes the return address), then a context and an address. A segment's own analysis is
// synchronized only there, with an empty return stack, so its join must fail: the RET after
// it takes its address from the serial analysis's return stack (D9.5.3).
TEST_CASE("parallel program flow: a segment whose analysis knows less does not join") {
  registers regs = presets::ete_1_0;
  regs.trcconfigr |= 1u << 12;  // TRCCONFIGR.RS: the return stack
  static constexpr std::uint32_t code[] = {
      0x94000002,  // 0x400000: bl 0x400008
      0x14000000,  // 0x400004: b .
      0x14000001,  // 0x400008: b 0x40000c
      0xd65f03c0,  // 0x40000c: ret
  };
  const memory_region regions[] = {
      {0x400000, reinterpret_cast<const std::uint8_t*>(code), sizeof code, memory_space::any}};
  const program_image image(regions, 1);
  encoder<> enc(regs);
  std::vector<std::uint8_t> bytes;
  auto put = [&](const packet& p) {
    std::uint8_t buf[32];
    const encode_result r = enc.encode(p, buf, sizeof buf);
    REQUIRE(r);
    bytes.insert(bytes.end(), buf, buf + r.size);
  };
  auto kind = [&](packet_kind k) {
    packet p{};
    p.kind = k;
    put(p);
  };
  auto address = [&](std::uint64_t at) {
    packet a{};
    a.kind = packet_kind::address_64_is0;
    a.address = at;
    put(a);
  };
  auto atoms = [&](int n) {
    for (int i = 0; i < n; ++i) {
      packet e{};
      e.kind = packet_kind::atom_f1;
      e.atom_count = 1;
      e.atoms = 1;
      put(e);
    }
  };
  context ctx{};
  ctx.ns = true;
  ctx.sf = true;
  for (int copy = 0; copy < 40; ++copy) {
    kind(packet_kind::async);
    kind(packet_kind::trace_info);
    if (copy == 0) {
      kind(packet_kind::trace_on);
      packet a{};
      a.kind = packet_kind::address_ctx_64_is0;
      a.address = 0x400004;
      a.ctx = ctx;
      put(a);
      atoms(2);
      continue;
    }
    address(0x400000);
    atoms(1);  // bl: the serial analysis pushes 0x400004
    packet c{};
    c.kind = packet_kind::context;
    c.ctx = ctx;
    put(c);
    address(0x400008);
    atoms(4);  // b, ret (to 0x400004 from the return stack), b ., b .
  }
  event_log<flow_element> want;
  {
    program_image own = image;
    auto fd = std::make_unique<flow_decoder<>>(regs, own);
    fd->decode(bytes.data(), bytes.size(), [&](const flow_element& f) { want.emplace_back(f); },
               [&](const diagnostic& d) { want.emplace_back(d); });
  }
  parallel::stats st;
  const auto got = concatenated(parallel::decode_flow_by_segment(
      regs, image, {}, bytes.data(), bytes.size(), recorder<flow_element>{}, {2, 64, 1000, 0}, &st));
  CHECK(first_difference(got, want) == want.size());
  CHECK(got.size() == want.size());
  CHECK(st.segments > 10);
  CHECK(st.rejoined > 0);  // the check did refuse
}

TEST_CASE("split points: an A-Sync that a Trace Info follows, about segment_bytes apart") {
  const auto ts = traces(32 << 10);
  for (const trace& t : ts) {
    CAPTURE(t.name);
    const auto splits = parallel::find_split_points(decoder<>(t.regs), t.bytes.data(),
                                                    t.bytes.size(), 2 << 10, false);
    std::size_t last = 0;
    for (const parallel::split_point& p : splits) {
      CHECK(p.async_offset > last);
      CHECK(p.async_offset >= 2048);
      REQUIRE(p.offset < t.bytes.size());
      CHECK(t.bytes[p.async_offset - 1] != 0);
      std::size_t z = p.async_offset;
      while (t.bytes[z] == 0) ++z;
      CHECK(z - p.async_offset >= 11);
      CHECK(t.bytes[z] == 0x80);
      CHECK(p.offset == z + 1);
      CHECK(t.bytes[p.offset] == 0x01);  // Trace Info header (D5.3)
      last = p.offset;
    }
    // Quiet split points only: each one's Trace Info has SPEC 0 and TSTATE 0.
    for (const parallel::split_point& p : parallel::find_split_points(
             decoder<>(t.regs), t.bytes.data(), t.bytes.size(), 2 << 10, true))
      CHECK(p.quiet);
  }
}

int main(int argc, char** argv) { return test::conformance_main(argc, argv, g_dir); }
