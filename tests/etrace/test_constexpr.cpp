// SPDX-License-Identifier: Apache-2.0
// The codec runs inside static_assert: payload decode and encode, sign compression, the
// encoder and the streaming decoder are constant expressions, with a fixed configuration.
#include <doctest/doctest.h>

#include <tracecodec/etrace/etrace.hpp>

namespace et = tracecodec::etrace;

namespace {

using rv32 = et::fixed_config<et::presets::rv32>;

// Format 3 start (test_spec_vectors): 73 00 00 00 e0.
constexpr std::uint8_t start_payload[] = {0x73, 0x00, 0x00, 0x00, 0xe0};
constexpr et::te_inst start{.format = et::format::sync, .subformat = 0, .branch = true,
                            .privilege = 3, .address = 0x80000000};

constexpr et::decode_result decoded = et::payload_codec<rv32>{}.decode(start_payload, 5);
static_assert(decoded.error == et::error_code::ok);
static_assert(decoded.kind == et::te_inst_kind::sync_start);
static_assert(decoded.inst == start);
static_assert(decoded.full_bits == 38);

constexpr bool encodes_start() {
  std::uint8_t out[8]{};
  const et::encode_result r = et::payload_codec<rv32>{}.encode(start, out, sizeof out);
  return r.error == et::error_code::ok && r.size == 5 && out[0] == 0x73 && out[1] == 0 &&
         out[2] == 0 && out[3] == 0 && out[4] == 0xe0;
}
static_assert(encodes_start());

// Format 2, -2 bytes: every bit after the format is one -> the single byte 0xfe.
constexpr bool compresses_to_one_byte() {
  std::uint8_t out[8]{};
  const et::te_inst p{.format = et::format::addr_only, .address = 0xfffffffe};
  const et::encode_result r = et::payload_codec<rv32>{}.encode(p, out, sizeof out);
  return r.size == 1 && out[0] == 0xfe;
}
static_assert(compresses_to_one_byte());

constexpr std::uint8_t all_zero[4] = {0, 0, 0, 0};
static_assert(et::compressed_size(all_zero, 4) == 1);

// Encode two packets with the Siemens header and timestamps, then stream-decode them in two
// chunks split inside the first packet.
struct stream_summary {
  unsigned packets = 0, errors = 0;
  std::uint64_t second_offset = 0;
  std::uint16_t second_timestamp = 0;
  bool first_equal = false;
};

constexpr stream_summary encode_then_stream() {
  et::encoder<rv32> enc{et::encapsulation{.index_width = 8}};
  std::uint8_t buf[64]{};
  std::size_t n = 0;
  n += enc.encode(start, {.flow = 1, .has_timestamp = true, .index = 3, .timestamp = 0x1234},
                  buf + n, sizeof buf - n).size;
  const et::te_inst addr{.format = et::format::addr_only, .address = 0x100};
  n += enc.encode(addr, {.has_timestamp = true, .timestamp = 0x5678}, buf + n, sizeof buf - n).size;
  et::stream_decoder<rv32> dec{et::encapsulation{.index_width = 8}};
  stream_summary s;
  et::packet p{};
  std::size_t fed = 0;
  const std::size_t cuts[] = {4, n};
  unsigned next_cut = 0;
  for (;;) {
    const et::decode_status st = dec.next(p);
    if (st == et::decode_status::packet) {
      if (s.packets == 0) s.first_equal = p.inst == start && p.header.index == 3 && p.header.flow == 1;
      else {
        s.second_offset = p.offset;
        s.second_timestamp = p.header.timestamp;
      }
      ++s.packets;
    } else if (st == et::decode_status::error) {
      ++s.errors;
    } else if (st == et::decode_status::need_input) {
      const std::size_t end = cuts[next_cut++];
      dec.feed(buf + fed, end - fed);
      fed = end;
      if (fed == n) dec.finish();
    } else {
      break;
    }
  }
  return s;
}

constexpr stream_summary summary = encode_then_stream();
static_assert(summary.packets == 2 && summary.errors == 0);
static_assert(summary.first_equal);
static_assert(summary.second_offset == 9);  // header, index, timestamp (2), 5-byte payload
static_assert(summary.second_timestamp == 0x5678);

// Configuration validation is a constant expression too.
static_assert(et::validate(et::presets::rv32) == et::parameter_error::none);
static_assert(et::validate(et::parameters{.iaddress_width_p = 32, .iaddress_lsb_p = 32}) ==
              et::parameter_error::iaddress_lsb);
static_assert(rv32::max_payload() == 10);

}  // namespace

TEST_CASE("compile-time decode, encode and streaming (see the static_asserts)") {
  CHECK(decoded.inst == start);
  CHECK(summary.packets == 2);
}
