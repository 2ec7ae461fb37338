"""Elementwise ONNX ops: arithmetic with numpy broadcasting, comparisons,
logic, Where, Cast, Identity, the simple unary math functions, the inverse
trigonometric and hyperbolic functions (composed), IsNaN/IsInf, Mod, Pow
(mixed dtypes) and BitShift."""

from .context import FLOATS, INTS, onnx_dtype
from .registry import converter

_BINARY = {"Add": "add", "Sub": "subtract", "Mul": "multiply", "Div": "divide",
           "And": "and", "Or": "or", "Xor": "xor"}


def _require_dtype(node, t, allowed, what="input"):
    if t.dtype not in allowed:
        raise node.unsupported("%s dtype %s is not supported (allowed: %s)"
                               % (what, t.dtype, " ".join(allowed)))


def binary_operands(ctx, node):
    """The two operands of a binary op, broadcast to one shape. From opset 7:
    numpy (multidirectional) broadcasting. Before (Add, Sub, Mul, Div, Pow,
    And, Or, Xor, Equal, Less, Greater at versions 1 and 6): none unless the
    attribute broadcast is 1, which broadcasts B to A's shape: B's dims
    match a contiguous run of A's dims that starts at |axis| (default: A's
    trailing dims); a one-element B is a scalar."""
    a, b = node.input(0), node.input(1)
    if ctx.opset >= 7:
        for attr in ("broadcast", "axis"):
            if node.has_attr(attr):
                raise node.error("attribute %r exists only before opset 7 (opset %d "
                                 "broadcasts implicitly)" % (attr, ctx.opset), attr)
        return a, b
    bc = node.attr("broadcast", 0)
    axis = node.attr("axis")
    if bc not in (0, 1):
        raise node.error("broadcast must be 0 or 1, got %r" % (bc,), "broadcast")
    if not bc:
        if axis is not None:
            raise node.error("axis is given but broadcast is 0", "axis")
        if a.shape != b.shape:
            raise node.error("shapes %s and %s differ and broadcast is 0 (before opset 7 "
                             "there is no implicit broadcasting)"
                             % (list(a.shape), list(b.shape)), "broadcast")
        return a, b
    if b.size == 1:
        return a, ctx.broadcast_to(ctx.reshape(b, ()), a.shape)
    start = a.rank - b.rank if axis is None else int(axis)
    if start < 0 and axis is not None:
        start += a.rank
    if start < 0 or start + b.rank > a.rank or any(
            d not in (1, a.shape[start + i]) for i, d in enumerate(b.shape)):
        raise node.error("B %s does not broadcast to A %s at axis %s"
                         % (list(b.shape), list(a.shape), start), "axis")
    return a, ctx.broadcast_in_dim(b, a.shape, range(start, start + b.rank))


@converter(*_BINARY)
def binary(ctx, node):
    a, b = binary_operands(ctx, node)
    if node.op_type in ("Add", "Sub", "Mul", "Div"):
        _require_dtype(node, a, FLOATS + INTS)
    return ctx.binary(_BINARY[node.op_type], a, b)


_COMPARE = {"Equal": "EQ", "Less": "LT", "LessOrEqual": "LE", "Greater": "GT",
            "GreaterOrEqual": "GE"}


@converter(*_COMPARE)
def compare(ctx, node):
    a, b = binary_operands(ctx, node)
    return ctx.compare(_COMPARE[node.op_type], a, b)


_UNARY = {"Abs": "abs", "Neg": "negate", "Floor": "floor", "Ceil": "ceil", "Sqrt": "sqrt",
          "Exp": "exp", "Log": "log", "Tanh": "tanh", "Sigmoid": "logistic", "Erf": "erf",
          "Sin": "sin", "Cos": "cos", "Tan": "tan", "Sign": "sign", "Not": "not",
          "Round": "round_nearest_even"}
_FLOAT_ONLY = ("Floor", "Ceil", "Sqrt", "Exp", "Log", "Tanh", "Sigmoid", "Erf", "Sin", "Cos",
               "Tan", "Round")


