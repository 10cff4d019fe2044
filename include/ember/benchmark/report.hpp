#pragma once
/// \file
/// `report`: collects a matrix's `configuration_metrics`, writes each as one JSON line when it is
/// measured (`json_line`, keys in the order of docs/benchmarking.md, NaN as null) and prints the
/// human table at the end: ESS/s, ESS per gradient, gradients to b² < 0.01 and the health gates
/// beside every speed, so a fast but broken configuration reads as broken. It also knows each
/// configuration's compile time, from the files `ember_add_benchmark_matrix` has the compiler
/// launcher write (`<dir>/<configuration id>.cpp.time`, "user system" seconds).
///
/// `configuration_run` is what `measure` hands over: plain numbers and the kept draws, no
/// strings. `report::add(run)` makes the row of it (statistics, health, JSON line) in code the
/// report reaches through a pointer taken where it is constructed, so a matrix compiles all of
/// that once, in its driver's translation unit, and not once per configuration.

#include <ember/benchmark/metrics.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace ember::benchmark {

namespace detail {
/// OpenMP's default thread count: OMP_NUM_THREADS's first number if set, else the logical cores.
inline int default_threads() {
  if (char const* v = std::getenv("OMP_NUM_THREADS"); v && std::atoi(v) > 0) return std::atoi(v);
  unsigned const n = std::thread::hardware_concurrency();
  return n > 0 ? int(n) : 1;
}
/// "model name" of /proc/cpuinfo and the logical cores, e.g. "Intel(R) Xeon(R) ... x 2"; "unknown"
/// where there is no such file.
inline std::string const& machine_name() {
  static std::string const name = [] {
    std::ifstream f("/proc/cpuinfo");
    std::string line, model = "unknown";
    while (std::getline(f, line))
      if (line.rfind("model name", 0) == 0) {
        auto const colon = line.find(':');
        if (colon != std::string::npos) model = line.substr(line.find_first_not_of(" \t", colon + 1));
        break;
      }
    model += " x ";
    return model += std::to_string(std::thread::hardware_concurrency());
  }();
  return name;
}
inline std::string json_string(std::string const& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\')
      out += '\\';
    if (static_cast<unsigned char>(ch) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", ch);
      out += buf;
      continue;
    }
    out += ch;
  }
  return out + "\"";
}
inline std::string json_number(double v) {
  if (!std::isfinite(v))
    return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}
inline std::string cell(double v, char const* fmt = "%.3g") {
  if (!std::isfinite(v))
    return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}
}  // namespace detail

/// One configuration as one JSON line (no trailing newline). A skipped configuration has null for
/// everything it did not measure and its reason under "skipped".
inline std::string json_line(configuration_metrics const& m) {
  using detail::json_number, detail::json_string;
  bool const ran = m.skipped.empty();
  auto num = [&](double v) { return ran ? json_number(v) : std::string("null"); };
  std::string s = "{";
  auto key = [&](char const* k, std::string const& v) {
    s += (s.size() > 1 ? ", \"" : "\"") + std::string(k) + "\": " + v;
  };
  key("impl", json_string(m.impl));
  key("target", json_string(m.target));
  key("sampler", json_string(m.sampler));
  key("precision", json_string(m.precision));
  key("backend", json_string(m.backend));
  key("chains", std::to_string(m.chains));
  key("warmup", std::to_string(m.warmup));
  key("draws", std::to_string(m.draws));
  key("seed", std::to_string(m.seed));
  key("dim", std::to_string(m.dim));
  key("compile_s", json_number(m.compile_s));
  key("warmup_s", num(m.warmup_s));
  key("sampling_s", num(m.sampling_s));
  key("grads_warmup", num(m.grads_warmup));
  key("grads_sampling", num(m.grads_sampling));
  key("ess_bulk_x", num(m.ess_bulk_x));
  key("ess_bulk_x2", num(m.ess_bulk_x2));
  key("ess_tail_x", num(m.ess_tail_x));
  key("ess_min", num(m.ess_min));
  key("ess_per_s", num(m.ess_per_s));
  key("ess_per_grad", num(m.ess_per_grad));
  key("ess_per_s_with_warmup", num(m.ess_per_s_with_warmup));
  key("ess_per_grad_with_warmup", num(m.ess_per_grad_with_warmup));
  key("grads_to_b2_avg", num(m.grads_to_b2_avg));
  key("grads_to_b2_max", num(m.grads_to_b2_max));
  key("b2_avg", num(m.b2_avg));
  key("b2_max", num(m.b2_max));
  key("divergences", ran ? std::to_string(m.divergences) : "null");
  key("rhat_max", num(m.rhat_max));
  key("acceptance", num(m.acceptance));
  key("target_acceptance", num(m.target_acceptance));
  key("health", ran ? json_string(m.health) : "null");
  key("skipped", ran ? "null" : json_string(m.skipped));
  key("threads", std::to_string(m.threads));
  key("machine", json_string(m.machine));
  return s + "}";
}

