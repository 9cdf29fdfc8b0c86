/* accel-test-buffers.c: what the device tests do over and over (see
 * accel-test-buffers.h).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-test-buffers.h"

AccelSystem *
accel_test_new_system (void)
{
  g_autoptr(GError) error = NULL;
  AccelSystem *system = accel_system_new (&error);
  g_assert_no_error (error);
  return system;
}

AccelDevice *
accel_test_get_device (AccelSystem *system, const char *name)
{
  g_autoptr(GError) error = NULL;
  AccelDevice *dev = accel_system_get_device (system, name, &error);
  g_assert_no_error (error);
  g_assert_nonnull (dev);
  return dev;
}

static AccelSystem *shared_system;
static AccelDevice *shared_cpu;

AccelSystem *
accel_test_shared_system (void)
{
  if (shared_system == NULL)
    shared_system = accel_test_new_system ();
  return shared_system;
}

AccelDevice *
accel_test_shared_cpu (void)
{
  if (shared_cpu == NULL)
    shared_cpu = accel_test_get_device (accel_test_shared_system (), "cpu:0");
  return shared_cpu;
}

void
accel_test_shared_teardown (void)
{
  g_clear_object (&shared_cpu);
  if (shared_system != NULL)
    accel_system_shutdown (shared_system);
  g_clear_object (&shared_system);
}

void
accel_test_cpu_setup (AccelTestDeviceFixture *f, gconstpointer user_data)
{
  f->system = accel_test_new_system ();
  f->dev = accel_test_get_device (f->system, "cpu:0");
}

void
accel_test_remote_cpu_setup (AccelTestDeviceFixture *f, gconstpointer user_data)
{
  f->system = accel_test_new_system ();
  f->dev = accel_test_remote_cpu_device (f->system);
}

void
accel_test_device_teardown (AccelTestDeviceFixture *f, gconstpointer user_data)
{
  g_clear_object (&f->dev);
  accel_system_shutdown (f->system);
  g_clear_object (&f->system);
}

AccelBuffer *
accel_test_alloc (AccelDevice *dev, AccelDType dtype, const AccelShape *shape)
{
  g_autoptr(GError) error = NULL;
  AccelBuffer *b = accel_device_alloc (dev, dtype, shape, &error);
  g_assert_no_error (error);
  g_assert_nonnull (b);
  return b;
}

AccelBuffer *
accel_test_alloc_f32 (AccelDevice *dev, const AccelShape *shape)
{
  return accel_test_alloc (dev, ACCEL_DTYPE_F32, shape);
}

float *
accel_test_random_f32 (gsize n)
{
  float *data = g_new (float, n ? n : 1);
  for (gsize i = 0; i < n; i++)
    data[i] = (float) g_test_rand_double_range (-1, 1);
  return data;
}

AccelBuffer *
accel_test_alloc_random_f32 (AccelDevice *dev, const AccelShape *shape, float **host)
{
  g_autoptr(GError) error = NULL;
  AccelBuffer *b = accel_test_alloc_f32 (dev, shape);
  gsize n = accel_buffer_get_size (b) / sizeof (float);
  float *data = accel_test_random_f32 (n);
  accel_buffer_write (b, (guint8 *) data, n * sizeof (float), &error);
  g_assert_no_error (error);
  if (host)
    *host = data;
  else
    g_free (data);
  return b;
}

guint8 *
accel_test_read_bytes (AccelBuffer *buffer)
{
  g_autoptr(GError) error = NULL;
  gsize size = accel_buffer_get_size (buffer);
  guint8 *bytes = g_malloc0 (MAX (size, 1));
  g_assert_true (accel_buffer_read (buffer, bytes, size, &error));
  g_assert_no_error (error);
  return bytes;
}

float *
accel_test_read_f32 (AccelBuffer *buffer)
{
  return (float *) accel_test_read_bytes (buffer);
}

AccelDevice *
accel_test_remote_cpu_device (AccelSystem *system)
{
  g_autoptr(GError) error = NULL;
  AccelBackend *cpu = accel_system_get_backend (system, "cpu", &error);
  g_assert_no_error (error);
  AccelDevice *dev = accel_remote_device_new (cpu, "remote-cpu:0", "cpu:0", NULL, &error);
  g_assert_no_error (error);
  return dev;
}

AccelDevice *
accel_test_remote_cpu_device_full (AccelSystem *system,
                                   const char *hosted,
                                   const char *const *env,
                                   guint64 arena_size,
                                   guint64 host_memory_size)
{
  g_autoptr(GError) error = NULL;
  AccelBackend *cpu = accel_system_get_backend (system, "cpu", &error);
  g_assert_no_error (error);
  return g_object_new (ACCEL_TYPE_REMOTE_DEVICE,
                       "name", "remote-cpu:0",
                       "backend", cpu,
                       "hosted-device", hosted,
                       "host-env", env,
                       "arena-size", arena_size,
                       "host-memory-size", host_memory_size,
                       NULL);
}

void
accel_test_submit (AccelDevice *dev, AccelOp *op)
{
  g_autoptr(GError) error = NULL;
  g_assert_true (accel_device_submit (dev, op, NULL, &error));
  g_assert_no_error (error);
}

void
accel_test_assert_all_f32 (AccelBuffer *buffer, float want)
{
  g_autofree float *got = accel_test_read_f32 (buffer);
  gsize n = accel_buffer_get_n_elements (buffer);
  for (gsize i = 0; i < n; i++)
    g_assert_cmpfloat (got[i], ==, want);
}

void
accel_test_fill_f32 (AccelDevice *dev, AccelBuffer *buffer, float value)
{
  g_autoptr(AccelOp) fill = accel_fill_new (buffer, value);
  accel_test_submit (dev, fill);
  accel_test_assert_all_f32 (buffer, value);
}

gboolean
accel_test_submit_fault (AccelDevice *dev, GError **error)
{
  g_autoptr(AccelOp) fault = accel_op_new_by_name ("fault", error);
  if (fault == NULL)
    return FALSE;
  return accel_device_submit (dev, fault, NULL, error);
}

void
accel_test_assert_fault_poisons (AccelDevice *dev)
{
  g_autoptr(GError) error = NULL;
  g_assert_false (accel_test_submit_fault (dev, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED);
}

void
accel_test_assert_restarted (AccelDevice *dev, AccelBuffer *old, guint restarts)
{
  g_autoptr(GError) error = NULL;
  g_assert_cmpuint (accel_device_get_generation (dev), ==, restarts);
  g_assert_cmpuint (accel_actor_get_restart_count (ACCEL_ACTOR (dev)), ==, restarts);
  g_assert_true (accel_buffer_is_stale (old));
  g_autoptr(GBytes) gone = accel_buffer_download (old, &error);
  g_assert_null (gone);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER);
}
