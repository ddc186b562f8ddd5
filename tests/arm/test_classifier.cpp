// SPDX-License-Identifier: Apache-2.0
// arm::classifier: hand-built encodings (Arm ARM DDI0487 C4/C6 A64, F3/F4/F5 T32 and A32) for
// every row, branch offsets at zero, negative and at both ends of each range, and the
// architecture-version filter. Offsets were cross-checked against objdump's targets.
//
// Deliberate differences from OpenCSD 1.8.0's instruction decoder (trc_idec_arminst.cpp):
// - A64 CB<cc>, CBB<cc>, CBH<cc> (FEAT_CMPBR) are conditional: they branch only when the
//   comparison holds (Arm ARM C6.2); OpenCSD's is_conditional knows only B.cond, BC.cond,
//   CBZ/CBNZ and TBZ/TBNZ, so it reports them as always taken.
// - A64 CB<cc> with cc 0b100 or 0b101 (register and immediate forms) is unallocated: other,
//   undefined; OpenCSD takes every cc as a direct branch.
// - Versions: BC.cond exists from Armv8.8/9.3, WFIT/WFET from 8.7/9.2, TSTART from 9.0,
//   RETA*SPPC(R) from 9.5, CB<cc> from 9.6, TEXIT only in `newest`, and Armv9.x includes
//   Armv8.(x+5) only. OpenCSD decodes BC.cond and CB<cc> in every version, WFxT and TSTART
//   for any AArch64 PE, and RETA*SPPC(R) and TEXIT from Armv8.3.
// - A32 ERET is an indirect branch (exception return, subtype none, as T32 SUBS pc, lr is in
//   both); OpenCSD's "miscellaneous instructions" exclusion makes it `other`.
// - T32 LE, LETP, WLS, WLSTP (Armv8.1-M low-overhead loops) are `other`: in A-profile T32 the
//   encodings are BLX (immediate) with H = 1, UNDEFINED. Newer OpenCSD decodes them as direct
//   branches.
#include <doctest/doctest.h>

#include <initializer_list>
#include <ios>

#include <tracecodec/arm/instruction.hpp>

using namespace tracecodec::arm;
using it = instruction_type;
using st = instruction_subtype;
using is = instruction_set;

namespace {

constexpr instruction_info info(it type, st subtype = st::none, bool cond = false,
                                std::int64_t offset = 0, std::uint8_t size = 4,
                                is next = is::a64) {
  instruction_info i;
  i.type = type;
  i.subtype = subtype;
  i.conditional = cond;
  i.link = subtype == st::link;
  i.branch_offset = offset;
  i.size = size;
  i.next_set = next;
  return i;
}
constexpr instruction_info a32i(it type, st subtype = st::none, bool cond = false,
                                std::int64_t offset = 0, is next = is::a32) {
  return info(type, subtype, cond, offset, 4, next);
}
constexpr instruction_info t32i(it type, st subtype = st::none, bool cond = false,
                                std::int64_t offset = 0, std::uint8_t size = 4,
                                is next = is::t32) {
  return info(type, subtype, cond, offset, size, next);
}

constexpr classifier newest;

// Classifying in a constant expression.
static_assert(newest.a64(0x94000010) == info(it::branch, st::link, false, 0x40));
static_assert(newest.a64(0x54800000) == info(it::branch, st::none, true, -0x100000));
static_assert(newest.a64(0xD65F03C0) == info(it::indirect_branch, st::ret));
static_assert(classifier{arch_version::v8_0}.a64(0xD65F0BFF) == info(it::other));
static_assert(newest.a32(0xFB000000) == a32i(it::branch, st::link, false, 0xA, is::t32));
static_assert(newest.t32(0xF7FF, 0xEFFE) == t32i(it::branch, st::link, false, 0, 4, is::a32));
static_assert(newest.t32(0xBF1C, 0x1234).it_block == 0x1C);

struct vector {
  std::uint32_t word;
  instruction_info expected;
};

void check_a64(const classifier& c, const vector& v) {
  INFO("A64 word 0x" << std::hex << v.word);
  const instruction_info got = c.a64(v.word);
  CHECK(static_cast<int>(got.type) == static_cast<int>(v.expected.type));
  CHECK(static_cast<int>(got.subtype) == static_cast<int>(v.expected.subtype));
  CHECK(got.branch_offset == v.expected.branch_offset);
  CHECK(got == v.expected);
}

}  // namespace

