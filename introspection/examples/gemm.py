#!/usr/bin/python3
# A GEMM on the default device from Python, checked with numpy: once with
# the blocking submit, once with submit_async on a GLib main loop.
#
#   meson devenv -C build /usr/bin/python3 introspection/examples/gemm.py
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
a = dev.alloc(Accel.DType.F32, Accel.Shape.new([64, 32])); a.upload(GLib.Bytes.new(x.tobytes()))
b = dev.alloc(Accel.DType.F32, Accel.Shape.new([32, 16])); b.upload(GLib.Bytes.new(y.tobytes()))
c = dev.alloc(Accel.DType.F32, Accel.Shape.new([64, 16]))

# Blocking: an op made by name; its parameters are GObject properties.
op = Accel.Op.new_by_name("gemm")
op.props.a, op.props.b, op.props.c = a, b, c
dev.submit(op, None)
got = np.frombuffer(c.download().get_data(), dtype=np.float32).reshape(64, 16)
assert np.allclose(got, x @ y, rtol=1e-4)
print("blocking gemm: ok")

# Async: the op as a class, the result delivered on this thread's main loop.
loop = GLib.MainLoop()


def done(device, result):
    try:
        device.submit_finish(result)
        got = np.frombuffer(c.download().get_data(), dtype=np.float32).reshape(64, 16)
        assert np.allclose(got, 2.0 * (x @ y), rtol=1e-4)
        print("async gemm (alpha=2): ok")
    except GLib.Error as e:
        # Errors are GLib.Error in Accel's domain; e.code is an Accel.Error.
        print("failed:", Accel.Error(e.code).value_nick, e.message)
    loop.quit()


dev.submit_async(Accel.Gemm(a=a, b=b, c=c, alpha=2.0), None, done)
loop.run()

# A bad op is refused before launch with a clear error.
try:
    dev.submit(Accel.Gemm(a=a, b=a, c=c), None)
except GLib.Error as e:
    assert e.matches(Accel.error_quark(), Accel.Error.SHAPE_MISMATCH)
    print("refused as expected:", e.message)
