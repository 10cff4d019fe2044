"""Models of the fixed set (compiled into ember._core): each takes its data and returns an
`ember.Energy` in the model's named, constrained terms."""
from . import _core
from ._api import Energy

__all__ = ["eight_schools"]


def eight_schools(y, sigma):
    """Eight schools, non-centred (Rubin 1981): mu ~ N(0, 5), tau ~ half-Cauchy(0, 5),
    theta_trans[j] ~ N(0, 1), y[j] ~ N(mu + tau theta_trans[j], sigma[j]); y and sigma have 8
    values each."""
    return Energy(_core.EightSchools, {"y": y, "sigma": sigma}, name="eight_schools")
