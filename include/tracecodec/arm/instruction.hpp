// SPDX-License-Identifier: Apache-2.0
// Instruction classification for trace analysis (what ETE D9.5 calls
// ProgramImage.DecodeNextInst, and ETMv4 needs too): for an A64, A32 or T32 encoding, its
// size and whether it is a P0 instruction, of which kind, with its direct-branch target.
// Table-driven: mask/value rows, filtered once by architecture version when a classifier is
// built, so classifying never branches on the configuration.
#pragma once

#include <cstdint>

namespace tracecodec::arm {

enum class instruction_set : std::uint8_t { a64, a32, t32 };

// What a trace unit makes of the instruction (ETE D9.5.18.5 InstType).
enum class instruction_type : std::uint8_t {
  other,            // not a P0 instruction
  branch,           // direct branch (target known from the encoding)
  indirect_branch,  // indirect branch, exception return, or a write to the PC
  isb,
  wfx,              // WFI, WFE, WFIT, WFET: P0 only when TRCIDR2.WFXMODE is 1
  tstart,           // TME TSTART
};

enum class instruction_subtype : std::uint8_t {
  none,
  link,         // branch with link (BL, BLR, BLX, BLRAA, ...)
  ret,          // A64 RET, RETAA, RETAB, RETAASPPC, ...
  eret,         // A64 ERET, ERETAA, ERETAB
  implied_ret,  // A32/T32 forms that act as a return (BX LR, POP {..pc}, LDR pc,[sp]...)
};

// Architecture versions: which encodings exist (PAuth v8.3, WFxT v8.7, BC.cond v8.8, TME,
// FEAT_CMPBR). `newest` enables every encoding this classifier knows.
enum class arch_version : std::uint8_t { v7, v8_0, v8_1, v8_2, v8_3, v8_4, v8_5, v8_6, v8_7,
                                         v8_8, v8_9, v9_0, v9_1, v9_2, v9_3, v9_4, v9_5, v9_6,
                                         newest };

struct instruction_info {
  std::int64_t branch_offset = 0;  // direct branch: target minus the instruction's address
  std::uint8_t size = 4;           // bytes: 4, or 2 for a 16-bit T32 instruction
  instruction_type type = instruction_type::other;
  instruction_subtype subtype = instruction_subtype::none;
  bool conditional = false;        // may be not taken (B.cond, CBZ, TBZ, conditional A32, ...)
  bool link = false;               // writes a return address to LR
  instruction_set next_set = instruction_set::a64;  // the set executed after a taken direct
                                                    // branch (BLX imm changes A32 <-> T32)
  std::uint8_t it_block = 0;       // T32 IT instruction: its firstcond:mask byte, else 0
  bool undefined = false;          // no instruction the classifier knows (treated as other)

  constexpr bool operator==(const instruction_info&) const = default;
};

}  // namespace tracecodec::arm
