"""Reference targets of the fixed set (compiled into ember._core), in float64, with their known
moments: `reference()` gives E[x_i] and E[x_i^2] per coordinate and their standard errors (0 where
exact), which a sampler's estimates are compared with."""
from . import _core
from ._api import Energy

__all__ = ["banana"]


def _target(cls, name):
    e = Energy(cls, name=name)
    e.reference = cls.reference
    return e


def banana():
    """Haario's banana in 2-d (b = 0.03): x0 ~ N(0, 10^2), x1 + b (x0^2 - 100) ~ N(0, 1)."""
    return _target(_core.Banana, "banana")
