// SPDX-License-Identifier: Apache-2.0
// Throughput of the ETE codec, side by side with OpenCSD on the same bytes.
//   BM_ete_decode/<corpus>     bytes -> fully resolved packets, every field read by a consumer
//   BM_opencsd_decode/<corpus> OpenCSD's packet processor (C API, packet sink counting packets)
//   BM_ete_elements/<corpus>   bytes -> packets -> elements -> speculation resolved (atom
//                              runs: one Atom element per atom packet)
//   BM_ete_atom_elements/<corpus>  the same with one Atom element per atom
//   BM_ete_encode/<corpus>     packets -> bytes (the packet encoder): the encoder's own time,
//                              one call per 4096-packet window of freshly built packets
//   BM_ete_encode_each/<corpus>  the same, one call per packet
//   BM_ete_encode_streamed/<corpus>  all packets in one call, streamed from memory
//   BM_ete_compress/<corpus>   resolved elements -> shortest packets (the element compressor)
//   BM_packet_read/<corpus>    reading the streamed encoder's input packets only: its memory floor
//   BM_ete_flow/<flow corpus>  bytes -> program flow (ete/flow/: instruction ranges, exceptions,
//                              context, ... with the snapshot's memory image), every field read
//   BM_opencsd_flow/<flow corpus>  OpenCSD's full decode (ETE decoder, the snapshot's memory
//                              image): bytes -> instruction ranges, counted
//   BM_coresight_deformat/<capture>  CoreSight formatted frames -> each trace ID's bytes
//                              (coresight::deformatter, batches: on_data(const data_batch&);
//                              a consumer summing every byte per ID, inlined)
//   BM_coresight_deformat_called/<capture>  the same, the consumer out of line (noinline)
//   BM_coresight_deformat_runs/<capture>  the same through the per-run API (on_data per run
//                              of at most 15 bytes)
//   BM_opencsd_deformat/<capture>  OpenCSD's frame deformatter (C API decode tree, memory-
//                              aligned frames, no decoder attached: frames unpacked, data dropped)
// Corpora: a synthetic mixed trace made by the encoder (runs without ../shared), and real
// snapshots from ../shared/conformance/ete repeated to at least 8 MiB (each repeat starts at
// the snapshot's own A-Sync, so every repeat decodes exactly like the first); for
// BM_ete_decode and BM_opencsd_decode also ETMv4 streams (etmv4-<capture>: the busiest trace ID
// of a formatted capture of ../shared/conformance/etmv4, from its first A-Sync to its last). Flow corpora:
// snapshots with memory images (flow_corpora()), repeated the same way.
#include <benchmark/benchmark.h>

#include <tracecodec/coresight/deformatter.hpp>
#include <tracecodec/ete/element/compressor.hpp>
#include <tracecodec/ete/element/reader.hpp>
#include <tracecodec/ete/flow/decoder.hpp>
#include <tracecodec/host/ete/snapshot.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "synthetic.hpp"
#ifdef TRACECODEC_HAVE_OPENCSD
#include "opencsd.hpp"
#endif

using namespace tracecodec::ete;

