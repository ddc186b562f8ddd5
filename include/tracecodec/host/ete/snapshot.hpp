// SPDX-License-Identifier: Apache-2.0
// Reader for OpenCSD-format trace snapshots (snapshot.ini + trace.ini + device .ini files +
// raw buffers), limited to what an ETE packet decoder needs: the register values of each
// buffer's source and the buffer's bytes. Hosted code (std::string, std::vector, <cstdio>),
// unlike the freestanding codec headers; include it only in tools. It reports every failure
// as an error message: no exception path (std::fopen/std::fread, never iostreams, which throw
// from filebuf::underflow on a directory).
//
// Supported: buffers with format=source_data (raw trace from one source, no CoreSight frame
// formatting), format=coresight (CoreSight formatted frames, memory aligned, several sources
// told apart by their trace IDs) and format=dstream_coresight (a DSTREAM capture of a TPIU
// stream). Sources of type ETE and ETM4/ETM4.x are decodable; others (STM) are listed only.
// Each buffer is one independent trace session. The traced core's memory dumps ([dumpN]
// sections of its device file) are read into memory regions for program flow.
#pragma once

#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <new>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "../../arm/instruction.hpp"
#include "../../ete/flow/image.hpp"
#include "../../ete/packet/config.hpp"

namespace tracecodec::ete::snapshot {

// How a buffer's bytes are laid out ([bufferN] format=).
enum class buffer_format : std::uint8_t {
  source_data,        // one source's trace, unformatted
  coresight,          // CoreSight formatter frames, 16-byte aligned from the file's start
  dstream_coresight,  // DSTREAM: 512-byte blocks of 504 TPIU stream bytes + an 8-byte footer
};

// A trace source feeding a buffer ([source_buffers] entry) with its device's settings.
struct trace_source {
  std::string name;               // the source device's name (ETM_0, ...)
  std::string type;               // its [device] type= (ETE, ETM4, ETM4.x, STM, ...)
  bool decodable = false;         // ETE or ETMv4: `regs` and `trctraceidr` hold its values
  registers regs;                 // its [regs] (proto and profile set from the types)
  std::uint32_t trctraceidr = 0;  // its TRCTRACEIDR (0 when absent)
  std::string core_name;          // the core [core_trace_sources] maps to it ("" if none)
  std::string core_type;          // that core's [device] type=
};

struct buffer {
  std::string name;    // [bufferN] name=
  std::string file;    // [bufferN] file=, as written in trace.ini (relative to the snapshot)
  std::string path;    // the file to open: `file` joined to the snapshot directory
  buffer_format format = buffer_format::source_data;
  std::vector<trace_source> sources;  // every source writing into it, in [source_buffers] order
  // The first decodable source's name, registers and trace ID (the only source of a
  // source_data buffer); empty / zero when none is decodable.
  std::string source;
  registers regs;
  std::uint32_t trctraceidr = 0;
  std::vector<std::uint8_t> data;  // the buffer's bytes; empty unless load_options::read_data
};

struct load_options {
  // False: leave buffer::data empty, for tools that stream each buffer from buffer::path (a
  // buffer may be endless, /dev/zero say). load() still checks that each buffer file opens
  // and is not a directory, so that a bad snapshot fails before any output.
  bool read_data = true;
  // With read_data: read at most this many bytes + 1 of a buffer; a larger buffer fails the
  // load (a regular file without reading it).
  std::uint64_t max_data_size = UINT64_MAX;
  // Read the core's memory dumps (loaded::dumps, loaded::regions); tools that need no
  // program image may skip them.
  bool read_memory = true;
  // With read_memory: a [dumpN] whose file does not exist is left out (named in
  // loaded::missing_dumps) instead of failing every dump, as OpenCSD's snapshot reader does
  // (it reports the file and maps the others: juno-uname-001 names two files it lacks).
  bool skip_missing_dumps = false;
};

// One [dumpN] section of the core's device file: `data` is the file's bytes from `offset`,
// to be found at `address` in the spaces `space` names.
struct memory_dump {
  std::string section;   // "dump1", ...
  std::string file;      // file=, as written (relative to the snapshot)
  std::string path;      // the file to open
  std::uint64_t address = 0;
  std::uint64_t offset = 0;                   // offset= (0 when absent)
  std::string space_name;                     // space= as written ("" when absent: any)
  std::uint8_t space = memory_space::any;     // memory_space bits
  std::vector<std::uint8_t> data;             // length= bytes (default: the rest of the file)
};

struct loaded {
  std::vector<buffer> buffers;  // in trace.ini [trace_buffers] buffers= order
  // The core the trace sources trace: its [device] name= and type= ("Cortex-A53",
  // "ARM-AA64"; both empty when the snapshot lists no core), the architecture the type
  // implies (arch_for_core), and its memory dumps in file order.
  std::string core_name;
  std::string core_type;
  arm::arch_version arch = arm::arch_version::newest;
  std::vector<memory_dump> dumps;
  // One region per dump, in the same order, pointing into dumps[i].data (a copy of a
  // `loaded` points its regions at its own dumps; a move keeps them valid).
  std::vector<memory_region> regions;
  std::string error;            // empty on success; on error, buffers is empty
  // Why the memory dumps could not be read (a missing file, an offset or length beyond its
  // end, a bad entry); dumps and regions are then empty. Separate from `error` because the
  // trace buffers are still good for packet and element decoding (the corpus's event_test
  // names dump files it does not ship, and OpenCSD also decodes it, without memory).
  std::string memory_error;
  // With load_options::skip_missing_dumps: the dump files that do not exist, left out.
  std::vector<std::string> missing_dumps;

