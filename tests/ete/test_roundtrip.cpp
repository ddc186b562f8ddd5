// SPDX-License-Identifier: Apache-2.0
// Round trip over all 256 header bytes: random valid payloads built here from the D5 layouts
// (independently of the library's header table), under several configurations.
// encode(decode(bytes)) == bytes and decode(encode(packet)) == packet.
#include <doctest/doctest.h>

#include <cstdio>
#include <random>
#include <string>

#include "common.hpp"

using namespace test;

namespace {

struct cfg_case {
  const char* name;
  registers regs;
};

// TRCIDR0 base 0x0801cea1: TRCCCI, 4 events, QSUPP 3, TSSIZE 64; variants flip COMMOPT (bit 29),
// TSMARK (23), COMMTRANS (30), TSSIZE 48 (0b00110), QSUPP 0; MAXSPEC 0/6/15/255.
const cfg_case configs[] = {
    {"commopt1-maxspec0-cidvmid32", {0x2801cea1, 0xd0001088, 0, 0x47705a13, 0x1, 0}},
    {"commopt0-maxspec6-tsmark-ete13", {0x0881cea1, 0xd0001088, 6, 0x47735a13, 0x1, 0}},
    {"commopt0-maxspec255-ts48-noq-nocid", {0x46000aa1, 0xd0000008, 255, 0x47705a13, 0x1, 0}},
    {"commopt1-maxspec15-nocc-1event", {0x28018021 & ~0x80u, 0xc0000008, 15, 0x47715a13, 0x1, 0}},
    {"commopt0-maxspec0-ete11", {0x0801cea1, 0xd0001088, 0, 0x47715a13, 0x1, 0}},
    // ETMv4: Juno's 4.0 (8-bit VMID, COMMOPT 1), a 4.1 unit with 16-bit VMID, MAXSPEC 4 and Q,
    // a 4.5 Cortex-M55 (32-bit addresses, Function Return), a 4.6 unit with TSMARK and 48-bit
    // timestamps.
    {"etmv4.0-juno-vmid8", presets::etmv4_0_juno},
    {"etmv4.1-vmid16-maxspec4-q", {0x0801cca1, 0x00000888, 4, 0, 0x1, 0x4200f410, protocol::etmv4}},
    {"etmv4.5-m55", presets::etmv4_5_m55},
    {"etmv4.6-tsmark-ts48", {0x0681cea1, 0x00001088, 0, 0, 0x1, 0x4100f460, protocol::etmv4}},
};

struct gen {
  std::mt19937_64 rng;
  config c;
  std::vector<std::uint8_t>& out;

  std::uint64_t r() { return rng(); }
  unsigned pick(unsigned n) { return static_cast<unsigned>(rng() % n); }

