// record_stats(): what each kept transition reported, per draw (result::sample_stats()). The
// counts it keeps add up exactly to the run's totals, lp is −U at the draw, the Hamiltonian's
// kinetic part is a fresh ½χ²_D, NUTS's depth bounds its leaves, and the statistics are the same
// bits on any threads, blocks and pace, with or without the draws.
#include "support/backends.hpp"
#include <ember/ember.hpp>

#include <catch2/catch.hpp>

#include "support/message_of.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

using ember::draw_stat;
using ember::vec;

namespace {

constexpr int D = 4;

auto target() { return ember::gaussian(vec<double, D>{{0.5, -1.0, 2.0, 0.0}}, vec<double, D>{{1.0, 0.5, 2.0, 1.5}}); }

template <class R>
bool same_stats(R const& a, R const& b) {
  auto const x = a.sample_stats_data(), y = b.sample_stats_data();
  return a.sample_stats() == b.sample_stats() && x.size() == y.size() && !x.empty() &&
         std::memcmp(x.data(), y.data(), x.size_bytes()) == 0;
}

template <class R>
double total(R const& r, draw_stat s) {
  double t = 0;
  for (auto v : r.sample_stat(s)) t += double(v);
  return t;
}

// Checks that hold at every draw of a run with thin 1 and no burn-in: the counts add up to the
// run's totals, lp is −U at the draw to rounding (the kernel's U and the host's are the same D
// positive terms of a few roundings each, summed in another order: within 4D ulp of U), and where
// the kernel reports the Hamiltonian it started from, H_k − U(x_{k−1}) is the kinetic energy ½|v|²
// of a fresh standard normal v: never below 0 (U + a non-negative term rounds to at least U), and
// its mean D/2 within 5 standard errors (Var ½χ²_D = D/2; the momenta are independent).
template <class R, class E>
void check_draws(R const& r, E const& U) {
  REQUIRE(r.kept() == r.kept_transitions());
  CHECK(total(r, draw_stat::diverging) == double(r.divergent_transitions()));
  CHECK(total(r, draw_stat::n_steps) == double(r.gradients()));
  CHECK(total(r, draw_stat::truncated) == double(r.truncated_transitions()));
  double worst_lp = 0, kinetic = 0, below = 0;
  std::int64_t n = 0;
  for (std::int64_t c = 0; c < r.chains(); ++c)
    for (std::int64_t k = 0; k < r.kept(); ++k) {
      double const u = U.value(r.samples().draw(k, c)), lp = r.sample_stat(draw_stat::lp, k, c);
      worst_lp = std::max(worst_lp, std::abs(lp + u) / (1 + std::abs(u)));
      double const a = r.sample_stat(draw_stat::acceptance_rate, k, c);
      CHECK((a >= 0 && a <= 1));
      if (r.has_sample_stat(draw_stat::energy) && k > 0) {
        double const K = r.sample_stat(draw_stat::energy, k, c) + r.sample_stat(draw_stat::lp, k - 1, c);
        below = std::min(below, K);
        kinetic += K;
        ++n;
      }
    }
  CHECK(worst_lp < 4 * D * std::numeric_limits<double>::epsilon());
  if (r.has_sample_stat(draw_stat::energy)) {
    REQUIRE(n > 1000);
    CHECK(below >= 0);
    double const se = std::sqrt(D / 2.0 / double(n));
    INFO("mean kinetic energy " << kinetic / double(n) << ", expected " << D / 2.0 << " +- " << se);
    CHECK(std::abs(kinetic / double(n) - D / 2.0) < 5 * se);
  }
}

}  // namespace

