/* accel-cub-plugin.c: the `cub` plugin: sort, scan, histogram, select and
 * segmented-reduce on the `cuda` backend through CUB (compiled into the
 * plugin from the toolkit's CCCL headers; see accel-cub-kernels.cu).
 *
 * Each run asks CUB for its scratch size, takes that much from the lane's
 * workspace (stream-ordered, released after the op) and enqueues; nothing
 * waits. In-place scans run from a copy of the input. The segment offsets
 * of segmented-reduce are trusted here: offsets out of [0, n] read out of
 * bounds on the device (the cpu kernel checks them).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-config.h"
#include "accel-cuda.h"
#include "accel-cub-kernels.h"

#define KERNEL_RANK 100

static gboolean
check (cudaError_t status, const char *what, GError **error)
{
  return accel_cuda_check (status, what, error);
}

static gboolean
type_for (AccelDType dtype, AccelCubType *type)
{
  switch (dtype)
    {
    case ACCEL_DTYPE_I8: *type = ACCEL_CUB_I8; return TRUE;
    case ACCEL_DTYPE_U8: *type = ACCEL_CUB_U8; return TRUE;
    case ACCEL_DTYPE_I32: *type = ACCEL_CUB_I32; return TRUE;
    case ACCEL_DTYPE_U32: *type = ACCEL_CUB_U32; return TRUE;
    case ACCEL_DTYPE_I64: *type = ACCEL_CUB_I64; return TRUE;
    case ACCEL_DTYPE_F16: *type = ACCEL_CUB_F16; return TRUE;
    case ACCEL_DTYPE_BF16: *type = ACCEL_CUB_BF16; return TRUE;
    case ACCEL_DTYPE_F32: *type = ACCEL_CUB_F32; return TRUE;
    case ACCEL_DTYPE_F64: *type = ACCEL_CUB_F64; return TRUE;
    default: return FALSE;
    }
}

/* The same for sums, which add integers as unsigned. */
static AccelCubType
sum_type_for (AccelDType dtype)
{
  switch (dtype)
    {
    case ACCEL_DTYPE_I32:
    case ACCEL_DTYPE_U32: return ACCEL_CUB_U32;
    case ACCEL_DTYPE_I64: return ACCEL_CUB_U64;
    case ACCEL_DTYPE_F32: return ACCEL_CUB_F32;
    default: return ACCEL_CUB_F64;
    }
}

static gint64
last_dim (AccelBuffer *b)
{
  const AccelShape *s = accel_buffer_get_shape (b);
  return accel_shape_get_dim (s, accel_shape_get_rank (s) - 1);
}

/* sort */

static gboolean
sort_supports (AccelOp *op, AccelDevice *device, GError **error)
{
  AccelSort *self = ACCEL_SORT (op);
  gint64 n = last_dim (self->keys), total = accel_buffer_get_n_elements (self->keys);
  gsize vs = self->values ? accel_dtype_get_size (accel_buffer_get_dtype (self->values)) : 0;

  if (total > n && total > G_MAXINT)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                   "cub: sorting rows takes at most %d keys in all (CUB's segmented sort), not %" G_GINT64_FORMAT,
                   G_MAXINT, total);
      return FALSE;
    }
  if (vs != 0 && vs != 1 && vs != 2 && vs != 4 && vs != 8 && vs != 16)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED,
                   "cub: sort values of %" G_GSIZE_FORMAT " bytes are not supported", vs);
      return FALSE;
    }
  return TRUE;
}

static gboolean
sort_run (AccelOp *op, gpointer context, GError **error)
{
  AccelSort *self = ACCEL_SORT (op);
  cudaStream_t stream = accel_cuda_lane_get_stream (context);
  gint64 n = last_dim (self->keys), total = accel_buffer_get_n_elements (self->keys);
  void *values = self->values ? accel_buffer_get_data (self->values) : NULL;
  gsize vs = self->values ? accel_dtype_get_size (accel_buffer_get_dtype (self->values)) : 0;
  AccelCubType type;
  size_t bytes = 0;

  if (!sort_supports (op, NULL, error) || !type_for (accel_buffer_get_dtype (self->keys), &type))
    return FALSE;
  if (n <= 1 || total == 0)
    return TRUE;
  if (!check (accel_cub_sort (type, NULL, values, vs, total / n, n, self->descending, NULL, &bytes, stream),
              "cub sort (sizing)", error))
    return FALSE;
  void *temp = accel_cuda_lane_alloc_workspace (context, bytes, error);
  return temp != NULL
         && check (accel_cub_sort (type, accel_buffer_get_data (self->keys), values, vs, total / n, n,
                                   self->descending, temp, &bytes, stream), "cub sort", error);
}

