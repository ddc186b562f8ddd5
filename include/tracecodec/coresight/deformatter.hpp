// SPDX-License-Identifier: Apache-2.0
// CoreSight trace formatter, decoding side: the byte streams of several trace sources that a
// formatter (ETB, ETF, ETR, TPIU) interleaved in 16-byte frames, split back by trace ID.
//
// A frame (CoreSight Architecture Specification, "Trace Formatter"): bytes 0, 2, ..., 14 are
// each an ID byte (bit 0 = 1: bits 7:1 are the new trace ID) or a data byte whose bit 0 is
// kept in the auxiliary byte 15 (bit k for byte 2k); bytes 1, 3, ..., 13 are always data. On
// an ID byte, aux bit k says when the change takes effect: 0 = at once (byte 2k + 1 is the new
// source's), 1 = after byte 2k + 1 (it is still the previous source's).
//
// Streams: memory-aligned frames (trace buffers: frames back to back from the first byte); a
// TPIU port stream (full-frame syncs FSYNC = FF FF FF 7F between frames, half-word syncs
// HSYNC = FF 7F in place of a data half-word; frame alignment is found at an FSYNC); a DSTREAM
// capture (the TPIU stream in 512-byte blocks: 504 bytes of stream, then an 8-byte footer).
//
// Freestanding, no allocation, streaming: chunks may split frames anywhere. The data of each
// source comes out in order, a run of one source's bytes at a time:
//   on_data(std::uint8_t id, const std::uint8_t* bytes, std::size_t n, std::uint64_t offset)
// with the input offset of the run's first byte (runs are at most 15 bytes: a frame's data
// bytes are not contiguous in the input, and bit 0 of every other byte comes from the
// auxiliary byte, so they are copied once). Or, faster, batches: an on_data callable as
// on_data(const data_batch&) gets up to batch_frames frames of one source per call, with a
// mask per frame that gives each byte's offset (data_batch below). Errors and notices:
// on_error(const diagnostic&), in stream order with the data in both forms.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../detail/error_text.hpp"
#include "../detail/hot.hpp"

namespace tracecodec::coresight {

// Stable codes: the numbers are part of the API and never change meaning.
enum class error_code : std::uint8_t {
  ok = 0,
  null_id_data = 1,     // notice: data under trace ID 0 (the null source, padding): dropped;
                        // offset = its ID byte, length = bytes dropped
  reserved_id = 2,      // an ID byte names a reserved trace ID (0x70-0x7F): the data under it
                        // is dropped until the next ID byte; offset = the ID byte
  no_id_data = 3,       // notice: data before the first ID byte of the stream (its source is
                        // not known): dropped; length = bytes dropped
  truncated_frame = 4,  // the input ended inside a frame: its bytes are dropped
  unsynchronized = 5,   // TPIU/DSTREAM: stream bytes skipped before frame alignment (an FSYNC)
                        // was found; length = bytes skipped
  bad_sync = 6,         // TPIU/DSTREAM: FF at an even byte of a frame that is not an HSYNC (an
                        // FSYNC inside a frame, or an ID byte for 0x7F): alignment is lost; the
                        // frame's bytes are dropped and the next FSYNC is searched for
  barrier = 7,          // notice: a memory-aligned frame of four FSYNCs, the barrier Linux writes
                        // where trace was lost: the current trace ID is forgotten; each source's
                        // decoder should resynchronize (its stream has a gap here)
  unrouted_data = 8,    // notice (decode_tree only): data of a trace ID that has no source in
                        // the tree: dropped; reported the first time per ID (offset = its
                        // first byte, length = that batch's bytes)
};

inline constexpr ::tracecodec::detail::error_text error_texts[] = {
    {"ok", "no error"},
    {"null_id_data", "data under trace ID 0 (null source) dropped"},
    {"reserved_id", "reserved trace ID: its data dropped"},
    {"no_id_data", "data before the first trace ID byte dropped"},
    {"truncated_frame", "trace ended inside a formatter frame"},
    {"unsynchronized", "bytes skipped before frame alignment (FSYNC) was found"},
    {"bad_sync", "FF at an even frame byte that is not an HSYNC: frame alignment lost"},
    {"barrier", "a frame of four FSYNCs (trace lost before it): trace ID forgotten"},
    {"unrouted_data", "data of a trace ID with no decoder dropped"},
};
static_assert(::tracecodec::detail::dense_error_table(error_texts, error_code::unrouted_data));

constexpr const char* error_name(error_code e) noexcept {
  return ::tracecodec::detail::error_text_of(error_texts, e).name;
}
constexpr const char* error_message(error_code e) noexcept {
  return ::tracecodec::detail::error_text_of(error_texts, e).message;
}

using diagnostic = ::tracecodec::detail::diagnostic<error_code>;

inline constexpr std::uint8_t null_trace_id = 0x00;
// 0x70-0x7F are reserved (0x7D: trigger, 0x7F never used: an ID byte 0xFF would be a sync).
constexpr bool reserved_trace_id(std::uint8_t id) noexcept { return id >= 0x70; }
constexpr bool valid_trace_id(std::uint8_t id) noexcept {  // neither null nor reserved
  return static_cast<unsigned>(id) - 1u < 0x6Fu;  // (one comparison: 0 wraps around)
}

enum class frame_format : std::uint8_t {
  memory_aligned,  // frames back to back from the first byte (ETB/ETF/ETR buffers)
  tpiu,            // a TPIU port stream: FSYNCs between frames, HSYNCs inside them
  dstream,         // a DSTREAM capture: 512-byte blocks of 504 TPIU stream bytes + 8 footer
};

inline constexpr std::size_t frame_size = 16;
inline constexpr std::size_t dstream_block = 512, dstream_stream = 504;

// Batched delivery: at most this many frames' data in one data_batch.
inline constexpr std::size_t batch_frames = 64;
// A frame mask with bits 0-14 set: all 15 data bytes of a frame without ID bytes.
inline constexpr std::uint16_t whole_frame = 0x7FFF;

// Consecutive data bytes of one trace source, unpacked from `frames` frames. Frame j of the
// batch starts at input offset `offset + 16 * j` (memory-aligned frames are back to back;
// TPIU and DSTREAM batches hold one frame each, frames == 1); bit b of frame_masks[j] is set
// when byte b of that frame is in `bytes` (bits 0-14; the bytes keep the frame's order). So a
// batch of whole frames (every mask whole_frame) has byte i from offset + 16 * (i / 15) + i % 15;
// offset_of(i) gives it for any batch. The pointers are valid during the call only.
struct data_batch {
  std::uint8_t id = 0;
  const std::uint8_t* bytes = nullptr;
  std::size_t size = 0;
  std::uint64_t offset = 0;
  const std::uint16_t* frame_masks = nullptr;
  std::size_t frames = 0;
  // Where the source's segment of frame 0 began, as OpenCSD 1.8.0's deformatter numbers a
  // source's bytes (from the frame's offset plus this, counting data bytes only): the place in
  // the frame of the ID byte that switched to the source, or 0 when the source was current at
  // the start of the frame (every later frame of a batch). decode_tree::opencsd_index uses it.
  std::uint8_t first_segment = 0;

