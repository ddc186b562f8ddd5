// SPDX-License-Identifier: Apache-2.0
// Stage 2 of the trace analyzer: speculation resolution (D9.3) and transaction resolution
// (D9.4). Elements from stage 1 wait in a bounded resolution queue until their P0 elements are
// committed; Cancel removes the youngest, Mispredict flips the newest atom, Discard drops all
// speculative ones. Committed elements pass a transaction stage that holds a transaction's
// elements until Transaction Commit (passed on) or Transaction Failure (dropped). Output: the
// committed element stream, in order. No heap: both queues have fixed capacities.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../packet/config.hpp"
#include "behaviour.hpp"
#include "element.hpp"
#include "../error.hpp"
#include "../../detail/hot.hpp"

namespace tracecodec::ete {

namespace detail {
// A fixed-capacity double-ended queue of elements. The capacity is a power of two, so that
// positions wrap with a mask.
template <std::size_t N>
class element_ring {
  static_assert(N != 0 && (N & (N - 1)) == 0, "element_ring capacity must be a power of two");

 public:
  constexpr std::size_t size() const noexcept { return size_; }
  constexpr bool empty() const noexcept { return size_ == 0; }
  constexpr bool full() const noexcept { return size_ == N; }
  constexpr element& operator[](std::size_t i) noexcept { return buf_[(head_ + i) & (N - 1)]; }
  constexpr const element& operator[](std::size_t i) const noexcept { return buf_[(head_ + i) & (N - 1)]; }
  constexpr element& front() noexcept { return (*this)[0]; }
  constexpr void push_back(const element& e) noexcept {
    buf_[(head_ + size_) & (N - 1)] = e;
    ++size_;
  }
  constexpr void pop_front() noexcept {
    head_ = (head_ + 1) & (N - 1);
    --size_;
  }
  // pop_front(), returning the element it removed: its place is not written again before the
  // next push_back(), so the element is delivered from there without a copy.
  constexpr const element& take_front() noexcept {
    const element& f = buf_[head_];
    pop_front();
    return f;
  }
  constexpr void truncate(std::size_t n) noexcept { size_ = n; }
  constexpr void clear() noexcept { head_ = size_ = 0; }

 private:
  element buf_[N]{};
  std::size_t head_ = 0, size_ = 0;
};
}  // namespace detail

// Queue capacity for a configuration: MAXSPEC P0 elements plus the non-P0 elements that may
// travel with them (addresses, contexts, timestamps, cycle counts, events), and room for the
// atom run being resolved (resolution_slack).
inline constexpr std::size_t resolution_slack = 32;
constexpr std::size_t resolution_capacity(std::uint32_t maxspec) noexcept {
  const std::size_t need = 4u * (static_cast<std::size_t>(maxspec) + 1u) + 64u + resolution_slack;
  std::size_t n = 64;
  while (n < need) n *= 2;  // rounded up to a power of two
  return n;
}
// The largest MAXSPEC a resolution queue of `capacity` elements resolves (the inverse of
// resolution_capacity). MAXSPEC is IMPLEMENTATION DEFINED and 32 bits wide (D6.7 I_RKYCD;
// the Trace Info SPEC field is 32 bits, D5.7), but the queue must hold MAXSPEC uncommitted P0
// elements (R_GLQPL) without a heap, so a reader is sized for the values it accepts.
constexpr std::uint32_t max_resolved_maxspec(std::size_t capacity) noexcept {
  return capacity < 4u + 64u + resolution_slack
             ? 0u
             : static_cast<std::uint32_t>((capacity - 64u - resolution_slack) / 4u - 1u);
}
// A fixed configuration sizes its queue from MAXSPEC; beyond this the queue (4 x MAXSPEC
// elements) stops being an object anyone wants on a stack or in firmware.
inline constexpr std::uint32_t max_fixed_maxspec = 65535;

template <class Config>
constexpr std::size_t default_resolution_capacity() noexcept {
  if constexpr (Config::is_fixed) {
    static_assert(Config::value.maxspec <= max_fixed_maxspec,
                  "MAXSPEC is larger than the element reader resolves (max_fixed_maxspec)");
    return resolution_capacity(Config::value.maxspec);
  } else {
    return resolution_capacity(255);  // run time: MAXSPEC up to max_resolved_maxspec() of this
  }
}

// The capacity of the resolution and transaction queues counts atoms: an atom run of n atoms
// takes n places, as n single Atom elements would, so that both element forms overflow at the
// same element and resolve identically (element_reader::atom_runs).
template <class Config = runtime_config,
          std::size_t Capacity = default_resolution_capacity<Config>(),
          std::size_t TransactionCapacity = 1024>
class resolver {
  static_assert(Capacity >= 2 * resolution_slack, "resolution queue too small");
  static_assert(TransactionCapacity > resolution_slack, "transaction queue too small");

