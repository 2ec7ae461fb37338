"""ONNX scatter and top-k conversions (ops_scatter): ScatterND,
ScatterElements, Scatter, MaxUnpool and TopK on accy's scatter, sort and
argsort, checked against small numpy references written from the ONNX
spec."""

import itertools
import unittest

import numpy as np

from helpers import EPS32, accy, assert_within

try:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    import accy.onnx as ao
except ImportError:  # pragma: no cover - depends on the machine
    onnx = None

_ELEM = {np.dtype(np.float32): 1, np.dtype(np.int64): 7, np.dtype(np.int32): 6,
         np.dtype(np.bool_): 9, np.dtype(np.float64): 11, np.dtype(np.uint8): 2,
         np.dtype(np.float16): 10}


def _convert(node, inputs, consts=(), opset=13):
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


_COMBINE = {"none": lambda a, b: b, "add": lambda a, b: a + b, "mul": lambda a, b: a * b}


def _ref_scatter_elements(data, indices, updates, axis, reduction="none"):
    out = data.copy()
    f = _COMBINE[reduction]
    for pos in np.ndindex(*indices.shape):  # row-major, so the last duplicate wins
        i = int(indices[pos])
        if i < 0:
            i += data.shape[axis]
        tgt = list(pos)
        tgt[axis] = i
        out[tuple(tgt)] = f(out[tuple(tgt)], updates[pos])
    return out


def _ref_scatter_nd(data, indices, updates, reduction="none"):
    out = data.copy()
    f = _COMBINE[reduction]
    for pos in np.ndindex(*indices.shape[:-1]):
        tgt = tuple(int(i) for i in indices[pos])
        out[tgt] = f(out[tgt], updates[pos])
    return out


def _ref_top_k(x, k, axis, largest):
    """The ONNX spec: the k largest (smallest) along |axis|; among equal values
    the lower index first; NaN above every number."""
    xm = np.moveaxis(x, axis, -1)
    vals = np.empty(xm.shape[:-1] + (k,), x.dtype)
    idx = np.empty(xm.shape[:-1] + (k,), np.int64)
    for pos in np.ndindex(*xm.shape[:-1]):
        line = xm[pos]
        if largest:
            key = [(0, 0.0) if np.isnan(v) else (1, -float(v)) for v in line]
        else:
            key = [(1, 0.0) if np.isnan(v) else (0, float(v)) for v in line]
        order = sorted(range(len(line)), key=lambda i: key[i])[:k]  # stable
        idx[pos] = order
        vals[pos] = line[order]
    return np.moveaxis(vals, -1, axis), np.moveaxis(idx, -1, axis)


def _ref_with_bound(ref, data, updates, red):
    """(float64 result, error bound) of a scatter: each element combines
    data with its m updates, rounding once per combination (docs/ops.md), so
    the error is at most m eps times the sum of |terms| (add) or the
    magnitude of the product (mul); replace is exact. m and those sums come
    from the same reference run on counts and magnitudes."""
    want = ref(data.astype(np.float64), updates.astype(np.float64))
    if red == "none":
        return want, 0.0
    m = _update_counts(ref, data, updates)
    if red == "add":
        mag = ref(np.abs(data.astype(np.float64)), np.abs(updates.astype(np.float64)))
    else:
        mag = np.abs(want)
    return want, m * EPS32 * mag


def _update_counts(ref, data, updates):
    """How many updates each element receives: the reference's own index walk
    on zeros and ones, with every reduction counting (the references look the
    combine function up when called)."""
    saved = dict(_COMBINE)
    try:
        for k in _COMBINE:
            _COMBINE[k] = lambda a, b: a + b
        return ref(np.zeros(data.shape), np.ones(updates.shape))
    finally:
        _COMBINE.update(saved)


