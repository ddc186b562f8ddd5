// SPDX-License-Identifier: Apache-2.0
// Streaming behaviour: chunking at any byte, synchronization, recovery after errors.
#include <algorithm>
#include <doctest/doctest.h>

#include <tracecodec/host/ete/format.hpp>

#include <random>

#include "common.hpp"

using namespace test;

namespace {
const registers regs{0x2801cea1, 0xd0001088, 0, 0x47705a13, 0x1, 0};

std::vector<std::uint8_t> async12() {
  std::vector<std::uint8_t> v(11, 0);
  v.push_back(0x80);
  return v;
}

std::vector<std::uint8_t> sample() {
  std::vector<std::uint8_t> v = async12();
  const std::uint8_t rest[] = {
      0x01, 0x00,                                      // Trace Info
      0x04,                                            // Trace On
      0x85, 0x00, 0x02, 0x10, 0x08, 0x00, 0x80, 0xff, 0xff, 0x31,  // Address+ctx 64 IS0
      0xf7, 0xfd, 0xc2,                                // atoms
      0x95, 0xa5, 0x01,                                // short address, 2 bytes
      0x02, 0xd7, 0xdf, 0x01,                          // Timestamp
      0x06, 0x1d, 0x9a, 0x10, 0x20, 0x30, 0x00,        // Exception IRQ 32-bit IS0
      0x81, 0xf1, 1, 0, 0, 0, 2, 0, 0, 0,              // Context with VMID and CID
      0xaa, 0x34, 0x3f, 0x06, 0x00, 0x83, 0x01,        // Q 32-bit IS0 + 2-byte count
      0x0e, 0x21,                                      // Cycle Count format 1_1
  };
  v.insert(v.end(), std::begin(rest), std::end(rest));
  return v;
}
}  // namespace

TEST_CASE("a packet split at any byte decodes identically") {
  std::vector<std::uint8_t> bytes;
  for (int i = 0; i < 3; ++i) {
    const auto s = sample();
    bytes.insert(bytes.end(), s.begin(), s.end());
  }
  const decoded whole = decode_all(regs, bytes);
  REQUIRE(whole.errors.empty());
  REQUIRE(whole.packets.size() == 3 * 13);
  for (std::size_t a = 0; a <= bytes.size(); ++a) {
    CAPTURE(a);
    const decoded split = decode_chunked(regs, bytes, {a});
    CHECK(split.errors.empty());
    CHECK(split.packets == whole.packets);
  }
  // Byte-by-byte feeding and random multi-way splits.
  std::vector<std::size_t> every;
  for (std::size_t i = 1; i < bytes.size(); ++i) every.push_back(i);
  CHECK(decode_chunked(regs, bytes, every).packets == whole.packets);
  std::mt19937 rng(7);
  for (int t = 0; t < 200; ++t) {
    std::vector<std::size_t> cuts;
    std::size_t at = 0;
    while (true) {
      at += 1 + rng() % 9;
      if (at >= bytes.size()) break;
      cuts.push_back(at);
    }
    CHECK(decode_chunked(regs, bytes, cuts).packets == whole.packets);
  }
}

TEST_CASE("bytes before the first A-Sync are skipped and reported once") {
  std::vector<std::uint8_t> bytes = {0x12, 0x00, 0x80, 0xff, 0x00, 0x00, 0x9d};
  const auto s = sample();
  bytes.insert(bytes.end(), s.begin(), s.end());
  const decoded d = decode_all(regs, bytes);
  REQUIRE(d.errors.size() == 1);
  CHECK(d.errors[0].code == error_code::unsynchronized);
  CHECK(d.errors[0].offset == 0);
  CHECK(d.errors[0].length == 7);
  REQUIRE(d.packets.size() == 13);
  CHECK(d.packets[0].kind == packet_kind::async);
  CHECK(d.packets[0].offset == 7);
  // Same when fed one byte at a time.
  std::vector<std::size_t> every;
  for (std::size_t i = 1; i < bytes.size(); ++i) every.push_back(i);
  const decoded c = decode_chunked(regs, bytes, every);
  CHECK(c.errors == d.errors);
  CHECK(c.packets == d.packets);
}

TEST_CASE("input without any A-Sync: everything skipped, one notice, no packets") {
  const std::vector<std::uint8_t> bytes = {0xf7, 0xf7, 0x00, 0x00, 0x04};
  const decoded d = decode_all(regs, bytes);
  REQUIRE(d.errors.size() == 1);
  CHECK(d.errors[0].code == error_code::unsynchronized);
  CHECK(d.errors[0].length == 5);
  CHECK(d.packets.empty());
}

