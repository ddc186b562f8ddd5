// SPDX-License-Identifier: Apache-2.0
// Instruction-level PE model for the program-flow tests: random programs as real A64, A32 or
// T32 machine code (encodings from the Arm ARM, written here independently of
// arm/instruction.hpp), an executor with a real call stack, asynchronous exceptions and ERET,
// and the trace unit that watches it: the stage-1 element stream it emits (atoms, Target
// Addresses except where its own return stack matches, D6.11.4; exceptions with their
// preferred return address; timestamps and cycle counts; optionally speculation with commits,
// cancels and mispredicts through pe_model::generator). Recorded: the executed instructions
// and the events (exceptions, exception returns, timestamps, cycle counts) between them.
#pragma once

#include <tracecodec/ete/flow/decoder.hpp>
#include <tracecodec/tracecodec.hpp>

#include <cstdint>
#include <memory>
#include <vector>

#include "../common/pe_model.hpp"
#include "../common/random.hpp"

namespace flow_model {
using namespace tracecodec::ete;
using tracecodec::arm::instruction_set;

struct choices {  // pe_model's Choices from splitmix64
  test::splitmix64 s;
  std::uint64_t u64() { return s.next(); }
  unsigned pick(unsigned n) { return static_cast<unsigned>(s.next() % n); }
  bool chance(unsigned pct) { return pick(100) < pct; }
};

enum class op : std::uint8_t { other, cond, b, bl, blr, br, ret, eret };
enum class term : std::uint8_t { none, cond_fwd, cond_loop, b_fwd, b_back, call, call_ind, br, ret, eret };

struct block_spec {
  std::vector<std::uint8_t> others;  // sizes of the non-branch instructions (T32: 2 or 4)
  term t = term::none;
  int target = -1;     // block (cond, b) or function (call)
  bool cond_link = false;  // A32 BL<c>
  bool narrow = false;     // T32: 16-bit form
  std::uint8_t variant = 0;  // which encoding (B.cond/CBZ/TBZ; RET form)
};
struct func_spec {
  std::vector<block_spec> blocks;
  bool handler = false;
};

struct insn {
  std::uint64_t addr = 0;
  std::uint8_t size = 4;
  op kind = op::other;
  bool cond_link = false;
  int target = -1;  // direct branch: instruction index
  int fn = 0, block = 0;
};

struct program {
  instruction_set set = instruction_set::a64;
  std::vector<func_spec> funcs;
  std::vector<insn> code;
  std::vector<std::vector<int>> block_start;  // [fn][block] -> instruction index
  int regular = 0;                            // functions 0..regular-1 (0: main); then handlers
  std::vector<std::vector<std::uint8_t>> bytes;
  std::vector<memory_region> regions;
};

inline void put16(std::vector<std::uint8_t>& b, std::size_t at, std::uint32_t h) {
  b[at] = static_cast<std::uint8_t>(h);
  b[at + 1] = static_cast<std::uint8_t>(h >> 8);
}
inline void put32(std::vector<std::uint8_t>& b, std::size_t at, std::uint32_t w) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<std::uint8_t>(w >> (8 * i));
}

