/* accel-journal.c: the file that devices record the work they run into,
 * for replay on another device (tools/accel-replay). The format is
 * described in accel-journal-private.h; the reader is
 * accel-journal-reader.c.
 *
 * Devices record into it as accel-journal-record.c says. Records go to a buffer that a writer thread appends to the file at
 * least every WRITE_INTERVAL_MS; accel_journal_flush() and the journal's
 * end write everything. A crash of the application loses at most what
 * was buffered; one of a device host (whose work the application records)
 * loses nothing.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "accel-config.h"
#include "accel-journal-private.h"

#define WRITE_INTERVAL_MS 50
#define WAKE_WRITER_BYTES (1 << 20)
#define MAX_PENDING_BYTES (256 << 20)
#define KEEP_SPARE_BYTES (8 << 20)      /* a larger burst's array is given back */


/**
 * AccelJournal:
 *
 * A file that devices record the work they run into, for `accel-replay`
 * to run again on another device and compare: record a session on
 * `cuda:0`, replay it on `cpu:0`, and the first op whose outputs disagree
 * is the one that went wrong.
 *
 * Set a device's #AccelDevice:journal, or name a file in `ACCEL_JOURNAL`
 * before the devices are made (`ACCEL_JOURNAL_BYTES=1` keeps the bytes).
 * Each op's serialised form (accel_op_serialize()) is kept, with the
 * device's generation and digests of the buffers it reads and writes (or
 * their bytes, with %ACCEL_JOURNAL_FLAGS_BYTES); uploads are kept whole.
 * Records are appended with a checksum each, so that a journal cut short
 * by a crash still replays up to its last whole record.
 *
 * A journal may be shared by several devices and used from any thread.
 */
G_DEFINE_FINAL_TYPE (AccelJournal, accel_journal, G_TYPE_OBJECT)

/* ---- writing records ------------------------------------------------------ */

static void
set_write_error (AccelJournal *self, int saved_errno)
{
  if (self->write_error == NULL)
    {
      self->write_error = g_error_new (ACCEL_ERROR, ACCEL_ERROR_FAILED, "Cannot write the journal %s: %s",
                                       self->path, g_strerror (saved_errno));
      g_warning ("%s; it records nothing more", self->write_error->message);
      g_atomic_int_set (&self->failed, 1);
    }
}

/* Writes what is pending. Holds write_lock, so that records stay in order. */
static void
write_pending (AccelJournal *self)
{
  g_mutex_lock (&self->write_lock);
  g_mutex_lock (&self->lock);
  GByteArray *out = self->pending;
  /* The array written out last time, reused: a new one of a megabyte or
   * more would be fresh pages, each faulted in by a recording thread. */
  self->pending = self->spare ? self->spare : g_byte_array_sized_new (out->len);
  self->spare = NULL;
  g_cond_broadcast (&self->cond);
  g_mutex_unlock (&self->lock);

  /* Each record's checksum (the records are whole: they are made under
   * the lock the swap above took). */
  for (gsize pos = 0; pos + ACCEL_JOURNAL_RECORD_HEAD <= out->len;)
    {
      guint32 length;
      memcpy (&length, out->data + pos, 4);
      length = GUINT32_FROM_LE (length);
      if (pos == 0 && memcmp (out->data, ACCEL_JOURNAL_MAGIC, 8) == 0)
        {
          pos = ACCEL_JOURNAL_HEADER_SIZE;   /* the file's header, first in a new file */
          continue;
        }
      guint32 checksum = GUINT32_TO_LE (_accel_journal_checksum (out->data + pos + 8, length));
      memcpy (out->data + pos + 4, &checksum, 4);
      pos += ((gsize) length + 8 + 7) & ~(gsize) 7;
    }

  gsize done = 0;
  while (done < out->len)
    {
      ssize_t n = write (self->fd, out->data + done, out->len - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          int e = n < 0 ? errno : ENOSPC;
          g_mutex_lock (&self->lock);
          set_write_error (self, e);
          g_mutex_unlock (&self->lock);
          break;
        }
      done += n;
    }
  g_mutex_lock (&self->lock);
  if (self->spare == NULL && out->len <= KEEP_SPARE_BYTES)
    {
      g_byte_array_set_size (out, 0);
      self->spare = g_steal_pointer (&out);
    }
  g_mutex_unlock (&self->lock);
  if (out)
    g_byte_array_unref (out);
  g_mutex_unlock (&self->write_lock);
}

static gpointer
writer_thread (gpointer data)
{
  AccelJournal *self = data;

  g_mutex_lock (&self->lock);
  while (!self->stopping)
    {
      if (self->pending->len == 0 || (self->pending->len < WAKE_WRITER_BYTES))
        g_cond_wait_until (&self->cond, &self->lock,
                           g_get_monotonic_time () + WRITE_INTERVAL_MS * G_TIME_SPAN_MILLISECOND);
      if (self->pending->len == 0)
        continue;
      g_mutex_unlock (&self->lock);
      write_pending (self);
      g_mutex_lock (&self->lock);
    }
  g_mutex_unlock (&self->lock);
  return NULL;
}

