/* accel-journal-replay.h: runs a journal's work again on another device
 * and compares, op by op. Not installed: compiled into accel-replay and
 * into the fuzzer of the journal reader (fuzz/fuzz-journal.c).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel-journal-private.h"

G_BEGIN_DECLS

typedef enum {
  ACCEL_REPLAY_IDENTICAL,       /* every output bit for bit as recorded */
  ACCEL_REPLAY_AGREE,           /* within the tolerance of the outputs' dtypes */
  ACCEL_REPLAY_DIFFER,          /* an output outside the tolerance */
  ACCEL_REPLAY_RECORDED_FAILURE, /* it failed when recorded (the replay says how it ran) */
  ACCEL_REPLAY_FAILED,          /* it ran when recorded and failed now */
  ACCEL_REPLAY_SKIPPED,         /* cannot be run here (unknown op type, bad record) */
} AccelReplayVerdict;

typedef struct {
  guint64 seq;
  const char *device;           /* the recording device's name */
  guint generation;
  const char *op_type;          /* "upload" and "zero" for those */
  AccelReplayVerdict verdict;
  const char *detail;           /* what differed, why it failed or was skipped */
  gboolean inputs_diverged;     /* its inputs were not as recorded (upstream differences) */
} AccelReplayResult;

typedef void (*AccelReplayFunc) (const AccelReplayResult *result, gpointer user_data);

typedef struct _AccelJournalReplay AccelJournalReplay;

AccelJournalReplay *_accel_journal_replay_new (AccelDevice *target);
void _accel_journal_replay_free (AccelJournalReplay *self);

/* Reads every whole record of @journal. %FALSE with @error if it is not a
 * journal at all; else %TRUE, with @damage set if reading stopped at a
 * damaged record (what was read before it is replayed). */
gboolean _accel_journal_replay_load (AccelJournalReplay *self,
                                     GBytes *journal,
                                     GError **damage,
                                     GError **error);

/* Runs the work read, in the order it was run, calling @func for each
 * recorded op (and each upload and zero that could not be replayed). */
void _accel_journal_replay_run (AccelJournalReplay *self, AccelReplayFunc func, gpointer user_data);

const char *_accel_replay_verdict_name (AccelReplayVerdict verdict);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AccelJournalReplay, _accel_journal_replay_free)

G_END_DECLS
