#pragma once
// A seeded mutation fuzzer for ember's file readers (issue 27): no libFuzzer needed. Each
// program builds valid inputs in-process with ember's own writers, mutates them (bit flips,
// interesting bytes, truncation, inserted, duplicated and deleted chunks, splices of two inputs,
// 2/4/8-byte fields overwritten with boundary integers, tokens of the format), feeds each to its
// reader and requires that the reader either accepts the input or refuses it with
// std::runtime_error or std::invalid_argument whose message is one line starting with "ember::".
// Any other exception fails the run at once (it prints the iteration; the run is reproducible
// from its count and seed); a crash, a sanitizer report or a leak fails it by itself.
//
//   fuzz_<reader> [iterations (default 2000)] [seed (default 1)]
//   fuzz_<reader> --input FILE      runs one saved input (a failure is saved as
//                                   fuzz-<reader>-failure.bin in the working directory)
//   fuzz_<reader> --write-seeds DIR writes the seeds, a corpus for the libFuzzer build
//
// It ends with "N inputs, A accepted, R refused". Accepted mutated inputs join a small corpus
// that later iterations mutate further, so mutations compound past the first check that refuses.
// With EMBER_FUZZ_STATS set, each refusal's message goes to stderr (to see which checks the
// inputs reach) and the slowest input is named. Built with -DEMBER_LIBFUZZER (and
// -fsanitize=fuzzer), the same target is LLVMFuzzerTestOneInput.

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

#include <unistd.h>

