// SPDX-License-Identifier: Apache-2.0
// Throughput of the ETE codec, side by side with OpenCSD on the same bytes.
//   BM_ete_decode/<corpus>     bytes -> fully resolved packets, every field read by a consumer
//   BM_opencsd_decode/<corpus> OpenCSD's packet processor (C API, packet sink counting packets)
//   BM_decode_paired/<corpus>  the two above in turn, a pass of each per iteration, each timed:
//                              the median ratio of the pairs (counter ratio)
//   BM_ete_elements/<corpus>   bytes -> packets -> elements -> speculation resolved (atom
//                              runs: one Atom element per atom packet)
//   BM_ete_atom_elements/<corpus>  the same with one Atom element per atom
//   BM_ete_parallel_decode/<corpus>/threads:N, BM_ete_parallel_elements/<corpus>/threads:N
//                              the corpus repeated to 64 MiB: packets, and committed elements
//                              with atom runs, serially (N = 1) or by host/ete/parallel.hpp
//                              (N = 2); wall-clock time. _by_segment: each segment to a
//                              consumer of its own (decode_*_by_segment), the sums added up
//   BM_ete_parallel_flow/<corpus>/threads:1, BM_ete_parallel_flow_by_segment/<corpus>/threads:2
//                              program flow the same way, on the flow corpora
//   BM_ete_decode_opaque/<corpus>, BM_ete_elements_opaque/<corpus>  BM_ete_decode and
//                              BM_ete_elements with the consumer in another translation unit
//                              (opaque_consumer.cpp): a call per packet or element that the
//                              compiler cannot inline (issue 18)
//   BM_ete_encode/<corpus>     packets -> bytes (the packet encoder): the encoder's own time,
//                              one call per 4096-packet window of freshly built packets
//   BM_ete_encode_each/<corpus>  the same, one call per packet
//   BM_ete_encode_streamed/<corpus>  all packets in one call, streamed from memory
//   BM_ete_compress/<corpus>   resolved elements -> shortest packets (the element compressor),
//                              a push() per element
//   BM_ete_compress_array/<corpus>  the same through push(elements, count)
//   BM_packet_read/<corpus>    reading the streamed encoder's input packets only: its memory floor
//   BM_ete_resync/<corpus>, BM_opencsd_resync/<corpus>  a decoder searching the corpus, its
//                              A-Syncs broken, for the one A-Sync appended (issue 18 item 1);
//                              BM_async_search_{scalar,sse2,avx2}/<corpus> the search alone
//   BM_ete_flow/<flow corpus>  bytes -> program flow (ete/flow/: instruction ranges, exceptions,
//                              context, ... with the snapshot's memory image), every field read
//   BM_ete_flow_without_memo/<flow corpus>  the same without the memo of atom elements
//   BM_opencsd_flow/<flow corpus>  OpenCSD's full decode (ETE decoder, the snapshot's memory
//                              image): bytes -> instruction ranges, counted
//   BM_flow_paired/<flow corpus>  BM_ete_flow and BM_opencsd_flow in turn, as BM_decode_paired
//   BM_coresight_deformat/<capture>  CoreSight formatted frames -> each trace ID's bytes
//                              (coresight::deformatter, batches: on_data(const data_batch&);
//                              a consumer summing every byte per ID, inlined)
//   BM_coresight_deformat_called/<capture>  the same, the consumer out of line (noinline)
//   BM_coresight_deformat_runs/<capture>  the same through the per-run API (on_data per run
//                              of at most 15 bytes)
//   BM_opencsd_deformat/<capture>  OpenCSD's frame deformatter (C API decode tree, memory-
//                              aligned frames, no decoder attached: frames unpacked, data dropped)
//   BM_opencsd_deformat_delivered/<capture>  the same with a decoder on every trace ID (OpenCSD's
//                              custom-decoder C API) giving its bytes to BM_coresight_deformat's
//                              consumer; fails unless the per-ID sums equal coresight::deformatter's
// Corpora: a synthetic mixed trace made by the encoder (runs without ../shared), and real
// snapshots from ../shared/conformance/ete repeated to at least 8 MiB (TRACECODEC_BENCH_MIB;
// the parallel benchmarks 64 MiB, TRACECODEC_BENCH_PARALLEL_MIB) (each repeat starts at
// the snapshot's own A-Sync and ends where nothing waits for resolution, so every repeat
// decodes exactly like the first: bench::repeat_unit); ete_spec_1-deep, ete_spec_1 repeated
// whole, whose resolution queue stays about MAXSPEC deep (decode, elements and parallel
// elements only); for BM_ete_decode, BM_opencsd_decode and BM_decode_paired also ETMv4 streams
// (etmv4-<capture>: the busiest trace ID of a formatted capture of ../shared/conformance/etmv4,
// from its first A-Sync to its last), and etmv4-bugfix-exact-match-<N>-packets, that capture's
// first N packets repeated. Flow corpora: snapshots with memory images (flow_corpora()), each
// repeated whole.
#include <benchmark/benchmark.h>

