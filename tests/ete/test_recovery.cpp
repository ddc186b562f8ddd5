// SPDX-License-Identifier: Apache-2.0
// Recovery on real trace: every buffer of the conformance snapshots (../shared/conformance/ete,
// read in place) damaged the ways trace gets damaged (bit flips, deleted and inserted bytes,
// truncation, a buffer rotated at a random point as a wrapped circular buffer is) must decode
// without crashing or hanging, report every error with an offset inside the buffer, and from
// the first A-Sync after the damage decode exactly the packets the clean trace has from that
// A-Sync on (offsets shifted), nothing after it lost. Skipped, with a message, when the corpus
// is absent. Also the regression inputs of the fuzz targets (fuzz/README.md).
#include <doctest/doctest.h>

#include <tracecodec/host/ete/recompress.hpp>
#include <tracecodec/host/ete/format.hpp>  // kind_name
#include <tracecodec/host/ete/snapshot.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "../common/random.hpp"
#include "common.hpp"

using namespace test;
namespace fs = std::filesystem;

namespace {

// TRACECODEC_CONFORMANCE_DIR, else ../shared/conformance/ete beside the repository (found from
// this file's path, or from the working directory upwards).
fs::path conformance_dir() {
  if (const char* e = std::getenv("TRACECODEC_CONFORMANCE_DIR"); e && *e) return e;
  std::vector<fs::path> tries;
  const fs::path here = fs::path(__FILE__).parent_path();
  tries.push_back(here / ".." / ".." / ".." / "shared" / "conformance" / "ete");
  std::error_code ec;
  for (fs::path p = fs::current_path(ec); !p.empty(); p = p.parent_path()) {
    tries.push_back(p / ".." / "shared" / "conformance" / "ete");
    tries.push_back(p / "shared" / "conformance" / "ete");
    if (p == p.parent_path()) break;
  }
  for (const fs::path& t : tries)
    if (fs::is_directory(t / "snapshots", ec)) return t;
  return {};
}

struct trace_buffer {
  std::string name;
  registers regs;
  std::vector<std::uint8_t> data;
  std::vector<packet> clean;  // the undamaged decode
};

// The real traces have one A-Sync, at the start. A trace unit also emits them periodically
// (TRCSYNCPR): this adds an A-Sync and the buffer's own first Trace Info packet before every
// 40th packet, so that damage anywhere has a resynchronization point after it.
std::vector<std::uint8_t> with_periodic_sync(const std::vector<std::uint8_t>& data,
                                             const std::vector<packet>& clean) {
  std::vector<std::uint8_t> sync(11, 0);
  sync.push_back(0x80);
  bool info = false;
  for (const packet& p : clean)
    if (p.kind == packet_kind::trace_info) {
      sync.insert(sync.end(), data.begin() + static_cast<std::ptrdiff_t>(p.offset),
                  data.begin() + static_cast<std::ptrdiff_t>(p.offset + p.size));
      info = true;
      break;
    }
  if (!info) {  // a minimal Trace Info: nothing enabled
    sync.push_back(0x01);
    sync.push_back(0x00);
  }
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i < clean.size(); ++i) {
    if (i > 0 && i % 40 == 0 && clean[i - 1].kind != packet_kind::async)
      out.insert(out.end(), sync.begin(), sync.end());
    out.insert(out.end(), data.begin() + static_cast<std::ptrdiff_t>(clean[i].offset),
               data.begin() + static_cast<std::ptrdiff_t>(clean[i].offset + clean[i].size));
  }
  return out;
}

// Calls fn(name, registers, bytes, packets) for every non-empty conformance buffer that
// decodes without errors (ete-conformance reports the others), in snapshot order.
template <class Fn>
void for_each_clean_buffer(Fn&& fn) {
  const fs::path dir = conformance_dir();
  if (dir.empty()) return;
  std::vector<fs::path> snaps;
  for (const auto& e : fs::directory_iterator(dir / "snapshots"))
    if (e.is_directory()) snaps.push_back(e.path());
  std::sort(snaps.begin(), snaps.end());
  for (const fs::path& s : snaps) {
    const auto snap = tracecodec::ete::snapshot::load(s.string());
    if (!snap.error.empty()) continue;
    for (std::size_t i = 0; i < snap.buffers.size(); ++i) {
      const auto& b = snap.buffers[i];
      if (b.data.empty()) continue;
      const decoded original = decode_all(b.regs, b.data);
      if (!original.errors.empty()) continue;
      fn(s.filename().string() + "#" + std::to_string(i), b.regs, b.data, original.packets);
    }
  }
}

