#pragma once
/// \file
/// `ember::run<P, Backend>`: a run as a value. `start(pipe, options, backend)` creates the chains'
/// state (positions, energies, gradients, per-chain counters, the adaptation state, the
/// transition counter and the stream key); `advance(n)` moves every chain n transitions further
/// along the pipeline's schedule (warm-up, burn-in, kept steps); `result()` gives the draws and
/// diagnostics so far; `save(path)` and `load(pipe, path, backend)` checkpoint it.
///
/// A run advances in chunks. A chunk is the fused per-chain loop (pipeline/fused_loop.hpp) over a
/// stretch of transitions, with the chain's state in registers; between chunks it is in the
/// backend's memory. Warm-up chunks are one transition long, because pooled adaptation needs
/// every chain's statistics before the next transition; later chunks grow until one takes about
/// half a second, for progress reports. Every decision inside a chunk depends on the global
/// transition index only, so a run split into any number of pieces (by `advance` calls, chunk
/// sizes, checkpoints) gives bitwise the same draws as the same run in one piece.
///
/// The pieces: the stream key (run/stream_key.hpp), the progress line (run/progress.hpp), the
/// checkpoint (run/checkpoint.hpp). A run includes no backend: `Backend` is a policy
/// (`backend::cpu` from ember.hpp, `backend::cuda` from ember/cuda.cuh) whose `storage<P>` holds
/// the chains (docs/design.md, "Backends").

#include <ember/adapt/warmup.hpp>
#include <ember/backend/concept.hpp>
#include <ember/backend/detail/chain_arrays.hpp>
#include <ember/backend/detail/host_memory.hpp>
#include <ember/core/concepts.hpp>
#include <ember/detail/kernel_diagnosis.hpp>
#include <ember/energy/for_each_view.hpp>
#include <ember/host_cache.hpp>
#include <ember/pipeline/fused_loop.hpp>
#include <ember/pipeline/pipeline.hpp>
#include <ember/result.hpp>
#include <ember/run/checkpoint.hpp>
#include <ember/run/group.hpp>
#include <ember/run/progress.hpp>
#include <ember/run/stream_key.hpp>
#include <ember/sample_options.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace ember {

namespace backend {
struct cpu;  // the default backend of `start` and `sample` (backend/cpu.hpp, which ember.hpp includes)
}  // namespace backend

template <class P, class Backend>
class run {
 public:
  using pipeline_type = P;
  using backend_type = Backend;
  using kernel_type = typename P::kernel_type;
  using value_type = typename P::value_type;
  using T = value_type;
  static constexpr int dim = P::dim;
  static constexpr int D = dim;
  /// Values the recording keeps per kept draw and chain (draws and statistics, pipeline.hpp).
  static constexpr int R = P::recorded_columns;
  using state_type = decltype(std::declval<kernel_type const&>().init(vec<T, D>{}));
  using options_type = sample_options<T, D>;

  run(P const& pipe, options_type const& opt, Backend const& backend)
      : pipe_(pipe), backend_(backend), group_(detail::group_of(backend)), range_(group_.partition(opt.chains)),
        chains_(range_.count), seed_(opt.seed), key_(detail::stream_key<T, D>(opt.seed, opt.init)),
        sched_(pipe.make_schedule()), windows_(sched_.warmup), warm_(pipe.kernel, pipe.warmup, opt.chains, range_.count),
        kernel_(warm_.frozen()), show_progress_(opt.progress && group_.rank() == 0), on_progress_(opt.on_progress) {
    // Refusals every process makes alike, and one it may make alone (memory): agreed, so that no
    // process goes on to a collective call the others never make.
    group_.agree(detail::failure_of([&] { validate_start(opt); }));
    validate_schedule();
    backend_.check(pipe_);
    storage_ = typename Backend::template storage<P>(backend_, opt.chains);
    storage_.init(sched_.warmup > 0 ? warm_.kernel_at(0) : kernel_, key_, opt.init);
  }

