/* accel-registry-cache.c: the registry's metadata cache file.
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
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-private.h"
#include "accel-config.h"

#include <errno.h>
#include <glib/gstdio.h>

#define CACHE_MAGIC "accel-registry"
#define CACHE_FORMAT_VERSION 1
#define CACHE_HEADER_TYPE "(susv)"
#define CACHE_ENTRY_TYPE "(stxusm" ACCEL_PLUGIN_METADATA_TYPE "s)"
#define CACHE_MAX_SIZE (64 * 1024 * 1024)

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
  g_autoptr(GVariant) header = g_variant_new_from_bytes (G_VARIANT_TYPE (CACHE_HEADER_TYPE), bytes, FALSE);
  g_variant_ref_sink (header);
  if (!g_variant_is_normal_form (header))
    {
      g_debug ("Registry cache %s is damaged or not a registry cache; ignoring it", path);
      return NULL;
    }

  const char *magic, *arch;
  guint32 version;
  g_autoptr(GVariant) payload = NULL;
  g_variant_get (header, "(&su&sv)", &magic, &version, &arch, &payload);
  if (!g_str_equal (magic, CACHE_MAGIC))
    {
      g_debug ("Registry cache %s is not a registry cache; ignoring it", path);
      return NULL;
    }
  if (version != CACHE_FORMAT_VERSION || !g_str_equal (arch, ACCEL_HOST_ARCH))
    {
      g_debug ("Registry cache %s has format %u for %s, not %u for %s; ignoring it",
               path, version, arch, CACHE_FORMAT_VERSION, ACCEL_HOST_ARCH);
      return NULL;
    }
  if (!g_variant_is_of_type (payload, G_VARIANT_TYPE ("a" CACHE_ENTRY_TYPE)))
    {
      g_debug ("Registry cache %s has a payload of type %s; ignoring it",
               path, g_variant_get_type_string (payload));
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
          g_debug ("Registry cache %s has a bad entry; skipping it", path);
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
