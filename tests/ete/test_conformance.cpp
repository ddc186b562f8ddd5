// SPDX-License-Identifier: Apache-2.0
// Conformance with real ETE trace: every snapshot in ../shared/conformance/ete, decoded with the
// configuration from its own .ini files, must match OpenCSD's packet listing
// (expected/<name>.packets.txt) in offsets, raw bytes, kinds and resolved values; re-encoding
// must reproduce every .bin byte for byte; and splitting the input at any byte changes nothing.
// OpenCSD prints an Exception as 2 bytes followed by a separate address packet: the spec makes
// them one packet (D5.13), so the listing's two lines are merged here.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <tracecodec/host/ete/recompress.hpp>
#include <tracecodec/host/ete/snapshot.hpp>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "common.hpp"

using namespace test;
namespace fs = std::filesystem;

namespace {

std::string g_dir;

struct listed {
  std::uint64_t offset = 0;
  std::vector<std::uint8_t> bytes;
  std::string name;       // OpenCSD packet name, e.g. I_ADDR_S_IS0
  std::string text;       // everything after the name
  std::string addr_name;  // for a merged exception: the address packet's name
};

// Parses expected/<name>.packets.txt into one packet list per session.
std::vector<std::vector<listed>> parse_listing(const std::string& path) {
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
    if (line.rfind("Idx:", 0) != 0) continue;
    if (!multi && sessions.empty()) sessions.emplace_back();
    listed l;
    l.offset = std::stoull(line.substr(4));
    const auto lb = line.find('['), rb = line.find(']');
    std::istringstream hex(line.substr(lb + 1, rb - lb - 1));
    std::string tok;
    while (hex >> tok) l.bytes.push_back(static_cast<std::uint8_t>(std::stoul(tok, nullptr, 16)));
    const auto tab = line.find('\t', rb);
    const std::string rest = line.substr(tab + 1);
    const auto sp = rest.find(' ');
    l.name = rest.substr(0, sp);
    l.text = sp == std::string::npos ? "" : rest.substr(sp);
    auto& cur = sessions.back();
    if (!cur.empty() && cur.back().name == "I_EXCEPT" && cur.back().addr_name.empty()) {
      listed& ex = cur.back();  // merge the exception's address packet into it
      ex.bytes.insert(ex.bytes.end(), l.bytes.begin(), l.bytes.end());
      ex.addr_name = l.name;
      ex.text += " |" + l.text;
      continue;
    }
    cur.push_back(std::move(l));
  }
  return sessions;
}

std::optional<std::uint64_t> hex_after(const std::string& s, const std::string& key) {
  const auto at = s.find(key);
  if (at == std::string::npos) return std::nullopt;
  return std::stoull(s.substr(at + key.size()), nullptr, 16);
}
std::optional<std::uint64_t> dec_after(const std::string& s, const std::string& key) {
  const auto at = s.find(key);
  if (at == std::string::npos) return std::nullopt;
  return std::stoull(s.substr(at + key.size()), nullptr, 10);
}

bool starts(const char* s, const char* prefix) { return std::string(s).rfind(prefix, 0) == 0; }

