/* accel-communicator-submit.c: a collective, from the ops a user gives to
 * the one answer.
 *
 * Everything that can be checked is checked before any part is launched:
 * one op per rank of this process, one op type, every op valid once bound
 * to its rank, every buffer on its rank's device and of the device's
 * current generation, the ranks' ops consistent with each other (dtypes,
 * counts, root, reduction), a kernel for every part. Then, under the
 * build lock (so that collectives are numbered and posted in submission
 * order), the communicator makes sure of a live incarnation, binds the
 * parts to it, and hands them to the collectives' thread, which submits
 * them to the devices in rank order: every device sees every
 * communicator's collectives in one order, as NCCL needs. The answers come
 * back on that thread; the first failure aborts the incarnation (so that
 * no rank waits for a peer that will not come), and the last answer
 * completes the user's task.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include "accel-communicator-private.h"

typedef struct {
  AccelCommunicator *self;
  AccelCommInc *inc;
  GTask *task;
  GPtrArray *devices;        /* per part */
  GPtrArray *parts;          /* AccelOp, per part */
  GArray *ranks;             /* int, per part */
  gboolean p2p;
  guint remaining;           /* on the collectives' thread */
  GError *first_error;
} Collective;

static void
collective_free (Collective *c)
{
  g_clear_object (&c->self);
  _accel_comm_inc_unref (c->inc);
  g_clear_object (&c->task);
  g_clear_pointer (&c->devices, g_ptr_array_unref);
  g_clear_pointer (&c->parts, g_ptr_array_unref);
  g_clear_pointer (&c->ranks, g_array_unref);
  g_clear_error (&c->first_error);
  g_free (c);
}

/* A copy of @op with every property a user sets, for the communicator to
 * bind: the user's op stays as it was, and may be given again. */
static AccelOp *
copy_op (AccelOp *op)
{
  guint n = 0;
  g_autofree GParamSpec **specs = g_object_class_list_properties (G_OBJECT_GET_CLASS (op), &n);
  g_autofree const char **names = g_new (const char *, n);
  GValue *values = g_new0 (GValue, n);
  guint k = 0;

  for (guint i = 0; i < n; i++)
    {
      if ((specs[i]->flags & G_PARAM_READWRITE) != G_PARAM_READWRITE || (specs[i]->flags & G_PARAM_CONSTRUCT_ONLY)
          || specs[i]->owner_type == ACCEL_TYPE_COLLECTIVE)
        continue;
      names[k] = specs[i]->name;
      g_value_init (&values[k], specs[i]->value_type);
      g_object_get_property (G_OBJECT (op), specs[i]->name, &values[k]);
      k++;
    }
  AccelOp *copy = ACCEL_OP (g_object_new_with_properties (G_OBJECT_TYPE (op), k, names, values));
  for (guint i = 0; i < k; i++)
    g_value_unset (&values[i]);
  g_free (values);
  return copy;
}

static void
bind (AccelCommunicator *self, AccelOp *part, int rank, const char *key)
{
  AccelCollective *c = ACCEL_COLLECTIVE (part);
  c->rank = rank;
  c->n_ranks = (int) self->n_ranks;
  g_free (c->comm_key);
  c->comm_key = g_strdup (key);
}

static gboolean
check_buffers (AccelCommunicator *self, AccelOp *part, guint local, GError **error)
{
  AccelDevice *device = self->devices->pdata[local];
  guint n = accel_op_get_n_buffer_slots (part);
  int rank = (int) (self->first_rank + local);

  for (guint i = 0; i < n; i++)
    {
      const char *property = NULL;
      AccelBuffer *buffer = accel_op_peek_buffer_slot (part, i, NULL, &property);
      if (buffer == NULL)
        continue;
      AccelDevice *owner = accel_buffer_get_device (buffer);
      if (owner != device)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_WRONG_DEVICE,
                       "%s on rank %d: property “%s” is a buffer of device “%s”, not of the rank's device “%s”",
                       accel_op_get_type_name (part), rank, property, accel_device_get_name (owner),
                       accel_device_get_name (device));
          return FALSE;
        }
      if (accel_buffer_get_generation (buffer) != accel_device_get_generation (device))
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER,
                       "%s on rank %d: property “%s” was made in generation %u of “%s”, which is now at "
                       "generation %u; its memory was lost when the device restarted",
                       accel_op_get_type_name (part), rank, property, accel_buffer_get_generation (buffer),
                       accel_device_get_name (device), accel_device_get_generation (device));
          return FALSE;
        }
    }
  return TRUE;
}

