"""Peer 'blackjax': BlackJAX kernels, jit-compiled, float32, CPU.

jax.vmap over chains of blackjax's per-chain kernel, inside lax.scan over
steps, the whole run under one jax.jit.  Per step the key is split into one
key per chain (the usual BlackJAX idiom).
- ULA (P1, P3, P4, P6): BlackJAX has no kernel named ULA/unadjusted Langevin;
  blackjax.sgld's step is x + eta * grad log p(x) + sqrt(2 eta) xi, so
  blackjax.sgld with an exact (full) gradient, jax.grad(log p), *is* ULA, and
  that kernel is what runs here.
- HMC (P2): blackjax.hmc(logdensity, step_size, inverse_mass_matrix=ones(d),
  num_integration_steps=L) (velocity Verlet, Metropolis accept).
- Gradient (P5): no BlackJAX API involved: jax.jit(jax.vmap(jax.grad(U))).
Compile time is reported apart ("compile_seconds" = warm-up run minus the
median of the timed runs).
Usage: python bench/peers/blackjax_peer.py [--case P1] [--quick]
--sweep: the GPU cases P1 and P7 (P7 at 10^3 ... 10^7 chains x 1,000 steps)
of bench/cuda_suite.cu instead, one JSON line per chain count with "device"
(bench/peers/gpu_sweep.py; bench/peers/gpu_peers.sh runs it on a GPU), with
--impl blackjax (default: the sgld-as-ULA kernel above) or --impl jax: ULA
written by hand in plain JAX (gradient P x - P mu, one normal draw of shape
(chains, dim) per step, the update vmapped over chains inside lax.scan, under
one jax.jit; no BlackJAX).  EMBER_JAX_DEVICE=gpu runs JAX on the GPU
(JAX_PLATFORMS=cuda; common's CPU-only XLA_FLAGS default is not applied);
without it JAX stays on the CPU, as in the CPU benchmark.
"""

from __future__ import annotations

import os
import sys

if os.environ.get("EMBER_JAX_DEVICE", "cpu").lower() in ("gpu", "cuda"):
    # before common, which defaults JAX_PLATFORMS to cpu and XLA_FLAGS to a CPU flag
    os.environ["JAX_PLATFORMS"] = "cuda"
    os.environ.setdefault("XLA_FLAGS", "")

import common  # sets threads/affinity/XLA_FLAGS; import before jax
import gpu_sweep

import jax
import jax.numpy as jnp
import numpy as np

import blackjax

IMPL = "blackjax"
F32 = jnp.float32


def make_energy(cfg):
    """Per-chain energy U(x) for x of shape (dim,)."""
    p = cfg["params"]
    if cfg["target"] == "gaussian":
        mu, _, prec = common.gaussian_params(cfg["dim"])
        mu, prec = jnp.asarray(mu, F32), jnp.asarray(prec, F32)

        def energy(x):
            r = x - mu
            return 0.5 * r @ (prec @ r)
        return energy
    if cfg["target"] == "double_well":
        h, b2 = p["h"], p["b"] ** 2

        def energy(x):
            return h * jnp.sum((x * x - b2) ** 2)
        return energy
    if cfg["target"] == "rosenbrock":
        a, b = p["a"], p["b"]

        def energy(x):
            xi, xn = x[:-1], x[1:]
            return jnp.sum((a - xi) ** 2 + b * (xn - xi * xi) ** 2)
        return energy
    raise ValueError(cfg["target"])


def _x0(cfg, seed):
    key = jax.random.key(seed)
    k0, krun = jax.random.split(key)
    x0 = jax.random.normal(k0, (cfg["chains"], cfg["dim"]), dtype=F32)
    return jax.block_until_ready(x0), krun


def run_ula(cfg, args):
    energy = make_energy(cfg)
    logdensity = lambda x: -energy(x)
    grad_logdensity = jax.grad(logdensity)
    # exact gradient "estimator": ignores the minibatch -> the sgld step is ULA
    sgld = blackjax.sgld(lambda position, minibatch: grad_logdensity(position))
    eta, n_chains, n_steps = cfg["params"]["eta"], cfg["chains"], cfg["steps"]

    def step(x, key):
        keys = jax.random.split(key, n_chains)
        x = jax.vmap(lambda k, xi: sgld.step(k, xi, None, eta))(keys, x)
        return x, None

    @jax.jit
    def run(key, x0):
        x, _ = jax.lax.scan(step, x0, jax.random.split(key, n_steps))
        return x

    note = "ULA = blackjax.sgld with the exact gradient (blackjax has no dedicated ULA kernel)"
    prepare = lambda i: _x0(cfg, args.seed + i)
    if "run_budget" in cfg:           # GPU sweep (gpu_sweep.py)
        return _sweep_measure(run, prepare, cfg, note)
    if cfg.get("aot_compile"):
        # long case: compile ahead of time (timed apart), no warm-up run
        x0, key = prepare(0)
        t0 = common.time.perf_counter()
        compiled = run.lower(key, x0).compile()
        compile_s = common.time.perf_counter() - t0
        del x0
        t = common.measure(lambda a: jax.block_until_ready(compiled(a[1], a[0])),
                           cfg["repeats"], prepare, warmup=False)
        return common.Outcome(t, np.asarray(t.result), compile_seconds=compile_s,
                              note=note + "; compiled ahead of time (jit.lower().compile()), "
                                          "no warm-up run")
    t = common.measure(lambda a: jax.block_until_ready(run(a[1], a[0])), cfg["repeats"],
                       prepare)
    return common.Outcome(t, np.asarray(t.result), compile_reported=True, note=note)


