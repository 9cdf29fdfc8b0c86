/* accel-journal-reader.c: reads a journal's records (the format is in
 * accel-journal-private.h) for accel-replay. A journal may have been cut
 * short by a crash, or damaged: every length, count and checksum is
 * checked before it is used, and reading stops at the first record that
 * is not whole, saying where.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include "accel-journal-private.h"

struct _AccelJournalReader {
  GBytes *bytes;
  const guint8 *data;
  gsize size;
  gsize pos;
  gboolean stopped;
};

void
_accel_journal_record_free (AccelJournalRecord *record)
{
  if (record == NULL)
    return;
  g_clear_pointer (&record->body, g_variant_unref);
  g_free (record->message);
  g_free (record->bytes);
  g_clear_pointer (&record->storage, g_bytes_unref);
  g_free (record);
}

AccelJournalReader *
_accel_journal_reader_new (GBytes *bytes, GError **error)
{
  gsize size;
  const guint8 *data = g_bytes_get_data (bytes, &size);

  if (G_BYTE_ORDER != G_LITTLE_ENDIAN)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                   "Journals are read on little-endian hosts only");
      return NULL;
    }
  if (size < ACCEL_JOURNAL_HEADER_SIZE || memcmp (data, ACCEL_JOURNAL_MAGIC, 8) != 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "Not an Accel journal (no header)");
      return NULL;
    }
  guint32 version;
  memcpy (&version, data + 8, 4);
  if (GUINT32_FROM_LE (version) != ACCEL_JOURNAL_VERSION)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "A journal of version %u; this Accel reads version %u", GUINT32_FROM_LE (version),
                   ACCEL_JOURNAL_VERSION);
      return NULL;
    }
  AccelJournalReader *self = g_new0 (AccelJournalReader, 1);
  self->bytes = g_bytes_ref (bytes);
  self->data = data;
  self->size = size;
  self->pos = ACCEL_JOURNAL_HEADER_SIZE;
  return self;
}

void
_accel_journal_reader_free (AccelJournalReader *self)
{
  if (self == NULL)
    return;
  g_bytes_unref (self->bytes);
  g_free (self);
}

guint64
_accel_journal_reader_get_offset (AccelJournalReader *self)
{
  return self->pos;
}

static const char *
body_type (AccelJournalKind kind)
{
  switch (kind)
    {
    case ACCEL_JOURNAL_SESSION: return "a{sv}";
    case ACCEL_JOURNAL_DEVICE: return ACCEL_JOURNAL_DEVICE_TYPE;
    case ACCEL_JOURNAL_OP: return ACCEL_JOURNAL_OP_TYPE;
    case ACCEL_JOURNAL_WRITE: return ACCEL_JOURNAL_WRITE_TYPE;
    case ACCEL_JOURNAL_ZERO: return ACCEL_JOURNAL_ZERO_TYPE;
    default: return NULL;
    }
}

static gsize
round8 (gsize n)
{
  return (n + 7) & ~(gsize) 7;
}

/* RUN's body: its header, digests, message and bytes, each checked to fit. */
static gboolean
read_run (AccelJournalRecord *record, GError **error)
{
  gsize size;
  const guint8 *body = g_bytes_get_data (record->storage, &size);
  const char *why = NULL;

  if (size < sizeof (AccelJournalRunHeader))
    why = "too short";
  else
    {
      memcpy (&record->run, body, sizeof record->run);
      guint64 n = (guint64) record->run.n_inputs + record->run.n_outputs;
      gsize pos = sizeof (AccelJournalRunHeader);
      if (n > (size - pos) / sizeof (AccelJournalDigest))
        why = "more digests than bytes";
      else
        {
          record->digests = (const AccelJournalDigest *) (body + pos);   /* the copy is aligned */
          pos += n * sizeof (AccelJournalDigest);
          if (record->run.message_length > size - pos || round8 (record->run.message_length) > size - pos)
            why = "a message longer than the record";
          else
            {
              if (record->run.error_domain != 0 || record->run.message_length > 0)
                record->message = g_utf8_make_valid ((const char *) body + pos, record->run.message_length);
              pos += round8 (record->run.message_length);
              record->bytes = g_new0 (const guint8 *, n + 1);
              for (guint64 i = 0; i < n && why == NULL; i++)
                {
                  const AccelJournalDigest *d = &record->digests[i];
                  if (!d->has_bytes)
                    continue;
                  if (d->n_bytes > size - pos || round8 (d->n_bytes) > size - pos)
                    why = "bytes beyond the record";
                  else
                    {
                      record->bytes[i] = body + pos;
                      pos += round8 (d->n_bytes);
                    }
                }
            }
        }
    }
  if (why)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "a RUN record with %s", why);
      return FALSE;
    }
  return TRUE;
}

AccelJournalRecord *
_accel_journal_reader_next (AccelJournalReader *self, GError **error)
{
  if (self->stopped || self->pos >= self->size)
    return NULL;

  gsize at = self->pos, left = self->size - at;
  guint32 head[4];
  g_autoptr(GError) local = NULL;
  g_autoptr(AccelJournalRecord) record = NULL;

  if (left < ACCEL_JOURNAL_RECORD_HEAD)
    g_set_error (&local, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "a record cut short (%" G_GSIZE_FORMAT
                 " bytes of its head)", left);
  else
    {
      memcpy (head, self->data + at, sizeof head);
      guint32 length = GUINT32_FROM_LE (head[0]), checksum = GUINT32_FROM_LE (head[1]);
      guint32 kind = GUINT32_FROM_LE (head[2]);
      gsize whole = round8 ((gsize) length + 8);
      if (length < 8 || whole > left)
        g_set_error (&local, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                     "a record cut short (%u bytes announced, %" G_GSIZE_FORMAT " there)", length, left - 8);
      else if (_accel_journal_checksum (self->data + at + 8, length) != checksum)
        g_set_error (&local, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "a record whose checksum is wrong");
      else if (kind < ACCEL_JOURNAL_SESSION || kind > ACCEL_JOURNAL_ZERO || head[3] != 0)
        g_set_error (&local, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "a record of unknown kind %u", kind);
      else
        {
          record = g_new0 (AccelJournalRecord, 1);
          record->kind = kind;
          record->offset = at;
          /* An aligned copy, for GVariant and the digests. */
          record->storage = g_bytes_new (self->data + at + ACCEL_JOURNAL_RECORD_HEAD, length - 8);
          if (kind == ACCEL_JOURNAL_RUN)
            read_run (record, &local);
          else
            {
              record->body = g_variant_ref_sink (g_variant_new_from_bytes (G_VARIANT_TYPE (body_type (kind)),
                                                                           record->storage, FALSE));
              if (!g_variant_is_normal_form (record->body))
                g_set_error (&local, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                             "a record whose body is not a %s", body_type (kind));
            }
          self->pos = at + whole;
        }
    }
  if (local)
    {
      self->stopped = TRUE;
      self->pos = at;
      g_propagate_prefixed_error (error, g_steal_pointer (&local),
                                  "The journal is damaged at byte %" G_GSIZE_FORMAT ": ", at);
      return NULL;
    }
  return g_steal_pointer (&record);
}
