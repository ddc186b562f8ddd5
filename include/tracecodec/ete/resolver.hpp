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

#include "config.hpp"
#include "element.hpp"
#include "error.hpp"
#include "hot.hpp"

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
  constexpr void truncate(std::size_t n) noexcept { size_ = n; }
  constexpr void clear() noexcept { head_ = size_ = 0; }

 private:
  element buf_[N]{};
  std::size_t head_ = 0, size_ = 0;
};
}  // namespace detail

// Queue capacity for a configuration: MAXSPEC P0 elements plus the non-P0 elements that may
// travel with them (addresses, contexts, timestamps, cycle counts, events).
constexpr std::size_t resolution_capacity(std::uint32_t maxspec) noexcept {
  const std::size_t need = 4u * (static_cast<std::size_t>(maxspec) + 1u) + 64u;
  std::size_t n = 64;
  while (n < need) n *= 2;  // rounded up to a power of two
  return n;
}

template <class Config>
constexpr std::size_t default_resolution_capacity() noexcept {
  if constexpr (Config::is_fixed)
    return resolution_capacity(Config::value.maxspec);
  else
    return resolution_capacity(255);
}

template <class Config = runtime_config,
          std::size_t Capacity = default_resolution_capacity<Config>(),
          std::size_t TransactionCapacity = 1024>
class resolver {
 public:
  template <class C = Config, class = std::enable_if_t<C::is_fixed>>
  constexpr resolver() noexcept {}
  constexpr explicit resolver(const runtime_config& c) noexcept : cfg_(c) {}
  constexpr explicit resolver(const registers& r) noexcept : cfg_(r) {}

  constexpr const config& cfg() const noexcept { return cfg_.get(); }
  // Uncommitted P0 elements held (plus unseen ones from before the first Trace Info).
  constexpr std::size_t speculative() const noexcept { return p0_ + unseen_; }
  constexpr std::size_t queued() const noexcept { return q_.size(); }
  constexpr bool in_transaction() const noexcept { return in_tx_; }
  constexpr void reset() noexcept {
    q_.clear();
    tx_.clear();
    p0_ = unseen_ = mispredicts_ = 0;
    initialized_ = in_tx_ = starts_in_tx_ = false;
  }

  // Takes one stage-1 element; calls out(const element&) for every element that becomes
  // committed, and err(const diagnostic&) if a bounded queue overflows.
  template <class Out, class Err>
  TRACECODEC_HOT constexpr void push(const element& e, Out&& out, Err&& err) noexcept {
    if (cfg().maxspec == 0 && unseen_ == 0) {
      // MAXSPEC 0 (D1.10.1.1): every P0 element is committed as soon as it is traced, so
      // nothing ever waits. Commits and Discards have nothing to act on; a Mispredict comes
      // after its atom was committed and is passed on (as deliver() would).
      if (e.kind == element_kind::commit || e.kind == element_kind::discard ||
          e.kind == element_kind::cancel)
        return;
      if (e.kind == element_kind::trace_info) initialized_ = true;
      deliver_committed(e, out, err);
      return;
    }
    switch (e.kind) {
      case element_kind::trace_info:  // D9.3.2.1: unseen speculative elements precede it
        if (!initialized_) {  // analysis starts here, perhaps inside a transaction
          initialized_ = true;
          unseen_ = e.count;
          starts_in_tx_ = e.is(element_flag::in_transaction);
        }
        stack(e, out, err);
        return;
      case element_kind::commit: commit(e.count, out, err); return;
      case element_kind::cancel: cancel(e.count, out, err); return;
      case element_kind::discard: discard(out, err); return;
      case element_kind::mispredict:  // D9.3.1: stacked
        if (!q_.empty() || unseen_ != 0) ++mispredicts_;
        stack(e, out, err);
        return;
      default: stack(e, out, err); return;
    }
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
    if (bit & skip) return;
    if (e.kind == element_kind::trace_info) initialized_ = true;
    deliver_special(e, out, err);
  }

