// SPDX-License-Identifier: Apache-2.0
// ETE packet encoder: packet values -> bytes in a caller-provided buffer. It keeps the same
// retained state as the decoder (address history, timestamp, context, cycle-count threshold),
// so a producer hands it full addresses and timestamps plus the packet form it wants and gets
// the compressed bytes a trace unit would emit. Zero allocation; nothing is written on error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "config.hpp"
#include "error.hpp"
#include "fields.hpp"
#include "header_table.hpp"
#include "hot.hpp"
#include "packet.hpp"
#include "state.hpp"

namespace tracecodec::ete {

struct encode_result {
  std::uint32_t size = 0;  // bytes written (0 on error)
  error_code error = error_code::ok;
  constexpr explicit operator bool() const noexcept { return error == error_code::ok; }
};

template <class Config = runtime_config>
class encoder {
 public:
  template <class C = Config, class = std::enable_if_t<C::is_fixed>>
  constexpr encoder() noexcept {}
  constexpr explicit encoder(const runtime_config& c) noexcept : conf_(c) {}
  constexpr explicit encoder(const registers& r) noexcept : conf_(runtime_config(r)) {}

  constexpr const config& cfg() const noexcept { return conf_.get(); }
  constexpr const stream_state& state() const noexcept { return st_; }
  constexpr error_code status() const noexcept { return conf_.status(); }
  constexpr void reset() noexcept { st_ = stream_state{}; }

  // Encodes one packet. Fields of `p` that give an encoding choice (addr_bytes, len1, len2,
  // size of an A-Sync) may be 0 for "shortest"; offset is ignored.
  TRACECODEC_HOT constexpr encode_result encode(const packet& p, std::uint8_t* out,
                                                std::size_t capacity) noexcept {
    // Atom packets are most of real trace (D6.11.2) and need no retained state: the header
    // comes from the atoms, and the decoder's own table confirms that it decodes to exactly
    // this packet in this configuration (so a wrong or reserved header is never written).
    // Anything else, or an atom packet that fails the check, takes the general path, which
    // also says why.
    if (p.kind >= packet_kind::atom_f1 && p.kind <= packet_kind::atom_f6 && capacity != 0 &&
        conf_.status() == error_code::ok) [[likely]] {
      const std::uint8_t h = atom_header_guess(p);
      const header_entry& e = table()[h];
      if (e.kind == p.kind && e.atoms == p.atoms && e.atom_count == p.atom_count) [[likely]] {
        out[0] = h;
        return {1, error_code::ok};
      }
    }
    return encode_general(p, out, capacity);
  }
  template <class Bytes>
  constexpr auto encode(const packet& p, Bytes& out) noexcept
      -> decltype(out.data(), out.size(), encode_result{}) {
    return encode(p, reinterpret_cast<std::uint8_t*>(out.data()), out.size());
  }

 private:
  constexpr encode_result encode_general(const packet& p, std::uint8_t* out,
                                         std::size_t capacity) noexcept {
    if (conf_.status() != error_code::ok) return {0, conf_.status()};
    if (p.kind == packet_kind::async) {  // D5.4: 11 or more zeros then 0x80
      const std::uint32_t n = p.size ? p.size : 12;
      if (n < 12) return {0, error_code::unencodable};
      if (n > capacity) return {0, error_code::buffer_too_small};
      for (std::uint32_t i = 0; i < n - 1; ++i) out[i] = 0;
      out[n - 1] = 0x80;
      return {n, error_code::ok};
    }
    std::uint8_t tmp[32]{};
    stream_state ns = st_;
    const int n = build(p, tmp, ns);
    if (n < 0) return {0, static_cast<error_code>(-n)};
    if (static_cast<std::size_t>(n) > capacity) return {0, error_code::buffer_too_small};
    for (int i = 0; i < n; ++i) out[i] = tmp[i];
    st_ = ns;
    return {static_cast<std::uint32_t>(n), error_code::ok};
  }

