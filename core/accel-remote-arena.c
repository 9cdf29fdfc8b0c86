/* accel-remote-arena.c: the two allocators of the memory an application
 * shares with its `accel-device-host`, beside the channel's rings.
 *
 * The transfer arena is a ring of regions, allocated in request order and
 * released as answers come, in any order: a region frees its space once
 * every region before it is free too. An allocation that finds the ring
 * full waits for releases (which the connection's reader makes, without
 * needing the waiting thread); closing the arena makes every wait fail.
 * A region never wraps around the end of the ring.
 *
 * Behind it, host memory handed to the application
 * (accel_remote_device_alloc_host_memory()) is allocated first-fit in
 * whole pages, so that what the host pins or maps of one block never
 * shares a page with another.
 *
 * Both are used from any thread; each has its own lock.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-remote-private.h"

#define ARENA_ALIGN 256
#define HOST_BLOCK_ALIGN 4096

struct _AccelRemoteArena {
  guint8 *base;
  gsize size;
  GMutex lock;
  GCond cond;
  guint waiters;
  guint64 head;              /* bytes ever allocated, including skips */
  guint64 tail;              /* bytes ever released, in ring order */
  GQueue regions;            /* AccelRemoteRegion, in allocation order */
  GError *closed;
};

AccelRemoteArena *
_accel_remote_arena_new (guint8 *base, gsize size)
{
  AccelRemoteArena *self = g_new0 (AccelRemoteArena, 1);
  self->base = base;
  self->size = size;
  g_mutex_init (&self->lock);
  g_cond_init (&self->cond);
  g_queue_init (&self->regions);
  return self;
}

void
_accel_remote_arena_free (AccelRemoteArena *self)
{
  if (self == NULL)
    return;
  g_queue_clear_full (&self->regions, g_free);
  g_clear_error (&self->closed);
  g_mutex_clear (&self->lock);
  g_cond_clear (&self->cond);
  g_free (self);
}

gsize
_accel_remote_arena_get_size (AccelRemoteArena *self)
{
  return self->size;
}

/* Waits for room for @length bytes. */
AccelRemoteRegion *
_accel_remote_arena_alloc (AccelRemoteArena *self, gsize length, GError **error)
{
  guint64 len = (length + ARENA_ALIGN - 1) & ~(guint64) (ARENA_ALIGN - 1);
  guint64 pad;

  g_return_val_if_fail (len <= self->size, NULL);
  g_mutex_lock (&self->lock);
  for (;;)
    {
      if (self->closed)
        {
          g_propagate_error (error, g_error_copy (self->closed));
          g_mutex_unlock (&self->lock);
          return NULL;
        }
      guint64 pos = self->head % self->size;
      if (pos + len > self->size && g_queue_is_empty (&self->regions))
        {
          /* Nothing in use: start the next lap at once. */
          self->head += self->size - pos;
          self->tail = self->head;
          pos = 0;
        }
      pad = pos + len > self->size ? self->size - pos : 0;
      if (self->head + pad + len - self->tail <= self->size)
        break;
      self->waiters++;
      g_cond_wait (&self->cond, &self->lock);
      self->waiters--;
    }
  AccelRemoteRegion *r = g_new (AccelRemoteRegion, 1);
  r->start = self->head + pad;
  r->end = r->start + len;
  r->done = FALSE;
  r->offset = r->start % self->size;
  r->data = self->base + r->offset;
  g_queue_push_tail (&self->regions, r);
  self->head = r->end;
  g_mutex_unlock (&self->lock);
  return r;
}

void
_accel_remote_arena_release (AccelRemoteArena *self, AccelRemoteRegion *region)
{
  g_mutex_lock (&self->lock);
  region->done = TRUE;
  AccelRemoteRegion *head;
  while ((head = g_queue_peek_head (&self->regions)) != NULL && head->done)
    {
      self->tail = head->end;
      g_free (g_queue_pop_head (&self->regions));
    }
  if (self->waiters > 0)
    g_cond_broadcast (&self->cond);
  g_mutex_unlock (&self->lock);
}

/* Every allocation from now on fails with @reason. */
void
_accel_remote_arena_close (AccelRemoteArena *self, const GError *reason)
{
  g_mutex_lock (&self->lock);
  if (self->closed == NULL)
    self->closed = g_error_copy (reason);
  g_cond_broadcast (&self->cond);
  g_mutex_unlock (&self->lock);
}

