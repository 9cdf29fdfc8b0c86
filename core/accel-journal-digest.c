/* accel-journal-digest.c: what the journal keeps of a buffer's contents
 * when it does not keep its bytes (see AccelJournalDigest), and the
 * gathering of a strided buffer's elements in index order. Used by the
 * recording and by accel-replay.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "accel-half.h"
#include "accel-journal-private.h"

double
_accel_journal_element_value (AccelDType dtype, const guint8 *p, double *imag)
{
  *imag = 0;
  switch (dtype)
    {
    case ACCEL_DTYPE_F16: { guint16 h; memcpy (&h, p, 2); return accel_f16_to_f32 (h); }
    case ACCEL_DTYPE_BF16: { guint16 h; memcpy (&h, p, 2); return accel_bf16_to_f32 (h); }
    case ACCEL_DTYPE_F32: { float f; memcpy (&f, p, 4); return f; }
    case ACCEL_DTYPE_F64: { double d; memcpy (&d, p, 8); return d; }
    case ACCEL_DTYPE_C64: { float f[2]; memcpy (f, p, 8); *imag = f[1]; return f[0]; }
    case ACCEL_DTYPE_C128: { double d[2]; memcpy (d, p, 16); *imag = d[1]; return d[0]; }
    case ACCEL_DTYPE_I8: return (gint8) p[0];
    case ACCEL_DTYPE_U8: return p[0];
    case ACCEL_DTYPE_I32: { gint32 v; memcpy (&v, p, 4); return v; }
    case ACCEL_DTYPE_U32: { guint32 v; memcpy (&v, p, 4); return v; }
    case ACCEL_DTYPE_I64: { gint64 v; memcpy (&v, p, 8); return (double) v; }
    case ACCEL_DTYPE_FP8_E4M3: return accel_fp8_e4m3_to_f32 (p[0]);
    case ACCEL_DTYPE_FP8_E5M2: return accel_fp8_e5m2_to_f32 (p[0]);
    default: return 0;
    }
}

guint32
_accel_journal_checksum (const void *data, gsize size)
{
  return (guint32) XXH3_64bits (data, size);
}

static void
digest_add (AccelJournalDigest *d, AccelDType dtype, const guint8 *p, gsize esize, gsize n)
{
  d->n_bytes += n * esize;
  for (gsize i = 0; i < n; i++, p += esize)
    {
      double im, re = _accel_journal_element_value (dtype, p, &im);
      if (isfinite (re) && isfinite (im))
        {
          d->sum += re + im;
          d->l1 += fabs (re) + fabs (im);
        }
      else
        d->nonfinite++;
    }
}

/* Calls @func on each run of contiguous elements of @shape, in index order. */
static void
walk_elements (const AccelShape *shape, gsize esize, const guint8 *data,
               void (*func) (const guint8 *p, gsize n, gpointer user_data), gpointer user_data)
{
  guint rank = accel_shape_get_rank (shape);
  gint64 n = accel_shape_get_n_elements (shape);
  if (n <= 0)
    return;
  if (rank == 0 || accel_shape_is_contiguous (shape))
    {
      func (data, n, user_data);
      return;
    }
  /* The innermost dimension at a time when its stride is 1, else element by element. */
  gint64 inner = accel_shape_get_stride (shape, rank - 1) == 1 ? accel_shape_get_dim (shape, rank - 1) : 1;
  guint outer_rank = inner > 1 ? rank - 1 : rank;
  gint64 index[ACCEL_SHAPE_MAX_RANK] = { 0 };
  for (gint64 done = 0; done < n; done += inner)
    {
      gint64 offset = 0;
      for (guint i = 0; i < outer_rank; i++)
        offset += index[i] * accel_shape_get_stride (shape, i);
      func (data + offset * (gint64) esize, inner, user_data);
      for (int i = (int) outer_rank - 1; i >= 0; i--)
        {
          if (++index[i] < accel_shape_get_dim (shape, i))
            break;
          index[i] = 0;
        }
    }
}

typedef struct {
  AccelJournalDigest *digest;
  XXH3_state_t *hash;           /* of a digest over several runs */
  AccelDType dtype;
  gsize esize;
  GByteArray *gathered;
  const guint8 *scatter;        /* gathered bytes to put back, read from here on */
} Walk;

static void
digest_run (const guint8 *p, gsize n, gpointer data)
{
  Walk *w = data;
  if (w->digest)
    {
      if (w->hash)
        XXH3_64bits_update (w->hash, p, n * w->esize);
      digest_add (w->digest, w->dtype, p, w->esize, n);
    }
  if (w->gathered)
    g_byte_array_append (w->gathered, p, n * w->esize);
  if (w->scatter)
    {
      memcpy ((guint8 *) p, w->scatter, n * w->esize);
      w->scatter += n * w->esize;
    }
}

void
_accel_journal_digest (AccelJournalDigest *digest, AccelDType dtype, const AccelShape *shape, const guint8 *data)
{
  guint64 handle = digest->handle;
  memset (digest, 0, sizeof *digest);
  digest->handle = handle;
  Walk w = { digest, NULL, dtype, accel_dtype_get_size (dtype), NULL, NULL };
  gint64 n = accel_shape_get_n_elements (shape);
  if (n > 0 && (accel_shape_get_rank (shape) == 0 || accel_shape_is_contiguous (shape)))
    {
      /* One run: hashed at once (the state's set-up costs more than the
       * hash of a small buffer). */
      digest->hash = _accel_journal_checksum (data, (gsize) n * w.esize);
      walk_elements (shape, w.esize, data, digest_run, &w);
      return;
    }
  XXH3_state_t state;
  XXH3_64bits_reset (&state);
  w.hash = &state;
  walk_elements (shape, w.esize, data, digest_run, &w);
  digest->hash = (guint32) XXH3_64bits_digest (&state);
}

guint8 *
_accel_journal_gather (AccelDType dtype, const AccelShape *shape, const guint8 *data, gsize *n_bytes)
{
  Walk w = { NULL, NULL, dtype, accel_dtype_get_size (dtype), g_byte_array_new (), NULL };
  walk_elements (shape, w.esize, data, digest_run, &w);
  *n_bytes = w.gathered->len;
  return g_byte_array_free (w.gathered, FALSE);
}

void
_accel_journal_scatter (AccelDType dtype, const AccelShape *shape, const guint8 *gathered, guint8 *data)
{
  Walk w = { NULL, NULL, dtype, accel_dtype_get_size (dtype), NULL, gathered };
  walk_elements (shape, w.esize, data, digest_run, &w);
}
