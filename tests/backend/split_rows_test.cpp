// Split rows (core/team.hpp, backend::row_split): a run of few chains has its energies' data rows
// evaluated in parts, on the backend's idle threads.
//  - a split energy equals the whole one to rounding (the parts' sums are the rows' sum in another
//    grouping: a few ε times the magnitude of the terms summed, bounded per energy below), for a
//    model (hier_logit, named constrained parameters, lets) and a regression, one chain and a batch;
//  - the draws are the same bits on 1, 2 and 3 threads, on both CPU backends, and the same for
//    `automatic` and `always` in a run of few chains;
//  - the parts run where the backend says: on 2 threads at 4 chains, on their block's thread when
//    the run's blocks are at least min(parts, threads), not at all with `never` or many chains;
//  - an exception of a part reaches the caller after the others ended, the lowest part's;
//  - a model that deals no rows is evaluated whole after one split call, and split again once it does.
#include <ember/ember.hpp>
#include <ember/targets/hier_logit.hpp>

#include "energy/gradient_check.hpp"

#include <catch2/catch.hpp>
#include <omp.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace {

using ember::vec;

// The request a CPU backend makes of the energies on its thread, for one scope of a test.
void run_parts_omp(int parts, int threads, void* ctx, void (*one)(void*, int)) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int p = 0; p < parts; ++p) one(ctx, p);
}
struct split_scope {
  ember::detail::row_split_request saved = ember::detail::host_row_split;
  split_scope(bool split, int threads) { ember::detail::host_row_split = {split, threads, &run_parts_omp}; }
  ~split_scope() { ember::detail::host_row_split = saved; }
};

// U and ∇U of `U` at x whole and split (on `threads` threads): equal within `tol`.
template <class E, class S, int D>
void check_split_equals_whole(E const& U, vec<S, D> const& x, double tol, int threads) {
  vec<S, D> g_whole, g_split;
  S u_whole, u_split, v_split;
  {
    split_scope s(false, 1);
    u_whole = U.value_and_grad(x, g_whole);
  }
  {
    split_scope s(true, threads);
    u_split = U.value_and_grad(x, g_split);
    v_split = U.value(x);
  }
  CHECK(ember::this_team().size == 1);  // the part is reset after a split evaluation
  auto lane = [](S const& v, int l) {
    if constexpr (std::is_floating_point_v<S>)
      return double(v);
    else
      return double(v.get(std::size_t(l)));
  };
  for (int l = 0; l < ember::scalar_traits<S>::width; ++l) {
    INFO("lane " << l << ", threads " << threads);
    CHECK(std::abs(lane(u_split, l) - lane(u_whole, l)) <= tol);
    CHECK(std::abs(lane(v_split, l) - lane(u_whole, l)) <= tol);
    for (int i = 0; i < D; ++i) {
      INFO("coordinate " << i << ": split " << lane(g_split[i], l) << ", whole " << lane(g_whole[i], l));
      CHECK(std::abs(lane(g_split[i], l) - lane(g_whole[i], l)) <= tol);
    }
  }
}

// A batch whose lanes hold different points.
template <class T, int D>
vec<ember::simd_batch<T>, D> batch_of_points(std::uint64_t seed) {
  using B = ember::simd_batch<T>;
  constexpr int W = int(B::size);
  vec<B, D> xb;
  vec<T, D> xl[W];
  for (int l = 0; l < W; ++l) xl[l] = ember_test::test_point<T, D>(seed + std::uint64_t(l), -1, 1);
  for (int i = 0; i < D; ++i) {
    alignas(64) T lane[W];
    for (int l = 0; l < W; ++l) lane[l] = xl[l][i];
    xb[i] = B::load_aligned(lane);
  }
  return xb;
}