@unittest.skipIf(onnx is None, "python3-onnx is not installed")
class TestScatterElements(unittest.TestCase):
    def test_axes_negative_indices_and_reductions(self):
        rng = np.random.default_rng(7)
        data = rng.standard_normal((4, 5, 3)).astype(np.float32)
        for axis, red, ishape in [(0, "none", (3, 5, 3)), (-1, "add", (4, 2, 3)),
                                  (1, "mul", (2, 4, 1)), (-2, "add", (1, 6, 2))]:
            ax = axis % 3
            d = data.shape[ax]
            # indices in [-d, d): duplicates and negative entries on purpose
            indices = rng.integers(-d, d, size=ishape).astype(np.int64)
            updates = rng.standard_normal(ishape).astype(np.float32)
            kw = {"axis": axis} if red == "none" else {"axis": axis, "reduction": red}
            (y,) = _run(_node("ScatterElements", ["d", "i", "u"], **kw),
                        {"d": data, "i": indices, "u": updates}, opset=16)
            want, bound = _ref_with_bound(
                lambda d, u: _ref_scatter_elements(d, indices, u, ax, red), data, updates, red)
            assert_within(y, want, bound, err_msg=str((axis, red, ishape)))

    def test_duplicates_last_wins_and_int32_indices(self):
        data = np.zeros((2, 4), np.int64)
        indices = np.array([[1, 1, 3], [0, 0, 0]], np.int32)
        updates = np.array([[10, 20, 30], [1, 2, 3]], np.int64)
        (y,) = _run(_node("ScatterElements", ["d", "i", "u"], axis=1),
                    {"d": data, "i": indices, "u": updates}, opset=11)
        np.testing.assert_array_equal(y, [[0, 20, 0, 30], [3, 0, 0, 0]])
        (y,) = _run(_node("ScatterElements", ["d", "i", "u"], axis=1, reduction="add"),
                    {"d": data, "i": indices, "u": updates}, opset=16)
        np.testing.assert_array_equal(y, [[0, 30, 0, 30], [6, 0, 0, 0]])

    def test_scatter_is_scatter_elements_before_opset_11(self):
        data = np.arange(12, dtype=np.float32).reshape(3, 4)
        indices = np.array([[2, 0], [-1, 1]], np.int64)
        updates = np.array([[-1, -2], [-3, -4]], np.float32)
        (y,) = _run(_node("Scatter", ["d", "i", "u"], axis=0),
                    {"d": data, "i": indices, "u": updates}, opset=10)
        np.testing.assert_array_equal(y, _ref_scatter_elements(data, indices, updates, 0))
        with self.assertRaisesRegex(ao.ConversionError, "removed in opset 11"):
            _convert(_node("Scatter", ["d", "i", "u"]),
                     {"d": data, "i": indices, "u": updates}, opset=11)

    def test_reduction_attribute_and_shape_errors(self):
        data = np.zeros((3, 3), np.float32)
        indices = np.zeros((1, 3), np.int64)
        updates = np.ones((1, 3), np.float32)
        ins = {"d": data, "i": indices, "u": updates}
        with self.assertRaisesRegex(ao.ConversionError, "needs opset 16") as cm:
            _convert(_node("ScatterElements", ["d", "i", "u"], reduction="add"), ins, opset=13)
        self.assertNotIsInstance(cm.exception, ao.UnsupportedError)
        with self.assertRaisesRegex(ao.UnsupportedError, "attribute 'reduction'.*needs opset 18"):
            _convert(_node("ScatterElements", ["d", "i", "u"], reduction="max"), ins, opset=16)
        with self.assertRaisesRegex(ao.UnsupportedError, "attribute 'reduction'.*'xor'"):
            _convert(_node("ScatterND", ["d", "i", "u"], reduction="xor"), ins, opset=16)
        bad = {"d": data, "i": np.zeros((4, 1), np.int64), "u": np.ones((4, 1), np.float32)}
        with self.assertRaisesRegex(ao.ConversionError, "indices dim 0 \\(4\\) exceeds"):
            _convert(_node("ScatterElements", ["d", "i", "u"], axis=1), bad)
        with self.assertRaisesRegex(ao.ConversionError, "updates shape"):
            _convert(_node("ScatterElements", ["d", "i", "u"]),
                     {"d": data, "i": indices, "u": np.ones((3, 1), np.float32)})


