#!/usr/bin/python3
# An all-reduce from Python, checked with numpy: over four CPU devices, and
# over every CUDA device where there are some (one rank per GPU).
#
#   meson devenv -C build /usr/bin/python3 introspection/examples/all_reduce.py
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import gi
gi.require_version("Accel", "1.0")
from gi.repository import Accel, GLib
import numpy as np


def all_reduce(devs, n=100_003):
    """Sums one array per device, in place on every device."""
    comm = Accel.Communicator.new(devs)
    xs = [np.random.rand(n).astype(np.float32) for _ in devs]
    bufs = []
    for dev, x in zip(devs, xs):
        b = dev.alloc(Accel.DType.F32, Accel.Shape.new([n]))
        b.upload(GLib.Bytes.new(x.tobytes()))
        bufs.append(b)
    # One op per rank, in rank order; in place (src is dst).
    comm.submit([Accel.AllReduce.new(b, b, Accel.Reduction.SUM) for b in bufs], None)
    want = np.sum(np.stack(xs).astype(np.float64), axis=0)
    for b in bufs:
        got = np.frombuffer(b.download().get_data(), dtype=np.float32)
        assert np.allclose(got, want, rtol=1e-6), "all-reduce differs from numpy"
    print(f"all-reduce over {', '.join(d.get_name() for d in devs)}: ok")


system = Accel.System.new()
system.props.cpu_devices = 4              # or ACCEL_CPU_DEVICES=4 in the environment
all_reduce([system.get_device(f"cpu:{i}") for i in range(4)])

gpus = [d for d in system.list_devices() if d.get_backend_name() == "cuda"]
if gpus:
    all_reduce(gpus)                      # NCCL, one rank per GPU
else:
    print("no CUDA device: the CUDA all-reduce is skipped")
