/* accel-cuda-bench-graph.c: the run-time kernel and graph groups of
 * accel-bench-cuda, each figure beside its raw CUDA baseline in the same
 * run, on the bench's device (either isolation):
 *
 * - cuda-launch: a kernel compiled at run time (one thread adding 1 to a
 *   float) through a `launch` op: blocking round trip p50 beside
 *   cudaLaunchKernel of the same function (the module's image loaded here
 *   with cudaLibraryLoadData) plus cudaStreamSynchronize, and beside a
 *   `fill` op's round trip; pipelined launches per second (256 in flight)
 *   beside raw async launches of the same function; making the module
 *   from a warm cache beside compiling it.
 * - cuda-graph: the same kernel 100 times in a chain (each launch reads
 *   and writes the same float), recorded in an AccelGraph and replayed:
 *   µs per op of pipelined replays beside a raw CUDA graph of the same 100
 *   launches, and submitting the 100 ops one by one (pipelined) beside the
 *   replay; the blocking replay round trip beside the raw graph's launch +
 *   synchronize.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include "accel-cuda-bench.h"

#define CHAIN 100

static const char inc_src[] =
  "extern \"C\" __global__ void inc (float *x) { x[threadIdx.x] += 1.0f; }\n";

typedef struct {
  AccelModule *module;
  AccelFunction *fn;
  cudaLibrary_t library;        /* the same image, loaded in this process */
  cudaKernel_t kernel;
  cudaStream_t stream;
  float *raw_x;
} Jit;

static void
jit_clear (Jit *j)
{
  if (j->raw_x)
    cudaFree (j->raw_x);
  if (j->library)
    cudaLibraryUnload (j->library);
  if (j->stream)
    cudaStreamDestroy (j->stream);
  g_clear_object (&j->fn);
  g_clear_object (&j->module);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Jit, jit_clear)

static gboolean
jit_setup (AccelBench *bench, Jit *j, GError **error)
{
  AccelDevice *device = accel_bench_get_device (bench);

  if (!accel_cuda_bench_raw_setup (bench, &j->stream, error))
    return FALSE;
  j->module = accel_module_new_from_source (device, inc_src, NULL, NULL, NULL, error);
  if (j->module == NULL)
    return FALSE;
  j->fn = accel_module_get_function (j->module, "inc", "buffer", error);
  if (j->fn == NULL)
    return FALSE;
  gsize size;
  gconstpointer image = g_bytes_get_data (accel_module_get_image (j->module), &size);
  return accel_cuda_check (cudaLibraryLoadData (&j->library, image, NULL, NULL, 0, NULL, NULL, 0),
                           "cudaLibraryLoadData", error)
         && accel_cuda_check (cudaLibraryGetKernel (&j->kernel, j->library, "inc"), "cudaLibraryGetKernel", error)
         && accel_cuda_check (cudaMalloc ((void **) &j->raw_x, sizeof (float)), "cudaMalloc", error)
         && accel_cuda_check (cudaMemset (j->raw_x, 0, sizeof (float)), "cudaMemset", error);
}

static cudaError_t
raw_launch (Jit *j)
{
  void *args[] = { &j->raw_x };
  dim3 one = { 1, 1, 1 };
  return cudaLaunchKernel ((const void *) j->kernel, one, one, args, 0, j->stream);
}

static AccelOp *
inc_op (Jit *j, AccelBuffer *x)
{
  AccelOp *op = accel_launch_new (j->fn);
  accel_launch_add_buffer (ACCEL_LAUNCH (op), x, ACCEL_ACCESS_READ_WRITE);
  return op;
}

/* Seconds per raw launch + synchronize, median of @n. */
static double
raw_round_trip (Jit *j, guint n)
{
  g_autofree double *t = g_new (double, n);
  for (guint i = 0; i < n / 10; i++)
    {
      raw_launch (j);
      cudaStreamSynchronize (j->stream);
    }
  for (guint i = 0; i < n; i++)
    {
      double t0 = accel_bench_now ();
      raw_launch (j);
      cudaStreamSynchronize (j->stream);
      t[i] = accel_bench_now () - t0;
    }
  return accel_bench_quantile (t, n, 0.5);
}

