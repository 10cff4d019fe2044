"""The posteriordb posteriors of bench/posteriordb, in Python: names, transforms and log densities.

For each posterior this module knows
  - `params`: the constrained parameters, named and ordered as posteriordb's reference draws name them;
  - `unames`: the unconstrained coordinates the ember energy in posteriors.hpp samples, in its order;
  - `to_unc(draws)`: reference draws (dict name -> array) -> unconstrained coordinates (n x D);
  - `to_con(y)`: unconstrained coordinates (n x D) -> dict name -> array (the constrained parameters);
  - `logp(y)`: the Stan model's log density at one unconstrained point y, log-Jacobian included,
    written independently of the C++ header: scipy.stats log densities of the constrained
    parameters as the Stan program states them, plus log|det J| of the map y -> parameters.
    Constants may differ from the C++ energy's (compare differences between points).

Used by make_reference.py (moments of the reference draws in both spaces) and by
check_posteriors.py (the C++ energies against logp, and the gradients against differences).
"""
import json
import os

import numpy as np
from scipy import stats
from scipy.special import expit, logit, log_expit

HERE = os.path.dirname(os.path.abspath(__file__))


def load_data(fname):
    with open(os.path.join(HERE, "data", fname)) as f:
        return json.load(f)


def half_cauchy_lp(sigma, scale):  # Stan: real<lower=0> sigma; sigma ~ cauchy(0, scale)
    return stats.cauchy.logpdf(sigma, 0, scale)


class Posterior:
    name = ""  # posteriordb posterior name
    cpp = ""  # C++ class name in posteriors.hpp
    data_file = ""  # file under data/
    transforms = ""  # for the README table
    params = []
    unames = []

    def __init__(self):
        self.d = load_data(self.data_file)
        self.setup()

    def setup(self):
        pass

    @property
    def D(self):
        return len(self.unames)

    def rows(self):
        return int(self.d["N"])


# ---------------------------------------------------------------------------------------------
# Linear regressions y ~ normal(X beta, sigma), sigma > 0 sampled as log sigma.
class LinReg(Posterior):
    beta_names = None  # default beta[1..K]
    transforms = "sigma = exp(s)"

    def design(self):  # -> (X (n x K), y (n,))
        raise NotImplementedError

    def prior(self, beta, sigma):  # log prior density of the constrained parameters
        return 0.0  # improper flat prior (the Stan model states none)

    def setup(self):
        self.X, self.yv = self.design()
        K = self.X.shape[1]
        bn = self.beta_names or [f"beta[{k + 1}]" for k in range(K)]
        self.params = bn + ["sigma"]
        self.unames = bn + ["log(sigma)"]

    def to_unc(self, c):
        return np.column_stack([c[p] for p in self.params[:-1]] + [np.log(c["sigma"])])

    def to_con(self, y):
        y = np.atleast_2d(y)
        out = {p: y[:, k] for k, p in enumerate(self.params[:-1])}
        out["sigma"] = np.exp(y[:, -1])
        return out

    def logp(self, y):
        beta, s = np.asarray(y[:-1], float), float(y[-1])
        sigma = np.exp(s)
        ll = stats.norm.logpdf(self.yv, self.X @ beta, sigma).sum()
        return ll + self.prior(beta, sigma) + s  # + log J of sigma = e^s


def col(d, k):
    return np.asarray(d[k], dtype=float)


class KidiqInteraction(LinReg):
    name, cpp, data_file = "kidiq-kidscore_interaction", "kidiq_interaction", "kidiq.json"

    def design(self):
        d = self.d
        hs, iq = col(d, "mom_hs"), col(d, "mom_iq")
        return np.column_stack([np.ones_like(hs), hs, iq, hs * iq]), col(d, "kid_score")

    def prior(self, beta, sigma):
        return half_cauchy_lp(sigma, 2.5)


class KidiqMomiq(LinReg):
    name, cpp, data_file = "kidiq-kidscore_momiq", "kidiq_momiq", "kidiq.json"

    def design(self):
        iq = col(self.d, "mom_iq")
        return np.column_stack([np.ones_like(iq), iq]), col(self.d, "kid_score")

    def prior(self, beta, sigma):
        return half_cauchy_lp(sigma, 2.5)


