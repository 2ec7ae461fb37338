#!/usr/bin/env python3
"""perf/ort_profile.py: ONNX Runtime's per-node times from its profile JSON.

    ACCY_PERF_ORT_PROFILE=/tmp/ort perf/perf_harness --filter '^resnet18_b1$' --threads 1 ...
    perf/ort_profile.py /tmp/ort_*.json [--top 30]

ORT writes one JSON file per session when the harness runs it with
ACCY_PERF_ORT_PROFILE set (perf/perf_ort.c). Every run of a node is an event
of category "Node" named "<node>_kernel_time"; this prints, per node, the
fastest of its runs (in ms, the harness's runs include warm-up ones), the
node's op type and output shape, largest first, and the sum of those minima.
Compare with perf/perf_prof's per-task times for accy (perf/README.md,
"Per-node profiles").
"""
import json
import sys


def main(argv):
    top = 30
    files = []
    i = 0
    while i < len(argv):
        if argv[i] == "--top" and i + 1 < len(argv):
            top = int(argv[i + 1])
            i += 2
            continue
        files.append(argv[i])
        i += 1
    if not files:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    for path in files:
        with open(path) as f:
            events = json.load(f)
        best = {}
        info = {}
        for e in events:
            if e.get("cat") != "Node" or not e.get("name", "").endswith("_kernel_time"):
                continue
            name = e["name"][: -len("_kernel_time")]
            dur = float(e.get("dur", 0)) / 1000.0
            if name not in best or dur < best[name]:
                best[name] = dur
            args = e.get("args", {})
            shape = args.get("output_type_shape", "")
            info[name] = (args.get("op_name", "?"), json.dumps(shape, separators=(",", ":")))
        rows = sorted(best.items(), key=lambda kv: -kv[1])
        print("%s: %d nodes, sum of per-node minima %.3f ms" % (path, len(rows), sum(best.values())))
        for name, ms in rows[:top]:
            op, shape = info[name]
            print("  %8.3f ms  %-18s %-40s %s" % (ms, op, name[:40], shape[:60]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
