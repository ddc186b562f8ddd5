// SPDX-License-Identifier: Apache-2.0
// ete-dump: prints the packets of Arm ETE or ETMv4 trace, as text or JSON Lines; or its
// resolved elements (--elements); or the program flow (--flow) reconstructed with a memory
// image. A snapshot's CoreSight formatted buffers are split by trace ID, each source decoded
// with its own registers; their lines show the ID (text "ID:<hex>;", JSON "id").
//
//   ete-dump --snapshot DIR [--id ID] [--json]  every buffer of an OpenCSD-format snapshot
//   ete-dump FILE --trcidr0 X --trcidr2 X --trcidr8 X --trcdevarch X --trcconfigr X
//            [--trcidr1 X] [--json]          one raw trace file
//   ete-dump [--json]                        a demonstration trace built with the encoder
//
// Input is read and decoded in 64 KiB chunks (the decoder carries a packet cut by a chunk's
// end), so memory stays bounded whatever the input's length: an endless input (a device, a
// pipe) decodes until it ends, like cat.
//
// Exit status: 0 on success (decode errors in the trace are printed, not fatal), 1 on I/O
// errors (reading the input or writing the output), 2 on usage errors or an invalid trace
// unit configuration.

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <sys/stat.h>

#include <tracecodec/coresight/decode_tree.hpp>
#include <tracecodec/ete/packet/config.hpp>
#include <tracecodec/ete/packet/decoder.hpp>
#include <tracecodec/ete/packet/encoder.hpp>
#include <tracecodec/ete/error.hpp>
#include <tracecodec/ete/element/reader.hpp>
#include <tracecodec/ete/flow/decoder.hpp>
#include <tracecodec/host/coresight/format.hpp>
#include <tracecodec/host/elf.hpp>
#include <tracecodec/host/ete/flow_format.hpp>
#include <tracecodec/host/ete/format.hpp>
#include <tracecodec/ete/packet/packet.hpp>
#include <tracecodec/host/ete/snapshot.hpp>

namespace ete = tracecodec::ete;

#include "cli.hpp"

namespace {

using namespace tools;  // exit codes, put_line

const char* const usage_text =
    "usage: ete-dump --snapshot DIR [--id ID] [--json]\n"
    "       ete-dump FILE --trcidr0 X --trcidr2 X --trcidr8 X --trcdevarch X --trcconfigr X\n"
    "                [--trcidr1 X] [--json]\n"
    "       ete-dump FILE --etmv4 [--m-profile] --trcidr0 X --trcidr1 X --trcidr2 X --trcidr8 X\n"
    "                --trcconfigr X [--json]\n"
    "       ete-dump FILE --formatted frames|tpiu|dstream [--id ID] REGISTERS... [--json]\n"
    "       ete-dump [--json]\n"
    "\n"
    "Prints every packet and every decode error of Arm ETE or ETMv4 trace.\n"
    "\n"
    "  --snapshot DIR   decode each buffer of an OpenCSD snapshot as its own session: a raw\n"
    "                   buffer (format=source_data) with its source's [regs]; a CoreSight\n"
    "                   formatted one (format=coresight, dstream_coresight) split by trace ID,\n"
    "                   each source with its own [regs], lines tagged \"ID:<hex>;\" (JSON \"id\")\n"
    "  --id ID          with --snapshot or --formatted: only the source with trace ID ID\n"
    "                   (TRCTRACEIDR)\n"
    "  FILE             decode one raw trace file as session 0; the register values\n"
    "                   (hex with 0x, or decimal) describe the trace unit that wrote it\n"
    "  --etmv4          FILE is ETMv4 trace (ETE's predecessor): the version\n"
    "                   comes from TRCIDR1, TRCDEVARCH is not used\n"
    "  --m-profile      with --etmv4: the traced PE is M-profile (Armv8-M Function Return)\n"
    "  --formatted F    FILE is a CoreSight formatted capture: frames (16-byte frames from the\n"
    "                   first byte: ETB/ETF/ETR buffers, perf's cs_etm AUX data), tpiu (a TPIU\n"
    "                   port stream with FSYNC/HSYNC) or dstream (DSTREAM: 512-byte blocks);\n"
    "                   every trace ID in it (or --id's) is decoded with the same registers,\n"
    "                   lines tagged \"ID:<hex>;\" (JSON \"id\"). Without --id, FILE must be a\n"
    "                   regular file: it is read twice, first for its trace IDs\n"
    "  (no input)       encode a small demonstration trace and decode it\n"
    "  --json           JSON Lines output: one object per packet or error\n"
    "  --elements       print the resolved element stream (speculation and transactions\n"
    "                   resolved, D9.3/D9.4) instead of packets\n"
    "  --atom-runs      with --elements: one Atom element per atom packet (\"taken\": \"EEN\")\n"
    "  --flow           print the program flow (D9.5): instruction ranges, exceptions, context,\n"
    "                   ... reconstructed from the trace and a memory image (a snapshot's\n"
    "                   [dumpN] sections, or --memory/--elf)\n"
    "  --opencsd        with --flow: OpenCSD 1.8.0's trc_pkt_lister -decode element lines\n"
    "  --memory FILE@ADDR  with --flow: FILE's bytes at address ADDR (repeatable)\n"
    "  --elf FILE[@ADDR]   with --flow: an ELF file's PT_LOAD segments at their link\n"
    "                   addresses, or with the lowest at ADDR (repeatable)\n"
    "  --arch VERSION   with --flow: the architecture whose encodings exist: v8.0 ... v8.9,\n"
    "                   v9.0 ... v9.6, newest (default: a snapshot's core type, else newest)\n"
    "  --trctraceidr X  with --flow --opencsd on a FILE: the trace ID printed (ID:)\n"
    "  --help           this text\n"
    "\n"
    "Input is decoded in 64 KiB chunks as it is read: an endless FILE decodes until it ends.\n"
    "Exit status: 0 success (decode errors are printed), 1 I/O error (input or output),\n"
    "2 usage error or invalid trace unit configuration.\n";


std::string hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%lx", static_cast<unsigned long>(v));
  return buf;
}

std::string describe(const ete::registers& r) {
  return "TRCIDR0=" + hex32(r.trcidr0) + " TRCIDR1=" + hex32(r.trcidr1) + " TRCIDR2=" +
         hex32(r.trcidr2) + " TRCIDR8=" + hex32(r.trcidr8) + " TRCDEVARCH=" +
         hex32(r.trcdevarch) + " TRCCONFIGR=" + hex32(r.trcconfigr);
}

