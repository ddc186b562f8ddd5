// SPDX-License-Identifier: Apache-2.0
// Bytes -> committed elements: the packet decoder, stage 1 (element_decoder) and stage 2
// (resolver) in one object. After a decoding error the speculative state cannot be trusted:
// it is discarded, as a Discard element would (D9.3.5), and analysis restarts at the next
// A-Sync and Trace Info.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "decoder.hpp"
#include "element_decoder.hpp"
#include "hot.hpp"
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
  constexpr const resolver<Config, Capacity>& resolution() const noexcept { return resolve_; }
  // Atom elements as runs, one per atom packet (element.hpp: count, atom_bits), instead of
  // one element per atom: the same committed atoms, a fraction of the elements. Speculation
  // resolution splits a run where a Commit or Cancel ends inside it.
  constexpr void atom_runs(bool runs) noexcept { elements_.atom_runs(runs); }

  // Decodes a whole buffer as one session. on_element(const element&) receives committed
  // elements (or, with resolve == false, the stage-1 elements); on_error(const diagnostic&).
  template <class OnElement, class OnError>
  constexpr void decode(const std::uint8_t* data, std::size_t size, OnElement&& on_element,
                        OnError&& on_error, bool resolve = true) noexcept {
    if (!resolve)
      run<mode::stage1>(data, size, on_element, on_error);
    else if (packets_.cfg().maxspec == 0)  // no speculation: resolution is pass-through
      run<mode::unspeculated>(data, size, on_element, on_error);
    else
      run<mode::resolved>(data, size, on_element, on_error);
  }

 private:
  enum class mode { stage1, unspeculated, resolved };

  template <mode Mode, class OnElement, class OnError>
  constexpr void run(const std::uint8_t* data, std::size_t size, OnElement& on_element,
                     OnError& on_error) noexcept {
    const bool resolve = Mode != mode::stage1;
    // With MAXSPEC 0 the resolver passes everything straight on; implied commits are noise.
    elements_.omit_implied_commits(Mode == mode::unspeculated);
    auto to_resolver = [&](const element& e) TRACECODEC_HOT_LAMBDA {
      if constexpr (Mode == mode::resolved)
        resolve_.push(e, on_element, on_error);
      else if constexpr (Mode == mode::unspeculated)
        resolve_.push_unspeculated(e, on_element, on_error);
      else
        on_element(e);
    };
    packets_.decode_atoms_apart(
        data, size,
        [&](const packet& p) TRACECODEC_HOT_LAMBDA { elements_.process_atoms_apart(p, to_resolver); },
        [&](const diagnostic& d) {
          on_error(d);
          if (d.code == error_code::unsynchronized) return;
          element x{};
          x.kind = element_kind::discard;
          x.offset = d.offset;
          elements_.reset();
          if (resolve) resolve_.push(x, on_element, on_error);
        },
        [&](std::uint64_t offset, std::uint32_t bits, unsigned count) TRACECODEC_HOT_LAMBDA {
          elements_.atoms(offset, bits, count, to_resolver);
        });
  }

  decoder<Config> packets_{};
  element_decoder<Config> elements_{};
  resolver<Config, Capacity> resolve_{};
};

}  // namespace tracecodec::ete
