/* Tests that accel-inspect shows the serving patterns: the six actor
 * types and the `linear` model type in its listing (read from the cache,
 * nothing loaded), and each type's details with its properties, as for op
 * types.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <accel.h>
#include <string.h>

static char *
run_inspect (const char *arg, int *status)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE
                                                                       | G_SUBPROCESS_FLAGS_STDERR_MERGE);
  g_subprocess_launcher_setenv (launcher, "LC_ALL", "C.UTF-8", TRUE);
  const char *argv[] = { g_getenv ("ACCEL_TEST_INSPECT"), arg, NULL };
  g_autoptr(GSubprocess) process = g_subprocess_launcher_spawnv (launcher, argv, &error);
  g_assert_no_error (error);
  char *out = NULL;
  g_assert_true (g_subprocess_communicate_utf8 (process, NULL, NULL, &out, NULL, &error));
  g_assert_no_error (error);
  *status = g_subprocess_get_exit_status (process);
  return out;
}

static void
assert_has (const char *text, const char *part)
{
  if (strstr (text, part) == NULL)
    g_error ("accel-inspect's output lacks “%s”:\n%s", part, text);
}

static void
test_list (void)
{
  int status;
  g_autofree char *out = run_inspect (NULL, &status);
  g_assert_cmpint (status, ==, 0);
  const char *types[] = { "batcher", "replica-pool", "fair-share", "hot-swap", "cascade", "moe-router" };
  for (guint i = 0; i < G_N_ELEMENTS (types); i++)
    {
      g_autofree char *line = g_strdup_printf ("%-22s actor type  patterns", types[i]);
      assert_has (out, line);
    }
  assert_has (out, "linear                 model type  patterns");
  assert_has (out, "6 actor types, 1 model type");

  g_autofree char *json = run_inspect ("--json", &status);
  g_assert_cmpint (status, ==, 0);
  assert_has (json, "\"model-types\": [\"linear\"]");
  assert_has (json, "\"actor-types\": [\"batcher\", \"cascade\", \"fair-share\", \"hot-swap\", \"moe-router\", \"replica-pool\"]");
}

static void
test_details (void)
{
  struct {
    const char *name;
    const char *parts[4];
  } types[] = {
    { "batcher", { "Dynamic batching", "preferred-batch-sizes", "values: reject, delay", "construct-only" } },
    { "replica-pool", { "failover", "devices", "values: round-robin, least-outstanding", "replica-batches" } },
    { "fair-share", { "fair queuing", "tenants", "max-queue-size", "queue-delay-p99-us" } },
    { "hot-swap", { "replaced while it serves", "model-version", "Model served; set it to swap", "batch-size-histogram" } },
    { "cascade", { "confidence", "threshold", "confidence-output", "large-rows" } },
    { "moe-router", { "top-k", "experts", "gate-output", "expert-rows" } },
    { "linear", { "Model Type Details", "layer-sizes", "values: none, relu, gelu", "seed" } },
  };
  for (guint i = 0; i < G_N_ELEMENTS (types); i++)
    {
      int status;
      g_autofree char *out = run_inspect (types[i].name, &status);
      g_assert_cmpint (status, ==, 0);
      assert_has (out, i < 6 ? "Actor Type Details:" : "Model Type Details:");
      assert_has (out, "Provided by    patterns");
      assert_has (out, "Properties:");
      for (guint j = 0; j < G_N_ELEMENTS (types[i].parts); j++)
        assert_has (out, types[i].parts[j]);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  if (g_getenv ("ACCEL_TEST_INSPECT") == NULL)
    {
      g_printerr ("set ACCEL_TEST_INSPECT\n");
      return 1;
    }
  g_test_add_func ("/patterns/inspect/list", test_list);
  g_test_add_func ("/patterns/inspect/details", test_details);
  return g_test_run ();
}
