"""ember.nn: the 2-128-128-1 SiLU network and networks of other widths, depths and activations
(chosen at run time) against a float64 NumPy forward and backward pass (within the float32 rounding
bound of their sums), Langevin's noise and drift checked exactly through the shared random stream,
the replay buffer, and (where torch is installed) torch tensors and torch.nn modules in and out."""
import math

import numpy as np
import pytest

import ember

KEY = (2, (128, 128), "silu")
EPS32 = np.finfo(np.float32).eps


def random_theta(seed, scale=0.3):
    rng = np.random.default_rng(seed)
    n = ember._core.MLP_in2([128, 128]).parameter_count
    return (scale * rng.standard_normal(n)).astype(np.float32)


def test_energy_matches_numpy():
    theta = random_theta(1)
    lv = ember.nn.Langevin((KEY, theta), step_size=0.01)
    x = np.random.default_rng(2).uniform(-3, 3, size=(64, 2)).astype(np.float32)
    e, g = lv.energy(x)
    ref, gref, emag, gmag = numpy_network([2, 128, 128, 1], "silu", None, theta, x)
    assert np.all(np.abs(e - ref) <= bound([2, 128, 128, 1]) * emag)
    assert np.all(np.abs(g - gref) <= bound([2, 128, 128, 1]) * gmag)


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
    for width in (0, 4097):
        with pytest.raises(ValueError, match="input widths from 1 to 4096"):
            ember.nn.Langevin(((width, (8,), "silu"), np.zeros(8 * width + 17, np.float32)), step_size=0.01)
    with pytest.raises(ValueError, match="not one of ember.nn's"):
        ember.nn.Langevin(((3, (8,), "swish"), np.zeros(41, np.float32)), step_size=0.01)
    with pytest.raises(ValueError, match="hidden widths must be positive"):
        ember.nn.Langevin(((3, (8, 0), "relu"), np.zeros(41, np.float32)), step_size=0.01)
    with pytest.raises(ValueError, match="at most 32 are supported"):
        ember.nn.Langevin(((3, (2,) * 33, "relu"), np.zeros(10, np.float32)), step_size=0.01)
    with pytest.raises(ValueError, match="takes no parameter"):
        ember.nn.Langevin(((3, (8,), "relu", 0.1), np.zeros(41, np.float32)), step_size=0.01)
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
        torch_e = net(x)[:, 0].numpy()
    theta = torch.cat([p.detach().reshape(-1) for p in net.parameters()]).numpy()
    _, _, emag, _ = numpy_network([2, 128, 128, 1], "silu", None, theta, x.numpy())
    assert np.all(np.abs(e - torch_e) <= 2 * bound([2, 128, 128, 1]) * emag)  # both within the bound of the exact value
    y = lv(x, 3)
    assert isinstance(y, torch.Tensor) and y.dtype == torch.float32 and y.shape == (16, 2)
    with pytest.raises(TypeError, match="float32"):
        lv(x.double(), 1)
    # An activation after the output layer would change the energy: refused, not ignored.
    with pytest.raises(ValueError, match="Linear, activation"):
        ember.nn.Langevin(torch.nn.Sequential(*net, torch.nn.SiLU()), step_size=0.01)


# Activations as torch.nn computes them (float64), with their slopes.
_ERF = np.vectorize(math.erf)


def _act(name, a, p):
    if name == "silu":
        s = 1 / (1 + np.exp(-a))
        return a * s, s * (1 + a * (1 - s))
    if name == "relu":
        return np.maximum(a, 0), (a > 0).astype(float)
    if name == "leaky_relu":
        return np.where(a > 0, a, p * a), np.where(a > 0, 1.0, p)
    if name == "elu":
        return np.where(a > 0, a, p * np.expm1(a)), np.where(a > 0, 1.0, p * np.exp(a))
    if name == "gelu":
        cdf = 0.5 * (1 + _ERF(a / math.sqrt(2)))
        return a * cdf, cdf + a * np.exp(-a * a / 2) / math.sqrt(2 * math.pi)
    if name == "gelu_tanh":
        k = math.sqrt(2 / math.pi)
        t = np.tanh(k * (a + 0.044715 * a ** 3))
        return 0.5 * a * (1 + t), 0.5 * (1 + t) + 0.5 * a * (1 - t * t) * k * (1 + 3 * 0.044715 * a * a)
    if name == "softplus":
        return np.logaddexp(0, a), 1 / (1 + np.exp(-a))
    if name == "tanh":
        t = np.tanh(a)
        return t, 1 - t * t
    s = 1 / (1 + np.exp(-a))  # sigmoid
    return s, s * (1 - s)


