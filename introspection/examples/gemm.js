// A GEMM on the default device from JavaScript (gjs), checked against a
// product computed here: blocking, then async through Gio._promisify.
//
//   meson devenv -C build gjs -m introspection/examples/gemm.js
//
// SPDX-License-Identifier: LGPL-2.1-or-later

import Accel from 'gi://Accel?version=1.0';
import GLib from 'gi://GLib';
import Gio from 'gi://Gio';
import System from 'system';

Gio._promisify(Accel.Device.prototype, 'submit_async', 'submit_finish');

const [M, K, N] = [64, 32, 16];
const system = Accel.System.new();
const dev = system.get_device('default');
print(`devices: ${system.list_devices().map(d => d.get_name()).join(', ')} - using ${dev.get_name()}`);

function randomMatrix(rows, cols) {
    return Float32Array.from({length: rows * cols}, () => Math.random());
}

function upload(data, rows, cols) {
    const buf = dev.alloc(Accel.DType.F32, Accel.Shape.new([rows, cols]));
    buf.upload(new GLib.Bytes(new Uint8Array(data.buffer)));
    return buf;
}

function download(buf) {
    const bytes = buf.download().toArray().slice();
    return new Float32Array(bytes.buffer);
}

function check(got, x, y, scale) {
    for (let i = 0; i < M; i++) {
        for (let j = 0; j < N; j++) {
            let want = 0;
            for (let p = 0; p < K; p++)
                want += x[i * K + p] * y[p * N + j];
            want *= scale;
            if (Math.abs(got[i * N + j] - want) > 1e-4 * (1 + Math.abs(want)))
                throw new Error(`c[${i}, ${j}] = ${got[i * N + j]}, expected ${want}`);
        }
    }
}

const x = randomMatrix(M, K), y = randomMatrix(K, N);
const a = upload(x, M, K), b = upload(y, K, N);
const c = dev.alloc(Accel.DType.F32, Accel.Shape.new([M, N]));

// Blocking: an op made by name; its parameters are GObject properties.
const op = Accel.Op.new_by_name('gemm');
op.a = a;
op.b = b;
op.c = c;
dev.submit(op, null);
check(download(c), x, y, 1.0);
print('blocking gemm: ok');

// Async: the op as a class; the promise settles on this thread's main loop.
const loop = new GLib.MainLoop(null, false);
let status = 0;
dev.submit_async(new Accel.Gemm({a, b, c, alpha: 2.0}), null).then(() => {
    check(download(c), x, y, 2.0);
    print('async gemm (alpha=2): ok');
}).catch(e => {
    // Errors are GLib.Error in Accel's domain: e.matches(Accel.Error, Accel.Error.SHAPE_MISMATCH)
    print(`failed: ${e.message}`);
    status = 1;
}).finally(() => loop.quit());
loop.run();

try {
    dev.submit(new Accel.Gemm({a, b: a, c}), null);
    status = 1;
} catch (e) {
    if (!e.matches(Accel.Error, Accel.Error.SHAPE_MISMATCH))
        throw e;
    print(`refused as expected: ${e.message}`);
}
system.shutdown();
System.exit(status);
