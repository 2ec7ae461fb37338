"""Hostile programs through the binding: file constants stay in
their sandbox, a program over the memory limit is refused at compile."""

import os
import tempfile
import unittest

import numpy as np

from helpers import accy


def _const_text(path, n=4):
    return '%%c = constant "c" : u8[%d] file "%s"\noutput %%c "c"\n' % (n, path)


class TestFileSandbox(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.TemporaryDirectory()
        self.addCleanup(self.root.cleanup)
        self.box = os.path.join(self.root.name, "box")
        os.mkdir(self.box)
        with open(os.path.join(self.root.name, "secret"), "wb") as f:
            f.write(b"SECRET")
        with open(os.path.join(self.box, "ok.bin"), "wb") as f:
            f.write(b"okok")
        os.symlink(os.path.join(self.root.name, "secret"), os.path.join(self.box, "link"))

    def test_inside_is_read(self):
        wire = accy.assemble(_const_text("ok.bin"), base_dir=self.box)
        with accy.Session(threads=1) as s:
            (c,) = s.compile(wire)()
        self.assertEqual(bytes(c), b"okok")

    def test_escapes_are_refused_without_revealing(self):
        for path in ("../secret", os.path.join(self.root.name, "secret"), "/etc/os-release",
                     "link"):
            with self.assertRaises(accy.InvalidProgram) as cm:
                accy.assemble(_const_text(path, 6), base_dir=self.box)
            msg = str(cm.exception)
            self.assertNotIn("SECRET", msg)
            self.assertNotIn("6 bytes", msg)
            if not path.startswith("/"):
                self.assertNotIn(self.root.name, msg)

    def test_files_can_be_forbidden(self):
        with self.assertRaises(accy.InvalidProgram) as cm:
            accy.assemble(_const_text("ok.bin"), base_dir=self.box, allow_files=False)
        self.assertIn("file constants are not allowed", str(cm.exception))


class TestMemoryLimit(unittest.TestCase):
    HUGE = ('%x = parameter "x" : f32[]\n'
            '%b = broadcast_in_dim %x dims=[] : f32[268434432,1024]\n'
            '%e = exp %b\n%s = reduce sum %e dims=[0,1]\noutput %s "s"\n')

    def test_huge_program_refused_at_compile(self):
        with accy.Session(threads=1) as s:
            with self.assertRaises(accy.OutOfMemory) as cm:
                s.compile(accy.assemble(self.HUGE))
        self.assertIn("memory limit", str(cm.exception))
        self.assertIn(accy.info("memory.limit.default"), str(cm.exception))

    def test_explicit_limit(self):
        # the reverse reads b whole, so b needs its own 1 MiB buffer
        text = ('%x = parameter "x" : f32[262144]\n%a = negate %x\n%b = negate %a\n'
                '%c = reverse %b dims=[0]\noutput %c "y"\n')
        with accy.Session(threads=1, memory_limit=1 << 16) as s:
            with self.assertRaises(accy.OutOfMemory):
                s.compile(accy.assemble(text))
        with accy.Session(threads=1, memory_limit=1 << 24) as s:
            (y,) = s.compile(accy.assemble(text))(np.ones(262144, np.float32))
            self.assertEqual(float(y[0]), 1.0)
        for bad in (0, -1, 2 ** 64):
            with self.assertRaises(ValueError):
                accy.Session(memory_limit=bad)
        for bad in (1.5, True, "1"):
            with self.assertRaises(TypeError):
                accy.Session(memory_limit=bad)


if __name__ == "__main__":
    unittest.main()
