// SPDX-License-Identifier: Apache-2.0
// main() for the plain-executable form of every fuzz target (any compiler): runs each file
// given, and every file of each directory given (recursively, in sorted order), through
// LLVMFuzzerTestOneInput. Exit status 0 if all ran; a failing property aborts.
//   ete-fuzz-decode-replay CORPUS_DIR... | FILE...
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace fs = std::filesystem;

static bool run_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "replay: cannot read %s\n", p.c_str());
    return false;
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // An exactly sized heap block, so that a sanitizer catches a read past the input.
  std::vector<std::uint8_t> block(bytes.begin(), bytes.end());
  block.shrink_to_fit();
  LLVMFuzzerTestOneInput(block.empty() ? nullptr : block.data(), block.size());
  return true;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...\n", argv[0]);
    return 2;
  }
  std::size_t files = 0, bytes = 0;
  bool ok = true;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg(argv[i]);
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      std::vector<fs::path> all;
      for (const auto& e : fs::recursive_directory_iterator(arg))
        if (e.is_regular_file()) all.push_back(e.path());
      std::sort(all.begin(), all.end());
      for (const auto& p : all) {
        ok = run_file(p) && ok;
        ++files;
        bytes += static_cast<std::size_t>(fs::file_size(p));
      }
    } else if (fs::is_regular_file(arg, ec)) {
      ok = run_file(arg) && ok;
      ++files;
      bytes += static_cast<std::size_t>(fs::file_size(arg));
    } else {
      std::fprintf(stderr, "replay: no such file or directory: %s\n", argv[i]);
      ok = false;
    }
  }
  std::printf("replayed %zu inputs (%zu bytes)\n", files, bytes);
  return ok ? 0 : 1;
}
