// SPDX-License-Identifier: Apache-2.0
// The CoreSight frame deformatter (coresight/deformatter.hpp): hand-built frames from the
// formatter rules, a round trip against a test formatter written from the same rules (several
// sources interleaved at random), TPIU and DSTREAM streams built around those frames, chunks
// split at every byte, and the formatted captures of ../shared/conformance/etmv4: each trace
// ID's bytes must equal the raw bytes of OpenCSD 1.8.0's packet listing for that ID, in order.
#include <doctest/doctest.h>

#include <tracecodec/coresight/deformatter.hpp>

#include "formatter.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace tracecodec::coresight;
using namespace test_formatter;

namespace {

struct result {
  std::map<int, bytes> streams;  // trace ID -> its bytes
  std::vector<std::pair<int, std::uint64_t>> runs;  // (ID, offset) of each run
  std::vector<diagnostic> errors;
  bool operator==(const result&) const = default;
};

struct sink {
  result* r;
  void operator()(std::uint8_t id, const std::uint8_t* p, std::size_t n, std::uint64_t at) const {
    REQUIRE(n >= 1);
    REQUIRE(n <= 15);
    r->streams[id].insert(r->streams[id].end(), p, p + n);
    r->runs.emplace_back(id, at);
  }
  void operator()(const diagnostic& d) const { r->errors.push_back(d); }
};

result deformat(const bytes& in, frame_format f = frame_format::memory_aligned) {
  result r;
  deformatter d(f);
  sink s{&r};
  d.decode(in.data(), in.size(), s, s);
  return r;
}

// Feeds `in` to d in chunks of the given sizes (cycled), then ends the stream.
template <class Sink>
void feed_chunks(deformatter& d, const bytes& in, const std::vector<std::size_t>& sizes, Sink& s) {
  std::size_t k = 0;
  for (std::size_t at = 0; at < in.size(); ++k) {
    const std::size_t n = std::min(in.size() - at, sizes[k % sizes.size()]);
    d.decode_part(in.data() + at, n, s, s);
    at += n;
  }
  d.decode_end(s, s);
}

// The same input cut into chunks of the given sizes (cycled).
result deformat_chunks(const bytes& in, frame_format f, const std::vector<std::size_t>& sizes) {
  result r;
  deformatter d(f);
  sink s{&r};
  feed_chunks(d, in, sizes, s);
  return r;
}


}  // namespace

// ---------------------------------------------------------------------------------------------

TEST_CASE("deformatter: a frame from a real capture (juno_r1_1, offset 0x50)") {
  // 5c 00 da 95 1e f7 | 21 (ID 0x10, aux bit 3 = 0: at once) 95 ae 31 f6 95 84 27 f6 | aux b2.
  // Before the ID byte: the data of the source current before (none here: dropped, no_id_data).
  const bytes frame = {0x5c, 0x00, 0xda, 0x95, 0x1e, 0xf7, 0x21, 0x95,
                       0xae, 0x31, 0xf6, 0x95, 0x84, 0x27, 0xf6, 0xb2};
  const result r = deformat(frame);
  // OpenCSD lists ID 0x10 from this frame as 95 af 31 f7 95 84 27 f7 (Idx 86 = 0x56).
  CHECK(r.streams.at(0x10) == bytes{0x95, 0xaf, 0x31, 0xf7, 0x95, 0x84, 0x27, 0xf7});
  REQUIRE(r.runs.size() == 1);
  CHECK(r.runs[0] == std::pair<int, std::uint64_t>{0x10, 7});  // byte 7 of the frame
  // The 6 bytes before the ID byte (aux bits 0-2 = 0, 1, 0: 5c 00 db 95 1e f7) had no source.
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0] == diagnostic{error_code::no_id_data, 0, 6});
}

TEST_CASE("deformatter: an ID change at every even byte, at once and delayed") {
  for (unsigned k = 0; k < 8; ++k) {
    for (unsigned delayed = 0; delayed < 2; ++delayed) {
      CAPTURE(k);
      CAPTURE(delayed);
      // Frame 1 makes ID 0x21 current (byte 0); data 0x40 + j elsewhere. Frame 2 changes to
      // 0x35 at byte 2k; its other even bytes are data with aux bits set (odd values).
      bytes f(32, 0);
      f[0] = 0x21 << 1 | 1;
      for (unsigned j = 1; j < 15; ++j) f[j] = static_cast<std::uint8_t>(0x40 + 2 * j);
      f[15] = 0;
      std::uint8_t aux = 0;
      for (unsigned j = 0; j < 15; ++j) f[16 + j] = static_cast<std::uint8_t>(0x80 + 2 * j);
      for (unsigned j = 0; j < 8; ++j) aux = static_cast<std::uint8_t>(aux | (1u << j));  // LSBs 1
      f[16 + 2 * k] = 0x35 << 1 | 1;
      if (!delayed) aux = static_cast<std::uint8_t>(aux & ~(1u << k));
      f[31] = aux;
      const result r = deformat(f);
      bytes a, b;
      for (unsigned j = 1; j < 15; ++j) a.push_back(static_cast<std::uint8_t>(0x40 + 2 * j));
      for (unsigned j = 0; j < 15; ++j) {
        if (j == 2 * k) continue;
        const std::uint8_t v = static_cast<std::uint8_t>(0x80 + 2 * j + (j % 2 == 0 ? 1 : 0));
        // Before the ID byte, and byte 2k + 1 when the change is delayed: still 0x21's.
        const bool old = j < 2 * k || (delayed && j == 2 * k + 1 && k < 7);
        (old ? a : b).push_back(v);
      }
      CHECK(r.streams.at(0x21) == a);
      if (k == 7) {
        CHECK(r.streams.count(0x35) == 0);  // byte 14: the change applies to the next frame
      } else {
        CHECK(r.streams.at(0x35) == b);
      }
      CHECK(r.errors.empty());
    }
  }
}

