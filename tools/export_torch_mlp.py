"""A PyTorch network's weights to and from ember (docs/neural.md).

    from export_torch_mlp import save_state_dict, load_state_dict
    save_state_dict(model, "energy.npz")      # what ember::mlp_weights<T>::from_npz reads
    load_state_dict(model, "trained.npz")     # what mlp_weights::write_npz wrote, back into torch

The .npz holds the state_dict's arrays under their own names ("0.weight", "0.bias", "2.weight",
... for an nn.Sequential), float32 as torch keeps them. ember takes the layers in natural order of
their names (0, 2, ..., 10) or in an order it is given; a model whose Linear layers are not
registered in the order it applies them needs that order (from_npz's second argument).
As a script: python tools/export_torch_mlp.py MODULE.pt OUT.npz, for a module saved whole with
torch.save(model, "MODULE.pt").
"""

from __future__ import annotations

import sys

import numpy as np


def save_state_dict(model, path: str) -> None:
    """Writes model.state_dict() as an .npz of NumPy arrays (uncompressed, as ember reads)."""
    arrays = {k: v.detach().cpu().numpy() for k, v in model.state_dict().items()}
    np.savez(path, **arrays)


def load_state_dict(model, path: str) -> None:
    """Loads an .npz written by save_state_dict or by ember's mlp_weights::write_npz into model."""
    import torch

    with np.load(path) as z:
        state = {k: torch.from_numpy(np.array(z[k])) for k in z.files}
    model.load_state_dict(state)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python tools/export_torch_mlp.py MODULE.pt OUT.npz")
    import torch

    save_state_dict(torch.load(sys.argv[1], weights_only=False), sys.argv[2])
