// A small matrix formed by hana::cartesian_product: its size, the compile-time skip of
// configurations that make no sense (with their reasons), the health gates firing on a
// deliberately broken sampler and not on a sound one, and one well-formed JSON line per row.
#include <ember/benchmark/driver.hpp>
#include <ember/benchmark/matrix.hpp>

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <stdexcept>
#include <sstream>
#include <string>
#include <vector>

#include <ember/ad/model.hpp>
#include <ember/distributions.hpp>
#include <ember/targets/eight_schools.hpp>

#include <cmath>

#include "benchmark/json_check.hpp"
#include "benchmark/test_targets.hpp"

namespace bm = ember::benchmark;
namespace hana = boost::hana;

namespace {
// MALA at a fixed step far too long for a unit Gaussian: almost nothing is accepted.
struct broken_mala {
  char const* name = "broken_mala";
  static constexpr bool needs_gradient = true;
  double target_acceptance = 0.574;
  template <class E>
  auto operator()(E const& U, std::int64_t w) const {
    return ember::mala(U, {.step_size = 30.0}) | ember::burn_in(w);
  }
};
// A command line as command_line::parse and drive take it (the strings outlive argv).
struct command {
  std::vector<std::string> args;
  std::vector<char*> argv;
  explicit command(std::vector<std::string> a) : args(std::move(a)) {
    argv.push_back(const_cast<char*>("matrix"));
    for (auto& s : args) argv.push_back(s.data());
  }
  int argc() const { return int(argv.size()); }
};
ember::benchmark::command_line parse(std::vector<std::string> a) {
  command c(std::move(a));
  return ember::benchmark::command_line::parse(c.argc(), c.argv.data());
}
// A row that records only that configuration `target` ran.
void add_probe_row(ember::benchmark::report& r, char const* target) {
  ember::benchmark::configuration_metrics m;
  m.target = target;
  m.skipped = "probe";
  r.add(m);
}
}  // namespace

TEST_CASE("a matrix runs every configuration of the product and skips the senseless ones with a reason",
          "[benchmark]") {
  auto const targets =
      hana::make_tuple(bm::target<ember_test::normal2>{"normal2"}, bm::target<ember_test::value_only>{"value_only"});
  auto const samplers = hana::make_tuple(bm::adapted_mala{}, broken_mala{});
  auto const precisions = hana::tuple_t<float>;
  auto const backends = hana::tuple_t<ember::backend::cpu, ember::backend::cuda>;
  static_assert(decltype(hana::length(bm::configurations(targets, samplers, precisions, backends)))::value == 8);

  std::ostringstream json;
  bm::report out(&json);
  bm::run_matrix(out, targets, samplers, precisions, backends, {.chains = {64}, .warmup = 300, .draws = 400, .seed = 3});
  auto const& rows = out.rows();
  REQUIRE(rows.size() == 8);
  int ran = 0;
  for (auto const& m : rows) {
    if (m.backend == "cuda") {
      CHECK(m.skipped.find("needs nvcc") != std::string::npos);
    } else if (m.target == "value_only") {
      CHECK(m.skipped == m.sampler + " needs a gradient and this energy has no value_and_grad");
    } else {
      CHECK(m.skipped.empty());
      ++ran;
      CHECK(m.grads_sampling == 400);  // MALA: one gradient per transition
      CHECK(m.grads_warmup == 300);
      CHECK(m.ess_per_grad == Approx(m.ess_min / (64.0 * 400)));
      if (m.sampler == "mala") {
        CHECK(m.health == "ok");
      } else {
        CHECK(m.acceptance < 0.1);
        CHECK(m.health.find("acceptance") != std::string::npos);
      }
    }
  }
  CHECK(ran == 2);

  std::istringstream lines(json.str());
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) {
    ++n;
    auto const keys = ember_test::json_object_keys(line);
    REQUIRE(keys.size() == 35);
    CHECK(keys.front() == "impl");
    CHECK(keys.back() == "machine");
  }
  CHECK(n == 8);

  std::ostringstream table;
  out.print_table(table);
  CHECK(table.str().find("FAILED: ") != std::string::npos);
  CHECK(table.str().find("skipped: mala needs a gradient") != std::string::npos);
}