const std::vector<trace_buffer>& buffers() {
  static const std::vector<trace_buffer> all = [] {
    std::vector<trace_buffer> v;
    for_each_clean_buffer([&](const std::string& name, const registers& regs,
                              const std::vector<std::uint8_t>& data, const std::vector<packet>& packets) {
      trace_buffer b{name, regs, with_periodic_sync(data, packets), {}};
      const decoded d = decode_all(regs, b.data);
      if (!d.errors.empty()) return;
      b.clean = d.packets;
      v.push_back(std::move(b));
    });
    return v;
  }();
  return all;
}

// TRACECODEC_REQUIRE_CONFORMANCE=1 (CI): a missing corpus fails instead of skipping.
bool corpus_required() {
  const char* e = std::getenv("TRACECODEC_REQUIRE_CONFORMANCE");
  return e != nullptr && *e != '\0' && *e != '0';
}

bool have_corpus() {
  if (!buffers().empty()) return true;
  if (corpus_required()) FAIL("conformance corpus not found, and TRACECODEC_REQUIRE_CONFORMANCE is set");
  MESSAGE("skipped: conformance corpus not found (set TRACECODEC_CONFORMANCE_DIR or put it in "
          "../shared/conformance/ete)");
  return false;
}

// Streaming decode in random chunks with a bound on next() calls (a hang fails the test
// instead of running forever); checks that every report lies inside the buffer.
decoded decode_checked(const registers& r, const std::vector<std::uint8_t>& d, splitmix64& rng) {
  decoded out;
  decoder<> dec(r);
  std::size_t calls = 0, at = 0;
  const std::size_t limit = 4 * d.size() + 64;
  bool hung = false;
  packet p{};
  auto drain = [&](bool finished) {
    for (;;) {
      if (++calls > limit) {
        hung = true;
        return;
      }
      const decode_status s = dec.next(p);
      if (s == decode_status::packet)
        out.packets.push_back(p);
      else if (s == decode_status::error)
        out.errors.push_back(dec.last_diagnostic());
      else {
        if (finished && s != decode_status::end) hung = true;
        return;
      }
    }
  };
  // Every chunk is its own exactly sized heap block, so a sanitizer sees a read past it.
  std::vector<std::unique_ptr<std::uint8_t[]>> blocks;
  while (at < d.size() && !hung) {
    const std::size_t n = std::min<std::size_t>(d.size() - at, 1 + rng.next() % 700);
    blocks.push_back(std::make_unique<std::uint8_t[]>(n));
    std::copy(d.begin() + static_cast<std::ptrdiff_t>(at),
              d.begin() + static_cast<std::ptrdiff_t>(at + n), blocks.back().get());
    dec.feed(blocks.back().get(), n);
    drain(false);
    at += n;
  }
  dec.finish();
  if (!hung) drain(true);
  REQUIRE_MESSAGE(!hung, "decoder did not finish within " << limit << " next() calls");
  std::uint64_t end = 0;
  bool in_order = true, inside = true;
  for (const packet& q : out.packets) {
    // An A-Sync whose first zeros a packet decoded out of alignment took is reported at its
    // true offset, after a bad_async diagnostic: it may overlap that packet.
    in_order = in_order && (q.offset >= end || q.kind == packet_kind::async) && q.offset + q.size > end;
    inside = inside && q.offset + q.size <= d.size();
    end = q.offset + q.size;
  }
  for (const diagnostic& e : out.errors)
    inside = inside && (e.code == error_code::unsynchronized ? e.length <= d.size() : e.offset < d.size());
  CHECK_MESSAGE(in_order, "packets overlap or are out of order");
  CHECK_MESSAGE(inside, "a packet or an error outside the buffer");
  return out;
}

bool same_except_offset(packet a, packet b, std::int64_t shift) {
  if (static_cast<std::int64_t>(a.offset) + shift != static_cast<std::int64_t>(b.offset)) return false;
  a.offset = b.offset = 0;
  return a == b;
}

// The index of the first clean A-Sync that starts at or after `from` and is followed by a
// Trace Info (a decoder needs both: D9.2.6.2 resets the state the packets after it use).
std::size_t first_async_from(const std::vector<packet>& clean, std::uint64_t from) {
  for (std::size_t i = 0; i + 1 < clean.size(); ++i)
    if (clean[i].kind == packet_kind::async && clean[i].offset >= from &&
        clean[i + 1].kind == packet_kind::trace_info)
      return i;
  return clean.size();
}