TEST_CASE("arm-classifier: A64 rows") {
  const vector vectors[] = {
      {0x14000000, info(it::branch, st::none, false, 0)},             // B .
      {0x14000001, info(it::branch, st::none, false, 4)},
      {0x15FFFFFF, info(it::branch, st::none, false, 0x7FFFFFC)},     // B, largest forward
      {0x16000000, info(it::branch, st::none, false, -0x8000000)},    // B, largest backward
      {0x17FFFFFF, info(it::branch, st::none, false, -4)},
      {0x94000010, info(it::branch, st::link, false, 0x40)},          // BL
      {0x97FFFFFF, info(it::branch, st::link, false, -4)},
      {0x54000020, info(it::branch, st::none, true, 4)},              // B.EQ
      {0x54FFFFE1, info(it::branch, st::none, true, -4)},             // B.NE
      {0x547FFFE0, info(it::branch, st::none, true, 0xFFFFC)},
      {0x54800000, info(it::branch, st::none, true, -0x100000)},
      {0x5400002E, info(it::branch, st::none, true, 4)},              // B.AL: still B.cond
      {0x54000030, info(it::branch, st::none, true, 4)},              // BC.EQ
      {0x54FFFFFD, info(it::branch, st::none, true, -4)},             // BC.LE
      {0x34000040, info(it::branch, st::none, true, 8)},              // CBZ W0
      {0xB5FFFFC1, info(it::branch, st::none, true, -8)},             // CBNZ X1
      {0xB47FFFE0, info(it::branch, st::none, true, 0xFFFFC)},
      {0x36000020, info(it::branch, st::none, true, 4)},              // TBZ W0, #0
      {0xB7F8001F, info(it::branch, st::none, true, 0)},              // TBNZ XZR, #63
      {0x3607FFE0, info(it::branch, st::none, true, -4)},
      {0x36040000, info(it::branch, st::none, true, -0x8000)},
      {0x3603FFE0, info(it::branch, st::none, true, 0x7FFC)},
      {0x74052005, info(it::branch, st::none, true, -1024)},          // CBGT W5, W5
      {0xF4051FE5, info(it::branch, st::none, true, 1020)},           // CBGT X5, X5
      {0x74E52005, info(it::branch, st::none, true, -1024)},          // CBNE W5, W5
      {0x7405E005, info(it::branch, st::none, true, -1024)},          // CBHGT
      {0x7405A005, info(it::branch, st::none, true, -1024)},          // CBBGT
      {0x751F9FE5, info(it::branch, st::none, true, 1020)},           // CBGT W5, #63
      {0xF5002005, info(it::branch, st::none, true, -1024)},          // CBGT X5, #0
      {0xF5EFA005, info(it::branch, st::none, true, -1024)},          // CBNE X5, #31
      {0xD61F0020, info(it::indirect_branch)},                        // BR X1
      {0xD63F0040, info(it::indirect_branch, st::link)},              // BLR X2
      {0xD65F03C0, info(it::indirect_branch, st::ret)},               // RET
      {0xD65F0000, info(it::indirect_branch, st::ret)},               // RET X0
      {0xD69F03E0, info(it::indirect_branch, st::eret)},              // ERET
      {0xD71F0841, info(it::indirect_branch)},                        // BRAA X2, X1
      {0xD71F0C41, info(it::indirect_branch)},                        // BRAB
      {0xD73F0841, info(it::indirect_branch, st::link)},              // BLRAA
      {0xD73F0C41, info(it::indirect_branch, st::link)},              // BLRAB
      {0xD61F087F, info(it::indirect_branch)},                        // BRAAZ X3
      {0xD61F0C7F, info(it::indirect_branch)},                        // BRABZ
      {0xD63F087F, info(it::indirect_branch, st::link)},              // BLRAAZ
      {0xD63F0C7F, info(it::indirect_branch, st::link)},              // BLRABZ
      {0xD65F0BFF, info(it::indirect_branch, st::ret)},               // RETAA
      {0xD65F0FFF, info(it::indirect_branch, st::ret)},               // RETAB
      {0xD69F0BFF, info(it::indirect_branch, st::eret)},              // ERETAA
      {0xD69F0FFF, info(it::indirect_branch, st::eret)},              // ERETAB
      {0xD65F0BE2, info(it::indirect_branch, st::ret)},               // RETAASPPCR X2
      {0xD65F0FE3, info(it::indirect_branch, st::ret)},               // RETABSPPCR X3
      {0x5500021F, info(it::indirect_branch, st::ret)},               // RETAASPPC label
      {0x5520023F, info(it::indirect_branch, st::ret)},               // RETABSPPC label
      {0x551FFFFF, info(it::indirect_branch, st::ret)},
      {0xD6FF03E0, info(it::indirect_branch, st::eret)},              // TEXIT
      {0xD6FF07E0, info(it::indirect_branch, st::eret)},              // TEXIT NB
      {0xD50330DF, info(it::isb)},                                    // ISB #0
      {0xD5033FDF, info(it::isb)},                                    // ISB SY
      {0xD503207F, info(it::wfx)},                                    // WFI
      {0xD503205F, info(it::wfx)},                                    // WFE
      {0xD5031003, info(it::wfx)},                                    // WFET X3
      {0xD5031023, info(it::wfx)},                                    // WFIT X3
      {0xD5233060, info(it::tstart)},                                 // TSTART X0
      {0xD523307F, info(it::tstart)},
      // Not P0.
      {0xD503201F, info(it::other)},   // NOP
      {0xD503309F, info(it::other)},   // SSBB (DSB form)
      {0xD5033FBF, info(it::other)},   // DMB SY
      {0xD6BF03E0, info(it::other)},   // DRPS (only in Debug state; OpenCSD: other too)
      {0xD4000001, info(it::other)},   // SVC: an exception, not a branch
      {0x8B000000, info(it::other)},   // ADD
      {0xD5233160, info(it::other)},   // TTEST
      {0xD503307F, info(it::other)},   // TCOMMIT
      {0x55000000, info(it::other)},   // 0x55 without Rt = 31: not RETAASPPC
  };
  for (const vector& v : vectors) check_a64(newest, v);

  // Unallocated compare-and-branch conditions.
  for (const std::uint32_t w : {0x74852005u, 0xF4A52005u, 0x75852005u, 0xF5A02005u}) {
    instruction_info u = info(it::other);
    u.undefined = true;
    CHECK(newest.a64(w) == u);
  }
  // CBB/CBH are 32-bit only; bits [15:14] = 0b01 is unallocated.
  CHECK(newest.a64(0xF405A005).type == it::other);
  CHECK(newest.a64(0x74054005).type == it::other);
}

