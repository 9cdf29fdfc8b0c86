/* accel-curand-plugin.c: the `curand` plugin: rng-fill on the `cuda`
 * backend through cuRAND's Philox4x32-10 generator.
 *
 * cuRAND orders its Philox output differently from Accel's mapping, so these
 * values are not those of cpu:0: this kernel has rank 50, below the `cuda`
 * plugin's bit-identical Philox kernel (rank 100), and runs when that one
 * declines. To pick it, set `ACCEL_CUDA_RNG=curand` in the environment (the
 * `cuda` plugin's kernel then declines), or deploy without the `cuda`
 * plugin's rng-fill by outranking it in a plugin of your own.
 *
 * The op's seed is the generator's seed; its offset (in Philox counters) is
 * the generator's offset times four (cuRAND counts 32-bit values). Uniform
 * values map cuRAND's (0, 1] onto [low, high); normal values come from
 * cuRAND's Box–Muller with the op's mean and stddev.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <curand.h>
#include "accel-config.h"
#include "accel-cuda.h"
#include "accel-curand-kernels.h"

#define KERNEL_RANK 50

static const char *
status_name (curandStatus_t status)
{
  switch (status)
    {
    case CURAND_STATUS_SUCCESS: return "CURAND_STATUS_SUCCESS";
    case CURAND_STATUS_VERSION_MISMATCH: return "CURAND_STATUS_VERSION_MISMATCH";
    case CURAND_STATUS_NOT_INITIALIZED: return "CURAND_STATUS_NOT_INITIALIZED";
    case CURAND_STATUS_ALLOCATION_FAILED: return "CURAND_STATUS_ALLOCATION_FAILED";
    case CURAND_STATUS_TYPE_ERROR: return "CURAND_STATUS_TYPE_ERROR";
    case CURAND_STATUS_OUT_OF_RANGE: return "CURAND_STATUS_OUT_OF_RANGE";
    case CURAND_STATUS_LENGTH_NOT_MULTIPLE: return "CURAND_STATUS_LENGTH_NOT_MULTIPLE";
    case CURAND_STATUS_DOUBLE_PRECISION_REQUIRED: return "CURAND_STATUS_DOUBLE_PRECISION_REQUIRED";
    case CURAND_STATUS_LAUNCH_FAILURE: return "CURAND_STATUS_LAUNCH_FAILURE";
    case CURAND_STATUS_PREEXISTING_FAILURE: return "CURAND_STATUS_PREEXISTING_FAILURE";
    case CURAND_STATUS_INITIALIZATION_FAILED: return "CURAND_STATUS_INITIALIZATION_FAILED";
    case CURAND_STATUS_ARCH_MISMATCH: return "CURAND_STATUS_ARCH_MISMATCH";
    case CURAND_STATUS_INTERNAL_ERROR: return "CURAND_STATUS_INTERNAL_ERROR";
    default: return NULL;
    }
}

static gboolean
check_curand (curandStatus_t status, const char *what, GError **error)
{
  return accel_cuda_check_library ((int) status, "cuRAND", status_name (status),
                                   status == CURAND_STATUS_ALLOCATION_FAILED, what, error);
}

static gboolean
generator_open (AccelCudaLane *lane, gpointer *gen, GError **error)
{
  return check_curand (curandCreateGenerator ((curandGenerator_t *) gen, CURAND_RNG_PSEUDO_PHILOX4_32_10),
                       "curandCreateGenerator", error)
         && check_curand (curandSetStream (*gen, accel_cuda_lane_get_stream (lane)), "curandSetStream", error);
}

static void
generator_destroy (gpointer gen)
{
  (void) curandDestroyGenerator (gen);
}

static gboolean
rng_fill_run (AccelOp *op, gpointer context, GError **error)
{
  AccelRngFill *self = ACCEL_RNG_FILL (op);
  AccelCudaLane *lane = context;
  cudaStream_t stream = accel_cuda_lane_get_stream (lane);
  AccelDType dtype = accel_buffer_get_dtype (self->dst);
  gint64 n = accel_buffer_get_n_elements (self->dst);
  gboolean normal = self->distribution == ACCEL_RNG_NORMAL;
  gboolean is_double = dtype == ACCEL_DTYPE_F64;
  gboolean narrow = dtype == ACCEL_DTYPE_F16 || dtype == ACCEL_DTYPE_BF16;
  gsize esize = is_double ? 8 : 4;

  if (n == 0)
    return TRUE;
  curandGenerator_t gen = accel_cuda_lane_open_handle (lane, "curand-philox", generator_open,
                                                      generator_destroy, error);
  if (gen == NULL)
    return FALSE;
  if (!check_curand (curandSetPseudoRandomGeneratorSeed (gen, self->seed), "curandSetPseudoRandomGeneratorSeed",
                     error)
      || !check_curand (curandSetGeneratorOffset (gen, self->offset * 4), "curandSetGeneratorOffset", error))
    return FALSE;

  /* Normal values come in pairs: an odd count is drawn one longer into
   * scratch memory. f16 and bf16 are drawn in binary32 first. */
  gint64 count = normal && (n % 2) ? n + 1 : n;
  void *target = accel_buffer_get_data (self->dst);
  void *draw = target;
  if (count != n || narrow)
    {
      draw = accel_cuda_lane_alloc_workspace (lane, (gsize) count * esize, error);
      if (draw == NULL)
        return FALSE;
    }

  curandStatus_t status;
  if (normal)
    status = is_double ? curandGenerateNormalDouble (gen, draw, count, self->mean, self->stddev)
                       : curandGenerateNormal (gen, draw, count, (float) self->mean, (float) self->stddev);
  else
    status = is_double ? curandGenerateUniformDouble (gen, draw, count)
                       : curandGenerateUniform (gen, draw, count);
  if (!check_curand (status, normal ? "curandGenerateNormal" : "curandGenerateUniform", error))
    return FALSE;
  if (!normal && !accel_cuda_check (accel_curand_launch_affine (draw, is_double, count, self->low, self->high, stream),
                                    "rng-fill: scaling kernel", error))
    return FALSE;
  if (narrow)
    return accel_cuda_check (accel_curand_launch_narrow (draw, target, n, dtype == ACCEL_DTYPE_BF16, stream),
                             "rng-fill: rounding kernel", error);
  if (draw != target)
    return accel_cuda_check (cudaMemcpyAsync (target, draw, (gsize) n * esize, cudaMemcpyDeviceToDevice, stream),
                             "rng-fill: cudaMemcpyAsync", error);
  return TRUE;
}

static const AccelKernelEntry kernels[] = {
  { "rng-fill", { .run = rng_fill_run } },
};

ACCEL_PLUGIN_DEFINE_KERNELS (curand,
                             "cuRAND Philox4x32-10 rng-fill on the cuda backend (rank 50; "
                             "ACCEL_CUDA_RNG=curand picks it)",
                             ACCEL_CUDA_BACKEND_NAME, KERNEL_RANK, kernels, ACCEL_VERSION, "LGPL-2.1-or-later")
