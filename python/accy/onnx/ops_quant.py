"""Quantisation ops: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv.

Integer products run in i32 (operands converted to i32 and their zero points
subtracted first, so the sums are exact while they fit in 32 bits, and wrap
like the ONNX reference's int32 accumulators beyond). Requantisation is in
f32: value * scale, rounded to nearest even, plus the zero point, saturated
to the output type's range.
"""

from .context import onnx_dtype
from .errors import UnsupportedError
from .ops_nn import conv_values, matmul_values
from .registry import converter

#: Quantised types (ONNX opsets <= 17): their saturation ranges.
QRANGE = {"u8": (0, 255), "i8": (-128, 127)}


def _qtype(node, t, what):
    if t.dtype not in QRANGE:
        raise node.unsupported("%s of type %s (u8 and i8 are supported)" % (what, t.dtype))
    return t.dtype


def _per_axis(ctx, node, p, shape, axis, what):
    """Scale or zero point |p| broadcast to |shape|: a scalar (or a single
    element) per tensor, a 1-D tensor along |axis| (opset 13+)."""
    if p.size == 1 and p.rank <= 1:
        return ctx.broadcast_to(ctx.reshape(p, ()), shape)
    if p.rank != 1 or ctx.opset < 13:
        raise node.error("%s must be a scalar%s, got shape %s"
                         % (what, " or 1-D" if ctx.opset >= 13 else "", list(p.shape)))
    if axis is None or p.shape[0] != shape[axis]:
        raise node.error("%s has %d elements but %s"
                         % (what, p.shape[0], "the axis is out of range" if axis is None
                            else "axis %d has %d" % (axis, shape[axis])))
    return ctx.broadcast_in_dim(p, shape, [axis])


def _block_size(ctx, node):
    """QuantizeLinear/DequantizeLinear 21: block_size 0 is per tensor or per
    axis as before; blocked quantisation is not converted."""
    if ctx.opset >= 21:
        b = node.attr("block_size", 0)
        if b:
            raise node.unsupported("blocked quantization (block_size %d)" % b, "block_size")


def _axis(ctx, node, rank):
    if ctx.opset < 13:
        return None
    a = node.attr("axis", 1)
    if not -rank <= a < rank:
        return None  # matters only for per-axis parameters (refused there)
    return a + rank if a < 0 else a


def _requantize(ctx, real, zp, qdtype):
    """saturate(round_half_even(real) + zp) as |qdtype|; |real| is f32, |zp|
    a Tensor of |real|'s shape (any dtype) or None."""
    r = ctx.unary("round_nearest_even", real)
    if zp is not None:
        r = ctx.add(r, ctx.cast(zp, "f32"))
    lo, hi = QRANGE[qdtype]
    r = ctx.op("clamp", [ctx.scalar(lo, "f32"), r, ctx.scalar(hi, "f32")])
    return ctx.cast(r, qdtype)


@converter("QuantizeLinear", min_opset=10)
def quantize_linear(ctx, node):
    x, scale = node.input(0), node.input(1)
    zp = node.input(2, required=False)
    if x.dtype not in ("f32", "i32"):
        raise node.unsupported("input of type %s" % x.dtype)
    if scale.dtype != "f32":
        raise node.unsupported("y_scale of type %s" % scale.dtype)
    _block_size(ctx, node)
    if ctx.opset >= 19:
        node.attr("saturate", 1)  # float8 outputs only; accy has none
    out_dtype = node.attr("output_dtype", 0) if ctx.opset >= 21 else 0
    if out_dtype:
        try:
            want = onnx_dtype(out_dtype, "output_dtype")
        except UnsupportedError as e:
            raise node.unsupported(str(e), "output_dtype") from None
        if want not in QRANGE:
            raise node.unsupported("output_dtype %s (u8 and i8 are supported)" % want,
                                   "output_dtype")
        if zp is not None and zp.dtype != want:
            raise node.error("output_dtype %s but y_zero_point is %s" % (want, zp.dtype))
    qdtype = _qtype(node, zp, "y_zero_point") if zp is not None else \
        (onnx_dtype(out_dtype) if out_dtype else "u8")
    axis = _axis(ctx, node, x.rank)
    s = _per_axis(ctx, node, scale, x.shape, axis, "y_scale")
    if zp is not None:
        zp = _per_axis(ctx, node, zp, x.shape, axis, "y_zero_point")
    return _requantize(ctx, ctx.div(ctx.cast(x, "f32"), s), zp, qdtype)


