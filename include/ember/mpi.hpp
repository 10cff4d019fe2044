#pragma once
/// \file
/// A run's chains over MPI ranks (opt-in: include this header, link MPI; CMake's
/// `ember::mpi` target does both). docs/mpi.md is the guide.
///
///     ember::mpi::environment env(argc, argv);                 // MPI_Init_thread, MPI_Finalize
///     ember::backend::mpi<> be;                                 // MPI_COMM_WORLD over backend::cpu
///     auto r = ember::sample(pipe, {.chains = 4096, .seed = 1}, be);   // this rank's chains
///     auto s = ember::mpi::summarize(r, be.comm);               // over every chain, on every rank
///
/// `backend::mpi<Inner>` is a backend policy around `backend::cpu` or `backend::scalar`: each rank
/// runs a contiguous range of the chains (`communicator::partition`) with the inner backend, and
/// the run's decisions that read more than one rank's chains go through its group, the
/// communicator (run/group.hpp): warm-up's pooled sums, the rescue of stuck chains, the tuned kernel
/// at the end of warm-up, chunk lengths, NUTS's pace. A chain's draws depend only on the seed and
/// its global index, and every sum over chains is added in one global order:
///  - warm-up's reductions are summed by the inner backend in tiles of 256 chains, each tile in
///    chain order, then the tiles in order; a rank holds whole tiles, so the ranks' tile sums,
///    gathered in rank order and added in tile order, are bitwise one process's;
///  - the inner backend's blocks are tiles too, so tracked statistics (track(...)) are gathered
///    block by block and added in global block order.
/// So 1, 2, 3, 4 ... ranks, with any threads per rank, give bitwise the same draws, adapted
/// parameters, tracked statistics and summaries (tests/mpi/), and one rank gives the draws and
/// adapted parameters of `backend::cpu` in one process.
///
/// Every rank must make the same calls in the same order (`sample`, `start`, `advance`,
/// `result`-side functions here): they are collective. An exception on one rank inside a chunk
/// (a user's energy throwing) is caught there; after every chunk the ranks agree whether any
/// failed, and then every rank throws the same error naming the rank, with every rank's run back
/// at its last whole chunk. A rank that dies ends the job (mpirun stops every rank).
///
/// The result of a rank is its own chains' (`run::range()` says which). Over all chains:
/// `mpi::summarize` (R-hat, ESS, MCSE over every chain: each dimension's draws go to one rank,
/// never all draws to one rank), `mpi::gather` (a whole result on one rank, when it fits),
/// `mpi::save_npz` (gathered on rank 0, or one file per rank with a documented merge:
/// `ember_arviz.load` takes the list), `mpi::save` / `mpi::load` (a checkpoint per rank and a
/// manifest written last).

#include <ember/benchmark/driver.hpp>
#include <ember/ember.hpp>
#include <ember/run/group.hpp>

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <cmath>
#include <numeric>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace ember {

namespace detail {
template <class P, class Inner>
class mpi_storage;
}  // namespace detail

namespace mpi {

/// Chains per tile: a rank holds whole tiles (see the file comment).
inline constexpr std::int64_t tile = 256;

/// MPI_Init_thread for the lifetime of main()'s object, and MPI_Finalize. OpenMP threads inside a
/// rank never call MPI (MPI_THREAD_FUNNELED is enough).
class environment {
 public:
  environment(int& argc, char**& argv) {
    int provided = 0;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
      throw std::runtime_error("ember::mpi::environment: MPI_Init_thread failed");
  }
  environment(environment const&) = delete;
  environment& operator=(environment const&) = delete;
  ~environment() { MPI_Finalize(); }
};

/// What a rank sent through a communicator and its copies: collective calls and bytes.
struct traffic {
  std::int64_t collectives = 0, bytes = 0;
};

/// A communicator as a run's group (run/group.hpp): the partition of the chains and the collective
/// operations ember uses, each counted in `traffic()`.
class communicator {
 public:
  communicator() : communicator(MPI_COMM_WORLD) {}
  explicit communicator(MPI_Comm c) : comm_(c), traffic_(std::make_shared<mpi::traffic>()) {}

  MPI_Comm native() const { return comm_; }
  int rank() const {
    int r = 0;
    MPI_Comm_rank(comm_, &r);
    return r;
  }
  int size() const {
    int n = 0;
    MPI_Comm_size(comm_, &n);
    return n;
  }
  mpi::traffic traffic() const { return *traffic_; }

