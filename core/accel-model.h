/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>
#include "accel-types.h"
#include "accel-tensor-spec.h"

G_BEGIN_DECLS

/**
 * AccelModelInterface::run_batch:
 * @self: the model
 * @device: the device to run on, on which the model was prepared
 * @inputs: (element-type AccelBuffer) (transfer none): one buffer per input
 * @outputs: (element-type AccelBuffer) (transfer none): one buffer per output
 * @task: (transfer none): completes the run: g_task_return_boolean() once
 *   the outputs are written, or g_task_return_error(); take a reference to
 *   complete it later
 *
 * Runs one batch. The buffers are already checked against the model's
 * inputs and outputs. The buffer lists are #GPtrArray rather than C arrays
 * and the completion is a #GTask rather than a callback, so that Python
 * and JavaScript implement it as plainly as C.
 */

/**
 * AccelModelInterface::get_input:
 * @self: the model
 * @index: which input, from 0
 *
 * Returns: (transfer full) (nullable): input @index, or %NULL past the last
 */

/**
 * AccelModelInterface::get_output:
 * @self: the model
 * @index: which output, from 0
 *
 * Returns: (transfer full) (nullable): output @index, or %NULL past the last
 */

#define ACCEL_TYPE_MODEL (accel_model_get_type ())
ACCEL_API
G_DECLARE_INTERFACE (AccelModel, accel_model, ACCEL, MODEL, GObject)

/**
 * AccelModelInterface:
 * @g_iface: the parent interface
 * @get_input: gives one input, by index, or %NULL past the last; the
 *   inputs are the same for the model's whole life
 * @get_output: gives one output, by index, or %NULL past the last; likewise
 * @prepare: makes the model ready to run on a device (uploads its weights
 *   there); called again after the device's #AccelDevice:generation changed
 * @run_batch: runs one batch: the inputs and outputs are buffers on the
 *   device, in the order of @get_input and @get_output, each
 *   `[n, item dims…]` with the same `n`; completes its task when the
 *   outputs are written
 *
 * What a serving actor runs. Implement it in C, or in Python or JavaScript
 * as a GObject subclass; see accel_model_run_async() for the contract.
 */
struct _AccelModelInterface {
  GTypeInterface g_iface;

  AccelTensorSpec *(*get_input) (AccelModel *self, guint index);
  AccelTensorSpec *(*get_output) (AccelModel *self, guint index);
  gboolean (*prepare) (AccelModel *self, AccelDevice *device, GError **error);
  void (*run_batch) (AccelModel *self,
                     AccelDevice *device,
                     GPtrArray *inputs,
                     GPtrArray *outputs,
                     GTask *task);

  /*< private >*/
  gpointer padding[8];
};

ACCEL_API
GPtrArray *accel_model_get_inputs (AccelModel *self);
ACCEL_API
GPtrArray *accel_model_get_outputs (AccelModel *self);
ACCEL_API
void accel_model_set_main_context (AccelModel *self, GMainContext *context);
ACCEL_API
GMainContext *accel_model_get_main_context (AccelModel *self);
ACCEL_API
gboolean accel_model_prepare (AccelModel *self, AccelDevice *device, GError **error);
ACCEL_API
gboolean accel_model_is_prepared (AccelModel *self, AccelDevice *device);
ACCEL_API
void accel_model_run_async (AccelModel *self,
                            AccelDevice *device,
                            AccelBuffer **inputs,
                            guint n_inputs,
                            AccelBuffer **outputs,
                            guint n_outputs,
                            GCancellable *cancellable,
                            GAsyncReadyCallback callback,
                            gpointer user_data);
ACCEL_API
gboolean accel_model_run_finish (AccelModel *self, GAsyncResult *result, GError **error);
ACCEL_API
gboolean accel_model_run (AccelModel *self,
                          AccelDevice *device,
                          AccelBuffer **inputs,
                          guint n_inputs,
                          AccelBuffer **outputs,
                          guint n_outputs,
                          GCancellable *cancellable,
                          GError **error);

G_END_DECLS
