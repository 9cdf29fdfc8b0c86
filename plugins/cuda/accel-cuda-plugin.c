/* accel-cuda-plugin.c: the `cuda` plugin: the CUDA backend, and kernels
 * for copy, fill, cast, reduce, softmax, layernorm, rmsnorm and rng-fill,
 * and the image ops of accel-cuda-image.c, all in one table.
 *
 * rng-fill here is Accel's own Philox mapping, bit-identical to cpu:0 for
 * uniform values. The `curand` plugin offers cuRAND's generator as a second
 * kernel at a lower rank; setting `ACCEL_CUDA_RNG=curand` makes this kernel
 * decline, so the registry falls through to cuRAND.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include <accel-half.h>
#include "accel-config.h"
#include "accel-cuda.h"
#include "accel-cuda-kernels.h"
#include "accel-cuda-image.h"

#define KERNEL_RANK 100

G_STATIC_ASSERT ((int) ACCEL_DTYPE_F16 == ACCEL_CUDA_DT_F16);
G_STATIC_ASSERT ((int) ACCEL_DTYPE_C128 == ACCEL_CUDA_DT_C128);
G_STATIC_ASSERT ((int) ACCEL_DTYPE_I64 == ACCEL_CUDA_DT_I64);
G_STATIC_ASSERT ((int) ACCEL_DTYPE_FP8_E5M2 == ACCEL_CUDA_DT_FP8_E5M2);
G_STATIC_ASSERT ((int) ACCEL_REDUCE_MEAN == ACCEL_CUDA_REDUCE_MEAN);
G_STATIC_ASSERT ((int) ACCEL_REDUCE_MAX == ACCEL_CUDA_REDUCE_MAX);

/* replay: the graph's CUDA graph, captured at its first replay. */
static gboolean
replay_run (AccelOp *op, gpointer context, GError **error)
{
  return accel_cuda_lane_run_graph (context, ACCEL_REPLAY (op)->graph, error);
}

static gboolean
check_launch (cudaError_t status, const char *op, GError **error)
{
  return accel_cuda_check (status, op, error);
}

/* Fills @layout for @buffer; rank 0 when it is contiguous. */
static void
layout_of (AccelBuffer *buffer, AccelCudaLayout *layout)
{
  const AccelShape *shape = accel_buffer_get_shape (buffer);
  memset (layout, 0, sizeof *layout);
  if (accel_shape_is_contiguous (shape))
    return;
  guint rank = 0;
  const gint64 *dims = accel_shape_get_dims (shape, &rank);
  const gint64 *strides = accel_shape_get_strides (shape, NULL);
  layout->rank = (int) MIN (rank, ACCEL_CUDA_LAYOUT_MAX_RANK);
  for (int i = 0; i < layout->rank; i++)
    {
      layout->dims[i] = dims[i];
      layout->strides[i] = strides[i];
    }
}

/* copy */

static gboolean
copy_run (AccelOp *op, gpointer context, GError **error)
{
  AccelCopy *self = ACCEL_COPY (op);
  cudaStream_t stream = accel_cuda_lane_get_stream (context);
  gsize esize = accel_dtype_get_size (accel_buffer_get_dtype (self->src));
  gint64 n = accel_buffer_get_n_elements (self->src);
  const AccelShape *ss = accel_buffer_get_shape (self->src);
  const AccelShape *sd = accel_buffer_get_shape (self->dst);
  void *src = accel_buffer_get_data (self->src);
  void *dst = accel_buffer_get_data (self->dst);

  if (n == 0 || (src == dst && accel_shape_equal (ss, sd)))
    return TRUE;
  if (accel_shape_is_contiguous (ss) && accel_shape_is_contiguous (sd))
    return check_launch (cudaMemcpyAsync (dst, src, (gsize) n * esize, cudaMemcpyDeviceToDevice, stream),
                         "copy: cudaMemcpyAsync", error);

  AccelCudaLayout ls, ld;
  layout_of (self->src, &ls);
  layout_of (self->dst, &ld);
  return check_launch (accel_cuda_launch_copy (src, &ls, dst, &ld, n, esize, stream), "copy kernel", error);
}

