"""Shape and data-movement ops: Reshape, Transpose, Flatten, Concat, Gather,
Squeeze/Unsqueeze, Slice, Split, Pad, Tile, Expand, DepthToSpace,
SpaceToDepth, Compress, Trilu, and the shape computations that fold at import
time (Constant, Shape, Size, ConstantOfShape, Range)."""

import numpy as np
from onnx import numpy_helper

from .. import dtypes as _dtypes
from .context import INTS, Tensor, broadcast_shapes, normalize_axis, onnx_dtype
from .importer import FOLD_MAX_ELEMENTS
from .registry import converter


def _ints(node, a, what):
    a = np.asarray(a)
    if a.dtype.kind not in "iu":
        raise node.error("%s must be integers, got %s" % (what, a.dtype))
    return [int(v) for v in a.reshape(-1)]


# ---- constants and shape computations --------------------------------------------

@converter("Constant")
def constant(ctx, node):
    attrs = node._attrs
    if "value" in attrs:
        node.ignore_attrs("value")
        t = attrs["value"].t
        dtype = onnx_dtype(t.data_type, "the constant")
        a = numpy_helper.to_array(t)
        if dtype == "bf16" and a.dtype != np.uint16:
            a = _dtypes.f32_to_bf16(a.astype(np.float32))
        return Tensor.constant(a, dtype)
    for name, dtype, rank in (("value_float", "f32", 0), ("value_floats", "f32", 1),
                              ("value_int", "i64", 0), ("value_ints", "i64", 1)):
        if name in attrs:
            return Tensor.constant(np.array(node.attr(name)).reshape((-1,) * rank), dtype)
    for name in ("sparse_value", "value_string", "value_strings"):
        if name in attrs:
            raise node.unsupported("constants of this kind are not supported", name)
    raise node.error("a Constant needs a value attribute")


@converter("Shape")
def shape(ctx, node):
    x = node.input(0)
    dims = list(x.shape)
    start = node.attr("start", 0)
    end = node.attr("end", None)
    r = len(dims)
    start = min(max(start + r if start < 0 else start, 0), r)
    end = r if end is None else min(max(end + r if end < 0 else end, 0), r)
    return Tensor.constant(np.array(dims[start:end], dtype=np.int64).reshape(-1))


@converter("Size")
def size(ctx, node):
    return Tensor.constant(np.array(node.input(0).size, dtype=np.int64))


@converter("ConstantOfShape")
def constant_of_shape(ctx, node):
    dims = _ints(node, node.const_input(0, required=True), "the shape")
    if any(d < 0 for d in dims):
        raise node.error("negative dimension in %s" % dims)
    value = node.attr("value")
    if value is None:
        value, dtype = np.zeros((), np.float32), "f32"
    else:
        dtype = onnx_dtype(node._attrs["value"].t.data_type, "value")
        value = np.asarray(value).reshape(-1)
        if value.size != 1:
            raise node.error("value must hold one element", "value")
        value = value[0]
    n = int(np.prod(dims, dtype=np.int64))
    if n <= FOLD_MAX_ELEMENTS and dtype != "bf16":
        return Tensor.constant(np.full(dims, value, dtype=_dtypes.to_numpy(dtype)), dtype)
    return ctx.full(dims, value, dtype)


@converter("Range")
def range_(ctx, node):
    start, limit, delta = (node.const_input(i, required=True) for i in range(3))
    x = node.input(0)
    n = int(max(np.ceil((np.float64(limit) - np.float64(start)) / np.float64(delta)), 0))
    dt = _dtypes.to_numpy(x.dtype)
    out = (np.asarray(start, dt) + np.arange(n, dtype=np.float64 if x.dtype in
                                              ("f32", "f64", "f16") else np.int64)
           * np.asarray(delta, dt)).astype(dt)
    return Tensor.constant(out, x.dtype)


# ---- reshaping ---------------------------------------------------------------------

@converter("Reshape")
def reshape(ctx, node):
    x = node.input(0)
    if ctx.opset < 5:
        # Reshape 1: the shape is an attribute (same 0 and -1 rules).
        dims = node.attr("shape")
        if dims is None:
            raise node.error("attribute 'shape' is required before opset 5", "shape")
        dims = [int(d) for d in dims]
    else:
        dims = _ints(node, node.const_input(1, required=True), "the shape")
    allowzero = node.attr("allowzero", 0)
    out = []
    for i, d in enumerate(dims):
        if d == 0 and not allowzero:
            if i >= x.rank:
                raise node.error("shape[%d] = 0 copies a dimension the input lacks" % i)
            out.append(x.shape[i])
        else:
            out.append(d)
    if out.count(-1) > 1 or any(d < -1 for d in out):
        raise node.error("bad shape %s" % dims)
    if -1 in out:
        known = int(np.prod([d for d in out if d != -1], dtype=np.int64))
        if known == 0 or x.size % known:
            raise node.error("cannot infer -1 in %s for %d elements" % (dims, x.size))
        out[out.index(-1)] = x.size // known
    if int(np.prod(out, dtype=np.int64)) != x.size:
        raise node.error("shape %s does not hold %d elements" % (out, x.size))
    return ctx.reshape(x, out)


