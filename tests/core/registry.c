/* registry.c: the plugin registry against the fixture plugins: scanning in
 * a child, the blacklist and its reasons, the cache (warm starts, touched
 * files, declared dependencies, damaged files), duplicates, allow/deny,
 * lazy loading, kernel choice and static plugins. accel-inspect has its
 * own program, inspect.c.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <accel.h>
#include <string.h>
#include <utime.h>
#include <glib/gstdio.h>

static const char *fixture_dir;
static const char *dup_dir;
static const char *kernels_dir;
static const char *cpu_dir;
static char *tmp_dir;
static char *full_path;          /* fixtures, duplicate, cpu */
static char *fixture_cache_file; /* a cold scan of full_path, made once */
static AccelRegistry *cold_registry;

/* ---- helpers -------------------------------------------------------------- */

static char *
tmp_file (const char *name)
{
  return g_build_filename (tmp_dir, name, NULL);
}

static void
copy_file (const char *from, const char *to)
{
  g_autofree char *data = NULL;
  gsize size;
  g_autoptr(GError) error = NULL;

  g_assert_true (g_file_get_contents (from, &data, &size, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_set_contents (to, data, size, &error));
  g_assert_no_error (error);
}

/* A directory of its own with copies of some fixture plugins. */
static char *
plugin_dir_with (const char *name, const char *const *fixtures)
{
  char *dir = tmp_file (name);
  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  for (guint i = 0; fixtures[i]; i++)
    {
      g_autofree char *from = g_build_filename (fixture_dir, fixtures[i], NULL);
      g_autofree char *to = g_build_filename (dir, fixtures[i], NULL);
      copy_file (from, to);
    }
  return dir;
}

static AccelRegistry *
registry_new (const char *plugin_path, const char *cache)
{
  g_autoptr(GError) error = NULL;

  g_setenv ("ACCEL_PLUGIN_PATH", plugin_path, TRUE);
  g_setenv ("ACCEL_REGISTRY", cache, TRUE);
  AccelRegistry *registry = accel_registry_new (ACCEL_REGISTRY_FLAGS_NONE, &error);
  g_assert_no_error (error);
  g_assert_nonnull (registry);
  g_assert_cmpstr (accel_registry_get_cache_path (registry), ==, cache);
  return registry;
}

/* A registry over @plugin_path with @cache (registry_new()) that must have
 * scanned @n plugin files and taken the rest from the cache. */
static AccelRegistry *
registry_scanning (const char *plugin_path, const char *cache, guint n)
{
  AccelRegistry *registry = registry_new (plugin_path, cache);
  g_assert_cmpuint (accel_registry_get_n_scanned (registry), ==, n);
  return registry;
}

static void
assert_scans (const char *plugin_path, const char *cache, guint n)
{
  g_object_unref (registry_scanning (plugin_path, cache, n));
}

static AccelPlugin *
plugin_at (AccelRegistry *registry, const char *dir, const char *basename)
{
  g_autofree char *file = g_build_filename (dir, basename, NULL);
  g_autoptr(GPtrArray) plugins = accel_registry_get_plugins (registry);

  for (guint i = 0; i < plugins->len; i++)
    if (g_strcmp0 (accel_plugin_get_filename (plugins->pdata[i]), file) == 0)
      return plugins->pdata[i];
  g_error ("No plugin file %s in the registry", file);
  return NULL;
}

static void
assert_status (AccelRegistry *registry, const char *dir, const char *basename,
               AccelPluginStatus status, const char *reason_part)
{
  AccelPlugin *plugin = plugin_at (registry, dir, basename);
  g_test_message ("%s: status %d, reason %s", basename, accel_plugin_get_status (plugin),
                  accel_plugin_get_reason (plugin));
  g_assert_cmpint (accel_plugin_get_status (plugin), ==, status);
  if (status == ACCEL_PLUGIN_STATUS_OK)
    g_assert_null (accel_plugin_get_reason (plugin));
  else
    g_assert_nonnull (accel_plugin_get_reason (plugin));
  if (reason_part)
    g_assert_nonnull (strstr (accel_plugin_get_reason (plugin), reason_part));
}

static gboolean
strv_has (char **strv, const char *value)
{
  return g_strv_contains ((const char *const *) strv, value);
}

static gboolean
mapped (const char *needle)
{
  g_autofree char *maps = NULL;
  g_assert_true (g_file_get_contents ("/proc/self/maps", &maps, NULL, NULL));
  return strstr (maps, needle) != NULL;
}

static void
set_mtime (const char *path, gint64 seconds_ago)
{
  struct utimbuf times;
  times.actime = times.modtime = time (NULL) - seconds_ago;
  g_assert_cmpint (g_utime (path, &times), ==, 0);
}

/* The cache of a cold scan of every fixture, the duplicate and cpu: the
 * hanging fixture costs ACCEL_SCANNER_TIMEOUT, so it is paid once. */
static const char *
fixture_cache (void)
{
  if (fixture_cache_file == NULL && g_test_subprocess () && g_getenv ("ACCEL_TEST_FIXTURE_CACHE"))
    fixture_cache_file = g_strdup (g_getenv ("ACCEL_TEST_FIXTURE_CACHE"));
  if (fixture_cache_file == NULL)
    {
      fixture_cache_file = tmp_file ("fixtures.bin");
      cold_registry = registry_new (full_path, fixture_cache_file);
      g_setenv ("ACCEL_TEST_FIXTURE_CACHE", fixture_cache_file, TRUE);
    }
  return fixture_cache_file;
}

static char *
fixture_cache_copy (const char *name)
{
  char *copy = tmp_file (name);
  copy_file (fixture_cache (), copy);
  return copy;
}

/* ---- a static plugin, linked into this program ---------------------------- */

#define TEST_TYPE_STATIC_OP (test_static_op_get_type ())
G_DECLARE_FINAL_TYPE (TestStaticOp, test_static_op, TEST, STATIC_OP, AccelOp)

struct _TestStaticOp {
  AccelOp parent_instance;
};

G_DEFINE_FINAL_TYPE (TestStaticOp, test_static_op, ACCEL_TYPE_OP)

static void
test_static_op_class_init (TestStaticOpClass *klass)
{
  accel_op_class_set_metadata (ACCEL_OP_CLASS (klass), "test-static-op", "Op of the static test plugin");
}

static void
test_static_op_init (TestStaticOp *self)
{
}

static gboolean
test_static_init (AccelPlugin *plugin, GError **error)
{
  accel_plugin_register_op_type (plugin, TEST_TYPE_STATIC_OP);
  return TRUE;
}

ACCEL_PLUGIN_DEFINE (test_static, "Plugin linked into the registry test", test_static_init,
                     "0.0", "LGPL-2.1-or-later")

static void
test_no_scan (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelRegistry) registry = accel_registry_new (ACCEL_REGISTRY_FLAGS_NO_SCAN, &error);
  g_assert_no_error (error);

  g_assert_cmpuint (accel_registry_get_n_scanned (registry), ==, 0);
  g_assert_null (accel_registry_get_cache_path (registry));
  g_autoptr(GPtrArray) plugins = accel_registry_get_plugins (registry);
  g_assert_cmpuint (plugins->len, ==, 0);

  /* The core op types are there without any plugin. */
  g_auto(GStrv) op_types = accel_registry_list_op_types (registry);
  g_assert_true (strv_has (op_types, "gemm"));
  g_assert_true (strv_has (op_types, "copy"));
  GType gemm = accel_registry_lookup_op_type (registry, "gemm", &error);
  g_assert_no_error (error);
  g_assert_true (g_type_is_a (gemm, ACCEL_TYPE_OP));

  g_assert_cmpuint (accel_registry_lookup_op_type (registry, "no-such-op", &error), ==, 0);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_UNKNOWN_TYPE);
  g_assert_nonnull (strstr (error->message, "no-such-op"));
  g_clear_error (&error);

  /* A static plugin. */
  g_assert_true (accel_plugin_test_static_register (registry, &error));
  g_assert_no_error (error);
  AccelPlugin *plugin = accel_registry_find_plugin (registry, "test_static");
  g_assert_nonnull (plugin);
  g_assert_true (accel_registry_find_plugin (registry, "test-static") == plugin);
  g_assert_null (accel_plugin_get_filename (plugin));
  g_assert_true (accel_plugin_is_loaded (plugin));
  g_assert_cmpint (accel_plugin_get_status (plugin), ==, ACCEL_PLUGIN_STATUS_OK);
  g_assert_cmpuint (accel_registry_lookup_op_type (registry, "test-static-op", &error), ==, TEST_TYPE_STATIC_OP);
  g_assert_no_error (error);
  g_assert_cmpuint (accel_registry_get_n_loaded (registry), ==, 1);
  /* Adding it again does nothing. */
  g_assert_true (accel_plugin_test_static_register (registry, &error));
  g_assert_no_error (error);
  g_clear_pointer (&plugins, g_ptr_array_unref);
  plugins = accel_registry_get_plugins (registry);
  g_assert_cmpuint (plugins->len, ==, 1);

  /* A descriptor of another ABI is refused, naming both versions. */
  AccelPluginDesc other = *accel_plugin_test_static_get_desc ();
  other.abi_version = 77;
  g_assert_false (accel_registry_add_static_plugin (registry, &other, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_PLUGIN);
  g_assert_nonnull (strstr (error->message, "77"));
}

