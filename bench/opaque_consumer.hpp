// SPDX-License-Identifier: Apache-2.0
// Consumers compiled in their own translation unit (opaque_consumer.cpp), so that no compiler
// can inline them into a decode loop: what a user's consumer in another file gets (issue 18,
// speed that does not depend on the inliner). They read the fields the inlined consumers read
// (consumers.hpp).
#pragma once

#include <tracecodec/ete/element/element.hpp>
#include <tracecodec/ete/packet/packet.hpp>

#include <cstdint>

namespace bench {
void read_packet(std::uint64_t& acc, const tracecodec::ete::packet& p) noexcept;
void read_element(std::uint64_t& acc, const tracecodec::ete::element& e) noexcept;
}  // namespace bench
