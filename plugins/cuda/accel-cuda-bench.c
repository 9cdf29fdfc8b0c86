/* accel-cuda-bench.c: the GPU groups of accel-bench, each figure beside its
 * raw CUDA baseline in the same run, on the bench's device (a cuda:N, in
 * whichever isolation ACCEL_CUDA_ISOLATION chose):
 *
 * - cuda-dispatch: round trip of a one-element fill, blocking and async,
 *   for each completion strategy, beside an empty kernel launch plus
 *   cudaStreamSynchronize.
 * - cuda-pipeline: ops per second with 256 in flight, beside raw async
 *   launches.
 * - cuda-gemm: gemm beside cublasGemmEx at 4096³ and 8192³ for bf16, fp16,
 *   tf32 and fp32, on the same data; each side runs a burst back to back
 *   (Accel pipelined through submit_async, cuBLAS timed with cudaEvents),
 *   after a warm-up, and the median burst counts.
 * - cuda-rng: rng-fill (Philox, bit-identical to cpu:0) beside
 *   curandGenerateUniform.
 * - cuda-transfer: upload and download of 256 MiB from pinned and pageable
 *   host memory, each beside cudaMemcpyAsync from the same kind of memory;
 *   for a device in a host process also from the host memory it shares
 *   (accel_remote_device_alloc_host_memory(); set
 *   ACCEL_REMOTE_HOST_MEMORY_SIZE to at least the transfer size), beside
 *   cudaMemcpyAsync from pinned memory. In a host process, "pinned" is
 *   ordinary memory of this process: it travels through the shared arena.
 * - cuda-fault: time from a sticky fault to the first good op on the new
 *   host process (isolation=process, with the test `fault` plugin on the
 *   path).
 *
 * Built into `accel-bench-cuda` (tools/accel-bench.c with these groups).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <cublas_v2.h>
#include <curand.h>
#include "accel-cuda.h"
#include "accel-cuda-bench.h"

cudaError_t accel_bench_raw_launch_empty (cudaStream_t stream);

#define GEMM_REPS 5

static gboolean
cuda_ok (cudaError_t status, const char *what, GError **error)
{
  return accel_cuda_check (status, what, error);
}

/* The raw side runs in this process on the bench device's GPU. */
gboolean
accel_cuda_bench_raw_setup (AccelBench *bench, cudaStream_t *stream, GError **error)
{
  AccelDevice *device = accel_bench_get_device (bench);
  const char *name = accel_device_get_name (device);
  if (!accel_cuda_is_cuda_device (device) || !g_str_has_prefix (name, "cuda:"))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NO_DEVICE,
                   "the cuda groups need a CUDA device (--device cuda:0), not “%s”", name);
      return FALSE;
    }
  int ordinal = atoi (name + 5);
  return cuda_ok (cudaSetDevice (ordinal), "cudaSetDevice", error)
         && cuda_ok (cudaStreamCreateWithFlags (stream, cudaStreamNonBlocking), "cudaStreamCreate", error);
}

/* The probes of cuda-dispatch: what each piece of the device's submit path
 * costs on its own, raw, so the gap between a round trip and a raw launch
 * plus synchronize can be split into its parts. */
typedef int (*WriteValue32Fn) (cudaStream_t, unsigned long long, guint32, unsigned int);

typedef struct {
  volatile guint32 *flag;
  unsigned long long flag_device;
  WriteValue32Fn write_value;
  volatile gint target;      /* the watcher's next value to wait for */
  volatile gint seen;        /* what the watcher has seen */
  volatile gint stop;
} Probe;

static gpointer
probe_watcher (gpointer data)
{
  Probe *p = data;
  while (!p->stop)
    {
      gint want = p->target;
      if (want != p->seen && (gint) *p->flag == want)
        __atomic_store_n (&p->seen, want, __ATOMIC_RELEASE);
    }
  return NULL;
}

