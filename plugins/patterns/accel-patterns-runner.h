/* accel-patterns-runner.h: one batch at a time of one model on one device,
 * from host bytes to host bytes.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <accel.h>

G_BEGIN_DECLS

typedef struct _AccelPatternsRunner AccelPatternsRunner;

AccelPatternsRunner *accel_patterns_runner_new (AccelModel *model, AccelDevice *device);
AccelPatternsRunner *accel_patterns_runner_ref (AccelPatternsRunner *self);
void accel_patterns_runner_unref (AccelPatternsRunner *self);
AccelModel *accel_patterns_runner_get_model (AccelPatternsRunner *self);
AccelDevice *accel_patterns_runner_get_device (AccelPatternsRunner *self);
gboolean accel_patterns_runner_is_busy (AccelPatternsRunner *self);

void accel_patterns_runner_run_async (AccelPatternsRunner *self,
                                      guint rows,
                                      GBytes **inputs,
                                      GAsyncReadyCallback callback,
                                      gpointer user_data);
GPtrArray *accel_patterns_runner_run_finish (AccelPatternsRunner *self, GAsyncResult *result, GError **error);

void accel_patterns_keep_first_error (GError **kept, GError *error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AccelPatternsRunner, accel_patterns_runner_unref)

G_END_DECLS
