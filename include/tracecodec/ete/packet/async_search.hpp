// SPDX-License-Identifier: Apache-2.0
// Finding the next A-Sync (D5.4: at least 11 zero bytes, then 0x80) in bytes whose packet
// boundaries are unknown: where a decoder looks for its first A-Sync or for the next one after
// an error (decoder::scan), and where host/ete/parallel.hpp looks for split points. ETMv4's
// A-Sync is the same pattern.
//
// 64 bytes are classified at once (which are zero, which are 0x80) into two bit masks, so that
// only a block holding a 0x80 byte is looked at further: SSE2 on x86-64 (every such CPU has
// it), AVX2 when the CPU has it (chosen at run time), Advanced SIMD on AArch64. The byte loop
// find_async_scalar() is the reference, the path in constant evaluation, in the compact
// (firmware) form and on other targets; every path gives the same result (tests/ete/
// test_async_search.cpp, and under qemu-aarch64).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../../detail/hot.hpp"

#if (defined(__GNUC__) || defined(__clang__)) && !TRACECODEC_COMPACT && \
    !defined(TRACECODEC_ASYNC_SEARCH_PORTABLE)
#if defined(__x86_64__)
#define TRACECODEC_ASYNC_SEARCH_X86 1
#elif defined(__aarch64__) && defined(__ARM_NEON) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define TRACECODEC_ASYNC_SEARCH_NEON 1
#endif
#endif
#if !defined(TRACECODEC_ASYNC_SEARCH_X86)
#define TRACECODEC_ASYNC_SEARCH_X86 0
#endif
#if !defined(TRACECODEC_ASYNC_SEARCH_NEON)
#define TRACECODEC_ASYNC_SEARCH_NEON 0
#endif

namespace tracecodec::ete::detail {

// The first A-Sync in p[0, n), given `carried` zero bytes just before p[0].
struct async_search_result {
  std::size_t at;       // index of the 0x80 that ends it; n: none
  std::uint64_t zeros;  // the zero bytes just before `at` (before p[n] when none), `carried`
                        // included when they reach back to p[0]
};

constexpr async_search_result find_async_scalar(const std::uint8_t* p, std::size_t n,
                                                std::uint64_t carried) noexcept {
  std::uint64_t z = carried;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint8_t b = p[i];
    if (b == 0) {
      ++z;
    } else {
      if (b == 0x80 && z >= 11) return {i, z};
      z = 0;
    }
  }
  return {n, z};
}

enum class async_search_path : std::uint8_t { scalar, sse2, avx2, neon };

#if TRACECODEC_ASYNC_SEARCH_X86 || TRACECODEC_ASYNC_SEARCH_NEON
// One 64-byte block at `base` whose bit k of `zero`/`sync` says byte k is 0 / 0x80; `z` holds
// the zeros before it and is updated when no A-Sync ends in the block.
[[gnu::always_inline]] inline bool async_in_block(std::uint64_t zero, std::uint64_t sync, std::size_t base,
                                                  std::uint64_t& z, async_search_result& out) noexcept {
  while (sync != 0) {
    const unsigned k = static_cast<unsigned>(__builtin_ctzll(sync));
    sync &= sync - 1;
    const std::uint64_t others = ~zero & ((std::uint64_t{1} << k) - 1);  // non-zero bytes below k
    const std::uint64_t run =
        others == 0 ? k + z : k - 1u - (63u - static_cast<unsigned>(__builtin_clzll(others)));
    if (run >= 11) {
      out = {base + k, run};
      return true;
    }
  }
  z = ~zero == 0 ? z + 64 : static_cast<unsigned>(__builtin_clzll(~zero));
  return false;
}

// The block loop over whole 64-byte blocks, then the byte loop for the rest; Masks(p, zero,
// sync) classifies one block.
template <class Masks>
[[gnu::always_inline]] inline async_search_result find_async_blocks(const std::uint8_t* p, std::size_t n,
                                                                    std::uint64_t z, Masks masks) noexcept {
  std::size_t i = 0;
  async_search_result r{};
  for (; n - i >= 64; i += 64) {
    std::uint64_t zero, sync;
    masks(p + i, zero, sync);
    if (async_in_block(zero, sync, i, z, r)) return r;
  }
  r = find_async_scalar(p + i, n - i, z);
  r.at += i;
  return r;
}

using async_bytes16 = char __attribute__((vector_size(16)));
inline async_bytes16 async_load16(const std::uint8_t* p) noexcept {
  async_bytes16 v;
  __builtin_memcpy(&v, p, 16);
  return v;
}
#endif

