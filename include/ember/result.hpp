#pragma once
/// \file
/// `result<T, D>`: what `sample` returns, in host memory.
///
/// Layouts (documented because users index raw memory and write it to files):
///  - kept draws: `samples()(k, c, d)` = `data[(k·D + d)·chains + c]`, i.e. draw-major, then
///    dimension, then chain. Consecutive chains are adjacent, which is what a SIMD batch of
///    chains (CPU) or a warp of threads (GPU) writes in one store.
///  - final states: `final_states()[d·chains + c]`, the same layout without the draw index.
///
/// Chains that went non-finite are frozen at their last finite state (so no NaN ever reaches the
/// draws or the moments), flagged by `divergent(c)` and left out of `summary()` and `trace()`.

#include <ember/core/vec.hpp>
#include <ember/diagnostics/ess.hpp>
#include <ember/diagnostics/rhat.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <ostream>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace ember {

/// A read-only view of kept draws in the layout above.
template <class T, int D>
struct draws_view {
  T const* ptr = nullptr;
  std::int64_t kept = 0, chains = 0;

  T operator()(std::int64_t k, std::int64_t c, int d) const { return ptr[(k * D + d) * chains + c]; }
  vec<T, D> draw(std::int64_t k, std::int64_t c) const {
    vec<T, D> v;
    for (int d = 0; d < D; ++d) v[d] = (*this)(k, c, d);
    return v;
  }
  std::span<T const> data() const { return {ptr, std::size_t(kept * D * chains)}; }
  bool empty() const { return kept == 0; }
};

/// The adapted parameters of a run (after warm-up: what every later transition uses).
struct adaptation_report {
  double step_size = std::numeric_limits<double>::quiet_NaN();
  double trajectory_length = 0;       ///< HMC with ChEES or a trajectory length; else 0
  int integrator_steps = 0;           ///< HMC: its fixed step count (ChEES: the mean ⌈uT/ε⌉ is T/2ε)
  std::vector<double> metric_scale;   ///< diagonal metric: standard deviations; dense: L row by row
};

/// Per-kept-step diagnostics over the chains still live at that step (`track(...)`).
/// Vectors have one entry per kept step; those of diagnostics that were not tracked are empty.
/// A kept step at which no chain is live has `live_chains` 0 and zeros elsewhere (never 0/0).
template <int D>
struct trace {
  std::vector<std::int64_t> live_chains;
  std::vector<vec<double, D>> mean, variance;  ///< `moments`: per dimension, over chains
  std::vector<double> acceptance;              ///< `acceptance`: since the previous kept step
  std::vector<double> energy;                  ///< `mean_energy`: mean U over chains
};

/// Per-dimension statistics of a run, printable with `<<`.
template <int D>
struct summary_table {
  struct row {
    double mean, sd, ess, rhat;
  };
  row dims[D];
  std::int64_t chains = 0, kept = 0, divergent_chains = 0, divergent_transitions = 0;
  double acceptance = 0, seconds = 0;
  bool from_draws = false;  ///< statistics over recorded draws (else over final states)

  friend std::ostream& operator<<(std::ostream& os, summary_table const& s) {
    char line[160];
    std::snprintf(line, sizeof line, "ember: %lld chains, %lld kept draws each, %.3f s\n",
                  (long long)s.chains, (long long)s.kept, s.seconds);
    os << line;
    os << (s.from_draws ? "  statistics over the recorded draws of non-divergent chains\n"
                        : "  statistics over final states (record() was not in the pipeline)\n");
    if (s.chains - s.divergent_chains < 2) {
      std::snprintf(line, sizeof line, "  fewer than two chains stayed finite (%lld divergent): no statistics\n",
                    (long long)s.divergent_chains);
      return os << line;
    }
    os << "  dim        mean          sd         ESS     R-hat\n";
    for (int d = 0; d < D; ++d) {
      auto const& r = s.dims[d];
      if (s.from_draws)
        std::snprintf(line, sizeof line, "  %3d %11.4f %11.4f %11.0f %9.4f\n", d, r.mean, r.sd, r.ess, r.rhat);
      else
        std::snprintf(line, sizeof line, "  %3d %11.4f %11.4f           -         -\n", d, r.mean, r.sd);
      os << line;
    }
    std::snprintf(line, sizeof line, "  acceptance %.4f, divergent chains %lld, divergent transitions %lld\n",
                  s.acceptance, (long long)s.divergent_chains, (long long)s.divergent_transitions);
    return os << line;
  }
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
  /// Kept draws; empty unless the pipeline has `record()`.
  draws_view<T, D> samples() const { return {samples_.data(), samples_.empty() ? 0 : kept_, chains_}; }
  std::span<T const> final_states() const { return final_; }
  vec<T, D> final_state(std::int64_t c) const {
    if (c < 0 || c >= chains_)
      throw std::out_of_range("ember::result::final_state: chain " + std::to_string(c) + " of " +
                              std::to_string(chains_));
    vec<T, D> v;
    for (int d = 0; d < D; ++d) v[d] = final_[std::size_t(d * chains_ + c)];
    return v;
  }
  ember::trace<D> const& trace() const { return trace_; }
  /// Whether chain c went non-finite (and was frozen at its last finite state).
  bool divergent(std::int64_t c) const { return frozen_[std::size_t(c)] != 0; }
  /// The transition at which chain c went non-finite (−1: its start state was not finite).
  std::int64_t diverged_at(std::int64_t c) const { return diverged_at_[std::size_t(c)]; }
  std::int64_t divergent_chains() const { return divergent_chains_; }
  /// Transitions the kernel flagged as divergent (non-finite proposals, HMC energy errors above
  /// the threshold), over all chains, after warm-up (burn-in and kept phase).
  std::int64_t divergent_transitions() const { return divergent_transitions_; }
  /// Mean fraction of accepted transitions after burn-in, over non-divergent chains.
  double acceptance_rate() const { return acceptance_; }
  /// Accepted kept-phase transitions of chain c (an exact count).
  std::int64_t accepted(std::int64_t c) const { return accepted_.at(std::size_t(c)); }
  /// The kernel's adapted parameters (step size, metric, trajectory length) after warm-up.
  adaptation_report const& adapted() const { return adapted_; }
  /// Wall-clock seconds of the sampling itself (allocation and summaries excluded).
  double seconds() const { return seconds_; }

