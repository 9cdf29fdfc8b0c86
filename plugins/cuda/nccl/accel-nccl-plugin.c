/* accel-nccl-plugin.c: the collectives on CUDA devices, through NCCL.
 *
 * One NCCL rank per CUDA device, in the process that owns the device: the
 * application's for isolation=none, the device host's otherwise. Each
 * collective's part is an op on its rank's device like any other: it runs
 * on a lane, after the last writers of its buffers, and the device records
 * its event after NCCL's kernel. The kernels here only enqueue; the rank
 * is made from the incarnation's bootstrap bytes by the first part that
 * runs (accel-nccl-comm.c). A part that sends and receives runs both in
 * one NCCL group, so that exchanges and ring shifts cannot deadlock.
 *
 * `collective-bootstrap` makes the incarnation's unique id
 * (ncclGetUniqueId, whose bootstrap root then serves from this process)
 * and writes it into the op's buffer; `collective-abort` aborts this
 * device's rank of an incarnation.
 *
 * Data movement (all-gather, broadcast, all-to-all, send and receive)
 * moves bytes, so every dtype goes; reductions use NCCL's types (complex
 * types as pairs of reals, for sum and avg), fp8 on compute capability 9.0
 * and later only.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-config.h"
#include "accel-nccl-comm.h"

#define KERNEL_RANK 100

static gboolean
nccl_type (AccelDType dtype, ncclDataType_t *type, gsize *per_element)
{
  *per_element = 1;
  switch (dtype)
    {
    case ACCEL_DTYPE_F16: *type = ncclFloat16; return TRUE;
    case ACCEL_DTYPE_BF16: *type = ncclBfloat16; return TRUE;
    case ACCEL_DTYPE_F32: *type = ncclFloat32; return TRUE;
    case ACCEL_DTYPE_F64: *type = ncclFloat64; return TRUE;
    case ACCEL_DTYPE_C64: *type = ncclFloat32, *per_element = 2; return TRUE;
    case ACCEL_DTYPE_C128: *type = ncclFloat64, *per_element = 2; return TRUE;
    case ACCEL_DTYPE_I8: *type = ncclInt8; return TRUE;
    case ACCEL_DTYPE_U8: *type = ncclUint8; return TRUE;
    case ACCEL_DTYPE_I32: *type = ncclInt32; return TRUE;
    case ACCEL_DTYPE_U32: *type = ncclUint32; return TRUE;
    case ACCEL_DTYPE_I64: *type = ncclInt64; return TRUE;
    case ACCEL_DTYPE_FP8_E4M3: *type = ncclFloat8e4m3; return TRUE;
    case ACCEL_DTYPE_FP8_E5M2: *type = ncclFloat8e5m2; return TRUE;
    default: return FALSE;
    }
}

/* NCCL's reduction for @reduction on @op's communicator. With one rank an
 * average is each value itself, as a sum is: NCCL turns an average into a
 * premultiplied sum, which its one-rank path (ncclLaunchOneRank, 2.28 to
 * 2.30) has no fp8 kernel for on the host side (its fp8 cases sit under
 * __CUDA_ARCH__ >= 900), so it answered ncclInvalidArgument, with no
 * warning, to an fp8 average on one rank. A one-rank sum is a copy, for
 * every type. */
static ncclRedOp_t
nccl_op (AccelOp *op, AccelReduction reduction)
{
  if (reduction == ACCEL_REDUCTION_AVG && ACCEL_COLLECTIVE (op)->n_ranks == 1)
    return ncclSum;
  switch (reduction)
    {
    case ACCEL_REDUCTION_PROD: return ncclProd;
    case ACCEL_REDUCTION_MIN: return ncclMin;
    case ACCEL_REDUCTION_MAX: return ncclMax;
    case ACCEL_REDUCTION_AVG: return ncclAvg;
    default: return ncclSum;
    }
}

/* Reductions need one of NCCL's types, and of fp8 Hopper or later (NCCL's
 * rule). Every reducing collective names its input `src`. */
static gboolean
reduction_supports (AccelOp *op, AccelDevice *device, GError **error)
{
  AccelDType dtype = accel_buffer_get_dtype (accel_op_peek_buffer (op, "src"));
  ncclDataType_t type;
  gsize per_element;
  int major = 0, minor = 0;
  if (!nccl_type (dtype, &type, &per_element))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED, "%s: NCCL does not reduce %s",
                   accel_op_get_type_name (op), accel_dtype_get_name (dtype));
      return FALSE;
    }
  if (dtype != ACCEL_DTYPE_FP8_E4M3 && dtype != ACCEL_DTYPE_FP8_E5M2)
    return TRUE;
  if (accel_cuda_get_compute_capability (device, &major, &minor) && major >= 9)
    return TRUE;
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED,
               "%s: NCCL reduces %s on compute capability 9.0 and later; “%s” is %d.%d",
               accel_op_get_type_name (op), accel_dtype_get_name (dtype), accel_device_get_name (device), major,
               minor);
  return FALSE;
}

