#pragma once
/// \file
/// `model<D>(body)`: an energy U(x) = −log p(x) written once, as a body that adds log-density
/// terms to a context, differentiated in reverse mode at a small multiple of the cost of its
/// value whatever D (ad/node.hpp), with forward duals of the same body as the oracle.
///
/// The body is any callable `body(m)` generic in the context m (a struct with a
/// `template <class M> EMBER_HD void operator()(M& m) const` for CUDA, or a generic lambda on
/// the CPU). It reads parameters with `m[i]` (one) and `m[block<Offset, N>{}]` (N consecutive,
/// indexable), adds terms with `m.add(log_density)` and data rows with
/// `m.add_rows(n, [&](std::int64_t i) { return row_log_density; })`, and names intermediate
/// vectors with `let<N>(m, [&](int j) { return expression; })`. The same body runs in three
/// contexts:
///  - `value_ctx<S, D>`: parameters are plain S, terms are summed: U(x) for S = float, double or
///    a SIMD batch, and forward-mode gradients for S = dual (`model_duals(U)`);
///  - `grad_ctx<S, D>`: parameters are `ad::var` leaves. `add(t)` builds the term t (its forward
///    pass) and runs its backward pass at once with seed −1, so the adjoints of the parameters
///    become ∂U/∂x and the term's expression dies at the end of the statement; a data row's
///    tree lives only for that row.
///
/// `let<N>` is how a value used by many terms (a group's effect, used by every row of the group)
/// gets one adjoint instead of a backward pass through its whole expression per use: it keeps
/// the N values and N adjoints on the stack, hands out `var`s into them, and, in its destructor,
/// runs each element's backward pass once with the adjoint accumulated. C++ destroys locals in
/// reverse order of construction, so a `let` built from an earlier `let` hands its gradient back
/// before the earlier one does: the scopes of the body are the reverse topological order, known
/// at compile time, and there is no tape. A `let` can be neither copied nor moved.

#include <ember/ad/blocks.hpp>
#include <ember/ad/node.hpp>
#include <ember/ad/params.hpp>
#include <ember/core/concepts.hpp>
#include <ember/core/config.hpp>
#include <ember/core/dual.hpp>
#include <ember/core/team.hpp>
#include <ember/core/vec.hpp>
#include <ember/data/data_view.hpp>
#include <ember/energy/custom_energy.hpp>
#include <ember/energy/for_each_view.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace ember {

namespace detail {
// Whether a model has named parameters (a `parameters<...>`, not `no_params`).
template <class P>
inline constexpr bool named = !std::is_same_v<P, no_params>;

// The index in P of the parameter a body reads, or one sentence at compile time.
template <class P, class Q>
consteval int param_index() {
  static_assert(!std::is_same_v<P, no_params>,
                "ember::model: the body reads a named parameter, but the model was made without params(...): "
                "model<T>(params(...), body), or a body with a static params member");
  constexpr int i = P::index_of(std::string_view(Q::name.s, Q::name.length));
  static_assert(i >= 0, "ember::model: the body reads a parameter that is not in the model's params(...)");
  static_assert(i < 0 || std::is_same_v<typename P::template type_at<(i < 0 ? 0 : i)>, Q>,
                "ember::model: the body reads a parameter by a name that params(...) gives another shape or constraint");
  return i;
}
// A parameter's values as the body sees them: one value, an indexable block, or a matrix.
template <class Q, class Block>
EMBER_HD EMBER_INLINE auto param_view(Block const& b) {
  if constexpr (Q::rank == 0)
    return b[0];
  else if constexpr (Q::rank == 1)
    return b;
  else
    return matrix_view<Block, Q::extents[0], Q::extents[1]>{b};
}

/// Rows of `add_rows` summed in blocks of this many before being added to the total: the
/// rounding of a float sum over n rows grows as n/block + block instead of n.
inline constexpr int model_row_block = 32;

// A let's elements are nodes that point into it; in a row of add_rows the let would die (and
// hand its gradient back) before the row's backward pass had reached it.
EMBER_HD inline void refuse_let_in_rows(bool rows_open) {
#if !defined(__CUDA_ARCH__)
  if (rows_open)
    throw std::logic_error(
        "ember::let: a let inside add_rows' row function would die before the row's gradient reaches it; "
        "build it in the model's body, before add_rows");
#else
  (void)rows_open;
#endif
}
// A team (core/team.hpp: a GPU's threads, or the host's parts of a split energy) splits a model's
// work: each member sums its blocks of add_rows' rows, only the first adds the body's other
// terms, and the members' log p and gradients are added up at the end (the backward pass is
// linear in the adjoints, so members' partial gradients sum to the whole). Plain float and double
// and their batches only; for duals, a team of one.
EMBER_HD EMBER_INLINE bool leads(team const& t) { return t.rank == 0; }
// Σᵢ row(i) for i in [0, n) in blocks of model_row_block rows, in a fixed order: the one row sum
// of both contexts (row(i) returns S; in the gradient context it has run the row's backward pass).
// In a team, member r takes blocks r, r + size, ...
template <class S, class Row>
EMBER_HD EMBER_INLINE S sum_rows(std::int64_t n, Row const& row, team const& t) {
#if !defined(__CUDA_ARCH__)
  ++host_rows_dealt;  // core/team.hpp
#endif
  std::int64_t const first = std::int64_t(t.rank) * model_row_block, step = std::int64_t(t.size) * model_row_block;
  S total = S(0);
  for (std::int64_t i0 = first; i0 < n; i0 += step) {
    std::int64_t const i1 = i0 + model_row_block < n ? i0 + model_row_block : n;
    S part = row(i0);  // peeled: starting from S(0) instead made GCC keep the value's log σ in the loop (4x)
    for (std::int64_t i = i0 + 1; i < i1; ++i) part = part + row(i);
    total = total + part;
  }
  return total;
}
// A term's value as S: a number through S's element type (a double constant meets a float batch).
template <class S, class V>
EMBER_HD EMBER_INLINE S as_scalar(V const& t) {
  if constexpr (std::is_arithmetic_v<V>)
    return S(element_t<S>(t));
  else
    return S(t);
}
}  // namespace detail

