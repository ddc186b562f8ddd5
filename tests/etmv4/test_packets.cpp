// SPDX-License-Identifier: Apache-2.0
// ETMv4 conformance with real trace: every snapshot in ../shared/conformance/etmv4, loaded with
// the snapshot reader (each source's registers and trace ID), deformatted when its buffer is
// CoreSight formatted, and decoded per trace ID with the ETMv4 configuration of that ID's
// source, must match OpenCSD 1.8.0's packet listing (expected/<name>.packets.txt) for every ID:
// OpenCSD's index (Idx), raw bytes, kinds and values; and re-encoding each ID's packets must
// reproduce its bytes exactly.
//
// Where the trace itself is damaged (a55-test-tpiu: a Q header with QSUPP 0, four times) our
// decoder must report an error at the same index as OpenCSD; OpenCSD then goes on guessing at
// packets, ours resumes at the next A-Sync, and both must agree again from that A-Sync on.
#include <doctest/doctest.h>

#include <tracecodec/coresight/deformatter.hpp>
#include <tracecodec/ete/packet/encoder.hpp>
#include <tracecodec/host/ete/snapshot.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "../common/opencsd_packets.hpp"
#include "streams.hpp"

using namespace test;
using test::etmv4::deformat;
using test::etmv4::etmv4_dir;
using test::etmv4::id_stream;
namespace fs = std::filesystem;
namespace snapshot = tracecodec::ete::snapshot;
namespace cs = tracecodec::coresight;

namespace {

bool is_error_line(const listed& l) {
  return l.error || l.name == "I_RESERVED" || l.name == "I_RESERVED_CFG" ||
         l.name == "I_BAD_SEQUENCE";
}

struct id_result {
  std::size_t packets = 0, matched = 0, errors = 0, error_matches = 0, skipped = 0;
  bool ok = true;
};

// Compares one ID's decode with its listed lines.
id_result compare(const registers& regs, const id_stream& s, std::vector<listed> want) {
  merge_exceptions(want);
  id_result r;
  std::vector<packet> got;
  std::vector<diagnostic> errs;
  decoder<> dec(regs);
  REQUIRE(dec.cfg().etmv4());
  dec.decode(s.bytes.data(), s.bytes.size(), [&](const packet& p) { got.push_back(p); },
             [&](const diagnostic& e) { errs.push_back(e); });
  for (const diagnostic& e : errs) {
    if (e.code == error_code::unsynchronized) continue;
    ++r.errors;
    // OpenCSD lists an error line at the same index.
    const std::uint64_t at = s.index[static_cast<std::size_t>(e.offset)];
    const bool listed_there = std::any_of(want.begin(), want.end(), [&](const listed& l) {
      return l.offset == at && is_error_line(l);
    });
    CHECK_MESSAGE(listed_there, error_name(e.code) << " at Idx " << at);
    r.error_matches += listed_there;
    r.ok = r.ok && listed_there;
  }
  // Walk both lists. After one of our errors, OpenCSD's lines up to the packet we resumed
  // at (an A-Sync) are skipped.
  std::size_t w = 0;
  std::size_t next_error = 0;
  std::vector<std::uint64_t> error_at;
  for (const diagnostic& e : errs)
    if (e.code != error_code::unsynchronized) error_at.push_back(s.index[static_cast<std::size_t>(e.offset)]);
  // ... and every error OpenCSD reported is one of ours.
  for (const listed& l : want)
    if (l.error) {
      const bool ours = std::find(error_at.begin(), error_at.end(), l.offset) != error_at.end();
      CHECK_MESSAGE(ours, "OpenCSD reports an error at Idx " << l.offset << " (" << l.name << ")");
      r.ok = r.ok && ours;
    }
  for (const packet& p : got) {
    const std::uint64_t at = s.index[static_cast<std::size_t>(p.offset)];
    if (next_error < error_at.size() && at > error_at[next_error]) {
      while (w < want.size() && want[w].offset < at) {
        ++w;
        ++r.skipped;
      }
      ++next_error;
    }
    ++r.packets;
    REQUIRE_MESSAGE(w < want.size(), "more packets than listed, at Idx " << at);
    const listed& l = want[w++];
    CAPTURE(at);
    CAPTURE(l.offset);
    CAPTURE(l.name);
    CHECK(at == l.offset);
    std::vector<std::uint8_t> raw(s.bytes.begin() + static_cast<long>(p.offset),
                                  s.bytes.begin() + static_cast<long>(p.offset + p.size));
    CHECK(raw == l.bytes);
    CHECK_MESSAGE(kind_matches(l, p.kind), kind_name(p.kind));
    check_values(l, p);
    const bool same = at == l.offset && raw == l.bytes && kind_matches(l, p.kind);
    r.matched += same;
    r.ok = r.ok && same;
  }
  // Lines after our last packet: only OpenCSD's guesses after an error, or nothing.
  if (w < want.size()) {
    CHECK_MESSAGE(!error_at.empty(), (want.size() - w) << " listed packets not decoded, from Idx "
                                                      << want[w].offset);
    r.ok = r.ok && !error_at.empty();
    r.skipped += want.size() - w;
  }
  // Re-encoding reproduces the stream byte for byte (when nothing was damaged).
  if (errs.empty() || std::all_of(errs.begin(), errs.end(), [](const diagnostic& e) {
        return e.code == error_code::unsynchronized;
      })) {
    std::vector<std::uint8_t> again(s.bytes.size() + 64);
    encoder<> enc(regs);
    const encode_many_result e = enc.encode(got.data(), got.size(), again.data(), again.size());
    CHECK(e.error == error_code::ok);
    again.resize(e.size);
    // Bytes before the first A-Sync are not packets.
    const std::size_t first = got.empty() ? s.bytes.size() : static_cast<std::size_t>(got.front().offset);
    const std::vector<std::uint8_t> from_sync(s.bytes.begin() + static_cast<long>(first), s.bytes.end());
    // A stream cut inside its last packet re-encodes up to that packet.
    CHECK(std::equal(again.begin(), again.end(), from_sync.begin(), from_sync.begin() + static_cast<long>(std::min(again.size(), from_sync.size()))));
    CHECK(again.size() + max_packet_size > from_sync.size());
    r.ok = r.ok && e.error == error_code::ok;
  }
  return r;
}

}  // namespace

