#pragma once
/// \file
/// `ess`: the multi-chain effective sample size of Stan (Vehtari et al. 2021, without rank
/// normalisation), on split chains. The autocorrelation at lag t pools all chains,
/// ρ_t = 1 − (W − mean_j γ_j(t)) / var⁺, and is summed with Geyer's initial monotone sequence:
/// pairs ρ_{2k} + ρ_{2k+1} are added while positive and forced non-increasing.
/// ESS = (chains · draws) / τ with τ = −1 + 2 Σ pairs. Host only; the cost is
/// chains × draws per lag, and lags stop where the pairs turn negative.

#include <ember/diagnostics/detail/split_chains.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace ember {

/// ESS of one scalar quantity; `x(c, i)` is draw i of chain c. NaN with fewer than 4 draws.
template <class F>
double ess(F const& x, std::int64_t chains, std::int64_t draws) {
  detail::split_chains<F> s(x, chains, draws);
  if (!(s.W > 0) || !std::isfinite(s.var_plus)) return std::numeric_limits<double>::quiet_NaN();
  auto rho = [&](std::int64_t t) {
    double g = 0;
    for (std::int64_t j = 0; j < s.chains; ++j) {
      double a = 0;
      for (std::int64_t i = 0; i + t < s.h; ++i) a += (s.at(j, i) - s.mean[j]) * (s.at(j, i + t) - s.mean[j]);
      g += a / double(s.h);
    }
    g /= double(s.chains);
    return 1.0 - (s.W - g) / s.var_plus;
  };
  double total = static_cast<double>(s.chains) * static_cast<double>(s.h);
  double tau = -1.0, prev_pair = std::numeric_limits<double>::infinity();
  for (std::int64_t t = 0; t + 1 < s.h; t += 2) {
    double pair = rho(t) + rho(t + 1);
    if (!(pair > 0)) break;
    pair = std::min(pair, prev_pair);
    prev_pair = pair;
    tau += 2 * pair;
  }
  tau = std::max(tau, 1.0 / std::log10(total));  // Stan's cap: ESS ≤ N log10 N
  return total / tau;
}

}  // namespace ember