TEST_CASE("chain counts above a target's max_chains run once, at the cap", "[benchmark]") {
  bm::target<ember_test::normal2> capped{"normal2"};
  capped.max_chains = 32;
  bm::report out(nullptr);
  bm::run_matrix(out, hana::make_tuple(capped), hana::make_tuple(bm::adapted_mala{}), hana::tuple_t<float>,
                 hana::tuple_t<ember::backend::cpu>, {.chains = {16, 64, 128}, .warmup = 100, .draws = 100, .seed = 3});
  auto const& rows = out.rows();
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].chains == 16);
  CHECK(rows[1].chains == 32);
}

TEST_CASE("replicates run each configuration on consecutive seeds, and the table gives their spread", "[benchmark]") {
  bm::report out(nullptr);
  bm::run_matrix(out, hana::make_tuple(bm::target<ember_test::normal2>{"normal2"}), hana::make_tuple(bm::adapted_mala{}),
                 hana::tuple_t<float>, hana::tuple_t<ember::backend::cpu>,
                 {.chains = {16}, .warmup = 100, .draws = 100, .seed = 5, .replicates = 3});
  auto const& rows = out.rows();
  REQUIRE(rows.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) CHECK(rows[i].seed == 5 + i);
  // Three seeds, three runs: not three copies of one.
  CHECK(rows[0].ess_min != rows[1].ess_min);
  CHECK(rows[1].ess_min != rows[2].ess_min);
  std::ostringstream table;
  out.print_table(table);
  CHECK(table.str().find("replicates (seeds)") != std::string::npos);
  CHECK(parse({"--replicates", "4"}).axes.replicates == 4);
  CHECK_THROWS(parse({"--replicates", "0"}));
  // Mean, range and Student's t interval: {1, 2, 3} has mean 2, sd 1, and t(2) = 4.303.
  double const v[] = {1, 2, 3};
  auto const st = bm::replicate_spread(v);
  CHECK(st.mean == 2);
  CHECK(st.min == 1);
  CHECK(st.max == 3);
  CHECK(st.half_width == Approx(4.303 / std::sqrt(3.0)).epsilon(1e-12));
}

TEST_CASE("the matrix driver's --host-cache takes MiB, 0 for fresh memory, and refuses anything else", "[benchmark]") {
  CHECK(parse({}).host_cache_mib == -1);
  CHECK(parse({"--host-cache", "0"}).host_cache_mib == 0);
  CHECK(parse({"--host-cache", "256"}).host_cache_mib == 256);
  for (std::string bad : {"-3", "1.5", "lots", "", "1099511627777"})
    CHECK_THROWS_WITH(parse({"--host-cache", bad}),
                      "ember benchmark: --host-cache takes MiB from 0 to 2^40, got '" + bad + "'");
  // drive() sets the limit before the first configuration runs.
  auto const saved = ember::host_cache().limit_bytes;
  std::size_t seen = 0;
  static std::size_t* seen_by_configuration = nullptr;
  seen_by_configuration = &seen;
  command c({"--host-cache", "3", "--jsonl", "/dev/null"});
  std::streambuf* out = std::cout.rdbuf(nullptr);  // the table
  int const rc = ember::benchmark::drive(c.argc(), c.argv.data(), "", 3, 12,
                                         {{"probe", [](ember::benchmark::report&, ember::benchmark::run_axes const&) {
                                            *seen_by_configuration = ember::host_cache().limit_bytes;
                                          }}});
  std::cout.rdbuf(out);
  CHECK(rc == 0);
  CHECK(seen == std::size_t(3) << 20);
  ember::set_host_cache_limit(saved);
}

