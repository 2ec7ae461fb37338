#!/usr/bin/env python3
"""ONNX backend node tests through the accy importer and binding.

For each data/node/<test>/model.onnx: import the model (input shapes from the
test data), run every test_data_set_* through accy, and compare with the
expected outputs (rtol 1e-3 plus an absolute term for cancellation, see
RTOL below; NaN equal to NaN, exact for integers and bools). Prints a per-op table and a closing line

    N passed, N failed, N skipped

skipped: the importer reports the model unsupported (UnsupportedError);
failed: any other import error, a compile or run error, a wrong result, a
crash or a timeout.

Graph inputs that decide shapes (Reshape's shape, Slice's starts, ...) are
frozen to the test data's values when the importer asks for them
(NeedsConstantInput); docs/onnx.md explains why.

Usage: run_conformance.py [FILTER ...] [--jobs N] [--write-passing FILE]
                          [--check-passing FILE] [--data DIR] [-v]
FILTERs are regular expressions searched in the test name (any may match).
--check-passing FILE exits 1 when a test listed in FILE does not pass (make
check uses it; all tests still run, so the closing line is the full count).
"""

import argparse
import glob
import multiprocessing as mp
import os
import queue
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.environ.get("ACCY_TEST_SRCDIR") or os.path.dirname(os.path.dirname(HERE))
DEFAULT_DATA = "/usr/share/libonnx-testdata/data/node"
TEST_TIMEOUT_S = 120
# Float outputs: |got - want| <= RTOL |want| + ATOL + CANCEL_TERMS eps32 M,
# with M the largest finite |want| of that output.
# - RTOL and ATOL are the ONNX project's own backend-test tolerances. The
#   expected outputs are float32 results of numpy on the ONNX maintainers'
#   machines (some, the window functions, are off by 7e-5 of their scale),
#   and accy's elementwise kernels (exp, tanh, erf, pow) are a few ulps off
#   libm; 1e-3 (8000 ulps) covers both with a wide margin.
# - Both sides sum in their own order (numpy's BLAS and SIMD loops differ
#   between AMD and Intel, AVX2 and AVX-512, and a future accy may use FMA):
#   an element that is a sum of n terms is off by up to n eps32 sum|terms|,
#   however small the element is after cancellation. The node tests' data
#   are of the output's scale M, and no test sums more than 256 terms into
#   one element (the largest: LayerNormalization's statistics over 60), so
#   256 eps32 M bounds that part where a relative tolerance would not.
RTOL, ATOL = 1e-3, 1e-7
CANCEL_TERMS = 256
EPS32 = 2.0 ** -23


# ---- one test (runs in a worker process) ----------------------------------------

def _read_tensor(path):
    import onnx
    from onnx import numpy_helper
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    if t.data_type in (0, 8) or (not t.dims and not t.raw_data and t.data_type == 0):
        raise ValueError("not a tensor")
    return t.name, t.data_type, numpy_helper.to_array(t)


def _compare(got, want, kind_float):
    import numpy as np
    if got.shape != want.shape:
        return "shape %s, expected %s" % (list(got.shape), list(want.shape))
    if not kind_float:
        if not np.array_equal(got, want):
            bad = np.argwhere(got != want)
            i = tuple(bad[0])
            return "%d of %d elements differ, first at %s: %r vs %r" % (
                len(bad), want.size, list(i), got[i], want[i])
        return None
    with np.errstate(invalid="ignore", over="ignore"):
        return _compare_float(got.astype(np.float64), want.astype(np.float64))


def _compare_float(g, w):
    import numpy as np
    both_nan = np.isnan(g) & np.isnan(w)
    same_inf = np.isinf(w) & (g == w)
    finite = np.abs(w[np.isfinite(w)])
    scale = float(finite.max()) if finite.size else 0.0
    atol = ATOL + CANCEL_TERMS * EPS32 * scale
    ok = both_nan | same_inf | (np.abs(g - w) <= atol + RTOL * np.abs(w))
    if not ok.all():
        bad = np.argwhere(~ok)
        i = tuple(bad[0])
        return "%d of %d elements differ, first at %s: %r vs %r" % (
            len(bad), w.size, list(i), g[i], w[i])
    return None


