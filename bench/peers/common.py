"""Shared pieces of the Python peers of ember's CPU benchmark.

Cases, reference laws ("truths"), statistical checks, timing and JSON output.
Importing this module pins the process to the benchmark's cores and sets the
thread-count environment of OpenMP/MKL/XLA, so it must be imported *before*
torch or jax.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

# --------------------------------------------------------------------------
# Threads and cores (before numpy/torch/jax are imported).
# --------------------------------------------------------------------------
NTHREADS = int(os.environ.get("EMBER_BENCH_THREADS", "2"))
CPUS = os.environ.get("EMBER_BENCH_CPUS", "0,1")

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, str(NTHREADS))
# XLA:CPU sizes its thread pool from the CPUs this process may run on (the
# affinity mask set below / by taskset); XLA has no intra-op thread-count
# flag (an unknown --flag in XLA_FLAGS aborts the process).
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=true")
os.environ.setdefault("JAX_PLATFORMS", "cpu")


def _pin_cpus() -> list[int]:
    if not hasattr(os, "sched_setaffinity"):
        return []
    try:
        want = {int(c) for c in CPUS.split(",") if c.strip()}
        have = os.sched_getaffinity(0)
        use = want & have
        if use and use != have:
            os.sched_setaffinity(0, use)
        return sorted(os.sched_getaffinity(0))
    except (OSError, ValueError):
        return sorted(os.sched_getaffinity(0))


PINNED_CPUS = _pin_cpus()

import numpy as np  # noqa: E402  (after the environment is set)

# --------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------
EMBER_IMPLS = ("ember-simd", "ember-scalar")

# Sizes, and the --quick sizes, are those of ember's bench/cpu_suite.cpp.
CASES: dict[str, dict] = {
    "P1": dict(method="ula", target="gaussian", dim=10, chains=10_000, steps=100,
               params=dict(eta=0.1),
               quick=dict(chains=1_000)),
    "P2": dict(method="hmc", target="gaussian", dim=10, chains=1_000, steps=100,
               params=dict(eps=0.1, L=10),
               quick=dict(chains=500)),
    "P3": dict(method="ula", target="double_well", dim=2, chains=10_000, steps=100,
               params=dict(eta=0.01, h=2.0, b=1.0),
               quick=dict(chains=1_000)),
    "P4": dict(method="ula", target="rosenbrock", dim=2, chains=10_000, steps=100,
               params=dict(eta=1e-4, a=1.0, b=100.0),
               quick=dict(chains=1_000)),
    "P5": dict(method="grad", target="gaussian", dim=100, chains=10_000, steps=1,
               params=dict(),
               quick=dict()),
    "P6": dict(method="ula", target="gaussian", dim=10, chains=1_000_000, steps=1_000,
               params=dict(eta=0.1),
               quick=dict(chains=10_000, steps=100, repeats=5, aot_compile=False),
               # one BlackJAX run of P6 takes minutes (JAX's CPU random numbers,
               # ~50M normals/s on 2 cores, and P6 needs 1e10 of them), so by
               # default P6 is timed once, after compiling ahead of time.
               repeats=1, aot_compile=True,
               only=EMBER_IMPLS + ("blackjax",)),
}
CASE_NAMES = tuple(CASES)


def case_config(name: str, quick: bool) -> dict:
    cfg = {k: v for k, v in CASES[name].items() if k != "quick"}
    cfg["params"] = dict(cfg["params"])
    if quick:
        cfg.update(CASES[name]["quick"])
    cfg.setdefault("repeats", 5)
    cfg["name"] = name
    cfg["quick"] = quick
    return cfg


def gaussian_params(d: int):
    """mean, diagonal of Sigma, dense precision P = Sigma^-1 (float64)."""
    mu = np.linspace(-1.0, 1.0, d)
    sig2 = np.linspace(0.5, 1.5, d)
    prec = np.diag(1.0 / sig2)
    return mu, sig2, prec


# --------------------------------------------------------------------------
# Reference laws (float64)
# --------------------------------------------------------------------------
def ula_gaussian_law(mu, sig2, eta, n, mean0=0.0, var0=1.0):
    """Exact law after n ULA steps for a Gaussian with diagonal covariance.

    Per dimension x' = a x + (1 - a) mu + sqrt(2 eta) xi with a = 1 - eta/sigma^2.
    """
    a = 1.0 - eta / sig2
    an, a2n = a ** n, a ** (2 * n)
    mean = mu * (1.0 - an) + an * mean0
    var = a2n * var0 + 2.0 * eta * (1.0 - a2n) / (1.0 - a * a)
    return mean, var


def double_well_ula_law(h, b, eta, n, lo=-6.0, hi=6.0, m=2401):
    """Law of one coordinate after n ULA steps on U = h (x^2 - b^2)^2 from N(0,1).

    The coordinates of the double well evolve independently, so the law is a
    product of identical 1-D laws, propagated here on a grid: p_{k+1}(y) =
    sum_x p_k(x) dx N(y; x - eta U'(x), 2 eta). Mass that leaves [lo, hi]
    belongs to chains that are diverging (explicit Euler is unstable for
    |x| > ~5.1 at eta = 0.01); it is counted and the moments are those of the
    remaining mass.  Returns (mean, var, lost_probability).
    """
    x = np.linspace(lo, hi, m)
    dx = x[1] - x[0]
    p = np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
    drift = x - eta * 4.0 * h * x * (x * x - b * b)
    s2 = 2.0 * eta
    kern = np.exp(-((x[:, None] - drift[None, :]) ** 2) / (2.0 * s2))
    kern *= dx / math.sqrt(2.0 * math.pi * s2)
    for _ in range(n):
        p = kern @ p
    mass = p.sum() * dx
    mean = (x * p).sum() * dx / mass
    var = ((x - mean) ** 2 * p).sum() * dx / mass
    return float(mean), float(var), float(max(0.0, 1.0 - mass))


def rosenbrock_grad_np(x, a, b):
    g = np.zeros_like(x)
    xi, xn = x[:, :-1], x[:, 1:]
    r = xn - xi * xi
    g[:, :-1] += -2.0 * (a - xi) - 4.0 * b * xi * r
    g[:, 1:] += 2.0 * b * r
    return g


def rosenbrock_ula_reference(a, b, eta, n, d=2, n_ref=1_000_000, seed=20240611,
                             chunk=250_000):
    """Float64 Monte-Carlo reference of the n-step ULA law on Rosenbrock."""
    rng = np.random.default_rng(seed)
    out = []
    s = math.sqrt(2.0 * eta)
    for start in range(0, n_ref, chunk):
        k = min(chunk, n_ref - start)
        x = rng.standard_normal((k, d))
        for _ in range(n):
            x = x - eta * rosenbrock_grad_np(x, a, b) + s * rng.standard_normal((k, d))
        out.append(x)
    x = np.concatenate(out)
    m = x.mean(0)
    v = x.var(0, ddof=1)
    m4 = ((x - m) ** 4).mean(0)
    return dict(mean=m.tolist(), var=v.tolist(),
                se_mean=np.sqrt(v / n_ref).tolist(),
                se_var=np.sqrt(np.maximum(m4 - v * v, 0.0) / n_ref).tolist(),
                n_ref=n_ref)


def _cache_path() -> Path | None:
    env = os.environ.get("EMBER_BENCH_CACHE")
    if env:
        return Path(env)
    venv = Path(__file__).resolve().parent.parent / ".venv"
    return venv / "ember-ref-cache.json" if venv.is_dir() else None


def cached(key: str, compute: Callable[[], dict]) -> dict:
    path = _cache_path()
    store = {}
    if path is not None and path.exists():
        try:
            store = json.loads(path.read_text())
        except (OSError, ValueError):
            store = {}
    if key in store:
        return store[key]
    val = compute()
    if path is not None:
        try:
            store[key] = val
            path.write_text(json.dumps(store))
        except OSError:
            pass
    return val


# --------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------
def _sig(x: float, digits: int = 4) -> float:
    return float(f"{x:.{digits}g}")


K_SE = 6.0          # tolerance = K_SE standard errors
U32 = 2.0 ** -24    # unit roundoff of float32


def poisson_upper(lam: float, tail: float = 1e-9) -> int:
    """Smallest k with P(Poisson(lam) > k) < tail."""
    if lam <= 0.0:
        return 0
    k, term = 0, math.exp(-lam)
    cdf = term
    while 1.0 - cdf >= tail and k < 10_000:
        k += 1
        term *= lam / k
        cdf += term
    return k


def _worst(err, tol):
    i = int(np.argmax(err / tol))
    return _sig(float(err[i])), _sig(float(tol[i]))


def check_moments(samples, true_mean, true_var, *, truth: str,
                  ref_se_mean=0.0, ref_se_var=0.0, nonfinite_expected=0.0,
                  extra: dict | None = None) -> dict:
    """Compare the sample mean/variance of the final states with the truth.

    Tolerances are K_SE standard errors per dimension: the Monte-Carlo error of
    the sample (variance of a sample variance = (mu4 - sigma^4)/n, with mu4
    the sample 4th central moment) combined with the reference's own error
    when the reference is itself a Monte-Carlo estimate.
    """
    x = np.asarray(samples, dtype=np.float64)
    finite = np.isfinite(x).all(axis=1)
    nonfinite = int(x.shape[0] - finite.sum())
    xf = x[finite]
    n = xf.shape[0]
    res: dict = {"truth": truth}
    if n < 2:
        res.update(ok=False, nonfinite=nonfinite, reason="fewer than 2 finite chains")
        return res
    m = xf.mean(0)
    v = xf.var(0, ddof=1)
    m4 = ((xf - m) ** 4).mean(0)
    se_m = np.sqrt(v / n + np.square(ref_se_mean))
    se_v = np.sqrt(np.maximum(m4 - v * v, 0.0) / n + np.square(ref_se_var))
    tol_m = K_SE * se_m
    tol_v = K_SE * se_v
    err_m = np.abs(m - np.asarray(true_mean))
    err_v = np.abs(v - np.asarray(true_var))
    me, mt = _worst(err_m, tol_m)
    ve, vt = _worst(err_v, tol_v)
    nf_max = poisson_upper(float(nonfinite_expected))
    ok = bool(np.all(err_m <= tol_m) and np.all(err_v <= tol_v) and nonfinite <= nf_max)
    res.update(mean_err=me, mean_tol=mt, var_err=ve, var_tol=vt,
               k_se=K_SE, nonfinite=nonfinite)
    if nonfinite_expected:
        res.update(nonfinite_expected=_sig(float(nonfinite_expected)), nonfinite_max=nf_max)
    res["sample_mean"] = [round(float(t), 5) for t in m]
    res["sample_var"] = [round(float(t), 5) for t in v]
    if extra:
        res.update(extra)
    res["ok"] = ok
    return res


def check_gradient(x32, g32, mu, prec) -> dict:
    """Compare a float32 gradient P (x - mu) with a float64 one on the same x.

    Tolerance: the standard rounding-error bound of a length-d dot product,
    gamma_{d+3} * (|P| (|x| + |mu|)) per entry (d products and sums, the
    subtraction, and the rounding of mu and P to float32), gamma_k = k u /(1 - k u).
    """
    x = np.asarray(x32, dtype=np.float64)
    g = np.asarray(g32, dtype=np.float64)
    ref = (x - mu) @ prec.T
    d = x.shape[1]
    k = d + 3
    gamma = k * U32 / (1.0 - k * U32)
    bound = gamma * ((np.abs(x) + np.abs(mu)) @ np.abs(prec).T)
    err = np.abs(g - ref)
    ok = bool(np.all(np.isfinite(g)) and np.all(err <= bound))
    i = np.unravel_index(int(np.argmax(err / bound)), err.shape)
    return {"truth": "float64 P(x-mu) at the same points",
            "grad_err": _sig(float(err.max())), "worst_err": _sig(float(err[i])),
            "worst_tol": _sig(float(bound[i])), "tol": f"gamma_{k} |P|(|x|+|mu|)",
            "ok": ok}


def check_case(cfg: dict, final) -> dict:
    """final: (chains, dim) array of final states (or (x, grad) for 'grad')."""
    p = cfg["params"]
    n = cfg["steps"]
    d = cfg["dim"]
    if cfg["method"] == "grad":
        mu, _, prec = gaussian_params(d)
        x, g = final
        return check_gradient(x, g, mu, prec)
    if cfg["target"] == "gaussian":
        mu, sig2, _ = gaussian_params(d)
        if cfg["method"] == "ula":
            mean, var = ula_gaussian_law(mu, sig2, p["eta"], n)
            return check_moments(final, mean, var,
                                 truth=f"closed-form law of {n} ULA steps from N(0,I)")
        return check_moments(final, mu, sig2, truth="target N(mu, Sigma)")
    if cfg["target"] == "double_well":
        key = f"dw:{p['h']}:{p['b']}:{p['eta']}:{n}:grid2401"
        law = cached(key, lambda: dict(zip(("mean", "var", "lost"),
                                           double_well_ula_law(p["h"], p["b"], p["eta"], n))))
        nchains = np.asarray(final).shape[0]
        # a chain is lost when either coordinate diverges
        expected = nchains * (1.0 - (1.0 - law["lost"]) ** d)
        return check_moments(final, [law["mean"]] * d, [law["var"]] * d,
                             truth=f"grid quadrature of the {n}-step ULA law (float64)",
                             nonfinite_expected=expected)
    if cfg["target"] == "rosenbrock":
        key = f"rb:{p['a']}:{p['b']}:{p['eta']}:{n}:{d}:mc1e6"
        ref = cached(key, lambda: rosenbrock_ula_reference(p["a"], p["b"], p["eta"], n, d))
        return check_moments(final, ref["mean"], ref["var"],
                             truth=f"float64 Monte-Carlo reference, {ref['n_ref']} chains",
                             ref_se_mean=np.asarray(ref["se_mean"]),
                             ref_se_var=np.asarray(ref["se_var"]))
    raise ValueError(cfg["target"])


# --------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------
@dataclass
class Timing:
    first: float                      # warm-up run (includes any compilation)
    runs: list[float]                 # timed runs
    result: object = None             # output of the last timed run
    inner: int = 1                    # calls per run (seconds are per call)

    @property
    def median(self) -> float:
        return statistics.median(self.runs)


def measure(run: Callable[[int], object], repeats: int,
            prepare: Callable[[int], object] | None = None, inner: int = 1,
            warmup: bool = True) -> Timing:
    """One warm-up run (unless warmup=False), then `repeats` timed runs;
    run(i) must return only when its work is finished (block_until_ready for
    JAX).  prepare(i) runs outside the timer and its return value is passed
    to run()."""
    def once(i):
        arg = prepare(i) if prepare else i
        t0 = time.perf_counter()
        out = None
        for _ in range(inner):
            out = run(arg)
        return (time.perf_counter() - t0) / inner, out

    first, out = once(0) if warmup else (float("nan"), None)
    runs = []
    for i in range(1, repeats + 1):
        t, out = once(i)
        runs.append(t)
    return Timing(first=first, runs=runs, result=out, inner=inner)


def calibrate_inner(call: Callable[[], object], target_s: float = 0.25) -> int:
    """How many back-to-back calls make a timed run of about target_s
    (after at least 0.1 s of warm-up calls)."""
    for limit in (0.1, 0.1):          # warm up, then measure
        n, t0 = 0, time.perf_counter()
        while True:
            call()
            n += 1
            t = time.perf_counter() - t0
            if t >= limit:
                break
    return max(1, math.ceil(target_s / (t / n)))


@dataclass
class Outcome:
    timing: Timing
    final: object                     # array (chains, dim) or (x, grad) for P5
    compile_reported: bool = False
    compile_seconds: float | None = None  # measured directly (AOT); else warm-up - median
    note: str | None = None
    extra: dict = field(default_factory=dict)   # e.g. accept_rate, merged into check


# --------------------------------------------------------------------------
# Output and command line
# --------------------------------------------------------------------------
def emit(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj, separators=(", ", ": ")) + "\n")
    sys.stdout.flush()


def result_line(impl: str, cfg: dict, out: Outcome, version: str) -> dict:
    t = out.timing
    sec = t.median
    line = {"case": cfg["name"], "impl": impl, "dim": cfg["dim"],
            "chains": cfg["chains"], "steps": cfg["steps"],
            "seconds": _sig(sec), "chain_steps_per_s": _sig(cfg["chains"] * cfg["steps"] / sec)}
    if out.compile_seconds is not None:
        line["compile_seconds"] = _sig(out.compile_seconds)
    elif out.compile_reported:
        line["compile_seconds"] = _sig(max(0.0, t.first - sec))
    check = check_case(cfg, out.final)
    if out.extra:
        check.update(out.extra)
    line["check"] = check
    if out.note:
        line["note"] = out.note
    line.update(params=cfg["params"], repeats=len(t.runs),
                seconds_min=_sig(min(t.runs)), seconds_max=_sig(max(t.runs)),
                warmup_seconds=None if math.isnan(t.first) else _sig(t.first),
                threads=NTHREADS, cpus=PINNED_CPUS,
                version=version)
    if t.inner > 1:
        line["calls_per_run"] = t.inner
    if cfg["quick"]:
        line["quick"] = True
    return line


def parse_args(desc: str) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=desc)
    ap.add_argument("--case", default="all",
                    help="P1..P6, a comma-separated list, or 'all' (default)")
    ap.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    ap.add_argument("--repeats", type=int, default=None,
                    help="timed runs after one warm-up run (default 5; P6: 1)")
    ap.add_argument("--seed", type=int, default=1234)
    args = ap.parse_args()
    names = CASE_NAMES if args.case == "all" else tuple(c.strip().upper() for c in args.case.split(","))
    for c in names:
        if c not in CASES:
            ap.error(f"unknown case {c!r}; known: {', '.join(CASE_NAMES)}")
    if args.repeats is not None and args.repeats < 1:
        ap.error("--repeats must be >= 1")
    args.cases = names
    return args


def main(impl: str, desc: str, runners: dict[str, Callable], version: Callable[[], str],
         skipped: dict[str, str] | None = None) -> int:
    """runners[case](cfg, args) -> Outcome.  Prints one JSON line per case."""
    args = parse_args(desc)
    skipped = dict(skipped or {})
    status = 0
    ver = None
    for name in args.cases:
        cfg = case_config(name, args.quick)
        if args.repeats is not None:
            cfg["repeats"] = args.repeats
        base = {"case": name, "impl": impl, "dim": cfg["dim"], "chains": cfg["chains"],
                "steps": cfg["steps"]}
        only = cfg.get("only")
        if only and impl not in only:
            emit({**base, "skipped": f"{name} runs for {', '.join(only)} only"})
            continue
        if name in skipped:
            emit({**base, "skipped": skipped[name]})
            continue
        try:
            if ver is None:
                ver = version()
            out = runners[name](cfg, args)
            line = result_line(impl, cfg, out, ver)
            if not line["check"].get("ok"):
                status = 1
            emit(line)
        except Exception as exc:  # report and go on with the next case
            traceback.print_exc(file=sys.stderr)
            emit({**base, "error": f"{type(exc).__name__}: {exc}"})
            status = 1
    return status
