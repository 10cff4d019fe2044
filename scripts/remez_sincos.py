#!/usr/bin/env python3
"""The float coefficients of ember's sincos_turn (include/ember/core/rng.hpp), by the Remez exchange.

On the reduced angle t in [-pi/4, pi/4], with z = t^2: sin t = t + t^3 ps(z), ps of degree 2 (sin of
degree 7), minimising the largest absolute error of sin (levelled error 1.8e-9; 2.3e-9 with the
coefficients rounded to float, evaluated in double; the Taylor polynomial of degree 9 it replaced has
1.1e-9 that way and one fused multiply-add more per pair of normals). Both are far below float's
rounding: sincos_turn's measured error, 9.2e-8, did not change.

Also fitted and not used: cos t = 1 + z pc(z) of degree 6 (3.2e-8 against the degree-8 Taylor
polynomial's 2.4e-8, one multiply-add less), which took the measured error of sincos_turn from
9.2e-8 to 1.3e-7, over the 1.2e-7 that tests/core/box_muller_test.cpp holds it to.
Uses remez() of scripts/remez_log.py (mpmath). Prints each fit's levelled error and the
coefficients, lowest degree first, rounded to float.
"""
import mpmath as mp

from remez_log import remez, to_float

mp.mp.dps = 60
tiny = mp.mpf("1e-30")
zb = (mp.pi / 4) ** 2

# sin: error of sin = t^3 (ps - g) = z^(3/2) (ps - g)
c, E = remez(lambda z: (mp.sin(mp.sqrt(z)) - mp.sqrt(z)) / (mp.sqrt(z) * z) if z > tiny else mp.mpf(-1) / 6,
             lambda z: mp.sqrt(z) * z, zb * mp.mpf("1e-6"), zb, 2)
print("sin, degree 7: absolute error", mp.nstr(E, 4))
print("  " + ", ".join(repr(to_float(ci)) + "f" for ci in c))

# cos: error of cos = z (pc - g)
c, E = remez(lambda z: (mp.cos(mp.sqrt(z)) - 1) / z if z > tiny else mp.mpf(-1) / 2,
             lambda z: z, zb * mp.mpf("1e-6"), zb, 2)
print("cos, degree 6: absolute error", mp.nstr(E, 4))
print("  " + ", ".join(repr(to_float(ci)) + "f" for ci in c))