 public:
  template <class C = Config, class = std::enable_if_t<C::is_fixed>>
  constexpr resolver() noexcept {}
  constexpr explicit resolver(const runtime_config& c) noexcept : cfg_(c) {}
  constexpr explicit resolver(const registers& r) noexcept : cfg_(r) {}

  constexpr const config& cfg() const noexcept { return cfg_.get(); }
  static constexpr error_code maxspec_status(std::uint32_t maxspec) noexcept {
    return maxspec > max_resolved_maxspec(Capacity) ? error_code::unsupported_config : error_code::ok;
  }
  // ok; invalid_config for registers no ETE unit has; unsupported_config when MAXSPEC is
  // larger than this queue resolves (max_resolved_maxspec(Capacity)).
  constexpr error_code status() const noexcept {
    if (cfg_.status() != error_code::ok) return cfg_.status();
    return maxspec_status(cfg().maxspec);
  }
  static constexpr error_code status_for(const registers& r) noexcept {
    const error_code valid = validate(r);
    return valid != error_code::ok ? valid : maxspec_status(config::from(r).maxspec);
  }
  // Uncommitted P0 elements held (plus unseen ones from before the first Trace Info).
  constexpr std::size_t speculative() const noexcept { return p0_ + unseen_; }
  constexpr std::size_t queued() const noexcept { return q_.size(); }
  constexpr bool in_transaction() const noexcept { return in_tx_; }
  constexpr void reset() noexcept {
    q_.clear();
    tx_.clear();
    p0_ = held_ = tx_held_ = unseen_ = mispredicts_ = 0;
    initialized_ = in_tx_ = traced_tx_ = false;
    overflow_reported_ = tx_overflow_reported_ = false;
  }
  // Nothing held: no element queued (speculative, or inside a transaction), no speculative
  // element unseen, no transaction open, no overflow episode going on. At a Trace Info with
  // SPEC 0 and TSTATE 0, an idle resolver goes on exactly as a fresh one does (D9.3.2.1).
  constexpr bool idle() const noexcept {
    return q_.empty() && tx_.empty() && p0_ == 0 && held_ == 0 && tx_held_ == 0 &&
           unseen_ == 0 && mispredicts_ == 0 && !in_tx_ && !traced_tx_ &&
           !overflow_reported_ && !tx_overflow_reported_;
  }
  // The Commit elements UpdateSpecDepth implies beyond MAXSPEC (D9.2.18.3) made here, from the
  // queue's exact count of uncommitted P0 elements, instead of read from stage 1 (which then
  // omits them: element_decoder::omit_implied_commits). An atom run can then be resolved one
  // atom at a time where that matters (a full queue), as single Atom elements are.
  constexpr void commit_beyond_maxspec(bool on) noexcept { implied_ = on; }
  // Deliver each Discard element after the elements it lets through (D9.3.5.1), for an
  // analysis stage (D9.5.13 AnalyzeDiscard). Off by default.
  constexpr void pass_discards(bool on) noexcept { pass_discards_ = on; }
  // Deliver the Mispredicts queued behind an atom as elements right after it, the atom with the
  // status it was first traced with, instead of applying them to it. The analysis stage needs
  // the first status: a Branch with Link traced E pushes the return stack even if a Mispredict
  // turns it to N, and one traced N does not push when corrected to E (D9.5.3 R_HYMQH,
  // I_GBVND; D6 R_NYHFH); D9.5.11 then applies each Mispredict. Off by default. In both modes
  // the Target Addresses queued between an atom and its last Mispredict are dropped (D6.9.14).
  constexpr void pass_mispredicts(bool on) noexcept { pass_mispredicts_ = on; }

