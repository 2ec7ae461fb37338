"""The ONNX importer: conversion, constant folding, errors, command line."""

import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

from helpers import EPS32, HERE, TINY32, accy, assert_within, sum_bound

try:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    import accy.onnx as ao
except ImportError:  # pragma: no cover - depends on the machine
    onnx = None


def _model(nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _vi(name, shape, elem=TensorProto.FLOAT if onnx else None):
    return helper.make_tensor_value_info(name, elem, shape)


def _run(wire, *arrays):
    with accy.Session(threads=1) as s:
        return s.compile(wire)(*arrays)


@unittest.skipIf(onnx is None, "python3-onnx is not installed")
class TestImport(unittest.TestCase):
    def test_mlp(self):
        rng = np.random.default_rng(0)
        w1 = rng.standard_normal((4, 8)).astype(np.float32)
        b1 = rng.standard_normal(8).astype(np.float32)
        w2 = rng.standard_normal((3, 8)).astype(np.float32)
        b2 = rng.standard_normal(3).astype(np.float32)
        m = _model([helper.make_node("MatMul", ["x", "w1"], ["h"]),
                    helper.make_node("Add", ["h", "b1"], ["hb"]),
                    helper.make_node("Relu", ["hb"], ["r"]),
                    helper.make_node("Gemm", ["r", "w2", "b2"], ["z"], transB=1, alpha=0.5),
                    helper.make_node("Softmax", ["z"], ["y"], axis=-1)],
                   [_vi("x", [2, 4])], [_vi("y", [2, 3])],
                   [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"),
                    numpy_helper.from_array(w2, "w2"), numpy_helper.from_array(b2, "b2")])
        wire = ao.import_model(m)
        x = rng.standard_normal((2, 4)).astype(np.float32)
        (y,) = _run(wire, x)
        f = [a.astype(np.float64) for a in (x, w1, b1, w2, b2)]
        h = np.maximum(f[0] @ f[1] + f[2], 0)
        z = 0.5 * (h @ f[3].T) + f[4]
        e = np.exp(z - z.max(axis=1, keepdims=True))
        want = e / e.sum(axis=1, keepdims=True)
        # Error bound: h is a sum of 4 products and the bias (5 terms); relu
        # does not grow errors; z sums 8 products with h's error carried by
        # |w2|, then alpha and the bias (10 terms). A logit error d changes
        # softmax by a factor within exp(+-2 d); exp (a few ulps), the sum of
        # 3 terms and the division add a relative ~10 eps.
        dh = sum_bound(np.abs(f[0]) @ np.abs(f[1]) + np.abs(f[2]), 5)
        dz = 0.5 * (dh @ np.abs(f[3]).T) + \
            sum_bound(0.5 * (np.abs(h) @ np.abs(f[3]).T) + np.abs(f[4]), 10)
        rel = 2 * dz.max(axis=1, keepdims=True) + 10 * EPS32
        assert_within(y, want, rel * want + TINY32)

    def test_shape_subgraph_folds(self):
        m = _model([helper.make_node("Shape", ["x"], ["s"]),
                    helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
                    helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
                    helper.make_node("Concat", ["n1", "minus1"], ["shape"], axis=0),
                    helper.make_node("Reshape", ["x", "shape"], ["y"])],
                   [_vi("x", [2, 3, 4])], [_vi("y", [2, 12])],
                   [numpy_helper.from_array(np.array(0, np.int64), "zero"),
                    numpy_helper.from_array(np.array([0], np.int64), "axes"),
                    numpy_helper.from_array(np.array([-1], np.int64), "minus1")])
        wire = ao.import_model(m)
        text = accy.disassemble(wire)
        # Only the parameter and one reshape: the shape arithmetic folded away.
        self.assertIn("# accy program: wire 1.0, nodes 2,", text)
        self.assertIn("reshape %x : f32[2,12]", text)
        x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
        np.testing.assert_array_equal(_run(wire, x)[0], x.reshape(2, 12))

    def test_unsupported_op_names_node_and_op(self):
        m = _model([helper.make_node("FooBar", ["x"], ["y"], name="mystery")],
                   [_vi("x", [2])], [_vi("y", [2])])
        with self.assertRaises(ao.UnsupportedError) as cm:
            ao.import_model(m)
        e = cm.exception
        self.assertEqual((e.node, e.op_type), ("mystery", "FooBar"))
        self.assertIn("node 'mystery' (FooBar)", str(e))

    def test_unsupported_attribute_names_it(self):
        m = _model([helper.make_node("Relu", ["x"], ["y"], name="r", frobnicate=1)],
                   [_vi("x", [2])], [_vi("y", [2])])
        with self.assertRaises(ao.UnsupportedError) as cm:
            ao.import_model(m)
        self.assertEqual(cm.exception.attribute, "frobnicate")
        self.assertIn("attribute 'frobnicate'", str(cm.exception))

    def test_unsupported_attribute_value(self):
        m = _model([helper.make_node("Conv", ["x", "w"], ["y"], name="c", auto_pad="WEIRD")],
                   [_vi("x", [1, 1, 4, 4]), _vi("w", [1, 1, 3, 3])], [_vi("y", None)])
        with self.assertRaises(ao.UnsupportedError) as cm:
            ao.import_model(m)
        self.assertEqual(cm.exception.attribute, "auto_pad")

    def test_shape_input_must_be_constant(self):
        m = _model([helper.make_node("Reshape", ["x", "shape"], ["y"])],
                   [_vi("x", [2, 3]), _vi("shape", [2], TensorProto.INT64)],
                   [_vi("y", None)])
        with self.assertRaises(ao.NeedsConstantInput) as cm:
            ao.import_model(m)
        self.assertEqual(cm.exception.input_name, "shape")
        wire = ao.import_model(m, constant_inputs={"shape": np.array([3, 2], np.int64)})
        with accy.Session() as s:
            p = s.compile(wire)
            self.assertEqual([i.name for i in p.inputs], ["x"])
            self.assertEqual(p.outputs[0].shape, (3, 2))

    def test_dynamic_shape_needs_input_shape(self):
        m = _model([helper.make_node("Relu", ["x"], ["y"])],
                   [_vi("x", ["batch", 3])], [_vi("y", ["batch", 3])])
        with self.assertRaises(ao.ConversionError) as cm:
            ao.import_model(m)
        self.assertIn("--input-shape x=", str(cm.exception))
        wire = ao.import_model(m, input_shapes={"x": (5, 3)})
        x = np.linspace(-1, 1, 15, dtype=np.float32).reshape(5, 3)
        np.testing.assert_array_equal(_run(wire, x)[0], np.maximum(x, 0))

    def test_conv_pool_batchnorm(self):
        rng = np.random.default_rng(1)
        w = rng.standard_normal((2, 1, 3, 3)).astype(np.float32)
        scale, bias = np.array([1.5, 0.5], np.float32), np.array([0.1, -0.2], np.float32)
        mean, var = np.array([0.2, -0.1], np.float32), np.array([2.0, 0.5], np.float32)
        inits = [numpy_helper.from_array(a, n) for a, n in
                 ((w, "w"), (scale, "s"), (bias, "b"), (mean, "m"), (var, "v"))]
        m = _model([helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                    helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["n"]),
                    helper.make_node("MaxPool", ["n"], ["p"], kernel_shape=[2, 2],
                                     strides=[2, 2]),
                    helper.make_node("GlobalAveragePool", ["p"], ["y"])],
                   [_vi("x", [1, 1, 4, 4])], [_vi("y", None)], inits)
        x = rng.standard_normal((1, 1, 4, 4)).astype(np.float32)
        (y,) = _run(ao.import_model(m), x)
        xp = np.pad(x[0, 0].astype(np.float64), 1)
        w64 = w.astype(np.float64)

        def conv(xp, w):
            return np.array([[[(xp[i:i + 3, j:j + 3] * w[o, 0]).sum() for j in range(4)]
                              for i in range(4)] for o in range(2)])

        c = conv(xp, w64)
        k = (scale / np.sqrt(var.astype(np.float64) + 1e-5))[:, None, None]
        n = (c - mean[:, None, None]) * k + bias[:, None, None]
        p = n.reshape(2, 2, 2, 2, 2).max(axis=(2, 4))
        # Error bound: the conv sums 9 products; batch norm scales that error
        # by |k| and adds a few roundings (subtract, sqrt, divide, multiply,
        # add: 8 eps of its operands); the max picks one element and the mean
        # of 4 adds 4 eps. The largest bound of any element covers them all.
        dn = np.abs(k) * (sum_bound(conv(np.abs(xp), np.abs(w64)), 9) +
                          8 * EPS32 * (np.abs(c) + np.abs(mean[:, None, None]))) + \
            8 * EPS32 * (np.abs(n) + np.abs(bias[:, None, None]))
        want = p.mean(axis=(1, 2))
        assert_within(y.reshape(2), want, dn.max() + 4 * EPS32 * np.abs(want))

    def test_registry(self):
        ops = ao.supported_ops()
        for op in ("MatMul", "Gemm", "Conv", "Softmax", "Reshape", "Gather", "Constant"):
            self.assertIn(op, ops)
        with self.assertRaises(RuntimeError):
            ao.converter("Relu")(lambda ctx, node: None)


