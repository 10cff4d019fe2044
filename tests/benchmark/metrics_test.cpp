// The benchmark matrix's metrics against known answers: b² and gradients-to-b² on synthetic
// draws whose bias is known exactly, ESS-per-gradient arithmetic, every health gate, and the JSON
// line (keys in the contract's order, null for undefined numbers, escaped strings).
#include <ember/benchmark/report.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

#include "benchmark/json_check.hpp"

namespace bm = ember::benchmark;

TEST_CASE("gradients to b² count up to the first draw from which the curve stays below 0.01", "[benchmark]") {
  std::vector<double> const curve{0.5, 0.005, 0.02, 0.005, 0.001};
  std::vector<double> const cumulative{0, 3, 6, 9, 12, 15};
  CHECK(bm::gradients_to_stay_below(curve, cumulative) == 12);  // below from draw 4 on
  std::vector<double> const never{0.005, 0.02};
  CHECK(std::isnan(bm::gradients_to_stay_below(never, cumulative)));
  std::vector<double> const always{0.001, 0.002};
  CHECK(bm::gradients_to_stay_below(always, cumulative) == 3);
}

// Two coordinates whose x² alternates 0.5, 1.5, 0.5, ... in every chain: the running mean of x²
// over the first n draws is 1 at even n and 1 − 0.5/n at odd n; the pooled variance of x² is
// V = 0.25·S/(S − 1). Coordinate 0 against E x² = 0.96 (biased: b² = 0.04²/V at the end),
// coordinate 1 against E x² = 1 (b² = (0.5/n)²/V at odd n, 0 at even n).
//  - b²_max stays below 0.01 from n = 10 (n = 9: (0.5/9)²/V = 0.0123);
//  - b²_avg from n = 8 (n = 7: ((0.04 − 0.5/7)² + (0.5/7)²)/2V = 0.0122; n = 9: 0.0066).
TEST_CASE("b² and gradients to b² on draws whose bias is known", "[benchmark]") {
  constexpr int D = 2;
  std::int64_t const C = 4, N = 100;
  std::vector<double> xs(std::size_t(D * C * N));
  for (int d = 0; d < D; ++d)
    for (std::int64_t c = 0; c < C; ++c)
      for (std::int64_t i = 0; i < N; ++i) {
        double const sign = ((i / 2 + c + d) % 3 == 0) ? -1 : 1;  // signs vary; x² does not
        xs[std::size_t((d * C + c) * N + i)] = sign * std::sqrt(i % 2 == 0 ? 0.5 : 1.5);
      }
  ember::targets::reference_moments<D> ref;
  ref.second = {0.96, 1.0};
  std::vector<double> cumulative(N + 1);
  for (std::int64_t n = 0; n <= N; ++n) cumulative[std::size_t(n)] = 3.0 * double(n);  // 3 gradients per transition
  bm::configuration_metrics m;
  bm::measure_draws(m, xs, D, C, N, bm::view_of(ref), cumulative);
  double const V = 0.25 * double(C * N) / double(C * N - 1);
  CHECK(m.b2_max == Approx(0.04 * 0.04 / V).epsilon(1e-9));
  CHECK(m.b2_avg == Approx(0.04 * 0.04 / V / 2).epsilon(1e-9));
  CHECK(m.grads_to_b2_max == 30);
  CHECK(m.grads_to_b2_avg == 24);
}

// b² is the squared error of one chain's estimate, not of the chains' pooled mean: two chains
// whose x² is 0.5 and 1.5 at every draw pool to exactly E x² = 1, yet each chain alone is 0.5 off,
// so b² = 0.25/V at every n (V = 0.25·S/(S − 1), S = 2N) and never falls below 0.01.
TEST_CASE("b² squares each chain's error before averaging over chains", "[benchmark]") {
  std::int64_t const C = 2, N = 50;
  std::vector<double> xs(std::size_t(C * N));
  for (std::int64_t c = 0; c < C; ++c)
    for (std::int64_t i = 0; i < N; ++i) xs[std::size_t(c * N + i)] = std::sqrt(c == 0 ? 0.5 : 1.5);
  ember::targets::reference_moments<1> ref;
  ref.second = {1.0};
  std::vector<double> cumulative(N + 1);
  for (std::int64_t n = 0; n <= N; ++n) cumulative[std::size_t(n)] = double(n);
  bm::configuration_metrics m;
  bm::measure_draws(m, xs, 1, C, N, bm::view_of(ref), cumulative);
  double const V = 0.25 * double(C * N) / double(C * N - 1);
  CHECK(m.b2_avg == Approx(0.25 / V).epsilon(1e-9));
  CHECK(m.b2_max == Approx(0.25 / V).epsilon(1e-9));
  CHECK(std::isnan(m.grads_to_b2_avg));
}

TEST_CASE("the bias gate fires on draws whose mean is off by 12 standard errors, not on unbiased ones", "[benchmark]") {
  std::int64_t const C = 8, N = 500;
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal;
  std::vector<double> xs(std::size_t(C * N));
  for (auto& x : xs) x = normal(rng);
  ember::targets::reference_moments<1> ref;
  ref.second = {1.0};
  std::vector<double> cumulative(N + 1, 0.0);
  bm::configuration_metrics good;
  bm::measure_draws(good, xs, 1, C, N, bm::view_of(ref), cumulative);
  CHECK(good.z_max < 5);
  CHECK(good.rhat_max < 1.01);
  for (auto& x : xs) x += 0.2;  // 0.2 / (1/√4000) ≈ 12.6 standard errors
  bm::configuration_metrics bad;
  bm::measure_draws(bad, xs, 1, C, N, bm::view_of(ref), cumulative);
  CHECK(bad.z_max > 10);
  // A posterior without reference moments (NaN: unknown) has no bias gate, whatever its draws.
  ref.mean = {std::numeric_limits<double>::quiet_NaN()};
  ref.second = {std::numeric_limits<double>::quiet_NaN()};
  bm::configuration_metrics unknown;
  bm::measure_draws(unknown, xs, 1, C, N, bm::view_of(ref), cumulative);
  CHECK(unknown.z_max == 0);
  CHECK(unknown.rhat_max < 1.01);
}

