/* accel-inspect: what the registry knows, like gst-inspect-1.0.
 *
 *   accel-inspect               every plugin file with version, status and file, then totals
 *   accel-inspect NAME          a plugin, backend, op type, actor type or model type of that name
 *   accel-inspect --blacklist   the refused plugin files and why
 *   accel-inspect --json        everything as one JSON object
 *
 * Listing reads the registry cache and opens no plugin module (unless a
 * plugin file is new or changed, and then only in the scanner process).
 * Showing a backend, op type, actor type or model type loads the plugin that provides
 * it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <accel.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>

static const char *const status_names[] = { "ok", "blacklisted", "disabled", "duplicate" };

static const char *
status_name (AccelPluginStatus status)
{
  return status < G_N_ELEMENTS (status_names) ? status_names[status] : "unknown";
}

static const char *
plugin_label (AccelPlugin *plugin)
{
  const char *name = accel_plugin_get_name (plugin);
  return name ? name : "(unknown)";
}

static char *
join (char **names)
{
  if (names == NULL || names[0] == NULL)
    return g_strdup ("none");
  return g_strjoinv (", ", names);
}

/* ---- JSON ---------------------------------------------------------------- */

static void
json_string (GString *out, const char *value)
{
  if (value == NULL)
    {
      g_string_append (out, "null");
      return;
    }
  g_autofree char *valid = g_utf8_make_valid (value, -1);
  g_string_append_c (out, '"');
  for (const char *p = valid; *p; p++)
    {
      guchar c = *p;
      switch (c)
        {
        case '"': g_string_append (out, "\\\""); break;
        case '\\': g_string_append (out, "\\\\"); break;
        case '\n': g_string_append (out, "\\n"); break;
        case '\r': g_string_append (out, "\\r"); break;
        case '\t': g_string_append (out, "\\t"); break;
        case '\b': g_string_append (out, "\\b"); break;
        case '\f': g_string_append (out, "\\f"); break;
        default:
          if (c < 0x20 || c == 0x7f)
            g_string_append_printf (out, "\\u%04x", c);
          else
            g_string_append_c (out, c);
        }
    }
  g_string_append_c (out, '"');
}

static void
json_strv (GString *out, char **values)
{
  g_string_append_c (out, '[');
  for (guint i = 0; values && values[i]; i++)
    {
      if (i)
        g_string_append (out, ", ");
      json_string (out, values[i]);
    }
  g_string_append_c (out, ']');
}

static void
json_member (GString *out, const char *indent, const char *key, gboolean first)
{
  g_string_append_printf (out, "%s\n%s", first ? "" : ",", indent);
  json_string (out, key);
  g_string_append (out, ": ");
}

static void
json_member_string (GString *out, const char *indent, const char *key, const char *value, gboolean first)
{
  json_member (out, indent, key, first);
  json_string (out, value);
}

static void
json_member_strv (GString *out, const char *indent, const char *key, char **values)
{
  json_member (out, indent, key, FALSE);
  json_strv (out, values);
}