bool g_elements = false;  // --elements: print the resolved element stream instead of packets
bool g_atom_runs = false; // --atom-runs: atom runs instead of one element per atom
bool g_flow = false;      // --flow: program flow
bool g_opencsd = false;   // --opencsd: OpenCSD's element lines
int g_only_id = -1;       // --id: the one trace ID of a formatted buffer to decode

// What --flow decodes with: the program image and how to print.
struct flow_setup {
  ete::program_image image;
  ete::flow_options options;
  unsigned trace_id = 0;
};
flow_setup g_flow_setup;
bool g_arch_given = false;

// --memory FILE@ADDR and --elf FILE[@ADDR]: the raw-file program image, owned here.
struct memory_option {
  std::string file;
  std::uint64_t address = 0;
  bool has_address = false;
  bool elf = false;
};
std::vector<memory_option> g_memory;
std::vector<std::vector<std::uint8_t>> g_memory_bytes;
std::vector<tracecodec::elf::loaded> g_elves;
std::vector<ete::memory_region> g_regions;

// "FILE@ADDR" -> file and address (the last '@' splits: a file name may hold one).
bool parse_memory(std::string_view v, bool elf, memory_option& out) {
  const std::size_t at = v.rfind('@');
  out.elf = elf;
  out.file = std::string(v.substr(0, at));
  if (at == std::string_view::npos) return elf && !out.file.empty();
  const std::string a(v.substr(at + 1));
  char* end = nullptr;
  errno = 0;
  out.address = std::strtoull(a.c_str(), &end, 0);
  out.has_address = true;
  return !out.file.empty() && !a.empty() && *end == '\0' && errno == 0 && a[0] != '-';
}

// Reads every --memory and --elf file; "" or why not.
std::string load_memory() {
  for (const memory_option& m : g_memory) {
    if (m.elf) {
      tracecodec::elf::load_options o;
      if (m.has_address) o.load_address = m.address;
      tracecodec::elf::loaded e = tracecodec::elf::load(m.file, o);
      if (!e.error.empty()) return m.file + ": " + e.error;
      g_elves.push_back(std::move(e));
      continue;
    }
    std::vector<std::uint8_t> bytes;
    const std::string why = ete::snapshot::read_bytes(m.file, bytes);
    if (!why.empty()) return "cannot read " + m.file + ": " + why;
    g_memory_bytes.push_back(std::move(bytes));
  }
  std::size_t raw = 0, elf = 0;
  for (const memory_option& m : g_memory) {
    if (m.elf) {
      for (const ete::memory_region& r : g_elves[elf].regions) g_regions.push_back(r);
      ++elf;
    } else {
      const std::vector<std::uint8_t>& b = g_memory_bytes[raw++];
      g_regions.push_back({m.address, b.data(), b.size(), ete::memory_space::any});
    }
  }
  g_flow_setup.image = ete::program_image(g_regions.data(), g_regions.size());
  return {};
}

// --arch: "v8.0" ... "v9.6", "v7", "newest".
bool parse_arch(std::string_view v, tracecodec::arm::arch_version& out) {
  using tracecodec::arm::arch_version;
  struct name {
    const char* text;
    arch_version arch;
  };
  static constexpr name names[] = {
      {"v7", arch_version::v7},     {"v8.0", arch_version::v8_0}, {"v8.1", arch_version::v8_1},
      {"v8.2", arch_version::v8_2}, {"v8.3", arch_version::v8_3}, {"v8.4", arch_version::v8_4},
      {"v8.5", arch_version::v8_5}, {"v8.6", arch_version::v8_6}, {"v8.7", arch_version::v8_7},
      {"v8.8", arch_version::v8_8}, {"v8.9", arch_version::v8_9}, {"v9.0", arch_version::v9_0},
      {"v9.1", arch_version::v9_1}, {"v9.2", arch_version::v9_2}, {"v9.3", arch_version::v9_3},
      {"v9.4", arch_version::v9_4}, {"v9.5", arch_version::v9_5}, {"v9.6", arch_version::v9_6},
      {"newest", arch_version::newest}};
  for (const name& n : names)
    if (v == n.text) {
      out = n.arch;
      return true;
    }
  return false;
}

// Prints flow elements; OpenCSD prints the events of one Event packet as one element.
class flow_printer {
 public:
  // tagged: the session is one source of a formatted buffer, its text and JSON show the ID.
  flow_printer(std::size_t session, bool json, const ete::config& c, unsigned trace_id,
               bool tagged = false)
      : session_(session), json_(json), config_(c), style_(ete::opencsd_style::of(c, trace_id)),
        id_(tagged ? static_cast<int>(trace_id) : -1) {}
  ~flow_printer() { flush(); }
  void operator()(const ete::flow_element& f) {
    if (g_opencsd && f.kind == ete::flow_kind::event) {
      if (event_bits_ != 0 && f.offset != event_.offset) flush();
      if (event_bits_ == 0) event_ = f;
      event_bits_ |= 1u << f.number;
      return;
    }
    flush();
    put(f, 0);
  }
  void flush() {
    if (event_bits_ == 0) return;
    put(event_, event_bits_);
    event_bits_ = 0;
  }

 private:
  void put(const ete::flow_element& f, unsigned bits) {
    if (g_opencsd)
      put_line(ete::format_opencsd(f, style_, bits));
    else
      put_line(json_ ? ete::format_json(f, session_, config_, id_) : ete::format_text(f, config_, id_));
  }
  std::size_t session_;
  bool json_;
  ete::config config_;  // names the exceptions (ETE or ETMv4, A or M profile)
  ete::opencsd_style style_;
  int id_;
  ete::flow_element event_{};
  unsigned event_bits_ = 0;
};

// Output lines for a packet, an element or a diagnostic of session `session`.
// id >= 0: the trace ID of a formatted buffer's source.
void print_packet(const ete::packet& p, std::size_t session, const std::uint8_t* bytes, bool json,
                  int id = -1) {
  put_line(json ? ete::format_json(p, session, bytes, id) : ete::format_text(p, bytes, id));
}
void print_diagnostic(const ete::diagnostic& d, std::size_t session, bool json, int id = -1) {
  put_line(json ? ete::format_json(d, session, id) : ete::format_text(d, id));
}

// Decodes one buffer held in memory as one trace session (the demonstration's elements).
ete::decoder_stats decode_elements(const std::uint8_t* data, std::size_t size,
                                   const ete::registers& regs, std::size_t session, bool json) {
  auto reader = std::make_unique<ete::element_reader<ete::runtime_config>>(regs);
  reader->atom_runs(g_atom_runs);
  reader->decode(
      data, size,
      [&](const ete::element& e) { put_line(json ? ete::format_json(e, session) : ete::format_text(e)); },
      [&](const ete::diagnostic& d) { print_diagnostic(d, session, json); });
  if (!json && reader->resolution().unresolved())
    put_line("# " + std::to_string(reader->resolution().unresolved()) +
             " speculative P0 elements still unresolved at the end of the trace");
  return reader->packets().stats();
}

