/* accel-journal-replay.c: runs a journal's work again on a target device
 * and compares each op's outputs with what was recorded. See
 * accel-journal-replay.h.
 *
 * Buffers: each recorded device's allocations (by base handle) become
 * allocations of the target, and each buffer a view of one, as the
 * journal's buffer tables describe them. Uploads and zeroes are replayed
 * as recorded. An op whose inputs' bytes were recorded gets exactly them
 * (so that each op is judged on its own); otherwise its inputs are what
 * the replay made of them, and if they differ from the recorded digests
 * the result says so (the difference came from upstream).
 *
 * Outputs agree when every element is within the dtype's tolerance
 * (bytes recorded), or when the digests match exactly or their sums agree
 * within that tolerance (digests only). Nothing read is trusted: tables,
 * sizes and handles are checked, and a record that does not fit is
 * skipped with the reason.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>

#include "accel-journal-replay.h"

typedef struct {
  guint32 device;
  guint64 handle;
} BaseKey;

static guint
base_key_hash (gconstpointer p)
{
  const BaseKey *k = p;
  return g_int64_hash (&k->handle) ^ (k->device * 2654435761u);
}

static gboolean
base_key_equal (gconstpointer a, gconstpointer b)
{
  const BaseKey *x = a, *y = b;
  return x->device == y->device && x->handle == y->handle;
}

struct _AccelJournalReplay {
  AccelDevice *target;
  GHashTable *devices;          /* index -> name */
  GHashTable *ops;              /* OP id -> its record */
  GPtrArray *steps;             /* RUN, WRITE and ZERO records */
  GHashTable *bases;            /* BaseKey -> AccelBuffer of the target */
};

const char *
_accel_replay_verdict_name (AccelReplayVerdict verdict)
{
  switch (verdict)
    {
    case ACCEL_REPLAY_IDENTICAL: return "identical";
    case ACCEL_REPLAY_AGREE: return "agree";
    case ACCEL_REPLAY_DIFFER: return "DIFFER";
    case ACCEL_REPLAY_RECORDED_FAILURE: return "failed-when-recorded";
    case ACCEL_REPLAY_FAILED: return "FAILED";
    case ACCEL_REPLAY_SKIPPED: return "skipped";
    default: return "?";
    }
}

AccelJournalReplay *
_accel_journal_replay_new (AccelDevice *target)
{
  AccelJournalReplay *self = g_new0 (AccelJournalReplay, 1);
  self->target = g_object_ref (target);
  self->devices = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, g_free);
  self->ops = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                     (GDestroyNotify) _accel_journal_record_free);
  self->steps = g_ptr_array_new_with_free_func ((GDestroyNotify) _accel_journal_record_free);
  self->bases = g_hash_table_new_full (base_key_hash, base_key_equal, g_free, g_object_unref);
  return self;
}

void
_accel_journal_replay_free (AccelJournalReplay *self)
{
  if (self == NULL)
    return;
  g_hash_table_unref (self->bases);
  g_ptr_array_unref (self->steps);
  g_hash_table_unref (self->ops);
  g_hash_table_unref (self->devices);
  g_object_unref (self->target);
  g_free (self);
}

static guint64
step_seq (const AccelJournalRecord *r)
{
  if (r->kind == ACCEL_JOURNAL_RUN)
    return r->run.seq;
  g_autoptr(GVariant) seq = g_variant_get_child_value (r->body, 0);
  return g_variant_get_uint64 (seq);
}

static gint
compare_steps (gconstpointer a, gconstpointer b)
{
  guint64 x = step_seq (*(AccelJournalRecord **) a), y = step_seq (*(AccelJournalRecord **) b);
  return x < y ? -1 : x > y;
}

gboolean
_accel_journal_replay_load (AccelJournalReplay *self, GBytes *journal, GError **damage, GError **error)
{
  g_autoptr(AccelJournalReader) reader = _accel_journal_reader_new (journal, error);
  if (reader == NULL)
    return FALSE;

  AccelJournalRecord *r;
  while ((r = _accel_journal_reader_next (reader, damage)))
    switch (r->kind)
      {
      case ACCEL_JOURNAL_DEVICE:
        {
          guint32 index;
          const char *name;
          g_variant_get (r->body, "(u&s)", &index, &name);
          g_hash_table_replace (self->devices, GUINT_TO_POINTER (index), g_strdup (name));
          _accel_journal_record_free (r);
        }
        break;
      case ACCEL_JOURNAL_OP:
        {
          g_autoptr(GVariant) id = g_variant_get_child_value (r->body, 0);
          g_hash_table_replace (self->ops, g_memdup2 (&(guint64) { g_variant_get_uint64 (id) }, 8), r);
        }
        break;
      case ACCEL_JOURNAL_RUN:
      case ACCEL_JOURNAL_WRITE:
      case ACCEL_JOURNAL_ZERO:
        g_ptr_array_add (self->steps, r);
        break;
      default:
        _accel_journal_record_free (r);
      }
  /* Records are appended as work completes: run them in the order run. */
  g_ptr_array_sort (self->steps, compare_steps);
  return TRUE;
}

