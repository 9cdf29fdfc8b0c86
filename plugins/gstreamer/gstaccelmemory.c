/* gstaccelmemory.c: GstAccelAllocator and its memory, a GstMemory whose
 * bytes are an AccelBuffer (one dimension of u8) on an Accel device.
 *
 * Accel elements pass such memory to each other under the caps feature
 * memory:AccelBuffer, so frames stay on the device. Mapping it (for an
 * element that is not Accel's, or a test) works: on cpu devices it maps
 * the buffer's own bytes; elsewhere it downloads into a host copy, and a
 * writable map uploads that copy again at unmap.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include "gstaccelmemory.h"

GST_DEBUG_CATEGORY_STATIC (gst_accel_memory_debug);
#define GST_CAT_DEFAULT gst_accel_memory_debug

typedef struct {
  GstMemory mem;
  AccelBuffer *buffer;
  gboolean host_direct;    /* the buffer's bytes are addressable host memory */
  GMutex lock;
  guint8 *staging;         /* the host copy while mapped */
  guint maps;              /* under lock */
} GstAccelMemory;

struct _GstAccelAllocator {
  GstAllocator parent_instance;
  AccelDevice *device;
  gboolean host_direct;
};

G_DEFINE_FINAL_TYPE (GstAccelAllocator, gst_accel_allocator, GST_TYPE_ALLOCATOR)

static GstMemory *
memory_new (GstAccelAllocator *self, AccelBuffer *buffer, GstMemory *parent, gsize offset, gsize size)
{
  GstAccelMemory *mem = g_new0 (GstAccelMemory, 1);
  gsize total = accel_buffer_get_size (buffer);

  gst_memory_init (GST_MEMORY_CAST (mem), GST_MEMORY_FLAG_NO_SHARE, GST_ALLOCATOR_CAST (self), parent, total, 0,
                   offset, size);
  mem->buffer = g_object_ref (buffer);
  mem->host_direct = self->host_direct;
  g_mutex_init (&mem->lock);
  return GST_MEMORY_CAST (mem);
}

static GstMemory *
gst_accel_allocator_alloc (GstAllocator *allocator, gsize size, GstAllocationParams *params)
{
  GstAccelAllocator *self = GST_ACCEL_ALLOCATOR (allocator);
  g_autoptr(GError) error = NULL;
  gint64 dims[1] = { (gint64) MAX (size, 1) };
  g_autoptr(AccelShape) shape = accel_shape_new (dims, 1);
  g_autoptr(AccelBuffer) buffer = accel_device_alloc (self->device, ACCEL_DTYPE_U8, shape, &error);

  if (buffer == NULL)
    {
      GST_WARNING_OBJECT (self, "cannot allocate %" G_GSIZE_FORMAT " bytes on %s: %s", size,
                          accel_device_get_name (self->device), error->message);
      return NULL;
    }
  return memory_new (self, buffer, NULL, 0, size);
}

static void
gst_accel_allocator_free (GstAllocator *allocator, GstMemory *memory)
{
  GstAccelMemory *mem = (GstAccelMemory *) memory;

  g_clear_object (&mem->buffer);
  g_clear_pointer (&mem->staging, g_free);
  g_mutex_clear (&mem->lock);
  g_free (mem);
}

static gpointer
accel_mem_map (GstMemory *memory, gsize maxsize, GstMapFlags flags)
{
  GstAccelMemory *mem = (GstAccelMemory *) memory;
  g_autoptr(GError) error = NULL;

  if (mem->host_direct)
    return accel_buffer_get_data (mem->buffer);

  g_mutex_lock (&mem->lock);
  if (mem->staging == NULL)
    {
      mem->staging = g_malloc (memory->maxsize);
      if (!accel_buffer_read (mem->buffer, mem->staging, memory->maxsize, &error))
        {
          GST_ERROR ("cannot download %" G_GSIZE_FORMAT " bytes from %s: %s", memory->maxsize,
                     accel_device_get_name (accel_buffer_get_device (mem->buffer)), error->message);
          g_clear_pointer (&mem->staging, g_free);
        }
    }
  gpointer data = mem->staging;
  mem->maps += data != NULL;
  g_mutex_unlock (&mem->lock);
  return data;
}

static void
accel_mem_unmap_full (GstMemory *memory, GstMapInfo *info)
{
  GstAccelMemory *mem = (GstAccelMemory *) memory;
  g_autoptr(GError) error = NULL;

  if (mem->host_direct)
    return;
  g_mutex_lock (&mem->lock);
  if ((info->flags & GST_MAP_WRITE) && mem->staging
      && !accel_buffer_write (mem->buffer, mem->staging, memory->maxsize, &error))
    GST_ERROR ("cannot upload %" G_GSIZE_FORMAT " bytes to %s: %s", memory->maxsize,
               accel_device_get_name (accel_buffer_get_device (mem->buffer)), error->message);
  /* The last unmap drops the copy, so a later map sees what ops wrote since. */
  if (--mem->maps == 0)
    g_clear_pointer (&mem->staging, g_free);
  g_mutex_unlock (&mem->lock);
}

