"""Fuzz target: the binding's argument conversion (Program.invoke / __call__).

Random numpy arrays (every dtype numpy and accy share, other byte orders,
complex, 0-d to 3-d, zero-size, non-contiguous and negative-stride views,
misaligned views, Python lists) are passed with copy=False and copy=True to
identity programs of random accy element types, and the outcome is compared
with a reference written from the documented rules (docs/python.md,
"Conversions"), independent of accy/convert.py:

- copy=False: accepted exactly when the argument is an ndarray of the
  descriptor's dtype (native byte order), shape, C-contiguous and aligned;
  anything else raises accy.InvalidBuffer.
- copy=True: a wrong shape or a non-numeric kind is InvalidBuffer; values go
  through exactly (integers and bools into any type that holds them, floats
  into integers when integral and in range, 0/1 into bool), floats into
  floats and into bf16 round to nearest even (bf16 from the exact value, not
  through f32), a finite value that would become infinite is refused, and a
  uint16 array for a bf16 input is taken as bits.

The identity program returns the bytes the library received, which must be
exactly the reference's. Deterministic (ACCY_FUZZ_SEED, default 20261201);
by default about 1500 cases in at most 4 s, so it runs in make check.
ACCY_FUZZ_SECONDS=N runs for N seconds instead (no case limit).
"""

import fractions
import os
import time
import unittest

import numpy as np

from helpers import accy

SEED = int(os.environ.get("ACCY_FUZZ_SEED", "20261201"))
LONG = os.environ.get("ACCY_FUZZ_SECONDS")
SECONDS = float(LONG) if LONG else 4.0
CASES = None if LONG else 1500

ACCY_TYPES = ["f32", "f64", "f16", "bf16", "i8", "i16", "i32", "i64", "u8", "u16", "u32",
              "u64", "bool"]
NP_OF = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": np.uint16,
         "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8,
         "u16": np.uint16, "u32": np.uint32, "u64": np.uint64, "bool": np.bool_}
SOURCE_DTYPES = [np.dtype(t) for t in (
    "?", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", ">i2", ">i4",
    ">u8", ">f4", ">f8", "<f8", "c8", "c16")]

F = fractions.Fraction


# ---- the reference ------------------------------------------------------------------

class Refused(Exception):
    pass


def _exact(v):
    """A numpy scalar as an exact Python number (int or Fraction), or the
    float itself for NaN and infinities."""
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, (np.integer, int)):
        return int(v)
    f = float(v)
    if f != f or f in (float("inf"), float("-inf")):
        return f
    return F(f)


def _bf16_value(bits):
    return float(np.array([bits], np.uint16).astype(np.uint32).__lshift__(16)
                 .view(np.float32)[0])


def _round_float(q, target):
    """Nearest value of |target| (f16, f32, f64 or bf16) to the exact number
    |q| (ties to even), as the bit pattern or value; None when it
    overflows to infinity."""
    if target == "bf16":
        # candidates around the f32 value's upper half
        f = np.float32(float(q)) if abs(q) < F(2) ** 128 else np.float32(np.inf)
        top = int(np.array([f]).view(np.uint32)[0]) >> 16
        best = None
        for c in {top - 1, top, top + 1} - {-1}:
            c &= 0xFFFF
            v = _bf16_value(c)
            if v != v:
                continue
            if v in (float("inf"), float("-inf")):
                continue
            d = abs(F(v) - q)
            if best is None or d < best[0] or (d == best[0] and c % 2 == 0):
                best = (d, c)
        # overflow: beyond the largest finite bf16 by half an ulp or more
        big = F(_bf16_value(0x7F7F))
        half = (big - F(_bf16_value(0x7F7E))) / 2
        if abs(q) >= big + half:
            return None
        return best[1]
    nt = np.dtype(NP_OF[target])
    with np.errstate(over="ignore"):
        r = nt.type(float(q)) if nt != np.float64 else np.float64(float(q))
    # numpy's float64 -> f16/f32 rounds once from float64; q is a float64
    # value or an integer, for which round via the exact comparison below
    if isinstance(q, int) or (isinstance(q, F) and q.denominator == 1 and abs(q) > 2 ** 53):
        r = _nearest_int_float(q, nt)
    if not np.isfinite(r):
        return None
    return r


