"""The binding end to end: sessions, programs, zero copies, refusals, errors."""

import os
import struct
import tempfile
import unittest

import numpy as np

from helpers import SRCDIR, accy, mlp_reference, mlp_wire


class TestSession(unittest.TestCase):
    def setUp(self):
        self.s = accy.Session(threads=2)
        self.addCleanup(self.s.close)

    def test_compile_describes_inputs_and_outputs(self):
        p = self.s.compile(mlp_wire())
        self.assertEqual(len(p.inputs), 1)
        x = p.inputs[0]
        self.assertEqual((x.name, x.accy_dtype, x.dtype, x.shape), ("x", "f32", np.float32, (2, 3)))
        self.assertEqual((x.byte_size, x.alignment), (24, 4))
        self.assertFalse(x.copied_input)
        y = p.outputs[0]
        self.assertEqual((y.name, y.shape, y.byte_size, y.copied_output), ("y", (2, 2), 16, False))

    def test_describe_plan(self):
        p = self.s.compile(mlp_wire())
        text = p.describe_plan()
        self.assertTrue(text.startswith("plan: "), text)
        self.assertIn("task 0: ", text)
        self.assertIn("dot_general", text)
        p.release()
        with self.assertRaises(accy.InvalidHandle):
            p.describe_plan()

    def test_stats_and_trim(self):
        p = self.s.compile(mlp_wire())
        x = np.arange(6, dtype=np.float32).reshape(2, 3)
        for _ in range(3):
            p(x)
        ps = p.stats()
        self.assertEqual(ps["invokes"], 3)
        self.assertEqual(ps["invoke_failures"], {})  # nonzero counts only
        self.assertGreaterEqual(ps["tasks"], 1)
        self.assertGreater(ps["plan_bytes"], 0)
        self.assertEqual((ps["scratch_blocks"], ps["scratch_blocks_in_use"]), (1, 0))
        # A small program never runs batched (docs/threading.md, "Coalescing").
        self.assertEqual((ps["batched_calls"], ps["batched_plan_bytes"]), (0, 0))
        ss = self.s.stats()
        self.assertEqual((ss["programs"], ss["compiles"], ss["invokes"]), (1, 1, 3))
        self.assertEqual(ss["scratch_bytes"], ps["scratch_block_bytes"])
        self.assertEqual(ss["session_threads"], 2)
        if ss["memory_limit_bytes"] is not None:
            self.assertGreater(ss["memory_limit_bytes"], ss["memory_held_bytes"])
        self.assertEqual(self.s.trim(), ps["scratch_block_bytes"])
        self.assertEqual(self.s.stats()["scratch_bytes"], 0)
        self.assertEqual(self.s.trim(), 0)
        np.testing.assert_array_equal(p(x)[0], mlp_reference(x))  # works after a trim
        p.release()
        with self.assertRaises(accy.InvalidHandle):
            p.stats()

    def test_session_without_coalescing(self):
        with accy.Session(threads=1, coalesce=False) as s:
            p = s.compile(mlp_wire())
            x = np.arange(6, dtype=np.float32).reshape(2, 3)
            np.testing.assert_array_equal(p(x)[0], mlp_reference(x))
            self.assertEqual(p.stats()["batched_launches"], 0)
        with self.assertRaises(TypeError):
            accy.Session(threads=1, coalesce="no")

    def test_call_returns_correct_outputs(self):
        # Integer inputs: the result is exact in any summation order, so the
        # comparisons with mlp_reference in this file are bit for bit.
        p = self.s.compile(mlp_wire())
        x = np.arange(6, dtype=np.float32).reshape(2, 3)
        (y,) = p(x)
        np.testing.assert_array_equal(y, mlp_reference(x))

    def test_compile_from_path(self):
        with tempfile.NamedTemporaryFile(suffix=".accy", delete=False) as f:
            f.write(mlp_wire())
        self.addCleanup(os.unlink, f.name)
        p = self.s.compile(f.name)
        self.assertEqual(p.outputs[0].name, "y")

    def test_invoke_writes_caller_arrays_in_place(self):
        p = self.s.compile(mlp_wire())
        x = np.ones((2, 3), np.float32)
        x_before = x.copy()
        y = np.full((2, 2), -1.0, np.float32)
        ret = p.invoke([x], [y])
        self.assertIs(ret[0], y)  # the very array we passed, written in place
        np.testing.assert_array_equal(y, mlp_reference(x))
        np.testing.assert_array_equal(x, x_before)  # input never modified

    def test_zero_copy_through_a_view(self):
        # An output that is a contiguous view of a larger buffer is written
        # through: the library got the buffer's own pointer.
        p = self.s.compile(mlp_wire())
        big = np.zeros((4, 2), np.float32)
        p.invoke([np.ones((2, 3), np.float32)], [big[1:3]])
        np.testing.assert_array_equal(big[1:3], mlp_reference(np.ones((2, 3), np.float32)))
        np.testing.assert_array_equal(big[0], [0, 0])
        np.testing.assert_array_equal(big[3], [0, 0])

    def test_copied_flags(self):
        text = '%x = parameter "x" : f32[4]\n%c = constant "c" : f32[4] [1]\n' \
               'output %x "same"\noutput %c "const"\n'
        p = self.s.compile(accy.assemble(text))
        self.assertTrue(p.outputs[0].copied_output)
        self.assertTrue(p.outputs[1].copied_output)
        a = np.arange(4, dtype=np.float32)
        same, const = p(a)
        np.testing.assert_array_equal(same, a)
        np.testing.assert_array_equal(const, np.ones(4, np.float32))

    def test_refuses_wrong_dtype(self):
        p = self.s.compile(mlp_wire())
        with self.assertRaises(accy.InvalidBuffer) as cm:
            p(np.ones((2, 3), np.float64))
        self.assertIn("dtype float64, expected float32", cm.exception.cause)
        self.assertEqual(cm.exception.status, 4)
        self.assertEqual(cm.exception.status_name, "ACCY_STATUS_INVALID_BUFFER")

    def test_copy_true_converts_inputs(self):
        p = self.s.compile(mlp_wire())
        x = np.arange(6, dtype=np.float64).reshape(2, 3)
        (y,) = p(x, copy=True)
        np.testing.assert_array_equal(y, mlp_reference(x.astype(np.float32)))
        (y2,) = p(np.asfortranarray(x.astype(np.float32)), copy=True)
        np.testing.assert_array_equal(y2, y)

    def test_compile_text_bytes_and_text_file(self):
        # Bytes without the wire magic are program text, assembled first.
        from helpers import MLP_TEXT
        p = self.s.compile(MLP_TEXT.encode())
        self.assertEqual(p.inputs[0].shape, (2, 3))
        np.testing.assert_array_equal(p(np.ones((2, 3), np.float32))[0],
                                      mlp_reference(np.ones((2, 3), np.float32)))
        # A text file with a relative file constant: resolved against the
        # file's directory, whatever the current directory is.
        with tempfile.TemporaryDirectory() as d:
            np.arange(4, dtype=np.float32).tofile(os.path.join(d, "c.bin"))
            path = os.path.join(d, "prog.accy")
            with open(path, "w") as f:
                f.write('%x = parameter "x" : f32[4]\n'
                        '%c = constant "c" : f32[4] file "c.bin"\n'
                        '%y = add %x, %c\noutput %y "y"\n')
            cwd = os.getcwd()
            os.chdir(tempfile.gettempdir())
            try:
                p = self.s.compile(path)
            finally:
                os.chdir(cwd)
            (y,) = p(np.ones(4, np.float32))
            np.testing.assert_array_equal(y, [1, 2, 3, 4])
            # a text error is the assembler's, naming the line
            with open(path, "w") as f:
                f.write('%x = parameter "x" : f32[4]\n%y = frob %x\n')
            with self.assertRaises(accy.InvalidProgram) as cm:
                self.s.compile(path)
            self.assertIn("line 2", cm.exception.cause)

    def test_refuses_wrong_shape(self):
        p = self.s.compile(mlp_wire())
        with self.assertRaises(accy.InvalidBuffer) as cm:
            p(np.ones((3, 2), np.float32))
        self.assertIn("shape (3, 2), expected (2, 3)", cm.exception.cause)

    def test_refuses_non_contiguous(self):
        p = self.s.compile(mlp_wire())
        x = np.ones((3, 2), np.float32).T
        with self.assertRaises(accy.InvalidBuffer) as cm:
            p(x)
        self.assertIn("not C-contiguous", cm.exception.cause)

    def test_refuses_misaligned(self):
        p = self.s.compile(mlp_wire())
        raw = np.zeros(6 * 4 + 1, np.uint8)
        start = 1 if raw.ctypes.data % 4 == 0 else 0
        x = raw[start:start + 24].view(np.float32).reshape(2, 3)
        self.assertNotEqual(x.ctypes.data % 4, 0)
        with self.assertRaises(accy.InvalidBuffer) as cm:
            p(x)
        self.assertIn("not aligned to 4 bytes", cm.exception.cause)

    def test_refuses_read_only_output_and_wrong_counts(self):
        p = self.s.compile(mlp_wire())
        y = np.zeros((2, 2), np.float32)
        y.flags.writeable = False
        with self.assertRaises(accy.InvalidBuffer) as cm:
            p.invoke([np.ones((2, 3), np.float32)], [y])
        self.assertIn("read-only", cm.exception.cause)
        with self.assertRaises(accy.InvalidBuffer) as cm:
            p.invoke([], [np.zeros((2, 2), np.float32)])
        self.assertIn("0 inputs given, the program takes 1", cm.exception.cause)

    def test_overlap_is_refused_by_the_library(self):
        text = '%x = parameter "x" : f32[4]\n%y = negate %x\n%z = abs %x\n' \
               'output %y "y"\noutput %z "z"\n'
        p = self.s.compile(accy.assemble(text))
        out = np.zeros(4, np.float32)
        with self.assertRaises(accy.InvalidBuffer) as cm:
            p.invoke([np.ones(4, np.float32)], [out, out])
        self.assertIn("output", cm.exception.cause)

    def test_release_twice_is_invalid_handle(self):
        p = self.s.compile(mlp_wire())
        p.release()
        with self.assertRaises(accy.InvalidHandle) as cm:
            p.release()
        self.assertEqual(cm.exception.status, 3)
        with self.assertRaises(accy.InvalidHandle):
            p(np.ones((2, 3), np.float32))

    def test_context_manager_releases(self):
        with self.s.compile(mlp_wire()) as p:
            p(np.ones((2, 3), np.float32))
        with self.assertRaises(accy.InvalidHandle):
            p.release()

    def test_too_many_programs(self):
        wire = mlp_wire()
        progs = [self.s.compile(wire) for _ in range(64)]
        with self.assertRaises(accy.TooManyPrograms) as cm:
            self.s.compile(wire)
        self.assertEqual(cm.exception.status, 5)
        for p in progs:
            p.release()
        self.s.compile(wire).release()

    def test_invalid_program_with_cause(self):
        with self.assertRaises(accy.InvalidProgram) as cm:
            self.s.compile(b"ACCY\x01\x00\x00\x00garbage")
        self.assertTrue(cm.exception.cause)
        self.assertIsInstance(cm.exception, accy.Error)
        with self.assertRaises(accy.InvalidProgram) as cm:
            self.s.compile(b"XXXX")
        self.assertEqual(cm.exception.status, 1)

    def test_unsupported_version(self):
        wire = bytearray(mlp_wire())
        wire[4:6] = struct.pack("<H", 2)
        with self.assertRaises(accy.UnsupportedVersion) as cm:
            self.s.compile(bytes(wire))
        self.assertIn("wire 2.0", cm.exception.cause)

    def test_closed_session(self):
        s = accy.Session()
        p = s.compile(mlp_wire())
        s.close()
        s.close()  # idempotent
        with self.assertRaises(accy.InvalidHandle) as cm:
            p(np.ones((2, 3), np.float32))
        self.assertIn("closed", cm.exception.cause)

    def test_threads_argument(self):
        # 0 and None: the library's default; 1..1024 as given (numpy ints too).
        for t in (None, 0, 1, 2, np.int64(3), accy.session.MAX_THREADS):
            accy.Session(threads=t).close()
        # Values that used to wrap silently in the uint32 option field.
        for t in (2 ** 40, 2 ** 32 + 1, 1025, -1):
            with self.assertRaises(ValueError) as cm:
                accy.Session(threads=t)
            self.assertIn("1..1024", str(cm.exception))
            self.assertIn(str(t), str(cm.exception))
        for t in (2.7, 2.0, True, False, "2", np.bool_(True)):
            with self.assertRaises(TypeError) as cm:
                accy.Session(threads=t)
            self.assertIn("must be an int", str(cm.exception))
        with accy.Session(threads=1) as s:
            (y,) = s.compile(mlp_wire())(np.ones((2, 3), np.float32))
            np.testing.assert_array_equal(y, mlp_reference(np.ones((2, 3), np.float32)))


