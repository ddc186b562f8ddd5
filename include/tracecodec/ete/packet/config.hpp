// SPDX-License-Identifier: Apache-2.0
// Trace unit configuration: the ID and control register values a decoder needs (D9.1.3),
// decoded into the fields that change parsing. One configuration type serves both the
// compile-time form (fixed_config<registers{...}>, every branch folds away) and the run-time
// form (runtime_config, for tools that read register values from a file).
#pragma once

#include <cstdint>

#include "../../arm/register_field.hpp"
#include "../error.hpp"

namespace tracecodec::ete {

// The trace architecture of the unit. ETMv4 (ETMv4.0-4.6) is ETE's predecessor: the same
// instruction-trace packet protocol but for a few headers (description.hpp names them), its
// version in TRCIDR1 rather than TRCDEVARCH, and narrower VMIDs.
enum class protocol : std::uint8_t { ete, etmv4 };

// The PE's architecture profile. Only ETMv4 on an M-profile PE (Armv8-M) has the Function
// Return packet and exception numbers above 31.
enum class pe_profile : std::uint8_t { a, m };

// Raw register values, as perf hands them to OpenCSD, and the two facts no register holds.
// ETE: TRCIDR1 is optional (0 = unknown). ETMv4: TRCDEVARCH is unused, TRCIDR1 is required.
struct registers {
  std::uint32_t trcidr0 = 0;
  std::uint32_t trcidr2 = 0;
  std::uint32_t trcidr8 = 0;
  std::uint32_t trcdevarch = 0;
  std::uint32_t trcconfigr = 0;
  std::uint32_t trcidr1 = 0;
  protocol proto = protocol::ete;
  pe_profile profile = pe_profile::a;
  constexpr bool operator==(const registers&) const = default;
};

// The ID and control register fields that change parsing, as the ETE register descriptions
// place them (see ../shared/conformance/ete/README.md for the list).
namespace reg {
using arm::field_position;
inline constexpr field_position trcbb{"TRCBB", "trcbb", 5, 5};              // TRCIDR0
inline constexpr field_position trccci{"TRCCCI", "trccci", 7, 7};
inline constexpr field_position retstack{"RETSTACK", "retstack", 9, 9};
inline constexpr field_position numevent{"NUMEVENT", "numevent", 11, 10};
inline constexpr field_position qsupp{"QSUPP", "qsupp", 16, 15};
inline constexpr field_position tsmark{"TSMARK", "tsmark", 23, 23};
inline constexpr field_position tssize{"TSSIZE", "tssize", 28, 24};
inline constexpr field_position commopt{"COMMOPT", "commopt", 29, 29};
inline constexpr field_position commtrans{"COMMTRANS", "commtrans", 30, 30};
inline constexpr field_position iasize{"IASIZE", "iasize", 4, 0};            // TRCIDR2
inline constexpr field_position cidsize{"CIDSIZE", "cidsize", 9, 5};
inline constexpr field_position vmidsize{"VMIDSIZE", "vmidsize", 14, 10};
inline constexpr field_position ccsize{"CCSIZE", "ccsize", 28, 25};
inline constexpr field_position wfxmode{"WFXMODE", "wfxmode", 31, 31};
inline constexpr field_position architect{"ARCHITECT", "architect", 31, 21};  // TRCDEVARCH
inline constexpr field_position present{"PRESENT", "present", 20, 20};
inline constexpr field_position revision{"REVISION", "revision", 19, 16};
inline constexpr field_position archver{"ARCHVER", "archver", 15, 12};
inline constexpr field_position archid{"ARCHID", "archid", 15, 0};
inline constexpr field_position trcarchmaj{"TRCARCHMAJ", "trcarchmaj", 11, 8};  // TRCIDR1
inline constexpr field_position trcarchmin{"TRCARCHMIN", "trcarchmin", 7, 4};
inline constexpr field_position bb{"BB", "bb", 3, 3};                        // TRCCONFIGR
inline constexpr field_position cci{"CCI", "cci", 4, 4};
inline constexpr field_position cid{"CID", "cid", 6, 6};
inline constexpr field_position vmid{"VMID", "vmid", 7, 7};
inline constexpr field_position ts{"TS", "ts", 11, 11};
inline constexpr field_position rs{"RS", "rs", 12, 12};
inline constexpr field_position qe{"QE", "qe", 14, 13};
inline constexpr field_position vmidopt{"VMIDOPT", "vmidopt", 15, 15};
// TRCIDR0.TSSIZE and TRCIDR2.{CID,VMID}SIZE encodings.
inline constexpr std::uint32_t tssize_48 = 0b00110, tssize_64 = 0b01000, size_32 = 0b00100;
inline constexpr std::uint32_t iasize_64 = 0b01000;
constexpr std::uint32_t get(const field_position& f, std::uint32_t v) noexcept {
  return static_cast<std::uint32_t>(f.extract(v));
}
}  // namespace reg

// The decoded configuration (field positions in namespace reg above).
struct config {
  // TRCIDR0
  bool trcbb = false;        // branch broadcast supported (bit 5)
  bool trccci = false;       // cycle counting supported (bit 7): Cycle Count packets exist
  bool retstack = false;     // return stack (bit 9)
  std::uint8_t numevent = 1; // number of ETEEvents, NUMEVENT+1 (bits [11:10])
  std::uint8_t qsupp = 0;    // Q element support (bits [16:15]): 0 = no Q packets
  bool tsmark = false;       // Timestamp Marker packets (bit 23)
  std::uint8_t tssize = 0;   // timestamp bits: 0, 48 or 64 (bits [28:24])
  bool commopt = false;      // commit mode (bit 29): changes Cycle Count formats (D9.2.16.2)
  bool commtrans = false;    // Transaction Start is a P0 element (bit 30)
  // TRCIDR2
  std::uint8_t iasize = 64;  // instruction address bits
  std::uint8_t cidsize = 0;  // context ID bits: 0 or 32
  std::uint8_t vmidsize = 0; // VMID bits: 0 or 32 (ETMv4: 0, 8, 16 or 32)
  std::uint8_t ccsize = 12;  // cycle counter bits, 12..20
  bool wfxmode = false;      // WFI/WFE/WFIT/WFET are P0 instructions (TRCIDR2 bit 31)
  // TRCIDR8
  std::uint32_t maxspec = 0; // maximum speculation depth
  // The trace architecture and its version: ETE 1.x from TRCDEVARCH, ETMv4 4.x from TRCIDR1.
  protocol proto = protocol::ete;
  pe_profile profile = pe_profile::a;
  std::uint8_t version_major = 1;
  std::uint8_t version_minor = 0;
  // TRCCONFIGR enables
  bool bb = false, cci = false, cid = false, vmid = false, ts = false, rs = false;
  std::uint8_t qe = 0;
  bool vmidopt = false;

