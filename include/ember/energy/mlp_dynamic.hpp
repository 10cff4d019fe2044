#pragma once
/// \file
/// `mlp<T, In, Act, dynamic>`: the neural energy of energy/mlp.hpp with its hidden layers (how
/// many, how wide) taken from the weights at run time instead of from the type. One compiled
/// sampler then serves every network of input width `In`; with `nn::any` as its activation
/// (energy/activation.hpp), every activation too. That is what a compiled module needs (the
/// Python package's `ember.nn`, which cannot compile a new shape on the user's machine).
///
/// The arithmetic is the compile-time network's: each layer's outputs `block` at a time in
/// registers over a SIMD batch of chains (each weight broadcast once per batch), backwards its
/// inputs `block` at a time, the activations' slopes kept from the forward pass; the same sums
/// in the same order, so the two give the same bits for the same weights. What changes is that
/// the loops' lengths are variables and the activations live in a per-thread scratch buffer
/// (grown on first use) instead of arrays the compiler sizes. bench/mlp_langevin.cpp measures
/// the difference (bench/results/2026-11-30-mlp-dynamic.md); docs/neural.md says which to take.
/// (The blocked loops below are energy/mlp.hpp's with the trip counts as arguments; they are kept
/// apart because those also run on GPUs, where a change of their code could not be measured here.)
///
/// CPU only (host code: backend::cpu and backend::scalar); a GPU run takes the compile-time
/// network, whose team layout needs its widths at compile time. Sampling only: training
/// (train/, `add_param_grad`) takes the compile-time network too.

#include <ember/energy/mlp.hpp>