// A logistic regression of D coefficients on n rows with entries in [−1, 1].
template <class T, int D>
struct regression_data {
  ember::dataset<T> X, y;
  static std::pair<ember::dataset<T>, ember::dataset<T>> make(std::int64_t n) {
    std::vector<T> xs(static_cast<std::size_t>(n * D)), ys(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
      auto const r = ember_test::test_point<double, D>(std::uint64_t(1000 + i), -1, 1);
      double eta = 0.3;
      for (int j = 0; j < D; ++j) {
        xs[std::size_t(i * D + j)] = T(r[j]);
        eta += (j % 2 ? 0.5 : -0.7) * r[j];
      }
      ys[std::size_t(i)] = T(eta > 0 ? 1 : 0);
    }
    return {ember::dataset<T>(std::move(xs), n, D), ember::dataset<T>(std::move(ys), n, 1)};
  }
  explicit regression_data(std::int64_t n) : regression_data(make(n)) {}
  explicit regression_data(std::pair<ember::dataset<T>, ember::dataset<T>> p) : X(std::move(p.first)), y(std::move(p.second)) {}
  auto energy() const { return ember::logistic_regression<D>(X.view(), y.view(), ember::normal_prior{2.0}); }
};

// The order of draws a run gives, as bytes.
template <class R>
std::vector<unsigned char> bytes_of(R const& r) {
  auto const d = r.samples().data();
  std::vector<unsigned char> b(d.size_bytes());
  std::memcpy(b.data(), d.data(), b.size());
  return b;
}

}  // namespace

TEST_CASE("split rows: a split energy equals the whole one to rounding", "[split_rows]") {
  double const eps = std::numeric_limits<double>::epsilon();
  SECTION("hier_logit (a model: named, constrained parameters, a let, add_rows), double") {
    auto const target = ember::targets::hier_logit<double>::simulated(7, 2000);
    auto const U = target.energy();
    REQUIRE(ember::detail::host_row_parts(2000) == 2);
    // |U| plus what cancels in it: each of the n rows contributes at most |y η| + softplus(η)
    // (as model_test); the parts regroup the same sums.
    double const tol = 16 * eps * 4.0 * double(target.rows());
    for (int threads : {1, 2, 3}) {
      for (std::uint64_t k = 0; k < 3; ++k) check_split_equals_whole(U, ember_test::test_point<double, 60>(k, -1, 1), tol, threads);
      check_split_equals_whole(U, batch_of_points<double, 60>(50), tol, threads);
    }
  }
  SECTION("logistic regression, 5 coefficients, 3,000 rows, double") {
    regression_data<double, 5> const data(3000);
    auto const U = data.energy();
    REQUIRE(ember::detail::host_row_parts(3000) == 4);
    // Each row contributes softplus(η) − yη with |η| ≤ Σ|βⱼ| ≤ 5 at these points, and xᵢⱼ(σ(η) − y)
    // with |xᵢⱼ| ≤ 1 to the gradient: terms of at most 6.
    double const tol = 16 * eps * 6.0 * 3000;
    for (int threads : {1, 2}) {
      for (std::uint64_t k = 0; k < 3; ++k) check_split_equals_whole(U, ember_test::test_point<double, 5>(k, -1, 1), tol, threads);
      check_split_equals_whole(U, batch_of_points<double, 5>(70), tol, threads);
    }
  }
  SECTION("too few rows to split: the energy is evaluated whole") {
    CHECK(ember::detail::host_row_parts(1023) == 1);
    CHECK(ember::detail::host_row_parts(1024) == 2);
    CHECK(ember::detail::host_row_parts(4096) == 8);
    CHECK(ember::detail::host_row_parts(1 << 20) == 8);
    regression_data<double, 5> const data(1000);
    auto const U = data.energy();
    auto const x = ember_test::test_point<double, 5>(3, -1, 1);
    vec<double, 5> g1, g2;
    double u1, u2;
    {
      split_scope s(false, 1);
      u1 = U.value_and_grad(x, g1);
    }
    {
      split_scope s(true, 2);
      u2 = U.value_and_grad(x, g2);
    }
    CHECK(u1 == u2);
    for (int i = 0; i < 5; ++i) CHECK(g1[i] == g2[i]);
  }
}

