// SPDX-License-Identifier: Apache-2.0
// Every te_inst format and subformat from bit vectors built by hand from the spec tables.
// Each vector lists the table's fields in transmission order (value, width), LSB first; the
// expected compressed bytes were worked out by hand (bit positions in the comments) and are
// checked against the packed vector, so the hand arithmetic is itself verified.
#include <doctest/doctest.h>

#include "common.hpp"

using namespace etest;
using et::te_inst;
using et::te_inst_kind;
using et::format;

namespace {

// A: RV32 defaults: iaddress_width_p 32, iaddress_lsb_p 1 (31-bit address field),
// privilege_width_p 2, ecause_width_p 6, notime_p, nocontext_p, no irdepth, no format 0.
constexpr et::parameters A = et::presets::rv32;
// B: A plus time_width_p 8, context_width_p 4, return_stack_size_p 2 (irdepth 2+1 = 3 bits),
// cache_size_p 3, f0s_width_p 1, both optional formats.
constexpr et::parameters B{.context_width_p = 4, .time_width_p = 8, .notime_p = false,
                           .nocontext_p = false, .return_stack_size_p = 2, .cache_size_p = 3,
                           .f0s_width_p = 1, .branch_prediction = true, .jump_target_cache = true};
// C: f0s_width_p 0 with only the jump target cache (subformat inferred 1), cache_size_p 2.
constexpr et::parameters C{.cache_size_p = 2, .jump_target_cache = true};
// D: f0s_width_p 0 with only branch prediction (subformat inferred 0).
constexpr et::parameters D{.branch_prediction = true};
// E: f0s_width_p 2: subformats 2 and 3 are reserved.
constexpr et::parameters E{.cache_size_p = 3, .f0s_width_p = 2, .branch_prediction = true,
                           .jump_target_cache = true};

template <et::parameters P>
void check_vector(const bytes& full_vector, unsigned full_bits, const bytes& expected,
                  const te_inst& inst, te_inst_kind kind, et::trace_mode mode = {}) {
  INFO("expected " << hex(expected) << " full " << hex(full_vector));
  // The hand-computed bytes are the sign-compressed form of the hand-built bit vector.
  REQUIRE(restores(expected, full_vector));
  const et::payload_codec<et::fixed_config<P>> fixed;
  const et::payload_codec<> runtime{P};
  for (int which = 0; which < 2; ++which) {
    const auto check = [&](const auto& c) {
      const et::decode_result r = decode(c, expected, mode);
      REQUIRE(r.error == et::error_code::ok);
      CHECK(r.kind == kind);
      CHECK(r.inst == inst);
      CHECK(r.full_bits == full_bits);
      CHECK(hex(encode(c, inst, mode)) == hex(expected));  // the shortest payload
      // The uncompressed payload decodes the same, and re-encodes byte for byte on request.
      const et::decode_result u = decode(c, full_vector, mode);
      CHECK(u.error == et::error_code::ok);
      CHECK(u.inst == inst);
      CHECK(hex(encode(c, inst, mode, full_vector.size())) == hex(full_vector));
      CHECK(c.full_bits(inst, mode) == full_bits);
    };
    if (which == 0) check(fixed);
    else check(runtime);
  }
}

}  // namespace

TEST_CASE("format 3 subformat 0 (start)") {
  unsigned bits = 0;
  // format 11 | subformat 00 | branch 1 | privilege 11 | address 0x40000000 (31 bits)
  // bits 0-7: 1,1,0,0,1,1,1,0 = 0x73; address bit 30 at bit 37 -> byte 4 = 0b111'00000
  // (bits 38-39 sign-extend it) = 0xe0. Byte 4 differs from the fill of byte 3 (00): 5 bytes.
  const bytes full = pack({{3, 2}, {0, 2}, {1, 1}, {3, 2}, {0x40000000, 31}}, &bits);
  CHECK(bits == 38);
  check_vector<A>(full, 38, {0x73, 0x00, 0x00, 0x00, 0xe0},
                  te_inst{.format = format::sync, .subformat = 0, .branch = true, .privilege = 3,
                          .address = 0x80000000},
                  te_inst_kind::sync_start);
}