// A random program: main (function 0) loops forever; functions call only higher-numbered ones
// (so calls nest but never recurse); handlers end with ERET.
inline program make_program(instruction_set set, choices& r) {
  program p;
  p.set = set;
  const int regular = 16 + static_cast<int>(r.pick(12)), handlers = 1 + static_cast<int>(r.pick(2));
  p.regular = regular;
  const bool t32 = set == instruction_set::t32;
  for (int f = 0; f < regular + handlers; ++f) {
    func_spec fs;
    fs.handler = f >= regular;
    const int nb = 2 + static_cast<int>(r.pick(7));
    for (int b = 0; b < nb; ++b) {
      block_spec bs;
      const unsigned n = r.pick(6);
      for (unsigned i = 0; i < n; ++i) bs.others.push_back(t32 && r.chance(50) ? 2 : 4);
      const bool last = b == nb - 1;
      const int lo = fs.handler ? 1 : f + 1, hi = fs.handler ? regular : std::min(regular, f + 4);
      const bool can_call = lo < hi;
      if (last) {
        bs.t = f == 0 ? term::b_back : fs.handler ? term::eret : term::ret;
        bs.target = 0;
        bs.variant = static_cast<std::uint8_t>(r.pick(3));
      } else {
        const unsigned k = r.pick(100);
        if (k < 12) bs.t = term::none;
        else if (k < 34) bs.t = term::cond_fwd;
        else if (k < 42) bs.t = term::cond_loop;
        else if (k < 52) bs.t = term::b_fwd;
        else if (k < 74) bs.t = can_call ? term::call : term::cond_fwd;
        else if (k < 86) bs.t = can_call ? term::call_ind : term::b_fwd;
        else bs.t = term::br;
        if (bs.t == term::cond_fwd || bs.t == term::b_fwd) bs.target = b + 1 + static_cast<int>(r.pick(static_cast<unsigned>(nb - b - 1)));
        if (bs.t == term::cond_loop) bs.target = static_cast<int>(r.pick(static_cast<unsigned>(b + 1)));
        if (bs.t == term::call || bs.t == term::call_ind) bs.target = lo + static_cast<int>(r.pick(static_cast<unsigned>(hi - lo)));
        bs.variant = static_cast<std::uint8_t>(r.pick(3));
        bs.cond_link = bs.t == term::call && set == instruction_set::a32 && r.chance(30);
        bs.narrow = t32 && r.chance(60);
      }
      fs.blocks.push_back(bs);
    }
    p.funcs.push_back(std::move(fs));
  }
  // Placement: functions in a random order over 1-3 regions at random addresses, within reach
  // of BL (A64 +-128MB, A32 +-32MB, T32 +-16MB): 1MB slots in a 32MB (A64) or 8MB window.
  const int nf = static_cast<int>(p.funcs.size());
  std::vector<int> order(static_cast<std::size_t>(nf));
  for (int i = 0; i < nf; ++i) order[static_cast<std::size_t>(i)] = i;
  for (int i = nf - 1; i > 0; --i) std::swap(order[static_cast<std::size_t>(i)], order[r.pick(static_cast<unsigned>(i + 1))]);
  const int nregions = 1 + static_cast<int>(r.pick(3));
  const unsigned slots = set == instruction_set::a64 ? 32 : 8;
  std::uint64_t window;
  if (set == instruction_set::a64)
    window = r.chance(50) ? 0xffff800010000000ull + (r.u64() & 0xff00000ull)
                          : (r.u64() & 0x0000fff0000000ull) + 0x10000000ull;
  else
    window = 0x00100000ull + (r.u64() & 0x7f000000ull);
  std::vector<std::uint64_t> bases;
  while (static_cast<int>(bases.size()) < nregions) {
    const std::uint64_t b = window + (std::uint64_t{r.pick(slots)} << 20) + (std::uint64_t{r.pick(256)} << 8);
    bool clash = false;
    for (auto x : bases) clash |= (x >> 20) == (b >> 20);
    if (!clash) bases.push_back(b);
  }
  std::vector<int> region_of(static_cast<std::size_t>(nf));
  for (int i = 0; i < nf; ++i) region_of[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])] = i * nregions / nf;

  // Layout (T32: narrow forms that do not reach become wide, until nothing changes).
  auto term_size = [&](const block_spec& bs) -> std::uint8_t {
    if (bs.t == term::none) return 0;
    if (!t32) return 4;
    switch (bs.t) {
      case term::cond_fwd: case term::cond_loop: case term::b_fwd: case term::b_back: return bs.narrow ? 2 : 4;
      case term::call: return 4;
      case term::ret: return bs.variant == 2 ? 4 : 2;  // BX LR, POP {pc}, LDR.W pc,[sp],#4
      case term::eret: return 4;
      default: return 2;  // BLX Rm, BX Rm
    }
  };
  for (;;) {
    p.code.clear();
    p.block_start.assign(static_cast<std::size_t>(nf), {});
    std::vector<std::uint64_t> at = bases;
    std::vector<std::vector<int>> term_index(static_cast<std::size_t>(nf));
    for (int oi = 0; oi < nf; ++oi) {
      const int f = order[static_cast<std::size_t>(oi)];
      std::uint64_t& a = at[static_cast<std::size_t>(region_of[static_cast<std::size_t>(f)])];
      a = (a + 3) & ~std::uint64_t{3};
      for (std::size_t b = 0; b < p.funcs[static_cast<std::size_t>(f)].blocks.size(); ++b) {
        const block_spec& bs = p.funcs[static_cast<std::size_t>(f)].blocks[b];
        p.block_start[static_cast<std::size_t>(f)].push_back(static_cast<int>(p.code.size()));
        for (std::uint8_t s : bs.others) {
          p.code.push_back(insn{a, s, op::other, false, -1, f, static_cast<int>(b)});
          a += s;
        }
        term_index[static_cast<std::size_t>(f)].push_back(static_cast<int>(p.code.size()));
        const std::uint8_t ts = term_size(bs);
        if (ts == 0) {
          if (bs.others.empty()) {  // a block needs an instruction: a NOP
            p.code.push_back(insn{a, static_cast<std::uint8_t>(t32 ? 2 : 4), op::other, false, -1, f, static_cast<int>(b)});
            a += t32 ? 2 : 4;
          }
          continue;
        }
        insn i{a, ts, op::other, bs.cond_link, -1, f, static_cast<int>(b)};
        switch (bs.t) {
          case term::cond_fwd: case term::cond_loop: i.kind = op::cond; break;
          case term::b_fwd: case term::b_back: i.kind = op::b; break;
          case term::call: i.kind = op::bl; break;
          case term::call_ind: i.kind = op::blr; break;
          case term::br: i.kind = op::br; break;
          case term::ret: i.kind = op::ret; break;
          case term::eret: i.kind = op::eret; break;
          default: break;
        }
        p.code.push_back(i);
        a += ts;
      }
    }
    // Direct targets.
    for (int f = 0; f < nf; ++f)
      for (std::size_t b = 0; b < p.funcs[static_cast<std::size_t>(f)].blocks.size(); ++b) {
        const block_spec& bs = p.funcs[static_cast<std::size_t>(f)].blocks[b];
        if (bs.t == term::none) continue;
        insn& i = p.code[static_cast<std::size_t>(term_index[static_cast<std::size_t>(f)][b])];
        if (i.kind == op::cond || i.kind == op::b)
          i.target = p.block_start[static_cast<std::size_t>(f)][static_cast<std::size_t>(bs.target)];
        else if (i.kind == op::bl)
          i.target = p.block_start[static_cast<std::size_t>(bs.target)][0];
      }
    bool changed = false;
    if (t32)
      for (int f = 0; f < nf; ++f)
        for (std::size_t b = 0; b < p.funcs[static_cast<std::size_t>(f)].blocks.size(); ++b) {
          block_spec& bs = p.funcs[static_cast<std::size_t>(f)].blocks[b];
          if (!bs.narrow || bs.t == term::none) continue;
          const insn& i = p.code[static_cast<std::size_t>(term_index[static_cast<std::size_t>(f)][b])];
          if (i.target < 0) continue;
          const std::int64_t off = static_cast<std::int64_t>(p.code[static_cast<std::size_t>(i.target)].addr - i.addr) - 4;
          bool ok;
          if (i.kind == op::b) ok = off >= -2048 && off <= 2046;
          else if (bs.variant == 1) ok = off >= 0 && off <= 126;  // CBZ: forward only
          else ok = off >= -256 && off <= 254;
          if (!ok) {
            bs.narrow = false;
            changed = true;
          }
        }
    if (!changed) break;
  }
  // Encode.
  p.bytes.assign(static_cast<std::size_t>(nregions), {});
  std::vector<std::uint64_t> end = bases;
  for (const insn& i : p.code) {
    const int rg = region_of[static_cast<std::size_t>(i.fn)];
    end[static_cast<std::size_t>(rg)] = std::max(end[static_cast<std::size_t>(rg)], i.addr + i.size);
  }
  for (int g = 0; g < nregions; ++g) p.bytes[static_cast<std::size_t>(g)].assign(static_cast<std::size_t>(end[static_cast<std::size_t>(g)] - bases[static_cast<std::size_t>(g)]), 0);
  for (const insn& i : p.code) {
    const int g = region_of[static_cast<std::size_t>(i.fn)];
    std::vector<std::uint8_t>& buf = p.bytes[static_cast<std::size_t>(g)];
    const std::size_t o = static_cast<std::size_t>(i.addr - bases[static_cast<std::size_t>(g)]);
    const block_spec& bs = p.funcs[static_cast<std::size_t>(i.fn)].blocks[static_cast<std::size_t>(i.block)];
    const std::int64_t off = i.target >= 0 ? static_cast<std::int64_t>(p.code[static_cast<std::size_t>(i.target)].addr - i.addr) : 0;
    const std::uint32_t reg = 1 + r.pick(12);  // a register that is not SP, LR or PC
    const std::uint32_t cond = r.pick(14);     // EQ..LE
    if (set == instruction_set::a64) {
      std::uint32_t w = 0;
      const std::uint32_t imm26 = static_cast<std::uint32_t>(off / 4) & 0x3ffffff;
      const std::uint32_t imm19 = static_cast<std::uint32_t>(off / 4) & 0x7ffff;
      const std::uint32_t imm14 = static_cast<std::uint32_t>(off / 4) & 0x3fff;
      switch (i.kind) {
        case op::other: {
          const std::uint32_t k = r.pick(5);
          w = k == 0 ? 0xD503201Fu                                           // NOP
            : k == 1 ? 0x91000000u | (r.pick(4096) << 10) | (reg << 5) | reg  // ADD Xd, Xn, #imm
            : k == 2 ? 0xAA0003E0u | (reg << 16) | (1 + r.pick(12))          // MOV Xd, Xm
            : k == 3 ? 0xD1000000u | (r.pick(4096) << 10) | (reg << 5) | reg  // SUB Xd, Xn, #imm
                     : 0xD2800000u | (r.pick(65536) << 5) | reg;             // MOVZ Xd, #imm
          break;
        }
        case op::cond:
          w = bs.variant == 0   ? 0x54000000u | (imm19 << 5) | cond                        // B.cond
              : bs.variant == 1 ? 0xB4000000u | (r.pick(2) << 24) | (imm19 << 5) | reg     // CBZ/CBNZ X
                                : 0x36000000u | (r.pick(2) << 31) | (r.pick(2) << 24) |     // TBZ/TBNZ
                                      (r.pick(32) << 19) | (imm14 << 5) | reg;
          break;
        case op::b: w = 0x14000000u | imm26; break;
        case op::bl: w = 0x94000000u | imm26; break;
        case op::blr: w = 0xD63F0000u | (reg << 5); break;
        case op::br: w = 0xD61F0000u | (reg << 5); break;
        case op::ret: w = 0xD65F03C0u; break;
        case op::eret: w = 0xD69F03E0u; break;
      }
      put32(buf, o, w);
    } else if (set == instruction_set::a32) {
      std::uint32_t w = 0;
      const std::uint32_t imm24 = static_cast<std::uint32_t>((off - 8) / 4) & 0xffffff;
      switch (i.kind) {
        case op::other: {
          const std::uint32_t k = r.pick(3);
          w = k == 0 ? 0xE320F000u                                                   // NOP
            : k == 1 ? 0xE2800000u | (reg << 16) | (reg << 12) | r.pick(256)         // ADD Rd, Rn, #imm
                     : 0xE1A00000u | (reg << 12) | (1 + r.pick(12));                 // MOV Rd, Rm
          break;
        }
        case op::cond: w = (cond << 28) | 0x0A000000u | imm24; break;               // B<c>
        case op::b: w = 0xEA000000u | imm24; break;                                  // B
        case op::bl: w = ((i.cond_link ? cond : 14u) << 28) | 0x0B000000u | imm24; break;  // BL<c>
        case op::blr: w = 0xE12FFF30u | reg; break;                                  // BLX Rm
        case op::br: w = 0xE12FFF10u | reg; break;                                   // BX Rm
        case op::ret:
          w = bs.variant == 0 ? 0xE12FFF1Eu    // BX LR
            : bs.variant == 1 ? 0xE8BD8010u    // POP {r4, pc}
                              : 0xE49DF004u;   // LDR pc, [sp], #4
          break;
        case op::eret: w = 0xE160006Eu; break;
      }
      put32(buf, o, w);
    } else {
      const std::int64_t t = off - 4;  // from the PC (address + 4)
      const std::uint32_t u = static_cast<std::uint32_t>(t);
      auto wide = [&](std::uint32_t first, std::uint32_t second) {
        put16(buf, o, first);
        put16(buf, o + 2, second);
      };
      auto t4 = [&](std::uint32_t second_bits) {  // B.W T4 / BL: S:I1:I2:imm10:imm11:'0'
        const std::uint32_t s = (u >> 24) & 1, i1 = (u >> 23) & 1, i2 = (u >> 22) & 1;
        const std::uint32_t j1 = (~i1 ^ s) & 1, j2 = (~i2 ^ s) & 1;  // I = NOT(J XOR S)
        wide(0xF000u | (s << 10) | ((u >> 12) & 0x3ff), second_bits | (j1 << 13) | (j2 << 11) | ((u >> 1) & 0x7ff));
      };
      switch (i.kind) {
        case op::other:
          if (i.size == 2) {
            const std::uint32_t k = r.pick(3), lo = 1 + r.pick(6);
            put16(buf, o, k == 0 ? 0xBF00u                       // NOP
                        : k == 1 ? 0x3000u | (lo << 8) | r.pick(256)  // ADDS Rd, #imm8
                                 : 0x4600u | (r.pick(8) << 3) | lo);  // MOV Rd, Rm
          } else {
            wide(r.chance(50) ? 0xF100u | reg : 0xEA4Fu,  // ADD.W Rd, Rn, #imm8 / MOV.W Rd, Rm
                 r.chance(50) ? (reg << 8) | r.pick(256) : (reg << 8) | (1 + r.pick(12)));
          }
          break;
        case op::cond:
          if (bs.narrow && bs.variant == 1)  // CBZ/CBNZ: i:imm5:'0'
            put16(buf, o, 0xB100u | (r.pick(2) << 11) | (((u >> 6) & 1) << 9) | (((u >> 1) & 0x1f) << 3) | r.pick(8));
          else if (bs.narrow)  // B<c> T1
            put16(buf, o, 0xD000u | (cond << 8) | ((u >> 1) & 0xff));
          else  // B<c>.W T3: S:J2:J1:imm6:imm11:'0'
            wide(0xF000u | (((u >> 20) & 1) << 10) | (cond << 6) | ((u >> 12) & 0x3f),
                 0x8000u | (((u >> 18) & 1) << 13) | (((u >> 19) & 1) << 11) | ((u >> 1) & 0x7ff));
          break;
        case op::b:
          if (bs.narrow) put16(buf, o, 0xE000u | ((u >> 1) & 0x7ff));  // B T2
          else t4(0x9000u);
          break;
        case op::bl: t4(0xD000u); break;
        case op::blr: put16(buf, o, 0x4780u | (reg << 3)); break;  // BLX Rm
        case op::br: put16(buf, o, 0x4700u | (reg << 3)); break;   // BX Rm
        case op::ret:
          if (bs.variant == 0) put16(buf, o, 0x4770u);       // BX LR
          else if (bs.variant == 1) put16(buf, o, 0xBD10u);  // POP {r4, pc}
          else wide(0xF85Du, 0xFB04u);                       // LDR.W pc, [sp], #4
          break;
        case op::eret: wide(0xF3DEu, 0x8F00u); break;  // SUBS pc, lr, #0
      }
    }
  }
  for (int g = 0; g < nregions; ++g)
    p.regions.push_back(memory_region{bases[static_cast<std::size_t>(g)], p.bytes[static_cast<std::size_t>(g)].data(),
                                      p.bytes[static_cast<std::size_t>(g)].size(), memory_space::any});
  return p;
}

