// SPDX-License-Identifier: Apache-2.0
// The checks the PMBSR_EL1 and TRBSR_EL1 tests share: every EC code (bits [31:26]) with the
// MSS layout it gives, every BSC code, and the RES0 bits a value reports (MSS[15:6] only when
// EC gives MSS a layout).
#pragma once

#include <doctest/doctest.h>

#include <tracecodec/arm/fault_status.hpp>

#include <cstddef>
#include <cstdint>

#include "register_check.hpp"

namespace test {

// An EC code the description names, its exception class, MSS layout and text.
template <class ExceptionClass>
struct ec_row {
  unsigned code;
  ExceptionClass value;
  tracecodec::arm::mss_format layout;
  const char* text;
};

// Every EC code: a named one reads as its row says, every other as reserved with no MSS layout
// (mss_format::unknown). Returns the number of reserved codes.
template <class ExceptionClass, std::size_t N, class Decode, class Meaning>
unsigned check_every_ec(const ec_row<ExceptionClass> (&rows)[N], Decode decode,
                        Meaning meaning) {
  const auto with_ec = [&](unsigned ec) { return decode(std::uint64_t{ec} << 26); };
  return check_codes(
      rows, 6, [&](unsigned ec) { return with_ec(ec).event(); }, meaning,
      [&](unsigned ec, const ec_row<ExceptionClass>* row) {
        CHECK(with_ec(ec).syndrome() ==
              (row != nullptr ? row->layout : tracecodec::arm::mss_format::unknown));
      });
}

// Every BSC code, under EC 0 (MSS is a BSC). Returns the number of reserved codes.
template <class BufferStatus, std::size_t N, class Decode, class Meaning>
unsigned check_every_bsc(const code_row<BufferStatus> (&rows)[N], Decode decode,
                         Meaning meaning) {
  return check_codes(rows, 6, [&](unsigned bsc) { return decode(bsc).bsc(); }, meaning);
}

// The RES0 bits `r` (decoded from `x`) reports: the register's `res0`, and MSS[15:6] when EC
// is one that gives MSS a layout (`laid_out`).
template <class Reg>
void require_res0_set(const Reg& r, std::uint64_t x, std::uint64_t res0, bool laid_out) {
  REQUIRE(r.res0_set() == ((x & res0) | (laid_out ? x & 0xffc0 : 0)));
}

}  // namespace test
