// SPDX-License-Identifier: Apache-2.0
// What the command-line programs share: exit codes, line output, the final flush (a full disk
// or a closed pipe is an error, not a silent success) and usage errors.
#pragma once

#include <cstdio>
#include <string>

namespace tools {

inline constexpr int exit_ok = 0;
inline constexpr int exit_io = 1;     // input unreadable or output unwritable
inline constexpr int exit_usage = 2;  // bad command line, or a configuration refused

inline void put_line(const std::string& s) {
  std::fwrite(s.data(), 1, s.size(), stdout);
  std::fputc('\n', stdout);
}

// `status`, or exit_io when standard output could not be written.
inline int finish_output(const char* program, int status) {
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "%s: error writing output\n", program);
    return exit_io;
  }
  return status;
}

// "PROGRAM: MESSAGE", then the usage text, or a pointer to --help when there is none.
inline int usage_error(const char* program, const std::string& message,
                       const char* usage = nullptr) {
  if (usage != nullptr)
    std::fprintf(stderr, "%s: %s\n%s", program, message.c_str(), usage);
  else
    std::fprintf(stderr, "%s: %s\nrun '%s --help' for usage\n", program, message.c_str(), program);
  return exit_usage;
}

}  // namespace tools