TEST_CASE("split rows: the same draws on any number of threads, on both CPU backends", "[split_rows]") {
  auto const target = ember::targets::hier_logit<float>::simulated(11, 1200);
  auto const model = target.energy();
  regression_data<float, 4> const data(2100);  // four parts: three threads take 2, 1 and 1
  auto const reg = data.energy();
  auto check = [](auto const& pipe, auto make_backend, char const* what) {
    INFO(what);
    std::vector<unsigned char> first;
    for (int threads : {1, 2, 3}) {
      auto const r = ember::sample(pipe, {.chains = 5, .steps = 30, .seed = 9, .progress = false}, make_backend(threads));
      auto const b = bytes_of(r);
      REQUIRE(!b.empty());
      if (first.empty())
        first = b;
      else
        CHECK(b == first);
    }
    // `always` is what `automatic` chose for 5 chains; `never` is a whole-energy run (not the same bits).
    auto be = make_backend(2);
    be.split_rows = ember::backend::row_split::always;
    CHECK(bytes_of(ember::sample(pipe, {.chains = 5, .steps = 30, .seed = 9, .progress = false}, be)) == first);
  };
  auto cpu = [](int t) { return ember::backend::cpu{.threads = t}; };
  auto scalar = [](int t) { return ember::backend::scalar{.threads = t}; };
  check(ember::chees_hmc(model, {.warmup = 20}) | ember::record(), cpu, "hier_logit, chees_hmc, backend::cpu");
  check(ember::chees_hmc(model, {.warmup = 20}) | ember::record(), scalar, "hier_logit, chees_hmc, backend::scalar");
  check(ember::mala(reg) | ember::warmup(20) | ember::record(), cpu, "logistic regression, mala, backend::cpu");
  check(ember::nuts(reg) | ember::warmup(20) | ember::record(), scalar, "logistic regression, nuts, backend::scalar");
}

namespace {
// A model whose rows note the part evaluating them and the thread doing it (split evaluations
// only: the backend's check of the energy's lanes, before the run, evaluates it whole).
struct probe_log {
  std::mutex m;
  std::set<std::pair<int, int>> parts;  // (rank, size)
  std::set<std::thread::id> threads;
  void clear() {
    parts.clear();
    threads.clear();
  }
};
probe_log& probe() {
  static probe_log log;
  return log;
}
struct probe_body {
  ember::data_view<float> y;
  template <class M>
  void operator()(M& m) const {
    m.add(ember::normal_lpdf(m[0], 0.0, 1.0));
    m.add_rows(y.rows, [&](std::int64_t i) {
      auto const t = ember::this_team();
      if (t.size > 1 && i % 32 == 0) {  // once a block of a split evaluation
        std::lock_guard<std::mutex> lock(probe().m);
        probe().parts.insert({t.rank, t.size});
        probe().threads.insert(std::this_thread::get_id());
      }
      return ember::normal_lpdf(y.data[i], m[0], 1.0);
    });
  }
  template <class F>
  void for_each_view(F&& f) {
    f(y);
  }
};
}  // namespace

TEST_CASE("split rows: the parts run where the backend says", "[split_rows]") {
  std::vector<float> ys(1200);  // two parts (ember::detail::host_row_parts)
  for (std::size_t i = 0; i < ys.size(); ++i) ys[i] = float(i % 7) * 0.1f;
  ember::dataset<float> const y(ys, 1200, 1);
  REQUIRE(ember::detail::host_row_parts(1200) == 2);
  auto const U = ember::model<1>(probe_body{y.view()});
  auto pipe = ember::mala(U, {.step_size = 0.05}) | ember::record();
  auto run = [&](std::int64_t chains, ember::backend::cpu be) {
    probe().clear();
    (void)ember::sample(pipe, {.chains = chains, .steps = 20, .seed = 3, .progress = false}, be);
  };
  std::set<std::pair<int, int>> const two_parts{{0, 2}, {1, 2}};
  run(4, {.threads = 2});  // one batch, two threads: the parts on both
  CHECK(probe().parts == two_parts);
  if (!omp_get_dynamic() && omp_get_thread_limit() >= 2) CHECK(probe().threads.size() == 2);
  run(4, {.threads = 1});
  CHECK(probe().parts == two_parts);
  CHECK(probe().threads.size() == 1);
  ember::backend::cpu const whole_rows{.threads = 2, .split_rows = ember::backend::row_split::never};
  run(4, whole_rows);
  CHECK(probe().parts.empty());
  std::int64_t const W = std::int64_t(ember::simd_batch<float>::size);
  run(8 * W, {.threads = 2});  // eight batches: split only if asked
  CHECK(probe().parts.empty());
  run(8 * W, {.threads = 2, .split_rows = ember::backend::row_split::always});
  CHECK(probe().parts == two_parts);  // on each block's own thread: blocks share the threads
  // A value outside the enumeration is refused before any work.
  CHECK_THROWS_WITH(run(4, {.split_rows = ember::backend::row_split(7)}),
                    "ember::backend::cpu: split_rows must be row_split::automatic, never or always, got 7");
}

