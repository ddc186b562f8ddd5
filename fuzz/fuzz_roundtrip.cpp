// SPDX-License-Identifier: Apache-2.0
// Target 2: decode, encode, decode again is stable. Whatever the input, every packet the
// decoder reports re-encodes (a fresh encoder follows the same retained state: errors change
// no state), the re-encoded stream decodes without errors to the same packets, and encoding
// those again gives the same bytes. When the input decodes without errors, its committed
// elements go through the element compressor to a stream that decodes without errors.
#include <tracecodec/host/ete/recompress.hpp>

#include "common.hpp"

using namespace fuzz;

namespace {

template <class Tag>
void run(const Tag& t, const std::uint8_t* d, std::size_t n) {
  if (validate(t.regs) != error_code::ok) return;
  const packet_run p1 = decode_packets(t, d, n);

  std::vector<std::uint8_t> b2;
  std::size_t bad = 0;
  error_code why = error_code::ok;
  if (!encode_packets(t, p1.packets, b2, &bad, &why)) {
    std::fprintf(stderr, "packet %zu (%s at %llu) does not re-encode: %s\n", bad,
                 kind_name(p1.packets[bad].kind),
                 static_cast<unsigned long long>(p1.packets[bad].offset), error_name(why));
    FUZZ_CHECK(!"every decoded packet re-encodes");
  }
  const packet_run p2 = decode_packets(t, b2.data(), b2.size());
  FUZZ_CHECK(p2.errors.empty());
  FUZZ_CHECK(p2.packets.size() == p1.packets.size());
  for (std::size_t i = 0; i < p1.packets.size(); ++i) {
    if (!same_packet(p1.packets[i], p2.packets[i])) {
      std::fprintf(stderr, "packet %zu (%s at %llu) decodes differently after re-encoding\n", i,
                   kind_name(p1.packets[i].kind),
                   static_cast<unsigned long long>(p1.packets[i].offset));
      FUZZ_CHECK(!"decode(encode(decode(x))) == decode(x)");
    }
  }
  std::vector<std::uint8_t> b3;
  FUZZ_CHECK(encode_packets(t, p2.packets, b3));
  FUZZ_CHECK(b3 == b2);

  // Element level: the committed elements of an input that decodes cleanly, compressed by
  // the element encoder (recompress, resolved input), give a packet stream that decodes
  // without errors. (That the elements come back equal holds for the behaviour of a real PE,
  // which the conformance tests and the model-driven mode of the encoder target check;
  // arbitrary packet sequences are not that: see README.md.)
  bool clean = true;
  for (const diagnostic& e : p1.errors) clean = clean && e.code == error_code::unsynchronized;
  if (clean && n <= 1 << 16) {
    const recompressed r = recompress(t.regs, std::vector<std::uint8_t>(d, d + n));
    FUZZ_CHECK(decode_packets(t, r.bytes.data(), r.bytes.size()).errors.empty());
    // A trace whose resolution itself overflows (a transaction longer than the bounded
    // queue) overflows again after compression: only a clean resolution must stay clean.
    // Nor one with a Transaction Start that was canceled or discarded: the traced transaction
    // state, which a later Trace Info's TSTATE is compared with (resolver.hpp,
    // note_transaction()), is then not what the committed elements show, and a Trace Info
    // with TSTATE 1 opens a transaction in the compressed stream that it did not open in the
    // input (README.md, Limitations).
    std::size_t starts_traced = 0, starts_committed = 0;
    for (const auto& p : p1.packets) starts_traced += p.kind == packet_kind::transaction_start;
    for (const element& e : r.before.elements)
      starts_committed += e.kind == element_kind::transaction_start;
    FUZZ_CHECK(r.before.errors != 0 || r.after.errors == 0 || starts_committed != starts_traced);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const config_choice c = choose_config(data, size);
  if (c.consumed == 0) return 0;
  visit(c, [&](const auto& tag) { run(tag, data + c.consumed, size - c.consumed); });
  return 0;
}
