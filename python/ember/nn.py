"""Neural energies from PyTorch training loops: ember's fused Langevin sampler on the current
weights of a `torch.nn.Sequential` MLP, negatives returned as tensors (docs/python.md).

    sampler = ember.nn.Langevin(net, step_size=0.1, noise_scale=1.0, seed=0)
    x_new = sampler(x, steps=10)                      # torch tensor in, torch tensor out
    chains = ember.nn.PersistentChains(net, buffer=8192, batch=256, steps=10, step_size=0.1,
                                       low=-4, high=4)
    negatives = chains.sample()                       # TorchEBM's replay buffer, ember's sampler

Any hidden widths and any of the activations in `ACTIVATIONS` work without a compiler, for the
input widths compiled into ember._core (`INPUT_WIDTHS`): the network's widths are read from the
model at run time (C++ `mlp<float, In, nn::any, dynamic>`). Another input width (up to 4096) is
compiled once, the first time a network of it is made (seconds, through ember.compile's cache), and
imported from the cache afterwards. Its weights are read at every call
(one copy of θ into ember's layout, ~17,000 floats for 2-128-128-1), so optimiser steps between
calls are seen. Arrays may be NumPy arrays or CPU torch tensors (float32, C-contiguous); a torch
tensor in gives a torch tensor out, sharing the memory ember wrote (no copy).
"""
import numpy as np

from . import _core

__all__ = ["Langevin", "PersistentChains", "INPUT_WIDTHS", "ACTIVATIONS"]

# Input widths compiled into ember._core (python/src/nn.cpp); hidden widths are free. Others are
# compiled on first use (ember._compile.network_class).
INPUT_WIDTHS = tuple(sorted(int(n[len("MLP_in"):]) for n in dir(_core) if n.startswith("MLP_in") and n[len("MLP_in"):].isdigit()))
# ember's activation names (C++ nn::any::named), and torch.nn's modules that compute them.
ACTIVATIONS = ("silu", "relu", "leaky_relu", "elu", "gelu", "gelu_tanh", "softplus", "tanh", "sigmoid")


def _torch():
    try:
        import torch

        return torch
    except ImportError:
        return None


def _activation_of(module):
    """(ember's name, parameter or None) of a torch.nn activation module, or a ValueError."""
    kind = type(module).__name__
    simple = {"SiLU": "silu", "ReLU": "relu", "Tanh": "tanh", "Sigmoid": "sigmoid"}
    if kind in simple:
        return simple[kind], None
    if kind == "LeakyReLU":
        return "leaky_relu", float(module.negative_slope)
    if kind == "ELU":
        return "elu", float(module.alpha)
    if kind == "GELU":
        return ("gelu_tanh" if module.approximate == "tanh" else "gelu"), None
    if kind == "Softplus":
        if module.beta != 1 or module.threshold != 20:
            raise ValueError("ember.nn computes Softplus with its defaults only (beta=1, threshold=20), got "
                             f"beta={module.beta}, threshold={module.threshold}")
        return "softplus", None
    raise ValueError(f"activation {kind} is not one of ember.nn's (SiLU, ReLU, LeakyReLU, ELU, GELU, Softplus, Tanh, Sigmoid)")


def _shape_of(net):
    """(input width, hidden widths, activation, parameter) of a torch.nn.Sequential of Linear layers
    and one kind of activation between them."""
    torch = _torch()
    if torch is None or not isinstance(net, torch.nn.Sequential):
        raise TypeError("ember.nn takes a torch.nn.Sequential of Linear layers and activations, or (shape, theta)")
    linears = [m for m in net if isinstance(m, torch.nn.Linear)]
    acts = [m for m in net if not isinstance(m, torch.nn.Linear)]
    if (len(linears) < 2 or len(net) != 2 * len(linears) - 1
            or not all(isinstance(m, torch.nn.Linear) == (i % 2 == 0) for i, m in enumerate(net))):
        raise ValueError("ember.nn needs Linear, activation, Linear, ..., Linear, got " + str(net))
    kinds = {_activation_of(m) for m in acts}
    if len(kinds) != 1:
        raise ValueError(f"ember.nn needs one kind of activation between the layers, got {sorted(map(str, kinds))}")
    act, parameter = kinds.pop()
    if linears[-1].out_features != 1 or any(m.bias is None for m in linears):
        raise ValueError("ember.nn needs a scalar output (the last Linear has out_features=1) and biases on every layer")
    widths = [linears[0].in_features] + [m.out_features for m in linears]
    for a, b in zip(linears, linears[1:]):
        if a.out_features != b.in_features:
            raise ValueError(f"layer widths do not chain: {a} then {b}")
    return widths[0], tuple(widths[1:-1]), act, parameter


def _network(shape):
    """ember._core's network for shape = (input width, hidden widths, activation[, parameter])."""
    if not (isinstance(shape, tuple) and len(shape) in (3, 4)):
        raise ValueError("a network's shape is (input width, hidden widths, activation[, parameter]), got " + repr(shape))
    width, hidden, act = int(shape[0]), tuple(int(h) for h in shape[1]), str(shape[2])
    parameter = shape[3] if len(shape) == 4 else None
    if act not in ACTIVATIONS:
        raise ValueError(f"activation {act!r} is not one of ember.nn's ({', '.join(ACTIVATIONS)})")
    if width in INPUT_WIDTHS:
        cls = getattr(_core, f"MLP_in{width}")
    else:
        from ._compile import network_class

        try:
            cls = network_class(width)
        except RuntimeError as e:  # no compiler, or no headers: say what the fixed set has
            raise RuntimeError(f"input width {width} is not compiled into ember.nn (it has: "
                               f"{', '.join(map(str, INPUT_WIDTHS))}), and compiling it failed: {e}") from e
    return cls(list(hidden), act, parameter)


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

    net: a torch.nn.Sequential MLP (Linear, activation, ..., Linear to one output) (an input width
    outside INPUT_WIDTHS is compiled the first time), or `(shape, theta)` with shape = (input width, hidden widths, activation
    name[, parameter]) and theta a flat float32 array in PyTorch's parameter order. Each call draws fresh noise: its stream's key is a
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
        self._impl = _network(key)
        self.width = self._impl.input_width
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
