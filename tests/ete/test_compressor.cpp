// SPDX-License-Identifier: Apache-2.0
// Property test of the element compressor: a generator of random but legal PE behaviour
// (branches with E/N, indirect branches with targets, exceptions, context changes, timestamps,
// cycle counts, events, Q and source addresses, speculation with commits, cancels and
// mispredicts, discards, transactions) produces a stage-1 element stream and, from its own
// model of speculation (a second implementation, written independently of resolver.hpp), the
// elements it committed. The compressor encodes the stream; decoding and resolving the bytes
// must give exactly the committed elements. 8 configurations, at least 1 million elements.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <set>
#include <string>

#include "../common/pe_model.hpp"
#include "common.hpp"

using namespace test;

namespace {

struct cfg_case {
  const char* name;
  registers regs;
};

// TRCIDR0 bits: TRCCCI 7, NUMEVENT [11:10], QSUPP [16:15], TSMARK 23, TSSIZE [28:24],
// COMMOPT 29, COMMTRANS 30. TRCIDR2 0xd0001088: CID/VMID 32-bit; 0xd0000008: none.
const cfg_case configs[] = {
    {"commopt0-maxspec0", {0x0801cea1, 0xd0001088, 0, 0x47705a13, 0x1, 0}},
    {"commopt0-maxspec1", {0x0801cea1, 0xd0001088, 1, 0x47705a13, 0x1, 0}},
    {"commopt0-maxspec6-commtrans", {0x4801cea1, 0xd0001088, 6, 0x47705a13, 0x1, 0}},
    {"commopt0-maxspec15-ts48-nocid", {0x0601cea1, 0xd0000008, 15, 0x47715a13, 0x1, 0}},
    {"commopt0-maxspec255-ete13", {0x0881cea1, 0xd0001088, 255, 0x47735a13, 0x1, 0}},
    {"commopt1-maxspec0", {0x2801cea1, 0xd0001088, 0, 0x47705a13, 0x1, 0}},
    {"commopt1-maxspec15-tsmark", {0x2881cea1, 0xd0001088, 15, 0x47715a13, 0x1, 0}},
    {"commopt1-maxspec255-nocc-noq", {0x28000221, 0xd0001088, 255, 0x47705a13, 0x1, 0}},
};

// The PE model's decisions from a seeded PRNG (same stream on every run).
struct prng_choices {
  std::mt19937_64 rng;
  std::uint64_t u64() { return rng(); }
  unsigned pick(unsigned n) { return static_cast<unsigned>(rng() % n); }
  bool chance(unsigned pct) { return pick(100) < pct; }
};
using generator = pe_model::generator<prng_choices>;

bool same_behaviour(const element& a, const element& b) {
  element x = a, y = b;
  x.offset = y.offset = 0;
  if (x.kind == element_kind::trace_info) x.count = y.count = 0;
  return x == y;
}

}  // namespace