TEST_CASE("a long A-Sync run across chunks is one packet; a short one is bad_async") {
  std::vector<std::uint8_t> bytes = async12();
  bytes.insert(bytes.end(), {0x04});
  bytes.insert(bytes.end(), 100, 0x00);
  bytes.push_back(0x80);
  bytes.push_back(0x04);
  const decoded d = decode_chunked(regs, bytes, {20, 50, 90});
  REQUIRE(d.errors.empty());
  REQUIRE(d.packets.size() == 4);
  CHECK(d.packets[2].kind == packet_kind::async);
  CHECK(d.packets[2].offset == 13);
  CHECK(d.packets[2].size == 101);
  // Encoding it reproduces the long run.
  CHECK(encode_all(regs, d.packets) == bytes);

  std::vector<std::uint8_t> bad = async12();
  bad.insert(bad.end(), {0x00, 0x00, 0x00, 0x80, 0x04});  // only 3 zeros: not an A-Sync
  bad.insert(bad.end(), {0x00, 0x00, 0x07});              // zeros ending in a reserved byte
  const auto tail = async12();
  bad.insert(bad.end(), tail.begin(), tail.end());
  bad.push_back(0x04);
  const decoded b = decode_all(regs, bad);
  REQUIRE(b.errors.size() == 1);  // the second run is skipped while unsynchronized
  CHECK(b.errors[0].code == error_code::bad_async);
  CHECK(b.errors[0].offset == 12);
  REQUIRE(b.packets.size() == 3);
  CHECK(b.packets[1].offset == 12 + 8);
  CHECK(b.packets[2].kind == packet_kind::trace_on);
}

TEST_CASE("after an error the decoder resumes at the next A-Sync and loses nothing after it") {
  const auto clean = sample();
  const decoded ref = decode_all(regs, clean);
  // Corrupt: a reserved header right after the first packets, then the clean trace again.
  std::vector<std::uint8_t> bytes = clean;
  bytes.insert(bytes.begin() + 15, 0x07);  // reserved in every configuration
  bytes.insert(bytes.end(), clean.begin(), clean.end());
  const decoded d = decode_all(regs, bytes);
  REQUIRE(d.errors.size() >= 1);
  CHECK(d.errors[0].code == error_code::reserved_header);
  CHECK(d.errors[0].offset == 15);
  // Everything from the second A-Sync on equals the clean decode, offsets shifted.
  REQUIRE(d.packets.size() >= ref.packets.size());
  const std::size_t base = clean.size() + 1;
  std::size_t k = 0;
  while (k < d.packets.size() && d.packets[k].offset != base) ++k;
  REQUIRE(d.packets.size() - k == ref.packets.size());
  for (std::size_t i = 0; i < ref.packets.size(); ++i) {
    packet p = d.packets[k + i];
    p.offset -= base;
    CHECK(p == ref.packets[i]);
  }
}

TEST_CASE("garbage never crashes or hangs; every byte is accounted for") {
  std::mt19937_64 rng(99);
  for (int t = 0; t < 300; ++t) {
    std::vector<std::uint8_t> bytes = sample();
    const std::size_t n = 1 + rng() % 200;
    for (std::size_t i = 0; i < n; ++i) bytes.push_back(static_cast<std::uint8_t>(rng()));
    if (t % 2) {
      const auto s = sample();
      bytes.insert(bytes.end(), s.begin(), s.end());
    }
    const decoded d = decode_all(regs, bytes);
    std::vector<std::size_t> cuts;
    for (std::size_t a = 3; a < bytes.size(); a += 1 + rng() % 13) cuts.push_back(a);
    const decoded c = decode_chunked(regs, bytes, cuts);
    CHECK(c.packets == d.packets);
    CHECK(c.errors == d.errors);
    for (const packet& p : d.packets) CHECK(p.offset + p.size <= bytes.size());
  }
}

TEST_CASE("invalid runtime configuration is an error value") {
  decoder<> dec(registers{0x2801cea1, 0xd0001088, 0, 0x12345678, 0x1, 0});
  const std::vector<std::uint8_t> bytes = sample();
  dec.feed(bytes.data(), bytes.size());
  packet p{};
  CHECK(dec.next(p) == decode_status::error);
  CHECK(dec.last_diagnostic().code == error_code::invalid_config);
  CHECK(dec.next(p) == decode_status::need_input);
  encoder<> enc(registers{0x2801cea1, 0xd0001001, 0, 0x47705a13, 0x1, 0});
  std::uint8_t out[16];
  CHECK(enc.encode(packet{}, out, sizeof out).error == error_code::invalid_config);
}

