#pragma once
/// \file
/// `warmup_state<Kernel, Warmup>`: what a run's warm-up adapts and how, between its one-transition
/// warm-up chunks. Before transition t the run asks for `kernel_at(t)` (the current step size,
/// metric and trajectory length); after it, `update(t, reduce)` folds the chains' pooled
/// statistics in, with `reduce(functor, n, out)` summing a per-chain functor over the live chains
/// in a fixed order (a backend's job, on the host or the device). After the last warm-up
/// transition `frozen()` is the kernel every later transition uses. The whole state is plain
/// data, saved in checkpoints.

#include <ember/adapt/chees.hpp>
#include <ember/adapt/covariance.hpp>
#include <ember/adapt/dual_averaging.hpp>
#include <ember/adapt/mass_windows.hpp>
#include <ember/core/chain_state.hpp>
#include <ember/core/config.hpp>
#include <ember/core/halton.hpp>
#include <ember/pipeline/pipeline.hpp>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace ember {

/// Pointers into a run's per-chain arrays (host or device memory), as the reductions read them.
/// Chain c's slot i is `slots[i·stride + c]`; the first D slots are the position.
template <class T>
struct chain_view {
  T const* slots = nullptr;
  std::uint8_t const* frozen = nullptr;
  T const* accept_prob = nullptr;                                  // per chain, last transition
  T const* start = nullptr, *end = nullptr, *velocity = nullptr;  // D × stride each (ChEES)
  std::int64_t stride = 0;
};

namespace detail {

// dst = src for kernels that cannot be assigned (an energy holding a lambda is copyable but not
// assignable): destroy and copy-construct in place.
template <class K>
void reassign(K& dst, K const& src) {
  if (&dst == &src) return;
  K copy(src);
  std::destroy_at(&dst);
  std::construct_at(&dst, copy);
}

// Over live chains: n, Σα, and the number and Σ 1/α of those with α > 0 (the harmonic mean's).
template <class T>
struct acceptance_sums {
  static constexpr int size = 4;
  chain_view<T> v;
  EMBER_HD void operator()(std::int64_t c, double* a) const {
    if (v.frozen[c]) return;
    double const al = double(v.accept_prob[c]);
    a[0] += 1;
    a[1] += al;
    if (al > 0) {
      a[2] += 1;
      a[3] += 1 / al;
    }
  }
};

// n, Σx, Σx² or the upper triangle of Σxxᵀ over live chains (adapt/covariance.hpp's layout), of
// slots first … first + D − 1: the position (0) or, for a diagonal metric from draws and
// gradients, ∇U (D + 1 in a `chain_state`). One functor per quantity, so a reduction's
// per-thread accumulator stays 1 + 2D doubles for a diagonal metric.
template <class T, int D, bool Dense>
struct moment_sums {
  static constexpr int size = pooled_covariance<D, Dense>::sums;
  chain_view<T> v;
  int first = 0;
  EMBER_HD void operator()(std::int64_t c, double* a) const {
    if (v.frozen[c]) return;
    a[0] += 1;
    double x[D];
    for (int i = 0; i < D; ++i) x[i] = double(v.slots[(first + i) * v.stride + c]);
    for (int i = 0; i < D; ++i) a[1 + i] += x[i];
    int q = 1 + D;
    for (int i = 0; i < D; ++i)
      for (int j = i; j < (Dense ? D : i + 1); ++j) a[q++] += x[i] * x[j];
  }
};

// Whether kernel K's state holds ∇U at its position after every transition: a `chain_state`
// (mala, hmc, the underdamped Langevin kernels' `phase_state`, per-chain step sizes' wrapper),
// unless its integrator is a splitting that leaves the gradient stale (one whose first
// non-O operator is a drift re-evaluates only U, integrator/splitting.hpp).
template <class K>
consteval bool state_gradient_is_current() {
  using T = typename K::value_type;
  using state = decltype(std::declval<K const&>().init(vec<T, K::dim>{}));
  if constexpr (!std::derived_from<state, chain_state<T, K::dim>>)
    return false;
  else if constexpr (requires { K::integrator_type::reads_gradient_first(); })
    return K::integrator_type::reads_gradient_first();
  else
    return true;
}

// ChEES, first pass: n, Σα, Σx (D), Σα x' (D).
template <class T, int D>
struct chees_means {
  static constexpr int size = 2 + 2 * D;
  chain_view<T> v;
  EMBER_HD void operator()(std::int64_t c, double* a) const {
    if (v.frozen[c]) return;
    double const al = double(v.accept_prob[c]);
    a[0] += 1;
    a[1] += al;
    for (int i = 0; i < D; ++i) {
      a[2 + i] += double(v.start[i * v.stride + c]);
      a[2 + D + i] += al * double(v.end[i * v.stride + c]);
    }
  }
};

// ChEES, second pass: Σα (‖x' − x̄'‖² − ‖x − x̄‖²)((x' − x̄')·v') in the metric's standardised
// coordinates, zᵢ = xᵢ/sᵢ with sᵢ² = (M⁻¹)ᵢᵢ (w = 1/s²).
template <class T, int D>
struct chees_gradient {
  static constexpr int size = 1;
  chain_view<T> v;
  double mean0[D], mean1[D], w[D];
  EMBER_HD void operator()(std::int64_t c, double* a) const {
    if (v.frozen[c]) return;
    double d0 = 0, d1 = 0, dv = 0;
    for (int i = 0; i < D; ++i) {
      double const r0 = double(v.start[i * v.stride + c]) - mean0[i];
      double const r1 = double(v.end[i * v.stride + c]) - mean1[i];
      d0 += w[i] * r0 * r0;
      d1 += w[i] * r1 * r1;
      dv += w[i] * r1 * double(v.velocity[i * v.stride + c]);
    }
    a[0] += double(v.accept_prob[c]) * (d1 - d0) * dv;
  }
};

// The metric's marginal scale of coordinate i, √(M⁻¹)ᵢᵢ = ‖row i of L‖.
template <class M>
double metric_sd(M const& m, int i) {
  if constexpr (requires { m.lower[0]; }) {
    double s = 0;
    for (int j = 0; j <= i; ++j) s += double(m(i, j)) * double(m(i, j));
    return std::sqrt(s);
  } else if constexpr (requires { m.scale[0]; }) {
    return double(m.scale[i]);
  } else if constexpr (requires { m.scale; }) {
    return double(m.scale);
  } else {
    return 1.0;
  }
}

}  // namespace detail