/// Σₖ rowₖ θₖ for a data row (K values) and a block of K parameters: a regression's linear
/// predictor, one node in reverse mode (its backward pass adds s·rowₖ to each θₖ's adjoint, so
/// the row must be data that outlives the term, a view's row, not a local array). A view's row
/// (`X.row(i)`) of another length than K is refused (on the host, where the CPU backends' check
/// of the energy before a run meets it first).
template <class T, class S, int K>
  requires std::is_arithmetic_v<T>
EMBER_HD EMBER_INLINE S dot(T const* row, block_values<S, K> const& b) {
  S r = b[0] * detail::data_as<S>(row[0]);
  for (int k = 1; k < K; ++k) {
    if constexpr (detail::is_dual<S>)
      r = r + b[k] * detail::data_as<S>(row[k]);
    else
      r = fmadd(b[k], detail::data_as<S>(row[k]), r);  // as the gradient's dot: the same bits
  }
  return r;
}
template <class T, class S, int K>
  requires std::is_arithmetic_v<T>
EMBER_HD EMBER_INLINE ad::expr<S, ad::dot_back<S, T, K>> dot(T const* row, block_vars<S, K> const& b) {
  S r = b.x[0] * detail::data_as<S>(row[0]);
  for (int k = 1; k < K; ++k) r = fmadd(b.x[k], detail::data_as<S>(row[k]), r);
  return {r, {row, b.g}};
}
template <class T, class Block>
EMBER_HD EMBER_INLINE auto dot(data_row<T> const& row, Block const& b) {
  detail::require_row_length(row.cols, Block::size());
  return dot(row.values, b);
}

/// The context a model's body runs in for its value (S plain, or dual for forward gradients).
/// With named parameters (P a `parameters<...>`), `cs` holds the constrained ones' values.
template <class S, int D, class P = no_params>
struct value_ctx {
  using scalar = S;
  static constexpr int dim = D;

  vec<S, D> const& x;
  S lp = S(0);  ///< log p accumulated so far (U = −lp); in a team, this member's part
  bool rows_open = false;  ///< inside add_rows, where a let may not be built
  team tm = team_for<S>();
  S cs[P::stored > 0 ? P::stored : 1]{};  ///< the constrained parameters' values (ad/params.hpp)

