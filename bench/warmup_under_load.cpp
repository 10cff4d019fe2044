// Warm-up of few chains on 1 and 2 threads, on a quiet machine and with competing processes
// (issue 26.4): a warm-up is one parallel region per transition, and a thread team woken for one
// SIMD batch of chains pays for its idle thread, most of all when the machine is busy. For C = 4
// and 16 chains (one batch) and 64 (four), MALA with `warmup(1000)` on a 10-d Gaussian, median
// seconds of 5 runs per setting; "load" runs one busy-looping process per core beside it.
// usage: ember_warmup_under_load [--repeats 5]
#include <ember/ember.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {
double seconds_of(int chains, int threads) {
  ember::vec<float, 10> mu{};
  auto pipe = ember::mala(ember::gaussian(mu, 1.f), {}) | ember::warmup(1000);
  auto const t0 = std::chrono::steady_clock::now();
  auto r = ember::sample(pipe, {.chains = chains, .steps = 0, .seed = 1, .progress = false}, ember::backend::cpu{.threads = threads});
  double const s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!(r.adapted().step_size > 0)) std::abort();
  return s;
}
std::vector<pid_t> start_load(int n) {
  std::vector<pid_t> pids;
  for (int i = 0; i < n; ++i) {
    pid_t p = fork();
    if (p == 0) {
      volatile unsigned long x = 0;
      for (;;) x = x + 1;
    }
    pids.push_back(p);
  }
  return pids;
}
void stop_load(std::vector<pid_t> const& pids) {
  for (auto p : pids) kill(p, SIGKILL);
  for (auto p : pids) waitpid(p, nullptr, 0);
}
}  // namespace

int main(int argc, char** argv) {
  int repeats = 5;
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--repeats") && i + 1 < argc) repeats = std::atoi(argv[++i]);
  int const cores = int(sysconf(_SC_NPROCESSORS_ONLN));
  for (bool load : {false, true}) {
    auto pids = load ? start_load(cores) : std::vector<pid_t>{};
    for (int chains : {4, 16, 64}) {
      double med[3] = {0, 0, 0};
      for (int threads : {1, 2}) {
        std::vector<double> s;
        for (int k = 0; k < repeats; ++k) s.push_back(seconds_of(chains, threads));
        std::sort(s.begin(), s.end());
        med[threads] = s[s.size() / 2];
      }
      std::printf("{\"load\": %s, \"chains\": %d, \"warmup_s_1_thread\": %.4f, \"warmup_s_2_threads\": %.4f, "
                  "\"ratio_2_over_1\": %.2f}\n",
                  load ? "true" : "false", chains, med[1], med[2], med[2] / med[1]);
      std::fflush(stdout);
    }
    stop_load(pids);
  }
}
