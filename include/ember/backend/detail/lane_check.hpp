#pragma once
// Before a run on SIMD batches: the energy must give each chain of a batch what it gives that
// chain alone. A branch on a comparison of coordinates (`if (x[0] < 0)`, `c ? a : b`) compiles on
// AVX-512, where a batch's mask converts to an integer and so to `bool` meaning "any lane", and
// then every chain of the batch takes the branch if one does: draws from the wrong distribution,
// silently (issue 26: E x₁ 0.543 against 0.798). No type rule can refuse that without wrapping
// xsimd's types, so the run checks it: the energy at W points (a fixed draw of N(0, 4I), half of
// its lanes negated so that sign tests split the batch; ember's Philox under a fixed key) on one batch, against each point alone.
// Values differ between the paths only by rounding (xsimd's exp against <cmath>'s); a difference
// above √ε·(1 + |U|) in any lane whose scalar energy is finite is refused with one sentence.

#include <ember/core/rng.hpp>
#include <ember/core/simd.hpp>
#include <ember/core/vec.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

namespace ember::detail {

#if !defined(__CUDACC__)
template <class E>
void require_lanes_independent(E const& U, char const* who) {
  using T = typename E::value_type;
  constexpr int D = E::dim, W = scalar_traits<simd_batch<T>>::width;
  if constexpr (W > 1) {
    using B = simd_batch<T>;
    alignas(64) T lanes[D][W];
    vec<T, D> alone[W];
    // Fixed points from ember's own generator (Philox under a constant key, one stream per lane,
    // independent of the run's seed), scaled by 2, with signs flipped in a pattern so that a sign
    // test splits the batch.
    for (int w = 0; w < W; ++w) {
      auto const n = make_chain_rng<T>(0x656d6265725f6c61ull, std::uint32_t(w), 0).template normal<D, false>(purpose::init);
      for (int d = 0; d < D; ++d) {
        T const v = T(2) * n[d] * T((w % 2 ? -1 : 1) * (d % 2 ? -1 : 1) * (w % 4 < 2 ? 1 : -1));
        lanes[d][w] = v;
        alone[w][d] = v;
      }
    }
    vec<B, D> x;
    for (int d = 0; d < D; ++d) x[d] = B::load_aligned(lanes[d]);
    // With a gradient where the energy has one (a random-walk kernel's may not).
    constexpr bool grad = requires(E const& e, vec<B, D> const& xx, vec<B, D>& g) { e.value_and_grad(xx, g); };
    alignas(64) T batch_u[W];
    if constexpr (grad) {
      vec<B, D> g;  // the value of the gradient path, which the samplers run
      U.value_and_grad(x, g).store_aligned(batch_u);
    } else {
      U.value(x).store_aligned(batch_u);
    }
    double const tol = std::sqrt(double(std::numeric_limits<T>::epsilon()));
    for (int w = 0; w < W; ++w) {
      vec<T, D> gs{};
      double u;
      if constexpr (grad)
        u = double(U.value_and_grad(alone[w], gs));
      else
        u = double(U.value(alone[w]));
      double const b = double(batch_u[w]);
      if (!std::isfinite(u)) continue;
      // The value only: a branch shows there, and a gradient's rounding can be far larger than its
      // own size (a Gaussian process's Cholesky solve in posteriordb's gp_pois_regr differed by
      // more than √ε(1 + |g|) between the paths, with equal values).
      bool const same = std::abs(u - b) <= tol * (1 + std::abs(u));
      if (!same) {
        char msg[700];
        std::snprintf(msg, sizeof msg,
                      "%s: the energy gives a chain in a SIMD batch of %d another value than the same chain alone "
                      "(lane %d: energy %.6g in the batch, %.6g alone): it branches on a comparison of coordinates "
                      "(`if (x[0] < 0)` or `c ? a : b`), which on a batch tests whether any chain's comparison holds; "
                      "write select(x[0] < 0, a, b) so that each chain takes its own branch",
                      who, W, w, b, u);
        throw std::invalid_argument(msg);
      }
    }
  }
}
#endif

}  // namespace ember::detail
