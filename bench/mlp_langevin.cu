// Neural energies on a GPU (issue 32, point 2): ULA on TorchEBM's MLP energy, 2 → 128 → 128 → 1
// with SiLU (bench/mlp_langevin.cpp's network, its weights copied to the device), at 256 to 16,384
// chains × 100 steps, with the automatic team of threads per chain ("ember-cuda", energy/mlp.hpp)
// and with one thread per chain ("ember-cuda-team1"), as chain-steps per second: the wall clock of
// a whole sample() (start draws, kernels, final states to the host), the median of 5 after a
// warm-up call.
// bench/peers/mlp_torch.py --device cuda times PyTorch's Langevin on the same weights and GPU;
// ember_mlp_langevin is the CPU side (bench/gpu_session.sh, step mlp).
//
// The floor: a chain-step is one gradient, 33,408 multiply-adds (bench/mlp_langevin.cpp), so at the
// H200's ~67 TFLOP/s of plain fp32 (33.5·10¹² FMA/s, a datasheet lead) no code exceeds about 10⁹
// chain-steps/s, and only with every lane busy: 16,384 chains are 512 warps, under 4 per SM.
//
// usage: ember_mlp_langevin_cuda [--steps N] [--chains 256,1024,...] [--weights FILE.npz]
#include <ember/backend/cuda.cuh>
#include <ember/data/device.cuh>
#include <ember/energy/mlp.hpp>
#include <ember/kernel/ula.hpp>
#include <ember/sample.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

using namespace ember;

int main(int argc, char** argv) {
  std::int64_t steps = 100;
  std::vector<std::int64_t> counts{256, 1024, 4096, 8192, 16384};
  std::string weights;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--steps") && i + 1 < argc) {
      steps = std::atoll(argv[++i]);
    } else if (!std::strcmp(argv[i], "--weights") && i + 1 < argc) {
      weights = argv[++i];
    } else if (!std::strcmp(argv[i], "--chains") && i + 1 < argc) {
      counts.clear();
      std::stringstream in(argv[++i]);
      for (std::string item; std::getline(in, item, ',');) counts.push_back(std::atoll(item.c_str()));
    } else {
      std::fprintf(stderr, "usage: ember_mlp_langevin_cuda [--steps N] [--chains N,...] [--weights FILE.npz]\n");
      return 2;
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "ember_mlp_langevin_cuda: no CUDA device\n");
    return 77;
  }
  auto const w = weights.empty() ? mlp_weights<float>::uniform({2, 128, 128, 1}, 1) : mlp_weights<float>::from_npz(weights);
  mlp<float, 2, nn::silu, 128, 128> const U(w);
  auto const dU = to_device(U);
  auto const kernel = ula(dU.energy(), {.step_size = 0.01});
  auto run = [&](std::int64_t chains, std::int64_t n, int team) {
    auto t0 = std::chrono::steady_clock::now();
    auto r = sample(kernel, {.chains = chains, .steps = n, .seed = 7, .progress = false}, backend::cuda{.threads_per_chain = team});
    double const s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (std::int64_t c = 0; c < chains; ++c)
      if (!std::isfinite(r.final_state(c)[0]) || !std::isfinite(r.final_state(c)[1])) {
        std::fprintf(stderr, "ember_mlp_langevin_cuda: chain %lld is not finite\n", (long long)c);
        std::exit(1);
      }
    return s;
  };
  run(1024, 5, 0);  // context, module load
  run(1024, 5, 1);
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  double const fmas = 2 * (2 * 128 + 128 * 128) + 128;
  for (std::int64_t chains : counts)
    for (int team : {0, 1}) {
      std::vector<double> t;
      run(chains, steps, team);
      for (int rep = 0; rep < 5; ++rep) t.push_back(run(chains, steps, team));
      std::sort(t.begin(), t.end());
      double const rate = double(chains) * double(steps) / t[2];
      int const size = team ? team : detail::auto_team_size(chains, team_blocks(dU.energy()));
      std::printf("{\"what\": \"langevin\", \"impl\": \"%s\", \"net\": \"2-128-128-1 silu\", \"chains\": %lld, \"steps\": %lld, "
                  "\"threads_per_chain\": %d, \"seconds\": %.4g, \"chain_steps_per_s\": %.4g, \"fma_per_s\": %.4g, \"device\": \"%s\"}\n",
                  team ? "ember-cuda-team1" : "ember-cuda", (long long)chains, (long long)steps, size, t[2], rate, rate * fmas, prop.name);
      std::fflush(stdout);
    }
  return 0;
}
