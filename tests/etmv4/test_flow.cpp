// SPDX-License-Identifier: Apache-2.0
// ETMv4 program flow against OpenCSD 1.8.0: every snapshot in ../shared/conformance/etmv4,
// every trace ID with trace, deformatted (streams.hpp: OpenCSD's Idx of every byte), decoded
// by flow_decoder with that ID's registers and the snapshot's memory image, printed as
// OpenCSD's trc_pkt_lister -decode element lines (format_opencsd) with OpenCSD's Idx, must
// equal the element lines ("Idx:..; ID:..; OCSD_GEN_TRC_ELEM_...") of that ID in
// expected/<name>.decode.txt, in order. The snapshots without a memory image (a55-test-tpiu,
// init-short-addr) were decoded by OpenCSD without one too: every access is "not accessible"
// for both. The only lines allowed to differ are listed in `differences`, each with the rule
// by which OpenCSD's line is wrong; a listed difference that does not occur fails the test.
#include <doctest/doctest.h>

#include <tracecodec/ete/flow/decoder.hpp>
#include <tracecodec/host/ete/flow_format.hpp>
#include <tracecodec/host/ete/snapshot.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "streams.hpp"

namespace ete = tracecodec::ete;
namespace fs = std::filesystem;
using test::etmv4::etmv4_dir;
using test::etmv4::id_stream;

