// SPDX-License-Identifier: Apache-2.0
// Target 7: the CoreSight frame deformatter (coresight/deformatter.hpp). Input: [fmt][seed]
// then the captured bytes; fmt % 3 picks memory-aligned frames, a TPIU stream or DSTREAM
// blocks. Checks: every run is 1-15 bytes of a valid trace ID (1-0x6F) at an offset inside
// the input, runs come in input order, diagnostics have known codes and lie inside the input;
// no more bytes come out than the frames can hold (15 of every 16 frame bytes); the whole
// input, random chunks (seeded by the second byte), and the same after reset() give the same
// runs and diagnostics; a TPIU stream made of the memory-aligned decode's frames (an FSYNC
// first) gives the same per-ID bytes. The decode tree (coresight/decode_tree.hpp), with
// packet decoders for IDs 1 (ETE 1.3, speculation), 2 (ETMv4.0, Juno) and 3 (ETMv4.5,
// Cortex-M55), in the same random chunks: every item of a source, its stream offset inside
// that source's deformatted bytes, its input offset that byte's place (or unknown), a packet's
// bytes held by the tree equal to the stream's; without a barrier, each source's packets and
// errors equal its stream decoded alone.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <tracecodec/coresight/decode_tree.hpp>
#include <tracecodec/coresight/deformatter.hpp>
#include <tracecodec/ete/packet/decoder.hpp>

#include "common.hpp"

namespace cs = tracecodec::coresight;