TEST_CASE("deformatter: every auxiliary bit restores its data byte's bit 0") {
  for (unsigned aux = 0; aux < 256; ++aux) {
    bytes f = {0x10 << 1 | 1, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
               0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x00};
    // byte 0 is an ID byte (aux bit 0: 0 = at once; 1 = byte 1 is the previous source's,
    // which is none: dropped)
    f[15] = static_cast<std::uint8_t>(aux);
    const result r = deformat(f);
    bytes want;
    if (!(aux & 1)) want.push_back(0x01);
    for (unsigned j = 2; j < 15; ++j)
      want.push_back(static_cast<std::uint8_t>(j % 2 == 0 ? (j | ((aux >> (j / 2)) & 1u)) : j));
    CHECK(r.streams.at(0x10) == want);
  }
}

TEST_CASE("deformatter: null and reserved trace IDs are reported, their data dropped") {
  // ID 0x05 (8 data bytes ...), then ID 0 for the rest of frame 1; frame 2: ID 0x7D (reserved)
  // then ID 0x05 again.
  bytes f(32, 0);
  f[0] = 0x05 << 1 | 1;
  for (unsigned j = 1; j < 8; ++j) f[j] = static_cast<std::uint8_t>(0x10 + 2 * j);
  f[8] = 0x01;  // ID 0
  f[16] = 0x7D << 1 | 1;
  f[17] = 0xAA;
  f[18] = 0xAC;
  f[19] = 0xAD;
  f[20] = 0x05 << 1 | 1;
  const result r = deformat(f);
  bytes want5;
  for (unsigned j = 1; j < 8; ++j) want5.push_back(static_cast<std::uint8_t>(0x10 + 2 * j));
  for (unsigned j = 21; j < 31; ++j) want5.push_back(f[j]);
  CHECK(r.streams.at(0x05) == want5);
  CHECK(r.streams.count(0) == 0);
  CHECK(r.streams.count(0x7D) == 0);
  REQUIRE(r.errors.size() == 2);
  CHECK(r.errors[0] == diagnostic{error_code::null_id_data, 8, 6});  // bytes 9-14
  CHECK(r.errors[1] == diagnostic{error_code::reserved_id, 16, 3});  // bytes 17-19
}

TEST_CASE("deformatter: input that ends inside a frame") {
  std::mt19937 rng(5);
  const std::vector<item> items = random_items(rng, 100, {0x10, 0x11});
  bytes frames = format_frames(items, rng);
  frames.resize(frames.size() - 5);
  const result r = deformat(frames);
  REQUIRE(!r.errors.empty());
  CHECK(r.errors.back() == diagnostic{error_code::truncated_frame, frames.size() - 11, 11});
}

TEST_CASE("deformatter: round trip against the test formatter, several sources at random") {
  std::mt19937 rng(2026);
  std::uint64_t compared = 0;
  for (int round = 0; round < 300; ++round) {
    CAPTURE(round);
    std::vector<std::uint8_t> ids;
    const unsigned sources = 1 + rng() % 6;
    for (unsigned s = 0; s < sources; ++s) ids.push_back(static_cast<std::uint8_t>(1 + rng() % 0x6f));
    const std::vector<item> items = random_items(rng, 1 + rng() % 3000, ids);
    const bytes frames = format_frames(items, rng);
    REQUIRE(frames.size() % 16 == 0);
    result r = deformat(frames);
    r.streams.erase(0);
    CHECK(r.streams == expected_streams(items));
    for (const diagnostic& d : r.errors) CHECK(d.code == error_code::null_id_data);
    // Chunks of 1-40 bytes give the same.
    std::vector<std::size_t> sizes;
    for (int k = 0; k < 16; ++k) sizes.push_back(1 + rng() % 40);
    result c = deformat_chunks(frames, frame_format::memory_aligned, sizes);
    c.streams.erase(0);
    CHECK(c == r);
    compared += items.size();
  }
  MESSAGE("round trip: " << compared << " bytes of 300 interleavings");
}