namespace {

// (snapshot, trace ID, OpenCSD's line or nullptr, our line or nullptr, rule). nullptr: no
// line there.
struct difference {
  const char* snapshot;
  int id;
  const char* opencsd;
  const char* ours;
  const char* rule;
};
// None so far: every element line of the 7 snapshots equals OpenCSD's. An entry must name
// the rule (ETMv4 architecture, Arm ARM) by which OpenCSD's line is wrong.
const std::vector<difference> differences = {};

// The element lines of expected/<name>.decode.txt, per trace ID. An error message may stand
// in front of a line (README: match Idx: anywhere). A .xz listing is read through `xz -dc`.
bool expected_lines(const std::string& path, bool xz, std::map<int, std::vector<std::string>>& out) {
  std::FILE* f = xz ? popen(("xz -dc '" + path + "'").c_str(), "r") : std::fopen(path.c_str(), "r");
  if (f == nullptr) return false;
  std::string line;
  char buf[4096];
  auto take = [&] {
    const std::size_t e = line.find("OCSD_GEN_TRC_ELEM_");
    if (e != std::string::npos) {
      std::size_t at = line.rfind("Idx:", e);
      if (at != std::string::npos) {
        const std::string s = line.substr(at);
        unsigned idx = 0, id = 0;
        int n = 0;
        if (std::sscanf(s.c_str(), "Idx:%u; ID:%x; %n", &idx, &id, &n) == 2 &&
            s.compare(static_cast<std::size_t>(n), 18, "OCSD_GEN_TRC_ELEM_") == 0)
          out[static_cast<int>(id)].push_back(s);
      }
    }
    line.clear();
  };
  while (std::fgets(buf, sizeof buf, f)) {
    line += buf;
    if (!line.empty() && line.back() == '\n') {
      line.pop_back();
      take();
    }
  }
  if (!line.empty()) take();
  const int rc = xz ? pclose(f) : std::fclose(f);
  return rc == 0;
}

bool have_xz() { return std::system("xz --version > /dev/null 2>&1") == 0; }

struct id_result {
  std::size_t want = 0, got = 0, matched = 0, explained = 0, unexplained = 0;
};

// Compares OpenCSD's lines with ours, in order. Where they differ, the pair must be listed;
// otherwise the lines are reported and the walk resynchronizes at the nearest equal pair.
id_result compare(const std::string& name, int id, const std::vector<std::string>& want,
                  const std::vector<std::string>& got,
                  std::set<const difference*>& observed) {
  id_result r;
  r.want = want.size();
  r.got = got.size();
  std::size_t i = 0, j = 0;
  auto listed = [&](const char* x, const char* y) -> const difference* {
    for (const difference& d : differences)
      if (name == d.snapshot && id == d.id && (x == nullptr) == (d.opencsd == nullptr) &&
          (y == nullptr) == (d.ours == nullptr) && (x == nullptr || std::string(x) == d.opencsd) &&
          (y == nullptr || std::string(y) == d.ours))
        return &d;
    return nullptr;
  };
  while (i < want.size() || j < got.size()) {
    if (i < want.size() && j < got.size() && want[i] == got[j]) {
      ++r.matched;
      ++i;
      ++j;
      continue;
    }
    const char* x = i < want.size() ? want[i].c_str() : nullptr;
    const char* y = j < got.size() ? got[j].c_str() : nullptr;
    if (const difference* d = x && y ? listed(x, y) : nullptr) {
      observed.insert(d);
      ++r.explained, ++i, ++j;
      continue;
    }
    if (const difference* d = x ? listed(x, nullptr) : nullptr) {
      observed.insert(d);
      ++r.explained, ++i;
      continue;
    }
    if (const difference* d = y ? listed(nullptr, y) : nullptr) {
      observed.insert(d);
      ++r.explained, ++j;
      continue;
    }
    // Unexplained: report, then skip to the nearest pair of equal lines (k + l smallest).
    std::size_t bk = 0, bl = 0, best = SIZE_MAX;
    constexpr std::size_t window = 64;
    for (std::size_t s = 1; s < 2 * window && best == SIZE_MAX; ++s)
      for (std::size_t k = 0; k <= s; ++k) {
        const std::size_t l = s - k;
        if (i + k < want.size() && j + l < got.size() && want[i + k] == got[j + l]) {
          bk = k, bl = l, best = s;
          break;
        }
      }
    if (best == SIZE_MAX) bk = want.size() - i, bl = got.size() - j;
    if (r.unexplained < 8) {
      std::string msg = name + " ID " + std::to_string(id) + ": lines differ\n";
      for (std::size_t k = 0; k < std::min<std::size_t>(bk, 6); ++k)
        msg += "  OpenCSD    " + want[i + k] + "\n";
      for (std::size_t l = 0; l < std::min<std::size_t>(bl, 6); ++l)
        msg += "  tracecodec " + got[j + l] + "\n";
      MESSAGE(msg);
    }
    r.unexplained += std::max(bk, bl);
    i += bk;
    j += bl;
  }
  return r;
}

// Our element lines for one trace ID, with OpenCSD's Idx of each element's packet.
std::vector<std::string> flow_lines(const ete::registers& regs, const id_stream& s,
                                    ete::program_image& image, const ete::flow_options& o,
                                    unsigned trace_id, std::vector<ete::diagnostic>& errors) {
  std::vector<std::string> lines;
  auto dec = std::make_unique<ete::flow_decoder<ete::runtime_config>>(regs, image, o);
  REQUIRE(dec->status() == ete::error_code::ok);
  const ete::opencsd_style style = ete::opencsd_style::of(ete::config::from(regs), trace_id);
  auto idx = [&](std::uint64_t offset) {
    if (s.index.empty()) return std::uint64_t{0};
    return s.index[static_cast<std::size_t>(std::min<std::uint64_t>(offset, s.index.size() - 1))];
  };
  dec->decode(
      s.bytes.data(), s.bytes.size(),
      [&](const ete::flow_element& f) {
        ete::flow_element g = f;
        g.offset = idx(f.offset);
        lines.push_back(ete::format_opencsd(g, style));
      },
      [&](const ete::diagnostic& d) { errors.push_back(d); });
  return lines;
}

}  // namespace

