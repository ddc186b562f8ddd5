// SPDX-License-Identifier: Apache-2.0
// Loads the program image of an ELF file (executable, shared object, kernel image) as memory
// regions for program-flow reconstruction: the file bytes of every PT_LOAD segment, at its
// link address or rebased, and the machine (AArch64 or Arm) so a tool can pick the
// instruction set. Little-endian ELF32 and ELF64. Every header field is checked against the
// file before it is used (a hostile file gets an error message, never an out-of-bounds
// read). Hosted code: errors are messages, no exception escapes (std::bad_alloc included).
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../ete/flow/image.hpp"
#include "ete/snapshot.hpp"  // read_bytes

namespace tracecodec::elf {

// e_machine values a trace tool tells apart.
inline constexpr std::uint16_t em_arm = 40;
inline constexpr std::uint16_t em_aarch64 = 183;

struct load_options {
  // Unset: each segment at its p_vaddr (link address). Set: every segment moved by the same
  // amount, so that the lowest PT_LOAD p_vaddr lands here (a position-independent image or
  // a shared object where the trace saw it mapped).
  std::optional<std::uint64_t> load_address;
  std::uint8_t space = ete::memory_space::any;  // the regions' memory spaces
  std::uint64_t max_file_size = std::uint64_t{1} << 32;  // a larger file is an error
};

// One PT_LOAD segment with file bytes (the zero-filled rest up to p_memsz is not included).
struct segment {
  std::uint64_t vaddr = 0;    // p_vaddr
  std::uint64_t address = 0;  // where it is placed: vaddr, or rebased
  std::uint64_t offset = 0;   // p_offset
  std::uint64_t memsz = 0;    // p_memsz
  std::uint32_t flags = 0;    // p_flags: 1 X, 2 W, 4 R
  std::vector<std::uint8_t> data;  // p_filesz bytes from p_offset
};

struct loaded {
  bool is64 = false;          // ELFCLASS64
  std::uint16_t type = 0;     // e_type: 2 executable, 3 shared object/PIE, ...
  std::uint16_t machine = 0;  // e_machine: em_aarch64, em_arm, ...
  std::uint64_t entry = 0;    // e_entry, moved with the segments when rebased
  std::vector<segment> segments;  // PT_LOAD with p_filesz > 0, in program header order
  // One region per segment, pointing into segments[i].data (a copy points at its own).
  std::vector<ete::memory_region> regions;
  std::string error;  // empty on success; on error everything else is empty

  loaded() = default;
  loaded(loaded&&) noexcept = default;
  loaded& operator=(loaded&&) noexcept = default;
  loaded(const loaded& o)
      : is64(o.is64), type(o.type), machine(o.machine), entry(o.entry), segments(o.segments),
        error(o.error) {
    point_regions(ete::memory_space::any);
    for (std::size_t i = 0; i < regions.size() && i < o.regions.size(); ++i)
      regions[i].space = o.regions[i].space;
  }
  loaded& operator=(const loaded& o) {
    if (this != &o) {
      loaded copy(o);
      *this = std::move(copy);
    }
    return *this;
  }
  ~loaded() = default;

  void point_regions(std::uint8_t space) {
    regions.clear();
    regions.reserve(segments.size());
    for (const segment& s : segments) regions.push_back({s.address, s.data.data(), s.data.size(), space});
  }
};

namespace detail {

inline std::uint64_t le(const std::uint8_t* p, unsigned n) {
  std::uint64_t v = 0;
  for (unsigned i = n; i-- > 0;) v = v << 8 | p[i];
  return v;
}

inline loaded fail(std::string message) {
  loaded r;
  r.error = std::move(message);
  return r;
}

inline std::string hex(std::uint64_t v) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), digits[v & 15]);
    v >>= 4;
  } while (v != 0);
  return "0x" + s;
}

}  // namespace detail

