// SPDX-License-Identifier: Apache-2.0
// The PMBSR_EL1 and FSC codecs run inside static_assert.
#include <doctest/doctest.h>

#include <tracecodec/arm/fault_status.hpp>
#include <tracecodec/spe/pmbsr.hpp>

using namespace tracecodec::spe;

namespace {

// EC 0b100100 (stage 1 Data Abort), S, FSC 0b000110 (Translation fault, level 2).
constexpr pmbsr abort = decode_pmbsr(0x90020006);
static_assert(abort.event() == exception_class::stage1_data_abort);
static_assert(abort.syndrome() == mss_format::fsc);
static_assert(abort.fsc() == fault_status{fault_kind::translation, 2, true});
static_assert(abort.s == 1 && abort.res0_set() == 0);
static_assert(encode_pmbsr(abort).value == 0x90020006);

constexpr pmbsr filled = decode_pmbsr(0x20001);  // S, EC 0, BSC 0b000001
static_assert(filled.bsc() == buffer_status::filled);
static_assert(decode_pmbsr(0x2ull << 26).event() == exception_class::reserved);
static_assert(decode_pmbsr(1ull << 40).res0_set() == 1ull << 40);

constexpr bool every_named_fsc_round_trips() {
  unsigned named = 0;
  for (unsigned code = 0; code < 64; ++code) {
    const fault_status f = decode_fault_status(static_cast<std::uint8_t>(code));
    if (f.kind == fault_kind::reserved) continue;
    ++named;
    if (!encode_fault_status(f).ok || encode_fault_status(f).fsc != code) return false;
  }
  return named == 25;
}
static_assert(every_named_fsc_round_trips());

}  // namespace

TEST_CASE("SPE compile-time decode and encode (see static_asserts)") {
  CHECK(every_named_fsc_round_trips());
}