  /// Per-dimension mean, sd, ESS and split-R̂ over the recorded draws of non-divergent chains
  /// (or mean and sd over final states when nothing was recorded), with acceptance and
  /// divergences.
  summary_table<D> summary() const {
    summary_table<D> s;
    s.chains = chains_;
    s.kept = kept();
    s.divergent_chains = divergent_chains_;
    s.divergent_transitions = divergent_transitions_;
    s.acceptance = acceptance_;
    s.seconds = seconds_;
    s.from_draws = !samples_.empty() && kept() > 0;
    std::vector<std::int64_t> live;
    for (std::int64_t c = 0; c < chains_; ++c)
      if (!frozen_[std::size_t(c)]) live.push_back(c);
    auto M = std::int64_t(live.size());
    for (int d = 0; d < D && M < 2; ++d) s.dims[d] = {0, 0, 0, 0};
    for (int d = 0; d < D && M >= 2; ++d) {
      auto& r = s.dims[d];
      if (s.from_draws) {
        auto x = [&](std::int64_t j, std::int64_t i) { return double(samples()(i, live[std::size_t(j)], d)); };
        double m = 0, q = 0;
        for (std::int64_t j = 0; j < M; ++j)
          for (std::int64_t i = 0; i < kept(); ++i) m += x(j, i);
        m /= double(M * kept());
        for (std::int64_t j = 0; j < M; ++j)
          for (std::int64_t i = 0; i < kept(); ++i) q += (x(j, i) - m) * (x(j, i) - m);
        r = {m, std::sqrt(q / double(M * kept() - 1)), ess(x, M, kept()), split_rhat(x, M, kept())};
      } else {
        double m = 0, q = 0;
        for (auto c : live) m += double(final_[std::size_t(d * chains_ + c)]);
        m /= double(M);
        for (auto c : live) q += std::pow(double(final_[std::size_t(d * chains_ + c)]) - m, 2);
        r = {m, std::sqrt(q / double(M - 1)), std::nan(""), std::nan("")};
      }
    }
    return s;
  }

  // Filled by the run (run.hpp).
  std::int64_t chains_ = 0, kept_ = 0, kept_transitions_ = 0;
  std::vector<std::int64_t> accepted_;
  adaptation_report adapted_;
  std::vector<T> samples_, final_;
  std::vector<std::uint8_t> frozen_;
  std::vector<std::int64_t> diverged_at_;
  std::int64_t divergent_chains_ = 0, divergent_transitions_ = 0;
  double acceptance_ = 0, seconds_ = 0;
  ember::trace<D> trace_;
};

namespace detail {

// Tracked sums per kept step, as every backend accumulates them:
// [live count, Σ energy, Σ window acceptance, Σx (D), Σx² (D)].
template <int D>
inline constexpr int track_stride = 3 + 2 * D;

// Fills the run-level numbers of `out` from a backend's totals: divergent chains (from the
// per-chain flags), divergent transitions, the acceptance rate over live chains, and the trace
// from `track` (kept × track_stride sums). A kept step with no live chain has zeros and
// live_chains = 0, never 0/0.
template <class P, class T, int D>
void finish_result(result<T, D>& out, double const* track, double accepted, double divergent) {
  out.divergent_transitions_ = std::int64_t(divergent);
  out.divergent_chains_ = 0;
  for (auto f : out.frozen_) out.divergent_chains_ += f;
  std::int64_t const live = out.chains_ - out.divergent_chains_;
  out.acceptance_ = (live > 0 && out.kept_transitions_ > 0) ? accepted / (double(live) * double(out.kept_transitions_)) : 0.0;
  if constexpr (P::tracks_any) {
    auto& tr = out.trace_;
    for (std::int64_t k = 0; k < out.kept_; ++k) {
      double const* a = track + std::size_t(k) * track_stride<D>;
      double const n = a[0], inv = n > 0 ? 1.0 / n : 0.0;
      tr.live_chains.push_back(std::int64_t(n));
      if constexpr (P::tracks_moments) {
        vec<double, D> m, v;
        for (int d = 0; d < D; ++d) {
          m[d] = a[3 + d] * inv;
          v[d] = n > 1 ? std::max(0.0, (a[3 + D + d] - n * m[d] * m[d]) / (n - 1)) : 0.0;
        }
        tr.mean.push_back(m);
        tr.variance.push_back(v);
      }
      if constexpr (P::tracks_energy) tr.energy.push_back(a[1] * inv);
      if constexpr (P::tracks_acceptance) tr.acceptance.push_back(a[2] * inv);
    }
  }
}

}  // namespace detail

}  // namespace ember
