"""ONNX shape, indexing and data-movement conversions (ops_shape, ops_index,
ops_resize): the lowerings with tricky corners, checked against numpy or the
ONNX project's reference functions."""

import unittest

import numpy as np

from helpers import EPS32, accy, assert_within, sum_bound

try:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    import accy.onnx as ao
except ImportError:  # pragma: no cover - depends on the machine
    onnx = None

try:  # the ONNX project's reference for Resize (ships with python3-onnx)
    from onnx.backend.test.case.node import resize as onnx_resize
except Exception:  # pragma: no cover
    onnx_resize = None

_ELEM = {np.dtype(np.float32): 1, np.dtype(np.int64): 7, np.dtype(np.int32): 6,
         np.dtype(np.bool_): 9, np.dtype(np.float64): 11, np.dtype(np.uint8): 2}


def _convert(node, inputs, consts=(), opset=13, out_shapes=None):
    """A one-node model: |inputs| {name: array} are graph inputs, |consts|
    {name: array} initializers. Returns the wire bytes."""
    vis = [helper.make_tensor_value_info(n, _ELEM[a.dtype], list(a.shape))
           for n, a in inputs.items()]
    inits = [numpy_helper.from_array(np.asarray(a), n) for n, a in dict(consts).items()]
    outs = [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None)
            for o in node.output if o]
    g = helper.make_graph([node], "g", vis, outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    return ao.import_model(m)


def _run(node, inputs, consts=(), opset=13):
    wire = _convert(node, inputs, consts, opset)
    with accy.Session(threads=1) as s:
        return s.compile(wire)(*inputs.values())


def _node(op, ins, outs=("y",), **attrs):
    return helper.make_node(op, list(ins), list(outs), **attrs)


@unittest.skipIf(onnx is None, "python3-onnx is not installed")
class TestSliceSplitPad(unittest.TestCase):
    def test_slice_negative_steps_and_clamping(self):
        x = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
        big, small = np.iinfo(np.int64).max, np.iinfo(np.int64).min
        cases = [  # starts, ends, axes, steps, numpy index
            ([big], [small], [1], [-1], (slice(None), slice(None, None, -1))),
            ([-2, 10], [-100, 0], [2, 0], [-2, -1], (slice(2, 0, -1), slice(None),
                                                     slice(3, None, -2))),
            ([1, -1], [big, 0], [-1, 1], [3, -2], (slice(None), slice(3, 0, -2),
                                                  slice(1, None, 3))),
            ([5], [0], [0], [-1], (slice(2, 0, -1),)),  # start clamps to d - 1
            ([2], [1], [1], [1], (slice(None), slice(2, 1))),  # empty
        ]
        for starts, ends, axes, steps, index in cases:
            consts = {"s": np.array(starts, np.int64), "e": np.array(ends, np.int64),
                      "a": np.array(axes, np.int64), "t": np.array(steps, np.int64)}
            (y,) = _run(_node("Slice", ["x", "s", "e", "a", "t"]), {"x": x}, consts)
            np.testing.assert_array_equal(y, x[index], err_msg=str((starts, ends, steps)))

    def test_slice_opset9_attributes_and_errors(self):
        x = np.arange(12, dtype=np.float32).reshape(3, 4)
        (y,) = _run(_node("Slice", ["x"], starts=[1, -3], ends=[1000, -1]), {"x": x}, opset=9)
        np.testing.assert_array_equal(y, x[1:, -3:-1])
        consts = {"s": np.array([0, 0], np.int64), "e": np.array([1, 1], np.int64),
                  "a": np.array([1, -1], np.int64)}
        with self.assertRaisesRegex(ao.ConversionError, "repeated axis"):
            _convert(_node("Slice", ["x", "s", "e", "a"]), {"x": x}, consts)
        consts = {"s": np.array([0], np.int64), "e": np.array([1], np.int64),
                  "a": np.array([0], np.int64), "t": np.array([0], np.int64)}
        with self.assertRaisesRegex(ao.ConversionError, "step 0"):
            _convert(_node("Slice", ["x", "s", "e", "a", "t"]), {"x": x}, consts)

    def test_slice_runtime_starts_need_constant(self):
        x = np.zeros((3,), np.float32)
        with self.assertRaises(ao.NeedsConstantInput) as cm:
            _convert(_node("Slice", ["x", "s", "e"]),
                     {"x": x, "s": np.array([0], np.int64)}, {"e": np.array([1], np.int64)})
        self.assertEqual(cm.exception.input_name, "s")

    def test_split_forms(self):
        x = np.arange(14, dtype=np.float32).reshape(2, 7)
        outs = _run(_node("Split", ["x", "sp"], ["a", "b", "c"], axis=-1), {"x": x},
                    {"sp": np.array([3, 0, 4], np.int64)})
        for got, want in zip(outs, np.split(x, [3, 3], axis=1)):
            np.testing.assert_array_equal(got, want)
        outs = _run(_node("Split", ["x"], ["a", "b"], axis=1, split=[5, 2]), {"x": x},
                    opset=11)
        np.testing.assert_array_equal(outs[1], x[:, 5:])
        with self.assertRaisesRegex(ao.ConversionError, "equal parts"):
            _convert(_node("Split", ["x"], ["a", "b"], axis=1), {"x": x})
        with self.assertRaisesRegex(ao.ConversionError, "does not add up"):
            _convert(_node("Split", ["x", "sp"], ["a", "b"], axis=1), {"x": x},
                     {"sp": np.array([3, 3], np.int64)})

    def test_pad_modes_match_numpy(self):
        x = np.arange(12, dtype=np.float32).reshape(3, 4) + 1
        # reflect wider than the axis reflects repeatedly, as numpy.pad does
        for mode, pads in (("reflect", [5, 1, 2, 7]), ("edge", [2, 0, 1, 3]),
                           ("reflect", [0, 3, 0, 3])):
            (y,) = _run(_node("Pad", ["x", "p"], mode=mode), {"x": x},
                        {"p": np.array(pads, np.int64)})
            want = np.pad(x, ((pads[0], pads[2]), (pads[1], pads[3])), mode=mode)
            np.testing.assert_array_equal(y, want, err_msg=mode)

    def test_pad_constant_negative_and_runtime_value(self):
        x = np.arange(12, dtype=np.float32).reshape(3, 4)
        v = np.array(-7.5, np.float32)
        (y,) = _run(_node("Pad", ["x", "p", "v"]), {"x": x, "v": v},
                    {"p": np.array([1, -1, -2, 2], np.int64)})
        want = np.pad(x[:1, 1:], ((1, 0), (0, 2)), constant_values=-7.5)
        np.testing.assert_array_equal(y, want)
        (y,) = _run(_node("Pad", ["x"], pads=[0, 1, 0, 0], value=2.0), {"x": x}, opset=10)
        np.testing.assert_array_equal(y, np.pad(x, ((0, 0), (1, 0)), constant_values=2))

    def test_pad_refusals(self):
        x = np.zeros((2, 3), np.float32)
        p = {"p": np.array([0, 1, 0, 1], np.int64)}
        with self.assertRaises(ao.UnsupportedError) as cm:
            _convert(_node("Pad", ["x", "p"], mode="wrap"), {"x": x}, p)
        self.assertEqual(cm.exception.attribute, "mode")
        with self.assertRaises(ao.UnsupportedError):
            _convert(_node("Pad", ["x", "p"], mode="edge"), {"x": x},
                     {"p": np.array([0, -1, 0, 2], np.int64)})
        with self.assertRaisesRegex(ao.ConversionError, "empty axis"):
            _convert(_node("Pad", ["x", "p"], mode="edge"),
                     {"x": np.zeros((2, 0), np.float32)}, p)


@unittest.skipIf(onnx is None, "python3-onnx is not installed")
class TestMovement(unittest.TestCase):
    def test_tile_and_expand(self):
        x = np.arange(6, dtype=np.int32).reshape(2, 1, 3)
        (y,) = _run(_node("Tile", ["x", "r"]), {"x": x}, {"r": np.array([2, 3, 1], np.int64)})
        np.testing.assert_array_equal(y, np.tile(x, (2, 3, 1)))
        (y,) = _run(_node("Tile", ["x", "r"]), {"x": x}, {"r": np.array([1, 0, 2], np.int64)})
        self.assertEqual(y.shape, (2, 0, 6))
        # Expand broadcasts both ways: [2,1,3] with [4,1,1,1] -> [4,2,1,3]
        (y,) = _run(_node("Expand", ["x", "s"]), {"x": x}, {"s": np.array([4, 1, 1, 1],
                                                                          np.int64)})
        np.testing.assert_array_equal(y, x * np.ones((4, 1, 1, 1), np.int32))
        with self.assertRaises(ao.ConversionError):
            _convert(_node("Expand", ["x", "s"]), {"x": x}, {"s": np.array([2, 2], np.int64)})

    def test_depth_to_space_and_back(self):
        x = np.arange(2 * 8 * 2 * 3, dtype=np.float32).reshape(2, 8, 2, 3)
        b = 2
        for mode in ("DCR", "CRD"):
            (y,) = _run(_node("DepthToSpace", ["x"], blocksize=b, mode=mode), {"x": x})
            if mode == "DCR":
                t = x.reshape(2, b, b, 2, 2, 3).transpose(0, 3, 4, 1, 5, 2)
            else:
                t = x.reshape(2, 2, b, b, 2, 3).transpose(0, 1, 4, 2, 5, 3)
            np.testing.assert_array_equal(y, t.reshape(2, 2, 4, 6), err_msg=mode)
            if mode == "DCR":  # SpaceToDepth inverts DepthToSpace(DCR)
                (z,) = _run(_node("SpaceToDepth", ["y"], ["z"], blocksize=b), {"y": y})
                np.testing.assert_array_equal(z, x)

    def test_compress(self):
        x = np.arange(12, dtype=np.float32).reshape(3, 4)
        cond = np.array([True, False, True], bool)  # shorter than axis 1
        (y,) = _run(_node("Compress", ["x", "c"], axis=-1), {"x": x}, {"c": cond})
        np.testing.assert_array_equal(y, np.compress(cond, x, axis=1))
        (y,) = _run(_node("Compress", ["x", "c"]), {"x": x}, {"c": cond})
        np.testing.assert_array_equal(y, np.compress(cond, x))
        with self.assertRaises(ao.NeedsConstantInput):
            _convert(_node("Compress", ["x", "c"], axis=0), {"x": x, "c": cond})

    def test_trilu_runtime_k(self):
        x = (np.arange(2 * 3 * 5) - 7).astype(np.int64).reshape(2, 3, 5)
        wire = _convert(_node("Trilu", ["x", "k"], upper=0), {"x": x,
                                                               "k": np.array(0, np.int64)},
                        opset=14)
        with accy.Session(threads=1) as s:
            prog = s.compile(wire)
            for k in (-4, -1, 0, 2, 9):
                (y,) = prog(x, np.array(k, np.int64))
                np.testing.assert_array_equal(y, np.tril(x, k), err_msg=str(k))
        xb = np.ones((4, 4), bool)
        (y,) = _run(_node("Trilu", ["x"]), {"x": xb}, opset=14)
        np.testing.assert_array_equal(y, np.triu(xb))


@unittest.skipIf(onnx is None, "python3-onnx is not installed")
class TestIndexing(unittest.TestCase):
    def test_gather_elements_negative_and_clamped(self):
        data = np.arange(20, dtype=np.float32).reshape(4, 5)
        idx = np.array([[-1, 0, 4], [2, -5, 1], [9, -9, 3]], np.int64)
        for axis in (0, 1, -1):
            a = axis % 2
            d = data.shape[a]
            (y,) = _run(_node("GatherElements", ["d", "i"], axis=axis), {"d": data, "i": idx})
            # wrap negatives once, then clamp (accy's defined out-of-range rule)
            src = np.clip(np.where(idx < 0, idx + d, idx), 0, d - 1)
            want = np.empty(idx.shape, np.float32)
            for (i, j), v in np.ndenumerate(src):
                want[i, j] = data[v, j] if a == 0 else data[i, v]
            np.testing.assert_array_equal(y, want, err_msg=str(axis))

    def test_gather_nd_batch_dims(self):
        rng = np.random.default_rng(1)
        data = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
        idx = np.array([[[0, -1], [2, 3]], [[1, 0], [-3, -4]]], np.int64)  # [2, 2, 2]
        (y,) = _run(_node("GatherND", ["d", "i"], batch_dims=1), {"d": data, "i": idx})
        want = np.stack([np.stack([data[b][tuple(idx[b, j])] for j in range(2)])
                         for b in range(2)])
        np.testing.assert_array_equal(y, want)
        idx3 = np.array([[1, 2, 3], [0, 0, -1]], np.int32)
        (y,) = _run(_node("GatherND", ["d", "i"]), {"d": data, "i": idx3})
        np.testing.assert_array_equal(y, np.stack([data[1, 2, 3], data[0, 0, -1]]))

    def test_one_hot(self):
        idx = np.array([[0, -1, 3], [7, -4, 2.9]], np.float32)  # 7, -4 out of range
        vals = np.array([-2, 5], np.int64)
        (y,) = _run(_node("OneHot", ["i", "d", "v"], axis=0), {"i": idx, "v": vals},
                    {"d": np.array(4, np.int64)}, opset=11)
        want = np.full((4, 2, 3), -2, np.int64)
        for (r, c), v in np.ndenumerate(idx.astype(np.int64)):
            if -4 <= v < 4:
                want[v % 4, r, c] = 5
        want[:, 1, 1] = -2  # -4 is in range: position 0
        want[0, 1, 1] = 5
        np.testing.assert_array_equal(y, want)
        # opset 9: negative indices are out of range
        (y,) = _run(_node("OneHot", ["i", "d", "v"], axis=0), {"i": idx, "v": vals},
                    {"d": np.array(4, np.int64)}, opset=9)
        want[:, 0, 1] = want[:, 1, 1] = -2
        np.testing.assert_array_equal(y, want)

    def test_reverse_sequence_batch_first(self):
        x = np.arange(4 * 5 * 2, dtype=np.float32).reshape(4, 5, 2)
        lens = np.array([5, 0, 1, 3], np.int64)
        (y,) = _run(_node("ReverseSequence", ["x", "l"], time_axis=1, batch_axis=0),
                    {"x": x, "l": lens})
        want = x.copy()
        for b, n in enumerate(lens):
            want[b, :n] = x[b, :n][::-1]
        np.testing.assert_array_equal(y, want)

    def test_cumsum_modes(self):
        x = np.arange(1, 25, dtype=np.int32).reshape(2, 3, 4) * np.int32(7)
        for exclusive in (0, 1):
            for reverse in (0, 1):
                (y,) = _run(_node("CumSum", ["x", "a"], exclusive=exclusive, reverse=reverse),
                            {"x": x}, {"a": np.array(-2, np.int32)}, opset=14)
                v = x[:, ::-1] if reverse else x
                c = np.cumsum(v, axis=1, dtype=np.int32)
                if exclusive:
                    c = np.concatenate([np.zeros_like(c[:, :1]), c[:, :-1]], axis=1)
                want = c[:, ::-1] if reverse else c
                np.testing.assert_array_equal(y, want, err_msg=str((exclusive, reverse)))

    def test_einsum(self):
        rng = np.random.default_rng(2)
        a = rng.standard_normal((2, 3, 3)).astype(np.float32)
        b = rng.standard_normal((3, 4)).astype(np.float32)
        c = rng.standard_normal((1, 4, 5)).astype(np.float32)
        d = rng.standard_normal((1, 3, 5)).astype(np.float32)
        cases = [("...ii->...i", [a]), ("bii", [a]), ("bij,jk,bkl->bl", [a, b, c[0:1]]),
                 ("bij , jk", [a, b]), ("ij,ij->", [b, b]), ("...j,...jk->...k", [a, d]),
                 ("i,j->ij", [b[0], np.ascontiguousarray(b[:, 0])])]
        for eq, ops in cases:
            ins = {"x%d" % i: v for i, v in enumerate(ops)}
            (y,) = _run(_node("Einsum", list(ins), equation=eq), ins, opset=12)
            e = eq.replace(" ", "")
            want = np.einsum(e, *[o.astype(np.float64) for o in ops])
            # Every output element sums the products over the contracted
            # letters (at most n terms, also when contracted pairwise, each
            # term through at most len(ops) more roundings); the same einsum
            # of |operands| is sum|terms|.
            lhs, _, out = e.partition("->")
            sizes = {}
            for term, o in zip(lhs.split(","), ops):
                for letter, d in zip(term.replace("...", "")[::-1], o.shape[::-1]):
                    sizes[letter] = d
            kept = out if "->" in e else "".join(
                c for c in sorted(sizes) if lhs.replace(",", "").count(c) == 1)
            n = int(np.prod([d for c, d in sizes.items() if c not in kept])) + len(ops)
            mag = np.einsum(e, *[np.abs(o.astype(np.float64)) for o in ops])
            assert_within(y, want, sum_bound(mag, n), err_msg=eq)
        with self.assertRaises(ao.ConversionError):
            _convert(_node("Einsum", ["x"], equation="ij,jk"), {"x": b}, opset=12)

    def test_grid_sample_reflection_far_outside(self):
        # Scalar model of PyTorch's grid_sample (bilinear, reflection padding)
        # at coordinates several image widths away (repeated reflections).
        rng = np.random.default_rng(4)
        x = rng.standard_normal((1, 2, 3, 4)).astype(np.float32)
        grid = rng.uniform(-7, 7, (1, 5, 6, 2)).astype(np.float32)

        def reflect(v, lo2, hi2):
            lo, span = lo2 / 2, (hi2 - lo2) / 2
            a = abs(v - lo)
            extra, flips = np.fmod(a, span), np.floor(a / span)
            return extra + lo if flips % 2 == 0 else span - extra + lo

        def coord(g, size, align):
            v = (g + 1) / 2 * (size - 1) if align else ((g + 1) * size - 1) / 2
            v = reflect(v, 0, 2 * (size - 1)) if align else reflect(v, -1, 2 * size - 1)
            return min(max(v, 0), size - 1)

        # Error bound: the unnormalised coordinates (|v| <= 4 (7 + 1) / 2 + 1
        # = 17) take a few roundings and the reflections subtract exactly or
        # round once more: within 8 eps * 17 each; the bilinear weights have
        # slope 1 in each coordinate, so 4 taps of |x| <= max|x| move by at
        # most 2 * 4 * that; the weighted sum of 4 terms adds 6 eps sum|terms|.
        dp = 8 * EPS32 * 17
        for align in (0, 1):
            (y,) = _run(_node("GridSample", ["x", "g"], padding_mode="reflection",
                              align_corners=align), {"x": x, "g": grid}, opset=16)
            want = np.zeros((1, 2, 5, 6), np.float64)
            for (i, j), _ in np.ndenumerate(grid[0, :, :, 0]):
                px = coord(float(grid[0, i, j, 0]), 4, align)
                py = coord(float(grid[0, i, j, 1]), 3, align)
                x0, y0 = int(np.floor(px)), int(np.floor(py))
                for xi, yi in ((x0, y0), (x0 + 1, y0), (x0, y0 + 1), (x0 + 1, y0 + 1)):
                    if 0 <= xi < 4 and 0 <= yi < 3:
                        wgt = (1 - abs(px - xi)) * (1 - abs(py - yi))
                        want[0, :, i, j] += wgt * x[0, :, yi, xi]
            bound = 8 * dp * np.abs(x).max() + 6 * EPS32 * np.abs(x).max()
            assert_within(y, want, bound, err_msg=str(align))


@unittest.skipIf(onnx is None or onnx_resize is None, "onnx's resize reference is missing")
class TestResize(unittest.TestCase):
    def _check(self, x, attrs, scales=None, sizes=None, roi=None, coeffs=None, **ref):
        consts = {"roi": np.array(roi if roi is not None else [], np.float32),
                  "scales": np.array(scales if scales is not None else [], np.float32)}
        ins = ["x", "roi", "scales"]
        if sizes is not None:
            consts["sizes"] = np.array(sizes, np.int64)
            ins.append("sizes")
        (y,) = _run(_node("Resize", ins, **attrs), {"x": x}, consts)
        want = onnx_resize.interpolate_nd(
            x, coeffs, output_size=sizes,
            scale_factors=None if scales is None else np.array(scales, np.float32),
            roi=None if roi is None else np.array(roi, np.float32), **ref).astype(np.float64)
        # Error bound: each output is a separable sum over at most 4 taps per
        # axis (16 terms in 2-D) with coefficients whose |sum| per axis is at
        # most 1.25 (cubic, A = -0.5; 1 for linear); the source coordinates
        # (magnitude <= 12 here) take a few f32 roundings (4 eps * 12), and
        # the coefficients move with slope at most 1.5 in the coordinate, for
        # each of 4 taps on each of 2 axes. Nearest modes select exactly.
        xm = float(np.abs(x).max())
        dc = 4 * EPS32 * 12 * 1.5
        bound = xm * 1.25 ** 2 * 16 * EPS32 + xm * 4 * dc * 2 * 1.25
        assert_within(y, want, bound, err_msg=str(attrs))

    def test_against_reference(self):
        rng = np.random.default_rng(3)
        x = rng.standard_normal((1, 2, 5, 7)).astype(np.float32)
        r = onnx_resize
        self._check(x, dict(mode="cubic", coordinate_transformation_mode="align_corners",
                            cubic_coeff_a=-0.5, exclude_outside=1),
                    scales=[1, 1, 1.7, 0.6],
                    coeffs=lambda t: r.cubic_coeffs(t, A=-0.5),
                    coordinate_transformation_mode="align_corners", exclude_outside=True)
        self._check(x, dict(mode="linear"), sizes=[1, 2, 3, 11], coeffs=r.linear_coeffs)
        for nm in ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil"):
            self._check(x, dict(mode="nearest", nearest_mode=nm,
                                coordinate_transformation_mode="asymmetric"),
                        scales=[1, 1, 2.5, 0.5],
                        coeffs=lambda t, nm=nm: r.nearest_coeffs(t, mode=nm),
                        coordinate_transformation_mode="asymmetric")
        self._check(x, dict(mode="linear", coordinate_transformation_mode="tf_crop_and_resize",
                            extrapolation_value=3.5),
                    sizes=[1, 2, 6, 4], roi=[0, 0, -0.2, 0.3, 1, 1, 0.9, 1.4],
                    coeffs=r.linear_coeffs, coordinate_transformation_mode="tf_crop_and_resize",
                    extrapolation_value=3.5)

    def test_nearest_integers_and_upsample(self):
        x = np.arange(6, dtype=np.int64).reshape(1, 2, 3)
        (y,) = _run(_node("Resize", ["x", "", "", "s"], mode="nearest"), {"x": x},
                    {"s": np.array([2, 2, 5], np.int64)})
        want = onnx_resize.interpolate_nd(x, onnx_resize.nearest_coeffs, output_size=[2, 2, 5])
        np.testing.assert_array_equal(y, want.astype(np.int64))
        xf = np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3)
        (y,) = _run(_node("Upsample", ["x", "s"]), {"x": xf},
                    {"s": np.array([1, 1, 2, 3], np.float32)}, opset=9)
        np.testing.assert_array_equal(y, xf.repeat(2, axis=2).repeat(3, axis=3))
        with self.assertRaises(ao.UnsupportedError) as cm:
            _convert(_node("Resize", ["x", "", "", "s"], mode="linear"), {"x": x},
                     {"s": np.array([2, 2, 5], np.int64)})
        self.assertEqual(cm.exception.attribute, "mode")


if __name__ == "__main__":
    unittest.main()
