#pragma once
/// \file
/// `posterior(result, U, ...)`: a run of a model with named parameters (ad/params.hpp) in the
/// model's own terms: each kept draw and final state mapped from the sampler's unconstrained
/// coordinates to the parameters' constrained values (σ, not log σ), named and shaped, plus
/// quantities a user function derives from each draw (Stan's generated quantities, NumPyro's
/// deterministic sites and posterior predictive draws), with random numbers from ember's streams.
///
/// The answer is a `result<T, C>` (C = the parameters' constrained values + the derived ones) with
/// the same chains, divergences, acceptance and times as the run, and `variables()` naming its
/// columns, so `summary()` prints names (`tau`, `theta[3]`, `L[1,0]`) and `save_npz` writes one
/// array per variable in ArviZ's (chain, draw, *shape) layout. The run's `trace()` stays with the
/// run (it is in the sampler's coordinates). Derived quantities are computed in double, one draw at
/// a time, on the host.
///
/// A derived quantity: `generated<"name", extents...>(f)` (ArviZ group `posterior`) or
/// `predictive<"name", extents...>(f)` (group `posterior_predictive`), where
/// `f(p, rng, out)` reads the draw's parameters as a model body does (`p[tau]`, `p[theta][j]`),
/// draws random numbers from `rng` (a `draw_rng`: the stream of (seed, chain, draw)) and writes
/// its values into `out` (a `std::span<double>` of the quantity's size, row by row). Chains run in
/// parallel (OpenMP), so `f` must be safe to call from several threads at once (read-only captures).

#include <ember/ad/model.hpp>
#include <ember/core/rng.hpp>
#include <ember/result.hpp>

#include <cmath>
#include <algorithm>
#include <cstdint>
#include <exception>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ember {

/// The random numbers of one kept draw of one chain, for derived quantities: a pure function of
/// (seed, chain, draw, call order), whatever the threads.
class draw_rng {
 public:
  draw_rng(std::uint64_t seed, std::uint32_t chain, std::uint32_t draw)
      : r_(make_chain_rng<double>(seed, chain, draw)) {}

  /// A uniform in (0, 1].
  double uniform() {
    if (next_ == 4) {
      u_ = r_.uniform_from<4>(purpose::derived, block_++);
      next_ = 0;
    }
    return u_[next_++];
  }
  /// A standard normal (Box–Muller on two uniforms; the second normal is kept for the next call).
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double const u = uniform(), v = uniform();
    double const rad = std::sqrt(-2 * std::log(u)), th = 6.283185307179586 * v;
    spare_ = rad * std::sin(th);
    has_spare_ = true;
    return rad * std::cos(th);
  }
  double normal(double mu, double sigma) { return mu + sigma * normal(); }
  /// 1 with probability p, else 0.
  double bernoulli(double p) { return uniform() <= p ? 1.0 : 0.0; }
  double bernoulli_logit(double eta) { return bernoulli(1 / (1 + std::exp(-eta))); }
  /// A Poisson count of mean λ ≥ 0: multiplication of uniforms below λ = 10, else Hörmann's
  /// transformed rejection with squeeze (PTRS; W. Hörmann, "The transformed rejection method for
  /// generating Poisson random variables", Insurance: Mathematics and Economics 12, 1993).
  double poisson(double lambda) {
    if (!(lambda >= 0) || !std::isfinite(lambda))
      throw std::invalid_argument(std::string("ember::draw_rng::poisson: the mean must be finite and >= 0, got ").append(std::to_string(lambda)));
    if (lambda < 10) {
      double const l = std::exp(-lambda);
      double k = 0, prod = uniform();
      while (prod > l) {
        prod *= uniform();
        ++k;
      }
      return k;
    }
    double const slam = std::sqrt(lambda), loglam = std::log(lambda);
    double const b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
    double const inv_alpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
    for (;;) {
      double const u = uniform() - 0.5, v = uniform(), us = 0.5 - std::fabs(u);
      double const k = std::floor((2 * a / us + b) * u + lambda + 0.43);
      if (us >= 0.07 && v <= vr) return k;
      if (k < 0 || (us < 0.013 && v > us)) continue;
      if (std::log(v) + std::log(inv_alpha) - std::log(a / (us * us) + b) <= -lambda + k * loglam - std::lgamma(k + 1))
        return k;
    }
  }
  double poisson_log(double eta) { return poisson(std::exp(eta)); }

 private:
  chain_rng<double> r_;
  std::uint32_t block_ = 0;
  vec<double, 4> u_{};
  int next_ = 4;
  bool has_spare_ = false;
  double spare_ = 0;
};

/// A quantity derived from each draw (see the file comment), made by `generated<...>(f)` or
/// `predictive<...>(f)`.
template <fixed_string Name, bool Predictive, class F, int... Ext>
struct derived_quantity {
  static_assert(((Ext > 0) && ...), "ember::generated: every extent must be positive");
  static_assert(detail::is_identifier(Name),
                "ember::generated: a quantity's name is letters, digits and _, not starting with a digit (it names an ArviZ variable)");
  static constexpr auto name = Name;
  static constexpr int size = (1 * ... * Ext);
  F f;
  static std::vector<int> shape() { return {Ext...}; }
  static char const* group() { return Predictive ? "posterior_predictive" : "posterior"; }
};
template <fixed_string Name, int... Ext, class F>
constexpr derived_quantity<Name, false, F, Ext...> generated(F const& f) {
  return {f};
}
template <fixed_string Name, int... Ext, class F>
constexpr derived_quantity<Name, true, F, Ext...> predictive(F const& f) {
  return {f};
}

