/* accel-registry-cache.c: the registry's metadata cache file, and the
 * scanning of plugin files it has no valid entry for.
 *
 * One serialized GVariant of type `(susv)`: a magic string, the format
 * version, the host architecture, and the payload, an array with one entry
 * per plugin file:
 *
 *   (s path, t size, x mtime in µs, u status, s reason,
 *    m(plugin metadata), s dependency stamp)
 *
 * The header is readable whatever the payload's format, so a file of another
 * format version is told apart from a damaged one. Nothing read is trusted:
 * the whole file must be in normal form, and each entry is checked again
 * when it is used. A file that fails any check is ignored (and the registry
 * then writes a new one).
 *
 * A file the cache does not know (or knows at another size or mtime, or
 * whose declared dependencies changed) is scanned: in a child process,
 * `accel-plugin-scanner`, with a time limit, so that a plugin which
 * crashes, hangs or fails to load is blacklisted with the reason while the
 * program goes on; with ACCEL_REGISTRY_FORK=no, in this process.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-private.h"
#include "accel-config.h"

#include <errno.h>
#include <string.h>
#include <glib/gstdio.h>

#define CACHE_MAGIC "accel-registry"
#define CACHE_FORMAT_VERSION 2
#define CACHE_HEADER_TYPE "(susv)"
#define CACHE_ENTRY_TYPE "(stxusm" ACCEL_PLUGIN_METADATA_TYPE "s)"
#define CACHE_MAX_SIZE (64 * 1024 * 1024)
#define DEFAULT_SCANNER_TIMEOUT_S 10.0

void
_accel_registry_cache_entry_free (AccelRegistryCacheEntry *entry)
{
  if (entry == NULL)
    return;
  g_free (entry->path);
  g_free (entry->reason);
  g_clear_pointer (&entry->metadata, g_variant_unref);
  g_free (entry->dep_stamp);
  g_free (entry);
}

static AccelRegistryCacheEntry *
entry_from_variant (GVariant *value)
{
  const char *path, *reason, *stamp;
  guint64 size;
  gint64 mtime;
  guint32 status;
  GVariant *metadata = NULL;

  g_variant_get (value, "(&stxu&sm@" ACCEL_PLUGIN_METADATA_TYPE "&s)",
                 &path, &size, &mtime, &status, &reason, &metadata, &stamp);

  gboolean ok = g_path_is_absolute (path)
    && (status == ACCEL_PLUGIN_STATUS_OK || status == ACCEL_PLUGIN_STATUS_BLACKLISTED)
    && (status != ACCEL_PLUGIN_STATUS_OK || metadata != NULL)
    && (status != ACCEL_PLUGIN_STATUS_BLACKLISTED || *reason != '\0');
  if (!ok)
    {
      g_clear_pointer (&metadata, g_variant_unref);
      return NULL;
    }

  AccelRegistryCacheEntry *entry = g_new0 (AccelRegistryCacheEntry, 1);
  entry->path = g_strdup (path);
  entry->size = size;
  entry->mtime = mtime;
  entry->status = status;
  entry->reason = *reason ? g_strdup (reason) : NULL;
  entry->metadata = metadata;
  entry->dep_stamp = g_strdup (stamp);
  return entry;
}

/* Returns path -> AccelRegistryCacheEntry, or NULL if there is no usable
 * cache at @path (missing, damaged, foreign, another format version). */
GHashTable *
_accel_registry_cache_read (const char *path)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GMappedFile) file = g_mapped_file_new (path, FALSE, &error);
  if (file == NULL)
    {
      g_debug ("No registry cache at %s: %s", path, error->message);
      return NULL;
    }
  gsize length = g_mapped_file_get_length (file);
  if (length == 0 || length > CACHE_MAX_SIZE)
    {
      g_debug ("Registry cache %s has a bad size (%" G_GSIZE_FORMAT " bytes); ignoring it", path, length);
      return NULL;
    }

  /* Copied so that the data is aligned for GVariant and cannot change
   * under us if another process rewrites the file. */
  g_autoptr(GBytes) bytes = g_bytes_new (g_mapped_file_get_contents (file), length);
  return _accel_registry_cache_parse (bytes, path);
}

