// SPDX-License-Identifier: Apache-2.0
// The te_inst packet payload (E-Trace "Instruction Trace Encoder Output Packets"): every field
// of every format and subformat, under its spec name. One value type serves all layouts; the
// fields a layout does not have are 0 (see layout.hpp for which fields each layout carries).
#pragma once

#include <cstdint>

namespace tracecodec::etrace {

// te_inst format field (2 bits).
enum class format : std::uint8_t {
  opt_ext = 0,     // optional efficiency extensions
  diff_delta = 1,  // branch map, may include a differential address
  addr_only = 2,   // differential address, no branch information
  sync = 3,        // synchronisation, trap, context, support
};

// Format 3 subformat (2 bits).
enum class sync_subformat : std::uint8_t { start = 0, trap = 1, context = 2, support = 3 };

// Format 0 subformat (f0s_width_p bits, or inferred when f0s_width_p is 0).
enum class opt_ext_subformat : std::uint8_t { branch_count = 0, jump_target_cache = 1 };

// Format 0 subformat 0 branch_fmt (2 bits); 0b01 cannot occur.
enum class branch_fmt : std::uint8_t { no_addr = 0, addr = 2, addr_fail = 3 };

// Format 3 subformat 3 qual_status (2 bits).
enum class qual_status : std::uint8_t { no_change = 0, ended_rep = 1, trace_lost = 2, ended_ntr = 3 };

// The distinct payload layouts: a format/subformat, and for formats 1 and 0 the variant the
// branches / branch_fmt field selects.
enum class te_inst_kind : std::uint8_t {
  sync_start,                // format 3 subformat 0
  sync_trap,                 // format 3 subformat 1
  sync_context,              // format 3 subformat 2
  sync_support,              // format 3 subformat 3
  addr_only,                 // format 2
  diff_delta,                // format 1, branches 1..31: branch map and address
  diff_delta_full_map,       // format 1, branches 0: 31-bit branch map, no address
  branch_count,              // format 0 subformat 0, branch_fmt 00: no address
  branch_count_address,      // format 0 subformat 0, branch_fmt 10/11: with address
  jump_target_cache,         // format 0 subformat 1, branches 1..31: with branch map
  jump_target_cache_no_map,  // format 0 subformat 1, branches 0: no branch map
};
inline constexpr unsigned te_inst_kind_count = 11;

// A te_inst payload. Plain fields hold the bits as transmitted (1-bit fields as bool).
// notify, updiscon and irreport hold their meaning instead: true when the transmitted bit
// differs from the bit before it (the spec's encoding, so that they normally compress away);
// irdepth is meaningful only with irreport (its bits equal the irreport bit otherwise).
struct te_inst {
  etrace::format format = etrace::format::sync;
  std::uint8_t subformat = 0;  // format 3: sync_subformat; format 0: opt_ext_subformat; else 0

  // Format 3 (sync).
  bool branch = false;         // 0: the address is a taken branch
  std::uint8_t privilege = 0;
  std::uint64_t time = 0;      // time_width_p bits, absent when notime_p
  std::uint64_t context = 0;   // context_width_p bits, absent when nocontext_p
  std::uint64_t ecause = 0;
  bool interrupt = false;
  bool thaddr = false;
  // Byte address (formats 3) or byte difference (formats 2, 1, 0): the address field's
  // iaddress_width_p - iaddress_lsb_p bits shifted left by iaddress_lsb_p.
  std::uint64_t address = 0;
  std::uint64_t tval = 0;      // iaddress_width_p bits, absent for interrupts

  // Format 3 subformat 3 (support).
  bool ienable = false;
  std::uint32_t encoder_mode = 0;
  etrace::qual_status qual_status = etrace::qual_status::no_change;
  std::uint64_t ioptions = 0;
  bool denable = false;
  bool dloss = false;
  std::uint64_t doptions = 0;

  // Formats 1 and 0.
  std::uint8_t branches = 0;        // number of valid branch_map bits (0: see te_inst_kind)
  std::uint32_t branch_map = 0;     // every bit of the field, valid or not; bit 0 oldest
  std::uint32_t branch_count = 0;   // correctly predicted branches minus 31
  etrace::branch_fmt branch_fmt = etrace::branch_fmt::no_addr;
  std::uint32_t index = 0;          // jump target cache index

  // Formats 2, 1, 0.
  bool notify = false;
  bool updiscon = false;
  bool irreport = false;
  std::uint32_t irdepth = 0;

  constexpr bool operator==(const te_inst&) const = default;
};

// Run-time trace options that change a payload layout: with implicit exception mode enabled a
// trap packet with thaddr 1 carries no address (Format 3 subformat 1).
struct trace_mode {
  bool implicit_exception = false;
  constexpr bool operator==(const trace_mode&) const = default;
};

// Valid branch_map bits for format 1 / format 0 subformat 1 with `branches` 1..31; 0 is the
// full-map form of format 1 (31 bits).
constexpr unsigned branch_map_width(unsigned branches) noexcept {
  if (branches == 0) return 31;
  if (branches == 1) return 1;
  if (branches <= 3) return 3;
  if (branches <= 7) return 7;
  if (branches <= 15) return 15;
  return 31;
}

}  // namespace tracecodec::etrace
