"""ONNX neural-network lowerings against numpy references: ConvTranspose,
MaxPool Indices, LpPool, losses, quantisation, recurrent cells,
normalisation, Dropout and BatchNormalization training statistics."""

import unittest

import numpy as np

from helpers import EPS32, TINY32, accy, assert_within, sum_bound

try:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    import accy.onnx as ao
except ImportError:  # pragma: no cover - depends on the machine
    onnx = None

F32 = TensorProto.FLOAT if onnx else None


def _model(nodes, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _vi(name, shape, elem=F32):
    return helper.make_tensor_value_info(name, elem, shape)


def _run_node(node, inputs, n_out=1, opset=17, consts=()):
    """Imports a one-node model whose graph inputs are |inputs| (name ->
    array; names in |consts| become initializers) and runs it."""
    elem = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64,
            np.dtype(np.int32): TensorProto.INT32, np.dtype(np.uint8): TensorProto.UINT8,
            np.dtype(np.int8): TensorProto.INT8, np.dtype(np.bool_): TensorProto.BOOL}
    vis, inits, args = [], [], []
    for name, a in inputs.items():
        if name in consts:
            inits.append(numpy_helper.from_array(np.asarray(a), name))
        else:
            vis.append(_vi(name, list(np.shape(a)), elem[np.asarray(a).dtype]))
            args.append(np.ascontiguousarray(a))
    outs = [o for o in node.output if o][:n_out]
    m = _model([node], vis, [helper.make_tensor_value_info(o, 0, None) for o in outs], inits,
               opset)
    wire = ao.import_model(m)
    with accy.Session(threads=1) as s:
        return s.compile(wire)(*args)


# ---- numpy references ----------------------------------------------------------------

def ref_conv_transpose(x, w, strides, pads, dilations, group, out_pad):
    """Scatter form: every input element adds w * x into the output."""
    n, c = x.shape[:2]
    sp = x.shape[2:]
    k = w.shape[2:]
    m = w.shape[1] * group
    nd = len(sp)
    full = [strides[i] * (sp[i] - 1) + out_pad[i] + (k[i] - 1) * dilations[i] + 1
            for i in range(nd)]
    y = np.zeros((n, m) + tuple(full), dtype=np.float64)
    cg, mg = c // group, m // group
    for b in range(n):
        for ci in range(c):
            g = ci // cg
            for pos in np.ndindex(*sp):
                for kk in np.ndindex(*k):
                    o = tuple(pos[i] * strides[i] + kk[i] * dilations[i] for i in range(nd))
                    for mo in range(mg):
                        y[(b, g * mg + mo) + o] += x[(b, ci) + pos] * w[(ci, mo) + kk]
    sl = tuple(slice(pads[i], full[i] - pads[nd + i]) for i in range(nd))
    return y[(slice(None), slice(None)) + sl]


def ref_max_pool_indices(x, kernel, strides, pads, dilations, storage_order):
    n, c, h, w = x.shape
    oh = (h + pads[0] + pads[2] - ((kernel[0] - 1) * dilations[0] + 1)) // strides[0] + 1
    ow = (w + pads[1] + pads[3] - ((kernel[1] - 1) * dilations[1] + 1)) // strides[1] + 1
    y = np.full((n, c, oh, ow), -np.inf, np.float32)
    idx = np.zeros((n, c, oh, ow), np.int64)
    for b, ch, i, j in np.ndindex(n, c, oh, ow):
        best = None
        for ki, kj in np.ndindex(*kernel):
            p = i * strides[0] - pads[0] + ki * dilations[0]
            q = j * strides[1] - pads[1] + kj * dilations[1]
            if 0 <= p < h and 0 <= q < w and (best is None or x[b, ch, p, q] > best):
                best = x[b, ch, p, q]
                flat = p * w + q if storage_order == 0 else q * h + p
                idx[b, ch, i, j] = (b * c + ch) * h * w + flat
        y[b, ch, i, j] = best
    return y, idx


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


