// Warm-up adaptation, judged by statistics: dual averaging reaches its target acceptance, the
// adapted diagonal metric matches the target's variances within the error of its window, ChEES's
// trajectory length lands where its criterion predicts, jitter breaks a resonance that plain HMC
// falls into, and draws after warm-up have the target's moments (one draw per chain, so the
// standard errors are exact).
#include <ember/ember.hpp>
#include <ember/targets/ill_conditioned_gaussian.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

using ember::vec;

namespace {

constexpr double z_bound = 5;

// The 50-d Gaussian with variances log-spaced from 10⁻³ to 1 (condition number 1000).
constexpr int D50 = 50;
auto ill_conditioned() {
  vec<float, D50> mu, sd;
  for (int i = 0; i < D50; ++i) {
    mu[i] = 0.1f * float(i % 5);
    sd[i] = float(std::pow(10.0, -1.5 * i / (D50 - 1)));
  }
  return ember::gaussian<float, D50, ember::covariance::diagonal>(mu, sd);
}
double sd_of(int i) { return std::pow(10.0, -1.5 * i / (D50 - 1)); }
double mean_of(int i) { return 0.1 * (i % 5); }

// Mean and standard error over chains of the per-chain acceptance rates after warm-up.
template <class R>
std::pair<double, double> acceptance_and_se(R const& r) {
  double m = 0, q = 0;
  auto const n = double(r.chains());
  for (std::int64_t c = 0; c < r.chains(); ++c) {
    double a = double(r.accepted(c)) / double(r.kept_transitions());
    m += a;
    q += a * a;
  }
  m /= n;
  return {m, std::sqrt(std::max(q / n - m * m, 0.0) / (n - 1))};
}

// z-scores of the final states' mean and variance per coordinate against N(mean_of, sd_of²).
template <class R>
double worst_moment_z(R const& r, int dims, double (*mean)(int), double (*sd)(int)) {
  double worst = 0;
  auto const n = double(r.chains());
  for (int d = 0; d < dims; ++d) {
    double m = 0, q = 0;
    for (std::int64_t c = 0; c < r.chains(); ++c) m += double(r.final_state(c)[d]);
    m /= n;
    for (std::int64_t c = 0; c < r.chains(); ++c) q += std::pow(double(r.final_state(c)[d]) - m, 2);
    double const var = q / (n - 1), s2 = sd(d) * sd(d);
    double const zm = (m - mean(d)) / std::sqrt(s2 / n), zv = (var - s2) / (s2 * std::sqrt(2 / (n - 1)));
    worst = std::max({worst, std::abs(zm), std::abs(zv)});
  }
  return worst;
}

}  // namespace

TEST_CASE("dual averaging reaches its target acceptance on an ill-conditioned 50-d gaussian", "[adapt][step_size]") {
  // The acceptance after warm-up, over seeds. Each seed's warm-up ends at a different step size
  // (dual averaging's iterate moves by e^{±0.4} at the end with 256 chains pooled), so the
  // Monte-Carlo error of an adapted acceptance is its spread over seeds, not the sampling error
  // of one run. Averaging log ε over iterates that spread biases the result slightly low
  // (Jensen): measured −0.009 for MALA and −0.005 for HMC, within that error.
  auto check = [](auto kernel, double target) {
    std::vector<double> acc;
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
      auto r = ember::sample(kernel | ember::warmup(1000, ember::step_size()),
                             {.chains = 256, .steps = 200, .seed = seed, .progress = false});
      acc.push_back(acceptance_and_se(r).first);
    }
    double m = 0, q = 0;
    for (double a : acc) m += a;
    m /= double(acc.size());
    for (double a : acc) q += (a - m) * (a - m);
    double const sd = std::sqrt(q / double(acc.size() - 1));
    INFO("acceptance after warm-up " << m << ", sd over seeds " << sd << " (target " << target << ")");
    CHECK(std::abs(m - target) < z_bound * sd);
  };
  check(ember::mala(ill_conditioned(), {}), 0.574);
  check(ember::hmc(ill_conditioned(), {.integrator_steps = 5}), 0.8);
}