TEST_CASE("compressor property test: random legal PE behaviour round-trips exactly") {
  std::size_t total_elements = 0, total_bytes = 0;
  for (const cfg_case& cc : configs) {
    const std::string name = cc.name;
    CAPTURE(name);
    REQUIRE(validate(cc.regs) == error_code::ok);
    const config c = config::from(cc.regs);
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      CAPTURE(seed);
      generator g(c, prng_choices{std::mt19937_64(seed * 7919 + static_cast<std::uint64_t>(c.maxspec))});
      g.start();
      while (g.stream.size() < 26000) g.step();
      g.finish();

      // Compress, draining into buffers of random sizes (resumability).
      auto comp = std::make_unique<compressor<>>(cc.regs);
      std::vector<std::uint8_t> bytes;
      std::uint8_t chunk[97];
      std::mt19937 drain_rng(static_cast<unsigned>(seed));
      auto drain = [&](bool all) {
        do {
          const std::size_t n = comp->drain(chunk, 1 + drain_rng() % sizeof chunk);
          bytes.insert(bytes.end(), chunk, chunk + n);
        } while (all && comp->pending());
      };
      error_code first = error_code::ok;
      for (const element& e : g.stream) {
        error_code r = comp->push(e);
        while (r == error_code::buffer_too_small) {
          drain(false);
          r = comp->push(e);
        }
        if (r != error_code::ok && first == error_code::ok) first = r;
        if (drain_rng() % 4 == 0) drain(false);
      }
      error_code fr = comp->finish();
      while (fr == error_code::buffer_too_small) {
        drain(false);
        fr = comp->finish();
      }
      drain(true);
      CHECK(first == error_code::ok);
      CHECK(fr == error_code::ok);

      // Decode and resolve the bytes.
      std::vector<element> got;
      std::vector<diagnostic> errors;
      auto reader = std::make_unique<element_reader<>>(cc.regs);
      reader->decode(bytes.data(), bytes.size(), [&](const element& e) { got.push_back(e); },
                     [&](const diagnostic& d) { errors.push_back(d); });
      CHECK(errors.empty());
      std::size_t mismatch = std::min(got.size(), g.committed.size());
      for (std::size_t i = 0; i < std::min(got.size(), g.committed.size()); ++i)
        if (!same_behaviour(got[i], g.committed[i])) {
          mismatch = i;
          break;
        }
      if (mismatch != got.size() || got.size() != g.committed.size()) {
        CAPTURE(mismatch);
        if (std::getenv("TRACECODEC_DEBUG")) {
          for (std::size_t i = mismatch > 6 ? mismatch - 6 : 0; i < mismatch + 3; ++i) {
            if (i < g.committed.size())
              std::printf("want[%zu] %s addr=%llx taken=%d count=%u p0=%d\n", i, element_name(g.committed[i].kind),
                          (unsigned long long)g.committed[i].address, g.committed[i].taken, g.committed[i].count, g.committed[i].p0);
            if (i < got.size())
              std::printf(" got[%zu] %s addr=%llx taken=%d count=%u p0=%d @%llu\n", i, element_name(got[i].kind),
                          (unsigned long long)got[i].address, got[i].taken, got[i].count, got[i].p0, (unsigned long long)got[i].offset);
          }
          if (FILE* f = std::fopen("/tmp/compressed.bin", "wb")) {
            std::fwrite(bytes.data(), 1, bytes.size(), f);
            std::fclose(f);
          }
          // the input stream around the mismatch
          const std::size_t j = g.committed[mismatch > 0 ? mismatch - 1 : 0].offset;
          for (std::size_t k = j > 4 ? j - 4 : 0; k < j + 16 && k < g.stream.size(); ++k)
            std::printf("  in[%zu] %s taken=%d count=%u p0=%d\n", k, element_name(g.stream[k].kind),
                        g.stream[k].taken, g.stream[k].count, g.stream[k].p0);
        }
        const std::string want = element_name(g.committed[mismatch].kind);
        const std::string have = element_name(got[mismatch].kind);
        CAPTURE(want);
        CAPTURE(have);
        FAIL("decoded element differs from the generator's committed element");
      }
      total_elements += g.stream.size();
      total_bytes += bytes.size();
    }
  }
  MESSAGE("compressor property test: " << total_elements << " elements, " << total_bytes
                                       << " bytes, 8 configurations");
  CHECK(total_elements >= 1000000);
}

