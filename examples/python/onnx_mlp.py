#!/usr/bin/env python3
"""An ONNX MLP end to end: build a two-layer perceptron as an ONNX model,
convert it with accy.onnx, run it with accy, and check against numpy.

    GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4096 PYTHONPATH=python \
        python3 examples/python/onnx_mlp.py
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

z = np.maximum(x @ w1 + b1, 0) @ w2 + b2
e = np.exp(z - z.max(axis=1, keepdims=True))
ref = e / e.sum(axis=1, keepdims=True)
err = float(np.abs(out[0] - ref).max())
print("max |accy - numpy| = %.3g, %.1f us per call" % (err, dt * 1e6))
assert err < 1e-5