  /// Moves every chain `n` transitions further along the schedule. Throws before any work for
  /// n < 0 or a run that would pass 2³² − 1 transitions; an exception from the energy (or any
  /// other failure inside a chunk) leaves the run as it was after its last completed chunk.
  void advance(std::int64_t n) {
    if (n < 0) throw std::invalid_argument("ember::run::advance: the number of transitions must be non-negative, got " + std::to_string(n));
    if (t_ + n >= std::int64_t(std::numeric_limits<std::uint32_t>::max()))
      throw std::invalid_argument("ember::run::advance: a run makes fewer than 2^32 - 1 transitions (a step index is 32 bits); " +
                                  std::to_string(t_) + " done and " + std::to_string(n) + " asked");
    if (sched_.warmup == 0 || t_ >= sched_.warmup) kernel_.validate();
    std::int64_t const kept_after = sched_.kept_before(t_ + n);
    // Memory is a process's own (agreed where the chains are shared out, run/group.hpp).
    group_.agree(detail::failure_of([&] {
      if (P::recording)
        // The whole run: the chains' two state buffers and the recording (a result splits it
        // into draws and statistics: at most twice the recording at the end).
        detail::require_host_memory((long double)kept_after * R * chains_ * sizeof(T) * (P::records && P::records_stats ? 2 : 1) +
                                        state_bytes(chains_),
                                    "ember::sample",
                                    detail::with_commas((long double)kept_after) + " kept draws x " + recorded_columns_text() +
                                        " x " + detail::with_commas((long double)chains_) + " chains recorded, and the chains' state",
                                    "thin more, run fewer chains, or track moments instead of recording");
      if constexpr (P::recording) {
        // Room for the whole advance now, so that no chunk regrows (and copies) the draws; at
        // least doubling, so that many short advances copy each draw a bounded number of times.
        std::size_t const need = std::size_t(kept_after) * R * std::size_t(chains_);
        if (need > samples_.capacity()) samples_.reserve(std::max(need, 2 * samples_.capacity()));
      }
    }));
    auto const t_begin = t_;
    auto const clock0 = std::chrono::steady_clock::now();
    // The call's time is added however it ends: a progress hook that throws between chunks (a
    // Python Ctrl-C) leaves the chunks made so far, and their warm-up seconds, in the run.
    struct add_seconds {
      double& s;
      std::chrono::steady_clock::time_point t0;
      ~add_seconds() { s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
    } const timing{seconds_, clock0};
    bool printed = false;
    std::int64_t len = 256;
    while (t_ < t_begin + n) {
      std::int64_t const end = t_begin + n;
      bool const warming = t_ < sched_.warmup;
      chunk ch{t_, 0, sched_.keep_from(), sched_.warmup, sched_.thin, key_};
      ch.end = warming ? t_ + 1 : std::min({end, t_ + len, t_ + max_chunk_for(kernel_)});
      auto const c0 = std::chrono::steady_clock::now();
      if (warming) {
        kernel_type const k = warm_.kernel_at(t_);
        if (t_ == 0 || !std::isfinite(double(k.step_size))) k.validate();
        run_chunk(k, ch, std::integral_constant<observe, decltype(warm_)::observes>{});
        // The adapters' reductions run where the arrays live; per-chain adapters run on the host
        // (a GPU run then copies the arrays both ways).
        warm_.update(
            t_, k, windows_, storage_.view(), [&](auto const& f, double* out) { storage_.reduce(f, out); },
            [&]() -> auto& { return storage_.host_mutable(); }, [&] { storage_.upload(); });
        t_ = ch.end;
        // Chains that never moved are restarted from moving chains' states: at the end of the
        // init buffer and of each metric window (see rescue_stuck_chains).
        if (t_ == 1 || (windows_.first > 0 && t_ == windows_.first) || windows_.closes(t_ - 1)) rescue_stuck_chains();
        warmup_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
        if (t_ == sched_.warmup) {
          detail::reassign(kernel_, warm_.frozen(gather_states()));
          kernel_.validate();
          warmup_gradients_ = total_gradients();
        }
      } else {
        if (!measure_pace(ch)) run_chunk(kernel_, ch, std::integral_constant<observe, observe::nothing>{});
        t_ = ch.end;
        // Processes sharing the chains (run/group.hpp) agree on the next chunk's length: the slowest's.
        double const dt = group_.max(std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count());
        // Chunks of about half a second: a progress line twice a second, and chunking's own cost
        // (a load and a store of every chain's state) far below 1 %.
        double const grow = dt > 0 ? 0.5 / dt : 8.0;
        len = std::clamp<std::int64_t>(std::int64_t(double(ch.end - ch.begin) * std::clamp(grow, 0.5, 8.0)), 1, max_chunk);
      }
      double const elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - clock0).count();
      bool const want_line = show_progress_ && (printed || elapsed > 0.5) && detail::stderr_is_terminal();
      if (on_progress_ || want_line) {
        progress_report r = progress(t_ - t_begin, n, elapsed);
        // Shown only when the run will take more than about two seconds.
        if (want_line && (printed || elapsed + r.seconds_left > 2)) {
          detail::print_progress(r, t_ == t_begin + n);
          printed = true;
        }
        if (on_progress_) on_progress_(r);
      }
    }
  }

