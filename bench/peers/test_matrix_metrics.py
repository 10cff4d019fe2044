"""Checks of bench/peers/metrics.py and targets.py on draws whose answers are known.

    bench/.venv/bin/python bench/peers/test_matrix_metrics.py [TARGETS_DIR]

Independent N(0, 1) draws: bulk ESS within 15 % of C·N (its estimator's spread is a few per
cent at C·N = 8,000), b² at N below 0.01, health "ok". The same draws with
a shifted mean must fail the "bias" gate; identical chains copied must fail "rhat"; a sampler
reporting 0.9 acceptance against 0.65 must fail "acceptance". With TARGETS_DIR (the JSON of
ember_export_targets), every target must load and pass its check against ember's energy, and a
changed parameter must be caught. Exit status 1 on any failure.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

import numpy as np

import metrics

FAILURES = []


def check(cond: bool, what: str) -> None:
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILURES.append(what)


def target(d):
    return SimpleNamespace(name="iid", ref_mean=np.zeros(d), ref_second=np.ones(d),
                           ref_mean_se=np.zeros(d), ref_second_se=np.zeros(d))


def line(draws, acceptance=0.65, divergences=0):
    c, n, d = draws.shape
    return metrics.matrix_line(impl="test", target=target(d), sampler="iid", precision="double", chains=c,
                               warmup=0, draws=draws, compile_s=None, warmup_s=1.0, sampling_s=2.0,
                               grads_warmup=np.zeros(c), grads_sampling=np.full((c, n), 3.0),
                               divergences=divergences, acceptance=acceptance, target_acceptance=0.65)


def metric_checks() -> None:
    rng = np.random.default_rng(7)
    c, n, d = 16, 500, 5
    x = rng.standard_normal((c, n, d))
    r = line(x)
    check(list(r)[:4] == ["impl", "target", "sampler", "precision"] and list(r)[-2:] == ["health", "skipped"],
          "keys in the contract's order")
    check(abs(r["ess_bulk_x"] / (c * n) - 1) < 0.15, f"iid bulk ESS of x near C·N ({r['ess_bulk_x']} of {c * n})")
    check(abs(r["ess_bulk_x2"] / (c * n) - 1) < 0.15, f"iid bulk ESS of x² near C·N ({r['ess_bulk_x2']})")
    check(r["ess_min"] == min(r["ess_bulk_x"], r["ess_bulk_x2"]), "ess_min = min(bulk x, bulk x²)")
    check(abs(r["ess_per_s"] - r["ess_min"] / 2.0) < 1e-3 * r["ess_per_s"], "ess_per_s = ess_min / sampling_s")
    check(abs(r["ess_per_grad"] - r["ess_min"] / (c * 3.0 * n)) < 1e-3 * r["ess_per_grad"],
          "ess_per_grad = ess_min / (C · grads_sampling)")
    check(r["grads_sampling"] == 3.0 * n, "grads_sampling per chain")
    check(r["b2_avg"] < 0.01 and r["grads_to_b2_avg"] is not None and r["grads_to_b2_avg"] <= 3.0 * n,
          f"iid b²_avg < 0.01 at N, reached within the run ({r['b2_avg']}, {r['grads_to_b2_avg']} grads)")
    check(r["health"] == "ok", f"iid draws are healthy ({r['health']})")
    # b²(n) by hand for one n
    b2a, b2m = metrics.b2_curves(x, np.ones(d))
    k = 99
    m = (x[:, :k + 1] ** 2).mean(axis=1)  # per chain, shape (c, d)
    v = (x ** 2).reshape(-1, d).var(axis=0, ddof=1)
    e = ((m - 1) ** 2).mean(axis=0) / v
    check(np.allclose(b2a[k], np.mean(e)) and np.allclose(b2m[k], np.max(e)),
          "b²_avg(n), b²_max(n) as defined: each chain's squared error, pooled V")
    # Two chains whose x² is 0.5 and 1.5 at every draw pool to E x² = 1 exactly, but each is 0.5 off.
    two = np.sqrt(np.array([0.5, 1.5]))[:, None, None] * np.ones((2, 50, 1))
    b2a2, _ = metrics.b2_curves(two, np.ones(1))
    check(np.allclose(b2a2, 0.25 / (0.25 * 100 / 99)), "b² squares each chain's error before averaging")
    check(metrics.grads_to_threshold(np.array([0.5, 0.001, 0.02, 0.005, 0.001]), np.arange(1, 6) * 2.0) == 8.0,
          "grads to b² counts from the last crossing below 0.01")
    check(metrics.grads_to_threshold(np.array([0.001, 0.02]), np.array([1.0, 2.0])) is None,
          "grads to b² is null when b² ends above 0.01")
    check("bias" in line(x + 0.2)["health"], "a shifted mean fails the bias gate")
    check("rhat" in line(x + np.linspace(-1, 1, c)[:, None, None])["health"], "chains at different places fail rhat")
    check("acceptance" in line(x, acceptance=0.9)["health"], "acceptance 0.9 against 0.65 fails")
    check("divergences" in line(x, divergences=1)["health"], "a divergence fails")
    x2_anti = np.abs(x)  # |x|: sampling errors of x² the same; E[x] wrong
    check("bias" in line(x2_anti)["health"], "|x| (right x², wrong mean) fails the bias gate")


def target_checks(directory: str) -> None:
    import jax.numpy as jnp
    import targets

    for name in targets.TARGET_NAMES:
        try:
            targets.load(directory, name, jnp.float32)
            check(True, f"{name}: log-density, gradient and reported map agree with ember")
        except Exception as e:  # noqa: BLE001
            check(False, f"{name}: {e}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, key, value in (("banana", "b", 0.031), ("eight_schools", "mu_sd", 4.0),
                                 ("neal_funnel_noncentred", "v_sd", 2.9), ("rosenbrock_pairs", "a", 0.06)):
            shutil.copy(Path(directory) / f"{name}.json", tmp)
            spec = json.loads((Path(tmp) / f"{name}.json").read_text())
            spec["params"][key] = value
            (Path(tmp) / f"{name}.json").write_text(json.dumps(spec))
            try:
                targets.load(tmp, name, jnp.float32)
                check(False, f"{name}: a changed {key} went unnoticed")
            except targets.TargetMismatch:
                check(True, f"{name}: a changed {key} is caught")


if __name__ == "__main__":
    metric_checks()
    if len(sys.argv) > 1:
        target_checks(sys.argv[1])
    print(f"{len(FAILURES)} failed" if FAILURES else "all passed")
    sys.exit(1 if FAILURES else 0)
