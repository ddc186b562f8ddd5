// SPDX-License-Identifier: Apache-2.0
// Field encodings (D5.3.1) shared by decoder and encoder: unsigned LE128n runs with a maximum
// length, bit replacement, and the address payload layouts (D9.2.14.2, D9.2.14.4).
#pragma once

#include <cstdint>
#include <type_traits>

#include "../../detail/hot.hpp"
#include "packet.hpp"

namespace tracecodec::ete::detail {

// Limits of each continuation-coded field: the number of bytes the packet layout allows and
// whether the last of them carries 8 data bits (TS[63:56]) or has bit 7 reserved (SBZ).
struct leb_field {
  std::uint8_t max_bytes;
  bool last_full;
  std::uint8_t width;  // value bits; bits above are (0) in the last byte and ignored
};
inline constexpr leb_field leb32{5, false, 32};      // COMMIT, CANCEL, SPEC, Q COUNT
inline constexpr leb_field leb_count{3, false, 20};  // cycle COUNT (D5.28)
inline constexpr leb_field leb_cyct{2, false, 12};   // Trace Info CYCT (D5.8)
constexpr leb_field leb_ts(std::uint8_t max_bytes) noexcept {
  return {max_bytes, max_bytes == 9, static_cast<std::uint8_t>(max_bytes == 9 ? 64 : 7 * max_bytes)};
}
constexpr std::uint64_t width_mask(leb_field f) noexcept {
  return f.width >= 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << f.width) - 1);
}

enum class read_status : std::uint8_t { ok, need_more, overlong };

// Reads one continuation-coded run starting at q. On ok, q points past it, `value` holds the
// bits and `len` the byte count. Never reads at or beyond `end`.
TRACECODEC_FLAT constexpr read_status read_leb(const std::uint8_t*& q, const std::uint8_t* end, leb_field f,
                               std::uint64_t& value, std::uint8_t& len) noexcept {
  std::uint64_t v = 0;
  for (unsigned i = 0; i < f.max_bytes; ++i) {
    if (q + i >= end) return read_status::need_more;
    const std::uint8_t b = q[i];
    if (i == 8u && f.last_full) {  // D5.9: the ninth TS byte holds TS[63:56] whole
      v |= static_cast<std::uint64_t>(b) << 56;
      q += i + 1;
      value = v;
      len = static_cast<std::uint8_t>(i + 1);
      return read_status::ok;
    }
    v |= static_cast<std::uint64_t>(b & 0x7fu) << (7 * i);
    if (!(b & 0x80u)) {
      q += i + 1;
      value = v & width_mask(f);
      len = static_cast<std::uint8_t>(i + 1);
      return read_status::ok;
    }
  }
  return read_status::overlong;  // continuation bit set in the last permitted byte
}

