"""Scatter and top-k ops: ScatterND, ScatterElements, Scatter, MaxUnpool and
TopK, on accy's scatter, sort and argsort (wire 1.1).

accy's scatter is ONNX ScatterND (data, indices[..., k], updates) with the
reductions; the others lower to it:

- ScatterElements (and its opset 9/10 name Scatter) builds one full index
  vector per update element: the element's own position (iotas) in every dim
  but |axis|, and the given index in |axis|.
- MaxUnpool scatters the pooled values into zeros of the unpooled shape
  ((d - 1) * stride + kernel - pads) at the flat indices MaxPool produced
  (indices into that whole tensor); a larger output_shape pads zeros at the
  end of each axis (as the ONNX reference does; pads are then ignored).

Index semantics are accy's: a negative index wraps once (i + d), an index
vector still out of range drops its update (ONNX calls that an error; it is
not checked at run time), and duplicates combine in row-major order of the
updates (so for reduction "none" the last one wins; ONNX leaves it undefined).

TopK sorts along the axis (descending for largest) and slices the first k.
accy's sort and argsort are stable in both directions, so among equal values
the lower index comes first, as the ONNX spec says; NaN counts as greater
than every number (first for largest, last for smallest). sorted=0 leaves the
order to the implementation: the result is sorted then too.
"""

import numpy as np

from .. import builder as _builder
from .context import INTS, Tensor, normalize_axis
from .registry import converter

# ONNX reduction attribute -> (accy scatter mode, first opset that has it)
_REDUCTIONS = {"none": ("replace", 11), "add": ("add", 16), "mul": ("multiply", 16),
               "max": ("max", 18), "min": ("min", 18)}


def _scatter_mode(ctx, node):
    red = node.attr("reduction", "none")
    if red not in _REDUCTIONS:
        raise node.unsupported("reduction %r" % red, "reduction")
    mode, since = _REDUCTIONS[red]
    if red != "none" and ctx.opset < 16:
        raise node.error("the reduction attribute needs opset 16 (the model has %d)"
                         % ctx.opset, "reduction")
    if ctx.opset < since:
        raise node.unsupported("reduction %r needs opset %d (the model has %d)"
                               % (red, since, ctx.opset), "reduction")
    return _builder.SCATTER[mode]


def _check_data_updates(node, data, updates, indices):
    if indices.dtype not in INTS:
        raise node.error("indices must be integers, got %s" % indices.dtype)
    if updates.dtype != data.dtype:
        raise node.error("updates dtype %s differs from data dtype %s"
                         % (updates.dtype, data.dtype))
    if data.rank == 0:
        raise node.error("data must have rank >= 1")


def _scatter(ctx, data, indices, updates, mode):
    if updates.size == 0:
        return data  # no update lands anywhere
    return ctx.op("scatter", [data, indices, updates], [mode])


@converter("ScatterND", min_opset=11)
def scatter_nd(ctx, node):
    data, indices, updates = node.input(0), node.input(1), node.input(2)
    mode = _scatter_mode(ctx, node)
    _check_data_updates(node, data, updates, indices)
    if indices.rank == 0:
        raise node.error("indices must have rank >= 1")
    k = indices.shape[-1]
    if k > data.rank:
        raise node.error("indices' last dim %d exceeds the data rank %d" % (k, data.rank))
    want = indices.shape[:-1] + data.shape[k:]
    if updates.shape != want:
        raise node.error("updates shape %s, expected %s (indices.shape[:-1] + "
                         "data.shape[%d:])" % (list(updates.shape), list(want), k))
    return _scatter(ctx, data, indices, updates, mode)


def scatter_elements(ctx, node, data, indices, updates, axis, mode):
    """data with data[i with i[axis] = indices[i]] combined with updates[i]
    for every position i of indices (ONNX ScatterElements)."""
    _check_data_updates(node, data, updates, indices)
    r = data.rank
    if indices.rank != r:
        raise node.error("indices rank %d differs from data rank %d" % (indices.rank, r))
    if updates.shape != indices.shape:
        raise node.error("updates shape %s differs from indices shape %s"
                         % (list(updates.shape), list(indices.shape)))
    for a in range(r):
        if a != axis and indices.shape[a] > data.shape[a]:
            raise node.error("indices dim %d (%d) exceeds the data's (%d)"
                             % (a, indices.shape[a], data.shape[a]))
    if indices.size == 0:
        return data
    # u64 stays u64 (accy drops values above INT64_MAX); every other index
    # dtype widens to i64 without loss.
    idt = "u64" if indices.dtype == "u64" else "i64"
    col = indices.shape + (1,)
    parts = []
    for a in range(r):
        if a == axis:
            p = ctx.cast(indices, idt)
        else:
            p = ctx.iota(indices.shape, a, idt)
        parts.append(ctx.reshape(p, col))
    full = ctx.concat(parts, r)
    return _scatter(ctx, data, full, updates, mode)


@converter("ScatterElements", min_opset=11)
def scatter_elements_op(ctx, node):
    data, indices, updates = node.input(0), node.input(1), node.input(2)
    mode = _scatter_mode(ctx, node)
    if data.rank == 0:
        raise node.error("data must have rank >= 1")
    axis = normalize_axis(node.attr("axis", 0), data.rank, node)
    return scatter_elements(ctx, node, data, indices, updates, axis, mode)


@converter("Scatter", min_opset=9)
def scatter_op(ctx, node):
    if ctx.opset >= 11:
        raise node.error("Scatter was removed in opset 11 (use ScatterElements)")
    data, indices, updates = node.input(0), node.input(1), node.input(2)
    if data.rank == 0:
        raise node.error("data must have rank >= 1")
    axis = normalize_axis(node.attr("axis", 0), data.rank, node)
    return scatter_elements(ctx, node, data, indices, updates, axis,
                            _builder.SCATTER["replace"])


