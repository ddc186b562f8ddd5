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
#include <deque>
#include <memory>
#include <random>
#include <set>
#include <string>

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

// The generator: a trace unit at element level, with its own speculation model.
struct generator {
  generator(const config& cfg, std::mt19937_64 r) : c(cfg), rng(r) {}
  config c;
  std::mt19937_64 rng;
  std::vector<element> stream;     // stage-1 elements, as element_decoder would produce
  std::vector<element> committed;  // what a trace analyzer must output
  // Speculative P0 elements, oldest first, each with the elements that follow it.
  struct group {
    element p0;
    std::vector<element> followers;
  };
  std::deque<group> spec;
  bool in_tx = false;  // at the committed side
  std::vector<element> tx;
  bool t = false;  // stage-1 transactional state
  std::uint32_t threshold = 0;
  std::uint64_t ts = 0;
  context ctx{};
  std::uint64_t pc = 0x0000ffff00400000;

  unsigned pick(unsigned n) { return static_cast<unsigned>(rng() % n); }
  bool chance(unsigned pct) { return pick(100) < pct; }

  // The committed side: transaction stage (D9.4; failed transactions keep only Events,
  // Timestamps and Cycle Counts).
  static bool survives_failure(element_kind k) {
    return k == element_kind::event || k == element_kind::timestamp ||
           k == element_kind::cycle_count || k == element_kind::timestamp_marker ||
           k == element_kind::trace_info || k == element_kind::overflow;
  }
  void deliver(const element& e) {
    switch (e.kind) {
      case element_kind::transaction_start:
        committed.push_back(e);
        if (!in_tx) {
          in_tx = true;
          tx.clear();
        }
        return;
      case element_kind::transaction_commit:
        committed.insert(committed.end(), tx.begin(), tx.end());
        tx.clear();
        in_tx = false;
        committed.push_back(e);
        return;
      case element_kind::transaction_failure:
        for (const element& x : tx)
          if (survives_failure(x.kind)) committed.push_back(x);
        tx.clear();
        in_tx = false;
        committed.push_back(e);
        return;
      default:
        if (in_tx)
          tx.push_back(e);
        else
          committed.push_back(e);
    }
  }
  // A Mispredict element is a follower like any other (a Cancel removes it with its stretch).
  // When an atom is committed, the Mispredicts after it up to the next atom correct it; one
  // whose atom was committed earlier is passed on as an element (D2.5.4, D9.5.11).
  static constexpr std::uint8_t applied = 0x80;
  void apply_mispredicts(element& atom) {
    for (group& g : spec) {  // the committed group was already popped: look at the rest
      if (g.p0.kind == element_kind::atom) return;
      for (element& f : g.followers)
        if (f.kind == element_kind::mispredict && !(f.flags & applied)) {
          atom.taken = !atom.taken;
          f.flags |= applied;
        }
    }
  }
  void deliver_group(group& g) {
    if (g.p0.kind == element_kind::atom) {
      for (element& f : g.followers)  // its own followers first
        if (f.kind == element_kind::mispredict && !(f.flags & applied)) {
          g.p0.taken = !g.p0.taken;
          f.flags |= applied;
        }
      apply_mispredicts(g.p0);
    }
    deliver(g.p0);
    for (const element& f : g.followers)
      if (!(f.kind == element_kind::mispredict && (f.flags & applied))) deliver(f);
  }
  void commit_oldest(std::uint32_t n) {
    for (std::uint32_t i = 0; i < n; ++i) {
      group g = std::move(spec.front());
      spec.pop_front();
      deliver_group(g);
    }
  }

