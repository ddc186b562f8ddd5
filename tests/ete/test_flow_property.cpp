// SPDX-License-Identifier: Apache-2.0
// End-to-end property test of the program-flow layer (D9.5): random programs as real A64, A32
// and T32 machine code, executed by an instruction-level PE model (flow_model.hpp) whose trace
// unit emits the stage-1 elements; the compressor turns them into bytes, flow_decoder turns the
// bytes back into program flow over the image, and the instruction ranges must be exactly the
// executed instructions, in order, with the exceptions, exception returns, timestamps and cycle
// counts between the right instructions.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "flow_model.hpp"

using namespace flow_model;

namespace {

struct flow_case {
  const char* name;
  registers regs;
  instruction_set set;
  unsigned tu_depth;
};

// TRCIDR0 0x0801cea1 (COMMOPT 0) / 0x2801cea1 (COMMOPT 1): RETSTACK, TRCCCI, 64-bit
// timestamps. TRCCONFIGR: RS bit 12 (0x1000), TS bit 11 (0x800), CCI bit 4 (0x10).
const flow_case cases[] = {
    {"a64-maxspec0-rs-cci-ts", {0x2801cea1, 0xd0001088, 0, 0x47705a13, 0x1811, 0}, instruction_set::a64, 15},
    {"a64-maxspec0-nors", {0x2801cea1, 0xd0001088, 0, 0x47705a13, 0x0801, 0}, instruction_set::a64, 15},
    {"a64-maxspec0-rs4-commopt0-cci", {0x0801cea1, 0xd0001088, 0, 0x47705a13, 0x1011, 0}, instruction_set::a64, 4},
    {"a32-maxspec0-rs-cci-ts", {0x2801cea1, 0xd0001088, 0, 0x47705a13, 0x1811, 0}, instruction_set::a32, 15},
    {"a32-maxspec0-nors-cci", {0x0801cea1, 0xd0001088, 0, 0x47705a13, 0x0011, 0}, instruction_set::a32, 15},
    {"t32-maxspec0-rs-ts", {0x2801cea1, 0xd0001088, 0, 0x47705a13, 0x1801, 0}, instruction_set::t32, 15},
    {"t32-maxspec0-nors-cci", {0x2801cea1, 0xd0001088, 0, 0x47705a13, 0x0011, 0}, instruction_set::t32, 15},
    {"a64-maxspec15-rs-cci-ts", {0x0801cea1, 0xd0001088, 15, 0x47705a13, 0x1811, 0}, instruction_set::a64, 15},
    {"a32-maxspec6-rs-ts", {0x0801cea1, 0xd0001088, 6, 0x47705a13, 0x1801, 0}, instruction_set::a32, 15},
    {"t32-maxspec255-rs-cci", {0x2801cea1, 0xd0001088, 255, 0x47705a13, 0x1011, 0}, instruction_set::t32, 15},
};


std::string describe(const program& p, const insn& i) {
  for (const memory_region& r : p.regions)
    if (i.addr >= r.address && i.addr - r.address < r.size) {
      char b[64];
      const std::uint8_t* d = r.data + (i.addr - r.address);
      std::snprintf(b, sizeof b, "bytes %02x%02x %02x%02x", d[1], d[0], i.size > 2 ? d[3] : 0, i.size > 2 ? d[2] : 0);
      return b;
    }
  return "not in the image";
}

// Compares the flow with the execution; returns an empty string or what differs first.
std::string check_flow(const program& p, const run_result& run, const std::vector<flow_element>& flow,
                       std::size_t& ranges) {
  char buf[256];
  std::size_t k = 0, ev = 0;
  for (std::size_t n = 0; n < flow.size(); ++n) {
    const flow_element& f = flow[n];
    switch (f.kind) {
      case flow_kind::instruction_range: {
        ++ranges;
        if (f.isa != p.set) return "range in the wrong instruction set";
        if (k + f.count > run.executed.size() || f.count == 0) {
          std::snprintf(buf, sizeof buf, "flow[%zu]: range %llx count %u beyond the %zu executed (at %zu)", n,
                        static_cast<unsigned long long>(f.address), f.count, run.executed.size(), k);
          return buf;
        }
        std::uint64_t a = f.address;
        for (std::uint32_t j = 0; j < f.count; ++j) {
          const insn& i = p.code[static_cast<std::size_t>(run.executed[k + j])];
          if (i.addr != a) {
            std::snprintf(buf, sizeof buf, "flow[%zu]: instruction %zu executed at %llx, range %llx+%u says %llx", n,
                          k + j, static_cast<unsigned long long>(i.addr), static_cast<unsigned long long>(f.address),
                          j, static_cast<unsigned long long>(a));
            return buf;
          }
          a += i.size;
        }
        if (a != f.end) {
          const insn& l = p.code[static_cast<std::size_t>(run.executed[k + f.count - 1])];
          std::snprintf(buf, sizeof buf, "flow[%zu]: range %llx+%u ends at %llx, its last instruction (op %d, %u bytes, %s) ends at %llx", n,
                        static_cast<unsigned long long>(f.address), f.count, static_cast<unsigned long long>(f.end),
                        static_cast<int>(l.kind), l.size, describe(p, l).c_str(), static_cast<unsigned long long>(a));
          return buf;
        }
        k += f.count;
        break;
      }
      case flow_kind::exception:
      case flow_kind::exception_return:
      case flow_kind::timestamp:
      case flow_kind::cycle_count: {
        if (ev >= run.events.size()) return std::string("unexpected ") + flow_name(f.kind);
        const event& e = run.events[ev++];
        const std::uint64_t v = f.kind == flow_kind::exception ? f.address
                                : f.kind == flow_kind::timestamp ? f.timestamp
                                : f.kind == flow_kind::cycle_count ? f.count : 0;
        if (e.kind != f.kind || e.at != k || e.value != v) {
          std::snprintf(buf, sizeof buf, "flow[%zu]: %s %llx after %zu instructions, expected %s %llx after %zu", n,
                        flow_name(f.kind), static_cast<unsigned long long>(v), k, flow_name(e.kind),
                        static_cast<unsigned long long>(e.value), e.at);
          return buf;
        }
        break;
      }
      case flow_kind::no_sync:
        if (n != 0 || f.reason != sync_reason::start) return "no_sync in the middle";
        break;
      case flow_kind::trace_on:
      case flow_kind::context: break;
      case flow_kind::end_of_trace:
        if (n + 1 != flow.size()) return "end_of_trace before the end";
        break;
      default: return std::string("unexpected flow element ") + flow_name(f.kind);
    }
  }
  if (k != run.executed.size()) {
    std::snprintf(buf, sizeof buf, "%zu of %zu executed instructions in the flow", k, run.executed.size());
    return buf;
  }
  if (ev != run.events.size()) return "events missing from the flow";
  return {};
}

}  // namespace