/// One configuration's run as `measure` reports it, for `report::add`: what it is, why it was
/// skipped (if it was), its times and gradient counts, and the kept draws of the reported
/// coordinates, xs[(d·chains + c)·draws + i], with cumulative[n] the gradients per chain up to
/// kept draw n (`measure_draws`, metrics.hpp). The spans need only outlive the call to `add`.
struct configuration_run {
  enum class skip { none, needs_nvcc, needs_gradient, no_device };
  char const* id = "";  ///< the configuration's translation unit (its compile time), or ""
  char const *target = "", *sampler = "", *precision = "", *backend = "";
  std::int64_t chains = 0, warmup = 0, draws = 0;
  std::uint64_t seed = 0;
  int dim = 0;
  double target_acceptance = configuration_metrics::null;
  bool harmonic_target = false;  ///< result::harmonic_target() of the run
  skip skipped = skip::none;
  double warmup_s = 0, sampling_s = 0, grads_warmup = 0, acceptance = 0;
  std::int64_t divergences = 0;
  int threads = 0;  ///< the backend's threads (0: its default, OpenMP's)
  std::span<double const> xs, cumulative;
  reference_view reference;
};

/// The rows of a matrix run, printed as JSON lines as they arrive and as a table at the end.
class report {
public:
  /// JSON lines go to `json` (nullptr: nowhere); compile times are read from `compile_times_dir`.
  explicit report(std::ostream* json = &std::cout, std::string compile_times_dir = "")
      : json_(json), dir_(std::move(compile_times_dir)), add_run_(&row_of) {}

  /// Adds the row of one configuration's run: its statistics, health gates and compile time.
  void add(configuration_run const& r) { add_run_(*this, r); }

  void add(configuration_metrics m) {
    if (json_)
      *json_ << json_line(m) << std::endl;
    rows_.push_back(std::move(m));
  }
  std::vector<configuration_metrics> const& rows() const { return rows_; }

  /// g++ (or nvcc) user + system seconds of configuration `id`'s translation unit; NaN if unknown.
  double compile_seconds(std::string const& id) const {
    double const s = read_time(dir_ + "/" + id + ".cpp.time");
    return std::isnan(s) ? read_time(dir_ + "/" + id + ".cu.time") : s;
  }
  /// The same for the precompiled header the configurations share.
  double header_seconds() const { return read_time(dir_ + "/cmake_pch.hxx.cxx.time"); }

  /// The human table: one row per configuration, then the compile-time budget.
  void print_table(std::ostream& out, double cpu_budget_s = 3, double cuda_budget_s = 12) const {
    using detail::cell;
    out << "\n| target | sampler | precision | backend | chains | ESS/s | ESS/grad | grads to b²avg<0.01 | grads to "
           "b²max<0.01 | R̂ max | acceptance | compile s | health "
           "|\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    int over = 0, timed = 0;
    double worst = 0;
    std::vector<std::string> seen;  // a configuration's compile time counts once, whatever its seeds
    for (auto const& m : rows_) {
      double const budget = m.backend == "cuda" ? cuda_budget_s : cpu_budget_s;
      std::string const key = m.target + '/' + m.sampler + '/' + m.precision + '/' + m.backend + '/' + std::to_string(m.chains);
      bool const first = std::find(seen.begin(), seen.end(), key) == seen.end();
      if (first) seen.push_back(key);
      if (first && std::isfinite(m.compile_s)) {
        ++timed;
        worst = std::max(worst, m.compile_s);
        if (m.compile_s > budget)
          ++over;
      }
      out << "| " << m.target << " | " << m.sampler << " | " << m.precision << " | " << m.backend << " | " << m.chains
          << " | ";
      if (!m.skipped.empty()) {
        out << "- | - | - | - | - | - | " << cell(m.compile_s, "%.2f") << " | skipped: " << m.skipped << " |\n";
        continue;
      }
      // A failed gate is printed beside the speed itself, so no one quotes the number alone.
      std::string const flag = m.health == "ok" ? "" : " ✗";
      out << cell(m.ess_per_s) << flag << " | " << cell(m.ess_per_grad) << flag << " | " << cell(m.grads_to_b2_avg)
          << " | " << cell(m.grads_to_b2_max) << " | " << cell(m.rhat_max, "%.3f") << " | "
          << cell(m.acceptance, "%.3f") << " | " << cell(m.compile_s, "%.2f")
          << (m.compile_s > budget ? " (over budget)" : "") << " | "
          << (m.health == "ok" ? "ok" : "FAILED: " + m.health) << " |\n";
    }
    print_replicates(out);
    if (timed > 0) {
      out << "\ncompile time: " << timed << " configurations timed, slowest " << cell(worst, "%.2f") << " s, " << over
          << " over budget (" << cpu_budget_s << " s per CPU configuration, " << cuda_budget_s << " s per CUDA one)";
      if (std::isfinite(header_seconds()))
        out << "; shared precompiled header " << cell(header_seconds(), "%.1f") << " s";
      out << "\n";
    }
  }