/* fill: the value is encoded on the host with the CPU backend's rules. */

static void
encode_value (AccelDType dtype, double re, double im, guint8 out[16])
{
  memset (out, 0, 16);
  switch (dtype)
    {
#define PUT(T, EXPR) do { T v_ = (EXPR); memcpy (out, &v_, sizeof v_); } while (0)
    case ACCEL_DTYPE_F16: PUT (guint16, accel_f16_from_f64 (re)); break;
    case ACCEL_DTYPE_BF16: PUT (guint16, accel_bf16_from_f64 (re)); break;
    case ACCEL_DTYPE_FP8_E4M3: PUT (guint8, accel_fp8_e4m3_from_f64 (re)); break;
    case ACCEL_DTYPE_FP8_E5M2: PUT (guint8, accel_fp8_e5m2_from_f64 (re)); break;
    case ACCEL_DTYPE_F32: PUT (float, (float) re); break;
    case ACCEL_DTYPE_F64: PUT (double, re); break;
    case ACCEL_DTYPE_C64:
      {
        float v[2] = { (float) re, (float) im };
        memcpy (out, v, 8);
      }
      break;
    case ACCEL_DTYPE_C128:
      {
        double v[2] = { re, im };
        memcpy (out, v, 16);
      }
      break;
    case ACCEL_DTYPE_I8: PUT (gint8, (gint8) accel_sat_trunc (re, -128.0, 128.0, G_MININT8, G_MAXINT8)); break;
    case ACCEL_DTYPE_U8: PUT (guint8, (guint8) accel_sat_trunc (re, 0.0, 256.0, 0, G_MAXUINT8)); break;
    case ACCEL_DTYPE_I32:
      PUT (gint32, (gint32) accel_sat_trunc (re, -2147483648.0, 2147483648.0, G_MININT32, G_MAXINT32));
      break;
    case ACCEL_DTYPE_U32:
      PUT (guint32, (guint32) accel_sat_trunc (re, 0.0, 4294967296.0, 0, G_MAXUINT32));
      break;
    case ACCEL_DTYPE_I64:
      PUT (gint64, accel_sat_trunc (re, -9223372036854775808.0, 9223372036854775808.0, G_MININT64, G_MAXINT64));
      break;
#undef PUT
    default:
      break;
    }
}

static gboolean
fill_run (AccelOp *op, gpointer context, GError **error)
{
  AccelFill *self = ACCEL_FILL (op);
  cudaStream_t stream = accel_cuda_lane_get_stream (context);
  AccelDType dtype = accel_buffer_get_dtype (self->dst);
  gsize esize = accel_dtype_get_size (dtype);
  gint64 n = accel_buffer_get_n_elements (self->dst);
  guint8 pattern[16];
  AccelCudaLayout layout;

  if (n == 0)
    return TRUE;
  encode_value (dtype, self->value, self->value_imag, pattern);
  layout_of (self->dst, &layout);

  gboolean uniform = TRUE;
  for (gsize i = 1; i < esize; i++)
    uniform = uniform && pattern[i] == pattern[0];
  if (layout.rank == 0 && uniform)
    return check_launch (cudaMemsetAsync (accel_buffer_get_data (self->dst), pattern[0], (gsize) n * esize, stream),
                         "fill: cudaMemsetAsync", error);
  return check_launch (accel_cuda_launch_fill (accel_buffer_get_data (self->dst), &layout, n, pattern, esize, stream),
                       "fill kernel", error);
}

/* cast */