  // The header an atom packet would have if it is well formed (D5.41-D5.46): checked by the
  // caller against the header table, so a malformed packet may give any value here.
  static constexpr std::uint8_t atom_header_guess(const packet& p) noexcept {
    const unsigned n = p.atom_count, k = static_cast<unsigned>(p.kind) -
                                         static_cast<unsigned>(packet_kind::atom_f1);
    const std::uint32_t a = p.atoms;
    // Format 6: COUNT = n - 4; A = 1 when the last atom is N. Both candidates are computed
    // and one selected without a branch (formats mix unpredictably in real trace).
    const unsigned f6 = 0xc0u | ((~(a >> ((n - 1) & 31u)) & 1u) << 5) | ((n - 4) & 0x1fu);
    const unsigned f15 = detail::atom_headers.of[k < 6 ? k : 0][a & 31u];
    return static_cast<std::uint8_t>(k == 6 ? f6 : f15);
  }
  constexpr const header_table& table() const noexcept { return conf_.table(); }

  static constexpr int fail(error_code e) noexcept { return -static_cast<int>(e); }

  // The header must exist in this configuration and mean this kind (the same table the
  // decoder dispatches on).
  constexpr bool header_ok(std::uint8_t h, packet_kind k) const noexcept {
    const header_entry& e = table()[h];
    if (e.op == payload_op::reserved) return false;
    if (e.op == payload_op::exception || e.op == payload_op::extension) return true;
    return e.kind == k;
  }

  // Chooses a run length: the requested one if it holds the value, else the shortest.
  static constexpr int leb_len(std::uint64_t value, std::uint8_t requested,
                               detail::leb_field f) noexcept {
    const std::uint8_t min = detail::leb_size(value, f);
    if ((value & ~detail::width_mask(f)) != 0) return -1;
    if (requested == 0) return min;
    if (requested < min || requested > f.max_bytes) return -1;
    return requested;
  }

  static constexpr std::uint8_t atom_header(const packet& p, bool& ok) noexcept {
    ok = true;
    const unsigned n = p.atom_count;
    const std::uint32_t a = p.atoms;
    if (n > 24 || (n < 32 && (a >> n) != 0)) ok = false;
    switch (p.kind) {
      case packet_kind::atom_f1: ok = ok && n == 1; return static_cast<std::uint8_t>(0xf6 | a);
      case packet_kind::atom_f2: ok = ok && n == 2; return static_cast<std::uint8_t>(0xd8 | a);
      case packet_kind::atom_f3: ok = ok && n == 3; return static_cast<std::uint8_t>(0xf8 | a);
      case packet_kind::atom_f4:
        ok = ok && n == 4;
        switch (a) {
          case 0b1110: return 0xdc;
          case 0b0000: return 0xdd;
          case 0b1010: return 0xde;
          case 0b0101: return 0xdf;
          default: ok = false; return 0;
        }
      case packet_kind::atom_f5_1: ok = ok && n == 5 && a == 0b11110; return 0xf5;
      case packet_kind::atom_f5_2:
        ok = ok && n == 5;
        switch (a) {
          case 0b00000: return 0xd5;
          case 0b01010: return 0xd6;
          case 0b10101: return 0xd7;
          default: ok = false; return 0;
        }
      case packet_kind::atom_f6: {
        // D5.46: COUNT+3 E atoms, then one E (A=0) or N (A=1); 4..24 atoms.
        if (n < 4 || n > 24) {
          ok = false;
          return 0;
        }
        const std::uint32_t es = (1u << (n - 1)) - 1u;
        if ((a & es) != es) ok = false;
        const unsigned last_n = ((a >> (n - 1)) & 1u) ? 0u : 1u;
        return static_cast<std::uint8_t>(0xc0 | (last_n << 5) | (n - 4));
      }
      default: ok = false; return 0;
    }
  }

  // Mispredict / Cancel format 2 field A from its atoms (D5.39): -, E, EE, N.
  static constexpr int mispredict_a(const packet& p) noexcept {
    if (p.atom_count == 0 && p.atoms == 0) return 0;
    if (p.atom_count == 1 && p.atoms == 1) return 1;
    if (p.atom_count == 2 && p.atoms == 3) return 2;
    if (p.atom_count == 1 && p.atoms == 0) return 3;
    return -1;
  }

