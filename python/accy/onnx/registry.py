"""The registry of ONNX op converters, keyed by op type.

A converter module (ops_*.py in this package; every such module is imported
automatically) registers functions with the decorator:

    @converter("Relu")
    def relu(ctx, node):
        x = node.input(0)
        return ctx.binary("maximum", x, ctx.scalar(0, x.dtype))

A converter receives the Context and the Node and returns the node's output
Tensors (one Tensor or a list, in output order). See docs/onnx.md.
"""

import importlib
import os
import pkgutil

#: op type -> Converter
CONVERTERS = {}

#: ops of opsets up to 21 that are deliberately not converted -> why (the
#: message of the UnsupportedError; other unknown ops say "not supported")
REFUSED = {
    "DeformConv": "DeformConv (opset 19) samples the input at data-dependent offsets, "
                  "which accy's convolution cannot express",
    "ImageDecoder": "ImageDecoder decodes image file bytes, which accy has no type for",
    "RegexFullMatch": "strings are not supported",
    "StringConcat": "strings are not supported",
    "StringSplit": "strings are not supported",
    "DFT": "complex values are not supported",
    "STFT": "complex values are not supported",
    "OptionalHasElement": "optionals are not supported",
    "OptionalGetElement": "optionals are not supported",
    "Optional": "optionals are not supported",
}


class Converter:
    __slots__ = ("op_type", "fn", "min_opset", "fold", "module")

    def __init__(self, op_type, fn, min_opset, fold):
        self.op_type = op_type
        self.fn = fn
        self.min_opset = min_opset
        self.fold = fold
        self.module = fn.__module__.rsplit(".", 1)[-1]


def converter(*op_types, min_opset=1, fold=True):
    """Registers the decorated function for each of |op_types| (default ONNX
    domain). min_opset: the oldest opset the converter implements (older
    models are refused as unsupported). fold=False: never constant-fold the
    op even when all its inputs are known (e.g. random ops)."""

    def deco(fn):
        for t in op_types:
            if t in CONVERTERS:
                raise RuntimeError("accy.onnx: op %s registered twice (%s and %s)"
                                   % (t, CONVERTERS[t].fn.__module__, fn.__module__))
            CONVERTERS[t] = Converter(t, fn, min_opset, fold)
        return fn

    return deco


_loaded = False


def load_all():
    """Imports every ops_*.py module of the package (once)."""
    global _loaded
    if _loaded:
        return
    here = os.path.dirname(os.path.abspath(__file__))
    for info in sorted(pkgutil.iter_modules([here]), key=lambda m: m.name):
        if info.name.startswith("ops_"):
            importlib.import_module(__package__ + "." + info.name)
    _loaded = True


def supported_ops():
    """{op type: (module, min_opset)} for every registered converter."""
    load_all()
    return {t: (c.module, c.min_opset) for t, c in sorted(CONVERTERS.items())}
