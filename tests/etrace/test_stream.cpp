// SPDX-License-Identifier: Apache-2.0
// The streaming decoder: chunks split at any byte decode identically; packet boundaries are
// found again after data loss (injected zero runs, deleted, overwritten and inserted bytes,
// truncation) with either recovery scheme; support packets switch implicit exception mode.
#include <doctest/doctest.h>

#include <algorithm>

#include "stream_util.hpp"

using namespace etest;

namespace {

const et::runtime_config rv32{et::presets::rv32};
const et::runtime_config rv64{et::presets::rv64_full};
// The same without an implicit-exception ioption: no mode state crosses a recovery point.
constexpr et::parameters stateless(et::parameters p) {
  p.implicit_exception_ioption = et::no_ioption;
  return p;
}
const et::runtime_config rv64_stateless{stateless(et::presets::rv64_full)};

const et::encapsulation settings[] = {
    {},
    {.transport = et::transport::siemens, .index_width = 10},
    {.transport = et::transport::atb},
    {.transport = et::transport::siemens, .index_width = 8,
     .recovery = et::boundary_recovery::zero_run, .zero_run_log2 = 6},
    {.transport = et::transport::atb, .recovery = et::boundary_recovery::zero_run,
     .zero_run_log2 = 5},
    {.transport = et::transport::siemens, .recovery = et::boundary_recovery::blocks,
     .block_size = 64},
};

// The packets of a clean trace, as the decoder must report them.
std::vector<event> expected_packets(const trace& t, const et::runtime_config& cfg) {
  std::vector<event> out;
  et::trace_mode mode{};
  for (std::size_t i = 0; i < t.insts.size(); ++i) {
    event e;
    e.is_packet = true;
    e.p.offset = t.offsets[i];
    e.p.header = t.headers[i];
    e.p.size = static_cast<std::uint8_t>(1 + (t.headers[i].has_timestamp ? 2 : 0) + t.headers[i].length);
    e.p.inst = t.insts[i];
    e.p.mode = mode;
    mode = et::detail::mode_after(t.insts[i], cfg.widths(), mode);
    out.push_back(e);
  }
  return out;
}

bool same_payloads(const std::vector<event>& got, const std::vector<event>& want) {
  if (got.size() != want.size()) return false;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(got[i].p.inst == want[i].p.inst) || !(got[i].p.header == want[i].p.header) ||
        got[i].p.offset != want[i].p.offset)
      return false;
  return true;
}

// The decoded packets whose header is at or after `from`.
std::vector<event> from_offset(const std::vector<event>& ev, std::uint64_t from, std::int64_t shift = 0) {
  std::vector<event> out;
  for (event e : ev)
    if (e.is_packet && e.p.offset >= from) {
      e.p.offset = static_cast<std::uint64_t>(static_cast<std::int64_t>(e.p.offset) + shift);
      out.push_back(e);
    }
  return out;
}

}  // namespace

TEST_CASE("a clean trace decodes to exactly the packets encoded, for every setting") {
  for (const et::encapsulation& enc : settings) {
    for (const et::runtime_config* cfg : {&rv32, &rv64}) {
      if (et::validate(enc, cfg->max_payload()) != et::error_code::ok) continue;
      rng r(99);
      const trace t = make_trace(*cfg, enc, r, 300);
      const std::vector<event> ev = run(*cfg, enc, t.data);
      const std::vector<event> want = expected_packets(t, *cfg);
      REQUIRE(ev.size() == want.size());
      CHECK(same_payloads(ev, want));
      for (std::size_t i = 0; i < ev.size(); ++i) {
        CHECK(ev[i].p.mode == want[i].p.mode);
        CHECK(std::equal(ev[i].p.bytes, ev[i].p.bytes + ev[i].p.size, t.data.begin() + static_cast<std::ptrdiff_t>(ev[i].p.offset)));
      }
    }
  }
}