  // Takes one stage-1 element; calls out(const element&) for every element that becomes
  // committed, and err(const diagnostic&) when a bounded queue overflows (once per episode).
  template <class Out, class Err>
  TRACECODEC_HOT constexpr void push(const element& e, Out&& out, Err&& err) noexcept {
    if (cfg().maxspec == 0 && unseen_ == 0) {
      // MAXSPEC 0 (D1.10.1.1): every P0 element is committed as soon as it is traced, so
      // nothing ever waits. Commits and Cancels have nothing to act on, a Discard only ends a
      // transaction (D9.3.5.1); a Mispredict comes after its atom was committed and is passed
      // on (as deliver() would).
      if (e.kind == element_kind::commit || e.kind == element_kind::cancel) return;
      if (e.kind == element_kind::discard) {
        traced_tx_ = false;
        end_transaction(out);
        if (pass_discards_) out(e);
        return;
      }
      if ((special_kinds >> static_cast<unsigned>(e.kind)) & 1u) {
        deliver_committed(note_transaction(e), out, err);
        return;
      }
      deliver_committed(e, out, err);
      return;
    }
    switch (e.kind) {
      case element_kind::trace_info:  // D9.3.2.1: unseen speculative elements precede it
        if (!initialized_) unseen_ = e.count;
        stack(note_transaction(e), out, err);
        return;
      case element_kind::transaction_start:
      case element_kind::transaction_commit:
      case element_kind::transaction_failure: stack(note_transaction(e), out, err); return;
      case element_kind::commit: commit(e.count, out, err); return;
      case element_kind::cancel: cancel(e.count, out, err); return;
      case element_kind::discard:
        traced_tx_ = false;
        discard(out, err);
        if (pass_discards_) out(e);
        return;
      case element_kind::mispredict:  // D9.3.1: stacked
        if (!q_.empty() || unseen_ != 0) ++mispredicts_;
        stack(e, out, err);
        return;
      default: stack(e, out, err); return;
    }
  }

  // push() of a Commit element of `n` when MAXSPEC is not 0, without the element
  // (element_reader: a Commit packet).
  template <class Out, class Err>
  constexpr void commit_now(std::uint32_t n, Out&& out, Err&& err) noexcept {
    // The common case with shallow speculation: the Commit takes the one element queued, an
    // atom run, whole (with nothing else queued, no Mispredict waits behind it), outside a
    // transaction. What commit() does then, without its loop.
    if (q_.size() == 1 && unseen_ == 0 && !in_tx_) {
      const element& f = q_.front();
      if (f.kind == element_kind::atom && f.p0 && atom_count(f) <= n) {
        q_.pop_front();
        p0_ = held_ = 0;
        overflow_reported_ = false;
        out(f);
        return;
      }
    }
    commit(n, out, err);
  }
  // push() of a Cancel element of `n` when MAXSPEC is not 0, without the element.
  template <class Out, class Err>
  constexpr void cancel_now(std::uint32_t n, Out&& out, Err&& err) noexcept {
    cancel(n, out, err);
  }

  // MAXSPEC 0: a stage-1 element goes straight to the transaction stage (see push()).
  template <class Out, class Err>
  TRACECODEC_HOT constexpr void push_unspeculated(const element& e, Out&& out, Err&& err) noexcept {
    constexpr std::uint32_t skip = (1u << static_cast<unsigned>(element_kind::commit)) |
                                   (1u << static_cast<unsigned>(element_kind::discard)) |
                                   (1u << static_cast<unsigned>(element_kind::cancel));
    const std::uint32_t bit = 1u << static_cast<unsigned>(e.kind);
    if (!in_tx_ && !(bit & (skip | special_kinds))) {  // one test for the common case
      out(e);
      return;
    }
    if (bit & skip) {
      if (e.kind == element_kind::discard) {  // D9.3.5.1
        traced_tx_ = false;
        end_transaction(out);
        if (pass_discards_) out(e);
      }
      return;
    }
    if (bit & special_kinds)
      deliver_special(note_transaction(e), out, err);
    else
      deliver_special(e, out, err);
  }

