// A strict reader of the flat JSON objects a benchmark matrix writes (string, number and null
// values): returns the keys in order, or throws on anything that is not well-formed.
#pragma once

#include <cctype>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace ember_test {

inline std::vector<std::string> json_object_keys(std::string const& s) {
  std::size_t p = 0;
  auto fail = [&](char const* what) { throw std::runtime_error(std::string("bad JSON (") + what + ") at " + std::to_string(p) + ": " + s); };
  auto skip_space = [&] { while (p < s.size() && s[p] == ' ') ++p; };
  auto string_at = [&] {
    if (p >= s.size() || s[p] != '"') fail("expected a string");
    std::string out;
    for (++p; p < s.size() && s[p] != '"'; ++p) {
      if (s[p] == '\\') {
        if (++p >= s.size() || std::string("\"\\/bfnrtu").find(s[p]) == std::string::npos) fail("bad escape");
      } else if (static_cast<unsigned char>(s[p]) < 0x20) {
        fail("control character in a string");
      }
      out += s[p];
    }
    if (p >= s.size()) fail("unterminated string");
    ++p;
    return out;
  };
  std::vector<std::string> keys;
  if (s.empty() || s[p++] != '{') fail("expected {");
  for (;;) {
    skip_space();
    keys.push_back(string_at());
    skip_space();
    if (p >= s.size() || s[p++] != ':') fail("expected :");
    skip_space();
    if (p < s.size() && s[p] == '"') {
      string_at();
    } else if (s.compare(p, 4, "null") == 0) {
      p += 4;
    } else {
      if (p >= s.size() || !(s[p] == '-' || std::isdigit(static_cast<unsigned char>(s[p])))) fail("expected a value");
      char* end = nullptr;
      std::strtod(s.c_str() + p, &end);
      if (end == s.c_str() + p) fail("expected a value");
      p = std::size_t(end - s.c_str());
    }
    skip_space();
    if (p < s.size() && s[p] == ',') {
      ++p;
      continue;
    }
    if (p < s.size() && s[p] == '}' && p + 1 == s.size()) return keys;
    fail("expected , or } at the end");
  }
}

}  // namespace ember_test
