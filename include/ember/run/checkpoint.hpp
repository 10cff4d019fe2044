#pragma once
/// \file
/// A run's checkpoint: `run::save(path)` writes every chain's state, the adaptation state, the
/// kept draws and tracked sums, the transition counter and the stream key; `run::load(pipe,
/// path, backend)` continues it, bitwise as if it had never stopped. A file is refused with a
/// sentence when it was written by another version, for another pipeline (a structural
/// fingerprint of its type), precision, dimension or schedule, or with another energy (evaluated
/// at the saved states), and when its checksum or any length in it is wrong (docs/tuning.md).
/// The bytes and the atomic write are detail/checkpoint.hpp's.

#include <ember/adapt/warmup.hpp>
#include <ember/detail/checkpoint.hpp>
#include <ember/host_cache.hpp>
#include <ember/pipeline/pipeline.hpp>
#include <ember/sample_options.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ember::detail {

// How the compiler spells type P, taken out of its function signature ("... [with P = X; ...]"
// under GCC, "... [P = X]" under clang).
template <class P>
std::string spelling() {
#if defined(__clang__) || defined(__GNUC__)
  std::string_view const f = __PRETTY_FUNCTION__;
#else
  std::string_view const f = __FUNCSIG__;
#endif
  auto const from = f.find("P = ");
  if (from == std::string_view::npos) return std::string(f);
  auto to = f.rfind("; std::string");
  if (to == std::string_view::npos || to < from) to = f.rfind(']');
  return std::string(f.substr(from + 4, to - from - 4));
}

// A checkpoint's structural fingerprint: the pipeline's type (kernel, metric, integrator,
// warm-up adapters, stages, dimension, precision) as the compiler spells it, with the energy's
// own spelling cut out, plus the state's slot count. The energy's type is left out because its
// spelling is not stable across builds (a lambda is `<lambda(auto:1)>` under one compiler and its
// source path and line under another); the energy itself is checked on load by evaluating it at
// the saved states (`run::load`).
template <class P>
std::uint64_t structural_fingerprint(int slots) {
  std::string const p = spelling<P>(), e = spelling<typename P::energy_type>();
  std::string s;  // p with every e written as "E" (appended piece by piece: GCC 12 warns falsely on replace)
  for (std::size_t from = 0;;) {
    std::size_t const at = e.empty() ? std::string::npos : p.find(e, from);
    s.append(p, from, at == std::string::npos ? std::string::npos : at - from);
    if (at == std::string::npos) break;
    s.push_back('E');
    from = at + e.size();
  }
  s += " slots " + std::to_string(slots);
  return fnv1a(s.data(), s.size());
}

inline constexpr char ember_version[16] = "ember 0.6.0";

template <class K>
void put_tunables(byte_writer& w, K const& k) {
  w.put(double(k.step_size));
  if constexpr (requires { k.metric; }) w.put(k.metric);
  if constexpr (requires { k.trajectory_length; }) w.put(double(k.trajectory_length));
}
// A step size that a warm-up adapts (`adapted`) is the run's state and comes from the file; any
// other (ula, any kernel without a warm-up) is the caller's pipeline's, and a checkpoint written
// with another is refused.
template <class K>
void get_tunables(byte_reader& r, K& k, bool adapted) {
  double const eps = r.get<double>();
  if constexpr (requires { k.metric; }) r.get_bytes(k.metric);
  if constexpr (requires { k.trajectory_length; }) k.trajectory_length = typename K::value_type(r.get<double>());
  if constexpr (requires { k.with_step_size(eps); }) {
    if (adapted) {
      reassign(k, k.with_step_size(eps));
      return;
    }
  }
  if (double(k.step_size) != eps) {
    throw std::runtime_error("ember::run::load: " + r.path + " was written with step size " + std::to_string(eps) +
                             ", but this pipeline's kernel has " + std::to_string(double(k.step_size)));
  }
}

