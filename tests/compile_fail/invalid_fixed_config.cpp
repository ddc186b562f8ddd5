// SPDX-License-Identifier: Apache-2.0
// Must NOT compile: a fixed configuration with register values no ETE trace unit has
// (TRCDEVARCH of another architecture) is rejected by static_assert.
#include <tracecodec/tracecodec.hpp>

using namespace tracecodec::ete;
decoder<fixed_config<registers{0x2801cea1, 0xd0001088, 0, 0x4a13, 0x1, 0}>> bad;