/* Reserves a record of @body_size bytes at the end of what is pending, and
 * returns where its body goes; under the lock, which close_record() drops.
 * NULL (unlocked) once writing failed. */
guint8 *
_accel_journal_open_record (AccelJournal *self, AccelJournalKind kind, gsize body_size, gsize *at)
{
  gsize size = (ACCEL_JOURNAL_RECORD_HEAD + body_size + 7) & ~(gsize) 7;

  if (body_size + 8 > G_MAXUINT32)
    {
      g_warning ("A record of %" G_GSIZE_FORMAT " bytes does not fit the journal %s; it is left out",
                 body_size, self->path);
      return NULL;
    }
  g_mutex_lock (&self->lock);
  while (self->pending->len > MAX_PENDING_BYTES && self->write_error == NULL)
    g_cond_wait (&self->cond, &self->lock);   /* the writer is behind: wait for it */
  if (self->write_error)
    {
      g_mutex_unlock (&self->lock);
      return NULL;
    }
  *at = self->pending->len;
  g_byte_array_set_size (self->pending, *at + size);
  guint8 *p = self->pending->data + *at;
  guint32 head[4] = { GUINT32_TO_LE (8 + body_size), 0, GUINT32_TO_LE (kind), 0 };
  memcpy (p, head, sizeof head);
  memset (p + ACCEL_JOURNAL_RECORD_HEAD + body_size, 0, size - ACCEL_JOURNAL_RECORD_HEAD - body_size);
  return p + ACCEL_JOURNAL_RECORD_HEAD;
}

void
_accel_journal_close_record (AccelJournal *self, gsize at)
{
  /* The checksum is the writer's to make, off the recording thread. */
  self->n_records++;
  gboolean wake = self->pending->len >= WAKE_WRITER_BYTES;
  g_mutex_unlock (&self->lock);
  if (wake)
    g_cond_broadcast (&self->cond);
}

void
_accel_journal_append (AccelJournal *self, AccelJournalKind kind, GVariant *body)
{
  g_autoptr(GVariant) owned = g_variant_ref_sink (body);
  gsize size = g_variant_get_size (owned), at;
  guint8 *p = _accel_journal_open_record (self, kind, size, &at);
  if (p == NULL)
    return;
  g_variant_store (owned, p);
  _accel_journal_close_record (self, at);
}

/* ---- the object ------------------------------------------------------------ */

static GVariant *
session_variant (AccelJournal *self)
{
  GVariantBuilder b;
  g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&b, "{sv}", "accel-version", g_variant_new_string (ACCEL_VERSION));
  g_variant_builder_add (&b, "{sv}", "pid", g_variant_new_int32 (getpid ()));
  g_variant_builder_add (&b, "{sv}", "program", g_variant_new_string (g_get_prgname () ? g_get_prgname () : ""));
  g_variant_builder_add (&b, "{sv}", "time", g_variant_new_int64 (g_get_real_time ()));
  g_variant_builder_add (&b, "{sv}", "flags", g_variant_new_uint32 (self->flags));
  return g_variant_builder_end (&b);
}

/* Opens @path for appending; writes the header into an empty file, and
 * checks that of one that has a header. */
static gboolean
open_file (AccelJournal *self, GError **error)
{
  self->fd = g_open (self->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (self->fd < 0)
    {
      int e = errno;
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "Cannot open the journal %s: %s",
                   self->path, g_strerror (e));
      return FALSE;
    }
  GStatBuf st;
  if (g_stat (self->path, &st) == 0 && st.st_size > 0)
    {
      char head[ACCEL_JOURNAL_HEADER_SIZE] = { 0 };
      int rfd = g_open (self->path, O_RDONLY | O_CLOEXEC, 0);
      gboolean ok = rfd >= 0 && read (rfd, head, sizeof head) == sizeof head
                    && memcmp (head, ACCEL_JOURNAL_MAGIC, 8) == 0
                    && GUINT32_FROM_LE (*(guint32 *) (head + 8)) == ACCEL_JOURNAL_VERSION;
      if (rfd >= 0)
        close (rfd);
      if (!ok)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "%s is not an Accel journal of version %d: not appending to it",
                       self->path, ACCEL_JOURNAL_VERSION);
          return FALSE;
        }
      return TRUE;
    }
  guint8 head[ACCEL_JOURNAL_HEADER_SIZE] = { 0 };
  guint32 version = GUINT32_TO_LE (ACCEL_JOURNAL_VERSION);
  memcpy (head, ACCEL_JOURNAL_MAGIC, 8);
  memcpy (head + 8, &version, 4);
  g_byte_array_append (self->pending, head, sizeof head);
  return TRUE;
}

