// SPDX-License-Identifier: Apache-2.0
// BRBIDR0_EL1 configuration and Branch records (BRBINF + BRBSRC + BRBTGT), configured at
// compile time and at run time.
#include <doctest/doctest.h>

#include <tracecodec/brbe/config.hpp>
#include <tracecodec/brbe/record.hpp>

#include <cstdint>
#include <initializer_list>

using namespace tracecodec::brbe;

TEST_CASE("BRBIDR0: fields and validation") {
  // CC [15:12] = 0b0101, FORMAT [11:8] = 0, NUMREC [7:0] = 0x40.
  CHECK(decode_brbidr0(0x5040) == brbidr0{0x40, 0, 0b0101, 0});
  CHECK(encode_brbidr0(brbidr0{0x20, 0, 0b0101, 0}).value == 0x5020);
  CHECK(encode_brbidr0(decode_brbidr0(0xabcd'0000'0000'5f40ull)).value ==
        0xabcd'0000'0000'5f40ull);
  CHECK(validate_brbidr0(0x5008) == config_error::none);
  CHECK(validate_brbidr0(0x5010) == config_error::none);
  CHECK(validate_brbidr0(0x5020) == config_error::none);
  CHECK(validate_brbidr0(0x5040) == config_error::none);
  CHECK(validate_brbidr0(0x5000) == config_error::reserved_numrec);
  CHECK(validate_brbidr0(0x5030) == config_error::reserved_numrec);
  CHECK(validate_brbidr0(0x5080) == config_error::reserved_numrec);
  CHECK(validate_brbidr0(0x5140) == config_error::reserved_format);
  CHECK(validate_brbidr0(0x4040) == config_error::reserved_cc);
  CHECK(validate_brbidr0(0x6040) == config_error::reserved_cc);
  CHECK(validate_brbidr0(0x1'0000'5040ull) == config_error::res0_set);
  for (unsigned cc = 0; cc < 16; ++cc)
    CHECK(validate_brbidr0(0x0040 | cc << 12) ==
          (cc == 0b0101 ? config_error::none : config_error::reserved_cc));

  using fixed = fixed_config<presets::brbidr0_32_records>;
  static_assert(fixed::get() == config{32, 20, 0});
  const runtime_config rt{0x5020};
  CHECK(rt.status() == config_error::none);
  CHECK(rt.get() == config{32, 20, 0});
  CHECK(runtime_config{}.status() == config_error::reserved_numrec);
}

TEST_CASE("records: slots, BANK and <m> (F1.1.11)") {
  const record_codec<fixed_config<presets::brbidr0_64_records>> c64;
  CHECK(c64.capacity() == 64);
  const record_slot s0 = c64.slot(0), s31 = c64.slot(31), s32 = c64.slot(32), s63 = c64.slot(63);
  CHECK((s0.bank == 0 && s0.m == 0 && s0.error == record_error::none));
  CHECK((s31.bank == 0 && s31.m == 31));
  CHECK((s32.bank == 1 && s32.m == 0));
  CHECK((s63.bank == 1 && s63.m == 31));
  CHECK(c64.slot(64).error == record_error::index_out_of_range);
  const record_codec<> c8{runtime_config{0x5008}};
  CHECK(c8.capacity() == 8);
  CHECK(c8.slot(7).error == record_error::none);
  CHECK(c8.slot(8).error == record_error::index_out_of_range);
  const record_codec<> bad{runtime_config{0x5000}};
  CHECK(bad.capacity() == 0);
  CHECK(bad.slot(0).error == record_error::invalid_config);
}

TEST_CASE("records: each VALID value exposes only its valid fields") {
  const record_codec<fixed_config<presets::brbidr0_64_records>> codec;
  // Every BRBINF field set: MPRED 1, EL 0b10, TYPE IRQ (0b101110), T 1, LASTFAILED 1,
  // CC 0x0010 (16 cycles); VALID varies in bits [1:0].
  const std::uint64_t fields = 0x0000'0010'0003'2ea0ull;
  const std::uint64_t src = 0xffff'8000'1234'5678ull, tgt = 0xffff'8000'1000'0280ull;

  const branch_record full = codec.decode({fields | 0b11, src, tgt}).record;
  CHECK(full.validity() == record_validity::full);
  CHECK(full.source_address() == maybe<std::uint64_t>{src, true});
  CHECK(full.target_address() == maybe<std::uint64_t>{tgt, true});
  CHECK(full.type() == maybe<branch_type>{branch_type::irq, true});
  CHECK(full.target_el() == maybe<exception_level>{exception_level::el2, true});
  CHECK(full.mispredicted() == maybe<bool>{true, true});
  CHECK(full.transactional() == maybe<bool>{true, true});
  CHECK(full.last_failed() == maybe<bool>{true, true});
  CHECK(full.cycles() == maybe<cycle_count>{{cycle_status::known, 16}, true});

  const branch_record target = codec.decode({fields | 0b01, src, tgt}).record;
  CHECK(target.validity() == record_validity::half_target);
  CHECK_FALSE(target.source_address().known);
  CHECK(target.target_address() == maybe<std::uint64_t>{tgt, true});
  CHECK(target.type().known);
  CHECK(target.target_el().known);
  CHECK_FALSE(target.mispredicted().known);
  CHECK_FALSE(target.transactional().known);
  CHECK(target.last_failed().known);
  CHECK(target.cycles().known);

  const branch_record source = codec.decode({fields | 0b10, src, tgt}).record;
  CHECK(source.validity() == record_validity::half_source);
  CHECK(source.source_address() == maybe<std::uint64_t>{src, true});
  CHECK_FALSE(source.target_address().known);
  CHECK(source.type().known);
  CHECK_FALSE(source.target_el().known);
  CHECK(source.mispredicted().known);
  CHECK(source.transactional().known);
  CHECK(source.last_failed().known);
  CHECK(source.cycles().known);

  const branch_record none = codec.decode({fields, src, tgt}).record;
  CHECK_FALSE(none.is_valid());
  CHECK_FALSE(none.source_address().known);
  CHECK_FALSE(none.target_address().known);
  CHECK_FALSE(none.type().known);
  CHECK_FALSE(none.target_el().known);
  CHECK_FALSE(none.mispredicted().known);
  CHECK_FALSE(none.transactional().known);
  CHECK_FALSE(none.last_failed().known);
  CHECK_FALSE(none.cycles().known);

  // The registers come back as read, not-valid fields included.
  CHECK(none.raw() == raw_record{fields, src, tgt});
  CHECK(target.raw() == raw_record{fields | 0b01, src, tgt});
}

TEST_CASE("records: encode from meaning, fixed and run-time configuration alike") {
  record_fields f;
  f.validity = record_validity::full;
  f.source = 0x0000'aaaa'0000'1000ull;
  f.target = 0x0000'aaaa'0000'2000ull;
  f.type = branch_type::indirect_call;
  f.el = exception_level::el1;
  f.cycles = {1001, true};  // rounds to 1000: CC E=2, M=0xf4
  // 0b11 | EL1 << 6 | TYPE 3 << 8 | CC 0x2f4 << 32
  const raw_record expected{0x0000'02f4'0000'0343ull, f.source, f.target};

  const record_codec<fixed_config<presets::brbidr0_32_records>> fixed;
  const record_codec<> runtime{runtime_config{presets::brbidr0_32_records}};
  CHECK(fixed.encode(f).registers == expected);
  CHECK(runtime.encode(f).registers == expected);
  CHECK(fixed.decode(expected).record == runtime.decode(expected).record);

  // Half-source: EL and BRBTGT are not valid and written as zero; MPRED and T are kept.
  f.validity = record_validity::half_source;
  f.mispredicted = true;
  f.transactional = true;
  const encode_record_result hs = fixed.encode(f);
  CHECK(hs.error == record_error::none);
  CHECK(hs.registers == raw_record{0x0000'02f4'0001'0322ull, f.source, 0});
  // Half-target: MPRED, T and BRBSRC are not valid and written as zero.
  f.validity = record_validity::half_target;
  CHECK(fixed.encode(f).registers == raw_record{0x0000'02f4'0000'0341ull, 0, f.target});
  // Unknown count: CCU 1, CC 0.
  f.cycles = {};
  CHECK(fixed.encode(f).registers.brbinf == 0x0000'4000'0000'0341ull);
  // A count beyond the 20-bit counter saturates to CC all ones.
  f.cycles = {1ull << 20, true};
  CHECK(fixed.encode(f).registers.brbinf == 0x0000'3fff'0000'0341ull);
  // Invalid record: all zero.
  f.validity = record_validity::invalid;
  CHECK(fixed.encode(f).registers == raw_record{});
  // A reserved type has no code.
  f.validity = record_validity::full;
  f.type = branch_type::reserved;
  CHECK(fixed.encode(f).error == record_error::reserved_type);
  f.type = static_cast<branch_type>(0b000100);  // an unnamed TYPE code
  CHECK(fixed.encode(f).error == record_error::reserved_type);
  f.type = branch_type::direct;
  f.el = static_cast<exception_level>(4);
  CHECK(fixed.encode(f).error == record_error::field_out_of_range);
  // An invalid run-time configuration is reported, not guessed at.
  const record_codec<> bad{runtime_config{0x4040}};
  CHECK(bad.status() == config_error::reserved_cc);
  CHECK(bad.encode(record_fields{}).error == record_error::invalid_config);
  CHECK(bad.decode(expected).error == record_error::invalid_config);
}

TEST_CASE("records: decode(encode(fields)) gives the fields back") {
  const record_codec<fixed_config<presets::brbidr0_64_records>> codec;
  for (unsigned v = 1; v < 4; ++v) {
    for (const branch_type t : {branch_type::direct, branch_type::subroutine_return,
                                branch_type::data_fault, branch_type::debug_state_exit}) {
      record_fields f;
      f.validity = static_cast<record_validity>(v);
      f.source = 0x4000'0000ull + v;
      f.target = 0x8000'0000ull + v;
      f.type = t;
      f.el = exception_level::el2;
      f.mispredicted = true;
      f.transactional = false;
      f.last_failed = true;
      f.cycles = {123456, true};
      const branch_record r = codec.decode(codec.encode(f).registers).record;
      CHECK(r.validity() == f.validity);
      CHECK(r.type() == maybe<branch_type>{t, true});
      CHECK(r.last_failed() == maybe<bool>{true, true});
      // 123456 = 0b1_1110_0010_0100_0000: E = 17-8 = 9, kept to a multiple of 2^8: 123392.
      CHECK(r.cycles() == maybe<cycle_count>{{cycle_status::known, 123392}, true});
      // A not-valid address register is written as zero.
      CHECK(r.source_address() == maybe<std::uint64_t>{v >= 2 ? f.source : 0, v >= 2});
      CHECK(r.target_address() == maybe<std::uint64_t>{v != 2 ? f.target : 0, v != 2});
      CHECK(r.target_el().known == (v != 2));
      CHECK(r.mispredicted().known == (v >= 2));
    }
  }
}

TEST_CASE("records: a buffer read in index order (R_SQLCX, R_BNGTH)") {
  const record_codec<> codec{runtime_config{0x5008}};  // 8 records
  const raw_record valid{0x3, 1, 2}, invalid{};
  {
    const raw_record buf[] = {valid, valid, valid, invalid, invalid, invalid, invalid, invalid};
    const buffer_scan s = codec.scan(buf, 8);
    CHECK(s.error == record_error::none);
    CHECK(s.valid_records == 3);
  }
  {
    const raw_record buf[] = {valid, invalid, valid};
    const buffer_scan s = codec.scan(buf, 3);
    CHECK(s.error == record_error::not_contiguous);
    CHECK(s.error_index == 2);
    CHECK(s.valid_records == 1);
  }
  {
    raw_record buf[12] = {valid, valid, valid, valid, valid, valid, valid, valid};
    CHECK(codec.scan(buf, 12).error == record_error::none);  // 8..11 read as zero
    CHECK(codec.scan(buf, 12).valid_records == 8);
    buf[10] = valid;  // a record beyond NUMREC cannot hold anything
    const buffer_scan s = codec.scan(buf, 12);
    CHECK(s.error == record_error::index_out_of_range);
    CHECK(s.error_index == 10);
  }
  const record_codec<> bad{runtime_config{}};
  CHECK(bad.scan(nullptr, 0).error == record_error::invalid_config);
}
