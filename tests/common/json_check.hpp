// SPDX-License-Identifier: Apache-2.0
// A strict little JSON reader for the format tests: parses one object and returns each
// top-level key with the raw text of its value; any syntax error or duplicate key fails.
#pragma once

#include <cstddef>
#include <map>
#include <string>

namespace test {

class json_object {
 public:
  explicit json_object(const std::string& text) : s_(text) {
    ok_ = object(true) && (skip(), i_ == s_.size());
  }
  bool ok() const { return ok_; }
  bool has(const std::string& key) const { return members_.count(key) != 0; }
  // The value's JSON text: "1000", "null", "\"text\"", "[\"t\"]".
  std::string operator[](const std::string& key) const {
    const auto it = members_.find(key);
    return it == members_.end() ? std::string("<missing>") : it->second;
  }
  std::size_t size() const { return members_.size(); }

 private:
  void skip() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t')) ++i_;
  }
  bool literal(const char* word) {
    const std::string w = word;
    if (s_.compare(i_, w.size(), w) != 0) return false;
    i_ += w.size();
    return true;
  }
  bool string(std::string* out) {
    if (i_ >= s_.size() || s_[i_] != '"') return false;
    std::string v;
    for (++i_; i_ < s_.size(); ++i_) {
      const char c = s_[i_];
      if (c == '"') {
        ++i_;
        if (out) *out = v;
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c == '\\') {
        if (++i_ >= s_.size()) return false;
        const char e = s_[i_];
        if (e == 'u') {
          if (i_ + 4 >= s_.size()) return false;
          i_ += 4;
        } else if (std::string("\"\\/bfnrt").find(e) == std::string::npos) {
          return false;
        }
      }
      v += c;
    }
    return false;
  }
  bool number() {
    const std::size_t start = i_;
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
    const std::size_t digits = i_ - start;
    return digits > 0 && !(digits > 1 && s_[start] == '0');
  }
  bool value() {
    skip();
    if (i_ >= s_.size()) return false;
    const char c = s_[i_];
    if (c == '"') return string(nullptr);
    if (c == '{') return object(false);
    if (c == '[') {
      ++i_;
      skip();
      if (i_ < s_.size() && s_[i_] == ']') return ++i_, true;
      for (;;) {
        if (!value()) return false;
        skip();
        if (i_ < s_.size() && s_[i_] == ',') { ++i_; continue; }
        if (i_ < s_.size() && s_[i_] == ']') return ++i_, true;
        return false;
      }
    }
    if (c == 'n') return literal("null");
    if (c == 't') return literal("true");
    if (c == 'f') return literal("false");
    return number();
  }
  bool object(bool top) {
    skip();
    if (i_ >= s_.size() || s_[i_] != '{') return false;
    ++i_;
    skip();
    if (i_ < s_.size() && s_[i_] == '}') return ++i_, true;
    for (;;) {
      skip();
      std::string key;
      if (!string(&key)) return false;
      skip();
      if (i_ >= s_.size() || s_[i_] != ':') return false;
      ++i_;
      skip();
      const std::size_t start = i_;
      if (!value()) return false;
      if (top && !members_.emplace(key, s_.substr(start, i_ - start)).second) return false;
      skip();
      if (i_ < s_.size() && s_[i_] == ',') { ++i_; continue; }
      if (i_ < s_.size() && s_[i_] == '}') return ++i_, true;
      return false;
    }
  }

  std::string s_;
  std::size_t i_ = 0;
  bool ok_ = false;
  std::map<std::string, std::string> members_;
};

}  // namespace test
