"""Loading libaccy from Python as users do: no environment tricks.

Each case runs a fresh interpreter with a clean environment (only PATH and
the PYTHONPATH that finds this source tree), so nothing of the test runner's
environment (LD_PRELOAD, GLIBC_TUNABLES, LD_LIBRARY_PATH) can make it pass.
The library is the build tree's (ACCY_LIBRARY, as the binding documents)."""

import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PYROOT = os.path.dirname(HERE)


def _library():
    build = os.environ.get("ACCY_TEST_BUILDDIR")
    if build:
        return os.path.join(build, ".libs", "libaccy.so")
    return os.path.join(os.path.dirname(PYROOT), ".libs", "libaccy.so")


def run_clean(code):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": PYROOT,
           "ACCY_LIBRARY": _library(), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120)


PROGRAM = r'''
import accy, numpy
s = accy.Session(threads=2)
p = s.compile(accy.assemble('%x = parameter "x" : f32[4]\n%y = negate %x\noutput %y "y"\n'))
(y,) = p(numpy.arange(4, dtype=numpy.float32))
assert list(y) == [-0.0, -1.0, -2.0, -3.0], y
'''


def _have_onnx():
    return run_clean("import onnx").returncode == 0


class TestLoading(unittest.TestCase):
    def test_import_with_clean_environment(self):
        r = run_clean(PROGRAM + "print(accy.info('scratch.backend'))\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        # libaccy is dlopen'ed here, so its private jemalloc cannot get static
        # TLS: the malloc backend, chosen by itself and reported.
        self.assertIn(r.stdout.strip(), ("malloc", "jemalloc"))

    def test_backend_note_says_why(self):
        r = run_clean(PROGRAM + "b = accy.info('scratch.backend')\n"
                      "n = accy.info('scratch.backend.note')\n"
                      "assert (b == 'jemalloc') == (n == ''), (b, n)\nprint(n)\n")
        self.assertEqual(r.returncode, 0, r.stderr)

    @unittest.skipUnless(_have_onnx(), "needs the onnx module")
    def test_onnx_before_accy(self):
        r = run_clean("import onnx, google.protobuf\n" + PROGRAM +
                      "m = onnx.helper.make_model(onnx.helper.make_graph([], 'g', [], []))\n"
                      "onnx.checker.check_model(m)\nprint(len(m.SerializeToString()))\n")
        self.assertEqual(r.returncode, 0, r.stderr)

    @unittest.skipUnless(_have_onnx(), "needs the onnx module")
    def test_onnx_after_accy(self):
        r = run_clean(PROGRAM + "import onnx, google.protobuf\n"
                      "m = onnx.helper.make_model(onnx.helper.make_graph([], 'g', [], []))\n"
                      "onnx.checker.check_model(m)\nb = m.SerializeToString()\n"
                      "onnx.load_from_string(b)\n" + PROGRAM)
        self.assertEqual(r.returncode, 0, r.stderr)


if __name__ == "__main__":
    unittest.main()
