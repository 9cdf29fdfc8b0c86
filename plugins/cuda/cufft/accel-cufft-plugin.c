/* accel-cufft-plugin.c: the `cufft` plugin: the `fft` op on the `cuda`
 * backend through cuFFT: c2c, r2c and c2r, 1 to 3 dimensions, batched,
 * forward and inverse (unnormalised, as the op defines), f32 and f64.
 *
 * Plans are cached per lane, keyed by transform type, lengths and batch,
 * at most PLAN_CACHE_SIZE of them; the least recently used is destroyed
 * when a new one is needed (cufftDestroy frees device memory, which waits
 * for the device: eviction is the slow path). Plans are made without their
 * own work area: each run sets one from the lane's workspace, so cached
 * plans hold no scratch memory.
 *
 * cuFFT overwrites the input of an out-of-place complex-to-real transform;
 * the op only reads its input, so c2r runs from a copy in lane workspace.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include <cufft.h>
#include "accel-config.h"
#include "accel-cuda.h"

#define KERNEL_RANK 100
#define PLAN_CACHE_SIZE 32

typedef struct {
  gint32 type;           /* cufftType */
  gint32 rank;
  gint64 n[3];
  gint64 batch;
} PlanKey;

typedef struct {
  cufftHandle plan;
  gsize work_size;
} Plan;

static const char *
result_name (cufftResult r)
{
  switch (r)
    {
    case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_UNALIGNED_DATA: return "CUFFT_UNALIGNED_DATA";
    case CUFFT_INVALID_DEVICE: return "CUFFT_INVALID_DEVICE";
    case CUFFT_NO_WORKSPACE: return "CUFFT_NO_WORKSPACE";
    case CUFFT_NOT_IMPLEMENTED: return "CUFFT_NOT_IMPLEMENTED";
    case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
    default: return "CUFFT_UNKNOWN_ERROR";
    }
}

static gboolean
check_cufft (cufftResult r, const char *what, GError **error)
{
  return accel_cuda_check_library ((int) r, "cuFFT", result_name (r), r == CUFFT_ALLOC_FAILED, what, error);
}

static void
plan_free (gpointer data)
{
  Plan *p = data;
  (void) cufftDestroy (p->plan);
  g_free (p);
}

/* A plan on the lane's stream (@user_data), without its own work area. */
static gpointer
plan_make (gconstpointer k, gpointer user_data, GError **error)
{
  const PlanKey *key = k;
  Plan *p = g_new0 (Plan, 1);
  long long n[3] = { key->n[0], key->n[1], key->n[2] };
  size_t work_size = 0;
  if (!check_cufft (cufftCreate (&p->plan), "cufftCreate", error))
    {
      g_free (p);
      return NULL;
    }
  if (!check_cufft (cufftSetAutoAllocation (p->plan, 0), "cufftSetAutoAllocation", error)
      || !check_cufft (cufftMakePlanMany64 (p->plan, key->rank, n, NULL, 1, 0, NULL, 1, 0,
                                            (cufftType) key->type, key->batch, &work_size),
                       "cufftMakePlanMany64", error)
      || !check_cufft (cufftSetStream (p->plan, (cudaStream_t) user_data), "cufftSetStream", error))
    {
      plan_free (p);
      return NULL;
    }
  p->work_size = work_size;
  return p;
}

static const AccelCudaPlanKind plan_kind = {
  "cufft-plans", sizeof (PlanKey), PLAN_CACHE_SIZE, plan_make, plan_free,
};

static gboolean
fft_run (AccelOp *op, gpointer context, GError **error)
{
  AccelFft *self = ACCEL_FFT (op);
  AccelCudaLane *lane = context;
  cudaStream_t stream = accel_cuda_lane_get_stream (lane);
  AccelDType in_dtype = accel_buffer_get_dtype (self->input);
  /* The lengths are those of the complex (c2c) or real (r2c, c2r) side. */
  const AccelShape *logical = accel_buffer_get_shape (self->kind == ACCEL_FFT_C2R ? self->output : self->input);
  guint rank = accel_shape_get_rank (logical), axes = self->n_axes;
  PlanKey key;

  memset (&key, 0, sizeof key);
  key.rank = (gint32) axes;
  key.batch = 1;
  for (guint i = 0; i < rank - axes; i++)
    key.batch *= accel_shape_get_dim (logical, i);
  for (guint i = 0; i < axes; i++)
    {
      key.n[i] = accel_shape_get_dim (logical, rank - axes + i);
      if (key.n[i] == 0)
        return TRUE;
    }
  if (key.batch == 0)
    return TRUE;
  switch (self->kind)
    {
    case ACCEL_FFT_C2C:
      key.type = in_dtype == ACCEL_DTYPE_C64 ? CUFFT_C2C : CUFFT_Z2Z;
      break;
    case ACCEL_FFT_R2C:
      key.type = in_dtype == ACCEL_DTYPE_F32 ? CUFFT_R2C : CUFFT_D2Z;
      break;
    default:
      key.type = in_dtype == ACCEL_DTYPE_C64 ? CUFFT_C2R : CUFFT_Z2D;
      break;
    }

  Plan *plan = accel_cuda_lane_get_plan (lane, &plan_kind, &key, stream, error);
  if (plan == NULL)
    return FALSE;
  void *work = accel_cuda_lane_alloc_workspace (lane, MAX (plan->work_size, 1), error);
  if (work == NULL || !check_cufft (cufftSetWorkArea (plan->plan, work), "cufftSetWorkArea", error))
    return FALSE;

  void *in = accel_buffer_get_data (self->input);
  void *out = accel_buffer_get_data (self->output);
  int direction = self->direction == ACCEL_FFT_FORWARD ? CUFFT_FORWARD : CUFFT_INVERSE;
  switch (key.type)
    {
    case CUFFT_C2C:
      return check_cufft (cufftExecC2C (plan->plan, in, out, direction), "cufftExecC2C", error);
    case CUFFT_Z2Z:
      return check_cufft (cufftExecZ2Z (plan->plan, in, out, direction), "cufftExecZ2Z", error);
    case CUFFT_R2C:
      return check_cufft (cufftExecR2C (plan->plan, in, out), "cufftExecR2C", error);
    case CUFFT_D2Z:
      return check_cufft (cufftExecD2Z (plan->plan, in, out), "cufftExecD2Z", error);
    default:
      {
        gsize size = accel_buffer_get_size (self->input);
        void *copy = accel_cuda_lane_alloc_workspace (lane, size, error);
        if (copy == NULL
            || !ACCEL_CUDA_CHECK (cudaMemcpyAsync (copy, in, size, cudaMemcpyDeviceToDevice, stream), error))
          return FALSE;
        if (key.type == CUFFT_C2R)
          return check_cufft (cufftExecC2R (plan->plan, copy, out), "cufftExecC2R", error);
        return check_cufft (cufftExecZ2D (plan->plan, copy, out), "cufftExecZ2D", error);
      }
    }
}

static const AccelKernelEntry kernels[] = {
  { "fft", { .run = fft_run } },
};

ACCEL_PLUGIN_DEFINE_KERNELS (cufft,
                             "cuFFT kernels on the cuda backend: fft (c2c, r2c, c2r; 1-3 dimensions, batched; "
                             "f32, f64) with a bounded per-lane plan cache",
                             ACCEL_CUDA_BACKEND_NAME, KERNEL_RANK, kernels, ACCEL_VERSION, "LGPL-2.1-or-later")
