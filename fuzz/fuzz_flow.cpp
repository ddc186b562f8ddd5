// SPDX-License-Identifier: Apache-2.0
// Target 6: program flow (ete/flow, D9.5) and the instruction classifier. Input:
//   [sel][arch][flip1][flip2][img][24 raw register bytes, if sel & 8]
//   1-3 regions, each [form][space][size:2][value:8] then `size` bytes (fewer at the end)
//   the trace (the rest)
// sel & 7 picks fixed_regs (common.hpp); sel & 8 takes TRCIDR0, 2, 8, DEVARCH, CONFIGR, IDR1
// from the input. flipN & 0x80 flips bit flipN & 31 of TRCIDR0/2/8 or CONFIGR (flipN >> 5 & 3).
// img: 1 + (img & 3) % 3 regions; img & 4 adds a reader callback serving the first region's
// bytes (or a hash) near it, in chunks of (img >> 3) * 9 + 1 bytes (over 256: it claims one
// byte more than asked). Region address by form % 8: 1 near 0, 2 across 2^32, 3 across 2^64,
// 4 overlapping the previous region, others the raw value.
// Checks: instruction ranges are well formed (count >= 1, end != start, 4 bytes per A64/A32
// instruction, 2-4 per T32 one, at most one walk long), bounded work, one end_of_trace, last;
// the whole buffer, random chunks, and chunks after reset() (block cache
// kept) give the same flow and diagnostics, and so do a reader delivering 256 bytes at a
// time and the analysis of one atom at a time (flow_options::atom_at_a_time) and without the
// memo (flow_options::memo); status() agrees
// with validate(). Every word of
// the regions goes through the three classifier entry points.
#include <algorithm>
#include <memory>
#include <vector>

#include <tracecodec/ete/flow/decoder.hpp>

#include "common.hpp"

using namespace fuzz;
namespace arm = tracecodec::arm;

namespace {

constexpr unsigned arch_count = static_cast<unsigned>(arm::arch_version::newest) + 1;

struct reader_state {
  const std::uint8_t* pool = nullptr;
  std::size_t pool_size = 0;
  std::uint64_t base = 0;  // serves [base, base + 128 KiB)
  std::size_t chunk = 1;
  std::uint8_t space = 0;
};

std::size_t read_memory(void* ctx, std::uint64_t address, std::uint8_t space, std::uint8_t* out,
                        std::size_t size) noexcept {
  const auto& r = *static_cast<const reader_state*>(ctx);
  if ((space & r.space) == 0 || address - r.base >= 0x20000) return 0;
  // The memory must not depend on where a read starts: it ends at base + 128 KiB.
  const std::size_t n = std::min<std::uint64_t>({r.chunk, size, r.base + 0x20000 - address});
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t a = address + i;
    out[i] = r.pool_size ? r.pool[a % r.pool_size]
                         : static_cast<std::uint8_t>((a * 0x9e3779b97f4a7c15ull) >> 56);
  }
  return r.chunk > 256 ? size + 1 : n;  // claiming too much: the image must ignore it
}

struct input {
  registers regs{};
  arm::arch_version arch = arm::arch_version::newest;
  memory_region regions[3]{};
  std::size_t count = 0;
  bool has_reader = false;
  reader_state reader{};
  const std::uint8_t* trace = nullptr;
  std::size_t n = 0;
  std::uint64_t seed = 0;
};

std::uint64_t load64(const std::uint8_t* p) { return load32(p) | std::uint64_t{load32(p + 4)} << 32; }

bool parse(const std::uint8_t* d, std::size_t size, input& in) {
  if (size < 5) return false;
  const std::uint8_t* const end = d + size;
  const std::uint8_t* h = d;
  in.arch = static_cast<arm::arch_version>(h[1] % arch_count);
  in.regs = fixed_regs[h[0] & 7];
  d += 5;
  if (h[0] & 8) {
    if (end - d < 24) return false;
    in.regs = {load32(d), load32(d + 4), load32(d + 8), load32(d + 12), load32(d + 16), load32(d + 20)};
    d += 24;
  }
  for (const std::uint8_t f : {h[2], h[3]}) {
    if (!(f & 0x80)) continue;
    std::uint32_t* r[4] = {&in.regs.trcidr0, &in.regs.trcidr2, &in.regs.trcidr8, &in.regs.trcconfigr};
    *r[(f >> 5) & 3] ^= 1u << (f & 31);
  }
  const unsigned wanted = 1 + (h[4] & 3u) % 3;
  while (in.count < wanted && end - d >= 12) {
    memory_region& r = in.regions[in.count];
    const std::uint64_t v = load64(d + 4);
    const std::uint64_t prev = in.count ? in.regions[in.count - 1].address : 0;
    switch (d[0] % 8) {
      case 1: r.address = v & 0xffff; break;
      case 2: r.address = 0xffff0000u + (v & 0x1ffff); break;
      case 3: r.address = (v & 0x1ffff) - 0x10000; break;  // wraps to near 2^64
      case 4: r.address = prev + (v & 0x1fff) - 0x1000; break;
      default: r.address = v; break;
    }
    r.space = d[1];
    r.size = d[2] | static_cast<std::size_t>(d[3]) << 8;
    d += 12;
    if (r.size > static_cast<std::size_t>(end - d)) r.size = static_cast<std::size_t>(end - d);
    r.data = d;
    d += r.size;
    ++in.count;
  }
  if (h[4] & 4) {
    in.has_reader = true;
    in.reader.chunk = (h[4] >> 3) * 9u + 1;
    in.reader.space = h[3] | h[2];
    if (in.count) {
      in.reader.pool = in.regions[0].data;
      in.reader.pool_size = in.regions[0].size;
      in.reader.base = in.regions[0].address - 0x8000;
    }
  }
  in.trace = d;
  in.n = static_cast<std::size_t>(end - d);
  in.seed = size * 0x9e3779b97f4a7c15ull + h[0] + (std::uint64_t{h[4]} << 8);
  return true;
}

