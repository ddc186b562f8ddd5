// SPDX-License-Identifier: Apache-2.0
// The field layout of every te_inst payload, as one table: for each layout the fields in
// transmission order (the spec's tables, first row first), and for each field its width
// source and coding. The payload decoder, encoder and formatter all walk these tables.
#pragma once

#include <cstddef>
#include <cstdint>

#include "parameters.hpp"
#include "te_inst.hpp"

namespace tracecodec::etrace {

enum class field : std::uint8_t {
  format, sync_subformat, opt_ext_subformat, branch, privilege, time, context, ecause,
  interrupt, thaddr, address, tval, ienable, encoder_mode, qual_status, ioptions, denable,
  dloss, doptions, branches, branch_map, branch_count, branch_fmt, index, notify, updiscon,
  irreport, irdepth,
};
inline constexpr unsigned field_count = 28;

// Where a field's width comes from.
enum class width_source : std::uint8_t {
  fixed, privilege, time, context, ecause, address, tval, f0s, index, irdepth, encoder_mode,
  ioptions, doptions, branch_map,
};

// How a field's value becomes bits.
enum class coding : std::uint8_t {
  plain,         // the value, LSB first
  differential,  // notify/updiscon/irreport: bit = preceding bit XOR the flag
  irdepth,       // the value if irreport, else every bit equal to the preceding bit
};

struct field_info {
  const char* name;  // spec field name (also the JSON key)
  width_source source;
  std::uint8_t fixed_width;
  etrace::coding coding;
};

inline constexpr field_info field_table[field_count] = {
    {"format", width_source::fixed, 2, coding::plain},
    {"subformat", width_source::fixed, 2, coding::plain},
    {"subformat", width_source::f0s, 0, coding::plain},
    {"branch", width_source::fixed, 1, coding::plain},
    {"privilege", width_source::privilege, 0, coding::plain},
    {"time", width_source::time, 0, coding::plain},
    {"context", width_source::context, 0, coding::plain},
    {"ecause", width_source::ecause, 0, coding::plain},
    {"interrupt", width_source::fixed, 1, coding::plain},
    {"thaddr", width_source::fixed, 1, coding::plain},
    {"address", width_source::address, 0, coding::plain},
    {"tval", width_source::tval, 0, coding::plain},
    {"ienable", width_source::fixed, 1, coding::plain},
    {"encoder_mode", width_source::encoder_mode, 0, coding::plain},
    {"qual_status", width_source::fixed, 2, coding::plain},
    {"ioptions", width_source::ioptions, 0, coding::plain},
    {"denable", width_source::fixed, 1, coding::plain},
    {"dloss", width_source::fixed, 1, coding::plain},
    {"doptions", width_source::doptions, 0, coding::plain},
    {"branches", width_source::fixed, 5, coding::plain},
    {"branch_map", width_source::branch_map, 0, coding::plain},
    {"branch_count", width_source::fixed, 32, coding::plain},
    {"branch_fmt", width_source::fixed, 2, coding::plain},
    {"index", width_source::index, 0, coding::plain},
    {"notify", width_source::fixed, 1, coding::differential},
    {"updiscon", width_source::fixed, 1, coding::differential},
    {"irreport", width_source::fixed, 1, coding::differential},
    {"irdepth", width_source::irdepth, 0, coding::irdepth},
};

constexpr const field_info& info_of(field f) noexcept {
  return field_table[static_cast<unsigned>(f)];
}

// When a field is present in its layout.
enum class presence : std::uint8_t {
  always,
  unless_interrupt,         // tval: omitted for interrupts (Format 3 subformat 1)
  unless_implicit_handler,  // trap address: omitted if thaddr and implicit exception mode
};

struct layout_entry {
  field f;
  etrace::presence when = presence::always;
};

inline constexpr unsigned max_layout_fields = 11;

struct layout {
  te_inst_kind kind;
  std::uint8_t size;
  layout_entry fields[max_layout_fields];
};

// The spec tables, in te_inst_kind order.
inline constexpr layout layout_table[te_inst_kind_count] = {
    // Format 3 subformat 0 (start)
    {te_inst_kind::sync_start, 7,
     {{field::format}, {field::sync_subformat}, {field::branch}, {field::privilege},
      {field::time}, {field::context}, {field::address}}},
    // Format 3 subformat 1 (trap)
    {te_inst_kind::sync_trap, 11,
     {{field::format}, {field::sync_subformat}, {field::branch}, {field::privilege},
      {field::time}, {field::context}, {field::ecause}, {field::interrupt}, {field::thaddr},
      {field::address, presence::unless_implicit_handler},
      {field::tval, presence::unless_interrupt}}},
    // Format 3 subformat 2 (context)
    {te_inst_kind::sync_context, 5,
     {{field::format}, {field::sync_subformat}, {field::privilege}, {field::time},
      {field::context}}},
    // Format 3 subformat 3 (support)
    {te_inst_kind::sync_support, 9,
     {{field::format}, {field::sync_subformat}, {field::ienable}, {field::encoder_mode},
      {field::qual_status}, {field::ioptions}, {field::denable}, {field::dloss},
      {field::doptions}}},
    // Format 2 (addr-only)
    {te_inst_kind::addr_only, 6,
     {{field::format}, {field::address}, {field::notify}, {field::updiscon}, {field::irreport},
      {field::irdepth}}},
    // Format 1 (diff-delta), branches 1..31
    {te_inst_kind::diff_delta, 8,
     {{field::format}, {field::branches}, {field::branch_map}, {field::address},
      {field::notify}, {field::updiscon}, {field::irreport}, {field::irdepth}}},
    // Format 1, branches 0: full 31-bit map, no address
    {te_inst_kind::diff_delta_full_map, 3,
     {{field::format}, {field::branches}, {field::branch_map}}},
    // Format 0 subformat 0, branch_fmt 00 (no-addr)
    {te_inst_kind::branch_count, 4,
     {{field::format}, {field::opt_ext_subformat}, {field::branch_count}, {field::branch_fmt}}},
    // Format 0 subformat 0, branch_fmt 10 (addr) / 11 (addr-fail)
    {te_inst_kind::branch_count_address, 9,
     {{field::format}, {field::opt_ext_subformat}, {field::branch_count}, {field::branch_fmt},
      {field::address}, {field::notify}, {field::updiscon}, {field::irreport},
      {field::irdepth}}},
    // Format 0 subformat 1 (jump target cache), branches 1..31
    {te_inst_kind::jump_target_cache, 7,
     {{field::format}, {field::opt_ext_subformat}, {field::index}, {field::branches},
      {field::branch_map}, {field::irreport}, {field::irdepth}}},
    // Format 0 subformat 1, branches 0: no branch map
    {te_inst_kind::jump_target_cache_no_map, 6,
     {{field::format}, {field::opt_ext_subformat}, {field::index}, {field::branches},
      {field::irreport}, {field::irdepth}}},
};

constexpr bool layout_table_in_kind_order() noexcept {
  for (unsigned i = 0; i < te_inst_kind_count; ++i)
    if (static_cast<unsigned>(layout_table[i].kind) != i) return false;
  return true;
}
static_assert(layout_table_in_kind_order());

constexpr const layout& layout_of(te_inst_kind k) noexcept {
  return layout_table[static_cast<unsigned>(k)];
}

// Width of field `f` for packet `p` (the branch map's width depends on p.branches).
constexpr unsigned width_of(field f, const field_widths& w, const te_inst& p) noexcept {
  const field_info& fi = info_of(f);
  switch (fi.source) {
    case width_source::fixed: return fi.fixed_width;
    case width_source::privilege: return w.privilege;
    case width_source::time: return w.time;
    case width_source::context: return w.context;
    case width_source::ecause: return w.ecause;
    case width_source::address: return w.address;
    case width_source::tval: return w.tval;
    case width_source::f0s: return w.f0s;
    case width_source::index: return w.index;
    case width_source::irdepth: return w.irdepth;
    case width_source::encoder_mode: return w.encoder_mode;
    case width_source::ioptions: return w.ioptions;
    case width_source::doptions: return w.doptions;
    case width_source::branch_map: return branch_map_width(p.branches);
  }
  return 0;
}

constexpr bool is_present(const layout_entry& e, const te_inst& p, trace_mode m) noexcept {
  switch (e.when) {
    case presence::always: return true;
    case presence::unless_interrupt: return !p.interrupt;
    case presence::unless_implicit_handler: return !(m.implicit_exception && p.thaddr);
  }
  return true;
}

// A field's value as an unsigned number: the transmitted value for plain fields (the address
// field's value, i.e. the byte address shifted right by iaddress_lsb_p), the flag for
// differential ones, the depth for irdepth.
constexpr std::uint64_t field_value(const te_inst& p, field f, const field_widths& w) noexcept {
  switch (f) {
    case field::format: return static_cast<std::uint64_t>(p.format);
    case field::sync_subformat:
    case field::opt_ext_subformat: return p.subformat;
    case field::branch: return p.branch;
    case field::privilege: return p.privilege;
    case field::time: return p.time;
    case field::context: return p.context;
    case field::ecause: return p.ecause;
    case field::interrupt: return p.interrupt;
    case field::thaddr: return p.thaddr;
    case field::address: return p.address >> w.iaddress_lsb;
    case field::tval: return p.tval;
    case field::ienable: return p.ienable;
    case field::encoder_mode: return p.encoder_mode;
    case field::qual_status: return static_cast<std::uint64_t>(p.qual_status);
    case field::ioptions: return p.ioptions;
    case field::denable: return p.denable;
    case field::dloss: return p.dloss;
    case field::doptions: return p.doptions;
    case field::branches: return p.branches;
    case field::branch_map: return p.branch_map;
    case field::branch_count: return p.branch_count;
    case field::branch_fmt: return static_cast<std::uint64_t>(p.branch_fmt);
    case field::index: return p.index;
    case field::notify: return p.notify;
    case field::updiscon: return p.updiscon;
    case field::irreport: return p.irreport;
    case field::irdepth: return p.irdepth;
  }
  return 0;
}

// Stores a decoded value (already fitting its field) into `p`.
constexpr void set_field(te_inst& p, field f, std::uint64_t v, const field_widths& w) noexcept {
  const auto u8 = [](std::uint64_t x) { return static_cast<std::uint8_t>(x); };
  const auto u32 = [](std::uint64_t x) { return static_cast<std::uint32_t>(x); };
  switch (f) {
    case field::format: p.format = static_cast<etrace::format>(v); return;
    case field::sync_subformat:
    case field::opt_ext_subformat: p.subformat = u8(v); return;
    case field::branch: p.branch = v != 0; return;
    case field::privilege: p.privilege = u8(v); return;
    case field::time: p.time = v; return;
    case field::context: p.context = v; return;
    case field::ecause: p.ecause = v; return;
    case field::interrupt: p.interrupt = v != 0; return;
    case field::thaddr: p.thaddr = v != 0; return;
    case field::address: p.address = v << w.iaddress_lsb; return;
    case field::tval: p.tval = v; return;
    case field::ienable: p.ienable = v != 0; return;
    case field::encoder_mode: p.encoder_mode = u32(v); return;
    case field::qual_status: p.qual_status = static_cast<etrace::qual_status>(v); return;
    case field::ioptions: p.ioptions = v; return;
    case field::denable: p.denable = v != 0; return;
    case field::dloss: p.dloss = v != 0; return;
    case field::doptions: p.doptions = v; return;
    case field::branches: p.branches = u8(v); return;
    case field::branch_map: p.branch_map = u32(v); return;
    case field::branch_count: p.branch_count = u32(v); return;
    case field::branch_fmt: p.branch_fmt = static_cast<etrace::branch_fmt>(v); return;
    case field::index: p.index = u32(v); return;
    case field::notify: p.notify = v != 0; return;
    case field::updiscon: p.updiscon = v != 0; return;
    case field::irreport: p.irreport = v != 0; return;
    case field::irdepth: p.irdepth = u32(v); return;
  }
}

// Whether the parameters enable a layout (format 0 layouts need their optional format).
constexpr bool is_enabled(te_inst_kind k, const field_widths& w) noexcept {
  switch (k) {
    case te_inst_kind::branch_count:
    case te_inst_kind::branch_count_address: return w.branch_prediction;
    case te_inst_kind::jump_target_cache:
    case te_inst_kind::jump_target_cache_no_map: return w.jump_target_cache;
    default: return true;
  }
}

// Largest payload of any enabled layout, in bits (every optional field present, 31-bit maps).
constexpr unsigned max_payload_bits(const field_widths& w) noexcept {
  te_inst widest{};
  widest.branches = 31;
  unsigned best = 0;
  for (const layout& l : layout_table) {
    if (!is_enabled(l.kind, w)) continue;
    unsigned bits = 0;
    for (unsigned i = 0; i < l.size; ++i) bits += width_of(l.fields[i].f, w, widest);
    if (bits > best) best = bits;
  }
  return best;
}

}  // namespace tracecodec::etrace
