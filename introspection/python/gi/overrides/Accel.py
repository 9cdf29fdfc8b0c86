# PyGObject overrides of Accel-1.0: numpy and DLPack interop, ops as
# keyword calls, asyncio awaitables, and Accel.Error codes on exceptions.
# They add to the GI API; everything of it stays as it is.
#
#   buf = Accel.Buffer.from_numpy(dev, x)        # shares x on cpu devices
#   dev.run("scal", x=buf, alpha=2.0)            # numpy arrays work too
#   y = buf.numpy()                               # a view on cpu devices
#   t = torch.from_dlpack(buf)                    # DLPack, both ways
#   await dev.submit_async(op)                    # on an asyncio loop
#   with dev.capture() as g: dev.run(...)         # a graph; g.replay(None)
#
# The DLPack capsules are made and read with ctypes over the C API of
# accel-dlpack.h (which GI passes as integers); numpy is imported on first
# use, so `from gi.repository import Accel` does not need it.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import asyncio
import ctypes
import functools
import threading

from gi.repository import GLib, Gio

from ..module import get_introspection_module
from ..overrides import override

Accel = get_introspection_module("Accel")

__all__ = []

# DLPack device types and type codes (accel-dlpack.h).
_KDL_CPU = Accel.DLPACK_DEVICE_CPU
_KDL_CUDA = Accel.DLPACK_DEVICE_CUDA
_KDL_CUDA_HOST = Accel.DLPACK_DEVICE_CUDA_HOST
_KDL_CUDA_MANAGED = Accel.DLPACK_DEVICE_CUDA_MANAGED
_HOST_TYPES = (_KDL_CPU, _KDL_CUDA_HOST, _KDL_CUDA_MANAGED)


# ---------------------------------------------------------------- errors

def _accel_error(code, message):
    e = GLib.Error.new_literal(Accel.error_quark(), message, int(code))
    e.code = Accel.Error(code)
    return e


_ACCEL_DOMAIN = GLib.quark_to_string(Accel.error_quark())


