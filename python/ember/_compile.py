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
import shutil
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
    "mclmc": "mclmc_sampler",
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
              f"-I{sysconfig.get_paths()['include']}", "-isystem", "/usr/include/eigen3"]
    return flags


def _nanobind_command(cxx, include_dirs, src, out):
    cmd = [cxx, "-std=c++17", "-O2", "-DNDEBUG", "-DNB_COMPACT_ASSERTIONS", "-fPIC", "-fvisibility=hidden",
           "-fno-strict-aliasing", "-ffunction-sections", "-fdata-sections", "-c", src, "-o", out]
    return cmd + [f for f in _base_flags(include_dirs) if f.startswith("-I")]


# What ember/python.hpp includes before its own code: precompiled once (below), so that a model's
# units read them from the precompiled header instead of parsing them (about 3 s a unit). A
# header python.hpp adds later and this list lacks is parsed as before.
_PRECOMPILED = ["ember/ember.hpp", "nanobind/nanobind.h", "nanobind/ndarray.h", "nanobind/stl/string.h",
                "nanobind/stl/unique_ptr.h", "nanobind/stl/vector.h"]


def _run_all(commands):
    """Runs the commands at once; returns [(returncode, stderr)] in their order. On an exception
    (Ctrl-C among them) the ones still running are killed and waited for before it goes on."""
    procs = []
    try:
        for cmd in commands:
            procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        results = []
        for p in procs:
            err = p.communicate()[1]
            results.append((p.returncode, err))
        return results
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def _shared_parts(cxx, compiler_line, include_dirs, target, headers, precompile):
    """What every model needs and no model changes, built once per compiler, flags, target,
    ember's headers (`headers`, their digest), Python and nanobind version into the cache, in parallel: nanobind's library
    (an object file) and, for g++ (`precompile`), a precompiled header of what python.hpp
    includes. Returns (object, header to -include or None, seconds spent building now: 0 when
    all was there). Processes building the same parts wait for each other (a lock file); a
    precompiled header that fails to build is left out with a warning (it only saves time)."""
    import fcntl
    import warnings

    import nanobind

    key = hashlib.sha256("|".join([compiler_line, target, " ".join(_base_flags(include_dirs)), headers,
                                   sys.version, nanobind.__version__, _glue_version]).encode()).hexdigest()[:16]
    root = os.path.join(_cache_root(), f"shared-{key}")
    obj, header = os.path.join(root, "nanobind.o"), os.path.join(root, "ember_precompiled.hpp")
    gch = header + ".gch"
    no_gch = os.path.join(root, "precompiled-header-failed")  # then compile without it, not retry it each time
    precompile = precompile and not os.path.exists(no_gch)
    if os.path.exists(obj) and (not precompile or os.path.exists(gch)):
        os.utime(root)  # used now (_remove_stale_shared keeps what was used in the last week)
        return obj, header if precompile else None, 0.0
    t0 = time.monotonic()
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be building them: wait, then use its
        jobs, temps = [], []
        try:
            if precompile and not os.path.exists(gch):
                fd, tmp_hpp = tempfile.mkstemp(suffix=".hpp", dir=root)
                temps.append(tmp_hpp)
                with os.fdopen(fd, "w") as fh:
                    fh.write("".join(f"#include <{h}>\n" for h in _PRECOMPILED))
                os.replace(tmp_hpp, header)  # written only with its .gch, which is built from it below
                fd, tmp_gch = tempfile.mkstemp(suffix=".gch", dir=root)
                os.close(fd)
                temps.append(tmp_gch)
                jobs.append(("the precompiled header", [cxx] + _base_flags(include_dirs) + ["-x", "c++-header", header, "-o", tmp_gch],
                             tmp_gch, gch))
            if not os.path.exists(obj):
                fd, tmp_obj = tempfile.mkstemp(suffix=".o", dir=root)
                os.close(fd)
                temps.append(tmp_obj)
                src = os.path.join(nanobind.source_dir(), "nb_combined.cpp")
                jobs.append(("nanobind's library", _nanobind_command(cxx, include_dirs, src, tmp_obj), tmp_obj, obj))
            for (what, _, tmp, final), (rc, err) in zip(jobs, _run_all([cmd for _, cmd, _, _ in jobs])):
                if rc == 0:
                    os.replace(tmp, final)
                elif final == gch:
                    warnings.warn("ember.compile could not build its precompiled header (compiling without it; delete "
                                  f"{no_gch} to try again):\n" + err[-2000:])
                    open(no_gch, "w").close()
                else:
                    raise RuntimeError(f"ember.compile could not build {what}:\n" + err[-4000:])
        finally:
            for t in temps:
                if os.path.exists(t):
                    os.unlink(t)
    _remove_stale_shared(root)
    return obj, header if precompile and os.path.exists(gch) else None, time.monotonic() - t0


