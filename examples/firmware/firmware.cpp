// SPDX-License-Identifier: Apache-2.0
// A bare-metal Cortex-M program that traces itself with the producer API
// (tracecodec/ete/element/producer.hpp): it builds a CRC-32 table, sorts an array twice through
// a comparator called by pointer and takes the CRC of the result, while a SysTick interrupt
// fires; at each branch it says what happened (taken or not, where an indirect branch went,
// the interrupt and its return) and the producer turns that into an ETE trace, handed over
// in chunks that go to the host file trace.ete (semihosting). The program also writes down
// each call it made in a plain array, written to path.bin at the end: check_firmware.py
// decodes trace.ete with ete-dump and compares it, element by element, with path.bin.
//
// Addresses are the real ones: functions, return addresses (__builtin_return_address) and
// the PC the interrupt returns to (from the exception frame).
#include <cstddef>
#include <cstdint>
#include <iterator>

#include <tracecodec/ete/element/producer.hpp>

#include "semihosting.hpp"

namespace ete = tracecodec::ete;

namespace {

// ---- the trace and the recorded path --------------------------------------------------------

// The trace unit the trace claims to come from: a decoder needs the same registers
// (check_firmware.py passes them to ete-dump).
using trace_unit = ete::fixed_config<ete::presets::ete_1_0>;

#if defined(__ARM_ARCH_8M_MAIN__)
constexpr bool secure = true;  // QEMU's mps2-an505 runs the Cortex-M33 in Secure state
#else
constexpr bool secure = false;  // the Cortex-M4 has no Security Extension
#endif
// M profile has no exception levels: privileged code is traced as EL1, AArch32.
constexpr ete::context pe_context{.el = 1, .ns = !secure, .sf = false};

int trace_file = -1;
bool failed = false;  // a producer call refused, a path overflow, a write error

void write_chunk(void*, const std::uint8_t* data, std::size_t size) noexcept {
  if (!semihosting::write(trace_file, data, size)) failed = true;
}
std::uint8_t chunk[64];  // the producer writes here; each full chunk goes to write_chunk
ete::producer<trace_unit> tracer(chunk, sizeof chunk, write_chunk);

// What the program traced, one record per producer call, independently of the library.
// path.bin holds them as 4 little-endian 32-bit words each, then {end, count, 0, 0}.
enum class kind : std::uint32_t {
  start, branch, branches, indirect, exception, exception_return, timestamp, event, sync, end
};
struct record {
  kind what;
  std::uint32_t a, b, c;
};
record path[6000];
std::uint32_t path_size = 0;

// Interrupts off during a trace point: the SysTick handler traces too, and the producer is
// not reentrant; the path and the trace then see each event whole and in the same order.
class irq_off {
 public:
  irq_off() noexcept {
    asm volatile("mrs %0, primask\n\tcpsid i" : "=r"(primask_)::"memory");
  }
  ~irq_off() { asm volatile("msr primask, %0" ::"r"(primask_) : "memory"); }