TEST_CASE("encoder: buffer too small writes nothing and keeps state") {
  encoder<> enc(regs);
  packet p{};
  p.kind = packet_kind::address_64_is0;
  p.address = 0xffff000012345678;
  std::uint8_t out[8] = {0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa};
  const auto r = enc.encode(p, out, sizeof out);
  CHECK(r.error == error_code::buffer_too_small);
  CHECK(r.size == 0);
  for (auto b : out) CHECK(b == 0xaa);
  CHECK(enc.state().history.entry[0].address == 0);
  std::uint8_t big[16];
  CHECK(enc.encode(p, big, sizeof big).size == 9);
  CHECK(enc.state().history.entry[0].address == 0xffff000012345678);
}

// The batch call must behave exactly like one encode(p, ...) per packet: the same bytes, the
// same state, and at the first packet that cannot be encoded it stops there, saying why.
TEST_CASE("encoder: a batch encodes like one call per packet and stops at the first failure") {
  std::vector<packet> ps;
  packet ti{};
  ti.kind = packet_kind::trace_info;
  ps.push_back(ti);
  packet a64{};
  a64.kind = packet_kind::address_64_is0;
  a64.address = 0xffff000012345678;
  ps.push_back(a64);
  packet atom{};
  atom.kind = packet_kind::atom_f6;  // EEEEN: header 0xE1
  atom.atom_count = 5;
  atom.atoms = 0b01111;
  ps.push_back(atom);
  ps.push_back(atom);
  packet a64b = a64;
  a64b.address = 0xffff000012340000;
  ps.push_back(a64b);
  packet exact{};
  exact.kind = packet_kind::address_exact;  // entry 1: a64's address
  exact.address = a64.address;
  exact.index = 1;
  ps.push_back(exact);
  packet f1{};
  f1.kind = packet_kind::atom_f1;
  f1.atom_count = 1;
  f1.atoms = 1;
  ps.push_back(f1);
  packet ts{};
  ts.kind = packet_kind::timestamp;
  ts.timestamp = 0x1234;
  ps.push_back(ts);
  const std::size_t good = ps.size();
  packet bad = atom;  // format 6 cannot say 3 atoms
  bad.atom_count = 3;
  bad.atoms = 0b011;
  ps.push_back(bad);
  ps.push_back(atom);

  // One call per packet: the reference bytes, and the state after each packet.
  std::vector<std::uint8_t> want;
  std::vector<std::size_t> ends;
  std::vector<stream_state> states;
  encoder<> one(regs);
  for (std::size_t i = 0; i < good; ++i) {
    std::uint8_t b[32];
    const auto r = one.encode(ps[i], b, sizeof b);
    REQUIRE(r);
    want.insert(want.end(), b, b + r.size);
    ends.push_back(want.size());
    states.push_back(one.state());
  }
  REQUIRE(ends[5] - ends[4] == 1);  // the exact match and the atoms are one byte each
  REQUIRE(want[ends[2] - 1] == 0xe1);

  std::vector<std::uint8_t> out(64, 0xaa);
  encoder<> many(regs);
  const encode_many_result r = many.encode(ps.data(), ps.size(), out.data(), out.size());
  CHECK(r.error == error_code::unencodable);
  CHECK(r.packets == good);
  CHECK(r.size == want.size());
  CHECK(std::vector<std::uint8_t>(out.begin(), out.begin() + static_cast<long>(r.size)) == want);
  CHECK(out[r.size] == 0xaa);  // nothing of the failed packet
  CHECK(many.state() == states.back());

  // Every capacity: as many whole packets as fit, then buffer_too_small; nothing past them.
  for (std::size_t cap = 0; cap <= want.size(); ++cap) {
    CAPTURE(cap);
    std::vector<std::uint8_t> o(cap + 8, 0xaa);
    encoder<> e(regs);
    const encode_many_result c = e.encode(ps.data(), good, o.data(), cap);
    std::size_t fit = 0;
    while (fit < good && ends[fit] <= cap) ++fit;
    CHECK(c.packets == fit);
    CHECK(c.size == (fit ? ends[fit - 1] : 0));
    CHECK(c.error == (fit == good ? error_code::ok : error_code::buffer_too_small));
    CHECK(std::equal(o.begin(), o.begin() + static_cast<long>(c.size), want.begin()));
    for (std::size_t k = c.size; k < o.size(); ++k) CHECK(o[k] == 0xaa);
    CHECK(e.state() == (fit ? states[fit - 1] : stream_state{}));
  }
}

