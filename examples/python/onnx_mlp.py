#!/usr/bin/env python3
"""An ONNX MLP end to end: build a two-layer perceptron as an ONNX model,
convert it with accy.onnx, run it with accy, and check against numpy.

    PYTHONPATH=python python3 examples/python/onnx_mlp.py
(with ACCY_LIBRARY=/path/to/libaccy.so unless libaccy is in .libs/ or installed).
"""

import time

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import accy
import accy.onnx

rng = np.random.default_rng(42)
w1 = rng.standard_normal((784, 128)).astype(np.float32) * 0.05
b1 = rng.standard_normal(128).astype(np.float32) * 0.1
w2 = rng.standard_normal((128, 10)).astype(np.float32) * 0.05
b2 = rng.standard_normal(10).astype(np.float32) * 0.1

graph = helper.make_graph(
    [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"]),
     helper.make_node("Relu", ["h"], ["r"]),
     helper.make_node("Gemm", ["r", "w2", "b2"], ["logits"]),
     helper.make_node("Softmax", ["logits"], ["probs"], axis=-1)],
    "mlp",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 784])],
    [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", 10])],
    [numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"))])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])

# The batch dimension is symbolic in the model: fix it at import.
wire = accy.onnx.import_model(model, input_shapes={"x": (32, 784)})
print("converted: %d bytes of wire" % len(wire))

x = rng.standard_normal((32, 784)).astype(np.float32)
with accy.Session() as session:
    prog = session.compile(wire)
    print("inputs:", prog.inputs, "outputs:", prog.outputs)
    out = prog.new_outputs()
    prog.invoke([x], out)                       # zero copies: out[0] is written in place
    t0 = time.perf_counter()
    n = 200
    for _ in range(n):
        prog.invoke([x], out)
    dt = (time.perf_counter() - t0) / n

# Reference in float64, and a bound that holds for any summation order (and
# FMA) on any CPU: an n-term f32 sum is within n*eps*sum|terms| of exact.
eps = float(np.finfo(np.float32).eps)
x64, w1_64, w2_64 = x.astype(np.float64), w1.astype(np.float64), w2.astype(np.float64)
h = x64 @ w1_64 + b1
dh = 785 * eps * (np.abs(x64) @ np.abs(w1_64) + np.abs(b1))   # layer 1 rounding
r = np.maximum(h, 0)
z = r @ w2_64 + b2
dz = (dh @ np.abs(w2_64)) + 129 * eps * (np.abs(r) @ np.abs(w2_64) + np.abs(b2))
e = np.exp(z - z.max(axis=1, keepdims=True))
ref = e / e.sum(axis=1, keepdims=True)
# softmax moves p_i by at most p_i * 2 max|dz| (+ its own f32 rounding).
bound = ref * (2 * dz.max(axis=1, keepdims=True) + 32 * eps) + 1e-7
err = float(np.abs(out[0] - ref).max())
print("max |accy - numpy| = %.3g, %.1f us per call" % (err, dt * 1e6))
assert np.all(np.abs(out[0] - ref) <= bound), "accy differs from the float64 reference beyond the bound"
