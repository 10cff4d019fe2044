#pragma once
/// \file
/// `summarize(result, options)` and `summary_table`: what `result::summary()` prints.
///
/// Per dimension, over the recorded draws of the chains that stayed finite: mean, sd, the
/// Monte-Carlo standard error of the mean, bulk ESS, tail ESS, the ESS of (x − x̄)², and R̂ (the
/// larger of the rank-normalised bulk and folded split-R̂); see `diagnostics/convergence.hpp`
/// for the formulas. Below the table, WARNING lines, each saying what is wrong and what it
/// means:
///  - chains diverged: printed first, above the table, because every number in it then describes
///    the survivors only;
///  - divergent transitions;
///  - R̂ > 1.01 (Vehtari et al. 2021's threshold);
///  - an ESS above the number of draws (antithetic chains: the mean is estimated better than by
///    independent draws, but the variance and the quantiles are not; the ESS of (x − x̄)² says
///    by how much);
///  - bulk or tail ESS below 400 (Vehtari et al.: too few effective draws for R̂ and the
///    quantiles to be trusted);
///  - acceptance far from the kernel's target, and chains whose acceptance lies far from the
///    others', when the caller passes the target and the per-chain rates;
///  - chains whose E-BFMI is below 0.3 (Stan's threshold), where the run kept each transition's
///    Hamiltonian (`record_stats()` with a kernel that reports it: HMC, ChEES-HMC, NUTS):
///    E-BFMI = Σₙ(Eₙ − Eₙ₋₁)² / Σₙ(Eₙ − Ē)² over a chain's kept draws (Betancourt 2016, "Diagnosing
///    suboptimal cotangent disintegrations in Hamiltonian Monte Carlo"; ArviZ's `bfmi`, the mean
///    of the N − 1 squared differences over the variance with divisor N − 1, is the same ratio);
///    a low value says that
///    drawing a fresh momentum barely changes the energy level, so the chain crosses between the
///    bulk and the tails slowly;
///  - chains that sit apart: a chain whose mean of some dimension lies more than 3 typical
///    within-chain standard deviations (the median over chains) from the median of the chain
///    means, or whose distance from them over all dimensions, in those units, is above 3 and 3
///    times the chains' median distance. Chains that mix, even slowly, never do (a chain mean
///    strays from the others by about sd/√(its ESS)); chains in separate modes, or on either side
///    of a place they cannot cross, do, and then the share of chains in each region is not its
///    probability.
/// The dimensions are computed in parallel (OpenMP), one thread per dimension at a time.
///
/// `summarize` reads only `result`'s public accessors (`samples()`, `chains()`, `kept()`,
/// `divergent(c)`, `divergent_chains()`, `divergent_transitions()`, `acceptance_rate()`,
/// `seconds()`, `final_states()`, and `sample_stat(draw_stat::energy)` where it has it).

#include <ember/backend/detail/host_memory.hpp>
#include <ember/diagnostics/convergence.hpp>
#include <ember/pipeline/stages.hpp>  // draw_stat

#ifdef _OPENMP
#include <omp.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <ostream>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace ember {

/// What the caller knows and the result does not: the kernel's target acceptance rate (e.g.
/// 0.574 for MALA, 0.65 for HMC) and, optionally, per-chain acceptance rates.
struct summary_options {
  double target_acceptance = std::numeric_limits<double>::quiet_NaN();  ///< NaN: no check
  double acceptance_band = 0.1;        ///< warn when |acceptance − target| exceeds this
  std::span<double const> chain_acceptance = {};  ///< one rate per chain (all chains), optional
  int threads = 0;                     ///< 0: OpenMP's default
  /// The target is for the harmonic mean over chains of each transition's acceptance probability
  /// (ChEES's step size): the acceptance rate, an arithmetic mean, is never below that, so only a
  /// rate more than the band below the target is a warning.
  bool harmonic_target = false;
};

struct summary_table;
namespace detail {
// The table's text, compiled once per program where ember/host_templates.hpp says so (templates
// on the table type only so that they can be declared `extern template` there; defined below).
template <class Table>
std::vector<std::string> summary_warnings(Table const& s);
template <class Table>
void print_summary(std::ostream& os, Table const& s);
}  // namespace detail

