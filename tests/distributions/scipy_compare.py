#!/usr/bin/env python3
"""ember's log-densities (tests/distributions/dump.cpp's lines) against scipy.stats.

    python tests/distributions/scipy_compare.py DUMP_EXECUTABLE

Exit 77 (ctest's skip) without numpy and scipy. Both sides compute in double from closed forms;
the tolerance, 1e-12 relative (1e-12 absolute near 0), allows a few roundings of each.
"""
import json
import subprocess
import sys

try:
    import numpy as np
    from scipy import stats
    from scipy import special
    from scipy.special import expit
except ImportError:
    print("no numpy/scipy: skipped")
    sys.exit(77)

REFERENCE = {
    "normal": lambda x, m, s: stats.norm.logpdf(x, loc=m, scale=s),
    "lognormal": lambda x, m, s: stats.lognorm.logpdf(x, s, scale=np.exp(m)),
    "cauchy": lambda x, m, s: stats.cauchy.logpdf(x, loc=m, scale=s),
    "laplace": lambda x, m, s: stats.laplace.logpdf(x, loc=m, scale=s),
    "logistic": lambda x, m, s: stats.logistic.logpdf(x, loc=m, scale=s),
    "exponential": lambda x, lam, _: stats.expon.logpdf(x, scale=1 / lam),
    "bernoulli_logit": lambda y, eta, _: stats.bernoulli.logpmf(int(y), expit(eta)),
    "poisson_log": lambda y, eta, _: stats.poisson.logpmf(int(y), np.exp(eta)),
    "binomial_logit": lambda k, n, eta: stats.binom.logpmf(int(k), int(n), expit(eta)),
    "student_t": lambda x, nu, m, s: stats.t.logpdf(x, nu, loc=m, scale=s),
    "gamma": lambda x, a, b: stats.gamma.logpdf(x, a, scale=1 / b),
    "inv_gamma": lambda x, a, b: stats.invgamma.logpdf(x, a, scale=b),
    "weibull": lambda x, k, lam: stats.weibull_min.logpdf(x, k, scale=lam),
    "beta": lambda x, a, b: stats.beta.logpdf(x, a, b),
    "uniform": lambda x, a, b: stats.uniform.logpdf(x, loc=a, scale=b - a),
    "neg_binomial_2_log": lambda y, eta, phi: stats.nbinom.logpmf(int(y), phi, phi / (np.exp(eta) + phi)),
    "categorical_logit": lambda y, eta: eta[int(y)] - special.logsumexp(eta),
    "ordered_logistic": lambda y, eta, c: np.log(
        np.diff(np.concatenate([[0.0], expit(np.asarray(c) - eta), [1.0]]))[int(y)]
    ),
    "multi_normal_cholesky": lambda y, mu, L: stats.multivariate_normal.logpdf(
        y, mu, np.asarray(L).reshape(len(mu), len(mu)) @ np.asarray(L).reshape(len(mu), len(mu)).T
    ),
    "log_gamma": lambda x, _a, _b: special.gammaln(x),
    "digamma": lambda x, _a, _b: special.digamma(x),
}

out = subprocess.run([sys.argv[1]], check=True, capture_output=True, text=True).stdout
worst, count, seen = 0.0, 0, set()
for line in out.splitlines():
    r = json.loads(line)
    want = float(REFERENCE[r["f"]](*r["args"]))
    got = r["value"]
    err = abs(got - want) / max(abs(want), 1.0)
    seen.add(r["f"])
    count += 1
    if not err <= 1e-12:
        print(f"{r['f']}{tuple(r['args'])}: ember {got!r}, scipy {want!r}, relative error {err:.3g}")
        sys.exit(1)
    worst = max(worst, err)
missing = set(REFERENCE) - seen
if missing:
    print(f"no values for {sorted(missing)}")
    sys.exit(1)
print(f"{count} values of {len(seen)} families agree with scipy.stats; worst relative error {worst:.3g}")
