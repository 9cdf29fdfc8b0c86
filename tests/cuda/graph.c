/* Graphs on cuda:0 as CUDA graphs (gpu suite; in this process and behind a
 * device host, where a replay is one message): a chain of ops recorded on
 * cuda:0 and on cpu:0 from the same random data and replayed several
 * times, compared; a graph holding JIT-compiled launches, replayed many
 * times with replays pipelined, against a host reference; a replay on one
 * lane ordered after a slow writer on another; a graph recorded before a
 * context rebuild refused as stale; stats counting one op per replay.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include "cuda-test.h"

static AccelGraph *
record (AccelDevice *device, int lane, AccelOp **ops, guint n)
{
  g_autoptr(GError) error = NULL;
  AccelGraph *graph = accel_graph_new (device, lane);
  for (guint i = 0; i < n; i++)
    {
      g_assert_true (accel_graph_add (graph, ops[i], &error));
      g_assert_no_error (error);
    }
  g_assert_true (accel_graph_instantiate (graph, &error));
  g_assert_no_error (error);
  return graph;
}

/* x *= a; y = b x + y; x <- y; y *= c. */
static AccelGraph *
record_chain (AccelDevice *device, AccelBuffer *x, AccelBuffer *y, double a, double b, double c)
{
  g_autoptr(AccelOp) s1 = accel_scal_new (a, x);
  g_autoptr(AccelOp) ax = accel_axpy_new (b, x, y);
  g_autoptr(AccelOp) cp = accel_copy_new (y, x);
  g_autoptr(AccelOp) s2 = accel_scal_new (c, y);
  AccelOp *ops[] = { s1, ax, cp, s2 };
  return record (device, -1, ops, G_N_ELEMENTS (ops));
}

static void
test_chain_vs_cpu (void)
{
  if (!ct_gpu ())
    return;
  g_autoptr(GError) error = NULL;
  gint64 n = g_test_rand_int_range (1, 50000) | 1;
  g_autoptr(CtPair) x = ct_pair_new (ACCEL_DTYPE_F64, &n, 1, -1, 1);
  g_autoptr(CtPair) y = ct_pair_new (ACCEL_DTYPE_F64, &n, 1, -1, 1);
  double a = g_test_rand_double_range (0.5, 1.5), b = g_test_rand_double_range (-1, 1);
  double c = g_test_rand_double_range (0.5, 1.0);
  g_autoptr(AccelGraph) on_cpu = record_chain (ct_cpu (), x->cpu, y->cpu, a, b, c);
  g_autoptr(AccelGraph) on_gpu = record_chain (ct_gpu (), x->gpu, y->gpu, a, b, c);

  guint reps = g_test_rand_int_range (2, 7);
  for (guint r = 0; r < reps; r++)
    {
      g_assert_true (accel_graph_replay (on_cpu, NULL, &error));
      g_assert_true (accel_graph_replay (on_gpu, NULL, &error));
      g_assert_no_error (error);
    }
  ct_assert_pair_close ("graph x", x, NULL, 1e-13, 1e-15);
  ct_assert_pair_close ("graph y", y, NULL, 1e-13, 1e-15);

  /* One op per replay, whatever the graph holds. */
  g_autoptr(GVariant) before = accel_device_get_stats (ct_gpu ());
  g_assert_true (accel_graph_replay (on_gpu, NULL, &error));
  g_autoptr(GVariant) after = accel_device_get_stats (ct_gpu ());
  guint64 ops_before = 0, ops_after = 0;
  g_variant_lookup (before, "ops-completed", "t", &ops_before);
  g_variant_lookup (after, "ops-completed", "t", &ops_after);
  g_assert_cmpuint (ops_after, ==, ops_before + 1);
}

static const char kernels_src[] =
  "extern \"C\" __global__ void axpb (float *y, const float *x, float a, float b, int n)\n"
  "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = y[i] + a * x[i] + b; }\n"
  "extern \"C\" __global__ void slow_set (float *x, float v, int n, int spins)\n"
  "{\n"
  "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
  "  if (i >= n) return;\n"
  "  float acc = 0.0f;\n"
  "  for (int k = 0; k < spins; k++) acc = acc * 0.5f + v * 0.5f;\n"
  "  x[i] = v + (acc - acc);\n"
  "}\n";