TEST_CASE("compressor: periodic A-Sync + Trace Info lets a decoder start mid-stream") {
  const registers regs = configs[4].regs;  // COMMOPT 0, MAXSPEC 255
  const config c = config::from(regs);
  generator g(c, prng_choices{std::mt19937_64(99)});
  g.start();
  while (g.stream.size() < 20000) g.step();
  g.finish();
  compressor_options opt;
  opt.sync_interval = 1024;
  auto comp = std::make_unique<compressor<>>(regs, opt);
  std::vector<std::uint8_t> bytes;
  std::uint8_t chunk[512];
  for (const element& e : g.stream) {
    while (comp->push(e) == error_code::buffer_too_small)
      bytes.insert(bytes.end(), chunk, chunk + comp->drain(chunk, sizeof chunk));
  }
  REQUIRE(comp->finish() == error_code::ok);
  while (const std::size_t n = comp->drain(chunk, sizeof chunk)) bytes.insert(bytes.end(), chunk, chunk + n);

  // The committed elements are the generator's, plus each sync point's Trace Info element and
  // the Context element of the Context packet that follows it (the current context restated).
  std::set<std::uint64_t> sync_contexts;
  {
    const decoded pk = decode_all(regs, bytes);
    for (std::size_t i = 1; i < pk.packets.size(); ++i)
      if (pk.packets[i].kind == packet_kind::context && pk.packets[i - 1].kind == packet_kind::trace_info)
        sync_contexts.insert(pk.packets[i].offset);
  }
  auto behaviour = [&](const std::vector<element>& in, bool decoded_side) {
    std::vector<element> out;
    for (const element& e : in) {
      if (e.kind == element_kind::trace_info) continue;
      if (decoded_side && e.kind == element_kind::context && sync_contexts.count(e.offset)) continue;
      out.push_back(e);
    }
    return out;
  };
  std::vector<element> got;
  std::size_t errors = 0, trace_infos = 0;
  auto reader = std::make_unique<element_reader<>>(regs);
  reader->decode(bytes.data(), bytes.size(), [&](const element& e) {
    got.push_back(e);
    trace_infos += e.kind == element_kind::trace_info;
  }, [&](const diagnostic&) { ++errors; });
  CHECK(errors == 0);
  // A sync point once at least 1024 bytes went out since the last (one element may add up to
  // max_element_bytes more).
  CHECK(trace_infos >= bytes.size() / (1024 + compressor<>::max_element_bytes));
  const auto want = behaviour(g.committed, false), have = behaviour(got, true);
  std::size_t first = 0;
  while (first < want.size() && first < have.size() && same_behaviour(want[first], have[first])) ++first;
  if (first < want.size() || first < have.size()) {
    CAPTURE(first);
    const std::string w = first < want.size() ? element_name(want[first].kind) : "-";
    const std::string h = first < have.size() ? element_name(have[first].kind) : "-";
    CAPTURE(w);
    CAPTURE(h);
    if (std::getenv("TRACECODEC_DEBUG"))
      for (std::size_t i = first > 5 ? first - 5 : 0; i < first + 4; ++i) {
        if (i < want.size()) std::printf("want[%zu] %s taken=%d in[%llu]\n", i, element_name(want[i].kind), want[i].taken, (unsigned long long)want[i].offset);
        if (i < have.size()) std::printf(" got[%zu] %s taken=%d @%llu\n", i, element_name(have[i].kind), have[i].taken, (unsigned long long)have[i].offset);
      }
    FAIL("committed elements differ");
  }

  // Start at the third A-Sync: the decoder synchronizes there and decodes without errors.
  std::size_t syncs = 0, from = 0;
  for (std::size_t i = 0; i + 12 <= bytes.size() && syncs < 3; ++i) {
    bool a = bytes[i + 11] == 0x80;
    for (std::size_t k = 0; a && k < 11; ++k) a = bytes[i + k] == 0;
    if (a && (i == 0 || bytes[i - 1] != 0)) {
      ++syncs;
      from = i;
    }
  }
  REQUIRE(syncs == 3);
  const std::vector<std::uint8_t> tail(bytes.begin() + static_cast<long>(from), bytes.end());
  const decoded mid = decode_all(regs, tail);
  CHECK(mid.errors.empty());
  CHECK(mid.packets.size() > 100);
}