TEST_CASE("record_stats keeps each transition's report: ChEES-HMC", "[pipeline][record_stats]") {
  auto const U = target();
  // A short fixed warm-up, then 400 kept transitions; the adapted trajectory length sets n_steps.
  auto const pipe = ember::chees_hmc(U, {.warmup = 300}) | ember::record() | ember::record_stats();
  ember::sample_options<double, D> const opt{.chains = 13, .steps = 400, .seed = 5, .progress = false};
  auto const r = ember::sample(pipe, opt);
  std::vector<draw_stat> const want{draw_stat::lp, draw_stat::acceptance_rate, draw_stat::diverging, draw_stat::n_steps,
                                    draw_stat::truncated, draw_stat::energy};
  CHECK(r.sample_stats() == want);
  CHECK(r.sample_stat_name(draw_stat::truncated) == "truncated");
  CHECK(!r.has_sample_stat(draw_stat::tree_depth));
  check_draws(r, U);
  // The same bits on any threads and blocks, on either CPU backend.
  ember_test::for_each_cpu_backend([&](auto one) {
    using Backend = decltype(one);
    auto const ref = ember::sample(pipe, opt, Backend{.threads = 1});
    for (int threads : {1, 2})
      for (std::int64_t block : {1, 0}) {
        INFO(Backend::name << ", threads " << threads << ", block " << block);
        CHECK(same_stats(ember::sample(pipe, opt, Backend{.threads = threads, .block = block}), ref));
      }
  });
}

TEST_CASE("record_stats keeps each transition's report: NUTS, lock-step and own pace", "[pipeline][record_stats]") {
  auto const U = target();
  constexpr int max_depth = 4;  // a small step: most trees reach it, some turn first
  auto const run = [&](std::optional<bool> own_pace, auto... more) {
    auto const pipe =
        ((ember::nuts(U, {.step_size = 0.15, .max_tree_depth = max_depth, .own_pace = own_pace}) | ember::record_stats()) | ... |
         more);
    return ember::sample(pipe, {.chains = 11, .steps = 300, .seed = 9, .progress = false});
  };
  auto const r = run(false, ember::record());
  CHECK(r.sample_stats().size() == 7);
  CHECK(r.sample_stat_name(draw_stat::truncated) == "reached_max_treedepth");
  check_draws(r, U);
  // Stan's tree depth, the doublings merged into the tree: a tree of depth j holds 2^j − 1 leaves
  // (one gradient each with velocity Verlet), and a transition may have built up to 2^j more of a
  // half it threw away (it turned or diverged inside); a truncated tree merged every doubling.
  std::int64_t capped = 0, turned = 0;
  for (std::int64_t c = 0; c < r.chains(); ++c)
    for (std::int64_t k = 0; k < r.kept(); ++k) {
      auto const j = std::int64_t(r.sample_stat(draw_stat::tree_depth, k, c));
      auto const n = std::int64_t(r.sample_stat(draw_stat::n_steps, k, c));
      bool const cut = r.sample_stat(draw_stat::truncated, k, c) != 0;
      CHECK((j >= 0 && j <= max_depth));
      CHECK((n >= (std::int64_t(1) << j) - 1 && n <= (std::int64_t(1) << (j + 1)) - 1));
      if (cut) CHECK(j == max_depth);
      (cut ? capped : turned) += 1;
    }
  CHECK(capped > 0);
  CHECK(turned > 0);
  // Own pace (every lane its own transitions) reports what lock-step does, bit for bit; without
  // record() the statistics are the same.
  CHECK(same_stats(run(true, ember::record()), r));
  auto const alone = run(false);
  CHECK(alone.samples().empty());
  CHECK(same_stats(alone, r));
}

TEST_CASE("record_stats with thinning and burn-in keeps the kept transitions' reports", "[pipeline][record_stats]") {
  auto const U = target();
  auto const base = ember::mala(U, {.step_size = 0.4});
  ember::sample_options<double, D> const opt{.chains = 9, .steps = 60, .seed = 3, .progress = false};
  auto const all = ember::sample(base | ember::record() | ember::record_stats(), opt);
  auto const some = ember::sample(base | ember::burn_in(10) | ember::thin(5) | ember::record() | ember::record_stats(), opt);
  CHECK(all.sample_stats().size() == 5);  // MALA reports no Hamiltonian and no tree
  REQUIRE(some.kept() == 12);
  // Kept draw k of the thinned run is transition 10 + 5k + 4 of the same chains (the same
  // streams), i.e. draw 14 + 5k of the unthinned one, with the same report.
  for (std::int64_t c = 0; c < opt.chains; ++c)
    for (std::int64_t k = 0; 14 + 5 * k < all.kept(); ++k)
      for (auto s : some.sample_stats()) CHECK(some.sample_stat(s, k, c) == all.sample_stat(s, 14 + 5 * k, c));
}