/* Binds @part to @rank for validation, and validates it. */
static gboolean
validate_part (AccelCommunicator *self, AccelOp *part, guint local, GError **error)
{
  bind (self, part, (int) (self->first_rank + local), "(validating)");
  return accel_op_validate (part, error) && check_buffers (self, part, local, error);
}

/* Adds @part (taken: @c holds it even when it fails validation) as the
 * share of local rank @local, and validates it. */
static gboolean
add_part (AccelCommunicator *self, Collective *c, AccelOp *part, guint local, GError **error)
{
  g_ptr_array_add (c->parts, part);
  g_ptr_array_add (c->devices, g_object_ref (self->devices->pdata[local]));
  int rank = (int) (self->first_rank + local);
  g_array_append_val (c->ranks, rank);
  return validate_part (self, part, local, error);
}

static gboolean
prepare_collective (AccelCommunicator *self, AccelOp **ops, guint n_ops, Collective *c, GError **error)
{
  const char *name = accel_op_get_type_name (ops[0]);

  if (n_ops != self->devices->len)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s: %u ops for a communicator with %u ranks in this process; give one op per rank, "
                   "in rank order", name, n_ops, self->devices->len);
      return FALSE;
    }
  for (guint i = 0; i < n_ops; i++)
    {
      if (G_OBJECT_TYPE (ops[i]) != G_OBJECT_TYPE (ops[0]))
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "op %u is a “%s” but op 0 a “%s”; every rank runs the same collective",
                       i, accel_op_get_type_name (ops[i]), name);
          return FALSE;
        }
      AccelOp *part = copy_op (ops[i]);
      if (!add_part (self, c, part, i, error))
        return FALSE;
      AccelCollectiveClass *klass = ACCEL_COLLECTIVE_GET_CLASS (part);
      if (i > 0 && klass->check_peer
          && !klass->check_peer (ACCEL_COLLECTIVE (part), ACCEL_COLLECTIVE (c->parts->pdata[0]), error))
        return FALSE;
    }
  return TRUE;
}

/* Point to point: which local rank an op belongs to, by its buffer. */
static int
p2p_local_index (AccelCommunicator *self, AccelOp *op, guint index, GError **error)
{
  AccelBuffer *buffer = NULL;
  if (ACCEL_IS_SEND (op))
    buffer = ACCEL_SEND (op)->src;
  else if (ACCEL_IS_RECV (op))
    buffer = ACCEL_RECV (op)->dst;
  else if (ACCEL_IS_SEND_RECV (op))
    buffer = ACCEL_SEND_RECV (op)->src ? ACCEL_SEND_RECV (op)->src : ACCEL_SEND_RECV (op)->dst;
  if (buffer == NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "op %u (“%s”) has no buffer, so it names no rank", index, accel_op_get_type_name (op));
      return -1;
    }
  for (guint i = 0; i < self->devices->len; i++)
    if (self->devices->pdata[i] == accel_buffer_get_device (buffer))
      return (int) i;
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_WRONG_DEVICE,
               "op %u (“%s”) has a buffer of device “%s”, which is no rank of this communicator in this process",
               index, accel_op_get_type_name (op), accel_device_get_name (accel_buffer_get_device (buffer)));
  return -1;
}