  /// Rank `r`'s chains of `chains`: whole tiles, shared out evenly (a rank has ⌊tiles/ranks⌋ or
  /// one more). Refuses, on every rank alike, a run with fewer tiles than ranks.
  static chain_range partition_of(int r, int ranks, std::int64_t chains) {
    if (chains <= 0) return {0, chains, chains};  // the run refuses it in its own words
    std::int64_t const tiles = (chains + tile - 1) / tile;
    if (tiles < ranks)
      throw std::invalid_argument("ember::backend::mpi: " + std::to_string(chains) + " chains cannot be shared out over " +
                                  std::to_string(ranks) + " ranks: a rank holds whole tiles of 256 chains (the unit of "
                                  "warm-up's fixed-order sums, which keeps the draws the same for any rank count), so " +
                                  std::to_string(ranks) + " ranks need at least " + std::to_string(tile * (ranks - 1) + 1) +
                                  " chains; run more chains or fewer ranks");
    std::int64_t const t0 = tiles * r / ranks, t1 = tiles * (r + 1) / ranks;
    return {t0 * tile, std::min(chains, t1 * tile) - t0 * tile, chains};
  }
  chain_range partition(std::int64_t chains) const { return partition_of(rank(), size(), chains); }

  void sum(std::int64_t* v, int n) const { allreduce(v, n, MPI_INT64_T, MPI_SUM); }
  void sum(double* v, int n) const { allreduce(v, n, MPI_DOUBLE, MPI_SUM); }
  double max(double v) const {
    allreduce(&v, 1, MPI_DOUBLE, MPI_MAX);
    return v;
  }
  void barrier() const {
    count(0);
    check(MPI_Barrier(comm_), "MPI_Barrier");
  }

  /// Every rank's values in rank order, on every rank.
  template <class V>
  std::vector<V> all_gather(std::span<V const> mine) const {
    std::int64_t const n = std::int64_t(mine.size());
    std::vector<std::int64_t> counts(static_cast<std::size_t>(size()));
    count(sizeof n);
    check(MPI_Allgather(&n, 1, MPI_INT64_T, counts.data(), 1, MPI_INT64_T, comm_), "MPI_Allgather");
    return all_gather(mine, std::span<std::int64_t const>(counts));
  }
  /// The same when every rank's count is known (`counts[r]` values from rank r): one call.
  template <class V>
  std::vector<V> all_gather(std::span<V const> mine, std::span<std::int64_t const> counts) const {
    static_assert(std::is_trivially_copyable_v<V>);
    std::vector<int> bytes(counts.size()), at(counts.size());
    std::int64_t total = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      std::int64_t const b = counts[r] * std::int64_t(sizeof(V));
      if (total + b > INT_MAX)
        throw std::length_error("ember::mpi: a gather of more than 2 GiB in one call (" + std::to_string(total + b) +
                                " bytes); gather less at a time");
      bytes[r] = int(b);
      at[r] = int(total);
      total += b;
    }
    std::vector<V> all(std::size_t(total) / sizeof(V));
    count(mine.size() * sizeof(V));
    check(MPI_Allgatherv(mine.data(), int(mine.size() * sizeof(V)), MPI_BYTE, all.data(), bytes.data(), at.data(), MPI_BYTE,
                         comm_),
          "MPI_Allgatherv");
    return all;
  }
  /// Every rank's values in rank order, on `root` (empty elsewhere): collective calls of at most
  /// 1 GiB from all ranks together (no point-to-point messages, so nothing to confuse with a
  /// program's own; MPI's counts are ints), so any size that fits in root's memory.
  template <class V>
  std::vector<V> gather(std::span<V const> mine, int root) const {
    static_assert(std::is_trivially_copyable_v<V>);
    std::int64_t const n = std::int64_t(mine.size());
    std::vector<std::int64_t> counts(static_cast<std::size_t>(size()));
    count(sizeof n);
    check(MPI_Allgather(&n, 1, MPI_INT64_T, counts.data(), 1, MPI_INT64_T, comm_), "MPI_Allgather");
    std::int64_t const piece = std::max<std::int64_t>(1, (std::int64_t(1) << 30) / std::int64_t(sizeof(V)) / size());
    std::int64_t rounds = 0;
    for (auto c : counts) rounds = std::max(rounds, (c + piece - 1) / piece);
    bool const me = rank() == root;
    std::vector<std::int64_t> at(counts.size() + 1, 0);  // where each rank's values start in `all`
    for (std::size_t r = 0; r < counts.size(); ++r) at[r + 1] = at[r] + counts[r];
    std::vector<V> all(me ? std::size_t(at.back()) : 0);
    std::vector<V> buffer;
    std::vector<int> bytes(counts.size()), displ(counts.size());
    for (std::int64_t k = 0; k < rounds; ++k) {
      // Round k: values [k·piece, (k + 1)·piece) of every rank, received contiguously, then placed.
      int total = 0;
      for (std::size_t r = 0; r < counts.size(); ++r) {
        std::int64_t const from = std::min(counts[r], k * piece), to = std::min(counts[r], (k + 1) * piece);
        bytes[r] = int((to - from) * std::int64_t(sizeof(V)));
        displ[r] = total;
        total += bytes[r];
      }
      std::int64_t const from = std::min(n, k * piece), to = std::min(n, (k + 1) * piece);
      if (me) buffer.resize(std::size_t(total) / sizeof(V));
      count(std::size_t(to - from) * sizeof(V));
      check(MPI_Gatherv(mine.data() + from, int((to - from) * std::int64_t(sizeof(V))), MPI_BYTE, buffer.data(), bytes.data(),
                        displ.data(), MPI_BYTE, root, comm_),
            "MPI_Gatherv");
      if (!me) continue;
      for (std::size_t r = 0; r < counts.size(); ++r)
        std::copy_n(buffer.begin() + displ[r] / int(sizeof(V)), bytes[r] / int(sizeof(V)),
                    all.begin() + std::ptrdiff_t(at[r] + std::min(counts[r], k * piece)));
    }
    return all;
  }

