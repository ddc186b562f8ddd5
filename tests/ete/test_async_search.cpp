// SPDX-License-Identifier: Apache-2.0
// The A-Sync search (ete/packet/async_search.hpp, issue 18 item 1): every block path this
// machine can run (SSE2 and AVX2 on x86-64, Advanced SIMD on AArch64, where this file also runs
// under qemu-aarch64) against the byte loop, at every alignment, block boundary and carried
// zero count; hand-built cases whose answers are counted from the rule (D5.4: at least 11
// zeros, then 0x80); and a decoder skipping noise to its first A-Sync, whole and in chunks.
#include <doctest/doctest.h>

#include <tracecodec/ete/packet/async_search.hpp>
#include <tracecodec/ete/packet/decoder.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "../common/random.hpp"

namespace {

using tracecodec::ete::detail::async_search_result;
using tracecodec::ete::detail::find_async_scalar;

struct search_path {
  const char* name;
  async_search_result (*find)(const std::uint8_t*, std::size_t, std::uint64_t) noexcept;
};

// The block paths this build has and this CPU runs.
std::vector<search_path> block_paths() {
  std::vector<search_path> v;
#if TRACECODEC_ASYNC_SEARCH_X86
  v.push_back({"sse2", tracecodec::ete::detail::find_async_sse2});
  if (tracecodec::ete::detail::have_avx2()) v.push_back({"avx2", tracecodec::ete::detail::find_async_avx2});
#endif
#if TRACECODEC_ASYNC_SEARCH_NEON
  v.push_back({"neon", tracecodec::ete::detail::find_async_neon});
#endif
  v.push_back({"find_async", [](const std::uint8_t* p, std::size_t n, std::uint64_t c) noexcept {
                 return tracecodec::ete::detail::find_async(p, n, c);
               }});
  return v;
}

bool same(async_search_result a, async_search_result b) { return a.at == b.at && a.zeros == b.zeros; }

}  // namespace

TEST_CASE("A-Sync search: the block paths are there on x86-64 and AArch64") {
  const auto paths = block_paths();
#if defined(__x86_64__) || (defined(__aarch64__) && defined(__ARM_NEON))
#if !TRACECODEC_COMPACT
  CHECK(paths.size() >= 2);  // a block path besides the dispatcher
  CHECK(tracecodec::ete::detail::async_search_path_used() != tracecodec::ete::detail::async_search_path::scalar);
#endif
#endif
  for (const auto& p : paths) MESSAGE("A-Sync search path tested: " << std::string(p.name));
}

TEST_CASE("A-Sync search: hand-built cases, counted from the rule") {
  for (const auto& path : block_paths()) {
    const std::string name = path.name;
    CAPTURE(name);
    // An A-Sync of z zeros ending at every place of a 200-byte buffer of 0xFF bytes.
    for (unsigned z : {10u, 11u, 12u, 40u, 64u, 65u, 130u}) {
      for (std::size_t end = z; end < 200; ++end) {
        std::vector<std::uint8_t> b(200, 0xFF);
        for (std::size_t i = end - z; i < end; ++i) b[i] = 0;
        b[end] = 0x80;
        const async_search_result r = path.find(b.data(), b.size(), 0);
        CAPTURE(z);
        CAPTURE(end);
        if (z >= 11) {
          CHECK(r.at == end);
          CHECK(r.zeros == z);
        } else {
          CHECK(r.at == b.size());  // 10 zeros: no A-Sync
          CHECK(r.zeros == 0);
        }
        // Zeros carried from before the buffer count when the run reaches its first byte.
        if (end == z) {
          const async_search_result c = path.find(b.data(), b.size(), 11 - (z < 11 ? z : 11) + 1);
          CHECK(c.at == end);
        }
      }
    }
    // 0x80 bytes after runs of 1-10 zeros, and a trailing run counted for the next chunk.
    std::vector<std::uint8_t> b;
    for (unsigned z = 0; z <= 10; ++z) {
      b.insert(b.end(), z, 0);
      b.push_back(0x80);
      b.push_back(0x12);
    }
    const std::size_t body = b.size();
    b.insert(b.end(), 77, 0);
    async_search_result r = path.find(b.data(), b.size(), 0);
    CHECK(r.at == b.size());
    CHECK(r.zeros == 77);
    r = path.find(b.data(), body, 50);  // its first byte is 0x80: 50 carried zeros make an A-Sync
    CHECK(r.at == 0);
    CHECK(r.zeros == 50);
    r = path.find(b.data() + 1, body - 1, 50);  // a non-zero first byte: the carried zeros end there
    CHECK(r.at == body - 1);
    CHECK(r.zeros == 0);
    // All zeros: the carried zeros plus all of them.
    const std::vector<std::uint8_t> zeros(300, 0);
    r = path.find(zeros.data(), zeros.size(), 9);
    CHECK(r.at == 300);
    CHECK(r.zeros == 309);
    // 0x80 at the first byte after 11 carried zeros, and after 10.
    const std::vector<std::uint8_t> sync(100, 0x80);
    CHECK(path.find(sync.data(), sync.size(), 11).at == 0);
    CHECK(path.find(sync.data(), sync.size(), 10).at == sync.size());
    CHECK(path.find(sync.data(), 0, 30).zeros == 30);  // nothing to search
  }
}

