// SPDX-License-Identifier: Apache-2.0
// The program image (ete/flow/image.hpp) and the hosted loaders that fill it: snapshot memory
// dumps (host/ete/snapshot.hpp) and ELF segments (host/elf.hpp).
#include <doctest/doctest.h>

#include <tracecodec/ete/flow/decoder.hpp>
#include <tracecodec/ete/flow/image.hpp>
#include <tracecodec/host/elf.hpp>
#include <tracecodec/host/ete/snapshot.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;
using namespace tracecodec::ete;
using tracecodec::arm::arch_version;

namespace {

std::vector<std::uint8_t> pattern(std::size_t n, std::uint8_t seed) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(seed + i * 7);
  return v;
}

// A scratch directory, removed with its contents at the end of the test.
struct scratch_dir {
  fs::path path;
  scratch_dir() {
    static int n = 0;
    path = fs::temp_directory_path() /
           ("tracecodec-image-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~scratch_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string file(const std::string& name, const std::string& text) const {
    std::ofstream(path / name, std::ios::binary) << text;
    return (path / name).string();
  }
  std::string file(const std::string& name, const std::vector<std::uint8_t>& bytes) const {
    std::ofstream f(path / name, std::ios::binary);
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return (path / name).string();
  }
};

std::vector<std::uint8_t> read_all(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(f), {});
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// program_image

TEST_CASE("memory_space::of: every Exception level, NS and NSE") {
  namespace ms = memory_space;
  struct row {
    unsigned el;
    bool ns, nse;
    std::uint8_t space;
  };
  const row rows[] = {
      {0, false, false, ms::el1s}, {1, false, false, ms::el1s}, {2, false, false, ms::el2s},
      {3, false, false, ms::el3},  {0, true, false, ms::el1n},  {1, true, false, ms::el1n},
      {2, true, false, ms::el2n},  {3, true, false, ms::el3},   {0, true, true, ms::el1r},
      {1, true, true, ms::el1r},   {2, true, true, ms::el2r},   {3, true, true, ms::root},
      {0, false, true, ms::root},  {1, false, true, ms::root},  {2, false, true, ms::root},
      {3, false, true, ms::root},
  };
  for (const row& r : rows) {
    CAPTURE(r.el);
    CAPTURE(r.ns);
    CAPTURE(r.nse);
    CHECK(ms::of(r.el, r.ns, r.nse) == r.space);
  }
  // The groups hold their members.
  CHECK((ms::secure & ms::el1s) != 0);
  CHECK((ms::secure & ms::el2s) != 0);
  CHECK((ms::secure & ms::el3) != 0);
  CHECK((ms::non_secure & (ms::el1n | ms::el2n)) == (ms::el1n | ms::el2n));
  CHECK((ms::realm & (ms::el1r | ms::el2r)) == (ms::el1r | ms::el2r));
  CHECK((ms::secure & ms::non_secure) == 0);
}

TEST_CASE("program_image: regions in any order, boundaries") {
  const auto a = pattern(0x100, 1), b = pattern(0x40, 2), c = pattern(0x10, 3);
  const memory_region regions[] = {
      {0x3000, c.data(), c.size()},
      {0x1000, a.data(), a.size()},
      {0x2000, b.data(), b.size()},
  };
  program_image img(regions, 3);
  auto check_at = [&](std::uint64_t addr, const std::vector<std::uint8_t>& v, std::uint64_t base) {
    CAPTURE(addr);
    const auto r = img.find(addr, memory_space::el1n);
    REQUIRE(r.size == v.size() - (addr - base));
    CHECK(r.data == v.data() + (addr - base));
  };
  for (int round = 0; round < 2; ++round) {  // again, with the cache warm
    check_at(0x1000, a, 0x1000);
    check_at(0x10ff, a, 0x1000);
    check_at(0x2000, b, 0x2000);
    check_at(0x203f, b, 0x2000);
    check_at(0x3000, c, 0x3000);
    check_at(0x300f, c, 0x3000);
    check_at(0x1080, a, 0x1000);
  }
  for (std::uint64_t miss : {0x0ull, 0xfffull, 0x1100ull, 0x1fffull, 0x2040ull, 0x3010ull,
                             ~0ull}) {
    CAPTURE(miss);
    CHECK(img.find(miss, memory_space::el1n).size == 0);
  }
  // An empty image, and an empty region.
  program_image none;
  CHECK(none.find(0, memory_space::any).size == 0);
  const memory_region empty[] = {{0x1000, a.data(), 0}};
  program_image e(empty, 1);
  CHECK(e.find(0x1000, memory_space::any).size == 0);
}

TEST_CASE("program_image: the end of the address space") {
  const auto v = pattern(8, 4);
  // Exactly at the top, and one whose size would wrap past 2^64: no byte beyond the top.
  const memory_region top[] = {{UINT64_MAX - 3, v.data(), 4}};
  program_image a(top, 1);
  CHECK(a.find(UINT64_MAX, memory_space::any).size == 1);
  CHECK(a.find(UINT64_MAX - 3, memory_space::any).size == 4);
  const memory_region wraps[] = {{UINT64_MAX - 1, v.data(), 8}};
  program_image b(wraps, 1);
  const auto r = b.find(UINT64_MAX - 1, memory_space::any);
  CHECK(r.size == 2);
  CHECK(b.find(UINT64_MAX, memory_space::any).size == 1);
  CHECK(b.find(0, memory_space::any).size == 0);
  CHECK(b.find(5, memory_space::any).size == 0);
}

TEST_CASE("program_image: where regions overlap, the first listed wins") {
  const auto small = pattern(0x10, 5), big = pattern(0x10000, 6);
  const memory_region regions[] = {
      {0x1000, small.data(), small.size()},  // first
      {0x0, big.data(), big.size()},         // second, around it
  };
  program_image img(regions, 2);
  // From the second region, the view stops where the first begins.
  auto r = img.find(0x500, memory_space::el1n);
  CHECK(r.data == big.data() + 0x500);
  CHECK(r.size == 0xb00);
  // The first wins at its addresses, also right after a hit in the second (the cache).
  r = img.find(0x1004, memory_space::el1n);
  CHECK(r.data == small.data() + 4);
  CHECK(r.size == 0xc);
  r = img.find(0x1010, memory_space::el1n);
  CHECK(r.data == big.data() + 0x1010);
  CHECK(r.size == 0x10000 - 0x1010);
  r = img.find(0x1000, memory_space::el1n);  // back below the cached window
  CHECK(r.data == small.data());
  r = img.find(0x800, memory_space::el1n);
  CHECK(r.data == big.data() + 0x800);
  CHECK(r.size == 0x800);

  // Three regions, the middle one partly hidden by the first on both sides.
  const auto m = pattern(0x100, 7), lo = pattern(0x20, 8), hi = pattern(0x20, 9);
  const memory_region three[] = {
      {0x100, lo.data(), lo.size()},
      {0x1e0, hi.data(), hi.size()},
      {0x100, m.data(), m.size()},
  };
  program_image t(three, 3);
  r = t.find(0x120, memory_space::any);
  CHECK(r.data == m.data() + 0x20);
  CHECK(r.size == 0xc0);
  r = t.find(0x11f, memory_space::any);
  CHECK(r.data == lo.data() + 0x1f);
  r = t.find(0x1df, memory_space::any);
  CHECK(r.data == m.data() + 0xdf);
  CHECK(r.size == 1);
  r = t.find(0x1e0, memory_space::any);
  CHECK(r.data == hi.data());
}

TEST_CASE("program_image: memory spaces") {
  namespace ms = memory_space;
  // One region per single space, at its own address, and one region per group.
  const std::uint8_t singles[] = {ms::el1s, ms::el1n, ms::el2n, ms::el3,
                                  ms::el2s, ms::el1r, ms::el2r, ms::root};
  const auto bytes = pattern(0x100, 10);
  std::vector<memory_region> regions;
  for (unsigned i = 0; i < 8; ++i)
    regions.push_back({0x10000u * (i + 1), bytes.data(), bytes.size(), singles[i]});
  regions.push_back({0x100000, bytes.data(), bytes.size(), ms::secure});
  regions.push_back({0x200000, bytes.data(), bytes.size(), ms::non_secure});
  regions.push_back({0x300000, bytes.data(), bytes.size(), ms::realm});
  regions.push_back({0x400000, bytes.data(), bytes.size(), ms::any});
  program_image img(regions.data(), regions.size());
  for (unsigned el = 0; el < 4; ++el)
    for (int ns = 0; ns < 2; ++ns)
      for (int nse = 0; nse < 2; ++nse) {
        const std::uint8_t space = ms::of(el, ns != 0, nse != 0);
        CAPTURE(el);
        CAPTURE(ns);
        CAPTURE(nse);
        for (unsigned i = 0; i < 8; ++i) {
          CAPTURE(i);
          CHECK((img.find(0x10000u * (i + 1) + 4, space).size != 0) == (singles[i] == space));
        }
        const bool secure = space == ms::el1s || space == ms::el2s || space == ms::el3;
        const bool non_secure = space == ms::el1n || space == ms::el2n;
        const bool realm = space == ms::el1r || space == ms::el2r;
        CHECK((img.find(0x100000, space).size != 0) == secure);
        CHECK((img.find(0x200000, space).size != 0) == non_secure);
        CHECK((img.find(0x300000, space).size != 0) == realm);
        CHECK(img.find(0x400000, space).size == 0x100);
      }

  // The same addresses in two spaces: an earlier region in another space does not hide or
  // clip a later one.
  const auto ns_code = pattern(0x10, 11), all = pattern(0x1000, 12);
  const memory_region overlap[] = {
      {0x1100, ns_code.data(), ns_code.size(), ms::el1n},
      {0x1000, all.data(), all.size(), ms::any},
  };
  program_image o(overlap, 2);
  auto r = o.find(0x1000, ms::el1s);
  CHECK(r.data == all.data());
  CHECK(r.size == 0x1000);
  r = o.find(0x1100, ms::el1s);  // the cache is per space
  CHECK(r.data == all.data() + 0x100);
  r = o.find(0x1000, ms::el1n);
  CHECK(r.data == all.data());
  CHECK(r.size == 0x100);
  r = o.find(0x1104, ms::el1n);
  CHECK(r.data == ns_code.data() + 4);
  r = o.find(0x1104, ms::el1s);
  CHECK(r.data == all.data() + 0x104);
}

namespace {
struct fake_memory {
  std::uint64_t base = 0x8000, size = 0x1000;  // what it serves
  std::uint8_t space = memory_space::el1n;
  unsigned calls = 0;
  std::size_t last_request = 0;
  std::size_t extra = 0;  // claims this many bytes more than it may
};
std::size_t read_fake(void* ctx, std::uint64_t address, std::uint8_t space, std::uint8_t* out,
                      std::size_t size) noexcept {
  auto* m = static_cast<fake_memory*>(ctx);
  ++m->calls;
  m->last_request = size;
  if ((space & m->space) == 0 || address < m->base || address - m->base >= m->size) return 0;
  std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(size, m->base + m->size - address));
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::uint8_t>(address + i);
  return n + m->extra;
}
}  // namespace

