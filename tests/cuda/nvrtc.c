/* Tests of the cuda backend's module compiler (NVRTC with a disk cache),
 * which need no GPU and so run in CI: compiling for an architecture with
 * name expressions, a warm cache compiling nothing (NVRTC invocations
 * counted), corrupt cache files ignored and rebuilt, compile errors with
 * their line and column, bad requests, PTX for a virtual architecture, and
 * modules refused where they cannot run.
 *
 * Each run has a cache directory of its own, removed at the end.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#define _GNU_SOURCE
#include <accel.h>
#include <string.h>
#include <glib/gstdio.h>

static char *cache_root;

static AccelSystem *
new_system (void)
{
  g_autoptr(GError) error = NULL;
  AccelSystem *system = accel_system_new (&error);
  g_assert_no_error (error);
  return system;
}

static AccelActor *
compiler (AccelSystem *system)
{
  g_autoptr(GError) error = NULL;
  AccelActor *actor = accel_module_get_compiler (system, "cuda", &error);
  g_assert_no_error (error);
  g_assert_nonnull (actor);
  return actor;
}

static guint
counter (AccelActor *actor, const char *name)
{
  guint v = 0;
  g_object_get (actor, name, &v, NULL);
  return v;
}

/* A kernel source with a constant of its own, so that no two sources of
 * a run share a cache entry. */
static char *
make_source (guint salt)
{
  return g_strdup_printf ("template <typename T>\n"
                          "__global__ void scale (T *x, T a, int n)\n"
                          "{\n"
                          "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                          "  if (i < n) x[i] = x[i] * a + (T) %u;\n"
                          "}\n"
                          "extern \"C\" __global__ void plain_%u (float *x) { x[threadIdx.x] += SCALE; }\n",
                          salt, salt);
}

static GVariant *
ask (AccelActor *actor, const char *source, const char * const *options, const char * const *names,
     const char *target, GError **error)
{
  const char * const none[] = { NULL };
  GVariant *req = g_variant_new ("(ss^as^ass)", source, "module.cu", options ? options : none,
                                 names ? names : none, target);
  return accel_actor_ask (actor, req, NULL, error);
}

static const char * const default_options[] = { "-std=c++17", "-DSCALE=3.0f", NULL };
static const char * const default_names[] = { "scale<float>", "scale<double>", NULL };

static GBytes *
reply_image (GVariant *reply)
{
  g_autoptr(GVariant) v = g_variant_get_child_value (reply, 0);
  return g_variant_get_data_as_bytes (v);
}

static gboolean
reply_compiled (GVariant *reply)
{
  gboolean compiled;
  g_variant_get_child (reply, 4, "b", &compiled);
  return compiled;
}

static gboolean
bytes_contain (GBytes *bytes, const char *needle)
{
  gsize n;
  const guint8 *p = g_bytes_get_data (bytes, &n);
  return memmem (p, n, needle, strlen (needle)) != NULL;
}

static void
test_compile (void)
{
  g_autoptr(AccelSystem) system = new_system ();
  g_autoptr(AccelActor) nvrtc = compiler (system);
  g_autoptr(GError) error = NULL;
  guint salt = g_test_rand_int ();
  g_autofree char *src = make_source (salt);

  g_autoptr(GVariant) reply = ask (nvrtc, src, default_options, default_names, "sm_90a", &error);
  g_assert_no_error (error);
  g_assert_true (g_variant_is_of_type (reply, ACCEL_MODULE_COMPILE_REPLY_TYPE));
  guint32 kind;
  const char *arch;
  g_autoptr(GVariant) lowered = NULL;
  g_variant_get (reply, "(@ayu@a{ss}&sb&s)", NULL, &kind, &lowered, NULL, NULL, &arch);
  g_assert_cmpuint (kind, ==, ACCEL_MODULE_IMAGE_CUBIN);
  g_assert_cmpstr (arch, ==, "sm_90a");
  g_assert_true (reply_compiled (reply));

  /* An ELF image holding the kernels under their (lowered) names. */
  g_autoptr(GBytes) image = reply_image (reply);
  g_assert_cmpmem (g_bytes_get_data (image, NULL), 4, "\177ELF", 4);
  g_autofree char *plain = g_strdup_printf ("plain_%u", salt);
  g_assert_true (bytes_contain (image, plain));
  const char *sf = NULL, *sd = NULL;
  g_assert_true (g_variant_lookup (lowered, "scale<float>", "&s", &sf));
  g_assert_true (g_variant_lookup (lowered, "scale<double>", "&s", &sd));
  g_assert_true (g_str_has_prefix (sf, "_Z"));
  g_assert_cmpstr (sf, !=, sd);
  g_assert_true (bytes_contain (image, sf));
  g_assert_true (bytes_contain (image, sd));
  g_assert_cmpuint (counter (nvrtc, "compilations"), ==, 1);

  /* A virtual architecture gives PTX. */
  g_autoptr(GVariant) ptx = ask (nvrtc, src, default_options, NULL, "compute_80", &error);
  g_assert_no_error (error);
  g_variant_get_child (ptx, 1, "u", &kind);
  g_assert_cmpuint (kind, ==, ACCEL_MODULE_IMAGE_PTX);
  g_autoptr(GBytes) text = reply_image (ptx);
  g_assert_true (bytes_contain (text, ".target sm_80"));
  g_assert_true (bytes_contain (text, plain));
}

