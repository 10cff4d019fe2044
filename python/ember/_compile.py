"""`ember.compile`: a model written in C++ with ember's vocabulary, compiled once into a cached
extension module and loaded like the built-in energies.

The cache key is the source, the model's name, the samplers, the scalar type, ember's headers
(their contents), the compiler (its version line and flags), Python's ABI and nanobind's version:
any change builds anew, anything else imports the module built before. The cache lives in
$EMBER_CACHE, else $XDG_CACHE_HOME/ember, else ~/.cache/ember.
"""
import hashlib
import importlib.machinery
import importlib.util
import os
import re
import shlex
import subprocess
import sys
import sysconfig
import tempfile
import time

from ._api import Energy

__all__ = ["compile", "CompileError", "Compiled"]

SAMPLERS = {
    "chees_hmc": "chees_hmc_sampler",
    "nuts": "nuts_sampler",
    "mams": "mams_sampler",
    "mala": "mala_sampler",
    "ula": "ula_sampler",
}
DTYPES = {"float64": "double", "float32": "float"}


class CompileError(RuntimeError):
    """The compiler refused a model; the message is its diagnostics, with the model's own file
    name and line numbers."""


def _include_dirs():
    here = os.path.dirname(os.path.abspath(__file__))
    installed = os.path.join(here, "include")
    if os.path.isfile(os.path.join(installed, "ember", "python.hpp")):
        return [installed]
    try:  # a build tree (CMake writes the source tree's include directories here)
        from ._paths import INCLUDE_DIRS

        return list(INCLUDE_DIRS)
    except ImportError:
        raise RuntimeError("ember.compile cannot find ember's headers (neither ember/include in the package nor a "
                           "build tree's ember/_paths.py)") from None


def _cache_root():
    root = os.environ.get("EMBER_CACHE")
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "ember")
    os.makedirs(root, exist_ok=True)
    return root


def _compiler():
    cxx = os.environ.get("CXX", "g++")
    try:
        line = subprocess.run([cxx, "--version"], capture_output=True, text=True, check=True).stdout.splitlines()[0]
    except (OSError, subprocess.CalledProcessError, IndexError):
        raise RuntimeError(f"ember.compile needs a C++20 compiler: '{cxx}' did not run (set CXX, or install g++)") from None
    return cxx, line


def _headers_digest(dirs):
    h = hashlib.sha256()
    for d in dirs:
        for root, subdirs, files in os.walk(os.path.join(d, "ember")):
            subdirs.sort()
            for f in sorted(files):
                p = os.path.join(root, f)
                h.update(os.path.relpath(p, d).encode())
                with open(p, "rb") as fh:
                    h.update(fh.read())
    return h.hexdigest()


def _base_flags(include_dirs):
    import nanobind

    flags = ["-std=gnu++20", "-O2", "-DNDEBUG", "-march=native", "-fopenmp", "-fPIC", "-fvisibility=hidden"]
    flags += [f"-I{d}" for d in include_dirs]
    flags += [f"-I{nanobind.include_dir()}", f"-I{os.path.join(os.path.dirname(nanobind.include_dir()), 'ext', 'robin_map', 'include')}",
              f"-I{sysconfig.get_paths()['include']}", "-isystem", "/usr/include/eigen3",
              "-DEIGEN_DONT_VECTORIZE", "-DEIGEN_MAX_ALIGN_BYTES=16", "-DEIGEN_MAX_STATIC_ALIGN_BYTES=16"]
    return flags


def _nanobind_object(cxx, compiler_line, include_dirs):
    """nanobind's library, compiled once per compiler, Python and nanobind version."""
    import nanobind

    key = hashlib.sha256(f"{compiler_line}|{sys.version}|{nanobind.__version__}".encode()).hexdigest()[:16]
    obj = os.path.join(_cache_root(), f"nanobind-{key}.o")
    if os.path.exists(obj):
        return obj
    src = os.path.join(nanobind.source_dir(), "nb_combined.cpp")
    fd, tmp = tempfile.mkstemp(suffix=".o", dir=os.path.dirname(obj))
    os.close(fd)
    cmd = [cxx, "-std=c++17", "-O2", "-DNDEBUG", "-DNB_COMPACT_ASSERTIONS", "-fPIC", "-fvisibility=hidden",
           "-fno-strict-aliasing", "-ffunction-sections", "-fdata-sections", "-c", src, "-o", tmp]
    cmd += [f for f in _base_flags(include_dirs) if f.startswith("-I")]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        os.unlink(tmp)
        raise RuntimeError("ember.compile could not build nanobind's library:\n" + r.stderr[-4000:])
    os.replace(tmp, obj)
    return obj


