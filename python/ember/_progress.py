"""The progress bar of a run: tqdm's (a widget in notebooks, a line on terminals) when tqdm is
installed, else one line on stderr; shown only on a terminal or in a notebook unless asked."""
import contextlib
import sys
import time


def _interactive():
    ipython = sys.modules.get("IPython")  # a notebook or IPython session has imported it already
    if ipython is not None and getattr(ipython, "get_ipython", lambda: None)() is not None:
        return True
    return sys.stderr.isatty()


class _Line:
    def __init__(self, total, desc):
        self.total, self.desc, self.t0 = total, desc, time.monotonic()

    def __call__(self, done, total, warming_up, acceptance, divergent):
        el = time.monotonic() - self.t0
        phase = "warm-up" if warming_up else "sampling"
        sys.stderr.write(f"\r{self.desc}: {phase} {done}/{total} transitions, {el:.1f} s, "
                         f"acceptance {acceptance:.3f}, {divergent} divergent   ")
        sys.stderr.flush()

    def close(self):
        sys.stderr.write("\n")


class _Tqdm:
    def __init__(self, total, desc):
        from tqdm.auto import tqdm

        self.bar = tqdm(total=total, desc=desc, unit="transition", leave=True)
        self.done = 0

    def __call__(self, done, total, warming_up, acceptance, divergent):
        self.bar.set_postfix_str(f"{'warm-up' if warming_up else 'sampling'}, acc {acceptance:.2f}, {divergent} div",
                                 refresh=False)
        self.bar.update(done - self.done)
        self.done = done

    def close(self):
        self.bar.close()


class _Nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


class _Called:
    def __init__(self, f):
        self.f = f

    def __enter__(self):
        return self.f

    def __exit__(self, *exc):
        return False


_NOTHING = _Nothing()


def progress_bar(progress, total, desc):
    """A context manager whose value is the callable the binding layer calls between chunks (or
    None: no progress, the cheap path of short calls)."""
    if callable(progress):
        return _Called(progress)
    if progress is None:
        progress = _interactive()
    if not progress or total == 0:
        return _NOTHING
    return _bar(total, desc)


@contextlib.contextmanager
def _bar(total, desc):
    try:
        bar = _Tqdm(total, desc)
    except ImportError:
        bar = _Line(total, desc)
    try:
        yield bar
    finally:
        bar.close()