@unittest.skipIf(onnx is None, "python3-onnx is not installed")
class TestConvTranspose(unittest.TestCase):
    def check(self, x_shape, w_shape, **attrs):
        rng = np.random.default_rng(1)
        x = rng.standard_normal(x_shape).astype(np.float32)
        w = rng.standard_normal(w_shape).astype(np.float32)
        node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], **attrs)
        (y,) = _run_node(node, {"x": x, "w": w})
        nd = len(x_shape) - 2
        args = (attrs.get("strides", [1] * nd), attrs.get("pads", [0] * 2 * nd),
                attrs.get("dilations", [1] * nd), attrs.get("group", 1),
                attrs.get("output_padding", [0] * nd))
        ref = ref_conv_transpose(x, w, *args)
        # Each output sums at most (input channels of a group) x (kernel
        # taps) products; the same reference on |x|, |w| gives sum|terms|.
        n = (x_shape[1] // args[3]) * int(np.prod(w_shape[2:]))
        assert_within(y, ref, sum_bound(ref_conv_transpose(np.abs(x), np.abs(w), *args), n))
        return y

    def test_groups_strides_dilations_pads_output_padding(self):
        y = self.check((2, 4, 3, 4), (4, 3, 2, 3), group=2, strides=[2, 3], dilations=[2, 1],
                       pads=[1, 0, 0, 2], output_padding=[1, 2])
        self.assertEqual(y.shape, (2, 6, 7, 12))

    def test_1d_and_3d(self):
        self.check((1, 2, 5), (2, 3, 3), strides=[2], pads=[1, 2])
        self.check((1, 1, 2, 3, 2), (1, 2, 2, 2, 3), strides=[1, 2, 1])

    def test_output_shape_larger_than_natural(self):
        # total padding = natural - requested < 0: the spec's split with floor
        # division, pads[begin] = total - total // 2, pads[end] = total // 2
        # (-1: the output grows at the end; -2: one at each end).
        # Small integers: exact in any order, compared bit for bit.
        x = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
        w = np.ones((1, 1, 2, 2), np.float32)
        node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], output_shape=[4, 5])
        (y,) = _run_node(node, {"x": x, "w": w})
        ref = ref_conv_transpose(x, w, [1, 1], [0] * 4, [1, 1], 1, [0, 0])  # 3 x 3
        want = np.zeros((1, 1, 4, 5), np.float32)
        want[:, :, 0:3, 1:4] = ref
        np.testing.assert_array_equal(y, want)

    def test_auto_pad_same_lower_puts_more_padding_first(self):
        # Small integers: exact in any order, compared bit for bit.
        x = np.arange(3, dtype=np.float32).reshape(1, 1, 3)
        w = np.ones((1, 1, 3), np.float32)
        full = ref_conv_transpose(x, w, [2], [0, 0], [1], 1, [0])[0, 0]  # 7 values
        for mode, want in (("SAME_UPPER", full[0:6]), ("SAME_LOWER", full[1:7])):
            node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], auto_pad=mode,
                                    strides=[2])
            (y,) = _run_node(node, {"x": x, "w": w})
            np.testing.assert_array_equal(y[0, 0], want, err_msg=mode)

    def test_bad_group_is_an_error(self):
        node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], group=3)
        with self.assertRaises(ao.ConversionError) as cm:
            _run_node(node, {"x": np.zeros((1, 4, 3, 3), np.float32),
                             "w": np.zeros((4, 1, 2, 2), np.float32)})
        self.assertIn("group", str(cm.exception))