TEST_CASE("program_image: the reader callback") {
  const auto code = pattern(0x10, 13);
  const memory_region regions[] = {{0x9000, code.data(), code.size(), memory_space::any}};
  program_image img(regions, 1);
  fake_memory mem;
  // Without a reader, uncovered memory is not accessible.
  CHECK(img.find(0x8000, memory_space::el1n).size == 0);
  img.set_reader(&read_fake, &mem);

  auto r = img.find(0x8000, memory_space::el1n);
  REQUIRE(r.size == program_image::fetch_size);
  CHECK(r.data[0] == 0x00);
  CHECK(r.data[5] == 0x05);
  CHECK(mem.calls == 1);
  r = img.find(0x8010, memory_space::el1n);  // inside the fetched bytes: no call
  CHECK(r.size == program_image::fetch_size - 0x10);
  CHECK(r.data[0] == 0x10);
  CHECK(mem.calls == 1);
  r = img.find(0x8010, memory_space::el1s);  // another space: a new read, nothing there
  CHECK(r.size == 0);
  CHECK(mem.calls == 2);
  r = img.find(0x8010, memory_space::el1n);
  CHECK(mem.calls == 3);
  img.invalidate();
  r = img.find(0x8010, memory_space::el1n);
  CHECK(mem.calls == 4);
  CHECK(r.data[0] == 0x10);

  // A partial read: the reader has only the last 0x10 bytes below the region at 0x9000, and
  // is asked for no more than that (the region wins over the callback's memory).
  r = img.find(0x8ff0, memory_space::el1n);
  CHECK(mem.last_request == 0x10);
  CHECK(r.size == 0x10);
  CHECK(r.data[0] == 0xf0);
  // The region is served from the region, not the reader.
  const unsigned before = mem.calls;
  r = img.find(0x9004, memory_space::el1n);
  CHECK(r.data == code.data() + 4);
  CHECK(mem.calls == before);
  // Past everything: the reader is asked and has nothing.
  CHECK(img.find(0x20000, memory_space::el1n).size == 0);
  CHECK(mem.calls == before + 1);
  CHECK(img.find(0x20000, memory_space::el1n).size == 0);  // nothing cached: asked again
  CHECK(mem.calls == before + 2);

  // A reader that claims more than it was asked for delivers nothing.
  mem.extra = 1;
  img.invalidate();
  CHECK(img.find(0x8100, memory_space::el1n).size == 0);
  mem.extra = 0;
  CHECK(img.find(0x8100, memory_space::el1n).size == program_image::fetch_size);

  // set_reader forgets what the previous reader delivered.
  fake_memory other;
  other.base = 0x8100;
  other.size = 4;
  img.set_reader(&read_fake, &other);
  r = img.find(0x8100, memory_space::el1n);
  CHECK(r.size == 4);
  CHECK(other.calls == 1);
}

namespace {
constexpr std::uint8_t constexpr_code[] = {1, 2, 3, 4, 5, 6, 7, 8};
constexpr bool image_in_constexpr() {
  const memory_region regions[] = {{0x4000, constexpr_code, 4, memory_space::el1n},
                                   {0x4000, constexpr_code + 4, 4, memory_space::any}};
  program_image img(regions, 2);
  const auto a = img.find(0x4002, memory_space::el1n);
  const auto b = img.find(0x4002, memory_space::el2n);
  return a.size == 2 && a.data[0] == 3 && b.size == 2 && b.data[0] == 7 &&
         img.find(0x4004, memory_space::el1n).size == 0;
}
static_assert(image_in_constexpr());
}  // namespace

// ---------------------------------------------------------------------------------------------
// Snapshot memory dumps

