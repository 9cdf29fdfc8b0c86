/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>
#include "accel-types.h"
#include "accel-dtype.h"
#include "accel-shape.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_BUFFER (accel_buffer_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelBuffer, accel_buffer, ACCEL, BUFFER, GObject)

ACCEL_API
AccelDevice *accel_buffer_get_device (AccelBuffer *self);
ACCEL_API
AccelDType accel_buffer_get_dtype (AccelBuffer *self);
ACCEL_API
const AccelShape *accel_buffer_get_shape (AccelBuffer *self);
ACCEL_API
gsize accel_buffer_get_size (AccelBuffer *self);
ACCEL_API
gint64 accel_buffer_get_n_elements (AccelBuffer *self);
ACCEL_API
guint accel_buffer_get_generation (AccelBuffer *self);
ACCEL_API
guint64 accel_buffer_get_handle (AccelBuffer *self);
ACCEL_API
gsize accel_buffer_get_offset (AccelBuffer *self);
ACCEL_API
AccelBuffer *accel_buffer_get_base (AccelBuffer *self);
ACCEL_API
gboolean accel_buffer_is_stale (AccelBuffer *self);

ACCEL_API
gboolean accel_buffer_upload (AccelBuffer *self, GBytes *bytes, GError **error);
ACCEL_API
gboolean accel_buffer_write (AccelBuffer *self, const guint8 *data, gsize size, GError **error);
ACCEL_API
GBytes *accel_buffer_download (AccelBuffer *self, GError **error);
ACCEL_API
gboolean accel_buffer_read (AccelBuffer *self, guint8 *data, gsize size, GError **error);
ACCEL_API
gboolean accel_buffer_zero (AccelBuffer *self, GError **error);

ACCEL_API
void accel_buffer_upload_async (AccelBuffer *self,
                                GBytes *bytes,
                                GCancellable *cancellable,
                                GAsyncReadyCallback callback,
                                gpointer user_data);
ACCEL_API
gboolean accel_buffer_upload_finish (AccelBuffer *self, GAsyncResult *result, GError **error);
ACCEL_API
void accel_buffer_download_async (AccelBuffer *self,
                                  GCancellable *cancellable,
                                  GAsyncReadyCallback callback,
                                  gpointer user_data);
ACCEL_API
GBytes *accel_buffer_download_finish (AccelBuffer *self, GAsyncResult *result, GError **error);

ACCEL_API
AccelBuffer *accel_buffer_new_view (AccelBuffer *self,
                                    gint64 element_offset,
                                    const AccelShape *shape,
                                    GError **error);

/* For backends and kernels. */
ACCEL_API
gpointer accel_buffer_get_memory (AccelBuffer *self);
ACCEL_API
gpointer accel_buffer_get_data (AccelBuffer *self);
ACCEL_API
gpointer accel_buffer_get_backend_data (AccelBuffer *self);
ACCEL_API
void accel_buffer_set_backend_data (AccelBuffer *self, gpointer data, GDestroyNotify destroy);

G_END_DECLS
