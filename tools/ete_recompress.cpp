// SPDX-License-Identifier: Apache-2.0
// ete-recompress --snapshot DIR: decodes each trace buffer to resolved elements, re-encodes them
// with the element compressor, decodes the result again, and prints one JSON line per buffer:
// {"session":i,"input_bytes":N,"output_bytes":M,"elements_equal":true|false}.
//
// It needs each buffer whole in memory (with every element of it, twice), so it refuses a
// buffer larger than max_buffer_bytes instead of reading an endless one until memory runs out.
//
// Exit status: 0 every session's elements came back equal, 1 an I/O error (a snapshot or buffer
// that cannot be read or is too large, output that cannot be written), out of memory, or a
// session whose elements differ, 2 a usage error or an invalid trace unit configuration.
#include <tracecodec/ete/error.hpp>
#include <tracecodec/host/ete/recompress.hpp>
#include <tracecodec/host/ete/snapshot.hpp>

#include <cstdint>
#include <cstdio>
#include <new>
#include <string>
#include <string_view>

using namespace tracecodec::ete;

#include "cli.hpp"

namespace {

using namespace tools;  // exit codes, put_line

constexpr std::uint64_t max_buffer_bytes = std::uint64_t{256} << 20;  // 256 MiB

const char* const usage_text =
    "usage: ete-recompress --snapshot DIR [--verbose]\n"
    "\n"
    "Decodes each trace buffer of an OpenCSD snapshot (format=source_data) to resolved\n"
    "elements, re-encodes them with the element compressor, decodes the result again and\n"
    "prints one JSON line per buffer:\n"
    "  {\"session\":i,\"input_bytes\":N,\"output_bytes\":M,\"elements_equal\":true|false}\n"
    "\n"
    "  --snapshot DIR   the snapshot; each buffer is one session, at most 256 MiB\n"
    "  --verbose        on stderr, where the elements of a session differ\n"
    "  --help           this text\n"
    "\n"
    "Exit status: 0 every session's elements are equal, 1 I/O error (a buffer over 256 MiB,\n"
    "out of memory) or elements that differ, 2 usage error or invalid trace unit\n"
    "configuration.\n";

int usage_error(const std::string& message) { return tools::usage_error("ete-recompress", message); }

int finish_output(int status) { return tools::finish_output("ete-recompress", status); }

int run(const std::string& dir, bool verbose) {
  snapshot::load_options opt;
  opt.max_data_size = max_buffer_bytes;  // reads at most this + 1 bytes of a buffer
  const auto snap = snapshot::load(dir, opt);
  if (!snap.error.empty()) {
    std::fprintf(stderr, "ete-recompress: %s\n", snap.error.c_str());
    return exit_io;
  }
  int status = exit_ok;
  for (std::size_t s = 0; s < snap.buffers.size(); ++s) {
    const auto& buf = snap.buffers[s];
    if (buf.format != snapshot::buffer_format::source_data || buf.regs.proto != protocol::ete) {
      std::fprintf(stderr, "ete-recompress: session %zu (%s): only unformatted ETE buffers recompress\n",
                   s, buf.name.c_str());
      status = exit_usage;
      continue;
    }
    // Say why instead of reporting the reader's invalid_config or unsupported_config (a
    // MAXSPEC beyond its resolution queue) as elements_equal:false.
    const error_code valid = element_reader<>::status_for(buf.regs);  // recompress()'s reader
    if (valid != error_code::ok) {
      std::fprintf(stderr, "ete-recompress: session %zu (%s, source %s): %s\n", s, buf.name.c_str(),
                   buf.source.c_str(), error_message(valid));
      status = exit_usage;
      continue;
    }
    const recompressed r = recompress(buf.regs, buf.data);
    std::printf("{\"session\":%zu,\"input_bytes\":%zu,\"output_bytes\":%zu,\"elements_equal\":%s}\n", s,
                buf.data.size(), r.bytes.size(), r.elements_equal ? "true" : "false");
    if (verbose && !r.elements_equal)
      std::fprintf(stderr, "  %zu vs %zu elements, %zu/%zu decode errors, encoder: %s, first difference at %zu\n",
                   r.before.elements.size(), r.after.elements.size(), r.before.errors, r.after.errors,
                   error_name(r.error), r.first_difference);
    if (!r.elements_equal && status == exit_ok) status = exit_io;
  }
  return finish_output(status);
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir;
  bool have_dir = false, verbose = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(usage_text, stdout);
      return finish_output(exit_ok);
    }
    if (arg == "--verbose") {
      verbose = true;
      continue;
    }
    if (arg == "--snapshot" || arg.substr(0, 11) == "--snapshot=") {
      if (have_dir) return usage_error("--snapshot given twice");  // not silently the last one
      if (arg.size() > 10) {
        dir = std::string(arg.substr(11));
      } else {
        if (i + 1 >= argc) return usage_error("--snapshot needs a directory");
        dir = argv[++i];
      }
      have_dir = true;
      continue;
    }
    if (arg.size() > 1 && arg[0] == '-') return usage_error("unknown option " + std::string(arg));
    return usage_error("unexpected argument " + std::string(arg));
  }
  if (!have_dir || dir.empty()) return usage_error("--snapshot DIR is required");
  try {
    return run(dir, verbose);
  } catch (const std::bad_alloc&) {  // the elements of a large buffer did not fit in memory
    std::fflush(stdout);
    std::fputs("ete-recompress: out of memory\n", stderr);
    return exit_io;
  }
}
