#!/usr/bin/env python3
"""Trace, histogram and pair plots of an ember run saved with ember::save_npz.

    python scripts/plot_draws.py run.npz [-o run.png] [--chains 4] [--dims 0 1 2]

The archive's `draws` array is (chain, draw, dim) (ArviZ's order). Chains flagged in `divergent`
are left out of the histograms and pair plots (the statistics of summary() leave them out too)
and drawn in red in the traces. The figure has, per dimension, a trace of a few chains and a
histogram over all live chains, annotated with the summary's mean, sd, bulk/tail ESS and R-hat;
then a pair plot (2-D histogram, log colour scale) of every pair of the chosen dimensions. Needs numpy and
matplotlib.
"""
import argparse
import itertools
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("npz", help="file written by ember::save_npz")
    ap.add_argument("-o", "--out", help="PNG to write (default: the npz name with .png)")
    ap.add_argument("--chains", type=int, default=4, help="chains shown in the traces")
    ap.add_argument("--dims", type=int, nargs="*", help="dimensions to show (default: up to 4)")
    ap.add_argument("--draws", type=int, default=400, help="draws shown in the traces")
    args = ap.parse_args()

    run = np.load(args.npz)
    if "draws" not in run.files:
        raise SystemExit(f"{args.npz} has no draws (the pipeline had no record())")
    draws = run["draws"]  # (chain, draw, dim)
    chains, kept, dims = draws.shape
    divergent = run["divergent"] if "divergent" in run.files else np.zeros(chains, bool)
    live = draws[~divergent]
    show = args.dims if args.dims else list(range(min(dims, 4)))
    pairs = list(itertools.combinations(show, 2))

    rows = len(show) + (1 if pairs else 0)
    fig = plt.figure(figsize=(11, 2.6 * rows), constrained_layout=True)
    grid = fig.add_gridspec(rows, max(2, len(pairs)))
    title = f"{os.path.basename(args.npz)}: {chains} chains x {kept} draws"
    if divergent.any():
        title += f", {divergent.sum()} divergent (excluded from histograms)"
    fig.suptitle(title)

    for row, d in enumerate(show):
        half = max(1, grid.ncols // 2)
        ax = fig.add_subplot(grid[row, :half])
        n = min(args.draws, kept)
        for c in range(min(args.chains, chains)):
            ax.plot(np.arange(n), draws[c, :n, d], lw=0.7, color="red" if divergent[c] else None, label=f"chain {c}")
        ax.set_xlabel("kept draw")
        ax.set_ylabel(f"x[{d}]")
        ax.set_title(f"trace, dim {d} (first {n} draws)")
        ax = fig.add_subplot(grid[row, half:])
        ax.hist(live[:, :, d].ravel(), bins=120, density=True, color="0.35")
        ax.set_xlabel(f"x[{d}]")
        ax.set_ylabel("density")
        if "summary_mean" in run.files:
            s = {k: run["summary_" + k][d] for k in ("mean", "sd", "ess_bulk", "ess_tail", "rhat")}
            ax.axvline(s["mean"], color="C1", lw=1)
            ax.set_title(f"dim {d}: mean {s['mean']:.3f}, sd {s['sd']:.3f}, ESS bulk {s['ess_bulk']:.0f}, "
                         f"tail {s['ess_tail']:.0f}, R-hat {s['rhat']:.4f}", fontsize=9)
    for i, (a, b) in enumerate(pairs):
        ax = fig.add_subplot(grid[len(show), i])
        # Log colour scale, so that the tails show beside the mode.
        ax.hist2d(live[:, :, a].ravel(), live[:, :, b].ravel(), bins=120, cmap="Greys", norm=matplotlib.colors.LogNorm())
        ax.set_xlabel(f"x[{a}]")
        ax.set_ylabel(f"x[{b}]")
        ax.set_title(f"pair: dims {a}, {b}")

    out = args.out or args.npz.rsplit(".", 1)[0] + ".png"
    fig.savefig(out, dpi=90)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
