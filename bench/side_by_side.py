"""What the *_vs_torch.py scripts share: the median time of a CUDA call
timed with CUDA events, and a run of an accel-bench binary for its --json
results.
"""
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile

import torch


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
