// Promises from JavaScript (gjs): the GIO async pairs of Accel turned into
// promises with Gio._promisify, several ops in flight at once, awaited in
// an async function; a refused op is a rejected promise.
//
//   meson devenv -C build gjs -m ../introspection/examples/async.js
//
// SPDX-License-Identifier: LGPL-2.1-or-later

import Accel from 'gi://Accel?version=1.0';
import GLib from 'gi://GLib';
import Gio from 'gi://Gio';
import System from 'system';

// Each pair once: afterwards, calling submit_async without a callback
// returns a promise, settled on this thread's main context.
Gio._promisify(Accel.Device.prototype, 'submit_async', 'submit_finish');
Gio._promisify(Accel.Buffer.prototype, 'upload_async', 'upload_finish');
Gio._promisify(Accel.Buffer.prototype, 'download_async', 'download_finish');

const system = Accel.System.new();
const dev = system.get_device('default');

async function vector(values) {
    const buf = dev.alloc(Accel.DType.F32, Accel.Shape.new([values.length]));
    await buf.upload_async(new GLib.Bytes(new Uint8Array(values.buffer)), null);
    return buf;
}

async function read(buf) {
    const bytes = await buf.download_async(null);
    return new Float32Array(bytes.toArray().slice().buffer);
}

async function main() {
    // Odd lengths of fresh random data.
    const lengths = Array.from({length: 5}, () => 1 + Math.floor(Math.random() * 5000));
    const inputs = lengths.map(n => Float32Array.from({length: n}, () => Math.random() * 2 - 1));
    const alphas = lengths.map(() => 0.5 + Math.random());
    const buffers = await Promise.all(inputs.map(vector));

    // Five ops in flight; the device runs them in submission order.
    await Promise.all(buffers.map((x, i) => dev.submit_async(new Accel.Scal({x, alpha: alphas[i]}), null)));

    const results = await Promise.all(buffers.map(read));
    results.forEach((got, i) => {
        inputs[i].forEach((v, j) => {
            const want = Math.fround(v * alphas[i]);
            if (Math.abs(got[j] - want) > 1e-6 * (1 + Math.abs(want)))
                throw new Error(`scal ${i}: [${j}] = ${got[j]}, expected ${want}`);
        });
    });
    print(`${results.length} scal ops awaited together: ok`);

    // A refused op rejects its promise with Accel's error.
    const wrong = dev.alloc(Accel.DType.F32, Accel.Shape.new([lengths[0] + 1]));
    try {
        await dev.submit_async(new Accel.Copy({src: buffers[0], dst: wrong}), null);
        throw new Error('a bad copy completed');
    } catch (e) {
        if (!(e instanceof GLib.Error) || !e.matches(Accel.Error, Accel.Error.SHAPE_MISMATCH))
            throw e;
        print(`rejected as expected: ${e.message}`);
    }
}

const loop = new GLib.MainLoop(null, false);
let status = 0;
main().catch(e => {
    printerr(`failed: ${e.message}`);
    status = 1;
}).finally(() => loop.quit());
loop.run();
system.shutdown();
System.exit(status);
