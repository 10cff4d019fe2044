// The approach (adapt/approach.hpp) and MAMS's length adapter (adapt/mams_length.hpp): adjusted
// MCLMC moves by HMC until the first metric window closes and by its own dynamics from then on,
// after warm-up too; the approach form leaves a correlated Gaussian invariant (it is exact HMC)
// and evaluates at most 16 gradients a transition (counted by the energy); the length adapter's
// effective samples per transition are set by the slowest coordinates (a harmonic mean). What the
// approach is for, chains that start far away, is tested on the posteriordb posteriors that
// failed without it (bench/posteriordb/check_samplers.cpp: earnings-earn_height, and arma11,
// which needs the step size's harmonic mean while in the approach form).
#include "generic/sampler_checks.hpp"
#include "support/counted_energy.hpp"
#include <ember/ember.hpp>

#include <cstdint>
#include <vector>

namespace {

using namespace ember;
using ember_test::counted_energy;
using ember_test::gaussian10;

// An adapter that tunes nothing and writes down, for every warm-up transition, whether the kernel
// that ran it was in its approach form.
std::vector<int>* approach_log = nullptr;
struct approach_recorder {
  struct state {};
  template <class K>
  state init(K const&, warmup_setup const&) const {
    return {};
  }
  template <class K>
  void set(state const&, kernel_params<K>&) const {}
  template <class K, class R>
  void update(state&, warmup_step<K, R> const& step) const {
    approach_log->push_back(step.kernel.approach ? 1 : 0);
  }
};


}  // namespace

TEST_CASE("the approach runs until the first metric window closes, and never after", "[adapt][approach][mams]") {
  gaussian10 g;
  for (std::int64_t warm : {200, 1000, 40}) {
    std::vector<int> log;
    approach_log = &log;
    auto pipe = adjusted_mclmc(g.energy()) | warmup(warm, approach(), step_size(), diagonal_mass(), mams_length(), approach_recorder{}) |
                record();
    auto run = start(pipe, {.chains = 32, .steps = 10, .seed = 5, .progress = false});
    run.advance(1);
    CHECK(run.kernel().approach);  // the kernel of the next warm-up transition
    run.advance(warm - 1);
    // After warm-up the kernel moves by its own dynamics, whatever the warm-up's length.
    CHECK_FALSE(run.kernel().approach);
    run.advance(10);
    approach_log = nullptr;
    REQUIRE(std::int64_t(log.size()) == warm);
    std::int64_t const first_close = mass_windows(warm).ends.front();
    INFO("warm-up " << warm << ", first window closes after transition " << first_close);
    for (std::int64_t t = 0; t < warm; ++t) CHECK(log[std::size_t(t)] == (t <= first_close ? 1 : 0));
    CHECK(run.result().divergent_chains() == 0);
  }
}

TEST_CASE("adjusted mclmc's approach form is exact HMC: a correlated gaussian stays invariant", "[adapt][approach][statistics]") {
  gaussian10 g;
  std::int64_t const chains = 40'000;
  auto check = [&](auto const& k, std::uint64_t seed) {
    auto r = sample(k | burn_in(4), {.chains = chains, .steps = 1, .seed = seed, .init = g.exact_draws(chains, seed)});
    CHECK(r.divergent_transitions() == 0);
    INFO("acceptance " << r.acceptance_rate());
    CHECK(r.acceptance_rate() < 0.8);  // the Metropolis test carries the law
    ember_test::check_gaussian_moments<decltype(r), 10>(r, g.mu, g.sigma, gaussian10::pairs());
  };
  check(adjusted_mclmc(g.energy(), {.step_size = 1.0, .trajectory_length = 5, .random_length = false}).with_approach(true), 41);
  auto const l = g.cholesky();
  dense_metric<float, 10> dense{};
  for (int i = 0; i < 10; ++i)
    for (int j = 0; j <= i; ++j) dense.lower[i * (i + 1) / 2 + j] = float(l[i][j]);
  check(adjusted_mclmc(g.energy(), {.step_size = 1.7, .trajectory_length = 7}).with_metric(dense).with_approach(true), 42);
}

TEST_CASE("the approach form takes min(n, 16) velocity verlet steps of one gradient each", "[adapt][approach]") {
  // Counted by the energy itself (one thread: the counter is not atomic); the difference of two
  // runs cancels the start's evaluations.
  std::int64_t evaluations = 0;
  counted_energy<gaussian<float, 4, covariance::isotropic>> const U{{vec<float, 4>{}, 1.0f}, &evaluations};
  std::int64_t const chains = 37;
  for (double L : {0.9, 10.0}) {  // 3 and 34 steps: 3 and 16
    auto const k = adjusted_mclmc(U, {.step_size = 0.3, .trajectory_length = L, .random_length = false}).with_approach(true);
    std::int64_t counts[2];
    for (int i = 0; i < 2; ++i) {
      evaluations = 0;
      auto r = sample(k | record(), {.chains = chains, .steps = 10 * (i + 1), .seed = 6}, backend::scalar{.threads = 1});
      counts[i] = evaluations;
      CHECK(r.gradients() == (L < 1 ? 3 : 16) * chains * 10 * (i + 1));
    }
    CHECK(counts[1] - counts[0] == (L < 1 ? 3 : 16) * chains * 10);
  }
  // The metric keeps the form, and the form the metric.
  auto const k = adjusted_mclmc(U, {.step_size = 0.3, .trajectory_length = 1}).with_approach(true);
  CHECK(k.with_metric(diagonal_metric<float, 4>{}).approach);
  CHECK(k.with_step_size(0.1).with_trajectory_length(2).approach);
}

TEST_CASE("mams_length's effective samples per transition are the harmonic mean over coordinates", "[adapt][mams]") {
  mams_length_state<3> s;
  // Lag-1 correlations 0.9, 0.9 and 0: (1 − ρ)/(1 + ρ) = 1/19, 1/19, 1; harmonic mean 3/39.
  for (int i = 0; i < 3; ++i) s.var0[i] = s.var1[i] = 2;
  s.cov[0] = s.cov[1] = 1.8;
  s.cov[2] = 0;
  CHECK(s.ess_per_transition() == Approx(3.0 / 39).epsilon(1e-12));
  // c grows by 0.4 / ESS, clipped at 4 a time.
  s.correct();
  CHECK(s.c == 4);
  // No coordinate measured: nothing to correct with.
  mams_length_state<3> empty;
  CHECK(empty.ess_per_transition() == 0);
  empty.correct();
  CHECK(empty.c == 1);
}