#include <tracecodec/ete/element/compressor.hpp>
#include <tracecodec/host/ete/parallel.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "consumers.hpp"
#include "corpora.hpp"
#include "opaque_consumer.hpp"
#ifdef TRACECODEC_HAVE_OPENCSD
#include "opencsd.hpp"
#endif

using namespace tracecodec::ete;
using bench::corpus;
using bench::flow_corpus;
using bench::formatted_capture;

namespace {

// Corpus sizes in MiB: 8 (each corpus) and 64 (parallel decode) unless the environment says
// otherwise (TRACECODEC_BENCH_MIB, TRACECODEC_BENCH_PARALLEL_MIB). The smoke test (meson.build)
// runs every benchmark once on small inputs: the code paths are the same, the set-up is not
// most of the test suite's time.
std::size_t mib_from_env(const char* name, std::size_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback << 20;
  char* end = nullptr;
  const unsigned long n = std::strtoul(v, &end, 10);
  if (*end != '\0' || n == 0 || n > 4096) {
    std::fprintf(stderr, "ete-bench: %s=%s is not a size in MiB (1-4096)\n", name, v);
    std::exit(2);
  }
  return static_cast<std::size_t>(n) << 20;
}
const std::size_t corpus_bytes = mib_from_env("TRACECODEC_BENCH_MIB", 8);

std::vector<corpus> load_corpora() {
  std::vector<corpus> cs = bench::load_corpora(corpus_bytes);
  for (corpus& c : cs) {
    bench::decode_into(c);
    if (!bench::repeats_alike(c)) {  // the benchmark would time a stream unlike the snapshot
      std::fprintf(stderr, "ete-bench: corpus %s: a repeat decodes unlike the first\n", c.name.c_str());
      std::exit(1);
    }
  }
  return cs;
}

// The flow corpora OpenCSD decodes too: a corpus that yields no instruction ranges for it
// (every address inaccessible, say) would measure nothing.
const std::vector<flow_corpus>& flow_corpora() {
  static const std::vector<flow_corpus> fs = [] {
    std::vector<flow_corpus> v = bench::load_flow_corpora(corpus_bytes);
#ifdef TRACECODEC_HAVE_OPENCSD
    std::erase_if(v, [](const flow_corpus& c) {
      const bench::opencsd_flow_result r = bench::opencsd_flow(
          c.regs, c.trctraceidr, c.arch, c.regions().data(), c.regions().size(), c.bytes.data(), c.repeat_size);
      if (r.ok && r.ranges != 0) return false;
      std::fprintf(stderr, "ete-bench: flow corpus %s skipped: OpenCSD decodes %llu instruction ranges "
                   "(%llu inaccessible), ok=%d\n", c.name.c_str(), static_cast<unsigned long long>(r.ranges),
                   static_cast<unsigned long long>(r.nacc), r.ok ? 1 : 0);
      return true;
    });
#endif
    return v;
  }();
  return fs;
}

const std::vector<formatted_capture>& formatted_captures() {
  static const std::vector<formatted_capture> cs = bench::load_formatted_captures(corpus_bytes);
  return cs;
}

// Reads every field a consumer would, so the decode work cannot be optimized away.
struct consumer {
  std::uint64_t acc = 0;
  void operator()(const packet& p) noexcept { acc += bench::fields(p); }
};

// One pass of BM_ete_decode (Opaque: of BM_ete_decode_opaque) over c: the errors it reported.
template <bool Opaque>
std::uint64_t decode_pass(const corpus& c) {
  decoder<> d(c.regs);
  consumer sink;
  std::uint64_t errors = 0;
  d.decode(c.bytes.data(), c.bytes.size(),
           [&](const packet& p) {
             if constexpr (Opaque)
               bench::read_packet(sink.acc, p);
             else
               sink(p);
           },
           [&](const diagnostic&) { ++errors; });
  benchmark::DoNotOptimize(sink.acc);
  return errors;
}

template <bool Opaque>
void decode_packets(benchmark::State& state, const corpus* c) {
  for (auto _ : state) {
    if (decode_pass<Opaque>(*c)) state.SkipWithError("decode errors");
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c->bytes.size()));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * c->packets.size()));
}
void ete_decode(benchmark::State& state, const corpus* c) { decode_packets<false>(state, c); }
void ete_decode_opaque(benchmark::State& state, const corpus* c) { decode_packets<true>(state, c); }

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

