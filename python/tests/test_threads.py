"""Concurrent calls from Python threads (ctypes releases the GIL)."""

import threading
import unittest

import numpy as np

from helpers import accy, mlp_wire


class TestThreads(unittest.TestCase):
    def test_concurrent_invokes_of_one_program(self):
        n_threads, calls = 8, 50
        errors = []
        with accy.Session(threads=2) as s:
            p = s.compile(mlp_wire())

            def work(seed):
                try:
                    rng = np.random.default_rng(seed)
                    y = np.empty((2, 2), np.float32)
                    for _ in range(calls):
                        x = rng.standard_normal((2, 3)).astype(np.float32)
                        p.invoke([x], [y])
                        # Against float64: a dot of K=3 terms plus a bias,
                        # rounded in f32 in any order, is within
                        # (K+1)*eps32*(|x|@|w| + |b|) of the exact value.
                        x64 = x.astype(np.float64)
                        w64 = np.arange(1, 7, dtype=np.float64).reshape(3, 2)
                        exact = x64 @ w64 + np.array([0.5, -0.5])
                        bound = 4 * np.finfo(np.float32).eps * (np.abs(x64) @ w64 + 0.5)
                        self.assertTrue(np.all(np.abs(y - exact) <= bound), (y, exact))
                except Exception as e:  # reported in the main thread
                    errors.append(e)

            threads = [threading.Thread(target=work, args=(i,)) for i in range(n_threads)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        self.assertEqual(errors, [])

    def test_error_causes_are_per_thread(self):
        results = {}
        with accy.Session() as s:
            def bad(i):
                try:
                    s.compile(b"ACCY\x09\x00\x00\x00")
                except accy.Error as e:
                    results[i] = (type(e), e.cause)

            threads = [threading.Thread(target=bad, args=(i,)) for i in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        self.assertEqual(len(results), 4)
        for cls, cause in results.values():
            self.assertIs(cls, accy.UnsupportedVersion)
            self.assertIn("wire 9.0", cause)


if __name__ == "__main__":
    unittest.main()