def run_test(test_dir):
    """-> (status, reason) with status passed / failed / skipped."""
    import numpy as np
    import onnx
    import accy
    import accy.onnx as ao
    from accy import dtypes as adt

    model = onnx.load(os.path.join(test_dir, "model.onnx"))
    inits = set(i.name for i in model.graph.initializer)
    graph_inputs = [vi for vi in model.graph.input if vi.name not in inits]
    sets = sorted(glob.glob(os.path.join(test_dir, "test_data_set_*")))
    if not sets:
        return "skipped", "no test data"
    datasets = []
    for ds in sets:
        ins, outs = {}, []
        try:
            for k, vi in enumerate(graph_inputs):
                p = os.path.join(ds, "input_%d.pb" % k)
                if not os.path.exists(p):
                    continue  # an optional input left out
                _, _, a = _read_tensor(p)
                ins[vi.name] = a
            for k in range(len(model.graph.output)):
                _, dt, a = _read_tensor(os.path.join(ds, "output_%d.pb" % k))
                declared = model.graph.output[k].type.tensor_type.elem_type
                if dt == 16 or (declared == 16 and a.dtype == np.uint16):
                    a = adt.bf16_to_f32(a)  # bfloat16 bits: compare as floats
                outs.append(a)
        except Exception as e:  # sequences, optionals, strings
            return "skipped", "test data is not plain tensors (%s)" % type(e).__name__
        datasets.append((ins, outs))

    frozen = set()
    wire_cache = {}
    with accy.Session(threads=1) as session:
        for ins, want in datasets:
            for _ in range(len(graph_inputs) + 1):
                consts = {n: ins[n] for n in frozen}
                shapes = {n: a.shape for n, a in ins.items() if n not in frozen}
                key = tuple(sorted((n, consts[n].tobytes()) for n in consts))
                try:
                    wire = wire_cache.get(key)
                    if wire is None:
                        wire = ao.import_model(model, shapes, consts)
                        wire_cache[key] = wire
                    break
                except ao.NeedsConstantInput as e:
                    if e.input_name in frozen or e.input_name not in ins:
                        return "skipped", str(e)
                    frozen.add(e.input_name)
                except ao.UnsupportedError as e:
                    return "skipped", str(e)
                except Exception as e:
                    return "failed", "import: %s: %s" % (type(e).__name__, e)
            try:
                with session.compile(wire) as prog:
                    args = []
                    for info in prog.inputs:
                        if info.name not in ins:
                            return "failed", "program input %r has no test data" % info.name
                        a = ins[info.name]
                        if info.is_bf16 and a.dtype != np.uint16:
                            a = adt.f32_to_bf16(a)
                        args.append(np.array(a, dtype=info.dtype, order="C"))
                    got = prog(*args)
                    kinds = [o.is_bf16 for o in prog.outputs]
            except accy.Error as e:
                return "failed", "run: %s" % e
            if len(got) != len(want):
                return "failed", "%d outputs, expected %d" % (len(got), len(want))
            for k, (g, w, bf) in enumerate(zip(got, want, kinds)):
                if bf:
                    g = adt.bf16_to_f32(g)
                w = np.asarray(w)
                if not bf and g.dtype != w.dtype:
                    return "failed", "output %d: dtype %s, expected %s" % (k, g.dtype, w.dtype)
                msg = _compare(g, w, w.dtype.kind in "fc" or bf)
                if msg:
                    return "failed", "output %d: %s" % (k, msg)
    return "passed", "frozen inputs: %s" % ",".join(sorted(frozen)) if frozen else ""


# ---- the pool -----------------------------------------------------------------

def _worker(tasks, results):
    sys.path.insert(0, os.path.join(SRCDIR, "python"))
    while True:
        item = tasks.get()
        if item is None:
            return
        results.put(("start", item, os.getpid()))
        t0 = time.time()
        try:
            status, reason = run_test(item)
        except Exception as e:
            status, reason = "failed", "runner: %s: %s" % (type(e).__name__, e)
        results.put(("done", item, (status, reason, time.time() - t0)))


def run_all(dirs, jobs):
    """{test dir: (status, reason, seconds)}; a crashed or hung test is failed."""
    ctx = mp.get_context("fork")
    tasks, results = ctx.Queue(), ctx.Queue()
    for d in dirs:
        tasks.put(d)
    out = {}
    workers = {}
    current = {}  # pid -> (test, start time)

    def spawn():
        p = ctx.Process(target=_worker, args=(tasks, results), daemon=True)
        p.start()
        workers[p.pid] = p

    for _ in range(max(1, min(jobs, len(dirs)))):
        spawn()
    while len(out) < len(dirs):
        try:
            kind, test, extra = results.get(timeout=0.5)
            if kind == "start":
                current[extra] = (test, time.time())
            else:
                out[test] = extra
                for pid, (t, _) in list(current.items()):
                    if t == test:
                        del current[pid]
        except queue.Empty:
            pass
        for pid, p in list(workers.items()):
            cur = current.get(pid)
            if not p.is_alive():
                del workers[pid]
                if cur and cur[0] not in out:
                    out[cur[0]] = ("failed", "crashed (exit code %s)" % p.exitcode, 0.0)
                current.pop(pid, None)
                if len(out) < len(dirs):
                    spawn()
            elif cur and time.time() - cur[1] > TEST_TIMEOUT_S:
                p.kill()
                p.join()
                del workers[pid]
                out[cur[0]] = ("failed", "timed out after %d s" % TEST_TIMEOUT_S, 0.0)
                current.pop(pid, None)
                spawn()
    for _ in workers:
        tasks.put(None)
    for p in workers.values():
        p.join(timeout=5)
    return out


