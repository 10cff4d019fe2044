#pragma once
/// \file
/// `energy_distance(a, b)`: Székely and Rizzo's energy distance between the laws of two point sets
/// (rows of two tables with the same number of columns),
///
///     ED = 2·E|X − Y| − E|X − X′| − E|Y − Y′|,
///
/// with Euclidean norms, the cross term over all pairs and the within-set terms over pairs i ≠ j
/// (U-statistics, so ED is unbiased; it can come out slightly negative when the laws agree). It is
/// 0 exactly when the laws are equal, and needs no kernel or bandwidth: how issue 29 measures a
/// trained energy's samples against held-out data. O(n·m·d) work, in double.

#include <ember/data/data_view.hpp>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace ember {

template <class T>
double energy_distance(data_view<T> a, data_view<T> b) {
  if (a.cols != b.cols) throw std::invalid_argument("ember::energy_distance: points of " + std::to_string(a.cols) + " and " + std::to_string(b.cols) + " coordinates");
  if (a.rows < 2 || b.rows < 2) throw std::invalid_argument("ember::energy_distance: needs at least two points in each set");
  auto const mean_distance = [&](data_view<T> p, data_view<T> q, bool same) {
    double s = 0;
    for (std::int64_t i = 0; i < p.rows; ++i)
      for (std::int64_t j = same ? i + 1 : 0; j < q.rows; ++j) {
        double d2 = 0;
        for (int k = 0; k < p.cols; ++k) {
          double const t = double(p(i, k)) - double(q(j, k));
          d2 += t * t;
        }
        s += std::sqrt(d2);
      }
    return same ? 2 * s / (double(p.rows) * double(p.rows - 1)) : s / (double(p.rows) * double(q.rows));
  };
  return 2 * mean_distance(a, b, false) - mean_distance(a, a, true) - mean_distance(b, b, true);
}

}  // namespace ember