// What the analysis must report between instructions: at `at` instructions executed.
struct event {
  flow_kind kind;
  std::size_t at;
  std::uint64_t value;  // exception: preferred return address; timestamp; cycle count
};

struct run_options {
  std::size_t instructions = 10000;
  unsigned tu_stack_depth = 15;  // the trace unit's return stack (D6.11.4 R_HNDJJ: 0 to 15)
  unsigned exception_per_mille = 3;
  unsigned mispredict_percent = 5;  // conditional branches first traced with the wrong atom
  unsigned speculate_percent = 10;  // MAXSPEC > 0: wrong-path P0 elements, then canceled
  bool periodic_sync = true;        // MAXSPEC 0: Trace Info + Context + address now and then
  // Of the direct branches first traced E and then mispredicted: with their Target Address
  // before the Mispredict (branch broadcasting, R_BNVFP).
  unsigned broadcast_percent = 30;
  // Of the mispredicted atoms (with timestamps or cycle counts on): a Timestamp, a Cycle Count
  // or both before the Mispredict (I_MDSCN: a Mispredict may come after its atom was resolved).
  unsigned late_percent = 30;
};

struct run_result {
  std::vector<element> stream;   // stage-1 elements
  std::vector<element> committed;  // pe_model's committed elements (for debugging)
  std::vector<int> executed;     // instruction indices, in order
  std::vector<event> events;
  std::size_t returns_omitted = 0, exceptions = 0, mispredicts = 0, max_depth = 0;
  std::size_t targets_discarded = 0;  // Target Addresses a Mispredict after them discards
  std::size_t late_mispredicts = 0;   // MAXSPEC 0: Mispredicts after a Timestamp or Cycle Count
};