static void
print_json (AccelRegistry *registry)
{
  g_autoptr(GPtrArray) plugins = accel_registry_get_plugins (registry);
  g_autoptr(GString) out = g_string_new ("{");
  guint counts[G_N_ELEMENTS (status_names)] = { 0, };

  json_member (out, "  ", "plugins", TRUE);
  g_string_append_c (out, '[');
  for (guint i = 0; i < plugins->len; i++)
    {
      AccelPlugin *plugin = plugins->pdata[i];
      AccelPluginStatus status = accel_plugin_get_status (plugin);
      g_auto(GStrv) backends = accel_plugin_list_backends (plugin);
      g_auto(GStrv) op_types = accel_plugin_list_op_types (plugin);
      g_auto(GStrv) kernels = accel_plugin_list_kernels (plugin);
      g_auto(GStrv) actor_types = accel_plugin_list_actor_types (plugin);
      g_auto(GStrv) model_types = accel_plugin_list_model_types (plugin);

      if (status < G_N_ELEMENTS (counts))
        counts[status]++;
      g_string_append_printf (out, "%s\n    {", i ? "," : "");
      json_member_string (out, "      ", "name", accel_plugin_get_name (plugin), TRUE);
      json_member_string (out, "      ", "description", accel_plugin_get_description (plugin), FALSE);
      json_member_string (out, "      ", "version", accel_plugin_get_version (plugin), FALSE);
      json_member_string (out, "      ", "license", accel_plugin_get_license (plugin), FALSE);
      json_member_string (out, "      ", "filename", accel_plugin_get_filename (plugin), FALSE);
      json_member_string (out, "      ", "status", status_name (status), FALSE);
      json_member_string (out, "      ", "reason", accel_plugin_get_reason (plugin), FALSE);
      json_member (out, "      ", "loaded", FALSE);
      g_string_append (out, accel_plugin_is_loaded (plugin) ? "true" : "false");
      json_member_strv (out, "      ", "backends", backends);
      json_member_strv (out, "      ", "op-types", op_types);
      json_member_strv (out, "      ", "kernels", kernels);
      json_member_strv (out, "      ", "actor-types", actor_types);
      json_member_strv (out, "      ", "model-types", model_types);
      g_string_append (out, "\n    }");
    }
  g_string_append (out, plugins->len ? "\n  ]" : "]");

  g_auto(GStrv) all_op_types = accel_registry_list_op_types (registry);
  g_auto(GStrv) all_backends = accel_registry_list_backends (registry);
  g_auto(GStrv) all_actor_types = accel_registry_list_actor_types (registry);
  g_auto(GStrv) all_model_types = accel_registry_list_model_types (registry);
  g_autoptr(GPtrArray) all_kernels = accel_registry_list_kernels (registry, NULL, NULL);

  json_member_strv (out, "  ", "op-types", all_op_types);
  json_member_strv (out, "  ", "backends", all_backends);
  json_member_strv (out, "  ", "actor-types", all_actor_types);
  json_member_strv (out, "  ", "model-types", all_model_types);
  json_member (out, "  ", "totals", FALSE);
  g_string_append_printf (out, "{\"plugins\": %u", plugins->len);
  for (guint i = 0; i < G_N_ELEMENTS (status_names); i++)
    g_string_append_printf (out, ", \"%s\": %u", status_names[i], counts[i]);
  g_string_append_printf (out, ", \"op-types\": %u, \"backends\": %u, \"kernels\": %u, \"actor-types\": %u"
                          ", \"model-types\": %u}",
                          g_strv_length (all_op_types), g_strv_length (all_backends),
                          all_kernels->len, g_strv_length (all_actor_types), g_strv_length (all_model_types));
  json_member_string (out, "  ", "cache", accel_registry_get_cache_path (registry), FALSE);
  g_string_append (out, "\n}\n");
  fputs (out->str, stdout);
}

/* ---- text ---------------------------------------------------------------- */

static const char *provider_of (AccelRegistry *registry, const char *name, char **(*list) (AccelPlugin *));

