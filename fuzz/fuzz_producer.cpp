// SPDX-License-Identifier: Apache-2.0
// Target 8: the producer API (ete/element/producer.hpp) on arbitrary calls and values, under
// every ETE configuration the prefix chooses and chunk buffers of 1 to 287 bytes:
//  - every call returns ok or one of its documented errors, and a call refused writes nothing
//    (the trace has none of its elements);
//  - every chunk handed over is at most the buffer's size;
//  - the bytes decode (packets, elements, resolution) without an error to exactly the elements
//    of the calls that returned ok, in order, each written down here from the element
//    definitions (D2), not by the producer.
// Input: [configuration prefix][buffer size byte][calls: an opcode byte and its values...].
#include <vector>

#include <tracecodec/ete/element/producer.hpp>

#include "common.hpp"
#include "generate.hpp"
#include "../tests/common/element_fields.hpp"

using namespace fuzz;

namespace {

struct chunks {
  std::vector<std::uint8_t> bytes;
  std::size_t largest = 0;
};
void collect(void* c, const std::uint8_t* data, std::size_t n) noexcept {
  auto* out = static_cast<chunks*>(c);
  out->bytes.insert(out->bytes.end(), data, data + n);
  if (n > out->largest) out->largest = n;
}

using test::element_fields;

bool documented(error_code e) {
  return e == error_code::unencodable || e == error_code::invalid_config ||
         e == error_code::buffer_too_small;
}

template <class Tag>
void run(const Tag& t, reader in) {
  const config c = config::from(t.regs);
  if (c.etmv4()) return;  // the producer writes ETE
  const std::size_t size = 1 + in.u8() + (in.u8() & 31);
  std::vector<std::uint8_t> buffer(size);
  chunks out;
  auto p = [&] {
    if constexpr (Tag::fixed)
      return std::make_unique<producer<typename Tag::config_type>>(buffer.data(), size, collect, &out);
    else
      return std::make_unique<producer<runtime_config>>(t.regs, buffer.data(), size, collect, &out);
  }();
  const error_code status = p->status();
  FUZZ_CHECK(status == error_code::ok || documented(status));

  std::vector<element_fields> want;
  bool started = false, sf = true, cc = false;
  code_set set = code_set::a64;
  context ctx{};
  auto is = [](code_set s) { return s == code_set::t32 ? isa::is1 : isa::is0; };
  // An address as the trace gives it: a T32 one without bit 0, an AArch32 one in 32 bits.
  auto addr = [&](std::uint64_t a, code_set s, bool in_aarch64) {
    if (s == code_set::t32) a &= ~std::uint64_t{1};
    return in_aarch64 ? a : a & 0xffffffffu;
  };
  auto target = [&](std::uint64_t a, code_set s, bool in_aarch64) {
    return test::target_fields(addr(a, s, in_aarch64), is(s));
  };
  using test::atom_fields;
  using test::context_fields;
  using test::kind_only;
  // Addresses near the last (short forms), or anywhere; sometimes misaligned.
  std::uint64_t last = 0x80001000u;
  auto any_address = [&] {
    const std::uint8_t m = in.u8();
    std::uint64_t a = (m & 3) == 0 ? in.u64() : last + 4 * static_cast<std::int16_t>(in.u16());
    if ((m & 0x1c) != 0) a &= ~std::uint64_t{3};
    last = a;
    return a;
  };
  auto any_set = [&] { return static_cast<code_set>(in.u8() % 3); };
  auto any_context = [&](bool aarch64) {
    context x{};
    const std::uint8_t b = in.u8();
    x.el = b & 3;
    if (b & 4) x.el = 4 + (b & 3);  // sometimes invalid
    x.ns = (b >> 3) & 1;
    x.nse = (b >> 4) & 1;
    x.sf = aarch64;
    if (b & 0x20) x.context_id = in.u32();
    if (b & 0x40) x.vmid = in.u32();
    return x;
  };

  while (!in.empty()) {
    const std::uint8_t op = in.u8();
    error_code r = error_code::ok;
    std::vector<element_fields> elements;  // what the call stands for if it is taken
    bool now_started = started, now_sf = sf, now_cc = cc;
    code_set now_set = set;
    context now_ctx = ctx;
    switch (op % 12) {
      case 0: {
        const bool taken = in.u8() & 1;
        r = p->branch(taken);
        elements.push_back(atom_fields(taken));
        break;
      }
      case 1: {
        const std::uint32_t bits = in.u32();
        const unsigned n = in.u8() % 34;
        r = p->branches(bits, n);
        for (unsigned i = 0; i < n && i < 32; ++i) elements.push_back(atom_fields((bits >> i) & 1u));
        break;
      }
      case 2: {
        const std::uint64_t to = any_address();
        const code_set s = (op & 0x80) ? any_set() : set;
        r = (op & 0x80) ? p->indirect_branch(to, s) : p->indirect_branch(to);
        elements = {atom_fields(true), target(to, s, sf)};
        now_set = s;
        break;
      }
      case 3:
      case 4: {
        const std::uint16_t number = in.u8() % 36;  // some reserved, 0x18 refused too
        const std::uint64_t ret = any_address(), handler = any_address();
        const code_set hs = (op & 0x80) ? any_set() : set;
        elements.push_back(test::exception_fields(number, addr(ret, set, sf), is(set)));
        if (op % 12 == 3) {
          r = (op & 0x80) ? p->exception(number, ret, handler, hs) : p->exception(number, ret, handler);
          elements.push_back(target(handler, hs, sf));
        } else {
          const context nc = any_context(in.u8() & 1);
          r = p->exception(number, ret, handler, hs, nc);
          elements.push_back(context_fields(nc));
          elements.push_back(target(handler, hs, nc.sf));
          now_ctx = nc;
          now_sf = nc.sf;
        }
        now_set = hs;
        break;
      }
      case 5: {
        const std::uint64_t to = any_address();
        if (op & 0x80) {
          const code_set s = any_set();
          const context nc = any_context(in.u8() & 1);
          r = p->exception_return(to, s, nc);
          elements = {atom_fields(true), context_fields(nc), target(to, s, nc.sf)};
          now_set = s, now_ctx = nc, now_sf = nc.sf;
        } else {
          r = p->exception_return(to);
          elements = {atom_fields(true), target(to, set, sf)};
        }
        break;
      }
      case 6: {
        const context nc = any_context(in.u8() & 1);
        const std::uint64_t to = any_address();
        const code_set s = any_set();
        r = p->context_change(nc, to, s);
        elements = {context_fields(nc), target(to, s, nc.sf)};
        now_set = s, now_ctx = nc, now_sf = nc.sf;
        break;
      }
      case 7: {
        const std::uint64_t ts = (op & 0x80) ? in.u64() : in.u32();
        r = p->timestamp(ts);
        element_fields v = kind_only(element_kind::timestamp);
        v.timestamp = ts;
        elements.push_back(v);
        break;
      }
      case 8: {
        const std::uint32_t n = small_or_wide(in);
        r = p->cycle_count(n);
        element_fields v = kind_only(element_kind::cycle_count);
        v.cycles = n;
        elements.push_back(v);
        break;
      }
      case 9: {
        const unsigned n = in.u8() % 5;
        r = p->event(n);
        element_fields v = kind_only(element_kind::event);
        v.number = static_cast<std::uint8_t>(n);
        elements.push_back(v);
        break;
      }
      case 10: {
        const std::uint64_t next = any_address();
        r = p->sync(next);
        elements = {test::trace_info_fields(cc), context_fields(ctx), target(next, set, sf)};
        break;
      }
      default: {
        trace_start s;
        const bool aarch64 = in.u8() & 1;
        s.ctx = any_context(aarch64);
        s.set = any_set();
        s.address = any_address();
        s.cycle_counting = in.u8() & 1;
        r = p->start(s);
        elements = {test::trace_info_fields(s.cycle_counting), kind_only(element_kind::trace_on),
                    context_fields(s.ctx), target(s.address, s.set, s.ctx.sf)};
        now_started = true, now_set = s.set, now_ctx = s.ctx, now_sf = s.ctx.sf;
        now_cc = s.cycle_counting;
        break;
      }
    }
    FUZZ_CHECK(r == error_code::ok || documented(r));
    if (status != error_code::ok) FUZZ_CHECK(r != error_code::ok);
    if (r != error_code::ok) continue;
    want.insert(want.end(), elements.begin(), elements.end());
    started = now_started, set = now_set, ctx = now_ctx, sf = now_sf, cc = now_cc;
  }
  const error_code f = p->flush();
  FUZZ_CHECK(f == error_code::ok || documented(f));
  FUZZ_CHECK(out.largest <= size);
  FUZZ_CHECK(out.bytes.size() == p->bytes_out());
  if (status != error_code::ok) {
    FUZZ_CHECK(out.bytes.empty());
    return;
  }
  // The resolution queue is bounded (README, Element layer): many non-P0 elements behind
  // uncommitted atoms (MAXSPEC > 0) overflow it, as documented (fuzz finding 6); a run-time
  // reader refuses a MAXSPEC beyond its queue. Then a reader with room enough must resolve the
  // bytes without an error.
  std::vector<element_fields> got;
  std::vector<diagnostic> errors;
  auto decode = [&](auto& reader) {
    got.clear();
    errors.clear();
    reader->decode(
        out.bytes.data(), out.bytes.size(), [&](const element& e) { got.push_back(test::fields_of(e)); },
        [&](const diagnostic& d) { errors.push_back(d); });
  };
  {
    auto reader = t.template make<default_element_reader>();
    decode(reader);
  }
  bool overflow_only = !errors.empty();
  for (const diagnostic& d : errors)
    overflow_only = overflow_only && (d.code == error_code::resolution_overflow ||
                                      d.code == error_code::unsupported_config);
  constexpr std::size_t roomy = std::size_t{1} << 15;
  if (overflow_only) {
    if (c.maxspec > max_resolved_maxspec(roomy)) return;  // no reader here resolves it
    if constexpr (Tag::fixed) {
      auto reader = std::make_unique<element_reader<typename Tag::config_type, roomy>>();
      decode(reader);
    } else {
      auto reader = std::make_unique<element_reader<runtime_config, roomy>>(t.regs);
      decode(reader);
    }
  }
  if (!errors.empty())
    std::fprintf(stderr, "producer: decode error %s at %llu of %zu bytes (MAXSPEC %u, COMMOPT %u)\n",
                 error_name(errors[0].code), static_cast<unsigned long long>(errors[0].offset),
                 out.bytes.size(), c.maxspec, c.commopt);
  FUZZ_CHECK(errors.empty());
  if (got != want) {  // where they part, for the finding's report
    std::size_t i = 0;
    while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
    auto show = [](const char* who, const std::vector<element_fields>& v, std::size_t k) {
      if (k >= v.size()) return (void)std::fprintf(stderr, "  %s: (end, %zu elements)\n", who, v.size());
      const element_fields& e = v[k];
      std::fprintf(stderr, "  %s: %s address 0x%llx isa %u type %u ctx el%u ns%u nse%u sf%u cid 0x%x vmid 0x%x ts %llu cycles %u number %u cc %u\n",
                   who, element_name(e.kind), static_cast<unsigned long long>(e.address),
                   static_cast<unsigned>(e.sub_isa), e.type, e.ctx.el, e.ctx.ns, e.ctx.nse, e.ctx.sf,
                   e.ctx.context_id, e.ctx.vmid, static_cast<unsigned long long>(e.timestamp), e.cycles,
                   e.number, e.cc);
    };
    std::fprintf(stderr, "producer: decoded element %zu differs (MAXSPEC %u, COMMOPT %u)\n", i,
                 c.maxspec, c.commopt);
    show("decoded ", got, i);
    show("expected", want, i);
  }
  FUZZ_CHECK(got == want);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const config_choice c = choose_config(data, size);
  if (c.consumed == 0) return 0;
  visit(c, [&](const auto& tag) { run(tag, reader{data + c.consumed, size - c.consumed}); });
  return 0;
}