  /// Transitions made so far (warm-up and burn-in included).
  std::int64_t transitions() const { return t_; }
  /// The chains this process runs (all of them, unless shared out over processes: run/group.hpp).
  std::int64_t chains() const { return chains_; }
  /// Which of the run's chains those are.
  chain_range range() const { return range_; }
  ember::schedule const& schedule() const { return sched_; }
  /// Where progress reports go from the next chunk on, and whether the default line is shown
  /// (`sample_options::on_progress` and `progress` at the start; a loaded run has neither until
  /// this is called).
  void on_progress(std::function<void(progress_report const&)> f, bool line) {
    on_progress_ = std::move(f);
    show_progress_ = line;
  }
  /// The kernel the next transition uses (tuned, after warm-up).
  kernel_type kernel() const { return t_ < sched_.warmup ? warm_.kernel_at(t_) : kernel_; }
  /// The adapted parameters (what `kernel()` holds, in plain numbers).
  adaptation_report adapted() const {
    adaptation_report a;
    auto const k = kernel();
    a.step_size = double(k.step_size);
    if constexpr (requires { k.trajectory_length; }) a.trajectory_length = double(k.trajectory_length);
    if constexpr (requires { k.integrator_steps; }) a.integrator_steps = k.integrator_steps;
    a.restarted_chains = restarted_chains_;
    if (restarted_chains_ > 0) {
      char b[300];
      std::snprintf(b, sizeof b,
                    "NOTE: %lld times in warm-up a chain that had not moved since the last look was restarted "
                    "from the state of a chain that had (a start where no proposal is accepted); warm-up draws "
                    "are discarded, and the kept draws come from the tuned kernel.",
                    (long long)restarted_chains_);
      a.warnings.emplace_back(b);
    }
    a.restarted_high_energy_chains = restarted_high_;
    if (restarted_high_ > 0) {
      char b[400];
      std::snprintf(b, sizeof b,
                    "NOTE: %lld times in warm-up a chain settled with its energy more than 20 x %d above the lowest "
                    "quarter of the chains' was restarted from the state of a chain below that (a local mode such as a "
                    "mixture's merged components: a region there holds under e^-%d of the mass unless it is 5e8 times "
                    "wider in every direction); the kept draws come from the tuned kernel.",
                    (long long)restarted_high_, D, 20 * D);
      a.warnings.emplace_back(b);
    }
    // The adapters' own words (ChEES's trajectory length pressing on a bound, adapt/chees.hpp).
    auto notes = warm_.notes(k, t_ >= sched_.warmup);
    for (auto& w : notes.warnings) a.warnings.push_back(std::move(w));
    if constexpr (requires { state_type::step_size_slot; }) {  // step_size(per_chain)
      auto const& h = storage_.host();
      T const* eps = h.slots.data() + std::int64_t(state_type::step_size_slot) * h.stride;
      a.step_sizes.assign(eps, eps + chains_);
    }
    if constexpr (requires { k.metric.dense; }) {  // auto_mass(): the one it chose
      a.dense_metric = k.metric.dense != 0;
      if (k.metric.dense)
        for (auto v : k.metric.full.lower) a.metric_scale.push_back(double(v));
      else
        for (int i = 0; i < D; ++i) a.metric_scale.push_back(double(k.metric.diagonal.scale[i]));
    } else if constexpr (requires { k.metric.scale[0]; }) {
      for (int i = 0; i < D; ++i) a.metric_scale.push_back(double(k.metric.scale[i]));
    } else if constexpr (requires { k.metric.lower[0]; }) {
      a.dense_metric = true;
      for (auto v : k.metric.lower) a.metric_scale.push_back(double(v));
    } else if constexpr (requires { k.metric.scale; }) {
      a.metric_scale.push_back(double(k.metric.scale));
    }
    return a;
  }

  /// Tells the run that its energy changed in place between `advance` calls (a neural energy's
  /// weights updated by a trainer, data changed under a view): every live chain's cached energy,
  /// and its gradient where the state keeps one, is recomputed at its position, so the next
  /// transition's accept test and gradient step use the energy as it is now (without this call,
  /// each chain's first transition after the change would use the old values: a Metropolis test
  /// against the old energy, a Langevin step along the old gradient). Positions and everything
  /// else (momenta, step sizes, adaptation, counters, draws) are kept. One evaluation per chain,
  /// on the host, one chain at a time. A run whose energy reads device memory (a CUDA run's
  /// copies) is refused: change the device copy and start a run from the final states instead.
  void energy_changed() {
    auto k = kernel();
    std::int64_t device_views = 0;
    for_each_view(k, [&](auto& v) { device_views += v.space == memory_space::device; });
    if (device_views > 0)
      throw std::logic_error("ember::run::energy_changed: the energy reads device memory, which the host cannot evaluate; start "
                             "a run from the final states (.init) instead");
    auto const& U = k.energy;
    (void)storage_.host();  // a run not yet advanced draws its default starts here, before they are read
    auto& a = storage_.host_mutable();
    std::size_t const C = std::size_t(chains_), S = std::size_t(a.stride);
    for (std::size_t c = 0; c < C; ++c) {
      if (a.frozen[c]) continue;
      state_type st;
      for (std::size_t i = 0; i < std::size_t(state_type::slots); ++i) st.slot(int(i)) = a.slots[i * S + c];
      if constexpr (requires { st.grad; })
        st.energy = U.value_and_grad(st.x, st.grad);
      else
        st.energy = U.value(st.x);
      for (std::size_t i = 0; i < std::size_t(state_type::slots); ++i) a.slots[i * S + c] = st.slot(int(i));
    }
    energy_snapshot_.clear();  // warm-up's stuck-chain look compares energies under one energy
    storage_.upload();
  }

