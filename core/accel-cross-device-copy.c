/* accel-cross-device-copy.c: an op whose buffers are on more than one
 * device. Only `copy` may be: it becomes a read on the source's device into
 * host memory, then a write on the destination's, each ordered on its own
 * device like any transfer. Every other op is refused with
 * %ACCEL_ERROR_WRONG_DEVICE, naming the property. The device actor only
 * notices that a buffer is elsewhere and hands the op here.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-device-private.h"

typedef struct {
  AccelDevice *dst_device;
  AccelBuffer *dst;
  guint8 *staging;
  gsize size;
  GTask *task;
} CrossCopy;

static void
cross_copy_finish (CrossCopy *cc, GError *error)
{
  if (error)
    g_task_return_error (cc->task, error);
  else
    g_task_return_boolean (cc->task, TRUE);
  g_object_unref (cc->task);
  g_clear_object (&cc->dst_device);
  g_clear_object (&cc->dst);
  g_free (cc->staging);
  g_free (cc);
}

static void
written (AccelWork *work, GError *error, gpointer data)
{
  cross_copy_finish (data, error);
}

static void
read_done (AccelWork *work, GError *error, gpointer data)
{
  CrossCopy *cc = data;

  if (error)
    {
      cross_copy_finish (cc, error);
      return;
    }
  _accel_device_transfer_with_callback (cc->dst_device, ACCEL_WORK_WRITE, cc->dst, cc->staging, cc->size,
                                        written, cc);
}

/* A backend that moves the bytes between its devices itself. */
static void
copied_by_backend (GObject *source, GAsyncResult *result, gpointer data)
{
  GTask *task = data;
  GError *error = NULL;
  if (ACCEL_BACKEND_GET_CLASS (source)->copy_finish (ACCEL_BACKEND (source), result, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
  g_object_unref (task);
}

/* Takes @task. @self is the device @op was submitted to. */
void
_accel_cross_device_copy_submit (AccelDevice *self, AccelOp *op, GTask *task)
{
  GError *error = NULL;

  if (!ACCEL_IS_COPY (op))
    {
      /* The message names the property whose buffer is elsewhere. */
      if (accel_op_validate (op, &error))
        _accel_device_check_op_buffers (self, op, &error);
      if (error == NULL)
        error = g_error_new (ACCEL_ERROR, ACCEL_ERROR_WRONG_DEVICE,
                             "“%s” names buffers of another device than “%s”",
                             accel_op_get_type_name (op), accel_device_get_name (self));
      g_task_return_error (task, error);
      g_object_unref (task);
      return;
    }

  AccelCopy *copy = ACCEL_COPY (op);
  if (!accel_op_check_contiguous (op, "src", &error)
      || !accel_op_check_contiguous (op, "dst", &error)
      || !_accel_device_check_buffer (accel_buffer_get_device (copy->src), copy->src, "Property “src” of “copy”", &error)
      || !_accel_device_check_buffer (accel_buffer_get_device (copy->dst), copy->dst, "Property “dst” of “copy”", &error))
    {
      g_task_return_error (task, error);
      g_object_unref (task);
      return;
    }
  if (accel_buffer_get_device (copy->dst) != self && accel_buffer_get_device (copy->src) != self)
    {
      g_task_return_new_error (task, ACCEL_ERROR, ACCEL_ERROR_WRONG_DEVICE,
                               "A copy submitted to “%s” must have its source or destination there",
                               accel_device_get_name (self));
      g_object_unref (task);
      return;
    }

  AccelBackend *backend = accel_device_get_backend (accel_buffer_get_device (copy->src));
  AccelBackendClass *bk = backend ? ACCEL_BACKEND_GET_CLASS (backend) : NULL;
  if (bk && backend == accel_device_get_backend (accel_buffer_get_device (copy->dst)) && bk->can_copy
      && bk->can_copy (backend, copy->src, copy->dst))
    {
      bk->copy_async (backend, copy->src, copy->dst, g_task_get_cancellable (task), copied_by_backend, task);
      return;
    }

  CrossCopy *cc = g_new0 (CrossCopy, 1);
  cc->dst_device = g_object_ref (accel_buffer_get_device (copy->dst));
  cc->dst = g_object_ref (copy->dst);
  cc->size = accel_buffer_get_size (copy->src);
  cc->staging = g_malloc (cc->size ? cc->size : 1);
  cc->task = task;
  _accel_device_transfer_with_callback (accel_buffer_get_device (copy->src), ACCEL_WORK_READ, copy->src,
                                        cc->staging, cc->size, read_done, cc);
}
