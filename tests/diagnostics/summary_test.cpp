// summarize()/summary(): the table and its WARNING lines, on a stand-in for result<T, D> that has
// only the public accessors summarize reads, filled with draws whose diagnostics are known, and
// on a real run.
#include "ar1.hpp"
#include <ember/targets/neal_funnel.hpp>
#include <ember/targets/neal_funnel_noncentred.hpp>

#include <ember/diagnostics/summary.hpp>
#include <ember/ember.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <numeric>
#include <span>
#include <sstream>
#include <string>
#include <vector>

namespace {

// Draws in ember's layout, data[(k·D + d)·C + c], with per-chain divergence flags.
template <int D>
struct fake_result {
  static constexpr int dim = D;
  std::int64_t C = 0, K = 0, transitions = 0;
  std::vector<double> data, fin;
  std::vector<int> div;
  double acc = 0.6;
  struct view {
    fake_result const* r;
    double operator()(std::int64_t k, std::int64_t c, int d) const { return r->data[std::size_t((k * D + d) * r->C + c)]; }
    bool empty() const { return r->data.empty(); }
  };
  view samples() const { return {this}; }
  std::int64_t chains() const { return C; }
  std::int64_t kept() const { return K; }
  bool divergent(std::int64_t c) const { return div[std::size_t(c)] != 0; }
  std::int64_t divergent_chains() const { return std::accumulate(div.begin(), div.end(), std::int64_t(0)); }
  std::int64_t divergent_transitions() const { return transitions; }
  double acceptance_rate() const { return acc; }
  double seconds() const { return 0.5; }
  std::span<double const> final_states() const { return fin; }
  // Each transition's Hamiltonian, energy[k·C + c], where the test gives it (record_stats()).
  std::vector<double> energy;
  bool has_sample_stat(ember::draw_stat s) const { return s == ember::draw_stat::energy && !energy.empty(); }
  std::vector<double> sample_stat(ember::draw_stat) const {  // (chain, draw), as result::sample_stat(s)
    std::vector<double> v(energy.size());
    for (std::int64_t c = 0; c < C; ++c)
      for (std::int64_t k = 0; k < K; ++k) v[std::size_t(c * K + k)] = energy[std::size_t(k * C + c)];
    return v;
  }
};

// Dimension d of every chain from its own AR(1) draws (chains × draws from ember_test::ar1).
template <int D>
fake_result<D> make(std::vector<ember_test::chains> const& per_dim) {
  fake_result<D> r;
  r.C = per_dim[0].M;
  r.K = per_dim[0].N;
  r.data.resize(std::size_t(r.C * r.K * D));
  r.div.assign(std::size_t(r.C), 0);
  for (int d = 0; d < D; ++d)
    for (std::int64_t c = 0; c < r.C; ++c)
      for (std::int64_t k = 0; k < r.K; ++k) r.data[std::size_t((k * D + d) * r.C + c)] = per_dim[std::size_t(d)](c, k);
  return r;
}

std::string text(auto const& table) {
  std::ostringstream os;
  os << table;
  return os.str();
}

bool has(std::string const& s, std::string const& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("summary of agreeing, well-mixed chains prints the table and no warning", "[diagnostics][summary]") {
  auto r = make<2>({ember_test::ar1(8, 2000, 0.3, 1), ember_test::ar1(8, 2000, 0.0, 2)});
  auto s = ember::summarize(r);
  auto out = text(s);
  INFO(out);
  CHECK(s.warnings().empty());
  CHECK(!has(out, "WARNING"));
  CHECK(has(out, "ESS bulk"));
  CHECK(s.draws == 8 * 2000);
  // Each row is diagnose() of that dimension's draws, up to float rounding in the FFT (the two
  // instantiations may contract a·b + c into FMAs differently): 1e-6 relative is 10 float ulps.
  auto d0 = ember_test::ar1(8, 2000, 0.3, 1);
  auto c = ember::diagnose(d0, 8, 2000);
  CHECK(s.dims[0].mean == Approx(c.mean).epsilon(1e-12));
  CHECK(s.dims[0].ess == Approx(c.ess_bulk).epsilon(1e-6));
  CHECK(s.dims[0].ess_tail == Approx(c.ess_tail).epsilon(1e-6));
  CHECK(s.dims[0].rhat == Approx(c.rhat).epsilon(1e-6));
}

TEST_CASE("summary warns about antithetic chains, naming the ESS of x^2", "[diagnostics][summary]") {
  // φ = −0.5: ESS(x) = 3S (> S), ESS(x²) = 0.6S.
  auto r = make<1>({ember_test::ar1(4, 5000, -0.5, 3)});
  auto s = ember::summarize(r);
  auto out = text(s);
  INFO(out);
  CHECK(s.dims[0].ess > double(s.draws));
  CHECK(s.dims[0].ess_sq < double(s.draws));
  CHECK(has(out, "WARNING: ESS above the number of draws"));
  char sq[32];
  std::snprintf(sq, sizeof sq, "%.0f", s.dims[0].ess_sq);
  CHECK(has(out, std::string("is as low as ") + sq));
}

TEST_CASE("summary warns when R-hat exceeds 1.01", "[diagnostics][summary]") {
  // Half the chains shifted by half an sd: R̂ ≈ 1.033 (sd 0.003), see convergence_test.
  auto r = make<2>({ember_test::ar1(8, 1000, 0.0, 4), ember_test::ar1(8, 1000, 0.0, 11, {0, 0, 0, 0, 0.5, 0.5, 0.5, 0.5})});
  auto out = text(ember::summarize(r));
  INFO(out);
  CHECK(has(out, "WARNING: R-hat above 1.01 in 1 of 2 dimensions"));
  CHECK(has(out, "dim 1)"));
}

TEST_CASE("summary says first, before the table, that divergent chains were dropped", "[diagnostics][summary]") {
  auto r = make<1>({ember_test::ar1(10, 1000, 0.0, 5)});
  // Divergent chains carry garbage the statistics must not see.
  for (std::int64_t k = 0; k < r.K; ++k) r.data[std::size_t(k * r.C + 3)] = 1e30, r.data[std::size_t(k * r.C + 7)] = -1e30;
  r.div[3] = r.div[7] = 1;
  r.transitions = 12;
  auto s = ember::summarize(r);
  auto out = text(s);
  INFO(out);
  auto w = s.warnings();
  REQUIRE(w.size() >= 2);
  CHECK(has(w[0], "2 of 10 chains diverged"));
  CHECK(has(w[0], "describes the 8 surviving chains only"));
  CHECK(has(w[1], "12 divergent transitions"));
  CHECK(has(w[1], "raise the target acceptance (chees_hmc(U, {.target_acceptance = 0.9})"));  // how, in the user's terms
  CHECK(has(w[1], "Python: target_accept=0.9"));
  CHECK(out.find("chains diverged") < out.find("ESS bulk"));
  CHECK(s.draws == 8 * 1000);
  CHECK(std::abs(s.dims[0].mean) < 5 * s.dims[0].mcse);  // the garbage was left out
  CHECK(s.dims[0].rhat < 1.01);
}

TEST_CASE("summary warns about acceptance far from the target and spread between chains", "[diagnostics][summary]") {
  auto r = make<1>({ember_test::ar1(4, 1000, 0.0, 6)});
  r.acc = 0.3;
  std::vector<double> per_chain{0.31, 0.29, 0.30, 0.02};
  auto s = ember::summarize(r, {.target_acceptance = 0.574, .chain_acceptance = per_chain});
  auto out = text(s);
  INFO(out);
  CHECK(has(out, "WARNING: acceptance 0.3000 is far from the kernel's target 0.574"));
  CHECK(has(out, "too large"));
  CHECK(has(out, "min 0.0200, median 0.2950, max 0.3100"));
  CHECK(has(out, "WARNING: acceptance differs widely between chains"));
  // Close to the target and uniform: no acceptance warnings.
  r.acc = 0.56;
  std::vector<double> even{0.55, 0.57, 0.56, 0.56};
  auto quiet = text(ember::summarize(r, {.target_acceptance = 0.574, .chain_acceptance = even}));
  INFO(quiet);
  CHECK(!has(quiet, "WARNING"));
  // A harmonic target (ChEES): the arithmetic rate may lie above it, not below.
  r.acc = 0.77;
  auto above = text(ember::summarize(r, {.target_acceptance = 0.651, .chain_acceptance = even, .harmonic_target = true}));
  INFO(above);
  CHECK(has(above, "(target 0.651 for the harmonic mean over chains)"));
  CHECK(!has(above, "WARNING"));
  CHECK(has(text(ember::summarize(r, {.target_acceptance = 0.651, .chain_acceptance = even})), "too small"));
  r.acc = 0.5;
  CHECK(has(text(ember::summarize(r, {.target_acceptance = 0.651, .chain_acceptance = even, .harmonic_target = true})),
            "WARNING: acceptance 0.5000 is far from the kernel's target 0.651"));
}

TEST_CASE("summary warns about low ESS", "[diagnostics][summary]") {
  // φ = 0.99 over 2 × 400 draws: ESS ≈ 800/199 ≈ 4.
  auto r = make<1>({ember_test::ar1(2, 400, 0.99, 7)});
  auto out = text(ember::summarize(r));
  INFO(out);
  CHECK(has(out, "WARNING: bulk or tail ESS below 400"));
}

TEST_CASE("result::summary() of a real run goes through summarize", "[diagnostics][summary]") {
  ember::gaussian<double, 3, ember::covariance::isotropic> U(ember::vec<double, 3>{{1.0, -2.0, 0.5}}, 1.5);
  // Split-R̂ − 1 of agreeing chains is about τ/2h: thinned so that τ ≈ 2 over h = 500, R̂ ≈ 1.002.
  auto pipe = ember::mala(U, {.step_size = 0.8}) | ember::burn_in(500) | ember::thin(4) | ember::record();
  auto r = ember::sample(pipe, {.chains = 64, .steps = 4000, .seed = 9});
  auto s = r.summary({.target_acceptance = 0.574});
  auto again = ember::summarize(r, {.target_acceptance = 0.574});
  INFO(text(s));
  for (int d = 0; d < 3; ++d) {
    CHECK(s.dims[d].ess == again.dims[d].ess);
    CHECK(s.dims[d].rhat < 1.01);
    // The mean within 5 MCSE of the truth, the sd within 5 of its standard errors (√(2/ESS(x²)) relative).
    CHECK(std::abs(s.dims[d].mean - U.mean[d]) < 5 * s.dims[d].mcse);
    CHECK(std::abs(s.dims[d].sd / 1.5 - 1) < 5 * std::sqrt(2 / s.dims[d].ess_sq));
  }
}

TEST_CASE("summary says when chains sit apart, and not for chains that agree however slowly they mix",
          "[diagnostics][summary]") {
  SECTION("one chain of eight in another mode, 6 sds away") {
    auto r = make<2>({ember_test::ar1(8, 1000, 0.5, 21), ember_test::ar1(8, 1000, 0.5, 22, {0, 0, 0, 0, 0, 0, 0, 6})});
    auto s = ember::summarize(r);
    auto out = text(s);
    INFO(out);
    CHECK(s.chains_apart == 1);
    CHECK(s.apart_dim == 1);
    CHECK(has(out, "WARNING: 1 of 8 chains sit apart from the others (the farthest"));
    CHECK(has(out, "most in dim 1:"));
    CHECK(has(out, "is not its probability"));
  }
  SECTION("two chains of sixteen in a mode 1.9 sds away in each of 10 coordinates (6 sds along the diagonal)") {
    std::vector<ember_test::chains> dims;
    std::vector<double> offset(16, 0.0);
    offset[3] = offset[11] = -6 / std::sqrt(10.0);
    for (int d = 0; d < 10; ++d) dims.push_back(ember_test::ar1(16, 1000, 0.5, 40 + std::uint64_t(d), offset));
    auto r = make<10>(dims);
    auto s = ember::summarize(r);
    INFO(text(s));
    CHECK(s.chains_apart == 2);
  }
  SECTION("slowly mixing chains that agree: phi = 0.99, about 10 effective draws per chain") {
    // A chain mean strays from the others by about sd/sqrt(10) = 0.3 sd: 3 sds is 10 of those.
    auto r = make<1>({ember_test::ar1(16, 2000, 0.99, 23)});
    auto s = ember::summarize(r);
    INFO(text(s));
    CHECK(s.chains_apart == 0);
    // and in 20 dimensions at once, where the distance over all of them is about √(20/10)
    std::vector<ember_test::chains> dims;
    for (int d = 0; d < 20; ++d) dims.push_back(ember_test::ar1(16, 2000, 0.99, 60 + std::uint64_t(d)));
    auto r20 = make<20>(dims);
    CHECK(ember::summarize(r20).chains_apart == 0);
  }
}

TEST_CASE("summary gives each chain's E-BFMI and warns below 0.3", "[diagnostics][summary]") {
  auto r = make<1>({ember_test::ar1(4, 2000, 0.0, 31)});
  SECTION("the formula on a hand sequence: squared differences over squared deviations (ArviZ's bfmi)") {
    std::vector<double> e{1, 2, 4, 7};  // differences 1, 2, 3: 14; deviations from 3.5: 21
    CHECK(ember::detail::energy_bfmi([&](std::int64_t k) { return e[std::size_t(k)]; }, 4) == Approx(2.0 / 3).epsilon(1e-15));
    CHECK(std::isnan(ember::detail::energy_bfmi([&](std::int64_t k) { return e[std::size_t(k)]; }, 2)));
  }
  SECTION("no energies kept: no E-BFMI and no line") {
    auto s = ember::summarize(r);
    CHECK(s.bfmi.empty());
    CHECK(!has(text(s), "E-BFMI"));
  }
  SECTION("energies that barely move in two chains of four") {
    // An AR(1) energy with coefficient φ has E-BFMI 2(1 − φ) in expectation: 2 for φ = 0, 0.1 for
    // φ = 0.95 (over 2,000 draws the estimates lie within ±0.1 and ±0.03 of these).
    auto const fast = ember_test::ar1(2, 2000, 0.0, 32), slow = ember_test::ar1(2, 2000, 0.95, 33);
    r.energy.resize(std::size_t(4 * 2000));
    for (std::int64_t k = 0; k < 2000; ++k)
      for (std::int64_t c = 0; c < 4; ++c) r.energy[std::size_t(k * 4 + c)] = c % 2 ? slow(c / 2, k) : fast(c / 2, k);
    auto s = ember::summarize(r);
    auto out = text(s);
    INFO(out);
    REQUIRE(s.bfmi.size() == 4);
    CHECK(s.bfmi[0] > 1.5);
    CHECK(s.bfmi[1] < 0.3);
    CHECK(s.low_bfmi_chains() == 2);
    CHECK(has(out, "WARNING: E-BFMI below 0.3 in 2 of 4 chains"));
    CHECK(has(out, "E-BFMI per chain: lowest"));
    SECTION("a diverged chain has none and is not counted") {
      r.div[1] = 1;
      auto s2 = ember::summarize(r);
      CHECK(std::isnan(s2.bfmi[1]));
      CHECK(s2.low_bfmi_chains() == 1);
      CHECK(has(text(s2), "WARNING: E-BFMI below 0.3 in 1 of 3 chains"));
    }
  }
}

TEST_CASE("NUTS on Neal's funnel: E-BFMI warns where it is centred and not where it is non-centred",
          "[diagnostics][summary]") {
  // Measured over seeds 1-3 (4 chains × 1,000 draws after 1,000 of warm-up): every chain's E-BFMI
  // 0.05-0.16 on the centred funnel, 1.02-1.20 on the non-centred one.
  auto const run = [](auto const& target) {
    return ember::sample(ember::nuts(target.energy()) | ember::warmup(1000) | ember::record() | ember::record_stats(),
                         {.chains = 4, .steps = 1000, .seed = 1});
  };
  auto const centred = run(ember::targets::neal_funnel<double>{}).summary();
  auto const noncentred = run(ember::targets::neal_funnel_noncentred<double>{}).summary();
  INFO(text(centred) << text(noncentred));
  CHECK(centred.low_bfmi_chains() == 4);
  CHECK(has(text(centred), "WARNING: E-BFMI below 0.3"));
  CHECK(noncentred.low_bfmi_chains() == 0);
  CHECK(!has(text(noncentred), "E-BFMI below"));
}
