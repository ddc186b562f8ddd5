// SPDX-License-Identifier: Apache-2.0
// Instruction classification for trace analysis (what ETE D9.5 calls
// ProgramImage.DecodeNextInst, and ETMv4 needs too): for an A64, A32 or T32 encoding, its
// size and whether it is a P0 instruction, of which kind, with its direct-branch target.
// Table-driven: mask/value rows, filtered once by architecture version when a classifier is
// built, so classifying never branches on the configuration.
#pragma once

#include <cstddef>
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

// ---------------------------------------------------------------------------------------------
// The classifier. Rows of (mask, value) -> what the encoding is, checked in order, the first
// match wins (so a row that carves an exception out of a wider row comes first). Facts from the
// Arm ARM (DDI0487: C4/C6 A64, F3/F4/F5 T32 and A32); where the ETE/ETMv4 trace view of an
// instruction is a matter of interpretation (which A32/T32 forms are "implied returns"), the
// rows follow OpenCSD's instruction decoder so that both report the same P0 instructions.

namespace classify_detail {

// Features that add P0 encodings.
enum class feature : std::uint8_t {
  base,      // every version
  pauth,     // FEAT_PAuth: Armv8.3
  wfxt,      // FEAT_WFxT: Armv8.7, Armv9.2
  hbc,       // FEAT_HBC (BC.cond): Armv8.8, Armv9.3
  tme,       // FEAT_TME (TSTART): Armv9.0
  pauth_lr,  // FEAT_PAuth_LR: Armv9.5
  cmpbr,     // FEAT_CMPBR: Armv9.6
  tev,       // FEAT_TEV (TEXIT): newer than Armv9.6, `newest` only
  lob,       // Armv8.1-M low-overhead branches: M profile only (classifier's m_profile)
};

// Armv9.x includes Armv8.(x+5) (Arm ARM A2.1), so v9.0 has PAuth but not WFxT or HBC.
constexpr bool has_feature(arch_version v, feature f) noexcept {
  if (v == arch_version::newest) return true;
  const bool v9 = v >= arch_version::v9_0;
  switch (f) {
    case feature::base: return true;
    case feature::pauth: return v9 || v >= arch_version::v8_3;
    case feature::wfxt: return v >= (v9 ? arch_version::v9_2 : arch_version::v8_7);
    case feature::hbc: return v >= (v9 ? arch_version::v9_3 : arch_version::v8_8);
    case feature::tme: return v9;
    case feature::pauth_lr: return v >= arch_version::v9_5;
    case feature::cmpbr: return v >= arch_version::v9_6;
    case feature::tev: return false;
    case feature::lob: return false;  // not an A-profile version's: dispatch_table adds them
  }
  return false;
}
constexpr bool has_row(arch_version v, feature f, bool m_profile) noexcept {
  return f == feature::lob ? m_profile : has_feature(v, f);
}

// How a direct branch encodes its offset. The A32 (+8) and T32 (+4) PC offsets are included,
// so that target = address + offset (T32 BLX imm: (address & ~3) + offset).
enum class offset_format : std::uint8_t {
  no_offset,
  a64_imm26,        // B, BL: imm26:'00'
  a64_imm19,        // B.cond, BC.cond, CBZ, CBNZ: imm19 [23:5]
  a64_imm14,        // TBZ, TBNZ: imm14 [18:5]
  a64_imm9,         // CB<cc>, CBB<cc>, CBH<cc>: imm9 [13:5]
  a32_imm24,        // B, BL: imm24:'00'
  a32_imm24_h,      // BLX (immediate): imm24:H:'0'
  t32_imm8,         // B T1: imm8:'0'
  t32_imm11,        // B T2: imm11:'0'
  t32_imm6_imm11,   // B T3: S:J2:J1:imm6:imm11:'0'
  t32_imm10_imm11,  // B T4, BL: S:I1:I2:imm10:imm11:'0', I = NOT(J XOR S)
  t32_imm10_imm10,  // BLX (immediate) T2: S:I1:I2:imm10H:imm10L:'00', from Align(PC, 4)
  t32_i_imm5,       // CBZ, CBNZ: i:imm5:'0', zero-extended
  t32_loop_fwd,     // Armv8.1-M WLS, WLSTP: immh:imml:'0', zero-extended, forward
  t32_loop_back,    // Armv8.1-M LE, LETP: immh:imml:'0', zero-extended, backward
};

// Row flags.
inline constexpr std::uint8_t cond = 1;       // conditional
inline constexpr std::uint8_t lnk = 2;        // writes LR
inline constexpr std::uint8_t interwork = 4;  // a taken branch changes A32 <-> T32
inline constexpr std::uint8_t it = 8;         // T32 IT: it_block from the first halfword
inline constexpr std::uint8_t unalloc = 16;   // unallocated encoding

struct rule {
  std::uint32_t mask = 0;
  std::uint32_t value = 0;
  instruction_type type = instruction_type::other;
  instruction_subtype subtype = instruction_subtype::none;
  offset_format offset = offset_format::no_offset;
  std::uint8_t flags = 0;
  feature needs = feature::base;
};

using enum instruction_type;
using enum instruction_subtype;
using enum offset_format;
using f = feature;

// A64 (Arm ARM C4.1 "Branches, Exception Generating and System instructions", C6.2).
inline constexpr rule a64_rules[] = {
    {0xFC000000, 0x14000000, branch, none, a64_imm26},                // B
    {0xFC000000, 0x94000000, branch, link, a64_imm26, lnk},           // BL
    {0xFF000010, 0x54000000, branch, none, a64_imm19, cond},          // B.cond
    {0xFF000010, 0x54000010, branch, none, a64_imm19, cond, f::hbc},  // BC.cond
    {0x7E000000, 0x34000000, branch, none, a64_imm19, cond},          // CBZ, CBNZ
    {0x7E000000, 0x36000000, branch, none, a64_imm14, cond},          // TBZ, TBNZ
    // Compare and branch: cc 0b100 and 0b101 are unallocated (LT/LO are the assembler's
    // operand-swapped aliases of GT/HI for the register forms).
    {0x7FC00000, 0x74800000, other, none, no_offset, unalloc, f::cmpbr},
    {0x7FC00000, 0x75800000, other, none, no_offset, unalloc, f::cmpbr},
    {0x7F00C000, 0x74000000, branch, none, a64_imm9, cond, f::cmpbr},  // CB<cc> (register)
    {0xFF00C000, 0x74008000, branch, none, a64_imm9, cond, f::cmpbr},  // CBB<cc>
    {0xFF00C000, 0x7400C000, branch, none, a64_imm9, cond, f::cmpbr},  // CBH<cc>
    {0x7F004000, 0x75000000, branch, none, a64_imm9, cond, f::cmpbr},  // CB<cc> (immediate)
    {0xFFFFFC1F, 0xD61F0000, indirect_branch},                         // BR
    {0xFFFFFC1F, 0xD63F0000, indirect_branch, link, no_offset, lnk},        // BLR
    {0xFFFFFC1F, 0xD65F0000, indirect_branch, ret},                    // RET
    {0xFFFFFFFF, 0xD69F03E0, indirect_branch, eret},                   // ERET
    {0xFFFFF800, 0xD71F0800, indirect_branch, none, no_offset, 0, f::pauth},      // BRAA, BRAB
    {0xFFFFF800, 0xD73F0800, indirect_branch, link, no_offset, lnk, f::pauth},    // BLRAA, BLRAB
    {0xFFFFF81F, 0xD61F081F, indirect_branch, none, no_offset, 0, f::pauth},      // BRAAZ, BRABZ
    {0xFFFFF81F, 0xD63F081F, indirect_branch, link, no_offset, lnk, f::pauth},    // BLRAAZ, BLRABZ
    {0xFFFFFBFF, 0xD65F0BFF, indirect_branch, ret, no_offset, 0, f::pauth},       // RETAA, RETAB
    {0xFFFFFBFF, 0xD69F0BFF, indirect_branch, eret, no_offset, 0, f::pauth},      // ERETAA, ERETAB
    // RETAASPPCR, RETABSPPCR <Xm> (Xm = 31 is RETAA/RETAB, above).
    {0xFFFFFBE0, 0xD65F0BE0, indirect_branch, ret, no_offset, 0, f::pauth_lr},
    // RETAASPPC, RETABSPPC <label>: the label is the PACIASPPC address (a modifier), not a
    // branch target; the return goes to LR.
    {0xFFC0001F, 0x5500001F, indirect_branch, ret, no_offset, 0, f::pauth_lr},
    {0xFFFFFBFF, 0xD6FF03E0, indirect_branch, eret, no_offset, 0, f::tev},  // TEXIT
    {0xFFFFF0FF, 0xD50330DF, isb},                                     // ISB
    {0xFFFFFFDF, 0xD503205F, wfx},                                     // WFE, WFI
    {0xFFFFFFC0, 0xD5031000, wfx, none, no_offset, 0, f::wfxt},             // WFET, WFIT
    {0xFFFFFFE0, 0xD5233060, tstart, none, no_offset, 0, f::tme},           // TSTART
};

// A32 (Arm ARM F4). A row whose mask covers bits [31:28] with 0b1111 there is for the
// unconditional space; every other row applies only when cond != 0b1111.
inline constexpr rule a32_rules[] = {
    {0xFE500000, 0xF8100000, indirect_branch},                                   // RFE
    {0xFE000000, 0xFA000000, branch, link, a32_imm24_h, lnk | interwork},        // BLX (imm)
    {0xFFF000F0, 0xF5700060, isb},                                               // ISB
    {0x0FF000FF, 0x0120001E, indirect_branch, implied_ret},                      // BX LR
    {0x0FF000F0, 0x01200030, indirect_branch, link, no_offset, lnk},                  // BLX (reg)
    {0x0FF000F0, 0x01200010, indirect_branch},                                   // BX
    {0x0FF000F0, 0x01200020, indirect_branch},                                   // BXJ (as BX)
    {0x0FFFFFFF, 0x0160006E, indirect_branch},                                   // ERET
    {0x0FFFA000, 0x08BD8000, indirect_branch, implied_ret},  // LDMIA SP!, {..pc} (POP), no SP
    {0x0E108000, 0x08108000, indirect_branch},               // LDM with pc (incl. exception return)
    {0x0FFFF000, 0x049DF000, indirect_branch, implied_ret},  // LDR pc, [sp], #imm (POP {pc})
    {0x0E50F000, 0x0410F000, indirect_branch},               // LDR pc, imm / literal
    {0x0E50F010, 0x0610F000, indirect_branch},               // LDR pc, register
    {0x0FF0FFFF, 0x01A0F00E, indirect_branch, implied_ret},  // MOV pc, lr
    {0x0FE0F000, 0x01A0F000, indirect_branch},               // MOV pc, Rm (shifts, MOVS)
    {0x0F900080, 0x01000000, other},                         // miscellaneous (MRS, MSR, CLZ..)
    {0x0F9000F0, 0x01800090, other},                         // synchronization primitives
    {0x0FFFFFFE, 0x0320F002, wfx},                           // WFE, WFI
    {0x0FB0F000, 0x0320F000, other},                         // MSR (immediate), hints
    {0x0F90F000, 0x0310F000, other},                         // TST, TEQ, CMP, CMN (immediate)
    {0x0E00F000, 0x0200F000, indirect_branch},               // data-processing (imm) to pc
    {0x0E00F000, 0x0000F000, indirect_branch},               // data-processing (reg) to pc
    {0x0F000000, 0x0A000000, branch, none, a32_imm24},       // B
    {0x0F000000, 0x0B000000, branch, link, a32_imm24, lnk},  // BL
    {0x0FFF0FFF, 0x0E070F95, isb},                           // MCR p15, 0, Rt, c7, c5, 4 (CP15ISB)
};

// T32 (Arm ARM F3): the first halfword in bits [31:16], the second in [15:0] (zero for a
// 16-bit instruction).
inline constexpr rule t32_rules[] = {
    // 16-bit
    {0xFE000000, 0xDE000000, other},                              // UDF, SVC
    {0xF0000000, 0xD0000000, branch, none, t32_imm8, cond},       // B<c> T1
    {0xF8000000, 0xE0000000, branch, none, t32_imm11},            // B T2
    {0xF5000000, 0xB1000000, branch, none, t32_i_imm5, cond},     // CBZ, CBNZ
    {0xFFF80000, 0x47700000, indirect_branch, implied_ret},       // BX LR
    {0xFF800000, 0x47800000, indirect_branch, link, no_offset, lnk},   // BLX (register)
    {0xFF000000, 0x47000000, indirect_branch},                    // BX
    {0xFF000000, 0xBD000000, indirect_branch, implied_ret},       // POP {..pc}
    {0xFFFF0000, 0x46F70000, indirect_branch, implied_ret},       // MOV pc, lr
    {0xFD870000, 0x44870000, indirect_branch},                    // MOV pc, Rm; ADD pc, Rm
    {0xFFEF0000, 0xBF200000, wfx},                                // WFE, WFI
    {0xFF0F0000, 0xBF000000, other},                              // NOP, YIELD, SEV.. hints
    {0xFF000000, 0xBF000000, other, none, no_offset, it},              // IT
    // 32-bit
    {0xFFF0FFE0, 0xE8D0F000, indirect_branch},                    // TBB, TBH
    {0xFFD00000, 0xE8100000, indirect_branch},                    // RFEDB
    {0xFFD00000, 0xE9900000, indirect_branch},                    // RFEIA
    {0xFFFF8000, 0xE8BD8000, indirect_branch, implied_ret},       // POP.W {..pc}
    {0xFE508000, 0xE8108000, indirect_branch},                    // LDM with pc
    {0xFF7FF000, 0xF85FF000, indirect_branch},                    // LDR pc, literal
    {0xFFFFFF00, 0xF85DFB00, indirect_branch, implied_ret},       // LDR pc, [sp], #imm
    {0xFFF0F000, 0xF8D0F000, indirect_branch},                    // LDR pc, imm12 (T3)
    {0xFFF0F800, 0xF850F800, indirect_branch},                    // LDR pc, imm8 (T4)
    {0xFFF0FFC0, 0xF850F000, indirect_branch},                    // LDR pc, register
    {0xFFF0D000, 0xF3C08000, indirect_branch},                    // BXJ (as BX)
    {0xFFF0D000, 0xF3D08000, indirect_branch},                    // SUBS pc, lr, #imm (ERET)
    {0xFFFFFFF0, 0xF3BF8F60, isb},                                // ISB
    {0xFFFFFFFE, 0xF3AF8002, wfx},                                // WFE.W, WFI.W
    {0xFB80D000, 0xF3808000, other},                              // the rest of cond 0b111x
    {0xF800D000, 0xF0008000, branch, none, t32_imm6_imm11, cond}, // B<c>.W T3
    {0xF800D000, 0xF0009000, branch, none, t32_imm10_imm11},      // B.W T4
    {0xF800D000, 0xF000D000, branch, link, t32_imm10_imm11, lnk}, // BL
    // Armv8.1-M low-overhead loops (Armv8-M ARM: WLS, WLSTP, LE, LETP; DLS, DLSTP and
    // LCTP, second halfword 0xE001, branch nowhere). These encodings are BLX (imm) with H = 1,
    // UNDEFINED, elsewhere. Not marked conditional: no condition field (OpenCSD agrees).
    {0xFFEFE001, 0xF00FC001, branch, none, t32_loop_back, 0, feature::lob},  // LE LR, LETP
    {0xFFFFE001, 0xF02FC001, branch, none, t32_loop_back, 0, feature::lob},  // LE (no LR update)
    {0xFFC0E001, 0xF000C001, branch, none, t32_loop_fwd, 0, feature::lob},   // WLSTP
    {0xFFF0E001, 0xF040C001, branch, none, t32_loop_fwd, 0, feature::lob},   // WLS
    {0xF800D001, 0xF000C000, branch, link, t32_imm10_imm10, lnk | interwork},  // BLX (imm)
    {0xFFFF0FFF, 0xEE070F95, isb},                                // MCR p15, 0, Rt, c7, c5, 4
};

// First-level dispatch: the rows that can match, per key.
struct a64_space {  // bits [31:24]
  static constexpr std::size_t keys = 256;
  static constexpr unsigned key(std::uint32_t w) noexcept { return w >> 24; }
  static constexpr bool may_match(unsigned k, const rule& r) noexcept {
    return ((k ^ (r.value >> 24)) & (r.mask >> 24)) == 0;
  }
};
using t32_space = a64_space;  // the first halfword's bits [15:8]
struct a32_space {  // cond == 0b1111, bits [27:20]
  static constexpr std::size_t keys = 512;
  static constexpr unsigned key(std::uint32_t w) noexcept {
    return ((w >> 28) == 0xF ? 0x100u : 0u) | ((w >> 20) & 0xFFu);
  }
  static constexpr bool may_match(unsigned k, const rule& r) noexcept {
    const bool nv_row = (r.mask >> 28) == 0xF && (r.value >> 28) == 0xF;
    return nv_row == (k >= 0x100) && (((k ^ (r.value >> 20)) & (r.mask >> 20) & 0xFFu) == 0);
  }
};

template <class Space, std::size_t N>
constexpr std::size_t dispatch_size(const rule (&rules)[N], arch_version v,
                                    bool m_profile = true) noexcept {
  std::size_t n = 0;
  for (unsigned k = 0; k < Space::keys; ++k)
    for (const rule& r : rules) n += has_row(v, r.needs, m_profile) && Space::may_match(k, r);
  return n;
}

// The rows of one instruction set for one version, grouped by key, in table order.
template <class Space, std::size_t Capacity>
struct dispatch_table {
  rule rows[Capacity]{};
  std::uint16_t start[Space::keys + 1]{};

