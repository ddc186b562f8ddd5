// SPDX-License-Identifier: Apache-2.0
// Arm semihosting for Cortex-M (Thumb): the program asks the debugger, here QEMU with
// -semihosting-config enable=on,target=native, to open and write host files and to exit with a
// status. A call is BKPT 0xAB with the operation in r0 and a pointer to its argument block in
// r1; the result comes back in r0. Without a debugger or QEMU attached, BKPT stops the core
// (a HardFault), so this is for emulation and bench tests only.
#pragma once

#include <cstddef>
#include <cstdint>

namespace semihosting {

enum class op : std::uint32_t {
  open = 0x01,
  close = 0x02,
  write0 = 0x04,  // a NUL-terminated string to the console
  write = 0x05,
  exit = 0x18,
  exit_extended = 0x20,  // semihosting 2.0: an exit status for AArch32 too
};

inline std::int32_t call(op operation, const void* argument) noexcept {
  register std::uint32_t r0 asm("r0") = static_cast<std::uint32_t>(operation);
  register const void* r1 asm("r1") = argument;
  // "memory": the host reads the argument block and the data it points to, and may write.
  asm volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return static_cast<std::int32_t>(r0);
}

// fopen() modes of SYS_OPEN.
enum class mode : std::uint32_t { read_binary = 1, write_binary = 5 };

// A file handle, or -1.
inline int open(const char* name, mode m) noexcept {
  std::size_t length = 0;
  while (name[length] != '\0') ++length;
  const std::uint32_t block[3] = {reinterpret_cast<std::uint32_t>(name),
                                  static_cast<std::uint32_t>(m), length};
  return call(op::open, block);
}

// True when all `size` bytes were written (SYS_WRITE returns the count not written).
inline bool write(int handle, const void* data, std::size_t size) noexcept {
  const std::uint32_t block[3] = {static_cast<std::uint32_t>(handle),
                                  reinterpret_cast<std::uint32_t>(data), size};
  return call(op::write, block) == 0;
}

inline bool close(int handle) noexcept {
  const std::uint32_t block[1] = {static_cast<std::uint32_t>(handle)};
  return call(op::close, block) == 0;
}

inline void print(const char* text) noexcept { call(op::write0, text); }

// Ends the emulation with `status` as QEMU's exit status. SYS_EXIT_EXTENDED carries the status
// (QEMU has it since 4.2); SYS_EXIT from AArch32 only says success or not, the fallback.
[[noreturn]] inline void exit(int status) noexcept {
  constexpr std::uint32_t application_exit = 0x20026;  // ADP_Stopped_ApplicationExit
  constexpr std::uint32_t run_time_error = 0x20023;    // ADP_Stopped_RunTimeErrorUnknown
  const std::uint32_t block[2] = {application_exit, static_cast<std::uint32_t>(status)};
  call(op::exit_extended, block);
  call(op::exit, reinterpret_cast<const void*>(status == 0 ? application_exit : run_time_error));
  for (;;) {
  }
}

}  // namespace semihosting