TEST_CASE("ETMv4 program flow of every snapshot equals OpenCSD's decode, per trace ID") {
  const std::string dir = etmv4_dir();
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(fs::path(dir) / "snapshots"))
    if (e.is_directory()) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  REQUIRE(names.size() >= 7);
  const bool xz = have_xz();
  std::set<const difference*> observed;
  std::size_t total_want = 0, total_matched = 0, total_explained = 0, total_bad = 0, ids = 0;
  for (const std::string& name : names) {
    CAPTURE(name);
    std::string listing = dir + "/expected/" + name + ".decode.txt";
    const bool compressed = !fs::exists(listing) && fs::exists(listing + ".xz");
    if (compressed) {
      if (!xz) {
        MESSAGE("xz is not installed: " << name << ".decode.txt.xz not checked");
        continue;
      }
      listing += ".xz";
    }
    ete::snapshot::load_options opt;
    opt.skip_missing_dumps = true;  // as OpenCSD: juno-uname-001 lacks two of its dump files
    const ete::snapshot::loaded snap = ete::snapshot::load(dir + "/snapshots/" + name, opt);
    REQUIRE_MESSAGE(snap.error.empty(), snap.error);
    REQUIRE_MESSAGE(snap.memory_error.empty(), snap.memory_error);
    std::map<int, std::vector<std::string>> want;
    REQUIRE_MESSAGE(expected_lines(listing, compressed, want), "cannot read " << listing);
    ete::program_image image(snap.regions.data(), snap.regions.size());
    ete::flow_options o;
    o.arch = snap.arch;
    const ete::snapshot::buffer& b = snap.buffers.front();
    const auto streams = test::etmv4::deformat(b);
    for (const auto& entry : streams) {
      const int id = entry.first;
      if (entry.second.bytes.empty()) continue;
      CAPTURE(id);
      const ete::snapshot::trace_source* src = nullptr;
      for (const auto& s : b.sources)
        if (s.decodable && static_cast<int>(s.trctraceidr) == id) src = &s;
      REQUIRE_MESSAGE(src != nullptr, "no source with trace ID " << id);
      std::vector<ete::diagnostic> errors;
      const std::vector<std::string> got =
          flow_lines(src->regs, entry.second, image, o, static_cast<unsigned>(id), errors);
      const id_result r = compare(name, id, want[id], got, observed);
      std::printf("etmv4 flow: %-20s ID 0x%02x: %zu of %zu OpenCSD element lines equal (%zu ours)%s%s\n",
                  name.c_str(), static_cast<unsigned>(id), r.matched, r.want, r.got,
                  r.explained ? (", " + std::to_string(r.explained) + " listed differences").c_str() : "",
                  r.unexplained ? (", " + std::to_string(r.unexplained) + " differ").c_str() : "");
      CHECK(r.want > 0);  // OpenCSD decoded this ID: an empty comparison proves nothing
      CHECK(r.unexplained == 0);
      ++ids;
      total_want += r.want;
      total_matched += r.matched;
      total_explained += r.explained;
      total_bad += r.unexplained;
    }
  }
  std::printf("etmv4 flow: %zu of %zu OpenCSD element lines equal, %zu listed differences, %zu "
              "unexplained\n",
              total_matched, total_want, total_explained, total_bad);
  // 7 snapshots, 11 trace IDs with trace (5 of them in juno_r1_1); 10 without bugfix-exact-match
  // when xz is missing.
  CHECK(ids == (xz ? 11u : 10u));
  for (const difference& d : differences)
    CHECK_MESSAGE(observed.count(&d) == 1, "listed difference did not occur: " << d.snapshot
                                                                               << " " << d.rule);
}

