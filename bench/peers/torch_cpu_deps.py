"""Make a `pip install --no-deps torch` importable, installing as little as possible.

PyPI's Linux x86_64 torch wheel is the CUDA build: it declares ~3 GB of
nvidia-* / cuda-* / triton packages, and its libtorch_cuda.so is linked
against the CUDA libraries, so `import torch` fails without them even on a
machine without a GPU.  This benchmark only runs torch on the CPU, so
compare_cpu.sh installs torch with --no-deps and then this script adds only
the CUDA library wheels that the dynamic loader cannot satisfy otherwise
(machines of this project have a CUDA toolkit under /usr/local/cuda that
provides most of them; on a machine without one, all are installed).

It repeats: try `import torch` in a child process; on a failure, map the
missing library (ldd "not found", "cannot open shared object file", or the
prefix of an "undefined symbol" such as ncclCommResume) to its wheel and
`pip install --no-deps` that wheel pinned to the version torch declares.  If
the failure is not understood it falls back to a plain `pip install torch`
(all declared dependencies).  Run with the virtualenv's python.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

TORCH_VERSION = "2.15.0"

# wheel (pinned as torch==2.15.0 declares, via cuda-toolkit==13.2.2) -> sonames,
# symbol prefixes
WHEELS = {
    "nvidia-cuda-runtime==13.2.86": (("libcudart.so",), ("cuda",)),
    "nvidia-cublas==13.4.1.3": (("libcublas.so", "libcublasLt.so"), ("cublas",)),
    "nvidia-cudnn-cu13==9.26.0.51": (("libcudnn",), ("cudnn",)),
    "nvidia-cuda-nvrtc==13.2.86": (("libnvrtc",), ("nvrtc",)),
    "nvidia-cuda-cupti==13.2.86": (("libcupti.so",), ("cupti",)),
    "nvidia-cufft==12.2.0.57": (("libcufft.so",), ("cufft",)),
    "nvidia-cufile==1.17.1.22": (("libcufile",), ("cuFile",)),
    "nvidia-cusparse==12.7.10.12": (("libcusparse.so",), ("cusparse",)),
    "nvidia-cusparselt-cu13==0.8.1": (("libcusparseLt.so",), ("cusparseLt",)),
    "nvidia-cusolver==12.2.0.11": (("libcusolver",), ("cusolver",)),
    "nvidia-nvjitlink==13.5.37": (("libnvJitLink.so",), ("nvJitLink",)),
    "nvidia-nccl-cu13==2.30.7": (("libnccl.so",), ("nccl",)),
    "nvidia-nvshmem-cu13==3.7.2": (("libnvshmem",), ("nvshmem",)),
}

PROBE = "import torch; assert float(torch.ones(4).sum()) == 4.0; print(torch.__version__)"


def log(msg: str) -> None:
    print(f"[torch_cpu_deps] {msg}", file=sys.stderr, flush=True)


def wheel_for_soname(name: str) -> str | None:
    best = None
    for wheel, (sonames, _) in WHEELS.items():
        for s in sonames:
            if name.startswith(s) and (best is None or len(s) > best[0]):
                best = (len(s), wheel)
    return best[1] if best else None


def wheel_for_symbol(sym: str) -> str | None:
    best = None
    for wheel, (_, prefixes) in WHEELS.items():
        for p in prefixes:
            if sym.startswith(p) and (best is None or len(p) > best[0]):
                best = (len(p), wheel)
    return best[1] if best else None


def torch_lib_dir() -> Path | None:
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]) / "lib"


def ldd_missing() -> set[str]:
    libdir = torch_lib_dir()
    wheels: set[str] = set()
    if libdir is None:
        return wheels
    for lib in ("libtorch_cuda.so", "libtorch_cpu.so", "libtorch_python.so", "libtorch.so"):
        path = libdir / lib
        if not path.exists():
            continue
        try:
            out = subprocess.run(["ldd", str(path)], capture_output=True, text=True).stdout
        except OSError:
            return wheels
        for m in re.finditer(r"^\s*(\S+) => not found", out, re.M):
            w = wheel_for_soname(m.group(1))
            if w:
                wheels.add(w)
    return wheels


def wheels_from_error(err: str) -> set[str]:
    wheels: set[str] = set()
    for m in re.finditer(r"(lib[\w.+-]+\.so[\d.]*): cannot open shared object file", err):
        w = wheel_for_soname(m.group(1))
        if w:
            wheels.add(w)
    for m in re.finditer(r"undefined symbol: (\w+)", err):
        w = wheel_for_symbol(m.group(1))
        if w:
            wheels.add(w)
    for m in re.finditer(r"version `[^']+' not found \(required by ([^)]+)\)", err):
        # a system library older than the one torch was built against
        lib = Path(m.group(1).strip()).name
        w = wheel_for_soname(lib)
        if w:
            wheels.add(w)
    return wheels


def probe() -> tuple[bool, str]:
    r = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True)
    return r.returncode == 0, (r.stdout + r.stderr)


def pip_install(args: list[str]) -> None:
    cmd = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check"] + args
    log("+ " + " ".join(cmd[2:]))
    subprocess.run(cmd, check=True, stdout=sys.stderr)


def main() -> int:
    ok, out = probe()
    if ok:
        log(f"torch imports ({out.strip()}); no CUDA library wheels needed")
        return 0
    installed: set[str] = set()
    todo = ldd_missing()
    for _ in range(len(WHEELS) + 1):
        todo -= installed
        if not todo:
            todo = wheels_from_error(out) - installed
        if not todo:
            break
        pip_install(["--no-deps"] + sorted(todo))
        installed |= todo
        todo = set()
        ok, out = probe()
        if ok:
            log(f"torch imports ({out.strip()}) with {len(installed)} CUDA library "
                f"wheel(s): {', '.join(sorted(installed))}")
            return 0
    log("import torch still fails; falling back to torch with all its declared dependencies:\n"
        + out.strip()[-2000:])
    pip_install([f"torch=={TORCH_VERSION}"])
    ok, out = probe()
    if not ok:
        log("import torch fails:\n" + out)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