@converter("Flatten")
def flatten(ctx, node):
    x = node.input(0)
    axis = node.attr("axis", 1)
    if axis < 0:
        axis += x.rank
    if not 0 <= axis <= x.rank:
        raise node.error("axis out of range for rank %d" % x.rank, "axis")
    outer = int(np.prod(x.shape[:axis], dtype=np.int64))
    return ctx.reshape(x, (outer, int(np.prod(x.shape[axis:], dtype=np.int64))))


def _axes(ctx, node, input_index):
    if ctx.opset >= 13:
        a = node.const_input(input_index)
        return None if a is None else _ints(node, a, "axes")
    a = node.attr("axes")
    return None if a is None else list(a)


@converter("Unsqueeze")
def unsqueeze(ctx, node):
    x = node.input(0)
    axes = _axes(ctx, node, 1)
    if axes is None:
        raise node.error("axes are required")
    rank = x.rank + len(axes)
    axes = sorted(normalize_axis(a, rank, node) for a in axes)
    if len(set(axes)) != len(axes):
        raise node.error("repeated axis in %s" % axes)
    dims = list(x.shape)
    for a in axes:
        dims.insert(a, 1)
    return ctx.reshape(x, dims)


@converter("Squeeze")
def squeeze(ctx, node):
    x = node.input(0)
    axes = _axes(ctx, node, 1)
    if axes is None:
        axes = [i for i, d in enumerate(x.shape) if d == 1]
    axes = set(normalize_axis(a, x.rank, node) for a in axes)
    for a in axes:
        if x.shape[a] != 1:
            raise node.error("cannot squeeze axis %d of extent %d" % (a, x.shape[a]))
    return ctx.reshape(x, [d for i, d in enumerate(x.shape) if i not in axes])


@converter("Transpose")
def transpose(ctx, node):
    x = node.input(0)
    perm = node.attr("perm")
    perm = list(range(x.rank))[::-1] if perm is None else list(perm)
    if sorted(perm) != list(range(x.rank)):
        raise node.error("perm %s is not a permutation of %d axes" % (perm, x.rank), "perm")
    return ctx.transpose(x, perm)


# ---- joining and indexing -------------------------------------------------------

@converter("Concat")
def concat(ctx, node):
    xs = [node.input(i) for i in range(len(node.inputs)) if node.has_input(i)]
    if not xs:
        raise node.error("needs at least one input")
    axis = node.attr("axis", 1 if ctx.opset < 4 else None)  # Concat 1: default 1
    if axis is None:
        raise node.error("attribute 'axis' is required", "axis")
    axis = normalize_axis(axis, xs[0].rank, node)
    if xs[0].rank == 0:
        raise node.error("cannot concatenate scalars")
    return ctx.concat(xs, axis)


@converter("Gather")
def gather(ctx, node):
    x, idx = node.input(0), node.input(1)
    if idx.dtype not in INTS:
        raise node.error("indices must be integers, got %s" % idx.dtype)
    axis = normalize_axis(node.attr("axis", 0), x.rank, node)
    return ctx.gather(x, idx, axis)


# ---- slicing, splitting, padding ----------------------------------------------------

def _index_array(d):
    """A constant index array 0..d-1 in the narrowest of i32/i64."""
    return np.int32 if d < (1 << 31) else np.int64