TEST_CASE("format 3 subformat 0 with time and context (parameters B)") {
  // format 11 | subformat 00 | branch 0 | privilege 10 | time 0x01 (8) | context 0xf (4) |
  // address field 2 (31 bits)
  // byte 0: 1,1,0,0,0,0,1,1 = 0xc3 (time bit 0 at bit 7); byte 1: bit 15 = context bit 0 =
  // 0x80; byte 2: bits 16-18 context, bit 20 address bit 1 = 0x17; then zeros.
  const bytes full = pack({{3, 2}, {0, 2}, {0, 1}, {2, 2}, {0x01, 8}, {0xf, 4}, {2, 31}});
  check_vector<B>(full, 50, {0xc3, 0x80, 0x17},
                  te_inst{.format = format::sync, .subformat = 0, .branch = false, .privilege = 2,
                          .time = 1, .context = 0xf, .address = 4},
                  te_inst_kind::sync_start);
}

TEST_CASE("format 3 subformat 1 (trap): exception with tval") {
  // format 11 | subformat 01 | branch 1 | privilege 11 | ecause 2 (6) | interrupt 0 |
  // thaddr 1 | address 0x40000080 (31) | tval 0x13 (32)
  // byte 0: 1,1,1,0,1,1,1,0 = 0x77; byte 1: ecause bit 1 (bit 8), thaddr (bit 14) = 0x41;
  // byte 2: address bit 7 at bit 22 = 0x40; byte 5: address bit 30 (bit 45), tval bits 0-1
  // (46-47) = 0xe0; byte 6: tval bit 4 (bit 50) = 0x04; bytes 7-9 zero and dropped.
  const bytes full = pack({{3, 2}, {1, 2}, {1, 1}, {3, 2}, {2, 6}, {0, 1}, {1, 1},
                           {0x40000080, 31}, {0x13, 32}});
  check_vector<A>(full, 78, {0x77, 0x41, 0x40, 0x00, 0x00, 0xe0, 0x04},
                  te_inst{.format = format::sync, .subformat = 1, .branch = true, .privilege = 3,
                          .ecause = 2, .interrupt = false, .thaddr = true, .address = 0x80000100,
                          .tval = 0x13},
                  te_inst_kind::sync_trap);
}

TEST_CASE("format 3 subformat 1 (trap): interrupt, no tval") {
  // format 11 | subformat 01 | branch 0 | privilege 01 | ecause 7 | interrupt 1 | thaddr 1 |
  // address 0x200 (31); tval omitted for interrupts.
  // byte 0: 1,1,1,0,0,1,0,1 = 0xa7; byte 1: ecause bits 1-2, interrupt, thaddr = 0x63;
  // address bit 9 at bit 24: byte 3 = 0x01; the rest is zero: 4 bytes.
  const bytes full = pack({{3, 2}, {1, 2}, {0, 1}, {1, 2}, {7, 6}, {1, 1}, {1, 1}, {0x200, 31}});
  check_vector<A>(full, 46, {0xa7, 0x63, 0x00, 0x01},
                  te_inst{.format = format::sync, .subformat = 1, .branch = false, .privilege = 1,
                          .ecause = 7, .interrupt = true, .thaddr = true, .address = 0x400},
                  te_inst_kind::sync_trap);
}

TEST_CASE("format 3 subformat 1 (trap): implicit exception mode omits the handler address") {
  // format 11 | subformat 01 | branch 1 | privilege 11 | ecause 2 | interrupt 0 | thaddr 1 |
  // (no address: implicit exception, thaddr 1) | tval 0xffffffff
  // byte 0 = 0x77 as above; byte 1: bit 8, thaddr bit 14, tval bit 0 at bit 15 = 0xc1; the
  // rest is ones, the fill of 0xc1: 2 bytes.
  const et::trace_mode implicit{.implicit_exception = true};
  const bytes full = pack({{3, 2}, {1, 2}, {1, 1}, {3, 2}, {2, 6}, {0, 1}, {1, 1}, {0xffffffff, 32}});
  check_vector<A>(full, 47, {0x77, 0xc1},
                  te_inst{.format = format::sync, .subformat = 1, .branch = true, .privilege = 3,
                          .ecause = 2, .thaddr = true, .tval = 0xffffffff},
                  te_inst_kind::sync_trap, implicit);
  // Without the mode the same two bytes carry an address of all ones and a tval of all ones.
  const et::payload_codec<> c{A};
  const et::decode_result r = decode(c, {0x77, 0xc1});
  REQUIRE(r.error == et::error_code::ok);
  CHECK(r.inst.address == 0xfffffffe);
  CHECK(r.inst.tval == 0xffffffff);
}

