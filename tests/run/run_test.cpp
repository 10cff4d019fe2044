// ember::run: a run split into any number of pieces, or checkpointed and loaded, gives bitwise
// the same draws as the same run in one piece, for every kernel and adaptation, on the SIMD and
// scalar paths; runs from .init draw fresh noise; bad checkpoints are refused; exceptions from an
// energy reach the caller and leave the run at its last whole chunk; counters are exact.
#include "support/backends.hpp"
#include <ember/ember.hpp>

#include <catch2/catch.hpp>

#include "support/message_of.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

using ember::vec;
using ember_test::message_of;

namespace {

constexpr int D = 3;

auto mixture() {
  return ember::gaussian_mixture<float, D, 2>({0.6f, 0.4f}, {vec<float, D>{{-1.f, 0.f, 1.f}}, vec<float, D>{{1.5f, 1.f, -0.5f}}},
                                              {0.8f, 1.1f});
}

template <class R>
bool same_bits(R const& a, R const& b) {
  auto sa = a.samples().data(), sb = b.samples().data();
  auto fa = a.final_states(), fb = b.final_states();
  using T = typename R::value_type;
  return sa.size() == sb.size() && fa.size() == fb.size() && a.kept() == b.kept() &&
         std::memcmp(sa.data(), sb.data(), sa.size() * sizeof(T)) == 0 &&
         std::memcmp(fa.data(), fb.data(), fa.size() * sizeof(T)) == 0 && a.acceptance_rate() == b.acceptance_rate() &&
         a.divergent_transitions() == b.divergent_transitions() && a.adapted().step_size == b.adapted().step_size &&
         a.adapted().metric_scale == b.adapted().metric_scale &&
         a.adapted().trajectory_length == b.adapted().trajectory_length &&
         a.adapted().step_sizes == b.adapted().step_sizes;
}

// The pipeline in one piece against the same pipeline advanced in uneven pieces.
template <class Pipe, class Backend>
void check_split(Pipe const& pipe, std::int64_t total, Backend be) {
  ember::sample_options<float, D> opt{.chains = 37, .seed = 11};
  auto whole = ember::start(pipe, opt, be);
  whole.advance(total);
  auto ref = whole.result();
  auto pieces = ember::start(pipe, opt, be);
  for (std::int64_t n : {std::int64_t(0), std::int64_t(1), std::int64_t(7), std::int64_t(13), std::int64_t(1), std::int64_t(0)})
    pieces.advance(n);
  pieces.advance(total - 22);
  CHECK(pieces.transitions() == total);
  CHECK(same_bits(pieces.result(), ref));
  // sample() is the same run in one piece.
  auto s = ember::sample(pipe, {.chains = 37, .steps = total - pipe.make_schedule().keep_from(), .seed = 11}, be);
  CHECK(same_bits(s, ref));
}

template <class Pipe>
void check_split_both_paths(Pipe const& pipe, std::int64_t total) {
  ember_test::for_each_cpu_backend([&](auto be) {
    INFO("backend " << be.name);
    check_split(pipe, total, be);
    check_split(pipe, total, decltype(be){.threads = 1, .block = 16});
  });
}

// A 2-d standard normal whose gradient throws once `throw_after` evaluations have been made.
std::atomic<long> evaluations{0};
std::atomic<long> throw_after{-1};
struct fragile {
  using value_type = float;
  static constexpr int dim = 2;
  template <class S>
  S value(vec<S, 2> const& x) const {
    return S(0.5f) * (x[0] * x[0] + x[1] * x[1]);
  }
  template <class S>
  S value_and_grad(vec<S, 2> const& x, vec<S, 2>& g) const {
    if (throw_after >= 0 && evaluations++ >= throw_after) throw std::domain_error("fragile: evaluated once too often");
    g[0] = x[0];
    g[1] = x[1];
    return value(x);
  }
};

}  // namespace

