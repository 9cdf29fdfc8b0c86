/* The CUDA properties both kinds of CUDA device share (AccelCudaGpu) and
 * NVML's readings on cuda:0 (gpu suite): the description against this
 * process's own CUDA runtime, the readings in range and consistent with
 * each other and with the device, memory used growing by what an
 * allocation takes, and the device's stats counting what it ran.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include "cuda-test.h"

static void
test_description (void)
{
  AccelDevice *gpu = ct_gpu ();
  if (!gpu)
    return;
  GType iface = g_type_from_name ("AccelCudaGpu");
  g_assert_true (iface != 0 && g_type_is_a (G_OBJECT_TYPE (gpu), iface));

  int ordinal, major, minor, sm;
  g_autofree char *name = NULL, *cc = NULL, *bus = NULL;
  g_object_get (gpu, "ordinal", &ordinal, "device-name", &name, "compute-capability-major", &major,
                "compute-capability-minor", &minor, "compute-capability", &cc, "sm-count", &sm,
                "pci-bus-id", &bus, NULL);
  struct cudaDeviceProp prop;
  g_assert_cmpint (cudaGetDeviceProperties (&prop, ordinal), ==, cudaSuccess);
  g_assert_cmpstr (name, ==, prop.name);
  g_assert_cmpint (major, ==, prop.major);
  g_assert_cmpint (minor, ==, prop.minor);
  g_assert_cmpint (sm, ==, prop.multiProcessorCount);
  g_autofree char *want_cc = g_strdup_printf ("%d.%d", prop.major, prop.minor);
  g_assert_cmpstr (cc, ==, want_cc);
  /* The same domain, bus, device and function, whatever the widths. */
  char want_bus[64];
  g_assert_cmpint (cudaDeviceGetPCIBusId (want_bus, sizeof want_bus, ordinal), ==, cudaSuccess);
  unsigned got[4] = { 0 }, want[4] = { 0 };
  g_assert_cmpint (sscanf (bus, "%x:%x:%x.%x", &got[0], &got[1], &got[2], &got[3]), ==, 4);
  g_assert_cmpint (sscanf (want_bus, "%x:%x:%x.%x", &want[0], &want[1], &want[2], &want[3]), ==, 4);
  for (int i = 0; i < 4; i++)
    g_assert_cmpuint (got[i], ==, want[i]);

  GEnumClass *klass = g_type_class_ref (g_type_from_name ("AccelCudaIsolation"));
  int isolation;
  g_object_get (gpu, "isolation", &isolation, NULL);
  g_assert_cmpstr (g_enum_get_value (klass, isolation)->value_nick, ==, ct_gpu_is_remote () ? "process" : "none");
  g_type_class_unref (klass);
}

static guint64
lookup_u64 (GVariant *dict, const char *key)
{
  g_autoptr(GVariant) v = g_variant_lookup_value (dict, key, NULL);
  g_assert_nonnull (v);
  return g_variant_is_of_type (v, G_VARIANT_TYPE_UINT32) ? g_variant_get_uint32 (v) : g_variant_get_uint64 (v);
}

static void
test_nvml (void)
{
  AccelDevice *gpu = ct_gpu ();
  if (!gpu)
    return;
  g_autoptr(GVariant) t = NULL;
  g_object_get (gpu, "telemetry", &t, NULL);
  g_assert_nonnull (t);
  if (g_variant_n_children (t) == 0)
    {
      g_test_skip ("no NVML on this machine");
      return;
    }
  g_autofree char *text = g_variant_print (t, TRUE);
  g_test_message ("telemetry of %s: %s", accel_device_get_name (gpu), text);

  guint64 temp = lookup_u64 (t, "temperature"), power = lookup_u64 (t, "power-usage");
  guint64 limit = lookup_u64 (t, "power-limit"), sm_clock = lookup_u64 (t, "sm-clock");
  guint64 mem_clock = lookup_u64 (t, "memory-clock"), util = lookup_u64 (t, "utilization");
  guint64 used = lookup_u64 (t, "memory-used"), total = lookup_u64 (t, "memory-total");
  g_assert_cmpuint (temp, >, 0);
  g_assert_cmpuint (temp, <, 130);
  g_assert_cmpuint (power, >, 0);
  g_assert_cmpuint (limit, >=, 1000);
  g_assert_cmpuint (sm_clock, >, 0);
  g_assert_cmpuint (mem_clock, >, 0);
  g_assert_cmpuint (util, <=, 100);
  g_assert_cmpuint (used, <=, total);
  /* NVML's total is the device's, give or take what the driver reserves. */
  guint64 cuda_total = accel_device_get_memory_total (gpu);
  g_assert_cmpfloat (fabs ((double) total - (double) cuda_total), <=, 0.05 * (double) total);

  /* The single properties read the same source. */
  guint p_temp;
  guint64 p_used;
  guint reasons;
  g_object_get (gpu, "temperature", &p_temp, "memory-used", &p_used, "throttle-reasons", &reasons, NULL);
  g_assert_cmpuint (p_temp, >, 0);
  g_assert_cmpuint (p_used, >, 0);
  g_assert_cmpuint (reasons & ~0x1ffu, ==, 0);

  /* An allocation of a random size shows in the memory used (the pool
   * keeps what is freed, so the figure is read while it is held). */
  gint64 n = (gint64) g_test_rand_int_range (512, 1536) << 20;
  guint64 before;
  g_object_get (gpu, "memory-used", &before, NULL);
  g_autoptr(AccelBuffer) big = ct_alloc (gpu, ACCEL_DTYPE_U8, &n, 1);
  g_autoptr(AccelOp) touch = accel_fill_new (big, 1.0);
  ct_submit (gpu, touch);
  guint64 after;
  g_object_get (gpu, "memory-used", &after, NULL);
  g_assert_cmpuint (after, >=, before + (guint64) (0.9 * (double) n));
}

static void
test_stats (void)
{
  AccelDevice *gpu = ct_gpu ();
  if (!gpu)
    return;
  g_autoptr(GVariant) s0 = accel_device_get_stats (gpu);
  gint64 n = g_test_rand_int_range (1, 100000);
  g_autoptr(AccelBuffer) x = ct_alloc (gpu, ACCEL_DTYPE_F32, &n, 1);
  guint ops = g_test_rand_int_range (3, 30);
  for (guint i = 0; i < ops; i++)
    {
      g_autoptr(AccelOp) fill = accel_fill_new (x, (double) i);
      ct_submit (gpu, fill);
    }
  g_autofree guint8 *bytes = ct_read_bytes (x);
  g_autoptr(GVariant) s1 = accel_device_get_stats (gpu);
  g_assert_cmpuint (lookup_u64 (s1, "ops-completed") - lookup_u64 (s0, "ops-completed"), ==, ops);
  g_assert_cmpuint (lookup_u64 (s1, "bytes-read") - lookup_u64 (s0, "bytes-read"), ==, n * 4);
  g_assert_cmpuint (lookup_u64 (s1, "transfers-completed") - lookup_u64 (s0, "transfers-completed"), ==, 1);
  g_assert_cmpuint (lookup_u64 (s1, "busy-us"), >=, lookup_u64 (s0, "busy-us"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cuda/telemetry/description", test_description);
  g_test_add_func ("/cuda/telemetry/nvml", test_nvml);
  g_test_add_func ("/cuda/telemetry/stats", test_stats);
  return ct_run ();
}
