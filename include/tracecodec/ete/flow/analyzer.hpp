// SPDX-License-Identifier: Apache-2.0
// Stage 3 of the trace analyzer (D9.5): committed elements plus the program image give the
// instructions that executed. An Atom walks from the current address to the next P0
// instruction (D9.5.4); an Exception walks up to its preferred return address (D9.5.6); a
// Source Address up to and including its instruction (D9.5.7). Walks go through a block
// cache: per start address, the distance to the next P0 instruction, its kind and its target,
// so that an atom is one table lookup once its block has been seen.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../../arm/instruction.hpp"
#include "../../detail/hot.hpp"
#include "../element/element.hpp"
#include "../error.hpp"
#include "../packet/config.hpp"
#include "../packet/header_table.hpp"
#include "element.hpp"
#include "image.hpp"

namespace tracecodec::ete {

// The most instructions one walk follows without meeting a P0 instruction (or the preferred
// return address of an exception, or a source address) before it gives up with a no_sync
// element (reason walk_limit): work per element stays bounded whatever the image holds.
inline constexpr std::uint32_t flow_walk_limit = 1u << 16;
// Instructions one cached block covers at most (a walk chains blocks up to flow_walk_limit).
inline constexpr std::uint32_t flow_block_limit = 1024;
// Depth of the analyzer's return stack (D9.5.3 R_XSVZC).
inline constexpr unsigned flow_return_stack_depth = 15;

struct flow_options {
  arm::arch_version arch = arm::arch_version::newest;  // which encodings exist
  // Every atom through the general path, one at a time, instead of the loop over an atom
  // element's atoms: the same flow, slower. The reference the loop is tested against.
  bool atom_at_a_time = false;
  // The atoms of an atom element, when at most flow_memo_atoms remain, remembered by where
  // they start and their E/N pattern (their ranges, ready to pass on, and the state after
  // them), so that a repeat is one lookup, not a block lookup per atom. false: every atom
  // element through the block cache (the reference the memo is tested against).
  bool memo = true;
};

// Atoms of the longest atom element the memo keeps (an ETE atom packet of format 1-5 has at
// most 5; most have 3, D5.2).
inline constexpr unsigned flow_memo_atoms = 5;
// Elements the memo keeps at most for a window of two to eight atom packets (a window that
// gives more goes a packet at a time): flow_analyzer::process_atom_window.
inline constexpr unsigned flow_window_elements = 32;

namespace detail {

// A run of instructions from `start` up to and including the first P0 instruction (or up to
// where the memory ends, or flow_block_limit instructions).
struct alignas(32) flow_block {  // 32 bytes: an entry never spans two cache lines
  enum class end_kind : std::uint8_t { p0, not_accessible, limit };
  std::uint64_t start = 0;
  std::uint64_t target = 0;  // the P0 instruction's direct-branch target
  std::uint16_t bytes = 0;   // from start to the end of the last instruction (<= 4 * 1024)
  std::uint16_t count = 0;   // instructions, the last included (<= flow_block_limit)
  std::uint8_t space = 0;    // key: memory space looked up
  std::uint8_t set = 0xff;   // key: instruction set (0xff: empty entry)
  bool wide = false;         // key: built with 64-bit addresses (wrapping and targets masked
                             // to 32 bits otherwise)
  end_kind end = end_kind::p0;
  arm::instruction_type type = arm::instruction_type::other;
  arm::instruction_subtype subtype = arm::instruction_subtype::none;
  std::uint8_t size = 4;     // bytes of the last instruction
  bool conditional = false;
  bool link = false;
  arm::instruction_set next_set = arm::instruction_set::a64;
};

static_assert(sizeof(flow_block) == 32);

// D9.5 sync states. Bit 0: the address is known; bit 1: the context is. So learning one is
// an OR, not a branch on the state, which at a Target Address varies as irregularly as the
// trace (bench/README.md, "Program flow: single atom packets, Target Addresses, sync states").
enum class flow_sync : std::uint8_t { none, address, context, full };

// The analysis state that atoms, addresses and contexts move: the analyzer's live state
// (flow_analyzer::now_). What an atom run leaves (follow(): full, or waiting for a target) is
// kept in each memo entry and window, so that a replay sets it again with one copy. branch_*:
// the last P0 instruction's, an atom's or a Source Address's, for a Mispredict (D9.5.18.4
// ProcessBranchInstruction).
struct flow_state {
  std::uint64_t address = 0;  // where execution continues (D9.5.18.3)
  std::uint64_t branch_target = 0;
  arm::instruction_set set = arm::instruction_set::a64;
  arm::instruction_set branch_next_set = arm::instruction_set::a64;
  bool awaiting_target = false;  // after a taken indirect branch: waiting for its target
  flow_sync sync = flow_sync::none;
};

// An atom element's analysis from `start` (with the instruction set, memory space and address
// width in `key`, and its n atoms' E/N pattern): the state after it. Its n instruction ranges
// are kept apart (flow_analyzer::ranges_), ready to be passed on as they are: a replay writes
// only their offset, and holds the last one there for a Mispredict, not copied. Valid only for
// a run of whole blocks ending at P0 instructions with no taken indirect branch before the
// last atom (those depend on the return stack's contents, not only on the start).
struct flow_memo {
  std::uint64_t start = 0;
  std::uint64_t key = 0;            // 0: empty (n is never 0)
  // The state after the last atom: flow_state's fields, laid out as its first
  // flow_state_bytes (the static_assert below), so that a replay copies them as one block
  // (copy_state). sync follows from awaiting_target (context when waiting, else full), but is
  // kept so that a replay copies both rather than computing one per hit.
  std::uint64_t address = 0;
  std::uint64_t branch_target = 0;
  arm::instruction_set set = arm::instruction_set::a64;
  arm::instruction_set branch_next_set = arm::instruction_set::a64;
  bool awaiting_target = false;
  flow_sync sync = flow_sync::none;
  std::uint8_t pushes = 0;          // bit i: range i pushes (end, isa) (D9.5.3 R_HYMQH; RS only)
  std::uint8_t victim = 0;  // in a set's first way: the way a miss fills (way_to_fill)
};

static_assert(sizeof(flow_memo) == 40);

// Two to eight atom packets in a row (flow_analyzer::process_atom_window), keyed by their
// header bytes, where they start, and the instruction set, memory space and address width
// (`context`): the elements they gave (kept in flow_analyzer::ranges_, the last one the range
// held at the end) and the state after them, whose fields are in flow_memo's order so that a
// replay copies them the same way. Only with flow_options::memo, from a fully synchronized
// state without TRCCONFIGR.RS, where the analysis of atoms depends on nothing else but the
// image's contents (flow_analyzer::invalidate forgets the windows).
struct flow_window {
  std::uint64_t word = 0;
  std::uint64_t start = 0;
  std::uint64_t address = 0;  // as flow_memo's
  std::uint64_t branch_target = 0;
  arm::instruction_set set = arm::instruction_set::a64;
  arm::instruction_set branch_next_set = arm::instruction_set::a64;
  bool awaiting_target = false;
  flow_sync sync = flow_sync::none;
  std::uint8_t count = 0;  // elements; 0: empty; not_kept: a packet at a time
  std::uint8_t victim = 0;  // in a set's first way: the way a miss fills (way_to_fill)
  std::uint64_t context = 0;
  std::uint8_t at[flow_window_elements]{};  // each element's packet: offset - the first's
  static constexpr std::uint8_t not_kept = 0xff;
};

// The victim bit of a two-way set (flow_memo and flow_window entries; `set` the index of its
// first way, which keeps the bit): a miss fills the way not used last, and a set never used
// before its first way, which a lookup tries first. Only the bookkeeping: each lookup's
// compares stay in its caller, where they measured fewer instructions (bench/README.md).
template <class Entry>
TRACECODEC_HOT constexpr void used_way(Entry* table, std::size_t set, std::size_t index) noexcept {
  table[set].victim = static_cast<std::uint8_t>((index - set) ^ 1u);
}
template <class Entry>
TRACECODEC_HOT constexpr std::size_t way_to_fill(Entry* table, std::size_t set) noexcept {
  const std::size_t index = set + table[set].victim;
  table[set].victim ^= 1u;
  return index;
}

// flow_state's fields up to sync, without its tail padding.
inline constexpr std::size_t flow_state_bytes = offsetof(flow_state, sync) + sizeof(flow_sync);
// ... and no byte of them is padding, where an entry could keep a field of its own.
static_assert(flow_state_bytes == sizeof(flow_state::address) + sizeof(flow_state::branch_target) +
                                      sizeof(flow_state::set) + sizeof(flow_state::branch_next_set) +
                                      sizeof(flow_state::awaiting_target) + sizeof(flow_state::sync));
// An entry's state fields (address .. sync) are flow_state's first flow_state_bytes: the same
// names and types at the same offsets, in types a byte copy may fill.
template <class Entry, class S = flow_state>
constexpr bool lays_out_state() noexcept {
  if constexpr (!std::is_standard_layout_v<Entry> || !std::is_standard_layout_v<S>) {
    return false;  // and offsetof is not for them
  } else {
    constexpr std::size_t b = offsetof(Entry, address);
    return std::is_trivially_copyable_v<Entry> && std::is_trivially_copyable_v<S> &&
           std::is_same_v<decltype(Entry::address), decltype(S::address)> &&
           std::is_same_v<decltype(Entry::branch_target), decltype(S::branch_target)> &&
           std::is_same_v<decltype(Entry::set), decltype(S::set)> &&
           std::is_same_v<decltype(Entry::branch_next_set), decltype(S::branch_next_set)> &&
           std::is_same_v<decltype(Entry::awaiting_target), decltype(S::awaiting_target)> &&
           std::is_same_v<decltype(Entry::sync), decltype(S::sync)> && offsetof(S, address) == 0 &&
           offsetof(Entry, branch_target) - b == offsetof(S, branch_target) &&
           offsetof(Entry, set) - b == offsetof(S, set) &&
           offsetof(Entry, branch_next_set) - b == offsetof(S, branch_next_set) &&
           offsetof(Entry, awaiting_target) - b == offsetof(S, awaiting_target) &&
           offsetof(Entry, sync) - b == offsetof(S, sync);
  }
}
static_assert(lays_out_state<flow_memo>() && lays_out_state<flow_window>());

// Sets `to`'s state fields from `from`'s (flow_state and the entries, laid out alike): one block
// copy, where GCC copied the fields one at a time; field by field only in constant evaluation,
// where a byte copy is not allowed.
template <class To, class From>
TRACECODEC_HOT constexpr void copy_state(To& to, const From& from) noexcept {
  static_assert(lays_out_state<To>() && lays_out_state<From>());
  if (std::is_constant_evaluated()) {
    to.address = from.address;
    to.branch_target = from.branch_target;
    to.set = from.set;
    to.branch_next_set = from.branch_next_set;
    to.awaiting_target = from.awaiting_target;
    to.sync = from.sync;
  } else {
    __builtin_memcpy(reinterpret_cast<unsigned char*>(&to) + offsetof(To, address),
                     reinterpret_cast<const unsigned char*>(&from) + offsetof(From, address), flow_state_bytes);
  }
}

struct return_stack_entry {
  std::uint64_t address = 0;
  arm::instruction_set set = arm::instruction_set::a64;
};

}  // namespace detail

// Config: as for the other layers (fixed_config<...> or runtime_config). CacheBlocks: entries
// of the block cache (a power of two; each is 32 bytes).
static_assert(flow_block_limit * 4 <= 0xffff, "flow_block::bytes and count are 16 bits");
template <class Config = runtime_config, std::size_t CacheBlocks = 4096>
class flow_analyzer {
  static_assert(CacheBlocks >= 2 && (CacheBlocks & (CacheBlocks - 1)) == 0,
                "the block cache size must be a power of two");
  static constexpr unsigned cache_bits = [] {
    unsigned b = 0;
    while ((std::size_t{1} << b) < CacheBlocks) ++b;
    return b;
  }();
  // The memo has a quarter as many entries as the block cache (each 40 bytes, and 320 for its
  // ranges; 2 for a cache of fewer than 8).
  static constexpr unsigned memo_bits = cache_bits > 3 ? cache_bits - 2 : 1;