static void
print_list (AccelRegistry *registry)
{
  g_autoptr(GPtrArray) plugins = accel_registry_get_plugins (registry);
  guint counts[G_N_ELEMENTS (status_names)] = { 0, };

  for (guint i = 0; i < plugins->len; i++)
    {
      AccelPlugin *plugin = plugins->pdata[i];
      AccelPluginStatus status = accel_plugin_get_status (plugin);
      const char *file = accel_plugin_get_filename (plugin);

      if (status < G_N_ELEMENTS (counts))
        counts[status]++;
      g_print ("%-22s %-10s %-12s %s\n", plugin_label (plugin),
               accel_plugin_get_version (plugin) ? accel_plugin_get_version (plugin) : "-",
               status_name (status), file ? file : "(linked in)");
    }

  g_auto(GStrv) op_types = accel_registry_list_op_types (registry);
  g_auto(GStrv) backends = accel_registry_list_backends (registry);
  g_auto(GStrv) actor_types = accel_registry_list_actor_types (registry);
  g_auto(GStrv) model_types = accel_registry_list_model_types (registry);
  g_autoptr(GPtrArray) kernels = accel_registry_list_kernels (registry, NULL, NULL);
  guint n_op_types = g_strv_length (op_types), n_backends = g_strv_length (backends);
  guint n_actor_types = g_strv_length (actor_types), n_model_types = g_strv_length (model_types);

  /* What can be spawned and served, by name (from the cache: nothing is loaded). */
  if (n_actor_types + n_model_types > 0)
    g_print ("\n");
  for (guint i = 0; i < n_actor_types; i++)
    g_print ("%-22s actor type  %s\n", actor_types[i], provider_of (registry, actor_types[i], accel_plugin_list_actor_types));
  for (guint i = 0; i < n_model_types; i++)
    g_print ("%-22s model type  %s\n", model_types[i], provider_of (registry, model_types[i], accel_plugin_list_model_types));
  g_print ("\nTotal: %u plugin file%s (%u ok, %u blacklisted, %u disabled, %u duplicate); "
           "%u op type%s, %u backend%s, %u kernel%s, %u actor type%s, %u model type%s\n",
           plugins->len, plugins->len == 1 ? "" : "s",
           counts[ACCEL_PLUGIN_STATUS_OK], counts[ACCEL_PLUGIN_STATUS_BLACKLISTED],
           counts[ACCEL_PLUGIN_STATUS_DISABLED], counts[ACCEL_PLUGIN_STATUS_DUPLICATE],
           n_op_types, n_op_types == 1 ? "" : "s", n_backends, n_backends == 1 ? "" : "s",
           kernels->len, kernels->len == 1 ? "" : "s", n_actor_types, n_actor_types == 1 ? "" : "s",
           n_model_types, n_model_types == 1 ? "" : "s");
}

static void
print_blacklist (AccelRegistry *registry)
{
  g_autoptr(GPtrArray) plugins = accel_registry_get_plugins (registry);
  guint n = 0;

  for (guint i = 0; i < plugins->len; i++)
    {
      AccelPlugin *plugin = plugins->pdata[i];
      if (accel_plugin_get_status (plugin) != ACCEL_PLUGIN_STATUS_BLACKLISTED)
        continue;
      g_print ("%s\n  %s\n", accel_plugin_get_filename (plugin) ? accel_plugin_get_filename (plugin) : plugin_label (plugin),
               accel_plugin_get_reason (plugin));
      n++;
    }
  g_print ("\nTotal: %u blacklisted file%s\n", n, n == 1 ? "" : "s");
}

static void
print_plugin (AccelPlugin *plugin)
{
  g_auto(GStrv) backends = accel_plugin_list_backends (plugin);
  g_auto(GStrv) op_types = accel_plugin_list_op_types (plugin);
  g_auto(GStrv) kernels = accel_plugin_list_kernels (plugin);
  g_auto(GStrv) actor_types = accel_plugin_list_actor_types (plugin);
  g_auto(GStrv) model_types = accel_plugin_list_model_types (plugin);
  g_autofree char *backends_s = join (backends);
  g_autofree char *op_types_s = join (op_types);
  g_autofree char *kernels_s = join (kernels);
  g_autofree char *actor_types_s = join (actor_types);
  g_autofree char *model_types_s = join (model_types);
  const char *file = accel_plugin_get_filename (plugin);

  g_print ("Plugin Details:\n");
  g_print ("  %-14s %s\n", "Name", plugin_label (plugin));
  g_print ("  %-14s %s\n", "Description", accel_plugin_get_description (plugin) ? accel_plugin_get_description (plugin) : "-");
  g_print ("  %-14s %s\n", "Filename", file ? file : "(linked into the program)");
  g_print ("  %-14s %s\n", "Version", accel_plugin_get_version (plugin) ? accel_plugin_get_version (plugin) : "-");
  g_print ("  %-14s %s\n", "License", accel_plugin_get_license (plugin) ? accel_plugin_get_license (plugin) : "-");
  g_print ("  %-14s %s\n", "Status", status_name (accel_plugin_get_status (plugin)));
  if (accel_plugin_get_reason (plugin))
    g_print ("  %-14s %s\n", "Reason", accel_plugin_get_reason (plugin));
  g_print ("  %-14s %s\n", "Loaded", accel_plugin_is_loaded (plugin) ? "yes" : "no (on first use)");
  g_print ("\n  %-14s %s\n", "Backends", backends_s);
  g_print ("  %-14s %s\n", "Op types", op_types_s);
  g_print ("  %-14s %s\n", "Kernels", kernels_s);
  g_print ("  %-14s %s\n", "Actor types", actor_types_s);
  g_print ("  %-14s %s\n", "Model types", model_types_s);
}

