#pragma once
/// \file
/// A model's parameters by name, shape and constraint: `param<"tau">(positive)`,
/// `param<"theta", 8>()`, `param<"L", 3, 3>(cholesky_corr)`, gathered by `params(...)`.
///
/// The sampler moves in unconstrained coordinates y ∈ R^D; a model's body reads each parameter
/// in its constrained form x = c(y). `params(...)` fixes, at compile time, where each parameter's
/// free coordinates sit in y (in the order listed) and how many there are (a simplex of N has
/// N − 1, the Cholesky factor of a K×K correlation matrix K(K − 1)/2), so the model's dimension D
/// is computed, not written. Before the body runs, every constrained parameter is transformed once
/// into a buffer of the context and log |det ∂c/∂y| is added to log p; the body's reads
/// (`m[tau]`) are plain values (U) or reverse-mode leaves into that buffer (∇U), and after the
/// body each constraint maps the buffer's adjoints back onto y by its own analytic backward pass
/// (below), so a constraint costs one transform and one backward pass per evaluation, however
/// often the body reads it. Unconstrained (`real`) parameters are read from y directly.
///
/// | constraint | x = c(y) | log-Jacobian | free size |
/// | --- | --- | --- | --- |
/// | `real` | y | 0 | n |
/// | `lower(a)`, `positive` = lower(0) | a + eʸ | y | n |
/// | `upper(b)` | b − eʸ | y | n |
/// | `bounded(a, b)`, `unit_interval` = bounded(0, 1) | a + (b − a)σ(y) | log(b − a) + log σ(y) + log σ(−y) | n |
/// | `ordered` (vector) | x₀ = y₀, xₖ = xₖ₋₁ + e^{yₖ} | Σₖ₌₁ yₖ | N |
/// | `positive_ordered` (vector) | x₀ = e^{y₀}, then as ordered | Σₖ yₖ | N |
/// | `simplex` (vector, N ≥ 2) | stick-breaking: zₖ = σ(yₖ − log(N − 1 − k)), xₖ = rₖ zₖ, rₖ₊₁ = rₖ − xₖ, r₀ = 1, x_{N−1} = r_{N−1} | Σₖ log zₖ + log(1 − zₖ) + log rₖ | N − 1 |
/// | `cholesky_corr` (K×K, K ≥ 2) | Stan's: canonical partial correlations zᵢⱼ = tanh(y), row i: Lᵢⱼ = zᵢⱼ √(1 − Σ_{l<j} Lᵢₗ²), Lᵢᵢ = √(1 − Σ_{l<i} Lᵢₗ²) | Σ log(1 − zᵢⱼ²) + ½ log(1 − Σ_{l<j} Lᵢₗ²) | K(K − 1)/2 |
///
/// These are the transforms of the Stan Reference Manual ("Constraint transforms", as of Stan 2.3x;
/// later versions may parametrise the simplex otherwise, which changes only the unconstrained
/// coordinates), so constrained draws compare with Stan's and posteriordb's. A matrix is stored
/// row by row. Only the bounds in the model's `params(...)` count: a handle read in the body is
/// looked up by name and type.

#include <ember/core/config.hpp>
#include <ember/core/concepts.hpp>
#include <ember/core/math.hpp>
#include <ember/core/vec.hpp>
#include <ember/energy/transform.hpp>

#include <cstddef>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace ember {

/// A string usable as a template argument: `param<"sigma">`.
template <std::size_t N>
struct fixed_string {
  char s[N]{};
  constexpr fixed_string(char const (&a)[N]) {
    for (std::size_t i = 0; i < N; ++i) s[i] = a[i];
  }
  static constexpr std::size_t length = N - 1;
  std::string str() const { return std::string(s, N - 1); }
};

