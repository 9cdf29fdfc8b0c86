/* accel-cpu-collective.c: the collectives among CPU devices, the oracle
 * that NCCL is tested against.
 *
 * Each part runs on its rank's device thread. It hands its input to
 * accel_collective_gather(), which returns every rank's input (in this
 * process's memory, or received from other processes through the
 * rendezvous), computes this rank's output into scratch memory, releases
 * the gathered inputs (waiting until every part of this process has read
 * them), and only then writes its output, which may be another part's
 * input or its own (the in-place forms).
 *
 * Reductions go in rank order. Floating types are reduced in binary64 and
 * rounded once, so that the oracle is the exact reduction correctly
 * rounded; integers wrap as two's complement, and avg is the wrapped sum
 * divided by the rank count, truncated (NCCL's definitions).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include "accel-cpu-kernels.h"
#include "accel-half.h"

/* Ranks whose values one element's reduction keeps on the stack. */
#define CPU_COLLECTIVE_MAX_RANKS 64

static double
load_real (const guint8 *p, gsize i, AccelDType dtype)
{
  switch (dtype)
    {
    case ACCEL_DTYPE_F16: return accel_f16_to_f32 (((const guint16 *) p)[i]);
    case ACCEL_DTYPE_BF16: return accel_bf16_to_f32 (((const guint16 *) p)[i]);
    case ACCEL_DTYPE_F32: case ACCEL_DTYPE_C64: return ((const float *) p)[i];
    case ACCEL_DTYPE_F64: case ACCEL_DTYPE_C128: return ((const double *) p)[i];
    case ACCEL_DTYPE_FP8_E4M3: return accel_fp8_e4m3_to_f32 (p[i]);
    case ACCEL_DTYPE_FP8_E5M2: return accel_fp8_e5m2_to_f32 (p[i]);
    default: g_assert_not_reached ();
    }
}

static void
store_real (guint8 *p, gsize i, AccelDType dtype, double v)
{
  switch (dtype)
    {
    case ACCEL_DTYPE_F16: ((guint16 *) p)[i] = accel_f16_from_f64 (v); break;
    case ACCEL_DTYPE_BF16: ((guint16 *) p)[i] = accel_bf16_from_f64 (v); break;
    case ACCEL_DTYPE_F32: case ACCEL_DTYPE_C64: ((float *) p)[i] = (float) v; break;
    case ACCEL_DTYPE_F64: case ACCEL_DTYPE_C128: ((double *) p)[i] = v; break;
    case ACCEL_DTYPE_FP8_E4M3: p[i] = accel_fp8_e4m3_from_f64 (v); break;
    case ACCEL_DTYPE_FP8_E5M2: p[i] = accel_fp8_e5m2_from_f64 (v); break;
    default: g_assert_not_reached ();
    }
}

/* Integers as unsigned bit patterns of 64 bits, sign-extended for the
 * signed types, so that sums and products wrap as they would in the
 * element type once truncated. */
static guint64
load_int (const guint8 *p, gsize i, AccelDType dtype)
{
  switch (dtype)
    {
    case ACCEL_DTYPE_I8: return (guint64) (gint64) ((const gint8 *) p)[i];
    case ACCEL_DTYPE_U8: return p[i];
    case ACCEL_DTYPE_I32: return (guint64) (gint64) ((const gint32 *) p)[i];
    case ACCEL_DTYPE_U32: return ((const guint32 *) p)[i];
    case ACCEL_DTYPE_I64: return (guint64) ((const gint64 *) p)[i];
    default: g_assert_not_reached ();
    }
}

static void
store_int (guint8 *p, gsize i, AccelDType dtype, guint64 v)
{
  switch (dtype)
    {
    case ACCEL_DTYPE_I8: case ACCEL_DTYPE_U8: p[i] = (guint8) v; break;
    case ACCEL_DTYPE_I32: case ACCEL_DTYPE_U32: ((guint32 *) p)[i] = (guint32) v; break;
    case ACCEL_DTYPE_I64: ((guint64 *) p)[i] = v; break;
    default: g_assert_not_reached ();
    }
}

/* The value of the truncated bit pattern, signed where the type is. */
static gint64
as_signed (guint64 v, AccelDType dtype)
{
  switch (dtype)
    {
    case ACCEL_DTYPE_I8: return (gint8) (guint8) v;
    case ACCEL_DTYPE_I32: return (gint32) (guint32) v;
    default: return (gint64) v;
    }
}