  template <std::size_t N>
  constexpr dispatch_table(const rule (&rules)[N], arch_version v, bool m_profile = false) noexcept {
    std::size_t n = 0;
    for (unsigned k = 0; k < Space::keys; ++k) {
      start[k] = static_cast<std::uint16_t>(n);
      for (const rule& r : rules)
        if (has_row(v, r.needs, m_profile) && Space::may_match(k, r)) rows[n++] = r;
    }
    start[Space::keys] = static_cast<std::uint16_t>(n);
  }

  constexpr const rule* find(std::uint32_t w) const noexcept {
    const unsigned k = Space::key(w);
    for (unsigned i = start[k], e = start[k + 1]; i < e; ++i)
      if ((w & rows[i].mask) == rows[i].value) return &rows[i];
    return nullptr;
  }
};

constexpr std::uint32_t field(std::uint32_t w, unsigned hi, unsigned lo) noexcept {
  return (w >> lo) & ((std::uint32_t{1} << (hi - lo + 1)) - 1);
}
constexpr std::int64_t sign_extend(std::uint32_t v, unsigned bits) noexcept {
  const std::int64_t x = v;
  return (x >> (bits - 1)) & 1 ? x - (std::int64_t{1} << bits) : x;
}

constexpr std::int64_t branch_offset(offset_format o, std::uint32_t w) noexcept {
  const std::uint32_t s = field(w, 26, 26);           // T32 S
  const std::uint32_t i1 = ~(field(w, 13, 13) ^ s) & 1;  // T32 I1 = NOT(J1 XOR S)
  const std::uint32_t i2 = ~(field(w, 11, 11) ^ s) & 1;
  switch (o) {
    case no_offset: return 0;
    case a64_imm26: return sign_extend(field(w, 25, 0), 26) * 4;
    case a64_imm19: return sign_extend(field(w, 23, 5), 19) * 4;
    case a64_imm14: return sign_extend(field(w, 18, 5), 14) * 4;
    case a64_imm9: return sign_extend(field(w, 13, 5), 9) * 4;
    case a32_imm24: return sign_extend(field(w, 23, 0), 24) * 4 + 8;
    case a32_imm24_h: return sign_extend(field(w, 23, 0), 24) * 4 + field(w, 24, 24) * 2 + 8;
    case t32_imm8: return sign_extend(field(w, 23, 16), 8) * 2 + 4;
    case t32_imm11: return sign_extend(field(w, 26, 16), 11) * 2 + 4;
    case t32_imm6_imm11:
      return sign_extend(s << 19 | field(w, 11, 11) << 18 | field(w, 13, 13) << 17 |
                             field(w, 21, 16) << 11 | field(w, 10, 0), 20) * 2 + 4;
    case t32_imm10_imm11:
      return sign_extend(s << 23 | i1 << 22 | i2 << 21 | field(w, 25, 16) << 11 |
                             field(w, 10, 0), 24) * 2 + 4;
    case t32_imm10_imm10:
      return sign_extend(s << 22 | i1 << 21 | i2 << 20 | field(w, 25, 16) << 10 |
                             field(w, 10, 1), 23) * 4 + 4;
    case t32_i_imm5: return (field(w, 25, 25) << 5 | field(w, 23, 19)) * 2 + 4;
    case t32_loop_fwd: return (field(w, 10, 1) << 2 | field(w, 11, 11) << 1) + 4;
    case t32_loop_back:
      return 4 - static_cast<std::int64_t>(field(w, 10, 1) << 2 | field(w, 11, 11) << 1);
  }
  return 0;
}

constexpr instruction_info describe(const rule* r, std::uint32_t w, instruction_set set,
                                    std::uint8_t size) noexcept {
  instruction_info i;
  i.size = size;
  i.next_set = set;
  if (r == nullptr) return i;
  i.type = r->type;
  i.subtype = r->subtype;
  i.conditional = (r->flags & cond) != 0;
  i.link = (r->flags & lnk) != 0;
  i.undefined = (r->flags & unalloc) != 0;
  i.branch_offset = branch_offset(r->offset, w);
  if (r->flags & interwork) i.next_set = set == instruction_set::a32 ? instruction_set::t32
                                                                     : instruction_set::a32;
  if (r->flags & it) i.it_block = static_cast<std::uint8_t>(w >> 16);
  return i;
}

inline constexpr std::size_t a64_capacity = dispatch_size<a64_space>(a64_rules, arch_version::newest);
inline constexpr std::size_t a32_capacity = dispatch_size<a32_space>(a32_rules, arch_version::newest);
inline constexpr std::size_t t32_capacity = dispatch_size<t32_space>(t32_rules, arch_version::newest);

}  // namespace classify_detail

