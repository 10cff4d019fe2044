#pragma once
/// \file
/// `result<T, D>`: what `sample` returns, in host memory.
///
/// Layouts (documented because users index raw memory and write it to files):
///  - kept draws: `samples()(k, c, d)` = `data[(k·D + d)·chains + c]`, i.e. draw-major, then
///    dimension, then chain. Consecutive chains are adjacent, which is what a SIMD batch of
///    chains (CPU) or a warp of threads (GPU) writes in one store.
///  - final states: `final_states()[d·chains + c]`, the same layout without the draw index.
///  - per-draw statistics (`record_stats()`): `sample_stats_data()[(k·S + j)·chains + c]` for the
///    j-th of the S statistics `sample_stats()` names, the draws' layout with statistics as columns.
///
/// Chains that went non-finite are frozen at their last finite state (so no NaN ever reaches the
/// draws or the moments), flagged by `divergent(c)` and left out of `summary()` and `trace()`.

#include <ember/core/vec.hpp>
#include <ember/pipeline/stages.hpp>
#include <ember/pipeline/track.hpp>
#include <ember/host_cache.hpp>
#include <ember/diagnostics/summary.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <ostream>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace ember {

namespace detail {
/// Throws std::out_of_range "<who>: <what> i is not in [0, n)" unless 0 ≤ i < n.
inline void require_index(std::int64_t i, std::int64_t n, char const* who, char const* what) {
  if (i < 0 || i >= n)
    throw std::out_of_range(std::string(who) + ": " + what + " " + std::to_string(i) + " is not in [0, " +
                            std::to_string(n) + ")");
}
}  // namespace detail

/// A read-only view of kept draws in the layout above. `operator()` and `draw` check their
/// indices (std::out_of_range); `unchecked` does not, for loops whose indices are in range by
/// construction.
template <class T, int D>
struct draws_view {
  T const* ptr = nullptr;
  std::int64_t kept = 0, chains = 0;

  T unchecked(std::int64_t k, std::int64_t c, int d) const { return ptr[(k * D + d) * chains + c]; }
  T operator()(std::int64_t k, std::int64_t c, int d) const {
    require(k, c);
    detail::require_index(d, D, "ember::result::samples", "dimension");
    return unchecked(k, c, d);
  }
  vec<T, D> draw(std::int64_t k, std::int64_t c) const {
    require(k, c);
    vec<T, D> v;
    for (int d = 0; d < D; ++d) v[d] = unchecked(k, c, d);
    return v;
  }
  std::span<T const> data() const { return {ptr, std::size_t(kept * D * chains)}; }
  bool empty() const { return kept == 0; }

 private:
  void require(std::int64_t k, std::int64_t c) const {
    if (ptr == nullptr)
      throw std::out_of_range("ember::result::samples: no draws were kept: add record() to the pipeline");
    detail::require_index(k, kept, "ember::result::samples", "draw");
    detail::require_index(c, chains, "ember::result::samples", "chain");
  }
};

/// The adapted parameters of a run (after warm-up: what every later transition uses).
struct adaptation_report {
  double step_size = std::numeric_limits<double>::quiet_NaN();
  double trajectory_length = 0;       ///< HMC with ChEES or a trajectory length, adjusted MCLMC's mean L; else 0
  int integrator_steps = 0;           ///< HMC: its fixed step count (ChEES: the mean ⌈uT/ε⌉ is T/2ε)
  std::vector<double> metric_scale;   ///< diagonal metric: standard deviations; dense: L row by row
  bool dense_metric = false;          ///< whether the metric is dense (dense_mass(), or auto_mass()'s choice)
  std::vector<double> step_sizes;     ///< step_size(per_chain): each chain's ε (`step_size` is their median)
  /// An adapted quantity that ended at a bound (ChEES's T at ε or 1000ε), in words; the summary
  /// prints each as a WARNING.
  std::vector<std::string> warnings;
  /// Chains restarted in warm-up from a moving chain's state because they had not moved (run/run.hpp).
  std::int64_t restarted_chains = 0;
  /// Chains restarted in warm-up from another chain's state because they had settled with their
  /// energy more than 20·D above the lowest quarter of the chains' (run/run.hpp: a local mode of
  /// negligible mass).
  std::int64_t restarted_high_energy_chains = 0;
};

