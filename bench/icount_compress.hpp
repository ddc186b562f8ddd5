// SPDX-License-Identifier: Apache-2.0
// The instruction-count gate's compress stages (icount.cpp), in a translation unit of their own.
#pragma once

#include <cstdint>
#include <vector>

#include "corpora.hpp"

namespace bench {

// The corpus's committed elements to packets in `out`, through a compressor: a push() per
// element, or (array) push(elements, count) over the whole array, draining when the staging
// buffer is full. Returns the bytes written, or ~0 on an error.
std::uint64_t compress(const corpus& c, std::vector<std::uint8_t>& out, bool array);

}  // namespace bench
