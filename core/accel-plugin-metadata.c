/* accel-plugin-metadata.c: what a plugin registers, as the scanner reports
 * it and the registry cache keeps it (ACCEL_PLUGIN_METADATA_TYPE), and the
 * stamp of what it depends on. The reader takes its bytes from a cache
 * file or a child process and trusts none of them.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-plugin-private.h"

#include <string.h>
#include <glib/gstdio.h>

/* A digest of the current state of what the plugin depends on; "" when it
 * declared nothing. */
char *
_accel_plugin_dependency_stamp (AccelPlugin *self)
{
  if (self->dep_env->len == 0 && self->dep_paths->len == 0)
    return g_strdup ("");

  g_autoptr(GString) state = g_string_new (NULL);
  for (guint i = 0; i < self->dep_env->len; i++)
    {
      const char *value = g_getenv (self->dep_env->pdata[i]);
      g_string_append_printf (state, "env %s%s%s\n", (char *) self->dep_env->pdata[i],
                              value ? "=" : " unset", value ? value : "");
    }
  for (guint i = 0; i < self->dep_paths->len; i++)
    {
      GStatBuf st;
      const char *path = self->dep_paths->pdata[i];
      if (g_stat (path, &st) == 0)
        g_string_append_printf (state, "path %s %" G_GUINT64_FORMAT " %" G_GINT64_FORMAT ".%09ld\n",
                                path, (guint64) st.st_size, (gint64) st.st_mtime,
#ifdef __linux__
                                (long) st.st_mtim.tv_nsec
#else
                                0L
#endif
                                );
      else
        g_string_append_printf (state, "path %s missing\n", path);
    }
  return g_compute_checksum_for_string (G_CHECKSUM_SHA256, state->str, state->len);
}

static GVariant *
strv_variant (GPtrArray *strings)
{
  return g_variant_new_strv ((const char *const *) strings->pdata, strings->len);
}

static GVariant *
features_variant (AccelPlugin *self, AccelPluginFeatureKind kind)
{
  GVariantBuilder builder;
  g_variant_builder_init (&builder, G_VARIANT_TYPE_STRING_ARRAY);
  for (guint i = 0; i < self->features[kind]->len; i++)
    g_variant_builder_add (&builder, "s", ((AccelPluginFeature *) self->features[kind]->pdata[i])->name);
  return g_variant_builder_end (&builder);
}

/* What the plugin registers, by name: the scanner's answer and the body of
 * a cache entry. Floating. */
GVariant *
_accel_plugin_to_metadata (AccelPlugin *self)
{
  GVariantBuilder kernels;

  _accel_plugin_lock ();
  g_variant_builder_init (&kernels, G_VARIANT_TYPE ("a(ssu)"));
  for (guint i = 0; i < self->kernels->len; i++)
    {
      AccelKernel *kernel = self->kernels->pdata[i];
      g_variant_builder_add (&kernels, "(ssu)", kernel->op_type, kernel->backend, kernel->rank);
    }
  GVariant *metadata =
    g_variant_new ("(ssss@as@asa(ssu)@as@as@as@as)",
                   self->name ? self->name : "",
                   self->description ? self->description : "",
                   self->version ? self->version : "",
                   self->license ? self->license : "",
                   features_variant (self, ACCEL_PLUGIN_FEATURE_BACKEND),
                   features_variant (self, ACCEL_PLUGIN_FEATURE_OP_TYPE),
                   &kernels,
                   features_variant (self, ACCEL_PLUGIN_FEATURE_ACTOR_TYPE),
                   features_variant (self, ACCEL_PLUGIN_FEATURE_MODEL_TYPE),
                   strv_variant (self->dep_env),
                   strv_variant (self->dep_paths));
  _accel_plugin_unlock ();
  return metadata;
}

/* Names in metadata come from a file: keep them to what a name can be. */
static gboolean
valid_name (const char *name)
{
  if (*name == '\0' || strlen (name) > 256)
    return FALSE;
  for (const char *p = name; *p; p++)
    if (!g_ascii_isalnum (*p) && *p != '_' && *p != '-' && *p != '.' && *p != ':')
      return FALSE;
  return TRUE;
}

static gboolean
read_names (GVariant *array, GPtrArray *out_features, GPtrArray *out_strings, gboolean check)
{
  GVariantIter iter;
  const char *name;

  g_variant_iter_init (&iter, array);
  while (g_variant_iter_next (&iter, "&s", &name))
    {
      if (check && !valid_name (name))
        return FALSE;
      if (out_features)
        {
          AccelPluginFeature *feature = g_new0 (AccelPluginFeature, 1);
          feature->name = g_strdup (name);
          g_ptr_array_add (out_features, feature);
        }
      else
        _accel_plugin_add_unique (out_strings, name);
    }
  return TRUE;
}

/* A plugin known from its metadata, not loaded. Everything is checked: the
 * metadata may come from a damaged cache file. */
AccelPlugin *
_accel_plugin_new_from_metadata (const char *filename, GVariant *metadata, GError **error)
{
  if (!g_variant_is_of_type (metadata, G_VARIANT_TYPE (ACCEL_PLUGIN_METADATA_TYPE)))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_PLUGIN,
                   "plugin metadata has type %s, not %s",
                   g_variant_get_type_string (metadata), ACCEL_PLUGIN_METADATA_TYPE);
      return NULL;
    }

  const char *name, *description, *version, *license;
  g_autoptr(GVariant) backends = NULL, op_types = NULL, kernels = NULL,
    actor_types = NULL, model_types = NULL, dep_env = NULL, dep_paths = NULL;
  g_variant_get (metadata, "(&s&s&s&s@as@as@a(ssu)@as@as@as@as)", &name, &description, &version,
                 &license, &backends, &op_types, &kernels, &actor_types, &model_types, &dep_env, &dep_paths);

  if (!valid_name (name))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_PLUGIN, "plugin metadata has a bad name");
      return NULL;
    }

  g_autoptr(AccelPlugin) self = _accel_plugin_new (filename);
  self->name = g_strdup (name);
  self->description = g_strdup (description);
  self->version = g_strdup (version);
  self->license = g_strdup (license);
  if (!read_names (backends, self->features[ACCEL_PLUGIN_FEATURE_BACKEND], NULL, TRUE)
      || !read_names (op_types, self->features[ACCEL_PLUGIN_FEATURE_OP_TYPE], NULL, TRUE)
      || !read_names (actor_types, self->features[ACCEL_PLUGIN_FEATURE_ACTOR_TYPE], NULL, TRUE)
      || !read_names (model_types, self->features[ACCEL_PLUGIN_FEATURE_MODEL_TYPE], NULL, TRUE)
      || !read_names (dep_env, NULL, self->dep_env, FALSE)
      || !read_names (dep_paths, NULL, self->dep_paths, FALSE))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_PLUGIN,
                   "metadata of plugin “%s” has a bad type name", name);
      return NULL;
    }

  GVariantIter iter;
  const char *op_type, *backend;
  guint32 rank;
  g_variant_iter_init (&iter, kernels);
  while (g_variant_iter_next (&iter, "(&s&su)", &op_type, &backend, &rank))
    {
      if (!valid_name (op_type) || !valid_name (backend))
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_PLUGIN,
                       "metadata of plugin “%s” has a bad kernel name", name);
          return NULL;
        }
      g_ptr_array_add (self->kernels, _accel_kernel_new (self, op_type, backend, rank, NULL));
    }
  return g_steal_pointer (&self);
}
