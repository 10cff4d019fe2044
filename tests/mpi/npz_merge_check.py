"""ctest mpi_checkpoint's last step: a run over 2 ranks saved both ways (ember::mpi::save_npz,
gathered on rank 0 and one file per rank) reads back as the same run. The per-rank files, merged
by ember_arviz.merge, hold the gathered file's draws, per-chain arrays and run totals exactly, and
every rank's file holds the whole run's summary (ember::mpi::summarize) equal to the gathered file's
(summarize of the whole result on one rank); ArviZ's ESS of the merged draws is the gathered's.

    python npz_merge_check.py gathered.npz split.rank0-of-2.npz split.rank1-of-2.npz
"""
import sys

import numpy as np

import ember_arviz


def main(gathered, *parts):
    g = dict(np.load(gathered))
    m = ember_arviz.merge(list(parts))
    bad = []
    for key in ("draws", "final_states", "divergent", "diverged_at", "acceptance_rate", "divergent_transitions",
                "truncated_transitions", "gradients", "warmup_gradients", "seconds", "warmup_seconds"):
        if not np.array_equal(g[key], m[key]):
            bad.append(key)
    for key in g:
        if key.startswith("summary_") and not np.array_equal(g[key], m[key], equal_nan=True):
            bad.append(key)
    for p in parts:
        one = dict(np.load(p))
        if not np.array_equal(one["summary_ess_bulk"], g["summary_ess_bulk"], equal_nan=True):
            bad.append(p + ": summary")
    import arviz as az

    a = az.ess(ember_arviz.load(list(parts))).x.values
    b = az.ess(ember_arviz.load(gathered)).x.values
    if not np.array_equal(a, b):
        bad.append("arviz ess")
    print(f"draws {m['draws'].shape}, bulk ESS {g['summary_ess_bulk']}, ArviZ's {a}")
    if bad:
        print("differ: " + ", ".join(bad))
        return 1
    print("the per-rank files merge to the gathered file")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