namespace {

struct corpus {
  std::string name;
  registers regs;
  std::vector<std::uint8_t> bytes;
  std::vector<packet> packets;
  std::vector<element> elements;
};

constexpr std::size_t corpus_bytes = 8u << 20;

std::vector<std::uint8_t> repeat_to(const std::vector<std::uint8_t>& one, std::size_t n) {
  std::vector<std::uint8_t> v;
  while (v.size() < n) v.insert(v.end(), one.begin(), one.end());
  return v;
}

std::string conformance_dir() {
  const char* env = std::getenv("TRACECODEC_CONFORMANCE_DIR");
  return env ? env : "../shared/conformance/ete";
}

std::vector<corpus> load_corpora() {
  std::vector<corpus> cs;
  cs.push_back({"synthetic", bench::synthetic_regs, bench::synthetic_trace(corpus_bytes), {}, {}});
  const std::string dir = conformance_dir();
  for (const char* name : {"001-ack_test", "trace_file_cid_vmid", "maxspec0_commopt1", "src_addr", "ts_marker"}) {
    const auto snap = snapshot::load(dir + "/snapshots/" + name);
    if (!snap.error.empty() || snap.buffers.empty()) continue;
    cs.push_back({name, snap.buffers[0].regs, repeat_to(snap.buffers[0].data, corpus_bytes), {}, {}});
  }
  for (corpus& c : cs) {
    decoder<> d(c.regs);
    d.decode(c.bytes.data(), c.bytes.size(), [&](const packet& p) { c.packets.push_back(p); },
             [](const diagnostic&) {});
    auto r = std::make_unique<element_reader<>>(c.regs);
    r->decode(c.bytes.data(), c.bytes.size(), [&](const element& e) { c.elements.push_back(e); },
              [](const diagnostic&) {});
  }
  return cs;
}

// A program-flow corpus: a snapshot's first trace buffer (repeated to at least corpus_bytes)
// with its source's registers and the core's memory image. BM_opencsd_flow runs over these;
// a tracecodec flow benchmark registers over the same list.
struct flow_corpus {
  std::string name;
  registers regs;
  std::uint32_t trctraceidr = 0;
  tracecodec::arm::arch_version arch = tracecodec::arm::arch_version::newest;  // from the snapshot's core type
  std::vector<std::uint8_t> bytes;
  snapshot::loaded image;  // owns the memory dumps; image.regions point into them
  const std::vector<memory_region>& regions() const { return image.regions; }
};

// The snapshots with memory images whose first buffer OpenCSD 1.3.3 decodes to thousands of
// instruction ranges (ranges per snapshot buffer: 001-ack_test 22434, trace_file_cid_vmid
// 6958, src_addr 2702, ete_mem 2008, maxspec0_commopt1 1673).
constexpr const char* flow_snapshots[] = {"001-ack_test", "trace_file_cid_vmid", "src_addr",
                                          "ete_mem", "maxspec0_commopt1"};

std::vector<flow_corpus> load_flow_corpora() {
  std::vector<flow_corpus> fs;
  const std::string dir = conformance_dir();
  for (const char* name : flow_snapshots) {
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
    c.bytes = repeat_to(b.data, corpus_bytes);
#ifdef TRACECODEC_HAVE_OPENCSD
    // OpenCSD must find the code: a corpus that yields no instruction ranges (every address
    // inaccessible, say) would measure nothing.
    const bench::opencsd_flow_result r = bench::opencsd_flow(
        c.regs, c.trctraceidr, c.arch, snap.regions.data(), snap.regions.size(), b.data.data(), b.data.size());
    if (!r.ok || r.ranges == 0) {
      std::fprintf(stderr, "ete-bench: flow corpus %s skipped: OpenCSD decodes %llu instruction ranges "
                   "(%llu inaccessible), ok=%d\n", name, static_cast<unsigned long long>(r.ranges),
                   static_cast<unsigned long long>(r.nacc), r.ok ? 1 : 0);
      continue;
    }
#endif
    c.image = std::move(snap);  // the regions' bytes move with it
    fs.push_back(std::move(c));
  }
  return fs;
}

const std::vector<flow_corpus>& flow_corpora() {
  static const std::vector<flow_corpus> fs = load_flow_corpora();
  return fs;
}

// Reads every field a consumer would, so the decode work cannot be optimized away.
struct consumer {
  std::uint64_t acc = 0;
  void operator()(const packet& p) noexcept {
    acc += p.address ^ p.timestamp ^ p.atoms ^ p.count ^ p.cycles ^ p.ctx.context_id ^ p.ctx.vmid ^
           p.ctx.el ^ static_cast<unsigned>(p.kind) ^ p.offset ^ p.size ^ p.exception_type;
  }
};

void ete_decode(benchmark::State& state, const corpus* c) {
  for (auto _ : state) {
    decoder<> d(c->regs);
    consumer sink;
    std::uint64_t errors = 0;
    d.decode(c->bytes.data(), c->bytes.size(), [&](const packet& p) { sink(p); },
             [&](const diagnostic&) { ++errors; });
    benchmark::DoNotOptimize(sink.acc);
    if (errors) state.SkipWithError("decode errors");
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c->bytes.size()));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * c->packets.size()));
}

