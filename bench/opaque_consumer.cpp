// SPDX-License-Identifier: Apache-2.0
#include "opaque_consumer.hpp"

#include "consumers.hpp"

namespace bench {
void read_packet(std::uint64_t& acc, const tracecodec::ete::packet& p) noexcept { acc += fields(p); }
void read_element(std::uint64_t& acc, const tracecodec::ete::element& e) noexcept { acc += fields(e); }
}  // namespace bench
