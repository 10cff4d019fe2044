"""Peers of ember's benchmark matrix: BlackJAX and NumPyro on ember's reference targets.

    python bench/peers/matrix_peer.py --targets-dir DIR [--target NAME,...] [--impl blackjax,numpyro]
        [--sampler nuts,nuts_dense,chees,mala,mams] [--chains 128] [--warmup 1000] [--draws 1000]
        [--precision float|double] [--seed 1]

DIR holds the JSON files of build/bench/ember_export_targets (bench/export_targets.cpp); each
target's log-density is built from it and checked against ember's energy first (targets.py).
Prints one JSON line per (impl, target, sampler) in the contract of bench/peers/metrics.py.
Configurations, all chains vmapped, starts x0 ~ N(0, I) in sampled coordinates:
- blackjax nuts:  blackjax.window_adaptation(blackjax.nuts), Stan's windows, diagonal inverse
  mass matrix, target acceptance 0.8, one adaptation per chain (vmapped), then blackjax.nuts.
- blackjax nuts_dense, numpyro nuts_dense: the same NUTS with a dense inverse mass matrix
  (window_adaptation(is_mass_matrix_diagonal=False); NUTS(dense_mass=True)), against ember's
  nuts_dense (ember_matrix_dense).
- blackjax chees: blackjax.chees_adaptation (cross-chain, Adam learning rate 0.025, diagonal mass
  matrix estimated over the warm-up's second half), then blackjax.dynamic_hmc with the adapted
  step size, mass matrix and Halton-jittered trajectory length (as chees_adaptation's docs).
  Target acceptance 0.651 (BlackJAX's default) of the harmonic mean over chains of each step's
  acceptance probability, which is what "acceptance" reports for it.
- blackjax mala:  blackjax.mala with its step size tuned per chain by BlackJAX's dual averaging
  (blackjax.adaptation.step_size.dual_averaging_adaptation, target acceptance 0.574). BlackJAX's
  MALA takes no mass matrix, so no preconditioner.
- blackjax mams: blackjax.adjusted_mclmc_dynamic (isokinetic McLachlan, 2 gradients a step; a
  uniform unit velocity each transition; ceil(u s) steps with u uniform per chain and per
  transition, averaging L/eps) tuned per chain (vmapped) by
  blackjax.adjusted_mclmc_find_L_and_step_size with its defaults (target acceptance 0.9 as
  BlackJAX's docs and the MAMS paper use, diagonal preconditioning, frac_tune1 = frac_tune2 =
  0.1, frac_tune3 = 0, mean steps L/eps pinned at 2). Its tuning runs 2 n1 + n2 transitions for
  num_steps = n1 / 0.1, so num_steps = warmup / 0.3 gives the same warm-up budget.
- numpyro nuts:   numpyro.infer.NUTS on the potential -log p, vmapped over chains as
  MCMC(chain_method="vectorized") does, Stan-style warm-up (diagonal mass matrix), target
  acceptance 0.8.
Times: every peer's warm-up and sampling functions are compiled ahead of time
(jax.jit(f).lower(...).compile(); compile_s = both compile times) and then timed apart, each
blocked until its results are ready. For NumPyro that means NUTS.init/NUTS.sample in lax.scan
rather than MCMC.run, which recompiles on every call.
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
import time
import traceback

import common  # noqa: F401  (threads, affinity, XLA_FLAGS: before jax)

import jax
import jax.numpy as jnp
import numpy as np

import metrics
import targets

SAMPLERS = {"blackjax": ("nuts", "nuts_dense", "chees", "mala", "mams"), "numpyro": ("nuts", "nuts_dense")}
INFO_KEYS = {"num_integration_steps", "is_divergent", "acceptance_rate"}


def _ready(x):
    return jax.block_until_ready(x)


def _aot(fn, *args):
    t0 = time.perf_counter()
    compiled = jax.jit(fn).lower(*args).compile()
    return compiled, time.perf_counter() - t0


def _timed(fn, *args):
    t0 = time.perf_counter()
    out = _ready(fn(*args))
    return out, time.perf_counter() - t0


def _np(x):
    return np.asarray(x, dtype=np.float64)


# --------------------------------------------------------------------------- BlackJAX
def blackjax_nuts(t, chains, warmup, draws, key, x0, dense=False):
    import blackjax
    from blackjax.adaptation.base import get_filter_adapt_info_fn

    adapt = blackjax.window_adaptation(blackjax.nuts, t.logdensity, is_mass_matrix_diagonal=not dense,
                                       target_acceptance_rate=0.8,
                                       adaptation_info_fn=get_filter_adapt_info_fn(info_keys=INFO_KEYS))

    def warm(keys, x):
        (state, params), info = jax.vmap(lambda k, xi: adapt.run(k, xi, num_steps=warmup))(keys, x)
        return state, params["step_size"], params["inverse_mass_matrix"], info.info.num_integration_steps

    def sample(keys, state, step_size, imm):
        def chain(k, s, eps, m):
            kernel = blackjax.nuts(t.logdensity, step_size=eps, inverse_mass_matrix=m)

            def step(s, k):
                s, i = kernel.step(k, s)
                return s, (s.position, i.num_integration_steps, i.is_divergent, i.acceptance_rate)
            return jax.lax.scan(step, s, jax.random.split(k, draws))[1]
        return jax.vmap(chain)(keys, state, step_size, imm)

    kw, ks = jax.random.split(key)
    kws, kss = jax.random.split(kw, chains), jax.random.split(ks, chains)
    warm_c, c1 = _aot(warm, kws, x0)
    (state, eps, imm, wsteps), warmup_s = _timed(warm_c, kws, x0)
    sample_c, c2 = _aot(sample, kss, state, eps, imm)
    (pos, steps, div, acc), sampling_s = _timed(sample_c, kss, state, eps, imm)
    return dict(compile_s=c1 + c2, warmup_s=warmup_s, sampling_s=sampling_s, positions=_np(pos),
                grads_warmup=_np(wsteps).sum(axis=1), grads_sampling=_np(steps), divergences=int(np.sum(div)),
                acceptance=float(np.mean(acc)), target_acceptance=0.8)


def blackjax_chees(t, chains, warmup, draws, key, x0):
    import blackjax
    import optax
    from blackjax.adaptation.base import get_filter_adapt_info_fn
    from blackjax.adaptation.chees_adaptation import OPTIMAL_TARGET_ACCEPTANCE_RATE
    from blackjax.mcmc.dynamic_hmc import halton_sequence

    adapt = blackjax.chees_adaptation(t.logdensity, chains, mass_matrix_estimation="diagonal",
                                      adaptation_info_fn=get_filter_adapt_info_fn(info_keys=INFO_KEYS))
    init_step = jnp.asarray(0.1, x0.dtype)

    def warm(k, x):
        (state, p), info = adapt.run(k, x, init_step, optax.adam(0.025), warmup, max_sampling_steps=draws)
        return (state, p["step_size"], p["inverse_mass_matrix"], p["integration_steps_params"][0],
                info.info.num_integration_steps)

    # chees_adaptation's own trajectory jitter (Halton sequence, jitter_amount 1), rebuilt here
    # because its parameters hold closures, which cannot leave a compiled function.
    max_bits = np.ceil(np.log2(warmup + draws))
    steps_fn = lambda i, n: jnp.asarray(jnp.ceil(halton_sequence(i, max_bits) * n), dtype=int)

    def sample(keys, state, eps, imm, n_leapfrog):
        kernel = blackjax.dynamic_hmc(t.logdensity, step_size=eps, inverse_mass_matrix=imm,
                                      next_random_arg_fn=lambda i: i + 1, integration_steps_fn=steps_fn,
                                      integration_steps_params=(n_leapfrog,))

        def step(s, ks):
            s, i = jax.vmap(kernel.step)(ks, s)
            return s, (s.position, i.num_integration_steps, i.is_divergent, i.acceptance_rate)
        out = jax.lax.scan(step, state, keys)[1]
        return jax.tree.map(lambda a: jnp.swapaxes(a, 0, 1), out)  # (chains, draws, ...)

    kw, ks = jax.random.split(key)
    kss = jax.vmap(lambda k: jax.random.split(k, chains))(jax.random.split(ks, draws))
    warm_c, c1 = _aot(warm, kw, x0)
    (state, eps, imm, n_leap, wsteps), warmup_s = _timed(warm_c, kw, x0)
    sample_c, c2 = _aot(sample, kss, state, eps, imm, n_leap)
    (pos, steps, div, acc), sampling_s = _timed(sample_c, kss, state, eps, imm, n_leap)
    # ChEES tunes the step to the harmonic mean over chains of each step's acceptance probability
    # (its arithmetic mean sits higher, 0.77 on standard_normal): report what it aims at.
    harmonic = 1.0 / np.mean(1.0 / np.maximum(_np(acc), 1e-300), axis=0)
    return dict(compile_s=c1 + c2, warmup_s=warmup_s, sampling_s=sampling_s, positions=_np(pos),
                grads_warmup=_np(wsteps).sum(axis=0), grads_sampling=_np(steps), divergences=int(np.sum(div)),
                acceptance=float(np.mean(harmonic)), target_acceptance=OPTIMAL_TARGET_ACCEPTANCE_RATE)


def blackjax_mala(t, chains, warmup, draws, key, x0):
    import blackjax
    from blackjax.adaptation.step_size import dual_averaging_adaptation

    target_acc = 0.574
    da_init, da_update, da_final = dual_averaging_adaptation(target=target_acc)
    kernel = blackjax.mala.build_kernel()

    def warm(keys, x):
        def chain(k, xi):
            def step(carry, k):
                s, da = carry
                s, i = kernel(k, s, t.logdensity, jnp.exp(da.log_step_size).astype(xi.dtype))
                return (s, da_update(da, i.acceptance_rate)), None
            (s, da), _ = jax.lax.scan(step, (blackjax.mala.init(xi, t.logdensity), da_init(0.1)),
                                      jax.random.split(k, warmup))
            return s, da_final(da).astype(xi.dtype)
        return jax.vmap(chain)(keys, x)

    def sample(keys, state, eps):
        def chain(k, s, e):
            def step(s, k):
                s, i = kernel(k, s, t.logdensity, e)
                return s, (s.position, i.acceptance_rate)
            return jax.lax.scan(step, s, jax.random.split(k, draws))[1]
        return jax.vmap(chain)(keys, state, eps)

    kw, ks = jax.random.split(key)
    kws, kss = jax.random.split(kw, chains), jax.random.split(ks, chains)
    warm_c, c1 = _aot(warm, kws, x0)
    (state, eps), warmup_s = _timed(warm_c, kws, x0)
    sample_c, c2 = _aot(sample, kss, state, eps)
    (pos, acc), sampling_s = _timed(sample_c, kss, state, eps)
    return dict(compile_s=c1 + c2, warmup_s=warmup_s, sampling_s=sampling_s, positions=_np(pos),
                grads_warmup=np.full(chains, float(warmup)), grads_sampling=np.ones((chains, draws)),
                divergences=0, acceptance=float(np.mean(acc)), target_acceptance=target_acc)


def blackjax_mams(t, chains, warmup, draws, key, x0):
    import blackjax
    from blackjax.mcmc import adjusted_mclmc_dynamic as amd
    from blackjax.mcmc.integrators import isokinetic_mclachlan

    grads_per_step = 2  # isokinetic McLachlan: two gradients per integrator step
    target_acc = 0.9
    kernel = amd.build_kernel(integrator=isokinetic_mclachlan,
                              integration_steps_fn=amd.make_random_trajectory_length_fn(True))
    num_steps = int(round(warmup / 0.3))

    def warm(keys, x):
        def chain(k, xi):
            k_init, k_tune = jax.random.split(k)
            state = amd.init(xi, t.logdensity, k_init)
            state, params, n_steps = blackjax.adjusted_mclmc_find_L_and_step_size(
                mclmc_kernel=kernel, logdensity_fn=t.logdensity, num_steps=num_steps, state=state,
                rng_key=k_tune, target=target_acc)
            return state, params.step_size, params.L, params.inverse_mass_matrix, n_steps
        return jax.vmap(chain)(keys, x)

    def sample(keys, state, eps, L, imm):
        def chain(k, s, e, l, m):
            def step(s, k):
                s, i = kernel(rng_key=k, state=s, logdensity_fn=t.logdensity, step_size=e, inverse_mass_matrix=m,
                              integration_steps_params=(l / e,))
                return s, (s.position, i.num_integration_steps, i.is_divergent, i.acceptance_rate)
            return jax.lax.scan(step, s, jax.random.split(k, draws))[1]
        return jax.vmap(chain)(keys, state, eps, L, imm)

    kw, ks = jax.random.split(key)
    kws, kss = jax.random.split(kw, chains), jax.random.split(ks, chains)
    warm_c, c1 = _aot(warm, kws, x0)
    (state, eps, L, imm, wsteps), warmup_s = _timed(warm_c, kws, x0)
    sample_c, c2 = _aot(sample, kss, state, eps, L, imm)
    (pos, steps, div, acc), sampling_s = _timed(sample_c, kss, state, eps, L, imm)
    return dict(compile_s=c1 + c2, warmup_s=warmup_s, sampling_s=sampling_s, positions=_np(pos),
                grads_warmup=grads_per_step * _np(wsteps), grads_sampling=grads_per_step * _np(steps),
                divergences=int(np.sum(div)), acceptance=float(np.mean(acc)), target_acceptance=target_acc)


# --------------------------------------------------------------------------- NumPyro
def numpyro_nuts(t, chains, warmup, draws, key, x0, dense=False):
    from numpyro.infer import NUTS

    # NUTS's own init and sample (what MCMC(chain_method="vectorized") runs: the kernel vmapped
    # over chains, Stan-style adaptation during the first `warmup` calls of sample), driven by
    # lax.scan so that warm-up and sampling compile ahead of time like BlackJAX's. MCMC.run itself
    # recompiles on every call, which would put compile time into both phases.
    kernel = NUTS(potential_fn=lambda x: -t.logdensity(x), target_accept_prob=0.8, dense_mass=dense)
    raw_keys = jax.random.split(jax.random.key_data(key), chains)  # a batch: NUTS.init vmaps over it
    state = kernel.init(raw_keys, warmup, init_params=x0, model_args=(), model_kwargs={})

    def run(s, n, fields):
        def step(s, _):
            s = kernel.sample(s, (), {})
            return s, tuple(getattr(s, f) for f in fields)
        s, out = jax.lax.scan(step, s, None, length=n)
        return s, tuple(jnp.swapaxes(o, 0, 1) for o in out)  # (chains, steps, ...)

    warm = lambda s: run(s, warmup, ("num_steps",))
    sample = lambda s: run(s, draws, ("z", "num_steps", "diverging", "accept_prob"))[1]
    warm_c, c1 = _aot(warm, state)
    (state, (wsteps,)), warmup_s = _timed(warm_c, state)
    sample_c, c2 = _aot(sample, state)
    (pos, steps, div, acc), sampling_s = _timed(sample_c, state)
    return dict(compile_s=c1 + c2, warmup_s=warmup_s, sampling_s=sampling_s, positions=_np(pos),
                grads_warmup=_np(wsteps).sum(axis=1), grads_sampling=_np(steps), divergences=int(np.sum(div)),
                acceptance=float(np.mean(acc)), target_acceptance=0.8)


RUNNERS = {("blackjax", "nuts"): blackjax_nuts, ("blackjax", "chees"): blackjax_chees,
           ("blackjax", "nuts_dense"): functools.partial(blackjax_nuts, dense=True),
           ("numpyro", "nuts_dense"): functools.partial(numpyro_nuts, dense=True),
           ("blackjax", "mala"): blackjax_mala, ("blackjax", "mams"): blackjax_mams, ("numpyro", "nuts"): numpyro_nuts}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--targets-dir", required=True)
    ap.add_argument("--target", default="all", help="comma-separated names or 'all'")
    ap.add_argument("--impl", default="blackjax,numpyro")
    ap.add_argument("--sampler", default="nuts,chees,mala")
    ap.add_argument("--chains", type=int, default=128)
    ap.add_argument("--warmup", type=int, default=1000)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--precision", choices=("float", "double"), default="float")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    names = targets.TARGET_NAMES if a.target == "all" else tuple(s.strip() for s in a.target.split(","))
    for n in names:
        if n not in targets.TARGET_NAMES:
            ap.error(f"unknown target {n!r}; known: {', '.join(targets.TARGET_NAMES)}")
    impls = [s.strip() for s in a.impl.split(",")]
    wanted = [s.strip() for s in a.sampler.split(",")]
    for i in impls:
        if i not in SAMPLERS:
            ap.error(f"unknown impl {i!r}; known: {', '.join(SAMPLERS)}")
    for s in wanted:
        if not any(s in v for v in SAMPLERS.values()):
            known = sorted({x for v in SAMPLERS.values() for x in v})
            ap.error(f"unknown sampler {s!r}; known: {', '.join(known)}")
    if min(a.chains, a.warmup, a.draws) < 1 or a.draws < 4:
        ap.error("--chains and --warmup must be >= 1 and --draws >= 4")
    if a.precision == "double":
        jax.config.update("jax_enable_x64", True)
    dtype = jnp.float64 if a.precision == "double" else jnp.float32

    status = 0
    for name in names:
        tgt = targets.load(a.targets_dir, name, dtype)  # raises TargetMismatch: stop, loudly
        x0 = jax.random.normal(jax.random.key(a.seed), (a.chains, tgt.dim), dtype=dtype)
        for impl in impls:
            for sampler in wanted:
                common_keys = dict(impl=impl, sampler=sampler, precision=a.precision)
                if sampler not in SAMPLERS[impl]:
                    continue
                print(f"[matrix_peer] {impl} {sampler} on {name} ({a.chains} chains, {a.warmup} + {a.draws})",
                      file=sys.stderr, flush=True)
                try:
                    r = RUNNERS[(impl, sampler)](tgt, a.chains, a.warmup, a.draws,
                                                 jax.random.key(a.seed + 1000), x0)
                    draws = tgt.reported(r.pop("positions"))
                    metrics.emit(metrics.matrix_line(**common_keys, target=tgt, chains=a.chains,
                                                     warmup=a.warmup, draws=draws, seed=a.seed, **r))
                except Exception as exc:  # report and go on with the next configuration
                    traceback.print_exc(file=sys.stderr)
                    metrics.emit(metrics.skipped_line(**common_keys, target=name, chains=a.chains, warmup=a.warmup,
                                                      draws=a.draws, dim=tgt.dim, seed=a.seed,
                                                      reason=f"error: {type(exc).__name__}: {exc}"))
                    status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
