"""Neural-network ops: MatMul, Gemm, Softmax, Conv, pooling, normalisation."""

import numpy as np

from .. import dtypes as _dtypes
from .context import FLOATS, INTS, broadcast_shapes, normalize_axis
from .registry import converter


# ---- matrix products ------------------------------------------------------------

@converter("MatMul")
def matmul(ctx, node):
    a, b = node.input(0), node.input(1)
    if a.dtype not in FLOATS + INTS:
        raise node.unsupported("dtype %s" % a.dtype)
    return matmul_values(ctx, node, a, b)


def matmul_values(ctx, node, a, b):
    """numpy.matmul of Tensors |a| and |b| (same dtype)."""
    if a.rank == 0 or b.rank == 0:
        raise node.error("MatMul operands must have rank >= 1")
    squeeze_m = a.rank == 1
    squeeze_n = b.rank == 1
    if squeeze_m:
        a = ctx.reshape(a, (1,) + a.shape)
    if squeeze_n:
        b = ctx.reshape(b, b.shape + (1,))
    if a.shape[-1] != b.shape[-2]:
        raise node.error("contracting dimensions differ: %s x %s" % (list(a.shape),
                                                                     list(b.shape)))
    if b.rank == 2:
        # [..., M, K] x [K, N]: one dot_general with no batch axes.
        r = ctx.dot_general(a, b, lhs_contract=[a.rank - 1], rhs_contract=[0])
    else:
        batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
        a = ctx.broadcast_to(a, batch + a.shape[-2:])
        b = ctx.broadcast_to(b, batch + b.shape[-2:])
        nb = len(batch)
        r = ctx.dot_general(a, b, list(range(nb)), list(range(nb)), [nb + 1], [nb])
    shape = list(r.shape)
    if squeeze_n:
        shape.pop(-1)
    if squeeze_m:
        shape.pop(-1 if squeeze_n else -2)
    return ctx.reshape(r, shape)


@converter("Gemm")
def gemm(ctx, node):
    a, b = node.input(0), node.input(1)
    c = node.input(2, required=False)
    alpha = node.attr("alpha", 1.0)
    beta = node.attr("beta", 1.0)
    trans_a = node.attr("transA", 0)
    trans_b = node.attr("transB", 0)
    legacy_bc = node.attr("broadcast", 0) if ctx.opset < 7 else None
    if ctx.opset >= 7 and node.has_attr("broadcast"):
        raise node.error("attribute 'broadcast' exists only before opset 7", "broadcast")
    if c is None and ctx.opset < 11:
        raise node.error("input C is required before opset 11 (optional from 11)")
    if a.rank != 2 or b.rank != 2:
        raise node.error("A and B must be matrices, got %s and %s" % (list(a.shape),
                                                                       list(b.shape)))
    y = ctx.dot_general(a, b, lhs_contract=[0 if trans_a else 1],
                        rhs_contract=[1 if trans_b else 0])
    if alpha != 1.0:
        y = ctx.mul(y, ctx.scalar(alpha, y.dtype))
    if c is not None:
        if legacy_bc == 0 and c.shape != y.shape:
            # Gemm 1 and 6: C is (M, N) unless broadcast is 1
            raise node.error("C %s is not %s and broadcast is 0 (before opset 7)"
                             % (list(c.shape), list(y.shape)), "broadcast")
        if beta != 1.0:
            c = ctx.mul(c, ctx.scalar(beta, c.dtype))
        y = ctx.add(y, ctx.broadcast_to(c, y.shape))
    return y


# ---- softmax --------------------------------------------------------------------

def _softmax(ctx, node, log):
    x = node.input(0)
    if x.dtype not in FLOATS:
        raise node.unsupported("dtype %s" % x.dtype)
    if ctx.opset < 13:
        axis = normalize_axis(node.attr("axis", 1), x.rank, node)
        flat = (int(np.prod(x.shape[:axis], dtype=np.int64)),
                int(np.prod(x.shape[axis:], dtype=np.int64)))
        y = _softmax_axis(ctx, ctx.reshape(x, flat), 1, log)
        return ctx.reshape(y, x.shape)
    axis = normalize_axis(node.attr("axis", -1), x.rank, node)
    return _softmax_axis(ctx, x, axis, log)


