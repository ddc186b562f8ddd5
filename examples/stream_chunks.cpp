// SPDX-License-Identifier: Apache-2.0
// Decode a trace that arrives in chunks (a file read piece by piece, a pipe, a DMA ring) with
// the configuration known only at run time: registers read from a file or from perf's
// metadata. A packet split across chunks decodes as if the buffer were whole. Two forms:
//   - pull: feed() a chunk, then call next() until it asks for more input (packets);
//   - push: decode_part() per chunk, decode_end() at the end (here for resolved elements).
// The example checks that both give what decoding the whole buffer at once gives.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include <tracecodec/ete/element/reader.hpp>
#include <tracecodec/ete/packet/decoder.hpp>
#include <tracecodec/host/ete/format.hpp>  // hosted (std::string): text for packets, elements

using namespace tracecodec::ete;

namespace {

// The trace of examples/decode_buffer.cpp, twice: a second session after the first.
const std::uint8_t trace[] = {
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x01, 0x00,
    0x04, 0x85, 0x00, 0x08, 0x08, 0x10, 0x00, 0x80, 0xff, 0xff, 0x31, 0xfb, 0x95, 0x10,
    0xf6, 0x06, 0x1d, 0x9a, 0x00, 0x10, 0x08, 0x10, 0x02, 0xe7, 0x8a, 0x8d, 0x09,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x01, 0x00,
    0x04, 0x85, 0x00, 0x08, 0x08, 0x10, 0x00, 0x80, 0xff, 0xff, 0x31, 0xfb, 0x95, 0x10,
    0xf6, 0x06, 0x1d, 0x9a, 0x00, 0x10, 0x08, 0x10, 0x02, 0xe7, 0x8a, 0x8d, 0x09,
};

// Stands for a file or a pipe: hands out at most 5 bytes per read, so that packets split.
struct chunked_source {
  std::size_t at = 0;
  std::size_t read(std::uint8_t* buf, std::size_t capacity) {
    std::size_t n = sizeof trace - at;
    if (n > 5) n = 5;
    if (n > capacity) n = capacity;
    std::memcpy(buf, trace + at, n);
    at += n;
    return n;
  }
};

// Packets as text; the bytes are looked up in the whole trace (the example has it).
std::vector<std::string> packets_chunked(const registers& regs, unsigned& errors) {
  std::vector<std::string> out;
  auto use = [&](const packet& p) { out.push_back(format_text(p, trace + p.offset)); };
  auto report = [&](const diagnostic& d) {
    std::fprintf(stderr, "error %s at offset %llu\n", error_name(d.code),
                 static_cast<unsigned long long>(d.offset));
    ++errors;
  };
  chunked_source source;
  // [readme:stream-packets]
  decoder<> dec{runtime_config{regs}};  // run-time form; invalid values -> error_code::invalid_config
  packet p;
  std::uint8_t buf[4096];
  while (const std::size_t n = source.read(buf, sizeof buf)) {
    dec.feed(buf, n);  // buf must stay valid until next() says need_input
    for (decode_status s; (s = dec.next(p)) != decode_status::need_input;)
      if (s == decode_status::packet) use(p);
      else report(dec.last_diagnostic());  // error + offset; decoding resumes at the next A-Sync
  }
  dec.finish();  // the input ended: what is left, then decode_status::end
  for (decode_status s; (s = dec.next(p)) != decode_status::end;)
    if (s == decode_status::packet) use(p);
    else report(dec.last_diagnostic());
  // [/readme:stream-packets]
  return out;
}

std::vector<std::string> elements_chunked(const registers& regs, unsigned& errors) {
  std::vector<std::string> out;
  chunked_source source;
  std::uint8_t buf[4096];
  // [readme:stream-elements]
  static element_reader<> reader{regs};  // packets -> elements (D9.2) -> resolved (D9.3, D9.4);
                                         // about 170 KiB at run time: not on a small stack
  auto on_element = [&](const element& e) {  // committed, in order: e.kind is atom (e.taken),
    out.push_back(format_text(e));           // exception, target_address, context, ...
  };
  auto on_error = [&](const diagnostic& d) { ++errors, std::fprintf(stderr, "%s\n", error_name(d.code)); };
  while (const std::size_t n = source.read(buf, sizeof buf))
    reader.decode_part(buf, n, on_element, on_error);  // buf may be reused after the call
  reader.decode_end(on_element, on_error);             // the session ends: flush
  // [/readme:stream-elements]
  return out;
}

}  // namespace

int main() {
  const registers regs = presets::ete_1_0;  // as read from a file at run time
  unsigned errors = 0;
  const std::vector<std::string> packets = packets_chunked(regs, errors);
  const std::vector<std::string> elements = elements_chunked(regs, errors);

  // The whole buffer at once, for comparison.
  std::vector<std::string> whole_packets, whole_elements;
  decoder<> dec{runtime_config{regs}};
  dec.decode(trace, sizeof trace, [&](const packet& p) { whole_packets.push_back(format_text(p, trace + p.offset)); },
             [&](const diagnostic&) { ++errors; });
  static element_reader<> reader{regs};
  reader.decode(trace, sizeof trace, [&](const element& e) { whole_elements.push_back(format_text(e)); },
                [&](const diagnostic&) { ++errors; });

  for (const std::string& line : packets) std::printf("%s\n", line.c_str());
  for (const std::string& line : elements) std::printf("%s\n", line.c_str());
  const bool ok = errors == 0 && packets.size() == 18 && packets == whole_packets &&
                  !elements.empty() && elements == whole_elements;
  std::printf("%zu packets, %zu elements, chunked = whole: %s\n", packets.size(), elements.size(),
              ok ? "yes" : "NO");
  return ok ? 0 : 1;
}
