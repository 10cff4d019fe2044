"""Reference targets of the fixed set (ember/targets/, compiled into ember._core) in float64, with
their known moments, for comparing samplers: `reference()` gives E[r_i] and E[r_i^2] of each
reported coordinate r = `reported(draws)` (the sampled coordinates themselves unless the target is
sampled in transformed ones) and their standard errors (0 where exact).

    t = ember.targets.neal_funnel()
    fit = ember.sample(t, sampler="nuts", chains=16)
    r = t.reported(fit.draws.reshape(-1, t.dim))    # what reference() describes
"""
from . import _core
from ._api import Energy

__all__ = ["banana", "standard_normal", "ill_conditioned_gaussian", "rotated_gaussian", "neal_funnel",
           "neal_funnel_noncentred", "rosenbrock_pairs", "two_mode_mixture", "eight_schools"]


def _target(cls, name):
    e = Energy(cls, name=name)
    e.reference = cls.reference
    e.reported = cls.reported
    return e


def banana():
    """Haario's banana in 2-d (b = 0.03): x0 ~ N(0, 10^2), x1 + b (x0^2 - 100) ~ N(0, 1)."""
    return _target(_core.Banana, "banana")


def standard_normal():
    """N(0, I) in 100 dimensions."""
    return _target(_core.StandardNormal, "standard_normal")


def ill_conditioned_gaussian():
    """N(0, diag(sigma^2)) in 100-d, variances log-spaced from 0.1 to 10."""
    return _target(_core.IllConditionedGaussian, "ill_conditioned_gaussian")


def rotated_gaussian():
    """The ill-conditioned Gaussian turned by a fixed dense rotation (every covariance non-zero)."""
    return _target(_core.RotatedGaussian, "rotated_gaussian")


def neal_funnel():
    """Neal's funnel in 10-d, centred: v ~ N(0, 3^2), x_i ~ N(0, e^v)."""
    return _target(_core.NealFunnel, "neal_funnel")


def neal_funnel_noncentred():
    """Neal's funnel in 10-d sampled in non-centred coordinates (a standard normal); reported as v, x."""
    return _target(_core.NealFunnelNoncentred, "neal_funnel_noncentred")


def rosenbrock_pairs():
    """18 independent 2-d Rosenbrock densities (Goodman and Weare 2010), d = 36."""
    return _target(_core.RosenbrockPairs, "rosenbrock_pairs")


def two_mode_mixture():
    """0.3 N(-a u, I) + 0.7 N(a u, I) in 50-d, a = 2, u the unit diagonal: modes 4 sd apart."""
    return _target(_core.TwoModeMixture, "two_mode_mixture")


def eight_schools():
    """Eight schools as an energy (non-centred, log tau): the reference target, not the named model
    of ember.models.eight_schools."""
    return _target(_core.EightSchoolsTarget, "eight_schools")
