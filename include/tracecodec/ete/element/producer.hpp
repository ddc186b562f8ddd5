// SPDX-License-Identifier: Apache-2.0
// The producer API: a program, a simulator or a probe says what the PE did, one call per
// event (a branch taken or not, an indirect branch, an exception, a context change, a
// timestamp, ...), and gets the shortest legal ETE stream for its trace unit, written into its
// own buffer and handed over a chunk at a time (a ring buffer, a UART, a DMA channel, a file).
// Each call makes the committed elements (D2) the trace unit would have traced and passes
// them to the element compressor (compressor.hpp, D6.11); no packet formats to know. For
// firmware: no heap, no exceptions, a small fixed stack; the configuration is fixed at compile
// time so that what it does not use is left out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../error.hpp"
#include "../packet/config.hpp"
#include "../packet/packet.hpp"
#include "compressor.hpp"
#include "element.hpp"

namespace tracecodec::ete {

// The instruction set an address is in (D5.13 R_ROXBO): A64 in AArch64; A32 or T32 in AArch32.
enum class code_set : std::uint8_t { a64, a32, t32 };

// Where tracing starts: the first instruction's address, its instruction set and the PE
// context (exception level, security state, AArch64 or not, context ID, VMID).
struct trace_start {
  std::uint64_t address = 0;
  code_set set = code_set::a64;
  context ctx{.el = 1, .ns = true, .sf = true};
  bool cycle_counting = false;  // Trace Info: cycle counting on (Cycle Count packets follow)
};

struct producer_options {
  // Also a synchronization point (A-Sync, Trace Info, the current context) after this many
  // output bytes (0: none), for code that cannot call sync(next) itself. Without the address
  // of the next instruction, which only the caller knows, a decoder that starts there follows
  // execution from the next address the trace gives (an indirect branch, an exception).
  std::uint32_t sync_interval = 0;
};

// Exception numbers of the Exception element (D5.13 TYPE), for exception().
namespace exception_number {
inline constexpr std::uint16_t reset = 0x00;
inline constexpr std::uint16_t debug_halt = 0x01;
inline constexpr std::uint16_t call = 0x02;  // SVC, HVC, SMC
inline constexpr std::uint16_t trap = 0x03;
inline constexpr std::uint16_t system_error = 0x04;
inline constexpr std::uint16_t inst_debug = 0x06;
inline constexpr std::uint16_t data_debug = 0x07;
inline constexpr std::uint16_t alignment = 0x0a;
inline constexpr std::uint16_t inst_fault = 0x0b;
inline constexpr std::uint16_t data_fault = 0x0c;
inline constexpr std::uint16_t irq = 0x0e;
inline constexpr std::uint16_t fiq = 0x0f;
}  // namespace exception_number

// Config: fixed_config<registers{...}> (firmware) or runtime_config. The registers say which
// trace unit the stream claims to come from: a decoder needs the same values.
//
// Calls return ok or why the event cannot be traced, and then nothing of it was traced:
// unencodable (a call before start(); an address not aligned for its instruction set, an
// instruction set that is not the context's: A64 is AArch64, A32/T32 AArch32; an exception
// type D5.13 reserves; a context ID, VMID, timestamp or cycle count the unit does not trace),
// invalid_config, buffer_too_small (see status()). Not reentrant: code traced from an
// interrupt handler and from the code it interrupts must not call one producer at once
// (mask interrupts around the calls, or give each its own producer and buffer).
template <class Config = runtime_config>
class producer {
 public:
  // Bytes go into buffer[0, size) (at least compressor_output::min_size); each time the next
  // packet might not fit, the bytes so far go to sink(sink_context, data, n) and the buffer
  // starts again; flush() hands over what is left.
  template <class C = Config, class = std::enable_if_t<C::is_fixed>>
  constexpr producer(std::uint8_t* buffer, std::size_t size, chunk_sink sink,
                     void* sink_context = nullptr, producer_options o = {}) noexcept
      : comp_(compressor_output{buffer, size, sink, sink_context}, options(o)) {}
  constexpr producer(const registers& r, std::uint8_t* buffer, std::size_t size,
                     chunk_sink sink, void* sink_context = nullptr,
                     producer_options o = {}) noexcept
      : comp_(r, compressor_output{buffer, size, sink, sink_context}, options(o)) {}