@converter("MaxUnpool", min_opset=9)
def max_unpool(ctx, node):
    x, idx = node.input(0), node.input(1)
    if x.rank < 3:
        raise node.error("X must have rank >= 3 (N, C, spatial...), got %d" % x.rank)
    if idx.dtype not in INTS:
        raise node.error("I must be integers, got %s" % idx.dtype)
    if idx.shape != x.shape:
        raise node.error("I shape %s differs from X shape %s"
                         % (list(idx.shape), list(x.shape)))
    n = x.rank - 2
    kernel = node.attr("kernel_shape")
    if kernel is None:
        raise node.error("kernel_shape is required", "kernel_shape")
    kernel = [int(k) for k in kernel]
    strides = [int(s) for s in node.attr("strides", [1] * n)]
    pads = [int(p) for p in node.attr("pads", [0] * (2 * n))]
    if len(kernel) != n or len(strides) != n or len(pads) != 2 * n:
        raise node.error("kernel_shape, strides and pads need %d, %d and %d entries"
                         % (n, n, 2 * n))
    if any(k < 1 for k in kernel) or any(s < 1 for s in strides) or any(p < 0 for p in pads):
        raise node.error("kernel_shape and strides must be >= 1 and pads >= 0")
    given = None
    if node.has_input(2):
        given = np.asarray(node.const_input(2))
        if given.dtype.kind not in "iu" or given.ndim != 1:
            raise node.error("output_shape must be a 1-D integer tensor, got %s %s"
                             % (given.dtype, list(given.shape)))
        given = tuple(int(d) for d in given)
        if len(given) != x.rank:
            raise node.error("output_shape %s must have %d entries" % (list(given), x.rank))
        pads = [0] * (2 * n)  # the spec: with output_shape, pads are ignored
    # The unpooled shape MaxPool's indices refer to (flat over all of it).
    inferred = x.shape[:2] + tuple((d - 1) * s + k - pads[i] - pads[n + i]
                                   for i, (d, s, k) in enumerate(zip(x.shape[2:], strides,
                                                                     kernel)))
    if any(d < 0 for d in inferred):
        raise node.error("the unpooled shape %s is negative" % (list(inferred),))
    if given is not None and any(g < d for g, d in zip(given, inferred)):
        raise node.error("output_shape %s is smaller than the unpooled shape %s"
                         % (list(given), list(inferred)))
    total = int(np.prod(inferred, dtype=np.int64))
    y = ctx.full((total,), 0, x.dtype)
    if x.size:
        # I holds flat indices into the whole unpooled tensor, in [0, total):
        # a negative one is invalid and is dropped (made out of range), not
        # wrapped like scatter would; one above is dropped by scatter.
        flat = ctx.reshape(ctx.cast(idx, "u64" if idx.dtype == "u64" else "i64"),
                           (x.size, 1))
        if flat.dtype == "i64":
            neg = ctx.compare("LT", flat, ctx.scalar(0, "i64"))
            flat = ctx.select(neg, ctx.scalar(total, "i64"), flat)
        y = ctx.op("scatter", [y, flat, ctx.reshape(x, (x.size,))],
                   [_builder.SCATTER["replace"]])
    y = ctx.reshape(y, inferred)
    if given is not None and given != inferred:
        # output_shape only adds room: the unpooled values keep their
        # positions and the new elements at the end of each axis are 0.
        y = ctx.pad(y, [0] * x.rank, [g - d for g, d in zip(given, inferred)])
    return y


@converter("TopK")
def top_k(ctx, node):
    x = node.input(0)
    if x.rank == 0:
        raise node.error("X must have rank >= 1")
    if x.dtype == "bool":
        raise node.error("X must be numeric, got bool")
    axis = normalize_axis(node.attr("axis", -1), x.rank, node)
    if ctx.opset < 10:
        k = node.attr("k")
        if k is None:
            raise node.error("attribute k is required", "k")
    else:
        kv = np.asarray(node.const_input(1, required=True))
        if kv.size != 1 or kv.dtype.kind not in "iu":
            raise node.error("K must hold one integer, got %s %s"
                             % (kv.dtype, list(kv.shape)))
        k = kv.reshape(-1)[0]
    k = int(k)
    largest, sorted_ = 1, 1
    if ctx.opset >= 11:
        largest = node.attr("largest", 1)
        sorted_ = node.attr("sorted", 1)
        if largest not in (0, 1):
            raise node.error("largest must be 0 or 1, got %r" % largest, "largest")
        if sorted_ not in (0, 1):
            raise node.error("sorted must be 0 or 1, got %r" % sorted_, "sorted")
    d = x.shape[axis]
    if not 0 <= k <= d:
        raise node.error("k %d is not in [0, %d] (the size of axis %d)" % (k, d, axis))
    start = [0] * x.rank
    limit = list(x.shape)
    limit[axis] = k
    attrs = [axis, 1 if largest else 0]
    values = indices = None
    out_shape = tuple(limit)
    want_values = len(node.outputs) > 0 and node.outputs[0] != ""
    want_indices = len(node.outputs) > 1 and node.outputs[1] != ""
    if want_values:
        if k == 0 or d <= 1:
            values = ctx.slice(x, start, limit)
        else:
            values = ctx.slice(ctx.op("sort", [x], attrs), start, limit)
    if want_indices:
        if k == 0:
            indices = Tensor.constant(np.zeros(out_shape, np.int64), "i64")
        else:
            order = ctx.op("argsort", [x], attrs, "i64")
            indices = ctx.slice(order, start, limit)
    return [values, indices]
