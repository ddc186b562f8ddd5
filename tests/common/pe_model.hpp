// SPDX-License-Identifier: Apache-2.0
// A model of legal PE behaviour at element level, driven by the fuzz input: the generator of
// the compressor property test (tests/ete/test_compressor.cpp, a second implementation of
// speculation and transaction resolution written independently of resolver.hpp), with its
// random choices taken from the input bytes instead of a PRNG, plus exceptions with an
// UNKNOWN address (E=0b01 and E=0b10, D5.24/D5.25 and D9.2.13.1). It produces the stage-1
// element stream a trace unit's packets decode to and the committed elements a trace analyzer
// must output.
#pragma once

#include <tracecodec/tracecodec.hpp>

#include <cstdint>
#include <deque>
#include <vector>

#include "generate.hpp"

namespace fuzz {
using namespace tracecodec::ete;

// The generator: a trace unit at element level, with its own speculation model.
struct generator {
  config c;
  reader& src;  // every decision comes from the fuzz input
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

  generator(const config& cfg, reader& r) : c(cfg), src(r) {}
  std::uint64_t rng() { return src.u64(); }
  unsigned pick(unsigned n) { return n <= 256 ? src.u8() % n : static_cast<unsigned>(src.u32() % n); }
  bool chance(unsigned pct) { return src.u8() % 100u < pct; }

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
    } else if (r < 520 && chance(15)) {  // an exception with an UNKNOWN address (header 0x70)
      e.kind = element_kind::exception;
      constexpr std::uint8_t types[] = {0, 1, 3, 4, 0xe, 0xf, 0x11};
      e.exception_type = types[pick(sizeof types)];
      if (e.exception_type == 0 && t) return;  // a PE Reset in a transaction also ends it
      e.flags = element_flag::unknown_address;
      if (chance(50)) {  // E=0b10: a Target Address element (UNKNOWN) first
        element u{};
        u.kind = element_kind::target_address;
        u.flags = element_flag::unknown_address;
        non_p0(u);
      }
      p0(e);
      if (chance(60)) non_p0(target(s));
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
      const std::uint64_t range = chance(5) ? (1ull << 40) : 5000;  // (sequenced reads)
      ts += 1 + (rng() % range);
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

}  // namespace fuzz
