/* Binding tests of Accel-1.0 from Vala, compiled against the generated
 * accel-1.0.vapi and run against the uninstalled build.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

static Accel.System test_system;
static Accel.Device test_dev;

static uint8[] f32_to_bytes (float[] values) {
    var result = new uint8[values.length * sizeof (float)];
    Memory.copy (result, values, result.length);
    return result;
}

static float[] bytes_to_f32 (Bytes bytes) {
    unowned uint8[] data = bytes.get_data ();
    var result = new float[data.length / sizeof (float)];
    Memory.copy (result, data, result.length * sizeof (float));
    return result;
}

static float[] random_f32 (int n) {
    var result = new float[n];
    for (int i = 0; i < n; i++)
        result[i] = (float) Test.rand_double_range (-1, 1);
    return result;
}

static Accel.Buffer upload (Accel.Device dev, float[] data, int64[] dims) throws Error {
    var buf = dev.alloc (Accel.DType.F32, new Accel.Shape (dims));
    buf.upload (new Bytes (f32_to_bytes (data)));
    return buf;
}

static float[] download (Accel.Buffer buf) throws Error {
    return bytes_to_f32 (buf.download ());
}

/* Reference c = x y in double, row-major. */
static double[] matmul (float[] x, float[] y, int m, int k, int n) {
    var c = new double[m * n];
    for (int i = 0; i < m; i++)
        for (int p = 0; p < k; p++)
            for (int j = 0; j < n; j++)
                c[i * n + j] += (double) x[i * k + p] * y[p * n + j];
    return c;
}

static bool all_close (float[] got, double[] want, double scale = 1.0) {
    if (got.length != want.length)
        return false;
    for (int i = 0; i < want.length; i++) {
        double w = scale * want[i];
        if (Math.fabs (got[i] - w) > 1e-4 + 1e-4 * Math.fabs (w))
            return false;
    }
    return true;
}

class RandomGemm {
    public int m;
    public int k;
    public int n;
    public Accel.Buffer a;
    public Accel.Buffer b;
    public Accel.Buffer c;
    public double[] reference;

    public RandomGemm (Accel.Device dev) throws Error {
        m = Test.rand_int_range (1, 80);
        k = Test.rand_int_range (1, 80);
        n = Test.rand_int_range (1, 80);
        var x = random_f32 (m * k);
        var y = random_f32 (k * n);
        a = upload (dev, x, { m, k });
        b = upload (dev, y, { k, n });
        c = dev.alloc (Accel.DType.F32, new Accel.Shape ({ m, n }));
        reference = matmul (x, y, m, k, n);
    }
}

/* Checks that @e is in Accel's domain with @code. */
static void check_error (Error e, int code) {
    if (!(e is Accel.Error))
        error ("%s is not in Accel's error domain", e.message);
    assert (e.domain == Accel.Error.quark ());
    assert (e.matches (Accel.Error.quark (), code));
    if (e.code != code)
        error ("expected code %d, got %d: %s", code, e.code, e.message);
}

static void test_list_devices_and_plugins () {
    try {
        var devices = test_system.list_devices ();
        bool found = false;
        foreach (var d in devices)
            found |= d.get_name () == "cpu:0";
        assert (found);
        assert (test_dev.get_backend_name () == "cpu");
        assert (test_dev.generation == test_dev.get_generation ());
        assert (test_system.get_device ("default").get_name () == devices[0].get_name ());

        var registry = test_system.get_registry ();
        bool have_cpu = false, have_fault = false;
        var plugins = registry.get_plugins ();
        foreach (var p in plugins) {
            if (p.get_name () == "cpu") {
                have_cpu = true;
                assert (p.get_status () == Accel.PluginStatus.OK);
                assert ("cpu" in p.list_backends ());
            }
            have_fault |= p.get_name () == "fault";
        }
        assert (have_cpu && have_fault);
        var ops = registry.list_op_types ();
        assert ("gemm" in ops && "fill" in ops && "fault" in ops);
        assert ("attention" in ops && "attention-backward" in ops
                && "attention-varlen" in ops && "attention-kvcache" in ops);
        assert ("cpu" in registry.list_backends ());
        var kernels = registry.list_kernels ("gemm", "cpu");
        assert (kernels.length >= 1 && kernels[0].get_backend () == "cpu");
    } catch (Error e) {
        error ("%s", e.message);
    }
}

static void test_gemm_by_name_blocking () {
    try {
        var g = new RandomGemm (test_dev);
        var op = Accel.Op.new_by_name ("gemm");
        assert (op is Accel.Gemm);
        assert (op.get_type_name () == "gemm");
        op.set ("a", g.a, "b", g.b, "c", g.c);
        assert (test_dev.submit (op, null));
        assert (all_close (download (g.c), g.reference));
    } catch (Error e) {
        error ("%s", e.message);
    }
}

static void test_gemm_as_class () {
    try {
        var g = new RandomGemm (test_dev);
        var op = new Accel.Gemm (g.a, g.b, g.c) { alpha = 2.0 };
        assert (op.alpha == 2.0 && op.a == g.a);
        test_dev.submit (op, null);
        assert (all_close (download (g.c), g.reference, 2.0));

        var op2 = (Accel.Gemm) Object.new (typeof (Accel.Gemm), "a", g.a, "b", g.b, "c", g.c, "beta", 0.5);
        test_dev.submit (op2, null);
        assert (all_close (download (g.c), g.reference, 2.0));
    } catch (Error e) {
        error ("%s", e.message);
    }
}

