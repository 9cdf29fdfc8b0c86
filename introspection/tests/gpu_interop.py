#!/usr/bin/env python3
# Zero-copy interop of cuda:0 with PyTorch and CuPy, for the GPU host,
# where PyGObject is not installed: a ctypes shim over libaccel's C API
# (accel-dlpack.h) stands in for the overrides. Checked by pointer: a torch
# or CuPy tensor taken by Accel is the same device memory, and so is a
# buffer of Accel taken by torch or CuPy; ops on either side see the other's
# writes; a lent buffer outlives the system. With ACCEL_CUDA_ISOLATION=
# process, lending is refused with the reason and host copies are right.
#
# Run by the gpu suite (tests/cuda/meson.build, once per isolation), or by
# hand on the GPU host after `source .gpu/env`:
#   ACCEL_CUDA_ISOLATION=none ACCEL_TEST_LIBACCEL=$GPU_BUILD/core/libaccel-1.0.so.0 \
#     python3 introspection/tests/gpu_interop.py
# TAP on stdout; skips where torch, CuPy or cuda:0 is missing.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import ctypes
import os
import sys
import traceback

c_void_p, c_char_p, c_int, c_double = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_double
ISOLATION = os.environ.get("ACCEL_CUDA_ISOLATION", "process")
DLPACK_CUDA, DLPACK_CPU = 2, 1
COPY_IF_NEEDED, COPY_NEVER, COPY_ALWAYS = 0, 1, 2
ERROR_NOT_SUPPORTED = 16


def skip_all(why):
    print(f"1..0 # SKIP {why}")
    sys.exit(0)


try:
    import torch
except ImportError:
    torch = None
try:
    import cupy
except ImportError:
    cupy = None
if torch is None and cupy is None:
    skip_all("neither torch nor cupy is installed")


class GError(ctypes.Structure):
    _fields_ = [("domain", ctypes.c_uint32), ("code", c_int), ("message", c_char_p)]


class AccelError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


# The build's library (the gpu suite names it), else the installed one; GLib
# is what libaccel loaded.
lib = ctypes.CDLL(os.environ.get("ACCEL_TEST_LIBACCEL", "libaccel-1.0.so.0"))
gobj = ctypes.CDLL("libgobject-2.0.so.0")
glib = ctypes.CDLL("libglib-2.0.so.0")


def fn(library, name, restype, *argtypes):
    f = getattr(library, name)
    f.restype, f.argtypes = restype, list(argtypes)
    return f


PErr = ctypes.POINTER(ctypes.POINTER(GError))
system_new = fn(lib, "accel_system_new", c_void_p, PErr)
system_get_device = fn(lib, "accel_system_get_device", c_void_p, c_void_p, c_char_p, PErr)
system_shutdown = fn(lib, "accel_system_shutdown", None, c_void_p)
device_alloc = fn(lib, "accel_device_alloc", c_void_p, c_void_p, c_int, c_void_p, PErr)
device_submit = fn(lib, "accel_device_submit", c_int, c_void_p, c_void_p, c_void_p, PErr)
device_get_dlpack_device = fn(lib, "accel_device_get_dlpack_device", c_int, c_void_p,
                              ctypes.POINTER(ctypes.c_int32), ctypes.POINTER(ctypes.c_int32))
shape_new = fn(lib, "accel_shape_new", c_void_p, ctypes.POINTER(ctypes.c_int64), ctypes.c_uint)
shape_free = fn(lib, "accel_shape_free", None, c_void_p)
buffer_get_data = fn(lib, "accel_buffer_get_data", c_void_p, c_void_p)
buffer_get_type = fn(lib, "accel_buffer_get_type", ctypes.c_size_t)
buffer_to_dlpack = fn(lib, "accel_buffer_to_dlpack", c_void_p, c_void_p, PErr)
buffer_to_dlpack_host = fn(lib, "accel_buffer_to_dlpack_host", c_void_p, c_void_p, c_int, PErr)
buffer_new_from_dlpack = fn(lib, "accel_buffer_new_from_dlpack", c_void_p, c_void_p, c_void_p, c_int, PErr)
op_new_by_name = fn(lib, "accel_op_new_by_name", c_void_p, c_char_p, PErr)
object_unref = fn(gobj, "g_object_unref", None, c_void_p)
object_set_property = fn(gobj, "g_object_set_property", None, c_void_p, c_char_p, c_void_p)
value_init = fn(gobj, "g_value_init", c_void_p, c_void_p, ctypes.c_size_t)
value_set_object = fn(gobj, "g_value_set_object", None, c_void_p, c_void_p)
value_set_double = fn(gobj, "g_value_set_double", None, c_void_p, c_double)
value_unset = fn(gobj, "g_value_unset", None, c_void_p)
error_free = fn(glib, "g_error_free", None, c_void_p)
G_TYPE_DOUBLE = 15 << 2
F32 = 2   # ACCEL_DTYPE_F32