// A packet that fails after part of it was built (here the context, after the address)
// leaves the state as it was.
TEST_CASE("encoder: a packet that fails part way changes no state") {
  encoder<> enc(regs);
  std::uint8_t out[32];
  packet a64{};
  a64.kind = packet_kind::address_64_is0;
  a64.address = 0xffff000012345678;
  REQUIRE(enc.encode(a64, out, sizeof out));
  const stream_state before = enc.state();
  packet actx{};
  actx.kind = packet_kind::address_ctx_64_is0;
  actx.address = 0xffff000000001000;
  actx.ctx.el = 7;  // no such exception level
  CHECK(enc.encode(actx, out, sizeof out).error == error_code::unencodable);
  CHECK(enc.state() == before);
  CHECK(enc.encode(&actx, 1, out, sizeof out).error == error_code::unencodable);
  CHECK(enc.state() == before);
  // Nor does it leave any of its bytes in the buffer, whether the packet is built in the
  // buffer (room for any packet) or beside it (less room than that).
  for (const std::size_t room : {std::size_t{64}, std::size_t{32}, std::size_t{12}}) {
    CAPTURE(room);
    std::uint8_t buf[64];
    for (std::uint8_t& b : buf) b = 0xaa;
    CHECK(enc.encode(actx, buf, room).error == error_code::unencodable);
    CHECK(enc.encode(&actx, 1, buf, room).error == error_code::unencodable);
    CHECK(std::count(std::begin(buf), std::end(buf), std::uint8_t{0xaa}) == 64);
    CHECK(enc.state() == before);
  }
  actx.ctx.el = 1;
  CHECK(enc.encode(actx, out, sizeof out).size == 10);
  CHECK(enc.state().history.entry[0].address == actx.address);
}

TEST_CASE("encoder: producer hands full values, gets hardware compression") {
  encoder<> enc(regs);
  std::uint8_t out[32];
  packet ti{};
  ti.kind = packet_kind::trace_info;
  REQUIRE(enc.encode(ti, out, sizeof out).size == 2);
  packet a{};
  a.kind = packet_kind::address_64_is0;
  a.address = 0x0000ffff00401000;
  REQUIRE(enc.encode(a, out, sizeof out).size == 9);
  packet s{};
  s.kind = packet_kind::address_short_is0;
  s.address = 0x0000ffff00401044;  // only bits [8:2] change: one payload byte
  auto r = enc.encode(s, out, sizeof out);
  REQUIRE(r.size == 2);
  CHECK(out[0] == 0x95);
  CHECK(out[1] == 0x11);
  s.address = 0x0000ffff00411044;  // bit 16 changes: two payload bytes
  r = enc.encode(s, out, sizeof out);
  REQUIRE(r.size == 3);
  CHECK(out[1] == (0x11 | 0x80));
  CHECK(out[2] == 0x88);  // A[16:9] of 0x411044
  s.address = 0x0000ffff10411044;  // bits above 16 differ: short form cannot say it
  CHECK(enc.encode(s, out, sizeof out).error == error_code::unencodable);
  packet x{};
  x.kind = packet_kind::address_exact;
  x.address = 0x0000ffff00401044;
  x.index = 1;
  CHECK(enc.encode(x, out, sizeof out).size == 1);
  CHECK(out[0] == 0x91);
  x.index = 0;
  x.address = 0x1234;
  CHECK(enc.encode(x, out, sizeof out).error == error_code::unencodable);
  packet ts{};
  ts.kind = packet_kind::timestamp;
  ts.timestamp = 0x6fd7;
  r = enc.encode(ts, out, sizeof out);
  REQUIRE(r.size == 4);
  CHECK(out[0] == 0x02);
  CHECK(out[1] == 0xd7);
  CHECK(out[2] == 0xdf);
  CHECK(out[3] == 0x01);
  ts.timestamp = 0x6fe0;  // D6.11.5: only the changed low bits
  r = enc.encode(ts, out, sizeof out);
  REQUIRE(r.size == 2);
  CHECK(out[1] == 0x60);
}