static AccelFunction *
kernel (const char *name, const char *signature)
{
  g_autoptr(GError) error = NULL;
  const char * const options[] = { "--fmad=false", NULL };
  g_autoptr(AccelModule) m = accel_module_new_from_source (ct_gpu (), kernels_src, options, NULL, NULL, &error);
  g_assert_no_error (error);
  AccelFunction *fn = accel_module_get_function (m, name, signature, &error);
  g_assert_no_error (error);
  return fn;
}

static AccelOp *
axpb_op (AccelFunction *fn, AccelBuffer *y, AccelBuffer *x, float a, float b, gint64 n)
{
  AccelOp *op = accel_launch_new (fn);
  accel_launch_set_grid (ACCEL_LAUNCH (op), (guint) ((n + 255) / 256), 1, 1);
  accel_launch_set_block (ACCEL_LAUNCH (op), 256, 1, 1);
  accel_launch_add_buffer (ACCEL_LAUNCH (op), y, ACCEL_ACCESS_READ_WRITE);
  accel_launch_add_buffer (ACCEL_LAUNCH (op), x, ACCEL_ACCESS_READ);
  accel_launch_add_float32 (ACCEL_LAUNCH (op), a);
  accel_launch_add_float32 (ACCEL_LAUNCH (op), b);
  accel_launch_add_int32 (ACCEL_LAUNCH (op), (gint32) n);
  return op;
}

/* A graph of launches, replayed many times with up to 64 replays queued. */
static void
test_launches_pipelined (void)
{
  if (!ct_gpu ())
    return;
  g_autoptr(AccelFunction) axpb = kernel ("axpb", "buffer, buffer, float32, float32, int32");
  gint64 n = g_test_rand_int_range (1, 20000);
  g_autoptr(CtPair) x = ct_pair_new (ACCEL_DTYPE_F32, &n, 1, -1, 1);
  g_autoptr(CtPair) y = ct_pair_new (ACCEL_DTYPE_F32, &n, 1, -1, 1);
  guint steps = g_test_rand_int_range (3, 12);
  g_autoptr(GPtrArray) ops = g_ptr_array_new_with_free_func (g_object_unref);
  g_autofree float *as = g_new (float, steps), *bs = g_new (float, steps);
  for (guint s = 0; s < steps; s++)
    {
      as[s] = (float) g_test_rand_double_range (-0.01, 0.01);
      bs[s] = (float) g_test_rand_double_range (-0.01, 0.01);
      g_ptr_array_add (ops, axpb_op (axpb, y->gpu, x->gpu, as[s], bs[s], n));
    }
  g_autoptr(AccelGraph) graph = record (ct_gpu (), -1, (AccelOp **) ops->pdata, ops->len);
  g_autoptr(AccelOp) replay = accel_graph_new_replay (graph);

  guint reps = g_test_rand_int_range (50, 300);
  CtPending p = { 0 };
  for (guint r = 0; r < reps; r++)
    {
      ct_pending_submit (&p, ct_gpu (), replay);
      ct_pending_wait (&p, 63);
    }
  ct_pending_finish (&p);

  /* The same float arithmetic on the host, in the same order. */
  g_autofree double *want = g_new (double, n);
  for (gint64 i = 0; i < n; i++)
    {
      float v = (float) y->values[i], xi = (float) x->values[i];
      for (guint r = 0; r < reps; r++)
        for (guint s = 0; s < steps; s++)
          v = v + as[s] * xi + bs[s];
      want[i] = v;
    }
  g_autofree double *got = ct_read (y->gpu);
  ct_assert_close ("pipelined replays", got, want, NULL, n, 1e-6, 1e-6);
}