@unittest.skipIf(onnx is None, "python3-onnx is not installed")
class TestScatterND(unittest.TestCase):
    def test_slices_and_reductions(self):
        rng = np.random.default_rng(3)
        data = rng.standard_normal((4, 3, 2)).astype(np.float32)
        cases = [  # indices, reduction
            (np.array([[1], [3], [-4]], np.int64), "none"),          # whole [3, 2] slices
            (np.array([[[0, 2], [0, 2]], [[3, -1], [1, 1]]], np.int64), "add"),  # dup, neg
            (np.array([[2, 1, 0], [2, 1, 0], [0, 0, 1]], np.int64), "mul"),  # elements
        ]
        for indices, red in cases:
            k = indices.shape[-1]
            updates = rng.standard_normal(indices.shape[:-1] + data.shape[k:]).astype(np.float32)
            kw = {} if red == "none" else {"reduction": red}
            (y,) = _run(_node("ScatterND", ["d", "i", "u"], **kw),
                        {"d": data, "i": indices, "u": updates}, opset=16)
            wi = np.where(indices < 0, indices + np.array(data.shape[:k]), indices)
            want, bound = _ref_with_bound(lambda d, u: _ref_scatter_nd(d, wi, u, red), data,
                                          updates, red)
            assert_within(y, want, bound, err_msg=str((k, red)))

    def test_k_zero_updates_the_whole_tensor(self):
        data = np.ones((2, 2), np.float32)
        indices = np.zeros((3, 0), np.int64)
        updates = np.arange(12, dtype=np.float32).reshape(3, 2, 2)
        (y,) = _run(_node("ScatterND", ["d", "i", "u"], reduction="add"),
                    {"d": data, "i": indices, "u": updates}, opset=16)
        np.testing.assert_array_equal(y, 1 + updates.sum(axis=0))

    def test_bad_shapes(self):
        data = np.zeros((3, 3), np.float32)
        with self.assertRaisesRegex(ao.ConversionError, "last dim 3 exceeds the data rank 2"):
            _convert(_node("ScatterND", ["d", "i", "u"]),
                     {"d": data, "i": np.zeros((1, 3), np.int64),
                      "u": np.zeros((1,), np.float32)})
        with self.assertRaisesRegex(ao.ConversionError,
                                    "updates shape \\[2\\], expected \\[2, 3\\]"):
            _convert(_node("ScatterND", ["d", "i", "u"]),
                     {"d": data, "i": np.zeros((2, 1), np.int64),
                      "u": np.zeros((2,), np.float32)})


@unittest.skipIf(onnx is None, "python3-onnx is not installed")
class TestTopK(unittest.TestCase):
    def test_ties_nan_and_signed_zeros(self):
        x = np.array([[3, 1, 3, np.nan, -0.0, 0.0, 1, np.nan, 3, -np.inf],
                      [0.0, -0.0, 0.0, 2, 2, 2, -1, -1, 5, 5]], np.float32)
        for largest, k, axis in itertools.product((1, 0), (0, 1, 4, 10), (1, -1)):
            (v, i) = _run(_node("TopK", ["x", "k"], ["v", "i"], axis=axis, largest=largest),
                          {"x": x}, {"k": np.array([k], np.int64)}, opset=11)
            wv, wi = _ref_top_k(x, k, 1, largest)
            msg = str((largest, k, axis))
            np.testing.assert_array_equal(i, wi, err_msg=msg)
            np.testing.assert_array_equal(v, wv, err_msg=msg)
            # -0 and +0 are equal but keep their own bits (taken in index order)
            np.testing.assert_array_equal(np.signbit(v), np.signbit(wv), err_msg=msg)
            self.assertEqual(i.dtype, np.int64)

    def test_axis_0_int_and_opset_forms(self):
        rng = np.random.default_rng(1)
        x = rng.integers(-3, 4, size=(6, 3, 2)).astype(np.int32)
        wv, wi = _ref_top_k(x, 4, 0, 1)
        (v, i) = _run(_node("TopK", ["x"], ["v", "i"], axis=0, k=4), {"x": x}, opset=1)
        np.testing.assert_array_equal(v, wv)
        np.testing.assert_array_equal(i, wi)
        (v, i) = _run(_node("TopK", ["x", "k"], ["v", "i"], axis=-3), {"x": x},
                      {"k": np.array([4], np.int64)}, opset=10)
        np.testing.assert_array_equal(v, wv)
        np.testing.assert_array_equal(i, wi)
        # sorted=0 leaves the order free: ours is sorted too
        wv, wi = _ref_top_k(x, 2, 2, 0)
        (v, i) = _run(_node("TopK", ["x", "k"], ["v", "i"], largest=0, sorted=0), {"x": x},
                      {"k": np.array([2], np.int64)}, opset=11)
        np.testing.assert_array_equal(v, wv)
        np.testing.assert_array_equal(i, wi)
        # opset 10 has no largest attribute: refused, naming it
        with self.assertRaisesRegex(ao.UnsupportedError, "attribute 'largest'"):
            _convert(_node("TopK", ["x", "k"], ["v", "i"], largest=0), {"x": x},
                     {"k": np.array([2], np.int64)}, opset=10)

    def test_one_output_and_folding(self):
        x = np.array([[4, 9, 1, 9]], np.float32)
        (i,) = _run(_node("TopK", ["x", "k"], ["", "i"]), {"x": x},
                    {"k": np.array([2], np.int64)}, opset=11)
        np.testing.assert_array_equal(i, [[1, 3]])
        (v,) = _run(_node("TopK", ["x", "k"], ["v"]), {"x": x},
                    {"k": np.array([3], np.int64)}, opset=11)
        np.testing.assert_array_equal(v, [[9, 9, 4]])
        # X known at import: folded by accy itself, a graph input only
        # passes through.
        nodes = [_node("TopK", ["c", "k"], ["v", "i"], largest=0),
                 _node("Add", ["v", "z"], ["y"])]
        g = helper.make_graph(
            nodes, "g", [helper.make_tensor_value_info("z", 1, [1, 2])],
            [helper.make_tensor_value_info("y", 1, None),
             helper.make_tensor_value_info("i", 7, None)],
            [numpy_helper.from_array(x, "c"), numpy_helper.from_array(np.array([2]), "k")])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)])
        with accy.Session(threads=1) as s:
            y, i = s.compile(ao.import_model(m))(np.zeros((1, 2), np.float32))
        np.testing.assert_array_equal(y, [[1, 4]])
        np.testing.assert_array_equal(i, [[2, 0]])

    def test_k_errors(self):
        x = np.zeros((2, 5), np.float32)
        with self.assertRaisesRegex(ao.ConversionError, "k 6 is not in \\[0, 5\\]"):
            _convert(_node("TopK", ["x", "k"], ["v", "i"]), {"x": x},
                     {"k": np.array([6], np.int64)}, opset=11)
        with self.assertRaisesRegex(ao.ConversionError, "k -1 is not in"):
            _convert(_node("TopK", ["x", "k"], ["v", "i"]), {"x": x},
                     {"k": np.array([-1], np.int64)}, opset=11)
        # a runtime k decides the output shape: the input must be frozen
        with self.assertRaises(ao.NeedsConstantInput) as cm:
            _convert(_node("TopK", ["x", "k"], ["v", "i"]),
                     {"x": x, "k": np.array([2], np.int64)}, opset=11)
        self.assertEqual(cm.exception.input_name, "k")
        with self.assertRaisesRegex(ao.ConversionError, "attribute 'k'.*required"):
            _convert(_node("TopK", ["x"], ["v", "i"]), {"x": x}, opset=9)


