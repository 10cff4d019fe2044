"""Load a run saved with ember::save_npz into ArviZ, with the model's names and shapes.

    import ember_arviz
    idata = ember_arviz.load("run.npz")             # an arviz.InferenceData
    ember-npz-to-arviz run.npz [--live-only]         # prints ArviZ's own summary

A posterior in a model's terms (ember::posterior, include/ember/posterior.hpp) is saved as one
array per variable, `posterior.<name>` and `posterior_predictive.<name>`, each (chain, draw,
*shape): those become the variables of ArviZ's `posterior` and `posterior_predictive` groups,
with the dimensions `<name>_dim_<i>` unless `dims` says otherwise. A run in the sampler's
coordinates has only `draws` (chain, draw, dim): it becomes one variable `x` with dimension `dim`.
A run with ember's `record_stats()` stage saved each kept transition's report as
`sample_stats.<name>` (chain, draw): lp, acceptance_rate, diverging, n_steps, truncated or
reached_max_treedepth, energy and tree_depth where the sampler has them; they become ArviZ's
`sample_stats` group (so az.bfmi and the divergence plots work). Without it, `sample_stats.diverging`
is each chain's flag (went non-finite and was frozen) repeated over its draws. With `live_only`
the chains that went non-finite are dropped first, as ember's summary() does. Needs numpy and arviz.

A run over MPI ranks saved one file per rank (ember::mpi::save_npz with npz_layout::per_rank,
`run.rank<r>-of-<R>.npz`) is read as one run from the list of its files: `merge(paths)` gives
the arrays of the whole run, `load(paths)` its InferenceData.
"""
import sys

import numpy as np

__all__ = ["load", "merge", "main"]

GROUPS = ("posterior", "posterior_predictive", "sample_stats")

# Arrays with one entry per chain, first axis: concatenated over ranks' files in rank order.
PER_CHAIN = ("draws", "final_states", "divergent", "diverged_at", "chain_acceptance")


def merge(paths):
    """The arrays of a run saved one file per MPI rank, as one run's (a dict name -> array).

    Per-chain arrays (draws, posterior.*, posterior_predictive.*, sample_stats.*, final_states, divergent,
    diverged_at, chain_acceptance) are concatenated along the chain axis in rank order; every
    other array is the run's, the same in every file, and is taken from rank 0's. Refuses files
    of different runs or a missing rank."""
    runs = [dict(np.load(p)) for p in paths]
    if not runs:
        raise ValueError("merge: no files")
    for p, r in zip(paths, runs):
        if "rank" not in r:
            raise ValueError(f"{p} is not a file of a run over MPI ranks (it has no 'rank'); load it alone")
    runs.sort(key=lambda r: int(r["rank"]))
    ranks = int(runs[0]["ranks"])
    if [int(r["rank"]) for r in runs] != list(range(ranks)) or any(int(r["ranks"]) != ranks for r in runs):
        raise ValueError(f"merge: expected the files of ranks 0..{ranks - 1} once each, got ranks "
                         f"{sorted(int(r['rank']) for r in runs)}")
    offset = 0
    for r in runs:
        if int(r["chain_offset"]) != offset or int(r["total_chains"]) != int(runs[0]["total_chains"]):
            raise ValueError("merge: the files' chain ranges do not follow each other (files of different runs?)")
        offset += r["divergent"].shape[0]
    if offset != int(runs[0]["total_chains"]):
        raise ValueError(f"merge: the files hold {offset} chains of {int(runs[0]['total_chains'])}")
    out = {}
    for key in runs[0]:
        group = key.partition(".")[0]
        if key in PER_CHAIN or (group in GROUPS and "." in key):
            out[key] = np.concatenate([r[key] for r in runs], axis=0)
        elif key not in ("rank", "ranks", "chain_offset", "total_chains"):
            out[key] = runs[0][key]
    return out


def load(path, live_only=False, coords=None, dims=None):
    """The run in `path` (or in the list of a run's per-rank files, see merge) as an
    arviz.InferenceData; `coords` and `dims` go to az.from_dict."""
    import arviz as az

    run = merge(path) if isinstance(path, (list, tuple)) else dict(np.load(path))
    divergent = run["divergent"]  # (chain,) bool
    groups = {g: {} for g in GROUPS}
    for key in run:
        group, _, name = key.partition(".")
        if name and group in groups:
            groups[group][name] = run[key]
    if not groups["posterior"]:
        if "draws" not in run:
            raise ValueError(f"{path} has no draws: the run had no record() stage (only final states)")
        groups["posterior"]["x"] = run["draws"]
        dims = {"x": ["dim"], **(dims or {})}
    keep = ~divergent if live_only else np.ones_like(divergent)
    groups = {g: {k: v[keep] for k, v in vs.items()} for g, vs in groups.items()}
    if not groups["posterior"]:
        raise ValueError(f"{path} has no draws: the run had no record() stage (only final states)")
    kept = next(iter(groups["posterior"].values())).shape[1]
    stats = groups["sample_stats"] or {"diverging": np.repeat(divergent[keep][:, None], kept, axis=1)}
    return az.from_dict(
        posterior=groups["posterior"],
        posterior_predictive=groups["posterior_predictive"] or None,
        sample_stats=stats,
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
