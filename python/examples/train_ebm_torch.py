"""TorchEBM's eight-Gaussians recipe as a plain PyTorch training loop, with ember's Langevin
sampler inside (docs/python.md, "Neural energies from PyTorch"): the network, the loss, Adam and
the data are PyTorch's; ember.nn.PersistentChains keeps the replay buffer and runs the k Langevin
steps on the network's current weights at every step. Needs torch. Run: python train_ebm_torch.py [steps]"""
import sys

import numpy as np
import torch

import ember


def eight_gaussians(n, seed=0):
    """Eight modes on the circle of radius 2, standard deviation 0.02 (TorchEBM's eight Gaussians)."""
    rng = np.random.default_rng(seed)
    centres = 2 * np.array([(np.cos(a), np.sin(a)) for a in np.arange(8) * np.pi / 4])
    x = centres[rng.integers(0, 8, n)] + rng.normal(scale=0.02, size=(n, 2))
    return torch.from_numpy(x.astype(np.float32))


def main(steps=1000, k=10):
    torch.manual_seed(0)
    torch.set_num_threads(2)
    data = eight_gaussians(8192)
    net = torch.nn.Sequential(torch.nn.Linear(2, 128), torch.nn.SiLU(), torch.nn.Linear(128, 128), torch.nn.SiLU(),
                              torch.nn.Linear(128, 1))
    opt = torch.optim.Adam(net.parameters(), lr=1e-4)
    chains = ember.nn.PersistentChains(net, buffer=8192, batch=256, steps=k, step_size=0.1, low=-4, high=4, seed=0)
    for step in range(1, steps + 1):
        negatives = chains.sample()  # a torch tensor (256, 2): k Langevin steps from the replay buffer
        positives = data[torch.randint(0, len(data), (256,))]
        e_pos, e_neg = net(positives), net(negatives)
        loss = e_pos.mean() - e_neg.mean() + 1e-3 * (e_pos.pow(2).mean() + e_neg.pow(2).mean())
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 250 == 0 or step == steps:
            with torch.no_grad():
                gap = float(net(negatives).mean() - net(positives).mean())
            print(f"step {step}: loss {float(loss.detach()):.4f}, E(negatives) - E(data) = {gap:.4f}")
    # Samples of the learned energy (200 Langevin steps from uniform starts, as TorchEBM's examples
    # draw them): how many lie near one of the eight modes.
    lv = ember.nn.Langevin(net, step_size=0.1, seed=1)
    x = lv(torch.rand(2000, 2) * 8 - 4, 200)
    centres = torch.tensor([(np.cos(a), np.sin(a)) for a in np.arange(8) * np.pi / 4], dtype=torch.float32) * 2
    near = (torch.cdist(x, centres).min(dim=1).values < 0.5).float().mean()
    print(f"{float(near):.2f} of 2,000 samples of the learned energy lie within 0.5 of a mode")
    return float(near)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