TEST_CASE("the driver takes any 64-bit seed, refuses what matches nothing, and keeps the rows of a failed run",
          "[benchmark][driver]") {
  CHECK(parse({"--seed", "0"}).axes.seed == 0);
  CHECK(parse({"--seed", "18446744073709551615"}).axes.seed == ~std::uint64_t(0));
  CHECK(parse({"--seed", "9223372036854775808"}).axes.seed == std::uint64_t(1) << 63);
  for (std::string bad : {"-1", "18446744073709551616", "1e3", "", "+5"})
    CHECK_THROWS_WITH(parse({"--seed", bad}), "ember benchmark: --seed takes an integer from 0 to 2^64 - 1, got '" + bad + "'");

  using ember::benchmark::report;
  using ember::benchmark::run_axes;
  std::initializer_list<std::pair<char const*, ember::benchmark::configuration_fn>> const configurations{
      {"first", [](report& r, run_axes const&) { add_probe_row(r, "first"); }},
      {"refused", [](report&, run_axes const&) { throw std::invalid_argument("ember::sample: a refusal"); }},
      {"third", [](report& r, run_axes const&) { add_probe_row(r, "third"); }}};
  std::streambuf* out = std::cout.rdbuf(nullptr);  // the table
  std::streambuf* err = std::cerr.rdbuf(nullptr);
  auto drive = [&](std::vector<std::string> a) {
    command c(std::move(a));
    return ember::benchmark::drive(c.argc(), c.argv.data(), "", 3, 12, configurations);
  };
  std::string const path = "driver_test_rows.jsonl";
  int const failed = drive({"--jsonl", path});
  int const nothing = drive({"--only", "no-such-configuration", "--jsonl", "driver_test_unused.jsonl"});
  int const full = drive({"--jsonl", "/dev/full"});
  std::cout.rdbuf(out);
  std::cerr.rdbuf(err);
  CHECK(failed == 1);   // a configuration threw: reported, counted, the others run
  CHECK(nothing == 2);  // --only matched nothing
  CHECK(full == 2);     // the JSON lines could not be written
  std::ifstream f(path);
  std::string lines((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  CHECK(lines.find("\"first\"") != std::string::npos);
  CHECK(lines.find("\"third\"") != std::string::npos);
  CHECK_FALSE(std::ifstream("driver_test_unused.jsonl").good());
  std::remove(path.c_str());
}

namespace {
// Eight schools written as a model (named, constrained parameters; log-densities; reverse-mode
// gradients), in the coordinates of targets::eight_schools (μ, log τ, θ̃), whose reference
// moments it keeps: a user's model joins a matrix the way a built-in energy does.
struct eight_schools_body {
  static constexpr auto mu = ember::param<"mu">();
  static constexpr auto tau = ember::param<"tau">(ember::positive);
  static constexpr auto theta_trans = ember::param<"theta_trans", 8>();
  static constexpr auto params = ember::params(mu, tau, theta_trans);
  double y[8] = {28, 8, -3, 7, -1, 1, 18, 12};
  double sigma[8] = {15, 10, 16, 11, 9, 11, 10, 18};
  template <class M>
  void operator()(M& m) const {
    m.add(ember::normal_lpdf(m[mu], 0.0, 5.0));
    m.add(ember::cauchy_lpdf(m[tau], 0.0, 5.0));
    for (int j = 0; j < 8; ++j) {
      m.add(ember::normal_lpdf(m[theta_trans][j], 0.0, 1.0));
      m.add(ember::normal_lpdf(y[j], m[mu] + m[tau] * m[theta_trans][j], sigma[j]));
    }
  }
};
template <class T>
struct eight_schools_model : ember::targets::eight_schools<T> {
  auto energy() const { return ember::model<T>(eight_schools_body{}); }
};
}  // namespace

TEST_CASE("a model with named parameters runs in a matrix like a built-in energy, against the same reference",
          "[benchmark]") {
  static_assert(decltype(ember::model<double>(eight_schools_body{}))::dim == 10);
  bm::report out(nullptr);
  bm::run_matrix(out,
                 hana::make_tuple(bm::target<eight_schools_model>{"eight_schools_model"},
                                  bm::target<ember::targets::eight_schools>{"eight_schools"}),
                 hana::make_tuple(bm::chees_hmc{}), hana::tuple_t<double>, hana::tuple_t<ember::backend::cpu>,
                 {.chains = {16}, .warmup = 500, .draws = 1000, .seed = 11});
  auto const& rows = out.rows();
  REQUIRE(rows.size() == 2);
  for (auto const& m : rows) {
    INFO(m.target << ": health " << m.health << ", largest bias |z| " << m.z_max);
    CHECK(m.skipped.empty());
    CHECK(m.dim == 10);
    // The bias gate: every reported coordinate's mean and mean square within 5 standard errors
    // (MCSE and the reference's) of the quadrature reference; and the chains agree. (A divergent
    // transition in eight schools' funnel is the posterior's, and its gate may fire for both.)
    CHECK(m.z_max < 5);
    CHECK(m.health.find("bias") == std::string::npos);
    CHECK(m.rhat_max <= 1.01);
    CHECK(m.grads_sampling > 0);
    CHECK(std::isfinite(m.ess_per_grad));
    CHECK(m.target_acceptance == 0.651);  // the run's own target: BlackJAX's, not chees_hmc's default 0.8
  }
}