namespace {
struct throwing_body {
  ember::data_view<float> y;
  template <class M>
  void operator()(M& m) const {
    m.add(ember::normal_lpdf(m[0], 0.0, 1.0));
    m.add_rows(y.rows, [&](std::int64_t i) {
      if (i == 10) throw std::runtime_error("row 10 cannot be evaluated");    // part 0
      if (i == 700) throw std::runtime_error("row 700 cannot be evaluated");  // part 1
      return ember::normal_lpdf(y.data[i], m[0], 1.0);
    });
  }
  template <class F>
  void for_each_view(F&& f) {
    f(y);
  }
};
}  // namespace

TEST_CASE("split rows: an exception of one part reaches the caller", "[split_rows]") {
  ember::dataset<float> const y(std::vector<float>(1024, 0.5f), 1024, 1);
  auto const U = ember::model<1>(throwing_body{y.view()});
  vec<float, 1> x{0.25f}, g;
  split_scope s(true, 2);
  for (int k = 0; k < 4; ++k) {  // both parts throw; the one rethrown never depends on which ended first
    CHECK_THROWS_WITH(U.value_and_grad(x, g), "row 10 cannot be evaluated");
    CHECK(ember::this_team().size == 1);
  }
  CHECK_THROWS_WITH(U.value(x), "row 10 cannot be evaluated");
  CHECK(ember::this_team().size == 1);
}

namespace {
// y_i ~ N(μ, 1) for 1,024 rows, μ ~ N(0, 10²): the posterior of μ is N(Σy / (n + 0.01), 1 / (n + 0.01)).
struct normal_mean_body {
  ember::data_view<double> y;
  template <class M>
  void operator()(M& m) const {
    m.add(ember::normal_lpdf(m[0], 0.0, 10.0));
    m.add_rows(y.rows, [&](std::int64_t i) { return ember::normal_lpdf(y.data[i], m[0], 1.0); });
  }
  template <class F>
  void for_each_view(F&& f) {
    f(y);
  }
};
}  // namespace

TEST_CASE("split rows: a run split over threads samples the exact posterior", "[split_rows]") {
  std::int64_t const n = 1024;
  std::vector<double> ys(static_cast<std::size_t>(n));
  double sum = 0;
  for (std::int64_t i = 0; i < n; ++i) sum += ys[std::size_t(i)] = 1.5 + std::sin(0.37 * double(i));
  ember::dataset<double> const y(std::move(ys), n, 1);
  auto const U = ember::model<1, double>(normal_mean_body{y.view()});
  REQUIRE(ember::detail::host_row_parts(n) == 2);
  double const precision = double(n) + 0.01, mean = sum / precision, var = 1 / precision;
  // 4 chains: one batch, its gradients' parts on both threads.
  auto const r = ember::sample(ember::chees_hmc(U, {.warmup = 500}) | ember::record(),
                               {.chains = 4, .steps = 4000, .seed = 21, .progress = false}, ember::backend::cpu{.threads = 2});
  auto const s = r.summary();
  auto const& d = s.dims[0];
  INFO("mean " << d.mean << " (exact " << mean << ", mcse " << d.mcse << "), sd " << d.sd << " (exact " << std::sqrt(var)
               << "), ess " << d.ess_mean << ", ess of (x - mean)^2 " << d.ess_sq);
  CHECK(r.divergent_transitions() == 0);
  CHECK(d.rhat < 1.01);
  CHECK(std::abs(d.mean - mean) < 5 * d.mcse);
  // Var((x − μ)²) = 2σ⁴ for a normal: the variance's Monte-Carlo standard error is √2 σ² / √ESS.
  CHECK(std::abs(d.sd * d.sd - var) < 5 * std::sqrt(2.0) * var / std::sqrt(d.ess_sq));
}