namespace detail {
// A name is letters, digits and _, not starting with a digit: a Python identifier, so it names an
// ArviZ variable and an array of a .npz file as it is.
template <std::size_t N>
consteval bool is_identifier(fixed_string<N> const& n) {
  if (N < 2 || (n.s[0] >= '0' && n.s[0] <= '9')) return false;
  for (std::size_t i = 0; i + 1 < N; ++i) {
    char const c = n.s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}
// log σ(y) = −softplus(−y), without overflow.
template <class S>
EMBER_HD EMBER_INLINE S log_sigmoid(S const& y) {
  return -softplus(-y);
}
}  // namespace detail

// ---- Constraints. Each maps n free values y to its constrained values x (`forward`, returning
// the log-Jacobian) and adds to g the gradient of F = U(x(y)) − log J(y) given a = ∂U/∂x
// (`backward`; `jac` false leaves the log-Jacobian's part out: a GPU team's other members).
// Elementwise constraints take any shape; the others check theirs in `constraint_shape`.

/// No constraint: x = y.
struct real_t {};
inline constexpr real_t real{};

/// x > lo: x = lo + eʸ.
struct lower {
  double lo;
  constexpr explicit lower(double l) : lo(l) {}  // a constructor, not an aggregate: clang 14 has no lower(1.5) for aggregates
  template <class S>
  EMBER_HD EMBER_INLINE S forward(S const* y, S* x, int n) const {
    S lj = S(0);
    for (int i = 0; i < n; ++i) {
      x[i] = detail::data_as<S>(lo) + exp(y[i]);
      lj = lj + y[i];
    }
    return lj;
  }
  template <class S>
  EMBER_HD EMBER_INLINE void backward(S const* y, S const*, S const* a, S* g, int n, bool jac) const {
    for (int i = 0; i < n; ++i) g[i] = g[i] + a[i] * exp(y[i]) - S(jac ? 1 : 0);
  }
  /// An energy on x > lo in every coordinate (energy/transform.hpp): `positive(U)`.
  template <DifferentiableEnergy E>
  constrained_energy<E> operator()(E const& U) const {
    using T = typename E::value_type;
    return constrain(U, filled<T, E::dim>(T(lo)), filled<T, E::dim>(std::numeric_limits<T>::infinity()));
  }
};
/// x > 0.
inline constexpr lower positive{0.0};

/// x < hi: x = hi − eʸ.
struct upper {
  double hi;
  constexpr explicit upper(double h) : hi(h) {}
  template <class S>
  EMBER_HD EMBER_INLINE S forward(S const* y, S* x, int n) const {
    S lj = S(0);
    for (int i = 0; i < n; ++i) {
      x[i] = detail::data_as<S>(hi) - exp(y[i]);
      lj = lj + y[i];
    }
    return lj;
  }
  template <class S>
  EMBER_HD EMBER_INLINE void backward(S const* y, S const*, S const* a, S* g, int n, bool jac) const {
    for (int i = 0; i < n; ++i) g[i] = g[i] - a[i] * exp(y[i]) - S(jac ? 1 : 0);
  }
  template <DifferentiableEnergy E>
  constrained_energy<E> operator()(E const& U) const {
    using T = typename E::value_type;
    return constrain(U, filled<T, E::dim>(-std::numeric_limits<T>::infinity()), filled<T, E::dim>(T(hi)));
  }
};

/// lo < x < hi: x = lo + (hi − lo)σ(y). A pair that cannot hold (lo ≥ hi, or not finite) is
/// refused when the constraint is made: at compile time in a constant expression, else by
/// std::invalid_argument.
struct bounded {
  double lo, hi;
  constexpr bounded(double l, double h) : lo(l), hi(h) {
    if (!(l < h) || l - l != 0 || h - h != 0)
      throw std::invalid_argument("ember::bounded(lo, hi): lo must be below hi, both finite");
  }
  template <class S>
  EMBER_HD EMBER_INLINE S forward(S const* y, S* x, int n) const {
    S lj = S(0);
    S const w = detail::data_as<S>(hi - lo), l0 = detail::data_as<S>(lo);
    for (int i = 0; i < n; ++i) {
      x[i] = l0 + w * sigmoid(y[i]);
      lj = lj + detail::log_sigmoid(y[i]) + detail::log_sigmoid(-y[i]);
    }
    return lj + S(n) * log(w);
  }
  template <class S>
  EMBER_HD EMBER_INLINE void backward(S const* y, S const*, S const* a, S* g, int n, bool jac) const {
    S const w = detail::data_as<S>(hi - lo);
    for (int i = 0; i < n; ++i) {
      S const s = sigmoid(y[i]), t = s * (S(1) - s);
      g[i] = g[i] + a[i] * w * t;
      if (jac) g[i] = g[i] - (S(1) - S(2) * s);
    }
  }
  template <DifferentiableEnergy E>
  constrained_energy<E> operator()(E const& U) const {
    return interval(U, lo, hi);
  }
};
/// 0 < x < 1.
inline constexpr bounded unit_interval{0.0, 1.0};

/// An increasing vector (`ordered`), of positive values where `Positive` (`positive_ordered`):
/// x₀ = y₀ (or e^{y₀}), xₖ = xₖ₋₁ + e^{yₖ}.
template <bool Positive>
struct ordered_constraint {
  template <class S>
  EMBER_HD EMBER_INLINE S forward(S const* y, S* x, int n) const {
    x[0] = Positive ? exp(y[0]) : y[0];
    S lj = Positive ? y[0] : S(0);
    for (int k = 1; k < n; ++k) {
      x[k] = x[k - 1] + exp(y[k]);
      lj = lj + y[k];
    }
    return lj;
  }
  template <class S>
  EMBER_HD EMBER_INLINE void backward(S const* y, S const*, S const* a, S* g, int n, bool jac) const {
    S c = S(0);  // Σ_{j≥k} a_j: x_j depends on y_k for every j ≥ k
    for (int k = n - 1; k >= 1; --k) {
      c = c + a[k];
      g[k] = g[k] + c * exp(y[k]) - S(jac ? 1 : 0);
    }
    c = c + a[0];
    g[0] = Positive ? g[0] + c * exp(y[0]) - S(jac ? 1 : 0) : g[0] + c;
  }
  /// An energy on increasing vectors (energy/transform.hpp): `ordered(U)`.
  template <DifferentiableEnergy E>
    requires(!Positive)
  ordered_energy<E> operator()(E const& U) const {
    return ordered_energy<E>{U};
  }
};
using ordered_t = ordered_constraint<false>;
using positive_ordered_t = ordered_constraint<true>;
inline constexpr ordered_t ordered{};
inline constexpr positive_ordered_t positive_ordered{};

/// Non-negative values adding up to 1 (N values, N − 1 free): Stan's stick-breaking, centred so
/// that y = 0 is the uniform simplex. The remaining length rₖ is a product (rₖ₊₁ = rₖ σ(−uₖ)) and
/// its logarithm a sum, never a difference: in float a stick near 1 would otherwise leave r = 0.
struct simplex_t {
  template <class S>
  EMBER_HD EMBER_INLINE S forward(S const* y, S* x, int n) const {
    S r = S(1), log_r = S(0), lj = S(0);
    for (int k = 0; k < n - 1; ++k) {
      S const u = y[k] - detail::data_as<S>(std::log(double(n - 1 - k)));
      S const log_rest = detail::log_sigmoid(-u);  // log(1 − zₖ)
      x[k] = r * sigmoid(u);
      lj = lj + detail::log_sigmoid(u) + log_rest + log_r;
      r = r * sigmoid(-u);
      log_r = log_r + log_rest;
    }
    x[n - 1] = r;
    return lj;
  }
  // Backward through the sticks, last first: r_k = r_{k+1} + x_k rebuilds each remaining length
  // without a division.
  template <class S>
  EMBER_HD EMBER_INLINE void backward(S const* y, S const* x, S const* a, S* g, int n, bool jac) const {
    S r = x[n - 1], ar = a[n - 1];
    for (int k = n - 2; k >= 0; --k) {
      S const rk = r + x[k];
      S const z = sigmoid(y[k] - detail::data_as<S>(std::log(double(n - 1 - k))));
      S const ak = a[k];
      g[k] = g[k] + (ak - ar) * rk * z * (S(1) - z);
      ar = ak * z + ar * (S(1) - z);
      if (jac) {
        g[k] = g[k] - (S(1) - S(2) * z);
        ar = ar - S(1) / rk;
      }
      r = rk;
    }
  }
};
inline constexpr simplex_t simplex{};

/// The lower-triangular Cholesky factor L of a K×K correlation matrix (L Lᵀ has a unit
/// diagonal), stored row by row with zeros above the diagonal. In row i the remaining squared
/// length wⱼ = 1 − Σ_{l<j} Lᵢₗ² is kept as its logarithm, a sum of log(1 − zₗ²): a difference
/// 1 − Σ L² would round to 0 or below in float once a correlation nears ±1.
struct cholesky_corr_t {
  // log(1 − tanh² y) = 2 (log 2 − |y| − log(1 + e^{−2|y|})), finite for every y.
  template <class S>
  EMBER_HD EMBER_INLINE static S log1m_tanh2(S const& y) {
    S const ay = abs(y);
    return S(2) * (detail::data_as<S>(0.69314718055994530942) - ay - log1p_unit(exp(S(-2) * ay)));
  }
  template <class S>
  EMBER_HD EMBER_INLINE S forward(S const* y, S* x, int n) const {
    int const K = side(n);
    S lj = S(0);
    int idx = 0;
    for (int i = 0; i < K; ++i) {
      S log_w = S(0);
      for (int j = 0; j < i; ++j, ++idx) {
        S const l1 = log1m_tanh2(y[idx]);
        lj = lj + l1 + S(0.5) * log_w;
        x[i * K + j] = tanh(y[idx]) * exp(S(0.5) * log_w);
        log_w = log_w + l1;
      }
      x[i * K + i] = exp(S(0.5) * log_w);
      for (int j = i + 1; j < K; ++j) x[i * K + j] = S(0);
    }
    return lj;
  }
  // Row by row, last column first, with log wⱼ = log w_{j+1} − log(1 − zⱼ²).
  template <class S>
  EMBER_HD EMBER_INLINE void backward(S const* y, S const* x, S const* a, S* g, int n, bool jac) const {
    int const K = side(n);
    for (int i = 1; i < K; ++i) {
      int const first = i * (i - 1) / 2;
      S log_w = S(0);
      for (int j = 0; j < i; ++j) log_w = log_w + log1m_tanh2(y[first + j]);
      S aw = a[i * K + i] * S(0.5) * exp(S(-0.5) * log_w);  // x_ii = √w_i
      for (int j = i - 1; j >= 0; --j) {
        int const idx = first + j;
        S const l1 = log1m_tanh2(y[idx]);
        log_w = log_w - l1;  // now log w_j
        S const L = x[i * K + j], s = exp(S(0.5) * log_w), z = tanh(y[idx]);
        S const aL = a[i * K + j] - S(2) * L * aw;
        g[idx] = g[idx] + aL * s * exp(l1);
        aw = aw + aL * z * S(0.5) / s;
        if (jac) {
          g[idx] = g[idx] + S(2) * z;
          aw = aw - S(0.5) * exp(-log_w);
        }
      }
    }
  }
  EMBER_HD static constexpr int side(int n) {
    int k = 1;
    while (k * k < n) ++k;
    return k;
  }
};
inline constexpr cholesky_corr_t cholesky_corr{};

namespace detail {
// The free size of constraint C on a parameter of extents Ext..., or a compile-time sentence.
template <class C, int... Ext>
struct constraint_shape {
  static constexpr int rank = sizeof...(Ext);
  static constexpr int size = (1 * ... * Ext);
  static constexpr int free = size;
};
template <bool Positive, int... Ext>
struct constraint_shape<ordered_constraint<Positive>, Ext...> {
  static_assert(sizeof...(Ext) == 1, "ember::ordered, ember::positive_ordered: an ordered parameter is a vector: param<\"name\", N>(ordered)");
  static constexpr int rank = 1, size = (1 * ... * Ext), free = size;
};
template <int... Ext>
struct constraint_shape<simplex_t, Ext...> {
  static_assert(sizeof...(Ext) == 1 && (1 * ... * Ext) >= 2,
                "ember::simplex: a simplex is a vector of at least 2 elements: param<\"name\", N>(simplex), N >= 2");
  static constexpr int rank = 1, size = (1 * ... * Ext), free = size - 1;
};
template <int... Ext>
struct constraint_shape<cholesky_corr_t, Ext...> {
  static constexpr int ext[sizeof...(Ext) + 2] = {Ext..., 0, 0};
  static_assert(sizeof...(Ext) == 2 && ext[0] == ext[1] && ext[0] >= 2,
                "ember::cholesky_corr: the Cholesky factor of a correlation matrix is square, at least 2x2: "
                "param<\"L\", K, K>(cholesky_corr)");
  static constexpr int rank = 2, size = ext[0] * ext[0], free = ext[0] * (ext[0] - 1) / 2;
};
}  // namespace detail

/// A name as a type, one template argument per character: what a parameter's type carries (a
/// class-type template argument, `fixed_string`, would reach the kernels' types, which nvcc's
/// host stubs cannot spell).
template <char... Cs>
struct param_name {
  static constexpr char s[sizeof...(Cs) + 1] = {Cs..., '\0'};
  static constexpr std::size_t length = sizeof...(Cs);
  static std::string str() { return std::string(s, length); }
};
namespace detail {
template <fixed_string S, std::size_t... I>
param_name<S.s[I]...> name_of(std::index_sequence<I...>);
}  // namespace detail
/// The `param_name` of a string: `name_t<"tau">`.
template <fixed_string S>
using name_t = decltype(detail::name_of<S>(std::make_index_sequence<S.length>{}));

/// One parameter: its name (a `param_name`), constraint (a value: bounds are numbers) and extents
/// (none: a scalar; one: a vector; two: a matrix, row by row). Made by
/// `param<"name", extents...>(constraint)`.
template <class Name, class C, int... Ext>
struct parameter {
  static_assert(((Ext > 0) && ...), "ember::param: every extent must be positive");
  static_assert(sizeof...(Ext) <= 2, "ember::param: a parameter is a scalar, a vector or a matrix (at most 2 extents)");
  using constraint_type = C;
  static constexpr bool is_ember_parameter = true;
  static constexpr Name name{};
  static constexpr int rank = sizeof...(Ext);
  static constexpr int size = detail::constraint_shape<C, Ext...>::size;  ///< constrained values
  static constexpr int free_size = detail::constraint_shape<C, Ext...>::free;  ///< coordinates of y
  static constexpr bool is_real = std::is_same_v<C, real_t>;
  static constexpr int extents[rank > 0 ? rank : 1] = {Ext...};
  C constraint{};
};

/// `param<"sigma">(positive)`, `param<"beta", 3>()`, `param<"L", 4, 4>(cholesky_corr)`.
template <fixed_string Name, int... Ext, class C = real_t>
constexpr parameter<name_t<Name>, C, Ext...> param(C c = {}) {
  static_assert(detail::is_identifier(Name),
                "ember::param: a parameter's name is letters, digits and _, not starting with a digit (it names an ArviZ variable)");
  static_assert(detail::constraint_shape<C, Ext...>::free >= 0);  // the constraint's shape checks, here
  return {c};
}

namespace detail {
// By a member, not a partial specialisation on `parameter<N, C, E...>`: nvcc's front end does
// not match a class-type template argument (the name) there.
template <class T>
inline constexpr bool is_parameter = requires { T::is_ember_parameter; };

template <std::size_t I, class P>
struct param_slot {
  P p;
};
template <class Seq, class... P>
struct param_slots;
template <std::size_t... I, class... P>
struct param_slots<std::index_sequence<I...>, P...> : param_slot<I, P>... {};

template <std::size_t I, class P>
EMBER_HD constexpr P const& slot_at(param_slot<I, P> const& s) {
  return s.p;
}
template <std::size_t I, class P>
P slot_type(param_slot<I, P> const&);

template <class... P>
consteval bool names_distinct() {
  std::string_view const names[] = {std::string_view(P::name.s, P::name.length)...};
  for (std::size_t i = 0; i < sizeof...(P); ++i)
    for (std::size_t j = i + 1; j < sizeof...(P); ++j)
      if (names[i] == names[j]) return false;
  return true;
}
}  // namespace detail

/// The parameters of a model, in the order of their free coordinates in y. Made by `params(...)`.
template <class... P>
struct parameters : detail::param_slots<std::index_sequence_for<P...>, P...> {
  static_assert(sizeof...(P) > 0, "ember::params: a model needs at least one parameter");
  static_assert(detail::names_distinct<P...>(), "ember::params: two parameters have the same name");
  static constexpr int count = int(sizeof...(P));
  static constexpr int free_dim = (0 + ... + P::free_size);  ///< the model's dimension D
  static constexpr int size = (0 + ... + P::size);           ///< constrained values in all
  /// Values kept in a context's buffer: those of the constrained (not `real`) parameters.
  static constexpr int stored = (0 + ... + (P::is_real ? 0 : P::size));