TEST_CASE("snapshot: arch_for_core and memory space names") {
  using snapshot::arch_for_core;
  CHECK(arch_for_core("Cortex-A53") == arch_version::v8_0);
  CHECK(arch_for_core("cortex-a57") == arch_version::v8_0);
  CHECK(arch_for_core("Cortex-A72") == arch_version::v8_0);
  CHECK(arch_for_core("Cortex-A55") == arch_version::v8_3);
  CHECK(arch_for_core("Cortex-A76") == arch_version::v8_3);
  CHECK(arch_for_core("Cortex-A15") == arch_version::v7);
  CHECK(arch_for_core("ARM-AA64") == arch_version::newest);
  CHECK(arch_for_core("ARM-aa64") == arch_version::newest);
  CHECK(arch_for_core("ARMv8.2-A") == arch_version::v8_2);
  CHECK(arch_for_core("ARMv8-A") == arch_version::v8_0);
  CHECK(arch_for_core("ARMv9.3-A") == arch_version::v9_3);
  CHECK(arch_for_core("ARMv7-A") == arch_version::v7);
  CHECK(arch_for_core("ARMv") == arch_version::newest);
  CHECK(arch_for_core("") == arch_version::newest);
  CHECK(arch_for_core("Neoverse-V9000") == arch_version::newest);

  namespace ms = memory_space;
  const std::map<std::string, std::uint8_t> names = {
      {"EL1S", ms::el1s}, {"EL1N", ms::el1n}, {"EL1R", ms::el1r}, {"EL2", ms::el2n},
      {"EL2N", ms::el2n}, {"EL2S", ms::el2s}, {"EL2R", ms::el2r}, {"EL3", ms::el3},
      {"ROOT", ms::root}, {"S", ms::secure},  {"N", ms::non_secure}, {"R", ms::realm},
      {"ANY", ms::any},   {"H", ms::el2n},    {"P", ms::el1n},    {"NP", ms::el1n},
      {"SP", ms::el1s},   {"el1n", ms::el1n}, {"Any", ms::any},
  };
  for (const auto& kv : names) {  // not a structured binding: clang 15 cannot capture one
    CAPTURE(kv.first);
    std::uint8_t got = 0;
    CHECK(snapshot::parse_memory_space(kv.first, got));
    CHECK(got == kv.second);
  }
  std::uint8_t got = 0;
  CHECK_FALSE(snapshot::parse_memory_space("EL4", got));
  CHECK_FALSE(snapshot::parse_memory_space("", got));

  std::uint64_t v = 0;
  CHECK(snapshot::parse_u64("0xffffffffffffffff", v));
  CHECK(v == UINT64_MAX);
  CHECK(snapshot::parse_u64(" 18446744073709551615 ", v));
  CHECK(v == UINT64_MAX);
  CHECK_FALSE(snapshot::parse_u64("18446744073709551616", v));
  CHECK_FALSE(snapshot::parse_u64("0x10000000000000000", v));
  CHECK_FALSE(snapshot::parse_u64("0x", v));
  CHECK_FALSE(snapshot::parse_u64("12k", v));
}

namespace {
// A one-buffer snapshot whose core device file holds `dumps` (the text of its [dumpN]
// sections).
void write_snapshot(const scratch_dir& d, const std::string& dumps,
                    const std::string& core_type = "Cortex-A53") {
  d.file("snapshot.ini",
         "[snapshot]\nversion=1.0\n\n[device_list]\ndevice0=cpu_0.ini\ndevice1=ETE_0.ini\n\n"
         "[trace]\nmetadata=trace.ini\n");
  d.file("cpu_0.ini", "[device]\nname=cpu_0\nclass=core\ntype=" + core_type +
                          "\n\n[regs]\nPC(size:64)=0\n\n" + dumps);
  d.file("ETE_0.ini",
         "[device]\nname=ETE_0\nclass=trace_source\ntype=ETE\n\n[regs]\nTRCCONFIGR=0x1\n"
         "TRCTRACEIDR=0x10\nTRCDEVARCH=0x47705a13\nTRCIDR0=0x28000ea1\nTRCIDR1=0x4100fff0\n"
         "TRCIDR2=0x00000488\nTRCIDR8=0x0\n");
  d.file("trace.ini",
         "[trace_buffers]\nbuffers=buffer1\n\n[buffer1]\nname=ETB_1\nfile=session1.bin\n"
         "format=source_data\n\n[source_buffers]\nETE_0=ETB_1\n\n[core_trace_sources]\ncpu_0=ETE_0\n");
  d.file("session1.bin", std::vector<std::uint8_t>{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80});
}
}  // namespace

TEST_CASE("snapshot: memory dumps, offsets, lengths and spaces") {
  scratch_dir d;
  fs::create_directories(d.path / "bin");
  const auto a = pattern(0x200, 20), b = pattern(0x40, 21);
  d.file("bin/a.bin", a);
  d.file("bin/b.bin", b);
  write_snapshot(d,
                 "[dump1]\nfile=bin/a.bin\naddress=0x1000\nlength=0x100\n\n"
                 "[dump2]\nfile=bin/a.bin\naddress=0x2000\noffset=0x100\n\n"  // rest of the file
                 "[dump3]\nfile=\"bin/b.bin\"\naddress=0xffff000000000000\nspace=EL2\n\n"
                 "[dump4]\nfile=bin/b.bin\naddress=0x3000\noffset=0x10\nlength=0x8\nspace=S\n\n"
                 "[dump5]\nfile=bin/b.bin\naddress=0x4000\noffset=0x40\n\n");  // empty: at the end
  const snapshot::loaded s = snapshot::load(d.path.string());
  REQUIRE(s.error.empty());
  REQUIRE(s.memory_error.empty());
  CHECK(s.core_name == "cpu_0");
  CHECK(s.core_type == "Cortex-A53");
  CHECK(s.arch == arch_version::v8_0);
  REQUIRE(s.buffers.size() == 1);
  CHECK(s.buffers[0].trctraceidr == 0x10);
  REQUIRE(s.dumps.size() == 5);
  REQUIRE(s.regions.size() == 5);
  CHECK(s.dumps[0].section == "dump1");
  CHECK(s.dumps[0].data == std::vector<std::uint8_t>(a.begin(), a.begin() + 0x100));
  CHECK(s.dumps[1].data == std::vector<std::uint8_t>(a.begin() + 0x100, a.end()));
  CHECK(s.dumps[1].offset == 0x100);
  CHECK(s.dumps[2].data == b);
  CHECK(s.dumps[2].file == "bin/b.bin");
  CHECK(s.dumps[2].space_name == "EL2");
  CHECK(s.dumps[3].data == std::vector<std::uint8_t>(b.begin() + 0x10, b.begin() + 0x18));
  CHECK(s.dumps[4].data.empty());
  const std::uint64_t addresses[] = {0x1000, 0x2000, 0xffff000000000000, 0x3000, 0x4000};
  const std::uint8_t spaces[] = {memory_space::any, memory_space::any, memory_space::el2n,
                                 memory_space::secure, memory_space::any};
  for (std::size_t i = 0; i < 5; ++i) {
    CAPTURE(i);
    CHECK(s.regions[i].address == addresses[i]);
    CHECK(s.regions[i].space == spaces[i]);
    CHECK(s.regions[i].data == s.dumps[i].data.data());
    CHECK(s.regions[i].size == s.dumps[i].data.size());
  }

  // The regions serve a program image.
  program_image img(s.regions.data(), s.regions.size());
  CHECK(img.find(0x10ff, memory_space::el1n).size == 1);
  CHECK(img.find(0x2000, memory_space::el1n).data[0] == a[0x100]);
  CHECK(img.find(0xffff000000000004, memory_space::el2n).size == 0x3c);
  CHECK(img.find(0xffff000000000004, memory_space::el1n).size == 0);
  CHECK(img.find(0x3000, memory_space::el3).size == 8);
  CHECK(img.find(0x3000, memory_space::el1n).size == 0);

  // A copy points at its own bytes; a move keeps the pointers.
  const snapshot::loaded copy = s;
  REQUIRE(copy.regions.size() == 5);
  for (std::size_t i = 0; i < 5; ++i) {
    CHECK(copy.regions[i].data == copy.dumps[i].data.data());
    CHECK(copy.regions[i].space == s.regions[i].space);
  }
  snapshot::loaded assigned;
  assigned = copy;
  CHECK(assigned.regions[0].data == assigned.dumps[0].data.data());
  const std::uint8_t* before = assigned.regions[1].data;
  const snapshot::loaded moved = std::move(assigned);
  CHECK(moved.regions[1].data == before);
  CHECK(moved.regions[1].data == moved.dumps[1].data.data());

  // Not reading memory: no dumps, the rest as before.
  snapshot::load_options opt;
  opt.read_memory = false;
  const snapshot::loaded bare = snapshot::load(d.path.string(), opt);
  CHECK(bare.error.empty());
  CHECK(bare.dumps.empty());
  CHECK(bare.regions.empty());
  CHECK(bare.core_type == "Cortex-A53");
}

