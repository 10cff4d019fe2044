#pragma once
// Checks a sampled run against a target's shipped reference moments.
//
// One draw per chain (the final state, mapped by the target's `reported`), so the n draws of a
// statistic are independent and its effective sample size is n: the standard error of a mean of
// f is the sample sd of f over √n. The z-score of E[f] against the reference combines both errors:
// z = (m − ref) / √(se² + se_ref²). A check passes when |z| < 5 for every coordinate and both
// moments (2D z-scores: with D = 100 a false failure has probability about 1e-4 per run, and the
// seeds are fixed).
#include <ember/targets/reference.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

namespace ember_test {

// `skip_second(d)`: coordinates whose second moment is too heavy-tailed for a z-test (the sample
// variance of x² is then itself unreliable); the caller checks something else there.
template <class Target, class R, class Skip = bool (*)(int)>
void check_target_moments(Target const& t, R const& r, Skip skip_second = [](int) { return false; }) {
  double const z_bound = 5;
  constexpr int D = Target::dim;
  auto ref = t.reference();
  REQUIRE(r.divergent_chains() == 0);
  std::int64_t n = r.chains();
  std::vector<double> x(std::size_t(n) * D);
  for (std::int64_t c = 0; c < n; ++c) {
    auto v = t.reported(r.final_state(c));
    for (int d = 0; d < D; ++d) x[std::size_t(c) * D + std::size_t(d)] = v[d];
  }
  double worst = 0;
  for (int d = 0; d < D; ++d)
    for (int p = 1; p <= 2; ++p) {
      if (p == 2 && skip_second(d)) continue;
      double s = 0, q = 0;
      for (std::int64_t c = 0; c < n; ++c) s += std::pow(x[std::size_t(c) * D + std::size_t(d)], p);
      double m = s / double(n);
      for (std::int64_t c = 0; c < n; ++c) q += std::pow(std::pow(x[std::size_t(c) * D + std::size_t(d)], p) - m, 2);
      double se = std::sqrt(q / double(n - 1) / double(n));
      double truth = p == 1 ? ref.mean[std::size_t(d)] : ref.second[std::size_t(d)];
      double se_ref = p == 1 ? ref.mean_se[std::size_t(d)] : ref.second_se[std::size_t(d)];
      double z = (m - truth) / std::sqrt(se * se + se_ref * se_ref);
      worst = std::max(worst, std::abs(z));
      INFO("coordinate " << d << ", E[x^" << p << "] = " << m << " +- " << se << ", reference " << truth << " +- "
                         << se_ref << " (" << ref.method << "), z = " << z);
      CHECK(std::abs(z) < z_bound);
    }
  WARN("largest |z| over " << 2 * D << " moments: " << worst);
}

}  // namespace ember_test
