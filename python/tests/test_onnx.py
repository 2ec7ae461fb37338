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

    def test_input_shape_for_an_unknown_input_is_refused(self):
        m = _model([helper.make_node("Relu", ["x"], ["y"])],
                   [_vi("x", ["n", 3])], [_vi("y", None)])
        with self.assertRaises(ao.ConversionError) as cm:
            ao.import_model(m, input_shapes={"x": (2, 3), "X": (2, 3)})
        self.assertIn("input shape given for 'X', which is not a graph input of the model; "
                      "its inputs are: 'x'", str(cm.exception))
        with self.assertRaises(ao.ConversionError) as cm:
            ao.import_model(m, {"x": (2, 3)}, constant_inputs={"z": np.zeros(2)})
        self.assertIn("constant input given for 'z'", str(cm.exception))

    def test_input_shape_of_the_wrong_rank_names_both_ranks(self):
        m = _model([helper.make_node("Conv", ["x", "w"], ["y"], name="c")],
                   [_vi("x", ["n", 1, 4, 4])], [_vi("y", None)],
                   [numpy_helper.from_array(np.ones((1, 1, 3, 3), np.float32), "w")])
        with self.assertRaises(ao.ConversionError) as cm:
            ao.import_model(m, input_shapes={"x": (4, 4)})
        self.assertIn("input shape for 'x' has rank 2 (4,4) but the model declares rank 4 "
                      "(n,1,4,4)", str(cm.exception))
        self.assertNotIn("spatial", str(cm.exception))
        # A static declaration may be overridden; if that breaks a converter,
        # the error says which input was given which rank.
        m.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 1
        with self.assertRaises(ao.ConversionError) as cm:
            ao.import_model(m, input_shapes={"x": (4, 4)})
        self.assertIn("node 'c' (Conv)", str(cm.exception))
        self.assertIn("input shape for 'x' has rank 2 (4,4) but the model declares rank 4 "
                      "(1,1,4,4)", str(cm.exception))

    def test_not_an_onnx_model(self):
        for data in (b"", b"plain text, not a model\n", b"\x08\x07garbage\xff\xff"):
            with self.subTest(data=data), self.assertRaises(ao.ConversionError) as cm:
                ao.import_model(data)
            self.assertIn("not an ONNX model: the bytes given", str(cm.exception))
        with tempfile.NamedTemporaryFile(suffix=".onnx") as f:
            f.write(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
            f.flush()
            with self.assertRaises(ao.ConversionError) as cm:
                ao.import_model(f.name)
            self.assertIn("not an ONNX model: %s" % f.name, str(cm.exception))

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
            out = os.path.join(d, "good.accyb")
            r = self._cli(os.path.join(d, "good.onnx"), "-o", out, "--input-shape", "x=3,2")
            self.assertEqual(r.returncode, 0, r.stderr)
            with accy.Session() as s:
                self.assertEqual(s.compile(out).inputs[0].shape, (3, 2))
            r = self._cli(os.path.join(d, "good.onnx"), "-o", out[:-1], "--text",
                          "--input-shape", "x=3,2")
            with open(out[:-1]) as f:
                self.assertIn("maximum", f.read())

            bad = _model([helper.make_node("FooBar", ["x"], ["y"], name="n7")],
                         [_vi("x", [2])], [_vi("y", [2])])
            onnx.save(bad, os.path.join(d, "bad.onnx"))
            bad_out = os.path.join(d, "bad.accyb")
            r = self._cli(os.path.join(d, "bad.onnx"), "-o", bad_out)
            self.assertEqual(r.returncode, 1)
            self.assertIn("node 'n7' (FooBar)", r.stderr)
            self.assertFalse(os.path.exists(bad_out))
            self.assertEqual([n for n in os.listdir(d) if n.startswith("bad.accyb")], [])

    def test_default_output_names(self):
        with tempfile.TemporaryDirectory() as d:
            good = _model([helper.make_node("Relu", ["x"], ["y"])],
                          [_vi("x", [3, 2])], [_vi("y", None)])
            model = os.path.join(d, "net.v1.onnx")
            onnx.save(good, model)
            r = self._cli(model)
            self.assertEqual(r.returncode, 0, r.stderr)
            wire = os.path.join(d, "net.v1.accyb")
            with open(wire, "rb") as f:
                self.assertEqual(f.read(4), b"ACCY")
            r = self._cli(model, "--text")
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(d, "net.v1.accy")) as f:
                text = f.read()
            self.assertIn("maximum", text)
            with accy.Session() as s:  # both forms compile
                self.assertEqual(s.compile(wire).outputs[0].shape, (3, 2))
                self.assertEqual(s.compile(os.path.join(d, "net.v1.accy")).outputs[0].shape,
                                 (3, 2))
            self.assertEqual(sorted(os.listdir(d)), ["net.v1.accy", "net.v1.accyb",
                                                     "net.v1.onnx"])
            # a model named .accyb cannot default onto itself
            odd = os.path.join(d, "m.accyb")
            onnx.save(good, odd)
            r = self._cli(odd)
            self.assertEqual(r.returncode, 2)
            self.assertIn("give -o OUT", r.stderr)

    def test_messages(self):
        with tempfile.TemporaryDirectory() as d:
            m = _model([helper.make_node("Relu", ["x"], ["y"])],
                       [_vi("x", ["n", 2])], [_vi("y", None)])
            path = os.path.join(d, "m.onnx")
            onnx.save(m, path)
            r = self._cli(path, "--input-shape", "X=3,2")
            self.assertEqual(r.returncode, 1)
            self.assertIn("input shape given for 'X', which is not a graph input of the model; "
                          "its inputs are: 'x'", r.stderr)
            r = self._cli(path, "--input-shape", "x=3,2,1")
            self.assertEqual(r.returncode, 1)
            self.assertIn("input shape for 'x' has rank 3 (3,2,1) but the model declares "
                          "rank 2 (n,2)", r.stderr)
            junk = os.path.join(d, "junk.onnx")
            with open(junk, "wb") as f:
                f.write(b"\x00\x01not protobuf\xff" * 10)
            r = self._cli(junk)
            self.assertEqual(r.returncode, 1)
            self.assertIn("accy.onnx: error: not an ONNX model: %s" % junk, r.stderr)
            self.assertNotIn("DecodeError", r.stderr)
            self.assertFalse(os.path.exists(os.path.join(d, "junk.accyb")))

    def test_help_names_the_suffixes(self):
        r = self._cli("--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn(".accyb", r.stdout)
        self.assertIn("(.accy)", r.stdout)

    def test_list_ops(self):
        r = self._cli("--list-ops")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("| MatMul | ops_nn |", r.stdout)


if __name__ == "__main__":
    unittest.main()
