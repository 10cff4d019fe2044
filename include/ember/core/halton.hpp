#pragma once
/// \file
/// `halton(n, base)`: the van der Corput radical inverse of n in `base`, in [0, 1): the digits
/// of n in that base mirrored behind the point. Successive n fill [0, 1) evenly (a
/// low-discrepancy sequence), which is why jittered HMC and ChEES use it for the per-transition
/// step-size and trajectory-length factors: the factor is the same for every chain at a given
/// transition (so SIMD lanes and warps run the same number of integrator steps), yet it covers
/// its range far more evenly than independent draws would.

#include <ember/core/config.hpp>

#include <cstdint>

namespace ember {

/// Σ dₖ b^{−k−1} where n = Σ dₖ bᵏ.
EMBER_HD inline double halton(std::uint64_t n, std::uint32_t base) {
  double r = 0, f = 1.0 / base;
  while (n > 0) {
    r += f * double(n % base);
    n /= base;
    f /= base;
  }
  return r;
}

}  // namespace ember
