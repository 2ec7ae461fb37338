"""Concurrent calls from Python threads (ctypes releases the GIL)."""

import asyncio
import gc
import select
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


class TestSubmit(unittest.TestCase):
    def test_many_outstanding_submissions(self):
        # Every submission's result matches a synchronous invoke bit for bit;
        # they are waited on in reverse order of submission.
        with accy.Session(threads=2) as s:
            p = s.compile(mlp_wire())
            rng = np.random.default_rng(7)
            xs = [rng.standard_normal((2, 3)).astype(np.float32) for _ in range(100)]
            pend = [p.submit([x], p.new_outputs()) for x in xs]
            for x, q in reversed(list(zip(xs, pend))):
                (y,) = q.result(timeout=30)
                self.assertTrue(q.done())
                self.assertEqual(q.fileno(), -1)  # the eventfd is closed once seen
                np.testing.assert_array_equal(y, p(x)[0])
            self.assertEqual(len(s._pending), 0)

    def test_fileno_is_pollable(self):
        with accy.Session(threads=2) as s:
            p = s.compile(mlp_wire())
            x = np.ones((2, 3), np.float32)
            q = p.submit([x], p.new_outputs())
            r, _, _ = select.select([q], [], [], 30)
            self.assertEqual(r, [q])
            self.assertTrue(q.wait(0))
            np.testing.assert_array_equal(q.result()[0], p(x)[0])

    def test_event_loop_reader(self):
        with accy.Session(threads=2) as s:
            p = s.compile(mlp_wire())
            x = np.full((2, 3), 0.5, np.float32)

            async def run():
                loop = asyncio.get_running_loop()
                q = p.submit([x], p.new_outputs())
                ready = loop.create_future()
                fd = q.fileno()
                # Level-triggered: it may fire again before remove_reader.
                loop.add_reader(fd, lambda: ready.done() or ready.set_result(None))
                try:
                    await asyncio.wait_for(ready, 30)
                finally:
                    loop.remove_reader(fd)
                return q.result(0)

            (y,) = asyncio.run(run())
            np.testing.assert_array_equal(y, p(x)[0])

    def test_checks_happen_at_submit(self):
        with accy.Session(threads=2) as s:
            p = s.compile(mlp_wire())
            with self.assertRaises(accy.InvalidBuffer):
                p.submit([np.ones((2, 4), np.float32)], p.new_outputs())
            with self.assertRaises(accy.InvalidBuffer):
                p.submit([], p.new_outputs())
            self.assertEqual(len(s._pending), 0)

    def test_dropped_pendings_keep_their_arrays_until_done(self):
        # Pendings never waited on: the session holds their arrays until the
        # runs are over, lets finished ones go as more are submitted, and
        # close() waits for the rest.
        s = accy.Session(threads=2)
        p = s.compile(mlp_wire())
        for _ in range(300):
            p.submit([np.ones((2, 3), np.float32)], p.new_outputs())
        gc.collect()
        self.assertLessEqual(len(s._pending), 300)
        s.close()
        self.assertEqual(len(s._pending), 0)

    def test_outputs_from_a_generator_stay_alive(self):
        # The arrays are borrowed even when only a one-shot iterable named
        # them: the Pending holds the checked list.
        with accy.Session(threads=2) as s:
            p = s.compile(mlp_wire())
            x = np.ones((2, 3), np.float32)
            q = p.submit([x], (o for o in p.new_outputs()))
            gc.collect()
            (y,) = q.result(timeout=30)
            np.testing.assert_array_equal(y, p(x)[0])

    def test_release_while_submitted(self):
        with accy.Session(threads=2) as s:
            p = s.compile(mlp_wire())
            x = np.ones((2, 3), np.float32)
            want = p(x)[0]
            pend = [p.submit([x], p.new_outputs()) for _ in range(20)]
            p.release()  # the runs finish, then the program is freed
            for q in pend:
                np.testing.assert_array_equal(q.result(timeout=30)[0], want)
            with self.assertRaises(accy.InvalidHandle):
                p.submit([x], p.new_outputs())


if __name__ == "__main__":
    unittest.main()