  constexpr bool operator==(const config&) const = default;

  // Maximum payload bytes of a Timestamp packet's TS field (D5.9): 9 for 64-bit (the last
  // byte carries 8 bits), 7 for 48-bit (7 x 7 = 49 bits).
  constexpr std::uint8_t ts_max_bytes() const noexcept { return tssize == 48 ? 7 : 9; }
  // ETE 1.3 (FEAT_ITE) adds the Instrumentation packet, header 0x09.
  constexpr bool has_instrumentation() const noexcept {
    return proto == protocol::ete && (version_major > 1 || (version_major == 1 && version_minor >= 3));
  }
  constexpr bool etmv4() const noexcept { return proto == protocol::etmv4; }

  static constexpr config from(const registers& r) noexcept {
    using reg::get;
    config c{};
    c.trcbb = get(reg::trcbb, r.trcidr0);
    c.trccci = get(reg::trccci, r.trcidr0);
    c.retstack = get(reg::retstack, r.trcidr0);
    c.numevent = static_cast<std::uint8_t>(get(reg::numevent, r.trcidr0) + 1);
    c.qsupp = static_cast<std::uint8_t>(get(reg::qsupp, r.trcidr0));
    c.proto = r.proto;
    c.profile = r.profile;
    const bool etm = r.proto == protocol::etmv4;
    if (etm) {
      c.version_major = static_cast<std::uint8_t>(get(reg::trcarchmaj, r.trcidr1));
      c.version_minor = static_cast<std::uint8_t>(get(reg::trcarchmin, r.trcidr1));
    } else {
      c.version_major = static_cast<std::uint8_t>(get(reg::archver, r.trcdevarch) == 5 ? 1 : 0);
      c.version_minor = static_cast<std::uint8_t>(get(reg::revision, r.trcdevarch));
    }
    c.tsmark = get(reg::tsmark, r.trcidr0) && !(etm && c.version_minor < 6);  // ETMv4.6 added it
    const auto tss = get(reg::tssize, r.trcidr0);
    c.tssize = tss == reg::tssize_48 ? 48 : tss == reg::tssize_64 ? 64 : 0;
    c.commopt = get(reg::commopt, r.trcidr0);
    c.commtrans = get(reg::commtrans, r.trcidr0);
    c.iasize = get(reg::iasize, r.trcidr2) == reg::size_32 ? 32 : 64;
    c.cidsize = get(reg::cidsize, r.trcidr2) == reg::size_32 ? 32 : 0;
    const auto vms = get(reg::vmidsize, r.trcidr2);
    c.vmidsize = vms == reg::size_32 ? 32 : (etm && vms == 1) ? 8 : (etm && vms == 2) ? 16 : 0;
    c.ccsize = static_cast<std::uint8_t>(get(reg::ccsize, r.trcidr2) + 12);
    // ETMv4.0-4.2 have no WFXMODE (WFI/WFE are never P0); ETMv4.0 has 8-bit VMIDs at most.
    c.wfxmode = get(reg::wfxmode, r.trcidr2) && !(etm && c.version_minor < 3);
    if (etm && c.version_minor == 0 && c.vmidsize > 8) c.vmidsize = 0;
    c.maxspec = r.trcidr8;
    c.bb = get(reg::bb, r.trcconfigr);
    c.cci = get(reg::cci, r.trcconfigr);
    c.cid = get(reg::cid, r.trcconfigr);
    c.vmid = get(reg::vmid, r.trcconfigr);
    c.ts = get(reg::ts, r.trcconfigr);
    c.rs = get(reg::rs, r.trcconfigr);
    c.qe = static_cast<std::uint8_t>(get(reg::qe, r.trcconfigr));
    c.vmidopt = get(reg::vmidopt, r.trcconfigr);
    return c;
  }
};

// The enables that need an implemented feature (TRCCONFIGR bits are RES0 otherwise).
constexpr bool enables_implemented(const config& c) noexcept {
  return !((c.cci && !c.trccci) || (c.ts && c.tssize == 0) || (c.qe && !c.qsupp) ||
           (c.cid && !c.cidsize) || (c.vmid && !c.vmidsize) || (c.bb && !c.trcbb) ||
           (c.rs && !c.retstack));
}

// ETMv4: TRCIDR1 names architecture 4, minor 0-6; addresses are 32 or 64 bits; context IDs
// 32 bits; VMIDs 8 bits, or from ETMv4.1 on 16 or 32 bits.
constexpr error_code validate_etmv4(const registers& r) noexcept {
  using reg::get;
  if (get(reg::trcarchmaj, r.trcidr1) != 4 || get(reg::trcarchmin, r.trcidr1) > 6)
    return error_code::invalid_config;
  const auto tss = get(reg::tssize, r.trcidr0);
  if (tss != 0 && tss != reg::tssize_48 && tss != reg::tssize_64) return error_code::invalid_config;
  const auto ia = get(reg::iasize, r.trcidr2);
  if (ia != reg::size_32 && ia != reg::iasize_64) return error_code::invalid_config;
  const auto cid = get(reg::cidsize, r.trcidr2), vmid = get(reg::vmidsize, r.trcidr2);
  if (cid != 0 && cid != reg::size_32) return error_code::invalid_config;
  if (vmid != 0 && vmid != 1 && vmid != 2 && vmid != reg::size_32) return error_code::invalid_config;
  if (vmid > 1 && get(reg::trcarchmin, r.trcidr1) == 0) return error_code::invalid_config;
  if (get(reg::ccsize, r.trcidr2) > 8) return error_code::invalid_config;
  return enables_implemented(config::from(r)) ? error_code::ok : error_code::invalid_config;
}

// Rejects register values that no ETE trace unit reports (D16: ETE fixes several ETMv4
// options) and enables that the ID registers say are not implemented (those bits are RES0).
constexpr error_code validate(const registers& r) noexcept {
  using reg::get;
  if (r.proto == protocol::etmv4) return validate_etmv4(r);
  // TRCDEVARCH: ARCHITECT = Arm (0x23b), PRESENT = 1, ARCHID = ETE (0x5a13).
  if (get(reg::architect, r.trcdevarch) != 0x23b || get(reg::present, r.trcdevarch) != 1 ||
      get(reg::archid, r.trcdevarch) != 0x5a13)
    return error_code::invalid_config;
  const auto tss = get(reg::tssize, r.trcidr0);
  if (tss != 0 && tss != reg::tssize_48 && tss != reg::tssize_64) return error_code::invalid_config;
  if (get(reg::iasize, r.trcidr2) != reg::iasize_64) return error_code::invalid_config;  // D16
  const auto cid = get(reg::cidsize, r.trcidr2), vmid = get(reg::vmidsize, r.trcidr2);
  if ((cid != 0 && cid != reg::size_32) || (vmid != 0 && vmid != reg::size_32))
    return error_code::invalid_config;  // ETE context fields are 32-bit (D5.55)
  if (get(reg::ccsize, r.trcidr2) > 8) return error_code::invalid_config;  // CCSIZE 12..20 bits
  const config c = config::from(r);
  if (!enables_implemented(c)) return error_code::invalid_config;
  if (c.tsmark && c.tssize == 0) return error_code::invalid_config;
  return error_code::ok;
}

// Compile-time configuration: a template argument; invalid values fail to compile.
template <registers R>
struct fixed_config {
  static_assert(validate(R) == error_code::ok, "invalid ETE trace unit configuration");
  static constexpr bool is_fixed = true;
  static constexpr registers regs = R;
  static constexpr config value = config::from(R);
  static constexpr const config& get() noexcept { return value; }
  static constexpr error_code status() noexcept { return error_code::ok; }
};

// Run-time configuration: validated when made; an invalid one makes every decode/encode call
// report error_code::invalid_config.
class runtime_config {
 public:
  static constexpr bool is_fixed = false;
  constexpr runtime_config() noexcept : runtime_config(registers{}) {}
  constexpr explicit runtime_config(const registers& r) noexcept
      : regs_(r), value_(config::from(r)), status_(validate(r)) {}
  constexpr const config& get() const noexcept { return value_; }
  constexpr error_code status() const noexcept { return status_; }
  constexpr const registers& regs() const noexcept { return regs_; }

