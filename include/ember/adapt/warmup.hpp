#pragma once
/// \file
/// `warmup_state<Kernel, Warmup>`: a run's warm-up as a fold of its adapters (adapt/adapter.hpp)
/// over the kernel's parameters. Before warm-up transition t the run asks for `kernel_at(t)`:
/// every adapter writes the parameters its state gives (`set`), and they are applied to the
/// pipeline's kernel in one fixed order (metric, step size, trajectory length, approach). After the
/// transition, `update` hands each adapter, in the order the warm-up lists them, what the
/// transition did (`warmup_step`: the kernel it ran, the chains' arrays, a reduction over chains
/// that runs on the backend), then lets each `settle` with everyone's new parameters, then runs
/// the per-chain adapters on the host arrays. After the last warm-up transition `frozen()` is the
/// kernel every later transition uses (`final`). The states are plain data, saved in checkpoints.
///
/// Also here: `warmup(n)`, the default warm-up (step size and a metric, `auto_mass()`).

#include <ember/adapt/adapter.hpp>
#include <ember/adapt/approach.hpp>
#include <ember/adapt/chees.hpp>
#include <ember/adapt/mams_length.hpp>
#include <ember/adapt/mass.hpp>
#include <ember/adapt/mass_windows.hpp>
#include <ember/adapt/per_chain_step_size.hpp>
#include <ember/adapt/step_size.hpp>
#include <ember/detail/checkpoint.hpp>
#include <ember/pipeline/pipeline.hpp>

#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace ember {

/// `warmup(n)`: n transitions of step size and metric adaptation (step_size(), auto_mass(): a
/// diagonal metric, or a dense one where the coordinates correlate enough to pay, adapt/mass.hpp);
/// `warmup(n, adapters...)` names them (pipeline/stages.hpp).
inline warmup_stage<step_size_adapter, auto_mass_adapter> warmup(std::int64_t n) {
  return {detail::checked_count("ember::warmup", "n", n, 0), {}};
}

namespace detail {

// dst = src for kernels that cannot be assigned (an energy holding a lambda is copyable but not
// assignable): destroy and copy-construct in place.
template <class K>
void reassign(K& dst, K const& src) {
  if (&dst == &src) return;
  K copy(src);
  std::destroy_at(&dst);
  std::construct_at(&dst, copy);
}

template <class A, class K>
using adapter_state_t = decltype(std::declval<A const&>().init(std::declval<K const&>(), warmup_setup{}));

// An adapter's per-chain states (none: an empty struct).
struct no_chain_states {};
template <class A>
struct chain_states_of {
  using type = no_chain_states;
};
template <per_chain_adapter A>
struct chain_states_of<A> {
  using type = std::vector<typename A::chain_state>;
};

template <class A, class K>
consteval bool is_adapter_for() {
  constexpr bool ok = requires(A const& a, K const& k, kernel_params<K>& p) {
    a.set(a.init(k, warmup_setup{}), p);
  };
  static_assert(ok, "ember::warmup: an adapter needs init(kernel, warmup_setup) and set(state, kernel_params&) members (adapt/adapter.hpp)");
  if constexpr (ok) static_assert(std::is_trivially_copyable_v<adapter_state_t<A, K>>,
                                  "ember::warmup: an adapter's state must be plain data (trivially copyable): checkpoints save its bytes");
  return ok;
}

}  // namespace detail

template <class Kernel, class W>
struct warmup_state;

template <class Kernel, class... A>
struct warmup_state<Kernel, warmup_stage<A...>> {
  using T = typename Kernel::value_type;
  static constexpr int D = Kernel::dim;
  static_assert((detail::is_adapter_for<A, Kernel>() && ...));
  static constexpr tunable tuned = warmup_stage<A...>::tuned;
  /// What the fused loop leaves for the adapters after each warm-up transition (the most any asks).
  static constexpr observe observes = [] {
    observe o = observe::nothing;
    ((o = int(detail::observes_of<A>()) > int(o) ? detail::observes_of<A>() : o), ...);
    return o;
  }();
  /// Whether an adapter keeps per-chain state (updated on the host arrays).
  static constexpr bool per_chain = (detail::per_chain_adapter<A> || ...);

  std::tuple<A...> adapters;
  std::tuple<detail::adapter_state_t<A, Kernel>...> states;
  std::tuple<typename detail::chain_states_of<A>::type...> chain_states;
  Kernel base;  ///< the pipeline's kernel: the adapters' parameters are applied to it
  std::int64_t length = 0, chains = 0;
  std::int64_t local = 0;  ///< this process's chains, whose per-chain states it keeps (run/group.hpp)