def numpy_network(widths, act, p, theta, x):
    """E(x) and dE/dx in float64, with magnitudes that bound float32's rounding of each: those of
    tests/energy/mlp_reference.hpp (every weight, input and activation by its absolute value, an
    activation's own rounding counted as 1 + |a|, a slope's error through |a| and its input's
    magnitude). A sum of n terms is off by at most n u times its absolute sum, and those errors pass
    through the layers as the magnitudes do: `bound(widths)` times them bounds ember's error."""
    ls, i = [], 0
    for a, b in zip(widths, widths[1:]):
        W = theta[i:i + a * b].reshape(b, a).astype(np.float64)
        i += a * b
        ls.append((W, theta[i:i + b].astype(np.float64)))
        i += b
    assert i == len(theta)
    p = p if p is not None else (0.01 if act == "leaky_relu" else 1.0)
    h, hm, slopes, smags = x.astype(np.float64), np.abs(x.astype(np.float64)), [], []
    for W, b in ls[:-1]:
        a, am = h @ W.T + b, hm @ np.abs(W).T + np.abs(b)
        out, d = _act(act, a, p)
        h, hm = out, np.abs(d) * am + 1 + np.abs(a) + np.abs(out)
        slopes.append(d)
        smags.append(np.abs(d) + 1 + np.abs(a) + am)
    W, b = ls[-1]
    e, emag = (h @ W.T + b)[:, 0], (hm @ np.abs(W).T + np.abs(b))[:, 0]
    g, gmag = np.repeat(W, len(x), axis=0), np.repeat(np.abs(W), len(x), axis=0)  # dE/dh_L
    for (W, _), d, sm in zip(reversed(ls[:-1]), reversed(slopes), reversed(smags)):
        g, gmag = (g * d) @ W, (gmag * sm) @ np.abs(W)
    return e, g, emag, gmag


def bound(widths):
    """The relative bound on float32's rounding for a network of these widths (mlp_test.cpp's):
    (sum of widths + 16) u, u = 2^-24."""
    return (sum(widths) + 16) * EPS32 / 2


@pytest.mark.parametrize("width,hidden,act,p", [
    (1, (5,), "relu", None),
    (2, (128, 128), "silu", None),
    (2, (12, 12), "softplus", None),
    (2, (64,), "gelu_tanh", None),
    (3, (16, 8), "tanh", None),
    (4, (32, 32, 32), "leaky_relu", 0.2),
    (8, (9,), "elu", 0.5),
    (16, (20, 7), "gelu", None),
    (32, (10,), "sigmoid", None),
    (784, (16, 16), "silu", None),
    (2, (11, 10, 7), "relu", None),
    (4, (6, 14), "elu", None),
])
def test_any_shape_and_activation_match_numpy(width, hidden, act, p):
    widths = [width, *hidden, 1]
    n = sum(a * b + b for a, b in zip(widths, widths[1:]))
    theta = (0.4 * np.random.default_rng(width).standard_normal(n)).astype(np.float32)
    lv = ember.nn.Langevin(((width, hidden, act) + ((p,) if p is not None else ()), theta), step_size=0.01)
    assert lv._impl.hidden == list(hidden) and lv._impl.activation == act and lv._impl.parameter_count == n
    x = np.random.default_rng(width + 1).uniform(-3, 3, size=(40, width)).astype(np.float32)
    e, g = lv.energy(x)
    ref, gref, emag, gmag = numpy_network(widths, act, p, theta, x)
    assert np.all(np.abs(e - ref) <= bound(widths) * emag)
    assert np.all(np.abs(g - gref) <= bound(widths) * gmag)
    y = lv(x, 3)
    assert y.shape == x.shape and np.isfinite(y).all()