  // ok, or why nothing will be produced: invalid_config, or buffer_too_small (a buffer below
  // compressor_output::min_size bytes, or no sink).
  constexpr error_code status() const noexcept { return comp_.status(); }
  // Bytes produced so far, handed over or not.
  constexpr std::uint64_t bytes_out() const noexcept { return comp_.bytes_out(); }

  // Tracing starts (or starts again after a gap) at s.address: A-Sync, Trace Info, Trace On,
  // the context and the address (D6.3: the elements a trace unit makes when trace turns on).
  constexpr error_code start(const trace_start& s) noexcept {
    if (!consistent(s.set, s.ctx.sf) || !aligned(s.address, s.set) || !traceable(s.ctx))
      return error_code::unencodable;
    set_ = s.set;
    sf_ = s.ctx.sf;
    element& info = make(element_kind::trace_info);
    if (s.cycle_counting) info.flags = element_flag::cc_enabled;
    error_code e = comp_.push_committed(info);
    if (e == error_code::ok) e = comp_.push_committed(make(element_kind::trace_on));
    started_ = e == error_code::ok;  // (context_change() wants it)
    if (e == error_code::ok) e = context_change(s.ctx, s.address, s.set);
    return e;
  }

  // A direct branch (B, BL, B.cond, CBZ, ...): taken (E atom) or not taken (N atom). The
  // decoder knows its target from the program image (D9.5.4), so none is traced.
  constexpr error_code branch(bool taken) noexcept {
    return started_ ? comp_.atoms_committed(taken, 1) : error_code::unencodable;
  }
  // Up to 32 direct branches at once, the oldest in bit 0 of taken_bits (1 = taken).
  constexpr error_code branches(std::uint32_t taken_bits, unsigned count) noexcept {
    if (!started_ || count == 0 || count > 32) return error_code::unencodable;
    return comp_.atoms_committed(taken_bits, count);
  }
  // An indirect branch (BX, BLX register, RET, LDR pc, POP {pc}, ...) taken to `target`: an E
  // atom and the target address (D9.5.8). An indirect branch not taken is branch(false).
  constexpr error_code indirect_branch(std::uint64_t target) noexcept {
    return indirect_branch(target, set_);
  }
  // ... to an address in another instruction set (an interworking branch, BX to A32 code).
  constexpr error_code indirect_branch(std::uint64_t target, code_set set) noexcept {
    if (!started_ || !aligned(target, set) || !consistent(set, sf_)) return error_code::unencodable;
    error_code e = branch(true);
    if (e == error_code::ok) e = comp_.target_committed(mask(align(target, set)), isa_of(set));
    if (e == error_code::ok) set_ = set;
    return e;
  }
  // An exception (D2.2.2; number: a D5.13 TYPE, exception_number): taken at
  // `return_address` (the preferred exception return address: the next instruction to
  // execute for an interrupt, the faulting one for a fault, Table D2.1), executing from
  // `handler` (the vector) on.
  constexpr error_code exception(std::uint16_t number, std::uint64_t return_address,
                                 std::uint64_t handler) noexcept {
    return exception(number, return_address, handler, set_);
  }
  constexpr error_code exception(std::uint16_t number, std::uint64_t return_address,
                                 std::uint64_t handler, code_set handler_set) noexcept {
    if (!aligned(handler, handler_set) || !consistent(handler_set, sf_))
      return error_code::unencodable;
    error_code e = exception_element(number, return_address);
    if (e == error_code::ok) e = comp_.target_committed(mask(align(handler, handler_set)), isa_of(handler_set));
    if (e == error_code::ok) set_ = handler_set;
    return e;
  }
  // An exception with a context change on the way (another exception level or security
  // state): the new context comes before the handler's address (D5.13, Exception with
  // context).
  constexpr error_code exception(std::uint16_t number, std::uint64_t return_address,
                                 std::uint64_t handler, code_set handler_set,
                                 const context& ctx) noexcept {
    if (!aligned(handler, handler_set) || !consistent(handler_set, ctx.sf) || !traceable(ctx))
      return error_code::unencodable;
    error_code e = exception_element(number, return_address);
    if (e == error_code::ok) e = context_change(ctx, handler, handler_set);
    return e;
  }
  // An exception return (ERET; on M profile the EXC_RETURN branch) back to `to`: an indirect
  // branch, taken (D3: ERET is a P0 instruction).
  constexpr error_code exception_return(std::uint64_t to) noexcept { return indirect_branch(to, set_); }
  constexpr error_code exception_return(std::uint64_t to, code_set set) noexcept {
    return indirect_branch(to, set);
  }
  constexpr error_code exception_return(std::uint64_t to, code_set set,
                                        const context& ctx) noexcept {
    if (!started_ || !aligned(to, set) || !consistent(set, ctx.sf) || !traceable(ctx))
      return error_code::unencodable;
    error_code e = branch(true);
    if (e == error_code::ok) e = context_change(ctx, to, set);
    return e;
  }
  // The context changed (a context switch, an exception level change not traced otherwise):
  // execution goes on at `address` in `set` (D5.55: a Context element, then the address).
  constexpr error_code context_change(const context& ctx, std::uint64_t address,
                                      code_set set) noexcept {
    if (!started_ || !aligned(address, set) || !consistent(set, ctx.sf) || !traceable(ctx))
      return error_code::unencodable;
    element& c = make(element_kind::context);
    c.ctx = ctx;
    error_code e = comp_.push_committed(c);
    sf_ = ctx.sf;
    if (e == error_code::ok) e = comp_.target_committed(mask(align(address, set)), isa_of(set));
    if (e == error_code::ok) set_ = set;
    return e;
  }
  // A timestamp (D5.9): only the bits that changed since the last one are sent.
  constexpr error_code timestamp(std::uint64_t value) noexcept {
    // The unit's timestamps are TSSIZE bits wide (TRCIDR0.TSSIZE: none, 48 or 64).
    const config& c = comp_.cfg();
    if (!started_ || c.tssize == 0 || (c.tssize < 64 && (value >> c.tssize) != 0))
      return error_code::unencodable;
    element& t = make(element_kind::timestamp);
    t.timestamp = value;
    return comp_.push_committed(t);
  }
  // A cycle count (D5.26): cycles since the last one, below 2^20 (the COUNT field, D5.28).
  // Needs a trace unit with cycle counting (TRCIDR0.TRCCCI) and start() with cycle_counting.
  constexpr error_code cycle_count(std::uint32_t cycles) noexcept {
    if (!started_ || !comp_.cfg().trccci || cycles >= (1u << 20)) return error_code::unencodable;
    element& c = make(element_kind::cycle_count);
    c.cycles = cycles;
    return comp_.push_committed(c);
  }
  // An ETEEvent (D5.68), 0-3, as far as TRCIDR0.NUMEVENT implements.
  constexpr error_code event(unsigned number) noexcept {
    if (!started_ || number >= comp_.cfg().numevent) return error_code::unencodable;
    element& v = make(element_kind::event);
    v.number = static_cast<std::uint8_t>(number);
    return comp_.push_committed(v);
  }
  // A synchronization point: A-Sync, Trace Info, the current context and `next`, the address
  // of the next instruction to execute, from where a decoder can start following execution
  // (D5.4, D9.5: an A-Sync restarts everything). Call it every few KB of trace, so that a
  // decoder handed a part of the stream (a ring buffer that wrapped) loses little.
  constexpr error_code sync(std::uint64_t next) noexcept {
    if (!started_ || !aligned(next, set_)) return error_code::unencodable;
    error_code e = comp_.sync_committed();
    if (e == error_code::ok) e = comp_.target_committed(mask(align(next, set_)), isa_of(set_));
    return e;
  }
  // Everything held back (atoms wait to be packed together) goes out, and the bytes written
  // so far go to the sink. Call before the buffer's contents are needed, e.g. at the end.
  constexpr error_code flush() noexcept {
    const error_code e = comp_.finish_committed();
    comp_.flush_output();
    return e;
  }

