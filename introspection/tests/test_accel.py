#!/usr/bin/python3
# Binding tests of Accel-1.0 from Python (PyGObject), against the uninstalled
# build: meson sets GI_TYPELIB_PATH, LD_LIBRARY_PATH and ACCEL_PLUGIN_PATH.
# Run with Debian's /usr/bin/python3, which has python3-gi and python3-numpy.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import os
import sys

import gi
gi.require_version("Accel", "1.0")
gi.require_version("GLib", "2.0")
from gi.repository import Accel, GLib, GObject  # noqa: E402
import numpy as np  # noqa: E402

import taprunner  # noqa: E402

SEED = int(os.environ.get("ACCEL_TEST_SEED", np.random.SeedSequence().entropy % (1 << 32)))
rng = np.random.default_rng(SEED)


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def expect_error(code, func, *args):
    """Calls func and checks that it raises GLib.Error in Accel's domain with code."""
    try:
        func(*args)
    except GLib.Error as e:
        check(e.domain == GLib.quark_to_string(Accel.error_quark()),
              f"domain {e.domain!r} is not Accel's")
        check(e.matches(Accel.error_quark(), code),
              f"code {Accel.Error(e.code).value_nick} is not {code.value_nick}: {e.message}")
        check(isinstance(code, Accel.Error), "the code is an Accel.Error value")
        return e
    raise AssertionError(f"no GLib.Error raised, expected {code.value_nick}")


def upload(dev, x):
    dtype = {np.dtype(np.float32): Accel.DType.F32, np.dtype(np.float64): Accel.DType.F64}[x.dtype]
    buf = dev.alloc(dtype, Accel.Shape.new(list(x.shape)))
    buf.upload(GLib.Bytes.new(np.ascontiguousarray(x).tobytes()))
    return buf


def download(buf, dtype=np.float32):
    shape = buf.get_shape().get_dims()
    return np.frombuffer(buf.download().get_data(), dtype=dtype).reshape(shape)


def random_gemm(dev):
    m, k, n = (int(v) for v in rng.integers(1, 80, size=3))
    x = rng.standard_normal((m, k)).astype(np.float32)
    y = rng.standard_normal((k, n)).astype(np.float32)
    a, b = upload(dev, x), upload(dev, y)
    c = dev.alloc(Accel.DType.F32, Accel.Shape.new([m, n]))
    ref = x.astype(np.float64) @ y.astype(np.float64)
    return a, b, c, ref


class Fixture:
    def __init__(self):
        self.system = Accel.System.new()
        self.dev = self.system.get_device("cpu:0")


def test_list_devices_and_plugins(fx):
    devices = fx.system.list_devices()
    names = [d.get_name() for d in devices]
    check("cpu:0" in names, f"cpu:0 listed: {names}")
    check(fx.dev.get_backend_name() == "cpu", "cpu:0 is on the cpu backend")
    check(fx.dev.props.generation == fx.dev.get_generation(), "generation property")
    check(fx.system.get_device("default").get_name() == names[0], "default is the first device")

    registry = fx.system.get_registry()
    plugins = {p.get_name(): p for p in registry.get_plugins()}
    check("cpu" in plugins, f"cpu plugin listed: {sorted(plugins)}")
    check("fault" in plugins, f"fault plugin listed: {sorted(plugins)}")
    check(plugins["cpu"].get_status() == Accel.PluginStatus.OK, "cpu plugin is usable")
    check("cpu" in plugins["cpu"].list_backends(), "the cpu plugin registers the cpu backend")
    op_types = registry.list_op_types()
    for name in ("gemm", "fill", "fault", "attention", "attention-backward",
                 "attention-varlen", "attention-kvcache"):
        check(name in op_types, f"{name} among op types {op_types}")
    for name, cls in (("attention-varlen", Accel.AttentionVarlen), ("attention-kvcache", Accel.AttentionKvcache)):
        op = Accel.Op.new_by_name(name)
        check(isinstance(op, cls) and op.props.sinks == 0 and op.props.alibi_slopes is None,
              f"new_by_name({name!r}) gives {cls.__name__} with its defaults")
    check("cpu" in registry.list_backends(), "cpu backend listed")
    kernels = registry.list_kernels("gemm", "cpu")
    check(len(kernels) >= 1 and kernels[0].get_backend() == "cpu", "a cpu gemm kernel")