TEST_CASE("reset() starts a new session: unsynchronized, offset 0, state cleared") {
  const auto bytes = sample();
  decoder<> dec(regs);
  std::vector<packet> first, second;
  dec.decode(bytes.data(), bytes.size(), [&](const packet& p) { first.push_back(p); },
             [](const diagnostic&) {});
  CHECK(dec.state().history.entry[0].address != 0);
  dec.reset();
  CHECK(dec.state() == stream_state{});
  dec.decode(bytes.data(), bytes.size(), [&](const packet& p) { second.push_back(p); },
             [](const diagnostic&) {});
  CHECK(first == second);
  CHECK(first.size() == 13);
}

// The encoder's atom path computes a header and keeps it only if the header table decodes it
// back to the same packet. Checked here against the decoder itself: an atom packet encodes
// (to exactly one byte) if and only if some header byte decodes to it, and otherwise fails
// without writing. Every kind, count 0..26 and, per count, every pattern of up to 6 atoms or
// the format-6 shapes and near misses; two configurations.
TEST_CASE("encoder: every atom packet shape, against the decoder") {
  for (const registers& r : {presets::ete_1_0, presets::ete_spec255}) {
    packet by_header[256]{};  // what each one-byte header decodes to (async = not an atom)
    for (unsigned h = 0xc0; h <= 0xff; ++h) {
      std::vector<std::uint8_t> b = async12();
      b.push_back(static_cast<std::uint8_t>(h));
      const decoded d = decode_all(r, b);
      REQUIRE(d.errors.empty());
      REQUIRE(d.packets.size() == 2);
      by_header[h] = d.packets[1];
    }
    encoder<> enc(r);
    unsigned encoded = 0, refused = 0;
    for (unsigned k = static_cast<unsigned>(packet_kind::atom_f1);
         k <= static_cast<unsigned>(packet_kind::atom_f6); ++k) {
      for (unsigned n = 0; n <= 26; ++n) {
        std::vector<std::uint32_t> patterns;
        if (n <= 6) {
          for (std::uint32_t a = 0; a < (1u << n); ++a) patterns.push_back(a);
        } else {
          const std::uint32_t all = (1u << n) - 1, es = (1u << (n - 1)) - 1;
          patterns = {all, es, es & ~1u, all ^ 2u, all | (1u << n)};
        }
        patterns.push_back(1u << n);  // a bit above the count
        for (const std::uint32_t a : patterns) {
          packet p{};
          p.kind = static_cast<packet_kind>(k);
          p.atoms = a;
          p.atom_count = static_cast<std::uint8_t>(n);
          int expect = -1;
          for (unsigned h = 0xc0; h <= 0xff; ++h)
            if (by_header[h].kind == p.kind && by_header[h].atoms == a && by_header[h].atom_count == n)
              expect = static_cast<int>(h);
          std::uint8_t out[4] = {0x5a, 0x5a, 0x5a, 0x5a};
          const encode_result res = enc.encode(p, out, sizeof out);
          CAPTURE(k);
          CAPTURE(n);
          CAPTURE(a);
          if (expect >= 0) {
            ++encoded;
            CHECK(res.error == error_code::ok);
            CHECK(res.size == 1);
            CHECK(out[0] == expect);
            CHECK(enc.encode(p, out, 0).error == error_code::buffer_too_small);
          } else {
            ++refused;
            CHECK(res.error != error_code::ok);
            CHECK(res.size == 0);
            CHECK(out[0] == 0x5a);
          }
          CHECK(out[1] == 0x5a);
        }
      }
    }
    // Formats 1-5 have 2+4+8+4+1+3 headers, format 6 has 42 (COUNT 0..20, A 0/1).
    CHECK(encoded == 64);
    CHECK(refused > 500);
  }
}

