"""Energies with their data, runs, and `sample`: the Python side of ember's binding layer."""
import math
import numbers

import numpy as np

from ._fit import Fit
from ._progress import progress_bar

__all__ = ["Energy", "Run", "sample", "start", "load"]


def _checked_array(name, value):
    """`value` as a C-contiguous float64 NumPy array, or one sentence saying why not."""
    if hasattr(value, "device") and getattr(getattr(value, "device", None), "type", "cpu") != "cpu":
        raise ValueError(f"data '{name}' is on the device {value.device}; ember's CPU samplers read host arrays "
                         f"(move it with .cpu())")
    if hasattr(value, "detach"):  # a torch tensor: its memory through NumPy, without copying if possible
        value = value.detach().numpy()
    a = np.asarray(value)
    if a.dtype == object or not (np.issubdtype(a.dtype, np.number) or a.dtype == np.bool_):
        raise TypeError(f"data '{name}' has dtype {a.dtype}; ember reads numbers (it converts them to float64)")
    if np.iscomplexobj(a):
        raise TypeError(f"data '{name}' is complex; ember reads real numbers")
    if a.ndim > 2:
        raise ValueError(f"data '{name}' has {a.ndim} dimensions; a model reads scalars, vectors and matrices")
    a = np.ascontiguousarray(a, dtype=np.float64)
    bad = ~np.isfinite(a)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"data '{name}' has {int(bad.sum())} non-finite value(s), the first at index {where}: "
                         f"{a[where] if a.ndim else a}")
    return a


class Energy:
    """An energy or model compiled into a module, with its data bound: what `sample` takes.

    `cls` is a class of a compiled module (ember._core's fixed set, or a module `ember.compile`
    built); `data` maps the names the model reads to arrays (NumPy, lists, CPU torch tensors),
    each checked and converted to float64 before any work.
    """

    def __init__(self, cls, data=None, name=None):
        data = dict(data or {})
        for k in data:
            if not isinstance(k, str):
                raise TypeError(f"data names must be strings, got {k!r}")
        self._impl = cls({k: _checked_array(k, v) for k, v in data.items()})
        self.name = name or cls.__name__
        self.dim = cls.dim
        self.dtype = cls.dtype
        self.samplers = tuple(cls.samplers)
        self.is_model = bool(cls.is_model)

    def energy(self, x):
        """U(x) and its gradient at each row of x (n × dim); U = −log density up to a constant."""
        x = np.ascontiguousarray(np.atleast_2d(np.asarray(x, dtype=np.float64)))
        return self._impl.energy(x)

    def sample(self, **kwargs):
        """`ember.sample(self, ...)`."""
        return sample(self, **kwargs)

    def __repr__(self):
        return f"<ember.Energy {self.name}: dim {self.dim}, {self.dtype}, samplers {', '.join(self.samplers)}>"


def _count(name, value, least):
    if type(value) is not int and (isinstance(value, bool) or not isinstance(value, numbers.Integral)):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if value < least:
        raise ValueError(f"{name} must be at least {least}, got {value}")
    return int(value)


class Run:
    """A run in progress: `advance(n)`, `fit()`, `save(path)`; `ember.load` continues one.

    Ctrl-C during `advance` (or `sample`) stops at the end of the current chunk and raises
    KeyboardInterrupt; the run keeps every transition made until then and can be advanced again.
    """

    def __init__(self, energy, handle, draws, thin):
        self.energy = energy
        self._h = handle
        self.draws = draws
        self.thin = thin

    @property
    def transitions(self):
        return self._h.transitions

    @property
    def total(self):
        """Transitions of the whole run: warm-up plus draws × thin."""
        return self._h.warmup + self.draws * self.thin

    @property
    def chains(self):
        return self._h.chains

    @property
    def sampler(self):
        return self._h.sampler

    def advance(self, n=None, progress=None):
        """n more transitions (default: to the end of the run); `progress` as in `sample`."""
        n = self.total - self.transitions if n is None else _count("n", n, 0)
        with progress_bar(progress, n, self.sampler) as report:
            self._h.advance(n, report)
        return self

    def fit(self):
        """The draws so far as a `Fit`."""
        return Fit(self._h.result(), self.energy, self.sampler)

    def save(self, path):
        """A checkpoint: `ember.load(energy, path, ...)` continues the run with the same bits."""
        self._h.save(str(path))

    def __repr__(self):
        return f"<ember.Run {self.energy.name} {self.sampler}: {self.transitions}/{self.total} transitions, {self.chains} chains>"


def _target(sampler, target_accept):
    if target_accept is None:
        return 0.0
    if sampler == "ula":
        raise ValueError("sampler 'ula' adapts no step size; target_accept is for the samplers with a warm-up")
    if not (isinstance(target_accept, numbers.Real) and 0 < target_accept < 1):
        raise ValueError(f"target_accept must be an acceptance rate in (0, 1), got {target_accept!r}")
    return float(target_accept)