TEST_CASE("arm-classifier: A32 rows") {
  const vector vectors[] = {
      {0xEA000000, a32i(it::branch, st::none, false, 8)},               // B
      {0xEAFFFFFE, a32i(it::branch, st::none, false, 0)},               // B .
      {0x0A7FFFFF, a32i(it::branch, st::none, true, 0x2000004)},        // BEQ, largest forward
      {0xEA800000, a32i(it::branch, st::none, false, -0x1FFFFF8)},      // largest backward
      {0xEB000010, a32i(it::branch, st::link, false, 0x48)},            // BL
      {0x1BFFFFFF, a32i(it::branch, st::link, true, 4)},                // BLNE
      {0xFA000000, a32i(it::branch, st::link, false, 8, is::t32)},      // BLX (imm)
      {0xFB000000, a32i(it::branch, st::link, false, 0xA, is::t32)},    // BLX (imm), H = 1
      {0xFAFFFFFE, a32i(it::branch, st::link, false, 0, is::t32)},
      {0xE12FFF1E, a32i(it::indirect_branch, st::implied_ret)},         // BX LR
      {0x112FFF1E, a32i(it::indirect_branch, st::implied_ret, true)},   // BXNE LR
      {0xE12FFF13, a32i(it::indirect_branch)},                          // BX R3
      {0xE12FFF33, a32i(it::indirect_branch, st::link)},                // BLX R3
      {0xE12FFF3E, a32i(it::indirect_branch, st::link)},                // BLX LR
      {0xE12FFF23, a32i(it::indirect_branch)},                          // BXJ R3
      {0xE8BD8010, a32i(it::indirect_branch, st::implied_ret)},         // POP {r4, pc}
      {0x08BD8000, a32i(it::indirect_branch, st::implied_ret, true)},   // LDMFDEQ sp!, {pc}
      {0xE8BDA000, a32i(it::indirect_branch)},                          // POP {sp, pc}
      {0xE89D8000, a32i(it::indirect_branch)},                          // LDM sp, {pc}
      {0xE8FD8000, a32i(it::indirect_branch)},                          // LDM sp!, {pc}^
      {0xE9108000, a32i(it::indirect_branch)},                          // LDMDB r0, {pc}
      {0xE49DF004, a32i(it::indirect_branch, st::implied_ret)},         // LDR pc, [sp], #4
      {0xE59FF000, a32i(it::indirect_branch)},                          // LDR pc, [pc]
      {0xE51BF004, a32i(it::indirect_branch)},                          // LDR pc, [fp, #-4]
      {0xE79FF101, a32i(it::indirect_branch)},                          // LDR pc, [pc, r1, lsl #2]
      {0xE1A0F00E, a32i(it::indirect_branch, st::implied_ret)},         // MOV pc, lr
      {0xE1B0F00E, a32i(it::indirect_branch)},                          // MOVS pc, lr
      {0xE1A0F002, a32i(it::indirect_branch)},                          // MOV pc, r2
      {0xE1A0F10E, a32i(it::indirect_branch)},                          // LSL pc, lr, #2
      {0xE28FF008, a32i(it::indirect_branch)},                          // ADD pc, pc, #8
      {0xE25EF004, a32i(it::indirect_branch)},                          // SUBS pc, lr, #4
      {0xE08FF000, a32i(it::indirect_branch)},                          // ADD pc, pc, r0
      {0xE3A0F000, a32i(it::indirect_branch)},                          // MOV pc, #0
      {0xE160006E, a32i(it::indirect_branch)},                          // ERET
      {0xF8BD0A00, a32i(it::indirect_branch)},                          // RFEIA sp!
      {0xE320F003, a32i(it::wfx)},                                      // WFI
      {0xE320F002, a32i(it::wfx)},                                      // WFE
      {0x0320F002, a32i(it::wfx, st::none, true)},                      // WFEEQ
      {0xF57FF06F, a32i(it::isb)},                                      // ISB SY
      {0xEE070F95, a32i(it::isb)},                                      // CP15ISB
      // Not P0.
      {0xE320F000, a32i(it::other)},                                    // NOP
      {0xF57FF04F, a32i(it::other)},                                    // DSB SY
      {0xE35F0000, a32i(it::other)},                                    // CMP pc, #0
      {0xE330F000, a32i(it::other)},                                    // TEQ r0, #0 (Rd = 1111)
      {0xE0800000, a32i(it::other)},                                    // ADD
      {0x03A00001, a32i(it::other, st::none, true)},                    // MOVEQ: conditional
      {0xF1010000, a32i(it::other)},                                    // SETEND: cond 0b1111
      {0xF410F000, a32i(it::other)},                                    // PLI, not LDR pc
      {0xE10F0000, a32i(it::other)},                                    // MRS
      {0xEF000000, a32i(it::other)},                                    // SVC
  };
  for (const vector& v : vectors) {
    INFO("A32 word 0x" << std::hex << v.word);
    CHECK(newest.a32(v.word) == v.expected);
  }
}

