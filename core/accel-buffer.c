/* accel-buffer.c: typed device memory with a generation token.
 *
 * A buffer is made by accel_device_alloc() in the device's current
 * generation. When the device's context is rebuilt, the memory of the old
 * generation is gone with it, and every use of the buffer fails with
 * %ACCEL_ERROR_STALE_BUFFER instead of touching freed memory.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-private.h"
#include "accel-device-private.h"

struct _AccelBuffer {
  GObject parent_instance;

  AccelDevice *device;
  AccelDType dtype;
  AccelShape *shape;
  gsize size;
  guint generation;
  guint64 handle;
  gpointer memory;          /* backend memory of the base buffer */
  gsize offset;             /* bytes into memory, for views */
  AccelBuffer *base;        /* NULL unless a view */
  gboolean may_overlap;     /* accel_shape_may_overlap (shape): ops may not write it */

  gpointer backend_data;
  GDestroyNotify backend_destroy;

  /* Base buffers only. Memory of another library (a DLPack import) is
   * released by owner_free (owner); memory lent to another library
   * (accel_buffer_to_dlpack()) is detached from the device's context
   * and freed by the backend's free_detached_memory. */
  GDestroyNotify owner_free;
  gpointer owner;
  gint detached;            /* atomic; set under bit 0 of detach_lock */
  gint detach_lock;
};

/**
 * AccelBuffer:
 *
 * Typed device memory, made by accel_device_alloc(). Host data moves in and
 * out as #GBytes (accel_buffer_upload(), accel_buffer_download() and their
 * async forms), each transfer ordered after the ops submitted before it.
 *
 * A buffer belongs to the generation of its device's context in which it was
 * made. After the device rebuilds its context (#AccelDevice:generation goes
 * up), every use of an older buffer fails with %ACCEL_ERROR_STALE_BUFFER
 * instead of touching freed memory; accel_buffer_is_stale() tells in advance.
 */
G_DEFINE_FINAL_TYPE (AccelBuffer, accel_buffer, G_TYPE_OBJECT)

static const AccelPropertyField buffer_fields[] = {
  /**
   * AccelBuffer:device:
   *
   * The device that holds the memory.
   */
  ACCEL_FIELD_OBJECT (AccelBuffer, device, "device", "Owning device", accel_device_get_type, ACCEL_FIELD_READABLE),
  /**
   * AccelBuffer:dtype:
   *
   * The element type.
   */
  ACCEL_FIELD_ENUM (AccelBuffer, dtype, "dtype", "Element type", accel_dtype_get_type, ACCEL_DTYPE_F32,
                    ACCEL_FIELD_READABLE),
  /**
   * AccelBuffer:shape:
   *
   * The dimensions and strides.
   */
  ACCEL_FIELD_BOXED (AccelBuffer, shape, "shape", "Dimensions", accel_shape_get_type, ACCEL_FIELD_READABLE),
  /**
   * AccelBuffer:size:
   *
   * The size in bytes.
   */
  ACCEL_FIELD_UINT64 (AccelBuffer, size, "size", "Size in bytes", 0, G_MAXUINT64, 0, ACCEL_FIELD_READABLE),
  /**
   * AccelBuffer:generation:
   *
   * The device generation the memory belongs to.
   */
  ACCEL_FIELD_UINT (AccelBuffer, generation, "generation", "Device generation of the memory", 0, G_MAXUINT, 0,
                    ACCEL_FIELD_READABLE),
};

static void
accel_buffer_finalize (GObject *object)
{
  AccelBuffer *self = ACCEL_BUFFER (object);

  if (self->backend_destroy)
    self->backend_destroy (self->backend_data);
  if (self->base)
    g_object_unref (self->base);
  else if (self->owner_free)
    self->owner_free (self->owner);
  else if (g_atomic_int_get (&self->detached))
    ACCEL_DEVICE_GET_CLASS (self->device)->free_detached_memory (self->device, self->memory,
                                                                 self->size ? self->size : 1);
  else if (self->memory)
    _accel_device_release_memory (self->device, self->memory, self->size, self->generation);
  /* Two direct frees rather than accel_object_finalize_fields (): buffers
   * and their views come and go per op. */
  accel_shape_free (self->shape);
  g_object_unref (self->device);

  G_OBJECT_CLASS (accel_buffer_parent_class)->finalize (object);
}

