"""Activation functions and other math: Relu, LeakyRelu, Clip, Elu, Selu,
Softplus, PRelu, Hardmax, EyeLike, the window functions, ..."""

import math

import numpy as np

from .context import FLOATS, INTS, SIGNED, broadcast_shapes, normalize_axis, onnx_dtype
from .ops_elementwise import compute_dtype
from .registry import converter


@converter("Relu")
def relu(ctx, node):
    x = node.input(0)
    return ctx.binary("maximum", x, ctx.scalar(0, x.dtype))


@converter("LeakyRelu")
def leaky_relu(ctx, node):
    x = node.input(0)
    alpha = node.attr("alpha", 0.01)
    neg = ctx.mul(x, ctx.scalar(alpha, x.dtype))
    return ctx.select(ctx.compare("GT", x, ctx.scalar(0, x.dtype)), x, neg)


@converter("Clip")
def clip(ctx, node):
    x = node.input(0)
    if ctx.opset < 11:
        lo, hi = node.attr("min"), node.attr("max")
        lo = ctx.scalar(lo, x.dtype) if lo is not None else None
        hi = ctx.scalar(hi, x.dtype) if hi is not None else None
    else:
        lo = node.input(1, required=False)
        hi = node.input(2, required=False)
    for bound in (lo, hi):
        if bound is not None and bound.rank != 0:
            raise node.error("min and max must be scalars")
    if lo is not None:
        x = ctx.binary("maximum", x, lo)
    if hi is not None:
        x = ctx.binary("minimum", x, hi)
    return x


@converter("Max", "Min", "Sum", "Mean")
def variadic(ctx, node):
    ops = {"Max": "maximum", "Min": "minimum", "Sum": "add", "Mean": "add"}
    xs = [node.input(i) for i in range(len(node.inputs))]
    if not xs:
        raise node.error("needs at least one input")
    r = xs[0]
    for x in xs[1:]:
        r = ctx.binary(ops[node.op_type], r, x)
    if node.op_type == "Mean":
        if r.dtype not in FLOATS:
            raise node.unsupported("Mean of dtype %s" % r.dtype)
        r = ctx.div(r, ctx.scalar(len(xs), r.dtype))
    return r


# ---- more activations -----------------------------------------------------------
#
# Composites compute f16/bf16 in f32 and round once at the end (compute_dtype).

def _float_input(node):
    x = node.input(0)
    if x.dtype not in FLOATS:
        raise node.unsupported("input dtype %s is not supported (allowed: %s)"
                               % (x.dtype, " ".join(FLOATS)))
    return x


def _activation(fn):
    """Wraps fn(ctx, node, x, s) (s: a scalar maker in x's compute dtype) with
    the float check and the compute-dtype round trip."""

    def conv(ctx, node):
        x = _float_input(node)
        c = ctx.cast(x, compute_dtype(x))
        r = fn(ctx, node, c, lambda v: ctx.scalar(v, c.dtype))
        return ctx.cast(r, x.dtype)

    conv.__name__ = fn.__name__
    conv.__doc__ = fn.__doc__
    return conv


@converter("Elu")
@_activation
def elu(ctx, node, x, s):
    """x < 0 ? alpha (e^x - 1) : x"""
    alpha = node.attr("alpha", 1.0)
    neg = ctx.mul(ctx.unary("expm1", x), s(alpha))
    return ctx.select(ctx.compare("LT", x, s(0)), neg, x)


@converter("Celu", min_opset=12)
@_activation
def celu(ctx, node, x, s):
    """max(0, x) + min(0, alpha (e^(x / alpha) - 1))"""
    alpha = node.attr("alpha", 1.0)
    if alpha == 0:
        raise node.error("alpha must not be 0", "alpha")
    neg = ctx.mul(ctx.unary("expm1", ctx.div(x, s(alpha))), s(alpha))
    return ctx.add(ctx.binary("maximum", x, s(0)), ctx.binary("minimum", neg, s(0)))


