/* accel-cudnn-plugin.c: the `cudnn` plugin: conv2d, conv2d-backward-data,
 * conv2d-backward-filter and pool2d on the `cuda` backend through cuDNN 9's
 * convolution and pooling API (the descriptor API that cuDNN 9 still
 * ships, deprecated in favour of the graph API), NCHW and NHWC, f32, f16
 * and bf16 with f32 accumulation.
 *
 * Per lane: one cuDNN handle and a bounded cache of convolution plans,
 * keyed by direction, type, layout and geometry: the tensor, filter and
 * convolution descriptors and the algorithm cuDNN's heuristics
 * (cudnnGet*Algorithm_v7, which neither runs nor waits) rank first among
 * those that fit in WORKSPACE_LIMIT, with its workspace size; the
 * workspace itself comes from the lane at each run. f32 convolutions use
 * CUDNN_FMA_MATH, so no TF32 rounding creeps in; f16 and bf16 use tensor
 * cores. The bias of conv2d is a second pass (cudnnAddTensor).
 *
 * layernorm and rmsnorm have no kernel here: cuDNN 9 offers normalisation
 * only through its graph (backend) API, which this plugin does not use;
 * those ops run on the cpu backend.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include <cudnn.h>
#include "accel-config.h"
#include "accel-cuda.h"

#define KERNEL_RANK 100
#define PLAN_CACHE_SIZE 64
#define WORKSPACE_LIMIT ((gsize) 256 << 20)

typedef enum {
  DIR_FORWARD,
  DIR_BACKWARD_DATA,
  DIR_BACKWARD_FILTER,
} Direction;

typedef struct {
  gint32 direction, dtype, nhwc;
  gint32 n, c, h, w, k, r, s, p, q;
  gint32 stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, groups;
} PlanKey;

typedef struct {
  PlanKey key;
  cudnnTensorDescriptor_t x, y;
  cudnnFilterDescriptor_t w;
  cudnnConvolutionDescriptor_t conv;
  int algo;                  /* of the direction's algorithm enum */
  gsize workspace;
} Plan;

static gboolean
check_cudnn (cudnnStatus_t status, const char *what, GError **error)
{
  return accel_cuda_check_library ((int) status, "cuDNN", cudnnGetErrorString (status),
                                   status == CUDNN_STATUS_ALLOC_FAILED, what, error);
}

static void
plan_free (gpointer data)
{
  Plan *p = data;
  if (p->x)
    (void) cudnnDestroyTensorDescriptor (p->x);
  if (p->y)
    (void) cudnnDestroyTensorDescriptor (p->y);
  if (p->w)
    (void) cudnnDestroyFilterDescriptor (p->w);
  if (p->conv)
    (void) cudnnDestroyConvolutionDescriptor (p->conv);
  g_free (p);
}

static void
dnn_destroy (gpointer handle)
{
  (void) cudnnDestroy (handle);
}

static gboolean
dnn_open (AccelCudaLane *lane, gpointer *handle, GError **error)
{
  return check_cudnn (cudnnCreate ((cudnnHandle_t *) handle), "cudnnCreate", error)
         && check_cudnn (cudnnSetStream (*handle, accel_cuda_lane_get_stream (lane)), "cudnnSetStream", error);
}

static cudnnHandle_t
lane_dnn (AccelCudaLane *lane, GError **error)
{
  return accel_cuda_lane_open_handle (lane, "cudnn", dnn_open, dnn_destroy, error);
}

static cudnnDataType_t
dnn_type (AccelDType dtype)
{
  switch (dtype)
    {
    case ACCEL_DTYPE_F16: return CUDNN_DATA_HALF;
    case ACCEL_DTYPE_BF16: return CUDNN_DATA_BFLOAT16;
    default: return CUDNN_DATA_FLOAT;
    }
}

static cudnnTensorFormat_t
format_of (gboolean nhwc)
{
  return nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
}

