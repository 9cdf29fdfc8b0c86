#!/usr/bin/python3
# Tests of the PyGObject overrides (introspection/python/gi/overrides/
# Accel.py) against the uninstalled build: numpy interop (sharing and
# copies, odd shapes, non-contiguous inputs, dtypes both ways, views that
# outlive their device), DLPack with numpy.from_dlpack, a device behind
# accel-device-host, Device.run, keyword ops, awaitable submit_async and
# Accel.Error codes on exceptions. Run with Debian's /usr/bin/python3.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import asyncio
import gc
import os
import sys

import gi
gi.require_version("Accel", "1.0")
gi.require_version("GLib", "2.0")
gi.require_version("Gio", "2.0")
from gi.repository import Accel, GLib, GObject, Gio  # noqa: E402
import numpy as np  # noqa: E402

import taprunner  # noqa: E402

try:
    import ml_dtypes
except ImportError:
    ml_dtypes = None

SEED = int(os.environ.get("ACCEL_TEST_SEED", np.random.SeedSequence().entropy % (1 << 32)))
rng = np.random.default_rng(SEED)

# Accel dtype -> numpy dtype, written out here (not taken from the overrides).
NUMPY_OF = {
    Accel.DType.F16: np.float16, Accel.DType.F32: np.float32, Accel.DType.F64: np.float64,
    Accel.DType.C64: np.complex64, Accel.DType.C128: np.complex128, Accel.DType.I8: np.int8,
    Accel.DType.U8: np.uint8, Accel.DType.I32: np.int32, Accel.DType.U32: np.uint32,
    Accel.DType.I64: np.int64,
}
RAW_OF = {Accel.DType.BF16: np.uint16, Accel.DType.FP8_E4M3: np.uint8, Accel.DType.FP8_E5M2: np.uint8}
ML_OF = {Accel.DType.BF16: "bfloat16", Accel.DType.FP8_E4M3: "float8_e4m3fn", Accel.DType.FP8_E5M2: "float8_e5m2"}


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def expect_error(code, func, *args, **kwargs):
    try:
        func(*args, **kwargs)
    except GLib.Error as e:
        check(e.matches(Accel.error_quark(), code), f"{e.message} is {code.value_nick}")
        check(isinstance(e.code, Accel.Error) and e.code == code,
              f"the code is the Accel.Error member: {e.code!r}")
        return e
    raise AssertionError(f"no GLib.Error raised, expected {code.value_nick}")


def expect_raise(exc, func, *args, **kwargs):
    try:
        func(*args, **kwargs)
    except exc as e:
        return e
    raise AssertionError(f"no {exc.__name__} raised")


def random_shape(max_rank=4, max_dim=13):
    return tuple(int(d) for d in rng.integers(1, max_dim, size=int(rng.integers(1, max_rank + 1))))


