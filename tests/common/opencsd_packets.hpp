// SPDX-License-Identifier: Apache-2.0
// OpenCSD 1.8.0 packet listings (expected/<name>.packets.txt of the conformance corpora):
// parsing, and checks of a decoded packet against its listed line (kind, values). Shared by
// the ETE and ETMv4 conformance tests.
#pragma once

#include <doctest/doctest.h>

#include <tracecodec/ete/packet/decoder.hpp>
#include <tracecodec/host/ete/format.hpp>  // kind_name

#include <cctype>
#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace test {
using namespace tracecodec::ete;

struct listed {
  std::uint64_t offset = 0;
  std::vector<std::uint8_t> bytes;
  std::string name;       // OpenCSD packet name, e.g. I_ADDR_S_IS0
  std::string text;       // everything after the name
  std::string addr_name;  // for a merged exception: the address packet's name
  int id = -1;            // trace ID
  bool error = false;     // OpenCSD printed an error in front of it
};

// One packet line of OpenCSD's listing: "Idx:<n>; ID:<hex>; [<bytes>];\t<NAME> : <text>". A
// line may start with an error message ("PKTP_ETMV4I_0001 : ... Idx:13708; ..."): `error`.
inline bool parse_packet_line(const std::string& line, listed& l) {
  const auto at = line.find("Idx:");
  if (at == std::string::npos) return false;
  const auto lb = line.find('[', at), rb = line.find(']', at);
  if (lb == std::string::npos || rb == std::string::npos) return false;
  l = listed{};
  l.error = at != 0;
  l.offset = std::stoull(line.substr(at + 4));
  if (const auto id = line.find("; ID:", at); id != std::string::npos && id < lb)
    l.id = static_cast<int>(std::stol(line.substr(id + 5), nullptr, 16));
  std::istringstream hex(line.substr(lb + 1, rb - lb - 1));
  std::string tok;
  while (hex >> tok) l.bytes.push_back(static_cast<std::uint8_t>(std::stoul(tok, nullptr, 16)));
  const auto tab = line.find('\t', rb);
  if (tab == std::string::npos) return false;
  const std::string rest = line.substr(tab + 1);
  const auto sp = rest.find(' ');
  l.name = rest.substr(0, sp);
  l.text = sp == std::string::npos ? "" : rest.substr(sp);
  return true;
}

// OpenCSD lists an Exception and the address packet after it as two lines; the spec makes
// them one packet (D5.13). Merges each I_EXCEPT with the packet that follows it.
inline void merge_exceptions(std::vector<listed>& v) {
  std::vector<listed> out;
  for (listed& l : v) {
    if (!out.empty() && out.back().name == "I_EXCEPT" && out.back().addr_name.empty()) {
      listed& ex = out.back();
      ex.bytes.insert(ex.bytes.end(), l.bytes.begin(), l.bytes.end());
      ex.addr_name = l.name;
      ex.text += " |" + l.text;
      continue;
    }
    out.push_back(std::move(l));
  }
  v = std::move(out);
}

// Parses expected/<name>.packets.txt into one packet list per session (I_NOT_SYNC chunks,
// bytes before the first A-Sync, are left out), exceptions not yet merged.
inline std::vector<std::vector<listed>> parse_listing_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::vector<listed>> sessions;
  std::string line;
  bool multi = false;
  while (std::getline(in, line)) {
    if (line.rfind("####### Multi Session decode: Buffer", 0) == 0) {
      multi = true;
      sessions.emplace_back();
      continue;
    }
    listed l;
    if (!parse_packet_line(line, l) || l.name == "I_NOT_SYNC") continue;
    if (!multi && sessions.empty()) sessions.emplace_back();
    sessions.back().push_back(std::move(l));
  }
  return sessions;
}

// The same, each session's exceptions merged with their addresses (one trace ID per session).
inline std::vector<std::vector<listed>> parse_listing(const std::string& path) {
  auto sessions = parse_listing_lines(path);
  for (auto& s : sessions) merge_exceptions(s);
  return sessions;
}

