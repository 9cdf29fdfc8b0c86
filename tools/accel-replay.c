/* accel-replay: runs a journal recorded by Accel devices (AccelJournal,
 * `ACCEL_JOURNAL=FILE`) again on another device and says, op by op,
 * whether the outputs agree with what was recorded:
 *
 *   accel-replay session.journal --device cpu:0
 *
 * One line per op: its sequence number, the device and generation it ran
 * in, its type, and identical / agree (within its dtype's tolerance) /
 * DIFFER / FAILED / failed-when-recorded / skipped, with what differed.
 * A journal cut short or damaged is replayed up to its last whole record,
 * and the tool says where it stopped.
 *
 * Exit status: 0 when everything agrees, 1 when an op differs or fails, 2
 * when the file cannot be read as a journal, 3 when it was damaged (and
 * what came before agrees).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>

#include "accel-journal-replay.h"

typedef struct {
  gboolean quiet;
  guint counts[ACCEL_REPLAY_SKIPPED + 1];
  guint diverged;
} Report;

static void
report (const AccelReplayResult *r, gpointer data)
{
  Report *rep = data;
  rep->counts[r->verdict]++;
  rep->diverged += r->inputs_diverged;
  if (rep->quiet && r->verdict <= ACCEL_REPLAY_AGREE)
    return;
  g_print ("#%" G_GUINT64_FORMAT " %s gen %u %s: %s%s%s%s\n", r->seq, r->device, r->generation, r->op_type,
           _accel_replay_verdict_name (r->verdict), r->detail && *r->detail ? " (" : "",
           r->detail && *r->detail ? r->detail : "", r->detail && *r->detail ? ")" : "");
  if (r->inputs_diverged)
    g_print ("#%" G_GUINT64_FORMAT "   its inputs were not as recorded: the difference came from before it\n",
             r->seq);
}

int
main (int argc, char **argv)
{
  g_autofree char *device_name = NULL;
  gboolean quiet = FALSE;
  GOptionEntry entries[] = {
    { "device", 'd', 0, G_OPTION_ARG_STRING, &device_name, "The device to replay on (default: cpu:0)", "NAME" },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "Print only the ops that do not agree", NULL },
    { NULL }
  };
  g_autoptr(GError) error = NULL;

  /* What this program runs is not to be recorded into the journal it reads. */
  g_unsetenv ("ACCEL_JOURNAL");
  g_autoptr(GOptionContext) options = g_option_context_new ("FILE — run a journal again and compare");
  g_option_context_add_main_entries (options, entries, NULL);
  if (!g_option_context_parse (options, &argc, &argv, &error) || argc != 2)
    {
      g_printerr ("accel-replay: %s\n", error ? error->message : "give one journal file");
      return 2;
    }

  g_autoptr(GMappedFile) file = g_mapped_file_new (argv[1], FALSE, &error);
  if (file == NULL)
    {
      g_printerr ("accel-replay: %s\n", error->message);
      return 2;
    }
  g_autoptr(GBytes) bytes = g_mapped_file_get_bytes (file);
  g_autoptr(AccelSystem) system = accel_system_new (&error);
  AccelDevice *device = system ? accel_system_get_device (system, device_name ? device_name : "cpu:0", &error) : NULL;
  if (device == NULL)
    {
      g_printerr ("accel-replay: %s\n", error->message);
      return 2;
    }

  g_autoptr(AccelJournalReplay) replay = _accel_journal_replay_new (device);
  g_autoptr(GError) damage = NULL;
  if (!_accel_journal_replay_load (replay, bytes, &damage, &error))
    {
      g_printerr ("accel-replay: %s: %s\n", argv[1], error->message);
      g_object_unref (device);
      return 2;
    }
  Report rep = { quiet };
  _accel_journal_replay_run (replay, report, &rep);
  g_clear_pointer (&replay, _accel_journal_replay_free);
  g_object_unref (device);

  guint bad = rep.counts[ACCEL_REPLAY_DIFFER] + rep.counts[ACCEL_REPLAY_FAILED];
  g_print ("%u ops: %u identical, %u agree, %u differ, %u failed, %u failed when recorded, %u skipped\n",
           rep.counts[0] + rep.counts[1] + bad + rep.counts[ACCEL_REPLAY_RECORDED_FAILURE]
             + rep.counts[ACCEL_REPLAY_SKIPPED],
           rep.counts[ACCEL_REPLAY_IDENTICAL], rep.counts[ACCEL_REPLAY_AGREE], rep.counts[ACCEL_REPLAY_DIFFER],
           rep.counts[ACCEL_REPLAY_FAILED], rep.counts[ACCEL_REPLAY_RECORDED_FAILURE],
           rep.counts[ACCEL_REPLAY_SKIPPED]);
  if (damage)
    g_print ("%s; replayed what came before it\n", damage->message);
  return bad ? 1 : damage ? 3 : 0;
}
