#pragma once
/// \file
/// Reverse-mode gradients without a tape: expression nodes that know their own backward pass.
///
/// Building a node is the forward pass: it computes its value and the partial derivatives of
/// that value in each argument, at once, and keeps its arguments by value. `n.bwd(s)` is the
/// backward pass: it hands `s · ∂n/∂a` to each argument a, down to the leaves, which add what
/// reaches them into an adjoint (`*adj += s`). Nothing is recorded anywhere: the memory of a
/// term is `sizeof` its expression type, fixed at compile time, on the stack or in registers;
/// no heap, no virtual call, every function `EMBER_HD` (FastAD's idea of an expression type that
/// carries its adjoint, without FastAD's run-time bind buffer). ad/model.hpp runs a term's
/// backward pass right after building it, so a model's terms and data rows each live only for
/// one term, and a gradient costs a small multiple of its value whatever the dimension (1.4x on
/// hier_logit, more where the rows are so cheap that the adjoint updates show: docs/models.md).
///
/// Every node is an `expr<S, Back>`: its value v and its backward part b, which is all a parent
/// keeps of it (values are needed only while the parent is built). Node types live in
/// `ember::ad` (an inline namespace, so argument-dependent lookup on a node also searches
/// `ember`, where its operators and math are, next to the duals'). The backward parts:
///  - `leaf_back<S>`: a parameter or an element of a `let` (`var<S>`), a pointer to its adjoint;
///  - `no_back`: a constant met in an expression (`cst<S>`);
///  - `fn_back<S, A...>`: ∂f/∂aₖ at the arguments' values, for products, quotients, math and
///    log-densities, all built by `ad_apply(partials_of_f, a...)`;
///  - `sum_back<A, B, minus>`: a ± b, whose partials are known at compile time;
///  - `dot_back<S, T, K>`: Σₖ xₖ θₖ of a data row (T const*) and K consecutive parameters;
///  - `select_back<S, A, B>`: m ? a : b lane by lane.
/// S is the scalar a chain computes in (float, double or a SIMD batch of chains in lanes).
///
/// Masks. With SIMD chains, `select(m, a, b)` runs both branches' backward passes; the untaken
/// branch's partials may be ±∞ (log 0) and 0 · ∞ is NaN, so instead of multiplying the seed by 0
/// it passes a `masked_seed` down, and a leaf adds only the lanes its mask keeps. With a `bool`
/// mask (one chain, or a CUDA thread) the select branches.
///
/// A node never converts to a plain number (that would drop its gradient, silently): `std::exp`
/// on a node, or `if (node)`, stop compilation; comparisons give the value's mask, as duals do.

#include <ember/core/config.hpp>
#include <ember/core/math.hpp>

#include <concepts>
#include <cstddef>
#include <type_traits>
#include <utility>