inline std::optional<std::uint64_t> hex_after(const std::string& s, const std::string& key) {
  const auto at = s.find(key);
  if (at == std::string::npos) return std::nullopt;
  return std::stoull(s.substr(at + key.size()), nullptr, 16);
}
inline std::optional<std::uint64_t> dec_after(const std::string& s, const std::string& key) {
  const auto at = s.find(key);
  if (at == std::string::npos) return std::nullopt;
  return std::stoull(s.substr(at + key.size()), nullptr, 10);
}

inline bool starts(const char* s, const char* prefix) { return std::string(s).rfind(prefix, 0) == 0; }

// Which of our kinds each OpenCSD packet name may be (OpenCSD folds some formats together).
inline bool kind_matches(const listed& l, packet_kind k) {
  const char* n = kind_name(k);
  static const std::map<std::string, std::string> address_forms = {
      {"I_ADDR_MATCH", "exact"},          {"I_ADDR_S_IS0", "short_is0"},
      {"I_ADDR_S_IS1", "short_is1"},      {"I_ADDR_L_32IS0", "32_is0"},
      {"I_ADDR_L_32IS1", "32_is1"},       {"I_ADDR_L_64IS0", "64_is0"},
      {"I_ADDR_L_64IS1", "64_is1"},       {"I_ADDR_CTXT_L_32IS0", "ctx_32_is0"},
      {"I_ADDR_CTXT_L_32IS1", "ctx_32_is1"}, {"I_ADDR_CTXT_L_64IS0", "ctx_64_is0"},
      {"I_ADDR_CTXT_L_64IS1", "ctx_64_is1"}};
  if (l.name == "I_EXCEPT") {
    const auto f = address_forms.find(l.addr_name);
    return f != address_forms.end() && std::string(n) == "exception_" + f->second;
  }
  if (const auto f = address_forms.find(l.name); f != address_forms.end())
    return std::string(n) == "address_" + f->second;
  static const std::map<std::string, std::string> exact = {
      {"I_ASYNC", "async"},
      {"I_TRACE_INFO", "trace_info"},
      {"I_TRACE_ON", "trace_on"},
      {"I_TIMESTAMP", "timestamp"},
      {"I_TS_MARKER", "timestamp_marker"},
      {"I_TRANS_ST", "transaction_start"},
      {"I_TRANS_COMMIT", "transaction_commit"},
      {"I_TRANS_FAIL", "transaction_failure"},
      {"I_PE_RESET", "pe_reset"},
      {"I_EXCEPT_RTN", "exception_return"},  // ETMv4
      {"I_FUNC_RET", "function_return"},     // ETMv4, Armv8-M
      {"I_COMMIT", "commit"},
      {"I_CANCEL_F1", "cancel_f1"},
      {"I_CANCEL_F2", "cancel_f2"},
      {"I_CANCEL_F3", "cancel_f3"},
      {"I_MISPREDICT", "mispredict"},
      {"I_DISCARD", "discard"},
      {"I_OVERFLOW", "overflow"},
      {"I_EVENT", "event"},
      {"I_IGNORE", "ignore"},
      {"I_ATOM_F1", "atom_f1"},
      {"I_ATOM_F2", "atom_f2"},
      {"I_ATOM_F3", "atom_f3"},
      {"I_ATOM_F4", "atom_f4"},
      {"I_ATOM_F6", "atom_f6"},
      {"I_SRC_ADDR_MATCH", "source_exact"},
      {"I_SRC_ADDR_S_IS0", "source_short_is0"},
      {"I_SRC_ADDR_S_IS1", "source_short_is1"},
      {"I_SCR_ADDR_L_32IS0", "source_32_is0"},  // OpenCSD's spelling
      {"I_SCR_ADDR_L_32IS1", "source_32_is1"},
      {"I_SCR_ADDR_L_64IS0", "source_64_is0"},
      {"I_SCR_ADDR_L_64IS1", "source_64_is1"},
  };
  if (const auto f = exact.find(l.name); f != exact.end()) return f->second == n;
  if (l.name == "I_ATOM_F5") return starts(n, "atom_f5_");
  if (l.name == "I_CCNT_F1") return starts(n, "cycle_count_f1_");
  if (l.name == "I_CCNT_F2") return starts(n, "cycle_count_f2_");
  if (l.name == "I_CCNT_F3") return starts(n, "cycle_count_f3_");
  if (l.name == "I_CTXT") return k == packet_kind::context || k == packet_kind::context_same;
  if (l.name == "I_Q") return is_q(k);
  return false;
}