class KidiqInteractionZ(LinReg):
    name, cpp, data_file = "kidiq_with_mom_work-kidscore_interaction_z", "kidiq_interaction_z", "kidiq_with_mom_work.json"

    def design(self):
        hs, iq = col(self.d, "mom_hs"), col(self.d, "mom_iq")
        z_hs = (hs - hs.mean()) / (2 * hs.std(ddof=1))  # Stan's sd() divides by N - 1
        z_iq = (iq - iq.mean()) / (2 * iq.std(ddof=1))
        return np.column_stack([np.ones_like(hs), z_hs, z_iq, z_hs * z_iq]), col(self.d, "kid_score")


class Blr(LinReg):
    transforms = "sigma = exp(s)"

    def design(self):
        return np.asarray(self.d["X"], float), col(self.d, "y")

    def prior(self, beta, sigma):  # normal(0, 10) on beta, half-normal(0, 10) on sigma
        return stats.norm.logpdf(beta, 0, 10).sum() + stats.norm.logpdf(sigma, 0, 10)


class SblrcBlr(Blr):
    name, cpp, data_file = "sblrc-blr", "sblrc_blr", "sblrc.json"


class SblriBlr(Blr):
    name, cpp, data_file = "sblri-blr", "sblri_blr", "sblri.json"


class EarnHeight(LinReg):
    name, cpp, data_file = "earnings-earn_height", "earn_height", "earnings.json"

    def design(self):
        h = col(self.d, "height")
        return np.column_stack([np.ones_like(h), h]), col(self.d, "earn")


class LogearnInteraction(LinReg):
    name, cpp, data_file = "earnings-logearn_interaction", "logearn_interaction", "earnings.json"

    def design(self):
        h, m = col(self.d, "height"), col(self.d, "male")
        return np.column_stack([np.ones_like(h), h, m, h * m]), np.log(col(self.d, "earn"))


class Kilpisjarvi(LinReg):
    name, cpp, data_file = "kilpisjarvi_mod-kilpisjarvi", "kilpisjarvi", "kilpisjarvi_mod.json"
    beta_names = ["alpha", "beta"]

    def design(self):
        x = col(self.d, "x")
        return np.column_stack([np.ones_like(x), x]), col(self.d, "y")

    def prior(self, beta, sigma):
        d = self.d
        return stats.norm.logpdf(beta[0], d["pmualpha"], d["psalpha"]) + stats.norm.logpdf(beta[1], d["pmubeta"], d["psbeta"])


class Mesquite(LinReg):
    name, cpp, data_file = "mesquite-mesquite", "mesquite", "mesquite.json"

    def design(self):
        d = self.d
        cols = [col(d, k) for k in ["diam1", "diam2", "canopy_height", "total_height", "density", "group"]]
        return np.column_stack([np.ones(len(cols[0]))] + cols), col(d, "weight")


class LogmesquiteLogvash(LinReg):
    name, cpp, data_file = "mesquite-logmesquite_logvash", "logmesquite_logvash", "mesquite.json"

    def design(self):
        d = self.d
        d1, d2, ch, th = col(d, "diam1"), col(d, "diam2"), col(d, "canopy_height"), col(d, "total_height")
        X = np.column_stack([np.ones_like(d1), np.log(d1 * d2 * ch), np.log(d1 * d2), np.log(d1 / d2), np.log(th),
                             col(d, "group")])
        return X, np.log(col(d, "weight"))


class Nes2000(LinReg):
    name, cpp, data_file = "nes2000-nes", "nes2000", "nes2000.json"

    def design(self):
        d = self.d
        age = np.asarray(d["age_discrete"])
        X = np.column_stack([np.ones(len(age)), col(d, "real_ideo"), col(d, "race_adj"), (age == 2) * 1.0, (age == 3) * 1.0,
                             (age == 4) * 1.0, col(d, "educ1"), col(d, "gender"), col(d, "income")])
        return X, col(d, "partyid7")


# ---------------------------------------------------------------------------------------------
class EightSchoolsNC(Posterior):
    name, cpp, data_file = "eight_schools-eight_schools_noncentered", "eight_schools_noncentered", "eight_schools.json"
    transforms = "tau = exp(s); theta = mu + tau theta_trans"
    params = [f"theta[{j + 1}]" for j in range(8)] + ["mu", "tau"]
    unames = [f"theta_trans[{j + 1}]" for j in range(8)] + ["mu", "log(tau)"]

    def rows(self):
        return int(self.d["J"])

    def to_unc(self, c):
        mu, tau = c["mu"], c["tau"]
        return np.column_stack([(c[f"theta[{j + 1}]"] - mu) / tau for j in range(8)] + [mu, np.log(tau)])

    def to_con(self, y):
        y = np.atleast_2d(y)
        mu, tau = y[:, 8], np.exp(y[:, 9])
        out = {f"theta[{j + 1}]": mu + tau * y[:, j] for j in range(8)}
        out["mu"], out["tau"] = mu, tau
        return out

    def logp(self, y):
        tt, mu, s = np.asarray(y[:8]), y[8], y[9]
        tau = np.exp(s)
        theta = tt * tau + mu
        return (stats.norm.logpdf(tt, 0, 1).sum() + stats.norm.logpdf(self.d["y"], theta, self.d["sigma"]).sum()
                + stats.norm.logpdf(mu, 0, 5) + stats.cauchy.logpdf(tau, 0, 5) + s)


