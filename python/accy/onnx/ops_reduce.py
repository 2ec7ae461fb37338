"""Reductions: ReduceSum/Mean/Max/Min/Prod, ReduceL1/L2/SumSquare/LogSum/LogSumExp,
ArgMax/ArgMin."""

import numpy as np

from .context import FLOATS, INTS, normalize_axis
from .ops_elementwise import compute_dtype
from .registry import converter

_KINDS = {"ReduceSum": "sum", "ReduceMean": "sum", "ReduceMax": "max", "ReduceMin": "min",
          "ReduceProd": "product"}


def reduce_axes(ctx, node, x):
    """The reduced axes of a Reduce* node, normalised: the attribute, or
    input 1 for ReduceSum from opset 13 and every Reduce* from opset 18
    (with noop_with_empty_axes, which only that form has: no axes then means
    none rather than all)."""
    axes = None
    noop = 0
    if (node.op_type == "ReduceSum" and ctx.opset >= 13) or ctx.opset >= 18:
        if node.has_attr("axes"):
            raise node.error("axes is an input from opset %d, not an attribute"
                             % (13 if node.op_type == "ReduceSum" else 18), "axes")
        a = node.const_input(1)
        if a is not None:
            a = np.asarray(a)
            if a.dtype.kind not in "iu":
                raise node.error("axes must be integers, got %s" % a.dtype)
            axes = [int(v) for v in a.reshape(-1)]
        noop = node.attr("noop_with_empty_axes", 0)
    else:
        axes = node.attr("axes")
    if not axes:
        return [] if noop else list(range(x.rank))
    norm = [normalize_axis(a, x.rank, node) for a in axes]
    if len(set(norm)) != len(norm):
        raise node.error("axes %s repeat an axis" % (list(axes),))
    return sorted(norm)


def _keepdims(node):
    k = node.attr("keepdims", 1)
    if k not in (0, 1):
        raise node.error("keepdims must be 0 or 1, got %r" % (k,), "keepdims")
    return bool(k)


@converter(*_KINDS)
def reduce(ctx, node):
    x = node.input(0)
    if x.dtype == "bool" and ctx.opset >= 20 and node.op_type in ("ReduceMax", "ReduceMin"):
        pass  # bool from ReduceMax/ReduceMin 20: or / and, as accy's max/min
    elif x.dtype not in FLOATS + INTS:
        raise node.unsupported("input dtype %s is not supported" % x.dtype)
    axes = reduce_axes(ctx, node, x)
    keepdims = _keepdims(node)
    if node.op_type == "ReduceMean" and x.dtype not in FLOATS:
        raise node.unsupported("ReduceMean of dtype %s" % x.dtype)
    r = ctx.reduce(_KINDS[node.op_type], x, axes, keepdims=keepdims)
    if node.op_type == "ReduceMean":
        n = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
        r = ctx.div(r, ctx.scalar(n, x.dtype)) if n else \
            ctx.mul(r, ctx.scalar(float("nan"), x.dtype))
    return r


# ---- composite reductions --------------------------------------------------------------
#
# Floats compute in compute_dtype (f16/bf16 in f32, rounded once at the end).
# Integers: ReduceL1 and ReduceSumSquare stay integer (wrapping); ReduceL2,
# ReduceLogSum and ReduceLogSumExp compute in f64 and convert back (truncating
# toward zero, saturating), which is what a float result cast to the input's
# integer type gives.

def _l1(ctx, x, axes):
    return ctx.reduce("sum", ctx.unary("abs", x), axes, keepdims=True)


def _sum_square(ctx, x, axes):
    return ctx.reduce("sum", ctx.mul(x, x), axes, keepdims=True)


def _l2(ctx, x, axes):
    return ctx.unary("sqrt", _sum_square(ctx, x, axes))


def _log_sum(ctx, x, axes):
    return ctx.unary("log", ctx.reduce("sum", x, axes, keepdims=True))


def _log_sum_exp(ctx, x, axes):
    # m + log(sum(exp(x - m))) with m the maximum, replaced by 0 where it is
    # not finite (all -Inf, an Inf, a NaN, or nothing to reduce): the plain
    # formula then gives the right -Inf, Inf or NaN.
    m = ctx.reduce("max", x, axes, keepdims=True)
    m = ctx.select(ctx.unary("is_finite", m), m, ctx.scalar(0, x.dtype))
    e = ctx.unary("exp", ctx.sub(x, ctx.broadcast_to(m, x.shape)))
    return ctx.add(ctx.unary("log", ctx.reduce("sum", e, axes, keepdims=True)), m)


_COMPOSITE = {"ReduceL1": (_l1, False), "ReduceSumSquare": (_sum_square, False),
              "ReduceL2": (_l2, True), "ReduceLogSum": (_log_sum, True),
              "ReduceLogSumExp": (_log_sum_exp, True)}


@converter(*_COMPOSITE)
def reduce_composite(ctx, node):
    x = node.input(0)
    if x.dtype not in FLOATS + INTS:
        raise node.unsupported("input dtype %s is not supported" % x.dtype)
    axes = reduce_axes(ctx, node, x)
    keepdims = _keepdims(node)
    fn, needs_float = _COMPOSITE[node.op_type]
    if x.dtype in FLOATS:
        cdt = compute_dtype(x)
    else:
        cdt = "f64" if needs_float else x.dtype
    r = ctx.cast(fn(ctx, ctx.cast(x, cdt), axes), x.dtype)
    if not keepdims:
        r = ctx.reshape(r, [d for i, d in enumerate(x.shape) if i not in axes])
    return r


@converter("ArgMax", "ArgMin")
def arg(ctx, node):
    x = node.input(0)
    axis = normalize_axis(node.attr("axis", 0), x.rank, node)
    keepdims = node.attr("keepdims", 1)
    if node.attr("select_last_index", 0):
        # The last extremum: reverse the axis, take the first, map back.
        rev = ctx.op("reverse", [x], [axis])
        i = ctx.op(node.op_type.lower(), [rev], [axis], "i64")
        r = ctx.sub(ctx.scalar(x.shape[axis] - 1, "i64"), i)
    else:
        r = ctx.op(node.op_type.lower(), [x], [axis], "i64")
    if keepdims:
        r = ctx.reshape(r, [1 if i == axis else d for i, d in enumerate(x.shape)])
    return r
