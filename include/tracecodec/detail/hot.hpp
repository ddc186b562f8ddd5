// SPDX-License-Identifier: Apache-2.0
// Forced inlining for the hot paths (packet parsing, element emission, resolution), so that
// each decode loop compiles to one function without calls per packet or element.
//
// Not under AddressSanitizer, nor when TRACECODEC_NO_FORCED_INLINE is defined: forcing the
// whole packet -> element -> flow pipeline into one instrumented function makes clang's
// sanitizer passes superlinear (a test file of the flow layer took many minutes to compile
// instead of seconds; bench/README.md has the measurement). Only code generation differs.
#pragma once

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

#if defined(__GNUC__) || defined(__clang__)
// The rare cases of a hot function: one call instead of their code in every decode loop.
#define TRACECODEC_OUT_OF_LINE [[gnu::noinline]]
#else
#define TRACECODEC_OUT_OF_LINE
#endif