  template <std::size_t I>
  using type_at = decltype(detail::slot_type<I>(std::declval<parameters const&>()));

  /// The index of the parameter named `name`, or −1.
  static constexpr int index_of(std::string_view name) {
    std::string_view const names[] = {std::string_view(P::name.s, P::name.length)...};
    for (int i = 0; i < count; ++i)
      if (names[i] == name) return i;
    return -1;
  }
  /// Where parameter i's free coordinates start in y; where a constrained parameter i's values
  /// start in the stored buffer; where parameter i's values start in a draw in the model's terms.
  EMBER_HD static constexpr int free_offset(int i) {
    int const s[] = {0, P::free_size...};  // device code too: no initializer_list
    int o = 0;
    for (int j = 0; j < i; ++j) o += s[j + 1];
    return o;
  }
  EMBER_HD static constexpr int stored_offset(int i) {
    int const s[] = {0, (P::is_real ? 0 : P::size)...};
    int o = 0;
    for (int j = 0; j < i; ++j) o += s[j + 1];
    return o;
  }
  static constexpr int value_offset(int i) { return sum_before(i, {P::size...}); }

  template <std::size_t I>
  EMBER_HD constexpr auto const& get() const {
    return detail::slot_at<I>(*this);
  }

  /// Transforms every constrained parameter of y into `stored_values` (each at its
  /// stored_offset) and returns the log-Jacobian.
  template <class S, class Y>
  EMBER_HD EMBER_INLINE S constrain(Y const& y, S* stored_values) const {
    S lj = S(0);
    each_constrained([&](auto const& c, int n, int fo, int so) { lj = lj + c.forward(&y[fo], stored_values + so, n); });
    return lj;
  }
  /// Adds to g the gradient through every constraint, given the adjoints `a` of the stored
  /// values (and the log-Jacobian's, where `jac`).
  template <class S, class Y, class G>
  EMBER_HD EMBER_INLINE void constrain_backward(Y const& y, S const* stored_values, S const* a, G& g, bool jac) const {
    each_constrained([&](auto const& c, int n, int fo, int so) { c.backward(&y[fo], stored_values + so, a + so, &g[fo], n, jac); });
  }
  /// Every parameter's values in order (`size` of them), given y and the stored values that
  /// `constrain` made from it: what a draw becomes in the model's terms.
  template <class S, class Y>
  EMBER_HD void gather(Y const& y, S const* stored_values, S* out) const {
    [&]<std::size_t... J>(std::index_sequence<J...>) {
      ((copy_values<J>(y, stored_values, out)), ...);
    }(std::index_sequence_for<P...>{});
  }
  /// The same from y alone.
  template <class S, class Y>
  void values(Y const& y, S* out) const {
    std::vector<S> buf(std::size_t(parameters::stored > 0 ? parameters::stored : 1));
    (void)constrain<S>(y, buf.data());
    gather(y, buf.data(), out);
  }

