/* fuzz-op-handle.h: buffer handles that describe their buffer, for the
 * fuzzers that deserialise ops (and the seeds made for them): whatever
 * 64 bits the mutator makes names a buffer of some dtype, shape and layout.
 *
 *   bits 0-3 dtype, 4-6 rank, 7-8 layout, 9-12 instance (distinct buffers
 *   of one description), 16-63 up to six dimensions of 8 bits each
 *
 * Layouts: contiguous; column-major; the outermost stride doubled
 * (padded rows); the outermost stride 0 (a broadcast).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel-private.h"

typedef enum {
  FUZZ_LAYOUT_CONTIGUOUS,
  FUZZ_LAYOUT_COLUMN_MAJOR,
  FUZZ_LAYOUT_PADDED,
  FUZZ_LAYOUT_BROADCAST,
} FuzzLayout;

#define FUZZ_HANDLE_MAX_RANK 6

typedef struct {
  AccelDType dtype;
  guint rank;
  FuzzLayout layout;
  guint instance;
  gint64 dims[FUZZ_HANDLE_MAX_RANK];
} FuzzHandle;

static inline gboolean
fuzz_handle_decode (guint64 handle, FuzzHandle *h)
{
  h->dtype = handle & 15;
  h->rank = (handle >> 4) & 7;
  h->layout = (handle >> 7) & 3;
  h->instance = (handle >> 9) & 15;
  if (h->dtype >= ACCEL_DTYPE_N_TYPES || h->rank > FUZZ_HANDLE_MAX_RANK)
    return FALSE;
  for (guint i = 0; i < h->rank; i++)
    h->dims[i] = (handle >> (16 + 8 * i)) & 255;
  return TRUE;
}

static inline guint64
fuzz_handle_encode (const FuzzHandle *h)
{
  guint64 handle = (guint64) h->dtype | (guint64) h->rank << 4 | (guint64) h->layout << 7
                   | (guint64) h->instance << 9;
  for (guint i = 0; i < h->rank; i++)
    handle |= (guint64) (h->dims[i] & 255) << (16 + 8 * i);
  return handle;
}

/* Fills @strides; returns the extent in elements (0 for an empty shape). */
static inline gint64
fuzz_handle_strides (const FuzzHandle *h, gint64 *strides)
{
  gint64 step = 1;
  gboolean empty = FALSE;

  for (guint k = 0; k < h->rank; k++)
    {
      guint i = h->layout == FUZZ_LAYOUT_COLUMN_MAJOR ? k : h->rank - 1 - k;
      strides[i] = step;
      step *= MAX (h->dims[i], 1);
      empty = empty || h->dims[i] == 0;
    }
  if (h->rank > 0 && h->layout == FUZZ_LAYOUT_PADDED)
    strides[0] *= 2;
  if (h->rank > 0 && h->layout == FUZZ_LAYOUT_BROADCAST)
    strides[0] = 0;
  if (empty)
    return 0;
  gint64 last = 0;
  for (guint i = 0; i < h->rank; i++)
    last += (h->dims[i] - 1) * strides[i];
  return last + 1;
}