static guint64
truncated (guint64 v, AccelDType dtype)
{
  switch (dtype)
    {
    case ACCEL_DTYPE_I8: case ACCEL_DTYPE_U8: return v & 0xff;
    case ACCEL_DTYPE_I32: case ACCEL_DTYPE_U32: return v & 0xffffffffu;
    default: return v;
    }
}

static gboolean
is_signed (AccelDType dtype)
{
  return dtype == ACCEL_DTYPE_I8 || dtype == ACCEL_DTYPE_I32 || dtype == ACCEL_DTYPE_I64;
}

/* The reduction of @n_ranks values @v[0..] of one element, in rank order,
 * in binary64 (floating types: the oracle rounds once, at the store). */
static inline double
reduce_reals (const double *v, guint n_ranks, AccelReduction reduction)
{
  double acc = v[0];
  for (guint r = 1; r < n_ranks; r++)
    switch (reduction)
      {
      case ACCEL_REDUCTION_SUM: case ACCEL_REDUCTION_AVG: acc += v[r]; break;
      case ACCEL_REDUCTION_PROD: acc *= v[r]; break;
      case ACCEL_REDUCTION_MIN: acc = v[r] < acc ? v[r] : acc; break;
      case ACCEL_REDUCTION_MAX: acc = v[r] > acc ? v[r] : acc; break;
      }
  return reduction == ACCEL_REDUCTION_AVG ? acc / n_ranks : acc;
}

/* Floating types stored natively (f32, f64 and their complex pairs): no
 * conversion call per element. */
#define REDUCE_NATIVE(T)                                                        \
  G_STMT_START {                                                                \
    double v[CPU_COLLECTIVE_MAX_RANKS];                                         \
    for (gsize i = 0; i < n; i++)                                               \
      {                                                                         \
        for (guint r = 0; r < n_ranks; r++)                                     \
          v[r] = ((const T *) in[r])[first + i];                                \
        ((T *) out)[i] = (T) reduce_reals (v, n_ranks, reduction);              \
      }                                                                         \
  } G_STMT_END

/* out[i] = reduction over ranks of in[r][offset + i], i < count. */
static void
reduce_into (guint8 *out, const guint8 *const *in, guint n_ranks, gsize offset, gsize count, AccelDType dtype,
             AccelReduction reduction)
{
  if (accel_dtype_is_integer (dtype))
    {
      for (gsize i = 0; i < count; i++)
        {
          guint64 acc = load_int (in[0], offset + i, dtype);
          for (guint r = 1; r < n_ranks; r++)
            {
              guint64 v = load_int (in[r], offset + i, dtype);
              gboolean less = is_signed (dtype) ? as_signed (v, dtype) < as_signed (acc, dtype) : v < acc;
              switch (reduction)
                {
                case ACCEL_REDUCTION_SUM: case ACCEL_REDUCTION_AVG: acc += v; break;
                case ACCEL_REDUCTION_PROD: acc *= v; break;
                case ACCEL_REDUCTION_MIN: acc = less ? v : acc; break;
                case ACCEL_REDUCTION_MAX: acc = less ? acc : v; break;
                }
            }
          if (reduction == ACCEL_REDUCTION_AVG)
            acc = is_signed (dtype) ? (guint64) (as_signed (acc, dtype) / (gint64) n_ranks)
                                    : truncated (acc, dtype) / n_ranks;
          store_int (out, i, dtype, acc);
        }
      return;
    }

  /* Complex types reduce (by sum or avg) as pairs of reals. */
  gsize k = accel_dtype_is_complex (dtype) ? 2 : 1;
  gsize first = offset * k, n = count * k;
  if (n_ranks <= CPU_COLLECTIVE_MAX_RANKS && (dtype == ACCEL_DTYPE_F32 || dtype == ACCEL_DTYPE_C64))
    REDUCE_NATIVE (float);
  else if (n_ranks <= CPU_COLLECTIVE_MAX_RANKS && (dtype == ACCEL_DTYPE_F64 || dtype == ACCEL_DTYPE_C128))
    REDUCE_NATIVE (double);
  else
    for (gsize i = 0; i < n; i++)
      {
        double acc = load_real (in[0], first + i, dtype);
        for (guint r = 1; r < n_ranks; r++)
          {
            double v = load_real (in[r], first + i, dtype);
            switch (reduction)
              {
              case ACCEL_REDUCTION_SUM: case ACCEL_REDUCTION_AVG: acc += v; break;
              case ACCEL_REDUCTION_PROD: acc *= v; break;
              case ACCEL_REDUCTION_MIN: acc = v < acc ? v : acc; break;
              case ACCEL_REDUCTION_MAX: acc = v > acc ? v : acc; break;
              }
          }
        if (reduction == ACCEL_REDUCTION_AVG)
          acc /= n_ranks;
        store_real (out, i, dtype, acc);
      }
}

