"""Peer 'torchebm': the torchebm package's own models and samplers.

Models: torchebm.core.GaussianModel(mean, cov) (takes a full covariance,
inverts it, energy through a batched matmul with the dense precision),
DoubleWellModel(barrier_height, b), RosenbrockModel(a, b).  Their gradients
come from BaseModel.gradient, i.e. autograd.  Samplers:
torchebm.samplers.LangevinDynamics (Euler-Maruyama, noise_scale=1 gives
x - eta grad U + sqrt(2 eta) xi) and HamiltonianMonteCarlo (leapfrog,
identity mass when mass=None, Metropolis accept).  float32, CPU.
Usage: python bench/peers/torchebm_peer.py [--case P1] [--quick]
"""

from __future__ import annotations

import sys

import common  # sets threads/affinity; import before torch

import torch
import torchebm
from torchebm.core import DoubleWellModel, GaussianModel, RosenbrockModel
from torchebm.samplers import HamiltonianMonteCarlo, LangevinDynamics

IMPL = "torchebm"
F32 = torch.float32
torch.set_num_threads(common.NTHREADS)


def make_model(cfg):
    p = cfg["params"]
    if cfg["target"] == "gaussian":
        mu, sig2, _ = common.gaussian_params(cfg["dim"])
        cov = torch.diag(torch.tensor(sig2, dtype=F32))   # dense (d, d) matrix
        return GaussianModel(mean=torch.tensor(mu, dtype=F32), cov=cov, dtype=F32)
    if cfg["target"] == "double_well":
        return DoubleWellModel(barrier_height=p["h"], b=p["b"], dtype=F32)
    if cfg["target"] == "rosenbrock":
        return RosenbrockModel(a=p["a"], b=p["b"], dtype=F32)
    raise ValueError(cfg["target"])


def _x0(cfg, seed):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn((cfg["chains"], cfg["dim"]), generator=gen, dtype=F32), gen


def run_ula(cfg, args):
    model = make_model(cfg)
    sampler = LangevinDynamics(model, step_size=cfg["params"]["eta"], noise_scale=1.0,
                               dtype=F32, device="cpu")
    t = common.measure(
        lambda a: sampler.sample(x=a[0], n_steps=cfg["steps"], generator=a[1]),
        cfg["repeats"], lambda i: _x0(cfg, args.seed + i))
    return common.Outcome(t, t.result.numpy(),
                          note="LangevinDynamics(step_size=eta, noise_scale=1); autograd gradient")


def run_hmc(cfg, args):
    model = make_model(cfg)
    p = cfg["params"]
    sampler = HamiltonianMonteCarlo(model, step_size=p["eps"], n_leapfrog_steps=p["L"],
                                    mass=None, dtype=F32, device="cpu")
    t = common.measure(
        lambda a: sampler.sample(x=a[0], n_steps=cfg["steps"], generator=a[1]),
        cfg["repeats"], lambda i: _x0(cfg, args.seed + i))
    return common.Outcome(t, t.result.numpy(),
                          note="HamiltonianMonteCarlo(step_size=eps, n_leapfrog_steps=L, mass=None); "
                               "autograd gradient")


def run_grad(cfg, args):
    model = make_model(cfg)
    x, _ = _x0(cfg, args.seed)
    inner = common.calibrate_inner(lambda: model.gradient(x))
    t = common.measure(lambda _: model.gradient(x), cfg["repeats"], inner=inner)
    return common.Outcome(t, (x.numpy(), t.result.numpy()),
                          note="GaussianModel.gradient (autograd)")


RUNNERS = {"P1": run_ula, "P2": run_hmc, "P3": run_ula, "P4": run_ula, "P5": run_grad}

if __name__ == "__main__":
    sys.exit(common.main(IMPL, __doc__, RUNNERS,
                         lambda: f"torchebm {torchebm.__version__}, torch {torch.__version__}"))
