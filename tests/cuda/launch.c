/* Run-time compiled kernels on cuda:0 (gpu suite; in this process and
 * behind a device host): modules from source (sync and async, name
 * expressions, a warm cache) and from cubin and PTX images; launches
 * checked against host references on fresh random data of odd sizes;
 * every scalar kind passed through; dynamic shared memory past 48 KiB;
 * buffer hazards between lanes following the declared accesses; clear
 * errors (argument count and kinds, unknown kernel, a signature that does
 * not match the kernel, a block over the kernel's limit, too much shared
 * memory) after which the device still works; and last, a kernel that
 * faults: CONTEXT_POISONED, and with a host process the module works again
 * in the new context.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include "cuda-test.h"

static const char saxpy_src[] =
  "extern \"C\" __global__ void saxpy (float a, const float *x, float *y, int n)\n"
  "{\n"
  "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
  "  if (i < n) y[i] = a * x[i] + y[i];\n"
  "}\n";

static AccelModule *
compile (const char *src, const char * const *names)
{
  g_autoptr(GError) error = NULL;
  const char * const options[] = { "-std=c++17", "--fmad=false", NULL };
  AccelModule *m = accel_module_new_from_source (ct_gpu (), src, options, names, NULL, &error);
  g_assert_no_error (error);
  return m;
}

static AccelFunction *
function (AccelModule *m, const char *name, const char *signature)
{
  g_autoptr(GError) error = NULL;
  AccelFunction *fn = accel_module_get_function (m, name, signature, &error);
  g_assert_no_error (error);
  return fn;
}

static AccelOp *
saxpy_op (AccelFunction *fn, float a, AccelBuffer *x, AccelBuffer *y, gint64 n)
{
  AccelOp *op = accel_launch_new (fn);
  accel_launch_set_grid (ACCEL_LAUNCH (op), (guint) ((n + 127) / 128), 1, 1);
  accel_launch_set_block (ACCEL_LAUNCH (op), 128, 1, 1);
  accel_launch_add_float32 (ACCEL_LAUNCH (op), a);
  accel_launch_add_buffer (ACCEL_LAUNCH (op), x, ACCEL_ACCESS_READ);
  accel_launch_add_buffer (ACCEL_LAUNCH (op), y, ACCEL_ACCESS_READ_WRITE);
  accel_launch_add_int32 (ACCEL_LAUNCH (op), (gint32) n);
  return op;
}

/* y = a x + y, checked on the host; returns nothing, asserts. */
static void
check_saxpy (AccelFunction *fn)
{
  AccelDevice *gpu = ct_gpu ();
  gint64 n = g_test_rand_int_range (1, 100000) | 1;
  float a = (float) g_test_rand_double_range (-2, 2);
  g_autoptr(CtPair) x = ct_pair_new (ACCEL_DTYPE_F32, &n, 1, -1, 1);
  g_autoptr(CtPair) y = ct_pair_new (ACCEL_DTYPE_F32, &n, 1, -1, 1);
  g_autoptr(AccelOp) op = saxpy_op (fn, a, x->gpu, y->gpu, n);
  ct_submit (gpu, op);
  g_autofree double *got = ct_read (y->gpu);
  g_autofree double *want = g_new (double, n);
  for (gint64 i = 0; i < n; i++)
    want[i] = (double) (a * (float) x->values[i] + (float) y->values[i]);
  ct_assert_close ("saxpy", got, want, NULL, n, 1e-6, 1e-7);
}

static void
test_saxpy (void)
{
  if (!ct_gpu ())
    return;
  g_autoptr(AccelModule) m = compile (saxpy_src, NULL);
  /* Hopper's own architecture, with its `a` features. */
  int major = 0, minor = 0;
  g_object_get (ct_gpu (), "compute-capability-major", &major, "compute-capability-minor", &minor, NULL);
  g_autofree char *want_target = g_strdup_printf ("sm_%d%d%s", major, minor, major >= 9 ? "a" : "");
  g_assert_cmpstr (accel_module_get_target (m), ==, want_target);
  g_autoptr(AccelFunction) fn = function (m, "saxpy", "float32, buffer, buffer, int32");
  for (int rep = 0; rep < 3; rep++)
    check_saxpy (fn);

  /* The same source again: from the cache, the same image, the same result. */
  g_autoptr(AccelModule) again = compile (saxpy_src, NULL);
  g_assert_false (accel_module_get_compiled (again));
  g_assert_true (g_bytes_equal (accel_module_get_image (again), accel_module_get_image (m)));
  g_assert_cmpuint (accel_module_get_handle (again), !=, accel_module_get_handle (m));
  g_autoptr(AccelFunction) fn2 = function (again, "saxpy", "f32, ptr, ptr, i32");
  check_saxpy (fn2);
}

