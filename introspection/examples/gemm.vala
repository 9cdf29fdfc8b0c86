/* A GEMM on the default device from Vala, checked against a product
 * computed here: blocking, then async with yield on a main loop.
 *
 *   valac --pkg accel-1.0 gemm.vala && ./gemm
 *
 * (the uninstalled build compiles it as build/introspection/examples/example-gemm-vala,
 * and the bindings suite runs it)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

const int M = 64;
const int K = 32;
const int N = 16;

float[] random_matrix (int n) {
    var m = new float[n];
    for (int i = 0; i < n; i++)
        m[i] = (float) Random.next_double ();
    return m;
}

Accel.Buffer upload (Accel.Device dev, float[] data, int64 rows, int64 cols) throws Error {
    var buf = dev.alloc (Accel.DType.F32, new Accel.Shape ({ rows, cols }));
    var bytes = new uint8[data.length * sizeof (float)];
    Memory.copy (bytes, data, bytes.length);
    buf.upload (new Bytes.take ((owned) bytes));
    return buf;
}

float[] download (Accel.Buffer buf) throws Error {
    var bytes = buf.download ();
    var result = new float[bytes.get_size () / sizeof (float)];
    Memory.copy (result, bytes.get_data (), bytes.get_size ());
    return result;
}

void check (float[] got, float[] x, float[] y, double scale) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double want = 0;
            for (int p = 0; p < K; p++)
                want += (double) x[i * K + p] * y[p * N + j];
            want *= scale;
            if (Math.fabs (got[i * N + j] - want) > 1e-4 * (1 + Math.fabs (want)))
                error ("c[%d, %d] = %g, expected %g", i, j, got[i * N + j], want);
        }
}

async void run_async (Accel.Device dev, Accel.Buffer a, Accel.Buffer b, Accel.Buffer c,
                      float[] x, float[] y, MainLoop loop) {
    try {
        // The op as a class, its properties set by the object initialiser.
        yield dev.submit_async (new Accel.Gemm (a, b, c) { alpha = 2.0 }, null);
        check (download (c), x, y, 2.0);
        print ("async gemm (alpha=2): ok\n");
    } catch (Error e) {
        error ("%s", e.message);
    }
    loop.quit ();
}

int main () {
    try {
        var system = new Accel.System ();
        var dev = system.get_device ("default");
        print ("using %s\n", dev.get_name ());

        var x = random_matrix (M * K);
        var y = random_matrix (K * N);
        var a = upload (dev, x, M, K);
        var b = upload (dev, y, K, N);
        var c = dev.alloc (Accel.DType.F32, new Accel.Shape ({ M, N }));

        // Blocking: an op made by name; its parameters are GObject properties.
        var op = Accel.Op.new_by_name ("gemm");
        op.set ("a", a, "b", b, "c", c);
        dev.submit (op, null);
        check (download (c), x, y, 1.0);
        print ("blocking gemm: ok\n");

        var loop = new MainLoop ();
        run_async.begin (dev, a, b, c, x, y, loop);
        loop.run ();

        // A bad op is refused before launch; the error is an Accel.Error.
        try {
            dev.submit (new Accel.Gemm (a, a, c), null);
            return 1;
        } catch (Accel.Error.SHAPE_MISMATCH e) {
            print ("refused as expected: %s\n", e.message);
        }
        system.shutdown ();
    } catch (Error e) {
        printerr ("%s\n", e.message);
        return 1;
    }
    return 0;
}
