#pragma once
// Checks of runs as values (run/run.hpp), written once over the backend and instantiated per backend:
// tests/run/run_generic_test.cpp with backend::cpu, tests/backend/cuda_sampler_checks_test.cu
// with backend::cuda. Host code only.
// Shared by .cpp tests (backend::cpu, backend::scalar) and .cu tests (backend::cuda): each unit
// brings the backends its compiler can build.
#if defined(__CUDACC__)
#include <ember/cuda.cuh>
#else
#include <ember/ember.hpp>
#endif

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>

namespace ember_test {

template <class Pipe, class Backend>
void check_pipeline_in_pieces(Pipe const& pipe, Backend const& backend);

// A run in pieces, with warm-up (step size and metric, pooled or per chain; ChEES) and a
// checkpoint in the middle, equals the run in one piece, bit for bit.
template <class Backend>
void check_run_in_pieces(Backend const& backend) {
  constexpr int D = 4;
  auto U = ember::gaussian(ember::vec<float, D>{{0.5f, -1.f, 0.f, 2.f}}, ember::vec<float, D>{{1.f, 0.3f, 2.f, 0.1f}});
  auto stages = ember::thin(2);
  check_pipeline_in_pieces(ember::hmc(U, {.integrator_steps = 4}) | ember::warmup(150) | stages | ember::record() |
                               ember::track(ember::moments),
                           backend);
  check_pipeline_in_pieces(ember::mala(U, {}) | ember::warmup(150, ember::step_size(ember::per_chain), ember::diagonal_mass()) |
                               stages | ember::record() | ember::track(ember::moments),
                           backend);
  check_pipeline_in_pieces(ember::hmc(U) | ember::warmup(150, ember::step_size(), ember::diagonal_mass(), ember::chees()) |
                               stages | ember::record(),
                           backend);
  // NUTS: trees of every lane's own depth, pooled and per-chain step sizes.
  check_pipeline_in_pieces(ember::nuts(U) | ember::warmup(150) | stages | ember::record(), backend);
  check_pipeline_in_pieces(
      ember::nuts(U) | ember::warmup(150, ember::step_size(ember::per_chain), ember::diagonal_mass()) | stages | ember::record(),
      backend);
  // MAMS: its length adapter's window sums and its Halton step counts.
  check_pipeline_in_pieces(ember::mams(U, {.warmup = 150}) | stages | ember::record(), backend);
  // Unadjusted MCLMC: velocities carried in the state, refreshed by step.
  check_pipeline_in_pieces(ember::mclmc(U) | ember::mams_warmup(150) | stages | ember::record(), backend);
}

template <class Pipe, class Backend>
void check_pipeline_in_pieces(Pipe const& pipe, Backend const& backend) {
  constexpr int D = Pipe::dim;
  ember::sample_options<float, D> opt{.chains = 300, .seed = 17, .progress = false};
  auto whole = ember::start(pipe, opt, backend);
  whole.advance(250);
  auto a = whole.result();
  auto pieces = ember::start(pipe, opt, backend);
  pieces.advance(1);
  pieces.advance(120);
  pieces.save("run_checks.ember");
  auto resumed = decltype(pieces)::load(pipe, "run_checks.ember", backend);
  std::remove("run_checks.ember");
  resumed.advance(129);
  auto b = resumed.result();
  REQUIRE(a.samples().data().size() == b.samples().data().size());
  CHECK(std::memcmp(a.samples().data().data(), b.samples().data().data(), a.samples().data().size() * sizeof(float)) == 0);
  CHECK(std::memcmp(a.final_states().data(), b.final_states().data(), a.final_states().size() * sizeof(float)) == 0);
  CHECK(a.adapted().step_size == b.adapted().step_size);
  CHECK(a.adapted().metric_scale == b.adapted().metric_scale);
  CHECK(a.adapted().step_sizes == b.adapted().step_sizes);
  CHECK(a.trace().mean.size() == b.trace().mean.size());
  CHECK(a.gradients() == b.gradients());
  CHECK(a.warmup_gradients() == b.warmup_gradients());
  CHECK(a.truncated_transitions() == b.truncated_transitions());
  CHECK(a.gradients() > 0);
}

// A progress callback's counters (a GPU backend copies only those, not the chains' state) agree
// with the result's at the end of the run, and a result read after them is the run's.
template <class Backend>
void check_progress_counters(Backend const& backend) {
  constexpr int D = 4;
  auto U = ember::gaussian(ember::vec<float, D>{{0.5f, -1.f, 0.f, 2.f}}, ember::vec<float, D>{{1.f, 0.3f, 2.f, 0.1f}});
  auto const pipe = ember::mala(U, {}) | ember::warmup(100) | ember::track(ember::acceptance);
  std::int64_t reports = 0;
  ember::progress_report last;
  ember::sample_options<float, D> opt{.chains = 300, .seed = 23, .progress = false,
                                      .on_progress = [&](ember::progress_report const& r) { ++reports, last = r; }};
  auto run = ember::start(pipe, opt, backend);
  run.advance(300);
  auto const r = run.result();
  REQUIRE(reports > 0);
  CHECK(last.done == 300);
  CHECK(last.transition == 300);
  CHECK(last.divergent_chains == r.divergent_chains());
  CHECK(last.divergent_transitions == r.divergent_transitions());
  CHECK(last.acceptance == r.acceptance_rate());
  CHECK(r.acceptance_rate() > 0.3);  // the chains moved: not 0 against 0
  opt.on_progress = nullptr;
  auto quiet = ember::start(pipe, opt, backend);
  quiet.advance(300);
  auto const q = quiet.result();
  CHECK(std::memcmp(q.final_states().data(), r.final_states().data(), r.final_states().size() * sizeof(float)) == 0);

  // MALA at a step far too long for the narrow coordinates (σ = 0.1): many transitions flagged
  // divergent by their energy error, so the counters compared are not zeros.
  std::int64_t before = 0;
  ember::sample_options<float, D> wild{.chains = 300, .seed = 29, .progress = false,
                                       .on_progress = [&](ember::progress_report const& p) { before = p.divergent_transitions; }};
  auto w = ember::start(ember::mala(U, {.step_size = 1.5}), wild, backend);
  w.advance(50);
  auto const wr = w.result();
  CHECK(wr.divergent_transitions() > 0);
  CHECK(before == wr.divergent_transitions());
}

// After warm-up with no hand-picked parameters, one draw per chain has the target's moments.
template <class Backend>
void check_moments_after_warmup(Backend const& backend) {
  constexpr int D = 4;
  double const mu[D] = {0.5, -1, 0, 2}, sd[D] = {1, 0.3, 2, 0.1};
  auto U = ember::gaussian(ember::vec<float, D>{{0.5f, -1.f, 0.f, 2.f}}, ember::vec<float, D>{{1.f, 0.3f, 2.f, 0.1f}});
  auto r = ember::sample(ember::mala(U, {}) | ember::warmup(400), {.chains = 4000, .steps = 50, .seed = 5, .progress = false},
                         backend);
  REQUIRE(r.divergent_chains() == 0);
  double const n = double(r.chains());
  for (int d = 0; d < D; ++d) {
    double m = 0, q = 0;
    for (std::int64_t c = 0; c < r.chains(); ++c) m += r.final_state(c)[d];
    m /= n;
    for (std::int64_t c = 0; c < r.chains(); ++c) q += std::pow(r.final_state(c)[d] - m, 2);
    double const zm = (m - mu[d]) / (sd[d] / std::sqrt(n)), zv = (q / (n - 1) - sd[d] * sd[d]) / (sd[d] * sd[d] * std::sqrt(2 / (n - 1)));
    INFO("dimension " << d << ": z of mean " << zm << ", z of variance " << zv);
    CHECK(std::abs(zm) < 5);
    CHECK(std::abs(zv) < 5);
  }
  double const eps = r.adapted().step_size;
  CHECK(std::isfinite(eps));
  CHECK(r.adapted().metric_scale.size() == std::size_t(D));
}

// A statistic written in a test, as a user writes one (ember/pipeline/track.hpp): the fraction of
// chains with x₀ > c (a data member) and the mean of x₀².
struct x0_above_and_square {
  static constexpr char const* name = "x0 above c, x0 squared";
  float c = 0;
  static constexpr int sums(int) { return 2; }
  template <int I, class Chain>
  EMBER_HD double term(Chain const& chain) const {
    if constexpr (I == 0)
      return chain.x[0] > c ? 1.0 : 0.0;
    else
      return double(chain.x[0]) * double(chain.x[0]);
  }
};

// A user's statistic beside a built-in one: at every kept step, its means over chains are those
// of the recorded draws (the indicator's exactly: sums of ones; the squares to the rounding of a
// sum of 300 doubles, whose order a backend chooses), and the trace names what it holds.
template <class Backend>
void check_user_statistic(Backend const& backend) {
  constexpr int D = 4;
  auto U = ember::gaussian(ember::vec<float, D>{{0.5f, -1.f, 0.f, 2.f}}, ember::vec<float, D>{{1.f, 0.3f, 2.f, 0.1f}});
  auto const pipe = ember::mala(U, {}) | ember::warmup(60) | ember::thin(3) | ember::record() |
                    ember::track(ember::moments, x0_above_and_square{.c = 0.75f}, ember::mean_energy);
  auto const r = ember::sample(pipe, {.chains = 300, .steps = 60, .seed = 31, .progress = false}, backend);
  REQUIRE(r.divergent_chains() == 0);
  auto const& tr = r.trace();
  auto const& s = tr.statistic("x0 above c, x0 squared");
  REQUIRE(s.kept() == r.kept());
  REQUIRE(s.width == 2);
  REQUIRE(tr.mean.size() == std::size_t(r.kept()));
  REQUIRE(tr.energy.size() == std::size_t(r.kept()));
  CHECK(tr.acceptance.empty());
  CHECK(tr.statistics.size() == 1);  // moments and mean_energy keep their own fields
  double const n = double(r.chains());
  for (std::int64_t k = 0; k < r.kept(); ++k) {
    double above = 0, square = 0, mean = 0;
    for (std::int64_t c = 0; c < r.chains(); ++c) {
      double const x = r.samples()(k, c, 0);
      above += x > 0.75 ? 1 : 0;
      square += x * x;
      mean += x;
    }
    INFO("kept step " << k);
    CHECK(tr.live_chains[std::size_t(k)] == r.chains());
    CHECK(s(k, 0) == above / n);
    CHECK(std::abs(s(k, 1) - square / n) <= 1e-12 * square / n);
    CHECK(std::abs(tr.mean[std::size_t(k)][0] - mean / n) <= 1e-12 * (std::abs(mean / n) + 1));
  }
  CHECK(s(r.kept() / 2, 0) > 0.05);  // the chains moved into the tail: not 0 against 0
  CHECK_THROWS_WITH(tr.statistic("x1"), Catch::Contains("is named \"x1\"") &&
                                            Catch::Contains("there are \"x0 above c, x0 squared\""));
  CHECK_THROWS_AS(s(r.kept(), 0), std::out_of_range);
  CHECK_THROWS_AS(s(0, 2), std::out_of_range);
}

}  // namespace ember_test
