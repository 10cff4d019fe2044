"""Reference moments of Bayesian logistic regression on the breast-cancer data, by importance
sampling (independent of ember).

Model: X is the 30 features of data/breast_cancer.csv, each column standardised to mean 0 and sd
1 (the n - 1 form, as ember::dataset::standardize), with a column of ones in front (the
intercept): 569 x 31. y = benign (0/1). beta ~ N(0, I) (every coordinate, intercept included),
y_i ~ Bernoulli(sigmoid(x_i . beta)).

Method: Newton's method finds the mode m and the Hessian H there. A first round of importance
sampling from a multivariate Student-t (5 degrees of freedom, location m, scale 1.2^2 H^-1) gives
the posterior mean and covariance roughly (the posterior is skewed: its mean is off the mode); the
final proposal is a Student-t with 7 degrees of freedom, location that mean and scale 1.1^2 times
that covariance. Self-normalised importance sampling from it gives E[beta_j] and E[beta_j^2] with
delta-method standard errors se^2 = sum w^2 (f - E f)^2 / (sum w)^2. Prints the moments, their
standard errors and the importance-sampling ESS as C++ initialisers.
Run: python3 scripts/reference/breast_cancer.py [draws]   (needs numpy; default 2,000,000 draws)
"""
import os
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
raw = np.loadtxt(os.path.join(here, "..", "..", "data", "breast_cancer.csv"), delimiter=",", comments="#",
                 skiprows=5)
F, y = raw[:, :30], raw[:, 30]
F = (F - F.mean(0)) / F.std(0, ddof=1)
X = np.hstack([np.ones((F.shape[0], 1)), F])
n, d = X.shape


def log_post(B):  # B: (k, d) -> (k,)
    eta = B @ X.T
    return -(np.logaddexp(0, eta) - y * eta).sum(1) - 0.5 * (B**2).sum(1)


m = np.zeros(d)
for _ in range(100):
    p = 1 / (1 + np.exp(-X @ m))
    g = X.T @ (y - p) - m
    H = (X * (p * (1 - p))[:, None]).T @ X + np.eye(d)
    step = np.linalg.solve(H, g)
    m = m + step
    if np.abs(step).max() < 1e-12:
        break
p = 1 / (1 + np.exp(-X @ m))
H = (X * (p * (1 - p))[:, None]).T @ X + np.eye(d)
rng = np.random.default_rng(20261122)


def importance(loc, L, nu, draws, chunk=100_000):
    Linv = np.linalg.inv(L)
    logw, Bs = [], []
    for start in range(0, draws, chunk):
        k = min(chunk, draws - start)
        z = rng.standard_normal((k, d))
        u = rng.chisquare(nu, k)
        B = loc + (z @ L.T) * np.sqrt(nu / u)[:, None]
        q2 = (((B - loc) @ Linv.T) ** 2).sum(1)
        logw.append(log_post(B) + (nu + d) / 2 * np.log1p(q2 / nu))  # minus the t's log density
        Bs.append(B)
    logw = np.concatenate(logw)
    return np.exp(logw - logw.max()), np.concatenate(Bs)


w, B = importance(m, np.linalg.cholesky(np.linalg.inv(H)) * 1.2, 5.0, 200_000)
loc = (w[:, None] * B).sum(0) / w.sum()
C = ((w[:, None] * (B - loc)).T @ (B - loc)) / w.sum()
draws = int(sys.argv[1]) if len(sys.argv) > 1 else 2_000_000
w, B = importance(loc, np.linalg.cholesky(C) * 1.1, 7.0, draws)
W = w.sum()
mean = (w[:, None] * B).sum(0) / W
second = (w[:, None] * B**2).sum(0) / W
se1 = np.sqrt((w[:, None] ** 2 * (B - mean) ** 2).sum(0)) / W
se2 = np.sqrt((w[:, None] ** 2 * (B**2 - second) ** 2).sum(0)) / W
ess = W**2 / (w**2).sum()
print(f"// importance sampling: {draws} draws, ESS {ess:.0f}, max weight share {w.max() / W:.2e}")
fmt = lambda a: "{" + ", ".join(f"{v:.8g}" for v in a) + "}"
print("mode:      " + fmt(m))
print("mean:      " + fmt(mean))
print("second:    " + fmt(second))
print("mean_se:   " + fmt(se1))
print("second_se: " + fmt(se2))