  // The input offset of bytes[i] (i < size). Like the offset of a run: the frame's offset plus
  // the byte's place in the frame (in a TPIU stream, HSYNCs inside the frame are not counted).
  constexpr std::uint64_t offset_of(std::size_t i) const noexcept {
    for (std::size_t j = 0; j < frames; ++j)
      for (unsigned b = 0; b < frame_size - 1; ++b)
        if ((frame_masks[j] >> b) & 1u) {
          if (i == 0) return offset + frame_size * j + b;
          --i;
        }
    return ~std::uint64_t{0};  // i >= size
  }
};

// ---- unpacking a frame (the deformatter's helpers) ------------------------------------------
// GCC and Clang get compiler builtins (unaligned word loads and stores, count trailing zeros);
// other compilers, and builds that define TRACECODEC_DEFORMAT_PORTABLE (the tests build the
// deformatter both ways), the plain C++ forms, which give the same results.
#if (defined(__GNUC__) || defined(__clang__)) && !defined(TRACECODEC_DEFORMAT_PORTABLE)
#define TRACECODEC_DEFORMAT_BUILTINS 1
#else
#define TRACECODEC_DEFORMAT_BUILTINS 0
#endif
// Memory-aligned batches through a block pass of byte shuffles: x86 with SSSE3 (chosen at run
// time), AArch64 (Advanced SIMD `tbl`, which every AArch64 PE has). The scalar batch loop is
// the reference and the path everywhere else.
#if TRACECODEC_DEFORMAT_BUILTINS && (defined(__x86_64__) || defined(__i386__))
#define TRACECODEC_DEFORMAT_SSSE3 1
#else
#define TRACECODEC_DEFORMAT_SSSE3 0
#endif
#if TRACECODEC_DEFORMAT_BUILTINS && defined(__aarch64__) && defined(__ARM_NEON) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define TRACECODEC_DEFORMAT_NEON 1
#else
#define TRACECODEC_DEFORMAT_NEON 0
#endif
#define TRACECODEC_DEFORMAT_BLOCKS (TRACECODEC_DEFORMAT_SSSE3 || TRACECODEC_DEFORMAT_NEON)
// x86-64: four frames at a time with AVX-512 where the CPU has it (below), unless the build
// defines TRACECODEC_DEFORMAT_NO_AVX512.
#if TRACECODEC_DEFORMAT_SSSE3 && defined(__x86_64__) && !defined(TRACECODEC_DEFORMAT_NO_AVX512)
#define TRACECODEC_DEFORMAT_AVX512 1
#else
#define TRACECODEC_DEFORMAT_AVX512 0
#endif
// x86-64: two frames at a time with AVX2 where the CPU has it (below), unless the build defines
// TRACECODEC_DEFORMAT_NO_AVX2.
#if TRACECODEC_DEFORMAT_SSSE3 && defined(__x86_64__) && !defined(TRACECODEC_DEFORMAT_NO_AVX2)
#define TRACECODEC_DEFORMAT_AVX2 1
#else
#define TRACECODEC_DEFORMAT_AVX2 0
#endif
namespace detail {

// Little-endian words: with the builtins one unaligned load or store (__builtin_memcpy); the
// byte-by-byte form is for constant evaluation and the portable build (GCC 12 at -O2 turns a
// pair of them into a stack round trip that stalls on store forwarding).
constexpr std::uint64_t load64(const std::uint8_t* p) noexcept {
#if TRACECODEC_DEFORMAT_BUILTINS
  if (!std::is_constant_evaluated()) {
    std::uint64_t v;
    __builtin_memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
  }
#endif
  using u64 = std::uint64_t;
  return u64{p[0]} | u64{p[1]} << 8 | u64{p[2]} << 16 | u64{p[3]} << 24 | u64{p[4]} << 32 |
         u64{p[5]} << 40 | u64{p[6]} << 48 | u64{p[7]} << 56;
}
constexpr void store64(std::uint8_t* p, std::uint64_t v) noexcept {
#if TRACECODEC_DEFORMAT_BUILTINS
  if (!std::is_constant_evaluated()) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    __builtin_memcpy(p, &v, 8);
    return;
  }
#endif
  for (unsigned i = 0; i < 8; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
// Bits 0-3 to bit 0 of bytes 0, 2, 4, 6 of a little-endian word (the auxiliary bits of the
// frame's first or second eight bytes).
struct nibble_table {
  std::uint64_t w[16];
};
constexpr nibble_table make_spread() noexcept {
  nibble_table t{};
  for (unsigned v = 0; v < 16; ++v)
    for (unsigned k = 0; k < 4; ++k) t.w[v] |= static_cast<std::uint64_t>((v >> k) & 1u) << (16 * k);
  return t;
}
inline constexpr nibble_table spread = make_spread();
inline constexpr std::uint64_t even_lsbs = 0x0001000100010001ull;  // bytes 0, 2, 4, 6
// The reverse: bit 0 of bytes 0, 2, 4, 6 to bits 0-3 (one bit per partial product of the
// multiply, none overlapping, so nothing carries).
constexpr unsigned gather(std::uint64_t w) noexcept {
  return static_cast<unsigned>(((w & even_lsbs) * 0x0800100020004000ull) >> 59) & 0xFu;
}

// A frame's 16 bytes as two little-endian words.
struct frame_words {
  std::uint64_t lo, hi;
  constexpr void store(std::uint8_t* p) const noexcept {
    store64(p, lo);
    store64(p + 8, hi);
  }
  constexpr std::uint8_t byte(unsigned b) const noexcept {
    return static_cast<std::uint8_t>(b < 8 ? lo >> (8 * b) : hi >> (8 * (b - 8)));
  }
  // Bytes n.. moved down to 0.. (zeros above), 0 <= n < 16.
  // (Without branches: the compiler selects with conditional moves.)
  constexpr frame_words shifted(unsigned n) const noexcept {
    const unsigned s = 8 * (n & 7u);
    const std::uint64_t below = (lo >> s) | ((hi << (63 - s)) << 1), above = hi >> s;
    return {n >= 8 ? above : below, n >= 8 ? 0 : above};
  }
  // Byte b removed, the bytes above it moved down one, 0 <= b < 16.
  constexpr frame_words without(unsigned b) const noexcept {
    const frame_words down = shifted(1);
    const std::uint64_t keep_lo = b >= 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * b)) - 1;
    const std::uint64_t keep_hi = b <= 8 ? 0 : (std::uint64_t{1} << (8 * (b - 8))) - 1;
    return {(lo & keep_lo) | (down.lo & ~keep_lo), (hi & keep_hi) | (down.hi & ~keep_hi)};
  }
};
// The frame with its even data bytes' bit 0 restored from the auxiliary byte (ID bytes and
// byte 15 get garbage there: never passed on).
constexpr frame_words unpacked(std::uint64_t w0, std::uint64_t w1, unsigned aux) noexcept {
  return {w0 | spread.w[aux & 0xFu], w1 | spread.w[aux >> 4]};
}
constexpr unsigned lowest_bit(unsigned v) noexcept {  // v != 0
#if TRACECODEC_DEFORMAT_BUILTINS
  return static_cast<unsigned>(__builtin_ctz(v));
#else
  unsigned k = 0;
  while (!((v >> k) & 1u)) ++k;
  return k;
#endif
}

#if TRACECODEC_DEFORMAT_BLOCKS
// Per ID-byte pattern (bit k: byte 2k is an ID byte): the frame's data bytes (bits 0-14, ID
// bytes out) and how many there are.
struct layout_table {
  std::uint16_t m[256];
  std::uint8_t data_bytes[256];
};
constexpr layout_table make_layouts() noexcept {
  layout_table t{};
  for (unsigned v = 0; v < 256; ++v) {
    unsigned m = 0x7FFFu, n = 0;
    for (unsigned k = 0; k < 8; ++k)
      if ((v >> k) & 1u) {
        m &= ~(1u << (2 * k));
        ++n;
      }
    t.m[v] = static_cast<std::uint16_t>(m);
    t.data_bytes[v] = static_cast<std::uint8_t>(15 - n);
  }
  return t;
}
inline constexpr layout_table frame_layouts = make_layouts();

// n bytes from `from` to `to`, eight at a time (to <= from when they overlap; both buffers
// have 8 bytes of room after the n).
constexpr void copy_bytes(std::uint8_t* to, const std::uint8_t* from, std::size_t n) noexcept {
  for (std::size_t k = 0; k < n; k += 8) store64(to + k, load64(from + k));
}

// A block of memory-aligned frames unpacked in stream order, whatever their sources (the fast
// batch path): each frame's data bytes (bit 0 restored, ID bytes closed up) back to back.
struct frame_block {
  std::uint8_t bytes[batch_frames * 15 + frame_size];
  std::uint16_t masks[batch_frames];  // each frame's data bytes (bit b: byte b)
  std::uint8_t ids[batch_frames];     // each frame's ID bytes (bit k: byte 2k)
};
static_assert(batch_frames % 8 == 0, "change_blocks reads blk.ids eight frames (a word) at a time");

// Byte shuffles: per auxiliary byte, bit k at bit 0 of byte 2k; per ID-byte pattern, the
// places of the data bytes in order (0x80: a zero byte after them).
struct alignas(16) shuffle_tables {
  std::uint8_t aux[256][16];
  std::uint8_t close_up[256][16];
};
constexpr shuffle_tables make_shuffles() noexcept {
  shuffle_tables t{};
  for (unsigned v = 0; v < 256; ++v) {
    for (unsigned k = 0; k < 8; ++k) t.aux[v][2 * k] = static_cast<std::uint8_t>((v >> k) & 1u);
    unsigned n = 0;
    for (unsigned b = 0; b < 15; ++b)
      if (b % 2 != 0 || ((v >> (b / 2)) & 1u) == 0) t.close_up[v][n++] = static_cast<std::uint8_t>(b);
    while (n < 16) t.close_up[v][n++] = 0x80;
  }
  return t;
}
inline constexpr shuffle_tables shuffles = make_shuffles();

// 16-byte vectors through the compilers' own builtins (what <tmmintrin.h> and <arm_neon.h>
// wrap; no header, so the codec headers stay on the freestanding ones).
using bytes16 = char __attribute__((vector_size(16)));
using halves16 = short __attribute__((vector_size(16)));
using ubytes16 = unsigned char __attribute__((vector_size(16)));
template <class V>
inline V load_vector(const void* p) noexcept {
  V v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

// Two blocks of frames ahead of f (an address only: a prefetch never faults, even past the
// input's end). The block path computes between its loads long enough that, without it, they
// wait for memory the hardware prefetcher has not yet brought in (bench/README.md).
[[gnu::always_inline]] inline void prefetch_ahead(const std::uint8_t* f) noexcept {
  const std::uintptr_t ahead = reinterpret_cast<std::uintptr_t>(f) + 2 * batch_frames * frame_size;
  __builtin_prefetch(reinterpret_cast<const void*>(ahead));
}
#endif

#if TRACECODEC_DEFORMAT_SSSE3
inline bool have_block_unpack() noexcept { return __builtin_cpu_supports("ssse3"); }
#define TRACECODEC_DEFORMAT_BLOCK_TARGET [[gnu::target("ssse3")]]

using frame_vector = bytes16;
using frame_lane = char;

// Bit 0 of each even byte of v as bits 0-7 (bit k: byte 2k): as the sign of its 16-bit lane,
// packed (psllw, packsswb, pmovmskb).
[[gnu::target("ssse3"), gnu::always_inline]] inline unsigned even_low_bits(bytes16 v) noexcept {
  const halves16 signs = __builtin_bit_cast(halves16, v) << 15;
  return static_cast<unsigned>(__builtin_ia32_pmovmskb128(__builtin_ia32_packsswb128(signs, halves16{}))) & 0xFFu;
}
[[gnu::target("ssse3"), gnu::always_inline]] inline bytes16 byte_shuffle(bytes16 v, bytes16 places) noexcept {
  return __builtin_ia32_pshufb128(v, places);
}
// Whether an even byte of v is an ID byte (bit 0 set) other than id_byte: the lanes compared
// at once, their sign bits gathered (pmovmskb).
[[gnu::target("ssse3"), gnu::always_inline]] inline bool other_id_bytes(bytes16 v, bytes16 id_byte) noexcept {
  constexpr bytes16 even_ones = {1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0};
  const bytes16 other = (bytes16)((v & even_ones) > 0) & ~(bytes16)(v == id_byte);
  return __builtin_ia32_pmovmskb128(other) != 0;
}
#endif

// Four frames at once where the CPU has AVX-512BW, VBMI2 and POPCNT (x86-64, chosen at run
// time; a build that defines TRACECODEC_DEFORMAT_NO_AVX512 keeps to AVX2 or SSSE3, which the
// tests use to hold every path to the same checks): one 64-byte load, the ID bytes as a mask
// register, the auxiliary bits restored lane by lane, and the data bytes closed up by one byte
// compress (vpcompressb).
#if TRACECODEC_DEFORMAT_AVX512
#define TRACECODEC_DEFORMAT_QUAD_TARGET [[gnu::target("avx512f,avx512bw,avx512vbmi2,popcnt")]]
inline bool have_quad_unpack() noexcept {
  return __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vbmi2") &&
         __builtin_cpu_supports("popcnt");
}
using bytes64 = char __attribute__((vector_size(64)));
using halves64 = short __attribute__((vector_size(64)));
using uhalves64 = unsigned short __attribute__((vector_size(64)));
using words64 = unsigned long long __attribute__((vector_size(64)));

// Four frames' data bytes: bit 16j + b for byte b of frame j (bits 0-14 but the ID bytes).
inline constexpr std::uint64_t quad_data_bytes = 0x7FFF7FFF7FFF7FFFull;
// Per frame: its ID bytes (bit 16j + b) from the even bytes with bit 0 set.
TRACECODEC_DEFORMAT_QUAD_TARGET [[gnu::always_inline]] inline std::uint64_t quad_ids(bytes64 v) noexcept {
  const bytes64 even_ones = __builtin_bit_cast(bytes64, words64{} + 0x0001000100010001ull);
  return __builtin_ia32_cmpb512_mask(v & even_ones, bytes64{}, 4, ~0ull);  // 4: not equal (vptestmb)
}
// The four frames in v unpacked, their data bytes (bit 0 restored) closed up and stored at `to`
// (64 bytes written); returns their data-byte mask (bit 16j + b: byte b of frame j).
TRACECODEC_DEFORMAT_QUAD_TARGET [[gnu::always_inline]] inline std::uint64_t unpack_quad(bytes64 v, std::uint64_t ids,
                                                                                      std::uint8_t* to) noexcept {
  // Each lane's byte 15 (the auxiliary byte) at every place; the lane's 16-bit word k shifted
  // right by k has bit k of it at bit 0 of byte 2k, OR-ed in (a data byte has bit 0 clear; an ID
  // byte is dropped).
  const bytes64 aux_places = bytes64{} + 15;
#if defined(__clang__)
  const bytes64 aux = __builtin_ia32_pshufb512(v, aux_places);
#else
  const bytes64 aux = __builtin_ia32_pshufb512_mask(v, aux_places, bytes64{}, ~0ull);
#endif
  const uhalves64 word_k = {0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7,
                            0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7};
  const bytes64 u = v | __builtin_bit_cast(bytes64, (__builtin_bit_cast(uhalves64, aux) >> word_k) & 1);
  const std::uint64_t data = ~ids & quad_data_bytes;
  const bytes64 packed = __builtin_ia32_compressqi512_mask(u, bytes64{}, data);
  __builtin_memcpy(to, &packed, 64);
  return data;
}

// The batch loop's frames of the current source, four at a time (as same_source_frames): up
// to n from f, stopping before four that hold an ID byte of another source. Returns the frames
// taken (a multiple of four); `to` needs 64 bytes of room.
TRACECODEC_DEFORMAT_QUAD_TARGET inline std::size_t same_source_quads(const std::uint8_t* f, std::size_t n,
                                                                      std::uint8_t id_byte, std::uint8_t*& to_out,
                                                                      std::uint16_t* masks) noexcept {
  std::uint8_t* to = to_out;  // a local: the byte stores may alias anything
  const bytes64 ids_of_source = bytes64{} + static_cast<char>(id_byte);
  std::size_t j = 0;
  for (; n - j >= 4; j += 4, f += 4 * frame_size) {
    bytes64 v;
    __builtin_memcpy(&v, f, sizeof v);
    const std::uint64_t ids = quad_ids(v);
    if ((ids & ~__builtin_ia32_cmpb512_mask(v, ids_of_source, 0, ~0ull)) != 0) break;  // 0: equal
    prefetch_ahead(f);
    const std::uint64_t data = unpack_quad(v, ids, to);
    __builtin_memcpy(masks + j, &data, 8);  // each frame's mask, frame j's in bits 0-15
    to += __builtin_popcountll(data);
  }
  to_out = to;
  return j;
}

// Block frames [j, n) from f, four at a time while four are left (as unpack_frames, which
// takes the rest). Returns the next frame.
TRACECODEC_DEFORMAT_QUAD_TARGET inline std::size_t unpack_quads(const std::uint8_t* f, std::size_t j, std::size_t n,
                                                                 frame_block& b, std::size_t& len_out) noexcept {
  std::size_t len = len_out;
  for (; n - j >= 4; j += 4, f += 4 * frame_size) {
    bytes64 v;
    __builtin_memcpy(&v, f, sizeof v);
    prefetch_ahead(f);
    const std::uint64_t data = unpack_quad(v, quad_ids(v), b.bytes + len);
    __builtin_memcpy(b.masks + j, &data, 8);
    len += static_cast<std::size_t>(__builtin_popcountll(data));
    // The ID-byte patterns: bit 0 of each 16-bit word (byte 2k of frame m: bit 8m + k).
    const halves64 low = __builtin_bit_cast(halves64, v) & 1;
    const std::uint32_t ids = __builtin_ia32_cmpw512_mask(low, halves64{}, 4, ~0u);  // 4: not equal
    __builtin_memcpy(b.ids + j, &ids, 4);
  }
  len_out = len;
  return j;
}
#endif

// Two frames at once where the CPU has AVX2 (x86-64, chosen at run time; a build that defines
// TRACECODEC_DEFORMAT_NO_AVX2 keeps to SSSE3 where it has no AVX-512): one 32-byte load, a frame in each 16-byte lane
// (vpshufb shuffles within a lane), so the SSSE3 steps serve two frames.
#if TRACECODEC_DEFORMAT_AVX2
#define TRACECODEC_DEFORMAT_PAIR_TARGET [[gnu::target("avx2")]]
inline bool have_pair_unpack() noexcept { return __builtin_cpu_supports("avx2"); }
using bytes32 = char __attribute__((vector_size(32)));
using halves32 = short __attribute__((vector_size(32)));
using words32 = long long __attribute__((vector_size(32)));
using words16 = long long __attribute__((vector_size(16)));

TRACECODEC_DEFORMAT_PAIR_TARGET [[gnu::always_inline]] inline bytes32 load_pair(const std::uint8_t* f) noexcept {
  bytes32 v;
  __builtin_memcpy(&v, f, sizeof v);
  return v;
}

// The two frames in v unpacked, their data bytes (bit 0 restored, ID bytes closed up) stored
// at `to` (advanced past them; 32 bytes of room), their masks at masks[0] and masks[1]; returns
// their ID-byte patterns (frame 0's in bits 0-7, frame 1's in bits 16-23).
TRACECODEC_DEFORMAT_PAIR_TARGET [[gnu::always_inline]] inline unsigned unpack_pair(bytes32 v, std::uint8_t*& to,
                                                                                std::uint16_t* masks) noexcept {
  // The ID bytes: bit 0 of each even byte as the sign of its 16-bit lane, packed (per lane:
  // eight bytes, then eight zeros).
  const halves32 signs = __builtin_bit_cast(halves32, v) << 15;
  const auto ids = static_cast<unsigned>(__builtin_ia32_pmovmskb256(__builtin_ia32_packsswb256(signs, halves32{})));
  const std::size_t ids0 = ids & 0xFFu, ids1 = ids >> 16;
  // The auxiliary byte of each lane at every place, ANDed with bit k at byte 2k (0 at odd
  // bytes); where that bit is set the byte compares equal to it and the subtract adds 1 (a
  // data byte has bit 0 clear; an ID byte is dropped).
  constexpr bytes32 bit_k = {1, 0, 2, 0, 4, 0, 8, 0, 16, 0, 32, 0, 64, 0, -128, 0,
                             1, 0, 2, 0, 4, 0, 8, 0, 16, 0, 32, 0, 64, 0, -128, 0};
  constexpr bytes32 bit_k_set = {1, -1, 2, -1, 4, -1, 8, -1, 16, -1, 32, -1, 64, -1, -128, -1,
                                 1, -1, 2, -1, 4, -1, 8, -1, 16, -1, 32, -1, 64, -1, -128, -1};
  const bytes32 aux = __builtin_ia32_pshufb256(v, bytes32{} + 15);
  const bytes32 u = v - static_cast<bytes32>((aux & bit_k) == bit_k_set);
  // Each lane's close-up shuffle (vinserti128 of frame 1's into frame 0's).
  const words16 places0 = load_vector<words16>(shuffles.close_up[ids0]);
  const words16 places1 = load_vector<words16>(shuffles.close_up[ids1]);
  const words32 places =
      __builtin_ia32_insert128i256(__builtin_shufflevector(places0, places0, 0, 1, -1, -1), places1, 1);
  const words32 closed = __builtin_bit_cast(words32, __builtin_ia32_pshufb256(u, __builtin_bit_cast(bytes32, places)));
  const words16 closed0 = __builtin_shufflevector(closed, closed, 0, 1);
  const words16 closed1 = __builtin_ia32_extract128i256(closed, 1);
  __builtin_memcpy(to, &closed0, 16);
  to += frame_layouts.data_bytes[ids0];
  __builtin_memcpy(to, &closed1, 16);
  to += frame_layouts.data_bytes[ids1];
  masks[0] = frame_layouts.m[ids0];
  masks[1] = frame_layouts.m[ids1];
  return ids;
}

// The batch loop's frames of the current source, two at a time (as same_source_frames): up to
// n from f, stopping at the first pair in which either frame holds an ID byte of another
// source (same_source_frames then takes its first frame if that one holds none). Returns the
// frames taken (a multiple of two); `to` needs 32 bytes of room.
TRACECODEC_DEFORMAT_PAIR_TARGET inline std::size_t same_source_pairs(const std::uint8_t* f, std::size_t n,
                                                                      std::uint8_t id_byte, std::uint8_t*& to_out,
                                                                      std::uint16_t* masks) noexcept {
  std::uint8_t* to = to_out;  // a local: the byte stores may alias anything
  const bytes32 ids_of_source = bytes32{} + static_cast<char>(id_byte);
  const bytes32 even_ones = __builtin_bit_cast(bytes32, halves32{} + 1);
  std::size_t j = 0;
  for (; n - j >= 2; j += 2, f += 2 * frame_size) {
    const bytes32 v = load_pair(f);
    // An even byte with bit 0 set that is not id_byte (vptest: its carry flag says whether
    // every bit set in the second operand is set in the first).
    const bytes32 same = static_cast<bytes32>(v == ids_of_source);
    if (!__builtin_ia32_ptestc256(__builtin_bit_cast(words32, same), __builtin_bit_cast(words32, v & even_ones))) break;
    prefetch_ahead(f);
    unpack_pair(v, to, masks + j);
  }
  to_out = to;
  return j;
}

// Block frames [j, n) from f, two at a time while two are left (as unpack_frames, which takes
// the rest). Returns the next frame.
TRACECODEC_DEFORMAT_PAIR_TARGET inline std::size_t unpack_pairs(const std::uint8_t* f, std::size_t j, std::size_t n,
                                                                 frame_block& b, std::size_t& len_out) noexcept {
  std::uint8_t* to = b.bytes + len_out;
  for (; n - j >= 2; j += 2, f += 2 * frame_size) {
    prefetch_ahead(f);
    const unsigned ids = unpack_pair(load_pair(f), to, b.masks + j);
    b.ids[j] = static_cast<std::uint8_t>(ids);
    b.ids[j + 1] = static_cast<std::uint8_t>(ids >> 16);
  }
  len_out = static_cast<std::size_t>(to - b.bytes);
  return j;
}
#endif

#if TRACECODEC_DEFORMAT_NEON
constexpr bool have_block_unpack() noexcept { return true; }
#define TRACECODEC_DEFORMAT_BLOCK_TARGET

// vqtbl1q_u8 and vaddvq_u8 of <arm_neon.h>, which the codec headers may not include: GCC and
// Clang name the builtins behind them differently.
#if defined(__clang__)
using neon_s8x16 = __attribute__((neon_vector_type(16))) signed char;
inline ubytes16 table_lookup(ubytes16 t, ubytes16 i) noexcept {
  return (ubytes16)__builtin_neon_vqtbl1q_v((neon_s8x16)t, (neon_s8x16)i, 48);  // 48: uint8x16_t
}
inline unsigned add_lanes(ubytes16 v) noexcept {
  return static_cast<std::uint8_t>(__builtin_neon_vaddvq_u8((__attribute__((neon_vector_type(16))) unsigned char)v));
}
#else
inline ubytes16 table_lookup(ubytes16 t, ubytes16 i) noexcept { return __builtin_aarch64_qtbl1v16qi_uuu(t, i); }
inline unsigned add_lanes(ubytes16 v) noexcept { return __builtin_aarch64_reduc_plus_scal_v16qi_uu(v); }
#endif

using frame_vector = ubytes16;
using frame_lane = unsigned char;

// Bit 0 of each even byte of v as bits 0-7 (bit k: byte 2k): each weighted, then all lanes
// added.
[[gnu::always_inline]] inline unsigned even_low_bits(ubytes16 v) noexcept {
  constexpr ubytes16 weights = {1, 0, 2, 0, 4, 0, 8, 0, 16, 0, 32, 0, 64, 0, 128, 0};
  return add_lanes((v & 1) * weights);
}
// `tbl` gives 0 for an index of 16 or more, as `pshufb` does for one with bit 7 set, so the
// tables serve both.
[[gnu::always_inline]] inline ubytes16 byte_shuffle(ubytes16 v, ubytes16 places) noexcept {
  return table_lookup(v, places);
}
// Whether an even byte of v is an ID byte (bit 0 set) other than id_byte: a 1 in each such
// lane, the lanes added.
[[gnu::always_inline]] inline bool other_id_bytes(ubytes16 v, ubytes16 id_byte) noexcept {
  constexpr ubytes16 even_ones = {1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0};
  return add_lanes(v & even_ones & (ubytes16)(v != id_byte)) != 0;
}
#endif

#if TRACECODEC_DEFORMAT_BLOCKS
// One frame at f: its data bytes (bit 0 restored, ID bytes closed up) stored at `to` (16 bytes
// written); returns its ID-byte pattern (bit k: byte 2k is an ID byte).
TRACECODEC_DEFORMAT_BLOCK_TARGET [[gnu::always_inline]] inline unsigned unpack_frame(const std::uint8_t* f,
                                                                                   std::uint8_t* to) noexcept {
  const frame_vector v = load_vector<frame_vector>(f);
  const unsigned ids = even_low_bits(v);
  const frame_vector u = v | load_vector<frame_vector>(shuffles.aux[f[15]]);
  const frame_vector closed = byte_shuffle(u, load_vector<frame_vector>(shuffles.close_up[ids]));
  __builtin_memcpy(to, &closed, 16);
  return ids;
}

// Frames [j, n) of the block from f: the same work for every frame, no branch on what it
// holds (in dense captures sources change at random frames and places, so such a branch
// would be mispredicted). A frame's ID bytes are only noted (frame_block::ids); change_blocks
// cuts at them.
TRACECODEC_DEFORMAT_BLOCK_TARGET inline void unpack_frames(const std::uint8_t* f, std::size_t j, std::size_t n,
                                                           frame_block& b, std::size_t& len_out) noexcept {
  std::size_t len = len_out;  // a local: the byte stores below may alias anything
  for (; j < n; ++j, f += frame_size) {
    const unsigned ids = unpack_frame(f, b.bytes + len);
    b.ids[j] = static_cast<std::uint8_t>(ids);
    b.masks[j] = frame_layouts.m[ids];
    len += frame_layouts.data_bytes[ids];
  }
  len_out = len;
}

// The batch loop's frames of the current source (id_byte: its ID byte, (id << 1) | 1), up to n
// from f: each unpacked to `to` (advanced) with its mask, until a frame holds an ID byte of
// another source (or a barrier's FF). Returns the frames taken. The same work for a frame with
// ID bytes that repeat the source as for one without (no branch on where they are).
TRACECODEC_DEFORMAT_BLOCK_TARGET inline std::size_t same_source_frames(const std::uint8_t* f, std::size_t n,
                                                                        std::uint8_t id_byte, std::uint8_t*& to_out,
                                                                        std::uint16_t* masks) noexcept {
  std::uint8_t* to = to_out;  // a local: the byte stores may alias anything
  const frame_vector ids_of_source = frame_vector{} + static_cast<frame_lane>(id_byte);
  std::size_t j = 0;
  for (; j < n; ++j, f += frame_size) {
    if (other_id_bytes(load_vector<frame_vector>(f), ids_of_source)) break;
    const unsigned ids = unpack_frame(f, to);
    masks[j] = frame_layouts.m[ids];
    to += frame_layouts.data_bytes[ids];
  }
  to_out = to;
  return j;
}

// Block frames [j, n) from f (unpack_frames), four (AVX-512) or two (AVX2) at a time where the
// CPU can.
inline void unpack_block(const std::uint8_t* f, std::size_t j, std::size_t n, frame_block& b,
                         std::size_t& len) noexcept {
#if TRACECODEC_DEFORMAT_AVX512
  if (have_quad_unpack()) {
    const std::size_t k = unpack_quads(f, j, n, b, len);
    f += frame_size * (k - j);
    j = k;
  }
#endif
#if TRACECODEC_DEFORMAT_AVX2
  if (have_pair_unpack()) {
    const std::size_t k = unpack_pairs(f, j, n, b, len);
    f += frame_size * (k - j);
    j = k;
  }
#endif
  unpack_frames(f, j, n, b, len);
}
#endif

}  // namespace detail

class deformatter {
 public:
  constexpr explicit deformatter(frame_format f = frame_format::memory_aligned) noexcept
      : format_(f), synced_(f == frame_format::memory_aligned) {}

