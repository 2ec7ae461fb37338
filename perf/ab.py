#!/usr/bin/env python3
"""perf/ab.py: two or more builds of perf_prof on one program, interleaved.

    perf/ab.py PROGRAM VARIANT VARIANT... [--rounds 10] [--iterations 30] [--threads 1]

A VARIANT is a perf_prof binary (a copy of perf/perf_prof saved from one
build), optionally followed by ":" and comma-separated VAR=VALUE settings
for its environment, for example /tmp/old_prof /tmp/new_prof or
perf/perf_prof:ACCY_MAX_ISA=avx2 perf/perf_prof:ACCY_MAX_ISA=avx512.

Each round runs every variant once, the order turned by one each round
(perf_prof PROGRAM --iterations N --threads T; one thread unless --threads
says more, in perf_prof's mode of two spinning threads that perf/README.md
describes), and takes the run's fastest launch; at the end it prints per
variant the least and the median of those over the rounds.
Interleaving shares the machine's slow and quiet spells among the variants;
the median says more than the least where the program reads memory (its
time then moves with other tenants' traffic), the least where it works in
the caches. Every variant runs with the same environment apart from its own
settings, given to the child process (not expanded by a shell), so that two
variants of one binary differ only in them.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys


def parse_variant(text):
    path, _, settings = text.partition(":")
    env = {}
    for item in filter(None, settings.split(",")):
        key, eq, value = item.partition("=")
        if not eq or not key:
            sys.exit("perf/ab.py: bad setting %r in variant %r (want VAR=VALUE)" % (item, text))
        env[key] = value
    if not os.access(path, os.X_OK):
        sys.exit("perf/ab.py: %s is not an executable perf_prof" % path)
    return path, env


def fastest(path, env, program, iterations, threads):
    """The fastest launch of one perf_prof run, in ms."""
    child_env = dict(os.environ)
    child_env.update(env)
    out = subprocess.run([path, program, "--iterations", str(iterations), "--threads",
                          str(threads)], env=child_env,
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("perf/ab.py: %s failed (%d): %s" % (path, out.returncode, out.stderr.strip()))
    m = re.search(r"per run: [0-9.]+ ms mean, ([0-9.]+) ms fastest", out.stdout)
    if not m:
        sys.exit("perf/ab.py: no timing line from %s" % path)
    return float(m.group(1))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("program")
    ap.add_argument("variants", nargs="+")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--iterations", type=int, default=30)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    if len(args.variants) < 2:
        sys.exit("perf/ab.py: give at least two variants")
    variants = [parse_variant(v) for v in args.variants]
    times = [[] for _ in variants]
    for r in range(args.rounds):
        # Each round starts one variant further on, so that no variant is
        # always first (three runs of one binary on a program that streams
        # from memory gave medians of 1.86, 2.09 and 2.10 ms in a fixed order).
        for j in range(len(variants)):
            i = (r + j) % len(variants)
            path, env = variants[i]
            times[i].append(fastest(path, env, args.program, args.iterations, args.threads))
    width = max(len(v) for v in args.variants)
    for text, ts in zip(args.variants, times):
        print("%-*s  least %.3f ms  median %.3f ms  (%d rounds)" %
              (width, text, min(ts), statistics.median(ts), len(ts)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
