// SPDX-License-Identifier: Apache-2.0
// Parallel decode of one buffer (hosted: std::thread, std::vector): the buffer is split at
// A-Sync packets (D5.4) that a Trace Info follows, and its segments are decoded on several
// threads, each from its own A-Sync. The consumer gets exactly what the serial decode gives
// (packets, or elements with or without resolution), in stream order, one call at a time; or
// each segment's share goes to a consumer of its own (the *_by_segment forms, program flow
// among them: detail::flow_session says how its segments join).
//
// Why a segment's output is the serial one. A Trace Info resets everything the packet and
// stage-1 layers carry (D9.2.6.2), and with SPEC 0 and TSTATE 0 an idle resolver carries
// nothing either (D9.3.2.1). So from a split point on, a fresh decoder gives what the serial
// decoder gives, provided the serial decoder is there between two packets with nothing held
// back. That is checked, not assumed: when a segment's turn comes, the decoder that decoded
// everything before it (the serial decode's own state there) is asked
// (decoder::between_packets, element_reader::between_packets). Where it is not (damaged bytes
// before the split, a packet or a zero run that the split cuts, speculative elements still
// unresolved), the segment's own output is dropped and that decoder decodes the segment on,
// serially: slower, never different.
//
// Scheduling of the form with one consumer (what libipt's notes on decoding from several
// PSBs describe for Intel PT): the segments are claimed in order. A thread whose segment is next in stream order decodes it
// straight to the consumer; the others decode theirs ahead into a buffer, which is handed to
// the consumer when its turn comes. A thread that decodes ahead checks after each chunk
// whether its turn has come, and then hands over what it has and goes on straight.
//
// The consumer (on_packet / on_element, on_error) is called from the decoding threads (the
// calling thread among them), never two calls at once, each call ordered after the previous
// one; it must not touch thread-local state it expects on the calling thread.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "../../ete/element/reader.hpp"
#include "../../ete/flow/decoder.hpp"
#include "../../ete/packet/decoder.hpp"