/* ---- buffers -------------------------------------------------------------- */

/* The target's view for a buffer table entry of @device's. */
static AccelBuffer *
make_view (AccelJournalReplay *self, guint32 device, GVariant *entry, GError **error)
{
  guint64 handle, base_handle, base_size, offset;
  guint32 dtype;
  g_autoptr(GVariant) dims_v = NULL, strides_v = NULL;
  g_variant_get (entry, "(ttttu@ax@ax)", &handle, &base_handle, &base_size, &offset, &dtype,
                 &dims_v, &strides_v);
  gsize n_dims, n_strides;
  const gint64 *dims = g_variant_get_fixed_array (dims_v, &n_dims, sizeof (gint64));
  const gint64 *strides = g_variant_get_fixed_array (strides_v, &n_strides, sizeof (gint64));
  gboolean ok = n_dims == n_strides && n_dims <= ACCEL_SHAPE_MAX_RANK && accel_dtype_get_size (dtype) != 0
                && base_size > 0 && base_size <= G_MAXINT64;
  for (gsize i = 0; ok && i < n_dims; i++)
    ok = dims[i] >= 0 && strides[i] >= 0;
  if (!ok)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "buffer %" G_GUINT64_FORMAT " has a bad dtype, shape or allocation", handle);
      return NULL;
    }

  BaseKey key = { device, base_handle };
  AccelBuffer *base = g_hash_table_lookup (self->bases, &key);
  if (base && accel_buffer_get_size (base) != base_size)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "allocation %" G_GUINT64_FORMAT " is recorded with two sizes", base_handle);
      return NULL;
    }
  if (base == NULL)
    {
      g_autoptr(AccelShape) flat = accel_shape_new_1d ((gint64) base_size);
      base = accel_device_alloc (self->target, ACCEL_DTYPE_U8, flat, error);
      if (base == NULL)
        return NULL;
      g_hash_table_insert (self->bases, g_memdup2 (&key, sizeof key), base);
    }
  g_autoptr(AccelShape) shape = accel_shape_new_strided (dims, strides, n_dims);
  return _accel_buffer_new_alias (base, offset, dtype, shape, error);
}

static char *
op_type_of (GVariant *serialized)
{
  const char *name = NULL;
  g_variant_get_child (serialized, 0, "&s", &name);
  return g_strdup (name);
}

/* ---- comparing ------------------------------------------------------------- */

/* How far a result may be from another backend's and still agree: a few
 * units in the last place of the dtype, after the reordering of sums that
 * different kernels do. */
static double
dtype_tolerance (AccelDType dtype)
{
  switch (dtype)
    {
    case ACCEL_DTYPE_F16: return 1e-2;
    case ACCEL_DTYPE_BF16: return 5e-2;
    case ACCEL_DTYPE_F32: case ACCEL_DTYPE_C64: return 2e-4;
    case ACCEL_DTYPE_F64: case ACCEL_DTYPE_C128: return 1e-9;
    case ACCEL_DTYPE_FP8_E4M3: case ACCEL_DTYPE_FP8_E5M2: return 0.25;
    default: return 0;   /* integers: exact */
    }
}

typedef struct {
  AccelReplayVerdict verdict;
  GString *detail;
  double op_tolerance;       /* the loosest of the op's buffers' dtypes */
} Outcome;

/* An output can be no closer than the least exact of the values it was
 * computed from: a cast of f32 into f64 carries f32's differences. */
static void
loosest_tolerance (AccelOp *op, GParamSpec *pspec, AccelBuffer *b, AccelAccess access, gpointer data)
{
  double *tol = data;
  if (b != NULL)
    *tol = MAX (*tol, dtype_tolerance (accel_buffer_get_dtype (b)));
}

static void
worse (Outcome *o, AccelReplayVerdict v)
{
  if (v > o->verdict)
    o->verdict = v;
}

