#!/usr/bin/env python3
"""The C++ energies of posteriors.hpp against an independent NumPy/SciPy implementation of each
Stan model's log density (pdb_models.py).

    tools/.venv/bin/python bench/posteriordb/check_posteriors.py --exe build/bench/posteriordb/posteriordb_check_energies

For every posterior, at 9 points y = mean + sd * z in the unconstrained coordinates (mean and sd
from reference/<name>.json, z ~ N(0, 1) from a fixed seed, clipped to [-2.5, 2.5]):
  - value: U_cpp(y_i) - U_cpp(y_0) against -(logp(y_i) - logp(y_0)), relative to 1 + |difference|;
  - gradient: the C++ dual-number gradient against central differences of the Python logp
    (Richardson-extrapolated, h = 2e-3 sd and h/2), as the error in U per posterior sd, relative
    to 1 + |g| sd;
  - constrained parameters: the C++ constrain(y) against pdb_models' to_con(y), relative.
Then at 12 far points, up to 20 units from the mean in every coordinate (y = mean + 8 max(sd, 1) z),
where Python's logp is finite: the value against the centre's (1e-9) and the gradient against
differences (1e-4 relative to |g| + |dU|/|dy| + 1): a formula that loses digits far out (a
log-sum-exp written a + softplus(b - a) did, and MALA found its false minima) fails here.
Exit status 0 when every error is below its tolerance (1e-9, 1e-6, 1e-10; for gp_pois_regr,
whose energy factorises a near-singular matrix, 1e-6, 1e-4, 1e-6; at far points both Gaussian
processes 1e-5 and 1e-2). 77 when NumPy or SciPy is missing.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
try:
    import numpy as np
    import pdb_models
except ImportError as e:  # no NumPy/SciPy: skipped (ctest's SKIP_RETURN_CODE)
    print(f"check_posteriors: skipped, {e}")
    sys.exit(77)


def fd_grad(f, y, sd):
    g = np.empty(len(y))
    for i in range(len(y)):
        def central(h):
            a, b = y.copy(), y.copy()
            a[i] += h
            b[i] -= h
            return (f(a) - f(b)) / (2 * h)
        h = 2e-3 * sd[i]
        g[i] = (4 * central(h / 2) - central(h)) / 3
    return g


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--exe", required=True, help="the check_energies program")
    ap.add_argument("--points", type=int, default=9)
    ap.add_argument("--far", type=int, default=12)
    a = ap.parse_args()
    rng = np.random.default_rng(20260)
    posts, pts = [], []
    for P in pdb_models.ALL:
        p = P()
        ref = json.load(open(os.path.join(HERE, "reference", P.name + ".json")))
        mean = np.array([v["mean"] for v in ref["unconstrained"].values()])
        sd = np.array([v["sd"] for v in ref["unconstrained"].values()])
        assert list(ref["unconstrained"]) == p.unames and list(ref["constrained"]) == p.params, P.name
        ys = [mean] + [mean + sd * np.clip(rng.standard_normal(p.D), -2.5, 2.5) for _ in range(a.points - 1)]
        # far points: up to 20 units from the mean in every coordinate, where a lost digit shows
        far = [mean + 8 * np.maximum(sd, 1) * np.clip(rng.standard_normal(p.D), -2.5, 2.5) for _ in range(a.far)]
        posts.append((p, sd, ys, far))
        pts += [(P.name, y) for y in ys + far]
    with tempfile.TemporaryDirectory() as tmp:
        fin, fout = os.path.join(tmp, "points.txt"), os.path.join(tmp, "out.txt")
        with open(fin, "w") as f:
            for name, y in pts:
                f.write(name + " " + " ".join(repr(float(v)) for v in y) + "\n")
        subprocess.run([a.exe, HERE, "--eval", fin, fout], check=True)
        rows = {}
        for line in open(fout):
            head, tail = line.split("|")
            w = head.split()
            rows.setdefault(w[0], []).append((float(w[1]), np.array(w[2:], float), np.array(tail.split(), float)))
    failed = 0
    print(f"{'posterior':46s}  D  value    gradient  constrain  far: value  gradient  compared")
    for p, sd, ys, far in posts:
        got = rows.get(p.name, [])
        if len(got) != len(ys) + len(far):
            print(f"FAIL {p.name}: {len(got)} rows from the C++ program, expected {len(ys)}")
            failed += 1
            continue
        noisy = p.name == "gp_pois_regr-gp_pois_regr"
        tv, tg, tc = (1e-6, 1e-4, 1e-6) if noisy else (1e-9, 1e-6, 1e-10)
        lp = [p.logp(y) for y in ys]
        ev = eg = ec = 0.0
        for i, (y, (u, g, c)) in enumerate(zip(ys, got)):
            if i > 0:
                dc, dp = u - got[0][0], -(lp[i] - lp[0])
                ev = max(ev, abs(dc - dp) / (1 + abs(dp)))
            gp = -fd_grad(p.logp, np.array(y, float), sd)
            eg = max(eg, np.max(np.abs(g - gp) * sd / (1 + np.abs(gp) * sd)))
            con = p.to_con(np.array(y, float))
            cp = np.array([con[k][0] for k in p.params])
            ec = max(ec, np.max(np.abs(c - cp) / (1 + np.abs(cp))))
        # far points: the value against the centre point's, where the Python value is finite
        fv = fg = 0.0
        nf = 0
        for y, (u, g, c) in zip(far, got[len(ys):]):
            y = np.array(y, float)
            with np.errstate(all="ignore"):
                try:
                    lpf = p.logp(y)
                except (np.linalg.LinAlgError, ValueError):
                    lpf = np.nan
            if not np.isfinite(lpf):
                continue
            nf += 1
            dp = -(lpf - lp[0])
            if not np.isfinite(u):
                fv = np.inf
                continue
            fv = max(fv, abs((u - got[0][0]) - dp) / (1 + abs(dp)))
            with np.errstate(all="ignore"):
                gp = -fd_grad(p.logp, y, np.maximum(sd, 1e-3 * np.maximum(np.abs(y), 1)))
            scale = np.abs(gp) + np.abs(dp) / np.maximum(np.abs(y - np.array(ys[0])), 1) + 1
            fg = max(fg, np.max(np.abs(g - gp) / scale))
        # far from the posterior both Gaussian processes factorise near-singular matrices (σ or the
        # jitter far below α²): rounding noise there, in NumPy's factorisation as in the C++ one
        gp = p.name.startswith("gp_pois_regr-")
        tf, tfg = (1e-5, 1e-2) if gp else (1e-9, 1e-4)
        ok = ev < tv and eg < tg and ec < tc and fv < tf and fg < tfg
        failed += not ok
        print(f"{p.name:46s} {p.D:2d}  {ev:.1e}  {eg:.1e}   {ec:.1e}     {fv:.1e}  {fg:.1e}  {nf:2d}/{len(far)}   "
              f"{'ok' if ok else 'FAILED'}")
    print(f"{len(posts) - failed} of {len(posts)} posteriors agree with the Python implementation")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
