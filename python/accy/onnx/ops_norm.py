"""Normalisation ops: LayerNormalization, InstanceNormalization, LRN,
MeanVarianceNormalization (BatchNormalization lives in ops_nn)."""

import numpy as np

from .context import FLOATS, ONNX_DTYPES, normalize_axis
from .registry import converter


def _count(shape, axes):
    return int(np.prod([shape[a] for a in axes], dtype=np.int64))


def _mean(ctx, x, axes):
    """Mean over |axes| with keepdims (sum divided by the element count)."""
    s = ctx.reduce("sum", x, axes, keepdims=True)
    return ctx.div(s, ctx.scalar(max(_count(x.shape, axes), 1), x.dtype))


@converter("LayerNormalization", min_opset=17)
def layer_norm(ctx, node):
    """Normalises over the axes from |axis| on, in the stash type (the
    precision of Mean and InvStdDev), then scales and shifts in X's type."""
    x, scale = node.input(0), node.input(1)
    bias = node.input(2, required=False)
    if x.dtype not in FLOATS:
        raise node.unsupported("dtype %s" % x.dtype)
    if x.rank == 0:
        raise node.error("X must have rank >= 1")
    axis = normalize_axis(node.attr("axis", -1), x.rank, node)
    eps = node.attr("epsilon", 1e-5)
    stash = node.attr("stash_type", 1)
    stash_dtype = ONNX_DTYPES.get(stash)
    if stash_dtype not in FLOATS:
        raise node.unsupported("stash_type %d (must be a float type)" % stash, "stash_type")
    axes = list(range(axis, x.rank))
    xs = ctx.cast(x, stash_dtype)
    mean = _mean(ctx, xs, axes)
    diff = ctx.sub(xs, mean)
    var = _mean(ctx, ctx.mul(diff, diff), axes)
    inv_std = ctx.div(ctx.scalar(1, stash_dtype),
                      ctx.unary("sqrt", ctx.add(var, ctx.scalar(eps, stash_dtype))))
    normed = ctx.cast(ctx.mul(diff, inv_std), x.dtype)
    y = ctx.mul(normed, ctx.cast(scale, x.dtype))
    if bias is not None:
        y = ctx.add(y, ctx.cast(bias, x.dtype))
    if y.shape != x.shape:
        raise node.error("Scale or B %s does not broadcast to X %s"
                         % (list(scale.shape), list(x.shape)))
    return [y, mean, inv_std]


@converter("InstanceNormalization")
def instance_norm(ctx, node):
    x, scale, bias = node.input(0), node.input(1), node.input(2)
    if x.dtype not in FLOATS:
        raise node.unsupported("dtype %s" % x.dtype)
    if x.rank < 3:
        raise node.error("input must have rank >= 3, got %d" % x.rank)
    if scale.shape != (x.shape[1],) or bias.shape != (x.shape[1],):
        raise node.error("scale and B must have shape [%d]" % x.shape[1])
    eps = node.attr("epsilon", 1e-5)
    axes = list(range(2, x.rank))
    mean = _mean(ctx, x, axes)
    diff = ctx.sub(x, mean)
    var = _mean(ctx, ctx.mul(diff, diff), axes)
    inv = ctx.unary("rsqrt", ctx.add(var, ctx.scalar(eps, x.dtype)))
    y = ctx.mul(diff, inv)
    y = ctx.mul(y, ctx.broadcast_in_dim(ctx.cast(scale, x.dtype), x.shape, [1]))
    return ctx.add(y, ctx.broadcast_in_dim(ctx.cast(bias, x.dtype), x.shape, [1]))