/* The NCCL type and count of a reduction over @buffer's elements. */
static size_t
reduce_count (AccelBuffer *buffer, ncclDataType_t *type)
{
  gsize k;
  nccl_type (accel_buffer_get_dtype (buffer), type, &k);
  return (size_t) accel_buffer_get_n_elements (buffer) * k;
}

/* Appends to @error's message what @op gave NCCL: each buffer's dtype and
 * elements, the NCCL type, count and reduction of a reduction, and the
 * ranks, so that a refused call says which arguments NCCL refused. */
static void
describe_arguments (AccelOp *op, GError **error)
{
  if (error == NULL || *error == NULL)
    return;
  AccelCollective *part = ACCEL_COLLECTIVE (op);
  GString *s = g_string_new ((*error)->message);
  g_string_append_printf (s, " [%s, rank %d of %d", accel_op_get_type_name (op), part->rank, part->n_ranks);
  for (guint i = 0; i < accel_op_get_n_buffer_slots (op); i++)
    {
      const char *name = NULL;
      AccelBuffer *b = accel_op_peek_buffer_slot (op, i, NULL, &name);
      if (b)
        g_string_append_printf (s, ", %s %s × %" G_GINT64_FORMAT " at %p", name ? name : "extra",
                                accel_dtype_get_name (accel_buffer_get_dtype (b)), accel_buffer_get_n_elements (b),
                                accel_buffer_get_data (b));
    }
  GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (op), "reduction");
  if (pspec && G_PARAM_SPEC_VALUE_TYPE (pspec) == ACCEL_TYPE_REDUCTION)
    {
      AccelReduction reduction;
      ncclDataType_t type;
      g_object_get (op, "reduction", &reduction, NULL);
      AccelBuffer *counted = ACCEL_IS_REDUCE_SCATTER (op) ? accel_op_peek_buffer (op, "dst")
                                                          : accel_op_peek_buffer (op, "src");
      size_t count = reduce_count (counted, &type);
      GEnumClass *klass = g_type_class_ref (ACCEL_TYPE_REDUCTION);
      GEnumValue *v = g_enum_get_value (klass, reduction);
      g_string_append_printf (s, ", reduction %s as ncclRedOp %d, count %zu of ncclDataType %d",
                              v ? v->value_nick : "?", (int) nccl_op (op, reduction), count, (int) type);
      g_type_class_unref (klass);
    }
  g_string_append_c (s, ']');
  g_free ((*error)->message);
  (*error)->message = g_string_free (s, FALSE);
}

/* One part: its rank (made on first use), its NCCL calls with the rank's
 * lock held, and the check of its completion. */
typedef ncclResult_t (*EnqueueFunc) (AccelOp *op, ncclComm_t comm, cudaStream_t stream);

static gboolean
run_part (AccelOp *op, AccelCudaLane *lane, EnqueueFunc enqueue, const char *what, GError **error)
{
  AccelCollective *part = ACCEL_COLLECTIVE (op);
  AccelNcclRank *rank = accel_nccl_rank_get (part, accel_cuda_lane_get_ordinal (lane), error);
  if (rank == NULL)
    return FALSE;

  /* The check goes first: it must be asked for before the work it judges. */
  if (accel_cuda_lane_check_after (lane, 1, accel_nccl_rank_check, accel_nccl_rank_ref (rank),
                                   (GDestroyNotify) accel_nccl_rank_unref, error) == NULL)
    {
      accel_nccl_rank_unref (rank);
      return FALSE;
    }
  ncclComm_t comm = accel_nccl_rank_lock (rank, error);
  gboolean ok = comm != NULL
                && accel_nccl_rank_finish (rank, enqueue (op, comm, accel_cuda_lane_get_stream (lane)), what, part,
                                           error);
  if (ok)
    accel_nccl_rank_launched (rank);
  else
    describe_arguments (op, error);
  accel_nccl_rank_unref (rank);
  return ok;
}

static ncclResult_t
enqueue_all_reduce (AccelOp *op, ncclComm_t comm, cudaStream_t stream)
{
  AccelAllReduce *self = ACCEL_ALL_REDUCE (op);
  ncclDataType_t type;
  size_t count = reduce_count (self->src, &type);
  return ncclAllReduce (accel_buffer_get_data (self->src), accel_buffer_get_data (self->dst), count, type,
                        nccl_op (op, self->reduction), comm, stream);
}

static ncclResult_t
enqueue_all_gather (AccelOp *op, ncclComm_t comm, cudaStream_t stream)
{
  AccelAllGather *self = ACCEL_ALL_GATHER (op);
  return ncclAllGather (accel_buffer_get_data (self->src), accel_buffer_get_data (self->dst),
                        accel_buffer_get_size (self->src), ncclUint8, comm, stream);
}

static ncclResult_t
enqueue_reduce_scatter (AccelOp *op, ncclComm_t comm, cudaStream_t stream)
{
  AccelReduceScatter *self = ACCEL_REDUCE_SCATTER (op);
  ncclDataType_t type;
  size_t count = reduce_count (self->dst, &type);
  return ncclReduceScatter (accel_buffer_get_data (self->src), accel_buffer_get_data (self->dst), count, type,
                            nccl_op (op, self->reduction), comm, stream);
}

