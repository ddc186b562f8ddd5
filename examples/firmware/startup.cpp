// SPDX-License-Identifier: Apache-2.0
// Startup for a Cortex-M program under QEMU (mps2-an386, mps2-an505): the vector table, the
// reset handler (.data copied from its load address, .bss zeroed, constructors run, main()
// called) and a default handler that ends the emulation instead of hanging it. The symbols
// come from the linker scripts mps2_an386.ld and mps2_an505.ld. main()'s return value is the
// emulator's exit status (semihosting).
#include <cstdint>

#include "semihosting.hpp"

extern "C" {
// From the linker script.
extern std::uint32_t __stack_top[];
extern std::uint32_t __data_load[], __data_start[], __data_end[];
extern std::uint32_t __bss_start[], __bss_end[];
using constructor = void (*)();
extern constructor __init_array_start[], __init_array_end[];

int main();

[[noreturn]] void Reset_Handler() noexcept;
void Default_Handler() noexcept;
// A program defines the handlers it uses; the others stop the emulation.
void NMI_Handler() noexcept __attribute__((weak, alias("Default_Handler")));
void HardFault_Handler() noexcept __attribute__((weak, alias("Default_Handler")));
void MemManage_Handler() noexcept __attribute__((weak, alias("Default_Handler")));
void BusFault_Handler() noexcept __attribute__((weak, alias("Default_Handler")));
void UsageFault_Handler() noexcept __attribute__((weak, alias("Default_Handler")));
void SecureFault_Handler() noexcept __attribute__((weak, alias("Default_Handler")));
void SVC_Handler() noexcept __attribute__((weak, alias("Default_Handler")));
void DebugMon_Handler() noexcept __attribute__((weak, alias("Default_Handler")));
void PendSV_Handler() noexcept __attribute__((weak, alias("Default_Handler")));
void SysTick_Handler() noexcept __attribute__((weak, alias("Default_Handler")));
}

namespace {
using handler = void (*)();
// The initial stack pointer, then exceptions 1-15 (B1.5.3 of the ARMv7-M ARM). External
// interrupts (16 and up) would follow; this program uses none.
struct vector_table {
  const void* stack_top;
  handler exceptions[15];
};
}  // namespace

// The linker script places .vectors first, at the address the core boots from (VTOR at reset).
[[gnu::used, gnu::section(".vectors")]] const vector_table vectors = {
    __stack_top,
    {Reset_Handler, NMI_Handler, HardFault_Handler, MemManage_Handler, BusFault_Handler,
     UsageFault_Handler, SecureFault_Handler, nullptr, nullptr, nullptr, SVC_Handler,
     DebugMon_Handler, nullptr, PendSV_Handler, SysTick_Handler}};

extern "C" void Reset_Handler() noexcept {
  // Volatile accesses: otherwise GCC may turn these loops into memcpy/memset calls, which a
  // program without a C library would not have.
  const volatile std::uint32_t* from = __data_load;
  for (volatile std::uint32_t* to = __data_start; to < __data_end;) *to++ = *from++;
  for (volatile std::uint32_t* to = __bss_start; to < __bss_end;) *to++ = 0;
  for (constructor* c = __init_array_start; c < __init_array_end; ++c) (*c)();
  semihosting::exit(main());
}

// An unexpected exception (a fault, or a handler the program did not define): its number
// (IPSR) plus 128 is the exit status, so that a test sees the failure at once.
extern "C" void Default_Handler() noexcept {
  std::uint32_t ipsr;
  asm volatile("mrs %0, ipsr" : "=r"(ipsr));
  semihosting::print("unexpected exception\n");
  semihosting::exit(128 + static_cast<int>(ipsr & 0x1ff));
}