  EMBER_HD EMBER_INLINE S const& operator[](int i) const {
    static_assert(!detail::named<P>, "ember::model: a model with named parameters reads them by name (m[tau]), not by index or block");
    return x[i];
  }
  /// A named parameter, in its constrained form.
  template <class Q>
    requires detail::is_parameter<Q>
  EMBER_HD EMBER_INLINE auto operator[](Q) const {  // by value: a static constexpr handle is not odr-used (device code)
    constexpr int i = detail::param_index<P, Q>();
    S const* p = Q::is_real ? &x[P::free_offset(i)] : &cs[P::stored_offset(i)];
    return detail::param_view<Q>(block_values<S, Q::size>{p});
  }
  template <int O, int N>
  EMBER_HD EMBER_INLINE block_values<S, N> operator[](block<O, N>) const {
    static_assert(!detail::named<P>, "ember::model: a model with named parameters reads them by name (m[tau]), not by index or block");
    static_assert(O + N <= D, "ember::model: a block reaches past the model's dimension D");
    return {&x[O]};
  }

  /// log p += t.
  template <class V>
  EMBER_HD EMBER_INLINE void add(V const& t) {
    if (detail::leads(tm)) lp = lp + detail::as_scalar<S>(t);
  }
  /// log p += Σᵢ f(i) for i in [0, n), summed in blocks of rows in a fixed order.
  template <class F>
  EMBER_HD void add_rows(std::int64_t n, F const& f) {
    rows_open = true;
    lp = lp + detail::sum_rows<S>(n, [&](std::int64_t i) { return detail::as_scalar<S>(f(i)); }, tm);
    rows_open = false;
  }
  /// e^v for an unconstrained v, with the log-Jacobian v added to log p: a positive parameter.
  template <class V>
  EMBER_HD EMBER_INLINE S positive(V const& v) {
    add(v);
    return exp(detail::as_scalar<S>(v));
  }

  /// N values f(0) … f(N−1), computed once.
  template <int N, class F>
  struct let_array {
    S v[N];
    EMBER_HD let_array(value_ctx& m, F const& f) {
      detail::refuse_let_in_rows(m.rows_open);
      for (int j = 0; j < N; ++j) v[j] = detail::as_scalar<S>(f(j));
    }
    let_array(let_array const&) = delete;
    let_array& operator=(let_array const&) = delete;
    EMBER_HD EMBER_INLINE S const& operator[](int j) const& { return v[j]; }
    S const& operator[](int j) const&& = delete;
    EMBER_HD static constexpr int size() { return N; }
    /// The N values as a block, for log-densities that take vectors (`as_matrix<R, C>(let.block())`).
    EMBER_HD EMBER_INLINE block_values<S, N> block() const& { return {v}; }
  };
};

/// The context a model's body runs in for its gradient: parameters are reverse-mode leaves
/// whose adjoints are the gradient g = ∂U/∂x (zeroed before the body runs). Named constrained
/// parameters are leaves into `cs`, their adjoints `ca` mapped onto g after the body.
template <class S, int D, class P = no_params>
struct grad_ctx {
  using scalar = S;
  static constexpr int dim = D;

  vec<S, D> const& x;
  vec<S, D>& g;
  S lp = S(0);
  bool rows_open = false;
  team tm = team_for<S>();
  S cs[P::stored > 0 ? P::stored : 1]{};
  mutable S ca[P::stored > 0 ? P::stored : 1]{};  ///< their adjoints, zero before the body

  EMBER_HD EMBER_INLINE ad::var<S> operator[](int i) const {
    static_assert(!detail::named<P>, "ember::model: a model with named parameters reads them by name (m[tau]), not by index or block");
    return {x[i], {&g[i]}};
  }
  template <class Q>
    requires detail::is_parameter<Q>
  EMBER_HD EMBER_INLINE auto operator[](Q) const {  // by value: a static constexpr handle is not odr-used (device code)
    constexpr int i = detail::param_index<P, Q>();
    if constexpr (Q::is_real)
      return detail::param_view<Q>(block_vars<S, Q::size>{&x[P::free_offset(i)], &g[P::free_offset(i)]});
    else
      return detail::param_view<Q>(block_vars<S, Q::size>{&cs[P::stored_offset(i)], &ca[P::stored_offset(i)]});
  }
  template <int O, int N>
  EMBER_HD EMBER_INLINE block_vars<S, N> operator[](block<O, N>) const {
    static_assert(!detail::named<P>, "ember::model: a model with named parameters reads them by name (m[tau]), not by index or block");
    static_assert(O + N <= D, "ember::model: a block reaches past the model's dimension D");
    return {&x[O], &g[O]};
  }