/// How `posterior` draws its random numbers.
struct posterior_options {
  std::uint64_t seed = 0;  ///< the derived quantities' streams: (seed, chain, draw)
};

namespace detail {
template <class Q>
variable variable_of(int offset, char const* group) {
  std::vector<int> shape(Q::extents, Q::extents + Q::rank);
  return {Q::name.str(), shape, offset, Q::size, group};
}
// Draw y (D values) in the model's terms into `row` (C values, one chain's buffer, reused for every
// draw): the constrained parameters, transformed once, then each derived quantity reading them.
template <int D, class P, class... G>
void model_terms(P const& ps, vec<double, D> const& y, std::uint64_t seed, std::uint32_t chain, std::uint32_t draw,
                 std::vector<double>& row, G const&... g) {
  value_ctx<double, D, P> p{y};
  (void)ps.template constrain<double>(y, p.cs);
  ps.gather(y, p.cs, row.data());
  if constexpr (sizeof...(G) > 0) {
    draw_rng rng(seed, chain, draw);
    std::size_t o = P::size;
    (
        [&] {
          std::span<double> const out(row.data() + o, G::size);
          std::fill(out.begin(), out.end(), std::numeric_limits<double>::quiet_NaN());
          g.f(std::as_const(p), rng, out);
          o += G::size;
        }(),
        ...);
  }
}
}  // namespace detail

/// Run `r` of model `U` in the model's terms (see the file comment), with derived quantities `g`.
template <class T, int D, class Body, class P, class... G>
  requires(!std::is_same_v<P, no_params>)
result<T, P::size + (0 + ... + G::size)> posterior(result<T, D> const& r, model_energy<T, D, Body, P> const& U,
                                                   posterior_options const& o = {}, G const&... g) {
  constexpr int C = P::size + (0 + ... + G::size);
  result<T, C> out;
  out.chains_ = r.chains_;
  out.kept_ = r.kept_;
  out.kept_transitions_ = r.kept_transitions_;
  out.accepted_ = r.accepted_;
  out.adapted_ = r.adapted_;
  out.target_acceptance_ = r.target_acceptance_;
  out.harmonic_target_ = r.harmonic_target_;
  out.frozen_ = r.frozen_;
  out.diverged_at_ = r.diverged_at_;
  out.divergent_chains_ = r.divergent_chains_;
  out.divergent_transitions_ = r.divergent_transitions_;
  out.truncated_transitions_ = r.truncated_transitions_;
  out.gradients_ = r.gradients_;
  out.warmup_gradients_ = r.warmup_gradients_;
  out.acceptance_ = r.acceptance_;
  out.seconds_ = r.seconds_;
  out.warmup_seconds_ = r.warmup_seconds_;
  out.stats_ = r.stats_;
  out.stat_columns_ = r.stat_columns_;

  [&]<std::size_t... J>(std::index_sequence<J...>) {
    (out.variables_.push_back(detail::variable_of<typename P::template type_at<J>>(P::value_offset(int(J)), "posterior")), ...);
  }(std::make_index_sequence<std::size_t(P::count)>{});
  if constexpr (sizeof...(G) > 0) {
    int o = P::size;
    ((out.variables_.push_back({G::name.str(), G::shape(), o, G::size, G::group()}), o += G::size), ...);
  }
  std::vector<std::string> seen;
  for (auto const& v : out.variables_) {
    if (std::find(seen.begin(), seen.end(), v.name) != seen.end())
      throw std::invalid_argument("ember::posterior: two variables are named \"" + v.name +
                                  "\" (a derived quantity takes a parameter's name, or another's)");
    seen.push_back(v.name);
  }

  std::int64_t const chains = r.chains(), kept = r.samples().empty() ? 0 : r.kept();
  auto const draws = r.samples();
  out.samples_.resize(std::size_t(kept * C * chains));
  out.final_.resize(std::size_t(C * chains));
  // Kept draw k of chain c; the final state takes the stream of draw `kept`. A derived
  // quantity's exception leaves the threads first and is rethrown here.
  std::exception_ptr failed;
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < chains; ++c) {
    try {
      std::vector<double> row(static_cast<std::size_t>(C));  // on the heap: a worker thread's stack is small
      vec<double, D> y;
      for (std::int64_t k = 0; k < kept; ++k) {
        for (int d = 0; d < D; ++d) y[d] = double(draws.unchecked(k, c, d));
        detail::model_terms(U.ps, y, o.seed, std::uint32_t(c), std::uint32_t(k), row, g...);
        for (int d = 0; d < C; ++d) out.samples_[std::size_t((k * C + d) * chains + c)] = T(row[std::size_t(d)]);
      }
      for (int d = 0; d < D; ++d) y[d] = double(r.final_[std::size_t(d * chains + c)]);
      detail::model_terms(U.ps, y, o.seed, std::uint32_t(c), std::uint32_t(r.kept()), row, g...);
      for (int d = 0; d < C; ++d) out.final_[std::size_t(d * chains + c)] = T(row[std::size_t(d)]);
    } catch (...) {
#pragma omp critical(ember_posterior)
      if (!failed) failed = std::current_exception();
    }
  }
  if (failed) std::rethrow_exception(failed);
  return out;
}

/// Without derived quantities or options: `posterior(res, U)`.
template <class T, int D, class Body, class P, class G0, class... G>
  requires(!std::is_same_v<P, no_params> && !std::is_same_v<G0, posterior_options>)
auto posterior(result<T, D> const& r, model_energy<T, D, Body, P> const& U, G0 const& g0, G const&... g) {
  return posterior(r, U, posterior_options{}, g0, g...);
}

}  // namespace ember