inline std::string atom_string(const packet& p) {
  std::string s;
  for (unsigned i = 0; i < p.atom_count; ++i) s += p.atom(i) ? 'E' : 'N';
  return s;
}

// Checks every value OpenCSD prints for the packet against ours.
inline void check_values(const listed& l, const packet& p) {
  const std::string& t = l.text;
  if (has_address(p.kind)) {
    const auto a = hex_after(t, "Addr=0x");
    REQUIRE_MESSAGE(a.has_value(), "no address in listing: " << t);
    CHECK(*a == p.address);
  }
  if (has_atoms(p.kind) && starts(kind_name(p.kind), "atom_")) {
    const auto semi = t.rfind("; ");
    REQUIRE(semi != std::string::npos);
    std::string want = t.substr(semi + 2);
    while (!want.empty() && (want.back() == ' ' || want.back() == ';')) want.pop_back();
    CHECK(want == atom_string(p));
  }
  if (const auto at = t.find("Ctxt: "); at != std::string::npos && has_context(p.kind)) {
    const std::string ctx = t.substr(at + 6);
    CHECK((ctx.rfind("AArch64", 0) == 0) == p.ctx.sf);
    const auto el = ctx.find("EL");
    REQUIRE(el != std::string::npos);
    CHECK(static_cast<unsigned>(ctx[el + 2] - '0') == p.ctx.el);
    const std::string sec = ctx.substr(ctx.find(',', el) + 2, 5);
    const char* ours = p.ctx.nse ? (p.ctx.ns ? "Realm" : "Root") : (p.ctx.ns ? "NS" : "S");
    CHECK(sec.rfind(ours, 0) == 0);
    if (const auto cid = hex_after(ctx, "CID=0x")) CHECK(*cid == p.ctx.context_id);
    if (const auto vmid = hex_after(ctx, "VMID=0x")) CHECK(*vmid == p.ctx.vmid);
  }
  if (p.kind == packet_kind::timestamp) {
    const auto v = hex_after(t, "Updated val = 0x");
    REQUIRE(v.has_value());
    CHECK(*v == p.timestamp);
  }
  if (is_cycle_count(p.kind)) {
    const auto v = hex_after(t, "Count=0x");
    REQUIRE(v.has_value());
    if (!p.is(packet_flag::cycles_unknown)) CHECK(*v == p.cycles);
  }
  if (p.kind == packet_kind::commit) CHECK(dec_after(t, "Commit(") == p.count);
  if (p.kind == packet_kind::cancel_f1 || p.kind == packet_kind::cancel_f2 ||
      p.kind == packet_kind::cancel_f3)
    CHECK(dec_after(t, "Cancel(") == p.count);
  if (is_q(p.kind) && !p.is(packet_flag::count_unknown)) CHECK(dec_after(t, "Count(") == p.count);
  if (p.kind == packet_kind::trace_info) {
    const auto info = hex_after(t, "INFO=0x");
    REQUIRE(info.has_value());
    CHECK(*info == p.info);
    if (const auto th = hex_after(t, "CC_THRESHOLD=0x")) CHECK(*th == p.cycles);
  }
  if (l.name == "I_EXCEPT") {  // OpenCSD capitalizes differently ("Inst Debug")
    auto lower = [](std::string x) {
      for (char& ch : x) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      return x;
    };
    const std::string want = lower(exception_type_name(p.exception_type));
    CHECK_MESSAGE(lower(t).find(" " + want + ";") != std::string::npos, t << " vs " << want);
  }
}

}  // namespace test