  /// t's value, after t's backward pass with seed −1 (U = −log p): a term is differentiated as
  /// soon as it is built.
  template <class V>
  EMBER_HD EMBER_INLINE S take(V const& t) {
    if constexpr (ad::node<V>) {
      t.bwd(S(-1));
      return t.v;
    } else {
      return detail::as_scalar<S>(t);
    }
  }
  /// log p += t, and t's backward pass right away.
  template <class V>
  EMBER_HD EMBER_INLINE void add(V const& t) {
    if (detail::leads(tm)) lp = lp + take(t);
  }
  /// log p += Σᵢ f(i): each row's tree is built, summed and differentiated before the next.
  template <class F>
  EMBER_HD void add_rows(std::int64_t n, F const& f) {
    rows_open = true;
    lp = lp + detail::sum_rows<S>(n, [&](std::int64_t i) { return take(f(i)); }, tm);
    rows_open = false;
  }
  template <class V>
  EMBER_HD EMBER_INLINE auto positive(V const& v) {
    add(v);
    return exp(v);
  }

  template <int N, class F>
  struct let_array {
    using back_type = decltype(ad::impl::as_node<S>(std::declval<F const&>()(0)).b);
    S v[N];
    mutable S a[N];  // written through the vars operator[] hands out
    back_type back[N];
    EMBER_HD let_array(grad_ctx& m, F const& f) {
      detail::refuse_let_in_rows(m.rows_open);
      for (int j = 0; j < N; ++j) {
        auto const e = ad::impl::as_node<S>(f(j));
        v[j] = e.v;
        back[j] = e.b;
        a[j] = S(0);
      }
    }
    let_array(let_array const&) = delete;
    let_array& operator=(let_array const&) = delete;
    /// Each element's backward pass, once, with everything its uses handed back. Lanes whose
    /// adjoint is 0 (used only under a select that excluded them, or not at all) pass nothing
    /// back, so an infinite partial there never meets a zero seed.
    EMBER_HD ~let_array() {
      for (int j = 0; j < N; ++j) {
        if constexpr (std::is_same_v<mask_t<S>, bool>) {
          if (a[j] != S(0)) back[j].bwd(a[j]);
        } else {
          back[j].bwd(ad::masked_seed<S>{a[j], a[j] != S(0)});
        }
      }
    }
    EMBER_HD EMBER_INLINE ad::var<S> operator[](int j) const& { return {v[j], {&a[j]}}; }
    ad::var<S> operator[](int j) const&& = delete;  // a node into a let that is about to die
    EMBER_HD static constexpr int size() { return N; }
    EMBER_HD EMBER_INLINE block_vars<S, N> block() const& { return {v, a}; }
  };
};

/// A scalar let in a gradient context: a node of its own (its value, and a leaf into its own
/// adjoint), whose destructor hands the adjoint its uses gathered to the expression it was built
/// from, once. It also keeps 1/v and log v, computed once, for log-densities that take it as a
/// scale (normal_lpdf's σ), which would otherwise divide and take a logarithm on every row.
template <class S, class Back>
struct let_scalar {
  using ad_scalar = S;
  S v;
  ad::leaf_back<S> b;
  mutable S a;
  Back back;
  S inv, log_v;
  template <class E>
  EMBER_HD let_scalar(bool rows_open, E const& e)
      : v(e.v), b{&a}, a(S(0)), back(e.b), inv(S(1) / e.v), log_v(log(e.v)) {
    detail::refuse_let_in_rows(rows_open);
  }
  let_scalar(let_scalar const&) = delete;
  let_scalar& operator=(let_scalar const&) = delete;
  template <class Seed>
  EMBER_HD EMBER_INLINE void bwd(Seed const& s) const {
    b.bwd(s);
  }
  EMBER_HD ~let_scalar() {
    if constexpr (std::is_same_v<mask_t<S>, bool>) {
      if (a != S(0)) back.bwd(a);
    } else {
      back.bwd(ad::masked_seed<S>{a, a != S(0)});
    }
  }
};

namespace detail {
template <class T>
inline constexpr bool is_let_scalar = false;
template <class S, class Back>
inline constexpr bool is_let_scalar<let_scalar<S, Back>> = true;
}  // namespace detail