  constexpr frame_format format() const noexcept { return format_; }

  // Whether batches of memory-aligned frames go through the block path of byte shuffles (x86
  // whose CPU has SSSE3, AArch64; built with GCC or Clang); else the scalar
  // one. Both give the same batches.
  static bool simd_batches() noexcept {
#if TRACECODEC_DEFORMAT_BLOCKS
    return detail::have_block_unpack();
#else
    return false;
#endif
  }
  // Which batch path this build takes on this CPU: "AVX-512" (byte shuffles, four frames at a
  // time where four are left), "AVX2" (two at a time), "SSSE3", "Advanced SIMD" or "scalar".
  static const char* batch_path() noexcept {
#if TRACECODEC_DEFORMAT_AVX512
    if (detail::have_block_unpack() && detail::have_quad_unpack()) return "AVX-512";
#endif
#if TRACECODEC_DEFORMAT_AVX2
    if (detail::have_block_unpack() && detail::have_pair_unpack()) return "AVX2";
#endif
#if TRACECODEC_DEFORMAT_SSSE3
    if (detail::have_block_unpack()) return "SSSE3";
#endif
#if TRACECODEC_DEFORMAT_NEON
    return "Advanced SIMD";
#else
    return "scalar";
#endif
  }

  // A new stream: no frame alignment (TPIU), no current trace ID, offsets from 0.
  constexpr void reset() noexcept { *this = deformatter(format_); }

