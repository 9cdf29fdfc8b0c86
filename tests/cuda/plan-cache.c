/* plan-cache.c: AccelCudaPlanCache, the lane plan cache the cuFFT, cuDNN
 * and cuBLASLt plugins share. Host code only: runs without a GPU.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <accel-cuda.h>

typedef struct {
  gint32 a;
  gint64 b;
} Key;

typedef struct {
  Key key;
  guint serial;
} Plan;

static guint made, freed;

static gpointer
make (gconstpointer key, gpointer user_data, GError **error)
{
  const Key *k = key;
  if (k->a < 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "key %d refused", k->a);
      return NULL;
    }
  Plan *p = g_new0 (Plan, 1);
  p->key = *k;
  p->serial = made++;
  g_assert_true (user_data == &made);
  return p;
}

static void
free_plan (gpointer data)
{
  freed++;
  g_free (data);
}

static Key
key_of (gint32 a)
{
  Key k;
  memset (&k, 0, sizeof k);
  k.a = a;
  k.b = (gint64) a * 1000003;
  return k;
}

/* Against a model of an LRU list on random keys: hits return the plan made
 * for the same key, the size never passes the capacity, and a miss makes
 * exactly one plan and, when full, frees exactly the least recent one. */
static void
test_lru (void)
{
  const guint capacity = 7;
  made = freed = 0;
  AccelCudaPlanCache *cache = accel_cuda_plan_cache_new (sizeof (Key), capacity, make, free_plan);
  GQueue model = G_QUEUE_INIT;   /* keys (as ints), most recent first */

  for (guint i = 0; i < 5000; i++)
    {
      gint32 a = g_test_rand_int_range (0, 12);
      Key k = key_of (a);
      guint made_before = made, freed_before = freed;
      gboolean cached = g_queue_find (&model, GINT_TO_POINTER (a + 1)) != NULL;
      g_autoptr(GError) error = NULL;
      Plan *p = accel_cuda_plan_cache_get (cache, &k, &made, &error);
      g_assert_no_error (error);
      g_assert_cmpint (p->key.a, ==, a);
      g_assert_cmpint (p->key.b, ==, k.b);
      if (cached)
        {
          g_assert_cmpuint (made, ==, made_before);
          g_queue_remove (&model, GINT_TO_POINTER (a + 1));
        }
      else
        {
          g_assert_cmpuint (made, ==, made_before + 1);
          g_assert_cmpuint (freed, ==, freed_before + (g_queue_get_length (&model) == capacity ? 1 : 0));
          if (g_queue_get_length (&model) == capacity)
            g_queue_pop_tail (&model);
        }
      g_queue_push_head (&model, GINT_TO_POINTER (a + 1));
      g_assert_cmpuint (accel_cuda_plan_cache_get_size (cache), ==, g_queue_get_length (&model));
    }
  accel_cuda_plan_cache_free (cache);
  g_assert_cmpuint (freed, ==, made);
  g_queue_clear (&model);
}

/* A failed make caches nothing and keeps every plan. */
static void
test_make_fails (void)
{
  made = freed = 0;
  AccelCudaPlanCache *cache = accel_cuda_plan_cache_new (sizeof (Key), 3, make, free_plan);
  Key k = key_of (5), bad = key_of (-2);
  g_assert_nonnull (accel_cuda_plan_cache_get (cache, &k, &made, NULL));
  g_autoptr(GError) error = NULL;
  g_assert_null (accel_cuda_plan_cache_get (cache, &bad, &made, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  g_assert_cmpuint (accel_cuda_plan_cache_get_size (cache), ==, 1);
  g_assert_cmpuint (freed, ==, 0);
  accel_cuda_plan_cache_free (cache);
  g_assert_cmpuint (freed, ==, 1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cuda/plan-cache/lru", test_lru);
  g_test_add_func ("/cuda/plan-cache/make-fails", test_make_fails);
  return g_test_run ();
}