static gboolean
check_pair (AccelCommunicator *self, AccelSendRecv *from, AccelSendRecv *to, GError **error)
{
  int src = ACCEL_COLLECTIVE (from)->rank, dst = ACCEL_COLLECTIVE (to)->rank;
  if (to->dst == NULL || to->recv_peer != src)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "rank %d sends to rank %d, which receives nothing from it in this submission", src, dst);
      return FALSE;
    }
  if (accel_buffer_get_dtype (from->src) != accel_buffer_get_dtype (to->dst))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED,
                   "rank %d sends %s to rank %d, which receives %s", src,
                   accel_dtype_get_name (accel_buffer_get_dtype (from->src)), dst,
                   accel_dtype_get_name (accel_buffer_get_dtype (to->dst)));
      return FALSE;
    }
  if (accel_buffer_get_n_elements (from->src) != accel_buffer_get_n_elements (to->dst))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH,
                   "rank %d sends %" G_GINT64_FORMAT " elements to rank %d, which receives %" G_GINT64_FORMAT,
                   src, accel_buffer_get_n_elements (from->src), dst, accel_buffer_get_n_elements (to->dst));
      return FALSE;
    }
  return TRUE;
}

static gboolean
prepare_p2p (AccelCommunicator *self, AccelOp **ops, guint n_ops, Collective *c, GError **error)
{
  guint n_local = self->devices->len;
  g_autofree AccelOp **sends = g_new0 (AccelOp *, n_local);
  g_autofree AccelOp **recvs = g_new0 (AccelOp *, n_local);
  g_autofree AccelOp **whole = g_new0 (AccelOp *, n_local);

  for (guint i = 0; i < n_ops; i++)
    {
      AccelOp *op = ops[i];
      if (!ACCEL_IS_SEND (op) && !ACCEL_IS_RECV (op) && !ACCEL_IS_SEND_RECV (op))
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "op %u is a “%s”; a point-to-point submission holds send, recv and send-recv ops only",
                       i, accel_op_get_type_name (op));
          return FALSE;
        }
      int local = p2p_local_index (self, op, i, error);
      if (local < 0)
        return FALSE;
      g_autoptr(AccelOp) check = copy_op (op);
      if (!validate_part (self, check, local, error))
        return FALSE;
      AccelOp **slot = ACCEL_IS_SEND (op) ? &sends[local] : ACCEL_IS_RECV (op) ? &recvs[local] : &whole[local];
      if (*slot || (whole[local] && (sends[local] || recvs[local])))
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "rank %u has more than one %s in this submission; a rank sends at most once and "
                       "receives at most once per submission", self->first_rank + local,
                       ACCEL_IS_RECV (op) ? "recv" : "send");
          return FALSE;
        }
      *slot = op;
    }

  for (guint local = 0; local < n_local; local++)
    {
      AccelOp *part;
      if (whole[local])
        part = copy_op (whole[local]);
      else if (sends[local] || recvs[local])
        part = accel_send_recv_new (sends[local] ? ACCEL_SEND (sends[local])->src : NULL,
                                    sends[local] ? ACCEL_SEND (sends[local])->peer : -1,
                                    recvs[local] ? ACCEL_RECV (recvs[local])->dst : NULL,
                                    recvs[local] ? ACCEL_RECV (recvs[local])->peer : -1);
      else
        continue;
      if (!add_part (self, c, part, local, error))
        return FALSE;
    }

  /* Every transfer between two ranks of this process has both ends here. */
  guint local_parts = 0;
  for (guint i = 0; i < c->parts->len; i++)
    {
      AccelSendRecv *sr = c->parts->pdata[i];
      int rank = ACCEL_COLLECTIVE (sr)->rank;
      gboolean remote = FALSE;
      int peers[2] = { sr->send_peer, sr->recv_peer };
      for (guint d = 0; d < 2; d++)
        {
          if (peers[d] < 0)
            continue;
          if (!_accel_communicator_is_local_rank (self, peers[d]))
            {
              remote = TRUE;
              continue;
            }
          AccelSendRecv *other = NULL;
          for (guint j = 0; j < c->parts->len; j++)
            if (ACCEL_COLLECTIVE (c->parts->pdata[j])->rank == peers[d])
              other = c->parts->pdata[j];
          if (d == 0 && (other == NULL || !check_pair (self, sr, other, error)))
            {
              if (other == NULL)
                g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                             "rank %d sends to rank %d, which receives nothing from it in this submission",
                             rank, peers[d]);
              return FALSE;
            }
          if (d == 1 && (other == NULL || other->send_peer != rank))
            {
              g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                           "rank %d receives from rank %d, which sends nothing to it in this submission",
                           rank, peers[d]);
              return FALSE;
            }
        }
      if (!remote)
        local_parts++;
    }
  for (guint i = 0; i < c->parts->len; i++)
    ACCEL_SEND_RECV (c->parts->pdata[i])->parts = local_parts;
  c->p2p = TRUE;
  return TRUE;
}

