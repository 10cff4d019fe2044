"""A PyTorch training loop of TorchEBM's eight-Gaussians recipe (2-128-128-1 SiLU, persistent
contrastive divergence, replay buffer of 8,192 with 5 % re-drawn, batches of 256, k Langevin steps
of step size 0.1, Adam 1e-4), once with ember.nn's sampler and once with TorchEBM's
LangevinDynamics: the same loop, buffer, loss, optimiser and weights; only the k Langevin steps
differ. Prints one JSON line per (sampler, k, repeat): seconds per training step and per sampler
call. Run from ember's build: PYTHONPATH=build/python bench/.venv/bin/python bench/python/torch_loop.py
(needs torch and torchebm: bench/peers/requirements or pip install torchebm==0.8.9)."""
import argparse
import json
import time

import numpy as np
import torch

import ember


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--ks", default="10,60")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    from torchebm.core import BaseModel
    from torchebm.datasets import EightGaussiansDataset
    from torchebm.samplers import LangevinDynamics

    data = EightGaussiansDataset(n_samples=8192, seed=0).get_data()

    class Energy(BaseModel):
        def __init__(self, net):
            super().__init__()
            self.net = net

        def forward(self, x):
            return self.net(x).squeeze(-1)

    def run(which, k, seed):
        torch.manual_seed(seed)
        net = torch.nn.Sequential(torch.nn.Linear(2, 128), torch.nn.SiLU(), torch.nn.Linear(128, 128), torch.nn.SiLU(),
                                  torch.nn.Linear(128, 1))
        model = Energy(net)
        opt = torch.optim.Adam(net.parameters(), lr=1e-4)
        rng = np.random.default_rng(seed)
        buffer = torch.from_numpy(rng.uniform(-4, 4, size=(8192, 2)).astype(np.float32))
        if which == "ember":
            lv = ember.nn.Langevin(net, step_size=0.1, noise_scale=1.0, seed=seed)
            langevin = lambda x: lv(x.contiguous(), k)  # noqa: E731
        else:
            sampler = LangevinDynamics(model, step_size=0.1, noise_scale=1.0)
            langevin = lambda x: sampler.sample(x=x, n_steps=k).detach()  # noqa: E731
        sample_s = total_s = 0.0
        for step in range(args.steps):
            t0 = time.perf_counter()
            idx = torch.from_numpy(rng.choice(8192, size=256, replace=False))
            x = buffer[idx].clone()
            fresh = torch.from_numpy(rng.random(256) < 0.05)
            x[fresh] = torch.from_numpy(rng.uniform(-4, 4, size=(int(fresh.sum()), 2)).astype(np.float32))
            t1 = time.perf_counter()
            neg = langevin(x)
            sample_s += time.perf_counter() - t1
            buffer[idx] = neg
            pos = data[torch.from_numpy(rng.integers(0, len(data), 256))]
            opt.zero_grad()
            ep, en = model(pos), model(neg)
            loss = ep.mean() - en.mean() + 1e-3 * (ep.pow(2).mean() + en.pow(2).mean())
            loss.backward()
            opt.step()
            total_s += time.perf_counter() - t0
        return {"sampler": which, "k": k, "seed": seed, "steps": args.steps, "seconds_per_step": total_s / args.steps,
                "sampler_seconds_per_call": sample_s / args.steps, "final_loss": float(loss.detach())}

    meta = {"torch": torch.__version__, "torchebm": __import__("torchebm").__version__, "threads": args.threads}
    for k in (int(v) for v in args.ks.split(",")):
        for rep in range(args.repeats):
            for which in ("ember", "torchebm") if rep % 2 == 0 else ("torchebm", "ember"):
                print(json.dumps({**run(which, k, rep), **meta}), flush=True)


if __name__ == "__main__":
    main()