def random_array(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return (rng.uniform(0.5, 2.0, shape) * rng.choice([-1, 1], shape)).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def address(a):
    return a.__array_interface__["data"][0]


class Fixture:
    def __init__(self):
        self.system = Accel.System.new()
        self.dev = self.system.get_device("cpu:0")
        backend = self.system.get_backend("cpu")
        # cpu:0 behind accel-device-host, with shared host memory.
        self.remote = GObject.new(Accel.RemoteDevice, name="remote-cpu:0", backend=backend,
                                  hosted_device="cpu:0", host_memory_size=1 << 22)


def test_dtypes_both_ways(fx):
    dev = fx.dev
    for adt, npt in NUMPY_OF.items():
        x = random_array(random_shape(), npt)
        buf = Accel.Buffer.from_numpy(dev, x)
        check(buf.get_dtype() == adt, f"{np.dtype(npt)} maps to {adt.value_nick}: {buf.get_dtype()}")
        check(buf.dtype == np.dtype(npt), f"{adt.value_nick} maps back to {np.dtype(npt)}: {buf.dtype}")
        check(buf.shape == x.shape and buf.ndim == x.ndim and buf.nbytes == x.nbytes, "shape, ndim, nbytes")
        y = buf.numpy()
        check(y.dtype == np.dtype(npt) and np.array_equal(y, x), f"{adt.value_nick} values")
    for adt, raw in RAW_OF.items():
        bits = random_array(random_shape(), raw)
        buf = Accel.Buffer.from_numpy(dev, bits, dtype=adt)
        check(buf.get_dtype() == adt, f"raw bits taken as {adt.value_nick}")
        want = np.dtype(getattr(ml_dtypes, ML_OF[adt])) if ml_dtypes else np.dtype(raw)
        check(buf.dtype == want, f"{adt.value_nick} shows as {want}: {buf.dtype}")
        check(np.array_equal(buf.numpy().view(raw), bits), f"{adt.value_nick} bits kept")
        if ml_dtypes:
            typed = bits.view(getattr(ml_dtypes, ML_OF[adt]))
            again = Accel.Buffer.from_numpy(dev, typed)
            check(again.get_dtype() == adt, f"ml_dtypes {typed.dtype} maps to {adt.value_nick}")
        else:
            # Without ml_dtypes, raw uint16 is uint16: no Accel dtype holds it.
            if raw == np.uint16:
                expect_error(Accel.Error.DTYPE_UNSUPPORTED, Accel.Buffer.from_numpy, dev, bits)
    # The bits are what the library means by bf16: a cast from f32 rounds
    # to nearest even on the upper half, computed here independently.
    x = random_array(random_shape(), np.float32)
    out = dev.alloc(Accel.DType.BF16, Accel.Shape.new(list(x.shape)))
    dev.run("cast", src=x, dst=out)
    u = x.view(np.uint32).astype(np.uint64)
    want = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    check(np.array_equal(out.numpy().view(np.uint16), want), "f32 -> bf16 cast bits")
    for bad in (np.zeros(3, np.int16), np.zeros(3, bool), np.zeros(2, np.uint64)):
        expect_error(Accel.Error.DTYPE_UNSUPPORTED, Accel.Buffer.from_numpy, dev, bad)
    e = expect_error(Accel.Error.DTYPE_UNSUPPORTED, Accel.Buffer.from_numpy, dev, np.zeros(3, np.float32),
                     dtype=Accel.DType.F64)
    check("4-byte" in e.message and "8-byte" in e.message, f"sizes named: {e.message}")


def test_from_numpy_shares(fx):
    dev = fx.dev
    for _ in range(6):
        x = random_array(random_shape(), np.float32)
        buf = Accel.Buffer.from_numpy(dev, x)
        check(address(buf.numpy()) == address(x), "a C-contiguous array is shared on cpu:0")
        before = x.copy()
        dev.run("scal", x=buf, alpha=-2.5)
        check(np.array_equal(x, before * np.float32(-2.5)), "the op wrote the array in place")
        copied = Accel.Buffer.from_numpy(dev, x, copy=True)
        check(address(copied.numpy()) != address(x), "copy=True copies")
        check(np.array_equal(copied.numpy(), x), "copy=True copies the values")
    # Scalars and empty arrays.
    s = Accel.Buffer.from_numpy(dev, np.float64(rng.standard_normal()))
    check(s.shape == () and s.numpy().shape == (), "a 0-d array")
    e = Accel.Buffer.from_numpy(dev, np.zeros((0, int(rng.integers(1, 9))), np.float32))
    check(e.shape[0] == 0 and e.numpy().size == 0, "an empty array")


def test_from_numpy_non_contiguous(fx):
    dev = fx.dev
    base = random_array((int(rng.integers(3, 20)), int(rng.integers(3, 20))), np.float32)
    cases = {
        "every other column": base[:, ::2],
        "transposed": base.T,
        "reversed": base[::-1],
        "big-endian": base.astype(">f4"),
        "read-only": np.frombuffer(base.tobytes(), np.float32).reshape(base.shape),
    }
    for what, x in cases.items():
        buf = Accel.Buffer.from_numpy(dev, x)
        y = buf.numpy()
        check(y.flags.c_contiguous and y.dtype == np.float32, f"{what}: copied C-contiguous, native")
        check(np.array_equal(y, x), f"{what}: values")
        check(not np.shares_memory(y, x), f"{what}: a copy")
        err = expect_raise(BufferError, Accel.Buffer.from_numpy, dev, x, copy=False)
        check("cannot share" in str(err), f"{what}: copy=False says why: {err}")


def test_numpy_view_outlives_device(fx):
    system = Accel.System.new()
    dev = system.get_device("cpu:0")
    shape = random_shape()
    buf = dev.alloc(Accel.DType.F64, Accel.Shape.new(list(shape)))
    op = Accel.RngFill(dst=buf, seed=int(rng.integers(1, 1 << 31)), low=-1.0, high=1.0)
    dev.submit(op, None)
    view = buf.numpy()
    check(view.flags.writeable and view.shape == shape, "a writeable view of the buffer's shape")
    expected = view.copy()
    check(np.all(expected != 0), "filled")
    # Writes through the view are what the next op reads.
    view[...] = random_array(shape, np.float64)
    expected = view * 3.0
    dev.run("scal", x=buf, alpha=3.0)
    check(np.array_equal(view, expected), "the view sees the op's result")
    other = buf.numpy()
    check(address(other) == address(view), "two views, one memory")
    system.shutdown()
    del buf, op, dev, system, other
    gc.collect()
    check(np.array_equal(view, expected), "the view keeps its data after the system is gone")
    view *= 2.0
    check(np.array_equal(view, expected * 2.0), "and stays writeable")


def test_array_protocol(fx):
    x = random_array(random_shape(), np.complex64)
    buf = Accel.Buffer.from_numpy(fx.dev, x)
    check(np.array_equal(np.asarray(buf), x), "np.asarray")
    y = np.array(buf, dtype=np.complex128)
    check(y.dtype == np.complex128 and np.allclose(y, x), "np.array with a dtype")
    check(not hasattr(buf, "__cuda_array_interface__"), "no CUDA array interface on cpu:0")
    check("c64" in repr(buf) and "cpu:0" in repr(buf), f"repr: {buf!r}")


def test_dlpack_round_trip(fx):
    dev = fx.dev
    check(Accel.Buffer.from_numpy(dev, np.zeros(1)).__dlpack_device__() == (Accel.DLPACK_DEVICE_CPU, 0),
          "__dlpack_device__ of cpu:0")
    for npt in (np.float32, np.int64, np.complex128, np.uint8):
        x = random_array(random_shape(), npt)
        buf = Accel.Buffer.from_dlpack(dev, x)
        check(address(buf.numpy()) == address(x), f"{np.dtype(npt)}: from_dlpack shares")
        y = np.from_dlpack(buf)
        check(address(y) == address(x) and np.array_equal(y, x), "numpy.from_dlpack shares")
        back = Accel.Buffer.from_dlpack(dev, buf)
        check(address(back.numpy()) == address(x), "Accel to Accel")
        # numpy marks what it takes through DLPack read-only, and exports no read-only array.
        expect_raise(BufferError, Accel.Buffer.from_dlpack, dev, y)
        copied = Accel.Buffer.from_dlpack(dev, x, copy=True)
        check(address(copied.numpy()) != address(x) and np.array_equal(copied.numpy(), x),
              "from_dlpack(copy=True)")
    # A strided tensor is taken with its strides.
    base = random_array((int(rng.integers(2, 9)), int(rng.integers(4, 17))), np.float32)
    sub = base[:, 1::3]
    buf = Accel.Buffer.from_dlpack(dev, sub)
    check(not buf.get_shape().is_contiguous(), "strided")
    check(np.array_equal(buf.numpy(), sub) and np.shares_memory(buf.numpy(), base), "strided view")
    out = np.empty(sub.shape, np.float32)
    dev.run("copy", src=buf, dst=out)
    check(np.array_equal(out, sub), "an op reads the strided tensor")
    # Allocated by Accel, lent to numpy, alive after the buffer.
    a = dev.alloc(Accel.DType.I32, Accel.Shape.new(list(random_shape())))
    dev.run("fill", dst=a, value=7.0)
    z = np.from_dlpack(a)
    del a
    gc.collect()
    check(np.all(z == 7), "numpy.from_dlpack keeps the buffer")
    expect_error(Accel.Error.NOT_SUPPORTED, Accel.Buffer.from_dlpack, fx.remote, x, copy=False)


def test_remote(fx):
    dev = fx.remote
    check(not dev.get_dlpack_device()[0], "a hosted device is not addressable here")
    x = random_array(random_shape(max_dim=60), np.float32)
    buf = Accel.Buffer.from_numpy(dev, x)
    check(np.array_equal(buf.numpy(), x), "from_numpy copies into the host, numpy() copies back")
    dev.run("scal", x=buf, alpha=0.5)
    y = buf.numpy()
    check(y.flags.writeable and np.array_equal(y, x * np.float32(0.5)), "the op's result, as a copy")
    check(not np.shares_memory(y, x), "a copy")
    check(buf.__dlpack_device__() == (Accel.DLPACK_DEVICE_CPU, 0), "exported as host copies")
    check(np.array_equal(np.from_dlpack(buf), y), "numpy.from_dlpack of a hosted buffer")
    e = expect_error(Accel.Error.NOT_SUPPORTED, buf.to_dlpack)
    check("CUDA IPC" in e.message and "isolation=none" in e.message, f"says why: {e.message}")
    expect_error(Accel.Error.NOT_SUPPORTED, buf.numpy, copy=False)
    expect_raise(BufferError, Accel.Buffer.from_numpy, dev, x, copy=False)
    # A copy in the host's shared memory outlives the host and the system.
    system2 = Accel.System.new()
    remote2 = GObject.new(Accel.RemoteDevice, name="remote-cpu:1", backend=system2.get_backend("cpu"),
                          hosted_device="cpu:0", host_memory_size=1 << 20)
    z = random_array(random_shape(max_dim=20), np.int32)
    kept = Accel.Buffer.from_numpy(remote2, z).numpy()
    system2.shutdown()
    del remote2, system2
    gc.collect()
    check(np.array_equal(kept, z), "a host copy outlives its device")
    # run() with arrays: the written one gets the result back.
    a = random_array((int(rng.integers(1, 20)), int(rng.integers(1, 20))), np.float32)
    b = random_array((a.shape[1], int(rng.integers(1, 20))), np.float32)
    c = np.zeros((a.shape[0], b.shape[1]), np.float32)
    dev.run("gemm", a=a, b=b, c=c)
    check(np.allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4), "gemm into a numpy array")