/* cuda-launch */

static gboolean
run_launch (AccelBench *bench, GError **error)
{
  AccelDevice *device = accel_bench_get_device (bench);
  const guint n = accel_bench_is_quick (bench) ? 2000 : 20000;
  const guint total = accel_bench_is_quick (bench) ? 20000 : 200000;
  g_auto(Jit) j = { NULL, };

  /* Compiling, then the same module from the cache: a salt makes the
   * first one new to the cache. */
  g_autofree char *fresh = g_strdup_printf ("%s// %u\n", inc_src, g_random_int ());
  double t0 = accel_bench_now ();
  g_autoptr(AccelModule) cold = accel_module_new_from_source (device, fresh, NULL, NULL, NULL, error);
  double compile_s = accel_bench_now () - t0;
  if (cold == NULL)
    return FALSE;
  t0 = accel_bench_now ();
  g_autoptr(AccelModule) warm = accel_module_new_from_source (device, fresh, NULL, NULL, NULL, error);
  double warm_s = accel_bench_now () - t0;
  if (warm == NULL)
    return FALSE;
  accel_bench_report (bench, "cuda-launch.module-from-cache", "ms", warm_s * 1e3, compile_s * 1e3);

  if (!jit_setup (bench, &j, error))
    return FALSE;
  accel_bench_progress (bench, "cuda-launch: raw launch + synchronize");
  double raw = raw_round_trip (&j, n) * 1e6;

  g_autoptr(AccelShape) one = accel_shape_new_1d (1);
  g_autoptr(AccelBuffer) x = accel_device_alloc (device, ACCEL_DTYPE_F32, one, error);
  if (x == NULL)
    return FALSE;
  g_autoptr(AccelOp) launch = inc_op (&j, x);
  g_autoptr(AccelOp) fill = accel_fill_new (x, 1.0);
  double p50, p99, fill_p50;
  accel_bench_progress (bench, "cuda-launch: fill round trip");
  if (!accel_cuda_bench_round_trip (device, fill, n, &fill_p50, &p99, error))
    return FALSE;
  accel_bench_progress (bench, "cuda-launch: launch round trip");
  if (!accel_cuda_bench_round_trip (device, launch, n, &p50, &p99, error))
    return FALSE;
  accel_bench_report (bench, "cuda-launch.blocking.p50", "us", p50 * 1e6, raw);
  accel_bench_report (bench, "cuda-launch.blocking.p99", "us", p99 * 1e6, raw);
  accel_bench_report (bench, "cuda-launch.vs-fill.p50", "us", p50 * 1e6, fill_p50 * 1e6);

  accel_bench_progress (bench, "cuda-launch: raw async launches");
  for (guint i = 0; i < 1000; i++)
    raw_launch (&j);
  cudaStreamSynchronize (j.stream);
  t0 = accel_bench_now ();
  for (guint i = 0; i < total; i++)
    raw_launch (&j);
  if (!accel_cuda_check (cudaStreamSynchronize (j.stream), "cudaStreamSynchronize", error))
    return FALSE;
  double raw_rate = total / (accel_bench_now () - t0);
  accel_bench_progress (bench, "cuda-launch: 256 in flight");
  double rate = accel_cuda_bench_pipelined_rate (device, launch, total, error);
  if (rate < 0)
    return FALSE;
  accel_bench_report (bench, "cuda-launch.pipelined", "ops/s", rate, raw_rate);
  return TRUE;
}

/* cuda-graph */

static gboolean
raw_graph (Jit *j, cudaGraphExec_t *exec, GError **error)
{
  cudaGraph_t graph = NULL;
  if (!accel_cuda_check (cudaStreamBeginCapture (j->stream, cudaStreamCaptureModeThreadLocal),
                         "cudaStreamBeginCapture", error))
    return FALSE;
  for (guint i = 0; i < CHAIN; i++)
    raw_launch (j);
  if (!accel_cuda_check (cudaStreamEndCapture (j->stream, &graph), "cudaStreamEndCapture", error))
    return FALSE;
  cudaError_t status = cudaGraphInstantiate (exec, graph, 0);
  cudaGraphDestroy (graph);
  return accel_cuda_check (status, "cudaGraphInstantiate", error);
}

