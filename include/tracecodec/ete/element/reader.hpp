// SPDX-License-Identifier: Apache-2.0
// Bytes -> committed elements: the packet decoder, stage 1 (element_decoder) and stage 2
// (resolver) in one object. After a decoding error the speculative state cannot be trusted:
// it is discarded, as a Discard element would (D9.3.5), and analysis restarts at the next
// A-Sync and Trace Info.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../packet/decoder.hpp"
#include "decoder.hpp"
#include "../../detail/hot.hpp"
#include "resolver.hpp"

namespace tracecodec::ete {

// Capacity: of the resolution queue (resolver.hpp); the default holds MAXSPEC P0 elements with
// three companions each. Trace denser in non-P0 elements (say, a run of Events behind
// uncommitted atoms) overflows it: resolution_overflow, the oldest element committed early.
template <class Config = runtime_config,
          std::size_t Capacity = default_resolution_capacity<Config>()>
class element_reader {
 public:
  template <class C = Config, class = std::enable_if_t<C::is_fixed>>
  constexpr element_reader() noexcept {}
  constexpr explicit element_reader(const registers& r) noexcept
      : packets_(r), elements_(r), resolve_(r) {}

  constexpr const decoder<Config>& packets() const noexcept { return packets_; }
  // ok, invalid_config (registers no ETE unit has), or unsupported_config: MAXSPEC is larger
  // than this reader's Capacity resolves (max_resolved_maxspec; run time: 487 by default). A
  // decode with resolution then reports it once and decodes nothing; stage-1 decoding
  // (resolve == false) works for every MAXSPEC.
  constexpr error_code status() const noexcept { return resolve_.status(); }
  // What status() would say for these registers, without building a reader (tools check
  // before they decode); and the largest MAXSPEC this reader resolves.
  static constexpr error_code status_for(const registers& r) noexcept {
    return resolver<Config, Capacity>::status_for(r);
  }
  static constexpr std::uint32_t max_maxspec = max_resolved_maxspec(Capacity);
  constexpr const resolver<Config, Capacity>& resolution() const noexcept { return resolve_; }
  // Atom elements as runs, one per atom packet (element.hpp: count, atom_bits), instead of
  // one element per atom: the same committed atoms, a fraction of the elements. Speculation
  // resolution splits a run where a Commit or Cancel ends inside it.
  constexpr void atom_runs(bool runs) noexcept { elements_.atom_runs(runs); }

  // Decodes a whole buffer as one session. on_element(const element&) receives committed
  // elements (or, with resolve == false, the stage-1 elements); on_error(const diagnostic&).
  // A sink with a member atoms(offset, bits, count) gets most atom packets there as the run
  // (count, atom_bits) an Atom element would carry, not built: those the decode loop hands over
  // whole (not at the input's tail, nor in the compact form) while every element is committed
  // as it comes (MAXSPEC 0, outside a transaction). Always as a run, whatever atom_runs() says;
  // the sink's operator() still gets the other atoms as Atom elements. A sink that also has
  // atom_window(offset, word) gets two to eight such atom packets in a row there instead, their
  // header bytes in `word` (offset's in the low byte, zero bytes above the last): those the
  // decode loop finds together. One with all three and target_address(offset, address, isa)
  // gets the Target Address packets the decode loop meets there as their fields, outside a
  // transaction, instead of the Target Address elements. One with atoms(), atom_window() and
  // cycle_count(offset, cycles) gets the Cycle Counts of formats 2 and 3 under COMMOPT 1 (they
  // commit nothing, D5.32, D5.34) the same way, as their count.
  template <class OnElement, class OnError>
  constexpr void decode(const std::uint8_t* data, std::size_t size, OnElement&& on_element,
                        OnError&& on_error, bool resolve = true) noexcept {
    dispatch(data, size, on_element, on_error, resolve, input::last);
  }

  // Streaming form of decode(): one session in chunks of any size (decoder::decode_part).
  // The chunk's bytes need not outlive the call; decode_end() ends the session. Give every
  // call of a session the same `resolve`.
  template <class OnElement, class OnError>
  constexpr void decode_part(const std::uint8_t* data, std::size_t size, OnElement&& on_element,
                             OnError&& on_error, bool resolve = true) noexcept {
    dispatch(data, size, on_element, on_error, resolve, input::more);
  }
  template <class OnElement, class OnError>
  constexpr void decode_end(OnElement&& on_element, OnError&& on_error, bool resolve = true) noexcept {
    dispatch(nullptr, 0, on_element, on_error, resolve, input::last);
  }