  // push_unspeculated() of an Atom element while in_transaction(): the transaction stage holds
  // it (for a caller that knows it is inside one).
  template <class Out, class Err>
  constexpr void push_atom_in_transaction(const element& e, Out&& out, Err&& err) noexcept {
    deliver_special(e, out, err);
  }

  // After a decoding error nothing held can be resolved any more: the Commits, Cancels and
  // transaction outcomes that would resolve it may be in the lost bytes. Speculative elements
  // go as a Discard sends them (D9.3.5.1); an open transaction ends as one the trace unit lost
  // track of (R_NMWPJ: a Transaction Failure, the outcome UNKNOWN), with a Transaction Failure
  // element at `offset` so that the consumer sees it end; then analysis starts afresh at the
  // next A-Sync and Trace Info (D9.1.1), as it does at the start of a trace.
  template <class Out, class Err>
  TRACECODEC_OUT_OF_LINE constexpr void restart(std::uint64_t offset, Out&& out, Err&& err) noexcept {
    const bool open = in_tx_;
    discard(out, err);
    if (open) {
      element f{};
      f.kind = element_kind::transaction_failure;
      f.offset = offset;
      out(static_cast<const element&>(f));
    }
    reset();
  }

  // End of trace: everything still speculative stays unresolved; nothing is emitted.
  constexpr std::size_t unresolved() const noexcept { return speculative(); }

 private:
  // Places in the resolution queue (Capacity includes resolution_slack for the atom run being
  // resolved: see stack_crowded()).
  static constexpr std::size_t limit = Capacity - resolution_slack;

  static constexpr std::uint32_t low_bits(std::uint32_t n) noexcept {
    return n >= 32 ? ~0u : (1u << n) - 1u;
  }
  // Places an element takes in a queue: an atom run one per atom.
  static constexpr std::size_t units(const element& e) noexcept {
    return e.kind == element_kind::atom ? atom_count(e) : 1u;
  }
  // Elements wait only behind an uncommitted P0 element; otherwise they are committed now.
  template <class Out, class Err>
  TRACECODEC_HOT constexpr void stack(const element& e, Out& out, Err& err) noexcept {
    if (q_.empty() && unseen_ == 0 && !e.p0) {
      deliver(e, out, err, false);
      return;
    }
    const std::size_t u = units(e);
    if (held_ + u > limit) {
      stack_crowded(e, out, err);
      return;
    }
    q_.push_back(e);
    held_ += u;
    p0_ += p0_weight(e);
    if (implied_ && e.p0 && p0_ + unseen_ > cfg().maxspec)  // D9.2.18.3 UpdateSpecDepth()
      commit(static_cast<std::uint32_t>(p0_ + unseen_ - cfg().maxspec), out, err);
  }

  // An element that does not fit the queue. What single Atom elements would do, one atom at a
  // time: before each atom (or the element) is queued, a full queue commits its oldest element
  // early (resolution_overflow, reported once until the queue drains); after it, the commits
  // beyond MAXSPEC. The element itself is queued first (the slack holds it), so that those
  // commits can reach its own atoms as they would reach single ones.
  template <class Out, class Err>
  TRACECODEC_OUT_OF_LINE constexpr void stack_crowded(const element& e, Out& out, Err& err) noexcept {
    const std::size_t u = units(e);
    q_.push_back(e);
    held_ += u;
    p0_ += p0_weight(e);
    for (std::size_t j = 1; j <= u; ++j) {
      const std::size_t later = u - j;  // atoms of e not queued yet, in single-atom terms
      if (held_ - later > limit) {
        if (!overflow_reported_) {
          overflow_reported_ = true;
          err(diagnostic{error_code::resolution_overflow, e.offset, Capacity});
        }
        force_commit_one(out, err);
      }
      if (implied_ && e.p0 && p0_ + unseen_ - later > cfg().maxspec)
        commit(static_cast<std::uint32_t>(p0_ + unseen_ - later - cfg().maxspec), out, err);
    }
  }

