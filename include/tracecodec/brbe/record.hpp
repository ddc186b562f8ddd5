// SPDX-License-Identifier: Apache-2.0
// A BRBE Branch record: BRBINF<n>_EL1 with BRBSRC<n>_EL1 and BRBTGT<n>_EL1 (I_JBTBH), read
// through its VALID value so that a field the record does not hold is never reported as a
// value, and written from its meaning. record_codec is configured by BRBIDR0_EL1 at compile
// time (fixed_config) or run time (runtime_config): NUMREC bounds the record index, CC gives
// the cycle counter size, FORMAT 0 gives BRBSRC/BRBTGT as one 64-bit ADDRESS field each.
#pragma once

#include <cstddef>
#include <cstdint>

#include "brbinf.hpp"
#include "config.hpp"
#include "cycle_count.hpp"

namespace tracecodec::brbe {

// A value that a record may not hold: `known` is false when VALID marks the field not valid.
template <class T>
struct maybe {
  T value{};
  bool known = false;
  constexpr bool operator==(const maybe&) const = default;
};

// The three registers of one record, as read with MRS.
struct raw_record {
  std::uint64_t brbinf = 0;
  std::uint64_t brbsrc = 0;
  std::uint64_t brbtgt = 0;
  constexpr bool operator==(const raw_record&) const = default;
};

// A decoded record. The members keep every register bit (info.res0 included), so the raw
// registers come back unchanged from raw(); the accessors apply the VALID rules.
struct branch_record {
  brbinf info{};
  std::uint64_t source = 0;   // BRBSRC<n>_EL1.ADDRESS, bits [63:0]
  std::uint64_t target = 0;   // BRBTGT<n>_EL1.ADDRESS, bits [63:0]
  unsigned counter_bits = 0;  // cycle counter size of the configuration that read it

  constexpr bool operator==(const branch_record&) const = default;

  constexpr record_validity validity() const noexcept { return info.validity(); }
  constexpr bool is_valid() const noexcept { return validity() != record_validity::invalid; }

  constexpr maybe<std::uint64_t> source_address() const noexcept {
    return {source, info.is_valid(record_field::source_address)};
  }
  constexpr maybe<std::uint64_t> target_address() const noexcept {
    return {target, info.is_valid(record_field::target_address)};
  }
  constexpr maybe<branch_type> type() const noexcept {
    return {info.branch(), info.is_valid(record_field::type)};
  }
  constexpr maybe<exception_level> target_el() const noexcept {
    return {info.target_el(), info.is_valid(record_field::el)};
  }
  constexpr maybe<bool> mispredicted() const noexcept {
    return {info.mpred != 0, info.is_valid(record_field::mpred)};
  }
  constexpr maybe<bool> transactional() const noexcept {
    return {info.t != 0, info.is_valid(record_field::t)};
  }
  constexpr maybe<bool> last_failed() const noexcept {
    return {info.lastfailed != 0, info.is_valid(record_field::lastfailed)};
  }
  constexpr maybe<cycle_count> cycles() const noexcept {
    return {info.cycles(counter_bits), info.is_valid(record_field::cc)};
  }
  constexpr raw_record raw() const noexcept {
    return {encode_brbinf(info).value, source, target};
  }
};

// What a producer (an injector, a test, a simulator) says about a record. Fields that the
// validity marks not valid are ignored and written as zero.
struct record_fields {
  record_validity validity = record_validity::full;
  std::uint64_t source = 0;
  std::uint64_t target = 0;
  branch_type type = branch_type::direct;
  exception_level el = exception_level::el0;
  bool mispredicted = false;
  bool transactional = false;
  bool last_failed = false;
  maybe<std::uint64_t> cycles;  // known = false: CCU = 1 (count unknown)
  constexpr bool operator==(const record_fields&) const = default;
};

enum class record_error : std::uint8_t {
  none,
  invalid_config,      // the BRBIDR0_EL1 value is invalid (runtime_config::status())
  reserved_type,       // encode: branch_type::reserved (or an unnamed code) has no TYPE
  field_out_of_range,  // encode: a validity or exception level outside its enumeration
  index_out_of_range,  // record index >= NUMREC, or a nonzero record there (R_BNGTH)
  not_contiguous,      // a valid record after an invalid one (R_SQLCX)
};

struct decode_result {
  branch_record record{};
  record_error error = record_error::none;
};
struct encode_record_result {
  raw_record registers{};  // all zero on error
  record_error error = record_error::none;
};

// Where record `index` is read: BRBFCR_EL1.BANK and the <m> of BRBINF<m>_EL1, with
// index = m + BANK * 32 (F1.1.11).
struct record_slot {
  unsigned bank = 0;
  unsigned m = 0;
  record_error error = record_error::none;
};

// Result of checking a buffer read out in index order (index 0 is the youngest record).
struct buffer_scan {
  std::size_t valid_records = 0;  // records 0 .. valid_records-1 are valid
  record_error error = record_error::none;
  std::size_t error_index = 0;    // the first record that breaks a rule
};

template <class Config = runtime_config>
class record_codec {
 public:
  constexpr record_codec() noexcept = default;
  constexpr explicit record_codec(const Config& cfg) noexcept : cfg_(cfg) {}