@unittest.skipIf(onnx is None, "python3-onnx is not installed")
class TestPooling(unittest.TestCase):
    def test_max_pool_indices_with_pads_dilations_and_storage_order(self):
        rng = np.random.default_rng(2)
        x = rng.standard_normal((2, 3, 6, 7)).astype(np.float32)
        x[0, 0, 1, 1] = x[0, 0, 1, 3] = 9.0  # a tie: the first in window order wins
        for order in (0, 1):
            attrs = dict(kernel_shape=[2, 3], strides=[2, 1], pads=[1, 0, 0, 2],
                         dilations=[1, 2], storage_order=order)
            node = helper.make_node("MaxPool", ["x"], ["y", "i"], **attrs)
            y, idx = _run_node(node, {"x": x}, n_out=2)
            ry, ri = ref_max_pool_indices(x, [2, 3], [2, 1], [1, 0, 0, 2], [1, 2], order)
            np.testing.assert_array_equal(y, ry)
            np.testing.assert_array_equal(idx, ri, err_msg="storage_order %d" % order)

    def test_max_pool_indices_nan_and_ceil_mode(self):
        x = np.array([[[[1, np.nan, 3], [4, 5, 6], [7, 8, np.nan]]]], np.float32)
        node = helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2],
                                strides=[2, 2], ceil_mode=1)
        y, idx = _run_node(node, {"x": x}, n_out=2)
        self.assertTrue(np.isnan(y[0, 0, 0, 0]))
        self.assertTrue(np.isnan(y[0, 0, 1, 1]))
        np.testing.assert_array_equal(idx[0, 0], [[1, 5], [7, 8]])

    def test_lp_pool_and_global_lp_pool(self):
        rng = np.random.default_rng(3)
        x = rng.standard_normal((1, 2, 4, 5)).astype(np.float32)
        node = helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[2, 2], p=3,
                                pads=[0, 1, 0, 0])
        (y,) = _run_node(node, {"x": x})
        xp = np.pad(np.abs(x.astype(np.float64)), [(0, 0), (0, 0), (0, 0), (1, 0)])
        want = np.zeros((1, 2, 3, 5))
        for i, j in np.ndindex(3, 5):
            want[:, :, i, j] = (xp[:, :, i:i + 2, j:j + 2] ** 3).sum(axis=(2, 3)) ** (1 / 3)
        # (sum of 4 positive |x|^3) ^ (1/3): the powers within a few ulps and
        # the sum within 4 eps relative; the cube root divides that by 3 and
        # adds its own few ulps: 16 eps relative covers it.
        assert_within(y, want, 16 * EPS32 * want + TINY32)
        node = helper.make_node("GlobalLpPool", ["x"], ["y"])
        (y,) = _run_node(node, {"x": x})
        # sqrt of a sum of 20 squares (21 roundings, halved by sqrt, + 1).
        want = np.sqrt((x.astype(np.float64) ** 2).sum(axis=(2, 3)))
        assert_within(y[:, :, 0, 0], want, 12 * EPS32 * want + TINY32)


