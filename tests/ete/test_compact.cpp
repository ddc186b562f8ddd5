// SPDX-License-Identifier: Apache-2.0
// The compact form's tables and computations (TRACECODEC_COMPACT: firmware images) against the
// default form's: the compact header table and the per-kind legality bits mean what the full
// header table means, for several configurations; the computed atom headers equal the perfect
// hash's for every atom packet and refuse what it refuses. (This file runs in both ete-unit
// and ete-unit-compact; the whole suite runs in both forms.)
#include <doctest/doctest.h>

#include <cstdint>
#include <random>

#include "common.hpp"

using namespace tracecodec::ete;

namespace {

template <class C>
constexpr bool compact_table_matches() {
  return detail::same_as_full_table(detail::compact_header_table_for<C>, C::value) &&
         detail::legal_kinds_agree(detail::legal_kinds(C::value), C::value);
}
static_assert(compact_table_matches<fixed_config<presets::ete_1_0>>());
static_assert(compact_table_matches<fixed_config<presets::ete_1_1_tsmark>>());
static_assert(compact_table_matches<fixed_config<presets::ete_1_3_spec>>());
static_assert(compact_table_matches<fixed_config<presets::ete_spec255>>());
static_assert(compact_table_matches<fixed_config<presets::etmv4_0_juno>>());
static_assert(compact_table_matches<fixed_config<presets::etmv4_1_a55>>());
static_assert(compact_table_matches<fixed_config<presets::etmv4_5_m55>>());
// About 0.9 KB where the full table is 4 KB.
static_assert(sizeof(detail::compact_header_table_for<fixed_config<presets::ete_1_0>>) < 1024);

// The perfect hash's answer (the default form's encoder).
int hashed(packet_kind k, std::uint32_t atoms, std::uint8_t n) {
  const std::uint64_t key = detail::atom_key(atoms, k, n);
  const unsigned i = detail::atom_slot(key);
  return detail::atom_slots.key[i] == key ? detail::atom_slots.header[i] : -1;
}

}  // namespace

TEST_CASE("compact form: computed atom headers equal the hashed ones") {
  MESSAGE("codec form under test: " << (tracecodec::detail::compact ? "compact" : "default"));
  constexpr packet_kind kinds[] = {packet_kind::atom_f1, packet_kind::atom_f2, packet_kind::atom_f3,
                                   packet_kind::atom_f4, packet_kind::atom_f5_1, packet_kind::atom_f5_2,
                                   packet_kind::atom_f6, packet_kind::mispredict, packet_kind::event};
  std::mt19937_64 rng(5);
  unsigned long checked = 0, valid = 0;
  for (const packet_kind k : kinds) {
    for (unsigned n = 0; n <= 33; ++n) {
      const std::uint8_t count = static_cast<std::uint8_t>(n);
      auto check = [&](std::uint32_t bits) {
        const int h = detail::atom_header(k, bits, count);
        CHECK(h == hashed(k, bits, count));
        ++checked;
        if (h < 0) return;
        ++valid;
        const header_entry e = detail::atom_entry(static_cast<std::uint8_t>(h));  // decodes back
        CHECK(e.kind == k);
        CHECK(e.atoms == bits);
        CHECK(e.atom_count == n);
      };
      if (n <= 12) {
        for (std::uint32_t b = 0; b < (1u << n); ++b) check(b);
      } else {
        for (int i = 0; i < 2000; ++i) check(static_cast<std::uint32_t>(rng()));
        // E runs with any last atom (format 6 shapes), and with bits above the count set.
        const std::uint32_t es = n >= 32 ? 0xffffffffu : (1u << (n - 1)) - 1u;
        for (std::uint32_t last : {0u, 1u}) {
          const std::uint32_t b = es | (n >= 33 ? 0u : (last << (n - 1)));
          check(b);
          check(b | (n < 32 ? 1u << n : 0u));
        }
      }
      check(0xffffffffu);
    }
  }
  CHECK(valid == 64);  // each atom header once (D9.2.10)
  MESSAGE(checked << " atom packets");
}

TEST_CASE("compact form: the atoms alone choose the header") {
  // atom_header_for(n, bits) names the one atom packet that carries exactly these atoms.
  for (unsigned h = 0xc0; h <= 0xff; ++h) {
    const header_entry e = detail::atom_entry(static_cast<std::uint8_t>(h));
    CHECK(detail::atom_header_for(e.atom_count, e.atoms) == static_cast<int>(h));
  }
  unsigned headers = 0;
  for (unsigned n = 1; n <= 24; ++n)
    for (std::uint32_t b = 0; n <= 12 && b < (1u << n); ++b)
      if (detail::atom_header_for(static_cast<std::uint8_t>(n), b) >= 0) ++headers;
  CHECK(headers == 64 - 24);  // all but format 6 with 13-24 atoms (not enumerated here)
}
