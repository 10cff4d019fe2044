"""Neural energies from PyTorch training loops: ember's fused Langevin sampler on the current
weights of a `torch.nn.Sequential` MLP, negatives returned as tensors (docs/python.md).

    sampler = ember.nn.Langevin(net, step_size=0.1, noise_scale=1.0, seed=0)
    x_new = sampler(x, steps=10)                      # torch tensor in, torch tensor out
    chains = ember.nn.PersistentChains(net, buffer=8192, batch=256, steps=10, step_size=0.1,
                                       low=-4, high=4)
    negatives = chains.sample()                       # TorchEBM's replay buffer, ember's sampler

The network's shape must be one compiled into ember._core (`SHAPES`); its weights are read at
every call (one copy of θ into ember's layout, ~17,000 floats for 2-128-128-1), so optimiser steps
between calls are seen. Arrays may be NumPy arrays or CPU torch tensors (float32, C-contiguous);
a torch tensor in gives a torch tensor out, sharing the memory ember wrote (no copy).
"""
import numpy as np

from . import _core

__all__ = ["Langevin", "PersistentChains", "SHAPES"]

# (input width, hidden widths, activation) -> the compiled class.
SHAPES = {(2, (128, 128), "silu"): _core.MLP_2_128_128_silu}
_ACTIVATIONS = {"SiLU": "silu"}


def _torch():
    try:
        import torch

        return torch
    except ImportError:
        return None


def _shape_of(net):
    """(input width, hidden widths, activation) of a torch.nn.Sequential of Linear and one activation."""
    torch = _torch()
    if torch is None or not isinstance(net, torch.nn.Sequential):
        raise TypeError("ember.nn takes a torch.nn.Sequential of Linear layers and activations, or a compiled network")
    linears = [m for m in net if isinstance(m, torch.nn.Linear)]
    acts = {type(m).__name__ for m in net if not isinstance(m, torch.nn.Linear)}
    if (len(linears) < 2 or len(acts) != 1 or len(net) != 2 * len(linears) - 1
            or not all(isinstance(m, torch.nn.Linear) == (i % 2 == 0) for i, m in enumerate(net))):
        raise ValueError("ember.nn needs Linear, activation, Linear, ..., Linear (one kind of activation), got " + str(net))
    act = acts.pop()
    if act not in _ACTIVATIONS:
        raise ValueError(f"activation {act} is not compiled into ember.nn (it has: {', '.join(_ACTIVATIONS)})")
    if linears[-1].out_features != 1 or any(m.bias is None for m in linears):
        raise ValueError("ember.nn needs a scalar output (the last Linear has out_features=1) and biases on every layer")
    widths = [linears[0].in_features] + [m.out_features for m in linears]
    for a, b in zip(linears, linears[1:]):
        if a.out_features != b.in_features:
            raise ValueError(f"layer widths do not chain: {a} then {b}")
    return widths[0], tuple(widths[1:-1]), _ACTIVATIONS[act]


def _points(x, width, what):
    """x as (array for ember, torch or not): float32, C-contiguous, on the CPU, (n, width)."""
    torch = _torch()
    is_torch = torch is not None and isinstance(x, torch.Tensor)
    if is_torch:
        if x.device.type != "cpu":
            raise ValueError(f"{what} is on {x.device}; ember.nn samples on the CPU (move it with .cpu())")
        if x.dtype != torch.float32:
            raise TypeError(f"{what} has dtype {x.dtype}; ember.nn takes float32")
        if not x.is_contiguous():
            raise ValueError(f"{what} is not contiguous; call .contiguous() first")
        a = x.detach().numpy()
    else:
        a = np.asarray(x)
        if a.dtype != np.float32:
            raise TypeError(f"{what} has dtype {a.dtype}; ember.nn takes float32")
        if not a.flags.c_contiguous:
            raise ValueError(f"{what} is not C-contiguous; use np.ascontiguousarray first")
    if a.ndim != 2 or a.shape[1] != width:
        raise ValueError(f"{what} must have shape (n, {width}), got {tuple(a.shape)}")
    if not np.isfinite(a).all():
        raise ValueError(f"{what} has non-finite values")
    return a, is_torch