#ifdef TRACECODEC_HAVE_OPENCSD
void opencsd_decode(benchmark::State& state, const corpus* c) {
  std::uint64_t packets = 0;
  for (auto _ : state) {
    const bench::opencsd_result r = bench::opencsd_packets(c->regs, c->bytes.data(), c->bytes.size());
    if (!r.ok || r.bad) state.SkipWithError("OpenCSD reported errors");
    packets += r.packets;
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c->bytes.size()));
  state.SetItemsProcessed(static_cast<std::int64_t>(packets));
}
#endif

// The flow decoder over the snapshot's memory image; a consumer reads every field of every
// element. The block cache starts cold in each iteration (a new decoder).
void ete_flow(benchmark::State& state, const flow_corpus* c) {
  std::uint64_t ranges = 0, instructions = 0;
  program_image image(c->regions().data(), c->regions().size());
  flow_options o;
  o.arch = c->arch;
  auto fd = std::make_unique<flow_decoder<>>(c->regs, image, o);
  for (auto _ : state) {
    *fd = flow_decoder<>(c->regs, image, o);
    std::uint64_t acc = 0, errors = 0;
    fd->decode(c->bytes.data(), c->bytes.size(),
               [&](const flow_element& f) {
                 acc += f.offset ^ f.address ^ f.end ^ f.timestamp ^ f.count ^ f.ctx.context_id ^
                        static_cast<unsigned>(f.kind) ^ static_cast<unsigned>(f.last_type) ^
                        static_cast<unsigned>(f.last_subtype) ^ f.taken ^ f.conditional ^ f.number;
                 if (f.kind == flow_kind::instruction_range) {
                   ++ranges;
                   instructions += f.count;
                 }
               },
               [&](const diagnostic&) { ++errors; });
    benchmark::DoNotOptimize(acc);
    if (errors) state.SkipWithError("decode errors");
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c->bytes.size()));
  state.counters["instructions"] = benchmark::Counter(static_cast<double>(instructions), benchmark::Counter::kIsRate);
  state.counters["ranges"] = benchmark::Counter(static_cast<double>(ranges), benchmark::Counter::kIsRate);
}

#ifdef TRACECODEC_HAVE_OPENCSD
void opencsd_flow(benchmark::State& state, const flow_corpus* c) {
  std::uint64_t ranges = 0, instructions = 0;
  for (auto _ : state) {
    const bench::opencsd_flow_result r = bench::opencsd_flow(
        c->regs, c->trctraceidr, c->arch, c->regions().data(), c->regions().size(), c->bytes.data(), c->bytes.size());
    if (!r.ok || r.ranges == 0) state.SkipWithError("OpenCSD full decode failed");
    ranges += r.ranges;
    instructions += r.instructions;
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c->bytes.size()));
  state.counters["instructions"] = benchmark::Counter(static_cast<double>(instructions), benchmark::Counter::kIsRate);
  state.counters["ranges"] = benchmark::Counter(static_cast<double>(ranges), benchmark::Counter::kIsRate);
}
#endif

// Committed elements; with atom runs (element_reader::atom_runs) an atom packet's atoms come
// as one element. Items: committed elements counted one per atom either way.
void elements(benchmark::State& state, const corpus* c, bool runs) {
  auto r = std::make_unique<element_reader<>>(c->regs);
  for (auto _ : state) {
    *r = element_reader<>(c->regs);
    r->atom_runs(runs);
    std::uint64_t acc = 0, n = 0;
    r->decode(c->bytes.data(), c->bytes.size(),
              [&](const element& e) {
                acc += e.address ^ e.timestamp ^ e.count ^ e.cycles ^ e.atom_bits ^
                       static_cast<unsigned>(e.kind) ^ e.taken ^ e.ctx.context_id ^ e.offset;
                n += e.kind == element_kind::atom ? atom_count(e) : 1u;
              },
              [](const diagnostic&) {});
    benchmark::DoNotOptimize(acc);
    if (n != c->elements.size()) state.SkipWithError("element count changed");
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c->bytes.size()));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * c->elements.size()));
}
void ete_elements(benchmark::State& state, const corpus* c) { elements(state, c, true); }
void ete_atom_elements(benchmark::State& state, const corpus* c) { elements(state, c, false); }

