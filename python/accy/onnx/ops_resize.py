"""Resize and Upsample.

Every mode of ONNX Resize is separable: the output along one axis is a
weighted sum of at most 4 input elements along that axis (nearest: 1,
linear: 2, cubic: 4), with indices and weights that depend only on the
output position. The importer computes them per axis at import time, exactly
as ONNX's reference does (coordinate transformation, the n nearest
neighbours of the edge-padded axis, coefficients, exclude_outside), and
emits one gather per tap along the axis, multiplied by the constant weight
column and summed. Nearest is a single gather (exact for every dtype).
tf_crop_and_resize positions outside the input get extrapolation_value by a
final select.
"""

import numpy as np

from .context import FLOATS, Tensor, normalize_axis
from .registry import converter

_CTMS = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
         "tf_half_pixel_for_nn", "tf_crop_and_resize", "half_pixel_symmetric")
_NEAREST = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


def _coordinates(ctm, in_len, out_len, scale, roi):
    """Input coordinate of every output position, and whether it is inside
    (only tf_crop_and_resize has positions outside)."""
    x = np.arange(out_len, dtype=np.float64)
    width = scale * in_len  # as the reference: a float, not out_len
    valid = np.ones(out_len, dtype=bool)
    if ctm == "align_corners":
        xo = np.zeros_like(x) if width == 1 else x * (in_len - 1) / (width - 1)
    elif ctm == "asymmetric":
        xo = x / scale
    elif ctm == "tf_crop_and_resize":
        s, e = roi
        if width == 1:
            xo = np.full_like(x, (e - s) * (in_len - 1) / 2)
        else:
            xo = x * (e - s) * (in_len - 1) / (width - 1)
        xo = xo + s * (in_len - 1)
        valid = (xo >= 0) & (xo <= in_len - 1)
    elif ctm == "tf_half_pixel_for_nn":
        xo = (x + 0.5) / scale
    elif ctm == "pytorch_half_pixel":
        xo = np.zeros_like(x) if width <= 1 else (x + 0.5) / scale - 0.5
    elif ctm == "half_pixel_symmetric":  # Resize 19
        adjustment = out_len / width
        offset = in_len / 2 * (1 - adjustment)
        xo = offset + (x + 0.5) / scale - 0.5
    else:  # half_pixel
        xo = (x + 0.5) / scale - 0.5
    return xo, valid