template <class Kernel, class W>
struct warmup_state {
  using T = typename Kernel::value_type;
  static constexpr int D = Kernel::dim;
  static constexpr bool adapts_step = W::template has<step_size_adapter> || W::template has<chees_adapter>;
  static constexpr bool adapts_diag = W::template has<diagonal_mass_adapter>;
  static constexpr bool adapts_dense = W::template has<dense_mass_adapter>;
  static constexpr bool adapts_metric = adapts_diag || adapts_dense;
  static constexpr bool adapts_trajectory = W::template has<chees_adapter>;
  static constexpr bool observes = adapts_step || adapts_trajectory;
  /// step_size(per_chain): one dual averaging per chain, on the chain's own acceptance probability.
  static constexpr bool adapts_chain_step = W::template has<per_chain_step_size_adapter>;
  /// Gradients reduced beside the draws, for a diagonal metric from both (adapt/covariance.hpp),
  /// where the kernel's state holds ∇U at its position (detail::state_gradient_is_current).
  static constexpr bool reduces_gradients = adapts_diag && detail::state_gradient_is_current<Kernel>();

  dual_averaging da;
  std::vector<dual_averaging> chain_da;  ///< per chain, with step_size(per_chain)
  pooled_covariance<D, adapts_dense> cov;
  pooled_covariance<D, false> grad_cov;  ///< the gradients', with reduces_gradients
  /// diagonal_mass({.gradients}) where the kernel allows it (else Stan's estimate); checkpoints
  /// save it and refuse a pipeline that asks for the other.
  bool metric_from_gradients = false;
  chees_state chees;
  Kernel kernel;  ///< the kernel with the current metric (step size and T come from da and chees)