TEST_CASE("snapshot: no dumps, and bad dumps") {
  {
    scratch_dir d;
    write_snapshot(d, "", "ARM-AA64");
    const snapshot::loaded s = snapshot::load(d.path.string());
    CHECK(s.error.empty());
    CHECK(s.memory_error.empty());
    CHECK(s.regions.empty());
    CHECK(s.arch == arch_version::newest);
  }
  struct bad {
    const char* dumps;
    const char* message;  // part of memory_error
  };
  const bad cases[] = {
      {"[dump1]\nfile=missing.bin\naddress=0x1000\n", "No such file"},
      {"[dump1]\nfile=m.bin\naddress=0x1000\noffset=0x41\n", "offset 65 is beyond the end of the file (64 bytes)"},
      {"[dump1]\nfile=m.bin\naddress=0x1000\noffset=0x40\nlength=1\n", "beyond the end of the file"},
      {"[dump1]\nfile=m.bin\naddress=0x1000\nlength=0x41\n", "offset 0 + length 65 is beyond the end"},
      {"[dump1]\nfile=m.bin\naddress=0x1000\noffset=0x20\nlength=0xffffffffffffffff\n", "beyond the end"},
      {"[dump1]\nfile=m.bin\naddress=0x1000\nspace=EL7\n", "unknown memory space 'EL7'"},
      {"[dump1]\nfile=m.bin\n", "no address="},
      {"[dump1]\naddress=0x1000\n", "no file="},
      {"[dump1]\nfile=m.bin\naddress=0x1000x\n", "bad address"},
      {"[dump1]\nfile=m.bin\naddress=0x1000\nlength=-1\n", "bad length"},
      {"[dump1]\nfile=m.bin\naddress=0x1000\noffset=z\n", "bad offset"},
      {"[dump1]\nfile=m.bin\naddress=0xfffffffffffffff0\n", "past the end of the address space"},
      {"[dump1]\nfile=.\naddress=0x1000\n", "directory"},
      {"[dump1]\nfile=m.bin\naddress=0x1000\n[dump2]\nfile=gone.bin\naddress=0x2000\n", "[dump2]"},
  };
  for (const bad& c : cases) {
    CAPTURE(c.dumps);
    scratch_dir d;
    d.file("m.bin", pattern(0x40, 30));
    write_snapshot(d, c.dumps);
    const snapshot::loaded s = snapshot::load(d.path.string());
    CHECK(s.error.empty());            // the trace is still there
    CHECK(s.buffers.size() == 1);
    CHECK(s.dumps.empty());            // all or nothing
    CHECK(s.regions.empty());
    CHECK(s.memory_error.find(c.message) != std::string::npos);
    MESSAGE(s.memory_error);
  }
}

namespace {
fs::path corpus_dir() {
  std::error_code ec;
  if (const char* e = std::getenv("TRACECODEC_CONFORMANCE_DIR"); e && *e)
    return fs::is_directory(fs::path(e) / "snapshots", ec) ? fs::path(e) : fs::path();
  for (fs::path p = fs::current_path(ec); !p.empty(); p = p.parent_path()) {
    for (const fs::path& t : {p / ".." / "shared" / "conformance" / "ete", p / "shared" / "conformance" / "ete"})
      if (fs::is_directory(t / "snapshots", ec)) return t;
    if (p == p.parent_path()) break;
  }
  return {};
}

// An independent reading of a core device file's [dumpN] sections (enough for the corpus,
// which writes file=, address=, length=, each as key=value on its own line).
struct ini_dump {
  std::string file;
  std::uint64_t address = 0, length = 0, offset = 0;
  bool has_length = false;
};
std::vector<ini_dump> read_ini_dumps(const fs::path& ini, std::string& type) {
  std::ifstream f(ini);
  std::vector<ini_dump> dumps;
  std::string line;
  bool in_dump = false;
  while (std::getline(f, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("[", 0) == 0) {
      in_dump = line.rfind("[dump", 0) == 0;
      if (in_dump) dumps.emplace_back();
      continue;
    }
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    if (!in_dump) {
      if (key == "type") type = value;
      continue;
    }
    if (key == "file") dumps.back().file = value;
    if (key == "address") dumps.back().address = std::stoull(value, nullptr, 0);
    if (key == "offset") dumps.back().offset = std::stoull(value, nullptr, 0);
    if (key == "length") {
      dumps.back().length = std::stoull(value, nullptr, 0);
      dumps.back().has_length = true;
    }
  }
  return dumps;
}

// The corpus's snapshot folders, sorted. None when the corpus is not there: a message, or a
// failure under TRACECODEC_REQUIRE_CONFORMANCE.
std::vector<fs::path> corpus_snapshots() {
  std::vector<fs::path> snaps;
  const fs::path dir = corpus_dir();
  if (dir.empty()) {
    const char* req = std::getenv("TRACECODEC_REQUIRE_CONFORMANCE");
    if (req != nullptr && *req != '\0' && *req != '0')
      FAIL("conformance corpus not found, and TRACECODEC_REQUIRE_CONFORMANCE is set");
    MESSAGE("skipped: conformance corpus not found (set TRACECODEC_CONFORMANCE_DIR)");
    return snaps;
  }
  for (const auto& e : fs::directory_iterator(dir / "snapshots"))
    if (e.is_directory()) snaps.push_back(e.path());
  std::sort(snaps.begin(), snaps.end());
  REQUIRE(!snaps.empty());
  return snaps;
}
}  // namespace

TEST_CASE("snapshot: the corpus's memory dumps") {
  const std::vector<fs::path> snaps = corpus_snapshots();
  if (snaps.empty()) return;
  std::size_t with_memory = 0, regions_checked = 0;
  for (const fs::path& snap : snaps) {
    CAPTURE(snap.filename().string());
    const snapshot::loaded s = snapshot::load(snap.string());
    REQUIRE(s.error.empty());
    // The core: every corpus snapshot lists cpu_0.ini as its one core device.
    std::string type;
    const std::vector<ini_dump> dumps = read_ini_dumps(snap / "cpu_0.ini", type);
    CHECK(s.core_type == type);
    CHECK(s.arch == (type == "Cortex-A53" ? arch_version::v8_0 : arch_version::newest));
    bool all_present = true;
    for (const ini_dump& d : dumps) all_present = all_present && fs::is_regular_file(snap / d.file);
    if (!all_present) {  // event_test names dump files the corpus does not ship
      CHECK(s.memory_error.find("No such file") != std::string::npos);
      CHECK(s.regions.empty());
      continue;
    }
    REQUIRE(s.memory_error.empty());
    REQUIRE(s.regions.size() == dumps.size());
    ++with_memory;
    for (std::size_t i = 0; i < dumps.size(); ++i) {
      CAPTURE(dumps[i].file);
      const std::vector<std::uint8_t> file = read_all(snap / dumps[i].file);
      const std::uint64_t length = dumps[i].has_length ? dumps[i].length : file.size() - dumps[i].offset;
      REQUIRE(dumps[i].offset + length <= file.size());
      CHECK(s.regions[i].address == dumps[i].address);
      CHECK(s.regions[i].size == length);
      CHECK(s.regions[i].space == memory_space::any);
      CHECK(std::equal(s.regions[i].data, s.regions[i].data + s.regions[i].size,
                       file.begin() + static_cast<std::ptrdiff_t>(dumps[i].offset)));
      ++regions_checked;
    }
    // Every region's first byte is found through a program image (where regions overlap,
    // an earlier one may serve it).
    program_image img(s.regions.data(), s.regions.size());
    for (const memory_region& r : s.regions) {
      if (r.size == 0) continue;
      const auto v = img.find(r.address, memory_space::el1n);
      REQUIRE(v.size != 0);
      CHECK(*v.data == *r.data);
    }
  }
  MESSAGE(with_memory << " snapshots with memory images, " << regions_checked << " regions checked");
  CHECK(with_memory >= 15);
}

// ---------------------------------------------------------------------------------------------
// ELF