  /// After each process loaded its part of a checkpoint on its own (ember::mpi::load), makes
  /// again from every process's chains what depends on all of them: the tuned kernel after
  /// warm-up (step_size(per_chain)'s median step size). Collective; one process's run is unchanged.
  void rejoin() {
    if (sched_.warmup > 0 && t_ >= sched_.warmup) detail::reassign(kernel_, warm_.frozen(gather_states()));
  }

  /// The draws and diagnostics of the run so far.
  ember::result<T, D> result() const& { return make_result(samples_); }
  ember::result<T, D> result() && { return make_result(std::move(samples_)); }

  /// Writes the whole run state to `path` (run/checkpoint.hpp; docs/tuning.md says what a
  /// checkpoint holds).
  void save(std::string const& path) const { detail::run_checkpoint::save(*this, path); }
  /// A run continued from a checkpoint written by `save` for the same pipeline type.
  static run load(P const& pipe, std::string const& path, Backend const& backend = {}) {
    return detail::run_checkpoint::load<run>(pipe, path, backend);
  }

 private:
  friend struct detail::run_checkpoint;
  /// A kernel whose lanes may run at their own pace (NUTS's `own_pace`) and that was not told
  /// which: the first sampling chunk of at least 64 transitions runs up to 64 transitions in
  /// lock-step and as many at own pace, each timed, and the kernel keeps the way that made more
  /// gradients a second for the rest. Both give the same draws and counts, so the choice moves
  /// only the time; a run that tracks statistics is not measured (own pace adds their terms in other groups of
  /// lanes, equal to rounding) and stays in lock-step. Returns whether it ran `ch`.
  bool measure_pace(chunk const& ch) {
    if constexpr (requires { kernel_.measure_pace; kernel_.own_pace; } && P::track_stride == 0 &&
                  std::is_same_v<decltype(kernel_.init(vec<T, D>{})), chain_state<T, D>>) {
      if (!kernel_.measure_pace || pace_measured_ || ch.end - ch.begin < 64) return false;
      // Two probes of at most 64 transitions (the slower loop costs a target whose gradient is
      // cheap up to 2× on these), then the rest of the chunk the faster way.
      std::int64_t const m = std::min<std::int64_t>(64, (ch.end - ch.begin) / 2);
      chunk pieces[3] = {ch, ch, ch};
      pieces[0].end = pieces[1].begin = ch.begin + m;
      pieces[1].end = pieces[2].begin = ch.begin + 2 * m;
      double rate[2];
      for (int own = 0; own < 2; ++own) {
        kernel_type k = kernel_;
        k.own_pace = own == 1;
        std::int64_t const g0 = total_gradients();
        auto const c0 = std::chrono::steady_clock::now();
        run_chunk(k, pieces[own], std::integral_constant<observe, observe::nothing>{});
        t_ = pieces[own].end;  // each probe a chunk of its own: a failure in the second keeps the first
        double const dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
        rate[own] = dt > 0 ? double(total_gradients() - g0) / dt : 0;
      }
      group_.sum(rate, 2);  // every process's rates: they choose alike
      kernel_.own_pace = rate[1] > rate[0];
      pace_measured_ = true;
      if (pieces[2].begin < pieces[2].end) {
        run_chunk(kernel_, pieces[2], std::integral_constant<observe, observe::nothing>{});
        t_ = pieces[2].end;
      }
      return true;
    } else {
      (void)ch;
      return false;
    }
  }

  template <class K, observe Mode>
  void run_chunk(K const& k, chunk const& ch, std::integral_constant<observe, Mode>) {
    std::int64_t const k0 = sched_.kept_before(ch.begin), k1 = sched_.kept_before(ch.end);
    std::size_t const old_size = samples_.size();
    if constexpr (P::recording) samples_.resize(std::size_t(k1) * R * std::size_t(chains_));
    try {
      auto out = storage_.template advance<Mode>(k, ch, samples_.data(), k0, k1, pipe_.tracked);
      track_.insert(track_.end(), out.track.begin(), out.track.end());
    } catch (...) {
      samples_.resize(old_size);  // the chunk's draws never happened
      throw;
    }
  }

