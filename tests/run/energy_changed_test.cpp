// run::energy_changed(): a run whose energy changed in place (a neural energy's weights updated
// between advance calls) recomputes every chain's cached energy and gradient. The energy here is
// an mlp whose output bias then rises by 1,000: a Metropolis test against the cached (old) energy
// would reject every proposal (e^-1000), so after the call chains must move, and without it none
// does (which is why the call exists).
#include <ember/ember.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

using namespace ember;

namespace {
// |x1| + |x2| as ReLU units; the output bias is θ's last entry.
mlp_weights<double> laplace_weights() {
  return mlp_weights<double>(std::vector<dense_layer<double>>{{"0", 4, 2, {1, 0, -1, 0, 0, 1, 0, -1}, {0, 0, 0, 0}},
                                                              {"1", 1, 4, {1, 1, 1, 1}, {0}}});
}

template <class Run>
std::int64_t moved_after_one(Run& run) {
  auto const before = run.result();
  run.advance(1);
  auto const after = run.result();
  std::int64_t moved = 0;
  for (std::int64_t c = 0; c < run.chains(); ++c) moved += before.final_state(c)[0] != after.final_state(c)[0];
  return moved;
}
}  // namespace

TEST_CASE("a run recomputes its chains' cached energies when told its energy changed", "[run][mlp]") {
  for (bool told : {false, true}) {
    auto w = laplace_weights();
    mlp<double, 2, nn::relu, 4> const U(w);
    auto run = start(mala(U, {.step_size = 0.8}), {.chains = 256, .seed = 5}, backend::cpu{});
    run.advance(50);
    CHECK(moved_after_one(run) > 0);
    w.parameters().back() += 1000;  // U + 1000: the same law, a different energy
    if (told) run.energy_changed();
    std::int64_t const moved = moved_after_one(run);
    INFO((told ? "after energy_changed()" : "without energy_changed()") << ": " << moved << " of 256 chains moved");
    if (told)
      CHECK(moved > 64);  // MALA at this step size accepts about half its proposals
    else
      CHECK(moved == 0);  // every test against the old energy: e^-1000
  }
}

TEST_CASE("energy_changed() before the first advance keeps the default starts", "[run][mlp]") {
  // The starts are drawn when the run first needs them; the call must draw them, not read
  // unset memory. |x1| + |x2| is computed exactly on either path, so the runs agree bit for bit.
  auto w = laplace_weights();
  mlp<double, 2, nn::relu, 4> const U(w);
  auto told = start(mala(U, {.step_size = 0.8}), {.chains = 64, .seed = 9}, backend::cpu{});
  told.energy_changed();
  told.advance(20);
  auto plain = start(mala(U, {.step_size = 0.8}), {.chains = 64, .seed = 9}, backend::cpu{});
  plain.advance(20);
  auto const a = told.result(), b = plain.result();
  for (std::int64_t c = 0; c < 64; ++c)
    for (int d = 0; d < 2; ++d) CHECK(a.final_state(c)[d] == b.final_state(c)[d]);
}
