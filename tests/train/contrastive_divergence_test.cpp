// Training neural energies (train/): TorchEBM's toy data sets, the optimisers' steps in closed form,
// the energy distance on sets small enough to add up by hand, and contrastive divergence: resumed
// from a checkpoint bit for bit, refusing another trainer's file, stopping loudly on a diverged
// energy, and learning eight Gaussians (the energy distance of its samples to held-out data falls
// to the distance between two draws of the data).
#include <ember/ember.hpp>

#include "support/scratch_dir.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

using namespace ember;

namespace {
// z of a sample mean of n independent values with known variance.
double z_mean(double got, double mean, double var, double n) { return (got - mean) / std::sqrt(var / n); }
}  // namespace

TEST_CASE("toy data sets: TorchEBM's shapes from Philox, the same for the same seed", "[train]") {
  auto const a = toy::eight_gaussians<double>(4000, 1), b = toy::eight_gaussians<double>(4000, 1), c = toy::eight_gaussians<double>(4000, 2);
  REQUIRE(a.rows() == 4000);
  REQUIRE(a.cols() == 2);
  CHECK(std::memcmp(a.values().data(), b.values().data(), a.values().size() * sizeof(double)) == 0);
  CHECK(a(0, 0) != c(0, 0));
  // Component k = i mod 8 at its centre (scale 2), noise sd 0.02: the mean offset of each
  // component within 5 standard errors, and the offsets' variance 0.02² (z of a variance of 500
  // Gaussian values: sd of s² is σ²√(2/(n−1))).
  double const h = 2 / std::sqrt(2.0), cx[8] = {2, -2, 0, 0, h, h, -h, -h}, cy[8] = {0, 0, 2, -2, h, -h, h, -h};
  for (int k = 0; k < 8; ++k) {
    double mx = 0, s2 = 0;
    int n = 0;
    for (std::int64_t i = k; i < a.rows(); i += 8, ++n) mx += a(i, 0) - cx[k], s2 += std::pow(a(i, 1) - cy[k], 2);
    CHECK(std::abs(z_mean(mx / n, 0, 0.02 * 0.02, n)) < 5);
    CHECK(std::abs((s2 / n - 0.0004) / (0.0004 * std::sqrt(2.0 / (n - 1)))) < 5);
  }
  auto const cb = toy::checkerboard<double>(2000, 3);
  for (std::int64_t i = 0; i < cb.rows(); ++i) {
    CHECK(std::abs(cb(i, 0)) <= 4);
    CHECK(((long long)std::floor(cb(i, 0)) + (long long)std::floor(cb(i, 1))) % 2 != 0);
  }
  auto const m = toy::two_moons<double>(1001, 4, {.noise = 0});
  CHECK(m(0, 0) == 1);                            // the outer arc starts at (1, 0)
  CHECK(std::abs(m(499, 0) + 1) < 1e-12);         // and ends at (−1, 0) (500 points)
  CHECK(std::abs(m(500, 1) - 0.5) < 1e-12);       // the inner starts at (0, ½)
  auto const s = toy::swiss_roll<double>(3000, 5);
  double m0 = 0, m1 = 0;
  for (std::int64_t i = 0; i < s.rows(); ++i) m0 += s(i, 0), m1 += s(i, 1);
  CHECK(std::abs(m0) < 1e-9);  // centred
  CHECK(std::abs(m1) < 1e-9);
  auto const r = toy::circle<double>(5000, 6, {.noise = 0});
  for (std::int64_t i = 0; i < r.rows(); i += 97) CHECK(std::abs(std::hypot(r(i, 0), r(i, 1)) - 1) < 1e-12);
  auto const p = toy::pinwheel<double>(1000, 7, {.noise = 0});
  for (std::int64_t i = 0; i < p.rows(); ++i) CHECK(std::hypot(p(i, 0), p(i, 1)) <= 2 + 1e-12);
  auto const g = toy::gaussian_ring<float>(800, 8);
  CHECK(g.rows() == 800);
  REQUIRE_THROWS_WITH(toy::two_moons<float>(0, 1), "ember::toy::two_moons: needs at least one point, got 0");
}