static ncclResult_t
enqueue_broadcast (AccelOp *op, ncclComm_t comm, cudaStream_t stream)
{
  AccelBroadcast *self = ACCEL_BROADCAST (op);
  gboolean root = ACCEL_COLLECTIVE (op)->rank == self->root;
  void *dst = accel_buffer_get_data (self->dst);
  return ncclBroadcast (root ? accel_buffer_get_data (self->src) : dst, dst, accel_buffer_get_size (self->dst),
                        ncclUint8, self->root, comm, stream);
}

static ncclResult_t
enqueue_root_reduce (AccelOp *op, ncclComm_t comm, cudaStream_t stream)
{
  AccelRootReduce *self = ACCEL_ROOT_REDUCE (op);
  ncclDataType_t type;
  size_t count = reduce_count (self->src, &type);
  void *src = accel_buffer_get_data (self->src);
  /* recvbuff is written on the root only. */
  return ncclReduce (src, self->dst ? accel_buffer_get_data (self->dst) : src, count, type,
                     nccl_op (op, self->reduction), self->root, comm, stream);
}

static ncclResult_t
enqueue_all_to_all (AccelOp *op, ncclComm_t comm, cudaStream_t stream)
{
  AccelAllToAll *self = ACCEL_ALL_TO_ALL (op);
  return ncclAlltoAll (accel_buffer_get_data (self->src), accel_buffer_get_data (self->dst),
                       accel_buffer_get_size (self->src) / (gsize) ACCEL_COLLECTIVE (op)->n_ranks, ncclUint8, comm,
                       stream);
}

static ncclResult_t
enqueue_send_recv (AccelOp *op, ncclComm_t comm, cudaStream_t stream)
{
  AccelSendRecv *self = ACCEL_SEND_RECV (op);
  ncclResult_t status = ncclGroupStart ();
  if (status == ncclSuccess && self->src)
    status = ncclSend (accel_buffer_get_data (self->src), accel_buffer_get_size (self->src), ncclUint8,
                       self->send_peer, comm, stream);
  if (status == ncclSuccess && self->dst)
    status = ncclRecv (accel_buffer_get_data (self->dst), accel_buffer_get_size (self->dst), ncclUint8,
                       self->recv_peer, comm, stream);
  /* The group ends whatever happened inside it. */
  ncclResult_t end = ncclGroupEnd ();
  return status != ncclSuccess ? status : end;
}

#define RUN(name, what)                                                          \
  static gboolean                                                                \
  name##_run (AccelOp *op, gpointer context, GError **error)                     \
  {                                                                              \
    return run_part (op, context, enqueue_##name, what, error);                  \
  }

RUN (all_reduce, "ncclAllReduce")
RUN (all_gather, "ncclAllGather")
RUN (reduce_scatter, "ncclReduceScatter")
RUN (broadcast, "ncclBroadcast")
RUN (root_reduce, "ncclReduce")
RUN (all_to_all, "ncclAlltoAll")
RUN (send_recv, "ncclSend/ncclRecv")

static gboolean
bootstrap_run (AccelOp *op, gpointer context, GError **error)
{
  AccelCollectiveBootstrap *self = ACCEL_COLLECTIVE_BOOTSTRAP (op);
  ncclUniqueId id;

  G_STATIC_ASSERT (sizeof id.internal == ACCEL_COLLECTIVE_ID_SIZE);
  if (!accel_nccl_check (ncclGetUniqueId (&id), "ncclGetUniqueId", error))
    return FALSE;
  /* From pageable memory: the copy is staged before cudaMemcpyAsync returns. */
  return ACCEL_CUDA_CHECK (cudaMemcpyAsync (accel_buffer_get_data (self->id), id.internal, sizeof id.internal,
                                            cudaMemcpyHostToDevice, accel_cuda_lane_get_stream (context)),
                           error);
}

static gboolean
abort_run (AccelOp *op, gpointer context, GError **error)
{
  AccelCollectiveAbort *self = ACCEL_COLLECTIVE_ABORT (op);
  accel_nccl_abort (self->comm_key, accel_cuda_lane_get_ordinal (context), self->reason);
  return TRUE;
}

static const AccelKernelEntry kernels[] = {
  { "all-reduce", { .supports = reduction_supports, .run = all_reduce_run } },
  { "all-gather", { .run = all_gather_run } },
  { "reduce-scatter", { .supports = reduction_supports, .run = reduce_scatter_run } },
  { "broadcast", { .run = broadcast_run } },
  { "root-reduce", { .supports = reduction_supports, .run = root_reduce_run } },
  { "all-to-all", { .run = all_to_all_run } },
  { "send-recv", { .run = send_recv_run } },
  { "collective-bootstrap", { .run = bootstrap_run } },
  { "collective-abort", { .run = abort_run } },
};

ACCEL_PLUGIN_DEFINE_KERNELS (nccl,
                             "NCCL collectives on CUDA devices: one rank per GPU, in the process that owns it",
                             ACCEL_CUDA_BACKEND_NAME, KERNEL_RANK, kernels, ACCEL_VERSION, "LGPL-2.1-or-later")
