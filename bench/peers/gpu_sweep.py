"""GPU cases of the Python peers: P1 and P7 of bench/cuda_suite.cu.

P1: ULA on the 10-d Gaussian of common.gaussian_params, step 0.1, 10^4 chains
x 100 steps.  P7: the same target and step at 10^3, 10^4, 10^5, 10^6 and 10^7
chains x 1,000 steps.  Every chain starts from N(0, I); the final states get
common's moment check against the closed-form law of n ULA steps.

A peer runs these with `--sweep` (torch_eager.py, torchebm_peer.py,
blackjax_peer.py) or always (torch_compile.py); bench/peers/gpu_peers.sh runs
them all on a GPU machine.  One JSON line per (case, chains): common's line
plus "device" and "timed", or {"skipped": why} / {"error": what}.  A chain
count is skipped, never crashing the script, when
- the run at the previous (10x smaller) count took more than --skip-after s,
- an earlier count ran out of device memory (caught per run),
- its predicted time (warm-up + one run, scaled from the previous count, plus
  the check) would end past --deadline s after the process started.
Timed runs: after the warm-up run, up to --repeats runs, stopping early once
they have used --run-budget s (at least one); the line's "seconds" is their
median.  Each timed run ends when the device is done (the peer's run()
synchronises); drawing x0 (before) and copying the final states to the host
(after) are outside the timer.  ember's own line (cuda_suite.cu) times the
whole sample() call, x0 draws and the copy back included.

Imports common (threads, affinity, XLA/JAX environment): import it before
torch or jax.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
import traceback
from typing import Callable

import common
import numpy as np

T_START = time.perf_counter()

ETA = 0.1
DIM = 10
CASES = {
    "P1": dict(chains=(10_000,), steps=100, quick=dict(chains=(1_000,), steps=100)),
    "P7": dict(chains=(1_000, 10_000, 100_000, 1_000_000, 10_000_000), steps=1_000,
               quick=dict(chains=(1_000, 10_000), steps=100)),
}
TIMED = "advance only: x0 is drawn before the timer, the final states are copied to the host after it"


def parse_args(desc: str, extra: Callable[[argparse.ArgumentParser], None] | None = None):
    ap = argparse.ArgumentParser(description=desc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sweep", action="store_true", help="run the GPU cases (this module)")
    ap.add_argument("--case", default="P1,P7", help="P1, P7 or P1,P7 (default)")
    ap.add_argument("--quick", action="store_true",
                    help="small sizes (smoke test): P1 10^3 chains, P7 10^3 and 10^4 chains x 100 steps")
    ap.add_argument("--chains", default=None,
                    help="P7's chain counts, comma-separated (default 1e3,1e4,1e5,1e6,1e7)")
    ap.add_argument("--repeats", type=int, default=5, help="timed runs at most (default 5)")
    ap.add_argument("--run-budget", type=float, default=4.0,
                    help="stop the timed runs of one count once they used this many s (default 4)")
    ap.add_argument("--skip-after", type=float, default=10.0,
                    help="skip the next chain count when a run took longer (default 10 s)")
    ap.add_argument("--deadline", type=float, default=0.0,
                    help="skip counts predicted to end later than this many s after start (0: none)")
    ap.add_argument("--seed", type=int, default=1234)
    if extra:
        extra(ap)
    args = ap.parse_args()
    args.cases = tuple(c.strip().upper() for c in args.case.split(",") if c.strip())
    for c in args.cases:
        if c not in CASES:
            ap.error(f"unknown case {c!r}; the GPU cases are {', '.join(CASES)}")
    if args.repeats < 1:
        ap.error("--repeats must be >= 1")
    if args.chains:
        try:
            args.p7_chains = tuple(int(float(c)) for c in args.chains.split(","))
        except ValueError:
            ap.error("--chains takes integers, e.g. 1000,1e4")
    else:
        args.p7_chains = None
    return args


def points(name: str, args) -> tuple[tuple[int, ...], int]:
    spec = CASES[name]["quick"] if args.quick else CASES[name]
    chains = spec["chains"]
    if name == "P7" and args.p7_chains:
        chains = args.p7_chains
    return tuple(chains), spec["steps"]


def case_config(name: str, chains: int, steps: int, args) -> dict:
    """common.check_case / common.result_line's cfg for one point."""
    return dict(name=name, method="ula", target="gaussian", dim=DIM, chains=chains, steps=steps,
                params=dict(eta=ETA), repeats=args.repeats, quick=args.quick,
                run_budget=args.run_budget, warmup=True)


