/* accel-collective.c: the base of the collective op types, and the checks
 * they share.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-private.h"
#include "accel-collective-private.h"
#include "accel-enum-types.h"

G_DEFINE_ABSTRACT_TYPE (AccelCollective, accel_collective, ACCEL_TYPE_OP)

/* The largest communicator: far beyond any machine, small enough that rank
 * arithmetic never overflows an int. */
#define MAX_RANKS (1 << 20)

static const AccelOpParam collective_params[] = {
  ACCEL_OP_INT (AccelCollective, rank, "rank", "The rank this part runs as. Set by the communicator.",
                -1, MAX_RANKS - 1, -1),
  ACCEL_OP_INT (AccelCollective, n_ranks, "n-ranks", "How many ranks the communicator has. Set by the communicator.",
                0, MAX_RANKS, 0),
  ACCEL_OP_STRING (AccelCollective, comm_key, "comm-key",
                   "Names the communicator's current incarnation. Set by the communicator."),
  ACCEL_OP_STRING (AccelCollective, comm_id, "comm-id",
                   "The backend's bootstrap bytes in hex (an NCCL unique id), or unset. Set by the communicator."),
  ACCEL_OP_STRING (AccelCollective, tag, "tag",
                   "Names this collective within its incarnation. Set by the communicator."),
  ACCEL_OP_UINT (AccelCollective, timeout_ms, "timeout-ms",
                 "How long a rank waits for the others, in milliseconds (0: for ever). Set by the communicator from "
                 "its `timeout-ms`.",
                 0, G_MAXUINT, 0),
};

static void
accel_collective_class_init (AccelCollectiveClass *klass)
{
  accel_op_class_install_params (ACCEL_OP_CLASS (klass), collective_params, G_N_ELEMENTS (collective_params));
  klass->needs_all_ranks = TRUE;
}

static void
accel_collective_init (AccelCollective *self)
{
}

/**
 * accel_collective_is_bound:
 * @self: a collective op
 *
 * Whether a communicator has bound @self to a rank, as it does to the
 * copies of the ops it is given.
 *
 * Returns: %TRUE if @self carries a rank, a rank count and an incarnation
 */
gboolean
accel_collective_is_bound (AccelCollective *self)
{
  g_return_val_if_fail (ACCEL_IS_COLLECTIVE (self), FALSE);
  return self->comm_key != NULL && self->n_ranks >= 1 && self->rank >= 0 && self->rank < self->n_ranks;
}

gboolean
accel_collective_check_binding_ (AccelCollective *self, GError **error)
{
  if (self->comm_key == NULL || self->n_ranks < 1)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s: collectives are submitted to an AccelCommunicator, one op per rank "
                   "(accel_communicator_submit()), not to a device; property “comm-key” is not set",
                   accel_op_get_type_name (ACCEL_OP (self)));
      return FALSE;
    }
  if (self->rank < 0 || self->rank >= self->n_ranks)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s: property “rank” is %d; the communicator has ranks 0 to %d",
                   accel_op_get_type_name (ACCEL_OP (self)), self->rank, self->n_ranks - 1);
      return FALSE;
    }
  return TRUE;
}

gboolean
accel_collective_check_rank_value_ (AccelCollective *self, const char *property, int value,
                                    gboolean allow_none, GError **error)
{
  if (allow_none && value == -1)
    return TRUE;
  if (value >= 0 && value < self->n_ranks)
    return TRUE;
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
               "%s: property “%s” is %d; the communicator has ranks 0 to %d%s",
               accel_op_get_type_name (ACCEL_OP (self)), property, value, self->n_ranks - 1,
               allow_none ? " (or -1 for none)" : "");
  return FALSE;
}

gboolean
accel_collective_require_ (AccelCollective *self, const char *property, AccelBuffer *buffer, GError **error)
{
  if (buffer != NULL)
    return TRUE;
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "%s: buffer property “%s” is not set",
               accel_op_get_type_name (ACCEL_OP (self)), property);
  return FALSE;
}

gboolean
accel_collective_check_count_ (AccelCollective *self, const char *property, AccelBuffer *buffer,
                               gint64 count, const char *why, GError **error)
{
  const char *op = accel_op_get_type_name (ACCEL_OP (self));

  if (!accel_collective_require_ (self, property, buffer, error)
      || !accel_op_check_contiguous (ACCEL_OP (self), property, error))
    return FALSE;
  if (accel_buffer_get_n_elements (buffer) == count)
    return TRUE;
  g_autofree char *shape = accel_op_describe_shape_ (buffer);
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH,
               "%s: property “%s” has shape %s (%" G_GINT64_FORMAT " elements); it must hold %"
               G_GINT64_FORMAT " elements (%s)",
               op, property, shape, accel_buffer_get_n_elements (buffer), count, why);
  return FALSE;
}