// Issue 14 D6: the zero run of an A-Sync has no architectural bound (D5.4: 11 or more zeros,
// D9.2.3.1 consumes zeros until the terminator). 2^32 + 5 zeros, streamed from one 1 MiB
// buffer (no memory), then 0x80: one A-Sync packet whose 64-bit size says how long it is, and
// the packets after it intact; from a synchronized start (before: bad_async, a 32-bit counter
// wrapped) and from an unsynchronized one (before: the A-Sync misplaced).
TEST_CASE("an A-Sync longer than 2^32 bytes, streamed, is one packet of its true size") {
  const std::vector<std::uint8_t> zeros(1u << 20, 0);
  const std::uint64_t run = (std::uint64_t{1} << 32) + 5;
  for (const bool synced : {true, false}) {
    CAPTURE(synced);
    decoder<> dec(regs);
    std::vector<packet> ps;
    std::vector<diagnostic> es;
    auto on_packet = [&](const packet& p) { ps.push_back(p); };
    auto on_error = [&](const diagnostic& d) { es.push_back(d); };
    std::vector<std::uint8_t> head = synced ? async12() : std::vector<std::uint8_t>{0x55, 0x55, 0x55};
    if (synced) head.insert(head.end(), {0x01, 0x00, 0xf7});  // Trace Info, Atom E
    dec.decode_part(head.data(), head.size(), on_packet, on_error);
    for (std::uint64_t left = run; left != 0;) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left, zeros.size()));
      dec.decode_part(zeros.data(), n, on_packet, on_error);
      left -= n;
    }
    const std::uint8_t tail[] = {0x80, 0x01, 0x00, 0xf6};  // terminator, Trace Info, Atom N
    dec.decode_part(tail, sizeof tail, on_packet, on_error);
    dec.decode_end(on_packet, on_error);
    if (synced) {
      CHECK(es.empty());
      REQUIRE(ps.size() == 6);
      CHECK(ps[3].kind == packet_kind::async);
      CHECK(ps[3].offset == 15);
    } else {
      REQUIRE(es.size() == 1);
      CHECK(es[0] == diagnostic{error_code::unsynchronized, 0, 3});
      REQUIRE(ps.size() == 3);
      CHECK(ps[0].offset == 3);
    }
    const packet& a = ps[ps.size() - 3];
    CHECK(a.kind == packet_kind::async);
    CHECK(a.size == run + 1);
    CHECK(ps[ps.size() - 2].kind == packet_kind::trace_info);
    CHECK(ps[ps.size() - 2].offset == a.offset + run + 1);
    CHECK(ps.back().kind == packet_kind::atom_f1);
    CHECK(dec.stats().bytes_skipped == (synced ? 0u : 3u));
  }
}

TEST_CASE("a long A-Sync prints its first 16 bytes and its size, whatever the bytes given") {
  packet a{};
  a.kind = packet_kind::async;
  a.offset = 7;
  a.size = (std::uint64_t{1} << 33) + 1;  // no buffer of that size is read
  CHECK(format_text(a, nullptr) ==
        "Idx:7; [0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x00 "
        "... ]; async: 8589934593 bytes");
  CHECK(format_json(a, 2, nullptr) ==
        "{\"session\":2,\"offset\":7,\"bytes\":\"00000000000000000000000000000000\",\"packet\":"
        "\"async\",\"size\":8589934593}");
  a.size = 12;
  CHECK(format_json(a, 0, nullptr) ==
        "{\"session\":0,\"offset\":7,\"bytes\":\"000000000000000000000080\",\"packet\":\"async\"}");
}

// decode_part()/decode_end() at every chunking give what decode() gives, for packets and for
// resolved elements (one Atom element per atom and atom runs).
TEST_CASE("streaming decode_part: any chunking decodes as the whole buffer") {
  std::vector<std::uint8_t> in = sample();
  const std::vector<std::uint8_t> s = sample();
  in.insert(in.end(), s.begin(), s.end());
  in.push_back(0x9a);  // a packet cut by the end: truncated_packet
  const decoded whole = decode_all(regs, in);
  std::mt19937 rng(3);
  for (int round = 0; round < 200; ++round) {
    std::vector<std::size_t> cuts;
    for (std::size_t at = 0; at < in.size();) {
      at += 1 + rng() % (round < 100 ? 4 : 40);
      cuts.push_back(std::min(at, in.size()));
    }
    decoded got;
    decoder<> dec(regs);
    std::size_t from = 0;
    for (const std::size_t to : cuts) {
      dec.decode_part(in.data() + from, to - from, [&](const packet& p) { got.packets.push_back(p); },
                      [&](const diagnostic& d) { got.errors.push_back(d); });
      from = to;
    }
    dec.decode_end([&](const packet& p) { got.packets.push_back(p); },
                   [&](const diagnostic& d) { got.errors.push_back(d); });
    CHECK(got.packets == whole.packets);
    CHECK(got.errors == whole.errors);
    for (const bool runs : {false, true}) {
      const read_elements_result want = read_elements(regs, in.data(), in.size(), true, runs);
      element_reader<> reader(regs);
      reader.atom_runs(runs);
      read_elements_result r;
      from = 0;
      auto on_element = [&](const element& e) { r.elements.push_back(e); };
      auto on_error = [&](const diagnostic& d) { r.errors.push_back(d); };
      for (const std::size_t to : cuts) {
        // Each chunk is a copy that is gone after the call: the reader keeps what it needs.
        std::vector<std::uint8_t> chunk(in.begin() + static_cast<std::ptrdiff_t>(from),
                                        in.begin() + static_cast<std::ptrdiff_t>(to));
        reader.decode_part(chunk.data(), chunk.size(), on_element, on_error);
        std::fill(chunk.begin(), chunk.end(), 0x55);
        from = to;
      }
      reader.decode_end(on_element, on_error);
      CHECK(r.elements == want.elements);
      CHECK(r.errors == want.errors);
    }
  }
  CHECK(whole.errors.size() == 1);
  CHECK(whole.errors[0].code == error_code::truncated_packet);
}