@unittest.skipIf(onnx is None, "python3-onnx is not installed")
class TestLosses(unittest.TestCase):
    def setUp(self):
        rng = np.random.default_rng(4)
        self.x = rng.standard_normal((3, 5, 2)).astype(np.float32)
        self.t = np.array([[0, 4], [2, -1], [-1, 1]], np.int64)
        self.w = np.array([0.5, 1, 2, 3, 4], np.float32)

    def ref(self, logp, reduction, bound=False):
        """The loss in float64; with |bound|, (loss, its error bound) for a
        logp exact up to |bound| (absolute) per element."""
        logp = np.asarray(logp, np.float64)
        err = float(bound) if bound is not False else 0.0
        keep = self.t != -1
        tc = np.clip(self.t, 0, 4)
        picked = np.take_along_axis(logp, tc[:, None, :], axis=1)[:, 0, :]
        wt = np.where(keep, self.w[tc], 0)
        loss = -picked * wt
        # The product rounds once; a sum of n terms adds n eps sum|terms|;
        # the mean's division by sum(weights) (itself a sum) adds n + 1 eps.
        n = loss.size
        lb = np.abs(wt) * err + EPS32 * np.abs(loss)
        if reduction == "none":
            out, b = loss, lb
        elif reduction == "sum":
            out, b = loss.sum(), lb.sum() + sum_bound(np.abs(loss).sum(), n)
        else:
            out = loss.sum() / wt.sum()
            b = (lb.sum() + sum_bound(np.abs(loss).sum(), n)) / abs(wt.sum()) + \
                (n + 1) * EPS32 * abs(out)
        return (out, b) if bound is not False else out

    def test_nll_weight_ignore_index_reductions(self):
        for red in ("none", "sum", "mean"):
            node = helper.make_node("NegativeLogLikelihoodLoss", ["x", "t", "w"], ["y"],
                                    reduction=red, ignore_index=-1)
            (y,) = _run_node(node, {"x": self.x, "t": self.t, "w": self.w})
            want, b = self.ref(self.x, red, bound=0.0)
            assert_within(y, want, b, err_msg=red)

    def test_nll_mean_of_all_ignored_is_nan(self):
        node = helper.make_node("NegativeLogLikelihoodLoss", ["x", "t"], ["y"],
                                ignore_index=2)
        (y,) = _run_node(node, {"x": self.x[:, :, :1], "t": np.full((3, 1), 2, np.int64)})
        self.assertTrue(np.isnan(y))

    def test_sce_log_prob_output(self):
        node = helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t", "w"], ["y", "lp"],
                                ignore_index=-1)
        y, lp = _run_node(node, {"x": self.x, "t": self.t, "w": self.w}, n_out=2)
        x = self.x.astype(np.float64)
        want_lp = x - x.max(axis=1, keepdims=True)
        want_lp -= np.log(np.exp(want_lp).sum(axis=1, keepdims=True))
        # log softmax over 5 classes: x - max is one rounding (eps |x - max|);
        # log(sum of 5 exps >= 1) is within (5 + 4 ulps of exp + 1) eps
        # absolute; the last subtraction rounds once more (eps |lp|).
        d_lp = EPS32 * np.abs(x - x.max(axis=1, keepdims=True)) + 10 * EPS32 + \
            EPS32 * np.abs(want_lp)
        assert_within(lp, want_lp, d_lp)
        want, b = self.ref(want_lp, "mean", bound=d_lp.max())
        assert_within(y, want, b)

    def test_bad_reduction_is_unsupported(self):
        node = helper.make_node("NegativeLogLikelihoodLoss", ["x", "t"], ["y"],
                                reduction="max")
        with self.assertRaises(ao.UnsupportedError) as cm:
            _run_node(node, {"x": self.x, "t": self.t})
        self.assertIn("reduction", str(cm.exception))