/// A named quantity among a result's columns: a model's parameter or a derived quantity
/// (posterior.hpp). Its values are columns [offset, offset + size), row by row for a matrix.
struct variable {
  std::string name;
  std::vector<int> shape;  ///< extents; empty for a scalar
  int offset = 0, size = 1;
  std::string group = "posterior";  ///< its ArviZ group: posterior or posterior_predictive
};

template <class T, int D>
class result {
 public:
  using value_type = T;
  static constexpr int dim = D;

  std::int64_t chains() const { return chains_; }
  /// Kept draws per chain (kept-phase transitions / thin).
  std::int64_t kept() const { return kept_; }
  /// Kept-phase transitions per chain (after warm-up and burn-in).
  std::int64_t kept_transitions() const { return kept_transitions_; }
  /// Kept draws; empty unless the pipeline has `record()`. A view of the result's memory, as are
  /// `final_states()` and `sample_stats_data()`: on a temporary result (`sample(...).samples()`)
  /// they are refused at compile time, since the view would dangle at the end of the statement.
  draws_view<T, D> samples() const& { return {samples_.data(), samples_.empty() ? 0 : kept_, chains_}; }
  template <class R = T>
  draws_view<T, D> samples() const&& {
    static_assert(!std::is_same_v<R, R>, "ember::result::samples() on a temporary result would dangle at the end of the "
                                         "statement: keep the result in a variable first (auto r = sample(...);)");
    return {};
  }
  std::span<T const> final_states() const& { return final_; }
  template <class R = T>
  std::span<T const> final_states() const&& {
    static_assert(!std::is_same_v<R, R>, "ember::result::final_states() on a temporary result would dangle at the end of the "
                                         "statement: keep the result in a variable first (auto r = sample(...);)");
    return {};
  }
  vec<T, D> final_state(std::int64_t c) const {
    detail::require_index(c, chains_, "ember::result::final_state", "chain");
    vec<T, D> v;
    for (int d = 0; d < D; ++d) v[d] = final_[std::size_t(d * chains_ + c)];
    return v;
  }
  ember::trace<D> const& trace() const { return trace_; }
  /// The per-draw statistics the run kept (`record_stats()` in its pipeline), in column order:
  /// lp, acceptance_rate, diverging, n_steps, truncated, then energy and tree_depth where the
  /// kernel reports them (pipeline/stages.hpp); empty without `record_stats()`.
  std::vector<draw_stat> const& sample_stats() const { return stat_columns_; }
  /// Whether statistic `s` was kept.
  bool has_sample_stat(draw_stat s) const {
    return std::find(stat_columns_.begin(), stat_columns_.end(), s) != stat_columns_.end();
  }
  /// `s`'s name in ArviZ's sample_stats group (`truncated` is `reached_max_treedepth` for NUTS).
  std::string sample_stat_name(draw_stat s) const { return draw_stat_name(s, has_sample_stat(draw_stat::tree_depth)); }
  /// Statistic `s` of kept draw k of chain c, as its transition reported it. A chain frozen
  /// before a transition (`divergent(c)`) made none: its rows hold lp of the state it is frozen
  /// at, acceptance 0, no divergence or truncation, 0 steps, energy NaN and depth 0. Throws
  /// std::out_of_range for a statistic not kept or an index out of range.
  T sample_stat(draw_stat s, std::int64_t k, std::int64_t c) const {
    int const j = stat_column(s);
    detail::require_index(k, kept_, "ember::result::sample_stat", "draw");
    detail::require_index(c, chains_, "ember::result::sample_stat", "chain");
    return stats_[std::size_t((k * std::int64_t(stat_columns_.size()) + j) * chains_ + c)];
  }
  /// Every kept draw's statistic `s`, chain by chain: element c·kept() + k, ArviZ's (chain, draw).
  std::vector<T> sample_stat(draw_stat s) const {
    int const j = stat_column(s);
    auto const S = std::int64_t(stat_columns_.size());
    std::vector<T> v(std::size_t(chains_ * kept_));
    for (std::int64_t c = 0; c < chains_; ++c)
      for (std::int64_t k = 0; k < kept_; ++k) v[std::size_t(c * kept_ + k)] = stats_[std::size_t((k * S + j) * chains_ + c)];
    return v;
  }
  /// The statistics in the layout above (kept × sample_stats().size() × chains).
  std::span<T const> sample_stats_data() const& { return stats_; }
  template <class R = T>
  std::span<T const> sample_stats_data() const&& {
    static_assert(!std::is_same_v<R, R>, "ember::result::sample_stats_data() on a temporary result would dangle at the end of "
                                         "the statement: keep the result in a variable first (auto r = sample(...);)");
    return {};
  }
  /// The named quantities of the columns (a posterior in a model's terms, posterior.hpp); empty
  /// for a run in the sampler's coordinates.
  std::vector<variable> const& variables() const { return variables_; }
  /// Column d's name: `tau`, `theta[3]`, `L[1,0]` from `variables()`, else `x[d]`.
  std::string column_name(int d) const {
    detail::require_index(d, D, "ember::result::column_name", "column");
    for (auto const& v : variables_) {
      if (d < v.offset || d >= v.offset + v.size) continue;
      if (v.shape.empty()) return v.name;
      std::string s = v.name + "[";
      int rest = d - v.offset, stride = v.size;
      for (std::size_t a = 0; a < v.shape.size(); ++a) {
        stride /= v.shape[a];
        if (a) s += ',';
        s += std::to_string(rest / stride);
        rest %= stride;
      }
      return s + "]";
    }
    std::string s = "x[";  // appended, not "x[" + string&&: GCC 12's -Wrestrict misfires there (PR 105329)
    s += std::to_string(d);
    return s + "]";
  }
  /// Whether chain c went non-finite (and was frozen at its last finite state).
  bool divergent(std::int64_t c) const {
    detail::require_index(c, chains_, "ember::result::divergent", "chain");
    return frozen_[std::size_t(c)] != 0;
  }
  /// The transition at which chain c went non-finite (−1: its start state was not finite);
  /// meaningful where `divergent(c)`.
  std::int64_t diverged_at(std::int64_t c) const {
    detail::require_index(c, chains_, "ember::result::diverged_at", "chain");
    return diverged_at_[std::size_t(c)];
  }
  std::int64_t divergent_chains() const { return divergent_chains_; }
  /// Transitions the kernel flagged as divergent (non-finite proposals, HMC energy errors above
  /// the threshold), over all chains, after warm-up (burn-in and kept phase).
  std::int64_t divergent_transitions() const { return divergent_transitions_; }
  /// Transitions after warm-up whose trajectory a cap cut short, over all chains: NUTS trees that
  /// reached the maximum depth without turning, ChEES trajectories longer than
  /// `max_integrator_steps`. Such a chain explores more slowly than its settings say (a summary
  /// warns); its draws are still exact.
  std::int64_t truncated_transitions() const { return truncated_transitions_; }
  /// Gradient evaluations after warm-up (burn-in and kept phase) and in warm-up, over all chains,
  /// as the kernel reported them: exact for every built-in kernel (NUTS's vary by transition);
  /// 0 for a user's kernel whose step_info does not set `gradients` (docs/custom_kernels.md).
  std::int64_t gradients() const { return gradients_; }
  std::int64_t warmup_gradients() const { return warmup_gradients_; }
  /// Mean fraction of accepted transitions after burn-in, over non-divergent chains (NUTS: of
  /// transitions that moved).
  double acceptance_rate() const { return acceptance_; }
  /// The acceptance the kernel was tuned to (after warm-up) or its fixed target; NaN if none.
  double target_acceptance() const { return target_acceptance_; }
  /// Whether that target is for the harmonic mean over chains of each transition's acceptance
  /// probability (ChEES), which `acceptance_rate()`, an arithmetic mean, bounds from above.
  bool harmonic_target() const { return harmonic_target_; }
  /// Accepted kept-phase transitions of chain c (an exact count).
  std::int64_t accepted(std::int64_t c) const {
    detail::require_index(c, std::int64_t(accepted_.size()), "ember::result::accepted", "chain");
    return accepted_[std::size_t(c)];
  }
  /// The kernel's adapted parameters (step size, metric, trajectory length) after warm-up.
  adaptation_report const& adapted() const { return adapted_; }
  /// Wall-clock seconds of every transition the run made, warm-up included (allocation, the
  /// result's copies and summaries excluded); `warmup_seconds()` is the warm-up's part and
  /// `sampling_seconds()` the rest (burn-in and kept transitions), what ESS per second divides by.
  double seconds() const { return seconds_; }
  double warmup_seconds() const { return warmup_seconds_; }
  double sampling_seconds() const { return seconds_ - warmup_seconds_; }

