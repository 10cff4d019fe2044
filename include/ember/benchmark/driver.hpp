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
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <type_traits>
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

/// How the configurations are shared out over processes (ember/mpi.hpp's `mpi::drive`): process
/// `rank` of `size` runs the chosen configurations rank, rank + size, ... and `gather` hands
/// process 0 every process's bytes in rank order (empty elsewhere), from which it writes the
/// JSON lines and the table in configuration order. One process by default.
struct matrix_share {
  int rank = 0, size = 1;
  std::function<std::vector<std::string>(std::string const&)> gather;
};

namespace detail {
// A row as bytes and back, for matrix_share::gather: every field, in one order, both ways.
template <class Io>
void each_field(configuration_metrics& m, Io&& io) {
  io(m.impl), io(m.target), io(m.sampler), io(m.precision), io(m.backend), io(m.chains), io(m.warmup), io(m.draws);
  io(m.seed), io(m.dim), io(m.compile_s), io(m.warmup_s), io(m.sampling_s), io(m.grads_warmup), io(m.grads_sampling);
  io(m.ess_bulk_x), io(m.ess_bulk_x2), io(m.ess_tail_x), io(m.ess_min), io(m.ess_per_s), io(m.ess_per_grad);
  io(m.ess_per_s_with_warmup), io(m.ess_per_grad_with_warmup), io(m.grads_to_b2_avg), io(m.grads_to_b2_max);
  io(m.b2_avg), io(m.b2_max), io(m.divergences), io(m.rhat_max), io(m.acceptance), io(m.target_acceptance);
  io(m.harmonic_target), io(m.health), io(m.skipped), io(m.threads), io(m.machine), io(m.z_max);
}
inline void pack_row(std::string& out, configuration_metrics m) {
  each_field(m, [&](auto const& v) {
    if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>) {
      std::uint64_t const n = v.size();
      out.append(reinterpret_cast<char const*>(&n), sizeof n);
      out += v;
    } else {
      out.append(reinterpret_cast<char const*>(&v), sizeof v);
    }
  });
}
inline configuration_metrics unpack_row(std::string const& in, std::size_t& at) {
  configuration_metrics m;
  auto take = [&](void* dst, std::size_t n) {
    if (at + n > in.size()) throw std::runtime_error("ember benchmark: a process's rows are cut short");
    std::memcpy(dst, in.data() + at, n);
    at += n;
  };
  each_field(m, [&](auto& v) {
    if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>) {
      std::uint64_t n = 0;
      take(&n, sizeof n);
      if (at + n > in.size()) throw std::runtime_error("ember benchmark: a process's rows are cut short");
      v.assign(in.data() + at, n);
      at += n;
    } else {
      take(&v, sizeof v);
    }
  });
  return m;
}
}  // namespace detail

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
                 std::initializer_list<std::pair<char const*, configuration_fn>> configurations,
                 matrix_share const& share = {}) {
  bool const root = share.rank == 0;
  command_line cl;
  try {
    cl = command_line::parse(argc, argv);
  } catch (std::invalid_argument const& e) {
    if (root) std::cerr << e.what() << "\n";
    return 2;
  }
  if (cl.help) {
    if (!root) return 0;
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
    if (root) std::cerr << "ember benchmark: --only '" << cl.only << "' matches no configuration (--help lists them)\n";
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
  if (root) try {
      save_lines();  // an unwritable path is refused before any measurement
    } catch (std::exception const& e) {
      std::cerr << e.what() << "\n";
      if (share.size == 1) return 2;
      cl.jsonl.clear();  // the other processes are running: finish, and write no file
    }
  if (cl.host_cache_mib >= 0) set_host_cache_limit(std::size_t(cl.host_cache_mib) << 20);
  // Shared out, each process keeps its rows (no JSON) for process 0, which writes them in order.
  bool const shared = share.size > 1;
  report out(shared ? nullptr : cl.jsonl.empty() ? &std::cout : &lines, times_dir);
  int failed = 0;
  std::string mine;  // shared: (configuration index, failed, its rows) of this process's configurations
  for (std::size_t j = 0; j < chosen.size(); ++j) {
    if (shared && int(j % std::size_t(share.size)) != share.rank) continue;
    auto const& [id, f] = chosen[j];
    std::size_t const rows_before = out.rows().size();
    // A configuration that throws (a refusal, a failed allocation) is reported and counted; the
    // rows before and after it are kept.
    std::int64_t bad = 0;
    try {
      f(out, cl.axes);
    } catch (std::exception const& e) {
      ++failed;
      bad = 1;
      std::cerr << "ember benchmark: " << id << " failed: " << e.what() << "\n";
    }
    if (shared) {
      std::int64_t const head[3] = {std::int64_t(j), bad, std::int64_t(out.rows().size() - rows_before)};
      mine.append(reinterpret_cast<char const*>(head), sizeof head);
      for (std::size_t i = rows_before; i < out.rows().size(); ++i) detail::pack_row(mine, out.rows()[i]);
      continue;
    }
    try {
      save_lines();
    } catch (std::exception const& e) {
      std::cerr << e.what() << "\n";
      return 2;
    }
  }
  if (shared) {
    auto const all = share.gather(mine);
    if (!root) return 0;
    // Every configuration's rows, in the order of `chosen`, into a report that writes them.
    std::vector<std::pair<std::size_t, std::vector<configuration_metrics>>> by_config;
    failed = 0;
    for (auto const& blob : all)
      for (std::size_t at = 0; at < blob.size();) {
        std::int64_t head[3];
        if (at + sizeof head > blob.size()) throw std::runtime_error("ember benchmark: a process's rows are cut short");
        std::memcpy(head, blob.data() + at, sizeof head);
        at += sizeof head;
        failed += int(head[1]);
        std::vector<configuration_metrics> rows;
        for (std::int64_t i = 0; i < head[2]; ++i) rows.push_back(detail::unpack_row(blob, at));
        by_config.emplace_back(std::size_t(head[0]), std::move(rows));
      }
    std::sort(by_config.begin(), by_config.end(), [](auto const& a, auto const& b) { return a.first < b.first; });
    report whole(cl.jsonl.empty() ? &std::cout : &lines, times_dir);
    for (auto& [j, rows] : by_config)
      for (auto& m : rows) whole.add(std::move(m));
    try {
      save_lines();
    } catch (std::exception const& e) {
      std::cerr << e.what() << "\n";
      return 2;
    }
    whole.print_table(std::cout, cpu_budget_s, cuda_budget_s);
    if (failed) std::cerr << "ember benchmark: " << failed << " of " << chosen.size() << " configurations failed\n";
    return failed ? 1 : 0;
  }
  out.print_table(std::cout, cpu_budget_s, cuda_budget_s);
  if (failed) std::cerr << "ember benchmark: " << failed << " of " << chosen.size() << " configurations failed\n";
  return failed ? 1 : 0;
}

}  // namespace ember::benchmark
