// SPDX-License-Identifier: Apache-2.0
// Encapsulation: both example transports, with and without the 16-bit timestamp, from bytes
// worked out by hand; header errors with their offsets; the settings' validation.
#include <doctest/doctest.h>

#include "stream_util.hpp"

using namespace etest;
using et::te_inst;
using et::format;

namespace {
const et::runtime_config rv32{et::presets::rv32};
// The format 3 start packet of test_spec_vectors: 73 00 00 00 e0 (5 bytes).
const te_inst start{.format = format::sync, .subformat = 0, .branch = true, .privilege = 3,
                    .address = 0x80000000};
// The format 2 packet 02 02 (2 bytes).
const te_inst addr{.format = format::addr_only, .address = 0x100};

bytes encode_one(const et::encapsulation& enc, const te_inst& p, const et::header& h) {
  et::encoder<> e(rv32, enc);
  std::uint8_t out[64];
  const et::encode_result r = e.encode(p, h, out, sizeof out);
  REQUIRE(r.error == et::error_code::ok);
  return bytes(out, out + r.size);
}

et::packet decode_one(const et::encapsulation& enc, const bytes& b) {
  const std::vector<event> ev = run(rv32, enc, b);
  REQUIRE(ev.size() == 1);
  REQUIRE(ev[0].is_packet);
  return ev[0].p;
}
}  // namespace

TEST_CASE("Siemens header: length[4:0], flow[6:5], timestamp[7], index, timestamp") {
  const et::encapsulation enc{.transport = et::transport::siemens, .index_width = 12};
  // length 5 = 00101, flow 2 = 10, timestamp 1: 1'10'00101 = 0xc5; index 0x123 in two bytes
  // LSB first: 23 01; timestamp 0x1234: 34 12; payload.
  const bytes want = {0xc5, 0x23, 0x01, 0x34, 0x12, 0x73, 0x00, 0x00, 0x00, 0xe0};
  const et::header h{.flow = 2, .has_timestamp = true, .index = 0x123, .timestamp = 0x1234};
  CHECK(hex(encode_one(enc, start, h)) == hex(want));
  const et::packet p = decode_one(enc, want);
  CHECK(p.offset == 0);
  CHECK(p.size == 10);
  CHECK(p.header == et::header{.length = 5, .flow = 2, .has_timestamp = true, .index = 0x123,
                               .timestamp = 0x1234});
  CHECK(p.inst == start);
  CHECK(p.kind == et::te_inst_kind::sync_start);

  // No index field, no timestamp: 0'00'00101 = 0x05.
  const et::encapsulation plain{};
  const bytes want2 = {0x05, 0x73, 0x00, 0x00, 0x00, 0xe0};
  CHECK(hex(encode_one(plain, start, {})) == hex(want2));
  CHECK(decode_one(plain, want2).header == et::header{.length = 5});

  // 8-bit index 0xa5, flow 3, no timestamp, 2-byte payload: 0'11'00010 = 0x62.
  const et::encapsulation idx8{.index_width = 8};
  const bytes want3 = {0x62, 0xa5, 0x02, 0x02};
  CHECK(hex(encode_one(idx8, addr, {.flow = 3, .index = 0xa5})) == hex(want3));
  const et::packet p3 = decode_one(idx8, want3);
  CHECK(p3.header == et::header{.length = 2, .flow = 3, .index = 0xa5});
  CHECK(p3.inst == addr);
}