  /// Per-dimension mean, sd, MCSE, bulk and tail ESS, ESS of (x − x̄)² and rank-normalised
  /// R̂ over the recorded draws of non-divergent chains (or mean and sd over final states when
  /// nothing was recorded), with acceptance, divergences and WARNING lines; see
  /// `diagnostics/summary.hpp`. `o` passes the kernel's target acceptance and per-chain rates.
  /// Without options the kernel's target acceptance (after warm-up: the one it was tuned to) and
  /// every chain's own acceptance rate are passed along, so both warnings are on.
  summary_table summary(summary_options o = {}) const {
    std::vector<double> rates;
    if (std::isnan(o.target_acceptance)) {
      o.target_acceptance = target_acceptance_;
      o.harmonic_target = harmonic_target_;
    }
    if (o.chain_acceptance.empty() && kept_transitions_ > 0 && std::int64_t(accepted_.size()) == chains_) {
      rates.resize(accepted_.size());
      for (std::size_t c = 0; c < rates.size(); ++c) rates[c] = double(accepted_[c]) / double(kept_transitions_);
      o.chain_acceptance = rates;
    }
    return summarize(*this, o);
  }

  // Filled by the run (run/run.hpp).
  std::int64_t chains_ = 0, kept_ = 0, kept_transitions_ = 0;
  detail::host_buffer<std::int64_t> accepted_;
  adaptation_report adapted_;
  double target_acceptance_ = std::numeric_limits<double>::quiet_NaN();
  bool harmonic_target_ = false;  ///< ChEES: the target is for the harmonic mean over chains
  detail::host_buffer<T> samples_;
  detail::host_buffer<T> final_;  // these four: sized, then copied in full from the run (copy_out)
  detail::host_buffer<std::uint8_t> frozen_;
  detail::host_buffer<std::int64_t> diverged_at_;
  std::int64_t divergent_chains_ = 0, divergent_transitions_ = 0, truncated_transitions_ = 0;
  std::int64_t gradients_ = 0, warmup_gradients_ = 0;
  double acceptance_ = 0, seconds_ = 0, warmup_seconds_ = 0;
  ember::trace<D> trace_;
  std::vector<variable> variables_;
  detail::host_buffer<T> stats_;          // kept × stat_columns_.size() × chains (record_stats())
  std::vector<draw_stat> stat_columns_;