@converter("Selu")
@_activation
def selu(ctx, node, x, s):
    """gamma (x <= 0 ? alpha (e^x - 1) : x)"""
    alpha = node.attr("alpha", 1.67326319217681884765625)
    gamma = node.attr("gamma", 1.05070102214813232421875)
    neg = ctx.mul(ctx.unary("expm1", x), s(alpha))
    return ctx.mul(ctx.select(ctx.compare("LE", x, s(0)), neg, x), s(gamma))


def _hard_sigmoid(ctx, x, alpha, beta, s):
    return ctx.op("clamp", [s(0), ctx.add(ctx.mul(x, s(alpha)), s(beta)), s(1)])


@converter("HardSigmoid")
@_activation
def hard_sigmoid(ctx, node, x, s):
    """max(0, min(1, alpha x + beta))"""
    return _hard_sigmoid(ctx, x, node.attr("alpha", 0.2), node.attr("beta", 0.5), s)


@converter("HardSwish", min_opset=14)
@_activation
def hard_swish(ctx, node, x, s):
    """x max(0, min(1, x / 6 + 1 / 2))"""
    return ctx.mul(x, _hard_sigmoid(ctx, x, 1.0 / 6.0, 0.5, s))


@converter("Softplus")
@_activation
def softplus(ctx, node, x, s):
    """log(e^x + 1), as max(x, 0) + log1p(e^-|x|) (no overflow)"""
    t = ctx.unary("log1p", ctx.unary("exp", ctx.unary("negate", ctx.unary("abs", x))))
    return ctx.add(ctx.binary("maximum", x, s(0)), t)


@converter("Softsign")
@_activation
def softsign(ctx, node, x, s):
    """x / (1 + |x|)"""
    return ctx.div(x, ctx.add(ctx.unary("abs", x), s(1)))


@converter("ThresholdedRelu", min_opset=10)
def thresholded_relu(ctx, node):
    x = _float_input(node)
    alpha = node.attr("alpha", 1.0)
    gt = ctx.compare("GT", x, ctx.scalar(alpha, x.dtype))
    return ctx.select(gt, x, ctx.scalar(0, x.dtype))


_NP_INTS = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
            "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}


@converter("Shrink", min_opset=9)
def shrink(ctx, node):
    """x < -lambd ? x + bias : x > lambd ? x - bias : 0"""
    x = node.input(0)
    lambd = float(node.attr("lambd", 0.5))
    bias = float(node.attr("bias", 0.0))
    dt = x.dtype
    if dt in FLOATS:
        c = ctx.cast(x, compute_dtype(x))
        s = lambda v: ctx.scalar(v, c.dtype)  # noqa: E731
        r = ctx.select(ctx.compare("LT", c, s(-lambd)), ctx.add(c, s(bias)),
                       ctx.select(ctx.compare("GT", c, s(lambd)), ctx.sub(c, s(bias)), s(0)))
        return ctx.cast(r, dt)
    if dt not in INTS:
        raise node.unsupported("input dtype %s is not supported" % dt)
    if math.isnan(lambd):
        raise node.unsupported("lambd NaN for an integer input", "lambd")
    if not math.isfinite(bias) or bias != int(bias):
        raise node.unsupported("bias %r is not an integer (input dtype %s)" % (bias, dt), "bias")
    info = np.iinfo(_NP_INTS[dt])
    tmin, tmax = int(info.min), int(info.max)
    # For an integer x: x < t <=> x < ceil(t), and x > t <=> x > floor(t);
    # a bound outside the dtype's range makes the test constant.
    lo = -math.inf if lambd == math.inf else math.ceil(-lambd) if lambd != -math.inf \
        else math.inf
    hi = math.floor(lambd) if math.isfinite(lambd) else lambd
    if lo > tmax or lo <= tmin:
        below = ctx.full(x.shape, lo > tmax, "bool")
    else:
        below = ctx.compare("LT", x, ctx.scalar(lo, dt))
    if hi < tmin or hi >= tmax:
        above = ctx.full(x.shape, hi < tmin, "bool")
    else:
        above = ctx.compare("GT", x, ctx.scalar(hi, dt))
    # The bias wraps to the dtype like the integer add/subtract that use it.
    b = np.array(int(bias) % (1 << info.bits), np.uint64).astype(_NP_INTS[dt])
    bias_t = ctx.constant(b, dt)
    return ctx.select(below, ctx.add(x, bias_t),
                      ctx.select(above, ctx.sub(x, bias_t), ctx.scalar(0, dt)))