  // Offset of the last packet decoded (0 before the first).
  constexpr std::uint64_t last_packet_offset() const noexcept { return last_packet_; }
  // Pass Discard elements on after what they leave (the analysis stage needs them: D9.5.13).
  constexpr void pass_discards(bool on) noexcept { resolve_.pass_discards(on); }
  // Pass Mispredicts on after their atom instead of applying them (resolver::pass_mispredicts).
  constexpr void pass_mispredicts(bool on) noexcept { resolve_.pass_mispredicts(on); }

  // reset(), for a session whose first byte is at stream offset `offset` (decoder::reset_at).
  constexpr void reset_at(std::uint64_t offset) noexcept {
    reset();
    packets_.reset_at(offset);
    last_packet_ = offset;
  }
  // Between two packets with nothing held back in any layer (decoder::between_packets,
  // resolver::idle): from an A-Sync followed by a Trace Info with SPEC 0 and TSTATE 0, what
  // follows decodes exactly as in a fresh reader (D9.2.6.2 resets the rest).
  constexpr bool between_packets() const noexcept {
    return packets_.between_packets() && resolve_.idle();
  }

  // Starts a new session: every layer back to its state before the first byte.
  constexpr void reset() noexcept {
    last_packet_ = 0;
    packets_.reset();
    elements_.reset();
    resolve_.reset();
    unsupported_reported_ = false;
  }

 private:
  enum class mode { stage1, unspeculated, resolved };
  using input = typename decoder<Config>::input;

  template <class OnElement, class OnError>
  constexpr void dispatch(const std::uint8_t* data, std::size_t size, OnElement& on_element,
                          OnError& on_error, bool resolve, input end) noexcept {
    if (resolve && resolve_.status() == error_code::unsupported_config) {
      if (!unsupported_reported_) on_error(diagnostic{error_code::unsupported_config, 0, 0});
      unsupported_reported_ = true;
      return;
    }
    if (!resolve)
      run<mode::stage1>(data, size, on_element, on_error, end);
    else if (packets_.cfg().maxspec == 0)  // no speculation: resolution is pass-through
      run<mode::unspeculated>(data, size, on_element, on_error, end);
    else
      run<mode::resolved>(data, size, on_element, on_error, end);
  }