namespace tracecodec::ete::parallel {

struct options {
  unsigned threads = 0;                 // 0: std::thread::hardware_concurrency()
  std::size_t segment_bytes = 256 << 10;  // split points are looked for this far apart
  std::size_t chunk_bytes = 32 << 10;   // a thread decoding ahead checks for its turn this often
  unsigned ahead = 0;  // segments decoded ahead of the consumer (or, by segment, of the last one
                       // checked) at most, for memory; 0: 2 * threads
};

struct element_options {
  bool resolve = true;     // committed elements (element_reader::decode's `resolve`)
  bool atom_runs = false;  // element_reader::atom_runs
};

// What a decode did (the output does not depend on it).
struct stats {
  std::size_t segments = 0;   // the buffer's segments (split points + 1)
  std::size_t ahead = 0;      // segments decoded ahead into a buffer, wholly or in part
  std::size_t rejoined = 0;   // segments decoded on by the previous segment's decoder: their
                              // split point did not join (see above)
};

// A split point: the offset of a Trace Info packet that an A-Sync precedes; `quiet` when it
// says SPEC 0 and TSTATE 0. The segment that ends there ends with the A-Sync; the next one's
// decoder starts at the A-Sync's first zero byte (`async_offset`: the byte before it is not
// zero) to find its alignment, and its output begins with the Trace Info. (Where the A-Sync
// really begins, the serial decode knows: a packet before it may end in zero bytes.)
struct split_point {
  std::size_t offset = 0;
  std::size_t async_offset = 0;
  bool quiet = false;
};

// Split points about `segment_bytes` apart: at each multiple of it, the first A-Sync at or
// after it (and after the previous split point) that a Trace Info follows, and, with
// need_quiet, whose Trace Info is quiet. Configuration: the decoder's.
template <class Config = runtime_config>
std::vector<split_point> find_split_points(const decoder<Config>& fresh, const std::uint8_t* data,
                                           std::size_t size, std::size_t segment_bytes,
                                           bool need_quiet) {
  std::vector<split_point> v;
  if (segment_bytes == 0) return v;
  std::size_t from = segment_bytes;
  while (from < size) {
    bool found = false;
    // An A-Sync ends in 0x80 after at least 11 zeros (D5.4); one whose zeros begin before
    // `from` does not count.
    for (std::size_t s = from; s < size;) {
      const auto h = ete::detail::find_async(data + s, size - s, 0);
      if (h.at == size - s) break;
      const std::size_t i = s + h.at, r = i - h.zeros;
      s = i + 1;
      if (r == from && from != 0 && data[from - 1] == 0) continue;
      // The packets there: an A-Sync at r, then a Trace Info.
      decoder<Config> d = fresh;
      d.reset_at(r);
      const std::size_t window = std::min<std::size_t>(size - r, (i - r) + 1 + 32);
      int n = 0;
      bool ok = false, quiet = false;
      d.decode_part(
          data + r, window,
          [&](const packet& p) {
            if (n == 0) ok = p.kind == packet_kind::async && p.offset == r;
            if (n == 1) {
              ok = ok && p.kind == packet_kind::trace_info && p.offset == i + 1;
              quiet = p.count == 0 && !p.transactional();
            }
            ++n;
          },
          [&](const diagnostic&) { ok = false; n = 2; });
      if (!ok || n < 2 || (need_quiet && !quiet)) continue;
      v.push_back({i + 1, r, quiet});
      from = std::max(i + 1, (i / segment_bytes + 1) * segment_bytes);
      found = true;
      break;
    }
    if (!found) break;
  }
  return v;
}

namespace detail {

// Where the segments are: segment k is [bounds[k], bounds[k + 1]); its own decoder starts at
// lead[k] (the A-Sync before it; 0 for the first).
struct segment_plan {
  std::vector<std::size_t> bounds, lead;
  segment_plan(const std::vector<split_point>& splits, std::size_t size) {
    bounds.push_back(0);
    lead.push_back(0);
    for (const split_point& p : splits) {
      bounds.push_back(p.offset);
      lead.push_back(p.async_offset);
    }
    bounds.push_back(size);
  }
  std::size_t count() const { return bounds.size() - 1; }
};

inline unsigned thread_count(const options& o) {
  return o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());
}

// work() on the calling thread and on `threads - 1` more; a thread that cannot be started
// means fewer threads (the caller's at least does the work), not std::terminate.
template <class Work>
void on_threads(unsigned threads, Work&& work) {
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) {
    try {
      pool.emplace_back([&work] { work(); });
    } catch (const std::system_error&) {
      break;
    }
  }
  work();
  for (std::thread& t : pool) t.join();
}

// One decode over segments. Session: a layer's decoder (decoder or element_reader) with how
// to make one, decode a chunk, end the session, and whether it sits where a split point joins.
template <class Reader, class Item, class Session, class OnItem, class OnError>
class run {
 public:
  run(const Session& s, const std::uint8_t* data, std::size_t size,
      const std::vector<split_point>& splits, const options& o, OnItem& on_item, OnError& on_error)
      : s_(s), data_(data), on_item_(on_item), on_error_(on_error), chunk_(o.chunk_bytes ? o.chunk_bytes : 1),
        plan_(splits, size), bounds_(plan_.bounds), lead_(plan_.lead) {
    segs_.resize(plan_.count());
    st_.segments = segs_.size();
    threads_ = thread_count(o);
    ahead_ = o.ahead ? o.ahead : 2 * threads_;
  }

  stats go() {
    on_threads(static_cast<unsigned>(std::min<std::size_t>(threads_, segs_.size())), [this] { work(); });
    // Every segment delivered: the decoder of the last one ends the session.
    s_.end(*carried_, on_item_, on_error_);
    return st_;
  }

 private:
  enum class state : std::uint8_t { unclaimed, working, done };
  struct segment {
    state st = state::unclaimed;
    std::unique_ptr<Reader> reader;  // done: its state at the segment's end
    std::vector<Item> items;         // decoded ahead
    std::vector<std::pair<std::size_t, diagnostic>> errors;  // each before items[first]
  };