class TestConversions(unittest.TestCase):
    """copy=True converts exactly or by the documented rounding, else refuses
    (docs/python.md "Conversions"; the fuzz target test_fuzz_convert.py
    covers the whole table)."""

    def setUp(self):
        self.s = accy.Session(threads=1)
        self.addCleanup(self.s.close)

    def ident(self, dtype, n=3):
        return self.s.compile(accy.assemble(
            '%%x = parameter "x" : %s[%d]\noutput %%x "y"\n' % (dtype, n)))

    def test_bf16_gets_bit_patterns_of_the_values(self):
        p = self.ident("bf16")
        x = np.array([1.0, -2.5, 0.1], np.float32)
        (y,) = p(x, copy=True)
        self.assertEqual(y.dtype, np.uint16)
        np.testing.assert_array_equal(y, accy.f32_to_bf16(x))  # not [1, 65534, 0]
        np.testing.assert_array_equal(accy.bf16_to_f32(y), [1.0, -2.5, 0.10009765625])
        # uint16 arrays are bf16 bits already, with or without copy
        bits = np.array([0x3F80, 0xC020, 0x7FC0], np.uint16)
        np.testing.assert_array_equal(p(bits, copy=True)[0], bits)
        np.testing.assert_array_equal(p(bits)[0], bits)
        # float64 rounds once to bf16: 1 + 2^-8 + 2^-30 is above the tie, so it
        # rounds up (through f32 it would round to the tie, then to even: 1)
        (y,) = p(np.array([1 + 2 ** -8 + 2 ** -30, 0, 0]), copy=True)
        self.assertEqual(int(y[0]), 0x3F81)
        # ints: exact or refused
        np.testing.assert_array_equal(accy.bf16_to_f32(p(np.array([1, 256, -3]),
                                                          copy=True)[0]), [1, 256, -3])
        with self.assertRaises(accy.InvalidBuffer) as cm:
            p(np.array([1, 257, 3]), copy=True)
        self.assertIn("input 0 'x': cannot convert int64 to bf16", cm.exception.cause)
        self.assertIn("index [1]: 257", cm.exception.cause)
        with self.assertRaises(accy.InvalidBuffer) as cm:
            p(np.array([1, 2, 1e39]), copy=True)
        self.assertIn("overflows to infinity", cm.exception.cause)
        with self.assertRaises(accy.InvalidBuffer) as cm:
            p(x)
        self.assertIn("expected uint16 (bf16 bits); pass copy=True", cm.exception.cause)

    def test_integer_narrowing_is_exact_or_refused(self):
        p = self.ident("i8")
        np.testing.assert_array_equal(p(np.array([-128, 0, 127]), copy=True)[0], [-128, 0, 127])
        for bad, value in ((np.array([1, 2, 300]), "300"), (np.array([1, -129, 3]), "-129"),
                           (np.array([1.5, 2, 3]), "1.5"), (np.array([1, np.nan, 3]), "nan"),
                           (np.array([1, 2, 2 ** 63], np.uint64), "9223372036854775808")):
            with self.subTest(bad=bad), self.assertRaises(accy.InvalidBuffer) as cm:
                p(bad, copy=True)
            self.assertIn("input 0 'x': cannot convert %s to int8 (i8)" % bad.dtype,
                          cm.exception.cause)
            self.assertIn(value, cm.exception.cause)
        u = self.ident("u32")
        with self.assertRaises(accy.InvalidBuffer) as cm:
            u(np.array([1, -1, 2], np.int32), copy=True)
        self.assertIn("index [1]: -1", cm.exception.cause)
        np.testing.assert_array_equal(u(np.array([1.0, 2.0, 4294967295.0]), copy=True)[0],
                                      [1, 2, 4294967295])
        f = self.ident("f32")
        with self.assertRaises(accy.InvalidBuffer) as cm:
            f(np.array([0, 2 ** 24 + 1, 0]), copy=True)
        self.assertIn("not exactly representable", cm.exception.cause)
        b = self.ident("bool")
        np.testing.assert_array_equal(b(np.array([0, 1, 1]), copy=True)[0], [False, True, True])
        with self.assertRaises(accy.InvalidBuffer):
            b(np.array([0, 2, 1]), copy=True)
        with self.assertRaises(accy.InvalidBuffer) as cm:
            f(np.array([1j, 0, 0]), copy=True)
        self.assertIn("complex128", cm.exception.cause)

    def test_float_rounding_and_byte_order(self):
        f = self.ident("f32")
        x = np.array([0.1, 1e-50, -np.inf])
        np.testing.assert_array_equal(f(x, copy=True)[0], x.astype(np.float32))
        big = np.array([1.0, 2.0, 3.0], ">f4")
        np.testing.assert_array_equal(f(big, copy=True)[0], [1, 2, 3])
        with self.assertRaises(accy.InvalidBuffer):
            f(big)  # another byte order is another dtype without copy=True
        with self.assertRaises(accy.InvalidBuffer) as cm:
            self.ident("f16")(np.array([1.0, 70000.0, 3.0], np.float32), copy=True)
        self.assertIn("index [1]: 70000.0", cm.exception.cause)


