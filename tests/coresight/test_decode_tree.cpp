// SPDX-License-Identifier: Apache-2.0
// The decode tree (coresight/decode_tree.hpp): several real trace streams (ETE buffers of
// ../shared/conformance/ete, ETMv4 streams from OpenCSD's listings of
// ../shared/conformance/etmv4) interleaved at random by the test formatter (formatter.hpp),
// decoded through one tree in chunks of random sizes, must give each source exactly what its
// decoder gives on its stream alone, with every offset mapped to the place the formatter put
// that byte; barriers, unrouted trace IDs and the history bound; and the formatted ETMv4
// captures, whose per-ID packets must equal those of OpenCSD's bytes for each ID.
#include <doctest/doctest.h>

#include <tracecodec/coresight/decode_tree.hpp>
#include <tracecodec/ete/element/reader.hpp>
#include <tracecodec/ete/packet/decoder.hpp>
#include <tracecodec/host/ete/snapshot.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "formatter.hpp"

using namespace test_formatter;
namespace cs = tracecodec::coresight;
namespace ete = tracecodec::ete;
namespace snapshot = tracecodec::ete::snapshot;

namespace {

std::string ete_dir() {
  const char* d = std::getenv("TRACECODEC_CONFORMANCE_DIR");
  return d ? d : "../shared/conformance/ete";
}

struct stream {
  std::uint8_t id;
  ete::registers regs;
  bytes data;
};

// Real streams with different configurations: four ETE buffers (speculation, contexts with
// VMIDs, timestamp markers, Q packets) and two ETMv4 sources of juno_r1_1 (OpenCSD's bytes).
std::vector<stream> real_streams() {
  std::vector<stream> v;
  std::uint8_t id = 0x11;
  for (const char* name : {"ete_spec_1", "trace_file_cid_vmid", "ts_marker", "q_elem"}) {
    const snapshot::loaded s = snapshot::load(ete_dir() + "/snapshots/" + name);
    REQUIRE_MESSAGE(s.error.empty(), s.error);
    REQUIRE(!s.buffers.empty());
    v.push_back({id, s.buffers[0].regs, s.buffers[0].data});
    id = static_cast<std::uint8_t>(id + 0x11);
  }
  const std::string j = etmv4_dir() + "/snapshots/juno_r1_1";
  snapshot::load_options opt;
  opt.read_data = false;
  opt.read_memory = false;
  const snapshot::loaded s = snapshot::load(j, opt);
  REQUIRE_MESSAGE(s.error.empty(), s.error);
  const std::map<int, bytes> listed = listed_streams(etmv4_dir() + "/expected/juno_r1_1.packets.txt");
  for (const snapshot::trace_source& t : s.buffers[0].sources)
    if (t.decodable && (t.trctraceidr == 0x10 || t.trctraceidr == 0x13)) {
      REQUIRE(listed.count(static_cast<int>(t.trctraceidr)));
      v.push_back({static_cast<std::uint8_t>(t.trctraceidr), t.regs, listed.at(static_cast<int>(t.trctraceidr))});
    }
  REQUIRE(v.size() == 6);
  return v;
}

// The streams' bytes interleaved: sources take turns in runs of 1-40 bytes, each in order.
std::vector<item> interleave(const std::vector<stream>& v, std::mt19937& rng) {
  std::vector<item> items;
  std::vector<std::size_t> next(v.size(), 0);
  std::size_t left = 0;
  for (const stream& s : v) left += s.data.size();
  while (left != 0) {
    const std::size_t k = rng() % v.size();
    const std::size_t run = 1 + rng() % 40;
    for (std::size_t n = 0; n < run && next[k] < v[k].data.size(); ++n, --left)
      items.push_back({v[k].id, v[k].data[next[k]++]});
  }
  return items;
}

// A decoder per stream, configured with its registers, added to the tree under its ID.
template <class Decoder, class Tree>
std::vector<std::unique_ptr<Decoder>> decoders_for(Tree& tree, const std::vector<stream>& v) {
  std::vector<std::unique_ptr<Decoder>> d;
  for (const stream& s : v) {
    d.push_back(std::make_unique<Decoder>(s.regs));
    REQUIRE(tree.add_source(s.id, *d.back()) == cs::tree_status::ok);
  }
  return d;
}

// Where the formatter put byte `at` of source id's stream.
struct placement {
  std::map<int, std::vector<std::uint64_t>> of;
  placement(const std::vector<item>& items, const std::vector<std::uint64_t>& where) {
    for (std::size_t i = 0; i < items.size(); ++i) of[items[i].id].push_back(where[i]);
  }
  std::uint64_t operator()(int id, std::uint64_t at) const { return of.at(id).at(at); }
};

template <class T>
T without_offset(T x) {
  x.offset = 0;
  return x;
}

// What a decoder gives for one stream alone, or for one source through the tree.
template <class Item>
struct output {
  std::vector<Item> items;
  std::vector<cs::item_origin> origins;  // through the tree only
  std::vector<ete::diagnostic> errors;
  std::vector<cs::item_origin> error_origins;
};

template <class Item, class Decoder>
output<Item> alone(Decoder& d, const bytes& data) {
  output<Item> o;
  d.decode(data.data(), data.size(), [&](const Item& x) { o.items.push_back(x); },
           [&](const ete::diagnostic& e) { o.errors.push_back(e); });
  return o;
}

// Feeds the capture to the tree in chunks of random sizes (1 byte to 4 KiB).
template <class Item, class Tree>
std::map<int, output<Item>> through(Tree& tree, const bytes& capture, std::mt19937& rng,
                                    std::vector<cs::diagnostic>& frame_errors, bool check_bytes,
                                    const std::vector<stream>* streams = nullptr) {
  std::map<int, output<Item>> m;
  auto on_item = [&](const cs::item_origin& o, const Item& x) {
    m[o.id].items.push_back(x);
    m[o.id].origins.push_back(o);
    if constexpr (std::is_same_v<Item, ete::packet>) {
      if (check_bytes && streams && x.kind != ete::packet_kind::async) {
        // The packet's bytes are still held by the tree while it is delivered.
        std::uint8_t b[ete::max_packet_size];
        REQUIRE(x.size <= ete::max_packet_size);
        REQUIRE(tree.stream_bytes(o.id, o.stream_offset, x.size, b));
        for (const stream& s : *streams)
          if (s.id == o.id)
            CHECK(std::equal(b, b + x.size, s.data.begin() + static_cast<std::ptrdiff_t>(o.stream_offset)));
      }
    }
  };
  auto on_error = [&](const cs::item_origin& o, const ete::diagnostic& e) {
    m[o.id].errors.push_back(e);
    m[o.id].error_origins.push_back(o);
  };
  auto on_frame = [&](const cs::diagnostic& d) { frame_errors.push_back(d); };
  for (std::size_t at = 0; at < capture.size();) {
    const std::size_t n = std::min<std::size_t>(capture.size() - at, rng() % 3 == 0 ? 1 + rng() % 16 : 1 + rng() % 4096);
    tree.decode_part(capture.data() + at, n, on_item, on_error, on_frame);
    at += n;
  }
  tree.decode_end(on_item, on_error, on_frame);
  return m;
}

// The tree's output for a source equals its stream decoded alone: the same items in order,
// each origin's stream offset the item's offset alone, each offset where the formatter put
// that stream byte.
template <class Item>
void check_same(const output<Item>& want, const output<Item>& got, const placement& where, int id) {
  INFO("trace ID 0x" << std::hex << id << std::dec);
  REQUIRE(got.items.size() == want.items.size());
  for (std::size_t i = 0; i < want.items.size(); ++i) {
    CHECK(without_offset(got.items[i]) == without_offset(want.items[i]));
    CHECK(got.origins[i].id == id);
    CHECK(got.origins[i].stream_offset == want.items[i].offset);
    CHECK(got.items[i].offset == where(id, want.items[i].offset));
  }
  REQUIRE(got.errors.size() == want.errors.size());
  for (std::size_t i = 0; i < want.errors.size(); ++i) {
    CHECK(got.errors[i].code == want.errors[i].code);
    CHECK(got.errors[i].length == want.errors[i].length);
    CHECK(got.error_origins[i].stream_offset == want.errors[i].offset);
    // An error at the end of the stream (a cut packet) has no byte of its own there.
    if (want.errors[i].offset < where.of.at(id).size())
      CHECK(got.errors[i].offset == where(id, want.errors[i].offset));
  }
}

}  // namespace