  /// Every rank says what failed on it ("" for nothing); returns "" when nothing failed anywhere,
  /// else, on every rank, the first failed rank's message, naming it.
  std::string agree(std::string const& error) const {
    int failed = error.empty() ? INT_MAX : rank();
    allreduce(&failed, 1, MPI_INT, MPI_MIN);
    if (failed == INT_MAX) return {};
    // Only when something failed: whether every rank did (a refusal they all make alike).
    int all = error.empty() ? 0 : 1;
    allreduce(&all, 1, MPI_INT, MPI_MIN);
    std::string what = rank() == failed ? error : std::string();
    std::int64_t n = std::int64_t(what.size());
    check(MPI_Bcast(&n, 1, MPI_INT64_T, failed, comm_), "MPI_Bcast");
    what.resize(std::size_t(n));
    check(MPI_Bcast(what.data(), int(n), MPI_CHAR, failed, comm_), "MPI_Bcast");
    if (all && size() > 1) return "ember::mpi: on every rank: " + what;
    return "ember::mpi: rank " + std::to_string(failed) + " of " + std::to_string(size()) + " failed: " + what;
  }
  /// The group's form (run/group.hpp): `e` is this rank's exception or null.
  void agree(std::exception_ptr e) const {
    std::string error;
    if (e) try {
        std::rethrow_exception(e);
      } catch (std::exception const& x) {
        error = *x.what() ? x.what() : "an exception without a message";
      } catch (...) {
        error = "an exception that is not a std::exception";
      }
    agree_or_throw(error);
  }
  /// `agree`, throwing the agreed error on every rank.
  void agree_or_throw(std::string const& error) const {
    if (auto const e = agree(error); !e.empty()) throw std::runtime_error(e);
  }

 private:
  void count(std::size_t bytes) const {
    traffic_->collectives += 1;
    traffic_->bytes += std::int64_t(bytes);
  }
  template <class V>
  void allreduce(V* v, int n, MPI_Datatype type, MPI_Op op) const {
    count(std::size_t(n) * sizeof(V));
    check(MPI_Allreduce(MPI_IN_PLACE, v, n, type, op, comm_), "MPI_Allreduce");
  }
  static void check(int rc, char const* what) {
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    throw std::runtime_error(std::string("ember::mpi: ") + what + " failed: " + std::string(text, std::size_t(len)));
  }

  MPI_Comm comm_;
  std::shared_ptr<mpi::traffic> traffic_;
};

/// Runs `f()` on every rank and agrees afterwards: if it threw on any rank, every rank throws
/// that rank's error (so no rank goes on to a collective call the others never make).
template <class F>
auto collectively(communicator const& comm, F&& f) {
  std::string error;
  auto const failed = [&](char const* what) { error = what && *what ? what : "an exception without a message"; };
  if constexpr (std::is_void_v<decltype(f())>) {
    try {
      f();
    } catch (std::exception const& e) {
      failed(e.what());
    } catch (...) {
      failed("an exception that is not a std::exception");
    }
    comm.agree_or_throw(error);
  } else {
    decltype(f()) out{};
    try {
      out = f();
    } catch (std::exception const& e) {
      failed(e.what());
    } catch (...) {
      failed("an exception that is not a std::exception");
    }
    comm.agree_or_throw(error);
    return out;
  }
}

}  // namespace mpi

namespace backend {

/// Chains shared out over the ranks of `comm`, each rank's run by `inner` (backend::cpu, or
/// backend::scalar; its `.threads` per rank, its `.block` set to a tile). See ember/mpi.hpp.
template <class Inner = cpu>
struct mpi {
  static_assert(std::is_same_v<Inner, cpu> || std::is_same_v<Inner, scalar>,
                "ember::backend::mpi wraps backend::cpu or backend::scalar (a CUDA backend per rank is not built yet)");
  static constexpr char const* name = "mpi";
  ember::mpi::communicator comm{};
  Inner inner{};

  template <class P>
  using storage = ember::detail::mpi_storage<P, Inner>;
  template <class P>
  void check(P const& pipe) const {
    inner.check(pipe);
  }
  /// The run's group (run/group.hpp).
  ember::mpi::communicator group() const { return comm; }
};

}  // namespace backend

