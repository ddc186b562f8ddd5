// SPDX-License-Identifier: Apache-2.0
// Shared by every fuzz target: the configuration chosen from the first input bytes (a
// compile-time preset, the same registers at run time, or register values from the input),
// decoding helpers that record every packet, element and diagnostic, and FUZZ_CHECK, which
// aborts (a libFuzzer crash; a failing replay) with a message when a property does not hold.
#pragma once

#include <tracecodec/tracecodec.hpp>
#include <tracecodec/host/ete/format.hpp>  // kind_name

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

namespace fuzz {
using namespace tracecodec::ete;

[[noreturn]] inline void fail(const char* file, int line, const char* what) {
  std::fprintf(stderr, "FUZZ_CHECK failed at %s:%d: %s\n", file, line, what);
  std::fflush(stderr);
  std::abort();
}
#define FUZZ_CHECK(cond)                                           \
  do {                                                             \
    if (!(cond)) ::fuzz::fail(__FILE__, __LINE__, #cond);          \
  } while (0)

// Register sets: the library presets (the first fixed_count, also compiled in as
// fixed_config) and the distinct sets of the conformance snapshots that change parsing
// (COMMOPT, MAXSPEC, Q, TSSIZE, CID/VMID, ETE version). Index: see choose_config.
inline constexpr registers fixed_regs[] = {
    presets::ete_1_0,
    presets::ete_1_1_tsmark,
    presets::ete_1_3_spec,
    presets::ete_spec255,
    {0x08000aa1, 0xc0001088, 0x0, 0x47705a13, 0x1, 0x4100fff0},     // 001-ack_test: COMMOPT 0, no Q
    {0x28000ca1, 0x40001088, 0x0, 0x47705a13, 0x8019, 0x5100fff0},  // maxspec0_commopt1, src_addr
    {0x2801cea1, 0xd0001088, 0xff, 0x47705a13, 0x0, 0x4100fff0},    // ete_spec_1: MAXSPEC 255
    {0x28c1cea1, 0xd0001088, 0x0, 0x47735a13, 0x48001, 0x4100fff0}, // ETE 1.3 (rme_test, pauth_lr)
};
inline constexpr unsigned preset_count = sizeof fixed_regs / sizeof fixed_regs[0];
inline constexpr unsigned fixed_count = 4;  // compile time grows with every fixed_config

// Register values from 12 input bytes, shaped so that most are valid: every field that
// changes parsing takes any of its legal values, and the TRCCONFIGR enables stay within what
// the ID registers implement (a few raw bits make some invalid on purpose). Byte 9 bit 2
// makes it an ETMv4 unit (bits 5:3 the minor version, bit 6 an M-profile PE).
inline registers structured_registers(const std::uint8_t* b) {
  registers r{};
  const std::uint32_t tss[3] = {0, 0b00110, 0b01000};
  const std::uint32_t tssize = tss[(b[1] >> 1) % 3];
  r.trcidr0 = 0x1u | ((b[0] & 1u) << 5) | (((b[0] >> 1) & 1u) << 7) | (((b[0] >> 2) & 1u) << 9) |
              (((b[0] >> 3) & 3u) << 10) | (((b[0] >> 5) & 3u) << 15) |
              ((tssize ? (b[1] & 1u) : 0u) << 23) | (tssize << 24) | (((b[1] >> 3) & 1u) << 29) |
              (((b[1] >> 4) & 1u) << 30);
  r.trcidr2 = 0b01000u | ((b[2] & 1u) ? 0b00100u << 5 : 0u) |
              (((b[2] >> 1) & 1u) ? 0b00100u << 10 : 0u) | ((((b[2] >> 2) & 0xfu) % 9u) << 25) |
              ((b[3] & 7u) << 29);
  switch (b[4] & 7u) {
    case 0:
    case 1:
    case 2: r.trcidr8 = 0; break;
    case 3: r.trcidr8 = b[5] & 0xfu; break;
    case 4: r.trcidr8 = 255; break;
    case 5: r.trcidr8 = b[5]; break;
    case 6: r.trcidr8 = b[5] | (static_cast<std::uint32_t>(b[6]) << 8); break;
    default:
      r.trcidr8 = b[5] | (static_cast<std::uint32_t>(b[6]) << 8) |
                  (static_cast<std::uint32_t>(b[7]) << 16) | (static_cast<std::uint32_t>(b[8]) << 24);
      break;
  }
  r.trcdevarch = 0x47705a13u | (static_cast<std::uint32_t>(b[9] & 3u) << 16);
  r.trcidr1 = 0x4100fff0u;
  if (b[9] & 4u) {  // ETMv4.0-4.6 (version from TRCIDR1), A- or M-profile
    const std::uint32_t minor = ((b[9] >> 3) & 7u) % 7u;
    r.proto = protocol::etmv4;
    r.profile = (b[9] & 0x40u) ? pe_profile::m : pe_profile::a;
    r.trcdevarch = 0;
    r.trcidr1 = 0x4100f400u | (minor << 4);
    if (minor == 0 && (r.trcidr2 & (0x1fu << 10)))  // 16/32-bit VMIDs need ETMv4.1
      r.trcidr2 = (r.trcidr2 & ~(0x1fu << 10)) | (0b00001u << 10);
    if (r.profile == pe_profile::m) r.trcidr2 = (r.trcidr2 & ~0x1fu) | 0b00100u;  // 32-bit addresses
  }
  const config c = config::from(r);
  const std::uint8_t e = b[10];
  r.trcconfigr = ((e >> 7) & 1u) | ((c.trcbb && (e & 1u)) ? 1u << 3 : 0u) |
                 ((c.trccci && (e & 2u)) ? 1u << 4 : 0u) |
                 ((c.cidsize && (e & 4u)) ? 1u << 6 : 0u) |
                 ((c.vmidsize && (e & 8u)) ? 1u << 7 : 0u) | ((c.tssize && (e & 16u)) ? 1u << 11 : 0u) |
                 ((c.retstack && (e & 32u)) ? 1u << 12 : 0u) |
                 (c.qsupp ? static_cast<std::uint32_t>(b[11] & 3u) << 13 : 0u) |
                 (((e >> 6) & 1u) << 15);
  if ((b[11] & 0xf0u) == 0xf0u) r.trcconfigr ^= 1u << (b[11] & 0xfu);  // sometimes invalid
  return r;
}

inline std::uint32_t load32(const std::uint8_t* p) {
  return p[0] | (static_cast<std::uint32_t>(p[1]) << 8) | (static_cast<std::uint32_t>(p[2]) << 16) |
         (static_cast<std::uint32_t>(p[3]) << 24);
}
inline void store32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// The configuration prefix of every fuzz input.
//   byte 0 < 0x80:          fixed_config<fixed_regs[b0 % fixed_count]>          (1 byte)
//   0x80 <= byte 0 < 0xc0:  runtime_config with fixed_regs[b0 % preset_count]   (1 byte)
//   0xc0 <= byte 0 < 0xe0:  runtime_config, raw registers from the next 24 bytes
//                           (TRCIDR0, 2, 8, DEVARCH, CONFIGR, IDR1, little-endian)
//   byte 0 >= 0xe0:         runtime_config, structured_registers(next 12 bytes)
struct config_choice {
  bool fixed = false;
  unsigned index = 0;
  registers regs{};
  std::size_t consumed = 0;  // prefix bytes; 0 if the input is too short
};

inline constexpr std::uint8_t sel_fixed = 0x00, sel_runtime_preset = 0x80, sel_raw = 0xc0,
                              sel_structured = 0xe0;

inline config_choice choose_config(const std::uint8_t* d, std::size_t n) {
  config_choice c;
  if (n < 1) return c;
  const std::uint8_t s = d[0];
  if (s < 0xc0) {
    c.fixed = s < 0x80;
    c.index = s % (c.fixed ? fixed_count : preset_count);
    c.regs = fixed_regs[c.index];
    c.consumed = 1;
  } else if (s < 0xe0) {
    if (n < 25) return c;
    const std::uint8_t* p = d + 1;
    c.regs = registers{load32(p), load32(p + 4), load32(p + 8), load32(p + 12), load32(p + 16),
                       load32(p + 20)};
    c.consumed = 25;
  } else {
    if (n < 13) return c;
    c.regs = structured_registers(d + 1);
    c.consumed = 13;
  }
  return c;
}

// Prefix bytes that select exactly these registers at run time (raw form).
inline std::vector<std::uint8_t> raw_prefix(const registers& r) {
  std::vector<std::uint8_t> v(25);
  v[0] = sel_raw;
  const std::uint32_t regs[6] = {r.trcidr0, r.trcidr2, r.trcidr8, r.trcdevarch, r.trcconfigr, r.trcidr1};
  for (int i = 0; i < 6; ++i) store32(v.data() + 1 + 4 * i, regs[i]);
  return v;
}
// The fixed_regs index of these registers, or -1.
inline int preset_index(const registers& r) {
  for (unsigned i = 0; i < preset_count; ++i)
    if (fixed_regs[i] == r) return static_cast<int>(i);
  return -1;
}

// element_reader with its default queue capacity, as a one-parameter template for make<>().
template <class C>
using default_element_reader = element_reader<C>;

// A configuration as a type, for the templates: make<T>() builds T<Config> on the heap
// (element readers hold two queues of elements).
struct runtime_tag {
  using config_type = runtime_config;
  registers regs;
  static constexpr bool fixed = false;
  template <template <class> class T>
  std::unique_ptr<T<runtime_config>> make() const {
    return std::make_unique<T<runtime_config>>(regs);
  }
};
template <unsigned I>
struct fixed_tag {
  using config_type = fixed_config<fixed_regs[I]>;
  registers regs = fixed_regs[I];
  static constexpr bool fixed = true;
  template <template <class> class T>
  std::unique_ptr<T<config_type>> make() const {
    return std::make_unique<T<config_type>>();
  }
};

template <class F>
void visit(const config_choice& c, F&& f) {
  if (!c.fixed) {
    f(runtime_tag{c.regs});
    return;
  }
  switch (c.index) {
    case 0: f(fixed_tag<0>{}); return;
    case 1: f(fixed_tag<1>{}); return;
    case 2: f(fixed_tag<2>{}); return;
    default: f(fixed_tag<3>{}); return;
  }
}
static_assert(fixed_count == 4, "visit() lists every fixed configuration");

// ---- recording decoders ----------------------------------------------------------------

// One decoder output in order: a packet or a diagnostic.
struct event {
  bool is_error = false;
  packet p{};
  diagnostic d{};
  bool operator==(const event&) const = default;
};

struct packet_run {
  std::vector<event> events;
  std::vector<packet> packets;
  std::vector<diagnostic> errors;
  decoder_stats stats{};
};

template <class Tag>
packet_run decode_packets(const Tag& t, const std::uint8_t* d, std::size_t n) {
  packet_run r;
  auto dec = t.template make<decoder>();
  dec->decode(
      d, n,
      [&](const packet& p) {
        r.packets.push_back(p);
        r.events.push_back({false, p, {}});
      },
      [&](const diagnostic& e) {
        r.errors.push_back(e);
        r.events.push_back({true, {}, e});
      });
  r.stats = dec->stats();
  return r;
}

// Streaming: feed() the chunks ending at `cuts` (ascending, each <= n), then finish(). The
// number of next() calls is bounded: every call that does not ask for input either returns a
// packet or an error, and there are at most a few per input byte.
template <class Tag>
packet_run decode_chunks(const Tag& t, const std::uint8_t* d, std::size_t n,
                         const std::vector<std::size_t>& cuts) {
  packet_run r;
  auto dec = t.template make<decoder>();
  std::size_t calls = 0;
  const std::size_t limit = 4 * n + 2 * cuts.size() + 16;
  packet p{};
  auto drain = [&](bool finished) {
    for (;;) {
      const decode_status s = dec->next(p);
      ++calls;
      FUZZ_CHECK(calls <= limit);  // a hang: next() reports without consuming input
      if (s == decode_status::packet) {
        r.packets.push_back(p);
        r.events.push_back({false, p, {}});
      } else if (s == decode_status::error) {
        r.errors.push_back(dec->last_diagnostic());
        r.events.push_back({true, {}, dec->last_diagnostic()});
      } else {
        FUZZ_CHECK(s == (finished ? decode_status::end : decode_status::need_input));
        return;
      }
    }
  };
  std::size_t from = 0;
  for (const std::size_t to : cuts) {
    dec->feed(d + from, to - from);
    drain(false);
    from = to;
  }
  dec->feed(d + from, n - from);
  drain(false);
  dec->finish();
  drain(true);
  FUZZ_CHECK(dec->next(p) == decode_status::end);  // stays at the end
  r.stats = dec->stats();
  return r;
}

struct element_run {
  std::vector<element> elements;
  std::vector<diagnostic> errors;
};

template <class Tag>
element_run decode_elements(const Tag& t, const std::uint8_t* d, std::size_t n, bool resolve,
                            bool atom_runs = false) {
  element_run r;
  auto reader = t.template make<default_element_reader>();
  reader->atom_runs(atom_runs);
  reader->decode(
      d, n, [&](const element& e) { r.elements.push_back(e); },
      [&](const diagnostic& e) { r.errors.push_back(e); }, resolve);
  return r;
}

// Atom runs written out as one Atom element per atom.
inline std::vector<element> expand_atom_runs(const std::vector<element>& in) {
  std::vector<element> out;
  for (const element& e : in) {
    if (e.kind != element_kind::atom || e.count == 0) {
      out.push_back(e);
      continue;
    }
    FUZZ_CHECK(e.count <= 32 && (e.count == 32 || (e.atom_bits >> e.count) == 0) && !e.taken);
    for (unsigned i = 0; i < e.count; ++i) out.push_back(single_atom(e, i));
  }
  return out;
}

// ---- invariants of one decode ------------------------------------------------------------

inline bool known_decoder_error(error_code e) {
  switch (e) {
    case error_code::reserved_header:
    case error_code::malformed_payload:
    case error_code::overlong_field:
    case error_code::bad_async:
    case error_code::truncated_packet:
    case error_code::config_mismatch:
    case error_code::invalid_config:
    case error_code::unsupported_packet:  // ETMv4 data trace, conditional trace, data-sync markers
    case error_code::unsynchronized: return true;
    default: return false;
  }
}

// Packets lie inside the input, in order, without overlapping; errors point into the input;
// nothing is reported that the input does not contain.
inline void check_packet_run(const packet_run& r, std::size_t n, error_code config_status) {
  if (config_status != error_code::ok) {
    FUZZ_CHECK(r.packets.empty());
    FUZZ_CHECK(r.errors.size() == 1);
    FUZZ_CHECK(r.errors[0].code == error_code::invalid_config && r.errors[0].offset == 0);
    return;
  }
  std::uint64_t end = 0;  // end of the previous packet
  std::uint64_t last_error = 0;
  bool first = true;
  bool bad_async = false;  // a bad_async since the previous packet
  std::size_t unsync = 0;
  for (const event& e : r.events) {
    if (e.is_error) {
      FUZZ_CHECK(known_decoder_error(e.d.code) && e.d.code != error_code::invalid_config);
      if (e.d.code == error_code::unsynchronized) {
        ++unsync;
        FUZZ_CHECK(e.d.offset == 0 && e.d.length > 0 && e.d.length <= n);
        continue;
      }
      FUZZ_CHECK(e.d.offset < n);
      FUZZ_CHECK(e.d.offset >= last_error);
      last_error = e.d.offset;
      bad_async = bad_async || e.d.code == error_code::bad_async;
      continue;
    }
    const packet& p = e.p;
    FUZZ_CHECK(static_cast<unsigned>(p.kind) < packet_kind_count);
    if (first) FUZZ_CHECK(p.kind == packet_kind::async);  // nothing before the first A-Sync
    first = false;
    FUZZ_CHECK(p.size >= 1);
    FUZZ_CHECK(p.kind == packet_kind::async ? p.size >= 12 : p.size <= max_packet_size);
    // Packets do not overlap, except an A-Sync found at its true offset after a bad_async:
    // its first zeros were taken by a packet decoded out of alignment (after corruption).
    FUZZ_CHECK(p.offset >= end || (p.kind == packet_kind::async && bad_async));
    FUZZ_CHECK(p.offset + p.size <= n);
    FUZZ_CHECK(p.offset + p.size > end);  // and always end further on
    end = p.offset + p.size;
    bad_async = false;
  }
  FUZZ_CHECK(unsync <= 1);
  FUZZ_CHECK(r.stats.packets == r.packets.size());
  FUZZ_CHECK(r.stats.errors == r.errors.size());
  std::uint64_t bytes = 0, covered = 0;  // bytes in packets, each counted once
  for (const packet& p : r.packets) {
    bytes += p.offset + p.size - (p.offset > covered ? p.offset : covered);
    covered = p.offset + p.size;
  }
  FUZZ_CHECK(bytes <= n);
}

inline void check_element_run(const element_run& r, std::size_t n) {
  for (const element& e : r.elements) {
    FUZZ_CHECK(static_cast<unsigned>(e.kind) < element_kind_count);
    FUZZ_CHECK(e.offset < n);
  }
  for (const diagnostic& d : r.errors) {
    FUZZ_CHECK(known_decoder_error(d.code) || d.code == error_code::resolution_overflow ||
               d.code == error_code::unsupported_config);
    // Configuration errors are reported at offset 0, also for an empty input.
    if (d.code == error_code::unsupported_config)
      FUZZ_CHECK(d.offset == 0);
    else if (d.code != error_code::unsynchronized && d.code != error_code::invalid_config)
      FUZZ_CHECK(d.offset < n);
  }
}

// Packets equal apart from where they are in their stream.
inline bool same_packet(packet a, packet b) {
  a.offset = b.offset = 0;
  return a == b;
}

// Encodes packets with a fresh encoder. Returns false (with the failing index) if one does not
// encode.
template <class Tag>
bool encode_packets(const Tag& t, const std::vector<packet>& ps, std::vector<std::uint8_t>& out,
                    std::size_t* failed = nullptr, error_code* why = nullptr) {
  auto enc = t.template make<encoder>();
  std::vector<std::uint8_t> buf(64);
  for (std::size_t i = 0; i < ps.size(); ++i) {
    const packet& p = ps[i];
    if (buf.size() < p.size + 32) buf.resize(p.size + 32);
    const encode_result r = enc->encode(p, buf.data(), buf.size());
    if (!r) {
      if (failed) *failed = i;
      if (why) *why = r.error;
      return false;
    }
    out.insert(out.end(), buf.begin(), buf.begin() + r.size);
  }
  return true;
}

}  // namespace fuzz