static void
accel_buffer_class_init (AccelBufferClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = accel_buffer_finalize;

  accel_object_class_install_fields (object_class, buffer_fields, G_N_ELEMENTS (buffer_fields));
}

static void
accel_buffer_init (AccelBuffer *self)
{
}

AccelBuffer *
_accel_buffer_new (AccelDevice *device,
                   AccelDType dtype,
                   const AccelShape *shape,
                   gpointer memory,
                   gsize size,
                   guint generation,
                   guint64 handle)
{
  AccelBuffer *self = g_object_new (ACCEL_TYPE_BUFFER, NULL);
  self->device = g_object_ref (device);
  self->dtype = dtype;
  self->shape = accel_shape_copy (shape);
  self->may_overlap = accel_shape_may_overlap (shape);
  self->memory = memory;
  self->size = size;
  self->generation = generation;
  self->handle = handle;
  return self;
}

/* Whether two of its elements may share memory (a broadcast): no op may
 * write it. */
gboolean
_accel_buffer_may_overlap (AccelBuffer *self)
{
  return self->may_overlap;
}

AccelBuffer *
_accel_buffer_new_external (AccelDevice *device,
                            AccelDType dtype,
                            const AccelShape *shape,
                            gpointer memory,
                            gsize size,
                            GDestroyNotify owner_free,
                            gpointer owner)
{
  AccelBuffer *self = _accel_buffer_new (device, dtype, shape, memory, size,
                                         accel_device_get_generation (device),
                                         _accel_device_next_handle (device));
  self->owner_free = owner_free;
  self->owner = owner;
  return self;
}

gboolean
_accel_buffer_detach_memory (AccelBuffer *self, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_BUFFER (self), FALSE);
  AccelBuffer *base = self->base ? self->base : self;
  AccelDeviceClass *klass = ACCEL_DEVICE_GET_CLASS (base->device);
  gboolean ok = TRUE;

  if (base->owner_free != NULL || g_atomic_int_get (&base->detached))
    return TRUE;
  if (klass->detach_memory == NULL || klass->free_detached_memory == NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                   "The backend of “%s” cannot keep buffer memory alive past its context, so it "
                   "cannot lend it", accel_device_get_name (base->device));
      return FALSE;
    }
  g_bit_lock (&base->detach_lock, 0);
  if (!g_atomic_int_get (&base->detached))
    {
      ok = _accel_device_detach_memory (base->device, base->memory, base->size, base->generation);
      if (ok)
        g_atomic_int_set (&base->detached, 1);
    }
  g_bit_unlock (&base->detach_lock, 0);
  if (!ok)
    g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER,
                 "The memory of the buffer went with generation %u of “%s” (the device restarted "
                 "or shut down)",
                 base->generation, accel_device_get_name (base->device));
  return ok;
}

/**
 * accel_buffer_get_device:
 * @self: a buffer
 *
 * Gets the device holding it.
 *
 * Returns: (transfer none): the device holding it
 */
AccelDevice *
accel_buffer_get_device (AccelBuffer *self)
{
  g_return_val_if_fail (ACCEL_IS_BUFFER (self), NULL);
  return self->device;
}

/**
 * accel_buffer_get_dtype:
 * @self: a buffer
 *
 * Gets the element type.
 *
 * Returns: the element type
 */
AccelDType
accel_buffer_get_dtype (AccelBuffer *self)
{
  g_return_val_if_fail (ACCEL_IS_BUFFER (self), ACCEL_DTYPE_F32);
  return self->dtype;
}

/**
 * accel_buffer_get_shape:
 * @self: a buffer
 *
 * Gets the shape.
 *
 * Returns: (transfer none): the shape
 */
const AccelShape *
accel_buffer_get_shape (AccelBuffer *self)
{
  g_return_val_if_fail (ACCEL_IS_BUFFER (self), NULL);
  return self->shape;
}

/**
 * accel_buffer_get_size:
 * @self: a buffer
 *
 * Gets the size in bytes (for a strided shape: the bytes it spans).
 *
 * Returns: the size in bytes (for a strided shape: the bytes it spans)
 */