  loaded() = default;
  loaded(loaded&&) noexcept = default;
  loaded& operator=(loaded&&) noexcept = default;
  loaded(const loaded& o)
      : buffers(o.buffers), core_name(o.core_name), core_type(o.core_type), arch(o.arch),
        dumps(o.dumps), error(o.error), memory_error(o.memory_error),
        missing_dumps(o.missing_dumps) {
    point_regions();
  }
  loaded& operator=(const loaded& o) {
    if (this != &o) {
      loaded copy(o);
      *this = std::move(copy);
    }
    return *this;
  }
  ~loaded() = default;

  // Rebuilds `regions` from `dumps` (after the dumps are final: a vector that grows moves
  // its elements, but not their bytes).
  void point_regions() {
    regions.clear();
    regions.reserve(dumps.size());
    for (const memory_dump& d : dumps) regions.push_back({d.address, d.data.data(), d.data.size(), d.space});
  }
};

// The architecture a snapshot's core type implies, as OpenCSD's core-name map has it
// (common/trc_core_arch_map: named Cortex cores, "ARMv<M>[.<m>]-<P>", "ARM-AA64[-<P>]").
// OpenCSD has only v7, v8, v8.3 and "AA64" (v8.3 and later features); here "ARMv8.<m>" and
// "ARMv9.<m>" keep their minor version, "ARM-AA64" is the newest architecture, and so is
// any name OpenCSD does not know (it refuses those; a newer classifier table only admits
// encodings an older core would treat as undefined, so newest is the safe guess).
// Matching ignores case.
inline arm::arch_version arch_for_core(std::string_view type) {
  using arm::arch_version;
  struct core {
    const char* name;
    arch_version arch;
  };
  // OpenCSD's table, as it stands (its Cortex-A78 entry says v8 though the core is v8.2; no
  // branch encoding differs between the two).
  static constexpr core cores[] = {
      {"Cortex-A78", arch_version::v8_0}, {"Cortex-A77", arch_version::v8_3},
      {"Cortex-A76", arch_version::v8_3}, {"Cortex-A75", arch_version::v8_3},
      {"Cortex-A73", arch_version::v8_0}, {"Cortex-A72", arch_version::v8_0},
      {"Cortex-A65", arch_version::v8_3}, {"Cortex-A57", arch_version::v8_0},
      {"Cortex-A55", arch_version::v8_3}, {"Cortex-A53", arch_version::v8_0},
      {"Cortex-A35", arch_version::v8_0}, {"Cortex-A32", arch_version::v8_0},
      {"Cortex-A17", arch_version::v7},   {"Cortex-A15", arch_version::v7},
      {"Cortex-A12", arch_version::v7},   {"Cortex-A9", arch_version::v7},
      {"Cortex-A8", arch_version::v7},    {"Cortex-A7", arch_version::v7},
      {"Cortex-A5", arch_version::v7},    {"Cortex-R52", arch_version::v8_0},
      {"Cortex-R8", arch_version::v7},    {"Cortex-R7", arch_version::v7},
      {"Cortex-R5", arch_version::v7},    {"Cortex-R4", arch_version::v7},
      {"Cortex-M33", arch_version::v8_0}, {"Cortex-M23", arch_version::v8_0},
      {"Cortex-M0", arch_version::v7},    {"Cortex-M0+", arch_version::v7},
      {"Cortex-M3", arch_version::v7},    {"Cortex-M4", arch_version::v7},
  };
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  auto same = [&](std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (lower(a[i]) != lower(b[i])) return false;
    return true;
  };
  auto starts = [&](std::string_view s, std::string_view p) {
    return s.size() >= p.size() && same(s.substr(0, p.size()), p);
  };
  for (const core& c : cores)
    if (same(type, c.name)) return c.arch;
  // "ARMv<M>[.<m>]-<P>": one digit each, as OpenCSD reads them.
  if (starts(type, "ARMv") && type.size() >= 7 && type[4] >= '0' && type[4] <= '9') {
    const int major = type[4] - '0';
    int minor = 0;
    std::string_view rest = type.substr(5);
    if (rest.size() >= 2 && rest[0] == '.' && rest[1] >= '0' && rest[1] <= '9') {
      minor = rest[1] - '0';
      rest.remove_prefix(2);
    }
    if (rest.size() >= 2 && rest[0] == '-') {
      if (major == 7) return arch_version::v7;
      if (major == 8 && minor <= 9)
        return static_cast<arch_version>(static_cast<int>(arch_version::v8_0) + minor);
      if (major == 9 && minor <= 6)
        return static_cast<arch_version>(static_cast<int>(arch_version::v9_0) + minor);
    }
    return arch_version::newest;
  }
  return arch_version::newest;  // "ARM-AA64", "ARM-aa64-R", and names OpenCSD does not know
}

// Memory space names of a [dumpN] space= entry, as OpenCSD's snapshot reader accepts them
// (ss_to_dcdtree: single spaces, groups, and the older H/P/NP/SP names). False for any other
// name (OpenCSD quietly takes those as "any"; here a misspelt space is an error).
inline bool parse_memory_space(std::string_view name, std::uint8_t& out) {
  struct entry {
    const char* name;
    std::uint8_t space;
  };
  namespace ms = memory_space;
  static constexpr entry names[] = {
      {"EL1S", ms::el1s}, {"EL1N", ms::el1n}, {"EL1R", ms::el1r},       {"EL2S", ms::el2s},
      {"EL2", ms::el2n},  {"EL2N", ms::el2n}, {"EL2R", ms::el2r},       {"EL3", ms::el3},
      {"ROOT", ms::root}, {"S", ms::secure},  {"N", ms::non_secure},    {"R", ms::realm},
      {"ANY", ms::any},   {"H", ms::el2n},    {"P", ms::el1n},          {"NP", ms::el1n},
      {"SP", ms::el1s},
  };
  for (const entry& e : names) {
    const std::string_view n = e.name;
    if (n.size() != name.size()) continue;
    bool eq = true;
    for (std::size_t i = 0; i < n.size() && eq; ++i)
      eq = n[i] == (name[i] >= 'a' && name[i] <= 'z' ? static_cast<char>(name[i] - 'a' + 'A') : name[i]);
    if (eq) {
      out = e.space;
      return true;
    }
  }
  return false;
}

// Parses an unsigned 64-bit value: "0x"/"0X" followed by hex digits, or decimal digits.
// Surrounding blanks are ignored. False (and `out` untouched) on anything else or overflow.
inline bool parse_u64(std::string_view s, std::uint64_t& out) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  unsigned base = 10;
  if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  if (s.empty()) return false;
  std::uint64_t v = 0;
  for (const char ch : s) {
    unsigned d;
    if (ch >= '0' && ch <= '9')
      d = static_cast<unsigned>(ch - '0');
    else if (base == 16 && ch >= 'a' && ch <= 'f')
      d = static_cast<unsigned>(ch - 'a' + 10);
    else if (base == 16 && ch >= 'A' && ch <= 'F')
      d = static_cast<unsigned>(ch - 'A' + 10);
    else
      return false;
    if (v > (UINT64_MAX - d) / base) return false;
    v = v * base + d;
  }
  out = v;
  return true;
}