TEST_CASE("arm-classifier: T32 rows") {
  struct tvector {
    std::uint16_t first, second;
    instruction_info expected;
  };
  const tvector vectors[] = {
      {0xD0FE, 0, t32i(it::branch, st::none, true, 0, 2)},              // BEQ.N .
      {0xD17F, 0, t32i(it::branch, st::none, true, 0x102, 2)},          // BNE.N, largest forward
      {0xD080, 0, t32i(it::branch, st::none, true, -0xFC, 2)},          // largest backward
      {0xE7FE, 0, t32i(it::branch, st::none, false, 0, 2)},             // B.N .
      {0xE3FF, 0, t32i(it::branch, st::none, false, 0x802, 2)},
      {0xE400, 0, t32i(it::branch, st::none, false, -0x7FC, 2)},
      {0xB108, 0, t32i(it::branch, st::none, true, 6, 2)},              // CBZ r0
      {0xBBF9, 0, t32i(it::branch, st::none, true, 0x82, 2)},           // CBNZ r1, largest
      {0x4770, 0, t32i(it::indirect_branch, st::implied_ret, false, 0, 2)},  // BX LR
      {0x4798, 0, t32i(it::indirect_branch, st::link, false, 0, 2)},    // BLX r3
      {0x4708, 0, t32i(it::indirect_branch, st::none, false, 0, 2)},    // BX r1
      {0xBD10, 0, t32i(it::indirect_branch, st::implied_ret, false, 0, 2)},  // POP {r4, pc}
      {0x46F7, 0, t32i(it::indirect_branch, st::implied_ret, false, 0, 2)},  // MOV pc, lr
      {0x4687, 0, t32i(it::indirect_branch, st::none, false, 0, 2)},    // MOV pc, r0
      {0x44F7, 0, t32i(it::indirect_branch, st::none, false, 0, 2)},    // ADD pc, lr
      {0x4487, 0, t32i(it::indirect_branch, st::none, false, 0, 2)},    // ADD pc, r0
      {0xBF20, 0, t32i(it::wfx, st::none, false, 0, 2)},                // WFE
      {0xBF30, 0, t32i(it::wfx, st::none, false, 0, 2)},                // WFI
      {0xDE00, 0, t32i(it::other, st::none, false, 0, 2)},              // UDF
      {0xDF00, 0, t32i(it::other, st::none, false, 0, 2)},              // SVC
      {0xBF00, 0, t32i(it::other, st::none, false, 0, 2)},              // NOP
      {0xBF10, 0, t32i(it::other, st::none, false, 0, 2)},              // YIELD
      {0xB500, 0, t32i(it::other, st::none, false, 0, 2)},              // PUSH {lr}
      {0xF000, 0xB800, t32i(it::branch, st::none, false, 4)},           // B.W
      {0xF7FF, 0xBFFE, t32i(it::branch, st::none, false, 0)},
      {0xF000, 0xB000, t32i(it::branch, st::none, false, 0x400004)},
      {0xF400, 0x9000, t32i(it::branch, st::none, false, -0xFFFFFC)},   // largest backward
      {0xF3FF, 0x97FF, t32i(it::branch, st::none, false, 0x1000002)},   // largest forward
      {0xF43F, 0xAFFE, t32i(it::branch, st::none, true, 0)},            // BEQ.W .
      {0xF03F, 0xAFFF, t32i(it::branch, st::none, true, 0x100002)},     // B<c>.W largest forward
      {0xF400, 0x8000, t32i(it::branch, st::none, true, -0xFFFFC)},     // largest backward
      {0xF000, 0xF800, t32i(it::branch, st::link, false, 4)},           // BL
      {0xF7FF, 0xFFFE, t32i(it::branch, st::link, false, 0)},
      {0xF3FF, 0xD7FF, t32i(it::branch, st::link, false, 0x1000002)},
      {0xF000, 0xE800, t32i(it::branch, st::link, false, 4, 4, is::a32)},   // BLX (imm)
      {0xF7FF, 0xEFFE, t32i(it::branch, st::link, false, 0, 4, is::a32)},
      {0xE8D1, 0xF002, t32i(it::indirect_branch)},                      // TBB
      {0xE8D1, 0xF012, t32i(it::indirect_branch)},                      // TBH
      {0xE8BD, 0x8010, t32i(it::indirect_branch, st::implied_ret)},     // POP.W {r4, pc}
      {0xE891, 0x8000, t32i(it::indirect_branch)},                      // LDMIA.W r1, {pc}
      {0xE913, 0x8000, t32i(it::indirect_branch)},                      // LDMDB r3, {pc}
      {0xF85D, 0xFB04, t32i(it::indirect_branch, st::implied_ret)},     // LDR.W pc, [sp], #4
      {0xF8D1, 0xF004, t32i(it::indirect_branch)},                      // LDR.W pc, [r1, #4]
      {0xF85F, 0xF008, t32i(it::indirect_branch)},                      // LDR.W pc, literal
      {0xF851, 0xFC04, t32i(it::indirect_branch)},                      // LDR pc, [r1, #-4]
      {0xF851, 0xF002, t32i(it::indirect_branch)},                      // LDR pc, [r1, r2]
      {0xF3DE, 0x8F00, t32i(it::indirect_branch)},                      // SUBS pc, lr, #0 (ERET)
      {0xF3DE, 0x8F04, t32i(it::indirect_branch)},
      {0xE81D, 0xC000, t32i(it::indirect_branch)},                      // RFEDB sp
      {0xE99D, 0xC000, t32i(it::indirect_branch)},                      // RFEIA sp
      {0xF3C4, 0x8F00, t32i(it::indirect_branch)},                      // BXJ r4
      {0xF3BF, 0x8F6F, t32i(it::isb)},                                  // ISB SY
      {0xEE07, 0x0F95, t32i(it::isb)},                                  // CP15ISB
      {0xF3AF, 0x8003, t32i(it::wfx)},                                  // WFI.W
      {0xF3AF, 0x8002, t32i(it::wfx)},                                  // WFE.W
      {0xF3AF, 0x8000, t32i(it::other)},                                // NOP.W
      {0xF3BF, 0x8F4F, t32i(it::other)},                                // DSB SY
      {0xEA4F, 0x0F0E, t32i(it::other)},                                // MOV.W pc, lr (UNPRED.)
      {0xF00F, 0xC001, t32i(it::other)},                                // LE (v8.1-M): undefined
  };
  for (const tvector& v : vectors) {
    INFO("T32 0x" << std::hex << v.first << " 0x" << v.second);
    CHECK(newest.t32(v.first, v.second) == v.expected);
  }
  // Armv8.1-M low-overhead loops on an M-profile PE (armv8_1m_branches' range1.bin, as
  // arm-none-eabi-objdump -m armv8.1-m.main decodes them): WLS lr, r4 at 0x1e0c4 -> 0x1e0cc,
  // LE lr at 0x1e104 -> 0x1e0f4; DLS is no branch.
  const classifier m(arch_version::newest, true);
  const instruction_info wls = m.t32(0xF044, 0xC003), le = m.t32(0xF00F, 0xC00B);
  CHECK(wls.type == it::branch);
  CHECK(wls.size == 4);
  CHECK(0x1e0c4 + wls.branch_offset == 0x1e0cc);
  CHECK(le.type == it::branch);
  CHECK(0x1e104 + le.branch_offset == 0x1e0f4);
  CHECK(m.t32(0xF044, 0xE001).type == it::other);  // DLS lr, r4
  // A 16-bit instruction ignores the second halfword.
  CHECK(newest.t32(0xE7FE, 0xF000) == newest.t32(0xE7FE, 0x0000));
  // IT: firstcond:mask; the instruction itself is not conditional.
  instruction_info i = t32i(it::other, st::none, false, 0, 2);
  i.it_block = 0x08;
  CHECK(newest.t32(0xBF08, 0) == i);  // IT EQ
  i.it_block = 0x1C;
  CHECK(newest.t32(0xBF1C, 0) == i);  // ITT NE
}