static gboolean
prepare (AccelCommunicator *self, AccelOp **ops, guint n_ops, Collective *c, GError **error)
{
  if (n_ops == 0)
    {
      g_set_error_literal (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "no ops were given");
      return FALSE;
    }
  for (guint i = 0; i < n_ops; i++)
    if (!ACCEL_IS_COLLECTIVE (ops[i]))
      {
        g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                     "op %u is a “%s”, not a collective op; submit it to a device", i,
                     accel_op_get_type_name (ops[i]));
        return FALSE;
      }
  if (ACCEL_COLLECTIVE_GET_CLASS (ops[0])->needs_all_ranks)
    return prepare_collective (self, ops, n_ops, c, error);
  return prepare_p2p (self, ops, n_ops, c, error);
}

/* With the build lock held: the tags and the incarnation. */
static gboolean
bind_parts (AccelCommunicator *self, Collective *c, GError **error)
{
  AccelCommInc *inc = c->inc;
  g_autofree char *tag = c->p2p ? g_strdup_printf ("p%" G_GUINT64_FORMAT, inc->next_p2p++)
                                : g_strdup_printf ("s%" G_GUINT64_FORMAT, inc->next_seq++);
  guint timeout_ms = accel_communicator_get_timeout_ms (self);
  int lane = accel_communicator_get_lane (self);

  for (guint i = 0; i < c->parts->len; i++)
    {
      AccelOp *part = c->parts->pdata[i];
      AccelCollective *coll = ACCEL_COLLECTIVE (part);
      bind (self, part, g_array_index (c->ranks, int, i), inc->key);
      g_free (coll->comm_id);
      coll->comm_id = g_strdup (inc->comm_id);
      g_free (coll->tag);
      coll->tag = g_strdup (tag);
      coll->timeout_ms = timeout_ms;
      accel_op_set_lane (part, lane);
      if (!c->p2p)
        continue;

      AccelSendRecv *sr = ACCEL_SEND_RECV (part);
      int peer = -1, src = -1, dst = -1;
      if (sr->send_peer >= 0 && !_accel_communicator_is_local_rank (self, sr->send_peer))
        peer = sr->send_peer, src = coll->rank, dst = peer;
      if (sr->recv_peer >= 0 && !_accel_communicator_is_local_rank (self, sr->recv_peer))
        {
          if (peer >= 0 && inc->host_exchange)
            {
              g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                           "rank %d both sends to and receives from ranks of other processes in one submission; "
                           "on %s devices, submit the two directions separately",
                           coll->rank, accel_device_get_backend_name (c->devices->pdata[i]));
              return FALSE;
            }
          peer = sr->recv_peer, src = peer, dst = coll->rank;
        }
      if (peer < 0)
        continue;
      g_autofree char *pair = g_strdup_printf ("%d>%d", src, dst);
      guint count = GPOINTER_TO_UINT (g_hash_table_lookup (inc->pair_counters, pair));
      g_free (sr->remote_tag);
      sr->remote_tag = g_strdup_printf ("q%s-%u", pair, count);
      g_hash_table_replace (inc->pair_counters, g_steal_pointer (&pair), GUINT_TO_POINTER (count + 1));
    }

  /* A kernel for every part, before anything runs. */
  for (guint i = 0; i < c->parts->len; i++)
    if (!accel_op_validate (c->parts->pdata[i], error)
        || !accel_registry_find_kernel (self->registry, c->parts->pdata[i], c->devices->pdata[i], error))
      {
        g_prefix_error (error, "rank %d: ", g_array_index (c->ranks, int, i));
        return FALSE;
      }
  return TRUE;
}