def call(f, *args):
    err = ctypes.POINTER(GError)()
    result = f(*args, ctypes.byref(err))
    if err:
        code, message = err.contents.code, err.contents.message.decode()
        error_free(err)
        raise AccelError(code, message)
    return result


# DLPack capsules: what torch and CuPy take and give.
_capsule_new = fn(ctypes.pythonapi, "PyCapsule_New", ctypes.py_object, c_void_p, c_char_p, c_void_p)
_capsule_pointer = fn(ctypes.pythonapi, "PyCapsule_GetPointer", c_void_p, ctypes.py_object, c_char_p)
_capsule_rename = fn(ctypes.pythonapi, "PyCapsule_SetName", c_int, ctypes.py_object, c_char_p)
_raw_is_valid = ctypes.PYFUNCTYPE(c_int, c_void_p, c_char_p)(("PyCapsule_IsValid", ctypes.pythonapi))
_raw_pointer = ctypes.PYFUNCTYPE(c_void_p, c_void_p, c_char_p)(("PyCapsule_GetPointer", ctypes.pythonapi))
_DELETER = ctypes.CFUNCTYPE(None, c_void_p)


def delete_tensor(ptr):
    # The deleter is the last member of DLManagedTensor (after the 48-byte DLTensor and manager_ctx).
    deleter = _DELETER.from_address(ptr + 56)
    if deleter:
        deleter(ptr)


@ctypes.CFUNCTYPE(None, c_void_p)
def _destructor(capsule):
    if _raw_is_valid(capsule, b"dltensor"):
        delete_tensor(_raw_pointer(capsule, b"dltensor"))


class Lent:
    """A buffer of Accel as the DLPack producer torch and CuPy expect."""

    def __init__(self, buffer, device):
        self._ptr = call(buffer_to_dlpack, buffer)
        self._device = device

    def __dlpack__(self, stream=None, **kwargs):
        return _capsule_new(self._ptr, b"dltensor", ctypes.cast(_destructor, c_void_p).value)

    def __dlpack_device__(self):
        return self._device


def borrow(device, tensor, copy=COPY_NEVER):
    capsule = tensor.__dlpack__()
    buf = call(buffer_new_from_dlpack, device, _capsule_pointer(capsule, b"dltensor"), copy)
    _capsule_rename(capsule, b"used_dltensor")
    return buf


def alloc(device, n):
    dims = (ctypes.c_int64 * 1)(n)
    shape = shape_new(dims, 1)
    try:
        return call(device_alloc, device, F32, shape)
    finally:
        shape_free(shape)


def run(device, name, **props):
    op = call(op_new_by_name, name.encode())
    value = (ctypes.c_uint8 * 64)()
    for key, v in props.items():
        ctypes.memset(value, 0, 64)
        if isinstance(v, float):
            value_init(value, G_TYPE_DOUBLE)
            value_set_double(value, v)
        else:
            value_init(value, buffer_get_type())
            value_set_object(value, v)
        object_set_property(op, key.encode(), value)
        value_unset(value)
    try:
        call(device_submit, device, op, None)
    finally:
        object_unref(op)


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def open_device():
    system = call(system_new)
    try:
        device = call(system_get_device, system, b"cuda:0")
    except AccelError as e:
        system_shutdown(system)
        object_unref(system)
        skip_all(f"no cuda:0: {e}")
    return system, device


# --------------------------------------------------------------- isolation=none

def test_torch_into_accel(system, dev):
    n = int(torch.randint(1000, 200000, ()).item())
    t = torch.randn(n, device="cuda:0")
    orig = t.clone()
    torch.cuda.synchronize()
    buf = borrow(dev, t)
    check(buf_data(buf) == t.data_ptr(), "a torch tensor is borrowed without a copy")
    run(dev, "scal", x=buf, alpha=-2.0)
    check(torch.equal(t, orig * -2.0), "cuBLAS scal through Accel wrote the torch tensor in place")
    out = alloc(dev, n)
    run(dev, "copy", src=buf, dst=out)
    back = torch.from_dlpack(Lent(out, (DLPACK_CUDA, 0)))
    check(back.data_ptr() == buf_data(out), "torch borrows Accel's buffer without a copy")
    check(torch.equal(back, t), "and reads what the op wrote")
    object_unref(buf)
    object_unref(out)


def test_accel_into_torch(system, dev):
    n = int(torch.randint(1000, 100000, ()).item())
    buf = alloc(dev, n)
    run(dev, "fill", dst=buf, value=3.0)
    t = torch.from_dlpack(Lent(buf, (DLPACK_CUDA, 0)))
    check(t.data_ptr() == buf_data(buf) and t.is_cuda and t.numel() == n, "same memory, on cuda:0")
    check(bool((t == 3.0).all()), "the op's values")
    t += 1.0
    torch.cuda.synchronize()
    host = call(buffer_to_dlpack_host, buf, COPY_IF_NEEDED)
    data = ctypes.c_void_p.from_address(host).value
    got = (ctypes.c_float * n).from_address(data)
    check(all(v == 4.0 for v in got[:min(n, 4096)]), "Accel reads what torch wrote")
    delete_tensor(host)
    object_unref(buf)


