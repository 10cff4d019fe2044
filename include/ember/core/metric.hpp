#pragma once
/// \file
/// Metrics (mass matrices) of the gradient kernels, as a factor L of the inverse mass matrix:
/// M⁻¹ = L Lᵀ. HMC then draws its momentum in whitened form v ~ N(0, I) (p = L⁻ᵀ v), kicks
/// v ← v − h Lᵀ∇U, drifts x ← x + h L v and counts kinetic energy ½|v|²; MALA proposes
/// x' = x − η L Lᵀ∇U + √(2η) L ξ. No solve is ever needed, only L and Lᵀ applied to vectors.
///  - `identity_metric`: M = I;
///  - `scalar_metric`: M = m I, L = I/√m (ember's default, one multiply folded into the step);
///  - `diagonal_metric`: L = diag(s), so M⁻¹ = diag(s²) (s are the target's standard deviations
///    when adapted);
///  - `dense_metric`: L lower triangular, the Cholesky factor of the target's covariance;
///  - `auto_metric`: a diagonal or a dense one, which of the two decided at run time (a warm-up's
///    `auto_mass()` decides at each window); the choice is one flag for every chain, so a SIMD
///    batch or a warp never diverges on it.
/// Each is a small value that travels with the kernel (dense: D(D+1)/2 numbers).

#include <ember/core/config.hpp>
#include <ember/core/vec.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace ember {

/// M = I: nothing to apply (MALA's default, so its hot loop has no extra multiply).
struct identity_metric {
  template <class S, int D>
  EMBER_HD EMBER_INLINE vec<S, D> const& apply(vec<S, D> const& v) const {
    return v;
  }
  template <class S, int D>
  EMBER_HD EMBER_INLINE vec<S, D> const& apply_transpose(vec<S, D> const& g) const {
    return g;
  }
  void validate(char const*) const {}
};

/// M = m·I, stored as L = 1/√m.
template <class T>
struct scalar_metric {
  T scale = T(1);  ///< 1/√m

  template <class S, int D>
  EMBER_HD EMBER_INLINE vec<S, D> apply(vec<S, D> const& v) const {
    vec<S, D> r;
    for (int i = 0; i < D; ++i) r[i] = S(scale) * v[i];
    return r;
  }
  template <class S, int D>
  EMBER_HD EMBER_INLINE vec<S, D> apply_transpose(vec<S, D> const& g) const {
    return apply(g);
  }
  void validate(char const* who) const {
    if (!(scale > 0) || !std::isfinite(double(scale)))
      throw std::invalid_argument(std::string(who) + ": the mass must be positive and finite");
  }
};

/// M⁻¹ = diag(s₁², …, s_D²): L = diag(s).
template <class T, int D>
struct diagonal_metric {
  vec<T, D> scale;

  template <class S>
  EMBER_HD EMBER_INLINE vec<S, D> apply(vec<S, D> const& v) const {
    vec<S, D> r;
    for (int i = 0; i < D; ++i) r[i] = S(scale[i]) * v[i];
    return r;
  }
  template <class S>
  EMBER_HD EMBER_INLINE vec<S, D> apply_transpose(vec<S, D> const& g) const {
    return apply(g);
  }
  void validate(char const* who) const {
    for (int i = 0; i < D; ++i)
      if (!(scale[i] > 0) || !std::isfinite(double(scale[i])))
        throw std::invalid_argument(std::string(who) + ": the diagonal metric's scale " + std::to_string(i) +
                                    " must be positive and finite");
  }
};

/// M⁻¹ = L Lᵀ with L lower triangular, stored row by row: L(i, j) = lower[i(i+1)/2 + j], j ≤ i.
template <class T, int D>
struct dense_metric {
  static_assert(D <= 64, "ember::dense_metric is for dimensions up to 64; use a diagonal metric above that");
  T lower[D * (D + 1) / 2];

  EMBER_HD EMBER_INLINE T operator()(int i, int j) const { return lower[i * (i + 1) / 2 + j]; }

  /// L v.
  template <class S>
  EMBER_HD EMBER_INLINE vec<S, D> apply(vec<S, D> const& v) const {
    vec<S, D> r;
    for (int i = 0; i < D; ++i) {
      S a = S(T(0));
      for (int j = 0; j <= i; ++j) a = a + S((*this)(i, j)) * v[j];
      r[i] = a;
    }
    return r;
  }
  /// Lᵀ g.
  template <class S>
  EMBER_HD EMBER_INLINE vec<S, D> apply_transpose(vec<S, D> const& g) const {
    vec<S, D> r;
    for (int j = 0; j < D; ++j) {
      S a = S(T(0));
      for (int i = j; i < D; ++i) a = a + S((*this)(i, j)) * g[i];
      r[j] = a;
    }
    return r;
  }
  static dense_metric identity() {
    dense_metric m{};
    for (int i = 0; i < D; ++i) m.lower[i * (i + 1) / 2 + i] = T(1);
    return m;
  }
  void validate(char const* who) const {
    for (int i = 0; i < D; ++i)
      if (!((*this)(i, i) > 0) || !std::isfinite(double((*this)(i, i))))
        throw std::invalid_argument(std::string(who) + ": the dense metric's Cholesky factor must have a positive, "
                                    "finite diagonal (entry " + std::to_string(i) + ")");
  }
};

/// A diagonal or a dense metric, chosen at run time: `dense` (0 or 1) says which of the two
/// members applies. What `auto_mass()` adapts (adapt/mass.hpp). The flag is an integer, not a
/// bool: checkpoints read it back from a file's bytes. Compared member by member (`==`), since a
/// float metric of odd size ends in padding.
template <class T, int D>
struct auto_metric {
  std::int64_t dense = 0;
  diagonal_metric<T, D> diagonal;
  dense_metric<T, D> full;

  friend bool operator==(auto_metric const& a, auto_metric const& b) {
    return a.dense == b.dense && std::memcmp(a.diagonal.scale.v, b.diagonal.scale.v, sizeof a.diagonal.scale.v) == 0 &&
           std::memcmp(a.full.lower, b.full.lower, sizeof a.full.lower) == 0;
  }

  template <class S>
  EMBER_HD EMBER_INLINE vec<S, D> apply(vec<S, D> const& v) const {
    return dense ? full.apply(v) : diagonal.apply(v);
  }
  template <class S>
  EMBER_HD EMBER_INLINE vec<S, D> apply_transpose(vec<S, D> const& g) const {
    return dense ? full.apply_transpose(g) : diagonal.apply_transpose(g);
  }
  static auto_metric identity() {
    auto_metric m;
    for (int i = 0; i < D; ++i) m.diagonal.scale[i] = T(1);
    m.full = dense_metric<T, D>::identity();
    return m;
  }
  void validate(char const* who) const {
    if (dense)
      full.validate(who);
    else
      diagonal.validate(who);
  }
};

}  // namespace ember
