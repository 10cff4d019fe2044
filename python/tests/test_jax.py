"""ember.jax: ember's energies as JAX functions through an XLA FFI call (jit, vmap, grad)."""
import jax  # scripts/install_deps.sh puts it in tools/.venv: these tests run, never skip
import jax.numpy as jnp
import numpy as np
import pytest

import ember
import ember.jax

jax.config.update("jax_enable_x64", True)


def test_values_and_gradients_are_embers():
    # The handler calls the energy's own arithmetic: U and ∇U equal `energy(x)`'s bit for bit, one
    # point, rows, vmap, jit, and the gradient of −U (BlackJAX's log density).
    posterior = ember.targets.eight_schools()
    U = ember.jax.energy_fn(posterior)
    logdensity = lambda x: -U(x)  # noqa: E731
    xs = np.random.default_rng(0).standard_normal((7, posterior.dim))
    grads = jax.jit(jax.vmap(jax.grad(logdensity)))(xs)
    u, g = posterior.energy(xs)
    assert np.array_equal(np.asarray(grads), -g)
    assert np.array_equal(np.asarray(U(xs)), u)  # rows as leading axes
    assert np.array_equal(np.asarray(jax.vmap(U)(xs)), u)
    assert np.array_equal(np.asarray(jax.jit(U)(xs[3])), u[3]) and U(xs[3]).shape == ()
    assert np.array_equal(np.asarray(jax.grad(U)(xs[3])), g[3])
    # vmap of vmap: the handler takes any leading axes as rows.
    grid = xs[:6].reshape(2, 3, posterior.dim)
    assert np.array_equal(np.asarray(jax.vmap(jax.vmap(U))(grid)), u[:6].reshape(2, 3))
    # A JVP is ∇U · t.
    t = np.random.default_rng(1).standard_normal(posterior.dim)
    _, tangent = jax.jvp(U, (xs[0],), (t,))
    # The same products summed in another order: within dim · 2⁻⁵² · Σ|gᵢtᵢ|.
    assert abs(float(tangent) - float(g[0] @ t)) <= posterior.dim * 2.0**-52 * float(np.abs(g[0] * t).sum())


def test_against_jax_own_gradient():
    # A target whose energy JAX can write: the standard normal, U(x) = |x|²/2, ∇U = x.
    target = ember.targets.standard_normal()
    U = ember.jax.energy_fn(target)
    x = np.random.default_rng(2).standard_normal((4, target.dim))
    reference = jax.vmap(jax.grad(lambda z: 0.5 * jnp.sum(z * z)))(x)
    assert np.array_equal(np.asarray(jax.vmap(jax.grad(U))(x)), np.asarray(reference))  # both x exactly
    # float32 points: computed in double, U and ∇U returned in float32.
    x32 = x.astype(np.float32)
    g32 = jax.vmap(jax.grad(U))(x32)
    assert g32.dtype == jnp.float32
    assert np.array_equal(np.asarray(g32), x32)
    u64, _ = target.energy(x32.astype(np.float64))
    assert np.array_equal(np.asarray(U(x32)), u64.astype(np.float32))


def test_a_jax_sampler_loop_runs_on_embers_gradient():
    # A leapfrog trajectory written in JAX, jitted and vmapped over 4 chains, conserves the
    # standard normal's Hamiltonian to the order of ε² (what any JAX sampler needs of ∇U).
    target = ember.targets.standard_normal()
    U = ember.jax.energy_fn(target)
    grad = jax.grad(U)

    def leapfrog(x, p, eps=0.05, steps=40):
        def body(_, s):
            x, p = s
            p = p - 0.5 * eps * grad(x)
            x = x + eps * p
            return x, p - 0.5 * eps * grad(x)

        return jax.lax.fori_loop(0, steps, body, (x, p))

    rng = np.random.default_rng(3)
    x0, p0 = rng.standard_normal((4, target.dim)), rng.standard_normal((4, target.dim))
    x1, p1 = jax.jit(jax.vmap(leapfrog))(x0, p0)
    h0 = np.asarray(U(x0)) + 0.5 * np.sum(p0 * p0, axis=1)
    h1 = np.asarray(U(x1)) + 0.5 * np.sum(np.asarray(p1) ** 2, axis=1)
    # Leapfrog on the standard normal conserves H̃ = |p|²/2 + (1 − ε²/4)|x|²/2 exactly, so
    # H − H̃ = ε²|x|²/8 and |ΔH| ≤ ε²/8 · max |x|² ≤ ε²/4 · H₀ / (1 − ε²/4).
    eps = 0.05
    assert np.all(np.abs(h1 - h0) <= eps**2 / 4 * h0 / (1 - eps**2 / 4) * (1 + 1e-9))
    assert not np.allclose(np.asarray(x1), x0)