/// `let(m, v)`: one value used by many terms or rows (a shared scale σ, a common mean),
/// computed once; in reverse mode its uses add into one adjoint of its own, handed back once
/// when the let dies, and as a log-density's scale it brings 1/σ and log σ computed once.
/// `auto const sigma = ember::let(m, m.positive(m[2]));`
template <class M, class V>
EMBER_HD auto let(M& m, V const& v) {
  using S = typename M::scalar;
  if constexpr (requires { m.g; }) {
    auto const e = ad::impl::as_node<S>(v);
    return let_scalar<S, decltype(e.b)>(m.rows_open, e);
  } else {
    detail::refuse_let_in_rows(m.rows_open);
    return detail::as_scalar<S>(v);
  }
}

/// `let<N>(m, f)`: the vector f(0) … f(N−1) of a model's body, computed once and, in reverse
/// mode, differentiated once (see the file comment). Keep it in a named local:
/// `auto alpha = ember::let<48>(m, [&](int j) { return ...; });`.
template <int N, class M, class F>
EMBER_HD auto let(M& m, F const& f) -> typename M::template let_array<N, F> {
  static_assert(N > 0, "ember::let<N>: N must be positive");
  return {m, f};
}

namespace detail {

// log p of a body at x in a value context: the constrained parameters and their log-Jacobian
// first (ad/params.hpp), then the body.
template <class S, int D, class P, class Body>
EMBER_HD EMBER_INLINE S model_log_p(P const& ps, Body const& body, vec<S, D> const& x) {
  value_ctx<S, D, P> m{x};
  if constexpr (named<P>) m.add(ps.template constrain<S>(x, m.cs));
  body(m);
  return team_sum(m.tm, m.lp);
}

// The model's log-density on any scalar type, for custom_energy's duals.
template <class Body, class P>
struct model_value {
  Body body;
  P ps;
  template <class S, int D>
  EMBER_HD S operator()(vec<S, D> const& x) const {
    return -model_log_p(ps, body, x);
  }
  template <class F>
  void for_each_view(F&& f) {
    ember::for_each_view(body, f);
  }
};
}  // namespace detail

/// U(x) = −log p(x) of a model body: `value` runs it in `value_ctx`, `value_and_grad` in
/// `grad_ctx` (reverse mode). Models `DifferentiableEnergy`; composes with `+`, `c * U`, the
/// transforms and every kernel. Trivially copyable when the body is (a body holds
/// `data_view`s, never data). Built by `model<D>(body)` (parameters by index) or
/// `model<T>(params(...), body)` (named parameters, P = their `parameters<...>`: D is theirs).
template <class T, int D, class Body, class P = no_params>
struct model_energy {
  using value_type = T;
  using params_type = P;
  static constexpr int dim = D;

  Body body;
  P ps{};  ///< the named parameters (their constraints' bounds), or no_params

  // Both out of line on the host (EMBER_HOT_CALLEE, core/config.hpp): one copy of the body per
  // scalar type rather than one inlined into each fused loop, warm-up and start (under
  // ember_quick_compile's -O3 `flatten`, hier_logit's NUTS unit took 8.8 s with the copies and 6.3
  // s without; sampling time and draws unchanged, bench/results/2026-11-30-compile-time.md).
  template <class S>
  EMBER_HD EMBER_HOT_CALLEE S value(vec<S, D> const& x) const {
#if !defined(__CUDA_ARCH__)
    if (int const parts = split_parts<S>(); parts > 1)
      return split<S>(parts, nullptr, [&](vec<S, D>*) { return value(x); }, [&] { return whole_value(x); });
#endif
    return whole_value(x);
  }

  template <class S>
  EMBER_HD EMBER_HOT_CALLEE S value_and_grad(vec<S, D> const& x, vec<S, D>& g) const {
#if !defined(__CUDA_ARCH__)
    if (int const parts = split_parts<S>(); parts > 1)
      return split<S>(parts, &g, [&](vec<S, D>* gp) { return value_and_grad(x, *gp); },
                      [&] { return whole_value_and_grad(x, g); });
#endif
    return whole_value_and_grad(x, g);
  }

