#!/usr/bin/env python3
"""A model's run in its own terms against a reference posterior, variable by variable.

    python tests/models/check_reference.py run.npz reference.json [--plot out.png]

run.npz: ember::save_npz of ember::posterior(...) (one array per named variable), read through
python/ember_arviz. reference.json: posteriordb's reference moments (bench/posteriordb/reference/)
or one made by tests/models/numpyro_reference.py, both in the same layout: "constrained" maps a
Stan-style name ("mu", "theta[3]", 1-based) to its mean, mean_sq and their Monte-Carlo standard
errors. For each, z = (ours - reference) / sqrt(mcse_ours^2 + mcse_ref^2), ours from ArviZ's
mcse; the check fails when any |z| >= 5 (P(|z| > 5) = 5.7e-7 per z-score under the null). With
--plot, ArviZ's forest plot of the posterior group, parameter names on its axis.
Exit 77 (ctest's skip) without numpy/arviz.
"""
import json
import os
import re
import sys

try:
    import arviz as az
    import numpy as np
except ImportError:
    print("no numpy/arviz: skipped")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import ember_arviz  # noqa: E402

Z_BOUND = 5.0


def main(argv):
    npz, ref_path = argv[1], argv[2]
    idata = ember_arviz.load(npz, live_only=True)
    ref = json.load(open(ref_path))["constrained"]
    worst, failed = 0.0, []
    for name, r in ref.items():
        m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)(?:\[([0-9,]+)\])?", name)
        var, idx = m.group(1), m.group(2)
        if var not in idata.posterior:
            failed.append(f"{name}: no variable {var} in {npz}")
            continue
        x = idata.posterior[var].values.astype(np.float64)
        if idx:
            x = x[(slice(None), slice(None)) + tuple(int(i) - 1 for i in idx.split(","))]
        for stat, values in (("mean", x), ("mean_sq", x * x)):
            ours = float(values.mean())
            se = float(az.mcse(values, method="mean"))
            z = (ours - r[stat]) / np.hypot(se, r["mcse_" + stat])
            worst = max(worst, abs(z))
            if not abs(z) < Z_BOUND:
                failed.append(f"{name} {stat}: ember {ours:.5g} +- {se:.2g}, reference {r[stat]:.5g} +- {r['mcse_' + stat]:.2g}, z = {z:.2f}")
    for f in failed:
        print("FAILED", f)
    print(f"{len(ref)} variables of {os.path.basename(ref_path)}: max |z| {worst:.2f} ({'fail' if failed else 'pass'})")
    if "--plot" in argv:
        import matplotlib

        matplotlib.use("Agg")
        out = argv[argv.index("--plot") + 1]
        axes = az.plot_forest(idata, combined=True, figsize=(6, 6))
        axes[0].figure.savefig(out, dpi=90, bbox_inches="tight")
        print("wrote", out)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