  // Emits a stage-1 element and applies it to the model.
  void non_p0(element e) {
    e.p0 = false;
    e.offset = stream.size();  // (offsets are not compared: used to debug a mismatch)
    stream.push_back(e);
    if (spec.empty())
      deliver(e);
    else
      spec.back().followers.push_back(e);
  }
  void p0(element e) {
    e.p0 = true;
    e.offset = stream.size();
    stream.push_back(e);
    spec.push_back(group{e, {}});
    if (spec.size() > c.maxspec) {  // D9.2.18.3: the implied commit stage 1 emits
      element cm{};
      cm.kind = element_kind::commit;
      cm.count = static_cast<std::uint32_t>(spec.size() - c.maxspec);
      stream.push_back(cm);
      commit_oldest(cm.count);
    }
  }
  void commit(std::uint32_t n) {
    element cm{};
    cm.kind = element_kind::commit;
    cm.count = n;
    stream.push_back(cm);
    commit_oldest(n);
  }
  // D9.3.4: the youngest n P0 elements go, with the elements after the oldest of them except
  // Cycle Count, Timestamp, Event (and Trace Info), which stay where they were.
  void cancel(std::uint32_t n, bool mispredict) {
    element x{};
    x.kind = element_kind::cancel;
    x.count = n;
    stream.push_back(x);
    std::vector<element> kept;
    for (std::uint32_t i = 0; i < n; ++i) {
      group g = std::move(spec.back());
      spec.pop_back();
      std::vector<element> k;
      for (const element& f : g.followers)
        if (survives_failure(f.kind) && f.kind != element_kind::trace_info) k.push_back(f);
      kept.insert(kept.begin(), k.begin(), k.end());
    }
    for (const element& k : kept) {
      if (spec.empty())
        deliver(k);
      else
        spec.back().followers.push_back(k);
    }
    if (mispredict) {
      element m{};
      m.kind = element_kind::mispredict;
      non_p0(m);
    }
  }

  std::uint64_t address(isa s) {
    switch (pick(4)) {
      case 0: pc = (pc & ~std::uint64_t{0x1ff}) | (rng() & 0x1fc); break;         // near
      case 1: pc = (pc & ~std::uint64_t{0x1ffff}) | (rng() & 0x1fffc); break;     // short
      case 2: pc = (pc & ~std::uint64_t{0xffffffff}) | (rng() & 0xfffffffc); break;
      default: pc = rng() & 0x0000fffffffffffcull; break;
    }
    return s == isa::is0 ? pc & ~std::uint64_t{3} : (pc & ~std::uint64_t{1}) | (rng() & 2);
  }
  element target(isa s) {
    element e{};
    e.kind = element_kind::target_address;
    e.sub_isa = s;
    e.address = address(s);
    return e;
  }

  void start() {
    element ti{};
    ti.kind = element_kind::trace_info;
    if (c.trccci) {
      threshold = pick(4096);
      ti.cycles = threshold;
      ti.flags = element_flag::cc_enabled;
    }
    non_p0(ti);
    element on{};
    on.kind = element_kind::trace_on;
    non_p0(on);
    element cx{};
    cx.kind = element_kind::context;
    ctx.el = 1;
    ctx.sf = true;
    ctx.ns = true;
    cx.ctx = ctx;
    non_p0(cx);
    non_p0(target(isa::is0));
  }