class ArK(Posterior):
    name, cpp, data_file = "arK-arK", "arK", "arK.json"
    transforms = "sigma = exp(s)"

    def setup(self):
        K = int(self.d["K"])
        self.params = ["alpha"] + [f"beta[{k + 1}]" for k in range(K)] + ["sigma"]
        self.unames = self.params[:-1] + ["log(sigma)"]

    def rows(self):
        return int(self.d["T"])

    def to_unc(self, c):
        return np.column_stack([c[p] for p in self.params[:-1]] + [np.log(c["sigma"])])

    def to_con(self, y):
        y = np.atleast_2d(y)
        out = {p: y[:, k] for k, p in enumerate(self.params[:-1])}
        out["sigma"] = np.exp(y[:, -1])
        return out

    def logp(self, y):
        K, yy = int(self.d["K"]), np.asarray(self.d["y"], float)
        alpha, beta, s = y[0], np.asarray(y[1:1 + K]), y[-1]
        sigma = np.exp(s)
        T = len(yy)
        mu = alpha + np.array([sum(beta[k] * yy[t - k - 1] for k in range(K)) for t in range(K, T)])
        return (stats.norm.logpdf(alpha, 0, 10) + stats.norm.logpdf(beta, 0, 10).sum() + stats.cauchy.logpdf(sigma, 0, 2.5)
                + stats.norm.logpdf(yy[K:], mu, sigma).sum() + s)


class Arma11(Posterior):
    name, cpp, data_file = "arma-arma11", "arma11", "arma.json"
    transforms = "sigma = exp(s)"
    params = ["mu", "phi", "theta", "sigma"]
    unames = ["mu", "phi", "theta", "log(sigma)"]

    def rows(self):
        return int(self.d["T"])

    def to_unc(self, c):
        return np.column_stack([c["mu"], c["phi"], c["theta"], np.log(c["sigma"])])

    def to_con(self, y):
        y = np.atleast_2d(y)
        return {"mu": y[:, 0], "phi": y[:, 1], "theta": y[:, 2], "sigma": np.exp(y[:, 3])}

    def logp(self, y):
        mu, phi, theta, s = y
        sigma = np.exp(s)
        yy = np.asarray(self.d["y"], float)
        T = len(yy)
        err = np.empty(T)
        nu = mu + phi * mu
        err[0] = yy[0] - nu
        for t in range(1, T):
            nu = mu + phi * yy[t - 1] + theta * err[t - 1]
            err[t] = yy[t] - nu
        return (stats.norm.logpdf(mu, 0, 10) + stats.norm.logpdf(phi, 0, 2) + stats.norm.logpdf(theta, 0, 2)
                + stats.cauchy.logpdf(sigma, 0, 2.5) + stats.norm.logpdf(err, 0, sigma).sum() + s)


class Garch11(Posterior):
    name, cpp, data_file = "garch-garch11", "garch11", "garch.json"
    transforms = "alpha0 = exp(a); alpha1 = logistic(b); beta1 = (1 - alpha1) logistic(c)"
    params = ["mu", "alpha0", "alpha1", "beta1"]
    unames = ["mu", "log(alpha0)", "logit(alpha1)", "logit(beta1/(1-alpha1))"]

    def rows(self):
        return int(self.d["T"])

    def to_unc(self, c):
        return np.column_stack([c["mu"], np.log(c["alpha0"]), logit(c["alpha1"]), logit(c["beta1"] / (1 - c["alpha1"]))])

    def to_con(self, y):
        y = np.atleast_2d(y)
        a1 = expit(y[:, 2])
        return {"mu": y[:, 0], "alpha0": np.exp(y[:, 1]), "alpha1": a1, "beta1": (1 - a1) * expit(y[:, 3])}

    def logp(self, y):
        mu, a, b, c = y
        alpha0, alpha1 = np.exp(a), expit(b)
        u = expit(c)
        beta1 = (1 - alpha1) * u
        yy = np.asarray(self.d["y"], float)
        sig = np.empty(len(yy))
        sig[0] = self.d["sigma1"]
        for t in range(1, len(yy)):
            sig[t] = np.sqrt(alpha0 + alpha1 * (yy[t - 1] - mu) ** 2 + beta1 * sig[t - 1] ** 2)
        # flat prior on the constrained region; log J: alpha0 = e^a, alpha1 = logistic(b),
        # beta1 = (1 - alpha1) u with du/dc = u (1 - u) (triangular Jacobian)
        logj = a + np.log(alpha1 * (1 - alpha1)) + np.log((1 - alpha1) * u * (1 - u))
        return stats.norm.logpdf(yy, mu, sig).sum() + logj