# ---- reporting --------------------------------------------------------------------

def _op_of(test_dir, schema_names):
    """The ONNX op a test is about: its only node's op, else the longest op
    name that prefixes the test name (underscores ignored)."""
    import onnx
    name = os.path.basename(test_dir)[len("test_"):].replace("_", "").lower()
    try:
        nodes = onnx.load(os.path.join(test_dir, "model.onnx"), load_external_data=False).graph.node
        if len(nodes) == 1:
            return nodes[0].op_type
    except Exception:
        pass
    best = ""
    for s in schema_names:
        if name.startswith(s.lower()) and len(s) > len(best):
            best = s
    return best or "(other)"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("filters", nargs="*", help="regular expressions matched against test names")
    ap.add_argument("--jobs", "-j", type=int, default=2)
    ap.add_argument("--data", default=os.environ.get("ONNX_TESTDATA", DEFAULT_DATA))
    ap.add_argument("--write-passing", metavar="FILE")
    ap.add_argument("--check-passing", metavar="FILE")
    ap.add_argument("-v", "--verbose", action="store_true", help="list skipped tests too")
    args = ap.parse_args(argv)

    dirs = sorted(d for d in glob.glob(os.path.join(args.data, "test_*"))
                  if os.path.exists(os.path.join(d, "model.onnx")))
    if not dirs:
        print("no ONNX node tests under %s" % args.data, file=sys.stderr)
        return 77
    listed = None
    if args.check_passing:
        with open(args.check_passing) as f:
            listed = [ln.strip() for ln in f if ln.strip() and not ln.startswith("#")]
        by_name = {os.path.basename(d): d for d in dirs}
        missing = [n for n in listed if n not in by_name]
        if missing:
            print("listed tests missing from the test data: %s" % " ".join(missing))
            return 1
    if args.filters:
        pats = [re.compile(f) for f in args.filters]
        dirs = [d for d in dirs if any(p.search(os.path.basename(d)) for p in pats)]

    t0 = time.time()
    results = run_all(dirs, args.jobs)
    wall = time.time() - t0

    import onnx.defs
    schemas = sorted(set(s.name for s in onnx.defs.get_all_schemas_with_history()))
    table = {}
    for d in dirs:
        status = results[d][0]
        row = table.setdefault(_op_of(d, schemas), {"passed": 0, "failed": 0, "skipped": 0})
        row[status] += 1
    print("%-32s %7s %7s %7s" % ("op", "passed", "failed", "skipped"))
    for op in sorted(table):
        r = table[op]
        print("%-32s %7d %7d %7d" % (op, r["passed"], r["failed"], r["skipped"]))
    print()
    for d in dirs:
        status, reason, _ = results[d]
        if status == "failed" or (args.verbose and status == "skipped"):
            print("%s %s: %s" % (status.upper(), os.path.basename(d), reason[:300]))
    counts = {s: sum(1 for d in dirs if results[d][0] == s) for s in ("passed", "failed",
                                                                      "skipped")}
    print("time %.1f s with %d jobs" % (wall, args.jobs))
    if args.write_passing:
        with open(args.write_passing, "w") as f:
            f.write("# ONNX node tests that pass (tests/onnx/run_conformance.py "
                    "--write-passing); make check fails if one stops passing.\n")
            for d in dirs:
                if results[d][0] == "passed":
                    f.write(os.path.basename(d) + "\n")
    print("%d passed, %d failed, %d skipped" % (counts["passed"], counts["failed"],
                                                counts["skipped"]))
    if listed is not None:
        ran = set(os.path.basename(d) for d in dirs)
        regressed = [n for n in listed if n in ran and results[by_name[n]][0] != "passed"]
        if regressed:
            print("REGRESSED (listed in %s but not passing): %s"
                  % (args.check_passing, " ".join(regressed)))
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