def _cubic(r, a):
    return np.stack([((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
                     ((a + 2) * r - (a + 3)) * r * r + 1,
                     ((a + 2) * (1 - r) - (a + 3)) * (1 - r) * (1 - r) + 1,
                     ((a * ((1 - r) + 1) - 5 * a) * ((1 - r) + 1) + 8 * a) * ((1 - r) + 1)
                     - 4 * a], axis=1)


def _cubic_kernel(t, a):
    t = np.abs(t)
    return np.where(t <= 1, ((a + 2) * t - (a + 3)) * t * t + 1,
                    np.where(t < 2, ((a * t - 5 * a) * t + 8 * a) * t - 4 * a, 0.0))


def _antialias(mode, ratio, scale, a):
    """Resize 18's antialiased weights when downscaling: the linear or cubic
    kernel stretched by 1 / scale (so n grows), normalised per output."""
    s = min(scale, 1.0)
    first = int(np.floor((-1 if mode == "linear" else -2) / s) + 1)
    i = np.arange(first, 2 - first, dtype=np.float64)
    t = (i[None, :] - ratio[:, None]) * s
    w = np.clip(1 - np.abs(t), 0, 1) if mode == "linear" else _cubic_kernel(t, a)
    return w / w.sum(axis=1, keepdims=True)


def taps(mode, ctm, in_len, out_len, scale, roi=(0.0, 1.0), nearest_mode="round_prefer_floor",
         cubic_a=-0.75, exclude_outside=False, antialias=False):
    """(idx [out, n], weights [out, n] float64, valid [out]) along one axis.
    idx are already clamped into [0, in_len - 1] (edge padding)."""
    xo, valid = _coordinates(ctm, in_len, out_len, scale, roi)
    xo = np.where(np.isfinite(xo), xo, 0.0)
    fl = np.floor(xo)
    integer = xo == fl
    ratio = np.where(integer, 1.0, xo - fl)
    antialias = antialias and mode != "nearest" and scale < 1
    n = 4 if mode == "cubic" else 2
    if antialias:
        aw = _antialias(mode, ratio, scale, cubic_a)
        n = aw.shape[1]
    # The n nearest indices of the axis edge-padded by ceil(n / 2), ties to
    # the smaller: a window starting at ceil(x) - n / 2, kept inside.
    pad = (n + 1) // 2
    xp = xo + pad
    start = np.ceil(xp) - n // 2
    start = np.clip(start, 0, in_len + 2 * pad - n).astype(np.int64)
    idx = start[:, None] + np.arange(n, dtype=np.int64)[None, :] - pad
    if mode == "nearest":
        if nearest_mode == "round_prefer_floor":
            pick = ratio > 0.5
        elif nearest_mode == "round_prefer_ceil":
            pick = ratio >= 0.5
        elif nearest_mode == "floor":
            pick = np.zeros(out_len, dtype=bool)
        else:
            pick = np.ones(out_len, dtype=bool)
        pick = np.where(integer, True, pick)
        w = np.stack([~pick, pick], axis=1).astype(np.float64)
    elif antialias:
        w = aw
    elif mode == "linear":
        w = np.stack([1 - ratio, ratio], axis=1)
    else:
        w = _cubic(ratio, cubic_a)
    if exclude_outside and mode != "nearest":
        w = np.where((idx < 0) | (idx >= in_len), 0.0, w)
        w = w / w.sum(axis=1, keepdims=True)
    return np.clip(idx, 0, max(in_len - 1, 0)), w, valid


def _is_identity(idx, w, in_len):
    out_len = idx.shape[0]
    if out_len != in_len:
        return False
    same = idx == np.arange(out_len)[:, None]
    return bool(np.all(np.where(same, w, 0).sum(axis=1) == 1) and
                np.all(np.where(same, 0, w) == 0))


def _weights(x_dtype, w):
    return w.astype(np.float32 if x_dtype == "f32" else np.float64)


def resize_nd(ctx, node, x, out_shape, scales, mode, ctm, roi=None,
              nearest_mode="round_prefer_floor", cubic_a=-0.75, exclude_outside=False,
              extrapolation_value=0.0, antialias=False):
    if mode != "nearest" and x.dtype not in FLOATS:
        raise node.unsupported("mode %r on dtype %s" % (mode, x.dtype), "mode")
    if mode != "nearest" and x.dtype in ("f16", "bf16"):
        work = ctx.cast(x, "f32")
    else:
        work = x
    masks = []
    for a in range(x.rank):
        in_len, out_len = x.shape[a], out_shape[a]
        if out_len and not in_len:
            raise node.error("cannot resize the empty axis %d to %d" % (a, out_len))
        r = (0.0, 1.0) if roi is None else (roi[a], roi[a + x.rank])
        if out_len == 0:
            idx = np.zeros((0, 1), np.int64)
            w = np.ones((0, 1))
            valid = np.ones(0, bool)
        else:
            idx, w, valid = taps(mode, ctm, in_len, out_len, scales[a], r, nearest_mode,
                                 cubic_a, exclude_outside, antialias)
        if not valid.all():
            shape = [1] * x.rank
            shape[a] = out_len
            masks.append(Tensor.constant(valid.reshape(shape), "bool"))
        if _is_identity(idx, w, in_len):
            continue
        if mode == "nearest":
            sel = idx[np.arange(idx.shape[0]), np.argmax(w, axis=1)] if idx.size else \
                idx[:, 0]
            work = ctx.gather(work, Tensor.constant(sel.astype(np.int64)), a)
            continue
        acc = None
        wshape = [1] * x.rank
        wshape[a] = out_len
        for k in range(idx.shape[1]):
            if not np.any(w[:, k]):
                continue
            g = ctx.gather(work, Tensor.constant(idx[:, k].astype(np.int64)), a)
            wk = Tensor.constant(_weights(work.dtype, w[:, k]).reshape(wshape), work.dtype)
            term = ctx.mul(g, wk)
            acc = term if acc is None else ctx.add(acc, term)
        if acc is None:  # all weights zero (cannot happen for sane inputs)
            acc = ctx.full([out_shape[i] if i == a else work.shape[i]
                            for i in range(x.rank)], 0, work.dtype)
        work = acc
    if masks:
        m = masks[0]
        for other in masks[1:]:
            m = ctx.binary("and", m, other)
        work = ctx.select(m, work, ctx.scalar(extrapolation_value, work.dtype))
    return ctx.cast(work, x.dtype)


def _floats(node, a, what, n):
    a = np.asarray(a)
    if a.dtype.kind != "f":
        raise node.error("%s must be floats, got %s" % (what, a.dtype))
    a = a.reshape(-1).astype(np.float64)
    if a.size != n:
        raise node.error("%s has %d values for rank %d" % (what, a.size, n))
    return a


def _out_from_scales(node, x, scales):
    if np.any(~np.isfinite(scales)) or np.any(scales <= 0):
        raise node.error("scales must be positive, got %s" % list(scales))
    return [int(np.floor(s * d)) for s, d in zip(scales, x.shape)]


@converter("Resize", min_opset=10)
def resize(ctx, node):
    x = node.input(0)
    mode = node.attr("mode", "nearest")
    if mode not in ("nearest", "linear", "cubic") or (ctx.opset < 11 and mode == "cubic"):
        raise node.unsupported("mode %r" % mode, "mode")
    if ctx.opset < 11:
        # Resize-10 is Upsample with downsampling allowed: asymmetric
        # coordinates, nearest rounds down.
        scales = _floats(node, node.const_input(1, required=True), "scales", x.rank)
        out = _out_from_scales(node, x, scales)
        return resize_nd(ctx, node, x, out, scales, mode, "asymmetric", nearest_mode="floor")
    ctm = node.attr("coordinate_transformation_mode", "half_pixel")
    if ctm not in _CTMS or (ctm == "half_pixel_symmetric" and ctx.opset < 19):
        raise node.unsupported("coordinate_transformation_mode %r" % ctm,
                               "coordinate_transformation_mode")
    cubic_a = float(node.attr("cubic_coeff_a", -0.75))
    exclude = node.attr("exclude_outside", 0)
    extrapolation = float(node.attr("extrapolation_value", 0.0))
    nearest_mode = node.attr("nearest_mode", "round_prefer_floor")
    if nearest_mode not in _NEAREST:
        raise node.unsupported("nearest_mode %r" % nearest_mode, "nearest_mode")
    # Resize 18: antialias, axes, keep_aspect_ratio_policy
    antialias = node.attr("antialias", 0) if ctx.opset >= 18 else 0
    axes = node.attr("axes") if ctx.opset >= 18 else None
    policy = node.attr("keep_aspect_ratio_policy", "stretch") if ctx.opset >= 18 else "stretch"
    if antialias not in (0, 1):
        raise node.error("antialias must be 0 or 1", "antialias")
    if policy not in ("stretch", "not_larger", "not_smaller"):
        raise node.unsupported("keep_aspect_ratio_policy %r" % policy,
                               "keep_aspect_ratio_policy")
    if axes is None:
        axes = list(range(x.rank))
    else:
        axes = [normalize_axis(a, x.rank, node) for a in axes]
        if len(set(axes)) != len(axes):
            raise node.error("axes %s repeat an axis" % axes, "axes")
    k = len(axes)

    def full(values, fill):
        """|values| for the listed axes -> one value per axis."""
        out = list(fill)
        for i, a in enumerate(axes):
            out[a] = values[i]
        return out

    roi = None
    if ctm == "tf_crop_and_resize":
        roi = node.const_input(1)
        if roi is None:
            raise node.error("tf_crop_and_resize needs roi")
        roi = _floats(node, roi, "roi", 2 * k)
        roi = full(roi[:k], [0.0] * x.rank) + full(roi[k:], [1.0] * x.rank)
    scales = node.const_input(2)
    sizes = node.const_input(3)
    if scales is not None and np.asarray(scales).size == 0:
        scales = None
    if sizes is not None and np.asarray(sizes).size == 0:
        sizes = None
    if (scales is None) == (sizes is None):
        raise node.error("exactly one of scales and sizes must be given")
    if sizes is not None:
        sizes = np.asarray(sizes)
        if sizes.dtype.kind not in "iu" or sizes.size != k or np.any(sizes < 0):
            raise node.error("sizes must be %d non-negative integers" % k)
        out = full([int(s) for s in sizes.reshape(-1)], x.shape)
        if any(d == 0 and o != 0 for d, o in zip(x.shape, out)):
            raise node.error("cannot resize an empty axis to %s" % out)
        with np.errstate(divide="ignore", invalid="ignore"):
            scales = np.array(out, np.float64) / np.array(x.shape, np.float64)
        scales = np.where(np.isfinite(scales), scales, 1.0)
        if policy != "stretch":
            # one scale for the listed axes, the output rounded half up
            pick = np.min if policy == "not_larger" else np.max
            common = float(pick(scales[axes]))
            for a in axes:
                scales[a] = common
                out[a] = int(np.floor(common * x.shape[a] + 0.5))
    else:
        if policy != "stretch":
            raise node.error("keep_aspect_ratio_policy needs sizes", "keep_aspect_ratio_policy")
        scales = np.array(full(_floats(node, scales, "scales", k), [1.0] * x.rank))
        out = _out_from_scales(node, x, scales)
    return resize_nd(ctx, node, x, out, scales, mode, ctm, roi, nearest_mode, cubic_a,
                     bool(exclude), extrapolation, bool(antialias))


@converter("Upsample")
def upsample(ctx, node):
    x = node.input(0)
    mode = node.attr("mode", "nearest")
    if ctx.opset < 7:
        # Upsample 1: NCHW with height_scale and width_scale attributes;
        # modes nearest and bilinear (linear over H and W).
        if mode == "bilinear":
            mode = "linear"
        if mode not in ("nearest", "linear"):
            raise node.unsupported("mode %r" % mode, "mode")
        if x.rank != 4:
            raise node.error("Upsample before opset 7 takes NCHW (rank 4), got %s"
                             % list(x.shape))
        hs, ws = node.attr("height_scale"), node.attr("width_scale")
        if hs is None or ws is None:
            raise node.error("height_scale and width_scale are required")
        scales = np.array([1, 1, hs, ws], np.float64)
        if np.any(~np.isfinite(scales)) or np.any(scales < 1):
            raise node.error("Upsample scales must be >= 1, got %s" % list(scales))
        out = _out_from_scales(node, x, scales)
        return resize_nd(ctx, node, x, out, scales, mode, "asymmetric", nearest_mode="floor")
    if mode not in ("nearest", "linear"):
        raise node.unsupported("mode %r" % mode, "mode")
    if ctx.opset < 9:
        scales = node.attr("scales")
        if scales is None:
            raise node.error("attribute 'scales' is required", "scales")
        scales = _floats(node, np.array(scales, np.float32), "scales", x.rank)
    else:
        scales = _floats(node, node.const_input(1, required=True), "scales", x.rank)
    if np.any(scales < 1):
        raise node.error("Upsample scales must be >= 1, got %s" % list(scales), "scales")
    out = _out_from_scales(node, x, scales)
    return resize_nd(ctx, node, x, out, scales, mode, "asymmetric", nearest_mode="floor")