def test_gemm_by_name_blocking(fx):
    # The binding contract, as in the issue and the README.
    dev = fx.dev
    x = np.random.rand(64, 32).astype(np.float32)
    y = np.random.rand(32, 16).astype(np.float32)
    a = dev.alloc(Accel.DType.F32, Accel.Shape.new([64, 32])); a.upload(GLib.Bytes.new(x.tobytes()))
    b = dev.alloc(Accel.DType.F32, Accel.Shape.new([32, 16])); b.upload(GLib.Bytes.new(y.tobytes()))
    c = dev.alloc(Accel.DType.F32, Accel.Shape.new([64, 16]))
    op = Accel.Op.new_by_name("gemm")
    op.props.a, op.props.b, op.props.c = a, b, c
    dev.submit(op, None)
    got = np.frombuffer(c.download().get_data(), dtype=np.float32).reshape(64, 16)
    assert np.allclose(got, x @ y, rtol=1e-4)

    # Fresh random shapes, checked against a float64 reference.
    a, b, c, ref = random_gemm(dev)
    op = Accel.Op.new_by_name("gemm")
    check(isinstance(op, Accel.Gemm), f"new_by_name gives the class: {type(op)}")
    check(op.get_type_name() == "gemm", "type name")
    op.props.a, op.props.b, op.props.c = a, b, c
    check(dev.submit(op, None) is True, "submit returns True")
    check(np.allclose(download(c), ref, rtol=1e-4, atol=1e-4), "gemm matches numpy")


def test_gemm_as_class(fx):
    a, b, c, ref = random_gemm(fx.dev)
    op = Accel.Gemm(a=a, b=b, c=c, alpha=2.0)
    check(op.props.alpha == 2.0 and op.props.a == a, "properties set by the constructor")
    fx.dev.submit(op, None)
    check(np.allclose(download(c), 2.0 * ref, rtol=1e-4, atol=1e-4), "alpha=2 gemm matches numpy")

    # beta accumulates into c: c = x@y + 0.5 * (2 x@y)
    op = Accel.Gemm(a=a, b=b, c=c, beta=0.5)
    fx.dev.submit(op, None)
    check(np.allclose(download(c), 2.0 * ref, rtol=1e-4, atol=1e-4), "beta=0.5 gemm matches numpy")

    # The C constructor and the introspectable twin of the varargs one.
    op = Accel.Gemm.new(a, b, c)
    check(isinstance(op, Accel.Gemm), "Accel.Gemm.new")
    op = Accel.Op.new("gemm", ["a", "b", "c", "alpha"],
                      [GObject.Value(Accel.Buffer, a), GObject.Value(Accel.Buffer, b),
                       GObject.Value(Accel.Buffer, c), GObject.Value(GObject.TYPE_DOUBLE, 3.0)])
    check(op.props.alpha == 3.0 and op.props.c == c, "Accel.Op.new with properties")
    fx.dev.submit(op, None)
    check(np.allclose(download(c), 3.0 * ref, rtol=1e-4, atol=1e-4), "alpha=3 gemm matches numpy")


def test_submit_async(fx):
    dev = fx.dev
    a, b, c, ref = random_gemm(dev)
    loop = GLib.MainLoop()
    results = []

    def done(device, result, tag):
        try:
            results.append((tag, device.submit_finish(result), None))
        except GLib.Error as e:
            results.append((tag, False, e))
        if len(results) == 2:
            loop.quit()

    dev.submit_async(Accel.Gemm(a=a, b=b, c=c), None, done, "gemm")
    m, n = ref.shape
    wrong = dev.alloc(Accel.DType.F32, Accel.Shape.new([m + 1, n]))
    dev.submit_async(Accel.Gemm(a=a, b=b, c=wrong), None, done, "bad")
    GLib.timeout_add_seconds(60, loop.quit)
    loop.run()
    check(len(results) == 2, "both completions arrived")
    res = dict((t, (ok, err)) for t, ok, err in results)
    check(res["gemm"] == (True, None), f"gemm ok: {res['gemm']}")
    err = res["bad"][1]
    check(err is not None and err.matches(Accel.error_quark(), Accel.Error.SHAPE_MISMATCH),
          f"bad gemm fails with SHAPE_MISMATCH: {err}")
    check(np.allclose(download(c), ref, rtol=1e-4, atol=1e-4), "async gemm matches numpy")

    # Async download on the loop, too.
    got = []

    def downloaded(buf, result):
        got.append(buf.download_finish(result))
        loop.quit()

    c.download_async(None, downloaded)
    loop.run()
    check(np.allclose(np.frombuffer(got[0].get_data(), dtype=np.float32).reshape(ref.shape), ref,
                      rtol=1e-4, atol=1e-4), "async download")