/* Element by element, against the recorded bytes. */
static void
compare_bytes (Outcome *o, const char *what, AccelDType dtype, const guint8 *got, const guint8 *want, gsize n_bytes)
{
  gsize esize = accel_dtype_get_size (dtype), n = n_bytes / esize;
  double tol = MAX (dtype_tolerance (dtype), o->op_tolerance), scale = 0, worst = 0;
  gsize worst_at = 0;

  /* An empty output has nothing to compare (and no bytes to point to). */
  if (n_bytes == 0 || memcmp (got, want, n_bytes) == 0)
    return;
  for (gsize i = 0; i < n; i++)
    {
      double im, re = _accel_journal_element_value (dtype, want + i * esize, &im);
      if (isfinite (re) && isfinite (im))
        scale += fabs (re) + fabs (im);
    }
  scale = n ? scale / n : 0;
  for (gsize i = 0; i < n; i++)
    {
      double wi, wr = _accel_journal_element_value (dtype, want + i * esize, &wi);
      double gi, gr = _accel_journal_element_value (dtype, got + i * esize, &gi);
      double err;
      if (isnan (wr) || isnan (wi) || isnan (gr) || isnan (gi))
        err = (isnan (wr) == isnan (gr) && isnan (wi) == isnan (gi)) ? 0 : INFINITY;
      else if (!isfinite (wr) || !isfinite (gr) || !isfinite (wi) || !isfinite (gi))
        err = (wr == gr && wi == gi) ? 0 : INFINITY;
      else
        err = (fabs (gr - wr) + fabs (gi - wi)) / (tol * (scale + fabs (wr) + fabs (wi)) + 1e-300);
      if (err > worst)
        {
          worst = err;
          worst_at = i;
        }
    }
  if (worst <= 1)
    {
      worse (o, ACCEL_REPLAY_AGREE);
      return;
    }
  worse (o, ACCEL_REPLAY_DIFFER);
  double wi, wr = _accel_journal_element_value (dtype, want + worst_at * esize, &wi);
  double gi, gr = _accel_journal_element_value (dtype, got + worst_at * esize, &gi);
  g_string_append_printf (o->detail, "%s%s: element %" G_GSIZE_FORMAT " is %g, recorded %g "
                          "(the worst of %" G_GSIZE_FORMAT "; %s tolerance %g)",
                          o->detail->len ? "; " : "", what, worst_at, gr, wr, n,
                          accel_dtype_get_name (dtype), tol);
}

/* Digests only: equal, or sums within the tolerance. */
static void
compare_digests (Outcome *o, const char *what, AccelDType dtype, const AccelJournalDigest *got,
                 const AccelJournalDigest *want)
{
  if (got->hash == want->hash && got->n_bytes == want->n_bytes)
    return;
  double tol = MAX (dtype_tolerance (dtype), o->op_tolerance);
  double slack = tol * (want->l1 + got->l1) / 2 + 1e-300;
  if (got->n_bytes == want->n_bytes && got->nonfinite == want->nonfinite && tol > 0
      && fabs (got->sum - want->sum) <= slack && fabs (got->l1 - want->l1) <= slack)
    {
      worse (o, ACCEL_REPLAY_AGREE);
      return;
    }
  worse (o, ACCEL_REPLAY_DIFFER);
  g_string_append_printf (o->detail, "%s%s: sum %g, recorded %g; magnitude %g, recorded %g; "
                          "%" G_GUINT64_FORMAT " not finite, recorded %" G_GUINT64_FORMAT,
                          o->detail->len ? "; " : "", what, got->sum, want->sum, got->l1, want->l1,
                          got->nonfinite, want->nonfinite);
}

typedef struct {
  AccelBuffer *view;
  const char *name;
} Named;

static void
find_property (AccelOp *op, GParamSpec *pspec, AccelBuffer *b, AccelAccess access, gpointer data)
{
  Named *named = data;
  if (b == named->view && named->name == NULL)
    named->name = pspec->name;
}

/* ---- running ------------------------------------------------------------------ */

typedef struct {
  AccelJournalReplay *self;
  guint32 device;
  GHashTable *views;            /* recorded handle -> view */
  GVariant *table;
  GError *error;
} Resolve;

