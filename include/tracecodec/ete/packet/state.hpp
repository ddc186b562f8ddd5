// SPDX-License-Identifier: Apache-2.0
// State retained between packets (D9.2.1), shared by the decoder and the encoder so that both
// compress and decompress against exactly the same history.
#pragma once

#include <cstdint>

#include "packet.hpp"

namespace tracecodec::ete {

struct address_entry {
  std::uint64_t address = 0;
  isa sub_isa = isa::is0;
  constexpr bool operator==(const address_entry&) const = default;
};

// The 3-entry address history buffer (R_ZPQMY, D9.2.18.4): entry 0 is the most recent.
struct address_history {
  address_entry entry[3]{};
  constexpr void add(std::uint64_t address, isa s) noexcept {
    entry[2] = entry[1];
    entry[1] = entry[0];
    entry[0] = address_entry{address, s};
  }
  // REXKEZ: a Trace Info packet sets every entry to address 0, IS0.
  constexpr void reset() noexcept { entry[0] = entry[1] = entry[2] = address_entry{}; }
  constexpr bool operator==(const address_history&) const = default;
};

struct stream_state {
  address_history history{};
  std::uint64_t timestamp = 0;     // R_RZNPD: last timestamp, for bit replacement
  context ctx{};                   // R_ZPNYS
  std::uint32_t cc_threshold = 0;  // R_MWFSN
  // D9.2.6.2 TraceInfoPacket(): everything returns to its architectural reset value.
  constexpr void trace_info(bool cc_enabled, std::uint32_t cyct) noexcept {
    history.reset();
    timestamp = 0;
    ctx = context{};
    cc_threshold = cc_enabled ? cyct : 0;
  }
  constexpr bool operator==(const stream_state&) const = default;
};

}  // namespace tracecodec::ete