struct recovery_stats {
  std::size_t cases = 0, resynced = 0, no_async_after = 0;
};

// `got` must contain the clean A-Sync clean[ai] (matched by where it ends: a zero run may grow
// at its front) at `shift`, and from it on exactly the clean packets clean[ai..] (shifted),
// with no error after it. Returns false if the A-Sync is missing.
bool resumes_at(const decoded& got, const std::vector<packet>& clean, std::size_t ai,
                std::int64_t shift, std::size_t clean_end) {
  const std::uint64_t want_end =
      static_cast<std::uint64_t>(static_cast<std::int64_t>(clean[ai].offset + clean[ai].size) + shift);
  std::size_t gi = 0;
  while (gi < got.packets.size() &&
         !(got.packets[gi].kind == packet_kind::async &&
           got.packets[gi].offset + got.packets[gi].size == want_end))
    ++gi;
  if (gi == got.packets.size()) return false;
  const std::size_t n = clean_end - ai - 1;
  CHECK_MESSAGE(got.packets.size() - gi - 1 >= n, "packets after the A-Sync lost");
  for (std::size_t k = 1; k <= n && gi + k < got.packets.size(); ++k) {
    const bool same = same_except_offset(clean[ai + k], got.packets[gi + k], shift);
    if (!same) {
      CAPTURE(k);
      CAPTURE(clean[ai + k].offset);
      CHECK_MESSAGE(same, "packet after the A-Sync differs from the clean decode");
      break;
    }
  }
  for (const diagnostic& e : got.errors)
    if (e.code != error_code::unsynchronized && e.code != error_code::truncated_packet &&
        e.offset >= got.packets[gi].offset + got.packets[gi].size)  // (a bad_async inside
                                                                       // it names its zero run)
      FAIL_CHECK("error " << error_name(e.code) << " after the A-Sync, at " << e.offset);
  return true;
}

enum class damage { flip, erase, insert };

// Damages one byte at `at` and checks recovery from the next A-Sync. (This includes
// FUZZ-FINDING 1, fuzz/README.md: a damaged packet before the A-Sync that reads its payload
// from the A-Sync's first zero bytes must not make the decoder miss that A-Sync.)
void check_damage(const trace_buffer& b, damage kind, std::size_t at, std::uint8_t value,
                  splitmix64& rng, recovery_stats& st) {
  std::vector<std::uint8_t> d = b.data;
  std::int64_t shift = 0;
  std::uint64_t clean_from = at + 1;  // first clean byte after the damage (clean offsets)
  switch (kind) {
    case damage::flip: d[at] ^= value ? value : 1; break;
    case damage::erase:
      d.erase(d.begin() + static_cast<std::ptrdiff_t>(at));
      shift = -1;
      break;
    case damage::insert:
      d.insert(d.begin() + static_cast<std::ptrdiff_t>(at), value);
      shift = 1;
      clean_from = at;
      break;
  }
  CAPTURE(b.name);
  CAPTURE(static_cast<int>(kind));
  CAPTURE(at);
  CAPTURE(static_cast<unsigned>(value));
  const decoded got = decode_checked(b.regs, d, rng);
  ++st.cases;
  const std::size_t ai = first_async_from(b.clean, clean_from);
  if (ai == b.clean.size()) {
    ++st.no_async_after;
    return;
  }
  const bool found = resumes_at(got, b.clean, ai, shift, b.clean.size());
  if (!found && std::getenv("TRACECODEC_DEBUG")) {
    const std::uint64_t a0 = b.clean[ai].offset;
    std::printf("%s kind %d at %zu value %02x: A-Sync at %llu\n", b.name.c_str(), static_cast<int>(kind), at,
                value, static_cast<unsigned long long>(a0));
    for (const packet& q : b.clean)
      if (q.offset + 40 >= at && q.offset <= a0 + 14)
        std::printf("   clean %6llu %2llu %s\n", static_cast<unsigned long long>(q.offset), static_cast<unsigned long long>(q.size), kind_name(q.kind));
    for (const packet& q : got.packets)
      if (q.offset + 40 >= at && q.offset <= a0 + 14)
        std::printf("   got   %6llu %2llu %s\n", static_cast<unsigned long long>(q.offset), static_cast<unsigned long long>(q.size), kind_name(q.kind));
    for (const diagnostic& e : got.errors)
      std::printf("   error %6llu %s\n", static_cast<unsigned long long>(e.offset), error_name(e.code));
    std::printf("   bytes from %zu:", at > 4 ? at - 4 : 0);
    for (std::size_t k = at > 4 ? at - 4 : 0; k < d.size() && k < a0 + 14; ++k) std::printf(" %02x", d[k]);
    std::printf("\n");
  }
  CHECK_MESSAGE(found, "the A-Sync at clean offset " << b.clean[ai].offset << " was not found");
  st.resynced += found;
}

