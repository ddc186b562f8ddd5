// SPDX-License-Identifier: Apache-2.0
// arm-classify-dump ISA FILE: classifies the 4-byte items of FILE (little-endian) with
// arm::classifier (newest) and prints one line per item that is not plain `other`:
//   OFFSET KIND LINK COND TARGET IT UNDEFINED
// (hex offset; KIND branch/indirect/isb/wfx/tstart/other; TARGET hex or -; IT the T32 IT
// byte). ISA a64, a32, or t32 (an item is a halfword pair: the first at OFFSET, the second
// after it; the instruction at OFFSET is classified, the address being OFFSET).
// Used by classifier_objdump.py, which compares it with objdump.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include <tracecodec/arm/instruction.hpp>

using namespace tracecodec::arm;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: arm-classify-dump a64|a32|t32 FILE\n");
    return 2;
  }
  const char* isa = argv[1];
  std::FILE* f = std::fopen(argv[2], "rb");
  if (f == nullptr) {
    std::perror(argv[2]);
    return 1;
  }
  std::vector<unsigned char> bytes;
  unsigned char buf[1 << 16];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) bytes.insert(bytes.end(), buf, buf + n);
  std::fclose(f);

  static const char* const kinds[] = {"other", "branch", "indirect", "isb", "wfx", "tstart"};
  static const classifier c;  // several KiB of tables: not on the stack
  const bool a64 = std::strcmp(isa, "a64") == 0, a32 = std::strcmp(isa, "a32") == 0;
  if (!a64 && !a32 && std::strcmp(isa, "t32") != 0) {
    std::fprintf(stderr, "unknown instruction set %s\n", isa);
    return 2;
  }
  for (std::size_t off = 0; off + 4 <= bytes.size(); off += 4) {
    const unsigned char* p = &bytes[off];
    const std::uint32_t word = p[0] | p[1] << 8 | p[2] << 16 | std::uint32_t{p[3]} << 24;
    const instruction_info i = a64   ? c.a64(word)
                               : a32 ? c.a32(word)
                                     : c.t32(static_cast<std::uint16_t>(word),
                                             static_cast<std::uint16_t>(word >> 16));
    if (i.type == instruction_type::other && i.it_block == 0 && !i.undefined) continue;
    char target[24] = "-";
    if (i.type == instruction_type::branch) {
      std::uint64_t base = off;
      if (!a64 && i.next_set == instruction_set::a32) base &= ~std::uint64_t{3};  // T32 BLX
      std::uint64_t t = base + static_cast<std::uint64_t>(i.branch_offset);
      if (!a64) t &= 0xFFFFFFFFu;
      std::snprintf(target, sizeof target, "%llx", static_cast<unsigned long long>(t));
    }
    std::printf("%zx %s %d %d %s %x %d\n", off, kinds[static_cast<int>(i.type)], i.link ? 1 : 0,
                i.conditional ? 1 : 0, target, i.it_block, i.undefined ? 1 : 0);
  }
  return 0;
}