def _nearest_int_float(q, nt):
    with np.errstate(over="ignore"):
        guess = nt.type(float(q))
    if not np.isfinite(guess):
        return guess
    best = None
    with np.errstate(over="ignore"):
        cands = (np.nextafter(guess, nt.type(-np.inf)), guess, np.nextafter(guess, nt.type(np.inf)))
    for c in cands:
        if not np.isfinite(c):
            continue
        d = abs(F(float(c)) - q)
        if best is None or d < best[0]:
            best = (d, c)
    return best[1]


def reference(arg, info_dtype, shape, copy):
    """What invoke must deliver for |arg|: the exact input array (of the
    descriptor's numpy dtype), or Refused."""
    target_np = np.dtype(NP_OF[info_dtype])
    if not copy:
        if not isinstance(arg, np.ndarray) or arg.dtype != target_np or arg.shape != shape \
                or not arg.flags.c_contiguous or (arg.size and arg.ctypes.data %
                                                  target_np.itemsize):
            raise Refused("copy=False")
        return np.array(arg)
    a = np.asarray(arg)
    if a.dtype.kind not in "biuf":
        raise Refused("kind")
    if info_dtype == "bf16" and a.dtype == np.uint16:
        out = np.array(a, dtype=np.uint16)
        if out.shape != shape:
            raise Refused("shape")
        return out
    out = np.empty(a.shape, target_np)
    flat_in = a.reshape(-1) if a.size else a.reshape(-1)
    flat_out = out.reshape(-1)
    for i, v in enumerate(flat_in):
        x = _exact(v)
        if info_dtype == "bool":
            if x not in (0, 1):
                raise Refused("bool")
            flat_out[i] = bool(x)
        elif info_dtype in ("f16", "f32", "f64", "bf16"):
            if isinstance(x, float):  # NaN, +-inf stay
                flat_out[i] = (0x7FC0 if x != x else (0x7F80 if x > 0 else 0xFF80)) \
                    if info_dtype == "bf16" else x
                continue
            if x == 0 and a.dtype.kind == "f" and np.signbit(v):
                flat_out[i] = 0x8000 if info_dtype == "bf16" else -0.0  # keeps its sign
                continue
            r = _round_float(x, info_dtype)
            if r is None:
                raise Refused("overflow")
            if a.dtype.kind in "iub" and F(float(r) if info_dtype != "bf16"
                                            else _bf16_value(r)) != x:
                raise Refused("inexact int")
            flat_out[i] = r
        else:
            ii = np.iinfo(target_np)
            if isinstance(x, float) or (isinstance(x, F) and x.denominator != 1):
                raise Refused("not integral")
            if not ii.min <= int(x) <= ii.max:
                raise Refused("range")
            flat_out[i] = int(x)
    if out.shape != shape:
        raise Refused("shape")
    return out


# ---- generating arguments ---------------------------------------------------------------

SPECIAL = [0, 1, -1, 2, 0.5, -0.5, 127, 128, -128, 255, 256, 257, 65535, 65536, 2 ** 24 + 1,
           2 ** 31 - 1, -2 ** 31, 2 ** 32, 2 ** 53 + 1, 2 ** 63 - 1, -2 ** 63, 2 ** 64 - 1,
           1e-40, 1e-8, 0.1, 1 + 2 ** -8, 1 + 2 ** -8 + 2 ** -30, 3.4e38, 3.4028235e38, 1e39,
           65504, 65520, 70000, -0.0, float("nan"), float("inf"), float("-inf"), 1.5, 2.5]


def _values(rng, dtype, n):
    """n values representable in |dtype| (mostly specials and small ints)."""
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.5:
            v = SPECIAL[rng.integers(len(SPECIAL))]
        elif r < 0.8:
            v = int(rng.integers(-3, 4))
        else:
            v = float(rng.standard_normal() * 10.0 ** int(rng.integers(-3, 6)))
        out.append(v)
    res = []
    for v in out:
        try:
            with np.errstate(all="ignore"):
                if dtype.kind in "iu":
                    ii = np.iinfo(dtype)
                    if isinstance(v, float) or not ii.min <= v <= ii.max:
                        v = int(rng.integers(max(ii.min, -1000), min(ii.max, 1000) + 1))
                    res.append(v)
                elif dtype.kind == "b":
                    res.append(bool(int(v) % 2) if not isinstance(v, float) or v == v else True)
                else:
                    res.append(v)
        except (OverflowError, ValueError):
            res.append(0)
    with np.errstate(all="ignore"):
        return np.array(res, dtype=object).astype(dtype) if dtype.kind != "c" else \
            np.array([complex(x, 0.5) for x in res], dtype=dtype)


