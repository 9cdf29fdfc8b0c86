"""What the *_vs_torch.py scripts share: their common options, the median
time of a CUDA call timed with CUDA events, and a run of an accel-bench
binary for its --json results.
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile

import torch


def arg_parser(bench, reps):
    """A parser with the options every script takes: --accel-bench (the
    command line of @bench, see each module's doc), --json and --reps
    (default @reps)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--accel-bench", help=f"command line of {bench} (see the module doc)")
    ap.add_argument("--json")
    ap.add_argument("--reps", type=int, default=reps)
    return ap


def time_ms(fn, reps):
    """Median milliseconds of @reps timed calls of fn after 3 warm-ups."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def run_accel_bench_json(cmd, args, what):
    """The --json document of `cmd --device cuda:0 --json FILE args...`
    (cmd split like a shell would); exits naming @what if it fails."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "results.json")
        argv = shlex.split(cmd) + ["--device", "cuda:0", "--json", out] + args
        print("running: " + " ".join(shlex.quote(a) for a in argv), file=sys.stderr, flush=True)
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if proc.returncode != 0 or not os.path.exists(out):
            print(proc.stdout, file=sys.stderr)
            raise SystemExit(f"{what} failed (exit {proc.returncode})")
        with open(out) as f:
            return json.load(f)