namespace {
struct elf_segment {
  std::uint32_t type = 1;  // PT_LOAD
  std::uint32_t flags = 5;
  std::uint64_t vaddr = 0, memsz = 0;
  std::vector<std::uint8_t> bytes;  // file contents
};

void put(std::vector<std::uint8_t>& v, std::size_t at, std::uint64_t value, unsigned n) {
  for (unsigned i = 0; i < n; ++i) v[at + i] = static_cast<std::uint8_t>(value >> (8 * i));
}

// A little-endian ELF file written byte by byte: header, program headers, then each
// segment's bytes in order (so the file ends with the last segment's bytes).
std::vector<std::uint8_t> make_elf(bool is64, std::uint16_t machine, std::uint64_t entry,
                                   const std::vector<elf_segment>& segs) {
  const std::size_t eh = is64 ? 64 : 52, ph = is64 ? 56 : 32;
  std::size_t size = eh + ph * segs.size();
  for (const auto& s : segs) size += s.bytes.size();
  std::vector<std::uint8_t> v(size, 0);
  v[0] = 0x7f, v[1] = 'E', v[2] = 'L', v[3] = 'F';
  v[4] = is64 ? 2 : 1;  // class
  v[5] = 1;             // little-endian
  v[6] = 1;             // version
  put(v, 16, 2, 2);     // ET_EXEC
  put(v, 18, machine, 2);
  put(v, 20, 1, 4);
  const unsigned w = is64 ? 8 : 4;
  put(v, 24, entry, w);
  put(v, 24 + w, eh, w);          // e_phoff
  put(v, 24 + 2 * w, 0, w);       // e_shoff
  put(v, 24 + 3 * w + 4, eh, 2);  // e_ehsize
  put(v, 24 + 3 * w + 6, ph, 2);  // e_phentsize
  put(v, 24 + 3 * w + 8, segs.size(), 2);
  std::size_t data_at = eh + ph * segs.size();
  for (std::size_t i = 0; i < segs.size(); ++i) {
    const elf_segment& s = segs[i];
    const std::size_t p = eh + ph * i;
    const std::uint64_t memsz = s.memsz != 0 ? s.memsz : s.bytes.size();
    if (is64) {
      put(v, p, s.type, 4);
      put(v, p + 4, s.flags, 4);
      put(v, p + 8, data_at, 8);
      put(v, p + 16, s.vaddr, 8);
      put(v, p + 24, s.vaddr, 8);
      put(v, p + 32, s.bytes.size(), 8);
      put(v, p + 40, memsz, 8);
      put(v, p + 48, 0x1000, 8);
    } else {
      put(v, p, s.type, 4);
      put(v, p + 4, data_at, 4);
      put(v, p + 8, s.vaddr, 4);
      put(v, p + 12, s.vaddr, 4);
      put(v, p + 16, s.bytes.size(), 4);
      put(v, p + 20, memsz, 4);
      put(v, p + 24, s.flags, 4);
      put(v, p + 28, 0x1000, 4);
    }
    std::copy(s.bytes.begin(), s.bytes.end(), v.begin() + static_cast<std::ptrdiff_t>(data_at));
    data_at += s.bytes.size();
  }
  return v;
}

std::vector<elf_segment> sample_segments(bool is64) {
  const std::uint64_t base = is64 ? 0xffff800000080000 : 0x8000;
  return {
      {1, 5, base + 0x10000, 0, pattern(0x40, 40)},  // code, listed after its data
      {4, 4, 0, 0, pattern(0x10, 41)},               // PT_NOTE: ignored
      {1, 6, base + 0x20000, 0x1000, pattern(0x20, 42)},  // data + bss: only the 0x20 bytes
      {1, 6, base, 0x100, {}},                        // bss only, lowest: no region
      {1, 5, base + 0x30000, 0, pattern(0x30, 43)},  // the file ends with its bytes
  };
}
}  // namespace

TEST_CASE("elf: ELF64 and ELF32 segments at their link addresses and rebased") {
  for (const bool is64 : {true, false}) {
    CAPTURE(is64);
    const auto segs = sample_segments(is64);
    const std::uint64_t base = is64 ? 0xffff800000080000 : 0x8000;
    const std::uint16_t machine = is64 ? tracecodec::elf::em_aarch64 : tracecodec::elf::em_arm;
    const auto bytes = make_elf(is64, machine, base + 0x10008, segs);
    scratch_dir d;
    const std::string path = d.file("a.elf", bytes);

    const tracecodec::elf::loaded e = tracecodec::elf::load(path);
    REQUIRE(e.error.empty());
    CHECK(e.is64 == is64);
    CHECK(e.machine == machine);
    CHECK(e.type == 2);
    CHECK(e.entry == base + 0x10008);
    REQUIRE(e.segments.size() == 3);
    REQUIRE(e.regions.size() == 3);
    const std::size_t from[] = {0, 2, 4};
    for (std::size_t i = 0; i < 3; ++i) {
      CAPTURE(i);
      const elf_segment& s = segs[from[i]];
      CHECK(e.segments[i].vaddr == s.vaddr);
      CHECK(e.segments[i].address == s.vaddr);
      CHECK(e.segments[i].flags == s.flags);
      CHECK(e.segments[i].data == s.bytes);
      CHECK(e.regions[i].address == s.vaddr);
      CHECK(e.regions[i].size == s.bytes.size());
      CHECK(e.regions[i].data == e.segments[i].data.data());
      CHECK(e.regions[i].space == memory_space::any);
    }
    CHECK(e.segments[1].memsz == 0x1000);

    // Rebased: the lowest PT_LOAD (the bss-only one) lands at the load address.
    tracecodec::elf::load_options opt;
    opt.load_address = 0x400000;
    opt.space = memory_space::el1n;
    const tracecodec::elf::loaded r = tracecodec::elf::load(path, opt);
    REQUIRE(r.error.empty());
    REQUIRE(r.regions.size() == 3);
    CHECK(r.regions[0].address == 0x410000);
    CHECK(r.regions[1].address == 0x420000);
    CHECK(r.regions[2].address == 0x430000);
    CHECK(r.segments[0].vaddr == base + 0x10000);
    CHECK(r.entry == 0x410008);
    CHECK(r.regions[0].space == memory_space::el1n);
    program_image img(r.regions.data(), r.regions.size());
    CHECK(img.find(0x410004, memory_space::el1n).data[0] == segs[0].bytes[4]);
    CHECK(img.find(0x420020, memory_space::el1n).size == 0);  // bss is not file bytes

    // Copies point at their own bytes and keep the space.
    const tracecodec::elf::loaded c = r;
    CHECK(c.regions[2].data == c.segments[2].data.data());
    CHECK(c.regions[2].space == memory_space::el1n);

    // From memory, the same.
    const auto m = tracecodec::elf::parse(bytes.data(), bytes.size());
    CHECK(m.error.empty());
    CHECK(m.regions.size() == 3);
  }
}

TEST_CASE("elf: an executable compiled by aarch64-linux-gnu-gcc") {
  // A second source of ELF files besides the hand-written ones above. scripts/dev installs the
  // cross compiler (gcc-aarch64-linux-gnu); without it this check fails, it is not skipped.
  if (std::system("command -v aarch64-linux-gnu-gcc >/dev/null 2>&1") != 0) {
    FAIL_CHECK("aarch64-linux-gnu-gcc not found: install gcc-aarch64-linux-gnu (scripts/dev does)");
    return;
  }
  scratch_dir d;
  d.file("t.c", "int f(int x) { return x * 3; }\nvoid _start(void) { for (;;) f(1); }\n");
  const std::string cmd = "aarch64-linux-gnu-gcc -nostdlib -static -O1 -o " +
                          (d.path / "t.elf").string() + " " + (d.path / "t.c").string();
  if (std::system(cmd.c_str()) != 0) {
    FAIL_CHECK("aarch64-linux-gnu-gcc failed: " << cmd);
    return;
  }
  const auto e = tracecodec::elf::load((d.path / "t.elf").string());
  REQUIRE(e.error.empty());
  CHECK(e.machine == tracecodec::elf::em_aarch64);
  CHECK(e.is64);
  program_image img(e.regions.data(), e.regions.size());
  CHECK(img.find(e.entry, memory_space::el1n).size >= 4);
}

namespace {
std::string elf_error(const std::vector<std::uint8_t>& v, const tracecodec::elf::load_options& opt = {}) {
  return tracecodec::elf::parse(v.data(), v.size(), opt).error;
}
}  // namespace

