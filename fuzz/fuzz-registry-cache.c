/* fuzz-registry-cache.c: the registry's metadata cache reader
 * (core/accel-registry-cache.c). The input is a cache file's bytes. What
 * the reader accepts is made into plugins as the registry would (known by
 * metadata, not loaded), listed, written back as the registry writes its
 * cache, and read again: the second reading must find the same entries.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "fuzz-env.h"

static void
use_plugin (AccelPlugin *plugin)
{
  g_auto(GStrv) backends = accel_plugin_list_backends (plugin);
  g_auto(GStrv) op_types = accel_plugin_list_op_types (plugin);
  g_auto(GStrv) kernels = accel_plugin_list_kernels (plugin);
  g_auto(GStrv) actor_types = accel_plugin_list_actor_types (plugin);
  g_autofree char *stamp = _accel_plugin_dependency_stamp (plugin);
  g_autoptr(GVariant) metadata = accel_plugin_get_name (plugin)
                                   ? g_variant_ref_sink (_accel_plugin_to_metadata (plugin)) : NULL;
  g_assert (backends && op_types && kernels && actor_types && stamp);
  g_assert (metadata == NULL || g_variant_is_of_type (metadata, G_VARIANT_TYPE (ACCEL_PLUGIN_METADATA_TYPE)));
  g_assert (accel_plugin_get_status (plugin) == ACCEL_PLUGIN_STATUS_OK || accel_plugin_get_reason (plugin));
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr(GBytes) bytes = g_bytes_new (data, size);
  g_autoptr(GHashTable) cache = _accel_registry_cache_parse (bytes, "the fuzzer's input");
  if (cache == NULL)
    return 0;

  g_autoptr(GPtrArray) entries = g_ptr_array_new ();
  GHashTableIter iter;
  gpointer value;
  g_hash_table_iter_init (&iter, cache);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      AccelRegistryCacheEntry *entry = value;
      g_autoptr(GError) error = NULL;
      g_autoptr(AccelPlugin) plugin = _accel_registry_cache_entry_to_plugin (entry, &error);
      g_assert (plugin != NULL || error != NULL);
      if (plugin)
        use_plugin (plugin);
      g_ptr_array_add (entries, entry);
    }

  g_autofree char *path = g_build_filename (accel_fuzz_get_tmpdir (), "cache.bin", NULL);
  g_autoptr(GError) error = NULL;
  if (!_accel_registry_cache_write (path, entries, &error))
    g_error ("Cannot write back what was read: %s", error->message);
  g_autoptr(GHashTable) again = _accel_registry_cache_read (path);
  g_assert (again != NULL);
  g_assert_cmpuint (g_hash_table_size (again), ==, g_hash_table_size (cache));
  g_hash_table_iter_init (&iter, cache);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      AccelRegistryCacheEntry *entry = value;
      AccelRegistryCacheEntry *other = g_hash_table_lookup (again, entry->path);
      g_assert (other != NULL);
      g_assert_cmpuint (other->size, ==, entry->size);
      g_assert_cmpint (other->mtime, ==, entry->mtime);
      g_assert_cmpint (other->status, ==, entry->status);
      g_assert_cmpstr (other->reason, ==, entry->reason);
      g_assert_cmpstr (other->dep_stamp, ==, entry->dep_stamp);
      g_assert ((other->metadata == NULL) == (entry->metadata == NULL));
      if (entry->metadata)
        g_assert (g_variant_equal (other->metadata, entry->metadata));
    }
  return 0;
}
