/* accel-test-buffers.h: what the device tests do over and over: a system,
 * f32 buffers of random values, reading them back, a `fault` op.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <accel.h>

G_BEGIN_DECLS

/* A new system; asserts it could be made. */
AccelSystem *accel_test_new_system (void);

/* @system's device @name (a new reference); asserts it is there. */
AccelDevice *accel_test_get_device (AccelSystem *system, const char *name);

/* The program's system and its cpu:0, made on first use (the suite
 * helpers of cpu, cuda, libs and patterns hand them out), and their end:
 * the system shut down and both dropped, after g_test_run(). */
AccelSystem *accel_test_shared_system (void);
AccelDevice *accel_test_shared_cpu (void);
void accel_test_shared_teardown (void);

/* The fixture of a test on one device of a system of its own: made before
 * the test, shut down and dropped after it (g_test_add()). */
typedef struct {
  AccelSystem *system;
  AccelDevice *dev;
} AccelTestDeviceFixture;

/* Setups: @dev is cpu:0, or remote-cpu:0 (accel_test_remote_cpu_device()). */
void accel_test_cpu_setup (AccelTestDeviceFixture *f, gconstpointer user_data);
void accel_test_remote_cpu_setup (AccelTestDeviceFixture *f, gconstpointer user_data);
void accel_test_device_teardown (AccelTestDeviceFixture *f, gconstpointer user_data);

/* Adds @func (void (*) (AccelTestDeviceFixture *, gconstpointer)) at @path
 * with @data, on cpu:0 or on remote-cpu:0. */
#define accel_test_add_cpu(path, data, func) \
  g_test_add ((path), AccelTestDeviceFixture, (data), accel_test_cpu_setup, (func), accel_test_device_teardown)
#define accel_test_add_remote_cpu(path, data, func) \
  g_test_add ((path), AccelTestDeviceFixture, (data), accel_test_remote_cpu_setup, (func), accel_test_device_teardown)

/* A buffer of @dtype and @shape on @dev; asserts the allocation. */
AccelBuffer *accel_test_alloc (AccelDevice *dev, AccelDType dtype, const AccelShape *shape);

/* An f32 buffer of @shape on @dev; asserts the allocation. */
AccelBuffer *accel_test_alloc_f32 (AccelDevice *dev, const AccelShape *shape);

/* @n random values in [-1, 1) from the test's random generator. */
float *accel_test_random_f32 (gsize n);

/* An f32 buffer of @shape holding random values, which are also returned
 * in @host (g_free()) unless it is %NULL. */
AccelBuffer *accel_test_alloc_random_f32 (AccelDevice *dev, const AccelShape *shape, float **host);

/* The buffer's bytes, and the same as floats (g_free()). */
guint8 *accel_test_read_bytes (AccelBuffer *buffer);
float *accel_test_read_f32 (AccelBuffer *buffer);

/* remote-cpu:0: cpu:0 of @system's cpu backend served by a device host. */
AccelDevice *accel_test_remote_cpu_device (AccelSystem *system);

/* remote-cpu:0 serving @hosted of @system's cpu backend, with @env added
 * to the host's environment (nullable) and shared memory of @arena_size
 * bytes for transfers and @host_memory_size for the application (0: the
 * device's defaults). */
AccelDevice *accel_test_remote_cpu_device_full (AccelSystem *system,
                                                const char *hosted,
                                                const char *const *env,
                                                guint64 arena_size,
                                                guint64 host_memory_size);

/* Submits @op to @dev and waits; asserts it succeeded. */
void accel_test_submit (AccelDevice *dev, AccelOp *op);

/* Asserts that every element of the f32 @buffer is @want. */
void accel_test_assert_all_f32 (AccelBuffer *buffer, float want);

/* Fills the f32 @buffer with @value on @dev; asserts that the op succeeded
 * and that every element reads back as @value. */
void accel_test_fill_f32 (AccelDevice *dev, AccelBuffer *buffer, float value);

/* Submits the fault plugin's `fault` op and waits for it. */
gboolean accel_test_submit_fault (AccelDevice *dev, GError **error);
/* The same, asserting that it fails with CONTEXT_POISONED (the device then
 * restarts or fails, as its strategy says). */
void accel_test_assert_fault_poisons (AccelDevice *dev);

/* Asserts that @dev has restarted @restarts times in all (its generation
 * and its actor's restart count) and that @old, a buffer of the first
 * generation, is stale: downloading it fails with STALE_BUFFER. */
void accel_test_assert_restarted (AccelDevice *dev, AccelBuffer *old, guint restarts);

G_END_DECLS
