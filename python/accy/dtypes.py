"""accy element types (include/accy/types.h) and their numpy counterparts.

bf16 has no numpy dtype: a bf16 tensor crosses the binding as a uint16 array
holding the raw bf16 bits (TensorInfo.is_bf16 says so). bf16_to_f32 and
f32_to_bf16 convert such arrays.
"""

import numpy as np

#: accy dtype name -> number (ABI, fixed).
DTYPES = {"f32": 1, "f64": 2, "f16": 3, "bf16": 4, "i8": 5, "i16": 6, "i32": 7, "i64": 8,
          "u8": 9, "u16": 10, "u32": 11, "u64": 12, "bool": 13}
NAMES = {v: k for k, v in DTYPES.items()}

_TO_NUMPY = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": np.uint16,
             "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
             "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
             "bool": np.bool_}
_FROM_NUMPY = {np.dtype(v): k for k, v in _TO_NUMPY.items() if k not in ("bf16",)}


def code(dtype):
    """The accy dtype number of |dtype|: an accy name ("f32", "bf16"), a number,
    or anything numpy.dtype() takes (uint16 maps to u16, never to bf16)."""
    if isinstance(dtype, str) and dtype in DTYPES:
        return DTYPES[dtype]
    if isinstance(dtype, int) and not isinstance(dtype, bool):
        if dtype in NAMES:
            return dtype
        raise ValueError("accy: unknown dtype number %d" % dtype)
    try:
        nd = np.dtype(dtype)
    except TypeError:
        raise ValueError("accy: unknown dtype %r" % (dtype,)) from None
    nd = nd.newbyteorder("=") if nd.byteorder == ">" else nd
    if nd not in _FROM_NUMPY:
        raise ValueError("accy: numpy dtype %s has no accy element type" % nd)
    return DTYPES[_FROM_NUMPY[nd]]


def name(dtype):
    return NAMES[code(dtype)]


def to_numpy(dtype):
    """The numpy dtype that holds elements of accy |dtype| (uint16 for bf16)."""
    return np.dtype(_TO_NUMPY[NAMES[code(dtype)]])


def bf16_to_f32(bits):
    """uint16 array of bf16 bits -> float32 array (exact)."""
    bits = np.asarray(bits, dtype=np.uint16)
    return np.asarray(bits.astype(np.uint32) << np.uint32(16)).view(np.float32)


def f32_to_bf16(x):
    """float32 array -> uint16 array of bf16 bits, rounded to nearest even
    (NaN stays a quiet NaN of the same sign)."""
    x = np.array(x, dtype=np.float32, order="C")
    u = x.view(np.uint32).astype(np.uint64)
    k16, one = np.uint64(16), np.uint64(1)
    rounded = ((u + np.uint64(0x7FFF) + ((u >> k16) & one)) >> k16).astype(np.uint16)
    nan = np.isnan(x)
    if nan.any():
        rounded = np.where(nan, ((u >> k16) | np.uint64(0x40)).astype(np.uint16), rounded)
    return rounded
