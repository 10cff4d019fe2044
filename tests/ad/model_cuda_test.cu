// A model body (ad/model.hpp) on CUDA: one chain per thread, its reverse-mode gradient in the
// thread's registers and local memory. On the host (from this .cu unit, [nogpu]) the body's
// gradient equals its forward duals'; on the GPU, 50,000 MALA chains of eight schools written as
// a model, their final states' mean of μ against the quadrature reference (z-score over chains).
#include <ember/cuda.cuh>
#include <ember/targets/eight_schools.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>

namespace {

// Eight schools, non-centred, as a model body: x = (μ, log τ, θ̃₁ … θ̃₈).
struct eight_schools_body {
  double y[8] = {28, 8, -3, 7, -1, 1, 18, 12};
  double sigma[8] = {15, 10, 16, 11, 9, 11, 10, 18};
  template <class M>
  EMBER_HD void operator()(M& m) const {
    auto const tau = ember::let(m, m.positive(m[1]));
    m.add(ember::normal_lpdf(m[0], 0.0, 5.0));
    m.add(ember::cauchy_lpdf(tau, 0.0, 5.0));
    for (int j = 0; j < 8; ++j) {
      m.add(ember::normal_lpdf(m[2 + j], 0.0, 1.0));
      m.add(ember::normal_lpdf(y[j], m[0] + tau * m[2 + j], sigma[j]));
    }
  }
};

}  // namespace

TEST_CASE("a model body compiled by nvcc: its host gradient equals its duals'", "[ad][cuda][nogpu]") {
  auto const U = ember::model<10, double>(eight_schools_body{});
  auto const V = ember::model_duals(U);
  ember::vec<double, 10> x, g, gd;
  for (int i = 0; i < 10; ++i) x[i] = 0.3 * std::sin(1.0 + i);
  double const u = U.value_and_grad(x, g), ud = V.value_and_grad(x, gd);
  // Sums of 26 terms below 10³ here, in another order: a few ε of 10³ apart.
  double const tol = 64 * std::numeric_limits<double>::epsilon() * 1e3;
  CHECK(std::abs(u - ud) <= tol);
  for (int i = 0; i < 10; ++i) CHECK(std::abs(g[i] - gd[i]) <= tol);
}

TEST_CASE("a model body samples eight schools on the GPU", "[ad][cuda]") {
  auto const U = ember::model<10, float>(eight_schools_body{});
  auto r = ember::sample(ember::mala(U, {.step_size = 0.25}) | ember::burn_in(4000),
                         {.chains = 50'000, .steps = 1, .seed = 29}, ember::backend::cuda{});
  double n = double(r.chains()), s = 0, q = 0;
  for (std::int64_t c = 0; c < r.chains(); ++c) s += double(r.final_state(c)[0]);
  for (std::int64_t c = 0; c < r.chains(); ++c) q += std::pow(double(r.final_state(c)[0]) - s / n, 2);
  double const z = (s / n - ember::targets::eight_schools<double>{}.reference().mean[0]) / std::sqrt(q / (n - 1) / n);
  INFO("mean of mu over chains " << s / n << ", z = " << z);
  CHECK(std::abs(z) < 5);
}
