"""The conversions Program.invoke(..., copy=True) makes for inputs.

Every conversion either delivers the values exactly or is documented as
rounding, and anything else is refused (docs/python.md, "Conversions"):

- same element type (another byte order, a non-contiguous or misaligned
  array): a C-ordered, aligned, native copy; exact.
- float -> float (f64 -> f32, f32 -> f16, ... and any float -> bf16): rounded
  to nearest even, the library's own convert rule, once (f64 -> bf16 does not
  round twice through f32). NaN stays NaN, infinities stay infinite; a finite
  value that would overflow to infinity is refused.
- integer or bool -> any numeric type: only when every value is exactly
  representable (an int32 7 into i8; 2**24 + 1 into f32 is refused).
- float -> integer: only when every value is integral and in range (no NaN).
- anything -> bool: only when every value is 0 or 1.
- complex, object, string, datetime arrays: refused.

A bf16 input is carried by a uint16 array of bf16 bit patterns: a uint16
array given for a bf16 input is taken as bits, as it is without copy=True;
any other array gets the bf16 bits of its values (rounded as above, never a
uint16 cast of the values).

Refusals raise accy.InvalidBuffer naming the input, the two types and the
first offending value.
"""

import numpy as np

from . import dtypes, errors

_BIG_FLOAT = {"f16": np.finfo(np.float16).max, "f32": np.finfo(np.float32).max,
              "f64": np.finfo(np.float64).max,
              # the largest finite bf16, 0x7F7F
              "bf16": float(np.uint32(0x7F7F0000).view(np.float32))}


def _refuse(what, src, info, why, index=None, value=None):
    at = ""
    if index is not None:
        at = " (first at index %s: %r)" % (list(int(i) for i in index), value)
    to = "bf16" if info.is_bf16 else "%s (%s)" % (info.dtype, info.accy_dtype)
    return errors.make(4, "%s: cannot convert %s to %s: %s%s" % (what, src, to, why, at),
                       "invoke")


def _first(mask):
    idx = np.argwhere(mask)[0]
    return tuple(idx)


def _pyval(a, idx):
    v = a[idx] if a.ndim else a[()]
    return v.item() if hasattr(v, "item") else v


