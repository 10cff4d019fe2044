#pragma once
// Split-chain moments shared by ess and split_rhat (Gelman et al., BDA3 §11.4; Vehtari et al. 2021).

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace ember::detail {

// Each of M chains of n draws is split into two halves of h = n/2 draws (the middle draw of an
// odd n is dropped). x(c, i) is draw i of chain c. Half j = 2c + part starts at draw start(j).
template <class F>
struct split_chains {
  F const& x;
  std::int64_t chains, h, n;
  std::vector<double> mean;  // per half
  double W = 0, var_plus = 0;     // within-chain variance and the pooled estimate

  split_chains(F const& f, std::int64_t M, std::int64_t draws)
      : x(f), chains(2 * M), h(draws / 2), n(draws), mean(2 * M) {
    if (h < 2) {
      W = var_plus = std::numeric_limits<double>::quiet_NaN();
      return;
    }
    double grand = 0;
    for (std::int64_t j = 0; j < chains; ++j) {
      double m = 0, q = 0;
      for (std::int64_t i = 0; i < h; ++i) m += at(j, i);
      m /= double(h);
      for (std::int64_t i = 0; i < h; ++i) {
        double d = at(j, i) - m;
        q += d * d;
      }
      mean[j] = m;
      W += q / double(h - 1);
      grand += m;
    }
    W /= double(chains);
    grand /= double(chains);
    double B_over_h = 0;
    for (std::int64_t j = 0; j < chains; ++j) B_over_h += (mean[j] - grand) * (mean[j] - grand);
    B_over_h = chains > 1 ? B_over_h / double(chains - 1) : 0.0;
    var_plus = double(h - 1) / double(h) * W + B_over_h;
  }

  double at(std::int64_t j, std::int64_t i) const {
    std::int64_t c = j / 2;
    std::int64_t first = (j % 2 == 0) ? 0 : n - h;
    return double(x(c, first + i));
  }
};

}  // namespace ember::detail
