// ember's side of bench/compare_ebm_training.sh (issue 29): TorchEBM's persistent contrastive-
// divergence recipe on its toy data, as bench/peers/torchebm_train.py runs it in TorchEBM: a 2 →
// 128 → 128 → 1 SiLU network, Adam, batches of 256, k Langevin steps of size 0.1 (unit noise)
// from an 8,192-state replay buffer (100 initial steps), energy regulariser 0.001. Every
// `--report-every` steps a JSON line with the loss, the mean energies and the energy distance
// between 1,000 model samples (200 Langevin steps from the data's widened box) and 1,000 held-out
// points; then one with the training's wall time (reports excluded).
//
// usage: ember_ebm_training [--data eight_gaussians|two_moons] [--seed N] [--steps N] [--k N]
//                           [--lr X] [--report-every N] [--threads N]
#include <ember/ember.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace ember;

int main(int argc, char** argv) {
  std::string data_name = "eight_gaussians";
  int seed = 0, steps = 1000, k = 10, every = 100, threads = 2;
  double lr = 1e-3;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string const a = argv[i];
    if (a == "--data") data_name = argv[i + 1];
    else if (a == "--seed") seed = std::atoi(argv[i + 1]);
    else if (a == "--steps") steps = std::atoi(argv[i + 1]);
    else if (a == "--k") k = std::atoi(argv[i + 1]);
    else if (a == "--lr") lr = std::atof(argv[i + 1]);
    else if (a == "--report-every") every = std::atoi(argv[i + 1]);
    else if (a == "--threads") threads = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  auto const make = [&](std::int64_t n, std::uint64_t s) {
    return data_name == "two_moons" ? toy::two_moons<float>(n, s) : toy::eight_gaussians<float>(n, s);
  };
  auto const data = make(8192, std::uint64_t(seed)), held = make(1000, std::uint64_t(seed) + 1000);
  using net_type = mlp<float, 2, nn::silu, 128, 128>;
  auto weights = mlp_weights<float>::uniform({2, 128, 128, 1}, std::uint64_t(seed));
  net_type const net(weights);
  contrastive_divergence<net_type> cd(net, weights, data.view(),
                                      {.batch = 256, .k_steps = k, .step_size = 0.1, .persistent = true, .buffer_size = 8192},
                                      adam{.lr = lr}, std::uint64_t(seed), backend::cpu{.threads = threads});
  double seconds = 0;
  for (int i = 1; i <= steps; ++i) {
    auto const r = cd.step();
    seconds += r.seconds;
    if (i % every == 0 || i == steps) {
      auto const s = cd.sample_model(1000, 200, 77);
      double const ed = energy_distance(data_view<float>{s.data(), 1000, 2}, held.view());
      std::printf("{\"impl\": \"ember\", \"data\": \"%s\", \"step\": %d, \"loss\": %.6g, \"data_energy\": %.6g, \"negative_energy\": %.6g, "
                  "\"energy_distance\": %.6g, \"train_seconds\": %.4g}\n",
                  data_name.c_str(), i, r.loss, r.data_energy, r.negative_energy, ed, seconds);
      std::fflush(stdout);
    }
  }
  std::printf("{\"impl\": \"ember\", \"data\": \"%s\", \"steps\": %d, \"seed\": %d, \"train_seconds\": %.4g, \"persistent\": true, \"k\": %d, "
              "\"batch\": 256, \"threads\": %d, \"lr\": %g}\n",
              data_name.c_str(), steps, seed, seconds, k, threads, lr);
  return 0;
}
