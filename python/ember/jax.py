"""ember's energies as JAX functions: `ember.jax.energy_fn(energy)` is U(x) for jit, vmap and grad,
computed by ember's C++ through an XLA FFI call (jax.ffi), so that BlackJAX, NumPyro's kernels or
your own JAX code use ember's gradient of a built-in or compiled model (docs/python.md).

    U = ember.jax.energy_fn(ember.targets.eight_schools())
    logdensity = lambda x: -U(x)                   # what BlackJAX takes
    jax.jit(jax.vmap(jax.grad(logdensity)))(xs)    # ember's gradient at each row of xs

x has shape (..., dim): the last axis is the point, any leading axes are rows (vmap adds one). U
returns one value per row. float64 points are computed in double; float32 points (JAX's default
without `jax_enable_x64`) are converted to double and U and ∇U back to float32. First derivatives
only (U's JVP is ∇U · t; a second derivative is refused by JAX). The XLA handler is compiled once
per compiler, machine and jaxlib into ember.compile's cache (a few seconds) the first time it is
needed. An energy given to energy_fn stays in memory until the process ends (compiled executables
hold its address). CPU only; an exception in the energy (a model's check) is raised by JAX as an
XlaRuntimeError with its message.
"""
import ctypes
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

__all__ = ["energy_fn"]

# The XLA FFI handler: reads the rows of x, calls the energy's `detail::energy_rows_for_ffi`
# (python.hpp; it returns an exception's message instead of throwing) through the two addresses
# given as attributes, writes U and ∇U. It includes no ember header, so one build serves every
# module's energies.
_HANDLER_SOURCE = r"""
#include <cstdint>
#include <vector>
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;
using rows_fn = char const* (*)(void const*, double const*, std::int64_t, double*, double*);

template <ffi::DataType T>
static ffi::Error ember_rows(ffi::Buffer<T> x, ffi::ResultBuffer<T> u, ffi::ResultBuffer<T> g, std::int64_t energy,
                             std::int64_t fn, std::int64_t dim) {
  std::int64_t const count = std::int64_t(x.element_count());
  if (dim < 1 || count % dim != 0) return ffi::Error::InvalidArgument("ember.jax: the points' last axis is not the energy's dimension");
  std::int64_t const n = count / dim;
  auto const f = reinterpret_cast<rows_fn>(static_cast<std::uintptr_t>(fn));
  void const* e = reinterpret_cast<void const*>(static_cast<std::uintptr_t>(energy));
  if constexpr (T == ffi::DataType::F64) {
    if (char const* error = f(e, x.typed_data(), n, u->typed_data(), g->typed_data())) return ffi::Error::Internal(error);
  } else {
    std::vector<double> xd(x.typed_data(), x.typed_data() + count), ud(static_cast<std::size_t>(n)), gd(static_cast<std::size_t>(count));
    if (char const* error = f(e, xd.data(), n, ud.data(), gd.data())) return ffi::Error::Internal(error);
    for (std::int64_t i = 0; i < n; ++i) u->typed_data()[i] = static_cast<float>(ud[static_cast<std::size_t>(i)]);
    for (std::int64_t i = 0; i < count; ++i) g->typed_data()[i] = static_cast<float>(gd[static_cast<std::size_t>(i)]);
  }
  return ffi::Error::Success();
}

#define EMBER_ROWS_HANDLER(name, T)                                                                            \
  XLA_FFI_DEFINE_HANDLER_SYMBOL(name, ember_rows<T>,                                                           \
                                ffi::Ffi::Bind()                                                               \
                                    .Arg<ffi::Buffer<T>>()                                                     \
                                    .Ret<ffi::Buffer<T>>()                                                     \
                                    .Ret<ffi::Buffer<T>>()                                                     \
                                    .Attr<std::int64_t>("energy")                                              \
                                    .Attr<std::int64_t>("fn")                                                  \
                                    .Attr<std::int64_t>("dim"));
extern "C" {
EMBER_ROWS_HANDLER(ember_rows_f64, ffi::DataType::F64)
EMBER_ROWS_HANDLER(ember_rows_f32, ffi::DataType::F32)
}
"""

