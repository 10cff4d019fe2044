#!/usr/bin/env python3
"""Derive the reference moments in reference/<posterior>.json from posteriordb's reference draws,
and copy each posterior's (small) data file to data/.

    tools/.venv/bin/python bench/posteriordb/make_reference.py --git /path/to/posteriordb/.git [--commit HASH]
    tools/.venv/bin/python bench/posteriordb/make_reference.py --tree /path/to/posteriordb-checkout

Reads, for each posterior P of pdb_models.ALL, at the given posteriordb commit:
  posterior_database/reference_posteriors/draws/draws/P.json.zip   (10 chains x 1,000 draws, Stan NUTS, thinned by 10)
  posterior_database/reference_posteriors/draws/info/P.info.json   (how they were made)
  posterior_database/posteriors/P.json                             (model and data names)
  posterior_database/data/data/<data>.json.zip                     (copied to data/<data>.json as is)

Per coordinate f (each constrained parameter as posteriordb names it, and each unconstrained
coordinate of the ember energy): mean, sd (ddof 1), mean of the square, and the Monte-Carlo
standard errors of the mean of f and of f^2: mcse = sd(g) / sqrt(ESS(g)) for g = f and g = f^2,
with ESS by Geyer's initial monotone sequence over the pooled multi-chain autocorrelation (the
"basic" ESS of Vehtari et al. 2021, eq. 10-11, without rank normalisation; Stan's ess_mean). A
batch-means MCSE (batches of 50 draws within chains, 200 batches) is stored beside it as a check.
"""
import argparse
import hashlib
import io
import json
import os
import subprocess
import sys
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree

REPO = "https://github.com/stan-dev/posteriordb"


class Source:
    def __init__(self, git=None, tree=None, commit=None):
        self.git, self.tree = git, tree
        if git:
            self.commit = commit or subprocess.check_output(["git", "--git-dir", git, "rev-parse", "HEAD"], text=True).strip()
        else:
            self.commit = commit or "unknown"

    def read(self, path):
        if self.git:
            return subprocess.check_output(["git", "--git-dir", self.git, "show", f"{self.commit}:{path}"])
        with open(os.path.join(self.tree, path), "rb") as f:
            return f.read()

    def read_zip_json(self, path):
        z = zipfile.ZipFile(io.BytesIO(self.read(path)))
        names = [n for n in z.namelist() if n.endswith(".json") and not n.startswith("__MACOSX")]
        return z.read(names[0])


def autocov(x):
    """Autocovariance of a 1-D series at lags 0..n-1 (biased, divided by n), by FFT."""
    n = len(x)
    x = x - x.mean()
    m = 1 << (2 * n - 1).bit_length()
    f = np.fft.rfft(x, m)
    return np.fft.irfft(f * np.conj(f), m)[:n] / n


def ess_geyer(chains):
    """Multi-chain ESS of the mean (chains: M x N), Geyer's initial positive and monotone sequences."""
    M, N = chains.shape
    acov = np.array([autocov(c) for c in chains])
    chain_mean = chains.mean(axis=1)
    W = np.mean(acov[:, 0] * N / (N - 1))  # mean within-chain variance
    B = N * np.var(chain_mean, ddof=1) if M > 1 else 0.0
    var_plus = (N - 1) / N * W + B / N
    if var_plus <= 0:
        return float(M * N)
    rho = 1.0 - (W - acov.mean(axis=0)) / var_plus
    rho[0] = 1.0
    # Geyer: sums of pairs P_k = rho_2k + rho_2k+1, kept while positive, made monotone.
    P = []
    for k in range(0, N - 1, 2):
        p = rho[k] + rho[k + 1]
        if p <= 0:
            break
        P.append(p)
    P = np.minimum.accumulate(np.array(P)) if P else np.array([1.0])
    tau = -1.0 + 2.0 * P.sum()
    tau = max(tau, 1.0 / np.log10(M * N))  # Stan's cap: ESS <= MN log10(MN)
    return float(M * N / tau)


def mcse_batch(chains, b=50):
    M, N = chains.shape
    nb = N // b
    means = chains[:, : nb * b].reshape(M, nb, b).mean(axis=2).ravel()
    return float(np.std(means, ddof=1) / np.sqrt(len(means)))