  void work() {
    for (;;) {
      std::size_t k;
      {
        std::unique_lock<std::mutex> lock(m_);
        // After a split point that did not join, the next ones probably will not either (a
        // speculative stream, whose resolver is never idle): segments are decoded only in
        // turn for a while (twice as long after each such point in a row), not ahead.
        cv_.wait(lock, [&] {
          const std::size_t window = claim_ < calm_until_ ? 1 : ahead_;
          return front_ == segs_.size() || (claim_ < segs_.size() && claim_ < front_ + window);
        });
        if (claim_ == segs_.size()) return;  // the rest is someone else's
        k = claim_++;
        segs_[k].st = state::working;
      }
      process(k);
    }
  }

  // Decodes segment k: straight to the consumer once it is its turn, into its buffer before.
  void process(std::size_t k) {
    segment& g = segs_[k];
    std::unique_ptr<Reader> reader = s_.make(lead_[k]);
    if (k != 0) {  // the A-Sync before the segment: the previous segment's output
      // (Not for the first segment: a decoding call with no bytes still reports a refused
      // configuration, once, which must reach the consumer.)
      auto drop = [](const auto&) {};
      s_.decode(*reader, data_ + lead_[k], bounds_[k] - lead_[k], drop, drop);
    }
    std::size_t pos = bounds_[k];
    const std::size_t end = bounds_[k + 1];
    bool straight = false;
    acquire(g);
    while (pos < end) {
      if (!straight && take_turn(k)) {
        if (!joins(k)) {  // decode it on from where the serial decode is
          {
            std::lock_guard<std::mutex> lock(m_);
            note_rejoin(k);
            if (pos != bounds_[k]) ++st_.ahead;
          }
          release(g);
          s_.decode(*carried_, data_ + bounds_[k], end - bounds_[k], on_item_, on_error_);
          finish_turn(k, nullptr);
          return;
        }
        {
          std::lock_guard<std::mutex> lock(m_);
          if (pos != bounds_[k]) ++st_.ahead;
          if (k != 0) backoff_ = 0;
        }
        replay(g);
        straight = true;
      }
      const std::size_t n = std::min(chunk_, end - pos);
      if (straight) {
        s_.decode(*reader, data_ + pos, n, on_item_, on_error_);
      } else {
        auto keep = [&g](const Item& x) { g.items.push_back(x); };
        auto keep_error = [&g](const diagnostic& d) { g.errors.emplace_back(g.items.size(), d); };
        s_.decode(*reader, data_ + pos, n, keep, keep_error);
      }
      pos += n;
    }
    if (straight) {
      finish_turn(k, std::move(reader));
      return;
    }
    bool mine = false;
    {
      std::lock_guard<std::mutex> lock(m_);
      ++st_.ahead;
      g.reader = std::move(reader);
      g.st = state::done;
      if (front_ == k && !baton_) mine = baton_ = true;
    }
    if (mine) finish_turn(k, deliver(k));
  }

  // (With m_ held.) Segment k's split point did not join; one that joins ends the back-off.
  void note_rejoin(std::size_t k) {
    ++st_.rejoined;
    backoff_ = backoff_ == 0 ? 1 : std::min<std::size_t>(2 * backoff_, 64);
    calm_until_ = k + 1 + backoff_;
  }

  // True when segment k is next in stream order and nobody is delivering: the caller now is.
  bool take_turn(std::size_t k) {
    std::lock_guard<std::mutex> lock(m_);
    if (front_ != k || baton_) return false;
    baton_ = true;
    return true;
  }

  // Whether segment k's own decode is the serial one (see the top of this file).
  bool joins(std::size_t k) const { return k == 0 || s_.joins(*carried_); }

