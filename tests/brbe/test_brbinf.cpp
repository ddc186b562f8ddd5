// SPDX-License-Identifier: Apache-2.0
// BRBINF<n>_EL1 field by field, against the register description (brbe-BRBINF-register.txt).
#include <doctest/doctest.h>

#include <tracecodec/brbe/brbinf.hpp>
#include <tracecodec/host/brbe/format.hpp>

#include <cstdint>
#include <string>

#include "../common/random.hpp"
#include "../common/register_check.hpp"

using namespace tracecodec::brbe;

namespace {

// Field positions as the register description lists them, low bit and width.
constexpr test::position fields[] = {
    {"VALID", 0, 2}, {"MPRED", 5, 1}, {"EL", 6, 2},   {"TYPE", 8, 6},
    {"T", 16, 1},    {"LASTFAILED", 17, 1}, {"CC", 32, 14}, {"CCU", 46, 1},
};

std::uint64_t field_of(const brbinf& r, const std::string& n) {
  if (n == "VALID") return r.valid;
  if (n == "MPRED") return r.mpred;
  if (n == "EL") return r.el;
  if (n == "TYPE") return r.type;
  if (n == "T") return r.t;
  if (n == "LASTFAILED") return r.lastfailed;
  if (n == "CC") return r.cc;
  return r.ccu;
}

// The TYPE table of the register description, code and text.
constexpr test::code_row<branch_type> type_table[] = {
    {0b000000, branch_type::direct, "Unconditional direct branch, excluding Branch with link"},
    {0b000001, branch_type::indirect,
     "Indirect branch, excluding Branch with link, Return from subroutine, and Exception return"},
    {0b000010, branch_type::direct_call, "Direct Branch with link"},
    {0b000011, branch_type::indirect_call, "Indirect Branch with link"},
    {0b000101, branch_type::subroutine_return, "Return from subroutine"},
    {0b000111, branch_type::exception_return, "Exception return"},
    {0b001000, branch_type::conditional_direct, "Conditional direct branch"},
    {0b100001, branch_type::debug_halt, "Debug halt"},
    {0b100010, branch_type::call, "Call"},
    {0b100011, branch_type::trap, "Trap"},
    {0b100100, branch_type::serror, "SError"},
    {0b100110, branch_type::instruction_debug, "Instruction debug"},
    {0b100111, branch_type::data_debug, "Data debug"},
    {0b101010, branch_type::alignment, "Alignment"},
    {0b101011, branch_type::instruction_fault, "Inst Fault"},
    {0b101100, branch_type::data_fault, "Data Fault"},
    {0b101110, branch_type::irq, "IRQ"},
    {0b101111, branch_type::fiq, "FIQ"},
    {0b110000, branch_type::implementation_defined_exception_to_el3,
     "IMPLEMENTATION DEFINED exception to EL3"},
    {0b111001, branch_type::debug_state_exit, "Debug State Exit"},
};

}  // namespace

TEST_CASE("BRBINF: each bit lands in the field the register description gives it") {
  // [63:47], [31:18], [15:14], [4:2]
  CHECK(test::res0_from_table(fields) == 0xffff8000fffcc01cull);
  test::check_each_bit(fields, decode_brbinf, field_of);
}

TEST_CASE("BRBINF: a full indirect call record with a cycle count, by hand") {
  // VALID 0b11, MPRED 1, EL 0b01, TYPE 0b000011, T 0, LASTFAILED 1, CC E=2 M=0xf4, CCU 0:
  // 0b11 | 1<<5 | 1<<6 | 3<<8 | 1<<17 | 0x2f4<<32 = 0x000002f400020363.
  const brbinf r = decode_brbinf(0x000002f400020363ull);
  CHECK(r.valid == 3);
  CHECK(r.validity() == record_validity::full);
  CHECK(r.mpred == 1);
  CHECK(r.el == 1);
  CHECK(r.target_el() == exception_level::el1);
  CHECK(r.type == 3);
  CHECK(r.branch() == branch_type::indirect_call);
  CHECK(r.t == 0);
  CHECK(r.lastfailed == 1);
  CHECK(r.cc == 0x2f4);
  CHECK(r.ccu == 0);
  CHECK(r.res0 == 0);
  CHECK(r.cycles(20) == cycle_count{cycle_status::known, 1000});

  brbinf w;
  w.valid = 3;
  w.mpred = 1;
  w.el = 1;
  w.type = static_cast<std::uint8_t>(branch_type::indirect_call);
  w.lastfailed = 1;
  w.cc = encode_cycles(1000, 20).cc;
  CHECK(encode_brbinf(w).value == 0x000002f400020363ull);
}

