// SPDX-License-Identifier: Apache-2.0
// Must not compile: NUMREC 0x30 (48 records) is reserved in BRBIDR0_EL1.
#include <tracecodec/brbe/record.hpp>

tracecodec::brbe::record_codec<tracecodec::brbe::fixed_config<0x5030>> codec;
