// save_npz: a real run's draws in (chain, draw, dim) order, its divergences, acceptance, trace and
// summary, read back by ember and by NumPy and compared with the result's accessors.
#include "numpy_check.hpp"

#include <ember/ember.hpp>
#include <ember/io/save_npz.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace {
// A run with divergent chains (Rosenbrock under ULA with a step too large for chains that reach
// |x| ≳ 0.75, as in tests/pipeline) and a tracked, recorded pipeline.
auto run() {
  ember::rosenbrock<float, 2> U;
  auto pipe = ember::ula(U, {.step_size = 0.003}) | ember::thin(5) | ember::record() |
              ember::track(ember::moments, ember::acceptance, ember::mean_energy);
  return ember::sample(pipe, {.chains = 300, .steps = 100, .seed = 4});
}
}  // namespace

TEST_CASE("save_npz writes draws as (chain, draw, dim) and everything else the result knows", "[io][save_npz]") {
  auto r = run();
  REQUIRE(r.divergent_chains() > 0);  // the case the flags are for
  ember_test::scratch_dir const dir("ember_save_npz");
  auto const path = (dir / "run.npz").string();
  std::vector<double> per_chain(std::size_t(r.chains()));
  for (std::size_t c = 0; c < per_chain.size(); ++c) per_chain[c] = 0.5 + 0.01 * double(c);
  ember::save_npz(r, path, {.target_acceptance = 0.6, .chain_acceptance = per_chain});
  auto m = ember::read_npz(path);
  auto const C = std::size_t(r.chains()), K = std::size_t(r.kept());
  REQUIRE(m["draws"].shape == std::vector<std::size_t>{C, K, 2});
  auto draws = m["draws"].as<float>();
  bool same = true;
  for (std::size_t c = 0; c < C; ++c)
    for (std::size_t k = 0; k < K; ++k)
      for (int d = 0; d < 2; ++d) same &= draws[(c * K + k) * 2 + std::size_t(d)] == r.samples()(std::int64_t(k), std::int64_t(c), d);
  CHECK(same);
  auto fin = m["final_states"].as<float>();
  for (std::size_t c = 0; c < C; ++c)
    for (int d = 0; d < 2; ++d) CHECK(fin[c * 2 + std::size_t(d)] == r.final_state(std::int64_t(c))[d]);
  auto div = m["divergent"].as<bool>();
  auto at = m["diverged_at"].as<std::int64_t>();
  for (std::size_t c = 0; c < C; ++c) {
    CHECK(div[c] == r.divergent(std::int64_t(c)));
    CHECK(at[c] == (r.divergent(std::int64_t(c)) ? r.diverged_at(std::int64_t(c)) : -2));
  }
  CHECK(m["chain_acceptance"].as<double>() == per_chain);
  CHECK(m["acceptance_rate"].as<double>()[0] == r.acceptance_rate());
  CHECK(m["divergent_transitions"].as<std::int64_t>()[0] == r.divergent_transitions());
  REQUIRE(m["trace_mean"].shape == std::vector<std::size_t>{K, 2});
  CHECK(m["trace_mean"].as<double>()[2 * (K - 1) + 1] == r.trace().mean.back()[1]);
  CHECK(m["trace_energy"].as<double>() == r.trace().energy);
  auto s = r.summary({.target_acceptance = 0.6, .chain_acceptance = per_chain});
  auto rhat = m["summary_rhat"].as<double>();
  auto ess = m["summary_ess_bulk"].as<double>();
  for (int d = 0; d < 2; ++d) {
    CHECK(rhat[std::size_t(d)] == s.dims[d].rhat);
    CHECK(ess[std::size_t(d)] == s.dims[d].ess);
  }
  CHECK(m["summary_draws"].as<std::int64_t>()[0] == s.draws);
}

namespace {
// A statistic of one's own: the mean of x₀ + x₁ (one sum per kept step), named with a space.
struct sum_of_coordinates {
  static constexpr char const* name = "x0 + x1";
  static constexpr int sums(int) { return 1; }
  template <int I, class Chain>
  double term(Chain const& c) const {
    return double(c.x[0]) + double(c.x[1]);
  }
};
}  // namespace