// The encoder's own time, as a producer that builds packets and then encodes them sees it:
// each 4096-packet window of the corpus is copied into a staging buffer (288 KiB: the
// producer building its packets; not timed) and then encoded, by one
// encode(packets, count, ...) call (Batch) or one encode(packet, ...) call per packet. Only
// the encoding is timed (manual time). The output is the corpus, byte-exact.
template <bool Batch>
void encode_windows(benchmark::State& state, const corpus* c) {
  constexpr std::size_t window = 4096;
  std::vector<packet> stage(window);
  std::vector<std::uint8_t> out(window * 32 + 64);
  for (auto _ : state) {
    encoder<> e(c->regs);
    std::size_t total = 0;
    bool same = true;
    double seconds = 0;
    for (std::size_t w0 = 0; w0 < c->packets.size(); w0 += window) {
      const std::size_t n = std::min(window, c->packets.size() - w0);
      std::copy(c->packets.begin() + static_cast<std::ptrdiff_t>(w0),
                c->packets.begin() + static_cast<std::ptrdiff_t>(w0 + n), stage.begin());
      benchmark::ClobberMemory();
      const auto t0 = std::chrono::steady_clock::now();
      std::size_t size = 0;
      bool ok = true;
      if constexpr (Batch) {
        const encode_many_result r = e.encode(stage.data(), n, out.data(), out.size());
        size = r.size;
        ok = r && r.packets == n;
      } else {
        for (std::size_t i = 0; i < n; ++i) {
          const encode_result r = e.encode(stage[i], out.data() + size, out.size() - size);
          size += r.size;
          ok = ok && r;
        }
      }
      benchmark::DoNotOptimize(out.data());
      benchmark::ClobberMemory();
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      same = same && ok && total + size <= c->bytes.size() &&
             std::equal(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(size),
                        c->bytes.begin() + static_cast<std::ptrdiff_t>(total));
      total += size;
    }
    state.SetIterationTime(seconds);
    if (total != c->bytes.size() || !same) state.SkipWithError("encode mismatch");
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c->bytes.size()));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * c->packets.size()));
}
void ete_encode(benchmark::State& state, const corpus* c) { encode_windows<true>(state, c); }
void ete_encode_each(benchmark::State& state, const corpus* c) { encode_windows<false>(state, c); }

// The whole corpus (8 MiB of output, 600 MB or so of 72-byte packets) through one
// encode(packets, count, ...) call, its input streamed from memory: bounded by reading the
// packets (BM_packet_read) rather than by the encoder.
void ete_encode_streamed(benchmark::State& state, const corpus* c) {
  std::vector<std::uint8_t> out(c->bytes.size() + 64);
  for (auto _ : state) {
    encoder<> e(c->regs);
    const encode_many_result r = e.encode(c->packets.data(), c->packets.size(), out.data(), out.size());
    benchmark::DoNotOptimize(out.data());
    if (!r || r.size != c->bytes.size()) state.SkipWithError("encode mismatch");
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c->bytes.size()));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * c->packets.size()));
}

// The floor under BM_ete_encode_streamed: only reading the packets the encoder takes (72 bytes each,
// streamed from memory), nothing written. Reported as bytes/s of the output those packets
// encode to, so it reads as the fastest any encoder of this input could go.
void packet_read(benchmark::State& state, const corpus* c) {
  for (auto _ : state) {
    std::uint64_t acc = 0;
    for (const packet& p : c->packets)
      acc += p.address ^ p.timestamp ^ p.atoms ^ p.count ^ p.cycles ^ p.ctx.context_id ^
             static_cast<unsigned>(p.kind) ^ p.size;
    benchmark::DoNotOptimize(acc);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c->bytes.size()));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * c->packets.size()));
}

void ete_compress(benchmark::State& state, const corpus* c) {
  std::vector<std::uint8_t> out(c->bytes.size() * 2 + 4096);
  std::uint64_t bytes = 0;
  compressor_options opt;
  opt.input = input_kind::resolved;
  auto comp = std::make_unique<compressor<>>(c->regs, opt);
  for (auto _ : state) {
    *comp = compressor<>(c->regs, opt);
    std::size_t at = 0;
    for (const element& e : c->elements) {
      if (comp->push(e) == error_code::buffer_too_small) {
        at += comp->drain(out.data() + at, out.size() - at);
        comp->push(e);
      }
    }
    comp->finish(true);
    at += comp->drain(out.data() + at, out.size() - at);
    benchmark::DoNotOptimize(out.data());
    bytes += at;
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));  // bytes of output
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * c->elements.size()));
}