gsize
accel_buffer_get_size (AccelBuffer *self)
{
  g_return_val_if_fail (ACCEL_IS_BUFFER (self), 0);
  return self->size;
}

/**
 * accel_buffer_get_n_elements:
 * @self: a buffer
 *
 * Gets the number of elements.
 *
 * Returns: the number of elements
 */
gint64
accel_buffer_get_n_elements (AccelBuffer *self)
{
  g_return_val_if_fail (ACCEL_IS_BUFFER (self), 0);
  return accel_shape_get_n_elements (self->shape);
}

/**
 * accel_buffer_get_generation:
 * @self: a buffer
 *
 * Gets the device generation its memory belongs to.
 *
 * Returns: the device generation its memory belongs to
 */
guint
accel_buffer_get_generation (AccelBuffer *self)
{
  g_return_val_if_fail (ACCEL_IS_BUFFER (self), 0);
  return self->generation;
}

/**
 * accel_buffer_get_handle:
 * @self: a buffer
 *
 * Gets a number naming this buffer on its device, unique in the process for
 * the device's life.
 *
 * Returns: a number naming this buffer on its device, unique in the
 *   process for the device's life; used when ops are serialised
 */
guint64
accel_buffer_get_handle (AccelBuffer *self)
{
  g_return_val_if_fail (ACCEL_IS_BUFFER (self), 0);
  return self->handle;
}

/**
 * accel_buffer_get_offset:
 * @self: a buffer
 *
 * Gets the byte offset of a view into its base buffer (0 otherwise).
 *
 * Returns: the byte offset of a view into its base buffer (0 otherwise)
 */
gsize
accel_buffer_get_offset (AccelBuffer *self)
{
  g_return_val_if_fail (ACCEL_IS_BUFFER (self), 0);
  return self->offset;
}

/**
 * accel_buffer_get_base:
 * @self: a buffer
 *
 * Gets the buffer a view was made of.
 *
 * Returns: (transfer none) (nullable): the buffer a view was made of
 */
AccelBuffer *
accel_buffer_get_base (AccelBuffer *self)
{
  g_return_val_if_fail (ACCEL_IS_BUFFER (self), NULL);
  return self->base;
}

/**
 * accel_buffer_is_stale:
 * @self: a buffer
 *
 * Whether the buffer's memory went with an older context of its device; every
 * use of a stale buffer fails with %ACCEL_ERROR_STALE_BUFFER.
 *
 * Returns: %TRUE if its device has been rebuilt since the buffer was made
 */
gboolean
accel_buffer_is_stale (AccelBuffer *self)
{
  g_return_val_if_fail (ACCEL_IS_BUFFER (self), TRUE);
  return self->generation != accel_device_get_generation (self->device);
}

/**
 * accel_buffer_get_memory: (skip)
 * @self: a buffer
 *
 * For backends: the memory of the base allocation, as the backend's
 * mem_alloc returned it.
 *
 * Returns: the backend memory
 */
gpointer
accel_buffer_get_memory (AccelBuffer *self)
{
  g_return_val_if_fail (ACCEL_IS_BUFFER (self), NULL);
  return self->memory;
}

/**
 * accel_buffer_get_data: (skip)
 * @self: a buffer
 *
 * For kernels of backends whose memory is addressable (a host or device
 * pointer): the address of the first element, view offset included.
 *
 * Returns: the address
 */
gpointer
accel_buffer_get_data (AccelBuffer *self)
{
  return (guint8 *) self->memory + self->offset;
}

/**
 * accel_buffer_get_backend_data: (skip)
 * @self: a buffer
 *
 * For backends: gets the state the backend attached to the buffer.
 *
 * Returns: what the backend attached with accel_buffer_set_backend_data()
 */
gpointer
accel_buffer_get_backend_data (AccelBuffer *self)
{
  g_return_val_if_fail (ACCEL_IS_BUFFER (self), NULL);
  return self->backend_data;
}

/* Sets the backend data of a buffer that has none, from any thread; FALSE
 * (nothing done) if another thread set some first. */
gboolean
_accel_buffer_offer_backend_data (AccelBuffer *self, gpointer data, GDestroyNotify destroy)
{
  if (!g_atomic_pointer_compare_and_exchange (&self->backend_data, NULL, data))
    return FALSE;
  /* Read only when the buffer is finalised. */
  self->backend_destroy = destroy;
  return TRUE;
}