  // A continuation-coded field of `max` bytes whose value has `width` bits; the last byte
  // holds 8 data bits when `full`. Random length, canonical reserved bits.
  void leb(unsigned max, unsigned width, bool full = false, bool nonzero = false) {
    for (;;) {
      const unsigned len = 1 + pick(max);
      std::vector<std::uint8_t> b;
      bool any = false;
      for (unsigned i = 0; i < len; ++i) {
        const bool last = i + 1 == len;
        unsigned bits = static_cast<unsigned>(r());
        if (last && i == 8 && full) {
          b.push_back(static_cast<std::uint8_t>(bits));
          any |= (bits & 0xff) != 0;
          break;
        }
        unsigned avail = 7;
        if (7 * (i + 1) > width) avail = width - 7 * i;
        bits &= (1u << avail) - 1u;
        any |= bits != 0;
        b.push_back(static_cast<std::uint8_t>(bits | (last ? 0 : 0x80)));
      }
      if (nonzero && !any) continue;
      out.insert(out.end(), b.begin(), b.end());
      return;
    }
  }
  void bytes(unsigned n) {
    for (unsigned i = 0; i < n; ++i) out.push_back(static_cast<std::uint8_t>(r()));
  }
  void seven(unsigned n) {
    for (unsigned i = 0; i < n; ++i) out.push_back(static_cast<std::uint8_t>(r() & 0x7f));
  }
  // D9.2.14.2 long address, IS0 = two 7-bit bytes, IS1 = one.
  void long_address(bool is1, bool is64) {
    if (is1) {
      seven(1);
      bytes(is64 ? 7 : 3);
    } else {
      seven(2);
      bytes(is64 ? 6 : 2);
    }
  }
  void short_address() {
    if (pick(2)) {
      out.push_back(static_cast<std::uint8_t>(r() | 0x80));
      bytes(1);
    } else {
      seven(1);
    }
  }
  void context_payload() {
    std::uint8_t b = static_cast<std::uint8_t>(r() & 0xfbu);  // bit 2 is (0)
    if (!c.vmidsize) b &= 0xbfu;
    if (!c.cidsize) b &= 0x7fu;
    out.push_back(b);
    if (b & 0x40u) bytes(c.vmidsize / 8u);  // ETE: 32 bits; ETMv4: 8, 16 or 32
    if (b & 0x80u) bytes(4);
  }
  void address_with_header(std::uint8_t ah) {
    out.push_back(ah);
    switch (ah) {
      case 0x95: case 0x96: short_address(); break;
      case 0x9a: long_address(false, false); break;
      case 0x9b: long_address(true, false); break;
      case 0x9d: long_address(false, true); break;
      case 0x9e: long_address(true, true); break;
      case 0x82: long_address(false, false); context_payload(); break;
      case 0x83: long_address(true, false); context_payload(); break;
      case 0x85: long_address(false, true); context_payload(); break;
      case 0x86: long_address(true, true); context_payload(); break;
      default: break;  // exact match 0x90-0x92, unknown 0x70
    }
  }

