// SPDX-License-Identifier: Apache-2.0
// A model of legal PE behaviour at element level: a trace unit that produces the stage-1
// element stream its packets decode to, and the committed elements a trace analyzer must
// output. Its speculation and transaction resolution is a second implementation, written
// independently of resolver.hpp; what each element kind is (P0, survives a Cancel, a Discard,
// a Transaction Failure) it reads from the same table, element_behaviours (behaviour.hpp).
// Used by the compressor property test (tests/ete/test_compressor.cpp, choices from a PRNG)
// and the encoder fuzz target (fuzz/fuzz_encoder.cpp, choices from the fuzz input, with
// exceptions with an UNKNOWN address too: E=0b01 and E=0b10, D5.24/D5.25 and D9.2.13.1).
// An ETMv4 unit (config::etmv4()) behaves within what ETMv4 traces: no transactions, no
// source addresses, every exception with its address, addresses within IASIZE, VMIDs within
// VMIDSIZE, no NSE (IHI0064 6.4: those are ETE's).
#pragma once

#include <tracecodec/tracecodec.hpp>

#include <cstdint>
#include <deque>
#include <vector>

namespace pe_model {
using namespace tracecodec::ete;

// The generator's decisions come from `Choices`, a class with
//   std::uint64_t u64();            any 64-bit value
//   unsigned pick(unsigned n);      0 to n-1
//   bool chance(unsigned percent);  true `percent` times in 100
// The generator: a trace unit at element level, with its own speculation model.
template <class Choices>
struct generator {
  config c;
  Choices choices;
  bool unknown_address_exceptions;  // also generate exceptions with an UNKNOWN address
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

  generator(const config& cfg, Choices ch, bool unknown_addresses = false)
      : c(cfg), choices(ch), unknown_address_exceptions(unknown_addresses) {}
  std::uint64_t u64() { return choices.u64(); }
  unsigned pick(unsigned n) { return choices.pick(n); }
  bool chance(unsigned pct) { return choices.chance(pct); }

  // The committed side: transaction stage (D9.4; a failed transaction keeps the elements that
  // survive a transaction failure: element_behaviours).
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
          if (survives_transaction_failure(x.kind)) committed.push_back(x);
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
  // D6.9.14: the Target Addresses between the atom and its last Mispredict are discarded.
  void discard_targets(group& g) {
    std::vector<element*> after;  // the atom's followers, then those of the P0 elements up to the next atom
    for (element& f : g.followers) after.push_back(&f);
    for (group& later : spec) {
      if (later.p0.kind == element_kind::atom) break;
      for (element& f : later.followers) after.push_back(&f);
    }
    std::size_t end = 0;
    for (std::size_t i = 0; i < after.size(); ++i)
      if (after[i]->kind == element_kind::mispredict && (after[i]->flags & applied)) end = i + 1;
    for (std::size_t i = 0; i < end; ++i)
      if (after[i]->kind == element_kind::target_address) after[i]->flags |= applied;
  }
  void deliver_group(group& g) {
    if (g.p0.kind == element_kind::atom) {
      for (element& f : g.followers)  // its own followers first
        if (f.kind == element_kind::mispredict && !(f.flags & applied)) {
          g.p0.taken = !g.p0.taken;
          f.flags |= applied;
        }
      apply_mispredicts(g.p0);
      discard_targets(g);
    }
    deliver(g.p0);
    for (const element& f : g.followers)
      if (!((f.kind == element_kind::mispredict || f.kind == element_kind::target_address) &&
            (f.flags & applied)))
        deliver(f);
  }
  void commit_oldest(std::uint32_t n) {
    for (std::uint32_t i = 0; i < n; ++i) {
      group g = std::move(spec.front());
      spec.pop_front();
      deliver_group(g);
    }
  }

