// SPDX-License-Identifier: Apache-2.0
// Seed corpora for the fuzz targets, written at fuzz time into a work directory (never into
// the repository):
//   ete-fuzz-seeds OUT_DIR [CONFORMANCE_DIR] [--stamp FILE]
// OUT_DIR/<target>/ gets, for every buffer of every snapshot in CONFORMANCE_DIR/snapshots (if
// given and present), the buffer framed for that target (its registers as a raw run-time
// prefix, and the fixed_config selector when one matches), plus traces made by the project's
// own encoder under every fixed configuration (random packets the encoder accepts, A-Sync and
// Trace Info at intervals; bench/synthetic.hpp's trace), plus random inputs for the encoder
// target. OUT_DIR/raw/ gets the conformance buffers unframed.
#include <tracecodec/host/ete/snapshot.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "../bench/synthetic.hpp"
#include "common.hpp"
#include "generate.hpp"

namespace fs = std::filesystem;
using namespace fuzz;
using bytes = std::vector<std::uint8_t>;

namespace {

std::size_t written = 0;

void write(const fs::path& dir, const std::string& name, const bytes& b) {
  fs::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  ++written;
}

bytes cat(bytes a, const bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The chunking target's split header: k cut positions.
bytes cuts(std::mt19937_64& rng, std::size_t n, unsigned k) {
  bytes b{static_cast<std::uint8_t>(k)};
  for (unsigned i = 0; i < k; ++i) {
    const auto c = static_cast<std::uint16_t>(n ? rng() % (n + 1) : 0);
    b.push_back(static_cast<std::uint8_t>(c));
    b.push_back(static_cast<std::uint8_t>(c >> 8));
  }
  return b;
}

// A trace under `regs` from the packet encoder: random byte strings turned into packets by
// generate.hpp, keeping those the encoder accepts; an A-Sync and a Trace Info every so often.
bytes encoder_trace(const registers& regs, std::mt19937_64& rng, unsigned packets) {
  encoder<> enc(regs);
  bytes out;
  std::uint8_t buf[320];
  auto put = [&](const packet& p) {
    const encode_result r = enc.encode(p, buf, sizeof buf);
    out.insert(out.end(), buf, buf + r.size);
    return static_cast<bool>(r);
  };
  auto sync = [&] {
    packet a{};
    a.kind = packet_kind::async;
    put(a);
    packet ti{};
    ti.kind = packet_kind::trace_info;
    ti.plctl = 1;
    ti.info = static_cast<std::uint8_t>(rng() & 1u);
    if (enc.cfg().maxspec) {
      ti.plctl |= 4;
      ti.count = static_cast<std::uint32_t>(rng() % (enc.cfg().maxspec + 1));
    }
    if (ti.info & 1u) {
      ti.plctl |= 8;
      ti.cycles = static_cast<std::uint32_t>(rng() % 64);
    }
    put(ti);
  };
  sync();
  unsigned made = 0;
  for (unsigned tries = 0; made < packets && tries < packets * 200; ++tries) {
    std::uint8_t raw[64];
    for (auto& x : raw) x = static_cast<std::uint8_t>(rng());
    reader r{raw, sizeof raw};
    packet p = make_packet(r, enc.state());
    if (p.kind == packet_kind::async || p.kind == packet_kind::trace_info) continue;
    if (put(p)) ++made;
    if (made % 97 == 96) sync();
  }
  return out;
}

// The flow target's input (fuzz_flow.cpp): the buffer's registers (raw), the snapshot's
// architecture, and up to three 16 KiB windows of its memory dumps around the first
// addresses its packets give (the start of the first dump if none is in a dump).
bytes flow_seed(const tracecodec::ete::snapshot::loaded& snap, const tracecodec::ete::snapshot::buffer& b) {
  std::vector<std::uint64_t> starts;  // addresses in the packets (the flow decoder compiles
  {                                    // too slowly here under the sanitizers)
    auto dec = std::make_unique<decoder<runtime_config>>(b.regs);
    dec->decode(
        b.data.data(), b.data.size(),
        [&](const packet& p) {
          if (p.address != 0 && starts.size() < 4096) starts.push_back(p.address);
        },
        [](const diagnostic&) {});
  }
  struct window {
    std::uint64_t address;
    const std::uint8_t* data;
    std::size_t size;
    std::uint8_t space;
  };
  std::vector<window> windows;
  for (const std::uint64_t a : starts) {
    if (windows.size() == 3) break;
    bool seen = false;
    for (const window& w : windows) seen = seen || (a >= w.address && a - w.address < w.size);
    const memory_region* r = nullptr;
    for (const memory_region& x : snap.regions)
      if (a >= x.address && a - x.address < x.size) r = r ? r : &x;
    if (seen || !r) continue;
    const std::uint64_t from = std::max(r->address, (a & ~std::uint64_t{0xfff}) - std::min<std::uint64_t>(a & ~std::uint64_t{0xfff}, 0x1000));
    const std::size_t at = static_cast<std::size_t>(from - r->address);
    windows.push_back({from, r->data + at, std::min<std::size_t>(r->size - at, 0x4000), r->space});
  }
  if (windows.empty() && !snap.regions.empty()) {
    const memory_region& r = snap.regions[0];
    windows.push_back({r.address, r.data, std::min<std::size_t>(r.size, 0x1000), r.space});
  }
  if (windows.empty()) windows.push_back({0, nullptr, 0, memory_space::any});
  bytes out = raw_prefix(b.regs);
  out[0] = 8;  // raw registers
  out.insert(out.begin() + 1, {static_cast<std::uint8_t>(snap.arch), 0, 0,
                               static_cast<std::uint8_t>(windows.size() - 1)});
  for (const window& w : windows) {
    const std::uint8_t h[4] = {0, w.space, static_cast<std::uint8_t>(w.size), static_cast<std::uint8_t>(w.size >> 8)};
    out.insert(out.end(), h, h + 4);
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(w.address >> (8 * i)));
    if (w.size) out.insert(out.end(), w.data, w.data + w.size);
  }
  return cat(out, b.data);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args;
  std::string stamp;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--stamp" && i + 1 < argc)
      stamp = argv[++i];
    else
      args.push_back(argv[i]);
  }
  if (args.empty() || args.size() > 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR [CONFORMANCE_DIR] [--stamp FILE]\n", argv[0]);
    return 2;
  }
  const fs::path out(args[0]);
  const std::string conformance = args.size() > 1 ? args[1] : std::string();
  std::mt19937_64 rng(20261120);