static void
finish (Collective *c)
{
  if (c->first_error == NULL)
    g_task_return_boolean (c->task, TRUE);
  else
    {
      /* The reason the incarnation ended says most: a rank's lost context
       * (CONTEXT_POISONED), or the first part that failed. */
      GError *reason = _accel_comm_group_dup_abort_reason (c->inc->group);
      g_task_return_error (c->task, reason ? reason : g_error_copy (c->first_error));
    }
  collective_free (c);
}

static void
part_done (GObject *source, GAsyncResult *result, gpointer data)
{
  Collective *c = data;
  GError *error = NULL;

  if (!accel_device_submit_finish (ACCEL_DEVICE (source), result, &error))
    {
      int rank = -1;
      for (guint i = 0; i < c->devices->len; i++)
        if (c->devices->pdata[i] == (gpointer) source)
          rank = g_array_index (c->ranks, int, i);
      if (c->first_error == NULL)
        {
          /* Every part's buffers were of its device's generation when the
           * collective was submitted: a stale one now means the rank's
           * device lost its context meanwhile, which is what the
           * collective reports however its part and the device's own
           * news of the restart are ordered. */
          int code = g_error_matches (error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER) ? ACCEL_ERROR_CONTEXT_POISONED
                                                                                    : error->code;
          c->first_error = g_error_new (error->domain, code, "%s on rank %d (%s): %s",
                                        accel_op_get_type_name (c->parts->pdata[0]), rank,
                                        accel_device_get_name (ACCEL_DEVICE (source)), error->message);
          _accel_communicator_abort_incarnation (c->self, c->inc, c->first_error);
        }
      g_error_free (error);
    }
  if (--c->remaining == 0)
    finish (c);
}

/* On the collectives' thread: one order for every device. */
static void
post_parts (gpointer data)
{
  Collective *c = data;
  c->remaining = c->parts->len;
  for (guint i = 0; i < c->parts->len; i++)
    accel_device_submit_async (c->devices->pdata[i], c->parts->pdata[i], c->inc->cancellable, part_done, c);
}

/**
 * accel_communicator_submit_async:
 * @self: a communicator
 * @ops: (array length=n_ops): one op per rank of this process, in rank
 *   order, all of one collective type (`all-reduce`, `all-gather`,
 *   `reduce-scatter`, `broadcast`, `root-reduce`, `all-to-all`); or the
 *   `send` and `recv` ops (and `send-recv` parts) of a point-to-point
 *   submission, in any order, each on its rank's device
 * @n_ops: how many
 * @cancellable: (nullable): checked once, before anything is launched
 * @callback: (scope async): called on the thread-default main context of
 *   the calling thread once every rank's part has completed
 * @user_data: data for @callback
 *
 * Runs one collective. The ops are not changed (the communicator runs
 * bound copies) and may be given again. Bad input is reported through
 * @callback before anything runs: ops of several types, a rank count that
 * does not match, a buffer on another rank's device or of an older
 * generation, ranks whose dtypes, counts, roots or reductions differ, a
 * send without its recv, a device that has failed, no kernel.
 *
 * The first call, and the first after the communicator was aborted, makes
 * a new incarnation first: this may block briefly (the bootstrap bytes are
 * made on the first rank's device; in a job, the processes meet).
 */