TEST_CASE("chunks split at any byte decode identically") {
  for (const et::encapsulation& enc : settings) {
    rng r(7);
    const trace t = make_trace(rv32, enc, r, 40);
    const std::vector<event> whole = run(rv32, enc, t.data);
    for (std::size_t cut = 0; cut <= t.data.size(); ++cut)
      REQUIRE(run(rv32, enc, t.data, {cut}) == whole);
    std::vector<std::size_t> every(t.data.size());
    for (std::size_t i = 0; i < every.size(); ++i) every[i] = i + 1;
    CHECK(run(rv32, enc, t.data, every) == whole);  // one byte at a time
    // With errors in the stream too: every split still gives the same events.
    bytes damaged = t.data;
    for (std::size_t i = 5; i < damaged.size(); i += 37) damaged[i] = static_cast<std::uint8_t>(damaged[i] ^ 0x5a);
    const std::vector<event> dwhole = run(rv32, enc, damaged);
    for (std::size_t cut = 0; cut <= damaged.size(); cut += 3)
      REQUIRE(run(rv32, enc, damaged, {cut, cut + 1, cut + 17}) == dwhole);
  }
}

TEST_CASE("zero-run recovery: every packet after the next run of 2^N zeros is exact") {
  const et::encapsulation enc{.transport = et::transport::siemens, .index_width = 8,
                              .recovery = et::boundary_recovery::zero_run, .zero_run_log2 = 6};
  rng r(2024);
  const trace t = make_trace(rv64_stateless, enc, r, 400, 6);
  const std::vector<event> clean = run(rv64_stateless, enc, t.data);
  REQUIRE(t.sync_runs.size() > 10);
  std::uint64_t errors = 0;
  for (int trial = 0; trial < 600; ++trial) {
    bytes d = t.data;
    const std::size_t at = r.below(t.data.size() * 3 / 4);
    const std::size_t k = 1 + r.below(40);
    std::int64_t shift = 0;
    std::size_t damaged_end = at;  // in clean offsets
    switch (trial % 5) {
      case 0:  // data loss: k bytes deleted
        d.erase(d.begin() + static_cast<std::ptrdiff_t>(at), d.begin() + static_cast<std::ptrdiff_t>(std::min(at + k, d.size())));
        shift = -static_cast<std::int64_t>(std::min(at + k, t.data.size()) - at);
        damaged_end = std::min(at + k, t.data.size());
        break;
      case 1:  // k bytes overwritten with garbage
        for (std::size_t i = at; i < std::min(at + k, d.size()); ++i) d[i] = static_cast<std::uint8_t>(r.bits(8));
        damaged_end = std::min(at + k, t.data.size());
        break;
      case 2:  // garbage inserted
        for (std::size_t i = 0; i < k; ++i) d.insert(d.begin() + static_cast<std::ptrdiff_t>(at), static_cast<std::uint8_t>(r.bits(8)));
        shift = static_cast<std::int64_t>(k);
        break;
      case 3:  // an injected zero run (as long as a sync run, or shorter) inside the stream
        d.insert(d.begin() + static_cast<std::ptrdiff_t>(at), r.coin() ? enc.zero_run_length() : k, 0);
        shift = r.coin() ? 0 : 0;
        shift = static_cast<std::int64_t>(d.size() - t.data.size());
        break;
      case 4:  // bytes lost and replaced by zeros
        for (std::size_t i = at; i < std::min(at + k, d.size()); ++i) d[i] = 0;
        damaged_end = std::min(at + k, t.data.size());
        break;
    }
    // The first sync run that starts at or after the damage (clean offsets).
    const auto it = std::lower_bound(t.sync_runs.begin(), t.sync_runs.end(), damaged_end);
    if (it == t.sync_runs.end()) continue;
    const std::vector<event> got = run(rv64_stateless, enc, d);
    for (const event& e : got) {
      if (!e.is_packet) {
        ++errors;
        CHECK(e.d.offset < d.size());
      }
    }
    const std::uint64_t from = *it;
    INFO("trial " << trial << " at " << at << " k " << k);
    CHECK(same_payloads(from_offset(got, static_cast<std::uint64_t>(static_cast<std::int64_t>(from) + shift), -shift),
                        from_offset(clean, from)));
  }
  CHECK(errors > 100);
}