static void
run_probes (AccelBench *bench, cudaStream_t stream, guint n, double raw)
{
  Probe p = { 0 };
  cudaEvent_t event;
  void *host = NULL, *dev = NULL;
  enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;

  if (cudaEventCreateWithFlags (&event, cudaEventDisableTiming) != cudaSuccess)
    return;
  if (cudaHostAlloc (&host, 64, cudaHostAllocMapped) != cudaSuccess
      || cudaHostGetDevicePointer (&dev, host, 0) != cudaSuccess
      || cudaGetDriverEntryPointByVersion ("cuStreamWriteValue32", (void **) &p.write_value, 12000,
                                           cudaEnableDefault, &q) != cudaSuccess
      || q != cudaDriverEntryPointSuccess || p.write_value == NULL)
    {
      cudaEventDestroy (event);
      if (host)
        cudaFreeHost (host);
      return;
    }
  p.flag = host;
  *p.flag = 0;
  p.flag_device = (unsigned long long) (uintptr_t) dev;

  g_autofree double *t = g_new (double, n);
  guint32 seq = 0;

  /* the host cost of the launch call alone */
  for (guint i = 0; i < n; i++)
    {
      double t0 = accel_bench_now ();
      accel_bench_raw_launch_empty (stream);
      t[i] = accel_bench_now () - t0;
      cudaStreamSynchronize (stream);
    }
  accel_bench_report (bench, "cuda-dispatch.probe.launch-call", "us",
                      accel_bench_quantile (t, n, 0.5) * 1e6, raw);

  /* launch + event record + synchronize */
  for (guint i = 0; i < n; i++)
    {
      double t0 = accel_bench_now ();
      accel_bench_raw_launch_empty (stream);
      cudaEventRecord (event, stream);
      cudaStreamSynchronize (stream);
      t[i] = accel_bench_now () - t0;
    }
  accel_bench_report (bench, "cuda-dispatch.probe.launch-record-sync", "us",
                      accel_bench_quantile (t, n, 0.5) * 1e6, raw);

  /* launch + flag write + spin on the flag, one thread */
  for (guint i = 0; i < n; i++)
    {
      double t0 = accel_bench_now ();
      accel_bench_raw_launch_empty (stream);
      p.write_value (stream, p.flag_device, ++seq, 0);
      while (*p.flag != seq)
        ;
      t[i] = accel_bench_now () - t0;
    }
  accel_bench_report (bench, "cuda-dispatch.probe.launch-flag-spin", "us",
                      accel_bench_quantile (t, n, 0.5) * 1e6, raw);

  /* launch + event record + flag write + spin: the device's GPU-side path */
  for (guint i = 0; i < n; i++)
    {
      double t0 = accel_bench_now ();
      accel_bench_raw_launch_empty (stream);
      cudaEventRecord (event, stream);
      p.write_value (stream, p.flag_device, ++seq, 0);
      while (*p.flag != seq)
        ;
      t[i] = accel_bench_now () - t0;
    }
  accel_bench_report (bench, "cuda-dispatch.probe.launch-record-flag-spin", "us",
                      accel_bench_quantile (t, n, 0.5) * 1e6, raw);

  /* the same with a second thread watching the flag and handing back */
  GThread *watcher = g_thread_new ("probe-watcher", probe_watcher, &p);
  for (guint i = 0; i < n; i++)
    {
      double t0 = accel_bench_now ();
      seq++;
      __atomic_store_n (&p.target, (gint) seq, __ATOMIC_RELEASE);
      accel_bench_raw_launch_empty (stream);
      cudaEventRecord (event, stream);
      p.write_value (stream, p.flag_device, seq, 0);
      while (__atomic_load_n (&p.seen, __ATOMIC_ACQUIRE) != (gint) seq)
        ;
      t[i] = accel_bench_now () - t0;
    }
  p.stop = 1;
  g_thread_join (watcher);
  accel_bench_report (bench, "cuda-dispatch.probe.launch-record-flag-watcher", "us",
                      accel_bench_quantile (t, n, 0.5) * 1e6, raw);

  cudaStreamSynchronize (stream);
  cudaEventDestroy (event);
  cudaFreeHost (host);
}

/* Median seconds of @n raw launch + synchronize round trips. */
static double
raw_round_trip (cudaStream_t stream, guint n)
{
  g_autofree double *t = g_new (double, n);
  for (guint i = 0; i < n / 10; i++)
    {
      accel_bench_raw_launch_empty (stream);
      cudaStreamSynchronize (stream);
    }
  for (guint i = 0; i < n; i++)
    {
      double t0 = accel_bench_now ();
      accel_bench_raw_launch_empty (stream);
      cudaStreamSynchronize (stream);
      t[i] = accel_bench_now () - t0;
    }
  return accel_bench_quantile (t, n, 0.5);
}

