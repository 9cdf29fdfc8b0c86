// Binding tests of Accel-1.0 from JavaScript (gjs), against the uninstalled
// build: meson sets GI_TYPELIB_PATH, LD_LIBRARY_PATH and ACCEL_PLUGIN_PATH.
// Run as an ES module: gjs -m test-accel.js
//
// SPDX-License-Identifier: LGPL-2.1-or-later

import Accel from 'gi://Accel?version=1.0';
import GLib from 'gi://GLib';
import Gio from 'gi://Gio';

import {run} from './taprunner.js';

Gio._promisify(Accel.Device.prototype, 'submit_async', 'submit_finish');
Gio._promisify(Accel.Buffer.prototype, 'upload_async', 'upload_finish');
Gio._promisify(Accel.Buffer.prototype, 'download_async', 'download_finish');

function check(cond, what) {
    if (!cond)
        throw new Error(`check failed: ${what}`);
}

// Calls func and checks that it throws GLib.Error in Accel's domain with code.
function expectError(code, func) {
    try {
        func();
    } catch (e) {
        return checkError(e, code);
    }
    throw new Error(`no GLib.Error thrown, expected Accel.Error ${code}`);
}

async function expectErrorAsync(code, promise) {
    try {
        await promise;
    } catch (e) {
        return checkError(e, code);
    }
    throw new Error(`no GLib.Error thrown, expected Accel.Error ${code}`);
}

function checkError(e, code) {
    check(e instanceof GLib.Error, `a GLib.Error, not ${e}`);
    check(e.domain === Accel.error_quark(), `domain ${GLib.quark_to_string(e.domain)} is Accel's`);
    check(e.matches(Accel.Error, code), `code ${e.code} is ${code}: ${e.message}`);
    check(e.code === code, 'code');
    return e;
}

function randInt(lo, hi) {
    return lo + Math.floor(Math.random() * (hi - lo));
}

function randomF32(n) {
    const a = new Float32Array(n);
    for (let i = 0; i < n; i++)
        a[i] = Math.random() * 2 - 1;
    return a;
}

function upload(dev, data, dims) {
    const buf = dev.alloc(Accel.DType.F32, Accel.Shape.new(dims));
    buf.upload(new GLib.Bytes(new Uint8Array(data.buffer, data.byteOffset, data.byteLength)));
    return buf;
}

function toF32(bytes) {
    // Copy: the bytes need not be 4-byte aligned.
    const u8 = bytes.toArray().slice();
    return new Float32Array(u8.buffer, 0, u8.byteLength / 4);
}

function download(buf) {
    return toF32(buf.download());
}

// Reference c = x y in float64, row-major.
function matmul(x, y, m, k, n) {
    const c = new Float64Array(m * n);
    for (let i = 0; i < m; i++) {
        for (let p = 0; p < k; p++) {
            const xv = x[i * k + p];
            for (let j = 0; j < n; j++)
                c[i * n + j] += xv * y[p * n + j];
        }
    }
    return c;
}

function allClose(got, ref, scale = 1.0) {
    for (let i = 0; i < ref.length; i++) {
        const want = scale * ref[i];
        if (Math.abs(got[i] - want) > 1e-4 + 1e-4 * Math.abs(want))
            return false;
    }
    return got.length === ref.length;
}

function randomGemm(dev) {
    const m = randInt(1, 80), k = randInt(1, 80), n = randInt(1, 80);
    const x = randomF32(m * k), y = randomF32(k * n);
    return {
        a: upload(dev, x, [m, k]),
        b: upload(dev, y, [k, n]),
        c: dev.alloc(Accel.DType.F32, Accel.Shape.new([m, n])),
        ref: matmul(x, y, m, k, n),
        m, k, n,
    };
}

const system = Accel.System.new();
const dev = system.get_device('cpu:0');