def _moments_chunked(x, rows: int = 250_000):
    """n finite rows, nonfinite rows, mean, var (ddof 1), 4th central moment of
    x (chains, dim), in float64, a block of rows at a time (two passes): the
    numbers of common.check_moments, without its float64 copies of the whole
    array (seconds at 10^7 chains x 10)."""
    n, nonfinite, s1 = 0, 0, None
    for i in range(0, x.shape[0], rows):
        b = np.asarray(x[i:i + rows], dtype=np.float64)
        fin = np.isfinite(b).all(axis=1)
        k = int(fin.sum())
        nonfinite += b.shape[0] - k
        b = b if k == b.shape[0] else b[fin]
        part = b.sum(0)
        s1 = part if s1 is None else s1 + part
        n += k
    m = s1 / max(n, 1)
    s2 = np.zeros_like(m)
    s4 = np.zeros_like(m)
    for i in range(0, x.shape[0], rows):
        b = np.asarray(x[i:i + rows], dtype=np.float64)
        fin = np.isfinite(b).all(axis=1)
        b = b if fin.all() else b[fin]
        b -= m
        b *= b
        s2 += b.sum(0)
        b *= b
        s4 += b.sum(0)
    return n, nonfinite, m, s2 / max(n - 1, 1), s4 / max(n, 1)


def check_case(cfg: dict, final) -> dict:
    """common.check_case, the same numbers and JSON, with the sample moments of
    a large Gaussian-ULA result computed by _moments_chunked."""
    x = np.asarray(final)
    if cfg["target"] != "gaussian" or cfg["method"] != "ula" or x.ndim != 2 or x.shape[0] < 500_000:
        return _common_check_case(cfg, final)
    mu, sig2, _ = common.gaussian_params(cfg["dim"])
    true_mean, true_var = common.ula_gaussian_law(mu, sig2, cfg["params"]["eta"], cfg["steps"])
    n, nonfinite, m, v, m4 = _moments_chunked(x)
    res: dict = {"truth": f"closed-form law of {cfg['steps']} ULA steps from N(0,I)"}
    if n < 2:
        res.update(ok=False, nonfinite=nonfinite, reason="fewer than 2 finite chains")
        return res
    tol_m = common.K_SE * np.sqrt(v / n)
    tol_v = common.K_SE * np.sqrt(np.maximum(m4 - v * v, 0.0) / n)
    err_m = np.abs(m - true_mean)
    err_v = np.abs(v - true_var)
    me, mt = common._worst(err_m, tol_m)
    ve, vt = common._worst(err_v, tol_v)
    ok = bool(np.all(err_m <= tol_m) and np.all(err_v <= tol_v) and nonfinite == 0)
    res.update(mean_err=me, mean_tol=mt, var_err=ve, var_tol=vt, k_se=common.K_SE,
               nonfinite=nonfinite)
    res["sample_mean"] = [round(float(t), 5) for t in m]
    res["sample_var"] = [round(float(t), 5) for t in v]
    res["ok"] = ok
    return res


_common_check_case = common.check_case


def measure(run: Callable[[object], object], prepare: Callable[[int], object], cfg: dict,
            warmups: int = 1) -> tuple[common.Timing, list[float]]:
    """`warmups` untimed-for-the-median runs (their times are returned; the first
    includes any compilation; none when cfg["warmup"] is False), then timed runs:
    cfg["repeats"] at most, stopping once the next one would pass cfg["run_budget"]
    seconds in all (at least one).  run(arg) must return only when the device is
    done; prepare(i) (outside the timer) must too."""
    firsts = []
    out = None
    for w in range(warmups if cfg.get("warmup", True) else 0):
        arg = prepare(0)
        t0 = time.perf_counter()
        out = run(arg)
        firsts.append(time.perf_counter() - t0)
        del arg
    runs: list[float] = []
    for i in range(1, cfg["repeats"] + 1):
        out = None                    # free the previous result before the next run
        arg = prepare(i)
        t0 = time.perf_counter()
        out = run(arg)
        runs.append(time.perf_counter() - t0)
        del arg
        if sum(runs) + runs[-1] > cfg["run_budget"]:
            break
    first = firsts[0] if firsts else float("nan")
    return common.Timing(first=first, runs=runs, result=out), firsts


