// SPDX-License-Identifier: Apache-2.0
// The program image the analyzer reads instructions through (D9.5 ProgramImage): memory
// regions the caller owns (zero-copy), optionally tagged with the memory space they belong to,
// and a callback for memory that no region covers (tools that fetch on demand, as perf reads
// DSOs and kcore). Nothing is copied except what the callback delivers, into a small buffer.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tracecodec::ete {

// Memory spaces, as bits (a region may belong to several): Exception level and security
// state, as OpenCSD's ocsd_mem_space_acc_t has them, with the RME states.
namespace memory_space {
inline constexpr std::uint8_t el1s = 0x01;   // EL0/EL1 Secure
inline constexpr std::uint8_t el1n = 0x02;   // EL0/EL1 Non-secure
inline constexpr std::uint8_t el2n = 0x04;   // EL2 Non-secure
inline constexpr std::uint8_t el3 = 0x08;    // EL3 (Secure, or Root with RME)
inline constexpr std::uint8_t el2s = 0x10;   // EL2 Secure
inline constexpr std::uint8_t el1r = 0x20;   // EL0/EL1 Realm
inline constexpr std::uint8_t el2r = 0x40;   // EL2 Realm
inline constexpr std::uint8_t root = 0x80;   // EL3 Root (RME)
inline constexpr std::uint8_t secure = el1s | el2s | el3;
inline constexpr std::uint8_t non_secure = el1n | el2n;
inline constexpr std::uint8_t realm = el1r | el2r;
inline constexpr std::uint8_t any = 0xff;

// The space a PE state executes in: Exception level, NS and NSE (context.ns, context.nse).
constexpr std::uint8_t of(unsigned el, bool ns, bool nse) noexcept {
  if (el == 3) return nse ? root : el3;
  if (nse) return ns ? (el == 2 ? el2r : el1r) : root;  // NSE=1 NS=0 below EL3: Root is EL3 only
  if (ns) return el == 2 ? el2n : el1n;
  return el == 2 ? el2s : el1s;
}
}  // namespace memory_space

// One piece of memory: `size` bytes at `address`, in the spaces `space` names.
struct memory_region {
  std::uint64_t address = 0;
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
  std::uint8_t space = memory_space::any;
};

// Reads up to `size` bytes at `address` in `space` into `out`; returns how many it read
// (0: nothing there). Called only for addresses no region covers.
using memory_reader = std::size_t (*)(void* context, std::uint64_t address, std::uint8_t space,
                                      std::uint8_t* out, std::size_t size) noexcept;

class program_image {
 public:
  // Bytes the callback form reads at a time (a view from it is at most this long).
  static constexpr std::size_t fetch_size = 256;

  constexpr program_image() noexcept = default;
  // The regions stay the caller's and must outlive the image; any order; where regions
  // overlap, the first listed wins.
  constexpr program_image(const memory_region* regions, std::size_t count) noexcept
      : regions_(regions), count_(count) {}
  constexpr void set_reader(memory_reader reader, void* context) noexcept {
    reader_ = reader;
    reader_context_ = context;
    fetched_size_ = 0;
  }

  struct view {
    const std::uint8_t* data = nullptr;
    std::size_t size = 0;  // bytes readable from data in one piece; 0: not accessible
  };

  // The bytes at `address` in `space`, as far as they continue in one piece (a view from a
  // later region stops where an earlier one it overlaps begins: the first listed wins). A view
  // from the callback stays valid until the next find().
  constexpr view find(std::uint64_t address, std::uint8_t space) noexcept {
    // The last winner serves [cached_first_, cached_last_] in cached_space_: no region listed
    // before it covers any address there (a cache keyed on the region alone would let it
    // win over an earlier region, or over one for which only the space differs).
    if (cached_ && space == cached_space_ && address >= cached_first_ && address <= cached_last_)
      return in(regions_[cached_index_], address, cached_last_);
    for (std::size_t i = 0; i < count_; ++i) {
      if (!covers(regions_[i], address, space)) continue;
      // Regions listed before i cover nothing at `address`: each lies wholly below or
      // wholly above it, and bounds the window where i wins.
      std::uint64_t first = regions_[i].address, last = last_byte(regions_[i]);
      for (std::size_t j = 0; j < i; ++j) {
        const memory_region& r = regions_[j];
        if ((r.space & space) == 0 || r.size == 0) continue;
        if (r.address > address) {
          if (r.address - 1 < last) last = r.address - 1;
        } else if (last_byte(r) >= first) {
          first = last_byte(r) + 1;  // last_byte(r) < address here
        }
      }
      cached_ = true;
      cached_index_ = i;
      cached_space_ = space;
      cached_first_ = first;
      cached_last_ = last;
      return in(regions_[i], address, last);
    }
    if (reader_ == nullptr) return {};
    if (fetched_size_ != 0 && fetched_space_ == space && address >= fetched_address_ &&
        address - fetched_address_ < fetched_size_)
      return {fetched_ + (address - fetched_address_),
              static_cast<std::size_t>(fetched_size_ - (address - fetched_address_))};
    // Ask only for the bytes below the next region in this space, which wins over the
    // callback's memory.
    std::size_t want = fetch_size;
    for (std::size_t i = 0; i < count_; ++i) {
      const memory_region& r = regions_[i];
      if ((r.space & space) != 0 && r.size != 0 && r.address > address &&
          r.address - address < want)
        want = static_cast<std::size_t>(r.address - address);
    }
    fetched_size_ = reader_(reader_context_, address, space, fetched_, want);
    if (fetched_size_ > want) fetched_size_ = 0;  // a reader that claims too much
    fetched_address_ = address;
    fetched_space_ = space;
    return {fetched_, fetched_size_};
  }

  // Forgets what the callback delivered (call when the memory behind it changed).
  constexpr void invalidate() noexcept { fetched_size_ = 0; }

 private:
  static constexpr bool covers(const memory_region& r, std::uint64_t address,
                               std::uint8_t space) noexcept {
    return (r.space & space) != 0 && address >= r.address && address - r.address < r.size;
  }
  // The region's last address (size > 0), saturated where it would wrap past 2^64.
  static constexpr std::uint64_t last_byte(const memory_region& r) noexcept {
    const std::uint64_t n = static_cast<std::uint64_t>(r.size) - 1;
    return n > UINT64_MAX - r.address ? UINT64_MAX : r.address + n;
  }
  // The bytes from `address` up to `last` (inclusive), within the region.
  static constexpr view in(const memory_region& r, std::uint64_t address,
                           std::uint64_t last) noexcept {
    const std::size_t at = static_cast<std::size_t>(address - r.address);
    std::size_t n = r.size - at;  // >= 1
    if (last - address < n - 1) n = static_cast<std::size_t>(last - address) + 1;
    return {r.data + at, n};
  }

  const memory_region* regions_ = nullptr;
  std::size_t count_ = 0;
  bool cached_ = false;
  std::size_t cached_index_ = 0;
  std::uint8_t cached_space_ = 0;
  std::uint64_t cached_first_ = 0;
  std::uint64_t cached_last_ = 0;
  memory_reader reader_ = nullptr;
  void* reader_context_ = nullptr;
  std::uint64_t fetched_address_ = 0;
  std::size_t fetched_size_ = 0;
  std::uint8_t fetched_space_ = 0;
  std::uint8_t fetched_[fetch_size]{};
};

}  // namespace tracecodec::ete
