"""The conversion context shared by all converters.

Tensor: a value of the program being built. Either a known constant
(.const is a numpy array; .id is None until some op needs it as a node) or a
builder value (.id). Always has .dtype (accy dtype name, e.g. "f32") and a
static .shape.

Context: values by ONNX name, the builder, and helpers that emit accy ops and
return Tensors: numpy-style broadcasting for binary ops, broadcast_to, cast,
scalars, reductions with keepdims, dot_general, and so on. Helpers skip no-op
work (a reshape to the same shape returns its operand).

Node: one ONNX node as a converter sees it: typed inputs, constant inputs,
attributes (reading an attribute marks it handled; any attribute left unread
makes the importer refuse the node, naming the attribute).
"""

import numpy as np
from onnx import helper

from .. import builder as _builder
from .. import dtypes as _dtypes
from .errors import ConversionError, NeedsConstantInput, UnsupportedError

#: ONNX TensorProto element type -> accy dtype name.
ONNX_DTYPES = {1: "f32", 2: "u8", 3: "i8", 4: "u16", 5: "i16", 6: "i32", 7: "i64", 9: "bool",
               10: "f16", 11: "f64", 12: "u32", 13: "u64", 16: "bf16"}
ONNX_DTYPE_NAMES = {0: "UNDEFINED", 8: "STRING", 14: "COMPLEX64", 15: "COMPLEX128",
                    # IR 9 (opset 19) and IR 10 (opset 21) additions
                    17: "FLOAT8E4M3FN", 18: "FLOAT8E4M3FNUZ", 19: "FLOAT8E5M2",
                    20: "FLOAT8E5M2FNUZ", 21: "UINT4", 22: "INT4", 23: "FLOAT4E2M1"}

FLOATS = ("f32", "f64", "f16", "bf16")
SIGNED = ("i8", "i16", "i32", "i64")
UNSIGNED = ("u8", "u16", "u32", "u64")
INTS = SIGNED + UNSIGNED


def onnx_dtype(elem_type, what="tensor"):
    """accy dtype name of an ONNX element type, or UnsupportedError."""
    if elem_type in ONNX_DTYPES:
        return ONNX_DTYPES[elem_type]
    raise UnsupportedError("%s has element type %s, which accy does not have"
                           % (what, ONNX_DTYPE_NAMES.get(elem_type, str(elem_type))))


