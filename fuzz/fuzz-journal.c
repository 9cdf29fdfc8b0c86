/* fuzz-journal.c: the journal reader (core/accel-journal-reader.c) and
 * what accel-replay does with what it reads (tools/accel-journal-replay.c):
 * the input is a journal file's bytes, replayed on cpu:0.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include "fuzz-env.h"
#include "accel-journal-replay.h"

/* Mutations seldom keep a record's checksum right, which stops the reader
 * at once: for inputs of even size the harness sets each record's
 * checksum to what its bytes need (as far as the lengths lead), so that
 * bodies get fuzzed too; odd sizes are read as they are. */
static guint8 *
fix_checksums (const guint8 *data, gsize size)
{
  guint8 *copy = g_memdup2 (data, size);
  gsize pos = ACCEL_JOURNAL_HEADER_SIZE;
  while (pos + ACCEL_JOURNAL_RECORD_HEAD <= size)
    {
      guint32 length;
      memcpy (&length, copy + pos, 4);
      length = GUINT32_FROM_LE (length);
      if (length < 8 || length > size - pos - 8)
        break;
      guint32 checksum = GUINT32_TO_LE (_accel_journal_checksum (copy + pos + 8, length));
      memcpy (copy + pos + 4, &checksum, 4);
      pos += ((gsize) length + 8 + 7) & ~(gsize) 7;
    }
  return copy;
}

/* As fuzz-host-requests.c: buffers of more elements than this (a broadcast
 * of 10^16) take as long to digest as an op takes to read them. */
#define MAX_ELEMENTS (1 << 22)

static gboolean
table_too_big (GVariant *table)
{
  gsize n = g_variant_n_children (table);
  for (gsize i = 0; i < n; i++)
    {
      g_autoptr(GVariant) entry = g_variant_get_child_value (table, i);
      g_autoptr(GVariant) dims_v = g_variant_get_child_value (entry, 5);
      gsize rank;
      const gint64 *dims = g_variant_get_fixed_array (dims_v, &rank, sizeof (gint64));
      guint64 elements = 1;
      for (gsize d = 0; d < rank; d++)
        if (dims[d] > 0 && (__builtin_mul_overflow (elements, (guint64) dims[d], &elements)
                            || elements > MAX_ELEMENTS))
          return TRUE;
    }
  return FALSE;
}

static gboolean
too_much_work (GBytes *bytes)
{
  g_autoptr(AccelJournalReader) reader = _accel_journal_reader_new (bytes, NULL);
  AccelJournalRecord *r;
  gboolean big = FALSE;
  while (reader && !big && (r = _accel_journal_reader_next (reader, NULL)))
    {
      if (r->kind == ACCEL_JOURNAL_OP || r->kind == ACCEL_JOURNAL_WRITE || r->kind == ACCEL_JOURNAL_ZERO)
        {
          g_autoptr(GVariant) child = g_variant_get_child_value (r->body, r->kind == ACCEL_JOURNAL_OP ? 2 : 4);
          if (r->kind == ACCEL_JOURNAL_OP)
            big = table_too_big (child);
          else
            {
              GVariant *one[] = { child };
              g_autoptr(GVariant) table = g_variant_ref_sink (g_variant_new_array (NULL, one, 1));
              big = table_too_big (table);
            }
        }
      _accel_journal_record_free (r);
    }
  return big;
}

static void
check_result (const AccelReplayResult *r, gpointer data)
{
  guint *n = data;
  g_assert (r->verdict <= ACCEL_REPLAY_SKIPPED);
  g_assert (r->device != NULL && r->op_type != NULL && r->detail != NULL);
  (*n)++;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr(GBytes) bytes = size % 2 == 0 ? g_bytes_new_take (fix_checksums (data, size), size)
                                           : g_bytes_new (data, size);
  if (too_much_work (bytes))
    return 0;

  g_autoptr(AccelJournalReplay) replay = _accel_journal_replay_new (accel_fuzz_get_cpu ());
  g_autoptr(GError) damage = NULL;
  g_autoptr(GError) error = NULL;
  if (!_accel_journal_replay_load (replay, bytes, &damage, &error))
    {
      g_assert (error != NULL && error->domain == ACCEL_ERROR);
      return 0;
    }
  g_assert (damage == NULL || damage->domain == ACCEL_ERROR);
  guint n = 0;
  _accel_journal_replay_run (replay, check_result, &n);
  return 0;
}