 private:
  registers regs_;
  config value_;
  error_code status_;
};

// Register sets of real trace units, for tests, examples and compile-time presets.
namespace presets {
// Arm FVP ETE 1.0 as in most of the conformance corpus: COMMOPT 1, MAXSPEC 0, cycle counting,
// Q support, 64-bit timestamps, 32-bit CID/VMID.
inline constexpr registers ete_1_0{0x2801cea1, 0xd0001088, 0x0, 0x47705a13, 0x1, 0x4100fff0};
// ETE 1.1 with Timestamp Marker packets.
inline constexpr registers ete_1_1_tsmark{0x2881cea1, 0xd0001088, 0x0, 0x47715a13, 0x8801,
                                          0x4100fff0};
// ETE 1.3 (Instrumentation packets), COMMOPT 0, MAXSPEC 15.
inline constexpr registers ete_1_3_spec{0x0881cea1, 0xd0001088, 0xf, 0x47735a13, 0x1, 0x4100fff0};
// COMMOPT 0, MAXSPEC 255, COMMTRANS 1, no Q, 48-bit timestamps, no CID/VMID.
inline constexpr registers ete_spec255{0x46000aa1, 0xd0000008, 0xff, 0x47705a13, 0x1, 0x4100fff0};
// ETMv4.0 on Juno's Cortex-A53 (../shared/conformance/etmv4 juno_r1_1): branch broadcast,
// cycle counting, return stack, COMMOPT 1, 64-bit timestamps, 8-bit VMID, context ID and VMID
// tracing on.
inline constexpr registers etmv4_0_juno{0x28000ea1, 0x00000488, 0x0, 0x0, 0xc1, 0x4100f403,
                                        protocol::etmv4};
// ETMv4.1 on a Cortex-A55 model: COMMOPT 0, no return stack, 32-bit VMID.
inline constexpr registers etmv4_1_a55{0x08000ca1, 0x20001088, 0x0, 0x0, 0x1, 0x4200f410,
                                       protocol::etmv4};
// ETMv4.5 on a Cortex-M55 (Armv8.1-M): 32-bit addresses, no context ID or VMID.
inline constexpr registers etmv4_5_m55{0x280006e1, 0x00000004, 0x0, 0x0, 0x1, 0x4100f454,
                                       protocol::etmv4, pe_profile::m};
}  // namespace presets

}  // namespace tracecodec::ete