  // Address payload for an address form. `form`: 0 exact, 1 short, 2 32-bit, 3 64-bit.
  constexpr int write_address(std::uint8_t* o, int form, isa s, const packet& p,
                              stream_state& ns) const noexcept {
    const std::uint64_t a = p.address;
    const address_entry& last = ns.history.entry[0];
    if (form == 0) {
      if (p.index > 2 || !(ns.history.entry[p.index] == address_entry{a, p.sub_isa}))
        return fail(error_code::unencodable);
      ns.history.add(a, p.sub_isa);
      return 0;
    }
    if (p.sub_isa != s || (a & detail::isa_alignment_mask(s))) return fail(error_code::unencodable);
    int n = 0;
    if (form == 1) {
      unsigned bytes = p.addr_bytes;
      if (bytes == 0) bytes = ((a & ~detail::short_address_mask(s, 1)) ==
                               (last.address & ~detail::short_address_mask(s, 1)))
                                  ? 1u
                                  : 2u;
      if (bytes != 1 && bytes != 2) return fail(error_code::unencodable);
      const std::uint64_t mask = detail::short_address_mask(s, bytes);
      if ((a & ~mask) != (last.address & ~mask)) return fail(error_code::unencodable);
      const unsigned shift = s == isa::is0 ? 2 : 1;
      o[0] = static_cast<std::uint8_t>(((a >> shift) & 0x7fu) | (bytes == 2 ? 0x80u : 0u));
      if (bytes == 2) o[1] = static_cast<std::uint8_t>(a >> (shift + 7));
      n = static_cast<int>(bytes);
    } else if (form == 2) {
      if ((a >> 32) != (last.address >> 32)) return fail(error_code::unencodable);
      detail::write_long_address(o, a, s, false);
      n = 4;
    } else {
      detail::write_long_address(o, a, s, true);
      n = 8;
    }
    ns.history.add(a, s);
    return n;
  }

  constexpr int write_context(std::uint8_t* o, const packet& p, stream_state& ns) const noexcept {
    const context& c = p.ctx;
    const bool v = p.flags & packet_flag::has_vmid, cid = p.flags & packet_flag::has_context_id;
    if ((v && cfg().vmidsize == 0) || (cid && cfg().cidsize == 0))
      return fail(error_code::config_mismatch);
    if (c.el > 3 || (!v && c.vmid != ns.ctx.vmid) || (!cid && c.context_id != ns.ctx.context_id))
      return fail(error_code::unencodable);  // an unsent field keeps its previous value
    o[0] = static_cast<std::uint8_t>(c.el | (c.nse ? 8u : 0u) | (c.sf ? 16u : 0u) |
                                     (c.ns ? 32u : 0u) | (v ? 64u : 0u) | (cid ? 128u : 0u));
    int n = 1;
    if (v) {
      detail::store_le(o + n, c.vmid, 4);
      n += 4;
    }
    if (cid) {
      detail::store_le(o + n, c.context_id, 4);
      n += 4;
    }
    ns.ctx = c;
    return n;
  }