TEST_CASE("ATB-style header: length[4:0], timestamp[5], then timestamp and payload") {
  const et::encapsulation atb{.transport = et::transport::atb};
  // length 5, timestamp present: 00'1'00101 = 0x25; timestamp 0x1234: 34 12.
  const bytes want = {0x25, 0x34, 0x12, 0x73, 0x00, 0x00, 0x00, 0xe0};
  CHECK(hex(encode_one(atb, start, {.has_timestamp = true, .timestamp = 0x1234})) == hex(want));
  const et::packet p = decode_one(atb, want);
  CHECK(p.header == et::header{.length = 5, .has_timestamp = true, .timestamp = 0x1234});
  CHECK(p.inst == start);
  const bytes want2 = {0x05, 0x73, 0x00, 0x00, 0x00, 0xe0};
  CHECK(hex(encode_one(atb, start, {})) == hex(want2));
  CHECK(decode_one(atb, want2).inst == start);
  // ATB has no flow or index: the encoder refuses them.
  et::encoder<> e(rv32, atb);
  std::uint8_t out[64];
  CHECK(e.encode(start, {.flow = 1}, out, sizeof out).error == et::error_code::unencodable);
}

TEST_CASE("header errors carry the offset of the offending byte") {
  const et::encapsulation plain{};
  // 05 73 00 00 00 e0 | 60 (length 0 with flow 3) | 02 02 02 (format 2 packet)
  const bytes b = {0x05, 0x73, 0x00, 0x00, 0x00, 0xe0, 0x60, 0x02, 0x02, 0x02};
  const std::vector<event> ev = run(rv32, plain, b);
  REQUIRE(ev.size() == 3);
  CHECK(ev[0].is_packet);
  CHECK(ev[1].d == et::diagnostic{et::error_code::malformed_header, 6, 1});
  REQUIRE(ev[2].is_packet);
  CHECK(ev[2].p.offset == 7);
  CHECK(ev[2].p.inst == addr);

  // ATB: bits 7:6 are reserved (0x45 = 01'0'00101).
  const std::vector<event> atb = run(rv32, {.transport = et::transport::atb}, {0x45, 0x73});
  REQUIRE(!atb.empty());
  CHECK(atb[0].d == et::diagnostic{et::error_code::malformed_header, 0, 1});

  // A length beyond the largest payload of the parameters (RV32: 10 bytes): 0x0b = 11.
  const std::vector<event> big = run(rv32, plain, {0x00, 0x0b, 0x01});
  REQUIRE(!big.empty());
  CHECK(big[0].d == et::diagnostic{et::error_code::payload_too_long, 1, 1});

  // A payload error reports the packet's offset and size, and (no recovery scheme) decoding
  // continues after it: 01 00 is format 0 with no optional format enabled.
  const std::vector<event> pay = run(rv32, plain, {0x02, 0x02, 0x02, 0x01, 0x00, 0x02, 0x02, 0x02});
  REQUIRE(pay.size() == 3);
  CHECK(pay[1].d == et::diagnostic{et::error_code::reserved_format, 3, 2});
  CHECK(pay[2].p.offset == 5);

  // Index bits above index_width (12): the second index byte 0x10 has bit 12 set.
  const std::vector<event> ix = run(rv32, {.index_width = 12}, {0x02, 0x00, 0x10, 0x02, 0x02});
  REQUIRE(ix.size() == 1);
  CHECK(ix[0].d == et::diagnostic{et::error_code::malformed_header, 0, 5});
  et::encoder<> e(rv32, {.index_width = 12});
  std::uint8_t out[64];
  CHECK(e.encode(addr, {.index = 0x1000}, out, sizeof out).error == et::error_code::unencodable);
  CHECK(e.encode(addr, {.flow = 4}, out, sizeof out).error == et::error_code::unencodable);
  CHECK(e.position() == 0);  // nothing written
}

TEST_CASE("truncated packet at the end of the input") {
  const et::encapsulation plain{};
  const bytes b = {0x05, 0x73, 0x00, 0x00, 0x00, 0xe0, 0x05, 0x73, 0x00};
  const std::vector<event> ev = run(rv32, plain, b);
  REQUIRE(ev.size() == 2);
  CHECK(ev[1].d == et::diagnostic{et::error_code::truncated_packet, 6, 3});
}

