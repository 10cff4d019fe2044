#!/usr/bin/env python3
"""Load an ember run saved with ember::save_npz into ArviZ, and print ArviZ's own summary.

    python scripts/npz_to_arviz.py run.npz [--live-only]

`draws` is already (chain, draw, dim), ArviZ's order, so it goes into az.from_dict as it is; the
per-chain divergence flags go into sample_stats. With --live-only the chains that diverged are
dropped first, as ember's summary() does. Needs numpy and arviz.
"""
import sys

import arviz as az
import numpy as np


def load(path, live_only=False):
    run = np.load(path)
    draws = run["draws"]                    # (chain, draw, dim)
    divergent = run["divergent"]            # (chain,) bool
    if live_only:
        draws = draws[~divergent]
        divergent = divergent[~divergent]
    chains, kept, _ = draws.shape
    return az.from_dict(
        posterior={"x": draws},
        sample_stats={"diverging": np.repeat(divergent[:, None], kept, axis=1)},
        dims={"x": ["dim"]},
    )


if __name__ == "__main__":
    idata = load(sys.argv[1], live_only="--live-only" in sys.argv)
    print(az.summary(idata, var_names=["x"], kind="diagnostics"))