/* The p50 and p99 seconds of @n blocking submits of @op, after a warm-up. */
gboolean
accel_cuda_bench_round_trip (AccelDevice *device, AccelOp *op, guint n, double *p50, double *p99, GError **error)
{
  g_autofree double *t = g_new (double, n);
  if (!accel_bench_blocking_round_trips (device, op, n, t, error))
    return FALSE;
  *p50 = accel_bench_quantile (t, n, 0.5);
  *p99 = accel_bench_quantile (t, n, 0.99);
  return TRUE;
}

/* Ops per second of @total submits of @op kept 256 in flight, after a
 * warm-up of a tenth as many; negative with @error set on failure. */
double
accel_cuda_bench_pipelined_rate (AccelDevice *device, AccelOp *op, guint total, GError **error)
{
  if (accel_bench_run_in_flight (device, op, total / 10, 256, error) < 0)
    return -1;
  double elapsed = accel_bench_run_in_flight (device, op, total, 256, error);
  if (elapsed < 0)
    return -1;
  return total / elapsed;
}

/* The smallest op: a fill of @value into a new one-element f32 buffer on
 * @device, which the op keeps alive. */
static AccelOp *
tiny_fill_new (AccelDevice *device, double value, GError **error)
{
  g_autoptr(AccelShape) shape = accel_shape_new_1d (1);
  g_autoptr(AccelBuffer) buf = accel_device_alloc (device, ACCEL_DTYPE_F32, shape, error);
  return buf ? accel_fill_new (buf, value) : NULL;
}

static gboolean
blocking_round_trip (AccelDevice *device, guint n, double *p50, double *p99, GError **error)
{
  g_autoptr(AccelOp) op = tiny_fill_new (device, 1.0, error);
  return op != NULL && accel_cuda_bench_round_trip (device, op, n, p50, p99, error);
}

/* cuda-dispatch-completion: the blocking round trip under the completion
 * strategy that ACCEL_CUDA_COMPLETION names; cuda-dispatch runs it in a
 * child process per strategy. */
static gboolean
run_dispatch_completion (AccelBench *bench, GError **error)
{
  const guint n = accel_bench_is_quick (bench) ? 500 : 5000;
  const char *strategy = g_getenv ("ACCEL_CUDA_COMPLETION");
  double p50, p99;
  if (!blocking_round_trip (accel_bench_get_device (bench), n, &p50, &p99, error))
    return FALSE;
  g_autofree char *label = g_strdup_printf ("cuda-dispatch.completion-%s.p50", strategy ? strategy : "poll");
  accel_bench_report (bench, label, "us", p50 * 1e6, NAN);
  return TRUE;
}

/* Runs this program's cuda-dispatch-completion group with @strategy and
 * reads its figure (µs) from the table it prints. */
static gboolean
completion_in_child (AccelBench *bench, const char *strategy, double *us, GError **error)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_subprocess_launcher_setenv (launcher, "ACCEL_CUDA_COMPLETION", strategy, TRUE);
  g_autofree char *self = g_file_read_link ("/proc/self/exe", error);
  if (self == NULL)
    return FALSE;
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_ptr_array_add (argv, self);
  g_ptr_array_add (argv, "--device");
  g_ptr_array_add (argv, (gpointer) accel_device_get_name (accel_bench_get_device (bench)));
  if (accel_bench_is_quick (bench))
    g_ptr_array_add (argv, "--quick");
  g_ptr_array_add (argv, "cuda-dispatch-completion");
  g_ptr_array_add (argv, NULL);
  g_autoptr(GSubprocess) child = g_subprocess_launcher_spawnv (launcher, (const char *const *) argv->pdata, error);
  g_autofree char *out = NULL;
  if (child == NULL || !g_subprocess_communicate_utf8 (child, NULL, NULL, &out, NULL, error))
    return FALSE;
  g_autofree char *label = g_strdup_printf ("cuda-dispatch.completion-%s.p50", strategy);
  const char *line = out ? strstr (out, label) : NULL;
  if (!g_subprocess_get_successful (child) || line == NULL
      || sscanf (line + strlen (label), " us %lf", us) != 1)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_FAILED, "the completion strategy “%s” in a child process: "
                   "no figure (exit status %d)", strategy, g_subprocess_get_status (child));
      return FALSE;
    }
  return TRUE;
}