#if TRACECODEC_ASYNC_SEARCH_X86
inline async_search_result find_async_sse2(const std::uint8_t* p, std::size_t n, std::uint64_t carried) noexcept {
  return find_async_blocks(p, n, carried, [](const std::uint8_t* b, std::uint64_t& zero, std::uint64_t& sync) {
    zero = sync = 0;
    for (unsigned k = 0; k < 4; ++k) {
      const async_bytes16 v = async_load16(b + 16 * k);
      const auto zm = static_cast<unsigned>(__builtin_ia32_pmovmskb128((async_bytes16)(v == 0)));
      const auto sm = static_cast<unsigned>(__builtin_ia32_pmovmskb128((async_bytes16)(v == (char)0x80)));
      zero |= std::uint64_t{zm} << (16 * k);
      sync |= std::uint64_t{sm} << (16 * k);
    }
  });
}

using async_bytes32 = char __attribute__((vector_size(32)));
[[gnu::target("avx2")]] inline async_search_result find_async_avx2(const std::uint8_t* p, std::size_t n,
                                                                   std::uint64_t carried) noexcept {
  return find_async_blocks(p, n, carried, [](const std::uint8_t* b, std::uint64_t& zero, std::uint64_t& sync)
                                              __attribute__((target("avx2"))) {
    async_bytes32 lo, hi;
    __builtin_memcpy(&lo, b, 32);
    __builtin_memcpy(&hi, b + 32, 32);
    const auto zl = static_cast<unsigned>(__builtin_ia32_pmovmskb256((async_bytes32)(lo == 0)));
    const auto zh = static_cast<unsigned>(__builtin_ia32_pmovmskb256((async_bytes32)(hi == 0)));
    const auto sl = static_cast<unsigned>(__builtin_ia32_pmovmskb256((async_bytes32)(lo == (char)0x80)));
    const auto sh = static_cast<unsigned>(__builtin_ia32_pmovmskb256((async_bytes32)(hi == (char)0x80)));
    zero = std::uint64_t{zl} | std::uint64_t{zh} << 32;
    sync = std::uint64_t{sl} | std::uint64_t{sh} << 32;
  });
}

inline bool have_avx2() noexcept { return __builtin_cpu_supports("avx2"); }
#endif

#if TRACECODEC_ASYNC_SEARCH_NEON
// A byte mask (0 or 0xFF per byte) as one bit per byte: each 8-byte half's top bits gathered
// by one multiplication (lanes moved to general registers, no per-compiler NEON builtin).
[[gnu::always_inline]] inline unsigned async_bits16(async_bytes16 m) noexcept {
  std::uint64_t h[2];
  __builtin_memcpy(h, &m, 16);
  constexpr std::uint64_t top = 0x8080808080808080ull, gather = 0x0002040810204081ull;
  return static_cast<unsigned>(((h[0] & top) * gather) >> 56) |
         static_cast<unsigned>(((h[1] & top) * gather) >> 56) << 8;
}
inline async_search_result find_async_neon(const std::uint8_t* p, std::size_t n, std::uint64_t carried) noexcept {
  return find_async_blocks(p, n, carried, [](const std::uint8_t* b, std::uint64_t& zero, std::uint64_t& sync) {
    async_bytes16 z4[4], s4[4];
    for (unsigned k = 0; k < 4; ++k) {
      const async_bytes16 v = async_load16(b + 16 * k);
      z4[k] = (async_bytes16)(v == 0);
      s4[k] = (async_bytes16)(v == (char)0x80);
    }
    // Blocks without a 0x80 byte (most) need only the zero mask's top bytes: tested first.
    const async_bytes16 any = s4[0] | s4[1] | s4[2] | s4[3];
    std::uint64_t a[2];
    __builtin_memcpy(a, &any, 16);
    zero = sync = 0;
    for (unsigned k = 0; k < 4; ++k) zero |= std::uint64_t{async_bits16(z4[k])} << (16 * k);
    if ((a[0] | a[1]) == 0) return;
    for (unsigned k = 0; k < 4; ++k) sync |= std::uint64_t{async_bits16(s4[k])} << (16 * k);
  });
}
#endif

// The path find_async() takes on this machine.
inline async_search_path async_search_path_used() noexcept {
#if TRACECODEC_ASYNC_SEARCH_X86
  return have_avx2() ? async_search_path::avx2 : async_search_path::sse2;
#elif TRACECODEC_ASYNC_SEARCH_NEON
  return async_search_path::neon;
#else
  return async_search_path::scalar;
#endif
}

constexpr async_search_result find_async(const std::uint8_t* p, std::size_t n, std::uint64_t carried) noexcept {
#if TRACECODEC_ASYNC_SEARCH_X86
  if (!std::is_constant_evaluated()) return have_avx2() ? find_async_avx2(p, n, carried) : find_async_sse2(p, n, carried);
#elif TRACECODEC_ASYNC_SEARCH_NEON
  if (!std::is_constant_evaluated()) return find_async_neon(p, n, carried);
#endif
  return find_async_scalar(p, n, carried);
}

}  // namespace tracecodec::ete::detail