/**
 * accel_buffer_set_backend_data: (skip)
 * @self: a buffer
 * @data: backend state (the last writer's event, say)
 * @destroy: (nullable): frees @data with the buffer
 *
 * For backends, on the device thread.
 */
void
accel_buffer_set_backend_data (AccelBuffer *self, gpointer data, GDestroyNotify destroy)
{
  g_return_if_fail (ACCEL_IS_BUFFER (self));
  if (self->backend_destroy)
    self->backend_destroy (self->backend_data);
  self->backend_data = data;
  self->backend_destroy = destroy;
}

static gboolean
check_host_size (AccelBuffer *self, gsize size, GError **error)
{
  if (size != self->size)
    {
      g_autofree char *s = accel_shape_to_string (self->shape);
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH,
                   "Buffer of %s %s holds %" G_GSIZE_FORMAT " bytes, not %" G_GSIZE_FORMAT,
                   accel_dtype_get_name (self->dtype), s, self->size, size);
      return FALSE;
    }
  return TRUE;
}

/* Transfers: work items of the buffer's device, ordered after the ops
 * submitted before them. A blocking transfer's work lives on the caller's
 * stack. */

static gboolean
transfer_sync (AccelBuffer *self, AccelWorkKind kind, gpointer host, gsize size, GError **error)
{
  AccelWork work;

  if (!_accel_device_check_usable (self->device, error)
      || !_accel_device_check_buffer (self->device, self, "The buffer", error))
    return FALSE;
  _accel_work_init_borrowed (&work, self->device, kind);
  work.buffer = self;
  work.host = host;
  work.size = size;
  work.generation = self->generation;
  return _accel_device_run_work_sync (self->device, &work, error);
}

/* Takes @task. */
static void
transfer_async (AccelBuffer *self, AccelWorkKind kind, GBytes *bytes, GTask *task)
{
  GError *error = NULL;

  if (!_accel_device_check_buffer (self->device, self, "The buffer", &error))
    {
      g_task_return_error (task, error);
      g_object_unref (task);
      return;
    }
  AccelWork *work = _accel_work_new (self->device, kind);
  work->buffer = g_object_ref (self);
  work->size = self->size;
  work->generation = self->generation;
  if (kind == ACCEL_WORK_WRITE)
    {
      work->bytes = g_bytes_ref (bytes);
      work->host = (gpointer) g_bytes_get_data (bytes, NULL);
    }
  else
    {
      work->host = g_malloc (work->size ? work->size : 1);
      work->owns_host = TRUE;
    }
  _accel_work_set_task (work, task);
  _accel_device_start_work (self->device, work);
}

/**
 * accel_buffer_write:
 * @self: a buffer
 * @data: (array length=size) (element-type guint8) (transfer none): the bytes
 * @size: must equal accel_buffer_get_size()
 * @error: return location for a #GError
 *
 * Copies host bytes into the buffer and waits until they are there. Ordered
 * after every op submitted to the device before it.
 *
 * Returns: %TRUE on success
 */
gboolean
accel_buffer_write (AccelBuffer *self, const guint8 *data, gsize size, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_BUFFER (self), FALSE);
  g_return_val_if_fail (data != NULL || size == 0, FALSE);
  if (!check_host_size (self, size, error))
    return FALSE;
  return transfer_sync (self, ACCEL_WORK_WRITE, (gpointer) data, size, error);
}

/**
 * accel_buffer_upload:
 * @self: a buffer
 * @bytes: the data, exactly accel_buffer_get_size() bytes
 * @error: return location for a #GError
 *
 * Blocking upload from a #GBytes.
 *
 * Returns: %TRUE on success
 */
gboolean
accel_buffer_upload (AccelBuffer *self, GBytes *bytes, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_BUFFER (self), FALSE);
  g_return_val_if_fail (bytes != NULL, FALSE);
  gsize size;
  gconstpointer data = g_bytes_get_data (bytes, &size);
  return accel_buffer_write (self, data, size, error);
}

/**
 * accel_buffer_read: (skip)
 * @self: a buffer
 * @data: where to copy the bytes
 * @size: must equal accel_buffer_get_size()
 * @error: return location for a #GError
 *
 * Copies the buffer to host memory, after every op submitted before it.
 *
 * Returns: %TRUE on success
 */
