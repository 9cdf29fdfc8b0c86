/* accel-device-resources.c: what a device must make again in each new
 * context (the loaded code of a run-time module), held weakly: an object
 * registers itself with the function that gives the ops restoring it, and
 * the device runs them after a rebuild, before it serves anything queued.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-device-private.h"

typedef struct {
  GWeakRef ref;                 /* GLib records its address: it lives on the heap and never moves */
  gpointer key;                 /* the object, for removal; never dereferenced */
  AccelContextOpsFunc make_ops;
} Entry;

static void
entry_free (gpointer data)
{
  g_weak_ref_clear (&((Entry *) data)->ref);
  g_free (data);
}

void
_accel_context_resources_init (AccelContextResources *self)
{
  g_mutex_init (&self->lock);
  self->entries = g_ptr_array_new_with_free_func (entry_free);
}

void
_accel_context_resources_clear (AccelContextResources *self)
{
  g_clear_pointer (&self->entries, g_ptr_array_unref);
  g_mutex_clear (&self->lock);
}

/* The weak reference is made where it stays: GLib keeps the address given
 * to g_weak_ref_init() and writes NULL there when the object goes, on
 * whatever thread drops its last reference. */
void
_accel_context_resources_add (AccelContextResources *self, GObject *resource, AccelContextOpsFunc make_ops)
{
  Entry *e = g_new0 (Entry, 1);
  g_weak_ref_init (&e->ref, resource);
  e->key = resource;
  e->make_ops = make_ops;
  g_mutex_lock (&self->lock);
  g_ptr_array_add (self->entries, e);
  g_mutex_unlock (&self->lock);
}

void
_accel_context_resources_remove (AccelContextResources *self, GObject *resource)
{
  Entry *gone = NULL;

  g_mutex_lock (&self->lock);
  for (guint i = 0; i < self->entries->len; i++)
    if (((Entry *) self->entries->pdata[i])->key == resource)
      {
        gone = g_ptr_array_steal_index (self->entries, i);
        break;
      }
  g_mutex_unlock (&self->lock);
  if (gone)
    entry_free (gone);
}

/* The ops that restore every live resource, in the order they came. */
GPtrArray *
_accel_context_resources_ops (AccelContextResources *self)
{
  GPtrArray *ops = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GPtrArray) live = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GArray) funcs = g_array_new (FALSE, FALSE, sizeof (AccelContextOpsFunc));

  g_mutex_lock (&self->lock);
  for (guint i = 0; i < self->entries->len; i++)
    {
      Entry *e = self->entries->pdata[i];
      GObject *obj = g_weak_ref_get (&e->ref);
      if (obj)
        {
          g_ptr_array_add (live, obj);
          g_array_append_val (funcs, e->make_ops);
        }
    }
  g_mutex_unlock (&self->lock);
  /* Outside the lock: a resource that goes now removes itself. */
  for (guint i = 0; i < live->len; i++)
    {
      g_autoptr(GPtrArray) some = g_array_index (funcs, AccelContextOpsFunc, i) (live->pdata[i]);
      for (guint k = 0; some && k < some->len; k++)
        g_ptr_array_add (ops, g_object_ref (some->pdata[k]));
    }
  return ops;
}