def test_refusals():
    U = ember.jax.energy_fn(ember.targets.eight_schools())
    with pytest.raises(ValueError, match=r"shape \(\.\.\., 10\)"):
        U(np.zeros(3))
    with pytest.raises(TypeError, match="takes an ember.Energy"):
        ember.jax.energy_fn(lambda x: x)


def test_compiled_glm_against_jax_own_gradient():
    # A model compiled on demand (ember.glm.logistic: ember.compile under the hood) against the
    # same log density written in JAX: gradients equal to double's rounding.
    rng = np.random.default_rng(4)
    X = np.c_[np.ones(200), rng.standard_normal((200, 3))]
    y = (rng.random(200) < 0.5).astype(float)
    U = ember.jax.energy_fn(ember.glm.logistic(X, y))

    def reference(beta):  # −log p(β | X, y) with βⱼ ~ N(0, 2.5²), up to a constant
        eta = X @ beta
        return -jnp.sum(y * eta - jnp.logaddexp(0.0, eta)) + jnp.sum(beta**2) / (2 * 2.5**2)

    betas = rng.standard_normal((5, 4))
    g, g_ref = np.asarray(jax.vmap(jax.grad(U))(betas)), np.asarray(jax.vmap(jax.grad(reference))(betas))
    # Both sum 200 rows' terms x_ij (σ(η_i) − y_i), each at most |x_ij|, plus β_j/2.5²: each side's
    # rounding is at most 200 · 2⁻⁵² times the sum of the terms' magnitudes, twice that their difference.
    bound = 2 * 200 * 2.0**-52 * (np.abs(X).sum(axis=0) + np.abs(betas) / 2.5**2)
    assert np.all(np.abs(g - g_ref) <= bound)


def test_the_energy_outlives_every_reference():
    # energy_fn keeps the energy for the process: a jitted gradient of an energy whose every Python
    # reference is gone still computes it (its address is baked into the executable).
    import gc

    def make():
        return jax.jit(jax.vmap(jax.grad(ember.jax.energy_fn(ember.targets.eight_schools()))))

    f = make()
    gc.collect()
    xs = np.random.default_rng(5).standard_normal((3, 10))
    _, g = ember.targets.eight_schools().energy(xs)
    assert np.array_equal(np.asarray(f(xs).block_until_ready()), g)


PICKY = """
#include <stdexcept>
#include <type_traits>
struct picky {  // the standard normal in 2-d, refusing x0 > 100 (on the scalar path, as a model's check would)
  static constexpr int dim = 2;
  using value_type = double;
  template <class S>
  S value(ember::vec<S, 2> const& x) const {
    if constexpr (std::is_same_v<S, double>)
      if (x[0] > 100) throw std::domain_error("picky: x0 above 100");
    return 0.5 * (x[0] * x[0] + x[1] * x[1]);
  }
  template <class S>
  S value_and_grad(ember::vec<S, 2> const& x, ember::vec<S, 2>& g) const {
    g[0] = x[0];
    g[1] = x[1];
    return value(x);
  }
};
"""


def test_an_exception_in_the_energy_reaches_python():
    # Thrown inside the XLA call, it comes back as JAX's error with its message; the process and
    # the function live on.
    U = ember.jax.energy_fn(ember.compile(PICKY, samplers="mala", verbose=False)())
    assert float(U(np.array([3.0, 4.0]))) == 12.5
    with pytest.raises(Exception, match="picky: x0 above 100"):
        jax.block_until_ready(U(np.array([200.0, 0.0])))
    assert float(U(np.array([1.0, 1.0]))) == 1.0