static AccelBuffer *
resolve (guint64 handle, gpointer data)
{
  Resolve *r = data;
  AccelBuffer *view = g_hash_table_lookup (r->views, &handle);
  if (view)
    return g_object_ref (view);
  if (r->error)
    return NULL;
  gsize n = g_variant_n_children (r->table);
  for (gsize i = 0; i < n; i++)
    {
      g_autoptr(GVariant) entry = g_variant_get_child_value (r->table, i);
      guint64 h;
      g_variant_get_child (entry, 0, "t", &h);
      if (h != handle)
        continue;
      view = make_view (r->self, r->device, entry, &r->error);
      if (view == NULL)
        return NULL;
      g_hash_table_insert (r->views, g_memdup2 (&handle, sizeof handle), view);
      return g_object_ref (view);
    }
  g_set_error (&r->error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
               "the op names buffer %" G_GUINT64_FORMAT ", which its table lacks", handle);
  return NULL;
}

static GBytes *
download (AccelBuffer *view, GError **error)
{
  return accel_buffer_download (view, error);
}

static void
replay_run (AccelJournalReplay *self, AccelJournalRecord *r, AccelReplayResult *result, Outcome *o)
{
  guint64 op_id = r->run.op;
  AccelJournalRecord *def = g_hash_table_lookup (self->ops, &op_id);
  if (def == NULL)
    {
      o->verdict = ACCEL_REPLAY_SKIPPED;
      g_string_append (o->detail, "its OP record is missing");
      return;
    }
  g_autoptr(GVariant) serialized = g_variant_get_child_value (def->body, 1);
  g_autoptr(GVariant) table = g_variant_get_child_value (def->body, 2);
  g_autofree char *type = op_type_of (serialized);
  result->op_type = g_intern_string (type);

  g_autoptr(GHashTable) views = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_object_unref);
  Resolve res = { self, r->run.device, views, table, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelOp) op = accel_op_deserialize (serialized, resolve, &res, &error);
  if (res.error)
    {
      g_clear_error (&error);
      error = res.error;
    }
  if (op == NULL)
    {
      o->verdict = ACCEL_REPLAY_SKIPPED;
      g_string_append (o->detail, error->message);
      return;
    }

  /* Inputs: as recorded when the bytes are there; else say if they differ. */
  guint n = r->run.n_inputs + r->run.n_outputs;
  for (guint i = 0; i < n; i++)
    {
      const AccelJournalDigest *d = &r->digests[i];
      AccelBuffer *view = g_hash_table_lookup (views, &d->handle);
      if (view == NULL)
        {
          o->verdict = ACCEL_REPLAY_SKIPPED;
          g_string_append_printf (o->detail, "a digest of buffer %" G_GUINT64_FORMAT ", which the op lacks",
                                  d->handle);
          return;
        }
      if (i >= r->run.n_inputs)
        continue;
      g_autoptr(GBytes) now = download (view, &error);
      if (now == NULL)
        break;
      AccelJournalDigest got = { d->handle };
      _accel_journal_digest (&got, accel_buffer_get_dtype (view), accel_buffer_get_shape (view),
                             g_bytes_get_data (now, NULL));
      if (d->n_bytes > 0 && (got.hash != d->hash || got.n_bytes != d->n_bytes))
        result->inputs_diverged = TRUE;
      if (r->bytes && r->bytes[i] && d->n_bytes == got.n_bytes)
        {
          gsize size;
          g_autofree guint8 *data = g_bytes_unref_to_data (g_steal_pointer (&now), &size);
          _accel_journal_scatter (accel_buffer_get_dtype (view), accel_buffer_get_shape (view), r->bytes[i], data);
          if (!accel_buffer_write (view, data, size, &error))
            break;
        }
    }
  if (error == NULL)
    accel_device_submit (self->target, op, NULL, &error);

  if (r->run.error_domain != 0)
    {
      o->verdict = ACCEL_REPLAY_RECORDED_FAILURE;
      g_string_append_printf (o->detail, "recorded: %s; replayed: %s", r->message ? r->message : "?",
                              error ? error->message : "ran");
      return;
    }
  if (error)
    {
      o->verdict = ACCEL_REPLAY_FAILED;
      g_string_append (o->detail, error->message);
      return;
    }

  _accel_op_foreach_buffer (op, loosest_tolerance, &o->op_tolerance);
  for (guint i = r->run.n_inputs; i < n; i++)
    {
      const AccelJournalDigest *d = &r->digests[i];
      AccelBuffer *view = g_hash_table_lookup (views, &d->handle);
      Named named = { view, NULL };
      _accel_op_foreach_buffer (op, find_property, &named);
      const char *what = named.name ? named.name : "an output";
      AccelDType dtype = accel_buffer_get_dtype (view);
      g_autoptr(GBytes) now = download (view, &error);
      if (now == NULL)
        {
          o->verdict = ACCEL_REPLAY_FAILED;
          g_string_append (o->detail, error->message);
          return;
        }
      AccelJournalDigest got = { d->handle };
      _accel_journal_digest (&got, dtype, accel_buffer_get_shape (view), g_bytes_get_data (now, NULL));
      if (r->bytes && r->bytes[i] && d->n_bytes == got.n_bytes)
        {
          gsize n_bytes;
          g_autofree guint8 *gathered = _accel_journal_gather (dtype, accel_buffer_get_shape (view),
                                                               g_bytes_get_data (now, NULL), &n_bytes);
          compare_bytes (o, what, dtype, gathered, r->bytes[i], n_bytes);
        }
      else if (d->n_bytes == 0 && got.n_bytes > 0)
        g_string_append_printf (o->detail, "%s%s: not recorded", o->detail->len ? "; " : "", what);
      else
        compare_digests (o, what, dtype, &got, d);
    }
}

