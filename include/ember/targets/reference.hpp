#pragma once
/// \file
/// `reference_moments<D>`: what every target in ember/targets/ ships with. Per coordinate i of the
/// target's *reported* parameters (its `reported(x)` map of a sampled state; the identity unless
/// the target is sampled in transformed coordinates): E[xᵢ] and E[xᵢ²], and the reference's own
/// Monte-Carlo standard errors, 0 where the values are exact (closed form or quadrature whose
/// error is below 1e-7). A sampler's estimate m of E[f] from n effective draws agrees with the
/// reference when |m − ref| / √(se_sampler² + se_ref²) is small (tests use |z| < 5).

#include <array>

namespace ember::targets {

/// Reference E[xᵢ], E[xᵢ²] and their standard errors (0: exact), with how they were obtained.
template <int D>
struct reference_moments {
  std::array<double, D> mean{}, second{};
  std::array<double, D> mean_se{}, second_se{};
  char const* method = "";
};

}  // namespace ember::targets
