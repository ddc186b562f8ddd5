// SPDX-License-Identifier: Apache-2.0
// The FSC table of "MSS encoding for stage 1 or stage 2 Data Aborts on write to buffer"
// (spe-PMBSR_EL1-register.txt), every one of the 64 codes.
#include <doctest/doctest.h>

#include <tracecodec/arm/fault_status.hpp>
#include <tracecodec/host/arm/fault_status.hpp>

#include <cstdint>
#include <string>

using namespace tracecodec::arm;

namespace {

struct fsc_row {
  unsigned code;
  fault_kind kind;
  int level;  // -1: no level
  const char* text;
};

// Every named code, written out: 0b0000xx..0b0011xx and 0b0101xx expand to their four levels.
constexpr fsc_row named[] = {
    {0b000000, fault_kind::address_size, 0, "Address Size fault, level 0"},
    {0b000001, fault_kind::address_size, 1, "Address Size fault, level 1"},
    {0b000010, fault_kind::address_size, 2, "Address Size fault, level 2"},
    {0b000011, fault_kind::address_size, 3, "Address Size fault, level 3"},
    {0b000100, fault_kind::translation, 0, "Translation fault, level 0"},
    {0b000101, fault_kind::translation, 1, "Translation fault, level 1"},
    {0b000110, fault_kind::translation, 2, "Translation fault, level 2"},
    {0b000111, fault_kind::translation, 3, "Translation fault, level 3"},
    {0b001000, fault_kind::access_flag, 0, "Access Flag fault, level 0"},
    {0b001001, fault_kind::access_flag, 1, "Access Flag fault, level 1"},
    {0b001010, fault_kind::access_flag, 2, "Access Flag fault, level 2"},
    {0b001011, fault_kind::access_flag, 3, "Access Flag fault, level 3"},
    {0b001100, fault_kind::permission, 0, "Permission fault, level 0"},
    {0b001101, fault_kind::permission, 1, "Permission fault, level 1"},
    {0b001110, fault_kind::permission, 2, "Permission fault, level 2"},
    {0b001111, fault_kind::permission, 3, "Permission fault, level 3"},
    {0b010000, fault_kind::synchronous_external_abort, -1, "Synchronous External abort on write"},
    {0b010001, fault_kind::asynchronous_external_abort, -1,
     "Asynchronous External abort on write"},
    {0b010100, fault_kind::external_abort_on_table_walk, 0,
     "Synchronous External abort on translation table walk or hardware update of translation "
     "table, level 0"},
    {0b010101, fault_kind::external_abort_on_table_walk, 1,
     "Synchronous External abort on translation table walk or hardware update of translation "
     "table, level 1"},
    {0b010110, fault_kind::external_abort_on_table_walk, 2,
     "Synchronous External abort on translation table walk or hardware update of translation "
     "table, level 2"},
    {0b010111, fault_kind::external_abort_on_table_walk, 3,
     "Synchronous External abort on translation table walk or hardware update of translation "
     "table, level 3"},
    {0b100001, fault_kind::alignment, -1, "Alignment fault"},
    {0b110000, fault_kind::tlb_conflict, -1, "TLB Conflict fault"},
    {0b110001, fault_kind::unsupported_atomic_update, -1,
     "Unsupported atomic hardware update fault"},
};

const fsc_row* find(unsigned code) {
  for (const fsc_row& r : named)
    if (r.code == code) return &r;
  return nullptr;
}

}  // namespace

TEST_CASE("FSC: every named code, and every other code reserved") {
  unsigned reserved = 0;
  for (unsigned code = 0; code < 64; ++code) {
    CAPTURE(code);
    const fault_status f = decode_fault_status(static_cast<std::uint8_t>(code));
    const fsc_row* row = find(code);
    if (row == nullptr) {
      CHECK(f.kind == fault_kind::reserved);
      CHECK_FALSE(f.has_level);
      CHECK(fault_status_meaning(f) == "reserved");
      CHECK_FALSE(encode_fault_status(f).ok);
      ++reserved;
      continue;
    }
    CHECK(f.kind == row->kind);
    CHECK(f.has_level == (row->level >= 0));
    if (row->level >= 0) CHECK(f.level == row->level);
    CHECK(fault_status_meaning(f) == row->text);
    CHECK(encode_fault_status(f) == fsc_encoding{static_cast<std::uint8_t>(code), true});
  }
  // 0b0100xx other than 0b010000/0b010001, 0b011xxx, 0b100000, 0b10001x..0b10111x,
  // 0b11001x..0b111111: 64 - 25 named.
  CHECK(reserved == 64 - 25);
  CHECK(decode_fault_status(0b010010).kind == fault_kind::reserved);
  CHECK(decode_fault_status(0b011000).kind == fault_kind::reserved);
  CHECK(decode_fault_status(0b100000).kind == fault_kind::reserved);
  CHECK(decode_fault_status(0b110010).kind == fault_kind::reserved);
}

TEST_CASE("FSC: encode rejects what the table cannot say") {
  CHECK_FALSE(encode_fault_status({fault_kind::translation, 4, true}).ok);      // level 4
  CHECK_FALSE(encode_fault_status({fault_kind::translation, 1, false}).ok);     // level dropped
  CHECK_FALSE(encode_fault_status({fault_kind::alignment, 0, true}).ok);        // no level form
  CHECK_FALSE(encode_fault_status({fault_kind::tlb_conflict, 2, false}).ok);
  CHECK_FALSE(encode_fault_status({fault_kind::reserved, 0, false}).ok);
  CHECK(encode_fault_status({fault_kind::permission, 3, true}).fsc == 0b001111);
}