  // on_data is either on_data(id, bytes, n, offset) (runs of at most 15 bytes) or, when it can
  // be called with a const data_batch&, on_data(const data_batch&) (batches of up to
  // batch_frames frames, built in a buffer on the stack of decode_part; a batch never spans two
  // decode_part calls).
  template <class OnData, class OnError>
  constexpr void decode(const std::uint8_t* data, std::size_t size, OnData&& on_data,
                        OnError&& on_error) noexcept {
    decode_part(data, size, on_data, on_error);
    decode_end(on_data, on_error);
  }

  template <class OnData, class OnError>
  constexpr void decode_part(const std::uint8_t* data, std::size_t size, OnData&& on_data,
                             OnError&& on_error) noexcept {
    if constexpr (std::is_invocable_v<OnData&, const data_batch&>) {
      batch_out<OnData> out(on_data);
      out.per_frame = format_ != frame_format::memory_aligned;
      if (format_ == frame_format::memory_aligned) aligned_batches(data, size, out, on_error);
      else ports(data, size, out, on_error);
      out.flush(*this);
    } else {
      run_out<OnData> out(on_data);
      if (format_ == frame_format::memory_aligned) aligned(data, size, out, on_error);
      else ports(data, size, out, on_error);
    }
  }

  template <class OnData, class OnError>
  constexpr void decode_end(OnData&& on_data, OnError&& on_error) noexcept {
    (void)on_data;
    if (!synced_ && skipped_ != 0) on_error(diagnostic{error_code::unsynchronized, skip_at_, skipped_});
    skipped_ = 0;
    end_episode(on_error);  // in stream order: the dropped data came before the cut frame
    // TPIU: a half-word begun, or FF FF held as the first half of a possible FSYNC, count too.
    const std::uint64_t cut = have_ + pending_ + (half_ff_ff_ ? 2u : 0u);
    if (cut != 0) {
      const std::uint64_t at = half_ff_ff_ ? held_at_ : have_ ? frame_at_ : pending_at_[0];
      on_error(diagnostic{error_code::truncated_frame, at, cut});
    }
    have_ = pending_ = 0;
    half_ff_ff_ = false;
  }

