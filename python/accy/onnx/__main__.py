"""python3 -m accy.onnx MODEL.onnx [-o OUT] [--input-shape name=1,3,224,224] ...

Converts an ONNX model to accy wire bytes (or program text with --text).
The output defaults to MODEL with its suffix replaced: .accyb for wire bytes,
.accy for text (the project's convention: examples/*.accy are text). On any
error it prints the reason (naming the node, op type and attribute) and
writes no output file. --list-ops prints the supported ops as a Markdown
table (docs/onnx.md is generated from it).
"""

import argparse
import os
import sys

import numpy as np


def _shape(spec):
    name, sep, dims = spec.rpartition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError("expected NAME=D0,D1,... got %r" % spec)
    try:
        shape = tuple(int(d) for d in dims.split(",")) if dims.strip() else ()
    except ValueError:
        raise argparse.ArgumentTypeError("bad dimensions in %r" % spec) from None
    if any(d < 0 for d in shape):
        raise argparse.ArgumentTypeError("negative dimension in %r" % spec)
    return name, shape


def _const(spec):
    name, sep, path = spec.rpartition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError("expected NAME=FILE.npy got %r" % spec)
    return name, path


def list_ops():
    from .registry import supported_ops
    ops = supported_ops()
    lines = ["| ONNX op | module | from opset |", "|---|---|---|"]
    for t, (module, min_opset) in ops.items():
        lines.append("| %s | %s | %d |" % (t, module, min_opset))
    lines.append("")
    lines.append("%d ops." % len(ops))
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python3 -m accy.onnx",
        description="Convert an ONNX model to an accy program: wire bytes (.accyb), or "
                    "program text (.accy) with --text.")
    ap.add_argument("model", nargs="?", help="the .onnx file")
    ap.add_argument("-o", "--output",
                    help="the file to write (default: MODEL with its suffix replaced by "
                         ".accyb, or by .accy with --text)")
    ap.add_argument("--text", action="store_true",
                    help="write program text (.accy) instead of wire bytes (.accyb)")
    ap.add_argument("--input-shape", action="append", type=_shape, default=[],
                    metavar="NAME=D0,D1,...", help="static shape of a graph input")
    ap.add_argument("--constant-input", action="append", type=_const, default=[],
                    metavar="NAME=FILE.npy", help="freeze a graph input to a known value")
    ap.add_argument("--list-ops", action="store_true", help="print the supported ops table")
    args = ap.parse_args(argv)
    if args.list_ops:
        print(list_ops())
        return 0
    if not args.model:
        ap.error("MODEL is required")
    if not args.output:
        args.output = os.path.splitext(args.model)[0] + (".accy" if args.text else ".accyb")
        if os.path.abspath(args.output) == os.path.abspath(args.model):
            ap.error("the default output %s is the model itself: give -o OUT" % args.output)

    import accy
    from . import import_model
    from .errors import ConversionError
    try:
        consts = {n: np.load(p) for n, p in args.constant_input}
        wire = import_model(args.model, dict(args.input_shape), consts)
    except (ConversionError, OSError, accy.Error) as e:
        print("accy.onnx: error: %s" % e, file=sys.stderr)
        return 1
    except Exception as e:  # a bug of a converter, for instance
        print("accy.onnx: error: %s: %s" % (type(e).__name__, e), file=sys.stderr)
        return 1
    data = accy.disassemble(wire).encode() if args.text else wire
    tmp = args.output + ".tmp%d" % os.getpid()
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, args.output)
    except OSError as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        print("accy.onnx: error: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