static GstMemory *
accel_mem_copy (GstMemory *memory, gssize offset, gssize size)
{
  GstAccelMemory *mem = (GstAccelMemory *) memory;
  GstAccelAllocator *self = GST_ACCEL_ALLOCATOR (memory->allocator);
  g_autoptr(GError) error = NULL;

  if (size == -1)
    size = memory->size > (gsize) offset ? memory->size - offset : 0;
  GstMemory *copy = gst_accel_allocator_alloc (GST_ALLOCATOR_CAST (self), memory->maxsize, NULL);
  if (copy == NULL)
    return NULL;
  g_autoptr(AccelOp) op = accel_copy_new (mem->buffer, ((GstAccelMemory *) copy)->buffer);
  if (!accel_device_submit (self->device, op, NULL, &error))
    {
      GST_ERROR_OBJECT (self, "cannot copy a frame on %s: %s", accel_device_get_name (self->device), error->message);
      gst_memory_unref (copy);
      return NULL;
    }
  gst_memory_resize (copy, memory->offset + offset, size);
  return copy;
}

static GstMemory *
accel_mem_share (GstMemory *memory, gssize offset, gssize size)
{
  return NULL;   /* GST_MEMORY_FLAG_NO_SHARE */
}

static void
gst_accel_allocator_finalize (GObject *object)
{
  GstAccelAllocator *self = GST_ACCEL_ALLOCATOR (object);

  g_clear_object (&self->device);
  G_OBJECT_CLASS (gst_accel_allocator_parent_class)->finalize (object);
}

static void
gst_accel_allocator_class_init (GstAccelAllocatorClass *klass)
{
  GstAllocatorClass *allocator_class = GST_ALLOCATOR_CLASS (klass);
  G_OBJECT_CLASS (klass)->finalize = gst_accel_allocator_finalize;
  allocator_class->alloc = gst_accel_allocator_alloc;
  allocator_class->free = gst_accel_allocator_free;
  GST_DEBUG_CATEGORY_INIT (gst_accel_memory_debug, "accelmemory", 0, "Accel device memory");
}

static void
gst_accel_allocator_init (GstAccelAllocator *self)
{
  GstAllocator *allocator = GST_ALLOCATOR_CAST (self);

  allocator->mem_type = GST_ACCEL_MEMORY_TYPE;
  allocator->mem_map = accel_mem_map;
  allocator->mem_unmap_full = accel_mem_unmap_full;
  allocator->mem_copy = accel_mem_copy;
  allocator->mem_share = accel_mem_share;
  GST_OBJECT_FLAG_SET (self, GST_ALLOCATOR_FLAG_CUSTOM_ALLOC);
}

/**
 * gst_accel_allocator_new:
 * @device: the device the memory lives on
 *
 * Returns: (transfer full): an allocator of memory on @device
 */
GstAllocator *
gst_accel_allocator_new (AccelDevice *device)
{
  g_return_val_if_fail (ACCEL_IS_DEVICE (device), NULL);

  GstAccelAllocator *self = g_object_new (GST_TYPE_ACCEL_ALLOCATOR, NULL);
  gst_object_ref_sink (self);
  self->device = g_object_ref (device);
  self->host_direct = g_str_equal (accel_device_get_backend_name (device), "cpu");
  return GST_ALLOCATOR_CAST (self);
}

/**
 * gst_accel_allocator_get_device:
 * @allocator: a #GstAccelAllocator
 *
 * Returns: (transfer none): its device
 */
AccelDevice *
gst_accel_allocator_get_device (GstAllocator *allocator)
{
  g_return_val_if_fail (GST_IS_ACCEL_ALLOCATOR (allocator), NULL);
  return GST_ACCEL_ALLOCATOR (allocator)->device;
}

/**
 * gst_is_accel_memory:
 * @memory: a #GstMemory
 *
 * Returns: whether @memory is backed by an #AccelBuffer
 */
gboolean
gst_is_accel_memory (GstMemory *memory)
{
  return memory != NULL && memory->allocator != NULL && GST_IS_ACCEL_ALLOCATOR (memory->allocator);
}

/**
 * gst_accel_memory_get_buffer:
 * @memory: a #GstAccelMemory
 *
 * Returns: (transfer none): the #AccelBuffer holding @memory's bytes
 */
AccelBuffer *
gst_accel_memory_get_buffer (GstMemory *memory)
{
  g_return_val_if_fail (gst_is_accel_memory (memory), NULL);
  return ((GstAccelMemory *) memory)->buffer;
}

/**
 * gst_accel_memory_wrap:
 * @allocator: a #GstAccelAllocator on @buffer's device
 * @buffer: (transfer none): a u8 buffer
 *
 * Returns: (transfer full): memory holding all of @buffer's bytes
 */
GstMemory *
gst_accel_memory_wrap (GstAllocator *allocator, AccelBuffer *buffer)
{
  g_return_val_if_fail (GST_IS_ACCEL_ALLOCATOR (allocator), NULL);
  g_return_val_if_fail (ACCEL_IS_BUFFER (buffer), NULL);
  return memory_new (GST_ACCEL_ALLOCATOR (allocator), buffer, NULL, 0, accel_buffer_get_size (buffer));
}

AccelBuffer *
gst_accel_buffer_peek (GstBuffer *buffer, AccelDevice *device)
{
  if (gst_buffer_n_memory (buffer) != 1)
    return NULL;
  GstMemory *memory = gst_buffer_peek_memory (buffer, 0);
  if (!gst_is_accel_memory (memory) || memory->offset != 0)
    return NULL;
  AccelBuffer *b = gst_accel_memory_get_buffer (memory);
  return accel_buffer_get_device (b) == device ? b : NULL;
}