  warmup_state() = default;
  warmup_state(Kernel const& k, W const& w, std::int64_t chains) : kernel(k) {
    if constexpr (adapts_step) {
      double target = detail::checked_target(w.template get<step_size_adapter>().target);
      if (target == 0) target = adapts_trajectory ? 0.651 : Kernel::target_acceptance;
      da.target = target;
      if constexpr (adapts_trajectory) {
        // ChEES's pooled acceptance changes from one transition to the next with the Halton
        // length uT (and the harmonic mean with the worst chain). With Stan's γ = 0.05 and
        // μ = log 10ε₀, log ε's iterates over the 50-transition term buffer had a standard
        // deviation of 0.63 on Gaussians, and ε̄, their average, ended at harmonic acceptance
        // 0.75-0.79 against 0.651. With γ = 0.2 and μ = log ε₀ (the restart's ε is already
        // adapted; the pull towards 10ε₀ grows with γ): 0.06, and 0.645-0.654.
        da.gamma = 0.2;
        da.explore = 1;
      }
      double eps0 = double(k.step_size);
      da.restart(std::isfinite(eps0) && eps0 > 0 ? eps0 : 1.0);
    }
    if constexpr (adapts_chain_step) {
      double target = detail::checked_target(w.template get<per_chain_step_size_adapter>().target);
      if (target == 0) target = Kernel::target_acceptance;
      da.target = target;
      double eps0 = double(k.step_size);
      if (!(std::isfinite(eps0) && eps0 > 0)) eps0 = 1.0;
      da.restart(eps0);
      chain_da.assign(std::size_t(chains), da);
      detail::reassign(kernel, kernel.with_step_size(eps0));  // every chain's first ε
    }
    if constexpr (reduces_gradients) metric_from_gradients = w.template get<diagonal_mass_adapter>().gradients;
    if constexpr (adapts_trajectory) {
      if (chains < 2) throw std::invalid_argument("ember::warmup: chees() needs at least 2 chains (it adapts from their ensemble)");
      chees.learning_rate = detail::checked_learning_rate(w.template get<chees_adapter>().learning_rate);
      // From one step's length unless the user gave T: ChEES's criterion can have several local
      // maxima (on a Gaussian, T ≈ 2.2σ, 5.4σ, …), and climbing from below finds the first.
      double eps = std::isfinite(double(k.step_size)) && k.step_size > 0 ? double(k.step_size) : 1.0;
      double T0 = k.trajectory_length > 0 ? double(k.trajectory_length) : eps;
      chees.start(T0);
    }
  }

  /// The kernel of warm-up transition t (in its warm-up form where it has one: the unadjusted
  /// underdamped Langevin kernel then undoes what a Metropolis test would reject).
  Kernel kernel_at(std::int64_t) const {
    if constexpr (requires { kernel.in_warmup(); })
      return tuned(da.current(), chees.current()).in_warmup();
    else
      return tuned(da.current(), chees.current());
  }

  /// Folds in what warm-up transition t produced; `windows` is the run's metric schedule.
  template <class Reduce>
  void update(std::int64_t t, mass_windows const& windows, chain_view<T> const& v, Reduce&& reduce) {
    if constexpr (adapts_step) {
      double a[4] = {0, 0, 0, 0};
      reduce(detail::acceptance_sums<T>{v}, a);
      // With ChEES, the harmonic mean over chains (Hoffman, Radul & Sountsov 2021): one chain
      // stuck where the step is too large (a far start, a distribution's stiff tail) pulls it
      // down, where the arithmetic mean would leave that chain stuck. A chain whose α is 0 (a
      // divergence) is left out, as BlackJAX does, so one of them cannot stall the adaptation.
      if constexpr (adapts_trajectory)
        da.update(a[2] > 0 ? a[2] / a[3] : 0.0);
      else
        da.update(a[0] > 0 ? a[1] / a[0] : 0.0);
    }
    if constexpr (adapts_trajectory) {
      double m[2 + 2 * D] = {};
      reduce(detail::chees_means<T, D>{v}, m);
      if (m[0] > 1 && m[1] > 0) {
        detail::chees_gradient<T, D> g{v, {}, {}, {}};
        for (int i = 0; i < D; ++i) {
          g.mean0[i] = m[2 + i] / m[0];
          g.mean1[i] = m[2 + D + i] / m[1];
          double const s = detail::metric_sd(kernel.metric, i);
          g.w[i] = 1 / (s * s);
        }
        double s[1] = {0};
        reduce(g, s);
        // The trajectory simulated at t was uT with u the Halton factor of t; d x'/d log T = uT v'.
        double const uT = halton(std::uint64_t(t) + 1, 2) * chees.current();
        chees.update(uT * s[0] / m[1]);
        double const eps = adapts_step ? da.current() : double(kernel.step_size);
        chees.clip(eps, chees_state::max_steps_per_trajectory * eps);
      }
    }
    if constexpr (adapts_metric) {
      if (windows.collects(t)) {
        using sums = detail::moment_sums<T, D, adapts_dense>;
        double s[sums::size] = {};
        reduce(sums{v, 0}, s);
        cov.add(s);
        if constexpr (reduces_gradients) {
          if (metric_from_gradients) {
            double g[sums::size] = {};
            reduce(sums{v, D + 1}, g);
            grad_cov.add(g);
          }
        }
        if (windows.closes(t)) {
          auto const metric = [&] {
            if constexpr (reduces_gradients)
              if (metric_from_gradients) return diagonal_metric_from_gradients<T>(cov, grad_cov);
            return cov.template metric<T>();
          }();
          if constexpr (adapts_trajectory) {
            // T in the new metric's time: ChEES's criterion is dominated by the directions of
            // largest standardised variance, so T scales with their standard deviation rᵢ under
            // the old metric (rᵢ = sᵢ(new)/sᵢ(old)), weighted as the criterion weights them, by rᵢ⁴.
            double num = 0, den = 0;
            for (int i = 0; i < D; ++i) {
              double const r = detail::metric_sd(metric, i) / detail::metric_sd(kernel.metric, i), r4 = r * r * r * r;
              num += r4 * r;
              den += r4;
            }
            chees.rescale(den / num);
          }
          detail::reassign(kernel, kernel.with_metric(metric));
          cov.reset();
          grad_cov.reset();
          if constexpr (adapts_step) da.restart(da.current());
        }
      }
    }
  }