// ETMv4 packet corpora: the busiest trace ID of each formatted ETMv4 capture of
// ../shared/conformance/etmv4 (next to the ETE corpus), deformatted, from its first A-Sync to
// its last (whole sections, so every repeat decodes alike), repeated to at least 8 MiB.
std::vector<corpus> load_etmv4_corpora() {
  std::vector<corpus> cs;
  for (const char* name : {"bugfix-exact-match", "juno-uname-001", "juno_r1_1"}) {
    snapshot::load_options opt;
    opt.read_memory = false;
    const auto snap = snapshot::load(conformance_dir() + "/../etmv4/snapshots/" + name, opt);
    if (!snap.error.empty() || snap.buffers.empty()) {
      std::fprintf(stderr, "ete-bench: ETMv4 corpus %s skipped: %s\n", name, snap.error.c_str());
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
    corpus c{std::string("etmv4-") + name, busiest->regs, repeat_to(one, corpus_bytes), {}, {}};
    decoder<> again(c.regs);
    again.decode(c.bytes.data(), c.bytes.size(), [&](const packet& p) { c.packets.push_back(p); },
                 [](const diagnostic&) {});
    cs.push_back(std::move(c));
  }
  return cs;
}

// Formatted captures: the memory-aligned ETMv4 buffers of ../shared/conformance/etmv4 (next to
// the ETE corpus), each repeated to at least 8 MiB (whole frames, so repeats stay aligned).
struct formatted_capture {
  std::string name;
  std::vector<std::uint8_t> bytes;
};
const std::vector<formatted_capture>& formatted_captures() {
  static const std::vector<formatted_capture> cs = [] {
    std::vector<formatted_capture> v;
    const char* files[][2] = {{"juno_r1_1", "cstrace.bin"},
                              {"bugfix-exact-match", "cstrace.bin"},
                              {"juno-uname-001", "uname_trace.bin"},
                              {"a57_single_step", "CSTMC_TRACE_FIFO.bin"}};
    for (const auto& f : files) {
      const std::string path = conformance_dir() + "/../etmv4/snapshots/" + f[0] + "/" + f[1];
      std::FILE* fp = std::fopen(path.c_str(), "rb");
      if (!fp) {
        std::fprintf(stderr, "ete-bench: formatted capture %s skipped: cannot read %s\n", f[0], path.c_str());
        continue;
      }
      std::vector<std::uint8_t> one;
      std::uint8_t buf[65536];
      for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, fp)) != 0;) one.insert(one.end(), buf, buf + n);
      std::fclose(fp);
      one.resize(one.size() / 16 * 16);
      if (one.empty()) continue;
      v.push_back({f[0], repeat_to(one, corpus_bytes)});
    }
    return v;
  }();
  return cs;
}

// The consumer of the deformatted bytes: reads every byte (a sum per trace ID). Eight bytes at a
// time: a byte-at-a-time loop is a chain of dependent adds, one byte per cycle, slower than the
// deformatter it would measure.
struct id_sums {
  std::uint64_t per_id[128]{};
  void add(std::uint8_t id, const std::uint8_t* p, std::size_t n) {
    std::uint64_t pairs = 0;  // byte pairs in 16-bit lanes (a batch: at most 960 bytes, no overflow)
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      std::uint64_t w;
      std::memcpy(&w, p + i, 8);
      pairs += (w & 0x00FF00FF00FF00FFull) + ((w >> 8) & 0x00FF00FF00FF00FFull);
    }
    const std::uint64_t quads = (pairs & 0x0000FFFF0000FFFFull) + ((pairs >> 16) & 0x0000FFFF0000FFFFull);
    std::uint64_t sum = (quads & 0xFFFFFFFFu) + (quads >> 32);
    for (; i < n; ++i) sum += p[i];
    per_id[id] += sum + n;
  }
};

// Batches (coresight::data_batch): the consumer inlined into the decode loop.
void coresight_deformat(benchmark::State& state, const formatted_capture* c) {
  id_sums sums;
  for (auto _ : state) {
    tracecodec::coresight::deformatter d;
    auto on_data = [&](const tracecodec::coresight::data_batch& b) { sums.add(b.id, b.bytes, b.size); };
    auto on_error = [](const tracecodec::coresight::diagnostic&) {};
    d.decode(c->bytes.data(), c->bytes.size(), on_data, on_error);
    benchmark::DoNotOptimize(sums.per_id);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c->bytes.size()));
}