TEST_CASE("zero-run recovery of a stream that starts mid-packet") {
  const et::encapsulation enc{.recovery = et::boundary_recovery::zero_run, .zero_run_log2 = 5};
  rng r(5);
  const trace t = make_trace(rv32, enc, r, 100, 10);
  const std::vector<event> clean = run(rv32, enc, t.data);
  REQUIRE(t.sync_runs.size() >= 2);
  // Start 3 bytes into the second packet: unsynchronized until the next sync run.
  const std::size_t cut = t.offsets[1] + 3;
  const bytes tail(t.data.begin() + static_cast<std::ptrdiff_t>(cut), t.data.end());
  const std::vector<event> got = run(rv32, enc, tail, {}, {.synchronized_at_start = false});
  const std::uint64_t next = *std::lower_bound(t.sync_runs.begin(), t.sync_runs.end(), cut);
  CHECK(packets_of(got).size() == from_offset(clean, next).size());
  CHECK(same_payloads(from_offset(got, 0, static_cast<std::int64_t>(cut)), from_offset(clean, next)));
}

TEST_CASE("block recovery: damage in one block never reaches the next") {
  const et::encapsulation enc{.transport = et::transport::atb,
                              .recovery = et::boundary_recovery::blocks, .block_size = 64};
  rng r(77);
  const trace t = make_trace(rv64_stateless, enc, r, 300);
  REQUIRE(t.data.size() % 64 == 0);
  const std::vector<event> clean = run(rv64_stateless, enc, t.data);
  for (std::size_t i = 0; i < t.offsets.size(); ++i)  // no packet crosses a block boundary
    CHECK(t.offsets[i] / 64 == (t.offsets[i] + t.headers[i].length + (t.headers[i].has_timestamp ? 2 : 0)) / 64);
  std::uint64_t errors = 0;
  for (int trial = 0; trial < 400; ++trial) {
    bytes d = t.data;
    const std::size_t block = r.below(t.data.size() / 64 - 1);
    const std::size_t at = block * 64 + r.below(64);
    const std::size_t k = 1 + r.below(64 - at % 64);
    if (trial % 3 == 2) {  // a whole block lost (memory-based data loss keeps block alignment)
      d.erase(d.begin() + static_cast<std::ptrdiff_t>(block * 64), d.begin() + static_cast<std::ptrdiff_t>(block * 64 + 64));
      const std::vector<event> got = run(rv64_stateless, enc, d);
      CHECK(same_payloads(from_offset(got, block * 64, 64), from_offset(clean, block * 64 + 64)));
      continue;
    }
    for (std::size_t i = at; i < at + k; ++i) d[i] = trial % 3 ? static_cast<std::uint8_t>(r.bits(8)) : 0;
    const std::vector<event> got = run(rv64_stateless, enc, d);
    for (const event& e : got) errors += e.is_packet ? 0 : 1;
    const std::uint64_t next_block = (block + 1) * 64;
    CHECK(same_payloads(from_offset(got, next_block), from_offset(clean, next_block)));
    CHECK(same_payloads(from_offset(got, 0), from_offset(got, 0)));
    // Everything before the damaged block is untouched too.
    std::vector<event> before, want_before;
    for (const event& e : packets_of(got)) if (e.p.offset < block * 64) before.push_back(e);
    for (const event& e : clean) if (e.p.offset < block * 64) want_before.push_back(e);
    CHECK(same_payloads(before, want_before));
  }
  CHECK(errors > 50);
}

