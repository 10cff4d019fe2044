#pragma once
/// \file
/// `track(statistics...)`: statistics over the live chains at every kept step, and the `trace`
/// they end in. A tracked statistic is a small value type; the three built in (`moments`,
/// `acceptance`, `mean_energy`) are written on the same protocol a user's own is:
///
///     struct S {
///       static constexpr char const* name = "...";  // its name in trace().statistic(name)
///       static constexpr int sums(int dim);          // doubles it sums over chains per kept step
///       template <int I, class Chain>                // chain c's I-th term, 0 ≤ I < sums(dim)
///       EMBER_HD double term(Chain const& c) const;
///       template <int D>                             // optional: what the trace keeps (host)
///       void finish(double const* sums, double live, trace<D>& out) const;
///     };
///
/// `c` is a `kept_chain<T, D>`: the chain's position `x`, its energy U(x) and the fraction of
/// transitions it accepted since the previous kept step. A backend adds every term of every live
/// chain in double (backend/cpu.hpp, backend/cuda.cuh); it never names a statistic. Without
/// `finish`, the trace keeps each sum's mean over the live chains under `name`
/// (`trace().statistic(name)(k, i)`). A statistic is trivially copyable, so that it travels to
/// a GPU with the pipeline; its data members, if any, are plain values (numbers, not data sets:
/// no backend moves a statistic's data to a device), and they are what `term` reads. `sums(dim)`
/// is at least 1. Names are distinct, so a statistic type is tracked once per pipeline.