  // End of trace: everything still speculative stays unresolved; nothing is emitted.
  constexpr std::size_t unresolved() const noexcept { return speculative(); }

 private:
  static constexpr std::uint32_t low_bits(std::uint32_t n) noexcept {
    return n >= 32 ? ~0u : (1u << n) - 1u;
  }
  static constexpr bool kept_on_cancel(element_kind k) noexcept {
    // D9.3.4 Table D9.2: Cycle Count and Timestamp are processed, Event and Trace Info kept.
    return k == element_kind::cycle_count || k == element_kind::timestamp ||
           k == element_kind::event || k == element_kind::trace_info ||
           k == element_kind::timestamp_marker;
  }
  static constexpr bool kept_on_discard(element_kind k) noexcept {
    // D9.3.5.1: Event, Trace Info and Timestamp survive a Discard.
    return k == element_kind::event || k == element_kind::trace_info ||
           k == element_kind::timestamp || k == element_kind::timestamp_marker;
  }

  // Elements wait only behind an uncommitted P0 element; otherwise they are committed now.
  template <class Out, class Err>
  TRACECODEC_HOT constexpr void stack(const element& e, Out& out, Err& err) noexcept {
    if (q_.empty() && unseen_ == 0 && !e.p0) {
      deliver(e, out, err, false);
      return;
    }
    if (q_.full()) {  // more speculation than the capacity allows: commit the oldest
      err(diagnostic{error_code::resolution_overflow, e.offset, Capacity});
      force_commit_front(out, err);
    }
    q_.push_back(e);
    p0_ += p0_weight(e);
  }

  template <class Out, class Err>
  TRACECODEC_OUT_OF_LINE constexpr void force_commit_front(Out& out, Err& err) noexcept {
    if (q_.empty()) return;
    const element f = q_.front();
    q_.pop_front();
    p0_ -= p0_weight(f);
    deliver(f, out, err);
    release_front(out, err);
  }

  // After a commit, non-P0 elements at the front belong to committed execution.
  template <class Out, class Err>
  TRACECODEC_HOT constexpr void release_front(Out& out, Err& err) noexcept {
    if (unseen_ != 0) return;
    while (!q_.empty() && !q_.front().p0) {
      const element f = q_.front();
      q_.pop_front();
      deliver(f, out, err);
    }
  }

