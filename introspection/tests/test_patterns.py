#!/usr/bin/python3
# Binding tests of the serving patterns from Python: a model written in
# Python (a GObject subclass implementing Accel.Model) served by the
# batcher and checked against numpy; its errors reaching the request; a
# Python model that raises (its run never completes) caught by the
# watchdog; the `linear` model against numpy; bad input; and the example
# of docs/patterns.md, which must be introspection/examples/batcher.py.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import os
import sys
import threading
import time

import gi
gi.require_version("Accel", "1.0")
gi.require_version("GLib", "2.0")
from gi.repository import Accel, GLib, GObject  # noqa: E402
import numpy as np  # noqa: E402

import taprunner  # noqa: E402

SEED = int(os.environ.get("ACCEL_TEST_SEED", np.random.SeedSequence().entropy % (1 << 32)))
rng = np.random.default_rng(SEED)
HERE = os.path.dirname(os.path.abspath(__file__))


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def tensor(x):
    """A numpy array as the (saxay) a request carries."""
    dtype = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}[x.dtype]
    data = GLib.Variant.new_from_bytes(GLib.VariantType("ay"), GLib.Bytes(np.ascontiguousarray(x).tobytes()), True)
    return GLib.Variant.new_tuple(GLib.Variant("s", dtype), GLib.Variant("ax", list(x.shape)), data)


def request(x, **options):
    entries = {"x": tensor(x)}
    for key, value in options.items():
        entries[key.replace("_", "-")] = value
    return GLib.Variant("a{sv}", entries)


def output(reply, name="y"):
    t = reply.lookup_value(name)
    dtype = {"f32": np.float32, "f64": np.float64}[t.get_child_value(0).get_string()]
    data = t.get_child_value(2).get_data_as_bytes().get_data()
    return np.frombuffer(data, dtype).reshape(t.get_child_value(1).unpack())


def ask_all(actor, requests):
    """Sends every request at once; returns (reply or GLib.Error) per request."""
    loop = GLib.MainLoop()
    answers = [None] * len(requests)
    left = [len(requests)]

    def answered(source, result, i):
        try:
            answers[i] = source.ask_finish(result)
        except GLib.Error as e:
            answers[i] = e
        left[0] -= 1
        if left[0] == 0:
            loop.quit()

    for i, r in enumerate(requests):
        actor.ask_async(r, None, answered, i)
    loop.run()
    return answers


def is_error(answer, code):
    return isinstance(answer, GLib.Error) and answer.matches(Accel.error_quark(), code)


class Square(GObject.Object, Accel.Model):
    """y = x * x - 1, on the host with numpy; negative x[0] is refused."""

    def __init__(self, d, raise_in_run=False):
        super().__init__()
        self.d = d
        self.prepared = []
        self.threads = set()
        self.raise_in_run = raise_in_run

    def do_get_input(self, index):
        return Accel.TensorSpec.new("x", Accel.DType.F32, [self.d]) if index == 0 else None

    def do_get_output(self, index):
        return Accel.TensorSpec.new("y", Accel.DType.F32, [self.d]) if index == 0 else None

    def do_prepare(self, device):
        self.prepared.append(device.get_name())
        return True

    def do_run_batch(self, device, inputs, outputs, task):
        self.threads.add(threading.get_ident())
        if self.raise_in_run:
            raise RuntimeError("a model with a bug")
        rows = inputs[0].get_shape().get_dims()[0]
        x = np.frombuffer(inputs[0].download().get_data(), np.float32).reshape(rows, self.d)
        if np.any(x[:, 0] < 0):
            task.return_error(GLib.Error.new_literal(Accel.error_quark(), "Square takes x[0] >= 0",
                                                     Accel.Error.INVALID_ARGUMENT))
            return
        outputs[0].upload(GLib.Bytes.new((x * x - 1).astype(np.float32).tobytes()))
        task.return_boolean(True)


class Fixture:
    def __init__(self):
        self.system = Accel.System.new()
        self.dev = self.system.get_device("cpu:0")


def test_python_model_served(fx):
    d = int(rng.integers(2, 40))
    model = Square(d)
    actor = fx.system.spawn("batcher", ["model", "device", "max-batch-size", "max-queue-delay-us"],
                            [model, fx.dev, 16, 200000])
    xs = [rng.uniform(0.1, 1, (int(rng.integers(1, 4)), d)).astype(np.float32) for _ in range(30)]
    answers = ask_all(actor, [request(x, sequence=GLib.Variant("t", i)) for i, x in enumerate(xs)])
    sizes = []
    for i, (x, a) in enumerate(zip(xs, answers)):
        check(not isinstance(a, GLib.Error), f"request {i} answered: {a}")
        check(np.allclose(output(a), x.astype(np.float64) ** 2 - 1, rtol=1e-6, atol=1e-6), f"request {i}: y = x^2 - 1")
        check(a["sequence"] == i, "the sequence comes back")
        sizes.append(a["batch-size"])
    check(max(sizes) > 1, f"requests were batched: {sizes}")
    check(model.prepared == ["cpu:0"], f"prepared once on cpu:0: {model.prepared}")
    check(threading.get_ident() not in model.threads, "the model ran on the actor's thread, not the caller's")
    check(actor.props.batches_run < len(xs), "fewer runs than requests")
    actor.stop()


