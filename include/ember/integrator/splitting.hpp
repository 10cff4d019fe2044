#pragma once
/// \file
/// Splitting integrators as compile-time sequences of operators, for underdamped Langevin
/// dynamics with a scalar mass m, friction γ and unit temperature:
///
///     dx = m⁻¹ p dt,    dp = −∇U(x) dt − γ p dt + √(2γ m) dW.
///
/// The right-hand side splits into three flows, each solvable exactly over a time w·h:
///  - `A` (drift):    x ← x + w h m⁻¹ p;
///  - `B` (kick):     p ← p − w h ∇U(x);
///  - `O` (friction): p ← e^{−γ w h} p + √(m (1 − e^{−2γ w h})) ξ, ξ ~ N(0, I), the exact
///                    Ornstein–Uhlenbeck solution, which leaves N(0, m I) invariant for any w h.
/// A step is the composition of the operators in order: `splitting<B, A, O, A, B>` is BAOAB
/// (Leimkuhler & Matthews 2013), `splitting<O, B, A, B, O>` is OBABO (Bussi & Parrinello 2007),
/// and without `O` the same mechanism gives Hamiltonian splittings: velocity Verlet is
/// `splitting<B(1, 2), A, B(1, 2)>`. A plain `A` takes an equal share of the step with the other
/// `A`s (likewise `B`, `O`); `B(1, 2)` or `B(0.19)` gives an explicit weight. The weights of each
/// kind must add up to one step (O may be absent): a malformed sequence is a `static_assert`.
///
/// With a diagonal metric instead of a scalar mass (M⁻¹ = diag(sᵢ²), what a warm-up's
/// `diagonal_mass()` gives the underdamped Langevin kernels) the momentum is carried whitened,
/// v = M^{−1/2} p ~ N(0, I): `A` moves xᵢ by w h sᵢ vᵢ, `B` kicks vᵢ by −w h sᵢ ∂ᵢU, and `O` is
/// the unit-mass one; the kinetic energy is |v|²/2. A metric that changes between transitions
/// (warm-up) then leaves v's law alone. Without `O` (HMC, `hmc_with<splitting<...>>`) any metric
/// with M⁻¹ = L Lᵀ works the same way: `A` moves x by w h L v, `B` kicks v by −w h Lᵀ∇U (a dense
/// one from `dense_mass()` too).
///
/// Gradients are evaluated lazily: a `B` evaluates ∇U only if an `A` moved x since the last
/// evaluation (known at compile time from the sequence), so BAOAB, OBABO and velocity Verlet
/// each cost one gradient per step in a run.