/* ---- scanning ------------------------------------------------------------- */

static void
test_scan (void)
{
  fixture_cache ();
  AccelRegistry *registry = cold_registry;

  /* Every file of the three directories, each scanned in a child. */
  g_assert_cmpuint (accel_registry_get_n_scanned (registry), ==, 10);
  g_assert_cmpuint (accel_registry_get_n_loaded (registry), ==, 0);
  g_assert_true (g_file_test (fixture_cache_file, G_FILE_TEST_IS_REGULAR));

  assert_status (registry, fixture_dir, "libaccel-fixture-good.so", ACCEL_PLUGIN_STATUS_OK, NULL);
  g_autofree char *abi_part = g_strdup_printf ("version %u", ACCEL_ABI_VERSION);
  assert_status (registry, fixture_dir, "libaccel-fixture-abi.so", ACCEL_PLUGIN_STATUS_BLACKLISTED, "999");
  assert_status (registry, fixture_dir, "libaccel-fixture-abi.so", ACCEL_PLUGIN_STATUS_BLACKLISTED, abi_part);
  assert_status (registry, fixture_dir, "libaccel-fixture-nosym.so", ACCEL_PLUGIN_STATUS_BLACKLISTED,
                 "accel_plugin_fixture_nosym_get_desc");
  assert_status (registry, fixture_dir, "libaccel-fixture-init-error.so", ACCEL_PLUGIN_STATUS_BLACKLISTED,
                 "libfixture.so.0 is not installed");
  /* Killed by SIGSEGV; under a sanitizer, by SIGABRT or an exit. */
  assert_status (registry, fixture_dir, "libaccel-fixture-segv.so", ACCEL_PLUGIN_STATUS_BLACKLISTED, "while loading");
  assert_status (registry, fixture_dir, "libaccel-fixture-hang.so", ACCEL_PLUGIN_STATUS_BLACKLISTED, "timed out");
  assert_status (registry, fixture_dir, "libaccel-bogus.so", ACCEL_PLUGIN_STATUS_BLACKLISTED, "dlopen failed");
  assert_status (registry, fixture_dir, "libaccel-fixture-truncated.so", ACCEL_PLUGIN_STATUS_BLACKLISTED, NULL);
  g_autofree char *good_file = g_build_filename (fixture_dir, "libaccel-fixture-good.so", NULL);
  assert_status (registry, dup_dir, "libaccel-fixture-good.so", ACCEL_PLUGIN_STATUS_DUPLICATE, good_file);
  assert_status (registry, cpu_dir, "libaccel-cpu.so", ACCEL_PLUGIN_STATUS_OK, NULL);

  /* What the good plugin registers is known without loading it. */
  AccelPlugin *good = plugin_at (registry, fixture_dir, "libaccel-fixture-good.so");
  g_assert_cmpstr (accel_plugin_get_name (good), ==, "fixture_good");
  g_assert_cmpstr (accel_plugin_get_version (good), ==, "1.0");
  g_assert_cmpstr (accel_plugin_get_license (good), ==, "LGPL-2.1-or-later");
  g_auto(GStrv) op_types = accel_plugin_list_op_types (good);
  g_auto(GStrv) kernels = accel_plugin_list_kernels (good);
  g_auto(GStrv) backends = accel_plugin_list_backends (good);
  g_auto(GStrv) actor_types = accel_plugin_list_actor_types (good);
  g_assert_true (strv_has (op_types, "fixture-op"));
  g_assert_true (strv_has (kernels, "fixture-op/cpu"));
  g_assert_true (strv_has (backends, "fixture"));
  g_assert_true (strv_has (actor_types, "FixtureCounter"));
  g_assert_true (accel_registry_find_plugin (registry, "fixture_good") == good);
  g_assert_true (accel_registry_find_plugin (registry, "fixture-good") == good);
  g_assert_false (accel_plugin_is_loaded (good));

  g_auto(GStrv) all_ops = accel_registry_list_op_types (registry);
  g_assert_true (strv_has (all_ops, "fixture-op"));
  g_assert_true (strv_has (all_ops, "gemm"));

  /* First use loads it. */
  g_autoptr(GError) error = NULL;
  GType backend = accel_registry_lookup_backend (registry, "fixture", &error);
  g_assert_no_error (error);
  g_assert_true (g_type_is_a (backend, ACCEL_TYPE_BACKEND));
  g_assert_true (accel_plugin_is_loaded (good));
  g_assert_cmpuint (accel_registry_get_n_loaded (registry), ==, 1);
  GType actor = accel_registry_lookup_actor_type (registry, "FixtureCounter", &error);
  g_assert_no_error (error);
  g_assert_true (g_type_is_a (actor, ACCEL_TYPE_ACTOR));

  /* A blacklisted plugin is not loaded on request. */
  AccelPlugin *init_error = plugin_at (registry, fixture_dir, "libaccel-fixture-init-error.so");
  g_assert_false (accel_plugin_load (init_error, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_PLUGIN);
  g_assert_nonnull (strstr (error->message, "blacklisted"));
}

static void
check_warm_start (void)
{
  g_autoptr(GError) error = NULL;
  const char *cache = g_getenv ("ACCEL_REGISTRY");
  g_autofree char *before = NULL;
  gsize before_size;
  g_assert_true (g_file_get_contents (cache, &before, &before_size, NULL));

  g_autoptr(AccelRegistry) registry = accel_registry_new (ACCEL_REGISTRY_FLAGS_NONE, &error);
  g_assert_no_error (error);

  /* Nothing scanned, nothing opened, yet everything known. */
  g_assert_cmpuint (accel_registry_get_n_scanned (registry), ==, 0);
  g_assert_cmpuint (accel_registry_get_n_loaded (registry), ==, 0);
  g_assert_false (mapped ("libaccel-fixture"));
  g_assert_false (mapped ("libaccel-cpu.so"));
  g_auto(GStrv) op_types = accel_registry_list_op_types (registry);
  g_assert_true (strv_has (op_types, "fixture-op"));
  g_autoptr(GPtrArray) kernels = accel_registry_list_kernels (registry, "fixture-op", "cpu");
  g_assert_cmpuint (kernels->len, ==, 2);
  g_assert_null (accel_kernel_get_vtable (kernels->pdata[0]));
  assert_status (registry, fixture_dir, "libaccel-fixture-segv.so", ACCEL_PLUGIN_STATUS_BLACKLISTED, "while loading");
  assert_status (registry, fixture_dir, "libaccel-fixture-hang.so", ACCEL_PLUGIN_STATUS_BLACKLISTED, "timed out");
  assert_status (registry, dup_dir, "libaccel-fixture-good.so", ACCEL_PLUGIN_STATUS_DUPLICATE, NULL);

  /* The cache was not rewritten. */
  g_autofree char *after = NULL;
  gsize after_size;
  g_assert_true (g_file_get_contents (cache, &after, &after_size, NULL));
  g_assert_cmpmem (before, before_size, after, after_size);

  /* First use opens exactly the plugin that provides it. */
  GType type = accel_registry_lookup_op_type (registry, "fixture-op", &error);
  g_assert_no_error (error);
  g_assert_true (g_type_is_a (type, ACCEL_TYPE_OP));
  g_assert_cmpuint (accel_registry_get_n_loaded (registry), ==, 1);
  g_assert_true (mapped ("libaccel-fixture-good.so"));
  g_assert_false (mapped ("libaccel-cpu.so"));
  g_assert_nonnull (accel_kernel_get_vtable (kernels->pdata[0]));
}

static void
test_warm (void)
{
  if (g_test_subprocess ())
    {
      check_warm_start ();
      return;
    }

  /* In a fresh process, so that no earlier test has mapped a plugin. */
  g_autofree char *cache = fixture_cache_copy ("warm.bin");
  g_setenv ("ACCEL_PLUGIN_PATH", full_path, TRUE);
  g_setenv ("ACCEL_REGISTRY", cache, TRUE);
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed ();
}

static void
test_touch (void)
{
  const char *files[] = { "libaccel-fixture-good.so", "libaccel-fixture-init-error.so", NULL };
  g_autofree char *dir = plugin_dir_with ("touch", files);
  g_autofree char *cache = tmp_file ("touch.bin");
  g_autofree char *good = g_build_filename (dir, "libaccel-fixture-good.so", NULL);
  g_autofree char *init_error = g_build_filename (dir, "libaccel-fixture-init-error.so", NULL);
  AccelRegistry *registry;

  assert_scans (dir, cache, 2);
  assert_scans (dir, cache, 0);

  /* Touching one plugin rescans it alone. */
  set_mtime (good, 3600);
  registry = registry_scanning (dir, cache, 1);
  assert_status (registry, dir, "libaccel-fixture-good.so", ACCEL_PLUGIN_STATUS_OK, NULL);
  assert_status (registry, dir, "libaccel-fixture-init-error.so", ACCEL_PLUGIN_STATUS_BLACKLISTED,
                 "libfixture.so.0 is not installed");
  g_object_unref (registry);

  /* A blacklisted file is not rescanned until it changes either. */
  assert_scans (dir, cache, 0);
  set_mtime (init_error, 7200);
  assert_scans (dir, cache, 1);

  /* A new file is scanned alone; a removed one leaves the registry. */
  g_autofree char *nosym_from = g_build_filename (fixture_dir, "libaccel-fixture-nosym.so", NULL);
  g_autofree char *nosym = g_build_filename (dir, "libaccel-fixture-nosym.so", NULL);
  copy_file (nosym_from, nosym);
  assert_scans (dir, cache, 1);
  g_assert_cmpint (g_unlink (nosym), ==, 0);
  registry = registry_scanning (dir, cache, 0);
  g_autoptr(GPtrArray) plugins = accel_registry_get_plugins (registry);
  g_assert_cmpuint (plugins->len, ==, 2);
  g_object_unref (registry);
}

static void
test_dependency (void)
{
  const char *files[] = { "libaccel-fixture-good.so", "libaccel-fixture-init-error.so", NULL };
  g_autofree char *dir = plugin_dir_with ("dependency", files);
  g_autofree char *cache = tmp_file ("dependency.bin");
  g_autofree char *dep_file = tmp_file ("dependency-file");
  AccelRegistry *registry;

  g_assert_true (g_file_set_contents (dep_file, "a", -1, NULL));
  g_setenv ("ACCEL_FIXTURE_DEP", "one", TRUE);
  g_setenv ("ACCEL_FIXTURE_DEP_FILE", dep_file, TRUE);
  g_unsetenv ("ACCEL_FIXTURE_INIT_ERROR_DEP");

  assert_scans (dir, cache, 2);
  assert_scans (dir, cache, 0);

  /* A declared variable changes: that plugin alone is scanned again. */
  g_setenv ("ACCEL_FIXTURE_DEP", "two", TRUE);
  assert_scans (dir, cache, 1);
  assert_scans (dir, cache, 0);

  /* A declared file changes, then goes. */
  g_assert_true (g_file_set_contents (dep_file, "bbbb", -1, NULL));
  assert_scans (dir, cache, 1);
  g_assert_cmpint (g_unlink (dep_file), ==, 0);
  assert_scans (dir, cache, 1);

  /* A blacklisted plugin's declared dependency (the library it lacked, say)
   * makes it be tried again. */
  g_setenv ("ACCEL_FIXTURE_INIT_ERROR_DEP", "installed", TRUE);
  registry = registry_scanning (dir, cache, 1);
  assert_status (registry, dir, "libaccel-fixture-init-error.so", ACCEL_PLUGIN_STATUS_BLACKLISTED, NULL);
  g_object_unref (registry);

  g_unsetenv ("ACCEL_FIXTURE_DEP");
  g_unsetenv ("ACCEL_FIXTURE_DEP_FILE");
  g_unsetenv ("ACCEL_FIXTURE_INIT_ERROR_DEP");
}

/* ---- damaged caches ------------------------------------------------------- */

#define METADATA_TYPE "(ssss@as@asa(ssu)@as@as@as@as)"

static GVariant *
metadata_new (const char *name, const char *const *op_types, const char *const *kernel_ops)
{
  GVariantBuilder kernels;
  g_variant_builder_init (&kernels, G_VARIANT_TYPE ("a(ssu)"));
  for (guint i = 0; kernel_ops && kernel_ops[i]; i++)
    g_variant_builder_add (&kernels, "(ssu)", kernel_ops[i], "cpu", 10);
  return g_variant_new (METADATA_TYPE, name, "", "1.0", "",
                        g_variant_new_strv (NULL, 0),
                        g_variant_new_strv (op_types, -1),
                        &kernels,
                        g_variant_new_strv (NULL, 0),
                        g_variant_new_strv (NULL, 0),
                        g_variant_new_strv (NULL, 0),
                        g_variant_new_strv (NULL, 0));
}

/* A cache file with one entry for @path, as the registry writes it, with
 * the given status and metadata. */
static GBytes *
cache_with_entry (const char *path, guint32 status, const char *reason, GVariant *metadata)
{
  /* The architecture as the registry itself wrote it. */
  g_autofree char *valid = NULL;
  gsize valid_size;
  g_assert_true (g_file_get_contents (fixture_cache (), &valid, &valid_size, NULL));
  g_autoptr(GBytes) valid_bytes = g_bytes_new_take (g_steal_pointer (&valid), valid_size);
  g_autoptr(GVariant) header = g_variant_ref_sink (g_variant_new_from_bytes (G_VARIANT_TYPE ("(susv)"),
                                                                            valid_bytes, FALSE));
  const char *arch;
  g_variant_get_child (header, 2, "&s", &arch);

  GStatBuf st;
  g_assert_cmpint (g_stat (path, &st), ==, 0);
  gint64 mtime = (gint64) st.st_mtim.tv_sec * G_USEC_PER_SEC + st.st_mtim.tv_nsec / 1000;

  GVariantBuilder entries;
  g_variant_builder_init (&entries, G_VARIANT_TYPE ("a(stxusm" "(ssssasasa(ssu)asasasas)" "s)"));
  g_variant_builder_add (&entries, "(stxusm@(ssssasasa(ssu)asasasas)s)", path, (guint64) st.st_size, mtime,
                         status, reason, metadata, "");
  g_autoptr(GVariant) file = g_variant_ref_sink (g_variant_new ("(susv)", "accel-registry", 2, arch,
                                                                g_variant_builder_end (&entries)));
  return g_variant_get_data_as_bytes (file);
}

static void
write_bytes (const char *path, GBytes *bytes)
{
  gsize size;
  const char *data = g_bytes_get_data (bytes, &size);
  g_assert_true (g_file_set_contents (path, data, size, NULL));
}

/* A registry over @dir with @cache must scan the good plugin again, find it
 * usable, and leave a cache the next start believes. */
static void
assert_rebuilt (const char *dir, const char *cache, const char *what)
{
  g_test_message ("cache: %s", what);
  AccelRegistry *registry = registry_scanning (dir, cache, 1);
  assert_status (registry, dir, "libaccel-fixture-good.so", ACCEL_PLUGIN_STATUS_OK, NULL);
  g_object_unref (registry);
  assert_scans (dir, cache, 0);
}

static void
test_corrupt_cache (void)
{
  const char *files[] = { "libaccel-fixture-good.so", NULL };
  g_autofree char *dir = plugin_dir_with ("corrupt", files);
  g_autofree char *cache = tmp_file ("corrupt.bin");
  g_autofree char *good = g_build_filename (dir, "libaccel-fixture-good.so", NULL);
  g_autofree char *valid = NULL;
  gsize valid_size;

  g_object_unref (registry_new (dir, cache));
  g_assert_true (g_file_get_contents (cache, &valid, &valid_size, NULL));
  g_assert_cmpuint (valid_size, >, 64);

  g_assert_true (g_file_set_contents (cache, "", 0, NULL));
  assert_rebuilt (dir, cache, "empty");

  for (gsize cut = 1; cut < valid_size; cut += valid_size / 7 + 1)
    {
      g_assert_true (g_file_set_contents (cache, valid, cut, NULL));
      assert_rebuilt (dir, cache, "truncated");
    }

  for (guint round = 0; round < 4; round++)
    {
      gsize size = 16 + g_test_rand_int_range (0, 8192);
      g_autofree guint32 *noise = g_new (guint32, size / 4 + 1);
      for (gsize i = 0; i < size / 4 + 1; i++)
        noise[i] = g_test_rand_int ();
      g_assert_true (g_file_set_contents (cache, (const char *) noise, size, NULL));
      assert_rebuilt (dir, cache, "random bytes");
    }

  /* Flipped bytes in a valid file. */
  for (guint round = 0; round < 8; round++)
    {
      g_autofree char *flipped = g_memdup2 (valid, valid_size);
      for (guint i = 0; i < 4; i++)
        flipped[g_test_rand_int_range (0, valid_size)] ^= 1 << g_test_rand_int_range (0, 8);
      g_assert_true (g_file_set_contents (cache, flipped, valid_size, NULL));
      /* It may still be valid where the flip hit padding or a string's
       * content; it must never crash, and must end up usable. */
      AccelRegistry *registry = registry_new (dir, cache);
      g_object_unref (registry);
      assert_scans (dir, cache, 0);
    }

  g_autoptr(GVariant) future =
    g_variant_ref_sink (g_variant_new ("(susv)", "accel-registry", 999, "any-arch",
                                       g_variant_new_string ("a format from the future")));
  g_autoptr(GBytes) future_bytes = g_variant_get_data_as_bytes (future);
  write_bytes (cache, future_bytes);
  assert_rebuilt (dir, cache, "another format version");

  g_autoptr(GVariant) foreign =
    g_variant_ref_sink (g_variant_new ("(susv)", "not-accel", 1, "any-arch", g_variant_new_int32 (7)));
  g_autoptr(GBytes) foreign_bytes = g_variant_get_data_as_bytes (foreign);
  write_bytes (cache, foreign_bytes);
  assert_rebuilt (dir, cache, "foreign magic");

  g_autoptr(GVariant) other_type = g_variant_ref_sink (g_variant_new ("(ii)", 1, 2));
  g_autoptr(GBytes) other_type_bytes = g_variant_get_data_as_bytes (other_type);
  write_bytes (cache, other_type_bytes);
  assert_rebuilt (dir, cache, "another GVariant type");

  /* Well-formed files whose entries say impossible things. */
  const char *ops[] = { "fixture-op", NULL };
  g_autoptr(GBytes) bad_status = cache_with_entry (good, 7, "", metadata_new ("fixture_good", ops, NULL));
  write_bytes (cache, bad_status);
  assert_rebuilt (dir, cache, "entry with an unknown status");

  g_autoptr(GBytes) bad_name = cache_with_entry (good, 0, "", metadata_new ("bad name!", ops, NULL));
  write_bytes (cache, bad_name);
  assert_rebuilt (dir, cache, "entry with a bad plugin name");

  const char *bad_ops[] = { "fixture op\n", NULL };
  g_autoptr(GBytes) bad_op = cache_with_entry (good, 0, "", metadata_new ("fixture_good", bad_ops, NULL));
  write_bytes (cache, bad_op);
  assert_rebuilt (dir, cache, "entry with a bad op type name");

  g_autoptr(GBytes) no_metadata = cache_with_entry (good, 0, "", NULL);
  write_bytes (cache, no_metadata);
  assert_rebuilt (dir, cache, "usable entry without metadata");

  g_autoptr(GBytes) no_reason = cache_with_entry (good, 1, "", NULL);
  write_bytes (cache, no_reason);
  assert_rebuilt (dir, cache, "blacklisted entry without a reason");

  g_autoptr(GBytes) relative = cache_with_entry (good, 0, "", metadata_new ("fixture_good", ops, NULL));
  gsize size;
  g_autofree char *data = g_memdup2 (g_bytes_get_data (relative, &size), g_bytes_get_size (relative));
  char *slash = NULL;
  for (gsize i = 0; i + strlen (good) <= size && slash == NULL; i++)
    if (memcmp (data + i, good, strlen (good)) == 0)
      slash = data + i;
  g_assert_nonnull (slash);
  *slash = 'x';   /* no longer absolute */
  g_assert_true (g_file_set_contents (cache, data, size, NULL));
  assert_rebuilt (dir, cache, "entry with a relative path");
}

/* A well-formed entry that matches the file is believed, even when it is
 * wrong; loading the plugin then shows what it really registers. */
static void
test_stale_cache (void)
{
  const char *files[] = { "libaccel-fixture-good.so", NULL };
  g_autofree char *dir = plugin_dir_with ("stale", files);
  g_autofree char *cache = tmp_file ("stale.bin");
  g_autofree char *good = g_build_filename (dir, "libaccel-fixture-good.so", NULL);
  g_autoptr(GError) error = NULL;

  const char *ops[] = { "ghost-op", NULL };
  g_autoptr(GBytes) bytes = cache_with_entry (good, 0, "", metadata_new ("fixture_good", ops, ops));
  write_bytes (cache, bytes);

  g_autoptr(AccelRegistry) registry = registry_scanning (dir, cache, 0);
  g_auto(GStrv) op_types = accel_registry_list_op_types (registry);
  g_assert_true (strv_has (op_types, "ghost-op"));
  g_assert_false (strv_has (op_types, "fixture-op"));
  g_autoptr(GPtrArray) ghost_kernels = accel_registry_list_kernels (registry, "ghost-op", NULL);
  g_assert_cmpuint (ghost_kernels->len, ==, 1);
  g_assert_null (accel_kernel_get_vtable (ghost_kernels->pdata[0]));

  g_assert_cmpuint (accel_registry_lookup_op_type (registry, "ghost-op", &error), ==, 0);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_PLUGIN);
  g_assert_nonnull (strstr (error->message, "ghost-op"));
  g_clear_error (&error);

  /* The plugin is loaded now, and what it registered is there. */
  g_assert_cmpuint (accel_registry_get_n_loaded (registry), ==, 1);
  GType type = accel_registry_lookup_op_type (registry, "fixture-op", &error);
  g_assert_no_error (error);
  g_assert_true (g_type_is_a (type, ACCEL_TYPE_OP));
  g_assert_null (accel_kernel_get_vtable (ghost_kernels->pdata[0]));
}