TEST_CASE("deformatter: a frame split across chunks at every byte") {
  std::mt19937 rng(7);
  const std::vector<item> items = random_items(rng, 200, {0x10, 0x22, 0x33});
  const bytes frames = format_frames(items, rng);
  const result whole = deformat(frames);
  for (std::size_t cut = 1; cut < 48 && cut < frames.size(); ++cut) {
    CAPTURE(cut);
    result r;
    deformatter d;
    sink s{&r};
    d.decode_part(frames.data(), cut, s, s);
    d.decode_part(frames.data() + cut, frames.size() - cut, s, s);
    d.decode_end(s, s);
    CHECK(r == whole);
  }
  CHECK(deformat_chunks(frames, frame_format::memory_aligned, {1}) == whole);
}

TEST_CASE("deformatter: the formatted ETMv4 captures equal OpenCSD's listings per trace ID") {
  const std::string dir = etmv4_dir();
  const char* names[] = {"a57_single_step", "bugfix-exact-match", "juno-uname-001", "juno_r1_1",
                         "a55-test-tpiu"};
  unsigned snapshots = 0;
  std::uint64_t total = 0;
  for (const std::string name : names) {
    CAPTURE(name);
    const std::string snap = dir + "/snapshots/" + name;
    const std::string format = ini_value(snap + "/trace.ini", "buffer0", "format");
    const std::string file = ini_value(snap + "/trace.ini", "buffer0", "file");
    REQUIRE_MESSAGE(!format.empty(), "no snapshot at " << snap);
    const frame_format f = format == "coresight" ? frame_format::memory_aligned : frame_format::dstream;
    CHECK((format == "coresight" || format == "dstream_coresight"));
    const bytes in = slurp(snap + "/" + file);
    REQUIRE(!in.empty());
    const std::map<int, bytes> want = listed_streams(dir + "/expected/" + name + ".packets.txt");
    REQUIRE(!want.empty());
    const result r = deformat(in, f);
    for (const auto& entry : want) {  // not a structured binding: CAPTURE's lambda (clang 14)
      const int id = entry.first;
      const bytes& stream = entry.second;
      CAPTURE(id);
      REQUIRE(r.streams.count(id) == 1);
      CHECK(r.streams.at(id) == stream);
      total += stream.size();
    }
    for (const diagnostic& d : r.errors) {
      CAPTURE(error_name(d.code));
      CAPTURE(d.offset);
      CAPTURE(d.length);
      // a55-test-tpiu: the capture stops 12 stream bytes into a frame (zeros after the last
      // FSYNC-separated frame): reported at the end, as the last diagnostic.
      const bool tail = d.code == error_code::truncated_frame && &d == &r.errors.back() &&
                        format == "dstream_coresight";
      CHECK((d.code == error_code::null_id_data || d.code == error_code::no_id_data || tail));
    }
    // Random chunks give the same.
    CHECK(deformat_chunks(in, f, {1, 7, 16, 500, 3, 4096}) == r);
    ++snapshots;
  }
  MESSAGE(snapshots << " formatted captures, " << total << " bytes equal OpenCSD's per-ID listings");
}

namespace {
// A TPIU port stream around the frames: `prefix` bytes of other data (none 0xFF, so no false
// FSYNC), an FSYNC, then the frames with FSYNCs between some of them and HSYNCs (FF 7F) in
// place of some half-words. A valid frame never holds FF at an even byte (that would be an ID
// byte for the reserved ID 0x7F), so neither sync can be mistaken for frame data.
bytes tpiu_stream(const bytes& frames, std::size_t prefix, std::mt19937& rng) {
  bytes out;
  for (std::size_t i = 0; i < prefix; ++i) out.push_back(static_cast<std::uint8_t>(rng() % 0xFF));
  const std::uint8_t fsync[] = {0xFF, 0xFF, 0xFF, 0x7F};
  out.insert(out.end(), fsync, fsync + 4);
  for (std::size_t f = 0; f < frames.size(); f += 16) {
    while (rng() % 3 == 0) out.insert(out.end(), fsync, fsync + 4);
    for (std::size_t h = 0; h < 16; h += 2) {
      while (rng() % 7 == 0) {
        out.push_back(0xFF);
        out.push_back(0x7F);
      }
      out.push_back(frames[f + h]);
      out.push_back(frames[f + h + 1]);
    }
  }
  return out;
}
// DSTREAM: the stream in blocks of 504 bytes, each followed by an 8-byte footer (random here).
bytes dstream_blocks(const bytes& stream, std::mt19937& rng) {
  bytes out;
  for (std::size_t at = 0; at < stream.size(); at += dstream_stream) {
    const std::size_t n = std::min(dstream_stream, stream.size() - at);
    out.insert(out.end(), stream.begin() + static_cast<std::ptrdiff_t>(at),
               stream.begin() + static_cast<std::ptrdiff_t>(at + n));
    // The last block is padded with HSYNCs (zeros would be data of the current source).
    for (std::size_t k = n; k < dstream_stream; k += 2) {
      out.push_back(0xFF);
      out.push_back(0x7F);
    }
    for (int k = 0; k < 8; ++k) out.push_back(static_cast<std::uint8_t>(rng()));
  }
  return out;
}
}  // namespace

