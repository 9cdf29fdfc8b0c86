#!/usr/bin/python3
# CuPy's RawKernel on Accel, from Python: a CUDA kernel compiled from a
# string at run time (NVRTC, cached on disk under
# $XDG_CACHE_HOME/accel-1.0/kernels/), launched on numpy data, checked with
# numpy; then a template instance through a name expression, and a chain of
# launches recorded in a graph and replayed with one submit.
#
#   meson devenv -C build /usr/bin/python3 ../introspection/examples/rawkernel.py
#
# It needs a CUDA device and the nvrtc plugin; without a GPU it compiles the
# kernel for sm_90a to show the compiler works, and exits with 77 (skipped).
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import sys

import gi
gi.require_version("Accel", "1.0")
from gi.repository import Accel, GLib
import numpy as np

SAXPY = r"""
extern "C" __global__ void saxpy (float a, const float *x, float *y, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
"""

SCALE = r"""
template <typename T>
__global__ void scale (T *x, T a, long long n)
{
  long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
"""


class RawKernel:
    """A kernel compiled from a string, called like CuPy's RawKernel:
    kernel(grid, block, args). Buffers are read-write unless given as
    (buffer, Accel.Access.READ); numpy scalars keep their type."""

    def __init__(self, device, source, name, signature, options=(), name_expressions=None):
        self.device = device
        self.module = Accel.Module.new_from_source(device, source, list(options), name_expressions, None)
        self.function = self.module.get_function(name, signature)

    def launch_op(self, grid, block, args, shared_mem=0):
        op = Accel.Launch.new(self.function)
        op.set_grid(*(tuple(grid) + (1, 1))[:3])
        op.set_block(*(tuple(block) + (1, 1))[:3])
        op.props.shared_memory = shared_mem
        for arg in args:
            if isinstance(arg, tuple):
                op.add_buffer(*arg)
            elif isinstance(arg, Accel.Buffer):
                op.add_buffer(arg, Accel.Access.READ_WRITE)
            elif isinstance(arg, np.float32):
                op.add_float32(float(arg))
            elif isinstance(arg, (np.float64, float)):
                op.add_float64(float(arg))
            elif isinstance(arg, np.int32):
                op.add_int32(int(arg))
            elif isinstance(arg, (np.int64, int)):
                op.add_int64(int(arg))
            else:
                raise TypeError(f"cannot pass {type(arg).__name__} to a kernel")
        return op

    def __call__(self, grid, block, args, shared_mem=0):
        self.device.submit(self.launch_op(grid, block, args, shared_mem), None)


def upload(device, array):
    buf = device.alloc(Accel.DType.F32 if array.dtype == np.float32 else Accel.DType.F64,
                       Accel.Shape.new(list(array.shape)))
    buf.upload(GLib.Bytes.new(array.tobytes()))
    return buf


def download(buf, dtype, shape):
    return np.frombuffer(buf.download().get_data(), dtype=dtype).reshape(shape)


system = Accel.System.new()
try:
    dev = system.get_device("cuda:0")
except GLib.Error as e:
    # No GPU: the compiler still works (NVRTC needs none).
    compiler = Accel.Module.get_compiler(system, "cuda")
    reply = compiler.ask(GLib.Variant("(ssasass)", (SAXPY, "saxpy.cu", [], [], "sm_90a")), None)
    image, kind, lowered, log, compiled, arch = reply.unpack()
    print(f"no cuda:0 ({e.message}); compiled saxpy for {arch}: {len(image)} bytes, "
          f"{'compiled' if compiled else 'from the cache'}")
    sys.exit(77)

print("device:", dev.get_name(), dev.props.device_name)

# saxpy on numpy data.
n = 1_000_003
x = np.random.rand(n).astype(np.float32)
y = np.random.rand(n).astype(np.float32)
bx, by = upload(dev, x), upload(dev, y)
saxpy = RawKernel(dev, SAXPY, "saxpy", "float32, buffer, buffer, int32")
print("module:", saxpy.module.get_target(), "compiled now" if saxpy.module.get_compiled() else "from the cache")
a = np.float32(2.5)
saxpy(((n + 255) // 256,), (256,), (a, (bx, Accel.Access.READ), by, np.int32(n)))
got = download(by, np.float32, (n,))
assert np.allclose(got, a * x + y, rtol=1e-6), "saxpy"
print("saxpy: ok")

# A template instance, named by its expression.
scale = RawKernel(dev, SCALE, "scale<double>", "buffer, float64, int64",
                  options=["-std=c++17"], name_expressions=["scale<double>", "scale<float>"])
z = np.random.rand(4097)
bz = upload(dev, z)
scale(((4097 + 127) // 128,), (128,), (bz, np.float64(-3.0), np.int64(4097)))
assert np.allclose(download(bz, np.float64, (4097,)), -3.0 * z), "scale<double>"
print("scale<double> (lowered to", scale.function.get_symbol() + "): ok")

# The same saxpy ten times as a graph: one submit per replay.
graph = Accel.Graph.new(dev, -1)
op = saxpy.launch_op(((n + 255) // 256,), (256,), (np.float32(0.5), (bx, Accel.Access.READ), by, np.int32(n)))
for _ in range(10):
    graph.add(op)
graph.instantiate()
before = download(by, np.float32, (n,)).copy()
graph.replay(None)
graph.replay(None)
expect = before.copy()
for _ in range(20):
    expect = np.float32(0.5) * x + expect
assert np.allclose(download(by, np.float32, (n,)), expect, rtol=1e-5), "graph"
print("graph of 10 launches, replayed twice: ok")

# Bad input is a GLib.Error naming what is wrong; the device goes on.
try:
    RawKernel(dev, "extern \"C\" __global__ void k (float *x) { x[0] = nope; }", "k", "buffer")
except GLib.Error as e:
    print("compile error:", e.message.splitlines()[0])
print("stats:", dev.get_stats())
