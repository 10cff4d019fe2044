#pragma once
/// \file
/// `split_rhat`: the split-chain potential scale reduction factor R̂ = √(var⁺ / W), where W is the
/// mean within-half variance and var⁺ = (h−1)/h · W + B/h pools it with the variance between
/// half-chain means (Gelman et al., BDA3 §11.4). Near 1 when the chains agree; above 1.01 is a
/// warning sign. Host only.

#include <ember/diagnostics/detail/split_chains.hpp>

#include <cmath>
#include <cstdint>

namespace ember {

/// R̂ of one scalar quantity; `x(c, i)` is draw i of chain c, for `chains` chains of `draws`
/// draws. NaN when there are fewer than 4 draws or no within-chain variance.
template <class F>
double split_rhat(F const& x, std::int64_t chains, std::int64_t draws) {
  detail::split_chains<F> s(x, chains, draws);
  return std::sqrt(s.var_plus / s.W);
}

}  // namespace ember