gboolean
accel_buffer_read (AccelBuffer *self, guint8 *data, gsize size, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_BUFFER (self), FALSE);
  g_return_val_if_fail (data != NULL || size == 0, FALSE);
  if (!check_host_size (self, size, error))
    return FALSE;
  return transfer_sync (self, ACCEL_WORK_READ, data, size, error);
}

/**
 * accel_buffer_download:
 * @self: a buffer
 * @error: return location for a #GError
 *
 * Blocking download, after every op submitted before it.
 *
 * Returns: (transfer full): the bytes, or %NULL with @error set
 */
GBytes *
accel_buffer_download (AccelBuffer *self, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_BUFFER (self), NULL);
  guint8 *data = g_malloc (self->size ? self->size : 1);
  if (!transfer_sync (self, ACCEL_WORK_READ, data, self->size, error))
    {
      g_free (data);
      return NULL;
    }
  return g_bytes_new_take (data, self->size);
}

/**
 * accel_buffer_zero:
 * @self: a buffer
 * @error: return location for a #GError
 *
 * Fills the buffer with zero bytes and waits.
 *
 * Returns: %TRUE on success
 */
gboolean
accel_buffer_zero (AccelBuffer *self, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_BUFFER (self), FALSE);
  return transfer_sync (self, ACCEL_WORK_ZERO, NULL, self->size, error);
}

/**
 * accel_buffer_upload_async:
 * @self: a buffer
 * @bytes: the data, exactly accel_buffer_get_size() bytes; kept until done
 * @cancellable: (nullable): cancels the upload while it is queued
 * @callback: (scope async): called on the caller's thread-default main context
 * @user_data: data for @callback
 *
 * Uploads without blocking.
 */
void
accel_buffer_upload_async (AccelBuffer *self,
                           GBytes *bytes,
                           GCancellable *cancellable,
                           GAsyncReadyCallback callback,
                           gpointer user_data)
{
  g_return_if_fail (ACCEL_IS_BUFFER (self));
  g_return_if_fail (bytes != NULL);

  GTask *task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, accel_buffer_upload_async);
  g_task_set_check_cancellable (task, FALSE);

  GError *error = NULL;
  if (!check_host_size (self, g_bytes_get_size (bytes), &error))
    {
      g_task_return_error (task, error);
      g_object_unref (task);
      return;
    }
  transfer_async (self, ACCEL_WORK_WRITE, bytes, task);
}

/**
 * accel_buffer_upload_finish:
 * @self: a buffer
 * @result: the result
 * @error: return location for a #GError
 *
 * Finishes accel_buffer_upload_async().
 *
 * Returns: %TRUE on success
 */
gboolean
accel_buffer_upload_finish (AccelBuffer *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

/**
 * accel_buffer_download_async:
 * @self: a buffer
 * @cancellable: (nullable): cancels the download while it is queued
 * @callback: (scope async): called on the caller's thread-default main context
 * @user_data: data for @callback
 *
 * Downloads without blocking, after every op submitted before it.
 */
void
accel_buffer_download_async (AccelBuffer *self,
                             GCancellable *cancellable,
                             GAsyncReadyCallback callback,
                             gpointer user_data)
{
  g_return_if_fail (ACCEL_IS_BUFFER (self));
  GTask *task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, accel_buffer_download_async);
  g_task_set_check_cancellable (task, FALSE);
  transfer_async (self, ACCEL_WORK_READ, NULL, task);
}

/**
 * accel_buffer_download_finish:
 * @self: a buffer
 * @result: the result
 * @error: return location for a #GError
 *
 * Finishes accel_buffer_download_async().
 *
 * Returns: (transfer full): the bytes, or %NULL with @error set
 */
