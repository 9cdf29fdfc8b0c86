/* accel-device-stats.c: what a device has done, for its `stats` property.
 *
 * Counted where work completes, with atomics only: the completion path is
 * hot. Busy time is the time during which the device had work in flight
 * (handed to its backend and not completed), summed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-device-private.h"

/* The device's work in flight went from none to some. */
void
_accel_device_stats_busy (AccelDeviceStats *stats)
{
  __atomic_store_n (&stats->busy_since, g_get_monotonic_time (), __ATOMIC_RELAXED);
}

/* A work item handed to the backend completed; @idle: it was the last
 * one in flight. */
void
_accel_device_stats_done (AccelDeviceStats *stats, AccelWorkKind kind, gsize bytes, gboolean failed, gboolean idle)
{
  switch (kind)
    {
    case ACCEL_WORK_OP:
      __atomic_add_fetch (&stats->ops, 1, __ATOMIC_RELAXED);
      break;
    case ACCEL_WORK_WRITE:
      __atomic_add_fetch (&stats->transfers, 1, __ATOMIC_RELAXED);
      if (!failed)
        __atomic_add_fetch (&stats->bytes_written, bytes, __ATOMIC_RELAXED);
      break;
    case ACCEL_WORK_READ:
      __atomic_add_fetch (&stats->transfers, 1, __ATOMIC_RELAXED);
      if (!failed)
        __atomic_add_fetch (&stats->bytes_read, bytes, __ATOMIC_RELAXED);
      break;
    case ACCEL_WORK_ZERO:
      __atomic_add_fetch (&stats->transfers, 1, __ATOMIC_RELAXED);
      break;
    }
  if (failed)
    __atomic_add_fetch (&stats->errors, 1, __ATOMIC_RELAXED);
  if (idle)
    {
      gint64 since = __atomic_load_n (&stats->busy_since, __ATOMIC_RELAXED);
      gint64 now = g_get_monotonic_time ();
      if (since > 0 && now > since)
        __atomic_add_fetch (&stats->busy_us, (guint64) (now - since), __ATOMIC_RELAXED);
    }
}

/* A work item failed before it reached the backend (a stale buffer, a
 * cancellation, a failed device). */
void
_accel_device_stats_refused (AccelDeviceStats *stats)
{
  __atomic_add_fetch (&stats->errors, 1, __ATOMIC_RELAXED);
}

GVariant *
_accel_device_stats_to_variant (AccelDeviceStats *stats, gboolean busy_now)
{
  guint64 busy = __atomic_load_n (&stats->busy_us, __ATOMIC_RELAXED);
  if (busy_now)
    {
      gint64 since = __atomic_load_n (&stats->busy_since, __ATOMIC_RELAXED);
      gint64 now = g_get_monotonic_time ();
      if (since > 0 && now > since)
        busy += (guint64) (now - since);
    }
  guint64 written = __atomic_load_n (&stats->bytes_written, __ATOMIC_RELAXED);
  guint64 read = __atomic_load_n (&stats->bytes_read, __ATOMIC_RELAXED);
  GVariantBuilder b;
  g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&b, "{sv}", "ops-completed",
                         g_variant_new_uint64 (__atomic_load_n (&stats->ops, __ATOMIC_RELAXED)));
  g_variant_builder_add (&b, "{sv}", "transfers-completed",
                         g_variant_new_uint64 (__atomic_load_n (&stats->transfers, __ATOMIC_RELAXED)));
  g_variant_builder_add (&b, "{sv}", "errors",
                         g_variant_new_uint64 (__atomic_load_n (&stats->errors, __ATOMIC_RELAXED)));
  g_variant_builder_add (&b, "{sv}", "bytes-written", g_variant_new_uint64 (written));
  g_variant_builder_add (&b, "{sv}", "bytes-read", g_variant_new_uint64 (read));
  g_variant_builder_add (&b, "{sv}", "bytes-moved", g_variant_new_uint64 (written + read));
  g_variant_builder_add (&b, "{sv}", "busy-us", g_variant_new_uint64 (busy));
  return g_variant_builder_end (&b);
}