// The whole-buffer loop does not count the zero bytes at the end of every packet: it counts
// them back from an A-Sync's header when it meets one (decoder::zeros_before). An A-Sync whose
// first zeros were taken by the packets before it (a damaged packet, or packets whose payload
// ends in zeros) must still be found there, as the byte-at-a-time path (next(), the reference)
// finds it, and also when the zeros began before the loop was entered (a chunk boundary).
TEST_CASE("an A-Sync whose first zeros earlier packets took is found by the whole-buffer loop") {
  const std::vector<std::vector<std::uint8_t>> pieces = {
      {0xf7}, {0xfd, 0xc2},                     // atoms
      {0x95, 0x00},                             // short address, payload 0: ends in a zero
      {0x95, 0xa5, 0x01},                       // short address, 2 bytes
      {0x9a, 0x00, 0x00, 0x00, 0x00},           // 32-bit address 0: four zeros
      {0x9a, 0x10, 0x20},                       // a 32-bit address cut short (damage)
      {0x9a, 0x00, 0x00},                       // the same, ending in zeros
      {0x02, 0x00},                             // Timestamp 0
      {0x01, 0x00},                             // Trace Info
  };
  std::mt19937 rng(11);
  int overlaps = 0, inside_loop = 0;
  for (int round = 0; round < 3000; ++round) {
    std::vector<std::uint8_t> in = async12();
    in.insert(in.end(), {0x01, 0x00});
    const int n = 20 + static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
      const unsigned what = rng() % 12;
      if (what < pieces.size()) {
        const auto& pc = pieces[what];
        in.insert(in.end(), pc.begin(), pc.end());
      } else {  // an A-Sync of 1-12 zeros: too short alone below 11
        in.insert(in.end(), 1 + rng() % 12, std::uint8_t{0});
        in.push_back(0x80);
      }
    }
    for (int i = 0; i < 40; ++i) in.push_back(0xf7);
    const decoded whole = decode_all(regs, in);
    // The reference: next(), a packet per call, which never enters the loop.
    const decoded bytewise = decode_chunked(regs, in, {});
    REQUIRE(whole.packets == bytewise.packets);
    REQUIRE(whole.errors == bytewise.errors);
    // decode_part() in chunks of 33-96 bytes: the loop is left and entered again inside zero
    // runs.
    decoded chunked;
    {
      decoder<> dec(regs);
      auto on_packet = [&](const packet& p) { chunked.packets.push_back(p); };
      auto on_error = [&](const diagnostic& d) { chunked.errors.push_back(d); };
      for (std::size_t at = 0; at < in.size();) {
        const std::size_t to = std::min(in.size(), at + 33 + rng() % 64);
        dec.decode_part(in.data() + at, to - at, on_packet, on_error);
        at = to;
      }
      dec.decode_end(on_packet, on_error);
    }
    REQUIRE(chunked.packets == bytewise.packets);
    REQUIRE(chunked.errors == bytewise.errors);
    for (const packet& p : whole.packets) {
      // An A-Sync found after packets took its first zeros (it begins before its header run).
      if (p.kind != packet_kind::async || p.offset == 0) continue;
      if (in[static_cast<std::size_t>(p.offset)] == 0 && p.size == 12 &&
          std::count(in.begin() + static_cast<std::ptrdiff_t>(p.offset),
                     in.begin() + static_cast<std::ptrdiff_t>(p.offset + 11), std::uint8_t{0}) == 11) {
        for (const diagnostic& d : whole.errors)
          if (d.code == error_code::bad_async && d.offset > p.offset && d.offset < p.offset + 11) {
            ++overlaps;
            if (in.size() - d.offset >= 32) ++inside_loop;
            break;
          }
      }
    }
  }
  // The cases the test is for occurred, and in reach of the loop (32 bytes ahead).
  CHECK(overlaps > 500);
  CHECK(inside_loop > 500);
  MESSAGE("A-Syncs found after packets took their first zeros: ", overlaps, " (", inside_loop,
          " with 32 bytes ahead)");
}

