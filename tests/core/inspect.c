/* inspect.c: accel-inspect over the fixture plugins: the listing, each kind
 * of detail view, --blacklist, and --json (parsed by a small strict JSON
 * reader here), and that with a warm cache it opens no plugin module.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <accel.h>
#include <string.h>
#include <glib/gstdio.h>

static const char *fixture_dir;
static const char *dup_dir;
static const char *cpu_dir;
static const char *inspect_path;
static char *full_path;

/* ---- accel-inspect -------------------------------------------------------- */

/* A small strict JSON reader: objects become a{sv}, arrays av, strings s,
 * numbers d, booleans b, null an empty mv. Returns NULL on bad input. */
static GVariant *json_value (const char **p);

static void
json_space (const char **p)
{
  while (**p == ' ' || **p == '\n' || **p == '\r' || **p == '\t')
    (*p)++;
}

static char *
json_string_body (const char **p)
{
  g_autoptr(GString) out = g_string_new (NULL);
  if (**p != '"')
    return NULL;
  (*p)++;
  while (**p != '"')
    {
      guchar c = **p;
      if (c == '\0' || c < 0x20)
        return NULL;
      if (c != '\\')
        {
          g_string_append_c (out, c);
          (*p)++;
          continue;
        }
      (*p)++;
      switch (**p)
        {
        case '"': g_string_append_c (out, '"'); break;
        case '\\': g_string_append_c (out, '\\'); break;
        case '/': g_string_append_c (out, '/'); break;
        case 'b': g_string_append_c (out, '\b'); break;
        case 'f': g_string_append_c (out, '\f'); break;
        case 'n': g_string_append_c (out, '\n'); break;
        case 'r': g_string_append_c (out, '\r'); break;
        case 't': g_string_append_c (out, '\t'); break;
        case 'u':
          {
            gunichar u = 0;
            for (int i = 1; i <= 4; i++)
              {
                int digit = g_ascii_xdigit_value ((*p)[i]);
                if (digit < 0)
                  return NULL;
                u = u * 16 + digit;
              }
            *p += 4;
            if (u >= 0xd800 && u < 0xe000)
              return NULL;   /* accel-inspect never writes surrogates */
            g_string_append_unichar (out, u);
            break;
          }
        default:
          return NULL;
        }
      (*p)++;
    }
  (*p)++;
  if (!g_utf8_validate (out->str, out->len, NULL))
    return NULL;
  return g_string_free (g_steal_pointer (&out), FALSE);
}

static GVariant *
json_value (const char **p)
{
  json_space (p);
  if (**p == '{')
    {
      GVariantBuilder builder;
      g_variant_builder_init (&builder, G_VARIANT_TYPE_VARDICT);
      (*p)++;
      json_space (p);
      gboolean first = TRUE;
      while (**p != '}')
        {
          if (!first)
            {
              if (**p != ',')
                goto bad_object;
              (*p)++;
              json_space (p);
            }
          first = FALSE;
          g_autofree char *key = json_string_body (p);
          json_space (p);
          if (key == NULL || **p != ':')
            goto bad_object;
          (*p)++;
          GVariant *value = json_value (p);
          if (value == NULL)
            goto bad_object;
          g_variant_builder_add (&builder, "{sv}", key, value);
          json_space (p);
        }
      (*p)++;
      return g_variant_builder_end (&builder);
    bad_object:
      g_variant_builder_clear (&builder);
      return NULL;
    }
  if (**p == '[')
    {
      GVariantBuilder builder;
      g_variant_builder_init (&builder, G_VARIANT_TYPE ("av"));
      (*p)++;
      json_space (p);
      gboolean first = TRUE;
      while (**p != ']')
        {
          if (!first)
            {
              if (**p != ',')
                goto bad_array;
              (*p)++;
            }
          first = FALSE;
          GVariant *value = json_value (p);
          if (value == NULL)
            goto bad_array;
          g_variant_builder_add (&builder, "v", value);
          json_space (p);
        }
      (*p)++;
      return g_variant_builder_end (&builder);
    bad_array:
      g_variant_builder_clear (&builder);
      return NULL;
    }
  if (**p == '"')
    {
      char *s = json_string_body (p);
      return s ? g_variant_new_take_string (s) : NULL;
    }
  if (g_str_has_prefix (*p, "true"))
    {
      *p += 4;
      return g_variant_new_boolean (TRUE);
    }
  if (g_str_has_prefix (*p, "false"))
    {
      *p += 5;
      return g_variant_new_boolean (FALSE);
    }
  if (g_str_has_prefix (*p, "null"))
    {
      *p += 4;
      return g_variant_new_maybe (G_VARIANT_TYPE_VARIANT, NULL);
    }
  char *end = NULL;
  double number = g_ascii_strtod (*p, &end);
  if (end == *p || (**p != '-' && !g_ascii_isdigit (**p)))
    return NULL;
  *p = end;
  return g_variant_new_double (number);
}

static GVariant *
json_parse (const char *text)
{
  const char *p = text;
  GVariant *value = json_value (&p);
  if (value == NULL)
    return NULL;
  g_variant_ref_sink (value);
  json_space (&p);
  if (*p != '\0')
    {
      g_variant_unref (value);
      return NULL;
    }
  return value;
}

