"""The benchmark matrix's metric and JSON contract (issue 13; docs/benchmarking.md), for the peers.

`matrix_line` turns one run's kept draws (reported coordinates), gradient counts and times into
the one JSON line per configuration that ember's matrix also prints, keys in the contract's order:
ArviZ rank-normalised bulk/tail ESS (Vehtari et al. 2021) of x and x², rank R-hat, b² of E[x²]
against the reference, each chain's squared error over the pooled variance Vᵢ (Robnik et al.,
MAMS/LAPS), and the health gates.
"""

from __future__ import annotations

import json
import math
import sys

import numpy as np

B2_THRESHOLD = 0.01
Z_BOUND = 5.0
RHAT_BOUND = 1.01
ACCEPTANCE_BOUND = 0.1


def _arviz():
    import arviz
    return arviz


def ess_and_rhat(draws: np.ndarray) -> dict:
    """draws: (chains, draws, dim) float64. Per-coordinate bulk ESS of x and x², tail ESS of x,
    rank-normalised split R-hat of x (arviz.ess / arviz.rhat)."""
    az = _arviz()
    x = az.convert_to_dataset(draws)
    x2 = az.convert_to_dataset(draws * draws)
    v = lambda ds: np.asarray(ds["x"].values, dtype=np.float64).reshape(-1)
    return {"bulk_x": v(az.ess(x, method="bulk")), "bulk_x2": v(az.ess(x2, method="bulk")),
            "tail_x": v(az.ess(x, method="tail")), "rhat": v(az.rhat(x, method="rank"))}


