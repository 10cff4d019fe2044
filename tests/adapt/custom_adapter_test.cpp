// Warm-up adapters on the protocol of adapt/adapter.hpp: a user's own (examples/11_custom_adapter.hpp,
// a Robbins–Monro step size) tunes a kernel beside the built-in metric adaptation and the kept
// draws have the target's moments (z-scores, generic/sampler_checks.hpp); its state goes through
// a checkpoint bitwise; and the built-in adapters give the same draws in any order (the fold
// applies parameters in one fixed order and lets every adapter settle after all updates).
#include "../../examples/11_custom_adapter.hpp"
#include "generic/sampler_checks.hpp"
#include "support/scratch_dir.hpp"

#include <cstring>
#include <string>
#include <vector>

namespace {

template <class R>
bool same_bits(R const& a, R const& b) {
  auto const x = a.final_states(), y = b.final_states();
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(x[0])) == 0 &&
         a.adapted().step_size == b.adapted().step_size;
}

}  // namespace

TEST_CASE("a user's Robbins-Monro step-size adapter tunes MALA, and the draws have the target's moments",
          "[adapt][custom][statistics]") {
  ember_test::gaussian10 g;
  // From ε = 0.001 (acceptance ≈ 1 > 0.574) the adapter must grow ε by orders of magnitude; 1,000
  // transitions after warm-up at the tuned ε (λ_max/ε ≈ 10 per e-fold at ε ≈ 0.4) relax the
  // start far below the standard errors.
  auto pipe = ember::mala(g.energy(), {.step_size = 0.001}) | ember::warmup(600, robbins_monro{}, ember::diagonal_mass()) |
              ember::burn_in(1'000);
  auto r = ember::sample(pipe, {.chains = 20'000, .steps = 1, .seed = 21});
  INFO("tuned step size " << r.adapted().step_size << ", acceptance " << r.acceptance_rate());
  CHECK(r.adapted().step_size > 0.1);
  CHECK(r.acceptance_rate() < 0.99);
  CHECK(r.target_acceptance() == 0.574);  // the adapter's notes reach the result
  ember_test::check_gaussian_moments<decltype(r), 10>(r, g.mu, g.sigma, ember_test::gaussian10::pairs());
}

TEST_CASE("a user's adapter state goes through a checkpoint: a run saved mid-warm-up goes on bitwise", "[adapt][custom][checkpoint]") {
  ember_test::scratch_dir dir("custom_adapter");
  ember_test::gaussian10 g;
  auto pipe = ember::mala(g.energy()) | ember::warmup(300, robbins_monro{.target = 0.6}, ember::diagonal_mass()) | ember::record();
  ember::sample_options<float, 10> opt{.chains = 64, .steps = 100, .seed = 4};
  auto whole = ember::start(pipe, opt);
  whole.advance(400);
  auto part = ember::start(pipe, opt);
  part.advance(137);  // inside a metric window
  part.save((dir / "run.ckpt").string());
  auto resumed = decltype(part)::load(pipe, (dir / "run.ckpt").string());
  resumed.advance(400 - 137);
  CHECK(same_bits(whole.result(), resumed.result()));
}

TEST_CASE("the built-in adapters give the same draws in any order", "[adapt]") {
  ember_test::gaussian10 g;
  ember::sample_options<float, 10> opt{.chains = 128, .steps = 50, .seed = 9};
  auto hmc = ember::hmc(g.energy(), {.integrator_steps = 8});
  using namespace ember;
  auto a = sample(hmc | warmup(400, step_size(), diagonal_mass(), chees()) | record(), opt);
  auto b = sample(hmc | warmup(400, chees(), diagonal_mass(), step_size()) | record(), opt);
  auto c = sample(hmc | warmup(400, diagonal_mass(), chees(), step_size()) | record(), opt);
  CHECK(same_bits(a, b));
  CHECK(same_bits(a, c));
  auto m = ember::mala(g.energy());
  auto d = sample(m | warmup(400, step_size(per_chain), dense_mass()) | record(), opt);
  auto e = sample(m | warmup(400, dense_mass(), step_size(per_chain)) | record(), opt);
  CHECK(same_bits(d, e));
}

namespace {
// Writes the step size without declaring it in `tunes`: the fold could not keep the parameters'
// order or refuse a second step-size adapter, so the run refuses it.
struct undeclared_step_size {
  struct state {
    double eps = 0.1;
  };
  template <class K>
  state init(K const&, ember::warmup_setup const&) const {
    return {};
  }
  template <class K>
  void set(state const& s, ember::kernel_params<K>& p) const {
    p.step_size = s.eps;
  }
  template <class K, class R>
  void update(state&, ember::warmup_step<K, R> const&) const {}
};
}  // namespace

TEST_CASE("an adapter that writes a parameter its tunes does not name is refused before any work", "[adapt][custom]") {
  ember_test::gaussian10 g;
  auto pipe = ember::mala(g.energy(), {.step_size = 0.1}) | ember::warmup(10, undeclared_step_size{});
  CHECK_THROWS_WITH(ember::start(pipe, {.chains = 8}),
                    Catch::Contains("an adapter writes the step size but its `tunes` does not name it"));
}

TEST_CASE("a checkpoint whose diagonal metric came from draws and gradients is refused by one from draws only",
          "[adapt][checkpoint]") {
  ember_test::scratch_dir dir("adapter_refuses");
  ember_test::gaussian10 g;
  auto both = ember::mala(g.energy()) | ember::warmup(200, ember::step_size(), ember::diagonal_mass());
  auto draws = ember::mala(g.energy()) | ember::warmup(200, ember::step_size(), ember::diagonal_mass({.gradients = false}));
  static_assert(std::is_same_v<decltype(both), decltype(draws)>);  // one type: the flag is a value
  auto r = ember::start(both, {.chains = 16, .seed = 2});
  r.advance(100);
  r.save((dir / "run.ckpt").string());
  CHECK_THROWS_WITH(decltype(r)::load(draws, (dir / "run.ckpt").string()),
                    Catch::Contains("metric came from draws and gradients, and this pipeline's comes from the draws alone"));
  CHECK_NOTHROW(decltype(r)::load(both, (dir / "run.ckpt").string()));
}