  progress_report progress(std::int64_t done, std::int64_t total, double elapsed) const {
    progress_report r;
    r.done = done;
    r.total = total;
    r.transition = t_;
    r.warming_up = t_ < sched_.warmup;
    r.seconds = elapsed;
    r.seconds_left = done > 0 ? elapsed * double(total - done) / double(done) : 0;
    auto const& a = counters();
    std::int64_t acc = 0, live = 0;
    for (std::int64_t c = 0; c < chains_; ++c) {
      r.divergent_transitions += a.divergent[std::size_t(c)];
      if (a.frozen[std::size_t(c)]) {
        ++r.divergent_chains;
      } else {
        acc += a.accepted[std::size_t(c)];
        ++live;
      }
    }
    std::int64_t const kept_phase = std::max<std::int64_t>(0, t_ - sched_.keep_from());
    r.acceptance = live > 0 && kept_phase > 0 ? double(acc) / (double(live) * double(kept_phase)) : 0;
    return r;
  }

  // What a kept draw records, in words: "2 dimensions", "2 dimensions and 6 statistics".
  static std::string recorded_columns_text() {
    std::string s = P::records ? std::to_string(D) + " dimensions" : "";
    if (P::records_stats) s += (P::records ? " and " : "") + std::to_string(P::stat_count) + " statistics";
    return s;
  }
  // The recording (R columns a draw: its coordinates, then its statistics) into the result's
  // draws and statistics: copied from it where it holds both, else moved (or copied) whole.
  template <class Buffer>
  static void split_recording(Buffer&& rec, ember::result<T, D>& out) {
    if constexpr (P::records_stats) {
      for (int j = 0; j < P::stat_count; ++j) out.stat_columns_.push_back(P::stat_at(j));
      if constexpr (P::records) {
        auto const c = std::size_t(out.chains_);
        std::size_t const kept = rec.size() / (std::size_t(R) * c);
        out.samples_.resize(kept * D * c);
        out.stats_.resize(kept * std::size_t(P::stat_count) * c);
        for (std::size_t k = 0; k < kept; ++k) {
          T const* from = rec.data() + k * R * c;
          std::copy_n(from, D * c, out.samples_.data() + k * D * c);
          std::copy_n(from + D * c, P::stat_count * c, out.stats_.data() + k * P::stat_count * c);
        }
      } else {
        out.stats_ = std::forward<Buffer>(rec);
      }
    } else {
      out.samples_ = std::forward<Buffer>(rec);
    }
  }

  template <class Buffer>
  ember::result<T, D> make_result(Buffer&& recording) const {
    ember::result<T, D> out;
    out.chains_ = chains_;
    out.kept_ = sched_.kept_before(t_);
    out.kept_transitions_ = std::max<std::int64_t>(0, t_ - sched_.keep_from());
    split_recording(std::forward<Buffer>(recording), out);
    auto const n = std::size_t(chains_);
    out.final_.resize(std::size_t(D) * n);
    out.frozen_.resize(n);
    out.diverged_at_.resize(n);
    out.accepted_.resize(n);
    // From the backend's committed arrays (a GPU's device memory, with no host copy in between).
    double const div = double(
        storage_.copy_out(out.final_.data(), out.frozen_.data(), out.diverged_at_.data(), out.accepted_.data()));
    double acc = 0;
    for (std::size_t c = 0; c < n; ++c)
      if (!out.frozen_[c]) acc += double(out.accepted_[c]);
    {
      auto const& a = counters();
      std::int64_t const all = total_gradients();
      out.warmup_gradients_ = t_ >= sched_.warmup ? warmup_gradients_ : all;
      out.gradients_ = all - out.warmup_gradients_;
      out.truncated_transitions_ = std::accumulate(a.truncated.begin(), a.truncated.begin() + chains_, std::int64_t(0));
    }
    out.seconds_ = seconds_;
    out.warmup_seconds_ = warmup_seconds_;
    out.adapted_ = adapted();
    // An unadjusted kernel accepts everything: its target (a would-be acceptance that only a
    // warm-up reads, kernel/underdamped_langevin.hpp) is no acceptance rate to report.
    // NUTS's accepted count is of transitions that moved, no rate to hold against its target.
    constexpr bool adjusted = !requires { kernel_type::unadjusted; } && !requires { kernel_type::accepted_means_moved; };
    if constexpr (requires { kernel_type::target_acceptance; } && adjusted) out.target_acceptance_ = kernel_type::target_acceptance;
    auto const notes = warm_.notes(kernel(), t_ >= sched_.warmup);
    if (adjusted && notes.target_acceptance > 0) out.target_acceptance_ = notes.target_acceptance;
    out.harmonic_target_ = notes.harmonic;  // ChEES's step size (adapt/step_size.hpp)
    detail::finish_result<P>(out, pipe_.tracked, track_.data(), acc, div);
    return out;
  }

