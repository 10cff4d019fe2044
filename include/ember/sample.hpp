#pragma once
/// \file
/// `sample(pipeline, options, backend)`: checks everything that can be checked before any work,
/// allocates the result once, and hands the pipeline to the backend, which runs one fused loop
/// per chain. `sample(kernel, ...)` without stages is a pipeline with none.

#include <ember/backend/cpu.hpp>
#include <ember/backend/detail/host_memory.hpp>
#include <ember/core/concepts.hpp>
#include <ember/pipeline/pipeline.hpp>
#include <ember/result.hpp>
#include <ember/sample_options.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace ember {

namespace detail {

template <class P>
struct options_of {
  using type = sample_options<float, 1>;  // not a kernel: sample() says so in a static_assert
};
template <class P>
  requires requires { typename P::energy_type; }
struct options_of<P> {
  using type = sample_options<typename P::energy_type::value_type, P::energy_type::dim>;
};

// Every check that can fail before the run starts; throws std::invalid_argument or
// std::length_error with a sentence that names the problem and the number.
template <class P>
void validate(P const& pipe, schedule const& sch, typename options_of<P>::type const& opt) {
  using T = typename P::value_type;
  constexpr int D = P::dim;
  if (opt.chains <= 0)
    throw std::invalid_argument("ember::sample: the number of chains must be positive, got " +
                                std::to_string(opt.chains));
  if (opt.chains > std::int64_t(std::numeric_limits<std::uint32_t>::max()))
    throw std::invalid_argument("ember::sample: at most 4,294,967,295 chains (a chain index is 32 bits), got " +
                                std::to_string(opt.chains));
  if (opt.steps < 0)
    throw std::invalid_argument("ember::sample: the number of steps must be non-negative, got " +
                                std::to_string(opt.steps));
  if (sch.burn_in + sch.steps >= std::int64_t(std::numeric_limits<std::uint32_t>::max()))
    throw std::invalid_argument("ember::sample: burn-in plus steps must stay below 2^32 (a step index is 32 bits)");
  pipe.kernel.validate();
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
  // Memory: recorded draws, final states and per-chain flags (a backend checks its own scratch).
  long double bytes = (long double)opt.chains * (D * sizeof(T) + 9);
  if (P::records) bytes += (long double)sch.kept * D * opt.chains * sizeof(T);
  require_host_memory(bytes, "ember::sample",
                      with_commas((long double)sch.kept) + " kept draws x " + std::to_string(D) + " dimensions x " +
                          with_commas((long double)opt.chains) + " chains recorded",
                      "thin more, run fewer chains, or track moments instead of recording");
}

}  // namespace detail

struct sample_fn {
  template <class P, class Backend = backend::cpu>
  auto operator()(P const& p, typename detail::options_of<P>::type const& opt,
                  Backend const& backend = {}) const {
    static_assert(detail::is_pipeline<P>::value || TransitionKernel<P>,
                  "ember::sample needs a transition kernel (ula, mala, hmc, ...) or a pipeline "
                  "built from one with |");
    auto pipe = as_pipeline(p);
    using Pipe = decltype(pipe);
    using T = typename Pipe::value_type;
    constexpr int D = Pipe::dim;
    schedule sch = pipe.make_schedule(opt.steps);
    detail::validate(pipe, sch, opt);

    result<T, D> out;
    out.chains_ = opt.chains;
    out.sched_ = sch;
    auto C = std::size_t(opt.chains);
    if constexpr (Pipe::records) out.samples_.resize(std::size_t(sch.kept) * D * C);
    out.final_.resize(D * C);
    out.frozen_.assign(C, 0);
    out.diverged_at_.assign(C, -2);
    backend.run(pipe, sch, opt, out);
    return out;
  }
};

/// `sample(pipeline, {.chains, .steps, .seed, .init}, backend)`: runs `chains` independent chains
/// for burn-in + `steps` transitions and returns a `result`. Throws before any work for bad
/// input: no chains, a bad kernel parameter, a non-finite start state, or a run whose recorded
/// draws would not fit in memory.
inline constexpr sample_fn sample{};

}  // namespace ember