def b2_curves(draws: np.ndarray, ref_second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """b²_avg(n), b²_max(n) for n = 1..N: bᵢ²(n) = mean over chains c of (m̂_cᵢ(n) − E[xᵢ²])² / Vᵢ,
    m̂_cᵢ(n) chain c's mean of xᵢ² over its first n kept draws, Vᵢ the variance of xᵢ² over all kept
    draws of all chains (pooled, ddof 1). Each chain's error is squared before averaging: the pooled
    mean of 128 warmed-up chains is within b² 0.01 at the first draw, which would say nothing."""
    sq = draws * draws
    n = np.arange(1, sq.shape[1] + 1, dtype=np.float64)
    m = np.cumsum(sq, axis=1) / n[None, :, None]
    var = sq.reshape(-1, sq.shape[2]).var(axis=0, ddof=1)
    b2 = ((m - ref_second[None, None, :]) ** 2).mean(axis=0) / np.where(var > 0, var, np.inf)[None, :]
    return b2.mean(axis=1), b2.max(axis=1)


def grads_to_threshold(curve: np.ndarray, cum_grads: np.ndarray) -> float | None:
    """Gradients per chain up to the first n from which curve stays < B2_THRESHOLD until N."""
    above = np.nonzero(~(curve < B2_THRESHOLD))[0]
    first = 0 if above.size == 0 else int(above[-1]) + 1
    if first >= curve.size:
        return None
    return float(cum_grads[first])


def _num(x):
    if x is None:
        return None
    x = float(x)
    return None if not math.isfinite(x) else float(f"{x:.6g}")


def matrix_line(*, impl: str, target, sampler: str, precision: str, chains: int, warmup: int,
                draws: np.ndarray, compile_s: float | None, warmup_s: float, sampling_s: float,
                grads_warmup: np.ndarray, grads_sampling: np.ndarray, divergences: int,
                acceptance: float, target_acceptance: float | None, seed: int = 1) -> dict:
    """One configuration's line. draws: (chains, N, dim) reported coordinates; grads_warmup:
    (chains,) total per chain; grads_sampling: (chains, N) per kept step."""
    draws = np.asarray(draws, dtype=np.float64)
    c, n, d = draws.shape
    grads_sampling = np.asarray(grads_sampling, dtype=np.float64).reshape(c, n)
    cum_grads = np.cumsum(grads_sampling.mean(axis=0))
    g_samp = float(cum_grads[-1])
    g_warm = float(np.mean(grads_warmup))
    failed = []
    if not np.all(np.isfinite(draws)):
        # ESS and b² are undefined; report the run as broken rather than crash
        line_stats = dict(ess_bulk_x=None, ess_bulk_x2=None, ess_tail_x=None, ess_min=None, ess_per_s=None,
                          ess_per_grad=None, grads_to_b2_avg=None, grads_to_b2_max=None, b2_avg=None,
                          b2_max=None, rhat_max=None)
        failed.append("nonfinite")
    else:
        e = ess_and_rhat(draws)
        ess_min = float(min(e["bulk_x"].min(), e["bulk_x2"].min()))
        b2a, b2m = b2_curves(draws, target.ref_second)
        mean = draws.mean(axis=(0, 1))
        second = (draws * draws).mean(axis=(0, 1))
        var_x = draws.reshape(-1, d).var(axis=0)
        var_x2 = (draws * draws).reshape(-1, d).var(axis=0)
        z_mean = (mean - target.ref_mean) / np.sqrt(var_x / e["bulk_x"] + target.ref_mean_se ** 2)
        z_second = (second - target.ref_second) / np.sqrt(var_x2 / e["bulk_x2"] + target.ref_second_se ** 2)
        rhat_max = float(np.max(e["rhat"]))
        line_stats = dict(ess_bulk_x=float(e["bulk_x"].min()), ess_bulk_x2=float(e["bulk_x2"].min()),
                          ess_tail_x=float(e["tail_x"].min()), ess_min=ess_min, ess_per_s=ess_min / sampling_s,
                          ess_per_grad=ess_min / (c * g_samp) if g_samp > 0 else None,
                          grads_to_b2_avg=grads_to_threshold(b2a, cum_grads),
                          grads_to_b2_max=grads_to_threshold(b2m, cum_grads),
                          b2_avg=float(b2a[-1]), b2_max=float(b2m[-1]), rhat_max=rhat_max)
        if divergences > 0:
            failed.append("divergences")
        if not rhat_max <= RHAT_BOUND:
            failed.append("rhat")
        if target_acceptance is not None and abs(acceptance - target_acceptance) > ACCEPTANCE_BOUND:
            failed.append("acceptance")
        z = np.concatenate([z_mean, z_second])
        if not np.all(np.abs(z) <= Z_BOUND):
            failed.append("bias")
        if ess_min > c * n:
            failed.append("ess>draws")
    s = line_stats
    line = {"impl": impl, "target": target.name, "sampler": sampler, "precision": precision,
            "backend": "cpu", "chains": c, "warmup": warmup, "draws": n, "seed": int(seed), "dim": d,
            "compile_s": _num(compile_s), "warmup_s": _num(warmup_s), "sampling_s": _num(sampling_s),
            "grads_warmup": _num(g_warm), "grads_sampling": _num(g_samp),
            "ess_bulk_x": _num(s["ess_bulk_x"]), "ess_bulk_x2": _num(s["ess_bulk_x2"]),
            "ess_tail_x": _num(s["ess_tail_x"]), "ess_min": _num(s["ess_min"]),
            "ess_per_s": _num(s["ess_per_s"]), "ess_per_grad": _num(s["ess_per_grad"]),
            "grads_to_b2_avg": _num(s["grads_to_b2_avg"]), "grads_to_b2_max": _num(s["grads_to_b2_max"]),
            "b2_avg": _num(s["b2_avg"]), "b2_max": _num(s["b2_max"]),
            "divergences": int(divergences), "rhat_max": _num(s["rhat_max"]),
            "acceptance": _num(acceptance), "target_acceptance": _num(target_acceptance),
            "health": "ok" if not failed else ",".join(failed), "skipped": None}
    return line


def skipped_line(*, impl: str, target: str, sampler: str, precision: str, chains: int, warmup: int,
                 draws: int, dim: int, reason: str, seed: int = 1) -> dict:
    """A configuration a peer cannot run: every measured key null, the reason in "skipped"."""
    keys = ("compile_s", "warmup_s", "sampling_s", "grads_warmup", "grads_sampling", "ess_bulk_x",
            "ess_bulk_x2", "ess_tail_x", "ess_min", "ess_per_s", "ess_per_grad", "grads_to_b2_avg",
            "grads_to_b2_max", "b2_avg", "b2_max", "divergences", "rhat_max", "acceptance",
            "target_acceptance", "health")
    line = {"impl": impl, "target": target, "sampler": sampler, "precision": precision, "backend": "cpu",
            "chains": chains, "warmup": warmup, "draws": draws, "seed": int(seed), "dim": dim}
    line.update({k: None for k in keys})
    line["skipped"] = reason
    return line


def emit(line: dict) -> None:
    sys.stdout.write(json.dumps(line, separators=(", ", ": ")) + "\n")
    sys.stdout.flush()