static void
test_cache (void)
{
  g_autoptr(AccelSystem) system = new_system ();
  g_autoptr(AccelActor) nvrtc = compiler (system);
  g_autoptr(GError) error = NULL;
  guint n = g_test_rand_int_range (3, 7);
  g_autoptr(GPtrArray) sources = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) images = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);

  guint before = counter (nvrtc, "compilations");
  for (guint i = 0; i < n; i++)
    {
      g_ptr_array_add (sources, make_source (g_test_rand_int ()));
      g_autoptr(GVariant) reply = ask (nvrtc, sources->pdata[i], default_options, default_names, "sm_90a", &error);
      g_assert_no_error (error);
      g_assert_true (reply_compiled (reply));
      g_ptr_array_add (images, reply_image (reply));
    }
  g_assert_cmpuint (counter (nvrtc, "compilations"), ==, before + n);

  /* Warm: the same requests, in another order, compile nothing. */
  guint hits = counter (nvrtc, "cache-hits");
  for (guint k = 0; k < n; k++)
    {
      guint i = n - 1 - k;
      g_autoptr(GVariant) reply = ask (nvrtc, sources->pdata[i], default_options, default_names, "sm_90a", &error);
      g_assert_no_error (error);
      g_assert_false (reply_compiled (reply));
      g_autoptr(GBytes) image = reply_image (reply);
      g_assert_true (g_bytes_equal (image, images->pdata[i]));
    }
  g_assert_cmpuint (counter (nvrtc, "compilations"), ==, before + n);
  g_assert_cmpuint (counter (nvrtc, "cache-hits"), ==, hits + n);

  /* Another system's compiler (as another process would) finds them too. */
  g_autoptr(AccelSystem) other_system = new_system ();
  g_autoptr(AccelActor) other = compiler (other_system);
  g_assert_true (other != nvrtc);
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(GVariant) reply = ask (other, sources->pdata[i], default_options, default_names, "sm_90a", &error);
      g_assert_no_error (error);
      g_assert_false (reply_compiled (reply));
    }
  g_assert_cmpuint (counter (other, "compilations"), ==, 0);

  /* Each part of the key matters: an option, a name expression, the
   * architecture, the source. */
  const char * const other_options[] = { "-std=c++17", "-DSCALE=4.0f", NULL };
  const char * const fewer_names[] = { "scale<float>", NULL };
  g_autoptr(GVariant) r1 = ask (other, sources->pdata[0], other_options, default_names, "sm_90a", &error);
  g_assert_true (r1 && reply_compiled (r1));
  g_autoptr(GVariant) r2 = ask (other, sources->pdata[0], default_options, fewer_names, "sm_90a", &error);
  g_assert_true (r2 && reply_compiled (r2));
  g_autoptr(GVariant) r3 = ask (other, sources->pdata[0], default_options, default_names, "sm_80", &error);
  g_assert_true (r3 && reply_compiled (r3));
  g_autofree char *edited = g_strconcat (sources->pdata[0], "\n", NULL);
  g_autoptr(GVariant) r4 = ask (other, edited, default_options, default_names, "sm_90a", &error);
  g_assert_no_error (error);
  g_assert_true (reply_compiled (r4));
  g_assert_cmpuint (counter (other, "compilations"), ==, 4);
}

static char *
only_cache_file (void)
{
  g_autofree char *dir = g_build_filename (cache_root, "accel-1.0", "kernels", NULL);
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  g_assert_nonnull (d);
  char *found = NULL;
  const char *name;
  while ((name = g_dir_read_name (d)) != NULL)
    if (g_str_has_suffix (name, ".bin"))
      {
        g_assert_null (found);
        found = g_build_filename (dir, name, NULL);
      }
  g_assert_nonnull (found);
  return found;
}

static void
clear_cache (void)
{
  g_autofree char *dir = g_build_filename (cache_root, "accel-1.0", "kernels", NULL);
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_unlink (path);
    }
}

