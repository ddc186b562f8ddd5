// SPDX-License-Identifier: Apache-2.0
// Target 1: arbitrary bytes through every layer: packets (decoder), stage-1 elements and
// resolved elements (element_reader), under the configuration the first bytes choose
// (common.hpp). Checks that nothing is reported outside the input, that packets are in order
// and do not overlap, that errors carry offsets and known codes, that the resolver commits at
// most what stage 1 produced, that atom runs commit the same atoms as single Atom elements,
// and that a compile-time configuration decodes exactly as the same registers at run time.
#include "common.hpp"

using namespace fuzz;

namespace {

template <class Tag>
void run(const Tag& t, const std::uint8_t* d, std::size_t n) {
  const error_code status = validate(t.regs);
  const packet_run packets = decode_packets(t, d, n);
  check_packet_run(packets, n, status);

  const element_run stage1 = decode_elements(t, d, n, false);
  check_element_run(stage1, n);
  const element_run resolved = decode_elements(t, d, n, true);
  check_element_run(resolved, n);

  // Stage 1 reports the decoder's diagnostics, nothing more.
  FUZZ_CHECK(stage1.errors == packets.errors);
  // Elements come in stream order; the resolver neither invents nor duplicates elements.
  for (std::size_t i = 1; i < stage1.elements.size(); ++i)
    FUZZ_CHECK(stage1.elements[i].offset >= stage1.elements[i - 1].offset);
  FUZZ_CHECK(resolved.elements.size() <= stage1.elements.size());
  // The resolver adds only resolution_overflow notices to the decoder's diagnostics.
  std::size_t j = 0;
  for (const diagnostic& e : resolved.errors) {
    if (e.code == error_code::resolution_overflow) continue;
    FUZZ_CHECK(j < packets.errors.size() && e == packets.errors[j]);
    ++j;
  }
  FUZZ_CHECK(j == packets.errors.size());

  // Atom runs (one element per atom packet, split where commits and cancels end) commit the
  // same atoms. The queue holds fewer entries with runs, so only an input without
  // resolution_overflow either way must agree element for element.
  // (With an overflow in one mode only, the modes commit different elements: an overflow
  // commits the oldest early, fuzz finding 5.)
  const element_run runs = decode_elements(t, d, n, true, true);
  check_element_run(runs, n);
  if (runs.errors == resolved.errors) {
    FUZZ_CHECK(runs.elements.size() <= resolved.elements.size());
    const std::vector<element> expanded = expand_atom_runs(runs.elements);
    FUZZ_CHECK(expanded.size() == resolved.elements.size());
    FUZZ_CHECK(expanded == resolved.elements);
  }

  if constexpr (Tag::fixed) {  // the same registers at run time: the same output
    const runtime_tag rt{t.regs};
    const packet_run p2 = decode_packets(rt, d, n);
    FUZZ_CHECK(p2.events == packets.events);
    FUZZ_CHECK(decode_elements(rt, d, n, false).elements == stage1.elements);
    const element_run r2 = decode_elements(rt, d, n, true);
    // Queue capacities differ (fixed: from MAXSPEC; run time: for MAXSPEC 255), so only the
    // overflow notices may differ; MAXSPEC <= 255 never overflows a run-time queue first.
    if (r2.errors == resolved.errors) FUZZ_CHECK(r2.elements == resolved.elements);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const config_choice c = choose_config(data, size);
  if (c.consumed == 0) return 0;
  const std::uint8_t* d = data + c.consumed;
  const std::size_t n = size - c.consumed;
  visit(c, [&](const auto& tag) { run(tag, d, n); });
  return 0;
}