TEST_CASE("BRBINF: CCU=1 and CC all ones") {
  // CCU = 1 (bit 46), CC all zeros, half-source IRQ: 0x0000400000002e02.
  const brbinf u = decode_brbinf(0x0000400000002e02ull);
  CHECK(u.validity() == record_validity::half_source);
  CHECK(u.branch() == branch_type::irq);
  CHECK(u.ccu == 1);
  CHECK(u.cycles(20).status == cycle_status::unknown);
  // CC all ones (bits [45:32] = 0x3fff), CCU 0.
  const brbinf o = decode_brbinf(0x00003fff00000003ull);
  CHECK(o.cc == 0x3fff);
  CHECK(o.cycles(20).status == cycle_status::overflow);
}

TEST_CASE("BRBINF: every TYPE the register names, and every other code reserved") {
  const unsigned reserved = test::check_codes(
      type_table, 6, [](unsigned code) { return branch_type_of(static_cast<std::uint8_t>(code)); },
      branch_type_meaning, [](unsigned code, const test::code_row<branch_type>* row) {
        if (row != nullptr) CHECK(static_cast<unsigned>(row->value) == code);
        CHECK(decode_brbinf(std::uint64_t{code} << 8).branch() ==
              branch_type_of(static_cast<std::uint8_t>(code)));
      });
  CHECK(reserved == 64 - 20);
  // A reserved code is kept as read.
  CHECK(decode_brbinf(0x3full << 8).type == 0x3f);
  CHECK(encode_brbinf(decode_brbinf(0x3full << 8)).value == 0x3full << 8);
}

TEST_CASE("BRBINF: which fields each VALID value makes valid") {
  using f = record_field;
  // From the field descriptions: CCU, CC, LASTFAILED, TYPE valid when VALID != 0b00; T and
  // MPRED when VALID is 0b10 or 0b11; EL when VALID is 0b01 or 0b11.
  struct row {
    record_validity v;
    bool ccu, cc, lastfailed, t, type, el, mpred, src, tgt;
  };
  constexpr row table[] = {
      {record_validity::invalid, false, false, false, false, false, false, false, false, false},
      {record_validity::half_target, true, true, true, false, true, true, false, false, true},
      {record_validity::half_source, true, true, true, true, true, false, true, true, false},
      {record_validity::full, true, true, true, true, true, true, true, true, true},
  };
  for (const row& r : table) {
    CAPTURE(static_cast<int>(r.v));
    CHECK(is_field_valid(r.v, f::ccu) == r.ccu);
    CHECK(is_field_valid(r.v, f::cc) == r.cc);
    CHECK(is_field_valid(r.v, f::lastfailed) == r.lastfailed);
    CHECK(is_field_valid(r.v, f::t) == r.t);
    CHECK(is_field_valid(r.v, f::type) == r.type);
    CHECK(is_field_valid(r.v, f::el) == r.el);
    CHECK(is_field_valid(r.v, f::mpred) == r.mpred);
    CHECK(is_field_valid(r.v, f::source_address) == r.src);
    CHECK(is_field_valid(r.v, f::target_address) == r.tgt);
  }
  CHECK(decode_brbinf(0b01).validity() == record_validity::half_target);
  CHECK(decode_brbinf(0b10).validity() == record_validity::half_source);
}

TEST_CASE("BRBINF: random 64-bit values round-trip, RES0 bits reported") {
  const std::uint64_t res0 = test::res0_from_table(fields);
  test::splitmix64 rng{0xb5b1f0};
  unsigned with_res0 = 0;
  for (int i = 0; i < 200000; ++i) {
    // Half the values keep RES0 clear, as hardware writes them.
    std::uint64_t x = rng.next();
    if (i % 2) x &= ~res0;
    const brbinf r =
        test::require_round_trip(fields, res0, x, decode_brbinf, encode_brbinf, field_of);
    with_res0 += r.res0 != 0;
    brbinf clean = r;
    clean.res0 = 0;
    REQUIRE(encode_brbinf(clean).value == (x & ~res0));
  }
  CHECK(with_res0 > 99000);
}

TEST_CASE("BRBINF: encode rejects fields wider than their bits") {
  brbinf r;
  r.valid = 4;
  CHECK(encode_brbinf(r).error == encode_error::field_out_of_range);
  r = {};
  r.type = 64;
  CHECK(encode_brbinf(r).error == encode_error::field_out_of_range);
  r = {};
  r.cc = 0x4000;
  CHECK(encode_brbinf(r).error == encode_error::field_out_of_range);
  r = {};
  r.el = 4;
  CHECK(encode_brbinf(r).error == encode_error::field_out_of_range);
  r = {};
  r.res0 = 1;  // bit 0 is VALID, not RES0
  CHECK(encode_brbinf(r).error == encode_error::res0_outside_mask);
  CHECK(encode_brbinf(r).value == 0);
  r.res0 = 1ull << 63;
  CHECK(encode_brbinf(r).value == 1ull << 63);
}
