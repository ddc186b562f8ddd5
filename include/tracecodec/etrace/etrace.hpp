// SPDX-License-Identifier: Apache-2.0
// Umbrella header of the RISC-V E-Trace te_inst codec (freestanding).
#pragma once

#include "bits.hpp"
#include "config.hpp"
#include "encapsulation.hpp"
#include "encoder.hpp"
#include "error.hpp"
#include "layout.hpp"
#include "parameters.hpp"
#include "payload.hpp"
#include "sign_compression.hpp"
#include "stream_decoder.hpp"
#include "te_inst.hpp"