static void
test_corrupt_cache (void)
{
  g_autoptr(AccelSystem) system = new_system ();
  g_autoptr(AccelActor) nvrtc = compiler (system);
  g_autoptr(GError) error = NULL;
  g_autofree char *src = make_source (g_test_rand_int ());

  clear_cache ();
  g_autoptr(GVariant) first = ask (nvrtc, src, default_options, default_names, "sm_90a", &error);
  g_assert_no_error (error);
  g_autoptr(GBytes) image = reply_image (first);
  g_autofree char *path = only_cache_file ();
  g_autofree char *good = NULL;
  gsize good_len;
  g_assert_true (g_file_get_contents (path, &good, &good_len, NULL));

  for (guint round = 0; round < 6; round++)
    {
      /* Damage the file in one of several ways. */
      g_autofree char *bad = g_memdup2 (good, good_len);
      gsize bad_len = good_len;
      switch (round)
        {
        case 0: bad_len = g_test_rand_int_range (0, good_len); break;                    /* truncated */
        case 1: bad[g_test_rand_int_range (good_len / 4, 3 * good_len / 4)] ^= 0x5a; break; /* a flipped byte */
        case 2: for (gsize i = 0; i < bad_len; i++) bad[i] = (char) g_test_rand_int (); break; /* garbage */
        case 3: bad_len = 0; break;                                                     /* empty */
        case 4: memset (bad + good_len - 8, 0, 8); break;                               /* a damaged tail */
        case 5: memset (bad, 0xff, MIN (good_len, 64)); break;                          /* a damaged head */
        }
      g_assert_true (g_file_set_contents (path, bad, bad_len, NULL));

      guint compiled_before = counter (nvrtc, "compilations");
      g_autoptr(GVariant) again = ask (nvrtc, src, default_options, default_names, "sm_90a", &error);
      g_assert_no_error (error);
      g_assert_true (reply_compiled (again));
      g_assert_cmpuint (counter (nvrtc, "compilations"), ==, compiled_before + 1);
      g_autoptr(GBytes) rebuilt = reply_image (again);
      g_assert_true (g_bytes_equal (rebuilt, image));

      /* The file was written again, whole, and is trusted again. */
      g_autoptr(GVariant) warm = ask (nvrtc, src, default_options, default_names, "sm_90a", &error);
      g_assert_no_error (error);
      g_assert_false (reply_compiled (warm));
    }

  /* A good file of another key, under this key's name, is not used. */
  g_autofree char *other_src = make_source (g_test_rand_int ());
  g_autoptr(GVariant) other = ask (nvrtc, other_src, default_options, default_names, "sm_90a", &error);
  g_assert_no_error (error);
  g_autofree char *dir = g_path_get_dirname (path);
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  g_autofree char *other_path = NULL;
  while ((name = g_dir_read_name (d)) != NULL)
    if (g_str_has_suffix (name, ".bin") && !g_str_has_suffix (path, name))
      other_path = g_build_filename (dir, name, NULL);
  g_assert_nonnull (other_path);
  g_autofree char *other_contents = NULL;
  gsize other_len;
  g_assert_true (g_file_get_contents (other_path, &other_contents, &other_len, NULL));
  g_assert_true (g_file_set_contents (path, other_contents, other_len, NULL));
  guint compiled_before = counter (nvrtc, "compilations");
  g_autoptr(GVariant) swapped = ask (nvrtc, src, default_options, default_names, "sm_90a", &error);
  g_assert_no_error (error);
  g_assert_true (reply_compiled (swapped));
  g_assert_cmpuint (counter (nvrtc, "compilations"), ==, compiled_before + 1);
  g_autoptr(GBytes) right = reply_image (swapped);
  g_assert_true (g_bytes_equal (right, image));
}