  struct address_form {
    std::uint8_t header;
    int form;  // 0 exact, 1 short, 2 32-bit, 3 64-bit
    isa s;
    bool with_context;
  };
  static constexpr address_form form_for(packet_kind k, std::uint8_t index) noexcept {
    using K = packet_kind;
    const auto ix = static_cast<std::uint8_t>(index & 3u);
    switch (k) {
      case K::address_exact: case K::exception_exact: return {static_cast<std::uint8_t>(0x90 | ix), 0, isa::is0, false};
      case K::address_short_is0: case K::exception_short_is0: return {0x95, 1, isa::is0, false};
      case K::address_short_is1: case K::exception_short_is1: return {0x96, 1, isa::is1, false};
      case K::address_32_is0: case K::exception_32_is0: return {0x9a, 2, isa::is0, false};
      case K::address_32_is1: case K::exception_32_is1: return {0x9b, 2, isa::is1, false};
      case K::address_64_is0: case K::exception_64_is0: return {0x9d, 3, isa::is0, false};
      case K::address_64_is1: case K::exception_64_is1: return {0x9e, 3, isa::is1, false};
      case K::address_ctx_32_is0: case K::exception_ctx_32_is0: return {0x82, 2, isa::is0, true};
      case K::address_ctx_32_is1: case K::exception_ctx_32_is1: return {0x83, 2, isa::is1, true};
      case K::address_ctx_64_is0: case K::exception_ctx_64_is0: return {0x85, 3, isa::is0, true};
      case K::address_ctx_64_is1: case K::exception_ctx_64_is1: return {0x86, 3, isa::is1, true};
      case K::source_exact: return {static_cast<std::uint8_t>(0xb0 | ix), 0, isa::is0, false};
      case K::source_short_is0: return {0xb4, 1, isa::is0, false};
      case K::source_short_is1: return {0xb5, 1, isa::is1, false};
      case K::source_32_is0: return {0xb6, 2, isa::is0, false};
      case K::source_32_is1: return {0xb7, 2, isa::is1, false};
      case K::source_64_is0: return {0xb8, 3, isa::is0, false};
      case K::source_64_is1: return {0xb9, 3, isa::is1, false};
      case K::q_exact: return {static_cast<std::uint8_t>(0xa0 | ix), 0, isa::is0, false};
      case K::q_short_is0: return {0xa5, 1, isa::is0, false};
      case K::q_short_is1: return {0xa6, 1, isa::is1, false};
      case K::q_32_is0: return {0xaa, 2, isa::is0, false};
      case K::q_32_is1: return {0xab, 2, isa::is1, false};
      default: return {0, -1, isa::is0, false};
    }
  }
  // The same as one table by kind (the exact forms take their index from the packet), so
  // the hot path looks the form up instead of taking a second indirect jump.
  struct address_forms {
    address_form of[packet_kind_count];
  };
  static constexpr address_forms make_address_forms() noexcept {
    address_forms t{};
    for (unsigned k = 0; k < packet_kind_count; ++k) t.of[k] = form_for(static_cast<packet_kind>(k), 0);
    return t;
  }
  static constexpr address_forms forms_ = make_address_forms();
  static constexpr address_form form_of(packet_kind k, std::uint8_t index) noexcept {
    address_form f = forms_.of[static_cast<unsigned>(k)];
    if (f.form == 0) f.header = static_cast<std::uint8_t>(f.header | (index & 3u));
    return f;
  }