  /// Configurations measured on several seeds: their mean ESS/s and ESS per gradient with the
  /// seeds' range and a 95 % interval for the mean (mean ± t·sd/√n over healthy and unhealthy
  /// seeds alike, with the unhealthy ones counted). Nothing when every configuration ran once.
  void print_replicates(std::ostream& out) const {
    using detail::cell;
    struct group {
      configuration_metrics const* first;
      std::vector<double> per_s, per_grad;
      int unhealthy = 0;
    };
    std::vector<group> groups;
    for (auto const& m : rows_) {
      if (!m.skipped.empty()) continue;
      auto const same = [&](group const& g) {
        auto const& f = *g.first;
        return f.impl == m.impl && f.target == m.target && f.sampler == m.sampler && f.precision == m.precision &&
               f.backend == m.backend && f.chains == m.chains && f.warmup == m.warmup && f.draws == m.draws;
      };
      auto it = std::find_if(groups.begin(), groups.end(), same);
      if (it == groups.end()) it = groups.insert(groups.end(), group{&m, {}, {}, 0});
      it->per_s.push_back(m.ess_per_s);
      it->per_grad.push_back(m.ess_per_grad);
      it->unhealthy += m.health != "ok";
    }
    bool any = false;
    for (auto const& g : groups) any = any || g.per_s.size() > 1;
    if (!any) return;
    out << "\nreplicates (seeds): mean [min, max] and the mean's 95 % interval\n\n| target | sampler | precision | "
           "backend | chains | seeds | unhealthy | ESS/s | ESS/s 95 % | ESS/grad | ESS/grad 95 % |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (auto const& g : groups) {
      if (g.per_s.size() < 2) continue;
      auto const& f = *g.first;
      auto const stats = [&](std::vector<double> const& v) {
        replicate_stats s = replicate_spread(v);
        return std::pair{cell(s.mean) + " [" + cell(s.min) + ", " + cell(s.max) + "]",
                         cell(s.mean - s.half_width) + " – " + cell(s.mean + s.half_width)};
      };
      auto const [a, ai] = stats(g.per_s);
      auto const [b, bi] = stats(g.per_grad);
      out << "| " << f.target << " | " << f.sampler << " | " << f.precision << " | " << f.backend << " | " << f.chains
          << " | " << g.per_s.size() << " | " << g.unhealthy << " | " << a << " | " << ai << " | " << b << " | " << bi
          << " |\n";
    }
  }

private:
  // Not called by name outside the constructor: only the unit constructing a report compiles it.
  static void row_of(report& out, configuration_run const& r) {
    configuration_metrics m;
    m.target = r.target;
    m.sampler = r.sampler;
    m.precision = r.precision;
    m.backend = r.backend;
    m.chains = r.chains;
    m.warmup = r.warmup;
    m.draws = r.draws;
    m.seed = r.seed;
    m.dim = r.dim;
    m.target_acceptance = r.target_acceptance;
    m.threads = r.threads > 0 ? r.threads : detail::default_threads();
    m.machine = detail::machine_name();
    if (*r.id)
      m.compile_s = out.compile_seconds(r.id);
    using skip = configuration_run::skip;
    switch (r.skipped) {
    case skip::needs_nvcc:
      m.skipped = "backend::cuda needs nvcc: this translation unit was compiled by a host compiler";
      break;
    case skip::needs_gradient:
      m.skipped = std::string(r.sampler) + " needs a gradient and this energy has no value_and_grad";
      break;
    case skip::no_device:
      m.skipped = "no CUDA device on this machine";
      break;
    case skip::none:
      m.warmup_s = r.warmup_s;
      m.sampling_s = r.sampling_s;
      m.grads_warmup = r.grads_warmup;
      m.grads_sampling = r.cumulative.back();
      m.acceptance = r.acceptance;
      m.harmonic_target = r.harmonic_target;
      m.divergences = r.divergences;
      measure_draws(m, r.xs, r.dim, r.chains, r.draws, r.reference, r.cumulative);
      finish(m);
      break;
    }
    out.add(std::move(m));
  }

  static double read_time(std::string const& path) {
    std::ifstream f(path);
    double user = 0, sys = 0;
    if (!(f >> user >> sys))
      return std::numeric_limits<double>::quiet_NaN();
    return user + sys;
  }

  std::ostream* json_;
  std::string dir_;
  std::vector<configuration_metrics> rows_;
  void (*add_run_)(report&, configuration_run const&);
};

}  // namespace ember::benchmark