TEST_CASE("deformatter: TPIU streams (FSYNC alignment search, FSYNCs and HSYNCs) and DSTREAM blocks") {
  std::mt19937 rng(99);
  std::uint64_t compared = 0;
  for (int round = 0; round < 200; ++round) {
    CAPTURE(round);
    const std::vector<item> items = random_items(rng, 1 + rng() % 2000, {0x10, 0x11, 0x2a, 0x6f});
    const bytes frames = format_frames(items, rng);
    const std::size_t prefix = rng() % 40;
    const bytes port = tpiu_stream(frames, prefix, rng);
    result r = deformat(port, frame_format::tpiu);
    const result aligned = deformat(frames);
    CHECK(r.streams == aligned.streams);
    std::size_t e = 0;
    if (prefix != 0) {
      REQUIRE(!r.errors.empty());
      CHECK(r.errors[0] == diagnostic{error_code::unsynchronized, 0, prefix});
      e = 1;
    }
    for (; e < r.errors.size(); ++e) CHECK(r.errors[e].code == error_code::null_id_data);
    std::vector<std::size_t> sizes;
    for (int k = 0; k < 8; ++k) sizes.push_back(1 + rng() % 33);
    CHECK(deformat_chunks(port, frame_format::tpiu, sizes) == r);

    const bytes ds = dstream_blocks(port, rng);
    result d = deformat(ds, frame_format::dstream);
    CHECK(d.streams == aligned.streams);
    CHECK(deformat_chunks(ds, frame_format::dstream, sizes) == d);
    compared += items.size();
  }
  MESSAGE("TPIU and DSTREAM: " << compared << " bytes of 200 streams");
}

TEST_CASE("deformatter: an FSYNC at every alignment of the TPIU stream start") {
  std::mt19937 rng(3);
  const std::vector<item> items = random_items(rng, 300, {0x10, 0x20});
  const bytes frames = format_frames(items, rng, false);
  const result aligned = deformat(frames);
  for (std::size_t prefix = 0; prefix < 40; ++prefix) {
    CAPTURE(prefix);
    bytes port;
    for (std::size_t i = 0; i < prefix; ++i) port.push_back(static_cast<std::uint8_t>(0x11 * (i % 7)));
    const std::uint8_t fsync[] = {0xFF, 0xFF, 0xFF, 0x7F};
    port.insert(port.end(), fsync, fsync + 4);
    port.insert(port.end(), frames.begin(), frames.end());
    const result r = deformat(port, frame_format::tpiu);
    CHECK(r.streams == aligned.streams);
    CHECK(r.errors.size() == aligned.errors.size() + (prefix ? 1 : 0));
  }
}

TEST_CASE("deformatter: TPIU alignment lost inside a frame is found again at the next FSYNC") {
  std::mt19937 rng(11);
  const std::vector<item> a = random_items(rng, 150, {0x10, 0x11});
  const std::vector<item> b = random_items(rng, 150, {0x10, 0x11});
  const bytes fa = format_frames(a, rng, false), fb = format_frames(b, rng, false);
  const std::uint8_t fsync[] = {0xFF, 0xFF, 0xFF, 0x7F};
  // A frame of `a` cut after `cut` bytes, then an FSYNC on a half-word or one byte off it. The
  // loss shows where the FSYNC's first FF lands on an even byte of the frame (cut + odd <= 14);
  // at bytes 14-15 it completes the cut frame instead (its auxiliary byte), which no rule of
  // the stream can tell from a real frame (README, Limitations).
  for (std::size_t cut = 0; cut < 15; ++cut) {
    for (int odd = 0; odd < 2 && cut + static_cast<std::size_t>(odd) <= 14; ++odd) {
      CAPTURE(cut);
      CAPTURE(odd);
      bytes port(fsync, fsync + 4);
      port.insert(port.end(), fa.begin(), fa.end());
      port.insert(port.end(), fa.begin(), fa.begin() + static_cast<std::ptrdiff_t>(cut));
      if (odd) port.push_back(0x42);
      port.insert(port.end(), fsync, fsync + 4);
      port.insert(port.end(), fb.begin(), fb.end());
      const result r = deformat(port, frame_format::tpiu);
      // The whole frames of `a`, then those of `b`: as the two decoded one after the other.
      result want = deformat(fa);
      const result rb = deformat(fb);
      for (const auto& [id, s] : rb.streams) want.streams[id].insert(want.streams[id].end(), s.begin(), s.end());
      CHECK(r.streams == want.streams);
      const bool lost = cut != 0 || odd;  // FSYNC not at a frame boundary
      unsigned bad = 0;
      for (const diagnostic& d : r.errors) bad += d.code == error_code::bad_sync;
      CHECK(bad == (lost ? 1u : 0u));
      CHECK(deformat_chunks(port, frame_format::tpiu, {1, 3}) == r);
    }
  }
}