def f64_to_bf16(x):
    """float64 array -> uint16 bf16 bits, rounded to nearest even once:
    rounding to f32 by round-to-odd first keeps the final rounding exact."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        f = x.astype(np.float32)
    f = np.array(f, order="C", copy=True)
    fin = np.isfinite(x)
    back = f.astype(np.float64)
    # round toward zero where rounding went away from zero
    away = fin & (np.abs(back) > np.abs(x))
    f[away] = np.nextafter(f[away], np.float32(0))
    inexact = fin & (f.astype(np.float64) != x)
    bits = f.view(np.uint32)
    bits[inexact] |= np.uint32(1)  # sticky: round to odd
    return dtypes.f32_to_bf16(f)


def convert_input(arr, info, what):
    """|arr| (any array-like) converted for input |info| (a TensorInfo) by
    the rules above: a C-contiguous, aligned, native array of info.dtype."""
    a = np.asarray(arr)
    k = a.dtype.kind
    src = str(a.dtype)
    if k not in "biuf":
        raise _refuse(what, src, info, "arrays of kind %r are not converted" % a.dtype.kind)
    target = info.accy_dtype
    if info.is_bf16 and a.dtype == np.uint16 or a.dtype == info.dtype and not info.is_bf16:
        # the same element type (bf16 bits as uint16): an exact copy
        return np.array(a, dtype=info.dtype, order="C", copy=True)
    if a.dtype.byteorder not in "=|":
        a = a.astype(a.dtype.newbyteorder("="))
    if target == "bool":
        if k != "b":
            bad = (a != 0) & (a != 1)
            if bad.any():
                i = _first(bad)
                raise _refuse(what, src, info, "only 0 and 1 convert to bool exactly", i,
                              _pyval(a, i))
        return np.array(a != 0, order="C")
    if target in _BIG_FLOAT:
        if k == "f":
            a64 = a.astype(np.float64)
            over = np.isfinite(a64) & (np.abs(a64) > _BIG_FLOAT[target])
            if target != "f64" and over.any():
                # values beyond the largest finite value that still round to
                # it are fine; what rounds to infinity is refused
                with np.errstate(over="ignore"):
                    if target == "bf16":
                        rounded = dtypes.bf16_to_f32(f64_to_bf16(a64[over]))
                    else:
                        rounded = a64[over].astype(info.dtype)
                if not np.isfinite(rounded).all():
                    bad = np.zeros(a.shape, bool)
                    bad[over] = ~np.isfinite(rounded)
                    i = _first(bad)
                    raise _refuse(what, src, info, "finite value overflows to infinity", i,
                                  _pyval(a, i))
            if target == "bf16":
                return f64_to_bf16(a64)
            return np.array(a, dtype=info.dtype, order="C", copy=True)
        # integer or bool -> float: exact or refused
        if k == "b":
            vals = a.astype(np.float64)
            return f64_to_bf16(vals) if target == "bf16" else \
                np.array(vals, dtype=info.dtype, order="C")
        if target == "bf16":
            conv = f64_to_bf16(a.astype(np.float64))
            back = dtypes.bf16_to_f32(conv)
        else:
            with np.errstate(over="ignore"):
                conv = a.astype(info.dtype)
            back = conv
        ok = _int_equal(back, a)
        if not ok.all():
            i = _first(~ok)
            raise _refuse(what, src, info, "integer not exactly representable", i,
                          _pyval(a, i))
        return np.array(conv, order="C")
    # integer targets
    ti = np.iinfo(info.dtype)
    if k == "b":
        return np.array(a, dtype=info.dtype, order="C")
    if k == "f":
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(a) | (np.floor(a) != a) | (a < ti.min) | (a > ti.max)
        # float64 holds every float of smaller types exactly; the bound check
        # on ti.max as float64 may round it up (2**63 - 1 -> 2**63)
        with np.errstate(invalid="ignore"):
            bad |= a.astype(np.float64) >= float(ti.max) + 1
        if bad.any():
            i = _first(bad)
            raise _refuse(what, src, info, "not an integer in %d..%d" % (ti.min, ti.max), i,
                          _pyval(a, i))
        return np.array(a, dtype=info.dtype, order="C")
    si = np.iinfo(a.dtype)
    if si.min >= ti.min and si.max <= ti.max:
        return np.array(a, dtype=info.dtype, order="C")
    bad = _int_out_of_range(a, ti)
    if bad.any():
        i = _first(bad)
        raise _refuse(what, src, info, "value out of range %d..%d" % (ti.min, ti.max), i,
                      _pyval(a, i))
    return np.array(a, dtype=info.dtype, order="C")


def _int_out_of_range(a, ti):
    """Integer array |a|: where it lies outside |ti| (compared without any
    wrap: via Python-exact comparisons on int64/uint64)."""
    if a.dtype.kind == "u":
        return a.astype(np.uint64) > np.uint64(ti.max) if ti.max >= 0 else np.ones(a.shape, bool)
    s = a.astype(np.int64)
    low = s < ti.min if ti.min < 0 else s < 0
    high = (s > ti.max) if ti.max <= np.iinfo(np.int64).max else np.zeros(a.shape, bool)
    return low | high


def _int_equal(f, a):
    """Float array |f| equals integer array |a| exactly (no rounding in the
    comparison: int64 values above 2**53 are compared as integers)."""
    f64 = np.asarray(f, dtype=np.float64)
    fin = np.isfinite(f64)
    out = np.zeros(a.shape, bool)
    # f is integral where finite (it came from an integer); compare in the
    # integer domain where it fits, else it cannot be equal
    if a.dtype.kind == "u":
        fits = fin & (f64 >= 0) & (f64 < 2.0 ** 64)
        out[fits] = f64[fits].astype(np.uint64) == a[fits].astype(np.uint64)
    else:
        fits = fin & (f64 >= -2.0 ** 63) & (f64 < 2.0 ** 63)
        out[fits] = f64[fits].astype(np.int64) == a[fits].astype(np.int64)
    return out