 private:
  // The Exception element of exception(), taken at return_address in the current set.
  constexpr error_code exception_element(std::uint16_t number, std::uint64_t return_address) noexcept {
    if (!started_ || !exception_type(number) || !aligned(return_address, set_))
      return error_code::unencodable;
    element& x = make(element_kind::exception);
    x.exception_type = number;
    x.address = mask(align(return_address, set_));
    x.sub_isa = isa_of(set_);
    x.p0 = true;
    return comp_.push_committed(x);
  }
  // The element being made: a member, not a 64-byte local in every call (small stacks).
  TRACECODEC_OWN_FRAME constexpr element& make(element_kind k) noexcept {
    tracecodec::detail::zero_fill(el_);
    el_.kind = k;
    return el_;
  }
  static constexpr compressor_options options(const producer_options& o) noexcept {
    compressor_options c{};
    c.input = input_kind::resolved;  // every call is something the PE did: committed
    c.sync_interval = o.sync_interval;
    return c;
  }
  // AArch32 addresses are 32 bits (D9.5.4.1).
  constexpr std::uint64_t mask(std::uint64_t a) const noexcept {
    return sf_ ? a : a & 0xffffffffu;
  }
  // A T32 address as interworking branches and function pointers carry it, bit 0 set, is
  // the instruction at the address without it.
  static constexpr std::uint64_t align(std::uint64_t a, code_set set) noexcept {
    return set == code_set::t32 ? a & ~std::uint64_t{1} : a;
  }
  // The exception types D5.13 defines: PE Reset, Debug halt, Call, Trap, System Error, the
  // debug and fault types, IRQ, FIQ and the eight IMPLEMENTATION DEFINED ones; not Transaction
  // Failure (0x18, not an exception: it replaces one, D5.24) nor the reserved values.
  static constexpr bool exception_type(std::uint16_t n) noexcept {
    return n <= 0x17 && n != 0x05 && n != 0x08 && n != 0x09 && n != 0x0d;
  }
  // A64 and A32 instructions are word aligned; a T32 address's bit 0 is dropped (align()).
  static constexpr bool aligned(std::uint64_t a, code_set set) noexcept {
    return set == code_set::t32 || (a & 3u) == 0;
  }
  // A context the unit can trace: EL 0-3, a context ID or VMID only where the unit has them
  // (TRCIDR2.CIDSIZE, VMIDSIZE) and within their width.
  constexpr bool traceable(const context& x) const noexcept {
    const config& c = comp_.cfg();
    return x.el <= 3 && (c.cidsize != 0 || x.context_id == 0) &&
           (c.vmidsize >= 32 || (x.vmid >> c.vmidsize) == 0);
  }
  // A64 is AArch64 (context sf), A32 and T32 are AArch32.
  static constexpr bool consistent(code_set set, bool sf) noexcept {
    return (set == code_set::a64) == sf;
  }
  static constexpr isa isa_of(code_set set) noexcept {
    return set == code_set::t32 ? isa::is1 : isa::is0;
  }

  compressor<Config, 0> comp_;
  element el_{};
  bool started_ = false;  // start() came first: a decoder needs its Trace Info
  code_set set_ = code_set::a64;
  bool sf_ = true;
};

}  // namespace tracecodec::ete
