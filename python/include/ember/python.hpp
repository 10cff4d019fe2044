#pragma once
/// \file
/// ember's Python binding layer (nanobind): what `ember._core` (the fixed set, python/src/core.cpp)
/// and every model `ember.compile` builds (python/ember/_compile.py) are made of.
///
/// `bind_energy<Factory, Samplers...>(module, "name")` makes a Python class whose constructor
/// takes the energy's named data (`ember.python.data`, from a dict of NumPy arrays) and whose
/// methods start runs with one of `Samplers`, chosen by name at run time. Each sampler is one
/// instantiation of a pipeline (`chees_hmc(U, {.warmup}) | thin(k) | record()`), so the set a
/// module carries is fixed when it is compiled; `compile` builds only the ones asked for.
///
/// A run is a `run_handle`: `advance(n, progress)` with the GIL released, Python's signals checked
/// at every chunk boundary (Ctrl-C raises KeyboardInterrupt there and the run keeps every whole
/// chunk, so it can be advanced again), `result()` as a dict of NumPy arrays in ArviZ's layout
/// (chain, draw, ...), `save(path)`; `load` continues a checkpoint. Python's own layer
/// (python/ember/__init__.py) turns that dict into a `Fit`.

#include <ember/ember.hpp>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

// Every module's binding types are its own (an inline namespace per module, set by ember.compile),
// so that modules loaded into one interpreter never register the same C++ type with nanobind.
#ifndef EMBER_PYTHON_NAMESPACE
#define EMBER_PYTHON_NAMESPACE core
#endif

