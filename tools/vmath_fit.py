#!/usr/bin/env python3
"""Derives the polynomial coefficients of accy's vector math
(src/kernels/uk/avx2/vmath.c) and prints them as C initialisers.

Each fit is a weighted least-squares fit on Chebyshev nodes (close to the
minimax polynomial), relative error weighted, in double precision; the
coefficients are then rounded to f32. The printed error is the fit's own,
before f32 evaluation; tests/check_vmath.c measures the implementation.
Run: python3 tools/vmath_fit.py (needs numpy)."""
import math

import numpy as np


def nodes(a, b, n=6000):
    k = np.arange(n)
    return (a + b) / 2 + (b - a) / 2 * np.cos(np.pi * (k + 0.5) / n)


def lsq(V, y, w):
    c, *_ = np.linalg.lstsq(V * w[:, None], y * w, rcond=None)
    return c


def fit_poly(f, a, b, deg):
    x = nodes(a, b)
    y = f(x)
    return lsq(np.vander(x, deg + 1, increasing=True), y, 1 / np.maximum(np.abs(y), 1e-30))


def fit_even(g, a2, b2, deg):
    """g as a polynomial of degree deg in t on [a2, b2] (t = x^2)."""
    t = nodes(a2, b2)
    y = g(t)
    return lsq(np.vander(t, deg + 1, increasing=True), y, 1 / np.maximum(np.abs(y), 1e-30))


def rel(f, c, a, b, var=lambda x: x):
    x = np.linspace(a, b, 100001)
    p = np.polyval(c[::-1], var(x))
    y = f(x)
    return float(np.max(np.abs(p - y) / np.maximum(np.abs(y), 1e-300)))


def c_floats(name, c):
    vals = ", ".join("%.9ef" % float(np.float32(v)) for v in c)
    print("static const float %s[%d] = {%s};" % (name, len(c), vals))


erf = np.vectorize(math.erf)
ln2 = math.log(2)

# exp(r), |r| <= ln2/2
c = fit_poly(np.exp, -ln2 / 2, ln2 / 2, 6)
print("/* exp: fit error %.2e */" % rel(np.exp, c, -ln2 / 2, ln2 / 2))
c_floats("kExp", c)

# log(1+f) = 2 s g(s^2), s = f / (2 + f), f in [sqrt(1/2) - 1, sqrt(2) - 1]
smax = (math.sqrt(2) - 1) / (math.sqrt(2) + 1)
g = lambda t: np.where(t > 0, np.arctanh(np.sqrt(t)) / np.sqrt(np.maximum(t, 1e-300)), 1.0)
c = fit_even(g, 0.0, smax * smax * 1.0001, 4)
print("/* log: fit error %.2e */" % rel(lambda s: np.arctanh(s) / s, c, 1e-6, smax, lambda s: s * s))
c_floats("kLog", c)

# tanh needs no table of its own: M / (M + 2) with M = e^2|x| - 1 from kExp
# (src/kernels/uk/avx2/vmath.h, vm_tanh).

# erf: eight intervals of |x| of width 0.5 from 0 to 4; on interval 0 an odd
# polynomial x e(x^2) (so t = |x|), on interval i > 0 a polynomial in
# t = |x| - (its midpoint); erf is +-1 in f32 from 3.92 on.
DEG = 10
table = np.zeros((DEG + 1, 8))
errs = []
e0 = lambda t: np.where(t > 0, erf(np.sqrt(t)) / np.sqrt(np.maximum(t, 1e-300)), 2 / math.sqrt(math.pi))
c = fit_even(e0, 0.0, 0.25, DEG // 2 - 1)
table[1::2, 0] = c
errs.append(rel(lambda x: erf(x) / x, c, 1e-6, 0.5, lambda x: x * x))
for i in range(1, 8):
    a, b = 0.5 * i, 0.5 * (i + 1)
    mid = (a + b) / 2
    c = fit_poly(lambda t: erf(t + mid), a - mid, b - mid, DEG)
    table[:, i] = c
    errs.append(rel(lambda x: erf(x + mid), c, a - mid, b - mid))
print("/* erf: fit errors per interval %s */" % ", ".join("%.1e" % e for e in errs))
print("static const float kErf[%d][8] = {" % (DEG + 1))
for k in range(DEG + 1):
    print("    {%s}," % ", ".join("%.9ef" % float(np.float32(v)) for v in table[k]))
print("};")
