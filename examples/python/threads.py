#!/usr/bin/env python3
"""A batch of concurrent calls from Python threads. ctypes releases the GIL
during each library call, so the threads' invokes of one program run in
parallel (accy allows many threads to invoke one handle at once).

    PYTHONPATH=python python3 examples/python/threads.py
"""

import os
import threading
import time

import numpy as np

import accy

TEXT = """
%x = parameter "x" : f32[64,256]
%w = iota dim=0 : f32[256,256]
%h = dot_general %x, %w lhs_contract=[1] rhs_contract=[0]
%y = tanh %h
output %y "y"
"""

N_THREADS, CALLS = 4, 50

with accy.Session(threads=1) as session:      # one worker per invoke: parallelism from threads
    prog = session.compile(accy.assemble(TEXT))
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((64, 256)).astype(np.float32) * 1e-3 for _ in range(N_THREADS)]
    want = [prog(x)[0] for x in xs]
    failures = []

    def work(i):
        out = prog.new_outputs()               # each thread owns its output buffers
        for _ in range(CALLS):
            prog.invoke([xs[i]], out)
            if not np.array_equal(out[0], want[i]):
                failures.append(i)

    t0 = time.perf_counter()
    threads = [threading.Thread(target=work, args=(i,)) for i in range(N_THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    dt = time.perf_counter() - t0

print("%d threads x %d calls in %.3f s on %d CPUs; results identical: %s"
      % (N_THREADS, CALLS, dt, os.cpu_count(), not failures))
assert not failures