// Batches, the consumer out of line (a call per batch that the compiler cannot inline).
[[gnu::noinline]] void consume_batch(id_sums& sums, const tracecodec::coresight::data_batch& b) {
  sums.add(b.id, b.bytes, b.size);
}
void coresight_deformat_called(benchmark::State& state, const formatted_capture* c) {
  id_sums sums;
  for (auto _ : state) {
    tracecodec::coresight::deformatter d;
    auto on_data = [&](const tracecodec::coresight::data_batch& b) { consume_batch(sums, b); };
    auto on_error = [](const tracecodec::coresight::diagnostic&) {};
    d.decode(c->bytes.data(), c->bytes.size(), on_data, on_error);
    benchmark::DoNotOptimize(sums.per_id);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c->bytes.size()));
}

// Runs (on_data per run of at most 15 bytes), the consumer inlined: the first API's rate.
void coresight_deformat_runs(benchmark::State& state, const formatted_capture* c) {
  id_sums sums;
  for (auto _ : state) {
    tracecodec::coresight::deformatter d;
    auto on_data = [&](std::uint8_t id, const std::uint8_t* p, std::size_t n, std::uint64_t) { sums.add(id, p, n); };
    auto on_error = [](const tracecodec::coresight::diagnostic&) {};
    d.decode(c->bytes.data(), c->bytes.size(), on_data, on_error);
    benchmark::DoNotOptimize(sums.per_id);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c->bytes.size()));
}

#ifdef TRACECODEC_HAVE_OPENCSD
void opencsd_deformat(benchmark::State& state, const formatted_capture* c) {
  for (auto _ : state)
    if (!bench::opencsd_deformat(c->bytes.data(), c->bytes.size())) state.SkipWithError("OpenCSD refused the capture");
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c->bytes.size()));
}
#endif

// Registers benchmark `what`/<corpus name> of fn over corpus c, timed in milliseconds.
template <class Corpus>
benchmark::internal::Benchmark* register_on(const char* what, void (*fn)(benchmark::State&, const Corpus*),
                                            const Corpus& c) {
  return benchmark::RegisterBenchmark((std::string(what) + "/" + c.name).c_str(), fn, &c)
      ->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
  static const std::vector<corpus> corpora = load_corpora();
  for (const corpus& c : corpora) {
    register_on("BM_ete_decode", ete_decode, c);
#ifdef TRACECODEC_HAVE_OPENCSD
    register_on("BM_opencsd_decode", opencsd_decode, c);
#endif
    register_on("BM_ete_elements", ete_elements, c);
    register_on("BM_ete_atom_elements", ete_atom_elements, c);
    register_on("BM_ete_encode", ete_encode, c)->UseManualTime();
    register_on("BM_ete_encode_each", ete_encode_each, c)->UseManualTime();
    register_on("BM_ete_encode_streamed", ete_encode_streamed, c);
    register_on("BM_ete_compress", ete_compress, c);
    register_on("BM_packet_read", packet_read, c);
  }
  // ETMv4: packet decode, side by side with OpenCSD (issue 17).
  static const std::vector<corpus> etmv4 = load_etmv4_corpora();
  for (const corpus& c : etmv4) {
    register_on("BM_ete_decode", ete_decode, c);
#ifdef TRACECODEC_HAVE_OPENCSD
    register_on("BM_opencsd_decode", opencsd_decode, c);
#endif
  }
  for (const flow_corpus& c : flow_corpora()) {
    register_on("BM_ete_flow", ete_flow, c);
#ifdef TRACECODEC_HAVE_OPENCSD
    register_on("BM_opencsd_flow", opencsd_flow, c);
#endif
  }
  for (const formatted_capture& c : formatted_captures()) {
    register_on("BM_coresight_deformat", coresight_deformat, c);
    register_on("BM_coresight_deformat_called", coresight_deformat_called, c);
    register_on("BM_coresight_deformat_runs", coresight_deformat_runs, c);
#ifdef TRACECODEC_HAVE_OPENCSD
    register_on("BM_opencsd_deformat", opencsd_deformat, c);
#endif
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