_TARGETS = {"float64": "ember_rows_f64", "float32": "ember_rows_f32"}
_registered = False
# Every energy handed to energy_fn, kept for the life of the process: its address is baked into
# the traced calls and into every executable jit compiles from them, which JAX may run
# asynchronously after the last Python reference to U or to the energy is gone.
_alive = {}


def _handler_library():
    """The handler's shared library: built once into the cache (keyed by the source, the compiler
    and jaxlib's version) and loaded."""
    import jax
    import jax.ffi

    from ._compile import _cache_root, _compiler

    import jaxlib

    from ._compile import _target_machine

    try:
        cxx, compiler_line = _compiler()
    except RuntimeError as e:
        raise RuntimeError("ember.jax builds its XLA handler once and needs a C++ compiler for it: " + str(e)) from None
    key = hashlib.sha256("\n".join([_HANDLER_SOURCE, compiler_line, _target_machine(cxx), jax.__version__,
                                    getattr(jaxlib, "__version__", "")]).encode()).hexdigest()[:20]
    cache = os.path.join(_cache_root(), "models")
    os.makedirs(cache, exist_ok=True)
    so = os.path.join(cache, f"ember_jax_ffi_{key}.so")
    if not os.path.exists(so):
        work = tempfile.mkdtemp(prefix="ember_jax_ffi_", dir=cache)
        try:
            src, out = os.path.join(work, "handler.cpp"), os.path.join(work, "handler.so")
            with open(src, "w") as fh:
                fh.write(_HANDLER_SOURCE)
            cmd = [cxx, "-std=c++17", "-O2", "-shared", "-fPIC", "-w", f"-I{jax.ffi.include_dir()}", src, "-o", out]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError("ember.jax could not build its XLA handler:\n" + r.stderr[-4000:])
            os.replace(out, so)  # atomic: another process sees the whole library or none
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return ctypes.cdll.LoadLibrary(so)


def _register():
    global _registered
    if _registered:
        return
    import jax.ffi

    lib = _handler_library()
    for name in _TARGETS.values():
        jax.ffi.register_ffi_target(name, jax.ffi.pycapsule(getattr(lib, name)), platform="cpu")
    _registered = True


def energy_fn(energy):
    """U(x) of an `ember.Energy` (a built-in target, a GLM, a compiled model) as a JAX function:
    jit, vmap and first derivatives work; ∇U is ember's own gradient (analytic or reverse mode)."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        raise ImportError("ember.jax needs JAX (pip install jax)") from None
    from ._api import Energy

    if not isinstance(energy, Energy):
        raise TypeError(f"ember.jax.energy_fn takes an ember.Energy (a target, a GLM or a compiled model), got {type(energy).__name__}")
    entry = energy._impl._rows_entry
    if entry is None:
        raise ValueError(f"{energy.name} has no gradient: ember.jax needs one")
    _register()
    _alive[entry] = energy
    address, fn = (np.int64(v) for v in entry)
    dim = energy.dim

    def both(x):
        x = jnp.asarray(x)
        if x.dtype not in (jnp.float32, jnp.float64):
            x = x.astype(jnp.result_type(float))
        if x.ndim < 1 or x.shape[-1] != dim:
            raise ValueError(f"ember.jax: {energy.name} takes points of shape (..., {dim}), got {x.shape}")
        out = (jax.ShapeDtypeStruct(x.shape[:-1], x.dtype), jax.ShapeDtypeStruct(x.shape, x.dtype))
        call = jax.ffi.ffi_call(_TARGETS[str(x.dtype)], out, vmap_method="broadcast_all")
        return call(x, energy=address, fn=fn, dim=np.int64(dim))

    @jax.custom_jvp
    def U(x):
        return both(x)[0]

    @U.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        u, g = both(x)
        if getattr(t, "dtype", None) == jax.dtypes.float0:  # integer points: no tangent
            return u, jnp.zeros_like(u)
        return u, jnp.sum(g * jnp.asarray(t, g.dtype), axis=-1)

    U.energy = energy
    return U
