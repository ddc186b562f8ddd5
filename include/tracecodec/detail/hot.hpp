// SPDX-License-Identifier: Apache-2.0
// Forced inlining for the hot paths (packet parsing, element emission, resolution), so that
// each decode loop compiles to one function without calls per packet or element.
//
// Not under AddressSanitizer, nor when TRACECODEC_NO_FORCED_INLINE is defined: forcing the
// whole packet -> element -> flow pipeline into one instrumented function makes clang's
// sanitizer passes superlinear (a test file of the flow layer took many minutes to compile
// instead of seconds; bench/README.md has the measurement). Only code generation differs.
//
// Nor in the compact form (TRACECODEC_COMPACT, the default under -Os): firmware wants the
// smallest code, so the codecs also take their small-table paths there (compact header table,
// atom headers computed instead of hashed, no duplicated fast paths). The results are the
// same in both forms (tested on the host with both); define TRACECODEC_COMPACT to 0 or 1 to
// choose, the same in every translation unit of a program.
#pragma once

#if !defined(TRACECODEC_COMPACT)
#if defined(__OPTIMIZE_SIZE__)
#define TRACECODEC_COMPACT 1
#else
#define TRACECODEC_COMPACT 0
#endif
#endif
#if TRACECODEC_COMPACT && !defined(TRACECODEC_NO_FORCED_INLINE)
#define TRACECODEC_NO_FORCED_INLINE 1
#endif

namespace tracecodec::detail {
inline constexpr bool compact = TRACECODEC_COMPACT != 0;
}  // namespace tracecodec::detail

#if defined(__SANITIZE_ADDRESS__)
#define TRACECODEC_NO_FORCED_INLINE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TRACECODEC_NO_FORCED_INLINE 1
#endif
#endif

#if (defined(__GNUC__) || defined(__clang__)) && !defined(TRACECODEC_NO_FORCED_INLINE)
#define TRACECODEC_HOT [[gnu::always_inline]] inline
#define TRACECODEC_HOT_LAMBDA __attribute__((always_inline))
#else
#define TRACECODEC_HOT inline
#define TRACECODEC_HOT_LAMBDA
#endif

// Small helpers inlined into their callers in the compact form, so that a firmware call is a
// short chain of frames (its worst-case stack is a budget, tests/firmware/budget.py); the
// other forms leave them to the compiler.
// And the opposite: a function called after a deeper call returns, out of line in the
// compact form so that its locals do not widen the frame of a caller that goes deeper.
#if (defined(__GNUC__) || defined(__clang__)) && TRACECODEC_COMPACT
#define TRACECODEC_FLAT __attribute__((always_inline))
#define TRACECODEC_OWN_FRAME __attribute__((noinline))
#else
#define TRACECODEC_FLAT
#define TRACECODEC_OWN_FRAME
#endif

#if defined(__GNUC__) || defined(__clang__)
// The rare cases of a hot function: one call instead of their code in every decode loop.
#define TRACECODEC_OUT_OF_LINE [[gnu::noinline]]
#else
#define TRACECODEC_OUT_OF_LINE
#endif

namespace tracecodec::detail {
// Sets an object whose value-initialized state is all zero bytes (packets, elements) to that
// state. In the compact form, a word loop the compiler is kept from turning into a memset
// call, so that a firmware image needs no memset for it (newlib's is 160 bytes).
template <class T>
constexpr void zero_fill(T& object) noexcept {
#if defined(__GNUC__) || defined(__clang__)
  if constexpr (compact && sizeof(T) % 4 == 0 && alignof(T) >= 4) {
    if (!__builtin_is_constant_evaluated()) {
      typedef unsigned __attribute__((may_alias)) word;
      word* w = reinterpret_cast<word*>(&object);
      // Unrolled into plain stores before the compiler could see a memset in the loop.
#pragma GCC unroll 32
      for (unsigned i = 0; i < sizeof(T) / 4; ++i) w[i] = 0;
      return;
    }
  }
#endif
  object = T{};
}
}  // namespace tracecodec::detail
