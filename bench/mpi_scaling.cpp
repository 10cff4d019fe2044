// A run's chains over MPI ranks (ember/mpi.hpp): throughput and warm-up communication.
//
//   mpirun -np R ember_mpi_scaling [--threads T] [--chains C] [--warmup W] [--draws N]
//
// For each of four matrix targets (ember/targets/), ChEES-HMC (ember's default) in float: the
// warm-up's and the sampling's seconds (the slowest rank's), chain-transitions a second in each,
// the collective calls and bytes a rank sent per warm-up transition (mpi::communicator's
// traffic), and the latency of one warm-up-sized collective at this rank count (a 1-int
// Allreduce and a tile-sums Allgatherv, each timed over 2,000 calls). One JSON line per target
// on rank 0; bench/mpi_compare.sh runs it at several rank and thread counts and compares. The
// draws are bitwise the same at every rank count (tests/mpi/), so only times differ.
#include <ember/mpi.hpp>
#include <ember/targets/eight_schools.hpp>
#include <ember/targets/ill_conditioned_gaussian.hpp>
#include <ember/targets/neal_funnel.hpp>
#include <ember/targets/standard_normal.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

struct options {
  int threads = 1;
  std::int64_t chains = 4096, warmup = 400, draws = 400;
};

// Seconds of one call of f, over n calls after 100 unmeasured ones, the same on every rank (the
// slowest's).
template <class F>
double per_call(ember::mpi::communicator const& comm, int n, F const& f) {
  for (int i = 0; i < 100; ++i) f();
  comm.barrier();
  auto const t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) f();
  double const s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / n;
  return comm.max(s);
}

template <class Target>
void measure(char const* name, Target const& target, options const& o, ember::mpi::communicator const& comm) {
  ember::backend::mpi<> be{.comm = comm, .inner = {.threads = o.threads}};
  auto const pipe = ember::chees_hmc(target.energy(), {.warmup = o.warmup});
  auto run = ember::start(pipe, {.chains = o.chains, .seed = 1, .progress = false}, be);
  auto const before = comm.traffic();
  run.advance(o.warmup);
  auto const during = comm.traffic();
  run.advance(o.draws);
  auto const r = run.result();
  double const warm = comm.max(r.warmup_seconds()), sampling = comm.max(r.sampling_seconds());
  std::int64_t grads[2] = {r.warmup_gradients(), r.gradients()};
  comm.sum(grads, 2);
  // One warm-up transition's collectives, alone: an Allreduce of one int (the chunk's agreement)
  // and an Allgatherv of every rank's tile sums (a pooled adapter's; 2D + 2 values a tile here).
  std::int64_t const tiles = (run.range().count + ember::mpi::tile - 1) / ember::mpi::tile;
  std::vector<double> sums(std::size_t(tiles * (2 * Target::dim + 2)), 1.0);
  double const reduce_s = per_call(comm, 2000, [&] {
    int v = 1;
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MAX, comm.native());
  });
  double const gather_s = per_call(comm, 2000, [&] { (void)comm.all_gather(std::span<double const>(sums)); });
  double const per_warm = double(during.collectives - before.collectives) / double(o.warmup);
  double const bytes_warm = double(during.bytes - before.bytes) / double(o.warmup);
  if (comm.rank() == 0)
    std::printf("{\"target\": \"%s\", \"dim\": %d, \"ranks\": %d, \"threads\": %d, \"chains\": %lld, \"warmup\": %lld, "
                "\"draws\": %lld, \"warmup_s\": %.6g, \"sampling_s\": %.6g, \"warmup_transitions_per_s\": %.6g, "
                "\"sampling_chain_transitions_per_s\": %.6g, \"grads_per_s_sampling\": %.6g, "
                "\"collectives_per_warmup_transition\": %.4g, \"bytes_per_warmup_transition\": %.6g, "
                "\"allreduce_us\": %.4g, \"allgatherv_us\": %.4g}\n",
                name, Target::dim, comm.size(), o.threads, (long long)o.chains, (long long)o.warmup, (long long)o.draws, warm,
                sampling, double(o.warmup) / warm, double(o.chains * o.draws) / sampling, double(grads[1]) / sampling, per_warm,
                bytes_warm, reduce_s * 1e6, gather_s * 1e6);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  ember::mpi::environment env(argc, argv);
  ember::mpi::communicator comm;
  options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string const f = argv[i];
    long long const v = std::atoll(argv[i + 1]);
    if (f == "--threads") o.threads = int(v);
    else if (f == "--chains") o.chains = v;
    else if (f == "--warmup") o.warmup = v;
    else if (f == "--draws") o.draws = v;
    else {
      if (comm.rank() == 0) std::fprintf(stderr, "usage: ember_mpi_scaling [--threads T] [--chains C] [--warmup W] [--draws N]\n");
      return 2;
    }
  }
  try {
    measure("standard_normal", ember::targets::standard_normal<float>{}, o, comm);
    measure("ill_conditioned_gaussian", ember::targets::ill_conditioned_gaussian<float>{}, o, comm);
    measure("neal_funnel", ember::targets::neal_funnel<float>{}, o, comm);
    measure("eight_schools", ember::targets::eight_schools<float>{}, o, comm);
  } catch (std::exception const& e) {
    std::fprintf(stderr, "rank %d: %s\n", comm.rank(), e.what());
    return 1;
  }
  return 0;
}
