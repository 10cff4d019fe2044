#pragma once
/// \file
/// Explicit Runge–Kutta methods for ODEs dy/dt = f(t, y) (flows, probability-flow sampling),
/// given as data: a Butcher tableau (c, A, b), and for embedded pairs a second weight row b̂.
/// One step of size h from (t, y) is
///
///     kᵢ = f(t + cᵢ h, y + h Σ_{j<i} aᵢⱼ kⱼ),   y' = y + h Σᵢ bᵢ kᵢ,
///
/// and an embedded pair's error estimate is y' − ŷ' = h Σᵢ (bᵢ − b̂ᵢ) kᵢ. The stages are unrolled
/// at compile time (zero aᵢⱼ cost nothing), so a tableau compiles to straight-line code on one
/// chain, a SIMD batch of chains and a GPU thread alike.
///
/// `integrate_adaptive` runs an embedded pair with per-chain step sizes: every lane keeps its own
/// t and h, accepts or rejects its own steps and stops at its own end time, all through `select`
/// masks; the loop has a fixed maximum number of attempts and ends early only when every lane is
/// done (a test on the whole batch, not on one chain).

#include <ember/core/config.hpp>
#include <ember/core/math.hpp>
#include <ember/core/vec.hpp>

#include <utility>

namespace ember {

namespace tableaus {
/// Heun's method (explicit trapezoid): second order, two stages.
struct heun {
  static constexpr int stages = 2;
  static constexpr double c[] = {0, 1};
  static constexpr double a[2][2] = {{0, 0}, {1, 0}};
  static constexpr double b[] = {0.5, 0.5};
};
/// The classical fourth-order Runge–Kutta method: four stages.
struct rk4 {
  static constexpr int stages = 4;
  static constexpr double c[] = {0, 0.5, 0.5, 1};
  static constexpr double a[4][4] = {{0, 0, 0, 0}, {0.5, 0, 0, 0}, {0, 0.5, 0, 0}, {0, 0, 1, 0}};
  static constexpr double b[] = {1.0 / 6, 1.0 / 3, 1.0 / 3, 1.0 / 6};
};
/// Dormand & Prince (1980) 5(4): b gives the fifth-order solution (propagated, "local
/// extrapolation"), b̂ the embedded fourth-order one. The seventh stage is evaluated at the new
/// point (b equals A's last row, c₇ = 1: "first same as last"), so an accepted step's k₇ is the
/// next step's k₁ and a step costs six evaluations.
struct dopri5 {
  static constexpr int stages = 7;
  static constexpr double c[] = {0, 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9, 1, 1};
  static constexpr double a[7][7] = {
      {0, 0, 0, 0, 0, 0, 0},
      {1.0 / 5, 0, 0, 0, 0, 0, 0},
      {3.0 / 40, 9.0 / 40, 0, 0, 0, 0, 0},
      {44.0 / 45, -56.0 / 15, 32.0 / 9, 0, 0, 0, 0},
      {19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729, 0, 0, 0},
      {9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656, 0, 0},
      {35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84, 0}};
  static constexpr double b[] = {35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84, 0};
  static constexpr double b_hat[] = {5179.0 / 57600, 0, 7571.0 / 16695, 393.0 / 640, -92097.0 / 339200,
                                     187.0 / 2100,   1.0 / 40};
  static constexpr int order = 5;  // of b; b̂ has order 4, so the error estimate is O(h⁵)
};
}  // namespace tableaus

/// An explicit Runge–Kutta method given by `Tableau` (members `stages`, `c`, `a`, `b`, and
/// optionally `b_hat`). `step(f, t, y, h)` returns y after one step; `step_with_error` also
/// writes the embedded error estimate. `f(t, y)` is any callable returning a `vec<S, D>`, with
/// `t` of the chain's scalar type `S` (one time per lane).
template <class Tableau>
struct explicit_runge_kutta {
  static constexpr int stages = Tableau::stages;
  // Coefficients as constexpr scalars, which device code may read (a host array's elements not).
  template <int I, int J>
  static constexpr double a = Tableau::a[I][J];
  template <int I>
  static constexpr double b = Tableau::b[I];
  template <int I>
  static constexpr double c = Tableau::c[I];
  /// "First same as last": the last stage is f at the new point (c_s = 1, A's last row = b,
  /// b_s = 0), so an accepted step's last stage is the next step's first.
  static constexpr bool first_same_as_last = [] {
    bool r = Tableau::c[stages - 1] == 1 && Tableau::b[stages - 1] == 0;
    for (int j = 0; j < stages; ++j) r = r && Tableau::a[stages - 1][j] == Tableau::b[j];
    return r;
  }();

