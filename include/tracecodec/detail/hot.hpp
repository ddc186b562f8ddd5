// SPDX-License-Identifier: Apache-2.0
// Forced inlining for the hot paths (packet parsing, element emission, resolution), so that
// each decode loop compiles to one function without calls per packet or element.
#pragma once

#if defined(__GNUC__) || defined(__clang__)
#define TRACECODEC_HOT [[gnu::always_inline]] inline
#define TRACECODEC_HOT_LAMBDA __attribute__((always_inline))
// The rare cases of a hot function: one call instead of their code in every decode loop.
#define TRACECODEC_OUT_OF_LINE [[gnu::noinline]]
#else
#define TRACECODEC_HOT inline
#define TRACECODEC_HOT_LAMBDA
#define TRACECODEC_OUT_OF_LINE
#endif
