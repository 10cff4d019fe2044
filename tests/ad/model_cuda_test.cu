// A model body (ad/model.hpp) on CUDA: one chain per thread, its reverse-mode gradient in the
// thread's registers and local memory. On the host (from this .cu unit, [nogpu]) the body's
// gradient equals its forward duals'; on the GPU, 50,000 MALA chains of eight schools written as
// a model, their final states' mean of μ against the quadrature reference (z-score over chains).
#include <ember/cuda.cuh>
#include <ember/data/device.cuh>
#include <ember/targets/eight_schools.hpp>
#include <ember/targets/hier_logit.hpp>

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
  // What a GPU team would split: nothing of eight schools (it has no data), hier_logit's 2,000 rows
  // in 63 blocks of 32, and nothing of the same body's dual form (a custom energy: a team would
  // repeat it).
  CHECK(ember::team_blocks(U) == 0);
  auto const hier = ember::targets::hier_logit<float>::simulated();
  CHECK(ember::team_blocks(hier.energy()) == 63);
  CHECK(ember::team_blocks(ember::model_duals(hier.energy())) == 0);
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

TEST_CASE("a model body runs in teams of threads on the GPU: the first member adds the terms, all share the rows",
          "[ad][cuda]") {
  // One MALA transition of 257 chains from their default starts. Eight schools has no rows: in a
  // team only the first member adds its terms and the team adds zeros to them, so every team size
  // gives one thread's draws bit for bit. The hierarchical logistic regression (2,000 rows, a let
  // of 48 county intercepts) deals its blocks of 32 rows out: the same states up to the rows'
  // summation order, and bit-identical for any block size.
  auto once = [](auto const& U, int team, int block, double step) {
    return ember::sample(ember::mala(U, {.step_size = step}) | ember::record(), {.chains = 257, .steps = 1, .seed = 3},
                         ember::backend::cuda{.block_size = block, .threads_per_chain = team});
  };
  auto const U8 = ember::model<10, float>(eight_schools_body{});
  auto const e1 = once(U8, 1, 256, 0.25);
  for (int team : {2, 8, 32}) {
    auto const et = once(U8, team, 256, 0.25);
    for (std::int64_t c = 0; c < 257; ++c)
      for (int d = 0; d < 10; ++d) {
        INFO("eight schools, team " << team << ", chain " << c << ", coordinate " << d);
        CHECK(et.final_state(c)[d] == e1.final_state(c)[d]);
      }
  }
  auto const target = ember::targets::hier_logit<float>::simulated();
  auto const dU = ember::to_device(target.energy());
  auto const h1 = once(dU.energy(), 1, 256, 0.01);
  for (int team : {4, 32}) {
    auto const ht = once(dU.energy(), team, 256, 0.01), hb = once(dU.energy(), team, 64, 0.01);
    int moved = 0;
    for (std::int64_t c = 0; c < 257; ++c) {
      moved += ht.final_state(c)[0] != h1.final_state(c)[0];
      for (int d = 0; d < 60; ++d) {
        INFO("hier_logit, team " << team << ", chain " << c << ", coordinate " << d);
        CHECK(std::abs(ht.final_state(c)[d] - h1.final_state(c)[d]) <= 1e-3f * (1 + std::abs(h1.final_state(c)[d])));
        CHECK(hb.final_state(c)[d] == ht.final_state(c)[d]);
      }
    }
    INFO("chains whose mu differs from one thread's in any bit: " << moved);
    CHECK(ht.acceptance_rate() == Approx(h1.acceptance_rate()).epsilon(0.05));
  }
}
