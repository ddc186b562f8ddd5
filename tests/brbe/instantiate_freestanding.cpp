// SPDX-License-Identifier: Apache-2.0
// Instantiates every BRBE / SPE / TRBE codec entry point as firmware would, so that the
// freestanding check compiles the template bodies too (not only the declarations).
#include <tracecodec/brbe/record.hpp>
#include <tracecodec/spe/pmbsr.hpp>
#include <tracecodec/trbe/trbsr.hpp>

using namespace tracecodec;

extern "C" unsigned long long sysreg_brbe_record(unsigned long long inf, unsigned long long src,
                                                 unsigned long long tgt, unsigned long long idr) {
  const brbe::record_codec<brbe::fixed_config<brbe::presets::brbidr0_64_records>> fixed;
  const brbe::record_codec<> runtime{brbe::runtime_config{idr}};
  const brbe::branch_record a = fixed.decode({inf, src, tgt}).record;
  const brbe::branch_record b = runtime.decode({inf, src, tgt}).record;
  brbe::record_fields f;
  f.validity = a.validity();
  f.cycles = {a.cycles().value.cycles, true};
  const brbe::raw_record r[2] = {fixed.encode(f).registers, runtime.encode(f).registers};
  return r[0].brbinf ^ r[1].brbinf ^ fixed.scan(r, 2).valid_records ^ b.cycles().value.cycles ^
         runtime.slot(static_cast<unsigned>(idr)).m;
}

extern "C" unsigned long long sysreg_buffer_syndromes(unsigned long long pmbsr_value,
                                                      unsigned long long trbsr_value) {
  const spe::pmbsr p = spe::decode_pmbsr(pmbsr_value);
  const trbe::trbsr t = trbe::decode_trbsr(trbsr_value);
  return spe::encode_pmbsr(p).value ^ trbe::encode_trbsr(t).value ^
         static_cast<unsigned>(p.fsc().kind) ^ static_cast<unsigned>(t.bsc()) ^ p.res0_set() ^
         t.res0_set();
}
