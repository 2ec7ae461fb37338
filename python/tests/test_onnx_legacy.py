"""ONNX opsets 1..6, as old exporters (PyTorch 0.3/0.4, Caffe2) wrote them:
the legacy broadcast/axis attributes of the binary ops, consumed_inputs,
Gemm's broadcast and required C, PRelu's per-channel slope,
BatchNormalization and Dropout with is_test and spatial, and the early forms
of Reshape, Concat, Tile, Upsample, Cast and the recurrent ops. Models are
written with onnx.helper at those opsets and compared with float64 numpy
references within the error bound of each computation."""

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
         np.dtype(np.bool_): 9, np.dtype(np.float64): 11}


def _run(node, inputs, opset, consts=(), n_out=1):
    """A one-node model at |opset|: |inputs| {name: array} are graph inputs,
    |consts| {name: array} initializers. Returns the outputs."""
    vis = [helper.make_tensor_value_info(n, _ELEM[a.dtype], list(a.shape))
           for n, a in inputs.items()]
    inits = [numpy_helper.from_array(np.asarray(a), n) for n, a in dict(consts).items()]
    outs = [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None)
            for o in list(node.output)[:n_out] if o]
    g = helper.make_graph([node], "g", vis, outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    wire = ao.import_model(m)
    with accy.Session(threads=1) as s:
        return s.compile(wire)(*inputs.values())


def _rng(seed):
    return np.random.default_rng(seed)


def _one_rounding(want):
    """One correctly rounded f32 operation on exact operands: half an ulp,
    below eps |want|."""
    return EPS32 * np.abs(want) + TINY32


@unittest.skipIf(onnx is None, "python3-onnx is not installed")
class TestLegacyBroadcast(unittest.TestCase):
    def test_axis_trailing_and_scalar_forms(self):
        r = _rng(1)
        a = r.standard_normal((2, 3, 4, 5)).astype(np.float32)
        a64 = a.astype(np.float64)
        cases = [  # op, numpy, B shape, attrs, how B aligns with A
            ("Add", np.add, (3, 4), dict(broadcast=1, axis=1), (None, slice(None),
                                                                slice(None), None)),
            ("Mul", np.multiply, (5,), dict(broadcast=1), (None, None, None, slice(None))),
            ("Sub", np.subtract, (4, 5), dict(broadcast=1), (None, None, slice(None),
                                                             slice(None))),
            ("Div", np.divide, (2,), dict(broadcast=1, axis=0), (slice(None), None, None,
                                                                 None)),
            ("Add", np.add, (1,), dict(broadcast=1), ()),      # a one-element B: scalar
            ("Mul", np.multiply, (1, 1), dict(broadcast=1, axis=2), ()),
            ("Sub", np.subtract, (3, 1), dict(broadcast=1, axis=1),
             (None, slice(None), slice(None), None)),
        ]
        for opset in (1, 6):
            for op, f, bshape, attrs, align in cases:
                b = (r.standard_normal(bshape) + 3).astype(np.float32)
                extra = dict(consumed_inputs=[0, 0]) if opset < 6 else {}
                node = helper.make_node(op, ["a", "b"], ["y"], **attrs, **extra)
                with self.subTest(op=op, bshape=bshape, opset=opset):
                    (y,) = _run(node, {"a": a, "b": b}, opset)
                    bb = b.astype(np.float64)
                    bb = bb.reshape(()) if b.size == 1 else bb[align]
                    want = f(a64, bb)
                    assert_within(y, want, _one_rounding(want))

    def test_broadcast_zero_needs_equal_shapes(self):
        a = np.ones((2, 3), np.float32)
        node = helper.make_node("Add", ["a", "b"], ["y"])
        (y,) = _run(node, {"a": a, "b": a + 1}, 6)
        np.testing.assert_array_equal(y, np.full((2, 3), 3, np.float32))  # small integers
        with self.assertRaisesRegex(ao.ConversionError, "no implicit broadcasting"):
            _run(node, {"a": a, "b": np.ones(3, np.float32)}, 6)
        node = helper.make_node("Add", ["a", "b"], ["y"], broadcast=1, axis=1)
        with self.assertRaisesRegex(ao.ConversionError, "does not broadcast to A"):
            _run(node, {"a": a, "b": np.ones(2, np.float32)}, 6)
        # From opset 7 the attributes are not part of the op.
        with self.assertRaisesRegex(ao.ConversionError, "exists only before opset 7") as cm:
            _run(node, {"a": a, "b": np.ones(3, np.float32)}, 7)
        self.assertEqual(cm.exception.attribute, "broadcast")

    def test_pow_logic_and_comparisons(self):
        r = _rng(2)
        x = (np.abs(r.standard_normal((2, 3))) + 0.5).astype(np.float32)
        e = np.array([2, 0.5, -1], np.float32)
        (y,) = _run(helper.make_node("Pow", ["x", "e"], ["y"], broadcast=1), {"x": x, "e": e},
                    1)
        want = x.astype(np.float64) ** e.astype(np.float64)
        assert_within(y, want, 2 * EPS32 * np.abs(want))  # powf within 1 ulp
        p = np.array([[True, False, True], [False, False, True]])
        q = np.array([True, False])
        for op, f in (("And", np.logical_and), ("Or", np.logical_or),
                      ("Xor", np.logical_xor)):
            (y,) = _run(helper.make_node(op, ["p", "q"], ["y"], broadcast=1, axis=0),
                        {"p": p, "q": q}, 1)
            np.testing.assert_array_equal(y, f(p, q[:, None]), err_msg=op)
        i = np.array([[1, 5, 3], [4, 2, 6]], np.int32)
        j = np.array([3], np.int32)
        for op, f in (("Equal", np.equal), ("Less", np.less), ("Greater", np.greater)):
            (y,) = _run(helper.make_node(op, ["i", "j"], ["y"], broadcast=1), {"i": i, "j": j},
                        1)
            np.testing.assert_array_equal(y, f(i, 3), err_msg=op)


@unittest.skipIf(onnx is None, "python3-onnx is not installed")
class TestLegacyNN(unittest.TestCase):
    def test_gemm_broadcast_and_required_c(self):
        r = _rng(3)
        a = r.standard_normal((3, 4)).astype(np.float32)
        b = r.standard_normal((5, 4)).astype(np.float32)
        c = r.standard_normal(5).astype(np.float32)
        a64, b64, c64 = (v.astype(np.float64) for v in (a, b, c))
        for opset in (1, 6):
            node = helper.make_node("Gemm", ["a", "b", "c"], ["y"], broadcast=1, transB=1,
                                    alpha=0.5, beta=2.0)
            (y,) = _run(node, {"a": a, "b": b, "c": c}, opset)
            want = 0.5 * (a64 @ b64.T) + 2.0 * c64
            # 4 products, alpha, beta and the sum with C: 7 roundings
            mag = 0.5 * (np.abs(a64) @ np.abs(b64).T) + 2.0 * np.abs(c64)
            assert_within(y, want, sum_bound(mag, 7))
        full = np.ones((3, 5), np.float32)
        node = helper.make_node("Gemm", ["a", "b", "c"], ["y"], transB=1)
        (y,) = _run(node, {"a": a, "b": b, "c": full}, 6)  # broadcast 0 with C (M, N)
        want = a64 @ b64.T + 1
        assert_within(y, want, sum_bound(np.abs(a64) @ np.abs(b64).T + 1, 5))
        with self.assertRaisesRegex(ao.ConversionError, "broadcast is 0"):
            _run(node, {"a": a, "b": b, "c": c}, 6)
        with self.assertRaisesRegex(ao.ConversionError, "C is required before opset 11"):
            _run(helper.make_node("Gemm", ["a", "b"], ["y"], transB=1), {"a": a, "b": b}, 6)

    def test_prelu_per_channel_slope(self):
        r = _rng(4)
        x = r.standard_normal((2, 3, 4, 5)).astype(np.float32)
        x64 = x.astype(np.float64)
        for opset, extra in ((1, dict(consumed_inputs=[0, 0])), (6, {})):
            for shape, aligned in (((3,), (slice(None), None, None)),
                                   ((3, 1, 1), (slice(None),)),
                                   ((5,), None), ((1,), None)):
                slope = (r.uniform(0.1, 0.9, shape)).astype(np.float32)
                if shape == (5,):
                    s64 = slope.astype(np.float64)  # trailing: the last axis (W = 5)
                elif shape == (1,):
                    s64 = np.float64(slope[0])
                else:
                    s64 = slope.astype(np.float64)[aligned] if shape == (3,) else \
                        slope.astype(np.float64)
                node = helper.make_node("PRelu", ["x", "s"], ["y"], **extra)
                with self.subTest(opset=opset, shape=shape):
                    (y,) = _run(node, {"x": x, "s": slope}, opset)
                    want = np.where(x64 < 0, x64 * s64, x64)
                    assert_within(y, want, _one_rounding(want))
        with self.assertRaises(ao.ConversionError):
            _run(helper.make_node("PRelu", ["x", "s"], ["y"]),
                 {"x": x, "s": np.ones(4, np.float32)}, 6)

    def _bn_inputs(self):
        r = _rng(5)
        x = r.standard_normal((2, 3, 4)).astype(np.float32)
        s = r.uniform(0.5, 1.5, 3).astype(np.float32)
        b = r.standard_normal(3).astype(np.float32)
        m = r.standard_normal(3).astype(np.float32)
        v = r.uniform(0.5, 2, 3).astype(np.float32)
        return x, s, b, m, v

    def test_batch_norm_is_test_spatial_consumed_inputs(self):
        x, s, b, m, v = self._bn_inputs()
        ins = {"x": x, "s": s, "b": b, "m": m, "v": v}
        x64 = x.astype(np.float64)
        k = (s / np.sqrt(v.astype(np.float64) + 1e-5))[:, None]
        want = (x64 - m[:, None]) * k + b[:, None]
        # subtract, rsqrt, two products, the sum: 6 roundings of their operands
        bound = 6 * EPS32 * (np.abs(k) * (np.abs(x64) + np.abs(m[:, None])) +
                             np.abs(want) + np.abs(b[:, None])) + TINY32
        for opset, attrs in ((1, dict(is_test=1, consumed_inputs=[0, 0, 0, 1, 1])),
                             (6, dict(is_test=1, spatial=1)), (7, dict(spatial=1))):
            node = helper.make_node("BatchNormalization", list(ins), ["y"], **attrs)
            with self.subTest(opset=opset):
                (y,) = _run(node, ins, opset)
                assert_within(y, want, bound)

    def test_batch_norm_without_is_test_uses_batch_statistics(self):
        # Versions 1 and 6 default to is_test 0: training mode, Y normalised
        # with the batch's own mean and variance.
        x, s, b, m, v = self._bn_inputs()
        ins = {"x": x, "s": s, "b": b, "m": m, "v": v}
        node = helper.make_node("BatchNormalization", list(ins), ["y"], epsilon=1e-3)
        (y,) = _run(node, ins, 6)
        x64 = x.astype(np.float64)
        bm = x64.mean(axis=(0, 2))[:, None]
        bv = x64.var(axis=(0, 2))[:, None]
        want = (x64 - bm) / np.sqrt(bv + 1e-3) * s[:, None] + b[:, None]
        # 8 elements per channel: mean and variance as in test_onnx_nn's
        # _moments_bound, then a normalisation step of 6 roundings
        n = 8
        dm = (n + 1) * EPS32 * np.abs(x64).mean(axis=(0, 2))[:, None]
        dv = 2 * (n + 6) * EPS32 * ((x64 ** 2).mean(axis=(0, 2))[:, None] + bm ** 2)
        inv = 1 / np.sqrt(bv + 1e-3)
        dinv = dv / (2 * (bv + 1e-3)) + 2 * EPS32
        dev = np.abs(x64 - bm)
        bound = inv * s[:, None] * (dm + EPS32 * dev) + np.abs(want - b[:, None]) * dinv + \
            6 * EPS32 * (np.abs(want) + np.abs(b[:, None])) + TINY32
        assert_within(y, want, bound)
        with self.assertRaisesRegex(ao.ConversionError, "only before opset 7"):
            _run(helper.make_node("BatchNormalization", list(ins), ["y"], is_test=1), ins, 9)

    def test_dropout_is_test(self):
        x = np.arange(6, dtype=np.float32).reshape(2, 3)
        for opset, attrs in ((1, dict(is_test=1, consumed_inputs=[0])),
                             (6, dict(is_test=1, ratio=0.3))):
            (y,) = _run(helper.make_node("Dropout", ["x"], ["y"], **attrs), {"x": x}, opset)
            np.testing.assert_array_equal(y, x)
        with self.assertRaisesRegex(ao.UnsupportedError, "random"):
            _run(helper.make_node("Dropout", ["x"], ["y"], ratio=0.5), {"x": x}, 6)


@unittest.skipIf(onnx is None, "python3-onnx is not installed")
class TestLegacyForms(unittest.TestCase):
    def test_consumed_inputs_is_ignored(self):
        x = np.array([-2.5, -1, 0, 1.5, 4], np.float32)
        x64 = x.astype(np.float64)
        for op, f in (("Relu", lambda v: np.maximum(v, 0)), ("Abs", np.abs),
                      ("Neg", np.negative), ("Floor", np.floor), ("Ceil", np.ceil)):
            (y,) = _run(helper.make_node(op, ["x"], ["y"], consumed_inputs=[0]), {"x": x}, 1)
            assert_within(y, f(x64), 0, err_msg=op)  # exact operations
        for op, f, ulps in (("Exp", np.exp, 4), ("Tanh", np.tanh, 4),
                            ("Sigmoid", lambda v: 1 / (1 + np.exp(-v)), 4)):
            (y,) = _run(helper.make_node(op, ["x"], ["y"], consumed_inputs=[0]), {"x": x}, 1)
            want = f(x64)
            assert_within(y, want, ulps * EPS32 * np.abs(want) + TINY32, err_msg=op)
        (y,) = _run(helper.make_node("Clip", ["x"], ["y"], min=-1.0, max=2.0,
                                     consumed_inputs=[0]), {"x": x}, 1)
        np.testing.assert_array_equal(y, np.clip(x, -1, 2))
        (y,) = _run(helper.make_node("Sum", ["x", "z"], ["y"], consumed_inputs=[0, 0]),
                    {"x": x, "z": x}, 1)
        np.testing.assert_array_equal(y, 2 * x)  # doubling is exact
        # at opset 6 the attribute no longer exists
        with self.assertRaises(ao.UnsupportedError) as cm:
            _run(helper.make_node("Relu", ["x"], ["y"], consumed_inputs=[0]), {"x": x}, 6)
        self.assertEqual(cm.exception.attribute, "consumed_inputs")

    def test_reshape_concat_tile_cast(self):
        x = np.arange(12, dtype=np.float32).reshape(3, 4)
        (y,) = _run(helper.make_node("Reshape", ["x"], ["y"], shape=[0, 2, -1],
                                     consumed_inputs=[0]), {"x": x}, 1)
        np.testing.assert_array_equal(y, x.reshape(3, 2, 2))
        (y,) = _run(helper.make_node("Concat", ["x", "z"], ["y"]), {"x": x, "z": x + 1}, 1)
        np.testing.assert_array_equal(y, np.concatenate([x, x + 1], axis=1))  # default 1
        (y,) = _run(helper.make_node("Tile", ["x", "t", "a"], ["y"]), {"x": x}, 1,
                    consts={"t": np.array(3, np.int64), "a": np.array(0, np.int64)})
        np.testing.assert_array_equal(y, np.tile(x, (3, 1)))
        (y,) = _run(helper.make_node("Cast", ["x"], ["y"], to="INT32"), {"x": x}, 1)
        self.assertEqual(y.dtype, np.int32)
        np.testing.assert_array_equal(y, x.astype(np.int32))

    def test_upsample_v1(self):
        x = np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3)
        (y,) = _run(helper.make_node("Upsample", ["x"], ["y"], height_scale=2.0,
                                     width_scale=3.0), {"x": x}, 1)
        np.testing.assert_array_equal(y, x.repeat(2, axis=2).repeat(3, axis=3))
        (y,) = _run(helper.make_node("Upsample", ["x"], ["y"], height_scale=2.0,
                                     width_scale=1.0, mode="bilinear"), {"x": x}, 1)
        # asymmetric linear: row 2i + 1 is halfway between rows i and i + 1
        # (clamped at the end); halves of small integers are exact
        want = np.stack([x[0, 0, 0], (x[0, 0, 0] + x[0, 0, 1]) / 2, x[0, 0, 1], x[0, 0, 1]])
        np.testing.assert_array_equal(y[0, 0], want)

    def test_rnn_output_sequence(self):
        r = _rng(6)
        x = r.standard_normal((2, 1, 2)).astype(np.float32)
        w = (r.standard_normal((1, 3, 2)) * 0.5).astype(np.float32)
        rr = (r.standard_normal((1, 3, 3)) * 0.5).astype(np.float32)
        node = helper.make_node("RNN", ["x", "w", "r"], ["y"], hidden_size=3,
                                output_sequence=1)
        (y,) = _run(node, {"x": x, "w": w, "r": rr}, 1)
        h = np.zeros(3)
        for t in range(2):
            h = np.tanh(w[0].astype(np.float64) @ x[t, 0] + rr[0].astype(np.float64) @ h)
            # two short dots (5 terms, |h| <= 1) and tanh, carried one step
            # through |r| (row sums below 3 here): a loose 1e-5 absolute
            assert_within(y[t, 0, 0], h, 64 * 5 * EPS32 * 3 + 8 * EPS32)


if __name__ == "__main__":
    unittest.main()