@converter("DequantizeLinear", min_opset=10)
def dequantize_linear(ctx, node):
    x, scale = node.input(0), node.input(1)
    zp = node.input(2, required=False)
    if x.dtype not in ("u8", "i8", "i32"):
        raise node.unsupported("input of type %s" % x.dtype)
    if scale.dtype != "f32":
        raise node.unsupported("x_scale of type %s" % scale.dtype)
    if zp is not None and zp.dtype != x.dtype:
        raise node.error("x_zero_point has type %s, x %s" % (zp.dtype, x.dtype))
    _block_size(ctx, node)
    axis = _axis(ctx, node, x.rank)
    s = _per_axis(ctx, node, scale, x.shape, axis, "x_scale")
    v = ctx.cast(x, "f32")
    if zp is not None:
        v = ctx.sub(v, ctx.cast(_per_axis(ctx, node, zp, x.shape, axis, "x_zero_point"), "f32"))
    return ctx.mul(v, s)


@converter("DynamicQuantizeLinear", min_opset=11)
def dynamic_quantize_linear(ctx, node):
    """u8 quantisation over the range [min(0, min x), max(0, max x)]."""
    x = node.input(0)
    if x.dtype != "f32":
        raise node.unsupported("input of type %s" % x.dtype)
    axes = list(range(x.rank))
    zero = ctx.scalar(0, "f32")
    lo = ctx.binary("minimum", zero, ctx.reduce("min", x, axes))
    hi = ctx.binary("maximum", zero, ctx.reduce("max", x, axes))
    scale = ctx.div(ctx.sub(hi, lo), ctx.scalar(255, "f32"))
    zp = _requantize(ctx, ctx.div(ctx.sub(zero, lo), scale), None, "u8")
    y = _requantize(ctx, ctx.div(x, scale), ctx.broadcast_to(zp, x.shape), "u8")
    return [y, scale, zp]


def _shifted(ctx, node, t, zp, axis, what):
    """|t| as i32 minus its zero point (scalar, or 1-D along |axis|)."""
    v = ctx.cast(t, "i32")
    if zp is None:
        return v
    if zp.dtype != t.dtype:
        raise node.error("%s has type %s, its input %s" % (what, zp.dtype, t.dtype))
    if zp.size == 1 and zp.rank <= 1:
        z = ctx.reshape(zp, ())
    elif zp.rank == 1 and axis is not None and zp.shape[0] == t.shape[axis]:
        z = ctx.broadcast_in_dim(zp, t.shape, [axis])
    else:
        raise node.error("%s has shape %s; a scalar or [%s] is needed"
                         % (what, list(zp.shape), t.shape[axis] if axis is not None else 1))
    return ctx.sub(v, ctx.cast(z, "i32"))


def _integer_matmul(ctx, node, a, azp, b, bzp):
    _qtype(node, a, "A")
    _qtype(node, b, "B")
    # a_zero_point may be per row of A (axis -2), b_zero_point per column of B.
    ai = _shifted(ctx, node, a, azp, a.rank - 2 if a.rank >= 2 else None, "a_zero_point")
    bi = _shifted(ctx, node, b, bzp, b.rank - 1 if b.rank >= 2 else None, "b_zero_point")
    return matmul_values(ctx, node, ai, bi)


@converter("MatMulInteger", min_opset=10)
def matmul_integer(ctx, node):
    a, b = node.input(0), node.input(1)
    return _integer_matmul(ctx, node, a, node.input(2, required=False),
                           b, node.input(3, required=False))


def _integer_conv(ctx, node, x, xzp, w, wzp):
    _qtype(node, x, "x")
    _qtype(node, w, "w")
    if x.rank < 3 or w.rank != x.rank:
        raise node.error("x and w must have the same rank >= 3")
    if xzp is not None and xzp.size != 1:
        raise node.error("x_zero_point must be a scalar (per-tensor)")
    xi = _shifted(ctx, node, x, xzp, None, "x_zero_point")
    wi = _shifted(ctx, node, w, wzp, 0, "w_zero_point")
    # Padding taps are skipped: zero after the shift, as ONNX pads with the
    # zero point.
    return conv_values(ctx, node, xi, wi)


