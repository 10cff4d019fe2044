#!/usr/bin/env python3
"""The coefficients of ember's log_positive (include/ember/core/math.hpp), by the Remez exchange.

float:  ln(1 + f) = f + f^2 P(f) on f in [sqrt(1/2) - 1, sqrt(2) - 1], P of degree 8, minimising the
        largest relative error of the whole ln(1 + f).
float log1p on [0, 1] (log1p_unit, softplus's tail): ln(1 + e) = e + e^2 R(e), R of
        degree 8, minimising the largest relative error of the whole ln(1 + e) on [0.001, 1] (below
        0.001 the weight of R in the result is under 0.001).
double: 2 atanh(s) = 2s + s z Q(z), z = s^2 on [0, (3 - 2 sqrt 2)^2], Q of degree 6, minimising the
        largest absolute error of Q (its weight in the result is at most z/2 <= 0.0147).
Needs mpmath (a dependency of sympy). Prints each fit's levelled error and the coefficients,
lowest degree first, rounded to the target precision. About a minute.
"""
import struct

import mpmath as mp

mp.mp.dps = 60


def remez(g, w, a, b, n, iters=30, grid=4000):
    """Minimise max |w(x) (P(x) - g(x))| over [a, b] for P of degree n; returns (coefficients, E)."""
    N = n + 2
    xs = [(a + b) / 2 - (b - a) / 2 * mp.cos(mp.pi * i / (N - 1)) for i in range(N)]
    E = None
    for _ in range(iters):
        A = mp.matrix(N, N)
        rhs = mp.matrix(N, 1)
        for i, x in enumerate(xs):
            for j in range(n + 1):
                A[i, j] = x**j
            A[i, n + 1] = (-1) ** i / w(x)
            rhs[i] = g(x)
        sol = mp.lu_solve(A, rhs)
        c = [sol[j] for j in range(n + 1)]
        E = sol[n + 1]
        err = lambda x: w(x) * (mp.polyval(c[::-1], x) - g(x))
        pts = [a + (b - a) * k / grid for k in range(grid + 1)]
        vals = [err(x) for x in pts]
        # one extremum per run of equal sign
        ext, run = [], [0]
        for k in range(1, grid + 1):
            if mp.sign(vals[k]) != mp.sign(vals[run[-1]]) and vals[k] != 0:
                ext.append(max(run, key=lambda i: abs(vals[i])))
                run = [k]
            else:
                run.append(k)
        ext.append(max(run, key=lambda i: abs(vals[i])))
        if len(ext) < N:
            break
        while len(ext) > N:
            ext.pop(0 if abs(vals[ext[0]]) < abs(vals[ext[-1]]) else -1)
        new = []
        for i in ext:  # golden-section refinement of each extremum
            lo, hi = pts[max(i - 1, 0)], pts[min(i + 1, grid)]
            for _ in range(60):
                m1, m2 = lo + (hi - lo) * 0.382, lo + (hi - lo) * 0.618
                if abs(err(m1)) < abs(err(m2)):
                    lo = m1
                else:
                    hi = m2
            new.append((lo + hi) / 2)
        xs = new
    return c, E


def to_float(x):
    return struct.unpack("f", struct.pack("f", float(x)))[0]


if __name__ == "__main__":
    tiny = mp.mpf("1e-20")
    a, b = mp.sqrt(0.5) - 1, mp.sqrt(2) - 1
    c, E = remez(lambda x: (mp.log1p(x) - x) / x**2 if abs(x) > tiny else mp.mpf(-0.5),
                 lambda x: x**2 / abs(mp.log1p(x)) if abs(x) > tiny else abs(x), a, b, 8)
    print("float, degree 8: relative error", mp.nstr(E, 4))
    print("  " + ", ".join(repr(to_float(ci)) + "f" for ci in c))

    c, E = remez(lambda x: (mp.log1p(x) - x) / x**2 if abs(x) > tiny else mp.mpf(-0.5),
                 lambda x: x**2 / abs(mp.log1p(x)) if abs(x) > tiny else abs(x), mp.mpf("1e-3"), mp.mpf(1), 8)
    print("float log1p on [0, 1], degree 8: relative error", mp.nstr(E, 4))
    print("  " + ", ".join(repr(to_float(ci)) + "f" for ci in c))

    zb = (3 - 2 * mp.sqrt(2)) ** 2
    c, E = remez(lambda z: (2 * mp.atanh(mp.sqrt(z)) - 2 * mp.sqrt(z)) / (mp.sqrt(z) * z) if z > tiny else mp.mpf(2) / 3,
                 lambda z: 1, mp.mpf(0), zb, 6)
    print("double, degree 6: absolute error on Q", mp.nstr(E, 4))
    print("  " + ", ".join(repr(float(ci)) for ci in c))
    ln2 = mp.log(2)
    print("ln 2 split: float", repr(to_float(ln2)), repr(to_float(ln2 - to_float(ln2))),
          "double", repr(float(ln2)), repr(float(ln2 - float(ln2))))