TEST_CASE("deformatter: a barrier frame (four FSYNCs) in a memory buffer") {
  std::mt19937 rng(12);
  const std::vector<item> a = random_items(rng, 100, {0x10, 0x11});
  const bytes fa = format_frames(a, rng, false);
  bytes buf = fa;
  for (int k = 0; k < 4; ++k) buf.insert(buf.end(), {0xFF, 0xFF, 0xFF, 0x7F});
  // After the barrier: 6 data bytes with no ID byte (source unknown), then ID 0x10 at byte 6.
  const bytes after = {0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x21, 0x55, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x00};
  buf.insert(buf.end(), after.begin(), after.end());
  const result r = deformat(buf);
  result want = deformat(fa);
  for (std::uint8_t v : {0x55, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10}) want.streams[0x10].push_back(v);
  CHECK(r.streams == want.streams);
  bool barrier = false, no_id = false;
  for (const diagnostic& d : r.errors) {
    if (d.code == error_code::barrier) barrier = d == diagnostic{error_code::barrier, fa.size(), 16};
    if (d.code == error_code::no_id_data && d.offset == fa.size() + 16) no_id = d.length == 6;
  }
  CHECK(barrier);
  CHECK(no_id);
}

// ---- batched delivery (on_data(const data_batch&)) ------------------------------------------
namespace {

// One data byte as it left the deformatter: its source, value and input offset.
struct out_byte {
  int id;
  std::uint8_t value;
  std::uint64_t offset;
  bool operator==(const out_byte&) const = default;
};

// A reference written from the frame rules alone, one byte at a time (memory-aligned frames):
// every data byte of a valid trace ID with its input offset.
std::vector<out_byte> reference_bytes(const bytes& in) {
  std::vector<out_byte> v;
  int cur = -1;  // no ID byte yet (or forgotten at a barrier)
  auto emit = [&](std::uint8_t b, std::uint64_t at) {
    if (cur > 0 && cur < 0x70) v.push_back({cur, b, at});
  };
  for (std::size_t o = 0; o + 16 <= in.size(); o += 16) {
    const std::uint8_t* f = in.data() + o;
    bool barrier = true;
    for (unsigned k = 0; k < 16; k += 4)
      barrier = barrier && f[k] == 0xFF && f[k + 1] == 0xFF && f[k + 2] == 0xFF && f[k + 3] == 0x7F;
    if (barrier) {
      cur = -1;
      continue;
    }
    const unsigned aux = f[15];
    for (unsigned k = 0; k < 8; ++k) {
      const std::uint8_t b = f[2 * k];
      if (b & 1u) {
        const bool delayed = ((aux >> k) & 1u) != 0 && k < 7;
        if (delayed) emit(f[2 * k + 1], o + 2 * k + 1);
        cur = b >> 1;
        if (!delayed && k < 7) emit(f[2 * k + 1], o + 2 * k + 1);
      } else {
        emit(static_cast<std::uint8_t>(b | ((aux >> k) & 1u)), o + 2 * k);
        if (k < 7) emit(f[2 * k + 1], o + 2 * k + 1);
      }
    }
  }
  return v;
}

// What the batch API delivered: each byte with offset_of(i), the batches' shapes, and the
// diagnostics with the number of data bytes delivered before each (their place in the stream).
struct batch_result {
  std::vector<out_byte> bytes;
  std::vector<std::pair<diagnostic, std::size_t>> errors;
  std::vector<std::size_t> batch_frames_seen;  // frames of each batch
  std::vector<int> batch_ids;
  std::vector<std::size_t> batch_ends;  // bytes delivered after each batch
  bool operator==(const batch_result&) const = default;
};

struct batch_sink {
  batch_result* r;
  void operator()(const data_batch& b) const {
    REQUIRE(b.size >= 1);
    REQUIRE(b.frames >= 1);
    REQUIRE(b.frames <= batch_frames);
    REQUIRE(valid_trace_id(b.id));
    std::size_t bits = 0;
    bool whole = true;
    for (std::size_t j = 0; j < b.frames; ++j) {
      REQUIRE(b.frame_masks[j] != 0);  // every frame of a batch gives it bytes
      REQUIRE((b.frame_masks[j] & 0x8000u) == 0);  // never byte 15 (the auxiliary byte)
      for (unsigned m = b.frame_masks[j]; m != 0; m &= m - 1) ++bits;
      whole = whole && b.frame_masks[j] == whole_frame;
    }
    REQUIRE(bits == b.size);
    for (std::size_t i = 0; i < b.size; ++i) {
      const std::uint64_t at = b.offset_of(i);
      // The documented rule for batches of whole frames.
      if (whole) REQUIRE(at == b.offset + 16 * (i / 15) + i % 15);
      r->bytes.push_back({b.id, b.bytes[i], at});
    }
    r->batch_frames_seen.push_back(b.frames);
    r->batch_ids.push_back(b.id);
    r->batch_ends.push_back(r->bytes.size());
  }
  void operator()(const diagnostic& d) const { r->errors.emplace_back(d, r->bytes.size()); }
};

batch_result deformat_batches(const bytes& in, frame_format f, const std::vector<std::size_t>& sizes = {}) {
  batch_result r;
  deformatter d(f);
  batch_sink s{&r};
  if (sizes.empty())
    d.decode(in.data(), in.size(), s, s);
  else
    feed_chunks(d, in, sizes, s);
  return r;
}

// The per-run API's output in the same form: each run's first byte at the run's offset (the
// later bytes of a run get the reference's offsets where given, else the run's offset + place,
// which only the first-byte check relies on), diagnostics placed the same way.
struct run_bytes {
  std::vector<out_byte> bytes;
  std::vector<std::size_t> run_starts;  // index of each run's first byte
  std::vector<std::pair<diagnostic, std::size_t>> errors;
};
run_bytes deformat_runs(const bytes& in, frame_format f) {
  run_bytes r;
  deformatter d(f);
  auto on_data = [&](std::uint8_t id, const std::uint8_t* p, std::size_t n, std::uint64_t at) {
    r.run_starts.push_back(r.bytes.size());
    for (std::size_t i = 0; i < n; ++i) r.bytes.push_back({id, p[i], at + i});
  };
  auto on_error = [&](const diagnostic& e) { r.errors.emplace_back(e, r.bytes.size()); };
  d.decode(in.data(), in.size(), on_data, on_error);
  return r;
}

// Batches against runs: the same bytes in the same order under the same IDs, each run's first
// byte at the offset the batch gives it, the same diagnostics at the same places.
void check_batches_equal_runs(const batch_result& b, const run_bytes& r) {
  REQUIRE(b.bytes.size() == r.bytes.size());
  for (std::size_t i = 0; i < b.bytes.size(); ++i) {
    REQUIRE(b.bytes[i].id == r.bytes[i].id);
    REQUIRE(b.bytes[i].value == r.bytes[i].value);
  }
  for (std::size_t s : r.run_starts) REQUIRE(b.bytes[s].offset == r.bytes[s].offset);
  CHECK(b.errors == r.errors);
}

}  // namespace