TEST_CASE("format 3 subformat 2 (context)") {
  // format 11 | subformat 10 | privilege 01 | time 0xa5 (8) | context 0x3 (4)
  // byte 0: 1,1,0,1,1,0,1,0 = 0x5b; byte 1: time bits 2-7 then context bits 0-1 = 0xe9;
  // byte 2: context bits 2-3 = 0, padding 0 = 0x00, kept: 0xe9's fill would be 0xff.
  const bytes full = pack({{3, 2}, {2, 2}, {1, 2}, {0xa5, 8}, {0x3, 4}});
  check_vector<B>(full, 18, {0x5b, 0xe9, 0x00},
                  te_inst{.format = format::sync, .subformat = 2, .privilege = 1, .time = 0xa5,
                          .context = 3},
                  te_inst_kind::sync_context);
}

TEST_CASE("format 3 subformat 3 (support)") {
  // format 11 | subformat 11 | ienable 1 | encoder_mode 0 (1) | qual_status 11 (ended_ntr) |
  // ioptions 00101 (5) | denable 0 | dloss 1 | doptions 1010 (4)
  // byte 0: 1,1,1,1,1,0,1,1 = 0xdf; byte 1: 1,0,1,0,0,0,1,0 = 0x45; byte 2: doptions bits
  // 1-3 at 16-18 (1,0,1), padding ones = 0xfd.
  const bytes full = pack({{3, 2}, {3, 2}, {1, 1}, {0, 1}, {3, 2}, {5, 5}, {0, 1}, {1, 1}, {0xa, 4}});
  check_vector<A>(full, 19, {0xdf, 0x45, 0xfd},
                  te_inst{.format = format::sync, .subformat = 3, .ienable = true,
                          .encoder_mode = 0, .qual_status = et::qual_status::ended_ntr,
                          .ioptions = 5, .denable = false, .dloss = true, .doptions = 0xa},
                  te_inst_kind::sync_support);
}

TEST_CASE("format 2 (addr-only)") {
  SUBCASE("notify, updiscon, irreport equal to the address MSB compress away") {
    // format 10 | address 0x80 (31) | notify 0 | updiscon 0 | irreport 0
    // byte 0 = 0x02, address bit 7 at bit 9: byte 1 = 0x02; the rest zero: 2 bytes.
    const bytes full = pack({{2, 2}, {0x80, 31}, {0, 1}, {0, 1}, {0, 1}});
    check_vector<A>(full, 36, {0x02, 0x02},
                    te_inst{.format = format::addr_only, .address = 0x100}, te_inst_kind::addr_only);
  }
  SUBCASE("notify: the bit differs from the address MSB") {
    // notify bit 1 (MSB 0); updiscon and irreport take the notify bit's value (not set):
    // bits 33-35 = 1, padding ones: byte 4 = 0xfe, which is not the fill of byte 3.
    const bytes full = pack({{2, 2}, {0x80, 31}, {1, 1}, {1, 1}, {1, 1}});
    check_vector<A>(full, 36, {0x02, 0x02, 0x00, 0x00, 0xfe},
                    te_inst{.format = format::addr_only, .address = 0x100, .notify = true},
                    te_inst_kind::addr_only);
  }
  SUBCASE("updiscon with a negative differential address") {
    // address -16 bytes = field 0x7ffffff8; notify bit = MSB 1 (not set); updiscon bit 0
    // (differs from notify: set); irreport bit 0 (equal to updiscon: not set).
    // byte 0: 0,1,0,0,0,1,1,1 = 0xe2; bytes 1-3 0xff; byte 4: bits 32-33 ones = 0x03.
    const bytes full = pack({{2, 2}, {0x7ffffff8, 31}, {1, 1}, {0, 1}, {0, 1}});
    check_vector<A>(full, 36, {0xe2, 0xff, 0xff, 0xff, 0x03},
                    te_inst{.format = format::addr_only, .address = 0xfffffff0, .updiscon = true},
                    te_inst_kind::addr_only);
  }
  SUBCASE("irreport with irdepth (parameters B: 3 irdepth bits)") {
    // format 10 | address 1 (31) | notify 0 | updiscon 0 | irreport 1 | irdepth 101
    // byte 0: 0,1,1,0,... = 0x06; byte 4: irreport bit 35, irdepth 36-38 = 1,0,1, padding 1 =
    // 0b1101'1000 = 0xd8.
    const bytes full = pack({{2, 2}, {1, 31}, {0, 1}, {0, 1}, {1, 1}, {5, 3}});
    check_vector<B>(full, 39, {0x06, 0x00, 0x00, 0x00, 0xd8},
                    te_inst{.format = format::addr_only, .address = 2, .irreport = true, .irdepth = 5},
                    te_inst_kind::addr_only);
  }
  SUBCASE("no irreport: irdepth bits equal the preceding bit and compress away") {
    const bytes full = pack({{2, 2}, {1, 31}, {0, 1}, {0, 1}, {0, 1}, {0, 3}});
    check_vector<B>(full, 39, {0x06}, te_inst{.format = format::addr_only, .address = 2},
                    te_inst_kind::addr_only);
  }
}