 private:
  // Data dropped since `at` (before the first ID byte, under ID 0, or under a reserved ID),
  // reported at the next ID change, barrier or end of stream.
  struct episode {
    bool open = true;
    error_code code = error_code::no_id_data;
    std::uint64_t at = 0, dropped = 0;
  };

  // ---- where unpacked data goes -----------------------------------------------------------
  // Both take a frame's data as segments of the unpacked frame u (detail::unpacked(): the frame in two
  // words, even data bytes with their bit 0 restored): bytes [pos, end) and, when `extra` is
  // not 0, byte `extra` after them (a delayed ID change's byte 2k + 1). Each copies 16 bytes
  // (the segment and what follows it; the buffers have room) and counts only the segment.

  // Runs: one on_data call per run of a frame (a frame without ID bytes: one 15-byte run).
  template <class OnData>
  struct run_out {
    constexpr explicit run_out(OnData& f) noexcept : on_data(f) {}
    OnData& on_data;
    std::uint8_t buf[2 * frame_size];
    std::size_t n = 0;
    std::uint64_t at = 0;

    constexpr void begin_frame(deformatter&, std::uint64_t) noexcept {}
    constexpr void whole(deformatter& d, const detail::frame_words& u, std::uint64_t frame_at) noexcept {
      u.store(buf);  // byte 15 (the auxiliary byte) not passed on
      on_data(d.id_, static_cast<const std::uint8_t*>(buf), std::size_t{15}, frame_at);
    }
    constexpr void append(deformatter&, const detail::frame_words& u, std::uint64_t frame_at, unsigned pos,
                          unsigned end, unsigned extra) noexcept {
      if (n == 0) at = frame_at + (end > pos ? pos : extra);
      u.shifted(pos).store(buf + n);
      n += end - pos;
      if (extra != 0) buf[n++] = u.byte(extra);
    }
    constexpr void flush(deformatter& d) noexcept {
      if (n == 0) return;
      on_data(d.id_, static_cast<const std::uint8_t*>(buf), n, at);
      n = 0;
    }
    constexpr void end_frame(deformatter& d) noexcept { flush(d); }
  };

  // Batches: frames' data gathered in `bytes` (with a mask per frame) until the trace ID
  // changes, batch_frames frames are held, something is reported, or decode_part returns.
  template <class OnData>
  struct batch_out {
    constexpr explicit batch_out(OnData& f) noexcept : on_data(f) {}  // the arrays: not zeroed
    OnData& on_data;
    bool per_frame = false;  // TPIU/DSTREAM: frames are not back to back; one frame a batch
    bool open = false;       // the current frame has its entry (its mask) in the batch
    std::size_t size = 0, frames = 0;
    std::uint64_t offset = 0;
    std::uint8_t first_segment = 0;
    std::uint16_t masks[batch_frames];
    std::uint8_t bytes[batch_frames * 15 + 2 * frame_size];