/* Reads the bytes of a cache file (@where names it in messages): path ->
 * AccelRegistryCacheEntry, or NULL if they are not a usable cache. The
 * registry and the fuzzer of this reader (fuzz/) come through here. */
GHashTable *
_accel_registry_cache_parse (GBytes *bytes, const char *where)
{
  g_autoptr(GVariant) header = g_variant_new_from_bytes (G_VARIANT_TYPE (CACHE_HEADER_TYPE), bytes, FALSE);
  g_variant_ref_sink (header);
  if (!g_variant_is_normal_form (header))
    {
      g_debug ("Registry cache %s is damaged or not a registry cache; ignoring it", where);
      return NULL;
    }

  const char *magic, *arch;
  guint32 version;
  g_autoptr(GVariant) payload = NULL;
  g_variant_get (header, "(&su&sv)", &magic, &version, &arch, &payload);
  if (!g_str_equal (magic, CACHE_MAGIC))
    {
      g_debug ("Registry cache %s is not a registry cache; ignoring it", where);
      return NULL;
    }
  if (version != CACHE_FORMAT_VERSION || !g_str_equal (arch, ACCEL_HOST_ARCH))
    {
      g_debug ("Registry cache %s has format %u for %s, not %u for %s; ignoring it",
               where, version, arch, CACHE_FORMAT_VERSION, ACCEL_HOST_ARCH);
      return NULL;
    }
  if (!g_variant_is_of_type (payload, G_VARIANT_TYPE ("a" CACHE_ENTRY_TYPE)))
    {
      g_debug ("Registry cache %s has a payload of type %s; ignoring it",
               where, g_variant_get_type_string (payload));
      return NULL;
    }

  GHashTable *entries = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
                                               (GDestroyNotify) _accel_registry_cache_entry_free);
  GVariantIter iter;
  GVariant *child;
  g_variant_iter_init (&iter, payload);
  while ((child = g_variant_iter_next_value (&iter)))
    {
      AccelRegistryCacheEntry *entry = entry_from_variant (child);
      g_variant_unref (child);
      if (entry == NULL)
        {
          g_debug ("Registry cache %s has a bad entry; skipping it", where);
          continue;
        }
      /* The key is the entry's own path string. */
      g_hash_table_replace (entries, entry->path, entry);
    }
  return entries;
}

/* Writes @entries (AccelRegistryCacheEntry) to @path through a temporary
 * file and a rename, so a reader sees the old file or the new one. */
gboolean
_accel_registry_cache_write (const char *path, GPtrArray *entries, GError **error)
{
  GVariantBuilder builder;

  g_variant_builder_init (&builder, G_VARIANT_TYPE ("a" CACHE_ENTRY_TYPE));
  for (guint i = 0; i < entries->len; i++)
    {
      AccelRegistryCacheEntry *entry = entries->pdata[i];
      g_variant_builder_add (&builder, "(stxusm@" ACCEL_PLUGIN_METADATA_TYPE "s)",
                             entry->path, entry->size, entry->mtime, (guint32) entry->status,
                             entry->reason ? entry->reason : "",
                             entry->metadata,
                             entry->dep_stamp ? entry->dep_stamp : "");
    }
  g_autoptr(GVariant) header =
    g_variant_ref_sink (g_variant_new ("(susv)", CACHE_MAGIC, (guint32) CACHE_FORMAT_VERSION,
                                       ACCEL_HOST_ARCH, g_variant_builder_end (&builder)));
  g_autoptr(GBytes) bytes = g_variant_get_data_as_bytes (header);

  g_autofree char *dir = g_path_get_dirname (path);
  if (g_mkdir_with_parents (dir, 0755) != 0)
    {
      int saved_errno = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved_errno),
                   "Cannot make the registry cache directory %s: %s", dir, g_strerror (saved_errno));
      return FALSE;
    }
  gsize size;
  const char *data = g_bytes_get_data (bytes, &size);
  if (!g_file_set_contents_full (path, data, size, G_FILE_SET_CONTENTS_CONSISTENT, 0644, error))
    {
      g_prefix_error (error, "Cannot write the registry cache: ");
      return FALSE;
    }
  return TRUE;
}

