// SPDX-License-Identifier: Apache-2.0
// Umbrella header: every freestanding codec of tracecodec.
#pragma once

#include "ete/config.hpp"
#include "ete/decoder.hpp"
#include "ete/encoder.hpp"
#include "ete/error.hpp"
#include "ete/header_table.hpp"
#include "ete/packet.hpp"
#include "ete/state.hpp"
#include "ete/element.hpp"
#include "ete/element_decoder.hpp"
#include "ete/element_reader.hpp"
#include "ete/resolver.hpp"
#include "ete/element_encoder.hpp"
#include "arm/register_field.hpp"
#include "brbe/brbinf.hpp"
#include "brbe/config.hpp"
#include "brbe/cycle_count.hpp"
#include "brbe/record.hpp"
#include "spe/fault_status.hpp"
#include "spe/pmbsr.hpp"
#include "trbe/trbsr.hpp"
