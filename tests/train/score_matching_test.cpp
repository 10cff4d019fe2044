// Denoising score matching (train/score_matching.hpp): its parameter gradient is checked in
// tests/energy/mlp_test.cpp (add_param_grad_of_input_grad against central differences); here the
// trainer resumes from a checkpoint to the same bits, refuses bad options and another trainer's
// file, and learns two moons with three noise levels (the energy distance between ULA samples of
// the learned energy and held-out data falls more than tenfold).
#include <ember/ember.hpp>

#include "support/scratch_dir.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <vector>

using namespace ember;

namespace {
using net_type = mlp<float, 2, nn::silu, 32, 32>;
}

TEST_CASE("denoising score matching resumes from a checkpoint to the same bits and refuses another's", "[train]") {
  ember_test::scratch_dir dir("ember_dsm_test");
  auto const data = toy::two_moons<float>(1024, 3);
  dsm_options const o{.batch = 64, .sigmas = {0.05, 0.1, 0.2}};
  auto w1 = mlp_weights<float>::uniform({2, 32, 32, 1}, 3);
  net_type const n1(w1);
  denoising_score_matching<net_type> whole(n1, w1, data.view(), o, adam{}, 4);
  for (int i = 0; i < 6; ++i) whole.step();
  auto w2 = mlp_weights<float>::uniform({2, 32, 32, 1}, 3);
  net_type const n2(w2);
  {
    denoising_score_matching<net_type> first(n2, w2, data.view(), o, adam{}, 4);
    for (int i = 0; i < 3; ++i) first.step();
    first.save((dir / "dsm.npz").string());
  }
  auto w3 = mlp_weights<float>::uniform({2, 32, 32, 1}, 8);
  net_type const n3(w3);
  denoising_score_matching<net_type> second(n3, w3, data.view(), o, adam{}, 4);
  second.load((dir / "dsm.npz").string());
  for (int i = 0; i < 3; ++i) second.step();
  CHECK(std::memcmp(w3.parameters().data(), w1.parameters().data(), w1.parameters().size() * sizeof(float)) == 0);
  denoising_score_matching<net_type> other(n3, w3, data.view(), {.batch = 64, .sigmas = {0.05, 0.1}}, adam{}, 4);
  REQUIRE_THROWS_WITH(other.load((dir / "dsm.npz").string()), Catch::Contains("was written by a trainer with other options"));
  REQUIRE_THROWS_WITH(denoising_score_matching<net_type>(n3, w3, data.view(), {.sigmas = {}}),
                      "ember::denoising_score_matching: .sigmas needs at least one noise level");
  REQUIRE_THROWS_WITH(denoising_score_matching<net_type>(n3, w3, data.view(), {.sigmas = {0.1, -1.0}}),
                      "ember::denoising_score_matching: every noise level must be positive and finite");
}

TEST_CASE("denoising score matching with three noise levels learns two moons", "[train]") {
  auto const data = toy::two_moons<float>(4096, 5), held = toy::two_moons<float>(1000, 6);
  auto w = mlp_weights<float>::uniform({2, 32, 32, 1}, 9);
  net_type const net(w);
  denoising_score_matching<net_type> dsm(net, w, data.view(), {.batch = 128, .sigmas = {0.05, 0.1, 0.2}}, adam{.lr = 1e-3});
  // Samples: 2,000 ULA steps of size σ_min²/10 from a grid over the data's box.
  auto const distance = [&] {
    std::vector<vec<float, 2>> starts(1000);
    for (int c = 0; c < 1000; ++c) starts[std::size_t(c)] = vec<float, 2>{{float(c % 40) / 10 - 1.5f, float(c / 40) / 12.5f - 1.f}};
    auto const r = sample(ula(net, {.step_size = 2.5e-4}), {.chains = 1000, .steps = 2000, .seed = 3, .init = starts, .progress = false});
    REQUIRE(r.divergent_chains() == 0);
    std::vector<float> s(2000);
    for (int c = 0; c < 1000; ++c) s[2 * std::size_t(c)] = r.final_state(c)[0], s[2 * std::size_t(c) + 1] = r.final_state(c)[1];
    return energy_distance(data_view<float>{s.data(), 1000, 2}, held.view());
  };
  double const before = distance();
  dsm_report last;
  for (int i = 0; i < 800; ++i) last = dsm.step();
  double const after = distance();
  INFO("energy distance before " << before << ", after " << after << "; last loss " << last.loss);
  CHECK(after < before / 10);
}