  // Writes the packet into o (32 bytes), updating ns. Returns the size or -error_code.
  constexpr int build(const packet& p, std::uint8_t* o, stream_state& ns) const noexcept {
    using K = packet_kind;
    const config& c = cfg();
    auto leb = [&](int at, std::uint64_t v, std::uint8_t req, detail::leb_field f) -> int {
      const int len = leb_len(v, req, f);
      if (len < 0) return -1;
      return at + static_cast<int>(detail::write_leb(o + at, v, static_cast<unsigned>(len), f));
    };
    auto single = [&](std::uint8_t h) -> int {
      o[0] = h;
      return header_ok(h, p.kind) ? 1 : fail(error_code::reserved_header);
    };
    switch (p.kind) {
      case K::async: return fail(error_code::unencodable);  // handled by encode()
      case K::discard: o[0] = 0; o[1] = 3; return 2;
      case K::overflow: o[0] = 0; o[1] = 5; return 2;
      case K::trace_on: return single(0x04);
      case K::transaction_start: return single(0x0a);
      case K::transaction_commit: return single(0x0b);
      case K::timestamp_marker: return single(0x88);
      case K::ignore: return single(0x70);
      case K::context_same:  // says "unchanged": only the current context can be sent so
        if (!(p.ctx == ns.ctx)) return fail(error_code::unencodable);
        return single(0x80);
      case K::event:
        if (p.events == 0 || p.events > 15) return fail(error_code::unencodable);
        return single(static_cast<std::uint8_t>(0x70 | p.events));
      case K::q:
        if (!(p.flags & packet_flag::count_unknown)) return fail(error_code::unencodable);
        return single(0xaf);
      case K::q_count: {
        o[0] = 0xac;
        if (!header_ok(0xac, p.kind)) return fail(error_code::reserved_header);
        const int n = leb(1, p.count, p.len1, detail::leb32);
        return n < 0 ? fail(error_code::unencodable) : n;
      }

      case K::trace_info: {
        o[0] = 0x01;
        o[1] = p.plctl;
        int n = 2;
        if (p.plctl & 1u) o[n++] = p.info;
        else if (p.info) return fail(error_code::unencodable);
        if (p.plctl & 4u) {
          n = leb(n, p.count, p.len1, detail::leb32);
          if (n < 0) return fail(error_code::unencodable);
        } else if (p.count) {
          return fail(error_code::unencodable);
        }
        if (p.plctl & 8u) {
          n = leb(n, p.cycles, p.len2, detail::leb_cyct);
          if (n < 0) return fail(error_code::unencodable);
        } else if (p.cycles) {
          return fail(error_code::unencodable);
        }
        ns.trace_info(p.info & 1u, p.cycles);
        return n;
      }

      case K::timestamp: {
        const bool with_count = p.flags & packet_flag::has_count;
        o[0] = with_count ? 0x03 : 0x02;
        if (!header_ok(o[0], p.kind)) return fail(error_code::reserved_header);
        const detail::leb_field f = detail::leb_ts(c.ts_max_bytes());
        unsigned len = p.len1;
        if (len == 0) {  // D6.11.5: send only the low bits that changed
          len = 1;
          while (len < f.max_bytes &&
                 ((p.timestamp ^ ns.timestamp) & ~detail::leb_mask(len)) != 0)
            ++len;
        }
        if (len > f.max_bytes || ((p.timestamp ^ ns.timestamp) & ~detail::leb_mask(len)) != 0)
          return fail(error_code::unencodable);
        int n = 1 + static_cast<int>(detail::write_leb(o + 1, p.timestamp, len, f));
        if (with_count) {
          n = leb(n, p.cycles, p.len2, detail::leb_count);
          if (n < 0) return fail(error_code::unencodable);
        } else if (p.cycles) {
          return fail(error_code::unencodable);
        }
        ns.timestamp = p.timestamp;
        return n;
      }

      case K::cycle_count_f1_0:
      case K::cycle_count_f1_0_unknown:
      case K::cycle_count_f1_1:
      case K::cycle_count_f1_1_unknown: {
        const bool unknown = p.kind == K::cycle_count_f1_0_unknown || p.kind == K::cycle_count_f1_1_unknown;
        o[0] = unknown ? 0x0f : 0x0e;
        if (!header_ok(o[0], p.kind)) return fail(error_code::reserved_header);
        int n = 1;
        if (!c.commopt) {
          n = leb(n, p.count, p.len1, detail::leb32);
          if (n < 0) return fail(error_code::unencodable);
        } else if (p.count) {
          return fail(error_code::unencodable);
        }
        if (!unknown) {
          if (p.cycles < ns.cc_threshold) return fail(error_code::unencodable);
          n = leb(n, p.cycles - ns.cc_threshold, p.len2, detail::leb_count);
          if (n < 0) return fail(error_code::unencodable);
        }
        return n;
      }

      case K::cycle_count_f2_0_small:
      case K::cycle_count_f2_0_large:
      case K::cycle_count_f2_1: {
        if (p.cycles < ns.cc_threshold || p.cycles - ns.cc_threshold > 15)
          return fail(error_code::unencodable);
        const unsigned bbbb = p.cycles - ns.cc_threshold;
        unsigned aaaa = 0;
        if (p.kind == K::cycle_count_f2_0_small) {
          o[0] = 0x0c;
          if (p.count < 1 || p.count > 16) return fail(error_code::unencodable);
          aaaa = p.count - 1;
        } else if (p.kind == K::cycle_count_f2_0_large) {
          o[0] = 0x0d;
          const std::int64_t a = static_cast<std::int64_t>(p.count) - c.maxspec + 15;
          if (p.count == 0 || a < 0 || a > 15) return fail(error_code::unencodable);
          aaaa = static_cast<unsigned>(a);
        } else {
          if (p.count || (p.ignored_bits & ~0x1fu)) return fail(error_code::unencodable);
          o[0] = static_cast<std::uint8_t>(0x0d ^ ((p.ignored_bits >> 4) & 1u));
          aaaa = 0xfu ^ (p.ignored_bits & 0xfu);
        }
        if (!header_ok(o[0], p.kind)) return fail(error_code::reserved_header);
        o[1] = static_cast<std::uint8_t>((aaaa << 4) | bbbb);
        return 2;
      }

      case K::cycle_count_f3_0:
      case K::cycle_count_f3_1: {
        if (p.cycles < ns.cc_threshold || p.cycles - ns.cc_threshold > 3)
          return fail(error_code::unencodable);
        const unsigned bb = p.cycles - ns.cc_threshold;
        unsigned aa = 0;
        if (p.kind == K::cycle_count_f3_0) {
          if (p.count < 1 || p.count > 4) return fail(error_code::unencodable);
          aa = p.count - 1;
        } else {
          if (p.count || p.ignored_bits > 3) return fail(error_code::unencodable);
          aa = p.ignored_bits;
        }
        return single(static_cast<std::uint8_t>(0x10 | (aa << 2) | bb));
      }

      case K::commit:
      case K::cancel_f1: {
        if (p.kind == K::commit)
          o[0] = 0x2d;
        else
          o[0] = (p.flags & packet_flag::mispredict) ? 0x2f : 0x2e;
        if (!header_ok(o[0], p.kind)) return fail(error_code::reserved_header);
        if (p.kind == K::cancel_f1 && p.count == 0) return fail(error_code::unencodable);
        const int n = leb(1, p.count, p.len1, detail::leb32);
        return n < 0 ? fail(error_code::unencodable) : n;
      }

      case K::mispredict:
      case K::cancel_f2: {
        const int a = mispredict_a(p);
        if (a < 0 || (p.kind == K::cancel_f2 && p.count != 1) || (p.kind == K::mispredict && p.count))
          return fail(error_code::unencodable);
        return single(static_cast<std::uint8_t>((p.kind == K::mispredict ? 0x30 : 0x34) | a));
      }
      case K::cancel_f3: {
        if (p.count < 2 || p.count > 5 || p.atom_count > 1 || p.atoms != p.atom_count)
          return fail(error_code::unencodable);
        return single(static_cast<std::uint8_t>(0x38 | ((p.count - 2) << 1) | p.atom_count));
      }

      case K::atom_f1:
      case K::atom_f2:
      case K::atom_f3:
      case K::atom_f4:
      case K::atom_f5_1:
      case K::atom_f5_2:
      case K::atom_f6: {
        bool ok = false;
        const std::uint8_t h = atom_header(p, ok);
        if (!ok) return fail(error_code::unencodable);
        return single(h);
      }

      case K::context: {
        o[0] = 0x81;
        const int n = write_context(o + 1, p, ns);
        return n < 0 ? n : 1 + n;
      }

      case K::exception_unknown_address:
      case K::transaction_failure:
      case K::pe_reset: {
        if ((p.kind == K::pe_reset) != (p.exception_type == 0x00) ||
            (p.kind == K::transaction_failure) != (p.exception_type == 0x18))
          return fail(error_code::unencodable);
        const int n = exception_info(o, p);
        if (n < 0) return n;
        o[2] = 0x70;
        ns.history.add(0, isa::is0);  // D9.2.18.5
        return 3;
      }

      case K::instrumentation:
        o[0] = 0x09;
        if (!header_ok(0x09, p.kind)) return fail(error_code::reserved_header);
        o[1] = p.info;
        detail::store_le(o + 2, p.address, 8);
        return 10;

      default: break;
    }

    // Every packet with an address form: target, exception, source and Q packets.
    const address_form af = form_of(p.kind, p.index);
    if (af.form < 0) return fail(error_code::unencodable);
    int n = 0;
    if (is_exception(p.kind)) {
      n = exception_info(o, p);
      if (n < 0) return n;
      o[n++] = af.header;
    } else {
      o[0] = af.header;
      if (!header_ok(af.header, p.kind)) return fail(error_code::reserved_header);
      n = 1;
    }
    if (af.form == 0 && p.index > 2) return fail(error_code::unencodable);
    const int a = write_address(o + n, af.form, af.s, p, ns);
    if (a < 0) return a;
    n += a;
    if (af.with_context) {
      const int k = write_context(o + n, p, ns);
      if (k < 0) return k;
      n += k;
    }
    if (is_q(p.kind)) {
      n = leb(n, p.count, p.len1, detail::leb32);
      if (n < 0) return fail(error_code::unencodable);
    }
    return n;
  }

  // Exception header and info byte (D5.13): 0 E[1] TYPE E[0].
  static constexpr int exception_info(std::uint8_t* o, const packet& p) noexcept {
    if ((p.e != 1 && p.e != 2) || p.exception_type > 31) return fail(error_code::unencodable);
    o[0] = 0x06;
    o[1] = static_cast<std::uint8_t>((p.e & 1u) | (p.exception_type << 1) | ((p.e >> 1) << 6));
    return 2;
  }

  detail::configured<Config> conf_{};
  stream_state st_{};
};

}  // namespace tracecodec::ete
