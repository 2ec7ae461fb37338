"""ONNX ModelProto -> accy wire bytes."""

import warnings

import numpy as np
import onnx
from onnx import numpy_helper

from .. import dtypes as _dtypes
from .. import errors as _errors
from .. import session as _session
from . import registry
from .builder_errors import wrap_builder_error
from .context import Context, Node, Tensor, onnx_dtype
from .errors import ConversionError, NeedsConstantInput, UnsupportedError

#: Constant folding: a node whose inputs are all known and hold at most this
#: many elements in total is evaluated at import time (by accy itself, on a
#: small program of that node alone) and its outputs become constants.
FOLD_MAX_ELEMENTS = 1 << 16

#: The opsets the importer accepts for the default domain (converters refuse
#: older forms they do not implement with min_opset or by attribute).
MIN_OPSET, MAX_OPSET = 1, 21


def _load(model):
    if isinstance(model, onnx.ModelProto):
        return model
    if isinstance(model, (bytes, bytearray, memoryview)):
        data, what = bytes(model), "the bytes given"
    else:
        with open(model, "rb") as f:  # OSError: no such file, ...
            data = f.read()
        what = str(model)
    m = onnx.ModelProto()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # protobuf's own warnings about the bytes
            m.ParseFromString(data)
    except Exception as e:  # protobuf's DecodeError (its module differs by version)
        raise ConversionError("not an ONNX model: %s (%s)" % (what, e)) from None
    if not m.HasField("graph") or not m.opset_import:
        # protobuf parses many byte strings (an empty file, some text) as a
        # message with unknown fields: without a graph and opsets it is not
        # a model
        raise ConversionError("not an ONNX model: %s (no graph or no opset_import)" % what)
    return m


def _initializer(t):
    dtype = onnx_dtype(t.data_type, "initializer %r" % t.name)
    a = numpy_helper.to_array(t)
    if dtype == "bf16" and a.dtype != np.uint16:
        a = _dtypes.f32_to_bf16(a.astype(np.float32))
    return Tensor.constant(a, dtype, name=t.name)


