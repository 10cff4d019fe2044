#pragma once
// Host-side checks of kernel parameters, run when a kernel is built and again by sample().

#include <ember/energy/detail/check.hpp>

#include <cmath>
#include <stdexcept>
#include <string>

namespace ember::detail {

inline void require_step_size(double eta, char const* who) {
  if (std::isnan(eta))
    throw std::invalid_argument(std::string(who) + ": the step size must be positive and finite, got nan "
                                "(give .step_size, or adapt it with | warmup(n, step_size()))");
  if (!(eta > 0) || !std::isfinite(eta))
    throw std::invalid_argument(std::string(who) + ": the step size must be positive and finite, got " +
                                number_g(eta));
}

/// The energy error above which a Metropolis kernel reports a transition as divergent (HMC's and
/// adjusted underdamped Langevin's ΔH, MALA's −log r): positive, infinity switching it off.
inline void require_divergence_threshold(double threshold, char const* who) {
  if (!(threshold > 0))
    throw std::invalid_argument(std::string(who) + ": the divergence threshold must be positive (infinity disables it)");
}

}  // namespace ember::detail
