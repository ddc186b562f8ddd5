// SPDX-License-Identifier: Apache-2.0
// sysreg-decode: prints every field of a BRBE / SPE / TRBE status register value with its
// meaning, as text or one JSON object per value — what an engineer does with a value from a
// kernel log.
//
//   sysreg-decode brbinf VALUE... [--brbidr0 X] [--brbsrc X] [--brbtgt X] [--json]
//   sysreg-decode pmbsr VALUE... [--json]
//   sysreg-decode trbsr VALUE... [--json]
//
// Exit status: 0 success (reserved field values are printed as reserved, not errors), 1 output
// error, 2 usage error, a value that is not a 64-bit number, or an invalid BRBIDR0_EL1 value.

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <tracecodec/brbe/brbinf.hpp>
#include <tracecodec/brbe/config.hpp>
#include <tracecodec/host/brbe/format.hpp>
#include <tracecodec/brbe/record.hpp>
#include <tracecodec/host/spe/format.hpp>
#include <tracecodec/spe/pmbsr.hpp>
#include <tracecodec/host/trbe/format.hpp>
#include <tracecodec/trbe/trbsr.hpp>

namespace brbe = tracecodec::brbe;
namespace spe = tracecodec::spe;
namespace trbe = tracecodec::trbe;

#include "cli.hpp"

namespace {

using namespace tools;  // exit codes, put_line

const char* const usage_text =
    "usage: sysreg-decode brbinf VALUE... [--brbidr0 X] [--brbsrc X] [--brbtgt X] [--json]\n"
    "       sysreg-decode pmbsr VALUE... [--json]\n"
    "       sysreg-decode trbsr VALUE... [--json]\n"
    "\n"
    "Prints every field of a register value with its meaning.\n"
    "\n"
    "  brbinf       BRBINF<n>_EL1, a BRBE Branch record's information register\n"
    "  pmbsr        PMBSR_EL1, the SPE Profiling Buffer Status/syndrome Register\n"
    "  trbsr        TRBSR_EL1, the TRBE Trace Buffer Status/syndrome Register\n"
    "  VALUE        64-bit value: hex with 0x, or decimal\n"
    "  --brbidr0 X  BRBIDR0_EL1, for the cycle counter size (default: the 20-bit counter,\n"
    "               the only size BRBIDR0_EL1.CC defines)\n"
    "  --brbsrc X   BRBSRC<n>_EL1 of the same record (printed when VALID makes it valid)\n"
    "  --brbtgt X   BRBTGT<n>_EL1 of the same record (either alone: the other reads as 0)\n"
    "  --json       one JSON object per value: raw field values under the lowercase field\n"
    "               names, \"<field>_meaning\" strings (see docs/sysreg.md)\n"
    "  --help       this text\n"
    "\n"
    "Exit status: 0 success, 1 output error, 2 usage error, bad number or invalid\n"
    "BRBIDR0_EL1.\n";

// "0x" + hex digits, or decimal digits; the whole string, at most 64 bits.
bool parse_u64(std::string_view s, std::uint64_t& out) {
  unsigned base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  if (s.empty()) return false;
  std::uint64_t v = 0;
  for (const char c : s) {
    unsigned d;
    if (c >= '0' && c <= '9') d = static_cast<unsigned>(c - '0');
    else if (base == 16 && c >= 'a' && c <= 'f') d = static_cast<unsigned>(c - 'a' + 10);
    else if (base == 16 && c >= 'A' && c <= 'F') d = static_cast<unsigned>(c - 'A' + 10);
    else return false;
    if (v > (~std::uint64_t{0} - d) / base) return false;  // overflow
    v = v * base + d;
  }
  out = v;
  return true;
}

const char* config_error_text(brbe::config_error e) {
  switch (e) {
    case brbe::config_error::none: return "valid";
    case brbe::config_error::reserved_numrec: return "NUMREC is not 8, 16, 32 or 64";
    case brbe::config_error::reserved_format: return "FORMAT is not 0b0000";
    case brbe::config_error::reserved_cc: return "CC is not 0b0101 (20-bit cycle counter)";
    case brbe::config_error::res0_set: return "RES0 bits [63:16] are set";
  }
  return "invalid";
}

int usage_error(const std::string& message) { return tools::usage_error("sysreg-decode", message, usage_text); }

void put(const std::string& s, bool newline) {
  std::fwrite(s.data(), 1, s.size(), stdout);
  if (newline) std::fputc('\n', stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage_error("missing register name");
  const std::string_view reg = argv[1];
  if (reg == "--help" || reg == "-h") {
    std::fputs(usage_text, stdout);
    return exit_ok;
  }
  if (reg != "brbinf" && reg != "pmbsr" && reg != "trbsr")
    return usage_error("unknown register '" + std::string(reg) + "'");

  bool json = false;
  std::vector<std::uint64_t> values;
  std::uint64_t brbidr0 = brbe::presets::brbidr0_64_records;
  bool have_src = false, have_tgt = false;
  std::uint64_t brbsrc = 0, brbtgt = 0;
  for (int i = 2; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--json") {
      json = true;
    } else if (a == "--help" || a == "-h") {
      std::fputs(usage_text, stdout);
      return exit_ok;
    } else if (a == "--brbidr0" || a == "--brbsrc" || a == "--brbtgt") {
      if (reg != "brbinf") return usage_error(std::string(a) + " applies to brbinf only");
      if (i + 1 >= argc) return usage_error(std::string(a) + " needs a value");
      std::uint64_t v;
      if (!parse_u64(argv[++i], v))
        return usage_error("not a 64-bit number: '" + std::string(argv[i]) + "'");
      if (a == "--brbidr0") brbidr0 = v;
      if (a == "--brbsrc") have_src = true, brbsrc = v;
      if (a == "--brbtgt") have_tgt = true, brbtgt = v;
    } else if (!a.empty() && a[0] == '-') {
      return usage_error("unknown option '" + std::string(a) + "'");
    } else {
      std::uint64_t v;
      if (!parse_u64(a, v)) return usage_error("not a 64-bit number: '" + std::string(a) + "'");
      values.push_back(v);
    }
  }
  if (values.empty()) return usage_error("missing register value");

  const brbe::record_codec<> codec{brbe::runtime_config{brbidr0}};
  if (reg == "brbinf" && codec.status() != brbe::config_error::none)
    return usage_error(std::string("invalid BRBIDR0_EL1: ") + config_error_text(codec.status()));

  bool first = true;
  for (const std::uint64_t v : values) {
    if (!json && !first) put("", true);
    first = false;
    if (reg == "brbinf") {
      const brbe::branch_record rec = codec.decode({v, brbsrc, brbtgt}).record;
      if (have_src || have_tgt)
        put(json ? brbe::format_json(rec) : brbe::format_text(rec), json);
      else
        put(json ? brbe::format_json(rec.info, rec.counter_bits)
                 : brbe::format_text(rec.info, rec.counter_bits),
            json);
    } else if (reg == "pmbsr") {
      const spe::pmbsr r = spe::decode_pmbsr(v);
      put(json ? spe::format_json(r) : spe::format_text(r), json);
    } else {
      const trbe::trbsr r = trbe::decode_trbsr(v);
      put(json ? trbe::format_json(r) : trbe::format_text(r), json);
    }
  }
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fputs("sysreg-decode: error writing output\n", stderr);
    return exit_io;
  }
  return exit_ok;
}
