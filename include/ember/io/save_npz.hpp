#pragma once
/// \file
/// `save_npz(result, path)`: a run as a NumPy `.npz` archive (io/npz.hpp), laid out for ArviZ.
///
/// Arrays (C chains, K kept draws, D dimensions; T the result's scalar type):
///
/// | name | shape | dtype | what |
/// | --- | --- | --- | --- |
/// | `draws` | (C, K, D) | T | draw k of chain c: `draws[c, k, d] = samples()(k, c, d)`, ArviZ's (chain, draw, *shape) order; only with `record()` |
/// | `<group>.<name>` | (C, K, *shape) | T | a posterior in a model's terms (posterior.hpp): one array per variable of `r.variables()`, e.g. `posterior.tau` (C, K), `posterior.theta` (C, K, 8), `posterior_predictive.y_rep`; only with `record()` |
/// | `sample_stats.<name>` | (C, K) | T, bool, int64 | with `record_stats()`: each kept transition's `lp`, `acceptance_rate`, `diverging` (bool), `n_steps` (int64), `truncated` or, for NUTS, `reached_max_treedepth` (bool), and where the kernel reports them `energy` and `tree_depth` (int64) (`result::sample_stats()`) |
/// | `final_states` | (C, D) | T | each chain's last state |
/// | `divergent` | (C,) | bool | chain went non-finite and was frozen |
/// | `diverged_at` | (C,) | int64 | the transition at which it did (−1: its start state); −2 where `divergent` is false |
/// | `chain_acceptance` | (C,) | float64 | only when passed in the options |
/// | `acceptance_rate`, `seconds` | () | float64 | the run's (seconds: every transition, warm-up included) |
/// | `warmup_seconds` | () | float64 | the warm-up's part of `seconds` |
/// | `divergent_transitions` | () | int64 | |
/// | `truncated_transitions`, `gradients`, `warmup_gradients` | () | int64 | after warm-up (gradients: and in it), over all chains |
/// | `trace_live_chains` | (K,) | int64 | with `track(...)`: chains live at each kept step |
/// | `trace_mean`, `trace_variance` | (K, D) | float64 | with `track(moments)` |
/// | `trace_acceptance`, `trace_energy` | (K,) | float64 | with `track(acceptance)`, `track(mean_energy)` |
/// | `trace_<name>` | (K, sums) | float64 | a statistic of one's own (`trace().statistic(name)`); other characters than letters, digits and `_` in its name become `_` |
/// | `summary_mean`, `summary_sd`, `summary_mcse`, `summary_ess_bulk`, `summary_ess_tail`, `summary_ess_sq`, `summary_ess_mean`, `summary_rhat`, `summary_rhat_bulk`, `summary_rhat_folded` | (D,) | float64 | the columns of `summary()` |
/// | `summary_draws` | () | int64 | draws the summary used |
///
/// Written against `result`'s public accessors only, so any type with them will do; the writing
/// itself (`detail::write_npz`) depends on the scalar type only.

#include <ember/diagnostics/summary.hpp>
#include <ember/io/npz.hpp>
#include <ember/pipeline/stages.hpp>
#include <ember/pipeline/track.hpp>
#include <ember/result.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ember {