static const char *
provider_of (AccelRegistry *registry, const char *name, char **(*list) (AccelPlugin *))
{
  g_autoptr(GPtrArray) plugins = accel_registry_get_plugins (registry);
  for (guint i = 0; i < plugins->len; i++)
    {
      AccelPlugin *plugin = plugins->pdata[i];
      if (accel_plugin_get_status (plugin) != ACCEL_PLUGIN_STATUS_OK)
        continue;
      g_auto(GStrv) names = list (plugin);
      if (g_strv_contains ((const char *const *) names, name))
        return accel_plugin_get_name (plugin);
    }
  return NULL;
}

static void
print_range (GParamSpec *pspec, GString *line)
{
#define RANGE(check, cast, fmt)                                              \
  if (check (pspec))                                                         \
    {                                                                        \
      g_string_append_printf (line, ", range: " fmt " .. " fmt,              \
                              cast (pspec)->minimum, cast (pspec)->maximum); \
      return;                                                                \
    }
  RANGE (G_IS_PARAM_SPEC_INT, G_PARAM_SPEC_INT, "%d")
  RANGE (G_IS_PARAM_SPEC_UINT, G_PARAM_SPEC_UINT, "%u")
  RANGE (G_IS_PARAM_SPEC_LONG, G_PARAM_SPEC_LONG, "%ld")
  RANGE (G_IS_PARAM_SPEC_ULONG, G_PARAM_SPEC_ULONG, "%lu")
  RANGE (G_IS_PARAM_SPEC_INT64, G_PARAM_SPEC_INT64, "%" G_GINT64_FORMAT)
  RANGE (G_IS_PARAM_SPEC_UINT64, G_PARAM_SPEC_UINT64, "%" G_GUINT64_FORMAT)
  RANGE (G_IS_PARAM_SPEC_DOUBLE, G_PARAM_SPEC_DOUBLE, "%g")
  RANGE (G_IS_PARAM_SPEC_FLOAT, G_PARAM_SPEC_FLOAT, "%g")
#undef RANGE
  if (G_IS_PARAM_SPEC_ENUM (pspec))
    {
      GEnumClass *klass = G_PARAM_SPEC_ENUM (pspec)->enum_class;
      g_string_append (line, ", values:");
      for (guint i = 0; i < klass->n_values; i++)
        g_string_append_printf (line, "%s %s", i ? "," : "", klass->values[i].value_nick);
    }
  else if (G_IS_PARAM_SPEC_FLAGS (pspec))
    {
      GFlagsClass *klass = G_PARAM_SPEC_FLAGS (pspec)->flags_class;
      g_string_append (line, ", flags:");
      for (guint i = 0; i < klass->n_values; i++)
        g_string_append_printf (line, "%s %s", i ? "," : "", klass->values[i].value_nick);
    }
}