def _softmax_axis(ctx, x, axis, log):
    m = ctx.reduce("max", x, [axis], keepdims=True)
    # An all -inf row gives NaN, as in ONNX's reference; a row with +inf too.
    z = ctx.sub(x, m)
    e = ctx.unary("exp", z)
    s = ctx.reduce("sum", e, [axis], keepdims=True)
    if log:
        return ctx.sub(z, ctx.unary("log", s))
    return ctx.div(e, s)


@converter("Softmax")
def softmax(ctx, node):
    return _softmax(ctx, node, False)


@converter("LogSoftmax")
def log_softmax(ctx, node):
    return _softmax(ctx, node, True)


# ---- convolution and pooling ---------------------------------------------------

def _spatial_attrs(node, n, kernel):
    """strides, dilations and (low, high) pads of a conv/pool node with |n|
    spatial axes of input extents given later; auto_pad resolved by caller."""
    strides = list(node.attr("strides", [1] * n))
    dilations = list(node.attr("dilations", [1] * n))
    pads = list(node.attr("pads", [0] * (2 * n)))
    if len(strides) != n or len(dilations) != n or len(pads) != 2 * n:
        raise node.error("strides, dilations and pads need %d, %d and %d entries"
                         % (n, n, 2 * n))
    if any(s < 1 for s in strides) or any(d < 1 for d in dilations):
        raise node.error("strides and dilations must be >= 1")
    return strides, dilations, pads[:n], pads[n:]


