#!/usr/bin/env python3
"""ember's summary against ArviZ's implementation of the same estimators, on the same draws.

    python tests/diagnostics/arviz_compare.py run.npz      (a file from ember::save_npz)

Exit 77 (ctest's skip) without numpy and arviz. ArviZ ranks exactly and uses double-precision
FFTs; ember ranks through a histogram and transforms in float (docs/diagnostics.md), so the two
differ by a small perturbation of the same estimator. The tolerance is a tenth of the
estimators' own Monte-Carlo sd at this size (ESS: at least 2% relative, tests/diagnostics/
convergence_test.cpp; R-hat: at least 3e-4), i.e. a disagreement that would matter less than a
tenth of the noise: 0.2% for ESS, 3e-5 for R-hat.
"""
import sys

import os

try:
    import arviz as az
    import numpy as np
except ImportError:
    print("no numpy/arviz: skipped")
    sys.exit(77)

# The draws go through python/ember_arviz, the loader docs/diagnostics.md shows.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from ember_arviz import load  # noqa: E402

run = np.load(sys.argv[1])
idata = load(sys.argv[1], live_only=True)
draws = idata.posterior["x"].values.astype(np.float64)  # (chain, draw, dim), live chains
assert draws.shape[0] == (~run["divergent"]).sum()
# The per-draw statistics (record_stats()) reach ArviZ's sample_stats with the draws' chains: lp is
# −U of the banana at each draw (U in float in the run: 16 ulp of its terms).
stats = idata.sample_stats
assert set(stats.data_vars) >= {"lp", "acceptance_rate", "diverging", "n_steps", "truncated"}, list(stats.data_vars)
assert stats["diverging"].dtype == bool and stats["lp"].shape == draws.shape[:2]
bend = draws[:, :, 1] - 0.25 * draws[:, :, 0] ** 2
u = 0.125 * draws[:, :, 0] ** 2 + 0.5 * bend ** 2
scale = 1 + 0.125 * draws[:, :, 0] ** 2 + 0.5 * (np.abs(draws[:, :, 1]) + 0.25 * draws[:, :, 0] ** 2) ** 2
lp_err = np.abs(stats["lp"].values + u) / scale
assert lp_err.max() < 16 * np.finfo(np.float32).eps, lp_err.max()
acc = stats["acceptance_rate"].values
assert ((acc >= 0) & (acc <= 1)).all()
failed = 0
for d in range(draws.shape[2]):
    x = draws[:, :, d]
    dev2 = (x - x.mean()) ** 2
    ours = {k: float(run["summary_" + k][d]) for k in ("ess_bulk", "ess_tail", "ess_mean", "ess_sq", "rhat")}
    theirs = {
        "ess_bulk": float(az.ess(x, method="bulk")),
        "ess_tail": float(az.ess(x, method="tail")),
        "ess_mean": float(az.ess(x, method="mean")),
        "ess_sq": float(az.ess(dev2, method="mean")),
        "rhat": float(az.rhat(x, method="rank")),
    }
    for k in ours:
        if k == "rhat":
            ok = abs(ours[k] - theirs[k]) <= 3e-5
        else:
            ok = abs(ours[k] / theirs[k] - 1) <= 2e-3
        print(f"dim {d} {k:9s} ember {ours[k]:14.6f} arviz {theirs[k]:14.6f} {'ok' if ok else 'DIFFERENT'}")
        failed += not ok
sys.exit(1 if failed else 0)