TEST_CASE("optimisers: Adam's first step moves each parameter by lr against its gradient's sign; SGD with momentum", "[train]") {
  std::vector<double> th{1.0, -2.0, 0.5};
  std::vector<double> const g{0.3, -4.0, 1e-3};
  optimizer_state st;
  optimizer_step(adam{.lr = 0.01}, st, std::span<double>(th), std::span<double const>(g));
  // m̂ = g and v̂ = g² after one step: θ − lr·g/(|g| + ε).
  CHECK(th[0] == Approx(1.0 - 0.01 * 0.3 / (0.3 + 1e-8)).epsilon(1e-14));
  CHECK(th[1] == Approx(-2.0 + 0.01 * 4.0 / (4.0 + 1e-8)).epsilon(1e-14));
  CHECK(th[2] == Approx(0.5 - 0.01 * 1e-3 / (1e-3 + 1e-8)).epsilon(1e-14));
  CHECK(st.steps == 1);
  std::vector<double> w{1.0};
  optimizer_state sg;
  std::vector<double> const g1{2.0}, g2{-1.0};
  optimizer_step(sgd{.lr = 0.1, .momentum = 0.9}, sg, std::span<double>(w), std::span<double const>(g1));
  CHECK(w[0] == Approx(1.0 - 0.1 * 2.0).epsilon(1e-15));
  optimizer_step(sgd{.lr = 0.1, .momentum = 0.9}, sg, std::span<double>(w), std::span<double const>(g2));
  CHECK(w[0] == Approx(0.8 - 0.1 * (0.9 * 2.0 - 1.0)).epsilon(1e-15));
  std::vector<float> v{3.f, 4.f};
  CHECK(clip_grad_norm(std::span<float>(v), 1.0) == Approx(5.0));
  CHECK(v[0] == Approx(0.6f));
  CHECK(v[1] == Approx(0.8f));
  REQUIRE_THROWS_WITH(optimizer_step(adam{.lr = 0}, st, std::span<double>(th), std::span<double const>(g)),
                      "ember::adam: the learning rate must be positive and finite");
}

TEST_CASE("energy distance: two sets small enough to add up by hand", "[train]") {
  // a = {0, 1}, b = {3, 5}: E|a − b| = (3 + 5 + 2 + 4)/4 = 3.5, E|a − a′| = 1, E|b − b′| = 2.
  std::vector<double> const a{0, 1}, b{3, 5};
  CHECK(energy_distance(data_view<double>{a.data(), 2, 1}, data_view<double>{b.data(), 2, 1}) == Approx(2 * 3.5 - 1 - 2).epsilon(1e-15));
  // In 2-D with a right triangle: |(0,0) − (3,4)| = 5.
  std::vector<double> const p{0, 0, 0, 0}, q{3, 4, 3, 4};
  CHECK(energy_distance(data_view<double>{p.data(), 2, 2}, data_view<double>{q.data(), 2, 2}) == Approx(10.0).epsilon(1e-15));
}

namespace {
using small_net = mlp<float, 2, nn::silu, 32, 32>;
}

TEST_CASE("contrastive divergence resumes from a checkpoint to the same bits, and refuses another trainer's", "[train]") {
  ember_test::scratch_dir dir("ember_cd_test");
  auto const data = toy::eight_gaussians<float>(2048, 11);
  cd_options const o{.batch = 64, .k_steps = 5, .persistent = true, .buffer_size = 512, .init_steps = 10};
  auto w1 = mlp_weights<float>::uniform({2, 32, 32, 1}, 3);
  small_net const n1(w1);
  contrastive_divergence<small_net> whole(n1, w1, data.view(), o, adam{}, 5);
  for (int i = 0; i < 6; ++i) whole.step();

  auto w2 = mlp_weights<float>::uniform({2, 32, 32, 1}, 3);
  small_net const n2(w2);
  {
    contrastive_divergence<small_net> first(n2, w2, data.view(), o, adam{}, 5);
    for (int i = 0; i < 3; ++i) first.step();
    first.save((dir / "cd.npz").string());
  }
  auto w3 = mlp_weights<float>::uniform({2, 32, 32, 1}, 99);  // other weights: the file sets them
  small_net const n3(w3);
  contrastive_divergence<small_net> second(n3, w3, data.view(), o, adam{}, 5);
  second.load((dir / "cd.npz").string());
  CHECK(second.steps_done() == 3);
  for (int i = 0; i < 3; ++i) second.step();
  REQUIRE(w3.parameters().size() == w1.parameters().size());
  CHECK(std::memcmp(w3.parameters().data(), w1.parameters().data(), w1.parameters().size() * sizeof(float)) == 0);
  REQUIRE(second.buffer().size() == whole.buffer().size());
  CHECK(std::memcmp(second.buffer().data(), whole.buffer().data(), whole.buffer().size() * sizeof(vec<float, 2>)) == 0);

  cd_options other = o;
  other.k_steps = 6;
  contrastive_divergence<small_net> wrong(n3, w3, data.view(), other, adam{}, 5);
  auto const before = std::vector<float>(w3.parameters().begin(), w3.parameters().end());
  REQUIRE_THROWS_WITH(wrong.load((dir / "cd.npz").string()),
                      Catch::Contains("was written by a trainer with other options"));
  // An SGD trainer refuses Adam's file (its state has the second moments).
  contrastive_divergence<small_net, sgd> with_sgd(n3, w3, data.view(), o, sgd{}, 5);
  REQUIRE_THROWS_WITH(with_sgd.load((dir / "cd.npz").string()), Catch::Contains("another optimiser"));
  CHECK(std::memcmp(before.data(), w3.parameters().data(), before.size() * sizeof(float)) == 0);
}

