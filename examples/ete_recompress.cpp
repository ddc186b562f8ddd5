// SPDX-License-Identifier: Apache-2.0
// ete-recompress --snapshot DIR: decodes each trace buffer to resolved elements, re-encodes them
// with the element compressor, decodes the result again, and prints one JSON line per buffer:
// {"session":i,"input_bytes":N,"output_bytes":M,"elements_equal":true|false}.
#include <tracecodec/tracecodec.hpp>
#include <tracecodec/ete/element_encoder.hpp>
#include <tracecodec/ete/snapshot.hpp>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace tracecodec::ete;

namespace {

// Elements compared for equality: the Trace Info speculation depth is encoding state (the
// compressor restates its own depth), not PE behaviour, so it is left out.
bool same_behaviour(const element& a, const element& b) {
  element x = a, y = b;
  x.offset = y.offset = 0;
  if (x.kind == element_kind::trace_info) x.count = y.count = 0;
  return x == y;
}

struct result {
  std::vector<element> elements;
  std::size_t errors = 0;
};

result resolve(const registers& regs, const std::vector<std::uint8_t>& bytes) {
  result r;
  auto reader = std::make_unique<element_reader<>>(regs);
  reader->decode(bytes.data(), bytes.size(), [&](const element& e) { r.elements.push_back(e); },
                 [&](const diagnostic& d) {
                   if (d.code != error_code::unsynchronized) ++r.errors;
                 });
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--snapshot") && i + 1 < argc)
      dir = argv[++i];
    else if (!std::strcmp(argv[i], "--verbose"))
      verbose = true;
    else {
      std::fprintf(stderr, "usage: ete-recompress --snapshot DIR [--verbose]\n");
      return 2;
    }
  }
  if (dir.empty()) {
    std::fprintf(stderr, "usage: ete-recompress --snapshot DIR [--verbose]\n");
    return 2;
  }
  const auto snap = snapshot::load(dir);
  if (!snap.error.empty()) {
    std::fprintf(stderr, "ete-recompress: %s\n", snap.error.c_str());
    return 1;
  }
  int status = 0;
  for (std::size_t s = 0; s < snap.buffers.size(); ++s) {
    const auto& buf = snap.buffers[s];
    const result in = resolve(buf.regs, buf.data);
    compressor_options opt;
    opt.input = input_kind::resolved;
    auto comp = std::make_unique<element_encoder<>>(buf.regs, opt);
    std::vector<std::uint8_t> out;
    std::uint8_t chunk[4096];
    error_code err = error_code::ok;
    auto drain = [&] {
      while (const std::size_t n = comp->drain(chunk, sizeof chunk)) out.insert(out.end(), chunk, chunk + n);
    };
    for (const element& e : in.elements) {
      error_code c = comp->push(e);
      if (c == error_code::buffer_too_small) {
        drain();
        c = comp->push(e);
      }
      if (c != error_code::ok && err == error_code::ok) err = c;
    }
    drain();
    if (comp->finish(true) != error_code::ok && err == error_code::ok) err = error_code::unencodable;
    drain();
    const result again = resolve(buf.regs, out);
    bool equal = in.errors == 0 && again.errors == 0 && err == error_code::ok &&
                 in.elements.size() == again.elements.size();
    std::size_t first_diff = in.elements.size();
    for (std::size_t i = 0; equal && i < in.elements.size(); ++i)
      if (!same_behaviour(in.elements[i], again.elements[i])) {
        equal = false;
        first_diff = i;
      }
    std::printf("{\"session\":%zu,\"input_bytes\":%zu,\"output_bytes\":%zu,\"elements_equal\":%s}\n", s,
                buf.data.size(), out.size(), equal ? "true" : "false");
    if (verbose && !equal) {
      std::fprintf(stderr, "  elements %zu vs %zu, errors %zu/%zu, encode %s, first difference at %zu\n",
                   in.elements.size(), again.elements.size(), in.errors, again.errors, error_name(err),
                   first_diff);
      for (std::size_t i = first_diff > 3 ? first_diff - 3 : 0; i < first_diff + 4; ++i) {
        if (i < in.elements.size())
          std::fprintf(stderr, "  in[%zu] %s @%llu addr=%llx count=%u taken=%d p0=%d\n", i,
                       element_name(in.elements[i].kind), (unsigned long long)in.elements[i].offset,
                       (unsigned long long)in.elements[i].address, in.elements[i].count,
                       in.elements[i].taken, in.elements[i].p0);
        if (i < again.elements.size())
          std::fprintf(stderr, "  out[%zu] %s @%llu addr=%llx count=%u taken=%d p0=%d\n", i,
                       element_name(again.elements[i].kind), (unsigned long long)again.elements[i].offset,
                       (unsigned long long)again.elements[i].address, again.elements[i].count,
                       again.elements[i].taken, again.elements[i].p0);
      }
    }
    if (!equal) status = 1;
  }
  return status;
}