// Parses an unsigned 32-bit value as parse_u64 does; false also when it exceeds 32 bits.
inline bool parse_u32(std::string_view s, std::uint32_t& out) {
  std::uint64_t v = 0;
  if (!parse_u64(s, v) || v > 0xffffffffu) return false;
  out = static_cast<std::uint32_t>(v);
  return true;
}

// File helpers the tools share: every failure is a reason string, never an exception.
// Why a read failed: errno's text, or a generic reason when the library set no errno.
inline std::string errno_reason(int e) {
  return e != 0 ? std::string(std::strerror(e)) : std::string("read error");
}

// Reads the file at `path` into `out`, at most `max` bytes (more is an error). Returns an
// empty string or the reason it failed ("Is a directory", "larger than N bytes", ...).
inline std::string read_bytes(const std::string& path, std::vector<std::uint8_t>& out,
                              std::uint64_t max = UINT64_MAX) {
  out.clear();
  errno = 0;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return errno_reason(errno);
  std::string why;
  std::uint8_t chunk[65536];
  try {  // the one exception left: std::bad_alloc from a buffer larger than memory
    for (;;) {
      errno = 0;
      const std::size_t n = std::fread(chunk, 1, sizeof chunk, f);
      if (n != 0 && out.size() + n > max) {  // max + 1 bytes seen: stop reading
        why = "larger than " + std::to_string(max) + " bytes";
        break;
      }
      out.insert(out.end(), chunk, chunk + n);
      if (n < sizeof chunk) {
        if (std::ferror(f)) why = errno_reason(errno);  // EISDIR for a directory (glibc)
        break;
      }
    }
  } catch (const std::bad_alloc&) {
    why = "out of memory after " + std::to_string(out.size()) + " bytes";
  }
  std::fclose(f);
  if (!why.empty()) {
    out.clear();
    out.shrink_to_fit();
  }
  return why;
}

