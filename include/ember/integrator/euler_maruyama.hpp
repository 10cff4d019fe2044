#pragma once
/// \file
/// Euler–Maruyama for the overdamped Langevin SDE dx = −∇U(x) dt + √2 dW: one step of size η is
/// x' = x − η∇U(x) + √(2η) ξ with ξ ~ N(0, I). It is ULA's transition and MALA's proposal.

#include <ember/core/config.hpp>
#include <ember/core/math.hpp>
#include <ember/core/vec.hpp>

namespace ember {

/// x − η g + σ ξ, where the caller passes σ = √(2η) precomputed.
template <class S, int D>
EMBER_HD EMBER_INLINE vec<S, D> euler_maruyama(vec<S, D> const& x, vec<S, D> const& g,
                                               vec<S, D> const& xi, element_t<S> eta,
                                               element_t<S> sigma) {
  vec<S, D> y;
  for (int i = 0; i < D; ++i) y[i] = x[i] - S(eta) * g[i] + S(sigma) * xi[i];
  return y;
}

}  // namespace ember
