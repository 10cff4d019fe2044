// The unadjusted underdamped Langevin kernel: every splitting's exact finite-step law on a
// Gaussian, through sample() on the SIMD and scalar paths, and the closed forms of its stationary
// law (derived in docs/integrators.md) for BAOAB, OBABO and ABOBA.
#include "kernel/langevin_checks.hpp"

#include <stdexcept>

using namespace ember_test;

namespace {

// Stationary law of a splitting on a 1-d Gaussian (the recursion run to convergence).
template <class Split>
law2 stationary(double h, double gamma, double m, double s2) {
  return splitting_law<Split>({0, 0, 1, 0, m}, h, gamma, m, s2, 20'000);
}

}  // namespace

TEST_CASE("baoab on a diagonal gaussian follows its exact finite-step law",
          "[kernel][underdamped_langevin][statistics]") {
  check_splitting_exact_law<ember::baoab>(ember::backend::cpu{}, 0.4, 1.5, 100);
}

TEST_CASE("baoab (scalar path) on a diagonal gaussian follows its exact finite-step law",
          "[kernel][underdamped_langevin][statistics]") {
  check_splitting_exact_law<ember::baoab>(ember::backend::scalar{}, 0.4, 1.5, 200);
}

TEST_CASE("obabo and aboba on a diagonal gaussian follow their exact finite-step laws",
          "[kernel][underdamped_langevin][statistics]") {
  check_splitting_exact_law<ember::obabo>(ember::backend::cpu{}, 0.4, 0.5, 300);
  check_splitting_exact_law<ember::aboba>(ember::backend::cpu{}, 0.4, 3.0, 400);
}

TEST_CASE("stationary laws on a gaussian: baoab and aboba exact in x, obabo exact in p",
          "[kernel][underdamped_langevin]") {
  // With ω² = 1/(mσ²) and κ = 1 − h²ω²/4, for every friction (docs/integrators.md):
  //   BAOAB: Var x = σ²,    Var p = mκ;   OBABO: Var x = σ²/κ, Var p = m;
  //   ABOBA: Var x = σ²,    Var p = m/κ;  x and p uncorrelated in all three.
  for (double gamma : {0.1, 1.0, 10.0})
    for (double h : {0.2, 0.9, 1.6}) {
      double const m = 1.5, s2 = 0.8, kappa = 1 - h * h / (m * s2) / 4;
      INFO("h = " << h << ", gamma = " << gamma << ", kappa = " << kappa);
      auto b = stationary<ember::baoab>(h, gamma, m, s2);
      auto o = stationary<ember::obabo>(h, gamma, m, s2);
      auto a = stationary<ember::aboba>(h, gamma, m, s2);
      CHECK(b.xx == Approx(s2).epsilon(1e-9));
      CHECK(b.pp == Approx(m * kappa).epsilon(1e-9));
      CHECK(o.xx == Approx(s2 / kappa).epsilon(1e-9));
      CHECK(o.pp == Approx(m).epsilon(1e-9));
      CHECK(a.xx == Approx(s2).epsilon(1e-9));
      CHECK(a.pp == Approx(m / kappa).epsilon(1e-9));
      for (auto const* z : {&b, &o, &a}) CHECK(std::abs(z->xp) < 1e-9);
    }
}

TEST_CASE("baoab's momentum variance is m(1 - h^2 w^2 / 4), measured on the chains' own momenta",
          "[kernel][underdamped_langevin][statistics]") {
  // sample() returns positions only, so the momenta are read by running the kernel's init and
  // step by hand, one chain at a time (the same code the fused loop runs).
  ember::gaussian<double, 1, ember::covariance::diagonal> U(ember::vec<double, 1>{{0.5}}, ember::vec<double, 1>{{1.0}});
  double const h = 1.2, m = 1.0, kappa = 1 - h * h / 4;  // κ = 0.64: far from the target's m
  auto k = ember::underdamped_langevin(U, {.step_size = h, .friction = 2.0, .mass = m});
  int const n = 50'000;
  double s = 0, q = 0, sx = 0, qx = 0;
  for (int c = 0; c < n; ++c) {
    auto st = k.init(ember::vec<double, 1>{{0.0}}, ember::make_chain_rng<double>(31, std::uint32_t(c), 0));
    for (std::uint32_t t = 0; t < 60; ++t) k.step(st, ember::make_chain_rng<double>(31, std::uint32_t(c), t));
    s += st.p[0];
    q += st.p[0] * st.p[0];
    sx += st.x[0];
    qx += st.x[0] * st.x[0];
  }
  double mean = s / n, var = (q - n * mean * mean) / (n - 1);
  double vx = (qx - sx * sx / n) / (n - 1);
  double se = m * kappa * std::sqrt(2.0 / (n - 1));
  INFO("Var p = " << var << " (truth " << m * kappa << "), Var x = " << vx << " (truth 1)");
  CHECK(std::abs(mean) / std::sqrt(m * kappa / n) < z_bound);
  CHECK(std::abs(var - m * kappa) / se < z_bound);
  CHECK(std::abs(var - m) / se > 20);  // the check can tell κ from 1
  CHECK(std::abs(vx - 1.0) / std::sqrt(2.0 / (n - 1)) < z_bound);
}

TEST_CASE("obabo's position variance is biased to sigma^2/kappa, and the check sees it",
          "[kernel][underdamped_langevin][statistics]") {
  ember::gaussian<float, 1, ember::covariance::diagonal> U(ember::vec<float, 1>{{0.f}}, ember::vec<float, 1>{{1.f}});
  double const h = 1.0, kappa = 1 - h * h / 4;
  auto r = ember::sample(ember::underdamped_langevin_with<ember::obabo>(U, {.step_size = h, .friction = 1.0}) |
                             ember::burn_in(100),
                         {.chains = 100'000, .steps = 1, .seed = 41}, ember::backend::cpu{});
  double z_biased = z_of_mean(r, [](auto const& x) { return double(x[0]) * double(x[0]); }, 1 / kappa);
  double z_target = z_of_mean(r, [](auto const& x) { return double(x[0]) * double(x[0]); }, 1.0);
  INFO("z against sigma^2/kappa: " << z_biased << ", against sigma^2: " << z_target);
  CHECK(std::abs(z_biased) < z_bound);
  CHECK(std::abs(z_target) > 20);
}

TEST_CASE("underdamped_langevin rejects bad parameters", "[kernel][underdamped_langevin]") {
  ember::double_well<float, 2> U;
  CHECK_THROWS_AS(ember::underdamped_langevin(U, {.step_size = -0.1}), std::invalid_argument);
  // 0 (the default) is "adapt it": a run without a warm-up refuses it (adapt/langevin_warmup_test.cpp).
  CHECK_THROWS_AS(ember::sample(ember::underdamped_langevin(U, {.step_size = 0}), {.chains = 8, .steps = 1, .progress = false}),
                  std::invalid_argument);
  CHECK_THROWS_AS(ember::underdamped_langevin(U, {.step_size = 0.1, .friction = 0}), std::invalid_argument);
  CHECK_THROWS_AS(ember::underdamped_langevin(U, {.step_size = 0.1, .friction = 1, .mass = -1}), std::invalid_argument);
  CHECK_THROWS_AS(ember::underdamped_langevin(U, {.step_size = 0.1, .friction = 1, .mass = std::nan("")}),
                  std::invalid_argument);
  CHECK_NOTHROW(ember::underdamped_langevin(U, {.step_size = 0.1, .friction = 1, .mass = 2}));
  static_assert(ember::TransitionKernel<decltype(ember::underdamped_langevin(U, {.step_size = 0.1}))>);
  static_assert(ember::phase_state<float, 2>::slots == 7);
}