namespace detail {

/// This rank's chains of a run over MPI ranks: the inner backend's storage for them, with every
/// reduction over chains gathered and added in global order (see ember/mpi.hpp).
template <class P, class Inner>
class mpi_storage {
  using inner_type = typename Inner::template storage<P>;
  using T = typename P::value_type;
  static constexpr int D = P::dim;
  static_assert(inner_type::reduce_tile_chains == ember::mpi::tile);

 public:
  mpi_storage() = default;
  mpi_storage(backend::mpi<Inner> const& be, std::int64_t chains) : comm_(be.comm), range_(comm_.partition(chains)) {
    Inner in = be.inner;
    // With tracked statistics, blocks are tiles, so their sums are added in one global order (and
    // a rank runs at most one thread per tile); draws never depend on blocks.
    if constexpr (P::track_stride > 0) in.block = ember::mpi::tile;
    // Not collective: it refuses only what every rank refuses alike (its options), so a rank's
    // checkpoint can be loaded without the others (mpi::load agrees afterwards).
    inner_ = inner_type(in, range_.count, range_.first, chains);
    // Every rank's tiles, for the reductions' gathers.
    for (int r = 0; r < comm_.size(); ++r) {
      auto const q = ember::mpi::communicator::partition_of(r, comm_.size(), chains);
      tiles_.push_back((q.count + ember::mpi::tile - 1) / ember::mpi::tile);
    }
  }

  /// From the default start nothing is evaluated yet (the first chunk draws the starts); from
  /// given starts each rank evaluates its chains', and the ranks agree (a user's energy may throw).
  template <class Init>
  void init(typename P::kernel_type const& kernel, std::uint64_t key, Init const& init) {
    if (init.empty()) return inner_.init(kernel, key, init);
    ember::mpi::collectively(comm_, [&] {
      inner_.init(kernel, key,
                  start_states<T, D>(std::span<vec<T, D> const>(init).subspan(std::size_t(range_.first), std::size_t(range_.count))));
    });
  }

  /// One chunk on every rank; if it failed on any, every rank takes its chunk back and throws.
  template <observe Mode, class Kernel>
  chunk_output advance(Kernel const& kernel, chunk const& ch, T* samples, std::int64_t k0, std::int64_t k1,
                       typename P::tracked_type const& stats) {
    chunk_output out;
    std::string error;
    try {
      out = inner_.template advance<Mode>(kernel, ch, samples, k0, k1, stats);
    } catch (std::exception const& e) {
      error = e.what();
      if (error.empty()) error = "an exception without a message";
    } catch (...) {
      error = "an exception that is not a std::exception";
    }
    if (auto const e = comm_.agree(error); !e.empty()) {
      if (error.empty()) inner_.undo_chunk();  // it happened here but not everywhere: take it back
      throw std::runtime_error(e);
    }
    if constexpr (P::track_stride > 0) {
      std::size_t const stride = std::size_t(k1 - k0) * std::size_t(P::track_stride);
      if (stride > 0) {
        auto const& mine = inner_.block_sums();
        auto const all = comm_.all_gather(std::span<double const>(mine));
        out.track.assign(stride, 0.0);
        for (std::size_t b = 0; b < all.size() / stride; ++b)
          for (std::size_t i = 0; i < stride; ++i) out.track[i] += all[b * stride + i];
      }
    }
    return out;
  }

  /// Σ over every rank's chains of f(c, acc): each rank's tiles, gathered in rank (so tile)
  /// order and added in that order, as one process adds them.
  template <class F>
  void reduce(F const& f, double* result) const {
    constexpr int N = F::size;
    auto const mine = inner_.reduce_tiles(f);
    std::vector<std::int64_t> counts(tiles_.size());
    for (std::size_t r = 0; r < counts.size(); ++r) counts[r] = tiles_[r] * N;
    auto const all = comm_.all_gather(std::span<double const>(mine), std::span<std::int64_t const>(counts));
    for (int i = 0; i < N; ++i) result[i] = 0;
    for (std::size_t t = 0; t < all.size() / N; ++t)
      for (int i = 0; i < N; ++i) result[i] += all[t * N + i];
  }

  chain_view<T> view() const { return inner_.view(); }
  chain_arrays<T> const& host() const { return inner_.host(); }
  chain_arrays<T>& host_mutable() { return inner_.host_mutable(); }
  void upload() { inner_.upload(); }
  std::int64_t copy_out(T* positions, std::uint8_t* frozen, std::int64_t* diverged_at, std::int64_t* accepted) const {
    return inner_.copy_out(positions, frozen, diverged_at, accepted);
  }

 private:
  ember::mpi::communicator comm_;
  chain_range range_;
  inner_type inner_;
  std::vector<std::int64_t> tiles_;
};

}  // namespace detail

