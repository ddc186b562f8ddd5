// SPDX-License-Identifier: Apache-2.0
// ete-recompress --snapshot DIR: decodes each trace buffer to resolved elements, re-encodes them
// with the element compressor, decodes the result again, and prints one JSON line per buffer:
// {"session":i,"input_bytes":N,"output_bytes":M,"elements_equal":true|false}.
#include <tracecodec/ete/recompress.hpp>
#include <tracecodec/ete/snapshot.hpp>

#include <cstdio>
#include <cstring>
#include <string>

using namespace tracecodec::ete;

int main(int argc, char** argv) {
  std::string dir;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--snapshot") && i + 1 < argc) {
      dir = argv[++i];
    } else if (!std::strcmp(argv[i], "--verbose")) {
      verbose = true;
    } else {
      dir.clear();
      break;
    }
  }
  if (dir.empty()) {
    std::fprintf(stderr, "usage: ete-recompress --snapshot DIR [--verbose]\n");
    return 2;
  }
  const auto snap = snapshot::load(dir);
  if (!snap.error.empty()) {
    std::fprintf(stderr, "ete-recompress: %s\n", snap.error.c_str());
    return 1;
  }
  int status = 0;
  for (std::size_t s = 0; s < snap.buffers.size(); ++s) {
    const auto& buf = snap.buffers[s];
    const recompressed r = recompress(buf.regs, buf.data);
    std::printf("{\"session\":%zu,\"input_bytes\":%zu,\"output_bytes\":%zu,\"elements_equal\":%s}\n", s,
                buf.data.size(), r.bytes.size(), r.elements_equal ? "true" : "false");
    if (verbose && !r.elements_equal)
      std::fprintf(stderr, "  %zu vs %zu elements, %zu/%zu decode errors, encoder: %s, first difference at %zu\n",
                   r.before.elements.size(), r.after.elements.size(), r.before.errors, r.after.errors,
                   error_name(r.error), r.first_difference);
    if (!r.elements_equal) status = 1;
  }
  return status;
}
