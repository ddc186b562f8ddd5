// SPDX-License-Identifier: Apache-2.0
// Bit packing of te_inst payloads: fields are packed in transmission order, each multi-bit
// field LSB first, bit 0 of the payload being bit 0 of its first byte. The reader sign-extends
// past the last received bit, which is how sign-compressed payloads are restored.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tracecodec::etrace {

// A payload of at most 31 bytes is assembled in a 32-byte buffer.
inline constexpr unsigned payload_buffer_size = 32;

class bit_writer {
 public:
  // `buf` must hold payload_buffer_size zero bytes.
  constexpr explicit bit_writer(std::uint8_t* buf) noexcept : buf_(buf) {}

  // Appends the low `n` bits of `v` (n <= 64). Bits beyond the buffer are dropped (callers
  // validate the total against the parameters first).
  constexpr void put(std::uint64_t v, unsigned n) noexcept {
    for (unsigned done = 0; done < n;) {
      const unsigned at = pos_ >> 3, off = pos_ & 7u;
      const unsigned take = (8 - off) < (n - done) ? (8 - off) : (n - done);
      if (at < payload_buffer_size) {
        const unsigned chunk = static_cast<unsigned>((v >> done) & ((1u << take) - 1u));
        buf_[at] = static_cast<std::uint8_t>(buf_[at] | (chunk << off));
      }
      pos_ += take;
      done += take;
    }
    if (n != 0) last_ = ((v >> (n - 1)) & 1u) != 0;
  }
  constexpr unsigned position() const noexcept { return pos_; }
  // The most recently written bit (false before any).
  constexpr bool last_bit() const noexcept { return last_; }

 private:
  std::uint8_t* buf_;
  unsigned pos_ = 0;
  bool last_ = false;
};

class bit_reader {
 public:
  // Reads `size` bytes; every bit at or after 8 * size reads as the last byte's bit 7.
  constexpr bit_reader(const std::uint8_t* data, std::size_t size) noexcept
      : data_(data), size_(size), fill_(size != 0 && (data[size - 1] & 0x80u) ? 0xffu : 0x00u) {}

  // The `n` bits (n <= 64) at bit position `at`, without moving.
  constexpr std::uint64_t peek(unsigned at, unsigned n) const noexcept {
    std::uint64_t v = 0;
    for (unsigned done = 0; done < n;) {
      const std::size_t byte = (at + done) >> 3;
      const unsigned off = (at + done) & 7u;
      const unsigned take = (8 - off) < (n - done) ? (8 - off) : (n - done);
      const unsigned b = byte < size_ ? data_[byte] : fill_;
      v |= static_cast<std::uint64_t>((b >> off) & ((1u << take) - 1u)) << done;
      done += take;
    }
    return v;
  }
  constexpr std::uint64_t get(unsigned n) noexcept {
    const std::uint64_t v = peek(pos_, n);
    pos_ += n;
    return v;
  }
  constexpr bool bit(unsigned at) const noexcept { return peek(at, 1) != 0; }
  constexpr unsigned position() const noexcept { return pos_; }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  unsigned fill_;
  unsigned pos_ = 0;
};

// Mask of the low `n` bits (n <= 64).
constexpr std::uint64_t low_bits(unsigned n) noexcept {
  return n >= 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << n) - 1);
}

}  // namespace tracecodec::etrace