  // Every target gets the same trace under the same prefix; chunking adds cut points.
  auto add_trace = [&](const std::string& name, const bytes& prefix, const bytes& trace) {
    write(out / "decode", name, cat(prefix, trace));
    write(out / "roundtrip", name, cat(prefix, trace));
    write(out / "differential", name, cat(prefix, trace));
    write(out / "chunking", name, cat(cat(prefix, cuts(rng, trace.size(), 4)), trace));
    // parallel: the trace twice (a split point where the second copy begins), segments of
    // 16 + 4 * k bytes (a few per copy), options at random
    const std::size_t k = std::min<std::size_t>(trace.size() / 16, 255);
    write(out / "parallel", name,
          cat(cat(prefix, bytes{static_cast<std::uint8_t>(k), static_cast<std::uint8_t>(rng() & 0xff)}),
              cat(trace, trace)));
  };

  // 1. The conformance snapshots: real trace.
  std::size_t buffers = 0;
  if (!conformance.empty() && fs::is_directory(fs::path(conformance) / "snapshots")) {
    std::vector<fs::path> snaps;
    for (const auto& e : fs::directory_iterator(fs::path(conformance) / "snapshots"))
      if (e.is_directory()) snaps.push_back(e.path());
    std::sort(snaps.begin(), snaps.end());
    for (const fs::path& s : snaps) {
      const auto snap = tracecodec::ete::snapshot::load(s.string());
      if (!snap.error.empty()) {
        std::fprintf(stderr, "%s: %s (skipped)\n", s.c_str(), snap.error.c_str());
        continue;
      }
      for (std::size_t i = 0; i < snap.buffers.size(); ++i) {
        const auto& b = snap.buffers[i];
        if (b.data.empty()) continue;
        const std::string name = s.filename().string() + "-" + std::to_string(i);
        write(out / "raw", name + ".bin", b.data);
        write(out / "flow", name, flow_seed(snap, b));
        add_trace(name + "-rt", raw_prefix(b.regs), b.data);
        if (const int pi = preset_index(b.regs); pi >= 0) {
          if (static_cast<unsigned>(pi) < fixed_count)
            add_trace(name + "-fixed", bytes{static_cast<std::uint8_t>(sel_fixed + pi)}, b.data);
          add_trace(name + "-preset", bytes{static_cast<std::uint8_t>(sel_runtime_preset + pi)}, b.data);
        }
        ++buffers;
      }
    }
  }