  // Commits the oldest queued element (one atom of a run) early.
  template <class Out, class Err>
  TRACECODEC_OUT_OF_LINE constexpr void force_commit_one(Out& out, Err& err) noexcept {
    if (q_.empty()) return;
    element& front = q_.front();
    if (front.kind == element_kind::atom && front.count > 1) {  // its oldest atom goes
      element part = front;
      part.count = 1;
      part.atom_bits &= 1u;
      --front.count;
      front.atom_bits >>= 1;
      --p0_;
      --held_;
      deliver_committed(part, out, err);  // the Mispredicts behind the run are for its end
      return;
    }
    const element f = front;
    q_.pop_front();
    p0_ -= p0_weight(f);
    held_ -= units(f);
    deliver(f, out, err);
    release_front(out, err);
  }

  // After a commit, non-P0 elements at the front belong to committed execution.
  template <class Out, class Err>
  TRACECODEC_HOT constexpr void release_front(Out& out, Err& err) noexcept {
    if (unseen_ != 0) return;
    while (!q_.empty() && !q_.front().p0) {
      const element& f = q_.take_front();
      --held_;
      deliver(f, out, err);
    }
  }

  // Follows the transactional state of the element stream as traced (speculative elements
  // included), as stage 1 does (D9.2.6, D9.2.13, D9.2.15), and marks a Trace Info that
  // contradicts it. Out of line: it runs for the rare transaction and Trace Info elements
  // only, and inlined at each push site it tipped GCC out of inlining the element consumer
  // (bench/README.md, issue 14).
  TRACECODEC_OUT_OF_LINE constexpr element note_transaction(const element& e) noexcept {
    element x = e;
    switch (e.kind) {
      case element_kind::transaction_start: traced_tx_ = true; break;
      case element_kind::transaction_commit:
      case element_kind::transaction_failure: traced_tx_ = false; break;
      case element_kind::trace_info: {
        // TSTATE (D6.9.1 R_WJJKK, R_WMKVM) says whether the trace unit has a traced
        // transaction open. Where the stream so far says otherwise, the Trace Info is marked
        // and the transaction stage follows TSTATE when it gets there: TSTATE 1 opens a
        // transaction (analysis that starts inside one, D9.3.2.1; or its Transaction Start was
        // lost), TSTATE 0 closes one (its Transaction Commit or Failure was lost with damaged
        // bytes, or trails: R_PCKKS lets the Commit come after the PE's exit).
        const bool t = e.is(element_flag::in_transaction);
        if (traced_tx_ != t) x.flags = static_cast<std::uint8_t>(x.flags | restates_transaction);
        traced_tx_ = t;
        initialized_ = true;
        break;
      }
      default: break;
    }
    return x;
  }

  // A queue that drains ends an overflow episode: the next overflow is reported again.
  constexpr void note_drained() noexcept {
    if (q_.empty()) overflow_reported_ = false;
  }

  // Unseen P0 elements (SPEC from Trace Info, up to 2^32) are counted, not queued: one
  // subtraction, not a loop per element (a commit of 2^32 took seconds: fuzz finding 10).
  constexpr void take_unseen(std::uint32_t& n) noexcept {
    const std::uint32_t k = n < unseen_ ? n : unseen_;
    unseen_ -= k;
    n -= k;
  }

  // D9.3.3.1 ProcessCommit(): the oldest `n` P0 elements, unseen ones first.
  template <class Out, class Err>
  TRACECODEC_OUT_OF_LINE constexpr void commit(std::uint32_t n, Out& out, Err& err) noexcept {
    take_unseen(n);
    release_front(out, err);
    while (n && !q_.empty()) {
      element& front = q_.front();
      const std::uint32_t w = p0_weight(front);
      if (w > n) {  // an atom run committed in part: its oldest n atoms go, the rest wait
        element part = front;
        part.count = n;
        part.atom_bits &= low_bits(n);
        front.count -= n;
        front.atom_bits = n >= 32 ? 0u : front.atom_bits >> n;
        p0_ -= n;
        held_ -= n;
        deliver_committed(part, out, err);  // the Mispredicts behind the run are for its end
        return;
      }
      const element& f = q_.take_front();
      p0_ -= w;
      held_ -= units(f);
      n -= w;
      deliver(f, out, err);
      if (n == 0) release_front(out, err);
    }
    note_drained();
  }

