// ember on the GPU: cases P1–P4, P6 and P7 of docs/performance.md on backend::cuda, one JSON line
// per case and chain count, in bench/cpu_suite.cpp's format plus "device". Every line carries the
// same moment check as the CPU lines (bench/moment_checks.hpp), so a speed is never shown without
// its correctness. P7 is ULA on the 10-d Gaussian of P1 at 10^3 ... 10^7 chains x 1,000 steps.
//
// The time is the wall clock of one sample() call (start draws, device allocation, the fused
// kernel, the final states' copy to the host), median of --repeats after one warm-up call: what a
// user waits for. The fused kernel alone is timed by ncu (bench/gpu_session.sh).
//
// --phases: P7's wall clock taken apart through the run API (run/run.hpp), one JSON line per chain
// count: start() (device and host allocation, start states), advance() (the fused kernels and
// the progress counters between chunks) and result() (the final states to the host), medians.
//
// --copies MB: where a recording's time goes when it comes back from the device, one JSON line a
// round: MB of device memory copied to fresh pageable host memory (as a run's first recording of
// that size), to the same memory again, to the same memory pinned by cudaHostRegister (and the
// pinning's own time), to cudaMallocHost memory (and its allocation's time). (A memset of fresh
// memory freed right after was removed by the compiler: not measured.) --case laps: issue 32's LAPS case (d = 10 normal, ChEES-HMC, 500 warm-up
// transitions then 1,000 draws, float) at --chains N (default 4,096), the sampling advance timed
// with every draw recorded and with none, and result(), medians of --repeats after a first round
// (its sampling apart: the recording lands in fresh memory), and the host cache's pinned bytes.
//
// usage: ember_cuda_bench [--quick] [--case P7|laps] [--chains N] [--repeats 10] [--phases] [--copies MB]
#include <ember/backend/cuda.cuh>
#include <ember/energy/double_well.hpp>
#include <ember/energy/rosenbrock.hpp>
#include <ember/energy/gaussian.hpp>
#include <ember/kernel/chees_hmc.hpp>
#include <ember/kernel/hmc.hpp>
#include <ember/kernel/ula.hpp>
#include <ember/pipeline/stages.hpp>
#include <ember/sample.hpp>

#include "moment_checks.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace ember;
using namespace ember_bench;

namespace {

int repeats = 10;
bool all_ok = true;
std::string device_name;

void line(char const* cs, int dim, long chains, long steps, double sec, std::string const& check) {
  if (check.find("\"ok\": false") != std::string::npos) all_ok = false;
  std::printf(
      "{\"case\": \"%s\", \"impl\": \"ember-cuda\", \"device\": \"%s\", \"dim\": %d, \"chains\": %ld, \"steps\": %ld, "
      "\"seconds\": %.6g, \"chain_steps_per_s\": %.6g, \"check\": %s}\n",
      cs, device_name.c_str(), dim, chains, steps, sec, double(chains) * double(steps) / sec, check.c_str());
  std::fflush(stdout);
}

template <class Pipe>
void run_case(char const* cs, Pipe const& pipe, long chains, long steps, auto const& check) {
  backend::cuda be{};
  auto once = [&] { return sample(pipe, {.chains = chains, .steps = steps, .seed = 7}, be); };
  auto res = once();  // warm-up: context, module load, first allocation
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    auto next = once();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    res = std::move(next);
  }
  std::sort(t.begin(), t.end());
  line(cs, Pipe::dim, chains, steps, t[t.size() / 2], check(res));
}

// P7's sample() in its three parts, to tell the fused kernel from the host side around it.
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class Pipe>
void phases(Pipe const& pipe, long chains, long steps) {
  using clock = std::chrono::steady_clock;
  auto secs = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
  std::vector<double> ts, ta, tr;
  for (int r = 0; r <= repeats; ++r) {  // the first round warms up
    auto const t0 = clock::now();
    auto run = start(pipe, {.chains = chains, .seed = 7, .progress = false}, backend::cuda{});
    auto const t1 = clock::now();
    run.advance(steps);
    auto const t2 = clock::now();
    auto res = std::move(run).result();
    auto const t3 = clock::now();
    if (r == 0) continue;
    ts.push_back(secs(t0, t1));
    ta.push_back(secs(t1, t2));
    tr.push_back(secs(t2, t3));
  }
  std::printf("{\"case\": \"P7-phases\", \"device\": \"%s\", \"chains\": %ld, \"steps\": %ld, \"start_s\": %.6g, "
              "\"advance_s\": %.6g, \"result_s\": %.6g, \"advance_chain_steps_per_s\": %.6g}\n",
              device_name.c_str(), chains, steps, median(ts), median(ta), median(tr), double(chains) * double(steps) / median(ta));
  std::fflush(stdout);
}

