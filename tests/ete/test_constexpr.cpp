// SPDX-License-Identifier: Apache-2.0
// The codec runs inside static_assert: decoding and encoding are constant expressions, and
// a fixed configuration's header table is computed at compile time.
#include <doctest/doctest.h>

#include "common.hpp"

using namespace tracecodec::ete;

namespace {
using cfg = fixed_config<presets::ete_1_0>;

// A-Sync, Trace Info, Address 32-bit IS0 0x69538 (D5.49), Atom format 3 EEN, Exact match [0].
constexpr std::uint8_t trace[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x01, 0x00,
                                  0x9a, 0x4e, 0x4a, 0x06, 0x00, 0xfb, 0x90};

struct summary {
  unsigned packets = 0;
  std::uint64_t last_address = 0;
  std::uint32_t atoms = 0;
  unsigned atom_count = 0;
  packet_kind last_kind = packet_kind::async;
};

constexpr summary decode_at_compile_time() {
  decoder<cfg> d;
  summary s;
  d.decode(trace, sizeof trace,
           [&](const packet& p) {
             ++s.packets;
             s.last_kind = p.kind;
             if (has_address(p.kind)) s.last_address = p.address;
             if (has_atoms(p.kind)) {
               s.atoms = p.atoms;
               s.atom_count = p.atom_count;
             }
           },
           [&](const diagnostic&) { s.packets += 1000; });
  return s;
}

constexpr bool encode_at_compile_time() {
  encoder<cfg> e;
  std::uint8_t out[16]{};
  packet p{};
  p.kind = packet_kind::address_32_is0;
  p.address = 0x69538;
  const auto r = e.encode(p, out, sizeof out);
  return r.size == 5 && out[0] == 0x9a && out[1] == 0x4e && out[2] == 0x4a && out[3] == 0x06 &&
         out[4] == 0x00;
}

// The batch call at compile time: an atom packet (the hashed path), an exact-match address
// (the batch's own path) and one that fails, where it stops.
constexpr bool encode_batch_at_compile_time() {
  encoder<cfg> e;
  std::uint8_t out[16]{};
  packet ps[4]{};
  ps[0].kind = packet_kind::address_32_is0;
  ps[0].address = 0x69538;
  ps[1].kind = packet_kind::atom_f3;  // E, E, N: 0xFB (D9.2.10.4)
  ps[1].atom_count = 3;
  ps[1].atoms = 0b011;
  ps[2].kind = packet_kind::address_exact;
  ps[2].address = 0x69538;
  ps[3].kind = packet_kind::atom_f1;  // 2 atoms cannot be format 1
  ps[3].atom_count = 2;
  const auto r = e.encode(ps, 4, out, sizeof out);
  return r.error == error_code::unencodable && r.packets == 3 && r.size == 7 && out[0] == 0x9a &&
         out[5] == 0xfb && out[6] == 0x90;
}

constexpr summary s = decode_at_compile_time();
static_assert(s.packets == 5);
static_assert(s.last_kind == packet_kind::address_exact);
static_assert(s.last_address == 0x69538);
static_assert(s.atom_count == 3 && s.atoms == 0b011);  // 0xfb: E, E, N (D9.2.10.4)
static_assert(encode_at_compile_time());
static_assert(encode_batch_at_compile_time());

// The fixed configuration's table is a compile-time constant: feature headers fold away.
static_assert(header_table_for<cfg>[0x88].op == payload_op::reserved);  // no TSMARK
static_assert(header_table_for<fixed_config<presets::ete_1_1_tsmark>>[0x88].kind ==
              packet_kind::timestamp_marker);
static_assert(header_table_for<cfg>[0x2d].op == payload_op::reserved);  // MAXSPEC 0: no Commit
static_assert(header_table_for<cfg>[0x12].kind == packet_kind::cycle_count_f3_1);  // COMMOPT 1
static_assert(validate(registers{0x2801cea1, 0xd0001088, 0, 0x47705a13, 0x1, 0}) == error_code::ok);
static_assert(validate(registers{0x2801cea1, 0xd0001084, 0, 0x47705a13, 0x1, 0}) ==
              error_code::invalid_config);  // IASIZE 32: not ETE (D16)
}  // namespace

TEST_CASE("compile-time decode and encode (see static_asserts)") {
  CHECK(s.packets == 5);
  CHECK(encode_at_compile_time());
}
