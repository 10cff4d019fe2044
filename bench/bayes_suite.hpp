#pragma once
// Bayesian runs of few chains, on a CPU and on a GPU: issue 32's cases, one JSON line each
// (benchmark/report.hpp's format, docs/benchmarking.md), then the matrix's table. In this order:
//  - standard_normal_10 (d = 10), ChEES-HMC, 500 warm-up transitions and 1,000 draws, at 256,
//    4,096 and 16,384 chains in float and at 256 and 4,096 in double: issue 32's comparison with
//    LAPS's 680,785 ESS/s on a V100 (NextStat's blog, v0.9.6: the smallest bulk ESS of x over the
//    10 coordinates of the first 256 of 4,096 chains x 1,000 draws, over the sampling seconds of
//    all 4,096; f64, 500 warm-up). Its counterpart here is the 256-chain run's ESS over the
//    4,096-chain run's sampling seconds (the 256 chains are a run of their own, with their own
//    warm-up, not the first 256 of the 4,096); ESS/s of every chain is in each row;
//  - breast_cancer_logistic (569 rows x 31, targets/breast_cancer_logistic.hpp), ChEES-HMC, at
//    4, 128 and 1,024 chains: on backend::cuda with one thread per chain ("chees_hmc_team1") and
//    with the automatic team ("chees_hmc", core/team.hpp: 32 threads per chain here);
//  - hier_logit (targets/hier_logit.hpp: 60 parameters, a model body over 2,000 simulated rows
//    with reverse-mode gradients), ChEES-HMC, with the automatic team at 4, 128 and 1,024 chains,
//    then one thread per chain at 4 and 128 (its reference is unknown: no bias gate).
// bench/bayes_suite.cpp runs it on backend::cpu (this machine's cores), bench/bayes_suite.cu on
// backend::cuda; the same draws' statistics, ESS per second of the sampling phase (sampling_s;
// warmup_s beside it).
//
// usage: ember_bayes_suite[_cuda] [--case logistic|hier_logit|normal10] [--chains 4,128] [--warmup 1000]
//        [--draws 1000] [--jsonl FILE] [--one-thread N,...|none]
//   --one-thread: the chain counts of the one-thread-per-chain rows on a backend with teams
//   ("none": only the automatic team); by default the case's own (above).
#include <ember/benchmark/measure.hpp>
#include <ember/benchmark/report.hpp>
#include <ember/benchmark/samplers.hpp>
#include <ember/benchmark/target.hpp>
#include <ember/energy/gaussian.hpp>
#include <ember/targets/breast_cancer_logistic.hpp>
#include <ember/targets/hier_logit.hpp>
#include <ember/targets/reference.hpp>

#include <boost/hana/type.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace bayes_suite {

namespace bm = ember::benchmark;

// A data file: under $EMBER_DATA_DIR where set (a copy of the tree elsewhere, as on a lent GPU
// machine), else under the source tree's data/ of the build.
inline std::string data_file(char const* name) {
  char const* dir = std::getenv("EMBER_DATA_DIR");
  return std::string(dir && *dir ? dir : EMBER_DATA_DIR) + "/" + name;
}

// N(0, I_10): the standard normal of the LAPS paper's comparison (d = 10).
template <class T = float>
struct standard_normal_10 {
  static constexpr int dim = 10;
  auto energy() const { return ember::gaussian<T, dim, ember::covariance::isotropic>(ember::vec<T, dim>{}, T(1)); }
  template <class S>
  ember::vec<double, dim> reported(ember::vec<S, dim> const& x) const {
    ember::vec<double, dim> r;
    for (int i = 0; i < dim; ++i) r[i] = double(x[i]);
    return r;
  }
  ember::targets::reference_moments<dim> reference() const {
    ember::targets::reference_moments<dim> m;
    m.second.fill(1.0);
    m.method = "exact";
    return m;
  }
};

// targets::hier_logit on its own simulated data (seed 1, 2,000 rows); no reference moments.
template <class T = float>
struct hier_logit_simulated : ember::targets::hier_logit<T> {
  hier_logit_simulated() : ember::targets::hier_logit<T>(ember::targets::hier_logit<T>::simulated()) {}
  ember::targets::reference_moments<60> reference() const {
    ember::targets::reference_moments<60> m;
    m.mean.fill(std::numeric_limits<double>::quiet_NaN());
    m.second.fill(std::numeric_limits<double>::quiet_NaN());
    m.method = "none";
    return m;
  }
};

