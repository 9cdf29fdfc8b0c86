/* accel-cuda-plan-cache.c: a lane's cache of library plans.
 *
 * Keys are compared as bytes: callers zero them before filling them in,
 * so padding compares equal. A cache holds a few dozen plans and an op
 * usually finds its plan at the front of the most-recent-first list, so a
 * walk of that list is the lookup: no hashing, no allocation on a hit.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cuda-private.h"

#include <string.h>

typedef struct {
  gpointer plan;
  GList link;              /* in the lru; data = this entry */
  guint8 key[];            /* key_size bytes */
} Entry;

struct _AccelCudaPlanCache {
  gsize key_size;
  guint capacity;
  AccelCudaPlanMake make;
  GDestroyNotify free_plan;
  GQueue lru;              /* Entry, most recent first */
};

static void
entry_free (AccelCudaPlanCache *self, Entry *e)
{
  if (e->plan)
    self->free_plan (e->plan);
  g_free (e);
}

/**
 * accel_cuda_plan_cache_new: (skip)
 * @key_size: the size of a key in bytes
 * @capacity: how many plans to keep, at least 1
 * @make: makes a plan for a key that is not cached
 * @free_plan: frees a plan
 *
 * Returns: (transfer full): a new, empty cache
 */
AccelCudaPlanCache *
accel_cuda_plan_cache_new (gsize key_size, guint capacity, AccelCudaPlanMake make, GDestroyNotify free_plan)
{
  g_return_val_if_fail (key_size > 0 && capacity > 0 && make != NULL && free_plan != NULL, NULL);

  AccelCudaPlanCache *self = g_new0 (AccelCudaPlanCache, 1);
  self->key_size = key_size;
  self->capacity = capacity;
  self->make = make;
  self->free_plan = free_plan;
  g_queue_init (&self->lru);
  return self;
}

/**
 * accel_cuda_plan_cache_get: (skip)
 * @self: a cache
 * @key: a key of the cache's key size
 * @user_data: passed to the make function on a miss
 * @error: return location for a #GError
 *
 * The plan for @key: the cached one, or one made now (the least recently
 * used is dropped if the cache is full).
 *
 * Returns: (transfer none) (nullable): the plan, owned by the cache, or
 *   %NULL with @error set
 */
gpointer
accel_cuda_plan_cache_get (AccelCudaPlanCache *self, gconstpointer key, gpointer user_data, GError **error)
{
  g_return_val_if_fail (self != NULL && key != NULL, NULL);

  for (GList *l = self->lru.head; l != NULL; l = l->next)
    {
      Entry *e = l->data;
      if (memcmp (e->key, key, self->key_size) != 0)
        continue;
      if (l != self->lru.head)
        {
          g_queue_unlink (&self->lru, l);
          g_queue_push_head_link (&self->lru, l);
        }
      return e->plan;
    }

  gpointer plan = self->make (key, user_data, error);
  if (plan == NULL)
    return NULL;
  while (g_queue_get_length (&self->lru) >= self->capacity)
    entry_free (self, g_queue_pop_tail_link (&self->lru)->data);
  Entry *e = g_malloc0 (sizeof (Entry) + self->key_size);
  memcpy (e->key, key, self->key_size);
  e->plan = plan;
  e->link.data = e;
  g_queue_push_head_link (&self->lru, &e->link);
  return plan;
}

/**
 * accel_cuda_plan_cache_get_size: (skip)
 * @self: a cache
 *
 * Returns: how many plans it holds
 */
guint
accel_cuda_plan_cache_get_size (AccelCudaPlanCache *self)
{
  g_return_val_if_fail (self != NULL, 0);
  return g_queue_get_length (&self->lru);
}

/**
 * accel_cuda_plan_cache_free: (skip)
 * @self: (transfer full) (nullable): a cache
 *
 * Frees the cache and its plans.
 */
void
accel_cuda_plan_cache_free (AccelCudaPlanCache *self)
{
  if (self == NULL)
    return;
  GList *l;
  while ((l = g_queue_pop_head_link (&self->lru)) != NULL)
    entry_free (self, l->data);
  g_free (self);
}
