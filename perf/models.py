#!/usr/bin/env python3
"""perf/models.py: writes the perf harness's workloads into a cache directory.

For every workload NAME it writes
  NAME.onnx           the model (static shapes, opset <= 17), run by ONNX Runtime
  NAME.accyb          the same model converted by accy's importer (wire bytes)
  NAME.in0.bin ...    deterministic inputs (raw little-endian float32)
  NAME.ref0.bin ...   reference outputs (float32): computed in float64 with numpy
                      for the generated models, by torch (float32) for torchvision nets
  NAME.bound0.bin     (GEMM only) a per-element absolute error bound, see gemm()
and one line per workload in manifest.txt (key=value pairs, read by accy_perf).

  python3 perf/models.py --out DIR [--quick] [--no-torch] [--only REGEX]

--quick writes the smaller CI set (same workload families, smaller sizes).
Files are regenerated only when this script, its arguments or (for .accyb) the
importer's sources change. Conversion to .accyb runs in a child process that
imports accy (so torch and libaccy never share a process).
"""
import argparse
import hashlib
import inspect
import json
import math
import os
import re
import subprocess
import sys

import numpy as np

OPSET = 17
F32 = np.float32
U = 2.0 ** -24  # unit roundoff of float32


def die(msg):
    print("models.py: " + msg, file=sys.stderr)
    sys.exit(1)


# ---- deterministic data -------------------------------------------------------------

def rng(name):
    """A generator seeded from the workload name: the same bytes on every machine."""
    seed = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little")
    return np.random.default_rng(seed)


def uniform(r, shape, lo=-0.5, hi=0.5):
    return r.uniform(lo, hi, size=shape).astype(F32)


def weight(r, fan_in, shape):
    """Random weights scaled like a trained layer (variance ~ 1/fan_in)."""
    b = math.sqrt(3.0 / fan_in)
    return r.uniform(-b, b, size=shape).astype(F32)


# ---- ONNX building helpers ------------------------------------------------------------

class Graph:
    def __init__(self, name):
        import onnx
        import onnx.numpy_helper
        from onnx import helper
        self.onnx, self.helper = onnx, helper
        self.name = name
        self.nodes, self.inits, self.inputs, self.outputs = [], [], [], []
        self.n = 0

    def tmp(self, base="t"):
        self.n += 1
        return "%s%d" % (base, self.n)

    def input(self, name, shape):
        self.inputs.append(self.helper.make_tensor_value_info(name, self.onnx.TensorProto.FLOAT, list(shape)))
        return name

    def output(self, name, shape):
        self.outputs.append(self.helper.make_tensor_value_info(name, self.onnx.TensorProto.FLOAT, list(shape)))

    def const(self, array, base="c"):
        name = self.tmp(base)
        self.inits.append(self.onnx.numpy_helper.from_array(np.asarray(array), name))
        return name

    def op(self, op_type, inputs, out=None, **attrs):
        out = out or self.tmp(op_type.lower())
        self.nodes.append(self.helper.make_node(op_type, list(inputs), [out], **attrs))
        return out

    def model(self):
        g = self.helper.make_graph(self.nodes, self.name, self.inputs, self.outputs, self.inits)
        m = self.helper.make_model(g, opset_imports=[self.helper.make_opsetid("", OPSET)],
                                   producer_name="accy-perf")
        m.ir_version = 8
        self.onnx.checker.check_model(m)
        return m


# ---- float64 references ------------------------------------------------------------------

def d(a):
    return np.asarray(a, dtype=np.float64)


def ref_layernorm(x, g, b, eps=1e-5):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * g + b


def ref_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


_erf = np.frompyfunc(math.erf, 1, 1)


def ref_gelu_erf(x):
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)).astype(np.float64))


def ref_gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def ref_conv2d(x, w, b, pad):
    """NCHW, stride 1, groups 1; float64 via im2col."""
    n, c, h, wd = x.shape
    oc, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    cols = np.empty((n, c, kh, kw, oh, ow))
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = xp[:, :, i:i + oh, j:j + ow]
    y = np.einsum("nckluv,ockl->nouv", cols, w, optimize=True)
    return y + b.reshape(1, oc, 1, 1)


def ref_maxpool2(x):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


