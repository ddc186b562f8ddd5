// SPDX-License-Identifier: Apache-2.0
// ETMv4 packets that differ from ETE, built by hand from the ETMv4 rules (the field layouts
// are listed in ../shared/conformance/etmv4/README.md and the bytes below are written out
// bit by bit in the comments), decoded and encoded back. Also the configuration read from
// TRCIDR1 and the headers each protocol reserves.
#include <doctest/doctest.h>

#include <vector>

#include "../ete/common.hpp"

using namespace test;

namespace {

using bytes = std::vector<std::uint8_t>;

bytes async_then(std::initializer_list<std::uint8_t> tail) {
  bytes v(11, 0);
  v.push_back(0x80);
  v.insert(v.end(), {0x01, 0x01, 0x00});  // Trace Info: PLCTL = INFO, INFO = 0
  v.insert(v.end(), tail);
  return v;
}
constexpr std::size_t preamble = 15;  // A-Sync (12) + Trace Info (3)

const registers juno = presets::etmv4_0_juno;    // ETMv4.0, 8-bit VMID, 32-bit CID
const registers a55 = presets::etmv4_1_a55;      // ETMv4.1, 32-bit VMID, no Q, MAXSPEC 0
const registers m55 = presets::etmv4_5_m55;      // ETMv4.5 on Armv8.1-M
const registers ete = presets::ete_1_0;

// Decodes, expects no error and `n` packets after the preamble; returns them.
std::vector<packet> decode_ok(const registers& r, const bytes& in, std::size_t n) {
  const decoded d = decode_all(r, in);
  CHECK(d.errors.empty());
  for (const diagnostic& e : d.errors) MESSAGE(error_name(e.code) << " at " << e.offset);
  REQUIRE(d.packets.size() == 2 + n);
  // Encoding the decoded packets gives the bytes back.
  error_code err = error_code::ok;
  CHECK(encode_all(r, d.packets, &err) == in);
  CHECK(err == error_code::ok);
  return {d.packets.begin() + 2, d.packets.end()};
}

// The first error's code and offset.
diagnostic first_error(const registers& r, const bytes& in) {
  const decoded d = decode_all(r, in);
  REQUIRE(!d.errors.empty());
  return d.errors.front();
}

}  // namespace

TEST_CASE("etmv4: the version comes from TRCIDR1, and ETMv4 fields from its rules") {
  const config j = config::from(juno);
  CHECK(j.etmv4());
  CHECK(j.version_major == 4);
  CHECK(j.version_minor == 0);
  CHECK(j.vmidsize == 8);    // TRCIDR2.VMIDSIZE = 1
  CHECK(j.cidsize == 32);
  CHECK(j.iasize == 64);
  CHECK(j.commopt);
  CHECK(validate(juno) == error_code::ok);
  const config m = config::from(m55);
  CHECK(m.version_minor == 5);
  CHECK(m.iasize == 32);     // TRCIDR2.IASIZE = 0b00100
  CHECK(m.profile == pe_profile::m);
  CHECK(validate(m55) == error_code::ok);
  // ETMv4.0 has no 16- or 32-bit VMIDs; an architecture other than 4.0-4.6 is not ETMv4.
  registers r = juno;
  r.trcidr2 = (r.trcidr2 & ~(0x1fu << 10)) | (4u << 10);
  CHECK(validate(r) == error_code::invalid_config);
  r = juno;
  r.trcidr1 = 0x4100f503;  // TRCARCHMAJ = 5
  CHECK(validate(r) == error_code::invalid_config);
  r.trcidr1 = 0x4100f473;  // 4.7
  CHECK(validate(r) == error_code::invalid_config);
  // WFXMODE means something from ETMv4.3 on only; TSMARK from ETMv4.6.
  r = a55;
  r.trcidr2 |= 1u << 31;
  r.trcidr0 |= 1u << 23;
  CHECK(!config::from(r).wfxmode);
  CHECK(!config::from(r).tsmark);
  r.trcidr1 = 0x4200f460;
  CHECK(config::from(r).wfxmode);
  CHECK(config::from(r).tsmark);
  // ETE ignores TRCIDR1 for its version: TRCDEVARCH says 1.0.
  CHECK(config::from(ete).version_major == 1);
  CHECK(!config::from(ete).etmv4());
}

TEST_CASE("etmv4: Exception, two bytes and an address packet") {
  // 06 | 0 0 01110 1 = 0x1d: C 0, E1 0, TYPE 0x0e (IRQ), E0 1 | 95 | 0 0101010 (short IS0:
  // address bits [8:2] = 0x2a).
  const auto p = decode_ok(juno, async_then({0x06, 0x1d, 0x95, 0x2a}), 1);
  CHECK(p[0].kind == packet_kind::exception_short_is0);
  CHECK(p[0].exception_type == 0x0e);
  CHECK(p[0].exception_elements == 1);
  CHECK(p[0].address == 0x2a * 4);
  CHECK(p[0].size == 4);
  CHECK(!p[0].is(packet_flag::fault_pending));
}