# Bumped whenever the generated glue or the way it is compiled changes (part of the cache key).
_glue_version = "ember.compile glue 1"


def _target_machine(cxx):
    """What -march=native resolves to here (a cache shared by machines of other CPUs must not serve
    their modules: their instructions may not exist here)."""
    import platform

    try:
        out = subprocess.run([cxx, "-march=native", "-Q", "--help=target"], capture_output=True, text=True).stdout
        march = [l.split()[-1] for l in out.splitlines() if l.strip().startswith(("-march=", "-mtune="))]
    except OSError:
        march = []
    return platform.machine() + " " + " ".join(march)


def _model_name(source, model):
    if model is not None:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_:]*", model):
            raise ValueError(f"model must be the C++ name of the model's struct, got {model!r}")
        return model
    names = re.findall(r"^\s*(?:struct|class)\s+([A-Za-z_]\w*)\s*(?:final\s*)?\{", source, re.M)
    if len(names) != 1:
        raise ValueError("ember.compile: say which struct is the model (model='name'): the source defines "
                         + (f"{len(names)} structs: {', '.join(names)}" if names else "no struct at its top level"))
    return names[0]


class Compiled:
    """A compiled model: call it with the model's data (keyword arguments or a dict) for an
    `ember.Energy`. `compile_seconds` is 0 when it came from the cache."""

    def __init__(self, cls, name, path, seconds, from_cache):
        self._cls = cls
        self.name = name
        self.path = path
        self.compile_seconds = seconds
        self.from_cache = from_cache
        self.dim = cls.dim
        self.samplers = tuple(cls.samplers)

    def __call__(self, data=None, **kwargs):
        data = dict(data or {}, **kwargs)
        return Energy(self._cls, data, name=self.name)

    def __repr__(self):
        how = "from the cache" if self.from_cache else f"compiled in {self.compile_seconds:.1f} s"
        return f"<ember.Compiled {self.name}: dim {self.dim}, samplers {', '.join(self.samplers)}, {how}>"