# ---- workloads ----------------------------------------------------------------------
# Each builder returns a dict: model, inputs (list of float32 arrays), refs (list),
# tol (dict: rtol and atol, or "bound": per-element arrays), and optional extras
# (gemm=(M,N,K), flops/bytes overrides, note). The tolerance is the pass criterion
# |y - ref| <= atol + rtol * |ref| for every element. Each one is argued from the
# computation, not from the errors one CPU happens to produce: accy's kernels will
# change summation order and use FMA, and both AVX2 and AVX-512 machines must pass.

def gemm(n, const_b):
    name = "gemm_%d%s" % (n, "_const" if const_b else "")
    r = rng("gemm_%d" % n)  # the const variant uses the same data
    a, b = uniform(r, (n, n)), uniform(r, (n, n))
    g = Graph(name)
    ia = g.input("a", (n, n))
    ib = g.const(b, "b") if const_b else g.input("b", (n, n))
    g.op("MatMul", [ia, ib], "y")
    g.output("y", (n, n))
    ref = d(a) @ d(b)
    # Any summation order in float32, with or without FMA, satisfies
    # |c - c_exact| <= gamma_K * (|A||B|)_ij, gamma_K = K u / (1 - K u) (Higham,
    # Accuracy and Stability, Thm 3.5). Plus one rounding of the stored reference.
    gk = n * U / (1 - n * U)
    bound = (gk * (np.abs(d(a)) @ np.abs(d(b))) + 2 * U * np.abs(ref)).astype(F32)
    return dict(name=name, group="gemm", model=g.model(), inputs=[a] if const_b else [a, b],
                refs=[ref], tol=dict(bound=[bound]), gemm=(n, n, n),
                flops=2 * n ** 3, bytes=3 * n * n * 4)


def mlp(batch):
    name = "mlp_b%d" % batch
    r = rng("mlp")
    dims = [784, 1024, 1024, 10]
    ws = [weight(r, dims[i], (dims[i + 1], dims[i])) for i in range(3)]  # torch Linear layout
    bs = [uniform(r, (dims[i + 1],), -0.1, 0.1) for i in range(3)]
    x = uniform(rng("mlp_x%d" % batch), (batch, 784), 0.0, 1.0)
    g = Graph(name)
    h = g.input("x", (batch, 784))
    for i in range(3):
        h = g.op("Gemm", [h, g.const(ws[i], "w"), g.const(bs[i], "b")], "y" if i == 2 else None, transB=1)
        if i < 2:
            h = g.op("Relu", [h])
    g.output("y", (batch, 10))
    y = d(x)
    for i in range(3):
        y = y @ d(ws[i]).T + d(bs[i])
        if i < 2:
            y = np.maximum(y, 0)
    # Three dot products of length <= 1024: gamma_1024 = 6.1e-5 relative to sum |w||h|,
    # which for these scaled random weights is a few times |y|; 2e-4 of the output
    # scale covers it with the rounding of the hidden activations.
    return dict(name=name, group="mlp", model=g.model(), inputs=[x], refs=[y],
                tol=dict(rtol=2e-4, atol_scale=2e-4))


