#pragma once
/// \file
/// TorchEBM's 2-D toy data sets (`torchebm.datasets`, 0.8.9), generated from ember's counter-based
/// random numbers: point i of a set is a function of (seed, i) only, so a set is the same on every
/// machine and for any thread count, and a held-out set is the same call with another seed. Each
/// returns a `dataset<T>` of n × 2 points, with TorchEBM's defaults:
///  - `gaussian_ring`: K Gaussians (std 0.05) centred on a circle of radius 1 (GaussianMixtureDataset);
///  - `eight_gaussians`: eight Gaussians (std 0.02) at (±1, 0), (0, ±1), (±1, ±1)/√2, times 2;
///  - `two_moons`: the outer arc (cos t, sin t) and the inner (1 − cos t, ½ − sin t), t evenly
///    spaced on [0, π], plus noise 0.05;
///  - `swiss_roll`: (t cos t, t sin t), t = 3π(1 + 2u), plus noise 0.05, centred and divided by
///    twice the mean of the two columns' standard deviations;
///  - `circle`: radius 1 at a uniform angle, plus noise 0.05;
///  - `checkerboard`: uniform on the squares of [−4, 4]² whose floor(x) + floor(y) is odd;
///  - `pinwheel`: 5 spiral arms, r = 2√u, angle 2πc/5 + 5√u + 0.1·N, plus noise 0.05.
/// Component k of the mixtures holds points i ≡ k (mod K): counts as TorchEBM's (the first n mod K
/// components one more), in another order, which batches drawn at random do not see.

#include <ember/core/rng.hpp>
#include <ember/data/dataset.hpp>

#include <cmath>
#include <concepts>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ember::toy {

namespace detail {
inline constexpr double pi = 3.14159265358979323846;
// Point i's random numbers: four uniforms in (0, 1] and four standard normals, Philox under
// (seed, chain = i) for two purposes of ember's user range; `block` > 0 gives further uniforms
// (the checkerboard's retries).
struct point_draws {
  double u[4], z[4];
  point_draws(std::uint64_t seed, std::int64_t i, std::uint32_t block = 0) {
    auto const r = make_chain_rng<double>(seed, std::uint32_t(i), std::uint32_t(std::uint64_t(i) >> 32));
    auto const uu = r.uniform_from<4>(purpose(std::uint32_t(purpose::user) + 1), block);
    auto const zz = r.normal<4>(purpose(std::uint32_t(purpose::user) + 2));
    for (int k = 0; k < 4; ++k) u[k] = uu[k], z[k] = zz[k];
  }
};
template <class T, class F>
dataset<T> generate(char const* who, std::int64_t n, F&& point) {
  if (n < 1) throw std::invalid_argument(std::string("ember::toy::") + who + ": needs at least one point, got " + std::to_string(n));
  std::vector<T> v(std::size_t(n) * 2);
  for (std::int64_t i = 0; i < n; ++i) {
    double x = 0, y = 0;
    point(i, x, y);
    v[std::size_t(2 * i)] = T(x), v[std::size_t(2 * i + 1)] = T(y);
  }
  return dataset<T>(std::move(v), n, 2);
}
}  // namespace detail

struct gaussian_ring_options {
  int components = 8;
  double std = 0.05;
  double radius = 1.0;
};
template <std::floating_point T = float>
dataset<T> gaussian_ring(std::int64_t n, std::uint64_t seed, gaussian_ring_options const& o = {}) {
  if (o.components < 1) throw std::invalid_argument("ember::toy::gaussian_ring: needs at least one component");
  return detail::generate<T>("gaussian_ring", n, [&](std::int64_t i, double& x, double& y) {
    detail::point_draws const d(seed, i);
    double const a = 2 * detail::pi * double(i % o.components) / o.components;
    x = o.radius * std::cos(a) + o.std * d.z[0];
    y = o.radius * std::sin(a) + o.std * d.z[1];
  });
}

struct eight_gaussians_options {
  double std = 0.02;
  double scale = 2.0;
};
template <std::floating_point T = float>
dataset<T> eight_gaussians(std::int64_t n, std::uint64_t seed, eight_gaussians_options const& o = {}) {
  return detail::generate<T>("eight_gaussians", n, [&](std::int64_t i, double& x, double& y) {
    double const h = 1 / std::sqrt(2.0);
    static constexpr double cx[8] = {1, -1, 0, 0, 1, 1, -1, -1}, cy[8] = {0, 0, 1, -1, 1, -1, 1, -1};
    int const k = int(i % 8);
    double const s = k < 4 ? 1 : h;
    detail::point_draws const d(seed, i);
    x = o.scale * cx[k] * s + o.std * d.z[0];
    y = o.scale * cy[k] * s + o.std * d.z[1];
  });
}