def _with_error_codes(func):
    """Makes the code of an Accel error raised by @func its Accel.Error
    member (an int subclass: `e.code == Accel.Error.SHAPE_MISMATCH` and
    `e.code.value_nick`); the message and domain stay as they are."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except GLib.Error as e:
            if e.domain == _ACCEL_DOMAIN and not isinstance(e.code, Accel.Error):
                try:
                    e.code = Accel.Error(e.code)
                except ValueError:
                    pass
            raise
    return wrapper


def _wrap_errors(cls):
    """Wraps every function of @cls's own GI methods that can fail (and
    that the override does not define itself) with _with_error_codes."""
    parent = cls.__mro__[1]
    for info in parent.__info__.get_methods():
        name = info.get_name()
        if not info.can_throw_gerror() or name in cls.__dict__:
            continue
        func = _with_error_codes(getattr(parent, name))
        setattr(cls, name, func if info.is_method() else staticmethod(func))


# ---------------------------------------------------------------- numpy

_np = None
_ml_dtypes = None


def _numpy():
    global _np, _ml_dtypes
    if _np is None:
        import numpy
        try:
            import ml_dtypes
        except ImportError:
            ml_dtypes = None
        _np, _ml_dtypes = numpy, ml_dtypes
        _build_dtype_maps()
    return _np


# Accel dtype -> (numpy dtype name, raw numpy dtype name of the same bits,
# ml_dtypes name or None). The raw dtype is what numpy sees without ml_dtypes.
_DTYPES = {
    Accel.DType.F16: ("float16", "float16", None),
    Accel.DType.BF16: (None, "uint16", "bfloat16"),
    Accel.DType.F32: ("float32", "float32", None),
    Accel.DType.F64: ("float64", "float64", None),
    Accel.DType.C64: ("complex64", "complex64", None),
    Accel.DType.C128: ("complex128", "complex128", None),
    Accel.DType.I8: ("int8", "int8", None),
    Accel.DType.U8: ("uint8", "uint8", None),
    Accel.DType.I32: ("int32", "int32", None),
    Accel.DType.U32: ("uint32", "uint32", None),
    Accel.DType.I64: ("int64", "int64", None),
    Accel.DType.FP8_E4M3: (None, "uint8", "float8_e4m3fn"),
    Accel.DType.FP8_E5M2: (None, "uint8", "float8_e5m2"),
}
_DLPACK_CODES = {   # Accel dtype -> DLPack (code, bits), for raw views
    Accel.DType.BF16: (Accel.DLPACK_CODE_BFLOAT, 16),
    Accel.DType.FP8_E4M3: (Accel.DLPACK_CODE_FLOAT8_E4M3FN, 8),
    Accel.DType.FP8_E5M2: (Accel.DLPACK_CODE_FLOAT8_E5M2, 8),
}
_to_numpy = {}      # Accel dtype -> numpy dtype (ml_dtypes, or the raw one)
_to_raw = {}        # Accel dtype -> raw numpy dtype
_numpy_to_accel = {}    # numpy dtype -> Accel dtype


def _build_dtype_maps():
    for adt, (name, raw, ml) in _DTYPES.items():
        raw_dt = _np.dtype(raw)
        _to_raw[adt] = raw_dt
        if ml is not None and _ml_dtypes is not None:
            dt = _np.dtype(getattr(_ml_dtypes, ml))
        elif name is not None:
            dt = _np.dtype(name)
        else:
            dt = raw_dt
        _to_numpy[adt] = dt
        if name is not None or (ml is not None and _ml_dtypes is not None):
            _numpy_to_accel[dt] = adt


def _accel_dtype(np_dtype, dtype):
    """The Accel dtype for an array of @np_dtype, or @dtype when given (then
    only the element size must match: uint16 bits taken as bf16, say)."""
    if dtype is not None:
        dtype = Accel.DType(dtype)
        if _to_raw[dtype].itemsize != np_dtype.itemsize:
            raise _accel_error(Accel.Error.DTYPE_UNSUPPORTED,
                               f"An array of {np_dtype} ({np_dtype.itemsize}-byte elements) cannot be taken "
                               f"as {dtype.value_nick} ({_to_raw[dtype].itemsize}-byte elements)")
        return dtype
    adt = _numpy_to_accel.get(np_dtype.newbyteorder("=") if np_dtype.byteorder not in "=|" else np_dtype)
    if adt is None:
        raise _accel_error(Accel.Error.DTYPE_UNSUPPORTED,
                           f"No dtype of Accel holds numpy's {np_dtype}; pass dtype= to take its bits as one")
    return adt


# ---------------------------------------------------------------- ctypes side of DLPack

class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER)]


_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_PyCapsule_GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
_PyCapsule_GetPointer.restype = ctypes.c_void_p
_PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_PyCapsule_SetName = ctypes.pythonapi.PyCapsule_SetName
_PyCapsule_SetName.restype = ctypes.c_int
_PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
# The same two by raw pointer, for the destructor (whose capsule is dying).
_raw_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi))
_raw_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))


def _delete_tensor(ptr):
    deleter = _DLManagedTensor.from_address(ptr).deleter
    if deleter:
        deleter(ptr)


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _capsule_destructor(capsule):
    # A capsule still named "dltensor" was never consumed: its tensor is ours to delete.
    if _raw_is_valid(capsule, b"dltensor"):
        _delete_tensor(_raw_get_pointer(capsule, b"dltensor"))


_CAPSULE_DESTRUCTOR = ctypes.cast(_capsule_destructor, ctypes.c_void_p).value


def _capsule(ptr):
    return _PyCapsule_New(ptr, b"dltensor", _CAPSULE_DESTRUCTOR)


def _copy_mode(copy):
    if copy is None:
        return Accel.DLPackCopy.IF_NEEDED
    return Accel.DLPackCopy.ALWAYS if copy else Accel.DLPackCopy.NEVER


class _HostView:
    """Owns a lent host tensor while numpy arrays view it (their base)."""
    __slots__ = ("__array_interface__", "_tensor")

    def __init__(self, ptr, typestr):
        t = _DLManagedTensor.from_address(ptr).dl_tensor
        n = t.ndim
        itemsize = int(typestr[2:])
        self._tensor = ptr
        self.__array_interface__ = {
            "version": 3,
            "data": ((t.data or 0) + t.byte_offset, False),
            "shape": tuple(t.shape[i] for i in range(n)),
            "strides": tuple(t.strides[i] * itemsize for i in range(n)),
            "typestr": typestr,
        }

    def __del__(self):
        _delete_tensor(self._tensor)


class _Lent:
    """What numpy.from_dlpack and the like take: one capsule, and where it is."""
    __slots__ = ("_capsule", "_device")

    def __init__(self, capsule, device):
        self._capsule, self._device = capsule, device

    def __dlpack__(self, *args, **kwargs):
        return self._capsule

    def __dlpack_device__(self):
        return self._device


# ---------------------------------------------------------------- Buffer

class Buffer(Accel.Buffer):
    """A buffer, with numpy-style `shape`/`dtype`, `numpy()`, `__array__`,
    DLPack (`__dlpack__`, `from_dlpack`) and, for CUDA buffers of this
    process, `__cuda_array_interface__`."""

    @classmethod
    def from_numpy(cls, device, array, copy=None, dtype=None):
        """A buffer of @device holding @array's data.

        On a device that addresses host memory (cpu), a C-contiguous,
        writeable, aligned array of native byte order is shared, not copied
        (as torch.from_numpy does): ops on the buffer change the array. Any
        other array, or any array for another device, is copied once (an
        array of another layout or byte order is made C-contiguous first).
        copy=True always copies; copy=False raises BufferError where a copy
        would be needed. dtype= takes the array's bits as an Accel dtype of
        the same element size (uint16 bits as Accel.DType.BF16, say);
        without it, numpy dtypes map to Accel's (bfloat16 and float8 from
        ml_dtypes where it is installed).
        """
        return _from_numpy(device, array, copy, dtype)[0]

    @classmethod
    def from_dlpack(cls, device, obj, copy=None):
        """A buffer of @device over @obj's memory (any object with
        `__dlpack__`: a torch or CuPy tensor, a numpy array), without a copy
        where @device addresses it (host memory on cpu devices; memory of the
        same GPU on CUDA devices with isolation=none), with its strides.
        Otherwise host memory is copied (copy=False refuses instead);
        copy=True always copies. On CUDA nothing orders the producer's
        pending work before Accel's: finish it first
        (torch.cuda.synchronize())."""
        capsule = obj.__dlpack__() if hasattr(obj, "__dlpack__") else obj
        ptr = _PyCapsule_GetPointer(capsule, b"dltensor")
        buf = _new_from_dlpack(device, ptr, _copy_mode(copy))
        _PyCapsule_SetName(capsule, b"used_dltensor")
        return buf

    @property
    def shape(self):
        """The dimensions, as a tuple."""
        return tuple(self.get_shape().get_dims())

    @property
    def ndim(self):
        """The rank."""
        return self.get_shape().get_rank()

    @property
    def nbytes(self):
        """The bytes the buffer spans."""
        return self.get_size()

    @property
    def dtype(self):
        """The numpy dtype of the elements (bfloat16 and float8 from
        ml_dtypes where installed; their raw uint16/uint8 bits otherwise)."""
        _numpy()
        return _to_numpy[self.get_dtype()]

    def numpy(self, copy=None):
        """The buffer as a numpy array: a writeable view, without a copy,
        where its memory is host memory of this process (cpu devices): ops
        that write the buffer later change the view, which keeps the memory
        alive after the buffer, its device or the system is gone. Otherwise
        (a GPU, a device served by accel-device-host) one copy, made after
        the ops submitted before the call, into the host's shared memory
        where it has some. copy=True always copies; copy=False raises
        instead of copying."""
        np = _numpy()
        adt = self.get_dtype()
        raw = _to_raw[adt]
        ptr = _to_dlpack_host(self, _copy_mode(copy))
        arr = np.asarray(_HostView(ptr, raw.str))
        dt = _to_numpy[adt]
        return arr if dt is raw else arr.view(dt)

    def __array__(self, dtype=None, copy=None):
        arr = self.numpy(copy=True if copy else None)
        return arr if dtype is None else arr.astype(dtype, copy=False)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """The buffer as a DLPack capsule: its own memory (cpu devices, CUDA
        devices of this process), or a host copy (kDLCPU) where its memory
        is out of reach here (a device served by accel-device-host) or
        dl_device asks for host memory."""
        host, location = _device_location(self.get_device())
        if dl_device is not None and tuple(dl_device) != location:
            if tuple(dl_device)[0] not in _HOST_TYPES:
                raise BufferError(f"__dlpack__: cannot export to DLPack device {tuple(dl_device)}")
            return _capsule(_to_dlpack_host(self, _copy_mode(copy)))
        if location[0] == _KDL_CPU and not host:
            return _capsule(_to_dlpack_host(self, _copy_mode(copy)))
        if copy:
            if location[0] == _KDL_CPU:
                return _capsule(_to_dlpack_host(self, Accel.DLPackCopy.ALWAYS))
            raise BufferError("__dlpack__(copy=True): Accel copies to host memory only (dl_device=(1, 0))")
        if location[0] == _KDL_CUDA and stream is not None and stream != -1:
            # The consumer reads on its stream: let the ops in flight finish.
            self.get_device().synchronize()
        return _capsule(_to_dlpack(self))

    def __dlpack_device__(self):
        return _device_location(self.get_device())[1]

    @property
    def __cuda_array_interface__(self):
        """CUDA Array Interface v3 of a buffer of a CUDA device of this process."""
        host, location = _device_location(self.get_device())
        if location[0] != _KDL_CUDA or host:
            raise AttributeError("__cuda_array_interface__: not a buffer of a CUDA device of this process")
        _numpy()
        ptr = _to_dlpack(self)      # makes the memory outlive the context; read its address
        try:
            t = _DLManagedTensor.from_address(ptr).dl_tensor
            itemsize = _to_raw[self.get_dtype()].itemsize
            iface = {
                "version": 3,
                "shape": tuple(t.shape[i] for i in range(t.ndim)),
                "typestr": _to_raw[self.get_dtype()].str,
                "data": ((t.data or 0) + t.byte_offset, False),
                "strides": (None if self.get_shape().is_contiguous()
                            else tuple(t.strides[i] * itemsize for i in range(t.ndim))),
                "stream": None,
            }
        finally:
            _delete_tensor(ptr)
        self.get_device().synchronize()
        return iface

    def __repr__(self):
        dev = self.get_device()
        return (f"<Accel.Buffer {self.get_dtype().value_nick}{list(self.shape)} on "
                f"{dev.get_name() if dev else '?'} at 0x{hash(self):x}>")


_wrap_errors(Buffer)
Buffer = override(Buffer)
__all__.append("Buffer")

_new_from_dlpack = _with_error_codes(Accel.Buffer.new_from_dlpack)
_to_dlpack = _with_error_codes(Accel.Buffer.to_dlpack)
_to_dlpack_host = _with_error_codes(Accel.Buffer.to_dlpack_host)


def _from_numpy(device, array, copy, dtype):
    """Buffer.from_numpy, and whether the buffer shares the array's memory."""
    np = _numpy()
    a = np.asarray(array)
    adt = _accel_dtype(a.dtype, dtype)
    host, _ = _device_location(device)
    layout_ok = (a.flags.c_contiguous and a.ctypes.data % a.dtype.itemsize == 0
                 and a.dtype.byteorder in "=|")
    if copy is False and not (host and layout_ok and a.flags.writeable):
        why = ("it is not host memory of this process" if not host else
               "the array is not C-contiguous, writeable, aligned and of native byte order")
        raise BufferError(f"from_numpy(copy=False): {device.get_name()} cannot share the array: {why}")
    copied = False
    if not layout_ok or (host and not a.flags.writeable and not copy):
        # One copy, C-contiguous and native, which a host device then shares.
        a = np.array(a, dtype=a.dtype.newbyteorder("="), order="C", copy=True)
        copied = True
    raw = _to_raw[adt]
    if host and (copied or not copy):
        capsule = a.view(raw).__dlpack__()
        ptr = _PyCapsule_GetPointer(capsule, b"dltensor")
        if adt in _DLPACK_CODES:
            t = _DLManagedTensor.from_address(ptr).dl_tensor
            t.dtype.code, t.dtype.bits = _DLPACK_CODES[adt]
        buf = _new_from_dlpack(device, ptr, Accel.DLPackCopy.NEVER)
        _PyCapsule_SetName(capsule, b"used_dltensor")
        return buf, not copied
    return _copy_into(device, a, raw, adt), False