TEST_CASE("finish derives ESS per second and per gradient and names every failed gate", "[benchmark]") {
  bm::configuration_metrics m;
  m.chains = 10;
  m.draws = 100;
  m.sampling_s = 2;
  m.grads_sampling = 500;
  m.ess_bulk_x = 2000;
  m.ess_bulk_x2 = 1500;
  m.ess_tail_x = 900;
  m.rhat_max = 1.005;
  m.acceptance = 0.75;
  m.target_acceptance = 0.8;
  m.z_max = 1;
  bm::finish(m);
  CHECK(m.ess_min == 1500);
  CHECK(m.ess_per_s == 750);
  CHECK(m.ess_per_grad == Approx(1500.0 / (10 * 500)));
  CHECK(m.health == "ess>draws");  // 1500 > 10 chains × 100 draws
  m.ess_bulk_x2 = 800;
  bm::finish(m);
  CHECK(m.health == "ok");
  m.divergences = 1;
  m.rhat_max = 1.02;
  m.acceptance = 0.5;
  m.z_max = 6;
  m.ess_bulk_x = m.ess_bulk_x2 = 5000;
  bm::finish(m);
  CHECK(m.health == "divergences,rhat,acceptance,bias,ess>draws");
  // A harmonic target (ChEES): an arithmetic acceptance above the band passes, below it fails.
  m.divergences = 0;
  m.rhat_max = 1.005;
  m.z_max = 1;
  m.ess_bulk_x = m.ess_bulk_x2 = 500;
  m.target_acceptance = 0.651;
  m.acceptance = 0.77;
  bm::finish(m);
  CHECK(m.health == "acceptance");
  m.harmonic_target = true;
  bm::finish(m);
  CHECK(m.health == "ok");
  m.acceptance = 0.54;
  bm::finish(m);
  CHECK(m.health == "acceptance");
  // No target acceptance (ULA): no acceptance gate. A NaN R̂ (stuck chains) fails.
  m = {};
  m.chains = 10;
  m.draws = 100;
  m.ess_bulk_x = m.ess_bulk_x2 = 100;
  m.rhat_max = std::nan("");
  m.acceptance = 1;
  m.z_max = 0;
  bm::finish(m);
  CHECK(m.health == "rhat");
}

TEST_CASE("a configuration's JSON line has the contract's keys in order, null where undefined", "[benchmark]") {
  bm::configuration_metrics m;
  m.target = "banana";
  m.sampler = "mala";
  m.precision = "float";
  m.backend = "cpu";
  m.chains = 128;
  m.warmup = 1000;
  m.draws = 1000;
  m.dim = 2;
  m.warmup_s = 0.5;
  m.sampling_s = 0.25;
  m.grads_warmup = 1000;
  m.grads_sampling = 1000;
  m.ess_bulk_x = 3000;
  m.ess_bulk_x2 = 2500;
  m.ess_tail_x = 2000;
  m.b2_avg = 0.001;
  m.b2_max = 0.002;
  m.grads_to_b2_avg = 40;
  m.rhat_max = 1.001;
  m.acceptance = 0.6;
  m.target_acceptance = 0.574;
  m.z_max = 1;
  bm::finish(m);
  CHECK(bm::json_line(m) ==
        "{\"impl\": \"ember\", \"target\": \"banana\", \"sampler\": \"mala\", \"precision\": \"float\", \"backend\": "
        "\"cpu\", \"chains\": 128, \"warmup\": 1000, \"draws\": 1000, \"seed\": 0, \"dim\": 2, \"compile_s\": null, \"warmup_s\": "
        "0.5, \"sampling_s\": 0.25, \"grads_warmup\": 1000, \"grads_sampling\": 1000, \"ess_bulk_x\": 3000, "
        "\"ess_bulk_x2\": 2500, \"ess_tail_x\": 2000, \"ess_min\": 2500, \"ess_per_s\": 10000, \"ess_per_grad\": "
        "0.0195312, \"ess_per_s_with_warmup\": 3333.33, \"ess_per_grad_with_warmup\": 0.00976562, \"grads_to_b2_avg\": 40, \"grads_to_b2_max\": null, \"b2_avg\": 0.001, \"b2_max\": 0.002, "
        "\"divergences\": 0, \"rhat_max\": 1.001, \"acceptance\": 0.6, \"target_acceptance\": 0.574, \"health\": "
        "\"ok\", \"skipped\": null, \"threads\": 0, \"machine\": \"\"}");
  CHECK(ember_test::json_object_keys(bm::json_line(m)).size() == 35);
  bm::configuration_metrics s;
  s.target = "t";
  s.skipped = "a \"quoted\" reason";
  std::string const line = bm::json_line(s);
  CHECK(line.find("\"skipped\": \"a \\\"quoted\\\" reason\"") != std::string::npos);
  CHECK(line.find("\"health\": null") != std::string::npos);
  CHECK(ember_test::json_object_keys(line).size() == 35);
}