 public:
  template <class C = Config, class = std::enable_if_t<C::is_fixed>>
  constexpr explicit flow_analyzer(program_image& image, const flow_options& o = {}) noexcept
      : image_(&image), classify_(o.arch, cfg_.get().profile == pe_profile::m),
        atom_at_a_time_(o.atom_at_a_time), memo_atoms_(memo_atoms(o)) {}
  constexpr flow_analyzer(const registers& r, program_image& image,
                          const flow_options& o = {}) noexcept
      : cfg_(r), image_(&image), classify_(o.arch, r.profile == pe_profile::m),
        atom_at_a_time_(o.atom_at_a_time), memo_atoms_(memo_atoms(o)) {}

  constexpr const config& cfg() const noexcept { return cfg_.get(); }

  // A new session: not synchronized, return stack empty. The block cache is kept (the image
  // is the same); invalidate() forgets it.
  constexpr void reset(sync_reason why = sync_reason::new_session) noexcept {
    now_.sync = sync::none;
    now_.awaiting_target = false;
    pending_ = false;
    held_at_ = 0;
    q_pending_ = false;
    passive_count_ = 0;
    nacc_ = false;
    rs_size_ = 0;
    ctx_known_ = 0;
    announce_ = why;
    started_ = false;
    ctx_ = context{};
    space_ = memory_space::of(0, false, false);
    addr_mask_ = 0xffffffffu;
    memo_context_ = memo_context();
    now_.address = 0;
    now_.set = arm::instruction_set::a64;
  }
  // Fully synchronized (address, context and the path known: D9.5 sync states).
  constexpr bool synchronized() const noexcept { return now_.sync == sync::full; }

  // Whether analysis goes on from here exactly as o's does: the same state, the block cache
  // and the image aside (a segment of a buffer analyzed on its own joins the serial analysis
  // where this holds: host/ete/parallel.hpp). Not compared: what is read only under a flag
  // that is clear (the held range and its branch under pending_, q_ under q_pending_, the
  // place of an inaccessible walk under nacc_), the return stack's entries below its live
  // ones, and the last walk's last instruction (every walk writes it before it is read).
  constexpr bool same_analysis(const flow_analyzer& o) const noexcept {
    if (now_.sync != o.now_.sync || now_.awaiting_target != o.now_.awaiting_target ||
        now_.set != o.now_.set || now_.address != o.now_.address || pending_ != o.pending_ ||
        q_pending_ != o.q_pending_ || passive_count_ != o.passive_count_ || started_ != o.started_ ||
        (!started_ && announce_ != o.announce_) || !(ctx_ == o.ctx_) || ctx_known_ != o.ctx_known_ ||
        nacc_ != o.nacc_ || (nacc_ && nacc_at_ != o.nacc_at_) || space_ != o.space_ ||
        addr_mask_ != o.addr_mask_ || rs_size_ != o.rs_size_)
      return false;
    if (pending_ && !(held() == o.held() && now_.branch_target == o.now_.branch_target &&
                      branch_set_ == o.branch_set_ && now_.branch_next_set == o.now_.branch_next_set))
      return false;
    if (q_pending_ && !(q_ == o.q_)) return false;
    for (unsigned i = 0; i < passive_count_; ++i)
      if (!(passive_[i] == o.passive_[i])) return false;
    for (unsigned i = 1; i <= rs_size_; ++i) {  // the live entries, top first
      const auto& a = rs_[(rs_top_ + flow_return_stack_depth - i) % flow_return_stack_depth];
      const auto& b = o.rs_[(o.rs_top_ + flow_return_stack_depth - i) % flow_return_stack_depth];
      if (a.address != b.address || a.set != b.set) return false;
    }
    return true;
  }

  // Atom elements replayed from the memo (flow_options::memo) since construction.
  constexpr std::uint64_t memo_hits() const noexcept { return memo_hits_; }

  // Forgets the cached blocks (call when the image's contents changed).
  constexpr void invalidate() noexcept {
    for (auto& b : cache_) b.set = 0xff;
    for (auto& m : memo_) m.key = 0;
    for (auto& w : windows_) w.count = 0;
    image_->invalidate();
  }

  // The no_sync element that opens a session, at the offset of the first packet.
  template <class Out>
  constexpr void begin(std::uint64_t offset, Out& out) noexcept {
    if (started_) return;
    started_ = true;
    flow_element f{};
    f.kind = flow_kind::no_sync;
    f.offset = offset;
    f.reason = announce_;
    out(f);
  }

  // Analysis after a decoding error: what is held goes out, then nothing is known until the
  // next Trace Info, Trace On and address (D9.1.1).
  template <class Out>
  constexpr void lost_sync(std::uint64_t offset, Out& out) noexcept {
    flush(out);
    now_.sync = sync::none;
    now_.awaiting_target = false;
    nacc_ = false;
    flow_element f{};
    f.kind = flow_kind::no_sync;
    f.offset = offset;
    f.reason = sync_reason::decode_error;
    out(f);
  }

  // The end of the trace. A Context element that no execution follows is not passed on (it
  // changes nothing that was traced; OpenCSD drops it too).
  template <class Out>
  constexpr void end(std::uint64_t offset, Out& out) noexcept {
    if (q_pending_ && q_.kind == flow_kind::context) q_pending_ = false;
    flush(out);  // what was held behind the dropped context goes out
    flow_element f{};
    f.kind = flow_kind::end_of_trace;
    f.offset = offset;
    out(f);
  }

