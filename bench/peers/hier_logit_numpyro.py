# NumPyro's NUTS on the hierarchical logistic regression of targets/hier_logit.hpp, for
# bench/compare_hier_logit.sh: the data of ../shared/models/hier_logit/simulate.py, 1,000 warm-up
# and 1,000 draws per chain, with the chains either on separate XLA host devices ("parallel", one
# device per chain) or batched into one program ("vectorized"). The run is made twice and the second
# (its JIT cached) is reported, as one JSON line: warm-up and sampling seconds, the smallest bulk and
# tail ESS over the 60 parameters (ArviZ), the largest R-hat, divergences, gradients per chain.
#   python hier_logit_numpyro.py DATA_DIR CHAINS parallel|vectorized
import json
import os
import sys
import time

data, chains, method = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if method == "parallel":
    os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + f" --xla_force_host_platform_device_count={chains}"

import arviz as az
import jax
import numpy as np
import numpyro
import numpyro.distributions as dist
from numpyro.infer import MCMC, NUTS

X = np.load(f"{data}/X.npy").astype(np.float32)
y = np.load(f"{data}/y.npy").astype(np.float32)
county = np.load(f"{data}/county.npy")
state = np.load(f"{data}/state_of_county.npy")


def model(X, county, state, y):
    mu = numpyro.sample("mu", dist.Normal(0.0, 2.5))
    s_state = numpyro.sample("s_state", dist.HalfNormal(1.0))
    s_county = numpyro.sample("s_county", dist.HalfNormal(1.0))
    with numpyro.plate("k", X.shape[1]):
        beta = numpyro.sample("beta", dist.Normal(0.0, 1.0))
    with numpyro.plate("s", 6):
        u = numpyro.sample("u", dist.Normal(0.0, 1.0))
    with numpyro.plate("j", 48):
        z = numpyro.sample("z", dist.Normal(0.0, 1.0))
    alpha = mu + s_state * u[state] + s_county * z
    with numpyro.plate("n", X.shape[0]):
        numpyro.sample("y", dist.Bernoulli(logits=alpha[county] + X @ beta), obs=y)


def run(seed):
    mcmc = MCMC(NUTS(model), num_warmup=1000, num_samples=1000, num_chains=chains, chain_method=method,
                progress_bar=False)
    t0 = time.perf_counter()
    mcmc.warmup(jax.random.PRNGKey(seed), X, county, state, y, extra_fields=("num_steps", "diverging"))
    jax.block_until_ready(mcmc.post_warmup_state)
    t1 = time.perf_counter()
    mcmc.run(mcmc.post_warmup_state.rng_key, X, county, state, y, extra_fields=("num_steps", "diverging"))
    jax.block_until_ready(mcmc.get_samples())
    return mcmc, t1 - t0, time.perf_counter() - t1


run(0)
mcmc, warmup_s, sampling_s = run(1)
s = az.summary(az.from_numpyro(mcmc), kind="diagnostics")
extra = mcmc.get_extra_fields(group_by_chain=True)
print(json.dumps({"peer": "numpyro_nuts", "method": method, "chains": chains, "warmup_s": round(warmup_s, 3),
                  "sampling_s": round(sampling_s, 3), "min_ess_bulk": float(s.ess_bulk.min()),
                  "min_ess_tail": float(s.ess_tail.min()), "max_rhat": float(s.r_hat.max()),
                  "divergent": int(np.asarray(extra["diverging"]).sum()),
                  "gradients_per_chain": float(np.asarray(extra["num_steps"]).sum()) / chains}))