TEST_CASE("the adapted diagonal metric matches the target's variances", "[adapt][metric]") {
  // The last metric window pools C chains over its transitions; each chain's window average of
  // (x − μ)² has variance at most that of one draw, 2σ⁴, so the estimate's standard error is at
  // most σ²√(2/C) whatever the autocorrelation.
  std::int64_t const C = 512;
  auto r = ember::sample(ember::mala(ill_conditioned(), {}) | ember::warmup(600), {.chains = C, .steps = 0, .seed = 9, .progress = false});
  auto const& scale = r.adapted().metric_scale;
  REQUIRE(scale.size() == std::size_t(D50));
  double worst = 0;
  for (int i = 0; i < D50; ++i) {
    double const s2 = sd_of(i) * sd_of(i);
    double const z = (scale[std::size_t(i)] * scale[std::size_t(i)] - s2) / (s2 * std::sqrt(2.0 / double(C)));
    worst = std::max(worst, std::abs(z));
  }
  INFO("worst z of an adapted variance: " << worst);
  CHECK(worst < z_bound);
}

TEST_CASE("draws after warm-up have the target's moments", "[adapt][statistics]") {
  for (int which = 0; which < 2; ++which) {
    INFO((which == 0 ? "mala" : "hmc") << " with warmup(1000)");
    auto opt = ember::sample_options<float, D50>{.chains = 2000, .steps = 100, .seed = 21, .progress = false};
    double z = which == 0 ? worst_moment_z(ember::sample(ember::mala(ill_conditioned(), {}) | ember::warmup(1000), opt), D50, mean_of, sd_of)
                          : worst_moment_z(ember::sample(ember::hmc(ill_conditioned(), {.integrator_steps = 5}) | ember::warmup(1000), opt), D50, mean_of, sd_of);
    INFO("worst |z| over 50 means and 50 variances: " << z);
    CHECK(z < z_bound);
  }
}

TEST_CASE("ChEES's trajectory length lands where its criterion predicts", "[adapt][chees]") {
  // On N(0, I) with small steps, a trajectory of time τ moves each coordinate on
  // x(τ) = x cos τ + v sin τ, and with x, v independent standard normals
  //   E[(‖x'‖² − ‖x‖²)(x'·v')] = d·sin 2τ,
  // so ChEES's gradient estimate with respect to log T at a transition with Halton number u,
  // which runs n = ⌈uT/ε⌉ leapfrog steps (τ = nε), has mean uT·d·sin 2τ. Adam settles where its
  // average over u vanishes: the first T at which Σ_u uT sin(2ε⌈uT/ε⌉) turns negative, computed
  // here on a grid with the adapted ε (leapfrog's frequency shift, cos ωε = 1 − ε²/2, included).
  constexpr int d = 20;
  auto U = ember::gaussian(vec<double, d>{}, 1.0);
  std::vector<double> Ts, eps;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    auto r = ember::sample(ember::hmc(U, {.integrator_steps = 1}) | ember::warmup(1500, ember::step_size({.target = 0.95}), ember::chees()),
                           {.chains = 512, .steps = 0, .seed = seed, .progress = false}, ember::backend::cpu{.threads = 1});
    Ts.push_back(r.adapted().trajectory_length);
    eps.push_back(r.adapted().step_size);
  }
  double T = 0, e = 0;
  for (std::size_t i = 0; i < Ts.size(); ++i) {
    T += Ts[i] / double(Ts.size());
    e += eps[i] / double(eps.size());
  }
  double const omega = std::acos(1 - e * e / 2) / e;
  auto gradient = [&](double Tc) {
    double s = 0;
    for (int k = 1; k <= 4096; ++k) {
      double const u = ember::halton(std::uint64_t(k), 2);
      s += u * Tc * std::sin(2 * omega * e * std::max(1.0, std::ceil(u * Tc / e)));
    }
    return s;
  };
  double root = 0;
  for (double Tc = 0.2; Tc < 6 && root == 0; Tc += 0.001)
    if (gradient(Tc) < 0) root = Tc;
  double q = 0;
  for (double t : Ts) q += (t - T) * (t - T);
  double const sd = std::sqrt(q / double(Ts.size() - 1));
  INFO("adapted T " << T << " (sd over seeds " << sd << "; seeds: " << Ts[0] << ", " << Ts[1] << ", " << Ts[2]
                    << ", ...), step size " << e << "; the estimator's fixed point " << root);
  CHECK(std::abs(T - root) < z_bound * sd / std::sqrt(double(Ts.size())));
}

