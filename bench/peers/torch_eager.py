"""Peer 'torch-eager': the benchmark updates written in plain PyTorch.

Batched over chains, float32, hand-written gradients (no autograd), eager
mode.  Usage: python bench/peers/torch_eager.py [--case P1] [--quick]
With EMBER_TORCH_DEVICE=cuda it runs on the GPU (bench/gpu_session.sh): every
timed run ends with torch.cuda.synchronize(), and P6 runs too.
--sweep: the GPU cases P1 and P7 (P7 at 10^3 ... 10^7 chains x 1,000 steps)
of bench/cuda_suite.cu instead, one JSON line per chain count with "device"
(bench/peers/gpu_sweep.py; bench/peers/gpu_peers.sh runs it on a GPU).
"""

from __future__ import annotations

import math
import os
import sys

import common  # sets threads/affinity; import before torch
import gpu_sweep

import numpy as np
import torch

IMPL = "torch-eager"
F32 = torch.float32
torch.set_num_threads(common.NTHREADS)
DEV = torch.device(os.environ.get("EMBER_TORCH_DEVICE", "cpu"))
if DEV.type == "cuda":
    common.CASES["P6"]["only"] += (IMPL,)


def _done(result):
    """Returns result once the device has finished computing it."""
    if DEV.type == "cuda":
        torch.cuda.synchronize()
    return result


def _gauss(d):
    mu, _, prec = common.gaussian_params(d)
    return torch.tensor(mu, dtype=F32, device=DEV), torch.tensor(prec, dtype=F32, device=DEV)


def make_grad(cfg):
    """Returns grad(x) -> dU/dx for the case's target (float32 tensors)."""
    p = cfg["params"]
    if cfg["target"] == "gaussian":
        mu, prec = _gauss(cfg["dim"])
        bias = mu @ prec                           # P symmetric: g = x P - mu P

        def grad(x):
            return torch.addmm(bias, x, prec, beta=-1.0)
        return grad
    if cfg["target"] == "double_well":
        c, b2 = 4.0 * p["h"], p["b"] ** 2

        def grad(x):
            return c * x * (x * x - b2)
        return grad
    if cfg["target"] == "rosenbrock":
        a, b = p["a"], p["b"]

        def grad(x):
            xi, xn = x[:, :-1], x[:, 1:]
            r = xn - xi * xi
            g = torch.zeros_like(x)
            g[:, :-1] = -2.0 * (a - xi) - (4.0 * b) * xi * r
            g[:, 1:] += (2.0 * b) * r
            return g
        return grad
    raise ValueError(cfg["target"])


def ula(x, grad, eta, steps, gen):
    s = math.sqrt(2.0 * eta)
    noise = torch.empty_like(x)
    for _ in range(steps):
        g = grad(x)
        x = x.add(g, alpha=-eta)
        x.add_(noise.normal_(generator=gen), alpha=s)
    return x


def hmc(x, mu, prec, eps, L, transitions, gen):
    """Metropolis-adjusted HMC, identity mass; gradient and energy cached
    across transitions (L gradient evaluations per transition)."""
    bias = mu @ prec

    def grad(z):
        return torch.addmm(bias, z, prec, beta=-1.0)

    def energy(z, gz):                 # U = 0.5 (z-mu)^T P (z-mu) = 0.5 (z-mu).g
        return 0.5 * ((z - mu) * gz).sum(1)

    g = grad(x)
    u = energy(x, g)
    accepted = torch.zeros((), dtype=torch.float64, device=DEV)
    n = x.shape[0]
    for _ in range(transitions):
        p0 = torch.randn(x.shape, generator=gen, dtype=F32, device=DEV)
        h0 = u + 0.5 * (p0 * p0).sum(1)
        p = p0 - (0.5 * eps) * g
        z = x
        for i in range(L):
            z = z + eps * p
            gz = grad(z)
            if i < L - 1:
                p = p - eps * gz
        p = p - (0.5 * eps) * gz
        uz = energy(z, gz)
        h1 = uz + 0.5 * (p * p).sum(1)
        acc = torch.rand(n, generator=gen, dtype=F32, device=DEV) < torch.exp(h0 - h1)
        a = acc.unsqueeze(1)
        x = torch.where(a, z, x)
        g = torch.where(a, gz, g)
        u = torch.where(acc, uz, u)
        accepted += acc.sum()
    return x, float(accepted) / (n * transitions)


def _x0(cfg, seed):
    gen = torch.Generator(device=DEV).manual_seed(seed)
    return torch.randn((cfg["chains"], cfg["dim"]), generator=gen, dtype=F32, device=DEV), gen


def run_ula(cfg, args):
    grad = make_grad(cfg)
    eta, steps = cfg["params"]["eta"], cfg["steps"]

    def prepare(i):
        return _done(_x0(cfg, args.seed + i))

    def run(arg):
        x0, gen = arg
        return _done(ula(x0, grad, eta, steps, gen))

    with torch.no_grad():
        if "run_budget" in cfg:       # GPU sweep (gpu_sweep.py)
            t, _ = gpu_sweep.measure(run, prepare, cfg)
        else:
            t = common.measure(run, cfg["repeats"], prepare)
    return common.Outcome(t, t.result.cpu().numpy())


def run_hmc(cfg, args):
    mu, prec = _gauss(cfg["dim"])
    p = cfg["params"]
    with torch.no_grad():
        t = common.measure(lambda a: _done(hmc(a[0], mu, prec, p["eps"], p["L"], cfg["steps"], a[1])),
                           cfg["repeats"], lambda i: _x0(cfg, args.seed + i))
    x, rate = t.result
    return common.Outcome(t, x.cpu().numpy(), extra={"accept_rate": round(rate, 4)})


def run_grad(cfg, args):
    grad = make_grad(cfg)
    x, _ = _x0(cfg, args.seed)
    with torch.no_grad():
        inner = common.calibrate_inner(lambda: _done(grad(x)))
        t = common.measure(lambda _: _done(grad(x)), cfg["repeats"], inner=inner)
    return common.Outcome(t, (x.cpu().numpy(), t.result.cpu().numpy()))


RUNNERS = {"P1": run_ula, "P2": run_hmc, "P3": run_ula, "P4": run_ula, "P5": run_grad, "P6": run_ula}


def device_name():
    return torch.cuda.get_device_name(DEV) if DEV.type == "cuda" else "cpu"


def _version():
    return f"torch {torch.__version__} on {device_name()}"


def cleanup():
    if DEV.type == "cuda":
        torch.cuda.empty_cache()


if __name__ == "__main__":
    if "--sweep" in sys.argv[1:]:
        sys.exit(gpu_sweep.main(IMPL, __doc__, run_ula, _version, device_name, cleanup,
                                warmup_optional=True))
    sys.exit(common.main(IMPL, __doc__, RUNNERS, _version))
