// SPDX-License-Identifier: Apache-2.0
// Program-flow elements as text, JSON Lines and OpenCSD 1.8.0's trc_pkt_lister -decode lines.
//
// JSON keys (every record: "session", "offset", "element"):
//   instr_range      "start","end" (exclusive),"count","isa" ("A64","A32","T32"),"last"
//                    (other, branch, indirect_branch, isb, wfx, tstart),"link","return",
//                    "exception_return","cond","taken","last_size"
//   range_nopath     "start","end" (the address after it, 0 if none was traced),"count"
//                    (null: a Q element without a count),"isa"
//   exception        "exception_type","exception_name","return_address" (null: UNKNOWN)
//   context          "context" (as the element keys),"isa"
//   addr_nacc        "address","memory_space" (memory_space bits looked in)
//   trace_on, no_sync "reason"
//   timestamp        "timestamp", and "cycle_count" when it carries one
//   cycle_count      "cycle_count" (null: UNKNOWN)
//   event            "event"
//   instrumentation  "el","payload"
//   exception_return, end_of_trace, timestamp_marker, transaction_start, transaction_commit,
//   transaction_failure: no further keys.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "../../ete/flow/element.hpp"
#include "../../ete/flow/image.hpp"
#include "../../ete/packet/config.hpp"
#include "format.hpp"