@converter(*_UNARY)
def unary(ctx, node):
    x = node.input(0)
    if node.op_type in _FLOAT_ONLY:
        _require_dtype(node, x, FLOATS)
    return ctx.unary(_UNARY[node.op_type], x)


@converter("Reciprocal")
def reciprocal(ctx, node):
    x = node.input(0)
    _require_dtype(node, x, FLOATS)
    return ctx.div(ctx.scalar(1, x.dtype), x)


@converter("Where")
def where(ctx, node):
    return ctx.select(node.input(0), node.input(1), node.input(2))


@converter("Identity")
def identity(ctx, node):
    return node.input(0)


@converter("Cast")
def cast(ctx, node):
    to = node.attr("to")
    if to is None:
        raise node.error("attribute 'to' is required", "to")
    if isinstance(to, str):
        # Cast 1: the type by name ("FLOAT"); an int from Cast 6
        from onnx import TensorProto
        try:
            to = TensorProto.DataType.Value(to.upper())
        except ValueError:
            raise node.error("unknown type name %r" % to, "to") from None
    try:
        dtype = onnx_dtype(to, "the target type")
    except Exception as e:
        raise node.unsupported(str(e), "to") from None
    _saturate(ctx, node)
    return ctx.cast(node.input(0), dtype)


def _saturate(ctx, node):
    """Cast 19's saturate applies to float8 targets only, which accy lacks
    (refused by type): for every type accy has it changes nothing."""
    if ctx.opset >= 19:
        node.attr("saturate", 1)


@converter("CastLike")
def cast_like(ctx, node):
    _saturate(ctx, node)
    return ctx.cast(node.input(0), node.input(1).dtype)


# ---- inverse trigonometric and hyperbolic functions ------------------------------
#
# accy has no asin/acosh/... ops: they are composed from atan2, log1p, expm1,
# sqrt and exp in forms that stay accurate near 0 and +-1 and do not overflow
# for large arguments. f16 and bf16 compute in f32 and round once at the end.

def compute_dtype(x):
    """The float dtype a composite computes in: f32 for f16/bf16 (rounded once
    at the end), the dtype itself otherwise."""
    return "f32" if x.dtype in ("f16", "bf16") else x.dtype


#: Above this magnitude e^-|x| and 1/x^2 are below the f64 epsilon, so
#: sinh/cosh use e^|x| / 2 and asinh/acosh use log(2|x|).
_BIG_EXP = 40.0
_BIG_ARG = 2.0 ** 28


def _f(ctx, v, dt):
    return ctx.scalar(v, dt)


def _half_exp(ctx, a):
    """e^a / 2 for a >= 0 without overflowing before the result does:
    (e^(a/2) / 2) * e^(a/2)."""
    dt = a.dtype
    h = ctx.unary("exp", ctx.mul(a, _f(ctx, 0.5, dt)))
    return ctx.mul(ctx.mul(h, _f(ctx, 0.5, dt)), h)


def _copysign(ctx, r, x):
    """r (>= 0 or NaN) with the sign of x (x < 0 gives -r)."""
    neg = ctx.compare("LT", x, _f(ctx, 0, x.dtype))
    return ctx.select(neg, ctx.unary("negate", r), r)


def _asin(ctx, x):
    one = _f(ctx, 1, x.dtype)
    # sqrt((1 - x)(1 + x)) = sqrt(1 - x^2) without cancellation; NaN for |x| > 1.
    c = ctx.unary("sqrt", ctx.mul(ctx.sub(one, x), ctx.add(one, x)))
    return ctx.binary("atan2", x, c)


def _acos(ctx, x):
    one = _f(ctx, 1, x.dtype)
    s = ctx.unary("sqrt", ctx.mul(ctx.sub(one, x), ctx.add(one, x)))
    return ctx.binary("atan2", s, x)


def _atan(ctx, x):
    return ctx.binary("atan2", x, ctx.full(x.shape, 1, x.dtype))