static gboolean
run_graph (AccelBench *bench, GError **error)
{
  AccelDevice *device = accel_bench_get_device (bench);
  const guint reps = accel_bench_is_quick (bench) ? 300 : 3000;
  const guint n = accel_bench_is_quick (bench) ? 300 : 3000;
  g_auto(Jit) j = { NULL, };

  if (!jit_setup (bench, &j, error))
    return FALSE;

  /* The raw graph: pipelined launches, then launch + synchronize. */
  cudaGraphExec_t exec = NULL;
  if (!raw_graph (&j, &exec, error))
    return FALSE;
  accel_bench_progress (bench, "cuda-graph: raw graph");
  for (guint i = 0; i < reps / 10; i++)
    cudaGraphLaunch (exec, j.stream);
  cudaStreamSynchronize (j.stream);
  double t0 = accel_bench_now ();
  for (guint i = 0; i < reps; i++)
    cudaGraphLaunch (exec, j.stream);
  if (!accel_cuda_check (cudaStreamSynchronize (j.stream), "cudaStreamSynchronize", error))
    return FALSE;
  double raw_per_op = (accel_bench_now () - t0) / (reps * (double) CHAIN);
  g_autofree double *t = g_new (double, n);
  for (guint i = 0; i < n; i++)
    {
      double s = accel_bench_now ();
      cudaGraphLaunch (exec, j.stream);
      cudaStreamSynchronize (j.stream);
      t[i] = accel_bench_now () - s;
    }
  double raw_blocking = accel_bench_quantile (t, n, 0.5);
  cudaGraphExecDestroy (exec);

  /* Accel: the same chain recorded and replayed. */
  g_autoptr(AccelShape) one = accel_shape_new_1d (1);
  g_autoptr(AccelBuffer) x = accel_device_alloc (device, ACCEL_DTYPE_F32, one, error);
  if (x == NULL)
    return FALSE;
  g_autoptr(AccelOp) op = inc_op (&j, x);
  g_autoptr(AccelGraph) graph = accel_graph_new (device, 0);
  for (guint i = 0; i < CHAIN; i++)
    if (!accel_graph_add (graph, op, error))
      return FALSE;
  if (!accel_graph_instantiate (graph, error))
    return FALSE;
  g_autoptr(AccelOp) replay = accel_graph_new_replay (graph);
  accel_bench_progress (bench, "cuda-graph: replays");
  if (accel_bench_run_in_flight (device, replay, reps / 10, 32, error) < 0)
    return FALSE;
  double elapsed = accel_bench_run_in_flight (device, replay, reps, 32, error);
  if (elapsed < 0)
    return FALSE;
  double replay_per_op = elapsed / (reps * (double) CHAIN);
  accel_bench_report (bench, "cuda-graph.replay.us-per-op", "us", replay_per_op * 1e6, raw_per_op * 1e6);
  double p50, p99;
  if (!accel_cuda_bench_round_trip (device, replay, n, &p50, &p99, error))
    return FALSE;
  accel_bench_report (bench, "cuda-graph.replay.blocking.p50", "us", p50 * 1e6, raw_blocking * 1e6);

  /* The same 100 ops submitted one by one, pipelined. */
  accel_bench_progress (bench, "cuda-graph: one-by-one submits");
  accel_op_set_lane (op, 0);
  guint total = reps * CHAIN / 10;
  if (accel_bench_run_in_flight (device, op, total / 10, 256, error) < 0)
    return FALSE;
  elapsed = accel_bench_run_in_flight (device, op, total, 256, error);
  if (elapsed < 0)
    return FALSE;
  accel_bench_report (bench, "cuda-graph.one-by-one.us-per-op", "us", elapsed / total * 1e6, replay_per_op * 1e6);
  return TRUE;
}

const AccelBenchGroup accel_bench_cuda_graph_groups[] = {
  { "cuda-launch", "a JIT kernel through launch beside cudaLaunchKernel of the same function, and beside fill",
    run_launch },
  { "cuda-graph", "a chain of 100 tiny launches replayed as a graph beside a raw CUDA graph and one-by-one submits",
    run_graph },
  { NULL, NULL, NULL }
};
