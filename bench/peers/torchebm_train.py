"""TorchEBM's contrastive-divergence recipe, timed beside examples/15_train_ebm.cpp (issue 29).

torchebm 0.8.9: ContrastiveDivergence(model, sampler=LangevinDynamics(model, step_size, noise_scale=1),
k_steps, persistent, buffer_size, energy_reg_weight=0.001 (its default)), Adam(lr 1e-3), batches of
B indices drawn with replacement, on the network Linear(2,128)-SiLU-Linear(128,128)-SiLU-Linear(128,1)
(torchebm's own examples). Data: torchebm's EightGaussiansDataset / TwoMoonsDataset (8,192 points).
Every 100 steps: the loss, mean energies of data and negatives, and the energy distance between
1,000 model samples (200 Langevin steps from uniform starts over the data's box widened by a fifth,
as ember's sample_model) and 1,000 held-out points (U-statistics, as ember::energy_distance).
One JSON line per report and one at the end with the training's wall time (reports excluded).

usage: python bench/peers/torchebm_train.py --data eight_gaussians|two_moons [--steps 1000] [--seed 0]
       [--k 10] [--batch 256] [--buffer 8192] [--step-size 0.1] [--threads 2] [--no-persistent] [--lr 1e-3]
       [--report-every 100]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch


def energy_distance(a: np.ndarray, b: np.ndarray) -> float:
    def mean_dist(p, q, same):
        d = np.sqrt(((p[:, None, :] - q[None, :, :]) ** 2).sum(-1))
        if same:
            n = len(p)
            return d.sum() / (n * (n - 1))
        return d.mean()

    return float(2 * mean_dist(a, b, False) - mean_dist(a, a, True) - mean_dist(b, b, True))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="eight_gaussians")
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--buffer", type=int, default=8192)
    ap.add_argument("--step-size", type=float, default=0.1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--no-persistent", action="store_true")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--report-every", type=int, default=100)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    from torchebm.core import BaseModel
    from torchebm.datasets import EightGaussiansDataset, TwoMoonsDataset
    from torchebm.losses import ContrastiveDivergence
    from torchebm.samplers import LangevinDynamics

    make = {"eight_gaussians": lambda n, s: EightGaussiansDataset(n_samples=n, seed=s),
            "two_moons": lambda n, s: TwoMoonsDataset(n_samples=n, seed=s)}[args.data]
    data = make(8192, args.seed).get_data()
    held = make(1000, args.seed + 1000)
    held = held.get_data().numpy()
    torch.manual_seed(args.seed)

    class Energy(BaseModel):
        def __init__(self):
            super().__init__()
            self.net = torch.nn.Sequential(torch.nn.Linear(2, 128), torch.nn.SiLU(), torch.nn.Linear(128, 128), torch.nn.SiLU(),
                                           torch.nn.Linear(128, 1))

        def forward(self, x):
            return self.net(x).squeeze(-1)

    model = Energy()
    sampler = LangevinDynamics(model, step_size=args.step_size, noise_scale=1.0)
    loss_fn = ContrastiveDivergence(model=model, sampler=sampler, k_steps=args.k, persistent=not args.no_persistent,
                                    buffer_size=args.buffer)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    lo, hi = data.min(0).values, data.max(0).values
    w = (hi - lo) / 5 + 1e-3
    lo, hi = lo - w, hi + w

    def distance():
        x0 = lo + (hi - lo) * torch.rand(1000, 2)
        s = sampler.sample(x=x0, n_steps=200)
        return energy_distance(s.detach().numpy(), held)

    train_seconds = 0.0
    for step in range(1, args.steps + 1):
        t0 = time.perf_counter()
        idx = torch.randint(0, len(data), (args.batch,))
        opt.zero_grad()
        out = loss_fn(data[idx])
        loss = out[0] if isinstance(out, tuple) else out
        loss.backward()
        opt.step()
        train_seconds += time.perf_counter() - t0
        if step % args.report_every == 0 or step == args.steps:
            with torch.no_grad():
                xb = data[idx]
                neg = out[1] if isinstance(out, tuple) and len(out) > 1 else None
                ed_ = float(model(xb).mean())
                en_ = float(model(neg).mean()) if neg is not None else float("nan")
            print(json.dumps({"impl": "torchebm", "data": args.data, "step": step, "loss": float(loss), "data_energy": ed_,
                              "negative_energy": en_, "energy_distance": distance(), "train_seconds": train_seconds}), flush=True)
    print(json.dumps({"impl": "torchebm", "data": args.data, "steps": args.steps, "seed": args.seed, "train_seconds": train_seconds,
                      "persistent": not args.no_persistent, "k": args.k, "batch": args.batch, "threads": args.threads, "lr": args.lr,
                      "torchebm": __import__("torchebm").__version__, "torch": torch.__version__}), flush=True)


if __name__ == "__main__":
    main()