// The atom packing is the shortest: against a reference search written here from the D5
// atom formats alone (every packet length 1-24 at every position, O(n x 24)), the compressor
// emits exactly as many atom packets for random runs of atoms, and the atoms decode back.
TEST_CASE("compressor: atom packing is the shortest (exhaustive reference search)") {
  // D5.41-D5.46, oldest atom in bit 0, E = 1.
  auto one_packet = [](const std::vector<bool>& a, std::size_t at, unsigned l) {
    std::uint32_t bits = 0;
    for (unsigned i = 0; i < l; ++i) bits |= static_cast<std::uint32_t>(a[at + i]) << i;
    if (l <= 3) return true;                                           // F1, F2, F3
    if (l == 4 && (bits == 0b1110 || bits == 0b0000 || bits == 0b1010 || bits == 0b0101)) return true;  // F4
    if (l == 5 && (bits == 0b11110 || bits == 0b00000 || bits == 0b01010 || bits == 0b10101)) return true;  // F5
    for (unsigned i = 0; i + 1 < l; ++i)                               // F6: E^(l-1) then E or N
      if (!a[at + i]) return false;
    return l <= 24;
  };
  auto reference = [&](const std::vector<bool>& a) {
    std::vector<unsigned> best(a.size() + 1, 1u << 30);
    best[0] = 0;
    for (std::size_t i = 1; i <= a.size(); ++i)
      for (unsigned l = 1; l <= 24 && l <= i; ++l)
        if (one_packet(a, i - l, l)) best[i] = std::min(best[i], best[i - l] + 1);
    return best[a.size()];
  };
  const registers regs = presets::ete_1_0;  // MAXSPEC 0
  std::mt19937_64 rng(7);
  std::size_t total_atoms = 0;
  for (int round = 0; round < 400; ++round) {
    const double p_e = (round % 4 == 0) ? 0.5 : (round % 4 == 1) ? 0.9 : (round % 4 == 2) ? 0.97 : 0.2;
    std::bernoulli_distribution taken(p_e);
    std::vector<bool> atoms(1 + rng() % 230);  // below max_atoms: one flush packs them all
    for (std::size_t i = 0; i < atoms.size(); ++i) atoms[i] = taken(rng);
    if (round % 10 == 3)  // patterns of formats 4 and 5 in a row
      for (std::size_t i = 0; i < atoms.size(); ++i) atoms[i] = (i % 5) & 1u;
    total_atoms += atoms.size();
    compressor_options opt;
    opt.input = input_kind::resolved;
    auto comp = std::make_unique<compressor<>>(regs, opt);
    element ti{};
    ti.kind = element_kind::trace_info;
    REQUIRE(comp->push(ti) == error_code::ok);
    for (bool t : atoms) {
      element e{};
      e.kind = element_kind::atom;
      e.p0 = true;
      e.taken = t;
      REQUIRE(comp->push(e) == error_code::ok);
    }
    REQUIRE(comp->finish(true) == error_code::ok);
    std::vector<std::uint8_t> bytes(comp->pending());
    comp->drain(bytes.data(), bytes.size());
    std::size_t packets = 0;
    std::vector<bool> back;
    for (const packet& p : decode_all(regs, bytes).packets) {
      if (p.kind < packet_kind::atom_f1 || p.kind > packet_kind::atom_f6) continue;
      ++packets;
      for (unsigned i = 0; i < p.atom_count; ++i) back.push_back(p.atom(i));
    }
    CAPTURE(round);
    CHECK(back == atoms);
    CHECK(packets == reference(atoms));
  }
  MESSAGE(total_atoms << " atoms packed");
}

// Breaks about one element in `one_in` at random: an address not aligned for its instruction
// set, a timestamp wider than the configuration's, a cycle count beyond the COUNT field,
// unknown flags, another kind (or none), the other instruction set.
static void break_fields(std::vector<element>& in, std::mt19937_64& rng, unsigned one_in) {
  for (element& e : in) {
    if (rng() % one_in != 0) continue;
    switch (rng() % 6) {
      case 0: e.address |= 1 + rng() % 3; break;
      case 1: e.timestamp = rng(); break;
      case 2: e.cycles = static_cast<std::uint32_t>(rng()); break;
      case 3: e.flags = static_cast<std::uint8_t>(rng()); break;
      case 4: e.kind = static_cast<element_kind>(rng() % (element_kind_count + 1)); break;
      default: e.sub_isa = e.sub_isa == isa::is0 ? isa::is1 : isa::is0; break;
    }
  }
}

