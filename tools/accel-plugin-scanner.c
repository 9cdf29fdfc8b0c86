/* accel-plugin-scanner: loads one plugin file in a process of its own and
 * reports what it registers, so that a plugin which crashes or hangs while
 * loading cannot take the application down with it.
 *
 *   accel-plugin-scanner FILE
 *
 * The registry runs it for each new or changed plugin file. It writes one
 * serialized GVariant of ACCEL_SCAN_RESULT_TYPE to stdout (magic, reason,
 * metadata) and exits 0 if the plugin loaded, ACCEL_SCAN_EXIT_REFUSED if
 * it was refused (the reason says why). A crash or a hang is seen by the
 * parent as a signal, an exit without an answer, or a timeout.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-private.h"

#include <errno.h>
#include <sys/resource.h>
#include <unistd.h>

static gboolean
write_all (int fd, const guint8 *data, gsize size)
{
  while (size > 0)
    {
      gssize n = write (fd, data, size);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return FALSE;
      data += n;
      size -= n;
    }
  return TRUE;
}

int
main (int argc, char **argv)
{
  if (argc != 2)
    {
      g_printerr ("Usage: %s PLUGIN-FILE\n"
                  "Loads an Accel plugin and reports what it registers (used by the registry).\n",
                  argv[0]);
      return 2;
    }

  /* A plugin that crashes here leaves no core file behind. */
  struct rlimit no_core = { 0, 0 };
  setrlimit (RLIMIT_CORE, &no_core);

  /* stdout carries the answer; what the plugin prints goes to stderr. */
  int answer_fd = dup (STDOUT_FILENO);
  if (answer_fd < 0 || dup2 (STDERR_FILENO, STDOUT_FILENO) < 0)
    {
      g_printerr ("accel-plugin-scanner: cannot set up its output: %s\n", g_strerror (errno));
      return 2;
    }

  g_autoptr(AccelPlugin) plugin = _accel_plugin_new (argv[1]);
  g_autoptr(GError) error = NULL;
  gboolean ok = accel_plugin_load (plugin, &error);

  const char *reason = "";
  if (!ok)
    {
      reason = accel_plugin_get_reason (plugin);
      if (reason == NULL || *reason == '\0')
        reason = error->message;
    }
  GVariant *metadata = accel_plugin_get_name (plugin) ? _accel_plugin_to_metadata (plugin) : NULL;
  g_autoptr(GVariant) answer =
    g_variant_ref_sink (g_variant_new ("(ssm@" ACCEL_PLUGIN_METADATA_TYPE ")",
                                       ACCEL_SCAN_MAGIC, reason, metadata));

  if (!write_all (answer_fd, g_variant_get_data (answer), g_variant_get_size (answer)))
    {
      g_printerr ("accel-plugin-scanner: cannot write its answer: %s\n", g_strerror (errno));
      _exit (2);
    }
  close (answer_fd);

  /* The plugin's module stays loaded; nothing else needs tearing down.
   * _exit skips its destructors and any leak checker's report on them. */
  _exit (ok ? 0 : ACCEL_SCAN_EXIT_REFUSED);
}