TEST_CASE("deformatter batches: the formatted ETMv4 captures (reference offsets, runs, chunks)") {
  const std::string dir = etmv4_dir();
  const char* names[] = {"a57_single_step", "bugfix-exact-match", "juno-uname-001", "juno_r1_1",
                         "a55-test-tpiu"};
  std::uint64_t checked = 0;
  for (const std::string name : names) {
    CAPTURE(name);
    const std::string snap = dir + "/snapshots/" + name;
    const std::string format = ini_value(snap + "/trace.ini", "buffer0", "format");
    const std::string file = ini_value(snap + "/trace.ini", "buffer0", "file");
    REQUIRE_MESSAGE(!format.empty(), "no snapshot at " << snap);
    const frame_format f = format == "coresight" ? frame_format::memory_aligned : frame_format::dstream;
    const bytes in = slurp(snap + "/" + file);
    REQUIRE(!in.empty());
    const batch_result b = deformat_batches(in, f);
    check_batches_equal_runs(b, deformat_runs(in, f));
    if (f == frame_format::memory_aligned) {
      CHECK(b.bytes == reference_bytes(in));  // every byte's offset
      // Repeated (as the benchmark does): batches fill up to batch_frames frames.
      bytes rep;
      for (int k = 0; k < 3; ++k) rep.insert(rep.end(), in.begin(), in.end() - static_cast<std::ptrdiff_t>(in.size() % 16));
      const batch_result br = deformat_batches(rep, f);
      CHECK(br.bytes == reference_bytes(rep));
    } else {
      for (std::size_t n : b.batch_frames_seen) CHECK(n == 1);  // TPIU/DSTREAM: a frame a batch
    }
    // Chunks: the same bytes, offsets and diagnostics (batches end at each decode_part).
    for (const std::vector<std::size_t>& sizes :
         {std::vector<std::size_t>{1}, {7}, {16}, {1, 7, 16, 500, 3, 4096}, {1000}, {15, 17}}) {
      batch_result c = deformat_batches(in, f, sizes);
      CHECK(c.bytes == b.bytes);
      CHECK(c.errors == b.errors);
    }
    checked += b.bytes.size();
  }
  MESSAGE("batches: " << checked << " bytes of the ETMv4 captures, each with its offset");
}