bool output_failed() { return std::ferror(stdout) != 0; }

// id >= 0: the summary of one source of a formatted buffer.
void print_summary(std::size_t session, const ete::decoder_stats& st, int id = -1) {
  char buf[192];
  char source[16] = "";
  if (id >= 0) std::snprintf(source, sizeof source, ", trace ID 0x%x", static_cast<unsigned>(id));
  std::snprintf(buf, sizeof buf, "# end of session %zu%s: %llu packets, %llu errors, %llu bytes skipped",
                session, source, static_cast<unsigned long long>(st.packets),
                static_cast<unsigned long long>(st.errors),
                static_cast<unsigned long long>(st.bytes_skipped));
  put_line(buf);
}

int finish_output(int status) { return tools::finish_output("ete-dump", status); }

// Reads a file in chunks and decodes it as one trace session, printing as it goes.
//
// The formatter prints each packet's raw bytes, but a packet may begin in an earlier chunk
// (the decoder carries its first bytes over). So each chunk is read in behind the last
// `tail_size` bytes of the ones before it: every packet but an A-Sync (at most
// ete::max_packet_size bytes) lies inside that window. The formatter never reads an A-Sync's
// bytes (zeros, then 0x80: it rebuilds them from the size), whose zero run has no bound.
class session_reader {
 public:
  enum class result { ok, read_error, write_error };

  session_reader(const ete::registers& regs, std::size_t session, bool json)
      : regs_(regs), session_(session), json_(json) {}

  // Reads the first chunk, so that a file that cannot be read fails before any output.
  // False on a read error (read_errno() says why).
  bool read_first(std::FILE* f) { return read_chunk(f); }

  // Decodes the chunk read_first() read and everything after it in f.
  result run(std::FILE* f) {
    std::unique_ptr<ete::decoder<ete::runtime_config>> dec;
    std::unique_ptr<ete::element_reader<ete::runtime_config>> reader;
    std::unique_ptr<ete::flow_decoder<ete::runtime_config>> flow;
    std::unique_ptr<flow_printer> printer;
    if (g_flow) {  // ... and the analysis stage (D9.5) with the program image
      flow = std::make_unique<ete::flow_decoder<ete::runtime_config>>(regs_, g_flow_setup.image,
                                                                       g_flow_setup.options);
      if (session_ != 0) flow->reset();  // OpenCSD: the decoder restarts for each buffer
      printer = std::make_unique<flow_printer>(session_, json_, ete::config::from(regs_),
                                               g_flow_setup.trace_id);
    } else if (g_elements) {  // packets -> elements (D9.2) -> speculation resolved (D9.3, D9.4)
      reader = std::make_unique<ete::element_reader<ete::runtime_config>>(regs_);
      reader->atom_runs(g_atom_runs);
    } else {
      dec = std::make_unique<ete::decoder<ete::runtime_config>>(regs_);
    }
    auto on_packet = [&](const ete::packet& p) { print_packet(p, session_, bytes_of(p), json_); };
    auto on_element = [&](const ete::element& e) {
      put_line(json_ ? ete::format_json(e, session_) : ete::format_text(e));
    };
    auto on_error = [&](const ete::diagnostic& d) {
      if (printer) printer->flush();
      if (!g_opencsd) print_diagnostic(d, session_, json_);
    };
    auto on_flow = [&](const ete::flow_element& e) { (*printer)(e); };

    while (chunk_ != 0) {
      if (flow)
        flow->decode_part(window_.data() + tail_, chunk_, on_flow, on_error);
      else if (reader)
        reader->decode_part(window_.data() + tail_, chunk_, on_element, on_error);
      else
        dec->decode_part(window_.data() + tail_, chunk_, on_packet, on_error);
      keep_tail();
      // A write error (a full disk, say) ends the decode: an endless input never would.
      if (output_failed()) return result::write_error;
      if (!read_chunk(f)) return result::read_error;
    }
    if (flow) {
      flow->decode_end(on_flow, on_error);
      printer->flush();
      stats_ = flow->elements().packets().stats();
    } else if (reader) {
      reader->decode_end(on_element, on_error);
      stats_ = reader->packets().stats();
      if (!json_ && reader->resolution().unresolved())
        put_line("# " + std::to_string(reader->resolution().unresolved()) +
                 " speculative P0 elements still unresolved at the end of the trace");
    } else {
      dec->decode_end(on_packet, on_error);
      stats_ = dec->stats();
    }
    return output_failed() ? result::write_error : result::ok;
  }

  const ete::decoder_stats& stats() const { return stats_; }
  int read_errno() const { return read_errno_; }

 private:
  static constexpr std::size_t chunk_size = 65536;
  static constexpr std::size_t tail_size = 64;
  static_assert(tail_size >= ete::max_packet_size, "a packet must fit in the tail");

  // Reads the next chunk behind the tail; chunk_ = 0 at the end of the file. False on error.
  bool read_chunk(std::FILE* f) {
    errno = 0;
    chunk_ = std::fread(window_.data() + tail_, 1, chunk_size, f);
    read_errno_ = errno;
    return chunk_ != 0 || !std::ferror(f);
  }

  // After decoding a chunk: its last bytes (with the tail's) become the tail of the next.
  void keep_tail() {
    const std::size_t have = tail_ + chunk_;
    const std::size_t keep = have < tail_size ? have : tail_size;
    std::memmove(window_.data(), window_.data() + have - keep, keep);
    pos_ += chunk_;
    tail_ = keep;
    chunk_ = 0;
  }

  // The raw bytes of p, which the decoder has just completed: in the window (the tail and the
  // chunk being decoded). Null for an A-Sync longer than that, which needs none.
  const std::uint8_t* bytes_of(const ete::packet& p) const {
    const std::uint64_t start = pos_ - tail_;  // session offset of window_[0]
    const std::uint64_t end = pos_ + chunk_;   // one past the chunk being decoded
    if (p.offset >= start && p.offset <= end && p.size <= end - p.offset)
      return window_.data() + (p.offset - start);
    return nullptr;
  }