/* cuda-dispatch */

static gboolean
run_dispatch (AccelBench *bench, GError **error)
{
  AccelDevice *device = accel_bench_get_device (bench);
  const guint n = accel_bench_is_quick (bench) ? 2000 : 20000;
  cudaStream_t stream;

  if (!accel_cuda_bench_raw_setup (bench, &stream, error))
    return FALSE;
  accel_bench_progress (bench, "cuda-dispatch: raw launch + synchronize");
  double raw = raw_round_trip (stream, n) * 1e6;

  double p50, p99;
  accel_bench_progress (bench, "cuda-dispatch: blocking submit");
  if (!blocking_round_trip (device, n, &p50, &p99, error))
    return FALSE;
  accel_bench_report (bench, "cuda-dispatch.blocking.p50", "us", p50 * 1e6, raw);
  accel_bench_report (bench, "cuda-dispatch.blocking.p99", "us", p99 * 1e6, raw);
  accel_bench_progress (bench, "cuda-dispatch: probes");
  run_probes (bench, stream, n / 4, raw);

  /* Async: one at a time through this thread's main context. */
  g_autoptr(AccelOp) op = tiny_fill_new (device, 2.0, error);
  if (op == NULL)
    return FALSE;
  g_autofree double *t = g_new (double, n);
  if (!accel_bench_async_round_trips (device, op, n, t, error))
    return FALSE;
  accel_bench_report (bench, "cuda-dispatch.async.p50", "us", accel_bench_quantile (t, n, 0.5) * 1e6, raw);

  /* Each completion strategy, in a process of its own (the strategy is
   * read from the environment when a device starts: setting it here, with
   * this system's threads running, would not be safe). */
  for (const char *const *s = (const char *const[]) { "poll", "callback", "sync", NULL }; *s; s++)
    {
      accel_bench_progress (bench, "cuda-dispatch: completion %s", *s);
      double us;
      if (!completion_in_child (bench, *s, &us, error))
        return FALSE;
      g_autofree char *label = g_strdup_printf ("cuda-dispatch.completion-%s.p50", *s);
      accel_bench_report (bench, label, "us", us, raw);
    }
  cudaStreamDestroy (stream);
  return TRUE;
}

/* cuda-pipeline */

static gboolean
run_pipeline (AccelBench *bench, GError **error)
{
  AccelDevice *device = accel_bench_get_device (bench);
  const guint total = accel_bench_is_quick (bench) ? 20000 : 200000;
  cudaStream_t stream;

  if (!accel_cuda_bench_raw_setup (bench, &stream, error))
    return FALSE;
  accel_bench_progress (bench, "cuda-pipeline: raw async launches");
  for (guint i = 0; i < 1000; i++)
    accel_bench_raw_launch_empty (stream);
  cudaStreamSynchronize (stream);
  double t0 = accel_bench_now ();
  for (guint i = 0; i < total; i++)
    accel_bench_raw_launch_empty (stream);
  if (!cuda_ok (cudaStreamSynchronize (stream), "cudaStreamSynchronize", error))
    return FALSE;
  double raw = total / (accel_bench_now () - t0);

  g_autoptr(AccelOp) op = tiny_fill_new (device, 1.0, error);
  if (op == NULL)
    return FALSE;
  accel_bench_progress (bench, "cuda-pipeline: 256 in flight");
  double rate = accel_cuda_bench_pipelined_rate (device, op, total, error);
  if (rate < 0)
    return FALSE;
  accel_bench_report (bench, "cuda-pipeline.256-in-flight", "ops/s", rate, raw);
  cudaStreamDestroy (stream);
  return TRUE;
}

/* cuda-gemm */

typedef struct {
  const char *label;
  AccelDType dtype;
  AccelGemmCompute compute;
  cudaDataType data;
  cublasComputeType_t cublas_compute;
} GemmKind;

