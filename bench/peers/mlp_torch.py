"""PyTorch's Langevin on TorchEBM's MLP energy, beside bench/mlp_langevin.cpp (issue 29).

The energy is torch.nn.Sequential(Linear(2, 128), SiLU(), Linear(128, 128), SiLU(),
Linear(128, 1)); a chain-step is x <- x - eta grad E(x) + sqrt(2 eta) xi with the gradient from
autograd (torch.autograd.grad of E(x).sum()), eta = 0.01, float32, 100 steps, at 256, 4,096 and
16,384 chains. Timed the best of 3 runs (after one warm-up run), for each thread count in
--threads (torch.set_num_threads), and as TorchEBM's own LangevinDynamics on the same network
(its BaseModel wrapping it). Writes the network's state_dict as .npz (--weights) so that ember
times the same weights. One JSON line per measurement.

On a GPU (--device cuda): the network, the states and the generator on the device, each timed
run ended by torch.cuda.synchronize(); the thread count is then the host's and is not varied.

usage: python bench/peers/mlp_torch.py --weights FILE.npz [--threads 1,2] [--steps 100] [--device cuda]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
from export_torch_mlp import save_state_dict  # noqa: E402


def network(seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(2, 128), torch.nn.SiLU(), torch.nn.Linear(128, 128), torch.nn.SiLU(),
                               torch.nn.Linear(128, 1))


def langevin(net, x, steps, eta, gen):
    noise = (2 * eta) ** 0.5
    for _ in range(steps):
        x = x.detach().requires_grad_(True)
        (g,) = torch.autograd.grad(net(x).sum(), x)
        x = x - eta * g + noise * torch.randn(x.shape, generator=gen, device=x.device)
    return x.detach()


def best_of(run, repeats=3):
    sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)
    run()
    best = float("inf")
    for _ in range(repeats):
        sync()
        t0 = time.perf_counter()
        out = run()
        sync()
        best = min(best, time.perf_counter() - t0)
        if not torch.isfinite(out).all():
            print("non-finite states", file=sys.stderr)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--weights", required=True)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--chains", default="256,4096,16384")
    ap.add_argument("--no-torchebm", action="store_true")
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    net = network(1)
    for p in net.parameters():
        p.requires_grad_(False)
    save_state_dict(net, args.weights)
    dev = torch.device(args.device)
    net = net.to(dev)
    if dev.type != "cpu":
        args.threads = str(torch.get_num_threads())
    eta = 0.01
    ebm = None
    if not args.no_torchebm:
        try:
            from torchebm.core import BaseModel
            from torchebm.samplers import LangevinDynamics

            class Energy(BaseModel):
                def __init__(self, inner):
                    super().__init__()
                    self.inner = inner

                def forward(self, x):
                    return self.inner(x).squeeze(-1)

            ebm = LangevinDynamics(Energy(net), step_size=eta, noise_scale=1.0, device=dev)
        except Exception as e:  # reported, not hidden
            print(json.dumps({"what": "langevin", "impl": "torchebm", "error": repr(e)}))
    for threads in [int(t) for t in args.threads.split(",")]:
        torch.set_num_threads(threads)
        for chains in [int(c) for c in args.chains.split(",")]:
            gen = torch.Generator(device=dev).manual_seed(7)
            x0 = torch.rand((chains, 2), generator=gen, device=dev) * 4 - 2
            impls = [("torch-eager", lambda: langevin(net, x0, args.steps, eta, gen))]
            if ebm is not None:
                impls.append(("torchebm", lambda: ebm.sample(x=x0.clone(), n_steps=args.steps, generator=gen)))
            for impl, run in impls:
                t = best_of(run)
                print(json.dumps({"what": "langevin", "impl": impl, "net": "2-128-128-1 silu", "chains": chains,
                                  "steps": args.steps, "threads": threads, "seconds": t,
                                  "chain_steps_per_s": chains * args.steps / t, "torch": torch.__version__,
                                  "device": torch.cuda.get_device_name() if dev.type == "cuda" else "cpu"}), flush=True)


if __name__ == "__main__":
    main()