// Without reading: the file at `path` exists, is not a directory (fopen accepts one; the read
// would fail) and, if a regular file, opens for reading. A device or a FIFO is not opened
// here (opening a FIFO waits for a writer); its reader finds out. Returns "" or the reason.
inline std::string check_readable(const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (ec) return ec.message();  // "No such file or directory", ...
  if (std::filesystem::is_directory(st))
    return std::make_error_code(std::errc::is_a_directory).message();
  if (!std::filesystem::is_regular_file(st)) return {};
  errno = 0;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return errno_reason(errno);
  std::fclose(f);
  return {};
}

// Size of a regular file, or -1 for anything else (a device, a pipe) and on error.
inline std::int64_t regular_file_size(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return -1;
  const std::uintmax_t n = std::filesystem::file_size(path, ec);
  return ec || n > static_cast<std::uintmax_t>(INT64_MAX) ? -1 : static_cast<std::int64_t>(n);
}

namespace detail {

struct ini_section {
  std::string name;
  std::vector<std::pair<std::string, std::string>> entries;  // in file order, duplicates kept
};
using ini_file = std::vector<ini_section>;

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

inline bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

inline std::string join_path(const std::string& dir, const std::string& file) {
  if (file.empty() || file.front() == '/' || dir.empty()) return file;
  if (dir.back() == '/') return dir + file;
  return dir + '/' + file;
}

// INI text: "[section]" lines, "key = value" lines, blank lines, and comments. A comment
// starts at a ';' anywhere in the line (OpenCSD's snapshots write `TRCIDR0=0x28000ea1 ;
// comment`, and its reader strips from any ';'), or at a '#' that begins the line or follows
// a blank. OpenCSD also strips from any '#'; here a '#' inside a value stays, because a file
// path may hold one (file=trace#2.bin). CRLF and a UTF-8 byte order mark are tolerated.
// Entries before the first section go to a section with an empty name.
inline std::string_view strip_comment(std::string_view line) {
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == ';') return line.substr(0, i);
    if (line[i] == '#' && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t'))
      return line.substr(0, i);
  }
  return line;
}