// push(elements, count) takes runs of atoms without a call each (compressor.hpp take_atoms)
// and the lean kinds in one loop (take_run): it must write exactly the bytes of a push() per
// element, stop where push() would (at the same element when the staging buffer is full; an
// error), and leave the compressor in the same state. Streams: the generator's stage-1 elements under every
// configuration, the same with runs of single atoms merged into atom runs of 1-32 (atom_runs
// form), with periodic sync points, and with an atom run too long to encode (unencodable) at
// random places; its committed elements (input_kind::resolved); and copies of both with fields
// broken at random, so that the lean writers refuse and errors come in the middle of a run;
// committed elements with runs of up to 600 single atoms added, more than the compressor holds
// back (max_atoms); a 512-byte staging buffer, so that the array stops for drains in the middle
// of atom runs.
TEST_CASE("compressor: push(elements, count) gives the bytes and errors of a push() each") {
  std::size_t arrays = 0, atom_elements = 0;
  for (const cfg_case& cc : configs) {
    const std::string name = cc.name;
    CAPTURE(name);
    const config c = config::from(cc.regs);
    for (std::uint64_t seed = 1; seed <= 2; ++seed) {
      generator g(c, prng_choices{std::mt19937_64(seed * 104729 + c.maxspec)});
      g.start();
      while (g.stream.size() < 12000) g.step();
      g.finish();
      std::mt19937_64 rng(seed);
      for (int form = 0; form < 8; ++form) {
        CAPTURE(form);
        const bool resolved = form == 3 || form == 5 || form == 6;
        std::vector<element> in;
        if (form == 6 || form == 7) {
          // Long runs of single atoms, more than the compressor holds (max_atoms), resolved and
          // (7) stage-1 elements, whose P0 atoms the array form counts four at a time.
          for (const element& e : form == 6 ? g.committed : g.stream) {
            in.push_back(e);
            if (e.kind != element_kind::atom || e.count != 0) continue;
            for (unsigned k = static_cast<unsigned>(rng() % 600); k > 0; --k) {
              in.push_back(e);
              in.back().taken = (rng() & 1) != 0;
            }
          }
        } else if (form == 0 || form >= 3) {
          in = resolved ? g.committed : g.stream;
          if (form >= 4) break_fields(in, rng, 40);
        } else {  // single atoms merged into runs; form 2 also puts in overlong runs
          for (std::size_t i = 0; i < g.stream.size();) {
            const element& e = g.stream[i];
            if (e.kind != element_kind::atom || e.count != 0) {
              in.push_back(e);
              ++i;
              continue;
            }
            element run = e;
            run.taken = false;
            run.count = 0;
            run.atom_bits = 0;
            const unsigned want = 1 + static_cast<unsigned>(rng() % 32);
            while (i < g.stream.size() && run.count < want && g.stream[i].kind == element_kind::atom &&
                   g.stream[i].count == 0 && g.stream[i].p0 == e.p0) {
              run.atom_bits |= (g.stream[i].taken ? 1u : 0u) << run.count;
              ++run.count;
              ++i;
            }
            in.push_back(run);
            if (form == 2 && rng() % 200 == 0) {
              element bad = run;
              bad.count = 33;  // more than an atom run holds: unencodable
              in.push_back(bad);
            }
          }
        }
        for (const element& e : in) atom_elements += e.kind == element_kind::atom;
        compressor_options opt;
        if (form == 1) opt.sync_interval = 700;
        if (resolved) opt.input = input_kind::resolved;
        // A push() each.
        auto one = std::make_unique<compressor<runtime_config, 512>>(cc.regs, opt);
        std::vector<std::uint8_t> want;
        std::vector<std::pair<std::size_t, error_code>> want_errors;
        std::vector<std::size_t> want_full, got_full;  // the elements refused for a full buffer
        std::uint8_t chunk[300];
        for (std::size_t i = 0; i < in.size(); ++i) {
          error_code r = one->push(in[i]);
          while (r == error_code::buffer_too_small) {
            want_full.push_back(i);
            want.insert(want.end(), chunk, chunk + one->drain(chunk, sizeof chunk));
            r = one->push(in[i]);
          }
          if (r != error_code::ok) want_errors.emplace_back(i, r);
        }
        // push(elements, count) from wherever the last call stopped.
        auto many = std::make_unique<compressor<runtime_config, 512>>(cc.regs, opt);
        std::vector<std::uint8_t> got;
        std::vector<std::pair<std::size_t, error_code>> got_errors;
        for (std::size_t i = 0; i < in.size();) {
          const std::size_t n = 1 + static_cast<std::size_t>(rng() % 700);  // arrays of any length
          const auto r = many->push(in.data() + i, std::min(n, in.size() - i));
          ++arrays;
          REQUIRE(r.taken <= std::min(n, in.size() - i));
          i += r.taken;
          if (r.error == error_code::buffer_too_small) {
            got_full.push_back(i);
            got.insert(got.end(), chunk, chunk + many->drain(chunk, sizeof chunk));
          } else if (r.error != error_code::ok) {
            REQUIRE(r.taken > 0);
            got_errors.emplace_back(i - 1, r.error);
          }
        }
        for (auto* comp : {one.get(), many.get()}) {
          auto& out = comp == one.get() ? want : got;
          error_code fr = comp->finish(resolved);
          while (fr == error_code::buffer_too_small) {
            out.insert(out.end(), chunk, chunk + comp->drain(chunk, sizeof chunk));
            fr = comp->finish(resolved);
          }
          while (const std::size_t k = comp->drain(chunk, sizeof chunk)) out.insert(out.end(), chunk, chunk + k);
        }
        CHECK(got_errors == want_errors);
        CHECK(got_full == want_full);
        REQUIRE(got.size() == want.size());
        CHECK(got == want);
        if (form == 2 || form == 4 || form == 5) CHECK(!want_errors.empty());
        if (form == 0 || form == 3 || form == 6) CHECK(want_errors.empty());
      }
    }
  }
  MESSAGE("push(elements, count): " << arrays << " arrays, " << atom_elements << " atom elements");
}