class _Importer:
    def __init__(self, model, input_shapes, constant_inputs):
        self.model = model
        self.input_shapes = {k: tuple(int(d) for d in v) for k, v in (input_shapes or {}).items()}
        self.constant_inputs = dict(constant_inputs or {})
        self.opset = None
        for imp in model.opset_import:
            if imp.domain in ("", "ai.onnx"):
                self.opset = imp.version
        if self.opset is None:
            raise UnsupportedError("the model imports no default-domain (ai.onnx) opset")
        if not MIN_OPSET <= self.opset <= MAX_OPSET:
            raise UnsupportedError("opset %d is outside the supported %d..%d"
                                   % (self.opset, MIN_OPSET, MAX_OPSET))
        self._fold_session = None
        #: rank overrides of static declarations, added to a later error
        self.rank_notes = []

    def close(self):
        if self._fold_session is not None:
            self._fold_session.close()
            self._fold_session = None

    # ---- graph inputs ----------------------------------------------------------
    def _check_input_shapes(self):
        """input_shapes must name graph inputs (not initializers) and give the
        rank the model declares."""
        graph = self.model.graph
        inits = set(i.name for i in graph.initializer)
        inputs = [vi for vi in graph.input if vi.name not in inits]
        known = [vi.name for vi in inputs]
        for what, names in (("input shape", self.input_shapes),
                            ("constant input", self.constant_inputs)):
            for name in names:
                if name not in known:
                    raise ConversionError(
                        "%s given for %r, which is not a graph input of the model; its inputs "
                        "are: %s" % (what, name, ", ".join(repr(n) for n in known) or "none"))
        for vi in inputs:
            if vi.name not in self.input_shapes or not vi.type.HasField("tensor_type"):
                continue
            tt = vi.type.tensor_type
            if not tt.HasField("shape"):
                continue  # the model declares no rank: any shape is taken
            given = self.input_shapes[vi.name]
            declared = [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?")
                        for d in tt.shape.dim]
            if len(given) != len(declared):
                msg = "input shape for %r has rank %d (%s) but the model declares rank %d (%s)" \
                    % (vi.name, len(given), ",".join(str(d) for d in given) or "scalar",
                       len(declared), ",".join(str(d) for d in declared) or "scalar")
                if any(not isinstance(d, int) for d in declared):
                    # filling in symbolic dimensions: the rank must agree
                    raise ConversionError(msg)
                # a fully static declaration may be overridden (the ONNX test
                # data do so); should the conversion fail, the error says so
                self.rank_notes.append(msg)

    def _parameter(self, ctx, vi):
        name = vi.name
        tt = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
        if tt is None:
            raise UnsupportedError("graph input %r is not a tensor (sequences, maps and "
                                   "optionals are not supported)" % name)
        dtype = onnx_dtype(tt.elem_type, "graph input %r" % name)
        if name in self.input_shapes:
            shape = self.input_shapes[name]
        else:
            if not tt.HasField("shape"):
                raise ConversionError("graph input %r has no shape: give it with "
                                      "--input-shape %s=D0,D1,..." % (name, name))
            shape = []
            for i, d in enumerate(tt.shape.dim):
                if d.HasField("dim_value") and d.dim_value >= 0:
                    shape.append(d.dim_value)
                else:
                    raise ConversionError("graph input %r: dimension %d (%s) is not static: "
                                          "give the shape with --input-shape %s=D0,D1,..."
                                          % (name, i, d.dim_param or "?", name))
        vid = ctx.b.parameter(name, dtype, shape)
        return Tensor(dtype, shape, id=vid, name=name)

    # ---- nodes -------------------------------------------------------------------
    def _run_converter(self, ctx, proto):
        node = Node(ctx, proto)
        if proto.domain not in ("", "ai.onnx"):
            raise node.unsupported("domain %r is not supported" % proto.domain)
        conv = registry.CONVERTERS.get(proto.op_type)
        if conv is None:
            why = registry.REFUSED.get(proto.op_type, "op type is not supported")
            raise node.unsupported("%s (opset %d)" % (why, self.opset))
        if self.opset < conv.min_opset:
            raise node.unsupported("opset %d is older than the converter supports (%d)"
                                   % (self.opset, conv.min_opset))
        if self.opset < 6:
            # Versions 1..5 of many ops carry consumed_inputs, a hint for
            # in-place execution of the Caffe2 era: no effect on the values.
            node.ignore_attrs("consumed_inputs")
        try:
            outs = conv.fn(ctx, node)
        except _errors.Error as e:
            raise wrap_builder_error(e, node) from None
        if isinstance(outs, Tensor):
            outs = [outs]
        outs = list(outs)
        for attr in node.unused_attrs():
            raise node.unsupported("attribute is not supported", attr)
        for i, name in enumerate(node.outputs):
            if name and (i >= len(outs) or outs[i] is None):
                raise node.unsupported("output %d (%r) is not supported" % (i, name))
        return node, outs

    def _foldable(self, ctx, proto):
        conv = registry.CONVERTERS.get(proto.op_type)
        if conv is None or not conv.fold or proto.domain not in ("", "ai.onnx"):
            return False
        total = 0
        for name in proto.input:
            if not name:
                continue
            t = ctx.values.get(name)
            if t is None or t.const is None:
                return False
            total += t.size
        return total <= FOLD_MAX_ELEMENTS

    def _fold(self, ctx, proto):
        """Converts |proto| in a private program whose inputs are its known
        values and runs that program now: the outputs become constants."""
        sub = Context(ctx.opset)
        sub.graph_inputs = ctx.graph_inputs
        sub.sources = ctx.sources
        try:
            for name in proto.input:
                if name:
                    t = ctx.values[name]
                    sub.set(name, Tensor(t.dtype, t.shape, const=t.const, name=t.name))
            node, outs = self._run_converter(sub, proto)
            pending = []
            for i, name in enumerate(node.outputs):
                if name and outs[i].const is None:
                    sub.b.output(outs[i].id, "o%d" % i)
                    pending.append(i)
            if pending:
                if self._fold_session is None:
                    self._fold_session = _session.Session(threads=1)
                try:
                    wire = sub.b.finish()
                    with self._fold_session.compile(wire) as prog:
                        results = prog()
                except _errors.Error as e:
                    raise wrap_builder_error(e, node) from None
                for i, a in zip(pending, results):
                    outs[i] = Tensor.constant(a, outs[i].dtype)
            return node, outs
        finally:
            sub.b.close()

    def run(self):
        registry.load_all()
        self._check_input_shapes()
        graph = self.model.graph
        ctx = Context(self.opset)
        for init in graph.initializer:
            ctx.set(init.name, _initializer(init))
        for si in graph.sparse_initializer:
            raise UnsupportedError("sparse initializer %r is not supported" % si.values.name)
        for vi in graph.input:
            if vi.name in ctx.values:
                continue  # an initializer listed as an input (IR < 4): a constant
            if vi.name in self.constant_inputs:
                tt = vi.type.tensor_type
                dtype = onnx_dtype(tt.elem_type, "graph input %r" % vi.name)
                a = self.constant_inputs[vi.name]
                ctx.set(vi.name, Tensor.constant(np.asarray(a), dtype, name=vi.name))
                continue
            ctx.graph_inputs.add(vi.name)
            ctx.sources[vi.name] = frozenset([vi.name])
            try:
                ctx.set(vi.name, self._parameter(ctx, vi))
            except _errors.Error as e:
                raise ConversionError("graph input %r: %s" % (vi.name, e.cause)) from None
        for proto in graph.node:
            if self._foldable(ctx, proto):
                node, outs = self._fold(ctx, proto)
            else:
                node, outs = self._run_converter(ctx, proto)
            src = frozenset().union(*(ctx.sources.get(n, ()) for n in proto.input if n))
            for name, t in zip(node.outputs, outs):
                if name:
                    ctx.set(name, t)
                    if t.const is None and src:
                        ctx.sources[name] = src
        if not graph.output:
            raise ConversionError("the graph has no outputs")
        for vi in graph.output:
            t = ctx.value(vi.name)
            try:
                ctx.b.output(ctx.id(t), vi.name)
            except _errors.Error as e:
                raise ConversionError("graph output %r: %s" % (vi.name, e.cause)) from None
        try:
            return ctx.b.finish()
        except _errors.Error as e:
            raise ConversionError("the converted program does not verify: %s" % e.cause) from None
        finally:
            ctx.b.close()


def import_model(model, input_shapes=None, constant_inputs=None):
    """Converts an ONNX model (path, bytes or ModelProto) to accy wire bytes.

    input_shapes: {input name: shape} for inputs whose shapes the model does
    not fix. constant_inputs: {input name: array} freezes graph inputs to
    known values (their parameters disappear from the program), for inputs
    that decide shapes (Reshape's shape, Slice's starts ...).
    Raises UnsupportedError (an op, attribute or type accy does not convert)
    or ConversionError (anything else wrong with the model)."""
    imp = _Importer(_load(model), input_shapes, constant_inputs)
    try:
        return imp.run()
    except NeedsConstantInput:
        raise
    except ConversionError as e:
        if imp.rank_notes:
            note = " (note: %s)" % "; ".join(imp.rank_notes)
            e.args = (str(e) + note,) + e.args[1:]
            e.detail = (e.detail or "") + note
        raise
    finally:
        imp.close()