  // D9.3.4.1 ProcessCancel(): removes the youngest `n` P0 elements and, after the oldest of
  // them, every element that does not survive a cancel (element_behaviours: Table D9.2
  // "Keep" and "Process", and Timestamp Markers). Kept elements stay in place, in order.
  template <class Out, class Err>
  TRACECODEC_OUT_OF_LINE constexpr void cancel(std::uint32_t n, Out& out, Err& err) noexcept {
    std::size_t i = q_.size();
    while (n && i > 0) {
      --i;
      const std::uint32_t w = p0_weight(q_[i]);
      if (w > n) {  // an atom run canceled in part: its youngest n atoms go
        q_[i].count -= n;
        q_[i].atom_bits &= low_bits(q_[i].count);
        p0_ -= n;
        held_ -= n;
        n = 0;
        ++i;  // the run stays; the canceled stretch starts after it
        break;
      }
      n -= w;
    }
    // Elements [i, size) are in the canceled stretch: compact the kept ones down to i.
    std::size_t w = i;
    for (std::size_t r = i; r < q_.size(); ++r) {
      const element& x = q_[r];
      if (x.p0) {
        p0_ -= p0_weight(x);
        held_ -= units(x);
        continue;
      }
      if (survives_cancel(x.kind)) {
        q_[w++] = x;
        continue;
      }
      --held_;
      if (x.kind == element_kind::mispredict) --mispredicts_;
    }
    q_.truncate(w);
    take_unseen(n);  // more than the observed speculation: unseen elements
    release_front(out, err);  // kept elements with no P0 element before them are committed
    note_drained();
  }

  // D9.3.5.1 ProcessDiscard(): all speculative elements go; those that survive a discard
  // (element_behaviours: Events, Trace Info, Timestamps, Timestamp Markers) are passed on; the
  // transaction ends (EndTransaction()).
  template <class Out, class Err>
  TRACECODEC_OUT_OF_LINE constexpr void discard(Out& out, Err& err) noexcept {
    unseen_ = 0;
    p0_ = 0;
    for (std::size_t r = 0; r < q_.size(); ++r)
      if (survives_discard(q_[r].kind)) deliver(q_[r], out, err);
    q_.clear();
    held_ = 0;
    mispredicts_ = 0;
    overflow_reported_ = false;
    end_transaction(out);
  }

  // D9.4 EndTransaction() without a Transaction Commit (Discard, Transaction Failure): the
  // transaction's held elements are dropped, except those that survive a transaction failure
  // (element_behaviours).
  template <class Out>
  TRACECODEC_OUT_OF_LINE constexpr void end_transaction(Out& out) noexcept {
    for (std::size_t i = 0; i < tx_.size(); ++i)
      if (survives_transaction_failure(tx_[i].kind)) out(static_cast<const element&>(tx_[i]));
    close_transaction();
  }
  constexpr void close_transaction() noexcept {
    tx_.clear();
    tx_held_ = 0;
    in_tx_ = tx_overflow_reported_ = false;
  }
  constexpr void open_transaction() noexcept {
    tx_.clear();
    tx_held_ = 0;
    in_tx_ = true;
    tx_overflow_reported_ = false;
  }