  // Appends one packet with header h; false when h is reserved in this configuration.
  bool packet(std::uint8_t h) {
    const bool cc = c.trccci, spec = c.maxspec > 0, etm = c.proto == protocol::etmv4;
    const bool qc = c.qsupp & 1u, qn = c.qsupp & 2u;
    switch (h) {
      case 0x00: {
        const unsigned v = pick(3);
        out.push_back(0);
        if (v == 0) {
          out.push_back(3);
        } else if (v == 1) {
          out.push_back(5);
        } else {
          const unsigned zeros = 10 + pick(6);
          for (unsigned i = 0; i < zeros; ++i) out.push_back(0);
          out.push_back(0x80);
        }
        return true;
      }
      case 0x01: {
        const std::uint8_t plctl = static_cast<std::uint8_t>(r() & 0x0du);
        out.push_back(h);
        out.push_back(plctl);
        if (plctl & 1) out.push_back(static_cast<std::uint8_t>(r() & 0x41u));
        if (plctl & 4) leb(5, 32);
        if (plctl & 8) leb(2, 12);
        return true;
      }
      case 0x02: case 0x03:
        if (!c.tssize) return false;
        out.push_back(h);
        leb(c.tssize == 64 ? 9 : 7, c.tssize == 64 ? 64 : 49, c.tssize == 64);
        if (h == 0x03) leb(3, 20);
        return true;
      case 0x0a: case 0x0b:  // Transaction Start/Commit: ETE only
        if (etm) return false;
        out.push_back(h);
        return true;
      case 0x70:  // Ignore: ETE, ETMv4.3 on
        if (etm && c.version_minor < 3) return false;
        out.push_back(h);
        return true;
      case 0x04: case 0x80:
        out.push_back(h);
        return true;
      case 0x05:  // ETMv4 Function Return: Armv8-M, ETMv4.2 on
        if (!etm || c.profile != pe_profile::m || c.version_minor < 2) return false;
        out.push_back(h);
        return true;
      case 0x07:  // ETMv4 Exception Return
        if (!etm) return false;
        out.push_back(h);
        return true;
      case 0x06: {
        out.push_back(h);
        const unsigned e = 1 + pick(2), type = pick(32);
        // ETMv4: a second byte (C = 1) with TYPE[9:5] and P, half the time.
        const bool second = etm && pick(2);
        out.push_back(static_cast<std::uint8_t>((e & 1u) | (type << 1) | ((e >> 1) << 6) |
                                                (second ? 0x80u : 0u)));
        if (second) out.push_back(static_cast<std::uint8_t>(r() & 0x3fu));
        const std::uint8_t ahs[] = {0x90, 0x91, 0x92, 0x95, 0x96, 0x9a, 0x9b, 0x9d, 0x9e,
                                    0x82, 0x83, 0x85, 0x86, 0x70};
        // ETMv4 sends every exception's address: no 0x70 (UNKNOWN).
        address_with_header(ahs[pick(sizeof ahs - (etm ? 1 : 0))]);
        return true;
      }
      case 0x09:
        if (!(c.version_major == 1 && c.version_minor >= 3)) return false;
        out.push_back(h);
        bytes(9);
        return true;
      case 0x0c: case 0x0d: {
        if (!cc) return false;
        out.push_back(h);
        std::uint8_t b = static_cast<std::uint8_t>(r());
        if (!c.commopt && h == 0x0d) {  // D5.31: MAXSPEC + AAAA - 15 must be > 0
          if (c.maxspec == 0) return out.pop_back(), false;  // see the reserved check
          const unsigned lo = c.maxspec >= 15 ? 0 : 16 - c.maxspec;
          b = static_cast<std::uint8_t>(((lo + pick(16 - lo)) << 4) | (b & 0xf));
        }
        out.push_back(b);
        return true;
      }
      case 0x0e: case 0x0f:
        if (!cc) return false;
        out.push_back(h);
        if (!c.commopt) leb(5, 32);
        if (h == 0x0e) leb(3, 20);
        return true;
      case 0x2d:
        if (!spec) return false;
        out.push_back(h);
        leb(5, 32);
        return true;
      case 0x2e: case 0x2f:
        if (!spec) return false;
        out.push_back(h);
        leb(5, 32, false, true);
        return true;
      case 0x81:
        out.push_back(h);
        context_payload();
        return true;
      case 0x82: case 0x83: case 0x85: case 0x86:
      case 0x90: case 0x91: case 0x92: case 0x95: case 0x96:
      case 0x9a: case 0x9b: case 0x9d: case 0x9e:
        address_with_header(h);
        return true;
      case 0x88:
        if (!c.tsmark || !c.tssize) return false;
        out.push_back(h);
        return true;
      case 0xb0: case 0xb1: case 0xb2:
        if (etm) return false;  // source addresses: ETE only
        out.push_back(h);
        return true;
      case 0xb4: case 0xb5:
        if (etm) return false;
        out.push_back(h);
        short_address();
        return true;
      case 0xb6: case 0xb7: case 0xb8: case 0xb9:
        if (etm) return false;
        out.push_back(h);
        long_address(h == 0xb7 || h == 0xb9, h >= 0xb8);
        return true;
      case 0xa0: case 0xa1: case 0xa2:
        if (!qc) return false;
        out.push_back(h);
        leb(5, 32);
        return true;
      case 0xa5: case 0xa6:
        if (!qc) return false;
        out.push_back(h);
        short_address();
        leb(5, 32);
        return true;
      case 0xaa: case 0xab:
        if (!qc) return false;
        out.push_back(h);
        long_address(h == 0xab, false);
        leb(5, 32);
        return true;
      case 0xac:
        if (!qc) return false;
        out.push_back(h);
        leb(5, 32);
        return true;
      case 0xaf:
        if (!qn) return false;
        out.push_back(h);
        return true;
      default: break;
    }
    if (h >= 0x10 && h <= 0x1f) {
      if (!cc) return false;
      out.push_back(h);
      return true;
    }
    if (h >= 0x30 && h <= 0x33) {
      out.push_back(h);
      return true;
    }
    if (h >= 0x34 && h <= 0x3f) {
      if (!spec) return false;
      out.push_back(h);
      return true;
    }
    if (h >= 0x71 && h <= 0x7f) {
      if ((h & 0xfu) >> c.numevent) return false;
      out.push_back(h);
      return true;
    }
    if (h >= 0xc0) {
      out.push_back(h);
      return true;
    }
    return false;  // everything else is reserved in every configuration
  }
};

std::vector<std::uint8_t> preamble() {
  std::vector<std::uint8_t> v(11, 0);
  v.push_back(0x80);
  // Trace Info with INFO (CC enabled) and CYCT threshold 0x16: D5.7 variant 6.
  v.insert(v.end(), {0x01, 0x09, 0x01, 0x16});
  return v;
}

}  // namespace