namespace detail {
// What the archive holds of a run, without its dimension in the type: save_npz_with fills it from
// a result's accessors and write_npz writes it. `write_npz` is a template on the scalar type only,
// so that a program compiles it once (ember/host_templates.hpp).
template <class T>
struct npz_run {
  std::int64_t chains = 0, kept = 0;
  int dim = 0;
  T const* draws = nullptr;  ///< kept × dim × chains (result's layout); null without record()
  T const* final_states = nullptr;  ///< dim × chains (required)
  std::vector<variable> const* variables = nullptr;  ///< named quantities of the columns, if any
  T const* stats = nullptr;  ///< kept × stat columns × chains (record_stats())
  std::vector<draw_stat> const* stat_columns = nullptr;
  bool nuts = false;  ///< the kernel reports tree depths: `truncated` is `reached_max_treedepth`
  std::vector<std::uint8_t> divergent;  ///< per chain
  std::vector<std::int64_t> diverged_at;  ///< per chain; −2 where not divergent
  double acceptance_rate = 0, seconds = 0, warmup_seconds = 0;
  bool has_warmup_seconds = false, has_gradients = false;
  std::int64_t divergent_transitions = 0, truncated_transitions = 0, gradients = 0, warmup_gradients = 0;
  // The trace (pipeline/track.hpp), its per-dimension rows flattened (steps × dim); a null
  // pointer is an empty part.
  std::vector<std::int64_t> const* trace_live_chains = nullptr;
  std::vector<double> trace_mean, trace_variance;
  std::vector<double> const* trace_acceptance = nullptr;
  std::vector<double> const* trace_energy = nullptr;
  std::vector<tracked_values> const* trace_statistics = nullptr;
};

// Writes `r` to `path`, with the summary `s` and `more(z)` adding arrays of the caller's before
// the file is closed.
template <class T>
void write_npz(npz_run<T> const& r, std::string const& path, summary_options const& o, summary_table const& s,
               std::function<void(npz_writer&)> const& more) {
  std::size_t const C = std::size_t(r.chains), K = std::size_t(r.kept), Dz = std::size_t(r.dim);
  int const D = r.dim;
  // A trace's parts that `r` does not point to are empty.
  static std::vector<std::int64_t> const no_counts;
  static std::vector<double> const no_values;
  static std::vector<tracked_values> const no_statistics;
  auto const& live_chains = r.trace_live_chains ? *r.trace_live_chains : no_counts;
  auto const& acceptance = r.trace_acceptance ? *r.trace_acceptance : no_values;
  auto const& energy = r.trace_energy ? *r.trace_energy : no_values;
  auto const& statistics = r.trace_statistics ? *r.trace_statistics : no_statistics;
  // A user's statistic goes in as trace_<its name, other characters than [A-Za-z0-9_] as _>;
  // refused, before anything is written, where that name is taken (numpy.load would keep one).
  auto npz_name = [](std::string const& stat) {
    std::string name = "trace_" + stat;
    for (auto& ch : name)
      if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_')) ch = '_';
    return name;
  };
  {
    std::vector<std::string> taken = {"trace_live_chains", "trace_mean", "trace_variance", "trace_acceptance", "trace_energy"};
    for (auto const& st : statistics) {
      std::string const name = npz_name(st.name);
      if (std::find(taken.begin(), taken.end(), name) != taken.end())
        throw std::invalid_argument("ember::save_npz: statistic \"" + st.name + "\" would be written as " + name +
                                    ", a name another array of the archive has; rename the statistic");
      taken.push_back(name);
    }
  }
  npz_writer z(path);
  // Draw k of chain c in column d.
  auto const draw = [&](std::size_t k, std::size_t c, std::size_t d) { return r.draws[(k * Dz + d) * C + c]; };

  if (r.draws != nullptr && K > 0) {
    std::array<std::size_t, 3> shape{C, K, Dz};
    // Element e of the (C, K, D) array is chain e / (K·D), draw (e / D) % K, dimension e % D.
    // The writer asks for consecutive ranges; reading chain by chain would stride by C through
    // memory, so a block of chains is gathered at a time, row by row of the result.
    std::size_t const per_chain = K * Dz, block = std::max<std::size_t>(1, (std::size_t(1) << 20) / std::max<std::size_t>(per_chain, 1));
    std::vector<T> gathered;
    std::size_t gathered_from = std::size_t(-1);
    z.add_streamed<T>("draws", shape, [&](T* buf, std::size_t first, std::size_t count) {
      for (std::size_t e = first; e < first + count;) {
        std::size_t const c = e / per_chain, c0 = c / block * block;
        if (c0 != gathered_from) {
          std::size_t const nc = std::min(block, C - c0);
          gathered.resize(nc * per_chain);
          for (std::size_t k = 0; k < K; ++k)
            for (std::size_t d = 0; d < Dz; ++d)
              for (std::size_t j = 0; j < nc; ++j) gathered[j * per_chain + k * Dz + d] = draw(k, c0 + j, d);
          gathered_from = c0;
        }
        std::size_t const off = e % per_chain, n = std::min(per_chain - off, first + count - e);
        auto const src = gathered.begin() + std::ptrdiff_t((c - c0) * per_chain + off);
        std::copy(src, src + std::ptrdiff_t(n), buf + (e - first));
        e += n;
      }
    });
    if (r.variables != nullptr)
      for (auto const& v : *r.variables) {
        std::vector<std::size_t> vshape{C, K};
        for (int e : v.shape) vshape.push_back(std::size_t(e));
        std::size_t const n = std::size_t(v.size);
        z.add_streamed<T>(v.group + "." + v.name, vshape, [&](T* buf, std::size_t first, std::size_t count) {
          for (std::size_t e = first; e < first + count; ++e) {  // (c, k, i) of the variable's (C, K, n)
            std::size_t const c = e / (K * n), k = (e / n) % K, i = e % n;
            buf[e - first] = draw(k, c, std::size_t(v.offset) + i);
          }
        });
      }
  }

  if (r.stats != nullptr && r.stat_columns != nullptr && K > 0) {
    // Each statistic (C, K), chain by chain; flags as bool and counts as int64, as ArviZ has them.
    std::size_t const S = r.stat_columns->size();
    std::array<std::size_t, 2> const shape{C, K};
    std::vector<T> v(C * K);
    for (std::size_t j = 0; j < S; ++j) {
      draw_stat const st = (*r.stat_columns)[j];
      for (std::size_t c = 0; c < C; ++c)
        for (std::size_t k = 0; k < K; ++k) v[c * K + k] = r.stats[(k * S + j) * C + c];
      std::string const name = std::string("sample_stats.") + draw_stat_name(st, r.nuts);
      if (kind_of(st) == draw_stat_kind::flag) {
        z.add_streamed<bool>(name, shape, [&](bool* buf, std::size_t first, std::size_t count) {
          for (std::size_t i = 0; i < count; ++i) buf[i] = v[first + i] != T(0);
        });
      } else if (kind_of(st) == draw_stat_kind::count) {
        std::vector<std::int64_t> n(v.size());
        for (std::size_t i = 0; i < v.size(); ++i) n[i] = std::int64_t(v[i]);
        z.add(name, n.data(), shape);
      } else {
        z.add(name, v.data(), shape);
      }
    }
  }

  std::vector<T> final_cd(C * Dz);
  for (std::size_t c = 0; c < C; ++c)
    for (std::size_t d = 0; d < Dz; ++d) final_cd[c * Dz + d] = r.final_states[d * C + c];
  z.add("final_states", final_cd.data(), std::array<std::size_t, 2>{C, Dz});
  z.add_streamed<bool>("divergent", std::array<std::size_t, 1>{C}, [&](bool* buf, std::size_t first, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) buf[i] = r.divergent[first + i] != 0;
  });
  z.add("diverged_at", r.diverged_at.data(), std::array<std::size_t, 1>{C});
  if (!o.chain_acceptance.empty())
    z.add("chain_acceptance", o.chain_acceptance.data(), std::array<std::size_t, 1>{o.chain_acceptance.size()});
  z.add_scalar("acceptance_rate", r.acceptance_rate);
  z.add_scalar("seconds", r.seconds);
  if (r.has_warmup_seconds) z.add_scalar("warmup_seconds", r.warmup_seconds);
  z.add_scalar("divergent_transitions", r.divergent_transitions);
  if (r.has_gradients) {
    z.add_scalar("truncated_transitions", r.truncated_transitions);
    z.add_scalar("gradients", r.gradients);
    z.add_scalar("warmup_gradients", r.warmup_gradients);
  }