/* ---- duplicates, allow and deny ------------------------------------------- */

static void
test_allow_deny (void)
{
  g_autofree char *cache = fixture_cache_copy ("policy.bin");
  g_autofree char *conf_dir = g_build_filename (g_get_user_config_dir (), "accel-1.0", NULL);
  g_autofree char *conf = g_build_filename (conf_dir, "accel.conf", NULL);
  g_autoptr(GError) error = NULL;
  AccelRegistry *registry;

  g_unlink (conf);   /* left by an interrupted run */

  g_setenv ("ACCEL_PLUGIN_ALLOW", "fixture-good", TRUE);
  registry = registry_scanning (full_path, cache, 0);
  assert_status (registry, fixture_dir, "libaccel-fixture-good.so", ACCEL_PLUGIN_STATUS_OK, NULL);
  assert_status (registry, cpu_dir, "libaccel-cpu.so", ACCEL_PLUGIN_STATUS_DISABLED, "ACCEL_PLUGIN_ALLOW");
  assert_status (registry, fixture_dir, "libaccel-fixture-segv.so", ACCEL_PLUGIN_STATUS_BLACKLISTED, NULL);
  assert_status (registry, dup_dir, "libaccel-fixture-good.so", ACCEL_PLUGIN_STATUS_DUPLICATE, NULL);
  g_assert_cmpuint (accel_registry_lookup_backend (registry, "cpu", &error), ==, 0);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_UNKNOWN_TYPE);
  g_assert_nonnull (strstr (error->message, "disabled"));
  g_clear_error (&error);
  g_object_unref (registry);
  g_unsetenv ("ACCEL_PLUGIN_ALLOW");

  g_setenv ("ACCEL_PLUGIN_DENY", "nothing-here, fixture_good", TRUE);
  registry = registry_new (full_path, cache);
  assert_status (registry, fixture_dir, "libaccel-fixture-good.so", ACCEL_PLUGIN_STATUS_DISABLED, "ACCEL_PLUGIN_DENY");
  assert_status (registry, dup_dir, "libaccel-fixture-good.so", ACCEL_PLUGIN_STATUS_DUPLICATE, NULL);
  assert_status (registry, cpu_dir, "libaccel-cpu.so", ACCEL_PLUGIN_STATUS_OK, NULL);
  g_assert_cmpuint (accel_registry_lookup_op_type (registry, "fixture-op", &error), ==, 0);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_UNKNOWN_TYPE);
  g_assert_nonnull (strstr (error->message, "fixture_good"));
  g_clear_error (&error);
  AccelPlugin *good = accel_registry_find_plugin (registry, "fixture_good");
  g_assert_nonnull (good);
  g_assert_cmpint (accel_plugin_get_status (good), ==, ACCEL_PLUGIN_STATUS_DISABLED);
  g_assert_false (accel_plugin_load (good, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_PLUGIN);
  g_clear_error (&error);
  g_assert_cmpuint (accel_registry_get_n_loaded (registry), ==, 0);
  g_object_unref (registry);

  /* The same keys in the user's config file (meson gives this program a
   * config directory of its own); the environment wins. */
  g_assert_cmpint (g_mkdir_with_parents (conf_dir, 0755), ==, 0);
  g_assert_true (g_file_set_contents (conf, "[plugins]\ndeny=cpu\n", -1, NULL));

  registry = registry_new (full_path, cache);
  assert_status (registry, fixture_dir, "libaccel-fixture-good.so", ACCEL_PLUGIN_STATUS_DISABLED, "ACCEL_PLUGIN_DENY");
  assert_status (registry, cpu_dir, "libaccel-cpu.so", ACCEL_PLUGIN_STATUS_OK, NULL);
  g_object_unref (registry);
  g_unsetenv ("ACCEL_PLUGIN_DENY");

  registry = registry_new (full_path, cache);
  assert_status (registry, fixture_dir, "libaccel-fixture-good.so", ACCEL_PLUGIN_STATUS_OK, NULL);
  assert_status (registry, cpu_dir, "libaccel-cpu.so", ACCEL_PLUGIN_STATUS_DISABLED, "accel.conf");
  g_object_unref (registry);

  g_assert_true (g_file_set_contents (conf, "[plugins]\nallow=cpu;other\n", -1, NULL));
  registry = registry_new (full_path, cache);
  assert_status (registry, fixture_dir, "libaccel-fixture-good.so", ACCEL_PLUGIN_STATUS_DISABLED, "allow");
  assert_status (registry, cpu_dir, "libaccel-cpu.so", ACCEL_PLUGIN_STATUS_OK, NULL);
  g_object_unref (registry);
  g_assert_cmpint (g_unlink (conf), ==, 0);
}