/// Per-dimension statistics of a run (one row per column of the result), printable with `<<`.
struct summary_table {
  struct row {
    double mean, sd, mcse;  ///< x̄, sd, sd/√ESS(x)
    double ess;             ///< bulk ESS (rank-normalised)
    double ess_tail;        ///< min of the ESS of I(x ≤ q₀.₀₅) and I(x ≤ q₀.₉₅)
    double ess_sq;          ///< ESS of (x − x̄)²
    double ess_mean;        ///< ESS of x itself (for the MCSE)
    double rhat;            ///< max(bulk R̂, folded R̂)
    double rhat_bulk, rhat_folded;
  };
  std::vector<row> dims;  ///< one per column of the result (on the heap: a posterior may have many)
  std::int64_t chains = 0, kept = 0, divergent_chains = 0, divergent_transitions = 0;
  std::int64_t truncated_transitions = 0;  ///< after warm-up, cut short by a cap (result::truncated_transitions)
  std::int64_t gradients = 0, warmup_gradients = 0;  ///< after and in warm-up, over all chains
  std::int64_t draws = 0;  ///< draws the statistics use: live chains × 2⌊kept/2⌋
  double acceptance = 0, seconds = 0, warmup_seconds = 0;  ///< every transition's seconds, and warm-up's part
  double target_acceptance = std::numeric_limits<double>::quiet_NaN(), acceptance_band = 0.1;
  bool harmonic_target = false;  ///< see summary_options
  /// Over live chains, when per-chain acceptance was passed (else NaN).
  double chain_acceptance_min = std::numeric_limits<double>::quiet_NaN(),
         chain_acceptance_median = std::numeric_limits<double>::quiet_NaN(),
         chain_acceptance_max = std::numeric_limits<double>::quiet_NaN();
  bool from_draws = false;  ///< statistics over recorded draws (else over final states)
  /// Live chains that accepted no proposal after warm-up (from the per-chain acceptance): they
  /// never moved, and their draws are one point repeated.
  std::int64_t stuck_chains = 0;
  /// Live chains that sit apart from the others (file comment); the farthest such chain: its
  /// distance from the median chain means in within-chain sds over all dimensions, and the
  /// dimension where it is farthest, with its mean and the median chain mean there.
  std::int64_t chains_apart = 0;
  int apart_dim = 0;
  double apart_mean = 0, apart_distance = 0, apart_median = 0;
  std::vector<std::string> adaptation_warnings;  ///< the run's `adapted().warnings`, printed with the others
  /// Each chain's E-BFMI (file comment) where the run kept the Hamiltonian and at least 3 draws,
  /// NaN for a diverged chain; empty otherwise. Below `bfmi_threshold` is a warning.
  std::vector<double> bfmi;
  static constexpr double bfmi_threshold = 0.3;
  /// Live chains with E-BFMI below the threshold, and the lowest value with its chain.
  std::int64_t low_bfmi_chains() const {
    return std::count_if(bfmi.begin(), bfmi.end(), [](double e) { return e < bfmi_threshold; });
  }
  std::int64_t lowest_bfmi_chain() const {
    std::int64_t lo = -1;
    for (std::size_t c = 0; c < bfmi.size(); ++c)
      if (std::isfinite(bfmi[c]) && (lo < 0 || bfmi[c] < bfmi[std::size_t(lo)])) lo = std::int64_t(c);
    return lo;
  }
  /// Each column's name where the result names them (`result::column_name`: a posterior in a
  /// model's terms), else empty and the columns are "dim d".
  std::vector<std::string> names;
  std::string column(int d) const {  // unnamed: the index, right-aligned in 3 characters as before names
    if (!names.empty()) return names[std::size_t(d)];
    std::string n = std::to_string(d);
    return n.size() < 3 ? std::string(3 - n.size(), ' ') + n : n;
  }
  int name_width() const {
    std::size_t w = 3;
    for (auto const& n : names) w = std::max(w, std::min<std::size_t>(n.size(), 60));
    return int(w);
  }
  std::string label(int d) const {
    if (!names.empty()) return names[std::size_t(d)];
    std::string s = "dim ";  // appended: GCC 12's -Wrestrict misfires on "literal" + string&& (PR 105329)
    return s += std::to_string(d);
  }

