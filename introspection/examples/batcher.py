#!/usr/bin/python3
# A `linear` model behind a `batcher`: 64 one-row requests, a few batched runs.
import gi
gi.require_version("Accel", "1.0")
from gi.repository import Accel, GLib
import numpy as np

system = Accel.System.new()
model = system.new_model("linear", ["layer-sizes", "seed"], [GLib.Variant("at", [256, 128]), 42])
server = system.spawn("batcher", ["model", "max-batch-size", "max-queue-delay-us"], [model, 32, 2000])
loop, answers = GLib.MainLoop(), []


def answered(actor, result, i):
    reply = actor.ask_finish(result)   # raises GLib.Error if the request failed
    y = reply.lookup_value("y")        # (dtype, shape, bytes)
    data = y.get_child_value(2).get_data_as_bytes().get_data()
    answers.append(np.frombuffer(data, np.float32).reshape(y.get_child_value(1).unpack()))
    print(f"request {i}: batch of {reply['batch-size']}, queued {reply['queue-us']} µs")
    if len(answers) == 64:
        loop.quit()


for i in range(64):
    x = np.random.rand(1, 256).astype(np.float32)
    data = GLib.Variant.new_from_bytes(GLib.VariantType("ay"), GLib.Bytes(x.tobytes()), True)
    request = {"x": GLib.Variant.new_tuple(GLib.Variant("s", "f32"), GLib.Variant("ax", x.shape), data)}
    server.ask_async(GLib.Variant("a{sv}", request), None, answered, i)
loop.run()