def test_errors(fx):
    dev = fx.dev
    e = expect_error(Accel.Error.UNKNOWN_TYPE, Accel.Op.new_by_name, "no-such-op")
    check("no-such-op" in e.message, "the message names the type")
    expect_error(Accel.Error.NO_DEVICE, fx.system.get_device, "cuda:99")
    a, b, c, ref = random_gemm(dev)
    expect_error(Accel.Error.SHAPE_MISMATCH, a.upload, GLib.Bytes.new(b"\0" * (a.get_size() + 4)))
    wrong = dev.alloc(Accel.DType.F32, Accel.Shape.new([c.get_shape().get_dim(0) + 1, 3]))
    e = expect_error(Accel.Error.SHAPE_MISMATCH, dev.submit, Accel.Gemm(a=a, b=b, c=wrong), None)
    check("c" in e.message, f"the message names the property: {e.message}")
    e = expect_error(Accel.Error.INVALID_ARGUMENT, dev.submit, Accel.Gemm(a=a, b=b), None)
    check("c" in e.message, f"the message names the missing buffer: {e.message}")
    f64 = dev.alloc(Accel.DType.F64, a.get_shape())
    expect_error(Accel.Error.DTYPE_UNSUPPORTED, dev.submit, Accel.Gemm(a=f64, b=b, c=c), None)
    e = expect_error(Accel.Error.INVALID_ARGUMENT, Accel.Op.new, "gemm", ["no-such-property"],
                     [GObject.Value(GObject.TYPE_DOUBLE, 1.0)])
    check("no-such-property" in e.message, "the message names the property")
    # Nothing failed for good: the device still serves.
    dev.submit(Accel.Gemm(a=a, b=b, c=c), None)
    check(np.allclose(download(c), ref, rtol=1e-4, atol=1e-4), "the device still works")


def test_stale_buffer_after_restart(fx):
    system = Accel.System.new()
    dev = system.get_device("cpu:0")
    gen = dev.get_generation()
    x = rng.standard_normal(int(rng.integers(1, 500))).astype(np.float32)
    old = upload(dev, x)
    check(np.array_equal(download(old), x), "round trip before the fault")
    check(not old.is_stale(), "a fresh buffer is not stale")

    notified = []
    dev.connect("notify::generation", lambda *args: notified.append(True))
    expect_error(Accel.Error.CONTEXT_POISONED, dev.submit, Accel.Op.new_by_name("fault"), None)
    check(dev.get_generation() == gen + 1, f"generation went up: {dev.get_generation()}")
    check(dev.get_state() == Accel.DeviceState.READY, "the device serves again")
    check(old.is_stale(), "the old buffer is stale")
    expect_error(Accel.Error.STALE_BUFFER, old.download)
    expect_error(Accel.Error.STALE_BUFFER, dev.submit, Accel.Fill(dst=old, value=1.0), None)

    fresh = dev.alloc(Accel.DType.F32, Accel.Shape.new([len(x)]))
    check(fresh.get_generation() == gen + 1, "new buffers belong to the new generation")
    dev.submit(Accel.Fill(dst=fresh, value=4.0), None)
    check(np.all(download(fresh) == 4.0), "a new buffer works after the restart")
    check(len(notified) >= 1, "notify::generation was emitted")
    system.shutdown()


def test_graph(fx):
    # A chain recorded once and replayed with one submit each time, as
    # RawKernel users record launches; the CPU runs the same semantics.
    n = int(rng.integers(1, 5000))
    x = rng.standard_normal(n)
    y = rng.standard_normal(n)
    bx, by = upload(fx.dev, x), upload(fx.dev, y)
    a = float(rng.uniform(0.5, 1.5))
    graph = Accel.Graph.new(fx.dev, -1)
    graph.add(Accel.Scal(x=bx, alpha=a))
    graph.add(Accel.Axpy(x=bx, y=by, alpha=2.0))
    graph.instantiate()
    check(graph.get_n_ops() == 2, "two ops recorded")
    reps = int(rng.integers(2, 6))
    for _ in range(reps):
        graph.replay(None)
        x = a * x
        y = 2.0 * x + y
    check(np.allclose(download(by, np.float64), y, rtol=1e-12), "replays match numpy")
    replay = graph.new_replay()
    check(isinstance(replay, Accel.Replay), "the replay is an op")
    fx.dev.submit(replay, None)
    stats = fx.dev.get_stats().unpack()
    check(stats["ops-completed"] >= reps + 1, f"stats count the replays: {stats}")
    expect_error(Accel.Error.INVALID_ARGUMENT, graph.add, Accel.Scal(x=bx, alpha=1.0))
    # Modules need a backend with a module compiler: not the CPU's.
    expect_error(Accel.Error.NOT_SUPPORTED, Accel.Module.new_from_source, fx.dev,
                 'extern "C" __global__ void k () {}', None, None, None)


TESTS = [
    test_list_devices_and_plugins,
    test_gemm_by_name_blocking,
    test_gemm_as_class,
    test_submit_async,
    test_errors,
    test_stale_buffer_after_restart,
    test_graph,
]


def main():
    return taprunner.main(TESTS, Fixture, "/bindings/python", SEED)


if __name__ == "__main__":
    sys.exit(main())
