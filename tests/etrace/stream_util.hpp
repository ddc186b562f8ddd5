// SPDX-License-Identifier: Apache-2.0
// Stream test helpers: feed a byte string in chosen chunks (each chunk in its own exactly
// sized heap block, so an out-of-bounds read is caught by AddressSanitizer), and build traces
// of random packets with the encoder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <doctest/doctest.h>

#include "common.hpp"

namespace etest {

// One decoder output: a packet or a diagnostic.
struct event {
  bool is_packet = false;
  et::packet p{};
  et::diagnostic d{};
  bool operator==(const event& o) const {
    return is_packet == o.is_packet && (is_packet ? p == o.p : d == o.d);
  }
};

// Decodes `data` fed in chunks ending at the given cut offsets (ascending, any values).
inline std::vector<event> run(et::stream_decoder<>& dec, const bytes& data,
                              const std::vector<std::size_t>& cuts = {}) {
  std::vector<event> out;
  std::size_t start = 0, next_cut = 0;
  std::unique_ptr<std::uint8_t[]> chunk;
  et::packet p{};
  for (std::size_t guard = 0;; ++guard) {
    REQUIRE(guard < 10 * data.size() + 100);  // never loops without consuming input
    const et::decode_status s = dec.next(p);
    if (s == et::decode_status::packet) {
      event e;
      e.is_packet = true;
      e.p = p;
      out.push_back(e);
    } else if (s == et::decode_status::error) {
      event e;
      e.d = dec.last_diagnostic();
      out.push_back(e);
    } else if (s == et::decode_status::need_input) {
      while (next_cut < cuts.size() && cuts[next_cut] <= start) ++next_cut;
      const std::size_t end = next_cut < cuts.size() && cuts[next_cut] < data.size() ? cuts[next_cut] : data.size();
      const std::size_t n = end - start;
      chunk = std::make_unique<std::uint8_t[]>(n == 0 ? 1 : n);
      for (std::size_t i = 0; i < n; ++i) chunk[i] = data[start + i];
      dec.feed(chunk.get(), n);
      start = end;
      if (start == data.size()) dec.finish();
    } else {
      break;
    }
  }
  return out;
}

inline std::vector<event> run(const et::runtime_config& cfg, const et::encapsulation& enc,
                              const bytes& data, const std::vector<std::size_t>& cuts = {},
                              et::decoder_options opt = {}) {
  et::stream_decoder<> dec(cfg, enc, opt);
  return run(dec, data, cuts);
}

inline std::vector<event> packets_of(const std::vector<event>& ev) {
  std::vector<event> out;
  for (const event& e : ev)
    if (e.is_packet) out.push_back(e);
  return out;
}

struct trace {
  bytes data;
  std::vector<et::te_inst> insts;
  std::vector<std::uint64_t> offsets;  // header offset of each packet
  std::vector<et::header> headers;
  std::vector<std::size_t> sync_runs;  // offsets where a zero run before a start packet begins
};

// `count` random packets (a format 3 start every `start_every`), random headers.
inline trace make_trace(const et::runtime_config& cfg, const et::encapsulation& enc, rng& r,
                        int count, int start_every = 8) {
  et::encoder<> e(cfg, enc);
  REQUIRE(e.status() == et::error_code::ok);
  trace t;
  std::uint8_t buf[et::max_packet_size + 8192];
  for (int i = 0; i < count; ++i) {
    et::te_inst p = random_inst(r, cfg.widths(), e.mode());
    if (i % start_every == 0) p = random_inst(r, cfg.widths(), et::te_inst_kind::sync_start, e.mode());
    et::header h{};
    if (enc.transport == et::transport::siemens) {
      h.flow = static_cast<std::uint8_t>(r.below(4));
      h.index = static_cast<std::uint32_t>(r.bits(enc.index_width));
    }
    h.has_timestamp = r.coin();
    if (h.has_timestamp) h.timestamp = static_cast<std::uint16_t>(r.value(16));
    const et::encode_result res = e.encode(p, h, buf, sizeof buf);
    REQUIRE(res.error == et::error_code::ok);
    std::size_t lead = 0;
    while (buf[lead] == 0) ++lead;
    if (lead >= enc.zero_run_length() && enc.recovery == et::boundary_recovery::zero_run)
      t.sync_runs.push_back(t.data.size());
    t.offsets.push_back(t.data.size() + lead);
    t.insts.push_back(p);
    h.length = static_cast<std::uint8_t>(res.size - lead - enc.header_size(h.has_timestamp));
    t.headers.push_back(h);
    t.data.insert(t.data.end(), buf, buf + res.size);
  }
  const et::encode_result pad = e.pad_block(buf, sizeof buf);
  t.data.insert(t.data.end(), buf, buf + pad.size);
  return t;
}

}  // namespace etest