def transformer(seq=128, dm=256, heads=4, ff=1024, causal=False, batch=1):
    """Pre-LN block. causal=False: encoder layer, separate Q/K/V, erf-GELU.
    causal=True: GPT-2 block, fused QKV + Split, causal mask (Where), tanh-GELU.
    batch > 1: that many sequences (name suffix _bN), the same weights as batch 1."""
    base = ("gpt2_s%d" if causal else "transformer_s%d") % seq
    name = base + ("_b%d" % batch if batch > 1 else "")
    r = rng(base)
    dh = dm // heads
    x = uniform(rng(name + "_x"), (batch, seq, dm), -1.0, 1.0)
    p = {}
    for k in ("ln1", "ln2"):
        p[k + "_g"] = uniform(r, (dm,), 0.8, 1.2)
        p[k + "_b"] = uniform(r, (dm,), -0.1, 0.1)
    if causal:
        p["wqkv"], p["bqkv"] = weight(r, dm, (dm, 3 * dm)), uniform(r, (3 * dm,), -0.1, 0.1)
    else:
        for k in "qkv":
            p["w" + k], p["b" + k] = weight(r, dm, (dm, dm)), uniform(r, (dm,), -0.1, 0.1)
    p["wo"], p["bo"] = weight(r, dm, (dm, dm)), uniform(r, (dm,), -0.1, 0.1)
    p["w1"], p["b1"] = weight(r, dm, (dm, ff)), uniform(r, (ff,), -0.1, 0.1)
    p["w2"], p["b2"] = weight(r, ff, (ff, dm)), uniform(r, (dm,), -0.1, 0.1)

    g = Graph(name)
    c = lambda v: g.const(np.asarray(v, dtype=F32))
    i64 = lambda v: g.const(np.asarray(v, dtype=np.int64))
    xin = g.input("x", (batch, seq, dm))

    def ln(h, k):
        return g.op("LayerNormalization", [h, g.const(p[k + "_g"]), g.const(p[k + "_b"])],
                    axis=-1, epsilon=1e-5)

    def dense(h, w, b):
        return g.op("Add", [g.op("MatMul", [h, g.const(p[w])]), g.const(p[b])])

    def heads_of(h):  # [B,S,D] -> [B,H,S,dh]
        return g.op("Transpose", [g.op("Reshape", [h, i64([batch, seq, heads, dh])])], perm=[0, 2, 1, 3])

    h = ln(xin, "ln1")
    if causal:
        qkv = dense(h, "wqkv", "bqkv")
        q, k, v = g.tmp("q"), g.tmp("k"), g.tmp("v")
        g.nodes.append(g.helper.make_node("Split", [qkv, i64([dm, dm, dm])], [q, k, v], axis=-1))
    else:
        q, k, v = (dense(h, "w" + t, "b" + t) for t in "qkv")
    q, k, v = heads_of(q), heads_of(k), heads_of(v)
    kt = g.op("Transpose", [k], perm=[0, 1, 3, 2])
    s = g.op("Div", [g.op("MatMul", [q, kt]), c(math.sqrt(dh))])
    mask = np.tril(np.ones((seq, seq), dtype=bool))
    if causal:
        s = g.op("Where", [g.const(mask.reshape(1, 1, seq, seq)), s, c(-10000.0)])
    a = g.op("Softmax", [s], axis=-1)
    o = g.op("MatMul", [a, v])
    o = g.op("Reshape", [g.op("Transpose", [o], perm=[0, 2, 1, 3]), i64([batch, seq, dm])])
    x1 = g.op("Add", [xin, dense(o, "wo", "bo")])
    f = dense(ln(x1, "ln2"), "w1", "b1")
    if causal:  # GELU, tanh form, as GPT-2 writes it
        inner = g.op("Mul", [c(math.sqrt(2 / math.pi)),
                             g.op("Add", [f, g.op("Mul", [c(0.044715), g.op("Pow", [f, c(3.0)])])])])
        f = g.op("Mul", [g.op("Mul", [c(0.5), f]), g.op("Add", [c(1.0), g.op("Tanh", [inner])])])
    else:  # GELU, erf form, as torch exports it
        f = g.op("Mul", [g.op("Mul", [f, g.op("Add", [g.op("Erf", [g.op("Div", [f, c(math.sqrt(2))])]),
                                                       c(1.0)])]), c(0.5)])
    g.op("Add", [x1, dense(f, "w2", "b2")], "y")
    g.output("y", (batch, seq, dm))

    P = {k2: d(v2) for k2, v2 in p.items()}
    Y = np.stack([ref_block(d(x)[i], P, seq, dm, heads, causal, mask) for i in range(batch)])
    # Seven matmuls with K <= 1024, two layer norms (sums of 256), softmax over <= 128,
    # and a vector erf/tanh that a fast kernel approximates to ~2e-5 absolute (MLAS's
    # erf test bound). 5e-4 of the output scale, plus 5e-4 relative, covers these
    # without hiding a wrong head, mask or residual (those give errors of order 1).
    return dict(name=name, group="transformer", model=g.model(), inputs=[x], refs=[Y],
                tol=dict(rtol=5e-4, atol_scale=5e-4))