static int
run_inspect (const char *cache, const char *const *args, char **out, char **err, gboolean ld_debug)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocessLauncher) launcher =
    g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_setenv (launcher, "ACCEL_PLUGIN_PATH", full_path, TRUE);
  g_subprocess_launcher_setenv (launcher, "ACCEL_REGISTRY", cache, TRUE);
  g_subprocess_launcher_setenv (launcher, "LC_ALL", "C.UTF-8", TRUE);
  if (ld_debug)
    g_subprocess_launcher_setenv (launcher, "LD_DEBUG", "files", TRUE);

  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_ptr_array_add (argv, (gpointer) inspect_path);
  for (guint i = 0; args[i]; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);

  g_autoptr(GSubprocess) process =
    g_subprocess_launcher_spawnv (launcher, (const char *const *) argv->pdata, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_communicate_utf8 (process, NULL, NULL, out, err, &error));
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (process));
  return g_subprocess_get_exit_status (process);
}

static GVariant *
json_plugin (GVariant *plugins, const char *file)
{
  for (gsize i = 0; i < g_variant_n_children (plugins); i++)
    {
      g_autoptr(GVariant) boxed = g_variant_get_child_value (plugins, i);
      g_autoptr(GVariant) plugin = g_variant_get_variant (boxed);
      g_autoptr(GVariant) filename = g_variant_lookup_value (plugin, "filename", G_VARIANT_TYPE_STRING);
      if (filename && g_str_equal (g_variant_get_string (filename, NULL), file))
        return g_steal_pointer (&plugin);
    }
  g_error ("accel-inspect --json does not list %s", file);
  return NULL;
}

static void
assert_json_plugin (GVariant *plugins, const char *dir, const char *basename,
                    const char *status, const char *reason_part)
{
  g_autofree char *file = g_build_filename (dir, basename, NULL);
  g_autoptr(GVariant) plugin = json_plugin (plugins, file);
  const char *keys[] = { "name", "version", "filename", "status", "reason",
                         "backends", "op-types", "kernels", "actor-types" };
  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
    {
      g_autoptr(GVariant) value = g_variant_lookup_value (plugin, keys[i], NULL);
      g_assert_nonnull (value);
    }
  g_autoptr(GVariant) got_status = g_variant_lookup_value (plugin, "status", G_VARIANT_TYPE_STRING);
  g_assert_cmpstr (g_variant_get_string (got_status, NULL), ==, status);
  g_autoptr(GVariant) reason = g_variant_lookup_value (plugin, "reason", G_VARIANT_TYPE_STRING);
  if (g_str_equal (status, "ok"))
    g_assert_null (reason);
  else
    g_assert_nonnull (reason);
  if (reason_part)
    g_assert_nonnull (strstr (g_variant_get_string (reason, NULL), reason_part));
}

static void
test_inspect_json (void)
{
  const char *cache = g_getenv ("ACCEL_REGISTRY");
  g_autofree char *out = NULL, *err = NULL;
  const char *args[] = { "--json", NULL };

  g_assert_cmpint (run_inspect (cache, args, &out, &err, TRUE), ==, 0);
  g_autoptr(GVariant) json = json_parse (out);
  g_assert_nonnull (json);
  g_autoptr(GVariant) plugins = g_variant_lookup_value (json, "plugins", G_VARIANT_TYPE ("av"));
  g_assert_nonnull (plugins);
  g_assert_cmpuint (g_variant_n_children (plugins), ==, 10);

  assert_json_plugin (plugins, fixture_dir, "libaccel-fixture-good.so", "ok", NULL);
  assert_json_plugin (plugins, cpu_dir, "libaccel-cpu.so", "ok", NULL);
  assert_json_plugin (plugins, fixture_dir, "libaccel-fixture-abi.so", "blacklisted", "999");
  assert_json_plugin (plugins, fixture_dir, "libaccel-fixture-nosym.so", "blacklisted", "get_desc");
  assert_json_plugin (plugins, fixture_dir, "libaccel-fixture-init-error.so", "blacklisted", "not installed");
  assert_json_plugin (plugins, fixture_dir, "libaccel-fixture-segv.so", "blacklisted", "while loading");
  assert_json_plugin (plugins, fixture_dir, "libaccel-fixture-hang.so", "blacklisted", "timed out");
  assert_json_plugin (plugins, fixture_dir, "libaccel-bogus.so", "blacklisted", "dlopen");
  assert_json_plugin (plugins, fixture_dir, "libaccel-fixture-truncated.so", "blacklisted", NULL);
  assert_json_plugin (plugins, dup_dir, "libaccel-fixture-good.so", "duplicate", "first on the plugin path");

  g_autofree char *good_file = g_build_filename (fixture_dir, "libaccel-fixture-good.so", NULL);
  g_autoptr(GVariant) good = json_plugin (plugins, good_file);
  g_autoptr(GVariant) op_types = g_variant_lookup_value (good, "op-types", G_VARIANT_TYPE ("av"));
  g_assert_cmpuint (g_variant_n_children (op_types), ==, 3);
  g_autoptr(GVariant) name = g_variant_lookup_value (good, "name", G_VARIANT_TYPE_STRING);
  g_assert_cmpstr (g_variant_get_string (name, NULL), ==, "fixture_good");

  /* With a warm cache, no plugin module was opened (glibc's loader says
   * which files it opens with LD_DEBUG=files). */
  if (strstr (err, "calling init") != NULL)
    {
      g_assert_null (strstr (err, "libaccel-fixture"));
      g_assert_null (strstr (err, "libaccel-cpu.so"));
    }
  else
    g_test_message ("LD_DEBUG is not supported here; not checking which files were opened");
}

