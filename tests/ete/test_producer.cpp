// SPDX-License-Identifier: Apache-2.0
// The producer API (ete/element/producer.hpp): random sessions of producer calls, decoded back
// by the element reader, must give the elements each call stands for (written down here from
// the element definitions, D2, not taken from the producer); chunks arrive in order and fill
// the caller's buffer; the bytes equal those of the staging-buffer compressor fed the same
// elements.
#include <doctest/doctest.h>

#include <tracecodec/ete/element/producer.hpp>
#include <tracecodec/ete/element/reader.hpp>

#include <cstdint>
#include <vector>

#include "../common/element_fields.hpp"
#include "../common/random.hpp"

namespace {
using namespace tracecodec::ete;

using test::element_fields;
using test::fields_of;

struct chunks {
  std::vector<std::uint8_t> bytes;
  std::vector<std::size_t> sizes;
};
void collect(void* c, const std::uint8_t* data, std::size_t n) noexcept {
  auto* out = static_cast<chunks*>(c);
  out->bytes.insert(out->bytes.end(), data, data + n);
  out->sizes.push_back(n);
}

std::vector<element_fields> decode_view(const registers& r, const std::vector<std::uint8_t>& bytes,
                              std::size_t& errors) {
  std::vector<element_fields> out;
  element_reader<> reader(r);
  reader.decode(
      bytes.data(), bytes.size(), [&](const element& e) { out.push_back(fields_of(e)); },
      [&](const diagnostic&) { ++errors; });
  return out;
}

// One random session: the calls made, the elements they stand for, and the elements fed to a
// staging-buffer compressor for the byte comparison.
struct session {
  std::vector<element_fields> expected;
  std::vector<element> elements;
};

// Makes random producer calls on `p` (a fixed or run-time producer) and records what each
// stands for. AArch64 (A64) or AArch32 (A32/T32) as `aarch64` says.
template <class Producer>
session random_session(Producer& p, test::splitmix64& rng, bool aarch64, unsigned calls,
                       unsigned numevent, bool with_sync) {
  session s;
  // An element a call stands for: fed to the plain compressor, and expected back.
  auto add = [&](const element& e) {
    s.elements.push_back(e);
    s.expected.push_back(fields_of(e));
  };
  auto el = [&](element_kind k) {
    element e{};
    e.kind = k;
    return e;
  };
  auto add_target = [&](std::uint64_t a, bool t32) {
    element t = el(element_kind::target_address);
    t.address = a;
    t.sub_isa = t32 ? isa::is1 : isa::is0;
    add(t);
  };
  auto add_context = [&](const context& c) {
    element e = el(element_kind::context);
    e.ctx = c;
    add(e);
  };
  auto add_atom = [&](bool t) {
    element a = el(element_kind::atom);
    a.taken = t;
    a.p0 = true;
    add(a);
  };
  const std::uint64_t base = aarch64 ? 0xffff800010000000u : 0x00010000u;
  bool t32 = !aarch64;
  auto code_address = [&](bool thumb) {
    std::uint64_t a = base + (rng.next() % 0x4000) * 2;
    if (!thumb) a &= ~std::uint64_t{3};
    // Near the last address (short address forms) or anywhere.
    return a;
  };
  context ctx{};
  ctx.el = aarch64 ? 1 : 0;
  ctx.ns = true;
  ctx.sf = aarch64;
  ctx.context_id = 0x10;
  ctx.vmid = 0;
  trace_start st;
  st.address = code_address(t32);
  st.set = aarch64 ? code_set::a64 : code_set::t32;
  st.ctx = ctx;
  REQUIRE(p.start(st) == error_code::ok);
  add(el(element_kind::trace_info));
  add(el(element_kind::trace_on));
  add_context(ctx);
  add_target(st.address, t32);
  std::uint64_t ts = 1000;
  for (unsigned i = 0; i < calls; ++i) {
    const unsigned what = static_cast<unsigned>(rng.next() % 100);
    if (what < 55) {  // loops: mostly taken
      const bool taken = rng.next() % 8 != 0;
      REQUIRE(p.branch(taken) == error_code::ok);
      add_atom(taken);
    } else if (what < 62) {
      const unsigned n = 1 + static_cast<unsigned>(rng.next() % 32);
      const auto bits = static_cast<std::uint32_t>(rng.next());
      REQUIRE(p.branches(bits, n) == error_code::ok);
      for (unsigned k = 0; k < n; ++k) add_atom((bits >> k) & 1u);
    } else if (what < 72) {
      const std::uint64_t to = code_address(t32);
      // Interworking addresses carry the T32 state in bit 0: the producer drops it.
      REQUIRE(p.indirect_branch(to | (t32 && rng.next() % 2 ? 1u : 0u)) == error_code::ok);
      add_atom(true);
      add_target(to, t32);
    } else if (what < 76) {
      const std::uint64_t ret = code_address(t32), handler = base + 0x100 * (rng.next() % 16);
      const std::uint16_t type = rng.next() % 2 ? exception_number::irq : exception_number::call;
      REQUIRE(p.exception(type, ret, handler) == error_code::ok);
      element x = el(element_kind::exception);
      x.exception_type = type;
      x.address = ret;
      x.sub_isa = t32 ? isa::is1 : isa::is0;
      x.p0 = true;
      add(x);
      add_target(handler, t32);
    } else if (what < 79) {
      const std::uint64_t to = code_address(t32);
      REQUIRE(p.exception_return(to) == error_code::ok);
      add_atom(true);
      add_target(to, t32);
    } else if (what < 82) {
      ctx.context_id = static_cast<std::uint32_t>(rng.next() % 4);
      ctx.vmid = static_cast<std::uint32_t>(rng.next() % 3);
      const std::uint64_t to = code_address(t32);
      REQUIRE(p.context_change(ctx, to, aarch64 ? code_set::a64 : code_set::t32) == error_code::ok);
      add_context(ctx);
      add_target(to, t32);
    } else if (what < 88) {
      ts += 1 + rng.next() % (rng.next() % 4 == 0 ? 1u << 20 : 64u);
      REQUIRE(p.timestamp(ts) == error_code::ok);
      element e = el(element_kind::timestamp);
      e.timestamp = ts;
      add(e);
    } else if (what < 94) {
      const unsigned n = static_cast<unsigned>(rng.next() % numevent);
      REQUIRE(p.event(n) == error_code::ok);
      element e = el(element_kind::event);
      e.number = static_cast<std::uint8_t>(n);
      add(e);
    } else if (what < 96 && with_sync) {
      const std::uint64_t next = code_address(t32);
      REQUIRE(p.sync(next) == error_code::ok);
      add(el(element_kind::trace_info));
      add_context(ctx);
      add_target(next, t32);
    } else {
      const auto cycles = static_cast<std::uint32_t>(1 + rng.next() % 5000);
      REQUIRE(p.cycle_count(cycles) == error_code::ok);
      element e = el(element_kind::cycle_count);
      e.cycles = cycles;
      add(e);
    }
  }
  REQUIRE(p.flush() == error_code::ok);
  return s;
}

}  // namespace