#include <ember/core/config.hpp>
#include <ember/core/vec.hpp>

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace ember {

/// What a tracked statistic sees of one live chain at a kept step.
template <class T, int D>
struct kept_chain {
  static constexpr int dim = D;
  vec<T, D> const& x;
  T energy;
  double acceptance;  ///< accepted transitions since the previous kept step, over `thin`
};

/// One statistic that has no `finish` of its own: `width` means over live chains per kept step.
struct tracked_values {
  std::string name;
  int width = 0;
  std::vector<double> values;  ///< kept steps × width

  std::int64_t kept() const { return width > 0 ? std::int64_t(values.size()) / width : 0; }
  /// Its i-th mean at kept step k; std::out_of_range outside [0, kept()) × [0, width).
  double operator()(std::int64_t k, int i = 0) const {
    if (k < 0 || k >= kept() || i < 0 || i >= width)
      throw std::out_of_range("ember::trace::statistic(\"" + name + "\"): (" + std::to_string(k) + ", " + std::to_string(i) +
                              ") is not in [0, " + std::to_string(kept()) + ") x [0, " + std::to_string(width) + ")");
    return values[std::size_t(k) * std::size_t(width) + std::size_t(i)];
  }
};

/// Per-kept-step diagnostics over the chains still live at that step (`track(...)`).
/// The vectors of the built-in statistics have one entry per kept step (empty where not
/// tracked); `statistics` has one entry per statistic without a `finish` of its own.
/// A kept step at which no chain is live has `live_chains` 0 and zeros elsewhere (never 0/0).
template <int D>
struct trace {
  std::vector<std::int64_t> live_chains;
  std::vector<vec<double, D>> mean, variance;  ///< `moments`: per dimension, over chains
  std::vector<double> acceptance;              ///< `acceptance`: since the previous kept step
  std::vector<double> energy;                  ///< `mean_energy`: mean U over chains
  std::vector<tracked_values> statistics;      ///< statistics without a `finish`, in track order

  /// The statistic tracked under `name`; std::out_of_range, naming those tracked, if none.
  tracked_values const& statistic(std::string_view name) const {
    for (auto const& s : statistics)
      if (s.name == name) return s;
    std::string known;
    for (auto const& s : statistics) known += (known.empty() ? "" : ", ") + ("\"" + s.name + "\"");
    throw std::out_of_range("ember::trace::statistic: no statistic without a finish of its own is named \"" +
                            std::string(name) + "\"" +
                            (known.empty() ? std::string(" (there are none") : " (there are " + known) +
                            "; moments, acceptance and mean_energy are in trace's mean, variance, acceptance and energy)");
  }
};

/// `moments`: per dimension, the mean and variance over live chains (`trace::mean`,
/// `trace::variance`). Squares are taken in double: Σx² − n·mean² cancels badly when the mean is
/// large against the spread, so nothing here may round in float.
struct moments_t {
  static constexpr char const* name = "moments";
  static constexpr int sums(int dim) { return 2 * dim; }
  template <int I, class Chain>
  EMBER_HD double term(Chain const& c) const {
    constexpr int D = Chain::dim;
    if constexpr (I < D)
      return double(c.x[I]);
    else
      return double(c.x[I - D]) * double(c.x[I - D]);
  }
  template <int D>
  void finish(double const* s, double n, trace<D>& out) const {
    double const inv = n > 0 ? 1.0 / n : 0.0;
    vec<double, D> m, v;
    for (int d = 0; d < D; ++d) {
      m[d] = s[d] * inv;
      v[d] = n > 1 ? std::max(0.0, (s[D + d] - n * m[d] * m[d]) / (n - 1)) : 0.0;
    }
    out.mean.push_back(m);
    out.variance.push_back(v);
  }
};
/// `acceptance`: the mean over live chains of the fraction of transitions accepted since the
/// previous kept step (`trace::acceptance`).
struct acceptance_t {
  static constexpr char const* name = "acceptance";
  static constexpr int sums(int) { return 1; }
  template <int I, class Chain>
  EMBER_HD double term(Chain const& c) const {
    return c.acceptance;
  }
  template <int D>
  void finish(double const* s, double n, trace<D>& out) const {
    out.acceptance.push_back(s[0] * (n > 0 ? 1.0 / n : 0.0));
  }
};
/// `mean_energy`: the mean U over live chains (`trace::energy`).
struct mean_energy_t {
  static constexpr char const* name = "mean_energy";
  static constexpr int sums(int) { return 1; }
  template <int I, class Chain>
  EMBER_HD double term(Chain const& c) const {
    return double(c.energy);
  }
  template <int D>
  void finish(double const* s, double n, trace<D>& out) const {
    out.energy.push_back(s[0] * (n > 0 ? 1.0 / n : 0.0));
  }
};
inline constexpr moments_t moments{};
inline constexpr acceptance_t acceptance{};
inline constexpr mean_energy_t mean_energy{};

/// Whether S models the protocol above (checked with a one-dimensional float chain).
template <class S>
concept tracked_statistic = std::is_trivially_copyable_v<S> && requires(S const& s, kept_chain<float, 1> const& c) {
  { S::name } -> std::convertible_to<char const*>;
  { S::sums(1) } -> std::same_as<int>;
  { s.template term<0>(c) } -> std::convertible_to<double>;
};

/// The statistics of a pipeline, in `track` order: a trivially copyable aggregate (a std::tuple
/// is not trivially copyable), so that it is passed to a GPU kernel by value.
template <class... S>
struct statistics;
template <>
struct statistics<> {
  static constexpr int count = 0;
  template <int D>
  static constexpr int sums() {
    return 0;
  }
  template <int D>
  static constexpr bool sums_positive() {
    return true;
  }
};
template <class H, class... S>
struct statistics<H, S...> {
  static constexpr int count = 1 + sizeof...(S);
  template <int D>
  static constexpr int sums() {
    return H::sums(D) + statistics<S...>::template sums<D>();
  }
  template <int D>
  static constexpr bool sums_positive() {
    return H::sums(D) >= 1 && statistics<S...>::template sums_positive<D>();
  }
  H head;
  statistics<S...> tail;
};

/// `track(moments, acceptance, mean_energy, my_statistic{...})`: any statistics, each once.
template <class... S>
struct track_stage {
  static_assert((tracked_statistic<S> && ...),
                "ember::track takes tracked statistics: moments, acceptance, mean_energy, or a trivially copyable type "
                "with a name, sums(dim) and term<I>(chain) (ember/pipeline/track.hpp)");
  statistics<S...> stats;
};

namespace detail {
template <class... S>
consteval bool distinct_names() {
  std::string_view const names[] = {std::string_view(S::name)...};
  for (std::size_t i = 0; i < sizeof...(S); ++i)
    for (std::size_t j = i + 1; j < sizeof...(S); ++j)
      if (names[i] == names[j]) return false;
  return true;
}
// Built by aggregate initialisation, so a statistic needs no default constructor.
constexpr statistics<> pack_statistics() { return {}; }
template <class H, class... S>
constexpr statistics<H, S...> pack_statistics(H const& h, S const&... s) {
  return {h, pack_statistics(s...)};
}

/// S::sums(D) as a constant (so that device code reads a constant, not a host function's call).
template <class S, int D>
inline constexpr int sums_of = S::sums(D);

/// Term I of the flat list of every statistic's sums (statistic by statistic, in track order).
template <int I, int D, class Chain, class H, class... S>
EMBER_HD EMBER_INLINE double statistic_term(statistics<H, S...> const& p, Chain const& c) {
  constexpr int n = sums_of<H, D>;
  if constexpr (I < n)
    return double(p.head.template term<I>(c));
  else
    return statistic_term<I - n, D>(p.tail, c);
}

/// A trace from `kept` rows of sums, each [live chains, every statistic's sums in track order].
template <int D, class... S>
void finish_trace(statistics<S...> const& stats, double const* rows, std::int64_t kept, trace<D>& out) {
  if constexpr (sizeof...(S) > 0) {
    constexpr int stride = 1 + statistics<S...>::template sums<D>();
    auto each = [&](auto const& visit) {
      auto walk = [&](auto& self, auto const& p, int offset) -> void {
        using H = std::remove_cvref_t<decltype(p.head)>;
        visit(p.head, offset);
        if constexpr (requires { p.tail.head; }) self(self, p.tail, offset + H::sums(D));
      };
      walk(walk, stats, 1);
    };
    each([&](auto const& s, int) {
      if constexpr (!requires { s.finish((double const*)nullptr, 0.0, out); })
        out.statistics.push_back({std::string(s.name), std::remove_cvref_t<decltype(s)>::sums(D), {}});
    });
    for (std::int64_t k = 0; k < kept; ++k) {
      double const* a = rows + std::size_t(k) * stride;
      double const n = a[0];
      out.live_chains.push_back(std::int64_t(n));
      std::size_t next = 0;  // index of the next statistic without a finish
      each([&](auto const& s, int offset) {
        if constexpr (requires { s.finish(a + offset, n, out); }) {
          s.finish(a + offset, n, out);
        } else {
          auto& v = out.statistics[next++];
          for (int i = 0; i < v.width; ++i) v.values.push_back(n > 0 ? a[offset + i] / n : 0.0);
        }
      });
    }
  }
}
}  // namespace detail

/// `track(moments, acceptance, mean_energy)`, any subset, and statistics of one's own.
template <class... S>
constexpr track_stage<S...> track(S const&... s) {
  static_assert(sizeof...(S) > 0, "ember::track needs at least one statistic: moments, acceptance, mean_energy or one's own");
  if constexpr ((tracked_statistic<S> && ...)) {
    static_assert(detail::distinct_names<S...>(), "ember::track: two statistics have the same name");
    return {detail::pack_statistics(s...)};
  } else {
    return {};
  }
}

}  // namespace ember