static async void submit_async_cases (MainLoop loop) {
    try {
        var g = new RandomGemm (test_dev);
        var wrong = test_dev.alloc (Accel.DType.F32, new Accel.Shape ({ g.m + 1, g.n }));
        assert (yield test_dev.submit_async (new Accel.Gemm (g.a, g.b, g.c), null));
        try {
            yield test_dev.submit_async (new Accel.Gemm (g.a, g.b, wrong), null);
            assert_not_reached ();
        } catch (Error e) {
            check_error (e, Accel.Error.SHAPE_MISMATCH);
        }
        var bytes = yield g.c.download_async (null);
        assert (all_close (bytes_to_f32 (bytes), g.reference));

        var x = random_f32 (g.m * g.n);
        yield g.c.upload_async (new Bytes (f32_to_bytes (x)), null);
        var back = download (g.c);
        for (int i = 0; i < x.length; i++)
            assert (back[i] == x[i]);
    } catch (Error e) {
        error ("%s", e.message);
    }
    loop.quit ();
}

static void test_submit_async () {
    var loop = new MainLoop ();
    submit_async_cases.begin (loop);
    loop.run ();
}

static void test_errors () {
    try {
        try {
            Accel.Op.new_by_name ("no-such-op");
            assert_not_reached ();
        } catch (Error e) {
            check_error (e, Accel.Error.UNKNOWN_TYPE);
            assert ("no-such-op" in e.message);
        }
        try {
            test_system.get_device ("cuda:99");
            assert_not_reached ();
        } catch (Accel.Error.NO_DEVICE e) {
            check_error (e, Accel.Error.NO_DEVICE);
        }
        var g = new RandomGemm (test_dev);
        try {
            g.a.upload (new Bytes (new uint8[g.a.get_size () + 4]));
            assert_not_reached ();
        } catch (Error e) {
            check_error (e, Accel.Error.SHAPE_MISMATCH);
        }
        var wrong = test_dev.alloc (Accel.DType.F32, new Accel.Shape ({ g.m + 1, 3 }));
        try {
            test_dev.submit (new Accel.Gemm (g.a, g.b, wrong), null);
            assert_not_reached ();
        } catch (Accel.Error.SHAPE_MISMATCH e) {
            check_error (e, Accel.Error.SHAPE_MISMATCH);
        }
        try {
            test_dev.submit ((Accel.Op) Object.new (typeof (Accel.Gemm), "a", g.a, "b", g.b), null);
            assert_not_reached ();
        } catch (Error e) {
            check_error (e, Accel.Error.INVALID_ARGUMENT);
        }
        var f64 = test_dev.alloc (Accel.DType.F64, g.a.get_shape ());
        try {
            test_dev.submit (new Accel.Gemm (f64, g.b, g.c), null);
            assert_not_reached ();
        } catch (Error e) {
            check_error (e, Accel.Error.DTYPE_UNSUPPORTED);
        }
        test_dev.submit (new Accel.Gemm (g.a, g.b, g.c), null);
        assert (all_close (download (g.c), g.reference));
    } catch (Error e) {
        error ("%s", e.message);
    }
}

static void test_stale_buffer_after_restart () {
    try {
        var sys2 = new Accel.System ();
        var d = sys2.get_device ("cpu:0");
        uint gen = d.get_generation ();
        int n = Test.rand_int_range (1, 500);
        var x = random_f32 (n);
        var old = upload (d, x, { n });
        var back = download (old);
        for (int i = 0; i < n; i++)
            assert (back[i] == x[i]);
        assert (!old.is_stale ());

        try {
            d.submit (Accel.Op.new_by_name ("fault"), null);
            assert_not_reached ();
        } catch (Error e) {
            check_error (e, Accel.Error.CONTEXT_POISONED);
        }
        assert (d.get_generation () == gen + 1);
        assert (d.get_state () == Accel.DeviceState.READY);
        assert (old.is_stale ());
        try {
            old.download ();
            assert_not_reached ();
        } catch (Error e) {
            check_error (e, Accel.Error.STALE_BUFFER);
        }
        try {
            d.submit (new Accel.Fill (old, 1.0), null);
            assert_not_reached ();
        } catch (Accel.Error.STALE_BUFFER e) {
            check_error (e, Accel.Error.STALE_BUFFER);
        }

        var fresh = d.alloc (Accel.DType.F32, new Accel.Shape ({ n }));
        assert (fresh.get_generation () == gen + 1);
        d.submit (new Accel.Fill (fresh, 4.0), null);
        foreach (var v in download (fresh))
            assert (v == 4.0f);
        sys2.shutdown ();
    } catch (Error e) {
        error ("%s", e.message);
    }
}

int main (string[] args) {
    Test.init (ref args);
    try {
        test_system = new Accel.System ();
        test_dev = test_system.get_device ("cpu:0");
    } catch (Error e) {
        error ("%s", e.message);
    }
    Test.add_func ("/bindings/vala/list-devices-and-plugins", test_list_devices_and_plugins);
    Test.add_func ("/bindings/vala/gemm-by-name-blocking", test_gemm_by_name_blocking);
    Test.add_func ("/bindings/vala/gemm-as-class", test_gemm_as_class);
    Test.add_func ("/bindings/vala/submit-async", test_submit_async);
    Test.add_func ("/bindings/vala/errors", test_errors);
    Test.add_func ("/bindings/vala/stale-buffer-after-restart", test_stale_buffer_after_restart);
    int status = Test.run ();
    test_system.shutdown ();
    return status;
}