gboolean
accel_collective_check_reduction_ (AccelCollective *self, const char *property, AccelDType dtype,
                                   AccelReduction reduction, GError **error)
{
  if (!accel_dtype_is_complex (dtype)
      || reduction == ACCEL_REDUCTION_SUM || reduction == ACCEL_REDUCTION_AVG)
    return TRUE;
  g_autoptr(GEnumClass) klass = g_type_class_ref (ACCEL_TYPE_REDUCTION);
  GEnumValue *v = g_enum_get_value (klass, reduction);
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED,
               "%s: property “%s” is %s, which has no %s reduction (complex types reduce by sum or avg only)",
               accel_op_get_type_name (ACCEL_OP (self)), property, accel_dtype_get_name (dtype),
               v ? v->value_nick : "such");
  return FALSE;
}

gboolean
accel_collective_check_same_ (AccelCollective *self, AccelCollective *first, const char *name,
                              AccelBuffer *a, AccelBuffer *b, GError **error)
{
  const char *op = accel_op_get_type_name (ACCEL_OP (self));

  if ((a == NULL) != (b == NULL))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s: property “%s” is %s on rank %d but %s on rank %d",
                   op, name, a ? "set" : "unset", self->rank, b ? "set" : "unset", first->rank);
      return FALSE;
    }
  if (a == NULL)
    return TRUE;
  if (accel_buffer_get_dtype (a) != accel_buffer_get_dtype (b))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED,
                   "%s: property “%s” is %s on rank %d but %s on rank %d; every rank must use one dtype",
                   op, name, accel_dtype_get_name (accel_buffer_get_dtype (a)), self->rank,
                   accel_dtype_get_name (accel_buffer_get_dtype (b)), first->rank);
      return FALSE;
    }
  if (accel_buffer_get_n_elements (a) != accel_buffer_get_n_elements (b))
    {
      g_autofree char *sa = accel_op_describe_shape_ (a);
      g_autofree char *sb = accel_op_describe_shape_ (b);
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH,
                   "%s: property “%s” has shape %s on rank %d but %s on rank %d; "
                   "every rank must give as many elements",
                   op, name, sa, self->rank, sb, first->rank);
      return FALSE;
    }
  return TRUE;
}

gboolean
accel_collective_check_same_int_ (AccelCollective *self, AccelCollective *first, const char *name,
                                  int a, int b, GError **error)
{
  if (a == b)
    return TRUE;
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
               "%s: property “%s” is %d on rank %d but %d on rank %d; every rank must give the same",
               accel_op_get_type_name (ACCEL_OP (self)), name, a, self->rank, b, first->rank);
  return FALSE;
}

gboolean
accel_collective_check_alias_ (AccelCollective *self, const char *name_src, AccelBuffer *src,
                               const char *name_dst, AccelBuffer *dst, gint64 in_place_offset,
                               GError **error)
{
  if (src == NULL || dst == NULL || !accel_op_buffers_alias_ (src, dst))
    return TRUE;

  gsize s0 = accel_buffer_get_offset (src), s1 = s0 + accel_buffer_get_size (src);
  gsize d0 = accel_buffer_get_offset (dst), d1 = d0 + accel_buffer_get_size (dst);
  if (in_place_offset == -1 && s0 == d0 && s1 == d1)
    return TRUE;
  if (in_place_offset >= 0)
    {
      /* The in-place forms: the smaller buffer is this rank's block of the
       * larger one. */
      gsize esize = accel_dtype_get_size (accel_buffer_get_dtype (dst));
      gboolean src_inside = accel_buffer_get_size (src) <= accel_buffer_get_size (dst);
      gsize big0 = src_inside ? d0 : s0;
      gsize small0 = src_inside ? s0 : d0;
      gsize small1 = src_inside ? s1 : d1;
      if (small0 == big0 + (gsize) in_place_offset * esize && small1 <= (src_inside ? d1 : s1))
        return TRUE;
    }
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
               "%s: “%s” overlaps “%s”%s", accel_op_get_type_name (ACCEL_OP (self)), name_src, name_dst,
               in_place_offset == -1 ? "; they must be the very same range (in place) or apart"
               : "; the in-place form needs the smaller one to be this rank's block of the larger one");
  return FALSE;
}