/* Every rank's input, each checked to be @want bytes. */
static const guint8 **
inputs_of (AccelCollective *c, AccelCollectiveData *data, gsize want, GError **error)
{
  const guint8 **in = g_new0 (const guint8 *, c->n_ranks);
  for (int r = 0; r < c->n_ranks; r++)
    {
      gsize size = 0;
      in[r] = accel_collective_data_get (data, r, &size);
      if (size == want)
        continue;
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH,
                   "%s on rank %d: rank %d gave %" G_GSIZE_FORMAT " bytes, this rank %" G_GSIZE_FORMAT,
                   accel_op_get_type_name (ACCEL_OP (c)), c->rank, r, size, want);
      g_free (in);
      return NULL;
    }
  return in;
}

/* Gathers @src (every rank gives as many bytes), runs @compute on every
 * rank's input into a scratch buffer of @out_size bytes, releases the
 * inputs, then writes the scratch into @dst (when there is one). */
typedef void (*ComputeFunc) (AccelCollective *c, const guint8 *const *in, guint8 *out);

static gboolean
run_gathered (AccelCollective *c, AccelBuffer *src, AccelBuffer *dst, gsize out_size, ComputeFunc compute,
              GError **error)
{
  gsize src_size = accel_buffer_get_size (src);
  AccelCollectiveData *data = accel_collective_gather (c, accel_buffer_get_data (src), src_size, error);
  if (data == NULL)
    return FALSE;

  g_autofree const guint8 **in = inputs_of (c, data, src_size, error);
  g_autofree guint8 *out = NULL;
  if (in && dst)
    {
      out = g_malloc (MAX (out_size, 1));
      compute (c, in, out);
    }
  accel_collective_data_release (data);
  if (in == NULL)
    return FALSE;
  if (dst && out_size)
    memcpy (accel_buffer_get_data (dst), out, out_size);
  return TRUE;
}

static void
compute_all_reduce (AccelCollective *c, const guint8 *const *in, guint8 *out)
{
  AccelAllReduce *self = ACCEL_ALL_REDUCE (c);
  reduce_into (out, in, c->n_ranks, 0, accel_buffer_get_n_elements (self->src), accel_buffer_get_dtype (self->src),
               self->reduction);
}

gboolean
accel_cpu_all_reduce_run (AccelOp *op, gpointer context, GError **error)
{
  AccelAllReduce *self = ACCEL_ALL_REDUCE (op);
  return run_gathered (ACCEL_COLLECTIVE (op), self->src, self->dst, accel_buffer_get_size (self->dst),
                       compute_all_reduce, error);
}

static void
compute_all_gather (AccelCollective *c, const guint8 *const *in, guint8 *out)
{
  gsize block = accel_buffer_get_size (ACCEL_ALL_GATHER (c)->src);
  for (int r = 0; r < c->n_ranks; r++)
    memcpy (out + r * block, in[r], block);
}

gboolean
accel_cpu_all_gather_run (AccelOp *op, gpointer context, GError **error)
{
  AccelAllGather *self = ACCEL_ALL_GATHER (op);
  return run_gathered (ACCEL_COLLECTIVE (op), self->src, self->dst, accel_buffer_get_size (self->dst),
                       compute_all_gather, error);
}

static void
compute_reduce_scatter (AccelCollective *c, const guint8 *const *in, guint8 *out)
{
  AccelReduceScatter *self = ACCEL_REDUCE_SCATTER (c);
  gsize count = accel_buffer_get_n_elements (self->dst);
  reduce_into (out, in, c->n_ranks, count * c->rank, count, accel_buffer_get_dtype (self->dst), self->reduction);
}