TEST_CASE("deformatter batches: random interleavings, cut at ID changes, chunks split anywhere") {
  std::mt19937 rng(1717);
  std::uint64_t compared = 0;
  for (int round = 0; round < 300; ++round) {
    CAPTURE(round);
    std::vector<std::uint8_t> ids;
    const unsigned sources = 1 + rng() % 6;
    for (unsigned s = 0; s < sources; ++s) ids.push_back(static_cast<std::uint8_t>(1 + rng() % 0x6f));
    // Long runs too (up to ~40 frames of one source), so batches grow past a few frames.
    std::vector<item> items = random_items(rng, 1 + rng() % 4000, ids);
    if (round % 3 == 0) {
      std::vector<item> longer;
      for (const item& it : items)
        for (int k = 0; k < 1 + (round % 15); ++k) longer.push_back({it.id, static_cast<std::uint8_t>(rng())});
      items = longer;
    }
    bytes frames = format_frames(items, rng, round % 2 == 0);
    if (round % 10 == 5) {  // a barrier in the middle: the trace ID is forgotten
      const std::size_t at = frames.size() / 32 * 16;
      const bytes barrier = {0xFF, 0xFF, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF, 0x7F};
      frames.insert(frames.begin() + static_cast<std::ptrdiff_t>(at), barrier.begin(), barrier.end());
    }
    const batch_result b = deformat_batches(frames, frame_format::memory_aligned);
    CHECK(b.bytes == reference_bytes(frames));
    check_batches_equal_runs(b, deformat_runs(frames, frame_format::memory_aligned));
    // A batch ends where the trace ID changes: two batches of one source in a row only when
    // the first was full or a diagnostic (the barrier) came between them.
    for (std::size_t k = 0; k + 1 < b.batch_ids.size(); ++k) {
      if (b.batch_ids[k] != b.batch_ids[k + 1]) continue;
      bool between = false;
      for (const auto& e : b.errors) between = between || e.second == b.batch_ends[k];
      CHECK((b.batch_frames_seen[k] == batch_frames || between));
    }
    std::size_t changes = 0;  // and every change of source in the bytes starts a new batch
    for (std::size_t i = 1; i < b.bytes.size(); ++i) changes += b.bytes[i].id != b.bytes[i - 1].id;
    std::size_t batch_changes = 0;
    for (std::size_t k = 1; k < b.batch_ids.size(); ++k) batch_changes += b.batch_ids[k] != b.batch_ids[k - 1];
    CHECK(batch_changes == changes);
    std::vector<std::size_t> sizes;
    for (int k = 0; k < 16; ++k) sizes.push_back(1 + rng() % 70);
    batch_result c = deformat_batches(frames, frame_format::memory_aligned, sizes);
    CHECK(c.bytes == b.bytes);
    CHECK(c.errors == b.errors);
    compared += b.bytes.size();
  }
  MESSAGE("batches: " << compared << " bytes of 300 interleavings equal the reference");
}

TEST_CASE("deformatter batches: input cut in two at every byte, and one byte at a time") {
  std::mt19937 rng(77);
  std::vector<item> items = random_items(rng, 1500, {0x10, 0x22, 0x33});
  for (int k = 0; k < 1500; ++k) items.push_back({0x10, static_cast<std::uint8_t>(rng())});  // long run
  const bytes frames = format_frames(items, rng);
  const batch_result whole = deformat_batches(frames, frame_format::memory_aligned);
  CHECK(whole.bytes == reference_bytes(frames));
  for (std::size_t cut = 1; cut < frames.size(); ++cut) {
    CAPTURE(cut);
    batch_result r;
    deformatter d;
    batch_sink s{&r};
    d.decode_part(frames.data(), cut, s, s);
    d.decode_part(frames.data() + cut, frames.size() - cut, s, s);
    d.decode_end(s, s);
    REQUIRE(r.bytes == whole.bytes);
    REQUIRE(r.errors == whole.errors);
  }
  const batch_result ones = deformat_batches(frames, frame_format::memory_aligned, {1});
  CHECK(ones.bytes == whole.bytes);
  CHECK(ones.errors == whole.errors);
}

TEST_CASE("deformatter batches: TPIU and DSTREAM streams give the per-run API's bytes and offsets") {
  std::mt19937 rng(4242);
  for (int round = 0; round < 60; ++round) {
    CAPTURE(round);
    const std::vector<item> items = random_items(rng, 1 + rng() % 1500, {0x10, 0x11, 0x2a, 0x6f});
    const bytes frames = format_frames(items, rng);
    const bytes port = tpiu_stream(frames, rng() % 40, rng);
    const bytes ds = dstream_blocks(port, rng);
    for (const auto& [in, f] : {std::pair<const bytes&, frame_format>{port, frame_format::tpiu},
                                std::pair<const bytes&, frame_format>{ds, frame_format::dstream}}) {
      const batch_result b = deformat_batches(in, f);
      check_batches_equal_runs(b, deformat_runs(in, f));
      for (std::size_t n : b.batch_frames_seen) CHECK(n == 1);
      std::vector<std::size_t> sizes;
      for (int k = 0; k < 8; ++k) sizes.push_back(1 + rng() % 33);
      const batch_result c = deformat_batches(in, f, sizes);
      CHECK(c.bytes == b.bytes);
      CHECK(c.errors == b.errors);
    }
  }
}

TEST_CASE("deformatter batches: null and reserved IDs, data before the first ID byte") {
  // The hand-built frames of the null/reserved test, then the same with a first frame of data
  // before any ID byte: diagnostics at the same places as with runs, no batch for IDs 0/0x7D.
  bytes f(48, 0);
  for (unsigned j = 0; j < 15; ++j) f[j] = static_cast<std::uint8_t>(0x40 + 2 * j);
  f[16] = 0x05 << 1 | 1;
  for (unsigned j = 17; j < 24; ++j) f[j] = static_cast<std::uint8_t>(0x10 + 2 * j);
  f[24] = 0x01;  // ID 0
  f[32] = 0x7D << 1 | 1;
  f[33] = 0xAA;
  f[36] = 0x05 << 1 | 1;
  const batch_result b = deformat_batches(f, frame_format::memory_aligned);
  CHECK(b.bytes == reference_bytes(f));
  check_batches_equal_runs(b, deformat_runs(f, frame_format::memory_aligned));
  REQUIRE(b.errors.size() == 3);
  CHECK(b.errors[0].first == diagnostic{error_code::no_id_data, 0, 15});  // bytes 0-14
  CHECK(b.errors[1].first.code == error_code::null_id_data);
  CHECK(b.errors[2].first.code == error_code::reserved_id);
  for (int id : b.batch_ids) CHECK(id == 0x05);
}