// Hand-built from the ETMv4 architecture (IHI0064): A-Sync, Trace Info, then the packets.
namespace {
std::vector<ete::element> elements_of(const ete::registers& r, std::vector<std::uint8_t> tail,
                                      bool resolve) {
  std::vector<std::uint8_t> b(11, 0x00);
  b.push_back(0x80);  // A-Sync
  b.push_back(0x01);  // Trace Info, no sections
  b.push_back(0x00);
  b.insert(b.end(), tail.begin(), tail.end());
  std::vector<ete::element> out;
  ete::element_reader<ete::runtime_config> rd(r);
  REQUIRE(rd.status() == ete::error_code::ok);
  rd.decode(
      b.data(), b.size(),
      [&](const ete::element& e) {  // stage 1's implied commits (MAXSPEC 0) left out
        if (e.kind != ete::element_kind::commit) out.push_back(e);
      },
      [&](const ete::diagnostic& d) { FAIL("decode error " << static_cast<int>(d.code)); }, resolve);
  return out;
}
}  // namespace

TEST_CASE("ETMv4 registers resolve, Exception Return and Function Return elements") {
  using ete::element_kind;
  for (const ete::registers& r : {ete::presets::etmv4_0_juno, ete::presets::etmv4_1_a55,
                                  ete::presets::etmv4_5_m55})
    CHECK(ete::element_reader<ete::runtime_config>::status_for(r) == ete::error_code::ok);
  for (bool resolve : {false, true}) {
    CAPTURE(resolve);
    // A profile: Exception Return (0x07) is not a P0 element (the ERET's atom is).
    auto a = elements_of(ete::presets::etmv4_0_juno, {0x07}, resolve);
    REQUIRE(a.size() == 2);
    CHECK(a[1].kind == element_kind::exception_return);
    CHECK(a[1].offset == 14);
    CHECK_FALSE(a[1].p0);
    // M profile (ETMv4.5): Exception Return and Function Return (0x05) are P0 elements.
    auto m = elements_of(ete::presets::etmv4_5_m55, {0x07, 0x05}, resolve);
    REQUIRE(m.size() == 3);
    CHECK(m[1].kind == element_kind::exception_return);
    CHECK(m[1].p0);
    CHECK(m[2].kind == element_kind::function_return);
    CHECK(m[2].p0);
    // M profile exception number 0x20D (IRQ13): TYPE[4:0] = 0x0D in byte 1 (E0 = 1, C = 1),
    // TYPE[9:5] = 0x10 in byte 2; then a short IS1 address packet: 0x96 0x02 -> address 0x4.
    auto x = elements_of(ete::presets::etmv4_5_m55, {0x06, 0x9b, 0x10, 0x96, 0x02}, resolve);
    REQUIRE(x.size() == 2);
    CHECK(x[1].kind == element_kind::exception);
    CHECK(x[1].exception_type == 0x20d);
    CHECK(x[1].address == 0x4);
    // TYPE 0x18 is DebugHalt on an M-profile PE, not ETE's Transaction Failure.
    auto h = elements_of(ete::presets::etmv4_5_m55, {0x06, 0x31, 0x96, 0x02}, resolve);
    REQUIRE(h.size() == 2);
    CHECK(h[1].kind == element_kind::exception);
    CHECK(h[1].exception_type == 0x18);
  }
}

TEST_CASE("ETMv4 exception names, as OpenCSD 1.8.0 lists them") {
  const ete::config a = ete::config::from(ete::presets::etmv4_0_juno);
  const ete::config m = ete::config::from(ete::presets::etmv4_5_m55);
  CHECK(ete::exception_name(0x1, a) == "Debug Halt");
  CHECK(ete::exception_name(0xc, a) == "Data Fault");
  CHECK(ete::exception_name(0xe, a) == "IRQ");
  CHECK(ete::exception_name(0x10, a) == "Reserved");
  CHECK(ete::exception_name(0x0f, m) == "SysTick");
  CHECK(ete::exception_name(0x18, m) == "DebugHalt");
  CHECK(ete::exception_name(0x19, m) == "LazyFP Push");
  CHECK(ete::exception_name(0x20d, m) == "IRQ13");
  CHECK(ete::exception_name(0x3ef, m) == "IRQ495");
  CHECK(ete::exception_name(0x3f0, m) == "Reserved");
  CHECK(ete::exception_name(0x18, ete::config{}) == "Transaction Failure");  // ETE
}