// Parses an ELF file held in memory; the segments' bytes are copied.
inline loaded parse(const std::uint8_t* data, std::size_t size, const load_options& opt = {}) {
  using detail::fail;
  using detail::hex;
  using detail::le;
  if (size < 16 || data[0] != 0x7f || data[1] != 'E' || data[2] != 'L' || data[3] != 'F')
    return fail("not an ELF file");
  const bool is64 = data[4] == 2;
  if (data[4] != 1 && data[4] != 2)
    return fail("unsupported ELF class " + std::to_string(data[4]) + " (neither ELF32 nor ELF64)");
  if (data[5] == 2) return fail("big-endian ELF not supported");
  if (data[5] != 1) return fail("bad ELF data encoding " + std::to_string(data[5]));
  if (data[6] != 1) return fail("unsupported ELF version " + std::to_string(data[6]));

  // The ELF header: its size and the fields used, for each class.
  const std::size_t ehsize = is64 ? 64 : 52;
  if (size < ehsize) return fail("ELF header truncated (" + std::to_string(size) + " bytes)");
  const std::uint8_t* h = data;
  const unsigned w = is64 ? 8 : 4;  // address-sized fields
  loaded r;
  r.is64 = is64;
  r.type = static_cast<std::uint16_t>(le(h + 16, 2));
  r.machine = static_cast<std::uint16_t>(le(h + 18, 2));
  if (le(h + 20, 4) != 1) return fail("unsupported ELF version " + std::to_string(le(h + 20, 4)));
  const std::uint64_t entry = le(h + 24, w);
  const std::uint64_t phoff = le(h + 24 + w, w);
  const std::size_t at16 = 24 + 3 * w + 4;  // e_ehsize, then e_phentsize, e_phnum
  const std::uint64_t phentsize = le(h + at16 + 2, 2);
  const std::uint64_t phnum = le(h + at16 + 4, 2);
  if (phnum == 0xffff)
    return fail("extended program header count (PN_XNUM) not supported");
  if (phnum == 0) return fail("no program headers (not an executable or shared object?)");
  const std::uint64_t phsize = is64 ? 56 : 32;
  if (phentsize < phsize)
    return fail("program header entry size " + std::to_string(phentsize) + " is less than " +
                std::to_string(phsize));
  if (phoff > size || phnum * phentsize > size - phoff)
    return fail("program headers beyond end of file (" + std::to_string(phnum) + " at offset " +
                hex(phoff) + ", file is " + std::to_string(size) + " bytes)");

  // The address space: 32 or 64 bits.
  const std::uint64_t top = is64 ? UINT64_MAX : 0xffffffffu;
  bool any_load = false;
  std::uint64_t lowest = top;
  struct load_entry {
    std::uint64_t vaddr, offset, filesz, memsz;
    std::uint32_t flags;
  };
  std::vector<load_entry> loads;
  try {
    for (std::uint64_t i = 0; i < phnum; ++i) {
      const std::uint8_t* p = data + phoff + i * phentsize;
      if (le(p, 4) != 1) continue;  // PT_LOAD
      load_entry e;
      if (is64) {
        e.flags = static_cast<std::uint32_t>(le(p + 4, 4));
        e.offset = le(p + 8, 8);
        e.vaddr = le(p + 16, 8);
        e.filesz = le(p + 32, 8);
        e.memsz = le(p + 40, 8);
      } else {
        e.offset = le(p + 4, 4);
        e.vaddr = le(p + 8, 4);
        e.filesz = le(p + 16, 4);
        e.memsz = le(p + 20, 4);
        e.flags = static_cast<std::uint32_t>(le(p + 24, 4));
      }
      const std::string what = "segment " + std::to_string(i) + " (PT_LOAD at " + hex(e.vaddr) + ")";
      if (e.offset > size || e.filesz > size - e.offset)
        return fail(what + ": segment beyond end of file (offset " + hex(e.offset) + " + " +
                    hex(e.filesz) + " bytes, file is " + std::to_string(size) + " bytes)");
      if (e.filesz > e.memsz)
        return fail(what + ": file size " + hex(e.filesz) + " larger than memory size " + hex(e.memsz));
      if (e.memsz != 0 && e.memsz - 1 > top - e.vaddr)
        return fail(what + ": " + hex(e.memsz) + " bytes run past the end of the address space");
      any_load = true;
      if (e.vaddr < lowest) lowest = e.vaddr;
      if (e.filesz != 0) loads.push_back(e);
    }
    if (!any_load || loads.empty()) return fail("no loadable segments with file contents");

    // Rebasing moves every segment by one amount; none may wrap past the top.
    const std::uint64_t base = opt.load_address ? *opt.load_address : lowest;
    if (base > top)
      return fail("load address " + hex(base) + " beyond the 32-bit address space");
    r.entry = (entry - lowest + base) & top;  // modulo: an entry outside the segments stays so
    r.segments.reserve(loads.size());
    for (const load_entry& e : loads) {
      segment s;
      s.vaddr = e.vaddr;
      const std::uint64_t from_lowest = e.vaddr - lowest;  // >= 0
      if (from_lowest > top - base || e.filesz - 1 > top - base - from_lowest)
        return fail("segment at " + hex(e.vaddr) + " rebased to " + hex(base) + " + " +
                    hex(from_lowest) + " runs past the end of the address space");
      s.address = base + from_lowest;
      s.offset = e.offset;
      s.memsz = e.memsz;
      s.flags = e.flags;
      s.data.assign(data + e.offset, data + e.offset + e.filesz);
      r.segments.push_back(std::move(s));
    }
  } catch (const std::bad_alloc&) {
    return fail("out of memory");
  }
  r.point_regions(opt.space);
  return r;
}

// Reads and parses the ELF file at `path`.
inline loaded load(const std::string& path, const load_options& opt = {}) {
  std::vector<std::uint8_t> bytes;
  if (std::string why = ete::snapshot::read_bytes(path, bytes, opt.max_file_size); !why.empty())
    return detail::fail("cannot read " + path + ": " + why);
  loaded r = parse(bytes.data(), bytes.size(), opt);
  if (!r.error.empty()) r.error = path + ": " + r.error;
  return r;
}

}  // namespace tracecodec::elf