struct noise_options {
  double noise = 0.05;
};
template <std::floating_point T = float>
dataset<T> two_moons(std::int64_t n, std::uint64_t seed, noise_options const& o = {}) {
  std::int64_t const outer = n / 2, inner = n - outer;
  return detail::generate<T>("two_moons", n, [&](std::int64_t i, double& x, double& y) {
    detail::point_draws const d(seed, i);
    bool const out = i < outer;
    std::int64_t const k = out ? i : i - outer, m = out ? outer : inner;
    double const t = m > 1 ? detail::pi * double(k) / double(m - 1) : 0;
    x = (out ? std::cos(t) : 1 - std::cos(t)) + o.noise * d.z[0];
    y = (out ? std::sin(t) : 0.5 - std::sin(t)) + o.noise * d.z[1];
  });
}

struct circle_options {
  double noise = 0.05;
  double radius = 1.0;
};
template <std::floating_point T = float>
dataset<T> circle(std::int64_t n, std::uint64_t seed, circle_options const& o = {}) {
  return detail::generate<T>("circle", n, [&](std::int64_t i, double& x, double& y) {
    detail::point_draws const d(seed, i);
    double const a = 2 * detail::pi * d.u[0];
    x = o.radius * std::cos(a) + o.noise * d.z[0];
    y = o.radius * std::sin(a) + o.noise * d.z[1];
  });
}

struct swiss_roll_options {
  double noise = 0.05;
  double arclength = 3.0;
};
template <std::floating_point T = float>
dataset<T> swiss_roll(std::int64_t n, std::uint64_t seed, swiss_roll_options const& o = {}) {
  if (n < 2) throw std::invalid_argument("ember::toy::swiss_roll: needs at least two points (it is scaled by their spread)");
  std::vector<double> p(std::size_t(2 * n));
  for (std::int64_t i = 0; i < n; ++i) {
    detail::point_draws const d(seed, i);
    double const t = o.arclength * detail::pi * (1 + 2 * d.u[0]);
    p[std::size_t(2 * i)] = t * std::cos(t) + o.noise * d.z[0];
    p[std::size_t(2 * i + 1)] = t * std::sin(t) + o.noise * d.z[1];
  }
  double mean[2] = {0, 0}, sd[2] = {0, 0};
  for (int c = 0; c < 2; ++c) {
    for (std::int64_t i = 0; i < n; ++i) mean[c] += p[std::size_t(2 * i + c)];
    mean[c] /= double(n);
    for (std::int64_t i = 0; i < n; ++i) sd[c] += (p[std::size_t(2 * i + c)] - mean[c]) * (p[std::size_t(2 * i + c)] - mean[c]);
    sd[c] = std::sqrt(sd[c] / double(n - 1));
  }
  double const scale = 2 * 0.5 * (sd[0] + sd[1]);
  return detail::generate<T>("swiss_roll", n, [&](std::int64_t i, double& x, double& y) {
    x = (p[std::size_t(2 * i)] - mean[0]) / scale;
    y = (p[std::size_t(2 * i + 1)] - mean[1]) / scale;
  });
}

struct checkerboard_options {
  double range_limit = 4.0;
  double noise = 0.0;
};
template <std::floating_point T = float>
dataset<T> checkerboard(std::int64_t n, std::uint64_t seed, checkerboard_options const& o = {}) {
  return detail::generate<T>("checkerboard", n, [&](std::int64_t i, double& x, double& y) {
    detail::point_draws const d(seed, i);
    // Rejection: half the square is accepted, two tries a Philox block, so 64 blocks (128 tries)
    // all fail with probability 2⁻¹²⁸.
    for (std::uint32_t b = 0;; ++b) {
      detail::point_draws const r(seed, i, b);
      for (int k = 0; k < 4; k += 2) {
        x = (2 * r.u[k] - 1) * o.range_limit;
        y = (2 * r.u[k + 1] - 1) * o.range_limit;
        if (((long long)std::floor(x) + (long long)std::floor(y)) % 2 != 0) {
          x += o.noise * d.z[0];
          y += o.noise * d.z[1];
          return;
        }
      }
      if (b + 1 == 64) throw std::logic_error("ember::toy::checkerboard: no point accepted in 128 tries");
    }
  });
}

struct pinwheel_options {
  int classes = 5;
  double noise = 0.05;
  double radial_scale = 2.0;
  double angular_scale = 0.1;
  double spiral_scale = 5.0;
};
template <std::floating_point T = float>
dataset<T> pinwheel(std::int64_t n, std::uint64_t seed, pinwheel_options const& o = {}) {
  if (o.classes < 1) throw std::invalid_argument("ember::toy::pinwheel: needs at least one class");
  return detail::generate<T>("pinwheel", n, [&](std::int64_t i, double& x, double& y) {
    detail::point_draws const d(seed, i);
    double const t = std::sqrt(d.u[0]), r = o.radial_scale * t;
    double const a = double(i % o.classes) * 2 * detail::pi / o.classes + o.spiral_scale * t + o.angular_scale * d.z[2];
    x = r * std::cos(a) + o.noise * d.z[0];
    y = r * std::sin(a) + o.noise * d.z[1];
  });
}

}  // namespace ember::toy