  /// With step_size(per_chain), after warm-up transition t: each live chain's dual averaging
  /// takes its own acceptance probability (slot `accept_prob_slot` of the run's per-chain arrays,
  /// host memory) and writes its next ε into slot `step_size_slot`, or its ε̄ after the `last`
  /// warm-up transition. Chain by chain, so the result depends on nothing but the chain.
  void update_chains(std::int64_t t, mass_windows const& windows, T* slots, std::int64_t stride,
                     std::uint8_t const* frozen, bool last) {
    if constexpr (adapts_chain_step) {
      using state = decltype(kernel.init(vec<T, D>{}));
      T* eps = slots + std::int64_t(state::step_size_slot) * stride;
      T const* alpha = slots + std::int64_t(state::accept_prob_slot) * stride;
      bool const restart = adapts_metric && windows.collects(t) && windows.closes(t);
      for (std::size_t c = 0; c < chain_da.size(); ++c) {
        if (frozen[c]) continue;
        auto& d = chain_da[c];
        d.update(double(alpha[c]));
        if (restart) d.restart(d.current());
        eps[c] = T(last ? d.final() : d.current());
      }
    }
  }

  /// The tuned kernel kept after warm-up. With step_size(per_chain) its own step size is the
  /// median of the chains' ε̄ (what `adapted().step_size` reports); the chains use their own.
  Kernel frozen() const {
    if constexpr (adapts_chain_step) {
      if (chain_da.empty()) return kernel;
      std::vector<double> e(chain_da.size());
      for (std::size_t c = 0; c < e.size(); ++c) e[c] = chain_da[c].final();
      std::nth_element(e.begin(), e.begin() + std::ptrdiff_t(e.size() / 2), e.end());
      return kernel.with_step_size(e[e.size() / 2]);
    } else {
      if constexpr (adapts_trajectory) {
        // The kept T within [ε̄, 1000ε̄] too (its running average can sit outside the iterates' band).
        double const eps = adapts_step ? da.final() : double(kernel.step_size);
        return tuned(da.final(), std::clamp(chees.final(), eps, chees_state::max_steps_per_trajectory * eps));
      } else {
        return tuned(da.final(), chees.final());
      }
    }
  }

 private:
  Kernel tuned(double eps, double T) const {
    if constexpr (adapts_step && adapts_trajectory)
      return kernel.with_step_size(eps).with_trajectory_length(T);
    else if constexpr (adapts_step)
      return kernel.with_step_size(eps);
    else
      return kernel;
  }
};

/// A pipeline without warm-up: nothing to adapt.
template <class Kernel>
struct warmup_state<Kernel, no_warmup> {
  static constexpr bool observes = false, adapts_trajectory = false, adapts_chain_step = false;
  Kernel kernel;
  warmup_state() = default;
  warmup_state(Kernel const& k, no_warmup const&, std::int64_t) : kernel(k) {}
  Kernel kernel_at(std::int64_t) const { return kernel; }
  template <class V, class Reduce>
  void update(std::int64_t, mass_windows const&, V const&, Reduce&&) {}
  template <class T>
  void update_chains(std::int64_t, mass_windows const&, T*, std::int64_t, std::uint8_t const*, bool) {}
  Kernel frozen() const { return kernel; }
};

}  // namespace ember