@converter("PRelu")
def prelu(ctx, node):
    """x < 0 ? slope x : x, slope broadcast to x's shape (unidirectional)."""
    x, slope = node.input(0), node.input(1)
    if x.dtype not in FLOATS + INTS:
        raise node.unsupported("input dtype %s is not supported" % x.dtype)
    if slope.dtype != x.dtype:
        raise node.error("slope dtype %s differs from the input's %s" % (slope.dtype, x.dtype))
    if ctx.opset < 7:
        # Versions 1 and 6: a one-element slope is shared by all elements; a
        # 1-D slope of C values is one per channel (axis 1, the Caffe2
        # exporters' form); otherwise the slope broadcasts to x
        # unidirectionally (as from opset 7), which covers [C, 1, 1].
        if slope.size == 1:
            slope = ctx.reshape(slope, ())
        elif slope.rank == 1 and x.rank >= 2 and slope.shape[0] == x.shape[1]:
            slope = ctx.broadcast_in_dim(slope, x.shape, [1])
    try:
        ok = broadcast_shapes(x.shape, slope.shape) == x.shape
    except ValueError:
        ok = False
    if not ok:
        raise node.error("slope shape %s does not broadcast to the input's %s"
                         % (list(slope.shape), list(x.shape)))
    if x.dtype in INTS and x.dtype not in SIGNED:
        return x  # never negative
    neg = ctx.compare("LT", x, ctx.scalar(0, x.dtype))
    return ctx.select(neg, ctx.mul(x, slope), x)


# ---- Hardmax, EyeLike -------------------------------------------------------------

@converter("Hardmax")
def hardmax(ctx, node):
    """1 at the first maximum along the axis, 0 elsewhere (before opset 13 the
    input is viewed as 2-D [prod(d[:axis]), prod(d[axis:])])."""
    x = node.input(0)
    if x.dtype not in FLOATS + INTS:
        raise node.unsupported("input dtype %s is not supported" % x.dtype)
    if x.rank == 0:
        raise node.error("the input must have rank >= 1")
    axis = normalize_axis(node.attr("axis", -1 if ctx.opset >= 13 else 1), x.rank, node)
    shape = x.shape
    v = x
    if ctx.opset < 13:
        v = ctx.reshape(x, (int(np.prod(shape[:axis], dtype=np.int64)),
                            int(np.prod(shape[axis:], dtype=np.int64))))
        axis = 1
    i = ctx.op("argmax", [v], [axis], "i64")
    dims = [d for d in range(v.rank) if d != axis]
    hot = ctx.compare("EQ", ctx.iota(v.shape, axis, "i64"),
                      ctx.broadcast_in_dim(i, v.shape, dims))
    return ctx.reshape(ctx.cast(hot, x.dtype), shape)


@converter("EyeLike", min_opset=9)
def eye_like(ctx, node):
    """Ones on diagonal k of a 2-D tensor shaped like the input."""
    x = node.input(0)
    if x.rank != 2:
        raise node.error("the input must be 2-D, got rank %d" % x.rank)
    dt = node.attr("dtype")
    if dt is None:
        dt = x.dtype
    else:
        try:
            dt = onnx_dtype(dt, "the output type")
        except Exception as e:
            raise node.unsupported(str(e), "dtype") from None
    k = int(node.attr("k", 0))
    if 0 in x.shape:
        return ctx.full(x.shape, 0, dt)
    # column - row == k, in i64 (|k| beyond the shape simply matches nothing).
    diff = ctx.sub(ctx.iota(x.shape, 1, "i64"), ctx.iota(x.shape, 0, "i64"))
    return ctx.cast(ctx.compare("EQ", diff, ctx.scalar(k, "i64")), dt)