namespace {

struct recorded {
  std::vector<std::uint8_t> bytes;
  std::vector<std::uint8_t> ids;
  std::vector<std::uint64_t> offsets;
  std::vector<cs::diagnostic> errors;
  bool operator==(const recorded&) const = default;
};

struct rec_sink {
  recorded* r;
  void operator()(std::uint8_t id, const std::uint8_t* p, std::size_t n, std::uint64_t at) const {
    r->bytes.insert(r->bytes.end(), p, p + n);
    r->ids.push_back(id);
    r->offsets.push_back(at);
    FUZZ_CHECK(n >= 1 && n <= 15);
    FUZZ_CHECK(cs::valid_trace_id(id));
  }
  void operator()(const cs::diagnostic& d) const { r->errors.push_back(d); }
};

recorded run(cs::deformatter& d, const std::uint8_t* data, std::size_t size, std::uint64_t seed) {
  recorded r;
  rec_sink s{&r};
  if (seed == 0) {
    d.decode(data, size, s, s);
    return r;
  }
  std::uint64_t x = seed;
  for (std::size_t at = 0; at < size;) {
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 32;
    const std::size_t m = std::min<std::size_t>(size - at, 1 + (x >> 57));
    d.decode_part(data + at, m, s, s);
    at += m;
  }
  d.decode_end(s, s);
  return r;
}

namespace ete = tracecodec::ete;
using packet_decoder = ete::decoder<ete::runtime_config>;

template <class T>
T at_offset(T x, std::uint64_t offset) {
  x.offset = offset;
  return x;
}

// b: the batches' bytes, with the trace ID and input offset (at) of each byte.
void tree_checks(cs::frame_format format, const std::uint8_t* in, std::size_t n, std::uint64_t seed,
                 const recorded& b, const std::vector<std::uint64_t>& at) {
  const ete::registers regs[3] = {ete::presets::ete_1_3_spec, ete::presets::etmv4_0_juno,
                                  ete::presets::etmv4_5_m55};
  std::vector<std::uint8_t> stream[3];
  std::vector<std::uint64_t> where[3];
  for (std::size_t i = 0; i < b.bytes.size(); ++i)
    if (b.ids[i] >= 1 && b.ids[i] <= 3) {
      stream[b.ids[i] - 1].push_back(b.bytes[i]);
      where[b.ids[i] - 1].push_back(at[i]);
    }
  packet_decoder d1(regs[0]), d2(regs[1]), d3(regs[2]);
  auto tree = std::make_unique<cs::decode_tree<packet_decoder, 3, 4>>(format);
  FUZZ_CHECK(tree->add_source(1, d1) == cs::tree_status::ok);
  FUZZ_CHECK(tree->add_source(2, d2) == cs::tree_status::ok);
  FUZZ_CHECK(tree->add_source(3, d3) == cs::tree_status::ok);
  std::vector<ete::packet> packets[3];
  std::vector<ete::diagnostic> errors[3];
  bool barrier = false;
  auto origin_ok = [&](const cs::item_origin& o, std::uint64_t input) {
    FUZZ_CHECK(o.id >= 1 && o.id <= 3);
    const std::size_t k = o.id - 1u;
    FUZZ_CHECK(o.stream_offset <= stream[k].size());
    if (o.stream_offset < stream[k].size())
      FUZZ_CHECK(input == cs::unknown_offset || input == where[k][o.stream_offset]);
    // OpenCSD's index of a byte counts from its frame's start or an ID byte before it, data
    // bytes only (DSTREAM: without footers): never past the byte, at most 14 before it.
    if (input != cs::unknown_offset && o.stream_offset < stream[k].size()) {
      const std::uint64_t ocsd = tree->opencsd_index(o.id, o.stream_offset);
      FUZZ_CHECK(ocsd <= input);
      if (format == cs::frame_format::memory_aligned) FUZZ_CHECK(input - ocsd <= 14);
    }
    return k;
  };
  auto on_packet = [&](const cs::item_origin& o, const ete::packet& p) {
    const std::size_t k = origin_ok(o, p.offset);
    FUZZ_CHECK(o.stream_offset + p.size <= stream[k].size());
    if (p.kind != ete::packet_kind::async) {
      std::uint8_t raw[ete::max_packet_size];
      FUZZ_CHECK(p.size <= sizeof raw && tree->stream_bytes(o.id, o.stream_offset, p.size, raw));
      FUZZ_CHECK(std::equal(raw, raw + p.size, stream[k].begin() + static_cast<std::ptrdiff_t>(o.stream_offset)));
    }
    packets[k].push_back(at_offset(p, o.stream_offset));
  };
  auto on_error = [&](const cs::item_origin& o, const ete::diagnostic& e) {
    const std::size_t k = origin_ok(o, e.offset);
    errors[k].push_back(at_offset(e, o.stream_offset));
  };
  auto on_frame = [&](const cs::diagnostic& e) {
    barrier = barrier || e.code == cs::error_code::barrier;
    FUZZ_CHECK(e.code != cs::error_code::unrouted_data || tree->unrouted_id() > 3);
  };
  std::uint64_t x = seed | 1;
  for (std::size_t i = 0; i < n;) {
    x ^= x >> 31;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 29;
    const std::size_t m = std::min<std::size_t>(n - i, 1 + (x >> 55));
    tree->decode_part(in + i, m, on_packet, on_error, on_frame);
    i += m;
  }
  tree->decode_end(on_packet, on_error, on_frame);
  if (barrier) return;  // each source's sessions restart there: not one stream alone
  packet_decoder* alone[3] = {&d1, &d2, &d3};
  for (std::size_t k = 0; k < 3; ++k) {
    std::vector<ete::packet> p;
    std::vector<ete::diagnostic> e;
    alone[k]->reset();
    alone[k]->decode(stream[k].data(), stream[k].size(), [&](const ete::packet& q) { p.push_back(q); },
                     [&](const ete::diagnostic& q) { e.push_back(q); });
    FUZZ_CHECK(p == packets[k]);
    FUZZ_CHECK(e == errors[k]);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const auto format = static_cast<cs::frame_format>(data[0] % 3);
  const std::uint64_t seed = 0x9e3779b97f4a7c15ull * (data[1] + 1u);
  const std::uint8_t* in = data + 2;
  const std::size_t n = size - 2;

  cs::deformatter d(format);
  const recorded whole = run(d, in, n, 0);
  std::uint64_t last = 0;
  for (std::size_t i = 0; i < whole.offsets.size(); ++i) {
    FUZZ_CHECK(whole.offsets[i] < n);
    FUZZ_CHECK(i == 0 || whole.offsets[i] > last);
    last = whole.offsets[i];
  }
  FUZZ_CHECK(whole.bytes.size() <= n / 16 * 15);
  for (const cs::diagnostic& e : whole.errors) {
    FUZZ_CHECK(static_cast<unsigned>(e.code) >= 1 && e.code <= cs::error_code::barrier);  // no unrouted_data
    FUZZ_CHECK(e.offset <= n);
    FUZZ_CHECK(e.code == cs::error_code::reserved_id || e.length >= 1);
    if (e.code == cs::error_code::truncated_frame) FUZZ_CHECK(e.length < 16 + 8 && e.offset + e.length <= n);
  }

  cs::deformatter c(format);
  FUZZ_CHECK(run(c, in, n, seed) == whole);

  // Batches (on_data(const data_batch&)): the same bytes and diagnostics; every run's first
  // byte is a batch byte at the run's offset.
  {
    recorded b;
    std::vector<std::uint64_t> at;  // offset_of each batch byte
    auto on_batch = [&](const cs::data_batch& x) {
      FUZZ_CHECK(x.size >= 1 && x.frames >= 1 && x.frames <= cs::batch_frames);
      FUZZ_CHECK(cs::valid_trace_id(x.id));
      for (std::size_t i = 0; i < x.size; ++i) {
        b.bytes.push_back(x.bytes[i]);
        b.ids.push_back(x.id);
        at.push_back(x.offset_of(i));
      }
    };
    auto on_error = [&](const cs::diagnostic& e) { b.errors.push_back(e); };
    cs::deformatter bd(format);
    bd.decode(in, n, on_batch, on_error);
    FUZZ_CHECK(b.bytes == whole.bytes);
    FUZZ_CHECK(b.errors == whole.errors);
    tree_checks(format, in, n, seed, b, at);
    std::size_t k = 0;
    for (std::size_t r = 0; r < whole.offsets.size(); ++r) {
      FUZZ_CHECK(k < at.size() && b.ids[k] == whole.ids[r] && at[k] == whole.offsets[r]);
      const std::uint64_t next = r + 1 < whole.offsets.size() ? whole.offsets[r + 1] : ~std::uint64_t{0};
      while (k < at.size() && at[k] < next && b.ids[k] == whole.ids[r]) ++k;  // this run's bytes
    }
  }
  d.reset();
  FUZZ_CHECK(run(d, in, n, seed ^ 1) == whole);

  // The memory-aligned decode's frames as a TPIU stream: the same bytes per trace ID.
  if (format == cs::frame_format::memory_aligned && n >= 16) {
    std::vector<std::uint8_t> port = {0xFF, 0xFF, 0xFF, 0x7F};
    bool clean = true;  // a frame with FF at an even byte (ID 0x7F) would read as a sync
    for (std::size_t f = 0; f + 16 <= n; f += 16) {
      for (std::size_t h = 0; h < 16; h += 2) clean = clean && in[f + h] != 0xFF;
      port.insert(port.end(), in + f, in + f + 16);
    }
    if (clean) {
      cs::deformatter t(cs::frame_format::tpiu);
      const recorded tp = run(t, port.data(), port.size(), 0);
      // Runs are recorded flat, in order: the same frames give the same runs.
      FUZZ_CHECK(tp.bytes == whole.bytes);
      FUZZ_CHECK(tp.ids == whole.ids);
    }
  }
  return 0;
}