  void replay(segment& g) {
    std::size_t e = 0;
    for (std::size_t i = 0; i < g.items.size(); ++i) {
      while (e < g.errors.size() && g.errors[e].first == i) on_error_(g.errors[e++].second);
      on_item_(static_cast<const Item&>(g.items[i]));
    }
    while (e < g.errors.size()) on_error_(g.errors[e++].second);
    release(g);
  }
  // A segment's buffers go back to the pool, their memory kept for the next segment decoded
  // ahead (fresh memory for each would cost a page fault every few KiB).
  void release(segment& g) {
    g.items.clear();
    g.errors.clear();
    if (g.items.capacity() == 0) return;
    std::lock_guard<std::mutex> lock(m_);
    pool_.push_back(std::move(g.items));
    g.items = std::vector<Item>();
  }
  void acquire(segment& g) {
    std::lock_guard<std::mutex> lock(m_);
    if (pool_.empty()) return;
    g.items = std::move(pool_.back());
    pool_.pop_back();
  }

  // Segment k has been delivered (with `reader`, its decoder at its end; nullptr: carried_
  // decoded it). Then the segments after it that were decoded ahead, while they are done: in
  // a loop, not by recursion (a slow consumer finds every next segment done, and the chain
  // is as long as the buffer).
  void finish_turn(std::size_t k, std::unique_ptr<Reader> reader) {
    for (;;) {
      if (reader) carried_ = std::move(reader);
      bool more = false;
      {
        std::lock_guard<std::mutex> lock(m_);
        segs_[k].st = state::done;
        front_ = k + 1;
        more = front_ < segs_.size() && segs_[front_].st == state::done;
        if (!more) baton_ = false;
      }
      cv_.notify_all();
      if (!more) return;
      reader = deliver(++k);
    }
  }

  // With the baton: segment k was decoded ahead, wholly. Returns its decoder at its end, or
  // nullptr when carried_ decoded it (the split point did not join).
  std::unique_ptr<Reader> deliver(std::size_t k) {
    segment& g = segs_[k];
    if (joins(k)) {
      {
        std::lock_guard<std::mutex> lock(m_);
        backoff_ = 0;
      }
      replay(g);
      return std::move(g.reader);
    }
    {
      std::lock_guard<std::mutex> lock(m_);
      note_rejoin(k);
    }
    release(g);
    g.reader.reset();
    s_.decode(*carried_, data_ + bounds_[k], bounds_[k + 1] - bounds_[k], on_item_, on_error_);
    return nullptr;
  }

  const Session& s_;
  const std::uint8_t* data_;
  OnItem& on_item_;
  OnError& on_error_;
  std::size_t chunk_;
  unsigned threads_ = 1;
  std::size_t ahead_ = 2;
  segment_plan plan_;
  const std::vector<std::size_t>& bounds_;  // segment k is [bounds_[k], bounds_[k + 1])
  const std::vector<std::size_t>& lead_;    // where segment k's own decoder starts (its A-Sync)
  std::vector<segment> segs_;
  std::unique_ptr<Reader> carried_;  // the serial decode's decoder at front_'s start
  std::mutex m_;
  std::condition_variable cv_;
  std::size_t claim_ = 0, front_ = 0;
  bool baton_ = false;
  std::size_t calm_until_ = 0, backoff_ = 0;  // see work()
  std::vector<std::vector<Item>> pool_;       // see release()
  stats st_{};
};

template <class Config>
struct packet_session {
  registers regs;
  std::unique_ptr<decoder<Config>> make(std::size_t at) const {
    std::unique_ptr<decoder<Config>> d;
    if constexpr (Config::is_fixed) d = std::make_unique<decoder<Config>>();
    else d = std::make_unique<decoder<Config>>(regs);
    d->reset_at(at);
    return d;
  }
  template <class P, class E>
  void decode(decoder<Config>& d, const std::uint8_t* p, std::size_t n, P& on_packet, E& on_error) const {
    d.decode_part(p, n, on_packet, on_error);
  }
  template <class P, class E>
  void end(decoder<Config>& d, P& on_packet, E& on_error) const {
    d.decode_end(on_packet, on_error);
  }
  bool joins(const decoder<Config>& d) const { return d.between_packets(); }
  // A segment's own output starts at its split point (what joins() checks is all there is).
  using reader = decoder<Config>;
  struct mark {};
  bool find_join(reader&, const std::uint8_t*, std::size_t&, std::size_t, mark&) const { return true; }
  bool same(const reader&, const mark&) const { return true; }
};

