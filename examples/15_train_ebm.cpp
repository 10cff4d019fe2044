// Training a neural energy by persistent contrastive divergence, TorchEBM's recipe: a 2 → 128 →
// 128 → 1 SiLU network, Adam, batches of 256, 10 Langevin steps of size 0.1 per step from an
// 8,192-state replay buffer, on eight Gaussians and on two moons; Adam's learning rate 1e-4 and
// 2,000 steps, because at TorchEBM's 1e-3 the recipe collapses after 300-500 steps (in TorchEBM
// as here, bench/results/2026-11-28-ebm-training.md). Prints a progress line every 100 steps and
// the energy distance between model samples and held-out data (a perfect model would score the
// distance between two draws of the data, also shown); exits 1 unless training cut the
// untrained energy's distance tenfold on both. With a directory argument, writes each energy on
// a grid and samples (.npz) for scripts/plot_ebm.py.
//
//     build/examples/15_train_ebm [OUT_DIR] [STEPS] [LEARNING_RATE] [STEP_SIZE] [NOISE_SCALE]
#include <ember/ember.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using net_type = ember::mlp<float, 2, ember::nn::silu, 128, 128>;

// Trains on `data`, reports, and returns the final energy distance over the untrained energy's.
double train(char const* name, ember::dataset<float> const& data, ember::dataset<float> const& held,
             ember::dataset<float> const& again, std::string const& out, int steps, double lr, double eta, double noise) {
  auto weights = ember::mlp_weights<float>::uniform({2, 128, 128, 1}, 1);
  net_type const net(weights);
  ember::contrastive_divergence<net_type> cd(
      net, weights, data.view(),
      {.batch = 256, .k_steps = 10, .step_size = eta, .noise_scale = noise, .persistent = true, .buffer_size = 8192},
      ember::adam{.lr = lr});
  auto const distance = [&] {
    auto const s = cd.sample_model(1000, 200, 77);
    return ember::energy_distance(ember::data_view<float>{s.data(), 1000, 2}, held.view());
  };
  double const floor = ember::energy_distance(again.view(), held.view());
  double const untrained = distance();
  std::printf("%s: energy distance of the untrained energy's samples %.4f (two draws of the data: %.4f)\n", name, untrained, floor);
  double seconds = 0;
  for (int i = 1; i <= steps; ++i) {
    auto const r = cd.step();
    seconds += r.seconds;
    if (i % 100 == 0)
      std::printf("  step %4d  loss %8.4f  E(data) %8.3f  E(neg) %8.3f  gap %7.3f  |grad| %7.3f  energy distance %.4f  (%.2f s)\n", i,
                  r.loss, r.data_energy, r.negative_energy, r.gap(), r.grad_norm, distance(), seconds);
  }
  double const final_distance = distance();
  std::printf("%s: %d steps in %.2f s; energy distance %.4f (two draws of the data: %.4f)\n", name, steps, seconds, final_distance, floor);
  if (!out.empty()) {
    // The energy on a grid over the data's square, and 2,000 samples, for scripts/plot_ebm.py.
    constexpr int G = 200;
    std::vector<float> grid(G * G), samples = cd.sample_model(2000, 200, 78);
    for (int i = 0; i < G; ++i)
      for (int j = 0; j < G; ++j) grid[std::size_t(i * G + j)] = net.value(ember::vec<float, 2>{{-3.f + 6.f * float(j) / (G - 1), 3.f - 6.f * float(i) / (G - 1)}});
    ember::npz_writer z(out + "/" + name + ".npz");
    std::size_t const gs[2] = {G, G}, ss[2] = {2000, 2}, ds[2] = {std::size_t(data.rows()), 2};
    z.add("energy", grid.data(), std::span<std::size_t const>(gs));
    z.add("samples", samples.data(), std::span<std::size_t const>(ss));
    z.add("data", data.values().data(), std::span<std::size_t const>(ds));
    z.close();
  }
  return final_distance / untrained;
}

}  // namespace

int main(int argc, char** argv) {
  std::string const out = argc > 1 ? argv[1] : "";
  int const steps = argc > 2 ? std::atoi(argv[2]) : 2000;
  double const lr = argc > 3 ? std::atof(argv[3]) : 1e-4;
  double const eta = argc > 4 ? std::atof(argv[4]) : 0.1, noise = argc > 5 ? std::atof(argv[5]) : 1.0;
  double const a = train("eight_gaussians", ember::toy::eight_gaussians<float>(8192, 1), ember::toy::eight_gaussians<float>(1000, 2),
                         ember::toy::eight_gaussians<float>(1000, 3), out, steps, lr, eta, noise);
  double const b = train("two_moons", ember::toy::two_moons<float>(8192, 1), ember::toy::two_moons<float>(1000, 2),
                         ember::toy::two_moons<float>(1000, 3), out, steps, lr, eta, noise);
  return a < 0.1 && b < 0.1 ? 0 : 1;  // tenfold closer to the data on both
}