  warmup_state() = default;
  /// A warm-up of `chain_count` chains, of which this process keeps the per-chain states of
  /// `local` (all of them unless the chains are shared out over processes).
  warmup_state(Kernel const& k, warmup_stage<A...> const& w, std::int64_t chain_count, std::int64_t local_chains = -1)
      : warmup_state(k, w, chain_count, local_chains < 0 ? chain_count : local_chains, std::index_sequence_for<A...>{}) {}

  /// The parameters the adapters' states give now.
  kernel_params<Kernel> params() const {
    kernel_params<Kernel> p;
    each([&]<std::size_t I>(auto const& a) { a.set(std::get<I>(states), p); });
    return p;
  }

  /// The kernel of warm-up transition t (in its warm-up form where it has one: the unadjusted
  /// underdamped Langevin kernel then undoes what a Metropolis test would reject).
  Kernel kernel_at(std::int64_t) const {
    Kernel const k = params().applied_to(base);
    if constexpr (requires { k.in_warmup(); })
      return k.in_warmup();
    else
      return k;
  }

  /// Folds in warm-up transition t, which ran `used` (`kernel_at(t)`): every adapter's update, then
  /// every adapter's settle, then the per-chain adapters on `host()` (the run's arrays in host
  /// memory; `upload()` after).
  template <class Reduce, class Host, class Upload>
  void update(std::int64_t t, Kernel const& used, mass_windows const& windows, chain_view<T> const& view,
              Reduce const& reduce, Host&& host, Upload&& upload) {
    auto const before = params();
    warmup_step<Kernel, Reduce> step{t, length, chains, t + 1 == length, windows, used, view, reduce};
    each([&]<std::size_t I>(auto const& a) { a.update(std::get<I>(states), step); });
    auto const after = params();
    Kernel const next = after.applied_to(base);
    step.params = &after;
    step.next = &next;
    step.metric_changed = metric_differs(before, after);
    each([&]<std::size_t I>(auto const& a) {
      if constexpr (requires { a.settle(std::get<I>(states), step); }) a.settle(std::get<I>(states), step);
    });
    if constexpr (per_chain) {
      auto& arrays = host();
      each([&]<std::size_t I>(auto const& a) {
        if constexpr (detail::per_chain_adapter<std::remove_cvref_t<decltype(a)>>)
          a.update_chains(std::get<I>(states), std::span(std::get<I>(chain_states)), arrays, step);
      });
      upload();
    }
  }

  /// The tuned kernel kept after warm-up.
  Kernel frozen() const {
    return frozen([](auto mine) { return std::vector(mine.begin(), mine.end()); });
  }
  /// The same, with the per-chain states of every process: `gather(span of this process's)`
  /// returns every chain's, in chain order (run/group.hpp's all_gather).
  template <class Gather>
  Kernel frozen(Gather const& gather) const {
    kernel_params<Kernel> p;
    each([&]<std::size_t I>(auto const& a) {
      auto const& s = std::get<I>(states);
      if constexpr (detail::per_chain_adapter<std::remove_cvref_t<decltype(a)>>)
        a.final(s, std::span<typename std::remove_cvref_t<decltype(a)>::chain_state const>(
                       gather(std::span<typename std::remove_cvref_t<decltype(a)>::chain_state const>(std::get<I>(chain_states)))),
                p);
      else if constexpr (requires { a.final(s, p); })
        a.final(s, p);
      else
        a.set(s, p);
    });
    return p.applied_to(base);
  }

  /// What a result reports: the target acceptance and the adapters' warnings, with `kernel` the
  /// one the run uses now and `finished` whether warm-up is over.
  adapter_notes notes(Kernel const& kernel, bool finished) const {
    adapter_notes n;
    n.finished = finished;
    each([&]<std::size_t I>(auto const& a) {
      if constexpr (requires { a.notes(std::get<I>(states), kernel, n); }) a.notes(std::get<I>(states), kernel, n);
    });
    return n;
  }

  /// Each (c, donor): this process's chain c (its index here) takes chain `donor`'s per-chain
  /// adaptation state (donor: a global index into what `gather` returns, as in `frozen`): a stuck
  /// chain's restart. Collective where the chains are shared out: every process calls it, with
  /// its own moves or none.
  template <class Gather>
  void copy_chains(std::span<std::pair<std::int64_t, std::int64_t> const> moves, Gather const& gather) {
    each([&]<std::size_t I>(auto const&) {
      if constexpr (!std::is_same_v<std::tuple_element_t<I, decltype(chain_states)>, detail::no_chain_states>) {
        auto& v = std::get<I>(chain_states);
        using V = typename std::remove_cvref_t<decltype(v)>::value_type;
        auto const all = gather(std::span<V const>(v));
        for (auto const& [c, donor] : moves) v[std::size_t(c)] = all[std::size_t(donor)];
      }
    });
  }