TEST_CASE("decode tree: six real streams interleaved at random decode as each alone") {
  const std::vector<stream> streams = real_streams();
  for (unsigned seed = 1; seed <= 6; ++seed) {
    CAPTURE(seed);
    std::mt19937 rng(seed);
    const std::vector<item> items = interleave(streams, rng);
    std::vector<std::uint64_t> at;
    const bytes capture = format_frames(items, rng, true, &at);
    const placement where(items, at);

    SUBCASE("packets") {
      auto tree = std::make_unique<cs::decode_tree<ete::decoder<ete::runtime_config>>>();
      const auto decoders = decoders_for<ete::decoder<ete::runtime_config>>(*tree, streams);
      std::vector<cs::diagnostic> frame_errors;
      const auto got = through<ete::packet>(*tree, capture, rng, frame_errors, true, &streams);
      for (const stream& s : streams) {
        ete::decoder<ete::runtime_config> d(s.regs);
        const auto want = alone<ete::packet>(d, s.data);
        CHECK(want.items.size() > 10);
        REQUIRE(got.count(s.id));
        check_same(want, got.at(s.id), where, s.id);
      }
      // The formatter pads the last frame under the null ID: its only notice.
      for (const cs::diagnostic& d : frame_errors) CHECK(d.code == cs::error_code::null_id_data);
      CHECK(tree->unrouted_bytes() == 0);
    }
    SUBCASE("resolved elements") {
      using reader = ete::element_reader<ete::runtime_config>;
      auto tree = std::make_unique<cs::decode_tree<reader>>();
      const auto readers = decoders_for<reader>(*tree, streams);
      std::vector<cs::diagnostic> frame_errors;
      const auto got = through<ete::element>(*tree, capture, rng, frame_errors, false);
      for (const stream& s : streams) {
        auto d = std::make_unique<reader>(s.regs);
        const auto want = alone<ete::element>(*d, s.data);
        CHECK(want.items.size() > 10);
        check_same(want, got.at(s.id), where, s.id);
      }
    }
  }
}