    constexpr void begin_frame(deformatter& d, std::uint64_t) noexcept {
      if (frames == batch_frames) flush(d);
      open = false;
    }
    constexpr void entry(deformatter& d, std::uint64_t frame_at) noexcept {
      if (frames != 0 && frame_at != offset + frame_size * frames) flush(d);  // not the next frame
      if (frames == 0) {
        offset = frame_at;
        first_segment = d.segment_;
      }
      masks[frames++] = 0;
      open = true;
    }
    constexpr void whole(deformatter& d, const detail::frame_words& u, std::uint64_t frame_at) noexcept {
      entry(d, frame_at);
      u.store(bytes + size);  // byte 15: overwritten by the next frame, or not counted
      size += 15;
      masks[frames - 1] = whole_frame;
    }
    constexpr void append(deformatter& d, const detail::frame_words& u, std::uint64_t frame_at, unsigned pos,
                          unsigned end, unsigned extra) noexcept {
      if (!open) entry(d, frame_at);
      u.shifted(pos).store(bytes + size);
      size += end - pos;
      bytes[size] = u.byte(extra);  // counted only if extra != 0 (no branch)
      const unsigned has_extra = extra != 0 ? 1u : 0u;
      size += has_extra;
      const unsigned m = (((1u << end) - 1u) & ~((1u << pos) - 1u)) | (has_extra << extra);
      masks[frames - 1] = static_cast<std::uint16_t>(masks[frames - 1] | m);
    }
    constexpr void flush(deformatter& d) noexcept {
      if (size != 0)
        on_data(data_batch{d.id_, static_cast<const std::uint8_t*>(bytes), size, offset,
                           static_cast<const std::uint16_t*>(masks), frames, first_segment});
      size = frames = 0;
      open = false;
    }
    constexpr void end_frame(deformatter& d) noexcept {
      open = false;
      if (per_frame) flush(d);
    }
  };

  // ---- memory-aligned frames ----------------------------------------------------------------
  // A frame split across calls: tops up frame_ from data (advancing i) and, once whole,
  // deformats it. False while it is still incomplete (all of data went into it).
  template <class Out, class OnError>
  constexpr bool complete_split_frame(const std::uint8_t* data, std::size_t size, std::size_t& i,
                                      Out& out, OnError& on_error) noexcept {
    if (have_ == 0) return true;
    while (have_ < frame_size && i < size) frame_[have_++] = data[i++];
    offset_ += i;
    if (have_ < frame_size) return false;
    have_ = 0;
    aligned_frame(frame_, frame_at_, out, on_error);
    return true;
  }

  // Runs: whole frames straight from the input, a split one through frame_.
  template <class Out, class OnError>
  TRACECODEC_HOT constexpr void aligned(const std::uint8_t* data, std::size_t size, Out& out,
                                        OnError& on_error) noexcept {
    std::size_t i = 0;
    if (!complete_split_frame(data, size, i, out, on_error)) return;
    for (; size - i >= frame_size; i += frame_size, offset_ += frame_size)
      aligned_frame(data + i, offset_, out, on_error);
    keep_tail(data, i, size);
  }

  // Batches: while the trace ID is valid, frames without ID bytes, and frames whose ID bytes
  // all repeat the current ID, are unpacked into the batch by one loop (same_source_quads,
  // same_source_pairs, then same_source_frames with the block path, else the scalar loop). An
  // ID change, and data of no valid source, go to change_blocks with the block path, else to
  // frame_with_ids / aligned_frame; a barrier goes through aligned_frame.
  template <class Out, class OnError>
  TRACECODEC_HOT constexpr void aligned_batches(const std::uint8_t* data, std::size_t size, Out& out,
                                                OnError& on_error) noexcept {
    std::size_t i = 0;
    if (!complete_split_frame(data, size, i, out, on_error)) return;
    const std::uint64_t base = offset_ - i;  // input offset of data[0]
#if TRACECODEC_DEFORMAT_BLOCKS
    bool blocks = false;  // (not a const bool: its initializer would count as constant-evaluated)
    if (!std::is_constant_evaluated()) blocks = detail::have_block_unpack();
#endif
#if TRACECODEC_DEFORMAT_AVX512
    const bool quads = blocks && detail::have_quad_unpack();
#endif
#if TRACECODEC_DEFORMAT_AVX2
    const bool pairs = blocks && detail::have_pair_unpack();
#endif
    while (size - i >= frame_size) {
      if (known_ && valid_trace_id(id_)) {
        if (out.frames == batch_frames) out.flush(*this);
        if (out.frames == 0) {
          out.offset = base + i;
          out.first_segment = 0;
        }
        const std::size_t room = batch_frames - out.frames;
        const std::size_t left = (size - i) / frame_size;
        const std::size_t n = room < left ? room : left;
        const unsigned id_byte = (unsigned{id_} << 1) | 1u;
        const std::uint8_t* f = data + i;
        std::uint8_t* to = out.bytes + out.size;
        std::uint16_t* masks = out.masks + out.frames;
        std::size_t j = 0;
#if TRACECODEC_DEFORMAT_BLOCKS
        if (blocks) {
#if TRACECODEC_DEFORMAT_AVX512
          if (quads) {
            j = detail::same_source_quads(f, n, static_cast<std::uint8_t>(id_byte), to, masks);
            f += frame_size * j;
          }
#endif
#if TRACECODEC_DEFORMAT_AVX2
          if (pairs) {
            const std::size_t k =
                detail::same_source_pairs(f, n - j, static_cast<std::uint8_t>(id_byte), to, masks + j);
            j += k;
            f += frame_size * k;
          }
#endif
          const std::size_t k = detail::same_source_frames(f, n - j, static_cast<std::uint8_t>(id_byte), to, masks + j);
          j += k;
          f += frame_size * k;
        } else
#endif
        for (; j < n; ++j, f += frame_size) {
          const std::uint64_t w0 = detail::load64(f), w1 = detail::load64(f + 8);
          detail::frame_words u = detail::unpacked(w0, w1, f[15]);
          if (((w0 | w1) & detail::even_lsbs) == 0) {
            u.store(to);
            to += 15;
            masks[j] = whole_frame;
            continue;
          }
          // ID bytes: if each names the current source again, the frame's other bytes are all
          // its data (at once or delayed makes no difference), closed up over the ID bytes.
          const unsigned ids = detail::gather(w0) | detail::gather(w1) << 4;
          unsigned mask = whole_frame, removed = 0;
          bool same = true;
          for (unsigned b = ids; b != 0; b &= b - 1) {
            const unsigned k = detail::lowest_bit(b);
            same = same && f[2 * k] == id_byte;
            u = u.without(2 * k - removed++);
            mask &= ~(1u << (2 * k));
          }
          if (!same) break;  // an ID change (or a barrier)
          u.store(to);
          to += 15 - removed;
          masks[j] = static_cast<std::uint16_t>(mask);
        }
        out.frames += j;
        out.size = static_cast<std::size_t>(to - out.bytes);
        i += frame_size * j;
        if (j == n) continue;  // the batch is full, or the input ends
        if (f[0] != 0xFF || !barrier_frame(f)) {  // an ID change: straight to frame_with_ids
#if TRACECODEC_DEFORMAT_BLOCKS
          if (blocks) {
            i = change_blocks(data, i, size, base, out, on_error);
            continue;
          }
#endif
          const std::uint64_t w0 = detail::load64(f), w1 = detail::load64(f + 8);
          frame_with_ids(f, base + i, detail::unpacked(w0, w1, f[15]),
                         detail::gather(w0) | detail::gather(w1) << 4, out, on_error);
          i += frame_size;
          continue;
        }
      }
#if TRACECODEC_DEFORMAT_BLOCKS
      else if (blocks) {  // data of no valid source (null ID padding, ...) up to its next ID byte
        i = change_blocks(data, i, size, base, out, on_error);
        continue;
      }
#endif
      aligned_frame(data + i, base + i, out, on_error);
      i += frame_size;
    }
    offset_ = base + i;
    keep_tail(data, i, size);
  }

#if TRACECODEC_DEFORMAT_BLOCKS
  static constexpr std::uint8_t no_source = 0xFF;  // not a 7-bit trace ID, nor valid

  // Where the current source's run began in a block: in frame `frame`, at blk.bytes[at], with
  // its OpenCSD segment number (data_batch::first_segment). blk.masks[frame] holds only the
  // run's bytes of that frame: each cut leaves a frame's mask to the run after it.
  struct run_start {
    std::size_t frame;
    std::size_t at;
    std::uint8_t number;
  };