static const GemmKind gemm_kinds[] = {
  { "bf16", ACCEL_DTYPE_BF16, ACCEL_GEMM_COMPUTE_DEFAULT, CUDA_R_16BF, CUBLAS_COMPUTE_32F },
  { "fp16", ACCEL_DTYPE_F16, ACCEL_GEMM_COMPUTE_DEFAULT, CUDA_R_16F, CUBLAS_COMPUTE_32F },
  { "tf32", ACCEL_DTYPE_F32, ACCEL_GEMM_COMPUTE_TF32, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32 },
  { "fp32", ACCEL_DTYPE_F32, ACCEL_GEMM_COMPUTE_F32, CUDA_R_32F, CUBLAS_COMPUTE_32F },
};

static gboolean
upload_raw (AccelBuffer *buffer, void **raw, GError **error)
{
  g_autoptr(GBytes) bytes = accel_buffer_download (buffer, error);
  if (bytes == NULL)
    return FALSE;
  gsize size = 0;
  const void *data = g_bytes_get_data (bytes, &size);
  return cuda_ok (cudaMalloc (raw, size), "cudaMalloc", error)
         && cuda_ok (cudaMemcpy (*raw, data, size, cudaMemcpyHostToDevice), "cudaMemcpy", error);
}

static gboolean
run_gemm_kind (AccelBench *bench, cublasHandle_t handle, cudaStream_t stream, const GemmKind *kind, gint64 n,
               GError **error)
{
  AccelDevice *device = accel_bench_get_device (bench);
  guint burst = n <= 4096 ? 40 : 10;
  if (kind->dtype == ACCEL_DTYPE_F32 && kind->compute == ACCEL_GEMM_COMPUTE_F32)
    burst = n <= 4096 ? 5 : 2;
  g_autoptr(AccelShape) shape = accel_shape_new_2d (n, n);
  g_autoptr(AccelBuffer) a = accel_device_alloc (device, kind->dtype, shape, error);
  g_autoptr(AccelBuffer) b = a ? accel_device_alloc (device, kind->dtype, shape, error) : NULL;
  g_autoptr(AccelBuffer) c = b ? accel_device_alloc (device, kind->dtype, shape, error) : NULL;
  if (c == NULL)
    return FALSE;
  g_autoptr(AccelOp) fa = accel_rng_fill_new (a, ACCEL_RNG_UNIFORM, 11);
  g_autoptr(AccelOp) fb = accel_rng_fill_new (b, ACCEL_RNG_UNIFORM, 12);
  g_object_set (fa, "low", -1.0, NULL);
  g_object_set (fb, "low", -1.0, NULL);
  if (!accel_device_submit (device, fa, NULL, error) || !accel_device_submit (device, fb, NULL, error))
    return FALSE;

  void *ra = NULL, *rb = NULL, *rc = NULL;
  gsize size = accel_buffer_get_size (c);
  gboolean ok = upload_raw (a, &ra, error) && upload_raw (b, &rb, error)
                && cuda_ok (cudaMalloc (&rc, size), "cudaMalloc", error);
  g_autoptr(AccelOp) op = accel_gemm_new (a, b, c);
  g_object_set (op, "compute", kind->compute, NULL);
  double t_accel[GEMM_REPS], t_raw[GEMM_REPS];
  float alpha = 1.0f, beta = 0.0f;
  cudaEvent_t e0 = NULL, e1 = NULL;
  ok = ok && cuda_ok (cudaEventCreate (&e0), "cudaEventCreate", error)
       && cuda_ok (cudaEventCreate (&e1), "cudaEventCreate", error);

  /* A warm-up burst each, then alternate bursts. */
  for (int r = -1; ok && r < GEMM_REPS; r++)
    {
      accel_bench_progress (bench, "cuda-gemm %s %" G_GINT64_FORMAT "^3: %d/%d", kind->label, n, r + 1, GEMM_REPS);
      double e = accel_bench_run_in_flight (device, op, burst, burst, error);
      ok = e >= 0;
      if (!ok)
        break;
      cudaEventRecord (e0, stream);
      for (guint i = 0; i < burst && ok; i++)
        ok = accel_cuda_check_library (cublasGemmEx (handle, CUBLAS_OP_N, CUBLAS_OP_N, (int) n, (int) n, (int) n,
                                                     &alpha, rb, kind->data, (int) n, ra, kind->data, (int) n,
                                                     &beta, rc, kind->data, (int) n, kind->cublas_compute,
                                                     CUBLAS_GEMM_DEFAULT),
                                       "cuBLAS", NULL, FALSE, "cublasGemmEx", error);
      cudaEventRecord (e1, stream);
      ok = ok && cuda_ok (cudaEventSynchronize (e1), "cudaEventSynchronize", error);
      float ms = 0;
      cudaEventElapsedTime (&ms, e0, e1);
      if (r >= 0)
        {
          t_accel[r] = e / burst;
          t_raw[r] = ms * 1e-3 / burst;
        }
    }
  if (ok)
    {
      double flops = 2.0 * (double) n * (double) n * (double) n;
      g_autofree char *label = g_strdup_printf ("cuda-gemm.%s.%" G_GINT64_FORMAT, kind->label, n);
      accel_bench_report (bench, label, "TFLOP/s", flops / accel_bench_quantile (t_accel, GEMM_REPS, 0.5) * 1e-12,
                          flops / accel_bench_quantile (t_raw, GEMM_REPS, 0.5) * 1e-12);
    }
  if (e0)
    cudaEventDestroy (e0);
  if (e1)
    cudaEventDestroy (e1);
  cudaFree (ra);
  cudaFree (rb);
  cudaFree (rc);
  return ok;
}