gboolean
accel_cpu_reduce_scatter_run (AccelOp *op, gpointer context, GError **error)
{
  AccelReduceScatter *self = ACCEL_REDUCE_SCATTER (op);
  return run_gathered (ACCEL_COLLECTIVE (op), self->src, self->dst, accel_buffer_get_size (self->dst),
                       compute_reduce_scatter, error);
}

gboolean
accel_cpu_broadcast_run (AccelOp *op, gpointer context, GError **error)
{
  AccelBroadcast *self = ACCEL_BROADCAST (op);
  AccelCollective *c = ACCEL_COLLECTIVE (op);
  AccelBuffer *src = c->rank == self->root ? self->src : NULL;
  gsize size = accel_buffer_get_size (self->dst);

  /* Only the root gives; check that what it gave fits every rank's dst. */
  AccelCollectiveData *data = accel_collective_gather (c, src ? accel_buffer_get_data (src) : NULL,
                                                       src ? size : 0, error);
  if (data == NULL)
    return FALSE;
  gsize got = 0;
  const guint8 *root = accel_collective_data_get (data, self->root, &got);
  g_autofree guint8 *out = NULL;
  if (got == size)
    {
      out = g_malloc (MAX (size, 1));
      memcpy (out, root, size);
    }
  accel_collective_data_release (data);
  if (got != size)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH,
                   "broadcast on rank %d: the root (rank %d) sent %" G_GSIZE_FORMAT " bytes, “dst” holds %"
                   G_GSIZE_FORMAT, c->rank, self->root, got, size);
      return FALSE;
    }
  memcpy (accel_buffer_get_data (self->dst), out, size);
  return TRUE;
}

static void
compute_root_reduce (AccelCollective *c, const guint8 *const *in, guint8 *out)
{
  AccelRootReduce *self = ACCEL_ROOT_REDUCE (c);
  reduce_into (out, in, c->n_ranks, 0, accel_buffer_get_n_elements (self->src), accel_buffer_get_dtype (self->src),
               self->reduction);
}

gboolean
accel_cpu_root_reduce_run (AccelOp *op, gpointer context, GError **error)
{
  AccelRootReduce *self = ACCEL_ROOT_REDUCE (op);
  AccelCollective *c = ACCEL_COLLECTIVE (op);
  AccelBuffer *dst = c->rank == self->root ? self->dst : NULL;
  return run_gathered (c, self->src, dst, dst ? accel_buffer_get_size (dst) : 0, compute_root_reduce, error);
}

static void
compute_all_to_all (AccelCollective *c, const guint8 *const *in, guint8 *out)
{
  gsize block = accel_buffer_get_size (ACCEL_ALL_TO_ALL (c)->src) / c->n_ranks;
  for (int r = 0; r < c->n_ranks; r++)
    memcpy (out + r * block, in[r] + c->rank * block, block);
}

gboolean
accel_cpu_all_to_all_run (AccelOp *op, gpointer context, GError **error)
{
  AccelAllToAll *self = ACCEL_ALL_TO_ALL (op);
  return run_gathered (ACCEL_COLLECTIVE (op), self->src, self->dst, accel_buffer_get_size (self->dst),
                       compute_all_to_all, error);
}

gboolean
accel_cpu_send_recv_run (AccelOp *op, gpointer context, GError **error)
{
  AccelSendRecv *self = ACCEL_SEND_RECV (op);
  return accel_collective_exchange (ACCEL_COLLECTIVE (op),
                                    self->src ? accel_buffer_get_data (self->src) : NULL,
                                    self->src ? accel_buffer_get_size (self->src) : 0,
                                    self->dst ? accel_buffer_get_data (self->dst) : NULL,
                                    self->dst ? accel_buffer_get_size (self->dst) : 0, error);
}

gboolean
accel_cpu_collective_abort_run (AccelOp *op, gpointer context, GError **error)
{
  AccelCollectiveAbort *self = ACCEL_COLLECTIVE_ABORT (op);
  g_autoptr(GError) reason = g_error_new (ACCEL_ERROR, ACCEL_ERROR_FAILED, "%s",
                                          self->reason ? self->reason : "collective-abort");
  accel_collective_abort_key (self->comm_key, reason);
  return TRUE;
}