/* ---- scanning files the cache does not know ------------------------------ */

static gint64
stat_mtime_us (const GStatBuf *st)
{
#ifdef __linux__
  return (gint64) st->st_mtim.tv_sec * G_USEC_PER_SEC + st->st_mtim.tv_nsec / 1000;
#else
  return (gint64) st->st_mtime * G_USEC_PER_SEC;
#endif
}

static AccelRegistryCacheEntry *
entry_new (const char *path, const GStatBuf *st)
{
  AccelRegistryCacheEntry *entry = g_new0 (AccelRegistryCacheEntry, 1);
  entry->path = g_strdup (path);
  entry->size = st->st_size;
  entry->mtime = stat_mtime_us (st);
  entry->status = ACCEL_PLUGIN_STATUS_OK;
  return entry;
}

static void
entry_blacklist (AccelRegistryCacheEntry *entry, const char *reason)
{
  entry->status = ACCEL_PLUGIN_STATUS_BLACKLISTED;
  g_free (entry->reason);
  entry->reason = g_strdup (reason && *reason ? reason : "unknown failure");
}

/* Loads the plugin here. Used with ACCEL_REGISTRY_FORK=no, or when there is
 * no scanner to run: a plugin that crashes then takes the process along. */
static AccelPlugin *
scan_in_process (const char *path, AccelRegistryCacheEntry *entry)
{
  AccelPlugin *plugin = _accel_plugin_new (path);
  g_autoptr(GError) error = NULL;

  if (!accel_plugin_load (plugin, &error))
    entry_blacklist (entry, accel_plugin_get_reason (plugin));
  if (accel_plugin_get_name (plugin))
    entry->metadata = g_variant_ref_sink (_accel_plugin_to_metadata (plugin));
  return plugin;
}

static double
scanner_timeout (void)
{
  const char *value = g_getenv ("ACCEL_SCANNER_TIMEOUT");
  if (value == NULL || *value == '\0')
    return DEFAULT_SCANNER_TIMEOUT_S;
  char *end = NULL;
  double seconds = g_ascii_strtod (value, &end);
  if (end == value || *end != '\0' || !(seconds > 0) || seconds > 24 * 3600)
    {
      g_debug ("Ignoring ACCEL_SCANNER_TIMEOUT=%s: not a number of seconds", value);
      return DEFAULT_SCANNER_TIMEOUT_S;
    }
  return seconds;
}

typedef struct {
  gboolean done;
  gboolean timed_out;
  GBytes *out;
  GBytes *err;
  GError *error;
} ScanWait;

static void
scan_communicated (GObject *source, GAsyncResult *result, gpointer data)
{
  ScanWait *wait = data;
  g_subprocess_communicate_finish (G_SUBPROCESS (source), result, &wait->out, &wait->err, &wait->error);
  wait->done = TRUE;
}