/* What accel-inspect prints for some arguments: the texts its output holds
 * and those it does not. */
static const struct {
  const char *args[2];
  const char *present[5];
  const char *absent[1];
} text_cases[] = {
  { { NULL },
    { "fixture_good", "duplicate", "Total: 10 plugin files (2 ok, 7 blacklisted, 0 disabled, 1 duplicate)" } },
  { { "--blacklist" }, { "libaccel-fixture-segv.so", "timed out", "Total: 7 blacklisted files" },
    { "libaccel-fixture-good.so" } },
  { { "fixture-op" }, { "fixture_good", "range: 0 .. 1000", "default: 1", "buffer: read", "rank 200" } },
  { { "fixture" }, { "never has devices" } },
  { { "fixture_good" }, { "FixtureCounter", "fixture-op/cpu" } },
  { { "FixtureCounter" }, { "AccelActor" } },
};

static void
test_inspect_text (void)
{
  const char *cache = g_getenv ("ACCEL_REGISTRY");

  for (guint c = 0; c < G_N_ELEMENTS (text_cases); c++)
    {
      g_autofree char *out = NULL, *err = NULL;
      const char *what = text_cases[c].args[0] ? text_cases[c].args[0] : "";
      g_assert_cmpint (run_inspect (cache, text_cases[c].args, &out, &err, FALSE), ==, 0);
      for (guint i = 0; i < G_N_ELEMENTS (text_cases[c].present) && text_cases[c].present[i]; i++)
        if (strstr (out, text_cases[c].present[i]) == NULL)
          g_error ("accel-inspect %s: no “%s” in: %s", what, text_cases[c].present[i], out);
      for (guint i = 0; i < G_N_ELEMENTS (text_cases[c].absent) && text_cases[c].absent[i]; i++)
        if (strstr (out, text_cases[c].absent[i]) != NULL)
          g_error ("accel-inspect %s: “%s” in: %s", what, text_cases[c].absent[i], out);
    }
  {
    g_autofree char *out = NULL, *err = NULL;
    const char *args[] = { "no-such-thing", NULL };
    g_assert_cmpint (run_inspect (cache, args, &out, &err, FALSE), !=, 0);
    g_assert_nonnull (strstr (err, "no-such-thing"));
    /* One line. */
    g_assert_nonnull (strchr (err, '\n'));
    g_assert_cmpstr (strchr (err, '\n'), ==, "\n");
  }
}

/* The first run scans every file (in the scanner: accel-inspect itself
 * survives the crashing and hanging fixtures) and writes the cache that the
 * other tests start warm from. */
static void
test_inspect_cold (void)
{
  const char *cache = g_getenv ("ACCEL_REGISTRY");
  g_autofree char *out = NULL, *err = NULL;
  const char *args[] = { NULL };

  g_unlink (cache);
  g_assert_cmpint (run_inspect (cache, args, &out, &err, FALSE), ==, 0);
  g_assert_nonnull (strstr (out, "Total: 10 plugin files"));
  g_assert_true (g_file_test (cache, G_FILE_TEST_IS_REGULAR));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  fixture_dir = g_getenv ("ACCEL_TEST_FIXTURE_DIR");
  dup_dir = g_getenv ("ACCEL_TEST_FIXTURE_DUP_DIR");
  cpu_dir = g_getenv ("ACCEL_TEST_CPU_PLUGIN_DIR");
  inspect_path = g_getenv ("ACCEL_TEST_INSPECT");
  if (fixture_dir == NULL || dup_dir == NULL || cpu_dir == NULL || inspect_path == NULL
      || g_getenv ("ACCEL_REGISTRY") == NULL)
    {
      g_printerr ("Run this test through meson: it needs ACCEL_TEST_FIXTURE_DIR, ACCEL_TEST_FIXTURE_DUP_DIR, "
                  "ACCEL_TEST_CPU_PLUGIN_DIR, ACCEL_TEST_INSPECT and ACCEL_REGISTRY\n");
      return 77;
    }
  full_path = g_strjoin (G_SEARCHPATH_SEPARATOR_S, fixture_dir, dup_dir, cpu_dir, NULL);

  g_test_add_func ("/inspect/cold", test_inspect_cold);
  g_test_add_func ("/inspect/json", test_inspect_json);
  g_test_add_func ("/inspect/text", test_inspect_text);

  int status = g_test_run ();
  g_free (full_path);
  return status;
}