  // Batches, with the block path, from a frame the batch loop stops at (an ID change, or data of no
  // valid source): blocks of up to batch_frames frames, each unpacked by detail::unpack_block
  // into one buffer in stream order whatever their sources, then cut at the ID bytes of the
  // frames that have them into a batch per run of a source. The run still open at the end of a
  // block moves to the start of the next while the source keeps changing; after a block
  // without a change it goes back into `out` and the batch loop goes on with it (the batch in
  // `out` on entry, the current source's, is the first block's start). So batches end where the
  // scalar path ends them. Returns the data index after the last block.
  template <class OnData, class OnError>
  constexpr std::size_t change_blocks(const std::uint8_t* data, std::size_t i, std::size_t size,
                                      std::uint64_t base, batch_out<OnData>& out, OnError& on_error) noexcept {
    detail::frame_block blk;
    for (std::uint8_t& b : blk.ids) b = 0;  // read eight frames at a time, taken or not
    std::size_t frames = 0, len = 0;  // in blk (the carried run's first)
    std::uint64_t first_at = base + i;  // input offset of blk's frame 0
    run_start open{0, 0, 0};            // where the current source's run began in blk
    // known_ and id_ as one local (no_source: not known): the consumer's stores may alias them.
    std::uint8_t source = known_ ? id_ : no_source;
    episode ep = episode_;  // a local for the same reason (put_back stores both on return)
    if (out.frames != 0) {  // the batch loop's batch (the current source's) goes on in blk
      copy_run(blk.bytes, blk.masks, out.bytes, out.masks, out.size, out.frames);
      frames = out.frames;
      len = out.size;
      first_at = out.offset;
      open.number = out.first_segment;
      out.size = out.frames = 0;
    }
    for (;;) {
      const std::size_t room = batch_frames - frames, left = (size - i) / frame_size;
      const std::size_t n = frames + (room < left ? room : left);
      // blk frame j is data[frame0 + frame_size * j] (frame0 wraps below 0 for carried frames)
      const std::size_t frame0 = i - frame_size * frames;
      // A new frame j's bytes begin at at0 + 15 * j: 15 for each new frame before it, less their
      // ID bytes (taken off as the loop below passes them, its own too: then at0 + 15 * j is
      // the loop's `origin`).
      std::size_t at0 = len - 15 * frames;
      const std::size_t first_new = frames;  // (the frames carried over have no ID byte to cut at)
      detail::unpack_block(data + i, frames, n, blk, len);
      i += frame_size * (n - frames);
      frames = n;
      bool changed = false;
      // The new frames' ID bytes in stream order, eight frames (a word of blk.ids) at a time:
      // bit 8m + k of the word is byte 2k of its frame m.
      for (std::size_t w = first_new & ~std::size_t{7}; w < n; w += 8) {
        std::uint64_t bits = detail::load64(blk.ids + w);
        if (w < first_new) bits &= ~0ull << (8 * (first_new - w));
        if (n - w < 8) bits &= (1ull << (8 * (n - w))) - 1;
        for (; bits != 0; bits &= bits - 1, --at0) {
          const unsigned k = static_cast<unsigned>(__builtin_ctzll(bits));
          const std::size_t j = w + k / 8;
          const unsigned p = 2 * (k % 8);
          const std::uint8_t* f = data + (frame0 + frame_size * j);
          // The frame's data bytes q between the ID bytes passed and byte p are at
          // blk.bytes[origin + q]; byte p + 1 is at origin + p.
          const std::size_t origin = at0 + 15 * j;
          if (p == 0 && f[0] == 0xFF && barrier_frame(f)) {  // its bytes are not data: skipped
            pass_on(blk, open, j, 0, origin, first_at, source, ep, out);
            barrier(ep, first_at + frame_size * j, on_error);
            source = no_source;
            open = run_start{j + 1, origin + 7, 0};  // after its 7 odd bytes
            changed = true;
            bits &= ~(0xFEull << k);  // its other 7 ID bytes (every even byte): passed
            at0 -= 7;
            continue;
          }
          const std::uint8_t id = static_cast<std::uint8_t>(f[p] >> 1);
          if (id == source) continue;  // the same source again: its run goes on
          // aux bit p / 2 = 1: the change takes effect after byte p + 1 (still the old source's)
          // (aux bit 7 is for byte 14, which has no byte after it)
          const unsigned delayed = ((f[15] & 0x7Fu) >> (p / 2)) & 1u;
          const std::size_t to_at = origin + p + delayed;
          // OpenCSD's numbering (as frame_with_ids): the new run begins at this ID byte if the
          // old source got bytes in this frame, else it takes over that run's number. A run
          // begun in an earlier frame got bytes here unless p is 0 and the change is not delayed
          // (the number is 0 = p either way).
          const std::uint8_t number =
              open.frame == j && to_at == open.at ? open.number : static_cast<std::uint8_t>(p);
          // bytes 0 to p + delayed (byte p, the ID byte, is in no mask)
          pass_on(blk, open, j, (2u << (p + delayed)) - 1u, to_at, first_at, source, ep, out);
          switch_to(ep, id, first_at + frame_size * j + p, on_error);
          source = id;
          open = run_start{j, to_at, number};
          changed = true;
        }
      }
      if (open.frame < frames && blk.masks[open.frame] == 0)
        open = run_start{open.frame + 1, open.at, 0};  // it begins with the next frame
      if (!valid_trace_id(source)) {
        ep.dropped += len - open.at;
        if (size - i < frame_size) return put_back(source, ep, i);
        frames = len = 0;
        first_at = base + i;
        open = run_start{0, 0, 0};
        continue;
      }
      if (changed && size - i >= frame_size && frames - open.frame < batch_frames) {
        move_run(blk, open, frames, len);  // to the start of the next block
        first_at += frame_size * open.frame;
        frames -= open.frame;
        len -= open.at;
        open = run_start{0, 0, open.number};
        continue;
      }
      if (len > open.at) {  // the open run: to `out`, the batch loop's
        copy_run(out.bytes, out.masks, blk.bytes + open.at, blk.masks + open.frame, len - open.at,
                 frames - open.frame);
        out.size = len - open.at;
        out.frames = frames - open.frame;
        out.offset = first_at + frame_size * open.frame;
        out.first_segment = open.number;
        out.open = false;
      }
      return put_back(source, ep, i);
    }
  }
  // change_blocks' locals back in the members; returns i.
  constexpr std::size_t put_back(std::uint8_t source, const episode& ep, std::size_t i) noexcept {
    known_ = source != no_source;
    if (known_) id_ = source;
    episode_ = ep;
    return i;
  }

  // A run's n bytes and its frames' masks (the destination may be the start of the same
  // buffers).
  static constexpr void copy_run(std::uint8_t* to_bytes, std::uint16_t* to_masks, const std::uint8_t* bytes,
                                 const std::uint16_t* masks, std::size_t n, std::size_t frames) noexcept {
    detail::copy_bytes(to_bytes, bytes, n);
    for (std::size_t j = 0; j < frames; ++j) to_masks[j] = masks[j];
  }
  // The open run moved to the start of blk.
  static constexpr void move_run(detail::frame_block& blk, const run_start& open, std::size_t frames,
                                 std::size_t len) noexcept {
    copy_run(blk.bytes, blk.masks, blk.bytes + open.at, blk.masks + open.frame, len - open.at,
             frames - open.frame);
  }

  // The current source's run from `from` to blk.bytes[to_at]: a batch, or counted as dropped.
  // Its last bytes are frame `last`'s bytes of `below` (none: it ended with the frame before);
  // frame `last`'s mask keeps the others.
  template <class Out>
  constexpr void pass_on(detail::frame_block& blk, const run_start& from, std::size_t last, unsigned below,
                         std::size_t to_at, std::uint64_t first_at, std::uint8_t source, episode& ep,
                         Out& out) noexcept {
    const unsigned m = blk.masks[last];
    if (to_at > from.at) {
      if (valid_trace_id(source)) {
        std::size_t first = from.frame;
        std::uint8_t number = from.number;
        if (blk.masks[first] == 0) {  // the run began with the next frame
          ++first;
          number = 0;
        }
        std::size_t end = last + 1;
        if ((m & below) == 0) --end;  // it ended with the frame before
        blk.masks[last] = static_cast<std::uint16_t>(m & below);
        out.on_data(data_batch{source, blk.bytes + from.at, to_at - from.at, first_at + frame_size * first,
                               blk.masks + first, end - first, number});
      } else {
        ep.dropped += to_at - from.at;
      }
    }
    blk.masks[last] = static_cast<std::uint16_t>(m & ~below);
  }
#endif

  // The bytes of a frame the input ends inside, kept in frame_ for the next decode_part.
  constexpr void keep_tail(const std::uint8_t* data, std::size_t i, std::size_t size) noexcept {
    if (i < size) {
      frame_at_ = offset_;
      while (i < size) frame_[have_++] = data[i++];
      offset_ += have_;
    }
  }

  template <class Out, class OnError>
  TRACECODEC_HOT constexpr void aligned_frame(const std::uint8_t* f, std::uint64_t at, Out& out,
                                              OnError& on_error) noexcept {
    if (f[0] == 0xFF && barrier_frame(f)) {
      out.flush(*this);  // what came before, before the notices
      barrier(at, on_error);
      return;
    }
    frame(f, at, out, on_error);
  }
  // A barrier frame at `at`: reported, and the trace ID forgotten (data before the next ID
  // byte has no known source).
  template <class OnError>
  constexpr void barrier(std::uint64_t at, OnError& on_error) noexcept {
    barrier(episode_, at, on_error);
    known_ = false;
  }
  template <class OnError>
  static constexpr void barrier(episode& e, std::uint64_t at, OnError& on_error) noexcept {
    end_episode(e, on_error);
    on_error(diagnostic{error_code::barrier, at, frame_size});
    e = episode{true, error_code::no_id_data, at + frame_size, 0};
  }
  static constexpr bool barrier_frame(const std::uint8_t* f) noexcept {
    for (unsigned k = 0; k < frame_size; k += 4)
      if (f[k] != 0xFF || f[k + 1] != 0xFF || f[k + 2] != 0xFF || f[k + 3] != 0x7F) return false;
    return true;
  }