def test_python_model_error(fx):
    model = Square(3)
    actor = fx.system.spawn("batcher", ["model", "device", "max-batch-size"], [model, fx.dev, 1])
    good = rng.uniform(0.1, 1, (1, 3)).astype(np.float32)
    bad = -good
    answers = ask_all(actor, [request(good), request(bad), request(good)])
    check(not isinstance(answers[0], GLib.Error) and not isinstance(answers[2], GLib.Error), "the good ones run")
    check(is_error(answers[1], Accel.Error.INVALID_ARGUMENT), f"the model's error reaches its request: {answers[1]}")
    check(actor.get_restart_count() == 0, "a request's own error does not restart the actor")
    actor.stop()


def test_python_model_raises(fx):
    model = Square(3, raise_in_run=True)
    actor = fx.system.spawn("batcher", ["model", "device", "run-timeout-ms"], [model, fx.dev, 300])
    answers = ask_all(actor, [request(rng.uniform(0.1, 1, (1, 3)).astype(np.float32))])
    check(is_error(answers[0], Accel.Error.TIMED_OUT), f"the watchdog answers: {answers[0]}")
    check("run-timeout-ms" in answers[0].message, answers[0].message)
    # The watchdog answers the batch's callers, then fails the actor: the
    # restart is counted on the actor's thread, maybe after the answer came.
    deadline = time.monotonic() + 10
    while actor.get_restart_count() == 0 and time.monotonic() < deadline:
        time.sleep(0.001)
    check(actor.get_restart_count() == 1, "and the actor was restarted")
    actor.stop()


def test_linear(fx):
    k, n = int(rng.integers(3, 50)), int(rng.integers(3, 50))
    w = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    b = rng.uniform(-1, 1, n).astype(np.float32)
    model = fx.system.new_model("linear", ["layer-sizes", "weights", "biases", "output-activation"],
                                [GLib.Variant("at", [k, n]), GLib.Variant("aay", [w.tobytes()]),
                                 GLib.Variant("aay", [b.tobytes()]), "relu"])
    check([s.to_string() for s in model.get_inputs()] == [f"x: f32 [n, {k}]"], "the linear model's input")
    actor = fx.system.spawn("batcher", ["model", "device"], [model, fx.dev])
    xs = [rng.uniform(-1, 1, (int(rng.integers(1, 5)), k)).astype(np.float32) for _ in range(20)]
    for x, a in zip(xs, ask_all(actor, [request(x) for x in xs])):
        ref = np.maximum(x.astype(np.float64) @ w + b, 0)
        check(np.allclose(output(a), ref, rtol=1e-4, atol=1e-5), "linear matches numpy")
        check(a["model-version"] == 1, "version 1")
    actor.stop()


def test_bad_input(fx):
    model = Square(4)
    actor = fx.system.spawn("batcher", ["model", "device"], [model, fx.dev])
    wrong = request(rng.uniform(0, 1, (1, 4)))   # f64
    answers = ask_all(actor, [wrong, request(rng.uniform(0, 1, (1, 4)).astype(np.float32), priority=GLib.Variant("u", 9))])
    check(is_error(answers[0], Accel.Error.INVALID_ARGUMENT) and "“x”" in answers[0].message, f"dtype: {answers[0]}")
    check(is_error(answers[1], Accel.Error.INVALID_ARGUMENT) and "“priority”" in answers[1].message,
          f"priority: {answers[1]}")
    try:
        fx.system.spawn("batcher", ["model", "max-batch-size"], [model, "many"])
        raise AssertionError("a bad property value was accepted")
    except GLib.Error as e:
        check(e.matches(Accel.error_quark(), Accel.Error.INVALID_ARGUMENT) and "max-batch-size" in e.message, e.message)
    actor.stop()


def test_docs_example(fx):
    with open(os.path.join(HERE, "..", "..", "docs", "patterns.md"), encoding="utf-8") as f:
        doc = f.read()
    with open(os.path.join(HERE, "..", "examples", "batcher.py"), encoding="utf-8") as f:
        example = f.read()
    block = doc.split("```python\n", 1)[1].split("```", 1)[0]
    check(block == example, "docs/patterns.md shows introspection/examples/batcher.py as it is")
    check(len(example.splitlines()) < 30, "in under 30 lines")


TESTS = [
    test_python_model_served,
    test_python_model_error,
    test_python_model_raises,
    test_linear,
    test_bad_input,
    test_docs_example,
]


def main():
    return taprunner.main(TESTS, Fixture, "/bindings/python/patterns", SEED)


if __name__ == "__main__":
    sys.exit(main())