  // D2.5.4: a Mispredict element says the most recent non-canceled Atom element has the
  // wrong E/N status. It is stacked like any element (D9.3.1), so a Cancel can remove it
  // (Table D9.2). When an atom is committed, the Mispredicts queued after it (before the next
  // atom) are applied to it and consumed; a Mispredict whose atom was committed before it
  // arrived is passed on as an element, for the analysis stage to apply (D9.5.11).
  TRACECODEC_OUT_OF_LINE constexpr bool flip_for_mispredicts() noexcept {
    bool flip = false;
    std::size_t first = no_target, end = 0;  // the first Target Address; past the last Mispredict
    for (std::size_t i = 0; i < q_.size(); ++i) {
      element& x = q_[i];
      if (x.kind == element_kind::atom) break;
      if (x.kind == element_kind::mispredict) {
        if (x.is(applied)) continue;
        flip = !flip;
        x.flags = static_cast<std::uint8_t>(x.flags | applied);
        end = i + 1;
      } else if (x.kind == element_kind::target_address && first == no_target) {
        first = i;
      }
    }
    if (first < end) discard_targets(first, end);
    return flip;
  }
  // pass_mispredicts(true): the Mispredicts behind the atom just delivered (before the next
  // atom) follow it at once, in order; they are skipped when they leave the queue.
  template <class Out, class Err>
  TRACECODEC_OUT_OF_LINE constexpr void pass_mispredicts_after(Out& out, Err& err) noexcept {
    std::size_t first = no_target, end = 0;
    for (std::size_t i = 0; i < q_.size(); ++i) {
      element& x = q_[i];
      if (x.kind == element_kind::atom) break;
      if (x.kind == element_kind::mispredict) {
        if (x.is(applied)) continue;
        element m = x;
        x.flags = static_cast<std::uint8_t>(x.flags | applied);
        end = i + 1;
        deliver_committed(m, out, err);
      } else if (x.kind == element_kind::target_address && first == no_target) {
        first = i;
      }
    }
    if (first < end) discard_targets(first, end);
  }
  // D6.9.14: "any Target Address elements between the mispredicted Atom element and the
  // Mispredict element must be discarded". Those queued in [first, end) leave the queue; the
  // atom just taken from its front is not moved (take_front()).
  static constexpr std::size_t no_target = ~std::size_t{0};
  TRACECODEC_OUT_OF_LINE constexpr void discard_targets(std::size_t first, std::size_t end) noexcept {
    std::size_t w = first;
    for (std::size_t r = first; r < q_.size(); ++r) {
      if (r < end && q_[r].kind == element_kind::target_address) {
        --held_;
        continue;
      }
      q_[w++] = q_[r];
    }
    q_.truncate(w);
  }
  static constexpr std::uint8_t applied = 0x80;  // internal: Mispredict already applied
  static constexpr std::uint8_t restates_transaction = 0x40;  // internal: note_transaction()

  // D9.4: the transaction stage on the committed stream. A Transaction Start opens a
  // transaction whose elements are held until Transaction Commit (passed on) or Transaction
  // Failure (dropped, except the kinds that survive it: element_behaviours, D9.4.4).
  // Kinds the transaction stage acts on.
  static constexpr std::uint32_t special_kinds =
      (1u << static_cast<unsigned>(element_kind::transaction_start)) |
      (1u << static_cast<unsigned>(element_kind::transaction_commit)) |
      (1u << static_cast<unsigned>(element_kind::transaction_failure)) |
      (1u << static_cast<unsigned>(element_kind::trace_info));

  // `queued`: the element comes out of the resolution queue (not straight from stack()).
  template <class Out, class Err>
  TRACECODEC_HOT constexpr void deliver(const element& e, Out& out, Err& err, bool queued = true) noexcept {
    if (e.kind == element_kind::mispredict) {
      if (queued) --mispredicts_;
      if (e.is(applied)) return;
    } else if (e.kind == element_kind::atom && mispredicts_ != 0 && pass_mispredicts_) {
      deliver_committed(e, out, err);
      pass_mispredicts_after(out, err);
      return;
    } else if (e.kind == element_kind::atom && mispredicts_ != 0 && flip_for_mispredicts()) {
      element flipped = e;  // a Mispredict queued behind this atom (a run's last) corrects it
      if (e.count)
        flipped.atom_bits ^= e.count <= 32 ? 1u << (e.count - 1u) : 0u;
      else
        flipped.taken = !flipped.taken;
      deliver_committed(flipped, out, err);
      return;
    }
    deliver_committed(e, out, err);
  }

  template <class Out, class Err>
  TRACECODEC_HOT constexpr void deliver_committed(const element& e, Out& out, Err& err) noexcept {
    if (!in_tx_ && !((special_kinds >> static_cast<unsigned>(e.kind)) & 1u)) {  // common case
      out(e);
      return;
    }
    deliver_special(e, out, err);
  }