  // One committed element (the resolver's output). out(const flow_element&).
  template <class Out>
  TRACECODEC_HOT constexpr void process(const element& e, Out& out) noexcept {
    if (e.kind == element_kind::atom && !q_pending_) {  // the common case first
      atoms(e.offset, atom_pattern(e), atom_count(e), out);  // it passes the held range on itself
      return;
    }
    // The next most common: what process_rest() does with them when no Q or context is held.
    if (!q_pending_ && e.kind == element_kind::target_address) {
      // The held range stays held: a Mispredict after this address still corrects its atom,
      // and the address is then discarded (D6.9.14; mispredict() follows the branch again).
      // It emits nothing, so the output order is the same.
      target(e);
      return;
    }
    if (!q_pending_ && is_passive(e.kind)) {
      keep_or_pass(waiting_of(e), out);
      return;
    }
    process_rest(e, out);
  }
  // process() of an Atom element run at `offset` of n atoms, bit k of `bits` atom k taken,
  // given as these fields (element_reader's atoms() sink).
  template <class Out>
  TRACECODEC_HOT constexpr void process_atoms(std::uint64_t offset, std::uint32_t bits, unsigned n,
                                              Out& out) noexcept {
    if (!q_pending_) {
      atoms(offset, bits, n, out);
      return;
    }
    element e{};
    e.offset = offset;
    e.kind = element_kind::atom;
    e.p0 = true;
    e.count = n;
    e.atom_bits = bits;
    process_rest(e, out);
  }
  // process() of a Target Address element at `offset`, given as its fields (element_reader's
  // target_address() sink).
  template <class Out>
  TRACECODEC_HOT constexpr void process_target(std::uint64_t offset, std::uint64_t address, isa sub_isa,
                                               Out& out) noexcept {
    if (!q_pending_) {
      target(address, sub_isa);  // as process(): the held range stays held
      return;
    }
    process_rest(target_address_element(offset, address, sub_isa), out);
  }
  // process() of a Cycle Count element at `offset` (element_reader's cycle_count() sink): a
  // passive element, kept behind a held range as process() keeps one.
  template <class Out>
  TRACECODEC_HOT constexpr void process_cycle_count(std::uint64_t offset, std::uint32_t cycles, Out& out) noexcept {
    if (!q_pending_) {
      waiting w;
      w.offset = offset;
      w.kind = flow_kind::cycle_count;
      w.count = cycles;
      keep_or_pass(w, out);
      return;
    }
    process_rest(cycle_count_element(offset, cycles), out);
  }
  // process_atoms() of two to eight atom packets in a row from offset on, their header bytes
  // in `word` (the first in its low byte, zero bytes above the last): with the memo
  // (flow_options::memo) and without TRCCONFIGR.RS, from a fully synchronized state, one
  // lookup and the elements replayed when the window memo holds them for this start, else
  // analyzed a packet at a time and kept.
  template <class Out>
  TRACECODEC_HOT constexpr void process_atom_window(std::uint64_t offset, std::uint64_t word, Out& out) noexcept {
    if (q_pending_ || memo_atoms_ == 0 || cfg().rs) {
      window_apart(offset, word, out);
      return;
    }
    if (pending_) flush_range(out);
    if (now_.sync != sync::full || now_.awaiting_target) {
      window_apart(offset, word, out);
      return;
    }
    const std::uint64_t context = static_cast<std::uint64_t>(now_.set) << 40 | memo_context_;
    // Two-way set associative, as the memo (memo_run): with one way, windows a loop repeats
    // evicted each other (bench/README.md, "Program flow: Cycle Counts straight to the analyzer").
    const std::size_t set =
        static_cast<std::size_t>(((now_.address ^ word ^ context) * 0x9e3779b97f4a7c15u) >> (64 - window_bits)) &
        ~std::size_t{1};
    auto holds = [&](const detail::flow_window& w) {
      return w.word == word && w.start == now_.address && w.context == context && w.count != 0;
    };
    std::size_t index = set;
    if (!holds(windows_[index]) && !holds(windows_[++index])) {
      index = detail::way_to_fill(windows_, set);
      window_record(offset, word, context, windows_[index], index, out);
      return;
    }
    detail::used_way(windows_, set, index);
    detail::flow_window& m = windows_[index];
    if (m.count == detail::flow_window::not_kept) {  // such as too many elements
      window_apart(offset, word, out);
      return;
    }
    ++window_hits_;
    const std::size_t first = window_first + index * flow_window_elements;
    const unsigned last = m.count - 1u;
    for (unsigned i = 0; i < last; ++i) {
      flow_element& f = ranges_[first + i];
      f.offset = offset + m.at[i];
      out(static_cast<const flow_element&>(f));
    }
    flow_element& h = ranges_[first + last];
    h.offset = offset + m.at[last];
    hold_replayed(m, first + last, h);
  }
  // Window replays (process_atom_window) since construction.
  constexpr std::uint64_t window_hits() const noexcept { return window_hits_; }

 private:
  // The rest, out of line: process() is inlined at each of the packet decoder's calls to its
  // consumer, and a copy of all of this at each made the flow decoder's loop one function of
  // hundreds of KiB that GCC took minutes to compile (bench/README.md).
  template <class Out>
  TRACECODEC_OUT_OF_LINE constexpr void process_rest(const element& e, Out& out) noexcept {
    if (e.kind == element_kind::mispredict) {
      mispredict();
      return;
    }
    if (q_pending_ && q_.kind == flow_kind::context) {
      // A held context stays held through its Target Address (it takes that address's
      // instruction set, D9.2.14.8) and through the elements that are not execution, which
      // wait behind it in order: a context that no execution follows is not passed on.
      if (e.kind == element_kind::target_address) {
        if (q_.offset == e.offset) q_.isa = set_for(e.sub_isa);
        target(e);
        return;
      }
      if (is_passive(e.kind) && passive_count_ < max_passive) {
        keep_passive(e);
        return;
      }
    }
    if (q_pending_) {
      // A Q's range ends where the Target Address after it says; a context element takes
      // the instruction set of the address that comes with it (D9.2.14.8).
      if (e.kind == element_kind::target_address) {
        if (q_.kind == flow_kind::range_without_path)
          q_.end = mask(e.address);
        else if (q_.offset == e.offset)
          q_.isa = set_for(e.sub_isa);
      }
      q_pending_ = false;
      out(q_);
      release_passive(out);
    }
    flush(out);
    if (is_passive(e.kind)) {
      passive(e, out);
      return;
    }
    switch (e.kind) {
      case element_kind::atom: atoms(e.offset, atom_pattern(e), atom_count(e), out); return;
      case element_kind::trace_info:  // D9.5.9 (the return stack restarts: see README)
        check_return_stack();
        rs_size_ = 0;
        return;
      case element_kind::trace_on: {  // D9.5.10
        rs_size_ = 0;
        now_.sync = sync::none;
        now_.awaiting_target = false;
        nacc_ = false;
        flow_element f = make(flow_kind::trace_on, e);
        f.reason = sync_reason::trace_on;
        out(f);
        return;
      }
      case element_kind::target_address: target(e); return;
      case element_kind::context: context_element(e, out); return;
      case element_kind::exception: exception(e, out); return;
      case element_kind::source_address: source(e, out); return;
      case element_kind::q: q(e, out); return;
      case element_kind::discard:  // D9.5.13
      case element_kind::overflow: {  // D9.5.14
        now_.sync = sync::none;
        now_.awaiting_target = false;
        flow_element f = make(flow_kind::no_sync, e);
        f.reason = e.kind == element_kind::discard ? sync_reason::discard : sync_reason::overflow;
        out(f);
        return;
      }
      case element_kind::instrumentation: {
        flow_element f = make(flow_kind::instrumentation, e);
        f.address = e.address;
        f.number = e.number;
        out(f);
        return;
      }
      case element_kind::exception_return:  // ETMv4 (IHI0064 6.4): the PE left an exception
        check_return_stack();
        out(make(flow_kind::exception_return, e));
        return;
      case element_kind::function_return:  // ETMv4 Armv8-M: says nothing about the path taken
        return;
      case element_kind::transaction_start: out(make(flow_kind::transaction_start, e)); return;
      case element_kind::transaction_commit: out(make(flow_kind::transaction_commit, e)); return;
      case element_kind::transaction_failure: out(make(flow_kind::transaction_failure, e)); return;
      default: return;  // Commit, Cancel: resolved by stage 2 (D9.5.1 never sees them)
    }
  }

 public:
  // What is held back goes out: a context or Q (q_), or the range held for a Mispredict that
  // may follow (never both), then the elements that waited behind it.
  template <class Out>
  constexpr void flush(Out& out) noexcept {
    if (q_pending_) {
      q_pending_ = false;
      out(q_);
    }
    flush_range(out);
  }