namespace tracecodec::ete {

// The name of exception TYPE `type` under configuration `c`: ETE's names (D5.13), or ETMv4's
// for the A profile (TYPE 0-15) and the M profile (TYPE 0-31 and IRQ<n> at 0x208-0x3EF, IHI0064
// 6.4.13), as OpenCSD 1.8.0 names them in its packet listing.
inline std::string exception_name(unsigned type, const config& c) {
  if (!c.etmv4()) return exception_type_name(type);
  if (c.profile == pe_profile::m) {
    constexpr const char* m[32] = {
        "Reserved",    "PE Reset",    "NMI",          "HardFault", "MemManage",   "BusFault",
        "UsageFault",  "Reserved",    "Reserved",     "Reserved",  "Reserved",    "SVC",
        "DebugMonitor", "Reserved",   "PendSV",       "SysTick",   "IRQ0",        "IRQ1",
        "IRQ2",        "IRQ3",        "IRQ4",         "IRQ5",      "IRQ6",        "IRQ7",
        "DebugHalt",   "LazyFP Push", "Lockup",       "Reserved",  "Reserved",    "Reserved",
        "Reserved",    "Reserved"};
    if (type < 32) return m[type];
    if (type >= 0x208 && type <= 0x3ef) return "IRQ" + std::to_string(type - 0x200);
    return "Reserved";
  }
  constexpr const char* a[16] = {"PE Reset",  "Debug Halt", "Call",       "Trap",
                                 "System Error", "Reserved", "Inst Debug", "Data Debug",
                                 "Reserved",  "Reserved",   "Alignment",  "Inst Fault",
                                 "Data Fault", "Reserved",  "IRQ",        "FIQ"};
  return type < 16 ? a[type] : "Reserved";
}

namespace format_detail {

inline const char* set_name(arm::instruction_set s) {
  return s == arm::instruction_set::a64 ? "A64" : s == arm::instruction_set::a32 ? "A32" : "T32";
}
inline const char* type_name(arm::instruction_type t) {
  constexpr const char* names[] = {"other", "branch", "indirect_branch", "isb", "wfx", "tstart"};
  return names[static_cast<unsigned>(t)];
}

template <class V>
void visit_fields(const flow_element& f, V& v, const config& c) {
  using K = flow_kind;
  switch (f.kind) {
    case K::instruction_range:
      v.field("start", hex_value{f.address, 1});
      v.field("end", hex_value{f.end, 1});
      v.field("count", f.count);
      v.field("isa", set_name(f.isa));
      v.field("last", type_name(f.last_type));
      v.field("link", f.last_subtype == arm::instruction_subtype::link);
      v.field("return", f.last_subtype == arm::instruction_subtype::ret ||
                            f.last_subtype == arm::instruction_subtype::implied_ret);
      v.field("exception_return", f.last_subtype == arm::instruction_subtype::eret);
      v.field("cond", f.conditional);
      v.field("taken", f.taken);
      v.field("last_size", f.last_size);
      break;
    case K::range_without_path:
      v.field("start", hex_value{f.address, 1});
      v.field("end", hex_value{f.end, 1});
      v.field("count", maybe_value{f.count, !f.is(flow_flag::count_unknown), "null"});
      v.field("isa", set_name(f.isa));
      break;
    case K::exception:
      v.field("exception_type", f.number);
      v.field("exception_name", exception_name(f.number, c));
      if (f.is(flow_flag::unknown_address))
        v.field("return_address", nullptr);
      else
        v.field("return_address", hex_value{f.address, 1});
      break;
    case K::context:
      visit_context(f.ctx, v);
      v.field("isa", set_name(f.isa));
      break;
    case K::address_not_accessible:
      v.field("address", hex_value{f.address, 1});
      v.field("memory_space", hex_value{f.space, 2});
      break;
    case K::trace_on:
    case K::no_sync: v.field("reason", sync_reason_name(f.reason)); break;
    case K::timestamp:
      v.field("timestamp", f.timestamp);
      if (f.is(flow_flag::has_cycles)) v.field("cycle_count", f.count);
      break;
    case K::cycle_count:
      v.field("cycle_count", maybe_value{f.count, !f.is(flow_flag::cycles_unknown), "null"});
      break;
    case K::event: v.field("event", f.number); break;
    case K::instrumentation:
      v.field("el", f.number);
      v.field("payload", hex_value{f.address, 16});
      break;
    default: break;
  }
}

inline void append_hex_plain(std::string& s, std::uint64_t v) { append_hex(s, v, 1); }

}  // namespace format_detail

// `c`: the configuration the trace was decoded with (it names the exceptions: ETE or ETMv4,
// A or M profile); ETE's by default. trace_id >= 0: a source of a formatted buffer ("id").
inline std::string format_json(const flow_element& f, std::size_t session, const config& c = {},
                               int trace_id = -1) {
  using namespace format_detail;
  std::string s = json_head(session, f.offset, trace_id);
  s += ",\"element\":";
  json_value(s, flow_name(f.kind));
  return json_form(std::move(s), [&f, &c](auto& v) { visit_fields(f, v, c); });
}

// "Idx:<offset>; <element>: key=value ..."
inline std::string format_text(const flow_element& f, const config& c = {}, int trace_id = -1) {
  using namespace format_detail;
  return text_form(text_head(f.offset, trace_id) + flow_name(f.kind),
                   [&f, &c](auto& v) { visit_fields(f, v, c); });
}

// OpenCSD's name of a memory space (its ocsd_mem_space_acc_t), as ADDR_NACC prints it.
inline const char* opencsd_space_name(std::uint8_t space) noexcept {
  namespace ms = memory_space;
  switch (space) {
    case ms::el1s: return "EL1S";
    case ms::el1n: return "EL1N";
    case ms::el2n: return "EL2N";
    case ms::el3: return "EL3";
    case ms::el2s: return "EL2S";
    case ms::el1r: return "EL1R";
    case ms::el2r: return "EL2R";
    case ms::root: return "Root";
    case ms::secure: return "Any S";
    case ms::non_secure: return "Any NS";
    case ms::realm: return "Any R";
    case ms::any: return "Any";
    default: return "";
  }
}

// The line OpenCSD 1.8.0's trc_pkt_lister -decode prints for the element (its generic trace
// element's toString), e.g.
//   Idx:21; ID:0; OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0xa10b8:[0xa10bc] num_i(1) last_sz(4) (ISA=A64) E iBR A64:ret )
// Events: OpenCSD prints one element per Event packet with the packet's event bits; pass the
// bits of the events sharing the offset as `event_bits` (0: this element's own bit).
struct opencsd_style {
  unsigned trace_id = 0;  // TRCTRACEIDR
  bool vmid = false;      // TRCCONFIGR.VMID: contexts show VMID=
  bool cid = false;       // TRCCONFIGR.CID: contexts show CTXTID=
  static constexpr opencsd_style of(const config& c, unsigned trace_id) noexcept {
    return {trace_id, c.vmid, c.cid};
  }
};

inline std::string format_opencsd(const flow_element& f, const opencsd_style& style,
                                  unsigned event_bits = 0) {
  using namespace format_detail;
  using K = flow_kind;
  std::string s = "Idx:";
  if (f.offset == offset_not_known) s += '?';  // a decode tree's source with no byte
  else append_decimal(s, f.offset);
  s += "; ID:";
  {
    char b[8];
    std::snprintf(b, sizeof b, "%x", style.trace_id);
    s += b;
  }
  s += "; ";
  auto range_tail = [&] {
    s += "last_sz(";
    append_decimal(s, f.last_size);
    s += ") (ISA=";
    s += set_name(f.isa);
    s += ") ";
    s += f.taken ? "E " : "N ";
    constexpr const char* types[] = {"--- ", "BR  ", "iBR ", "ISB ", "WFI.WFE", "TSTART"};
    constexpr const char* subtypes[] = {"", "b+link ", "A64:ret ", "A64:eret ", "V7:impl ret"};
    s += types[static_cast<unsigned>(f.last_type)];
    s += subtypes[static_cast<unsigned>(f.last_subtype)];
    if (f.conditional) s += " <cond>";
  };
  switch (f.kind) {
    case K::instruction_range:
      s += "OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=";
      append_hex_plain(s, f.address);
      s += ":[";
      append_hex_plain(s, f.end);
      s += "] num_i(";
      append_decimal(s, f.count);
      s += ") ";
      range_tail();
      s += ")";
      break;
    case K::range_without_path:
      s += "OCSD_GEN_TRC_ELEM_I_RANGE_NOPATH(first ";
      append_hex_plain(s, f.address);
      s += ":[next ";
      append_hex_plain(s, f.end);
      s += "] num_i(";
      append_decimal(s, f.count);
      s += ") )";
      break;
    case K::exception:
      s += "OCSD_GEN_TRC_ELEM_EXCEPTION(";
      if (!f.is(flow_flag::unknown_address)) {
        s += "pref ret addr:";
        append_hex_plain(s, f.address);
        if (f.is(flow_flag::return_is_target)) s += " [addr also prev br tgt]";
        s += "; ";
      }
      s += "excep num (";
      append_hex(s, f.number, 2);
      s += ") )";
      break;
    case K::exception_return: s += "OCSD_GEN_TRC_ELEM_EXCEPTION_RET()"; break;
    case K::context: {
      s += "OCSD_GEN_TRC_ELEM_PE_CONTEXT((ISA=";
      s += set_name(f.isa);
      s += ") EL";
      append_decimal(s, f.ctx.el);
      s += f.ctx.nse ? (f.ctx.ns ? "Realm" : "Root") : (f.ctx.ns ? "N" : "S");
      s += f.ctx.sf ? "; 64-bit; " : "; 32-bit; ";
      // Shown when enabled, or once traced (OpenCSD shows what the packets carried: the
      // snapshots' TRCCONFIGR does not always say what the trace holds).
      if (style.vmid || f.is(flow_flag::vmid_known)) {
        s += "VMID=";
        append_hex_plain(s, f.ctx.vmid);
        s += "; ";
      }
      if (style.cid || f.is(flow_flag::context_id_known)) {
        s += "CTXTID=";
        append_hex_plain(s, f.ctx.context_id);
        s += "; ";
      }
      s += ")";
      break;
    }
    case K::address_not_accessible:
      s += "OCSD_GEN_TRC_ELEM_ADDR_NACC( 0x";
      {
        char b[64];
        std::snprintf(b, sizeof b, "%llx; Memspace [0x%x:", static_cast<unsigned long long>(f.address),
                      static_cast<unsigned>(f.space));
        s += b;
      }
      s += opencsd_space_name(f.space);
      s += "] )";
      break;
    case K::trace_on:
      s += f.reason == sync_reason::overflow ? "OCSD_GEN_TRC_ELEM_TRACE_ON( [overflow])"
                                             : "OCSD_GEN_TRC_ELEM_TRACE_ON( [begin or filter])";
      break;
    case K::no_sync: {
      constexpr const char* reasons[] = {"init-decoder", "reset-decoder", "discard", "overflow",
                                         "bad-packet", "bad-packet", "begin or filter"};
      s += "OCSD_GEN_TRC_ELEM_NO_SYNC( [";
      s += reasons[static_cast<unsigned>(f.reason)];
      s += "])";
      break;
    }
    case K::end_of_trace: s += "OCSD_GEN_TRC_ELEM_EO_TRACE( [end-of-trace])"; break;
    case K::transaction_start: s += "OCSD_GEN_TRC_ELEM_MEMTRANS(Start)"; break;
    case K::transaction_commit: s += "OCSD_GEN_TRC_ELEM_MEMTRANS(Commit)"; break;
    case K::transaction_failure: s += "OCSD_GEN_TRC_ELEM_MEMTRANS(Fail)"; break;
    case K::timestamp: {
      s += "OCSD_GEN_TRC_ELEM_TIMESTAMP( [ TS=";
      char b[32];
      std::snprintf(b, sizeof b, "0x%012llx", static_cast<unsigned long long>(f.timestamp));
      s += b;
      s += "]; ";
      if (f.is(flow_flag::has_cycles)) {
        s += "[CC=";
        append_decimal(s, f.count);
        s += "]; ";
      }
      s += ")";
      break;
    }
    case K::cycle_count:
      s += "OCSD_GEN_TRC_ELEM_CYCLE_COUNT( [CC=";
      append_decimal(s, f.count);
      s += "]; )";
      break;
    case K::event:
      s += "OCSD_GEN_TRC_ELEM_EVENT( Numbered:";
      append_decimal(s, event_bits ? event_bits : 1u << f.number);
      s += "; )";
      break;
    case K::timestamp_marker: s += "OCSD_GEN_TRC_ELEM_SYNC_MARKER( [Timestamp marker(0x00000000)])"; break;
    case K::instrumentation:
      s += "OCSD_GEN_TRC_ELEM_INSTRUMENTATION( [el=";
      append_decimal(s, f.number);
      s += "; payload=";
      append_hex_plain(s, f.address);
      s += "])";
      break;
  }
  return s;
}

}  // namespace tracecodec::ete