  // Inside a transaction, or a kind the transaction stage acts on. Out of line, like the other
  // rare paths here (commit, cancel, discard, forced commits, mispredict flips): inlined at
  // every place the decode loop pushes an element, they would grow it past the size at which
  // the compiler still inlines the consumer (see bench/README.md, History).
  template <class Out, class Err>
  TRACECODEC_OUT_OF_LINE constexpr void deliver_special(const element& e, Out& out, Err& err) noexcept {
    switch (e.kind) {
      case element_kind::transaction_start:
        out(e);
        if (!in_tx_) open_transaction();
        return;
      case element_kind::transaction_commit:
        for (std::size_t i = 0; i < tx_.size(); ++i) out(static_cast<const element&>(tx_[i]));
        close_transaction();
        out(e);
        return;
      case element_kind::transaction_failure:
        end_transaction(out);
        out(e);
        return;
      case element_kind::trace_info: {
        element ti = e;
        ti.flags = static_cast<std::uint8_t>(ti.flags & ~restates_transaction);
        const bool restates = e.is(restates_transaction);
        const bool t = e.is(element_flag::in_transaction);
        if (in_tx_ && restates && !t) {
          // TSTATE 0 (note_transaction()) closes the transaction: its elements were traced as
          // executed and are passed on now, before the Trace Info, in stream order. (The
          // outcome is UNKNOWN; a Transaction Commit that trails finds no transaction and is
          // passed on alone.)
          for (std::size_t i = 0; i < tx_.size(); ++i) out(static_cast<const element&>(tx_[i]));
          close_transaction();
          out(static_cast<const element&>(ti));
          return;
        }
        if (in_tx_) {  // held in stream order with the transaction's elements
          hold(ti, out, err);
          return;
        }
        out(static_cast<const element&>(ti));
        if (restates && t) open_transaction();  // D9.3.2.1 StartTransaction()
        return;
      }
      default: break;
    }
    if (!in_tx_) {
      out(e);
      return;
    }
    hold(e, out, err);
  }

  // Holds a committed element until its transaction's outcome. A transaction longer than the
  // buffer loses its outcome: what is held is passed on (resolution_overflow, once per
  // transaction). An atom run is split where single atoms would overflow.
  template <class Out, class Err>
  constexpr void hold(const element& e, Out& out, Err& err) noexcept {
    const std::size_t u = units(e);
    element rest = e;
    if (tx_held_ + u > TransactionCapacity) {
      const std::size_t room = TransactionCapacity - tx_held_;
      if (room != 0) {  // only an atom run is larger than one place
        element part = e;
        part.count = static_cast<std::uint32_t>(room);
        part.atom_bits &= low_bits(part.count);
        tx_.push_back(part);
        rest.count -= part.count;
        rest.atom_bits >>= part.count;
      }
      if (!tx_overflow_reported_) {
        tx_overflow_reported_ = true;
        err(diagnostic{error_code::resolution_overflow, e.offset, TransactionCapacity});
      }
      for (std::size_t i = 0; i < tx_.size(); ++i) out(static_cast<const element&>(tx_[i]));
      tx_.clear();
      tx_held_ = 0;
    }
    tx_.push_back(rest);
    tx_held_ += units(rest);
  }

  [[no_unique_address]] Config cfg_{};
  detail::element_ring<Capacity> q_{};
  detail::element_ring<TransactionCapacity> tx_{};
  std::size_t p0_ = 0;    // P0 elements queued (an atom run counts each atom)
  std::size_t held_ = 0;  // places taken in q_ (units()), at most `limit` between elements
  std::size_t tx_held_ = 0;
  std::uint32_t unseen_ = 0;
  std::size_t mispredicts_ = 0;  // Mispredict elements stacked and not yet delivered or removed
  bool pass_discards_ = false;
  bool pass_mispredicts_ = false;
  bool initialized_ = false;
  bool in_tx_ = false;
  bool traced_tx_ = false;  // the traced stream is in a transaction (note_transaction())
  bool implied_ = false;
  bool overflow_reported_ = false;
  bool tx_overflow_reported_ = false;
};

}  // namespace tracecodec::ete
