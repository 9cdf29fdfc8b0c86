/* fuzz-op-deserialize.c: accel_op_deserialize() of every op type, and
 * what a device host does next with what it accepts: validate it and run
 * it on cpu:0. The op type's name comes from the input.
 *
 * Input: a little-endian u16 n, then n bytes of a serialised `(sa{sv})`,
 * then bytes that fill the op's buffers before it runs (cyclically; a fixed
 * pattern when there are none). A buffer handle describes its buffer (see
 * fuzz_handle_encode() in fuzz-op-handle.h), so that any handle the
 * mutator makes names a buffer of some dtype, shape and layout; a handle
 * named twice is the same buffer.
 *
 * Checked beyond "no crash": an op that deserialises serialises again to
 * a form that deserialises to the same serialisation, and validation and
 * the kernel fail only with an AccelError.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include "fuzz-env.h"
#include "fuzz-op-handle.h"

/* Big enough for every op's interesting shapes, small enough for fast runs. */
#define MAX_BUFFER_BYTES (256 * 1024)
/* A broadcast has more elements than bytes; a fuzzer would only time out
 * on one of 10^14. */
#define MAX_ELEMENTS (1 << 20)

typedef struct {
  GHashTable *buffers;          /* handle -> AccelBuffer */
} Pool;

static AccelBuffer *
make_buffer (guint64 handle)
{
  FuzzHandle h;
  if (!fuzz_handle_decode (handle, &h))
    return NULL;

  gint64 strides[ACCEL_SHAPE_MAX_RANK];
  gint64 extent = fuzz_handle_strides (&h, strides);
  gsize esize = accel_dtype_get_size (h.dtype);
  gint64 elements = 1;
  for (guint i = 0; i < h.rank; i++)
    elements *= h.dims[i];
  if (extent < 0 || (guint64) extent * esize > MAX_BUFFER_BYTES || elements > MAX_ELEMENTS)
    return NULL;

  g_autoptr(GError) error = NULL;
  g_autoptr(AccelShape) flat = accel_shape_new_1d (MAX (extent, 1) * (gint64) esize);
  g_autoptr(AccelBuffer) base = accel_device_alloc (accel_fuzz_get_cpu (), ACCEL_DTYPE_U8, flat, &error);
  if (base == NULL)
    return NULL;
  g_autoptr(AccelShape) shape = accel_shape_new_strided (h.dims, strides, h.rank);
  return _accel_buffer_new_alias (base, 0, h.dtype, shape, &error);
}

/* Serialised ops name buffers by their device handles. */
static AccelBuffer *
resolve_again (guint64 handle, gpointer data)
{
  Pool *pool = data;
  GHashTableIter iter;
  gpointer value;
  g_hash_table_iter_init (&iter, pool->buffers);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    if (accel_buffer_get_handle (value) == handle)
      return g_object_ref (value);
  return NULL;
}

static AccelBuffer *
resolve (guint64 handle, gpointer data)
{
  Pool *pool = data;
  AccelBuffer *b = g_hash_table_lookup (pool->buffers, &handle);
  if (b == NULL)
    {
      b = make_buffer (handle);
      if (b == NULL)
        return NULL;
      g_hash_table_insert (pool->buffers, g_memdup2 (&handle, sizeof handle), b);
    }
  return g_object_ref (b);
}

/* Every byte of the buffer's base allocation from @content, cyclically,
 * or from a pattern of small values (indices that are mostly in range). */
static void
fill (AccelBuffer *buffer, const guint8 *content, gsize n_content)
{
  AccelBuffer *base = accel_buffer_get_base (buffer);
  gsize size = accel_buffer_get_size (base);
  g_autofree guint8 *bytes = g_malloc (size ? size : 1);
  for (gsize i = 0; i < size; i++)
    bytes[i] = n_content ? content[i % n_content] : (guint8) ((i * 7 + 3) % 5);
  g_autoptr(GError) error = NULL;
  if (!accel_buffer_write (base, bytes, size, &error))
    g_error ("Cannot fill a buffer: %s", error->message);
}

static void
check_error (const GError *error)
{
  g_assert (error != NULL);
  g_assert (error->domain == ACCEL_ERROR);
  g_assert (error->message != NULL && *error->message != '\0');
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size < 2)
    return 0;
  gsize n = data[0] | (gsize) data[1] << 8;
  if (n > size - 2)
    return 0;
  const guint8 *content = data + 2 + n;
  gsize n_content = size - 2 - n;

  Pool pool = { g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_object_unref) };
  g_autoptr(GVariant) serialized = accel_fuzz_variant (G_VARIANT_TYPE ("(sa{sv})"), data + 2, n);
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelOp) op = accel_op_deserialize (serialized, resolve, &pool, &error);
  if (op == NULL)
    {
      check_error (error);
      g_hash_table_unref (pool.buffers);
      return 0;
    }

  /* What deserialises serialises to a fixed point. */
  g_autoptr(GVariant) again = accel_op_serialize (op);
  g_autoptr(AccelOp) copy = accel_op_deserialize (again, resolve_again, &pool, &error);
  g_assert_no_error (error);
  g_autoptr(GVariant) third = accel_op_serialize (copy);
  if (!g_variant_equal (again, third))
    {
      g_autofree char *a = g_variant_print (again, TRUE);
      g_autofree char *b = g_variant_print (third, TRUE);
      g_error ("Serialisation is not a fixed point:\n%s\n%s", a, b);
    }

  if (!accel_op_validate (op, &error))
    {
      check_error (error);
      g_hash_table_unref (pool.buffers);
      return 0;
    }

  g_autoptr(GPtrArray) inputs = accel_op_get_buffers (op, ACCEL_ACCESS_READ_WRITE);
  for (guint i = 0; i < inputs->len; i++)
    fill (inputs->pdata[i], content, n_content);
  if (!accel_device_submit (accel_fuzz_get_cpu (), op, NULL, &error))
    {
      check_error (error);
      /* A kernel's failure must leave the device usable. */
      g_assert_cmpint (accel_device_get_state (accel_fuzz_get_cpu ()), ==, ACCEL_DEVICE_STATE_READY);
    }
  g_hash_table_unref (pool.buffers);
  return 0;
}