  // Emits a stage-1 element and applies it to the model, as a P0 element or not as its kind's
  // row says (element_behaviours). The model's Transaction Failures are all Exception packets
  // of TYPE 0x18 (transaction()), so P0.
  void emit(const element& e) {
    switch (behaviour_of(e.kind).p0) {
      case p0_rule::never: non_p0_element(e); return;
      case p0_rule::always:
      case p0_rule::from_exception_packet: p0_element(e); return;
      case p0_rule::unless_commtrans:
        if (c.commtrans)
          non_p0_element(e);
        else
          p0_element(e);
        return;
      case p0_rule::m_profile:
        if (c.profile == pe_profile::m)
          p0_element(e);
        else
          non_p0_element(e);
        return;
    }
  }
  void non_p0_element(element e) {
    e.p0 = false;
    e.offset = stream.size();  // (offsets are not compared: used to debug a mismatch)
    stream.push_back(e);
    if (spec.empty())
      deliver(e);
    else
      spec.back().followers.push_back(e);
  }
  void p0_element(element e) {
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
  // those that survive a cancel (element_behaviours), which stay where they were.
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
        if (survives_cancel(f.kind)) k.push_back(f);
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
      emit(m);
    }
  }

  std::uint64_t address(isa s) {
    switch (pick(4)) {
      case 0: pc = (pc & ~std::uint64_t{0x1ff}) | (u64() & 0x1fc); break;         // near
      case 1: pc = (pc & ~std::uint64_t{0x1ffff}) | (u64() & 0x1fffc); break;     // short
      case 2: pc = (pc & ~std::uint64_t{0xffffffff}) | (u64() & 0xfffffffc); break;
      default: pc = u64() & 0x0000fffffffffffcull; break;
    }
    if (c.iasize == 32) pc &= 0xffffffffu;
    return s == isa::is0 ? pc & ~std::uint64_t{3} : (pc & ~std::uint64_t{1}) | (u64() & 2);
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
    emit(ti);
    element on{};
    on.kind = element_kind::trace_on;
    emit(on);
    element cx{};
    cx.kind = element_kind::context;
    ctx.el = 1;
    ctx.sf = true;
    ctx.ns = true;
    cx.ctx = ctx;
    emit(cx);
    emit(target(isa::is0));
  }