/* ---- in-process scanning -------------------------------------------------- */

static void
test_fork_no (void)
{
  const char *files[] = { "libaccel-fixture-good.so", "libaccel-fixture-abi.so", "libaccel-fixture-nosym.so",
                          "libaccel-fixture-init-error.so", "libaccel-bogus.so", NULL };
  g_autofree char *dir = plugin_dir_with ("in-process", files);
  g_autofree char *cache = tmp_file ("in-process.bin");
  AccelRegistry *registry;

  g_setenv ("ACCEL_REGISTRY_FORK", "no", TRUE);
  registry = registry_scanning (dir, cache, 5);
  assert_status (registry, dir, "libaccel-fixture-good.so", ACCEL_PLUGIN_STATUS_OK, NULL);
  assert_status (registry, dir, "libaccel-fixture-abi.so", ACCEL_PLUGIN_STATUS_BLACKLISTED, "999");
  assert_status (registry, dir, "libaccel-fixture-nosym.so", ACCEL_PLUGIN_STATUS_BLACKLISTED,
                 "accel_plugin_fixture_nosym_get_desc");
  assert_status (registry, dir, "libaccel-fixture-init-error.so", ACCEL_PLUGIN_STATUS_BLACKLISTED,
                 "libfixture.so.0 is not installed");
  assert_status (registry, dir, "libaccel-bogus.so", ACCEL_PLUGIN_STATUS_BLACKLISTED, "dlopen failed");
  /* Scanned here: the good one is loaded already. */
  g_assert_cmpuint (accel_registry_get_n_loaded (registry), ==, 1);
  g_autoptr(GError) error = NULL;
  g_assert_cmpuint (accel_registry_lookup_op_type (registry, "fixture-op", &error), !=, 0);
  g_assert_no_error (error);
  g_object_unref (registry);

  registry = registry_scanning (dir, cache, 0);
  g_assert_cmpuint (accel_registry_get_n_loaded (registry), ==, 0);
  g_object_unref (registry);
  g_unsetenv ("ACCEL_REGISTRY_FORK");
}

