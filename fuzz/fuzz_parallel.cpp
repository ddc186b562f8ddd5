// SPDX-License-Identifier: Apache-2.0
// Target 8: parallel decode of one buffer (host/ete/parallel.hpp) gives exactly the serial
// decode: packets and diagnostics in order, with one consumer in stream order and with a
// consumer per segment; elements likewise, with and without resolution; program flow (a
// consumer per segment). Small segments, so
// that a short input splits at every A-Sync that a Trace Info follows.
// Input: [configuration prefix][segment byte][option byte][trace bytes].
#include <tracecodec/host/ete/parallel.hpp>

#include <variant>

#include "common.hpp"
#include "../tests/common/segment_log.hpp"

using namespace fuzz;

namespace {

using test::concatenated;
using test::recorder;
template <class Item>
using log = test::event_log<Item>;

template <class Tag>
void run(const Tag& t, const std::uint8_t* d, std::size_t n, const parallel::options& o,
         const parallel::element_options& eo) {
  using C = typename Tag::config_type;
  log<packet> want;
  {
    auto dec = t.template make<decoder>();
    dec->decode(d, n, [&](const packet& p) { want.emplace_back(p); },
                [&](const diagnostic& e) { want.emplace_back(e); });
  }
  log<packet> ordered;
  parallel::decode_packets<C>(t.regs, d, n, [&](const packet& p) { ordered.emplace_back(p); },
                              [&](const diagnostic& e) { ordered.emplace_back(e); }, o);
  FUZZ_CHECK(ordered == want);
  FUZZ_CHECK(concatenated(parallel::decode_packets_by_segment<C>(t.regs, d, n, recorder<packet>{}, o)) == want);

  log<element> want_elements;
  {
    auto reader = t.template make<default_element_reader>();
    reader->atom_runs(eo.atom_runs);
    reader->decode(d, n, [&](const element& e) { want_elements.emplace_back(e); },
                   [&](const diagnostic& e) { want_elements.emplace_back(e); }, eo.resolve);
  }
  log<element> ordered_elements;
  parallel::decode_elements<C>(t.regs, d, n,
                               [&](const element& e) { ordered_elements.emplace_back(e); },
                               [&](const diagnostic& e) { ordered_elements.emplace_back(e); }, eo, o);
  FUZZ_CHECK(ordered_elements == want_elements);
  FUZZ_CHECK(concatenated(parallel::decode_elements_by_segment<C>(t.regs, d, n, recorder<element>{},
                                                                  eo, o)) == want_elements);

  // Program flow over a small image (a call, a branch, a return, at 0 and at 0x400000), so
  // that walks, the return stack and inaccessible memory all occur.
  static constexpr std::uint32_t code[] = {0x94000002, 0x14000000, 0x14000001, 0xd65f03c0};
  const memory_region regions[] = {
      {0x0, reinterpret_cast<const std::uint8_t*>(code), sizeof code, memory_space::any},
      {0x400000, reinterpret_cast<const std::uint8_t*>(code), sizeof code, memory_space::any}};
  const program_image image(regions, 2);
  log<flow_element> want_flow;
  {
    program_image own = image;
    std::unique_ptr<flow_decoder<C>> fd;
    if constexpr (Tag::fixed) fd = std::make_unique<flow_decoder<C>>(own);
    else fd = std::make_unique<flow_decoder<C>>(t.regs, own);
    fd->decode(d, n, [&](const flow_element& f) { want_flow.emplace_back(f); },
               [&](const diagnostic& e) { want_flow.emplace_back(e); });
  }
  FUZZ_CHECK(concatenated(parallel::decode_flow_by_segment<C>(t.regs, image, {}, d, n,
                                                              recorder<flow_element>{}, o)) == want_flow);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const config_choice c = choose_config(data, size);
  if (c.consumed == 0 || size < c.consumed + 2) return 0;
  std::size_t at = c.consumed;
  parallel::options o;
  o.segment_bytes = 16 + std::size_t{data[at++]} * 4;
  const unsigned opt = data[at++];
  o.threads = 1 + (opt & 3u);                  // 1-4
  o.chunk_bytes = 1 + ((opt >> 2) & 7u) * 40;  // a turn taken inside a segment, or not
  o.ahead = (opt >> 5) & 1u;                   // 0: the default window, 1: one segment
  const parallel::element_options eo{((opt >> 6) & 1u) == 0, ((opt >> 7) & 1u) != 0};
  visit(c, [&](const auto& tag) { run(tag, data + at, size - at, o, eo); });
  return 0;
}
