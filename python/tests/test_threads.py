"""Concurrent calls from Python threads (ctypes releases the GIL)."""

import threading
import unittest

import numpy as np

from helpers import accy, assert_within, mlp_reference64, mlp_wire, sum_bound


class TestThreads(unittest.TestCase):
    def test_concurrent_invokes_of_one_program(self):
        n_threads, calls = 8, 50
        errors = []
        # accy's results are bit-identical for any thread count and load
        # (README "Contract"): each call is also compared with a one-thread
        # session's result bit for bit.
        single = accy.Session(threads=1)
        self.addCleanup(single.close)
        p1 = single.compile(mlp_wire())
        with accy.Session(threads=2) as s:
            p = s.compile(mlp_wire())

            def work(seed):
                try:
                    rng = np.random.default_rng(seed)
                    y = np.empty((2, 2), np.float32)
                    for _ in range(calls):
                        x = rng.standard_normal((2, 3)).astype(np.float32)
                        p.invoke([x], [y])
                        # y = x @ w + b: 4 terms per element (3 products and the
                        # bias), summed in whatever order accy's kernel uses.
                        want, abs_terms = mlp_reference64(x)
                        assert_within(y, want, sum_bound(abs_terms, 4))
                        np.testing.assert_array_equal(y, p1(x)[0])
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