@converter("ConvInteger", min_opset=10)
def conv_integer(ctx, node):
    x, w = node.input(0), node.input(1)
    return _integer_conv(ctx, node, x, node.input(2, required=False),
                         w, node.input(3, required=False))


def _scale(ctx, node, s, shape, axis, what):
    """A float scale: scalar, or 1-D along |axis| of |shape|."""
    if s.dtype != "f32":
        raise node.unsupported("%s of type %s" % (what, s.dtype))
    if s.size == 1 and s.rank <= 1:
        return ctx.broadcast_to(ctx.reshape(s, ()), shape)
    if s.rank == 1 and axis is not None and s.shape[0] == shape[axis]:
        return ctx.broadcast_in_dim(s, shape, [axis])
    raise node.error("%s has shape %s; a scalar or [%s] is needed"
                     % (what, list(s.shape), shape[axis] if axis is not None else 1))


def _zero_point(ctx, node, zp, shape, axis, what):
    if zp is None:
        return None
    if zp.size == 1 and zp.rank <= 1:
        return ctx.broadcast_to(ctx.reshape(zp, ()), shape)
    if zp.rank == 1 and axis is not None and zp.shape[0] == shape[axis]:
        return ctx.broadcast_in_dim(zp, shape, [axis])
    raise node.error("%s has shape %s; a scalar or [%s] is needed"
                     % (what, list(zp.shape), shape[axis] if axis is not None else 1))


@converter("QLinearMatMul", min_opset=10)
def qlinear_matmul(ctx, node):
    a, a_s, azp = node.input(0), node.input(1), node.input(2)
    b, b_s, bzp = node.input(3), node.input(4), node.input(5)
    y_s, yzp = node.input(6), node.input(7)
    qdtype = _qtype(node, yzp, "y_zero_point")
    acc = _integer_matmul(ctx, node, a, azp, b, bzp)
    shape = acc.shape
    row = len(shape) - 2 if a.rank >= 2 and len(shape) >= 2 else None
    col = len(shape) - 1 if b.rank >= 2 else None
    # The multiplier a_scale * b_scale / y_scale, per row and/or column.
    mult = ctx.div(ctx.mul(_scale(ctx, node, a_s, shape, row, "a_scale"),
                           _scale(ctx, node, b_s, shape, col, "b_scale")),
                   _scale(ctx, node, y_s, shape, col, "y_scale"))
    real = ctx.mul(ctx.cast(acc, "f32"), mult)
    return _requantize(ctx, real, _zero_point(ctx, node, yzp, shape, col, "y_zero_point"),
                       qdtype)


@converter("QLinearConv", min_opset=10)
def qlinear_conv(ctx, node):
    x, x_s, xzp = node.input(0), node.input(1), node.input(2)
    w, w_s, wzp = node.input(3), node.input(4), node.input(5)
    y_s, yzp = node.input(6), node.input(7)
    bias = node.input(8, required=False)
    qdtype = _qtype(node, yzp, "y_zero_point")
    acc = _integer_conv(ctx, node, x, xzp, w, wzp)
    if bias is not None:
        if bias.dtype != "i32" or bias.shape != (acc.shape[1],):
            raise node.error("B must be i32[%d], got %s%s"
                             % (acc.shape[1], bias.dtype, list(bias.shape)))
        acc = ctx.add(acc, ctx.broadcast_in_dim(bias, acc.shape, [1]))
    shape = acc.shape
    mult = ctx.div(ctx.mul(_scale(ctx, node, x_s, shape, None, "x_scale"),
                           _scale(ctx, node, w_s, shape, 1, "w_scale")),
                   _scale(ctx, node, y_s, shape, None, "y_scale"))
    real = ctx.mul(ctx.cast(acc, "f32"), mult)
    return _requantize(ctx, real, _zero_point(ctx, node, yzp, shape, None, "y_zero_point"),
                       qdtype)