static gboolean
run_gemm (AccelBench *bench, GError **error)
{
  cudaStream_t stream;
  cublasHandle_t handle = NULL;

  if (!accel_cuda_bench_raw_setup (bench, &stream, error))
    return FALSE;
  if (!accel_cuda_check_library (cublasCreate (&handle), "cuBLAS", NULL, FALSE, "cublasCreate", error))
    return FALSE;
  cublasSetStream (handle, stream);
  gboolean ok = TRUE;
  const gint64 sizes[] = { 4096, 8192 };
  for (guint s = 0; ok && s < G_N_ELEMENTS (sizes); s++)
    for (guint k = 0; ok && k < G_N_ELEMENTS (gemm_kinds); k++)
      ok = run_gemm_kind (bench, handle, stream, &gemm_kinds[k], sizes[s], error);
  cublasDestroy (handle);
  cudaStreamDestroy (stream);
  return ok;
}

/* cuda-rng */

static gboolean
run_rng (AccelBench *bench, GError **error)
{
  AccelDevice *device = accel_bench_get_device (bench);
  const gint64 n = accel_bench_is_quick (bench) ? (1 << 24) : (1 << 28);
  const guint burst = 10;
  cudaStream_t stream;
  curandGenerator_t gen = NULL;
  float *raw = NULL;

  if (!accel_cuda_bench_raw_setup (bench, &stream, error))
    return FALSE;
  g_autoptr(AccelShape) shape = accel_shape_new_1d (n);
  g_autoptr(AccelBuffer) buf = accel_device_alloc (device, ACCEL_DTYPE_F32, shape, error);
  if (buf == NULL)
    return FALSE;
  g_autoptr(AccelOp) op = accel_rng_fill_new (buf, ACCEL_RNG_UNIFORM, 7);
  if (accel_bench_run_in_flight (device, op, 2, 2, error) < 0)
    return FALSE;
  double e = accel_bench_run_in_flight (device, op, burst, burst, error);
  if (e < 0)
    return FALSE;

  if (!cuda_ok (cudaMalloc ((void **) &raw, n * sizeof (float)), "cudaMalloc", error)
      || !accel_cuda_check_library (curandCreateGenerator (&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10), "cuRAND", NULL,
                                    FALSE, "curandCreateGenerator", error))
    return FALSE;
  curandSetStream (gen, stream);
  curandGenerateUniform (gen, raw, n);
  cudaStreamSynchronize (stream);
  double t0 = accel_bench_now ();
  for (guint i = 0; i < burst; i++)
    curandGenerateUniform (gen, raw, n);
  gboolean ok = cuda_ok (cudaStreamSynchronize (stream), "cudaStreamSynchronize", error);
  double raw_t = accel_bench_now () - t0;
  curandDestroyGenerator (gen);
  cudaFree (raw);
  cudaStreamDestroy (stream);
  if (ok)
    accel_bench_report (bench, "cuda-rng.uniform-f32", "Gvalues/s", n * burst / e * 1e-9, n * burst / raw_t * 1e-9);
  return ok;
}