# ---- window functions ----------------------------------------------------------------
#
# w[n] = sum_k (-1)^k a_k cos(2 pi k n / N), n = 0..size-1, N = size (periodic)
# or size - 1 (symmetric); computed in f64 and converted to output_datatype.

_WINDOWS = {"HannWindow": (0.5, 0.5), "HammingWindow": (25.0 / 46.0, 21.0 / 46.0),
            "BlackmanWindow": (0.42, 0.5, 0.08)}


@converter(*_WINDOWS, min_opset=17)
def window(ctx, node):
    size = np.asarray(node.const_input(0, required=True))
    if size.size != 1 or size.dtype.kind not in "iu":
        raise node.error("size must be an integer scalar")
    n = int(size.reshape(()))
    if n < 0:
        raise node.error("size must not be negative, got %d" % n)
    try:
        dt = onnx_dtype(node.attr("output_datatype", 1), "the output type")
    except Exception as e:
        raise node.unsupported(str(e), "output_datatype") from None
    if dt == "bool":
        raise node.unsupported("output_datatype bool", "output_datatype")
    periodic = node.attr("periodic", 1)
    if periodic not in (0, 1):
        raise node.error("periodic must be 0 or 1", "periodic")
    if n == 0:
        return ctx.full((0,), 0, dt)
    denom = n if periodic else n - 1
    coeffs = _WINDOWS[node.op_type]
    # 2 pi n / N in f64 (0 / 0 = NaN for a symmetric window of size 1, as in
    # ONNX's reference).
    t = ctx.div(ctx.mul(ctx.iota((n,), 0, "f64"), ctx.scalar(2 * math.pi, "f64")),
                ctx.scalar(float(denom), "f64"))
    w = ctx.full((n,), coeffs[0], "f64")
    for k, a in enumerate(coeffs[1:], 1):
        term = ctx.mul(ctx.unary("cos", ctx.mul(t, ctx.scalar(float(k), "f64"))),
                       ctx.scalar(a, "f64"))
        w = ctx.sub(w, term) if k % 2 else ctx.add(w, term)
    return ctx.cast(w, dt)


# ---- opset 18 Mish, opset 20 Gelu ----------------------------------------------------

def _softplus(ctx, x):
    """log(1 + e^x) = max(x, 0) + log1p(e^-|x|), without overflow."""
    t = ctx.unary("log1p", ctx.unary("exp", ctx.unary("negate", ctx.unary("abs", x))))
    return ctx.add(ctx.binary("maximum", x, ctx.scalar(0, x.dtype)), t)


@converter("Mish", min_opset=18)
def mish(ctx, node):
    """x tanh(softplus(x)); f16/bf16 in f32, rounded once."""
    x = node.input(0)
    if x.dtype not in FLOATS:
        raise node.unsupported("dtype %s" % x.dtype)
    v = ctx.cast(x, compute_dtype(x))
    return ctx.cast(ctx.mul(v, ctx.unary("tanh", _softplus(ctx, v))), x.dtype)


@converter("Gelu", min_opset=20)
def gelu(ctx, node):
    """approximate "none": x (1 + erf(x / sqrt 2)) / 2; "tanh":
    x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) / 2."""
    x = node.input(0)
    if x.dtype not in FLOATS:
        raise node.unsupported("dtype %s" % x.dtype)
    approx = node.attr("approximate", "none")
    dt = compute_dtype(x)
    v = ctx.cast(x, dt)
    if approx == "none":
        inner = ctx.unary("erf", ctx.mul(v, ctx.scalar(1 / math.sqrt(2), dt)))
    elif approx == "tanh":
        cube = ctx.mul(ctx.mul(v, v), v)
        arg = ctx.add(v, ctx.mul(cube, ctx.scalar(0.044715, dt)))
        inner = ctx.unary("tanh", ctx.mul(arg, ctx.scalar(math.sqrt(2 / math.pi), dt)))
    else:
        raise node.error("approximate must be 'none' or 'tanh', got %r" % (approx,),
                         "approximate")
    half = ctx.mul(v, ctx.scalar(0.5, dt))
    return ctx.cast(ctx.mul(half, ctx.add(inner, ctx.scalar(1, dt))), x.dtype)