TEST_CASE("etmv4: Exception with its second byte: TYPE[9:5] and the fault-pending bit") {
  // 06 | 1 0 01111 1 = 0x9f: C 1, E1 0, TYPE[4:0] 0x0f, E0 1 | 0 0 1 01000 = 0x28: P 1,
  // TYPE[9:5] 0x08 | 9a 32-bit IS0 address 0x00001000: 0 0000000, 0 0100000 (bits [15:9] =
  // 0x08), 00, 00.
  const bytes in = async_then({0x06, 0x9f, 0x28, 0x9a, 0x00, 0x08, 0x00, 0x00});
  const auto p = decode_ok(m55, in, 1);
  CHECK(p[0].kind == packet_kind::exception_32_is0);
  CHECK(p[0].exception_type == (0x0f | (0x08 << 5)));  // 0x10f: external interrupt 239 on M
  CHECK(p[0].is(packet_flag::fault_pending));
  CHECK(p[0].address == 0x1000);
  CHECK(p[0].size == 8);
  // A second byte that says zero is kept (re-encoding gives the hardware's bytes).
  const auto q = decode_ok(juno, async_then({0x06, 0x9d, 0x00, 0x95, 0x2a}), 1);
  CHECK(q[0].exception_type == 0x0e);
  CHECK(q[0].value_bytes == 2);
  // Built from fields: the second byte appears because TYPE needs it.
  packet x{};
  x.kind = packet_kind::exception_exact;
  x.exception_type = 0x20f;
  x.exception_elements = 1;
  x.index = 0;
  encoder<> enc(m55);
  std::uint8_t out[32];
  // The exact-match form needs a history entry: put one there first.
  packet a{};
  a.kind = packet_kind::address_32_is0;
  a.address = 0x1000;
  REQUIRE(enc.encode(a, out, sizeof out).error == error_code::ok);
  x.address = 0x1000;
  const encode_result r = enc.encode(x, out, sizeof out);
  REQUIRE(r.error == error_code::ok);
  CHECK(bytes(out, out + r.size) == bytes{0x06, 0x9f, 0x10, 0x90});
}

TEST_CASE("etmv4: Exception errors: a third byte, an UNKNOWN address, ETE's one-byte rule") {
  // Second byte with bit 6 or 7 set: no such field.
  auto d = first_error(juno, async_then({0x06, 0x9d, 0x40, 0x95, 0x2a}));
  CHECK(d.code == error_code::malformed_payload);
  CHECK(d.offset == preamble);
  // ETMv4 always sends the address: 0x70 (ETE's UNKNOWN address, D5.24) is not one.
  d = first_error(juno, async_then({0x06, 0x01, 0x70}));
  CHECK(d.code == error_code::malformed_payload);
  // ETE has no second byte (D5.13: bit 7 is 0).
  bytes e(11, 0);
  e.push_back(0x80);
  e.insert(e.end(), {0x01, 0x01, 0x00, 0x06, 0x9d, 0x00, 0x95, 0x2a});
  d = first_error(ete, e);
  CHECK(d.code == error_code::malformed_payload);
  // An M-profile type does not fit ETE's encoder either.
  packet x{};
  x.kind = packet_kind::exception_64_is0;
  x.exception_type = 0x40;
  x.exception_elements = 1;
  encoder<> enc(ete);
  std::uint8_t out[32];
  CHECK(enc.encode(x, out, sizeof out).error == error_code::unencodable);
}

TEST_CASE("etmv4: Exception Return 0x07 and Function Return 0x05") {
  auto p = decode_ok(juno, async_then({0x07}), 1);
  CHECK(p[0].kind == packet_kind::exception_return);
  CHECK(p[0].size == 1);
  p = decode_ok(m55, async_then({0x05, 0x07}), 2);
  CHECK(p[0].kind == packet_kind::function_return);
  CHECK(p[1].kind == packet_kind::exception_return);
  // Function Return is Armv8-M's (an A-profile unit reserves it) and ETE has neither.
  auto d = first_error(juno, async_then({0x05}));
  CHECK(d.code == error_code::reserved_header);
  CHECK(d.offset == preamble);
  bytes e(11, 0);
  e.push_back(0x80);
  e.insert(e.end(), {0x01, 0x01, 0x00, 0x07});
  d = first_error(ete, e);
  CHECK(d.code == error_code::reserved_header);
  // ETMv4.1 on an M-profile PE: too early for Function Return (ETMv4.2 on).
  registers early = m55;
  early.trcidr1 = 0x4100f410;
  d = first_error(early, async_then({0x05}));
  CHECK(d.code == error_code::reserved_header);
}