def test_run_and_keywords(fx):
    dev = fx.dev
    m, k, n = (int(v) for v in rng.integers(1, 40, size=3))
    a = random_array((m, k), np.float32)
    b = random_array((k, n), np.float32)
    c = np.zeros((m, n), np.float32)
    op = dev.run("gemm", a=a, b=b, c=c, alpha=2.0)
    check(isinstance(op, Accel.Gemm) and op.props.alpha == 2.0, "run returns the op")
    check(np.allclose(c, 2.0 * (a.astype(np.float64) @ b), rtol=1e-4, atol=1e-4), "gemm on numpy arrays")
    # Non-contiguous output: copied in, and the result copied back.
    wide = np.zeros((m, 2 * n), np.float32)
    dev.run("gemm", a=a, b=b, c=wide[:, ::2])
    check(np.allclose(wide[:, ::2], a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
          and np.all(wide[:, 1::2] == 0), "the result lands in a strided output")
    op = Accel.Op.new_by_name("fill", value=3.0, dst=Accel.Buffer.from_numpy(dev, c))
    check(isinstance(op, Accel.Fill) and op.props.value == 3.0, "Op.new_by_name with keywords")
    dev.run(op)
    check(np.all(c == 3.0), "run(op)")
    e = expect_error(Accel.Error.UNKNOWN_TYPE, Accel.Op.new_by_name, "no-such-op", value=1.0)
    check("no-such-op" in e.message, "the message names the type")
    bad_b = random_array((k + 1, n), np.float32)
    e = expect_error(Accel.Error.SHAPE_MISMATCH, dev.run, "gemm", a=a, b=bad_b, c=c)
    check("“b”" in e.message, f"the message names the property: {e.message}")
    # Messages are those of the C library.
    try:
        Accel.Device.submit(dev, Accel.Gemm(a=Accel.Buffer.from_numpy(dev, a), b=Accel.Buffer.from_numpy(dev, bad_b),
                                            c=Accel.Buffer.from_numpy(dev, c)), None)
    except GLib.Error as raw:
        check(raw.message == e.message, "unchanged message")
    expect_error(Accel.Error.NO_DEVICE, fx.system.get_device, "cuda:99")


def test_submit_async(fx):
    dev = fx.dev

    async def main():
        ms = [tuple(int(v) for v in rng.integers(1, 30, size=3)) for _ in range(4)]
        jobs = []
        for m, k, n in ms:
            a, b = random_array((m, k), np.float32), random_array((k, n), np.float32)
            c = np.zeros((m, n), np.float32)
            op = Accel.Gemm(a=Accel.Buffer.from_numpy(dev, a), b=Accel.Buffer.from_numpy(dev, b),
                            c=Accel.Buffer.from_numpy(dev, c))
            jobs.append((a, b, c, dev.submit_async(op)))
        results = await asyncio.gather(*(j[3] for j in jobs))
        check(results == [True] * len(jobs), f"every op completed: {results}")
        for a, b, c, _ in jobs:
            check(np.allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4), "awaited gemm result")
        a, b, c, _ = jobs[0]
        wrong = np.zeros((c.shape[0] + 1, c.shape[1]), np.float32)
        bad = Accel.Gemm(a=Accel.Buffer.from_numpy(dev, a), b=Accel.Buffer.from_numpy(dev, b),
                         c=Accel.Buffer.from_numpy(dev, wrong))
        try:
            await dev.submit_async(bad)
            raise AssertionError("a bad op completed")
        except GLib.Error as e:
            check(e.code == Accel.Error.SHAPE_MISMATCH and isinstance(e.code, Accel.Error),
                  f"awaited error: {e.code!r}")
        cancelled = Gio.Cancellable()
        cancelled.cancel()
        try:
            await dev.submit_async(Accel.Fill(dst=Accel.Buffer.from_numpy(dev, jobs[0][2]), value=1.0), cancelled)
            raise AssertionError("a cancelled op completed")
        except GLib.Error as e:
            check(e.code == Accel.Error.CANCELLED, f"cancelled: {e.message}")
        # The GIO form is still there.
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        dev.submit_async(Accel.Fill(dst=Accel.Buffer.from_numpy(dev, jobs[1][2]), value=5.0), None,
                         lambda d, r: loop.call_soon_threadsafe(done.set_result, d.submit_finish(r)))
        # Its callback runs on the default main context, which nothing iterates here.
        while not done.done():
            GLib.MainContext.default().iteration(False)
            await asyncio.sleep(0.001)
        check(done.result() is True and np.all(jobs[1][2] == 5.0), "submit_async with a callback")

    asyncio.run(main())