// Paired passes: tracecodec's pass and OpenCSD's over the same bytes in turn, each pair in
// the other order than the last, each pass timed on its own. Two benchmarks timed apart can
// meet different loads of a shared machine (its other tenants come and go over seconds); the
// two passes of a pair mostly meet the same, and the median of the pairs' ratios leaves out a
// pair a burst fell on. Counters: ratio (the median of the pairs' tracecodec / OpenCSD rates),
// ratio_low and ratio_high (the lowest and highest pair), ete_MBps and opencsd_MBps (each
// side's median pass). Manual time: both passes (no bytes/s: the two sides' time together
// has no rate worth reading). A pass returns false on an error. A tracecodec pass follows an
// OpenCSD pass in half the pairs, with caches and branch predictors less warm than in
// BM_ete_decode's passes one after another.
template <class EtePass, class OpencsdPass>
void paired(benchmark::State& state, std::size_t bytes, EtePass ete_pass, OpencsdPass opencsd_pass) {
  std::vector<double> ete_s, opencsd_s;
  bool failed = false;
  for (auto _ : state) {
    double t[2] = {0, 0};  // seconds: tracecodec, OpenCSD
    const bool ete_first = ete_s.size() % 2 == 0;
    for (int k = 0; k < 2 && !failed; ++k) {
      const bool ete = (k == 0) == ete_first;
      const auto t0 = std::chrono::steady_clock::now();
      failed = ete ? !ete_pass() : !opencsd_pass();
      t[ete ? 0 : 1] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    if (failed) {
      state.SkipWithError("a pass reported errors");
      break;
    }
    ete_s.push_back(t[0]);
    opencsd_s.push_back(t[1]);
    state.SetIterationTime(t[0] + t[1]);
  }
  if (failed || ete_s.empty()) return;
  std::vector<double> ratio(ete_s.size());
  for (std::size_t i = 0; i < ratio.size(); ++i) ratio[i] = opencsd_s[i] / ete_s[i];
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return (v[(v.size() - 1) / 2] + v[v.size() / 2]) / 2;
  };
  const double mb = static_cast<double>(bytes) / 1e6;
  state.counters["ratio"] = median(ratio);
  state.counters["ratio_low"] = *std::min_element(ratio.begin(), ratio.end());
  state.counters["ratio_high"] = *std::max_element(ratio.begin(), ratio.end());
  state.counters["ete_MBps"] = mb / median(ete_s);
  state.counters["opencsd_MBps"] = mb / median(opencsd_s);
}
// BM_ete_decode's pass and BM_opencsd_decode's.
void decode_paired(benchmark::State& state, const corpus* c) {
  paired(
      state, c->bytes.size(), [&] { return decode_pass<false>(*c) == 0; },
      [&] {
        const bench::opencsd_result r = bench::opencsd_packets(c->regs, c->bytes.data(), c->bytes.size());
        return r.ok && !r.bad;
      });
}
#endif