/* The geometry of a conv op from its forward-role buffers. */
static void
key_init (PlanKey *key, Direction dir, const AccelConv2dParams *p, AccelBuffer *x, AccelBuffer *w, AccelBuffer *y)
{
  gboolean nhwc = p->layout == ACCEL_CONV_LAYOUT_NHWC;
  const AccelShape *sx = accel_buffer_get_shape (x), *sw = accel_buffer_get_shape (w);
  const AccelShape *sy = accel_buffer_get_shape (y);

  memset (key, 0, sizeof *key);
  key->direction = dir;
  key->dtype = accel_buffer_get_dtype (x);
  key->nhwc = nhwc;
  key->n = (gint32) accel_shape_get_dim (sx, 0);
  key->c = (gint32) accel_shape_get_dim (sx, nhwc ? 3 : 1);
  key->h = (gint32) accel_shape_get_dim (sx, nhwc ? 1 : 2);
  key->w = (gint32) accel_shape_get_dim (sx, nhwc ? 2 : 3);
  key->k = (gint32) accel_shape_get_dim (sw, 0);
  key->r = (gint32) accel_shape_get_dim (sw, nhwc ? 1 : 2);
  key->s = (gint32) accel_shape_get_dim (sw, nhwc ? 2 : 3);
  key->p = (gint32) accel_shape_get_dim (sy, nhwc ? 1 : 2);
  key->q = (gint32) accel_shape_get_dim (sy, nhwc ? 2 : 3);
  key->stride_h = p->stride_h;
  key->stride_w = p->stride_w;
  key->pad_h = p->pad_h;
  key->pad_w = p->pad_w;
  key->dilation_h = p->dilation_h;
  key->dilation_w = p->dilation_w;
  key->groups = p->groups;
}

static gboolean
plan_descriptors (Plan *pl, GError **error)
{
  const PlanKey *k = &pl->key;
  cudnnDataType_t type = dnn_type (k->dtype);
  cudnnTensorFormat_t fmt = format_of (k->nhwc);

  return check_cudnn (cudnnCreateTensorDescriptor (&pl->x), "cudnnCreateTensorDescriptor", error)
         && check_cudnn (cudnnCreateTensorDescriptor (&pl->y), "cudnnCreateTensorDescriptor", error)
         && check_cudnn (cudnnCreateFilterDescriptor (&pl->w), "cudnnCreateFilterDescriptor", error)
         && check_cudnn (cudnnCreateConvolutionDescriptor (&pl->conv), "cudnnCreateConvolutionDescriptor", error)
         && check_cudnn (cudnnSetTensor4dDescriptor (pl->x, fmt, type, k->n, k->c, k->h, k->w),
                         "cudnnSetTensor4dDescriptor", error)
         && check_cudnn (cudnnSetTensor4dDescriptor (pl->y, fmt, type, k->n, k->k, k->p, k->q),
                         "cudnnSetTensor4dDescriptor", error)
         && check_cudnn (cudnnSetFilter4dDescriptor (pl->w, type, fmt, k->k, k->c / k->groups, k->r, k->s),
                         "cudnnSetFilter4dDescriptor", error)
         && check_cudnn (cudnnSetConvolution2dDescriptor (pl->conv, k->pad_h, k->pad_w, k->stride_h, k->stride_w,
                                                          k->dilation_h, k->dilation_w, CUDNN_CROSS_CORRELATION,
                                                          CUDNN_DATA_FLOAT), "cudnnSetConvolution2dDescriptor", error)
         && check_cudnn (cudnnSetConvolutionGroupCount (pl->conv, k->groups), "cudnnSetConvolutionGroupCount", error)
         && check_cudnn (cudnnSetConvolutionMathType (pl->conv, type == CUDNN_DATA_FLOAT ? CUDNN_FMA_MATH
                                                                                           : CUDNN_TENSOR_OP_MATH),
                         "cudnnSetConvolutionMathType", error);
}

#define N_CANDIDATES 8

/* In plan_choose(): asks the heuristics @query (a
 * cudnnGetConvolution*Algorithm_v7, which takes the handle, the four
 * descriptors @a @b @conv @c, then fills @PerfType candidates best first)
 * and takes the first that succeeded and fits the workspace limit. */
#define CHOOSE_FROM(PerfType, query, a, b, conv, c)                                                \
  do                                                                                               \
    {                                                                                              \
      PerfType perf[N_CANDIDATES];                                                                 \
      if (!check_cudnn (query (handle, a, b, conv, c, N_CANDIDATES, &n, perf), #query, error))      \
        return FALSE;                                                                              \
      for (int i = 0; i < n && pl->algo < 0; i++)                                                  \
        if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= WORKSPACE_LIMIT)           \
          pl->algo = perf[i].algo, pl->workspace = perf[i].memory;                                 \
    }                                                                                              \
  while (0)

/* The heuristics' best algorithm that fits the workspace limit. */
static gboolean
plan_choose (cudnnHandle_t handle, Plan *pl, GError **error)
{
  int n = 0;
  pl->algo = -1;
  switch (pl->key.direction)
    {
    case DIR_FORWARD:
      CHOOSE_FROM (cudnnConvolutionFwdAlgoPerf_t, cudnnGetConvolutionForwardAlgorithm_v7,
                   pl->x, pl->w, pl->conv, pl->y);
      break;
    case DIR_BACKWARD_DATA:
      CHOOSE_FROM (cudnnConvolutionBwdDataAlgoPerf_t, cudnnGetConvolutionBackwardDataAlgorithm_v7,
                   pl->w, pl->y, pl->conv, pl->x);
      break;
    default:
      CHOOSE_FROM (cudnnConvolutionBwdFilterAlgoPerf_t, cudnnGetConvolutionBackwardFilterAlgorithm_v7,
                   pl->x, pl->y, pl->conv, pl->w);
      break;
    }
  if (pl->algo < 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                   "cuDNN offers no algorithm for this convolution (%s, groups %d) within %" G_GSIZE_FORMAT
                   " MiB of workspace", accel_dtype_get_name (pl->key.dtype), pl->key.groups, WORKSPACE_LIMIT >> 20);
      return FALSE;
    }
  return TRUE;
}