TEST_CASE("a run split into pieces gives bitwise the draws of the run in one piece", "[run][split]") {
  auto U = mixture();
  auto stages = [](auto k) { return k | ember::burn_in(5) | ember::thin(3) | ember::record() | ember::track(ember::moments, ember::acceptance); };
  SECTION("ula") { check_split_both_paths(stages(ember::ula(U, {.step_size = 0.05})), 120); }
  SECTION("mala") { check_split_both_paths(stages(ember::mala(U, {.step_size = 0.3})), 120); }
  SECTION("hmc") { check_split_both_paths(stages(ember::hmc(U, {.step_size = 0.2, .integrator_steps = 4})), 120); }
  SECTION("hmc with a jittered step size") {
    check_split_both_paths(stages(ember::hmc(U, {.step_size = 0.3, .integrator_steps = 4, .jitter = 0.5})), 120);
  }
  SECTION("mala with step size and diagonal metric adaptation") {
    check_split_both_paths(ember::mala(U, {}) | ember::warmup(160) | ember::thin(2) | ember::record(), 220);
  }
  SECTION("hmc with step size and dense metric adaptation") {
    check_split_both_paths(
        ember::hmc(U, {.integrator_steps = 3}) | ember::warmup(160, ember::step_size(), ember::dense_mass()) | ember::record(), 220);
  }
  SECTION("mala with per-chain step sizes and diagonal metric adaptation") {
    check_split_both_paths(
        ember::mala(U, {}) | ember::warmup(160, ember::step_size(ember::per_chain), ember::diagonal_mass()) | ember::thin(2) |
            ember::record(),
        220);
  }
  SECTION("jittered hmc with per-chain step sizes") {
    check_split_both_paths(ember::hmc(U, {.integrator_steps = 3, .jitter = 0.3}) |
                               ember::warmup(100, ember::step_size(ember::per_chain, {.target = 0.7})) | ember::record(),
                           150);
  }
  SECTION("ChEES-HMC") {
    check_split_both_paths(
        ember::hmc(U, {.step_size = 0.3, .integrator_steps = 3}) | ember::warmup(100, ember::step_size(), ember::chees()) | ember::record(),
        150);
  }
}

TEST_CASE("a checkpoint loaded and continued gives bitwise the uninterrupted run", "[run][checkpoint]") {
  auto U = mixture();
  auto pipe = ember::hmc(U, {.integrator_steps = 3}) | ember::warmup(120, ember::step_size(), ember::diagonal_mass(), ember::chees()) |
              ember::burn_in(3) | ember::thin(2) | ember::record() | ember::track(ember::moments);
  ember::sample_options<float, D> opt{.chains = 50, .seed = 4};
  auto ref = ember::sample(pipe, {.chains = 50, .steps = 80, .seed = 4});
  std::string const path = "run_test_checkpoint.ember";
  for (std::int64_t cut : {0, 1, 60, 123, 150, 203}) {
    INFO("checkpoint after " << cut << " transitions");
    {
      auto r = ember::start(pipe, opt);
      r.advance(cut);
      r.save(path);
    }  // the first process "dies" here
    auto r = decltype(ember::start(pipe, opt))::load(pipe, path);
    CHECK(r.transitions() == cut);
    r.advance(203 - cut);
    CHECK(same_bits(r.result(), ref));
  }
  std::remove(path.c_str());
}