/* scan */

static gboolean
scan_run (AccelOp *op, gpointer context, GError **error)
{
  AccelScan *self = ACCEL_SCAN (op);
  cudaStream_t stream = accel_cuda_lane_get_stream (context);
  AccelCubType type = sum_type_for (accel_buffer_get_dtype (self->input));
  gint64 n = last_dim (self->input), total = accel_buffer_get_n_elements (self->input);
  const void *in = accel_buffer_get_data (self->input);
  void *out = accel_buffer_get_data (self->output);
  gboolean exclusive = self->kind == ACCEL_SCAN_EXCLUSIVE;
  size_t bytes = 0;

  if (total == 0)
    return TRUE;
  if (in == out)
    {
      gsize size = accel_buffer_get_size (self->input);
      void *copy = accel_cuda_lane_alloc_workspace (context, size, error);
      if (copy == NULL || !ACCEL_CUDA_CHECK (cudaMemcpyAsync (copy, in, size, cudaMemcpyDeviceToDevice, stream),
                                             error))
        return FALSE;
      in = copy;
    }
  if (!check (accel_cub_scan (type, in, out, total / n, n, exclusive, NULL, &bytes, stream), "cub scan (sizing)",
              error))
    return FALSE;
  void *temp = accel_cuda_lane_alloc_workspace (context, bytes, error);
  return temp != NULL
         && check (accel_cub_scan (type, in, out, total / n, n, exclusive, temp, &bytes, stream), "cub scan", error);
}

/* histogram */

static gboolean
histogram_run (AccelOp *op, gpointer context, GError **error)
{
  AccelHistogram *self = ACCEL_HISTOGRAM (op);
  cudaStream_t stream = accel_cuda_lane_get_stream (context);
  gint64 n = accel_buffer_get_n_elements (self->samples);
  const void *samples = accel_buffer_get_data (self->samples);
  int *bins = accel_buffer_get_data (self->bins);
  AccelCubType type;
  size_t bytes = 0;

  if (!type_for (accel_buffer_get_dtype (self->samples), &type))
    return FALSE;
  if (!check (accel_cub_histogram (type, samples, bins, self->n_bins, self->lower, self->upper, n, NULL, &bytes,
                                   stream), "cub histogram (sizing)", error))
    return FALSE;
  void *temp = accel_cuda_lane_alloc_workspace (context, bytes, error);
  return temp != NULL
         && check (accel_cub_histogram (type, samples, bins, self->n_bins, self->lower, self->upper, n, temp, &bytes,
                                        stream), "cub histogram", error)
         && (!self->include_upper
             || check (accel_cub_histogram_count_upper (type, samples, n, self->upper, bins + self->n_bins - 1, stream),
                       "histogram upper edge", error));
}

/* select */

