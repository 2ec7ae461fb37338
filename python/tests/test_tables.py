"""The binding's tables against the C library's: every dtype of
accy/dtypes.py has the number, name and element size that accy_dtype_name
and accy_dtype_size give (and the C table has no dtype the binding lacks),
and _lib.MAX_RANK is ACCY_MAX_RANK, both as accy/types.h defines it and as
the library enforces it (accy_type.dims has exactly that many entries)."""

import ctypes
import os
import re
import unittest

import numpy as np

import helpers  # noqa: F401  (puts the source tree's package first)
from accy import _lib, dtypes


def _types_h():
    with open(os.path.join(helpers.SRCDIR, "include", "accy", "types.h")) as f:
        return f.read()


class DtypeTable(unittest.TestCase):
    def test_every_binding_dtype_matches_the_library(self):
        for name, code in dtypes.DTYPES.items():
            self.assertEqual(_lib.lib.accy_dtype_name(code), name.encode(), name)
            size = _lib.lib.accy_dtype_size(code)
            want = 2 if name == "bf16" else dtypes.to_numpy(code).itemsize
            self.assertEqual(size, want, name)
            self.assertEqual(dtypes.name(code), name)

    def test_the_library_has_no_dtype_the_binding_lacks(self):
        for code in range(-1, 64):
            known = _lib.lib.accy_dtype_name(code) is not None
            self.assertEqual(known, code in dtypes.NAMES, code)
            if not known:
                self.assertEqual(_lib.lib.accy_dtype_size(code), 0, code)

    def test_the_header_map_is_the_binding_table(self):
        rows = re.findall(r'XX\((\w+), (\d+), "(\w+)", (\d+)\)', _types_h())
        self.assertTrue(rows)
        self.assertEqual({text: int(num) for _, num, text, _ in rows}, dtypes.DTYPES)
        for _, num, text, size in rows:
            self.assertEqual(_lib.lib.accy_dtype_size(int(num)), int(size), text)


class RankLimit(unittest.TestCase):
    def test_max_rank_is_the_header_constant(self):
        m = re.search(r"#define ACCY_MAX_RANK (\d+)", _types_h())
        self.assertIsNotNone(m)
        self.assertEqual(_lib.MAX_RANK, int(m.group(1)))
        self.assertEqual(ctypes.sizeof(_lib.Type), 8 + 8 * _lib.MAX_RANK)

    def test_the_library_takes_max_rank_and_refuses_one_more(self):
        b = ctypes.c_void_p()
        self.assertEqual(_lib.lib.accy_builder_create(ctypes.byref(b)), 0)
        try:
            out = ctypes.c_uint32()
            for rank, want in ((_lib.MAX_RANK, 0), (_lib.MAX_RANK + 1, 1)):
                dims = (ctypes.c_int64 * rank)(*([1] * rank))
                st = _lib.lib.accy_builder_parameter(b, b"x%d" % rank, dtypes.code(np.float32),
                                                     rank, dims, ctypes.byref(out))
                self.assertEqual(st, want, rank)  # 0 OK, 1 INVALID_PROGRAM
            t = _lib.Type()
            self.assertEqual(_lib.lib.accy_builder_type(b, 0, ctypes.byref(t)), 0)
            self.assertEqual(t.rank, _lib.MAX_RANK)
        finally:
            _lib.lib.accy_builder_destroy(b)


if __name__ == "__main__":
    unittest.main()