static gboolean
set_flag (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

/* Logs what the scanner printed; returns its last line, which is often
 * the best clue to why it died. */
static char *
scanner_last_words (const char *path, GBytes *err)
{
  gsize size = 0;
  const char *data = err ? g_bytes_get_data (err, &size) : NULL;
  if (size == 0)
    return NULL;
  g_autofree char *text = g_utf8_make_valid (data, size);
  g_debug ("accel-plugin-scanner %s said:\n%s", path, text);

  g_strchomp (text);
  char *last = strrchr (text, '\n');
  last = g_strstrip (last ? last + 1 : text);
  if (*last == '\0')
    return NULL;
  if (g_utf8_strlen (last, -1) > 200)
    *g_utf8_offset_to_pointer (last, 200) = '\0';
  return g_strdup (last);
}

/* Parses what the scanner wrote; fills @entry or returns FALSE. */
static gboolean
parse_scan_result (GBytes *out, AccelRegistryCacheEntry *entry, gboolean expect_failure)
{
  if (out == NULL || g_bytes_get_size (out) == 0)
    return FALSE;
  /* Aligned copy for GVariant. */
  g_autoptr(GBytes) copy = g_bytes_new (g_bytes_get_data (out, NULL), g_bytes_get_size (out));
  g_autoptr(GVariant) result =
    g_variant_ref_sink (g_variant_new_from_bytes (G_VARIANT_TYPE (ACCEL_SCAN_RESULT_TYPE), copy, FALSE));
  if (!g_variant_is_normal_form (result))
    return FALSE;

  const char *magic, *reason;
  GVariant *metadata = NULL;
  g_variant_get (result, "(&s&sm@" ACCEL_PLUGIN_METADATA_TYPE ")", &magic, &reason, &metadata);
  if (!g_str_equal (magic, ACCEL_SCAN_MAGIC)
      || expect_failure != (*reason != '\0')
      || (!expect_failure && metadata == NULL))
    {
      g_clear_pointer (&metadata, g_variant_unref);
      return FALSE;
    }
  entry->metadata = metadata;
  if (expect_failure)
    entry_blacklist (entry, reason);
  return TRUE;
}

/* Scans @path in a child process. Returns FALSE (and fills nothing) if the
 * scanner could not be started at all. */
static gboolean
scan_in_child (const char *scanner, const char *path, AccelRegistryCacheEntry *entry)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocessLauncher) launcher =
    g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(GSubprocess) process = g_subprocess_launcher_spawn (launcher, &error, scanner, path, NULL);
  if (process == NULL)
    {
      static gboolean warned;
      if (!warned)
        g_warning ("Cannot run the plugin scanner %s (%s); scanning plugins in this process, "
                   "where one that crashes takes the program down. Set ACCEL_PLUGIN_SCANNER.",
                   scanner, error->message);
      warned = TRUE;
      return FALSE;
    }

  double timeout = scanner_timeout ();
  ScanWait wait = { 0, };
  g_autoptr(GMainContext) context = g_main_context_new ();
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_main_context_push_thread_default (context);

  g_subprocess_communicate_async (process, NULL, cancellable, scan_communicated, &wait);
  GSource *timer = g_timeout_source_new ((guint) (timeout * 1000));
  g_source_set_callback (timer, set_flag, &wait.timed_out, NULL);
  g_source_attach (timer, context);
  while (!wait.done && !wait.timed_out)
    g_main_context_iteration (context, TRUE);
  g_source_destroy (timer);
  g_source_unref (timer);

  if (!wait.done)
    {
      g_subprocess_force_exit (process);
      /* The pipes close when it dies, unless it left a child holding
       * them: then stop reading after a grace period. */
      gboolean grace_over = FALSE;
      GSource *grace = g_timeout_source_new (2000);
      g_source_set_callback (grace, set_flag, &grace_over, NULL);
      g_source_attach (grace, context);
      while (!wait.done && !grace_over)
        g_main_context_iteration (context, TRUE);
      g_source_destroy (grace);
      g_source_unref (grace);
      g_cancellable_cancel (cancellable);
      while (!wait.done)
        g_main_context_iteration (context, TRUE);
    }
  g_main_context_pop_thread_default (context);

  g_autofree char *last_words = scanner_last_words (path, wait.err);
  g_autofree char *said = last_words ? g_strdup_printf ("; it said: %s", last_words) : g_strdup ("");

  if (wait.timed_out)
    {
      g_autofree char *reason =
        g_strdup_printf ("timed out: loading the plugin did not finish within %g s "
                         "(ACCEL_SCANNER_TIMEOUT); it hangs", timeout);
      entry_blacklist (entry, reason);
    }
  else if (wait.error)
    {
      g_autofree char *reason = g_strdup_printf ("the scanner failed: %s", wait.error->message);
      entry_blacklist (entry, reason);
    }
  else if (g_subprocess_get_if_signaled (process))
    {
      int signum = g_subprocess_get_term_sig (process);
      g_autofree char *reason =
        g_strdup_printf ("crashed while loading: killed by signal %d (%s)%s",
                         signum, g_strsignal (signum), said);
      entry_blacklist (entry, reason);
    }
  else
    {
      int status = g_subprocess_get_exit_status (process);
      gboolean answered = (status == 0 || status == ACCEL_SCAN_EXIT_REFUSED)
        && parse_scan_result (wait.out, entry, status == ACCEL_SCAN_EXIT_REFUSED);
      if (!answered)
        {
          g_autofree char *reason =
            g_strdup_printf ("failed while loading: the scanner exited with status %d "
                             "without a usable answer%s", status, said);
          entry_blacklist (entry, reason);
        }
    }

  g_clear_pointer (&wait.out, g_bytes_unref);
  g_clear_pointer (&wait.err, g_bytes_unref);
  g_clear_error (&wait.error);
  return TRUE;
}