  if (!live_chains.empty()) z.add("trace_live_chains", live_chains.data(), std::array<std::size_t, 1>{live_chains.size()});
  if (!r.trace_mean.empty()) z.add("trace_mean", r.trace_mean.data(), std::array<std::size_t, 2>{r.trace_mean.size() / Dz, Dz});
  if (!r.trace_variance.empty())
    z.add("trace_variance", r.trace_variance.data(), std::array<std::size_t, 2>{r.trace_variance.size() / Dz, Dz});
  if (!acceptance.empty()) z.add("trace_acceptance", acceptance.data(), std::array<std::size_t, 1>{acceptance.size()});
  if (!energy.empty()) z.add("trace_energy", energy.data(), std::array<std::size_t, 1>{energy.size()});
  for (auto const& st : statistics)  // a user's statistics (pipeline/track.hpp)
    z.add(npz_name(st.name), st.values.data(), std::array<std::size_t, 2>{std::size_t(st.kept()), std::size_t(st.width)});

  auto column = [&](std::string const& name, auto member) {
    std::vector<double> v(Dz);
    for (int d = 0; d < D; ++d) v[std::size_t(d)] = s.dims[std::size_t(d)].*member;
    z.add("summary_" + name, v.data(), std::array<std::size_t, 1>{Dz});
  };
  using row = summary_table::row;
  column("mean", &row::mean);
  column("sd", &row::sd);
  column("mcse", &row::mcse);
  column("ess_bulk", &row::ess);
  column("ess_tail", &row::ess_tail);
  column("ess_sq", &row::ess_sq);
  column("ess_mean", &row::ess_mean);
  column("rhat", &row::rhat);
  column("rhat_bulk", &row::rhat_bulk);
  column("rhat_folded", &row::rhat_folded);
  z.add_scalar("summary_draws", std::int64_t(s.draws));
  if (more) more(z);
  z.close();
}