#include <ember/core/chain_state.hpp>
#include <ember/core/config.hpp>
#include <ember/core/math.hpp>
#include <ember/core/vec.hpp>
#include <ember/core/metric.hpp>

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace ember {

/// The flow an operator of a splitting integrates: position drift, momentum kick, or the
/// Ornstein–Uhlenbeck friction-and-noise flow on the momentum.
enum class flow : std::uint8_t { drift, kick, friction };

/// One operator of a splitting: which flow, and the fraction of the step it covers, num/den.
/// den = 0 marks "an equal share": a plain `A` in a sequence with k `A`s covers h/k.
/// A structural literal type, so a sequence of them is a template argument list.
struct split_op {
  flow kind;
  double num = 1;
  double den = 0;

  /// This operator with weight n/d of the step: `B(1, 2)` is a half kick, `B(0.19)` a kick of
  /// 0.19 h (weights may be irrational, as in McLachlan's splitting, or negative, as in Yoshida's).
  EMBER_HD constexpr split_op operator()(double n, double d = 1) const { return {kind, n, d}; }
};

/// Drift x ← x + w h m⁻¹ p (the flow of H = |p|²/2m).
inline constexpr split_op A{flow::drift};
/// Kick p ← p − w h ∇U(x) (the flow of H = U(x)).
inline constexpr split_op B{flow::kick};
/// Exact Ornstein–Uhlenbeck step p ← e^{−γwh} p + √(m(1 − e^{−2γwh})) ξ.
inline constexpr split_op O{flow::friction};

/// The per-step constants of a splitting's `O` operators at step h, friction γ and mass m:
/// for the j-th `O` of weight w, decay[j] = e^{−γ w h} and scale[j] = √(m (1 − decay[j]²))
/// (computed with expm1 so that small γwh keeps its precision). Built once per kernel on the host.
template <class T, int N>
struct ou_coefficients {
  T decay[N > 0 ? N : 1];
  T scale[N > 0 ? N : 1];
};

namespace detail {
EMBER_HD constexpr double split_abs(double v) { return v < 0 ? -v : v; }
// Weights are added in double; McLachlan's b₁ + (1 − 2b₁) + b₁ is 1 only to rounding.
EMBER_HD constexpr bool one_step(double total) { return split_abs(total - 1) < 1e-12; }
}  // namespace detail

/// A splitting integrator given by the operator sequence `Ops` (see the file comment).
///  - `step(U, s, p, h, m⁻¹, ou, noise)`: one step of size h in place. `s` holds x, U(x), ∇U(x);
///    `p` the momentum; `ou` the `O` constants (`ou_coefficients_for`); `noise(j)` returns the
///    standard normal vector ξ of the j-th `O` (j a `std::integral_constant<int, j>`), so the
///    caller decides where its random numbers come from.
///  - `apply<From, To>(...)`: operators From..To−1 only (a Metropolis-adjusted kernel runs the
///    reversible Hamiltonian core between the outer `O`s on its own).
///  - `steps(U, s, p, ε, m⁻¹, L)`: L steps of a splitting without `O`, the interface of HMC's
///    palindromic integrators, so `hmc_with<splitting<B(1, 2), A, B(1, 2)>>` works.
/// After any of these, `s.energy` is U(x) at the new x and `s.grad` is ∇U(x) unless the sequence
/// starts with a drift (then no kick could read it before x moves again, and only U(x) is
/// evaluated: ABOBA costs one gradient and one energy per step, not two gradients).
template <split_op... Ops>
struct splitting {
  static constexpr int size = int(sizeof...(Ops));
  static_assert(size > 0, "ember::splitting needs at least one operator: A (drift), B (kick), O (friction)");

 private:
  EMBER_HD static constexpr split_op at(int j) {
    split_op r{flow::drift};
    int i = 0;
    ((i++ == j ? (r = Ops, 0) : 0), ...);
    return r;
  }
  EMBER_HD static constexpr int count(flow f) { return (0 + ... + (Ops.kind == f ? 1 : 0)); }
  EMBER_HD static constexpr int count_plain(flow f) { return (0 + ... + (Ops.kind == f && Ops.den == 0 ? 1 : 0)); }
  EMBER_HD static constexpr double resolved(split_op o) {
    return o.den == 0 ? 1.0 / double(count(o.kind)) : o.num / o.den;
  }
  EMBER_HD static constexpr double total(flow f) { return (0.0 + ... + (Ops.kind == f ? resolved(Ops) : 0.0)); }
  EMBER_HD static constexpr bool mixed(flow f) { return count_plain(f) != 0 && count_plain(f) != count(f); }
  // Whether x has moved since the last gradient after operators [from, to) entered with `stale`.
  EMBER_HD static constexpr bool stale_after(int from, int to, bool stale) {
    for (int j = from; j < to; ++j)
      if (at(j).kind == flow::drift)
        stale = true;
      else if (at(j).kind == flow::kick)
        stale = false;
    return stale;
  }
  // Whether a kick comes before any drift: then the next step reads the gradient left by this one.
  EMBER_HD static constexpr bool reads_gradient_first() {
    for (int j = 0; j < size; ++j)
      if (at(j).kind != flow::friction) return at(j).kind == flow::kick;
    return false;
  }
  EMBER_HD static constexpr int noise_index(int j) {
    int n = 0;
    for (int i = 0; i < j; ++i) n += at(i).kind == flow::friction ? 1 : 0;
    return n;
  }
  EMBER_HD static constexpr int count_gradients() {
    // In a long run a gradient is evaluated at each kick that follows a drift, cyclically.
    int n = 0;
    bool stale = stale_after(0, size, false);
    for (int j = 0; j < size; ++j) {
      if (at(j).kind == flow::drift) stale = true;
      if (at(j).kind == flow::kick) {
        n += stale ? 1 : 0;
        stale = false;
      }
    }
    return n;
  }

 public:
  static constexpr int drifts = count(flow::drift);
  static constexpr int kicks = count(flow::kick);
  static constexpr int noises = count(flow::friction);

  static_assert(!mixed(flow::drift) && !mixed(flow::kick) && !mixed(flow::friction),
                "ember::splitting: give every operator of one kind a weight, or none (plain A, B, O share the "
                "step equally), not some of each");
  static_assert(drifts > 0 && detail::one_step(total(flow::drift)),
                "ember::splitting: the weights of the A (drift) operators must add up to one step, "
                "as in splitting<B(1, 2), A, B(1, 2)> or splitting<B, A(1, 2), O, A(1, 2), B>");
  static_assert(kicks > 0 && detail::one_step(total(flow::kick)),
                "ember::splitting: the weights of the B (kick) operators must add up to one step, "
                "as in splitting<B(1, 2), A, B(1, 2)> or splitting<B(1, 2), A, O, A, B(1, 2)>");
  static_assert(noises == 0 || detail::one_step(total(flow::friction)),
                "ember::splitting: the weights of the O (friction) operators must add up to one step, "
                "as in splitting<O(1, 2), B, A, B, O(1, 2)>, or there must be no O");

  /// The kind and the weight (fraction of h) of operator J, as constexpr scalars that device
  /// code may use.
  template <int J>
  static constexpr flow kind = at(J).kind;
  template <int J>
  static constexpr double weight = resolved(at(J));
  /// Gradient evaluations per step in a long run (the first step may reuse init's gradient).
  static constexpr int gradients_per_step = count_gradients();
  /// Energy-only evaluations per step (1 for sequences that start with a drift and end moved).
  static constexpr int values_per_step = stale_after(0, size, false) && !reads_gradient_first() ? 1 : 0;
  /// True when the sequence is its own reverse (kinds and weights), which makes the Hamiltonian
  /// part time-reversible: F∘Φ∘F = Φ⁻¹ for the momentum flip F.
  static constexpr bool palindromic = [] {
    for (int j = 0; j < size; ++j)
      if (at(j).kind != at(size - 1 - j).kind || resolved(at(j)) != resolved(at(size - 1 - j))) return false;
    return true;
  }();
  /// True for O(w) core O(w): a palindromic sequence whose only `O`s are its two ends. Such a
  /// splitting can be Metropolis-adjusted (generalised HMC): the core is reversible and
  /// volume-preserving, the `O`s are exact.
  static constexpr bool adjustable = palindromic && size >= 3 && noises == 2 && at(0).kind == flow::friction;

  /// `O` constants for step h, friction γ and mass m, in precision T (host code, once per kernel).
  template <class T>
  static ou_coefficients<T, noises> ou_coefficients_for(double h, double gamma, double mass) {
    ou_coefficients<T, noises> c{};
    int n = 0;
    for (int j = 0; j < size; ++j)
      if (at(j).kind == flow::friction) {
        double x = -gamma * resolved(at(j)) * h;  // decay = e^x, 1 − decay² = −expm1(2x)
        c.decay[n] = T(std::exp(x));
        c.scale[n] = T(std::sqrt(-mass * std::expm1(2 * x)));
        ++n;
      }
    return c;
  }

  /// One step of size h (see the struct comment). `mass` is m⁻¹ (a scalar mass) or a
  /// `diagonal_metric` (whitened momentum).
  template <class E, class S, int D, class Mass, class Noise>
  EMBER_HD EMBER_INLINE static void step(E const& U, chain_state<S, D>& s, vec<S, D>& p, element_t<S> h,
                                         Mass const& mass, ou_coefficients<element_t<S>, noises> const& ou,
                                         Noise const& noise) {
    apply<0, size>(U, s, p, h, mass, ou, noise);
  }

  /// Operators From..To−1 of one step of size h; on entry `s` holds U and ∇U at `s.x`, on exit
  /// U (and ∇U, see the struct comment) at the new `s.x`.
  template <int From, int To, class E, class S, int D, class Mass, class Noise>
  EMBER_HD EMBER_INLINE static void apply(E const& U, chain_state<S, D>& s, vec<S, D>& p, element_t<S> h,
                                          Mass const& mass, ou_coefficients<element_t<S>, noises> const& ou,
                                          Noise const& noise) {
    static_assert(0 <= From && From <= To && To <= size, "ember::splitting::apply: operator range out of bounds");
    static_assert(std::is_same_v<Mass, element_t<S>> || std::is_same_v<Mass, diagonal_metric<element_t<S>, D>>,
                  "ember::splitting: the mass is the inverse of a scalar mass or a diagonal_metric of the state's precision");
    run<From, To, false>(U, s, p, h, mass, ou, noise);
    finish<stale_after(From, To, false)>(U, s);
  }

  /// L steps of a splitting without `O` (Hamiltonian dynamics), in place, in plain momentum p
  /// with a scalar inverse mass m⁻¹. Between steps no evaluation is repeated: a sequence ending
  /// in a drift and starting with one (A B A) evaluates the energy only once, after the last step.
  template <class E, class S, int D>
  EMBER_HD EMBER_INLINE static void steps(E const& U, chain_state<S, D>& s, vec<S, D>& p, element_t<S> eps,
                                          element_t<S> inv_mass, int L) {
    hamiltonian(U, s, p, eps, inv_mass, L);
  }

  /// HMC's interface (kernel/hmc.hpp): whitened momentum v and the kernel's metric. A scalar
  /// metric L = σ is the p-form above with p = v/σ and m⁻¹ = σ² (the bits of hmc's
  /// velocity_verlet); a diagonal or dense one drifts by L v and kicks by Lᵀ∇U.
  template <class E, class S, int D, class Metric>
    requires(!std::is_arithmetic_v<Metric>)
  EMBER_HD EMBER_INLINE static void steps(E const& U, chain_state<S, D>& s, vec<S, D>& v, element_t<S> eps,
                                          Metric const& metric, int L) {
    using T = element_t<S>;
    if constexpr (std::is_same_v<Metric, scalar_metric<T>>) {
      T const inv = T(1) / metric.scale;
      for (int i = 0; i < D; ++i) v[i] = v[i] * S(inv);
      hamiltonian(U, s, v, eps, metric.scale * metric.scale, L);
      for (int i = 0; i < D; ++i) v[i] = v[i] * S(metric.scale);
    } else {
      hamiltonian(U, s, v, eps, metric, L);
    }
  }

 private:
  template <class E, class S, int D, class Mass>
  EMBER_HD EMBER_INLINE static void hamiltonian(E const& U, chain_state<S, D>& s, vec<S, D>& p, element_t<S> eps,
                                                Mass const& mass, int L) {
    static_assert(noises == 0, "ember::splitting: a Hamiltonian integrator (HMC) cannot contain O operators");
    constexpr bool carry = stale_after(0, size, false);
    ou_coefficients<element_t<S>, 0> none{};
    auto no_noise = [](auto) { return vec<S, D>{}; };
    if (L <= 0) return;
    run<0, size, false>(U, s, p, eps, mass, none, no_noise);
    for (int l = 1; l < L; ++l) run<0, size, carry>(U, s, p, eps, mass, none, no_noise);
    finish<carry>(U, s);
  }

  template <int J, int To, bool Stale, class E, class S, int D, class Mass, class Noise>
  EMBER_HD EMBER_INLINE static void run(E const& U, chain_state<S, D>& s, vec<S, D>& p, element_t<S> h,
                                        Mass const& mass, ou_coefficients<element_t<S>, noises> const& ou,
                                        Noise const& noise) {
    if constexpr (J < To) {
      using T = element_t<S>;
      // Whitened momentum (see the file comment): a diagonal metric coordinate by coordinate, any
      // other (dense) through L and Lᵀ.
      constexpr bool diagonal = std::is_same_v<Mass, diagonal_metric<T, D>>;
      constexpr bool whitened = !std::is_arithmetic_v<Mass> && !diagonal;
      constexpr flow k = kind<J>;
      if constexpr (k == flow::drift) {
        if constexpr (diagonal) {
          for (int i = 0; i < D; ++i) s.x[i] = fmadd(S(T(weight<J>) * h * mass.scale[i]), p[i], s.x[i]);
        } else if constexpr (whitened) {
          auto const w = mass.apply(p);
          S const c = S(T(weight<J>) * h);
          for (int i = 0; i < D; ++i) s.x[i] = fmadd(c, w[i], s.x[i]);
        } else {
          S const c = S(T(weight<J>) * h * mass);
          for (int i = 0; i < D; ++i) s.x[i] = fmadd(c, p[i], s.x[i]);
        }
      } else if constexpr (k == flow::kick) {
        if constexpr (Stale) s.energy = U.value_and_grad(s.x, s.grad);
        if constexpr (diagonal) {
          for (int i = 0; i < D; ++i) p[i] = fmadd(S(-(T(weight<J>) * h * mass.scale[i])), s.grad[i], p[i]);
        } else if constexpr (whitened) {
          auto const g = mass.apply_transpose(s.grad);
          S const c = S(-(T(weight<J>) * h));
          for (int i = 0; i < D; ++i) p[i] = fmadd(c, g[i], p[i]);
        } else {
          S const c = S(-(T(weight<J>) * h));
          for (int i = 0; i < D; ++i) p[i] = fmadd(c, s.grad[i], p[i]);
        }
      } else {
        constexpr int n = noise_index(J);
        vec<S, D> const xi = noise(std::integral_constant<int, n>{});
        S const a = S(ou.decay[n]), b = S(ou.scale[n]);
        for (int i = 0; i < D; ++i) p[i] = a * p[i] + b * xi[i];
      }
      constexpr bool next = k == flow::drift ? true : (k == flow::kick ? false : Stale);
      run<J + 1, To, next>(U, s, p, h, mass, ou, noise);
    }
  }

  // Re-establishes U (and ∇U where the next step reads it first) at a moved x.
  template <bool Stale, class E, class S, int D>
  EMBER_HD EMBER_INLINE static void finish(E const& U, chain_state<S, D>& s) {
    if constexpr (Stale) {
      if constexpr (reads_gradient_first())
        s.energy = U.value_and_grad(s.x, s.grad);
      else
        s.energy = U.value(s.x);
    }
  }
};

/// BAOAB (Leimkuhler & Matthews 2013): half kick, half drift, exact friction over h, half drift,
/// half kick. For a Gaussian target its position marginal is exact at any friction for stable h.
using baoab = splitting<B, A, O, A, B>;
/// OBABO (Bussi & Parrinello 2007): friction h/2, velocity Verlet, friction h/2. Reversible
/// core: the scheme `adjusted_underdamped_langevin` Metropolis-adjusts.
using obabo = splitting<O, B, A, B, O>;
/// ABOBA: half drift, half kick, friction, half kick, half drift.
using aboba = splitting<A, B, O, B, A>;

}  // namespace ember