template <class Config, std::size_t Capacity>
struct element_session {
  registers regs;
  element_options opt;
  using reader = element_reader<Config, Capacity>;
  std::unique_ptr<reader> make(std::size_t at) const {
    std::unique_ptr<reader> r;
    if constexpr (Config::is_fixed) r = std::make_unique<reader>();
    else r = std::make_unique<reader>(regs);
    r->atom_runs(opt.atom_runs);
    r->reset_at(at);
    return r;
  }
  template <class P, class E>
  void decode(reader& r, const std::uint8_t* p, std::size_t n, P& on_element, E& on_error) const {
    r.decode_part(p, n, on_element, on_error, opt.resolve);
  }
  template <class P, class E>
  void end(reader& r, P& on_element, E& on_error) const {
    r.decode_end(on_element, on_error, opt.resolve);
  }
  bool joins(const reader& r) const {
    return opt.resolve ? r.between_packets() : r.packets().between_packets();
  }
  struct mark {};
  bool find_join(reader&, const std::uint8_t*, std::size_t&, std::size_t, mark&) const { return true; }
  bool same(const reader&, const mark&) const { return true; }
};

// Program flow. The analysis keeps its address and context across a Trace Info (D9.5.9), so a
// segment's own analysis cannot join at its split point: it joins later, at the first place
// where it is fully synchronized (find_join). There the analysis of the segment before, which
// decodes on up to that place, must be in the same state (same(): flow_analyzer::same_analysis,
// the element layers having been between two packets at the split point, joins()). What lies
// between the split point and the join point goes to the segment before's consumer.
template <class Config, std::size_t CacheBlocks, std::size_t Capacity>
struct flow_session {
  using flow = flow_decoder<Config, CacheBlocks, Capacity>;
  using analyzer = flow_analyzer<Config, CacheBlocks>;
  registers regs;
  const program_image& image;
  flow_options fo;
  // A decoder with an image of its own (an image caches its last lookup: not shared between
  // threads).
  struct reader {
    std::unique_ptr<program_image> image;
    std::unique_ptr<flow> decoder;
  };
  using mark = std::unique_ptr<analyzer>;  // the segment's own analysis at its join point
  std::unique_ptr<reader> make(std::size_t at) const {
    auto r = std::make_unique<reader>();
    r->image = std::make_unique<program_image>(image);
    if constexpr (Config::is_fixed) r->decoder = std::make_unique<flow>(*r->image, fo);
    else r->decoder = std::make_unique<flow>(regs, *r->image, fo);
    r->decoder->reset_at(at);
    return r;
  }
  template <class P, class E>
  void decode(reader& r, const std::uint8_t* p, std::size_t n, P& on_flow, E& on_error) const {
    r.decoder->decode_part(p, n, on_flow, on_error);
  }
  template <class P, class E>
  void end(reader& r, P& on_flow, E& on_error) const {
    r.decoder->decode_end(on_flow, on_error);
  }
  bool joins(const reader& r) const { return r.decoder->between_packets(); }
  // The join point: a byte at a time from pos until the analysis is synchronized, between two
  // packets (a short stretch: the address and context after the Trace Info). False if the
  // segment has none.
  bool find_join(reader& r, const std::uint8_t* data, std::size_t& pos, std::size_t to, mark& m) const {
    auto drop = [](const auto&) {};
    while (pos < to && !(r.decoder->analysis().synchronized() && r.decoder->between_packets())) {
      r.decoder->decode_part(data + pos, 1, drop, drop);
      ++pos;
    }
    if (pos == to) return false;
    m = std::make_unique<analyzer>(r.decoder->analysis());
    return true;
  }
  bool same(const reader& r, const mark& m) const {
    return r.decoder->between_packets() && r.decoder->analysis().same_analysis(*m);
  }
};


