// SPDX-License-Identifier: Apache-2.0
// The comparators: OpenCSD's packet processor through its C API, as perf drives it
// (ocsd_create_dcd_tree, ocsd_dt_create_decoder with OCSD_CREATE_FLG_PACKET_PROC, a packet-sink
// callback). Debian's OpenCSD 1.3.3 C API has no ETE packet sink, so this uses the ETMv4I
// packet processor, the code OpenCSD also runs for ETE packets. And OpenCSD's full decode
// (program flow through a memory image, ETE decoder) with a generic-element callback.
#pragma once

#include <opencsd/c_api/opencsd_c_api.h>

#include <tracecodec/arm/instruction.hpp>
#include <tracecodec/ete/flow/image.hpp>
#include <tracecodec/ete/packet/config.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>

namespace bench {

struct opencsd_result {
  std::uint64_t packets = 0;
  std::uint64_t bad = 0;  // packets OpenCSD flagged as errors
  bool ok = false;
};

namespace detail {
// Feeds all of data to a decode tree (in chunks of at most 1 GiB, as the C API takes 32-bit
// sizes), then end-of-trace, and destroys the tree. Whether OpenCSD took every byte.
inline bool feed_tree(dcd_tree_handle_t tree, const std::uint8_t* data, std::size_t size) {
  std::size_t at = 0;
  ocsd_datapath_resp_t resp = OCSD_RESP_CONT;
  while (at < size && !OCSD_DATA_RESP_IS_FATAL(resp)) {
    std::uint32_t used = 0;
    const std::uint32_t chunk = static_cast<std::uint32_t>(size - at > (1u << 30) ? (1u << 30) : size - at);
    if (OCSD_DATA_RESP_IS_WAIT(resp))  // no callback here waits, but a flush is the protocol
      resp = ocsd_dt_process_data(tree, OCSD_OP_FLUSH, 0, 0, nullptr, nullptr);
    else
      resp = ocsd_dt_process_data(tree, OCSD_OP_DATA, at, chunk, data + at, &used);
    at += used;
    if (used == 0 && OCSD_DATA_RESP_IS_CONT(resp)) break;
  }
  ocsd_dt_process_data(tree, OCSD_OP_EOT, 0, 0, nullptr, nullptr);
  ocsd_destroy_dcd_tree(tree);
  return at == size && !OCSD_DATA_RESP_IS_FATAL(resp);
}

inline ocsd_datapath_resp_t count_packet(const void* ctx, const ocsd_datapath_op_t op,
                                         const ocsd_trc_index_t, const void* pkt) {
  auto* r = static_cast<opencsd_result*>(const_cast<void*>(ctx));
  if (op == OCSD_OP_DATA) {
    ++r->packets;
    const auto* p = static_cast<const ocsd_etmv4_i_pkt*>(pkt);
    if (p->type == ETM4_PKT_I_BAD_SEQUENCE || p->type == ETM4_PKT_I_BAD_TRACEMODE ||
        p->type == ETM4_PKT_I_RESERVED)
      ++r->bad;
  }
  return OCSD_RESP_CONT;
}
}  // namespace detail

// Decodes a buffer into packets with OpenCSD and counts them.
inline opencsd_result opencsd_packets(const tracecodec::ete::registers& regs, const std::uint8_t* data,
                                      std::size_t size) {
  opencsd_result r;
  dcd_tree_handle_t tree = ocsd_create_dcd_tree(OCSD_TRC_SRC_SINGLE, 0);
  if (tree == C_API_INVALID_TREE_HANDLE) return r;
  ocsd_etmv4_cfg cfg{};
  cfg.reg_idr0 = regs.trcidr0;
  cfg.reg_idr1 = regs.trcidr1 ? regs.trcidr1 : 0x4100fff0;
  cfg.reg_idr2 = regs.trcidr2;
  cfg.reg_idr8 = regs.trcidr8;
  cfg.reg_configr = regs.trcconfigr;
  cfg.reg_traceidr = 0x1;
  cfg.arch_ver = ARCH_V8;
  cfg.core_prof = profile_CortexA;
  unsigned char csid = 0;
  if (ocsd_dt_create_decoder(tree, OCSD_BUILTIN_DCD_ETMV4I, OCSD_CREATE_FLG_PACKET_PROC, &cfg, &csid) !=
          OCSD_OK ||
      ocsd_dt_attach_packet_callback(tree, csid, OCSD_C_API_CB_PKT_SINK,
                                     reinterpret_cast<void*>(&detail::count_packet), &r) != OCSD_OK) {
    ocsd_destroy_dcd_tree(tree);
    return r;
  }
  const bool ok = detail::feed_tree(tree, data, size);
  r.ok = ok;
  return r;
}

struct opencsd_flow_result {
  std::uint64_t elements = 0;      // generic trace elements, every kind
  std::uint64_t ranges = 0;        // OCSD_GEN_TRC_ELEM_INSTR_RANGE
  std::uint64_t instructions = 0;  // their num_instr_range, summed
  std::uint64_t nacc = 0;          // OCSD_GEN_TRC_ELEM_ADDR_NACC: no memory at the address
  std::uint64_t regions_skipped = 0;  // regions OpenCSD would not take (see opencsd_flow)
  bool ok = false;                 // every byte consumed without a fatal response
};

namespace detail {
inline ocsd_datapath_resp_t count_element(const void* ctx, const ocsd_trc_index_t, const uint8_t,
                                          const ocsd_generic_trace_elem* e) {
  auto* r = static_cast<opencsd_flow_result*>(const_cast<void*>(ctx));
  ++r->elements;
  if (e->elem_type == OCSD_GEN_TRC_ELEM_INSTR_RANGE) {
    ++r->ranges;
    r->instructions += e->num_instr_range;
  } else if (e->elem_type == OCSD_GEN_TRC_ELEM_ADDR_NACC) {
    ++r->nacc;
  }
  return OCSD_RESP_CONT;
}

// OpenCSD's architecture classes: v7, v8 (v8.0-v8.2), v8.3, and AA64 (v8.3 and later
// features), as its snapshot reader picks them from the core name.
inline ocsd_arch_version_t opencsd_arch(tracecodec::arm::arch_version a) {
  using tracecodec::arm::arch_version;
  if (a == arch_version::v7) return ARCH_V7;
  if (a < arch_version::v8_3) return ARCH_V8;
  if (a == arch_version::v8_3) return ARCH_V8r3;
  return ARCH_AA64;
}
}  // namespace detail

// OpenCSD's full decode of one ETE trace buffer: the ETE decoder configured from the
// registers (TRCIDR0/1/2/8, TRCDEVARCH, TRCCONFIGR, TRCTRACEIDR), the core's architecture
// class from `arch` (A profile), and each region as a buffer memory accessor in its space.
// OpenCSD 1.3.3 knows the Secure and Non-secure spaces only: a region that is Realm or Root
// only is left out (regions_skipped), as is one OpenCSD refuses (an overlap in the same
// space). Counts the generic elements, instruction ranges and instructions.
inline opencsd_flow_result opencsd_flow(const tracecodec::ete::registers& regs, std::uint32_t trctraceidr,
                                        tracecodec::arm::arch_version arch,
                                        const tracecodec::ete::memory_region* regions,
                                        std::size_t region_count, const std::uint8_t* data,
                                        std::size_t size) {
  opencsd_flow_result r;
  dcd_tree_handle_t tree = ocsd_create_dcd_tree(OCSD_TRC_SRC_SINGLE, 0);
  if (tree == C_API_INVALID_TREE_HANDLE) return r;
  ocsd_ete_cfg cfg{};
  cfg.reg_idr0 = regs.trcidr0;
  cfg.reg_idr1 = regs.trcidr1 ? regs.trcidr1 : 0x4100f403;  // OpenCSD's snapshot default
  cfg.reg_idr2 = regs.trcidr2;
  cfg.reg_idr8 = regs.trcidr8;
  cfg.reg_devarch = regs.trcdevarch;
  cfg.reg_configr = regs.trcconfigr;
  cfg.reg_traceidr = trctraceidr;
  cfg.arch_ver = detail::opencsd_arch(arch);
  cfg.core_prof = profile_CortexA;
  unsigned char csid = 0;
  if (ocsd_dt_create_decoder(tree, OCSD_BUILTIN_DCD_ETE, OCSD_CREATE_FLG_FULL_DECODER, &cfg, &csid) != OCSD_OK ||
      ocsd_dt_set_gen_elem_outfn(tree, &detail::count_element, &r) != OCSD_OK) {
    ocsd_destroy_dcd_tree(tree);
    return r;
  }
  for (std::size_t i = 0; i < region_count; ++i) {
    const tracecodec::ete::memory_region& m = regions[i];
    const std::uint8_t bits = m.space & 0x1f;  // the spaces OpenCSD 1.3.3 has, same bits
    const ocsd_mem_space_acc_t space = m.space == tracecodec::ete::memory_space::any
                                           ? OCSD_MEM_SPACE_ANY
                                           : static_cast<ocsd_mem_space_acc_t>(bits);
    if (bits == 0 || m.size == 0 || m.size > UINT32_MAX ||
        ocsd_dt_add_buffer_mem_acc(tree, m.address, space, m.data, static_cast<std::uint32_t>(m.size)) != OCSD_OK)
      ++r.regions_skipped;
  }
  const bool ok = detail::feed_tree(tree, data, size);
  r.ok = ok;
  return r;
}

// OpenCSD's frame deformatter through the C API: a decode tree for CoreSight formatted,
// memory-aligned frames (OCSD_TRC_SRC_FRAME_FORMATTED, OCSD_DFRMTR_FRAME_MEM_ALIGN) with no
// decoder attached: every frame is unpacked and its data dropped, since no source takes it.
// Returns whether OpenCSD accepted all the bytes.
inline bool opencsd_deformat(const std::uint8_t* data, std::size_t size) {
  dcd_tree_handle_t tree = ocsd_create_dcd_tree(OCSD_TRC_SRC_FRAME_FORMATTED, OCSD_DFRMTR_FRAME_MEM_ALIGN);
  if (tree == C_API_INVALID_TREE_HANDLE) return false;
  const bool ok = detail::feed_tree(tree, data, size);
  return ok;
}

// The same with each trace ID's bytes delivered, as a user's decoders take them: a decoder of
// OpenCSD's custom-decoder C API (ocsd_register_custom_decoder) on every valid trace ID
// (0x01-0x6F), whose data-in callback gives each block to the consumer `Sink`
// (`void add(std::uint8_t id, const std::uint8_t*, std::size_t)`, e.g. id_sums). This is the
// work BM_coresight_deformat does; without decoders OpenCSD unpacks each frame and drops its
// data (outputFrame() skips an ID with nothing attached). Returns whether OpenCSD accepted all
// the bytes and made every decoder.
namespace detail {
inline int sink_serial = 0;
}
template <class Sink>
bool opencsd_deformat_into(const std::uint8_t* data, std::size_t size, Sink& sink) {
  struct stream {
    Sink* sink;
    std::uint8_t id;
  };
  struct factory {
    static ocsd_datapath_resp_t data_in(const void* handle, const ocsd_datapath_op_t op, const ocsd_trc_index_t,
                                        const uint32_t n, const uint8_t* p, uint32_t* used) {
      const stream* s = static_cast<const stream*>(handle);
      if (op == OCSD_OP_DATA) {
        s->sink->add(s->id, p, n);
        *used = n;
      }
      return OCSD_RESP_CONT;
    }
    static void pkt_mon(const void*, const int) {}
    static ocsd_err_t create(const int, const void* cfg, const ocsd_extern_dcd_cb_fns*, ocsd_extern_dcd_inst_t* inst) {
      const stream* s = static_cast<const stream*>(cfg);
      inst->fn_data_in = &data_in;
      inst->fn_update_pkt_mon = &pkt_mon;
      inst->decoder_handle = const_cast<stream*>(s);
      inst->p_decoder_name = const_cast<char*>("tracecodec-bench-sink");
      inst->cs_id = s->id;
      return OCSD_OK;
    }
    static ocsd_err_t destroy(const void*) { return OCSD_OK; }
    static ocsd_err_t csid(const void* cfg, unsigned char* id) {
      *id = static_cast<const stream*>(cfg)->id;
      return OCSD_OK;
    }
  };
  // Registered once per Sink type (the library keeps the factory by name for the process).
  static ocsd_extern_dcd_fact_t fact{&factory::create, &factory::destroy, &factory::csid, nullptr, {}};
  static const char* const name = [] {
    static char n[48];  // a name per Sink type: a name is registered once
    std::snprintf(n, sizeof n, "tracecodec-bench-sink-%d", detail::sink_serial++);
    return ocsd_register_custom_decoder(n, &fact) == OCSD_OK ? n : nullptr;
  }();
  if (name == nullptr) return false;
  dcd_tree_handle_t tree = ocsd_create_dcd_tree(OCSD_TRC_SRC_FRAME_FORMATTED, OCSD_DFRMTR_FRAME_MEM_ALIGN);
  if (tree == C_API_INVALID_TREE_HANDLE) return false;
  stream streams[0x70];
  for (std::uint8_t id = 1; id < 0x70; ++id) {
    streams[id] = {&sink, id};
    unsigned char made = 0;
    if (ocsd_dt_create_decoder(tree, name, OCSD_CREATE_FLG_FULL_DECODER, &streams[id], &made) != OCSD_OK ||
        made != id) {
      ocsd_destroy_dcd_tree(tree);
      return false;
    }
  }
  return detail::feed_tree(tree, data, size);
}

}  // namespace bench