namespace mpi {

/// Every chain's result on every rank, except the draws: chains, final states, divergence, the
/// per-chain accepted counts and step sizes, and the totals (seconds: the slowest rank's). With
/// `root` ≥ 0, the draws and per-draw statistics too, on `root` only (every chain's, in chain order).
template <class T, int D>
result<T, D> gather(result<T, D> const& mine, communicator const& comm, int root = -1) {
  result<T, D> g;  // mine's run-level fields (all but the draws, which are not copied)
  g.kept_ = mine.kept_;
  g.kept_transitions_ = mine.kept_transitions_;
  g.adapted_ = mine.adapted_;
  g.target_acceptance_ = mine.target_acceptance_;
  g.harmonic_target_ = mine.harmonic_target_;
  g.trace_ = mine.trace_;  // the tracked sums are already every chain's (mpi_storage::advance)
  g.variables_ = mine.variables_;
  std::int64_t C = mine.chains();
  comm.sum(&C, 1);
  g.chains_ = C;
  {
    // Final states: D × chains on every rank, d-major: gathered chain-major and turned.
    std::vector<T> cd(std::size_t(mine.chains()) * D);
    for (std::int64_t c = 0; c < mine.chains(); ++c)
      for (int d = 0; d < D; ++d) cd[std::size_t(c) * D + std::size_t(d)] = mine.final_[std::size_t(d * mine.chains() + c)];
    auto const all = comm.all_gather(std::span<T const>(cd));
    g.final_.resize(std::size_t(C) * D);
    for (std::int64_t c = 0; c < C; ++c)
      for (int d = 0; d < D; ++d) g.final_[std::size_t(d * C + c)] = all[std::size_t(c) * D + std::size_t(d)];
  }
  auto put = [](auto& dst, auto const& v) {
    dst.resize(v.size());
    std::copy(v.begin(), v.end(), dst.begin());
  };
  put(g.frozen_, comm.all_gather(std::span<std::uint8_t const>(mine.frozen_)));
  put(g.diverged_at_, comm.all_gather(std::span<std::int64_t const>(mine.diverged_at_)));
  put(g.accepted_, comm.all_gather(std::span<std::int64_t const>(mine.accepted_)));
  g.adapted_.step_sizes = comm.all_gather(std::span<double const>(mine.adapted_.step_sizes));  // empty unless per chain
  std::int64_t counts[5] = {mine.divergent_chains_, mine.divergent_transitions_, mine.truncated_transitions_, mine.gradients_,
                            mine.warmup_gradients_};
  comm.sum(counts, 5);
  g.divergent_chains_ = counts[0];
  g.divergent_transitions_ = counts[1];
  g.truncated_transitions_ = counts[2];
  g.gradients_ = counts[3];
  g.warmup_gradients_ = counts[4];
  g.seconds_ = comm.max(mine.seconds_);
  g.warmup_seconds_ = comm.max(mine.warmup_seconds_);
  // The acceptance rate over live chains, as a run adds it (exact integer counts in double).
  double acc = 0;
  for (std::size_t c = 0; c < g.frozen_.size(); ++c)
    if (!g.frozen_[c]) acc += double(g.accepted_[c]);
  std::int64_t const live = C - g.divergent_chains_;
  g.acceptance_ = (live > 0 && g.kept_transitions_ > 0) ? acc / (double(live) * double(g.kept_transitions_)) : 0.0;
  if (root >= 0) {
    // Draws, (k·D + d)·chains + c, and per-draw statistics, (k·S + j)·chains + c: each rank's
    // block of chains is gathered to root and placed.
    auto const place = [&](detail::host_buffer<T> const& from, int columns, detail::host_buffer<T>& to) {
      auto const all = comm.gather(std::span<T const>(from.data(), from.size()), root);
      if (comm.rank() != root || all.empty()) return;
      std::int64_t const K = mine.kept_;
      to.resize(std::size_t(K) * std::size_t(columns) * std::size_t(C));
      std::size_t at = 0;
      std::int64_t first = 0;
      for (int r = 0; r < comm.size(); ++r) {
        std::int64_t const n = communicator::partition_of(r, comm.size(), C).count;
        for (std::int64_t k = 0; k < K; ++k)
          for (int d = 0; d < columns; ++d) {
            std::copy_n(all.begin() + std::ptrdiff_t(at), n, to.begin() + std::ptrdiff_t((k * columns + d) * C + first));
            at += std::size_t(n);
          }
        first += n;
      }
    };
    place(mine.samples_, D, g.samples_);
    place(mine.stats_, int(mine.stat_columns_.size()), g.stats_);
    if (comm.rank() == root) g.stat_columns_ = mine.stat_columns_;  // where the statistics are
  }
  return g;
}

/// `result::summary()` over every rank's chains, on every rank: the same table as one process
/// would print for all chains, bit for bit. Each dimension's draws go to one rank (dimension d
/// to rank d mod ranks), which computes its row; no rank holds all draws.
namespace detail {
// The per-chain acceptance rates of `o` as every chain's: none on any rank (nullopt), each rank's
// own chains' (gathered) or every chain's on every rank (kept); refused on every rank otherwise.
// One Allreduce, so that every rank takes the same branch.
inline std::optional<std::vector<double>> every_chain_rates(summary_options const& o, std::int64_t mine, std::int64_t total,
                                                            communicator const& comm) {
  std::size_t const n = o.chain_acceptance.size();
  std::int64_t said[3] = {n > 0, std::int64_t(n) == mine, std::int64_t(n) == total};
  comm.sum(said, 3);
  if (said[0] == 0) return std::nullopt;
  if (said[1] == comm.size()) return comm.all_gather(o.chain_acceptance);
  if (said[2] == comm.size()) return std::vector<double>(o.chain_acceptance.begin(), o.chain_acceptance.end());
  throw std::invalid_argument("ember::mpi: summary_options::chain_acceptance must hold each rank's own chains' rates on "
                              "every rank, or every chain's on every rank");
}
}  // namespace detail

template <class T, int D>
summary_table summarize(result<T, D> const& mine, communicator const& comm, summary_options o = {}) {
  auto const g = gather(mine, comm);  // everything but the draws
  std::vector<double> rates;
  if (std::isnan(o.target_acceptance)) {
    o.target_acceptance = g.target_acceptance_;
    o.harmonic_target = g.harmonic_target_;
  }
  if (auto given = detail::every_chain_rates(o, mine.chains(), g.chains_, comm)) {  // the caller's
    rates = std::move(*given);
    o.chain_acceptance = rates;
  } else if (g.kept_transitions_ > 0 && std::int64_t(g.accepted_.size()) == g.chains_) {  // as result::summary()
    rates.resize(g.accepted_.size());
    for (std::size_t c = 0; c < rates.size(); ++c) rates[c] = double(g.accepted_[c]) / double(g.kept_transitions_);
    o.chain_acceptance = rates;
  }
  if (mine.samples_.empty() || g.kept_ == 0) return ember::summarize(g, o);  // no draws: over final states
  std::vector<std::int64_t> live;
  summary_table s = ember::detail::summary_head(g, o, live);
  s.from_draws = true;
  auto const M = std::int64_t(live.size());
  std::int64_t const K = g.kept_;
  s.draws = M * 2 * (K / 2);
  if (M < 1 || K < 4) return s;
  int const R = comm.size(), me = comm.rank();
  std::int64_t const Cm = mine.chains();
  // Each dimension's column, chain by chain, to its rank; that rank's rows to everyone.
  std::vector<double> rows;  // (d, 10 numbers) per dimension of this rank
  ember::detail::diagnose_workspace w;
  std::vector<T> column(std::size_t(Cm * K));
  for (int d = 0; d < D; ++d) {
    for (std::int64_t c = 0; c < Cm; ++c)
      for (std::int64_t k = 0; k < K; ++k) column[std::size_t(c * K + k)] = mine.samples_[std::size_t((k * D + d) * Cm + c)];
    auto const all = comm.gather(std::span<T const>(column), d % R);
    if (d % R != me) continue;
    convergence const c = ember::detail::diagnose(
        [&](std::int64_t j, std::int64_t k) { return all[std::size_t(live[std::size_t(j)] * K + k)]; }, M, K, w);
    auto const row = ember::detail::summary_row(c);
    rows.insert(rows.end(), {double(d), row.mean, row.sd, row.mcse, row.ess, row.ess_tail, row.ess_sq, row.ess_mean, row.rhat,
                             row.rhat_bulk, row.rhat_folded});
  }
  auto const every = comm.all_gather(std::span<double const>(rows));
  for (std::size_t i = 0; i + 11 <= every.size(); i += 11)
    s.dims[std::size_t(every[i])] = {every[i + 1], every[i + 2], every[i + 3], every[i + 4], every[i + 5],
                                     every[i + 6], every[i + 7], every[i + 8], every[i + 9], every[i + 10]};
  // Chains apart: each live chain's mean and sd per dimension, from the rank that holds it.
  if (M >= 3 && K >= 2) {
    auto const at = [&](std::int64_t k, std::int64_t c, int d) { return mine.samples_[std::size_t((k * D + d) * Cm + c)]; };
    std::vector<double> moments;  // per live chain of this rank: D × (mean, sd)
    for (std::int64_t c = 0; c < Cm; ++c) {
      if (mine.frozen_[std::size_t(c)]) continue;
      for (int d = 0; d < D; ++d) {
        auto const [m, sd] = ember::detail::chain_mean_sd(at, c, d, K);
        moments.push_back(m);
        moments.push_back(sd);
      }
    }
    auto const table = comm.all_gather(std::span<double const>(moments));  // live chains in chain order
    ember::detail::chains_apart_from(s, std::size_t(M), [&](std::size_t j, int d) {
      return std::pair<double, double>{table[(j * D + std::size_t(d)) * 2], table[(j * D + std::size_t(d)) * 2 + 1]};
    });
  }
  return s;
}

/// How `save_npz` writes a run over ranks.
enum class npz_layout {
  gathered,  ///< one file, written by rank 0 with every chain (`gather` to rank 0: it must fit there)
  per_rank   ///< one file per rank, `<stem>.rank<r>-of-<R>.npz`, each its rank's chains
};

/// The file of rank r of R for `path` in the per-rank layout: "run.npz" → "run.rank1-of-4.npz".
inline std::string rank_path(std::string const& path, int r, int R) {
  std::filesystem::path p(path);
  std::string const stem = p.extension() == ".npz" ? p.stem().string() : p.filename().string();
  return (p.parent_path() / (stem + ".rank" + std::to_string(r) + "-of-" + std::to_string(R) + ".npz")).string();
}

/// Writes a run over ranks as .npz (io/save_npz.hpp's arrays). Gathered: rank 0 writes `path`
/// with every chain. Per rank: each rank writes its own chains to `rank_path(path, r, R)`, with
/// `chain_offset` (its first chain's global index), `total_chains`, `rank` and `ranks` added, and
/// the run's totals (acceptance rate, divergent and truncated transitions, gradients, seconds:
/// the slowest rank's) and summary arrays (`summary_*`, `mpi::summarize`) of every chain, the
/// same in every file. The merge: concatenate the per-chain arrays (draws, posterior.*,
/// final_states, divergent, diverged_at, chain_acceptance) along the chain axis in rank order;
/// every other array is the run's, the same in each file; `ember_arviz.load` takes the list of
/// files and does this. Collective: every rank calls it.
template <class T, int D>
void save_npz(result<T, D> const& mine, std::string const& path, communicator const& comm,
              npz_layout layout = npz_layout::gathered, summary_options const& o = {}) {
  if (layout == npz_layout::gathered) {
    auto const g = gather(mine, comm, 0);
    summary_options every = o;
    std::vector<double> rates;
    if (auto given = detail::every_chain_rates(o, mine.chains(), g.chains_, comm)) {
      rates = std::move(*given);
      every.chain_acceptance = rates;
    }
    collectively(comm, [&] {
      if (comm.rank() == 0) ember::save_npz(g, path, every);
    });
    return;
  }
  auto const s = summarize(mine, comm, o);
  auto const totals = gather(mine, comm);  // the run's totals, written in every rank's file
  auto const range = [&] {
    std::int64_t first = 0, n = mine.chains();
    auto const all = comm.all_gather(std::span<std::int64_t const>(&n, 1));
    for (int r = 0; r < comm.rank(); ++r) first += all[std::size_t(r)];
    return chain_range{first, n, std::accumulate(all.begin(), all.end(), std::int64_t(0))};
  }();
  collectively(comm, [&] {
    ember::detail::save_npz_with(mine, totals, rank_path(path, comm.rank(), comm.size()), o, s, [&](npz_writer& z) {
      z.add_scalar("chain_offset", std::int64_t(range.first));
      z.add_scalar("total_chains", std::int64_t(range.total));
      z.add_scalar("rank", std::int64_t(comm.rank()));
      z.add_scalar("ranks", std::int64_t(comm.size()));
    });
  });
}

/// A rank's checkpoint file of a save at transition t: "rank1-of-4.t1500.ckpt".
inline std::string checkpoint_file(int r, int R, std::int64_t t) {
  return "rank" + std::to_string(r) + "-of-" + std::to_string(R) + ".t" + std::to_string(t) + ".ckpt";
}

/// A run's checkpoint over ranks: rank r writes `dir/rank<r>-of-<R>.t<transition>.ckpt`
/// (run::save: a temporary file renamed), the ranks agree that every file is written, and only
/// then rank 0 writes `dir/manifest` (atomically): the rank count, the chain count, the
/// transition and each rank's file and chain range. After it, each rank removes its files of
/// earlier saves. A failure on any rank, or a job killed in the middle, throws on every rank or
/// stops it and leaves the previous manifest and the files it names: `mpi::load` resumes the
/// previous save. Collective.
template <class Run>
void save(Run const& run, std::string const& dir, communicator const& comm) {
  int const r = comm.rank(), R = comm.size();
  std::string const file = checkpoint_file(r, R, run.transitions());
  collectively(comm, [&] {
    std::filesystem::create_directories(dir);
    run.save((std::filesystem::path(dir) / file).string());
  });
  auto const range = run.range();
  std::int64_t mine[3] = {range.first, range.count, run.transitions()};
  auto const all = comm.all_gather(std::span<std::int64_t const>(mine, 3));
  collectively(comm, [&] {
    if (r != 0) return;
    std::ostringstream m;
    m << "ember-mpi-checkpoint 2\nranks " << R << "\nchains " << range.total << "\ntransitions " << run.transitions() << "\n";
    for (int q = 0; q < R; ++q)
      m << "rank " << q << " " << checkpoint_file(q, R, all[std::size_t(3 * q + 2)]) << " " << all[std::size_t(3 * q)] << " "
        << all[std::size_t(3 * q + 1)] << " " << all[std::size_t(3 * q + 2)] << "\n";
    ember::detail::write_file_atomically((std::filesystem::path(dir) / "manifest").string(), m.str());
  });
  // The manifest names this save's files: the earlier saves' of this rank can go.
  std::string const prefix = "rank" + std::to_string(r) + "-of-" + std::to_string(R) + ".t";
  std::error_code ignored;
  for (auto const& e : std::filesystem::directory_iterator(dir, ignored)) {
    std::string const name = e.path().filename().string();
    if (name != file && name.rfind(prefix, 0) == 0 && name.size() > 5 && name.substr(name.size() - 5) == ".ckpt")
      std::filesystem::remove(e.path(), ignored);
  }
}

/// The run saved by `mpi::save` in `dir`, continued on the same number of ranks (refused, on
/// every rank with one sentence, for another rank count, a missing or mismatched rank file, or a
/// manifest that does not match the files). Collective.
template <class P, class Inner>
auto load(P const& pipe, std::string const& dir, backend::mpi<Inner> const& be) {
  using run_type = ember::run<decltype(as_pipeline(pipe)), backend::mpi<Inner>>;
  auto const& comm = be.comm;
  int const r = comm.rank(), R = comm.size();
  std::string const manifest = (std::filesystem::path(dir) / "manifest").string();
  std::int64_t chains = 0, transitions = 0;
  std::string file;
  collectively(comm, [&] {
    std::ifstream in(manifest);
    if (!in) throw std::runtime_error("ember::mpi::load: " + manifest + " is missing (no checkpoint was finished in " + dir + ")");
    std::string word;
    int version = 0, ranks = 0;
    in >> word >> version;
    if (word != "ember-mpi-checkpoint" || version != 2) throw std::runtime_error("ember::mpi::load: " + manifest + " is not an ember MPI checkpoint manifest");
    in >> word >> ranks >> word >> chains >> word >> transitions;
    if (!in) throw std::runtime_error("ember::mpi::load: " + manifest + " is corrupt");
    if (ranks != R)
      throw std::runtime_error("ember::mpi::load: " + dir + " was saved by " + std::to_string(ranks) + " ranks and this job has " +
                               std::to_string(R) + ": resume with " + std::to_string(ranks) +
                               " ranks (each rank's file holds its own range of the chains)");
    for (int q = 0; q <= r; ++q) {
      int rank = -1;
      std::int64_t first = 0, count = 0, t = 0;
      in >> word >> rank >> file >> first >> count >> t;
      if (!in || rank != q) throw std::runtime_error("ember::mpi::load: " + manifest + " is corrupt (rank " + std::to_string(q) + ")");
      if (q == r) {
        auto const want = communicator::partition_of(r, R, chains);
        if (first != want.first || count != want.count || t != transitions)
          throw std::runtime_error("ember::mpi::load: " + manifest + " says rank " + std::to_string(r) +
                                   " holds other chains or another transition than this job would (a manifest from another run?)");
        file = (std::filesystem::path(dir) / file).string();
        if (!std::filesystem::exists(file))
          throw std::runtime_error("ember::mpi::load: rank " + std::to_string(r) + "'s file " + file + " is missing");
      }
    }
  });
  // run::load on each rank alone (from a checkpoint nothing in it is collective); a bad file
  // throws on its rank, and the ranks agree before anything else is.
  std::string error;
  std::optional<run_type> out;
  try {
    out.emplace(run_type::load(pipe, file, be));
    if (out->range().total != chains)
      throw std::runtime_error("ember::mpi::load: " + file + " holds a run of " + std::to_string(out->range().total) +
                               " chains but the manifest says " + std::to_string(chains) + " (a file from another run)");
    if (out->transitions() != transitions)
      throw std::runtime_error("ember::mpi::load: " + file + " is at transition " + std::to_string(out->transitions()) +
                               " but the manifest says " + std::to_string(transitions) + " (a file from another save)");
  } catch (std::exception const& e) {
    error = *e.what() ? e.what() : "an exception without a message";
  }
  comm.agree_or_throw(error);
  out->rejoin();  // the tuned kernel from every rank's chains
  return std::move(*out);
}

/// The `main` of a benchmark matrix over MPI ranks (`ember_add_benchmark_matrix(... MPI)`):
/// `benchmark::drive` with configuration j on rank j mod ranks, and rank 0 writing every
/// configuration's JSON lines and the table in configuration order. MPI_Init to MPI_Finalize.
inline int drive(int argc, char** argv, char const* times_dir, double cpu_budget_s, double cuda_budget_s,
                 std::initializer_list<std::pair<char const*, benchmark::configuration_fn>> configurations) {
  environment env(argc, argv);
  communicator comm;
  benchmark::matrix_share share{comm.rank(), comm.size(), [&](std::string const& mine) {
                                  // Each rank's records are self-delimiting: one blob of all of them, in rank order.
                                  auto const all = comm.gather(std::span<char const>(mine.data(), mine.size()), 0);
                                  return std::vector<std::string>{std::string(all.begin(), all.end())};
                                }};
  return benchmark::drive(argc, argv, times_dir, cpu_budget_s, cuda_budget_s, configurations, share);
}

}  // namespace mpi

}  // namespace ember
