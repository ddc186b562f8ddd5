// SPDX-License-Identifier: Apache-2.0
// Reader for OpenCSD-format trace snapshots (snapshot.ini + trace.ini + device .ini files +
// raw buffers), limited to what an ETE packet decoder needs: the register values of each
// buffer's source and the buffer's bytes. Hosted code (std::string, std::vector, <cstdio>),
// unlike the freestanding codec headers; include it only in tools. It reports every failure
// as an error message: no exception path (std::fopen/std::fread, never iostreams, which throw
// from filebuf::underflow on a directory).
//
// Supported: buffers with format=source_data (raw trace from one source, no CoreSight frame
// formatting). Each buffer is one independent trace session.
#pragma once

#include <cerrno>
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

#include "../../ete/packet/config.hpp"

namespace tracecodec::ete::snapshot {

struct buffer {
  std::string name;    // [bufferN] name=
  std::string file;    // [bufferN] file=, as written in trace.ini (relative to the snapshot)
  std::string path;    // the file to open: `file` joined to the snapshot directory
  std::string source;  // name of the trace source device feeding this buffer
  registers regs;      // that device's [regs]
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
};

struct loaded {
  std::vector<buffer> buffers;  // in trace.ini [trace_buffers] buffers= order
  std::string error;            // empty on success; on error, buffers is empty
};

// Parses an unsigned 32-bit value: "0x"/"0X" followed by hex digits, or decimal digits.
// Surrounding blanks are ignored. False (and `out` untouched) on anything else or overflow.
inline bool parse_u32(std::string_view s, std::uint32_t& out) {
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
    v = v * base + d;
    if (v > 0xffffffffu) return false;
  }
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

inline loaded fail(std::string message) {
  loaded r;
  r.error = std::move(message);
  return r;
}

struct device {
  std::string name;
  std::string file;
  ini_file ini;
};

// Reads the [regs] section of a source device. Returns an empty string or an error message.
inline std::string read_registers(const device& d, registers& regs) {
  const ini_section* s = find_section(d.ini, "regs");
  if (s == nullptr) return "device '" + d.name + "' (" + d.file + ") has no [regs] section";
  struct reg_slot {
    const char* name;
    std::uint32_t* value;
    bool required;
    bool seen;
  };
  regs = registers{};
  reg_slot slots[] = {
      {"TRCIDR0", &regs.trcidr0, true, false},       {"TRCIDR1", &regs.trcidr1, false, false},
      {"TRCIDR2", &regs.trcidr2, true, false},       {"TRCIDR8", &regs.trcidr8, false, false},
      {"TRCDEVARCH", &regs.trcdevarch, true, false}, {"TRCCONFIGR", &regs.trcconfigr, false, false},
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

}  // namespace detail

// Loads the snapshot in directory `dir`: every trace buffer with its source's registers (and
// its bytes, unless opt.read_data is false).
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
      if (const std::string* n = find_value(find_section(d.ini, "device"), "name")) d.name = *n;
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
    if (format == nullptr || *format != "source_data")
      return fail(trace_path + ": buffer '" + *name + "' has format '" +
                  (format ? *format : std::string()) +
                  "'; only format=source_data (unformatted trace) is supported");
    b.name = *name;
    b.file = *file;

    // The source device that writes into this buffer (exactly one for source_data).
    const std::string* source = nullptr;
    if (sources != nullptr) {
      for (const auto& kv : sources->entries) {
        if (kv.second != b.name) continue;
        if (source != nullptr)
          return fail(trace_path + ": buffer '" + b.name +
                      "' has more than one source, which format=source_data cannot hold");
        source = &kv.first;
      }
    }
    if (source == nullptr)
      return fail(trace_path + ": no [source_buffers] entry names buffer '" + b.name + "'");
    b.source = *source;

    const device* dev = nullptr;
    for (const device& d : devices)
      if (d.name == b.source) {
        dev = &d;
        break;
      }
    if (dev == nullptr)
      return fail(snapshot_path + ": no device named '" + b.source + "' (source of buffer '" +
                  b.name + "')");
    const std::string reg_error = read_registers(*dev, b.regs);
    if (!reg_error.empty()) return fail(reg_error);

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
  return result;
}

}  // namespace tracecodec::ete::snapshot