namespace ember_fuzz {

/// A reader under test: true if it accepted the input; a refusal throws.
using target_fn = std::function<bool(std::string const&)>;

struct reader {
  std::string name;                   ///< fuzz_<name>
  std::vector<std::string> seeds;     ///< valid inputs
  std::vector<std::string> tokens;    ///< pieces of the format to insert or overwrite with
  target_fn target;
  std::function<void(std::string&, std::mt19937_64&)> fix;  ///< optional: mends checksums after mutation
  bool printable_messages = true;     ///< refusals must be printable ASCII (not file bytes)
  std::string scratch;                ///< a scratch file to remove at the end
};

/// A scratch file of this process for readers that take a path: in /dev/shm where there is one
/// (memory; on ext4 a truncated and rewritten file is flushed to disk on close, 15x slower).
inline std::string scratch_path(std::string const& name) {
  std::error_code ec;
  auto const dir = std::filesystem::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0
                       ? std::filesystem::path("/dev/shm")
                       : std::filesystem::temp_directory_path();
  return (dir / ("ember_fuzz_" + name + "_" + std::to_string(::getpid()))).string();
}
inline void write_file(std::string const& path, std::string const& bytes) {
  std::remove(path.c_str());  // a new file, not a truncated one (see scratch_path)
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), std::streamsize(bytes.size()));
  if (!f) {
    std::cerr << "fuzz: cannot write " << path << "\n";
    std::exit(2);
  }
}
inline std::string read_file(std::string const& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

class mutator {
 public:
  mutator(std::uint64_t seed, std::vector<std::string> const& tokens) : rng_(seed), tokens_(tokens) {}
  std::mt19937_64& rng() { return rng_; }
  std::size_t below(std::size_t n) { return n ? std::size_t(rng_() % n) : 0; }

  /// One to eight mutations of `s`; `other` is a second input for splices.
  std::string mutate(std::string s, std::string const& other) {
    int const count = 1 + int(std::min<std::uint64_t>(7, std::countr_zero(rng_() | (1ull << 7))));  // 1: 1/2, 2: 1/4, ...
    for (int k = 0; k < count; ++k) once(s, other);
    if (s.size() > (std::size_t(1) << 20)) s.resize(std::size_t(1) << 20);
    return s;
  }

 private:
  std::mt19937_64 rng_;
  std::vector<std::string> const& tokens_;

  std::uint64_t boundary(std::size_t size) {
    static constexpr std::uint64_t values[] = {0, 1, 2, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff, 0x10000,
                                               0x7fffffffu, 0x80000000u, 0xfffffffeu, 0xffffffffu, 0x100000000ull,
                                               1ull << 62, 1ull << 63, ~0ull, ~0ull - 15, ~0ull - 7, ~0ull >> 1};
    switch (below(4)) {
      case 0: return size + below(3) - 1;  // around the input's size
      case 1: return below(64);
      default: return values[below(std::size(values))];
    }
  }
  void put(std::string& s, std::size_t at, std::uint64_t v, int bytes, bool big_endian) {
    for (int i = 0; i < bytes && at + std::size_t(i) < s.size(); ++i)
      s[at + std::size_t(i)] = char((v >> (8 * (big_endian ? bytes - 1 - i : i))) & 0xff);
  }
  void once(std::string& s, std::string const& other) {
    static constexpr unsigned char interesting[] = {0, 1, 0x7f, 0x80, 0xff, 0xfe, '0', '9', '-', ' ', ',', '\n', '\'', '(', ')', '{', '}', 'L'};
    std::size_t const n = s.size();
    switch (below(12)) {
      case 0:  // flip a bit
        if (n) s[below(n)] ^= char(1 << below(8));
        break;
      case 1:  // an interesting byte
        if (n) s[below(n)] = char(interesting[below(std::size(interesting))]);
        break;
      case 2:  // a random byte
        if (n) s[below(n)] = char(rng_());
        break;
      case 3:  // truncate
        s.resize(below(n + 1));
        break;
      case 4: {  // duplicate a chunk somewhere
        if (!n) break;
        std::size_t const a = below(n), len = 1 + below(std::min<std::size_t>(n - a, below(2) ? 16 : 512));
        s.insert(below(n + 1), s.substr(a, len));
        break;
      }
      case 5: {  // delete a chunk
        if (!n) break;
        std::size_t const a = below(n);
        s.erase(a, 1 + below(std::min<std::size_t>(n - a, 64)));
        break;
      }
      case 6:  // splice: a prefix of one input and a suffix of the other
        s = s.substr(0, below(n + 1)) + other.substr(below(other.size() + 1));
        break;
      case 7:
      case 8: {  // a 2, 4 or 8-byte field set to a boundary integer (mostly little-endian)
        if (!n) break;
        int const bytes = 2 << below(3);
        put(s, below(n), boundary(n), bytes, below(8) == 0);
        break;
      }
      case 9:  // a token inserted
        if (!tokens_.empty()) s.insert(below(n + 1), tokens_[below(tokens_.size())]);
        break;
      case 10:  // a token overwriting bytes
        if (!tokens_.empty() && n) {
          auto const& t = tokens_[below(tokens_.size())];
          std::size_t const at = below(n);
          s.replace(at, std::min(t.size(), n - at), t);
        }
        break;
      default: {  // random bytes inserted
        std::string r(1 + below(16), '\0');
        for (auto& c : r) c = char(rng_());
        s.insert(below(n + 1), r);
        break;
      }
    }
  }
};

// What happened to one input.
enum class outcome { accepted, refused };

inline std::string shown(std::string const& m) {
  std::string out;
  for (char c : m.substr(0, 300)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out;
}

// Saves a failing input as fuzz-<name>-failure.bin in the working directory (for --input).
inline void save_failure(reader const& r, std::string const& bytes) {
  std::string const path = "fuzz-" + r.name + "-failure.bin";
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
  std::cerr << "the input is saved as " << path << "\n";
  if (!r.scratch.empty()) std::remove(r.scratch.c_str());
}

// Runs the target on `bytes`, checks the exception if any; exits with 1 on a bad one.
inline outcome run_one(reader const& r, std::string const& bytes, std::string const& where, std::size_t& unprintable) {
  std::string message, kind;
  try {
    r.target(bytes);
    return outcome::accepted;
  } catch (std::runtime_error const& e) {
    message = e.what();
    kind = "std::runtime_error";
  } catch (std::invalid_argument const& e) {
    message = e.what();
    kind = "std::invalid_argument";
  } catch (std::exception const& e) {
    std::cerr << "FAIL fuzz_" << r.name << " " << where << ": a " << typeid(e).name()
              << " escaped (a reader refuses with std::runtime_error or std::invalid_argument): " << shown(e.what()) << "\n";
    save_failure(r, bytes);
    std::exit(1);
  } catch (...) {
    std::cerr << "FAIL fuzz_" << r.name << " " << where << ": an exception that is not a std::exception escaped\n";
    save_failure(r, bytes);
    std::exit(1);
  }
  bool printable = true;
  for (char c : message) printable &= c >= 0x20 && c < 0x7f;
  if (message.rfind("ember::", 0) != 0 || message.size() > 2000 || (r.printable_messages && !printable)) {
    std::cerr << "FAIL fuzz_" << r.name << " " << where << ": a " << kind << " that is not one line starting with \"ember::\": \""
              << shown(message) << "\"\n";
    save_failure(r, bytes);
    std::exit(1);
  }
  unprintable += !printable;
  if (std::getenv("EMBER_FUZZ_STATS")) {  // which refusals, digits and quoted names dropped
    std::string key;
    for (std::size_t i = message.find(' ', message.find(' ') + 1) + 1; i > 0 && i < message.size() && key.size() < 90; ++i)
      if (!(message[i] >= '0' && message[i] <= '9')) key += message[i];
    std::cerr << "refusal: " << shown(key) << "\n";
  }
  return outcome::refused;
}

inline int main(reader r, int argc, char** argv) {
  std::size_t unprintable = 0;
  if (argc == 3 && std::string(argv[1]) == "--write-seeds") {  // a corpus for libFuzzer
    for (std::size_t k = 0; k < r.seeds.size(); ++k) {
      std::string const path = std::string(argv[2]) + "/" + r.name + "_seed_" + std::to_string(k);
      std::ofstream(path, std::ios::binary).write(r.seeds[k].data(), std::streamsize(r.seeds[k].size()));
    }
    std::cout << r.seeds.size() << " seeds written to " << argv[2] << "\n";
    return 0;
  }
  if (argc == 3 && std::string(argv[1]) == "--input") {
    auto const bytes = read_file(argv[2]);
    bool const ok = run_one(r, bytes, std::string("input ") + argv[2], unprintable) == outcome::accepted;
    std::cout << "1 input, " << (ok ? "accepted" : "refused") << "\n";
    return 0;
  }
  std::uint64_t const iterations = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2000;
  std::uint64_t const seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1;
  auto const start = std::chrono::steady_clock::now();
  for (std::size_t k = 0; k < r.seeds.size(); ++k)
    if (run_one(r, r.seeds[k], "seed " + std::to_string(k), unprintable) != outcome::accepted) {
      std::cerr << "FAIL fuzz_" << r.name << ": valid seed " << k << " is refused\n";
      return 1;
    }
  mutator m(seed, r.tokens);
  std::vector<std::string> corpus = r.seeds;  // the seeds and mutated inputs that were accepted
  std::uint64_t accepted = 0, refused = 0, slowest_at = 0;
  double slowest = 0;
  for (std::uint64_t i = 0; i < iterations; ++i) {
    std::string const& base = corpus[m.below(4) == 0 ? m.below(corpus.size()) : m.below(r.seeds.size())];
    std::string input = m.mutate(base, corpus[m.below(corpus.size())]);
    if (r.fix && m.below(4) != 0) r.fix(input, m.rng());
    auto const t0 = std::chrono::steady_clock::now();
    auto const o = run_one(r, input, "iteration " + std::to_string(i) + " (seed " + std::to_string(seed) + ")", unprintable);
    double const dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (dt > slowest) slowest = dt, slowest_at = i;
    if (o == outcome::accepted) {
      ++accepted;
      if (corpus.size() < 512 && input != base) corpus.push_back(std::move(input));
    } else {
      ++refused;
    }
  }
  if (!r.scratch.empty()) std::remove(r.scratch.c_str());
  double const seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "fuzz_" << r.name << " (seed " << seed << ", " << seconds << " s): " << iterations << " inputs, " << accepted
            << " accepted, " << refused << " refused";
  if (unprintable) std::cout << " (" << unprintable << " refusals quote bytes that are not printable)";
  if (std::getenv("EMBER_FUZZ_STATS")) std::cout << "; slowest input: iteration " << slowest_at << ", " << slowest << " s";
  std::cout << "\n";
  return 0;
}

}  // namespace ember_fuzz

// The program's entry: main(), or with -DEMBER_LIBFUZZER libFuzzer's entry (its own corpus and
// mutations; `make_reader()` gives the target and the message checks).
#ifdef EMBER_LIBFUZZER
#define EMBER_FUZZ_MAIN(make_reader)                                                       \
  extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {      \
    static ember_fuzz::reader const r = make_reader();                                     \
    std::size_t unprintable = 0;                                                            \
    ember_fuzz::run_one(r, std::string(reinterpret_cast<char const*>(data), size), "input", \
                        unprintable);                                                       \
    return 0;                                                                               \
  }
#else
#define EMBER_FUZZ_MAIN(make_reader) \
  int main(int argc, char** argv) { return ember_fuzz::main(make_reader(), argc, argv); }
#endif
