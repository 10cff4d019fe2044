#!/usr/bin/env python3
"""Draws what examples/15_train_ebm.cpp wrote: each learned density exp(-E) on its grid as a heat
map, with model samples over it, and the data beside it, one row per .npz, into one PNG.

    python scripts/plot_ebm.py OUT.png DIR/eight_gaussians.npz DIR/two_moons.npz

Needs numpy and matplotlib. The grid covers [-3, 3]^2 (the example's).
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: python scripts/plot_ebm.py OUT.png RUN.npz [RUN.npz ...]")
    runs = sys.argv[2:]
    fig, axes = plt.subplots(len(runs), 2, figsize=(8, 4 * len(runs)), squeeze=False)
    for row, path in zip(axes, runs):
        z = np.load(path)
        e = z["energy"].astype(np.float64)
        density = np.exp(-(e - e.min()))
        name = path.rsplit("/", 1)[-1].removesuffix(".npz")
        row[0].imshow(density, extent=(-3, 3, -3, 3), cmap="magma", origin="upper")
        s = z["samples"]
        row[0].scatter(s[:, 0], s[:, 1], s=1, c="cyan", alpha=0.5)
        row[0].set_title(f"{name}: exp(-E) and model samples")
        d = z["data"]
        row[1].scatter(d[:, 0], d[:, 1], s=1, c="black", alpha=0.3)
        row[1].set_xlim(-3, 3)
        row[1].set_ylim(-3, 3)
        row[1].set_aspect("equal")
        row[1].set_title(f"{name}: data")
    fig.tight_layout()
    fig.savefig(sys.argv[1], dpi=80)


if __name__ == "__main__":
    main()