static void
print_properties (GObjectClass *klass, gboolean is_op)
{
  guint n;
  g_autofree GParamSpec **pspecs = g_object_class_list_properties (klass, &n);

  g_print ("\nProperties:\n");
  for (guint i = 0; i < n; i++)
    {
      GParamSpec *pspec = pspecs[i];
      g_autoptr(GString) line = g_string_new (NULL);
      AccelAccess access = is_op ? accel_op_class_get_buffer_access (ACCEL_OP_CLASS (klass), pspec->name) : 0;

      g_print ("  %-18s %s\n", pspec->name, g_param_spec_get_blurb (pspec) ? g_param_spec_get_blurb (pspec) : "");
      g_string_append_printf (line, "type: %s", g_type_name (pspec->value_type));
      if (access)
        g_string_append_printf (line, ", buffer: %s",
                                access == ACCEL_ACCESS_READ_WRITE ? "readwrite"
                                : access == ACCEL_ACCESS_WRITE ? "write" : "read");
      else
        {
          const GValue *dflt = g_param_spec_get_default_value (pspec);
          if (!G_VALUE_HOLDS_OBJECT (dflt) && !G_VALUE_HOLDS_BOXED (dflt) && !G_VALUE_HOLDS_POINTER (dflt))
            {
              g_autofree char *contents = NULL;
              if (G_VALUE_HOLDS_ENUM (dflt))
                {
                  GEnumValue *value = g_enum_get_value (G_PARAM_SPEC_ENUM (pspec)->enum_class,
                                                        g_value_get_enum (dflt));
                  contents = g_strdup (value ? value->value_nick : "?");
                }
              else
                contents = g_strdup_value_contents (dflt);
              g_string_append_printf (line, ", default: %s", contents);
            }
          print_range (pspec, line);
        }
      g_string_append_printf (line, ", %s%s",
                              (pspec->flags & G_PARAM_READWRITE) == G_PARAM_READWRITE ? "read-write"
                              : (pspec->flags & G_PARAM_WRITABLE) ? "write-only" : "read-only",
                              (pspec->flags & G_PARAM_CONSTRUCT_ONLY) ? ", construct-only" : "");
      g_print ("  %-18s %s\n", "", line->str);
    }
}

static gboolean
print_op_type (AccelRegistry *registry, const char *name, GError **error)
{
  GType type = accel_registry_lookup_op_type (registry, name, error);
  if (type == 0)
    return FALSE;

  GObjectClass *klass = g_type_class_ref (type);
  const char *provider = provider_of (registry, name, accel_plugin_list_op_types);
  g_autoptr(GPtrArray) kernels = accel_registry_list_kernels (registry, name, NULL);

  g_print ("Op Type Details:\n");
  g_print ("  %-14s %s\n", "Name", name);
  g_print ("  %-14s %s\n", "Description", accel_op_class_get_description (ACCEL_OP_CLASS (klass))
           ? accel_op_class_get_description (ACCEL_OP_CLASS (klass)) : "-");
  g_print ("  %-14s %s\n", "GType", g_type_name (type));
  g_print ("  %-14s %s\n", "Provided by", provider ? provider : "core");
  g_print ("\nKernels (best first):\n");
  for (guint i = 0; i < kernels->len; i++)
    g_print ("  %-10s rank %-6u plugin %s\n", accel_kernel_get_backend (kernels->pdata[i]),
             accel_kernel_get_rank (kernels->pdata[i]), accel_kernel_get_plugin_name (kernels->pdata[i]));
  if (kernels->len == 0)
    g_print ("  none\n");
  print_properties (klass, TRUE);
  g_type_class_unref (klass);
  return TRUE;
}

static void
print_hierarchy (GType type)
{
  g_print ("  %-14s", "Hierarchy");
  for (GType t = type; t != 0; t = g_type_parent (t))
    g_print (" %s%s", g_type_name (t), g_type_parent (t) ? " <" : "");
  g_print ("\n");
}

/* Actor and model types, made by name and shown alike; only actor classes
 * carry a description. */
static gboolean
print_spawnable_type (AccelRegistry *registry, const char *name, gboolean actor, GError **error)
{
  GType type = actor ? accel_registry_lookup_actor_type (registry, name, error)
                     : accel_registry_lookup_model_type (registry, name, error);
  if (type == 0)
    return FALSE;

  GObjectClass *klass = g_type_class_ref (type);
  const char *provider = provider_of (registry, name, actor ? accel_plugin_list_actor_types
                                                            : accel_plugin_list_model_types);
  g_print ("%s Type Details:\n", actor ? "Actor" : "Model");
  g_print ("  %-14s %s\n", "Name", name);
  if (actor)
    {
      const char *description = accel_actor_class_get_description (ACCEL_ACTOR_CLASS (klass));
      g_print ("  %-14s %s\n", "Description", description ? description : "-");
    }
  g_print ("  %-14s %s\n", "GType", g_type_name (type));
  g_print ("  %-14s %s\n", "Provided by", provider ? provider : "core");
  print_hierarchy (type);
  print_properties (klass, FALSE);
  g_type_class_unref (klass);
  return TRUE;
}

static gboolean
print_actor_type (AccelRegistry *registry, const char *name, GError **error)
{
  return print_spawnable_type (registry, name, TRUE, error);
}