TEST_CASE("producer: random sessions decode to the elements of the calls, in chunks") {
  // ETE 1.0 (COMMOPT 1, cycle counting, 64-bit timestamps, 32-bit CID and VMID) and ETE 1.3
  // with speculation (COMMOPT 0, MAXSPEC 15: commits implied or in Cycle Count packets).
  const registers units[] = {presets::ete_1_0, presets::ete_1_3_spec};
  test::splitmix64 rng{19};
  std::size_t calls = 0, bytes = 0, chunk_count = 0;
  for (const registers& r : units) {
    const config c = config::from(r);
    for (const std::size_t size : {std::size_t{32}, std::size_t{33}, std::size_t{61},
                                   std::size_t{256}, std::size_t{4096}}) {
      for (int round = 0; round < 12; ++round) {
        const bool aarch64 = round % 3 != 2;
        chunks got;
        std::vector<std::uint8_t> buffer(size);
        producer<> p(r, buffer.data(), buffer.size(), collect, &got);
        REQUIRE(p.status() == error_code::ok);
        const unsigned n = 50 + static_cast<unsigned>(rng.next() % 400);
        const session s = random_session(p, rng, aarch64, n, c.numevent, true);
        CAPTURE(size);
        CAPTURE(round);
        // Every chunk but the last was handed over because the next packet might not fit.
        for (std::size_t i = 0; i < got.sizes.size(); ++i) {
          CHECK(got.sizes[i] <= size);
          if (i + 1 < got.sizes.size()) CHECK(got.sizes[i] > size - compressor_output::min_size);
        }
        CHECK(p.bytes_out() == got.bytes.size());
        std::size_t errors = 0;
        const std::vector<element_fields> back = decode_view(r, got.bytes, errors);
        CHECK(errors == 0);
        CHECK(back == s.expected);
        calls += n;
        bytes += got.bytes.size();
        chunk_count += got.sizes.size();
      }
    }
  }
  MESSAGE(calls << " producer calls, " << bytes << " bytes in " << chunk_count << " chunks");
}