// Every bit flipped in small buffers, 3000 random flips in large ones; a byte deleted and a
// random byte inserted at every position of small buffers, at 1500 random ones in large ones.
recovery_stats damage_sweep() {
  splitmix64 rng{0x7261636b};
  recovery_stats st;
  for (const trace_buffer& b : buffers()) {
    REQUIRE(!b.clean.empty());
    const std::size_t n = b.data.size();
    // Every bit of small buffers; random positions in large ones.
    if (n <= 700) {
      for (std::size_t at = 0; at < n; ++at)
        for (unsigned bit = 0; bit < 8; ++bit)
          check_damage(b, damage::flip, at, static_cast<std::uint8_t>(1u << bit), rng, st);
    } else {
      for (int k = 0; k < 3000; ++k)
        check_damage(b, damage::flip, rng.next() % n, static_cast<std::uint8_t>(1u << (rng.next() % 8)),
                     rng, st);
    }
    const int tries = n <= 700 ? static_cast<int>(n) : 1500;
    for (int k = 0; k < tries; ++k) {
      const std::size_t at = n <= 700 ? static_cast<std::size_t>(k) : rng.next() % n;
      check_damage(b, damage::erase, at, 0, rng, st);
      check_damage(b, damage::insert, at, static_cast<std::uint8_t>(rng.next()), rng, st);
    }
  }
  return st;
}

}  // namespace

TEST_CASE("recovery: bit flips, deleted and inserted bytes resynchronize at the next A-Sync") {
  if (!have_corpus()) return;
  const recovery_stats st = damage_sweep();
  MESSAGE(st.cases << " damaged buffers: " << st.resynced << " resynchronized at the next A-Sync, "
                   << st.no_async_after << " damaged after the last A-Sync");
  CHECK(st.resynced + st.no_async_after == st.cases);
}

TEST_CASE("recovery: a truncated buffer decodes every whole packet, then reports truncation") {
  if (!have_corpus()) return;
  splitmix64 rng{0x74727563};
  std::size_t cases = 0;
  for (const trace_buffer& b : buffers()) {
    const std::size_t n = b.data.size();
    const std::size_t step = n <= 2000 ? 1 : n / 997;
    for (std::size_t t = 0; t < n; t += step) {
      CAPTURE(b.name);
      CAPTURE(t);
      const std::vector<std::uint8_t> d(b.data.begin(), b.data.begin() + static_cast<std::ptrdiff_t>(t));
      const decoded got = decode_checked(b.regs, d, rng);
      std::size_t whole = 0;
      while (whole < b.clean.size() && b.clean[whole].offset + b.clean[whole].size <= t) ++whole;
      REQUIRE(got.packets.size() == whole);
      bool same = true;
      for (std::size_t k = 0; k < whole; ++k) same = same && same_except_offset(b.clean[k], got.packets[k], 0);
      CHECK(same);
      const bool cut = whole < b.clean.size() && b.clean[whole].offset < t;
      if (whole == 0) {  // inside the first A-Sync: only the notice that bytes were skipped
        for (const diagnostic& e : got.errors) CHECK(e.code == error_code::unsynchronized);
      } else if (cut) {
        REQUIRE(got.errors.size() == 1);
        CHECK(got.errors[0].code == error_code::truncated_packet);
        CHECK(got.errors[0].offset == b.clean[whole].offset);
      } else {
        CHECK(got.errors.empty());
      }
      ++cases;
    }
  }
  MESSAGE(cases << " truncations");
}

