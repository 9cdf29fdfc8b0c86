#!/usr/bin/python3
# A GEMM on the default device from Python, with numpy arrays in and out
# through the PyGObject overrides, checked with numpy: blocking, as keyword
# calls, then with submit_async on a GLib main loop.
#
#   meson devenv -C build /usr/bin/python3 ../introspection/examples/gemm.py
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import gi
gi.require_version("Accel", "1.0")
from gi.repository import Accel, GLib
import numpy as np

system = Accel.System.new()
dev = system.get_device("default")
print("devices:", ", ".join(d.get_name() for d in system.list_devices()), "- using", dev.get_name())

x = np.random.rand(64, 32).astype(np.float32)
y = np.random.rand(32, 16).astype(np.float32)
z = np.zeros((64, 16), np.float32)

# numpy arrays as the op's buffers: the result lands in z.
dev.run("gemm", a=x, b=y, c=z)
assert np.allclose(z, x @ y, rtol=1e-4)
print("gemm on numpy arrays: ok")

# Buffers made from arrays (shared, not copied, on cpu devices), an op made
# by name with its parameters as keywords, and the result as numpy.
a, b = Accel.Buffer.from_numpy(dev, x), Accel.Buffer.from_numpy(dev, y)
c = dev.alloc(Accel.DType.F32, Accel.Shape.new([64, 16]))
dev.submit(Accel.Op.new_by_name("gemm", a=a, b=b, c=c, alpha=2.0), None)
print("c:", c.shape, c.dtype)
assert np.allclose(c.numpy(), 2.0 * (x @ y), rtol=1e-4)
print("blocking gemm (alpha=2): ok")

# Async: the result delivered on this thread's main loop (the asyncio form
# is in asyncio_gemm.py).
loop = GLib.MainLoop()


def done(device, result):
    try:
        device.submit_finish(result)
        assert np.allclose(c.numpy(), 3.0 * (x @ y), rtol=1e-4)
        print("async gemm (alpha=3): ok")
    except GLib.Error as e:
        # Errors are GLib.Error in Accel's domain; e.code is an Accel.Error.
        print("failed:", e.code.value_nick, e.message)
    loop.quit()


dev.submit_async(Accel.Gemm(a=a, b=b, c=c, alpha=3.0), None, done)
loop.run()

# A bad op is refused before launch with a clear error.
try:
    dev.run("gemm", a=a, b=a, c=c)
except GLib.Error as e:
    assert e.code == Accel.Error.SHAPE_MISMATCH
    print("refused as expected:", e.message)
system.shutdown()