TRACECODEC_FLAT constexpr std::uint64_t load_le(const std::uint8_t* p, unsigned n) noexcept {
  std::uint64_t v = 0;
  for (unsigned i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  return v;
}
constexpr void store_le(std::uint8_t* p, std::uint64_t v, unsigned n) noexcept {
  for (unsigned i = 0; i < n; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// Eight bytes little-endian with one load where the host allows it (the hot paths).
TRACECODEC_HOT constexpr std::uint64_t load_le64(const std::uint8_t* p) noexcept {
#if (defined(__GNUC__) || defined(__clang__)) && defined(__BYTE_ORDER__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (!std::is_constant_evaluated()) {
    std::uint64_t v;
    __builtin_memcpy(&v, p, 8);
    return v;
  }
#endif
  return load_le(p, 8);
}

// The length of a continuation-coded run from the mask of its bytes' clear continuation bits
// (bit 7 of each byte; not 0): the first such byte ends it.
TRACECODEC_HOT constexpr unsigned leb_length(std::uint64_t stop) noexcept {
#if defined(__GNUC__) || defined(__clang__)
  return static_cast<unsigned>(__builtin_ctzll(stop)) / 8 + 1;
#else
  unsigned n = 1;
  while (!((stop >> (8 * n - 1)) & 1u)) ++n;
  return n;
#endif
}

// The first n (at most 4) 7-bit groups of the little-endian word w, packed in 28 bits.
TRACECODEC_HOT constexpr std::uint32_t leb_pack4(std::uint32_t w, unsigned n) noexcept {
  std::uint32_t y = w & 0x7f7f7f7fu;
  y = ((y & 0x7f007f00u) >> 1) | (y & 0x007f007fu);
  y = ((y & 0x3fff0000u) >> 2) | (y & 0x00003fffu);
  return y & ((std::uint32_t{1} << (7 * n)) - 1);
}

// The same, when at least 9 bytes are readable at q (the decoder's unchecked hot path):
// one 64-bit load, the terminator found with a bit scan, the 7-bit groups packed without a
// loop. Same results as read_leb().
TRACECODEC_HOT constexpr read_status read_leb_unchecked(const std::uint8_t*& q, leb_field f,
                                                        std::uint64_t& value, std::uint8_t& len) noexcept {
  const std::uint64_t w = load_le64(q);
  const std::uint64_t stop = ~w & 0x8080808080808080ull;  // bytes without a continuation bit
  unsigned n;
  std::uint64_t v;
  if (stop == 0) {  // 8 bytes all continue: only the 9-byte TS field (last byte whole) allows it
    if (!(f.last_full && f.max_bytes == 9)) return read_status::overlong;
    n = 9;
  } else {
    n = leb_length(stop);
    if (n > f.max_bytes) return read_status::overlong;
  }
  if (n <= 4) {  // most counts and timestamps: four groups packed in 32 bits, one step fewer
    q += n;
    value = leb_pack4(static_cast<std::uint32_t>(w), n) & width_mask(f);
    len = static_cast<std::uint8_t>(n);
    return read_status::ok;
  }
  std::uint64_t x = w & 0x7f7f7f7f7f7f7f7full;  // pack eight 7-bit groups into 56 bits
  x = ((x & 0x7f007f007f007f00ull) >> 1) | (x & 0x007f007f007f007full);
  x = ((x & 0x3fff00003fff0000ull) >> 2) | (x & 0x00003fff00003fffull);
  x = ((x & 0x0fffffff00000000ull) >> 4) | (x & 0x000000000fffffffull);
  if (n == 9) {
    v = x | (static_cast<std::uint64_t>(q[8]) << 56);
  } else {
    v = x & ((std::uint64_t{1} << (7 * n)) - 1);
  }
  q += n;
  value = v & width_mask(f);
  len = static_cast<std::uint8_t>(n);
  return read_status::ok;
}

// A field of at most four bytes (a timestamp's changed low bits, usually), read with one
// 32-bit load when no field of that length is overlong or wider than its width (every
// timestamp, whose fields allow 7 or 9 bytes). False, with q unchanged, for a longer field.
TRACECODEC_HOT constexpr bool read_leb_short(const std::uint8_t*& q, std::uint64_t& value,
                                             std::uint8_t& len) noexcept {
  const std::uint32_t w = static_cast<std::uint32_t>(load_le64(q));
  const std::uint32_t stop = ~w & 0x80808080u;
  if (stop == 0) return false;
  const unsigned n = leb_length(stop);
  q += n;
  value = leb_pack4(w, n);
  len = static_cast<std::uint8_t>(n);
  return true;
}

// Bytes needed for `value` in a continuation-coded field (at least 1).
constexpr std::uint8_t leb_size(std::uint64_t value, leb_field f) noexcept {
  std::uint8_t n = 1;
  while (n < f.max_bytes && (value >> (7 * n)) != 0) ++n;
  return n;
}

// Writes `value` in exactly `len` bytes (len >= leb_size). Returns bytes written. (One caller,
// the encoder's leb_at(): inlined there in the compact form.)
TRACECODEC_FLAT constexpr unsigned write_leb(std::uint8_t* out, std::uint64_t value, unsigned len,
                             leb_field f) noexcept {
  for (unsigned i = 0; i < len; ++i) {
    if (i == 8u && f.last_full) {
      out[i] = static_cast<std::uint8_t>(value >> 56);
      return len;
    }
    std::uint8_t b = static_cast<std::uint8_t>((value >> (7 * i)) & 0x7fu);
    if (i + 1 < len) b |= 0x80u;
    out[i] = b;
  }
  return len;
}

// Mask of the bits a bit-replacement run of `len` bytes replaces (D5.3.1 I_TGRZ).
constexpr std::uint64_t leb_mask(unsigned len) noexcept {
  return len >= 9 ? ~std::uint64_t{0} : ((std::uint64_t{1} << (7 * len)) - 1);
}

// Short address (D9.2.14.4/5): the bits replaced in history entry 0.
constexpr std::uint64_t short_address_mask(isa s, unsigned bytes) noexcept {
  if (s == isa::is0) return bytes == 1 ? 0x1ffu : 0x1ffffu;
  return bytes == 1 ? 0xffu : 0xffffu;
}


// Long address payloads (D9.2.14.2). IS0: two 7-bit bytes A[8:2], A[15:9], then A[31:16] or
// A[63:16] whole. IS1: one 7-bit byte A[7:1], then A[31:8] or A[63:8] whole.
constexpr unsigned long_address_bytes(bool is64) noexcept { return is64 ? 8 : 4; }

constexpr std::uint64_t read_long_address(const std::uint8_t* p, isa s, bool is64) noexcept {
  if (s == isa::is0) {
    const std::uint64_t low = (static_cast<std::uint64_t>(p[0] & 0x7fu) << 2) |
                              (static_cast<std::uint64_t>(p[1] & 0x7fu) << 9);
    return low | (load_le(p + 2, is64 ? 6 : 2) << 16);
  }
  return (static_cast<std::uint64_t>(p[0] & 0x7fu) << 1) | (load_le(p + 1, is64 ? 7 : 3) << 8);
}

constexpr void write_long_address(std::uint8_t* p, std::uint64_t a, isa s, bool is64) noexcept {
  if (s == isa::is0) {
    p[0] = static_cast<std::uint8_t>((a >> 2) & 0x7fu);
    p[1] = static_cast<std::uint8_t>((a >> 9) & 0x7fu);
    store_le(p + 2, a >> 16, is64 ? 6 : 2);
  } else {
    p[0] = static_cast<std::uint8_t>((a >> 1) & 0x7fu);
    store_le(p + 1, a >> 8, is64 ? 7 : 3);
  }
}

// Alignment of each sub-ISA (D5.3.2 Table D5.3).
constexpr std::uint64_t isa_alignment_mask(isa s) noexcept { return s == isa::is0 ? 3u : 1u; }

}  // namespace tracecodec::ete::detail
