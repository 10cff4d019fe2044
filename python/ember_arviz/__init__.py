"""Load a run saved with ember::save_npz into ArviZ, with the model's names and shapes.

    import ember_arviz
    idata = ember_arviz.load("run.npz")             # an arviz.InferenceData
    ember-npz-to-arviz run.npz [--live-only]         # prints ArviZ's own summary

A posterior in a model's terms (ember::posterior, include/ember/posterior.hpp) is saved as one
array per variable, `posterior.<name>` and `posterior_predictive.<name>`, each (chain, draw,
*shape): those become the variables of ArviZ's `posterior` and `posterior_predictive` groups,
with the dimensions `<name>_dim_<i>` unless `dims` says otherwise. A run in the sampler's
coordinates has only `draws` (chain, draw, dim): it becomes one variable `x` with dimension `dim`.
The per-chain divergence flags go into `sample_stats.diverging`; with `live_only` the chains that
diverged are dropped first, as ember's summary() does. Needs numpy and arviz.
"""
import sys

import numpy as np

__all__ = ["load", "main"]

GROUPS = ("posterior", "posterior_predictive")


def load(path, live_only=False, coords=None, dims=None):
    """The run in `path` as an arviz.InferenceData; `coords` and `dims` go to az.from_dict."""
    import arviz as az

    run = np.load(path)
    divergent = run["divergent"]  # (chain,) bool
    groups = {g: {} for g in GROUPS}
    for key in run.files:
        group, _, name = key.partition(".")
        if name and group in groups:
            groups[group][name] = run[key]
    if not groups["posterior"]:
        if "draws" not in run.files:
            raise ValueError(f"{path} has no draws: the run had no record() stage (only final states)")
        groups["posterior"]["x"] = run["draws"]
        dims = {"x": ["dim"], **(dims or {})}
    keep = ~divergent if live_only else np.ones_like(divergent)
    groups = {g: {k: v[keep] for k, v in vs.items()} for g, vs in groups.items()}
    if not groups["posterior"]:
        raise ValueError(f"{path} has no draws: the run had no record() stage (only final states)")
    kept = next(iter(groups["posterior"].values())).shape[1]
    return az.from_dict(
        posterior=groups["posterior"],
        posterior_predictive=groups["posterior_predictive"] or None,
        sample_stats={"diverging": np.repeat(divergent[keep][:, None], kept, axis=1)},
        coords=coords,
        dims=dims,
    )


def main(argv=None):
    import arviz as az

    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: ember-npz-to-arviz run.npz [--live-only]")
        return 0 if argv else 2
    idata = load(argv[0], live_only="--live-only" in argv)
    print(az.summary(idata, kind="diagnostics"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