TEST_CASE("producer: the same bytes as the staging-buffer compressor") {
  // The sink form writes exactly what push() and drain() would: chunking changes nothing.
  const registers r = presets::ete_1_0;
  test::splitmix64 rng{23};
  for (int round = 0; round < 20; ++round) {
    chunks got;
    std::uint8_t buffer[40];
    producer<fixed_config<presets::ete_1_0>> p(buffer, sizeof buffer, collect, &got);
    const session s =
        random_session(p, rng, round % 2 == 0, 300, config::from(r).numevent, false);
    compressor_options o;
    o.input = input_kind::resolved;
    compressor<fixed_config<presets::ete_1_0>> plain(o);
    std::vector<std::uint8_t> bytes;
    std::uint8_t out[1024];
    for (const element& e : s.elements) {
      error_code ec = plain.push(e);
      if (ec == error_code::buffer_too_small) {
        bytes.insert(bytes.end(), out, out + plain.drain(out, sizeof out));
        ec = plain.push(e);
      }
      REQUIRE(ec == error_code::ok);
    }
    REQUIRE(plain.finish(true) == error_code::ok);
    bytes.insert(bytes.end(), out, out + plain.drain(out, sizeof out));
    CAPTURE(round);
    CHECK(bytes == got.bytes);
  }
}

TEST_CASE("producer: refusals") {
  chunks got;
  std::uint8_t small[compressor_output::min_size - 1];
  producer<fixed_config<presets::ete_1_0>> too_small(small, sizeof small, collect, &got);
  CHECK(too_small.status() == error_code::buffer_too_small);
  CHECK(too_small.start(trace_start{}) == error_code::buffer_too_small);
  std::uint8_t buffer[64];
  producer<fixed_config<presets::ete_1_0>> no_sink(buffer, sizeof buffer, nullptr);
  CHECK(no_sink.status() == error_code::buffer_too_small);
  producer<> invalid(registers{}, buffer, sizeof buffer, collect, &got);
  CHECK(invalid.status() == error_code::invalid_config);
  CHECK(invalid.start(trace_start{}) == error_code::invalid_config);
  CHECK(invalid.timestamp(1) == error_code::unencodable);  // (not started)

  producer<fixed_config<presets::ete_1_0>> p(buffer, sizeof buffer, collect, &got);
  // Before start() (a decoder needs its Trace Info first), every event is refused.
  CHECK(p.branch(true) == error_code::unencodable);
  CHECK(p.branches(1, 1) == error_code::unencodable);
  CHECK(p.indirect_branch(0x1000) == error_code::unencodable);
  CHECK(p.exception(exception_number::irq, 0x1000, 0x2000) == error_code::unencodable);
  CHECK(p.exception_return(0x1000) == error_code::unencodable);
  CHECK(p.context_change(context{.sf = true}, 0x1000, code_set::a64) == error_code::unencodable);
  CHECK(p.timestamp(1) == error_code::unencodable);
  CHECK(p.cycle_count(1) == error_code::unencodable);
  CHECK(p.event(0) == error_code::unencodable);
  CHECK(p.sync(0x1000) == error_code::unencodable);
  CHECK(p.bytes_out() == 0);
  REQUIRE(p.start(trace_start{}) == error_code::ok);
  CHECK(p.branches(0, 0) == error_code::unencodable);
  CHECK(p.branches(0, 33) == error_code::unencodable);
  CHECK(p.event(config::from(presets::ete_1_0).numevent) == error_code::unencodable);
  CHECK(p.branches(0xffffffffu, 32) == error_code::ok);
  // An A64 address that is not word aligned cannot be traced: refused before anything is
  // written, as are exception numbers above 31 (ETMv4 M profile only) and EL above 3.
  const std::uint64_t before = p.bytes_out();
  CHECK(p.indirect_branch(0x1002) == error_code::unencodable);
  CHECK(p.exception(32, 0x1000, 0x2000) == error_code::unencodable);
  CHECK(p.exception(0x18, 0x1000, 0x2000) == error_code::unencodable);  // Transaction Failure
  CHECK(p.exception(0x05, 0x1000, 0x2000) == error_code::unencodable);  // reserved
  CHECK(p.exception(exception_number::irq, 0x1001, 0x2000) == error_code::unencodable);
  context bad{};
  bad.el = 4;
  CHECK(p.context_change(bad, 0x1000, code_set::a64) == error_code::unencodable);
  // An instruction set that is not the context's: A64 is AArch64, T32 and A32 AArch32.
  CHECK(p.indirect_branch(0x1000, code_set::t32) == error_code::unencodable);
  context aarch32{};
  aarch32.sf = false;
  CHECK(p.context_change(aarch32, 0x1000, code_set::a64) == error_code::unencodable);
  CHECK(p.sync(0x1001) == error_code::unencodable);
  CHECK(p.bytes_out() == before);

  // A unit without context IDs or VMIDs, with 48-bit timestamps: what it cannot trace is
  // refused.
  chunks bare_out;
  std::uint8_t bare_buffer[64];
  producer<> bare(presets::ete_spec255, bare_buffer, sizeof bare_buffer, collect, &bare_out);
  REQUIRE(bare.start(trace_start{}) == error_code::ok);
  context with_cid{.context_id = 5, .sf = true}, with_vmid{.vmid = 1, .sf = true};
  CHECK(bare.context_change(with_cid, 0x1000, code_set::a64) == error_code::unencodable);
  CHECK(bare.context_change(with_vmid, 0x1000, code_set::a64) == error_code::unencodable);
  CHECK(bare.timestamp(std::uint64_t{1} << 48) == error_code::unencodable);
  CHECK(bare.timestamp((std::uint64_t{1} << 48) - 1) == error_code::ok);
  CHECK(bare.flush() == error_code::ok);
  // ... and one without cycle counting (TRCIDR0.TRCCCI 0).
  producer<> no_cc(registers{0x2801ce21, 0xd0001088, 0, 0x47705a13, 0x1, 0x4100fff0}, bare_buffer,
                   sizeof bare_buffer, collect, &bare_out);
  REQUIRE(no_cc.start(trace_start{}) == error_code::ok);
  CHECK(no_cc.cycle_count(10) == error_code::unencodable);
  trace_start mixed{};  // T32 with the default AArch64 context
  mixed.set = code_set::t32;
  CHECK(p.start(mixed) == error_code::unencodable);
  CHECK(p.bytes_out() == before);
  CHECK(p.flush() == error_code::ok);
  CHECK(got.bytes.size() == p.bytes_out());
  CHECK(got.sizes.size() >= 1);
}