def test_torch_modules_of_other_shapes():
    torch = pytest.importorskip("torch")
    torch.manual_seed(1)
    for act, name, p in [(torch.nn.ReLU(), "relu", None), (torch.nn.LeakyReLU(0.1), "leaky_relu", 0.1),
                         (torch.nn.ELU(alpha=0.7), "elu", 0.7), (torch.nn.GELU(approximate="tanh"), "gelu_tanh", None),
                         (torch.nn.Softplus(), "softplus", None), (torch.nn.Sigmoid(), "sigmoid", None),
                         (torch.nn.GELU(), "gelu", None), (torch.nn.Tanh(), "tanh", None), (torch.nn.SiLU(), "silu", None)]:
        net = torch.nn.Sequential(torch.nn.Linear(3, 24), act, torch.nn.Linear(24, 10), act, torch.nn.Linear(10, 1))
        lv = ember.nn.Langevin(net, step_size=0.01)
        assert lv._impl.activation == name and lv._impl.hidden == [24, 10]
        x = torch.rand(16, 3) * 4 - 2
        e, g = lv.energy(x)
        theta = torch.cat([q.detach().reshape(-1) for q in net.parameters()]).numpy()
        ref, gref, emag, gmag = numpy_network([3, 24, 10, 1], name, p, theta, x.numpy())
        assert np.all(np.abs(e - ref) <= bound([3, 24, 10, 1]) * emag), name
        assert np.all(np.abs(g - gref) <= bound([3, 24, 10, 1]) * gmag), name
        with torch.no_grad():
            torch_e = net(x)[:, 0].numpy()
        assert np.all(np.abs(e - torch_e) <= 2 * bound([3, 24, 10, 1]) * emag), name  # torch within the bound too
    with pytest.raises(ValueError, match="Mish is not one of ember.nn's"):
        ember.nn.Langevin(torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.Mish(), torch.nn.Linear(8, 1)), step_size=0.01)
    with pytest.raises(ValueError, match="one kind of activation"):
        ember.nn.Langevin(torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.ReLU(), torch.nn.Linear(8, 8), torch.nn.Tanh(),
                                              torch.nn.Linear(8, 1)), step_size=0.01)
    for sp in (torch.nn.Softplus(beta=2), torch.nn.Softplus(threshold=5)):
        with pytest.raises(ValueError, match="Softplus with its defaults only"):
            ember.nn.Langevin(torch.nn.Sequential(torch.nn.Linear(2, 8), sp, torch.nn.Linear(8, 1)), step_size=0.01)


def test_other_input_widths_compile_once():
    # An input width outside the fixed set is compiled on first use (one unit, into the cache) and
    # is then the same network as the fixed set's: energies and gradients within float32's bound
    # of NumPy's, and a torch module of that width is read as any other.
    assert 5 not in ember.nn.INPUT_WIDTHS
    widths = [5, 12, 7, 1]
    n = sum(a * b + b for a, b in zip(widths, widths[1:]))
    theta = (0.4 * np.random.default_rng(5).standard_normal(n)).astype(np.float32)
    lv = ember.nn.Langevin(((5, (12, 7), "tanh"), theta), step_size=0.01)
    assert lv._impl.input_width == 5 and lv._impl.hidden == [12, 7] and lv._impl.parameter_count == n
    x = np.random.default_rng(6).uniform(-3, 3, size=(40, 5)).astype(np.float32)
    e, g = lv.energy(x)
    ref, gref, emag, gmag = numpy_network(widths, "tanh", None, theta, x)
    assert np.all(np.abs(e - ref) <= bound(widths) * emag)
    assert np.all(np.abs(g - gref) <= bound(widths) * gmag)
    y = lv(x, 3)
    assert y.shape == x.shape and np.isfinite(y).all()
    # The same seed and calls give the same draws from a second object of the compiled class.
    again = ember.nn.Langevin(((5, (12, 7), "tanh"), theta), step_size=0.01)
    assert type(again._impl) is type(lv._impl)
    assert np.array_equal(again(x, 3), y)
    torch = pytest.importorskip("torch")
    net = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    t = ember.nn.Langevin(net, step_size=0.01)
    assert type(t._impl) is type(lv._impl) and t._impl.activation == "relu"
    xt = torch.rand(16, 5)
    e, _ = t.energy(xt)
    theta_t = torch.cat([q.detach().reshape(-1) for q in net.parameters()]).numpy()
    _, _, emag, _ = numpy_network([5, 8, 1], "relu", None, theta_t, xt.numpy())
    with torch.no_grad():
        torch_e = net(xt)[:, 0].numpy()
    assert np.all(np.abs(e - torch_e) <= 2 * bound([5, 8, 1]) * emag)


def test_another_width_without_a_compiler_says_so(tmp_path, monkeypatch):
    # Outside the fixed set and not in the cache, with no compiler: one sentence that names the
    # fixed set and why compiling failed.
    monkeypatch.setenv("EMBER_CACHE", str(tmp_path))
    monkeypatch.setenv("CXX", "/nonexistent/c++")
    with pytest.raises(RuntimeError, match=r"input width 9 is not compiled into ember.nn \(it has: 1, 2, 3, 4, 8.*compiling "
                                           r"it failed: ember.compile needs a C\+\+20 compiler"):
        ember.nn.Langevin(((9, (8,), "silu"), np.zeros(9 * 8 + 8 + 8 + 1, np.float32)), step_size=0.01)