class LowDimGaussMix(Posterior):
    name, cpp, data_file = "low_dim_gauss_mix-low_dim_gauss_mix", "low_dim_gauss_mix", "low_dim_gauss_mix.json"
    transforms = "ordered mu (mu[2] = mu[1] + exp(m)); sigma = exp(s); theta = logistic(t)"
    params = ["mu[1]", "mu[2]", "sigma[1]", "sigma[2]", "theta"]
    unames = ["mu[1]", "log(mu[2]-mu[1])", "log(sigma[1])", "log(sigma[2])", "logit(theta)"]

    def to_unc(self, c):
        return np.column_stack([c["mu[1]"], np.log(c["mu[2]"] - c["mu[1]"]), np.log(c["sigma[1]"]), np.log(c["sigma[2]"]),
                                logit(c["theta"])])

    def to_con(self, y):
        y = np.atleast_2d(y)
        return {"mu[1]": y[:, 0], "mu[2]": y[:, 0] + np.exp(y[:, 1]), "sigma[1]": np.exp(y[:, 2]), "sigma[2]": np.exp(y[:, 3]),
                "theta": expit(y[:, 4])}

    def logp(self, y):
        c = {k: v[0] for k, v in self.to_con(np.asarray(y)).items()}
        mu = np.array([c["mu[1]"], c["mu[2]"]])
        sg = np.array([c["sigma[1]"], c["sigma[2]"]])
        th = c["theta"]
        yy = np.asarray(self.d["y"], float)
        lp = stats.norm.logpdf(sg, 0, 2).sum() + stats.norm.logpdf(mu, 0, 2).sum() + stats.beta.logpdf(th, 5, 5)
        lp += np.logaddexp(np.log(th) + stats.norm.logpdf(yy, mu[0], sg[0]),
                           np.log1p(-th) + stats.norm.logpdf(yy, mu[1], sg[1])).sum()
        logj = y[1] + y[2] + y[3] + np.log(th * (1 - th))
        return lp + logj


def exp_quad_cov(x, alpha, rho):
    x = np.asarray(x, float)
    return alpha ** 2 * np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / rho ** 2)


class GpRegr(Posterior):
    name, cpp, data_file = "gp_pois_regr-gp_regr", "gp_regr", "gp_pois_regr.json"
    transforms = "rho, alpha, sigma = exp(.)"
    params = ["rho", "alpha", "sigma"]
    unames = ["log(rho)", "log(alpha)", "log(sigma)"]

    def to_unc(self, c):
        return np.column_stack([np.log(c["rho"]), np.log(c["alpha"]), np.log(c["sigma"])])

    def to_con(self, y):
        y = np.atleast_2d(y)
        return {"rho": np.exp(y[:, 0]), "alpha": np.exp(y[:, 1]), "sigma": np.exp(y[:, 2])}

    def logp(self, y):
        rho, alpha, sigma = np.exp(y)
        N = int(self.d["N"])
        cov = exp_quad_cov(self.d["x"], alpha, rho) + sigma * np.eye(N)  # sigma (not sigma^2), as the Stan model has it
        lp = stats.gamma.logpdf(rho, 25, scale=1 / 4) + stats.norm.logpdf(alpha, 0, 2) + stats.norm.logpdf(sigma, 0, 1)
        lp += stats.multivariate_normal.logpdf(self.d["y"], np.zeros(N), cov)
        return lp + np.sum(y)