void copies(std::size_t mb) {
  using clock = std::chrono::steady_clock;
  auto secs = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
  std::size_t const bytes = mb << 20;
  void* dev = nullptr;
  if (cudaMalloc(&dev, bytes) != cudaSuccess || cudaMemset(dev, 1, bytes) != cudaSuccess) {
    std::fprintf(stderr, "--copies: cudaMalloc/cudaMemset of %zu MB failed\n", mb);
    all_ok = false;
    return;
  }
  cudaDeviceSynchronize();
  for (int r = 0; r < 3; ++r) {
    auto d2h = [&](void* h) {
      auto const a = clock::now();
      bool const ok = cudaMemcpy(h, dev, bytes, cudaMemcpyDeviceToHost) == cudaSuccess;
      auto const b = clock::now();
      if (!ok) all_ok = false;
      return secs(a, b);
    };
    char* fresh = static_cast<char*>(std::malloc(bytes));  // glibc: a fresh mapping above 128 KiB
    double const t_fresh = d2h(fresh);
    double const t_touched = d2h(fresh);
    auto a = clock::now();
    bool const reg = cudaHostRegister(fresh, bytes, cudaHostRegisterDefault) == cudaSuccess;
    double const t_register = secs(a, clock::now());
    double const t_registered = reg ? d2h(fresh) : -1;
    if (reg) cudaHostUnregister(fresh);
    std::free(fresh);
    char* fresh2 = static_cast<char*>(std::malloc(bytes));
    a = clock::now();
    bool const reg2 = cudaHostRegister(fresh2, bytes, cudaHostRegisterDefault) == cudaSuccess;
    double const t_register_fresh = secs(a, clock::now());
    double const t_registered_fresh = reg2 ? d2h(fresh2) : -1;
    if (reg2) cudaHostUnregister(fresh2);
    std::free(fresh2);
    void* pinned = nullptr;
    a = clock::now();
    bool const pin = cudaMallocHost(&pinned, bytes) == cudaSuccess;
    double const t_mallochost = secs(a, clock::now());
    double const t_pinned = pin ? d2h(pinned) : -1;
    double const t_pinned2 = pin ? d2h(pinned) : -1;
    a = clock::now();
    if (pin) cudaFreeHost(pinned);
    double const t_freehost = secs(a, clock::now());
    std::printf("{\"case\": \"copies\", \"device\": \"%s\", \"mb\": %zu, \"round\": %d, \"d2h_fresh_s\": %.6g, "
                "\"d2h_touched_s\": %.6g, \"register_touched_s\": %.6g, \"d2h_registered_s\": %.6g, "
                "\"register_fresh_s\": %.6g, \"d2h_registered_fresh_s\": %.6g, \"mallochost_s\": %.6g, "
                "\"d2h_pinned_s\": %.6g, \"d2h_pinned_again_s\": %.6g, \"freehost_s\": %.6g}\n",
                device_name.c_str(), mb, r, t_fresh, t_touched, t_register, t_registered, t_register_fresh,
                t_registered_fresh, t_mallochost, t_pinned, t_pinned2, t_freehost);
    std::fflush(stdout);
  }
  cudaFree(dev);
}

// Issue 32's LAPS case taken apart: the sampling advance with every draw recorded and with none.
void laps(long chains) {
  using clock = std::chrono::steady_clock;
  auto secs = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
  auto const U = gaussian<float, 10, covariance::isotropic>(vec<float, 10>{}, 1.0f);
  auto const base = chees_hmc(U, {.warmup = 500});
  auto one = [&](auto const& pipe, char const* what) {
    std::vector<double> tw, ts, tr;
    double first_s = 0;  // the first round's sampling: its recording in fresh memory
    for (int r = 0; r <= repeats; ++r) {
      auto run = start(pipe, {.chains = chains, .seed = 1, .progress = false}, backend::cuda{});
      auto const t0 = clock::now();
      run.advance(500);
      auto const t1 = clock::now();
      run.advance(1000);
      auto const t2 = clock::now();
      auto res = std::move(run).result();
      auto const t3 = clock::now();
      if (r == 0) {
        first_s = secs(t1, t2);
        continue;
      }
      tw.push_back(secs(t0, t1));
      ts.push_back(secs(t1, t2));
      tr.push_back(secs(t2, t3));
    }
    std::printf("{\"case\": \"laps-phases\", \"device\": \"%s\", \"chains\": %ld, \"draws\": %s, \"warmup_s\": %.6g, "
                "\"sampling_s\": %.6g, \"result_s\": %.6g, \"sampling_min_s\": %.6g, \"sampling_first_s\": %.6g, "
                "\"pinned_bytes\": %zu}\n",
                device_name.c_str(), chains, what, median(tw), median(ts), median(tr), *std::min_element(ts.begin(), ts.end()),
                first_s, ember::host_cache().pinned_bytes);
    std::fflush(stdout);
  };
  one(base, "\"none\"");
  one(base | record(), "\"recorded\"");
}

}  // namespace