TEST_CASE("elf: hostile and broken files give errors") {
  for (const bool is64 : {true, false}) {
    CAPTURE(is64);
    const auto good = make_elf(is64, 183, 0, sample_segments(is64));
    REQUIRE(elf_error(good).empty());
    const unsigned w = is64 ? 8 : 4;
    const std::size_t eh = is64 ? 64 : 52, ph = is64 ? 56 : 32;
    const std::size_t phentsize_at = 24 + 3 * w + 6, phnum_at = 24 + 3 * w + 8;
    struct change {
      std::size_t at;
      std::uint64_t value;
      unsigned n;
      const char* message;
    };
    // Program header 0 (the code segment) fields.
    const std::size_t p0 = eh;
    const std::size_t off_at = is64 ? p0 + 8 : p0 + 4, vaddr_at = is64 ? p0 + 16 : p0 + 8;
    const std::size_t filesz_at = is64 ? p0 + 32 : p0 + 16, memsz_at = is64 ? p0 + 40 : p0 + 20;
    const std::uint64_t all = is64 ? UINT64_MAX : 0xffffffffu;
    const change changes[] = {
        {0, 0x7e, 1, "not an ELF file"},
        {3, 'G', 1, "not an ELF file"},
        {4, 0, 1, "unsupported ELF class 0"},
        {4, 3, 1, "unsupported ELF class 3"},
        {5, 2, 1, "big-endian ELF not supported"},
        {5, 0, 1, "bad ELF data encoding"},
        {6, 0, 1, "unsupported ELF version"},
        {20, 2, 4, "unsupported ELF version"},
        {phnum_at, 0, 2, "no program headers"},
        {phnum_at, 0xffff, 2, "PN_XNUM"},
        {phnum_at, 0xfffe, 2, "program headers beyond end of file"},
        {phentsize_at, ph - 1, 2, "program header entry size"},
        {phentsize_at, 0, 2, "program header entry size"},
        {phentsize_at, 0xffff, 2, "program headers beyond end of file"},
        {24 + w, good.size(), w, "program headers beyond end of file"},
        {24 + w, good.size() - 1, w, "program headers beyond end of file"},
        {24 + w, all, w, "program headers beyond end of file"},
        {off_at, good.size(), w, "segment beyond end of file"},
        {off_at, all, w, "segment beyond end of file"},
        {off_at, all - 0x10, w, "segment beyond end of file"},
        {filesz_at, all, w, "segment beyond end of file"},
        {filesz_at, 0x41, w, "larger than memory size"},  // still inside the file
        {memsz_at, 0x3f, w, "larger than memory size"},
        {vaddr_at, all - 0x20, w, "past the end of the address space"},
    };
    for (const change& c : changes) {
      CAPTURE(c.at);
      CAPTURE(c.value);
      auto v = good;
      put(v, c.at, c.value, c.n);
      const std::string err = elf_error(v);
      CAPTURE(err);
      CHECK(err.find(c.message) != std::string::npos);
    }
    {  // file size and memory size both huge: the file check catches it
      auto v = good;
      put(v, filesz_at, all, w);
      put(v, memsz_at, all, w);
      CHECK(elf_error(v).find("segment beyond end of file") != std::string::npos);
    }
    {  // bss running past the top is an error too, file bytes or not
      auto v = good;
      put(v, memsz_at, all, w);
      CHECK(elf_error(v).find("past the end of the address space") != std::string::npos);
    }
    {  // no PT_LOAD with file bytes
      auto v = make_elf(is64, 183, 0, {{1, 6, 0x1000, 0x100, {}}, {4, 4, 0, 0, pattern(4, 1)}});
      CHECK(elf_error(v).find("no loadable segments") != std::string::npos);
    }
    {  // rebased past the top of the address space
      tracecodec::elf::load_options opt;
      opt.load_address = all - 0x100;
      CHECK(elf_error(good, opt).find("past the end of the address space") != std::string::npos);
      if (!is64) {
        opt.load_address = 0x100000000ull;
        CHECK(elf_error(good, opt).find("beyond the 32-bit address space") != std::string::npos);
      }
    }
    // Truncated at every length: the file ends with segment bytes, so every prefix fails.
    for (std::size_t n = 0; n < good.size(); ++n) {
      CAPTURE(n);
      std::vector<std::uint8_t> v(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n));
      CHECK_FALSE(elf_error(v).empty());
    }
    // Every header and program-header byte set to a few values: never a crash or an
    // out-of-bounds read (the sanitizer builds check the latter); any regions it returns lie
    // inside its own segments.
    const std::size_t headers = eh + ph * 5;
    for (std::size_t i = 0; i < headers; ++i)
      for (const std::uint8_t x : {std::uint8_t{0}, std::uint8_t{0xff}, std::uint8_t{0x80},
                                   static_cast<std::uint8_t>(good[i] ^ 1), std::uint8_t{0x7f}}) {
        auto v = good;
        v[i] = x;
        for (const bool rebase : {false, true}) {
          tracecodec::elf::load_options opt;
          if (rebase) opt.load_address = 0x10000;
          const auto e = tracecodec::elf::parse(v.data(), v.size(), opt);
          if (!e.error.empty()) {
            CHECK(e.regions.empty());
            continue;
          }
          REQUIRE(e.regions.size() == e.segments.size());
          for (std::size_t k = 0; k < e.regions.size(); ++k)
            CHECK(e.regions[k].data == e.segments[k].data.data());
        }
      }
  }
  CHECK(tracecodec::elf::load("/nonexistent/file.elf").error.find("cannot read") != std::string::npos);
  CHECK(tracecodec::elf::parse(nullptr, 0).error == "not an ELF file");
}

// The loop that analyzes an atom element's atoms together (flow_analyzer::atom_run), with
// and without the memo of atom elements (flow_options::memo), against the general path one
// atom at a time (flow_options::atom_at_a_time), which the conformance and property tests
// also check: the first buffer of every corpus snapshot with memory, and copies of it with
// bytes changed at random (atom headers among them), with the return stack off as captured
// and forced on (no snapshot has it, and the loop follows returns itself). The decoders are
// kept from input to input, so the memo replays what other inputs left in it.
TEST_CASE("flow: atom elements analyzed in one loop give the flow of one atom at a time") {
  const std::vector<fs::path> snaps = corpus_snapshots();
  if (snaps.empty()) return;
  std::mt19937_64 rng(2026);
  std::size_t snapshots = 0, inputs = 0, ranges = 0, differing = 0, differing_memo = 0;
  std::uint64_t memo_hits = 0;
  for (const fs::path& snap : snaps) {
    const snapshot::loaded s = snapshot::load(snap.string());
    if (!s.error.empty() || s.regions.empty() || s.buffers.empty() || s.buffers[0].data.empty()) continue;
    ++snapshots;
    CAPTURE(snap.filename().string());
    program_image image(s.regions.data(), s.regions.size());
    for (const bool rs : {false, true}) {
      registers r = s.buffers[0].regs;
      if (rs) {
        r.trcidr0 |= 1u << 9;      // TRCIDR0.RETSTACK
        r.trcconfigr |= 1u << 12;  // TRCCONFIGR.RS
      }
      flow_options fast{s.arch}, slow{s.arch}, no_memo{s.arch};
      slow.atom_at_a_time = true;
      no_memo.memo = false;
      auto a = std::make_unique<flow_decoder<>>(r, image, fast);
      auto b = std::make_unique<flow_decoder<>>(r, image, slow);
      auto c = std::make_unique<flow_decoder<>>(r, image, no_memo);
      for (int it = 0; it < 40; ++it) {
        std::vector<std::uint8_t> t = s.buffers[0].data;
        for (int f = 0; it != 0 && f < 1 + static_cast<int>(rng() % 12); ++f) {
          std::uint8_t& byte = t[rng() % t.size()];
          byte = rng() % 2 ? static_cast<std::uint8_t>(rng()) : static_cast<std::uint8_t>(0xF8 | (rng() & 7));
        }
        std::vector<flow_element> fa, fb, fc;
        std::vector<std::uint64_t> ea, eb, ec;
        a->reset();
        b->reset();
        c->reset();
        a->decode(t.data(), t.size(), [&](const flow_element& f) { fa.push_back(f); },
                  [&](const diagnostic& d) { ea.push_back(d.offset); });
        b->decode(t.data(), t.size(), [&](const flow_element& f) { fb.push_back(f); },
                  [&](const diagnostic& d) { eb.push_back(d.offset); });
        c->decode(t.data(), t.size(), [&](const flow_element& f) { fc.push_back(f); },
                  [&](const diagnostic& d) { ec.push_back(d.offset); });
        ++inputs;
        for (const flow_element& f : fa) ranges += f.kind == flow_kind::instruction_range;
        if (fa != fb || ea != eb) ++differing;
        if (fc != fb || ec != eb) ++differing_memo;
      }
      memo_hits += a->analysis().memo_hits();
      CHECK(b->analysis().memo_hits() == 0);
      CHECK(c->analysis().memo_hits() == 0);
    }
  }
  MESSAGE(snapshots << " snapshots, " << inputs << " inputs, " << ranges << " instruction ranges, "
                    << memo_hits << " atom elements from the memo");
  CHECK(differing == 0);
  CHECK(differing_memo == 0);
  CHECK(memo_hits > ranges / 8);  // fewer than ranges: runs of two or more atom packets go as windows
  CHECK(snapshots >= 5);
  CHECK(ranges > 100000);
}