 private:
  std::uint32_t primask_;
};

// Each producer call runs in an instantiation of this function, never inlined:
// check_firmware.py --measure counts the instructions executed from its entry to its return.
template <class Call>
[[gnu::noinline]] ete::error_code produce(Call call) noexcept {
  return call(tracer);
}

template <class Call>
void trace(const record& r, Call call) noexcept {
  irq_off off;
  if (path_size < std::size(path)) path[path_size++] = r;
  else failed = true;
  if (produce(call) != ete::error_code::ok) failed = true;
}

std::uint32_t address(const void* p) { return reinterpret_cast<std::uint32_t>(p); }
template <class R, class... A>
std::uint32_t address(R (*f)(A...)) {
  return reinterpret_cast<std::uint32_t>(f);
}

// Tracing starts at `pc`: A-Sync, Trace Info, Trace On, the context and the address.
void start(std::uint32_t pc) {
  ete::trace_start s{};
  s.address = pc;
  s.set = ete::code_set::t32;
  s.ctx = pe_context;
  trace({kind::start, pc, pe_context.el, pe_context.ns}, [=](auto& p) { return p.start(s); });
}
// A direct branch (a loop's, an if's, a BL): returns `taken`, to wrap a condition.
bool branch(bool taken) {
  trace({kind::branch, taken, 0, 0}, [=](auto& p) { return p.branch(taken); });
  return taken;
}
// `count` direct branches in one call, the oldest in bit 0.
void branches(std::uint32_t taken_bits, unsigned count) {
  trace({kind::branches, taken_bits, count, 0},
        [=](auto& p) { return p.branches(taken_bits, count); });
}
// BLX, BX LR, POP {pc}: taken to `to` (T32: bit 0 set, which the producer drops).
void indirect_branch(std::uint32_t to) {
  trace({kind::indirect, to, 0, 0}, [=](auto& p) { return p.indirect_branch(to); });
}
void return_to(const void* to) { indirect_branch(address(to)); }
void timestamp(std::uint64_t t) {
  trace({kind::timestamp, static_cast<std::uint32_t>(t), static_cast<std::uint32_t>(t >> 32), 0},
        [=](auto& p) { return p.timestamp(t); });
}
// The interrupt taken with `interrupted` the next instruction, and its return there.
void exception(std::uint32_t interrupted, std::uint32_t handler) {
  constexpr std::uint16_t irq = ete::exception_number::irq;
  trace({kind::exception, irq, interrupted, handler},
        [=](auto& p) { return p.exception(irq, interrupted, handler); });
}
void exception_return(std::uint32_t to) {
  trace({kind::exception_return, to, 0, 0}, [=](auto& p) { return p.exception_return(to); });
}
void event(unsigned n) {
  trace({kind::event, n, 0, 0}, [=](auto& p) { return p.event(n); });
}
// A synchronization point, and where execution goes on: the instruction after this call.
[[gnu::noinline]] void sync() {
  const std::uint32_t next = address(__builtin_return_address(0));
  trace({kind::sync, next, 0, 0}, [=](auto& p) { return p.sync(next); });
}

// ---- time: SysTick ----------------------------------------------------------------------
struct systick_registers {
  std::uint32_t ctrl, load, val, calib;
};
auto& systick = *reinterpret_cast<volatile systick_registers*>(0xe000e010);
auto& icsr = *reinterpret_cast<volatile std::uint32_t*>(0xe000ed04);
constexpr std::uint32_t pendstset = 1u << 26;
// An interrupt each 2000 processor clocks (80 us at mps2-an386's 25 MHz): under QEMU
// -icount shift=0, one each 80,000 instructions, some in each part of the program.
constexpr std::uint32_t reload = 1999;
volatile std::uint32_t ticks = 0;
volatile bool tracing = false;

// Processor clocks since SysTick started.
std::uint64_t now() {
  irq_off off;
  std::uint32_t t = ticks, v = systick.val;
  if (icsr & pendstset) {  // it wrapped and the handler has not counted it yet
    ++t;
    v = systick.val;
  }
  return std::uint64_t{t} * (reload + 1) + (reload - v);
}

}  // namespace

// The exception frame's address goes to on_systick: r0-r3, r12, LR, PC, xPSR (the program
// runs on the main stack only).
extern "C" [[gnu::naked]] void SysTick_Handler() { asm("mrs r0, msp\n\tb on_systick"); }

extern "C" void on_systick(const std::uint32_t* frame) {
  ticks = ticks + 1;
  if (!tracing) return;
  const std::uint32_t interrupted = frame[6];  // where the interrupt returns to
  exception(interrupted, address(SysTick_Handler));
  if (ticks % 8 == 0) timestamp(now());
  exception_return(interrupted);
}