TEST_CASE("ChEES with a diagonal metric ends at its target acceptance and at the isotropic trajectory length",
          "[adapt][chees]") {
  // The benchmark's 100-d Gaussian with variances from 0.1 to 10, and N(0, I). Once the diagonal
  // metric whitens the first, both are N(0, I) in the metric's units, so ChEES must end with the
  // same T and the same acceptance on both. What ChEES targets is the harmonic mean over chains
  // of each transition's acceptance probability, so that is measured after warm-up: 256 chains
  // run 50 more transitions of the tuned kernel, and each transition's harmonic mean is averaged.
  // Each seed's warm-up ends somewhere else, so the Monte-Carlo error of these figures is their
  // spread over seeds; the bands are 5 standard errors of the mean over 5 seeds. Before ChEES
  // carried T across metric changes, the first target ended at T = 7.8 (a later maximum of the
  // criterion) against 1.8, and the step size was kept at arithmetic acceptance 0.70-0.76. One
  // thread: a run's draws do not depend on it, and 1,000 one-transition warm-up chunks cost
  // thread start-ups that a loaded test machine makes slow.
  constexpr int d = 100;
  auto adapt = [](auto const& U, std::uint64_t seed) {
    auto run = ember::start(ember::hmc(U, {}) | ember::warmup(1000, ember::step_size(), ember::diagonal_mass(), ember::chees()),
                            {.chains = 256, .seed = seed, .progress = false}, ember::backend::cpu{.threads = 1});
    run.advance(1000);
    auto const k = run.kernel();
    auto const res = run.result();
    double acceptance = 0;
    int const n = 50;
    std::vector<decltype(k.init(vec<float, d>{}))> s;
    for (std::int64_t c = 0; c < res.chains(); ++c) s.push_back(k.init(res.final_state(c)));
    for (int t = 0; t < n; ++t) {
      double inv = 0, m = 0;
      for (std::size_t c = 0; c < s.size(); ++c) {
        ember::chain_rng<float> rng{std::uint32_t(seed), 77u, std::uint32_t(c), std::uint32_t(1000 + t)};
        double const a = double(k.step(s[c], rng).accept_prob);
        if (a > 0) {
          inv += 1 / a;
          m += 1;
        }
      }
      acceptance += m / inv / n;
    }
    return std::pair{std::log(double(k.trajectory_length)), acceptance};
  };
  auto const ill = ember::targets::ill_conditioned_gaussian<float>{}.energy();
  auto const iso = ember::gaussian(vec<float, d>{}, 1.f);
  std::vector<double> log_T_ill, log_T_iso, acc_ill, acc_iso;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    auto [a, b] = adapt(ill, seed);
    auto [c, e] = adapt(iso, seed);
    log_T_ill.push_back(a);
    acc_ill.push_back(b);
    log_T_iso.push_back(c);
    acc_iso.push_back(e);
  }
  auto mean_se = [](std::vector<double> const& x) {
    double m = 0, q = 0;
    for (double v : x) m += v / double(x.size());
    for (double v : x) q += (v - m) * (v - m);
    return std::pair{m, std::sqrt(q / double(x.size() - 1) / double(x.size()))};
  };
  auto [lt_ill, se_lt_ill] = mean_se(log_T_ill);
  auto [lt_iso, se_lt_iso] = mean_se(log_T_iso);
  auto [a_ill, se_a_ill] = mean_se(acc_ill);
  auto [a_iso, se_a_iso] = mean_se(acc_iso);
  INFO("T: ill-conditioned " << std::exp(lt_ill) << " (log se " << se_lt_ill << "), isotropic " << std::exp(lt_iso)
                             << " (log se " << se_lt_iso << ")");
  INFO("harmonic acceptance: ill-conditioned " << a_ill << " (se " << se_a_ill << "), isotropic " << a_iso << " (se "
                                               << se_a_iso << "); target 0.8");
  CHECK(std::abs(lt_ill - lt_iso) < z_bound * std::hypot(se_lt_ill, se_lt_iso));
  CHECK(std::abs(a_ill - 0.8) < z_bound * se_a_ill);
  CHECK(std::abs(a_iso - 0.8) < z_bound * se_a_iso);
}

