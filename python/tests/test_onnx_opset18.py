"""ONNX opsets 18..21: the attribute-to-input moves (Reduce* axes, Pad axes),
Split's num_outputs, Resize's axes / keep_aspect_ratio_policy / antialias /
half_pixel_symmetric, Scatter max/min, Cast's saturate, the quantisation
attributes, GridSample's renamed modes, the new ops (Bitwise*, Mish, Gelu,
GroupNormalization, CenterCropPad, AffineGrid, Col2Im), and the refusals
(float8 and int4 types, DeformConv, opsets above 21). Models are written
with onnx.helper and compared with float64 numpy references within the
error bound of each computation."""

import math
import unittest

import numpy as np

from helpers import EPS32, TINY32, accy, assert_within, sum_bound

try:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    import accy.onnx as ao
except ImportError:  # pragma: no cover - depends on the machine
    onnx = None

_ELEM = {np.dtype(np.float32): 1, np.dtype(np.int64): 7, np.dtype(np.int32): 6,
         np.dtype(np.bool_): 9, np.dtype(np.float64): 11, np.dtype(np.uint8): 2,
         np.dtype(np.int8): 3, np.dtype(np.uint16): 4}


def _model(node, inputs, opset, consts=(), n_out=1):
    vis = [helper.make_tensor_value_info(n, _ELEM[a.dtype], list(a.shape))
           for n, a in inputs.items()]
    inits = [numpy_helper.from_array(np.asarray(a), n) for n, a in dict(consts).items()]
    outs = [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None)
            for o in list(node.output)[:n_out] if o]
    g = helper.make_graph([node], "g", vis, outs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _run(node, inputs, opset, consts=(), n_out=1):
    wire = ao.import_model(_model(node, inputs, opset, consts, n_out))
    with accy.Session(threads=1) as s:
        return s.compile(wire)(*inputs.values())


def _n(op, ins, outs=("y",), **attrs):
    return helper.make_node(op, list(ins), list(outs), name="n", **attrs)


X = np.random.default_rng(18).standard_normal((2, 3, 4)).astype(np.float32)


@unittest.skipIf(onnx is None, "python3-onnx is not installed")
class TestOpsetRange(unittest.TestCase):
    def test_18_to_21_accepted_22_refused(self):
        x = np.array([-1.0, 2.0], np.float32)
        for opset in (18, 19, 20, 21):
            (y,) = _run(_n("Relu", ["x"]), {"x": x}, opset)
            np.testing.assert_array_equal(y, [0, 2])
        with self.assertRaisesRegex(ao.UnsupportedError, "opset 22 is outside the supported "
                                                         "1..21"):
            _run(_n("Relu", ["x"]), {"x": x}, 22)

    def test_new_types_are_refused_by_name(self):
        for code, name in ((17, "FLOAT8E4M3FN"), (19, "FLOAT8E5M2"), (21, "UINT4"),
                           (22, "INT4")):
            m = _model(_n("Identity", ["x"]), {"x": np.zeros(2, np.float32)}, 21)
            m.graph.input[0].type.tensor_type.elem_type = code
            with self.subTest(name=name), self.assertRaises(ao.UnsupportedError) as cm:
                ao.import_model(m)
            self.assertIn("graph input 'x' has element type %s, which accy does not have"
                          % name, str(cm.exception))
            with self.assertRaises(ao.UnsupportedError) as cm:
                _run(_n("Cast", ["x"], to=code, saturate=0), {"x": np.zeros(2, np.float32)}, 19)
            self.assertIn("node 'n' (Cast) attribute 'to'", str(cm.exception))
            self.assertIn(name, str(cm.exception))

    def test_cast_saturate_is_accepted_for_accy_types(self):
        (y,) = _run(_n("Cast", ["x"], to=TensorProto.INT32, saturate=1),
                    {"x": np.array([1.5, -2.5], np.float32)}, 19)
        np.testing.assert_array_equal(y, [1, -2])

    def test_deform_conv_is_refused_naming_node_op_and_opset(self):
        node = _n("DeformConv", ["x", "w", "o"])
        ins = {"x": np.zeros((1, 1, 3, 3), np.float32), "w": np.zeros((1, 1, 2, 2), np.float32),
               "o": np.zeros((1, 8, 2, 2), np.float32)}
        with self.assertRaises(ao.UnsupportedError) as cm:
            _run(node, ins, 19)
        msg = str(cm.exception)
        self.assertIn("node 'n' (DeformConv)", msg)
        self.assertIn("(opset 19)", msg)
        self.assertIn("data-dependent offsets", msg)


@unittest.skipIf(onnx is None, "python3-onnx is not installed")
class TestAttributesBecameInputs(unittest.TestCase):
    def test_reduce_axes_input(self):
        x64 = X.astype(np.float64)
        axes = {"a": np.array([0, -1], np.int64)}
        for op, f, bound in (
                ("ReduceMean", lambda v: v.mean((0, 2), keepdims=True),
                 lambda w: sum_bound(np.abs(x64).mean((0, 2), keepdims=True), 9)),
                ("ReduceMax", lambda v: v.max((0, 2), keepdims=True), lambda w: 0),
                ("ReduceMin", lambda v: v.min((0, 2), keepdims=True), lambda w: 0),
                ("ReduceProd", lambda v: v.prod((0, 2), keepdims=True),
                 lambda w: 8 * EPS32 * np.abs(w) + TINY32),
                ("ReduceSumSquare", lambda v: (v * v).sum((0, 2), keepdims=True),
                 lambda w: 9 * EPS32 * w + TINY32),
                ("ReduceL2", lambda v: np.sqrt((v * v).sum((0, 2), keepdims=True)),
                 lambda w: 6 * EPS32 * w + TINY32)):
            with self.subTest(op=op):
                (y,) = _run(_n(op, ["x", "a"]), {"x": X}, 18, consts=axes)
                want = f(x64)
                assert_within(y, want, bound(want))
        # no axes: all, or none with noop_with_empty_axes
        (y,) = _run(_n("ReduceMax", ["x"], keepdims=0), {"x": X}, 18)
        self.assertEqual(float(y), float(X.max()))
        (y,) = _run(_n("ReduceMax", ["x"], noop_with_empty_axes=1), {"x": X}, 18)
        np.testing.assert_array_equal(y, X)
        with self.assertRaisesRegex(ao.ConversionError, "axes is an input from opset 18"):
            _run(_n("ReduceMean", ["x"], axes=[1]), {"x": X}, 18)
        # still the attribute at 17
        (y,) = _run(_n("ReduceMax", ["x"], axes=[1], keepdims=0), {"x": X}, 17)
        np.testing.assert_array_equal(y, X.max(1))

    def test_reduce_max_min_bool_at_20(self):
        b = np.array([[True, False], [False, False]])
        (y,) = _run(_n("ReduceMax", ["x", "a"], keepdims=0), {"x": b}, 20,
                    consts={"a": np.array([1], np.int64)})
        np.testing.assert_array_equal(y, [True, False])
        (y,) = _run(_n("ReduceMin", ["x"], keepdims=0), {"x": b}, 20)
        self.assertEqual(bool(y), False)
        with self.assertRaises(ao.UnsupportedError):
            _run(_n("ReduceMax", ["x"]), {"x": b}, 19)

    def test_split_num_outputs(self):
        x = np.arange(14, dtype=np.float32).reshape(2, 7)
        outs = _run(_n("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3), {"x": x}, 18,
                    n_out=3)
        for got, want in zip(outs, (x[:, 0:3], x[:, 3:6], x[:, 6:7])):
            np.testing.assert_array_equal(got, want)
        with self.assertRaisesRegex(ao.ConversionError, "exactly one of"):
            _run(_n("Split", ["x"], ["a", "b"], axis=1), {"x": x}, 18, n_out=2)

    def test_pad_axes_and_wrap(self):
        x = np.arange(12, dtype=np.float32).reshape(3, 4)
        (y,) = _run(_n("Pad", ["x", "p", "", "a"]), {"x": x}, 18,
                    consts={"p": np.array([1, 2], np.int64), "a": np.array([-1], np.int64)})
        np.testing.assert_array_equal(y, np.pad(x, ((0, 0), (1, 2))))
        (y,) = _run(_n("Pad", ["x", "p"], mode="wrap"), {"x": x}, 19,
                    consts={"p": np.array([1, 2, 0, 3], np.int64)})
        np.testing.assert_array_equal(y, np.pad(x, ((1, 0), (2, 3)), mode="wrap"))
        with self.assertRaises(ao.UnsupportedError):
            _run(_n("Pad", ["x", "p"], mode="wrap"), {"x": x}, 18,
                 consts={"p": np.array([1, 2, 0, 3], np.int64)})


def _linear_ref(x, out_len, scale, axis, coord, weights):
    """1-D resampling reference: out[i] = sum_j weights(i, j) x[j] along
    |axis|, with |coord| the source coordinate of output i."""
    xm = np.moveaxis(x.astype(np.float64), axis, -1)
    out = np.zeros(xm.shape[:-1] + (out_len,))
    for i in range(out_len):
        w = weights(coord(i), xm.shape[-1])
        out[..., i] = xm @ w
    return np.moveaxis(out, -1, axis)


@unittest.skipIf(onnx is None, "python3-onnx is not installed")
class TestResize18(unittest.TestCase):
    @staticmethod
    def _hat(support_scale):
        """Linear kernel weights over all input positions (clamped edges add
        to the end positions), normalised: the spec's antialias rule."""
        def weights(xo, n):
            s = min(support_scale, 1.0)
            fl = math.floor(xo)
            ratio = 1.0 if xo == fl else xo - fl
            first = int(math.floor(-1 / s) + 1)
            w = np.zeros(n)
            taps = [(i, max(0.0, 1 - abs((i - ratio) * s))) for i in range(first, 2 - first)]
            total = sum(t for _, t in taps)
            base = fl if xo != fl else fl - 1
            for i, t in taps:
                w[min(max(int(base + i), 0), n - 1)] += t / total
            return w
        return weights

    def test_axes_and_antialias(self):
        x = np.random.default_rng(5).standard_normal((1, 2, 3, 8)).astype(np.float32)
        node = _n("Resize", ["x", "", "s"], mode="linear", axes=[3], antialias=1)
        (y,) = _run(node, {"x": x}, 18, consts={"s": np.array([0.5], np.float32)})
        self.assertEqual(y.shape, (1, 2, 3, 4))
        want = _linear_ref(x, 4, 0.5, 3, lambda i: (i + 0.5) / 0.5 - 0.5, self._hat(0.5))
        # 4 taps with weights summing to 1, computed in float64 at import
        # and rounded to f32, then 4 products and 3 sums: 9 eps sum|terms|
        assert_within(y, want, sum_bound(np.abs(x).max(), 9))
        # without antialias the same call is the plain 2-tap linear resize
        node = _n("Resize", ["x", "", "s"], mode="linear", axes=[3])
        (y,) = _run(node, {"x": x}, 18, consts={"s": np.array([0.5], np.float32)})
        want = 0.5 * (x[..., 0::2].astype(np.float64) + x[..., 1::2])
        assert_within(y, want, sum_bound(np.abs(x).max(), 3))

    def test_keep_aspect_ratio_policy(self):
        x = np.arange(2 * 4 * 6, dtype=np.float32).reshape(1, 2, 4, 6)
        for policy, out in (("not_larger", (1, 2, 2, 3)), ("not_smaller", (1, 2, 4, 6)),
                            ("stretch", (1, 2, 2, 6))):
            node = _n("Resize", ["x", "", "", "sz"], mode="nearest", axes=[2, 3],
                      keep_aspect_ratio_policy=policy, nearest_mode="floor",
                      coordinate_transformation_mode="asymmetric")
            (y,) = _run(node, {"x": x}, 18, consts={"sz": np.array([2, 6], np.int64)})
            with self.subTest(policy=policy):
                self.assertEqual(y.shape, out)
                hs, ws = out[2] / 4, out[3] / 6
                if policy != "stretch":
                    hs = ws = min(2 / 4, 6 / 6) if policy == "not_larger" else max(2 / 4, 1.0)
                rows = np.floor(np.arange(out[2]) / hs).astype(int)
                cols = np.floor(np.arange(out[3]) / ws).astype(int)
                np.testing.assert_array_equal(y, x[:, :, rows][:, :, :, cols])

    def test_half_pixel_symmetric(self):
        x = np.arange(5, dtype=np.float32).reshape(1, 1, 1, 5) * 2
        node = _n("Resize", ["x", "", "s"], mode="linear",
                  coordinate_transformation_mode="half_pixel_symmetric")
        scales = np.array([1, 1, 1, 0.7], np.float32)
        (y,) = _run(node, {"x": x}, 19, consts={"s": scales})
        width = 5 * float(scales[3])
        out = int(math.floor(width))
        offset = 5 / 2 * (1 - out / width)
        coords = [offset + (i + 0.5) / float(scales[3]) - 0.5 for i in range(out)]
        want = np.array([np.interp(c, np.arange(5), x[0, 0, 0].astype(np.float64))
                         for c in coords])
        assert_within(y[0, 0, 0], want, sum_bound(8.0, 3))
        with self.assertRaises(ao.UnsupportedError):
            _run(node, {"x": x}, 18, consts={"s": scales})


@unittest.skipIf(onnx is None, "python3-onnx is not installed")
class TestOtherChanges(unittest.TestCase):
    def test_scatter_max_min_at_18(self):
        data = np.array([[1.0, 5.0, 3.0]], np.float32)
        idx = np.array([[0, 0, 2]], np.int64)
        upd = np.array([[4.0, 0.5, -1.0]], np.float32)
        for red, want in (("max", [[4, 5, 3]]), ("min", [[0.5, 5, -1]])):
            (y,) = _run(_n("ScatterElements", ["d", "i", "u"], axis=1, reduction=red),
                        {"d": data, "i": idx, "u": upd}, 18)
            np.testing.assert_array_equal(y, want)  # selections: exact

    def test_quantize_attributes(self):
        x = np.array([0.5, 1.5, -3.0, 200.0], np.float32)
        (y,) = _run(_n("QuantizeLinear", ["x", "s"], output_dtype=TensorProto.INT8,
                       saturate=1), {"x": x}, 21, consts={"s": np.array(1.0, np.float32)})
        self.assertEqual(y.dtype, np.int8)
        np.testing.assert_array_equal(y, [0, 2, -3, 127])
        with self.assertRaisesRegex(ao.UnsupportedError, "blocked quantization"):
            _run(_n("DequantizeLinear", ["q", "s"], block_size=2),
                 {"q": np.zeros((2, 4), np.uint8)}, 21, consts={"s": np.ones((2, 2), np.float32)})
        with self.assertRaises(ao.UnsupportedError) as cm:
            _run(_n("QuantizeLinear", ["x", "s"], output_dtype=21), {"x": x}, 21,
                 consts={"s": np.array(1.0, np.float32)})
        self.assertIn("UINT4", str(cm.exception))

    def test_grid_sample_20_mode_names(self):
        x = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
        grid = np.zeros((1, 1, 1, 2), np.float32)  # the centre: mean of the 4
        (y,) = _run(_n("GridSample", ["x", "g"], mode="linear", align_corners=1),
                    {"x": x, "g": grid}, 20)
        assert_within(y, np.full((1, 1, 1, 1), 1.5), sum_bound(3.0, 6))
        with self.assertRaisesRegex(ao.ConversionError, "named 'linear' from opset 20"):
            _run(_n("GridSample", ["x", "g"], mode="bilinear"), {"x": x, "g": grid}, 20)


@unittest.skipIf(onnx is None, "python3-onnx is not installed")
class TestNewOps(unittest.TestCase):
    def test_bitwise(self):
        a = np.array([0b1100, -1, 7], np.int32)
        b = np.array([0b1010, 5, 0], np.int32)
        for op, f in (("BitwiseAnd", np.bitwise_and), ("BitwiseOr", np.bitwise_or),
                      ("BitwiseXor", np.bitwise_xor)):
            (y,) = _run(_n(op, ["a", "b"]), {"a": a, "b": b}, 18)
            np.testing.assert_array_equal(y, f(a, b), err_msg=op)
        (y,) = _run(_n("BitwiseNot", ["a"]), {"a": np.array([0, 255, 1], np.uint8)}, 18)
        np.testing.assert_array_equal(y, [255, 0, 254])
        with self.assertRaises(ao.UnsupportedError):
            _run(_n("BitwiseAnd", ["a", "b"]), {"a": a.astype(np.float32),
                                                "b": b.astype(np.float32)}, 18)

    def test_mish_and_gelu(self):
        x = np.array([-30, -3, -0.5, 0, 0.5, 2, 30, 100], np.float32)
        x64 = x.astype(np.float64)
        # a handful of elementwise f32 steps (exp, log1p, tanh or erf within
        # a few ulps each): 16 eps relative, plus the absolute error of
        # log1p(e^-|x|) near 0 carried by |x|
        mish = x64 * np.tanh(np.logaddexp(x64, 0))
        (y,) = _run(_n("Mish", ["x"]), {"x": x}, 18)
        assert_within(y, mish, 16 * EPS32 * (np.abs(mish) + np.abs(x64)) + TINY32)
        erf = np.vectorize(math.erf)
        want = 0.5 * x64 * (1 + erf(x64 / math.sqrt(2)))
        (y,) = _run(_n("Gelu", ["x"]), {"x": x}, 20)
        assert_within(y, want, 16 * EPS32 * (np.abs(want) + np.abs(x64)) + TINY32)
        inner = math.sqrt(2 / math.pi) * (x64 + 0.044715 * x64 ** 3)
        want = 0.5 * x64 * (1 + np.tanh(inner))
        (y,) = _run(_n("Gelu", ["x"], approximate="tanh"), {"x": x}, 20)
        assert_within(y, want, 16 * EPS32 * (np.abs(want) + np.abs(x64) * (1 + np.abs(inner)))
                      + TINY32)
        with self.assertRaises(ao.UnsupportedError):
            _run(_n("Gelu", ["x"]), {"x": x}, 19)

    def _group_norm_ref(self, x, g, scale, bias, eps):
        n, c = x.shape[:2]
        v = x.astype(np.float64).reshape(n, g, -1)
        mean = v.mean(axis=2, keepdims=True)
        var = v.var(axis=2, keepdims=True)
        y = ((v - mean) / np.sqrt(var + eps)).reshape(x.shape)
        shape = (1, c) + (1,) * (x.ndim - 2)
        return y * scale.reshape(shape) + bias.reshape(shape), mean, var

    def test_group_normalization_18_and_21(self):
        r = np.random.default_rng(7)
        x = r.standard_normal((2, 4, 3)).astype(np.float32)
        g = 2
        m = x.size // (2 * g)  # 6 elements per group

        def bound(want, mean, var, s):
            # statistics as in test_onnx_nn's _moments_bound, then 6 roundings
            sq = (x.astype(np.float64).reshape(2, g, -1) ** 2).mean(axis=2, keepdims=True)
            dv = 2 * (m + 6) * EPS32 * (sq + mean ** 2)
            rel = dv / (2 * (var + 1e-5)) + 2 * EPS32
            dm = (m + 1) * EPS32 * np.abs(x.astype(np.float64)).reshape(2, g, -1).max(
                axis=2, keepdims=True) / np.sqrt(var + 1e-5)
            per = (np.abs(rel) * 3 + dm).repeat(4 // g, axis=1).reshape(2, 4, 1)
            return per * np.abs(s).reshape(1, 4, 1) * 4 + 6 * EPS32 * np.abs(want) + TINY32

        s18, b18 = np.array([1.5, -0.5], np.float32), np.array([0.1, 0.2], np.float32)
        (y,) = _run(_n("GroupNormalization", ["x", "s", "b"], num_groups=g),
                    {"x": x, "s": s18, "b": b18}, 18)
        s_c, b_c = s18.repeat(2).astype(np.float64), b18.repeat(2).astype(np.float64)
        want, mean, var = self._group_norm_ref(x, g, s_c, b_c, 1e-5)
        assert_within(y, want, bound(want, mean, var, s_c))
        s21 = np.array([1, 2, 3, 4], np.float32)
        b21 = np.array([0, -1, 1, 0.5], np.float32)
        (y,) = _run(_n("GroupNormalization", ["x", "s", "b"], num_groups=g, stash_type=1),
                    {"x": x, "s": s21, "b": b21}, 21)
        want, mean, var = self._group_norm_ref(x, g, s21.astype(np.float64),
                                               b21.astype(np.float64), 1e-5)
        assert_within(y, want, bound(want, mean, var, s21))
        with self.assertRaisesRegex(ao.ConversionError, "scale must have shape \\[4\\] at "
                                                        "opset 21"):
            _run(_n("GroupNormalization", ["x", "s", "b"], num_groups=g),
                 {"x": x, "s": s18, "b": b18}, 21)

    def test_center_crop_pad(self):
        x = np.arange(5 * 6, dtype=np.float32).reshape(5, 6)
        (y,) = _run(_n("CenterCropPad", ["x", "s"]), {"x": x}, 18,
                    consts={"s": np.array([2, 9], np.int64)})
        want = np.pad(x[1:3], ((0, 0), (1, 2)))
        np.testing.assert_array_equal(y, want)
        (y,) = _run(_n("CenterCropPad", ["x", "s"], axes=[-1]), {"x": x}, 18,
                    consts={"s": np.array([3], np.int64)})
        np.testing.assert_array_equal(y, x[:, 1:4])

    def test_affine_grid(self):
        theta = np.array([[[1.0, 0.5, 0.1], [-0.2, 0.8, 0.0]]], np.float32)
        for align in (0, 1):
            (y,) = _run(_n("AffineGrid", ["t", "sz"], align_corners=align), {"t": theta}, 20,
                        consts={"sz": np.array([1, 3, 2, 4], np.int64)})
            self.assertEqual(y.shape, (1, 2, 4, 2))
            xs = np.linspace(-1, 1, 4) if align else (np.arange(4) * 2 + 1) / 4 - 1
            ys = np.linspace(-1, 1, 2) if align else (np.arange(2) * 2 + 1) / 2 - 1
            t = theta[0].astype(np.float64)
            want = np.array([[[t[k] @ [xv, yv, 1] for k in range(2)] for xv in xs]
                             for yv in ys])[None]
            # a dot of 3 terms per coordinate (the base grid rounded to f32)
            mag = np.array([[[np.abs(t[k]) @ [abs(xv), abs(yv), 1] for k in range(2)]
                             for xv in xs] for yv in ys])[None]
            assert_within(y, want, sum_bound(mag, 4))

    def test_col2im(self):
        r = np.random.default_rng(9)
        n, c, image, block = 1, 2, (4, 5), (2, 3)
        strides, dil, pads = (1, 2), (1, 1), (1, 0, 0, 1)
        padded = (image[0] + pads[0] + pads[2], image[1] + pads[1] + pads[3])
        out = [(padded[i] - (dil[i] * (block[i] - 1) + 1)) // strides[i] + 1 for i in range(2)]
        cols = r.standard_normal((n, c * 6, out[0] * out[1])).astype(np.float32)
        (y,) = _run(_n("Col2Im", ["x", "im", "bl"], strides=list(strides),
                       dilations=list(dil), pads=list(pads)), {"x": cols}, 18,
                    consts={"im": np.array(image, np.int64), "bl": np.array(block, np.int64)})
        want = np.zeros((n, c) + padded)
        mag = np.zeros((n, c) + padded)
        v = cols.astype(np.float64).reshape(n, c, block[0], block[1], out[0], out[1])
        for ki, kj, oi, oj in np.ndindex(block[0], block[1], out[0], out[1]):
            p, q = ki * dil[0] + oi * strides[0], kj * dil[1] + oj * strides[1]
            want[:, :, p, q] += v[:, :, ki, kj, oi, oj]
            mag[:, :, p, q] += np.abs(v[:, :, ki, kj, oi, oj])
        crop = (slice(None), slice(None), slice(pads[0], pads[0] + image[0]),
                slice(pads[1], pads[1] + image[1]))
        assert_within(y, want[crop], sum_bound(mag[crop], 6))


if __name__ == "__main__":
    unittest.main()