// Each segment to a consumer of its own (the *_by_segment forms): no buffering, no hand-over.
// Segment k's own decoder starts at its A-Sync; its output goes to the k-th consumer from its
// join point on (the split point, or later for flow: Session::find_join). When its turn comes,
// the decoder of the segment before (carried_, the serial decode's) decodes on up to the join
// point, into the consumer before, and must then be where segment k's own decoder was
// (Session::joins at the split point, Session::same at the join point); if so, segment k's
// decoder carries on. If not, carried_ decodes the segment again, to a fresh copy of the
// consumer.
template <class Session, class Consumer>
class segment_run {
  using reader = typename Session::reader;
  using mark = typename Session::mark;

 public:
  segment_run(const Session& s, const std::uint8_t* data, std::size_t size,
              const std::vector<split_point>& splits, const options& o, const Consumer& prototype)
      : s_(s), data_(data), proto_(prototype), plan_(splits, size) {
    const std::size_t n = plan_.count();
    segs_.resize(n);
    out_.assign(n, prototype);
    st_.segments = n;
    threads_ = thread_count(o);
    window_ = o.ahead ? o.ahead : 2 * threads_;
  }

  std::vector<Consumer> go(stats* st) {
    on_threads(static_cast<unsigned>(std::min<std::size_t>(threads_, out_.size())), [this] { work(); });
    s_.end(*carried_, out_.back(), out_.back());  // the session's end: the last segment's
    if (st) *st = st_;
    return std::move(out_);
  }

 private:
  struct segment {
    bool done = false;
    std::unique_ptr<reader> own;  // its decoder at its end, until verified
    bool found = false;           // it has a join point
    std::size_t join = 0;         // where its own output began
    mark at_join{};               // its decoder's state there (Session::same)
  };

  void work() {
    for (;;) {
      std::size_t k;
      bool in_turn;
      {
        std::unique_lock<std::mutex> lock(m_);
        // At most window_ segments past the last one checked (memory: each keeps its decoder
        // until it is checked).
        cv_.wait(lock, [&] { return claim_ == out_.size() || claim_ < verified_ + window_; });
        if (claim_ == out_.size()) return;
        k = claim_++;
        // In a back-off (see run::work), segments are decoded on from the previous one's
        // decoder, in turn.
        in_turn = k < calm_until_;
        if (in_turn) {
          cv_.wait(lock, [&] { return verified_ == k && !verifying_; });
          verifying_ = true;
        }
      }
      const std::size_t from = plan_.bounds[k], to = plan_.bounds[k + 1];
      // The consumer works on a copy on this thread's stack: the copies in out_ share cache
      // lines, which two threads writing at once would pass back and forth.
      Consumer c = proto_;
      if (in_turn) {
        s_.decode(*carried_, data_ + from, to - from, c, c);
        out_[k] = std::move(c);
        std::unique_lock<std::mutex> lock(m_);
        segs_[k].done = true;
        verified_ = k + 1;
        verify(lock);
        continue;
      }
      segment& g = segs_[k];
      std::unique_ptr<reader> r = s_.make(plan_.lead[k]);
      std::size_t pos = from;
      bool found = true;
      mark at_join{};
      if (k != 0) {  // the A-Sync before the segment (see run::process)
        auto drop = [](const auto&) {};
        s_.decode(*r, data_ + plan_.lead[k], from - plan_.lead[k], drop, drop);
        found = s_.find_join(*r, data_, pos, to, at_join);
      }
      if (found) s_.decode(*r, data_ + pos, to - pos, c, c);
      out_[k] = std::move(c);
      std::unique_lock<std::mutex> lock(m_);
      g.own = std::move(r);
      g.found = found;
      g.join = pos;
      g.at_join = std::move(at_join);
      g.done = true;
      if (verified_ == k && !verifying_) {
        verifying_ = true;
        verify(lock);
      }
    }
  }

