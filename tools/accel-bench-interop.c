/* accel-bench-interop.c: the `interop` group of accel-bench.
 *
 * A host array of 1 MiB of f32 taken by the device, changed by an op and
 * handed back as host memory, the way an array library does it: borrowed
 * through DLPack (accel_buffer_new_from_dlpack()), `scal`, lent back
 * (accel_buffer_to_dlpack_host()), which moves no data on a cpu device;
 * beside the same work with copies (alloc, accel_buffer_write(), `scal`,
 * accel_buffer_read()). Python's from_numpy + run + numpy() is the first
 * path (introspection/bench_dispatch.py compares it with this figure).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include "accel-bench.h"

#define ROUNDTRIP_ELEMENTS (256 * 1024)   /* 1 MiB of f32 */

static int64_t roundtrip_dims[1] = { ROUNDTRIP_ELEMENTS };

/* A tensor over the caller's array, as an array library lends it. */
typedef struct {
  AccelDLManagedTensor tensor;
  guint *deleted;
} Lent;

static void
lent_delete (AccelDLManagedTensor *tensor)
{
  Lent *lent = tensor->manager_ctx;
  (*lent->deleted)++;
}

static gboolean
zero_copy_round (AccelDevice *device, float *array, Lent *lent, GError **error)
{
  memset (&lent->tensor, 0, sizeof lent->tensor);
  lent->tensor.dl_tensor.data = array;
  lent->tensor.dl_tensor.device.device_type = ACCEL_DLPACK_DEVICE_CPU;
  lent->tensor.dl_tensor.ndim = 1;
  lent->tensor.dl_tensor.dtype = (AccelDLDataType) { ACCEL_DLPACK_CODE_FLOAT, 32, 1 };
  lent->tensor.dl_tensor.shape = roundtrip_dims;
  lent->tensor.manager_ctx = lent;
  lent->tensor.deleter = lent_delete;

  g_autoptr(AccelBuffer) buffer = accel_buffer_new_from_dlpack (device, &lent->tensor,
                                                                ACCEL_DLPACK_COPY_IF_NEEDED, error);
  if (buffer == NULL)
    return FALSE;
  g_autoptr(AccelOp) op = accel_scal_new (1.0001, buffer);
  if (!accel_device_submit (device, op, NULL, error))
    return FALSE;
  AccelDLManagedTensor *back = accel_buffer_to_dlpack_host (buffer, ACCEL_DLPACK_COPY_IF_NEEDED, error);
  if (back == NULL)
    return FALSE;
  /* What a consumer would read. */
  volatile float first = ((float *) ((guint8 *) back->dl_tensor.data + back->dl_tensor.byte_offset))[0];
  (void) first;
  back->deleter (back);
  return TRUE;
}

static gboolean
copy_round (AccelDevice *device, float *array, GError **error)
{
  g_autoptr(AccelShape) shape = accel_shape_new_1d (ROUNDTRIP_ELEMENTS);
  g_autoptr(AccelBuffer) buffer = accel_device_alloc (device, ACCEL_DTYPE_F32, shape, error);
  if (buffer == NULL || !accel_buffer_write (buffer, (guint8 *) array, sizeof (float) * ROUNDTRIP_ELEMENTS, error))
    return FALSE;
  g_autoptr(AccelOp) op = accel_scal_new (1.0001, buffer);
  return accel_device_submit (device, op, NULL, error)
         && accel_buffer_read (buffer, (guint8 *) array, sizeof (float) * ROUNDTRIP_ELEMENTS, error);
}

static gboolean
run_interop (AccelBench *bench, GError **error)
{
  AccelDevice *device = accel_bench_get_device (bench);
  const guint n = accel_bench_is_quick (bench) ? 200 : 2000;
  g_autofree float *array = g_new (float, ROUNDTRIP_ELEMENTS);
  g_autofree double *zero_copy = g_new (double, n);
  g_autofree double *copies = g_new (double, n);
  guint deleted = 0;
  Lent lent = { .deleted = &deleted };

  for (guint i = 0; i < ROUNDTRIP_ELEMENTS; i++)
    array[i] = (float) g_random_double_range (-1, 1);

  /* Warm-up, then the two alternate so that both see the same machine. */
  for (guint i = 0; i < n / 10 + 1; i++)
    if (!zero_copy_round (device, array, &lent, error) || !copy_round (device, array, error))
      return FALSE;
  for (guint i = 0; i < n; i++)
    {
      accel_bench_progress (bench, "interop: %u/%u", i, n);
      double t0 = accel_bench_now ();
      if (!zero_copy_round (device, array, &lent, error))
        return FALSE;
      double t1 = accel_bench_now ();
      if (!copy_round (device, array, error))
        return FALSE;
      double t2 = accel_bench_now ();
      zero_copy[i] = t1 - t0;
      copies[i] = t2 - t1;
    }
  if (deleted != n + n / 10 + 1)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_FAILED,
                   "interop: %u of %u borrowed tensors were given back", deleted, n + n / 10 + 1);
      return FALSE;
    }
  accel_bench_report (bench, "interop.dlpack-scal-1mib.p50", "us",
                      accel_bench_quantile (zero_copy, n, 0.5) * 1e6,
                      accel_bench_quantile (copies, n, 0.5) * 1e6);
  return TRUE;
}

const AccelBenchGroup accel_bench_interop_groups[] = {
  { "interop", "1 MiB f32 host array borrowed (DLPack), scal, lent back as host memory, "
               "beside alloc + write + scal + read", run_interop },
  { NULL, NULL, NULL },
};