TEST_CASE("sample_stat names what is missing", "[pipeline][record_stats]") {
  auto const U = target();
  ember::sample_options<double, D> const opt{.chains = 2, .steps = 5, .progress = false};
  auto const plain = ember::sample(ember::mala(U, {.step_size = 0.4}) | ember::record(), opt);
  CHECK(plain.sample_stats().empty());
  CHECK(ember_test::message_of([&] { plain.sample_stat(draw_stat::lp, 0, 0); }) ==
        "ember::result::sample_stat: lp was not kept: add record_stats() to the pipeline (after mpi::gather, the "
        "statistics are on the root rank only)");
  auto const mala = ember::sample(ember::mala(U, {.step_size = 0.4}) | ember::record_stats(), opt);
  CHECK(ember_test::message_of([&] { mala.sample_stat(draw_stat::energy, 0, 0); }) ==
        "ember::result::sample_stat: energy is not reported by this kernel");
  CHECK(ember_test::message_of([&] { mala.sample_stat(draw_stat::lp, 5, 0); }) ==
        "ember::result::sample_stat: draw 5 is not in [0, 5)");
}

TEST_CASE("record_stats: a chain frozen at a state that is not finite reports no transitions, in either pace",
          "[pipeline][record_stats]") {
  // U is finite only where x₀ > 1.98 (NaN elsewhere): a default start (uniform in (−2, 2)²) lands
  // there with probability 0.005, so about 39 % of the chains find it in their 100 tries and the
  // rest are frozen at their start (transition −1). NUTS then runs batches of live and frozen lanes.
  auto const U = ember::custom_energy<2, double>([](auto const& x) {
    return 0.5 * (x[0] * x[0] + x[1] * x[1]) + 0.0 * log(x[0] - 1.98);
  });
  auto const run = [&](bool own_pace) {
    auto const pipe = ember::nuts(U, {.step_size = 0.01, .max_tree_depth = 4, .own_pace = own_pace}) | ember::record() |
                      ember::record_stats();
    return ember::sample(pipe, {.chains = 64, .steps = 50, .seed = 4, .progress = false});
  };
  auto const r = run(false);
  REQUIRE(r.divergent_chains() > 0);
  REQUIRE(r.divergent_chains() < r.chains());
  CHECK(same_stats(run(true), r));
  std::int64_t live_steps = 0;
  for (std::int64_t c = 0; c < r.chains(); ++c) {
    INFO("chain " << c);
    for (std::int64_t k = 0; k < r.kept(); ++k) {
      double const lp = r.sample_stat(draw_stat::lp, k, c), u = U.value(r.samples().draw(k, c));
      // U's three terms in dual numbers in the run, in doubles here: within 8 ulp of their magnitudes.
      bool const same = std::abs(lp + u) <= 8 * std::numeric_limits<double>::epsilon() * (1 + std::abs(u));
      CHECK((same || (std::isnan(lp) && std::isnan(u))));
      if (!r.divergent(c)) {
        live_steps += std::int64_t(r.sample_stat(draw_stat::n_steps, k, c));
        continue;
      }
      CHECK(r.diverged_at(c) == -1);
      CHECK(r.sample_stat(draw_stat::acceptance_rate, k, c) == 0);
      CHECK(r.sample_stat(draw_stat::diverging, k, c) == 0);
      CHECK(r.sample_stat(draw_stat::n_steps, k, c) == 0);
      CHECK(r.sample_stat(draw_stat::truncated, k, c) == 0);
      CHECK(r.sample_stat(draw_stat::tree_depth, k, c) == 0);
      CHECK(std::isnan(r.sample_stat(draw_stat::energy, k, c)));
    }
  }
  CHECK(live_steps == r.gradients());  // the live chains made every gradient the run counted
}