TEST_CASE("format 1 (diff-delta) with address") {
  SUBCASE("branches 5: 7-bit branch map") {
    // format 01 | branches 00101 | branch_map 0011011 (7) | address 0x20 (31) | 0 | 0 | 0
    // byte 0: 1,0,1,0,1,0,0,1 = 0x95 (map bit 0 at bit 7); byte 1: map bits 1-6 = 1,0,1,1,0,0
    // then address bits 0-1 = 0x0d; address bit 5 at bit 19: byte 2 = 0x08.
    const bytes full = pack({{1, 2}, {5, 5}, {0x1b, 7}, {0x20, 31}, {0, 1}, {0, 1}, {0, 1}});
    check_vector<A>(full, 48, {0x95, 0x0d, 0x08},
                    te_inst{.format = format::diff_delta, .address = 0x40, .branches = 5,
                            .branch_map = 0x1b},
                    te_inst_kind::diff_delta);
  }
  SUBCASE("branches 16: 31-bit map, irreport set") {
    // format 01 | branches 10000 | map 0x0000ffff (31) | address 0 | notify 0 | updiscon 0 |
    // irreport 1. Bits: 0-1 = 1,0; 6 = 1; 7-22 ones; 71 = 1 -> 72 bits, no padding:
    // c1 ff 7f 00 00 00 00 00 80, nothing to drop.
    const bytes full = pack({{1, 2}, {16, 5}, {0xffff, 31}, {0, 31}, {0, 1}, {0, 1}, {1, 1}});
    check_vector<A>(full, 72, {0xc1, 0xff, 0x7f, 0, 0, 0, 0, 0, 0x80},
                    te_inst{.format = format::diff_delta, .branches = 16, .branch_map = 0xffff,
                            .irreport = true},
                    te_inst_kind::diff_delta);
  }
  SUBCASE("branches 1: 1-bit map") {
    // format 01 | branches 00001 | map 1 | address 0x7fffffff (-2 bytes) | notify 1 (MSB) |
    // updiscon 1 | irreport 1: bits 0 (1), 2 (1), 7 (map), 8.. all ones: 0x85 then ones.
    const bytes full = pack({{1, 2}, {1, 5}, {1, 1}, {0x7fffffff, 31}, {1, 1}, {1, 1}, {1, 1}});
    check_vector<A>(full, 42, {0x85},
                    te_inst{.format = format::diff_delta, .address = 0xfffffffe, .branches = 1,
                            .branch_map = 1},
                    te_inst_kind::diff_delta);
  }
}

TEST_CASE("format 1, branches 0: full 31-bit map without address") {
  // format 01 | branches 00000 | branch_map 0x7fff0000 (31). Map bit 16 at bit 23: byte 2 =
  // 0x80; bits 24-37 ones and padding: ff ff, the fill of 0x80: 3 bytes.
  const bytes full = pack({{1, 2}, {0, 5}, {0x7fff0000, 31}});
  check_vector<A>(full, 38, {0x01, 0x00, 0x80},
                  te_inst{.format = format::diff_delta, .branches = 0, .branch_map = 0x7fff0000},
                  te_inst_kind::diff_delta_full_map);
}

