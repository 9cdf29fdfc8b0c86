/* accel-tsan-glib.c: tells ThreadSanitizer of the happens-before edges that
 * Debian's GLib makes where it cannot see them. Preloaded (LD_PRELOAD) into
 * every program of the ThreadSanitizer tree (scripts/run-tsan); not part of
 * Accel.
 *
 * GLib is not built with ThreadSanitizer, so its own memory accesses are
 * not checked, but the ordering it provides is invisible too: GMutex and
 * GCond are futexes (not pthread calls, which TSan intercepts), a GTask
 * result reaches its callback through GLib's main context, g_once_init_*()
 * publishes with an atomic store inside GLib, the last g_object_unref()
 * (or unref of a GBytes, GPtrArray, GHashTable, GVariant…) may free on
 * another thread, qdata is published under GLib's bit
 * locks, and a GThreadPool hands its data to a worker through a GLib
 * queue. (GSlice's own hand-over of memory between threads is avoided
 * with G_SLICE=always-malloc, which tests/tsan/meson.build sets.) Each
 * wrapper here calls GLib's function (found with
 * dlsym (RTLD_NEXT)) and adds the release or acquire TSan needs, on the
 * object's address, as TSan's own interceptors do for pthreads. Accesses
 * made by Accel's code are then checked against the real ordering, and
 * races among them are reported; nothing is suppressed here.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sanitizer/tsan_interface.h>
#include <glib-object.h>
#include <gio/gio.h>

#undef g_once_init_enter
#undef g_once_init_leave

/* The wrappers must be seen by the dynamic linker, whatever the build's
 * -fvisibility says. */
#pragma GCC visibility push(default)

/* Keeps a wrapper's frame in the stacks TSan reports (no tail call), so
 * that tsan.supp can name it. */
#define KEEP_FRAME() __asm__ volatile ("" ::: "memory")

/* GLib's function of the same name, found once (racing threads find the
 * same one; the pointer is atomic). */