  void step() {
    const unsigned r = pick(1000);
    const isa s = chance(10) ? isa::is1 : isa::is0;
    element e{};
    if (r < 450) {  // a branch: E or N; an indirect taken branch gets a target
      e.kind = element_kind::atom;
      e.taken = chance(70);
      p0(e);
      if (e.taken && chance(25)) non_p0(target(s));
    } else if (r < 520) {  // an exception, with (E=0b10) or without its target first
      e.kind = element_kind::exception;
      constexpr std::uint8_t types[] = {1, 2, 3, 4, 6, 7, 0xa, 0xb, 0xc, 0xe, 0xf, 0x10, 0x17};
      e.exception_type = types[pick(sizeof types)];
      e.sub_isa = s;
      e.address = address(s);
      if (chance(50)) {
        if (chance(30)) {
          element cx{};
          cx.kind = element_kind::context;
          mutate_context();
          cx.ctx = ctx;
          non_p0(cx);
        }
        element t{};
        t.kind = element_kind::target_address;
        t.address = e.address;
        t.sub_isa = s;
        non_p0(t);
      }
      p0(e);
      if (chance(60)) non_p0(target(s));
    } else if (r < 560) {  // a context change
      e.kind = element_kind::context;
      mutate_context();
      e.ctx = ctx;
      non_p0(e);
      if (chance(50)) non_p0(target(s));
    } else if (r < 600) {
      if (!c.tssize) return;
      e.kind = element_kind::timestamp;
      ts += 1 + (rng() % (chance(5) ? (1ull << 40) : 5000));
      if (c.tssize == 48) ts &= (1ull << 48) - 1;
      e.timestamp = ts;
      if (c.trccci && chance(30)) {
        e.flags = element_flag::has_cycles;
        e.cycles = pick(1u << 20);
      }
      non_p0(e);
      if (c.tsmark && chance(50)) {
        element m{};
        m.kind = element_kind::timestamp_marker;
        non_p0(m);
      }
    } else if (r < 660) {
      if (!c.trccci) return;
      e.kind = element_kind::cycle_count;
      if (chance(5)) {
        e.flags = element_flag::cycles_unknown;
      } else {
        const unsigned range = chance(50) ? 4 : chance(50) ? 16 : (1u << 20);
        e.cycles = threshold + pick(range);
      }
      non_p0(e);
    } else if (r < 680) {
      e.kind = element_kind::event;
      e.number = static_cast<std::uint8_t>(pick(c.numevent));
      non_p0(e);
    } else if (r < 700) {
      if (!c.qsupp) return;
      e.kind = element_kind::q;
      if ((c.qsupp & 2u) && (!(c.qsupp & 1u) || chance(20))) {
        e.flags = element_flag::count_unknown;
      } else {
        e.count = chance(80) ? pick(64) : static_cast<std::uint32_t>(rng());
      }
      p0(e);
      if (chance(70)) non_p0(target(s));
    } else if (r < 720) {
      e.kind = element_kind::source_address;
      e.sub_isa = s;
      e.address = address(s);
      p0(e);
    } else if (r < 850) {  // commit some of the oldest speculative elements
      if (spec.empty()) return;
      commit(1 + pick(static_cast<unsigned>(spec.size())));
    } else if (r < 900) {  // cancel the youngest, perhaps with a mispredict
      if (spec.empty()) return;
      const auto n = 1 + pick(static_cast<unsigned>(spec.size() < 8 ? spec.size() : 8));
      cancel(n, chance(60));
    } else if (r < 930) {  // mispredict of the newest atom (speculative or not)
      e.kind = element_kind::mispredict;
      non_p0(e);
    } else if (r < 960) {  // transactions
      transaction();
    } else if (r < 965) {  // trace becomes inactive with speculation outstanding
      if (t) return;
      e.kind = element_kind::discard;
      stream.push_back(e);
      // D9.3.5.1: speculative elements go; Events, Timestamps (and Trace Info) are passed on.
      for (const group& gr : spec)
        for (const element& f : gr.followers)
          if (f.kind == element_kind::event || f.kind == element_kind::timestamp ||
              f.kind == element_kind::timestamp_marker)
            deliver(f);
      spec.clear();
      // ProcessDiscard() ends the transaction (EndTransaction()): one whose Transaction Commit
      // was still speculative is dropped like a failed one (R_ZJXHP: tracing stopped inside it).
      if (in_tx) {
        for (const element& x : tx)
          if (survives_failure(x.kind)) committed.push_back(x);
        tx.clear();
        in_tx = false;
      }
      if (chance(30)) {
        element o{};
        o.kind = element_kind::overflow;
        non_p0(o);
      }
    } else if (r < 970) {
      if (!(c.ete_major == 1 && c.ete_minor >= 3)) return;
      e.kind = element_kind::instrumentation;
      e.number = static_cast<std::uint8_t>(pick(4));
      e.address = rng();
      non_p0(e);
    } else {
      e.kind = element_kind::trace_on;
      if (chance(10)) non_p0(e);
    }
  }

  void mutate_context() {
    ctx.el = static_cast<std::uint8_t>(pick(4));
    ctx.sf = chance(90);
    ctx.ns = chance(70);
    ctx.nse = chance(10);
    if (c.cidsize && chance(50)) ctx.context_id = static_cast<std::uint32_t>(rng());
    if (c.vmidsize && chance(20)) ctx.vmid = static_cast<std::uint32_t>(rng());
  }

  void transaction() {
    element e{};
    if (!t) {
      e.kind = element_kind::transaction_start;
      if (c.commtrans)
        non_p0(e);
      else
        p0(e);
      t = true;
      return;
    }
    if (chance(60)) {
      e.kind = element_kind::transaction_commit;
      non_p0(e);
    } else {  // Exception packet TYPE 0x18: a P0 Transaction Failure (D5.24)
      e.kind = element_kind::transaction_failure;
      e.exception_type = 0;
      p0(e);
    }
    t = false;
  }

  void finish() {
    if (!spec.empty()) commit(static_cast<std::uint32_t>(spec.size()));
  }
};

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
      generator g(c, std::mt19937_64(seed * 7919 + static_cast<std::uint64_t>(c.maxspec)));
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
  generator g(c, std::mt19937_64(99));
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