// The lean paths (compressor.hpp: atoms, target addresses, timestamps, cycle counts and
// one-byte packets written straight to bytes, take()'s checks skipped while nothing else is
// held back) against the general path, which builds every packet and encodes it through the
// encoder's checks: the same bytes and the same errors at the same elements. Streams: the
// generator's stage-1 elements and its committed elements (input_kind::resolved) under every
// configuration, and copies with fields broken at random (addresses not aligned for their
// instruction set, timestamps wider than the configuration's, cycle counts beyond the COUNT
// field, unknown flags, kinds swapped), which the lean paths must hand to the general one.
TEST_CASE("compressor: the lean paths give the bytes and errors of the general path") {
  using general_compressor = compressor<runtime_config, 512, detail::compressor_paths::general>;
  using lean_compressor = compressor<runtime_config, 512>;
  struct result {
    std::vector<std::uint8_t> bytes;
    std::vector<std::pair<std::size_t, error_code>> errors;
    bool operator==(const result&) const = default;
  };
  auto run = [](auto& comp, const std::vector<element>& in, bool commit_all) {
    result r;
    std::uint8_t chunk[200];
    auto drain = [&] { r.bytes.insert(r.bytes.end(), chunk, chunk + comp.drain(chunk, sizeof chunk)); };
    for (std::size_t i = 0; i < in.size(); ++i) {
      error_code e = comp.push(in[i]);
      while (e == error_code::buffer_too_small) {
        drain();
        e = comp.push(in[i]);
      }
      if (e != error_code::ok) r.errors.emplace_back(i, e);
    }
    error_code f = comp.finish(commit_all);
    while (f == error_code::buffer_too_small) {
      drain();
      f = comp.finish(commit_all);
    }
    if (f != error_code::ok) r.errors.emplace_back(in.size(), f);
    while (comp.pending()) drain();
    return r;
  };
  std::size_t streams = 0, elements = 0, with_errors = 0;
  for (const cfg_case& cc : configs) {
    const std::string name = cc.name;
    CAPTURE(name);
    const config c = config::from(cc.regs);
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      generator g(c, prng_choices{std::mt19937_64(seed * 15485863 + c.maxspec)});
      g.start();
      while (g.stream.size() < 15000) g.step();
      g.finish();
      std::mt19937_64 rng(seed);
      for (int form = 0; form < 4; ++form) {
        CAPTURE(form);
        const bool resolved = form % 2 == 1;
        std::vector<element> in = resolved ? g.committed : g.stream;
        if (form >= 2) break_fields(in, rng, 50);  // broken copies
        compressor_options opt;
        opt.input = resolved ? input_kind::resolved : input_kind::stage1;
        if (seed == 3) opt.sync_interval = 900;
        auto want_comp = std::make_unique<general_compressor>(cc.regs, opt);
        auto got_comp = std::make_unique<lean_compressor>(cc.regs, opt);
        const result want = run(*want_comp, in, resolved);
        const result got = run(*got_comp, in, resolved);
        REQUIRE(got.bytes.size() == want.bytes.size());
        CHECK(got.bytes == want.bytes);
        CHECK(got.errors == want.errors);
        if (form < 2) CHECK(want.errors.empty());
        ++streams;
        elements += in.size();
        with_errors += !want.errors.empty();
      }
    }
  }
  // Cycle Counts owing 0-260 commits (the COMMOPT 0 forms: format 3, format 2 small and large
  // (D5.33: up to MAXSPEC commits), format 1), each cycle value near the threshold and far.
  for (const cfg_case& cc : configs) {
    const std::string name = cc.name;
    CAPTURE(name);
    for (unsigned n = 0; n <= 260; ++n) {
      for (const std::uint32_t cycles : {5u, 9u, 20u, 40u, 300u, 5000000u}) {
        std::vector<element> in;
        element info;
        info.kind = element_kind::trace_info;
        info.flags = element_flag::cc_enabled;
        info.cycles = 5;  // the threshold
        in.push_back(info);
        for (unsigned i = 0; i < n; ++i) {
          element a;
          a.kind = element_kind::atom;
          a.p0 = true;
          a.taken = i % 3 != 0;
          in.push_back(a);
        }
        element cyc;
        cyc.kind = element_kind::cycle_count;
        cyc.cycles = cycles;
        in.push_back(cyc);
        for (const input_kind k : {input_kind::stage1, input_kind::resolved}) {
          compressor_options opt;
          opt.input = k;
          auto want_comp = std::make_unique<general_compressor>(cc.regs, opt);
          auto got_comp = std::make_unique<lean_compressor>(cc.regs, opt);
          const result want = run(*want_comp, in, false);
          const result got = run(*got_comp, in, false);
          CHECK(got == want);
          ++streams;
        }
      }
    }
  }
  MESSAGE("lean against general: " << streams << " streams, " << elements << " elements, "
                                   << with_errors << " streams with errors");
  CHECK(with_errors > 0);
}