/// `run::save`, `run::load` and load's energy check; a friend of `run`.
struct run_checkpoint {
  template <class Run>
  static void save(Run const& self, std::string const& path) {
    using P = typename Run::pipeline_type;
    using T = typename Run::value_type;
    constexpr int D = Run::dim;
    using state_type = typename Run::state_type;
    detail::byte_writer w;
    w.bytes = "EMBERRUN";
    w.put(std::uint32_t(3));  // format (2: a structural fingerprint, the energy checked on load; 3: truncated and gradient counts)
    w.put(detail::ember_version);
    w.put(std::uint32_t(sizeof(T)));
    w.put(std::uint32_t(D));
    w.put(detail::structural_fingerprint<P>(state_type::slots));
    w.put(self.range_.total);  // every process's chains: a process's file holds its range of them
    w.put(self.seed_);
    w.put(self.key_);
    w.put(self.t_);
    w.put(self.sched_.warmup);
    w.put(self.sched_.burn_in);
    w.put(self.sched_.thin);
    w.put(self.seconds_);
    w.put(self.warmup_seconds_);
    w.put(self.restarted_chains_);
    w.put(self.restarted_high_);
    w.put(self.warmup_gradients_);
    w.put_vector(self.energy_snapshot_);
    w.put_vector(self.stuck_snapshot_);
    self.warm_.save(w);  // every adapter's state, in the warm-up's order
    detail::put_tunables(w, self.warm_.base);
    detail::put_tunables(w, self.kernel_);
    auto const& a = self.storage_.host();
    w.put(a.stride);
    w.put_vector(a.slots);
    w.put_vector(a.window);
    w.put_vector(a.frozen);
    w.put_vector(a.diverged_at);
    w.put_vector(a.accepted);
    w.put_vector(a.divergent);
    w.put_vector(a.truncated);
    w.put_vector(a.gradients);
    w.put_vector(self.samples_);
    w.put_vector(self.track_);
    detail::write_file_atomically(path, std::move(w.bytes));
  }

  template <class Run>
  static Run load(typename Run::pipeline_type const& pipe, std::string const& path, typename Run::backend_type const& backend) {
    using P = typename Run::pipeline_type;
    using T = typename Run::value_type;
    constexpr int D = Run::dim;
    using state_type = typename Run::state_type;
    std::string const bytes = detail::read_checked_file(path);
    detail::byte_reader r{bytes, path, 8};
    auto const refuse = [&](std::string const& why) {
      throw std::runtime_error("ember::run::load: " + path + " " + why);
    };
    if (r.get<std::uint32_t>() != 3) refuse("has a checkpoint format this ember cannot read");
    char version[16];
    r.get_bytes(version);
    if (std::memcmp(version, detail::ember_version, sizeof version) != 0) {
      std::string v(version, strnlen(version, sizeof version));
      for (char& c : v)
        if (c < 32 || c > 126) c = '?';  // a corrupt file's bytes never reach a terminal raw
      refuse("was written by " + v + ", this is " + detail::ember_version);
    }
    auto const size = r.get<std::uint32_t>();
    if (size != sizeof(T))
      refuse("holds " + std::string(size == 4 ? "float" : size == 8 ? "double" : "unknown") +
             " chains, but this pipeline computes in " + (sizeof(T) == 4 ? "float" : "double"));
    auto const dim = r.get<std::uint32_t>();
    if (dim != std::uint32_t(D))
      refuse("holds chains of dimension " + std::to_string(dim) + ", but this pipeline's energy has dimension " +
             std::to_string(D));
    if (r.get<std::uint64_t>() != detail::structural_fingerprint<P>(state_type::slots))
      refuse("was written for a different pipeline (kernel, metric, integrator, warm-up or stages differ)");
    sample_options<T, D> opt;
    opt.chains = r.get_count(5 * sizeof(std::int64_t) + 1);  // each chain: diverged_at, accepted, divergent, truncated, gradients, frozen
    opt.seed = r.get<std::uint64_t>();
    opt.progress = false;
    auto const key = r.get<std::uint64_t>();
    auto const t = r.get<std::int64_t>();
    ember::schedule sch;
    sch.warmup = r.get<std::int64_t>();
    sch.burn_in = r.get<std::int64_t>();
    sch.thin = r.get<std::int64_t>();
    auto const want = pipe.make_schedule();
    if (sch.warmup != want.warmup || sch.burn_in != want.burn_in || sch.thin != want.thin)
      refuse("was written for a schedule of warm-up " + std::to_string(sch.warmup) + ", burn-in " +
             std::to_string(sch.burn_in) + ", thin " + std::to_string(sch.thin) + "; this pipeline has " +
             std::to_string(want.warmup) + ", " + std::to_string(want.burn_in) + ", " + std::to_string(want.thin));
    if (opt.chains <= 0 || t < 0 || t > detail::max_transitions) refuse("is corrupt (a transition count out of range)");
    Run out(pipe, opt, backend);  // allocates; its initial state is replaced below
    out.key_ = key;
    out.t_ = t;
    out.seconds_ = r.get<double>();
    out.warmup_seconds_ = r.get<double>();
    out.restarted_chains_ = r.get<std::int64_t>();
    out.restarted_high_ = r.get<std::int64_t>();
    out.warmup_gradients_ = r.get<std::int64_t>();
    {
      auto const e = r.get_vector<double>();
      if (!e.empty() && e.size() != std::size_t(out.chains_)) refuse("is corrupt (an energy snapshot of another size)");
      out.energy_snapshot_ = e;
    }
    {
      auto const n = r.get_vector<T>();
      if (!n.empty() && n.size() != std::size_t(D) * std::size_t(out.chains_)) refuse("is corrupt (a snapshot of another size)");
      out.stuck_snapshot_ = n;
    }
    out.warm_.load(r, refuse);
    // A step size a warm-up adapts is the run's state (from the file); any other is the pipeline's.
    constexpr bool adapted = any(decltype(out.warm_)::tuned, tunable::step_size);
    detail::get_tunables(r, out.warm_.base, adapted);
    detail::get_tunables(r, out.kernel_, adapted);
    // The tuned kernel again from the adaptation state, as `advance` made it at the end of warm-up:
    // its derived constants (MALA's √(2ε), 1/(4ε)) come from the double step size, which the
    // saved value (in T) does not hold to the last bit.
    detail::reassign(out.kernel_, out.warm_.frozen());
    auto& a = out.storage_.host_mutable();
    if (r.get<std::int64_t>() != a.stride) refuse("is corrupt (chain padding differs)");
    a.slots = r.get_vector<T, detail::host_buffer<T>>(a.slots.size());
    a.window = r.get_vector<T, detail::host_vector<T>>(a.window.size());
    a.frozen = r.get_vector<std::uint8_t, detail::host_vector<std::uint8_t>>(a.frozen.size());
    a.diverged_at = r.get_vector<std::int64_t, detail::host_vector<std::int64_t>>(a.diverged_at.size());
    a.accepted = r.get_vector<std::int64_t, detail::host_vector<std::int64_t>>(a.accepted.size());
    a.divergent = r.get_vector<std::int64_t, detail::host_vector<std::int64_t>>(a.divergent.size());
    a.truncated = r.get_vector<std::int64_t, detail::host_vector<std::int64_t>>(a.truncated.size());
    a.gradients = r.get_vector<std::int64_t, detail::host_vector<std::int64_t>>(a.gradients.size());
    out.samples_ = r.get_vector<T, detail::host_buffer<T>>(std::uint64_t(sch.kept_before(t)) * P::recorded_columns *
                                                           std::uint64_t(out.chains_));
    out.track_ = r.get_vector<double>(std::uint64_t(sch.kept_before(t)) * std::uint64_t(P::track_stride));
    if (r.pos != bytes.size()) refuse("is corrupt (" + std::to_string(bytes.size() - r.pos) + " unexpected bytes at the end)");
    check_energy(out, path);
    out.storage_.upload();
    return out;
  }