class Langevin:
    """Langevin steps x ← x − η∇E(x) + s√(2η)ξ on the energy E of `net` (its current weights at
    each call), by ember's fused ULA over SIMD batches of chains and the machine's threads.

    net: a torch.nn.Sequential MLP of a compiled shape, or `(shape_key, theta)` with theta a flat
    float32 array in PyTorch's parameter order. Each call draws fresh noise: its stream's key is a
    hash of (seed, number of calls so far), so a run of calls is reproducible from the seed."""

    def __init__(self, net, step_size, noise_scale=1.0, seed=0):
        if not (step_size > 0 and noise_scale > 0):
            raise ValueError("step_size and noise_scale must be positive")
        self.net = net
        if isinstance(net, tuple):
            key, theta = net
            self._theta = lambda: np.ascontiguousarray(theta, dtype=np.float32)
        else:
            key = _shape_of(net)
            self._theta = self._torch_theta
        if key not in SHAPES:
            raise ValueError(f"a network {key} is not compiled into ember.nn (it has: {', '.join(map(str, SHAPES))})")
        self._impl = SHAPES[key]()
        self.width = key[0]
        self.step_size, self.noise_scale = float(step_size), float(noise_scale)
        self.seed, self.calls = int(seed), 0

    def _torch_theta(self):
        torch = _torch()
        with torch.no_grad():
            return torch.cat([p.detach().reshape(-1) for p in self.net.parameters()]).to(torch.float32).numpy()

    def energy(self, x):
        """E(x) and ∇E(x) at each row of x, as ember computes them (NumPy arrays)."""
        a, _ = _points(x, self.width, "x")
        self._impl.set_parameters(self._theta())
        return self._impl.energy(a)

    def __call__(self, x, steps):
        """`steps` Langevin steps from each row of x; returns the new rows (a torch tensor when x is one)."""
        a, is_torch = _points(x, self.width, "x")
        self._impl.set_parameters(self._theta())
        seed = int(np.random.SeedSequence([self.seed, self.calls]).generate_state(1, np.uint64)[0])
        self.calls += 1
        out = self._impl.langevin(a, int(steps), self.step_size, self.noise_scale, seed)
        if is_torch:
            return _torch().from_numpy(out)
        return out


class PersistentChains:
    """TorchEBM's persistent contrastive divergence sampler with ember's Langevin inside: a replay
    buffer of `buffer` states (uniform in [low, high]^d at the start); each `sample()` takes `batch`
    of them, re-draws each uniformly with probability `reinit` (TorchEBM's 5 %), runs `steps`
    Langevin steps and writes them back. Returns the batch's new states (torch when torch is
    installed, else NumPy)."""

    def __init__(self, net, buffer=8192, batch=256, steps=10, step_size=0.1, noise_scale=1.0, reinit=0.05, low=-1.0,
                 high=1.0, seed=0):
        self.langevin = Langevin(net, step_size, noise_scale, seed)
        if not (1 <= batch <= buffer):
            raise ValueError(f"batch must be between 1 and buffer ({buffer}), got {batch}")
        if not (0 <= reinit <= 1) or not low < high:
            raise ValueError("reinit must be in [0, 1] and low < high")
        self.batch, self.steps, self.reinit, self.low, self.high = int(batch), int(steps), float(reinit), low, high
        self.rng = np.random.default_rng(seed)
        d = self.langevin.width
        self.buffer = self.rng.uniform(low, high, size=(int(buffer), d)).astype(np.float32)

    def sample(self):
        idx = self.rng.choice(len(self.buffer), size=self.batch, replace=False)
        x = self.buffer[idx]
        fresh = self.rng.random(self.batch) < self.reinit
        x[fresh] = self.rng.uniform(self.low, self.high, size=(int(fresh.sum()), x.shape[1])).astype(np.float32)
        x = self.langevin(np.ascontiguousarray(x), self.steps)
        self.buffer[idx] = x
        torch = _torch()
        return torch.from_numpy(x) if torch is not None else x
