"""What ember.jax's XLA call costs: a jitted gradient of ember's energy through `ember.jax.energy_fn`
against the same gradient written in JAX, in the same process, for one point and for rows under
vmap. The target is the 100-d standard normal (U = |x|²/2), whose gradient JAX computes with one
multiply, so the difference is the FFI call's own cost; and eight schools (ember's analytic
gradient) for the rows through the FFI. Prints one JSON line.
Run from ember's build: PYTHONPATH=build/python tools/.venv/bin/python bench/python/jax_energy.py"""
import json
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

import ember  # noqa: E402
import ember.jax  # noqa: E402


def per_call_us(f, x, reps=2000, rounds=5):
    f(x).block_until_ready()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(reps):
            f(x).block_until_ready()
        times.append((time.perf_counter() - t0) / reps)
    return 1e6 * statistics.median(times)


def main():
    t0 = time.perf_counter()
    normal = ember.targets.standard_normal()
    U = ember.jax.energy_fn(normal)
    setup_s = time.perf_counter() - t0
    native = jax.grad(lambda x: 0.5 * jnp.sum(x * x))
    rng = np.random.default_rng(0)
    out = {"machine_cores": len(__import__("os").sched_getaffinity(0)), "jax": jax.__version__,
           "first_energy_fn_s": setup_s}
    for rows in (1, 128):
        x = rng.standard_normal((rows, normal.dim)) if rows > 1 else rng.standard_normal(normal.dim)
        ffi = jax.jit(jax.grad(U) if rows == 1 else jax.vmap(jax.grad(U)))
        nat = jax.jit(native if rows == 1 else jax.vmap(native))
        assert np.allclose(np.asarray(ffi(x)), np.asarray(nat(x)), rtol=1e-15, atol=0)
        out[f"standard_normal_rows{rows}_ember_us"] = per_call_us(ffi, x)
        out[f"standard_normal_rows{rows}_jax_us"] = per_call_us(nat, x)
        out[f"standard_normal_rows{rows}_ratio"] = out[f"standard_normal_rows{rows}_ember_us"] / out[f"standard_normal_rows{rows}_jax_us"]
    schools = ember.targets.eight_schools()
    V = ember.jax.energy_fn(schools)
    xs = rng.standard_normal((128, schools.dim))
    out["eight_schools_rows128_ember_us"] = per_call_us(jax.jit(jax.vmap(jax.grad(V))), xs)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
