// Binding tests of the serving patterns from JavaScript (gjs): spawn a
// batcher by name over a `linear` model, ask it with promises, and check
// the replies against the same model run directly; a model written in
// JavaScript served by a batcher; errors of spawn and of bad requests.
//
// SPDX-License-Identifier: LGPL-2.1-or-later

import Accel from 'gi://Accel?version=1.0';
import GLib from 'gi://GLib';
import GObject from 'gi://GObject';
import Gio from 'gi://Gio';

import {run} from './taprunner.js';

Gio._promisify(Accel.Actor.prototype, 'ask_async', 'ask_finish');

function check(cond, what) {
    if (!cond)
        throw new Error(`check failed: ${what}`);
}

function randInt(lo, hi) {
    return lo + Math.floor(Math.random() * (hi - lo));
}

const system = Accel.System.new();
const dev = system.get_device('cpu:0');

function tensor(values, rows, d) {
    return new GLib.Variant('(saxay)', ['f32', [rows, d], new Uint8Array(values.buffer)]);
}

function output(reply, name) {
    const [dtype, shape, data] = reply.lookup_value(name, null).deepUnpack();
    check(dtype === 'f32', 'f32 output');
    return [shape, new Float32Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength))];
}

// y = 2 x + 1 on the host; gjs runs it on its main thread (set_main_context).
const Affine = GObject.registerClass({Implements: [Accel.Model]}, class Affine extends GObject.Object {
    _init(d) {
        super._init();
        this.d = d;
        this.prepared = 0;
    }

    vfunc_get_input(i) {
        return i === 0 ? Accel.TensorSpec.new('x', Accel.DType.F32, [this.d]) : null;
    }

    vfunc_get_output(i) {
        return i === 0 ? Accel.TensorSpec.new('y', Accel.DType.F32, [this.d]) : null;
    }

    vfunc_prepare(_device) {
        this.prepared++;
        return true;
    }

    vfunc_run_batch(_device, inputs, outputs, task) {
        const bytes = inputs[0].download().get_data();
        const x = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
        outputs[0].upload(new GLib.Bytes(new Uint8Array(x.map(v => 2 * v + 1).buffer)));
        task.return_boolean(true);
    }
});

const tests = {
    async modelInJavaScript() {
        const d = randInt(2, 20);
        const model = new Affine(d);
        model.set_main_context(GLib.MainContext.default());
        const actor = system.spawn('batcher', ['model', 'device', 'max-batch-size', 'max-queue-delay-us'],
            [model, dev, 8, 50000]);
        const xs = [];
        const asks = [];
        for (let i = 0; i < 10; i++) {
            const x = new Float32Array(d);
            for (let j = 0; j < d; j++)
                x[j] = Math.random() * 2 - 1;
            xs.push(x);
            asks.push(actor.ask_async(new GLib.Variant('a{sv}', {x: tensor(x, 1, d)}), null));
        }
        const replies = await Promise.all(asks);
        replies.forEach((reply, i) => {
            const [, y] = output(reply, 'y');
            for (let j = 0; j < d; j++)
                check(Math.abs(y[j] - (2 * xs[i][j] + 1)) <= 1e-6, `reply ${i}[${j}]: ${y[j]}`);
        });
        check(model.prepared === 1, `prepared once: ${model.prepared}`);
        check(actor.batches_run < 10, `batched: ${actor.batches_run} runs`);
        actor.stop();
    },

    async spawnByName() {
        const k = randInt(3, 40), n = randInt(2, 30);
        const model = system.new_model('linear', ['layer-sizes', 'seed', 'activation'],
            [new GLib.Variant('at', [k, randInt(2, 20), n]), randInt(1, 1000), 'gelu']);
        const actor = system.spawn('batcher', ['model', 'device', 'max-batch-size', 'max-queue-delay-us'],
            [model, dev, 8, 100000]);
        check(actor instanceof Accel.Actor, 'an actor');
        check(actor.get_name().startsWith('batcher-'), `named after its type: ${actor.get_name()}`);
        check(actor.get_parent() === system.get_root_actor(), 'a child of the system root');

        const count = 12;
        const xs = [];
        const asks = [];
        for (let i = 0; i < count; i++) {
            const x = new Float32Array(k);
            for (let j = 0; j < k; j++)
                x[j] = Math.random() * 2 - 1;
            xs.push(x);
            const request = new GLib.Variant('a{sv}', {
                x: tensor(x, 1, k),
                sequence: new GLib.Variant('t', i),
            });
            asks.push(actor.ask_async(request, null));
        }
        const replies = await Promise.all(asks);

        // The reference: the same model run directly on the rows.
        const xb = dev.alloc(Accel.DType.F32, Accel.Shape.new([count, k]));
        const all = new Float32Array(count * k);
        xs.forEach((x, i) => all.set(x, i * k));
        xb.upload(new GLib.Bytes(new Uint8Array(all.buffer)));
        const yb = dev.alloc(Accel.DType.F32, Accel.Shape.new([count, n]));
        check(model.run(dev, [xb], [yb], null), 'a direct run');
        const ref = new Float32Array(yb.download().get_data().buffer);

        let batched = 0;
        replies.forEach((reply, i) => {
            const [shape, y] = output(reply, 'y');
            check(shape[0] === 1 && shape[1] === n, `reply ${i} shape ${shape}`);
            for (let j = 0; j < n; j++)
                check(Math.abs(y[j] - ref[i * n + j]) <= 1e-4 * (1 + Math.abs(ref[i * n + j])), `reply ${i}[${j}]`);
            check(reply.lookup_value('sequence', null).unpack() === i, 'sequence echoed');
            if (reply.lookup_value('batch-size', null).unpack() > 1)
                batched++;
        });
        check(batched > 0, 'some requests ran batched');
        check(actor.batches_run < count, `fewer runs (${actor.batches_run}) than requests`);
        actor.stop();
    },

    async errors() {
        try {
            system.spawn('no-such-pattern', [], []);
            throw new Error('an unknown actor type was spawned');
        } catch (e) {
            check(e.matches(Accel.Error, Accel.Error.UNKNOWN_TYPE), `${e}`);
        }
        const model = system.new_model('linear', ['layer-sizes', 'seed'], [new GLib.Variant('at', [4, 2]), 3]);
        const actor = system.spawn('batcher', ['model', 'device'], [model, dev]);
        try {
            await actor.ask_async(new GLib.Variant('a{sv}', {x: tensor(new Float32Array(5), 1, 5)}), null);
            throw new Error('a request of the wrong shape was answered');
        } catch (e) {
            check(e.matches(Accel.Error, Accel.Error.INVALID_ARGUMENT), `${e}`);
            check(e.message.includes('“x”'), e.message);
        }
        actor.stop();
    },
};

run(tests, '/bindings/gjs/patterns', () => system.shutdown());