/* The descriptors and algorithm of a plan, chosen with the lane's handle
 * (@user_data). */
static gpointer
plan_make (gconstpointer key, gpointer user_data, GError **error)
{
  Plan *pl = g_new0 (Plan, 1);
  pl->key = *(const PlanKey *) key;
  if (!plan_descriptors (pl, error) || !plan_choose (user_data, pl, error))
    {
      plan_free (pl);
      return NULL;
    }
  return pl;
}

static const AccelCudaPlanKind plan_kind = {
  "cudnn-plans", sizeof (PlanKey), PLAN_CACHE_SIZE, plan_make, plan_free,
};

static gboolean
conv_run (AccelCudaLane *lane, Direction dir, const AccelConv2dParams *params,
          AccelBuffer *x, AccelBuffer *w, AccelBuffer *y, AccelBuffer *bias, GError **error)
{
  const float one = 1.0f, zero = 0.0f;
  PlanKey key;

  key_init (&key, dir, params, x, w, y);
  if (key.n == 0 || key.k == 0 || key.c == 0)
    return TRUE;
  cudnnHandle_t handle = lane_dnn (lane, error);
  Plan *pl = handle ? accel_cuda_lane_get_plan (lane, &plan_kind, &key, handle, error) : NULL;
  if (pl == NULL)
    return FALSE;
  void *work = NULL;
  if (pl->workspace > 0 && (work = accel_cuda_lane_alloc_workspace (lane, pl->workspace, error)) == NULL)
    return FALSE;

  void *px = accel_buffer_get_data (x), *pw = accel_buffer_get_data (w), *py = accel_buffer_get_data (y);
  switch (dir)
    {
    case DIR_FORWARD:
      if (!check_cudnn (cudnnConvolutionForward (handle, &one, pl->x, px, pl->w, pw, pl->conv,
                                                 (cudnnConvolutionFwdAlgo_t) pl->algo, work, pl->workspace, &zero,
                                                 pl->y, py), "cudnnConvolutionForward", error))
        return FALSE;
      if (bias != NULL)
        {
          cudnnTensorDescriptor_t bd = NULL;
          gboolean ok = check_cudnn (cudnnCreateTensorDescriptor (&bd), "cudnnCreateTensorDescriptor", error)
                        && check_cudnn (cudnnSetTensor4dDescriptor (bd, format_of (key.nhwc), dnn_type (key.dtype),
                                                                    1, key.k, 1, 1), "cudnnSetTensor4dDescriptor",
                                        error)
                        && check_cudnn (cudnnAddTensor (handle, &one, bd, accel_buffer_get_data (bias), &one,
                                                        pl->y, py), "cudnnAddTensor", error);
          if (bd)
            (void) cudnnDestroyTensorDescriptor (bd);
          return ok;
        }
      return TRUE;
    case DIR_BACKWARD_DATA:
      return check_cudnn (cudnnConvolutionBackwardData (handle, &one, pl->w, pw, pl->y, py, pl->conv,
                                                        (cudnnConvolutionBwdDataAlgo_t) pl->algo, work, pl->workspace,
                                                        &zero, pl->x, px), "cudnnConvolutionBackwardData", error);
    default:
      return check_cudnn (cudnnConvolutionBackwardFilter (handle, &one, pl->x, px, pl->y, py, pl->conv,
                                                          (cudnnConvolutionBwdFilterAlgo_t) pl->algo, work,
                                                          pl->workspace, &zero, pl->w, pw),
                          "cudnnConvolutionBackwardFilter", error);
    }
}

static gboolean
conv2d_run (AccelOp *op, gpointer context, GError **error)
{
  AccelConv2d *self = ACCEL_CONV2D (op);
  return conv_run (context, DIR_FORWARD, &self->params, self->x, self->w, self->y, self->bias, error);
}

