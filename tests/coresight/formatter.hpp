// SPDX-License-Identifier: Apache-2.0
// For the CoreSight tests: a frame formatter written from the formatter rules (the encoding
// side the library does not have), random interleavings of several sources, and readers for
// the ETMv4 conformance corpus (../shared/conformance/etmv4).
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace test_formatter {

using bytes = std::vector<std::uint8_t>;

// ---- a formatter for the tests, from the frame rules ----------------------------------------
// Items (trace ID, byte) in order; frames are filled greedily. At an even byte 2k: an item of
// another source is announced by an ID byte (aux bit k = 0: the change takes effect at once,
// byte 2k + 1 is the new source's); when the item there is the current source's but the one
// after it is not, the change is delayed (aux bit k = 1: byte 2k + 1 is still the current
// source's). Randomly, a delayed change is used where an immediate one would do, and an ID
// byte repeats the current ID. The last frame is padded under the null ID 0. `where`, when
// given, gets each item's offset in the output.
struct item {
  std::uint8_t id, value;
};
inline bytes format_frames(const std::vector<item>& items, std::mt19937& rng, bool extras = true,
                           std::vector<std::uint64_t>* where = nullptr) {
  bytes out;
  if (where) where->assign(items.size(), 0);
  auto put = [&](std::size_t i, unsigned at) {
    if (where) (*where)[i] = out.size() + at;
  };
  std::size_t i = 0;
  int cur = -1;
  auto coin = [&](unsigned one_in) { return extras && rng() % one_in == 0; };
  while (i < items.size()) {
    std::uint8_t f[16]{};
    std::uint8_t aux = 0;
    for (unsigned k = 0; k < 8; ++k) {
      const unsigned e = 2 * k;
      const bool odd_slot = k < 7;
      auto id_byte = [&](std::uint8_t id) { f[e] = static_cast<std::uint8_t>(id << 1 | 1); };
      auto data_even = [&](std::uint8_t v) {
        f[e] = static_cast<std::uint8_t>(v & 0xFE);
        aux = static_cast<std::uint8_t>(aux | ((v & 1u) << k));
      };
      if (i >= items.size()) {  // padding: the null source
        if (cur != 0) {
          id_byte(0);
          cur = 0;
        }
        if (odd_slot) f[e + 1] = 0;
        continue;
      }
      const item a = items[i];
      const bool last = i + 1 == items.size();  // after it, the padding's null source
      const bool next_differs = last || items[i + 1].id != a.id;
      if (a.id != cur) {  // an immediate change
        id_byte(a.id);
        cur = a.id;
        if (odd_slot) {
          put(i, e + 1);
          f[e + 1] = items[i++].value;
        }
        continue;
      }
      if (odd_slot && (next_differs || coin(8))) {
        // delayed: byte 2k + 1 is still this source's; the change (or a repeat) follows it
        const std::uint8_t to = last ? 0 : next_differs ? items[i + 1].id : a.id;
        id_byte(to);
        aux = static_cast<std::uint8_t>(aux | (1u << k));
        put(i, e + 1);
        f[e + 1] = items[i++].value;
        cur = to;
        continue;
      }
      if (odd_slot && coin(16)) {  // a repeated ID byte, taking effect at once
        id_byte(a.id);
        put(i, e + 1);
        f[e + 1] = items[i++].value;
        continue;
      }
      put(i, e);
      data_even(items[i++].value);
      if (odd_slot) {
        // The rule above leaves an item of the current source for the odd byte.
        REQUIRE((i < items.size() && items[i].id == cur));
        put(i, e + 1);
        f[e + 1] = items[i++].value;
      }
    }
    f[15] = aux;
    out.insert(out.end(), f, f + 16);
  }
  return out;
}

inline std::map<int, bytes> expected_streams(const std::vector<item>& items) {
  std::map<int, bytes> m;
  for (const item& it : items) m[it.id].push_back(it.value);
  return m;
}

// Sources take turns in runs of random length (1-40 bytes); bytes are random.
inline std::vector<item> random_items(std::mt19937& rng, std::size_t n, const std::vector<std::uint8_t>& ids) {
  std::vector<item> v;
  while (v.size() < n) {
    const std::uint8_t id = ids[rng() % ids.size()];
    const std::size_t run = 1 + rng() % 40;
    for (std::size_t k = 0; k < run && v.size() < n; ++k)
      v.push_back({id, static_cast<std::uint8_t>(rng())});
  }
  return v;
}

// ---- conformance corpus ---------------------------------------------------------------------
inline std::string etmv4_dir() {
  const char* d = std::getenv("TRACECODEC_ETMV4_DIR");
  return d ? d : "../shared/conformance/etmv4";
}
inline bytes slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}
// `key=` in section `[section]` of an ini file.
inline std::string ini_value(const std::string& path, const std::string& section, const std::string& key) {
  std::ifstream f(path);
  std::string line;
  bool in = false;
  while (std::getline(f, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty() && line[0] == '[') {
      in = line == "[" + section + "]";
      continue;
    }
    if (in && line.rfind(key + "=", 0) == 0) return line.substr(key.size() + 1);
  }
  return "";
}
// Each listed packet's raw bytes, concatenated per trace ID ("ID:<hex>; [0x.. 0x.. ];").
// at_idx, when given: per ID, each listed line's Idx by the place of its first byte in m[ID].
inline std::map<int, bytes> listed_streams(
    const std::string& path, std::map<int, std::map<std::size_t, std::uint64_t>>* at_idx = nullptr) {
  std::map<int, bytes> m;
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line)) {
    const std::size_t idx = line.find("Idx:");
    if (idx == std::string::npos) continue;
    const std::size_t id = line.find("; ID:", idx);
    const std::size_t open = line.find("; [", idx);
    if (id == std::string::npos || open == std::string::npos) continue;
    const int trace_id = static_cast<int>(std::strtol(line.c_str() + id + 5, nullptr, 16));
    const std::size_t close = line.find(']', open);
    if (at_idx)
      (*at_idx)[trace_id][m[trace_id].size()] = std::strtoull(line.c_str() + idx + 4, nullptr, 10);
    std::istringstream raw(line.substr(open + 3, close - open - 3));
    std::string tok;
    while (raw >> tok) m[trace_id].push_back(static_cast<std::uint8_t>(std::strtoul(tok.c_str(), nullptr, 16)));
  }
  return m;
}

}  // namespace test_formatter