/* A replay on lane 1 reads what a slow launch on lane 0 writes. */
static void
test_hazards (void)
{
  if (!ct_gpu ())
    return;
  if (accel_device_get_lanes (ct_gpu ()) < 2)
    {
      g_test_skip ("one lane");
      return;
    }
  g_autoptr(AccelFunction) axpb = kernel ("axpb", "buffer, buffer, float32, float32, int32");
  g_autoptr(AccelFunction) slow = kernel ("slow_set", "buffer, float32, int32, int32");
  for (int rep = 0; rep < 3; rep++)
    {
      gint64 n = g_test_rand_int_range (1000, 100000);
      g_autoptr(AccelBuffer) x = ct_alloc (ct_gpu (), ACCEL_DTYPE_F32, &n, 1);
      g_autoptr(AccelBuffer) y = ct_alloc (ct_gpu (), ACCEL_DTYPE_F32, &n, 1);
      g_autoptr(AccelOp) zx = accel_fill_new (x, 0.0);
      g_autoptr(AccelOp) zy = accel_fill_new (y, 0.0);
      ct_submit (ct_gpu (), zx);
      ct_submit (ct_gpu (), zy);
      g_autoptr(AccelOp) step = axpb_op (axpb, y, x, 2.0f, 0.0f, n);
      g_autoptr(AccelGraph) graph = record (ct_gpu (), 1, &step, 1);

      float v = (float) g_test_rand_double_range (1, 4);
      g_autoptr(AccelOp) w = ct_slow_writer (slow, x, ACCEL_ACCESS_WRITE, v, n);
      gboolean written = FALSE;
      ct_submit_async (ct_gpu (), w, &written);
      g_autoptr(GError) error = NULL;
      g_assert_true (accel_graph_replay (graph, NULL, &error));
      g_assert_no_error (error);
      ct_wait (&written);
      g_autofree double *got = ct_read (y);
      for (gint64 i = 0; i < n; i++)
        if (got[i] != 2.0 * v)
          g_error ("element %" G_GINT64_FORMAT ": %g, not %g: the replay did not wait for the writer", i, got[i],
                   2.0 * v);
    }
}

static void
test_stale (void)
{
  if (!ct_remote_gpu ("a fault leaves an in-process device failed"))
    return;
  g_autoptr(GError) error = NULL;
  gint64 n = g_test_rand_int_range (1, 1000);
  g_autoptr(CtPair) x = ct_pair_new (ACCEL_DTYPE_F64, &n, 1, -1, 1);
  g_autoptr(CtPair) y = ct_pair_new (ACCEL_DTYPE_F64, &n, 1, -1, 1);
  g_autoptr(AccelGraph) graph = record_chain (ct_gpu (), x->gpu, y->gpu, 2.0, 1.0, 0.5);
  g_assert_true (accel_graph_replay (graph, NULL, &error));
  guint gen = accel_device_get_generation (ct_gpu ());
  accel_actor_set_strategy (ACCEL_ACTOR (ct_gpu ()), 5, 60000, NULL, NULL, NULL);

  g_autoptr(AccelOp) fault = accel_op_new_by_name ("fault", &error);
  g_assert_no_error (error);
  g_assert_false (accel_device_submit (ct_gpu (), fault, NULL, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED);
  g_clear_error (&error);
  g_assert_cmpuint (accel_device_get_generation (ct_gpu ()), ==, gen + 1);

  g_assert_false (accel_graph_replay (graph, NULL, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER);
  g_clear_error (&error);

  /* A graph of the new generation runs, on the new host. */
  g_autoptr(CtPair) x2 = ct_pair_new (ACCEL_DTYPE_F64, &n, 1, -1, 1);
  g_autoptr(CtPair) y2 = ct_pair_new (ACCEL_DTYPE_F64, &n, 1, -1, 1);
  g_autoptr(AccelGraph) fresh = record_chain (ct_gpu (), x2->gpu, y2->gpu, 2.0, 1.0, 0.5);
  g_autoptr(AccelGraph) ref = record_chain (ct_cpu (), x2->cpu, y2->cpu, 2.0, 1.0, 0.5);
  g_assert_true (accel_graph_replay (fresh, NULL, &error));
  g_assert_true (accel_graph_replay (ref, NULL, &error));
  g_assert_no_error (error);
  ct_assert_pair_close ("graph after restart", y2, NULL, 1e-13, 1e-15);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cuda/graph/chain-vs-cpu", test_chain_vs_cpu);
  g_test_add_func ("/cuda/graph/launches-pipelined", test_launches_pipelined);
  g_test_add_func ("/cuda/graph/hazards", test_hazards);
  g_test_add_func ("/cuda/graph/stale", test_stale);
  return ct_run ();
}