  /// The body's data views (energy/for_each_view.hpp), for to_device and the host/device checks.
  template <class F>
  void for_each_view(F&& f) {
    ember::for_each_view(body, f);
  }
  /// The blocks of rows a team deals out (`add_rows` splits its blocks of
  /// `detail::model_row_block` rows among a team's members), taken as those of the body's largest
  /// data view: a body that reads its data without `add_rows` gets a team that repeats its work
  /// (give it `threads_per_chain = 1`).
  std::int64_t team_blocks() const { return (dealt_rows() + detail::model_row_block - 1) / detail::model_row_block; }
  /// The rows of the body's largest data view: the rows `add_rows` deals out.
  std::int64_t dealt_rows() const {
    std::int64_t n = 0;
    // The visitor only reads: no copy of the body (which may hold more than views).
    ember::for_each_view(const_cast<Body&>(body), [&](auto const& v) { n = v.rows > n ? v.rows : n; });
    return n;
  }

 private:
  template <class S>
  EMBER_HD S whole_value(vec<S, D> const& x) const {
    return -detail::model_log_p(ps, body, x);
  }
  template <class S>
  EMBER_HD S whole_value_and_grad(vec<S, D> const& x, vec<S, D>& g) const {
    for (int i = 0; i < D; ++i) g[i] = S(0);
    grad_ctx<S, D, P> m{x, g};
    if constexpr (detail::named<P>) {
      S const lj = ps.template constrain<S>(x, m.cs);
      if (detail::leads(m.tm)) m.lp = m.lp + lj;
    }
    body(m);  // every let's destructor has run when body returns
    if constexpr (detail::named<P>) ps.constrain_backward(x, m.cs, m.ca, g, detail::leads(m.tm));
    if (m.tm.size > 1)
      for (int i = 0; i < D; ++i) g[i] = team_sum(m.tm, g[i]);
    return -team_sum(m.tm, m.lp);
  }
#if !defined(__CUDA_ARCH__)
  // The host parts of a CPU backend's split (core/team.hpp) for this evaluation: 1 unless asked.
  template <class S>
  int split_parts() const {
    return detail::host_split_requested<S>() ? detail::host_row_parts(dealt_rows()) : 1;
  }
  // The model as `parts` parts. A body whose parts called no `add_rows` (it reads its data some
  // other way) would only repeat its work in every part, while part 0 alone adds all of it: the
  // sum of the parts is then part 0's, the whole model's, bit for bit. Such a model is remembered
  // (this object, on this thread) and evaluated whole, and split again if it deals rows after all.
  template <class S, class Split, class Whole>
  S split(int parts, vec<S, D>* g, Split const& split_fn, Whole const& whole_fn) const {
    thread_local model_energy const* without_rows = nullptr;
    if (without_rows == this) {
      detail::host_rows_dealt = 0;
      S const u = whole_fn();
      if (detail::host_rows_dealt == 0) return u;
      without_rows = nullptr;
    }
    bool dealt = true;
    S const u = detail::split_rows<S, D>(parts, g, split_fn, &dealt);
    if (!dealt) without_rows = this;
    return u;
  }
#endif
};

/// `model<D>(body)` (float) or `model<D, double>(body)`: the energy −log p of a body that adds
/// log-density terms (see the file comment) and reads its D parameters by index, with
/// reverse-mode gradients.
template <int D, class T = float, class Body>
constexpr model_energy<T, D, Body> model(Body const& body) {
  static_assert(std::floating_point<T>, "ember::model<D, T>: T must be float or double");
  static_assert(D > 0, "ember::model<D>: D must be positive");
  return {body};
}

/// `model<T>(params(...), body)`: the same with named, shaped, constrained parameters
/// (ad/params.hpp); the body reads them with `m[handle]` in their constrained form and the
/// dimension is their free coordinates'.
template <class T = float, class... Q, class Body>
constexpr model_energy<T, parameters<Q...>::free_dim, Body, parameters<Q...>> model(parameters<Q...> const& ps,
                                                                                   Body const& body) {
  static_assert(std::floating_point<T>, "ember::model<T>: T must be float or double");
  return {body, ps};
}

/// `model<T>(body)` for a body that lists its parameters as a static member `params`.
template <class T = float, class Body>
  requires requires { Body::params; }
constexpr auto model(Body const& body) {
  return model<T>(Body::params, body);
}

/// The same model with forward-mode dual gradients (custom_energy's passes over the same body):
/// the oracle reverse mode is tested against, and the fallback for bodies that reverse mode
/// cannot express.
template <class T, int D, class Body, class P>
constexpr auto model_duals(model_energy<T, D, Body, P> const& U) {
  return callable_energy<T, D, detail::model_value<Body, P>>{{U.body, U.ps}};
}

}  // namespace ember