static void
compiled_async (GObject *source, GAsyncResult *result, gpointer data)
{
  AccelModule **out = data;
  g_autoptr(GError) error = NULL;
  *out = accel_module_new_from_source_finish (result, &error);
  g_assert_no_error (error);
}

static void
test_templates_async (void)
{
  if (!ct_gpu ())
    return;
  /* A comment no other source has keeps this one out of the kernel
   * cache (shared by runs of the suite): it compiles now. */
  int salt = g_test_rand_int_range (1, 1000);
  g_autofree char *unique = g_uuid_string_random ();
  g_autofree char *src = g_strdup_printf (
    "// %s\n"
    "template <typename T>\n"
    "__global__ void scale (T *x, T a, long long n)\n"
    "{\n"
    "  long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] = x[i] * a + (T) %d;\n"
    "}\n", unique, salt);
  const char * const names[] = { "scale<float>", "scale<double>", NULL };
  const char * const options[] = { "-std=c++17", "--fmad=false", NULL };
  AccelModule *m = NULL;
  accel_module_new_from_source_async (ct_gpu (), src, options, names, NULL, compiled_async, &m);
  while (m == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_autoptr(AccelModule) module = m;
  g_assert_true (accel_module_get_compiled (module));

  for (int k = 0; k < 2; k++)
    {
      AccelDType dtype = k ? ACCEL_DTYPE_F64 : ACCEL_DTYPE_F32;
      g_autoptr(AccelFunction) fn = function (module, names[k], k ? "buffer, float64, int64" : "buffer, float32, int64");
      g_assert_true (g_str_has_prefix (accel_function_get_symbol (fn), "_Z"));
      gint64 n = g_test_rand_int_range (1, 70000);
      double a = g_test_rand_double_range (-3, 3);
      g_autoptr(CtPair) x = ct_pair_new (dtype, &n, 1, -1, 1);
      g_autoptr(AccelOp) op = accel_launch_new (fn);
      accel_launch_set_grid (ACCEL_LAUNCH (op), (guint) ((n + 255) / 256), 1, 1);
      accel_launch_set_block (ACCEL_LAUNCH (op), 256, 1, 1);
      accel_launch_add_buffer (ACCEL_LAUNCH (op), x->gpu, ACCEL_ACCESS_READ_WRITE);
      if (k)
        accel_launch_add_float64 (ACCEL_LAUNCH (op), a);
      else
        accel_launch_add_float32 (ACCEL_LAUNCH (op), (float) a);
      accel_launch_add_int64 (ACCEL_LAUNCH (op), n);
      ct_submit (ct_gpu (), op);
      g_autofree double *got = ct_read (x->gpu);
      g_autofree double *want = g_new (double, n);
      for (gint64 i = 0; i < n; i++)
        want[i] = k ? x->values[i] * a + salt : (double) ((float) x->values[i] * (float) a + (float) salt);
      ct_assert_close (names[k], got, want, NULL, n, k ? 1e-15 : 1e-6, 1e-6);
    }

  /* A template instance that was not compiled is refused at once. */
  g_autoptr(GError) error = NULL;
  g_assert_null (accel_module_get_function (module, "scale<int>", "buffer, int32, int64", &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
}

/* Every scalar kind reaches the kernel bit for bit. */
static void
test_scalars (void)
{
  if (!ct_gpu ())
    return;
  g_autoptr(AccelModule) m = compile (
    "extern \"C\" __global__ void put (double *out, int a, long long b, float c, double d, unsigned u)\n"
    "{ out[0] = a; out[1] = (double) b; out[2] = c; out[3] = d; out[4] = u; }\n", NULL);
  g_autoptr(AccelFunction) fn = function (m, "put", "buffer, int32, int64, float32, float64, int32");
  gint64 five = 5;
  g_autoptr(AccelBuffer) out = ct_alloc (ct_gpu (), ACCEL_DTYPE_F64, &five, 1);
  for (int rep = 0; rep < 4; rep++)
    {
      gint32 a = g_test_rand_int ();
      gint64 b = ((gint64) g_test_rand_int_range (-(1 << 20), 1 << 20)) << 20;
      float c = (float) g_test_rand_double_range (-1e6, 1e6);
      double d = g_test_rand_double_range (-1e300, 1e300);
      guint32 u = (guint32) g_test_rand_int ();
      g_autoptr(AccelOp) op = accel_launch_new (fn);
      accel_launch_add_buffer (ACCEL_LAUNCH (op), out, ACCEL_ACCESS_WRITE);
      accel_launch_add_int32 (ACCEL_LAUNCH (op), a);
      accel_launch_add_int64 (ACCEL_LAUNCH (op), b);
      accel_launch_add_float32 (ACCEL_LAUNCH (op), c);
      accel_launch_add_float64 (ACCEL_LAUNCH (op), d);
      accel_launch_add_int32 (ACCEL_LAUNCH (op), (gint32) u);
      ct_submit (ct_gpu (), op);
      g_autofree double *got = ct_read (out);
      g_assert_cmpfloat (got[0], ==, (double) a);
      g_assert_cmpfloat (got[1], ==, (double) b);
      g_assert_cmpfloat (got[2], ==, (double) c);
      g_assert_cmpfloat (got[3], ==, d);
      g_assert_cmpfloat (got[4], ==, (double) u);
    }
}

/* A block reverses its slice through dynamic shared memory. */
static const char reverse_src[] =
  "extern \"C\" __global__ void reverse (const float *in, float *out, int per_block)\n"
  "{\n"
  "  extern __shared__ float tile[];\n"
  "  int base = blockIdx.x * per_block;\n"
  "  for (int i = threadIdx.x; i < per_block; i += blockDim.x) tile[i] = in[base + i];\n"
  "  __syncthreads ();\n"
  "  for (int i = threadIdx.x; i < per_block; i += blockDim.x) out[base + i] = tile[per_block - 1 - i];\n"
  "}\n";

static void
test_shared_memory (void)
{
  if (!ct_gpu ())
    return;
  g_autoptr(AccelModule) m = compile (reverse_src, NULL);
  g_autoptr(AccelFunction) fn = function (m, "reverse", "buffer, buffer, int32");
  /* Past the 48 KiB a block gets without asking. */
  gint32 per_block = g_test_rand_int_range (12289, 40000);
  gint64 blocks = g_test_rand_int_range (1, 9), n = per_block * blocks;
  g_autoptr(CtPair) in = ct_pair_new (ACCEL_DTYPE_F32, &n, 1, -1, 1);
  g_autoptr(AccelBuffer) out = ct_alloc (ct_gpu (), ACCEL_DTYPE_F32, &n, 1);
  g_autoptr(AccelOp) op = accel_launch_new (fn);
  g_object_set (op, "grid-x", (guint) blocks, "block-x", 512u, "shared-memory", (guint) (per_block * 4), NULL);
  accel_launch_add_buffer (ACCEL_LAUNCH (op), in->gpu, ACCEL_ACCESS_READ);
  accel_launch_add_buffer (ACCEL_LAUNCH (op), out, ACCEL_ACCESS_WRITE);
  accel_launch_add_int32 (ACCEL_LAUNCH (op), per_block);
  ct_submit (ct_gpu (), op);
  g_autofree double *got = ct_read (out);
  g_autofree double *want = g_new (double, n);
  for (gint64 b = 0; b < blocks; b++)
    for (gint32 i = 0; i < per_block; i++)
      want[b * per_block + i] = in->values[b * per_block + per_block - 1 - i];
  ct_assert_close ("reverse", got, want, NULL, n, 0, 0);

  /* More than a block may have is refused before anything runs. */
  g_autoptr(GError) error = NULL;
  g_object_set (op, "shared-memory", (guint) (4 << 20), NULL);
  g_assert_false (accel_device_submit (ct_gpu (), op, NULL, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "shared memory"));
}

/* The accesses declared for buffer arguments order launches across lanes:
 * a slow writer on one lane, a reader on another. */
static void
test_hazards (void)
{
  if (!ct_gpu ())
    return;
  g_autoptr(AccelModule) m = compile (
    "extern \"C\" __global__ void slow_add (float *x, float v, int n, int spins)\n"
    "{\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i >= n) return;\n"
    "  float acc = x[i];\n"
    "  for (int k = 0; k < spins; k++) acc = acc * 0.5f + v * 0.5f + (acc - acc);\n"
    "  x[i] = acc + v;\n"
    "}\n"
    "extern \"C\" __global__ void copy2 (const float *src, float *dst, int n)\n"
    "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) dst[i] = 2.0f * src[i]; }\n", NULL);
  g_autoptr(AccelFunction) slow = function (m, "slow_add", "buffer, float32, int32, int32");
  g_autoptr(AccelFunction) copy = function (m, "copy2", "buffer, buffer, int32");
  guint lanes = accel_device_get_lanes (ct_gpu ());
  if (lanes < 2)
    {
      g_test_skip ("one lane");
      return;
    }
  for (int rep = 0; rep < 4; rep++)
    {
      gint64 n = g_test_rand_int_range (1000, 200000);
      g_autoptr(AccelBuffer) x = ct_alloc (ct_gpu (), ACCEL_DTYPE_F32, &n, 1);
      g_autoptr(AccelBuffer) y = ct_alloc (ct_gpu (), ACCEL_DTYPE_F32, &n, 1);
      g_autoptr(AccelOp) zero = accel_fill_new (x, 0.0);
      ct_submit (ct_gpu (), zero);
      float v = (float) g_test_rand_double_range (1, 2);
      g_autoptr(AccelOp) w = ct_slow_writer (slow, x, ACCEL_ACCESS_READ_WRITE, v, n);
      g_autoptr(AccelOp) r = accel_launch_new (copy);
      accel_launch_set_grid (ACCEL_LAUNCH (r), (guint) ((n + 255) / 256), 1, 1);
      accel_launch_set_block (ACCEL_LAUNCH (r), 256, 1, 1);
      accel_launch_add_buffer (ACCEL_LAUNCH (r), x, ACCEL_ACCESS_READ);
      accel_launch_add_buffer (ACCEL_LAUNCH (r), y, ACCEL_ACCESS_WRITE);
      accel_launch_add_int32 (ACCEL_LAUNCH (r), (gint32) n);
      accel_op_set_lane (r, 1);
      gboolean written = FALSE;
      ct_submit_async (ct_gpu (), w, &written);
      g_autoptr(GError) error = NULL;
      g_assert_true (accel_device_submit (ct_gpu (), r, NULL, &error));
      g_assert_no_error (error);
      ct_wait (&written);
      g_autofree double *gx = ct_read (x);
      g_autofree double *gy = ct_read (y);
      for (gint64 i = 0; i < n; i++)
        if (gy[i] != 2.0 * gx[i] || gx[i] == 0.0)
          g_error ("element %" G_GINT64_FORMAT ": the reader saw %g, the writer left %g", i, gy[i], gx[i]);
    }
}

static void
expect_launch_error (AccelOp *op, const char *fragment)
{
  g_autoptr(GError) error = NULL;
  guint gen = accel_device_get_generation (ct_gpu ());
  g_assert_false (accel_device_submit (ct_gpu (), op, NULL, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  if (strstr (error->message, fragment) == NULL)
    g_error ("expected “%s” in: %s", fragment, error->message);
  g_assert_cmpuint (accel_device_get_generation (ct_gpu ()), ==, gen);
  g_assert_cmpint (accel_device_get_state (ct_gpu ()), ==, ACCEL_DEVICE_STATE_READY);
}

static void
test_errors (void)
{
  if (!ct_gpu ())
    return;
  g_autoptr(AccelModule) m = compile (
    "extern \"C\" __global__ void __launch_bounds__ (128) bounded (float *x) { x[threadIdx.x] = 1.0f; }\n"
    "extern \"C\" __global__ void takes_double (float *x, double d) { x[0] = (float) d; }\n", NULL);
  g_autoptr(AccelModule) sm = compile (saxpy_src, NULL);
  g_autoptr(AccelFunction) saxpy = function (sm, "saxpy", "float32, buffer, buffer, int32");
  gint64 n = 1024;
  g_autoptr(AccelBuffer) x = ct_alloc (ct_gpu (), ACCEL_DTYPE_F32, &n, 1);
  g_autoptr(AccelBuffer) y = ct_alloc (ct_gpu (), ACCEL_DTYPE_F32, &n, 1);

  /* Too few arguments, a wrong kind: refused by validation. */
  g_autoptr(AccelOp) few = accel_launch_new (saxpy);
  accel_launch_add_float32 (ACCEL_LAUNCH (few), 1.0f);
  accel_launch_add_buffer (ACCEL_LAUNCH (few), x, ACCEL_ACCESS_READ);
  expect_launch_error (few, "takes 4 arguments");
  g_autoptr(AccelOp) kind = saxpy_op (saxpy, 1.0f, x, y, n);
  accel_launch_clear_args (ACCEL_LAUNCH (kind));
  accel_launch_add_int32 (ACCEL_LAUNCH (kind), 1);
  accel_launch_add_buffer (ACCEL_LAUNCH (kind), x, ACCEL_ACCESS_READ);
  accel_launch_add_buffer (ACCEL_LAUNCH (kind), y, ACCEL_ACCESS_READ_WRITE);
  accel_launch_add_int32 (ACCEL_LAUNCH (kind), (gint32) n);
  expect_launch_error (kind, "argument 0");
  g_autoptr(AccelOp) no_fn = accel_launch_new (NULL);
  g_autoptr(GError) error = NULL;
  g_assert_false (accel_device_submit (ct_gpu (), no_fn, NULL, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  /* A kernel the module lacks; a signature the kernel does not have; a
   * block over the kernel's limit: refused by the device, before launch. */
  g_autoptr(AccelFunction) missing = function (m, "no_such_kernel", "buffer");
  g_autoptr(AccelOp) op1 = accel_launch_new (missing);
  accel_launch_add_buffer (ACCEL_LAUNCH (op1), x, ACCEL_ACCESS_WRITE);
  expect_launch_error (op1, "no kernel “no_such_kernel”");
  g_autoptr(AccelFunction) wrong = function (m, "takes_double", "buffer, float32");
  g_autoptr(AccelOp) op2 = accel_launch_new (wrong);
  accel_launch_add_buffer (ACCEL_LAUNCH (op2), x, ACCEL_ACCESS_WRITE);
  accel_launch_add_float32 (ACCEL_LAUNCH (op2), 1.0f);
  expect_launch_error (op2, "parameter 1");
  g_autoptr(AccelFunction) too_many = function (m, "takes_double", "buffer, float64, int32");
  g_autoptr(AccelOp) op3 = accel_launch_new (too_many);
  accel_launch_add_buffer (ACCEL_LAUNCH (op3), x, ACCEL_ACCESS_WRITE);
  accel_launch_add_float64 (ACCEL_LAUNCH (op3), 1.0);
  accel_launch_add_int32 (ACCEL_LAUNCH (op3), 1);
  expect_launch_error (op3, "has 2 parameters");
  g_autoptr(AccelFunction) bounded = function (m, "bounded", "buffer");
  g_autoptr(AccelOp) op4 = accel_launch_new (bounded);
  accel_launch_set_block (ACCEL_LAUNCH (op4), 256, 1, 1);
  accel_launch_add_buffer (ACCEL_LAUNCH (op4), x, ACCEL_ACCESS_WRITE);
  expect_launch_error (op4, "at most 128");
  g_autoptr(AccelOp) op5 = accel_launch_new (bounded);
  accel_launch_set_block (ACCEL_LAUNCH (op5), 32, 32, 2);
  accel_launch_add_buffer (ACCEL_LAUNCH (op5), x, ACCEL_ACCESS_WRITE);
  expect_launch_error (op5, "1024");

  /* A source that does not compile names its line and column. */
  const char *bad = "extern \"C\" __global__ void k (float *x)\n{\n  x[0] = nothing;\n}\n";
  g_autoptr(AccelModule) none = accel_module_new_from_source (ct_gpu (), bad, NULL, NULL, NULL, &error);
  g_assert_null (none);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  g_assert_true (g_str_has_prefix (error->message, "module.cu:3:10:"));
  g_clear_error (&error);

  /* After all of it the device works. */
  check_saxpy (saxpy);
}

/* Modules from images: a cubin and PTX, the latter compiled by the driver. */
static void
test_images (void)
{
  if (!ct_gpu ())
    return;
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelActor) nvrtc = accel_module_get_compiler (ct_system (), "cuda", &error);
  g_assert_no_error (error);
  const char *targets[] = { "cuda:0", "compute_90" };
  for (guint t = 0; t < G_N_ELEMENTS (targets); t++)
    {
      const char * const none[] = { NULL };
      g_autoptr(GVariant) reply = accel_actor_ask (nvrtc,
                                                   g_variant_new ("(ss^as^ass)", saxpy_src, "saxpy.cu", none, none,
                                                                  targets[t]),
                                                   NULL, &error);
      g_assert_no_error (error);
      g_autoptr(GVariant) image_v = g_variant_get_child_value (reply, 0);
      g_autoptr(GBytes) image = g_variant_get_data_as_bytes (image_v);
      g_autoptr(AccelModule) m = accel_module_new_from_image (ct_gpu (), image, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpint (accel_module_get_image_kind (m), ==, t ? ACCEL_MODULE_IMAGE_PTX : ACCEL_MODULE_IMAGE_CUBIN);
      g_autoptr(AccelFunction) fn = function (m, "saxpy", "float32, buffer, buffer, int32");
      check_saxpy (fn);
    }

  /* Machine code of another major architecture cannot be loaded. */
  int major = 0;
  g_object_get (ct_gpu (), "compute-capability-major", &major, NULL);
  if (major == 8)
    return;
  const char * const none[] = { NULL };
  g_autoptr(GVariant) reply = accel_actor_ask (nvrtc,
                                               g_variant_new ("(ss^as^ass)", saxpy_src, "saxpy.cu", none, none,
                                                              "sm_80"),
                                               NULL, &error);
  g_assert_no_error (error);
  g_autoptr(GVariant) image_v = g_variant_get_child_value (reply, 0);
  g_autoptr(GBytes) image = g_variant_get_data_as_bytes (image_v);
  g_autoptr(AccelModule) m = accel_module_new_from_image (ct_gpu (), image, NULL, &error);
  if (m != NULL)
    g_error ("an sm_80 image (kind %d, %" G_GSIZE_FORMAT " bytes) loaded on a device of compute capability %d",
             accel_module_get_image_kind (m), g_bytes_get_size (image), major);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  /* Refused by the load (eager module loading) or by loading its kernels
   * into the context (lazy, the default), not at the first launch. */
  g_test_message ("sm_80 image on compute capability %d: %s", major, error->message);
  g_assert_true (strstr (error->message, "the device cannot load") != NULL
                 || strstr (error->message, "the device cannot run") != NULL);
}

/* Last: a kernel that faults. */
static void
test_fault (void)
{
  if (!ct_gpu ())
    return;
  g_autoptr(AccelModule) m = compile (
    "extern \"C\" __global__ void wild (float *x, long long offset) { x[offset] = 1.0f; }\n", NULL);
  g_autoptr(AccelFunction) wild = function (m, "wild", "buffer, int64");
  g_autoptr(AccelModule) sm = compile (saxpy_src, NULL);
  g_autoptr(AccelFunction) saxpy = function (sm, "saxpy", "float32, buffer, buffer, int32");
  gint64 n = 16;
  g_autoptr(AccelBuffer) x = ct_alloc (ct_gpu (), ACCEL_DTYPE_F32, &n, 1);
  guint gen = accel_device_get_generation (ct_gpu ());
  accel_actor_set_strategy (ACCEL_ACTOR (ct_gpu ()), 5, 60000, NULL, NULL, NULL);

  g_autoptr(AccelOp) op = accel_launch_new (wild);
  accel_launch_add_buffer (ACCEL_LAUNCH (op), x, ACCEL_ACCESS_WRITE);
  accel_launch_add_int64 (ACCEL_LAUNCH (op), (gint64) 1 << 40);
  g_autoptr(GError) error = NULL;
  g_assert_false (accel_device_submit (ct_gpu (), op, NULL, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED);
  g_clear_error (&error);

  if (!ct_gpu_is_remote ())
    {
      g_assert_cmpint (accel_device_get_state (ct_gpu ()), ==, ACCEL_DEVICE_STATE_FAILED);
      return;
    }
  /* A new host: the modules were loaded into it again before anything
   * else ran, so the same function runs on new buffers. */
  g_assert_cmpuint (accel_device_get_generation (ct_gpu ()), ==, gen + 1);
  check_saxpy (saxpy);
  g_autoptr(AccelOp) stale = saxpy_op (saxpy, 1.0f, x, x, n);
  g_assert_false (accel_device_submit (ct_gpu (), stale, NULL, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cuda/launch/saxpy", test_saxpy);
  g_test_add_func ("/cuda/launch/templates-async", test_templates_async);
  g_test_add_func ("/cuda/launch/scalars", test_scalars);
  g_test_add_func ("/cuda/launch/shared-memory", test_shared_memory);
  g_test_add_func ("/cuda/launch/hazards", test_hazards);
  g_test_add_func ("/cuda/launch/errors", test_errors);
  g_test_add_func ("/cuda/launch/images", test_images);
  g_test_add_func ("/cuda/launch/fault", test_fault);
  return ct_run ();
}