 private:
  int stat_column(draw_stat s) const {
    auto const it = std::find(stat_columns_.begin(), stat_columns_.end(), s);
    if (it == stat_columns_.end())
      throw std::out_of_range(std::string("ember::result::sample_stat: ") + draw_stat_name(s) +
                              (stat_columns_.empty() ? " was not kept: add record_stats() to the pipeline (after mpi::gather, "
                                                       "the statistics are on the root rank only)"
                                                     : " is not reported by this kernel"));
    return int(it - stat_columns_.begin());
  }
};

namespace detail {

// Fills the run-level numbers of `out` from a backend's totals: divergent chains (from the
// per-chain flags), divergent transitions, the acceptance rate over live chains, and the trace
// from `track` (kept steps × P::track_stride sums, pipeline/track.hpp).
template <class P, class T, int D>
void finish_result(result<T, D>& out, typename P::tracked_type const& stats, double const* track, double accepted,
                   double divergent) {
  out.divergent_transitions_ = std::int64_t(divergent);
  out.divergent_chains_ = 0;
  for (auto f : out.frozen_) out.divergent_chains_ += f;
  std::int64_t const live = out.chains_ - out.divergent_chains_;
  out.acceptance_ = (live > 0 && out.kept_transitions_ > 0) ? accepted / (double(live) * double(out.kept_transitions_)) : 0.0;
  finish_trace(stats, track, out.kept_, out.trace_);
}

}  // namespace detail

}  // namespace ember