def test_cupy_both_ways(system, dev):
    n = int(cupy.random.randint(1000, 100000))
    a = cupy.random.standard_normal(n, dtype=cupy.float32)
    cupy.cuda.runtime.deviceSynchronize()
    buf = borrow(dev, a)
    check(buf_data(buf) == a.data.ptr, "a CuPy array is borrowed without a copy")
    before = a.copy()
    run(dev, "scal", x=buf, alpha=0.5)
    check(bool(cupy.all(a == before * 0.5)), "Accel's op wrote the CuPy array")
    out = alloc(dev, n)
    run(dev, "copy", src=buf, dst=out)
    b = cupy.from_dlpack(Lent(out, (DLPACK_CUDA, 0)))
    check(b.data.ptr == buf_data(out) and bool(cupy.all(b == a)), "CuPy borrows Accel's buffer")

    class CAI:   # __cuda_array_interface__ v3, as the overrides give it
        def __init__(self, ptr, n):
            self.__cuda_array_interface__ = {"version": 3, "shape": (n,), "typestr": "<f4",
                                             "data": (ptr, False), "strides": None, "stream": None}
    c = cupy.asarray(CAI(buf_data(out), n))
    check(c.data.ptr == buf_data(out) and bool(cupy.all(c == a)), "CUDA array interface, no copy")
    object_unref(buf)
    object_unref(out)


def test_lent_outlives_system(system, dev):
    sys2, dev2 = open_device()
    n = 4099
    buf = alloc(dev2, n)
    run(dev2, "fill", dst=buf, value=7.0)
    lent = Lent(buf, (DLPACK_CUDA, 0))
    t = torch.from_dlpack(lent) if torch is not None else cupy.from_dlpack(lent)
    object_unref(buf)
    system_shutdown(sys2)
    object_unref(dev2)
    object_unref(sys2)
    check(bool((t == 7.0).all()), "a lent buffer stays valid after the system shut down")
    t *= 2.0
    check(bool((t == 14.0).all()), "and writeable")


# --------------------------------------------------------------- isolation=process

def test_process_refuses(system, dev):
    check(device_get_dlpack_device(dev, None, None) == 0, "a hosted cuda:0 is not addressable here")
    buf = alloc(dev, 1000)
    run(dev, "fill", dst=buf, value=2.5)
    try:
        call(buffer_to_dlpack, buf)
        raise AssertionError("a hosted buffer was lent")
    except AccelError as e:
        check(e.code == ERROR_NOT_SUPPORTED and "CUDA IPC" in str(e), f"refused with the reason: {e}")
    host = call(buffer_to_dlpack_host, buf, COPY_IF_NEEDED)
    data = ctypes.c_void_p.from_address(host).value
    check(all(v == 2.5 for v in (ctypes.c_float * 1000).from_address(data)), "a host copy")
    delete_tensor(host)
    if torch is not None:
        t = torch.randn(777, device="cuda:0")
        torch.cuda.synchronize()
        try:
            borrow(dev, t)
            raise AssertionError("a torch tensor was borrowed by a hosted device")
        except AccelError as e:
            check(e.code == ERROR_NOT_SUPPORTED, f"refused: {e}")
        cpu = torch.randn(777)
        b = borrow(dev, cpu, COPY_IF_NEEDED)
        out = call(buffer_to_dlpack_host, b, COPY_IF_NEEDED)
        got = torch.from_dlpack(CapsuleOf(out))
        check(torch.equal(got, cpu), "host memory is copied in and out")
        object_unref(b)
    object_unref(buf)


class CapsuleOf:
    def __init__(self, ptr):
        self._ptr = ptr

    def __dlpack__(self, stream=None, **kwargs):
        return _capsule_new(self._ptr, b"dltensor", ctypes.cast(_destructor, c_void_p).value)

    def __dlpack_device__(self):
        return (DLPACK_CPU, 0)


def buf_data(buf):
    return buffer_get_data(buf)


def main():
    system, dev = open_device()
    if ISOLATION == "none":
        tests = [t for t, need in ((test_torch_into_accel, torch), (test_accel_into_torch, torch),
                                   (test_cupy_both_ways, cupy), (test_lent_outlives_system, True))
                 if need is not None]
    else:
        tests = [test_process_refuses]
    print(f"# isolation={ISOLATION}, torch {torch.__version__ if torch else '-'}, "
          f"cupy {cupy.__version__ if cupy else '-'}")
    print(f"1..{len(tests)}")
    failed = 0
    for i, test in enumerate(tests, 1):
        name = test.__name__[len("test_"):].replace("_", "-")
        try:
            test(system, dev)
            print(f"ok {i} /gpu/interop/{name}")
        except Exception:
            failed += 1
            print(f"not ok {i} /gpu/interop/{name}")
            for line in traceback.format_exc().splitlines():
                print("# " + line)
        sys.stdout.flush()
    system_shutdown(system)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