static gboolean
conv2d_backward_data_run (AccelOp *op, gpointer context, GError **error)
{
  AccelConv2dBackwardData *self = ACCEL_CONV2D_BACKWARD_DATA (op);
  return conv_run (context, DIR_BACKWARD_DATA, &self->params, self->dx, self->w, self->dy, NULL, error);
}

static gboolean
conv2d_backward_filter_run (AccelOp *op, gpointer context, GError **error)
{
  AccelConv2dBackwardFilter *self = ACCEL_CONV2D_BACKWARD_FILTER (op);
  return conv_run (context, DIR_BACKWARD_FILTER, &self->params, self->x, self->dw, self->dy, NULL, error);
}

/* pool2d: descriptors made per run (host-side, cheap); no workspace. */

static gboolean
pool2d_run (AccelOp *op, gpointer context, GError **error)
{
  AccelPool2d *self = ACCEL_POOL2D (op);
  gboolean nhwc = self->layout == ACCEL_CONV_LAYOUT_NHWC;
  const AccelShape *sx = accel_buffer_get_shape (self->x), *sy = accel_buffer_get_shape (self->y);
  cudnnDataType_t type = dnn_type (accel_buffer_get_dtype (self->x));
  cudnnPoolingMode_t mode = self->mode == ACCEL_POOL_MAX ? CUDNN_POOLING_MAX
                            : self->count_include_pad ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                                      : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  int n = (int) accel_shape_get_dim (sx, 0), c = (int) accel_shape_get_dim (sx, nhwc ? 3 : 1);
  const float one = 1.0f, zero = 0.0f;
  cudnnTensorDescriptor_t xd = NULL, yd = NULL;
  cudnnPoolingDescriptor_t pd = NULL;

  if (accel_buffer_get_n_elements (self->y) == 0)
    return TRUE;
  cudnnHandle_t handle = lane_dnn (context, error);
  gboolean ok = handle != NULL
    && check_cudnn (cudnnCreateTensorDescriptor (&xd), "cudnnCreateTensorDescriptor", error)
    && check_cudnn (cudnnCreateTensorDescriptor (&yd), "cudnnCreateTensorDescriptor", error)
    && check_cudnn (cudnnCreatePoolingDescriptor (&pd), "cudnnCreatePoolingDescriptor", error)
    && check_cudnn (cudnnSetTensor4dDescriptor (xd, format_of (nhwc), type, n, c,
                                                (int) accel_shape_get_dim (sx, nhwc ? 1 : 2),
                                                (int) accel_shape_get_dim (sx, nhwc ? 2 : 3)),
                    "cudnnSetTensor4dDescriptor", error)
    && check_cudnn (cudnnSetTensor4dDescriptor (yd, format_of (nhwc), type, n, c,
                                                (int) accel_shape_get_dim (sy, nhwc ? 1 : 2),
                                                (int) accel_shape_get_dim (sy, nhwc ? 2 : 3)),
                    "cudnnSetTensor4dDescriptor", error)
    && check_cudnn (cudnnSetPooling2dDescriptor (pd, mode, CUDNN_PROPAGATE_NAN, self->window_h, self->window_w,
                                                 self->pad_h, self->pad_w, self->stride_h, self->stride_w),
                    "cudnnSetPooling2dDescriptor", error)
    && check_cudnn (cudnnPoolingForward (handle, pd, &one, xd, accel_buffer_get_data (self->x), &zero, yd,
                                         accel_buffer_get_data (self->y)), "cudnnPoolingForward", error);
  if (xd)
    (void) cudnnDestroyTensorDescriptor (xd);
  if (yd)
    (void) cudnnDestroyTensorDescriptor (yd);
  if (pd)
    (void) cudnnDestroyPoolingDescriptor (pd);
  return ok;
}

static const AccelKernelEntry kernels[] = {
  { "conv2d", { .run = conv2d_run } },
  { "conv2d-backward-data", { .run = conv2d_backward_data_run } },
  { "conv2d-backward-filter", { .run = conv2d_backward_filter_run } },
  { "pool2d", { .run = pool2d_run } },
};

ACCEL_PLUGIN_DEFINE_KERNELS (cudnn,
                             "cuDNN kernels on the cuda backend: conv2d and its backward-data and backward-filter ops, "
                             "pool2d (NCHW, NHWC; f32, f16, bf16)",
                             ACCEL_CUDA_BACKEND_NAME, KERNEL_RANK, kernels, ACCEL_VERSION, "LGPL-2.1-or-later")
