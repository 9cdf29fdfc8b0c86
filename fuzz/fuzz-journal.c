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
            big = accel_fuzz_table_too_big (child, 5);
          else
            {
              GVariant *one[] = { child };
              g_autoptr(GVariant) table = g_variant_ref_sink (g_variant_new_array (NULL, one, 1));
              big = accel_fuzz_table_too_big (table, 5);
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