// decoder_stats: the whole-buffer loop counts its packets from the bytes it passed (one per
// packet, less the bytes after each packet's first), not one at a time. Whatever the form
// (packets; atoms apart; in chunks, with atoms apart or not; windows of atom packets and
// Target Address packets apart), stats() counts exactly the packets and errors handed over.
TEST_CASE("decoder_stats: packets and errors are what the consumer got, in every form") {
  std::mt19937_64 rng(1206);
  std::size_t packets = 0, atoms = 0, errors = 0, windowed = 0, targets = 0;
  // An on_atoms with window() and target(): the packets the loop hands over there, counted.
  struct apart {
    std::size_t* atoms;
    std::size_t* windowed;
    std::size_t* targets;
    void operator()(std::uint64_t, std::uint32_t, unsigned) const { ++*atoms; }
    void window(std::uint64_t, std::uint64_t word) const {
      for (; word != 0; word >>= 8) ++*windowed;
    }
    void target(std::uint64_t, std::uint64_t, isa) const { ++*targets; }
  };
  for (int t = 0; t < 300; ++t) {
    std::vector<std::uint8_t> bytes;
    const int samples = 1 + static_cast<int>(rng() % 6);
    for (int k = 0; k < samples; ++k) {
      const std::vector<std::uint8_t> s = sample();
      bytes.insert(bytes.end(), s.begin(), s.end());
      // Atom runs, so that the whole-buffer loop (32 bytes ahead) takes many one-byte packets.
      for (std::size_t i = rng() % 64; i > 0; --i) bytes.push_back(static_cast<std::uint8_t>(0xc0 | (rng() & 0x3f)));
      if (t % 3 == 1) bytes.push_back(static_cast<std::uint8_t>(rng()));  // errors, resync
    }
    std::size_t cut = rng() % (bytes.size() + 1);
    for (int form = 0; form < 6; ++form) {
      decoder<> d(regs);
      std::size_t got = 0, got_atoms = 0, got_errors = 0, got_windowed = 0, got_targets = 0;
      auto on_packet = [&](const packet&) { ++got; };
      auto on_error = [&](const diagnostic&) { ++got_errors; };
      auto on_atoms = [&](std::uint64_t, std::uint32_t, unsigned) { ++got_atoms; };
      if (form == 0) {
        d.decode(bytes.data(), bytes.size(), on_packet, on_error);
      } else if (form == 1) {
        d.decode(bytes.data(), bytes.size(), on_packet, on_error, on_atoms);
      } else if (form == 2) {
        d.decode_part(bytes.data(), cut, on_packet, on_error);
        d.decode_part(bytes.data() + cut, bytes.size() - cut, on_packet, on_error);
        d.decode_end(on_packet, on_error);
      } else if (form == 3) {  // in two chunks with atoms apart, as the element reader decodes
        d.decode(bytes.data(), cut, on_packet, on_error, on_atoms, decoder<>::input::more);
        d.decode(bytes.data() + cut, bytes.size() - cut, on_packet, on_error, on_atoms);
      } else {  // windows and targets apart, as the flow decoder's reader decodes: whole, chunks
        const apart a{&got_atoms, &got_windowed, &got_targets};
        if (form == 4) {
          d.decode(bytes.data(), bytes.size(), on_packet, on_error, a);
        } else {
          d.decode(bytes.data(), cut, on_packet, on_error, a, decoder<>::input::more);
          d.decode(bytes.data() + cut, bytes.size() - cut, on_packet, on_error, a);
        }
      }
      CHECK(d.stats().packets == got + got_atoms + got_windowed + got_targets);
      CHECK(d.stats().errors == got_errors);
      packets += got;
      atoms += got_atoms;
      errors += got_errors;
      windowed += got_windowed;
      targets += got_targets;
    }
  }
  MESSAGE(packets << " packets, " << atoms << " atom packets apart, " << windowed << " in windows, " << targets
                  << " Target Address packets apart, " << errors << " errors");
  // The compact form has no whole-buffer loop: no atom packets apart.
  if (tracecodec::detail::compact) {
    CHECK(atoms == 0);
    CHECK(windowed + targets == 0);
  } else {
    CHECK(atoms > 10000);
    CHECK(windowed > 10000);
    CHECK(targets > 1000);
  }
  CHECK(packets > 50000);
  CHECK(errors > 50);
}