@converter("Slice")
def slice_(ctx, node):
    x = node.input(0)
    if ctx.opset < 10:
        starts = node.attr("starts")
        ends = node.attr("ends")
        if starts is None or ends is None:
            raise node.error("attributes 'starts' and 'ends' are required")
        axes = node.attr("axes")
        steps = None
    else:
        starts = _ints(node, node.const_input(1, required=True), "starts")
        ends = _ints(node, node.const_input(2, required=True), "ends")
        axes = node.const_input(3)
        axes = None if axes is None else _ints(node, axes, "axes")
        steps = node.const_input(4)
        steps = None if steps is None else _ints(node, steps, "steps")
    starts, ends = list(starts), list(ends)
    if axes is None:
        axes = list(range(len(starts)))
    if steps is None:
        steps = [1] * len(starts)
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise node.error("starts, ends, axes and steps differ in length (%d, %d, %d, %d)"
                         % (len(starts), len(ends), len(axes), len(steps)))
    axes = [normalize_axis(a, x.rank, node) for a in axes]
    if len(set(axes)) != len(axes):
        raise node.error("repeated axis in %s" % axes)
    start, limit, stride = [0] * x.rank, list(x.shape), [1] * x.rank
    reverse = []
    for a, s, e, st in zip(axes, starts, ends, steps):
        d = x.shape[a]
        if st == 0:
            raise node.error("step 0 on axis %d" % a)
        s = s + d if s < 0 else s
        e = e + d if e < 0 else e
        if st > 0:
            s, e = min(max(s, 0), d), min(max(e, 0), d)
            start[a], limit[a], stride[a] = s, max(e, s), st
        elif d == 0:
            start[a], limit[a] = 0, 0
        else:
            # Walk backwards from s (clamped to [0, d-1]) while > e (clamped
            # to [-1, d-1]): on the reversed axis that is a forward slice.
            s, e = min(max(s, 0), d - 1), min(max(e, -1), d - 1)
            rs, re = d - 1 - s, d - 1 - e
            start[a], limit[a], stride[a] = rs, max(re, rs), -st
            reverse.append(a)
    if reverse:
        x = ctx.op("reverse", [x], sorted(reverse))
    return ctx.slice(x, start, limit, stride)


