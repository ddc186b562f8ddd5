// SPDX-License-Identifier: Apache-2.0
// OpenCSD's ETMv4I packet processor (Debian's libopencsd 1.3.3, C API, as perf and
// bench/opencsd.hpp drive it), collecting every packet with its start index and type, for the
// differential fuzz target. TRCIDR1 = 0x4100fff0 (TRCARCHMAJ 0xF) makes the ETMv4 processor
// accept the ETE-only headers (source address, TS marker, transactions).
#pragma once

#include <opencsd/c_api/opencsd_c_api.h>

#include <tracecodec/ete/packet/config.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fuzz {

struct ocsd_packet {
  std::uint64_t index = 0;  // index_sop: offset of the packet's first byte
  ocsd_etmv4_i_pkt_type type = ETM4_PKT_I_NOTSYNC;
  ocsd_etmv4_i_pkt_type err_type = ETM4_PKT_I_NOTSYNC;  // for error packets: the header's type
  std::uint8_t err_hdr = 0;
  std::uint32_t except_type = 0;
  std::string text;  // ocsd_pkt_str, only when asked for
};

struct ocsd_run {
  std::vector<ocsd_packet> packets;
  bool ok = false;  // all input consumed, no fatal response
};

namespace ocsd_detail {
struct ocsd_sink {
  ocsd_run* run;
  bool text;
};
inline ocsd_datapath_resp_t collect_packet(const void* ctx, const ocsd_datapath_op_t op,
                                           const ocsd_trc_index_t index, const void* pkt) {
  const auto* s = static_cast<const ocsd_sink*>(ctx);
  if (op == OCSD_OP_DATA && pkt) {
    const auto* p = static_cast<const ocsd_etmv4_i_pkt*>(pkt);
    ocsd_packet o;
    o.index = index;
    o.type = p->type;
    o.err_type = p->err_type;
    o.err_hdr = p->err_hdr_val;
    o.except_type = p->exception_info.exceptionType;
    if (s->text) {
      char buf[512];
      if (ocsd_pkt_str(OCSD_PROTOCOL_ETMV4I, pkt, buf, sizeof buf) == OCSD_OK) o.text = buf;
    }
    s->run->packets.push_back(std::move(o));
  }
  return OCSD_RESP_CONT;
}
}  // namespace ocsd_detail

inline ocsd_run opencsd_packets(const tracecodec::ete::registers& regs, const std::uint8_t* data,
                                std::size_t size, bool text = false) {
  ocsd_run r;
  ocsd_detail::ocsd_sink sink{&r, text};
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
  if (ocsd_dt_create_decoder(tree, OCSD_BUILTIN_DCD_ETMV4I, OCSD_CREATE_FLG_PACKET_PROC, &cfg,
                             &csid) != OCSD_OK ||
      ocsd_dt_attach_packet_callback(tree, csid, OCSD_C_API_CB_PKT_SINK,
                                     reinterpret_cast<void*>(&ocsd_detail::collect_packet),
                                     &sink) != OCSD_OK) {
    ocsd_destroy_dcd_tree(tree);
    return r;
  }
  std::size_t at = 0;
  ocsd_datapath_resp_t resp = OCSD_RESP_CONT;
  while (at < size && !OCSD_DATA_RESP_IS_FATAL(resp)) {
    std::uint32_t used = 0;
    resp = ocsd_dt_process_data(tree, OCSD_OP_DATA, static_cast<ocsd_trc_index_t>(at),
                                static_cast<std::uint32_t>(size - at), data + at, &used);
    at += used;
    if (used == 0 && OCSD_DATA_RESP_IS_CONT(resp)) break;
  }
  ocsd_dt_process_data(tree, OCSD_OP_EOT, 0, 0, nullptr, nullptr);
  ocsd_destroy_dcd_tree(tree);
  r.ok = at == size && !OCSD_DATA_RESP_IS_FATAL(resp);
  return r;
}

}  // namespace fuzz
