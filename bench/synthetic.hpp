// SPDX-License-Identifier: Apache-2.0
// A synthetic ETE trace made by the library's own element compressor from a simulated program,
// so benchmarks run without ../shared. The program is a fixed random call graph of functions
// whose basic blocks end in conditional branches (loop back-edges taken a fixed number of
// times, biased forward branches), direct and indirect calls, and returns; interrupts,
// timestamps and context switches come at intervals. Like real trace it repeats: atoms and
// short or exact-match addresses make most of the packets.
#pragma once

#include <tracecodec/ete/element/compressor.hpp>
#include <tracecodec/tracecodec.hpp>

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

namespace bench {
using namespace tracecodec::ete;

inline constexpr registers synthetic_regs = presets::ete_1_1_tsmark;

inline std::vector<std::uint8_t> synthetic_trace(std::size_t min_bytes, std::uint64_t seed = 1) {
  std::mt19937_64 rng(seed);
  // The program: functions of 4-40 blocks.
  struct block {
    std::uint8_t kind;       // 0 conditional, 1 loop back-edge, 2 call, 3 indirect call, 4 return
    std::uint16_t trip;      // loop trip count
    std::uint16_t callee;    // for calls
    std::uint8_t bias;       // conditional: taken when (counter % 8) < bias
  };
  struct function {
    std::uint64_t base;
    std::vector<block> blocks;
  };
  std::vector<function> prog(200);
  for (std::size_t f = 0; f < prog.size(); ++f) {
    prog[f].base = 0x0000aaaa00400000ull + (rng() % 0x400000) * 4;
    const unsigned n = 4 + static_cast<unsigned>(rng() % 37);
    for (unsigned b = 0; b < n; ++b) {
      block k{};
      const unsigned r = static_cast<unsigned>(rng() % 100);
      k.kind = r < 55 ? 0 : r < 75 ? 1 : r < 88 ? 2 : r < 93 ? 3 : 0;
      k.trip = static_cast<std::uint16_t>(2 + rng() % 30);
      k.callee = static_cast<std::uint16_t>(rng() % prog.size());
      k.bias = static_cast<std::uint8_t>(rng() % 9);
      prog[f].blocks.push_back(k);
    }
    prog[f].blocks.back().kind = 4;
  }

  auto comp = std::make_unique<compressor<fixed_config<synthetic_regs>>>();
  std::vector<std::uint8_t> out;
  std::uint8_t buf[4096];
  auto push = [&](const element& e) {
    while (comp->push(e) == error_code::buffer_too_small)
      out.insert(out.end(), buf, buf + comp->drain(buf, sizeof buf));
  };
  auto atom = [&](bool taken) {
    element e{};
    e.kind = element_kind::atom;
    e.taken = taken;
    e.p0 = true;
    push(e);
  };
  auto target = [&](std::uint64_t a) {
    element e{};
    e.kind = element_kind::target_address;
    e.address = a;
    push(e);
  };

  element ti{};
  ti.kind = element_kind::trace_info;
  push(ti);
  element on{};
  on.kind = element_kind::trace_on;
  push(on);
  element cx{};
  cx.kind = element_kind::context;
  cx.ctx.el = 0;
  cx.ctx.sf = true;
  cx.ctx.ns = true;
  push(cx);
  target(prog[0].base);

  struct frame {
    std::uint16_t f;
    std::uint16_t b;
    std::uint16_t loops;
  };
  std::vector<frame> stack{{0, 0, 0}};
  std::uint64_t counter = 0, ts = 0x100000, instructions = 0;
  while (out.size() + comp->pending() < min_bytes) {
    frame& fr = stack.back();
    const function& fn = prog[fr.f];
    const block& bl = fn.blocks[fr.b];
    ++counter;
    instructions += 6;
    if (instructions % 4000 < 6) {  // an interrupt: exception, handler, return
      element x{};
      x.kind = element_kind::exception;
      x.exception_type = 0x0e;
      x.address = fn.base + 4u * fr.b;
      x.p0 = true;
      push(x);
      target(0xffff800010081000ull);
      atom(true);
      atom(false);
      atom(true);
      target(fn.base + 4u * fr.b);
    }
    if (counter % 1500 == 0) {
      ts += 1000 + rng() % 200;
      element t{};
      t.kind = element_kind::timestamp;
      t.timestamp = ts;
      push(t);
    }
    if (counter % 50000 == 0) {
      element c{};
      c.kind = element_kind::context;
      c.ctx = cx.ctx;
      c.ctx.context_id = static_cast<std::uint32_t>(counter / 50000);
      push(c);
    }
    switch (bl.kind) {
      case 0: {  // conditional forward branch, skipping the next block when taken
        const bool taken = (counter % 8) < bl.bias;
        atom(taken);
        fr.b = static_cast<std::uint16_t>(fr.b + (taken ? 2 : 1));
        break;
      }
      case 1: {  // loop back-edge
        const bool again = fr.loops + 1u < bl.trip;
        atom(again);
        if (again) {
          ++fr.loops;
          fr.b = fr.b > 2 ? static_cast<std::uint16_t>(fr.b - 2) : 0;
        } else {
          fr.loops = 0;
          ++fr.b;
        }
        break;
      }
      case 2:  // direct call
      case 3:  // indirect call: the target is traced
        atom(true);
        if (bl.kind == 3) target(prog[bl.callee].base);
        ++fr.b;
        if (stack.size() < 24) {
          stack.push_back({bl.callee, 0, 0});
        }
        break;
      default:  // return: an indirect branch to the caller
        atom(true);
        if (stack.size() > 1) {
          stack.pop_back();
          const frame& caller = stack.back();
          target(prog[caller.f].base + 4u * caller.b);
        } else {
          stack.back() = {static_cast<std::uint16_t>(rng() % prog.size()), 0, 0};
          target(prog[stack.back().f].base);
        }
        break;
    }
    if (stack.back().b >= prog[stack.back().f].blocks.size()) stack.back().b = 0;
  }
  comp->finish(true);
  while (const std::size_t n = comp->drain(buf, sizeof buf)) out.insert(out.end(), buf, buf + n);
  return out;
}

}  // namespace bench