GBytes *
accel_buffer_download_finish (AccelBuffer *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/**
 * accel_buffer_new_view:
 * @self: a buffer with a contiguous shape
 * @element_offset: the first element of the view
 * @shape: the view's shape, contiguous, fitting within @self
 * @error: return location for a #GError
 *
 * Makes a buffer that shares a contiguous range of @self's memory (and
 * keeps @self alive).
 *
 * Returns: (transfer full): the view, or %NULL with
 *   %ACCEL_ERROR_SHAPE_MISMATCH or %ACCEL_ERROR_INVALID_ARGUMENT
 */
AccelBuffer *
accel_buffer_new_view (AccelBuffer *self,
                       gint64 element_offset,
                       const AccelShape *shape,
                       GError **error)
{
  g_return_val_if_fail (ACCEL_IS_BUFFER (self), NULL);
  g_return_val_if_fail (shape != NULL, NULL);

  if (!accel_shape_is_contiguous (self->shape) || !accel_shape_is_contiguous (shape))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "A view needs a contiguous buffer and a contiguous shape");
      return NULL;
    }
  gint64 n = accel_shape_get_n_elements (shape);
  gint64 total = accel_shape_get_n_elements (self->shape);
  if (element_offset < 0 || n < 0 || element_offset > total || n > total - element_offset)
    {
      g_autofree char *s = accel_shape_to_string (shape);
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH,
                   "A view of %s at element %" G_GINT64_FORMAT " does not fit in a buffer of %"
                   G_GINT64_FORMAT " elements", s, element_offset, total);
      return NULL;
    }

  AccelBuffer *base = self->base ? self->base : self;
  gsize esize = accel_dtype_get_size (self->dtype);
  AccelBuffer *view = g_object_new (ACCEL_TYPE_BUFFER, NULL);
  view->device = g_object_ref (self->device);
  view->dtype = self->dtype;
  view->shape = accel_shape_copy (shape);
  view->memory = base->memory;
  view->offset = self->offset + (gsize) element_offset * esize;
  view->size = (gsize) n * esize;
  view->generation = self->generation;
  view->handle = _accel_device_next_handle (self->device);
  view->base = g_object_ref (base);
  return view;
}

AccelBuffer *
_accel_buffer_new_alias (AccelBuffer *self,
                         guint64 byte_offset,
                         AccelDType dtype,
                         const AccelShape *shape,
                         GError **error)
{
  g_return_val_if_fail (ACCEL_IS_BUFFER (self), NULL);
  g_return_val_if_fail (shape != NULL, NULL);

  gsize esize = accel_dtype_get_size (dtype);
  guint rank = accel_shape_get_rank (shape);
  guint64 bytes = 0, end = 0;
  gboolean ok = esize != 0;

  /* Elements on their natural boundary (a complex one on its parts'):
   * kernels load them as the C types they are. A view made here from
   * another process's offset could otherwise start anywhere (found by
   * fuzzing the device host: an f16 axpy at an odd byte). */
  gsize align = accel_dtype_is_complex (dtype) ? esize / 2 : esize;
  if (ok && (self->offset + byte_offset) % align != 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "A buffer of %s at byte %" G_GUINT64_FORMAT " of its allocation is not aligned to its "
                   "%" G_GSIZE_FORMAT "-byte elements", accel_dtype_get_name (dtype),
                   (guint64) self->offset + byte_offset, align);
      return NULL;
    }

  /* Every step checked: the shape may come from another process. */
  ok = ok && _accel_layout_span_bytes (accel_shape_get_dims (shape, NULL), accel_shape_get_strides (shape, NULL),
                                       rank, esize, &bytes)
       && g_uint64_checked_add (&end, byte_offset, bytes)
       && end <= self->size;
  if (!ok)
    {
      g_autofree char *s = accel_shape_to_string (shape);
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH,
                   "A buffer of %s %s at byte %" G_GUINT64_FORMAT " does not fit in a buffer of %"
                   G_GSIZE_FORMAT " bytes", accel_dtype_get_name (dtype), s, byte_offset, self->size);
      return NULL;
    }

  AccelBuffer *base = self->base ? self->base : self;
  AccelBuffer *alias = g_object_new (ACCEL_TYPE_BUFFER, NULL);
  alias->device = g_object_ref (self->device);
  alias->dtype = dtype;
  alias->shape = accel_shape_copy (shape);
  alias->may_overlap = accel_shape_may_overlap (shape);
  alias->memory = base->memory;
  alias->offset = self->offset + byte_offset;
  alias->size = bytes;
  alias->generation = self->generation;
  alias->handle = _accel_device_next_handle (self->device);
  alias->base = g_object_ref (base);
  return alias;
}
