// SPDX-License-Identifier: Apache-2.0
// The comparator: OpenCSD's packet processor through its C API, as perf drives it
// (ocsd_create_dcd_tree, ocsd_dt_create_decoder with OCSD_CREATE_FLG_PACKET_PROC, a packet-sink
// callback). Debian's OpenCSD 1.3.3 C API has no ETE packet sink, so this uses the ETMv4I
// packet processor, the code OpenCSD also runs for ETE packets.
#pragma once

#include <opencsd/c_api/opencsd_c_api.h>

#include <tracecodec/ete/packet/config.hpp>

#include <cstddef>
#include <cstdint>

namespace bench {

struct opencsd_result {
  std::uint64_t packets = 0;
  std::uint64_t bad = 0;  // packets OpenCSD flagged as errors
  bool ok = false;
};

namespace detail {
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
  std::size_t at = 0;
  ocsd_datapath_resp_t resp = OCSD_RESP_CONT;
  while (at < size && !OCSD_DATA_RESP_IS_FATAL(resp)) {
    std::uint32_t used = 0;
    const std::uint32_t chunk = static_cast<std::uint32_t>(size - at > (1u << 30) ? (1u << 30) : size - at);
    resp = ocsd_dt_process_data(tree, OCSD_OP_DATA, at, chunk, data + at, &used);
    at += used;
    if (used == 0 && OCSD_DATA_RESP_IS_CONT(resp)) break;
  }
  ocsd_dt_process_data(tree, OCSD_OP_EOT, 0, 0, nullptr, nullptr);
  ocsd_destroy_dcd_tree(tree);
  r.ok = at == size && !OCSD_DATA_RESP_IS_FATAL(resp);
  return r;
}

}  // namespace bench