static void
test_compile_error (void)
{
  g_autoptr(AccelSystem) system = new_system ();
  g_autoptr(AccelActor) nvrtc = compiler (system);
  g_autoptr(GError) error = NULL;

  for (guint round = 0; round < 3; round++)
    {
      /* The error sits at a random line and column. */
      guint blank = g_test_rand_int_range (0, 12), indent = g_test_rand_int_range (0, 9);
      g_autoptr(GString) src = g_string_new ("extern \"C\" __global__ void k (float *x)\n{\n");
      for (guint i = 0; i < blank; i++)
        g_string_append (src, i % 2 ? "  // nothing here\n" : "\n");
      g_string_append_printf (src, "%*sx[0] = undefined_thing_%u;\n}\n", indent, "", round);
      guint line = 3 + blank, column = indent + 8;

      g_autoptr(GVariant) reply = ask (nvrtc, src->str, NULL, NULL, "sm_90a", &error);
      g_assert_null (reply);
      g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
      g_autofree char *where = g_strdup_printf ("module.cu:%u:%u: error: ", line, column);
      if (!g_str_has_prefix (error->message, where))
        g_error ("expected the message to start with “%s”: %s", where, error->message);
      g_test_message ("%s", error->message);
      g_autofree char *ident = g_strdup_printf ("undefined_thing_%u", round);
      g_assert_nonnull (strstr (error->message, ident));
      g_assert_nonnull (strstr (error->message, "NVRTC"));
      g_clear_error (&error);
    }

  /* A missing header, a bad option, a bad name expression, bad targets. */
  g_autoptr(GVariant) r1 = ask (nvrtc, "#include \"no-such-header.h\"\n", NULL, NULL, "sm_90a", &error);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "module.cu:1"));
  g_assert_nonnull (strstr (error->message, "no-such-header.h"));
  g_clear_error (&error);
  const char * const bad_option[] = { "--no-such-option", NULL };
  g_autofree char *src = make_source (g_test_rand_int ());
  g_autoptr(GVariant) r2 = ask (nvrtc, src, bad_option, NULL, "sm_90a", &error);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  const char * const bad_name[] = { "no_such_template<int>", NULL };
  g_autoptr(GVariant) r3 = ask (nvrtc, src, default_options, bad_name, "sm_90a", &error);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_autoptr(GVariant) r4 = ask (nvrtc, src, default_options, NULL, "sm_nine", &error);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_autoptr(GVariant) r5 = ask (nvrtc, src, default_options, NULL, "cuda:77", &error);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_NO_DEVICE);
  g_clear_error (&error);
  g_autoptr(GVariant) r6 = accel_actor_ask (nvrtc, g_variant_new ("(s)", "compile"), NULL, &error);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  /* The compiler goes on after bad input. */
  g_autoptr(GVariant) ok = ask (nvrtc, src, default_options, default_names, "sm_90a", &error);
  g_assert_no_error (error);
  g_assert_nonnull (ok);
}

/* Where modules cannot run, they are refused with a clear error. */
static void
test_modules_refused (void)
{
  g_autoptr(AccelSystem) system = new_system ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelDevice) cpu = accel_system_get_device (system, "cpu:0", &error);
  g_assert_no_error (error);
  g_autofree char *src = make_source (g_test_rand_int ());

  g_autoptr(AccelModule) m1 = accel_module_new_from_source (cpu, src, default_options, NULL, NULL, &error);
  g_assert_null (m1);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED);
  g_assert_nonnull (strstr (error->message, "cpu:0"));
  g_clear_error (&error);

  guint8 junk[64];
  for (guint i = 0; i < sizeof junk; i++)
    junk[i] = g_test_rand_int_range (1, 256);
  junk[0] = 0x01;
  g_autoptr(GBytes) garbage = g_bytes_new (junk, sizeof junk);
  g_autoptr(AccelModule) m2 = accel_module_new_from_image (cpu, garbage, NULL, &error);
  g_assert_null (m2);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  /* A real image on a device that loads no modules. */
  g_autoptr(AccelActor) nvrtc = compiler (system);
  g_autoptr(GVariant) reply = ask (nvrtc, src, default_options, NULL, "sm_90a", &error);
  g_assert_no_error (error);
  g_autoptr(GBytes) image = reply_image (reply);
  g_autoptr(AccelModule) m3 = accel_module_new_from_image (cpu, image, NULL, &error);
  g_assert_null (m3);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_NO_KERNEL);
  g_clear_error (&error);
}

static void
remove_tree (const char *path)
{
  if (g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      g_autoptr(GDir) d = g_dir_open (path, 0, NULL);
      const char *name;
      while (d && (name = g_dir_read_name (d)) != NULL)
        {
          g_autofree char *child = g_build_filename (path, name, NULL);
          remove_tree (child);
        }
    }
  g_remove (path);
}

int
main (int argc, char **argv)
{
  /* A cache of this run's own, set before GLib reads the variable. */
  cache_root = g_dir_make_tmp ("accel-nvrtc-test-XXXXXX", NULL);
  g_assert_nonnull (cache_root);
  g_setenv ("XDG_CACHE_HOME", cache_root, TRUE);

  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/nvrtc/compile", test_compile);
  g_test_add_func ("/nvrtc/cache", test_cache);
  g_test_add_func ("/nvrtc/corrupt-cache", test_corrupt_cache);
  g_test_add_func ("/nvrtc/compile-error", test_compile_error);
  g_test_add_func ("/nvrtc/modules-refused", test_modules_refused);
  int ret = g_test_run ();
  remove_tree (cache_root);
  g_free (cache_root);
  return ret;
}