TEST_CASE("save_npz writes a statistic of one's own as trace_<name>, (kept, sums)", "[io][save_npz][track]") {
  ember::rosenbrock<float, 2> U;
  auto r = ember::sample(ember::ula(U, {.step_size = 0.003}) | ember::thin(5) | ember::track(sum_of_coordinates{}),
                         {.chains = 50, .steps = 40, .seed = 4});
  ember_test::scratch_dir const dir("ember_save_npz_statistic");
  auto const path = (dir / "run.npz").string();
  ember::save_npz(r, path);
  auto m = ember::read_npz(path);
  auto const& st = r.trace().statistic("x0 + x1");
  REQUIRE(m["trace_x0___x1"].shape == std::vector<std::size_t>{std::size_t(r.kept()), 1});
  CHECK(m["trace_x0___x1"].as<double>() == st.values);
}

namespace {
// Named so that save_npz would write it as trace_mean, moments' array.
struct named_mean {
  static constexpr char const* name = "mean";
  static constexpr int sums(int) { return 1; }
  template <int I, class Chain>
  double term(Chain const& c) const {
    return double(c.x[0]);
  }
};
}  // namespace

TEST_CASE("save_npz refuses, before writing, a statistic whose array name another array has", "[io][save_npz][track]") {
  ember::rosenbrock<float, 2> U;
  auto r = ember::sample(ember::ula(U, {.step_size = 0.003}) | ember::track(ember::moments, named_mean{}),
                         {.chains = 20, .steps = 10, .seed = 4});
  ember_test::scratch_dir const dir("ember_save_npz_taken");
  auto const path = (dir / "run.npz").string();
  CHECK_THROWS_WITH(ember::save_npz(r, path), Catch::Contains("statistic \"mean\" would be written as trace_mean"));
  CHECK(!std::filesystem::exists(path));
}

TEST_CASE("numpy.load reads save_npz's archive with the same values", "[io][save_npz][numpy]") {
  if (!ember_test::numpy_available()) return;
  auto r = run();
  ember_test::scratch_dir const dir("ember_save_npz_numpy");
  ember::save_npz(r, (dir / "run.npz").string());
  // NumPy re-saves what it read, array by array, with its own writer; ember compares those with
  // the result, so both NumPy's reading and ember's layout are checked.
  std::string script = "import numpy as np, sys\n"
                       "d = sys.argv[0].rsplit('/', 1)[0]\n"
                       "m = np.load(d + '/run.npz')\n"
                       "assert m['draws'].dtype == np.float32 and m['divergent'].dtype == np.bool_\n"
                       "np.save(d + '/draws.npy', m['draws'])\n"
                       "np.save(d + '/divergent.npy', m['divergent'])\n"
                       "np.save(d + '/summary_mean.npy', m['summary_mean'])\n";
  REQUIRE(ember_test::run_python(script, (dir / "check.py").string()) == 0);
  auto draws = ember::read_npy((dir / "draws.npy").string());
  auto const C = std::size_t(r.chains()), K = std::size_t(r.kept());
  REQUIRE(draws.shape == std::vector<std::size_t>{C, K, 2});
  auto v = draws.as<float>();
  bool same = true;
  for (std::size_t c = 0; c < C; ++c)
    for (std::size_t k = 0; k < K; ++k)
      for (int d = 0; d < 2; ++d) same &= v[(c * K + k) * 2 + std::size_t(d)] == r.samples()(std::int64_t(k), std::int64_t(c), d);
  CHECK(same);
  auto div = ember::read_npy((dir / "divergent.npy").string()).as<bool>();
  for (std::size_t c = 0; c < C; ++c) CHECK(div[c] == r.divergent(std::int64_t(c)));
  auto mean = ember::read_npy((dir / "summary_mean.npy").string()).as<double>();
  auto s = r.summary();
  for (int d = 0; d < 2; ++d) CHECK(mean[std::size_t(d)] == s.dims[d].mean);
}
