// A neural energy: a 2 → 64 → 64 → 1 SiLU network (ember::mlp) whose weights come from a PyTorch
// state_dict saved as .npz (tools/export_torch_mlp.py), sampled by Langevin dynamics and by MALA
// through SIMD batches of chains, and by Langevin again as a network whose shape is read at run
// time. Without a file, the weights are random (torch.nn.Linear's initialisation) and a harmonic
// term keeps the density normalisable.
//
//     build/examples/14_neural_energy [WEIGHTS.npz]
#include <ember/ember.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
  // The weights: read from a state_dict, or torch.nn.Linear-style uniform ones.
  auto const weights = argc > 1 ? ember::mlp_weights<float>::from_npz(argv[1])
                                : ember::mlp_weights<float>::uniform({2, 64, 64, 1}, 42);
  for (auto const& layer : weights.layers()) std::printf("layer '%s': %d x %d\n", layer.name.c_str(), layer.out, layer.in);

  // The network's type says its shape; the constructor checks the weights against it.
  ember::mlp<float, 2, ember::nn::silu, 64, 64> const net(weights);
  auto const U = net + ember::harmonic<float, 2>{0.5f};

  // Persistent-chain style sampling: 4,096 chains, 100 Langevin steps each.
  auto const ula = ember::sample(ember::ula(U, {.step_size = 0.01}), {.chains = 4096, .steps = 100, .seed = 1});
  // The same network with its widths and activation read from the weights at run time (CPU
  // only): one compiled sampler serves every network of two inputs, with the same draws.
  ember::mlp<float, 2, ember::nn::any, ember::dynamic> const any_net(weights, {}, ember::nn::any::named("silu"));
  auto const ula_any = ember::sample(ember::ula(any_net + ember::harmonic<float, 2>{0.5f}, {.step_size = 0.01}),
                                     {.chains = 4096, .steps = 100, .seed = 1});
  auto const a = ula.final_states(), b = ula_any.final_states();
  if (!std::equal(a.begin(), a.end(), b.begin())) {
    std::printf("the run-time network's draws differ from the compile-time network's\n");
    return 1;
  }
  // An exact sampler for the same density: MALA with its step size tuned, draws recorded.
  auto const mala = ember::sample(ember::mala(U) | ember::warmup(500) | ember::record(), {.chains = 256, .steps = 500, .seed = 2});
  std::cout << mala.summary();
  double mean0 = 0;
  for (std::int64_t c = 0; c < ula.chains(); ++c) mean0 += ula.final_state(c)[0];
  std::printf("ULA: mean of x0 over %lld chains after 100 steps: %.3f\n", (long long)ula.chains(), mean0 / double(ula.chains()));
  // A run that went wrong says so: the summary's warnings, and a non-zero exit here.
  return mala.summary().warnings().empty() ? 0 : 1;
}
