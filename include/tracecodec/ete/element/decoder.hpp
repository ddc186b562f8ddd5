// SPDX-License-Identifier: Apache-2.0
// Stage 1 of the trace analyzer (D9.2): packets -> elements, with the current speculation
// depth, implied commits beyond MAXSPEC (UpdateSpecDepth, D9.2.18.3) and the transactional
// state. Every packet yields its elements in the order the packet layouts list them (D5).
#pragma once

#include <cstdint>
#include <type_traits>

#include "../packet/config.hpp"
#include "element.hpp"
#include "../../detail/hot.hpp"
#include "../packet/packet.hpp"

namespace tracecodec::ete {

namespace detail {
// process_single_element() tests two families as ranges of the enum: these say the ranges are exact.
inline constexpr packet_kind first_cycle_count = packet_kind::cycle_count_f1_0_unknown;
static_assert(kinds_with_trait_are(kind_trait::cycle_count, first_cycle_count,
                                   packet_kind::cycle_count_f3_1));
static_assert(static_cast<unsigned>(packet_kind::cycle_count_f3_1) -
                  static_cast<unsigned>(first_cycle_count) < 32);
static_assert(target_kinds_are_a_run());
}  // namespace detail

template <class Config = runtime_config>
class element_decoder {
 public:
  template <class C = Config, class = std::enable_if_t<C::is_fixed>>
  constexpr element_decoder() noexcept {}
  constexpr explicit element_decoder(const runtime_config& c) noexcept : cfg_(c) {}
  constexpr explicit element_decoder(const registers& r) noexcept : cfg_(r) {}

  constexpr const config& cfg() const noexcept { return cfg_.get(); }
  constexpr std::uint32_t spec_depth() const noexcept { return depth_; }
  constexpr bool in_transaction() const noexcept { return t_; }
  constexpr void reset() noexcept {
    depth_ = 0;
    t_ = false;
  }
  // For a consumer that has no use for the Commit elements UpdateSpecDepth implies (the
  // resolver, when MAXSPEC is 0 and every P0 element is committed at once): they are not
  // emitted. The speculation depth is tracked all the same, except by atoms<false>() (an
  // element reader under MAXSPEC 0, where nothing reads it).
  constexpr void omit_implied_commits(bool omit) noexcept { omit_implied_ = omit; }
  // One Atom element per atom packet (count, atom_bits: element.hpp) instead of one per atom.
  // The implied commits of UpdateSpecDepth then follow the run: the same P0 elements are
  // committed, as commits always take the oldest.
  constexpr void atom_runs(bool runs) noexcept { runs_ = runs; }
  constexpr bool atom_runs() const noexcept { return runs_; }

  // The Atom elements of an atom packet (formats 1-6), without the packet: bits oldest first.
  // Depth = false: the speculation depth is not kept (an element reader that resolves under
  // MAXSPEC 0, where it omits the implied commits and nothing reads the depth).
  template <bool Depth = true, class Sink>
  TRACECODEC_HOT constexpr void atoms(std::uint64_t offset, std::uint32_t bits, unsigned count,
                                      Sink&& sink) noexcept {
    element a{};
    a.offset = offset;
    a.kind = element_kind::atom;
    a.p0 = true;
    auto implied = [&](std::uint32_t k) {  // built only when made (never, in a resolving reader)
      element c{};
      c.offset = offset;
      c.kind = element_kind::commit;
      c.count = k;
      sink(static_cast<const element&>(c));
    };
    if (runs_) {
      a.count = count;
      a.atom_bits = bits;
      sink(static_cast<const element&>(a));
      if constexpr (Depth) update_depth(count, implied);
      return;
    }
    for (unsigned i = 0; i < count; ++i) {
      a.taken = (bits >> i) & 1u;
      sink(static_cast<const element&>(a));
      if constexpr (Depth) update_depth(1, implied);
    }
  }

  // Emits the elements of one packet, in order, to sink(const element&). Atom packets and the
  // one-element packets after them in frequency (process_single_element) are handled inline; the
  // rest out of line, so that a decode loop that inlines this stays small.
  template <class Sink>
  TRACECODEC_HOT constexpr void process(const packet& p, Sink&& sink) noexcept {
    if (p.kind >= packet_kind::atom_f1 && p.kind <= packet_kind::atom_f6) {
      atoms(p.offset, p.atoms, p.atom_count, sink);
      return;
    }
    if (process_single_element(p, sink)) return;
    process_general(p, sink);
  }

