// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the ETE tests.
#pragma once

#include <tracecodec/tracecodec.hpp>

#include <cstdint>
#include <vector>

namespace test {
using namespace tracecodec::ete;

// Atom runs (element_reader::atom_runs) written out as one Atom element per atom, for
// comparison with the one-per-atom stream.
inline std::vector<element> expand_atom_runs(const std::vector<element>& in) {
  std::vector<element> out;
  for (const element& e : in) {
    if (e.kind != element_kind::atom || e.count == 0) {
      out.push_back(e);
      continue;
    }
    for (unsigned i = 0; i < e.count; ++i) out.push_back(single_atom(e, i));
  }
  return out;
}

struct read_elements_result {
  std::vector<element> elements;
  std::vector<diagnostic> errors;
};
inline read_elements_result read_elements(const registers& r, const std::uint8_t* data,
                                          std::size_t size, bool resolve, bool runs) {
  read_elements_result res;
  element_reader<> reader(r);
  reader.atom_runs(runs);
  reader.decode(
      data, size, [&](const element& e) { res.elements.push_back(e); },
      [&](const diagnostic& d) { res.errors.push_back(d); }, resolve);
  return res;
}

struct decoded {
  std::vector<packet> packets;
  std::vector<diagnostic> errors;
};

inline decoded decode_all(const registers& r, const std::vector<std::uint8_t>& bytes) {
  decoded d;
  decoder<> dec(r);
  dec.decode(bytes.data(), bytes.size(), [&](const packet& p) { d.packets.push_back(p); },
             [&](const diagnostic& e) { d.errors.push_back(e); });
  return d;
}

// Decodes `bytes` fed in chunks that end at the given split points.
inline decoded decode_chunked(const registers& r, const std::vector<std::uint8_t>& bytes,
                              const std::vector<std::size_t>& splits) {
  decoded d;
  decoder<> dec(r);
  std::size_t from = 0;
  packet p{};
  auto drain = [&] {
    for (;;) {
      const auto s = dec.next(p);
      if (s == decode_status::packet)
        d.packets.push_back(p);
      else if (s == decode_status::error)
        d.errors.push_back(dec.last_diagnostic());
      else
        return;
    }
  };
  for (std::size_t to : splits) {
    dec.feed(bytes.data() + from, to - from);
    drain();
    from = to;
  }
  dec.feed(bytes.data() + from, bytes.size() - from);
  drain();
  dec.finish();
  drain();
  return d;
}

// Re-encodes decoded packets with a fresh encoder of the same configuration.
inline std::vector<std::uint8_t> encode_all(const registers& r, const std::vector<packet>& ps,
                                            error_code* first_error = nullptr) {
  std::vector<std::uint8_t> out;
  encoder<> enc(r);
  std::uint8_t buf[256];
  for (const packet& p : ps) {
    std::vector<std::uint8_t> big;
    encode_result res;
    if (p.kind == packet_kind::async && p.size > sizeof buf) {
      big.resize(p.size);
      res = enc.encode(p, big.data(), big.size());
      out.insert(out.end(), big.begin(), big.begin() + res.size);
    } else {
      res = enc.encode(p, buf, sizeof buf);
      out.insert(out.end(), buf, buf + res.size);
    }
    if (!res && first_error && *first_error == error_code::ok) *first_error = res.error;
  }
  return out;
}

}  // namespace test