TEST_CASE("every ETMv4 conformance snapshot matches OpenCSD's packet listing, per trace ID") {
  const std::string dir = etmv4_dir();
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(fs::path(dir) / "snapshots"))
    if (e.is_directory()) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  REQUIRE(names.size() >= 7);
  unsigned passed = 0;
  std::size_t total_packets = 0, total_ids = 0;
  for (const std::string& name : names) {
    CAPTURE(name);
    const auto snap = snapshot::load(dir + "/snapshots/" + name);
    REQUIRE_MESSAGE(snap.error.empty(), snap.error);
    auto sessions = parse_listing_lines(dir + "/expected/" + name + ".packets.txt");
    REQUIRE(sessions.size() == 1);  // the listing covers the first buffer
    std::map<int, std::vector<listed>> by_id;
    for (listed& l : sessions[0]) by_id[l.id].push_back(std::move(l));
    const snapshot::buffer& b = snap.buffers.front();
    const auto streams = deformat(b);
    bool ok = true;
    std::size_t packets = 0, skipped = 0, errors = 0;
    for (const auto& entry : by_id) {
      const int id = entry.first;
      CAPTURE(id);
      const snapshot::trace_source* src = nullptr;
      for (const auto& s : b.sources)
        if (s.decodable && static_cast<int>(s.trctraceidr) == id) src = &s;
      REQUIRE_MESSAGE(src != nullptr, "no source with trace ID " << id);
      REQUIRE(streams.count(id) == 1);
      const id_result r = compare(src->regs, streams.at(id), entry.second);
      ok = ok && r.ok;
      packets += r.packets;
      skipped += r.skipped;
      errors += r.errors;
      ++total_ids;
    }
    std::printf("etmv4 packets: %-20s %zu IDs, %zu packets equal OpenCSD's, %zu errors at OpenCSD's "
                "error lines, %zu listed lines after an error skipped to the next A-Sync%s\n",
                name.c_str(), by_id.size(), packets, errors, skipped, ok ? "" : "  FAILED");
    total_packets += packets;
    passed += ok;
  }
  std::printf("etmv4 packets: %u of %zu snapshots match (%zu trace IDs, %zu packets)\n", passed,
              names.size(), total_ids, total_packets);
  CHECK(passed == names.size());
}
