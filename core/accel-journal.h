/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>
#include "accel-types.h"

G_BEGIN_DECLS

/**
 * AccelJournalFlags:
 * @ACCEL_JOURNAL_FLAGS_NONE: digests of each op's buffers only
 * @ACCEL_JOURNAL_FLAGS_BYTES: the bytes of each op's buffers too, so that
 *   a replay can run every op on exactly its recorded inputs and compare
 *   its outputs element by element
 *
 * What a journal keeps of the buffers of the ops it records. Uploads are
 * always kept whole: a replay starts from them.
 */
typedef enum /*< flags >*/ {
  ACCEL_JOURNAL_FLAGS_NONE = 0,
  ACCEL_JOURNAL_FLAGS_BYTES = 1 << 0,
} AccelJournalFlags;

#define ACCEL_TYPE_JOURNAL (accel_journal_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelJournal, accel_journal, ACCEL, JOURNAL, GObject)

ACCEL_API
AccelJournal *accel_journal_new (const char *path, AccelJournalFlags flags, GError **error);
ACCEL_API
const char *accel_journal_get_path (AccelJournal *self);
ACCEL_API
AccelJournalFlags accel_journal_get_flags (AccelJournal *self);
ACCEL_API
guint64 accel_journal_get_n_records (AccelJournal *self);
ACCEL_API
gboolean accel_journal_flush (AccelJournal *self, GError **error);

G_END_DECLS