class TestErrorClasses(unittest.TestCase):
    def test_one_subclass_per_status(self):
        classes = [accy.InvalidProgram, accy.UnsupportedVersion, accy.InvalidHandle,
                   accy.InvalidBuffer, accy.TooManyPrograms, accy.OutOfMemory,
                   accy.CompileFailed, accy.LaunchFailed]
        for number, cls in enumerate(classes, start=1):
            self.assertTrue(issubclass(cls, accy.Error))
            self.assertEqual(cls.status, number)
            e = accy.errors.make(number, "why")
            self.assertIs(type(e), cls)
            self.assertEqual(e.cause, "why")
            self.assertTrue(e.status_name.startswith("ACCY_STATUS_"))
        self.assertEqual(accy.errors.make(99).status_name, "ACCY_STATUS_<unknown>")


class TestText(unittest.TestCase):
    def test_round_trip(self):
        wire = mlp_wire()
        text = accy.disassemble(wire)
        self.assertTrue(text.startswith("# accy program: wire 1.0"))
        self.assertEqual(accy.assemble(text), wire)

    def test_assemble_error_names_line(self):
        with self.assertRaises(accy.InvalidProgram) as cm:
            accy.assemble('%x = parameter "x" : f32[2]\n%y = dott %x\n')
        self.assertIn("line 2", cm.exception.cause)

    def test_assemble_with_base_dir(self):
        ex = os.path.join(SRCDIR, "examples")
        with open(os.path.join(ex, "mlp.accy")) as f:
            wire = accy.assemble(f.read(), base_dir=ex)
        with accy.Session() as s:
            p = s.compile(wire)
            self.assertEqual(p.outputs[0].shape, (1, 10))

    def test_disassemble_rejects_garbage(self):
        with self.assertRaises(accy.InvalidProgram):
            accy.disassemble(b"not wire")