TEST_CASE("arm-classifier: architecture versions") {
  const auto type = [](arch_version v, std::uint32_t w) { return classifier{v}.a64(w).type; };
  CHECK(classifier{arch_version::v8_4}.version() == arch_version::v8_4);
  CHECK(classifier{}.version() == arch_version::newest);
  // PAuth (v8.3; every v9).
  for (const std::uint32_t w : {0xD65F0BFFu, 0xD69F0BFFu, 0xD71F0841u, 0xD63F087Fu}) {
    CHECK(type(arch_version::v8_0, w) == it::other);
    CHECK(type(arch_version::v8_2, w) == it::other);
    CHECK(type(arch_version::v8_3, w) == it::indirect_branch);
    CHECK(type(arch_version::v9_0, w) == it::indirect_branch);
  }
  CHECK(classifier{arch_version::v8_0}.a64(0xD65F0BFF) == info(it::other));
  CHECK(classifier{arch_version::v8_3}.a64(0xD65F0BFF) == info(it::indirect_branch, st::ret));
  CHECK(classifier{arch_version::v8_0}.a64(0xD73F0841) == info(it::other));
  // BC.cond (v8.8, v9.3); B.cond in every version.
  CHECK(type(arch_version::v8_7, 0x54000030) == it::other);
  CHECK(type(arch_version::v8_8, 0x54000030) == it::branch);
  CHECK(type(arch_version::v9_2, 0x54000030) == it::other);
  CHECK(type(arch_version::v9_3, 0x54000030) == it::branch);
  CHECK(type(arch_version::v8_0, 0x54000020) == it::branch);
  CHECK(type(arch_version::v7, 0x54000020) == it::branch);
  // WFIT, WFET (v8.7, v9.2); WFI in every version.
  CHECK(type(arch_version::v8_6, 0xD5031023) == it::other);
  CHECK(type(arch_version::v8_7, 0xD5031023) == it::wfx);
  CHECK(type(arch_version::v9_1, 0xD5031003) == it::other);
  CHECK(type(arch_version::v9_2, 0xD5031003) == it::wfx);
  CHECK(type(arch_version::v8_0, 0xD503207F) == it::wfx);
  // TSTART (v9.0).
  CHECK(type(arch_version::v8_9, 0xD5233060) == it::other);
  CHECK(type(arch_version::v9_0, 0xD5233060) == it::tstart);
  // RETAASPPC, RETAASPPCR (v9.5).
  CHECK(type(arch_version::v9_4, 0x5500021F) == it::other);
  CHECK(type(arch_version::v9_5, 0x5500021F) == it::indirect_branch);
  CHECK(type(arch_version::v9_4, 0xD65F0BE2) == it::other);
  CHECK(type(arch_version::v9_5, 0xD65F0BE2) == it::indirect_branch);
  // CB<cc> (v9.6): before, not even flagged unallocated.
  CHECK(classifier{arch_version::v9_5}.a64(0x74052005) == info(it::other));
  CHECK(type(arch_version::v9_6, 0x74052005) == it::branch);
  CHECK(classifier{arch_version::v9_5}.a64(0x74852005) == info(it::other));
  // TEXIT: newest only.
  CHECK(type(arch_version::v9_6, 0xD6FF03E0) == it::other);
  CHECK(type(arch_version::newest, 0xD6FF03E0) == it::indirect_branch);
  // A32 and T32 have no version-dependent rows.
  CHECK(classifier{arch_version::v7}.a32(0xE12FFF1E) == newest.a32(0xE12FFF1E));
  CHECK(classifier{arch_version::v7}.t32(0xF000, 0xE800) == newest.t32(0xF000, 0xE800));
}