#if !defined(__CUDACC__)

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace ember {

/// The hidden-widths argument of `mlp` that takes them from the weights at run time.
inline constexpr int dynamic = -1;

template <class T, int In, class Act>
struct mlp<T, In, Act, dynamic> {
  static_assert(std::floating_point<T>, "ember::mlp's value type must be float or double");
  static_assert(In > 0, "ember::mlp's input width must be positive");
  static_assert(nn::activation_for<Act, T>,
                "ember::mlp's activation must have value(a) and value_and_slope(a, d), as those in ember::nn (energy/activation.hpp)");

  using value_type = T;
  using activation_type = Act;
  static constexpr int dim = In;
  /// Outputs computed together in a layer's forward pass (inputs in its backward pass).
  static constexpr int block = 8;
  /// The most hidden layers a network may have.
  static constexpr int max_depth = 32;

  T const* theta = nullptr;           ///< the weights' parameters (W₀, b₀, W₁, b₁, …)
  int depth = 0;                      ///< hidden layers; layer `depth` is the output layer
  int width[max_depth + 2] = {};      ///< widths of h₀ = x, h₁, …, h_L and the output (1)
  std::size_t offset[max_depth + 1] = {};  ///< where layer l's weight starts in theta (its bias follows)
  int max_hidden = 0, hidden_total = 0;
  Act act{};
  bool skip = false;

  /// Views the layers of `w`: any number (1 to `max_depth`) of hidden layers of any widths, an
  /// input of `In` and one output. One sentence per mismatch, all of them in one
  /// std::invalid_argument.
  explicit mlp(mlp_weights<T> const& w, mlp_options const& o = {}, Act a = {}) : act(a), skip(o.skip) {
    auto const& ls = w.layers();
    std::string err;
    int const L = int(ls.size()) - 1;
    if (L < 1)
      err += "the weights have " + std::to_string(ls.size()) + (ls.size() == 1 ? " layer" : " layers") +
             "; a network needs at least one hidden layer and the output.";
    if (L > max_depth)
      err += std::string(err.empty() ? "" : " ") + "The weights have " + std::to_string(L) + " hidden layers; at most " +
             std::to_string(max_depth) + " are supported.";
    if (!ls.empty() && ls.front().in != In)
      err += std::string(err.empty() ? "" : " ") + "Layer 0 ('" + ls.front().name + "') takes " + std::to_string(ls.front().in) +
             " inputs; this network's input width is " + std::to_string(In) + ".";
    if (!ls.empty() && ls.back().out != 1)
      err += std::string(err.empty() ? "" : " ") + "The last layer ('" + ls.back().name + "') has " + std::to_string(ls.back().out) +
             " outputs; an energy has one.";
    if (!err.empty()) throw std::invalid_argument("ember::mlp: " + err);
    theta = w.parameters().data();
    depth = L;
    width[0] = In;
    for (int l = 0; l <= L; ++l) {
      width[l + 1] = ls[std::size_t(l)].out;
      offset[l] = ls[std::size_t(l)].weight;
    }
    for (int l = 1; l <= L; ++l) max_hidden = std::max(max_hidden, width[l]), hidden_total += width[l];
  }

  /// The number of parameters, Σₗ (width[l+1]·width[l] + width[l+1]).
  std::size_t parameters() const {
    std::size_t p = 0;
    for (int l = 0; l <= depth; ++l) p += std::size_t(width[l + 1]) * std::size_t(width[l] + 1);
    return p;
  }

  /// U(x): the forward pass.
  template <class S>
  EMBER_HOT_CALLEE S value(vec<S, In> const& x) const {
    S* const buf = scratch<S>(2 * std::size_t(max_hidden));
    S const* in = x.v;
    for (int l = 0; l < depth; ++l) {
      S* const out = buf + std::size_t(l % 2) * std::size_t(max_hidden);
      forward<false>(l, in, out, static_cast<S*>(nullptr));
      in = out;
    }
    return output(in);
  }

  /// U(x) and ∇U(x): the forward pass keeping each activation's slope, then backpropagation.
  template <class S>
  EMBER_HOT_CALLEE S value_and_grad(vec<S, In> const& x, vec<S, In>& g) const {
    std::size_t const H = std::size_t(max_hidden);
    S* const buf = scratch<S>(3 * H + std::size_t(hidden_total));  // two layers' values, ∂/∂a, the slopes
    S* const ga = buf + 2 * H;
    S* const slope = buf + 3 * H;  // φ′ of every hidden unit, layer by layer
    S const* in = x.v;
    std::size_t at = 0;
    for (int l = 0; l < depth; ++l) {
      S* const out = buf + std::size_t(l % 2) * H;
      forward<true>(l, in, out, slope + at);
      in = out;
      at += std::size_t(width[l + 1]);
    }
    S const u = output(in);
    // ∂U/∂h_L = w_out (into the buffer h_L no longer needs); then through each hidden layer from the last.
    S* gh = buf + std::size_t((depth - 1) % 2) * H;
    S* other = buf + std::size_t(depth % 2) * H;
    T const* wo = theta + offset[depth];
    for (int j = 0; j < width[depth]; ++j) gh[j] = S(wo[j]);
    for (int l = depth - 1; l >= 0; --l) {
      int const O = width[l + 1], I = width[l];
      at -= std::size_t(O);
      for (int k = 0; k < O; ++k) ga[k] = gh[k] * slope[at + std::size_t(k)];
      S* const gin = l == 0 ? g.v : other;
      affine_back(theta + offset[l], ga, gin, O, I);
      if (skip && can_skip(l))
        for (int j = 0; j < I; ++j) gin[j] = gin[j] + gh[j];
      other = gh;
      gh = gin;
    }
    return u;
  }

 private:
  // Per thread and scalar type: a buffer of at least n values, kept between calls.
  template <class S>
  static S* scratch(std::size_t n) {
    thread_local std::vector<S> v;
    if (v.size() < n) v.resize(n);
    return v.data();
  }

  bool can_skip(int l) const { return l > 0 && l < depth && width[l + 1] == width[l]; }

  // Hidden layer l: out[k] = φ(Wₗ in + bₗ)[k] (+ in[k] with a skip), keeping φ′ in slope if asked.
  template <bool slopes, class S>
  EMBER_INLINE void forward(int l, S const* in, S* out, S* slope) const {
    int const O = width[l + 1], I = width[l];
    T const* w = theta + offset[l];
    affine(w, w + std::size_t(O) * std::size_t(I), in, out, O, I);
    nn::activate_layer<slopes>(act, out, slope, O);
    if (skip && can_skip(l))
      for (int k = 0; k < O; ++k) out[k] = out[k] + in[k];
  }

  template <class S>
  EMBER_INLINE S output(S const* h) const {
    int const I = width[depth];
    T const* w = theta + offset[depth];
    S u;
    affine(w, w + I, h, &u, 1, I);
    return u;
  }

  // f(std::integral_constant<int, r>) for the remainder r in 1 … block − 1 (nothing for 0).
  template <class F>
  EMBER_INLINE static void remainder(int r, F&& f) {
    [&]<int... R>(std::integer_sequence<int, R...>) {
      ((r == R + 1 ? f(std::integral_constant<int, R + 1>{}) : void()), ...);
    }(std::make_integer_sequence<int, block - 1>{});
  }

  // a = W h + b for an O × I weight, outputs `block` at a time.
  template <class S>
  EMBER_INLINE static void affine(T const* w, T const* b, S const* h, S* a, int O, int I) {
    int const full = O / block * block;
    for (int k = 0; k < full; k += block) affine_rows<block>(w + std::size_t(k) * std::size_t(I), b + k, h, a + k, I);
    remainder(O - full, [&](auto r) { affine_rows<decltype(r)::value>(w + std::size_t(full) * std::size_t(I), b + full, h, a + full, I); });
  }
  template <int R, class S>
  EMBER_INLINE static void affine_rows(T const* w, T const* b, S const* h, S* a, int I) {
    S acc[R];
    EMBER_UNROLL
    for (int r = 0; r < R; ++r) acc[r] = S(b[r]);
    for (int j = 0; j < I; ++j) {
      S const hj = h[j];
      EMBER_UNROLL
      for (int r = 0; r < R; ++r) acc[r] = S(w[std::size_t(r) * std::size_t(I) + std::size_t(j)]) * hj + acc[r];
    }
    EMBER_UNROLL
    for (int r = 0; r < R; ++r) a[r] = acc[r];
  }
  // gin = Wᵀ ga for an O × I weight, inputs `block` at a time.
  template <class S>
  EMBER_INLINE static void affine_back(T const* w, S const* ga, S* gin, int O, int I) {
    int const full = I / block * block;
    for (int j = 0; j < full; j += block) affine_cols<block>(w + j, ga, gin + j, O, I);
    remainder(I - full, [&](auto r) { affine_cols<decltype(r)::value>(w + full, ga, gin + full, O, I); });
  }
  template <int R, class S>
  EMBER_INLINE static void affine_cols(T const* w, S const* ga, S* gin, int O, int I) {
    S acc[R];
    EMBER_UNROLL
    for (int r = 0; r < R; ++r) acc[r] = S(T(0));
    for (int k = 0; k < O; ++k) {
      S const gk = ga[k];
      EMBER_UNROLL
      for (int r = 0; r < R; ++r) acc[r] = S(w[std::size_t(k) * std::size_t(I) + std::size_t(r)]) * gk + acc[r];
    }
    EMBER_UNROLL
    for (int r = 0; r < R; ++r) gin[r] = acc[r];
  }
};

}  // namespace ember

#endif  // !defined(__CUDACC__)