TEST_CASE("a packet that would cross a block boundary is an error; decoding resumes at it") {
  const et::encapsulation enc{.recovery = et::boundary_recovery::blocks, .block_size = 16};
  // Block 0: idle up to 12, then a 6-byte packet header at 12 (would end at 18): overrun.
  // Block 1: the same packet at 16.
  bytes b(16, 0);
  b[12] = 0x05;
  b[13] = 0x73;
  const bytes pkt = {0x05, 0x73, 0x00, 0x00, 0x00, 0xe0};
  b.insert(b.end(), pkt.begin(), pkt.end());
  const std::vector<event> ev = run(rv32, enc, b);
  REQUIRE(ev.size() == 2);
  CHECK(ev[0].d == et::diagnostic{et::error_code::block_overrun, 12, 1});
  CHECK(ev[1].p.offset == 16);
}

TEST_CASE("truncation anywhere inside the last packet is reported at its offset") {
  for (const et::encapsulation& enc : settings) {
    rng r(3);
    const trace t = make_trace(rv32, enc, r, 10);
    const std::uint64_t last = t.offsets.back();
    const unsigned size = 1 + (t.headers.back().has_timestamp ? 2u : 0u) + enc.index_bytes() + t.headers.back().length;
    for (unsigned keep = 1; keep < size; ++keep) {
      const bytes cut(t.data.begin(), t.data.begin() + static_cast<std::ptrdiff_t>(last + keep));
      const std::vector<event> ev = run(rv32, enc, cut);
      REQUIRE(!ev.empty());
      CHECK(ev.back().d == et::diagnostic{et::error_code::truncated_packet, last, keep});
      CHECK(packets_of(ev).size() == t.insts.size() - 1);
    }
  }
}

TEST_CASE("support packets switch implicit exception mode for the trap packets after them") {
  const et::encapsulation enc{};
  et::encoder<> e(rv32, enc);
  std::uint8_t buf[256];
  bytes data;
  const auto put = [&](const et::te_inst& p) {
    const et::encode_result r = e.encode(p, {}, buf, sizeof buf);
    REQUIRE(r.error == et::error_code::ok);
    data.insert(data.end(), buf, buf + r.size);
  };
  const et::te_inst trap{.format = et::format::sync, .subformat = 1, .thaddr = true,
                         .address = 0x1000, .tval = 7};
  et::te_inst implicit_trap = trap;
  implicit_trap.address = 0;  // no address field in implicit exception mode
  put(trap);
  put(et::te_inst{.format = et::format::sync, .subformat = 3, .ioptions = 0x2});  // bit 1
  put(implicit_trap);
  put(et::te_inst{.format = et::format::sync, .subformat = 3, .ioptions = 0x0});
  put(trap);
  const std::vector<event> ev = run(rv32, enc, data);
  REQUIRE(ev.size() == 5);
  CHECK(ev[0].p.inst == trap);
  CHECK(ev[2].p.inst == implicit_trap);
  CHECK(ev[2].p.mode.implicit_exception);
  CHECK(ev[2].p.size < ev[0].p.size);
  CHECK(ev[4].p.inst == trap);
}

TEST_CASE("random bytes: never a crash, hang or out-of-range offset; chunking never matters") {
  rng r(31337);
  for (int trial = 0; trial < 300; ++trial) {
    const et::encapsulation& enc = settings[r.below(std::size(settings))];
    const et::runtime_config& cfg = r.coin() ? rv32 : rv64;
    if (et::validate(enc, cfg.max_payload()) != et::error_code::ok) continue;
    bytes d(r.below(600));
    for (auto& x : d) x = static_cast<std::uint8_t>(r.coin() ? 0 : r.bits(8));
    const std::vector<event> whole = run(cfg, enc, d);
    std::vector<std::size_t> cuts;
    for (std::size_t i = 0; i < d.size(); i += 1 + r.below(9)) cuts.push_back(i);
    CHECK(run(cfg, enc, d, cuts) == whole);
    for (const event& e : whole) {
      if (e.is_packet) {
        CHECK(e.p.offset + e.p.size <= d.size());
        CHECK(std::equal(e.p.bytes, e.p.bytes + e.p.size, d.begin() + static_cast<std::ptrdiff_t>(e.p.offset)));
      } else {
        CHECK(e.d.offset < d.size());
      }
    }
  }
}
