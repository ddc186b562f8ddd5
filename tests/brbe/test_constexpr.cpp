// SPDX-License-Identifier: Apache-2.0
// The BRBE codecs run inside static_assert: decoding, encoding, the cycle count format and a
// compile-time configuration are constant expressions.
#include <doctest/doctest.h>

#include <tracecodec/brbe/brbinf.hpp>
#include <tracecodec/brbe/config.hpp>
#include <tracecodec/brbe/cycle_count.hpp>
#include <tracecodec/brbe/record.hpp>

using namespace tracecodec::brbe;

namespace {

// Full record, indirect call to EL1, 1000 cycles: 0b11 | 1<<6 | 3<<8 | 0x2f4<<32.
constexpr brbinf info = decode_brbinf(0x000002f400000343ull);
static_assert(info.validity() == record_validity::full);
static_assert(info.branch() == branch_type::indirect_call);
static_assert(info.target_el() == exception_level::el1);
static_assert(info.cycles(20) == cycle_count{cycle_status::known, 1000});
static_assert(encode_brbinf(info).value == 0x000002f400000343ull);
static_assert(branch_type_of(0b000100) == branch_type::reserved);

static_assert(encode_cycles(1001, 20) == cc_encoding{0x02f4, 0});
static_assert(encode_cycles(1u << 20, 20) == cc_encoding{cc_overflowed, 0});
static_assert(decode_cycles(0x0cff, false, 20).cycles == 1046528);
static_assert(decode_cycles(0x3fff, false, 20).status == cycle_status::overflow);

// Every canonical 20-bit encoding re-encodes to itself, checked by the compiler.
constexpr bool all_canonical_round_trip() {
  for (unsigned cc = 0; cc <= 0x0cff; ++cc) {
    const cycle_count c = decode_cycles(static_cast<std::uint16_t>(cc), false, 20);
    if (!c.known() || encode_cycles(c.cycles, 20).cc != cc) return false;
  }
  return true;
}
static_assert(all_canonical_round_trip());

using cfg = fixed_config<presets::brbidr0_64_records>;
static_assert(cfg::get().num_records == 64 && cfg::get().counter_bits == 20);
static_assert(validate_brbidr0(0x5000) == config_error::reserved_numrec);

constexpr branch_record record_at_compile_time() {
  const record_codec<cfg> codec;
  record_fields f;
  f.validity = record_validity::half_target;
  f.target = 0xffff800010000280ull;
  f.type = branch_type::irq;
  f.el = exception_level::el1;
  f.cycles = {300, true};
  return codec.decode(codec.encode(f).registers).record;
}
constexpr branch_record rec = record_at_compile_time();
static_assert(rec.validity() == record_validity::half_target);
static_assert(rec.type() == maybe<branch_type>{branch_type::irq, true});
static_assert(!rec.source_address().known);
static_assert(rec.target_address().value == 0xffff800010000280ull);
// 300 = 0b1_0010_1100: E = 1, M = 0x2c, exact.
static_assert(rec.info.cc == 0x012c && rec.cycles().value.cycles == 300);

static_assert(record_codec<>{runtime_config{0x5040}}.slot(40).bank == 1);

}  // namespace

TEST_CASE("BRBE compile-time decode and encode (see static_asserts)") {
  CHECK(rec.target_address().known);
  CHECK(all_canonical_round_trip());
}
