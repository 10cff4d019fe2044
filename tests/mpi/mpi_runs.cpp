// Runs over MPI ranks (ember/mpi.hpp), checked on every rank count they are started with: the
// draws, adapted parameters, tracked statistics and summaries of a run over R ranks are bitwise
// those of the same run in one process (backend::cpu with blocks of one tile, so that tracked
// sums are added in the same order), a failure on one rank stops every rank with one error and
// leaves each run at its last whole chunk, and checkpoints per rank resume bitwise.
//
//   mpirun -np R mpi_runs identical            the runs above, R = 1 ... 4
//   mpirun -np R mpi_runs checkpoint DIR save  save a run at transition 150 (then `resume` checks it;
//                                              `save-later`: the same run at 160)
//   mpirun -np R mpi_runs checkpoint DIR resume
//   mpirun -np R mpi_runs refused DIR WHY      a resume that must be refused, with WHY in its message
//   mpirun -np R mpi_runs die                  rank 1 aborts in the middle of a run (mpirun must end)
//
// Prints "N passed, N failed" on rank 0; exits 1 on any failure.
#include <ember/mpi.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <type_traits>
#include <vector>

using ember::vec;

namespace {

int passed = 0, failed = 0;
ember::mpi::communicator world;

// Every rank checks; rank 0 reports (a check that fails on any rank fails).
void check(bool ok, std::string const& what) {
  int bad = ok ? 0 : 1;
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (world.rank() == 0) {
    std::printf("%s: %s\n", bad ? "FAIL" : "ok", what.c_str());
    std::fflush(stdout);
  }
  (bad ? failed : passed) += 1;
}

template <class V>
bool same_bits(V const* a, V const* b, std::size_t n) {
  return std::memcmp(a, b, n * sizeof(V)) == 0;
}

// The MPI result, gathered to rank 0, against the one-process run of the same pipeline there.
template <class P>
void compare(std::string const& name, P const& pipe, std::int64_t chains, std::int64_t steps, int threads,
             std::vector<vec<double, P::kernel_type::dim>> const& init = {}) {
  constexpr int D = P::kernel_type::dim;
  using T = typename P::value_type;
  ember::sample_options<T, D> opt{.chains = chains, .steps = steps, .seed = 7, .progress = false};
  if constexpr (std::is_same_v<T, double>)
    if (!init.empty()) opt.init = std::span<vec<T, D> const>(init);
  ember::backend::mpi<> be{.comm = world, .inner = {.threads = threads}};
  auto const r = ember::sample(pipe, opt, be);
  auto const all = ember::mpi::gather(r, world, 0);
  auto const s = ember::mpi::summarize(r, world);
  bool ok = true;
  std::string why;
  if (world.rank() == 0) {
    auto const one = ember::sample(pipe, opt, ember::backend::cpu{.threads = threads, .block = ember::mpi::tile});
    auto const s1 = one.summary();
    auto fail = [&](char const* w) {
      if (ok) why = w;
      ok = false;
    };
    if (all.samples_.size() != one.samples_.size() || !same_bits(all.samples_.data(), one.samples_.data(), one.samples_.size()))
      fail("draws differ");
    if (!same_bits(all.final_.data(), one.final_.data(), one.final_.size())) fail("final states differ");
    if (all.sample_stats() != one.sample_stats() || all.stats_.size() != one.stats_.size() ||
        (!one.stats_.empty() && !same_bits(all.stats_.data(), one.stats_.data(), one.stats_.size())))
      fail("per-draw statistics (record_stats) differ");
    if (all.accepted_.size() != one.accepted_.size() || !same_bits(all.accepted_.data(), one.accepted_.data(), one.accepted_.size()))
      fail("accepted counts differ");
    auto const &a = all.adapted(), &b = one.adapted();
    if (a.step_size != b.step_size || a.trajectory_length != b.trajectory_length || a.metric_scale != b.metric_scale ||
        a.step_sizes != b.step_sizes || a.restarted_chains != b.restarted_chains ||
        a.restarted_high_energy_chains != b.restarted_high_energy_chains)
      fail("adapted parameters differ");
    if (all.divergent_transitions() != one.divergent_transitions() || all.gradients() != one.gradients() ||
        all.warmup_gradients() != one.warmup_gradients() || all.acceptance_rate() != one.acceptance_rate())
      fail("counts differ");
    for (int d = 0; d < D; ++d)
      if (std::memcmp(&s.dims[std::size_t(d)], &s1.dims[std::size_t(d)], sizeof s.dims[0]) != 0) fail("summary rows differ");
    if (s.chains != s1.chains || s.draws != s1.draws || s.chains_apart != s1.chains_apart || s.stuck_chains != s1.stuck_chains ||
        s.warnings() != s1.warnings())
      fail("summary counts or warnings differ");
    auto const &ta = all.trace(), &tb = one.trace();
    if (ta.mean.size() != tb.mean.size() || ta.acceptance != tb.acceptance || ta.energy != tb.energy) fail("traces differ");
    for (std::size_t k = 0; k < ta.mean.size() && k < tb.mean.size(); ++k)
      for (int d = 0; d < D; ++d)
        if (ta.mean[k][d] != tb.mean[k][d] || ta.variance[k][d] != tb.variance[k][d]) fail("tracked moments differ");
    // FNV-1a of the draws' (or, without them, the final states') bytes: the same on every rank count.
    auto const& bytes = all.samples_.empty() ? all.final_ : all.samples_;
    std::uint64_t h = 1469598103934665603ull;
    for (std::size_t i = 0; i < bytes.size() * sizeof(T); ++i)
      h = (h ^ reinterpret_cast<unsigned char const*>(bytes.data())[i]) * 1099511628211ull;
    std::printf("  %s: checksum %016llx, step size %.17g, rhat[0] %.6f, restarted %lld/%lld\n", name.c_str(),
                (unsigned long long)h, a.step_size, s.dims[0].rhat, (long long)a.restarted_chains,
                (long long)a.restarted_high_energy_chains);
  }
  check(ok, name + " over " + std::to_string(world.size()) + " ranks x " + std::to_string(threads) +
                " threads equals one process" + (ok ? "" : " (" + why + ")"));
}

int identical() {
  constexpr int D = 4;
  vec<double, D> const sd{{0.1, 1.0, 3.0, 10.0}};
  auto const gauss = ember::gaussian<double, D, ember::covariance::diagonal>(vec<double, D>{}, sd);
  int const threads = world.size() % 2 ? 2 : 1;  // odd rank counts with two threads, even with one
  // Warm-up's pooled sums (step size, diagonal metric), recorded draws.
  compare("hmc, warmup(300)", ember::hmc(gauss, {.integrator_steps = 8}) | ember::warmup(300) | ember::record(), 1000, 200,
          threads);
  // ChEES: trajectory observations and their sums.
  compare("chees_hmc, record_stats", ember::chees_hmc(gauss) | ember::record() | ember::record_stats(), 800, 200, 3 - threads);
  // Per-chain step sizes (per-chain adapter state; the median at the end of warm-up), float.
  auto const gf = ember::gaussian<float, D, ember::covariance::diagonal>(vec<float, D>{}, vec<float, D>{{0.1f, 1.f, 3.f, 10.f}});
  compare("mala, step_size(per_chain), float", ember::mala(gf, {}) | ember::warmup(300, ember::step_size(ember::per_chain), ember::diagonal_mass()) | ember::record(), 1100, 150, threads);
  // Tracked statistics (sums per block, gathered in global block order), no recording.
  compare("mala, track(moments, acceptance, mean_energy)",
          ember::mala(gauss, {}) | ember::warmup(200) | ember::track(ember::moments, ember::acceptance, ember::mean_energy), 900,
          300, threads);
  // NUTS, whose pace (lock-step or own) is measured and agreed.
  compare("nuts, warmup(200), record_stats", ember::nuts(gauss, {.step_size = 0.3}) | ember::warmup(200) | ember::record() | ember::record_stats(), 1024, 200, threads);
  // Warm-up's rescue: half the chains start in a second mode e^-60 as likely, behind a barrier;
  // they are restarted from chains of other ranks.
  auto const U = ember::custom_energy<2, double>([](auto const& x) {
    auto const a = 0.5 * x[0] * x[0], b = 60.0 + 0.5 * (x[0] - 20.0) * (x[0] - 20.0);
    return -log(exp(-a) + exp(-b)) + 0.5 * x[1] * x[1];
  });
  std::vector<vec<double, 2>> init(1000);
  for (std::size_t c = 0; c < init.size(); ++c)
    init[c] = c % 2 ? vec<double, 2>{{20.0, 0.0}} : vec<double, 2>{{0.001 * double(c), 0.0}};
  compare("chees_hmc with stuck chains", ember::chees_hmc(U) | ember::record(), 1000, 100, threads, init);
  // The same with per-chain step sizes: a restarted chain takes its donor's dual averaging, gathered
  // from every rank (on a rank that restarts none as on one that does).
  compare("mala, step_size(per_chain), with stuck chains",
          ember::mala(U, {}) | ember::warmup(400, ember::step_size(ember::per_chain), ember::diagonal_mass()) | ember::record(),
          1000, 100, threads, init);
  return 0;
}

// A failure on one rank, inside a chunk: every rank throws the same error, and each run is back
// at its last whole chunk, so that going on gives the uninterrupted run's draws.
bool fail_now = false;
int faults() {
  constexpr int D = 3;
  auto const U = ember::custom_energy<D, double>([](auto const& x) {
    if (fail_now) throw std::runtime_error("the likelihood's data went away");
    return 0.5 * (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
  });
  auto const pipe = ember::mala(U, {}) | ember::warmup(50) | ember::record();
  ember::backend::mpi<> be{.comm = world, .inner = {.threads = 1}};
  ember::sample_options<double, D> const opt{.chains = 1024, .seed = 3, .progress = false};
  auto run = ember::start(pipe, opt, be);
  run.advance(80);
  fail_now = world.rank() == world.size() - 1;
  std::string message;
  try {
    run.advance(40);
  } catch (std::exception const& e) {
    message = e.what();
  }
  fail_now = false;
  std::string const want = "rank " + std::to_string(world.size() - 1) + " of " + std::to_string(world.size()) +
                           " failed: the likelihood's data went away";
  check(message.find(want) != std::string::npos, "an energy that throws on the last rank stops every rank with \"" + want +
                                                     "\" (got \"" + message + "\")");
  check(run.transitions() == 80, "every rank's run is back at its last whole chunk");
  run.advance(120);
  auto const got = ember::mpi::gather(std::move(run).result(), world, 0);
  auto again = ember::start(pipe, opt, be);
  again.advance(200);
  auto const want_r = ember::mpi::gather(std::move(again).result(), world, 0);
  check(world.rank() != 0 || (got.samples_.size() == want_r.samples_.size() &&
                              same_bits(got.samples_.data(), want_r.samples_.data(), got.samples_.size())),
        "after the failure the run goes on to the uninterrupted run's draws");
  // Too few chains for the ranks: refused on every rank alike, before any work.
  if (world.size() > 1) {
    std::string refused;
    try {
      (void)ember::start(pipe, {.chains = 256 * (world.size() - 1), .seed = 1, .progress = false}, be);
    } catch (std::invalid_argument const& e) {
      refused = e.what();
    }
    check(refused.find("need at least") != std::string::npos, "too few chains for the ranks is refused: " + refused);
  }
  // Files: one .npz per rank and a gathered one; read back by tests/mpi/npz_merge_check.py.
  return 0;
}

// The pipeline of the checkpoint runs.
auto checkpoint_pipe() {
  constexpr int D = 3;
  auto const U = ember::gaussian<double, D, ember::covariance::diagonal>(vec<double, D>{}, vec<double, D>{{1.0, 2.0, 0.5}});
  return ember::hmc(U, {.integrator_steps = 4}) | ember::warmup(100, ember::step_size(ember::per_chain), ember::diagonal_mass()) |
         ember::record();
}

int checkpoint(std::string const& dir, std::string const& what) {
  auto const pipe = checkpoint_pipe();
  ember::backend::mpi<> be{.comm = world, .inner = {.threads = 1}};
  ember::sample_options<double, 3> const opt{.chains = 1030, .seed = 5, .progress = false};
  if (what == "save-later") {  // another save of the same run, at transition 160
    auto run = ember::start(pipe, opt, be);
    run.advance(160);
    ember::mpi::save(run, dir, world);
    return 0;
  }
  if (what == "save") {
    auto run = ember::start(pipe, opt, be);
    run.advance(150);  // past warm-up, with draws
    ember::mpi::save(run, dir, world);
    auto const manifest = std::filesystem::path(dir) / "manifest";
    check(std::filesystem::exists(manifest), "the manifest is written");
    // The next save, at 160, fails on the last rank (its file's place is taken by a directory):
    // it throws on every rank and leaves the save at 150 as it was, manifest and files.
    auto const before = std::filesystem::last_write_time(manifest);
    run.advance(10);
    if (world.rank() == 0)
      std::filesystem::create_directories(std::filesystem::path(dir) /
                                          ember::mpi::checkpoint_file(world.size() - 1, world.size(), 160));
    world.barrier();
    std::string message;
    try {
      ember::mpi::save(run, dir, world);
    } catch (std::exception const& e) {
      message = e.what();
    }
    check(message.find("rank " + std::to_string(world.size() - 1) + " of") != std::string::npos,
          "a save that fails on the last rank throws on every rank: " + message);
    bool kept = std::filesystem::last_write_time(manifest) == before;
    for (int r = 0; r < world.size(); ++r)
      kept = kept && std::filesystem::exists(std::filesystem::path(dir) / ember::mpi::checkpoint_file(r, world.size(), 150));
    check(kept, "the save before it, manifest and files, is left whole");
    if (world.rank() == 0)
      std::filesystem::remove_all(std::filesystem::path(dir) / ember::mpi::checkpoint_file(world.size() - 1, world.size(), 160));
    world.barrier();
    return 0;
  }
  // resume: the loaded run, taken to 300, equals the uninterrupted run to 300.
  auto run = ember::mpi::load(pipe, dir, be);
  check(run.transitions() == 150, "the loaded run is at transition 150");
  run.advance(150);
  double const loaded_step = run.adapted().step_size;
  auto const got = ember::mpi::gather(std::move(run).result(), world, 0);
  auto again = ember::start(pipe, opt, be);
  again.advance(300);
  auto const again_r = again.result();
  auto const want = ember::mpi::gather(again_r, world, 0);
  check(world.rank() != 0 || (got.samples_.size() == want.samples_.size() && got.samples_.size() > 0 &&
                              same_bits(got.samples_.data(), want.samples_.data(), got.samples_.size()) &&
                              got.adapted().step_sizes == want.adapted().step_sizes),
        "a run resumed from per-rank files gives the uninterrupted run's draws and step sizes");
  check(loaded_step == again_r.adapted().step_size,
        "every rank's resumed kernel has the uninterrupted run's step size (the median over every rank's chains)");
  // Both .npz layouts of the same run, for npz_merge_check.py.
  ember::mpi::save_npz(again_r, dir + "/gathered.npz", world);
  ember::mpi::save_npz(again_r, dir + "/split.npz", world, ember::mpi::npz_layout::per_rank);
  return 0;
}

int refused(std::string const& dir, std::string const& why) {
  auto const pipe = checkpoint_pipe();
  ember::backend::mpi<> be{.comm = world, .inner = {.threads = 1}};
  std::string message;
  try {
    (void)ember::mpi::load(pipe, dir, be);
  } catch (std::exception const& e) {
    message = e.what();
  }
  check(message.find(why) != std::string::npos, "refused with \"" + why + "\": " + message);
  return 0;
}

// A benchmark matrix shared out over the ranks writes the JSON lines one process writes, in the
// same order (configurations here add rows without sampling; one fails).
void row(ember::benchmark::report& r, char const* target, std::int64_t chains) {
  ember::benchmark::configuration_metrics m;
  m.target = target;
  m.sampler = "none";
  m.chains = chains;
  m.ess_per_s = 1.5 * double(chains);
  m.health = "ok";
  r.add(std::move(m));
}
int matrix(std::string const& dir) {
  using ember::benchmark::report, ember::benchmark::run_axes;
  std::initializer_list<std::pair<char const*, ember::benchmark::configuration_fn>> const configurations = {
      {"a", [](report& r, run_axes const& x) { row(r, "a", x.chains[0]); }},
      {"b", [](report& r, run_axes const& x) { row(r, "b", x.chains[0]); row(r, "b", x.chains[0] + 1); }},
      {"c", [](report&, run_axes const&) { throw std::runtime_error("configuration c fails"); }},
      {"d", [](report& r, run_axes const& x) { row(r, "d", x.chains[0]); }},
      {"e", [](report& r, run_axes const& x) { row(r, "e", x.chains[0]); }},
  };
  std::string const shared_file = dir + "/shared.jsonl", alone_file = dir + "/alone.jsonl";
  std::filesystem::create_directories(dir);
  std::string a0 = "m", a1 = "--chains", a2 = "7", a3 = "--jsonl", a4 = shared_file;
  char* args[] = {a0.data(), a1.data(), a2.data(), a3.data(), a4.data()};
  ember::benchmark::matrix_share share{world.rank(), world.size(), [](std::string const& mine) {
                                         auto const all = world.gather(std::span<char const>(mine.data(), mine.size()), 0);
                                         return std::vector<std::string>{std::string(all.begin(), all.end())};
                                       }};
  int const rc = ember::benchmark::drive(5, args, "", 3, 12, configurations, share);
  bool same = true;
  if (world.rank() == 0) {
    a4 = alone_file;
    char* alone_args[] = {a0.data(), a1.data(), a2.data(), a3.data(), a4.data()};
    int const rc1 = ember::benchmark::drive(5, alone_args, "", 3, 12, configurations);
    auto read = [](std::string const& p) {
      std::ifstream in(p);
      return std::string(std::istreambuf_iterator<char>(in), {});
    };
    same = rc == 1 && rc1 == 1 && read(shared_file) == read(alone_file) && !read(alone_file).empty();
  }
  check(same, "a matrix over " + std::to_string(world.size()) + " ranks writes one process's JSON lines, in order");
  return 0;
}

int die() {
  auto const U = ember::gaussian<double, 2, ember::covariance::diagonal>(vec<double, 2>{}, vec<double, 2>{{1.0, 1.0}});
  ember::backend::mpi<> be{.comm = world, .inner = {.threads = 1}};
  auto run = ember::start(ember::mala(U, {}) | ember::warmup(100), {.chains = 1024, .seed = 1, .progress = false}, be);
  run.advance(10);
  if (world.rank() == 1) std::abort();  // the others wait in warm-up's next sum
  run.advance(1000000);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  ember::mpi::environment env(argc, argv);
  std::string const mode = argc > 1 ? argv[1] : "identical";
  try {
    if (mode == "identical") {
      identical();
      faults();
    } else if (mode == "matrix" && argc > 2) {
      matrix(argv[2]);
    } else if (mode == "checkpoint" && argc > 3) {
      checkpoint(argv[2], argv[3]);
    } else if (mode == "refused" && argc > 3) {
      refused(argv[2], argv[3]);
    } else if (mode == "die") {
      die();
    } else {
      if (world.rank() == 0) std::fprintf(stderr, "usage: mpi_runs identical|checkpoint DIR save|resume|refused DIR WHY|die\n");
      return 2;
    }
  } catch (std::exception const& e) {
    std::fprintf(stderr, "rank %d: %s\n", world.rank(), e.what());
    ++failed;
  }
  if (world.rank() == 0) std::printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