inline std::vector<std::int64_t> parse_counts(std::string const& s) {
  std::vector<std::int64_t> v;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) v.push_back(std::atoll(item.c_str()));
  return v;
}

// Backend: ember::backend::cpu or ember::backend::cuda; `with_team(w)` gives the backend whose
// threads per chain is w (0: automatic), or nullptr where the backend has no teams.
template <class Backend, class WithTeam>
int run(int argc, char** argv, WithTeam const& with_team) {
  std::string only, jsonl;
  std::vector<std::int64_t> chains;
  std::optional<std::vector<std::int64_t>> one_thread;  // --one-thread: its chain counts (empty: none)
  bm::run_axes axes;
  axes.seed = 1;
  for (int i = 1; i < argc; ++i) {
    auto arg = [&](char const* name) { return !std::strcmp(argv[i], name) && i + 1 < argc; };
    if (arg("--case"))
      only = argv[++i];
    else if (arg("--chains"))
      chains = parse_counts(argv[++i]);
    else if (arg("--one-thread"))
      one_thread = std::strcmp(argv[++i], "none") ? parse_counts(argv[i]) : std::vector<std::int64_t>{};
    else if (arg("--warmup"))
      axes.warmup = std::atoll(argv[++i]);
    else if (arg("--draws"))
      axes.draws = std::atoll(argv[++i]);
    else if (arg("--jsonl"))
      jsonl = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--case logistic|hier_logit|normal10] [--chains N,...] [--one-thread N,...|none] [--warmup N] [--draws N] [--jsonl FILE]\n",
                   argv[0]);
      return 2;
    }
  }
  std::ofstream file;
  if (!jsonl.empty()) file.open(jsonl, std::ios::app);
  bm::report out(jsonl.empty() ? &std::cout : static_cast<std::ostream*>(&file));
  auto const f = boost::hana::type_c<float>;
  auto const b = boost::hana::type_c<Backend>;
  // ChEES-HMC at a's chain counts: on a backend with teams, the automatic team and then one thread
  // per chain (at `one_thread_chains`, or a's counts); elsewhere once.
  auto const both_ways = [&](auto const& target, bm::run_axes a, std::vector<std::int64_t> const& one_thread_chains) {
    if constexpr (!std::is_same_v<decltype(with_team(0)), std::nullptr_t>) {
      auto const one = with_team(1), automatic = with_team(0);
      bm::measure(out, target, bm::chees_hmc{}, f, b, a, "", &automatic);
      if (one_thread && one_thread->empty()) return;
      if (one_thread) a.chains = *one_thread;
      else if (!one_thread_chains.empty()) a.chains = one_thread_chains;
      bm::measure(out, target, bm::chees_hmc{.name = "chees_hmc_team1"}, f, b, a, "", &one);
    } else {
      bm::measure(out, target, bm::chees_hmc{}, f, b, a);
    }
  };
  if (only.empty() || only == "normal10") {
    bm::target<standard_normal_10> const target{"standard_normal_10"};
    bm::run_axes a = axes;
    a.warmup = 500;
    a.chains = chains.empty() ? std::vector<std::int64_t>{256, 4096, 16384} : chains;
    bm::measure(out, target, bm::chees_hmc{}, f, b, a);
    if (chains.empty()) a.chains = {256, 4096};
    bm::measure(out, target, bm::chees_hmc{}, boost::hana::type_c<double>, b, a);
  }
  if (only.empty() || only == "logistic") {
    auto const target = bm::make_target<ember::targets::breast_cancer_logistic>(
        "breast_cancer_logistic", data_file("breast_cancer.csv"));
    bm::run_axes a = axes;
    a.chains = chains.empty() ? std::vector<std::int64_t>{4, 128, 1024} : chains;
    both_ways(target, a, {});
  }
  if (only.empty() || only == "hier_logit") {
    bm::target<hier_logit_simulated> const target{"hier_logit"};
    bm::run_axes a = axes;
    a.chains = chains.empty() ? std::vector<std::int64_t>{4, 128, 1024} : chains;
    // One thread per chain is slow here (2,000 rows in one thread: 131 s of sampling at 128
    // chains on an H200), so by default it runs at 4 and 128 chains only.
    both_ways(target, a, chains.empty() ? std::vector<std::int64_t>{4, 128} : std::vector<std::int64_t>{});
  }
  out.print_table(std::cout);
  return 0;
}

}  // namespace bayes_suite