TEST_CASE("split rows: energies that deal no rows keep the blocks on the threads, and whole evaluations", "[split_rows]") {
  // Three batches on two threads, split automatically: an energy without rows has no parts, so
  // its blocks still share the threads.
  std::mutex m;
  std::set<std::thread::id> seen;
  auto const U = ember::custom_energy<2>([&](auto const& x) {
    {
      std::lock_guard<std::mutex> lock(m);
      seen.insert(std::this_thread::get_id());
    }
    return 0.5 * (x[0] * x[0] + x[1] * x[1]);
  });
  std::int64_t const W = std::int64_t(ember::simd_batch<float>::size);
  (void)ember::sample(ember::mala(U, {.step_size = 0.5}) | ember::record(), {.chains = 3 * W, .steps = 2000, .seed = 1, .progress = false},
                      ember::backend::cpu{.threads = 2});
  if (!omp_get_dynamic() && omp_get_thread_limit() >= 2) CHECK(seen.size() == 2);
  CHECK(ember::host_parts(U) == 1);
}

namespace {
// A model that reads its rows in a loop of its own, without add_rows: splitting it would
// only repeat its work in every part. It notes the largest team it was evaluated in.
std::atomic<int> largest_team{0};
std::atomic<bool> loop_body_deals_rows{false};
struct loop_body {
  ember::data_view<double> y;
  template <class M>
  void operator()(M& m) const {
    for (int t = largest_team.load(); t < ember::this_team().size && !largest_team.compare_exchange_weak(t, ember::this_team().size);) {
    }
    m.add(ember::normal_lpdf(m[0], 0.0, 10.0));
    if (loop_body_deals_rows)
      m.add_rows(y.rows, [&](std::int64_t i) { return ember::normal_lpdf(y.data[i], m[0], 1.0); });
    else
      for (std::int64_t i = 0; i < y.rows; ++i) m.add(ember::normal_lpdf(y.data[i], m[0], 1.0));
  }
  template <class F>
  void for_each_view(F&& f) {
    f(y);
  }
};
}  // namespace

TEST_CASE("split rows: a model that deals no rows is evaluated whole, with the same bits", "[split_rows]") {
  std::vector<double> ys(2048);
  for (std::size_t i = 0; i < ys.size(); ++i) ys[i] = std::cos(0.1 * double(i));
  ember::dataset<double> const y(std::move(ys), 2048, 1);
  auto const U = ember::model<1, double>(loop_body{y.view()});
  REQUIRE(ember::host_parts(U) == 4);  // from its largest view: it might deal them
  vec<double, 1> const x{0.3};
  vec<double, 1> g_whole, g;
  double u_whole;
  {
    split_scope s(false, 1);
    u_whole = U.value_and_grad(x, g_whole);
  }
  split_scope s(true, 2);
  for (int k = 0; k < 3; ++k) {  // the first call splits and finds no rows; the next ones run whole
    largest_team = 0;
    double const u = U.value_and_grad(x, g);
    CHECK(largest_team == (k == 0 ? 4 : 1));
    CHECK(u == u_whole);
    CHECK(g[0] == g_whole[0]);
  }
  // The same object now deals its rows: its whole evaluation sees add_rows and it is split again.
  loop_body_deals_rows = true;
  for (int k = 0; k < 2; ++k) {
    largest_team = 0;
    (void)U.value_and_grad(x, g);
    CHECK(largest_team == 4);
  }
  loop_body_deals_rows = false;
}