// ---- classifier ---------------------------------------------------------------------------

const arm::classifier& classifier_for(arm::arch_version v) {
  static const auto all = [] {
    auto p = std::make_unique<std::vector<arm::classifier>>();
    for (unsigned i = 0; i < arch_count; ++i) p->emplace_back(static_cast<arm::arch_version>(i));
    return p;
  }();
  return (*all)[static_cast<unsigned>(v)];
}

void check_info(const arm::instruction_info& i, arm::instruction_set set) {
  using arm::instruction_type, arm::instruction_subtype;
  FUZZ_CHECK(i.size == 4 || (set == arm::instruction_set::t32 && i.size == 2));
  if (i.type == instruction_type::other) FUZZ_CHECK(i.subtype == instruction_subtype::none);
  if (i.type != instruction_type::branch) FUZZ_CHECK(i.branch_offset == 0);
  if (i.undefined) FUZZ_CHECK(i.type == instruction_type::other);
  FUZZ_CHECK(i.link == (i.subtype == instruction_subtype::link));
  if (i.next_set != set) FUZZ_CHECK(i.type == instruction_type::branch && set != arm::instruction_set::a64);
  if (i.it_block) FUZZ_CHECK(set == arm::instruction_set::t32 && i.size == 2 && i.type == instruction_type::other);
  if (set == arm::instruction_set::a64) FUZZ_CHECK(i.branch_offset % 4 == 0);
}

// A P0 encoding in an older version is the same instruction in the newest one.
void check_newer(const arm::instruction_info& old, const arm::instruction_info& newest) {
  if (old.type != arm::instruction_type::other) FUZZ_CHECK(old == newest);
}

void check_classifier(const input& in) {
  const arm::classifier& c = classifier_for(in.arch);
  const arm::classifier& nc = classifier_for(arm::arch_version::newest);
  for (std::size_t k = 0; k < in.count; ++k) {
    const memory_region& r = in.regions[k];
    for (std::size_t at = 0; at + 4 <= r.size; at += 4) {
      const std::uint32_t w = load32(r.data + at);
      const auto a64 = c.a64(w), a32 = c.a32(w);
      check_info(a64, arm::instruction_set::a64);
      check_info(a32, arm::instruction_set::a32);
      if ((w >> 28) < 0xe) FUZZ_CHECK(a32.conditional);
      const auto first = static_cast<std::uint16_t>(w), second = static_cast<std::uint16_t>(w >> 16);
      const auto t32 = c.t32(first, second);
      check_info(t32, arm::instruction_set::t32);
      FUZZ_CHECK(t32.size == ((first >> 11) >= 0x1d ? 4 : 2));
      if (t32.size == 2) FUZZ_CHECK(c.t32(first, static_cast<std::uint16_t>(~second)) == t32);
      check_newer(a64, nc.a64(w));
      check_newer(a32, nc.a32(w));
      check_newer(t32, nc.t32(first, second));
    }
  }
}

// ---- flow ---------------------------------------------------------------------------------

// One recorder type and one decoder type: the decoder's hot path is force-inlined, so each
// instantiation is a very large function for the sanitizer build to compile.
struct flow_run {
  std::vector<flow_element> flow;
  std::vector<diagnostic> errors;
  void operator()(const flow_element& f) { flow.push_back(f); }
  void operator()(const diagnostic& e) { errors.push_back(e); }
};
using decoder_type = flow_decoder<runtime_config, 256>;  // a small cache: more evictions

struct image_holder {
  program_image image;
  reader_state reader;
  explicit image_holder(const input& in) : image(in.regions, in.count), reader(in.reader) {
    if (in.has_reader) image.set_reader(read_memory, &reader);
  }
};

// Chunk sizes: mostly 1-64 bytes, sometimes up to 4 KiB.
void decode_chunks(decoder_type& dec, const input& in, std::uint64_t x, flow_run& r) {
  for (std::size_t at = 0; at < in.n;) {
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 32;
    const std::size_t want = (x & 7) ? 1 + (x >> 58) : 1 + (x >> 52);
    const std::size_t m = std::min(in.n - at, want);
    dec.decode_part(in.trace + at, m, r, r);
    at += m;
  }
  dec.decode_end(r, r);
}