TEST_CASE("A-Sync search: every path gives the byte loop's answer") {
  test::splitmix64 rng{0x5eed};
  const auto paths = block_paths();
  std::vector<std::uint8_t> buf(512 + 64);
  std::size_t checked = 0, found = 0;
  for (int t = 0; t < 4000; ++t) {
    // Zero runs of every length and 0x80 bytes dense enough that A-Syncs, near misses and runs
    // across 64-byte blocks are common.
    const unsigned style = static_cast<unsigned>(rng.next() % 4);
    for (std::size_t i = 0; i < buf.size();) {
      const std::uint64_t x = rng.next();
      if (x % 8 < static_cast<std::uint64_t>(2 + style)) {
        std::size_t run = static_cast<std::size_t>((x >> 8) % (style == 3 ? 80 : 16));
        while (run-- > 0 && i < buf.size()) buf[i++] = 0;
      } else if (x % 8 == 7) {
        buf[i++] = 0x80;
      } else {
        buf[i++] = static_cast<std::uint8_t>(x >> 16);
      }
    }
    const std::size_t start = static_cast<std::size_t>(rng.next() % 64);
    const std::size_t n = static_cast<std::size_t>(rng.next() % (buf.size() - start + 1));
    constexpr std::uint64_t carries[] = {0, 1, 5, 10, 11, 12, 100};
    const std::uint64_t carried = carries[rng.next() % 7];
    const async_search_result want = find_async_scalar(buf.data() + start, n, carried);
    found += want.at != n;
    for (const auto& path : paths) {
      const async_search_result got = path.find(buf.data() + start, n, carried);
      const std::string name = path.name;
      CAPTURE(name);
      CAPTURE(t);
      CHECK(same(got, want));
      ++checked;
    }
  }
  CHECK(found > 1000);  // the inputs do hold A-Syncs
  CHECK(checked == 4000 * paths.size());
}

TEST_CASE("A-Sync search: a decoder skips noise of every length to the first A-Sync") {
  using namespace tracecodec::ete;
  const registers regs{0x2801cea1, 0xd0001088, 0, 0x47705a13, 0x1, 0};
  // An A-Sync, then Trace On; the noise before it has zeros and 0x80 bytes but no A-Sync.
  std::vector<std::uint8_t> sync(11, 0);
  sync.push_back(0x80);
  sync.push_back(0x04);
  test::splitmix64 rng{42};
  for (std::size_t noise = 0; noise < 700; noise += 1 + noise / 16) {
    std::vector<std::uint8_t> bytes;
    while (bytes.size() < noise) {
      const std::uint64_t x = rng.next();
      if (x % 5 == 0) {
        for (std::size_t k = (x >> 8) % 11; k-- > 0 && bytes.size() < noise;) bytes.push_back(0);
        if (bytes.size() < noise) bytes.push_back(0x80);
      } else {
        bytes.push_back(static_cast<std::uint8_t>((x >> 16) | 1));
      }
    }
    if (!bytes.empty() && bytes.back() == 0) bytes.back() = 0x11;
    bytes.insert(bytes.end(), sync.begin(), sync.end());
    for (std::size_t chunk : {bytes.size(), std::size_t{1}, std::size_t{7}, std::size_t{64}}) {
      decoder<> d(regs);
      std::vector<packet> ps;
      std::vector<diagnostic> es;
      for (std::size_t at = 0; at < bytes.size(); at += chunk) {
        const std::size_t k = bytes.size() - at < chunk ? bytes.size() - at : chunk;
        d.decode_part(bytes.data() + at, k, [&](const packet& p) { ps.push_back(p); },
                      [&](const diagnostic& e) { es.push_back(e); });
      }
      d.decode_end([&](const packet& p) { ps.push_back(p); }, [&](const diagnostic& e) { es.push_back(e); });
      CAPTURE(noise);
      CAPTURE(chunk);
      REQUIRE(ps.size() == 2);
      CHECK(ps[0].kind == packet_kind::async);
      CHECK(ps[0].offset == noise);
      CHECK(ps[0].size == 12);
      CHECK(ps[1].kind == packet_kind::trace_on);
      if (noise == 0) {
        CHECK(es.empty());
      } else {
        REQUIRE(es.size() == 1);
        CHECK(es[0].code == error_code::unsynchronized);
        CHECK(es[0].offset == 0);
        CHECK(es[0].length == noise);
      }
      CHECK(d.stats().bytes_skipped == noise);
    }
  }
}
