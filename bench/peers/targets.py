"""ember's reference targets for the Python peers, built from the JSON files that
build/bench/ember_export_targets writes (bench/export_targets.cpp).

Each target gives: the log-density of the *sampled* coordinates (JAX, one chain,
x of shape (dim,)), the map to the *reported* coordinates (NumPy, draws of shape
(..., dim)) and ember's reference moments of the reported coordinates. `load`
checks the log-density, its gradient and the reported map against ember's own
values at the exported check points and raises TargetMismatch when they differ.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

TARGET_NAMES = ("standard_normal", "ill_conditioned_gaussian", "rotated_gaussian", "neal_funnel",
                "neal_funnel_noncentred", "banana", "rosenbrock_pairs", "two_mode_mixture",
                "eight_schools", "breast_cancer_logistic")


class TargetMismatch(RuntimeError):
    """A peer's log-density disagrees with ember's energy at a check point."""


@dataclass
class Target:
    name: str
    dim: int
    logdensity: Callable          # jnp (dim,) -> scalar, sampled coordinates
    reported: Callable            # np (..., dim) float64 -> (..., dim) float64
    ref_mean: np.ndarray
    ref_second: np.ndarray
    ref_mean_se: np.ndarray
    ref_second_se: np.ndarray
    spec: dict


def _breast_cancer_design(params: dict) -> tuple[np.ndarray, np.ndarray]:
    rows = [ln for ln in Path(params["csv"]).read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    if rows and any(ch.isalpha() for ch in rows[0].replace("e", "").replace("E", "")):
        rows = rows[1:]  # the header line of names
    raw = np.array([[float(v) for v in ln.split(",")] for ln in rows])
    if raw.shape != (569, 31):
        raise TargetMismatch(f"breast_cancer_logistic: {params['csv']} is {raw.shape}, expected (569, 31)")
    feats = raw[:, :30]
    mean = feats.mean(0)
    sd = feats.std(0, ddof=1)
    for what, mine, ember in (("mean", mean, params["feature_mean"]), ("sd", sd, params["feature_sd"])):
        if not np.allclose(mine, ember, rtol=1e-9, atol=1e-12):
            raise TargetMismatch(f"breast_cancer_logistic: feature {what}s differ from ember's standardisation")
    x = np.hstack([np.ones((569, 1)), (feats - mean) / sd])
    return x, raw[:, 30]


def _build(spec: dict, dtype) -> tuple[Callable, Callable]:
    """(logdensity, reported) of one target from its exported parameters."""
    import jax.numpy as jnp
    from jax.nn import softplus
    from jax.scipy.special import logsumexp

    name, p, d = spec["target"], spec["params"], spec["dim"]
    c = lambda a: jnp.asarray(np.asarray(a, dtype=np.float64), dtype=dtype)
    identity = lambda x: x

    if name == "standard_normal":
        return (lambda x: -0.5 * jnp.sum(x * x)), identity
    if name == "ill_conditioned_gaussian":
        inv_var = c(1.0 / np.asarray(p["variances"]))
        return (lambda x: -0.5 * jnp.sum(inv_var * x * x)), identity
    if name == "rotated_gaussian":
        prec = c(np.linalg.inv(np.asarray(p["covariance"])))
        return (lambda x: -0.5 * x @ (prec @ x)), identity
    if name in ("neal_funnel", "neal_funnel_noncentred"):
        s2 = float(p["v_sd"]) ** 2
        n = d - 1
        if name == "neal_funnel":
            def logdensity(x):
                v = x[0]
                return -(v * v / (2 * s2) + 0.5 * n * v + 0.5 * jnp.exp(-v) * jnp.sum(x[1:] ** 2))
            return logdensity, identity

        def reported(z):
            v = float(p["v_sd"]) * z[..., :1]
            return np.concatenate([v, np.exp(v / 2) * z[..., 1:]], axis=-1)
        return (lambda z: -0.5 * jnp.sum(z * z)), reported
    if name == "banana":
        b, v1 = float(p["b"]), float(p["x1_variance"])

        def logdensity(x):
            r = x[1] + b * (x[0] * x[0] - v1)
            return -(x[0] * x[0] / (2 * v1) + 0.5 * r * r)
        return logdensity, identity
    if name == "rosenbrock_pairs":
        a, b = float(p["a"]), float(p["b"])

        def logdensity(x):
            x1, x2 = x[0::2], x[1::2]
            return -jnp.sum(a * (x1 - 1) ** 2 + b * (x2 - x1 * x1) ** 2)
        return logdensity, identity
    if name == "two_mode_mixture":
        w = np.asarray(p["weights"], dtype=np.float64)
        sig = np.asarray(p["sigmas"], dtype=np.float64)
        means = c(p["means"])
        logw = c(np.log(w / w.sum()) - d * np.log(sig))
        inv_var = c(1.0 / sig ** 2)

        def logdensity(x):
            q = jnp.sum((x[None, :] - means) ** 2, axis=1)
            return logsumexp(logw - 0.5 * inv_var * q)
        return logdensity, identity
    if name == "eight_schools":
        y, inv_var = c(p["y"]), c(1.0 / np.asarray(p["sigma"]) ** 2)
        mu_var, tau_scale2 = float(p["mu_sd"]) ** 2, float(p["tau_cauchy_scale"]) ** 2

        def logdensity(x):
            mu, s, th = x[0], x[1], x[2:]
            tau = jnp.exp(s)
            r = mu + tau * th - y
            u = (mu * mu / (2 * mu_var) + jnp.log1p(tau * tau / tau_scale2) - s
                 + 0.5 * jnp.sum(th * th) + 0.5 * jnp.sum(inv_var * r * r))
            return -u

        def reported(x):
            tau = np.exp(x[..., 1:2])
            return np.concatenate([x[..., :1], tau, x[..., :1] + tau * x[..., 2:]], axis=-1)
        return logdensity, reported
    if name == "breast_cancer_logistic":
        xm, yv = _breast_cancer_design(p)
        X, y = c(xm), c(yv)
        prior_prec = 1.0 / float(p["prior_sd"]) ** 2

        def logdensity(beta):
            eta = X @ beta
            return -(jnp.sum(softplus(eta) - y * eta) + 0.5 * prior_prec * jnp.sum(beta * beta))
        return logdensity, identity
    raise TargetMismatch(f"no peer log-density for target {name!r}; add one to bench/peers/targets.py")


def _check(spec: dict) -> None:
    """U differences, ∇U and reported(x) at ember's check points, all in float64 (ember's values
    are double): a wrong constant or term is off by far more than the 1e-8 relative tolerance."""
    import jax
    import jax.numpy as jnp

    with jax.enable_x64(True):
        logdensity, reported = _build(spec, jnp.float64)
        vg = jax.jit(jax.value_and_grad(logdensity))
        tol = 1e-8
        name = spec["target"]
        u0 = e0 = None
        for k, pt in enumerate(spec["checks"]):
            x = np.asarray(pt["x"])
            lp, g = vg(jnp.asarray(x, dtype=jnp.float64))
            u, g = -float(lp), -np.asarray(g, dtype=np.float64)
            if u0 is None:
                u0, e0 = u, pt["U"]
            else:  # energies may differ by a constant: compare U(x_k) − U(x_0)
                du, de = u - u0, pt["U"] - e0
                if abs(du - de) > tol * max(1.0, abs(pt["U"]), abs(e0)):
                    raise TargetMismatch(f"{name}: U(x{k}) - U(x0) is {du:.12g} here, {de:.12g} in ember")
            ge = np.asarray(pt["grad"])
            err = np.abs(g - ge)
            if not np.all(err <= tol * np.maximum(1.0, np.abs(ge))):
                raise TargetMismatch(f"{name}: gradient at check point {k} differs from ember's by {np.max(err):.3g}")
            rep = reported(x[None, :])[0]
            if not np.allclose(rep, pt["reported"], rtol=1e-9, atol=1e-12):
                raise TargetMismatch(f"{name}: reported(x{k}) differs from ember's")


def load(directory: str | Path, name: str, dtype) -> Target:
    path = Path(directory) / f"{name}.json"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: run build/bench/ember_export_targets {directory} first")
    spec = json.loads(path.read_text())
    _check(spec)
    logdensity, reported = _build(spec, dtype)
    ref = spec["reference"]
    arr = lambda k: np.asarray(ref[k], dtype=np.float64)
    return Target(name, spec["dim"], logdensity, reported, arr("mean"), arr("second"),
                  arr("mean_se"), arr("second_se"), spec)