@unittest.skipIf(onnx is None, "python3-onnx is not installed")
class TestMaxUnpool(unittest.TestCase):
    def test_pads_duplicates_and_bad_indices(self):
        # 1-D pooling, kernel 3, stride 2, pads 1/0: unpooled (4-1)*2+3-1 = 8
        x = np.array([[[1, 2, 3, 4], [5, 6, 7, 8]]], np.float32)
        idx = np.array([[[0, 2, 2, 7], [8, 15, 16, -2]]], np.int64)
        (y,) = _run(_node("MaxUnpool", ["x", "i"], kernel_shape=[3], strides=[2], pads=[1, 0]),
                    {"x": x, "i": idx}, opset=11)
        want = np.zeros((1, 2, 8), np.float32).reshape(-1)
        # row-major: the later duplicate (3 at index 2) wins; 16 and -2 (out
        # of [0, 16)) are dropped, not wrapped
        want[[0, 2, 7, 8, 15]] = [1, 3, 4, 5, 6]
        np.testing.assert_array_equal(y, want.reshape(1, 2, 8))

    def test_output_shape_pads_at_the_end(self):
        x = np.array([[[[5, 6], [7, 8]]]], np.float32)
        idx = np.array([[[[0, 3], [9, 15]]]], np.int64)
        consts = {"s": np.array([1, 1, 5, 6], np.int64)}
        # pads are ignored with output_shape (unpooled 4x4 without them)
        (y,) = _run(_node("MaxUnpool", ["x", "i", "s"], kernel_shape=[2, 2], strides=[2, 2],
                          pads=[1, 1, 1, 1]), {"x": x, "i": idx}, consts, opset=11)
        want = np.zeros((1, 1, 5, 6), np.float32)
        want[0, 0, 0, 0], want[0, 0, 0, 3], want[0, 0, 2, 1], want[0, 0, 3, 3] = 5, 6, 7, 8
        np.testing.assert_array_equal(y, want)
        with self.assertRaisesRegex(ao.ConversionError, "smaller than the unpooled shape"):
            _convert(_node("MaxUnpool", ["x", "i", "s"], kernel_shape=[2, 2], strides=[2, 2]),
                     {"x": x, "i": idx}, {"s": np.array([1, 1, 3, 4], np.int64)}, opset=11)
        with self.assertRaisesRegex(ao.ConversionError, "attribute 'kernel_shape'.*required"):
            _convert(_node("MaxUnpool", ["x", "i"]), {"x": x, "i": idx}, opset=11)


if __name__ == "__main__":
    unittest.main()
