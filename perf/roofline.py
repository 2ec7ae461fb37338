#!/usr/bin/env python3
"""perf/roofline.py: where a program's time goes against the FMA peak.

    perf/roofline.py perf/cache/full/mobilenetv2_b1.accyb --peak 116.4 \
        [--iterations 100] [--top 20] [--threads 1]

Runs perf/perf_prof on the program (each task's fastest of the runs), reads
the tasks' nodes from `tools/accy describe --plan` and the operands' shapes
from `tools/accy dis`, and counts each convolution's and dot_general's
multiply-adds (2 FLOPs each, padding and fused epilogues not counted). It
prints the time per kind of task (pointwise convolutions, depthwise ones,
other convolutions, products, pre-passes, the rest) with the fraction of
the peak each kind reaches, then the tasks that lose the most time against
their FLOPs at the peak ("lost": their time less FLOPs / peak). Give --peak
as the harness's FMA bound of the same hour (perf_harness prints it as
"fma" GFLOP/s; the default is 0, which prints times only). Run from the
build tree, after `make perf perf/perf_prof`.
"""
import re
import subprocess
import sys


def run(argv):
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout


def shapes_and_products(program):
    """Every node's dims, and per convolution or dot_general its operands
    and attributes, from the text form."""
    dims, nodes = {}, {}
    for line in run(["tools/accy", "dis", program]).splitlines():
        m = re.match(r"%(\S+) = (\w+)(.*?) : \w+\[([0-9,]*)\]", line)
        if not m:
            continue
        name, op, rest, d = m.groups()
        dims[name] = [int(x) for x in d.split(",")] if d else []
        if op in ("convolution", "dot_general"):
            nodes[name] = (op, re.findall(r"%([^\s,]+)", rest), rest)
    return dims, nodes


def flops(dims, node):
    """2 x the multiply-adds of a convolution or dot_general node."""
    op, operands, attrs = node[1]
    out = dims[node[0]]
    if op == "convolution":
        w = dims[operands[1]]  # [O, C / groups, spatial...]
        n = 2 * out[0] * out[1]
        for v in w[1:]:
            n *= v
        for v in out[2:]:
            n *= v
        return n
    lhs = dims[operands[0]]
    contract = re.search(r"lhs_contract=\[([0-9,]*)\]", attrs)
    k = 1
    for a in contract.group(1).split(",") if contract and contract.group(1) else []:
        k *= lhs[int(a)]
    n = 2 * k
    for v in out:
        n *= v
    return n


def kind_of(dims, node, how):
    op, operands, attrs = node[1]
    if op == "dot_general":
        return "dot_general"
    w = dims[operands[1]]
    g = re.search(r"groups=(\d+)", attrs)
    if g and int(g.group(1)) > 1 and w[1] == 1:
        return "depthwise"
    if all(v == 1 for v in w[2:]):
        return "conv 1x1"
    return "conv kxk"


def main(argv):
    program, peak, iters, top, threads = None, 0.0, "100", 20, "1"
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--peak", "--iterations", "--top", "--threads") and i + 1 < len(argv):
            v = argv[i + 1]
            if a == "--peak":
                peak = float(v)
            elif a == "--iterations":
                iters = v
            elif a == "--top":
                top = int(v)
            else:
                threads = v
            i += 2
            continue
        program = a
        i += 1
    if not program:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    dims, nodes = shapes_and_products(program)
    tasks = {}
    for line in run(["tools/accy", "describe", "--plan", program]).splitlines():
        m = re.match(r"task (\d+): (.*)", line)
        if not m:
            continue
        text = m.group(2)
        first = re.search(r"%(\S+) (convolution|dot_general)\b", text)
        node = (first.group(1), nodes[first.group(1)]) if first and first.group(1) in nodes else None
        tasks[int(m.group(1))] = (text.startswith("pre-pass"), node, text)
    prof = run(["perf/perf_prof", program, "--iterations", iters, "--top", "100000",
                "--threads", threads])
    kinds, rows = {}, []
    for line in prof.splitlines():
        m = re.match(r"\s+([0-9.]+)\s+[0-9.]+\s+(\d+)\s+(\S+)\s+(\S+)\s+(\d+)\s*$", line)
        if not m:
            continue
        ms, t = float(m.group(1)), int(m.group(2))
        pre, node, text = tasks.get(t, (False, None, ""))
        fl = 0
        if pre:
            kind = "pre-pass"
        elif node:
            kind, fl = kind_of(dims, node, text), flops(dims, node)
            ideal = fl / peak / 1e6 if peak else 0.0
            rows.append((ms - ideal, ms, ideal, t, kind, node[0], m.group(4), m.group(5)))
        else:
            kind = "other"
        k = kinds.setdefault(kind, [0.0, 0, 0])
        k[0] += ms
        k[1] += fl
        k[2] += 1
    total = sum(v[0] for v in kinds.values())
    print(f"{program}: {total:.3f} ms as the sum of each task's fastest of {iters} runs"
          f" at {threads} thread(s)" + (f"; FMA peak {peak} GFLOP/s" if peak else ""))
    for kind, (ms, fl, n) in sorted(kinds.items(), key=lambda kv: -kv[1][0]):
        frac = f"  {fl / ms / 1e6 / peak * 100:5.1f}% of the peak" if fl and peak else ""
        print(f"  {kind:12s} {n:4d} tasks {ms:8.3f} ms ({ms / total * 100:4.1f}%)"
              f" {fl / 1e6:9.1f} MFLOP{frac}")
    if peak and top:
        print(f"the {top} tasks that lose the most against FLOPs / peak:")
        for lost, ms, ideal, t, kind, name, result, tiles in sorted(rows, reverse=True)[:top]:
            print(f"  lost {lost:7.3f} ms  task {t:4d} %{name} {kind:11s} {result:22s}"
                  f" {ms:7.3f} ms, at the peak {ideal:7.3f} ({ideal / ms * 100:5.1f}%),"
                  f" {tiles} tiles")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