def test_capture(fx):
    dev = fx.dev
    n = int(rng.integers(1, 500))
    x = Accel.Buffer.from_numpy(dev, random_array((n,), np.float32))
    y0 = random_array((n,), np.float32)
    y = Accel.Buffer.from_numpy(dev, y0.copy())
    v, alpha = float(rng.uniform(-5, 5)), float(rng.uniform(-2, 2))
    with dev.capture() as g:
        fill = dev.run("fill", dst=x, value=v)
        dev.run("axpy", x=x, y=y, alpha=alpha)
    check(isinstance(g, Accel.Graph) and g.get_n_ops() == 2 and g.is_instantiated(), "two ops captured")
    check(np.array_equal(y.numpy(), y0), "nothing ran while capturing")
    rounds = int(rng.integers(1, 4))
    for _ in range(rounds):
        g.replay(None)
    want = y0.astype(np.float64) + rounds * alpha * np.float32(v)
    check(np.allclose(y.numpy(), want, rtol=1e-5, atol=1e-4), f"{rounds} replays")
    fill.props.value = v + 1.0        # the graph holds a copy: not seen
    dev.run("fill", dst=x, value=-3.0)
    g.replay(None)
    check(np.all(x.numpy() == np.float32(v)), "the graph keeps the ops as they were")
    dev.run("fill", dst=x, value=7.0)   # outside the block: runs at once
    check(np.all(x.numpy() == 7.0), "run after the block runs")
    try:
        with dev.capture():
            with dev.capture():
                pass
        check(False, "nested capture on one device")
    except RuntimeError as e:
        check("already capturing" in str(e), "nested capture refused")
    check(dev.run("fill", dst=x, value=2.0) and np.all(x.numpy() == 2.0), "capture state reset after an error")


TESTS = [
    test_dtypes_both_ways,
    test_from_numpy_shares,
    test_from_numpy_non_contiguous,
    test_numpy_view_outlives_device,
    test_array_protocol,
    test_dlpack_round_trip,
    test_remote,
    test_run_and_keywords,
    test_submit_async,
    test_capture,
]


def make_fixture():
    check("gi/overrides/Accel.py" in sys.modules["gi.overrides.Accel"].__file__, "the overrides are loaded")
    return Fixture()


def main():
    note = f"; ml_dtypes: {ml_dtypes.__version__ if ml_dtypes else 'not installed (raw uint views)'}"
    return taprunner.main(TESTS, make_fixture, "/bindings/python-overrides", SEED, note)


if __name__ == "__main__":
    sys.exit(main())