def _device_location(device):
    """(whether @device's memory is host memory of this process, the DLPack
    device its buffers export to)."""
    ok, dev_type, dev_id = device.get_dlpack_device()
    if not ok:
        return False, (_KDL_CPU, 0)      # exported as host copies
    return dev_type in _HOST_TYPES, (dev_type, dev_id)


def _copy_into(device, a, raw, adt):
    """A new buffer of @device with a copy of C-contiguous @a: a tensor of
    our own over @a's memory, consumed (copied) before the call returns."""
    nd = a.ndim
    shape = (ctypes.c_int64 * max(nd, 1))(*a.shape)
    tensor = _DLManagedTensor()
    tensor.dl_tensor.data = a.ctypes.data if a.size else None
    tensor.dl_tensor.device.device_type = _KDL_CPU
    tensor.dl_tensor.ndim = nd
    code, bits = _DLPACK_CODES.get(adt, (None, raw.itemsize * 8))
    if code is None:
        code = {"i": Accel.DLPACK_CODE_INT, "u": Accel.DLPACK_CODE_UINT, "f": Accel.DLPACK_CODE_FLOAT,
                "c": Accel.DLPACK_CODE_COMPLEX}[raw.kind]
    tensor.dl_tensor.dtype.code, tensor.dl_tensor.dtype.bits, tensor.dl_tensor.dtype.lanes = code, bits, 1
    tensor.dl_tensor.shape = shape
    return _new_from_dlpack(device, ctypes.addressof(tensor), Accel.DLPackCopy.ALWAYS)


