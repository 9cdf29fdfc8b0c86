/* accel-nvrtc-cache.c: compiled images kept on disk.
 *
 * One file per compilation, named by the SHA-256 of everything the image
 * depends on that the compiler is told (the source, the program name, the
 * options, the name expressions, the architecture, NVRTC's version); the
 * file holds that key again, the image, what it is, the lowered names, the
 * log, and the SHA-256 of the image. A file is used only if it parses as
 * such a record in normal form, names the same key and its image has the
 * digest it claims: anything else (truncated, corrupt, foreign, of another
 * key) is ignored, and the compilation that follows overwrites it.
 * Files are written whole to a temporary file and renamed, so a reader
 * never sees a half-written one.
 *
 * Headers found through `-I` paths are not part of the key: change a
 * header's name or remove the cache when a header changes.
 * `ACCEL_NVRTC_CACHE=0` turns the cache off.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <errno.h>
#include <glib/gstdio.h>
#include "accel-nvrtc-private.h"

#define MAGIC "accel-nvrtc-cache-1"
#define RECORD_TYPE "(ssayua{ss}ss)"
#define MAX_FILE_SIZE (512u << 20)

void
accel_nvrtc_result_clear (AccelNvrtcResult *result)
{
  g_clear_pointer (&result->image, g_bytes_unref);
  g_clear_pointer (&result->lowered, g_hash_table_unref);
  g_clear_pointer (&result->log, g_free);
}

/* Name expressions and their symbols as an `a{ss}`, as the cache and the
 * compiler's answer keep them. */
GVariant *
accel_nvrtc_lowered_to_variant (GHashTable *lowered)
{
  GVariantBuilder b;
  g_variant_builder_init (&b, G_VARIANT_TYPE ("a{ss}"));
  GHashTableIter iter;
  gpointer expr, symbol;
  g_hash_table_iter_init (&iter, lowered);
  while (g_hash_table_iter_next (&iter, &expr, &symbol))
    g_variant_builder_add (&b, "{ss}", expr, symbol);
  return g_variant_builder_end (&b);
}

static gboolean
enabled (void)
{
  return g_strcmp0 (g_getenv ("ACCEL_NVRTC_CACHE"), "0") != 0;
}

static void
add_string (GChecksum *sum, const char *s)
{
  /* With its terminating NUL, so that ("ab", "c") and ("a", "bc") differ. */
  g_checksum_update (sum, (const guchar *) s, strlen (s) + 1);
}

char *
accel_nvrtc_cache_key (const char *source,
                       const char *name,
                       const char * const *options,
                       const char * const *name_expressions,
                       const char *arch,
                       const char *compiler_version)
{
  g_autoptr(GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  char count[32];

  add_string (sum, MAGIC);
  add_string (sum, compiler_version);
  add_string (sum, arch);
  add_string (sum, name);
  guint n = options ? g_strv_length ((char **) options) : 0;
  g_snprintf (count, sizeof count, "%u options", n);
  add_string (sum, count);
  for (guint i = 0; i < n; i++)
    add_string (sum, options[i]);
  n = name_expressions ? g_strv_length ((char **) name_expressions) : 0;
  g_snprintf (count, sizeof count, "%u names", n);
  add_string (sum, count);
  for (guint i = 0; i < n; i++)
    add_string (sum, name_expressions[i]);
  add_string (sum, source);
  return g_strdup (g_checksum_get_string (sum));
}

char *
accel_nvrtc_cache_path (const char *key)
{
  g_autofree char *file = g_strconcat (key, ".bin", NULL);
  return g_build_filename (g_get_user_cache_dir (), "accel-1.0", "kernels", file, NULL);
}

static char *
digest (GBytes *bytes)
{
  gsize n;
  gconstpointer data = g_bytes_get_data (bytes, &n);
  return g_compute_checksum_for_data (G_CHECKSUM_SHA256, data ? data : (gconstpointer) "", n);
}

/* Fills @result from the cache file of @key; FALSE (and @result
 * untouched) on a miss or on anything not to be trusted. */
gboolean
accel_nvrtc_cache_read (const char *key, AccelNvrtcResult *result)
{
  if (!enabled ())
    return FALSE;

  g_autofree char *path = accel_nvrtc_cache_path (key);
  char *contents = NULL;
  gsize length = 0;
  if (!g_file_get_contents (path, &contents, &length, NULL))
    return FALSE;
  if (length > MAX_FILE_SIZE)
    {
      g_free (contents);
      g_debug ("nvrtc cache: ignoring %s: %" G_GSIZE_FORMAT " bytes", path, length);
      return FALSE;
    }
  g_autoptr(GBytes) bytes = g_bytes_new_take (contents, length);
  g_autoptr(GVariant) record = g_variant_ref_sink (g_variant_new_from_bytes (G_VARIANT_TYPE (RECORD_TYPE), bytes,
                                                                             FALSE));
  if (!g_variant_is_normal_form (record))
    {
      g_debug ("nvrtc cache: ignoring %s: not a cache record", path);
      return FALSE;
    }
  const char *magic, *stored_key, *log, *stored_digest;
  guint32 kind;
  g_autoptr(GVariant) image_v = NULL;
  g_autoptr(GVariantIter) lowered = NULL;
  g_variant_get (record, "(&s&s@ayua{ss}&s&s)", &magic, &stored_key, &image_v, &kind, &lowered, &log,
                 &stored_digest);
  g_autoptr(GBytes) image = g_variant_get_data_as_bytes (image_v);
  g_autofree char *image_digest = digest (image);
  if (strcmp (magic, MAGIC) != 0 || strcmp (stored_key, key) != 0 || kind > ACCEL_MODULE_IMAGE_FATBIN
      || g_bytes_get_size (image) == 0 || strcmp (image_digest, stored_digest) != 0)
    {
      g_debug ("nvrtc cache: ignoring %s: foreign or corrupt", path);
      return FALSE;
    }

  result->image = g_steal_pointer (&image);
  result->kind = kind;
  result->lowered = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  const char *expr, *symbol;
  while (g_variant_iter_next (lowered, "{&s&s}", &expr, &symbol))
    g_hash_table_insert (result->lowered, g_strdup (expr), g_strdup (symbol));
  result->log = g_strdup (log);
  return TRUE;
}

/* Best effort: a cache that cannot be written only costs compilations. */
void
accel_nvrtc_cache_write (const char *key, const AccelNvrtcResult *result)
{
  if (!enabled ())
    return;

  g_autofree char *path = accel_nvrtc_cache_path (key);
  g_autofree char *dir = g_path_get_dirname (path);
  if (g_mkdir_with_parents (dir, 0700) != 0)
    {
      g_debug ("nvrtc cache: cannot make %s: %s", dir, g_strerror (errno));
      return;
    }
  g_autofree char *image_digest = digest (result->image);
  g_autoptr(GVariant) record = g_variant_ref_sink (
    g_variant_new ("(ss@ayu@a{ss}ss)", MAGIC, key,
                   g_variant_new_from_bytes (G_VARIANT_TYPE_BYTESTRING, result->image, TRUE),
                   (guint32) result->kind, accel_nvrtc_lowered_to_variant (result->lowered),
                   result->log ? result->log : "", image_digest));
  g_autoptr(GError) error = NULL;
  if (!g_file_set_contents_full (path, g_variant_get_data (record), g_variant_get_size (record),
                                 G_FILE_SET_CONTENTS_CONSISTENT, 0600, &error))
    g_debug ("nvrtc cache: cannot write %s: %s", path, error->message);
}