TEST_CASE("decode tree: a barrier ends every source's session; each restarts after it") {
  const std::vector<stream> streams = real_streams();
  std::mt19937 rng(7);
  // Each stream cut in two; the first parts formatted, a barrier, the second parts.
  std::vector<stream> first, second;
  for (const stream& s : streams) {
    const std::size_t cut = s.data.size() / 3 + rng() % (s.data.size() / 3);
    first.push_back({s.id, s.regs, bytes(s.data.begin(), s.data.begin() + static_cast<std::ptrdiff_t>(cut))});
    second.push_back({s.id, s.regs, bytes(s.data.begin() + static_cast<std::ptrdiff_t>(cut), s.data.end())});
  }
  const std::vector<item> a = interleave(first, rng), b = interleave(second, rng);
  std::vector<std::uint64_t> wa, wb;
  bytes capture = format_frames(a, rng, true, &wa);
  const std::uint64_t barrier_at = capture.size();
  for (int k = 0; k < 4; ++k) capture.insert(capture.end(), {0xff, 0xff, 0xff, 0x7f});
  const bytes tail = format_frames(b, rng, true, &wb);
  for (std::uint64_t& w : wb) w += capture.size();
  capture.insert(capture.end(), tail.begin(), tail.end());

  auto tree = std::make_unique<cs::decode_tree<ete::decoder<ete::runtime_config>>>();
  const auto decoders = decoders_for<ete::decoder<ete::runtime_config>>(*tree, streams);
  std::vector<cs::diagnostic> frame_errors;
  const auto got = through<ete::packet>(*tree, capture, rng, frame_errors, true, &streams);
  CHECK(std::count(frame_errors.begin(), frame_errors.end(),
                   cs::diagnostic{cs::error_code::barrier, barrier_at, 16}) == 1);

  std::vector<item> all = a;
  all.insert(all.end(), b.begin(), b.end());
  std::vector<std::uint64_t> wall = wa;
  wall.insert(wall.end(), wb.begin(), wb.end());
  const placement where(all, wall);
  for (std::size_t k = 0; k < streams.size(); ++k) {
    // Expected: the first part as one session, then the second as a new one, its offsets
    // after the first part's bytes.
    ete::decoder<ete::runtime_config> d(streams[k].regs);
    output<ete::packet> want = alone<ete::packet>(d, first[k].data);
    d.reset();
    const output<ete::packet> rest = alone<ete::packet>(d, second[k].data);
    for (ete::packet p : rest.items) {
      p.offset += first[k].data.size();
      want.items.push_back(p);
    }
    for (ete::diagnostic e : rest.errors) {
      e.offset += first[k].data.size();
      want.errors.push_back(e);
    }
    // The second session starts unsynchronized (unless a part starts with an A-Sync).
    CHECK(!rest.errors.empty());
    check_same(want, got.at(streams[k].id), where, streams[k].id);
  }
}