/* cuda-transfer */

static gboolean
run_transfer (AccelBench *bench, GError **error)
{
  AccelDevice *device = accel_bench_get_device (bench);
  const gsize size = accel_bench_is_quick (bench) ? (32 << 20) : (256 << 20);
  const guint reps = 5;
  cudaStream_t stream;
  void *pinned = NULL, *raw = NULL;

  if (!accel_cuda_bench_raw_setup (bench, &stream, error))
    return FALSE;
  if (!cuda_ok (cudaMallocHost (&pinned, size), "cudaMallocHost", error)
      || !cuda_ok (cudaMalloc (&raw, size), "cudaMalloc", error))
    return FALSE;
  memset (pinned, 1, size);
  g_autofree guint8 *pageable = g_malloc (size);
  memset (pageable, 2, size);
  g_autoptr(AccelShape) shape = accel_shape_new_1d ((gint64) size);
  g_autoptr(AccelBuffer) buf = accel_device_alloc (device, ACCEL_DTYPE_U8, shape, error);
  if (buf == NULL)
    return FALSE;

  double up_p[reps], down_p[reps], up_g[reps], down_g[reps], raw_up[reps], raw_down[reps];
  double raw_up_g[reps], raw_down_g[reps];
  for (int r = -1; r < (int) reps; r++)
    {
      double t0 = accel_bench_now ();
      if (!accel_buffer_write (buf, pinned, size, error))
        return FALSE;
      double t1 = accel_bench_now ();
      if (!accel_buffer_read (buf, pinned, size, error))
        return FALSE;
      double t2 = accel_bench_now ();
      if (!accel_buffer_write (buf, pageable, size, error))
        return FALSE;
      double t3 = accel_bench_now ();
      if (!accel_buffer_read (buf, pageable, size, error))
        return FALSE;
      double t4 = accel_bench_now ();
      cudaMemcpyAsync (raw, pinned, size, cudaMemcpyHostToDevice, stream);
      cudaStreamSynchronize (stream);
      double t5 = accel_bench_now ();
      cudaMemcpyAsync (pinned, raw, size, cudaMemcpyDeviceToHost, stream);
      if (!cuda_ok (cudaStreamSynchronize (stream), "cudaStreamSynchronize", error))
        return FALSE;
      double t6 = accel_bench_now ();
      if (r < 0)
        continue;
      up_p[r] = t1 - t0;
      down_p[r] = t2 - t1;
      up_g[r] = t3 - t2;
      down_g[r] = t4 - t3;
      raw_up[r] = t5 - t4;
      raw_down[r] = t6 - t5;
      /* the driver's own staging of pageable memory */
      cudaMemcpyAsync (raw, pageable, size, cudaMemcpyHostToDevice, stream);
      cudaStreamSynchronize (stream);
      double t7 = accel_bench_now ();
      cudaMemcpyAsync (pageable, raw, size, cudaMemcpyDeviceToHost, stream);
      cudaStreamSynchronize (stream);
      double t8 = accel_bench_now ();
      raw_up_g[r] = t7 - t6;
      raw_down_g[r] = t8 - t7;
    }
  double gb = size * 1e-9;
  double ru = gb / accel_bench_quantile (raw_up, reps, 0.5), rd = gb / accel_bench_quantile (raw_down, reps, 0.5);
  accel_bench_report (bench, "cuda-transfer.upload-pinned", "GB/s", gb / accel_bench_quantile (up_p, reps, 0.5), ru);
  accel_bench_report (bench, "cuda-transfer.download-pinned", "GB/s", gb / accel_bench_quantile (down_p, reps, 0.5), rd);
  /* Pageable beside cudaMemcpyAsync from the same pageable memory. */
  accel_bench_report (bench, "cuda-transfer.upload-pageable", "GB/s", gb / accel_bench_quantile (up_g, reps, 0.5),
                      gb / accel_bench_quantile (raw_up_g, reps, 0.5));
  accel_bench_report (bench, "cuda-transfer.download-pageable", "GB/s", gb / accel_bench_quantile (down_g, reps, 0.5),
                      gb / accel_bench_quantile (raw_down_g, reps, 0.5));

  if (ACCEL_IS_REMOTE_DEVICE (device))
    {
      g_autoptr(GError) local = NULL;
      guint8 *shared = accel_remote_device_alloc_host_memory (ACCEL_REMOTE_DEVICE (device), size, &local);
      if (shared == NULL)
        accel_bench_progress (bench, "cuda-transfer: no shared host memory (%s)", local->message);
      else
        {
          double up_s[reps], down_s[reps];
          memset (shared, 3, size);
          for (int r = -1; r < (int) reps; r++)
            {
              double t0 = accel_bench_now ();
              if (!accel_buffer_write (buf, shared, size, error))
                break;
              double t1 = accel_bench_now ();
              if (!accel_buffer_read (buf, shared, size, error))
                break;
              double t2 = accel_bench_now ();
              if (r >= 0)
                {
                  up_s[r] = t1 - t0;
                  down_s[r] = t2 - t1;
                }
            }
          accel_remote_device_free_host_memory (ACCEL_REMOTE_DEVICE (device), shared);
          if (error && *error)
            return FALSE;
          accel_bench_report (bench, "cuda-transfer.upload-shared", "GB/s", gb / accel_bench_quantile (up_s, reps, 0.5), ru);
          accel_bench_report (bench, "cuda-transfer.download-shared", "GB/s", gb / accel_bench_quantile (down_s, reps, 0.5),
                              rd);
        }
    }
  cudaFreeHost (pinned);
  cudaFree (raw);
  cudaStreamDestroy (stream);
  return TRUE;
}