@unittest.skipIf(onnx is None, "python3-onnx is not installed")
class TestQuantization(unittest.TestCase):
    def test_quantize_rounds_half_to_even_and_saturates(self):
        x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 300, -300, 127.5], np.float32)
        node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])
        (y,) = _run_node(node, {"x": x, "s": np.float32(1), "z": np.int8(0)}, consts="sz")
        np.testing.assert_array_equal(y, np.array([0, 2, 2, 0, -2, 127, -128, 127], np.int8))
        (y,) = _run_node(helper.make_node("QuantizeLinear", ["x", "s"], ["y"]),
                         {"x": x, "s": np.float32(0.5)}, consts="s")
        self.assertEqual(y.dtype, np.uint8)
        np.testing.assert_array_equal(y, [1, 3, 5, 0, 0, 255, 0, 255])

    def test_per_axis_quantize_and_dequantize(self):
        x = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
        s = np.array([1, 2, 4], np.float32)
        z = np.array([10, 20, 30], np.uint8)
        q = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=0)
        (y,) = _run_node(q, {"x": x, "s": s, "z": z}, consts="sz")
        want = np.clip(np.rint(x / s[:, None]) + z[:, None], 0, 255).astype(np.uint8)
        np.testing.assert_array_equal(y, want)
        d = helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=-2)
        (back,) = _run_node(d, {"q": want, "s": s, "z": z}, consts="sz")
        np.testing.assert_array_equal(back, (want.astype(np.float32) - z[:, None]) * s[:, None])

    def test_dynamic_quantize_linear(self):
        # scale is one IEEE division (255 into the range 4), the quotients
        # x / scale are far from .5 ties: exact on any CPU.
        x = np.array([-1.0, 0.25, 2.0, 3.0], np.float32)
        y, s, z = _run_node(helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"]),
                            {"x": x}, n_out=3)
        scale = np.float32(4.0) / np.float32(255)
        self.assertEqual(s, scale)
        self.assertEqual(z, np.uint8(round(1.0 / scale)))
        np.testing.assert_array_equal(y, np.clip(np.rint(x / scale) + z, 0, 255))

    def test_matmul_integer_per_row_and_column_zero_points(self):
        rng = np.random.default_rng(5)
        a = rng.integers(0, 256, (2, 3, 4)).astype(np.uint8)
        b = rng.integers(-128, 128, (4, 5)).astype(np.int8)
        azp = np.array([1, 2, 3], np.uint8)
        bzp = np.array([-1, 0, 1, 2, 3], np.int8)
        node = helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])
        (y,) = _run_node(node, {"a": a, "b": b, "az": azp, "bz": bzp}, consts=("az", "bz"))
        want = (a.astype(np.int32) - azp[:, None]) @ (b.astype(np.int32) - bzp)
        self.assertEqual(y.dtype, np.int32)
        np.testing.assert_array_equal(y, want)

    def test_qlinear_conv_per_channel(self):
        rng = np.random.default_rng(6)
        x = rng.integers(0, 256, (1, 2, 5, 5)).astype(np.uint8)
        w = rng.integers(-100, 100, (3, 2, 3, 3)).astype(np.int8)
        xs, xz = np.float32(0.05), np.uint8(128)
        ws = np.array([0.01, 0.02, 0.03], np.float32)
        wz = np.zeros(3, np.int8)
        ys, yz = np.float32(0.2), np.uint8(100)
        bias = np.array([100, -200, 300], np.int32)
        node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz",
                                                "b"], ["y"], pads=[1, 1, 1, 1])
        names = ("xs", "xz", "ws", "wz", "ys", "yz", "b")
        (y,) = _run_node(node, dict(x=x, xs=xs, xz=xz, w=w, ws=ws, wz=wz, ys=ys, yz=yz, b=bias),
                         consts=names)
        xi = np.pad(x.astype(np.int64) - 128, [(0, 0), (0, 0), (1, 1), (1, 1)])
        acc = np.zeros((1, 3, 5, 5), np.int64)
        for o, i, j in np.ndindex(3, 5, 5):
            acc[0, o, i, j] = (xi[0, :, i:i + 3, j:j + 3] * w[o]).sum() + bias[o]
        # The accumulator is exact (integers); the requantisation multiplies
        # it by xs ws / ys in f32, whose few roundings may be grouped in any
        # order: the rounded result is exact except where the exact value
        # lies within those roundings (8 eps relative) of a .5 tie, where
        # either neighbour is right.
        real = acc * (float(xs) * ws.astype(np.float64) / float(ys))[None, :, None, None]
        want = np.clip(np.rint(real) + int(yz), 0, 255)
        near_tie = np.abs(np.abs(real - np.floor(real)) - 0.5) <= 8 * EPS32 * np.abs(real)
        diff = np.abs(y.astype(np.int64) - want)
        self.assertTrue(((diff == 0) | (near_tie & (diff == 1))).all(), (y, want))