  void validate_start(options_type const& opt) const {
    if (opt.chains <= 0)
      throw std::invalid_argument("ember::sample: the number of chains must be positive, got " + std::to_string(opt.chains));
    if (opt.chains > std::int64_t(std::numeric_limits<std::uint32_t>::max()) - 64)
      throw std::invalid_argument("ember::sample: at most 4,294,967,231 chains (a chain index is 32 bits), got " +
                                  std::to_string(opt.chains));
    if (sched_.warmup == 0) pipe_.kernel.validate();
    if (!opt.init.empty()) {
      if (std::int64_t(opt.init.size()) != opt.chains)
        throw std::invalid_argument("ember::sample: .init has " + std::to_string(opt.init.size()) +
                                    " start states for " + std::to_string(opt.chains) + " chains");
      for (std::size_t c = 0; c < opt.init.size(); ++c)
        for (int d = 0; d < D; ++d)
          if (!std::isfinite(double(opt.init[c][d])))
            throw std::invalid_argument("ember::sample: start state of chain " + std::to_string(c) +
                                        " is not finite (coordinate " + std::to_string(d) + ")");
    }
    detail::require_host_memory(state_bytes(chains_), "ember::sample",
                                "the state of " + detail::with_commas((long double)chains_) + " chains",
                                "run fewer chains");
  }
  // Two buffers of state slots, and the per-chain counters and flags.
  static long double state_bytes(std::int64_t chains) {
    return (long double)chains * (2 * state_type::slots * sizeof(T) + sizeof(T) + 1 + 3 * sizeof(std::int64_t));
  }
  // Warm-up's rescue of chains that never moved (issue 26). A chain started where the gradient
  // is thousands (an unscaled predictor's coefficient, a hierarchical scale far out) rejects
  // every proposal at the step size that suits the others, and a pooled adaptation never shrinks
  // it for that chain: 52 of 64 ChEES chains on posteriordb's kidiq_interaction sat at their start
  // for the whole run. Here, at the end of the init buffer and of each metric window, a live chain
  // whose state has not changed since the last look is restarted from the state (and, with
  // step_size(per_chain), the dual averaging) of a chain that moved, picked by a hash of the
  // stream key, the chain and the transition; its own stream then takes it elsewhere. Warm-up
  // draws are discarded, so the kept draws still come from the tuned kernel; the count is in
  // adapted().restarted_chains and the summary. The first look is after transition 0.
  // With chains shared out over processes (run/group.hpp), each process looks at its own chains;
  // the energies and what each chain did are gathered in chain order, so that every process finds
  // the same bound, the same lists and the same donors, and a donor's state comes from the
  // gathered states of all chains (gathered only when a chain is restarted).
  void rescue_stuck_chains() {
    auto const& h = storage_.host();
    std::size_t const C = std::size_t(chains_), S = std::size_t(h.stride);
    std::int64_t const first = range_.first;

    // Chains settled far above the others in energy (see high_energy_bound): U more than 20·D
    // above the ⌈C/4⌉-th lowest live chain's, and not fallen by more than 4√D since the last
    // look (a chain still on its way in from a far start is left to come in); looked for from
    // the end of the second metric window on.
    std::vector<double> energy(C, NAN);
    for (std::size_t c = 0; c < C; ++c) {
      if (h.frozen[c]) continue;
      state_type st;
      for (std::size_t i = 0; i < std::size_t(state_type::slots); ++i) st.slot(int(i)) = h.slots[i * S + c];
      energy[c] = double(st.energy);
    }
    if (stuck_snapshot_.size() != std::size_t(D) * C) {  // the first look: just remember
      stuck_snapshot_.resize(std::size_t(D) * C);
      for (std::size_t d = 0; d < std::size_t(D); ++d)
        std::copy_n(h.slots.begin() + std::ptrdiff_t(d * S), C, stuck_snapshot_.begin() + std::ptrdiff_t(d * C));
      energy_snapshot_ = energy;
      return;
    }
    double bound = INFINITY;
    {
      // Every process's live chains' energies (a NaN energy as ∞), NaN marking a frozen chain.
      std::vector<double> mine(C, NAN);
      for (std::size_t c = 0; c < C; ++c)
        if (!h.frozen[c]) mine[c] = std::isnan(energy[c]) ? INFINITY : energy[c];
      std::vector<double> live = group_.all_gather(std::span<double const>(mine));
      std::erase_if(live, [](double u) { return std::isnan(u); });
      bound = high_energy_bound(std::move(live));
    }
    // From the second metric window's end on: chains have had the init buffer and a tuned
    // metric to come in.
    bool const energy_look = windows_.ends.size() >= 2 && t_ - 1 >= windows_.ends[1];
    auto const settled_high = [&](std::size_t c) {
      if (!energy_look || !(energy[c] > bound)) return false;
      double const before = energy_snapshot_.size() == C ? energy_snapshot_[c] : INFINITY;
      return !(before - energy[c] > 4 * std::sqrt(double(D)));
    };
    enum : std::uint8_t { is_frozen, is_moved, is_still, is_high };
    std::vector<std::uint8_t> kind(C, is_frozen);
    for (std::size_t c = 0; c < C; ++c) {
      if (h.frozen[c]) continue;
      bool same = true;
      for (std::size_t d = 0; d < std::size_t(D) && same; ++d)
        same = std::memcmp(&h.slots[d * S + c], &stuck_snapshot_[d * C + c], sizeof(T)) == 0;
      kind[c] = same ? is_still : settled_high(c) ? is_high : is_moved;
    }
    std::vector<std::uint8_t> const all = group_.all_gather(std::span<std::uint8_t const>(kind));  // every chain's, in order
    std::vector<std::uint32_t> moved;
    std::int64_t still = 0, high = 0;
    for (std::size_t g = 0; g < all.size(); ++g) {
      if (all[g] == is_moved) moved.push_back(std::uint32_t(g));
      still += all[g] == is_still;
      high += all[g] == is_high;
    }
    if (still + high > 0 && !moved.empty()) {
      // Each restarted chain's donor, from a hash of the key, its global index and the
      // transition: the same on every process. The donors' states come from the processes that
      // hold them, each donor once, in chain order (so in rank order).
      auto const donor_of = [&](std::uint64_t g) {
        return moved[detail::mix64(key_ ^ (g << 32) ^ std::uint64_t(t_)) % moved.size()];
      };
      std::vector<std::uint32_t> donors;
      for (std::size_t g = 0; g < all.size(); ++g)
        if (all[g] == is_still || all[g] == is_high) donors.push_back(donor_of(g));
      std::sort(donors.begin(), donors.end());
      donors.erase(std::unique(donors.begin(), donors.end()), donors.end());
      std::vector<T> held;  // the states of the donors this process holds, slot by slot
      for (auto d : donors)
        if (std::int64_t(d) >= first && std::int64_t(d) < first + std::int64_t(C))
          for (std::size_t i = 0; i < std::size_t(state_type::slots); ++i) held.push_back(h.slots[i * S + (d - std::size_t(first))]);
      auto const states = group_.all_gather(std::span<T const>(held));
      std::vector<std::pair<std::int64_t, std::int64_t>> moves;  // (this process's chain, global donor)
      auto& a = storage_.host_mutable();
      for (std::size_t c = 0; c < C; ++c) {
        if (kind[c] != is_still && kind[c] != is_high) continue;
        std::uint32_t const donor = donor_of(std::uint64_t(first) + c);
        std::size_t const at = std::size_t(std::lower_bound(donors.begin(), donors.end(), donor) - donors.begin());
        for (std::size_t i = 0; i < std::size_t(state_type::slots); ++i)
          a.slots[i * S + c] = states[at * std::size_t(state_type::slots) + i];
        moves.emplace_back(std::int64_t(c), std::int64_t(donor));
        energy[c] = INFINITY;  // a restarted chain has a window's grace
      }
      warm_.copy_chains(std::span<std::pair<std::int64_t, std::int64_t> const>(moves), gather_states());
      restarted_chains_ += still;
      restarted_high_ += high;
      storage_.upload();
    }
    auto const& now = storage_.host();
    for (std::size_t d = 0; d < std::size_t(D); ++d)
      std::copy_n(now.slots.begin() + std::ptrdiff_t(d * S), C, stuck_snapshot_.begin() + std::ptrdiff_t(d * C));
    energy_snapshot_ = energy;
  }
  // Gathers a per-chain vector of this process into every chain's (run/group.hpp).
  auto gather_states() const {
    return [this](auto mine) { return group_.all_gather(mine); };
  }
  // Warm-up's rescue of chains settled far above the others in energy (issue 26). On
  // posteriordb's low_dim_gauss_mix (ordered two-component mixture, 1,000 points) 9 of 16
  // chains settled where both components merge into one Gaussian, U 390 above the posterior's
  // typical set, and stayed there for the whole run. A region whose typical energy stands ΔU
  // above another's holds e^{−ΔU} times its mass, times the ratio of their volumes; with
  // ΔU > 20·D that is below e^{−20D} unless the region is e²⁰ ≈ 5·10⁸ times wider in every
  // direction. The bound is taken from the ⌈C/4⌉-th lowest live chain (at least the second), so
  // a few chains alone in a deep spike move nobody, and a target's own spread of energies stays
  // far inside it (a Gaussian's typical U spans a few √(D/2); the centred funnel d = 10 spans 81
  // with v within ±3 sd, against 200). A chain whose U fell by more than 4√D since the last look
  // (a settled chain's U changes by about √D between looks) is still coming in and is left alone,
  // so far starts are not all replaced by the first chains to arrive. Needs 3 live chains.
  static double high_energy_bound(std::vector<double> u) {
    if (u.size() < 3) return INFINITY;
    std::size_t const k = std::max<std::size_t>(1, (u.size() + 3) / 4 - 1);  // ⌈C/4⌉-th lowest, at least the 2nd
    std::nth_element(u.begin(), u.begin() + std::ptrdiff_t(k), u.end());
    return std::isfinite(u[k]) ? u[k] + 20.0 * D : INFINITY;
  }
  void validate_schedule() const {
    // track(acceptance) counts each chain's accepted transitions between kept steps in T; a float
    // counts exactly only up to 2²⁴.
    if (P::template tracks<acceptance_t> && sizeof(T) == 4 && sched_.thin > (std::int64_t(1) << 24))
      throw std::invalid_argument("ember::sample: track(acceptance) in float counts accepted transitions exactly only up to "
                                  "thin(16,777,216), got thin(" + std::to_string(sched_.thin) +
                                  "); thin less or compute in double");
  }