class GpPoisRegr(Posterior):
    name, cpp, data_file = "gp_pois_regr-gp_pois_regr", "gp_pois_regr", "gp_pois_regr.json"
    transforms = "rho, alpha = exp(.); f = L(rho, alpha) f_tilde"

    def setup(self):
        N = int(self.d["N"])
        self.params = ["rho", "alpha"] + [f"f[{i + 1}]" for i in range(N)]
        self.unames = ["log(rho)", "log(alpha)"] + [f"f_tilde[{i + 1}]" for i in range(N)]

    def chol(self, rho, alpha):
        N = int(self.d["N"])
        return np.linalg.cholesky(exp_quad_cov(self.d["x"], alpha, rho) + 1e-10 * np.eye(N))

    def to_unc(self, c):
        N = int(self.d["N"])
        out = np.empty((len(c["rho"]), 2 + N))
        out[:, 0], out[:, 1] = np.log(c["rho"]), np.log(c["alpha"])
        F = np.column_stack([c[f"f[{i + 1}]"] for i in range(N)])
        for n in range(len(c["rho"])):
            out[n, 2:] = np.linalg.solve(self.chol(c["rho"][n], c["alpha"][n]), F[n])
        return out

    def to_con(self, y):
        y = np.atleast_2d(y)
        N = int(self.d["N"])
        out = {"rho": np.exp(y[:, 0]), "alpha": np.exp(y[:, 1])}
        F = np.array([self.chol(np.exp(r[0]), np.exp(r[1])) @ r[2:] for r in y])
        for i in range(N):
            out[f"f[{i + 1}]"] = F[:, i]
        return out

    def logp(self, y):
        rho, alpha = np.exp(y[0]), np.exp(y[1])
        ft = np.asarray(y[2:])
        f = self.chol(rho, alpha) @ ft
        lp = stats.gamma.logpdf(rho, 25, scale=1 / 4) + stats.norm.logpdf(alpha, 0, 2) + stats.norm.logpdf(ft, 0, 1).sum()
        lp += stats.poisson.logpmf(self.d["k"], np.exp(f)).sum()
        return lp + y[0] + y[1]


class HmmExample(Posterior):
    name, cpp, data_file = "hmm_example-hmm_example", "hmm_example", "hmm_example.json"
    transforms = "simplex[2] theta1, theta2 = (logistic(a), 1 - logistic(a)); positive_ordered mu (mu[1] = exp(m1), mu[2] = mu[1] + exp(m2))"
    params = ["theta1[1]", "theta1[2]", "theta2[1]", "theta2[2]", "mu[1]", "mu[2]"]
    unames = ["logit(theta1[1])", "logit(theta2[1])", "log(mu[1])", "log(mu[2]-mu[1])"]

    def to_unc(self, c):
        return np.column_stack([logit(c["theta1[1]"]), logit(c["theta2[1]"]), np.log(c["mu[1]"]), np.log(c["mu[2]"] - c["mu[1]"])])

    def to_con(self, y):
        y = np.atleast_2d(y)
        t1, t2 = expit(y[:, 0]), expit(y[:, 1])
        m1 = np.exp(y[:, 2])
        return {"theta1[1]": t1, "theta1[2]": 1 - t1, "theta2[1]": t2, "theta2[2]": 1 - t2, "mu[1]": m1,
                "mu[2]": m1 + np.exp(y[:, 3])}

    def logp(self, y):
        c = {k: v[0] for k, v in self.to_con(np.asarray(y)).items()}
        theta = np.array([[c["theta1[1]"], c["theta1[2]"]], [c["theta2[1]"], c["theta2[2]"]]])
        mu = np.array([c["mu[1]"], c["mu[2]"]])
        yy = np.asarray(self.d["y"], float)
        lp = stats.norm.logpdf(mu[0], 3, 1) + stats.norm.logpdf(mu[1], 10, 1)
        gamma = stats.norm.logpdf(yy[0], mu, 1)
        lt = np.log(theta)
        for t in range(1, len(yy)):
            gamma = np.array([np.logaddexp.reduce(gamma + lt[:, k]) for k in range(2)]) + stats.norm.logpdf(yy[t], mu, 1)
        lp += np.logaddexp.reduce(gamma)
        # log J: each simplex[2] is (x, 1 - x) with x = logistic(a); mu[1] = e^m1, mu[2] = mu[1] + e^m2
        logj = log_expit(y[0]) + log_expit(-y[0]) + log_expit(y[1]) + log_expit(-y[1]) + y[2] + y[3]
        return lp + logj


ALL = [KidiqInteraction, KidiqMomiq, KidiqInteractionZ, SblrcBlr, SblriBlr, EarnHeight, LogearnInteraction, Kilpisjarvi,
       Mesquite, LogmesquiteLogvash, Nes2000, EightSchoolsNC, ArK, Arma11, Garch11, LowDimGaussMix, GpRegr, GpPoisRegr,
       HmmExample]


def by_name():
    return {P.name: P for P in ALL}