// flow_analyzer::process_atoms() keys the memo with the atom bits unmasked: bits above the run
// must only make a key of their own (a miss), never another run's replay. The flow decoder's
// pipeline built by hand, its atom packets handed over with random bits set above each run,
// gives the flow decoder's output: the first buffer of every corpus snapshot with memory, and
// copies with atom headers changed at random, the analyzer kept from input to input.
TEST_CASE("flow: bits above an atom run do not change its analysis (process_atoms)") {
  const std::vector<fs::path> snaps = corpus_snapshots();
  if (snaps.empty()) return;
  std::mt19937_64 rng(1206);
  std::size_t inputs = 0, dirty = 0, differing = 0;
  std::uint64_t memo_hits = 0;
  for (const fs::path& snap : snaps) {
    const snapshot::loaded s = snapshot::load(snap.string());
    if (!s.error.empty() || s.regions.empty() || s.buffers.empty() || s.buffers[0].data.empty()) continue;
    CAPTURE(snap.filename().string());
    program_image image(s.regions.data(), s.regions.size());
    const registers& r = s.buffers[0].regs;
    const flow_options o{s.arch};
    auto plain = std::make_unique<flow_decoder<>>(r, image, o);
    auto analyzer = std::make_unique<flow_analyzer<>>(r, image, o);
    for (int it = 0; it < 20; ++it) {
      std::vector<std::uint8_t> t = s.buffers[0].data;
      for (int f = 0; it != 0 && f < 1 + static_cast<int>(rng() % 12); ++f)
        t[rng() % t.size()] = static_cast<std::uint8_t>(0xC0 | (rng() & 0x3f));
      std::vector<flow_element> want, got;
      plain->reset();
      plain->decode(t.data(), t.size(), [&](const flow_element& f) { want.push_back(f); },
                    [](const diagnostic&) {});
      // flow_decoder's own steps (flow/decoder.hpp), with its sink's atoms() changed.
      auto out = [&](const flow_element& f) { got.push_back(f); };
      struct sink {
        flow_analyzer<>& flow;
        decltype(out)& on_flow;
        std::mt19937_64& rng;
        std::size_t& dirty;
        void operator()(const element& e) const { flow.process(e, on_flow); }
        void atoms(std::uint64_t offset, std::uint32_t bits, unsigned count) const {
          // None, the bit right above, the one above that (a run one atom longer, under a key
          // that packed the count as a bit above the pattern), or many.
          const std::uint32_t forms[4] = {0, 1, 2, static_cast<std::uint32_t>(rng())};
          const std::uint32_t above = count < 32 ? forms[rng() % 4] << count : 0;
          dirty += above != 0;
          flow.process_atoms(offset, bits | above, count, on_flow);
        }
      };
      element_reader<> reader(r);
      reader.atom_runs(true);
      reader.pass_discards(true);
      reader.pass_mispredicts(true);
      analyzer->reset();
      auto on_error = [&](const diagnostic& d) {
        if (d.code != error_code::unsynchronized && d.code != error_code::resolution_overflow &&
            d.code != error_code::invalid_config && d.code != error_code::unsupported_config)
          analyzer->lost_sync(d.offset + (d.length ? d.length : 1), out);
      };
      analyzer->begin(0, out);
      reader.decode_part(t.data(), t.size(), sink{*analyzer, out, rng, dirty}, on_error);
      analyzer->begin(t.size(), out);
      reader.decode_end(sink{*analyzer, out, rng, dirty}, on_error);
      analyzer->end(reader.last_packet_offset(), out);
      ++inputs;
      if (got != want) ++differing;
    }
    memo_hits += analyzer->memo_hits();
  }
  MESSAGE(inputs << " inputs, " << dirty << " atom runs with bits above them, " << memo_hits
                  << " atom elements from the memo");
  CHECK(inputs >= 100);
  CHECK(memo_hits > 10000);
  // The compact form hands every atom packet over as an element (no atoms() sink call).
  if (tracecodec::detail::compact)
    CHECK(dirty == 0);
  else
    CHECK(dirty > 10000);
  CHECK(differing == 0);
}