namespace ember::python {
inline namespace EMBER_PYTHON_NAMESPACE {

namespace nb = nanobind;

/// A C-contiguous float64 array on the host, as `ember.python`'s Python layer passes every array
/// (it converts and checks dtype, contiguity and finiteness first, with one sentence each).
using array_f64 = nb::ndarray<double const, nb::c_contig, nb::device::cpu>;

/// The named data of one energy or model, owned here (copied once from NumPy), read by the
/// model's constructor: `d.view("X")` (a table: 1-d arrays are one column), `d.vector("y", n)`,
/// `d.scalar("sigma")`, `d.integer("K")`. A missing name or a wrong shape is refused with one
/// sentence naming it.
class data {
 public:
  data() = default;
  explicit data(nb::dict d) {
    for (auto [k, v] : d) {
      std::string const name = nb::cast<std::string>(k);
      auto a = nb::cast<array_f64>(v);
      if (a.ndim() > 2)
        throw std::invalid_argument("ember: data '" + name + "' has " + std::to_string(a.ndim()) +
                                    " dimensions; a model reads scalars, vectors and matrices (rows x columns)");
      std::int64_t const rows = a.ndim() == 0 ? 1 : std::int64_t(a.shape(0));
      int const cols = a.ndim() == 2 ? int(a.shape(1)) : 1;
      std::span<double const> values(a.data(), a.size());
      shape_[name] = {std::int64_t(a.ndim()), rows, cols};
      if (rows * cols == 0) {
        empty_.insert(name);
        continue;
      }
      tables_.emplace(name, dataset<double>(values, rows, cols));
    }
  }
  bool has(std::string const& name) const { return shape_.count(name) != 0; }
  std::vector<std::string> names() const {
    std::vector<std::string> n;
    for (auto const& [k, v] : shape_) n.push_back(k);
    return n;
  }
  /// The table `name` (rows x columns; a vector is a column).
  data_view<double> view(std::string const& name) const { return table(name).view(); }
  dataset<double> const& table(std::string const& name) const {
    require(name);
    if (empty_.count(name)) throw std::invalid_argument("ember: data '" + name + "' is empty");
    return tables_.at(name);
  }
  /// The vector `name`, of `n` values when n ≥ 0.
  std::span<double const> vector(std::string const& name, std::int64_t n = -1) const {
    require(name);
    auto const& s = shape_.at(name);
    if (s.ndim > 1 && s.cols != 1)
      throw std::invalid_argument("ember: data '" + name + "' must be a vector, got a " + std::to_string(s.rows) + " x " +
                                  std::to_string(s.cols) + " matrix");
    if (n >= 0 && s.rows * s.cols != n)
      throw std::invalid_argument("ember: data '" + name + "' must have " + std::to_string(n) + " values, got " +
                                  std::to_string(s.rows * s.cols));
    if (empty_.count(name)) return {};
    return {table(name).values().data(), table(name).values().size()};
  }
  double scalar(std::string const& name) const {
    require(name);
    auto const& s = shape_.at(name);
    if (s.rows * s.cols != 1)
      throw std::invalid_argument("ember: data '" + name + "' must be one number, got " + std::to_string(s.rows * s.cols));
    return table(name).values()[0];
  }
  std::int64_t integer(std::string const& name) const {
    double const v = scalar(name);
    if (v != std::floor(v) || std::fabs(v) > 9.0e15)
      throw std::invalid_argument("ember: data '" + name + "' must be an integer, got " + std::to_string(v));
    return std::int64_t(v);
  }

 private:
  struct shape {
    std::int64_t ndim, rows;
    int cols;
  };
  void require(std::string const& name) const {
    if (shape_.count(name)) return;
    std::string have;
    for (auto const& [k, v] : shape_) have += (have.empty() ? "" : ", ") + k;
    throw std::invalid_argument("ember: the model reads data '" + name + "', which was not given" +
                                (have.empty() ? std::string(" (no data was given)") : " (given: " + have + ")"));
  }
  std::map<std::string, dataset<double>> tables_;
  std::map<std::string, shape> shape_;
  std::set<std::string> empty_;
};

/// Settings of one run, from Python's keyword arguments.
struct settings {
  std::int64_t chains = 4, warmup = 1000, thin = 1;
  std::uint64_t seed = 0;
  double step_size = 0;  ///< ula's η (no adaptation)
  double target_accept = 0;  ///< the step size's target acceptance; 0: the sampler's own
  bool progress_line = false;
};

// ---- samplers: a name and a pipeline each -------------------------------------------------------

struct chees_hmc_sampler {
  static constexpr char const* name = "chees_hmc";
  template <class U>
  static auto pipeline(U const& u, settings const& s) {
    return ember::chees_hmc(u, {.warmup = s.warmup, .target_acceptance = s.target_accept}) | thin(s.thin) | record() | record_stats();
  }
};
struct nuts_sampler {
  static constexpr char const* name = "nuts";
  template <class U>
  static auto pipeline(U const& u, settings const& s) {
    return ember::nuts(u) | warmup(s.warmup, step_size({.target = s.target_accept}), auto_mass()) | thin(s.thin) | record() | record_stats();
  }
};
struct mams_sampler {
  static constexpr char const* name = "mams";
  template <class U>
  static auto pipeline(U const& u, settings const& s) {
    return ember::mams(u, {.warmup = s.warmup, .target_acceptance = s.target_accept}) | thin(s.thin) | record() | record_stats();
  }
};
/// Unadjusted MCLMC with MAMS's warm-up (kernel/mclmc.hpp): biased; compiled on request only.
struct mclmc_sampler {
  static constexpr char const* name = "mclmc";
  template <class U>
  static auto pipeline(U const& u, settings const& s) {
    return ember::mclmc(u) | mams_warmup(s.warmup, s.target_accept) | thin(s.thin) | record() | record_stats();
  }
};
struct mala_sampler {
  static constexpr char const* name = "mala";
  template <class U>
  static auto pipeline(U const& u, settings const& s) {
    return ember::mala(u) | warmup(s.warmup, step_size({.target = s.target_accept}), auto_mass()) | thin(s.thin) | record() | record_stats();
  }
};
struct ula_sampler {
  static constexpr char const* name = "ula";
  static constexpr bool fixed_step = true;
  template <class U>
  static auto pipeline(U const& u, settings const& s) {
    return ember::ula(u, {.step_size = s.step_size}) | thin(s.thin) | record() | record_stats();
  }
};

namespace detail {

template <class T>
nb::ndarray<nb::numpy, T> owned_array(std::vector<T>&& v, std::vector<std::size_t> const& shape) {
  auto* heap = new std::vector<T>(std::move(v));
  nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return nb::ndarray<nb::numpy, T>(heap->data(), shape.size(), shape.data(), owner);
}

/// Flags as a NumPy bool array (0/1 bytes: the representation of bool), as ArviZ has them.
inline nb::ndarray<nb::numpy, bool> owned_flags(std::vector<std::uint8_t>&& v, std::vector<std::size_t> const& shape) {
  auto* heap = new std::vector<std::uint8_t>(std::move(v));
  nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<std::uint8_t>*>(p); });
  return nb::ndarray<nb::numpy, bool>(reinterpret_cast<bool*>(heap->data()), shape.size(), shape.data(), owner);
}

template <class U>
constexpr bool is_model = requires { typename U::params_type; };

/// A run's draws, stats and summary as Python's layer reads them.
template <class T, int D, class U>
nb::dict result_dict(result<T, D> const& res, U const& energy) {
  nb::dict out;
  std::int64_t const C = res.chains(), K = res.kept();
  // Draws in the sampler's coordinates, (chain, draw, dim).
  std::vector<T> draws(std::size_t(C * K * D));
  auto const s = res.samples();
  for (std::int64_t c = 0; c < C; ++c)
    for (std::int64_t k = 0; k < K; ++k)
      for (int d = 0; d < D; ++d) draws[std::size_t((c * K + k) * D + d)] = s.unchecked(k, c, d);
  // Each kept transition's report (record_stats()), (chain, draw), as ArviZ's sample_stats has
  // them: flags bool, counts int64, the rest float64 (kind_of).
  nb::dict stats;
  for (draw_stat const st : res.sample_stats()) {
    std::vector<T> const v = res.sample_stat(st);
    std::vector<std::size_t> const shape{std::size_t(C), std::size_t(K)};
    auto const name = res.sample_stat_name(st);
    if (kind_of(st) == draw_stat_kind::flag) {
      std::vector<std::uint8_t> f(v.size());
      for (std::size_t i = 0; i < v.size(); ++i) f[i] = v[i] != T(0);
      stats[name.c_str()] = owned_flags(std::move(f), shape);
    } else if (kind_of(st) == draw_stat_kind::count) {
      std::vector<std::int64_t> n(v.size());
      for (std::size_t i = 0; i < v.size(); ++i) n[i] = std::int64_t(v[i]);
      stats[name.c_str()] = owned_array(std::move(n), shape);
    } else {
      stats[name.c_str()] = owned_array(std::vector<double>(v.begin(), v.end()), shape);
    }
  }
  auto const nc = std::size_t(C);
  std::vector<std::uint8_t> divergent(nc);
  std::vector<std::int64_t> accepted(nc);
  for (std::int64_t c = 0; c < C; ++c) {
    divergent[std::size_t(c)] = res.divergent(c);
    accepted[std::size_t(c)] = res.accepted(c);
  }
  out["draws"] = owned_array(std::move(draws), {std::size_t(C), std::size_t(K), std::size_t(D)});
  out["sample_stats"] = stats;
  out["chain_divergent"] = owned_flags(std::move(divergent), {std::size_t(C)});
  out["chain_accepted"] = owned_array(std::move(accepted), {std::size_t(C)});
  nb::dict st;
  st["acceptance_rate"] = res.acceptance_rate();
  st["target_acceptance"] = res.target_acceptance();
  st["divergent_transitions"] = res.divergent_transitions();
  st["divergent_chains"] = res.divergent_chains();
  st["truncated_transitions"] = res.truncated_transitions();
  st["gradients"] = res.gradients();
  st["warmup_gradients"] = res.warmup_gradients();
  st["seconds"] = res.seconds();
  st["warmup_seconds"] = res.warmup_seconds();
  st["sampling_seconds"] = res.sampling_seconds();
  st["kept_transitions"] = res.kept_transitions();
  auto const& a = res.adapted();
  st["step_size"] = a.step_size;
  st["trajectory_length"] = a.trajectory_length;
  st["metric_scale"] = a.metric_scale;  // standard deviations, or the dense metric's L row by row
  st["dense_metric"] = a.dense_metric;
  st["restarted_chains"] = a.restarted_chains + a.restarted_high_energy_chains;
  out["stats"] = st;

  // The model's terms: named, constrained columns (ember::posterior), else the draws as they are.
  auto columns = [&](auto const& r) {
    constexpr int C2 = std::remove_cvref_t<decltype(r)>::dim;
    if constexpr (is_model<U>) {
      std::vector<T> v(std::size_t(C * K * C2));
      auto const rs = r.samples();
      for (std::int64_t c = 0; c < C; ++c)
        for (std::int64_t k = 0; k < K; ++k)
          for (int d = 0; d < C2; ++d) v[std::size_t((c * K + k) * C2 + d)] = rs.unchecked(k, c, d);
      out["columns"] = owned_array(std::move(v), {std::size_t(C), std::size_t(K), std::size_t(C2)});
    } else {
      out["columns"] = out["draws"];  // a plain energy's columns are its draws: the same array
    }
    nb::list vars;
    for (auto const& var : r.variables()) {
      nb::dict x;
      x["name"] = var.name;
      x["shape"] = var.shape;
      x["offset"] = var.offset;
      x["size"] = var.size;
      x["group"] = var.group;
      vars.append(x);
    }
    out["variables"] = vars;
    std::vector<std::string> names;
    for (int d = 0; d < C2; ++d) names.push_back(r.column_name(d));
    out["column_names"] = names;
    if (K >= 4) {
      auto const t = r.summary();
      std::ostringstream text;
      text << t;
      out["summary_text"] = text.str();
      if (!t.bfmi.empty()) out["bfmi"] = owned_array(std::vector<double>(t.bfmi), {t.bfmi.size()});
      auto const nd = std::size_t(C2);
      std::vector<double> m(nd), sd(nd), mcse(nd), ess(nd), ess_tail(nd), rhat(nd);
      for (int d = 0; d < C2; ++d) {
        auto const& row = t.dims[std::size_t(d)];
        m[std::size_t(d)] = row.mean, sd[std::size_t(d)] = row.sd, mcse[std::size_t(d)] = row.mcse;
        ess[std::size_t(d)] = row.ess, ess_tail[std::size_t(d)] = row.ess_tail, rhat[std::size_t(d)] = row.rhat;
      }
      nb::dict sm;
      sm["mean"] = m, sm["sd"] = sd, sm["mcse_mean"] = mcse, sm["ess_bulk"] = ess, sm["ess_tail"] = ess_tail,
      sm["r_hat"] = rhat;
      out["summary"] = sm;
    }
  };
  if constexpr (is_model<U>)
    columns(ember::posterior(res, energy));
  else
    columns(res);
  return out;
}

}  // namespace detail