TEST_CASE("round trip: every header byte with random valid payloads, several configurations") {
  for (const cfg_case& cc : configs) {
    REQUIRE_MESSAGE(validate(cc.regs) == error_code::ok, cc.name);
    const config c = config::from(cc.regs);
    std::mt19937_64 seed_rng(0x7ace'c0dec'0001ull);
    unsigned reserved = 0, valid = 0;
    for (unsigned h = 0; h < 256; ++h) {
      const std::string name = cc.name;
      CAPTURE(name);
      CAPTURE(h);
      std::vector<std::uint8_t> bytes = preamble();
      gen g{std::mt19937_64(seed_rng()), c, bytes};
      const std::size_t before = bytes.size();
      if (!g.packet(static_cast<std::uint8_t>(h))) {
        // Reserved here: the decoder reports it at the header's offset (ReservedEncoding).
        // 0x0D under COMMOPT 0 with MAXSPEC 0: the header exists but no payload is legal
        // (MAXSPEC + AAAA - 15 > 0 cannot hold, D5.31).
        const bool f2_large = h == 0x0d && !c.commopt && c.maxspec == 0 && c.trccci;
        // ETMv4's data-trace, conditional and data-sync headers are not decoded.
        const bool unsupported = c.proto == protocol::etmv4 && h >= 0x20 && h <= 0x6f && h != 0x2d &&
                                 !(h >= 0x2e && h <= 0x3f);
        bytes.push_back(static_cast<std::uint8_t>(h));
        if (f2_large) bytes.push_back(0xf0);
        const decoded d = decode_all(cc.regs, bytes);
        REQUIRE(d.errors.size() >= 1);
        CHECK(d.errors[0].code == (f2_large      ? error_code::malformed_payload
                                   : unsupported ? error_code::unsupported_packet
                                                 : error_code::reserved_header));
        CHECK(d.errors[0].offset == before);
        ++reserved;
        continue;
      }
      // Valid: 40 more random packets of the same header, interleaved with random
      // address-bearing packets so the history and context differ each time.
      for (int i = 0; i < 40; ++i) {
        if (i % 3 == 0) {
          const std::uint8_t mix[] = {0x9d, 0x9e, 0x95, 0x9a, 0x85, 0x86, 0x81, 0x02};
          g.packet(mix[g.pick(sizeof mix)]);
        }
        g.packet(static_cast<std::uint8_t>(h));
      }
      const decoded d = decode_all(cc.regs, bytes);
      REQUIRE(d.errors.empty());
      std::size_t total = 0;
      for (const packet& p : d.packets) total += p.size;
      REQUIRE(total == bytes.size());
      error_code enc_err = error_code::ok;
      const std::vector<std::uint8_t> again = encode_all(cc.regs, d.packets, &enc_err);
      CHECK(enc_err == error_code::ok);
      CHECK(again == bytes);  // encode(decode(bytes)) == bytes
      const decoded d2 = decode_all(cc.regs, again);
      CHECK(d2.errors.empty());
      CHECK(d2.packets == d.packets);  // decode(encode(packet)) == packet
      ++valid;
    }
    CHECK(valid + reserved == 256);
    MESSAGE(std::string(cc.name) << ": " << valid << " header bytes valid, " << reserved << " reserved");
  }
}

