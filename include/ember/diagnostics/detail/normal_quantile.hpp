#pragma once
// Φ⁻¹, the standard normal quantile, for rank normalisation.

#include <cmath>
#include <limits>
#include <numbers>

namespace ember::detail {

// Φ⁻¹(p) for 0 < p < 1: P. J. Acklam's rational approximations (relative error below 1.2e-9; a
// central one for 0.02425 ≤ p ≤ 0.97575, one in q = √(−2 log p) for the tails), then one Halley
// step on Φ(x) − p with Φ(x) = erfc(−x/√2)/2, which brings it to double precision.
inline double normal_quantile(double p) {
  if (!(p > 0 && p < 1)) return p == 0 ? -std::numeric_limits<double>::infinity()
                                : p == 1 ? std::numeric_limits<double>::infinity()
                                         : std::numeric_limits<double>::quiet_NaN();
  constexpr double a1 = -3.969683028665376e+01, a2 = 2.209460984245205e+02, a3 = -2.759285104469687e+02,
                   a4 = 1.383577518672690e+02, a5 = -3.066479806614716e+01, a6 = 2.506628277459239e+00;
  constexpr double b1 = -5.447609879822406e+01, b2 = 1.615858368580409e+02, b3 = -1.556989798598866e+02,
                   b4 = 6.680131188771972e+01, b5 = -1.328068155288572e+01;
  constexpr double c1 = -7.784894002430293e-03, c2 = -3.223964580411365e-01, c3 = -2.400758277161838e+00,
                   c4 = -2.549732539343734e+00, c5 = 4.374664141464968e+00, c6 = 2.938163982698783e+00;
  constexpr double d1 = 7.784695709041462e-03, d2 = 3.224671290700398e-01, d3 = 2.445134137142996e+00,
                   d4 = 3.754408661907416e+00;
  constexpr double p_low = 0.02425;
  double x;
  if (p < p_low || p > 1 - p_low) {
    double q = std::sqrt(-2 * std::log(p < p_low ? p : 1 - p));
    x = (((((c1 * q + c2) * q + c3) * q + c4) * q + c5) * q + c6) / ((((d1 * q + d2) * q + d3) * q + d4) * q + 1);
    if (p > p_low) x = -x;
  } else {
    double q = p - 0.5, r = q * q;
    x = (((((a1 * r + a2) * r + a3) * r + a4) * r + a5) * r + a6) * q /
        (((((b1 * r + b2) * r + b3) * r + b4) * r + b5) * r + 1);
  }
  // Halley: e = Φ(x) − p, u = e/φ(x); x ← x − u/(1 + x·u/2). The error is taken on the smaller
  // tail so it keeps its relative precision.
  double e = p < 0.5 ? 0.5 * std::erfc(-x / std::numbers::sqrt2) - p : (1 - p) - 0.5 * std::erfc(x / std::numbers::sqrt2);
  double u = e * std::sqrt(2 * std::numbers::pi) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

}  // namespace ember::detail