  std::int64_t live_chains() const { return chains - divergent_chains; }
  bool has_statistics() const { return live_chains() >= 1 && (from_draws ? kept >= 4 : live_chains() >= 2); }

  int dim() const { return int(dims.size()); }

  /// The WARNING lines, in the order printed (the divergence one first).
  std::vector<std::string> warnings() const { return detail::summary_warnings(*this); }

  friend std::ostream& operator<<(std::ostream& os, summary_table const& s) {
    detail::print_summary(os, s);
    return os;
  }
};

namespace detail {
// Chains apart (file comment). Per dimension d, each live chain's mean m_cd and sd over its kept
// draws, the median chain mean μ_d and the median chain sd w_d; chain c is apart where some
// |m_cd − μ_d| > 3 w_d, or where its distance over all dimensions, √Σ_d ((m_cd − μ_d)/w_d)², is
// above 3 and above 3 times the chains' median distance (modes apart along a diagonal are close
// in each coordinate: a 0.9/0.1 mixture in d = 10 with modes 6 sds apart differs by 1.9 sds per
// coordinate; for chains that mix the distance is about √(D/ESS per chain), the same for all).
// Needs 3 chains. Chain c's mean and sd of dimension d over its kept draws (at(k, c, d)), as the test below uses them.
template <class At>
std::pair<double, double> chain_mean_sd(At const& at, std::int64_t c, int d, std::int64_t kept) {
  double m = 0, q = 0;
  for (std::int64_t k = 0; k < kept; ++k) m += double(at(k, c, d));
  m /= double(kept);
  for (std::int64_t k = 0; k < kept; ++k) q += (double(at(k, c, d)) - m) * (double(at(k, c, d)) - m);
  return {m, std::sqrt(q / double(kept - 1))};
}
// The same from each live chain j's mean and sd of dimension d, `moments(j, d)` (ember/mpi.hpp
// gathers them from the processes that hold the chains).
template <class Moments>
void chains_apart_from(summary_table& s, std::size_t M, Moments const& moments) {
  if (M < 3) return;
  std::vector<std::uint8_t> apart(M, 0);
  std::vector<double> mean(M), sd(M), sorted(M), dist2(M, 0.0), worst(M, 0.0);
  std::vector<int> worst_dim(M, 0);
  std::vector<double> worst_mean(M, 0.0), worst_mid(M, 0.0);
  auto median = [&](std::vector<double> const& v) {
    sorted = v;
    std::sort(sorted.begin(), sorted.end());
    return M % 2 ? sorted[M / 2] : 0.5 * (sorted[M / 2 - 1] + sorted[M / 2]);
  };
  for (int d = 0; d < s.dim(); ++d) {
    for (std::size_t j = 0; j < M; ++j) std::tie(mean[j], sd[j]) = moments(j, d);
    double const mid = median(mean), w = median(sd);
    if (!(w > 0)) continue;  // most chains never moved there: the stuck-chain warning says so
    for (std::size_t j = 0; j < M; ++j) {
      double const z = std::fabs(mean[j] - mid) / w;
      dist2[j] += z * z;
      if (z > 3) apart[j] = 1;
      if (z > worst[j]) {
        worst[j] = z;
        worst_dim[j] = d;
        worst_mean[j] = mean[j];
        worst_mid[j] = mid;
      }
    }
  }
  std::vector<double> dist(M);
  for (std::size_t j = 0; j < M; ++j) dist[j] = std::sqrt(dist2[j]);
  double const typical = median(dist);
  for (std::size_t j = 0; j < M; ++j) {
    if (dist[j] > 3 && dist[j] > 3 * typical) apart[j] = 1;
    if (apart[j] && dist[j] > s.apart_distance) {
      s.apart_distance = dist[j];
      s.apart_dim = worst_dim[j];
      s.apart_mean = worst_mean[j];
      s.apart_median = worst_mid[j];
    }
  }
  s.chains_apart = std::count(apart.begin(), apart.end(), std::uint8_t(1));
}
// A row of the table from one dimension's diagnostics.
inline summary_table::row summary_row(convergence const& c) {
  return {c.mean, c.sd, c.mcse_mean, c.ess_bulk, c.ess_tail, c.ess_sq, c.ess_mean, c.rhat, c.rhat_bulk, c.rhat_folded};
}
// The spread of the live chains' acceptance rates (`rates[c]` for chain c) and the chains that
// accepted nothing.
inline void chain_acceptance_spread(summary_table& s, std::span<double const> rates, std::vector<std::int64_t> const& live) {
  std::vector<double> a;
  for (auto c : live)
    if (std::size_t(c) < rates.size()) a.push_back(rates[std::size_t(c)]);
  if (a.empty()) return;
  s.stuck_chains = std::count(a.begin(), a.end(), 0.0);
  std::sort(a.begin(), a.end());
  s.chain_acceptance_min = a.front();
  s.chain_acceptance_max = a.back();
  s.chain_acceptance_median = a.size() % 2 ? a[a.size() / 2] : 0.5 * (a[a.size() / 2 - 1] + a[a.size() / 2]);
}
// E-BFMI of one chain's energies e[0..n) (file comment); NaN for fewer than 3 or a constant run.
template <class E>
double energy_bfmi(E const& e, std::int64_t n) {
  if (n < 3) return std::numeric_limits<double>::quiet_NaN();
  double m = 0;
  for (std::int64_t k = 0; k < n; ++k) m += double(e(k));
  m /= double(n);
  double num = 0, den = 0;
  for (std::int64_t k = 0; k < n; ++k) {
    double const d = double(e(k)) - m;
    den += d * d;
    if (k > 0) num += (double(e(k)) - double(e(k - 1))) * (double(e(k)) - double(e(k - 1)));
  }
  return den > 0 ? num / den : std::numeric_limits<double>::quiet_NaN();
}
// Each chain's E-BFMI from its kept energies, chain by chain (`e[c·kept + k]`, the layout of
// result::sample_stat), NaN for the chains `live` does not list.
template <class T>
void chain_bfmi_of(summary_table& s, T const* e, std::vector<std::int64_t> const& live) {
  std::int64_t const K = s.kept;
  s.bfmi.assign(std::size_t(s.chains), std::numeric_limits<double>::quiet_NaN());
  for (auto c : live) s.bfmi[std::size_t(c)] = energy_bfmi([&](std::int64_t k) { return e[std::size_t(c * K + k)]; }, K);
}

// The rows of `s` (as summary_head made it: chains, kept draws, NaN rows) from the draws in result's
// layout, `draws[(k·D + d)·chains + c]`, over the live chains; and the chains that sit apart.
// A template on the scalar type only, so that a program compiles it once
// (ember/host_templates.hpp); the columns are computed in parallel, one thread per column.
template <class T>
void summarize_draws(summary_table& s, T const* draws, std::vector<std::int64_t> const& live, int threads) {
  int const D = s.dim();
  std::int64_t const chains = s.chains, kept = s.kept, M = std::int64_t(live.size());
  s.draws = M * 2 * (kept / 2);
  if (M < 1 || kept < 4) return;
  // Draw k of chain c in dimension d; every index is in range here.
  auto const at = [&](std::int64_t k, std::int64_t c, int d) { return draws[(k * D + d) * chains + c]; };
  bool const all_live = M == chains;
#ifdef _OPENMP
  int const team = std::min(D, capped_thread_count(threads > 0 ? threads : omp_get_max_threads(), "ember::summarize"));
#else
  int const team = 1;
  (void)threads;
#endif
#pragma omp parallel num_threads(team)
  {
    diagnose_workspace w;
#pragma omp for schedule(dynamic, 1)
    for (int d = 0; d < D; ++d) {
      convergence c;
      if (all_live)
        c = diagnose([&](std::int64_t j, std::int64_t k) { return at(k, j, d); }, M, kept, w);
      else
        c = diagnose([&](std::int64_t j, std::int64_t k) { return at(k, live[std::size_t(j)], d); }, M, kept, w);
      s.dims[std::size_t(d)] = summary_row(c);
    }
  }
  if (M >= 3 && kept >= 2)
    chains_apart_from(s, std::size_t(M), [&](std::size_t j, int d) { return chain_mean_sd(at, live[j], d, kept); });
}
// Without recorded draws: each column's mean and sd over the live chains' final states
// (`fin[d·chains + c]`), where at least two chains are live (else the rows stay NaN).
template <class T>
void summarize_final_states(summary_table& s, T const* fin, std::vector<std::int64_t> const& live) {
  auto const M = std::int64_t(live.size());
  if (M < 2) return;
  for (int d = 0; d < s.dim(); ++d) {
    double m = 0, q = 0;
    for (auto c : live) m += double(fin[std::size_t(d * s.chains + c)]);
    m /= double(M);
    for (auto c : live) q += std::pow(double(fin[std::size_t(d * s.chains + c)]) - m, 2);
    s.dims[std::size_t(d)].mean = m;
    s.dims[std::size_t(d)].sd = std::sqrt(q / double(M - 1));
  }
}

template <class Table>
std::vector<std::string> summary_warnings(Table const& s) {
  std::vector<std::string> w;
  char b[1024];
  if (s.divergent_chains > 0) {
    std::snprintf(b, sizeof b,
                  "WARNING: %lld of %lld chains diverged (their state became non-finite) and were dropped. "
                  "Every number below describes the %lld surviving chains only; if the sampler fails in "
                  "some region, the survivors under-represent that region, so means and quantiles can be biased.",
                  (long long)s.divergent_chains, (long long)s.chains, (long long)s.live_chains());
    w.emplace_back(b);
  }
  if (s.divergent_transitions > 0) {
    std::snprintf(b, sizeof b,
                  "WARNING: %lld divergent transitions (proposals with a non-finite energy or an energy error "
                  "above the threshold, rejected): the step size is too large somewhere; reduce it. Where the "
                  "curvature changes by orders of magnitude (a funnel's neck, a banana's far arms), no step size "
                  "suits every region and the chains under-visit the stiff one, so moments there are biased: "
                  "reparametrise (a funnel: non-centred) or raise the target acceptance (chees_hmc(U, {.target_acceptance = 0.9}), "
                  "mams(U, {.target_acceptance = 0.95}), warmup(n, step_size({.target = 0.9}), ...); Python: target_accept=0.9).",
                  (long long)s.divergent_transitions);
    w.emplace_back(b);
  }
  if (s.truncated_transitions > 0) {
    std::snprintf(b, sizeof b,
                  "WARNING: %lld transitions after warm-up stopped at the trajectory cap (NUTS: the maximum tree "
                  "depth; ChEES, MAMS: max_integrator_steps) before the trajectory ended: the draws are still exact, but "
                  "the chains explore more slowly than the sampler intends. Raise the cap (nuts: .max_tree_depth), "
                  "or reparametrise where the posterior is stretched or strongly correlated (a dense metric helps "
                  "the latter).",
                  (long long)s.truncated_transitions);
    w.emplace_back(b);
  }
  if (s.stuck_chains > 0) {
    std::snprintf(b, sizeof b,
                  "WARNING: %lld of %lld chains accepted no proposal after warm-up: they never moved, and each "
                  "contributes one point repeated to every number below; start them elsewhere (.init), warm up "
                  "longer, or adapt a step size per chain (step_size(per_chain)).",
                  (long long)s.stuck_chains, (long long)s.live_chains());
    w.emplace_back(b);
  }
  for (auto const& a : s.adaptation_warnings) w.push_back(a);
  if (std::int64_t const low = s.low_bfmi_chains(); low > 0) {
    std::int64_t const c = s.lowest_bfmi_chain();
    std::snprintf(b, sizeof b,
                  "WARNING: E-BFMI below %.1f in %lld of %lld chains (lowest %.3f, chain %lld): a fresh momentum "
                  "barely changes the energy level, so these chains cross between the posterior's bulk and its "
                  "tails slowly (heavy tails, a funnel) and may not have seen the tails at all. Reparametrise "
                  "(non-centred), or use a metric that fits the posterior (a dense metric where it is correlated).",
                  s.bfmi_threshold, (long long)low, (long long)s.live_chains(), s.bfmi[std::size_t(c)], (long long)c);
    w.emplace_back(b);
  }
  if (!s.has_statistics()) return w;
  if (s.from_draws) {
    int bad_r = 0, worst_r = 0, over = 0, low = 0, worst_low = 0;
    double min_sq = std::numeric_limits<double>::infinity();
    for (int d = 0; d < s.dim(); ++d) {
      auto const& r = s.dims[d];
      if (r.sd == 0) continue;  // a constant column (a Cholesky factor's corner): nothing to converge
      if (!(r.rhat <= 1.01)) {
        ++bad_r;
        if (!(s.dims[worst_r].rhat >= r.rhat)) worst_r = d;
        if (bad_r == 1) worst_r = d;
      }
      if (r.ess > double(s.draws) || r.ess_mean > double(s.draws)) {
        ++over;
        min_sq = std::min(min_sq, r.ess_sq);
      }
      double e = std::min(r.ess, r.ess_tail);
      if (!(e >= 400)) {
        if (low == 0 || !(std::min(s.dims[worst_low].ess, s.dims[worst_low].ess_tail) <= e)) worst_low = d;
        ++low;
      }
    }
    if (bad_r) {
      std::snprintf(b, sizeof b,
                    "WARNING: R-hat above 1.01 in %d of %d dimensions (largest %.4f, %s): the chains do not "
                    "agree with each other, so they have not converged; run longer or start them better.",
                    bad_r, s.dim(), s.dims[worst_r].rhat, s.label(worst_r).c_str());
      w.emplace_back(b);
    }
    if (over) {
      std::snprintf(b, sizeof b,
                    "WARNING: ESS above the number of draws (%lld) in %d of %d dimensions: the chains are "
                    "antithetic, which helps the mean only. Variances and quantiles are estimated from far "
                    "fewer effective draws: the ESS of (x - mean)^2 there is as low as %.0f.",
                    (long long)s.draws, over, s.dim(), min_sq);
      w.emplace_back(b);
    }
    if (low) {
      std::snprintf(b, sizeof b,
                    "WARNING: bulk or tail ESS below 400 in %d of %d dimensions (lowest %.0f, %s): too few "
                    "effective draws for R-hat and the quantiles to be reliable; run longer.",
                    low, s.dim(), std::min(s.dims[worst_low].ess, s.dims[worst_low].ess_tail), s.label(worst_low).c_str());
      w.emplace_back(b);
    }
    if (s.chains_apart > 0) {
      std::snprintf(b, sizeof b,
                    "WARNING: %lld of %lld chains sit apart from the others (the farthest %.1f within-chain sds from "
                    "the median chain means, most in %s: a chain mean %.4g against %.4g): the chains explore "
                    "separate regions (modes, "
                    "or places they cannot cross), and the share of chains in each is not its probability, so the "
                    "numbers above mix the regions in the wrong proportions. Look at the chains one by one; more "
                    "chains or a longer warm-up show how many regions there are, not their weights.",
                    (long long)s.chains_apart, (long long)s.live_chains(), s.apart_distance, s.label(s.apart_dim).c_str(), s.apart_mean,
                    s.apart_median);
      w.emplace_back(b);
    }
  }
  if (std::isfinite(s.target_acceptance) &&
      (s.acceptance < s.target_acceptance - s.acceptance_band ||
       (!s.harmonic_target && s.acceptance > s.target_acceptance + s.acceptance_band))) {
    std::snprintf(b, sizeof b,
                  "WARNING: acceptance %.4f is far from the kernel's target %.3f (more than %.2f away): the step "
                  "size is %s.",
                  s.acceptance, s.target_acceptance, s.acceptance_band,
                  s.acceptance < s.target_acceptance ? "too large (too many rejections)" : "too small (slow exploration)");
    w.emplace_back(b);
  }
  if (std::isfinite(s.chain_acceptance_min) &&
      (s.chain_acceptance_max - s.chain_acceptance_min > 2 * s.acceptance_band ||
       s.chain_acceptance_min < 0.5 * s.chain_acceptance_median)) {
    std::snprintf(b, sizeof b,
                  "WARNING: acceptance differs widely between chains (min %.4f, median %.4f, max %.4f): "
                  "some chains sit in regions where the step size does not suit them, or are stuck.",
                  s.chain_acceptance_min, s.chain_acceptance_median, s.chain_acceptance_max);
    w.emplace_back(b);
  }
  return w;
}

template <class Table>
void print_summary(std::ostream& os, Table const& s) {
  char line[256];
  if (s.warmup_seconds > 0)
    std::snprintf(line, sizeof line, "ember: %lld chains, %lld kept draws each, %.3f s (warm-up %.3f s)\n",
                  (long long)s.chains, (long long)s.kept, s.seconds, s.warmup_seconds);
  else
    std::snprintf(line, sizeof line, "ember: %lld chains, %lld kept draws each, %.3f s\n", (long long)s.chains,
                  (long long)s.kept, s.seconds);
  os << line;
  auto warnings = summary_warnings(s);
  std::size_t next = 0;
  if (s.divergent_chains > 0) os << "  " << warnings[next++] << "\n";
  if (!s.has_statistics()) {
    std::snprintf(line, sizeof line, "  too few finite chains or draws for statistics (%lld of %lld chains live)\n",
                  (long long)s.live_chains(), (long long)s.chains);
    os << line;
  } else if (s.from_draws) {
    std::snprintf(line, sizeof line, "  statistics over %lld recorded draws of %lld non-divergent chains\n",
                  (long long)s.draws, (long long)s.live_chains());
    os << line;
    int const w = s.name_width();
    std::snprintf(line, sizeof line, "  %-*s %11s %11s %11s %11s %11s %12s %9s\n", w, s.names.empty() ? "dim" : "name",
                  "mean", "sd", "MCSE", "ESS bulk", "ESS tail", "ESS (x-m)^2", "R-hat");
    os << line;
    for (int d = 0; d < s.dim(); ++d) {
      auto const& r = s.dims[d];
      std::snprintf(line, sizeof line, "  %-*s %11.4f %11.4f %11.4f %11.0f %11.0f %12.0f %9.4f\n", w, s.column(d).c_str(),
                    r.mean, r.sd, r.mcse, r.ess, r.ess_tail, r.ess_sq, r.rhat);
      os << line;
    }
  } else {
    int const w = s.name_width();
    os << "  statistics over final states (record() was not in the pipeline)\n";
    std::snprintf(line, sizeof line, "  %-*s %11s %11s\n", w, s.names.empty() ? "dim" : "name", "mean", "sd");
    os << line;
    for (int d = 0; d < s.dim(); ++d) {
      std::snprintf(line, sizeof line, "  %-*s %11.4f %11.4f\n", w, s.column(d).c_str(), s.dims[d].mean, s.dims[d].sd);
      os << line;
    }
  }
  std::snprintf(line, sizeof line, "  acceptance %.4f", s.acceptance);
  os << line;
  if (std::isfinite(s.target_acceptance)) {
    std::snprintf(line, sizeof line, s.harmonic_target ? " (target %.3f for the harmonic mean over chains)" : " (target %.3f)",
                  s.target_acceptance);
    os << line;
  }
  std::snprintf(line, sizeof line, ", divergent chains %lld, divergent transitions %lld\n",
                (long long)s.divergent_chains, (long long)s.divergent_transitions);
  os << line;
  if (s.gradients > 0) {
    std::snprintf(line, sizeof line, "  gradient evaluations %lld after warm-up, %lld in warm-up", (long long)s.gradients,
                  (long long)s.warmup_gradients);
    os << line;
    if (s.truncated_transitions > 0) {
      std::snprintf(line, sizeof line, "; %lld transitions at the trajectory cap", (long long)s.truncated_transitions);
      os << line;
    }
    os << "\n";
  }
  if (std::isfinite(s.chain_acceptance_min)) {
    std::snprintf(line, sizeof line, "  acceptance per chain: min %.4f, median %.4f, max %.4f\n",
                  s.chain_acceptance_min, s.chain_acceptance_median, s.chain_acceptance_max);
    os << line;
  }
  if (std::int64_t const c = s.lowest_bfmi_chain(); c >= 0) {
    std::snprintf(line, sizeof line, "  E-BFMI per chain: lowest %.3f (chain %lld)\n", s.bfmi[std::size_t(c)], (long long)c);
    os << line;
  }
  for (; next < warnings.size(); ++next) os << "  " << warnings[next] << "\n";
}

// What `summarize` computes without the draws: counts, times, names, warnings of adaptation and
// the per-chain acceptance; the live chains' indices into `live`.
template <class R>
summary_table summary_head(R const& r, summary_options const& o, std::vector<std::int64_t>& live) {
  constexpr int D = R::dim;
  summary_table s;
  double const nan = std::numeric_limits<double>::quiet_NaN();
  s.dims.assign(std::size_t(D), {nan, nan, nan, nan, nan, nan, nan, nan, nan, nan});
  s.chains = r.chains();
  s.kept = r.kept();
  s.divergent_chains = r.divergent_chains();
  s.divergent_transitions = r.divergent_transitions();
  if constexpr (requires { r.gradients(); }) {
    s.truncated_transitions = r.truncated_transitions();
    s.gradients = r.gradients();
    s.warmup_gradients = r.warmup_gradients();
  }
  s.acceptance = r.acceptance_rate();
  s.seconds = r.seconds();
  if constexpr (requires { r.warmup_seconds(); }) s.warmup_seconds = r.warmup_seconds();
  s.target_acceptance = o.target_acceptance;
  s.acceptance_band = o.acceptance_band;
  s.harmonic_target = o.harmonic_target;
  if constexpr (requires { r.adapted().warnings; }) s.adaptation_warnings = r.adapted().warnings;
  if constexpr (requires { r.variables(); r.column_name(0); })
    if (!r.variables().empty())
      for (int d = 0; d < D; ++d) s.names.push_back(r.column_name(d));
  for (std::int64_t c = 0; c < r.chains(); ++c)
    if (!r.divergent(c)) live.push_back(c);
  if (!o.chain_acceptance.empty()) chain_acceptance_spread(s, o.chain_acceptance, live);
  return s;
}
// Each chain's E-BFMI where `r` kept the Hamiltonian of its transitions (NaN for diverged chains).
template <class R>
void chain_bfmi(summary_table& s, R const& r, std::vector<std::int64_t> const& live) {
  if constexpr (requires { r.has_sample_stat(draw_stat::energy); r.sample_stat(draw_stat::energy); })
    if (r.has_sample_stat(draw_stat::energy) && r.kept() >= 3) {
      auto const e = r.sample_stat(draw_stat::energy);  // (chain, draw): one column read once
      chain_bfmi_of(s, e.data(), live);
    }
}
}  // namespace detail