TEST_CASE("format 0 subformat 0: correctly predicted branches, no address") {
  // format 00 | subformat 0 (1) | branch_count 5 (32) | branch_fmt 00
  // count bit 0 at bit 3, bit 2 at bit 5: 0x28; the rest zero.
  const bytes full = pack({{0, 2}, {0, 1}, {5, 32}, {0, 2}});
  check_vector<B>(full, 37, {0x28},
                  te_inst{.format = format::opt_ext, .subformat = 0, .branch_count = 5,
                          .branch_fmt = et::branch_fmt::no_addr},
                  te_inst_kind::branch_count);
}

TEST_CASE("format 0 subformat 0: correctly predicted branches with address (addr-fail)") {
  // format 00 | subformat 0 | branch_count 0x100 | branch_fmt 11 | address 0 (31) | notify 0 |
  // updiscon 0 | irreport 0 | irdepth 000. Count bit 8 at bit 11: byte 1 = 0x08; branch_fmt
  // at bits 35-36: byte 4 = 0x18; then zeros: 5 bytes.
  const bytes full = pack({{0, 2}, {0, 1}, {0x100, 32}, {3, 2}, {0, 31}, {0, 1}, {0, 1}, {0, 1}, {0, 3}});
  check_vector<B>(full, 74, {0x00, 0x08, 0x00, 0x00, 0x18},
                  te_inst{.format = format::opt_ext, .subformat = 0, .branch_count = 0x100,
                          .branch_fmt = et::branch_fmt::addr_fail},
                  te_inst_kind::branch_count_address);
  // branch_fmt 10 (addr), updiscon set: bit 69 differs from notify.
  const bytes full2 = pack({{0, 2}, {0, 1}, {0, 32}, {2, 2}, {0, 31}, {0, 1}, {1, 1}, {1, 1}, {7, 3}});
  // byte 4: branch_fmt bit 1 at bit 36 = 0x10; byte 8: bits 69-73 ones (updiscon, irreport
  // equal to it, irdepth equal to it) = 0xe0, byte 9 = 0xff (fill): 9 bytes.
  check_vector<B>(full2, 74, {0, 0, 0, 0, 0x10, 0, 0, 0, 0xe0},
                  te_inst{.format = format::opt_ext, .subformat = 0,
                          .branch_fmt = et::branch_fmt::addr, .updiscon = true},
                  te_inst_kind::branch_count_address);
}

TEST_CASE("format 0 subformat 1: jump target cache index with branch map") {
  // format 00 | subformat 1 | index 101 (3) | branches 00011 | branch_map 100 (3) |
  // irreport 1 (equal to branch_map[MSB]: not set) | irdepth 111 (equal to it)
  // byte 0: 0,0,1,1,0,1,1,1 = 0xec; byte 1: 0,0,0,0,0,1,1,1 = 0xe0; byte 2 ones, dropped.
  const bytes full = pack({{0, 2}, {1, 1}, {5, 3}, {3, 5}, {4, 3}, {1, 1}, {7, 3}});
  check_vector<B>(full, 18, {0xec, 0xe0},
                  te_inst{.format = format::opt_ext, .subformat = 1, .branches = 3,
                          .branch_map = 4, .index = 5},
                  te_inst_kind::jump_target_cache);
}

TEST_CASE("format 0 subformat 1: jump target cache index without branch map") {
  // format 00 | subformat 1 | index 010 | branches 00000 | irreport 1 (differs from
  // branches[MSB] 0: set) | irdepth 011
  // byte 0: 0,0,1,0,1,0,0,0 = 0x14; byte 1: bits 11-13 ones = 0x38.
  const bytes full = pack({{0, 2}, {1, 1}, {2, 3}, {0, 5}, {1, 1}, {3, 3}});
  check_vector<B>(full, 15, {0x14, 0x38},
                  te_inst{.format = format::opt_ext, .subformat = 1, .branches = 0, .index = 2,
                          .irreport = true, .irdepth = 3},
                  te_inst_kind::jump_target_cache_no_map);
}