 private:
  static constexpr int sum_before(int i, std::initializer_list<int> sizes) {
    int o = 0;
    for (int j = 0; j < i; ++j) o += sizes.begin()[j];
    return o;
  }
  // f(constraint, its size, its free offset, its stored offset) for each constrained parameter.
  template <class F>
  EMBER_HD EMBER_INLINE void each_constrained(F const& f) const {
    [&]<std::size_t... J>(std::index_sequence<J...>) {
      (
          [&] {
            if constexpr (!type_at<J>::is_real) f(get<J>().constraint, type_at<J>::size, free_offset(int(J)), stored_offset(int(J)));
          }(),
          ...);
    }(std::index_sequence_for<P...>{});
  }
  template <std::size_t J, class S, class Y>
  EMBER_HD void copy_values(Y const& y, S const* stored_values, S* out) const {
    using Q = type_at<J>;
    S const* from = Q::is_real ? &y[free_offset(int(J))] : stored_values + stored_offset(int(J));
    for (int i = 0; i < Q::size; ++i) out[value_offset(int(J)) + i] = from[i];
  }
};

/// `params(param<"mu">(), param<"tau">(positive), param<"theta", 8>())`: a model's parameter
/// list (their order is the order of the sampler's coordinates).
template <class... P>
  requires(detail::is_parameter<P> && ...)
constexpr parameters<P...> params(P const&... p) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return parameters<P...>{{detail::param_slot<I, P>{p}...}};
  }(std::index_sequence_for<P...>{});
}

/// No named parameters: a model read by index (`m[i]`, `block<O, N>`).
struct no_params {
  static constexpr int stored = 0;
};

}  // namespace ember
