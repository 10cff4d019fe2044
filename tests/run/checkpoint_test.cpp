// Checkpoints tied to what they hold (issue 27): every built-in kernel saves and loads; a rebuilt
// program whose energy's type is spelled differently (another lambda, the same function) resumes
// bitwise; an energy with other parameters or data is refused, naming a chain and both energies;
// a fixed step size that differs is refused; the same model computed with other rounding is
// re-evaluated rather than refused.
#include <ember/ember.hpp>

#include <catch2/catch.hpp>

#include "support/message_of.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

using ember::vec;
using ember_test::message_of;

namespace {

constexpr int D = 3;

auto gauss(float shift = 0.f) { return ember::gaussian(vec<float, D>{{shift, 1.f, -1.f}}, 1.2f); }

template <class R>
bool same_draws(R const& a, R const& b) {
  auto sa = a.samples().data(), sb = b.samples().data();
  auto fa = a.final_states(), fb = b.final_states();
  using T = typename R::value_type;
  return sa.size() == sb.size() && fa.size() == fb.size() && !sa.empty() &&
         std::memcmp(sa.data(), sb.data(), sa.size() * sizeof(T)) == 0 &&
         std::memcmp(fa.data(), fb.data(), fa.size() * sizeof(T)) == 0 && a.acceptance_rate() == b.acceptance_rate() &&
         a.gradients() == b.gradients() && a.warmup_gradients() == b.warmup_gradients() &&
         a.sample_stats() == b.sample_stats() && a.sample_stats_data().size() == b.sample_stats_data().size() &&
         (a.sample_stats_data().empty() ||  // (memcmp of an empty buffer's null pointer is undefined)
          std::memcmp(a.sample_stats_data().data(), b.sample_stats_data().data(), a.sample_stats_data().size_bytes()) == 0);
}

// Saved after `cut` transitions by one pipeline, loaded into `other` (same structure), continued
// to `total`: the same draws as `other` run uninterrupted.
template <class Pipe, class Other>
void check_round_trip(Pipe const& pipe, Other const& other, std::int64_t cut, std::int64_t total) {
  INFO("saved after " << cut << " of " << total << " transitions");
  std::string const path = "checkpoint_test_round_trip.ember";
  ember::sample_options<float, D> opt{.chains = 21, .seed = 8, .progress = false};
  {
    auto r = ember::start(pipe, opt);
    r.advance(cut);
    r.save(path);
  }
  auto resumed = decltype(ember::start(other, opt))::load(other, path);
  CHECK(resumed.transitions() == cut);
  resumed.advance(total - cut);
  auto whole = ember::start(other, opt);
  whole.advance(total);
  auto const x = resumed.result(), y = whole.result();
  CHECK(same_draws(x, y));
  std::remove(path.c_str());
}

}  // namespace

// With their per-draw statistics (record_stats()): a resumed run keeps them bitwise too.
TEST_CASE("every built-in kernel round-trips through a checkpoint", "[run][checkpoint]") {
  auto U = gauss();
  auto stages = [](auto k) { return k | ember::burn_in(4) | ember::record() | ember::record_stats(); };
  SECTION("ula") {
    auto p = stages(ember::ula(U, {.step_size = 0.05}));
    check_round_trip(p, p, 17, 60);
  }
  SECTION("mala") {
    auto p = stages(ember::mala(U, {.step_size = 0.3}));
    check_round_trip(p, p, 17, 60);
  }
  SECTION("mala, adapted, saved during and after warm-up") {
    // After warm-up the tuned kernel's derived constants (√(2ε)) must come from the double
    // step size, as at the end of warm-up, not from the saved float: a last-bit difference.
    auto p = ember::mala(U, {}) | ember::warmup(30) | ember::record() | ember::record_stats();
    check_round_trip(p, p, 12, 60);
    check_round_trip(p, p, 35, 60);
  }
  SECTION("chees_hmc, saved between warm-up's looks") {
    // Warm-up 200 looks for stuck and high-energy chains after transitions 75, 100 and 150 (the
    // energy test at 150 only, from the second window's end): saved at 120, the energies of the
    // look at 100 and the window's draws and gradients must come back for the same bits.
    auto p = ember::chees_hmc(U, {.warmup = 200}) | ember::record() | ember::record_stats();
    check_round_trip(p, p, 120, 260);
  }
  SECTION("hmc, adapted") {
    auto p = ember::hmc(U, {.integrator_steps = 3}) | ember::warmup(40) | ember::record() | ember::record_stats();
    check_round_trip(p, p, 17, 60);
  }
  SECTION("nuts, adapted") {
    auto p = ember::nuts(U) | ember::warmup(40) | ember::record() | ember::record_stats();
    check_round_trip(p, p, 17, 60);
    check_round_trip(p, p, 45, 60);
  }
  SECTION("mams, saved in the approach, inside a metric window and in the term buffer") {
    auto p = ember::mams(U, {.warmup = 200}) | ember::record();
    check_round_trip(p, p, 20, 260);  // the approach lasts until transition 99 (adapt/approach.hpp)
    check_round_trip(p, p, 120, 260);
    check_round_trip(p, p, 170, 260);
  }
  SECTION("mclmc, adapted by mams_warmup: in the approach and after it, velocities carried") {
    auto p = ember::mclmc(U) | ember::mams_warmup(200) | ember::record();
    check_round_trip(p, p, 20, 260);
    check_round_trip(p, p, 170, 260);
    check_round_trip(p, p, 230, 260);
  }
  SECTION("underdamped_langevin") {
    auto p = stages(ember::underdamped_langevin(U, {.step_size = 0.1}));
    check_round_trip(p, p, 17, 60);
  }
  SECTION("adjusted_underdamped_langevin") {
    auto p = stages(ember::adjusted_underdamped_langevin(U, {.step_size = 0.2}));
    check_round_trip(p, p, 17, 60);
  }
}