// Which of our kinds each OpenCSD packet name may be (OpenCSD folds some formats together).
bool kind_matches(const listed& l, packet_kind k) {
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

std::string atom_string(const packet& p) {
  std::string s;
  for (unsigned i = 0; i < p.atom_count; ++i) s += p.atom(i) ? 'E' : 'N';
  return s;
}

// Checks every value OpenCSD prints for the packet against ours.
void check_values(const listed& l, const packet& p) {
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

int g_failures = 0;
int failed_assertions() { return g_failures; }

struct failure_counter : doctest::IReporter {
  explicit failure_counter(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData&) override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData& a) override { g_failures += a.m_failed ? 1 : 0; }
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};
REGISTER_LISTENER("failure_counter", 1, failure_counter);

std::vector<std::string> snapshot_names() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(fs::path(g_dir) / "snapshots"))
    if (e.is_directory()) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("every conformance snapshot matches OpenCSD's packet listing and re-encodes exactly") {
  const auto names = snapshot_names();
  REQUIRE(!names.empty());
  unsigned passed = 0;
  std::size_t total_packets = 0, total_bytes = 0;
  for (const std::string& name : names) {
    CAPTURE(name);
    const auto snap = tracecodec::ete::snapshot::load(g_dir + "/snapshots/" + name);
    REQUIRE_MESSAGE(snap.error.empty(), snap.error);
    const auto listing = parse_listing(g_dir + "/expected/" + name + ".packets.txt");
    REQUIRE(!listing.empty());
    bool ok = true;
    const int failed_before = failed_assertions();
    for (std::size_t s = 0; s < snap.buffers.size(); ++s) {
      CAPTURE(s);
      const auto& buf = snap.buffers[s];
      const decoded d = decode_all(buf.regs, buf.data);
      CHECK(d.errors.empty());
      for (const auto& e : d.errors)
        MESSAGE(error_name(e.code) << " at " << e.offset);
      // Sessions past the listing's end must be empty buffers (e.g. ete-wfet's session2.bin).
      const std::vector<listed> none;
      const std::vector<listed>& want = s < listing.size() ? listing[s] : none;
      CHECK(d.packets.size() == want.size());
      ok = ok && d.errors.empty() && d.packets.size() == want.size();
      for (std::size_t i = 0; i < d.packets.size() && i < want.size(); ++i) {
        const packet& p = d.packets[i];
        const listed& l = want[i];
        CAPTURE(i);
        CAPTURE(l.offset);
        CAPTURE(l.name);
        CHECK(p.offset == l.offset);
        const std::vector<std::uint8_t> raw(buf.data.begin() + static_cast<long>(p.offset),
                                            buf.data.begin() + static_cast<long>(p.offset + p.size));
        CHECK(raw == l.bytes);
        CHECK_MESSAGE(kind_matches(l, p.kind), kind_name(p.kind));
        check_values(l, p);
        ok = ok && p.offset == l.offset && raw == l.bytes && kind_matches(l, p.kind);
      }
      // Re-encoding every decoded packet reproduces the buffer byte for byte.
      error_code enc_err = error_code::ok;
      const auto again = encode_all(buf.regs, d.packets, &enc_err);
      CHECK(enc_err == error_code::ok);
      CHECK(again == buf.data);
      ok = ok && again == buf.data;
      total_packets += d.packets.size();
      total_bytes += buf.data.size();
    }
    if (ok && failed_assertions() == failed_before) ++passed;
  }
  MESSAGE("conformance: " << passed << " of " << names.size() << " snapshots match OpenCSD ("
                          << total_packets << " packets, " << total_bytes << " bytes)");
  std::printf("conformance: %u of %zu snapshots match OpenCSD's listings (%zu packets, %zu bytes)\n",
              passed, names.size(), total_packets, total_bytes);
  CHECK(passed == names.size());
}

// The batch encoder against real trace: the whole buffer in one call, and through small
// output buffers drained whenever it says buffer_too_small, must both give the hardware's bytes.
TEST_CASE("every conformance buffer re-encodes exactly through the batch encoder") {
  const auto names = snapshot_names();
  REQUIRE(!names.empty());
  std::size_t buffers = 0;
  for (const std::string& name : names) {
    CAPTURE(name);
    const auto snap = tracecodec::ete::snapshot::load(g_dir + "/snapshots/" + name);
    REQUIRE_MESSAGE(snap.error.empty(), snap.error);
    for (const auto& buf : snap.buffers) {
      const decoded d = decode_all(buf.regs, buf.data);
      REQUIRE(d.errors.empty());
      std::vector<std::uint8_t> whole(buf.data.size() + 16);
      encoder<> e(buf.regs);
      const encode_many_result r = e.encode(d.packets.data(), d.packets.size(), whole.data(), whole.size());
      CHECK(r.error == error_code::ok);
      CHECK(r.packets == d.packets.size());
      whole.resize(r.size);
      CHECK(whole == buf.data);
      for (const std::size_t cap : {std::size_t{32}, std::size_t{33}, std::size_t{100}}) {
        CAPTURE(cap);
        encoder<> s(buf.regs);
        std::vector<std::uint8_t> got;
        std::uint8_t chunk[100];
        std::size_t at = 0;
        bool stuck = false;
        while (at < d.packets.size() && !stuck) {
          const encode_many_result c = s.encode(d.packets.data() + at, d.packets.size() - at, chunk, cap);
          got.insert(got.end(), chunk, chunk + c.size);
          at += c.packets;
          stuck = c.packets == 0 || (c.error != error_code::ok && c.error != error_code::buffer_too_small);
        }
        CHECK(!stuck);
        CHECK(got == buf.data);
      }
      ++buffers;
    }
  }
  CHECK(buffers >= 19);
}