static gboolean
select_run (AccelOp *op, gpointer context, GError **error)
{
  AccelSelect *self = ACCEL_SELECT (op);
  cudaStream_t stream = accel_cuda_lane_get_stream (context);
  gint64 n = accel_buffer_get_n_elements (self->input);
  gsize es = accel_dtype_get_size (accel_buffer_get_dtype (self->input));
  gsize fs = accel_dtype_get_size (accel_buffer_get_dtype (self->flags));
  gboolean count_i64 = accel_buffer_get_dtype (self->count) == ACCEL_DTYPE_I64;
  const unsigned char *flags = accel_buffer_get_data (self->flags);
  long long *count = accel_buffer_get_data (self->count);
  size_t bytes = 0;

  if (fs != 1)
    {
      unsigned char *f = accel_cuda_lane_alloc_workspace (context, MAX (n, 1), error);
      if (f == NULL || !check (accel_cub_flags_to_u8 (flags, fs, f, n, stream), "flags_to_u8", error))
        return FALSE;
      flags = f;
    }
  if (!count_i64 && (count = accel_cuda_lane_alloc_workspace (context, sizeof (long long), error)) == NULL)
    return FALSE;
  if (!check (accel_cub_select (es, accel_buffer_get_data (self->input), flags, accel_buffer_get_data (self->output),
                                count, n, NULL, &bytes, stream), "cub select (sizing)", error))
    return FALSE;
  void *temp = accel_cuda_lane_alloc_workspace (context, bytes, error);
  if (temp == NULL
      || !check (accel_cub_select (es, accel_buffer_get_data (self->input), flags,
                                   accel_buffer_get_data (self->output), count, n, temp, &bytes, stream),
                 "cub select", error))
    return FALSE;
  return count_i64 || check (accel_cub_count_to_i32 (count, accel_buffer_get_data (self->count), stream),
                             "count_to_i32", error);
}

/* segmented-reduce */

static gboolean
segmented_reduce_run (AccelOp *op, gpointer context, GError **error)
{
  AccelSegmentedReduce *self = ACCEL_SEGMENTED_REDUCE (op);
  cudaStream_t stream = accel_cuda_lane_get_stream (context);
  AccelDType dtype = accel_buffer_get_dtype (self->input);
  int n_segments = (int) (accel_buffer_get_n_elements (self->offsets) - 1);
  const long long *offsets = accel_buffer_get_data (self->offsets);
  AccelCubReduction reduction;
  AccelCubType type;
  size_t bytes = 0;

  if (n_segments == 0)
    return TRUE;
  if (accel_buffer_get_dtype (self->offsets) == ACCEL_DTYPE_I32)
    {
      long long *wide = accel_cuda_lane_alloc_workspace (context, (n_segments + 1) * sizeof (long long), error);
      if (wide == NULL
          || !check (accel_cub_offsets_to_i64 (accel_buffer_get_data (self->offsets), wide, n_segments + 1, stream),
                     "offsets_to_i64", error))
        return FALSE;
      offsets = wide;
    }
  switch (self->reduction)
    {
    case ACCEL_REDUCE_MIN:
      reduction = ACCEL_CUB_MIN;
      type_for (dtype, &type);
      break;
    case ACCEL_REDUCE_MAX:
      reduction = ACCEL_CUB_MAX;
      type_for (dtype, &type);
      break;
    default:
      reduction = ACCEL_CUB_SUM;
      type = sum_type_for (dtype);
      break;
    }
  const void *in = accel_buffer_get_data (self->input);
  void *out = accel_buffer_get_data (self->output);
  if (!check (accel_cub_segmented_reduce (type, reduction, in, out, offsets, n_segments, NULL, &bytes, stream),
              "cub segmented reduce (sizing)", error))
    return FALSE;
  void *temp = accel_cuda_lane_alloc_workspace (context, bytes, error);
  if (temp == NULL
      || !check (accel_cub_segmented_reduce (type, reduction, in, out, offsets, n_segments, temp, &bytes, stream),
                 "cub segmented reduce", error))
    return FALSE;
  if (self->reduction == ACCEL_REDUCE_MEAN)
    return check (accel_cub_divide_by_length (type, out, offsets, n_segments, stream), "divide_by_length", error);
  return TRUE;
}

static const AccelKernelEntry kernels[] = {
  { "sort", { .supports = sort_supports, .run = sort_run } },
  { "scan", { .run = scan_run } },
  { "histogram", { .run = histogram_run } },
  { "select", { .run = select_run } },
  { "segmented-reduce", { .run = segmented_reduce_run } },
};

ACCEL_PLUGIN_DEFINE_KERNELS (cub,
                             "CUB kernels on the cuda backend: sort (keys, pairs; rows), scan, histogram, select, "
                             "segmented-reduce",
                             ACCEL_CUDA_BACKEND_NAME, KERNEL_RANK, kernels, ACCEL_VERSION, "LGPL-2.1-or-later")
