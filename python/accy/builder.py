"""Builder: constructs programs with the library's builder (accy_builder_*).

The wire bytes come from the C encoder (Builder.finish); there is no Python
writer of the wire format. Values are integer ids returned by each call.
Attribute layouts are those of docs/ops.md and src/ir/ir.h.
"""

import ctypes

import numpy as np

from . import _lib, dtypes, errors

_L = _lib.lib

#: op name -> op number (include/accy/ops.h; ABI, fixed).
OPS = {
    "parameter": 1, "constant": 2,
    "abs": 10, "negate": 11, "sign": 12, "floor": 13, "ceil": 14, "round_nearest_even": 15,
    "sqrt": 16, "rsqrt": 17, "exp": 18, "expm1": 19, "log": 20, "log1p": 21, "logistic": 22,
    "tanh": 23, "erf": 24, "sin": 25, "cos": 26, "tan": 27, "not": 28, "is_finite": 29,
    "add": 40, "subtract": 41, "multiply": 42, "divide": 43, "remainder": 44, "power": 45,
    "maximum": 46, "minimum": 47, "atan2": 48, "and": 49, "or": 50, "xor": 51,
    "shift_left": 52, "shift_right_arithmetic": 53, "shift_right_logical": 54, "compare": 55,
    "select": 60, "clamp": 61, "convert": 62,
    "reshape": 70, "broadcast_in_dim": 71, "transpose": 72, "slice": 73, "pad": 74,
    "concatenate": 75, "reverse": 76, "iota": 77, "gather": 78, "dynamic_slice": 79,
    "dynamic_update_slice": 80, "scatter": 81,
    "reduce": 90, "argmax": 91, "argmin": 92, "sort": 93, "argsort": 94,
    "dot_general": 100, "convolution": 101, "reduce_window": 102,
}

#: compare directions (attrs[0] of compare).
COMPARE = {"EQ": 0, "NE": 1, "LT": 2, "LE": 3, "GT": 4, "GE": 5}
#: reduce kinds (attrs[0] of reduce and reduce_window).
REDUCE = {"sum": 0, "product": 1, "max": 2, "min": 3, "and": 4, "or": 5}
#: scatter modes (attrs[0] of scatter; wire 1.1).
SCATTER = {"replace": 0, "add": 1, "multiply": 2, "max": 3, "min": 4}


def _dims(shape):
    shape = tuple(int(d) for d in shape)
    if len(shape) > _lib.MAX_RANK:
        raise errors.make(1, "rank %d exceeds the maximum of %d" % (len(shape), _lib.MAX_RANK),
                          "builder")
    return len(shape), (ctypes.c_int64 * max(len(shape), 1))(*shape)


def _op_code(op):
    if isinstance(op, str):
        try:
            return OPS[op]
        except KeyError:
            raise ValueError("accy: unknown op %r" % op) from None
    return int(op)


class Builder:
    """Wraps accy_builder. Failing calls raise accy.Error (INVALID_PROGRAM with
    the verifier's cause) and leave the builder as it was."""

    def __init__(self):
        ptr = ctypes.c_void_p()
        errors.check(_L.accy_builder_create(ctypes.byref(ptr)), "accy_builder_create")
        self._ptr = ptr

    def _p(self):
        if self._ptr is None:
            raise ValueError("accy: the builder is closed")
        return self._ptr

    def close(self):
        if self._ptr is not None:
            _L.accy_builder_destroy(self._ptr)
            self._ptr = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def parameter(self, name, dtype, shape):
        rank, dims = _dims(shape)
        out = ctypes.c_uint32()
        errors.check(_L.accy_builder_parameter(self._p(), name.encode(), dtypes.code(dtype),
                                               rank, dims, ctypes.byref(out)),
                     "accy_builder_parameter")
        return out.value

    def constant(self, name, array, dtype=None):
        """Adds a constant holding |array| (converted to |dtype| when given;
        a uint16 array with dtype="bf16" is taken as raw bf16 bits)."""
        if dtype is None:
            a = np.asarray(array)
            code = dtypes.code(a.dtype)
        else:
            code = dtypes.code(dtype)
            a = np.asarray(array, dtype=dtypes.to_numpy(code))
        a = np.array(a, order="C", copy=not a.flags.c_contiguous)
        if a.dtype.byteorder == ">":
            a = a.astype(a.dtype.newbyteorder("<"))
        rank, dims = _dims(a.shape)
        out = ctypes.c_uint32()
        data = a.tobytes()
        errors.check(_L.accy_builder_constant(self._p(), name.encode(), code, rank, dims,
                                              data, len(data), ctypes.byref(out)),
                     "accy_builder_constant")
        return out.value

    def op(self, op, operands=(), attrs=(), result=None):
        """Adds op |op| (name or number). |result| is None (inferred), a dtype
        (for convert/argmax/argmin), or (dtype, shape)."""
        ops = [int(o) for o in operands]
        c_ops = (ctypes.c_uint32 * max(len(ops), 1))(*ops)
        at = [int(a) for a in attrs]
        c_at = (ctypes.c_int64 * max(len(at), 1))(*at)
        rtype = None
        if result is not None:
            rtype = _lib.Type()
            if isinstance(result, tuple) and len(result) == 2 and \
                    not isinstance(result[1], (str, int)):
                dt, shape = result
                rank, dims = _dims(shape)
                rtype.rank = rank
                for i in range(rank):
                    rtype.dims[i] = dims[i]
            else:
                dt = result
            rtype.dtype = dtypes.code(dt)
        out = ctypes.c_uint32()
        errors.check(_L.accy_builder_op(self._p(), _op_code(op), c_ops, len(ops), c_at, len(at),
                                        ctypes.byref(rtype) if rtype is not None else None,
                                        ctypes.byref(out)),
                     "accy_builder_op(%s)" % op)
        return out.value

    def unary(self, op, x):
        return self.op(op, [x])

    def binary(self, op, x, y):
        return self.op(op, [x, y])

    def compare(self, direction, x, y):
        d = COMPARE[direction.upper()] if isinstance(direction, str) else int(direction)
        return self.op("compare", [x, y], [d])

    def convert(self, x, dtype):
        return self.op("convert", [x], (), dtype)

    def reshape(self, x, shape):
        return self.op("reshape", [x], (), (self.type(x)[0], tuple(shape)))

    def output(self, value, name):
        errors.check(_L.accy_builder_output(self._p(), int(value), name.encode()),
                     "accy_builder_output")

    def type(self, value):
        """(accy dtype name, shape tuple) of |value|."""
        t = _lib.Type()
        errors.check(_L.accy_builder_type(self._p(), int(value), ctypes.byref(t)),
                     "accy_builder_type")
        return dtypes.NAMES.get(t.dtype, "?"), tuple(int(t.dims[i]) for i in range(t.rank))

    def finish(self):
        """Verifies the program and returns its wire bytes."""
        buf = ctypes.c_void_p()
        size = ctypes.c_size_t()
        errors.check(_L.accy_builder_finish(self._p(), ctypes.byref(buf), ctypes.byref(size)),
                     "accy_builder_finish")
        try:
            return ctypes.string_at(buf, size.value)
        finally:
            _L.accy_free(buf)