/* cuda-fault */

static gboolean
run_fault (AccelBench *bench, GError **error)
{
  AccelDevice *device = accel_bench_get_device (bench);
  GType remote = g_type_from_name ("AccelRemoteDevice");
  if (remote == 0 || !g_type_is_a (G_OBJECT_TYPE (device), remote))
    {
      g_printerr ("cuda-fault: skipped: the device is not served by a host process (ACCEL_CUDA_ISOLATION=process)\n");
      return TRUE;
    }
  const guint reps = accel_bench_is_quick (bench) ? 2 : 5;
  g_autofree double *t = g_new (double, reps);
  for (guint r = 0; r < reps; r++)
    {
      g_autoptr(AccelOp) fault = accel_op_new_by_name ("fault", error);
      if (fault == NULL)
        {
          g_prefix_error (error, "cuda-fault needs the test fault plugins on ACCEL_PLUGIN_PATH: ");
          return FALSE;
        }
      guint gen = accel_device_get_generation (device);
      g_autoptr(GError) expected = NULL;
      double t0 = accel_bench_now ();
      accel_device_submit (device, fault, NULL, &expected);
      for (;;)
        {
          g_autoptr(GError) e = NULL;
          g_autoptr(AccelOp) good = tiny_fill_new (device, 1.0, &e);
          if (good && accel_device_submit (device, good, NULL, &e))
            break;
          if (accel_bench_now () - t0 > 60)
            {
              g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_TIMED_OUT, "no good op within 60 s of a fault");
              return FALSE;
            }
        }
      t[r] = accel_bench_now () - t0;
      if (accel_device_get_generation (device) == gen)
        g_printerr ("cuda-fault: the generation did not move (%s)\n", expected ? expected->message : "no error");
    }
  accel_bench_report (bench, "cuda-fault.fault-to-first-good-op", "s", accel_bench_quantile (t, reps, 0.5), NAN);
  return TRUE;
}

const AccelBenchGroup accel_bench_cuda_groups[] = {
  { "cuda-dispatch", "round trip of a tiny op beside a raw launch + synchronize, per completion strategy", run_dispatch },
  { "cuda-dispatch-completion", "the blocking round trip under ACCEL_CUDA_COMPLETION (cuda-dispatch runs it per strategy)",
    run_dispatch_completion },
  { "cuda-pipeline", "ops per second with 256 in flight beside raw async launches", run_pipeline },
  { "cuda-gemm", "gemm beside cublasGemmEx, 4096^3 and 8192^3, bf16/fp16/tf32/fp32", run_gemm },
  { "cuda-rng", "rng-fill beside curandGenerateUniform", run_rng },
  { "cuda-transfer", "upload and download beside cudaMemcpyAsync", run_transfer },
  { "cuda-fault", "time from a sticky fault to the first good op (isolation=process)", run_fault },
  { NULL, NULL, NULL },
};