 private:
  // flush() where no context or Q is held (atoms(): process() sends atoms there only then,
  // process_rest() after a flush(), and an atom's analysis holds none). Forced inline: with
  // the window path's call as well, GCC put it out of line, a call at every atom packet.
  template <class Out>
  TRACECODEC_HOT constexpr void flush_range(Out& out) noexcept {
    if (pending_) {
      pending_ = false;
      const flow_element& h = held();
      out(h);
      // ETE: an ERET's E atom means the PE returned from the exception (D3.1.4, Table D3.4),
      // so its range implies the return. ETMv4 traces it as an Exception Return element of
      // its own (exception_return below).
      if (h.last_subtype == arm::instruction_subtype::eret && h.taken && !cfg().etmv4()) {
        flow_element r{};
        r.kind = flow_kind::exception_return;
        r.offset = h.offset;
        out(r);
      }
    }
    release_passive(out);
  }

  // A window's packets one at a time (D9.2.10 gives each header's atoms). Out of line: up to eight
  // copies of the atom path would swell the decode loop it is called from.
  template <class Out>
  TRACECODEC_OUT_OF_LINE constexpr void window_apart(std::uint64_t offset, std::uint64_t word, Out& out) noexcept {
    detail::each_atom_packet(offset, word, [&](std::uint64_t at, std::uint32_t bits, unsigned n) {
      process_atoms(at, bits, n, out);
    });
  }
  // A window the memo does not hold: its packets one at a time, every element they give copied
  // as it goes out. The window is kept when they were all ranges (and the exception returns
  // their flushes imply), at most flow_window_elements with the range held at the end; else it
  // is marked not_kept, and goes a packet at a time when it comes again. The caller checked
  // what makes the analysis depend on the key alone (flow_window).
  template <class Out>
  TRACECODEC_OUT_OF_LINE constexpr void window_record(std::uint64_t offset, std::uint64_t word,
                                                      std::uint64_t context, detail::flow_window& m,
                                                      std::size_t index, Out& out) noexcept {
    m.count = 0;
    const std::uint64_t start = now_.address;
    flow_element* const kept = &ranges_[window_first + index * flow_window_elements];
    unsigned n = 0;
    bool keep = true;
    auto record = [&](const flow_element& f) {
      if (n < flow_window_elements &&
          (f.kind == flow_kind::instruction_range || f.kind == flow_kind::exception_return)) {
        kept[n] = f;
        m.at[n] = static_cast<std::uint8_t>(f.offset - offset);
      } else {
        keep = false;
      }
      ++n;
      out(f);
    };
    detail::each_atom_packet(offset, word, [&](std::uint64_t at, std::uint32_t bits, unsigned n) {
      atoms(at, bits, n, record);
    });
    // A held range at the end means the last packet's atoms were analyzed, which leaves the
    // state full or waiting for a target (follow()). Every element's offset is one of the
    // window's (its packet's).
    m.word = word;
    m.start = start;
    m.context = context;
    if (!keep || !pending_ || n >= flow_window_elements) {
      m.count = detail::flow_window::not_kept;
      return;
    }
    kept[n] = held();
    m.at[n] = static_cast<std::uint8_t>(held().offset - offset);
    detail::copy_state(m, now_);
    m.count = static_cast<std::uint8_t>(n + 1);
  }

  using sync = detail::flow_sync;  // D9.5 sync states
  static_assert(static_cast<unsigned>(sync::full) == (static_cast<unsigned>(sync::address) |
                                                      static_cast<unsigned>(sync::context)));
  static constexpr sync learned(sync s, sync known) noexcept {
    return static_cast<sync>(static_cast<std::uint8_t>(s) | static_cast<std::uint8_t>(known));
  }

  // The state after an atom's range held (follow(): full, or waiting for a target), kept in a
  // memo entry or window (detail::copy_state(entry, now_)), set again when the entry is
  // replayed, with its last range h = ranges_[at] held.
  template <class Entry>
  TRACECODEC_HOT constexpr void hold_replayed(const Entry& m, std::size_t at, const flow_element& h) noexcept {
    pending_ = true;
    held_at_ = static_cast<std::uint32_t>(at);
    detail::copy_state(now_, m);
    branch_set_ = h.isa;
  }

  // Elements that are not execution and change no analysis state: they may wait behind a
  // held context or range.
  static constexpr bool is_passive(element_kind k) noexcept {
    return k == element_kind::timestamp || k == element_kind::cycle_count ||
           k == element_kind::event || k == element_kind::timestamp_marker;
  }
  // A passive element as kept while it waits: its fields, not a whole flow element, so that
  // keeping one is a few stores and the flow element is made where it goes out.
  struct waiting {
    std::uint64_t offset = 0, timestamp = 0;
    std::uint32_t count = 0;
    std::uint16_t number = 0;
    flow_kind kind = flow_kind::timestamp_marker;
    std::uint8_t flags = 0;
    constexpr bool operator==(const waiting&) const = default;
  };
  static constexpr waiting waiting_of(const element& e) noexcept {
    waiting w;
    w.offset = e.offset;
    switch (e.kind) {
      case element_kind::timestamp:
        w.kind = flow_kind::timestamp;
        w.timestamp = e.timestamp;
        if (e.is(element_flag::has_cycles)) {
          w.flags = flow_flag::has_cycles;
          w.count = e.cycles;
        }
        break;
      case element_kind::cycle_count:
        w.kind = flow_kind::cycle_count;
        w.count = e.cycles;
        if (e.is(element_flag::cycles_unknown)) w.flags = flow_flag::cycles_unknown;
        break;
      case element_kind::event:
        w.kind = flow_kind::event;
        w.number = e.number;
        break;
      default: break;
    }
    return w;
  }
  static constexpr flow_element made(const waiting& w) noexcept {
    flow_element f{};
    f.kind = w.kind;
    f.offset = w.offset;
    f.timestamp = w.timestamp;
    f.count = w.count;
    f.number = w.number;
    f.flags = w.flags;
    return f;
  }
  template <class Out>
  constexpr void passive(const element& e, Out& out) noexcept {
    out(made(waiting_of(e)));
  }
  // Outside a Q: a passive element waits behind a held range, so that a Mispredict after it
  // still corrects that range (I_MDSCN, D9.5.11); it leaves after it, in stream order.
  template <class Out>
  TRACECODEC_HOT constexpr void keep_or_pass(const waiting& w, Out& out) noexcept {
    if (pending_ && passive_count_ < max_passive) {
      passive_[passive_count_++] = w;
      return;
    }
    flush(out);
    out(made(w));
  }
  // One kept to go out after what is held (passive_count_ < max_passive).
  constexpr void keep_passive(const element& e) noexcept { passive_[passive_count_++] = waiting_of(e); }
  template <class Out>
  constexpr void release_passive(Out& out) noexcept {
    if (passive_count_ == 0) return;  // at nearly every flush: no store then
    for (unsigned i = 0; i < passive_count_; ++i) out(made(passive_[i]));
    passive_count_ = 0;
  }

  static constexpr flow_element make(flow_kind k, const element& e) noexcept {
    flow_element f{};
    f.kind = k;
    f.offset = e.offset;
    return f;
  }

  // AArch32 addresses are 32 bits (D9.5.4.1: address<63:32> = Zeros()).
  constexpr std::uint64_t mask(std::uint64_t a) const noexcept { return a & addr_mask_; }
  constexpr arm::instruction_set set_for(isa sub) const noexcept {
    return ctx_.sf ? arm::instruction_set::a64
                   : sub == isa::is1 ? arm::instruction_set::t32 : arm::instruction_set::a32;
  }
  constexpr std::uint8_t space() const noexcept { return space_; }
  constexpr bool is_p0(const arm::instruction_info& i) const noexcept {
    return i.type != arm::instruction_type::other &&
           (i.type != arm::instruction_type::wfx || cfg().wfxmode);
  }

  // D9.5.8
  constexpr void target(const element& e) noexcept { target(e.address, e.sub_isa); }
  constexpr void target(std::uint64_t address, isa sub_isa) noexcept {
    nacc_ = false;
    now_.set = set_for(sub_isa);
    now_.address = mask(address);
    now_.awaiting_target = false;
    now_.sync = learned(now_.sync, sync::address);
  }

  // D9.5.5
  template <class Out>
  constexpr void context_element(const element& e, Out& out) noexcept {
    const bool was_sf = ctx_.sf;
    ctx_ = e.ctx;
    if (e.is(element_flag::has_context_id)) ctx_known_ |= flow_flag::context_id_known;
    if (e.is(element_flag::has_vmid)) ctx_known_ |= flow_flag::vmid_known;
    space_ = memory_space::of(ctx_.el, ctx_.ns, ctx_.nse);
    addr_mask_ = ctx_.sf ? ~std::uint64_t{0} : 0xffffffffu;
    memo_context_ = memo_context();
    if (was_sf != ctx_.sf) now_.set = ctx_.sf ? arm::instruction_set::a64 : arm::instruction_set::a32;
    now_.sync = learned(now_.sync, sync::context);
    q_ = make(flow_kind::context, e);
    q_.ctx = ctx_;
    q_.isa = now_.set;
    q_.flags = ctx_known_;
    q_pending_ = true;  // its instruction set may come with the address that follows
    (void)out;
  }

