"""Generalised linear models on NumPy data: ember's regression energies (docs/models.md) with the
number of coefficients from the data. That number is a template argument of the C++ energy, so
each new width is compiled once by `ember.compile` (its cache serves every later call).

    model = ember.glm.logistic(X, y, prior_scale=2.5)     # X: n x D (add a column of ones for an intercept)
    fit = ember.sample(model)                             # fit.posterior["x"]: (chain, draw, D) coefficients

Priors: beta_j ~ N(0, prior_scale^2) independently. `linear` has a known noise sd.
"""
import numpy as np

from ._api import _checked_array
from ._compile import compile as _compile

__all__ = ["logistic", "poisson", "linear"]

_SOURCE = r"""
struct glm {{
  static auto make(ember::python::data const& d) {{
    return ember::{kind}_regression<{D}>(d.view("X"), d.view("y"), {extra}ember::normal_prior{{d.scalar("prior_scale")}});
  }}
}};
"""


def _glm(kind, X, y, prior_scale, extra, samplers, data):
    X = _checked_array("X", X)
    y = _checked_array("y", y)
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"X must be a matrix (rows x coefficients), got shape {X.shape}")
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"y must be a vector of {X.shape[0]} values (one per row of X), got shape {y.shape}")
    if not prior_scale > 0:
        raise ValueError(f"prior_scale must be positive, got {prior_scale}")
    compiled = _compile(_SOURCE.format(kind=kind, D=X.shape[1], extra=extra), model="glm", samplers=samplers,
                        verbose=True)
    energy = compiled(X=X, y=y[:, None], prior_scale=float(prior_scale), **data)
    energy.name = f"{kind}_regression"
    return energy


def logistic(X, y, prior_scale=2.5, samplers=("chees_hmc",)):
    """y_i ~ Bernoulli(sigmoid(X_i . beta)), y in {0, 1}."""
    return _glm("logistic", X, y, prior_scale, "", samplers, {})


def poisson(X, y, prior_scale=2.5, samplers=("chees_hmc",)):
    """y_i ~ Poisson(exp(X_i . beta)), y in {0, 1, 2, ...}."""
    return _glm("poisson", X, y, prior_scale, "", samplers, {})


def linear(X, y, noise_sd, prior_scale=10.0, samplers=("chees_hmc",)):
    """y_i ~ N(X_i . beta, noise_sd^2) with a known noise sd."""
    return _glm("linear", X, y, prior_scale, 'd.scalar("noise_sd"), ', samplers, {"noise_sd": float(noise_sd)})