  // process() for packets from decoder::decode(), whose atom packets go to atoms():
  // the few that still come as packets (at the input's tail) take the out-of-line path. Fewer
  // inlined paths in the decode loop leave the compiler room to inline the consumer there.
  template <class Sink>
  TRACECODEC_HOT constexpr void process_non_atom(const packet& p, Sink&& sink) noexcept {
    if (!process_single_element(p, sink)) process_general(p, sink);
  }

  // The speculation depth after a Commit or Cancel of `n` P0 elements (D9.2.8.2, D9.2.8.4),
  // for a reader that hands such a packet straight to its resolver (element_reader) instead
  // of taking its element from process(). The depth stops at 0: a larger `n` also takes
  // elements traced before the Trace Info.
  constexpr void lower_depth(std::uint32_t n) noexcept { depth_ = n > depth_ ? 0 : depth_ - n; }

  // Target addresses, timestamps, timestamp markers and the cycle counts that commit nothing
  // (COMMOPT 1 forms, D5.27/29/32/34): after atoms, what most trace is made of. Each yields
  // one element, built in place. Returns false, emitting nothing, for any other packet.
  template <class Sink>
  TRACECODEC_HOT constexpr bool process_single_element(const packet& p, Sink&& sink) noexcept {
    using K = packet_kind;
    // The COMMOPT 1 Cycle Count kinds as bits from the first Cycle Count kind (description.hpp
    // puts every Cycle Count kind in one run of the enum; checked below).
    constexpr std::uint32_t uncommitting_cycle_counts = [] {
      std::uint32_t m = 0;
      for (const packet_description& d : packet_descriptions.row)
        if (d.legal == legal_when::cycles_only)
          m |= 1u << (static_cast<unsigned>(d.kind) - static_cast<unsigned>(detail::first_cycle_count));
      return m;
    }();
    const unsigned cc = static_cast<unsigned>(p.kind) - static_cast<unsigned>(detail::first_cycle_count);
    element e{};
    e.offset = p.offset;
    if (p.kind >= K::address_exact && p.kind <= K::address_64_is1) {  // detail::target_kinds_are_a_run
      e.kind = element_kind::target_address;
      e.address = p.address;
      e.sub_isa = p.sub_isa;
    } else if (p.kind == K::timestamp_marker) {
      e.kind = element_kind::timestamp_marker;
    } else if (p.kind == K::timestamp) {  // D9.2.16.3
      e.kind = element_kind::timestamp;
      e.timestamp = p.timestamp;
      if (p.is(packet_flag::has_count)) {
        e.cycles = p.cycles;
        e.flags = element_flag::has_cycles;
      }
    } else if (cc < 32 && ((uncommitting_cycle_counts >> cc) & 1u)) {  // D9.2.16.4-6
      // The fields process_general()'s cycle_count() sets, written twice: one helper for both
      // tipped GCC out of inlining the consumer into the decode loop (bench/README.md).
      e.kind = element_kind::cycle_count;
      if (p.is(packet_flag::cycles_unknown))
        e.flags = element_flag::cycles_unknown;
      else
        e.cycles = p.cycles;
    } else {
      return false;
    }
    sink(static_cast<const element&>(e));
    return true;
  }

