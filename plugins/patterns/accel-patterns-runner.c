/* accel-patterns-runner.c: one batch at a time of one model on one device,
 * from host bytes to host bytes: one upload per input, one model run, one
 * download per output.
 *
 * The device buffers are kept between batches, sized for the largest batch
 * seen, and views of their first rows serve smaller ones; they are made
 * again after the device's generation changed. The model itself is
 * prepared again by accel_model_run_async() after such a change.
 *
 * Not thread-safe: a runner is used from its actor's dispatcher thread,
 * and its completions come back there.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-patterns-runner.h"

struct _AccelPatternsRunner {
  gint ref_count;
  AccelModel *model;
  AccelDevice *device;
  GPtrArray *in_specs;          /* AccelTensorSpec */
  GPtrArray *out_specs;
  GPtrArray *in_buffers;        /* AccelBuffer at capacity rows, or empty */
  GPtrArray *out_buffers;
  guint capacity;
  gboolean busy;
};

typedef struct {
  AccelPatternsRunner *runner;
  guint rows;
  GPtrArray *in_views;          /* AccelBuffer of @rows rows */
  GPtrArray *out_views;
  GPtrArray *outputs;           /* GBytes, NULL where not downloaded yet */
  guint remaining;
  GError *error;
} Run;

AccelPatternsRunner *
accel_patterns_runner_new (AccelModel *model, AccelDevice *device)
{
  AccelPatternsRunner *self = g_new0 (AccelPatternsRunner, 1);
  self->ref_count = 1;
  self->model = g_object_ref (model);
  self->device = g_object_ref (device);
  self->in_specs = accel_model_get_inputs (model);
  self->out_specs = accel_model_get_outputs (model);
  self->in_buffers = g_ptr_array_new_with_free_func (g_object_unref);
  self->out_buffers = g_ptr_array_new_with_free_func (g_object_unref);
  return self;
}

AccelPatternsRunner *
accel_patterns_runner_ref (AccelPatternsRunner *self)
{
  g_atomic_int_inc (&self->ref_count);
  return self;
}

void
accel_patterns_runner_unref (AccelPatternsRunner *self)
{
  if (!g_atomic_int_dec_and_test (&self->ref_count))
    return;
  g_object_unref (self->model);
  g_object_unref (self->device);
  g_ptr_array_unref (self->in_specs);
  g_ptr_array_unref (self->out_specs);
  g_ptr_array_unref (self->in_buffers);
  g_ptr_array_unref (self->out_buffers);
  g_free (self);
}

AccelModel *
accel_patterns_runner_get_model (AccelPatternsRunner *self)
{
  return self->model;
}

AccelDevice *
accel_patterns_runner_get_device (AccelPatternsRunner *self)
{
  return self->device;
}

gboolean
accel_patterns_runner_is_busy (AccelPatternsRunner *self)
{
  return self->busy;
}

static void
free_run (gpointer data)
{
  Run *run = data;
  g_clear_pointer (&run->in_views, g_ptr_array_unref);
  g_clear_pointer (&run->out_views, g_ptr_array_unref);
  g_clear_pointer (&run->outputs, g_ptr_array_unref);
  g_clear_error (&run->error);
  accel_patterns_runner_unref (run->runner);
  g_free (run);
}

/* A buffer of the device's current generation, large enough, per spec. */
static gboolean
ensure_buffers (AccelPatternsRunner *self, guint rows, GError **error)
{
  gboolean fresh = self->in_buffers->len > 0 || self->out_buffers->len > 0;
  GPtrArray *all[] = { self->in_buffers, self->out_buffers };
  for (guint s = 0; s < 2 && fresh; s++)
    for (guint i = 0; i < all[s]->len && fresh; i++)
      fresh = !accel_buffer_is_stale (all[s]->pdata[i]);
  if (fresh && rows <= self->capacity)
    return TRUE;

  guint capacity = MAX (rows, self->capacity);
  g_ptr_array_set_size (self->in_buffers, 0);
  g_ptr_array_set_size (self->out_buffers, 0);
  GPtrArray *specs[] = { self->in_specs, self->out_specs };
  for (guint s = 0; s < 2; s++)
    for (guint i = 0; i < specs[s]->len; i++)
      {
        g_autoptr(AccelShape) shape = accel_tensor_spec_get_batch_shape (specs[s]->pdata[i], capacity);
        AccelBuffer *buffer = accel_device_alloc (self->device, accel_tensor_spec_get_dtype (specs[s]->pdata[i]),
                                                  shape, error);
        if (buffer == NULL)
          {
            g_ptr_array_set_size (self->in_buffers, 0);
            g_ptr_array_set_size (self->out_buffers, 0);
            return FALSE;
          }
        g_ptr_array_add (all[s], buffer);
      }
  self->capacity = capacity;
  return TRUE;
}

static GPtrArray *
views_of (GPtrArray *buffers, GPtrArray *specs, guint rows, guint capacity, GError **error)
{
  GPtrArray *views = g_ptr_array_new_full (buffers->len, g_object_unref);
  for (guint i = 0; i < buffers->len; i++)
    {
      if (rows == capacity)
        {
          g_ptr_array_add (views, g_object_ref (buffers->pdata[i]));
          continue;
        }
      g_autoptr(AccelShape) shape = accel_tensor_spec_get_batch_shape (specs->pdata[i], rows);
      AccelBuffer *view = accel_buffer_new_view (buffers->pdata[i], 0, shape, error);
      if (view == NULL)
        {
          g_ptr_array_unref (views);
          return NULL;
        }
      g_ptr_array_add (views, view);
    }
  return views;
}