static gboolean
cast_run (AccelOp *op, gpointer context, GError **error)
{
  AccelCast *self = ACCEL_CAST (op);
  cudaStream_t stream = accel_cuda_lane_get_stream (context);
  AccelCudaLayout ls, ld;

  layout_of (self->src, &ls);
  layout_of (self->dst, &ld);
  return check_launch (accel_cuda_launch_cast (accel_buffer_get_data (self->src), accel_buffer_get_dtype (self->src),
                                               &ls, accel_buffer_get_data (self->dst),
                                               accel_buffer_get_dtype (self->dst), &ld,
                                               accel_buffer_get_n_elements (self->src), stream),
                       "cast kernel", error);
}

/* reduce */

static gboolean
reduce_run (AccelOp *op, gpointer context, GError **error)
{
  AccelReduce *self = ACCEL_REDUCE (op);
  const AccelShape *shape = accel_buffer_get_shape (self->src);
  int rank = (int) accel_shape_get_rank (shape);
  int axis = self->axis < 0 ? self->axis + rank : self->axis;
  gint64 outer = 1, inner = 1, len = accel_shape_get_dim (shape, axis);

  for (int i = 0; i < axis; i++)
    outer *= accel_shape_get_dim (shape, i);
  for (int i = axis + 1; i < rank; i++)
    inner *= accel_shape_get_dim (shape, i);
  return check_launch (accel_cuda_launch_reduce (accel_buffer_get_data (self->src), accel_buffer_get_data (self->dst),
                                                 accel_buffer_get_dtype (self->src), self->reduction,
                                                 outer, len, inner, accel_cuda_lane_get_stream (context)),
                       "reduce kernel", error);
}

/* softmax */

static gboolean
softmax_run (AccelOp *op, gpointer context, GError **error)
{
  AccelSoftmax *self = ACCEL_SOFTMAX (op);
  const AccelShape *shape = accel_buffer_get_shape (self->src);
  guint rank = accel_shape_get_rank (shape);
  gint64 len = accel_shape_get_dim (shape, rank - 1);

  if (len == 0)
    return TRUE;
  return check_launch (accel_cuda_launch_softmax (accel_buffer_get_data (self->src),
                                                  accel_buffer_get_data (self->dst),
                                                  accel_buffer_get_dtype (self->src),
                                                  accel_shape_get_n_elements (shape) / len, len,
                                                  accel_cuda_lane_get_stream (context)),
                       "softmax kernel", error);
}

/* layernorm and rmsnorm: accel-cuda-norm.cu */

static gboolean
norm_supports (AccelOp *op, AccelDevice *device, GError **error)
{
  AccelBuffer *x = accel_op_peek_buffer (op, "x");
  AccelDType dtype = x ? accel_buffer_get_dtype (x) : ACCEL_DTYPE_F32;

  if (dtype != ACCEL_DTYPE_F32 && dtype != ACCEL_DTYPE_F16 && dtype != ACCEL_DTYPE_BF16)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED,
                   "cuda: %s of “x” of type %s: the kernel takes f32, f16 or bf16",
                   accel_op_get_type_name (op), accel_dtype_get_name (dtype));
      return FALSE;
    }
  return TRUE;
}

static gboolean
norm_run (gboolean rms, gpointer context, AccelBuffer *x, AccelBuffer *gamma, AccelBuffer *beta,
          AccelBuffer *y, double eps, GError **error)
{
  const AccelShape *shape = accel_buffer_get_shape (x);
  gint64 n = accel_shape_get_dim (shape, accel_shape_get_rank (shape) - 1);

  if (n == 0)
    return TRUE;
  return check_launch (accel_cuda_launch_norm (accel_buffer_get_data (x),
                                               gamma ? accel_buffer_get_data (gamma) : NULL,
                                               beta ? accel_buffer_get_data (beta) : NULL,
                                               accel_buffer_get_data (y), accel_buffer_get_dtype (x), rms,
                                               accel_shape_get_n_elements (shape) / n, n, eps,
                                               accel_cuda_lane_get_stream (context)),
                       rms ? "rmsnorm kernel" : "layernorm kernel", error);
}

