// SPDX-License-Identifier: Apache-2.0
// Bytes -> program flow: the element reader (packets, stage 1, stage 2) and the analysis stage
// (D9.5) in one object. Zero allocation; streaming (chunks split anywhere).
#pragma once

#include <cstddef>
#include <cstdint>

#include "../element/reader.hpp"
#include "analyzer.hpp"

namespace tracecodec::ete {

template <class Config = runtime_config, std::size_t CacheBlocks = 4096,
          std::size_t Capacity = default_resolution_capacity<Config>()>
class flow_decoder {
 public:
  template <class C = Config, class = std::enable_if_t<C::is_fixed>>
  constexpr explicit flow_decoder(program_image& image, const flow_options& o = {}) noexcept
      : flow_(image, o) {
    reader_.atom_runs(true);
    reader_.pass_discards(true);
    reader_.pass_mispredicts(true);  // D9.5.3 I_GBVND: the analyzer applies them (D9.5.11)
  }
  constexpr flow_decoder(const registers& r, program_image& image,
                         const flow_options& o = {}) noexcept
      : reader_(r), flow_(r, image, o) {
    reader_.atom_runs(true);
    reader_.pass_discards(true);
    reader_.pass_mispredicts(true);  // D9.5.3 I_GBVND: the analyzer applies them (D9.5.11)
  }

  // As element_reader::status(): ok, invalid_config or unsupported_config.
  constexpr error_code status() const noexcept { return reader_.status(); }
  constexpr const element_reader<Config, Capacity>& elements() const noexcept { return reader_; }

  // Decodes a whole buffer as one session: on_flow(const flow_element&) receives the flow
  // elements, the last an end_of_trace; on_error(const diagnostic&) the decoding errors.
  template <class OnFlow, class OnError>
  constexpr void decode(const std::uint8_t* data, std::size_t size, OnFlow&& on_flow,
                        OnError&& on_error) noexcept {
    decode_part(data, size, on_flow, on_error);
    decode_end(on_flow, on_error);
  }

  // Streaming form: the session continues across calls until decode_end().
  template <class OnFlow, class OnError>
  constexpr void decode_part(const std::uint8_t* data, std::size_t size, OnFlow&& on_flow,
                             OnError&& on_error) noexcept {
    if (size == 0) return;
    flow_.begin(consumed_, on_flow);
    consumed_ += size;
    reader_.decode_part(data, size, element_sink(on_flow), error_sink(on_flow, on_error));
  }
  template <class OnFlow, class OnError>
  constexpr void decode_end(OnFlow&& on_flow, OnError&& on_error) noexcept {
    // A session that got no byte (a source with no trace in its buffer) is only its end, as
    // OpenCSD reports it.
    if (consumed_ != 0) flow_.begin(consumed_, on_flow);
    reader_.decode_end(element_sink(on_flow), error_sink(on_flow, on_error));
    flow_.end(reader_.last_packet_offset(), on_flow);
  }

  // As a new decoder, for a session whose first byte is at stream offset `offset`
  // (decoder::reset_at): its no_sync element says start, not new_session.
  constexpr void reset_at(std::uint64_t offset) noexcept {
    reader_.reset_at(offset);
    flow_.reset(sync_reason::start);
    consumed_ = offset;
  }
  // The element layers between two packets with nothing held (element_reader::between_packets).
  constexpr bool between_packets() const noexcept { return reader_.between_packets(); }
  // The analysis stage, for its state (flow_analyzer::synchronized, same_analysis).
  constexpr const flow_analyzer<Config, CacheBlocks>& analysis() const noexcept { return flow_; }

  // A new session (another buffer): every layer back to its start; the block cache stays.
  constexpr void reset() noexcept {
    reader_.reset();
    flow_.reset(sync_reason::new_session);
    consumed_ = 0;
  }
  // Forgets the cached blocks (the image's contents changed).
  constexpr void invalidate() noexcept { flow_.invalidate(); }

 private:
  // The reader's sink: elements, and atom packets as their atoms and Target Address packets as
  // their fields, not built into elements (element_reader::decode).
  template <class OnFlow>
  struct to_analyzer {
    flow_analyzer<Config, CacheBlocks>& flow;
    OnFlow& on_flow;
    TRACECODEC_HOT constexpr void operator()(const element& e) const noexcept { flow.process(e, on_flow); }
    TRACECODEC_HOT constexpr void atoms(std::uint64_t offset, std::uint32_t bits, unsigned count) const noexcept {
      flow.process_atoms(offset, bits, count, on_flow);
    }
    TRACECODEC_HOT constexpr void target_address(std::uint64_t offset, std::uint64_t address,
                                                 isa sub_isa) const noexcept {
      flow.process_target(offset, address, sub_isa, on_flow);
    }
    TRACECODEC_HOT constexpr void cycle_count(std::uint64_t offset, std::uint32_t cycles) const noexcept {
      flow.process_cycle_count(offset, cycles, on_flow);
    }
    TRACECODEC_HOT constexpr void atom_window(std::uint64_t offset, std::uint64_t word) const noexcept {
      flow.process_atom_window(offset, word, on_flow);
    }
  };
  template <class OnFlow>
  constexpr auto element_sink(OnFlow& on_flow) noexcept {
    return to_analyzer<OnFlow>{flow_, on_flow};
  }
  template <class OnFlow, class OnError>
  constexpr auto error_sink(OnFlow& on_flow, OnError& on_error) noexcept {
    return [this, &on_flow, &on_error](const diagnostic& d) {
      on_error(d);
      // The no_sync element goes after the bytes in error (at least the header byte that
      // could not be decoded): where the unsynchronized stretch begins (OpenCSD puts its
      // NO_SYNC there too, at the next byte). A refused configuration (invalid_config,
      // unsupported_config) names no byte and loses no sync: nothing was ever decoded.
      if (d.code != error_code::unsynchronized && d.code != error_code::resolution_overflow &&
          d.code != error_code::invalid_config && d.code != error_code::unsupported_config)
        flow_.lost_sync(d.offset + (d.length ? d.length : 1), on_flow);
    };
  }

  element_reader<Config, Capacity> reader_{};
  flow_analyzer<Config, CacheBlocks> flow_;
  std::uint64_t consumed_ = 0;
};

}  // namespace tracecodec::ete
