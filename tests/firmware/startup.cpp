// SPDX-License-Identifier: Apache-2.0
// The minimal start-up of the budget images (budget.py): a vector table with the initial stack
// pointer and the reset handler, which copies .data, clears .bss, runs the static
// constructors and calls main(). The same in every image, so it cancels out of the sizes.
#include <cstdint>

extern "C" int main();
extern "C" std::uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _estack;
extern "C" void (*__init_array_start[])();
extern "C" void (*__init_array_end[])();

extern "C" [[noreturn]] void reset_handler() {
  for (std::uint32_t *from = &_sidata, *to = &_sdata; to < &_edata;) *to++ = *from++;
  for (std::uint32_t* to = &_sbss; to < &_ebss;) *to++ = 0;
  for (auto f = __init_array_start; f < __init_array_end; ++f) (*f)();
  main();
  for (;;) {
  }
}

[[gnu::section(".vectors"), gnu::used]] void* const vectors[2] = {
    &_estack, reinterpret_cast<void*>(&reset_handler)};