  // The energy a checkpoint's chains were saved with is not in the file; this pipeline's energy is
  // evaluated at the saved states (every chain, or 4,096 spread over the run) and compared with the
  // energies the chains carry. A difference beyond rounding, 1024ε(1 + |U|) in T, is another model
  // or other data: refused, naming a chain and both energies. Within it (the same model, its sums
  // contracted into FMAs otherwise by this translation unit or by another build) the run goes on
  // from the saved values, so a resumed run is bitwise the uninterrupted one; re-evaluating them
  // here, on the host, would change their last bits (measured: 1-2 ulp on a diagonal Gaussian).
  template <class Run>
  static void check_energy(Run& self, std::string const& path) {
    using T = typename Run::value_type;
    using state_type = typename Run::state_type;
    auto const& a = self.storage_.host();
    std::int64_t const checks = std::min<std::int64_t>(self.chains_, 4096);
    double const tol = 1024 * double(std::numeric_limits<T>::epsilon());
    for (std::int64_t j = 0; j < checks; ++j) {
      std::int64_t const c = checks == self.chains_ ? j : j * (self.chains_ - 1) / (checks - 1);
      if (a.frozen[std::size_t(c)]) continue;
      state_type saved;
      for (int i = 0; i < state_type::slots; ++i) saved.slot(i) = a.slots[std::size_t(i * a.stride + c)];
      double const u = double(saved.energy), v = double(self.kernel_.init(saved.x).energy);
      if (!(std::abs(u - v) <= tol * (1 + std::abs(u))))
        throw std::runtime_error("ember::run::load: " + path + " was saved with another energy: chain " + std::to_string(c) +
                                 "'s saved state has energy " + std::to_string(u) + ", this pipeline's energy gives " +
                                 std::to_string(v) + " there (other parameters or data?)");
    }
  }
};

}  // namespace ember::detail