@converter("LRN")
def lrn(ctx, node):
    """y = x / (bias + alpha / size * sum of squares over the channel window
    [c - floor((size-1)/2), c + ceil((size-1)/2)]) ^ beta."""
    x = node.input(0)
    if x.dtype not in FLOATS:
        raise node.unsupported("dtype %s" % x.dtype)
    if x.rank < 3:
        raise node.error("input must have rank >= 3, got %d" % x.rank)
    size = node.attr("size")
    if size is None or size < 1:
        raise node.error("size must be given and positive", "size")
    alpha = node.attr("alpha", 1e-4)
    beta = node.attr("beta", 0.75)
    bias = node.attr("bias", 1.0)
    r = x.rank
    window = [1] * r
    window[1] = size
    low = [0] * r
    high = [0] * r
    low[1] = (size - 1) // 2
    high[1] = size - 1 - low[1]
    attrs = [0] + window + [1] * r + low + high + [1] * r + [1] * r
    sq = ctx.op("reduce_window", [ctx.mul(x, x)], attrs)
    d = ctx.add(ctx.mul(sq, ctx.scalar(alpha / size, x.dtype)), ctx.scalar(bias, x.dtype))
    return ctx.div(x, ctx.binary("power", d, ctx.scalar(beta, x.dtype)))


@converter("MeanVarianceNormalization")
def mean_variance_norm(ctx, node):
    """ONNX's function body: (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9)."""
    x = node.input(0)
    if x.dtype not in FLOATS:
        raise node.unsupported("dtype %s" % x.dtype)
    axes = sorted(set(normalize_axis(a, x.rank, node)
                      for a in node.attr("axes", [0, 2, 3])))
    mean = _mean(ctx, x, axes)
    mean_sq = _mean(ctx, ctx.mul(x, x), axes)
    std = ctx.unary("sqrt", ctx.sub(mean_sq, ctx.mul(mean, mean)))
    return ctx.div(ctx.sub(x, mean), ctx.add(std, ctx.scalar(1e-9, x.dtype)))


@converter("GroupNormalization", min_opset=18)
def group_norm(ctx, node):
    """Y = (X - mean) / sqrt(var + epsilon) * scale + bias with the
    statistics over each group of C / G channels and all spatial positions.
    Opset 18: scale and bias have one value per group; 21: one per channel,
    and stash_type names the precision of the statistics (default f32)."""
    x, scale, bias = node.input(0), node.input(1), node.input(2)
    if x.dtype not in FLOATS:
        raise node.unsupported("dtype %s" % x.dtype)
    if x.rank < 2:
        raise node.error("X must have rank >= 2, got %s" % list(x.shape))
    g = node.attr("num_groups")
    if g is None:
        raise node.error("attribute 'num_groups' is required", "num_groups")
    eps = node.attr("epsilon", 1e-5)
    n, c = x.shape[:2]
    if g < 1 or c % g:
        raise node.error("num_groups %d does not divide the %d channels" % (g, c),
                         "num_groups")
    dt = "f32" if x.dtype in ("f16", "bf16") else x.dtype
    if ctx.opset >= 21:
        stash = node.attr("stash_type", 1)
        try:
            dt = {1: "f32", 11: "f64"}[stash]
        except KeyError:
            raise node.unsupported("stash_type %r (FLOAT and DOUBLE are supported)" % stash,
                                   "stash_type") from None
        per = c
    else:
        per = g
    for name, t in (("scale", scale), ("bias", bias)):
        if t.shape != (per,):
            raise node.error("%s must have shape [%d] at opset %d, got %s"
                             % (name, per, ctx.opset, list(t.shape)))
    spatial = int(np.prod(x.shape[2:], dtype=np.int64))
    m = (c // g) * spatial
    v = ctx.reshape(ctx.cast(x, dt), (n, g, m))
    count = ctx.scalar(max(m, 1), dt)
    mean = ctx.div(ctx.reduce("sum", v, [2], keepdims=True), count)
    d = ctx.sub(v, mean)
    var = ctx.div(ctx.reduce("sum", ctx.mul(d, d), [2], keepdims=True), count)
    y = ctx.mul(d, ctx.unary("rsqrt", ctx.add(var, ctx.scalar(eps, dt))))
    y = ctx.reshape(y, x.shape)
    s, b = ctx.cast(scale, dt), ctx.cast(bias, dt)
    if per == g:  # one value per group: the same for its C / G channels
        s = ctx.reshape(ctx.broadcast_in_dim(s, (g, c // g), [0]), (c,))
        b = ctx.reshape(ctx.broadcast_in_dim(b, (g, c // g), [0]), (c,))
    y = ctx.add(ctx.mul(y, ctx.broadcast_in_dim(s, x.shape, [1])),
                ctx.broadcast_in_dim(b, x.shape, [1]))
    return ctx.cast(y, x.dtype)