/// The summary of a run `r` (a `result<T, D>`), from its public accessors.
template <class R>
summary_table summarize(R const& r, summary_options const& o = {}) {
  std::vector<std::int64_t> live;
  summary_table s = detail::summary_head(r, o, live);
  detail::chain_bfmi(s, r, live);
  auto const draws = r.samples();
  s.from_draws = !draws.empty() && r.kept() > 0;
  if (s.from_draws) {
    if constexpr (requires { draws.ptr; }) {
      detail::summarize_draws(s, draws.ptr, live, o.threads);
    } else {  // another type's draws, `draws(k, c, d)`: copied into result's layout first
      constexpr int D = R::dim;
      std::int64_t const C = r.chains(), K = r.kept();
      detail::require_host_memory((long double)K * D * C * sizeof(double), "ember::summarize", "a copy of the draws",
                                  "give the result type draws in result's layout (`samples().ptr`)");
      std::vector<double> copy(std::size_t(K * D * C));
      for (std::int64_t k = 0; k < K; ++k)
        for (int d = 0; d < D; ++d)
          for (std::int64_t c = 0; c < C; ++c) copy[std::size_t((k * D + d) * C + c)] = double(draws(k, c, d));
      detail::summarize_draws(s, copy.data(), live, o.threads);
    }
  } else {
    detail::summarize_final_states(s, r.final_states().data(), live);
  }
  return s;
}

}  // namespace ember