namespace ember {
inline namespace ad {

/// A reverse-mode node: any type with a scalar `ad_scalar`, a value `v` and a backward pass.
template <class T>
concept node = requires { typename std::remove_cvref_t<T>::ad_scalar; };

/// The seed of a backward pass under a SIMD select: value s in the lanes of m, none elsewhere.
template <class S>
struct masked_seed {
  S s;
  mask_t<S> m;
};

namespace impl {
template <class T>
inline constexpr bool is_masked = false;
template <class S>
inline constexpr bool is_masked<masked_seed<S>> = true;

// seed · d, keeping the seed's mask.
template <class S>
EMBER_HD EMBER_INLINE S seed_times(S const& s, S const& d) {
  return s * d;
}
template <class S>
EMBER_HD EMBER_INLINE masked_seed<S> seed_times(masked_seed<S> const& s, S const& d) {
  return {s.s * d, s.m};
}
// −seed.
template <class S>
EMBER_HD EMBER_INLINE S negate(S const& s) {
  return -s;
}
template <class S>
EMBER_HD EMBER_INLINE masked_seed<S> negate(masked_seed<S> const& s) {
  return {-s.s, s.m};
}
// adj += seed (in the seed's lanes only).
template <class S>
EMBER_HD EMBER_INLINE void accumulate(S& adj, S const& s) {
  adj = adj + s;
}
template <class S>
EMBER_HD EMBER_INLINE void accumulate(S& adj, masked_seed<S> const& s) {
  adj = adj + select(s.m, s.s, S(0));
}
// A seed restricted to the lanes of m (and of the seed's own mask).
template <class S>
EMBER_HD EMBER_INLINE masked_seed<S> restrict_seed(S const& s, mask_t<S> const& m) {
  return {s, m};
}
template <class S>
EMBER_HD EMBER_INLINE masked_seed<S> restrict_seed(masked_seed<S> const& s, mask_t<S> const& m) {
  return {s.s, s.m && m};
}
}  // namespace impl

/// Refuses, with one sentence, every conversion of a node to a plain number.
#define EMBER_AD_NO_CONVERSION                                                                                     \
  template <class U>                                                                                               \
    requires std::same_as<U, S> && std::floating_point<U>                                                          \
  EMBER_HD operator U() const {                                                                                    \
    static_assert(!std::is_same_v<U, S>,                                                                        \
                  "ember: a reverse-mode node (a model's parameter or an expression of one) was used as a plain "  \
                  "number, which would drop its gradient: call math unqualified, exp(x) or ember::exp(x), not "    \
                  "std::exp, and use select(mask, a, b) instead of if on a parameter");                            \
    return U();                                                                                                    \
  }

/// A node: its value v and its backward part b, the only thing a parent keeps of it. Every node
/// is an `expr`; what it is lies in its backward part (the types below). Keeping values out of
/// the parents' copies keeps a row's tree small: a Bernoulli row of hier_logit is 4 batches and
/// 3 pointers, which the compiler holds in registers.
template <class S, class Back>
struct expr {
  using ad_scalar = S;
  S v;
  Back b;
  template <class Seed>
  EMBER_HD EMBER_INLINE void bwd(Seed const& s) const {
    b.bwd(s);
  }
  EMBER_AD_NO_CONVERSION
};

/// The backward part of a leaf: where its adjoint accumulates. Its copy is written out member
/// by member (so is dot_back's), which makes every backward part that holds it copy member by
/// member too: as trivially copyable aggregates, GCC copied them whole with 64-byte loads (a
/// batch member pads them to 64 bytes) right after writing the pointers with 8-byte stores, which
/// the store buffer cannot forward; a 500-parameter model's batch gradient took 2× as long
/// (bench/results/2026-11-28-grad-cost.md).
template <class S>
struct leaf_back {
  S* adj;
  leaf_back() = default;
  EMBER_HD EMBER_INLINE leaf_back(S* p) : adj(p) {}
  EMBER_HD EMBER_INLINE leaf_back(leaf_back const& o) : adj(o.adj) {}
  EMBER_HD EMBER_INLINE leaf_back& operator=(leaf_back const& o) { adj = o.adj; return *this; }
  template <class Seed>
  EMBER_HD EMBER_INLINE void bwd(Seed const& s) const {
    impl::accumulate(*adj, s);
  }
};
/// A constant's backward part: nothing to pass back.
struct no_back {
  template <class Seed>
  EMBER_HD EMBER_INLINE void bwd(Seed const&) const {}
};

/// A parameter xᵢ (or an element of a `let`): `var<S>{value, &adjoint}`.
template <class S>
using var = expr<S, leaf_back<S>>;
/// A constant inside an expression.
template <class S>
using cst = expr<S, no_back>;

namespace impl {
// Backward parts held by value, in order (no std::tuple: device code).
template <class... A>
struct args;
template <>
struct args<> {};
template <class A, class... R>
struct args<A, R...> {
  A head;
  args<R...> tail;
};

template <int I, class S, class Seed, class... A>
EMBER_HD EMBER_INLINE void bwd_args(args<A...> const& a, S const* d, Seed const& s) {
  if constexpr (sizeof...(A) > 0) {
    if constexpr (!std::is_same_v<std::remove_cvref_t<decltype(a.head)>, no_back>) a.head.bwd(seed_times(s, d[I]));
    bwd_args<I + 1>(a.tail, d, s);
  }
}
}  // namespace impl

/// f(a₁ … a_K): ∂f/∂aₖ at the arguments' values, and the arguments' backward parts.
template <class S, class... A>
struct fn_back {
  S d[sizeof...(A)];
  impl::args<A...> a;
  template <class Seed>
  EMBER_HD EMBER_INLINE void bwd(Seed const& s) const {
    impl::bwd_args<0>(a, d, s);
  }
};

/// a ± b: partials ±1 known at compile time, so nothing but the operands is kept.
template <class A, class B, bool Minus>
struct sum_back {
  A a;
  B b;
  template <class Seed>
  EMBER_HD EMBER_INLINE void bwd(Seed const& s) const {
    a.bwd(s);
    if constexpr (Minus)
      b.bwd(impl::negate(s));
    else
      b.bwd(s);
  }
};

/// Σₖ xₖ θₖ for a data row x (K values of type T) and K consecutive parameters θ.
template <class S, class T, int K>
struct dot_back {
  T const* x;
  S* adj;  ///< the adjoints of θ₀ … θ_{K−1}
  dot_back() = default;
  EMBER_HD EMBER_INLINE dot_back(T const* r, S* a) : x(r), adj(a) {}
  EMBER_HD EMBER_INLINE dot_back(dot_back const& o) : x(o.x), adj(o.adj) {}
  EMBER_HD EMBER_INLINE dot_back& operator=(dot_back const& o) { x = o.x; adj = o.adj; return *this; }
  template <class Seed>
  EMBER_HD EMBER_INLINE void bwd(Seed const& s) const {
    for (int k = 0; k < K; ++k) impl::accumulate(adj[k], impl::seed_times(s, S(element_t<S>(x[k]))));
  }
};

/// m ? a : b lane by lane; only the taken branch's lanes receive a gradient.
template <class S, class A, class B>
struct select_back {
  mask_t<S> m;
  A a;
  B b;
  template <class Seed>
  EMBER_HD EMBER_INLINE void bwd(Seed const& s) const {
    if constexpr (std::is_same_v<mask_t<S>, bool>) {
      if (m)
        a.bwd(s);
      else
        b.bwd(s);
    } else {
      a.bwd(impl::restrict_seed(s, m));
      b.bwd(impl::restrict_seed(s, !m));
    }
  }
};

#undef EMBER_AD_NO_CONVERSION

namespace impl {
template <class T>
struct ad_scalar_of {
  using type = void;
};
template <node T>
struct ad_scalar_of<T> {
  using type = typename std::remove_cvref_t<T>::ad_scalar;
};
// The scalar of the first node among A... (void if none).
template <class... A>
struct first_ad_scalar {
  using type = void;
};
template <class A, class... R>
struct first_ad_scalar<A, R...> {
  using type = std::conditional_t<node<A>, typename ad_scalar_of<A>::type, typename first_ad_scalar<R...>::type>;
};
template <class... A>
using ad_scalar_t = typename first_ad_scalar<std::remove_cvref_t<A>...>::type;

// An operand's backward part: a node's own, nothing for a constant (arithmetic or S).
template <class S, class A>
EMBER_HD EMBER_INLINE auto back_of(A const& a) {
  if constexpr (node<A>) {
    static_assert(std::is_same_v<typename A::ad_scalar, S>,
                  "ember: one expression mixes reverse-mode nodes of different scalar types");
    return a.b;
  } else {
    static_assert(std::is_arithmetic_v<A> || std::is_convertible_v<A const&, S>,
                  "ember: a reverse-mode expression met an operand that is neither a node, a number nor the "
                  "chain's scalar type (a dual number inside a model's gradient?)");
    return no_back{};
  }
}
// An operand's value as S.
template <class S, class A>
EMBER_HD EMBER_INLINE S value_of(A const& a) {
  if constexpr (node<A>)
    return a.v;
  else if constexpr (std::is_arithmetic_v<A>)
    return S(element_t<S>(a));
  else
    return S(a);
}
// An operand as a node of scalar S: a node as it is, a constant as cst<S>.
template <class S, class A>
EMBER_HD EMBER_INLINE auto as_node(A const& a) {
  return expr<S, decltype(back_of<S>(a))>{value_of<S>(a), back_of<S>(a)};
}

template <class S, class A, class... R>
EMBER_HD EMBER_INLINE auto make_args(A const& a, R const&... r) {
  using head = decltype(back_of<S>(a));
  if constexpr (sizeof...(R) == 0)
    return args<head>{back_of<S>(a), {}};
  else
    return args<head, decltype(back_of<S>(r))...>{back_of<S>(a), make_args<S>(r...)};
}
template <class S, class P, std::size_t... I, class... A>
EMBER_HD EMBER_INLINE auto build_fn(P const& p, std::index_sequence<I...>, A const&... a) {
  return expr<S, fn_back<S, decltype(back_of<S>(a))...>>{p.value, {{p.d[I]...}, make_args<S>(a...)}};
}
}  // namespace impl

}  // namespace ad

namespace detail {
template <class S, class Back>
inline constexpr bool is_expression_node<ad::expr<S, Back>> = true;
}  // namespace detail

/// The node of f at the operands' values: `f(plain values...)` returns `{value, {∂₁, …, ∂_K}}`
/// (any struct with `.value` and `.d[K]`, e.g. distributions.hpp's `lpdf_partials`). This is
/// how every function of nodes is built; constants become `cst` arguments, whose partials the
/// compiler drops since no backward pass reads them.
template <class F, class... A>
EMBER_HD EMBER_INLINE auto ad_apply(F const& f, A const&... a) {
  using S = ad::impl::ad_scalar_t<A...>;
  static_assert(!std::is_void_v<S>, "ember::ad_apply needs at least one reverse-mode node among its operands");
  auto const p = f(ad::impl::value_of<S>(a)...);
  // One aggregate initialisation, so the operands are copied once, straight into place (built
  // member by member, GCC copied each subtree again through memmove: 25 % of a batch gradient).
  return ad::impl::build_fn<S>(p, std::index_sequence_for<A...>{}, a...);
}

inline namespace ad {
namespace impl {
template <class S, int K>
struct partials {
  S value;
  S d[K];
};
// Operands of a binary operator: at least one node, the other a node, a number or the scalar.
template <class A, class B>
concept ad_operands = (node<A> || node<B>) && std::is_same_v<ad_scalar_t<A, B>, ad_scalar_t<B, A>>;
}  // namespace impl
}  // namespace ad

// --- arithmetic ---------------------------------------------------------------------------------

template <class A, class B>
  requires ad::impl::ad_operands<A, B>
EMBER_HD EMBER_INLINE auto operator+(A const& a, B const& b) {
  using S = ad::impl::ad_scalar_t<A, B>;
  using back = ad::sum_back<decltype(ad::impl::back_of<S>(a)), decltype(ad::impl::back_of<S>(b)), false>;
  return ad::expr<S, back>{ad::impl::value_of<S>(a) + ad::impl::value_of<S>(b),
                           {ad::impl::back_of<S>(a), ad::impl::back_of<S>(b)}};
}
template <class A, class B>
  requires ad::impl::ad_operands<A, B>
EMBER_HD EMBER_INLINE auto operator-(A const& a, B const& b) {
  using S = ad::impl::ad_scalar_t<A, B>;
  using back = ad::sum_back<decltype(ad::impl::back_of<S>(a)), decltype(ad::impl::back_of<S>(b)), true>;
  return ad::expr<S, back>{ad::impl::value_of<S>(a) - ad::impl::value_of<S>(b),
                           {ad::impl::back_of<S>(a), ad::impl::back_of<S>(b)}};
}
template <class A, class B>
  requires ad::impl::ad_operands<A, B>
EMBER_HD EMBER_INLINE auto operator*(A const& a, B const& b) {
  using S = ad::impl::ad_scalar_t<A, B>;
  return ad_apply([](S const& x, S const& y) { return ad::impl::partials<S, 2>{x * y, {y, x}}; }, a, b);
}
/// (a/b)' = a'/b − (a/b) b'/b: one division.
template <class A, class B>
  requires ad::impl::ad_operands<A, B>
EMBER_HD EMBER_INLINE auto operator/(A const& a, B const& b) {
  using S = ad::impl::ad_scalar_t<A, B>;
  return ad_apply(
      [](S const& x, S const& y) {
        S const inv = S(1) / y, q = x * inv;
        return ad::impl::partials<S, 2>{q, {inv, -q * inv}};
      },
      a, b);
}
template <ad::node A>
EMBER_HD EMBER_INLINE auto operator-(A const& a) {
  using S = typename A::ad_scalar;
  return ad_apply([](S const& x) { return ad::impl::partials<S, 1>{-x, {S(-1)}}; }, a);
}
template <ad::node A>
EMBER_HD EMBER_INLINE A const& operator+(A const& a) {
  return a;
}

// Comparisons look at the values and give the scalar's mask, as duals do.
#define EMBER_AD_COMPARE(op)                                                                      \
  template <class A, class B>                                                                     \
    requires ad::impl::ad_operands<A, B>                                                            \
  EMBER_HD EMBER_INLINE auto operator op(A const& a, B const& b) {                                \
    using S = ad::impl::ad_scalar_t<A, B>;                                                          \
    return ad::impl::value_of<S>(a) op ad::impl::value_of<S>(b);                                      \
  }
EMBER_AD_COMPARE(<)
EMBER_AD_COMPARE(<=)
EMBER_AD_COMPARE(>)
EMBER_AD_COMPARE(>=)
EMBER_AD_COMPARE(==)
EMBER_AD_COMPARE(!=)
#undef EMBER_AD_COMPARE

// --- math: the rules of core/dual.hpp, as partials -----------------------------------------------

#define EMBER_AD_UNARY(name, body)                                                 \
  template <ad::node A>                                                                \
  EMBER_HD EMBER_INLINE auto name(A const& a) {                                    \
    using S = typename A::ad_scalar;                                               \
    return ad_apply([](S const& x) { body }, a);                                      \
  }
#define EMBER_AD_RESULT(value, partial) return ad::impl::partials<S, 1>{value, {partial}};
EMBER_AD_UNARY(exp, S const e = exp(x); EMBER_AD_RESULT(e, e))
EMBER_AD_UNARY(log, EMBER_AD_RESULT(S(log(x)), S(S(1) / x)))
EMBER_AD_UNARY(log1p, EMBER_AD_RESULT(S(log1p(x)), S(S(1) / (S(1) + x))))
EMBER_AD_UNARY(expm1, S const e = expm1(x); EMBER_AD_RESULT(e, S(e + S(1))))
EMBER_AD_UNARY(sqrt, S const r = sqrt(x); EMBER_AD_RESULT(r, S(S(0.5) / r)))
EMBER_AD_UNARY(sin, EMBER_AD_RESULT(S(sin(x)), S(cos(x))))
EMBER_AD_UNARY(cos, EMBER_AD_RESULT(S(cos(x)), S(-sin(x))))
EMBER_AD_UNARY(tanh, S const t = tanh(x); EMBER_AD_RESULT(t, S(S(1) - t * t)))
EMBER_AD_UNARY(sigmoid, S const s = sigmoid(x); EMBER_AD_RESULT(s, S(s * (S(1) - s))))
/// softplus' = σ, from the one exponential e^{−|x|}.
EMBER_AD_UNARY(softplus, S const e = exp(-abs(x)); S const r = S(1) / (S(1) + e);
               EMBER_AD_RESULT(S(max(x, S(0)) + log1p_unit(e)), S(select(x >= S(0), r, S(e * r)))))
/// |x|' = sign(x), with sign(0) = +1 (a subgradient), as for duals.
EMBER_AD_UNARY(abs, EMBER_AD_RESULT(S(abs(x)), S(select(x < S(0), S(-1), S(1)))))
/// x² (cheaper than pow(x, 2) and exact).
EMBER_AD_UNARY(square, EMBER_AD_RESULT(S(x * x), S(S(2) * x)))
#undef EMBER_AD_RESULT
#undef EMBER_AD_UNARY

/// xᶜ for a constant c, and aᵇ for two nodes (a > 0).
template <ad::node A, class C>
  requires std::is_arithmetic_v<C>
EMBER_HD EMBER_INLINE auto pow(A const& a, C c) {
  using S = typename A::ad_scalar;
  S const e = S(element_t<S>(c));
  return ad_apply([e](S const& x) { return ad::impl::partials<S, 1>{S(pow(x, e)), {S(e * pow(x, S(e - S(1))))}}; }, a);
}
template <ad::node A, ad::node B>
EMBER_HD EMBER_INLINE auto pow(A const& a, B const& b) {
  using S = typename A::ad_scalar;
  return ad_apply(
      [](S const& x, S const& y) {
        S const p = pow(x, y);
        return ad::impl::partials<S, 2>{p, {S(p * y / x), S(p * log(x))}};
      },
      a, b);
}

/// log(eᵃ + eᵇ), one node: ∂/∂a = e^{a − m}/(e^{a − m} + e^{b − m}) = σ(a − b), from the one
/// exponential e^{−|a − b|}.
template <class A, class B>
  requires ad::impl::ad_operands<A, B>
EMBER_HD EMBER_INLINE auto log_sum_exp(A const& a, B const& b) {
  using S = ad::impl::ad_scalar_t<A, B>;
  return ad_apply(
      [](S const& x, S const& y) {
        S const e = exp(-abs(x - y)), r = S(1) / (S(1) + e);
        auto const first = x >= y;
        S const wx = select(first, r, S(e * r));
        return ad::impl::partials<S, 2>{S(max(x, y) + log1p_unit(e)), {wx, S(S(1) - wx)}};
      },
      a, b);
}

inline namespace ad {
namespace impl {
// min and max of two values with their partials, through select (at a tie, the first operand's).
struct min_rule {
  template <class S>
  EMBER_HD EMBER_INLINE partials<S, 2> operator()(S const& x, S const& y) const {
    auto const m = y < x;
    return {select(m, y, x), {select(m, S(0), S(1)), select(m, S(1), S(0))}};
  }
};
struct max_rule {
  template <class S>
  EMBER_HD EMBER_INLINE partials<S, 2> operator()(S const& x, S const& y) const {
    auto const m = x < y;
    return {select(m, y, x), {select(m, S(0), S(1)), select(m, S(1), S(0))}};
  }
};
}  // namespace impl
}  // namespace ad

/// The smaller and the larger of two operands (two of one node type, or a node and a number).
template <ad::node A>
EMBER_HD EMBER_INLINE auto min(A const& a, A const& b) {
  return ad_apply(ad::impl::min_rule{}, a, b);
}
template <class A, class B>
  requires ad::impl::ad_operands<A, B> && (!std::is_same_v<A, B>)
EMBER_HD EMBER_INLINE auto min(A const& a, B const& b) {
  return ad_apply(ad::impl::min_rule{}, a, b);
}
template <ad::node A>
EMBER_HD EMBER_INLINE auto max(A const& a, A const& b) {
  return ad_apply(ad::impl::max_rule{}, a, b);
}
template <class A, class B>
  requires ad::impl::ad_operands<A, B> && (!std::is_same_v<A, B>)
EMBER_HD EMBER_INLINE auto max(A const& a, B const& b) {
  return ad_apply(ad::impl::max_rule{}, a, b);
}

/// `m ? a : b` lane by lane (m is the scalar's mask); the untaken branch gets no gradient, even
/// where its partials are infinite.
template <class M, class A, class B>
  requires ad::impl::ad_operands<A, B> && std::is_same_v<M, mask_t<ad::impl::ad_scalar_t<A, B>>>
EMBER_HD EMBER_INLINE auto select(M const& m, A const& a, B const& b) {
  using S = ad::impl::ad_scalar_t<A, B>;
  using back = ad::select_back<S, decltype(ad::impl::back_of<S>(a)), decltype(ad::impl::back_of<S>(b))>;
  return ad::expr<S, back>{select(m, ad::impl::value_of<S>(a), ad::impl::value_of<S>(b)),
                           {m, ad::impl::back_of<S>(a), ad::impl::back_of<S>(b)}};
}

}  // namespace ember