TEST_CASE("jittered hmc at eps*L = pi mixes where plain hmc falls into the resonance", "[adapt][jitter]") {
  // On N(0, I) a trajectory of length π maps x to about −x whatever the momentum: plain HMC from
  // a fixed start flips between x₀ and −x₀ and never reaches the target's variance. Jittering the
  // step size over ε(1 ± ½) spreads the trajectory lengths over (π/2, 3π/2).
  constexpr int d = 4;
  auto U = ember::gaussian(vec<float, d>{}, 1.f);
  double const pi = 3.14159265358979;
  std::vector<vec<float, d>> start(2000);
  for (auto& x : start)
    for (int i = 0; i < d; ++i) x[i] = 1.5f;
  ember::sample_options<float, d> opt{.chains = 2000, .steps = 300, .seed = 8, .init = start, .progress = false};
  auto one = [](int) { return 1.0; };
  auto zero = [](int) { return 0.0; };
  auto plain = ember::sample(ember::hmc(U, {.step_size = pi / 20, .integrator_steps = 20}), opt);
  auto jittered = ember::sample(ember::hmc(U, {.step_size = pi / 20, .integrator_steps = 20, .jitter = 0.5}), opt);
  double const zp = worst_moment_z(plain, d, +zero, +one), zj = worst_moment_z(jittered, d, +zero, +one);
  INFO("worst |z| plain " << zp << ", jittered " << zj);
  CHECK(zp > z_bound);  // the failing case
  CHECK(zj < z_bound);
}

TEST_CASE("per-chain step sizes bring every chain to its target acceptance where chains really differ",
          "[adapt][step_size][per_chain]") {
  // Two modes 12 apart with scales 1 and 0.1: a chain started in one stays there (the barrier is
  // e^{-18} and more), so half the chains need a step size 10 (HMC) or 100 (MALA) times the other
  // half's. As in the pooled test above, the Monte-Carlo error of an adapted acceptance is its
  // spread over independent adaptations; with step_size(per_chain) every chain is one, so within each mode the
  // mean acceptance after warm-up must be within 5 spreads of the target. The pooled step size,
  // one compromise for both modes, fails that test (the failing case), and its spread of
  // per-chain acceptance over all chains is much wider. Draws after warm-up have each mode's
  // moments (one draw per chain, so the standard errors are exact).
  constexpr int d = 2;
  constexpr std::int64_t C = 512;
  double const mu[2] = {-6, 6}, sd[2] = {1, 0.1};
  auto U = ember::gaussian_mixture<float, d, 2>({0.5f, 0.5f}, {vec<float, d>{{-6.f, 0.f}}, vec<float, d>{{6.f, 0.f}}},
                                                {1.f, 0.1f});
  std::vector<vec<float, d>> start(C);
  for (std::int64_t c = 0; c < C; ++c) start[std::size_t(c)] = vec<float, d>{{float(mu[c % 2]), 0.f}};
  ember::sample_options<float, d> opt{.chains = C, .steps = 400, .seed = 31, .init = start, .progress = false};
  auto per_mode = [&](auto const& r, int mode) {
    double m = 0, q = 0, n = 0;
    for (std::int64_t c = mode; c < C; c += 2) {
      double const a = double(r.accepted(c)) / double(r.kept_transitions());
      m += a;
      q += a * a;
      ++n;
    }
    m /= n;
    return std::pair{m, std::sqrt(std::max(q / n - m * m, 0.0) * n / (n - 1))};
  };
  auto spread = [&](auto const& r) {
    auto [m0, s0] = per_mode(r, 0);
    auto [m1, s1] = per_mode(r, 1);
    double const m = (m0 + m1) / 2;
    return std::sqrt((s0 * s0 + s1 * s1) / 2 + ((m0 - m) * (m0 - m) + (m1 - m) * (m1 - m)) / 2);
  };
  auto check = [&](auto kernel, double target) {
    auto per_chain = ember::sample(kernel | ember::warmup(1000, ember::step_size(ember::per_chain)), opt);
    auto pooled = ember::sample(kernel | ember::warmup(1000, ember::step_size()), opt);
    REQUIRE(per_chain.divergent_chains() == 0);
    REQUIRE(per_chain.adapted().step_sizes.size() == std::size_t(C));
    bool pooled_fails = false;
    for (int mode = 0; mode < 2; ++mode) {
      auto [m, s] = per_mode(per_chain, mode);
      auto [mp, sp] = per_mode(pooled, mode);
      double e = 0;
      for (std::int64_t c = mode; c < C; c += 2) e += std::log(per_chain.adapted().step_sizes[std::size_t(c)]) / double(C / 2);
      INFO("mode " << mode << " (sd " << sd[mode] << "): per-chain acceptance " << m << " (spread " << s
                   << ", geometric mean eps " << std::exp(e) << "); pooled " << mp << " (spread " << sp << ", eps "
                   << pooled.adapted().step_size << "); target " << target);
      CHECK(std::abs(m - target) < z_bound * s);
      pooled_fails = pooled_fails || std::abs(mp - target) > z_bound * sp;
      double const n = double(C / 2);
      for (int i = 0; i < d; ++i) {
        double const centre = i == 0 ? mu[mode] : 0.0;
        double xm = 0, xq = 0;
        for (std::int64_t c = mode; c < C; c += 2) xm += double(per_chain.final_state(c)[i]) / n;
        for (std::int64_t c = mode; c < C; c += 2) xq += std::pow(double(per_chain.final_state(c)[i]) - xm, 2);
        double const s2 = sd[mode] * sd[mode];
        double const zm = (xm - centre) / std::sqrt(s2 / n), zv = (xq / (n - 1) - s2) / (s2 * std::sqrt(2 / (n - 1)));
        INFO("coordinate " << i << ": z of mean " << zm << ", z of variance " << zv);
        CHECK(std::abs(zm) < z_bound);
        CHECK(std::abs(zv) < z_bound);
      }
    }
    INFO("spread of per-chain acceptance over all chains: per-chain " << spread(per_chain) << ", pooled " << spread(pooled));
    CHECK(pooled_fails);
    CHECK(spread(per_chain) < spread(pooled));
  };
  SECTION("mala") { check(ember::mala(U, {}), 0.574); }
  SECTION("hmc") { check(ember::hmc(U, {.integrator_steps = 5}), 0.8); }
}

