"""Peer 'torchebm': the torchebm package's own models and samplers.

Models: torchebm.core.GaussianModel(mean, cov) (takes a full covariance,
inverts it, energy through a batched matmul with the dense precision),
DoubleWellModel(barrier_height, b), RosenbrockModel(a, b).  Their gradients
come from BaseModel.gradient, i.e. autograd.  Samplers:
torchebm.samplers.LangevinDynamics (Euler-Maruyama, noise_scale=1 gives
x - eta grad U + sqrt(2 eta) xi) and HamiltonianMonteCarlo (leapfrog,
identity mass when mass=None, Metropolis accept).  float32, CPU; with
EMBER_TORCH_DEVICE=cuda the models, samplers, start states and generators are
on the GPU and every timed run ends with torch.cuda.synchronize().
Usage: python bench/peers/torchebm_peer.py [--case P1] [--quick]
--sweep: the GPU cases P1 and P7 (P7 at 10^3 ... 10^7 chains x 1,000 steps)
of bench/cuda_suite.cu instead, one JSON line per chain count with "device"
(bench/peers/gpu_sweep.py; bench/peers/gpu_peers.sh runs it on a GPU).
"""

from __future__ import annotations

import os
import sys

import common  # sets threads/affinity; import before torch
import gpu_sweep

import torch
import torchebm
from torchebm.core import DoubleWellModel, GaussianModel, RosenbrockModel
from torchebm.samplers import HamiltonianMonteCarlo, LangevinDynamics

IMPL = "torchebm"
F32 = torch.float32
torch.set_num_threads(common.NTHREADS)
DEV = torch.device(os.environ.get("EMBER_TORCH_DEVICE", "cpu"))


def _done(result):
    """Returns result once the device has finished computing it."""
    if DEV.type == "cuda":
        torch.cuda.synchronize()
    return result


def make_model(cfg):
    p = cfg["params"]
    if cfg["target"] == "gaussian":
        mu, sig2, _ = common.gaussian_params(cfg["dim"])
        cov = torch.diag(torch.tensor(sig2, dtype=F32))   # dense (d, d) matrix
        return GaussianModel(mean=torch.tensor(mu, dtype=F32), cov=cov, dtype=F32, device=DEV)
    if cfg["target"] == "double_well":
        return DoubleWellModel(barrier_height=p["h"], b=p["b"], dtype=F32, device=DEV)
    if cfg["target"] == "rosenbrock":
        return RosenbrockModel(a=p["a"], b=p["b"], dtype=F32, device=DEV)
    raise ValueError(cfg["target"])


def _x0(cfg, seed):
    gen = torch.Generator(device=DEV).manual_seed(seed)
    x0 = torch.randn((cfg["chains"], cfg["dim"]), generator=gen, dtype=F32, device=DEV)
    return _done((x0, gen))


def run_ula(cfg, args):
    model = make_model(cfg)
    sampler = LangevinDynamics(model, step_size=cfg["params"]["eta"], noise_scale=1.0,
                               dtype=F32, device=DEV)
    run = lambda a: _done(sampler.sample(x=a[0], n_steps=cfg["steps"], generator=a[1]))
    prepare = lambda i: _x0(cfg, args.seed + i)
    if "run_budget" in cfg:           # GPU sweep (gpu_sweep.py)
        t, _ = gpu_sweep.measure(run, prepare, cfg)
    else:
        t = common.measure(run, cfg["repeats"], prepare)
    return common.Outcome(t, t.result.cpu().numpy(),
                          note="LangevinDynamics(step_size=eta, noise_scale=1); autograd gradient")


def run_hmc(cfg, args):
    model = make_model(cfg)
    p = cfg["params"]
    sampler = HamiltonianMonteCarlo(model, step_size=p["eps"], n_leapfrog_steps=p["L"],
                                    mass=None, dtype=F32, device=DEV)
    t = common.measure(
        lambda a: _done(sampler.sample(x=a[0], n_steps=cfg["steps"], generator=a[1])),
        cfg["repeats"], lambda i: _x0(cfg, args.seed + i))
    return common.Outcome(t, t.result.cpu().numpy(),
                          note="HamiltonianMonteCarlo(step_size=eps, n_leapfrog_steps=L, mass=None); "
                               "autograd gradient")


def run_grad(cfg, args):
    model = make_model(cfg)
    x, _ = _x0(cfg, args.seed)
    inner = common.calibrate_inner(lambda: _done(model.gradient(x)))
    t = common.measure(lambda _: _done(model.gradient(x)), cfg["repeats"], inner=inner)
    return common.Outcome(t, (x.cpu().numpy(), t.result.cpu().numpy()),
                          note="GaussianModel.gradient (autograd)")


RUNNERS = {"P1": run_ula, "P2": run_hmc, "P3": run_ula, "P4": run_ula, "P5": run_grad}


def device_name():
    return torch.cuda.get_device_name(DEV) if DEV.type == "cuda" else "cpu"


def _version():
    where = f" on {device_name()}" if DEV.type == "cuda" else ""
    return f"torchebm {torchebm.__version__}, torch {torch.__version__}{where}"


def cleanup():
    if DEV.type == "cuda":
        torch.cuda.empty_cache()


if __name__ == "__main__":
    if "--sweep" in sys.argv[1:]:
        sys.exit(gpu_sweep.main(IMPL, __doc__, run_ula, _version, device_name, cleanup,
                                warmup_optional=True))
    sys.exit(common.main(IMPL, __doc__, RUNNERS, _version))