// Runs the program and records the trace unit's element stream.
inline run_result run(const program& p, const registers& regs, choices ch, const run_options& o) {
  const config c = config::from(regs);
  pe_model::generator<choices> g(c, ch);
  choices& r = g.choices;
  run_result res;
  const isa sub = p.set == instruction_set::t32 ? isa::is1 : isa::is0;
  std::uint32_t threshold = 0;
  std::uint64_t ts = 1000;
  std::vector<std::uint64_t> tu_stack;  // the trace unit's return stack, top at the back
  context ctx{};
  ctx.el = 1;
  ctx.ns = true;
  ctx.sf = p.set == instruction_set::a64;
  auto emit = [&](element e) { g.emit(e); };
  auto target = [&](std::uint64_t a) {
    element e{};
    e.kind = element_kind::target_address;
    e.address = a;
    e.sub_isa = sub;
    emit(e);
  };
  auto context_element = [&] {
    element e{};
    e.kind = element_kind::context;
    if (c.cid && r.chance(30)) ctx.context_id = static_cast<std::uint32_t>(r.u64());
    e.ctx = ctx;
    emit(e);
  };
  auto sync = [&](std::uint64_t a) {  // D6.11.4 R_SBJB: Trace Info clears the return stack
    element ti{};
    ti.kind = element_kind::trace_info;
    if (c.cci) {
      threshold = r.pick(4096);
      ti.cycles = threshold;
      ti.flags = element_flag::cc_enabled;
    }
    emit(ti);
    tu_stack.clear();
    context_element();
    target(a);
  };
  // What may follow a P0 element: a Timestamp (with cycles now and then), a Cycle Count.
  auto timestamp = [&] {
    element e{};
    e.kind = element_kind::timestamp;
    ts += 1 + r.pick(5000);
    e.timestamp = ts;
    if (c.cci && r.chance(30)) {
      e.flags = element_flag::has_cycles;
      e.cycles = r.pick(1u << 20);
    }
    emit(e);
    res.events.push_back({flow_kind::timestamp, res.executed.size(), ts});
  };
  auto cycle_count = [&] {
    element e{};
    e.kind = element_kind::cycle_count;
    e.cycles = threshold + r.pick(r.chance(50) ? 16 : (1u << 16));
    emit(e);
    res.events.push_back({flow_kind::cycle_count, res.executed.size(), e.cycles});
  };
  const std::uint64_t entry = p.code[static_cast<std::size_t>(p.block_start[0][0])].addr;
  {
    element ti{};
    ti.kind = element_kind::trace_info;
    if (c.cci) {
      threshold = r.pick(4096);
      ti.cycles = threshold;
      ti.flags = element_flag::cc_enabled;
    }
    emit(ti);
    element on{};
    on.kind = element_kind::trace_on;
    emit(on);
    context_element();
    target(entry);
  }
  // A speculative wrong path: P0 elements that a Cancel removes (with a Mispredict after it
  // when `mispredict`); returns false if there is no room for one (MAXSPEC).
  auto wrong_path = [&](bool mispredict) {
    const std::size_t room = c.maxspec > g.spec.size() ? c.maxspec - g.spec.size() : 0;
    if (room == 0) return false;
    const unsigned k = 1 + r.pick(static_cast<unsigned>(std::min<std::size_t>(room, 6)));
    for (unsigned j = 0; j < k; ++j) {
      element a{};
      a.kind = element_kind::atom;
      a.taken = r.chance(60);
      emit(a);
      if (a.taken && r.chance(30)) target(p.code[r.pick(static_cast<unsigned>(p.code.size()))].addr);
    }
    g.cancel(k, mispredict);
    return true;
  };
  // An atom for a P0 instruction whose real outcome is `taken`; returns the atom first traced.
  // `broadcast`: a direct branch's target, traced as a Target Address before the Mispredict
  // now and then when the atom first traced is a wrong E (run_options::broadcast_percent).
  auto atom = [&](bool taken, bool conditional, std::uint64_t broadcast = 0) {
    bool first = taken;
    if (conditional && r.chance(o.mispredict_percent)) first = !taken;
    element a{};
    a.kind = element_kind::atom;
    a.taken = first;
    emit(a);
    if (first != taken) {  // D2.5.4: the wrong path is canceled, then the atom corrected
      ++res.mispredicts;
      if (first && broadcast != 0 && r.chance(o.broadcast_percent)) {
        target(broadcast);  // the Mispredict below discards it (D6.9.14)
        ++res.targets_discarded;
      }
      if ((c.ts || c.cci) && r.chance(o.late_percent)) {
        const bool stamp = c.ts && (!c.cci || r.chance(50));
        const bool count = c.cci && (!stamp || r.chance(50));
        if (stamp) timestamp();
        if (count) cycle_count();
        // Under MAXSPEC 0 the atom is resolved at once, so the Mispredict arrives after it
        // was; with MAXSPEC > 0 the resolver brings it right after its atom.
        if (c.maxspec == 0) ++res.late_mispredicts;
      }
      if (!(c.maxspec > 0 && r.chance(70) && wrong_path(true))) {
        element m{};
        m.kind = element_kind::mispredict;
        emit(m);
      }
    }
    return first;
  };
  // D6.11.4 R_QHSBN/R_HTKJS: a taken indirect branch whose target matches the top of the
  // return stack pops it and has no Target Address element.
  auto indirect = [&](std::uint64_t a) {
    if (c.rs && !tu_stack.empty() && tu_stack.back() == a) {
      tu_stack.pop_back();
      ++res.returns_omitted;
      return;
    }
    target(a);
  };
  auto push = [&](std::uint64_t a) {  // R_HFCTC, R_ZSDVQ: the oldest entry goes when full
    if (!c.rs || o.tu_stack_depth == 0) return;
    if (tu_stack.size() == o.tu_stack_depth) tu_stack.erase(tu_stack.begin());
    tu_stack.push_back(a);
  };

  std::vector<int> calls, excs;  // return instruction indices
  std::vector<int> trips(p.code.size(), -1);
  int idx = p.block_start[0][0];
  auto next_of = [&](int i) { return i + 1; };  // code is laid out in order within a function
  for (;;) {
    // An asynchronous exception before instruction idx: its preferred return address is idx.
    if (excs.size() < 3 && r.pick(1000) < o.exception_per_mille) {
      constexpr std::uint8_t types[] = {1, 2, 3, 4, 6, 7, 0xa, 0xb, 0xc, 0xe, 0xf};
      const std::uint64_t per = p.code[static_cast<std::size_t>(idx)].addr;
      element e{};
      e.kind = element_kind::exception;
      e.exception_type = types[r.pick(sizeof types)];
      e.address = per;
      e.sub_isa = sub;
      emit(e);
      res.events.push_back({flow_kind::exception, res.executed.size(), per});
      ++res.exceptions;
      excs.push_back(idx);
      idx = p.block_start[static_cast<std::size_t>(p.regular + static_cast<int>(r.pick(static_cast<unsigned>(p.funcs.size()) - static_cast<unsigned>(p.regular))))][0];
      if (r.chance(30)) context_element();
      target(p.code[static_cast<std::size_t>(idx)].addr);
      continue;
    }
    res.executed.push_back(idx);
    const insn& i = p.code[static_cast<std::size_t>(idx)];
    const std::uint64_t ret_addr = i.addr + i.size;
    bool p0 = true;
    switch (i.kind) {
      case op::other:
        p0 = false;
        idx = next_of(idx);
        break;
      case op::cond: {
        bool taken;
        if (i.target <= idx) {  // a loop: taken trip times, then not
          int& t = trips[static_cast<std::size_t>(idx)];
          if (t < 0) t = static_cast<int>(r.pick(4));
          taken = t > 0;
          t = taken ? t - 1 : -1;
        } else {
          taken = r.chance(50);
        }
        atom(taken, true, p.code[static_cast<std::size_t>(i.target)].addr);
        idx = taken ? i.target : next_of(idx);
        break;
      }
      case op::b:
        atom(true, false);
        idx = i.target;
        break;
      case op::bl: {
        const bool taken = !i.cond_link || r.chance(60);
        // R_FFXFW/R_NYHFH: the push follows the atom as first traced (the flow decoder has the
        // resolver pass Mispredicts on rather than apply them, D9.5.3 I_GBVND).
        if (atom(taken, i.cond_link, p.code[static_cast<std::size_t>(i.target)].addr))
          push(ret_addr);
        if (taken) {
          calls.push_back(next_of(idx));
          idx = i.target;
        } else {
          idx = next_of(idx);
        }
        break;
      }
      case op::blr: {
        atom(true, false);
        push(ret_addr);  // R_SLDXR: push, then the pop check
        const int lo = i.fn >= p.regular ? 1 : i.fn + 1, hi = i.fn >= p.regular ? p.regular : std::min(p.regular, i.fn + 4);
        const int callee = lo + static_cast<int>(r.pick(static_cast<unsigned>(hi - lo)));
        calls.push_back(next_of(idx));
        idx = p.block_start[static_cast<std::size_t>(callee)][0];
        indirect(p.code[static_cast<std::size_t>(idx)].addr);
        break;
      }
      case op::br: {
        atom(true, false);
        const auto& bl = p.block_start[static_cast<std::size_t>(i.fn)];
        const int nb = static_cast<int>(bl.size());
        idx = bl[static_cast<std::size_t>(i.block + 1 + static_cast<int>(r.pick(static_cast<unsigned>(nb - i.block - 1))))];
        indirect(p.code[static_cast<std::size_t>(idx)].addr);
        break;
      }
      case op::ret:
        atom(true, false);
        idx = calls.back();
        calls.pop_back();
        indirect(p.code[static_cast<std::size_t>(idx)].addr);
        break;
      case op::eret:
        atom(true, false);
        idx = excs.back();
        excs.pop_back();
        indirect(p.code[static_cast<std::size_t>(idx)].addr);
        if (p.set == instruction_set::a64)
          res.events.push_back({flow_kind::exception_return, res.executed.size(), 0});
        break;
    }
    res.max_depth = std::max(res.max_depth, calls.size());
    if (!p0) continue;
    // After a P0 instruction: timestamps, cycle counts, commits, wrong paths, sync points.
    if (c.ts && r.chance(2)) timestamp();
    if (c.cci && r.chance(5)) cycle_count();
    if (c.maxspec > 0) {
      if (r.chance(o.speculate_percent)) wrong_path(false);
      if (!g.spec.empty() && r.chance(20)) g.commit(1 + r.pick(static_cast<unsigned>(g.spec.size())));
    } else if (o.periodic_sync && r.pick(1000) < 2) {
      sync(p.code[static_cast<std::size_t>(idx)].addr);
    }
    if (res.executed.size() >= o.instructions) break;
  }
  g.finish();
  res.stream = std::move(g.stream);
  res.committed = std::move(g.committed);
  return res;
}

// The stage-1 elements as bytes.
inline std::vector<std::uint8_t> compress(const registers& regs, const std::vector<element>& stream,
                                          error_code& status) {
  auto comp = std::make_unique<compressor<>>(regs);
  std::vector<std::uint8_t> bytes;
  std::uint8_t chunk[4096];
  status = error_code::ok;
  for (const element& e : stream) {
    error_code s = comp->push(e);
    if (s == error_code::buffer_too_small) {
      bytes.insert(bytes.end(), chunk, chunk + comp->drain(chunk, sizeof chunk));
      s = comp->push(e);
    }
    if (s != error_code::ok && status == error_code::ok) status = s;
  }
  error_code f = comp->finish();
  while (f == error_code::buffer_too_small) {
    bytes.insert(bytes.end(), chunk, chunk + comp->drain(chunk, sizeof chunk));
    f = comp->finish();
  }
  if (f != error_code::ok && status == error_code::ok) status = f;
  while (const std::size_t n = comp->drain(chunk, sizeof chunk)) bytes.insert(bytes.end(), chunk, chunk + n);
  return bytes;
}

}  // namespace flow_model