  ete::registers regs_;
  std::size_t session_;
  bool json_;
  std::vector<std::uint8_t> window_ = std::vector<std::uint8_t>(tail_size + chunk_size);
  std::size_t tail_ = 0;   // bytes of earlier chunks at the front of window_
  std::size_t chunk_ = 0;  // bytes of the chunk behind them
  std::uint64_t pos_ = 0;  // session offset of the chunk at window_[tail_]
  int read_errno_ = 0;
  ete::decoder_stats stats_{};
};

// "N bytes" for a regular file; a device or a pipe has no size until it ends.
std::string size_text(const std::string& path) {
  const std::int64_t n = ete::snapshot::regular_file_size(path);
  return n >= 0 ? std::to_string(n) + " bytes" : "size unknown (not a regular file)";
}

// Decodes the file at `path` as session `session`. `header` is printed (text output) once the
// first chunk has been read, so that a file that cannot be read fails before it. `what` names
// the file in messages. Returns exit_ok or exit_io.
int stream_session(const std::string& path, const char* what, const std::string& header,
                   const ete::registers& regs, std::size_t session, bool json) {
  errno = 0;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    std::fprintf(stderr, "ete-dump: cannot read %s%s: %s\n", what, path.c_str(), ete::snapshot::errno_reason(errno).c_str());
    return exit_io;
  }
  session_reader r(regs, session, json);
  session_reader::result res = session_reader::result::read_error;
  if (r.read_first(f)) {  // EISDIR for a directory
    if (!json && !header.empty()) put_line(header);
    res = r.run(f);
  }
  std::fclose(f);
  if (res == session_reader::result::read_error) {
    std::fprintf(stderr, "ete-dump: cannot read %s%s: %s\n", what, path.c_str(),
                 ete::snapshot::errno_reason(r.read_errno()).c_str());
    return exit_io;
  }
  if (res == session_reader::result::write_error) return exit_io;  // finish_output says so
  if (!json && !g_opencsd) print_summary(session, r.stats());
  return exit_ok;
}

// Why these registers cannot be decoded as asked, or "": registers no ETE unit has, or (with
// --elements) a MAXSPEC beyond what the run-time element reader resolves. MAXSPEC may be any
// 32-bit value (D6.7 I_RKYCD), and the packet decoder takes every one; the resolver holds
// MAXSPEC uncommitted P0 elements in a fixed queue, so it is refused here, before any output,
// rather than reported as the session's only diagnostic.
std::string config_error(const ete::registers& regs) {
  using reader = ete::element_reader<ete::runtime_config>;
  const ete::error_code valid =
      g_elements || g_flow ? reader::status_for(regs) : ete::validate(regs);
  if (valid == ete::error_code::unsupported_config)
    return "TRCIDR8.MAXSPEC " + std::to_string(ete::config::from(regs).maxspec) +
           " is more than " + (g_flow ? "--flow" : "--elements") + " resolves (at most " +
           std::to_string(reader::max_maxspec) +
           "; packets decode for every MAXSPEC)";
  return valid != ete::error_code::ok ? ete::error_message(valid) : std::string();
}

// ---- CoreSight formatted buffers ---------------------------------------------------------
// The buffer's frames are split by trace ID in a coresight::decode_tree, each decodable source
// (or only --id's) with its own decoder; every line shows its source's ID. Read in 64 KiB
// chunks like a raw buffer.

// Packet bytes of a source come from the tree, which holds them while it delivers the packet.
template <class Tree>
const std::uint8_t* packet_bytes(const Tree& tree, const tracecodec::coresight::item_origin& o,
                                 const ete::packet& p, std::uint8_t (&buf)[ete::max_packet_size]) {
  if (p.kind == ete::packet_kind::async || p.size > sizeof buf) return nullptr;  // not read
  return tree.stream_bytes(o.id, o.stream_offset, p.size, buf) ? buf : nullptr;
}

const ete::decoder_stats& stats_of(const ete::decoder<ete::runtime_config>& d) { return d.stats(); }
const ete::decoder_stats& stats_of(const ete::element_reader<ete::runtime_config>& r) {
  return r.packets().stats();
}
const ete::decoder_stats& stats_of(const ete::flow_decoder<ete::runtime_config>& f) {
  return f.elements().packets().stats();
}

constexpr std::size_t max_formatted_sources = 64;

// Reads f (the capture at `path`) in 64 KiB chunks, a multiple of 16 and of 512 so that
// frames stay whole, passing each to feed(bytes, n), which returns false to stop (exit_io: its
// output failed). exit_ok at the end of f, exit_io (said on stderr) when f cannot be read.
template <class Feed>
int read_capture(std::FILE* f, const std::string& path, Feed&& feed) {
  std::vector<std::uint8_t> chunk(65536);
  for (;;) {
    errno = 0;
    const std::size_t n = std::fread(chunk.data(), 1, chunk.size(), f);
    if (n == 0) {
      if (!std::ferror(f)) return exit_ok;
      std::fprintf(stderr, "ete-dump: cannot read trace buffer %s: %s\n", path.c_str(),
                   ete::snapshot::errno_reason(errno).c_str());
      return exit_io;
    }
    if (!feed(chunk.data(), n)) return exit_io;
  }
}