  // ---- TPIU stream bytes (offsets count every input byte, DSTREAM footers included) ---------
  template <class Out, class OnError>
  constexpr void ports(const std::uint8_t* data, std::size_t size, Out& out, OnError& on_error) noexcept {
    for (std::size_t i = 0; i < size;) {
      if (format_ == frame_format::dstream) {
        const std::size_t in_block = static_cast<std::size_t>(offset_ % dstream_block);
        if (in_block >= dstream_stream) {  // the footer: not stream bytes
          const std::size_t skip = dstream_block - in_block;
          const std::size_t n = size - i < skip ? size - i : skip;
          offset_ += n;
          i += n;
          continue;
        }
        const std::size_t room = dstream_stream - in_block;
        const std::size_t n = size - i < room ? size - i : room;
        port(data + i, n, out, on_error);
        i += n;
        continue;
      }
      port(data + i, size - i, out, on_error);
      break;
    }
  }

  template <class Out, class OnError>
  constexpr void port(const std::uint8_t* data, std::size_t size, Out& out,
                      OnError& on_error) noexcept {
    for (std::size_t i = 0; i < size; ++i, ++offset_) port_byte(data[i], out, on_error);
  }

  template <class Out, class OnError>
  constexpr void port_byte(std::uint8_t b, Out& out, OnError& on_error) noexcept {
    // The last four stream bytes, for FSYNC (FF FF FF 7F); a sync's bytes are not frame bytes.
    sync_window_ = (sync_window_ << 8) | b;
    ++window_fill_;
    if (!synced_) {
      if (window_fill_ >= 4 && sync_window_ == fsync_bytes) {
        const std::uint64_t fsync_at = offset_ - 3;  // skipped: what came before the FSYNC
        if (skipped_ != 0 && fsync_at > skip_at_)
          on_error(diagnostic{error_code::unsynchronized, skip_at_, fsync_at - skip_at_});
        skipped_ = 0;
        synced_ = true;
        pending_ = 0;
        have_ = 0;
        return;
      }
      if (skipped_++ == 0) skip_at_ = offset_;
      return;
    }
    // Synchronized: bytes go to the frame in half-words; FF FF FF 7F between frames (at a
    // frame boundary) is an FSYNC, FF 7F in a half-word is an HSYNC; both are dropped.
    pending_bytes_[pending_++] = b;
    pending_at_[pending_ - 1] = offset_;
    if (pending_ < 2) return;
    pending_ = 0;
    const std::uint8_t lo = pending_bytes_[0], hi = pending_bytes_[1];
    if (have_ == 0 && half_ff_ff_) {  // the first half of a candidate FSYNC was FF FF
      half_ff_ff_ = false;
      if (lo == 0xFF && hi == 0x7F) return;  // FSYNC
      lose_alignment(held_at_, 4, on_error);
      return;
    }
    if (have_ == 0 && lo == 0xFF && hi == 0xFF) {
      half_ff_ff_ = true;
      held_at_ = pending_at_[0];
      return;
    }
    if (lo == 0xFF && hi == 0x7F) return;  // HSYNC
    if (lo == 0xFF) {  // no frame has FF at an even byte (ID 0x7F is never used)
      lose_alignment(have_ ? frame_at_ : pending_at_[0], have_ + 2, on_error);
      return;
    }
    if (have_ == 0) frame_at_ = pending_at_[0];
    frame_[have_++] = lo;
    frame_[have_++] = hi;
    if (have_ == frame_size) {
      have_ = 0;
      frame(frame_, frame_at_, out, on_error);
    }
  }

  // TPIU: the frame begun so far is dropped and the next FSYNC searched for (the last stream
  // bytes, in sync_window_, may already be the start of it).
  template <class OnError>
  TRACECODEC_OUT_OF_LINE constexpr void lose_alignment(std::uint64_t at, std::uint64_t length,
                                                      OnError& on_error) noexcept {
    on_error(diagnostic{error_code::bad_sync, at, length});
    have_ = 0;
    synced_ = false;
    skipped_ = 0;
  }

  template <class OnError>
  constexpr void end_episode(OnError& on_error) noexcept { end_episode(episode_, on_error); }
  template <class OnError>
  static constexpr void end_episode(episode& e, OnError& on_error) noexcept {
    if (!e.open) return;
    e.open = false;
    if (e.code == error_code::reserved_id || e.dropped != 0) on_error(diagnostic{e.code, e.at, e.dropped});
  }

  // One 16-byte frame at input offset `at`. Most frames hold no ID byte: their 15 data bytes
  // are unpacked a word at a time and passed on whole.
  template <class Out, class OnError>
  TRACECODEC_HOT constexpr void frame(const std::uint8_t* f, std::uint64_t at, Out& out,
                                      OnError& on_error) noexcept {
    const std::uint64_t w0 = detail::load64(f), w1 = detail::load64(f + 8);
    if (((w0 | w1) & detail::even_lsbs) == 0 && known_) {
      if (!valid_trace_id(id_)) {
        episode_.dropped += 15;
        return;
      }
      segment_ = 0;
      out.begin_frame(*this, at);
      out.whole(*this, detail::unpacked(w0, w1, f[15]), at);
      out.end_frame(*this);
      return;
    }
    frame_with_ids(f, at, detail::unpacked(w0, w1, f[15]), detail::gather(w0) | detail::gather(w1) << 4, out, on_error);
  }

  // A frame with ID bytes (bit k of id_bits: byte 2k), or any frame before the first ID byte:
  // its data split at the ID bytes into segments of the unpacked frame.
  template <class Out, class OnError>
  constexpr void frame_with_ids(const std::uint8_t* f, std::uint64_t at, const detail::frame_words& u,
                                unsigned id_bits, Out& out, OnError& on_error) noexcept {
    const unsigned aux = f[15];
    out.begin_frame(*this, at);
    unsigned pos = 0;
    segment_ = 0;       // the current source's segment began with the frame
    bool took = false;  // the current segment has bytes
    for (; id_bits != 0; id_bits &= id_bits - 1) {
      const unsigned k = detail::lowest_bit(id_bits), p = 2 * k;
      // aux bit k = 1: the change takes effect after byte 2k + 1 (still the current source's)
      const bool delayed = ((aux >> k) & 1u) != 0 && k < 7;
      took = take(out, u, at, pos, p, delayed ? p + 1 : 0) || took;
      const std::uint8_t id = static_cast<std::uint8_t>(f[p] >> 1);
      if (id != id_ || !known_) {
        out.flush(*this);
        switch_to(id, at + p, on_error);
        // OpenCSD's numbering: a segment begins at this ID byte, unless the one before it got
        // no bytes (then the new source takes over that one's start).
        if (took) segment_ = static_cast<std::uint8_t>(p);
        took = false;
      }
      pos = p + (delayed ? 2 : 1);
    }
    take(out, u, at, pos, 15, 0);
    out.end_frame(*this);
  }

  // Bytes [pos, end) and byte `extra` (if not 0) of the unpacked frame: the current source's.
  // True when there were any.
  template <class Out>
  constexpr bool take(Out& out, const detail::frame_words& u, std::uint64_t at, unsigned pos, unsigned end,
                      unsigned extra) noexcept {
    const unsigned n = end - pos + (extra != 0 ? 1u : 0u);
    if (n == 0) return false;
    if (!known_ || !valid_trace_id(id_)) {
      episode_.dropped += n;
      return true;
    }
    out.append(*this, u, at, pos, end, extra);
    return true;
  }

  template <class OnError>
  constexpr void switch_to(std::uint8_t id, std::uint64_t at, OnError& on_error) noexcept {
    switch_to(episode_, id, at, on_error);
    known_ = true;
    id_ = id;
  }
  // The episode's part of a change to source `id` at input offset `at`.
  template <class OnError>
  static constexpr void switch_to(episode& e, std::uint8_t id, std::uint64_t at, OnError& on_error) noexcept {
    end_episode(e, on_error);
    if (!valid_trace_id(id))
      e = episode{true, id == null_trace_id ? error_code::null_id_data : error_code::reserved_id, at, 0};
  }

  static constexpr std::uint32_t fsync_bytes = 0xFFFFFF7Fu;  // FF FF FF 7F in stream order

  frame_format format_;
  bool synced_;            // frame alignment known (always for memory-aligned frames)
  bool known_ = false;     // an ID byte has been seen
  std::uint8_t id_ = 0;    // the current trace ID
  std::uint8_t segment_ = 0;  // in the current frame: where the current source's segment began
  std::uint8_t frame_[frame_size]{};
  std::size_t have_ = 0;   // bytes of frame_ filled
  std::uint64_t frame_at_ = 0;
  std::uint64_t offset_ = 0;  // input offset of the next byte
  episode episode_;
  // TPIU: FSYNC search and half-word assembly.
  std::uint32_t sync_window_ = 0;
  std::uint64_t window_fill_ = 0;
  std::uint64_t skipped_ = 0, skip_at_ = 0;
  std::uint8_t pending_bytes_[2]{};
  std::uint64_t pending_at_[2]{};
  unsigned pending_ = 0;
  bool half_ff_ff_ = false;
  std::uint64_t held_at_ = 0;
};

}  // namespace tracecodec::coresight
