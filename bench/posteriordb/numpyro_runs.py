#!/usr/bin/env python3
"""NumPyro's NUTS with its defaults on the 19 posteriordb posteriors: a peer baseline (issue 26).

    bench/.venv-numpyro/bin/python bench/posteriordb/numpyro_runs.py [--only NAME] [--seed 1]
        [--chains 4] [--jsonl PATH] [--check] [--timeout 1800]

The venv: `python3.11 -m venv bench/.venv-numpyro && bench/.venv-numpyro/bin/pip install
--no-deps -r bench/posteriordb/requirements-numpyro.txt` (jax/jaxlib 0.10.2, numpyro 0.22.0,
ArviZ 0.23.4).

Log densities. Each posterior's log density on ember's unconstrained coordinates y (the `unames`
of pdb_models.py, in that order) is written here again in jax.numpy / jax.scipy (`LOGP`), following
pdb_models.py's formulas but not calling them; the data and design matrices come from pdb_models'
objects. Additive constants are dropped. float64 throughout (jax_enable_x64).

--check: for every posterior (or --only), at 20 points y_i = mean + 0.5 sd z_i (z_i ~ N(0, I),
mean and sd the reference's unconstrained moments) and y_0 = mean, compares
  - log-density differences: |(lj(y_i) - lj(y_0)) - (lp(y_i) - lp(y_0))| <= 1e-8 max(1, |lp(y_i)|,
    |lp(y_0)|), lj this file's JAX log density, lp pdb_models' NumPy/SciPy one (relative 1e-8 of
    the log density's size, since its differences cancel);
  - jax.grad(lj) against Richardson-extrapolated central differences of lp (steps h = 1e-3 sd and
    h/2 per coordinate): |g_j - fd_j| sd_j <= 1e-6 max(1, |g_j| sd_j) (errors in units of the
    log density's change per posterior sd); 1e-4 for gp_pois_regr, whose near-singular kernel
    matrix makes central differences noisy to ~1e-5 (see grad_tol; the C++ check uses 1e-4 too).
Exits 1 on any mismatch.

Runs (default). numpyro.infer.NUTS(potential_fn=lambda y: -logp(y)) with NumPyro's defaults
(target_accept_prob 0.8, diagonal mass matrix adaptation with Stan's windows, max_tree_depth 10,
step size found by find_reasonable_step_size and adapted by dual averaging), MCMC(num_warmup=1000,
num_samples=1000, num_chains=4, chain_method="sequential"), its progress bar left on (the default:
each iteration is a Python-level call of the jitted NUTS step, tqdm writing to the child process's
stderr, which is discarded). Why not progress_bar=False (which the NumPyro docs suggest for speed):
with chain_method="sequential", numpyro 0.22.0 then jits its whole collect loop
(numpyro.util._fori_collect_loop, with the jitted body as a static argument that is a new object
on every call) and so re-traces and re-compiles it for every chain of every call (seen: 3 compile
events per chain and phase, 2-3 s each for eight_schools), so compilation could not be kept out of
the timed run; with the progress bar the jitted step is cached and the timed run compiles
nothing. The price is NumPyro's per-iteration Python dispatch and its per-iteration diagnostics
string (a host sync), which are part of what NumPyro's default costs. Starts: uniform(-2, 2)
on the unconstrained coordinates (what NumPyro's default init_to_uniform does), given as
init_params, drawn with jax.random from PRNGKey(seed); the chains' keys are split from a second
key of the same seed. Warm-up and sampling are two calls, so that their gradients are counted
apart:
    mcmc.warmup(key, init_params=x0, extra_fields=("num_steps",), collect_warmup=True)
    mcmc.run(mcmc.post_warmup_state.rng_key, extra_fields=("num_steps", "diverging"))
Gradients: each leapfrog step is one gradient, and NUTS's `num_steps` counts the leapfrog steps of
an iteration; warm-up and sampling gradients are the sums of num_steps over the 1,000 + 1,000
iterations of all chains. Not counted (a few dozen per chain): the gradient at the start and the
steps of find_reasonable_step_size at the start and at the end of each adaptation window.

Time and compilation. MCMC caches its jitted NUTS step (MCMC._cache, numpyro.util.cached_by),
so the same MCMC object run again with the same shapes does not recompile it. Each posterior is
therefore run twice on one MCMC object with the same seed (same starts, same keys): the first run
compiles, the second is timed; the script checks that both give bit-identical draws and gradient
counts (`rerun_identical`), so they did the same work. Wall times are per call (warm-up, sampling),
each blocked until its results are ready. The script listens to JAX's compile events
(jax.monitoring: /jax/core/compile/{jaxpr_trace,jaxpr_to_mlir_module,backend_compile}_duration,
consecutive phases of one compilation). The timed run still has a few on posteriors whose log
density holds a lax.scan (arma11, garch11, hmm_example: 2 per chain, 0.05-0.1 s each): NUTS.init
evaluates the potential and its gradient eagerly at each chain's start (hmc_util.IntegratorState
init), and an eager scan is compiled anew on every call. That is compilation NumPyro repeats on
every MCMC run, but compilation still, so it is subtracted:
  seconds   = timed run's wall time (warm-up + sampling) - its compile events' seconds
              (`seconds_wall` is the raw wall time; `timed_compile_events`, `timed_compile_s`);
  compile_s = first run's wall time - seconds (all the compilation of a fresh run, with the
              Python overheads of first calls); `compile_events_s` sums the first run's events.

One CPU thread. Before JAX is imported the process pins itself to one CPU (sched_setaffinity to
CPU $NUMPYRO_RUNS_CPU, default 0; running it under `taskset -c 0` does the same) and sets
XLA_FLAGS=--xla_cpu_multi_thread_eigen=false, JAX_PLATFORMS=cpu, OMP/MKL/OPENBLAS_NUM_THREADS=1.
XLA:CPU sizes its intra-op thread pool from the affinity mask; XLA has no intra-op thread-count
flag (`intra_op_parallelism_threads` is a TensorFlow session option, and an unknown flag in
XLA_FLAGS aborts), so the mask is what enforces one thread of computation. The CPU used is
printed and recorded (`cpus`).

Diagnostics (ArviZ 0.23.4, the 4 chains pooled): min bulk and min tail ESS over the unconstrained
coordinates (az.ess, rank-normalised split chains), max R-hat (az.rhat, rank-normalised split)
over the unconstrained and constrained coordinates, constrained means (pdb_models' to_con of each
draw) with az.mcse(method="mean") against the reference: z = (m - ref) / sqrt(mcse^2 +
mcse_ref^2). Verdict "ok" when |z| < 5 on every constrained mean and max R-hat < 1.01. ESS/s =
min bulk ESS / seconds (warm-up + sampling, no compilation); gradients per ESS = (warm-up +
sampling gradients) / min bulk ESS.

Output: a markdown table on stdout (progress on stderr), and with --jsonl PATH one JSON line per
posterior. Each posterior runs in a child process of this script (--timeout seconds for both
runs; one that overruns is reported as skipped).
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# --- one CPU thread: before jax (and numpy's BLAS) is imported -------------------------------------
CPU = int(os.environ.get("NUMPYRO_RUNS_CPU", "0"))
for _v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_v] = "1"
if "--xla_cpu_multi_thread_eigen=false" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false").strip()
os.environ["JAX_PLATFORMS"] = "cpu"
os.environ["JAX_ENABLE_X64"] = "1"
os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
sys.dont_write_bytecode = True
if hasattr(os, "sched_setaffinity"):
    try:
        os.sched_setaffinity(0, {CPU})
    except OSError as e:
        print(f"warning: could not pin to CPU {CPU}: {e}", file=sys.stderr)

import numpy as np  # noqa: E402

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
from jax.nn import log_sigmoid  # noqa: E402
from jax.scipy.linalg import solve_triangular  # noqa: E402
from jax.scipy.special import logsumexp  # noqa: E402

import pdb_models as pm  # noqa: E402

REF_DIR = os.path.join(HERE, "reference")


# =================================================================================================
# Log densities in JAX, on the unconstrained coordinates (constants dropped)
# =================================================================================================
def _normal(x, mu, sd):  # log N(x | mu, sd) without the -log sqrt(2 pi)
    return -0.5 * ((x - mu) / sd) ** 2 - jnp.log(sd)


def _cauchy0(x, scale):  # log Cauchy(x | 0, scale) up to a constant (half-Cauchy on x > 0 alike)
    return -jnp.log1p((x / scale) ** 2)


def linreg_logp(p):
    X, yv = jnp.asarray(p.X), jnp.asarray(p.yv)
    n = yv.shape[0]
    d = p.d
    if isinstance(p, (pm.KidiqInteraction, pm.KidiqMomiq)):
        prior = lambda beta, sigma: _cauchy0(sigma, 2.5)  # noqa: E731
    elif isinstance(p, pm.Blr):
        prior = lambda beta, sigma: -0.5 * jnp.sum(beta ** 2) / 100.0 - 0.5 * sigma ** 2 / 100.0  # noqa: E731
    elif isinstance(p, pm.Kilpisjarvi):
        prior = lambda beta, sigma: (_normal(beta[0], d["pmualpha"], d["psalpha"])  # noqa: E731
                                     + _normal(beta[1], d["pmubeta"], d["psbeta"]))
    else:
        prior = lambda beta, sigma: 0.0  # noqa: E731  improper flat prior

    def logp(y):
        beta, s = y[:-1], y[-1]
        sigma = jnp.exp(s)
        r = yv - X @ beta
        ll = -n * s - 0.5 * jnp.sum(r ** 2) * jnp.exp(-2.0 * s)
        return ll + prior(beta, sigma) + s  # + log J of sigma = e^s

    return logp


def eight_schools_logp(p):
    yd, sd = jnp.asarray(p.d["y"], float), jnp.asarray(p.d["sigma"], float)

    def logp(y):
        tt, mu, s = y[:8], y[8], y[9]
        tau = jnp.exp(s)
        theta = mu + tau * tt
        return (-0.5 * jnp.sum(tt ** 2) - 0.5 * jnp.sum(((yd - theta) / sd) ** 2) - 0.5 * mu ** 2 / 25.0
                + _cauchy0(tau, 5.0) + s)

    return logp


def ark_logp(p):
    K = int(p.d["K"])
    yy = np.asarray(p.d["y"], float)
    T = len(yy)
    lags = jnp.asarray(np.array([[yy[t - k - 1] for k in range(K)] for t in range(K, T)]))  # (T-K, K)
    target = jnp.asarray(yy[K:])

    def logp(y):
        alpha, beta, s = y[0], y[1:1 + K], y[-1]
        sigma = jnp.exp(s)
        mu = alpha + lags @ beta
        return (-0.5 * alpha ** 2 / 100.0 - 0.5 * jnp.sum(beta ** 2) / 100.0 + _cauchy0(sigma, 2.5)
                - (T - K) * s - 0.5 * jnp.sum((target - mu) ** 2) * jnp.exp(-2.0 * s) + s)

    return logp


def arma11_logp(p):
    yy = jnp.asarray(p.d["y"], float)
    T = yy.shape[0]

    def logp(y):
        mu, phi, theta, s = y[0], y[1], y[2], y[3]
        sigma = jnp.exp(s)
        err0 = yy[0] - (mu + phi * mu)

        def step(err_prev, t_in):
            y_prev, y_t = t_in
            err = y_t - (mu + phi * y_prev + theta * err_prev)
            return err, err

        _, errs = jax.lax.scan(step, err0, (yy[:-1], yy[1:]))
        sse = err0 ** 2 + jnp.sum(errs ** 2)
        return (-0.5 * mu ** 2 / 100.0 - 0.5 * phi ** 2 / 4.0 - 0.5 * theta ** 2 / 4.0 + _cauchy0(sigma, 2.5)
                - T * s - 0.5 * sse * jnp.exp(-2.0 * s) + s)

    return logp


def garch11_logp(p):
    yy = jnp.asarray(p.d["y"], float)
    var0 = float(p.d["sigma1"]) ** 2

    def logp(y):
        mu, a, b, c = y[0], y[1], y[2], y[3]
        alpha0, alpha1, u = jnp.exp(a), jax.nn.sigmoid(b), jax.nn.sigmoid(c)
        beta1 = (1.0 - alpha1) * u

        def step(v_prev, r_prev):
            v = alpha0 + alpha1 * r_prev + beta1 * v_prev
            return v, v

        _, var = jax.lax.scan(step, jnp.asarray(var0, yy.dtype), (yy[:-1] - mu) ** 2)
        var = jnp.concatenate([jnp.full((1,), var0), var])
        ll = jnp.sum(-0.5 * jnp.log(var) - 0.5 * (yy - mu) ** 2 / var)
        # flat prior on the constrained region; log J of alpha0 = e^a, alpha1 = logistic(b),
        # beta1 = (1 - alpha1) logistic(c): a + log a1 (1 - a1) + log (1 - a1) u (1 - u)
        logj = a + log_sigmoid(b) + 2.0 * log_sigmoid(-b) + log_sigmoid(c) + log_sigmoid(-c)
        return ll + logj

    return logp


def low_dim_gauss_mix_logp(p):
    yy = jnp.asarray(p.d["y"], float)

    def logp(y):
        m1, lm, s1, s2, t = y[0], y[1], y[2], y[3], y[4]
        mu1, mu2 = m1, m1 + jnp.exp(lm)
        sg1, sg2 = jnp.exp(s1), jnp.exp(s2)
        lth, l1th = log_sigmoid(t), log_sigmoid(-t)
        prior = (-0.5 * (sg1 ** 2 + sg2 ** 2) / 4.0 - 0.5 * (mu1 ** 2 + mu2 ** 2) / 4.0
                 + 4.0 * lth + 4.0 * l1th)  # half-normal(0, 2) sigma, normal(0, 2) mu, beta(5, 5) theta
        ll = jnp.sum(jnp.logaddexp(lth - s1 - 0.5 * ((yy - mu1) / sg1) ** 2,
                                   l1th - s2 - 0.5 * ((yy - mu2) / sg2) ** 2))
        logj = lm + s1 + s2 + lth + l1th
        return prior + ll + logj

    return logp


def _exp_quad(x, alpha, rho):
    return alpha ** 2 * jnp.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / rho ** 2)


def gp_regr_logp(p):
    x, yd = jnp.asarray(p.d["x"], float), jnp.asarray(p.d["y"], float)
    N = x.shape[0]

    def logp(y):
        rho, alpha, sigma = jnp.exp(y[0]), jnp.exp(y[1]), jnp.exp(y[2])
        cov = _exp_quad(x, alpha, rho) + sigma * jnp.eye(N)  # sigma, not sigma^2, as the Stan model
        L = jnp.linalg.cholesky(cov)
        v = solve_triangular(L, yd, lower=True)
        mvn = -0.5 * jnp.dot(v, v) - jnp.sum(jnp.log(jnp.diag(L)))
        prior = 24.0 * y[0] - 4.0 * rho - 0.5 * alpha ** 2 / 4.0 - 0.5 * sigma ** 2  # gamma(25, 4), half-N(0, 2), half-N(0, 1)
        return mvn + prior + jnp.sum(y)

    return logp


def gp_pois_regr_logp(p):
    x, k = jnp.asarray(p.d["x"], float), jnp.asarray(p.d["k"], float)
    N = x.shape[0]

    def logp(y):
        rho, alpha, ft = jnp.exp(y[0]), jnp.exp(y[1]), y[2:]
        L = jnp.linalg.cholesky(_exp_quad(x, alpha, rho) + 1e-10 * jnp.eye(N))
        f = L @ ft
        prior = 24.0 * y[0] - 4.0 * rho - 0.5 * alpha ** 2 / 4.0 - 0.5 * jnp.sum(ft ** 2)
        return prior + jnp.sum(k * f - jnp.exp(f)) + y[0] + y[1]

    return logp


def hmm_logp(p):
    yy = jnp.asarray(p.d["y"], float)

    def logp(y):
        a1, a2, m1, m2 = y[0], y[1], y[2], y[3]
        lt = jnp.array([[log_sigmoid(a1), log_sigmoid(-a1)], [log_sigmoid(a2), log_sigmoid(-a2)]])  # log theta[j, k]
        mu1 = jnp.exp(m1)
        mu = jnp.stack([mu1, mu1 + jnp.exp(m2)])
        prior = -0.5 * (mu[0] - 3.0) ** 2 - 0.5 * (mu[1] - 10.0) ** 2
        emit = -0.5 * (yy[:, None] - mu[None, :]) ** 2  # (T, 2)

        def step(gamma, e_t):
            g = logsumexp(gamma[:, None] + lt, axis=0) + e_t
            return g, None

        gamma, _ = jax.lax.scan(step, emit[0], emit[1:])
        logj = log_sigmoid(a1) + log_sigmoid(-a1) + log_sigmoid(a2) + log_sigmoid(-a2) + m1 + m2
        return prior + logsumexp(gamma) + logj

    return logp


LOGP = {
    "kidiq-kidscore_interaction": linreg_logp,
    "kidiq-kidscore_momiq": linreg_logp,
    "kidiq_with_mom_work-kidscore_interaction_z": linreg_logp,
    "sblrc-blr": linreg_logp,
    "sblri-blr": linreg_logp,
    "earnings-earn_height": linreg_logp,
    "earnings-logearn_interaction": linreg_logp,
    "kilpisjarvi_mod-kilpisjarvi": linreg_logp,
    "mesquite-mesquite": linreg_logp,
    "mesquite-logmesquite_logvash": linreg_logp,
    "nes2000-nes": linreg_logp,
    "eight_schools-eight_schools_noncentered": eight_schools_logp,
    "arK-arK": ark_logp,
    "arma-arma11": arma11_logp,
    "garch-garch11": garch11_logp,
    "low_dim_gauss_mix-low_dim_gauss_mix": low_dim_gauss_mix_logp,
    "gp_pois_regr-gp_regr": gp_regr_logp,
    "gp_pois_regr-gp_pois_regr": gp_pois_regr_logp,
    "hmm_example-hmm_example": hmm_logp,
}


def load_ref(name):
    with open(os.path.join(REF_DIR, name + ".json")) as f:
        return json.load(f)


# =================================================================================================
# --check
# =================================================================================================
def check_one(name, P, rng):
    p = P()
    lj = jax.jit(LOGP[name](p))
    gj = jax.jit(jax.grad(LOGP[name](p)))
    ref = load_ref(name)["unconstrained"]
    mean = np.array([ref[u]["mean"] for u in p.unames])
    sd = np.array([ref[u]["sd"] for u in p.unames])
    pts = [mean] + [mean + 0.5 * sd * rng.standard_normal(p.D) for _ in range(20)]
    lp0, lj0 = float(p.logp(pts[0])), float(lj(jnp.asarray(pts[0])))
    worst_v, worst_g, ok = 0.0, 0.0, True
    for y in pts:
        lpi, lji = float(p.logp(y)), float(lj(jnp.asarray(y)))
        if not (math.isfinite(lpi) and math.isfinite(lji)):
            ok = False
            worst_v = math.inf
            continue
        err = abs((lji - lj0) - (lpi - lp0)) / max(1.0, abs(lpi), abs(lp0))
        worst_v = max(worst_v, err)
        g = np.asarray(gj(jnp.asarray(y)))
        fd = np.empty(p.D)
        for j in range(p.D):
            def cd(h):
                e = np.zeros(p.D)
                e[j] = h
                return (p.logp(y + e) - p.logp(y - e)) / (2 * h)
            h = 1e-3 * sd[j]
            fd[j] = (4 * cd(h / 2) - cd(h)) / 3  # Richardson: O(h^4)
        gerr = np.abs(g - fd) * sd / np.maximum(1.0, np.abs(g) * sd)
        worst_g = max(worst_g, float(gerr.max()))
    ok = ok and worst_v <= 1e-8 and worst_g <= grad_tol(name)
    return ok, worst_v, worst_g


def grad_tol(name):
    # gp_pois_regr's kernel matrix + 1e-10 I is near-singular (11 close inputs, rho ~ 6): its
    # Cholesky factor, hence the log density, carries round-off noise that central differences
    # amplify (NumPy's and JAX's differences disagree by up to 1e-4 per sd at h = 1e-4 sd), so the
    # differences are a reference to ~1e-5 only; 1e-4, as posteriordb_check_energies uses for it.
    return 1e-4 if name == "gp_pois_regr-gp_pois_regr" else 1e-6


def do_check(names, models):
    rng = np.random.default_rng(20260426)
    bad = 0
    print("| posterior | D | max rel. error of logp differences (tol 1e-8) | max grad error per sd (tol) | ok |")
    print("|---|---|---|---|---|")
    for name in names:
        t0 = time.perf_counter()
        ok, ev, eg = check_one(name, models[name], rng)
        bad += not ok
        print(f"| {name} | {models[name]().D} | {ev:.2e} | {eg:.2e} ({grad_tol(name):.0e}) | {'ok' if ok else 'MISMATCH'} |",
              flush=True)
        print(f"  {name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    print(f"\n{len(names) - bad} of {len(names)} posteriors match" + ("" if not bad else f"; {bad} MISMATCH"))
    return 1 if bad else 0


# =================================================================================================
# Runs
# =================================================================================================
COMPILE_EVENTS = ("/jax/core/compile/jaxpr_trace_duration", "/jax/core/compile/jaxpr_to_mlir_module_duration",
                  "/jax/core/compile/backend_compile_duration")
_events = {"n": 0, "s": 0.0}


def _listener(event, duration, **kw):
    if event in COMPILE_EVENTS:
        _events["n"] += 1
        _events["s"] += duration


def run_one(name, P, seed, chains, num_warmup=1000, num_samples=1000):
    import arviz as az
    from numpyro.infer import MCMC, NUTS

    jax.monitoring.register_event_duration_secs_listener(_listener)
    p = P()
    logp = LOGP[name](p)
    kernel = NUTS(potential_fn=lambda y: -logp(y))  # NumPyro's defaults
    mcmc = MCMC(kernel, num_warmup=num_warmup, num_samples=num_samples, num_chains=chains,
                chain_method="sequential")  # progress_bar=True, the default: see the docstring

    def starts_and_key(s):
        k_init, k_run = jax.random.split(jax.random.PRNGKey(s))
        return jax.random.uniform(k_init, (chains, p.D), minval=-2.0, maxval=2.0), k_run

    def once(s):
        x0, key = starts_and_key(s)
        x0 = jax.block_until_ready(x0)
        mcmc.post_warmup_state = None
        n0, s0 = _events["n"], _events["s"]
        t0 = time.perf_counter()
        mcmc.warmup(key, init_params=x0, extra_fields=("num_steps",), collect_warmup=True)
        wsteps = np.asarray(jax.block_until_ready(mcmc.get_extra_fields(group_by_chain=True)["num_steps"]))
        jax.block_until_ready(mcmc.post_warmup_state)
        t1 = time.perf_counter()
        mcmc.run(mcmc.post_warmup_state.rng_key, extra_fields=("num_steps", "diverging"))
        ex = mcmc.get_extra_fields(group_by_chain=True)
        draws = np.asarray(jax.block_until_ready(mcmc.get_samples(group_by_chain=True)))
        steps, div = np.asarray(ex["num_steps"]), np.asarray(ex["diverging"])
        t2 = time.perf_counter()
        step_size = np.asarray(mcmc.last_state.adapt_state.step_size)
        return dict(draws=draws, wsteps=wsteps, steps=steps, div=div, warmup_s=t1 - t0, sampling_s=t2 - t1,
                    events=_events["n"] - n0, events_s=_events["s"] - s0, step_size=step_size,
                    x0=np.asarray(x0))

    first = once(seed)  # compiles
    r = once(seed)  # timed: the same keys and starts, so the same work without compilation
    same = (np.array_equal(first["draws"], r["draws"]) and np.array_equal(first["wsteps"], r["wsteps"])
            and np.array_equal(first["steps"], r["steps"]))
    draws = r["draws"]  # (chains, samples, D)
    C, S, D = draws.shape
    con = p.to_con(draws.reshape(C * S, D))
    con = {k: np.asarray(v).reshape(C, S) for k, v in con.items()}
    unc = {f"u{j}": draws[:, :, j] for j in range(D)}
    ds_u = az.convert_to_dataset(unc)
    ds_c = az.convert_to_dataset({f"c{j}": con[k] for j, k in enumerate(p.params)})
    bulk = np.array([float(v) for v in az.ess(ds_u, method="bulk").data_vars.values()])
    tail = np.array([float(v) for v in az.ess(ds_u, method="tail").data_vars.values()])
    rhat_u = [float(v) for v in az.rhat(ds_u).data_vars.values()]
    rhat_c = [float(v) for v in az.rhat(ds_c).data_vars.values()]
    mcse_c = [float(v) for v in az.mcse(ds_c, method="mean").data_vars.values()]
    ref = load_ref(name)
    zs = {}
    for j, k in enumerate(p.params):
        m = float(con[k].mean())
        rr = ref["constrained"][k]
        zs[k] = (m - rr["mean"]) / math.sqrt(mcse_c[j] ** 2 + rr["mcse_mean"] ** 2)
    zu = []
    for j, k in enumerate(p.unames):
        rr = ref["unconstrained"][k]
        m = float(draws[:, :, j].mean())
        mc = float(az.mcse(draws[:, :, j], method="mean"))
        zu.append((m - rr["mean"]) / math.sqrt(mc ** 2 + rr["mcse_mean"] ** 2))
    max_z = max(abs(z) for z in zs.values())
    arg_z = max(zs, key=lambda k: abs(zs[k]))
    max_rhat = max(rhat_u + rhat_c)
    wall = r["warmup_s"] + r["sampling_s"]
    secs = wall - r["events_s"]
    g_warm, g_samp = int(r["wsteps"].sum()), int(r["steps"].sum())
    min_bulk = float(bulk.min())
    ok = max_z < 5 and max_rhat < 1.01
    return {
        "posterior": name, "D": D, "chains": C, "warmup": num_warmup, "samples": num_samples, "seed": seed,
        "ess_bulk_min": min_bulk, "ess_tail_min": float(tail.min()), "rhat_max": max_rhat,
        "divergent": int(r["div"].sum()), "divergent_per_chain": r["div"].sum(axis=1).astype(int).tolist(),
        "grads_sampling": g_samp, "grads_warmup": g_warm,
        "grads_sampling_per_chain": r["steps"].sum(axis=1).astype(int).tolist(),
        "grads_warmup_per_chain": r["wsteps"].sum(axis=1).astype(int).tolist(),
        "treedepth10_sampling": int((r["steps"] >= 1023).sum()),
        "seconds": secs, "seconds_wall": wall, "warmup_s": r["warmup_s"], "sampling_s": r["sampling_s"],
        "rerun_identical": bool(same),
        "compile_s": (first["warmup_s"] + first["sampling_s"]) - secs, "compile_events_s": first["events_s"],
        "compile_events": first["events"], "timed_compile_events": r["events"], "timed_compile_s": r["events_s"],
        "first_run_s": first["warmup_s"] + first["sampling_s"],
        "ess_per_s": min_bulk / secs, "grads_per_ess": (g_warm + g_samp) / min_bulk,
        "max_abs_z_mean": max_z, "max_abs_z_param": arg_z, "z_mean": zs,
        "max_abs_z_mean_unconstrained": max(abs(z) for z in zu),
        "step_size_per_chain": np.atleast_1d(r["step_size"]).tolist(),
        "chain_means_unconstrained": draws.mean(axis=1).tolist(), "starts": r["x0"].tolist(),
        "verdict": "ok" if ok else "not ok",
        "cpus": sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "xla_flags": os.environ.get("XLA_FLAGS"),
        "versions": {"jax": jax.__version__, "numpyro": __import__("numpyro").__version__, "arviz": az.__version__},
    }


def fmt_row(r):
    if "error" in r:
        return f"| {r['posterior']} | {r.get('D', '')} | {r['error']} |" + " |" * 12
    return (f"| {r['posterior']} | {r['D']} | {r['ess_bulk_min']:.0f} | {r['ess_tail_min']:.0f} | {r['rhat_max']:.3f} | "
            f"{r['divergent']} | {r['grads_sampling']:,} | {r['grads_warmup']:,} | {r['seconds']:.2f} | "
            f"{r['compile_s']:.2f} | {r['ess_per_s']:.0f} | {r['grads_per_ess']:.0f} | {r['max_abs_z_mean']:.2f} | "
            f"{r['verdict']} |")


HEADER = ("| posterior | D | min bulk ESS | min tail ESS | max R̂ | divergent | sampling grads | warm-up grads | s | "
          "compile s | ESS/s | grads/ESS | max \\|z\\| mean | verdict |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default=None, help="run the posteriors whose name contains this substring")
    ap.add_argument("--exact", default=None, help=argparse.SUPPRESS)  # child process: one posterior
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--jsonl", default=None)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per posterior (both runs)")
    a = ap.parse_args()
    models = pm.by_name()
    for n in models:
        assert n in LOGP, n
    if a.exact:
        print(json.dumps(run_one(a.exact, models[a.exact], a.seed, a.chains)))
        return 0
    names = [n for n in models if a.only is None or a.only in n]
    if not names:
        print(f"no posterior matches {a.only!r}", file=sys.stderr)
        return 2
    print(f"pinned to CPUs {sorted(os.sched_getaffinity(0))}; XLA_FLAGS={os.environ['XLA_FLAGS']}; "
          f"jax {jax.__version__}", file=sys.stderr)
    if a.check:
        return do_check(names, models)
    rows = []
    jf = open(a.jsonl, "w") if a.jsonl else None
    t_all = time.perf_counter()
    for name in names:
        t0 = time.perf_counter()
        cmd = [sys.executable, os.path.abspath(__file__), "--exact", name, "--seed", str(a.seed),
               "--chains", str(a.chains)]
        try:
            cp = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
            if cp.returncode != 0:
                sys.stderr.write(cp.stderr[-3000:])
                r = {"posterior": name, "error": f"failed (exit {cp.returncode})"}
            else:
                r = json.loads(cp.stdout.strip().splitlines()[-1])
        except subprocess.TimeoutExpired:
            r = {"posterior": name, "error": f"skipped: over {a.timeout:.0f} s"}
        r["wall_s_total"] = time.perf_counter() - t0
        rows.append(r)
        print(f"{name}: {r['wall_s_total']:.1f} s  {fmt_row(r)}", file=sys.stderr, flush=True)
        if jf:
            jf.write(json.dumps(r) + "\n")
            jf.flush()
    print(f"NumPyro {rows[0].get('versions', {}).get('numpyro', '?')} NUTS, defaults; {a.chains} chains, "
          f"1000 warm-up + 1000 draws, seed {a.seed}, float64, one CPU thread\n")
    print(HEADER)
    for r in rows:
        print(fmt_row(r))
    n_ok = sum(r.get("verdict") == "ok" for r in rows)
    print(f"\n{n_ok} of {len(rows)} ok (|z| < 5 on every constrained mean, R̂ < 1.01); "
          f"total wall {time.perf_counter() - t_all:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