  /// One step: y + h Σ bᵢ kᵢ.
  template <class F, class S, int D>
  EMBER_HD EMBER_INLINE static vec<S, D> step(F const& f, S t, vec<S, D> const& y, S h) {
    vec<S, D> k[stages];
    k[0] = f(t, y);
    return finish(f, t, y, h, k, [](auto i) { return b<decltype(i)::value>; });
  }

  /// One step from a known k₁ = f(t, y); writes the error estimate y' − ŷ' into `err` and every
  /// stage into `k` (k[stages − 1] is f at the new point for first-same-as-last tableaus).
  template <class F, class S, int D>
  EMBER_HD EMBER_INLINE static vec<S, D> step_with_error(F const& f, S t, vec<S, D> const& y, S h,
                                                         vec<S, D> (&k)[stages], vec<S, D>& err) {
    vec<S, D> y1 = finish(f, t, y, h, k, [](auto i) { return b<decltype(i)::value>; });
    err = combine(h, k, filled<S, D>(0),
                  [](auto i) { return Tableau::b[decltype(i)::value] - Tableau::b_hat[decltype(i)::value]; });
    return y1;
  }

 private:
  // y + h Σ wᵢ kᵢ over all stages, skipping zero weights at compile time.
  template <class S, int D, class W>
  EMBER_HD EMBER_INLINE static vec<S, D> combine(S h, vec<S, D> const (&k)[stages], vec<S, D> y, W const&) {
    [&]<int... I>(std::integer_sequence<int, I...>) {
      (
          [&] {
            constexpr double w = W{}(std::integral_constant<int, I>{});
            if constexpr (w != 0) {
              S const hw = h * S(element_t<S>(w));
              for (int d = 0; d < D; ++d) y[d] = y[d] + hw * k[I][d];
            }
          }(),
          ...);
    }(std::make_integer_sequence<int, stages>{});
    return y;
  }

  // Stages 2..s from k₁, then the b-weighted update.
  template <class F, class S, int D, class W>
  EMBER_HD EMBER_INLINE static vec<S, D> finish(F const& f, S t, vec<S, D> const& y, S h, vec<S, D> (&k)[stages],
                                                W const& weights) {
    [&]<int... I>(std::integer_sequence<int, I...>) {
      (stage<I + 1>(f, t, y, h, k), ...);
    }(std::make_integer_sequence<int, stages - 1>{});
    return combine(h, k, y, weights);
  }