TEST_CASE("round trip: every packet cut short reports truncated_packet at its offset") {
  const registers regs = configs[1].regs;
  const config c = config::from(regs);
  std::mt19937_64 rng(42);
  for (unsigned h = 1; h < 256; ++h) {
    std::vector<std::uint8_t> bytes = preamble();
    const std::size_t at = bytes.size();
    gen g{std::mt19937_64(rng()), c, bytes};
    if (!g.packet(static_cast<std::uint8_t>(h))) continue;
    const std::size_t full = bytes.size();
    for (std::size_t cut = at + 1; cut < full; ++cut) {
      CAPTURE(h);
      CAPTURE(cut);
      std::vector<std::uint8_t> part(bytes.begin(), bytes.begin() + static_cast<long>(cut));
      const decoded d = decode_all(regs, part);
      REQUIRE(d.errors.size() == 1);
      CHECK(d.errors[0].code == error_code::truncated_packet);
      CHECK(d.errors[0].offset == at);
      CHECK(d.packets.size() == 2);  // A-Sync and Trace Info survive
    }
  }
}

// The decoder's hot path reads continuation-coded fields with one 64-bit load
// (read_leb_unchecked: up to four groups packed in 32 bits, more in 64); the checked reader
// (read_leb, a byte at a time) is the reference: same status, value, length and end.
TEST_CASE("LEB fields: the one-load reader equals the byte-at-a-time one") {
  using namespace tracecodec::ete::detail;
  const leb_field fields[] = {leb32, leb_count, leb_cyct, leb_ts(7), leb_ts(9)};
  std::mt19937_64 rng(99);
  std::size_t by_len[10] = {}, short_reads = 0;
  for (int t = 0; t < 200000; ++t) {
    std::uint8_t b[16];
    const unsigned run = static_cast<unsigned>(rng() % 10);  // bytes with the continuation bit first
    for (unsigned i = 0; i < 16; ++i) {
      const auto r = static_cast<std::uint8_t>(rng());
      b[i] = i < run ? static_cast<std::uint8_t>(r | 0x80) : static_cast<std::uint8_t>(r & 0x7f);
    }
    for (const leb_field f : fields) {
      const std::uint8_t* q1 = b;
      const std::uint8_t* q2 = b;
      std::uint64_t v1 = 0, v2 = 0;
      std::uint8_t n1 = 0, n2 = 0;
      const read_status s1 = read_leb(q1, b + 16, f, v1, n1);
      const read_status s2 = read_leb_unchecked(q2, f, v2, n2);
      REQUIRE(s1 == s2);
      if (s1 != read_status::ok) continue;
      CAPTURE(t);
      CHECK(v1 == v2);
      CHECK(n1 == n2);
      CHECK(q1 == q2);
      ++by_len[n1];
      // The decode loop's timestamp reader: fields of up to four bytes, false for longer ones
      // (a timestamp field allows 7 or 9 bytes, so none of those is overlong or too wide).
      if (f.max_bytes == 7 || f.max_bytes == 9) {
        const std::uint8_t* q3 = b;
        std::uint64_t v3 = 0;
        std::uint8_t n3 = 0;
        const bool short_field = read_leb_short(q3, v3, n3);
        REQUIRE(short_field == (n1 <= 4));
        if (!short_field) {
          CHECK(q3 == b);
          continue;
        }
        CHECK(v3 == v1);
        CHECK(n3 == n1);
        CHECK(q3 == q1);
        ++short_reads;
      }
    }
  }
  for (unsigned n = 1; n <= 9; ++n) CHECK(by_len[n] > 1000);  // every length was read
  CHECK(short_reads > 50000);
}