// Resynchronization (issue 18 item 1): the corpus through bench::without_asyncs().
struct resync_corpus {
  std::string name;
  registers regs;
  std::vector<std::uint8_t> bytes;
};
resync_corpus without_asyncs(const corpus& c) {
  resync_corpus r{c.name, c.regs, bench::without_asyncs(c.regs, c.bytes)};
  const auto h = detail::find_async_scalar(r.bytes.data(), r.bytes.size(), 0);
  if (h.at != r.bytes.size() - 1)
    std::fprintf(stderr, "ete-bench: resync corpus %s has an A-Sync at %zu\n", c.name.c_str(), h.at);
  return r;
}
// A decoder from the first byte: everything before the last A-Sync skipped (one
// `unsynchronized` error), then that A-Sync.
void ete_resync(benchmark::State& state, const resync_corpus* c) {
  for (auto _ : state) {
    decoder<> d(c->regs);
    std::uint64_t packets = 0, errors = 0;
    d.decode(c->bytes.data(), c->bytes.size(), [&](const packet&) { ++packets; },
             [&](const diagnostic&) { ++errors; });
    benchmark::DoNotOptimize(packets);
    if (packets != 1 || errors != 1) state.SkipWithError("not one A-Sync after one skip");
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c->bytes.size()));
}
// The search alone on each path this machine runs (detail::find_async and its paths).
template <detail::async_search_path Path>
void async_search(benchmark::State& state, const resync_corpus* c) {
  for (auto _ : state) {
    detail::async_search_result h{};
    if constexpr (Path == detail::async_search_path::scalar) {
      h = detail::find_async_scalar(c->bytes.data(), c->bytes.size(), 0);
#if TRACECODEC_ASYNC_SEARCH_X86
    } else if constexpr (Path == detail::async_search_path::sse2) {
      h = detail::find_async_sse2(c->bytes.data(), c->bytes.size(), 0);
    } else if constexpr (Path == detail::async_search_path::avx2) {
      h = detail::find_async_avx2(c->bytes.data(), c->bytes.size(), 0);
#endif
    }
    benchmark::DoNotOptimize(h);
    if (h.at != c->bytes.size() - 1) state.SkipWithError("A-Sync not found at the end");
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c->bytes.size()));
}
#ifdef TRACECODEC_HAVE_OPENCSD
void opencsd_resync(benchmark::State& state, const resync_corpus* c) {
  for (auto _ : state) {
    const bench::opencsd_result r = bench::opencsd_packets(c->regs, c->bytes.data(), c->bytes.size());
    if (!r.ok) state.SkipWithError("OpenCSD failed");
    benchmark::DoNotOptimize(r.packets);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c->bytes.size()));
}
#endif

// The flow decoder over the snapshot's memory image; a consumer reads every field of every
// element. The block cache starts cold in each pass (a new decoder, assigned to fd).
struct flow_pass_result {
  std::uint64_t ranges = 0, instructions = 0, errors = 0;
};
flow_pass_result flow_pass(const flow_corpus& c, program_image& image, const flow_options& o,
                           flow_decoder<>& fd) {
  fd = flow_decoder<>(c.regs, image, o);
  flow_pass_result r;
  std::uint64_t acc = 0;
  fd.decode(c.bytes.data(), c.bytes.size(),
            [&](const flow_element& f) {
              acc += bench::fields(f);
              if (f.kind == flow_kind::instruction_range) {
                ++r.ranges;
                r.instructions += f.count;
              }
            },
            [&](const diagnostic&) { ++r.errors; });
  benchmark::DoNotOptimize(acc);
  return r;
}
void ete_flow_with(benchmark::State& state, const flow_corpus* c, bool memo) {
  std::uint64_t ranges = 0, instructions = 0;
  program_image image(c->regions().data(), c->regions().size());
  flow_options o;
  o.arch = c->arch;
  o.memo = memo;
  auto fd = std::make_unique<flow_decoder<>>(c->regs, image, o);
  for (auto _ : state) {
    const flow_pass_result r = flow_pass(*c, image, o, *fd);
    ranges += r.ranges;
    instructions += r.instructions;
    if (r.errors) state.SkipWithError("decode errors");
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c->bytes.size()));
  state.counters["instructions"] = benchmark::Counter(static_cast<double>(instructions), benchmark::Counter::kIsRate);
  state.counters["ranges"] = benchmark::Counter(static_cast<double>(ranges), benchmark::Counter::kIsRate);
}
void ete_flow(benchmark::State& state, const flow_corpus* c) { ete_flow_with(state, c, true); }
// The same without the memo of atom elements (flow_options::memo): what the memo saves.
void ete_flow_without_memo(benchmark::State& state, const flow_corpus* c) { ete_flow_with(state, c, false); }

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
// BM_ete_flow's pass and BM_opencsd_flow's.
void flow_paired(benchmark::State& state, const flow_corpus* c) {
  program_image image(c->regions().data(), c->regions().size());
  flow_options o;
  o.arch = c->arch;
  auto fd = std::make_unique<flow_decoder<>>(c->regs, image, o);
  paired(
      state, c->bytes.size(), [&] { return flow_pass(*c, image, o, *fd).errors == 0; },
      [&] {
        const bench::opencsd_flow_result r = bench::opencsd_flow(c->regs, c->trctraceidr, c->arch, c->regions().data(),
                                                                 c->regions().size(), c->bytes.data(), c->bytes.size());
        return r.ok && r.ranges != 0;
      });
}
#endif