// A decoder holds every element behind its oldest uncommitted P0 element, in a queue of
// resolution_capacity(MAXSPEC) places (MAXSPEC P0 elements and the others that travel with
// them). A resolved input whose atoms were each committed at once may follow one with
// thousands of other elements (events, timestamps, target addresses, cycle counts); the
// compressor relies on implied commits, so without commits of its own a decoder of its output
// would overflow where the input's did not (found by ete-fuzz-roundtrip). Here the output is
// decoded by a reader whose queue is exactly that size, through push() each, push(elements,
// count) and the general paths: no error, and the elements come back.
namespace {
template <std::size_t Capacity>
read_elements_result read_with_capacity(const registers& r, const std::vector<std::uint8_t>& b) {
  read_elements_result res;
  auto reader = std::make_unique<element_reader<runtime_config, Capacity>>(r);
  reader->decode(
      b.data(), b.size(), [&](const element& e) { res.elements.push_back(e); },
      [&](const diagnostic& d) { res.errors.push_back(d); });
  return res;
}
read_elements_result read_sized(const registers& r, const std::vector<std::uint8_t>& b) {
  switch (config::from(r).maxspec) {
    case 0: return read_with_capacity<resolution_capacity(0)>(r, b);
    case 1: return read_with_capacity<resolution_capacity(1)>(r, b);
    case 6: return read_with_capacity<resolution_capacity(6)>(r, b);
    case 15: return read_with_capacity<resolution_capacity(15)>(r, b);
    default: return read_with_capacity<resolution_capacity(255)>(r, b);
  }
}
template <class Comp>
std::vector<std::uint8_t> compress_all(Comp& comp, const std::vector<element>& in, bool array) {
  std::vector<std::uint8_t> out;
  std::uint8_t chunk[256];
  auto drain = [&] { out.insert(out.end(), chunk, chunk + comp.drain(chunk, sizeof chunk)); };
  for (std::size_t i = 0; i < in.size();) {
    if (array) {
      const auto r = comp.push(in.data() + i, in.size() - i);
      i += r.taken;
      if (r.error == error_code::buffer_too_small) drain();
      else REQUIRE(r.error == error_code::ok);
    } else {
      const error_code e = comp.push(in[i]);
      if (e == error_code::buffer_too_small) {
        drain();
        continue;
      }
      REQUIRE(e == error_code::ok);
      ++i;
    }
  }
  while (comp.finish(true) == error_code::buffer_too_small) drain();
  while (comp.pending()) drain();
  return out;
}
}  // namespace

