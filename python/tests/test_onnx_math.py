"""ONNX elementwise math and reductions: the composed lowerings (inverse
trigonometric and hyperbolic functions, activations, Mod, Pow, Reduce*,
Hardmax, EyeLike, window functions) against numpy, edge cases included."""

import math
import unittest

import numpy as np

from helpers import EPS32, EPS64, TINY32, accy, assert_within, sum_bound

try:
    import onnx
    from onnx import helper, mapping, numpy_helper
    import accy.onnx as ao
except ImportError:  # pragma: no cover - depends on the machine
    onnx = None


def _elem(dtype):
    return mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]


def _model(op, inputs, opset=13, n_out=1, inits=(), **attrs):
    """A one-node model; |inputs| maps names to arrays (graph inputs)."""
    node = helper.make_node(op, list(inputs) + [i.name for i in inits],
                            ["y%d" % i for i in range(n_out)], name="n", **attrs)
    vis = [helper.make_tensor_value_info(k, _elem(v.dtype), list(v.shape))
           for k, v in inputs.items()]
    outs = [helper.make_tensor_value_info("y%d" % i, 0, None) for i in range(n_out)]
    g = helper.make_graph([node], "g", vis, outs, list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def run(op, *arrays, opset=13, inits=(), **attrs):
    """Imports a one-node model with graph inputs |arrays| and runs it."""
    inputs = {"x%d" % i: np.asarray(a) for i, a in enumerate(arrays)}
    wire = ao.import_model(_model(op, inputs, opset, inits=inits, **attrs))
    with accy.Session(threads=1) as s:
        return s.compile(wire)(*inputs.values())[0]


def _close(tc, got, want, ulps, dtype):
    """|got - want| <= ulps * eps * |want| (+ the smallest normal); NaN == NaN;
    infinities exact."""
    fi = np.finfo(dtype)
    g, w = got.astype(np.float64), want.astype(np.float64)
    tc.assertEqual(got.dtype, np.dtype(dtype))
    tc.assertEqual(got.shape, want.shape)
    with np.errstate(invalid="ignore"):
        ok = (np.isnan(g) & np.isnan(w)) | (g == w) | \
            (np.abs(g - w) <= ulps * float(fi.eps) * np.abs(w) + float(fi.tiny))
    bad = np.flatnonzero(~ok)
    tc.assertEqual(len(bad), 0, "first mismatches (index, got, want): %s" % [
        (int(i), g.flat[i], w.flat[i]) for i in bad[:5]])


def _wide(dtype):
    """Arguments across the whole range of |dtype|, with the edge values."""
    fi = np.finfo(dtype)
    top = math.log10(float(fi.max))
    with np.errstate(over="ignore"):
        mags = np.logspace(-30 if dtype != np.float16 else -7, top, 300)
        return np.concatenate([
            np.linspace(-3, 3, 601), mags, -mags,
            [0.0, -0.0, 1, -1, 1 - 1e-7, -1 + 1e-7, 1 + 1e-7, 0.999, -0.999, 1e-8, 88.5, 89.4,
             709.5, np.inf, -np.inf, np.nan]]).astype(dtype)


@unittest.skipIf(onnx is None, "python3-onnx is not installed")
class TestComposedUnary(unittest.TestCase):
    REF = {"Asin": np.arcsin, "Acos": np.arccos, "Atan": np.arctan, "Asinh": np.arcsinh,
           "Acosh": np.arccosh, "Atanh": np.arctanh, "Sinh": np.sinh, "Cosh": np.cosh}

    MATH = {"Asin": math.asin, "Acos": math.acos, "Atan": math.atan, "Asinh": math.asinh,
            "Acosh": math.acosh, "Atanh": math.atanh, "Sinh": math.sinh, "Cosh": math.cosh}

    def _ref64(self, op, x):
        """The float64 reference for f64 arguments: Python's math (glibc's
        scalar libm, within 1 ulp on every x86-64, whereas numpy's float64
        loops may use SIMD code of other accuracy on AVX-512); numpy's IEEE
        edge values (NaN, infinities) where math raises."""
        edge = self.REF[op](x)

        def one(v, e):
            try:
                return self.MATH[op](v)
            except (ValueError, OverflowError):
                return e
        return np.array([one(float(v), float(e)) for v, e in zip(x, edge)])

    def test_accuracy_over_the_whole_range(self):
        # Within 4 ulps of the correctly rounded result everywhere, including
        # near 0 and +-1 (no cancellation), for huge arguments (no premature
        # overflow: sinh(89) is finite in f32, asinh(3e38) is 89.3), at the
        # infinities, and NaN outside the domain. For f32 and f16 the float64
        # reference is exact to far below an ulp; for f64 it is within 1 ulp
        # itself, so the bound is 4 + 1.
        for dtype in (np.float32, np.float64, np.float16):
            x = _wide(dtype)
            for op, f in self.REF.items():
                with self.subTest(op=op, dtype=dtype.__name__), np.errstate(all="ignore"):
                    if dtype == np.float64:
                        _close(self, run(op, x, opset=9), self._ref64(op, x), 5, dtype)
                    else:
                        want = f(x.astype(np.float64)).astype(dtype)
                        _close(self, run(op, x, opset=9), want, 4, dtype)

    def test_edge_values(self):
        x = np.array([1, -1, 2, -2], np.float32)
        np.testing.assert_array_equal(run("Atanh", x, opset=9),
                                      np.array([np.inf, -np.inf, np.nan, np.nan], np.float32))
        np.testing.assert_array_equal(run("Acosh", np.array([1, 0.5, -5e30], np.float32),
                                          opset=9), np.array([0, np.nan, np.nan], np.float32))
        # The infinities, 0 and the NaNs above are the defined edge values
        # (exact); asin(+-1) and acos(-1) are within the same 4 ulps as
        # everywhere else.
        _close(self, run("Asin", x[:2], opset=7),
               np.array([np.pi / 2, -np.pi / 2], np.float32), 4, np.float32)
        _close(self, run("Acos", np.array([-1], np.float64), opset=7), np.array([np.pi]), 4,
               np.float64)

    def test_bf16_rounds_once(self):
        bits = accy.dtypes.f32_to_bf16(np.array([0.5, -0.75, 2.0], np.float32))
        m = _model("Asin", {"x0": np.zeros(3, np.float32)}, opset=13)
        m.graph.input[0].type.tensor_type.elem_type = onnx.TensorProto.BFLOAT16
        with accy.Session(threads=1) as s:
            got = accy.dtypes.bf16_to_f32(s.compile(ao.import_model(m))(bits)[0])
        with np.errstate(invalid="ignore"):
            exact = np.arcsin(np.array([0.5, -0.75, 2.0]))
        # Computed in f32 (within 4 f32 ulps) and rounded once to bf16 (half a
        # bf16 ulp, 2^-9 relative at most): rounding after every step would
        # be off by up to a whole bf16 ulp.
        assert_within(got, exact, (2.0 ** -9 + 4 * EPS32) * np.abs(exact))

    def test_integer_input_is_unsupported(self):
        with self.assertRaises(ao.UnsupportedError) as cm:
            run("Sinh", np.array([1], np.int32), opset=9)
        self.assertEqual((cm.exception.node, cm.exception.op_type), ("n", "Sinh"))


@unittest.skipIf(onnx is None, "python3-onnx is not installed")
class TestActivations(unittest.TestCase):
    X = np.array([-np.inf, -1000, -20, -1.5, -1e-6, -0.0, 0, 1e-6, 0.5, 2.5, 20, 1000,
                  np.inf, np.nan], np.float32)

    def check(self, op, want, opset=13, ulps=4, x=None, **attrs):
        x = self.X if x is None else x
        with np.errstate(all="ignore"):
            want = want(x.astype(np.float64)).astype(x.dtype)
        _close(self, run(op, x, opset=opset, **attrs), want, ulps, x.dtype)

    def test_elu_celu_selu(self):
        self.check("Elu", lambda x: np.where(x < 0, 2.0 * np.expm1(x), x), alpha=2.0)
        self.check("Elu", lambda x: np.where(x < 0, np.expm1(x), x))
        self.check("Celu", lambda x: np.maximum(x, 0) + np.minimum(0, 0.5 * np.expm1(x / 0.5)),
                   opset=12, alpha=0.5)
        a, g = 1.67326319217681884765625, 1.05070102214813232421875
        self.check("Selu", lambda x: g * np.where(x <= 0, a * np.expm1(x), x), opset=6)
        self.check("Selu", lambda x: 3 * np.where(x <= 0, 2 * np.expm1(x), x), opset=6,
                   alpha=2.0, gamma=3.0)

    def test_softplus_does_not_overflow(self):
        # log(e^x + 1) evaluated literally overflows at x = 89 in f32.
        self.check("Softplus", lambda x: np.logaddexp(x, 0))
        self.assertEqual(run("Softplus", np.array([1000], np.float32))[0], 1000)

    def test_hard_sigmoid_swish_softsign_thresholded(self):
        self.check("HardSigmoid", lambda x: np.clip(0.5 * x + 0.6, 0, 1), opset=6,
                   alpha=0.5, beta=0.6)
        self.check("HardSwish", lambda x: x * np.clip(x / 6 + 0.5, 0, 1), opset=14)
        self.check("Softsign", lambda x: x / (1 + np.abs(x)))
        self.check("ThresholdedRelu", lambda x: np.where(x > 2, x, 0), opset=10, alpha=2.0)

    def test_f16_computes_in_f32(self):
        # gamma alpha (e^x - 1) rounded to f16 after each step is one ulp off
        # for about a third of these; computed in f32 (a few f32 ulps) and
        # rounded once it is within half an f16 ulp of the exact value, plus
        # the f32 error.
        x = np.unique(np.arange(-4, 0, 2 ** -8).astype(np.float16))
        a, g = 1.67326319217681884765625, 1.05070102214813232421875
        exact = g * (a * np.expm1(x.astype(np.float64)))
        got = run("Selu", x, opset=6)
        self.assertEqual(got.dtype, np.float16)
        half_ulp = 0.5 * np.spacing(np.abs(exact).astype(np.float16)).astype(np.float64)
        assert_within(got, exact, half_ulp + 8 * EPS32 * np.abs(exact))

    def test_shrink_float(self):
        self.check("Shrink", lambda x: np.where(x < -1.5, x + 0.5, np.where(x > 1.5, x - 0.5, 0)),
                   opset=9, lambd=1.5, bias=0.5)

    def test_shrink_integer(self):
        x = np.array([-128, -3, -2, -1, 0, 1, 2, 3, 127], np.int8)
        # lambd 1.5: |x| >= 2 shrinks; the bias wraps like int8 arithmetic.
        np.testing.assert_array_equal(run("Shrink", x, opset=9, lambd=1.5, bias=2.0),
                                      np.array([-126, -1, 0, 0, 0, 0, 0, 1, 125], np.int8))
        np.testing.assert_array_equal(run("Shrink", x, opset=9, lambd=-1000.0, bias=1.0),
                                      (x.astype(np.int16) + 1).astype(np.int8))
        np.testing.assert_array_equal(run("Shrink", x, opset=9, lambd=1000.0),
                                      np.zeros(9, np.int8))
        u = np.array([0, 1, 5, 255], np.uint8)
        np.testing.assert_array_equal(run("Shrink", u, opset=9, lambd=1.0, bias=1.0),
                                      np.array([0, 0, 4, 254], np.uint8))
        with self.assertRaises(ao.UnsupportedError) as cm:
            run("Shrink", x, opset=9, bias=0.5)
        self.assertEqual(cm.exception.attribute, "bias")

    def test_prelu(self):
        x = np.linspace(-3, 3, 60, dtype=np.float32).reshape(3, 4, 5)
        slope = np.array([0.1, 0.2, 0.3, 0.4, 0.5], np.float32)
        # One multiplication: within one rounding of the float64 product.
        x64 = x.astype(np.float64)
        want = np.where(x < 0, x64 * slope.astype(np.float64), x64)
        assert_within(run("PRelu", x, slope, opset=16), want, EPS32 * np.abs(want))
        # Before opset 7: a single slope value, whatever its shape.
        assert_within(run("PRelu", x, np.array([0.25], np.float32), opset=6),
                      np.where(x < 0, 0.25 * x64, x64), 0)  # times a power of 2: exact
        xi = np.array([[-4, 3], [2, -1]], np.int32)
        np.testing.assert_array_equal(run("PRelu", xi, np.array([[2], [3]], np.int32)),
                                      np.array([[-8, 3], [2, -3]], np.int32))
        with self.assertRaises(ao.ConversionError):  # slope does not broadcast to x
            run("PRelu", x[:, :, :1], slope)

    def test_is_inf_is_nan(self):
        x = np.array([-np.inf, -1, 0, np.nan, 3, np.inf], np.float32)
        np.testing.assert_array_equal(run("IsInf", x, opset=10), np.isinf(x))
        np.testing.assert_array_equal(run("IsInf", x, opset=10, detect_negative=0),
                                      np.isposinf(x))
        np.testing.assert_array_equal(run("IsInf", x, opset=10, detect_positive=0),
                                      np.isneginf(x))
        np.testing.assert_array_equal(
            run("IsInf", x, opset=10, detect_positive=0, detect_negative=0), np.zeros(6, bool))
        np.testing.assert_array_equal(run("IsNaN", x), np.isnan(x))


@unittest.skipIf(onnx is None, "python3-onnx is not installed")
class TestModPowShift(unittest.TestCase):
    def test_mod_integer_takes_the_divisors_sign(self):
        a = np.array([7, -7, 7, -7, 6, -6, 0, -128, -128], np.int8)
        b = np.array([3, 3, -3, -3, 3, -3, -5, -1, 3], np.int8)
        np.testing.assert_array_equal(run("Mod", a, b), np.mod(a, b))
        np.testing.assert_array_equal(run("Mod", a, b, fmod=1), np.fmod(a, b))
        for dt in (np.int32, np.int64, np.uint8, np.uint64):
            rng = np.random.default_rng(1)
            info = np.iinfo(dt)
            x = rng.integers(info.min, info.max, 200, dtype=dt, endpoint=True)
            y = rng.integers(info.min, info.max, 200, dtype=dt, endpoint=True)
            y[y == 0] = 7
            with self.subTest(dtype=dt.__name__):
                np.testing.assert_array_equal(run("Mod", x, y), np.mod(x, y))

    def test_mod_by_zero_is_the_dividend(self):
        # ONNX leaves it open; accy's remainder defines x % 0 = x, and the
        # sign fix-up keeps it.
        a = np.array([5, -5, 0], np.int32)
        np.testing.assert_array_equal(run("Mod", a, np.zeros(3, np.int32)), a)

    def test_mod_float_and_broadcast(self):
        # fmod is exact in IEEE arithmetic, and these results (and the sign
        # fix-up adding the divisor) are exactly representable: bit for bit.
        a = np.array([5.5, -5.5, 5.5, -5.5, 3.0], np.float32)
        b = np.array([2.0, 2.0, -2.0, -2.0, 1.5], np.float32)
        np.testing.assert_array_equal(run("Mod", a, b, fmod=1), np.fmod(a, b))
        np.testing.assert_array_equal(run("Mod", a, b), np.mod(a, b))
        x = np.arange(-6, 6, dtype=np.int32).reshape(3, 4)
        np.testing.assert_array_equal(run("Mod", x, np.array([5], np.int32)), np.mod(x, 5))

    def test_pow_mixed_dtypes(self):
        # The results here are exactly representable and docs/ops.md defines
        # float power as C pow, which glibc rounds correctly (so an exact
        # result is returned exactly); 3^2.5 = 15.588 is far from an f16
        # rounding tie (1995.3 f16 ulps), so its f32 error cannot flip it.
        x = np.array([-1, 2, 1.5, -2], np.float32)
        e = np.array([2 ** 25 + 1, 3, 2, -3], np.int64)
        # In f32 the exponent 2^25 + 1 would round to an even number.
        np.testing.assert_array_equal(run("Pow", x, e, opset=15),
                                      np.array([-1, 8, 2.25, -0.125], np.float32))
        xi = np.array([2, 3, -3, 10], np.int32)
        # int base, float exponent: computed in f64, truncated toward zero.
        np.testing.assert_array_equal(
            run("Pow", xi, np.array([0.5, 2, 3, -1], np.float32), opset=15),
            np.array([1, 9, -27, 0], np.int32))
        # int32 base, int64 exponent: wraps exactly like int32 multiplication.
        got = run("Pow", np.array([3, -1, 7], np.int32), np.array([40, 2 ** 33 + 1, 0],
                                                                   np.int64), opset=15)
        np.testing.assert_array_equal(got, np.array([pow(3, 40, 2 ** 32), -1, 1],
                                                    np.int64).astype(np.int32))
        h = run("Pow", np.array([3, 0.5], np.float16), np.array([2.5, -1], np.float32),
                opset=15)
        np.testing.assert_array_equal(h, np.array([3 ** 2.5, 2], np.float16))

    def test_pow_same_dtype_and_opset(self):
        x = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
        want = x.astype(np.float64) ** np.array([2, 0.5, -1])
        # C powf: within 1 ulp of the exact power (the float64 reference).
        assert_within(run("Pow", x, np.array([2, 0.5, -1], np.float32), opset=7), want,
                      EPS32 * np.abs(want))
        with self.assertRaises(ao.UnsupportedError):  # ints only from opset 12
            run("Pow", np.array([2], np.int32), np.array([2], np.int32), opset=11)

    def test_bit_shift(self):
        x = np.array([1, 0x80, 0xFF, 3], np.uint8)
        s = np.array([7, 1, 8, 200], np.uint8)
        # Amounts >= the bit width give 0 (accy's shift ops).
        np.testing.assert_array_equal(run("BitShift", x, s, opset=11, direction="LEFT"),
                                      np.array([0x80, 0, 0, 0], np.uint8))
        np.testing.assert_array_equal(run("BitShift", x, s, opset=11, direction="RIGHT"),
                                      np.array([0, 0x40, 0, 0], np.uint8))
        with self.assertRaises(ao.ConversionError) as cm:
            run("BitShift", x, s, opset=11, direction="UP")
        self.assertEqual(cm.exception.attribute, "direction")
        with self.assertRaises(ao.UnsupportedError):
            run("BitShift", x.astype(np.int8), s.astype(np.int8), opset=11,
                direction="LEFT")


@unittest.skipIf(onnx is None, "python3-onnx is not installed")
class TestReductions(unittest.TestCase):
    X = np.random.default_rng(3).standard_normal((3, 4, 5)).astype(np.float32)

    @staticmethod
    def _bound(op, want, n):
        """Error bound of the composite over n positive terms (the inputs
        are > 0.1, so there is no cancellation): a sum is within n eps
        relative (sum_bound), squaring adds one rounding, sqrt halves the
        relative error and adds one, log turns a relative error into an
        absolute one and adds one ulp, exp adds a few ulps per term."""
        aw = np.abs(want)
        if op == "ReduceL1":
            return n * EPS32 * aw + TINY32
        if op == "ReduceSumSquare":
            return (n + 1) * EPS32 * aw + TINY32
        if op == "ReduceL2":
            return ((n + 1) / 2 + 1) * EPS32 * aw + TINY32
        if op == "ReduceLogSum":
            return (n + 1) * EPS32 + EPS32 * aw
        return (n + 5) * EPS32 + EPS32 * aw  # ReduceLogSumExp: exp within 4 ulps

    def test_composites_against_numpy(self):
        refs = {"ReduceL1": lambda x, a, k: np.sum(np.abs(x), a, keepdims=k),
                "ReduceL2": lambda x, a, k: np.sqrt(np.sum(x * x, a, keepdims=k)),
                "ReduceSumSquare": lambda x, a, k: np.sum(x * x, a, keepdims=k),
                "ReduceLogSum": lambda x, a, k: np.log(np.sum(x, a, keepdims=k)),
                "ReduceLogSumExp": lambda x, a, k: np.log(np.sum(np.exp(x), a, keepdims=k))}
        x = np.abs(self.X) + 0.1
        for op, f in refs.items():
            for axes, keep in (([1], 1), ([-1, 0], 0), (None, 1), (None, 0), ([2, 1], 0)):
                with self.subTest(op=op, axes=axes, keepdims=keep):
                    attrs = {"keepdims": keep}
                    if axes is not None:
                        attrs["axes"] = axes
                    want = f(x.astype(np.float64), None if axes is None else tuple(axes),
                             bool(keep))
                    n = x.size // max(want.size, 1)
                    assert_within(run(op, x, **attrs), want, self._bound(op, want, n))

    def test_log_sum_exp_is_stable(self):
        x = np.array([[1000, 1000], [-1000, -1001], [-np.inf, -np.inf], [np.inf, 1],
                      [np.nan, 1]], np.float64)
        with np.errstate(all="ignore"):
            want = np.array([1000 + np.log(2), np.logaddexp(-1000, -1001), -np.inf, np.inf,
                             np.nan])
        # max + log(sum(exp(x - max))) over 2 terms in f64: exp and log
        # within a few ulps give an absolute error of a few eps64 on the
        # log, next to a max of magnitude 1000.
        assert_within(run("ReduceLogSumExp", x, axes=[1], keepdims=0), want,
                      8 * EPS64 * (1 + np.abs(want)))
        # Nothing to reduce: log(0).
        self.assertEqual(run("ReduceLogSumExp", np.zeros((2, 0), np.float32), axes=[1],
                             keepdims=0).tolist(), [-np.inf, -np.inf])

    def test_f16_squares_in_f32(self):
        # 300^2 overflows f16; the result 500 does not.
        x = np.array([300, 400], np.float16)
        self.assertEqual(run("ReduceL2", x, keepdims=0).tolist(), 500.0)

    def test_integer_inputs(self):
        x = np.array([[3, -4], [-6, 8], [70000, 70000]], np.int32)
        np.testing.assert_array_equal(run("ReduceL1", x, axes=[1], keepdims=0),
                                      np.array([7, 14, 140000], np.int32))
        np.testing.assert_array_equal(run("ReduceSumSquare", x, axes=[1], keepdims=0),
                                      np.sum(x * x, 1, dtype=np.int32))  # wraps
        np.testing.assert_array_equal(run("ReduceL2", x[:2], axes=[1], keepdims=0),
                                      np.array([5, 10], np.int32))
        np.testing.assert_array_equal(run("ReduceLogSum", np.array([[1, 9], [2, 3]], np.int64),
                                          axes=[1], keepdims=0), np.array([2, 1], np.int64))

    def test_reduce_sum_axes_input(self):
        x = self.X
        axes = numpy_helper.from_array(np.array([], np.int64), "axes")
        np.testing.assert_array_equal(
            run("ReduceSum", x, inits=[axes], noop_with_empty_axes=1), x)
        x64 = x.astype(np.float64)
        assert_within(run("ReduceSum", x, inits=[axes], keepdims=0), np.sum(x64),
                      sum_bound(np.abs(x64).sum(), x.size))
        neg = numpy_helper.from_array(np.array([-1, 0], np.int64), "axes")
        assert_within(run("ReduceSum", x, inits=[neg]), np.sum(x64, (0, 2), keepdims=True),
                      sum_bound(np.abs(x64).sum((0, 2), keepdims=True), 15))
        dup = numpy_helper.from_array(np.array([1, -2], np.int64), "axes")
        with self.assertRaises(ao.ConversionError):
            run("ReduceSum", x, inits=[dup])
        # axes as a graph input decides the shape: it must be frozen.
        with self.assertRaises(ao.NeedsConstantInput):
            run("ReduceSum", x, np.array([1], np.int64))

    def test_noop_with_empty_axes_only_for_reduce_sum(self):
        # Before opset 18 only ReduceSum (13+) has the attribute.
        for op in ("ReduceMax", "ReduceL2"):
            with self.subTest(op=op), self.assertRaises(ao.UnsupportedError) as cm:
                run(op, self.X, noop_with_empty_axes=1)
            self.assertEqual(cm.exception.attribute, "noop_with_empty_axes")


@unittest.skipIf(onnx is None, "python3-onnx is not installed")
class TestHardmaxEyeWindows(unittest.TestCase):
    def test_hardmax_first_maximum_and_nan(self):
        x = np.array([[1, 3, 3, 0], [np.nan, 5, np.nan, 1], [2, 2, 2, 2]], np.float32)
        np.testing.assert_array_equal(run("Hardmax", x), np.array(
            [[0, 1, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0]], np.float32))
        np.testing.assert_array_equal(run("Hardmax", x, axis=0), np.array(
            [[0, 0, 0, 0], [1, 1, 1, 0], [0, 0, 0, 1]], np.float32))

    def test_hardmax_before_opset_13_flattens(self):
        x = np.random.default_rng(4).standard_normal((2, 3, 4)).astype(np.float32)
        got = run("Hardmax", x, opset=11)  # axis 1: one 1 per batch of 12
        flat = x.reshape(2, 12)
        want = np.zeros_like(flat)
        want[np.arange(2), flat.argmax(1)] = 1
        np.testing.assert_array_equal(got, want.reshape(2, 3, 4))

    def test_eye_like(self):
        x = np.zeros((3, 5), np.int32)
        for k in (0, 2, -1, 5, -3):
            with self.subTest(k=k):
                np.testing.assert_array_equal(run("EyeLike", x, opset=9, k=k),
                                              np.eye(3, 5, k, dtype=np.int32))
        y = run("EyeLike", x, opset=9, dtype=onnx.TensorProto.DOUBLE, k=1)
        self.assertEqual(y.dtype, np.float64)
        np.testing.assert_array_equal(y, np.eye(3, 5, 1))
        with self.assertRaises(ao.ConversionError):
            run("EyeLike", np.zeros(3, np.float32), opset=9)

    def test_windows(self):
        n = numpy_helper.from_array(np.array(10, np.int64), "size")
        for op, a in (("HannWindow", [0.5, 0.5]), ("HammingWindow", [25 / 46, 21 / 46]),
                      ("BlackmanWindow", [0.42, 0.5, 0.08])):
            for periodic in (1, 0):
                with self.subTest(op=op, periodic=periodic):
                    t = [2 * math.pi * i / (10 if periodic else 9) for i in range(10)]
                    want = np.array([sum((-1) ** k * c * math.cos(k * ti)
                                         for k, c in enumerate(a)) for ti in t])
                    # Each term: the angle k t carries a few roundings (4 eps
                    # relative, so an absolute 4 eps k t on the cosine, whose
                    # slope is at most 1), cos itself 2 ulps, the product and
                    # the sum one rounding each.
                    bound = sum(c * (4 * EPS64 * k * np.array(t) + 4 * EPS64)
                                for k, c in enumerate(a)) + 2 * EPS64 * np.abs(want)
                    g = helper.make_graph(
                        [helper.make_node(op, ["size"], ["y"], periodic=periodic,
                                          output_datatype=onnx.TensorProto.DOUBLE)],
                        "g", [], [helper.make_tensor_value_info("y", 0, None)], [n])
                    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
                    with accy.Session(threads=1) as s:
                        (got,) = s.compile(ao.import_model(m))()
                    assert_within(got, want, bound)


if __name__ == "__main__":
    unittest.main()