  // D9.5.18.2: an indirect P0 instruction traced E, and no Target Address before the next P0
  // element: the return stack's top entry is its target (D9.5.3 R_WGHSB).
  constexpr void check_return_stack() noexcept {
    if (!now_.awaiting_target) return;
    now_.awaiting_target = false;
    if (!cfg().rs || rs_size_ == 0) return;
    const detail::return_stack_entry top = pop_return();
    now_.address = top.address;
    now_.set = top.set;
    now_.sync = sync::full;
  }
  // The top entry, taken off (rs_size_ > 0).
  constexpr detail::return_stack_entry pop_return() noexcept {
    rs_top_ = (rs_top_ == 0 ? flow_return_stack_depth : rs_top_) - 1;  // a compare, not a division
    --rs_size_;
    return rs_[rs_top_];
  }
  // D9.5.3.1: the oldest entry goes when the stack is full (R_HYMQH). Without TRCCONFIGR.RS
  // nothing pops (check_return_stack, atom_run), so nothing is pushed.
  constexpr void push_return(std::uint64_t address, arm::instruction_set s) noexcept {
    if (!cfg().rs) return;
    rs_[rs_top_] = {address, s};
    rs_top_ = rs_top_ + 1 == flow_return_stack_depth ? 0 : rs_top_ + 1;
    if (rs_size_ < flow_return_stack_depth) ++rs_size_;
  }

  // The block that starts at `start` (cached, or walked now). Two-way set associative: a miss
  // moves the set's first entry to its second place and builds the new block first, so that
  // two blocks a loop alternates between do not evict each other.
  TRACECODEC_HOT constexpr const detail::flow_block& block_at(std::uint64_t start,
                                                            std::uint8_t spc) noexcept {
    return cache_[block_entry(start, spc)];
  }
  TRACECODEC_HOT constexpr std::size_t block_entry(std::uint64_t start, std::uint8_t spc) noexcept {
    const std::size_t set =
        static_cast<std::size_t>(((start ^ (static_cast<std::uint64_t>(spc) << 48)) * 0x9e3779b97f4a7c15u) >>
                                 (64 - cache_bits)) &
        ~std::size_t{1};
    detail::flow_block* b = &cache_[set];
    if (holds(b[0], start, spc)) return set;
    if (holds(b[1], start, spc)) return set + 1;
    b[1] = b[0];
    build(b[0], start, spc);
    return set;
  }
  constexpr bool holds(const detail::flow_block& b, std::uint64_t start, std::uint8_t spc) const noexcept {
    return b.start == start && b.set == static_cast<std::uint8_t>(now_.set) && b.space == spc &&
           b.wide == wide();
  }

  TRACECODEC_OUT_OF_LINE constexpr void build(detail::flow_block& b, std::uint64_t start,
                                              std::uint8_t spc) noexcept {
    b = detail::flow_block{};
    b.start = start;
    b.space = spc;
    b.set = static_cast<std::uint8_t>(now_.set);
    b.wide = wide();
    cursor c = cursor_at(start, spc);
    std::uint32_t it = 0;  // T32: instructions left in the IT block
    while (b.count < flow_block_limit) {
      arm::instruction_info i{};
      const std::uint64_t at = c.at;
      if (!next(c, spc, i)) {
        b.end = detail::flow_block::end_kind::not_accessible;
        return;
      }
      const bool in_it = it != 0;
      if (it) --it;
      if (i.it_block) it = it_length(i.it_block);
      ++b.count;
      b.bytes += i.size;
      if (is_p0(i)) {
        b.end = detail::flow_block::end_kind::p0;
        b.type = i.type;
        b.subtype = i.subtype;
        b.size = i.size;
        b.conditional = i.conditional || in_it;
        b.link = i.link;
        b.next_set = i.next_set;
        b.target = branch_target(at, i);
        return;
      }
    }
    b.end = detail::flow_block::end_kind::limit;
  }

  static constexpr std::uint32_t it_length(std::uint8_t firstcond_mask) noexcept {
    const unsigned m = firstcond_mask & 0xfu;  // the lowest set bit ends the mask (A8.8.55)
    return m & 1u ? 4 : m & 2u ? 3 : m & 4u ? 2 : m & 8u ? 1 : 0;
  }

  constexpr std::uint64_t branch_target(std::uint64_t at, const arm::instruction_info& i) const noexcept {
    if (now_.set == arm::instruction_set::t32 && i.next_set == arm::instruction_set::a32)
      return mask((at & ~std::uint64_t{3}) + static_cast<std::uint64_t>(i.branch_offset));  // BLX imm
    std::uint64_t t = mask(at + static_cast<std::uint64_t>(i.branch_offset));
    if (i.next_set == arm::instruction_set::t32) t &= ~std::uint64_t{1};
    return t;
  }