TEST_CASE("format 0 with f0s_width_p 0: the subformat is inferred") {
  // C (jump target cache only): format 00 | index 11 (2) | branches 00000 | irreport 0
  // byte 0: 0,0,1,1,0,0,0,0 = 0x0c.
  check_vector<C>(pack({{0, 2}, {3, 2}, {0, 5}, {0, 1}}), 10, {0x0c},
                  te_inst{.format = format::opt_ext, .subformat = 1, .index = 3},
                  te_inst_kind::jump_target_cache_no_map);
  // D (branch prediction only): format 00 | branch_count 31 (32) | branch_fmt 00
  // byte 0: 0,0,1,1,1,1,1,0 = 0x7c.
  check_vector<D>(pack({{0, 2}, {31, 32}, {0, 2}}), 36, {0x7c},
                  te_inst{.format = format::opt_ext, .subformat = 0, .branch_count = 31},
                  te_inst_kind::branch_count);
}

TEST_CASE("reserved encodings are errors, never a wrong packet") {
  const et::payload_codec<> a{A}, b{B}, e{E};
  // Format 0 with no optional format enabled.
  CHECK(decode(a, {0x00}).error == et::error_code::reserved_format);
  // f0s_width_p 2: subformat 10 (bits 2-3 = 0,1 -> 0x08).
  CHECK(decode(e, {0x08}).error == et::error_code::reserved_format);
  // branch_fmt 01: bit 35 set (byte 4 bit 3).
  CHECK(decode(b, {0x00, 0x00, 0x00, 0x00, 0x08}).error == et::error_code::reserved_branch_fmt);
  // irreport equal to updiscon (bit 35 = 0) but irdepth 001 (bit 36).
  CHECK(decode(b, {0x06, 0x00, 0x00, 0x00, 0x10}).error == et::error_code::inconsistent_irdepth);
  // Format 2 needs 36 bits = 5 bytes: a sixth byte is too long, even if it is sign.
  CHECK(decode(a, {0x02, 0x02, 0x00, 0x00, 0x00}).error == et::error_code::ok);
  CHECK(decode(a, {0x02, 0x02, 0x00, 0x00, 0x00, 0x00}).error == et::error_code::payload_too_long);
  // Padding bits 36-39 must repeat bit 35 (0).
  CHECK(decode(a, {0x02, 0x02, 0x00, 0x00, 0xf0}).error == et::error_code::bad_sign_extension);
  CHECK(decode(a, {}).error == et::error_code::empty_payload);
  // Encoder: reserved and out-of-range values are refused; nothing is written.
  et::error_code err{};
  te_inst p{.format = format::opt_ext, .subformat = 0, .branch_fmt = static_cast<et::branch_fmt>(1)};
  CHECK(encode(b, p, {}, 0, &err).empty());
  CHECK(err == et::error_code::unencodable);
  CHECK(encode(a, te_inst{.format = format::opt_ext}, {}, 0, &err).empty());  // no format 0
  CHECK(err == et::error_code::unencodable);
  CHECK(encode(a, te_inst{.format = format::sync, .privilege = 4}, {}, 0, &err).empty());  // 2 bits
  CHECK(err == et::error_code::unencodable);
  CHECK(encode(a, te_inst{.format = format::addr_only, .address = 0x101}, {}, 0, &err).empty());
  CHECK(err == et::error_code::unencodable);  // not aligned to iaddress_lsb_p
  CHECK(encode(a, te_inst{.format = format::addr_only, .address = 0x100000000}, {}, 0, &err).empty());
  CHECK(err == et::error_code::unencodable);  // above iaddress_width_p
  CHECK(encode(a, te_inst{.format = format::diff_delta, .branches = 3, .branch_map = 0x8}, {}, 0, &err).empty());
  CHECK(err == et::error_code::unencodable);  // map wider than its 3-bit field
  CHECK(encode(b, te_inst{.format = format::addr_only, .irreport = true, .irdepth = 8}, {}, 0, &err).empty());
  CHECK(err == et::error_code::unencodable);  // irdepth has 3 bits
  std::uint8_t one[1];
  const et::encode_result small = a.encode(te_inst{.format = format::addr_only, .address = 0x100}, one, 1);
  CHECK(small.error == et::error_code::buffer_too_small);
  CHECK(small.size == 0);
}

TEST_CASE("branch_map length from branches (format 1 table)") {
  const unsigned expect[32] = {31, 1, 3, 3, 7, 7, 7, 7, 15, 15, 15, 15, 15, 15, 15, 15,
                               31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31};
  for (unsigned b = 0; b < 32; ++b) CHECK(et::branch_map_width(b) == expect[b]);
}