TEST_CASE("flow property test: decoding the trace of random programs gives the executed path") {
  const auto t0 = std::chrono::steady_clock::now();
  std::size_t total = 0, total_bytes = 0, total_ranges = 0, total_omitted = 0, total_exc = 0,
              total_mispredicts = 0, total_discarded = 0, total_late = 0, max_depth = 0, programs = 0;
  std::size_t per_set[3] = {};
  test::splitmix64 seeds{0x5eed'f10e};
  for (const flow_case& fc : cases) {
    const std::string name = fc.name;
    CAPTURE(name);
    REQUIRE(validate(fc.regs) == error_code::ok);
    for (int prog = 0; prog < 16; ++prog) {
      CAPTURE(prog);
      choices ch{test::splitmix64{seeds.next()}};
      const program p = make_program(fc.set, ch);
      run_options o;
      o.instructions = 25000;
      o.tu_stack_depth = fc.tu_depth;
      const run_result res = run(p, fc.regs, ch, o);
      error_code cs;
      const std::vector<std::uint8_t> bytes = compress(fc.regs, res.stream, cs);
      REQUIRE(cs == error_code::ok);

      program_image image(p.regions.data(), p.regions.size());
      auto dec = std::make_unique<flow_decoder<>>(fc.regs, image);
      REQUIRE(dec->status() == error_code::ok);
      std::vector<flow_element> flow;
      std::size_t errors = 0;
      dec->decode(bytes.data(), bytes.size(), [&](const flow_element& f) { flow.push_back(f); },
                  [&](const diagnostic&) { ++errors; });
      CHECK(errors == 0);
      std::size_t ranges = 0;
      const std::string diff = check_flow(p, res, flow, ranges);
      if (!diff.empty() && std::getenv("TRACECODEC_COMMITTED")) {  // the analyzer alone
        auto an = std::make_unique<flow_analyzer<>>(fc.regs, image);
        std::vector<flow_element> f2;
        auto out = [&](const flow_element& f) { f2.push_back(f); };
        an->begin(0, out);
        for (const element& e : res.committed) an->process(e, out);
        an->end(0, out);
        std::size_t r2 = 0;
        std::printf("analyzer on the committed elements: %s\n", check_flow(p, res, f2, r2).c_str());
      }
      if (!diff.empty() && std::getenv("TRACECODEC_EXEC")) {
        for (std::size_t j = 0; j < res.executed.size(); ++j) {
          const insn& i = p.code[static_cast<std::size_t>(res.executed[j])];
          std::printf("exec[%zu] %llx op %d fn %d\n", j, static_cast<unsigned long long>(i.addr), static_cast<int>(i.kind), i.fn);
        }
        for (const element& e : res.stream)
          std::printf("elem %s taken=%d addr=%llx count=%u\n", element_name(e.kind), e.taken, static_cast<unsigned long long>(e.address), e.count);
      }
      if (!diff.empty() && std::getenv("TRACECODEC_DEBUG")) {
        for (const flow_element& f : flow)
          if (f.kind != flow_kind::instruction_range)
            std::printf("%s %llx\n", flow_name(f.kind), static_cast<unsigned long long>(f.address));
          else
            std::printf("range %llx-%llx %u taken=%d\n", static_cast<unsigned long long>(f.address),
                        static_cast<unsigned long long>(f.end), f.count, f.taken);
      }
      CAPTURE(diff);
      REQUIRE(diff.empty());
      total += res.executed.size();
      per_set[static_cast<unsigned>(fc.set)] += res.executed.size();
      total_bytes += bytes.size();
      total_ranges += ranges;
      total_omitted += res.returns_omitted;
      total_exc += res.exceptions;
      total_mispredicts += res.mispredicts;
      total_discarded += res.targets_discarded;
      total_late += res.late_mispredicts;
      max_depth = std::max(max_depth, res.max_depth);
      ++programs;
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("flow property test: " << total << " instructions executed and matched (A64 " << per_set[0]
                                 << ", A32 " << per_set[1] << ", T32 " << per_set[2] << "), "
                                 << programs << " programs, " << std::size(cases) << " configurations, "
                                 << total_ranges << " ranges, " << total_bytes << " trace bytes, "
                                 << total_exc << " exceptions, " << total_omitted
                                 << " target addresses omitted by return stack matches, "
                                 << total_mispredicts << " mispredicts (" << total_discarded
                                 << " after a Target Address they discard, " << total_late
                                 << " after a Timestamp or Cycle Count under MAXSPEC 0), call depth up to " << max_depth
                                 << ", " << secs << " s");
  CHECK(total >= 1000000);
  CHECK(total_discarded >= 1000);  // D6.9.14 is exercised
  CHECK(total_late >= 1000);       // I_MDSCN is exercised
}
