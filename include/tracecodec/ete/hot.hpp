// SPDX-License-Identifier: Apache-2.0
// Forced inlining for the hot paths (packet parsing, element emission, resolution), so that
// each decode loop compiles to one function without calls per packet or element.
#pragma once

#if defined(__GNUC__) || defined(__clang__)
#define TRACECODEC_HOT [[gnu::always_inline]] inline
#define TRACECODEC_HOT_LAMBDA __attribute__((always_inline))
#else
#define TRACECODEC_HOT inline
#define TRACECODEC_HOT_LAMBDA
#endif