  // With m_ held and verifying_ set: the segments from verified_ on that are done, in order
  // (m_ released while carried_ decodes).
  void verify(std::unique_lock<std::mutex>& lock) {
    while (verified_ < out_.size() && segs_[verified_].done) {
      const std::size_t k = verified_;
      segment& g = segs_[k];
      if (g.own) {  // decoded on its own
        if (k == 0) {
          carried_ = std::move(g.own);
        } else {
          lock.unlock();
          const bool joined = join(k);
          lock.lock();
          if (joined) {
            backoff_ = 0;
          } else {
            ++st_.rejoined;
            backoff_ = backoff_ == 0 ? 1 : std::min<std::size_t>(2 * backoff_, 64);
            calm_until_ = std::max(calm_until_, claim_ + backoff_);
          }
        }
        g.own.reset();
        g.at_join = mark{};
      }
      verified_ = k + 1;
    }
    verifying_ = false;
    cv_.notify_all();
  }

  // Segment k (k > 0), decoded on its own, against the serial decode (carried_, at its split
  // point). Joined: the stretch up to the join point goes to segment k - 1's consumer, and
  // segment k's decoder carries on. Not: carried_ decodes the segment (out_[k] again).
  bool join(std::size_t k) {
    segment& g = segs_[k];
    const std::size_t from = plan_.bounds[k], to = plan_.bounds[k + 1];
    reader& serial = *carried_;
    if (g.found && s_.joins(serial)) {
      if (g.join != from) s_.decode(serial, data_ + from, g.join - from, out_[k - 1], out_[k - 1]);
      if (s_.same(serial, g.at_join)) {
        carried_ = std::move(g.own);
        return true;
      }
      out_[k] = proto_;
      s_.decode(serial, data_ + g.join, to - g.join, out_[k], out_[k]);
      return false;
    }
    out_[k] = proto_;
    s_.decode(serial, data_ + from, to - from, out_[k], out_[k]);
    return false;
  }

  const Session& s_;
  const std::uint8_t* data_;
  const Consumer& proto_;
  segment_plan plan_;
  unsigned threads_ = 1;
  std::vector<segment> segs_;
  std::vector<Consumer> out_;
  std::unique_ptr<reader> carried_;  // the serial decode's decoder at verified_'s start
  std::mutex m_;
  std::condition_variable cv_;
  std::size_t claim_ = 0, verified_ = 0, calm_until_ = 0, backoff_ = 0, window_ = 2;
  bool verifying_ = false;
  stats st_{};
};

}  // namespace detail

// Packets of data[0, size), as decoder<Config>(regs).decode(data, size, on_packet, on_error)
// gives them. (With a fixed Config, regs is not read.)
template <class Config = runtime_config, class OnPacket, class OnError>
stats decode_packets(const registers& regs, const std::uint8_t* data, std::size_t size,
                     OnPacket&& on_packet, OnError&& on_error, const options& o = {}) {
  const detail::packet_session<Config> s{regs};
  const std::vector<split_point> splits =
      o.threads == 1 ? std::vector<split_point>{}
                     : find_split_points(*s.make(0), data, size, o.segment_bytes, false);
  detail::run<decoder<Config>, packet, detail::packet_session<Config>, OnPacket, OnError> r(
      s, data, size, splits, o, on_packet, on_error);
  return r.go();
}

// Elements of data[0, size), as an element_reader<Config, Capacity>(regs) with
// atom_runs(eo.atom_runs) gives them from decode(data, size, on_element, on_error, eo.resolve).
// With resolution, split points are only those whose Trace Info is quiet.
template <class Config = runtime_config, std::size_t Capacity = default_resolution_capacity<Config>(),
          class OnElement, class OnError>
stats decode_elements(const registers& regs, const std::uint8_t* data, std::size_t size,
                      OnElement&& on_element, OnError&& on_error, const element_options& eo = {},
                      const options& o = {}) {
  const detail::element_session<Config, Capacity> s{regs, eo};
  const std::vector<split_point> splits =
      o.threads == 1 ? std::vector<split_point>{}
                     : find_split_points(s.make(0)->packets(), data, size, o.segment_bytes, eo.resolve);
  detail::run<element_reader<Config, Capacity>, element, detail::element_session<Config, Capacity>,
              OnElement, OnError>
      r(s, data, size, splits, o, on_element, on_error);
  return r.go();
}