// Two to eight atom packets in a row go from the packet decoder's loop to the flow analyzer at
// once (flow_analyzer::process_atom_window), replayed from the window memo when it holds them;
// Target Address packets go there as their fields (process_target). The reference is the
// analysis without the memo (flow_options::memo = false: every atom packet through the block
// cache), fed 16 bytes at a time: the decoder's whole-buffer loop, which hands both over,
// needs 32 bytes ahead, so the reference gets neither. Inputs: the first buffer of every corpus
// snapshot with memory, with runs of 2-40 atom packets inserted before atom packets (copies of
// the atom headers found there, or random ones), some followed by a Mispredict, a Target
// Address, a Context and a Target Address, a Q and a Target Address (where Q packets are
// traced), or an Exception packet. Each input is decoded whole
// twice by the same decoder (the second time the memo holds what the first kept) and in random
// chunks (the windows fall elsewhere), with the return stack off as captured and forced on (no
// windows then).
TEST_CASE("flow: windows of two to eight atom packets give the flow of one packet at a time") {
  const std::vector<fs::path> snaps = corpus_snapshots();
  if (snaps.empty()) return;
  std::mt19937_64 rng(1207);
  std::size_t inputs = 0, differing = 0, ranges = 0, q_then_target = 0, cycle_counts = 0, q_cycle_count = 0;
  std::uint64_t window_hits = 0;
  for (const fs::path& snap : snaps) {
    const snapshot::loaded s = snapshot::load(snap.string());
    if (!s.error.empty() || s.regions.empty() || s.buffers.empty() || s.buffers[0].data.empty()) continue;
    CAPTURE(snap.filename().string());
    program_image image(s.regions.data(), s.regions.size());
    const std::vector<std::uint8_t>& base = s.buffers[0].data;
    // Where the atom packets are (packet boundaries: an insertion there keeps the stream whole).
    std::vector<std::size_t> atoms_at;
    decoder<> packets(s.buffers[0].regs);
    packets.decode(base.data(), base.size(), [&](const packet& p) {
      if (p.atom_count != 0 && base[p.offset] >= 0xC0) atoms_at.push_back(p.offset);  // D9.2.10
    }, [](const diagnostic&) {});
    if (atoms_at.empty()) continue;
    for (const bool rs : {false, true}) {
      registers r = s.buffers[0].regs;
      if (rs) {
        r.trcidr0 |= 1u << 9;      // TRCIDR0.RETSTACK
        r.trcconfigr |= 1u << 12;  // TRCCONFIGR.RS
      }
      flow_options windows{s.arch}, reference{s.arch};
      reference.memo = false;
      auto a = std::make_unique<flow_decoder<>>(r, image, windows);
      auto c = std::make_unique<flow_decoder<>>(r, image, windows);
      auto ref = std::make_unique<flow_decoder<>>(r, image, reference);
      // COMMOPT 1 with TRCCONFIGR.CCI: Cycle Counts formats 2 and 3 that commit nothing (D5.32,
      // D5.34), which the decode loop hands to the flow's cycle_count() without an element.
      const bool cycles = (r.trcidr0 >> 29 & 1u) && (r.trcconfigr >> 4 & 1u);
      auto cycle_count = [&](std::vector<std::uint8_t>& run) {
        if (rng() % 2) {
          run.push_back(static_cast<std::uint8_t>(0x10 | (rng() & 0xf)));  // format 3
        } else {
          run.push_back(static_cast<std::uint8_t>(0x0C | (rng() & 1)));  // format 2, F and BBBB
          run.push_back(static_cast<std::uint8_t>(0xF0 | (rng() & 0xf)));
        }
        ++cycle_counts;
      };
      for (int it = 0; it < 12; ++it) {
        std::vector<std::uint8_t> t = base;
        std::vector<std::size_t> at;
        for (int k = 0; k < 6; ++k) at.push_back(atoms_at[rng() % atoms_at.size()]);
        std::sort(at.rbegin(), at.rend());  // from the end: the places before stay where they were
        for (const std::size_t place : at) {
          std::vector<std::uint8_t> run;
          const std::size_t n = 2 + rng() % 39;
          for (std::size_t i = 0; i < n; ++i)
            run.push_back(rng() % 3 ? base[atoms_at[rng() % atoms_at.size()]]
                                    : static_cast<std::uint8_t>(0xC0 | (rng() & 0x3f)));
          const std::uint8_t address[2] = {0x95, static_cast<std::uint8_t>(rng() & 0x7f)};  // short, IS0
          switch (rng() % 6) {
            case 0: run.push_back(static_cast<std::uint8_t>(0x30 | (rng() & 3))); break;  // Mispredict
            case 1: run.insert(run.end(), address, address + 2); break;
            case 3:  // Context (the same, D5.54), then a Target Address, with the context held
              run.push_back(0x80);
              run.insert(run.end(), address, address + 2);
              break;
            case 4:  // Q with a count (D5.69-D5.75), then the Target Address that ends its range
              if (r.trcidr0 >> 15 & 1u) {  // TRCIDR0.QSUPP: counted Q packets
                run.push_back(0xAC);
                run.push_back(static_cast<std::uint8_t>(1 + rng() % 100));
                if (cycles && rng() % 2) {  // a Cycle Count while the Q waits for its target
                  cycle_count(run);
                  ++q_cycle_count;
                }
                run.insert(run.end(), address, address + 2);
                ++q_then_target;
              }
              break;
            case 2:  // Exception (D5.13): its header, one info byte, then an address packet
              run.push_back(0x06);
              run.push_back(static_cast<std::uint8_t>(rng() & 0x7e));
              run.insert(run.end(), address, address + 2);
              break;
            default:  // Cycle Counts, up to nine (a range is held behind eight at most)
              if (cycles)
                for (std::size_t k = 1 + rng() % 9; k != 0; --k) cycle_count(run);
              break;
          }
          t.insert(t.begin() + static_cast<std::ptrdiff_t>(place), run.begin(), run.end());
        }
        auto decode_whole = [&](flow_decoder<>& d, std::vector<flow_element>& f, std::vector<std::uint64_t>& e) {
          d.reset();
          d.decode(t.data(), t.size(), [&](const flow_element& x) { f.push_back(x); },
                   [&](const diagnostic& x) { e.push_back(x.offset); });
        };
        std::vector<flow_element> f1, f2, fc, fr;
        std::vector<std::uint64_t> e1, e2, ec, er;
        decode_whole(*a, f1, e1);
        decode_whole(*a, f2, e2);
        ref->reset();
        for (std::size_t i = 0; i < t.size(); i += 16)
          ref->decode_part(t.data() + i, std::min<std::size_t>(t.size() - i, 16),
                           [&](const flow_element& x) { fr.push_back(x); },
                           [&](const diagnostic& x) { er.push_back(x.offset); });
        ref->decode_end([&](const flow_element& x) { fr.push_back(x); },
                        [&](const diagnostic& x) { er.push_back(x.offset); });
        c->reset();
        for (std::size_t i = 0; i < t.size();) {
          const std::size_t n = std::min<std::size_t>(t.size() - i, 1 + rng() % 200);
          c->decode_part(t.data() + i, n, [&](const flow_element& x) { fc.push_back(x); },
                         [&](const diagnostic& x) { ec.push_back(x.offset); });
          i += n;
        }
        c->decode_end([&](const flow_element& x) { fc.push_back(x); },
                      [&](const diagnostic& x) { ec.push_back(x.offset); });
        ++inputs;
        for (const flow_element& f : fr) ranges += f.kind == flow_kind::instruction_range;
        CAPTURE(it);
        CHECK(f1 == fr);  // whole, the first time
        CHECK(e1 == er);
        CHECK(f2 == fr);  // whole again: the windows the first time kept
        CHECK(e2 == er);
        CHECK(fc == fr);  // in chunks
        CHECK(ec == er);
        differing += !(f1 == fr && e1 == er && f2 == fr && e2 == er && fc == fr && ec == er);
      }
      const std::uint64_t hits = a->analysis().window_hits() + c->analysis().window_hits();
      if (rs) CHECK(hits == 0);  // the return stack makes atoms depend on more than the key
      CHECK(ref->analysis().window_hits() == 0);
      window_hits += hits;
    }
  }
  MESSAGE(inputs << " inputs, " << ranges << " instruction ranges, " << window_hits << " windows from the memo, "
                 << cycle_counts << " cycle counts put in, " << q_cycle_count << " of them after a Q");
  CHECK(inputs >= 100);
  CHECK(ranges > 100000);
  CHECK(differing == 0);
  CHECK(q_then_target > 10);
  CHECK(cycle_counts > 200);
  CHECK(q_cycle_count > 5);
  if (tracecodec::detail::compact)  // no whole-buffer loop: no windows
    CHECK(window_hits == 0);
  else
    CHECK(window_hits > 30000);  // runs of eight alone gave 13,274: shorter windows are replayed too
}

// flow_decoder::invalidate() after the image's contents changed: what the block cache, the
// memo and the window memo hold goes, so the flow is a new decoder's over the new contents.
// The first corpus snapshot whose trace the window memo replays, its memory copied, decoded,
// then every seventh word of the copy made an A64 NOP.
TEST_CASE("flow: invalidate() forgets the blocks, the memo and the windows") {
  if (tracecodec::detail::compact) return;  // no windows there; the memo is tested above
  const std::vector<fs::path> snaps = corpus_snapshots();
  if (snaps.empty()) return;
  bool tested = false;
  for (const fs::path& snap : snaps) {
    const snapshot::loaded s = snapshot::load(snap.string());
    if (!s.error.empty() || s.regions.empty() || s.buffers.empty() || s.buffers[0].data.empty()) continue;
    CAPTURE(snap.filename().string());
    std::vector<std::vector<std::uint8_t>> bytes;
    std::vector<memory_region> regions = s.regions;
    for (memory_region& m : regions) {
      bytes.emplace_back(m.data, m.data + m.size);
      m.data = bytes.back().data();
    }
    program_image image(regions.data(), regions.size());
    const flow_options o{s.arch};
    const std::vector<std::uint8_t>& t = s.buffers[0].data;
    auto decode = [&](flow_decoder<>& d) {
      std::vector<flow_element> f;
      d.reset();
      d.decode(t.data(), t.size(), [&](const flow_element& x) { f.push_back(x); }, [](const diagnostic&) {});
      return f;
    };
    auto a = std::make_unique<flow_decoder<>>(s.buffers[0].regs, image, o);
    const std::vector<flow_element> before = decode(*a);
    decode(*a);
    if (a->analysis().window_hits() == 0) continue;
    for (std::vector<std::uint8_t>& b : bytes)
      for (std::size_t i = 0; i + 4 <= b.size(); i += 28) {
        b[i] = 0x1f;  // NOP, 0xd503201f
        b[i + 1] = 0x20;
        b[i + 2] = 0x03;
        b[i + 3] = 0xd5;
      }
    a->invalidate();
    const std::vector<flow_element> after = decode(*a);
    auto fresh = std::make_unique<flow_decoder<>>(s.buffers[0].regs, image, o);
    CHECK(after == decode(*fresh));
    CHECK(after != before);  // the new contents change the flow
    tested = true;
    break;
  }
  CHECK(tested);
}