def compile(source, model=None, samplers=("chees_hmc",), dtype="float64", flags=(), verbose=True, force=False):
    """Compile `source` (C++ text, or the path of a file) into an extension, once.

    The source defines a struct: a model (named parameters in `params` and a body
    `template <class M> void operator()(M& m) const`, as in docs/models.md), or an energy (`dim`,
    `value_type`, `value(x)` and `value_and_grad(x, g)`). If it has a constructor taking
    `ember::python::data const&`, data given to the compiled model reaches it there
    (`d.vector("y", 8)`, `d.view("X")`, `d.scalar("s")`, `d.integer("K")`). `samplers` are compiled in
    (each costs compile time): any of chees_hmc, nuts, mams, mala, ula. Returns a `Compiled`;
    raises `CompileError` with the compiler's messages (the model's own file and line numbers).
    Headers your source includes from your own directories are not part of the cache key: after
    changing one, pass force=True."""
    path = None
    if isinstance(source, os.PathLike) or (isinstance(source, str) and "\n" not in source and source.endswith(
            (".cpp", ".hpp", ".h", ".cc", ".cxx")) and os.path.isfile(source)):
        path = os.path.abspath(os.fspath(source))
        with open(path) as fh:
            source = fh.read()
    if not isinstance(source, str) or not source.strip():
        raise ValueError("ember.compile takes C++ source text or the path of a file")
    samplers = (samplers,) if isinstance(samplers, str) else tuple(samplers)
    if not samplers:
        raise ValueError("ember.compile needs at least one sampler")
    for s in samplers:
        if s not in SAMPLERS:
            raise ValueError(f"unknown sampler {s!r}: ember.compile knows {', '.join(SAMPLERS)}")
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    name = _model_name(source, model)
    include_dirs = _include_dirs()
    cxx, compiler_line = _compiler()
    import nanobind

    flags = shlex.split(flags) if isinstance(flags, str) else list(flags)
    if path is not None:
        flags.append(f"-I{os.path.dirname(path)}")  # the file's own #include "..." beside it
    key_text = "\n".join([source, name, ",".join(samplers), dtype, _headers_digest(include_dirs), compiler_line,
                          " ".join(_base_flags(include_dirs) + flags), _target_machine(cxx), _glue_version,
                          sys.version, nanobind.__version__, sysconfig.get_config_var("EXT_SUFFIX")])
    key = hashlib.sha256(key_text.encode()).hexdigest()[:20]
    module = f"ember_model_{key}"
    cache = os.path.join(_cache_root(), "models")
    os.makedirs(cache, exist_ok=True)
    so = os.path.join(cache, module + sysconfig.get_config_var("EXT_SUFFIX"))
    if force and os.path.exists(so):
        if module in sys.modules:
            raise RuntimeError(f"ember.compile: {name} is already loaded in this process from the cache; "
                               "an extension cannot be reloaded (start a new process to rebuild it)")
        os.unlink(so)
    seconds, from_cache = 0.0, os.path.exists(so)
    if not from_cache:
        t0 = time.monotonic()
        nb_obj = _nanobind_object(cxx, compiler_line, include_dirs)
        shown = path or f"<ember.compile {name}>"
        glue = "\n".join([
            f"#define EMBER_PYTHON_NAMESPACE m_{key}",
            "#include <ember/python.hpp>",
            f'#line 1 "{shown}"',
            source,
            '#line 1 "<ember.compile glue>"',
            "namespace {",
            "struct ember_compiled_factory {",
            f"  static auto make(ember::python::data const& d) {{ return ember::python::energy_of<{name}, {DTYPES[dtype]}>(d); }}",
            "};",
            "}  // namespace",
            f"NB_MODULE({module}, m) {{",
            "  ember::python::bind_runs(m);",
            "  ember::python::bind_energy<ember_compiled_factory, "
            + ", ".join(f"ember::python::{SAMPLERS[s]}" for s in samplers) + '>(m, "Model");',
            "}",
            "",
        ])
        fd, cpp = tempfile.mkstemp(suffix=".cpp", prefix=module, dir=cache)
        with os.fdopen(fd, "w") as fh:
            fh.write(glue)
        tmp_so = cpp[:-4] + ".so.tmp"
        cmd = [cxx] + _base_flags(include_dirs) + flags + ["-shared", cpp, nb_obj, "-Wl,--gc-sections", "-o", tmp_so]
        r = subprocess.run(cmd, capture_output=True, text=True)
        os.unlink(cpp)
        if r.returncode != 0:
            if os.path.exists(tmp_so):
                os.unlink(tmp_so)
            raise CompileError(_diagnostics(r.stderr, shown, cmd))
        os.replace(tmp_so, so)
        seconds = time.monotonic() - t0
        if verbose:
            print(f"ember: compiled {name} ({', '.join(samplers)}) in {seconds:.1f} s", file=sys.stderr)
    mod = sys.modules.get(module)  # an extension loads once per process
    if mod is None:
        loader = importlib.machinery.ExtensionFileLoader(module, so)
        spec = importlib.util.spec_from_file_location(module, so, loader=loader)
        mod = importlib.util.module_from_spec(spec)
        loader.exec_module(mod)
        sys.modules[module] = mod
    return Compiled(mod.Model, name, so, seconds, from_cache)


def _diagnostics(stderr, shown, cmd):
    """The compiler's messages: errors in the model's own file first, then the rest, shortened."""
    lines = stderr.splitlines()
    own = [l for l in lines if l.startswith(shown + ":") and ("error" in l or "note" in l)]
    ember_says = sorted({m for l in lines for m in re.findall(r'static assertion failed: "?(ember[^"]*)', l)})
    head = []
    if ember_says:
        head.append("ember says: " + " | ".join(ember_says))
    if own:
        head += own[:20]
    rest = "\n".join(lines[:200])
    return ("\n".join(head) + ("\n\n" if head else "") + "compiler output:\n" + rest +
            "\n\ncommand: " + " ".join(shlex.quote(c) for c in cmd[:3]) + " ...")