inline ini_file parse_ini(std::string_view text) {
  ini_file f;
  if (text.size() >= 3 && text.substr(0, 3) == "\xef\xbb\xbf") text.remove_prefix(3);
  f.push_back(ini_section{});
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    line = trim(strip_comment(trim(line)));
    if (line.empty()) continue;
    if (line.front() == '[') {
      const std::size_t close = line.find(']');
      if (close == std::string_view::npos) continue;
      f.push_back(ini_section{std::string(trim(line.substr(1, close - 1))), {}});
      continue;
    }
    const std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    f.back().entries.emplace_back(std::string(trim(line.substr(0, eq))),
                                  std::string(trim(line.substr(eq + 1))));
  }
  return f;
}

// Reads and parses an .ini file. Returns an empty string or the reason it failed.
inline std::string read_ini(const std::string& path, ini_file& out) {
  std::vector<std::uint8_t> bytes;
  // An .ini file is small; the limit keeps an endless one (/dev/zero) from filling memory.
  const std::string why = read_bytes(path, bytes, std::uint64_t{16} << 20);
  if (!why.empty()) return why;
  out = parse_ini(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  return {};
}

inline const ini_section* find_section(const ini_file& f, std::string_view name) {
  for (const ini_section& s : f)
    if (iequals(s.name, name)) return &s;
  return nullptr;
}

inline const std::string* find_value(const ini_section* s, std::string_view key) {
  if (s == nullptr) return nullptr;
  for (const auto& kv : s->entries)
    if (iequals(kv.first, key)) return &kv.second;
  return nullptr;
}

// Register key without a "(size:64)"-style suffix.
inline std::string_view register_key(std::string_view key) {
  const std::size_t paren = key.find('(');
  return trim(paren == std::string_view::npos ? key : key.substr(0, paren));
}

// A register's value by name, whatever suffix its key has ("TRCTRACEIDR(0x010)",
// "TRCTRACEIDR(id:0x10)").
inline const std::string* find_register(const ini_section* s, std::string_view name) {
  if (s == nullptr) return nullptr;
  for (const auto& kv : s->entries)
    if (iequals(register_key(kv.first), name)) return &kv.second;
  return nullptr;
}

inline loaded fail(std::string message) {
  loaded r;
  r.error = std::move(message);
  return r;
}

struct device {
  std::string name;
  std::string file;
  std::string device_class;  // [device] class= ("core", "trace_source", ...)
  std::string type;          // [device] type=
  ini_file ini;
};

// The PE profile a core type names: Cortex-M*, ARMv*-M.
inline pe_profile profile_for_core(std::string_view type) {
  auto m = [](std::string_view t, std::string_view p) {
    return t.size() >= p.size() && iequals(t.substr(0, p.size()), p);
  };
  if (m(type, "Cortex-M")) return pe_profile::m;
  if (m(type, "ARMv") && type.size() >= 2 && (type.back() == 'M' || type.back() == 'm') &&
      type[type.size() - 2] == '-')
    return pe_profile::m;
  return pe_profile::a;
}

// The protocol of a trace source device type, or false when it is not ETE or ETMv4.
inline bool protocol_for_type(std::string_view type, protocol& p) {
  if (iequals(type, "ETE")) {
    p = protocol::ete;
    return true;
  }
  if (type.size() >= 4 && iequals(type.substr(0, 4), "ETM4")) {  // ETM4, ETM4.x
    p = protocol::etmv4;
    return true;
  }
  return false;
}

// Reads the [regs] section of a source device. Returns an empty string or an error message.
// ETE needs TRCDEVARCH; ETMv4 takes its version from TRCIDR1 instead.
inline std::string read_registers(const device& d, registers& regs, protocol proto = protocol::ete) {
  const ini_section* s = find_section(d.ini, "regs");
  if (s == nullptr) return "device '" + d.name + "' (" + d.file + ") has no [regs] section";
  struct reg_slot {
    const char* name;
    std::uint32_t* value;
    bool required;
    bool seen;
  };
  regs = registers{};
  regs.proto = proto;
  const bool etm = proto == protocol::etmv4;
  reg_slot slots[] = {
      {"TRCIDR0", &regs.trcidr0, true, false},       {"TRCIDR1", &regs.trcidr1, etm, false},
      {"TRCIDR2", &regs.trcidr2, true, false},       {"TRCIDR8", &regs.trcidr8, false, false},
      {"TRCDEVARCH", &regs.trcdevarch, !etm, false}, {"TRCCONFIGR", &regs.trcconfigr, false, false},
  };
  for (const auto& kv : s->entries) {
    const std::string_view key = register_key(kv.first);
    for (reg_slot& slot : slots) {
      if (!iequals(key, slot.name)) continue;
      if (!parse_u32(kv.second, *slot.value))
        return "device '" + d.name + "' (" + d.file + "): bad value '" + kv.second + "' for " +
               slot.name;
      slot.seen = true;
    }
  }
  for (const reg_slot& slot : slots)
    if (slot.required && !slot.seen)
      return "device '" + d.name + "' (" + d.file + ") lacks register " + slot.name;
  return {};
}

// Reads `length` bytes (all the rest when `whole_rest`) from `offset` of the regular file
// at `path` into `out`. Returns "" or the reason it failed.
inline std::string read_file_range(const std::string& path, std::uint64_t offset, bool whole_rest,
                                   std::uint64_t length, std::vector<std::uint8_t>& out) {
  out.clear();
  const std::int64_t size = regular_file_size(path);
  if (size < 0) {
    if (std::string why = check_readable(path); !why.empty()) return why;
    return "not a regular file";
  }
  const std::uint64_t file_size = static_cast<std::uint64_t>(size);
  if (offset > file_size)
    return "offset " + std::to_string(offset) + " is beyond the end of the file (" +
           std::to_string(file_size) + " bytes)";
  if (whole_rest) length = file_size - offset;
  if (length > file_size - offset)
    return "offset " + std::to_string(offset) + " + length " + std::to_string(length) +
           " is beyond the end of the file (" + std::to_string(file_size) + " bytes)";
  errno = 0;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return errno_reason(errno);
  std::string why;
  try {  // std::bad_alloc from a length larger than memory
    out.resize(static_cast<std::size_t>(length));
    std::uint64_t at = 0;
    if (offset > static_cast<std::uint64_t>(LONG_MAX) ||
        std::fseek(f, static_cast<long>(offset), SEEK_SET) != 0) {
      why = "cannot seek to offset " + std::to_string(offset);
    } else {
      while (at < length) {
        errno = 0;
        const std::size_t n = std::fread(out.data() + at, 1, static_cast<std::size_t>(length - at), f);
        if (n == 0) {
          why = std::ferror(f) ? errno_reason(errno) : "file shrank while being read";
          break;
        }
        at += n;
      }
    }
  } catch (const std::bad_alloc&) {
    why = "out of memory for " + std::to_string(length) + " bytes";
  }
  std::fclose(f);
  if (!why.empty()) {
    out.clear();
    out.shrink_to_fit();
  }
  return why;
}

// The core device's [dumpN] sections (any section whose name starts with "dump", as
// OpenCSD's parser takes them), each read from its file. Returns "" or an error message.
inline std::string read_dumps(const device& core, const std::string& dir,
                              std::vector<memory_dump>& dumps,
                              std::vector<std::string>* missing = nullptr) {
  for (const ini_section& sec : core.ini) {
    if (sec.name.size() < 4 || !iequals(std::string_view(sec.name).substr(0, 4), "dump")) continue;
    const std::string where = core.file + " [" + sec.name + "]";
    memory_dump d;
    d.section = sec.name;
    const std::string* file = find_value(&sec, "file");
    const std::string* address = find_value(&sec, "address");
    const std::string* length = find_value(&sec, "length");
    const std::string* offset = find_value(&sec, "offset");
    const std::string* space = find_value(&sec, "space");
    if (file == nullptr || file->empty()) return where + ": no file=";
    if (address == nullptr) return where + ": no address=";
    // OpenCSD strips quotes around the file and space names.
    auto unquote = [](std::string v) {
      if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
        v = v.substr(1, v.size() - 2);
      return v;
    };
    d.file = unquote(*file);
    if (!parse_u64(*address, d.address)) return where + ": bad address '" + *address + "'";
    std::uint64_t len = 0;
    if (length != nullptr && !parse_u64(*length, len)) return where + ": bad length '" + *length + "'";
    if (offset != nullptr && !parse_u64(*offset, d.offset)) return where + ": bad offset '" + *offset + "'";
    if (space != nullptr) {
      d.space_name = unquote(*space);
      if (!d.space_name.empty() && !parse_memory_space(d.space_name, d.space))
        return where + ": unknown memory space '" + d.space_name +
               "' (EL1S, EL1N, EL1R, EL2, EL2N, EL2S, EL2R, EL3, ROOT, S, N, R, ANY, H, P, NP, SP)";
    }
    d.path = join_path(dir, d.file);
    std::error_code ec;
    if (missing != nullptr && !std::filesystem::exists(d.path, ec)) {
      missing->push_back(d.path);
      continue;
    }
    if (std::string why = read_file_range(d.path, d.offset, length == nullptr, len, d.data); !why.empty())
      return "cannot read memory dump " + d.path + " (" + where + "): " + why;
    if (!d.data.empty() && d.data.size() - 1 > UINT64_MAX - d.address)
      return where + ": " + std::to_string(d.data.size()) + " bytes at " + *address +
             " run past the end of the address space";
    dumps.push_back(std::move(d));
  }
  return {};
}

}  // namespace detail