void
accel_communicator_submit_async (AccelCommunicator *self,
                                 AccelOp **ops,
                                 guint n_ops,
                                 GCancellable *cancellable,
                                 GAsyncReadyCallback callback,
                                 gpointer user_data)
{
  g_return_if_fail (ACCEL_IS_COMMUNICATOR (self));
  g_return_if_fail (ops != NULL || n_ops == 0);
  for (guint i = 0; i < n_ops; i++)
    g_return_if_fail (ACCEL_IS_OP (ops[i]));

  GError *error = NULL;
  Collective *c = g_new0 (Collective, 1);
  c->self = g_object_ref (self);
  c->task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (c->task, accel_communicator_submit_async);
  g_task_set_check_cancellable (c->task, FALSE);
  c->devices = g_ptr_array_new_with_free_func (g_object_unref);
  c->parts = g_ptr_array_new_with_free_func (g_object_unref);
  c->ranks = g_array_new (FALSE, FALSE, sizeof (int));

  if (g_cancellable_set_error_if_cancelled (cancellable, &error) || !prepare (self, ops, n_ops, c, &error))
    goto fail;

  g_mutex_lock (&self->build_lock);
  c->inc = _accel_communicator_ensure_incarnation (self, &error);
  if (c->inc == NULL || !bind_parts (self, c, &error))
    {
      g_mutex_unlock (&self->build_lock);
      goto fail;
    }
  accel_dispatcher_post (_accel_communicator_dispatcher (), post_parts, c);
  g_mutex_unlock (&self->build_lock);
  return;

fail:
  if (error->domain == G_IO_ERROR && error->code == G_IO_ERROR_CANCELLED)
    {
      GError *e = g_error_new (ACCEL_ERROR, ACCEL_ERROR_CANCELLED, "the collective was cancelled before it ran");
      g_error_free (error);
      error = e;
    }
  g_task_return_error (c->task, error);
  collective_free (c);
}

/**
 * accel_communicator_submit_finish:
 * @self: a communicator
 * @result: the result given to the callback
 * @error: return location for a #GError
 *
 * Finishes accel_communicator_submit_async().
 *
 * Returns: %TRUE if every rank's part ran; else %FALSE with @error set
 *   (%ACCEL_ERROR_CONTEXT_POISONED when a rank's device lost its context
 *   meanwhile: the next collective runs on a rebuilt communicator)
 */
gboolean
accel_communicator_submit_finish (AccelCommunicator *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

static void
sync_done (GObject *source, GAsyncResult *result, gpointer data)
{
  GAsyncResult **out = data;
  *out = g_object_ref (result);
}

/**
 * accel_communicator_submit:
 * @self: a communicator
 * @ops: (array length=n_ops): as for accel_communicator_submit_async()
 * @n_ops: how many
 * @cancellable: (nullable): checked once, before anything is launched
 * @error: return location for a #GError
 *
 * Runs one collective and waits for it: the blocking form of
 * accel_communicator_submit_async().
 *
 * Returns: %TRUE if every rank's part ran
 */
gboolean
accel_communicator_submit (AccelCommunicator *self,
                           AccelOp **ops,
                           guint n_ops,
                           GCancellable *cancellable,
                           GError **error)
{
  g_return_val_if_fail (ACCEL_IS_COMMUNICATOR (self), FALSE);

  g_autoptr(GMainContext) context = g_main_context_new ();
  GAsyncResult *result = NULL;
  g_main_context_push_thread_default (context);
  accel_communicator_submit_async (self, ops, n_ops, cancellable, sync_done, &result);
  while (result == NULL)
    g_main_context_iteration (context, TRUE);
  g_main_context_pop_thread_default (context);
  gboolean ok = accel_communicator_submit_finish (self, result, error);
  g_object_unref (result);
  return ok;
}