class TestBuilder(unittest.TestCase):
    def test_build_and_run(self):
        with accy.Builder() as b:
            x = b.parameter("x", "f32", (4,))
            c = b.constant("two", np.full(4, 2, np.float32))
            y = b.binary("multiply", x, c)
            self.assertEqual(b.type(y), ("f32", (4,)))
            z = b.compare("GT", y, c)
            i = b.convert(y, "i32")
            r = b.reshape(i, (2, 2))
            b.output(y, "y")
            b.output(z, "z")
            b.output(r, "r")
            wire = b.finish()
        with accy.Session() as s:
            p = s.compile(wire)
            y, z, r = p(np.array([0, 1, 2, 3], np.float32))
        np.testing.assert_array_equal(y, [0, 2, 4, 6])
        np.testing.assert_array_equal(z, [False, False, True, True])
        self.assertEqual(z.dtype, np.bool_)
        np.testing.assert_array_equal(r, [[0, 2], [4, 6]])

    def test_error_leaves_builder_usable(self):
        b = accy.Builder()
        x = b.parameter("x", "f32", (2,))
        w = b.parameter("w", "f32", (3,))
        with self.assertRaises(accy.InvalidProgram) as cm:
            b.binary("add", x, w)
        self.assertTrue(cm.exception.cause)
        b.output(b.unary("negate", x), "y")
        self.assertTrue(b.finish().startswith(b"ACCY"))
        b.close()

    def test_op_table_matches_header(self):
        path = os.path.join(SRCDIR, "include", "accy", "ops.h")
        import re
        with open(path) as f:
            header = dict((name, int(code)) for code, name in
                          re.findall(r'XX\(\w+, (\d+), "(\w+)"', f.read()))
        self.assertEqual(header, accy.OPS)

    def test_bf16_helpers(self):
        x = np.array([1.0, -2.5, 0.1, np.inf], np.float32)
        bits = accy.f32_to_bf16(x)
        self.assertEqual(bits.dtype, np.uint16)
        back = accy.bf16_to_f32(bits)
        np.testing.assert_array_equal(back[[0, 1, 3]], x[[0, 1, 3]])
        # f32 0.1 is 0x3DCCCCCD: the low half 0xCCCD is above the tie, so it
        # rounds up to 0x3DCD (0.10009765625). Pure integer arithmetic: exact.
        self.assertEqual(int(bits[2]), 0x3DCD)
        self.assertEqual(float(back[2]), 0.10009765625)
        self.assertTrue(np.isnan(accy.bf16_to_f32(accy.f32_to_bf16(np.float32("nan")))))

    def test_bf16_program_uses_uint16_bits(self):
        text = '%x = parameter "x" : bf16[3]\n%y = add %x, %x\noutput %y "y"\n'
        with accy.Session() as s:
            p = s.compile(accy.assemble(text))
            self.assertTrue(p.inputs[0].is_bf16)
            self.assertEqual(p.inputs[0].dtype, np.uint16)
            (y,) = p(accy.f32_to_bf16(np.array([1, 2, 3], np.float32)))
        np.testing.assert_array_equal(accy.bf16_to_f32(y), [2, 4, 6])


if __name__ == "__main__":
    unittest.main()
