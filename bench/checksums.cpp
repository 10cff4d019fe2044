// Bit-level fingerprints of what cases P1, P2 and P6 (bench/cpu_suite.cpp) compute, and of the
// same kernels with warm-up, record() and track(...): one FNV-1a hash per output, so that a
// restructuring that must not change any draw can be checked by running this before and after
// (issue 33). Not a test: the hashes depend on the compiler and the SIMD width.
//
// usage: ember_checksums [case]  (prints one line per output: case, output, hash; a case alone for callgrind)
#include <ember/ember.hpp>

#include "moment_checks.hpp"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <vector>

using namespace ember;
using namespace ember_bench;

namespace {

std::uint64_t fnv(void const* data, std::size_t bytes, std::uint64_t h = 1469598103934665603ull) {
  auto const* p = static_cast<unsigned char const*>(data);
  for (std::size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}
template <class T>
std::uint64_t fnv(std::span<T const> v) {
  return fnv(v.data(), v.size_bytes());
}
template <class T>
std::uint64_t fnv(std::vector<T> const& v) {
  return fnv(v.data(), v.size() * sizeof(T));
}

void line(char const* cs, char const* what, std::uint64_t h) { std::printf("%-4s %-22s %016llx\n", cs, what, (unsigned long long)h); }

template <class R>
void print(char const* cs, R const& r) {
  line(cs, "final_states", fnv(r.final_states()));
  if (!r.samples().empty()) line(cs, "samples", fnv(r.samples().data()));
  auto const& tr = r.trace();
  if (!tr.live_chains.empty()) line(cs, "trace.live_chains", fnv(tr.live_chains));
  if (!tr.mean.empty()) line(cs, "trace.mean", fnv(tr.mean));
  if (!tr.variance.empty()) line(cs, "trace.variance", fnv(tr.variance));
  if (!tr.energy.empty()) line(cs, "trace.energy", fnv(tr.energy));
  if (!tr.acceptance.empty()) line(cs, "trace.acceptance", fnv(tr.acceptance));
  std::vector<std::int64_t> acc;
  for (std::int64_t c = 0; c < r.chains(); ++c) acc.push_back(r.accepted(c));
  line(cs, "accepted", fnv(acc));
  auto const a = r.adapted();
  std::printf("%-4s %-22s %.17g\n", cs, "step_size", a.step_size);
  std::printf("%-4s %-22s %.17g\n", cs, "trajectory_length", a.trajectory_length);
  if (!a.metric_scale.empty()) line(cs, "metric", fnv(a.metric_scale));
  if (!a.step_sizes.empty()) line(cs, "step_sizes", fnv(a.step_sizes));
}

}  // namespace

int main(int argc, char** argv) {
  auto U10 = bench_gaussian<10>();
  backend::cpu be{.threads = 2};
  auto want = [&](char const* c) { return argc < 2 || std::strcmp(argv[1], c) == 0; };
  if (want("P1")) print("P1", sample(ula(U10, {.step_size = 0.1}), {.chains = 10'000, .steps = 100, .seed = 7}, be));
  if (want("P2")) print("P2", sample(hmc(U10, {.step_size = 0.1, .integrator_steps = 10}), {.chains = 1'000, .steps = 100, .seed = 7}, be));
  if (want("P6")) print("P6", sample(ula(U10, {.step_size = 0.1}), {.chains = 100'000, .steps = 100, .seed = 7}, be));
  if (want("P1t")) print("P1t", sample(ula(U10, {.step_size = 0.1}) | thin(5) | record() | track(moments, acceptance, mean_energy),
                      {.chains = 1'001, .steps = 100, .seed = 7}, be));
  if (want("P2t")) print("P2t", sample(hmc(U10, {.step_size = 0.1, .integrator_steps = 10}) | warmup(100) | thin(2) | record() |
                          track(moments, acceptance, mean_energy),
                      {.chains = 999, .steps = 100, .seed = 7}, be));
  if (want("P2c")) print("P2c", sample(chees_hmc(U10) | thin(2) | track(moments), {.chains = 64, .steps = 200, .seed = 7}, be));
  // Every warm-up adapter and combination (issue 33, point 2), including a warm-up so short that
  // a metric window closes on its last transition.
  auto const W = [&](char const* c, auto pipe, std::int64_t chains = 64) {
    if (want(c)) print(c, sample(pipe, {.chains = chains, .steps = 60, .seed = 7}, be));
  };
  W("Wm", mala(U10, {.step_size = 0.1}) | warmup(300) | record());
  W("Wmd", mala(U10, {.step_size = 0.1}) | warmup(300, step_size(), diagonal_mass({.gradients = false})) | record());
  W("Whd", hmc(U10, {.step_size = 0.1, .integrator_steps = 8}) | warmup(300, step_size(), dense_mass()) | record());
  W("Whp", hmc(U10, {.step_size = 0.1, .integrator_steps = 8}) | warmup(300, step_size(per_chain), diagonal_mass()) | record());
  W("Wmp", mala(U10, {.step_size = 0.1}) | warmup(200, step_size(per_chain, {.target = 0.7})) | record());
  W("Wcd", hmc(U10, {.step_size = 0.1, .integrator_steps = 8}) | warmup(300, step_size(), dense_mass(), chees()) | record());
  W("Wc", hmc(U10, {.step_size = 0.1, .integrator_steps = 8}) | warmup(200, step_size(), chees({.learning_rate = 0.05})) | record());
  W("Wu", underdamped_langevin(U10, {}) | warmup(300) | record());
  W("Wau", adjusted_underdamped_langevin(U10, {}) | warmup(300) | record());
  W("W5", hmc(U10, {.step_size = 0.1, .integrator_steps = 8}) | warmup(5, step_size(), diagonal_mass(), chees()) | record());
  W("W7p", mala(U10, {.step_size = 0.1}) | warmup(7, step_size(per_chain), diagonal_mass()) | record());
  if (want("P1s")) print("P1s", sample(ula(U10, {.step_size = 0.1}) | record() | track(moments, acceptance),
                      {.chains = 37, .steps = 50, .seed = 7}, backend::scalar{.threads = 2}));
}