  // Reads instructions one after another from one view of the image, asking the image again
  // only where the view ends.
  struct cursor {
    std::uint64_t at = 0;
    const std::uint8_t* p = nullptr;
    std::size_t left = 0;
  };
  // Classifies the instruction at c.at and steps past it; false if memory is not there.
  constexpr bool next(cursor& c, std::uint8_t spc, arm::instruction_info& i) noexcept {
    if (now_.set == arm::instruction_set::a64 && c.left >= 4) {
      i = classify_.a64(load32(c.p));
    } else if (now_.set == arm::instruction_set::a32 && c.left >= 4) {
      i = classify_.a32(load32(c.p));
    } else if (now_.set == arm::instruction_set::t32 && c.left >= 4) {
      i = classify_.t32(load16(c.p), load16(c.p + 2));
    } else {
      if (!fetch(c.at, spc, i)) return false;
      c.at = mask(c.at + i.size);
      c.left = 0;  // refill at the next instruction
      return true;
    }
    c.at = mask(c.at + i.size);
    c.p += i.size;
    c.left -= i.size;
    if (c.left < 4) {  // the view ends: look again (it may continue in the next region)
      const program_image::view v = image_->find(c.at, spc);
      c.p = v.data;
      c.left = v.size;
    }
    return true;
  }
  constexpr cursor cursor_at(std::uint64_t at, std::uint8_t spc) noexcept {
    const program_image::view v = image_->find(at, spc);
    return {at, v.data, v.size};
  }
  static constexpr std::uint32_t load32(const std::uint8_t* p) noexcept {
    return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
           (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
  }
  static constexpr std::uint16_t load16(const std::uint8_t* p) noexcept {
    return static_cast<std::uint16_t>(p[0] | (p[1] << 8));
  }

  // Classifies the instruction at `at` in the current set; false if memory is not there.
  constexpr bool fetch(std::uint64_t at, std::uint8_t spc, arm::instruction_info& i) noexcept {
    std::uint8_t b[4];
    if (now_.set == arm::instruction_set::t32) {
      if (!read(at, spc, b, 2)) return false;
      const std::uint16_t first = static_cast<std::uint16_t>(b[0] | (b[1] << 8));
      std::uint16_t second = 0;
      if ((first >> 11) >= 0x1d) {  // 0b11101, 0b11110, 0b11111: 32-bit (A6.1)
        if (!read(at + 2, spc, b + 2, 2)) return false;
        second = static_cast<std::uint16_t>(b[2] | (b[3] << 8));
      }
      i = classify_.t32(first, second);
      return true;
    }
    if (!read(at, spc, b, 4)) return false;
    const std::uint32_t w = static_cast<std::uint32_t>(b[0]) | (static_cast<std::uint32_t>(b[1]) << 8) |
                            (static_cast<std::uint32_t>(b[2]) << 16) |
                            (static_cast<std::uint32_t>(b[3]) << 24);
    i = now_.set == arm::instruction_set::a64 ? classify_.a64(w) : classify_.a32(w);
    return true;
  }

  // n bytes at `at`, from as many views as they take: a view may end inside an instruction
  // (adjoining regions, or a reader callback that delivered fewer bytes), and whether it does
  // must not depend on where an earlier read began.
  constexpr bool read(std::uint64_t at, std::uint8_t spc, std::uint8_t* out, unsigned n) noexcept {
    for (unsigned k = 0; k < n;) {
      const program_image::view v = image_->find(at + k, spc);
      if (v.size == 0) return false;
      for (std::size_t j = 0; j < v.size && k < n; ++j) out[k++] = v.data[j];
    }
    return true;
  }

  template <class Out>
  constexpr void not_accessible(std::uint64_t at, std::uint64_t offset, Out& out) noexcept {
    flow_element f{};
    f.kind = flow_kind::address_not_accessible;
    f.offset = offset;
    f.address = at;
    f.space = space();
    out(f);
    now_.sync = sync::context;  // wait for the next address (D9.5.4.1)
    now_.awaiting_target = false;
    nacc_ = true;
    nacc_at_ = at;
  }

  template <class Out>
  constexpr void walk_limit(std::uint64_t offset, Out& out) noexcept {
    flow_element f{};
    f.kind = flow_kind::no_sync;
    f.offset = offset;
    f.reason = sync_reason::walk_limit;
    out(f);
    now_.sync = sync::context;
    now_.awaiting_target = false;
  }

  // What a P0 element (Atom, Source Address, Q) does first: a return stack match if one is
  // pending (D9.5.18.2), then it is analyzed only with both address and context known.
  constexpr bool ready_for_p0() noexcept {
    if (now_.sync == sync::full && !now_.awaiting_target) return true;  // the common case, two tests
    check_return_stack();
    if (now_.sync == sync::address) now_.sync = sync::none;
    return now_.sync == sync::full;
  }

  // An atom element's E/N pattern, bit i atom i (a run's atom_bits, or a single atom's taken).
  static constexpr std::uint32_t atom_pattern(const element& e) noexcept {
    return e.count ? e.atom_bits : static_cast<std::uint32_t>(e.taken);
  }

  // D9.5.4: each of the n atoms of an atom element at `offset`, bit k of `bits` atom k taken.
  // A run the memo takes whole (most of them) is one replay or recording, without the loop.
  template <class Out>
  TRACECODEC_HOT constexpr void atoms(std::uint64_t offset, std::uint32_t bits, unsigned n, Out& out) noexcept {
    unsigned k = 0;
    if (n - 1u < memo_atoms_) {  // 1..memo_atoms_ atoms (n = 0 wraps: nothing to do)
      if (pending_) flush_range(out);
      if (ready_for_p0()) {
        k = memo_run(offset, bits, 0, n - 1, out);
        if (k == n) return;
        atom((bits >> k & 1u) != 0, offset, out);
      }
      ++k;
    }
    atoms_from(offset, bits, k, n, out);
  }
  // atoms() from atom k on.
  template <class Out>
  constexpr void atoms_from(std::uint64_t offset, std::uint32_t bits, unsigned k, unsigned n, Out& out) noexcept {
    for (; k < n; ++k) {
      if (pending_) flush_range(out);
      if (!ready_for_p0()) continue;
      if (n - k <= memo_atoms_)
        k = memo_run(offset, bits, k, n - 1, out);
      else if (!atom_at_a_time_)
        k = atom_run<false>(offset, bits, k, n - 1, out, nullptr, nullptr, 0);
      if (k < n) atom((bits >> k & 1u) != 0, offset, out);
    }
  }

  // Atoms k..last through the memo: replayed when it holds them, else analyzed by atom_run()
  // and kept when they qualify (see flow_memo).
  template <class Out>
  TRACECODEC_HOT constexpr unsigned memo_run(std::uint64_t offset, std::uint32_t bits, unsigned k, unsigned last,
                                             Out& out) noexcept {
    const unsigned n = last - k + 1;
    // Unmasked: n is in the key, so bits above the run (none from the packet decoder's table)
    // only make a key of its own, a miss.
    const std::uint32_t pattern = bits >> k;
    const std::uint64_t key = static_cast<std::uint64_t>(pattern) | static_cast<std::uint64_t>(n) << 32 |
                              static_cast<std::uint64_t>(now_.set) << 40 | memo_context_;
    // Two-way set associative: a few atom elements a loop repeats whose starts hash alike
    // would otherwise evict each other at every turn.
    const std::size_t set =
        static_cast<std::size_t>(((now_.address ^ key) * 0x9e3779b97f4a7c15u) >> (64 - memo_bits)) & ~std::size_t{1};
    std::size_t index = set;
    if (memo_[index].key != key || memo_[index].start != now_.address) {
      ++index;
      if (memo_[index].key != key || memo_[index].start != now_.address) {
        index = detail::way_to_fill(memo_, set);
        detail::flow_memo& v = memo_[index];
        v.key = 0;
        v.start = now_.address;
        return atom_run<true>(offset, bits, k, last, out, &v, &ranges_[1 + index * flow_memo_atoms], key);
      }
    }
    detail::used_way(memo_, set, index);
    const detail::flow_memo& m = memo_[index];
    ++memo_hits_;
    const std::size_t first = 1 + index * flow_memo_atoms;
    // The pushes first, in order (the consumer cannot see the return stack): one test when
    // there are none, as always without TRCCONFIGR.RS.
    for (unsigned i = 0, p = m.pushes; p != 0; ++i, p >>= 1)
      if (p & 1u) push_return(ranges_[first + i].end, ranges_[first + i].isa);
    for (unsigned i = 0; i + 1 < n; ++i) {
      flow_element& f = ranges_[first + i];
      f.offset = offset;
      out(static_cast<const flow_element&>(f));  // the consumer cannot change the memo
    }
    flow_element& h = ranges_[first + n - 1];
    h.offset = offset;
    hold_replayed(m, first + n - 1, h);
    return last + 1;
  }

  // Whether addresses are 64 bits wide (else wrapping and targets are masked to 32 bits).
  constexpr bool wide() const noexcept { return addr_mask_ >> 32 != 0; }
  // The memo key's bits for the memory space and the address width (both set by a context).
  constexpr std::uint64_t memo_context() const noexcept {
    return static_cast<std::uint64_t>(space_) << 48 | static_cast<std::uint64_t>(wide()) << 56;
  }

  // Atoms k..last of a run, while each ends a cached block at a P0 instruction: the range of
  // each but the last goes out at once, the address and instruction set in locals (not members
  // that the consumer's call would make the compiler reload); the last one's is held back for
  // a Mispredict that may follow (D9.5.11). Returns last + 1, or the first atom it did not
  // analyze: one that needs the general path (a block that is not a whole one; before the
  // last atom, an ERET or an indirect branch the return stack cannot resolve), which atom()
  // then takes. The same ranges and state as atom() and follow() an atom at a time (D9.5.4,
  // D9.5.18.3).
  // Record: memo (its key `key`) and its ranges (memo_ranges) are filled in as the run goes,
  // and made valid (the key set) when the last atom is reached with no taken indirect branch
  // before it.
  template <bool Record, class Out>
  constexpr unsigned atom_run(std::uint64_t offset, std::uint32_t bits, unsigned k, unsigned last, Out& out,
                              detail::flow_memo* memo, flow_element* memo_ranges, std::uint64_t key) noexcept {
    [[maybe_unused]] unsigned i = 0;
    [[maybe_unused]] bool keep = true;
    if constexpr (Record) memo->pushes = 0;
    const std::uint8_t spc = space();
    const std::uint64_t amask = addr_mask_;
    std::uint64_t at = now_.address;
    arm::instruction_set set = now_.set;
    flow_element f{};
    f.kind = flow_kind::instruction_range;
    f.offset = offset;
    std::size_t entry = block_entry(at, spc);
    for (;; ++k) {
      const detail::flow_block& b = cache_[entry];
      if (b.end != detail::flow_block::end_kind::p0) break;
      const bool taken = (bits >> k & 1u) != 0;
      const std::uint64_t end = (at + b.bytes) & amask;
      if (k == last) {
        hold(b, at, end, b.count, taken, offset);  // now_.set is set
        if constexpr (Record) {
          if (keep) {  // the held range and the state hold() and follow() left
            memo_ranges[i] = own_held();
            if (taken && b.link && b.type != arm::instruction_type::other && cfg().rs) memo->pushes |= 1u << i;
            detail::copy_state(*memo, now_);
            memo->key = key;
          }
        }
        return k + 1;
      }
      std::uint64_t next = end;
      arm::instruction_set next_set = set;
      if (taken) {
        const bool indirect = b.type == arm::instruction_type::indirect_branch;
        // An indirect branch: the next atom is the next P0 element and no Target Address came
        // before it, so the return stack's top entry is where it went (D9.5.18.2); without
        // one, or for an ERET (its exception return element), the general path.
        if (indirect && ((b.subtype == arm::instruction_subtype::eret && !cfg().etmv4()) ||
                         !cfg().rs || (rs_size_ == 0 && !b.link)))
          break;
        if (b.link) push_return(end, set);  // D9.5.3 R_HYMQH
        if constexpr (Record) keep = keep && !indirect;
        if (indirect) {
          const detail::return_stack_entry top = pop_return();
          next = top.address;
          next_set = top.set;
        } else if (b.type == arm::instruction_type::branch) {
          next = b.target;
          next_set = b.next_set;
        }
      }
      set_range(f, b, at, end, b.count, set, taken);
      if constexpr (Record) {
        memo_ranges[i] = f;
        if (taken && b.link && cfg().rs) memo->pushes |= 1u << i;  // as push_return()
        ++i;
      }
      at = next;
      if (next_set != set) now_.set = set = next_set;  // build() reads now_.set
      entry = block_entry(at, spc);
      out(f);
    }
    now_.address = at;
    now_.set = set;
    return k;
  }

  template <class Out>
  TRACECODEC_HOT constexpr void atom(bool taken, std::uint64_t offset, Out& out) noexcept {
    const std::uint8_t spc = space();
    std::uint64_t start = now_.address, at = now_.address;
    std::uint32_t count = 0;
    const detail::flow_block* b = &block_at(at, spc);
    while (b->end != detail::flow_block::end_kind::p0) {
      count += b->count;
      at = mask(at + b->bytes);
      if (b->end == detail::flow_block::end_kind::not_accessible || count >= flow_walk_limit) {
        if (count) emit_partial(start, at, count, offset, out);
        if (b->end == detail::flow_block::end_kind::not_accessible)
          not_accessible(at, offset, out);
        else
          walk_limit(offset, out);
        return;
      }
      b = &block_at(at, spc);
    }
    hold(*b, start, mask(at + b->bytes), count + b->count, taken, offset);
  }

  // An instruction range's fields: from start to the end of block b (its P0 instruction).
  static constexpr void set_range(flow_element& f, const detail::flow_block& b, std::uint64_t start,
                                  std::uint64_t end, std::uint32_t count, arm::instruction_set set,
                                  bool taken) noexcept {
    f.address = start;
    f.end = end;
    f.count = count;
    f.isa = set;
    f.last_type = b.type;
    f.last_subtype = b.subtype;
    f.last_size = b.size;
    f.conditional = b.conditional;
    f.taken = taken;
  }

  // The range of an atom, from start to the end of block b (its P0 instruction), held back
  // for a Mispredict that may follow (D9.5.11); then the state after it.
  constexpr void hold(const detail::flow_block& b, std::uint64_t start, std::uint64_t end,
                      std::uint32_t count, bool taken, std::uint64_t offset) noexcept {
    flow_element& h = own_held();
    h.kind = flow_kind::instruction_range;
    h.offset = offset;
    set_range(h, b, start, end, count, now_.set, taken);
    pending_ = true;
    held_at_ = 0;
    branch_set_ = now_.set;
    now_.branch_target = b.target;
    now_.branch_next_set = b.next_set;
    if (taken && b.link && b.type != arm::instruction_type::other)  // D9.5.3 R_HYMQH
      push_return(end, now_.set);
    follow(taken);
  }

  // The state after the held P0 instruction, taken or not (D9.5.18.3 UpdateBranchState).
  constexpr void follow(bool taken) noexcept {
    now_.sync = sync::full;
    now_.awaiting_target = false;
    now_.set = branch_set_;
    if (!taken) {
      now_.address = own_held().end;
      return;
    }
    switch (own_held().last_type) {
      case arm::instruction_type::branch:
        now_.address = now_.branch_target;
        now_.set = now_.branch_next_set;
        return;
      case arm::instruction_type::indirect_branch:
        now_.sync = sync::context;  // waiting for a Target Address or a return stack match
        now_.awaiting_target = true;
        return;
      default: now_.address = own_held().end; return;  // ISB, WFx, TSTART
    }
  }

  // The held range (under pending_).
  constexpr const flow_element& held() const noexcept { return ranges_[held_at_]; }
  // The held range of the analyzer's own (not a memo's): what hold() and source() write.
  constexpr flow_element& own_held() noexcept { return ranges_[0]; }

  // D9.5.11: the most recent atom had the other status. Its branch is followed again, which
  // discards any Target Address since that atom (D6.9.14).
  constexpr void mispredict() noexcept {
    if (!pending_) return;
    if (held_at_ != 0) {  // the memo's copy stays as it was recorded
      own_held() = held();
      held_at_ = 0;
    }
    flow_element& h = own_held();
    if (h.kind != flow_kind::instruction_range) return;
    h.taken = !h.taken;
    follow(h.taken);
  }

  template <class Out>
  constexpr void emit_partial(std::uint64_t start, std::uint64_t end, std::uint32_t count,
                              std::uint64_t offset, Out& out) noexcept {
    flow_element f{};
    f.kind = flow_kind::instruction_range;
    f.offset = offset;
    f.address = start;
    f.end = end;
    f.count = count;
    f.isa = now_.set;
    f.taken = false;
    out(f);
  }

  // Walks one instruction at a time from now_.address while `more(address)` holds; P0 instructions
  // on the way count as not taken (D9.5.6.1, D9.5.7.1). Emits one range. Returns false if the
  // walk could not finish (memory not accessible, or the walk limit).
  template <class More, class Out>
  constexpr bool walk(More more, bool last_taken, std::uint64_t offset, Out& out) noexcept {
    const std::uint8_t spc = space();
    const std::uint64_t start = now_.address;
    std::uint64_t at = now_.address;
    std::uint32_t count = 0, it = 0;
    arm::instruction_info last{};
    std::uint64_t last_at = at;
    bool last_in_it = false;
    cursor c = cursor_at(at, spc);
    while (more(at)) {
      if (count >= flow_walk_limit) {
        if (count) emit_partial(start, at, count, offset, out);
        walk_limit(offset, out);
        return false;
      }
      arm::instruction_info i{};
      if (!next(c, spc, i)) {
        if (count) emit_partial(start, at, count, offset, out);
        not_accessible(at, offset, out);
        return false;
      }
      last_in_it = it != 0;
      if (it) --it;
      if (i.it_block) it = it_length(i.it_block);
      if (is_p0(i) && i.link && cfg().rs && last_taken && !more(mask(at + i.size)))
        push_return(mask(at + i.size), now_.set);
      last = i;
      last_at = at;
      ++count;
      at = mask(at + i.size);
    }
    if (count) {
      flow_element f{};
      f.kind = flow_kind::instruction_range;
      f.offset = offset;
      f.address = start;
      f.end = at;
      f.count = count;
      f.isa = now_.set;
      f.last_type = is_p0(last) ? last.type : arm::instruction_type::other;
      f.last_subtype = is_p0(last) ? last.subtype : arm::instruction_subtype::none;
      f.last_size = last.size;
      f.conditional = is_p0(last) && (last.conditional || last_in_it);
      f.taken = true;
      out(f);
    }
    now_.address = at;
    last_ = last;
    last_at_ = last_at;
    return true;
  }

  // D9.5.6.1: the instructions from now_.address up to `per` (exclusive), P0 instructions on the way
  // not taken, as one range. Whole blocks come from the block cache; in the block that `per`
  // cuts, no instruction before `per` is a P0 instruction, so A64 and A32 count them by size.
  // T32, missing memory, the walk limit and wrapping take the walk one instruction at a time.
  template <class Out>
  constexpr void walk_to(std::uint64_t per, std::uint64_t offset, Out& out) noexcept {
    const std::uint64_t start = now_.address;
    std::uint64_t at = start;
    std::uint32_t count = 0;
    detail::flow_block last{};  // a copy: a later lookup may rebuild the slot
    bool last_p0 = false;
    while (at < per) {
      const detail::flow_block& b = block_at(at, space_);
      const bool whole = b.end == detail::flow_block::end_kind::p0 && per - at >= b.bytes;
      if (whole && count + b.count < flow_walk_limit && mask(at + b.bytes) > at) {
        count += b.count;
        at = mask(at + b.bytes);
        last = b;
        last_p0 = true;
        continue;
      }
      // `per` inside the block's instructions, none of them a P0 instruction before it.
      const bool inside = per - at < b.bytes ||
                          (per - at == b.bytes && b.end != detail::flow_block::end_kind::p0);
      if (!inside || now_.set == arm::instruction_set::t32 || ((per - at) & 3u) != 0) {
        walk([per](std::uint64_t a) { return a < per; }, false, offset, out);
        return;
      }
      count += static_cast<std::uint32_t>((per - at) / 4);
      at = per;
      last_p0 = false;
    }
    if (count) {
      flow_element f{};
      f.kind = flow_kind::instruction_range;
      f.offset = offset;
      f.address = start;
      f.end = at;
      f.count = count;
      f.isa = now_.set;
      f.taken = true;
      if (last_p0) {
        f.last_type = last.type;
        f.last_subtype = last.subtype;
        f.last_size = last.size;
        f.conditional = last.conditional;
      }
      out(f);
    }
    now_.address = at;
  }

  // D9.5.6
  template <class Out>
  constexpr void exception(const element& e, Out& out) noexcept {
    check_return_stack();
    // ETMv4 on an M-profile PE: return address 0xFFFFFFFE is a tail-chained exception, taken
    // on the way out of the one before; no instruction ran between them (IHI0064 6.4.13).
    const bool tail_chain = cfg().etmv4() && cfg().profile == pe_profile::m &&
                            !e.is(element_flag::unknown_address) && e.address == 0xfffffffeu;
    if (!e.is(element_flag::unknown_address) && !tail_chain) {
      const std::uint64_t per = mask(e.address);
      if (now_.sync == sync::full) {
        if (now_.address < per) walk_to(per, e.offset, out);
        now_.address = per;
      } else if (now_.sync == sync::context) {
        // Execution stopped being followed where the memory was not accessible: the path
        // from there up to a later preferred return address is not known either, and the
        // element says so again, for the exception (as OpenCSD reports it; a return address
        // below it is no walk, as in walk_to()).
        if (nacc_ && per > nacc_at_) not_accessible(nacc_at_, e.offset, out);
        nacc_ = false;
        // Waiting for an address (an indirect branch's target): the preferred return address
        // is where execution was.
        now_.address = per;
        now_.sync = sync::full;
        now_.awaiting_target = false;
      }
    }
    flow_element f = make(flow_kind::exception, e);
    f.address = mask(e.address);
    f.number = e.exception_type;
    f.flags = static_cast<std::uint8_t>(
        (e.is(element_flag::unknown_address) ? flow_flag::unknown_address : 0) |
        (e.is(element_flag::return_is_target) ? flow_flag::return_is_target : 0));
    out(f);
  }

  // D9.5.7: instructions up to and including the one at the source address; it was taken.
  template <class Out>
  constexpr void source(const element& e, Out& out) noexcept {
    if (!ready_for_p0()) return;
    const std::uint64_t src = mask(e.address);
    if (!atom_at_a_time_ && source_blocks(src, e.offset, out)) {
      follow(true);
      return;
    }
    if (!walk([src](std::uint64_t a) { return a <= src; }, true, e.offset, out)) return;
    taken_at_source(is_p0(last_) ? last_.type : arm::instruction_type::other, branch_target(last_at_, last_),
                    last_.next_set);
    follow(true);
  }

  // The state a Source Address element leaves, its range passed on: the last instruction
  // (ending at now_.address) was taken (D9.5.7 R_YJHMV), for follow() to go on from.
  constexpr void taken_at_source(arm::instruction_type type, std::uint64_t target,
                                 arm::instruction_set target_set) noexcept {
    flow_element& h = own_held();
    h = flow_element{};
    held_at_ = 0;
    h.last_type = type;
    h.end = now_.address;
    branch_set_ = now_.set;
    now_.branch_target = target;
    now_.branch_next_set = target_set;
  }

  // D9.5.7 through the block cache: whole blocks while the source address lies beyond them
  // (their P0 instructions not taken), then the block whose P0 instruction is at the source
  // address, taken. The same range, return stack push and state as the walk one instruction
  // at a time, which takes anything else: a source address before the current one or inside
  // a block, missing memory, the walk limit, wrapping, and T32 (a block does not carry an IT
  // block's state in from the one before). Then it returns false having emitted nothing and
  // changed nothing but the block cache's entries.
  template <class Out>
  constexpr bool source_blocks(std::uint64_t src, std::uint64_t offset, Out& out) noexcept {
    if (now_.set == arm::instruction_set::t32 || src < now_.address) return false;
    std::uint64_t at = now_.address;
    std::uint32_t count = 0;
    for (;;) {
      const detail::flow_block& b = block_at(at, space_);
      if (b.end != detail::flow_block::end_kind::p0) return false;
      const std::uint64_t end = mask(at + b.bytes);
      if (end <= at || count + b.count >= flow_walk_limit) return false;
      count += b.count;
      const std::uint64_t p0_at = end - b.size;
      if (p0_at < src) {
        if (end > src) return false;
        at = end;
        continue;
      }
      if (p0_at != src) return false;
      flow_element f{};
      f.kind = flow_kind::instruction_range;
      f.offset = offset;
      set_range(f, b, now_.address, end, count, now_.set, true);
      if (b.link) push_return(end, now_.set);
      now_.address = end;
      taken_at_source(b.type, b.target, b.next_set);
      out(static_cast<const flow_element&>(f));
      return true;
    }
  }

  // D9.5.15: a Q element counts instructions but does not say which P0 instructions were
  // taken. When the count ends at the first P0 instruction, the path is the straight line and
  // the Q gives an instruction range, taken at its end. Otherwise (a P0 instruction before the
  // end, or none at all: execution left the line somewhere) it gives a range without path,
  // which ends where the Target Address after it says.
  template <class Out>
  constexpr void q(const element& e, Out& out) noexcept {
    if (!ready_for_p0()) return;
    const bool known = !e.is(element_flag::count_unknown);
    if (known && e.count != 0 && e.count <= flow_walk_limit && q_walk(e, out)) {
      now_.sync = sync::context;  // the next Target Address says where execution went
      now_.awaiting_target = false;
      return;
    }
    q_ = make(flow_kind::range_without_path, e);
    q_.address = now_.address;
    q_.isa = now_.set;
    q_.count = known ? e.count : 0;
    if (!known) q_.flags = flow_flag::count_unknown;
    q_pending_ = true;
    now_.sync = sync::context;
    now_.awaiting_target = false;
  }

  // The straight-line walk of a Q element's count; false unless its last instruction is the
  // first P0 instruction (and the memory is there).
  template <class Out>
  constexpr bool q_walk(const element& e, Out& out) noexcept {
    const std::uint8_t spc = space();
    std::uint64_t at = now_.address;
    std::uint32_t it = 0;
    arm::instruction_info i{};
    bool in_it = false;
    cursor c = cursor_at(at, spc);
    for (std::uint32_t n = 0; n < e.count; ++n) {
      if (!next(c, spc, i)) return false;
      in_it = it != 0;
      if (it) --it;
      if (i.it_block) it = it_length(i.it_block);
      if (is_p0(i) != (n + 1 == e.count)) return false;
      at = mask(at + i.size);
    }
    flow_element f = make(flow_kind::instruction_range, e);
    f.address = now_.address;
    f.end = at;
    f.count = e.count;
    f.isa = now_.set;
    f.last_size = i.size;
    f.taken = true;
    f.last_type = i.type;
    f.last_subtype = i.subtype;
    f.conditional = i.conditional || in_it;
    if (i.link) push_return(at, now_.set);
    out(f);
    now_.address = at;
    return true;
  }

  [[no_unique_address]] Config cfg_{};
  program_image* image_;
  arm::classifier classify_;
  bool atom_at_a_time_ = false;  // flow_options::atom_at_a_time
  bool pending_ = false;    // held() is an instruction range not yet passed on
  bool q_pending_ = false;  // q_ (a range without path or a context) not yet passed on
  // Elements that are not execution, waiting behind a held context or range (in order).
  static constexpr unsigned max_passive = 8;
  waiting passive_[max_passive]{};
  unsigned passive_count_ = 0;
  bool started_ = false;
  sync_reason announce_ = sync_reason::start;
  context ctx_{};
  std::uint8_t ctx_known_ = 0;  // flow_flag::context_id_known, vmid_known
  // The last walk stopped at nacc_at_, memory not accessible, and no address came since.
  bool nacc_ = false;
  std::uint64_t nacc_at_ = 0;
  std::uint8_t space_ = memory_space::el1s;   // memory_space::of(ctx_)
  std::uint64_t addr_mask_ = 0xffffffffu;     // ctx_.sf ? all ones : 32 bits
  // Under pending_, the held range is ranges_[held_at_]: the analyzer's own (0), or the last
  // range of a replayed memo entry. An index, not a pointer: analyzers are copied.
  std::uint32_t held_at_ = 0;
  flow_element q_{};
  detail::flow_state now_{};  // the live state; a memo or window replay sets it in one copy
  arm::instruction_set branch_set_ = arm::instruction_set::a64;
  arm::instruction_info last_{};  // the last instruction of the last walk()
  std::uint64_t last_at_ = 0;
  detail::return_stack_entry rs_[flow_return_stack_depth]{};
  unsigned rs_top_ = 0, rs_size_ = 0;
  detail::flow_block cache_[CacheBlocks]{};
  // The longest atom run the memo takes: flow_memo_atoms, or 0 without flow_options::memo
  // (and under atom_at_a_time).
  unsigned memo_atoms_ = flow_memo_atoms;
  static constexpr unsigned memo_atoms(const flow_options& o) noexcept {
    return o.memo && !o.atom_at_a_time ? flow_memo_atoms : 0;
  }
  std::uint64_t memo_hits_ = 0;
  std::uint64_t memo_context_ = memo_context();  // kept with space_ and addr_mask_
  detail::flow_memo memo_[std::size_t{1} << memo_bits]{};
  // The window memo: an eighth as many entries as the block cache (at least 2), in sets of two.
  static constexpr unsigned window_bits = cache_bits > 4 ? cache_bits - 3 : 1;
  static constexpr std::size_t window_first = 1 + (std::size_t{1} << memo_bits) * flow_memo_atoms;
  std::uint64_t window_hits_ = 0;
  detail::flow_window windows_[std::size_t{1} << window_bits]{};
  // [0]: the held range of the analyzer's own; [1 + i * flow_memo_atoms, ...]: memo_[i]'s
  // ranges; [window_first + i * flow_window_elements, ...]: windows_[i]'s elements.
  flow_element ranges_[window_first + (std::size_t{1} << window_bits) * flow_window_elements]{};
};

}  // namespace tracecodec::ete