TEST_CASE("producer: events and timestamps after a branch do not overflow a decoder's queue") {
  // A decoder holds what follows its oldest uncommitted P0 element in resolution_capacity(
  // MAXSPEC) places; the producer's branches are committed only by implication (MAXSPEC 15
  // here), so thousands of events, timestamps or indirect branches after them must come with
  // commits of the producer's own. Read back by a reader of exactly that capacity (the fixed
  // configuration's default).
  using unit = fixed_config<presets::ete_1_3_spec>;
  constexpr std::size_t places = resolution_capacity(unit::value.maxspec);
  for (int kind = 0; kind < 3; ++kind) {
    CAPTURE(kind);
    chunks got;
    std::uint8_t buffer[256];
    producer<unit> p(buffer, sizeof buffer, collect, &got);
    trace_start st;
    st.address = 0xffff800010000000u;
    st.set = code_set::a64;
    st.ctx.el = 1;
    st.ctx.ns = true;
    st.ctx.sf = true;
    REQUIRE(p.start(st) == error_code::ok);
    std::size_t want = 0;  // elements after start()'s
    for (unsigned burst = 0; burst < 3; ++burst) {
      REQUIRE(p.branch(true) == error_code::ok);
      REQUIRE(p.branch(false) == error_code::ok);
      want += 2;
      for (std::size_t k = 0; k < 3 * places; ++k) {
        if (kind == 0) {
          REQUIRE(p.event(0) == error_code::ok);
          ++want;
        } else if (kind == 1) {
          REQUIRE(p.timestamp(1000 + 7 * k) == error_code::ok);
          ++want;
        } else {
          REQUIRE(p.indirect_branch(0xffff800010000000u + 4 * (k % 32)) == error_code::ok);
          want += 2;
        }
      }
    }
    REQUIRE(p.flush() == error_code::ok);
    std::size_t errors = 0, n = 0;
    element_reader<unit> reader;
    reader.decode(
        got.bytes.data(), got.bytes.size(), [&](const element&) { ++n; },
        [&](const diagnostic&) { ++errors; });
    CHECK(errors == 0);
    CHECK(n == want + 4);  // Trace Info, Trace On, Context, Target Address of start()
  }
}