 private:
  // The packets process() does not handle inline, and the atom packets process_non_atom()
  // meets. Out of line: see process().
  template <class Sink>
  TRACECODEC_OUT_OF_LINE constexpr void process_general(const packet& p, Sink& sink) noexcept {
    using K = packet_kind;
    element e{};
    e.offset = p.offset;
    auto emit = [&](element_kind k, bool p0 = false) TRACECODEC_HOT_LAMBDA {
      e.kind = k;
      e.p0 = p0;
      sink(static_cast<const element&>(e));
      e = element{};
      e.offset = p.offset;
    };
    // D9.2.18.2 HandleAtom(): the atom, then one more speculative P0 element.
    auto atoms = [&] {  // cancel and mispredict packets may carry none
      if (p.atom_count) this->atoms(p.offset, p.atoms, p.atom_count, sink);
    };
    auto implied = [&](std::uint32_t k) {
      e.count = k;
      emit(element_kind::commit);
    };
    auto commit = [&](std::uint32_t n) {
      e.count = n;
      emit(element_kind::commit);
      lower_depth(n);
    };
    auto cancel = [&](std::uint32_t n) {
      e.count = n;
      emit(element_kind::cancel);
      lower_depth(n);
    };
    auto cycle_count = [&] {
      e.cycles = p.cycles;
      if (p.is(packet_flag::cycles_unknown)) {
        e.cycles = 0;
        e.flags = element_flag::cycles_unknown;
      }
      emit(element_kind::cycle_count);
    };
    auto target = [&](bool unknown) {
      e.address = unknown ? 0 : p.address;
      e.sub_isa = unknown ? isa::is0 : p.sub_isa;
      if (unknown) e.flags = element_flag::unknown_address;
      emit(element_kind::target_address);
    };
    // ETMv4: which of the context ID and VMID the packet carried (a trace unit's TRCCONFIGR
    // as recorded does not always say: a57_single_step). ETE leaves them out: there the
    // enables say it, and the element stays independent of how its packet was encoded.
    auto context_element = [&] {
      e.ctx = p.ctx;
      if (cfg().etmv4())
        e.flags = static_cast<std::uint8_t>(
            (p.is(packet_flag::has_context_id) ? element_flag::has_context_id : 0) |
            (p.is(packet_flag::has_vmid) ? element_flag::has_vmid : 0));
      emit(element_kind::context);
    };
    // The transaction has ended (D2.7.1 I_QMFVH), although D9.2.13.2 leaves T set.
    auto transaction_failure = [&](bool p0) {
      emit(element_kind::transaction_failure, p0);
      t_ = false;
    };

    switch (p.kind) {
      case K::async:
      case K::ignore: return;
      case K::discard:  // D9.2.4.1
        emit(element_kind::discard);
        if (t_) transaction_failure(false);
        depth_ = 0;
        t_ = false;
        return;
      case K::overflow:  // D9.2.5.1
        emit(element_kind::discard);
        emit(element_kind::overflow);
        if (t_) transaction_failure(false);
        depth_ = 0;
        t_ = false;
        return;
      case K::trace_info:  // D9.2.6.2
        depth_ = p.count;
        t_ = p.transactional();
        e.count = p.count;
        e.cycles = p.cc_enabled() ? p.cycles : 0;
        e.flags = static_cast<std::uint8_t>((p.cc_enabled() ? element_flag::cc_enabled : 0) |
                                            (p.transactional() ? element_flag::in_transaction : 0));
        emit(element_kind::trace_info);
        return;
      case K::trace_on: emit(element_kind::trace_on); return;
      case K::transaction_start: {  // D9.2.15.1: a P0 element when TRCIDR0.COMMTRANS == 0
        const bool p0 = !cfg().commtrans;
        emit(element_kind::transaction_start, p0);
        t_ = true;
        if (p0) update_depth(1, implied);
        return;
      }
      case K::transaction_commit:
        emit(element_kind::transaction_commit);
        t_ = false;
        return;
      case K::cycle_count_f1_0:
      case K::cycle_count_f1_0_unknown:
      case K::cycle_count_f2_0_small:
      case K::cycle_count_f2_0_large:
      case K::cycle_count_f3_0:  // D9.2.16.4-6: COMMOPT 0 forms commit first
        if (p.count > 0) commit(p.count);
        cycle_count();
        return;
      case K::commit: commit(p.count); return;
      case K::cancel_f1:  // D9.2.8.4
        cancel(p.count);
        if (p.is(packet_flag::mispredict)) emit(element_kind::mispredict);
        return;
      case K::cancel_f2:
      case K::cancel_f3:  // D9.2.8.5/6: atoms, then the cancel, then a mispredict
        atoms();
        cancel(p.count);
        emit(element_kind::mispredict);
        return;
      case K::mispredict:  // D5.39: every A value ends in a Mispredict element
        atoms();
        emit(element_kind::mispredict);
        return;
      case K::atom_f1:
      case K::atom_f2:
      case K::atom_f3:
      case K::atom_f4:
      case K::atom_f5_1:
      case K::atom_f5_2:
      case K::atom_f6: atoms(); return;
      case K::context_same:
      case K::context: context_element(); return;
      case K::address_ctx_32_is0:
      case K::address_ctx_32_is1:
      case K::address_ctx_64_is0:
      case K::address_ctx_64_is1:  // D9.2.14.8: Context, then Target Address
        context_element();
        target(false);
        return;
      case K::source_exact:
      case K::source_short_is0:
      case K::source_short_is1:
      case K::source_32_is0:
      case K::source_32_is1:
      case K::source_64_is0:
      case K::source_64_is1:  // D9.2.12.1, element before the depth update as for atoms
        e.address = p.address;
        e.sub_isa = p.sub_isa;
        emit(element_kind::source_address, true);
        update_depth(1, implied);
        return;
      case K::event:  // D9.2.17.2
        for (std::uint8_t i = 0; i < 4; ++i)
          if ((p.events >> i) & 1u) {
            e.number = i;
            emit(element_kind::event);
          }
        return;
      case K::q:
      case K::q_count:
      case K::q_exact:
      case K::q_short_is0:
      case K::q_short_is1:
      case K::q_32_is0:
      case K::q_32_is1: {  // D9.2.11.2; D5.71-75: every Q form with an address has a Target
        e.count = p.count;
        if (p.is(packet_flag::count_unknown)) e.flags = element_flag::count_unknown;
        emit(element_kind::q, true);
        update_depth(1, implied);
        if (has_address(p.kind)) target(false);
        return;
      }
      case K::instrumentation:
        e.number = p.info;
        e.address = p.address;
        emit(element_kind::instrumentation);
        return;
      case K::exception_return: {
        // ETMv4 (IHI0064 6.4, Exception Return packet): the PE returned from an exception. A
        // P0 element on an M-profile PE only; on the A profile the ERET that did it is the P0
        // element (its atom), and this one is committed with the P0 element after it.
        const bool p0 = cfg().profile == pe_profile::m;
        emit(element_kind::exception_return, p0);
        if (p0) update_depth(1, implied);
        return;
      }
      case K::function_return:  // ETMv4.2+ Armv8-M (IHI0064 6.4): a P0 element
        emit(element_kind::function_return, true);
        update_depth(1, implied);
        return;
      default: break;
    }
    // Exceptions (D9.2.13.2; D5.13: E=0b10 adds a Target Address element before the exception).
    if (is_exception(p.kind)) {
      const bool unknown = p.kind == K::exception_unknown_address || p.kind == K::pe_reset ||
                           p.kind == K::transaction_failure;
      if (p.exception_elements == 2) {
        if (has_context(p.kind)) context_element();
        target(unknown);
      }
      auto exception = [&] {
        e.exception_type = p.exception_type;
        e.address = unknown ? 0 : p.address;
        e.sub_isa = unknown ? isa::is0 : p.sub_isa;
        e.flags = static_cast<std::uint8_t>(
            (unknown ? element_flag::unknown_address : 0) |
            (p.exception_elements == 2 && cfg().etmv4() ? element_flag::return_is_target : 0));
        emit(element_kind::exception, true);
      };
      // ETMv4 has no transactions: TYPE 0x18 is an exception like any other (M profile:
      // DebugHalt, IHI0064 6.4.13).
      if (p.exception_type == 0x18 && !cfg().etmv4()) {
        transaction_failure(true);  // TYPE 0x18 replaces the exception (D5.24)
      } else if (p.exception_type == 0x00 && p.exception_elements == 2 && t_) {
        transaction_failure(false);  // a PE Reset ends the transaction
        exception();
      } else {
        exception();
      }
      update_depth(1, implied);
    }
  }

  // D9.2.18.3 UpdateSpecDepth(): beyond MAXSPEC the oldest elements are implicitly committed.
  // implied(count) makes the Commit element.
  template <class Implied>
  TRACECODEC_HOT constexpr void update_depth(std::uint32_t n, Implied& implied) noexcept {
    depth_ += n;
    if (depth_ > cfg().maxspec) {
      if (!omit_implied_) implied(depth_ - cfg().maxspec);
      depth_ = cfg().maxspec;
    }
  }

  [[no_unique_address]] Config cfg_{};
  std::uint32_t depth_ = 0;
  bool t_ = false;
  bool omit_implied_ = false;
  bool runs_ = false;
};

}  // namespace tracecodec::ete