// Decodes the formatted buffer b (its file already opened as f) with one Decoder per source.
template <class Decoder>
int decode_formatted(std::FILE* f, const ete::snapshot::buffer& b, tracecodec::coresight::frame_format form,
                     const std::vector<const ete::snapshot::trace_source*>& sources,
                     std::size_t session, bool json) {
  namespace cs = tracecodec::coresight;
  using tree_t = cs::decode_tree<Decoder, max_formatted_sources>;
  auto tree = std::make_unique<tree_t>(form);
  std::vector<std::unique_ptr<Decoder>> decoders;
  std::vector<std::unique_ptr<flow_printer>> printers(128);
  for (const ete::snapshot::trace_source* t : sources) {
    const auto id = static_cast<std::uint8_t>(t->trctraceidr);
    if constexpr (std::is_same_v<Decoder, ete::flow_decoder<ete::runtime_config>>) {
      decoders.push_back(std::make_unique<Decoder>(t->regs, g_flow_setup.image, g_flow_setup.options));
      printers[id] = std::make_unique<flow_printer>(session, json, ete::config::from(t->regs), id, true);
    } else {
      decoders.push_back(std::make_unique<Decoder>(t->regs));
      if constexpr (std::is_same_v<Decoder, ete::element_reader<ete::runtime_config>>)
        decoders.back()->atom_runs(g_atom_runs);
    }
    tree->add_source(id, *decoders.back());  // IDs checked valid and distinct by the caller
  }
  auto on_item = [&](const cs::item_origin& o, const auto& x) {
    using item = std::remove_cvref_t<decltype(x)>;
    if constexpr (std::is_same_v<item, ete::packet>) {
      std::uint8_t buf[ete::max_packet_size];
      print_packet(x, session, packet_bytes(*tree, o, x, buf), json, o.id);
    } else if constexpr (std::is_same_v<item, ete::element>) {
      put_line(json ? ete::format_json(x, session, o.id) : ete::format_text(x, o.id));
    } else if (g_opencsd) {  // OpenCSD's Idx: its deformatter's numbering of the capture
      item y = x;
      y.offset = tree->opencsd_index(o.id, o.stream_offset);
      (*printers[o.id])(y);
    } else {
      (*printers[o.id])(x);
    }
  };
  auto on_error = [&](const cs::item_origin& o, const ete::diagnostic& d) {
    if (printers[o.id]) printers[o.id]->flush();
    if (!g_opencsd) print_diagnostic(d, session, json, o.id);
  };
  auto on_frame_error = [&](const cs::diagnostic& d) {
    if (g_opencsd || (g_only_id >= 0 && d.code == cs::error_code::unrouted_data)) return;
    const int id = d.code == cs::error_code::unrouted_data ? tree->unrouted_id() : -1;
    put_line(json ? cs::format_json(d, session, id) : cs::format_text(d, id));
  };
  const int read = read_capture(f, b.path, [&](const std::uint8_t* data, std::size_t n) {
    tree->decode_part(data, n, on_item, on_error, on_frame_error);
    return !output_failed();
  });
  if (read != exit_ok) return read;
  tree->decode_end(on_item, on_error, on_frame_error);
  for (auto& pr : printers)
    if (pr) pr->flush();
  if (output_failed()) return exit_io;
  if (!json && !g_opencsd)
    for (std::size_t i = 0; i < tree->size(); ++i) print_summary(session, stats_of(*decoders[i]), tree->id_at(i));
  return exit_ok;
}

// A formatted buffer as session `session`: its decodable sources (or --id's), each with its
// registers and trace ID. exit_ok, exit_io, or exit_usage when --id names no source of it.
int stream_formatted(const ete::snapshot::buffer& b, tracecodec::coresight::frame_format form,
                     std::size_t session, bool json, const std::string& header) {
  std::vector<const ete::snapshot::trace_source*> sources;
  std::vector<bool> seen(128, false);
  for (const ete::snapshot::trace_source& t : b.sources) {
    if (!t.decodable || (g_only_id >= 0 && t.trctraceidr != static_cast<std::uint32_t>(g_only_id))) continue;
    if (!tracecodec::coresight::valid_trace_id(static_cast<std::uint8_t>(t.trctraceidr)) ||
        t.trctraceidr > 0x7f) {
      std::fprintf(stderr, "ete-dump: buffer %s: source %s has trace ID %s, which no source can have\n",
                   b.name.c_str(), t.name.c_str(), hex32(t.trctraceidr).c_str());
      return exit_usage;
    }
    if (seen[t.trctraceidr]) {
      std::fprintf(stderr, "ete-dump: buffer %s: two sources have trace ID %s\n", b.name.c_str(),
                   hex32(t.trctraceidr).c_str());
      return exit_usage;
    }
    seen[t.trctraceidr] = true;
    if (sources.size() == max_formatted_sources) {
      std::fprintf(stderr, "ete-dump: buffer %s: more than %zu sources\n", b.name.c_str(),
                   max_formatted_sources);
      return exit_usage;
    }
    sources.push_back(&t);
  }
  errno = 0;
  std::FILE* f = std::fopen(b.path.c_str(), "rb");
  if (f == nullptr) {
    std::fprintf(stderr, "ete-dump: cannot read trace buffer %s: %s\n", b.path.c_str(),
                 ete::snapshot::errno_reason(errno).c_str());
    return exit_io;
  }
  if (!json && !header.empty()) {
    put_line(header);
    if (!g_opencsd)
      for (const ete::snapshot::trace_source* t : sources)
        put_line("# session " + std::to_string(session) + ", trace ID " + hex32(t->trctraceidr) +
                 ": " + t->name + (t->core_name.empty() ? "" : " (" + t->core_name + ")") + ", " +
                 describe(t->regs));
  }
  int status = exit_ok;
  if (g_flow)
    status = decode_formatted<ete::flow_decoder<ete::runtime_config>>(f, b, form, sources, session, json);
  else if (g_elements)
    status = decode_formatted<ete::element_reader<ete::runtime_config>>(f, b, form, sources, session, json);
  else
    status = decode_formatted<ete::decoder<ete::runtime_config>>(f, b, form, sources, session, json);
  std::fclose(f);
  return status;
}