int main(int argc, char** argv) {
  std::string only;
  bool quick = false, split = false;
  long p7_chains = 0, copy_mb = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--case") && i + 1 < argc) only = argv[++i];
    else if (!std::strcmp(argv[i], "--repeats") && i + 1 < argc) repeats = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--chains") && i + 1 < argc) p7_chains = std::atol(argv[++i]);
    else if (!std::strcmp(argv[i], "--phases")) split = true;
    else if (!std::strcmp(argv[i], "--copies") && i + 1 < argc) copy_mb = std::atol(argv[++i]);
  }
  if (repeats < 1) {
    std::fprintf(stderr, "ember_cuda_bench: --repeats must be at least 1\n");
    return 2;
  }
  if (p7_chains && only != "laps" && p7_chains != 1'000 && p7_chains != 10'000 && p7_chains != 100'000 && p7_chains != 1'000'000 &&
      p7_chains != 10'000'000) {
    std::fprintf(stderr, "ember_cuda_bench: --chains takes one of P7's counts, 1000 ... 10000000 (powers of 10)\n");
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "ember_cuda_bench: no CUDA device here; nothing to run.\n");
    return 77;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  device_name = prop.name;
  auto want = [&](char const* c) { return only.empty() || only == c; };
  if (copy_mb > 0) {
    copies(std::size_t(copy_mb));
    return all_ok ? 0 : 1;
  }
  if (only == "laps") {
    laps(p7_chains ? p7_chains : 4096);
    return all_ok ? 0 : 1;
  }
  long const scale = quick ? 10 : 1;

  auto U10 = bench_gaussian<10>();
  if (want("P1")) {
    auto const law = ula_law(10, 0.1, 100);
    auto const &m = law.first, &v = law.second;
    run_case("P1", ula(U10, {.step_size = 0.1f}), 10'000, 100, [&](auto const& r) { return check_moments(r, m, v); });
  }
  if (want("P2")) {
    std::vector<double> m, v;
    for (int i = 0; i < 10; ++i) {
      m.push_back(-1 + 2.0 * i / 9);
      v.push_back(0.5 + i / 9.0);
    }
    run_case("P2", hmc(U10, {.step_size = 0.1f, .integrator_steps = 10}), 1'000, 100,
             [&](auto const& r) { return check_moments(r, m, v); });
  }
  if (want("P3"))
    run_case("P3", ula(double_well<float, 2>{}, {.step_size = 0.01f}), 10'000, 100, [](auto const& r) {
      return check_reference(r, {0, 0}, {0.84119, 0.84119}, 0, 0, "grid quadrature of the 100-step ULA law");
    });
  if (want("P4"))
    run_case("P4", ula(rosenbrock<float, 2>{}, {.step_size = 1e-4f}), 10'000, 100, [](auto const& r) {
      return check_reference(r, {0.0120, 0.3391}, {0.3790, 0.2802}, 6e-4, 5e-4, "float64 Monte-Carlo reference");
    });
  if (want("P6")) {
    auto const law = ula_law(10, 0.1, 1000);
    auto const &m = law.first, &v = law.second;
    run_case("P6", ula(U10, {.step_size = 0.1f}), 1'000'000 / scale, 1000, [&](auto const& r) { return check_moments(r, m, v); });
  }
  if (want("P7")) {
    auto const law = ula_law(10, 0.1, 1000);
    auto const &m = law.first, &v = law.second;
    for (long chains : {1'000L, 10'000L, 100'000L, 1'000'000L, 10'000'000L}) {
      if (quick && chains > 100'000) break;
      if (p7_chains && chains != p7_chains) continue;
      if (split) {
        phases(ula(U10, {.step_size = 0.1f}), chains, 1000);
        continue;
      }
      run_case("P7", ula(U10, {.step_size = 0.1f}), chains, 1000, [&](auto const& r) { return check_moments(r, m, v); });
    }
  }
  return all_ok ? 0 : 1;
}