def is_oom(exc: BaseException) -> bool:
    text = f"{type(exc).__name__}: {exc}"
    return ("OutOfMemory" in text or "out of memory" in text.lower()
            or "RESOURCE_EXHAUSTED" in text)


def _short(exc: BaseException, n: int = 300) -> str:
    text = f"{type(exc).__name__}: {exc}".strip().replace("\n", " ")
    return text if len(text) <= n else text[:n] + " ..."


def main(impl, desc: str, runner,
         version: Callable[[], str], device: Callable[[], str],
         cleanup: Callable[[], None] | None = None, warmup_optional: bool = False,
         extra_args: Callable[[argparse.ArgumentParser], None] | None = None) -> int:
    """runner(cfg, args) -> common.Outcome (timed with measure(); an attribute
    `fields`, a dict, is added to the line's top level), or a dict of runners
    by impl name; impl: the name, or a function of the parsed arguments that
    returns it (extra_args adds the option it reads).  Prints one JSON
    line per (case, chains).  warmup_optional: the impl compiles nothing per
    chain count (eager), so a count whose run is predicted to take > 2 s gets no
    warm-up run (the smaller counts before it warmed the kernels up)."""
    args = parse_args(desc, extra_args)
    common.check_case = check_case    # result_line's check, chunked for 10^6+ chains
    if callable(impl):
        impl = impl(args)
    if isinstance(runner, dict):
        runner = runner[impl]
    status = 0
    try:
        dev = device()
        ver = version()
    except Exception as exc:          # no device / backend: say so, one line
        traceback.print_exc(file=sys.stderr)
        common.emit({"impl": impl, "error": "device set-up failed: " + _short(exc)})
        return 1
    for name in args.cases:
        counts, steps = points(name, args)
        prev: tuple[int, float] | None = None     # (chains, median seconds of a run)
        stop: str | None = None
        for chains in counts:
            base = {"case": name, "impl": impl, "device": dev, "dim": DIM, "chains": chains,
                    "steps": steps}
            cfg = case_config(name, chains, steps, args)
            est = None
            if prev is not None:
                est = prev[1] * chains / prev[0]
                if prev[1] > args.skip_after and stop is None:
                    stop = (f"the run at {prev[0]:,} chains took {prev[1]:.3g} s "
                            f"> {args.skip_after:g} s (--skip-after)")
            left = args.deadline - (time.perf_counter() - T_START)
            if stop is None and args.deadline > 0 and left <= 0:
                common.emit({**base, "skipped": f"--deadline {args.deadline:g} s passed"})
                continue
            if stop is None and est is not None and args.deadline > 0:
                warm = not (warmup_optional and est > 2.0)
                need = est * (2 if warm else 1) + 2e-8 * chains * DIM   # + the check
                if need > left:
                    stop = (f"predicted {need:.3g} s (scaled from {prev[0]:,} chains) "
                            f"> {left:.3g} s left of --deadline {args.deadline:g} s")
            if stop is not None:
                common.emit({**base, "skipped": stop})
                continue
            if warmup_optional and est is not None and est > 2.0:
                cfg["warmup"] = False
            try:
                out = runner(cfg, args)
                line = common.result_line(impl, cfg, out, ver)
                line = {"case": line.pop("case"), "impl": line.pop("impl"), "device": dev,
                        **line, **getattr(out, "fields", {}), "timed": TIMED}
                if not cfg["warmup"]:
                    line["timed"] += "; no warm-up run at this count (eager; smaller counts ran before)"
                if not line["check"].get("ok"):
                    status = 1
                common.emit(line)
                prev = (chains, out.timing.median)
            except Exception as exc:  # report and go on with the next point
                traceback.print_exc(file=sys.stderr)
                if is_oom(exc):
                    stop = f"out of device memory at {chains:,} chains"
                    common.emit({**base, "skipped": "out of device memory: " + _short(exc)})
                else:
                    common.emit({**base, "error": _short(exc, 600)})
                    status = 1
            finally:
                out = None
                gc.collect()
                if cleanup:
                    try:
                        cleanup()
                    except Exception:
                        pass
    return status


def steps_per_block(steps: int, block: int) -> int:
    """Largest divisor of steps that is <= block."""
    block = max(1, min(block, steps))
    return max(k for k in range(1, block + 1) if steps % k == 0)