TEST_CASE("recovery: a rotated buffer (wrapped circular buffer) decodes from its first A-Sync on") {
  if (!have_corpus()) return;
  splitmix64 rng{0x726f7461};
  std::size_t cases = 0;
  for (const trace_buffer& b : buffers()) {
    const std::size_t n = b.data.size();
    const int tries = n <= 300 ? static_cast<int>(n) - 1 : 300;
    for (int k = 0; k < tries; ++k) {
      const std::size_t r = n <= 300 ? static_cast<std::size_t>(k) + 1 : 1 + rng.next() % (n - 1);
      CAPTURE(b.name);
      CAPTURE(r);
      std::vector<std::uint8_t> d(b.data.begin() + static_cast<std::ptrdiff_t>(r), b.data.end());
      d.insert(d.end(), b.data.begin(), b.data.begin() + static_cast<std::ptrdiff_t>(r));
      const decoded got = decode_checked(b.regs, d, rng);
      // Expected: the clean packets from the first A-Sync at or after r to the end (shifted by
      // -r), then, from the buffer's own first A-Sync at n - r, every whole clean packet before
      // r (shifted by n - r), then at most a truncated packet.
      const std::size_t a1 = first_async_from(b.clean, r);
      std::vector<std::pair<packet, std::int64_t>> want;
      for (std::size_t i = a1; i < b.clean.size(); ++i) want.push_back({b.clean[i], -static_cast<std::int64_t>(r)});
      for (std::size_t i = 0; i < b.clean.size() && b.clean[i].offset + b.clean[i].size <= r; ++i)
        want.push_back({b.clean[i], static_cast<std::int64_t>(n - r)});
      REQUIRE(got.packets.size() == want.size());
      std::size_t bad = want.size();
      for (std::size_t i = 0; i < want.size() && bad == want.size(); ++i) {
        const packet& w = want[i].first;
        const packet& g = got.packets[i];
        const bool ok = w.kind == packet_kind::async  // a zero run may grow at its front
                            ? g.kind == w.kind &&
                                  g.offset + g.size == static_cast<std::uint64_t>(static_cast<std::int64_t>(
                                                           w.offset + w.size) + want[i].second)
                            : same_except_offset(w, g, want[i].second);
        if (!ok) bad = i;
      }
      CHECK_MESSAGE(bad == want.size(), "packet " << bad << " differs from the clean decode");
      bool errors_ok = true;
      for (const diagnostic& e : got.errors)
        errors_ok = errors_ok && (e.code == error_code::unsynchronized || e.code == error_code::truncated_packet);
      CHECK(errors_ok);
      ++cases;
    }
  }
  MESSAGE(cases << " rotations");
}

// ---- regression inputs of the fuzz targets and recovery tests (fuzz/README.md, "Findings") ---

