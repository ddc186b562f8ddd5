// SPDX-License-Identifier: Apache-2.0
// Must not compile: iaddress_lsb_p 32 leaves no address bits with iaddress_width_p 32.
#include <tracecodec/etrace/payload.hpp>

namespace et = tracecodec::etrace;
et::payload_codec<et::fixed_config<et::parameters{.iaddress_width_p = 32, .iaddress_lsb_p = 32}>> codec;