TEST_CASE("deformatter batches: the path this build tests") {
  // coresight-deformatter runs the block path of byte shuffles: on x86-64 four frames at a
  // time with AVX-512 (BW, VBMI2, and POPCNT) where the CPU has it, else two at a time with
  // AVX2 where it has that, else SSSE3 (every x86-64 CPU CI runs on has it);
  // coresight-deformatter-avx2 (TRACECODEC_DEFORMAT_NO_AVX512) keeps to AVX2 and SSSE3,
  // coresight-deformatter-ssse3 (and TRACECODEC_DEFORMAT_NO_AVX2) to the SSSE3 one on every
  // x86 CPU; Advanced SIMD on AArch64 (aarch64-coresight, built with GCC and with Clang);
  // coresight-deformatter-portable the scalar one. All are held to the same checks.
  const std::string path = deformatter::batch_path();
#if defined(TRACECODEC_DEFORMAT_PORTABLE)
  CHECK_FALSE(deformatter::simd_batches());
  CHECK(path == "scalar");
#elif defined(__x86_64__) || defined(__i386__)
  CHECK(deformatter::simd_batches());
  // The CPU asked here, apart from the deformatter's own test.
#if defined(__x86_64__)
  const bool avx512 = __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vbmi2") &&
                      __builtin_cpu_supports("popcnt");
  const bool avx2 = __builtin_cpu_supports("avx2");
#else
  const bool avx512 = false, avx2 = false;  // the four- and two-frame paths are x86-64's
#endif
#if defined(TRACECODEC_DEFORMAT_NO_AVX512) && defined(TRACECODEC_DEFORMAT_NO_AVX2)
  (void)avx512;
  (void)avx2;
  CHECK(path == "SSSE3");
#elif defined(TRACECODEC_DEFORMAT_NO_AVX512)
  (void)avx512;
  CHECK(path == (avx2 ? "AVX2" : "SSSE3"));
#elif defined(TRACECODEC_DEFORMAT_NO_AVX2)
  (void)avx2;
  CHECK(path == (avx512 ? "AVX-512" : "SSSE3"));
#else
  CHECK(path == (avx512 ? "AVX-512" : avx2 ? "AVX2" : "SSSE3"));
#endif
#elif defined(__aarch64__)
  CHECK(deformatter::simd_batches());
  CHECK(path == "Advanced SIMD");
#else
  CHECK_FALSE(deformatter::simd_batches());
  CHECK(path == "scalar");
#endif
  MESSAGE("batch path: " << path);
}

TEST_CASE("deformatter batches: dense interleavings with null and reserved IDs and barriers") {
  // Sources changing every few bytes, among them the null ID and reserved IDs (their data is
  // dropped and reported), barriers at random frames, long enough for many 64-frame blocks
  // of the block path and runs carried across them: against the reference bytes, and against
  // the per-run API (the scalar frame code) for the diagnostics.
  std::mt19937 rng(9090);
  std::uint64_t compared = 0;
  for (int round = 0; round < 120; ++round) {
    CAPTURE(round);
    std::vector<std::uint8_t> ids = {static_cast<std::uint8_t>(1 + rng() % 0x6f),
                                     static_cast<std::uint8_t>(1 + rng() % 0x6f)};
    if (round % 2 == 0) ids.push_back(0x00);
    if (round % 3 == 0) ids.push_back(static_cast<std::uint8_t>(0x70 + rng() % 14));
    std::vector<item> items;
    while (items.size() < 2000 + rng() % 6000) {
      const std::uint8_t id = ids[rng() % ids.size()];
      const std::size_t run = round % 4 == 0 ? 1 + rng() % 300 : 1 + rng() % 12;
      for (std::size_t k = 0; k < run; ++k) items.push_back({id, static_cast<std::uint8_t>(rng())});
    }
    bytes frames = format_frames(items, rng, round % 5 != 0);
    const bytes barrier = {0xFF, 0xFF, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF, 0x7F};
    for (int b = 0; b < round % 4; ++b) {
      const std::size_t at = rng() % (frames.size() / 16 + 1) * 16;
      frames.insert(frames.begin() + static_cast<std::ptrdiff_t>(at), barrier.begin(), barrier.end());
    }
    const batch_result b = deformat_batches(frames, frame_format::memory_aligned);
    CHECK(b.bytes == reference_bytes(frames));
    check_batches_equal_runs(b, deformat_runs(frames, frame_format::memory_aligned));
    std::vector<std::size_t> sizes;
    for (int k = 0; k < 8; ++k) sizes.push_back(1 + rng() % 3000);
    const batch_result c = deformat_batches(frames, frame_format::memory_aligned, sizes);
    CHECK(c.bytes == b.bytes);
    CHECK(c.errors == b.errors);
    compared += b.bytes.size();
  }
  MESSAGE("batches: " << compared << " bytes of 120 dense interleavings equal the reference");
}