namespace {

// ---- the program being traced ------------------------------------------------------------
std::uint32_t crc_table[256];

[[gnu::noinline]] void make_crc_table() {
  for (std::uint32_t i = 0; branch(i < 256); ++i) {
    std::uint32_t c = i, bits = 0;
    for (unsigned k = 0; k < 8; ++k) {
      const bool odd = c & 1;
      c = odd ? 0xedb88320u ^ (c >> 1) : c >> 1;
      // The if's branch, then the inner loop's: 16 in one producer call.
      bits |= (odd ? 1u : 0u) << 2 * k | (k < 7 ? 1u : 0u) << (2 * k + 1);
    }
    branches(bits, 16);
    crc_table[i] = c;
  }
  return_to(__builtin_return_address(0));
}

[[gnu::noinline]] std::uint32_t crc32(const std::uint8_t* data, std::size_t size) {
  std::uint32_t crc = ~0u;
  for (std::size_t i = 0; branch(i < size); ++i)
    crc = crc_table[(crc ^ data[i]) & 0xff] ^ (crc >> 8);
  return_to(__builtin_return_address(0));
  return ~crc;
}

using compare_fn = int (*)(std::uint32_t, std::uint32_t);
[[gnu::noinline]] int ascending(std::uint32_t a, std::uint32_t b) {
  return_to(__builtin_return_address(0));
  return a < b ? -1 : a > b;
}
[[gnu::noinline]] int descending(std::uint32_t a, std::uint32_t b) {
  return_to(__builtin_return_address(0));
  return a < b ? 1 : -(a > b);
}

// A call through a pointer is an indirect branch (BLX).
int call(compare_fn compare, std::uint32_t a, std::uint32_t b) {
  indirect_branch(address(compare));
  return compare(a, b);
}

[[gnu::noinline]] void insertion_sort(std::uint32_t* v, unsigned n, compare_fn compare) {
  for (unsigned i = 1; branch(i < n); ++i) {
    const std::uint32_t x = v[i];
    unsigned j = i;
    while (branch(j > 0) && branch(call(compare, v[j - 1], x) > 0)) {
      v[j] = v[j - 1];
      --j;
    }
    v[j] = x;
  }
  return_to(__builtin_return_address(0));
}

std::uint32_t data[32];

// Returns the CRC-32 of "123456789".
[[gnu::noinline]] std::uint32_t workload() {
  event(0);
  timestamp(now());
  branch(true);  // BL make_crc_table: a direct branch, taken
  make_crc_table();
  sync();

  event(1);
  timestamp(now());
  branch(true);
  insertion_sort(data, std::size(data), descending);
  branch(true);
  insertion_sort(data, std::size(data), ascending);  // the worst case: reversed input
  sync();

  event(2);
  timestamp(now());
  static const char check[] = "123456789";
  branch(true);
  const std::uint32_t check_crc = crc32(reinterpret_cast<const std::uint8_t*>(check), 9);
  branch(true);
  crc32(reinterpret_cast<const std::uint8_t*>(data), sizeof data);
  timestamp(now());
  return_to(__builtin_return_address(0));
  return check_crc;
}

bool write_file(const char* name, const void* bytes, std::size_t size) {
  const int f = semihosting::open(name, semihosting::mode::write_binary);
  if (f < 0) return false;
  const bool written = semihosting::write(f, bytes, size);
  return semihosting::close(f) && written;
}

}  // namespace

int main() {
  std::uint32_t seed = 2463534242u;  // the data to sort: xorshift32
  for (std::uint32_t& d : data) {
    seed ^= seed << 13;
    seed ^= seed >> 17;
    seed ^= seed << 5;
    d = seed;
  }
  trace_file = semihosting::open("trace.ete", semihosting::mode::write_binary);
  if (trace_file < 0 || tracer.status() != ete::error_code::ok) return 2;

  start(address(workload));  // where a trace unit turned on now would start
  tracing = true;
  systick.load = reload;
  systick.val = 0;
  systick.ctrl = 7;  // processor clock, interrupt, on

  const std::uint32_t check_crc = workload();

  systick.ctrl = 0;  // no interrupt (and no trace) after the flush
  tracing = false;
  if (tracer.flush() != ete::error_code::ok) failed = true;
  const std::uint32_t exceptions = ticks;
  if (!semihosting::close(trace_file)) failed = true;

  if (path_size == std::size(path)) failed = true;  // no room for the end record
  else path[path_size] = {kind::end, path_size, 0, 0};
  if (!write_file("path.bin", path, (path_size + 1) * sizeof(record))) failed = true;

  bool result_ok = check_crc == 0xcbf43926u;  // CRC-32's check value
  for (std::size_t i = 1; i < std::size(data); ++i) result_ok = result_ok && data[i - 1] <= data[i];
  if (!result_ok) semihosting::print("firmware: wrong sort or CRC result\n");
  if (failed) semihosting::print("firmware: a trace call failed or the path overflowed\n");
  if (exceptions == 0) semihosting::print("firmware: no timer interrupt\n");
  return result_ok && !failed && exceptions != 0 ? 0 : 1;
}