  void step() {
    const unsigned r = pick(1000);
    const isa s = chance(10) ? isa::is1 : isa::is0;
    element e{};
    if (r < 450) {  // a branch: E or N; an indirect taken branch gets a target
      e.kind = element_kind::atom;
      e.taken = chance(70);
      emit(e);
      if (e.taken && chance(25)) emit(target(s));
    } else if (r < 520 && unknown_address_exceptions && !c.etmv4() && chance(15)) {  // an exception with an UNKNOWN address (header 0x70)
      e.kind = element_kind::exception;
      constexpr std::uint8_t types[] = {0, 1, 3, 4, 0xe, 0xf, 0x11};
      e.exception_type = types[pick(sizeof types)];
      if (e.exception_type == 0 && t) return;  // a PE Reset in a transaction also ends it
      e.flags = element_flag::unknown_address;
      if (chance(50)) {  // E=0b10: a Target Address element (UNKNOWN) first
        element u{};
        u.kind = element_kind::target_address;
        u.flags = element_flag::unknown_address;
        emit(u);
      }
      emit(e);
      if (chance(60)) emit(target(s));
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
          emit(cx);
        }
        element t{};
        t.kind = element_kind::target_address;
        t.address = e.address;
        t.sub_isa = s;
        emit(t);
      }
      emit(e);
      if (chance(60)) emit(target(s));
    } else if (r < 560) {  // a context change
      e.kind = element_kind::context;
      mutate_context();
      e.ctx = ctx;
      emit(e);
      if (chance(50)) emit(target(s));
    } else if (r < 600) {
      if (!c.tssize) return;
      e.kind = element_kind::timestamp;
      const std::uint64_t range = chance(5) ? (1ull << 40) : 5000;  // (sequenced reads)
      ts += 1 + (u64() % range);
      if (c.tssize == 48) ts &= (1ull << 48) - 1;
      e.timestamp = ts;
      if (c.trccci && chance(30)) {
        e.flags = element_flag::has_cycles;
        e.cycles = pick(1u << 20);
      }
      emit(e);
      if (c.tsmark && chance(50)) {
        element m{};
        m.kind = element_kind::timestamp_marker;
        emit(m);
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
      emit(e);
    } else if (r < 680) {
      e.kind = element_kind::event;
      e.number = static_cast<std::uint8_t>(pick(c.numevent));
      emit(e);
    } else if (r < 700) {
      if (!c.qsupp) return;
      e.kind = element_kind::q;
      if ((c.qsupp & 2u) && (!(c.qsupp & 1u) || chance(20))) {
        e.flags = element_flag::count_unknown;
      } else {
        e.count = chance(80) ? pick(64) : static_cast<std::uint32_t>(u64());
      }
      emit(e);
      if (chance(70)) emit(target(s));
    } else if (r < 720) {
      if (c.etmv4()) return;
      e.kind = element_kind::source_address;
      e.sub_isa = s;
      e.address = address(s);
      emit(e);
    } else if (r < 850) {  // commit some of the oldest speculative elements
      if (spec.empty()) return;
      commit(1 + pick(static_cast<unsigned>(spec.size())));
    } else if (r < 900) {  // cancel the youngest, perhaps with a mispredict
      if (spec.empty()) return;
      const auto n = 1 + pick(static_cast<unsigned>(spec.size() < 8 ? spec.size() : 8));
      cancel(n, chance(60));
    } else if (r < 930) {  // mispredict of the newest atom (speculative or not)
      e.kind = element_kind::mispredict;
      emit(e);
    } else if (r < 960) {  // transactions
      if (c.etmv4()) return;
      transaction();
    } else if (r < 965) {  // trace becomes inactive with speculation outstanding
      if (t) return;
      e.kind = element_kind::discard;
      stream.push_back(e);
      // D9.3.5.1: speculative elements go; those that survive a discard are passed on.
      for (const group& gr : spec)
        for (const element& f : gr.followers)
          if (survives_discard(f.kind)) deliver(f);
      spec.clear();
      // ProcessDiscard() ends the transaction (EndTransaction()): one whose Transaction Commit
      // was still speculative is dropped like a failed one (R_ZJXHP: tracing stopped inside it).
      if (in_tx) {
        for (const element& x : tx)
          if (survives_transaction_failure(x.kind)) committed.push_back(x);
        tx.clear();
        in_tx = false;
      }
      if (chance(30)) {
        element o{};
        o.kind = element_kind::overflow;
        emit(o);
      }
    } else if (r < 970) {
      if (!(c.version_major == 1 && c.version_minor >= 3)) return;
      e.kind = element_kind::instrumentation;
      e.number = static_cast<std::uint8_t>(pick(4));
      e.address = u64();
      emit(e);
    } else {
      e.kind = element_kind::trace_on;
      if (chance(10)) emit(e);
    }
  }

  void mutate_context() {
    ctx.el = static_cast<std::uint8_t>(pick(4));
    ctx.sf = chance(90);
    ctx.ns = chance(70);
    ctx.nse = !c.etmv4() && chance(10);
    if (c.cidsize && chance(50)) ctx.context_id = static_cast<std::uint32_t>(u64());
    if (c.vmidsize && chance(20))
      ctx.vmid = static_cast<std::uint32_t>(u64() & (c.vmidsize == 32 ? 0xffffffffu : (1u << c.vmidsize) - 1));
  }

  void transaction() {
    element e{};
    if (!t) {
      e.kind = element_kind::transaction_start;
      emit(e);
      t = true;
      return;
    }
    if (chance(60)) {
      e.kind = element_kind::transaction_commit;
      emit(e);
    } else {  // Exception packet TYPE 0x18: a P0 Transaction Failure (D5.24)
      e.kind = element_kind::transaction_failure;
      e.exception_type = 0;
      emit(e);
    }
    t = false;
  }

  void finish() {
    if (!spec.empty()) commit(static_cast<std::uint32_t>(spec.size()));
  }
};

}  // namespace pe_model