TEST_CASE("compressor: elements behind an atom do not overflow a decoder's queue") {
  std::size_t streams = 0, commits = 0;
  for (const cfg_case& cc : configs) {
    const std::string name = cc.name;
    CAPTURE(name);
    const config c = config::from(cc.regs);
    const std::size_t places = resolution_capacity(c.maxspec);
    for (int filler = 0; filler < 5; ++filler) {
      CAPTURE(filler);
      if (filler == 3 && !c.trccci) continue;  // Cycle Count packets need TRCIDR0.TRCCCI
      std::vector<element> in;
      element info;
      info.kind = element_kind::trace_info;
      if (filler == 3) {
        info.flags = element_flag::cc_enabled;
        info.cycles = 1;
      }
      in.push_back(info);
      element start;
      start.kind = element_kind::target_address;
      start.address = 0x80000000;
      in.push_back(start);
      std::uint64_t ts = 1;
      for (unsigned burst = 0; burst < 4; ++burst) {
        for (unsigned a = 0; a <= burst; ++a) {  // 1 to 4 atoms, then many other elements
          element atom;
          atom.kind = element_kind::atom;
          atom.p0 = true;
          atom.taken = a % 2 == 0;
          in.push_back(atom);
        }
        for (std::size_t k = 0; k < 3 * places; ++k) {
          element x;
          switch (filler == 4 ? k % 4 : static_cast<std::size_t>(filler)) {
            case 0:
              x.kind = element_kind::event;  // ETEEvent 0: every configuration has it
              break;
            case 1:
              x.kind = element_kind::timestamp;
              x.timestamp = ts += 3;
              break;
            case 2:
              x.kind = element_kind::target_address;
              x.address = 0x80000000 + 4 * (k % 64);
              break;
            default:
              if (!c.trccci) {
                x.kind = element_kind::event;
                break;
              }
              x.kind = element_kind::cycle_count;
              x.cycles = 7 + static_cast<std::uint32_t>(k % 5);
              break;
          }
          in.push_back(x);
        }
      }
      compressor_options opt;
      opt.input = input_kind::resolved;
      auto one = std::make_unique<compressor<runtime_config, 512>>(cc.regs, opt);
      auto many = std::make_unique<compressor<runtime_config, 512>>(cc.regs, opt);
      auto general = std::make_unique<
          compressor<runtime_config, 512, detail::compressor_paths::general>>(cc.regs, opt);
      const std::vector<std::uint8_t> bytes = compress_all(*one, in, false);
      CHECK(compress_all(*many, in, true) == bytes);
      CHECK(compress_all(*general, in, false) == bytes);
      const read_elements_result got = read_sized(cc.regs, bytes);
      CHECK(got.errors.empty());
      REQUIRE(got.elements.size() == in.size());
      for (std::size_t i = 0; i < in.size(); ++i) {
        CAPTURE(i);
        REQUIRE(same_behaviour(got.elements[i], in[i]));
      }
      for (const packet& p : decode_all(cc.regs, bytes).packets) commits += p.kind == packet_kind::commit;
      ++streams;
    }
  }
  MESSAGE("elements behind an atom: " << streams << " streams, " << commits << " Commit packets");
  CHECK(commits > 0);
}