/* Ends the run; a failure that says the device lost its context (or
 * stopped) drops the buffers, which belong to the old generation. */
static void
finish (GTask *task)
{
  Run *run = g_task_get_task_data (task);
  AccelPatternsRunner *self = run->runner;

  self->busy = FALSE;
  if (run->error)
    {
      if (g_error_matches (run->error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED)
          || g_error_matches (run->error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER)
          || g_error_matches (run->error, ACCEL_ERROR, ACCEL_ERROR_DEVICE_FAILED))
        {
          g_ptr_array_set_size (self->in_buffers, 0);
          g_ptr_array_set_size (self->out_buffers, 0);
        }
      g_task_return_error (task, g_steal_pointer (&run->error));
    }
  else
    g_task_return_pointer (task, g_steal_pointer (&run->outputs), (GDestroyNotify) g_ptr_array_unref);
}

/* Keeps @error (taken; %NULL for none) in *@kept unless that holds one
 * already: of steps run at once, the first failure is the one reported. */
void
accel_patterns_keep_first_error (GError **kept, GError *error)
{
  if (*kept == NULL)
    *kept = error;
  else
    g_clear_error (&error);
}

static void
downloaded (GObject *source, GAsyncResult *result, gpointer data)
{
  GTask *task = data;
  Run *run = g_task_get_task_data (task);
  GError *error = NULL;

  GBytes *bytes = accel_buffer_download_finish (ACCEL_BUFFER (source), result, &error);
  if (bytes == NULL)
    accel_patterns_keep_first_error (&run->error, error);
  else
    for (guint i = 0; i < run->out_views->len; i++)
      if (run->out_views->pdata[i] == (gpointer) source)
        {
          g_clear_pointer (&run->outputs->pdata[i], g_bytes_unref);
          run->outputs->pdata[i] = bytes;
        }
  if (--run->remaining == 0)
    finish (task);
  g_object_unref (task);
}

static void
ran (GObject *source, GAsyncResult *result, gpointer data)
{
  GTask *task = data;
  Run *run = g_task_get_task_data (task);
  GError *error = NULL;

  if (!accel_model_run_finish (ACCEL_MODEL (source), result, &error))
    {
      accel_patterns_keep_first_error (&run->error, error);
      finish (task);
      g_object_unref (task);
      return;
    }
  run->remaining = run->out_views->len;
  for (guint i = 0; i < run->out_views->len; i++)
    accel_buffer_download_async (run->out_views->pdata[i], NULL, downloaded, g_object_ref (task));
  if (run->out_views->len == 0)
    finish (task);
  g_object_unref (task);
}

/* Runs the model on the run's views (the inputs are on the device). */
static void
run_model (GTask *task)
{
  Run *run = g_task_get_task_data (task);

  accel_model_run_async (run->runner->model, run->runner->device,
                         (AccelBuffer **) run->in_views->pdata, run->in_views->len,
                         (AccelBuffer **) run->out_views->pdata, run->out_views->len,
                         NULL, ran, g_object_ref (task));
}

static void
uploaded (GObject *source, GAsyncResult *result, gpointer data)
{
  GTask *task = data;
  Run *run = g_task_get_task_data (task);
  GError *error = NULL;

  if (!accel_buffer_upload_finish (ACCEL_BUFFER (source), result, &error))
    accel_patterns_keep_first_error (&run->error, error);
  if (--run->remaining == 0)
    {
      if (run->error)
        finish (task);
      else
        run_model (task);
    }
  g_object_unref (task);
}

/* Runs @rows rows: @inputs holds one block of @rows items per model input,
 * in order. Completes with one GBytes per output. One run at a time. */
void
accel_patterns_runner_run_async (AccelPatternsRunner *self,
                                 guint rows,
                                 GBytes **inputs,
                                 GAsyncReadyCallback callback,
                                 gpointer user_data)
{
  g_return_if_fail (!self->busy);
  g_return_if_fail (rows > 0);

  GTask *task = g_task_new (NULL, NULL, callback, user_data);
  g_task_set_source_tag (task, accel_patterns_runner_run_async);
  Run *run = g_new0 (Run, 1);
  run->runner = accel_patterns_runner_ref (self);
  run->rows = rows;
  run->outputs = g_ptr_array_new_full (self->out_specs->len, (GDestroyNotify) g_bytes_unref);
  g_ptr_array_set_size (run->outputs, self->out_specs->len);
  g_task_set_task_data (task, run, free_run);
  self->busy = TRUE;

  GError *error = NULL;
  if (ensure_buffers (self, rows, &error)
      && (run->in_views = views_of (self->in_buffers, self->in_specs, rows, self->capacity, &error))
      && (run->out_views = views_of (self->out_buffers, self->out_specs, rows, self->capacity, &error)))
    {
      run->remaining = run->in_views->len;
      for (guint i = 0; i < run->in_views->len; i++)
        accel_buffer_upload_async (run->in_views->pdata[i], inputs[i], NULL, uploaded, g_object_ref (task));
      if (run->in_views->len == 0)
        run_model (task);
    }
  else
    {
      run->error = error;
      finish (task);
    }
  g_object_unref (task);
}

GPtrArray *
accel_patterns_runner_run_finish (AccelPatternsRunner *self, GAsyncResult *result, GError **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}