@unittest.skipIf(onnx is None, "python3-onnx is not installed")
class TestCommandLine(unittest.TestCase):
    def _cli(self, *args):
        env = dict(os.environ, PYTHONPATH=os.path.dirname(HERE))
        return subprocess.run([sys.executable, "-m", "accy.onnx"] + list(args), env=env,
                              capture_output=True, text=True, timeout=120)

    def test_convert_and_refuse(self):
        with tempfile.TemporaryDirectory() as d:
            good = _model([helper.make_node("Relu", ["x"], ["y"])],
                          [_vi("x", ["n", 2])], [_vi("y", None)])
            onnx.save(good, os.path.join(d, "good.onnx"))
            out = os.path.join(d, "good.accy")
            r = self._cli(os.path.join(d, "good.onnx"), "-o", out, "--input-shape", "x=3,2")
            self.assertEqual(r.returncode, 0, r.stderr)
            with accy.Session() as s:
                self.assertEqual(s.compile(out).inputs[0].shape, (3, 2))
            r = self._cli(os.path.join(d, "good.onnx"), "-o", out + ".txt", "--text",
                          "--input-shape", "x=3,2")
            with open(out + ".txt") as f:
                self.assertIn("maximum", f.read())

            bad = _model([helper.make_node("FooBar", ["x"], ["y"], name="n7")],
                         [_vi("x", [2])], [_vi("y", [2])])
            onnx.save(bad, os.path.join(d, "bad.onnx"))
            bad_out = os.path.join(d, "bad.accy")
            r = self._cli(os.path.join(d, "bad.onnx"), "-o", bad_out)
            self.assertEqual(r.returncode, 1)
            self.assertIn("node 'n7' (FooBar)", r.stderr)
            self.assertFalse(os.path.exists(bad_out))
            self.assertEqual(os.listdir(d).count("bad.accy"), 0)

    def test_list_ops(self):
        r = self._cli("--list-ops")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("| MatMul | ops_nn |", r.stdout)


if __name__ == "__main__":
    unittest.main()
