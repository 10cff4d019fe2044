"""Peer 'torch-compile': torch_eager's ULA under torch.compile (GPU cases P1, P7).

The gradient is torch_eager.make_grad's (addmm with the dense precision,
float32).  A block of K ULA steps (--block, default 20, lowered to a divisor
of the step count) is one compiled function,
    x <- x - eta grad(x) + sqrt(2 eta) randn_like(x)   (K times, unrolled),
compiled with torch.compile(mode="reduce-overhead") on cuda (inductor: one
cuBLAS mm and one fused Triton kernel, Philox noise included, per step; the
block replayed as a CUDA graph) and the default mode on the CPU.
dynamic=True: one compilation serves every chain count (each new count is a
new CUDA-graph recording).  The compilation is done and timed first, on 8
chains ("compile_trial_seconds"); if inductor fails on cuda, the block falls
back to torch.compile(backend="cudagraphs") (said in "backend").  The noise
comes from torch's global generator (torch.manual_seed), not from a
torch.Generator as in torch_eager.  Each block's output is cloned out of the
CUDA-graph pool before the next block.  compile_seconds = first run at a
count (CUDA-graph recording at that count) minus the median of the timed
runs.  Every timed run ends with torch.cuda.synchronize().
Usage: EMBER_TORCH_DEVICE=cuda python bench/peers/torch_compile.py [--case P1,P7] [--quick]
(options of bench/peers/gpu_sweep.py).
"""

from __future__ import annotations

import math
import sys
import time
import traceback

import common  # sets threads/affinity; import before torch
import gpu_sweep

import torch

import torch_eager
from torch_eager import DEV, F32, _done, make_grad

IMPL = "torch-compile"
MODE = "reduce-overhead" if DEV.type == "cuda" else "default"


def _extra(ap):
    ap.add_argument("--block", type=int, default=20,
                    help="ULA steps per compiled call (default 20; a divisor of the steps)")


_compiled: dict = {}


def _block_fn(k: int, eta: float):
    """(compiled K-step block, fields for the JSON line), one per (K, eta).

    Compiled and tried at once on 8 chains (3 calls: compile + CUDA-graph
    warm-up, recording, replay); that time is "compile_trial_seconds".  If
    inductor fails on cuda (e.g. no C compiler for Triton's launcher), the
    fallback is torch.compile(backend="cudagraphs") (dynamo + CUDA graphs of
    the eager kernels, no inductor), said in "backend"."""
    key = (k, eta)
    if key in _compiled:
        fn, fields = _compiled[key]
        if isinstance(fn, BaseException):
            raise fn
        return fn, fields
    grad = make_grad({"target": "gaussian", "dim": gpu_sweep.DIM, "params": {}})
    s = math.sqrt(2.0 * eta)

    def block(x):
        for _ in range(k):
            x = x - eta * grad(x) + s * torch.randn_like(x)
        return x

    tries = [("inductor", dict(mode=MODE, dynamic=True))]
    if DEV.type == "cuda":
        tries.append(("cudagraphs", dict(backend="cudagraphs", dynamic=False)))
    failed = []
    for name, kw in tries:
        try:
            fn = torch.compile(block, fullgraph=True, **kw)
            t0 = time.perf_counter()
            with torch.no_grad():
                x = torch.randn((8, gpu_sweep.DIM), dtype=F32, device=DEV)
                for _ in range(3):
                    x = fn(x).clone()
                _done(x)
            fields = {"backend": name if name == "cudagraphs" else f"inductor, mode={MODE!r}",
                      "compile_trial_seconds": common._sig(time.perf_counter() - t0)}
            if failed:
                fields["backend_failures"] = failed
            _compiled[key] = (fn, fields)
            return fn, fields
        except Exception as exc:      # try the next backend
            traceback.print_exc(file=sys.stderr)
            failed.append(f"{name}: {gpu_sweep._short(exc, 200)}")
            torch._dynamo.reset()
    err = RuntimeError("torch.compile failed: " + " | ".join(failed))
    _compiled[key] = (err, None)
    raise err


def run_ula(cfg, args):
    eta, steps = cfg["params"]["eta"], cfg["steps"]
    k = gpu_sweep.steps_per_block(steps, args.block)
    blk, fields = _block_fn(k, eta)
    nblocks = steps // k

    def prepare(i):
        torch.manual_seed(args.seed + i)
        x0 = torch.randn((cfg["chains"], cfg["dim"]), dtype=F32, device=DEV)
        return _done(x0)

    def run(x):
        for _ in range(nblocks):
            x = blk(x).clone()        # out of the CUDA-graph pool: the next call reuses it
        return _done(x)

    with torch.no_grad():
        t, _ = gpu_sweep.measure(run, prepare, cfg)
    fields = {"steps_per_compiled_call": k, **fields}
    try:
        from torch._dynamo.utils import counters
        if DEV.type == "cuda":        # > 0: inductor did not use CUDA graphs somewhere
            fields["cudagraph_skips"] = int(counters["inductor"].get("cudagraph_skips", 0))
    except Exception:
        pass
    out = common.Outcome(t, t.result.cpu().numpy(), compile_reported=True,
                         note=f"torch.compile ({fields['backend']}) of {k} ULA steps per call "
                              "(torch_eager's addmm gradient, randn_like noise); the compilation "
                              "is timed apart on 8 chains (compile_trial_seconds); compile_seconds "
                              "= first run at this count (CUDA-graph recording) minus median")
    out.fields = fields
    return out


if __name__ == "__main__":
    sys.exit(gpu_sweep.main(IMPL, __doc__, run_ula,
                            lambda: f"torch {torch.__version__} on {torch_eager.device_name()}",
                            torch_eager.device_name, torch_eager.cleanup, extra_args=_extra))