class Tensor:
    __slots__ = ("id", "dtype", "shape", "const", "name")

    def __init__(self, dtype, shape, id=None, const=None, name=None):
        self.id = id
        self.dtype = dtype
        self.shape = tuple(int(d) for d in shape)
        self.const = const
        self.name = name

    @classmethod
    def constant(cls, array, dtype=None, name=None):
        """A known constant. |dtype| (accy name) defaults from the array's
        numpy dtype; bf16 constants are uint16 arrays of bits."""
        a = np.asarray(array)
        if dtype is None:
            dtype = _dtypes.name(a.dtype)
        else:
            a = a.astype(_dtypes.to_numpy(dtype), copy=False)
        if not a.flags.c_contiguous:
            a = np.array(a, order="C")
        return cls(dtype, a.shape, const=a, name=name)

    @property
    def rank(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def is_const(self):
        return self.const is not None

    def __repr__(self):
        kind = "const" if self.is_const else "%%%s" % self.id
        return "Tensor(%s %s%s)" % (kind, self.dtype, list(self.shape))


def broadcast_shapes(*shapes):
    """numpy's broadcasting of shapes, or ValueError."""
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        d = 1
        for s in shapes:
            j = i - (rank - len(s))
            if j < 0:
                continue
            e = s[j]
            if e == 1:
                continue
            if d != 1 and e != d:
                raise ValueError("shapes %s do not broadcast" % (list(map(list, shapes)),))
            d = e
        out.append(d)
    return tuple(out)


def normalize_axis(axis, rank, node=None):
    a = int(axis)
    if a < -rank or a >= max(rank, 1) and not (rank == 0 and a == 0):
        raise ConversionError("axis %d out of range for rank %d" % (a, rank),
                              *(node.where() if node else ()))
    return a + rank if a < 0 else a


class Node:
    """One ONNX node, as a converter sees it."""

    def __init__(self, ctx, proto):
        self.ctx = ctx
        self.proto = proto
        self.op_type = proto.op_type
        self.name = proto.name
        self.inputs = list(proto.input)
        self.outputs = list(proto.output)
        self._attrs = {a.name: a for a in proto.attribute}
        self._used = set()

    def where(self):
        return (self.name, self.op_type)

    def error(self, message, attribute=None):
        return ConversionError(message, self.name, self.op_type, attribute)

    def unsupported(self, message, attribute=None):
        """Returns (to raise) an UnsupportedError about this node."""
        return UnsupportedError(message, self.name, self.op_type, attribute)

    # ---- attributes ----------------------------------------------------------
    def has_attr(self, name):
        return name in self._attrs

    def attr(self, name, default=None):
        """The attribute's value (ints, floats, strings as str, lists as
        lists, tensors as numpy arrays), or |default| when absent."""
        self._used.add(name)
        a = self._attrs.get(name)
        if a is None:
            return default
        if a.type == a.TENSOR:
            from onnx import numpy_helper
            return numpy_helper.to_array(a.t)
        if a.type in (a.GRAPH, a.GRAPHS, a.SPARSE_TENSOR, a.SPARSE_TENSORS, a.TENSORS):
            raise self.unsupported("attribute of this kind is not supported", name)
        v = helper.get_attribute_value(a)
        if isinstance(v, bytes):
            v = v.decode("utf-8", "replace")
        elif isinstance(v, list) and v and isinstance(v[0], bytes):
            v = [s.decode("utf-8", "replace") for s in v]
        return v

    def ignore_attrs(self, *names):
        """Marks attributes as handled without reading them (e.g. hints)."""
        self._used.update(names)

    def unused_attrs(self):
        return [n for n in self._attrs if n not in self._used]

    # ---- inputs --------------------------------------------------------------
    def has_input(self, i):
        return i < len(self.inputs) and self.inputs[i] != ""

    def input(self, i, required=True):
        """Input |i| as a Tensor; None when absent and not |required|."""
        if not self.has_input(i):
            if required:
                raise self.error("input %d is required" % i)
            return None
        return self.ctx.value(self.inputs[i])

    def const_input(self, i, default=None, required=False):
        """The numpy value of input |i|, which must be known at import time
        (an initializer, a Constant, or folded); |default| when absent."""
        if not self.has_input(i):
            if required:
                raise self.error("input %d is required" % i)
            return default
        t = self.ctx.value(self.inputs[i])
        if t.const is None:
            name = self.inputs[i]
            sources = self.ctx.sources.get(name)
            if sources:
                # Computed from graph inputs only: freezing one may fold it.
                raise NeedsConstantInput(sorted(sources)[0], self.name, self.op_type)
            raise self.unsupported("input %d (%r) must be known at import time: it decides "
                                   "a static shape" % (i, name))
        return t.const


class Context:
    """Values by name and op-emitting helpers over an accy.Builder."""

    def __init__(self, opset, builder=None):
        self.opset = opset
        self.b = builder if builder is not None else _builder.Builder()
        self.values = {}
        self.graph_inputs = set()
        #: value name -> the graph inputs it is computed from (non-constants)
        self.sources = {}
        self._n_consts = 0

    # ---- values --------------------------------------------------------------
    def value(self, name):
        try:
            return self.values[name]
        except KeyError:
            raise ConversionError("value %r is used before it is defined" % name) from None

    def set(self, name, tensor):
        self.values[name] = tensor

    def id(self, t):
        """The builder id of |t|, adding a constant node for a known value."""
        if t.id is None:
            self._n_consts += 1
            name = (t.name or "c%d" % self._n_consts).encode("utf-8")[:1000].decode(
                "utf-8", "ignore") or "c%d" % self._n_consts
            t.id = self.b.constant(name, t.const, t.dtype)
        return t.id

    def _t(self, vid):
        dt, shape = self.b.type(vid)
        return Tensor(dt, shape, id=vid)

    # ---- generic ops ---------------------------------------------------------
    def op(self, op, operands, attrs=(), result=None):
        """Emits |op| over Tensors |operands| and returns the result Tensor."""
        return self._t(self.b.op(op, [self.id(t) for t in operands], attrs, result))

    def constant(self, array, dtype=None, name=None):
        return Tensor.constant(array, dtype, name)

    def scalar(self, value, dtype):
        """A rank-0 constant of accy dtype |dtype|."""
        if dtype == "bf16":
            return Tensor.constant(_dtypes.f32_to_bf16(np.float32(value)).reshape(()), "bf16")
        return Tensor.constant(np.array(value, dtype=_dtypes.to_numpy(dtype)), dtype)

    def full(self, shape, value, dtype):
        return self.broadcast_to(self.scalar(value, dtype), shape)

    def unary(self, op, x):
        return self.op(op, [x])

    def binary(self, op, a, b):
        """Elementwise |op| with numpy broadcasting of the operands."""
        try:
            shape = broadcast_shapes(a.shape, b.shape)
        except ValueError as e:
            raise ConversionError(str(e)) from None
        return self.op(op, [self.broadcast_to(a, shape), self.broadcast_to(b, shape)])

    def add(self, a, b):
        return self.binary("add", a, b)

    def sub(self, a, b):
        return self.binary("subtract", a, b)

    def mul(self, a, b):
        return self.binary("multiply", a, b)

    def div(self, a, b):
        return self.binary("divide", a, b)

    def compare(self, direction, a, b):
        shape = broadcast_shapes(a.shape, b.shape)
        return self.op("compare", [self.broadcast_to(a, shape), self.broadcast_to(b, shape)],
                       [_builder.COMPARE[direction]])

    def select(self, pred, a, b):
        """pred ? a : b with numpy broadcasting of all three."""
        shape = broadcast_shapes(pred.shape, a.shape, b.shape)
        return self.op("select", [self.broadcast_to(pred, shape), self.broadcast_to(a, shape),
                                  self.broadcast_to(b, shape)])

    def cast(self, x, dtype):
        if x.dtype == dtype:
            return x
        return self.op("convert", [x], (), dtype)

    def reshape(self, x, shape):
        shape = tuple(int(d) for d in shape)
        if x.shape == shape:
            return x
        return self.op("reshape", [x], (), (x.dtype, shape))

    def broadcast_in_dim(self, x, shape, dims):
        shape = tuple(int(d) for d in shape)
        if x.shape == shape and list(dims) == list(range(len(shape))):
            return x
        return self.op("broadcast_in_dim", [x], list(dims), (x.dtype, shape))

    def broadcast_to(self, x, shape):
        """numpy.broadcast_to: |x|'s axes align with the trailing axes."""
        shape = tuple(int(d) for d in shape)
        if x.shape == shape:
            return x
        off = len(shape) - x.rank
        if off < 0:
            raise ConversionError("cannot broadcast %s to %s" % (list(x.shape), list(shape)))
        for i, d in enumerate(x.shape):
            if d != 1 and d != shape[off + i]:
                raise ConversionError("cannot broadcast %s to %s"
                                      % (list(x.shape), list(shape)))
        return self.broadcast_in_dim(x, shape, range(off, len(shape)))

    def transpose(self, x, perm):
        perm = [int(p) for p in perm]
        if perm == list(range(x.rank)):
            return x
        return self.op("transpose", [x], perm)

    def slice(self, x, start, limit, stride=None):
        if stride is None:
            stride = [1] * x.rank
        if list(start) == [0] * x.rank and list(limit) == list(x.shape) and \
                list(stride) == [1] * x.rank:
            return x
        return self.op("slice", [x], list(start) + list(limit) + list(stride))

    def concat(self, xs, axis):
        if len(xs) == 1:
            return xs[0]
        return self.op("concatenate", xs, [axis])

    def pad(self, x, low, high, interior=None, value=0):
        if interior is None:
            interior = [0] * x.rank
        return self.op("pad", [x, self.scalar(value, x.dtype)],
                       list(low) + list(high) + list(interior))

    def iota(self, shape, dim, dtype):
        return self.op("iota", [], [dim], (dtype, tuple(shape)))

    def reduce(self, kind, x, axes, keepdims=False):
        """reduce |kind| ("sum", "max", ...) over |axes|; keepdims keeps them
        as 1s."""
        axes = sorted(set(int(a) for a in axes))
        r = self.op("reduce", [x], [_builder.REDUCE[kind]] + axes)
        if keepdims:
            r = self.reshape(r, [1 if i in axes else d for i, d in enumerate(x.shape)])
        return r

    def dot_general(self, a, b, lhs_batch=(), rhs_batch=(), lhs_contract=(), rhs_contract=()):
        attrs = [len(lhs_batch)] + list(lhs_batch) + list(rhs_batch) + \
            [len(lhs_contract)] + list(lhs_contract) + list(rhs_contract)
        return self.op("dot_general", [a, b], attrs)

    def gather(self, x, indices, axis):
        return self.op("gather", [x, indices], [axis])
