// SPDX-License-Identifier: Apache-2.0
// Decode a BRBE Branch record: BRBINF<n>_EL1 with BRBSRC<n>_EL1 and BRBTGT<n>_EL1, as a kernel
// or a hypervisor reads them with MRS (perf hands them over the same way). The record codec is
// configured by BRBIDR0_EL1 (number of records, cycle counter size) at compile time or at run
// time; a field the record's VALID marks "not valid" is never reported as a value. The other
// register codecs work alike: here PMBSR_EL1 (SPE), decoded by the compiler.
#include <cstdint>
#include <cstdio>

// [readme:brbe]
#include <tracecodec/brbe/record.hpp>
#include <tracecodec/spe/pmbsr.hpp>
using namespace tracecodec;

static_assert(spe::decode_pmbsr(0x90020006).fsc() ==
              spe::fault_status{spe::fault_kind::translation, 2, true});

// BRBIDR0_EL1 0x5040: 64 records, a 20-bit cycle counter. Or record_codec<>{runtime_config{v}}.
constexpr brbe::record_codec<brbe::fixed_config<brbe::presets::brbidr0_64_records>> brb;

// One record: an indirect call (BLR) at EL1, 1000 cycles after the previous branch.
constexpr brbe::raw_record regs{.brbinf = 0x000002f400000343,
                                .brbsrc = 0xffff800010081044, .brbtgt = 0xffff800010200000};
constexpr brbe::branch_record rec = brb.decode(regs).record;
static_assert(rec.type().value == brbe::branch_type::indirect_call);
static_assert(rec.source_address().known && rec.target_address().known);  // VALID 0b11
static_assert(rec.cycles().known && rec.cycles().value.cycles == 1000);  // CC: mantissa, exponent
// [/readme:brbe]

int main() {
  // The same at run time, with BRBIDR0_EL1 read from the system (here a constant).
  const std::uint64_t brbidr0 = 0x5040;
  const brbe::record_codec<> codec{brbe::runtime_config{brbidr0}};
  if (codec.status() != brbe::config_error::none) return 1;
  const brbe::decode_result d = codec.decode(regs);
  const brbe::branch_record& r = d.record;
  const auto cycles = r.cycles();
  std::printf("record: %s, source 0x%016llx -> target 0x%016llx, EL%u, %llu cycles\n",
              r.is_valid() ? "valid" : "invalid",
              static_cast<unsigned long long>(r.source_address().value),
              static_cast<unsigned long long>(r.target_address().value),
              static_cast<unsigned>(r.target_el().value),
              static_cast<unsigned long long>(cycles.value.cycles));
  bool ok = d.error == brbe::record_error::none && r == rec &&
            r.target_el().value == brbe::exception_level::el1 && r.mispredicted().known &&
            !r.mispredicted().value && codec.capacity() == 64;

  // A record with only its target (VALID 0b01: entered from a prohibited region): the source
  // is not a value, whatever BRBSRC holds.
  const brbe::branch_record half = codec.decode({0x000002f400000341, 0x1234, 0xffff800010200000}).record;
  ok = ok && half.is_valid() && !half.source_address().known && half.target_address().known;

  // Written from its meaning and read back: the same registers.
  brbe::record_fields f;
  f.source = 0xffff800010081044;
  f.target = 0xffff800010200000;
  f.type = brbe::branch_type::indirect_call;
  f.el = brbe::exception_level::el1;
  f.cycles = {1000, true};
  const brbe::encode_record_result e = codec.encode(f);
  ok = ok && e.error == brbe::record_error::none && e.registers == regs;

  // Records read out in index order: valid ones first, then invalid (zero) ones.
  const brbe::raw_record buffer[4] = {regs, regs, {}, {}};
  const brbe::buffer_scan scan = codec.scan(buffer, 4);
  ok = ok && scan.error == brbe::record_error::none && scan.valid_records == 2;

  if (!ok) std::fprintf(stderr, "brbe_record: unexpected result\n");
  return ok ? 0 : 1;
}
