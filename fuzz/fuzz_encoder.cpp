// SPDX-License-Identifier: Apache-2.0
// Target 4: the producers on arbitrary values.
//  - Packet encoder: packets built field by field from the input either encode or return an
//    error (nothing written beyond what is reported, the retained state unchanged on error);
//    the encoded stream decodes without errors to packets equal to the inputs in every field
//    the producer gives for that kind, and re-encoding the decoded packets reproduces the bytes.
//  - Element compressor: elements built from the input (any kind, any field values, stage-1
//    or resolved input, periodic sync or not) are taken or refused with an error, never
//    crash, and whatever comes out is a legal packet stream that decodes without errors.
//  - Element compressor on legal behaviour: the stage-1 elements of a model PE
//    (tests/common/pe_model.hpp, every choice from the input) compress without error, and
//    decoding and resolving the bytes gives exactly the elements the model committed.
// Input: [configuration prefix][mode byte][values...]; mode % 3: packets, elements, behaviour.
#include <cstring>

#include "common.hpp"
#include "../tests/common/pe_model.hpp"
#include "generate.hpp"

using namespace fuzz;

namespace {

// The PE model's decisions from the fuzz input (zeros once it is exhausted).
struct input_choices {
  reader& src;
  std::uint64_t u64() { return src.u64(); }
  unsigned pick(unsigned n) { return n <= 256 ? src.u8() % n : static_cast<unsigned>(src.u32() % n); }
  bool chance(unsigned pct) { return src.u8() % 100u < pct; }
};
using generator = pe_model::generator<input_choices>;

bool short_form(packet_kind k) {
  return address_form_of(k).family != address_family::none &&
         address_form_of(k).width == address_width::short_form;
}
bool exact_form(packet_kind k) {
  return address_form_of(k).family != address_family::none &&
         address_form_of(k).width == address_width::exact;
}

// The decoded packet says what the producer asked for, field by field, for this kind.
void check_same(const packet& in, const packet& out, const config& c) {
  using K = packet_kind;
  const K k = in.kind;
  FUZZ_CHECK(out.kind == k);
  if (has_address(k)) {
    FUZZ_CHECK(out.address == in.address);
    FUZZ_CHECK(out.sub_isa == in.sub_isa);
  }
  if (exact_form(k)) FUZZ_CHECK(out.index == in.index);
  if (short_form(k) && in.addr_bytes) FUZZ_CHECK(out.addr_bytes == in.addr_bytes);
  if (has_context(k)) {
    FUZZ_CHECK(out.ctx == in.ctx);
    if (k != K::context_same) {
      const std::uint8_t cv = packet_flag::has_context_id | packet_flag::has_vmid;
      FUZZ_CHECK((out.flags & cv) == (in.flags & cv));
    }
  }
  if (has_atoms(k)) {
    FUZZ_CHECK(out.atoms == in.atoms);
    FUZZ_CHECK(out.atom_count == in.atom_count);
  }
  if (is_exception(k)) {
    FUZZ_CHECK(out.exception_type == in.exception_type);
    FUZZ_CHECK(out.exception_elements == in.exception_elements);
  }
  if (is_q(k) && k != K::q) {
    FUZZ_CHECK(out.count == in.count);
    if (in.value_bytes) FUZZ_CHECK(out.value_bytes == in.value_bytes);
  }
  switch (k) {
    case K::event: FUZZ_CHECK(out.events == in.events); break;
    case K::trace_info:
      FUZZ_CHECK(out.plctl == in.plctl);
      FUZZ_CHECK(out.info == in.info);
      FUZZ_CHECK(out.count == in.count);
      FUZZ_CHECK(out.cycles == in.cycles);
      if (in.value_bytes && (in.plctl & 4u)) FUZZ_CHECK(out.value_bytes == in.value_bytes);
      if (in.count_bytes && (in.plctl & 8u)) FUZZ_CHECK(out.count_bytes == in.count_bytes);
      break;
    case K::timestamp: {
      FUZZ_CHECK(out.timestamp == in.timestamp);
      const bool count = in.is(packet_flag::has_count);
      FUZZ_CHECK(out.is(packet_flag::has_count) == count);
      if (count) FUZZ_CHECK(out.cycles == in.cycles);
      if (in.value_bytes) FUZZ_CHECK(out.value_bytes == in.value_bytes);
      if (count && in.count_bytes) FUZZ_CHECK(out.count_bytes == in.count_bytes);
      break;
    }
    case K::cycle_count_f1_0:
    case K::cycle_count_f1_0_unknown:
    case K::cycle_count_f1_1:
    case K::cycle_count_f1_1_unknown: {
      const bool unknown = k == K::cycle_count_f1_0_unknown || k == K::cycle_count_f1_1_unknown;
      FUZZ_CHECK(out.is(packet_flag::cycles_unknown) == unknown);
      if (!unknown) FUZZ_CHECK(out.cycles == in.cycles);
      if (!c.commopt) {
        FUZZ_CHECK(out.count == in.count);
        if (in.value_bytes) FUZZ_CHECK(out.value_bytes == in.value_bytes);
      }
      if (!unknown && in.count_bytes) FUZZ_CHECK(out.count_bytes == in.count_bytes);
      break;
    }
    case K::cycle_count_f2_0_small:
    case K::cycle_count_f2_0_large:
    case K::cycle_count_f3_0:
      FUZZ_CHECK(out.count == in.count);
      FUZZ_CHECK(out.cycles == in.cycles);
      break;
    case K::cycle_count_f2_1:
    case K::cycle_count_f3_1:
      FUZZ_CHECK(out.cycles == in.cycles);
      FUZZ_CHECK(out.ignored_bits == in.ignored_bits);
      break;
    case K::commit:
    case K::cancel_f1:
      FUZZ_CHECK(out.count == in.count);
      if (in.value_bytes) FUZZ_CHECK(out.value_bytes == in.value_bytes);
      if (k == K::cancel_f1)
        FUZZ_CHECK(out.is(packet_flag::mispredict) == in.is(packet_flag::mispredict));
      break;
    case K::cancel_f2:
    case K::cancel_f3: FUZZ_CHECK(out.count == in.count); break;
    case K::instrumentation:
      FUZZ_CHECK(out.info == in.info);
      FUZZ_CHECK(out.address == in.address);
      break;
    case K::async: FUZZ_CHECK(out.size == (in.size ? in.size : 12u)); break;
    default: break;
  }
}

bool encoder_error(error_code e) {
  return e == error_code::reserved_header || e == error_code::config_mismatch ||
         e == error_code::unencodable || e == error_code::buffer_too_small ||
         e == error_code::unsupported_packet;  // ETMv4 data-sync markers, conditional trace
}

template <class Tag>
void packets(const Tag& t, reader& r) {
  auto enc = t.template make<encoder>();
  std::vector<std::uint8_t> stream;
  std::vector<packet> sent;
  std::vector<std::uint32_t> sizes;
  std::uint8_t buf[320];
  packet sync{};
  sync.kind = packet_kind::async;
  const encode_result s = enc->encode(sync, buf, sizeof buf);
  FUZZ_CHECK(s && s.size == 12);
  stream.insert(stream.end(), buf, buf + s.size);
  sent.push_back(sync);
  sizes.push_back(s.size);
  for (unsigned i = 0; i < 64 && !r.empty(); ++i) {
    const std::uint8_t capm = r.u8();
    const packet p = make_packet(r, enc->state());
    const std::size_t cap = (capm & 0xc0u) == 0xc0u ? (capm & 0x1fu) : sizeof buf - 32;
    std::memset(buf, 0xa5, sizeof buf);
    const stream_state before = enc->state();
    const encode_result e = enc->encode(p, buf, cap);
    for (std::size_t j = e.size; j < sizeof buf; ++j) FUZZ_CHECK(buf[j] == 0xa5);  // in bounds
    if (!e) {
      FUZZ_CHECK(e.size == 0);
      FUZZ_CHECK(encoder_error(e.error));
      FUZZ_CHECK(enc->state() == before);  // nothing changed
      continue;
    }
    FUZZ_CHECK(e.size >= 1 && e.size <= cap);
    FUZZ_CHECK(p.kind == packet_kind::async || e.size <= max_packet_size);
    stream.insert(stream.end(), buf, buf + e.size);
    sent.push_back(p);
    sizes.push_back(e.size);
  }
  const packet_run back = decode_packets(t, stream.data(), stream.size());
  if (!back.errors.empty())
    std::fprintf(stderr, "decode error %s at %llu\n", error_name(back.errors[0].code),
                 static_cast<unsigned long long>(back.errors[0].offset));
  FUZZ_CHECK(back.errors.empty());
  FUZZ_CHECK(back.packets.size() == sent.size());
  const config cfg = enc->cfg();
  std::uint64_t at = 0;
  for (std::size_t i = 0; i < sent.size(); ++i) {
    FUZZ_CHECK(back.packets[i].offset == at);
    FUZZ_CHECK(back.packets[i].size == sizes[i]);
    at += sizes[i];
    check_same(sent[i], back.packets[i], cfg);
  }
  std::vector<std::uint8_t> again;
  FUZZ_CHECK(encode_packets(t, back.packets, again));
  FUZZ_CHECK(again == stream);
}

// ---- elements -------------------------------------------------------------------------------

template <class Tag, detail::compressor_paths Paths = detail::compressor_paths::lean>
std::unique_ptr<compressor<typename Tag::config_type, 1024, Paths>> make_compressor(
    const Tag& t, compressor_options o) {
  using C = compressor<typename Tag::config_type, 1024, Paths>;
  if constexpr (Tag::fixed)
    return std::make_unique<C>(o);
  else
    return std::make_unique<C>(t.regs, o);
}

template <class Tag>
void elements(const Tag& t, reader& r) {
  const std::uint8_t om = r.u8();
  compressor_options opt;
  opt.input = (om & 1u) ? input_kind::resolved : input_kind::stage1;
  opt.sync_interval = (om & 2u) ? 16u + r.u8() : 0u;
  auto comp = make_compressor(t, opt);
  std::vector<std::uint8_t> out;
  std::uint8_t chunk[97];  // odd size: drains split the staging buffer at arbitrary points
  auto drain = [&] {
    while (const std::size_t n = comp->drain(chunk, sizeof chunk)) out.insert(out.end(), chunk, chunk + n);
  };
  auto taken = [&](error_code e) {
    FUZZ_CHECK(e == error_code::ok || e == error_code::unencodable ||
               e == error_code::reserved_header || e == error_code::config_mismatch);
  };
  std::uint64_t pc = 0xffff800010000000u;
  std::vector<element> pushed;
  for (unsigned i = 0; i < 400 && !r.empty(); ++i) {
    const element e = make_element(r, pc);
    pushed.push_back(e);
    error_code c = comp->push(e);
    if (c == error_code::buffer_too_small) {
      drain();
      c = comp->push(e);
    }
    taken(c);
    if (r.u8() & 1u) drain();
  }
  error_code c = comp->finish(om & 4u);
  if (c == error_code::buffer_too_small) {
    drain();
    c = comp->finish(om & 4u);
  }
  taken(c);
  drain();
  FUZZ_CHECK(comp->pending() == 0);
  FUZZ_CHECK(comp->bytes_out() == out.size());
  const packet_run back = decode_packets(t, out.data(), out.size());
  if (!back.errors.empty()) {
    const std::uint64_t at = back.errors[0].offset;
    std::fprintf(stderr, "compressor output: decode error %s at %llu of %zu bytes (header 0x%02x)\n",
                 error_name(back.errors[0].code), static_cast<unsigned long long>(at), out.size(),
                 at < out.size() ? out[at] : 0);
    for (const packet& p : back.packets)
      if (p.offset + 12 >= at && p.offset < at)
        std::fprintf(stderr, "  after %s at %llu\n", kind_name(p.kind), static_cast<unsigned long long>(p.offset));
  }
  FUZZ_CHECK(back.errors.empty());
  std::vector<std::uint8_t> again;
  FUZZ_CHECK(encode_packets(t, back.packets, again));
  FUZZ_CHECK(again == out);

  // The same elements through push(elements, count), in arrays of arbitrary lengths: the same
  // bytes and the same errors as a push() each. Both drain only when the staging buffer is
  // full: an Event merges into the Event packet before it only while that packet is still in
  // the staging buffer (README, Limitations), so the drains above may have changed the bytes.
  // And a push() each through the general path alone (no lean paths): the same again.
  std::vector<std::uint8_t> one_out, many_out, general_out;
  std::vector<std::pair<std::size_t, error_code>> one_errors, many_errors, general_errors;
  auto one = make_compressor(t, opt);
  auto many = make_compressor(t, opt);
  auto general = make_compressor<Tag, detail::compressor_paths::general>(t, opt);
  auto drain_into = [&](auto& comp, std::vector<std::uint8_t>& to) {
    while (const std::size_t n = comp->drain(chunk, sizeof chunk)) to.insert(to.end(), chunk, chunk + n);
  };
  // finish() and the last drains; its error recorded at index pushed.size().
  auto finish_into = [&](auto& comp, std::vector<std::uint8_t>& to,
                         std::vector<std::pair<std::size_t, error_code>>& errors) {
    error_code f = comp->finish(om & 4u);
    if (f == error_code::buffer_too_small) {
      drain_into(comp, to);
      f = comp->finish(om & 4u);
    }
    taken(f);
    if (f != error_code::ok) errors.emplace_back(pushed.size(), f);
    drain_into(comp, to);
  };
  auto push_each = [&](auto& comp, std::vector<std::uint8_t>& to,
                       std::vector<std::pair<std::size_t, error_code>>& errors) {
    for (std::size_t i = 0; i < pushed.size(); ++i) {
      error_code e = comp->push(pushed[i]);
      if (e == error_code::buffer_too_small) {
        drain_into(comp, to);
        e = comp->push(pushed[i]);
      }
      if (e != error_code::ok) errors.emplace_back(i, e);
    }
    finish_into(comp, to, errors);
  };
  push_each(one, one_out, one_errors);
  push_each(general, general_out, general_errors);
  for (std::size_t i = 0, k = 0; i < pushed.size(); ++k) {
    const std::size_t n = 1 + (k * 37 + om) % 64;
    const auto res = many->push(pushed.data() + i, std::min(n, pushed.size() - i));
    FUZZ_CHECK(res.taken <= std::min(n, pushed.size() - i));
    i += res.taken;
    if (res.error == error_code::buffer_too_small)
      drain_into(many, many_out);
    else if (res.error != error_code::ok)
      many_errors.emplace_back(i - 1, res.error);
  }
  finish_into(many, many_out, many_errors);
  FUZZ_CHECK(many_errors == one_errors);
  FUZZ_CHECK(many_out == one_out);
  FUZZ_CHECK(general_errors == one_errors);
  FUZZ_CHECK(general_out == one_out);
}

// ---- legal PE behaviour ---------------------------------------------------------------------

// ETMv4 elements also say how their packet was encoded: which context fields a Context
// carried, and an Exception whose return address is the target (E=0b10). The model leaves
// those to the compressor.
bool same_behaviour(element a, element b, const config& c) {
  a.offset = b.offset = 0;
  if (a.kind == element_kind::trace_info) a.count = b.count = 0;  // the compressor's own depth
  if (c.etmv4() && a.kind == b.kind) {
    if (a.kind == element_kind::context)
      b.flags &= static_cast<std::uint8_t>(~(element_flag::has_context_id | element_flag::has_vmid));
    if (a.kind == element_kind::exception)
      b.flags &= static_cast<std::uint8_t>(~element_flag::return_is_target);
  }
  return a == b;
}

// The model's stage-1 stream through the compressor; decoding and resolving the bytes must
// give exactly the elements the model committed.
template <class Tag>
void behaviour(const Tag& t, reader& r) {
  generator g{config::from(t.regs), input_choices{r}, true};  // with UNKNOWN-address exceptions
  g.start();
  while (!r.empty() && g.stream.size() < 4000) g.step();
  g.finish();
  auto comp = make_compressor(t, compressor_options{});
  std::vector<std::uint8_t> out;
  std::uint8_t chunk[97];
  auto drain = [&] {
    while (const std::size_t k = comp->drain(chunk, sizeof chunk)) out.insert(out.end(), chunk, chunk + k);
  };
  for (const element& e : g.stream) {
    error_code c = comp->push(e);
    if (c == error_code::buffer_too_small) {
      drain();
      c = comp->push(e);
    }
    if (c != error_code::ok)
      std::fprintf(stderr, "element %llu (%s): %s\n", static_cast<unsigned long long>(e.offset),
                   element_name(e.kind), error_name(c));
    FUZZ_CHECK(c == error_code::ok);
  }
  error_code c = comp->finish();
  if (c == error_code::buffer_too_small) {
    drain();
    c = comp->finish();
  }
  FUZZ_CHECK(c == error_code::ok);
  drain();
  element_run got = decode_elements(t, out.data(), out.size(), true);
  // The resolution queue is bounded (element_reader.hpp): behaviour with more non-P0 elements
  // (Events, say) behind uncommitted atoms than it holds overflows it, as documented (fuzz
  // finding 6); and a run-time reader refuses a MAXSPEC beyond its queue (unsupported_config,
  // issue 14 D5; fuzz finding 7). Then, with room enough, the same bytes must resolve without
  // errors.
  constexpr std::size_t roomy = std::size_t{1} << 15;
  bool overflow_only = !got.errors.empty();
  for (const diagnostic& e : got.errors)
    overflow_only = overflow_only && (e.code == error_code::resolution_overflow ||
                                      e.code == error_code::unsupported_config);
  if (overflow_only && comp->cfg().maxspec > max_resolved_maxspec(roomy)) {
    // No queue here holds this MAXSPEC (a fixed configuration is limited to
    // max_fixed_maxspec, and 32768 places resolve 8167): the refusal is all resolution says.
    // The bytes must still decode to stage-1 elements without errors.
    FUZZ_CHECK(got.elements.empty());
    FUZZ_CHECK(got.errors.size() == 1 && got.errors[0].code == error_code::unsupported_config);
    FUZZ_CHECK(decode_elements(t, out.data(), out.size(), false).errors.empty());
    return;
  }
  if (overflow_only) {
    element_run big;
    auto collect = [&](auto& reader) {
      reader->decode(
          out.data(), out.size(), [&](const element& e) { big.elements.push_back(e); },
          [&](const diagnostic& e) { big.errors.push_back(e); });
    };
    if constexpr (Tag::fixed) {
      auto reader = std::make_unique<element_reader<typename Tag::config_type, roomy>>();
      collect(reader);
    } else {
      auto reader = std::make_unique<element_reader<runtime_config, roomy>>(t.regs);
      collect(reader);
    }
    got = std::move(big);
  }
  for (std::size_t i = 0; i < got.errors.size() && i < 3; ++i)
    std::fprintf(stderr, "compressor output (%zu bytes, MAXSPEC %u): %s at %llu\n", out.size(),
                 comp->cfg().maxspec, error_name(got.errors[i].code),
                 static_cast<unsigned long long>(got.errors[i].offset));
  if (!got.errors.empty())
    if (const char* path = std::getenv("FUZZ_DUMP"))  // the compressor's bytes, to inspect
      if (std::FILE* f = std::fopen(path, "wb")) {
        std::fwrite(out.data(), 1, out.size(), f);
        std::fclose(f);
      }
  FUZZ_CHECK(got.errors.empty());
  std::size_t i = 0;
  const auto& want = g.committed;
  while (i < want.size() && i < got.elements.size() && same_behaviour(want[i], got.elements[i], comp->cfg())) ++i;
  if (i != want.size() || i != got.elements.size()) {
    std::fprintf(stderr, "committed elements differ at %zu (model %zu, decoded %zu)\n", i, want.size(),
                 got.elements.size());
    for (std::size_t k = i > 4 ? i - 4 : 0; k < i + 3; ++k) {
      if (k < want.size())
        std::fprintf(stderr, "  model[%zu] %s addr=%llx taken=%d flags=%x (stream %llu)\n", k,
                     element_name(want[k].kind), static_cast<unsigned long long>(want[k].address),
                     want[k].taken, want[k].flags, static_cast<unsigned long long>(want[k].offset));
      if (k < got.elements.size())
        std::fprintf(stderr, "  got[%zu]   %s addr=%llx taken=%d flags=%x\n", k,
                     element_name(got.elements[k].kind),
                     static_cast<unsigned long long>(got.elements[k].address), got.elements[k].taken,
                     got.elements[k].flags);
    }
    FUZZ_CHECK(!"the compressed model behaviour decodes to the committed elements");
  }
}

template <class Tag>
void run(const Tag& t, const std::uint8_t* d, std::size_t n) {
  if (validate(t.regs) != error_code::ok) {  // every call reports the configuration
    auto enc = t.template make<encoder>();
    packet p{};
    p.kind = packet_kind::trace_on;
    std::uint8_t buf[32];
    FUZZ_CHECK(enc->encode(p, buf, sizeof buf).error == error_code::invalid_config);
    return;
  }
  reader r{d, n};
  switch (r.u8() % 3u) {
    case 0: packets(t, r); break;
    case 1: elements(t, r); break;
    default: behaviour(t, r); break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const config_choice c = choose_config(data, size);
  if (c.consumed == 0) return 0;
  visit(c, [&](const auto& tag) { run(tag, data + c.consumed, size - c.consumed); });
  return 0;
}