@unittest.skipIf(onnx is None, "python3-onnx is not installed")
class TestRecurrent(unittest.TestCase):
    S, B, I, H = 4, 3, 2, 3

    def data(self, gates, dirs, seed=7):
        rng = np.random.default_rng(seed)
        x = rng.standard_normal((self.S, self.B, self.I)).astype(np.float32)
        w = (rng.standard_normal((dirs, gates * self.H, self.I)) * 0.5).astype(np.float32)
        r = (rng.standard_normal((dirs, gates * self.H, self.H)) * 0.5).astype(np.float32)
        b = (rng.standard_normal((dirs, 2 * gates * self.H)) * 0.5).astype(np.float32)
        h0 = rng.standard_normal((dirs, self.B, self.H)).astype(np.float32)
        return x, w, r, b, h0

    def bound(self, w, r, b, gates):
        """Error bound of S unrolled steps in f32. One step's pre-activations
        are dots of I + H terms plus two biases (sum_bound with
        |w| |x| + |r| |h| + |b|, |h| <= 1 after tanh or sigmoid); the
        activations are 1-Lipschitz and add 4 ulps; a state error e
        reaches the next step through |r| (row sums at most rn) and through
        at most 3 gate products, so e_{t+1} <= 3 (rn e_t + step error) (the
        cell of an LSTM is covered by the same factor)."""
        S, I, H = self.S, self.I, self.H
        xmax = 4.0  # |x| of the standard normal test data is below 4 (checked)
        dots = np.abs(w).sum(axis=-1) * xmax + np.abs(r).sum(axis=-1) + \
            np.abs(b[..., :gates * H]) + np.abs(b[..., gates * H:])
        step = float((sum_bound(dots, I + H + 2) + 4 * EPS32).max())
        rn = float(np.abs(r).sum(axis=-1).max())
        e = 0.0
        for _ in range(S):
            e = 3 * (max(rn, 1.0) * e + step)
        return e

    def unroll(self, step, x, lens, h0, c0, reverse):
        """Reference loop with sequence_lens: per batch entry, the steps of
        [0, len) in order (or reversed); Y is 0 beyond len."""
        y = np.zeros((self.S, self.B, self.H))
        h, c = h0.astype(np.float64).copy(), None if c0 is None else c0.astype(np.float64).copy()
        for bi in range(self.B):
            hb, cb = h[bi], None if c is None else c[bi]
            steps = range(lens[bi] - 1, -1, -1) if reverse else range(lens[bi])
            for t in steps:
                hb, cb = step(x[t, bi].astype(np.float64), hb, cb)
                y[t, bi] = hb
            h[bi] = hb
            if c is not None:
                c[bi] = cb
        return y, h, c

    def test_lstm_bidirectional_sequence_lens_peepholes(self):
        x, w, r, b, h0 = self.data(4, 2)
        rng = np.random.default_rng(8)
        c0 = rng.standard_normal((2, self.B, self.H)).astype(np.float32)
        p = rng.standard_normal((2, 3 * self.H)).astype(np.float32)
        lens = np.array([4, 2, 1], np.int32)
        node = helper.make_node("LSTM", ["x", "w", "r", "b", "l", "h0", "c0", "p"],
                                ["y", "yh", "yc"], hidden_size=self.H,
                                direction="bidirectional", clip=1.5)
        y, yh, yc = _run_node(node, dict(x=x, w=w, r=r, b=b, l=lens, h0=h0, c0=c0, p=p),
                              n_out=3)
        self.assertEqual(y.shape, (self.S, 2, self.B, self.H))
        H = self.H
        for d in range(2):
            wd, rd, bd, pd = w[d], r[d], b[d, :4 * H] + b[d, 4 * H:], p[d]

            def step(xt, h, c):
                g = np.clip(wd @ xt + rd @ h + bd, -1e9, 1e9)
                gi, go, gf, gc = g[:H], g[H:2 * H], g[2 * H:3 * H], g[3 * H:]
                i = sigmoid(np.clip(gi + pd[:H] * c, -1.5, 1.5))
                f = sigmoid(np.clip(gf + pd[2 * H:] * c, -1.5, 1.5))
                cn = f * c + i * np.tanh(np.clip(gc, -1.5, 1.5))
                o = sigmoid(np.clip(go + pd[H:2 * H] * cn, -1.5, 1.5))
                return o * np.tanh(cn), cn

            ry, rh, rc = self.unroll(step, x, lens, h0[d], c0[d], d == 1)
            self.assertLess(np.abs(x).max(), 4.0)
            e = self.bound(w, r, b, 4)
            assert_within(y[:, d], ry, e)
            assert_within(yh[d], rh, e)
            assert_within(yc[d], rc, e)

    def test_gru_linear_before_reset_reverse_batch_first(self):
        x, w, r, b, h0 = self.data(3, 1)
        H = self.H
        node = helper.make_node("GRU", ["x", "w", "r", "b", "", "h0"], ["y", "yh"],
                                hidden_size=H, direction="reverse", linear_before_reset=1,
                                layout=1)
        y, yh = _run_node(node, dict(x=x.transpose(1, 0, 2), w=w, r=r, b=b,
                                     h0=h0.transpose(1, 0, 2)), n_out=2)
        wb, rb = b[0, :3 * H], b[0, 3 * H:]

        def step(xt, h, c):
            xw = w[0] @ xt + wb
            hr = r[0] @ h
            z = sigmoid(xw[:H] + hr[:H] + rb[:H])
            rg = sigmoid(xw[H:2 * H] + hr[H:2 * H] + rb[H:2 * H])
            n = np.tanh(xw[2 * H:] + rg * (hr[2 * H:] + rb[2 * H:]))
            return (1 - z) * n + z * h, None

        ry, rh, _ = self.unroll(step, x, [self.S] * self.B, h0[0], None, True)
        self.assertEqual(y.shape, (self.B, self.S, 1, H))
        self.assertLess(np.abs(x).max(), 4.0)
        e = self.bound(w, r, b, 3)
        assert_within(y[:, :, 0].transpose(1, 0, 2), ry, e)
        assert_within(yh[:, 0], rh, e)

    def test_rnn_activation_with_alpha_beta(self):
        x, w, r, b, h0 = self.data(1, 1)
        node = helper.make_node("RNN", ["x", "w", "r", "b"], ["y"], hidden_size=self.H,
                                activations=["HardSigmoid"], activation_alpha=[0.3],
                                activation_beta=[0.4])
        (y,) = _run_node(node, dict(x=x, w=w, r=r, b=b))
        bias = b[0, :self.H] + b[0, self.H:]

        def step(xt, h, c):
            return np.clip(0.3 * (w[0] @ xt + r[0] @ h + bias) + 0.4, 0, 1), None

        ry, _, _ = self.unroll(step, x, [self.S] * self.B, np.zeros((self.B, self.H)), None,
                               False)
        self.assertLess(np.abs(x).max(), 4.0)
        assert_within(y[:, 0], ry, self.bound(w, r, b, 1))

    def test_unknown_activation_is_unsupported(self):
        x, w, r, b, h0 = self.data(1, 1)
        node = helper.make_node("RNN", ["x", "w", "r"], ["y"], hidden_size=self.H,
                                activations=["Gelu"])
        with self.assertRaises(ao.UnsupportedError) as cm:
            _run_node(node, dict(x=x, w=w, r=r))
        self.assertIn("activations", str(cm.exception))