static void
replay_transfer (AccelJournalReplay *self, AccelJournalRecord *r, AccelReplayResult *result, Outcome *o)
{
  guint64 seq, zero;
  guint32 device, generation;
  g_autoptr(GVariant) entry = NULL;
  g_autoptr(GVariant) bytes = NULL;
  if (r->kind == ACCEL_JOURNAL_WRITE)
    g_variant_get (r->body, "(ttuu@" ACCEL_JOURNAL_ENTRY_TYPE "@ay)", &seq, &zero, &device, &generation,
                   &entry, &bytes);
  else
    g_variant_get (r->body, "(ttuu@" ACCEL_JOURNAL_ENTRY_TYPE ")", &seq, &zero, &device, &generation, &entry);
  result->op_type = r->kind == ACCEL_JOURNAL_WRITE ? "upload" : "zero";
  result->device = g_hash_table_lookup (self->devices, GUINT_TO_POINTER (device));
  result->generation = generation;

  g_autoptr(GError) error = NULL;
  g_autoptr(AccelBuffer) view = make_view (self, device, entry, &error);
  if (view && bytes)
    {
      gsize size;
      const guint8 *data = g_variant_get_fixed_array (bytes, &size, 1);
      if (size != accel_buffer_get_size (view))
        g_set_error (&error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                     "%" G_GSIZE_FORMAT " bytes recorded for a buffer of %" G_GSIZE_FORMAT, size,
                     accel_buffer_get_size (view));
      else
        accel_buffer_write (view, data, size, &error);
    }
  else if (view)
    accel_buffer_zero (view, &error);
  if (error)
    {
      o->verdict = view ? ACCEL_REPLAY_FAILED : ACCEL_REPLAY_SKIPPED;
      g_string_append (o->detail, error->message);
    }
}

void
_accel_journal_replay_run (AccelJournalReplay *self, AccelReplayFunc func, gpointer user_data)
{
  for (guint i = 0; i < self->steps->len; i++)
    {
      AccelJournalRecord *r = self->steps->pdata[i];
      Outcome o = { ACCEL_REPLAY_IDENTICAL, g_string_new (NULL) };
      AccelReplayResult result = { step_seq (r), NULL, 0, "?", 0, NULL, FALSE };
      guint generation = accel_device_get_generation (self->target);

      if (r->kind == ACCEL_JOURNAL_RUN)
        {
          result.device = g_hash_table_lookup (self->devices, GUINT_TO_POINTER (r->run.device));
          result.generation = r->run.generation;
          replay_run (self, r, &result, &o);
        }
      else
        replay_transfer (self, r, &result, &o);

      /* An op that lost the target's context (as a recorded fault does)
       * took the target's memory with it: allocations start again, from
       * what later records write. */
      if (accel_device_get_generation (self->target) != generation)
        {
          g_hash_table_remove_all (self->bases);
          g_string_append_printf (o.detail, "%sthe target %s lost its context; the buffers made so far are gone",
                                  o.detail->len ? "; " : "", accel_device_get_name (self->target));
        }
      if (result.device == NULL)
        result.device = "?";
      result.verdict = o.verdict;
      result.detail = o.detail->str;
      if (r->kind == ACCEL_JOURNAL_RUN || o.verdict != ACCEL_REPLAY_IDENTICAL)
        func (&result, user_data);
      g_string_free (o.detail, TRUE);
    }
}
