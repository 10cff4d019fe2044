// ember::sample end to end on the CPU backend: reproducibility under any partition of the
// chains, the schedule of burn_in/thin/record, tracked diagnostics, start states, the checks on
// bad input, and divergent chains.
#include "support/backends.hpp"
#include <ember/ember.hpp>

#include <catch2/catch.hpp>

#include "support/message_of.hpp"

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

using ember::vec;
using ember_test::message_of;

namespace {

constexpr int D = 3;

auto mixture() {
  return ember::gaussian_mixture<float, D, 2>({0.6f, 0.4f}, {vec<float, D>{{-1.f, 0.f, 1.f}}, vec<float, D>{{1.5f, 1.f, -0.5f}}},
                                              {0.8f, 1.1f});
}

auto reference_pipeline() {
  return ember::mala(mixture(), {.step_size = 0.2}) | ember::burn_in(20) | ember::thin(2) | ember::record() |
         ember::track(ember::moments, ember::acceptance, ember::mean_energy);
}

template <class R>
bool same_bits(R const& a, R const& b) {
  auto sa = a.samples().data(), sb = b.samples().data();
  auto fa = a.final_states(), fb = b.final_states();
  return sa.size() == sb.size() && fa.size() == fb.size() &&
         std::memcmp(sa.data(), sb.data(), sa.size() * sizeof(float)) == 0 &&
         std::memcmp(fa.data(), fb.data(), fa.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("the same seed gives bitwise identical draws on any number of threads and any block size",
          "[pipeline][sample]") {
  auto pipe = reference_pipeline();
  ember::sample_options<float, D> opt{.chains = 203, .steps = 40, .seed = 99};  // not a multiple of a SIMD width
  ember_test::for_each_cpu_backend([&](auto one) {
    using Backend = decltype(one);
    auto ref = ember::sample(pipe, opt, Backend{.threads = 1});
    REQUIRE(ref.kept() == 20);
    for (int threads : {1, 2})
      for (std::int64_t block : {1, 7, 64, 0}) {
        INFO(Backend::name << ", threads " << threads << ", block " << block);
        auto r = ember::sample(pipe, opt, Backend{.threads = threads, .block = block});
        CHECK(same_bits(r, ref));
        CHECK(r.acceptance_rate() == Approx(ref.acceptance_rate()).epsilon(1e-12));
      }
  });
}

TEST_CASE("the SIMD and scalar paths agree to rounding", "[pipeline][sample]") {
  auto pipe = reference_pipeline();
  ember::sample_options<float, D> opt{.chains = 64, .steps = 40, .seed = 99};
  auto a = ember::sample(pipe, opt, ember::backend::cpu{});
  auto b = ember::sample(pipe, opt, ember::backend::scalar{});
  // Box–Muller and the energies use different exp/log/sin implementations: chains agree to a few
  // float roundings per step, unless an accept decision flips on a rounding (rare, counted).
  int far = 0;
  for (std::int64_t c = 0; c < opt.chains; ++c)
    for (int d = 0; d < D; ++d)
      if (std::abs(a.final_state(c)[d] - b.final_state(c)[d]) > 1e-3f) ++far;
  CHECK(far <= 2);
}

TEST_CASE("a different seed gives different draws", "[pipeline][sample]") {
  auto pipe = reference_pipeline();
  auto a = ember::sample(pipe, {.chains = 50, .steps = 10, .seed = 1});
  auto b = ember::sample(pipe, {.chains = 50, .steps = 10, .seed = 2});
  int equal = 0;
  for (std::int64_t c = 0; c < 50; ++c)
    for (int d = 0; d < D; ++d) equal += a.final_state(c)[d] == b.final_state(c)[d];
  CHECK(equal <= 5);  // MALA may reject every proposal of a chain, but not of most chains
  CHECK(!same_bits(a, b));
}

TEST_CASE("burn_in, thin and record keep steps / thin draws, at the right steps", "[pipeline][sample]") {
  auto k = ember::mala(mixture(), {.step_size = 0.2});
  ember::sample_options<float, D> opt{.chains = 37, .steps = 30, .seed = 5};
  auto every = ember::sample(k | ember::burn_in(10) | ember::record(), opt);
  auto third = ember::sample(k | ember::burn_in(10) | ember::thin(3) | ember::record(), opt);
  REQUIRE(every.kept() == 30);
  REQUIRE(third.kept() == 10);
  // thin(3) keeps transitions 3, 6, 9, …: the thin(1) run's draws 2, 5, 8, …
  for (std::int64_t i = 0; i < third.kept(); ++i)
    for (std::int64_t c = 0; c < opt.chains; ++c)
      for (int d = 0; d < D; ++d) REQUIRE(third.samples()(i, c, d) == every.samples()(3 * i + 2, c, d));
  // Burn-in is the first transitions of the same streams: without it, the draws come 10 later.
  auto no_burn = ember::sample(k | ember::record(), {.chains = 37, .steps = 40, .seed = 5});
  for (std::int64_t i = 0; i < every.kept(); ++i)
    for (std::int64_t c = 0; c < opt.chains; ++c)
      for (int d = 0; d < D; ++d) REQUIRE(every.samples()(i, c, d) == no_burn.samples()(i + 10, c, d));
  // The last kept draw of a run whose steps are a multiple of thin is the final state.
  for (std::int64_t c = 0; c < opt.chains; ++c)
    for (int d = 0; d < D; ++d) CHECK(third.samples()(9, c, d) == third.final_state(c)[d]);
  // Stages compose: burn_in adds up, thin multiplies; steps not a multiple of thin round down.
  auto r = ember::sample(k | ember::burn_in(4) | ember::burn_in(6) | ember::thin(2) | ember::thin(2) | ember::record(),
                         {.chains = 37, .steps = 30, .seed = 5});
  CHECK(r.kept_transitions() == 30);
  CHECK(r.kept() == 7);
  for (std::int64_t i = 0; i < r.kept(); ++i) CHECK(r.samples()(i, 3, 1) == every.samples()(4 * i + 3, 3, 1));
  // Without record() nothing is kept in memory.
  auto bare = ember::sample(k | ember::thin(3), opt);
  CHECK(bare.samples().empty());
  CHECK(bare.kept() == 10);
}

TEST_CASE("tracked moments, acceptance and mean energy agree with the recorded draws", "[pipeline][sample]") {
  auto U = mixture();
  std::int64_t const C = 501;
  std::vector<vec<float, D>> init(C);
  for (std::int64_t c = 0; c < C; ++c) init[std::size_t(c)] = vec<float, D>{{0.01f * float(c % 37), -0.5f, float(c % 5)}};
  auto r = ember::sample(ember::mala(U, {.step_size = 0.3}) | ember::record() |
                             ember::track(ember::moments, ember::acceptance, ember::mean_energy),
                         {.chains = C, .steps = 25, .seed = 11, .init = init});
  auto const& tr = r.trace();
  REQUIRE(tr.mean.size() == 25);
  REQUIRE(tr.variance.size() == 25);
  REQUIRE(tr.acceptance.size() == 25);
  REQUIRE(tr.energy.size() == 25);
  double total_acc = 0;
  for (std::int64_t k = 0; k < r.kept(); ++k) {
    CHECK(tr.live_chains[std::size_t(k)] == C);
    double acc = 0, e = 0;
    for (std::int64_t c = 0; c < C; ++c) {
      auto x = r.samples().draw(k, c);
      auto prev = k == 0 ? init[std::size_t(c)] : r.samples().draw(k - 1, c);
      acc += (x[0] != prev[0] || x[1] != prev[1] || x[2] != prev[2]);  // an accepted move changes x
      e += double(U.value(x));
    }
    // Sums of C floats in double: equal up to double rounding, whatever the summation order.
    CHECK(tr.acceptance[std::size_t(k)] == Approx(acc / C).epsilon(1e-12));
    // The tracked energy is value_and_grad's, ours is value(): a few float roundings apart.
    CHECK(tr.energy[std::size_t(k)] == Approx(e / C).epsilon(1e-5));
    for (int d = 0; d < D; ++d) {
      double m = 0, q = 0, mabs = 0, m2 = 0;
      for (std::int64_t c = 0; c < C; ++c) {
        double x = double(r.samples()(k, c, d));
        m += x;
        mabs += std::abs(x);
        m2 += x * x;
      }
      m /= C;
      mabs /= C;
      m2 /= C;
      for (std::int64_t c = 0; c < C; ++c) q += std::pow(double(r.samples()(k, c, d)) - m, 2);
      // The SIMD path squares in float and sums a batch's 16 lanes in float (4 levels of
      // pairwise adds) before adding in double: errors up to ~5 float roundings of Σ|x| and Σx².
      double const ef = std::numeric_limits<float>::epsilon();
      double tol_m = 8 * ef * mabs, tol_v = 8 * ef * m2 * C / (C - 1) + 2 * std::abs(m) * tol_m;
      CHECK(std::abs(tr.mean[std::size_t(k)][d] - m) <= tol_m);
      CHECK(std::abs(tr.variance[std::size_t(k)][d] - q / (C - 1)) <= tol_v);
    }
    total_acc += acc;
  }
  CHECK(r.acceptance_rate() == Approx(total_acc / (C * 25.0)).epsilon(1e-12));
  CHECK(r.acceptance_rate() > 0.3);
}

TEST_CASE("chains start where .init tells them", "[pipeline][sample]") {
  ember::harmonic<float, D> U;
  std::int64_t const C = 40;
  std::vector<vec<float, D>> init(C);
  for (std::int64_t c = 0; c < C; ++c) init[std::size_t(c)] = vec<float, D>{{10.f * float(c), -3.f * float(c), 0.5f}};
  // No transitions: the final states are the start states, bit for bit.
  auto r0 = ember::sample(ember::ula(U, {.step_size = 1e-4}), {.chains = C, .steps = 0, .seed = 3, .init = init});
  for (std::int64_t c = 0; c < C; ++c)
    for (int d = 0; d < D; ++d) REQUIRE(r0.final_state(c)[d] == init[std::size_t(c)][d]);
  // One small ULA step: x₁ = x₀(1 − η) + √(2η) ξ, within 6√(2η) of x₀(1 − η).
  auto r1 = ember::sample(ember::ula(U, {.step_size = 1e-4}) | ember::record(),
                          {.chains = C, .steps = 1, .seed = 3, .init = init});
  for (std::int64_t c = 0; c < C; ++c)
    for (int d = 0; d < D; ++d)
      CHECK(std::abs(r1.samples()(0, c, d) - init[std::size_t(c)][d] * (1 - 1e-4)) < 6 * std::sqrt(2e-4));
  // Without .init the start is uniform(−2, 2)^D from each chain's own stream.
  auto rd = ember::sample(ember::ula(U, {.step_size = 1e-4}), {.chains = C, .steps = 0, .seed = 3});
  auto rd_scalar = ember::sample(ember::ula(U, {.step_size = 1e-4}), {.chains = C, .steps = 0, .seed = 3},
                                 ember::backend::scalar{});
  for (std::int64_t c = 0; c < C; ++c)
    for (int d = 0; d < D; ++d) {
      // The scalar path draws it with <cmath>, bit for bit; the SIMD path with xsimd's log and
      // sincos, a few float roundings away.
      float want = ember::default_start<float, D>(3, std::uint32_t(c))[d];
      REQUIRE(rd_scalar.final_state(c)[d] == want);
      REQUIRE(std::abs(rd.final_state(c)[d] - want) <= 1e-5f * (1 + std::abs(want)));
    }
}

TEST_CASE("bad input is rejected with a clear exception before any work", "[pipeline][sample]") {
  using Catch::Contains;
  ember::double_well<float, 2> U;
  auto k = ember::ula(U, {.step_size = 0.01});
  using IA = std::invalid_argument;
  SECTION("chains") {
    CHECK_THAT(message_of<IA>([&] { ember::sample(k, {.chains = 0, .steps = 1}); }), Contains("chains must be positive"));
    CHECK_THAT(message_of<IA>([&] { ember::sample(k, {.chains = -5, .steps = 1}); }), Contains("got -5"));
    CHECK_THAT(message_of<IA>([&] { ember::sample(k, {.chains = 1, .steps = -1}); }), Contains("steps"));
  }
  SECTION("step sizes") {
    double const nan = std::numeric_limits<double>::quiet_NaN();
    for (double eta : {0.0, -0.1, nan, std::numeric_limits<double>::infinity()}) {
      INFO("step size " << eta);
      CHECK_THAT(message_of<IA>([&] { ember::ula(U, {.step_size = eta}); }), Contains("ember::ula") && Contains("step size"));
      CHECK_THAT(message_of<IA>([&] { ember::mala(U, {.step_size = eta}); }), Contains("ember::mala") && Contains("step size"));
      CHECK_THAT(message_of<IA>([&] { ember::hmc(U, {.step_size = eta, .integrator_steps = 5}); }),
                 Contains("ember::hmc") && Contains("step size"));
    }
    CHECK_THAT(message_of<IA>([&] { ember::hmc(U, {.step_size = 0.1, .integrator_steps = -1}); }), Contains("integrator steps"));
    CHECK_THAT(message_of<IA>([&] { ember::hmc(U, {.step_size = 0.1, .integrator_steps = 5, .mass = 0}); }), Contains("mass"));
    CHECK_THAT(message_of<IA>([&] { ember::hmc(U, {.step_size = 0.1, .integrator_steps = 5, .mass = -1}); }), Contains("mass"));
    // A kernel whose parameters were changed after construction is checked again by sample().
    auto bad = k;
    bad.step_size = -1;
    CHECK_THAT(message_of<IA>([&] { ember::sample(bad, {.chains = 1, .steps = 1}); }), Contains("step size"));
    // Small numbers in messages read as themselves, not 0.000000.
    CHECK_THAT(message_of<IA>([&] { ember::ula(U, {.step_size = -1e-9}); }), Contains("got -1e-09"));
  }
  SECTION("start states") {
    std::vector<vec<float, 2>> init(3, vec<float, 2>{{0.f, 0.f}});
    CHECK_THAT(message_of<IA>([&] { ember::sample(k, {.chains = 4, .steps = 1, .init = init}); }),
               Contains("3 start states for 4 chains"));
    init[2][1] = std::numeric_limits<float>::infinity();
    CHECK_THAT(message_of<IA>([&] { ember::sample(k, {.chains = 3, .steps = 1, .init = init}); }),
               Contains("chain 2") && Contains("not finite"));
    init[2][1] = std::numeric_limits<float>::quiet_NaN();
    CHECK_THAT(message_of<IA>([&] { ember::sample(k, {.chains = 3, .steps = 1, .init = init}); }), Contains("chain 2"));
  }
  SECTION("a recorded run too large for memory") {
    // 10⁶ chains × 10⁹ kept draws × 2 floats = 8·10¹⁵ bytes (the chains' state is checked apart).
    auto msg = message_of<std::length_error>([&] {
      ember::sample(k | ember::record(), {.chains = 1'000'000, .steps = 1'000'000'000});
    });
    CHECK_THAT(msg, Contains("1,000,000,000 kept draws x 2 dimensions x 1,000,000 chains recorded"));
    // The same run without record() needs no such memory: only checked, not run (steps = 0).
    CHECK_NOTHROW(ember::sample(k | ember::thin(1), {.chains = 1'000'000, .steps = 0}));
  }
  SECTION("stages and tempering") {
    CHECK_THAT(message_of<IA>([] { ember::burn_in(-1); }), Contains("from 0 to 4,294,967,294") && Contains("got -1"));
    CHECK_THAT(message_of<IA>([] { ember::thin(0); }), Contains("from 1 to 4,294,967,294"));
    CHECK_THAT(message_of<IA>([&] { (void)(U / 0.0); }), Contains("temperature"));
    CHECK_THAT(message_of<IA>([&] { (void)(U / -2); }), Contains("temperature"));
  }
}

TEST_CASE("result accessors check their indices", "[pipeline][sample]") {
  using OR = std::out_of_range;
  ember::double_well<float, 2> U;
  auto k = ember::mala(U, {.step_size = 0.1});
  auto r = ember::sample(k | ember::record(), {.chains = 8, .steps = 4, .seed = 3});
  // In range: the same values as the raw layout.
  CHECK(r.samples()(3, 7, 1) == r.samples().data()[std::size_t((3 * 2 + 1) * 8 + 7)]);
  CHECK(r.samples().draw(3, 7)[1] == r.samples()(3, 7, 1));
  CHECK_NOTHROW(r.divergent(7));
  CHECK_NOTHROW(r.diverged_at(7));
  CHECK_NOTHROW(r.accepted(7));
  CHECK_NOTHROW(r.final_state(7));
  // Out of range: a sentence naming the accessor, the index and the range, for each.
  CHECK(message_of<OR>([&] { (void)r.samples()(4, 0, 0); }) == "ember::result::samples: draw 4 is not in [0, 4)");
  CHECK(message_of<OR>([&] { (void)r.samples()(-1, 0, 0); }) == "ember::result::samples: draw -1 is not in [0, 4)");
  CHECK(message_of<OR>([&] { (void)r.samples()(0, 8, 0); }) == "ember::result::samples: chain 8 is not in [0, 8)");
  CHECK(message_of<OR>([&] { (void)r.samples()(0, 0, 2); }) == "ember::result::samples: dimension 2 is not in [0, 2)");
  CHECK(message_of<OR>([&] { (void)r.samples().draw(99, 0); }) == "ember::result::samples: draw 99 is not in [0, 4)");
  CHECK(message_of<OR>([&] { (void)r.final_state(8); }) == "ember::result::final_state: chain 8 is not in [0, 8)");
  CHECK(message_of<OR>([&] { (void)r.divergent(1'000'000); }) ==
        "ember::result::divergent: chain 1000000 is not in [0, 8)");
  CHECK(message_of<OR>([&] { (void)r.diverged_at(-1); }) == "ember::result::diverged_at: chain -1 is not in [0, 8)");
  CHECK(message_of<OR>([&] { (void)r.accepted(8); }) == "ember::result::accepted: chain 8 is not in [0, 8)");
  // A run without record() has no draws to index.
  auto bare = ember::sample(k, {.chains = 8, .steps = 4, .seed = 3});
  CHECK(bare.samples().empty());
  CHECK(message_of<OR>([&] { (void)bare.samples()(0, 0, 0); }) ==
        "ember::result::samples: no draws were kept: add record() to the pipeline");
}

TEST_CASE("divergent chains are frozen at their last finite state and counted", "[pipeline][sample]") {
  ember::rosenbrock<float, 2> U;
  auto pipe = [&](double eta) {
    return ember::ula(U, {.step_size = eta}) | ember::thin(5) | ember::record() |
           ember::track(ember::moments, ember::acceptance, ember::mean_energy);
  };
  auto all_finite = [](auto const& r) {
    for (float v : r.samples().data())
      if (!std::isfinite(v)) return false;
    for (float v : r.final_states())
      if (!std::isfinite(v)) return false;
    return true;
  };
  SECTION("a step far too large: every chain diverges") {
    ember_test::for_each_cpu_backend([&](auto be) {
      auto r = ember::sample(pipe(0.1), {.chains = 300, .steps = 100, .seed = 4}, be);
      INFO("backend " << be.name);
      CHECK(r.divergent_chains() == r.chains());
      CHECK(all_finite(r));
      CHECK(r.trace().live_chains.back() == 0);
    });
  }
  SECTION("a gaussian, whose chains are tested by their energy alone (fused_loop.hpp)") {
    // η = 2.5 on N(0, I): x ← −1.5x + noise grows 1.5× a step and leaves float within ~220 steps.
    ember::gaussian<float, 3, ember::covariance::isotropic> G(vec<float, 3>{}, 1.f);
    static_assert(ember::finite_value_means_finite_x<ember::ula_kernel<decltype(G)>>);
    ember_test::for_each_cpu_backend([&](auto be) {
      auto r = ember::sample(ember::ula(G, {.step_size = 2.5}) | ember::thin(5) | ember::record(),
                             {.chains = 70, .steps = 400, .seed = 4}, be);
      INFO("backend " << be.name);
      CHECK(r.divergent_chains() == r.chains());
      CHECK(all_finite(r));
      for (std::int64_t c = 0; c < r.chains(); ++c) CHECK(r.diverged_at(c) > 0);
    });
  }
  SECTION("a step too large for some chains") {
    // η = 0.003: Euler is unstable where U'' ≈ 1200x² > 2/η, i.e. for chains that reach |x| ≳ 0.75.
    ember_test::for_each_cpu_backend([&](auto be) {
      auto r = ember::sample(pipe(0.003), {.chains = 300, .steps = 100, .seed = 4}, be);
      INFO("backend " << be.name);
      CHECK(r.divergent_chains() > 0);
      CHECK(r.divergent_chains() < r.chains());
      CHECK(r.trace().live_chains.back() == r.chains() - r.divergent_chains());
      CHECK(r.divergent_transitions() >= r.divergent_chains());
      CHECK(all_finite(r));
      std::int64_t flagged = 0;
      for (std::int64_t c = 0; c < r.chains(); ++c) {
        flagged += r.divergent(c);
        if (r.divergent(c)) CHECK(r.diverged_at(c) >= 0);
      }
      CHECK(flagged == r.divergent_chains());
      for (std::size_t k = 0; k < r.trace().mean.size(); ++k) {
        CHECK(r.trace().live_chains[k] <= r.chains() - (k + 1 == r.trace().mean.size() ? r.divergent_chains() : 0));
        for (int d = 0; d < 2; ++d) {
          CHECK(std::isfinite(r.trace().mean[k][d]));
          CHECK(std::isfinite(r.trace().variance[k][d]));
        }
        CHECK(std::isfinite(r.trace().energy[k]));
      }
      if (r.divergent_chains() < r.chains()) {
        auto s = r.summary();
        for (int d = 0; d < 2; ++d) {
          CHECK(std::isfinite(s.dims[d].mean));
          CHECK(std::isfinite(s.dims[d].sd));
          CHECK(std::isfinite(s.dims[d].ess));
          CHECK(std::isfinite(s.dims[d].rhat));
        }
      }
    });
  }
  SECTION("a sane step") {
    // U'' ≤ 1200x² + 2 ≈ 2e4 for |x| ≤ 4: η = 5e-5 keeps η U'' < 2, where Euler is stable.
    auto r = ember::sample(pipe(5e-5), {.chains = 300, .steps = 100, .seed = 4});
    CHECK(r.divergent_chains() == 0);
    CHECK(r.divergent_transitions() == 0);
    CHECK(all_finite(r));
  }
}
