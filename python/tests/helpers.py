"""Shared pieces of the Python suites."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import accy  # noqa: E402

SRCDIR = os.environ.get("ACCY_TEST_SRCDIR") or os.path.dirname(os.path.dirname(HERE))

MLP_TEXT = """
%x = parameter "x" : f32[2,3]
%w = constant "w" : f32[3,2] [1, 2, 3, 4, 5, 6]
%b = constant "b" : f32[2] [0.5, -0.5]
%h = dot_general %x, %w lhs_contract=[1] rhs_contract=[0]
%bb = broadcast_in_dim %b dims=[1] : f32[2,2]
%y = add %h, %bb
output %y "y"
"""


def mlp_wire():
    return accy.assemble(MLP_TEXT)


def mlp_reference(x):
    """The MLP's output in f32, for inputs whose result is exact in any order
    (small integers: every product and partial sum is an integer below 2^24,
    plus 0.5): callers compare it bit for bit."""
    import numpy as np
    w = np.arange(1, 7, dtype=np.float32).reshape(3, 2)
    return x @ w + np.array([0.5, -0.5], np.float32)


def mlp_reference64(x):
    """(float64 output, sum of |terms| per element) of the MLP, for any x."""
    import numpy as np
    w = np.arange(1, 7, dtype=np.float64).reshape(3, 2)
    b = np.array([0.5, -0.5])
    x = np.asarray(x, np.float64)
    return x @ w + b, np.abs(x) @ np.abs(w) + np.abs(b)


# ---- comparing accy's floats with an outside reference --------------------------
#
# accy's results are compared with a float64 reference and an error bound
# derived from the computation, never with a bare rtol: numpy's BLAS, numpy's
# SIMD loops and a future accy with FMA or SIMD kernels may each sum in another
# order, and the bound must hold for all of them (AMD or Intel, AVX2 or
# AVX-512). Bit-identical checks are kept for results that are exact whatever
# the order (small integers, selections, single IEEE operations) and for
# comparisons of accy with accy.

import numpy as _np  # noqa: E402

#: machine epsilon (2u, twice the unit roundoff) of each float type
EPS = {_np.dtype(_np.float16): 2.0 ** -10, _np.dtype(_np.float32): 2.0 ** -23,
       _np.dtype(_np.float64): 2.0 ** -52}
EPS32 = EPS[_np.dtype(_np.float32)]
EPS64 = EPS[_np.dtype(_np.float64)]
#: smallest normal f32: absorbs flushed or subnormal intermediate results
TINY32 = float(_np.finfo(_np.float32).tiny)


def sum_bound(abs_sum, n, eps=EPS32):
    """Error bound of a floating sum of |n| terms (products included), in any
    order, with or without FMA: |computed - exact| <= gamma_n * sum|terms|
    with gamma_n = n u / (1 - n u) < n * eps (eps = 2u covers the
    higher-order term and the rounding of the products). |abs_sum| is
    sum|terms| per element (for a product a @ b: |a| @ |b|)."""
    return n * eps * _np.asarray(abs_sum, dtype=_np.float64) + TINY32


def assert_within(got, want, bound, err_msg=""):
    """|got - want| <= bound elementwise, with |want| a float64 reference and
    |bound| the computation's error bound (array or scalar). NaN must meet
    NaN, infinities must be equal."""
    g = _np.asarray(got).astype(_np.float64)
    w = _np.asarray(want, dtype=_np.float64)
    if g.shape != w.shape:
        raise AssertionError("%sshape %s, expected %s" % (err_msg and err_msg + ": ",
                                                          g.shape, w.shape))
    b = _np.broadcast_to(_np.asarray(bound, dtype=_np.float64), w.shape)
    with _np.errstate(invalid="ignore"):
        ok = (_np.isnan(g) & _np.isnan(w)) | (g == w) | (_np.abs(g - w) <= b)
    if not ok.all():
        bad = _np.argwhere(~ok)
        rows = [(tuple(int(v) for v in i), g[tuple(i)], w[tuple(i)], b[tuple(i)])
                for i in bad[:5]]
        raise AssertionError("%s%d of %d elements outside the bound; first (index, got, "
                             "want, bound): %s" % (err_msg and err_msg + ": ", len(bad),
                                                   w.size, rows))