// Classifies instructions for one architecture version: the constructor keeps only the rows
// of encodings that exist in it (an encoding added later is `other`), grouped by a first-level
// key, so classifying is a table lookup and a short scan that never tests the version.
//
// branch_offset (direct branches): target = address + branch_offset, the A32 (+8) and T32 (+4)
// PC offsets included; except T32 BLX (immediate), whose target is Align(PC, 4) + imm, that
// is target = (address & ~3) + branch_offset.
// conditional: B.cond, BC.cond, CBZ/CBNZ, TBZ/TBNZ, CB<cc>/CBB<cc>/CBH<cc>; every A32
// instruction whose cond field is not 0b1110 or 0b1111; T32 B<c> (T1, T3) and CBZ/CBNZ. An
// instruction in a T32 IT block is conditional too: the classifier has no state, so it reports
// the IT instruction's firstcond:mask in it_block and the caller tracks the block.
//
// m_profile: T32 of an M-profile PE, where the Armv8.1-M low-overhead loop branches (WLS,
// WLSTP, LE, LETP) exist; elsewhere their encodings are BLX (immediate) with H = 1, UNDEFINED.
class classifier {
 public:
  constexpr explicit classifier(arch_version v = arch_version::newest,
                                bool m_profile = false) noexcept
      : version_(v), a64_(classify_detail::a64_rules, v), a32_(classify_detail::a32_rules, v),
        t32_(classify_detail::t32_rules, v, m_profile) {}

