#!/usr/bin/env python3
"""ember's neural energies against NumPy: PyTorch's activations and Linear layers, written here
from their documented formulas (torch.nn.SiLU, ReLU, LeakyReLU(0.01), ELU(1), GELU() through
erf, GELU('tanh'), Softplus(), Tanh, Sigmoid), on a state_dict saved as torch saves it.

    python tests/energy/mlp_numpy.py MLP_DUMP_EXECUTABLE

Writes six Linear layers (3 -> 5 x 5 -> 1, named net.0 ... net.10 as nn.Sequential names them
beside its activations, so text order would misplace net.10), points and coefficients; runs
the dump; checks U, grad_x U and sum_i c_i grad_theta U for every activation, with and without
skips (h_l = act(W h + b) + h_{l-1} where widths agree, after the first layer).

Tolerance: both sides compute in double in other orders; a sum of n terms is off by at most
n*u times its absolute sum, so each value is allowed (sum of widths + 16)*u times the same
quantity computed with absolute values (each activation's own rounding counted as 1 + |a|),
as tests/energy/mlp_test.cpp derives. Exit 77 (ctest's skip) without numpy and scipy.
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    from scipy.special import erf, expit
except ImportError:
    print("no numpy/scipy: skipped")
    sys.exit(77)

SQ2PI = np.sqrt(2 / np.pi)


def gelu_tanh(a):
    return 0.5 * a * (1 + np.tanh(SQ2PI * (a + 0.044715 * a**3)))


# (value, derivative) of each activation, as torch documents them
ACTS = {
    "silu": (lambda a: a * expit(a), lambda a: expit(a) * (1 + a * (1 - expit(a)))),
    "relu": (lambda a: np.maximum(a, 0), lambda a: (a > 0).astype(float)),
    "leaky_relu": (lambda a: np.where(a > 0, a, 0.01 * a), lambda a: np.where(a > 0, 1.0, 0.01)),
    "elu": (lambda a: np.where(a > 0, a, np.expm1(np.minimum(a, 0))), lambda a: np.where(a > 0, 1.0, np.exp(np.minimum(a, 0)))),
    "gelu": (lambda a: 0.5 * a * (1 + erf(a / np.sqrt(2))),
             lambda a: 0.5 * (1 + erf(a / np.sqrt(2))) + a * np.exp(-0.5 * a * a) / np.sqrt(2 * np.pi)),
    "gelu_tanh": (gelu_tanh, None),  # derivative written out in derivative()
    "softplus": (lambda a: np.logaddexp(0, a), lambda a: expit(a)),
    "tanh": (np.tanh, lambda a: 1 - np.tanh(a) ** 2),
    "sigmoid": (expit, lambda a: expit(a) * (1 - expit(a))),
}


def derivative(name, a):
    f, d = ACTS[name]
    if d is not None:
        return d(a)
    # gelu_tanh: its derivative written out
    t = np.tanh(SQ2PI * (a + 0.044715 * a**3))
    return 0.5 * (1 + t) + 0.5 * a * (1 - t * t) * SQ2PI * (1 + 3 * 0.044715 * a * a)


def forward_backward(layers, x, name, skip):
    """U, grad_x U, grad_theta U (flat: W0, b0, W1, b1, ...) and their magnitudes, at one point."""
    f = ACTS[name][0]
    hs, hms, slopes, smags = [x], [np.abs(x)], [], []
    for l, (W, b) in enumerate(layers[:-1]):
        a = W @ hs[-1] + b
        am = np.abs(W) @ hms[-1] + np.abs(b)
        h, d = f(a), derivative(name, a)
        hm = np.abs(d) * am + 1 + np.abs(a) + np.abs(h)
        if skip and l > 0 and W.shape[0] == W.shape[1]:
            h, hm = h + hs[-1], hm + hms[-1]
        slopes.append(d)
        smags.append(np.abs(d) + 1 + np.abs(a) + am)
        hs.append(h)
        hms.append(hm)
    Wo, bo = layers[-1]
    u = float(Wo[0] @ hs[-1] + bo[0])
    um = float(np.abs(Wo[0]) @ hms[-1] + abs(bo[0]))
    ga, gm = [None] * len(layers), [None] * len(layers)
    ga[-1], gm[-1] = np.ones(1), np.ones(1)
    gh = ghm = None
    for l in range(len(layers) - 1, -1, -1):
        W, _ = layers[l]
        gin, ginm = W.T @ ga[l], np.abs(W).T @ gm[l]
        if skip and 0 < l < len(layers) - 1 and W.shape[0] == W.shape[1]:
            gin, ginm = gin + gh, ginm + ghm
        gh, ghm = gin, ginm
        if l > 0:
            ga[l - 1], gm[l - 1] = gin * slopes[l - 1], ginm * smags[l - 1]
    theta, theta_m = [], []
    for l in range(len(layers)):
        theta += [np.outer(ga[l], hs[l]).ravel(), ga[l]]
        theta_m += [np.outer(gm[l], hms[l]).ravel(), gm[l]]
    return u, um, gh, ghm, np.concatenate(theta), np.concatenate(theta_m)


def main():
    dump = sys.argv[1]
    rng = np.random.default_rng(20261128)
    widths = [3, 5, 5, 5, 5, 5, 1]
    layers = []
    sd = {}
    for l in range(len(widths) - 1):
        bound = 1 / np.sqrt(widths[l])
        W = rng.uniform(-bound, bound, (widths[l + 1], widths[l])) * 1.7
        b = rng.uniform(-bound, bound, widths[l + 1])
        layers.append((W, b))
        sd[f"net.{2 * l}.weight"] = W
        sd[f"net.{2 * l}.bias"] = b
    n = 37
    x = rng.uniform(-3, 3, (n, 3))
    c = rng.uniform(-1, 1, n)
    with tempfile.TemporaryDirectory() as d:
        np.savez(os.path.join(d, "w.npz"), **sd)
        np.save(os.path.join(d, "x.npy"), x)
        np.save(os.path.join(d, "c.npy"), c)
        subprocess.run([dump, os.path.join(d, "w.npz"), os.path.join(d, "x.npy"), os.path.join(d, "c.npy"),
                        os.path.join(d, "out.npz")], check=True)
        out = dict(np.load(os.path.join(d, "out.npz")))
    u_tol = (sum(widths) + 16) * np.finfo(float).eps / 2
    sum_tol = u_tol + n * np.finfo(float).eps / 2
    failures = 0
    worst = 0.0
    for name in ACTS:
        for skip in (False, True):
            key = name + ("_skip" if skip else "")
            theta = theta_m = 0
            for i in range(n):
                u, um, g, gm, th, thm = forward_backward(layers, x[i], name, skip)
                theta = theta + c[i] * th
                theta_m = theta_m + abs(c[i]) * thm
                for what, got, want, mag in (("U", out[key + "_u"][i], u, um), ("grad", out[key + "_g"][i], g, gm)):
                    err = np.abs(np.asarray(got) - want)
                    worst = max(worst, float(np.max(err / (u_tol * np.asarray(mag)))))
                    if np.any(err > u_tol * np.asarray(mag)):
                        failures += 1
                        print(f"{key} point {i} {what}: ember {got}, numpy {want}")
            err = np.abs(out[key + "_theta"] - theta)
            worst = max(worst, float(np.max(err / (sum_tol * theta_m))))
            if np.any(err > sum_tol * theta_m):
                failures += 1
                print(f"{key} parameter gradient: worst entry {int(np.argmax(err / theta_m))}")
    print(f"{len(ACTS) * 2} networks x {n} points: {failures} failures; worst error {worst:.3g} of its bound")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