#define REAL(name)                                                          \
  static __typeof__ (name) *real_##name##_;                                 \
  __typeof__ (name) *real_##name = __atomic_load_n (&real_##name##_, __ATOMIC_ACQUIRE); \
  if (G_UNLIKELY (real_##name == NULL))                                     \
    {                                                                       \
      real_##name = (__typeof__ (name) *) dlsym (RTLD_NEXT, #name);         \
      if (real_##name == NULL)                                              \
        {                                                                   \
          fprintf (stderr, "accel-tsan-glib: no %s in GLib\n", #name);    \
          abort ();                                                         \
        }                                                                   \
      __atomic_store_n (&real_##name##_, real_##name, __ATOMIC_RELEASE);    \
    }

/* ---- GMutex and GCond (futexes in GLib on Linux) ------------------------- */

void
g_mutex_lock (GMutex *mutex)
{
  REAL (g_mutex_lock);
  real_g_mutex_lock (mutex);
  __tsan_acquire (mutex);
}

gboolean
g_mutex_trylock (GMutex *mutex)
{
  REAL (g_mutex_trylock);
  gboolean locked = real_g_mutex_trylock (mutex);
  if (locked)
    __tsan_acquire (mutex);
  return locked;
}

void
g_mutex_unlock (GMutex *mutex)
{
  REAL (g_mutex_unlock);
  __tsan_release (mutex);
  real_g_mutex_unlock (mutex);
}

void
g_cond_wait (GCond *cond, GMutex *mutex)
{
  REAL (g_cond_wait);
  __tsan_release (mutex);
  real_g_cond_wait (cond, mutex);
  __tsan_acquire (mutex);
}

gboolean
g_cond_wait_until (GCond *cond, GMutex *mutex, gint64 end_time)
{
  REAL (g_cond_wait_until);
  __tsan_release (mutex);
  gboolean signalled = real_g_cond_wait_until (cond, mutex, end_time);
  __tsan_acquire (mutex);
  return signalled;
}

/* ---- g_once_init_*: the fast path is an atomic load in the caller's
 * (instrumented) code; it synchronises with this release. -------------- */

gboolean
g_once_init_enter (volatile void *location)
{
  REAL (g_once_init_enter);
  gboolean first = real_g_once_init_enter (location);
  __tsan_acquire ((void *) location);
  return first;
}

void
g_once_init_leave (volatile void *location, gsize result)
{
  REAL (g_once_init_leave);
  __tsan_release ((void *) location);
  real_g_once_init_leave (location, result);
}

/* ---- GObject: the last unref finalizes where it happens; qdata is
 * published under GLib's locks. -------------------------------------------- */

void
g_object_unref (gpointer object)
{
  REAL (g_object_unref);
  if (object)
    {
      /* GLib drops the count with a sequentially consistent atomic
       * (g_atomic_int_dec_and_test): each unref both releases and acquires
       * on the count, so what others did before their unrefs happens
       * before the finalizing that follows, wherever the last one is.
       * (Reading the count first to guess the last unref raced with the
       * others: a patterns-batcher test finalized, on the main thread, a
       * server whose own thread had just cleared its queue and unreffed
       * it, and TSan saw no order between the two.) */
      __tsan_release (object);
      __tsan_acquire (object);
    }
  real_g_object_unref (object);
  KEEP_FRAME ();
}

void
g_object_set_qdata_full (GObject *object, GQuark quark, gpointer data, GDestroyNotify destroy)
{
  REAL (g_object_set_qdata_full);
  __tsan_release (object);
  real_g_object_set_qdata_full (object, quark, data, destroy);
}

gboolean
g_object_replace_qdata (GObject *object, GQuark quark, gpointer oldval, gpointer newval,
                        GDestroyNotify destroy, GDestroyNotify *old_destroy)
{
  REAL (g_object_replace_qdata);
  __tsan_release (object);
  gboolean replaced = real_g_object_replace_qdata (object, quark, oldval, newval, destroy, old_destroy);
  __tsan_acquire (object);
  return replaced;
}

gpointer
g_object_get_qdata (GObject *object, GQuark quark)
{
  REAL (g_object_get_qdata);
  gpointer data = real_g_object_get_qdata (object, quark);
  __tsan_acquire (object);
  return data;
}

gpointer
g_object_dup_qdata (GObject *object, GQuark quark, GDuplicateFunc dup_func, gpointer user_data)
{
  REAL (g_object_dup_qdata);
  gpointer data = real_g_object_dup_qdata (object, quark, dup_func, user_data);
  __tsan_acquire (object);
  return data;
}

/* ---- GLib's reference-counted containers: the last unref frees, on
 * whichever thread makes it, after an atomic inside GLib. Their counts are
 * private, so every unref both releases and acquires (ordering unrefs of
 * one container among themselves, which is what they do in GLib). ------ */

#define UNREF(type, name)                        \
  void                                           \
  name (type *object)                            \
  {                                              \
    REAL (name);                                 \
    if (object)                                  \
      {                                          \
        __tsan_release (object);                 \
        __tsan_acquire (object);                 \
      }                                          \
    real_##name (object);                        \
    KEEP_FRAME ();                               \
  }

UNREF (GBytes, g_bytes_unref)
UNREF (GPtrArray, g_ptr_array_unref)
UNREF (GArray, g_array_unref)
UNREF (GByteArray, g_byte_array_unref)
UNREF (GHashTable, g_hash_table_unref)
UNREF (GVariant, g_variant_unref)
/* A GSource's last unref (an AccelDelivery's, on a device thread) runs its
 * finalize, which reads what its dispatch wrote on the main context's. */
UNREF (GSource, g_source_unref)

/* ---- GTask: returned on one thread, read in a callback on another. ---- */

/* Released after the call too: GLib allocates the source that carries the
 * result to the callback's context in it, and frees it there after the
 * callback, which acquires (the task's address is only a sync key here:
 * the task may be gone already). */
#define TASK_RETURN(name, params, args)          \
  void                                           \
  name params                                    \
  {                                              \
    REAL (name);                                 \
    __tsan_release (task);                       \
    real_##name args;                            \
    __tsan_release (task);                       \
    KEEP_FRAME ();                               \
  }

TASK_RETURN (g_task_return_boolean, (GTask *task, gboolean result), (task, result))
TASK_RETURN (g_task_return_int, (GTask *task, gssize result), (task, result))
TASK_RETURN (g_task_return_pointer, (GTask *task, gpointer result, GDestroyNotify destroy),
             (task, result, destroy))
TASK_RETURN (g_task_return_error, (GTask *task, GError *error), (task, error))
TASK_RETURN (g_task_return_value, (GTask *task, GValue *result), (task, result))

void
g_task_return_new_error (GTask *task, GQuark domain, gint code, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  GError *error = g_error_new_valist (domain, code, format, args);
  va_end (args);
  g_task_return_error (task, error);
}

#define TASK_READ(type, name, params, args)      \
  type                                           \
  name params                                    \
  {                                              \
    REAL (name);                                 \
    __tsan_acquire (task);                       \
    return real_##name args;                     \
  }

TASK_READ (gboolean, g_task_propagate_boolean, (GTask *task, GError **error), (task, error))
TASK_READ (gssize, g_task_propagate_int, (GTask *task, GError **error), (task, error))
TASK_READ (gpointer, g_task_propagate_pointer, (GTask *task, GError **error), (task, error))
TASK_READ (gboolean, g_task_propagate_value, (GTask *task, GValue *value, GError **error), (task, value, error))
TASK_READ (gboolean, g_task_had_error, (GTask *task), (task))
TASK_READ (gboolean, g_task_get_completed, (GTask *task), (task))

/* ---- GThreadPool: its data reaches a worker through a GLib queue. ------ */

typedef struct {
  GFunc func;
  gpointer user_data;
} PoolFunc;

static void
pool_trampoline (gpointer data, gpointer user_data)
{
  PoolFunc *pf = user_data;
  __tsan_acquire (data);
  pf->func (data, pf->user_data);
}

GThreadPool *
g_thread_pool_new (GFunc func, gpointer user_data, gint max_threads, gboolean exclusive, GError **error)
{
  REAL (g_thread_pool_new);
  PoolFunc *pf = g_new (PoolFunc, 1);   /* lives as long as the pool: pools are seldom freed */
  pf->func = func;
  pf->user_data = user_data;
  return real_g_thread_pool_new (pool_trampoline, pf, max_threads, exclusive, error);
}

gboolean
g_thread_pool_push (GThreadPool *pool, gpointer data, GError **error)
{
  REAL (g_thread_pool_push);
  __tsan_release (data);
  gboolean pushed = real_g_thread_pool_push (pool, data, error);
  KEEP_FRAME ();
  return pushed;
}

#pragma GCC visibility pop
