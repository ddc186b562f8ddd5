// SPDX-License-Identifier: Apache-2.0
// Compress elements to packets, then decode them back. A producer that knows what the PE did
// (a simulator, an emulator, a trace converter) hands the element compressor one element at a
// time; it writes the shortest packet stream the configuration allows (atoms packed, short
// address forms against the address history, implied commits) into a fixed staging buffer
// that the caller drains. The element reader turns the bytes back into the same elements:
// one element per atom, or one per atom packet (atom runs).
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include <tracecodec/ete/element/compressor.hpp>
#include <tracecodec/ete/element/reader.hpp>

using namespace tracecodec::ete;

namespace {

// ETE 1.3, COMMOPT 0, MAXSPEC 15: commits are implied or folded into other packets.
constexpr registers regs = presets::ete_1_3_spec;
using unit = fixed_config<regs>;

constexpr element make(element_kind kind, std::uint64_t address = 0) {
  element e{};
  e.kind = kind;
  e.address = address;
  return e;
}
constexpr element atom(bool taken) {
  element e = make(element_kind::atom);
  e.taken = taken;
  e.p0 = true;  // a P0 element: it counts towards the speculation depth
  return e;
}

// A loop of 20 iterations at EL1, then an IRQ, as committed (resolved) elements.
struct program {
  element elements[64];
  std::size_t count = 0;
  constexpr void add(const element& e) { elements[count++] = e; }
};
constexpr program make_program() {
  program p;
  p.add(make(element_kind::trace_info));
  element ctx = make(element_kind::context);
  ctx.ctx.el = 1;
  ctx.ctx.sf = true;
  ctx.ctx.ns = true;
  p.add(ctx);
  p.add(make(element_kind::target_address, 0xffff800010081000u));
  for (int i = 0; i < 20; ++i) p.add(atom(true));  // the loop's branch, taken 20 times ...
  p.add(atom(false));                              // ... then not
  p.add(make(element_kind::target_address, 0xffff800010081040u));
  element irq = make(element_kind::exception, 0xffff800010081048u);  // preferred return address
  irq.exception_type = 0x0e;
  irq.p0 = true;
  p.add(irq);
  p.add(make(element_kind::target_address, 0xffff800010000480u));  // the vector
  p.add(atom(true));
  return p;
}
constexpr program input = make_program();

std::uint8_t out[4096];  // the trace; drained into in staging-buffer pieces
std::size_t used = 0;

struct sink {  // stands for a file or a trace buffer
  void write(const std::uint8_t* data, std::size_t n) {
    for (std::size_t i = 0; i < n && used < sizeof out; ++i) out[used++] = data[i];
  }
} file;

}  // namespace

int main() {
  const element* const elements = input.elements;
  const std::size_t count = input.count;
  std::uint8_t buf[256];
  bool ok = true;
  {
    // [readme:compress]
    compressor_options options;
    options.input = input_kind::resolved;  // committed elements (stage1: with commits, cancels)
    compressor<unit> comp{options};        // options.sync_interval: periodic A-Sync + Trace Info
    for (std::size_t i = 0; i < count; ++i) {
      error_code r;
      while ((r = comp.push(elements[i])) == error_code::buffer_too_small)
        file.write(buf, comp.drain(buf, sizeof buf));  // staging full: drain, push again
      if (r != error_code::ok) ok = false;             // unencodable: error_name(r) says why
    }
    if (comp.finish(true) != error_code::ok) ok = false;  // true: every P0 element committed
    while (const std::size_t n = comp.drain(buf, sizeof buf)) file.write(buf, n);
    // [/readme:compress]
  }

  // Back to elements: the committed stream, one element per atom.
  static element_reader<unit> reader;  // a fixed configuration sizes its queue from MAXSPEC
  std::size_t matched = 0, errors = 0;
  reader.decode(out, used,
                [&](const element& e) {
                  element want = matched < count ? elements[matched] : element{};
                  want.offset = e.offset;
                  if (want.kind == element_kind::trace_info) want.count = e.count;  // depth: the compressor's
                  if (matched < count && e == want) ++matched;
                  else ok = false;
                },
                [&](const diagnostic&) { ++errors; });

  // The same bytes with atom runs: one element per atom packet, far fewer elements.
  unsigned branches = 0, taken = 0, atom_elements = 0;
  auto follow_branch = [&](bool t) { ++branches, taken += t; };
  reader.reset();
  const std::uint8_t* data = out;
  const std::size_t size = used;
  // [readme:atom-runs]
  reader.atom_runs(true);
  reader.decode(data, size, [&](const element& e) {
    if (e.kind == element_kind::atom)
      for (unsigned i = 0; i < atom_count(e); ++i) follow_branch(atom_taken(e, i));
  }, [](const diagnostic&) {});
  // [/readme:atom-runs]
  reader.reset();
  reader.decode(out, used, [&](const element& e) { atom_elements += e.kind == element_kind::atom; },
                [](const diagnostic&) {});

  std::printf("%zu elements -> %zu bytes -> %zu elements back (%u atoms, %u taken, in %u atom runs)\n",
              count, used, matched, branches, taken, atom_elements);
  ok = ok && errors == 0 && matched == count && branches == 22 && taken == 21 && atom_elements < 22;
  if (!ok) std::fprintf(stderr, "compress_elements: the elements did not come back\n");
  return ok ? 0 : 1;
}
