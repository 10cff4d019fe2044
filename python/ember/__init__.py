"""ember from Python: the fused samplers of the ember C++ library on NumPy data and PyTorch
weights, results in ArviZ's layout.

    import ember
    model = ember.models.eight_schools(y=[28, 8, -3, 7, -1, 1, 18, 12],
                                       sigma=[15, 10, 16, 11, 9, 11, 10, 18])
    fit = ember.sample(model, chains=4, warmup=1000, draws=1000, seed=1)
    fit.posterior["tau"].shape          # (4, 1000)
    fit.summary()                       # mean, sd, mcse_mean, ess_bulk, ess_tail, r_hat
    idata = fit.to_inference_data()     # arviz.InferenceData

Your own model in C++ with ember's vocabulary: `ember.compile(source)` (compiled once, cached).
docs/python.md is the reference.
"""
from . import _core
from ._api import Energy, Run, load, sample, start
from ._compile import CompileError, Compiled, compile
from ._fit import Fit
from . import glm, models, nn, targets

__version__ = "0.1.0"
__all__ = ["Energy", "Run", "Fit", "Compiled", "CompileError", "sample", "start", "load", "compile", "glm", "models", "nn",
           "targets"]
