"""ember.nn: the compiled 2-128-128-1 SiLU network against a float64 NumPy forward pass (within the
float32 rounding bound of its sums), Langevin's noise and drift checked exactly through the shared
random stream, the replay buffer, and (where torch is installed) torch tensors in and out."""
import numpy as np
import pytest

import ember

KEY = (2, (128, 128), "silu")
EPS32 = np.finfo(np.float32).eps


def random_theta(seed, scale=0.3):
    rng = np.random.default_rng(seed)
    n = ember._core.MLP_2_128_128_silu.parameter_count
    return (scale * rng.standard_normal(n)).astype(np.float32)


def layers(theta):
    """(W, b) per layer from the flat theta, PyTorch's order (W is out x in)."""
    widths, out, i = [2, 128, 128, 1], [], 0
    for a, b in zip(widths, widths[1:]):
        W = theta[i:i + a * b].reshape(b, a).astype(np.float64)
        i += a * b
        out.append((W, theta[i:i + b].astype(np.float64)))
        i += b
    assert i == len(theta)
    return out


def forward(theta, x):
    """E(x) in float64, and a bound on the magnitudes each layer's sums add (for the rounding bound)."""
    h, mag = x.astype(np.float64), np.abs(x.astype(np.float64))
    ls = layers(theta)
    for W, b in ls[:-1]:
        a = h @ W.T + b
        h = a / (1 + np.exp(-a))  # SiLU
        mag = mag @ np.abs(W).T + np.abs(b)  # |silu(a)| <= |a|
    W, b = ls[-1]
    return (h @ W.T + b)[:, 0], (mag @ np.abs(W).T + np.abs(b))[:, 0]


def test_energy_matches_numpy():
    theta = random_theta(1)
    lv = ember.nn.Langevin((KEY, theta), step_size=0.01)
    x = np.random.default_rng(2).uniform(-3, 3, size=(64, 2)).astype(np.float32)
    e, g = lv.energy(x)
    ref, mag = forward(theta, x)
    # Each layer's sum of 129 products rounds by at most about 130 u of its magnitudes; three layers,
    # and the activations' own rounding: a bound of 4 * 3 * 130 u on the propagated magnitudes.
    assert np.all(np.abs(e - ref) <= 4 * 3 * 130 * EPS32 * mag)
    assert g.shape == (64, 2) and np.isfinite(g).all()


def test_noise_and_drift_exactly():
    x0 = np.random.default_rng(3).uniform(-2, 2, size=(512, 2)).astype(np.float32)
    eta, s = 0.05, 0.7
    flat = random_theta(4)
    flat[-129:] = 0  # output layer zero: E is constant, so one step is pure noise
    noise = ember.nn.Langevin((KEY, flat), step_size=eta, noise_scale=s, seed=9)(x0, 1) - x0
    theta = random_theta(5)
    lv = ember.nn.Langevin((KEY, theta), step_size=eta, noise_scale=s, seed=9)
    x1 = lv(x0, 1)
    _, g = lv.energy(x0)
    # x1 = x0 - eta grad E(x0) + s sqrt(2 eta) xi with the same xi (same seed, call and starts).
    resid = x1 - (x0 - eta * g + noise)
    scale = np.abs(x0) + np.abs(eta * g) + np.abs(noise)
    assert np.all(np.abs(resid) <= 8 * EPS32 * scale)
    # The noise itself: N(0, 2 eta s^2) per coordinate; its variance within 5 standard errors.
    var = 2 * eta * s * s
    n = noise.size
    assert abs(noise.mean()) < 5 * np.sqrt(var / n)
    assert abs(noise.var() - var) < 5 * var * np.sqrt(2 / n)


def test_reproducible_and_fresh_noise():
    theta = random_theta(6)
    x0 = np.zeros((32, 2), np.float32)
    a = ember.nn.Langevin((KEY, theta), step_size=0.01, seed=1)
    b = ember.nn.Langevin((KEY, theta), step_size=0.01, seed=1)
    first = a(x0, 5)
    np.testing.assert_array_equal(first, b(x0, 5))
    assert not np.array_equal(first, a(x0, 5))  # the second call draws new noise


def test_refusals():
    lv = ember.nn.Langevin((KEY, random_theta(7)), step_size=0.01)
    with pytest.raises(TypeError, match="float32"):
        lv(np.zeros((4, 2)), 1)
    with pytest.raises(ValueError, match=r"shape \(n, 2\)"):
        lv(np.zeros((4, 3), np.float32), 1)
    with pytest.raises(ValueError, match="C-contiguous"):
        lv(np.zeros((2, 4), np.float32).T, 1)
    with pytest.raises(ValueError, match="non-finite"):
        lv(np.full((4, 2), np.nan, np.float32), 1)
    with pytest.raises(ValueError, match="parameters"):
        ember.nn.Langevin((KEY, np.zeros(10, np.float32)), step_size=0.01)(np.zeros((4, 2), np.float32), 1)
    with pytest.raises(ValueError, match="not compiled"):
        ember.nn.Langevin(((3, (8,), "silu"), np.zeros(41, np.float32)), step_size=0.01)
    with pytest.raises(RuntimeError, match="went non-finite"):
        ember.nn.Langevin((KEY, random_theta(8, scale=3.0)), step_size=1e37)(np.ones((8, 2), np.float32), 5)


def test_persistent_chains_buffer():
    pc = ember.nn.PersistentChains((KEY, random_theta(9)), buffer=1024, batch=128, steps=5, step_size=0.01, low=-4,
                                   high=4, seed=3)
    before = pc.buffer.copy()
    neg = np.asarray(pc.sample())
    assert neg.shape == (128, 2)
    changed = np.any(pc.buffer != before, axis=1)
    assert changed.sum() == 128  # exactly the batch's rows were written back


def test_torch_tensors():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(2, 128), torch.nn.SiLU(), torch.nn.Linear(128, 128), torch.nn.SiLU(),
                              torch.nn.Linear(128, 1))
    lv = ember.nn.Langevin(net, step_size=0.01)
    x = torch.rand(16, 2) * 4 - 2
    e, _ = lv.energy(x)
    with torch.no_grad():
        ref = net(x)[:, 0].numpy()
    theta = torch.cat([p.detach().reshape(-1) for p in net.parameters()]).numpy()
    _, mag = forward(theta, x.numpy())
    assert np.all(np.abs(e - ref) <= 2 * 4 * 3 * 130 * EPS32 * mag)  # both round: twice the bound
    y = lv(x, 3)
    assert isinstance(y, torch.Tensor) and y.dtype == torch.float32 and y.shape == (16, 2)
    with pytest.raises(TypeError, match="float32"):
        lv(x.double(), 1)
    # An activation after the output layer would change the energy: refused, not ignored.
    with pytest.raises(ValueError, match="Linear, activation"):
        ember.nn.Langevin(torch.nn.Sequential(*net, torch.nn.SiLU()), step_size=0.01)