// Each segment to a consumer of its own: the buffer is split as for decode_packets(), and
// segment k's packets and diagnostics go to the k-th copy of `prototype` (a copyable object
// callable with const packet& and with const diagnostic&), from the thread that decodes it.
// The consumers come back in stream order; what the k-th one saw is exactly the serial
// decode's output from the k-th split point to the next (the session's end in the last one),
// so together, in order, they saw the serial decode. For consumers whose results merge
// (counts, profiles, histograms), this scales with the threads; nothing is buffered. A
// consumer copy whose segment turns out not to join is thrown away, and a fresh copy gets
// the segment from the serial decode.
template <class Config = runtime_config, class Consumer>
std::vector<Consumer> decode_packets_by_segment(const registers& regs, const std::uint8_t* data,
                                                std::size_t size, const Consumer& prototype,
                                                const options& o = {}, stats* st = nullptr) {
  const detail::packet_session<Config> s{regs};
  const std::vector<split_point> splits =
      o.threads == 1 ? std::vector<split_point>{}
                     : find_split_points(*s.make(0), data, size, o.segment_bytes, false);
  detail::segment_run<detail::packet_session<Config>, Consumer> r(s, data, size, splits, o, prototype);
  return r.go(st);
}

// The same for elements (decode_elements()): the consumer is callable with const element&
// and with const diagnostic&.
template <class Config = runtime_config, std::size_t Capacity = default_resolution_capacity<Config>(),
          class Consumer>
std::vector<Consumer> decode_elements_by_segment(const registers& regs, const std::uint8_t* data,
                                                 std::size_t size, const Consumer& prototype,
                                                 const element_options& eo = {},
                                                 const options& o = {}, stats* st = nullptr) {
  const detail::element_session<Config, Capacity> s{regs, eo};
  const std::vector<split_point> splits =
      o.threads == 1 ? std::vector<split_point>{}
                     : find_split_points(s.make(0)->packets(), data, size, o.segment_bytes, eo.resolve);
  detail::segment_run<detail::element_session<Config, Capacity>, Consumer> r(s, data, size, splits, o,
                                                                            prototype);
  return r.go(st);
}

// Program flow (flow_decoder<Config, CacheBlocks, Capacity>(regs, image, fo) over the buffer),
// each segment to a consumer of its own, callable with const flow_element& and with
// const diagnostic&. Each thread analyzes with its own copy of `image` (its callback, if it
// has one, is called from several threads) and its own block cache, cold at each segment's
// start. The consumers come back in stream order and together saw the serial decode; the
// k-th one's share begins where segment k's own analysis joined the serial one (see
// detail::flow_session), not at the split point.
template <class Config = runtime_config, std::size_t CacheBlocks = 4096,
          std::size_t Capacity = default_resolution_capacity<Config>(), class Consumer>
std::vector<Consumer> decode_flow_by_segment(const registers& regs, const program_image& image,
                                             const flow_options& fo, const std::uint8_t* data,
                                             std::size_t size, const Consumer& prototype,
                                             const options& o = {}, stats* st = nullptr) {
  std::vector<split_point> splits;
  if (o.threads != 1) {
    std::unique_ptr<decoder<Config>> d;
    if constexpr (Config::is_fixed) d = std::make_unique<decoder<Config>>();
    else d = std::make_unique<decoder<Config>>(regs);
    splits = find_split_points(*d, data, size, o.segment_bytes, true);
  }
  const detail::flow_session<Config, CacheBlocks, Capacity> s{regs, image, fo};
  detail::segment_run<detail::flow_session<Config, CacheBlocks, Capacity>, Consumer> r(s, data, size, splits, o,
                                                                                       prototype);
  return r.go(st);
}

}  // namespace tracecodec::ete::parallel