// save_npz with the run's totals (acceptance rate, seconds, counts) from `totals` and the summary
// given (ember/mpi.hpp's: every rank's chains'), and `more(z)` adding arrays of the caller's
// before the file is closed.
template <class R>
void save_npz_with(R const& r, R const& totals, std::string const& path, summary_options const& o, summary_table const& s,
                   std::function<void(npz_writer&)> const& more) {
  constexpr int D = R::dim;
  using T = typename R::value_type;
  npz_run<T> n;
  n.chains = r.chains();
  n.kept = r.kept();
  n.dim = D;
  auto const draws = r.samples();
  if (!draws.empty()) n.draws = draws.data().data();
  n.final_states = r.final_states().data();
  if constexpr (requires { r.variables(); }) n.variables = &r.variables();
  if constexpr (requires { r.sample_stats(); })
    if (!r.sample_stats_data().empty()) {
      n.stats = r.sample_stats_data().data();
      n.stat_columns = &r.sample_stats();
      n.nuts = r.has_sample_stat(draw_stat::tree_depth);
    }
  for (std::int64_t c = 0; c < r.chains(); ++c) {
    bool const div = r.divergent(c);
    n.divergent.push_back(div ? 1 : 0);
    n.diverged_at.push_back(div ? std::int64_t(r.diverged_at(c)) : -2);
  }
  n.acceptance_rate = double(totals.acceptance_rate());
  n.seconds = double(totals.seconds());
  if constexpr (requires { totals.warmup_seconds(); }) {
    n.has_warmup_seconds = true;
    n.warmup_seconds = double(totals.warmup_seconds());
  }
  n.divergent_transitions = std::int64_t(totals.divergent_transitions());
  if constexpr (requires { totals.gradients(); }) {
    n.has_gradients = true;
    n.truncated_transitions = std::int64_t(totals.truncated_transitions());
    n.gradients = std::int64_t(totals.gradients());
    n.warmup_gradients = std::int64_t(totals.warmup_gradients());
  }
  auto const& tr = r.trace();
  n.trace_live_chains = &tr.live_chains;
  for (auto const& row : tr.mean)
    for (int d = 0; d < D; ++d) n.trace_mean.push_back(row[d]);
  for (auto const& row : tr.variance)
    for (int d = 0; d < D; ++d) n.trace_variance.push_back(row[d]);
  n.trace_acceptance = &tr.acceptance;
  n.trace_energy = &tr.energy;
  n.trace_statistics = &tr.statistics;
  write_npz(n, path, o, s, more);
}
}  // namespace detail

/// Writes run `r` to the .npz file `path` (see the table above); `o` is passed to `summarize`,
/// and its per-chain acceptance, if any, is written too.
template <class R>
void save_npz(R const& r, std::string const& path, summary_options const& o = {}) {
  detail::save_npz_with(r, r, path, o, summarize(r, o), {});
}

}  // namespace ember
