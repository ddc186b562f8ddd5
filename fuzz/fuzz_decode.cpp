// SPDX-License-Identifier: Apache-2.0
// Target 1: arbitrary bytes through every layer: packets (decoder), stage-1 elements and
// resolved elements (element_reader), under the configuration the first bytes choose
// (common.hpp). Checks that nothing is reported outside the input, that packets are in order
// and do not overlap, that errors carry offsets and known codes, that the resolver commits at
// most what stage 1 produced, that atom runs commit the same atoms as single Atom elements
// (overflows included), that after an error everything restarts at the next A-Sync, that
// chunked decoding decodes the same, and that a compile-time configuration decodes exactly as
// the same registers at run time.
#include <algorithm>

#include "common.hpp"

using namespace fuzz;

namespace {

// From the A-Sync the decoder finds after its last error (a Trace Info right after it), the
// resolved elements and diagnostics equal a decode of the bytes from that A-Sync on: after an
// error every layer starts afresh (issue 14, D1).
template <class Tag>
void check_restart(const Tag& t, const std::uint8_t* d, std::size_t n, const packet_run& packets,
                   const element_run& resolved) {
  std::size_t last = packets.events.size();
  for (std::size_t i = 0; i < packets.events.size(); ++i)
    if (packets.events[i].is_error && packets.events[i].d.code != error_code::unsynchronized) last = i;
  if (last == packets.events.size()) return;
  // The A-Sync the decoder resumes at: the first one it reports after the error (which may
  // start before the error's offset, when the error was the A-Sync's own zero run cut short by
  // a packet decoded out of alignment: bad_async, then the A-Sync at its true offset).
  std::size_t j = last + 1;
  while (j < packets.events.size() &&
         (packets.events[j].is_error || packets.events[j].p.kind != packet_kind::async))
    ++j;
  if (j + 1 >= packets.events.size() || packets.events[j + 1].is_error ||
      packets.events[j + 1].p.kind != packet_kind::trace_info)
    return;
  const std::uint64_t s = packets.events[j].p.offset;
  const std::uint64_t sync_end = s + packets.events[j].p.size;
  const element_run fresh = decode_elements(t, d + s, n - s, true);
  std::vector<element> after;
  for (const element& e : resolved.elements) {
    if (e.offset < sync_end) {
      FUZZ_CHECK(after.empty());  // nothing from before the A-Sync after anything from it
      continue;
    }
    element x = e;
    x.offset -= s;
    after.push_back(x);
  }
  FUZZ_CHECK(after == fresh.elements);
  std::vector<diagnostic> errors;
  for (const diagnostic& e : resolved.errors)
    if (e.offset >= sync_end && e.code != error_code::unsynchronized) errors.push_back({e.code, e.offset - s, e.length});
  FUZZ_CHECK(errors == fresh.errors);
}

// The element reader fed in chunks (decode_part, sizes from the input's length) decodes as it
// does the whole buffer.
template <class Tag>
void check_chunked(const Tag& t, const std::uint8_t* d, std::size_t n, bool runs,
                   const element_run& whole) {
  element_run r;
  auto reader = t.template make<default_element_reader>();
  reader->atom_runs(runs);
  auto on_element = [&](const element& e) { r.elements.push_back(e); };
  auto on_error = [&](const diagnostic& e) { r.errors.push_back(e); };
  std::uint64_t x = n * 0x9e3779b97f4a7c15ull + 1;
  for (std::size_t at = 0; at < n;) {
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ull;
    const std::size_t m = std::min<std::size_t>(n - at, 1 + (x >> 58));  // 1..64 bytes
    reader->decode_part(d + at, m, on_element, on_error);
    at += m;
  }
  reader->decode_end(on_element, on_error);
  FUZZ_CHECK(r.elements == whole.elements);
  FUZZ_CHECK(r.errors == whole.errors);
}

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
  // Elements come in stream order; the resolver neither invents nor duplicates elements
  // (but for the Transaction Failure that ends a transaction cut by a decode error).
  for (std::size_t i = 1; i < stage1.elements.size(); ++i)
    FUZZ_CHECK(stage1.elements[i].offset >= stage1.elements[i - 1].offset);
  FUZZ_CHECK(resolved.elements.size() <= stage1.elements.size() + packets.errors.size());
  if (status == error_code::ok && t.template make<default_element_reader>()->status() ==
                                      error_code::unsupported_config) {
    // MAXSPEC beyond the queue: reported once, nothing resolved (stage 1 works).
    FUZZ_CHECK(resolved.elements.empty());
    FUZZ_CHECK(resolved.errors.size() == 1 && resolved.errors[0].code == error_code::unsupported_config);
    return;
  }
  // The resolver adds only resolution_overflow notices to the decoder's diagnostics.
  std::size_t j = 0;
  for (const diagnostic& e : resolved.errors) {
    if (e.code == error_code::resolution_overflow) continue;
    FUZZ_CHECK(j < packets.errors.size() && e == packets.errors[j]);
    ++j;
  }
  FUZZ_CHECK(j == packets.errors.size());

  // Atom runs (one element per atom packet, split where commits and cancels end) commit the
  // same atoms, with the same diagnostics: the queues count atoms, so both forms overflow at
  // the same atom and commit the same elements early (issue 14, D5).
  const element_run runs = decode_elements(t, d, n, true, true);
  check_element_run(runs, n);
  FUZZ_CHECK(runs.errors == resolved.errors);
  FUZZ_CHECK(runs.elements.size() <= resolved.elements.size());
  FUZZ_CHECK(expand_atom_runs(runs.elements) == resolved.elements);

  if (status == error_code::ok) check_restart(t, d, n, packets, resolved);
  check_chunked(t, d, n, (n & 1u) != 0, (n & 1u) ? runs : resolved);

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
