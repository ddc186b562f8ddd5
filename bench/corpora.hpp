// SPDX-License-Identifier: Apache-2.0
// The corpora the benchmark (ete_bench.cpp) and the instruction-count gate (icount.cpp) run
// over, at a size each chooses: the synthetic trace (runs without ../shared), real ETE
// snapshots of ../shared/conformance/ete repeated to the size (each repeat starts at the
// snapshot's own A-Sync and ends where nothing waits for resolution, so every repeat decodes
// exactly like the first: repeat_unit()), ETMv4 streams and
// formatted captures of ../shared/conformance/etmv4, and flow corpora with memory images.
#pragma once

#include <tracecodec/coresight/deformatter.hpp>
#include <tracecodec/ete/element/reader.hpp>
#include <tracecodec/ete/flow/decoder.hpp>
#include <tracecodec/host/ete/snapshot.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "synthetic.hpp"

namespace bench {
using namespace tracecodec::ete;

// ete_spec_1 and ete_spec_3 speculate (MAXSPEC > 0): speculation resolution is timed on them
// (issue 18); q_elem (MAXSPEC 0) has Q packets.
inline constexpr const char* ete_corpus_names[] = {"001-ack_test", "trace_file_cid_vmid", "maxspec0_commopt1",
                                                   "src_addr", "ts_marker", "ete_spec_1", "ete_spec_3", "q_elem"};
inline constexpr const char* etmv4_corpus_names[] = {"bugfix-exact-match", "juno-uname-001", "juno_r1_1"};

struct corpus {
  std::string name;
  registers regs;
  std::vector<std::uint8_t> bytes;
  std::vector<packet> packets;    // decode_into()
  std::vector<element> elements;  // decode_into(): committed elements, one per atom
  std::size_t repeat_size = 0;    // bytes of one repeat (0: not a repeated snapshot)
};

// Fills c.packets and c.elements (what the encoder and compressor take) from c.bytes.
inline void decode_into(corpus& c) {
  c.packets.clear();  // load_etmv4_corpora() has filled them already
  c.elements.clear();
  decoder<> d(c.regs);
  d.decode(c.bytes.data(), c.bytes.size(), [&](const packet& p) { c.packets.push_back(p); },
           [](const diagnostic&) {});
  auto r = std::make_unique<element_reader<>>(c.regs);
  r->decode(c.bytes.data(), c.bytes.size(), [&](const element& e) { c.elements.push_back(e); },
            [](const diagnostic&) {});
}


// Whether every repeat of a repeated snapshot gives the committed elements of the first, at
// offsets one repeat further on (c.elements from decode_into()); what repeat_unit() is for.
inline bool repeats_alike(const corpus& c) {
  if (c.repeat_size == 0) return true;
  std::vector<element> first;
  auto r = std::make_unique<element_reader<>>(c.regs);
  r->decode(c.bytes.data(), c.repeat_size, [&](const element& e) { first.push_back(e); }, [](const diagnostic&) {});
  const std::size_t n = first.size(), repeats = c.bytes.size() / c.repeat_size;
  if (n == 0 || c.elements.size() != n * repeats) return false;
  for (std::size_t i = 0; i < c.elements.size(); ++i) {
    element want = first[i % n];
    want.offset += (i / n) * c.repeat_size;
    if (!(c.elements[i] == want)) return false;
  }
  return true;
}

// Resynchronization (issue 18 item 1): the bytes with the 0x80 of every A-Sync made 0x81 and
// one A-Sync appended, so that a decoder starting at the first byte searches all of them for
// its first A-Sync.
inline std::vector<std::uint8_t> without_asyncs(const registers& regs, const std::vector<std::uint8_t>& bytes) {
  std::vector<std::uint8_t> b = bytes;
  decoder<> d(regs);
  d.decode(
      bytes.data(), bytes.size(),
      [&](const packet& p) {
        if (p.kind == packet_kind::async) b[p.offset + p.size - 1] = 0x81;
      },
      [](const diagnostic&) {});
  b.insert(b.end(), 11, 0);
  b.push_back(0x80);
  return b;
}

inline std::vector<std::uint8_t> repeat_to(const std::vector<std::uint8_t>& one, std::size_t n) {
  std::vector<std::uint8_t> v;
  while (v.size() < n) v.insert(v.end(), one.begin(), one.end());
  return v;
}

// One repeat of a snapshot's trace: its bytes up to the end of the last packet after which
// the element reader holds nothing for resolution (resolver::idle()), or all of them when it
// holds nothing at the end. ete_spec_1 ends with two P0 elements waiting for a Commit beyond
// its end. Repeated whole, they would be carried into the next repeat, whose Trace Info says
// SPEC 0 (D5.7) while they are outstanding: a stream no trace unit makes. The resolution queue
// initializes only once (D9.3.2.1), so it would grow by each repeat's leftovers until
// MAXSPEC's implied commits held it 255 P0 elements deep, and no repeat would decode like the
// first. That case has a benchmark of its own (deep_speculation_corpus()).
inline std::vector<std::uint8_t> repeat_unit(const registers& regs, const std::vector<std::uint8_t>& bytes) {
  std::vector<std::uint64_t> ends;
  decoder<> d(regs);
  d.decode(bytes.data(), bytes.size(), [&](const packet& p) { ends.push_back(p.offset + p.size); },
           [](const diagnostic&) {});
  auto r = std::make_unique<element_reader<>>(regs);
  std::uint64_t from = 0, idle_at = 0;
  for (const std::uint64_t e : ends) {
    r->decode_part(bytes.data() + from, e - from, [](const element&) {}, [](const diagnostic&) {});
    from = e;
    if (r->resolution().idle()) idle_at = e;
  }
  if (idle_at == 0 || idle_at == bytes.size()) return bytes;
  return {bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(idle_at)};
}

inline std::string conformance_dir() {
  const char* env = std::getenv("TRACECODEC_CONFORMANCE_DIR");
  return env ? env : "../shared/conformance/ete";
}

// The packet corpora (each at least `size` bytes): the synthetic trace and ETE snapshots. With
// `only`, just the corpus of that name. A snapshot that cannot be read is left out (named on
// stderr).
inline std::vector<corpus> load_corpora(std::size_t size, const char* only = nullptr) {
  std::vector<corpus> cs;
  const auto wanted = [&](const char* name) { return !only || std::strcmp(only, name) == 0; };
  if (wanted("synthetic")) cs.push_back({"synthetic", synthetic_regs, synthetic_trace(size), {}, {}});
  const std::string dir = conformance_dir();
  for (const char* name : ete_corpus_names) {
    if (!wanted(name)) continue;
    const auto snap = snapshot::load(dir + "/snapshots/" + name);
    if (!snap.error.empty() || snap.buffers.empty()) {
      std::fprintf(stderr, "corpus %s left out: %s\n", name, snap.error.empty() ? "no buffer" : snap.error.c_str());
      continue;
    }
    const registers& regs = snap.buffers[0].regs;
    const std::vector<std::uint8_t> unit = repeat_unit(regs, snap.buffers[0].data);
    cs.push_back({name, regs, repeat_to(unit, size), {}, {}, unit.size()});
  }
  return cs;
}

// ete_spec_1 repeated whole (see repeat_unit()): a stream whose resolution queue stays about
// MAXSPEC (255) P0 elements deep, so that every Commit resolves at the head of a long queue.
// A stress case for the resolver; empty when the snapshot is missing.
inline constexpr const char* deep_speculation_name = "ete_spec_1-deep";
inline std::vector<corpus> deep_speculation_corpus(std::size_t size) {
  const auto snap = snapshot::load(conformance_dir() + "/snapshots/ete_spec_1");
  if (!snap.error.empty() || snap.buffers.empty()) return {};
  std::vector<corpus> cs;
  cs.push_back({deep_speculation_name, snap.buffers[0].regs, repeat_to(snap.buffers[0].data, size), {}, {}});
  return cs;
}

// A program-flow corpus: a snapshot's first trace buffer (repeated to at least the size asked for)
// with its source's registers and the core's memory image. BM_ete_flow and BM_opencsd_flow
// run over these, and the instruction-count gate.
struct flow_corpus {
  std::string name;
  registers regs;
  std::uint32_t trctraceidr = 0;
  tracecodec::arm::arch_version arch = tracecodec::arm::arch_version::newest;  // from the snapshot's core type
  std::vector<std::uint8_t> bytes;
  std::size_t repeat_size = 0;  // bytes of one copy of the snapshot's buffer
  snapshot::loaded image;  // owns the memory dumps; image.regions point into them
  const std::vector<memory_region>& regions() const { return image.regions; }
};

// The snapshots with memory images whose first buffer OpenCSD 1.3.3 decodes to thousands of
// instruction ranges (ranges per snapshot buffer: 001-ack_test 22434, trace_file_cid_vmid
// 6958, src_addr 2702, ete_mem 2008, maxspec0_commopt1 1673).
inline constexpr const char* flow_snapshots[] = {"001-ack_test", "trace_file_cid_vmid", "src_addr",
                                          "ete_mem", "maxspec0_commopt1"};

// Flow corpora with memory images (each trace at least `size` bytes); with `only`, just that one.
// Without OpenCSD's check (the benchmark adds it): the caller decides what a corpus must yield.
inline std::vector<flow_corpus> load_flow_corpora(std::size_t size, const char* only = nullptr) {
  std::vector<flow_corpus> fs;
  const std::string dir = conformance_dir();
  for (const char* name : flow_snapshots) {
    if (only && std::strcmp(only, name) != 0) continue;
    snapshot::loaded snap = snapshot::load(dir + "/snapshots/" + name);
    if (!snap.error.empty() || snap.buffers.empty() || snap.buffers[0].data.empty()) continue;
    if (!snap.memory_error.empty() || snap.regions.empty()) {
      std::fprintf(stderr, "ete-bench: flow corpus %s skipped: no memory image (%s)\n", name,
                   snap.memory_error.c_str());
      continue;
    }
    flow_corpus c;
    c.name = name;
    const snapshot::buffer& b = snap.buffers[0];
    c.regs = b.regs;
    c.trctraceidr = b.trctraceidr;
    c.arch = snap.arch;
    c.bytes = repeat_to(b.data, size);
    c.repeat_size = b.data.size();
    c.image = std::move(snap);  // the regions' bytes move with it
    fs.push_back(std::move(c));
  }
  return fs;
}

// ETMv4 packet corpora: the busiest trace ID of each formatted ETMv4 capture of
// ../shared/conformance/etmv4 (next to the ETE corpus), deformatted, from its first A-Sync to
// its last (whole sections, so every repeat decodes alike), repeated to at least `size` bytes;
// named etmv4-<capture>.
inline std::vector<corpus> load_etmv4_corpora(std::size_t size, const char* only = nullptr) {
  std::vector<corpus> cs;
  for (const char* name : etmv4_corpus_names) {
    if (only && std::string("etmv4-") + name != only) continue;
    snapshot::load_options opt;
    opt.read_memory = false;
    const auto snap = snapshot::load(conformance_dir() + "/../etmv4/snapshots/" + name, opt);
    if (!snap.error.empty() || snap.buffers.empty()) {
      std::fprintf(stderr, "ETMv4 corpus %s skipped: %s\n", name, snap.error.c_str());
      continue;
    }
    const snapshot::buffer& b = snap.buffers[0];
    std::vector<std::uint8_t> streams[128];
    tracecodec::coresight::deformatter d;
    d.decode(
        b.data.data(), b.data.size(),
        [&](std::uint8_t id, const std::uint8_t* p, std::size_t n, std::uint64_t) {
          streams[id & 0x7f].insert(streams[id & 0x7f].end(), p, p + n);
        },
        [](const tracecodec::coresight::diagnostic&) {});
    const snapshot::trace_source* busiest = nullptr;
    for (const snapshot::trace_source& t : b.sources)
      if (t.decodable && t.trctraceidr < 128 &&
          (!busiest || streams[t.trctraceidr].size() > streams[busiest->trctraceidr].size()))
        busiest = &t;
    if (!busiest) continue;
    const std::vector<std::uint8_t>& all = streams[busiest->trctraceidr];
    std::uint64_t first = ~std::uint64_t{0}, last = 0;
    decoder<> dec(busiest->regs);
    dec.decode(all.data(), all.size(),
               [&](const packet& p) {
                 if (p.kind != packet_kind::async) return;
                 first = std::min(first, p.offset);
                 last = p.offset;
               },
               [](const diagnostic&) {});
    if (first >= last) continue;
    const std::vector<std::uint8_t> one(all.begin() + static_cast<std::ptrdiff_t>(first),
                                        all.begin() + static_cast<std::ptrdiff_t>(last));
    corpus c{std::string("etmv4-") + name, busiest->regs, repeat_to(one, size), {}, {}};
    decoder<> again(c.regs);
    again.decode(c.bytes.data(), c.bytes.size(), [&](const packet& p) { c.packets.push_back(p); },
                 [](const diagnostic&) {});
    cs.push_back(std::move(c));
  }
  return cs;
}

// The first `packets` packets of corpus c (its packets decoded: decode_into(); it begins with
// an A-Sync), repeated to at least `size` bytes, named <c.name>-<packets>-packets; empty when c
// is shorter. Every repeat begins with that A-Sync; repeat_size is set for repeats_alike(). A
// short repeat lets the branch predictor learn the stream's packet sequence, as it learns the
// ETE snapshots' (bench/README.md, "ETMv4 packet decode: a stream the branch predictor cannot
// learn").
inline std::vector<corpus> repeated_section(const corpus& c, std::size_t packets, std::size_t size) {
  if (packets == 0 || c.packets.size() <= packets || c.packets[0].kind != packet_kind::async ||
      c.packets[0].offset != 0)
    return {};
  const auto end = c.bytes.begin() + static_cast<std::ptrdiff_t>(c.packets[packets].offset);
  const std::vector<std::uint8_t> one(c.bytes.begin(), end);
  corpus r{c.name + "-" + std::to_string(packets) + "-packets", c.regs, repeat_to(one, size), {}, {}};
  r.repeat_size = one.size();
  std::vector<corpus> v;
  v.push_back(std::move(r));
  return v;
}

// The packet corpus called `name`, whichever loader makes it: an etmv4- stream, the deep
// speculation stress case or a snapshot corpus (empty when there is none).
inline std::vector<corpus> load_named(std::size_t size, const char* name) {
  if (std::strncmp(name, "etmv4-", 6) == 0) return load_etmv4_corpora(size, name);
  if (std::strcmp(name, deep_speculation_name) == 0) return deep_speculation_corpus(size);
  return load_corpora(size, name);
}

// Formatted captures: the memory-aligned ETMv4 buffers of ../shared/conformance/etmv4 (next to
// the ETE corpus), each repeated to at least `size` bytes (whole frames, so repeats stay aligned).
struct formatted_capture {
  std::string name;
  std::vector<std::uint8_t> bytes;
};
inline std::vector<formatted_capture> load_formatted_captures(std::size_t size, const char* only = nullptr) {
    std::vector<formatted_capture> v;
    const char* files[][2] = {{"juno_r1_1", "cstrace.bin"},
                              {"bugfix-exact-match", "cstrace.bin"},
                              {"juno-uname-001", "uname_trace.bin"},
                              {"a57_single_step", "CSTMC_TRACE_FIFO.bin"}};
    for (const auto& f : files) {
      if (only && std::strcmp(only, f[0]) != 0) continue;
      const std::string path = conformance_dir() + "/../etmv4/snapshots/" + f[0] + "/" + f[1];
      std::FILE* fp = std::fopen(path.c_str(), "rb");
      if (!fp) {
        std::fprintf(stderr, "formatted capture %s skipped: cannot read %s\n", f[0], path.c_str());
        continue;
      }
      std::vector<std::uint8_t> one;
      std::uint8_t buf[65536];
      for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, fp)) != 0;) one.insert(one.end(), buf, buf + n);
      std::fclose(fp);
      one.resize(one.size() / 16 * 16);
      if (one.empty()) continue;
      v.push_back({f[0], repeat_to(one, size)});
    }
    return v;
}

}  // namespace bench
