#!/usr/bin/python3
# Dispatch overhead of the Python binding: the p50 round trip of a blocking
# submit of a no-op (a `fill` of a one-element buffer) on cpu:0 from Python,
# beside the same figure from C (`accel-bench dispatch`), measured in the
# same run. Target: Python at most 2x C.
#
#   /usr/bin/python3 introspection/bench_dispatch.py --build build
#   meson devenv -C build /usr/bin/python3 ../introspection/bench_dispatch.py
#
# With --build, the environment of the uninstalled build is set up here
# (GI_TYPELIB_PATH, LD_LIBRARY_PATH, ACCEL_PLUGIN_PATH, a private registry);
# under `meson devenv` it is already there.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_args():
    p = argparse.ArgumentParser(description="Python vs C p50 round trip of a blocking no-op submit on cpu:0")
    p.add_argument("--build", help="the meson build directory (sets up its environment)")
    p.add_argument("--accel-bench", help="the accel-bench program (default: BUILD/tools/accel-bench or PATH)")
    p.add_argument("-n", type=int, default=20000, help="timed round trips per Python run (default 20000)")
    p.add_argument("--rounds", type=int, default=5,
                   help="C and Python runs, interleaved; the best of each is the figure (default 5)")
    p.add_argument("--quick", action="store_true", help="fewer iterations (C: --quick, Python: -n 2000)")
    p.add_argument("--json", help="also write the figures as JSON")
    return p.parse_args()


def setup_env(args):
    """Re-executes with the uninstalled build's environment when --build is given."""
    if not args.build or os.environ.get("ACCEL_BENCH_DISPATCH_CHILD"):
        return
    build = os.path.abspath(args.build)
    env = dict(os.environ)
    env["ACCEL_BENCH_DISPATCH_CHILD"] = "1"
    env["GI_TYPELIB_PATH"] = os.pathsep.join(filter(None, [os.path.join(build, "introspection"),
                                                           env.get("GI_TYPELIB_PATH")]))
    env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [os.path.join(build, "core"),
                                                           env.get("LD_LIBRARY_PATH")]))
    env["ACCEL_PLUGIN_PATH"] = os.path.join(build, "plugins", "cpu")
    env["ACCEL_PLUGIN_SYSTEM_PATH"] = ""
    scanner = os.path.join(build, "tools", "accel-plugin-scanner")
    if os.path.exists(scanner):
        env["ACCEL_PLUGIN_SCANNER"] = scanner
    tmp = tempfile.mkdtemp(prefix="accel-bench-dispatch-")
    env["ACCEL_REGISTRY"] = os.path.join(tmp, "registry.bin")
    env["XDG_CACHE_HOME"] = tmp
    try:
        status = subprocess.call([sys.executable] + sys.argv, env=env)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(status)


def find_accel_bench(args):
    if args.accel_bench:
        return args.accel_bench
    if args.build:
        path = os.path.join(os.path.abspath(args.build), "tools", "accel-bench")
        if os.path.exists(path):
            return path
    path = shutil.which("accel-bench")
    if path:
        return path
    sys.exit("accel-bench not found: pass --build or --accel-bench")


def c_blocking_p50(accel_bench, quick):
    """Runs `accel-bench dispatch` on cpu:0 and returns its blocking p50 in µs."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "dispatch.json")
        cmd = [accel_bench, "--device", "cpu:0", "--json", out] + (["--quick"] if quick else []) + ["dispatch"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with open(out) as f:
            results = json.load(f)["results"]
    for r in results:
        if r["name"] == "dispatch.submit-blocking.p50":
            return r["value"]
    sys.exit("accel-bench reported no dispatch.submit-blocking.p50")


def python_blocking_p50(dev, op, n):
    """The p50 of n blocking round trips, in µs, after n/10 untimed ones."""
    submit = dev.submit
    for _ in range(n // 10):
        submit(op, None)
    samples = [0] * n
    clock = time.perf_counter_ns
    for i in range(n):
        t0 = clock()
        submit(op, None)
        samples[i] = clock() - t0
    return statistics.median(samples) / 1e3


def main():
    args = parse_args()
    setup_env(args)
    accel_bench = find_accel_bench(args)
    n = 2000 if args.quick else args.n

    import gi
    gi.require_version("Accel", "1.0")
    from gi.repository import Accel

    system = Accel.System.new()
    dev = system.get_device("cpu:0")
    buf = dev.alloc(Accel.DType.F32, Accel.Shape.new([1]))
    op = Accel.Fill(dst=buf, value=1.0)

    c_runs, py_runs = [], []
    for _ in range(args.rounds):
        c_runs.append(c_blocking_p50(accel_bench, args.quick))
        py_runs.append(python_blocking_p50(dev, op, n))
    system.shutdown()

    # Both sides spin briefly before they park (accel-dispatcher.c), so on a
    # busy machine a run can fall from the spinning path (a few µs) to a
    # futex wake-up (~100 µs). As timeit advises, the best run is the figure
    # least disturbed by other load; the medians are printed beside it.
    c, py = min(c_runs), min(py_runs)
    ratio = py / c
    c_med, py_med = statistics.median(c_runs), statistics.median(py_runs)
    fmt = lambda runs: ", ".join(f"{v:.2f}" for v in runs)  # noqa: E731
    print(f"blocking submit of a 1-element fill on cpu:0: p50 round trip, best of {args.rounds} "
          f"interleaved runs ({n} round trips per Python run)")
    print(f"  C      (accel-bench dispatch) {c:8.2f} us   median {c_med:8.2f} us   runs: {fmt(c_runs)}")
    print(f"  Python (PyGObject)            {py:8.2f} us   median {py_med:8.2f} us   runs: {fmt(py_runs)}")
    print(f"  ratio Python / C              {ratio:8.2f}      median {py_med / c_med:8.2f}      "
          f"target <= 2.00: {'met' if ratio <= 2.0 else 'NOT met'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"name": "dispatch.python-submit-blocking.p50", "unit": "us",
                       "python": py, "c": c, "ratio": ratio,
                       "python_median": py_med, "c_median": c_med,
                       "python_runs": py_runs, "c_runs": c_runs, "n": n}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