def _settings(energy, sampler, chains, warmup, draws, thin, seed, step_size):
    if not isinstance(energy, Energy):
        raise TypeError(f"ember samples an ember.Energy (from ember.targets, ember.models or ember.compile), got "
                        f"{type(energy).__name__}")
    if not isinstance(sampler, str) or sampler not in energy.samplers:
        raise ValueError(f"sampler {sampler!r} is not compiled for {energy.name} (it has: {', '.join(energy.samplers)})")
    chains = _count("chains", chains, 1)
    if sampler == "ula" and warmup not in (None, 0):
        raise ValueError("sampler 'ula' has no warm-up (it adapts nothing): leave warmup out or pass 0")
    warmup = _count("warmup", 1000 if warmup is None else warmup, 0)
    draws = _count("draws", draws, 0)
    thin = _count("thin", thin, 1)
    seed = _count("seed", seed, 0)
    if seed >= 2**64:
        raise ValueError(f"seed must be below 2**64, got {seed}")
    if sampler == "ula":
        if step_size is None or not (isinstance(step_size, numbers.Real) and math.isfinite(step_size) and step_size > 0):
            raise ValueError(f"sampler 'ula' has no warm-up and needs step_size > 0, got {step_size!r}")
        warmup = 0
    elif step_size is not None:
        raise ValueError(f"sampler {sampler!r} adapts its step size in warm-up; step_size is only for 'ula'")
    elif warmup < 1:
        raise ValueError(f"sampler {sampler!r} needs a warm-up of at least 1 transition (it adapts its step size)")
    return chains, warmup, draws, thin, seed, float(step_size or 0.0)


def _init_array(init, chains, dim):
    if init is None:
        return None
    init = np.asarray(init, dtype=np.float64)
    if init.shape != (chains, dim):
        raise ValueError(f"init must have shape (chains, dim) = ({chains}, {dim}), got {init.shape}")
    return _checked_array("init", init)


def start(energy, sampler="chees_hmc", chains=4, warmup=None, draws=1000, thin=1, seed=0, step_size=None, init=None,
          target_accept=None):
    """A run at transition 0 (see `sample` for the arguments); `Run.advance` moves it."""
    chains, warmup, draws, thin, seed, step_size = _settings(energy, sampler, chains, warmup, draws, thin, seed, step_size)
    h = energy._impl.start(sampler, chains, warmup, thin, seed, step_size, _init_array(init, chains, energy.dim),
                           _target(sampler, target_accept))
    return Run(energy, h, draws, thin)


def load(energy, path, sampler="chees_hmc", chains=4, warmup=None, draws=1000, thin=1, step_size=None, target_accept=None):
    """The run saved at `path` by `Run.save`, continued; the settings must be the saved run's
    (a checkpoint of another pipeline or energy is refused, naming the difference). Without
    `target_accept` the run goes on with its saved target; another one named is refused."""
    chains, warmup, draws, thin, _, step_size = _settings(energy, sampler, chains, warmup, draws, thin, 0, step_size)
    h = energy._impl.load(sampler, str(path), chains, warmup, thin, step_size, _target(sampler, target_accept))
    if h.chains != chains or h.warmup != warmup:
        raise ValueError(f"{path} holds a run of {h.chains} chains with a warm-up of {h.warmup} transitions; "
                         f"load was asked for {chains} and {warmup}")
    return Run(energy, h, draws, thin)


def sample(energy, sampler="chees_hmc", chains=4, warmup=None, draws=1000, thin=1, seed=0, step_size=None, init=None,
           progress=None, target_accept=None):
    """Sample `energy` with `chains` chains: `warmup` adaptive transitions (default 1000; none for
    "ula"), then `draws` × `thin` transitions of which every `thin`-th is kept. Returns a `Fit`.

    sampler: one of `energy.samplers` ("chees_hmc", the default; "nuts", "mams", "mala"; "ula"
    with `step_size` and no warm-up; "mclmc", unadjusted and so biased, where ember.compile was
    asked for it). seed: the Philox key (same seed, same draws). init: start
    states (chains × dim, in the sampler's unconstrained coordinates); default uniform(−2, 2).
    progress: None (a bar on a terminal or in a notebook when the run lasts), True, False, or a
    callable progress(done, total, warming_up, acceptance, divergent). target_accept: the acceptance
    the warm-up tunes the step size towards (default: the sampler's own, chees_hmc 0.8 for the
    harmonic mean over chains, nuts 0.8, mams 0.9, mala 0.574, mclmc a per-step acceptance that falls
    with the dimension, 0.97 at 10); raise it (0.9, 0.95) where the summary reports divergent
    transitions (not for mclmc, whose own target is already higher).
    """
    chains, warmup, draws, thin, seed, step_size = _settings(energy, sampler, chains, warmup, draws, thin, seed, step_size)
    h = energy._impl.start(sampler, chains, warmup, thin, seed, step_size, _init_array(init, chains, energy.dim),
                           _target(sampler, target_accept))
    n = warmup + draws * thin
    try:
        with progress_bar(progress, n, sampler) as report:
            raw = h.advance_and_result(n, report)
    except KeyboardInterrupt as e:
        e.run = Run(energy, h, draws, thin)  # the run so far: e.run.advance() continues it, e.run.fit() reads it
        raise
    return Fit(raw, energy, sampler)