// --snapshot DIR
int run_snapshot(const std::string& dir, bool json) {
  ete::snapshot::load_options opt;
  opt.read_data = false;  // each buffer is streamed from its file
  opt.read_memory = g_flow;
  opt.skip_missing_dumps = true;  // as OpenCSD: decode with the dumps that exist
  const ete::snapshot::loaded snap = ete::snapshot::load(dir, opt);
  if (!snap.error.empty()) {
    std::fprintf(stderr, "ete-dump: %s\n", snap.error.c_str());
    return exit_io;
  }
  if (g_flow) {
    if (!snap.memory_error.empty())  // decode anyway: every access is then "not accessible"
      std::fprintf(stderr, "ete-dump: warning: no memory image: %s\n", snap.memory_error.c_str());
    for (const std::string& m : snap.missing_dumps)
      std::fprintf(stderr, "ete-dump: warning: memory dump %s not found: left out\n", m.c_str());
    g_flow_setup.image = ete::program_image(snap.regions.data(), snap.regions.size());
    if (!g_arch_given) g_flow_setup.options.arch = snap.arch;
  }
  int status = exit_ok;
  bool id_found = g_only_id < 0;
  for (const ete::snapshot::buffer& b : snap.buffers) {
    const bool formatted = b.format != ete::snapshot::buffer_format::source_data;
    if (!formatted && g_only_id >= 0)
      id_found = id_found || (b.trctraceidr == static_cast<std::uint32_t>(g_only_id) && !b.source.empty());
    for (const ete::snapshot::trace_source& t : b.sources) {
      if (!t.decodable || (!formatted && t.name != b.source)) continue;
      if (g_only_id >= 0 && t.trctraceidr != static_cast<std::uint32_t>(g_only_id)) continue;
      id_found = true;
    }
  }
  if (!id_found) {
    std::fprintf(stderr, "ete-dump: no trace source of the snapshot has trace ID %s\n",
                 hex32(static_cast<std::uint32_t>(g_only_id)).c_str());
    return exit_usage;
  }
  for (std::size_t i = 0; i < snap.buffers.size(); ++i) {
    const ete::snapshot::buffer& b = snap.buffers[i];
    const bool formatted = b.format != ete::snapshot::buffer_format::source_data;
    // --id: buffers without that source are left out (the others keep their session numbers).
    if (g_only_id >= 0 &&
        std::none_of(b.sources.begin(), b.sources.end(), [&](const ete::snapshot::trace_source& t) {
          return t.decodable && t.trctraceidr == static_cast<std::uint32_t>(g_only_id) &&
                 (formatted || t.name == b.source);
        }))
      continue;
    for (const ete::snapshot::trace_source& t : b.sources) {
      if (!t.decodable || (!formatted && t.name != b.source)) continue;
      if (g_only_id >= 0 && t.trctraceidr != static_cast<std::uint32_t>(g_only_id)) continue;
      const std::string invalid = config_error(t.regs);
      if (!invalid.empty()) {
        std::fprintf(stderr, "ete-dump: session %zu (%s, source %s): %s\n", i, b.name.c_str(),
                     t.name.c_str(), invalid.c_str());
        status = exit_usage;  // the decoder reports it too, as the session's only diagnostic
      }
    }
    std::string header = "# session " + std::to_string(i) + ": " + b.name + " (" + b.file + ")";
    if (formatted)
      header += ", " + size_text(b.path) + ", CoreSight formatted (" +
                (b.format == ete::snapshot::buffer_format::dstream_coresight ? "DSTREAM" : "frames") +
                ")";
    else
      header += " from " + b.source + ", " + size_text(b.path) + ", " + describe(b.regs);
    if (g_opencsd) {
      header = "####### Multi Session decode: Buffer " + std::to_string(i + 1) + " of " +
               std::to_string(snap.buffers.size()) + "; Source name = " + b.name + ".";
      g_flow_setup.trace_id = b.trctraceidr;
    }
    const int s = formatted ? stream_formatted(b,
                                               b.format == ete::snapshot::buffer_format::dstream_coresight
                                                   ? tracecodec::coresight::frame_format::dstream
                                                   : tracecodec::coresight::frame_format::memory_aligned,
                                               i, json, header)
                            : stream_session(b.path, "trace buffer ", header, b.regs, i, json);
    if (s != exit_ok) return finish_output(s);
  }
  return finish_output(status);
}

// exit_usage (said on stderr) when the command line's registers cannot be decoded, else exit_ok.
int refuse_config(const ete::registers& regs) {
  const std::string invalid = config_error(regs);
  if (invalid.empty()) return exit_ok;
  std::fprintf(stderr, "ete-dump: %s: %s\n", invalid.c_str(), describe(regs).c_str());
  return exit_usage;
}

// FILE --trcidr0 ...
int run_file(const std::string& path, const ete::registers& regs, bool json) {
  if (const int s = refuse_config(regs); s != exit_ok) return s;
  const std::string header =
      g_opencsd ? std::string()
                : "# session 0: " + path + ", " + size_text(path) + ", " + describe(regs);
  return finish_output(stream_session(path, "", header, regs, 0, json));
}

int usage_error(const char* fmt, const char* arg);

// FILE --formatted F: a raw formatted capture, every trace ID in it (or --id's) decoded with
// the command line's registers, as a snapshot's formatted buffer is.
int run_formatted_file(const std::string& path, tracecodec::coresight::frame_format form,
                       const char* form_name, const ete::registers& regs, bool json) {
  namespace cs = tracecodec::coresight;
  if (const int s = refuse_config(regs); s != exit_ok) return s;
  std::vector<std::uint8_t> ids;  // the trace IDs to decode
  if (g_only_id >= 0) {
    if (!cs::valid_trace_id(static_cast<std::uint8_t>(g_only_id)))
      return usage_error("%s needs a trace ID (0x01 ... 0x6f)", "--id");
    ids.push_back(static_cast<std::uint8_t>(g_only_id));
  } else {
    // The trace IDs with data: a first pass of the deformatter over the file.
    struct stat st{};
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
      return usage_error("--formatted without --id needs a regular FILE (it is read twice for "
                         "its trace IDs), not %s",
                         path.c_str());
    errno = 0;
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) {
      std::fprintf(stderr, "ete-dump: cannot read %s: %s\n", path.c_str(),
                   ete::snapshot::errno_reason(errno).c_str());
      return exit_io;
    }
    bool seen[128] = {};
    cs::deformatter d(form);
    auto on_data = [&](const cs::data_batch& b) { seen[b.id & 0x7f] = true; };
    auto on_error = [](const cs::diagnostic&) {};
    const int read = read_capture(f, path, [&](const std::uint8_t* data, std::size_t n) {
      d.decode_part(data, n, on_data, on_error);
      return true;
    });
    std::fclose(f);
    if (read != exit_ok) return read;
    d.decode_end(on_data, on_error);
    for (unsigned id = 0; id < 128; ++id)
      if (seen[id]) ids.push_back(static_cast<std::uint8_t>(id));
    if (ids.size() > max_formatted_sources) {
      std::fprintf(stderr, "ete-dump: %s: more than %zu trace IDs: choose one with --id\n",
                   path.c_str(), max_formatted_sources);
      return exit_usage;
    }
  }
  ete::snapshot::buffer b;
  b.name = b.file = b.path = path;
  b.format = form == cs::frame_format::dstream ? ete::snapshot::buffer_format::dstream_coresight
                                               : ete::snapshot::buffer_format::coresight;
  for (const std::uint8_t id : ids) {
    ete::snapshot::trace_source t;
    t.name = "registers of the command line";
    t.decodable = true;
    t.regs = regs;
    t.trctraceidr = id;
    b.sources.push_back(t);
  }
  const std::string header = g_opencsd ? std::string()
                                       : "# session 0: " + path + ", " + size_text(path) +
                                             ", CoreSight formatted (" + form_name + "), " +
                                             std::to_string(ids.size()) + " trace IDs";
  return finish_output(stream_formatted(b, form, 0, json, header));
}