TEST_CASE("contrastive divergence refuses bad options and stops loudly when the energy diverges", "[train]") {
  auto const data = toy::two_moons<float>(512, 1);
  auto w = mlp_weights<float>::uniform({2, 32, 32, 1}, 4);
  small_net const net(w);
  REQUIRE_THROWS_WITH(contrastive_divergence<small_net>(net, w, data.view(), {.batch = 1}), "ember::contrastive_divergence: .batch must be at least 2");
  auto other = mlp_weights<float>::uniform({2, 32, 32, 1}, 4);
  REQUIRE_THROWS_WITH(contrastive_divergence<small_net>(net, other, data.view()),
                      Catch::Contains("the network does not view these weights"));
  // A learning rate of 10⁴ with SGD: the energy leaves the finite numbers within a few steps.
  contrastive_divergence<small_net, sgd> cd(net, w, data.view(), {.batch = 32, .k_steps = 5}, sgd{.lr = 1e4});
  bool stopped = false;
  for (int i = 0; i < 50 && !stopped; ++i) {
    try {
      cd.step();
    } catch (std::runtime_error const& e) {
      stopped = true;
      CHECK_THAT(e.what(), Catch::Contains("ember::contrastive_divergence: step "));
    }
  }
  CHECK(stopped);
  // Weights scaled by 10²⁰: the energy overflows float (10⁴² at |x| ~ 1), so the Langevin chains'
  // states are not finite; the run freezes and counts them, and training stops rather than use them.
  auto w2 = mlp_weights<float>::uniform({2, 32, 32, 1}, 4);
  for (auto& t : w2.parameters()) t *= 1e20f;
  small_net const net2(w2);
  contrastive_divergence<small_net> wild(net2, w2, data.view(), {.batch = 32, .k_steps = 10});
  auto const before = std::vector<float>(w2.parameters().begin(), w2.parameters().end());
  REQUIRE_THROWS_WITH(wild.step(), Catch::Contains("Langevin chains left the finite numbers"));
  CHECK(std::memcmp(before.data(), w2.parameters().data(), before.size() * sizeof(float)) == 0);
  std::vector<float> bad{0.f, 1.f, std::numeric_limits<float>::quiet_NaN(), 2.f};
  REQUIRE_THROWS_WITH(contrastive_divergence<small_net>(net2, w2, data_view<float>{bad.data(), 2, 2}),
                      "ember::contrastive_divergence: data row 1 is not finite");
}

// Eight Gaussians (scale 2, sd 0.02) with TorchEBM's persistent recipe on a smaller network and
// Adam at lr 1e-4 (at TorchEBM's 1e-3 the recipe collapses after a few hundred steps, in TorchEBM
// as here: bench/results/2026-11-28-ebm-training.md): the energy distance between 1,000 model
// samples (200 Langevin steps from the data's bounding box) and 1,000 held-out points, before and
// after 1,000 steps; the distance between two independent draws of the data (what a perfect model
// would score, up to its noise) is printed beside them.
TEST_CASE("contrastive divergence learns eight Gaussians", "[train]") {
  auto const data = toy::eight_gaussians<float>(4096, 21), held = toy::eight_gaussians<float>(1000, 22), again = toy::eight_gaussians<float>(1000, 23);
  auto w = mlp_weights<float>::uniform({2, 32, 32, 1}, 7);
  small_net const net(w);
  contrastive_divergence<small_net> cd(net, w, data.view(), {.batch = 128, .k_steps = 10, .persistent = true, .buffer_size = 2048, .init_steps = 20},
                                      adam{.lr = 1e-4});
  auto const distance = [&] {
    auto const s = cd.sample_model(1000, 200, 77);
    return energy_distance(data_view<float>{s.data(), 1000, 2}, held.view());
  };
  double const before = distance();
  cd_report last;
  for (int i = 0; i < 1000; ++i) last = cd.step();
  double const after = distance(), floor = energy_distance(again.view(), held.view());
  INFO("energy distance before " << before << ", after " << after << ", between two draws of the data " << floor << "; last gap "
                                 << last.gap());
  CHECK(after < before / 10);
  CHECK(std::isfinite(last.loss));
}