_STALE_DAYS = 7


def _remove_stale_shared(keep):
    """Removes the cache's other `shared-*` directories (about 220 MB each, left by earlier ember
    versions, compilers or flags) that no compile has used for `_STALE_DAYS` days and that no
    process is compiling with now (a compile holds its directory's lock shared; this takes it
    exclusively without waiting). Called when new shared parts were built."""
    import fcntl

    parent = os.path.dirname(keep)
    for entry in os.listdir(parent):
        d = os.path.join(parent, entry)
        if not entry.startswith("shared-") or d == keep or not os.path.isdir(d):
            continue
        try:
            if time.time() - os.path.getmtime(d) < _STALE_DAYS * 86400:
                continue
            with open(os.path.join(d, "lock"), "a") as lock:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    continue  # in use
                shutil.rmtree(d, ignore_errors=True)
        except OSError:
            continue


# Bumped whenever the generated glue or the way it is compiled changes (part of the cache key).
_glue_version = "ember.compile glue 2"


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
    `ember.Energy`. `compile_seconds` is 0 when it came from the cache; `units` is how many units
    compiled it in parallel (1 where the source defines what units cannot share; 0 from the cache)."""

    def __init__(self, cls, name, path, seconds, from_cache, units=0):
        self._cls = cls
        self.name = name
        self.path = path
        self.compile_seconds = seconds
        self.from_cache = from_cache
        self.units = units
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
    (each costs compile time): any of chees_hmc, nuts, mams, mclmc (unadjusted, so biased), mala,
    ula. Returns a `Compiled`; raises `CompileError` with the compiler's messages (the model's own file and line numbers).
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
    flags = shlex.split(flags) if isinstance(flags, str) else list(flags)
    if path is not None:
        flags.append(f"-I{os.path.dirname(path)}")  # the file's own #include "..." beside it
    # Units in parallel, unless the source defines something that units cannot share: an
    # anonymous namespace (a type of its own in each unit), or, found at the link, a definition
    # that is not inline (defined in each unit).
    one_unit = re.search(r"\bnamespace\s*\{", source) is not None
    shown = path or f"<ember.compile {name}>"
    mod, so, seconds, from_cache, units = _cached_module(
        "ember_model_", [source, name, ",".join(samplers), dtype],
        lambda key, module, cores: _units(source, name, samplers, dtype, key, module, shown, cores),
        shown, f"{name} ({', '.join(samplers)})", flags, one_unit, verbose, force)
    return Compiled(mod.Model, name, so, seconds, from_cache, units)


def _cached_module(prefix, parts, make_units, shown, what, flags=(), one_unit=False, verbose=True, force=False):
    """The extension module `prefix` + key, built once into the cache and loaded: the key is `parts`
    (what the caller builds) with everything else that makes the build (ember's headers, the
    compiler, its flags and target, the glue's version, Python and nanobind). `make_units(key,
    module, cores)` gives the units' C++ text; `shown` is the name diagnostics give the user's
    source; `what` names the build in messages. Returns (module, path, seconds, from_cache, units)."""
    import fcntl

    import nanobind

    include_dirs = _include_dirs()
    cxx, compiler_line = _compiler()
    flags = list(flags)
    target = _target_machine(cxx)
    headers = _headers_digest(include_dirs)
    key_text = "\n".join(list(parts) + [headers, compiler_line, " ".join(_base_flags(include_dirs) + flags), target,
                                       _glue_version, sys.version, nanobind.__version__,
                                       sysconfig.get_config_var("EXT_SUFFIX")])
    key = hashlib.sha256(key_text.encode()).hexdigest()[:20]
    module = prefix + key
    cache = os.path.join(_cache_root(), "models")
    os.makedirs(cache, exist_ok=True)
    so = os.path.join(cache, module + sysconfig.get_config_var("EXT_SUFFIX"))
    if force and os.path.exists(so):
        if module in sys.modules:
            raise RuntimeError(f"ember.compile: {what} is already loaded in this process from the cache; "
                               "an extension cannot be reloaded (start a new process to rebuild it)")
        os.unlink(so)
    seconds, from_cache, units = 0.0, os.path.exists(so), 0
    if not from_cache:
        # The precompiled header is g++'s and made with ember's flags: with flags of the user's
        # beyond include directories (which could make g++ ignore it, or define macros it was
        # made without) the units parse the headers themselves.
        precompile = "clang" not in compiler_line.lower() and all(f.startswith("-I") for f in flags)
        nb_obj, precompiled, shared_seconds = _shared_parts(cxx, compiler_line, include_dirs, target, headers, precompile)
        if verbose and shared_seconds > 0:
            print(f"ember: built what every model shares (nanobind's library, ember's precompiled header) into the "
                  f"cache once in {shared_seconds:.1f} s", file=sys.stderr)
        t0 = time.monotonic()
        with open(os.path.join(os.path.dirname(nb_obj), "lock"), "a") as in_use:
            fcntl.flock(in_use, fcntl.LOCK_SH)  # the shared parts stay while the units read them
            build = lambda cores: _build(cxx, precompiled, include_dirs, flags, nb_obj, make_units(key, module, cores),
                                         module, shown, so, cache)
            try:
                units = build(1 if one_unit else _cores())
            except CompileError as e:
                if one_unit or "multiple definition" not in str(e):
                    raise
                units = build(1)
        seconds = time.monotonic() - t0
        if verbose:
            print(f"ember: compiled {what} in {seconds:.1f} s", file=sys.stderr)
    mod = sys.modules.get(module)  # an extension loads once per process
    if mod is None:
        loader = importlib.machinery.ExtensionFileLoader(module, so)
        spec = importlib.util.spec_from_file_location(module, so, loader=loader)
        mod = importlib.util.module_from_spec(spec)
        loader.exec_module(mod)
        sys.modules[module] = mod
    return mod, so, seconds, from_cache, units


# The widest network input ember.nn compiles on demand: a chain's state and gradient are In
# floats in each of a SIMD batch's lanes, on the stack of the thread that runs it.
MAX_NETWORK_INPUT = 4096


def network_class(width, verbose=True):
    """ember.nn's network class (`mlp<float, width, nn::any, dynamic>`, bound as ember._core binds
    its fixed input widths) for an input width outside that set: compiled once into the cache (one
    unit, seconds) and imported from it afterwards."""
    width = int(width)
    if not 1 <= width <= MAX_NETWORK_INPUT:
        raise ValueError(f"ember.nn takes input widths from 1 to {MAX_NETWORK_INPUT}, got {width}")
    if width in _network_classes:
        return _network_classes[width]
    shown = f"<ember.nn input width {width}>"

    def units(key, module, cores):
        return ["\n".join([f"#define EMBER_PYTHON_NAMESPACE m_{key}", "#include <ember/python.hpp>",
                           f"NB_MODULE({module}, m) {{ ember::python::bind_mlp<{width}>(m, \"MLP_in{width}\"); }}"]) + "\n"]

    mod = _cached_module("ember_nn_", ["ember.nn network", str(width)], units, shown,
                         f"ember.nn's network of input width {width}", one_unit=True, verbose=verbose)[0]
    _network_classes[width] = getattr(mod, f"MLP_in{width}")
    return _network_classes[width]


_network_classes = {}


def _units(source, name, samplers, dtype, key, module, shown, cores):
    """The model's C++ as units that compile in parallel, at most one per core: the first has the
    module (its binding and the conversion of results to Python); each sampler's run (its pipeline,
    fused loops and checkpoints) is instantiated in one unit, the next in turn after the first
    (the first too where there are more samplers than other units), and declared `extern` in the
    others."""
    energy = f"decltype(ember::python::energy_of<{name}, {DTYPES[dtype]}>(std::declval<ember::python::data const&>()))"
    runs = [f"ember::python::run_of<ember_compiled_energy, ember::python::{SAMPLERS[s]}>" for s in samplers]
    to_python = ("template nanobind::dict ember::python::detail::result_dict<ember_compiled_energy::value_type, "
                 "ember_compiled_energy::dim, ember_compiled_energy>(ember::result<ember_compiled_energy::value_type, "
                 "ember_compiled_energy::dim> const&, ember_compiled_energy const&);")
    head = [f"#define EMBER_PYTHON_NAMESPACE m_{key}", "#include <ember/python.hpp>", f'#line 1 "{shown}"', source,
            '#line 1 "<ember.compile glue>"', f"using ember_compiled_energy = {energy};"]
    count = max(1, min(cores, len(runs) + 1))
    home = [(i + 1) % count for i in range(len(runs))]  # the unit that instantiates run i

    def declarations(unit):
        return [("" if home[i] == unit else "extern ") + f"template class {r};" for i, r in enumerate(runs)]

    module_unit = head + declarations(0) + [to_python] + [
        "namespace {",
        "struct ember_compiled_factory {",
        f"  static ember_compiled_energy make(ember::python::data const& d) {{ return ember::python::energy_of<{name}, {DTYPES[dtype]}>(d); }}",
        "};",
        "}  // namespace",
        f"NB_MODULE({module}, m) {{",
        "  ember::python::bind_runs(m);",
        "  ember::python::bind_energy<ember_compiled_factory, "
        + ", ".join(f"ember::python::{SAMPLERS[s]}" for s in samplers) + '>(m, "Model");',
        "}",
    ]
    other_units = [head + ["extern " + to_python] + declarations(unit) for unit in range(1, count)]
    return ["\n".join(u) + "\n" for u in [module_unit] + other_units]


def _cores():
    try:
        return len(os.sched_getaffinity(0))  # what this process may use (a container's limit among it)
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _build(cxx, precompiled, include_dirs, flags, nb_obj, units, module, shown, so, cache):
    """Compiles the units (C++ texts) at once and links them with nanobind's library into `so`;
    raises CompileError with the messages of the first unit that failed, or of the link."""
    base = [cxx] + (["-include", precompiled] if precompiled else []) + _base_flags(include_dirs) + flags
    work = tempfile.mkdtemp(prefix=module, dir=cache)
    try:
        commands = []
        for i, text in enumerate(units):
            cpp = os.path.join(work, f"unit{i}.cpp")
            with open(cpp, "w") as fh:
                fh.write(text)
            commands.append(base + ["-c", cpp, "-o", cpp[:-4] + ".o"])
        for cmd, (rc, err) in zip(commands, _run_all(commands)):
            if rc != 0:
                raise CompileError(_diagnostics(err, shown, cmd))
        tmp_so = os.path.join(work, "module.so")
        link = [cxx, "-shared", "-fopenmp"] + flags + [cmd[-1] for cmd in commands] + [nb_obj, "-Wl,--gc-sections", "-o", tmp_so]
        r = subprocess.run(link, capture_output=True, text=True)
        if r.returncode != 0:
            raise CompileError(_diagnostics(r.stderr, shown, link))
        os.replace(tmp_so, so)
        return len(units)
    finally:
        shutil.rmtree(work, ignore_errors=True)


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
            "\n\ncommand: " + shlex.quote(cmd[0]) + " ... " + " ".join(shlex.quote(c) for c in cmd[-4:]))