// The demonstration: a short trace as an ETE 1.1 trace unit with Timestamp Markers would
// write it, produced by the library's encoder from packet values.
int run_demo(bool json) {
  constexpr ete::registers regs = ete::presets::ete_1_1_tsmark;
  ete::encoder<ete::fixed_config<regs>> enc;
  using K = ete::packet_kind;

  auto make = [](K kind) {
    ete::packet p{};
    p.kind = kind;
    return p;
  };
  std::vector<ete::packet> packets;
  packets.push_back(make(K::async));
  packets.push_back(make(K::trace_info));  // PLCTL 0: no INFO, SPEC or CYCT sections
  packets.push_back(make(K::trace_on));
  {
    ete::packet p = make(K::address_ctx_64_is0);
    p.address = 0xffff800010081000u;
    p.ctx.el = 1;
    p.ctx.sf = true;
    p.ctx.ns = true;
    packets.push_back(p);
  }
  {
    ete::packet p = make(K::atom_f1);  // E
    p.atoms = 0b1;
    p.atom_count = 1;
    packets.push_back(p);
  }
  {
    ete::packet p = make(K::atom_f3);  // E E N (oldest first)
    p.atoms = 0b011;
    p.atom_count = 3;
    packets.push_back(p);
  }
  {
    ete::packet p = make(K::atom_f6);  // E E E E E N
    p.atoms = 0b011111;
    p.atom_count = 6;
    packets.push_back(p);
  }
  {
    ete::packet p = make(K::address_short_is0);  // low bits change only
    p.address = 0xffff800010081040u;
    packets.push_back(p);
  }
  {
    ete::packet p = make(K::atom_f1);  // N
    p.atom_count = 1;
    packets.push_back(p);
  }
  {
    ete::packet p = make(K::address_exact);  // history entry 1: back to 0x...81000
    p.address = 0xffff800010081000u;
    p.index = 1;
    packets.push_back(p);
  }
  {
    ete::packet p = make(K::exception_32_is0);  // IRQ, preferred return address follows
    p.exception_type = 0x0e;
    p.exception_elements = 1;
    p.address = 0xffff800010082000u;
    packets.push_back(p);
  }
  {
    ete::packet p = make(K::context);  // EL0, with CONTEXTIDR and VMID
    p.ctx.el = 0;
    p.ctx.sf = true;
    p.ctx.ns = true;
    p.ctx.context_id = 0x1234;
    p.ctx.vmid = 0x5;
    p.flags = ete::packet_flag::has_context_id | ete::packet_flag::has_vmid;
    packets.push_back(p);
  }
  {
    ete::packet p = make(K::address_64_is0);
    p.address = 0x0000aaaad0001230u;
    packets.push_back(p);
  }
  {
    ete::packet p = make(K::atom_f2);  // N E
    p.atoms = 0b10;
    p.atom_count = 2;
    packets.push_back(p);
  }
  {
    ete::packet p = make(K::timestamp);
    p.timestamp = 0x1234567;
    packets.push_back(p);
  }
  packets.push_back(make(K::timestamp_marker));
  if (enc.cfg().numevent >= 1) {
    ete::packet p = make(K::event);  // ETEEvent 0
    p.events = 0b0001;
    packets.push_back(p);
  }

  std::vector<std::uint8_t> trace;
  for (const ete::packet& p : packets) {
    std::uint8_t buf[64];
    const ete::encode_result r = enc.encode(p, buf, sizeof buf);
    if (!r) {
      std::fprintf(stderr, "ete-dump: cannot encode the demonstration %s packet: %s (%s)\n",
                   ete::kind_name(p.kind), ete::error_name(r.error), ete::error_message(r.error));
      return exit_io;
    }
    trace.insert(trace.end(), buf, buf + r.size);
  }

  if (!json)
    put_line("# demonstration trace generated by tracecodec's encoder (" +
             std::to_string(trace.size()) + " bytes), " + describe(regs));

  if (g_elements) {  // the demonstration trace as resolved elements
    decode_elements(trace.data(), trace.size(), regs, 0, json);
    return finish_output(0);
  }
  // Decode and print, checking that what comes back is what went in.
  ete::decoder<ete::runtime_config> dec(regs);
  std::size_t index = 0;
  bool mismatch = false;
  dec.decode(
      trace.data(), trace.size(),
      [&](const ete::packet& p) {
        const bool inside = p.offset <= trace.size() && p.size <= trace.size() - p.offset;
        const std::uint8_t* bytes = inside ? trace.data() + p.offset : nullptr;
        put_line(json ? ete::format_json(p, 0, bytes) : ete::format_text(p, bytes));
        if (index < packets.size()) {
          const ete::packet& want = packets[index];
          const bool same =
              p.kind == want.kind && p.atoms == want.atoms && p.atom_count == want.atom_count &&
              (!ete::has_address(p.kind) || p.address == want.address) &&
              (!ete::has_context(p.kind) || p.ctx == want.ctx) &&
              (p.kind != K::timestamp || p.timestamp == want.timestamp) &&
              (!ete::is_exception(p.kind) ||
               (p.exception_type == want.exception_type && p.exception_elements == want.exception_elements)) &&
              p.events == want.events;
          if (!same) {
            std::fprintf(stderr, "ete-dump: demonstration packet %zu (%s) decoded differently\n",
                         index, ete::kind_name(want.kind));
            mismatch = true;
          }
        }
        ++index;
      },
      [&](const ete::diagnostic& d) {
        put_line(json ? ete::format_json(d, 0) : ete::format_text(d));
        mismatch = true;
      });
  if (index != packets.size()) {
    std::fprintf(stderr, "ete-dump: encoded %zu demonstration packets but decoded %zu\n",
                 packets.size(), index);
    mismatch = true;
  }
  return finish_output(mismatch ? exit_io : exit_ok);
}

int usage_error(const char* fmt, const char* arg) {
  char message[256];
  std::snprintf(message, sizeof message, fmt, arg);
  return tools::usage_error("ete-dump", message);
}

}  // namespace

