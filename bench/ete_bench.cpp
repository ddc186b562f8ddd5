// SPDX-License-Identifier: Apache-2.0
// Throughput of the ETE packet codec: decoding into fully resolved packets read by a consumer,
// and encoding. Corpora: a synthetic mixed trace and, when ../shared is present, real snapshots
// repeated to at least 8 MiB (each repeat starts at the snapshot's own A-Sync).
#include <benchmark/benchmark.h>

#include <tracecodec/ete/snapshot.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "synthetic.hpp"

using namespace tracecodec::ete;

namespace {

struct corpus {
  std::string name;
  registers regs;
  std::vector<std::uint8_t> bytes;
};

constexpr std::size_t corpus_bytes = 8u << 20;

std::vector<std::uint8_t> repeat_to(const std::vector<std::uint8_t>& one, std::size_t n) {
  std::vector<std::uint8_t> v;
  while (v.size() < n) v.insert(v.end(), one.begin(), one.end());
  return v;
}

std::vector<corpus> load_corpora() {
  std::vector<corpus> cs;
  cs.push_back({"synthetic", bench::synthetic_regs, bench::synthetic_trace(corpus_bytes)});
  const char* env = std::getenv("TRACECODEC_CONFORMANCE_DIR");
  const std::string dir = env ? env : "../shared/conformance/ete";
  for (const char* name : {"001-ack_test", "maxspec0_commopt1", "trace_file_cid_vmid", "src_addr"}) {
    const auto snap = snapshot::load(dir + "/snapshots/" + name);
    if (!snap.error.empty() || snap.buffers.empty()) continue;
    cs.push_back({name, snap.buffers[0].regs, repeat_to(snap.buffers[0].data, corpus_bytes)});
  }
  return cs;
}

// Reads every field a consumer would, so the decode work cannot be optimized away.
struct consumer {
  std::uint64_t acc = 0;
  void operator()(const packet& p) noexcept {
    acc += p.address ^ p.timestamp ^ p.atoms ^ p.count ^ p.cycles ^ p.ctx.context_id ^
           static_cast<unsigned>(p.kind) ^ p.offset;
  }
};

void decode(benchmark::State& state, const corpus* c) {
  std::uint64_t packets = 0;
  for (auto _ : state) {
    decoder<> d(c->regs);
    consumer sink;
    std::uint64_t n = 0, errors = 0;
    d.decode(c->bytes.data(), c->bytes.size(),
             [&](const packet& p) {
               sink(p);
               ++n;
             },
             [&](const diagnostic&) { ++errors; });
    benchmark::DoNotOptimize(sink.acc);
    packets += n;
    if (errors) state.SkipWithError("decode errors");
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c->bytes.size()));
  state.SetItemsProcessed(static_cast<std::int64_t>(packets));
}

void encode(benchmark::State& state, const corpus* c) {
  std::vector<packet> ps;
  decoder<> d(c->regs);
  d.decode(c->bytes.data(), c->bytes.size(), [&](const packet& p) { ps.push_back(p); },
           [](const diagnostic&) {});
  std::vector<std::uint8_t> out(c->bytes.size() + 64);
  for (auto _ : state) {
    encoder<> e(c->regs);
    std::size_t at = 0;
    for (const packet& p : ps) at += e.encode(p, out.data() + at, out.size() - at).size;
    benchmark::DoNotOptimize(out.data());
    if (at != c->bytes.size()) state.SkipWithError("encode mismatch");
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c->bytes.size()));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * ps.size()));
}

}  // namespace

int main(int argc, char** argv) {
  static const std::vector<corpus> corpora = load_corpora();
  for (const corpus& c : corpora) {
    benchmark::RegisterBenchmark(("BM_ete_decode/" + c.name).c_str(), decode, &c)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_ete_encode/" + c.name).c_str(), encode, &c)
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
