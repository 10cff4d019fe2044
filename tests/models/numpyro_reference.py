#!/usr/bin/env python3
"""Reference posteriors for examples/13_models.cpp, by long runs of NumPyro's NUTS.

    bench/.venv-numpyro/bin/python tests/models/numpyro_reference.py MODEL [--data-dir DIR]

MODEL: robust_regression | poisson_glm | varying_intercepts. Writes tests/models/reference/MODEL.json
in the layout of posteriordb's reference moments (bench/posteriordb/reference/): "constrained" maps
Stan-style names (1-based) to mean, mean_sq and their Monte-Carlo standard errors (ArviZ's mcse of
the mean), with the command, the versions and the run's settings. The models are written here in
NumPyro, independently of the C++ bodies; each reads the same data files as the example:
data/kidiq.csv (posteriordb's kidiq, Gelman & Hill 2006), data/poisson_counts.csv (simulated by
`--make-poisson-data`, seed 20261128), and for varying_intercepts the .npy files that
`13_models export DIR` writes (targets::hier_logit<double>::simulated(1, 500)).
NUTS settings: 4 chains, 5,000 warm-up and 25,000 kept draws each (10,000 for varying_intercepts),
target acceptance 0.9, seed 0.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def make_poisson_data(path):
    rng = np.random.default_rng(20261128)
    n = 300
    x = rng.normal(size=(n, 3))
    log_exposure = np.log(rng.uniform(0.5, 3.0, size=n))
    eta = log_exposure + 0.4 + x @ np.array([0.3, -0.6, 0.15])
    y = rng.poisson(np.exp(eta))
    with open(path, "w") as f:
        f.write("# Counts with an exposure offset, simulated by tests/models/numpyro_reference.py --make-poisson-data\n"
                "# (NumPy default_rng(20261128)): x ~ N(0, I3), exposure ~ U(0.5, 3), y ~ Poisson(exposure\n"
                "# exp(0.4 + x.(0.3, -0.6, 0.15))). ember's own; no licence beyond the project's.\n")
        f.write("y,log_exposure,x1,x2,x3\n")
        for i in range(n):
            f.write(f"{int(y[i])},{float(log_exposure[i])!r},{float(x[i, 0])!r},{float(x[i, 1])!r},{float(x[i, 2])!r}\n")


def read_csv(path):
    """A table of numbers after its '#' lines and its header line."""
    lines = [line for line in open(path) if not line.startswith("#")]
    return np.array([[float(v) for v in line.split(",")] for line in lines[1:]])


def models(args):
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist

    if args.model == "robust_regression":
        d = read_csv(os.path.join(ROOT, "data", "kidiq.csv"))
        y, X = d[:, 0], np.stack([d[:, 1], (d[:, 2] - 100) / 15], axis=1)

        def model():
            alpha = numpyro.sample("alpha", dist.Normal(80.0, 20.0))
            beta = numpyro.sample("beta", dist.Normal(0.0, 20.0).expand([2]))
            sigma = numpyro.sample("sigma", dist.HalfNormal(30.0))
            nu = numpyro.sample("nu", dist.Gamma(2.0, 0.1))
            numpyro.sample("y", dist.StudentT(nu, alpha + jnp.asarray(X) @ beta, sigma), obs=jnp.asarray(y))

        return model
    if args.model == "poisson_glm":
        d = read_csv(os.path.join(ROOT, "data", "poisson_counts.csv"))
        y, off, X = d[:, 0], d[:, 1], d[:, 2:]

        def model():
            alpha = numpyro.sample("alpha", dist.Normal(0.0, 2.0))
            beta = numpyro.sample("beta", dist.Normal(0.0, 1.0).expand([3]))
            numpyro.sample("y", dist.Poisson(rate=jnp.exp(jnp.asarray(off) + alpha + jnp.asarray(X) @ beta)), obs=jnp.asarray(y))

        return model
    if args.model == "varying_intercepts":
        X = np.load(os.path.join(args.data_dir, "X.npy")).astype(np.float64)
        y = np.load(os.path.join(args.data_dir, "y.npy")).astype(np.float64).ravel()
        county = np.load(os.path.join(args.data_dir, "county.npy")).astype(np.int64).ravel()
        state = np.load(os.path.join(args.data_dir, "state_of_county.npy")).astype(np.int64).ravel()

        def model():
            alpha0 = numpyro.sample("alpha0", dist.Normal(0.0, 2.5))
            s_state = numpyro.sample("sigma_state", dist.HalfNormal(1.0))
            s_county = numpyro.sample("sigma_county", dist.HalfNormal(1.0))
            beta = numpyro.sample("beta", dist.Normal(0.0, 1.0).expand([3]))
            u = numpyro.sample("u", dist.Normal(0.0, 1.0).expand([6]))
            z = numpyro.sample("z", dist.Normal(0.0, 1.0).expand([48]))
            alpha = alpha0 + s_state * u[state] + s_county * z
            numpyro.sample("y", dist.Bernoulli(logits=alpha[county] + jnp.asarray(X) @ beta), obs=jnp.asarray(y))

        return model
    raise SystemExit(f"unknown model {args.model}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--data-dir")
    ap.add_argument("--make-poisson-data", action="store_true")
    args = ap.parse_args()
    if args.make_poisson_data:
        make_poisson_data(os.path.join(ROOT, "data", "poisson_counts.csv"))
        return
    import arviz as az
    import jax
    import numpyro
    from numpyro.infer import MCMC, NUTS

    numpyro.set_host_device_count(4)
    kept = 10_000 if args.model == "varying_intercepts" else 25_000
    mcmc = MCMC(NUTS(models(args), target_accept_prob=0.9), num_warmup=5_000, num_samples=kept, num_chains=4,
                chain_method="parallel", progress_bar=False)
    t0 = time.time()
    mcmc.run(jax.random.PRNGKey(0))
    seconds = time.time() - t0
    samples = mcmc.get_samples(group_by_chain=True)
    out = {}
    for name, v in samples.items():
        v = np.asarray(v, dtype=np.float64)
        flat = v.reshape(v.shape[0], v.shape[1], -1)
        for k in range(flat.shape[2]):
            x = flat[:, :, k]
            key = name if v.ndim == 2 else f"{name}[{k + 1}]"
            out[key] = {
                "mean": float(x.mean()),
                "sd": float(x.std(ddof=1)),
                "mean_sq": float((x * x).mean()),
                "mcse_mean": float(az.mcse(x, method="mean")),
                "mcse_mean_sq": float(az.mcse(x * x, method="mean")),
                "rhat": float(az.rhat(x)),
                "ess_bulk": float(az.ess(x, method="bulk")),
            }
    divergences = int(np.asarray(mcmc.get_extra_fields()["diverging"]).sum())
    doc = {
        "posterior": args.model,
        "command": "bench/.venv-numpyro/bin/python " + " ".join(["tests/models/numpyro_reference.py"] + sys.argv[1:]),
        "method": {"sampler": "NumPyro NUTS", "numpyro": numpyro.__version__, "jax": jax.__version__, "chains": 4,
                   "warmup": 5_000, "draws_per_chain": kept, "target_accept_prob": 0.9, "seed": 0,
                   "seconds": round(seconds, 1), "divergences": divergences},
        "constrained": out,
    }
    path = os.path.join(ROOT, "tests", "models", "reference", args.model + ".json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    worst = max(r["rhat"] for r in out.values())
    print(f"wrote {path}: {len(out)} values, max R-hat {worst:.4f}, {divergences} divergences, {seconds:.0f} s")


if __name__ == "__main__":
    main()