// Loads the snapshot in directory `dir`: every trace buffer with its source's registers (and
// its bytes, unless opt.read_data is false), and the traced core's type and memory dumps
// (unless opt.read_memory is false; a snapshot without a core or without dumps loads too, and
// a bad dump sets memory_error, not error).
inline loaded load(const std::string& dir, const load_options& opt = {}) {
  using namespace detail;
  const std::string snapshot_path = join_path(dir, "snapshot.ini");
  ini_file snap;
  if (std::string why = read_ini(snapshot_path, snap); !why.empty())
    return fail("cannot read " + snapshot_path + ": " + why);

  // Devices, with the name each declares in its [device] section.
  std::vector<device> devices;
  if (const ini_section* list = find_section(snap, "device_list")) {
    for (const auto& kv : list->entries) {
      device d;
      d.file = kv.second;
      const std::string path = join_path(dir, d.file);
      if (std::string why = read_ini(path, d.ini); !why.empty())
        return fail("cannot read device file " + path + ": " + why);
      const ini_section* info = find_section(d.ini, "device");
      if (const std::string* n = find_value(info, "name")) d.name = *n;
      if (const std::string* c = find_value(info, "class")) d.device_class = *c;
      if (const std::string* t = find_value(info, "type")) d.type = *t;
      devices.push_back(std::move(d));
    }
  }

  const std::string* metadata = find_value(find_section(snap, "trace"), "metadata");
  if (metadata == nullptr || metadata->empty())
    return fail(snapshot_path + ": no [trace] metadata= entry");
  const std::string trace_path = join_path(dir, *metadata);
  ini_file trace;
  if (std::string why = read_ini(trace_path, trace); !why.empty())
    return fail("cannot read " + trace_path + ": " + why);

  const std::string* list = find_value(find_section(trace, "trace_buffers"), "buffers");
  if (list == nullptr) return fail(trace_path + ": no [trace_buffers] buffers= entry");
  const ini_section* sources = find_section(trace, "source_buffers");

  loaded result;
  std::string_view rest = *list;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view id = trim(rest.substr(0, comma));
    rest.remove_prefix(comma == std::string_view::npos ? rest.size() : comma + 1);
    if (id.empty()) continue;  // "buffers=buffer1," has a trailing comma

    const ini_section* sec = find_section(trace, id);
    if (sec == nullptr) return fail(trace_path + ": no [" + std::string(id) + "] section");
    buffer b;
    const std::string* name = find_value(sec, "name");
    const std::string* file = find_value(sec, "file");
    const std::string* format = find_value(sec, "format");
    if (name == nullptr || name->empty())
      return fail(trace_path + ": [" + std::string(id) + "] has no name=");
    if (file == nullptr || file->empty())
      return fail(trace_path + ": [" + std::string(id) + "] has no file=");
    const std::string fmt = format ? *format : std::string();
    if (fmt == "source_data")
      b.format = buffer_format::source_data;
    else if (fmt == "coresight")
      b.format = buffer_format::coresight;
    else if (fmt == "dstream_coresight")
      b.format = buffer_format::dstream_coresight;
    else
      return fail(trace_path + ": buffer '" + *name + "' has format '" + fmt +
                  "'; supported: source_data, coresight, dstream_coresight");
    b.name = *name;
    b.file = *file;

    // The source devices that write into this buffer (exactly one for source_data).
    if (sources != nullptr) {
      for (const auto& kv : sources->entries) {
        if (kv.second != b.name) continue;
        trace_source src;
        src.name = kv.first;
        const device* dev = nullptr;
        for (const device& d : devices)
          if (d.name == src.name) {
            dev = &d;
            break;
          }
        if (dev == nullptr)
          return fail(snapshot_path + ": no device named '" + src.name + "' (source of buffer '" +
                      b.name + "')");
        src.type = dev->type;
        // The core the source traces, for its profile (and the flow layer's memory).
        if (const ini_section* assoc = find_section(trace, "core_trace_sources"))
          for (const auto& c : assoc->entries)
            if (c.second == src.name && src.core_name.empty()) {
              src.core_name = c.first;
              for (const device& d : devices)
                if (d.name == c.first) src.core_type = d.type;
            }
        protocol proto = protocol::ete;
        // A source_data buffer's one source is read as ETE unless its type says ETMv4 (the
        // ETE corpus's devices say type=ETE, but a snapshot that leaves it out still loads).
        src.decodable = protocol_for_type(src.type, proto) || fmt == "source_data";
        if (src.decodable) {
          const std::string reg_error = read_registers(*dev, src.regs, proto);
          if (!reg_error.empty()) return fail(reg_error);
          src.regs.profile = profile_for_core(src.core_type);
          if (const std::string* id = find_register(find_section(dev->ini, "regs"), "TRCTRACEIDR"))
            if (!parse_u32(*id, src.trctraceidr))
              return fail("device '" + dev->name + "' (" + dev->file + "): bad value '" + *id +
                          "' for TRCTRACEIDR");
          if (b.source.empty()) {
            b.source = src.name;
            b.regs = src.regs;
            b.trctraceidr = src.trctraceidr;
          }
        }
        b.sources.push_back(std::move(src));
      }
    }
    if (b.sources.empty())
      return fail(trace_path + ": no [source_buffers] entry names buffer '" + b.name + "'");
    if (b.format == buffer_format::source_data && b.sources.size() > 1)
      return fail(trace_path + ": buffer '" + b.name +
                  "' has more than one source, which format=source_data cannot hold");

    b.path = join_path(dir, b.file);
    std::string why;
    if (!opt.read_data) {
      why = check_readable(b.path);
    } else {
      const std::int64_t size = regular_file_size(b.path);
      if (size >= 0 && static_cast<std::uint64_t>(size) > opt.max_data_size)
        why = "larger than " + std::to_string(opt.max_data_size) + " bytes";  // not read
      else
        why = read_bytes(b.path, b.data, opt.max_data_size);
    }
    if (!why.empty()) return fail("cannot read trace buffer " + b.path + ": " + why);
    result.buffers.push_back(std::move(b));
  }
  if (result.buffers.empty()) return fail(trace_path + ": [trace_buffers] lists no buffers");

  // The core: the one [core_trace_sources] names for the first buffer's source, else the
  // first device of class=core. Its type gives the architecture, its [dumpN] the memory.
  const device* core = nullptr;
  if (const ini_section* assoc = find_section(trace, "core_trace_sources"))
    for (const auto& kv : assoc->entries)
      if (kv.second == result.buffers.front().source)
        for (const device& d : devices)
          if (core == nullptr && d.name == kv.first) core = &d;
  if (core == nullptr)
    for (const device& d : devices)
      if (core == nullptr && iequals(d.device_class, "core")) core = &d;
  if (core != nullptr) {
    result.core_name = core->name;
    result.core_type = core->type;
    result.arch = arch_for_core(core->type);
    if (opt.read_memory) {
      if (std::string why = read_dumps(*core, dir, result.dumps,
                                           opt.skip_missing_dumps ? &result.missing_dumps : nullptr);
          !why.empty()) {
        result.dumps.clear();
        result.memory_error = std::move(why);
      }
      result.point_regions();
    }
  }
  return result;
}

}  // namespace tracecodec::ete::snapshot
