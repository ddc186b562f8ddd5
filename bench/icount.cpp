// SPDX-License-Identifier: Apache-2.0
// The instruction-count gate's driver (issue 18): runs one codec stage over one corpus inside
// icount_region(), which bench/icount.py has callgrind count (--toggle-collect), so loading
// the corpus and building the stage's input are not counted. Instruction counts, unlike wall
// time, do not depend on what else the machine runs.
//   ete-icount list                 the stage/corpus pairs it can run (with the corpora found)
//   ete-icount STAGE CORPUS         runs it; prints "STAGE CORPUS BYTES CHECK" (bytes: the
//                                   corpus's trace bytes, the divisor of the per-byte count)
// Stages: decode (packets, every field read), elements (resolved elements, atom runs),
// decode_opaque and elements_opaque (the same with the consumer in another translation unit,
// opaque_consumer.cpp: a call per packet or element the compiler cannot inline), flow
// (program flow over the snapshot's memory image), encode (the corpus's packets back to its
// bytes, one call), compress (its committed elements to packets, a push() each),
// compress_array (the same through push(elements, count)), deformat (CoreSight frames to
// each trace ID's bytes). The consumers are the benchmark's (bench/consumers.hpp). The
// compress stages are in icount_compress.cpp: in this translation unit GCC's limit on its
// growth by inlining left compressor::push() out of line once the flow decoder's code grew,
// and a program that compresses does not hold the decoders.

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <valgrind/callgrind.h>

#include "consumers.hpp"
#include "corpora.hpp"
#include "icount_compress.hpp"
#include "opaque_consumer.hpp"

using namespace tracecodec::ete;

namespace {

// Small enough for callgrind to count every stage of every corpus in a minute or two, large
// enough that per-byte counts no longer move with the size (the decoders' set-up is < 0.1%).
constexpr std::size_t icount_bytes = 1u << 20;

enum class stage {
  decode, elements, decode_opaque, elements_opaque, flow, encode, compress, compress_array, deformat, resync
};
constexpr const char* stage_names[] = {"decode", "elements", "decode_opaque",  "elements_opaque", "flow",
                                       "encode", "compress", "compress_array", "deformat", "resync"};

struct job {
  stage what;
  const bench::corpus* c = nullptr;
  const bench::flow_corpus* f = nullptr;
  const bench::formatted_capture* cap = nullptr;
};

template <bool Opaque>
std::uint64_t decode(const bench::corpus& c) {
  decoder<> d(c.regs);
  std::uint64_t acc = 0, errors = 0;
  d.decode(c.bytes.data(), c.bytes.size(),
           [&](const packet& p) {
             if constexpr (Opaque)
               bench::read_packet(acc, p);
             else
               acc += bench::fields(p);
           },
           [&](const diagnostic&) { ++errors; });
  return errors ? ~0ull : acc;
}

template <bool Opaque>
std::uint64_t elements(const bench::corpus& c) {
  auto r = std::make_unique<element_reader<>>(c.regs);
  r->atom_runs(true);
  std::uint64_t acc = 0, errors = 0;
  r->decode(c.bytes.data(), c.bytes.size(),
            [&](const element& e) {
              if constexpr (Opaque)
                bench::read_element(acc, e);
              else
                acc += bench::fields(e);
            },
            [&](const diagnostic&) { ++errors; });
  return errors ? ~0ull : acc;
}

// A decoder searching the corpus, its A-Syncs broken (bench::without_asyncs), for the one at
// its end: one `unsynchronized` error, then that A-Sync.
std::uint64_t resync(const bench::corpus& c) {
  decoder<> d(c.regs);
  std::uint64_t packets = 0, errors = 0;
  d.decode(c.bytes.data(), c.bytes.size(), [&](const packet&) { ++packets; }, [&](const diagnostic&) { ++errors; });
  return packets == 1 && errors == 1 ? packets : ~0ull;
}

std::uint64_t flow(const bench::flow_corpus& c) {
  program_image image(c.regions().data(), c.regions().size());
  flow_options o;
  o.arch = c.arch;
  auto fd = std::make_unique<flow_decoder<>>(c.regs, image, o);
  std::uint64_t acc = 0, errors = 0;
  fd->decode(c.bytes.data(), c.bytes.size(),
             [&](const flow_element& f) {
               acc += bench::fields(f);
             },
             [&](const diagnostic&) { ++errors; });
  return errors ? ~0ull : acc;
}

std::uint64_t encode(const bench::corpus& c, std::vector<std::uint8_t>& out) {
  encoder<> e(c.regs);
  const encode_many_result r = e.encode(c.packets.data(), c.packets.size(), out.data(), out.size());
  return r && r.size == c.bytes.size() && std::memcmp(out.data(), c.bytes.data(), r.size) == 0 ? r.size : ~0ull;
}

std::uint64_t deformat(const bench::formatted_capture& c) {
  bench::id_sums sums;
  std::uint64_t errors = 0;
  tracecodec::coresight::deformatter d;
  d.decode(
      c.bytes.data(), c.bytes.size(), [&](const tracecodec::coresight::data_batch& b) { sums.add(b); },
      [&](const tracecodec::coresight::diagnostic& e) {
        using E = tracecodec::coresight::error_code;  // notices (null ID padding, ...) are expected
        errors += e.code == E::reserved_id || e.code == E::truncated_frame || e.code == E::unsynchronized ||
                  e.code == E::bad_sync;
      });
  return errors ? ~0ull : sums.folded();
}

}  // namespace