  P pipe_;
  Backend backend_;
  decltype(detail::group_of(std::declval<Backend const&>())) group_;
  chain_range range_;        // this process's chains (all of them for one process)
  std::int64_t chains_ = 0;  // range_.count
  std::uint64_t seed_ = 0, key_ = 0;
  ember::schedule sched_;
  mass_windows windows_;
  warmup_state<kernel_type, typename P::warmup_type> warm_;
  kernel_type kernel_;
  bool pace_measured_ = false;  // measure_pace has chosen
  typename Backend::template storage<P> storage_;
  std::int64_t t_ = 0;
  detail::host_buffer<T> samples_;
  std::vector<double> track_;
  double seconds_ = 0, warmup_seconds_ = 0;
  std::vector<T> stuck_snapshot_;         // positions at warm-up's last look for chains that never moved
  std::int64_t restarted_chains_ = 0;     // chains restarted by that look, over warm-up
  std::int64_t restarted_high_ = 0;       // chains restarted for standing far above the others in energy
  std::int64_t warmup_gradients_ = 0;     // gradient evaluations of the warm-up, over all chains

  // Only the counters: a GPU backend then copies a few small arrays, not every chain's state.
  chain_arrays<T> const& counters() const {
    if constexpr (requires { storage_.counters(); })
      return storage_.counters();
    else
      return storage_.host();
  }
  std::int64_t total_gradients() const {
    auto const& a = counters();
    return std::accumulate(a.gradients.begin(), a.gradients.begin() + chains_, std::int64_t(0));
  }
  std::vector<double> energy_snapshot_;   // energies at warm-up's last look (NaN: frozen; ∞: restarted)
  bool show_progress_ = true;
  std::function<void(progress_report const&)> on_progress_;
};