def _asinh(ctx, x):
    dt = x.dtype
    a = ctx.unary("abs", x)
    one = _f(ctx, 1, dt)
    # log1p(a + a^2 / (1 + sqrt(1 + a^2))): exact near 0.
    a2 = ctx.mul(a, a)
    small = ctx.unary("log1p", ctx.add(a, ctx.div(a2, ctx.add(one, ctx.unary(
        "sqrt", ctx.add(one, a2))))))
    big = ctx.add(ctx.unary("log", a), _f(ctx, 0.6931471805599453, dt))
    r = ctx.select(ctx.compare("GT", a, _f(ctx, _BIG_ARG, dt)), big, small)
    return _copysign(ctx, r, x)


def _acosh(ctx, x):
    dt = x.dtype
    one = _f(ctx, 1, dt)
    # log1p((x - 1) + sqrt(x - 1) sqrt(x + 1)): exact near 1; NaN below 1.
    xm1 = ctx.sub(x, one)
    root = ctx.mul(ctx.unary("sqrt", xm1), ctx.unary("sqrt", ctx.add(x, one)))
    small = ctx.unary("log1p", ctx.add(xm1, root))
    big = ctx.add(ctx.unary("log", x), _f(ctx, 0.6931471805599453, dt))
    return ctx.select(ctx.compare("GT", x, _f(ctx, _BIG_ARG, dt)), big, small)


def _atanh(ctx, x):
    dt = x.dtype
    one = _f(ctx, 1, dt)
    # 0.5 log1p(2a / (1 - a)) for a = |x| (log1p's argument stays >= 0 below
    # 1, so no cancellation near -1); +-Inf at +-1, NaN beyond.
    a = ctx.unary("abs", x)
    t = ctx.div(ctx.add(a, a), ctx.sub(one, a))
    return _copysign(ctx, ctx.mul(ctx.unary("log1p", t), _f(ctx, 0.5, dt)), x)


def _sinh(ctx, x):
    dt = x.dtype
    a = ctx.unary("abs", x)
    # (E + E / (E + 1)) / 2 with E = expm1(|x|): no cancellation near 0.
    e = ctx.unary("expm1", a)
    small = ctx.mul(ctx.add(e, ctx.div(e, ctx.add(e, _f(ctx, 1, dt)))), _f(ctx, 0.5, dt))
    r = ctx.select(ctx.compare("GT", a, _f(ctx, _BIG_EXP, dt)), _half_exp(ctx, a), small)
    return _copysign(ctx, r, x)


def _cosh(ctx, x):
    dt = x.dtype
    a = ctx.unary("abs", x)
    e = ctx.unary("exp", a)
    small = ctx.mul(ctx.add(e, ctx.div(_f(ctx, 1, dt), e)), _f(ctx, 0.5, dt))
    return ctx.select(ctx.compare("GT", a, _f(ctx, _BIG_EXP, dt)), _half_exp(ctx, a), small)


_COMPOSED = {"Asin": _asin, "Acos": _acos, "Atan": _atan, "Asinh": _asinh, "Acosh": _acosh,
             "Atanh": _atanh, "Sinh": _sinh, "Cosh": _cosh}


@converter("Asin", "Acos", "Atan", min_opset=7)
@converter("Asinh", "Acosh", "Atanh", "Sinh", "Cosh", min_opset=9)
def composed_unary(ctx, node):
    x = node.input(0)
    _require_dtype(node, x, FLOATS)
    r = _COMPOSED[node.op_type](ctx, ctx.cast(x, compute_dtype(x)))
    return ctx.cast(r, x.dtype)


# ---- classification --------------------------------------------------------------

@converter("IsNaN", min_opset=9)
def is_nan(ctx, node):
    x = node.input(0)
    _require_dtype(node, x, FLOATS)
    return ctx.compare("NE", x, x)


@converter("IsInf", min_opset=10)
def is_inf(ctx, node):
    x = node.input(0)
    _require_dtype(node, x, FLOATS)
    pos, neg = node.attr("detect_positive", 1), node.attr("detect_negative", 1)
    inf = float("inf")
    if pos and neg:
        return ctx.compare("EQ", ctx.unary("abs", x), ctx.scalar(inf, x.dtype))
    if pos:
        return ctx.compare("EQ", x, ctx.scalar(inf, x.dtype))
    if neg:
        return ctx.compare("EQ", x, ctx.scalar(-inf, x.dtype))
    return ctx.full(x.shape, False, "bool")


