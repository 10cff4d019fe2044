#pragma once
/// \file
/// `sample(pipeline, options, backend)`: the one-line form of a run (run/run.hpp): start the chains,
/// advance them through warm-up, burn-in and `.steps` further transitions, and return the result.
/// Checks everything that can be checked before any work. `sample(kernel, ...)` without stages
/// is a pipeline with none.

#include <ember/run/run.hpp>

#include <cstdint>
#include <utility>

namespace ember {

struct sample_fn : detail::with_default_backend<sample_fn> {
  using with_default_backend::operator();
  template <class P, class Backend = backend::cpu>
  auto operator()(P const& p, typename detail::options_of<P>::type const& opt, Backend const& backend) const {
    if constexpr (!detail::is_pipeline<P>::value && !detail::has_energy_type<P>) {
      static_assert(detail::always_false<P>,
                    "ember::sample needs a transition kernel (ula, mala, hmc, ...) or a pipeline "
                    "built from one with |");
    } else if constexpr (detail::pipeline_or_kernel<P>()) {
      if constexpr (detail::backend_diagnosis<Backend, decltype(as_pipeline(p))>()) {
      if (opt.steps < 0)
        throw std::invalid_argument("ember::sample: the number of steps must be non-negative, got " +
                                    std::to_string(opt.steps));
      auto r = start(p, opt, backend);
      auto const& s = r.schedule();
      r.advance(detail::checked_add(s.keep_from(), opt.steps, "warm-up and burn-in plus steps"));
      return std::move(r).result();
      }
    }
  }
};

/// `sample(pipeline, {.chains, .steps, .seed, .init}, backend)`: runs `chains` independent chains
/// for warm-up + burn-in + `steps` transitions and returns a `result`. Throws before any work for
/// bad input: no chains, a bad kernel parameter, a non-finite start state, or a run whose recorded
/// draws would not fit in memory.
inline constexpr sample_fn sample{};

}  // namespace ember