# ---------------------------------------------------------------- Device

class _AsyncBridge:
    """A GMainContext of its own, run by one daemon thread: the GIO
    completions of submit_async land there, and hand their result to the
    asyncio loop that awaits them. Whatever runs (or not) the default
    GMainContext, awaiting works on any asyncio loop."""

    _lock = threading.Lock()
    _instance = None

    def __init__(self):
        self.context = GLib.MainContext.new()
        self._loop = GLib.MainLoop.new(self.context, False)
        threading.Thread(target=self._run, name="accel-asyncio", daemon=True).start()

    def _run(self):
        # GTasks made on this thread capture its thread-default context.
        self.context.push_thread_default()
        self._loop.run()

    @classmethod
    def get(cls):
        with cls._lock:
            if cls._instance is None:
                cls._instance = _AsyncBridge()
            return cls._instance

    def call(self, begin, finish, cancellable):
        """Runs @begin(cancellable, callback) on the bridge's thread, whose
        thread-default context is the bridge's, and waits until it has run,
        so that work is submitted in the order of the calls; returns an
        asyncio future of @finish(result)."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        if cancellable is None:
            cancellable = Gio.Cancellable()
        future.add_done_callback(lambda f: f.cancelled() and cancellable.cancel())

        def settle(value, error):
            if not future.done():
                if error is not None:
                    future.set_exception(error)
                else:
                    future.set_result(value)

        def done(source, result):
            try:
                value, error = finish(result), None
            except GLib.Error as e:
                value, error = None, e
            loop.call_soon_threadsafe(settle, value, error)

        started = threading.Event()
        failure = []

        def start():
            try:
                begin(cancellable, done)
            except BaseException as e:   # handed to the caller
                failure.append(e)
            finally:
                started.set()
            return GLib.SOURCE_REMOVE

        self.context.invoke_full(GLib.PRIORITY_HIGH, start)
        started.wait()
        if failure:
            raise failure[0]
        return future


def _op_with(op, props):
    for name, value in props.items():
        op.set_property(name, value)
    return op


class Device(Accel.Device):
    """A device, with ops as keyword calls (`run`) and an awaitable
    `submit_async`."""

    def run(self, op, /, **props):
        """Submits an op and waits for it. @op is an Accel.Op or an op type
        name; the keywords set its properties (`dev.run("gemm", a=a, b=b,
        c=c, alpha=2.0)`). A numpy array given for a buffer property is
        taken with Buffer.from_numpy on this device; where that copied it
        and the op writes the buffer, the result is copied back into the
        array. Returns the op."""
        if isinstance(op, str):
            op = Op.new_by_name(op)
        capture = _Capture.current(self)
        back = []
        for name, value in props.items():
            if not isinstance(value, Accel.Buffer) and hasattr(value, "__array_interface__") \
                    and _is_buffer_property(op, name):
                buf, shared = _from_numpy(self, value, None, None)
                if not shared:
                    if capture is not None:
                        raise ValueError(f"“{name}”: a numpy array that this device cannot share is copied "
                                         "once, not at each replay: capture an Accel.Buffer")
                    back.append((value, buf))
                value = buf
            op.set_property(name, value)
        if capture is not None:
            capture.graph.add(op)
            return op
        self.submit(op, None)
        if back:
            written = op.get_buffers(Accel.Access.WRITE)
            for array, buf in back:
                if buf in written:
                    array[...] = buf.numpy()
        return op

    def capture(self, lane=-1):
        """Records the ops that `run` is given on this thread, instead of
        running them, into an Accel.Graph made ready to replay when the
        block ends (as torch.cuda.graph does):

            with dev.capture() as g:
                dev.run("fill", dst=x, value=1.0)
                dev.run("axpy", x=x, y=y, alpha=2.0)
            g.replay(None)        # runs both, as many times as wanted

        The graph keeps copies of the ops as they were when run in the
        block (their buffers' contents are read at each replay); changing
        an op afterwards does not change the graph. @lane is the lane the
        graph runs on (-1: any)."""
        return _Capture(self, lane)

    def submit_async(self, op, cancellable=None, callback=None, *user_data):
        """With a callback, the GIO call. Without one, an awaitable:
        `ok = await dev.submit_async(op)` on a running asyncio loop, raising
        GLib.Error as submit_finish does; cancelling the awaiting task
        cancels the op while it is queued."""
        if callback is not None:
            return super().submit_async(op, cancellable, callback, *user_data)
        return _AsyncBridge.get().call(
            lambda c, cb: Accel.Device.submit_async(self, op, c, cb),
            _with_error_codes(functools.partial(Accel.Device.submit_finish, self)), cancellable)


_wrap_errors(Device)
Device = override(Device)
__all__.append("Device")


class _Capture:
    """Device.capture(): which devices this thread is capturing on."""

    _local = threading.local()

    def __init__(self, device, lane):
        self.device = device
        self.graph = Accel.Graph.new(device, lane)

    @classmethod
    def current(cls, device):
        for c in getattr(cls._local, "stack", ()):
            if c.device == device:
                return c
        return None

    def __enter__(self):
        if _Capture.current(self.device) is not None:
            raise RuntimeError(f"already capturing on {self.device.get_name()}")
        _Capture._local.stack = getattr(_Capture._local, "stack", ()) + (self,)
        return self.graph

    def __exit__(self, exc_type, exc, tb):
        _Capture._local.stack = tuple(c for c in _Capture._local.stack if c is not self)
        if exc_type is None:
            self.graph.instantiate()
        return False


def _is_buffer_property(op, name):
    pspec = op.find_property(name)
    return pspec is not None and pspec.value_type.is_a(Accel.Buffer.__gtype__)


# ---------------------------------------------------------------- Op, System

_op_new_by_name = _with_error_codes(Accel.Op.new_by_name)


class Op(Accel.Op):
    """An op; `Accel.Op.new_by_name("gemm", a=a, b=b, c=c)` sets properties by keyword."""

    @staticmethod
    def new_by_name(type_name, **props):
        return _op_with(_op_new_by_name(type_name), props)


_wrap_errors(Op)
Op = override(Op)
__all__.append("Op")


class System(Accel.System):
    """The system; its methods raise Accel.Error codes."""


_wrap_errors(System)
System = override(System)
__all__.append("System")
