// SPDX-License-Identifier: Apache-2.0
#include "opaque_consumer.hpp"

namespace bench {
void read_packet(std::uint64_t& acc, const tracecodec::ete::packet& p) noexcept {
  acc += p.address ^ p.timestamp ^ p.atoms ^ p.count ^ p.cycles ^ p.ctx.context_id ^ p.ctx.vmid ^ p.ctx.el ^
         static_cast<unsigned>(p.kind) ^ p.offset ^ p.size ^ p.exception_type;
}
void read_element(std::uint64_t& acc, const tracecodec::ete::element& e) noexcept {
  acc += e.address ^ e.timestamp ^ e.count ^ e.cycles ^ e.atom_bits ^ static_cast<unsigned>(e.kind) ^ e.taken ^
         e.ctx.context_id ^ e.offset;
}
}  // namespace bench