// A decoder whose items are the bytes of its stream: each byte's offsets, as the tree gives them.
struct byte_item {
  std::uint64_t offset;
  std::uint8_t value;
};
struct byte_decoder {
  std::uint64_t at = 0;
  template <class OnItem, class OnError>
  void decode_part(const std::uint8_t* p, std::size_t n, OnItem&& on_item, OnError&&) noexcept {
    for (std::size_t i = 0; i < n; ++i) on_item(byte_item{at++, p[i]});
  }
  template <class OnItem, class OnError>
  void decode_end(OnItem&&, OnError&&) noexcept {}
  void reset() noexcept { at = 0; }
};

// OpenCSD 1.8.0's deformatter (TraceFmtDcdImpl::unpackFrame) numbers each run of a source's
// data in a frame from the frame start, or from the ID byte that opened the run; an ID change
// to a source that gets no byte before the next ID change leaves its start to the next source.
// Hand-built: A = 0x10, B = 0x11, C = 0x12.
TEST_CASE("decode tree: opencsd_index numbers each run as OpenCSD's deformatter does") {
  const std::uint8_t A = 0x21, B = 0x23, C = 0x25;  // ID bytes
  std::vector<std::uint8_t> capture = {
      // frame 0 (offset 0): ID A at once, then 14 data bytes of A
      A, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x00,
      // frame 1 (offset 16): A's 0x40 0x41; ID B delayed (aux bit 1): 0x42 is still A's; ID C
      // at once: B got nothing, so C's run starts where B's did (16 + 2); C's 0x50 0x52 0x53;
      // ID A at once (16 + 8): A's 0x60 ... 0x66
      0x40, 0x41, B, 0x42, C, 0x50, 0x52, 0x53, A, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x02};
  cs::decode_tree<byte_decoder> tree;
  byte_decoder a, b, c;
  REQUIRE(tree.add_source(0x10, a) == cs::tree_status::ok);
  REQUIRE(tree.add_source(0x11, b) == cs::tree_status::ok);
  REQUIRE(tree.add_source(0x12, c) == cs::tree_status::ok);
  struct seen {
    int id;
    std::uint8_t value;
    std::uint64_t input, opencsd;
  };
  std::vector<seen> got;
  tree.decode(
      capture.data(), capture.size(),
      [&](const cs::item_origin& o, const byte_item& x) {
        got.push_back({o.id, x.value, x.offset, tree.opencsd_index(o.id, o.stream_offset)});
      },
      [](const cs::item_origin&, const auto&) {}, [](const cs::diagnostic&) {});
  std::vector<seen> want;
  for (unsigned k = 1; k <= 14; ++k) want.push_back({0x10, std::uint8_t(k), k, k - 1});
  want.push_back({0x10, 0x40, 16, 16});
  want.push_back({0x10, 0x41, 17, 17});
  want.push_back({0x10, 0x42, 19, 18});
  want.push_back({0x12, 0x50, 21, 18});
  want.push_back({0x12, 0x52, 22, 19});
  want.push_back({0x12, 0x53, 23, 20});
  for (unsigned k = 0; k < 6; ++k) want.push_back({0x10, std::uint8_t(0x61 + k), 25 + k, 24 + k});
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i].id == want[i].id);
    CHECK(got[i].value == want[i].value);
    CHECK(got[i].input == want[i].input);
    CHECK(got[i].opencsd == want[i].opencsd);
  }
  CHECK(tree.opencsd_index(0x11, 0) == 0);  // B had no data: OpenCSD ends it at 0
}

