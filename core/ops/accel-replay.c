/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-impl-private.h"
#include "../accel-module-private.h"

/**
 * AccelReplay:
 *
 * Runs the ops of an instantiated #AccelGraph once, in order, on the
 * op's lane (accel_graph_new_replay() sets the graph's). Its buffers are
 * those of the recorded ops, each with the union of their accesses, so the
 * replay is ordered and checked like one op; a graph of an older generation
 * of its device fails with %ACCEL_ERROR_STALE_BUFFER.
 *
 * Op name: `replay`.
 */

static gboolean
accel_replay_validate (AccelOp *op, GError **error)
{
  AccelGraph *graph = ACCEL_REPLAY (op)->graph;

  if (!accel_graph_is_instantiated (graph))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "replay: the graph is not instantiated (accel_graph_instantiate())");
      return FALSE;
    }
  AccelDevice *device = accel_graph_get_device (graph);
  if (device && accel_device_get_generation (device) != accel_graph_get_generation (graph))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER,
                   "replay: the graph was recorded in generation %u of “%s”, which is now at "
                   "generation %u; the memory it uses was lost when the device restarted",
                   accel_graph_get_generation (graph), accel_device_get_name (device),
                   accel_device_get_generation (device));
      return FALSE;
    }
  return TRUE;
}

static guint
accel_replay_get_n_extra_buffers (AccelOp *op)
{
  AccelGraph *graph = ACCEL_REPLAY (op)->graph;
  return graph ? _accel_graph_get_n_buffers (graph) : 0;
}

static AccelBuffer *
accel_replay_peek_extra_buffer (AccelOp *op, guint index, AccelAccess *access)
{
  return _accel_graph_peek_buffer (ACCEL_REPLAY (op)->graph, index, access);
}

/* `(t@a(sa{sv}))`: the graph's handle and its ops. */
static GVariant *
accel_replay_serialize_extra (AccelOp *op)
{
  AccelGraph *graph = ACCEL_REPLAY (op)->graph;
  GVariant *content = graph ? _accel_graph_get_content (graph) : NULL;
  if (content == NULL)
    return NULL;
  return g_variant_new ("(t@a(sa{sv}))", _accel_graph_get_handle (graph), content);
}

static gboolean
accel_replay_deserialize_extra (AccelOp *op, GVariant *extra, AccelBufferResolveFunc resolve,
                                      gpointer user_data, GError **error)
{
  AccelReplay *self = ACCEL_REPLAY (op);

  if (!g_variant_is_of_type (extra, G_VARIANT_TYPE ("(ta(sa{sv}))")))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "replay: the serialised graph has type %s", g_variant_get_type_string (extra));
      return FALSE;
    }
  guint64 handle;
  g_autoptr(GVariant) content = NULL;
  g_variant_get (extra, "(t@a(sa{sv}))", &handle, &content);
  AccelGraph *graph = _accel_graph_lookup_or_build (handle, content, resolve, user_data, error);
  if (graph == NULL)
    return FALSE;
  g_clear_object (&self->graph);
  self->graph = graph;
  return TRUE;
}

ACCEL_DEFINE_OP_TYPE_WITH_CODE (AccelReplay, accel_replay, "replay", "Runs the ops of a recorded graph once, in order",
                                _accel_replay_params, accel_replay_validate,
                                {
                                  op_class->get_n_extra_buffers = accel_replay_get_n_extra_buffers;
                                  op_class->peek_extra_buffer = accel_replay_peek_extra_buffer;
                                  op_class->serialize_extra = accel_replay_serialize_extra;
                                  op_class->deserialize_extra = accel_replay_deserialize_extra;
                                })