  // 1b. The deformat target: windows of the formatted ETMv4 captures (../etmv4 next to the
  //     ETE corpus), under the format byte their trace.ini names.
  if (!conformance.empty()) {
    const fs::path etmv4 = fs::path(conformance) / ".." / "etmv4" / "snapshots";
    const std::pair<const char*, std::uint8_t> formatted[] = {
        {"a57_single_step/CSTMC_TRACE_FIFO.bin", 0}, {"juno_r1_1/cstrace.bin", 0},
        {"juno-uname-001/uname_trace.bin", 0}, {"a55-test-tpiu/DSTREAM_0.bin", 2},
        {"a55-test-tpiu/DSTREAM_0.bin", 1}};
    for (const auto& [file, fmt] : formatted) {
      std::ifstream f(etmv4 / file, std::ios::binary);
      const bytes all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      for (std::size_t at = 0, k = 0; at < all.size() && k < 4; at += 4096, ++k) {
        const std::size_t m = std::min<std::size_t>(4096, all.size() - at);
        bytes b{fmt, static_cast<std::uint8_t>(k)};
        b.insert(b.end(), all.begin() + static_cast<std::ptrdiff_t>(at),
                 all.begin() + static_cast<std::ptrdiff_t>(at + m));
        std::string name = file;
        std::replace(name.begin(), name.end(), '/', '-');
        write(out / "deformat", name + "-f" + std::to_string(fmt) + "-" + std::to_string(k), b);
      }
    }
  }

  // 2. Traces made by the project's encoder, under every fixed configuration (as fixed and
  //    as run-time configuration), and bench/synthetic.hpp's benchmark trace.
  for (unsigned i = 0; i < preset_count; ++i) {
    for (unsigned k = 0; k < 3; ++k) {
      const bytes t = encoder_trace(fixed_regs[i], rng, k == 0 ? 40 : 400);
      const std::string name = "encoder-cfg" + std::to_string(i) + "-" + std::to_string(k);
      if (i < fixed_count) add_trace(name + "-fixed", bytes{static_cast<std::uint8_t>(sel_fixed + i)}, t);
      // The flow target: no region, a reader callback serving hashed bytes near 0.
      if (k == 0)
        write(out / "flow", name, cat(bytes{static_cast<std::uint8_t>(i), 18, 0, 0, 0x7c, 1, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, t));
      add_trace(name + "-rt", bytes{static_cast<std::uint8_t>(sel_runtime_preset + i)}, t);
    }
  }
  for (unsigned k = 0; k < 8; ++k) {  // structured run-time configurations; ETMv4 from k = 4
    bytes prefix{sel_structured};
    for (int j = 0; j < 12; ++j) prefix.push_back(static_cast<std::uint8_t>(rng()));
    if (k >= 4) prefix[10] = static_cast<std::uint8_t>(prefix[10] | 4u);
    else prefix[10] = static_cast<std::uint8_t>(prefix[10] & ~4u);
    const registers regs = structured_registers(prefix.data() + 1);
    if (validate(regs) != error_code::ok) continue;
    add_trace("encoder-structured-" + std::to_string(k), prefix, encoder_trace(regs, rng, 300));
  }
  {
    const bytes syn = bench::synthetic_trace(4000, 7);
    add_trace("synthetic", raw_prefix(bench::synthetic_regs), syn);
  }

  // 3. The encoder target reads values, not trace: random inputs of both modes.
  for (unsigned i = 0; i < preset_count; ++i)
    for (unsigned mode = 0; mode < 3; ++mode)
      for (unsigned k = 0; k < 3; ++k) {
        bytes b{static_cast<std::uint8_t>(i < fixed_count ? sel_fixed + i : sel_runtime_preset + i),
                static_cast<std::uint8_t>(mode)};
        for (unsigned j = 0; j < (mode == 2 ? 3000u : 300u); ++j) b.push_back(static_cast<std::uint8_t>(rng()));
        write(out / "encoder",
              "values-cfg" + std::to_string(i) + "-" + std::to_string(mode) + "-" + std::to_string(k), b);
      }

  // 4. The producer target reads calls: random inputs under every preset, each starting with
  // a start() call (opcode 11) so that most calls are taken.
  for (unsigned i = 0; i < preset_count; ++i)
    for (unsigned k = 0; k < 4; ++k) {
      bytes b{static_cast<std::uint8_t>(i < fixed_count ? sel_fixed + i : sel_runtime_preset + i),
              static_cast<std::uint8_t>(k * 60), 0, 11, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0};
      for (unsigned j = 0; j < 1500; ++j) b.push_back(static_cast<std::uint8_t>(rng()));
      write(out / "producer", "calls-cfg" + std::to_string(i) + "-" + std::to_string(k), b);
    }

  std::printf("ete-fuzz-seeds: %zu conformance buffers, %zu seed files in %s\n", buffers, written,
              out.c_str());
  if (!stamp.empty()) std::ofstream(stamp) << written << " seed files\n";
  return 0;
}