static gboolean
layernorm_run (AccelOp *op, gpointer context, GError **error)
{
  AccelLayernorm *self = ACCEL_LAYERNORM (op);
  return norm_run (FALSE, context, self->x, self->gamma, self->beta, self->y, self->eps, error);
}

static gboolean
rmsnorm_run (AccelOp *op, gpointer context, GError **error)
{
  AccelRmsnorm *self = ACCEL_RMSNORM (op);
  return norm_run (TRUE, context, self->x, self->gamma, self->beta, self->y, self->eps, error);
}

/* rng-fill */

static gboolean
rng_fill_supports (AccelOp *op, AccelDevice *device, GError **error)
{
  static gsize once = 0;
  static gboolean prefer_curand;

  if (g_once_init_enter (&once))
    {
      prefer_curand = g_strcmp0 (g_getenv ("ACCEL_CUDA_RNG"), "curand") == 0;
      g_once_init_leave (&once, 1);
    }
  if (prefer_curand)
    {
      g_set_error_literal (error, ACCEL_ERROR, ACCEL_ERROR_NO_KERNEL,
                           "cuda: ACCEL_CUDA_RNG=curand asks for cuRAND's generator instead");
      return FALSE;
    }
  return TRUE;
}

static gboolean
rng_fill_run (AccelOp *op, gpointer context, GError **error)
{
  AccelRngFill *self = ACCEL_RNG_FILL (op);
  gboolean normal = self->distribution == ACCEL_RNG_NORMAL;

  return check_launch (accel_cuda_launch_rng_fill (accel_buffer_get_data (self->dst),
                                                   accel_buffer_get_dtype (self->dst),
                                                   accel_buffer_get_n_elements (self->dst),
                                                   self->seed, self->offset, normal,
                                                   normal ? self->mean : self->low,
                                                   normal ? self->stddev : self->high,
                                                   accel_cuda_lane_get_stream (context)),
                       "rng-fill kernel", error);
}

static const AccelKernelEntry kernels[] = {
  { "copy", { .run = copy_run } },
  { "fill", { .run = fill_run } },
  { "cast", { .run = cast_run } },
  { "reduce", { .run = reduce_run } },
  { "softmax", { .run = softmax_run } },
  { "layernorm", { .supports = norm_supports, .run = layernorm_run } },
  { "rmsnorm", { .supports = norm_supports, .run = rmsnorm_run } },
  { "rng-fill", { .supports = rng_fill_supports, .run = rng_fill_run } },
  { "replay", { .run = replay_run } },
  { "resize", { .run = accel_cuda_resample_run } },
  { "convert-color", { .run = accel_cuda_resample_run } },
  { "filter", { .run = accel_cuda_filter_run } },
  { "morphology", { .run = accel_cuda_morphology_run } },
  { "warp-affine", { .run = accel_cuda_warp_affine_run } },
  { "warp-perspective", { .run = accel_cuda_warp_perspective_run } },
};

static gboolean
accel_cuda_plugin_init (AccelPlugin *plugin, GError **error)
{
  accel_plugin_register_backend (plugin, ACCEL_CUDA_BACKEND_NAME, ACCEL_CUDA_TYPE_BACKEND);
  accel_plugin_register_kernels (plugin, ACCEL_CUDA_BACKEND_NAME, KERNEL_RANK, kernels, G_N_ELEMENTS (kernels));
  return TRUE;
}

ACCEL_PLUGIN_DEFINE (cuda,
                     "CUDA backend: devices, lanes, stream-ordered memory; copy, fill, cast, reduce, "
                     "softmax, layernorm, rmsnorm and Philox rng-fill kernels",
                     accel_cuda_plugin_init,
                     ACCEL_VERSION,
                     "LGPL-2.1-or-later")
