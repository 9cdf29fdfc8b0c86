/* accel-registry-search.c: the plugin files a registry finds on the
 * plugin path, and the allow/deny policy (environment, then the user's and
 * the system's accel.conf) and duplicate rule over the plugins it made of
 * them.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-private.h"

#include "accel-config.h"

#include <string.h>

#define SYSTEM_CONFIG_FILE "/etc/accel-1.0/accel.conf"

/* ---- finding plugin files ------------------------------------------------ */

static void
add_path_dirs (GPtrArray *dirs, const char *path)
{
  g_auto(GStrv) parts = g_strsplit (path, G_SEARCHPATH_SEPARATOR_S, -1);
  for (guint i = 0; parts[i]; i++)
    {
      if (parts[i][0] == '\0')
        continue;
      char *dir = g_canonicalize_filename (parts[i], NULL);
      gboolean seen = FALSE;
      for (guint j = 0; j < dirs->len && !seen; j++)
        seen = g_str_equal (dirs->pdata[j], dir);
      if (seen)
        g_free (dir);
      else
        g_ptr_array_add (dirs, dir);
    }
}

static int
compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char **) a, *(const char **) b);
}

/* Every `*.so` file on ACCEL_PLUGIN_PATH then ACCEL_PLUGIN_SYSTEM_PATH
 * (default: the installed plugin directory), in path order and by name
 * within a directory. */
GPtrArray *
_accel_registry_list_plugin_files (void)
{
  g_autoptr(GPtrArray) dirs = g_ptr_array_new_with_free_func (g_free);
  GPtrArray *files = g_ptr_array_new_with_free_func (g_free);

  const char *user_path = g_getenv ("ACCEL_PLUGIN_PATH");
  if (user_path)
    add_path_dirs (dirs, user_path);
  const char *system_path = g_getenv ("ACCEL_PLUGIN_SYSTEM_PATH");
  add_path_dirs (dirs, system_path ? system_path : ACCEL_PLUGIN_DIR);

  for (guint i = 0; i < dirs->len; i++)
    {
      const char *dir_path = dirs->pdata[i];
      g_autoptr(GDir) dir = g_dir_open (dir_path, 0, NULL);
      if (dir == NULL)
        continue;
      g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
      const char *name;
      while ((name = g_dir_read_name (dir)))
        if (g_str_has_suffix (name, ".so"))
          g_ptr_array_add (names, g_strdup (name));
      g_ptr_array_sort (names, compare_strings);
      for (guint j = 0; j < names->len; j++)
        {
          char *file = g_build_filename (dir_path, names->pdata[j], NULL);
          if (g_file_test (file, G_FILE_TEST_IS_REGULAR))
            g_ptr_array_add (files, file);
          else
            g_free (file);
        }
    }
  return files;
}

/* ---- allow / deny -------------------------------------------------------- */

static char *
normalize_name (const char *name)
{
  char *copy = g_strstrip (g_strdup (name));
  g_strdelimit (copy, "-", '_');
  return copy;
}

/* A name set from a comma- (or semicolon-) separated list, or NULL. */
static GHashTable *
parse_name_list (const char *list)
{
  if (list == NULL)
    return NULL;
  GHashTable *names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_auto(GStrv) parts = g_strsplit_set (list, ",;", -1);
  for (guint i = 0; parts[i]; i++)
    {
      char *name = normalize_name (parts[i]);
      if (*name)
        g_hash_table_add (names, name);
      else
        g_free (name);
    }
  if (g_hash_table_size (names) == 0)
    g_clear_pointer (&names, g_hash_table_unref);
  return names;
}

/* The value of one policy key: the environment, then the user's config
 * file, then the system's. Sets @source to where it came from. */
static GHashTable *
read_policy (const char *env_var, const char *key, char **source)
{
  const char *value = g_getenv (env_var);
  if (value && *value)
    {
      *source = g_strdup (env_var);
      return parse_name_list (value);
    }

  g_autofree char *user_file = g_build_filename (g_get_user_config_dir (), "accel-1.0", "accel.conf", NULL);
  const char *files[] = { user_file, SYSTEM_CONFIG_FILE };
  for (guint i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autoptr(GKeyFile) key_file = g_key_file_new ();
      g_autoptr(GError) error = NULL;
      if (!g_key_file_load_from_file (key_file, files[i], G_KEY_FILE_NONE, &error))
        {
          if (!g_error_matches (error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
            g_debug ("Ignoring %s: %s", files[i], error->message);
          continue;
        }
      g_autofree char *list = g_key_file_get_string (key_file, "plugins", key, NULL);
      if (list && *list)
        {
          *source = g_strdup_printf ("%s= in %s", key, files[i]);
          return parse_name_list (list);
        }
    }
  return NULL;
}

/* Marks duplicates (the first usable plugin of a name wins) and the plugins
 * the allow/deny policy leaves out. */
void
_accel_registry_apply_policy (GPtrArray *plugins)
{
  g_autoptr(GHashTable) winners = g_hash_table_new (g_str_hash, g_str_equal);
  g_autofree char *allow_source = NULL, *deny_source = NULL;
  g_autoptr(GHashTable) allow = read_policy ("ACCEL_PLUGIN_ALLOW", "allow", &allow_source);
  g_autoptr(GHashTable) deny = read_policy ("ACCEL_PLUGIN_DENY", "deny", &deny_source);

  for (guint i = 0; i < plugins->len; i++)
    {
      AccelPlugin *plugin = plugins->pdata[i];
      const char *name = accel_plugin_get_name (plugin);
      if (accel_plugin_get_status (plugin) != ACCEL_PLUGIN_STATUS_OK || name == NULL)
        continue;

      AccelPlugin *winner = g_hash_table_lookup (winners, name);
      if (winner)
        {
          g_autofree char *reason =
            g_strdup_printf ("duplicate: plugin “%s” is already provided by %s, "
                             "which comes first on the plugin path", name,
                             accel_plugin_get_filename (winner));
          _accel_plugin_set_status (plugin, ACCEL_PLUGIN_STATUS_DUPLICATE, reason);
          continue;
        }
      g_hash_table_insert (winners, (gpointer) name, plugin);

      g_autofree char *key = normalize_name (name);
      if (allow && !g_hash_table_contains (allow, key))
        {
          g_autofree char *reason = g_strdup_printf ("disabled: not in the allow list (%s)", allow_source);
          _accel_plugin_set_status (plugin, ACCEL_PLUGIN_STATUS_DISABLED, reason);
        }
      else if (deny && g_hash_table_contains (deny, key))
        {
          g_autofree char *reason = g_strdup_printf ("disabled: in the deny list (%s)", deny_source);
          _accel_plugin_set_status (plugin, ACCEL_PLUGIN_STATUS_DISABLED, reason);
        }
    }
}

