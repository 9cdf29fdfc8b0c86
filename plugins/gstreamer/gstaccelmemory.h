/* gstaccelmemory.h: GstAccelAllocator, memory backed by an AccelBuffer,
 * for frames that stay on an Accel device between Accel elements.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>
#include <accel.h>

G_BEGIN_DECLS

/**
 * GST_CAPS_FEATURE_MEMORY_ACCEL_BUFFER:
 *
 * The caps feature of frames whose memory is a #GstAccelMemory.
 */
#define GST_CAPS_FEATURE_MEMORY_ACCEL_BUFFER "memory:AccelBuffer"

/**
 * GST_ACCEL_MEMORY_TYPE:
 *
 * The memory type name of #GstAccelMemory.
 */
#define GST_ACCEL_MEMORY_TYPE "AccelBuffer"

#define GST_TYPE_ACCEL_ALLOCATOR (gst_accel_allocator_get_type ())
G_DECLARE_FINAL_TYPE (GstAccelAllocator, gst_accel_allocator, GST, ACCEL_ALLOCATOR, GstAllocator)

GstAllocator *gst_accel_allocator_new (AccelDevice *device);
AccelDevice *gst_accel_allocator_get_device (GstAllocator *allocator);

gboolean gst_is_accel_memory (GstMemory *memory);
AccelBuffer *gst_accel_memory_get_buffer (GstMemory *memory);
GstMemory *gst_accel_memory_wrap (GstAllocator *allocator, AccelBuffer *buffer);

/* The one AccelBuffer of @buffer when it is a single GstAccelMemory on
 * @device, else NULL (transfer none). */
AccelBuffer *gst_accel_buffer_peek (GstBuffer *buffer, AccelDevice *device);

G_END_DECLS