TEST_CASE("splitting any conformance buffer at any byte decodes identically") {
  std::size_t splits = 0;
  for (const std::string& name : snapshot_names()) {
    CAPTURE(name);
    const auto snap = tracecodec::ete::snapshot::load(g_dir + "/snapshots/" + name);
    REQUIRE(snap.error.empty());
    for (const auto& buf : snap.buffers) {
      const decoded whole = decode_all(buf.regs, buf.data);
      for (std::size_t a = 0; a <= buf.data.size(); ++a) {
        // Compare on the fly: no per-split allocation.
        decoder<> dec(buf.regs);
        std::size_t i = 0;
        bool same = true;
        packet p{};
        auto drain = [&] {
          for (;;) {
            const auto st = dec.next(p);
            if (st == decode_status::packet) {
              same = same && i < whole.packets.size() && p == whole.packets[i];
              ++i;
            } else if (st == decode_status::error) {
              same = false;
            } else {
              return;
            }
          }
        };
        dec.feed(buf.data.data(), a);
        drain();
        dec.feed(buf.data.data() + a, buf.data.size() - a);
        drain();
        dec.finish();
        drain();
        if (!(same && i == whole.packets.size())) {
          CAPTURE(a);
          FAIL("split decode differs");
        }
        ++splits;
      }
    }
  }
  MESSAGE(splits << " split points checked");
}

TEST_CASE("element compressor: every buffer re-encodes to equal elements, never larger") {
  std::size_t in_total = 0, out_total = 0, buffers = 0, equal = 0;
  for (const std::string& name : snapshot_names()) {
    CAPTURE(name);
    const auto snap = tracecodec::ete::snapshot::load(g_dir + "/snapshots/" + name);
    REQUIRE(snap.error.empty());
    for (std::size_t s = 0; s < snap.buffers.size(); ++s) {
      CAPTURE(s);
      const auto& buf = snap.buffers[s];
      const recompressed r = recompress(buf.regs, buf.data);
      CHECK(r.elements_equal);
      {  // the compressor takes atom runs as the atoms they stand for: the same bytes
        const auto runs = read_elements(buf.regs, buf.data.data(), buf.data.size(), true, true);
        compressor_options opt;
        opt.input = input_kind::resolved;
        auto comp = std::make_unique<compressor<>>(buf.regs, opt);
        std::vector<std::uint8_t> out;
        std::uint8_t chunk[4096];
        auto drain = [&] {
          while (const std::size_t n = comp->drain(chunk, sizeof chunk)) out.insert(out.end(), chunk, chunk + n);
        };
        for (const element& e : runs.elements) {
          error_code c = comp->push(e);
          if (c == error_code::buffer_too_small) {
            drain();
            c = comp->push(e);
          }
          CHECK(c == error_code::ok);
        }
        drain();
        CHECK(comp->finish(true) == error_code::ok);
        drain();
        CHECK(out == r.bytes);
      }
      CHECK(r.bytes.size() <= buf.data.size());
      ++buffers;
      equal += r.elements_equal ? 1 : 0;
      in_total += buf.data.size();
      out_total += r.bytes.size();
    }
  }
  std::printf("recompress: %zu of %zu buffers elements_equal, %zu -> %zu bytes (ratio %.4f)\n", equal,
              buffers, in_total, out_total, static_cast<double>(out_total) / static_cast<double>(in_total));
}