@converter("Split")
def split(ctx, node):
    x = node.input(0)
    if x.rank == 0:
        raise node.error("cannot split a scalar")
    axis = normalize_axis(node.attr("axis", 0), x.rank, node)
    n = len(node.outputs)
    if ctx.opset >= 13 or (ctx.opset < 2 and node.has_input(1)):
        parts = node.const_input(1)
        parts = None if parts is None else _ints(node, parts, "split")
    else:
        parts = node.attr("split")
        parts = None if parts is None else list(parts)
    d = x.shape[axis]
    if ctx.opset >= 18:
        # Split 18: without split, num_outputs (required then) gives parts of
        # ceil(d / n) elements, the last one smaller.
        num = node.attr("num_outputs")
        if (num is None) == (parts is None):
            raise node.error("exactly one of the input split and the attribute "
                             "num_outputs must be given", "num_outputs")
        if num is not None:
            if num < 1 or num != n:
                raise node.error("num_outputs %d for %d outputs" % (num, n), "num_outputs")
            chunk = -(-d // num)
            parts = [max(0, min(chunk, d - i * chunk)) for i in range(num)]
    if parts is None:
        if n == 0 or d % n:
            raise node.error("axis %d of extent %d does not split into %d equal parts"
                             % (axis, d, n))
        parts = [d // n] * n
    if len(parts) != n:
        raise node.error("split has %d parts for %d outputs" % (len(parts), n), "split")
    if any(p < 0 for p in parts) or sum(parts) != d:
        raise node.error("split %s does not add up to extent %d" % (parts, d), "split")
    outs, off = [], 0
    for p in parts:
        start, limit = [0] * x.rank, list(x.shape)
        start[axis], limit[axis] = off, off + p
        outs.append(ctx.slice(x, start, limit))
        off += p
    return outs


def _pad_index(node, d, low, high, mode):
    """Source indices along one axis of extent |d| for numpy.pad(mode)."""
    if d == 0:
        raise node.error("cannot pad an empty axis in mode %r" % mode, "mode")
    return np.pad(np.arange(d, dtype=np.int64), (low, high), mode=mode)


@converter("Pad")
def pad(ctx, node):
    x = node.input(0)
    mode = node.attr("mode", "constant")
    if mode not in ("constant", "reflect", "edge") and not (mode == "wrap" and ctx.opset >= 19):
        raise node.unsupported("mode %r%s" % (mode, " (wrap needs opset 19)"
                                              if mode == "wrap" else ""), "mode")
    if ctx.opset >= 11:
        pads = _ints(node, node.const_input(1, required=True), "pads")
        if node.has_input(3):
            if ctx.opset < 18:
                raise node.error("the axes input needs opset 18")
            # Pad 18: pads name the axes listed (2 values per listed axis)
            axes = [normalize_axis(a, x.rank, node)
                    for a in _ints(node, node.const_input(3, required=True), "axes")]
            if len(set(axes)) != len(axes):
                raise node.error("axes %s repeat an axis" % axes)
            if len(pads) != 2 * len(axes):
                raise node.error("pads has %d values for %d axes" % (len(pads), len(axes)),
                                 "pads")
            full = [0] * (2 * x.rank)
            for i, a in enumerate(axes):
                full[a], full[x.rank + a] = pads[i], pads[len(axes) + i]
            pads = full
        v = node.input(2, required=False)
        if v is None:
            v = ctx.scalar(0, x.dtype)
        else:
            if v.dtype != x.dtype or v.size != 1:
                raise node.error("constant_value must be one %s element" % x.dtype)
            v = ctx.reshape(v, ())
    else:
        name = "paddings" if ctx.opset < 2 else "pads"
        pads = node.attr(name)
        if pads is None:
            raise node.error("attribute %r is required" % name, name)
        pads = list(pads)
        v = ctx.scalar(node.attr("value", 0.0), x.dtype)
    if len(pads) != 2 * x.rank:
        raise node.error("pads has %d values for rank %d" % (len(pads), x.rank), "pads")
    low, high = pads[:x.rank], pads[x.rank:]
    for a in range(x.rank):
        if x.shape[a] + low[a] + high[a] < 0:
            raise node.error("pads %s remove more than axis %d holds" % (pads, a), "pads")
    if mode == "constant":
        if low == [0] * x.rank and high == [0] * x.rank:
            return x
        return ctx.op("pad", [x, v], low + high + [0] * x.rank)
    # reflect / edge: crop the negative sides, then gather along each padded
    # axis with the indices numpy.pad would read.
    start, limit = [0] * x.rank, list(x.shape)
    for a in range(x.rank):
        if (low[a] < 0 and high[a] > 0) or (high[a] < 0 and low[a] > 0):
            raise node.unsupported("mode %r with a negative and a positive pad on axis %d"
                                   % (mode, a), "pads")
        if low[a] < 0:
            start[a] = -low[a]
        if high[a] < 0:
            limit[a] = x.shape[a] + high[a]
    x = ctx.slice(x, start, limit)
    for a in range(x.rank):
        lo, hi = max(low[a], 0), max(high[a], 0)
        if lo or hi:
            idx = _pad_index(node, x.shape[a], lo, hi, mode)
            x = ctx.gather(x, Tensor.constant(idx.astype(_index_array(x.shape[a]))), a)
    return x


# ---- repeating and broadcasting ---------------------------------------------------

@converter("Tile")
def tile(ctx, node):
    x = node.input(0)
    if ctx.opset < 6:
        # Tile 1: inputs (input, tiles, axis), two scalars: |tiles| copies
        # along |axis|.
        t = _ints(node, node.const_input(1, required=True), "tiles")
        ax = _ints(node, node.const_input(2, required=True), "axis")
        if len(t) != 1 or len(ax) != 1:
            raise node.error("tiles and axis must be scalars before opset 6")
        a = normalize_axis(ax[0], x.rank, node)
        reps = [t[0] if i == a else 1 for i in range(x.rank)]
    else:
        reps = _ints(node, node.const_input(1, required=True), "repeats")
    if len(reps) != x.rank:
        raise node.error("repeats has %d values for rank %d" % (len(reps), x.rank))
    if any(r < 0 for r in reps):
        raise node.error("negative repeat in %s" % reps)
    tiled = [a for a in range(x.rank) if reps[a] != 1]
    # One broadcast when the interleaved [r, d] rank fits, else axis by axis.
    groups = [tiled] if x.rank + len(tiled) <= 8 else [[a] for a in tiled]
    for group in groups:
        shape, dims = [], []
        for a in range(x.rank):
            if a in group:
                shape.append(reps[a])
            dims.append(len(shape))
            shape.append(x.shape[a])
        y = ctx.broadcast_in_dim(x, shape, dims)
        x = ctx.reshape(y, [d * reps[a] if a in group else d for a, d in enumerate(x.shape)])
    return x


@converter("Expand", min_opset=8)
def expand(ctx, node):
    x = node.input(0)
    dims = _ints(node, node.const_input(1, required=True), "the shape")
    try:
        shape = broadcast_shapes(x.shape, tuple(dims))
    except ValueError as e:
        raise node.error(str(e)) from None
    return ctx.broadcast_to(x, shape)


@converter("DepthToSpace")
def depth_to_space(ctx, node):
    x = node.input(0)
    b = node.attr("blocksize")
    mode = node.attr("mode", "DCR")
    if b is None or b < 1:
        raise node.error("blocksize must be a positive integer", "blocksize")
    if mode not in ("DCR", "CRD"):
        raise node.unsupported("mode %r" % mode, "mode")
    if x.rank != 4:
        raise node.error("input must be rank 4, got %d" % x.rank)
    n, c, h, w = x.shape
    if c % (b * b):
        raise node.error("channels %d are not a multiple of blocksize^2 = %d" % (c, b * b))
    if mode == "DCR":
        y = ctx.reshape(x, (n, b, b, c // (b * b), h, w))
        y = ctx.transpose(y, [0, 3, 4, 1, 5, 2])
    else:
        y = ctx.reshape(x, (n, c // (b * b), b, b, h, w))
        y = ctx.transpose(y, [0, 1, 4, 2, 5, 3])
    return ctx.reshape(y, (n, c // (b * b), h * b, w * b))


@converter("SpaceToDepth")
def space_to_depth(ctx, node):
    x = node.input(0)
    b = node.attr("blocksize")
    if b is None or b < 1:
        raise node.error("blocksize must be a positive integer", "blocksize")
    if x.rank != 4:
        raise node.error("input must be rank 4, got %d" % x.rank)
    n, c, h, w = x.shape
    if h % b or w % b:
        raise node.error("spatial dims %dx%d are not multiples of blocksize %d" % (h, w, b))
    y = ctx.reshape(x, (n, c, h // b, b, w // b, b))
    y = ctx.transpose(y, [0, 3, 5, 1, 2, 4])
    return ctx.reshape(y, (n, c * b * b, h // b, w // b))


# ---- selecting -----------------------------------------------------------------------

@converter("Compress", min_opset=9)
def compress(ctx, node):
    x = node.input(0)
    cond = np.asarray(node.const_input(1, required=True))
    if cond.ndim != 1:
        raise node.error("condition must be 1-D, got rank %d" % cond.ndim)
    axis = node.attr("axis")
    if axis is None:
        x = ctx.reshape(x, (x.size,))
        axis = 0
    else:
        axis = normalize_axis(axis, x.rank, node)
    idx = np.nonzero(cond)[0]
    d = x.shape[axis]
    if idx.size and idx[-1] >= d:
        raise node.error("condition selects index %d of an axis of extent %d"
                         % (int(idx[-1]), d))
    return ctx.gather(x, Tensor.constant(idx.astype(_index_array(d))), axis)


@converter("Trilu", min_opset=14)
def trilu(ctx, node):
    x = node.input(0)
    upper = node.attr("upper", 1)
    if x.rank < 2:
        raise node.error("input must have rank >= 2, got %d" % x.rank)
    k = node.input(1, required=False)
    if k is not None:
        if k.dtype not in INTS or k.size != 1:
            raise node.error("k must be one integer")
        k = ctx.cast(ctx.reshape(k, ()), "i64")
    else:
        k = ctx.scalar(0, "i64")
    nm = x.shape[-2:]
    # j - i per element of the matrix, compared with k (which may be a
    # program input).
    diff = ctx.sub(ctx.iota(nm, 1, "i64"), ctx.iota(nm, 0, "i64"))
    keep = ctx.compare("GE" if upper else "LE", diff, k)
    return ctx.select(keep, x, ctx.scalar(0, x.dtype))


@converter("CenterCropPad", min_opset=18)
def center_crop_pad(ctx, node):
    """Each listed axis cropped (a centred window) or zero-padded (the input
    centred) to the size in |shape|; an odd difference puts the extra
    element at the end."""
    x = node.input(0)
    shape = _ints(node, node.const_input(1, required=True), "shape")
    axes = node.attr("axes")
    axes = list(range(x.rank)) if axes is None else \
        [normalize_axis(a, x.rank, node) for a in axes]
    if len(set(axes)) != len(axes):
        raise node.error("axes %s repeat an axis" % axes, "axes")
    if len(shape) != len(axes):
        raise node.error("shape has %d values for %d axes" % (len(shape), len(axes)))
    start, limit = [0] * x.rank, list(x.shape)
    low, high = [0] * x.rank, [0] * x.rank
    for a, s in zip(axes, shape):
        d = x.shape[a]
        if s < 0:
            raise node.error("negative size %d" % s)
        if s < d:
            start[a] = (d - s) // 2
            limit[a] = start[a] + s
        elif s > d:
            low[a] = (s - d) // 2
            high[a] = s - d - low[a]
    x = ctx.slice(x, start, limit)
    if any(low) or any(high):
        x = ctx.pad(x, low, high)
    return x