def _moments_bound(x, axes, mean, var, eps):
    """Error bounds of a normalisation's statistics in f32 over n elements:
    the mean within (n + 1) eps mean|x| (a sum and a division); the variance,
    however it is formed (a mean of squared deviations, or E[x^2] - mean^2),
    within (n + 6) eps (E[x^2] + mean^2) absolute, twice for the deviations'
    own error; 1 / sqrt(var + eps) then within half that relative to
    var + eps, plus 2 ulps. Returns (mean bound, relative bound of the
    inverse standard deviation)."""
    n = int(np.prod([x.shape[a] for a in axes]))
    dm = (n + 1) * EPS32 * np.abs(x).mean(axis=axes, keepdims=True) + TINY32
    dv = 2 * (n + 6) * EPS32 * ((x ** 2).mean(axis=axes, keepdims=True) + mean ** 2)
    return dm, dv / (2 * (var + eps)) + 2 * EPS32


def _normalized_bound(x, mean, inv, s, b, dm, dinv):
    """Bound of (x - mean) * inv * s + b from the statistics' bounds: the
    deviation carries dm and one rounding, inv its relative dinv, and the
    two products and the sum one rounding each."""
    dev = np.abs(x - mean)
    y = dev * inv * np.abs(s)
    return inv * np.abs(s) * (dm + EPS32 * dev) + y * dinv + 3 * EPS32 * (y + np.abs(b)) + \
        TINY32