TEST_CASE("per-chain step sizes refuse a trajectory length", "[adapt][step_size][per_chain]") {
  auto U = ember::gaussian(vec<float, 2>{}, 1.f);
  auto run = ember::start(ember::hmc(U, {.integrator_steps = 2, .trajectory_length = 1}) |
                              ember::warmup(10, ember::step_size(ember::per_chain)),
                          {.chains = 8, .seed = 1, .progress = false});
  CHECK_THROWS_WITH(run.advance(1), Catch::Contains("needs a fixed number of integrator steps"));
}

TEST_CASE("adapter parameters out of their range are refused, NaN included", "[adaptation][refusal]") {
  double const nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (double bad : {nan, -0.1, 1.0, 1.5, inf}) {
    INFO("target " << bad);
    CHECK_THROWS_WITH(ember::step_size({.target = bad}),
                      Catch::StartsWith("ember::step_size: target must be 0 (the kernel's own) or an acceptance rate in (0, 1)"));
    CHECK_THROWS_WITH(ember::step_size(ember::per_chain, {.target = bad}), Catch::StartsWith("ember::step_size: target must be"));
  }
  for (double bad : {nan, -1.0, 0.0, inf}) {
    INFO("learning rate " << bad);
    CHECK_THROWS_WITH(ember::chees({.learning_rate = bad}),
                      Catch::StartsWith("ember::chees: learning_rate must be positive and finite"));
  }
  CHECK(ember::step_size({.target = 0.7}).target == 0.7);
  CHECK(ember::step_size().target == 0);
  CHECK(ember::chees({.learning_rate = 0.05}).learning_rate == 0.05);
  // The adapter structs built by hand reach the same check when the run starts, before any work.
  auto U = ember::gaussian(vec<float, 2>{{0.f, 0.f}}, 1.f);
  CHECK_THROWS_WITH(ember::start(ember::mala(U, {}) | ember::warmup(10, ember::step_size_adapter{nan}), {.chains = 4}),
                    Catch::StartsWith("ember::step_size: target must be"));
  CHECK_THROWS_WITH(ember::start(ember::hmc(U, {}) | ember::warmup(10, ember::step_size(), ember::chees_adapter{-1}), {.chains = 4}),
                    Catch::StartsWith("ember::chees: learning_rate must be"));
}