  void save(detail::byte_writer& w) const {
    each([&]<std::size_t I>(auto const&) {
      w.put(std::get<I>(states));
      if constexpr (!std::is_same_v<std::tuple_element_t<I, decltype(chain_states)>, detail::no_chain_states>)
        w.put_vector(std::get<I>(chain_states));
    });
  }
  /// Reads what `save` wrote; `refuse(why)` throws for a state this pipeline's adapters cannot go on from.
  template <class Refuse>
  void load(detail::byte_reader& r, Refuse&& refuse) {
    each([&]<std::size_t I>(auto const& a) {
      auto& s = std::get<I>(states);
      r.get_bytes(s);
      if constexpr (requires { a.refuses(s); })
        if (char const* why = a.refuses(s)) refuse(why);
      if constexpr (!std::is_same_v<std::tuple_element_t<I, decltype(chain_states)>, detail::no_chain_states>) {
        using V = typename std::tuple_element_t<I, decltype(chain_states)>::value_type;
        std::get<I>(chain_states) = r.template get_vector<V>(std::uint64_t(local));
      }
    });
  }

 private:
  template <std::size_t... I>
  warmup_state(Kernel const& k, warmup_stage<A...> const& w, std::int64_t chain_count, std::int64_t local_chains,
               std::index_sequence<I...>)
      : adapters(w.adapters),
        states(std::get<I>(w.adapters).init(k, warmup_setup{w.n, chain_count, tuned, (detail::harmonic_of<A>() || ...)})...),
        base(k), length(w.n), chains(chain_count), local(local_chains) {
    each([&]<std::size_t J>(auto const& a) {
      using adapter = std::remove_cvref_t<decltype(a)>;
      if constexpr (detail::per_chain_adapter<adapter>)
        std::get<J>(chain_states).assign(std::size_t(local), a.init_chain(std::get<J>(states)));
      // The order-free application of parameters and the check that no two adapters write one
      // rest on `tunes`: an adapter that writes a parameter it does not declare is refused here.
      kernel_params<Kernel> p;
      a.set(std::get<J>(states), p);
      constexpr tunable declared = detail::tunes_of<adapter>();
      auto const undeclared = [&](bool written, tunable t, char const* what) {
        if (written && !any(declared, t))
          throw std::logic_error(std::string("ember::warmup: an adapter writes the ") + what +
                                 " but its `tunes` does not name it (static constexpr tunable tunes, adapt/adapter.hpp)");
      };
      undeclared(bool(p.step_size), tunable::step_size, "step size");
      undeclared(bool(p.metric), tunable::metric, "metric");
      undeclared(bool(p.trajectory_length) || bool(p.trajectory_steps), tunable::trajectory_length, "trajectory length");
      undeclared(bool(p.approach), tunable::approach, "approach");
    });
  }

  // f.template operator()<I>(adapter I), for every adapter in the warm-up's order.
  template <class F>
  void each(F&& f) const {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (f.template operator()<I>(std::get<I>(adapters)), ...);
    }(std::index_sequence_for<A...>{});
  }
  static bool metric_differs(kernel_params<Kernel> const& a, kernel_params<Kernel> const& b) {
    if (!a.metric || !b.metric) return bool(a.metric) != bool(b.metric);
    if constexpr (requires { *a.metric == *b.metric; })
      return !(*a.metric == *b.metric);  // auto_metric: its padding is not compared
    else
      return std::memcmp(&*a.metric, &*b.metric, sizeof *a.metric) != 0;
  }
};

/// A pipeline without warm-up: nothing to adapt.
template <class Kernel>
struct warmup_state<Kernel, no_warmup> {
  static constexpr observe observes = observe::nothing;
  static constexpr bool per_chain = false;
  static constexpr tunable tuned = tunable::nothing;
  Kernel base;
  warmup_state() = default;
  warmup_state(Kernel const& k, no_warmup const&, std::int64_t, std::int64_t = -1) : base(k) {}
  Kernel kernel_at(std::int64_t) const { return base; }
  template <class V, class Reduce, class Host, class Upload>
  void update(std::int64_t, Kernel const&, mass_windows const&, V const&, Reduce const&, Host&&, Upload&&) {}
  Kernel frozen() const { return base; }
  template <class Gather>
  Kernel frozen(Gather const&) const {
    return base;
  }
  adapter_notes notes(Kernel const&, bool finished) const {
    adapter_notes n;
    n.finished = finished;
    return n;
  }
  template <class Gather>
  void copy_chains(std::span<std::pair<std::int64_t, std::int64_t> const>, Gather const&) {}
  void save(detail::byte_writer&) const {}
  template <class Refuse>
  void load(detail::byte_reader&, Refuse&&) {}
};

}  // namespace ember