/// A run seen from Python (type-erased over the pipeline).
class run_handle {
 public:
  virtual ~run_handle() = default;
  /// n more transitions; `progress(done, total, warming_up, acceptance, divergent)` is called at
  /// most ten times a second and at the end (None: not called).
  virtual void advance(std::int64_t n, nb::object progress) = 0;
  virtual nb::dict result() const = 0;
  /// advance(n, progress), then result(): one crossing for `ember.sample`.
  nb::dict advance_and_result(std::int64_t n, nb::object progress) {
    advance(n, std::move(progress));
    return result();
  }
  virtual void save(std::string const& path) const = 0;
  virtual std::int64_t transitions() const = 0;
  virtual std::int64_t chains() const = 0;
  virtual std::int64_t warmup() const = 0;
  virtual std::string sampler() const = 0;
};

template <class U, class Sampler>
class run_of final : public run_handle {
 public:
  using pipeline_type = decltype(Sampler::pipeline(std::declval<U const&>(), settings{}));
  using run_type = decltype(ember::start(std::declval<pipeline_type const&>(),
                                         typename ember::detail::options_of<pipeline_type>::type{}));
  using T = typename U::value_type;
  static constexpr int D = U::dim;

  // The members that start, advance, read and save the run are defined below the class, not in
  // it: members defined in the class are inline, which `extern template class run_of<U, S>`
  // does not keep a unit from compiling (ember.compile instantiates each sampler's run in one
  // unit and declares it extern in the others).
  run_of(U const& u, settings const& s, std::span<vec<T, D> const> init);
  run_of(U const& u, settings const& s, std::string const& path);
  void advance(std::int64_t n, nb::object progress) override;
  nb::dict result() const override;
  void save(std::string const& path) const override;
  std::int64_t transitions() const override { return run_.transitions(); }
  std::int64_t chains() const override { return run_.chains(); }
  std::int64_t warmup() const override { return run_.schedule().warmup; }
  std::string sampler() const override { return Sampler::name; }

