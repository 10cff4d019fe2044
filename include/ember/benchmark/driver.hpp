#pragma once
/// \file
/// `drive(argc, argv, times_dir, cpu_budget_s, cuda_budget_s, configurations)`: the `main` of a
/// matrix built by `ember_add_benchmark_matrix`, one function per configuration (each in its own
/// translation unit). Reads the run-time axes from the command line, runs the configurations
/// (those whose id contains `--only`'s text), writes one JSON line per configuration and prints
/// the table with the compile-time budget check.
///
///     --chains 64,128   chain counts (one row each)      --warmup 1000   warm-up transitions
///     --draws 1000      kept draws per chain              --seed 1        0 to 2^64 - 1
///     --replicates N    each configuration on seeds seed … seed + N − 1, a row each, and a table
///                       of their spread (mean, range, the mean's 95 % interval)
///     --only TEXT       configurations whose id contains TEXT (ids: target__sampler__precision__backend)
///     --jsonl FILE      JSON lines to FILE instead of standard output, rewritten durably after
///                       every configuration (io/detail/durable_file.hpp), so the rows measured
///                       so far survive a failure later in the run
///     --host-cache MIB  keep at most MIB MiB of freed host memory for the next configuration
///                       (host_cache.hpp; default 1 GiB or an eighth of usable memory; 0: every
///                       configuration's arrays and recording in fresh memory, page faults and all)

#include <ember/benchmark/axes.hpp>
#include <ember/benchmark/report.hpp>
#include <ember/host_cache.hpp>
#include <ember/io/detail/durable_file.hpp>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <initializer_list>
#include <iostream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ember::benchmark {

/// One generated configuration: its id and the function that measures it.
using configuration_fn = void (*)(report&, run_axes const&);

namespace detail {
inline std::int64_t positive_integer(std::string const& flag, std::string const& text) {
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (std::exception const&) {
    used = 0;
  }
  if (used != text.size() || v < 1)
    throw std::invalid_argument("ember benchmark: " + flag + " takes a positive integer, got '" + text + "'");
  return v;
}
// 0 to 2⁶⁴ − 1, digits only (std::stoull alone would take "-1" as 2⁶⁴ − 1).
inline std::uint64_t unsigned_integer(std::string const& flag, std::string const& text) {
  std::size_t used = 0;
  unsigned long long v = 0;
  bool const digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  try {
    if (digits) v = std::stoull(text, &used);
  } catch (std::exception const&) {
    used = 0;
  }
  if (!digits || used != text.size())
    throw std::invalid_argument("ember benchmark: " + flag + " takes an integer from 0 to 2^64 - 1, got '" + text + "'");
  return v;
}
}  // namespace detail

/// The axes and options from the command line; throws `std::invalid_argument` with a sentence
/// naming the bad flag.
struct command_line {
  run_axes axes;
  std::string only, jsonl;
  long long host_cache_mib = -1;  ///< −1: the cache's default limit
  bool help = false;

  static command_line parse(int argc, char** argv) {
    command_line c;
    for (int i = 1; i < argc; ++i) {
      std::string const flag = argv[i];
      if (flag == "--help" || flag == "-h") {
        c.help = true;
        continue;
      }
      if (i + 1 >= argc)
        throw std::invalid_argument("ember benchmark: " + flag + " needs a value (see --help)");
      std::string const value = argv[++i];
      if (flag == "--chains") {
        c.axes.chains.clear();
        std::size_t from = 0;
        while (from <= value.size()) {
          std::size_t const comma = std::min(value.find(',', from), value.size());
          c.axes.chains.push_back(detail::positive_integer(flag, value.substr(from, comma - from)));
          from = comma + 1;
        }
      } else if (flag == "--warmup") {
        c.axes.warmup = detail::positive_integer(flag, value);
      } else if (flag == "--draws") {
        c.axes.draws = detail::positive_integer(flag, value);
      } else if (flag == "--seed") {
        c.axes.seed = detail::unsigned_integer(flag, value);
      } else if (flag == "--replicates") {
        c.axes.replicates = detail::positive_integer(flag, value);
      } else if (flag == "--only") {
        c.only = value;
      } else if (flag == "--jsonl") {
        c.jsonl = value;
      } else if (flag == "--host-cache") {
        // 0 (no reuse) or MiB up to 2⁴⁰, so that the shift to bytes cannot wrap.
        std::int64_t mib = -1;
        if (value == "0")
          mib = 0;
        else
          try {
            mib = detail::positive_integer(flag, value);
          } catch (std::invalid_argument const&) {
          }
        if (mib < 0 || mib > (std::int64_t(1) << 40))
          throw std::invalid_argument("ember benchmark: --host-cache takes MiB from 0 to 2^40, got '" + value + "'");
        c.host_cache_mib = mib;
      } else {
        throw std::invalid_argument("ember benchmark: unknown option " + flag + " (see --help)");
      }
    }
    if (c.axes.draws < 4)
      throw std::invalid_argument("ember benchmark: --draws must be at least 4 (split-R̂ needs two halves of 2)");
    return c;
  }
};

inline int drive(int argc, char** argv, char const* times_dir, double cpu_budget_s, double cuda_budget_s,
                 std::initializer_list<std::pair<char const*, configuration_fn>> configurations) {
  command_line cl;
  try {
    cl = command_line::parse(argc, argv);
  } catch (std::invalid_argument const& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  if (cl.help) {
    std::cout << "usage: " << argv[0]
              << " [--chains 64,128] [--warmup 1000] [--draws 1000] [--seed 1] [--replicates 1] [--only TEXT] [--jsonl FILE]"
                 " [--host-cache MIB]\n"
                 "configurations:\n";
    for (auto const& [id, f] : configurations)
      std::cout << "  " << id << "\n";
    return 0;
  }
  std::vector<std::pair<char const*, configuration_fn>> chosen;
  for (auto const& c : configurations)
    if (std::string(c.first).find(cl.only) != std::string::npos) chosen.push_back(c);
  if (chosen.empty()) {
    std::cerr << "ember benchmark: --only '" << cl.only << "' matches no configuration (--help lists them)\n";
    return 2;
  }
  // JSON lines for --jsonl are gathered here and the file rewritten after every configuration.
  std::ostringstream lines;
  auto save_lines = [&] {
    if (cl.jsonl.empty()) return;
    ember::detail::durable_file f(cl.jsonl, "ember benchmark: --jsonl");
    f.write(lines.str());
    f.commit();
  };
  try {
    save_lines();  // an unwritable path is refused before any measurement
  } catch (std::exception const& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  if (cl.host_cache_mib >= 0) set_host_cache_limit(std::size_t(cl.host_cache_mib) << 20);
  report out(cl.jsonl.empty() ? &std::cout : &lines, times_dir);
  int failed = 0;
  for (auto const& [id, f] : chosen) {
    // A configuration that throws (a refusal, a failed allocation) is reported and counted; the
    // rows before and after it are kept.
    try {
      f(out, cl.axes);
    } catch (std::exception const& e) {
      ++failed;
      std::cerr << "ember benchmark: " << id << " failed: " << e.what() << "\n";
    }
    try {
      save_lines();
    } catch (std::exception const& e) {
      std::cerr << e.what() << "\n";
      return 2;
    }
  }
  out.print_table(std::cout, cpu_budget_s, cuda_budget_s);
  if (failed) std::cerr << "ember benchmark: " << failed << " of " << chosen.size() << " configurations failed\n";
  return failed ? 1 : 0;
}

}  // namespace ember::benchmark
