// Chains over MPI ranks (ember/mpi.hpp, docs/mpi.md): every rank runs its range of the chains,
// the draws are those of one process whatever the rank count, and the summary is over every chain.
//
//   mpirun -np 4 ./16_mpi [dir]      (Open MPI as root: add --allow-run-as-root)
//
// Samples a 10-dimensional Gaussian with correlated coordinates and means 1, 2, ..., 10 with
// ChEES-HMC, 2,048 chains; saves a checkpoint per rank and the draws one file per rank under
// `dir` (default: the working directory); exits 1 if a mean is more than 5 Monte-Carlo standard
// errors from its true value.
#include <ember/mpi.hpp>

#include <array>
#include <cmath>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
  ember::mpi::environment env(argc, argv);  // MPI_Init_thread ... MPI_Finalize
  std::string const dir = argc > 1 ? argv[1] : ".";
  constexpr int D = 10;
  ember::vec<double, D> mean;
  std::array<std::array<double, D>, D> cov{};
  for (int i = 0; i < D; ++i) {
    mean[i] = i + 1;
    for (int j = 0; j < D; ++j) cov[i][j] = i == j ? 1.0 + i : 0.5 * std::sqrt((1.0 + i) * (1.0 + j));
  }
  auto const U = ember::gaussian(mean, cov);

  ember::backend::mpi<> be;  // MPI_COMM_WORLD; each rank's chains on its OpenMP threads (backend::cpu)
  auto run = ember::start(ember::chees_hmc(U) | ember::record(), {.chains = 2048, .seed = 1}, be);
  run.advance(run.schedule().keep_from() + 500);
  ember::mpi::save(run, dir + "/checkpoint", be.comm);  // a file per rank, then the manifest

  auto const r = run.result();                          // this rank's chains (run.range() says which)
  auto const s = ember::mpi::summarize(r, be.comm);     // over every chain, on every rank
  ember::mpi::save_npz(r, dir + "/draws.npz", be.comm, ember::mpi::npz_layout::per_rank);
  if (be.comm.rank() == 0) std::cout << s;

  int off = 0;
  for (int i = 0; i < D; ++i) off += !(std::abs(s.dims[i].mean - mean[i]) < 5 * s.dims[i].mcse);
  if (be.comm.rank() == 0 && off) std::cout << off << " means more than 5 MCSE from the truth\n";
  return off ? 1 : 0;
}