def _argument(rng, shape, dtype):
    """An array of |shape| and |dtype|, built as one of several views."""
    n = int(np.prod(shape))
    kind = rng.integers(6)
    if kind == 0 or n == 0:  # contiguous
        return _values(rng, dtype, n).reshape(shape)
    if kind == 1 and len(shape) >= 2:  # a transposed copy: F order
        base = _values(rng, dtype, n).reshape(shape[::-1])
        return base.T
    if kind == 2:  # every other element of a larger array
        base = _values(rng, dtype, 2 * n).reshape((2 * n,))
        return base[::2].reshape(shape) if len(shape) <= 1 else \
            base[::2][:n].reshape(shape)
    if kind == 3:  # negative strides
        return _values(rng, dtype, n).reshape(shape)[(slice(None, None, -1),) * len(shape)]
    if kind == 4:  # misaligned: offset by one byte inside a byte buffer
        raw = np.zeros(n * dtype.itemsize + 1, np.uint8)
        start = 1 if raw.ctypes.data % 2 == 0 else 0
        v = raw[start:start + n * dtype.itemsize].view(dtype).reshape(shape)
        v[...] = _values(rng, dtype, n).reshape(shape)
        return v
    return _values(rng, dtype, n).reshape(shape).tolist() if shape else \
        _values(rng, dtype, 1)[0].item()  # Python lists and scalars


class _Programs:
    """Identity programs by (dtype, shape), at most 40 at once."""

    def __init__(self, session):
        self.s = session
        self.cache = {}

    def get(self, dtype, shape):
        key = (dtype, shape)
        if key not in self.cache:
            if len(self.cache) >= 40:
                for p in self.cache.values():
                    p.release()
                self.cache.clear()
            dims = ",".join(str(d) for d in shape)
            text = '%%x = parameter "x" : %s[%s]\noutput %%x "y"\n' % (dtype, dims)
            self.cache[key] = self.s.compile(accy.assemble(text))
        return self.cache[key]


def _same(got, want):
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if got.dtype.kind == "f":
        return bool(np.all((got == want) | (np.isnan(got) & np.isnan(want))) and
                    np.array_equal(np.signbit(got), np.signbit(want)))
    return np.array_equal(got, want)


class TestFuzzConversion(unittest.TestCase):
    def test_against_the_reference(self):
        rng = np.random.default_rng(SEED)
        stats = {"delivered": 0, "refused": 0}
        deadline = time.monotonic() + SECONDS
        case = 0
        with accy.Session(threads=1) as s:
            progs = _Programs(s)
            while time.monotonic() < deadline and (CASES is None or case < CASES):
                case += 1
                rank = int(rng.integers(0, 4))
                shape = tuple(int(d) for d in rng.integers(0 if rng.random() < 0.15 else 1, 4,
                                                           rank))
                target = ACCY_TYPES[rng.integers(len(ACCY_TYPES))]
                src = SOURCE_DTYPES[rng.integers(len(SOURCE_DTYPES))]
                if rng.random() < 0.3:  # often the exact dtype, to exercise the zero-copy path
                    src = np.dtype(NP_OF[target])
                arg = _argument(rng, shape, src)
                want_shape = shape if rng.random() < 0.9 else shape + (1,)
                copy = bool(rng.integers(2))
                prog = progs.get(target, want_shape)
                what = "case %d (seed %d): %s %s -> %s%s copy=%s" % (
                    case, SEED, type(arg).__name__, getattr(arg, "dtype", ""), target,
                    list(want_shape), copy)
                try:
                    want = reference(arg, target, want_shape, copy)
                except Refused:
                    want = None
                try:
                    (got,) = prog(arg, copy=copy)
                except accy.InvalidBuffer as e:
                    self.assertIsNone(want, "%s: refused (%s), the reference delivers %r"
                                      % (what, e.cause, want))
                    self.assertIn("input 0 'x'" if isinstance(arg, np.ndarray) or copy
                                  else "input 0", e.cause)
                    stats["refused"] += 1
                    continue
                self.assertIsNotNone(want, "%s: delivered %r, the reference refuses" % (
                    what, got))
                self.assertTrue(_same(got, want), "%s: delivered %r, expected %r"
                                % (what, got, want))
                stats["delivered"] += 1
        self.assertGreater(stats["delivered"], 10, stats)
        self.assertGreater(stats["refused"], 10, stats)


if __name__ == "__main__":
    unittest.main()