TEST_CASE("bad checkpoints are refused with a sentence naming the mismatch", "[run][checkpoint]") {
  auto U = mixture();
  auto pipe = ember::mala(U, {.step_size = 0.2}) | ember::record();
  std::string const path = "run_test_bad.ember";
  auto r = ember::start(pipe, {.chains = 20, .seed = 1});
  r.advance(10);
  r.save(path);
  using Run = decltype(r);
  using RE = std::runtime_error;
  std::string bytes;
  {
    std::ifstream f(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  auto write = [&](std::string const& b, bool fix_checksum) {
    std::string out = b;
    if (fix_checksum) {
      out.resize(out.size() - 8);
      std::uint64_t h = ember::detail::fnv1a(out.data(), out.size());
      out.append(reinterpret_cast<char const*>(&h), 8);
    }
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(out.data(), std::streamsize(out.size()));
  };
  SECTION("another pipeline type") {
    auto other = ember::mala(U, {.step_size = 0.2}) | ember::record() | ember::track(ember::moments);
    CHECK_THAT(message_of<RE>([&] { decltype(ember::start(other, {.chains = 1}))::load(other, path); }),
               Catch::Contains("different pipeline"));
  }
  SECTION("another dimension") {
    auto other = ember::mala(ember::gaussian(vec<float, 2>{{0.f, 0.f}}, 1.f), {.step_size = 0.2}) | ember::record();
    CHECK_THAT(message_of<RE>([&] { decltype(ember::start(other, {.chains = 1}))::load(other, path); }),
               Catch::Contains("dimension 3") && Catch::Contains("dimension 2"));
  }
  SECTION("another precision") {
    auto Ud = ember::gaussian(vec<double, 3>{{0., 0., 0.}}, 1.0);
    auto other = ember::mala(Ud, {.step_size = 0.2}) | ember::record();
    CHECK_THAT(message_of<RE>([&] { decltype(ember::start(other, {.chains = 1}))::load(other, path); }),
               Catch::Contains("float") && Catch::Contains("double"));
  }
  SECTION("another ember version") {
    auto b = bytes;
    b[8 + 4 + 8] = '9';  // "ember 0.6.0" → "ember 0.9.0"
    write(b, true);
    CHECK_THAT(message_of<RE>([&] { Run::load(pipe, path); }), Catch::Contains("written by ember 0.9.0"));
  }
  SECTION("a truncated file") {
    write(bytes.substr(0, bytes.size() / 2), false);
    CHECK_THAT(message_of<RE>([&] { Run::load(pipe, path); }), Catch::Contains("corrupt or truncated"));
    write(bytes.substr(0, bytes.size() / 2), true);  // even with a matching checksum
    CHECK_THAT(message_of<RE>([&] { Run::load(pipe, path); }), Catch::Contains("truncated"));
  }
  SECTION("a corrupt file") {
    auto b = bytes;
    b[b.size() / 2] ^= 0x10;
    write(b, false);
    CHECK_THAT(message_of<RE>([&] { Run::load(pipe, path); }), Catch::Contains("corrupt"));
  }
  SECTION("not a checkpoint") {
    write("hello, world, this is not a checkpoint", false);
    CHECK_THAT(message_of<RE>([&] { Run::load(pipe, path); }), Catch::Contains("not an ember checkpoint"));
  }
  std::remove(path.c_str());
}

TEST_CASE("a run started from another run's final states draws fresh noise even with the same seed", "[run][streams]") {
  // ULA on N(0, 1): x' = (1 − η) x + √(2η) ξ, so the noise of every transition can be read off the draws.
  constexpr int d = 1;
  auto U = ember::gaussian(vec<double, d>{{0.0}}, 1.0);
  double const eta = 0.1;
  auto pipe = ember::ula(U, {.step_size = eta}) | ember::record();
  std::int64_t const C = 4000;
  auto first = ember::sample(pipe, {.chains = C, .steps = 2, .seed = 7});
  std::vector<vec<double, d>> finals(static_cast<std::size_t>(C));
  for (std::int64_t c = 0; c < C; ++c) finals[std::size_t(c)] = first.final_state(c);
  auto second = ember::sample(pipe, {.chains = C, .steps = 2, .seed = 7, .init = finals});
  // Noise of transition 1 in each run (x₁ → x₂).
  auto noise = [&](auto const& r, std::int64_t c) {
    return (r.samples()(1, c, 0) - (1 - eta) * r.samples()(0, c, 0)) / std::sqrt(2 * eta);
  };
  double sab = 0, saa = 0, sbb = 0;
  for (std::int64_t c = 0; c < C; ++c) {
    double a = noise(first, c), b = noise(second, c);
    sab += a * b;
    saa += a * a;
    sbb += b * b;
  }
  double const rho = sab / std::sqrt(saa * sbb);
  INFO("correlation of the two runs' noise: " << rho << " (1 if the second replayed the first)");
  CHECK(std::abs(rho) < 5 / std::sqrt(double(C)));
}

TEST_CASE("an exception from the energy reaches the caller and leaves the run at its last whole chunk", "[run][errors]") {
  auto pipe = ember::mala(fragile{}, {.step_size = 0.3}) | ember::record();
  for (int threads : {1, 2}) {
    INFO(threads << " threads");
    ember::backend::cpu be{.threads = threads, .block = 16};
    throw_after = -1;
    auto ref = ember::sample(pipe, {.chains = 64, .steps = 2100, .seed = 3, .progress = false}, be);
    auto r = ember::start(pipe, {.chains = 64, .seed = 3, .progress = false}, be);
    r.advance(100);
    // advance's first chunk is 256 transitions (64 chains in batches of the machine's SIMD width:
    // 1,024 gradients with AVX-512's 16 lanes, 2,048 with AVX2's 8); the exception comes in its
    // second chunk.
    evaluations = 0;
    constexpr int lanes = ember::scalar_traits<ember::simd_batch<float>>::width;
    throw_after = 256 * (64 / lanes) + 476;
    CHECK_THROWS_AS(r.advance(2000), std::domain_error);
    throw_after = -1;
    CHECK(r.transitions() == 356);
    CHECK(r.result().kept() == 356);
    r.advance(2100 - r.transitions());  // continue from the last whole chunk
    CHECK(same_bits(r.result(), ref));
  }
}

TEST_CASE("per-chain counters are exact past 2^24 transitions in float", "[run][counters]") {
  // 16 chains (one SIMD batch) of MALA on N(0, 1) for 2²⁵ transitions: float counters would stop
  // at 2²⁴ and report about 0.5. The truth, E[min(1, ratio)] under the stationary law, is
  // estimated by independent Monte Carlo with its own standard error.
  auto U = ember::gaussian(vec<float, 1>{{0.f}}, 1.f);
  double const eta = 0.5;
  std::int64_t const n = std::int64_t(1) << 25;
  auto r = ember::sample(ember::mala(U, {.step_size = eta}), {.chains = 16, .steps = n, .seed = 5, .progress = false});
  double m = 0, q = 0;
  for (std::int64_t c = 0; c < 16; ++c) {
    double a = double(r.accepted(c)) / double(n);
    m += a;
    q += a * a;
  }
  m /= 16;
  double const se_chains = std::sqrt(std::max(q / 16 - m * m, 0.0) / 15);
  // Independent estimate: x ~ N(0, 1), x' = x − ηx + √(2η)ξ, ratio of MALA on N(0, 1).
  auto iid = ember::make_chain_rng<double>(99, 0, 0);
  double s = 0, s2 = 0;
  int const N = 1 << 20;
  for (int i = 0; i < N; ++i) {
    auto z = ember::make_chain_rng<double>(99, std::uint32_t(i), 1).normal<2>(ember::purpose::proposal);
    double x = z[0], y = x - eta * x + std::sqrt(2 * eta) * z[1];
    double fwd = std::pow(y - x + eta * x, 2), rev = std::pow(x - y + eta * y, 2);
    double lr = 0.5 * x * x - 0.5 * y * y - rev / (4 * eta) + fwd / (4 * eta);
    double a = std::min(1.0, std::exp(lr));
    s += a;
    s2 += a * a;
  }
  (void)iid;
  double const mi = s / N, se_iid = std::sqrt((s2 / N - mi * mi) / N);
  double const z = (m - mi) / std::sqrt(se_chains * se_chains + se_iid * se_iid);
  INFO("acceptance " << m << " ± " << se_chains << " against " << mi << " ± " << se_iid << ", z = " << z);
  CHECK(std::abs(z) < 5);
  CHECK(r.acceptance_rate() == Approx(m).epsilon(1e-12));
}

TEST_CASE("stage arithmetic that would overflow is refused", "[run][stages]") {
  auto k = ember::mala(mixture(), {.step_size = 0.2});
  using IA = std::invalid_argument;
  // Every count is within a run's 2³² − 2 transitions, alone and combined, so warm-up + burn-in
  // and Stan's window arithmetic (adapt/mass_windows.hpp) cannot wrap.
  std::int64_t const big = std::int64_t(1) << 62, max = (std::int64_t(1) << 32) - 2;
  for (auto n : {big, std::numeric_limits<std::int64_t>::max(), max + 1}) {
    CHECK_THAT(message_of<IA>([&] { (void)ember::burn_in(n); }), Catch::StartsWith("ember::burn_in: n must be from 0 to 4,294,967,294"));
    CHECK_THAT(message_of<IA>([&] { (void)ember::thin(n); }), Catch::StartsWith("ember::thin: k must be from 1 to 4,294,967,294"));
    CHECK_THAT(message_of<IA>([&] { (void)ember::warmup(n); }), Catch::StartsWith("ember::warmup: n must be from 0 to 4,294,967,294"));
    CHECK_THAT(message_of<IA>([&] { (void)ember::warmup(n, ember::step_size()); }), Catch::StartsWith("ember::warmup: n must be"));
  }
  CHECK_NOTHROW(ember::burn_in(max));
  CHECK_THAT(message_of<IA>([&] { (void)(k | ember::burn_in(max) | ember::burn_in(max)); }),
             Catch::Contains("burn-in") && Catch::Contains("more than a run's 4,294,967,294 transitions"));
  CHECK_THAT(message_of<IA>([&] { (void)(k | ember::thin(65536) | ember::thin(65536)); }),
             Catch::Contains("thinning 4294967296") && Catch::Contains("more than"));
  std::int64_t const t32 = std::int64_t(1) << 32;
  CHECK_THAT(message_of<IA>([&] { ember::sample(k, {.chains = 1, .steps = t32}); }), Catch::Contains("2^32"));
  auto r = ember::start(k, {.chains = 2});
  CHECK_THAT(message_of<IA>([&] { r.advance(-1); }), Catch::Contains("non-negative"));
  // track(acceptance) counts in T between kept steps: exact in float up to 2²⁴.
  CHECK_THAT(message_of<IA>([&] { (void)ember::start(k | ember::thin((1 << 24) + 1) | ember::track(ember::acceptance), {.chains = 2}); }),
             Catch::StartsWith("ember::sample: track(acceptance) in float counts accepted transitions exactly only up to thin(16,777,216)"));
  CHECK_NOTHROW(ember::start(k | ember::thin(1 << 24) | ember::track(ember::acceptance), {.chains = 2}));
  CHECK_NOTHROW(ember::start(k | ember::thin((1 << 24) + 1) | ember::track(ember::moments), {.chains = 2}));
}

TEST_CASE("the progress callback sees every chunk, in order, up to the end", "[run][progress]") {
  auto pipe = ember::mala(mixture(), {}) | ember::warmup(50) | ember::record();
  std::vector<ember::progress_report> seen;
  auto r = ember::sample(pipe, {.chains = 100, .steps = 400, .seed = 2, .on_progress = [&](auto const& p) { seen.push_back(p); }});
  REQUIRE(seen.size() >= 51);  // every warm-up transition is a chunk, then at least one more
  for (std::size_t i = 1; i < seen.size(); ++i) CHECK(seen[i].done > seen[i - 1].done);
  CHECK(seen.front().warming_up);
  CHECK(seen.back().done == 450);
  CHECK(seen.back().total == 450);
  CHECK_FALSE(seen.back().warming_up);
  CHECK(seen.back().acceptance == Approx(r.acceptance_rate()).epsilon(1e-12));
}

TEST_CASE("host memory is reused across runs, with the same bits as fresh memory, within its limit", "[run][host_cache]") {
  using ember::detail::host_block_cache;
  // Size classes: never smaller than asked, at most 1/8 larger, exact below 64 KiB.
  for (std::size_t n : {std::size_t(1), std::size_t(65535), std::size_t(65536), std::size_t(65537), std::size_t(840'000),
                        std::size_t(51'200'000), (std::size_t(1) << 33) + 1}) {
    std::size_t const cap = host_block_cache::capacity(n);
    CHECK(cap >= n);
    CHECK(double(cap) <= (n < host_block_cache::min_bytes ? double(n) : 1.125 * double(n)));
  }
  auto const saved = ember::host_cache().limit_bytes;
  auto pipe = ember::mala(mixture(), {.step_size = 0.3}) | ember::record();
  ember::sample_options<float, D> opt{.chains = 3000, .steps = 40, .seed = 5};  // 1.4 MB of draws
  ember::set_host_cache_limit(0);  // every array fresh
  auto fresh = ember::sample(pipe, opt);
  CHECK(ember::host_cache().cached_bytes == 0);
  ember::set_host_cache_limit(std::size_t(256) << 20);
  {
    // Another seed, the same sizes: the blocks it frees hold numbers unlike the run below, so a
    // draw or state that run failed to write would show.
    auto other = opt;
    other.seed = 6;
    auto warm = ember::sample(pipe, other);
  }
  auto const before = ember::host_cache();
  CHECK(before.cached_bytes > 0);
  CHECK(before.cached_bytes <= before.limit_bytes);
  auto reused = ember::sample(pipe, opt);  // arrays that held the previous run's draws and states
  CHECK(ember::host_cache().reused > before.reused);
  CHECK(same_bits(reused, fresh));
  // A block larger than the limit goes straight back.
  ember::set_host_cache_limit(std::size_t(1) << 20);
  std::size_t const held = ember::host_cache().cached_bytes;
  { ember::detail::host_vector<float> big(std::size_t(1) << 20); }  // 4 MiB
  CHECK(ember::host_cache().cached_bytes == held);
  ember::set_host_cache_limit(std::size_t(256) << 20);
  // A limit below what is held gives back the blocks freed longest ago; 0 gives back everything.
  ember::set_host_cache_limit(before.cached_bytes / 2);
  CHECK(ember::host_cache().cached_bytes <= before.cached_bytes / 2);
  ember::release_host_cache();
  CHECK(ember::host_cache().cached_bytes == 0);
  ember::set_host_cache_limit(saved);
}

namespace pin_log {
std::vector<std::pair<void*, std::size_t>> pinned;
std::vector<void*> unpinned;
bool pin(void* p, std::size_t n) {
  pinned.push_back({p, n});
  return true;
}
int refusals = 0;
bool refuse(void*, std::size_t) {
  ++refusals;
  return false;
}
void unpin(void* p) { unpinned.push_back(p); }
}  // namespace pin_log

TEST_CASE("a pinned block stays pinned while in use and cached, and is unpinned when it goes back", "[run][host_cache]") {
  using ember::detail::host_block_cache;
  auto& cache = host_block_cache::instance();
  // Whatever fails below, the rest of the binary gets the cache as it was: no pinning, its limit.
  struct restore {
    std::size_t limit;
    ~restore() {
      host_block_cache::instance().set_pinning({});
      ember::release_host_cache();
      ember::set_host_cache_limit(limit);
    }
  } const guard{ember::host_cache().limit_bytes};
  ember::release_host_cache();
  ember::set_host_cache_limit(std::size_t(64) << 20);
  cache.set_pinning({&pin_log::pin, &pin_log::unpin});
  pin_log::pinned.clear();
  pin_log::unpinned.clear();
  pin_log::refusals = 0;
  std::size_t const n = std::size_t(1) << 19;  // 2 MiB of floats
  void* first = nullptr;
  {
    ember::detail::host_buffer<float> a(n);
    first = a.data();
    CHECK(cache.pin(a.data()));
    REQUIRE(pin_log::pinned.size() == 1);
    CHECK(pin_log::pinned[0].first == first);
    // The whole block, in whole pages of its own: registrations of two blocks never overlap.
    CHECK(pin_log::pinned[0].second == host_block_cache::footprint(host_block_cache::capacity(n * sizeof(float))));
    CHECK(reinterpret_cast<std::uintptr_t>(first) % host_block_cache::page_bytes() == 0);
    CHECK(pin_log::pinned[0].second % host_block_cache::page_bytes() == 0);
    CHECK(ember::host_cache().pinned_bytes == pin_log::pinned[0].second);
    CHECK(cache.pin(a.data()));      // already pinned: not asked again
    CHECK(pin_log::pinned.size() == 1);
    CHECK_FALSE(cache.pin(a.data() + 1));  // not the start of a block
    int local = 0;
    CHECK_FALSE(cache.pin(&local));        // not the cache's memory
  }
  CHECK(pin_log::unpinned.empty());  // cached, still pinned
  {
    ember::detail::host_buffer<float> b(n);  // the same size class: the cached block, pinned
    CHECK(b.data() == first);
    CHECK(cache.pin(b.data()));
    CHECK(pin_log::pinned.size() == 1);
  }
  ember::release_host_cache();  // back to the system: unpinned first
  REQUIRE(pin_log::unpinned.size() == 1);
  CHECK(pin_log::unpinned[0] == first);
  CHECK(ember::host_cache().pinned_bytes == 0);
  // A pinned block larger than the limit is unpinned as it is freed.
  ember::set_host_cache_limit(std::size_t(1) << 20);
  {
    ember::detail::host_buffer<float> big(n);
    CHECK(cache.pin(big.data()));
  }
  CHECK(pin_log::unpinned.size() == 2);
  CHECK(ember::host_cache().pinned_bytes == 0);
  // A pinning that refuses is not asked again, until another pinning is set.
  cache.set_pinning({&pin_log::refuse, &pin_log::unpin});
  {
    ember::detail::host_buffer<float> c(n);
    CHECK_FALSE(cache.pin(c.data()));
    CHECK_FALSE(cache.pin(c.data()));
    CHECK(pin_log::refusals == 1);  // refused once, not asked again
    cache.set_pinning({&pin_log::pin, &pin_log::unpin});
    CHECK(cache.pin(c.data()));
  }
  CHECK(pin_log::unpinned.size() == 3);
  // At exit (and when asked), every pinned block is unpinned, in use or cached, and none again.
  ember::set_host_cache_limit(std::size_t(64) << 20);
  {
    ember::detail::host_buffer<float> in_use(n);
    CHECK(cache.pin(in_use.data()));
    {
      ember::detail::host_buffer<float> cached(2 * n);
      CHECK(cache.pin(cached.data()));
    }
    cache.unpin_all();
    CHECK(pin_log::unpinned.size() == 5);
    CHECK(ember::host_cache().pinned_bytes == 0);
    CHECK_FALSE(cache.pin(in_use.data()));  // no pinning until one is set again
  }
  ember::release_host_cache();
  CHECK(pin_log::unpinned.size() == 5);  // nothing unpinned twice
  // Another pinning unpins, with the old one, what the old one pinned.
  cache.set_pinning({&pin_log::pin, &pin_log::unpin});
  {
    ember::detail::host_buffer<float> g(n);
    CHECK(cache.pin(g.data()));
    cache.set_pinning({&pin_log::refuse, &pin_log::unpin});
    CHECK(pin_log::unpinned.size() == 6);
    CHECK(ember::host_cache().pinned_bytes == 0);
  }
}

namespace pin_log {
// The unpinning of the child case below: a line per block into $EMBER_TEST_UNPIN_LOG.
void unpin_to_file(void*) {
  if (char const* path = std::getenv("EMBER_TEST_UNPIN_LOG")) {
    if (std::FILE* f = std::fopen(path, "a")) {
      std::fputs("unpinned\n", f);
      std::fclose(f);
    }
  }
}
}  // namespace pin_log

TEST_CASE("child: pinned blocks left at exit", "[.][child]") {
  auto& cache = ember::detail::host_block_cache::instance();
  ember::set_host_cache_limit(std::size_t(64) << 20);
  cache.set_pinning({&pin_log::pin, &pin_log::unpin_to_file});
  // One block in use at exit (never freed) and one cached.
  static auto* const kept = new ember::detail::host_buffer<float>(std::size_t(1) << 19);
  REQUIRE(cache.pin(kept->data()));
  {
    ember::detail::host_buffer<float> cached(std::size_t(1) << 20);
    REQUIRE(cache.pin(cached.data()));
  }
}

TEST_CASE("blocks still pinned when the program ends are unpinned by it", "[run][host_cache]") {
  // A registration that outlives the program is a leak to compute-sanitizer; the cache unpins
  // what is left at exit. Run in a child, whose exit is what is tested.
  std::string const log = "/tmp/ember_unpin_" + std::to_string(::getpid()) + ".txt";
  std::remove(log.c_str());
  std::fflush(nullptr);
  pid_t const pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::setenv("EMBER_TEST_UNPIN_LOG", log.c_str(), 1);
    ::execl("/proc/self/exe", "run_child", "child: pinned blocks left at exit", static_cast<char*>(nullptr));
    _exit(4);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  std::ifstream in(log);
  std::string line;
  int unpinned = 0;
  while (std::getline(in, line)) unpinned += line == "unpinned";
  CHECK(unpinned == 2);
  std::remove(log.c_str());
}

TEST_CASE("host_buffer keeps its values through growth, shrinking, copies and moves", "[run][host_cache]") {
  using buffer = ember::detail::host_buffer<double>;
  buffer a;
  CHECK(a.empty());
  CHECK(a.data() == nullptr);
  a.resize(5);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = double(i) + 0.5;
  double const* first = a.data();
  a.reserve(4);  // less than held: nothing moves
  CHECK(a.data() == first);
  a.resize(3);   // shrinking keeps the prefix and the memory
  CHECK(a.size() == 3);
  CHECK(a.data() == first);
  a.resize(1000);  // past the capacity: the prefix moves with it
  REQUIRE(a.size() == 1000);
  CHECK(a.capacity() >= 1000);
  for (std::size_t i = 0; i < 3; ++i) CHECK(a[i] == double(i) + 0.5);
  for (std::size_t i = 3; i < a.size(); ++i) a[i] = -double(i);
  buffer b = a;  // a copy: equal values, its own memory
  REQUIRE(b.size() == a.size());
  CHECK(b.data() != a.data());
  CHECK(std::equal(a.begin(), a.end(), b.begin()));
  b[0] = 42;
  CHECK(a[0] == 0.5);
  double const* held = b.data();
  buffer c = std::move(b);  // a move takes the memory and leaves an empty buffer
  CHECK(c.data() == held);
  CHECK(b.empty());
  CHECK(b.data() == nullptr);
  c = a;  // assignment copies
  CHECK(c == a);
  c[7] = 1e300;
  CHECK_FALSE(c == a);
  c = a;
  CHECK(c.at(999) == -999.0);
  CHECK_THROWS_AS(c.at(1000), std::out_of_range);
  // Views: a std::span over it, and the checkpoint format's round trip.
  std::span<double const> view = c;
  CHECK(view.size() == 1000);
  ember::detail::byte_writer w;
  w.put_vector(c);
  ember::detail::byte_reader r{w.bytes, "memory"};
  auto back = r.get_vector<double, buffer>(1000);
  CHECK(std::equal(back.begin(), back.end(), c.begin(), c.end()));
}

TEST_CASE("a result reports every transition's seconds and the warm-up's part apart", "[run][seconds]") {
  auto U = mixture();
  auto warm = ember::mala(U, {}) | ember::warmup(300) | ember::record();
  auto r = ember::start(warm, {.chains = 64, .seed = 2, .progress = false});
  r.advance(200);  // all warm-up
  auto const a = r.result();
  CHECK(a.warmup_seconds() > 0);
  CHECK(a.warmup_seconds() <= a.seconds());  // seconds() also has the advance's own bookkeeping
  r.advance(400);  // the rest of warm-up, then sampling
  auto const b = r.result();
  CHECK(b.warmup_seconds() > a.warmup_seconds());
  CHECK(b.sampling_seconds() > 0);
  CHECK(b.sampling_seconds() == b.seconds() - b.warmup_seconds());
  auto const plain = ember::sample(ember::mala(U, {.step_size = 0.3}) | ember::record(), {.chains = 64, .steps = 100, .progress = false});
  CHECK(plain.warmup_seconds() == 0);
  CHECK(plain.sampling_seconds() == plain.seconds());
  // A checkpoint keeps both.
  r.save("run_test_seconds.ember");
  auto const loaded = decltype(r)::load(warm, "run_test_seconds.ember").result();
  CHECK(loaded.seconds() == b.seconds());
  CHECK(loaded.warmup_seconds() == b.warmup_seconds());
  std::remove("run_test_seconds.ember");
}

TEST_CASE("a default start where the energy is not finite is drawn again, chain by chain, the others unchanged",
          "[run][start]") {
  using S0 = float;
  // The same Gaussian, on the whole plane and on the half-plane x₀ > 0 only (NaN elsewhere).
  auto whole = ember::custom_energy<2>([](auto const& x) { return 0.5f * (x[0] * x[0] + x[1] * x[1]); });
  auto half = ember::custom_energy<2>([](auto const& x) {
    using S = std::decay_t<decltype(x[0])>;
    return ember::select(x[0] > S(S0(0)), S(0.5f) * (x[0] * x[0] + x[1] * x[1]), S(std::numeric_limits<S0>::quiet_NaN()));
  });
  constexpr int C = 100;
  ember_test::for_each_cpu_backend([&](auto be) {
    INFO("backend " << be.name);
    auto a = ember::start(ember::mala(whole, {.step_size = 0.3}), {.chains = C, .seed = 12}, be);
    auto b = ember::start(ember::mala(half, {.step_size = 0.3}), {.chains = C, .seed = 12}, be);
    auto const ra = a.result(), rb = b.result();
    CHECK(rb.divergent_chains() == 0);
    int redrawn = 0;
    for (int c = 0; c < C; ++c) {
      auto const xa = ra.final_state(c), xb = rb.final_state(c);
      CHECK(xb[0] > 0);
      if (xa[0] > 0) {
        CHECK(xa[0] == xb[0]);
        CHECK(xa[1] == xb[1]);
      } else {
        ++redrawn;
      }
    }
    CHECK(redrawn > 20);  // about half of N(0, I) starts lie in x₀ ≤ 0
  });
  // An energy finite nowhere: every chain tried 100 times, then frozen at its start, and said so.
  auto nowhere = ember::custom_energy<2>([](auto const& x) { return x[0] * 0.f + std::numeric_limits<float>::infinity(); });
  auto r = ember::sample(ember::mala(nowhere, {.step_size = 0.3}) | ember::record(), {.chains = 8, .steps = 4, .progress = false});
  CHECK(r.divergent_chains() == 8);
  CHECK(r.diverged_at(0) == -1);
}

TEST_CASE("chains that accepted nothing after warm-up are counted and named in the summary", "[run][summary]") {
  auto U = mixture();
  // A step size of 10⁴: every proposal lands at an energy ~10⁸ above and is rejected.
  auto stuck = ember::sample(ember::mala(U, {.step_size = 1e4}) | ember::record(), {.chains = 20, .steps = 50, .progress = false});
  auto const s = stuck.summary();
  CHECK(s.stuck_chains == 20);
  auto const w = s.warnings();
  CHECK(std::any_of(w.begin(), w.end(), [](std::string const& x) {
    return x.rfind("WARNING: 20 of 20 chains accepted no proposal after warm-up: they never moved", 0) == 0;
  }));
  auto healthy = ember::sample(ember::mala(U, {.step_size = 0.3}) | ember::record(), {.chains = 20, .steps = 50, .progress = false});
  CHECK(healthy.summary().stuck_chains == 0);
}