def moments(chains):
    """chains: M x N draws of one coordinate."""
    M, N = chains.shape
    x = chains.ravel()
    sq = chains ** 2
    ess_m, ess_s = ess_geyer(chains), ess_geyer(sq)
    sd, sd_sq = float(np.std(x, ddof=1)), float(np.std(sq.ravel(), ddof=1))
    return {
        "mean": float(x.mean()),
        "sd": sd,
        "mean_sq": float(np.mean(x * x)),
        "mcse_mean": sd / np.sqrt(ess_m),
        "mcse_mean_sq": sd_sq / np.sqrt(ess_s),
        "ess_mean": ess_m,
        "ess_mean_sq": ess_s,
        "mcse_mean_batch": mcse_batch(chains),
        "mcse_mean_sq_batch": mcse_batch(sq),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--git", help="posteriordb's git directory (a bare clone works)")
    ap.add_argument("--tree", help="a posteriordb checkout (then give --commit)")
    ap.add_argument("--commit", help="posteriordb commit (default: HEAD of --git)")
    ap.add_argument("--only", nargs="*", help="posterior names")
    a = ap.parse_args()
    if not (a.git or a.tree):
        ap.error("give --git or --tree")
    src = Source(a.git, a.tree, a.commit)
    os.makedirs(os.path.join(HERE, "data"), exist_ok=True)
    os.makedirs(os.path.join(HERE, "reference"), exist_ok=True)

    import pdb_models  # after the data are copied (below) its classes read data/

    for P in pdb_models.ALL:
        if a.only and P.name not in a.only:
            continue
        post_path = f"posterior_database/posteriors/{P.name}.json"
        post = json.loads(src.read(post_path))
        data_path = f"posterior_database/data/data/{post['data_name']}.json.zip"
        raw = src.read_zip_json(data_path)
        assert P.data_file == post["data_name"] + ".json", (P.name, P.data_file, post["data_name"])
        with open(os.path.join(HERE, "data", P.data_file), "wb") as f:
            f.write(raw)
        model_path = f"posterior_database/models/stan/{post['model_name']}.stan"
        draws_path = f"posterior_database/reference_posteriors/draws/draws/{P.name}.json.zip"
        info_path = f"posterior_database/reference_posteriors/draws/info/{P.name}.info.json"
        draws_raw = src.read(draws_path)
        info = json.loads(src.read(info_path))
        draws = json.loads(zipfile.ZipFile(io.BytesIO(draws_raw)).read(f"{P.name}.json"))
        p = P()
        M = len(draws)
        N = len(draws[0][p.params[0]])
        assert list(draws[0].keys()) == p.params, (P.name, list(draws[0].keys()), p.params)
        con = {k: np.array([np.asarray(ch[k], float) for ch in draws]) for k in p.params}  # M x N each
        flat = {k: v.ravel() for k, v in con.items()}
        unc = p.to_unc(flat).reshape(M, N, p.D)
        # round trip: unconstrained -> constrained reproduces the draws
        back = p.to_con(unc.reshape(M * N, p.D))
        err = max(float(np.max(np.abs(back[k] - flat[k]) / (1 + np.abs(flat[k])))) for k in p.params)
        assert err < 1e-6, (P.name, err)
        out = {
            "posterior": P.name,
            "source": {
                "repository": REPO,
                "commit": src.commit,
                "draws": draws_path,
                "draws_sha256": hashlib.sha256(draws_raw).hexdigest(),
                "draws_info": info_path,
                "posterior": post_path,
                "model": model_path,
                "data": data_path,
                "method": info["inference"],
                "licence": "posteriordb: BSD-3-Clause (LICENCE.md); see bench/posteriordb/README.md",
            },
            "derived_by": "bench/posteriordb/make_reference.py (NumPy " + np.__version__ + ")",
            "n_chains": M,
            "n_draws_per_chain": N,
            "n_draws": M * N,
            "ess_method": "Geyer initial monotone sequence, multi-chain (Stan's ess_mean); mcse = sd/sqrt(ess); "
                          "*_batch: batch means, 50-draw batches within chains",
            "constrained": {k: moments(con[k]) for k in p.params},
            "unconstrained": {u: moments(unc[:, :, j]) for j, u in enumerate(p.unames)},
        }
        with open(os.path.join(HERE, "reference", P.name + ".json"), "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")
        worst = max(v["ess_mean"] for v in out["constrained"].values())
        least = min(min(v["ess_mean"], v["ess_mean_sq"]) for v in out["constrained"].values())
        print(f"{P.name:48s} D={p.D:2d} params={len(p.params):2d} draws={M}x{N} ESS min {least:7.0f} max {worst:7.0f}")


if __name__ == "__main__":
    main()