TEST_CASE("decode tree: sources, unrouted trace IDs, the history bound") {
  using tree_t = cs::decode_tree<ete::decoder<ete::runtime_config>, 2, 1>;
  const std::vector<stream> streams = real_streams();
  auto tree = std::make_unique<tree_t>();
  ete::decoder<ete::runtime_config> d0(streams[0].regs), d1(streams[1].regs), d2(streams[2].regs);
  CHECK(tree->add_source(0x00, d0) == cs::tree_status::invalid_id);
  CHECK(tree->add_source(0x70, d0) == cs::tree_status::invalid_id);
  CHECK(tree->add_source(0x7f, d0) == cs::tree_status::invalid_id);
  CHECK(tree->add_source(0x80, d0) == cs::tree_status::invalid_id);
  CHECK(tree->add_source(streams[0].id, d0) == cs::tree_status::ok);
  CHECK(tree->add_source(streams[0].id, d1) == cs::tree_status::duplicate_id);
  CHECK(tree->add_source(streams[1].id, d1) == cs::tree_status::ok);
  CHECK(tree->add_source(streams[2].id, d2) == cs::tree_status::full);
  CHECK(tree->size() == 2);
  CHECK(tree->id_at(1) == streams[1].id);
  CHECK(tree->decoder_of(streams[1].id) == &d1);
  CHECK(tree->decoder_of(streams[2].id) == nullptr);
  CHECK(tree->decoder_of(0xff) == nullptr);

  // Three sources in the capture, two in the tree: the third's data is dropped, reported once.
  std::mt19937 rng(3);
  const std::vector<stream> three(streams.begin(), streams.begin() + 3);
  const std::vector<item> items = interleave(three, rng);
  std::vector<std::uint64_t> at;
  const bytes capture = format_frames(items, rng, true, &at);
  std::vector<cs::diagnostic> frame_errors;
  const auto got = through<ete::packet>(*tree, capture, rng, frame_errors, true, &streams);
  std::size_t unrouted = 0;
  std::uint64_t first_at = ~std::uint64_t{0};
  for (std::size_t i = 0; i < items.size(); ++i)
    if (items[i].id == three[2].id) first_at = std::min(first_at, at[i]);
  for (const cs::diagnostic& d : frame_errors)
    if (d.code == cs::error_code::unrouted_data) {
      ++unrouted;
      CHECK(d.offset == first_at);
    }
  CHECK(unrouted == 1);
  CHECK(tree->unrouted_bytes() == three[2].data.size());
  CHECK(got.count(three[2].id) == 0);

  // With a history of one frame, an item whose first byte is in an earlier frame of its
  // source has no input offset; those in the source's latest frame have theirs.
  const placement where(items, at);
  std::size_t unknown = 0, known = 0;
  for (int k = 0; k < 2; ++k) {
    const output<ete::packet>& o = got.at(three[static_cast<std::size_t>(k)].id);
    for (std::size_t i = 0; i < o.items.size(); ++i) {
      if (o.items[i].offset == cs::unknown_offset) {
        ++unknown;
      } else {
        ++known;
        CHECK(o.items[i].offset == where(three[static_cast<std::size_t>(k)].id, o.origins[i].stream_offset));
      }
    }
  }
  CHECK(unknown > 0);
  CHECK(known > 0);
  CHECK(tree->input_offset(three[0].id, 0) == cs::unknown_offset);  // long gone
  CHECK(tree->input_offset(three[2].id, 0) == cs::unknown_offset);  // no such source
}