TEST_CASE("a program whose energy's type is spelled differently resumes a checkpoint bitwise", "[run][checkpoint]") {
  // Two lambdas with the same body are two types, spelled by the compiler with their source
  // position (clang) or a counter (GCC), as a rebuilt program's would be. The fingerprint leaves
  // the energy's spelling out; the energy is checked by value at the saved states.
  auto a = ember::custom_energy<D>([](auto const& x) { return 0.5f * (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]); });
  auto b = ember::custom_energy<D>([](auto const& x) { return 0.5f * (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]); });
  static_assert(!std::is_same_v<decltype(a), decltype(b)>);
  auto pa = ember::mala(a, {}) | ember::warmup(30) | ember::record();
  auto pb = ember::mala(b, {}) | ember::warmup(30) | ember::record();
  check_round_trip(pa, pb, 12, 50);
  check_round_trip(pa, pb, 35, 50);
}

TEST_CASE("a checkpoint loaded with another energy, other data or another step size is refused", "[run][checkpoint]") {
  std::string const path = "checkpoint_test_refused.ember";
  using RE = std::runtime_error;
  ember::sample_options<float, D> opt{.chains = 16, .seed = 3, .progress = false};
  SECTION("a Gaussian with another mean") {
    auto pipe = ember::mala(gauss(0.f), {.step_size = 0.3}) | ember::record();
    auto other = ember::mala(gauss(0.5f), {.step_size = 0.3}) | ember::record();
    auto r = ember::start(pipe, opt);
    r.advance(5);
    r.save(path);
    CHECK_THAT(message_of<RE>([&] { decltype(r)::load(other, path); }),
               Catch::Contains("was saved with another energy: chain 0's saved state has energy") &&
                   Catch::Contains("(other parameters or data?)"));
    CHECK_NOTHROW(decltype(r)::load(pipe, path));
  }
  SECTION("a regression on other data") {
    std::vector<float> x(40 * D), y(40), y2(40);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = float(int(i * 7 % 11) - 5) / 5.f;
    for (std::size_t i = 0; i < y.size(); ++i) y[i] = y2[i] = float(i % 3 == 0);
    y2[7] = 1.f - y2[7];  // one response flipped
    ember::data_view<float> X{x.data(), 40, D}, Y{y.data(), 40, 1}, Y2{y2.data(), 40, 1};
    auto pipe = ember::hmc(ember::logistic_regression<D>(X, Y, ember::normal_prior{2.0}), {.step_size = 0.1, .integrator_steps = 3}) |
                ember::record();
    auto other = ember::hmc(ember::logistic_regression<D>(X, Y2, ember::normal_prior{2.0}), {.step_size = 0.1, .integrator_steps = 3}) |
                 ember::record();
    auto r = ember::start(pipe, opt);
    r.advance(5);
    r.save(path);
    CHECK_THAT(message_of<RE>([&] { decltype(r)::load(other, path); }), Catch::Contains("was saved with another energy"));
    CHECK_NOTHROW(decltype(r)::load(pipe, path));
  }
  SECTION("ula with another step size") {
    auto pipe = ember::ula(gauss(), {.step_size = 0.05}) | ember::record();
    auto other = ember::ula(gauss(), {.step_size = 0.04}) | ember::record();
    auto r = ember::start(pipe, opt);
    r.advance(5);
    r.save(path);
    CHECK_THAT(message_of<RE>([&] { decltype(r)::load(other, path); }),
               Catch::Contains("was written with step size 0.05") && Catch::Contains("this pipeline's kernel has 0.04"));
  }
  SECTION("mala and adjusted underdamped langevin without a warm-up, with another step size") {
    // Their step size can be set (a warm-up adapts it), but without a warm-up it is the caller's.
    auto pipe = ember::mala(gauss(), {.step_size = 0.05}) | ember::record();
    auto other = ember::mala(gauss(), {.step_size = 0.04}) | ember::record();
    auto r = ember::start(pipe, opt);
    r.advance(5);
    r.save(path);
    CHECK_THAT(message_of<RE>([&] { decltype(r)::load(other, path); }),
               Catch::Contains("was written with step size 0.05") && Catch::Contains("this pipeline's kernel has 0.04"));
    auto lpipe = ember::adjusted_underdamped_langevin(gauss(), {.step_size = 0.05}) | ember::record();
    auto lother = ember::adjusted_underdamped_langevin(gauss(), {.step_size = 0.04}) | ember::record();
    auto l = ember::start(lpipe, opt);
    l.advance(5);
    l.save(path);
    CHECK_THAT(message_of<RE>([&] { decltype(l)::load(lother, path); }),
               Catch::Contains("was written with step size 0.05") && Catch::Contains("this pipeline's kernel has 0.04"));
    CHECK_NOTHROW(decltype(l)::load(lpipe, path));
  }
  SECTION("a warm-up whose step size aims at another target") {
    auto pipe = ember::mala(gauss()) | ember::warmup(50, ember::step_size({.target = 0.6})) | ember::record();
    auto other = ember::mala(gauss()) | ember::warmup(50, ember::step_size({.target = 0.7})) | ember::record();
    auto unnamed = ember::mala(gauss()) | ember::warmup(50, ember::step_size()) | ember::record();
    auto r = ember::start(pipe, opt);
    r.advance(20);
    r.save(path);
    CHECK_THAT(message_of<RE>([&] { decltype(r)::load(other, path); }),
               Catch::Contains("aims at another target acceptance than this pipeline's step_size({.target = ...})"));
    CHECK_NOTHROW(decltype(r)::load(pipe, path));
    CHECK_NOTHROW(decltype(r)::load(unnamed, path));  // no target named: the saved run goes on with its own
  }
  SECTION("another structure") {
    auto pipe = ember::hmc(gauss(), {.step_size = 0.3, .integrator_steps = 3}) | ember::record();
    auto other = ember::hmc(gauss(), {.step_size = 0.3, .integrator_steps = 3}) | ember::burn_in(0) | ember::record();
    auto r = ember::start(pipe, opt);
    r.advance(5);
    r.save(path);
    CHECK_THAT(message_of<RE>([&] { decltype(ember::start(other, opt))::load(other, path); }),
               Catch::Contains("was written for a different pipeline"));
  }
  std::remove(path.c_str());
}

