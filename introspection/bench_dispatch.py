#!/usr/bin/python3
# Overhead of the Python binding, each figure beside the same work in C
# (accel-bench), measured in the same run:
#
# - dispatch: the p50 round trip of a blocking submit of a no-op (a `fill`
#   of a one-element buffer) on cpu:0, beside `accel-bench dispatch`.
#   Target: Python at most 2x C.
# - numpy: a 1 MiB f32 numpy array through the overrides,
#   `Accel.Buffer.from_numpy` + `dev.run("scal", ...)` + `buf.numpy()`,
#   beside the same work in C through DLPack (`accel-bench interop`:
#   borrow, scal, lend back). Target: Python at most 1.2x C, which holds
#   only if the Python path copies nothing more than C does.
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
    p = argparse.ArgumentParser(description="Python vs C on cpu:0: p50 of a blocking no-op submit, and of "
                                            "a 1 MiB numpy array through from_numpy + scal + numpy()")
    p.add_argument("--build", help="the meson build directory (sets up its environment)")
    p.add_argument("--accel-bench", help="the accel-bench program (default: BUILD/tools/accel-bench or PATH)")
    p.add_argument("-n", type=int, default=20000, help="timed round trips per Python run (default 20000)")
    p.add_argument("--rounds", type=int, default=5,
                   help="C and Python runs, interleaved; the best of each is the figure (default 5)")
    p.add_argument("--numpy-n", type=int, default=2000,
                   help="timed numpy round trips per Python run (default 2000)")
    p.add_argument("--quick", action="store_true",
                   help="fewer iterations (C: --quick, Python: -n 2000, --numpy-n 200)")
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
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.path.join(HERE, "python"), env.get("PYTHONPATH")]))
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


def c_figure(accel_bench, quick, group, name):
    """Runs `accel-bench GROUP` on cpu:0 and returns the value of its result @name."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, group + ".json")
        cmd = [accel_bench, "--device", "cpu:0", "--json", out] + (["--quick"] if quick else []) + [group]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with open(out) as f:
            results = json.load(f)["results"]
    for r in results:
        if r["name"] == name:
            return r["value"]
    sys.exit(f"accel-bench reported no {name}")


def c_blocking_p50(accel_bench, quick):
    return c_figure(accel_bench, quick, "dispatch", "dispatch.submit-blocking.p50")


def c_numpy_p50(accel_bench, quick):
    return c_figure(accel_bench, quick, "interop", "interop.dlpack-scal-1mib.p50")


def python_numpy_p50(Accel, dev, x, n):
    """The p50, in µs, of n round trips of a numpy array through the
    overrides: from_numpy, run("scal"), numpy(), after n/10 untimed ones."""
    from_numpy = Accel.Buffer.from_numpy
    run = dev.run
    samples = [0] * n
    clock = time.perf_counter_ns
    for i in range(-(n // 10), n):
        t0 = clock()
        buf = from_numpy(dev, x)
        run("scal", x=buf, alpha=1.0001)
        y = buf.numpy()
        y[0]   # what a caller reads
        t1 = clock()
        del buf, y
        if i >= 0:
            samples[i] = t1 - t0
    return statistics.median(samples) / 1e3


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

    import numpy as np
    if not hasattr(Accel.Buffer, "from_numpy"):
        sys.exit("the PyGObject overrides are not loaded: put introspection/python on PYTHONPATH "
                 "(--build and meson devenv do)")

    system = Accel.System.new()
    dev = system.get_device("cpu:0")
    buf = dev.alloc(Accel.DType.F32, Accel.Shape.new([1]))
    op = Accel.Fill(dst=buf, value=1.0)
    x = np.random.default_rng().uniform(-1, 1, 256 * 1024).astype(np.float32)
    numpy_n = 200 if args.quick else args.numpy_n

    c_runs, py_runs, c_np_runs, py_np_runs = [], [], [], []
    for _ in range(args.rounds):
        c_runs.append(c_blocking_p50(accel_bench, args.quick))
        py_runs.append(python_blocking_p50(dev, op, n))
        c_np_runs.append(c_numpy_p50(accel_bench, args.quick))
        py_np_runs.append(python_numpy_p50(Accel, dev, x, numpy_n))
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
    c_np, py_np = min(c_np_runs), min(py_np_runs)
    np_ratio = py_np / c_np
    c_np_med, py_np_med = statistics.median(c_np_runs), statistics.median(py_np_runs)
    print(f"1 MiB f32 array on cpu:0: from_numpy + scal + numpy() (C: DLPack borrow + scal + host loan), "
          f"p50, best of {args.rounds} interleaved runs ({numpy_n} round trips per Python run)")
    print(f"  C      (accel-bench interop)  {c_np:8.2f} us   median {c_np_med:8.2f} us   runs: {fmt(c_np_runs)}")
    print(f"  Python (overrides, numpy)     {py_np:8.2f} us   median {py_np_med:8.2f} us   runs: {fmt(py_np_runs)}")
    print(f"  ratio Python / C              {np_ratio:8.2f}      median {py_np_med / c_np_med:8.2f}      "
          f"target <= 1.20: {'met' if np_ratio <= 1.2 else 'NOT met'}")
    print(f"  ({os.cpu_count()} CPUs, load average {', '.join(f'{v:.2f}' for v in os.getloadavg())})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([{"name": "dispatch.python-submit-blocking.p50", "unit": "us",
                        "python": py, "c": c, "ratio": ratio,
                        "python_median": py_med, "c_median": c_med,
                        "python_runs": py_runs, "c_runs": c_runs, "n": n},
                       {"name": "interop.python-numpy-scal-1mib.p50", "unit": "us",
                        "python": py_np, "c": c_np, "ratio": np_ratio,
                        "python_median": py_np_med, "c_median": c_np_med,
                        "python_runs": py_np_runs, "c_runs": c_np_runs, "n": numpy_n}], f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