def _auto_pad(node, in_sizes, kernel, strides, dilations, low, high):
    mode = node.attr("auto_pad", "NOTSET")
    if mode in ("NOTSET", ""):
        return low, high
    if mode == "VALID":
        return [0] * len(in_sizes), [0] * len(in_sizes)
    if mode not in ("SAME_UPPER", "SAME_LOWER"):
        raise node.unsupported("auto_pad %r" % mode, "auto_pad")
    low, high = [], []
    for size, k, s, d in zip(in_sizes, kernel, strides, dilations):
        out = -(-size // s)
        total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
        small = total // 2
        if mode == "SAME_UPPER":
            low.append(small)
            high.append(total - small)
        else:
            low.append(total - small)
            high.append(small)
    return low, high


@converter("Conv")
def conv(ctx, node):
    x, w = node.input(0), node.input(1)
    bias = node.input(2, required=False)
    if x.dtype not in FLOATS:
        raise node.unsupported("dtype %s" % x.dtype)
    y = conv_values(ctx, node, x, w)
    if bias is not None:
        y = ctx.add(y, ctx.broadcast_in_dim(bias, y.shape, [1]))
    return y


def conv_values(ctx, node, x, w):
    """ONNX Conv of Tensors |x| and |w| (same dtype) without bias, reading
    the node's kernel_shape, strides, dilations, pads, auto_pad, group."""
    n = x.rank - 2
    if n < 1 or n > 3 or w.rank != x.rank:
        raise node.unsupported("%d spatial axes (accy convolution takes 1 to 3)" % n)
    kernel = list(node.attr("kernel_shape", list(w.shape[2:])))
    if kernel != list(w.shape[2:]):
        raise node.error("kernel_shape %s differs from the weights %s"
                         % (kernel, list(w.shape[2:])), "kernel_shape")
    group = node.attr("group", 1)
    strides, dilations, low, high = _spatial_attrs(node, n, kernel)
    low, high = _auto_pad(node, x.shape[2:], kernel, strides, dilations, low, high)
    attrs = [n] + strides + list(low) + list(high) + [1] * n + dilations + [group]
    return ctx.op("convolution", [x, w], attrs)


def _pool_geometry(node, x, kernel):
    n = x.rank - 2
    strides, dilations, low, high = _spatial_attrs(node, n, kernel)
    low, high = _auto_pad(node, x.shape[2:], kernel, strides, dilations, low, high)
    low, high = list(low), list(high)
    extra = [0] * n
    if node.attr("ceil_mode", 0):
        for i in range(n):
            p = x.shape[2 + i] + low[i] + high[i]
            w = (kernel[i] - 1) * dilations[i] + 1
            if p >= w and (p - w) % strides[i]:
                extra[i] = strides[i] - (p - w) % strides[i]
                # The last window must start inside the input or the low pad.
                out = (p - w + extra[i]) // strides[i] + 1
                if (out - 1) * strides[i] >= x.shape[2 + i] + low[i]:
                    extra[i] = 0
    return strides, dilations, low, high, extra


def _pool_kernel(node, x):
    if x.rank < 3:
        raise node.error("input must have rank >= 3, got %d" % x.rank)
    kernel = node.attr("kernel_shape")
    if kernel is None or len(kernel) != x.rank - 2:
        raise node.error("kernel_shape needs %d entries" % (x.rank - 2), "kernel_shape")
    return list(kernel)


@converter("MaxPool")
def max_pool(ctx, node):
    x = node.input(0)
    storage_order = node.attr("storage_order", 0)
    if storage_order not in (0, 1):
        raise node.error("storage_order must be 0 or 1", "storage_order")
    kernel = _pool_kernel(node, x)
    strides, dilations, low, high, extra = _pool_geometry(node, x, kernel)
    high = [h + e for h, e in zip(high, extra)]
    attrs = [2] + [1, 1] + kernel + [1, 1] + strides + [0, 0] + low + [0, 0] + high + \
        [1] * x.rank + [1, 1] + dilations
    y = ctx.op("reduce_window", [x], attrs)
    want_indices = len(node.outputs) > 1 and node.outputs[1] != ""
    if not want_indices:
        return y
    return [y, _max_pool_indices(ctx, node, x, y, kernel, strides, dilations, low, high,
                                 storage_order)]


#: MaxPool's Indices output compares one strided slice per window position.
MAX_POOL_INDEX_POSITIONS = 1024


def _max_pool_indices(ctx, node, x, y, kernel, strides, dilations, low, high, storage_order):
    """ONNX MaxPool Indices: for each window, the flat index (over the whole
    input, N and C included, padding excluded) of its first maximum in
    row-major window order; storage_order 1 flattens the spatial axes in
    column-major order. Built from one strided slice of the padded input per
    window position, compared with the max; a NaN max picks the first NaN."""
    n = x.rank - 2
    positions = int(np.prod(kernel, dtype=np.int64))
    if positions > MAX_POOL_INDEX_POSITIONS:
        raise node.unsupported("the Indices output with %d window positions (at most %d)"
                               % (positions, MAX_POOL_INDEX_POSITIONS))
    if x.dtype in FLOATS:
        lowest = -np.inf
    elif x.dtype == "bool":
        lowest = False
    else:
        lowest = np.iinfo(_dtypes.to_numpy(x.dtype)).min
    padded = ctx.pad(x, [0, 0] + low, [0, 0] + high, value=lowest)
    sizes = list(x.shape[2:])
    out = list(y.shape[2:])
    spatial = int(np.prod(sizes, dtype=np.int64))
    # Spatial strides of the flat index (row-major, or column-major for storage_order 1).
    flat = [0] * n
    acc = 1
    order = range(n - 1, -1, -1) if storage_order == 0 else range(n)
    for i in order:
        flat[i] = acc
        acc *= sizes[i]
    grids = np.meshgrid(*[np.arange(o, dtype=np.int64) for o in out], indexing="ij")
    # Offset of (n, c): (n * C + c) * spatial.
    nc = ctx.add(ctx.mul(ctx.iota(y.shape, 0, "i64"), ctx.scalar(x.shape[1], "i64")),
                 ctx.iota(y.shape, 1, "i64"))
    base = ctx.mul(nc, ctx.scalar(spatial, "i64"))
    result = ctx.full(y.shape, 0, "i64")
    for k in reversed(list(np.ndindex(*kernel))):
        pos = [grids[i] * strides[i] - low[i] + k[i] * dilations[i] for i in range(n)]
        valid = np.ones(out, dtype=bool)
        index = np.zeros(out, dtype=np.int64)
        for i in range(n):
            valid &= (pos[i] >= 0) & (pos[i] < sizes[i])
            index += pos[i] * flat[i]
        if not valid.any():
            continue
        start = [0, 0] + [k[i] * dilations[i] for i in range(n)]
        limit = [x.shape[0], x.shape[1]] + [k[i] * dilations[i] + (out[i] - 1) * strides[i] + 1
                                            for i in range(n)]
        xk = ctx.slice(padded, start, limit, [1, 1] + strides)
        hit = ctx.compare("EQ", xk, y)
        if x.dtype in FLOATS:
            hit = ctx.binary("or", hit, ctx.compare("NE", xk, xk))
        if not valid.all():
            hit = ctx.binary("and", hit, ctx.broadcast_to(ctx.constant(valid), y.shape))
        result = ctx.select(hit, ctx.broadcast_to(ctx.constant(index), y.shape), result)
    return ctx.add(result, base)


@converter("LpPool")
def lp_pool(ctx, node):
    x = node.input(0)
    if x.dtype not in FLOATS:
        raise node.unsupported("dtype %s" % x.dtype)
    p = node.attr("p", 2)
    if p <= 0:
        raise node.error("p must be positive", "p")
    kernel = _pool_kernel(node, x)
    strides, dilations, low, high, extra = _pool_geometry(node, x, kernel)
    high = [h + e for h, e in zip(high, extra)]
    attrs = [0] + [1, 1] + kernel + [1, 1] + strides + [0, 0] + low + [0, 0] + high + \
        [1] * x.rank + [1, 1] + dilations
    s = ctx.op("reduce_window", [_abs_pow(ctx, x, p)], attrs)
    return _root(ctx, s, p)


def _abs_pow(ctx, x, p):
    a = ctx.unary("abs", x)
    if p == 1:
        return a
    if p == 2:
        return ctx.mul(a, a)
    return ctx.binary("power", a, ctx.scalar(float(p), x.dtype))


def _root(ctx, s, p):
    if p == 1:
        return s
    if p == 2:
        return ctx.unary("sqrt", s)
    return ctx.binary("power", s, ctx.scalar(1.0 / float(p), s.dtype))


@converter("GlobalLpPool")
def global_lp_pool(ctx, node):
    x = node.input(0)
    if x.dtype not in FLOATS:
        raise node.unsupported("dtype %s" % x.dtype)
    if x.rank < 3:
        raise node.error("input must have rank >= 3")
    p = node.attr("p", 2)
    if p <= 0:
        raise node.error("p must be positive", "p")
    s = ctx.reduce("sum", _abs_pow(ctx, x, p), range(2, x.rank), keepdims=True)
    return _root(ctx, s, p)


def _window_counts(size, k, s, d, low, high, extra, include_pad):
    """Number of elements each output window covers along one axis."""
    out = (size + low + high + extra - ((k - 1) * d + 1)) // s + 1
    counts = np.zeros(max(out, 0), dtype=np.int64)
    lo_lim, hi_lim = (-low, size + high) if include_pad else (0, size)
    for o in range(max(out, 0)):
        pos = o * s - low + np.arange(k) * d
        counts[o] = np.count_nonzero((pos >= lo_lim) & (pos < hi_lim))
    return counts


@converter("AveragePool")
def average_pool(ctx, node):
    x = node.input(0)
    if x.dtype not in FLOATS:
        raise node.unsupported("dtype %s" % x.dtype)
    kernel = _pool_kernel(node, x)
    include_pad = node.attr("count_include_pad", 0)
    strides, dilations, low, high, extra = _pool_geometry(node, x, kernel)
    highx = [h + e for h, e in zip(high, extra)]
    attrs = [0] + [1, 1] + kernel + [1, 1] + strides + [0, 0] + low + [0, 0] + highx + \
        [1] * x.rank + [1, 1] + dilations
    s = ctx.op("reduce_window", [x], attrs)
    counts = np.ones((), dtype=np.float64)
    for i in range(x.rank - 2):
        c = _window_counts(x.shape[2 + i], kernel[i], strides[i], dilations[i], low[i],
                           high[i], extra[i], include_pad)
        counts = np.multiply.outer(counts, c)
    counts = np.maximum(counts, 1)
    np_dtype = np.float32 if x.dtype != "f64" else np.float64
    c = ctx.constant(counts.astype(np_dtype))
    c = ctx.cast(c, x.dtype)
    return ctx.div(s, ctx.broadcast_to(c, s.shape))


def _global_pool(ctx, node, kind):
    x = node.input(0)
    if x.rank < 3:
        raise node.error("input must have rank >= 3")
    axes = list(range(2, x.rank))
    r = ctx.reduce(kind, x, axes, keepdims=True)
    if kind == "sum":
        if x.dtype not in FLOATS:
            raise node.unsupported("dtype %s" % x.dtype)
        n = int(np.prod(x.shape[2:], dtype=np.int64))
        r = ctx.div(r, ctx.scalar(max(n, 1), x.dtype))
    return r


@converter("GlobalAveragePool")
def global_average_pool(ctx, node):
    return _global_pool(ctx, node, "sum")


@converter("GlobalMaxPool")
def global_max_pool(ctx, node):
    return _global_pool(ctx, node, "max")


# ---- normalisation ------------------------------------------------------------------

@converter("BatchNormalization")
def batch_norm(ctx, node):
    x = node.input(0)
    scale, bias, mean, var = (node.input(i) for i in range(1, 5))
    eps = node.attr("epsilon", 1e-5)
    momentum = node.attr("momentum", 0.9)
    training = node.attr("training_mode", 0)
    spatial = node.attr("spatial", 1)
    if ctx.opset < 7:
        # Versions 1 and 6: is_test (default 0) is the inverse of training
        # mode: without it, Y is normalised with the batch's own statistics.
        training = 0 if node.attr("is_test", 0) else 1
    elif node.has_attr("is_test"):
        raise node.error("attribute 'is_test' exists only before opset 7", "is_test")
    if ctx.opset >= 9 and node.has_attr("spatial"):
        raise node.error("attribute 'spatial' exists only before opset 9", "spatial")
    if x.dtype not in FLOATS or x.rank < 2:
        raise node.unsupported("input %s%s" % (x.dtype, list(x.shape)))
    n_out = len([o for o in node.outputs if o])
    if ctx.opset < 14 and n_out > 1:
        # Opsets 6..13 produce the extra outputs only in training, with a
        # definition of saved_var the spec leaves open.
        raise node.unsupported("outputs other than Y (training statistics) before opset 14")
    if not training and n_out > 1:
        raise node.error("running_mean and running_var exist only in training mode")
    # spatial 0 (opsets 7..8): the statistics have shape [C, D1, ...].
    dims = [1] if spatial else list(range(1, x.rank))

    def chan(t):
        return ctx.broadcast_in_dim(ctx.cast(t, x.dtype), x.shape, dims)

    if training:
        if not spatial:
            raise node.unsupported("training_mode with spatial 0", "spatial")
        axes = [a for a in range(x.rank) if a != 1]
        count = ctx.scalar(max(int(np.prod([x.shape[a] for a in axes], dtype=np.int64)), 1),
                           x.dtype)
        bmean = ctx.div(ctx.reduce("sum", x, axes), count)
        diff = ctx.sub(x, chan(bmean))
        bvar = ctx.div(ctx.reduce("sum", ctx.mul(diff, diff), axes), count)
        inv = ctx.unary("rsqrt", ctx.add(bvar, ctx.scalar(eps, x.dtype)))
        y = ctx.add(ctx.mul(diff, chan(ctx.mul(ctx.cast(scale, x.dtype), inv))), chan(bias))

        def running(old, new):
            new = ctx.cast(new, old.dtype)
            return ctx.add(ctx.mul(old, ctx.scalar(momentum, old.dtype)),
                           ctx.mul(new, ctx.scalar(1.0 - momentum, old.dtype)))

        return [y, running(mean, bmean), running(var, bvar)]

    inv = ctx.unary("rsqrt", ctx.add(var, ctx.scalar(eps, var.dtype)))
    a = ctx.mul(ctx.cast(scale, var.dtype), inv)
    y = ctx.mul(ctx.sub(x, chan(mean)), chan(a))
    return ctx.add(y, chan(bias))


# ---- dropout (inference) -------------------------------------------------------------

@converter("Dropout")
def dropout(ctx, node):
    """Inference: the output is the input and the mask all ones. Training
    with a non-zero ratio is random, hence unsupported."""
    x = node.input(0)
    node.attr("seed")  # only used by training
    if ctx.opset < 7:
        ratio = node.attr("ratio", 0.5)
        training = not node.attr("is_test", 0)
    elif ctx.opset < 12:
        ratio = node.attr("ratio", 0.5)
        training = False
    else:
        t = node.const_input(2)
        training = False if t is None else bool(np.asarray(t).reshape(-1)[0])
        ratio = 0.5
        if training:  # the ratio matters (and must be known) only when training
            r = node.const_input(1)
            if r is not None:
                ratio = float(np.asarray(r, dtype=np.float64).reshape(-1)[0])
    if not 0.0 <= ratio < 1.0:
        raise node.error("ratio %r is outside [0, 1)" % ratio)
    if training and ratio != 0.0:
        raise node.unsupported("training mode with ratio %g (random)" % ratio,
                               "is_test" if ctx.opset < 7 else None)
    # The mask is bool from opset 10, of the data's type before.
    mask_dtype = "bool" if ctx.opset >= 10 else x.dtype
    return [x, ctx.full(x.shape, 1, mask_dtype)]


# ---- transposed convolution -----------------------------------------------------------

@converter("ConvTranspose")
def conv_transpose(ctx, node):
    """The gradient of Conv: a convolution of the input dilated by the
    strides (lhs_dilation) with the kernel flipped spatially and its channel
    axes swapped per group, padded by (dilated kernel - 1 - pads)."""
    x, w = node.input(0), node.input(1)
    bias = node.input(2, required=False)
    if x.dtype not in FLOATS:
        raise node.unsupported("dtype %s" % x.dtype)
    n = x.rank - 2
    if n < 1 or n > 3 or w.rank != x.rank:
        raise node.unsupported("%d spatial axes (accy convolution takes 1 to 3)" % n)
    group = node.attr("group", 1)
    c = x.shape[1]
    if group < 1 or c % group or w.shape[0] != c:
        raise node.error("weights %s do not fit %d input channels in %d groups"
                         % (list(w.shape), c, group), "group")
    kernel = list(node.attr("kernel_shape", list(w.shape[2:])))
    if kernel != list(w.shape[2:]):
        raise node.error("kernel_shape %s differs from the weights %s"
                         % (kernel, list(w.shape[2:])), "kernel_shape")
    strides, dilations, low, high = _spatial_attrs(node, n, kernel)
    out_pad = list(node.attr("output_padding", [0] * n))
    if len(out_pad) != n:
        raise node.error("output_padding needs %d entries" % n, "output_padding")
    out_shape = node.attr("output_shape")
    mode = node.attr("auto_pad", "NOTSET")
    if mode not in ("NOTSET", "", "VALID", "SAME_UPPER", "SAME_LOWER"):
        raise node.unsupported("auto_pad %r" % mode, "auto_pad")
    m = w.shape[1] * group
    in_sizes = x.shape[2:]
    keff = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    full = [s * (i - 1) + op + ke for s, i, op, ke in zip(strides, in_sizes, out_pad, keff)]
    target = None
    if out_shape is not None:
        out_shape = list(out_shape)
        if len(out_shape) == n + 2 and out_shape[:2] == [x.shape[0], m]:
            out_shape = out_shape[2:]
        if len(out_shape) != n or any(o < 0 for o in out_shape):
            raise node.error("output_shape needs %d spatial sizes" % n, "output_shape")
        target = out_shape
    elif mode in ("SAME_UPPER", "SAME_LOWER"):
        target = [i * s for i, s in zip(in_sizes, strides)]
    elif mode == "VALID":
        low, high = [0] * n, [0] * n
    if target is not None:
        # The spec's split (total may be negative: the output grows at the end).
        low, high = [], []
        for f, t in zip(full, target):
            total = f - t
            if mode == "SAME_UPPER":
                lo = total // 2
                hi = total - lo
            else:
                hi = total // 2
                lo = total - hi
            low.append(lo)
            high.append(hi)
    # [C, M/G, k...] -> [M, C/G, k...] per group, flipped spatially.
    k = w.shape[2:]
    wt = ctx.reshape(w, (group, c // group, w.shape[1]) + k)
    wt = ctx.transpose(wt, [0, 2, 1] + list(range(3, 3 + n)))
    wt = ctx.reshape(wt, (m, c // group) + k)
    wt = ctx.op("reverse", [wt], list(range(2, 2 + n)))
    plow = [ke - 1 - lo for ke, lo in zip(keff, low)]
    phigh = [ke - 1 - hi + op for ke, hi, op in zip(keff, high, out_pad)]
    attrs = [n] + [1] * n + plow + phigh + strides + dilations + [group]
    y = ctx.op("convolution", [x, wt], attrs)
    if bias is not None:
        y = ctx.add(y, ctx.broadcast_in_dim(bias, y.shape, [1]))
    return y