static char *
scanner_path (void)
{
  const char *scanner = g_getenv ("ACCEL_PLUGIN_SCANNER");
  if (scanner && *scanner)
    return g_strdup (scanner);
  return g_build_filename (ACCEL_LIBEXECDIR, "accel-plugin-scanner", NULL);
}

static gboolean
fork_enabled (void)
{
  const char *fork = g_getenv ("ACCEL_REGISTRY_FORK");
  return !(fork && (g_ascii_strcasecmp (fork, "no") == 0 || g_str_equal (fork, "0")
                    || g_ascii_strcasecmp (fork, "false") == 0));
}

/* The plugin an entry describes: known from its metadata (not loaded), or
 * only by its file; blacklisted with the entry's reason. */
AccelPlugin *
_accel_registry_cache_entry_to_plugin (AccelRegistryCacheEntry *entry, GError **error)
{
  AccelPlugin *plugin;

  if (entry->metadata)
    {
      plugin = _accel_plugin_new_from_metadata (entry->path, entry->metadata, error);
      if (plugin == NULL)
        return NULL;
    }
  else
    plugin = _accel_plugin_new (entry->path);
  if (entry->status != ACCEL_PLUGIN_STATUS_OK)
    _accel_plugin_set_status (plugin, ACCEL_PLUGIN_STATUS_BLACKLISTED, entry->reason);
  return plugin;
}

/* The plugin of the file at @path: from its entry in @cache when that still
 * matches the file (size, mtime) and what the plugin declared it depends
 * on, else by scanning the file. Sets @entry_out to the entry to write back
 * (stolen from @cache, or new) and @scanned to whether it was scanned.
 * Returns NULL if the file cannot be read at all. */
AccelPlugin *
_accel_registry_cache_find_or_scan (GHashTable *cache,
                                    const char *path,
                                    AccelRegistryCacheEntry **entry_out,
                                    gboolean *scanned)
{
  GStatBuf st;
  AccelPlugin *plugin = NULL;

  if (g_stat (path, &st) != 0)
    return NULL;

  AccelRegistryCacheEntry *cached = cache ? g_hash_table_lookup (cache, path) : NULL;
  if (cached && cached->size == (guint64) st.st_size && cached->mtime == stat_mtime_us (&st))
    {
      g_autoptr(GError) error = NULL;
      plugin = _accel_registry_cache_entry_to_plugin (cached, &error);
      if (plugin == NULL)
        g_debug ("Cache entry of %s is not usable: %s", path, error->message);
      else
        {
          g_autofree char *stamp = _accel_plugin_dependency_stamp (plugin);
          if (!g_str_equal (stamp, cached->dep_stamp))
            {
              g_debug ("What %s depends on changed; scanning it again", path);
              g_clear_object (&plugin);
            }
        }
    }
  if (plugin)
    {
      g_hash_table_steal (cache, path);
      *entry_out = cached;
      *scanned = FALSE;
      return plugin;
    }

  AccelRegistryCacheEntry *entry = entry_new (path, &st);
  g_autofree char *scanner = scanner_path ();
  g_debug ("Scanning %s", path);
  if (fork_enabled () && scan_in_child (scanner, path, entry))
    {
      g_autoptr(GError) error = NULL;
      plugin = _accel_registry_cache_entry_to_plugin (entry, &error);
      if (plugin == NULL)
        {
          g_autofree char *reason = g_strdup_printf ("the scanner's answer is not usable: %s",
                                                     error->message);
          g_clear_pointer (&entry->metadata, g_variant_unref);
          entry_blacklist (entry, reason);
          plugin = _accel_registry_cache_entry_to_plugin (entry, NULL);
        }
    }
  else
    plugin = scan_in_process (path, entry);
  entry->dep_stamp = _accel_plugin_dependency_stamp (plugin);
  *entry_out = entry;
  *scanned = TRUE;
  return plugin;
}
