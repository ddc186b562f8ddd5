// SPDX-License-Identifier: Apache-2.0
// main() of a doctest program over the ETE conformance corpus (../shared/conformance/ete, or
// TRACECODEC_CONFORMANCE_DIR): without the corpus it is skipped (exit 77, meson's "skipped"),
// or fails under TRACECODEC_REQUIRE_CONFORMANCE=1 (CI).
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace test {

// The corpus's snapshot folders by name, sorted.
inline std::vector<std::string> snapshot_names(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(dir) / "snapshots"))
    if (e.is_directory()) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Sets dir to the corpus folder, then runs the test cases.
inline int conformance_main(int argc, char** argv, std::string& dir) {
  const char* env = std::getenv("TRACECODEC_CONFORMANCE_DIR");
  dir = env ? env : "../shared/conformance/ete";
  const char* req = std::getenv("TRACECODEC_REQUIRE_CONFORMANCE");
  const bool required = req && std::string(req) == "1";
  if (!std::filesystem::is_directory(std::filesystem::path(dir) / "snapshots")) {
    if (required) {
      std::printf("FAILED: conformance corpus not found at %s (TRACECODEC_REQUIRE_CONFORMANCE=1)\n", dir.c_str());
      return 1;
    }
    std::printf("SKIPPED: conformance corpus not found at %s; set TRACECODEC_CONFORMANCE_DIR\n", dir.c_str());
    return 77;
  }
  doctest::Context ctx(argc, argv);
  return ctx.run();
}

}  // namespace test