  constexpr config_error status() const noexcept { return cfg_.status(); }
  constexpr const config& get() const noexcept { return cfg_.get(); }
  // Number of records the buffer holds (NUMREC); 0 for an invalid configuration.
  constexpr unsigned capacity() const noexcept { return ok() ? get().num_records : 0; }

  constexpr record_slot slot(unsigned index) const noexcept {
    if (!ok()) return {0, 0, record_error::invalid_config};
    if (index >= capacity()) return {0, 0, record_error::index_out_of_range};
    return {index / 32, index % 32, record_error::none};
  }

  constexpr decode_result decode(const raw_record& r) const noexcept {
    branch_record rec{decode_brbinf(r.brbinf), r.brbsrc, r.brbtgt, get().counter_bits};
    return {rec, ok() ? record_error::none : record_error::invalid_config};
  }

  constexpr encode_record_result encode(const record_fields& f) const noexcept {
    if (!ok()) return {{}, record_error::invalid_config};
    if (f.validity == record_validity::invalid) return {{}, record_error::none};
    if (branch_type_of(static_cast<std::uint8_t>(f.type)) == branch_type::reserved)
      return {{}, record_error::reserved_type};
    const auto v = f.validity;
    brbinf info;
    info.valid = static_cast<std::uint8_t>(v);
    info.type = static_cast<std::uint8_t>(f.type);  // branch_type values are TYPE codes
    info.lastfailed = f.last_failed ? 1 : 0;
    const cc_encoding cc = f.cycles.known ? encode_cycles(f.cycles.value, get().counter_bits)
                                          : encode_unknown_cycles();
    info.cc = cc.cc;
    info.ccu = cc.ccu;
    if (is_field_valid(v, record_field::el)) info.el = static_cast<std::uint8_t>(f.el);
    if (is_field_valid(v, record_field::mpred)) info.mpred = f.mispredicted ? 1 : 0;
    if (is_field_valid(v, record_field::t)) info.t = f.transactional ? 1 : 0;
    const encode_result e = encode_brbinf(info);
    if (!e.ok()) return {{}, record_error::field_out_of_range};
    raw_record out;
    out.brbinf = e.value;
    if (is_field_valid(v, record_field::source_address)) out.brbsrc = f.source;
    if (is_field_valid(v, record_field::target_address)) out.brbtgt = f.target;
    return {out, record_error::none};
  }

  // Checks `count` records read in index order: records at or beyond NUMREC read as zero
  // (R_BNGTH), and the valid records are exactly indexes 0 .. m-1 (R_SQLCX).
  constexpr buffer_scan scan(const raw_record* records, std::size_t count) const noexcept {
    buffer_scan s;
    if (!ok()) {
      s.error = record_error::invalid_config;
      return s;
    }
    bool ended = false;
    for (std::size_t i = 0; i < count; ++i) {
      const raw_record& r = records[i];
      if (i >= capacity()) {
        if (r != raw_record{}) return {s.valid_records, record_error::index_out_of_range, i};
        continue;
      }
      const bool valid = decode_brbinf(r.brbinf).validity() != record_validity::invalid;
      if (!valid) {
        ended = true;
      } else if (ended) {
        return {s.valid_records, record_error::not_contiguous, i};
      } else {
        ++s.valid_records;
      }
    }
    return s;
  }

 private:
  constexpr bool ok() const noexcept { return cfg_.status() == config_error::none; }
  Config cfg_{};
};

}  // namespace tracecodec::brbe