TEST_CASE("ChEES's trajectory length stays within [eps, 1000 eps] and says so when it ends at a bound",
          "[adaptation][chees]") {
  // Without metric adaptation, sds 0.01 and 100: the step size follows the narrow dimension
  // (ε ~ 0.01) while ChEES's criterion wants T ~ 2·100 in the wide one, 10⁴ε and more.
  auto const U = ember::gaussian<float, 2, ember::covariance::diagonal>(vec<float, 2>{}, vec<float, 2>{{0.01f, 100.f}});
  auto pipe = ember::hmc(U, {}) | ember::warmup(600, ember::step_size(), ember::chees()) | ember::record();
  auto const r = ember::sample(pipe, {.chains = 32, .steps = 200, .seed = 6, .progress = false});
  auto const a = r.adapted();
  INFO("T " << a.trajectory_length << ", step size " << a.step_size);
  CHECK(a.trajectory_length <= 1000 * a.step_size * (1 + 1e-6));
  CHECK(a.trajectory_length >= 500 * a.step_size);
  for (auto const& w : a.warnings) UNSCOPED_INFO(w);
  REQUIRE(a.warnings.size() == 1);
  CHECK_THAT(a.warnings[0], Catch::StartsWith("WARNING: ChEES's trajectory length reached its upper bound, 1000 step sizes"));
  auto const s = ember::summarize(r);
  auto const w = s.warnings();
  CHECK(std::find(w.begin(), w.end(), a.warnings[0]) != w.end());
  // With the metric adapted the same target needs no clipping, and no warning is given.
  auto tuned = ember::hmc(U, {}) | ember::warmup(600, ember::step_size(), ember::diagonal_mass(), ember::chees()) | ember::record();
  auto const q = ember::sample(tuned, {.chains = 32, .steps = 200, .seed = 6, .progress = false});
  INFO("with a metric: T " << q.adapted().trajectory_length << ", step size " << q.adapted().step_size);
  CHECK(q.adapted().trajectory_length < 1000 * q.adapted().step_size);
  for (auto const& w : q.adapted().warnings) UNSCOPED_INFO(w);
  CHECK(q.adapted().warnings.empty());
}

TEST_CASE("warm-up restarts chains that never moved from moving chains' states, and says so", "[adaptation][rescue]") {
  // U = (x₀⁴ + x₁⁴)/4, half the chains started at (30, −30), where the gradient is 27,000: at the
  // step size that suits the other half (about 0.3) a MALA proposal from there lands near
  // −8,000, and is rejected; the pooled step size shrinks for the whole ensemble instead.
  auto const U = ember::custom_energy<2>([](auto const& x) { return 0.25f * (x[0] * x[0] * x[0] * x[0] + x[1] * x[1] * x[1] * x[1]); });
  constexpr int C = 32;
  std::vector<vec<float, 2>> init(C);
  for (int c = 0; c < C; ++c) init[std::size_t(c)] = c % 2 ? vec<float, 2>{{30.f, -30.f}} : vec<float, 2>{{0.1f * float(c % 7), 0.f}};
  auto pipe = ember::mala(U, {}) | ember::warmup(400) | ember::record();
  auto const r = ember::sample(pipe, {.chains = C, .steps = 1000, .seed = 5, .init = init, .progress = false});
  auto const a = r.adapted();
  INFO("restarted " << a.restarted_chains << ", step size " << a.step_size);
  CHECK(a.restarted_chains >= 4);
  REQUIRE_FALSE(a.warnings.empty());
  CHECK_THAT(a.warnings[0], Catch::StartsWith("NOTE: ") && Catch::Contains("times in warm-up a chain that had not moved"));
  auto const s = r.summary();
  CHECK(s.stuck_chains == 0);
  for (int d = 0; d < 2; ++d) {
    INFO("dim " << d << ": mean " << s.dims[d].mean << " +- " << s.dims[d].mcse << ", sd " << s.dims[d].sd);
    CHECK(std::abs(s.dims[d].mean) < 5 * s.dims[d].mcse);
    CHECK(s.dims[d].rhat < 1.01);
  }
  // A run whose chains all move (a standard normal from the default starts) restarts none, and
  // reports nothing.
  auto const q = ember::sample(ember::mala(ember::gaussian(vec<float, 2>{}, 1.f), {}) | ember::warmup(400) | ember::record(),
                               {.chains = C, .steps = 200, .seed = 5, .progress = false});
  CHECK(q.adapted().restarted_chains == 0);
  CHECK(q.adapted().warnings.empty());
}