/**
 * accel_journal_new:
 * @path: (type filename): the file; made if missing, appended to if it is
 *   a journal already
 * @flags: what to keep of the ops' buffers
 * @error: return location for a #GError
 *
 * Opens a journal for devices to record into (#AccelDevice:journal).
 *
 * Returns: (transfer full): the journal, or %NULL with
 *   %ACCEL_ERROR_INVALID_ARGUMENT if @path cannot be opened or holds
 *   something else
 */
AccelJournal *
accel_journal_new (const char *path, AccelJournalFlags flags, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  static gint serials;

  g_autoptr(AccelJournal) self = g_object_new (ACCEL_TYPE_JOURNAL, NULL);
  self->path = g_strdup (path);
  self->flags = flags;
  self->serial = g_atomic_int_add (&serials, 1) + 1;
  if (!open_file (self, error))
    return NULL;
  _accel_journal_append (self, ACCEL_JOURNAL_SESSION, session_variant (self));
  self->writer = g_thread_new ("accel-journal", writer_thread, self);
  return g_steal_pointer (&self);
}

/**
 * accel_journal_get_path:
 * @self: a journal
 *
 * The file the journal appends to.
 *
 * Returns: (type filename): its file
 */
const char *
accel_journal_get_path (AccelJournal *self)
{
  g_return_val_if_fail (ACCEL_IS_JOURNAL (self), NULL);
  return self->path;
}

/**
 * accel_journal_get_flags:
 * @self: a journal
 *
 * What the journal keeps of the buffers of the ops it records.
 *
 * Returns: its flags
 */
AccelJournalFlags
accel_journal_get_flags (AccelJournal *self)
{
  g_return_val_if_fail (ACCEL_IS_JOURNAL (self), 0);
  return self->flags;
}

/**
 * accel_journal_get_n_records:
 * @self: a journal
 *
 * How many records the journal made since it was opened, written to its
 * file or about to be (accel_journal_flush() writes them).
 *
 * Returns: the number of records
 */
guint64
accel_journal_get_n_records (AccelJournal *self)
{
  g_return_val_if_fail (ACCEL_IS_JOURNAL (self), 0);
  g_mutex_lock (&self->lock);
  guint64 n = self->n_records;
  g_mutex_unlock (&self->lock);
  return n;
}

/**
 * accel_journal_flush:
 * @self: a journal
 * @error: return location for a #GError
 *
 * Writes every record made so far to the file. Work still running is
 * recorded when it completes: synchronise the devices first
 * (accel_device_synchronize()) to have all of it.
 *
 * Returns: %FALSE with %ACCEL_ERROR_FAILED if the file could not be
 *   written (then nothing more is recorded)
 */
gboolean
accel_journal_flush (AccelJournal *self, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_JOURNAL (self), FALSE);
  write_pending (self);
  g_mutex_lock (&self->lock);
  gboolean ok = self->write_error == NULL;
  if (!ok)
    g_propagate_error (error, g_error_copy (self->write_error));
  g_mutex_unlock (&self->lock);
  return ok;
}

static AccelJournal *environment_journal;

static void
flush_environment_journal (void)
{
  if (environment_journal)
    write_pending (environment_journal);
}

AccelJournal *
_accel_journal_ref_from_environment (void)
{
  static gsize once = 0;
  if (g_once_init_enter (&once))
    {
      const char *path = g_getenv ("ACCEL_JOURNAL");
      if (path && *path)
        {
          g_autoptr(GError) error = NULL;
          const char *bytes = g_getenv ("ACCEL_JOURNAL_BYTES");
          AccelJournalFlags flags = bytes && g_str_equal (bytes, "1") ? ACCEL_JOURNAL_FLAGS_BYTES : 0;
          environment_journal = accel_journal_new (path, flags, &error);
          if (environment_journal)
            atexit (flush_environment_journal);
          else
            g_warning ("ACCEL_JOURNAL: %s", error->message);
        }
      g_once_init_leave (&once, 1);
    }
  return environment_journal ? g_object_ref (environment_journal) : NULL;
}

static void
accel_journal_finalize (GObject *object)
{
  AccelJournal *self = ACCEL_JOURNAL (object);

  if (self->writer)
    {
      g_mutex_lock (&self->lock);
      self->stopping = TRUE;
      g_cond_broadcast (&self->cond);
      g_mutex_unlock (&self->lock);
      g_thread_join (self->writer);
    }
  if (self->fd >= 0)
    {
      write_pending (self);
      close (self->fd);
    }
  g_byte_array_unref (self->pending);
  if (self->spare)
    g_byte_array_unref (self->spare);
  g_clear_error (&self->write_error);
  g_mutex_clear (&self->lock);
  g_mutex_clear (&self->write_lock);
  g_cond_clear (&self->cond);
  g_free (self->path);
  G_OBJECT_CLASS (accel_journal_parent_class)->finalize (object);
}

static void
accel_journal_class_init (AccelJournalClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = accel_journal_finalize;
}

static void
accel_journal_init (AccelJournal *self)
{
  self->fd = -1;
  self->pending = g_byte_array_new ();
  g_mutex_init (&self->lock);
  g_mutex_init (&self->write_lock);
  g_cond_init (&self->cond);
}