 private:
  void hook(settings const& s) {
    run_.on_progress([this](progress_report const& p) { report(p); }, s.progress_line);
  }
  // Between chunks, on the thread that called advance: Python's signals (Ctrl-C raises
  // KeyboardInterrupt here, after a whole chunk) and the progress callable.
  void report(progress_report const& p) {
    auto const now = std::chrono::steady_clock::now();
    bool const last = p.done == p.total;
    if (!last && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    nb::gil_scoped_acquire acquire;
    if (PyErr_CheckSignals() != 0) throw nb::python_error();
    if (progress_.is_valid() && !progress_.is_none())
      progress_(p.done, p.total, p.warming_up, p.acceptance, p.divergent_transitions);
  }

  // A run is advanced, read or saved by one Python thread at a time: the others are refused (the
  // GIL is released while it works, so a second thread could otherwise reach it meanwhile).
  struct busy_guard {
    std::atomic<bool>& b;
    explicit busy_guard(std::atomic<bool>& f) : b(f) {
      if (b.exchange(true)) throw std::runtime_error("ember: this run is in use by another thread (advance, fit or save)");
    }
    ~busy_guard() { b = false; }
  };

  U energy_;
  run_type run_;
  mutable std::atomic<bool> busy_{false};
  nb::object progress_;
  std::chrono::steady_clock::time_point last_{};
};

template <class U, class Sampler>
run_of<U, Sampler>::run_of(U const& u, settings const& s, std::span<vec<T, D> const> init)
    : energy_(u), run_(ember::start(Sampler::pipeline(energy_, s), {.chains = s.chains, .seed = s.seed, .init = init})) {
  hook(s);
}
template <class U, class Sampler>
run_of<U, Sampler>::run_of(U const& u, settings const& s, std::string const& path)
    : energy_(u), run_(run_type::load(Sampler::pipeline(energy_, s), path)) {
  hook(s);
}
template <class U, class Sampler>
void run_of<U, Sampler>::advance(std::int64_t n, nb::object progress) {
  busy_guard const busy(busy_);
  progress_ = std::move(progress);
  last_ = {};
  struct reset {  // also when the run stops with an exception (Ctrl-C): no callable kept alive
    nb::object& p;
    ~reset() { p = nb::object(); }
  } const r{progress_};
  nb::gil_scoped_release release;
  run_.advance(n);
}
template <class U, class Sampler>
nb::dict run_of<U, Sampler>::result() const {
  busy_guard const busy(busy_);
  return detail::result_dict(run_.result(), energy_);
}
template <class U, class Sampler>
void run_of<U, Sampler>::save(std::string const& path) const {
  busy_guard const busy(busy_);
  nb::gil_scoped_release release;
  run_.save(path);
}

namespace detail {

template <class T, int D>
std::vector<vec<T, D>> starts_of(nb::object init, std::int64_t chains) {
  std::vector<vec<T, D>> v;
  if (init.is_none()) return v;
  auto a = nb::cast<array_f64>(init);
  if (a.ndim() != 2 || std::int64_t(a.shape(0)) != chains || int(a.shape(1)) != D)
    throw std::invalid_argument("ember: init must be an array of shape (chains, dim) = (" + std::to_string(chains) + ", " +
                                std::to_string(D) + ")");
  v.resize(std::size_t(chains));
  for (std::int64_t c = 0; c < chains; ++c)
    for (int d = 0; d < D; ++d) v[std::size_t(c)][d] = T(a.data()[c * D + d]);
  return v;
}

template <class U, class... Samplers>
std::unique_ptr<run_handle> make_run(U const& u, std::string const& sampler, settings const& s, nb::object init,
                                     std::string const* checkpoint) {
  std::unique_ptr<run_handle> out;
  auto const starts = starts_of<typename U::value_type, U::dim>(init, s.chains);
  auto one = [&]<class S>(S*) {
    if (out || sampler != S::name) return;
    if constexpr (requires { S::fixed_step; }) {
      if (!(s.step_size > 0 && std::isfinite(s.step_size)))
        throw std::invalid_argument("ember: sampler '" + sampler + "' has no warm-up and needs step_size > 0");
    }
    if (checkpoint)
      out = std::make_unique<run_of<U, S>>(u, s, *checkpoint);
    else
      out = std::make_unique<run_of<U, S>>(u, s, std::span<vec<typename U::value_type, U::dim> const>(starts));
  };
  (one(static_cast<Samplers*>(nullptr)), ...);
  if (!out) {
    std::string have;
    ((have += (have.empty() ? "" : ", ") + std::string(Samplers::name)), ...);
    throw std::invalid_argument("ember: sampler '" + sampler + "' is not compiled into this module (it has: " + have +
                                "; ember.compile(..., samplers=[...]) builds others)");
  }
  return out;
}

}  // namespace detail

namespace detail {
/// U and ∇U (0 where U has no gradient) at n points x (row-major n × dim, double) into u and g:
/// the energy's own arithmetic in its value type. What `energy(x)` returns.
template <class U>
void energy_rows(void const* energy, double const* x, std::int64_t n, double* u, double* g) {
  auto const& e = *static_cast<U const*>(energy);
  using T = typename U::value_type;
  for (std::int64_t i = 0; i < n; ++i) {
    vec<T, U::dim> p, grad;
    for (int d = 0; d < U::dim; ++d) p[d] = T(x[i * U::dim + d]);
    if constexpr (DifferentiableEnergy<U>) {
      u[i] = double(e.value_and_grad(p, grad));
      for (int d = 0; d < U::dim; ++d) g[i * U::dim + d] = double(grad[d]);
    } else {
      u[i] = double(e.value(p));
      for (int d = 0; d < U::dim; ++d) g[i * U::dim + d] = 0;
    }
  }
}
/// `energy_rows` for ember.jax's XLA handler (python/ember/jax.py), which calls it through
/// `_rows_entry` outside the GIL: nothing is thrown across the two libraries and XLA's frames; an
/// exception's message is returned instead (nullptr: success), in storage of the calling thread.
using rows_fn = char const* (*)(void const* energy, double const* x, std::int64_t n, double* u, double* g);
template <class U>
char const* energy_rows_for_ffi(void const* energy, double const* x, std::int64_t n, double* u, double* g) noexcept {
  thread_local std::string message;
  try {
    energy_rows<U>(energy, x, n, u, g);
    return nullptr;
  } catch (std::exception const& e) {
    message = e.what();
  } catch (...) {
    message = "ember: the energy threw an exception that is not a std::exception";
  }
  return message.c_str();
}
}  // namespace detail

template <class B, class T>
auto energy_of_body(data const& d) {
  auto body = [&] {
    if constexpr (std::is_constructible_v<B, data const&>) {
      return B(d);
    } else {
      static_assert(std::is_default_constructible_v<B>,
                    "ember.compile: the model struct needs a default constructor or a constructor taking "
                    "ember::python::data const& (its data from Python)");
      if (!d.names().empty())
        throw std::invalid_argument("ember: this model takes no data (its struct has no constructor taking "
                                    "ember::python::data const&)");
      return B{};
    }
  }();
  if constexpr (requires { B::params; }) {
    return ember::model<T>(body);
  } else {
    static_assert(DifferentiableEnergy<B>,
                  "ember.compile: the struct is neither a model (static constexpr auto params = ember::params(...) "
                  "and a body operator()(M& m)) nor an energy (dim, value_type, value(x), value_and_grad(x, g))");
    static_assert(std::is_same_v<typename B::value_type, T>, "ember.compile: the energy's value_type is not the dtype asked for");
    return body;
  }
}

/// The energy of a user's struct B for `ember.compile`: a factory (B has `static make(data
/// const&)` returning an energy, e.g. a built-in regression on the data), a model (B has
/// `params`: `ember::model<T>(B)`), or an energy itself. B is made from the data when it has a
/// constructor taking `data const&`, else default-constructed (and refuses data).
template <class B, class T>
auto energy_of(data const& d) {
  if constexpr (requires { B::make(d); }) {
    auto e = B::make(d);
    static_assert(DifferentiableEnergy<decltype(e)>, "ember.compile: B::make(data) must return an energy with a gradient");
    static_assert(std::is_same_v<typename decltype(e)::value_type, T>,
                  "ember.compile: B::make(data) returns an energy of another scalar type than the dtype asked for");
    return e;
  } else {
    return energy_of_body<B, T>(d);
  }
}

/// The Python class `name` for the energies `Factory` makes: `Factory` is a type with
/// `static auto make(data const&)` returning the energy (a built-in energy or `ember::model<T>(body)`),
/// and optionally `static constexpr char const* doc`.
template <class Factory, class... Samplers>
void bind_energy(nb::module_& m, char const* name) {
  using U = decltype(Factory::make(std::declval<data const&>()));
  struct holder {
    std::shared_ptr<data> d;
    U energy;
  };
  std::string doc = "An ember energy";
  if constexpr (requires { Factory::doc; }) doc = Factory::doc;
  auto cls = nb::class_<holder>(m, name, doc.c_str());
  cls.def("__init__",
           [](holder* self, nb::dict d) {
             auto owned = std::make_shared<data>(d);
             new (self) holder{owned, Factory::make(*owned)};
           },
           nb::arg("data") = nb::dict())
      .def_prop_ro_static("dim", [](nb::handle) { return U::dim; })
      .def_prop_ro_static("dtype", [](nb::handle) { return std::is_same_v<typename U::value_type, float> ? "float32" : "float64"; })
      .def_prop_ro_static("samplers", [](nb::handle) { return std::vector<std::string>{Samplers::name...}; })
      .def_prop_ro_static("is_model", [](nb::handle) { return detail::is_model<U>; })
      .def_prop_ro(
          "_rows_entry",
          [](holder const& h) -> nb::object {
            if constexpr (!DifferentiableEnergy<U>) {
              return nb::none();
            } else {
              detail::rows_fn const f = &detail::energy_rows_for_ffi<U>;
              return nb::make_tuple(std::uintptr_t(&h.energy), reinterpret_cast<std::uintptr_t>(f));
            }
          },
          "(address of the energy, address of detail::energy_rows_for_ffi for it): what ember.jax's XLA handler calls")
      .def(
          "energy",
          [](holder const& h, array_f64 x) {
            if (x.ndim() != 2 || int(x.shape(1)) != U::dim)
              throw std::invalid_argument("ember: energy takes points of shape (n, " + std::to_string(U::dim) + ")");
            std::int64_t const n = std::int64_t(x.shape(0));
            auto const rows = std::size_t(n);
            std::vector<double> e(rows), g(rows * std::size_t(U::dim));
            detail::energy_rows<U>(&h.energy, x.data(), n, e.data(), g.data());
            return nb::make_tuple(detail::owned_array(std::move(e), {std::size_t(n)}),
                                  detail::owned_array(std::move(g), {std::size_t(n), std::size_t(U::dim)}));
          },
          nb::arg("x"), "U(x) and its gradient at each row of x")
      .def(
          "start",
          [](holder const& h, std::string const& sampler, std::int64_t chains, std::int64_t warmup, std::int64_t thin,
             std::uint64_t seed, double step_size, nb::object init, double target_accept) {
            settings s{chains, warmup, thin, seed, step_size, target_accept};
            return detail::make_run<U, Samplers...>(h.energy, sampler, s, init, nullptr);
          },
          nb::arg("sampler"), nb::arg("chains"), nb::arg("warmup"), nb::arg("thin"), nb::arg("seed"),
          nb::arg("step_size") = 0.0, nb::arg("init") = nb::none(), nb::arg("target_accept") = 0.0, nb::keep_alive<0, 1>())
      .def(
          "load",
          [](holder const& h, std::string const& sampler, std::string const& path, std::int64_t chains,
             std::int64_t warmup, std::int64_t thin, double step_size, double target_accept) {
            settings s{chains, warmup, thin, 0, step_size, target_accept};
            return detail::make_run<U, Samplers...>(h.energy, sampler, s, nb::none(), &path);
          },
          nb::arg("sampler"), nb::arg("path"), nb::arg("chains"), nb::arg("warmup"), nb::arg("thin"),
          nb::arg("step_size") = 0.0, nb::arg("target_accept") = 0.0, nb::keep_alive<0, 1>());
  if constexpr (requires { Factory::reported(vec<double, U::dim>{}); }) {
    cls.def_static(
        "reported",
        [](array_f64 x) {
          if (x.ndim() != 2 || int(x.shape(1)) != U::dim)
            throw std::invalid_argument("ember: reported takes draws of shape (n, " + std::to_string(U::dim) + ")");
          std::int64_t const n = std::int64_t(x.shape(0));
          constexpr int R = decltype(Factory::reported(vec<double, U::dim>{}))::size();
          auto const rows = std::size_t(n);
          std::vector<double> out(rows * R);
          for (std::int64_t i = 0; i < n; ++i) {
            vec<double, U::dim> p;
            for (int d = 0; d < U::dim; ++d) p[d] = x.data()[i * U::dim + d];
            auto const r = Factory::reported(p);
            for (int d = 0; d < R; ++d) out[std::size_t(i * R + d)] = r[d];
          }
          return detail::owned_array(std::move(out), {rows, std::size_t(R)});
        },
        nb::arg("x"), "the target's reported coordinates of each draw (what reference() describes)");
  }
  if constexpr (requires { Factory::reference(); }) {
    cls.def_static("reference", [] {
      auto const r = Factory::reference();
      nb::dict out;
      auto arr = [](auto const& a) { return std::vector<double>(a.begin(), a.end()); };
      out["mean"] = arr(r.mean), out["second"] = arr(r.second), out["mean_se"] = arr(r.mean_se),
      out["second_se"] = arr(r.second_se), out["method"] = std::string(r.method);
      return out;
    }, "E[x_i], E[x_i^2] and their standard errors (0: exact), and how they were obtained");
  }
}

using array_f32 = nb::ndarray<float const, nb::c_contig, nb::device::cpu>;

/// A neural energy `mlp<float, In, Act, dynamic>` (docs/neural.md) for training loops in Python:
/// any hidden widths and, with `Act = nn::any`, any of ember's activations, given when the object
/// is made (`name(hidden, activation, parameter)`: hidden widths, an activation's name as
/// `nn::any::named` takes it, leaky_relu's slope or elu's alpha). Its parameters θ are set from a
/// flat float32 array in PyTorch's order (W0, b0, W1, b1, …, as
/// `torch.cat([p.reshape(-1) for p in net.parameters()])` gives them) and `langevin(x0, steps,
/// step_size, noise_scale, seed)` runs `steps` Langevin steps x ← x − η∇E + s√(2η)ξ from each row
/// of x0 (ember's fused ULA on E/s², SIMD batches of chains over threads), returning the new rows.
/// `Act` other than `nn::any` is that activation only.
template <int In, class Act = nn::any>
void bind_mlp(nb::module_& m, char const* name) {
  using net_type = ember::mlp<float, In, Act, ember::dynamic>;
  struct holder {
    std::vector<int> hidden;
    std::string activation;
    mlp_weights<float> w;  // the network views these
    net_type net;
    static std::vector<int> widths(std::vector<int> const& h) {
      if (h.empty()) throw std::invalid_argument("ember: a network needs at least one hidden layer");
      for (int v : h)
        if (v < 1) throw std::invalid_argument("ember: hidden widths must be positive, got " + std::to_string(v));
      std::vector<int> ws{In};
      ws.insert(ws.end(), h.begin(), h.end());
      ws.push_back(1);
      return ws;
    }
    static Act activation_of(std::string const& a, std::optional<double> p) {
      if constexpr (std::is_same_v<Act, nn::any>) {
        return nn::any::named(a, p);
      } else {
        if (a != Act::name || p)
          throw std::invalid_argument(std::string("ember: this network's activation is ") + Act::name + " without a parameter");
        return Act{};
      }
    }
    holder(std::vector<int> h, std::string a, std::optional<double> p)
        : hidden(std::move(h)), activation(std::move(a)), w(mlp_weights<float>::uniform(widths(hidden), 0)),
          net(w, {}, activation_of(activation, p)) {}
    holder(holder const&) = delete;  // net views w: a copy would view the original's weights
    holder& operator=(holder const&) = delete;
  };
  auto points = [](array_f32 const& x, char const* what) {
    if (x.ndim() != 2 || int(x.shape(1)) != In)
      throw std::invalid_argument(std::string("ember: ") + what + " must be an array of shape (n, " + std::to_string(In) +
                                  "), got " + std::to_string(x.ndim()) + " dimensions");
    return std::int64_t(x.shape(0));
  };
  nb::class_<holder>(m, name)
      .def(nb::init<std::vector<int>, std::string, std::optional<double>>(), nb::arg("hidden"), nb::arg("activation") = "silu",
           nb::arg("parameter") = nb::none())
      .def_prop_ro_static("input_width", [](nb::handle) { return In; })
      .def_prop_ro("hidden", [](holder const& h) { return h.hidden; })
      .def_prop_ro("activation", [](holder const& h) { return h.activation; })
      .def_prop_ro("parameter_count", [](holder const& h) { return std::int64_t(h.w.parameters().size()); })
      .def(
          "set_parameters",
          [](holder& h, array_f32 theta) {
            auto dst = h.w.parameters();
            if (theta.ndim() != 1 || theta.shape(0) != dst.size())
              throw std::invalid_argument("ember: the network has " + std::to_string(dst.size()) +
                                          " parameters (W0, b0, W1, b1, ... in PyTorch's order); got an array of " +
                                          std::to_string(theta.size()));
            for (std::size_t i = 0; i < dst.size(); ++i)  // all checked before any is written
              if (!std::isfinite(theta.data()[i]))
                throw std::invalid_argument("ember: parameter " + std::to_string(i) + " of the network is not finite");
            std::copy_n(theta.data(), dst.size(), dst.begin());
          },
          nb::arg("theta"))
      .def(
          "energy",
          [points](holder const& h, array_f32 x) {
            std::int64_t const n = points(x, "x");
            std::vector<float> e(static_cast<std::size_t>(n)), g(static_cast<std::size_t>(n) * In);
            for (std::int64_t i = 0; i < n; ++i) {
              vec<float, In> p, grad;
              for (int d = 0; d < In; ++d) p[d] = x.data()[i * In + d];
              e[std::size_t(i)] = h.net.value_and_grad(p, grad);
              for (int d = 0; d < In; ++d) g[std::size_t(i * In + d)] = grad[d];
            }
            return nb::make_tuple(detail::owned_array(std::move(e), {std::size_t(n)}),
                                  detail::owned_array(std::move(g), {std::size_t(n), std::size_t(In)}));
          },
          nb::arg("x"), "E(x) and its gradient at each row of x")
      .def(
          "langevin",
          [points](holder const& h, array_f32 x0, std::int64_t steps, double step_size, double noise_scale,
                   std::uint64_t seed) {
            std::int64_t const n = points(x0, "x0");
            if (n < 1) throw std::invalid_argument("ember: langevin needs at least one point");
            if (steps < 1) throw std::invalid_argument("ember: langevin needs steps >= 1, got " + std::to_string(steps));
            if (!(step_size > 0 && std::isfinite(step_size)) || !(noise_scale > 0 && std::isfinite(noise_scale)))
              throw std::invalid_argument("ember: step_size and noise_scale must be positive and finite");
            std::vector<vec<float, In>> init(static_cast<std::size_t>(n));
            for (std::int64_t i = 0; i < n; ++i)
              for (int d = 0; d < In; ++d) init[std::size_t(i)][d] = x0.data()[i * In + d];
            double const s2 = noise_scale * noise_scale;
            std::vector<float> out(static_cast<std::size_t>(n) * In);
            std::int64_t diverged = 0;
            {
              nb::gil_scoped_release release;
              auto const res = ember::sample(ember::ula(h.net / float(s2), {.step_size = step_size * s2}),
                                             {.chains = n, .steps = steps, .seed = seed,
                                              .init = std::span<vec<float, In> const>(init), .progress = false});
              auto const f = res.final_states();
              for (std::int64_t i = 0; i < n; ++i)
                for (int d = 0; d < In; ++d) out[std::size_t(i * In + d)] = f[std::size_t(d * n + i)];
              diverged = res.divergent_chains();
            }
            if (diverged > 0)
              throw std::runtime_error("ember: " + std::to_string(diverged) + " of " + std::to_string(n) +
                                       " Langevin chains went non-finite (a step size too large for this energy?)");
            return detail::owned_array(std::move(out), {std::size_t(n), std::size_t(In)});
          },
          nb::arg("x0"), nb::arg("steps"), nb::arg("step_size"), nb::arg("noise_scale") = 1.0, nb::arg("seed") = 0);
}

/// The run class, once per module.
inline void bind_runs(nb::module_& m) {
  nb::class_<run_handle>(m, "RunHandle")
      .def("advance", &run_handle::advance, nb::arg("n"), nb::arg("progress") = nb::none())
      .def("result", &run_handle::result)
      .def("advance_and_result", &run_handle::advance_and_result, nb::arg("n"), nb::arg("progress") = nb::none())
      .def("save", &run_handle::save, nb::arg("path"))
      .def_prop_ro("transitions", &run_handle::transitions)
      .def_prop_ro("chains", &run_handle::chains)
      .def_prop_ro("warmup", &run_handle::warmup)
      .def_prop_ro("sampler", &run_handle::sampler);
}

}  // inline namespace EMBER_PYTHON_NAMESPACE
}  // namespace ember::python