TEST_CASE("encapsulation settings are validated against the parameters") {
  const et::runtime_config rv64{et::presets::rv64_full};
  CHECK(rv32.max_payload() == 10);  // format 3 trap: 78 bits
  CHECK(rv64.max_payload() == 27);  // format 3 trap: 2+2+1+3+40+32+6+1+1+63+64 = 215 bits
  // A run of 2^N zero bytes must not fit after a header: 2^N > index bytes + 2 + payload.
  CHECK(et::validate(et::encapsulation{.recovery = et::boundary_recovery::zero_run, .zero_run_log2 = 5},
                     rv32.max_payload()) == et::error_code::ok);
  CHECK(et::validate(et::encapsulation{.recovery = et::boundary_recovery::zero_run, .zero_run_log2 = 5},
                     rv64.max_payload()) == et::error_code::ok);  // 32 > 0 + 2 + 27
  CHECK(et::validate(et::encapsulation{.index_width = 32, .recovery = et::boundary_recovery::zero_run,
                                       .zero_run_log2 = 5},
                     rv64.max_payload()) == et::error_code::invalid_encapsulation);  // 4+2+27 >= 32
  CHECK(et::validate(et::encapsulation{.index_width = 32, .recovery = et::boundary_recovery::zero_run,
                                       .zero_run_log2 = 6},
                     rv64.max_payload()) == et::error_code::ok);
  // A block must hold the largest packet (1 + 2 + 10 = 13 bytes for RV32, no index).
  CHECK(et::validate(et::encapsulation{.recovery = et::boundary_recovery::blocks, .block_size = 13},
                     rv32.max_payload()) == et::error_code::ok);
  CHECK(et::validate(et::encapsulation{.recovery = et::boundary_recovery::blocks, .block_size = 12},
                     rv32.max_payload()) == et::error_code::invalid_encapsulation);
  CHECK(et::validate(et::encapsulation{.index_width = 33}, 10) == et::error_code::invalid_encapsulation);
  // An invalid setting is reported once by the decoder and refused by the encoder.
  const et::encapsulation bad{.recovery = et::boundary_recovery::blocks, .block_size = 4};
  const std::vector<event> ev = run(rv32, bad, {0x05, 0x73});
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].d.code == et::error_code::invalid_encapsulation);
  et::encoder<> e(rv32, bad);
  std::uint8_t out[64];
  CHECK(e.encode(start, {}, out, sizeof out).error == et::error_code::invalid_encapsulation);
}

TEST_CASE("recovery schemes on the encoder side") {
  // zero_run: 2^N zeros before every format 3 subformat 0 packet, none before others.
  et::encoder<> z(rv32, {.recovery = et::boundary_recovery::zero_run, .zero_run_log2 = 5});
  std::uint8_t out[128];
  et::encode_result r = z.encode(start, {}, out, sizeof out);
  REQUIRE(r.size == 32 + 6);
  for (int i = 0; i < 32; ++i) CHECK(out[i] == 0);
  CHECK(out[32] == 0x05);
  r = z.encode(addr, {}, out, sizeof out);
  CHECK(r.size == 3);
  r = z.sync_run(out, sizeof out);
  CHECK(r.size == 32);
  CHECK(z.position() == 38 + 3 + 32);
  // blocks of 16: a packet that would cross the boundary goes to the next block.
  et::encoder<> b(rv32, {.recovery = et::boundary_recovery::blocks, .block_size = 16});
  CHECK(b.encode(start, {}, out, sizeof out).size == 6);                           // 0..5
  CHECK(b.encode(start, {}, out, sizeof out).size == 6);                           // 6..11
  r = b.encode(start, {}, out, sizeof out);                                         // pad 12..15
  CHECK(r.size == 4 + 6);
  CHECK((out[0] | out[1] | out[2] | out[3]) == 0);
  CHECK(out[4] == 0x05);
  CHECK(b.pad_block(out, sizeof out).size == 10);  // 22 -> 32
  CHECK(b.position() == 32);
  CHECK(b.pad_block(out, sizeof out).size == 0);
  std::uint8_t tiny[3];
  CHECK(b.encode(start, {}, tiny, sizeof tiny).error == et::error_code::buffer_too_small);
  CHECK(b.position() == 32);
}