  // D9.3.3.1 ProcessCommit(): the oldest `n` P0 elements, unseen ones first.
  template <class Out, class Err>
  TRACECODEC_OUT_OF_LINE constexpr void commit(std::uint32_t n, Out& out, Err& err) noexcept {
    while (n && unseen_) {
      --unseen_;
      --n;
    }
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
        deliver_committed(part, out, err);  // the Mispredicts behind the run are for its end
        return;
      }
      const element f = front;
      q_.pop_front();
      p0_ -= w;
      n -= w;
      deliver(f, out, err);
      if (n == 0) release_front(out, err);
    }
  }

  // D9.3.4.1 ProcessCancel(): removes the youngest `n` P0 elements and, after the oldest of
  // them, everything Table D9.2 says to remove. Kept elements stay in place, in order.
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
        continue;
      }
      if (kept_on_cancel(x.kind))
        q_[w++] = x;
      else if (x.kind == element_kind::mispredict)
        --mispredicts_;
    }
    q_.truncate(w);
    while (n && unseen_) {  // more than the observed speculation: unseen elements
      --unseen_;
      --n;
    }
    release_front(out, err);  // kept elements with no P0 element before them are committed
  }

  // D9.3.5.1 ProcessDiscard(): all speculative elements go; Events, Trace Info and
  // Timestamps are passed on.
  template <class Out, class Err>
  TRACECODEC_OUT_OF_LINE constexpr void discard(Out& out, Err& err) noexcept {
    unseen_ = 0;
    p0_ = 0;
    for (std::size_t r = 0; r < q_.size(); ++r)
      if (kept_on_discard(q_[r].kind)) deliver(q_[r], out, err);
    q_.clear();
    mispredicts_ = 0;
  }

  // D2.5.4: a Mispredict element says the most recent non-canceled Atom element has the
  // wrong E/N status. It is stacked like any element (D9.3.1), so a Cancel can remove it
  // (Table D9.2). When an atom is committed, the Mispredicts queued after it (before the next
  // atom) are applied to it and consumed; a Mispredict whose atom was committed before it
  // arrived is passed on as an element, for the analysis stage to apply (D9.5.11).
  TRACECODEC_OUT_OF_LINE constexpr bool flip_for_mispredicts() noexcept {
    bool flip = false;
    for (std::size_t i = 0; i < q_.size(); ++i) {
      element& x = q_[i];
      if (x.kind == element_kind::atom) break;
      if (x.kind == element_kind::mispredict && !x.is(applied)) {
        flip = !flip;
        x.flags = static_cast<std::uint8_t>(x.flags | applied);
      }
    }
    return flip;
  }
  static constexpr std::uint8_t applied = 0x80;  // internal: Mispredict already applied

  // D9.4: the transaction stage on the committed stream. A Transaction Start opens a
  // transaction whose elements are held until Transaction Commit (passed on) or Transaction
  // Failure (dropped, except Events, Timestamps and Cycle Counts: D9.4.4 R_XPKFL, R_XZBFV).
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
  // the compiler still inlines the consumer (a call per element costs 25-30% of throughput).
  template <class Out, class Err>
  TRACECODEC_OUT_OF_LINE constexpr void deliver_special(const element& e, Out& out, Err& err) noexcept {
    switch (e.kind) {
      case element_kind::transaction_start:
        out(e);
        if (!in_tx_) {
          in_tx_ = true;
          tx_.clear();
        }
        return;
      case element_kind::transaction_commit:
        for (std::size_t i = 0; i < tx_.size(); ++i) out(static_cast<const element&>(tx_[i]));
        tx_.clear();
        in_tx_ = false;
        out(e);
        return;
      case element_kind::transaction_failure:
        for (std::size_t i = 0; i < tx_.size(); ++i) {
          const element& x = tx_[i];
          if (x.kind == element_kind::event || x.kind == element_kind::timestamp ||
              x.kind == element_kind::cycle_count || x.kind == element_kind::timestamp_marker ||
              x.kind == element_kind::trace_info || x.kind == element_kind::overflow)
            out(x);  // not execution: it survives the failure
        }
        tx_.clear();
        in_tx_ = false;
        out(e);
        return;
      case element_kind::trace_info:
        out(e);
        // D9.3.2.1: the Trace Info that starts analysis inside a transaction opens it. Later
        // ones restate a state that the transaction elements already track.
        if (starts_in_tx_ && !in_tx_) {
          in_tx_ = true;
          tx_.clear();
        }
        starts_in_tx_ = false;
        return;
      default:
        if (!in_tx_) {
          out(e);
          return;
        }
        if (tx_.full()) {  // a transaction longer than the buffer: its outcome is lost
          err(diagnostic{error_code::resolution_overflow, e.offset, TransactionCapacity});
          for (std::size_t i = 0; i < tx_.size(); ++i) out(static_cast<const element&>(tx_[i]));
          tx_.clear();
        }
        tx_.push_back(e);
        return;
    }
  }

  [[no_unique_address]] Config cfg_{};
  detail::element_ring<Capacity> q_{};
  detail::element_ring<TransactionCapacity> tx_{};
  std::size_t p0_ = 0;
  std::uint32_t unseen_ = 0;
  std::size_t mispredicts_ = 0;  // Mispredict elements stacked and not yet delivered or removed
  bool initialized_ = false;
  bool in_tx_ = false;
  bool starts_in_tx_ = false;
};

}  // namespace tracecodec::ete