TEST_CASE("a saved energy that differs from this energy's only by rounding loads and resumes from the saved values",
          "[run][checkpoint]") {
  // The same model rounded otherwise, U(x)(1 + 2⁻²⁰), stands for a rebuilt program whose compiler
  // contracts a·b + c into FMAs elsewhere: it loads, and the run goes on from the saved energies,
  // draw for draw as the program that saved it. A difference of 2⁻⁸ is another model: refused.
  auto exact = ember::custom_energy<D>([](auto const& x) { return 0.5f * (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]); });
  auto rounded = ember::custom_energy<D>(
      [](auto const& x) { return (0.5f * (1.f + 0x1p-20f)) * (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]); });
  auto other = ember::custom_energy<D>(
      [](auto const& x) { return (0.5f * (1.f + 0x1p-8f)) * (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]); });
  auto pipe = ember::mala(exact, {.step_size = 0.4}) | ember::record();
  std::string const path = "checkpoint_test_rounding.ember";
  ember::sample_options<float, D> opt{.chains = 16, .seed = 5, .progress = false};
  auto r = ember::start(pipe, opt);
  r.advance(6);
  r.save(path);
  auto const near = ember::mala(rounded, {.step_size = 0.4}) | ember::record();
  CHECK_NOTHROW(decltype(ember::start(near, opt))::load(near, path));
  auto const far = ember::mala(other, {.step_size = 0.4}) | ember::record();
  CHECK_THROWS_WITH(decltype(ember::start(far, opt))::load(far, path), Catch::Contains("was saved with another energy"));
  std::remove(path.c_str());
}