/* Host memory. */

typedef struct {
  guint64 start;             /* offset in the host memory region */
  guint64 size;
} HostBlock;

struct _AccelRemoteHostMemory {
  guint8 *base;
  gsize size;
  GMutex lock;
  GList *free;               /* HostBlock, by start */
  GHashTable *used;          /* start -> size */
};

AccelRemoteHostMemory *
_accel_remote_host_memory_new (guint8 *base, gsize size)
{
  AccelRemoteHostMemory *self = g_new0 (AccelRemoteHostMemory, 1);
  self->base = base;
  self->size = size;
  g_mutex_init (&self->lock);
  self->used = g_hash_table_new (NULL, NULL);
  if (size > 0)
    {
      HostBlock *all = g_new (HostBlock, 1);
      all->start = 0;
      all->size = size;
      self->free = g_list_append (NULL, all);
    }
  return self;
}

void
_accel_remote_host_memory_free (AccelRemoteHostMemory *self)
{
  if (self == NULL)
    return;
  g_list_free_full (self->free, g_free);
  g_hash_table_unref (self->used);
  g_mutex_clear (&self->lock);
  g_free (self);
}

gsize
_accel_remote_host_memory_get_size (AccelRemoteHostMemory *self)
{
  return self->size;
}

/* NULL if no block of @size bytes is free. */
gpointer
_accel_remote_host_memory_alloc (AccelRemoteHostMemory *self, gsize size)
{
  guint64 len = ((guint64) MAX (size, 1) + HOST_BLOCK_ALIGN - 1) & ~(guint64) (HOST_BLOCK_ALIGN - 1);

  g_mutex_lock (&self->lock);
  for (GList *l = self->free; l; l = l->next)
    {
      HostBlock *b = l->data;
      if (b->size < len)
        continue;
      guint64 start = b->start;
      b->start += len;
      b->size -= len;
      if (b->size == 0)
        {
          g_free (b);
          self->free = g_list_delete_link (self->free, l);
        }
      g_hash_table_insert (self->used, GSIZE_TO_POINTER ((gsize) start), GSIZE_TO_POINTER ((gsize) len));
      g_mutex_unlock (&self->lock);
      return self->base + start;
    }
  g_mutex_unlock (&self->lock);
  return NULL;
}

/* FALSE if @memory is no block of it. */
gboolean
_accel_remote_host_memory_release (AccelRemoteHostMemory *self, gpointer memory)
{
  guint8 *p = memory;

  if (!_accel_remote_host_memory_owns (self, memory))
    return FALSE;
  guint64 start = p - self->base;

  g_mutex_lock (&self->lock);
  gpointer value;
  if (!g_hash_table_steal_extended (self->used, GSIZE_TO_POINTER ((gsize) start), NULL, &value))
    {
      g_mutex_unlock (&self->lock);
      return FALSE;
    }
  gsize len = GPOINTER_TO_SIZE (value);

  /* Back into the sorted free list, merged with its neighbours. */
  GList *after = self->free;
  while (after && ((HostBlock *) after->data)->start < start)
    after = after->next;
  GList *before = after ? after->prev : g_list_last (self->free);
  HostBlock *prev = before ? before->data : NULL;
  HostBlock *next = after ? after->data : NULL;
  if (prev && prev->start + prev->size == start)
    {
      prev->size += len;
      if (next && prev->start + prev->size == next->start)
        {
          prev->size += next->size;
          g_free (next);
          self->free = g_list_delete_link (self->free, after);
        }
    }
  else if (next && start + len == next->start)
    {
      next->start = start;
      next->size += len;
    }
  else
    {
      HostBlock *b = g_new (HostBlock, 1);
      b->start = start;
      b->size = len;
      self->free = g_list_insert_before (self->free, after, b);
    }
  g_mutex_unlock (&self->lock);
  return TRUE;
}

gboolean
_accel_remote_host_memory_owns (AccelRemoteHostMemory *self, gconstpointer memory)
{
  const guint8 *p = memory;
  return self->size > 0 && p >= self->base && p < self->base + self->size;
}