TEST_CASE("decode tree: formatted ETMv4 captures give each ID the packets of OpenCSD's bytes") {
  for (const std::string name : {"juno_r1_1", "bugfix-exact-match", "juno-uname-001", "a57_single_step", "a55-test-tpiu"}) {
    CAPTURE(name);
    std::size_t packets = 0;
    snapshot::load_options opt;
    opt.read_memory = false;
    const snapshot::loaded s = snapshot::load(etmv4_dir() + "/snapshots/" + name, opt);
    REQUIRE_MESSAGE(s.error.empty(), s.error);
    const snapshot::buffer& b = s.buffers[0];
    REQUIRE(b.format != snapshot::buffer_format::source_data);
    std::map<int, std::map<std::size_t, std::uint64_t>> listed_idx;
    const std::map<int, bytes> listed =
        listed_streams(etmv4_dir() + "/expected/" + name + ".packets.txt", &listed_idx);
    std::size_t idx_compared = 0, idx_equal = 0;
    auto tree = std::make_unique<cs::decode_tree<ete::decoder<ete::runtime_config>>>(
        b.format == snapshot::buffer_format::dstream_coresight ? cs::frame_format::dstream
                                                               : cs::frame_format::memory_aligned);
    std::map<int, ete::registers> regs;
    std::vector<std::unique_ptr<ete::decoder<ete::runtime_config>>> decoders;
    for (const snapshot::trace_source& t : b.sources)
      if (t.decodable) {
        decoders.push_back(std::make_unique<ete::decoder<ete::runtime_config>>(t.regs));
        REQUIRE(tree->add_source(static_cast<std::uint8_t>(t.trctraceidr), *decoders.back()) ==
                cs::tree_status::ok);
        regs[static_cast<int>(t.trctraceidr)] = t.regs;
      }
    std::map<int, std::vector<ete::packet>> got;
    std::map<int, std::vector<ete::diagnostic>> got_errors;
    tree->decode(
        b.data.data(), b.data.size(),
        [&](const cs::item_origin& o, const ete::packet& p) {
          ete::packet q = p;
          q.offset = o.stream_offset;
          got[o.id].push_back(q);
          // The tree's OpenCSD index of the packet equals OpenCSD's Idx of the line listing it.
          const auto& at = listed_idx[o.id];
          const auto line = at.find(o.stream_offset);
          if (line != at.end()) {
            ++idx_compared;
            const std::uint64_t ours = tree->opencsd_index(o.id, o.stream_offset);
            idx_equal += ours == line->second;
            if (ours != line->second && idx_compared - idx_equal <= 5)
              MESSAGE("ID " << int(o.id) << " stream offset " << o.stream_offset << ": opencsd_index "
                            << ours << ", OpenCSD's Idx " << line->second);
          }
        },
        [&](const cs::item_origin& o, const ete::diagnostic& e) {
          ete::diagnostic f = e;
          f.offset = o.stream_offset;
          got_errors[o.id].push_back(f);
        },
        [](const cs::diagnostic&) {});
    CHECK(tree->unrouted_bytes() == 0);
    for (const auto& entry : listed) {  // not a structured binding: clang 14 cannot capture one
      const int id = entry.first;
      const bytes& data = entry.second;
      CAPTURE(id);
      REQUIRE(regs.count(id));
      std::vector<ete::packet> want;
      std::vector<ete::diagnostic> want_errors;
      ete::decoder<ete::runtime_config> d(regs.at(id));
      d.decode(data.data(), data.size(), [&](const ete::packet& p) { want.push_back(p); },
               [&](const ete::diagnostic& e) { want_errors.push_back(e); });
      packets += want.size();
      CHECK(got[id] == want);
      CHECK(got_errors[id] == want_errors);
    }
    CHECK(packets >= 8);  // a57_single_step: 8
    CHECK(idx_compared + 2 >= packets);  // every packet but an A-Sync cut by the start of sync
    CHECK(idx_equal == idx_compared);
    MESSAGE(name << ": " << idx_equal << " of " << idx_compared << " packets at OpenCSD's Idx");
    CHECK(got.size() == listed.size());  // no packets for IDs OpenCSD lists nothing for
  }
}