const tests = {
    'list-devices-and-plugins'() {
        const names = system.list_devices().map(d => d.get_name());
        check(names.includes('cpu:0'), `cpu:0 listed: ${names}`);
        check(dev.get_backend_name() === 'cpu', 'backend');
        check(dev.generation === dev.get_generation(), 'generation property');
        check(system.get_device('default').get_name() === names[0], 'default is the first device');

        const registry = system.get_registry();
        const plugins = registry.get_plugins();
        const pnames = plugins.map(p => p.get_name());
        check(pnames.includes('cpu') && pnames.includes('fault'), `plugins: ${pnames}`);
        const cpu = plugins.find(p => p.get_name() === 'cpu');
        check(cpu.get_status() === Accel.PluginStatus.OK, 'the cpu plugin is usable');
        check(cpu.list_backends().includes('cpu'), 'the cpu plugin registers the cpu backend');
        const ops = registry.list_op_types();
        for (const name of ['gemm', 'fill', 'fault', 'attention', 'attention-backward',
            'attention-varlen', 'attention-kvcache'])
            check(ops.includes(name), `${name} among ${ops}`);
        const kernels = registry.list_kernels('gemm', 'cpu');
        check(kernels.length >= 1 && kernels[0].get_backend() === 'cpu', 'a cpu gemm kernel');
    },

    'gemm-by-name-blocking'() {
        const g = randomGemm(dev);
        const op = Accel.Op.new_by_name('gemm');
        check(op instanceof Accel.Gemm, 'new_by_name gives the class');
        check(op.get_type_name() === 'gemm', 'type name');
        op.a = g.a;
        op.b = g.b;
        op.c = g.c;
        check(dev.submit(op, null) === true, 'submit returns true');
        check(allClose(download(g.c), g.ref), 'gemm matches the reference');
    },

    'gemm-as-class'() {
        const g = randomGemm(dev);
        const op = new Accel.Gemm({a: g.a, b: g.b, c: g.c, alpha: 2.0});
        check(op.alpha === 2.0, 'alpha set by the constructor');
        dev.submit(op, null);
        check(allClose(download(g.c), g.ref, 2.0), 'alpha=2 gemm matches the reference');

        const op2 = Accel.Gemm.new(g.a, g.b, g.c);
        op2.beta = 0.5;
        dev.submit(op2, null);
        check(allClose(download(g.c), g.ref, 2.0), 'beta=0.5 gemm matches the reference');
    },

    async 'submit-async'() {
        const g = randomGemm(dev);
        const wrong = dev.alloc(Accel.DType.F32, Accel.Shape.new([g.m + 1, g.n]));
        const ok = dev.submit_async(new Accel.Gemm({a: g.a, b: g.b, c: g.c}), null);
        const bad = dev.submit_async(new Accel.Gemm({a: g.a, b: g.b, c: wrong}), null);
        check(await ok === true, 'async gemm completes');
        await expectErrorAsync(Accel.Error.SHAPE_MISMATCH, bad);
        const bytes = await g.c.download_async(null);
        check(allClose(toF32(bytes), g.ref), 'async gemm matches the reference');

        // Async upload, then a round trip.
        const x = randomF32(g.m * g.n);
        await g.c.upload_async(new GLib.Bytes(new Uint8Array(x.buffer)), null);
        const back = download(g.c);
        check(back.every((v, i) => v === x[i]), 'async upload round trip');
    },

    errors() {
        let e = expectError(Accel.Error.UNKNOWN_TYPE, () => Accel.Op.new_by_name('no-such-op'));
        check(e.message.includes('no-such-op'), 'the message names the type');
        expectError(Accel.Error.NO_DEVICE, () => system.get_device('cuda:99'));
        const g = randomGemm(dev);
        expectError(Accel.Error.SHAPE_MISMATCH,
            () => g.a.upload(new GLib.Bytes(new Uint8Array(g.a.get_size() + 4))));
        const wrong = dev.alloc(Accel.DType.F32, Accel.Shape.new([g.m + 1, 3]));
        e = expectError(Accel.Error.SHAPE_MISMATCH,
            () => dev.submit(new Accel.Gemm({a: g.a, b: g.b, c: wrong}), null));
        check(e.message.includes('c'), `the message names the property: ${e.message}`);
        expectError(Accel.Error.INVALID_ARGUMENT,
            () => dev.submit(new Accel.Gemm({a: g.a, b: g.b}), null));
        const f64 = dev.alloc(Accel.DType.F64, g.a.get_shape());
        expectError(Accel.Error.DTYPE_UNSUPPORTED,
            () => dev.submit(new Accel.Gemm({a: f64, b: g.b, c: g.c}), null));
        dev.submit(new Accel.Gemm({a: g.a, b: g.b, c: g.c}), null);
        check(allClose(download(g.c), g.ref), 'the device still works');
    },

    'stale-buffer-after-restart'() {
        const sys2 = Accel.System.new();
        const d = sys2.get_device('cpu:0');
        const gen = d.get_generation();
        const n = randInt(1, 500);
        const x = randomF32(n);
        const old = upload(d, x, [n]);
        check(download(old).every((v, i) => v === x[i]), 'round trip before the fault');
        check(!old.is_stale(), 'a fresh buffer is not stale');

        expectError(Accel.Error.CONTEXT_POISONED, () => d.submit(Accel.Op.new_by_name('fault'), null));
        check(d.get_generation() === gen + 1, `generation went up: ${d.get_generation()}`);
        check(d.get_state() === Accel.DeviceState.READY, 'the device serves again');
        check(old.is_stale(), 'the old buffer is stale');
        expectError(Accel.Error.STALE_BUFFER, () => old.download());
        expectError(Accel.Error.STALE_BUFFER,
            () => d.submit(new Accel.Fill({dst: old, value: 1.0}), null));

        const fresh = d.alloc(Accel.DType.F32, Accel.Shape.new([n]));
        check(fresh.get_generation() === gen + 1, 'new buffers belong to the new generation');
        d.submit(new Accel.Fill({dst: fresh, value: 4.0}), null);
        check(download(fresh).every(v => v === 4.0), 'a new buffer works after the restart');
        sys2.shutdown();
    },
};

run(tests, '/bindings/gjs', () => system.shutdown());