void check_flow(const input& in, const flow_run& r, error_code status) {
  constexpr std::uint64_t max_walk = flow_walk_limit + flow_block_limit;
  std::uint64_t total = 0;
  FUZZ_CHECK(!r.flow.empty() && r.flow.back().kind == flow_kind::end_of_trace);
  for (std::size_t i = 0; i < r.flow.size(); ++i) {
    const flow_element& f = r.flow[i];
    FUZZ_CHECK(static_cast<unsigned>(f.kind) < flow_kind_count);
    if (f.offset > in.n)
      std::fprintf(stderr, "flow[%zu] (%s) at %llu of %zu trace bytes\n", i, flow_name(f.kind),
                   static_cast<unsigned long long>(f.offset), in.n);
    FUZZ_CHECK(f.offset <= in.n);
    FUZZ_CHECK((f.kind == flow_kind::end_of_trace) == (i + 1 == r.flow.size()));
    if (f.kind != flow_kind::instruction_range) continue;
    FUZZ_CHECK(status == error_code::ok);
    FUZZ_CHECK(f.count >= 1 && f.count <= max_walk);
    FUZZ_CHECK(f.end != f.address);
    FUZZ_CHECK(f.last_size == 4 || (f.isa == arm::instruction_set::t32 && f.last_size == 2));
    // Bytes per instruction, modulo 2^64, or 2^32 for a range within 32-bit addresses.
    const std::uint64_t d64 = f.end - f.address, lo = f.isa == arm::instruction_set::t32 ? 2 : 4;
    const bool in64 = d64 >= lo * f.count && d64 <= 4ull * f.count;
    const std::uint32_t d32 = static_cast<std::uint32_t>(d64);
    const bool in32 = f.address <= 0xffffffffu && f.end <= 0xffffffffu && d32 >= lo * f.count &&
                      d32 <= 4ull * f.count;
    FUZZ_CHECK(in64 || in32);
    total += f.count;
  }
  // Bounded work: at most 32 atoms (or one walk) per trace byte, each at most one walk long.
  FUZZ_CHECK(total <= (in.n + 1) * 32 * max_walk);
  for (const diagnostic& e : r.errors) FUZZ_CHECK(e.code == status || known_decoder_error(e.code) ||
                                                  e.code == error_code::resolution_overflow);
  if (status != error_code::ok)
    FUZZ_CHECK(r.errors.size() == 1 && r.errors[0].code == status && r.errors[0].offset == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  input in;
  if (!parse(data, size, in)) return 0;
  check_classifier(in);

  const flow_options opt{in.arch};
  image_holder img_a(in), img_b(in);
  auto a = std::make_unique<decoder_type>(in.regs, img_a.image, opt);
  auto b = std::make_unique<decoder_type>(in.regs, img_b.image, opt);
  const error_code status = a->status();
  FUZZ_CHECK(status == b->status());
  FUZZ_CHECK((validate(in.regs) != error_code::ok) == (status == error_code::invalid_config));

  flow_run whole;
  a->decode(in.trace, in.n, whole, whole);
  check_flow(in, whole, status);

  flow_run chunked;
  decode_chunks(*b, in, in.seed, chunked);
  FUZZ_CHECK(chunked.flow == whole.flow);
  FUZZ_CHECK(chunked.errors == whole.errors);

  // Memory from the reader does not depend on how many bytes it delivers at a time.
  if (in.has_reader && in.reader.chunk < program_image::fetch_size) {
    input full = in;
    full.reader.chunk = program_image::fetch_size;
    image_holder img_c(full);
    flow_run c;
    std::make_unique<decoder_type>(in.regs, img_c.image, opt)->decode(in.trace, in.n, c, c);
    FUZZ_CHECK(c.flow == whole.flow);
  }

  // The general path one atom at a time (the reference for the loop over an atom element's
  // atoms), and the loop without the memo of atom elements, give the same flow.
  for (const bool one_at_a_time : {true, false}) {
    flow_options other = opt;
    if (one_at_a_time) other.atom_at_a_time = true;
    else other.memo = false;
    image_holder img_d(in);
    flow_run d;
    std::make_unique<decoder_type>(in.regs, img_d.image, other)->decode(in.trace, in.n, d, d);
    FUZZ_CHECK(d.flow == whole.flow);
    FUZZ_CHECK(d.errors == whole.errors);
  }

  // A second session on the same decoder (its block cache kept): the same, but for the reason
  // of the opening no_sync.
  a->reset();
  flow_run again;
  decode_chunks(*a, in, ~in.seed, again);
  FUZZ_CHECK(again.errors == whole.errors);
  FUZZ_CHECK(again.flow.size() == whole.flow.size());
  // (A session that got no byte is only its end_of_trace: no no_sync to compare.)
  if (whole.flow[0].kind == flow_kind::no_sync) {
    FUZZ_CHECK(again.flow[0].kind == flow_kind::no_sync && again.flow[0].reason == sync_reason::new_session);
    again.flow[0].reason = whole.flow[0].reason;
  }
  FUZZ_CHECK(again.flow == whole.flow);
  return 0;
}