  template <int I, class F, class S, int D>
  EMBER_HD EMBER_INLINE static void stage(F const& f, S t, vec<S, D> const& y, S h, vec<S, D> (&k)[stages]) {
    vec<S, D> yi = y;
    [&]<int... J>(std::integer_sequence<int, J...>) {
      (
          [&] {
            if constexpr (a<I, J> != 0) {
              S const ha = h * S(element_t<S>(a<I, J>));
              for (int d = 0; d < D; ++d) yi[d] = yi[d] + ha * k[J][d];
            }
          }(),
          ...);
    }(std::make_integer_sequence<int, I>{});
    k[I] = f(t + h * S(element_t<S>(c<I>)), yi);
  }
};

/// Heun's method, second order, two evaluations of f per step.
using heun = explicit_runge_kutta<tableaus::heun>;
/// Classical RK4, fourth order, four evaluations per step.
using rk4 = explicit_runge_kutta<tableaus::rk4>;
/// Dormand–Prince 5(4), fifth order with an embedded fourth-order error estimate.
using dopri5 = explicit_runge_kutta<tableaus::dopri5>;

/// `n` fixed steps of size (t1 − t0)/n of `Method` from y(t0); returns y(t1).
template <class Method, class F, class S, int D>
EMBER_HD vec<S, D> integrate(F const& f, S t0, S t1, vec<S, D> y, int n) {
  S const h = (t1 - t0) / S(element_t<S>(n));
  for (int i = 0; i < n; ++i) y = Method::step(f, t0 + S(element_t<S>(i)) * h, y, h);
  return y;
}

/// Tolerances and limits of `integrate_adaptive`. A step is accepted when the RMS over
/// components of err_d / (atol + rtol·max(|y_d|, |y'_d|)) is at most 1; the next step size is
/// h·clamp(0.9·e^{−1/5}, 0.2, 5) (e the RMS, 1/5 = 1/(order of the error estimate)).
struct adaptive_options {
  double rtol = 1e-6;
  double atol = 1e-6;
  double initial_step = 0.01;
  int max_attempts = 1000;  ///< accepted plus rejected steps per call, the same for every lane
};

/// What `integrate_adaptive` reports per lane: whether the lane reached t1, and how many steps it
/// accepted and rejected.
template <class S>
struct adaptive_report {
  mask_t<S> done;
  S accepted;
  S rejected;
};

/// Integrates dy/dt = f(t, y) from t0 to t1 (per lane, t1 > t0) with the embedded pair `Pair`
/// (Dormand–Prince by default), in place on `y`. Lanes advance independently: a lane that has
/// reached t1 keeps its y through `select` while the others continue. The last step of a lane is
/// shortened to land on t1 exactly. Lanes not done after `max_attempts` keep the y at the time
/// they reached (report.done false).
template <class Pair = dopri5, class F, class S, int D>
EMBER_HD adaptive_report<S> integrate_adaptive(F const& f, S t0, S t1, vec<S, D>& y, adaptive_options const& o) {
  using T = element_t<S>;
  S t = t0, h = S(T(o.initial_step));
  mask_t<S> done = !(t < t1);
  S accepted = S(0), rejected = S(0);
  vec<S, D> k[Pair::stages];
  k[0] = f(t, y);
  T const rtol = T(o.rtol), atol = T(o.atol), inv_d = T(1) / T(D);
  for (int it = 0; it < o.max_attempts && any(!done); ++it) {
    S const left = t1 - t;
    mask_t<S> const last = !(h < left);
    S const hs = select(last, left, h);
    vec<S, D> err;
    vec<S, D> y1 = Pair::step_with_error(f, t, y, hs, k, err);
    S e2 = S(0);
    for (int d = 0; d < D; ++d) {
      S sc = S(atol) + S(rtol) * max(abs(y[d]), abs(y1[d]));
      S r = err[d] / sc;
      e2 = e2 + r * r;
    }
    S const e = sqrt(e2 * S(inv_d));
    mask_t<S> const ok = (e <= S(T(1))) && !done;
    for (int d = 0; d < D; ++d) y[d] = select(ok, y1[d], y[d]);
    t = select(ok, select(last, t1, t + hs), t);
    // First same as last: an accepted lane's next k₁ is this step's last stage; otherwise f at
    // the new point (a rejected lane's y, and so its k₁, is unchanged either way).
    if constexpr (Pair::first_same_as_last)
      for (int d = 0; d < D; ++d) k[0][d] = select(ok, k[Pair::stages - 1][d], k[0][d]);
    else
      k[0] = f(t, y);
    accepted = accepted + select(ok, S(T(1)), S(T(0)));
    rejected = rejected + select(!ok && !done, S(T(1)), S(T(0)));
    // e^{−1/5} as exp(−log(e)/5); e = 0 (an exactly integrated step) takes the maximal growth.
    S const grow = S(T(0.9)) * exp(S(T(-0.2)) * log(max(e, S(T(1e-30)))));
    S const factor = min(max(grow, S(T(0.2))), S(T(5)));
    h = select(done, h, hs * factor);
    done = done || (ok && last);
  }
  return {done, accepted, rejected};
}

/// The vector field of the gradient flow of U, f(t, x) = −∇U(x): the probability-flow ODE of
/// overdamped Langevin at zero temperature, and a building block for flows written by hand.
template <class E>
struct gradient_flow {
  E energy;
  template <class S, int D>
  EMBER_HD EMBER_INLINE vec<S, D> operator()(S /*t*/, vec<S, D> const& x) const {
    vec<S, D> g;
    energy.value_and_grad(x, g);
    for (int d = 0; d < D; ++d) g[d] = -g[d];
    return g;
  }
};
template <class E>
gradient_flow(E) -> gradient_flow<E>;

}  // namespace ember