namespace {
std::vector<std::uint8_t> async_bytes() {
  std::vector<std::uint8_t> a(11, 0);
  a.push_back(0x80);
  return a;
}
std::vector<std::uint8_t> operator+(std::vector<std::uint8_t> a, const std::vector<std::uint8_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
}  // namespace

// FUZZ-FINDING: 1 (decoder, fuzz/README.md; fixed by the decoder's owner in 68b6ab5, enabled).
// "9a 00 00" is a 32-bit Address packet whose last two payload bytes were lost: it reads them
// from the first two zeros of the A-Sync after it. Before the fix, the 9 zeros and 0x80 left
// were reported as bad_async (offset 19) and the decoder searched for the next A-Sync, losing
// the Trace Info and the atom after this one. 11 or more zero bytes then 0x80 occur nowhere
// else in an ETE stream (D5.4, D9.2.3), so the A-Sync ending at offset 29 must be found.
TEST_CASE("FUZZ-FINDING 1: an A-Sync whose first zeros a damaged packet consumed is found") {
  const std::vector<std::uint8_t> bytes = async_bytes() + std::vector<std::uint8_t>{0x01, 0x00, 0x9a, 0x00, 0x00} +
                                          async_bytes() + std::vector<std::uint8_t>{0x01, 0x00, 0xf7};
  const decoded d = decode_all(presets::ete_1_0, bytes);
  REQUIRE(d.packets.size() >= 3);
  const packet& sync = d.packets[d.packets.size() - 3];
  CHECK(sync.kind == packet_kind::async);
  CHECK(sync.offset + sync.size == 29);
  CHECK(d.packets[d.packets.size() - 2].kind == packet_kind::trace_info);
  CHECK(d.packets[d.packets.size() - 2].offset == 29);
  CHECK(d.packets.back().kind == packet_kind::atom_f1);
  CHECK(d.packets.back().offset == 31);
  CHECK(!d.errors.empty());  // the damaged packet (or the short run) is still reported
}

namespace {
// Compresses a stage-1 element stream; returns the bytes and the first push/finish error.
std::vector<std::uint8_t> compress(const registers& regs, const std::vector<element>& in,
                                   error_code& first) {
  auto comp = std::make_unique<compressor<>>(regs);
  std::vector<std::uint8_t> out;
  std::uint8_t chunk[256];
  first = error_code::ok;
  auto note = [&](error_code e) {
    if (first == error_code::ok) first = e;
  };
  auto drain = [&] {
    while (const std::size_t n = comp->drain(chunk, sizeof chunk)) out.insert(out.end(), chunk, chunk + n);
  };
  for (const element& e : in) {  // drained only when the staging buffer is full
    error_code r = comp->push(e);
    if (r == error_code::buffer_too_small) {
      drain();
      r = comp->push(e);
    }
    note(r);
  }
  error_code r = comp->finish();
  if (r == error_code::buffer_too_small) {
    drain();
    r = comp->finish();
  }
  note(r);
  drain();
  return out;
}
element make(element_kind k, bool p0 = false) {
  element e{};
  e.kind = k;
  e.p0 = p0;
  return e;
}
}  // namespace

// FUZZ-FINDING: 2 (element compressor, fuzz/README.md). A Q element followed by an exception
// with E=0b10 and an UNKNOWN address (header 0x70): stage 1 gives Q, Target Address (UNKNOWN),
// Exception (UNKNOWN). The compressor holds the Q element to merge it with the Target Address
// that follows, and takes the UNKNOWN one as the Q packet's address (or, for an uncounted Q,
// sends it as an Address packet): the decoder then reports Target Address 0x0, not UNKNOWN.
TEST_CASE("FUZZ-FINDING 2: a Q element then an exception's UNKNOWN target address compress exactly") {
  const registers regs = presets::ete_1_0;  // MAXSPEC 0: every P0 element is committed
  for (const bool counted : {true, false}) {
    CAPTURE(counted);
    std::vector<element> in;
    in.push_back(make(element_kind::trace_info));
    in.push_back(make(element_kind::trace_on));
    element t = make(element_kind::target_address);
    t.address = 0x400000;
    in.push_back(t);
    element q = make(element_kind::q, true);
    if (counted)
      q.count = 5;
    else
      q.flags = element_flag::count_unknown;
    in.push_back(q);
    in.push_back(make(element_kind::commit));  // implied by MAXSPEC 0
    in.back().count = 1;
    element u = make(element_kind::target_address);
    u.flags = element_flag::unknown_address;
    in.push_back(u);
    element x = make(element_kind::exception, true);
    x.exception_type = 0x0e;
    x.flags = element_flag::unknown_address;
    in.push_back(x);
    error_code first;
    const std::vector<std::uint8_t> bytes = compress(regs, in, first);
    CHECK(first == error_code::ok);
    const resolved_trace got = resolve_elements(regs, bytes.data(), bytes.size());
    CHECK(got.errors == 0);
    std::vector<element> want;
    for (const element& e : in)
      if (e.kind != element_kind::commit) want.push_back(e);
    REQUIRE(got.elements.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      CAPTURE(i);
      CHECK(same_behaviour(got.elements[i], want[i]));
    }
  }
}

// FUZZ-FINDING: 3 (element compressor, fuzz/README.md). An Event element is merged into the
// Event packet just written (buf_[len_ - 1] = 0x70 | bits) without the check the encoder makes
// for a new Event packet: an event number at or above NUMEVENT (here 3, with NUMEVENT 3) makes
// header 0x79, reserved in this configuration, and push() returns ok. Either push() refuses
// the element or the output decodes without errors.
TEST_CASE("FUZZ-FINDING 3: an Event element above NUMEVENT never makes a reserved header") {
  const registers regs = presets::ete_spec255;
  REQUIRE(config::from(regs).numevent == 3);
  std::vector<element> in;
  in.push_back(make(element_kind::trace_info));
  in.push_back(make(element_kind::event));  // ETEEvent 0
  element e3 = make(element_kind::event);
  e3.number = 3;
  in.push_back(e3);
  error_code first;
  const std::vector<std::uint8_t> bytes = compress(regs, in, first);
  const decoded d = decode_all(regs, bytes);
  CHECK(d.errors.empty());
  for (const diagnostic& e : d.errors) MESSAGE(std::string(error_name(e.code)) << " at " << e.offset);
  if (first == error_code::ok) CHECK(d.errors.empty());
}

// ---- element-level recovery (issue 14) -------------------------------------------------------
// The counterpart of the packet-level tests above, one layer up: each conformance buffer twice
// in a row (the second copy starts with its own A-Sync and Trace Info), the first copy damaged
// (bit flips, deleted, inserted and duplicated bytes, zero and 0xff runs, truncation, rotation).
// From the second copy's A-Sync on, the resolved elements must equal a decode of the bytes from
// that A-Sync on, in both atom forms: always when MAXSPEC is 0 (no speculative state can
// survive the Trace Info there), and with speculation when the damage was detected (an error
// before the A-Sync, and no other A-Sync between that error and it), since an undetected
// change to a Commit or Cancel count is indistinguishable from real trace.

namespace {

struct element_buffer {
  std::string name;
  registers regs;
  std::vector<std::uint8_t> one;  // the buffer as captured
};

const std::vector<element_buffer>& element_buffers() {
  static const std::vector<element_buffer> all = [] {
    std::vector<element_buffer> v;
    for_each_clean_buffer([&](const std::string& name, const registers& regs,
                              const std::vector<std::uint8_t>& data, const std::vector<packet>&) {
      if (data.size() >= 16) v.push_back({name, regs, data});
    });
    return v;
  }();
  return all;
}

struct element_recovery_stats {
  std::size_t cases = 0, required = 0, detected = 0, elements_compared = 0;
};

// `d`: the damaged bytes, whose undamaged second copy starts at `s` (an A-Sync, then the
// buffer's Trace Info).
void check_elements_from(const element_buffer& b, const std::vector<std::uint8_t>& d, std::size_t s,
                         const std::string& what, std::size_t at, element_recovery_stats& st) {
  CAPTURE(b.name);
  CAPTURE(what);
  CAPTURE(at);
  ++st.cases;
  const decoded pk = decode_all(b.regs, d);
  bool error = false;
  std::uint64_t last_error = 0;
  for (const diagnostic& e : pk.errors)
    if (e.code != error_code::unsynchronized && e.offset < s) {
      error = true;
      last_error = std::max(last_error, e.offset);
    }
  bool sync_between = false;  // an A-Sync (made by the damage) between that error and `s`
  for (const packet& p : pk.packets)
    sync_between = sync_between ||
                   (p.kind == packet_kind::async && p.offset > last_error && p.offset + p.size <= s);
  const bool detected = error && !sync_between;
  const bool required = detected || config::from(b.regs).maxspec == 0;
  st.detected += detected;
  st.required += required;
  const std::vector<std::uint8_t> tail(d.begin() + static_cast<std::ptrdiff_t>(s), d.end());
  // Compared from the end of that A-Sync: a bad_async inside its zero run (the damage took its
  // first zeros, see "recovery: bit flips, ..." above) belongs to the damage.
  const decoded tail_packets = decode_all(b.regs, tail);
  REQUIRE(!tail_packets.packets.empty());
  REQUIRE(tail_packets.packets[0].kind == packet_kind::async);
  const std::uint64_t sync_end = s + tail_packets.packets[0].size;
  for (const bool runs : {false, true}) {
    CAPTURE(runs);
    const read_elements_result got = read_elements(b.regs, d.data(), d.size(), true, runs);
    for (const element& e : got.elements) REQUIRE(e.offset < d.size());
    if (!required) continue;
    const read_elements_result want = read_elements(b.regs, tail.data(), tail.size(), true, runs);
    std::vector<element> after;
    bool in_order = true;  // nothing from before the A-Sync after the first element from it
    for (const element& e : got.elements) {
      if (e.offset >= sync_end) {
        element x = e;
        x.offset -= s;
        after.push_back(x);
      } else {
        in_order = in_order && after.empty();
      }
    }
    CHECK_MESSAGE(in_order, "an element from before the A-Sync came after one from it");
    std::size_t i = 0;
    while (i < after.size() && i < want.elements.size() && after[i] == want.elements[i]) ++i;
    if (i != after.size() || i != want.elements.size()) {
      CAPTURE(i);
      CAPTURE(after.size());
      CAPTURE(want.elements.size());
      const std::string g = i < after.size() ? element_name(after[i].kind) : "-";
      const std::string w = i < want.elements.size() ? element_name(want.elements[i].kind) : "-";
      const std::uint64_t off = i < want.elements.size() ? want.elements[i].offset + s : 0;
      CAPTURE(g);
      CAPTURE(w);
      CAPTURE(off);
      FAIL_CHECK("elements after the A-Sync differ from a decode of the bytes from it");
    }
    std::vector<diagnostic> errors_after;
    for (const diagnostic& e : got.errors)
      if (e.code != error_code::unsynchronized && e.offset >= sync_end) errors_after.push_back({e.code, e.offset - s, e.length});
    if (errors_after != want.errors) {
      std::string g, w;
      for (const diagnostic& e : errors_after) g += std::string(error_name(e.code)) + "@" + std::to_string(e.offset) + " ";
      for (const diagnostic& e : want.errors) w += std::string(error_name(e.code)) + "@" + std::to_string(e.offset) + " ";
      CAPTURE(g);
      CAPTURE(w);
      FAIL_CHECK("errors after the A-Sync differ from a decode of the bytes from it");
    }
    st.elements_compared += want.elements.size();
  }
}

element_recovery_stats element_damage_sweep() {
  splitmix64 rng{0x656c656d};
  element_recovery_stats st;
  for (const element_buffer& b : element_buffers()) {
    const std::vector<std::uint8_t>& one = b.one;
    const std::size_t n = one.size();
    const int tries = n <= 2000 ? 60 : 25;  // of each kind
    auto doubled = [&](std::vector<std::uint8_t> first) {
      first.insert(first.end(), one.begin(), one.end());
      return first;
    };
    for (int k = 0; k < tries; ++k) {
      const std::size_t at = rng.next() % n;
      {  // a bit flipped
        std::vector<std::uint8_t> c = one;
        c[at] ^= static_cast<std::uint8_t>(1u << (rng.next() % 8));
        check_elements_from(b, doubled(c), n, "flip", at, st);
      }
      const std::size_t len = 1 + rng.next() % 24;
      {  // bytes deleted
        std::vector<std::uint8_t> c = one;
        const std::size_t m = std::min(len, n - at);
        c.erase(c.begin() + static_cast<std::ptrdiff_t>(at), c.begin() + static_cast<std::ptrdiff_t>(at + m));
        check_elements_from(b, doubled(c), n - m, "erase", at, st);
      }
      {  // random bytes inserted
        std::vector<std::uint8_t> c = one, ins(len);
        for (auto& x : ins) x = static_cast<std::uint8_t>(rng.next());
        c.insert(c.begin() + static_cast<std::ptrdiff_t>(at), ins.begin(), ins.end());
        check_elements_from(b, doubled(c), n + len, "insert", at, st);
      }
      for (const std::uint8_t fill : {std::uint8_t{0x00}, std::uint8_t{0xff}}) {  // a run written over
        std::vector<std::uint8_t> c = one;
        const std::size_t m = std::min<std::size_t>(1 + rng.next() % 40, n - at);
        std::fill(c.begin() + static_cast<std::ptrdiff_t>(at), c.begin() + static_cast<std::ptrdiff_t>(at + m), fill);
        check_elements_from(b, doubled(c), n, fill ? "0xff run" : "zero run", at, st);
      }
      {  // a segment duplicated (the capture repeated a stretch)
        std::vector<std::uint8_t> c = one;
        const std::size_t from = rng.next() % n;
        const std::size_t m = std::min<std::size_t>(1 + rng.next() % 64, n - from);
        const std::vector<std::uint8_t> seg(c.begin() + static_cast<std::ptrdiff_t>(from),
                                            c.begin() + static_cast<std::ptrdiff_t>(from + m));
        c.insert(c.begin() + static_cast<std::ptrdiff_t>(at), seg.begin(), seg.end());
        check_elements_from(b, doubled(c), n + m, "duplicate", at, st);
      }
      {  // the first copy cut short (a capture that stopped, then a new session)
        const std::vector<std::uint8_t> c(one.begin(), one.begin() + static_cast<std::ptrdiff_t>(at));
        check_elements_from(b, doubled(c), at, "truncate", at, st);
      }
      if (at > 0) {  // the first copy rotated (a wrapped circular buffer)
        std::vector<std::uint8_t> c(one.begin() + static_cast<std::ptrdiff_t>(at), one.end());
        c.insert(c.end(), one.begin(), one.begin() + static_cast<std::ptrdiff_t>(at));
        check_elements_from(b, doubled(c), n, "rotate", at, st);
      }
    }
  }
  return st;
}

}  // namespace

TEST_CASE("recovery: resolved elements after damage equal a decode from the next A-Sync") {
  if (element_buffers().empty()) {
    if (corpus_required()) FAIL("conformance corpus not found, and TRACECODEC_REQUIRE_CONFORMANCE is set");
    MESSAGE("skipped: conformance corpus not found");
    return;
  }
  const element_recovery_stats st = element_damage_sweep();
  MESSAGE(st.cases << " damaged traces: " << st.required << " compared from the next A-Sync ("
                   << st.detected << " with the damage detected), " << st.elements_compared
                   << " elements compared");
  CHECK(st.required * 10 >= st.cases * 9);  // nearly all: most of the corpus has MAXSPEC 0
}