TEST_CASE("etmv4: Context with an 8-, 16- and 32-bit VMID") {
  // 81 | 1 1 1 1 0 0 01 = 0xf1: C, V, NS, SF, EL1 | VMID 0x05 (one byte, VMIDSIZE 1) |
  // CONTEXTID 0x12345678 little-endian.
  auto p = decode_ok(juno, async_then({0x81, 0xf1, 0x05, 0x78, 0x56, 0x34, 0x12}), 1);
  CHECK(p[0].kind == packet_kind::context);
  CHECK(p[0].ctx.vmid == 0x05);
  CHECK(p[0].ctx.context_id == 0x12345678);
  CHECK(p[0].ctx.el == 1);
  CHECK(p[0].ctx.ns);
  CHECK(p[0].ctx.sf);
  CHECK(p[0].size == 7);
  // VMIDSIZE 2 (ETMv4.1): two bytes. 0x41: V, EL1, Secure, AArch32.
  registers v16 = a55;
  v16.trcidr2 = (v16.trcidr2 & ~(0x1fu << 10)) | (2u << 10);
  p = decode_ok(v16, async_then({0x81, 0x41, 0x34, 0x12}), 1);
  CHECK(p[0].ctx.vmid == 0x1234);
  CHECK(!p[0].ctx.sf);
  // VMIDSIZE 4: four bytes.
  p = decode_ok(a55, async_then({0x81, 0x40, 0x78, 0x56, 0x34, 0x12}), 1);
  CHECK(p[0].ctx.vmid == 0x12345678);
  // An 8-bit VMID cannot carry 0x100.
  packet c{};
  c.kind = packet_kind::context;
  c.flags = packet_flag::has_vmid;
  c.ctx.vmid = 0x100;
  encoder<> enc(juno);
  std::uint8_t out[32];
  CHECK(enc.encode(c, out, sizeof out).error == error_code::unencodable);
}

TEST_CASE("etmv4: ETE-only headers are reserved, ETMv4 data and conditional headers unsupported") {
  // Transaction Start/Commit, Instrumentation, source addresses, Ignore before ETMv4.3,
  // Timestamp Marker before ETMv4.6, 0x08 everywhere.
  for (const std::uint8_t h : {0x0a, 0x0b, 0x09, 0xb0, 0xb4, 0xb6, 0xb9, 0x70, 0x88, 0x08}) {
    CAPTURE(h);
    const diagnostic d = first_error(juno, async_then({h, 0x00, 0x00, 0x00, 0x00}));
    CHECK(d.code == error_code::reserved_header);
    CHECK(d.offset == preamble);
  }
  // Ignore exists from ETMv4.3 on.
  registers v43 = a55;
  v43.trcidr1 = 0x4200f430;
  CHECK(decode_ok(v43, async_then({0x70}), 1)[0].kind == packet_kind::ignore);
  // Data-sync markers 0x20-0x2C and conditional packets 0x40-0x6F: unsupported, and decoding
  // resumes at the next A-Sync with nothing lost after it.
  for (const std::uint8_t h : {0x20, 0x27, 0x28, 0x2c, 0x40, 0x43, 0x50, 0x6c, 0x6f}) {
    CAPTURE(h);
    bytes in = async_then({h, 0xf7});
    const bytes again = async_then({0xf7});
    in.insert(in.end(), again.begin(), again.end());
    const decoded d = decode_all(juno, in);
    REQUIRE(!d.errors.empty());
    CHECK(d.errors[0].code == error_code::unsupported_packet);
    CHECK(d.errors[0].offset == preamble);
    REQUIRE(d.packets.size() == 5);  // A-Sync, Trace Info; then A-Sync, Trace Info, atom
    CHECK(d.packets[2].kind == packet_kind::async);
    CHECK(d.packets[2].offset == preamble + 2);
    CHECK(d.packets[4].kind == packet_kind::atom_f1);
  }
  // The encoder refuses them too.
  packet x{};
  x.kind = packet_kind::conditional;
  encoder<> enc(juno);
  std::uint8_t out[32];
  CHECK(enc.encode(x, out, sizeof out).error == error_code::unsupported_packet);
  // Under ETE the same headers are simply reserved.
  bytes e(11, 0);
  e.push_back(0x80);
  e.insert(e.end(), {0x01, 0x01, 0x00, 0x40});
  CHECK(first_error(ete, e).code == error_code::reserved_header);
}

TEST_CASE("etmv4: a 32-bit Address with Context on an M-profile unit (armv8_1m_branches' first)") {
  // 83 | 32-bit IS1: 0 0000001 (bits [7:1] = 1), 9a (bits [15:8]), 4f, 00 | context 0x00:
  // EL0, Secure, AArch32. Address 0x004f9a02, as OpenCSD lists it.
  const auto p = decode_ok(m55, async_then({0x83, 0x01, 0x9a, 0x4f, 0x00, 0x00}), 1);
  CHECK(p[0].kind == packet_kind::address_ctx_32_is1);
  CHECK(p[0].address == 0x004f9a02);
  CHECK(p[0].ctx.el == 0);
  CHECK(!p[0].ctx.ns);
}