def ref_block(X, P, seq, dm, heads, causal, mask):
    """transformer()'s block on one sequence X [seq, dm], in double."""
    dh = dm // heads
    H = ref_layernorm(X, P["ln1_g"], P["ln1_b"])
    if causal:
        QKV = H @ P["wqkv"] + P["bqkv"]
        Q, K, V = QKV[:, :dm], QKV[:, dm:2 * dm], QKV[:, 2 * dm:]
    else:
        Q, K, V = (H @ P["w" + t] + P["b" + t] for t in "qkv")
    sp = lambda M: M.reshape(seq, heads, dh).transpose(1, 0, 2)
    S = sp(Q) @ sp(K).transpose(0, 2, 1) / math.sqrt(dh)
    if causal:
        S = np.where(mask, S, -10000.0)
    O = (ref_softmax(S) @ sp(V)).transpose(1, 0, 2).reshape(seq, dm)
    X1 = X + O @ P["wo"] + P["bo"]
    F = ref_layernorm(X1, P["ln2_g"], P["ln2_b"]) @ P["w1"] + P["b1"]
    F = ref_gelu_tanh(F) if causal else ref_gelu_erf(F)
    return X1 + F @ P["w2"] + P["b2"]


def small_cnn(batch):
    """peers.md's conv net: Conv3x3 16 + ReLU + MaxPool, Conv3x3 32 + ReLU + MaxPool, dense 10."""
    name = "cnn_b%d" % batch
    r = rng("cnn")
    w1, b1 = weight(r, 27, (16, 3, 3, 3)), uniform(r, (16,), -0.1, 0.1)
    w2, b2 = weight(r, 144, (32, 16, 3, 3)), uniform(r, (32,), -0.1, 0.1)
    w3, b3 = weight(r, 8192, (10, 8192)), uniform(r, (10,), -0.1, 0.1)
    x = uniform(rng("cnn_x%d" % batch), (batch, 3, 64, 64), 0.0, 1.0)
    g = Graph(name)
    h = g.input("x", (batch, 3, 64, 64))
    for w, b in ((w1, b1), (w2, b2)):
        h = g.op("Conv", [h, g.const(w), g.const(b)], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
        h = g.op("MaxPool", [g.op("Relu", [h])], kernel_shape=[2, 2], strides=[2, 2])
    h = g.op("Flatten", [h], axis=1)
    g.op("Gemm", [h, g.const(w3), g.const(b3)], "y", transB=1)
    g.output("y", (batch, 10))
    y = d(x)
    for w, b in ((w1, b1), (w2, b2)):
        y = ref_maxpool2(np.maximum(ref_conv2d(y, d(w), d(b), 1), 0))
    y = y.reshape(batch, -1) @ d(w3).T + d(b3)
    # Convolutions of K = 27 and 144 and a dense layer of K = 8192 (gamma_8192 = 4.9e-4
    # relative to sum |w||h|, a worst case that random rounding never approaches:
    # the typical error grows like sqrt(K) u). 5e-4 of the output scale.
    return dict(name=name, group="cnn", model=g.model(), inputs=[x], refs=[y],
                tol=dict(rtol=5e-4, atol_scale=5e-4))


def softmax(rows, cols=1024):
    name = "softmax_%dx%d" % (rows, cols)
    x = uniform(rng(name), (rows, cols), -4.0, 4.0)
    g = Graph(name)
    g.op("Softmax", [g.input("x", (rows, cols))], "y", axis=-1)
    g.output("y", (rows, cols))
    # exp to a few ulp (MLAS: 1e-6 relative), a sum of 1024 positive terms
    # (gamma_1024 = 6.1e-5 relative, any order), one division: 1e-4 relative.
    return dict(name=name, group="norm", model=g.model(), inputs=[x], refs=[ref_softmax(d(x))],
                tol=dict(rtol=1e-4, atol_scale=1e-6), bytes=2 * rows * cols * 4)


def layernorm(rows, cols=1024):
    name = "layernorm_%dx%d" % (rows, cols)
    r = rng(name)
    x = uniform(r, (rows, cols), -2.0, 2.0)
    gam, bet = uniform(r, (cols,), 0.5, 1.5), uniform(r, (cols,), -0.5, 0.5)
    g = Graph(name)
    g.op("LayerNormalization", [g.input("x", (rows, cols)), g.const(gam), g.const(bet)], "y",
         axis=-1, epsilon=1e-5)
    g.output("y", (rows, cols))
    # Mean and variance are sums of 1024 terms (gamma_1024 = 6.1e-5 relative to the sums
    # of |x| and x^2, which are within a small factor of the results here), then one
    # rsqrt and an FMA: 1e-4 of the output scale plus 1e-4 relative.
    return dict(name=name, group="norm", model=g.model(), inputs=[x],
                refs=[ref_layernorm(d(x), d(gam), d(bet))],
                tol=dict(rtol=1e-4, atol_scale=1e-4), bytes=2 * rows * cols * 4)


def chain(n):
    """Mul -> Add -> Tanh -> Mul over n floats (peers.md: 4096x4096, one input, one output)."""
    name = "chain_%s" % ("%dm" % (n >> 20) if n >= 1 << 20 else "%dk" % (n >> 10))
    x = uniform(rng(name), (n,), -4.0, 4.0)
    g = Graph(name)
    c = lambda v: g.const(np.asarray(v, dtype=F32))
    h = g.op("Mul", [g.input("x", (n,)), c(0.75)])
    h = g.op("Tanh", [g.op("Add", [h, c(0.25)])])
    g.op("Mul", [h, c(1.5)], "y")
    g.output("y", (n,))
    y = np.tanh(d(x) * 0.75 + 0.25) * 1.5
    # Two roundings before tanh (|d tanh| <= 1), a vector tanh good to a few 1e-7
    # absolute (Eigen/MLAS rational form: ~1e-6 worst case), and the final scale by 1.5.
    return dict(name=name, group="eltwise", model=g.model(), inputs=[x], refs=[y],
                tol=dict(rtol=4 * U, atol=3e-6), bytes=2 * n * 4)


def add4():
    name = "add_4"
    r = rng(name)
    a, b = uniform(r, (4,)), uniform(r, (4,))
    g = Graph(name)
    g.op("Add", [g.input("a", (4,)), g.input("b", (4,))], "y")
    g.output("y", (4,))
    # One rounding: the correctly rounded sum is exact after storing the reference.
    return dict(name=name, group="overhead", model=g.model(), inputs=[a, b], refs=[d(a) + d(b)],
                tol=dict(rtol=2 * U, atol=0.0), bytes=12 * 4)


# ---- torchvision ----------------------------------------------------------------------

TORCH_NETS = [("resnet18", 1), ("resnet18", 8), ("mobilenet_v2", 1), ("squeezenet1_1", 1)]


def torch_net(arch, batch, path):
    import torch
    import torchvision
    name = "%s_b%d" % (arch.replace("_", ""), batch)
    torch.manual_seed(0)
    model = getattr(torchvision.models, arch)(weights=None)
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():  # non-trivial BatchNorm statistics, as in a trained net
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                n = m.num_features
                m.weight.copy_(torch.rand(n, generator=gen) + 0.5)
                m.bias.copy_(torch.rand(n, generator=gen) * 0.2 - 0.1)
                m.running_mean.copy_(torch.rand(n, generator=gen) * 0.2 - 0.1)
                m.running_var.copy_(torch.rand(n, generator=gen) + 0.5)
    model.eval()
    x = torch.rand(batch, 3, 224, 224, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        torch.set_num_threads(max(1, os.cpu_count() or 1))
        y = model(x)
        # torch 2.9 and later export through dynamo by default (opset 18 and up);
        # the TorchScript exporter writes the opset-13 graphs these nets always had.
        extra = {}
        if "dynamo" in inspect.signature(torch.onnx.export).parameters:
            extra["dynamo"] = False
        torch.onnx.export(model, x, path, opset_version=13, input_names=["x"], output_names=["y"],
                          do_constant_folding=True, **extra)
    import onnx
    # Deep nets in float32 (torch's own result is the reference, itself rounded): a
    # relative tolerance of 5e-4 of the output scale, plus 5e-4 relative per element.
    return dict(name=name, group="convnet", model=onnx.load(path), inputs=[x.numpy()],
                refs=[y.numpy().astype(np.float64)], tol=dict(rtol=5e-4, atol_scale=5e-4))


# ---- counting -----------------------------------------------------------------------

def count_flops(model):
    """2 x multiply-adds of MatMul, Gemm and Conv (elementwise work is not counted)."""
    import onnx
    m = onnx.shape_inference.infer_shapes(model)
    shapes = {}
    for vi in list(m.graph.value_info) + list(m.graph.input) + list(m.graph.output):
        t = vi.type.tensor_type
        if t.HasField("shape"):
            shapes[vi.name] = [dd.dim_value for dd in t.shape.dim]
    for init in m.graph.initializer:
        shapes[init.name] = list(init.dims)
    total = 0
    for n in m.graph.node:
        try:
            if n.op_type == "MatMul":
                a, b = shapes[n.input[0]], shapes[n.input[1]]
                y = shapes[n.output[0]]
                total += 2 * int(np.prod(y)) * a[-1]
            elif n.op_type == "Gemm":
                a, y = shapes[n.input[0]], shapes[n.output[0]]
                ta = [at.i for at in n.attribute if at.name == "transA"]
                k = a[0] if ta and ta[0] else a[1]
                total += 2 * int(np.prod(y)) * k
            elif n.op_type == "Conv":
                w, y = shapes[n.input[1]], shapes[n.output[0]]
                total += 2 * int(np.prod(y)) * int(np.prod(w[1:]))
        except (KeyError, IndexError):
            pass
    return total


def model_bytes(w):
    """Minimum memory traffic of one call: inputs, outputs and weights, once each."""
    n = sum(a.nbytes for a in w["inputs"]) + sum(np.asarray(r).size * 4 for r in w["refs"])
    for init in w["model"].graph.initializer:
        n += int(np.prod(init.dims)) * (4 if init.data_type == 1 else 8 if init.data_type == 7 else 1)
    return n


# ---- main -----------------------------------------------------------------------------

def workload_list(quick, torch_ok):
    """(name, thunk) in run order. Quick mode: the same families, smaller where big."""
    L = []
    for n in ((64, 128, 256) if quick else (64, 128, 256, 512, 1024, 2048)):
        L.append(("gemm_%d" % n, lambda n=n: gemm(n, False)))
    for n in ((256,) if quick else (256, 1024)):
        L.append(("gemm_%d_const" % n, lambda n=n: gemm(n, True)))
    for b in ((1, 16) if quick else (1, 256)):
        L.append(("mlp_b%d" % b, lambda b=b: mlp(b)))
    L.append(("transformer_s128", lambda: transformer(128)))
    L.append(("gpt2_s64", lambda: transformer(64, causal=True)))
    # Batched: attention's batch and head axes then take no one stride (the GEMM's two
    # sets of batch axes).
    L.append(("transformer_s128_b2", lambda: transformer(128, batch=2)))
    L.append(("gpt2_s64_b4", lambda: transformer(64, causal=True, batch=4)))
    for b in ((1, 4) if quick else (1, 32)):
        L.append(("cnn_b%d" % b, lambda b=b: small_cnn(b)))
    rows = 256 if quick else 4096
    L.append(("softmax_%dx1024" % rows, lambda: softmax(rows)))
    L.append(("layernorm_%dx1024" % rows, lambda: layernorm(rows)))
    n = 1 << 18 if quick else 1 << 24
    L.append(("chain_%s" % ("256k" if quick else "16m"), lambda: chain(n)))
    L.append(("add_4", add4))
    if not quick:
        for arch, b in TORCH_NETS:
            nm = "%s_b%d" % (arch.replace("_", ""), b)
            L.append((nm, (lambda a=arch, b=b: ("torch", a, b)) if torch_ok else None))
    return L


def file_hash(paths):
    h = hashlib.sha256()
    for p in sorted(paths):
        with open(p, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:16]


def write_workload(w, out):
    name = w["name"]
    import onnx
    if not os.path.exists(os.path.join(out, name + ".onnx")) or w.get("group") != "convnet":
        onnx.save(w["model"], os.path.join(out, name + ".onnx"))
    fields = dict(name=name, group=w["group"], onnx=name + ".onnx", accyb=name + ".accyb")
    ins = []
    for i, a in enumerate(w["inputs"]):
        fn = "%s.in%d.bin" % (name, i)
        np.ascontiguousarray(a, dtype=F32).tofile(os.path.join(out, fn))
        ins.append(fn)
    refs, bounds, atols = [], [], []
    for i, r in enumerate(w["refs"]):
        fn = "%s.ref%d.bin" % (name, i)
        r32 = np.asarray(r).astype(F32)
        r32.tofile(os.path.join(out, fn))
        refs.append(fn)
        tol = w["tol"]
        if "bound" in tol:
            bn = "%s.bound%d.bin" % (name, i)
            np.asarray(tol["bound"][i], dtype=F32).tofile(os.path.join(out, bn))
            bounds.append(bn)
            atols.append(0.0)
        elif "atol_scale" in tol:
            atols.append(tol["atol_scale"] * float(np.max(np.abs(r))))
        else:
            atols.append(tol["atol"])
    fields["inputs"] = ",".join(ins)
    fields["refs"] = ",".join(refs)
    if bounds:
        fields["bounds"] = ",".join(bounds)
    fields["atol"] = ",".join("%.6g" % a for a in atols)
    fields["rtol"] = "%.6g" % w["tol"].get("rtol", 0.0)
    fields["flops"] = str(w.get("flops", count_flops(w["model"])))
    fields["bytes"] = str(w.get("bytes", model_bytes(w)))
    if "gemm" in w:
        fields["gemm"] = "%d,%d,%d" % w["gemm"]
        fields["const_b"] = "1" if name.endswith("_const") else "0"
    return fields


def manifest_line(fields):
    return " ".join("%s=%s" % (k, v) for k, v in fields.items())


def convert(out, names):
    """Child process: converts NAME.onnx -> NAME.accyb with accy's importer."""
    import accy.onnx
    status = 0
    for name in names:
        src, dst = os.path.join(out, name + ".onnx"), os.path.join(out, name + ".accyb")
        if os.path.exists(dst):
            os.remove(dst)
        try:
            wire = accy.onnx.import_model(src)
        except Exception as e:  # reported, the harness marks the workload failed
            print("models.py: %s: accy import failed: %s: %s" % (name, type(e).__name__, e),
                  file=sys.stderr)
            status = 1
            continue
        with open(dst + ".tmp", "wb") as f:
            f.write(wire)
        os.replace(dst + ".tmp", dst)
    return status


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--only", default=None, help="regex on workload names")
    ap.add_argument("--convert", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.convert is not None:
        sys.exit(convert(args.out, args.convert))

    torch_ok = False
    if not args.no_torch and not args.quick:
        torch_ok = subprocess.run([sys.executable, "-c", "import torch, torchvision"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
    here = os.path.abspath(__file__)
    importer_dir = os.path.join(os.path.dirname(os.path.dirname(here)), "python", "accy", "onnx")
    gen_key = file_hash([here]) + ("q" if args.quick else "f")
    imp_key = file_hash([os.path.join(importer_dir, f) for f in os.listdir(importer_dir)
                         if f.endswith(".py")]) if os.path.isdir(importer_dir) else "none"

    man_path = os.path.join(args.out, "manifest.txt")
    old = {}
    if os.path.exists(man_path):
        with open(man_path) as f:
            for line in f:
                kv = dict(p.split("=", 1) for p in line.split() if "=" in p)
                if "name" in kv:
                    old[kv["name"]] = kv
    lines, to_convert = [], []
    for name, thunk in workload_list(args.quick, torch_ok):
        if args.only and not re.search(args.only, name):
            if name in old:
                lines.append(manifest_line(old[name]))
            continue
        if thunk is None:
            lines.append("name=%s skip=no_torchvision" % name)
            continue
        prev = old.get(name)
        if prev and prev.get("gen_key") == gen_key and all(
                os.path.exists(os.path.join(args.out, f))
                for k in ("inputs", "refs") for f in prev[k].split(",")):
            fields = prev
        else:
            print("models.py: generating %s" % name, file=sys.stderr)
            w = thunk()
            if isinstance(w, tuple):
                w = torch_net(w[1], w[2], os.path.join(args.out, name + ".onnx"))
            fields = write_workload(w, args.out)
            fields["gen_key"] = gen_key
            fields["imp_key"] = ""
        if fields.get("imp_key") != imp_key or not os.path.exists(os.path.join(args.out, name + ".accyb")):
            to_convert.append(name)
            fields["imp_key"] = imp_key
        lines.append(manifest_line(fields))
    if to_convert:
        print("models.py: converting %d model(s) with accy.onnx" % len(to_convert), file=sys.stderr)
        rc = subprocess.run([sys.executable, here, "--out", args.out, "--convert"] + to_convert).returncode
        if rc != 0:  # keep going: the harness reports the missing .accyb as a failure
            for i, line in enumerate(lines):
                kv = dict(p.split("=", 1) for p in line.split() if "=" in p)
                if kv.get("name") in to_convert and not os.path.exists(
                        os.path.join(args.out, kv["name"] + ".accyb")):
                    kv["imp_key"] = ""
                    lines[i] = manifest_line(kv)
    with open(man_path + ".tmp", "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(man_path + ".tmp", man_path)


if __name__ == "__main__":
    main()