def run_hmc(cfg, args):
    energy = make_energy(cfg)
    p = cfg["params"]
    hmc = blackjax.hmc(lambda x: -energy(x), step_size=p["eps"],
                       inverse_mass_matrix=jnp.ones(cfg["dim"], F32),
                       num_integration_steps=p["L"])
    n_chains, n_steps = cfg["chains"], cfg["steps"]

    def step(carry, key):
        states, acc = carry
        keys = jax.random.split(key, n_chains)
        states, info = jax.vmap(hmc.step)(keys, states)
        return (states, acc + jnp.sum(info.is_accepted)), None

    @jax.jit
    def run(key, x0):
        states = jax.vmap(hmc.init)(x0)
        (states, acc), _ = jax.lax.scan(step, (states, jnp.int32(0)),
                                        jax.random.split(key, n_steps))
        return states.position, acc

    t = common.measure(lambda a: jax.block_until_ready(run(a[1], a[0])), cfg["repeats"],
                       lambda i: _x0(cfg, args.seed + i))
    x, acc = t.result
    rate = float(acc) / (n_chains * n_steps)
    return common.Outcome(t, np.asarray(x), compile_reported=True,
                          note="blackjax.hmc, inverse_mass_matrix=ones(d)",
                          extra={"accept_rate": round(rate, 4)})


def run_grad(cfg, args):
    energy = make_energy(cfg)
    grad = jax.jit(jax.vmap(jax.grad(energy)))
    x, _ = _x0(cfg, args.seed)
    call = lambda: jax.block_until_ready(grad(x))
    t0 = common.time.perf_counter()
    call()                                    # trace + compile + first run
    first = common.time.perf_counter() - t0
    inner = common.calibrate_inner(call)
    t = common.measure(lambda _: call(), cfg["repeats"], inner=inner)
    t.first = first
    return common.Outcome(t, (np.asarray(x), np.asarray(t.result)), compile_reported=True,
                          note="jax.jit(jax.vmap(jax.grad(U))), no blackjax API involved")


def _sweep_measure(run, prepare, cfg, note):
    t, _ = gpu_sweep.measure(lambda a: jax.block_until_ready(run(a[1], a[0])), prepare, cfg)
    return common.Outcome(t, np.asarray(t.result), compile_reported=True,
                          note=note + "; compile_seconds = warm-up run minus median")


def run_ula_jax(cfg, args):
    """ULA by hand in plain JAX: the update of one chain, vmapped over chains,
    inside lax.scan over steps, under one jit; hand-written gradient."""
    mu, _, prec = common.gaussian_params(cfg["dim"])
    bias = jnp.asarray(prec @ mu, F32)
    prec = jnp.asarray(prec, F32)
    eta, n_steps = cfg["params"]["eta"], cfg["steps"]
    s = float(np.sqrt(2.0 * eta))

    def update(x, z):                 # one chain: x, z of shape (dim,)
        return x - eta * (prec @ x - bias) + s * z

    def step(x, key):
        z = jax.random.normal(key, x.shape, dtype=F32)
        return jax.vmap(update)(x, z), None

    @jax.jit
    def run(key, x0):
        x, _ = jax.lax.scan(step, x0, jax.random.split(key, n_steps))
        return x

    return _sweep_measure(run, lambda i: _x0(cfg, args.seed + i), cfg,
                          "plain JAX ULA: jit(lax.scan(vmap(update))), gradient P x - P mu by hand, "
                          "one normal draw of shape (chains, dim) per step")


def device_name():
    return jax.devices()[0].device_kind


def _sweep_args(ap):
    ap.add_argument("--impl", choices=("blackjax", "jax"), default="blackjax",
                    help="blackjax: blackjax.sgld as ULA (default); jax: ULA by hand in plain JAX")


RUNNERS = {"P1": run_ula, "P2": run_hmc, "P3": run_ula, "P4": run_ula, "P5": run_grad,
           "P6": run_ula}


def _version():
    return (f"blackjax {blackjax.__version__}, jax {jax.__version__}, "
            f"jaxlib {jax.lib.__version__}, {jax.default_backend()}")


if __name__ == "__main__":
    if "--sweep" in sys.argv[1:]:
        sys.exit(gpu_sweep.main(lambda args: args.impl, __doc__,
                                {"blackjax": run_ula, "jax": run_ula_jax},
                                _version, device_name, extra_args=_sweep_args))
    sys.exit(common.main(IMPL, __doc__, RUNNERS,
                         lambda: f"blackjax {blackjax.__version__}, jax {jax.__version__}, "
                                 f"jaxlib {jax.lib.__version__}"))