/* ---- kernels -------------------------------------------------------------- */

static void
test_find_kernel (void)
{
  g_autofree char *cache = fixture_cache_copy ("kernels.bin");
  g_autoptr(AccelRegistry) registry = registry_new (full_path, cache);
  g_autoptr(AccelSystem) system = accel_system_new_with_registry (registry);
  g_autoptr(GError) error = NULL;

  g_autoptr(GPtrArray) listed = accel_registry_list_kernels (registry, "fixture-op", "cpu");
  g_assert_cmpuint (listed->len, ==, 2);
  g_assert_cmpuint (accel_kernel_get_rank (listed->pdata[0]), ==, 200);
  g_assert_cmpuint (accel_kernel_get_rank (listed->pdata[1]), ==, 100);
  g_assert_cmpstr (accel_kernel_get_plugin_name (listed->pdata[0]), ==, "fixture_good");
  g_assert_cmpstr (accel_kernel_get_op_type (listed->pdata[0]), ==, "fixture-op");
  g_assert_cmpstr (accel_kernel_get_backend (listed->pdata[0]), ==, "cpu");

  g_autoptr(AccelDevice) device = accel_system_get_device (system, "cpu:0", &error);
  g_assert_no_error (error);

  GType type = accel_registry_lookup_op_type (registry, "fixture-op", &error);
  g_assert_no_error (error);
  g_autoptr(AccelOp) op = g_object_new (type, "value", 7, NULL);

  /* The best kernel that takes the op. */
  const AccelKernel *kernel = accel_registry_find_kernel (registry, op, device, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (accel_kernel_get_rank (kernel), ==, 200);
  g_assert_true (accel_device_submit (device, op, NULL, &error));
  g_assert_no_error (error);
  int result;
  g_object_get (op, "result", &result, NULL);
  g_assert_cmpint (result, ==, 14);

  /* Too big for it: the next one. */
  g_object_set (op, "value", 500, NULL);
  kernel = accel_registry_find_kernel (registry, op, device, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (accel_kernel_get_rank (kernel), ==, 100);
  g_assert_true (accel_device_submit (device, op, NULL, &error));
  g_assert_no_error (error);
  g_object_get (op, "result", &result, NULL);
  g_assert_cmpint (result, ==, 1500);

  /* No kernel at all names the op and the backend. */
  GType lonely_type = accel_registry_lookup_op_type (registry, "fixture-lonely-op", &error);
  g_assert_no_error (error);
  g_autoptr(AccelOp) lonely = g_object_new (lonely_type, NULL);
  g_assert_null (accel_registry_find_kernel (registry, lonely, device, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_NO_KERNEL);
  g_assert_nonnull (strstr (error->message, "fixture-lonely-op"));
  g_assert_nonnull (strstr (error->message, "cpu"));
  g_clear_error (&error);

  /* Every kernel refuses: the best one's reason. */
  GType picky_type = accel_registry_lookup_op_type (registry, "fixture-picky-op", &error);
  g_assert_no_error (error);
  g_autoptr(AccelOp) picky = g_object_new (picky_type, NULL);
  g_assert_null (accel_registry_find_kernel (registry, picky, device, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "refuses everything"));
  g_clear_error (&error);

  accel_system_shutdown (system);
}

/* A plugin declared by ACCEL_PLUGIN_DEFINE_KERNELS: each entry of its table
 * is a kernel of the table's backend, at the table's rank unless the entry
 * names its own, and runs the entry's function once its plugin loads. */
static void
test_kernel_table (void)
{
  g_autofree char *cache = tmp_file ("kernel-table.bin");
  g_autoptr(AccelRegistry) registry = registry_new (kernels_dir, cache);
  static const struct {
    const char *op_type;
    guint rank;
    GType (*get_type) (void);
  } expected[] = {
    { "scal", 3, accel_scal_get_type },
    { "axpy", 7, accel_axpy_get_type },
  };

  AccelPlugin *plugin = accel_registry_find_plugin (registry, "fixture_kernels");
  g_assert_nonnull (plugin);
  g_auto(GStrv) names = accel_plugin_list_kernels (plugin);
  g_assert_cmpuint (g_strv_length (names), ==, G_N_ELEMENTS (expected));

  for (guint i = 0; i < G_N_ELEMENTS (expected); i++)
    {
      g_autofree char *name = g_strdup_printf ("%s/fixture-backend", expected[i].op_type);
      g_assert_true (g_strv_contains ((const char *const *) names, name));

      g_autoptr(GPtrArray) listed = accel_registry_list_kernels (registry, expected[i].op_type, "fixture-backend");
      g_assert_cmpuint (listed->len, ==, 1);
      const AccelKernel *kernel = listed->pdata[0];
      g_assert_cmpuint (accel_kernel_get_rank (kernel), ==, expected[i].rank);
      g_assert_cmpstr (accel_kernel_get_plugin_name (kernel), ==, "fixture_kernels");

      g_autoptr(AccelOp) op = g_object_new (expected[i].get_type (), NULL);
      g_autoptr(GError) error = NULL;
      g_assert_false (accel_kernel_run (kernel, op, NULL, &error));
      g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_FAILED);
      g_autofree char *message = g_strdup_printf ("fixture_kernels: the %s kernel ran", expected[i].op_type);
      g_assert_cmpstr (error->message, ==, message);
    }
}

static gpointer
race_lookup (gpointer data)
{
  return GSIZE_TO_POINTER (accel_registry_lookup_op_type (data, "fixture-op", NULL));
}

/* Many threads ask for the same lazily loaded type at once: the plugin is
 * loaded once and every one of them gets the type. */
static void
test_concurrent_load (void)
{
  g_autofree char *cache = fixture_cache_copy ("race.bin");
  g_autoptr(AccelRegistry) registry = registry_new (full_path, cache);
  GThread *threads[16];

  g_assert_cmpuint (accel_registry_get_n_loaded (registry), ==, 0);
  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    threads[i] = g_thread_new ("race", race_lookup, registry);
  GType first = 0;
  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    {
      GType type = GPOINTER_TO_SIZE (g_thread_join (threads[i]));
      g_assert_cmpuint (type, !=, 0);
      if (first == 0)
        first = type;
      g_assert_cmpuint (type, ==, first);
    }
  g_assert_cmpuint (accel_registry_get_n_loaded (registry), ==, 1);
}

/* ---- main ----------------------------------------------------------------- */

/* Tests that load a copy of a fixture from another directory run in a
 * process of their own: one process cannot hold two copies of a plugin. */
static void
in_subprocess (gconstpointer data)
{
  GTestFunc func = (GTestFunc) data;

  if (g_test_subprocess ())
    {
      func ();
      return;
    }
  fixture_cache ();
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed ();
}

static void
remove_tree (const char *path)
{
  if (g_file_test (path, G_FILE_TEST_IS_DIR) && !g_file_test (path, G_FILE_TEST_IS_SYMLINK))
    {
      g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
      const char *name;
      while (dir && (name = g_dir_read_name (dir)))
        {
          g_autofree char *child = g_build_filename (path, name, NULL);
          remove_tree (child);
        }
      g_rmdir (path);
    }
  else
    g_unlink (path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  fixture_dir = g_getenv ("ACCEL_TEST_FIXTURE_DIR");
  dup_dir = g_getenv ("ACCEL_TEST_FIXTURE_DUP_DIR");
  kernels_dir = g_getenv ("ACCEL_TEST_FIXTURE_KERNELS_DIR");
  cpu_dir = g_getenv ("ACCEL_TEST_CPU_PLUGIN_DIR");
  if (fixture_dir == NULL || dup_dir == NULL || kernels_dir == NULL || cpu_dir == NULL)
    {
      g_printerr ("Run this test through meson: it needs ACCEL_TEST_FIXTURE_DIR, ACCEL_TEST_FIXTURE_DUP_DIR, "
                  "ACCEL_TEST_FIXTURE_KERNELS_DIR and ACCEL_TEST_CPU_PLUGIN_DIR\n");
      return 77;
    }
  full_path = g_strjoin (G_SEARCHPATH_SEPARATOR_S, fixture_dir, dup_dir, cpu_dir, NULL);
  g_unsetenv ("ACCEL_PLUGIN_ALLOW");
  g_unsetenv ("ACCEL_PLUGIN_DENY");
  g_unsetenv ("ACCEL_REGISTRY_FORK");

  /* A subprocess re-run works in its parent's directory. */
  const char *inherited = g_getenv ("ACCEL_TEST_TMP_DIR");
  if (g_test_subprocess () && inherited)
    tmp_dir = g_strdup (inherited);
  else
    {
      g_autoptr(GError) error = NULL;
      tmp_dir = g_dir_make_tmp ("accel-registry-XXXXXX", &error);
      g_assert_no_error (error);
      g_setenv ("ACCEL_TEST_TMP_DIR", tmp_dir, TRUE);
    }

  g_test_add_func ("/registry/no-scan", test_no_scan);
  g_test_add_func ("/registry/scan", test_scan);
  g_test_add_func ("/registry/warm", test_warm);
  g_test_add_func ("/registry/touch", test_touch);
  g_test_add_func ("/registry/dependency", test_dependency);
  g_test_add_func ("/registry/corrupt-cache", test_corrupt_cache);
  g_test_add_data_func ("/registry/stale-cache", (gconstpointer) test_stale_cache, in_subprocess);
  g_test_add_func ("/registry/allow-deny", test_allow_deny);
  g_test_add_data_func ("/registry/fork-no", (gconstpointer) test_fork_no, in_subprocess);
  g_test_add_func ("/registry/find-kernel", test_find_kernel);
  g_test_add_func ("/registry/kernel-table", test_kernel_table);
  g_test_add_func ("/registry/concurrent-load", test_concurrent_load);

  int status = g_test_run ();

  g_clear_object (&cold_registry);
  if (!g_test_subprocess ())
    remove_tree (tmp_dir);
  g_free (tmp_dir);
  g_free (full_path);
  g_free (fixture_cache_file);
  return status;
}