static int run_main(int argc, char** argv) {
  bool json = false;
  std::string snapshot_dir, file;
  bool have_snapshot = false, have_file = false;
  struct reg_option {
    const char* name;
    std::uint32_t ete::registers::*field;
    bool required;
    bool seen;
  };
  reg_option regs_opts[] = {
      {"--trcidr0", &ete::registers::trcidr0, true, false},
      {"--trcidr1", &ete::registers::trcidr1, false, false},
      {"--trcidr2", &ete::registers::trcidr2, true, false},
      {"--trcidr8", &ete::registers::trcidr8, true, false},
      {"--trcdevarch", &ete::registers::trcdevarch, true, false},
      {"--trcconfigr", &ete::registers::trcconfigr, true, false},
  };
  ete::registers regs{};
  bool any_reg = false;
  const char* formatted = nullptr;  // --formatted: frames, tpiu or dstream
  tracecodec::coresight::frame_format form = tracecodec::coresight::frame_format::memory_aligned;

  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(usage_text, stdout);
      return finish_output(exit_ok);
    }
    if (arg == "--elements") {
      g_elements = true;
      continue;
    }
    if (arg == "--etmv4") {
      regs.proto = ete::protocol::etmv4;
      any_reg = true;
      continue;
    }
    if (arg == "--m-profile") {
      regs.profile = ete::pe_profile::m;
      any_reg = true;
      continue;
    }
    if (arg == "--atom-runs") {
      g_atom_runs = true;
      continue;
    }
    if (arg == "--flow") {
      g_flow = true;
      continue;
    }
    if (arg == "--opencsd") {
      g_opencsd = true;
      continue;
    }
    if (arg == "--json") {
      json = true;
      continue;
    }
    // Options with a value: "--opt VALUE" or "--opt=VALUE".
    std::string_view name = arg, value;
    bool inline_value = false;
    if (arg.size() > 2 && arg.substr(0, 2) == "--") {
      const std::size_t eq = arg.find('=');
      if (eq != std::string_view::npos) {
        name = arg.substr(0, eq);
        value = arg.substr(eq + 1);
        inline_value = true;
      }
    }
    auto take_value = [&]() -> bool {
      if (inline_value) return true;
      if (i + 1 >= argc) return false;
      value = argv[++i];
      return true;
    };
    if (name == "--snapshot") {
      if (!take_value()) return usage_error("%s needs a directory", "--snapshot");
      if (have_snapshot) return usage_error("%s given twice", "--snapshot");
      snapshot_dir = std::string(value);
      have_snapshot = true;
      continue;
    }
    if (name == "--memory" || name == "--elf") {
      const bool elf = name == "--elf";
      if (!take_value()) return usage_error("%s needs FILE@ADDR", elf ? "--elf" : "--memory");
      memory_option m;
      if (!parse_memory(value, elf, m))
        return usage_error(elf ? "bad %s value (FILE or FILE@ADDR)" : "bad %s value (FILE@ADDR)",
                           elf ? "--elf" : "--memory");
      g_memory.push_back(std::move(m));
      continue;
    }
    if (name == "--arch") {
      if (!take_value() || !parse_arch(value, g_flow_setup.options.arch))
        return usage_error("%s needs v7, v8.0 ... v8.9, v9.0 ... v9.6 or newest", "--arch");
      g_arch_given = true;
      continue;
    }
    if (name == "--id") {
      std::uint32_t v = 0;
      if (!take_value() || !ete::snapshot::parse_u32(value, v) || v > 0x7f)
        return usage_error("%s needs a trace ID (0x01 ... 0x6f)", "--id");
      g_only_id = static_cast<int>(v);
      continue;
    }
    if (name == "--formatted") {
      if (!take_value()) return usage_error("%s needs frames, tpiu or dstream", "--formatted");
      if (formatted) return usage_error("%s given twice", "--formatted");
      namespace cs = tracecodec::coresight;
      if (value == "frames") form = cs::frame_format::memory_aligned, formatted = "frames";
      else if (value == "tpiu") form = cs::frame_format::tpiu, formatted = "TPIU";
      else if (value == "dstream") form = cs::frame_format::dstream, formatted = "DSTREAM";
      else return usage_error("%s needs frames, tpiu or dstream", "--formatted");
      continue;
    }
    if (name == "--trctraceidr") {
      std::uint32_t v = 0;
      if (!take_value() || !ete::snapshot::parse_u32(value, v))
        return usage_error("%s needs a value", "--trctraceidr");
      g_flow_setup.trace_id = v;
      continue;
    }
    bool matched = false;
    for (reg_option& o : regs_opts) {
      if (name != o.name) continue;
      matched = true;
      if (!take_value()) return usage_error("%s needs a value", o.name);
      if (o.seen) return usage_error("%s given twice", o.name);  // not silently the last one
      std::uint32_t v = 0;
      if (!ete::snapshot::parse_u32(value, v))
        return usage_error("bad register value for %s (use 0x-prefixed hex or decimal)", o.name);
      regs.*(o.field) = v;
      o.seen = true;
      any_reg = true;
    }
    if (matched) continue;
    if (arg.size() > 1 && arg[0] == '-') return usage_error("unknown option %s", argv[i]);
    if (have_file) return usage_error("more than one trace file given (%s)", argv[i]);
    file = std::string(arg);
    have_file = true;
  }

  if (g_atom_runs && !g_elements)  // packets have no atom runs to choose: say so
    return usage_error("%s only applies with --elements", "--atom-runs");
  if (g_flow && g_elements) return usage_error("%s and --elements exclude each other", "--flow");
  if (g_opencsd && !g_flow) return usage_error("%s only applies with --flow", "--opencsd");
  if (!g_flow && (!g_memory.empty() || g_arch_given))
    return usage_error("%s only apply with --flow", "--memory, --elf and --arch");
  if (g_opencsd && json) return usage_error("%s and --json exclude each other", "--opencsd");
  if (g_only_id >= 0 && !have_snapshot && !formatted)
    return usage_error("%s only applies with --snapshot or --formatted", "--id");
  if (formatted && !have_file) return usage_error("%s needs a trace FILE", "--formatted");
  if (have_snapshot) {
    if (have_file || any_reg)
      return usage_error("%s takes no trace file or register options", "--snapshot");
    if (!g_memory.empty())
      return usage_error("%s takes its memory from the snapshot, not --memory or --elf", "--snapshot");
    return run_snapshot(snapshot_dir, json);
  }
  if (have_file) {
    const bool etm = regs.proto == ete::protocol::etmv4;
    if (regs.profile == ete::pe_profile::m && !etm)
      return usage_error("%s only applies with --etmv4", "--m-profile");
    for (const reg_option& o : regs_opts) {
      const bool required = etm ? std::string_view(o.name) != "--trcdevarch" : o.required;
      if ((required || (etm && std::string_view(o.name) == "--trcidr1")) && !o.seen)
        return usage_error("decoding a raw file needs %s", o.name);
    }
    if (g_flow) {
      const std::string why = load_memory();
      if (!why.empty()) {
        std::fprintf(stderr, "ete-dump: %s\n", why.c_str());
        return exit_io;
      }
    }
    if (formatted) return run_formatted_file(file, form, formatted, regs, json);
    return run_file(file, regs, json);
  }
  if (any_reg) return usage_error("%s", "register options need a trace FILE");
  if (g_flow) return usage_error("%s needs --snapshot DIR or a trace FILE", "--flow");
  return run_demo(json);
}

int main(int argc, char** argv) {
  try {
    return run_main(argc, argv);
  } catch (const std::bad_alloc&) {  // fail with a message, never abort
    std::fflush(stdout);
    std::fputs("ete-dump: out of memory\n", stderr);
    return exit_io;
  }
}
