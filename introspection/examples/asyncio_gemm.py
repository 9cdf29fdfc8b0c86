#!/usr/bin/python3
# Ops awaited on an asyncio loop: Device.submit_async without a callback
# returns an awaitable (the GIO pair wrapped in an asyncio future), so
# several ops can be in flight while the coroutine waits.
#
#   meson devenv -C build /usr/bin/python3 ../introspection/examples/asyncio_gemm.py
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import asyncio

import gi
gi.require_version("Accel", "1.0")
from gi.repository import Accel, GLib
import numpy as np


async def main(dev):
    rng = np.random.default_rng()
    jobs = []
    for _ in range(4):
        m, k, n = (int(v) for v in rng.integers(1, 200, size=3))
        x = rng.standard_normal((m, k), dtype=np.float32)
        y = rng.standard_normal((k, n), dtype=np.float32)
        c = dev.alloc(Accel.DType.F32, Accel.Shape.new([m, n]))
        op = Accel.Gemm(a=Accel.Buffer.from_numpy(dev, x), b=Accel.Buffer.from_numpy(dev, y), c=c)
        jobs.append((x, y, c, dev.submit_async(op)))
    await asyncio.gather(*(job[3] for job in jobs))
    for x, y, c, _ in jobs:
        assert np.allclose(c.numpy(), x.astype(np.float64) @ y, rtol=1e-3, atol=1e-3)
    print(f"{len(jobs)} gemms awaited together: ok")

    # A refused op raises where it is awaited.
    x, y, c, _ = jobs[0]
    wrong = dev.alloc(Accel.DType.F32, Accel.Shape.new([c.shape[0] + 1, c.shape[1]]))
    try:
        await dev.submit_async(Accel.Gemm(a=Accel.Buffer.from_numpy(dev, x), b=Accel.Buffer.from_numpy(dev, y),
                                          c=wrong))
        raise AssertionError("a bad gemm completed")
    except GLib.Error as e:
        assert e.code == Accel.Error.SHAPE_MISMATCH
        print(f"awaited error: {e.code.value_nick}: {e.message}")


system = Accel.System.new()
asyncio.run(main(system.get_device("default")))
system.shutdown()