  constexpr arch_version version() const noexcept { return version_; }

  constexpr instruction_info a64(std::uint32_t word) const noexcept {
    return classify_detail::describe(a64_.find(word), word, instruction_set::a64, 4);
  }

  constexpr instruction_info a32(std::uint32_t word) const noexcept {
    instruction_info i =
        classify_detail::describe(a32_.find(word), word, instruction_set::a32, 4);
    i.conditional = i.conditional || (word >> 28) < 0xE;  // F4.1 cond field (0b1111: unconditional)
    return i;
  }

  // first: the halfword at the lower address; second: the next one, used only when `first`
  // begins a 32-bit encoding (bits [15:11] 0b11101, 0b11110 or 0b11111, Arm ARM F3.1).
  constexpr instruction_info t32(std::uint16_t first, std::uint16_t second) const noexcept {
    const bool wide = (first & 0xF800u) >= 0xE800u;
    const std::uint32_t w = std::uint32_t{first} << 16 | (wide ? second : 0u);
    return classify_detail::describe(t32_.find(w), w, instruction_set::t32, wide ? 4 : 2);
  }

 private:
  arch_version version_;
  classify_detail::dispatch_table<classify_detail::a64_space, classify_detail::a64_capacity> a64_;
  classify_detail::dispatch_table<classify_detail::a32_space, classify_detail::a32_capacity> a32_;
  classify_detail::dispatch_table<classify_detail::t32_space, classify_detail::t32_capacity> t32_;
};

}  // namespace tracecodec::arm