@unittest.skipIf(onnx is None, "python3-onnx is not installed")
class TestNormalization(unittest.TestCase):
    def test_layer_norm_mean_and_inv_std_outputs(self):
        rng = np.random.default_rng(9)
        x = rng.standard_normal((2, 3, 4)).astype(np.float32)
        s = rng.standard_normal((3, 4)).astype(np.float32)
        bias = rng.standard_normal((4,)).astype(np.float32)
        node = helper.make_node("LayerNormalization", ["x", "s", "b"], ["y", "m", "v"],
                                axis=-2, epsilon=1e-3)
        y, m, v = _run_node(node, {"x": x, "s": s, "b": bias}, n_out=3)
        x64 = x.astype(np.float64)
        mean = x64.mean(axis=(1, 2), keepdims=True)
        var = x64.var(axis=(1, 2), keepdims=True)
        inv = 1 / np.sqrt(var + 1e-3)
        self.assertEqual(m.shape, (2, 1, 1))
        dm, dinv = _moments_bound(x64, (1, 2), mean, var, 1e-3)
        assert_within(m, mean, dm)
        assert_within(v, inv, dinv * inv)
        want = (x64 - mean) * inv * s + bias
        assert_within(y, want, _normalized_bound(x64, mean, inv, s, bias, dm, dinv))

    def test_lrn_even_size(self):
        rng = np.random.default_rng(10)
        x = rng.standard_normal((1, 5, 2, 2)).astype(np.float32)
        node = helper.make_node("LRN", ["x"], ["y"], size=4, alpha=0.1, beta=0.6, bias=2.0)
        (y,) = _run_node(node, {"x": x})
        x64 = x.astype(np.float64)
        sq = np.zeros_like(x64)
        for c in range(5):  # window [c - 1, c + 2]
            sq[:, c] = (x64[:, max(0, c - 1):min(5, c + 3)] ** 2).sum(axis=1)
        want = x64 / (2.0 + 0.1 / 4 * sq) ** 0.6
        # The base is a sum of positive terms (4 squares, the scale, the
        # bias: 7 eps relative); the power scales that by 0.6 and adds a
        # few ulps; the division rounds once: 12 eps relative.
        assert_within(y, want, 12 * EPS32 * np.abs(want) + TINY32)

    def test_batch_norm_training_statistics(self):
        rng = np.random.default_rng(11)
        x = rng.standard_normal((4, 2, 3)).astype(np.float32)
        s, bias = np.float32([1.5, 0.5]), np.float32([0.1, -0.2])
        mean, var = np.float32([0.3, -0.1]), np.float32([1.2, 0.8])
        node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"],
                                ["y", "rm", "rv"], training_mode=1, momentum=0.8,
                                epsilon=1e-3)
        y, rm, rv = _run_node(node, dict(x=x, s=s, b=bias, m=mean, v=var), n_out=3,
                              opset=15)
        x64 = x.astype(np.float64)
        bm, bv = x64.mean(axis=(0, 2)), x64.var(axis=(0, 2))
        inv = 1 / np.sqrt(bv[:, None] + 1e-3)
        want = (x64 - bm[:, None]) * inv * s[:, None] + bias[:, None]
        dm, dinv = _moments_bound(x64, (0, 2), bm[:, None], bv[:, None], 1e-3)
        assert_within(y, want, _normalized_bound(x64, bm[:, None], inv, s[:, None],
                                                 bias[:, None], dm, dinv))
        # running = old * momentum + batch * (1 - momentum): two products and
        # a sum (3 eps of the terms), the batch statistic's own error scaled.
        n = x64.size // 2  # elements per channel
        dv = 2 * (n + 6) * EPS32 * ((x64 ** 2).mean(axis=(0, 2)) + bm ** 2)  # _moments_bound
        want_m = mean * 0.8 + bm * 0.2
        assert_within(rm, want_m, 0.2 * dm.ravel() + 3 * EPS32 * (np.abs(mean) + np.abs(bm)))
        assert_within(rv, var * 0.8 + bv * 0.2, 0.2 * dv + 3 * EPS32 * (var + bv))

    def test_dropout_inference_and_random_training(self):
        x = np.arange(6, dtype=np.float32).reshape(2, 3)
        node = helper.make_node("Dropout", ["x", "r", "t"], ["y", "m"])
        y, m = _run_node(node, {"x": x, "r": np.float32(0.3), "t": np.bool_(False)},
                         n_out=2, consts="rt")
        np.testing.assert_array_equal(y, x)
        self.assertEqual(m.dtype, np.bool_)
        self.assertTrue(m.all())
        with self.assertRaises(ao.UnsupportedError) as cm:
            _run_node(node, {"x": x, "r": np.float32(0.3), "t": np.bool_(True)}, consts="rt")
        self.assertIn("random", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