// Committed elements; with atom runs (element_reader::atom_runs) an atom packet's atoms come
// as one element. Items: committed elements counted one per atom either way.
template <bool Opaque = false>
void elements(benchmark::State& state, const corpus* c, bool runs) {
  auto r = std::make_unique<element_reader<>>(c->regs);
  for (auto _ : state) {
    *r = element_reader<>(c->regs);
    r->atom_runs(runs);
    std::uint64_t acc = 0, n = 0;
    r->decode(c->bytes.data(), c->bytes.size(),
              [&](const element& e) {
                if constexpr (Opaque)
                  bench::read_element(acc, e);
                else
                  acc += bench::fields(e);
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
void ete_elements_opaque(benchmark::State& state, const corpus* c) { elements<true>(state, c, true); }

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

// A push() per element, or (Array) push(elements, count) over the whole array.
template <bool Array>
void compress(benchmark::State& state, const corpus* c) {
  std::vector<std::uint8_t> out(c->bytes.size() * 2 + 4096);
  std::uint64_t bytes = 0;
  compressor_options opt;
  opt.input = input_kind::resolved;
  auto comp = std::make_unique<compressor<>>(c->regs, opt);
  for (auto _ : state) {
    *comp = compressor<>(c->regs, opt);
    std::size_t at = 0;
    if constexpr (Array) {
      for (std::size_t i = 0; i < c->elements.size();) {
        const auto r = comp->push(c->elements.data() + i, c->elements.size() - i);
        i += r.taken;
        if (r.error == error_code::buffer_too_small) at += comp->drain(out.data() + at, out.size() - at);
      }
    } else {
      for (const element& e : c->elements) {
        if (comp->push(e) == error_code::buffer_too_small) {
          at += comp->drain(out.data() + at, out.size() - at);
          comp->push(e);
        }
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
void ete_compress(benchmark::State& state, const corpus* c) { compress<false>(state, c); }
void ete_compress_array(benchmark::State& state, const corpus* c) { compress<true>(state, c); }

using bench::id_sums;

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

// OpenCSD delivering each trace ID's bytes to the same consumer as BM_coresight_deformat (a
// custom decoder per ID). Each pass's per-ID sums must equal the deformatter's, or it fails:
// the two deformatters give every source the same bytes.
void opencsd_deformat_delivered(benchmark::State& state, const formatted_capture* c) {
  id_sums ours;
  {
    tracecodec::coresight::deformatter d;
    d.decode(c->bytes.data(), c->bytes.size(),
             [&](const tracecodec::coresight::data_batch& b) { ours.add(b.id, b.bytes, b.size); },
             [](const tracecodec::coresight::diagnostic&) {});
  }
  for (auto _ : state) {
    id_sums sums;
    if (!bench::opencsd_deformat_into(c->bytes.data(), c->bytes.size(), sums)) {
      state.SkipWithError("OpenCSD refused the capture");
      break;
    }
    if (std::memcmp(sums.per_id, ours.per_id, sizeof sums.per_id) != 0) {
      state.SkipWithError("OpenCSD's bytes per trace ID differ from coresight::deformatter's");
      break;
    }
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c->bytes.size()));
}
#endif

// Parallel decode of one buffer (issue 18, item 5): each corpus repeated to 64 MiB, decoded
// serially (threads 1: decoder / element_reader, as BM_ete_decode and BM_ete_elements) and by
// host/ete/parallel.hpp (threads 2 or more); wall-clock time. The consumer reads every field,
// as BM_ete_decode's and BM_ete_elements' do; the parallel decode must give the serial
// decode's sum and count, or the benchmark fails.
const std::size_t parallel_bytes = mib_from_env("TRACECODEC_BENCH_PARALLEL_MIB", 64);
// The corpus `name` at parallel_bytes, from load(size, only): one at a time (64 MiB each).
template <class Corpus, class Load>
const Corpus& parallel_corpus(const std::string& name, Load load) {
  static std::unique_ptr<Corpus> held;
  if (!held || held->name != name) {
    held.reset();
    std::vector<Corpus> v = load(parallel_bytes, name.c_str());
    held = std::make_unique<Corpus>(std::move(v.at(0)));
  }
  return *held;
}
// A consumer per segment (decode_*_by_segment): the same reads, summed per segment.
struct segment_sum {
  std::uint64_t acc = 0, n = 0;
  void operator()(const packet& p) noexcept { acc += bench::fields(p); ++n; }
  void operator()(const element& e) noexcept { acc += bench::fields(e); ++n; }
  void operator()(const diagnostic&) noexcept {}
};
template <bool Elements, bool BySegment = false>
void parallel_decode(benchmark::State& state, const corpus* small) {
  const corpus& c = parallel_corpus<corpus>(small->name, bench::load_named);
  const auto threads = static_cast<unsigned>(state.range(0));
  std::uint64_t want_acc = 0, want_n = 0;
  auto serial = [&](std::uint64_t& acc, std::uint64_t& n) {
    if constexpr (Elements) {
      auto r = std::make_unique<element_reader<>>(c.regs);
      r->atom_runs(true);
      r->decode(c.bytes.data(), c.bytes.size(), [&](const element& e) { acc += bench::fields(e); ++n; },
                [](const diagnostic&) {});
    } else {
      decoder<> d(c.regs);
      d.decode(c.bytes.data(), c.bytes.size(), [&](const packet& p) { acc += bench::fields(p); ++n; },
               [](const diagnostic&) {});
    }
  };
  serial(want_acc, want_n);
  parallel::options o;
  o.threads = threads;
  parallel::stats st{};
  for (auto _ : state) {
    std::uint64_t acc = 0, n = 0;
    if (threads == 1) {
      serial(acc, n);
    } else if constexpr (BySegment) {
      std::vector<segment_sum> parts;
      if constexpr (Elements)
        parts = parallel::decode_elements_by_segment(c.regs, c.bytes.data(), c.bytes.size(), segment_sum{},
                                                     {true, true}, o, &st);
      else
        parts = parallel::decode_packets_by_segment(c.regs, c.bytes.data(), c.bytes.size(), segment_sum{}, o, &st);
      for (const segment_sum& p : parts) {
        acc += p.acc;
        n += p.n;
      }
    } else if constexpr (Elements) {
      st = parallel::decode_elements(c.regs, c.bytes.data(), c.bytes.size(),
                                     [&](const element& e) { acc += bench::fields(e); ++n; },
                                     [](const diagnostic&) {}, {true, true}, o);
    } else {
      st = parallel::decode_packets(c.regs, c.bytes.data(), c.bytes.size(),
                                    [&](const packet& p) { acc += bench::fields(p); ++n; },
                                    [](const diagnostic&) {}, o);
    }
    benchmark::DoNotOptimize(acc);
    if (acc != want_acc || n != want_n) state.SkipWithError("parallel decode differs from the serial one");
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c.bytes.size()));
  state.counters["segments"] = static_cast<double>(st.segments);
  state.counters["rejoined"] = static_cast<double>(st.rejoined);
  state.counters["ahead"] = static_cast<double>(st.ahead);
}

// Program flow the same way (the flow corpora repeated to 64 MiB): serially (threads 1,
// flow_decoder) or each segment to a consumer of its own (decode_flow_by_segment, threads 2).
struct flow_sum {
  std::uint64_t acc = 0, n = 0;
  void operator()(const flow_element& f) noexcept { acc += bench::fields(f); ++n; }
  void operator()(const diagnostic&) noexcept {}
};
void parallel_flow(benchmark::State& state, const flow_corpus* small) {
  const flow_corpus& c = parallel_corpus<flow_corpus>(small->name, bench::load_flow_corpora);
  const auto threads = static_cast<unsigned>(state.range(0));
  program_image image(c.regions().data(), c.regions().size());
  flow_options fo;
  fo.arch = c.arch;
  auto serial = [&] {
    flow_sum s;
    auto fd = std::make_unique<flow_decoder<>>(c.regs, image, fo);
    fd->decode(c.bytes.data(), c.bytes.size(), s, s);
    return s;
  };
  const flow_sum want = serial();
  parallel::options o;
  o.threads = threads;
  parallel::stats st{};
  for (auto _ : state) {
    flow_sum got;
    if (threads == 1) {
      got = serial();
    } else {
      for (const flow_sum& p : parallel::decode_flow_by_segment(c.regs, image, fo, c.bytes.data(),
                                                                c.bytes.size(), flow_sum{}, o, &st)) {
        got.acc += p.acc;
        got.n += p.n;
      }
    }
    benchmark::DoNotOptimize(got.acc);
    if (got.acc != want.acc || got.n != want.n) state.SkipWithError("parallel flow differs from the serial one");
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c.bytes.size()));
  state.counters["segments"] = static_cast<double>(st.segments);
  state.counters["rejoined"] = static_cast<double>(st.rejoined);
}

// Registers benchmark `what`/<corpus name> of fn over corpus c, timed in milliseconds.
template <class Corpus>
benchmark::internal::Benchmark* register_on(const char* what, void (*fn)(benchmark::State&, const Corpus*),
                                            const Corpus& c) {
  return benchmark::RegisterBenchmark((std::string(what) + "/" + c.name).c_str(), fn, &c)
      ->Unit(benchmark::kMillisecond);
}

#ifdef TRACECODEC_HAVE_OPENCSD
// Pairs of passes per repetition: BM_decode_paired's (TRACECODEC_BENCH_PAIRS, 15) and
// BM_flow_paired's (TRACECODEC_BENCH_FLOW_PAIRS, 5: OpenCSD's pass of 8 MiB takes seconds).
// An even count is taken one up, so that the median is one pair's ratio.
int pairs_from_env(const char* name, int fallback) {
  const char* v = std::getenv(name);
  const int n = v ? std::atoi(v) : fallback;
  return n > 0 ? n | 1 : fallback;
}
const int paired_passes = pairs_from_env("TRACECODEC_BENCH_PAIRS", 15);
const int flow_paired_passes = pairs_from_env("TRACECODEC_BENCH_FLOW_PAIRS", 5);
#endif

// Packets of bugfix-exact-match's start repeated (bench::repeated_section()).
constexpr std::size_t section_packets = 4096;

// Corpora with their packets and elements filled in (decode_into()).
std::vector<corpus> with_packets(std::vector<corpus> cs) {
  for (corpus& c : cs) bench::decode_into(c);
  return cs;
}
// Packet decode of c, side by side with OpenCSD's.
void register_decode(const corpus& c) {
  register_on("BM_ete_decode", ete_decode, c);
#ifdef TRACECODEC_HAVE_OPENCSD
  register_on("BM_opencsd_decode", opencsd_decode, c);
  register_on("BM_decode_paired", decode_paired, c)->UseManualTime()->Iterations(paired_passes);
#endif
}

}  // namespace

int main(int argc, char** argv) {
  static const std::vector<corpus> corpora = load_corpora();
  for (const corpus& c : corpora) {
    register_decode(c);
    register_on("BM_ete_elements", ete_elements, c);
    register_on("BM_ete_atom_elements", ete_atom_elements, c);
    register_on("BM_ete_decode_opaque", ete_decode_opaque, c);
    register_on("BM_ete_elements_opaque", ete_elements_opaque, c);
    register_on("BM_ete_encode", ete_encode, c)->UseManualTime();
    register_on("BM_ete_encode_each", ete_encode_each, c)->UseManualTime();
    register_on("BM_ete_encode_streamed", ete_encode_streamed, c);
    register_on("BM_ete_compress", ete_compress, c);
    register_on("BM_ete_compress_array", ete_compress_array, c);
    register_on("BM_packet_read", packet_read, c);
  }
  static std::vector<resync_corpus> resync;  // registered by address: filled before the loop
  for (const corpus& c : corpora) resync.push_back(without_asyncs(c));
  for (const resync_corpus& c : resync) {
    register_on("BM_ete_resync", ete_resync, c);
#ifdef TRACECODEC_HAVE_OPENCSD
    register_on("BM_opencsd_resync", opencsd_resync, c);
#endif
    register_on("BM_async_search_scalar", async_search<detail::async_search_path::scalar>, c);
#if TRACECODEC_ASYNC_SEARCH_X86
    register_on("BM_async_search_sse2", async_search<detail::async_search_path::sse2>, c);
    if (detail::have_avx2()) register_on("BM_async_search_avx2", async_search<detail::async_search_path::avx2>, c);
#endif
  }
  for (const corpus& c : corpora) {
    if (c.name == "synthetic") continue;  // the parallel corpora come from ../shared only
    register_on("BM_ete_parallel_decode", parallel_decode<false>, c)->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime();
    register_on("BM_ete_parallel_decode_by_segment", parallel_decode<false, true>, c)->Arg(2)->ArgName("threads")->UseRealTime();
    register_on("BM_ete_parallel_elements", parallel_decode<true>, c)->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime();
    register_on("BM_ete_parallel_elements_by_segment", parallel_decode<true, true>, c)->Arg(2)->ArgName("threads")->UseRealTime();
  }
  // ETMv4: packet decode, side by side with OpenCSD (issue 17).
  static const std::vector<corpus> etmv4 = with_packets(bench::load_etmv4_corpora(corpus_bytes));
  for (const corpus& c : etmv4) register_decode(c);
  // The start of bugfix-exact-match repeated: its packets in a sequence short enough for the
  // branch predictor to learn, as it learns the ETE snapshots'.
  static std::vector<corpus> etmv4_sections;  // registered by address: filled before the loop
  for (const corpus& c : etmv4) {
    if (c.name != "etmv4-bugfix-exact-match") continue;
    for (corpus& s : with_packets(bench::repeated_section(c, section_packets, corpus_bytes))) {
      if (bench::repeats_alike(s))
        etmv4_sections.push_back(std::move(s));
      else
        std::fprintf(stderr, "ete-bench: %s skipped: its repeats decode differently\n", s.name.c_str());
    }
    if (etmv4_sections.empty()) std::fprintf(stderr, "ete-bench: no section of %s\n", c.name.c_str());
  }
  for (const corpus& c : etmv4_sections) register_decode(c);
  // ete_spec_1 repeated whole: a resolution queue about MAXSPEC deep (a stress case of the
  // resolver, bench::deep_speculation_corpus()).
  static const std::vector<corpus> deep = with_packets(bench::deep_speculation_corpus(corpus_bytes));
  for (const corpus& c : deep) {
    register_decode(c);
    register_on("BM_ete_elements", ete_elements, c);
    // No split point joins here (the queue is never empty): the back-off of host/ete/parallel.hpp.
    register_on("BM_ete_parallel_elements", parallel_decode<true>, c)->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime();
    register_on("BM_ete_parallel_elements_by_segment", parallel_decode<true, true>, c)->Arg(2)->ArgName("threads")->UseRealTime();
  }
  for (const flow_corpus& c : flow_corpora()) {
    register_on("BM_ete_parallel_flow", parallel_flow, c)->Arg(1)->ArgName("threads")->UseRealTime();
    register_on("BM_ete_parallel_flow_by_segment", parallel_flow, c)->Arg(2)->ArgName("threads")->UseRealTime();
  }
  for (const flow_corpus& c : flow_corpora()) {
    register_on("BM_ete_flow", ete_flow, c);
    register_on("BM_ete_flow_without_memo", ete_flow_without_memo, c);
#ifdef TRACECODEC_HAVE_OPENCSD
    register_on("BM_opencsd_flow", opencsd_flow, c);
    register_on("BM_flow_paired", flow_paired, c)->UseManualTime()->Iterations(flow_paired_passes);
#endif
  }
  for (const formatted_capture& c : formatted_captures()) {
    register_on("BM_coresight_deformat", coresight_deformat, c);
    register_on("BM_coresight_deformat_called", coresight_deformat_called, c);
    register_on("BM_coresight_deformat_runs", coresight_deformat_runs, c);
#ifdef TRACECODEC_HAVE_OPENCSD
    register_on("BM_opencsd_deformat", opencsd_deformat, c);
    register_on("BM_opencsd_deformat_delivered", opencsd_deformat_delivered, c);
#endif
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