static gboolean
print_model_type (AccelRegistry *registry, const char *name, GError **error)
{
  return print_spawnable_type (registry, name, FALSE, error);
}

static void
print_variant_entries (GVariant *dict)
{
  GVariantIter iter;
  const char *key;
  GVariant *value;
  g_variant_iter_init (&iter, dict);
  while (g_variant_iter_next (&iter, "{&sv}", &key, &value))
    {
      g_autofree char *text = g_variant_print (value, FALSE);
      g_print ("      %-24s %s\n", key, text);
      g_variant_unref (value);
    }
}

/* What the backend's device type adds to every device (for CUDA, the
 * GPU's description and NVML's readings), and what the device has done. */
static void
print_device_properties (AccelDevice *device)
{
  guint n;
  g_autofree GParamSpec **pspecs = g_object_class_list_properties (G_OBJECT_GET_CLASS (device), &n);

  for (guint i = 0; i < n; i++)
    {
      GParamSpec *pspec = pspecs[i];
      if (!(pspec->flags & G_PARAM_READABLE) || g_type_is_a (ACCEL_TYPE_REMOTE_DEVICE, pspec->owner_type))
        continue;
      GValue value = G_VALUE_INIT;
      g_value_init (&value, pspec->value_type);
      g_object_get_property (G_OBJECT (device), pspec->name, &value);
      if (G_VALUE_HOLDS_VARIANT (&value))
        {
          GVariant *v = g_value_get_variant (&value);
          g_print ("    %s:%s\n", pspec->name, v && g_variant_n_children (v) > 0 ? "" : " none");
          if (v && g_variant_is_of_type (v, G_VARIANT_TYPE_VARDICT))
            print_variant_entries (v);
        }
      else if (!G_VALUE_HOLDS_OBJECT (&value))
        {
          g_autofree char *text = NULL;
          if (G_VALUE_HOLDS_ENUM (&value))
            {
              GEnumValue *ev = g_enum_get_value (G_PARAM_SPEC_ENUM (pspec)->enum_class, g_value_get_enum (&value));
              text = g_strdup (ev ? ev->value_nick : "?");
            }
          else if (G_VALUE_HOLDS_FLAGS (&value))
            {
              GFlagsClass *fc = G_PARAM_SPEC_FLAGS (pspec)->flags_class;
              guint bits = g_value_get_flags (&value);
              g_autoptr(GString) list = g_string_new (NULL);
              for (guint k = 0; k < fc->n_values; k++)
                if (fc->values[k].value != 0 && (bits & fc->values[k].value) == fc->values[k].value)
                  g_string_append_printf (list, "%s%s", list->len ? ", " : "", fc->values[k].value_nick);
              text = g_strdup (list->len ? list->str : "none");
            }
          else
            text = g_strdup_value_contents (&value);
          g_print ("    %-26s %s\n", pspec->name, text);
        }
      g_value_unset (&value);
    }
  g_autoptr(GVariant) stats = g_variant_ref_sink (accel_device_get_stats (device));
  g_print ("    stats:\n");
  print_variant_entries (stats);
}