// A second implementation: OpenCSD's full decode (expected/<name>.decode*.txt) prints one
// OCSD_GEN_TRC_ELEM_INSTR_RANGE per executed atom, tagged with the atom packet's offset and
// with the committed E/N (after Mispredicts and Cancels). Our committed atoms must match it.
// OpenCSD also makes ranges for exceptions, Q and source-address elements (other offsets,
// filtered out), and emits none where its program-flow analysis cannot follow the code (no
// memory image for feat_cmpbr, and the atoms it skips after source addresses in ete_ip and
// q_elem): for those three, OpenCSD's list must be an ordered subsequence of ours.
TEST_CASE("committed atoms match OpenCSD's full decode") {
  const std::set<std::string> partial = {"ete_ip", "feat_cmpbr", "q_elem"};
  unsigned exact = 0, subsequence = 0;
  std::size_t atoms_checked = 0;
  for (const std::string& name : snapshot_names()) {
    CAPTURE(name);
    const auto snap = tracecodec::ete::snapshot::load(g_dir + "/snapshots/" + name);
    REQUIRE(snap.error.empty());
    struct atom_at {
      std::size_t session;
      std::uint64_t offset;
      char taken;
      bool operator==(const atom_at&) const = default;
    };
    std::vector<atom_at> ours;
    std::set<std::pair<std::size_t, std::uint64_t>> atom_packets;
    for (std::size_t s = 0; s < snap.buffers.size(); ++s) {
      const auto& buf = snap.buffers[s];
      for (const packet& p : decode_all(buf.regs, buf.data).packets)
        if (has_atoms(p.kind) && p.atom_count) atom_packets.insert({s, p.offset});
      const auto resolved = resolve_elements(buf.regs, buf.data.data(), buf.data.size());
      for (const element& e : resolved.elements)
        if (e.kind == element_kind::atom) ours.push_back({s, e.offset, e.taken ? 'E' : 'N'});
      // Atom runs (one element per atom packet, split by the resolver where commits and
      // cancels end) commit exactly the same elements.
      const auto runs = read_elements(buf.regs, buf.data.data(), buf.data.size(), true, true);
      CHECK(runs.elements.size() <= resolved.elements.size());
      const auto expanded = expand_atom_runs(runs.elements);
      CHECK(expanded.size() == resolved.elements.size());
      CHECK(expanded == resolved.elements);
    }
    std::string path = g_dir + "/expected/" + name + ".decode_multi_session.txt";
    bool multi = fs::exists(path);
    if (!multi) path = g_dir + "/expected/" + name + ".decode.txt";
    std::ifstream in(path);
    REQUIRE(in.good());
    std::vector<atom_at> theirs;
    std::size_t session = 0;
    bool started = !multi;
    const std::regex range(R"(^Idx:(\d+); ID:\w+; OCSD_GEN_TRC_ELEM_INSTR_RANGE\(.*\) ([EN]) )");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("####### Multi Session decode: Buffer", 0) == 0) {
        if (started) ++session;
        started = true;
        continue;
      }
      std::smatch m;
      if (!std::regex_search(line, m, range)) continue;
      const std::uint64_t off = std::stoull(m[1].str());
      if (atom_packets.count({session, off})) theirs.push_back({session, off, m[2].str()[0]});
    }
    if (!partial.count(name)) {
      CHECK(ours.size() == theirs.size());
      CHECK(ours == theirs);
      exact += ours == theirs ? 1 : 0;
    } else {
      std::size_t j = 0;
      for (std::size_t i = 0; i < ours.size() && j < theirs.size(); ++i)
        if (ours[i] == theirs[j]) ++j;
      CHECK(j == theirs.size());
      CHECK(theirs.size() < ours.size());
      subsequence += j == theirs.size() ? 1 : 0;
    }
    atoms_checked += theirs.size();
  }
  std::printf("committed atoms vs OpenCSD: %u snapshots identical, %u as ordered subsequence, %zu atoms compared\n",
              exact, subsequence, atoms_checked);
  CHECK(exact + subsequence == snapshot_names().size());
}

int main(int argc, char** argv) {
  const char* env = std::getenv("TRACECODEC_CONFORMANCE_DIR");
  g_dir = env ? env : "../shared/conformance/ete";
  const char* req = std::getenv("TRACECODEC_REQUIRE_CONFORMANCE");
  const bool required = req && std::string(req) == "1";
  if (!fs::is_directory(fs::path(g_dir) / "snapshots")) {
    if (required) {
      std::printf("FAILED: conformance corpus not found at %s (TRACECODEC_REQUIRE_CONFORMANCE=1)\n",
                  g_dir.c_str());
      return 1;
    }
    std::printf("SKIPPED: conformance corpus not found at %s; set TRACECODEC_CONFORMANCE_DIR\n",
                g_dir.c_str());
    return 77;  // meson's "skipped"
  }
  doctest::Context ctx(argc, argv);
  return ctx.run();
}