namespace detail {
/// The entry points' form without a backend (`start(pipe, opt)`, `sample(pipe, opt)`): the
/// default, backend::cpu, which is only declared here (ember.hpp defines it), so a unit without
/// it gets one sentence saying where it comes from.
template <class Fn>
struct with_default_backend {
  template <class P, class Backend = backend::cpu>
  auto operator()(P const& p, typename options_of<P>::type const& opt) const {
    if constexpr (!requires { sizeof(Backend); })
      static_assert(always_false<P>,
                    "ember: this backend is declared but not defined here: the default, backend::cpu, comes with "
                    "<ember/ember.hpp> (or <ember/backend/cpu.hpp>), backend::cuda with <ember/cuda.cuh> in a .cu file");
    else
      return static_cast<Fn const&>(*this)(p, opt, Backend{});
  }
};
}  // namespace detail

struct start_fn : detail::with_default_backend<start_fn> {
  using with_default_backend::operator();
  template <class P, class Backend = backend::cpu>
  auto operator()(P const& p, typename detail::options_of<P>::type const& opt, Backend const& backend) const {
    if constexpr (!detail::is_pipeline<P>::value && !detail::has_energy_type<P>) {
      static_assert(detail::always_false<P>,
                    "ember::start needs a transition kernel (ula, mala, hmc, ...) or a pipeline built from one with |");
    } else if constexpr (detail::pipeline_or_kernel<P>()) {
      if constexpr (detail::backend_diagnosis<Backend, decltype(as_pipeline(p))>()) {
        auto pipe = as_pipeline(p);
        return run<decltype(pipe), Backend>(pipe, opt, backend);
      }
    }
  }
};
/// `start(pipeline, {.chains, .seed, .init}, backend)`: a run at transition 0 (`.steps` is not
/// used; `advance` says how far to go).
inline constexpr start_fn start{};

}  // namespace ember