static gboolean
print_backend (AccelRegistry *registry, const char *name, GError **error)
{
  g_autoptr(AccelSystem) system = accel_system_new_with_registry (registry);
  AccelBackend *backend = accel_system_get_backend (system, name, error);
  if (backend == NULL)
    return FALSE;

  const char *provider = provider_of (registry, name, accel_plugin_list_backends);
  g_autoptr(GPtrArray) kernels = accel_registry_list_kernels (registry, NULL, name);
  g_print ("Backend Details:\n");
  g_print ("  %-14s %s\n", "Name", name);
  g_print ("  %-14s %s\n", "GType", G_OBJECT_TYPE_NAME (backend));
  g_print ("  %-14s %s\n", "Provided by", provider ? provider : "core");
  g_print ("  %-14s %d\n", "Priority", ACCEL_BACKEND_GET_CLASS (backend)->priority);

  g_autoptr(GPtrArray) devices = accel_system_list_devices (system);
  guint n = 0;
  g_print ("\nDevices:\n");
  for (guint i = 0; i < devices->len; i++)
    {
      AccelDevice *device = devices->pdata[i];
      if (g_strcmp0 (accel_device_get_backend_name (device), name) != 0)
        continue;
      n++;
      g_print ("  %-10s lanes %u, memory %" G_GUINT64_FORMAT " MiB (%" G_GUINT64_FORMAT " MiB free)\n",
               accel_device_get_name (device), accel_device_get_lanes (device),
               accel_device_get_memory_total (device) >> 20, accel_device_get_memory_free (device) >> 20);
      print_device_properties (device);
    }
  if (n == 0)
    g_print ("  none: %s\n", accel_backend_get_unavailable_reason (backend)
             ? accel_backend_get_unavailable_reason (backend) : "no reason given");

  g_print ("\nKernels:\n");
  for (guint i = 0; i < kernels->len; i++)
    g_print ("  %-24s rank %-6u plugin %s\n", accel_kernel_get_op_type (kernels->pdata[i]),
             accel_kernel_get_rank (kernels->pdata[i]), accel_kernel_get_plugin_name (kernels->pdata[i]));
  if (kernels->len == 0)
    g_print ("  none\n");
  accel_system_shutdown (system);
  return TRUE;
}

/* Shows everything named @name; returns the exit status. */
static int
print_named (AccelRegistry *registry, const char *name)
{
  g_auto(GStrv) backends = accel_registry_list_backends (registry);
  g_auto(GStrv) op_types = accel_registry_list_op_types (registry);
  g_auto(GStrv) actor_types = accel_registry_list_actor_types (registry);
  g_auto(GStrv) model_types = accel_registry_list_model_types (registry);
  /* A name may be several of these at once: each is shown, in this order. */
  const struct {
    char **names;
    gboolean (*print) (AccelRegistry *registry, const char *name, GError **error);
  } kinds[] = {
    { backends, print_backend },
    { op_types, print_op_type },
    { actor_types, print_actor_type },
    { model_types, print_model_type },
  };
  g_autoptr(GError) error = NULL;
  gboolean found = FALSE;

  AccelPlugin *plugin = accel_registry_find_plugin (registry, name);
  if (plugin)
    {
      print_plugin (plugin);
      found = TRUE;
    }
  for (guint i = 0; i < G_N_ELEMENTS (kinds); i++)
    {
      if (!g_strv_contains ((const char *const *) kinds[i].names, name))
        continue;
      if (found)
        g_print ("\n");
      found = TRUE;
      if (!kinds[i].print (registry, name, &error))
        {
          g_printerr ("accel-inspect: %s\n", error->message);
          return 1;
        }
    }
  if (!found)
    {
      g_printerr ("accel-inspect: no plugin, backend, op type, actor type or model type is named “%s”\n", name);
      return 1;
    }
  return 0;
}

int
main (int argc, char **argv)
{
  gboolean json = FALSE, blacklist = FALSE;
  const GOptionEntry options[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print every plugin as one JSON object", NULL },
    { "blacklist", 'b', 0, G_OPTION_ARG_NONE, &blacklist, "List the refused plugin files and why", NULL },
    { NULL, },
  };
  g_autoptr(GError) error = NULL;

  setlocale (LC_ALL, "");
  g_autoptr(GOptionContext) context = g_option_context_new ("[NAME]");
  g_option_context_set_summary (context,
                                "Lists Accel plugins, or shows a plugin, backend, op type, actor type or model type.");
  g_option_context_add_main_entries (context, options, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("accel-inspect: %s\n", error->message);
      return 2;
    }
  if (argc > 2 || (argc == 2 && (json || blacklist)))
    {
      g_printerr ("accel-inspect: give one NAME, or --json, or --blacklist\n");
      return 2;
    }

  g_autoptr(AccelRegistry) registry = accel_registry_new (ACCEL_REGISTRY_FLAGS_NONE, &error);
  if (registry == NULL)
    {
      g_printerr ("accel-inspect: %s\n", error->message);
      return 1;
    }

  if (argc == 2)
    return print_named (registry, argv[1]);
  if (json)
    print_json (registry);
  else if (blacklist)
    print_blacklist (registry);
  else
    print_list (registry);
  return 0;
}