  template <mode Mode, class OnElement, class OnError>
  constexpr void run(const std::uint8_t* data, std::size_t size, OnElement& on_element,
                     OnError& on_error, input end) noexcept {
    // The commits UpdateSpecDepth implies are the resolver's to make (it counts the
    // uncommitted P0 elements exactly, and resolves an atom run atom by atom where single
    // atoms would differ); with MAXSPEC 0 it passes everything straight on.
    elements_.omit_implied_commits(Mode != mode::stage1);
    resolve_.commit_beyond_maxspec(Mode == mode::resolved);
    auto to_resolver = [&](const element& e) TRACECODEC_HOT_LAMBDA {
      if constexpr (Mode == mode::resolved)
        resolve_.push(e, on_element, on_error);
      else if constexpr (Mode == mode::unspeculated)
        resolve_.push_unspeculated(e, on_element, on_error);
      else
        on_element(e);
    };
    auto on_packet = [&](const packet& p) TRACECODEC_HOT_LAMBDA {
      // An Exception packet is two bytes; the address packet after it is a packet of its
      // own (D5.13), which this decoder reads with it.
      last_packet_ = p.offset + (is_exception(p.kind) && p.size > 3 ? 2u : 0u);
      if constexpr (Mode == mode::resolved) {
        // A Commit packet makes one Commit element (D9.2.8.2), a Cancel format 1 without
        // a mispredict one Cancel element (D9.2.8.4); the resolver acts on either at once
        // (D9.3.3.1, D9.3.4.1): no element is built for them.
        if (p.kind == packet_kind::commit) {
          elements_.lower_depth(p.count);
          resolve_.commit_now(p.count, on_element, on_error);
          return;
        }
        if (p.kind == packet_kind::cancel_f1 && !p.is(packet_flag::mispredict)) {
          elements_.lower_depth(p.count);
          resolve_.cancel_now(p.count, on_element, on_error);
          return;
        }
      }
      elements_.process_non_atom(p, to_resolver);
    };
    auto on_packet_error = [&](const diagnostic& d) { after_error<Mode>(d, on_element, on_error); };
    auto on_atoms = [&](std::uint64_t offset, std::uint32_t bits,
                        unsigned count) TRACECODEC_HOT_LAMBDA {
      last_packet_ = offset;
      if constexpr (Mode == mode::unspeculated && requires { on_element.atoms(offset, bits, count); }) {
        if (!resolve_.in_transaction()) {
          on_element.atoms(offset, bits, count);
          return;
        }
        // The transaction stage holds them. Straight there, not through push_unspeculated():
        // its path for elements outside a transaction would put a second copy of the sink's
        // handling of atoms in the decode loop.
        elements_.template atoms<false>(offset, bits, count, [&](const element& e) {
          resolve_.push_atom_in_transaction(e, on_element, on_error);
        });
        return;
      }
      elements_.template atoms<Mode != mode::unspeculated>(offset, bits, count, to_resolver);
    };
    if constexpr (Mode == mode::unspeculated &&
                  requires { on_element.atoms(std::uint64_t{}, std::uint32_t{}, 0u); } &&
                  requires { on_element.atom_window(std::uint64_t{}, std::uint64_t{}); }) {
      // A sink with members atoms() and atom_window(offset, header bytes) gets two to eight atom
      // packets in a row at once, outside a transaction (where atoms() would get them). One
      // that also has target_address(offset, address, isa) gets the Target Address packets
      // there as their fields; one with cycle_count(offset, cycles) the Cycle Count packets of
      // formats 2 and 3 under COMMOPT 1 (D5.32, D5.34: they commit nothing) as their count.
      struct with_windows {
        decltype(on_atoms) atoms;  // a copy: its captures one load away, not two
        element_reader& reader;
        OnElement& sink;
        OnError& err;
        TRACECODEC_HOT constexpr void operator()(std::uint64_t offset, std::uint32_t bits,
                                                 unsigned count) const noexcept {
          atoms(offset, bits, count);
        }
        TRACECODEC_HOT constexpr void window(std::uint64_t offset, std::uint64_t word) const noexcept {
          if (!reader.resolve_.in_transaction()) {
            // The last header is the word's highest nonzero byte (each is 0xC0 or more).
            reader.last_packet_ = offset + (63u - static_cast<unsigned>(__builtin_clzll(word))) / 8;
            sink.atom_window(offset, word);
            return;
          }
          apart(offset, word);
        }
        // Inside a transaction, the packets one at a time (to the transaction stage). Out of
        // line: copies of that path would swell the decode loop.
        TRACECODEC_OUT_OF_LINE constexpr void apart(std::uint64_t offset, std::uint64_t word) const noexcept {
          detail::each_atom_packet(offset, word, atoms);
        }
        TRACECODEC_HOT constexpr void target(std::uint64_t offset, std::uint64_t address, isa sub_isa) const noexcept {
          reader.last_packet_ = offset;
          if constexpr (requires { sink.target_address(offset, address, sub_isa); }) {
            if (!reader.resolve_.in_transaction()) {
              sink.target_address(offset, address, sub_isa);
              return;
            }
          }
          target_element(offset, address, sub_isa);
        }
        // A Cycle Count of format 2 or 3 under COMMOPT 1: to a sink with cycle_count(offset,
        // cycles) outside a transaction, else as the element process_non_atom() would make of
        // it (out of line, as target_element()).
        TRACECODEC_HOT constexpr void cycle_count(std::uint64_t offset, std::uint32_t cycles) const noexcept {
          reader.last_packet_ = offset;
          if constexpr (requires { sink.cycle_count(offset, cycles); }) {
            if (!reader.resolve_.in_transaction()) {
              sink.cycle_count(offset, cycles);
              return;
            }
          }
          cycle_element(offset, cycles);
        }
        TRACECODEC_OUT_OF_LINE constexpr void cycle_element(std::uint64_t offset, std::uint32_t cycles) const noexcept {
          reader.resolve_.push_unspeculated(cycle_count_element(offset, cycles), sink, err);
        }
        // Inside a transaction, or for a sink without target_address(): the element
        // process() would make of the packet. Out of line, as apart().
        TRACECODEC_OUT_OF_LINE constexpr void target_element(std::uint64_t offset, std::uint64_t address,
                                                             isa sub_isa) const noexcept {
          reader.resolve_.push_unspeculated(target_address_element(offset, address, sub_isa), sink, err);
        }
      };
      packets_.decode(data, size, on_packet, on_packet_error, with_windows{on_atoms, *this, on_element, on_error},
                      end);
    } else {
      packets_.decode(data, size, on_packet, on_packet_error, on_atoms, end);
    }
  }

  // A decoder diagnostic. The decoder resumes at the next A-Sync; the element layers start
  // afresh there too (resolver::restart says what becomes of what they hold). Out of line:
  // errors are rare, and the decode loop reports them from several places.
  template <mode Mode, class OnElement, class OnError>
  TRACECODEC_OUT_OF_LINE constexpr void after_error(const diagnostic& d, OnElement& on_element,
                                                    OnError& on_error) noexcept {
    on_error(d);
    if (d.code == error_code::unsynchronized) return;
    elements_.reset();
    if constexpr (Mode != mode::stage1) resolve_.restart(d.offset, on_element, on_error);
  }

  decoder<Config> packets_{};
  element_decoder<Config> elements_{};
  resolver<Config, Capacity> resolve_{};
  bool unsupported_reported_ = false;
  std::uint64_t last_packet_ = 0;
};

}  // namespace tracecodec::ete