# ---- Mod, Pow, BitShift ------------------------------------------------------------

@converter("Mod", min_opset=10)
def mod(ctx, node):
    a, b = node.input(0), node.input(1)
    _require_dtype(node, a, FLOATS + INTS)
    if a.dtype != b.dtype:
        raise node.error("inputs have different dtypes: %s and %s" % (a.dtype, b.dtype))
    fmod = node.attr("fmod", 0)
    if fmod not in (0, 1):
        raise node.error("fmod must be 0 or 1, got %r" % (fmod,), "fmod")
    r = ctx.binary("remainder", a, b)  # C fmod / %: the sign of the dividend
    if fmod or a.dtype in ("u8", "u16", "u32", "u64"):
        return r
    # fmod=0: the sign of the divisor (Python's %, numpy.mod): a nonzero
    # remainder whose sign differs from the divisor's moves by one divisor.
    # (For floats ONNX requires fmod=1; numpy.mod is what its reference does.)
    zero = ctx.scalar(0, a.dtype)
    differ = ctx.binary("xor", ctx.compare("LT", r, zero), ctx.compare("LT", b, zero))
    fix = ctx.binary("and", differ, ctx.compare("NE", r, zero))
    return ctx.select(fix, ctx.add(r, b), r)


def _pow_compute_dtype(a, b):
    """The dtype Pow computes in when base and exponent types differ."""
    if a.dtype in FLOATS or b.dtype in FLOATS:
        if "f64" in (a.dtype, b.dtype) or a.dtype in INTS or b.dtype in INTS:
            return "f64"
        return "f32"
    # Two integer types: wrapping multiplication modulo 2^64 truncates to the
    # same bits as modulo 2^width, so computing in 64 bits is exact.
    return "u64" if "u64" in (a.dtype, b.dtype) else "i64"


@converter("Pow")
def pow_(ctx, node):
    a, b = binary_operands(ctx, node)
    allowed = FLOATS + INTS if ctx.opset >= 12 else FLOATS
    _require_dtype(node, a, allowed, "base")
    _require_dtype(node, b, allowed, "exponent")
    if a.dtype == b.dtype:
        return ctx.binary("power", a, b)
    if ctx.opset < 12:
        raise node.error("base and exponent dtypes differ (%s, %s) before opset 12"
                         % (a.dtype, b.dtype))
    dt = _pow_compute_dtype(a, b)
    r = ctx.binary("power", ctx.cast(a, dt), ctx.cast(b, dt))
    return ctx.cast(r, a.dtype)


@converter("BitShift", min_opset=11)
def bit_shift(ctx, node):
    a, b = node.input(0), node.input(1)
    _require_dtype(node, a, ("u8", "u16", "u32", "u64"))
    if a.dtype != b.dtype:
        raise node.error("inputs have different dtypes: %s and %s" % (a.dtype, b.dtype))
    direction = node.attr("direction")
    if direction == "LEFT":
        return ctx.binary("shift_left", a, b)
    if direction == "RIGHT":
        return ctx.binary("shift_right_logical", a, b)
    raise node.error("direction must be LEFT or RIGHT, got %r" % (direction,), "direction")


# ---- opset 18: bitwise ops ------------------------------------------------------------

_BITWISE = {"BitwiseAnd": "and", "BitwiseOr": "or", "BitwiseXor": "xor"}


@converter(*_BITWISE, min_opset=18)
def bitwise(ctx, node):
    a, b = node.input(0), node.input(1)
    _require_dtype(node, a, INTS)
    if a.dtype != b.dtype:
        raise node.error("inputs have different dtypes: %s and %s" % (a.dtype, b.dtype))
    return ctx.binary(_BITWISE[node.op_type], a, b)


@converter("BitwiseNot", min_opset=18)
def bitwise_not(ctx, node):
    x = node.input(0)
    _require_dtype(node, x, INTS)
    return ctx.unary("not", x)