// What callgrind counts: everything this call executes.
extern "C" [[gnu::noinline]] std::uint64_t icount_region(const job& j, std::vector<std::uint8_t>& out) {
  switch (j.what) {
    case stage::decode: return decode<false>(*j.c);
    case stage::elements: return elements<false>(*j.c);
    case stage::decode_opaque: return decode<true>(*j.c);
    case stage::elements_opaque: return elements<true>(*j.c);
    case stage::flow: return flow(*j.f);
    case stage::encode: return encode(*j.c, out);
    case stage::compress: return bench::compress(*j.c, out, false);
    case stage::compress_array: return bench::compress(*j.c, out, true);
    case stage::deformat: return deformat(*j.cap);
    case stage::resync: return resync(*j.c);
  }
  return 0;
}

namespace {

// The stages each kind of corpus runs.
constexpr stage packet_stages[] = {stage::decode, stage::elements, stage::decode_opaque, stage::elements_opaque,
                                   stage::encode, stage::compress, stage::compress_array, stage::resync};

int list() {
  for (const bench::corpus& c : bench::load_corpora(1))
    for (stage s : packet_stages) std::printf("%s %s\n", stage_names[static_cast<int>(s)], c.name.c_str());
  for (const bench::corpus& c : bench::load_etmv4_corpora(1))
    std::printf("decode %s\n", c.name.c_str());
  for (const bench::corpus& c : bench::deep_speculation_corpus(1)) std::printf("elements %s\n", c.name.c_str());
  for (const bench::flow_corpus& c : bench::load_flow_corpora(1)) std::printf("flow %s\n", c.name.c_str());
  for (const bench::formatted_capture& c : bench::load_formatted_captures(1))
    std::printf("deformat %s\n", c.name.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "list") == 0) return list();
  if (argc != 3) {
    std::fprintf(stderr, "usage: ete-icount list | ete-icount STAGE CORPUS\n");
    return 2;
  }
  const std::string s = argv[1];
  const char* name = argv[2];
  job j{};
  std::vector<bench::corpus> cs;
  std::vector<bench::flow_corpus> fs;
  std::vector<bench::formatted_capture> caps;
  std::size_t bytes = 0;
  if (s == "flow") {
    j.what = stage::flow;
    fs = bench::load_flow_corpora(icount_bytes, name);
    if (!fs.empty()) j.f = &fs[0], bytes = fs[0].bytes.size();
  } else if (s == "deformat") {
    j.what = stage::deformat;
    caps = bench::load_formatted_captures(icount_bytes, name);
    if (!caps.empty()) j.cap = &caps[0], bytes = caps[0].bytes.size();
  } else {
    bool known = false;
    for (stage k : packet_stages)
      if (s == stage_names[static_cast<int>(k)]) j.what = k, known = true;
    if (!known) {
      std::fprintf(stderr, "ete-icount: unknown stage %s\n", s.c_str());
      return 2;
    }
    cs = bench::load_named(icount_bytes, name);
    if (!cs.empty()) {
      if (j.what == stage::encode || j.what == stage::compress || j.what == stage::compress_array)
        bench::decode_into(cs[0]);
      if (j.what == stage::resync) cs[0].bytes = bench::without_asyncs(cs[0].regs, cs[0].bytes);
      j.c = &cs[0], bytes = cs[0].bytes.size();
    }
  }
  if (bytes == 0) {
    std::fprintf(stderr, "ete-icount: no corpus %s for stage %s\n", name, s.c_str());
    return 1;
  }
  std::vector<std::uint8_t> out(bytes * 2 + 4096);
  // icount.py starts callgrind with instrumentation off (--instr-atstart=no): building the
  // corpus above then runs at valgrind's uninstrumented speed, several times faster, and only
  // this call is instrumented. Outside valgrind these are a few no-op instructions.
  CALLGRIND_START_INSTRUMENTATION;
  const std::uint64_t check = icount_region(j, out);
  CALLGRIND_STOP_INSTRUMENTATION;
  if (check == ~0ull) {
    std::fprintf(stderr, "ete-icount: %s %s: errors, or output unlike the corpus\n", s.c_str(), name);
    return 1;
  }
  std::printf("%s %s %zu %llu\n", s.c_str(), name, bytes, static_cast<unsigned long long>(check));
  return 0;
}
