/* The serving patterns on cuda:0 (suite gpu; every test skips where there
 * is no cuda:0): the batcher over `linear` models in f32 and bf16 against
 * the host reference, and a replica pool over cuda:0 and cpu:0 (and
 * cuda:1 where there is one) with every answer right and the GPU serving.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "patterns-test.h"

#include <string.h>

static AccelDevice *
gpu (const char *name)
{
  g_autoptr(GError) error = NULL;
  AccelDevice *device = accel_system_get_device (pt_system (), name, &error);
  if (device == NULL)
    {
      g_autofree char *why = g_strdup_printf ("no %s (%s)", name, error->message);
      g_test_skip (why);
    }
  return device;
}

/* Sends @n requests of 1 to 4 rows; checks every reply against @linear's
 * reference; returns the largest batch seen. */
static guint
serve_and_check (AccelActor *actor, PtLinear *linear, guint n)
{
  gint64 k = linear->sizes[0];
  PtAsks *asks = pt_asks_new (n);
  double **xs = g_new0 (double *, n);
  guint *rows = g_new (guint, n);
  for (guint i = 0; i < n; i++)
    {
      rows[i] = g_test_rand_int_range (1, 5);
      xs[i] = pt_random (linear->dtype, rows[i] * k, -1, 1);
      pt_ask (asks, actor, i, pt_request_end (pt_request ("x", linear->dtype, xs[i], rows[i], k)));
    }
  pt_asks_wait (asks, n);
  guint largest = 0;
  double rtol = linear->dtype == ACCEL_DTYPE_F32 ? 1e-4 : 2 * pt_eps (linear->dtype);
  for (guint i = 0; i < n; i++)
    {
      PtAnswer *a = &asks->answers[i];
      g_assert_no_error (a->error);
      guint got_rows;
      g_autofree double *y = pt_reply_output (a->reply, "y", linear->dtype, &got_rows, NULL);
      g_assert_cmpuint (got_rows, ==, rows[i]);
      pt_linear_check (linear, "reply on the GPU", xs[i], rows[i], y, rtol, 1e-5);
      largest = MAX (largest, pt_reply_u32 (a->reply, "batch-size"));
      g_free (xs[i]);
    }
  pt_asks_free (asks);
  g_free (xs);
  g_free (rows);
  return largest;
}

static void
check_batcher (AccelDType dtype)
{
  g_autoptr(AccelDevice) cuda = gpu ("cuda:0");
  if (cuda == NULL)
    return;
  gint64 sizes[] = { g_test_rand_int_range (17, 300), g_test_rand_int_range (17, 300), g_test_rand_int_range (3, 200) };
  guint n_sizes = dtype == ACCEL_DTYPE_F32 ? 3 : 2;
  if (n_sizes == 2)
    sizes[1] = sizes[2];
  PtLinear *linear = pt_linear_new (dtype, sizes, n_sizes, "relu", "none");
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelActor) actor = accel_system_spawn (pt_system (), "batcher", &error, "model", linear->model,
                                                    "device", cuda, "max-batch-size", 16, "max-inflight", 2,
                                                    "max-queue-delay-us", (guint64) 2000, NULL);
  g_assert_no_error (error);
  guint largest = serve_and_check (actor, linear, 60);
  g_assert_cmpuint (largest, >, 1);
  g_assert_true (accel_model_is_prepared (linear->model, cuda));
  accel_actor_stop (actor);
  pt_linear_free (linear);
}

static void
test_batcher_f32 (void)
{
  check_batcher (ACCEL_DTYPE_F32);
}

static void
test_batcher_bf16 (void)
{
  check_batcher (ACCEL_DTYPE_BF16);
}

static void
test_replica_pool (void)
{
  g_autoptr(AccelDevice) cuda = gpu ("cuda:0");
  if (cuda == NULL)
    return;
  g_autoptr(AccelDevice) second = accel_system_get_device (pt_system (), "cuda:1", NULL);
  gint64 sizes[] = { g_test_rand_int_range (17, 200), g_test_rand_int_range (3, 100) };
  PtLinear *linear = pt_linear_new (ACCEL_DTYPE_F32, sizes, 2, "none", "gelu");
  const char *devices[] = { "cuda:0", "cpu:0", second ? "cuda:1" : NULL, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelActor) pool = accel_system_spawn (pt_system (), "replica-pool", &error, "model", linear->model,
                                                   "devices", devices, "max-batch-size", 8,
                                                   "batches-per-replica", 2, NULL);
  g_assert_no_error (error);
  serve_and_check (pool, linear, 200);
  g_autoptr(GVariant) batches = NULL;
  g_object_get (pool, "replica-batches", &batches, NULL);
  guint64 on_gpu = 0;
  g_assert_true (g_variant_lookup (batches, "cuda:0", "t", &on_gpu));
  g_assert_cmpuint (on_gpu, >, 0);
  g_assert_true (accel_model_is_prepared (linear->model, cuda));
  accel_actor_stop (pool);
  pt_linear_free (linear);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/patterns/gpu/batcher-f32", test_batcher_f32);
  g_test_add_func ("/patterns/gpu/batcher-bf16", test_batcher_bf16);
  g_test_add_func ("/patterns/gpu/replica-pool", test_replica_pool);
  return pt_run ();
}
