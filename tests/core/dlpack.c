/* Tests of the DLPack exchange (accel-dlpack.h): buffers of cpu:0 lent as
 * tensors (shape, strides, dtype codes, views, the memory outliving the
 * context after a fault and after shutdown), tensors of host memory
 * borrowed as buffers (odd and strided shapes, ops reading and writing
 * them in place, the deleter called once), copies both ways, every dtype
 * both ways, bad tensors, and a device served by accel-device-host
 * (refused with the reason; host copies into its shared memory).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <accel.h>
#include <string.h>
#include "accel-test-buffers.h"

/* The DLPack type codes, from the specification (not from the library). */
static const struct {
  AccelDType dtype;
  guint8 code, bits;
} spec_codes[] = {
  { ACCEL_DTYPE_F16, 2, 16 }, { ACCEL_DTYPE_BF16, 4, 16 }, { ACCEL_DTYPE_F32, 2, 32 },
  { ACCEL_DTYPE_F64, 2, 64 }, { ACCEL_DTYPE_C64, 5, 64 }, { ACCEL_DTYPE_C128, 5, 128 },
  { ACCEL_DTYPE_I8, 0, 8 }, { ACCEL_DTYPE_U8, 1, 8 }, { ACCEL_DTYPE_I32, 0, 32 },
  { ACCEL_DTYPE_U32, 1, 32 }, { ACCEL_DTYPE_I64, 0, 64 }, { ACCEL_DTYPE_FP8_E4M3, 10, 8 },
  { ACCEL_DTYPE_FP8_E5M2, 12, 8 },
};

static void
random_bytes (guint8 *p, gsize n)
{
  for (gsize i = 0; i < n; i++)
    p[i] = (guint8) g_test_rand_int ();
}

static float *
random_f32 (gsize n)
{
  float *x = g_new (float, MAX (n, 1));
  for (gsize i = 0; i < n; i++)
    x[i] = (float) g_test_rand_double_range (0.5, 2.0) * (g_test_rand_bit () ? 1 : -1);
  return x;
}

static guint
random_shape (gint64 *dims, guint max_rank, gint64 max_dim)
{
  guint rank = g_test_rand_int_range (1, max_rank + 1);
  for (guint i = 0; i < rank; i++)
    dims[i] = g_test_rand_int_range (1, max_dim);
  return rank;
}

static AccelBuffer *
alloc_random (AccelDevice *dev, AccelDType dtype, const AccelShape *shape, guint8 **bytes)
{
  g_autoptr(GError) error = NULL;
  AccelBuffer *b = accel_device_alloc (dev, dtype, shape, &error);
  g_assert_no_error (error);
  gsize size = accel_buffer_get_size (b);
  guint8 *data = g_malloc (MAX (size, 1));
  random_bytes (data, size);
  g_assert_true (accel_buffer_write (b, data, size, &error));
  g_assert_no_error (error);
  *bytes = data;
  return b;
}

/* A producer of our own: a tensor over g_malloc'd memory, counting the
 * calls of its deleter. */
typedef struct {
  AccelDLManagedTensor tensor;
  int64_t shape[9];
  int64_t strides[9];
  guint8 *memory;
  int *deleted;
} Producer;

static void
producer_delete (AccelDLManagedTensor *tensor)
{
  Producer *p = tensor->manager_ctx;
  (*p->deleted)++;
  g_free (p->memory);
  g_free (p);
}

/* A tensor of @dtype and @dims; with @gap, each row of the last dimension
 * is followed by @gap unused elements (a strided layout). */
static Producer *
producer_new (AccelDType dtype, const gint64 *dims, guint rank, gint64 gap, int *deleted)
{
  Producer *p = g_new0 (Producer, 1);
  gsize esize = accel_dtype_get_size (dtype);
  gint64 stride = 1;

  for (int i = (int) rank - 1; i >= 0; i--)
    {
      p->shape[i] = dims[i];
      p->strides[i] = stride;
      stride *= dims[i] + (i == (int) rank - 1 ? gap : 0);
    }
  gsize bytes = (gsize) stride * esize;
  if (dtype == ACCEL_DTYPE_F32)
    p->memory = (guint8 *) random_f32 ((gsize) stride);   /* no NaNs: compared with == */
  else
    {
      p->memory = g_malloc (MAX (bytes, 1));
      random_bytes (p->memory, bytes);
    }
  for (guint i = 0; i < G_N_ELEMENTS (spec_codes); i++)
    if (spec_codes[i].dtype == dtype)
      {
        p->tensor.dl_tensor.dtype.code = spec_codes[i].code;
        p->tensor.dl_tensor.dtype.bits = spec_codes[i].bits;
      }
  p->tensor.dl_tensor.dtype.lanes = 1;
  p->tensor.dl_tensor.data = p->memory;
  p->tensor.dl_tensor.device.device_type = ACCEL_DLPACK_DEVICE_CPU;
  p->tensor.dl_tensor.ndim = (int32_t) rank;
  p->tensor.dl_tensor.shape = p->shape;
  p->tensor.dl_tensor.strides = gap || g_test_rand_bit () ? p->strides : NULL;
  p->tensor.manager_ctx = p;
  p->tensor.deleter = producer_delete;
  p->deleted = deleted;
  return p;
}

static void
test_device (AccelTestDeviceFixture *f, gconstpointer user_data)
{
  gint32 type = -1, id = -1;

  g_assert_true (accel_device_get_dlpack_device (f->dev, &type, &id));
  g_assert_cmpint (type, ==, ACCEL_DLPACK_DEVICE_CPU);
  g_assert_cmpint (id, ==, 0);
  g_assert_true (accel_device_get_dlpack_device (f->dev, NULL, NULL));
}

/* Lending: every dtype, odd shapes; the tensor describes the buffer, shares
 * its memory both ways and keeps the buffer alive. */
static void
test_export (AccelTestDeviceFixture *f, gconstpointer user_data)
{
  g_autoptr(GError) error = NULL;

  for (guint c = 0; c < G_N_ELEMENTS (spec_codes); c++)
    {
      gint64 dims[4];
      guint rank = random_shape (dims, 4, 9);
      g_autoptr(AccelShape) shape = accel_shape_new (dims, rank);
      guint8 *bytes;
      AccelBuffer *b = alloc_random (f->dev, spec_codes[c].dtype, shape, &bytes);
      gsize size = accel_buffer_get_size (b);

      AccelDLManagedTensor *t = accel_buffer_to_dlpack (b, &error);
      g_assert_no_error (error);
      g_assert_nonnull (t);
      const AccelDLTensor *dl = &t->dl_tensor;
      g_assert_cmpint (dl->device.device_type, ==, ACCEL_DLPACK_DEVICE_CPU);
      g_assert_cmpint (dl->device.device_id, ==, 0);
      g_assert_cmpint (dl->ndim, ==, rank);
      g_assert_cmpuint (dl->dtype.code, ==, spec_codes[c].code);
      g_assert_cmpuint (dl->dtype.bits, ==, spec_codes[c].bits);
      g_assert_cmpuint (dl->dtype.lanes, ==, 1);
      gint64 stride = 1;
      for (int i = (int) rank - 1; i >= 0; i--)
        {
          g_assert_cmpint (dl->shape[i], ==, dims[i]);
          g_assert_nonnull (dl->strides);
          g_assert_cmpint (dl->strides[i], ==, stride);
          stride *= dims[i];
        }
      guint8 *first = (guint8 *) dl->data + dl->byte_offset;
      g_assert_true (first == accel_buffer_get_data (b));
      g_assert_cmpmem (first, size, bytes, size);

      /* The tensor holds the buffer. */
      GWeakRef weak;
      g_weak_ref_init (&weak, b);
      g_object_unref (b);
      AccelBuffer *alive = g_weak_ref_get (&weak);
      g_assert_nonnull (alive);
      g_object_unref (alive);
      t->deleter (t);
      g_assert_null (g_weak_ref_get (&weak));
      g_weak_ref_clear (&weak);
      g_free (bytes);
    }

  /* Shared both ways: an op's result shows in the tensor, and bytes written
   * through the tensor are what the next op reads. */
  gsize n = g_test_rand_int_range (1, 5000);
  g_autoptr(AccelShape) s = accel_shape_new_1d ((gint64) n);
  g_autoptr(AccelBuffer) x = accel_device_alloc (f->dev, ACCEL_DTYPE_F32, s, &error);
  g_assert_no_error (error);
  g_autofree float *values = random_f32 (n);
  AccelDLManagedTensor *t = accel_buffer_to_dlpack (x, &error);
  g_assert_no_error (error);
  float *view = (float *) ((guint8 *) t->dl_tensor.data + t->dl_tensor.byte_offset);
  memcpy (view, values, n * sizeof (float));
  g_autoptr(AccelOp) scal = accel_scal_new (-3.0, x);
  accel_test_submit (f->dev, scal);
  for (gsize i = 0; i < n; i++)
    g_assert_cmpfloat (view[i], ==, -3.0f * values[i]);
  g_autofree float *back = (float *) accel_test_read_bytes (x);
  g_assert_cmpmem (back, n * sizeof (float), view, n * sizeof (float));
  t->deleter (t);
}

/* A view is lent at its offset into the base's memory. */
static void
test_export_view (AccelTestDeviceFixture *f, gconstpointer user_data)
{
  g_autoptr(GError) error = NULL;
  gint64 n = g_test_rand_int_range (10, 3000);
  gint64 off = g_test_rand_int_range (1, n / 2), len = g_test_rand_int_range (1, n - off);
  g_autoptr(AccelShape) s = accel_shape_new_1d (n);
  guint8 *bytes;
  g_autoptr(AccelBuffer) base = alloc_random (f->dev, ACCEL_DTYPE_I32, s, &bytes);
  g_autoptr(AccelShape) vs = accel_shape_new_1d (len);
  g_autoptr(AccelBuffer) view = accel_buffer_new_view (base, off, vs, &error);
  g_assert_no_error (error);

  AccelDLManagedTensor *t = accel_buffer_to_dlpack (view, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (t->dl_tensor.byte_offset, ==, (guint64) off * 4);
  g_assert_true (t->dl_tensor.data == accel_buffer_get_data (base));
  g_assert_cmpint (t->dl_tensor.shape[0], ==, len);
  g_assert_cmpmem ((guint8 *) t->dl_tensor.data + t->dl_tensor.byte_offset, len * 4, bytes + off * 4, len * 4);
  t->deleter (t);
  g_free (bytes);
}

/* Lent memory outlives its context: after a fault (the buffer is stale)
 * and after the system shuts down, the borrower still reads its data. */
static void
test_export_outlives_context (void)
{
  AccelSystem *system = accel_test_new_system ();
  AccelDevice *dev = accel_test_get_device (system, "cpu:0");
  g_autoptr(GError) error = NULL;
  gint64 dims[3];
  guint rank = random_shape (dims, 3, 40);
  g_autoptr(AccelShape) s = accel_shape_new (dims, rank);
  guint8 *bytes, *bytes2;
  AccelBuffer *b = alloc_random (dev, ACCEL_DTYPE_F64, s, &bytes);
  AccelBuffer *b2 = alloc_random (dev, ACCEL_DTYPE_U8, s, &bytes2);
  gsize size = accel_buffer_get_size (b), size2 = accel_buffer_get_size (b2);
  AccelDLManagedTensor *t = accel_buffer_to_dlpack (b, &error);
  g_assert_no_error (error);
  /* Lent twice: one detach, two loans. */
  AccelDLManagedTensor *t1 = accel_buffer_to_dlpack (b, &error);
  g_assert_no_error (error);
  g_object_unref (b);

  accel_test_assert_fault_poisons (dev);
  g_assert_cmpuint (accel_device_get_generation (dev), ==, 1);
  g_assert_cmpmem (t->dl_tensor.data, size, bytes, size);
  t1->deleter (t1);

  /* A buffer of the old generation cannot be lent any more. */
  g_assert_null (accel_buffer_to_dlpack (b2, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER);
  g_clear_error (&error);
  g_assert_null (accel_buffer_to_dlpack_host (b2, ACCEL_DLPACK_COPY_ALWAYS, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER);
  g_clear_error (&error);
  g_object_unref (b2);

  /* A fresh buffer, lent, then the system goes. */
  g_free (bytes2);
  AccelBuffer *b3 = alloc_random (dev, ACCEL_DTYPE_U8, s, &bytes2);
  AccelDLManagedTensor *t3 = accel_buffer_to_dlpack_host (b3, ACCEL_DLPACK_COPY_IF_NEEDED, &error);
  g_assert_no_error (error);
  g_assert_true ((guint8 *) t3->dl_tensor.data + t3->dl_tensor.byte_offset == accel_buffer_get_data (b3));
  g_object_unref (b3);
  accel_system_shutdown (system);
  g_object_unref (dev);
  g_object_unref (system);
  g_assert_cmpmem ((guint8 *) t3->dl_tensor.data + t3->dl_tensor.byte_offset, size2, bytes2, size2);
  g_assert_cmpmem (t->dl_tensor.data, size, bytes, size);
  t3->deleter (t3);
  t->deleter (t);
  g_free (bytes);
  g_free (bytes2);
}

/* Borrowing host memory: odd and strided shapes; ops read and write it in
 * place; the deleter runs once, when the buffer goes. */
static void
test_import (AccelTestDeviceFixture *f, gconstpointer user_data)
{
  g_autoptr(GError) error = NULL;

  for (int round = 0; round < 8; round++)
    {
      gint64 dims[4];
      guint rank = random_shape (dims, 4, 12);
      gint64 gap = round % 2 ? g_test_rand_int_range (1, 4) : 0;
      int deleted = 0;
      Producer *p = producer_new (ACCEL_DTYPE_F32, dims, rank, gap, &deleted);
      float *mem = (float *) p->memory;

      AccelBuffer *b = accel_buffer_new_from_dlpack (f->dev, &p->tensor, ACCEL_DLPACK_COPY_NEVER, &error);
      g_assert_no_error (error);
      g_assert_nonnull (b);
      g_assert_true (accel_buffer_get_data (b) == (gpointer) mem);
      g_assert_cmpint (accel_buffer_get_dtype (b), ==, ACCEL_DTYPE_F32);
      const AccelShape *shape = accel_buffer_get_shape (b);
      g_assert_cmpuint (accel_shape_get_rank (shape), ==, rank);
      for (guint i = 0; i < rank; i++)
        g_assert_cmpint (accel_shape_get_dim (shape, i), ==, dims[i]);
      g_assert_true (accel_shape_is_contiguous (shape)
                     == (gap == 0 || accel_shape_get_n_elements (shape) == dims[rank - 1]));

      /* Read in place: copied into a contiguous buffer of the device. */
      gint64 n = accel_shape_get_n_elements (shape);
      g_autoptr(AccelShape) flat = accel_shape_new (dims, rank);
      g_autoptr(AccelBuffer) dst = accel_device_alloc (f->dev, ACCEL_DTYPE_F32, flat, &error);
      g_assert_no_error (error);
      g_autoptr(AccelOp) copy = accel_copy_new (b, dst);
      accel_test_submit (f->dev, copy);
      g_autofree float *got = (float *) accel_test_read_bytes (dst);
      gint64 row = dims[rank - 1], stride = row + gap;
      for (gint64 i = 0; i < n; i++)
        g_assert_cmpfloat (got[i], ==, mem[(i / row) * stride + i % row]);

      /* Written in place: the producer sees it. */
      if (gap == 0)
        {
          g_autofree float *before = g_memdup2 (mem, n * sizeof (float));
          g_autoptr(AccelOp) scal = accel_scal_new (0.5, b);
          accel_test_submit (f->dev, scal);
          for (gint64 i = 0; i < n; i++)
            g_assert_cmpfloat (mem[i], ==, 0.5f * before[i]);
        }

      g_assert_cmpint (deleted, ==, 0);
      g_clear_object (&copy);
      g_object_unref (b);
      g_assert_cmpint (deleted, ==, 1);
    }
}

/* Every dtype both ways: a lent tensor borrowed back is the same memory
 * and dtype; a producer's tensor of each code maps to its dtype. */
static void
test_dtypes_round_trip (AccelTestDeviceFixture *f, gconstpointer user_data)
{
  g_autoptr(GError) error = NULL;

  for (guint c = 0; c < G_N_ELEMENTS (spec_codes); c++)
    {
      gint64 dims[3];
      guint rank = random_shape (dims, 3, 7);
      g_autoptr(AccelShape) s = accel_shape_new (dims, rank);
      guint8 *bytes;
      g_autoptr(AccelBuffer) b = alloc_random (f->dev, spec_codes[c].dtype, s, &bytes);
      AccelDLManagedTensor *t = accel_buffer_to_dlpack (b, &error);
      g_assert_no_error (error);
      g_autoptr(AccelBuffer) back = accel_buffer_new_from_dlpack (f->dev, t, ACCEL_DLPACK_COPY_IF_NEEDED, &error);
      g_assert_no_error (error);
      g_assert_cmpint (accel_buffer_get_dtype (back), ==, spec_codes[c].dtype);
      g_assert_true (accel_buffer_get_data (back) == accel_buffer_get_data (b));
      g_assert_true (accel_shape_equal (accel_buffer_get_shape (back), s));
      g_free (bytes);

      int deleted = 0;
      Producer *p = producer_new (spec_codes[c].dtype, dims, rank, 0, &deleted);
      g_autoptr(AccelBuffer) got = accel_buffer_new_from_dlpack (f->dev, &p->tensor, ACCEL_DLPACK_COPY_ALWAYS,
                                                                  &error);
      g_assert_no_error (error);
      g_assert_cmpint (accel_buffer_get_dtype (got), ==, spec_codes[c].dtype);
      g_assert_cmpint (deleted, ==, 1);
    }
}

/* Copies both ways have the data and none of the memory. */
static void
test_copies (AccelTestDeviceFixture *f, gconstpointer user_data)
{
  g_autoptr(GError) error = NULL;
  gint64 dims[3];
  guint rank = random_shape (dims, 3, 30);
  int deleted = 0;
  Producer *p = producer_new (ACCEL_DTYPE_C64, dims, rank, g_test_rand_int_range (0, 3), &deleted);
  gsize span = 0;
  {
    g_autoptr(AccelShape) probe = accel_shape_new_strided (dims, (gint64 *) p->strides, rank);
    span = (gsize) accel_shape_get_extent (probe) * 8;
  }
  g_autofree guint8 *expect = g_memdup2 (p->memory, span);

  g_autoptr(AccelBuffer) b = accel_buffer_new_from_dlpack (f->dev, &p->tensor, ACCEL_DLPACK_COPY_ALWAYS, &error);
  g_assert_no_error (error);
  g_assert_cmpint (deleted, ==, 1);
  g_assert_cmpuint (accel_buffer_get_size (b), ==, span);
  g_autofree guint8 *got = accel_test_read_bytes (b);
  g_assert_cmpmem (got, span, expect, span);

  AccelDLManagedTensor *t = accel_buffer_to_dlpack_host (b, ACCEL_DLPACK_COPY_ALWAYS, &error);
  g_assert_no_error (error);
  g_assert_true (t->dl_tensor.data != accel_buffer_get_data (b));
  g_assert_cmpmem ((guint8 *) t->dl_tensor.data + t->dl_tensor.byte_offset, span, expect, span);
  t->deleter (t);
  t = accel_buffer_to_dlpack_host (b, ACCEL_DLPACK_COPY_NEVER, &error);
  g_assert_no_error (error);
  g_assert_true ((guint8 *) t->dl_tensor.data + t->dl_tensor.byte_offset == accel_buffer_get_data (b));
  t->deleter (t);
}

static void
expect_refused (AccelDevice *dev, Producer *p, AccelDLPackCopy copy, AccelError code, const char *words)
{
  g_autoptr(GError) error = NULL;
  g_assert_null (accel_buffer_new_from_dlpack (dev, &p->tensor, copy, &error));
  g_assert_error (error, ACCEL_ERROR, (gint) code);
  if (words)
    g_assert_nonnull (strstr (error->message, words));
}

/* Bad tensors are refused with the reason, and left to their producer. */
static void
test_import_errors (AccelTestDeviceFixture *f, gconstpointer user_data)
{
  gint64 dims[2] = { g_test_rand_int_range (2, 9), g_test_rand_int_range (2, 9) };
  int deleted = 0;
  Producer *p = producer_new (ACCEL_DTYPE_F32, dims, 2, 0, &deleted);
  AccelDLTensor *t = &p->tensor.dl_tensor;

  t->dtype.code = ACCEL_DLPACK_CODE_BOOL;
  t->dtype.bits = 8;
  expect_refused (f->dev, p, ACCEL_DLPACK_COPY_IF_NEEDED, ACCEL_ERROR_DTYPE_UNSUPPORTED, "code 6");
  t->dtype.code = ACCEL_DLPACK_CODE_INT;
  t->dtype.bits = 16;
  expect_refused (f->dev, p, ACCEL_DLPACK_COPY_ALWAYS, ACCEL_ERROR_DTYPE_UNSUPPORTED, "16 bits");
  t->dtype.code = ACCEL_DLPACK_CODE_FLOAT;
  t->dtype.bits = 32;
  t->dtype.lanes = 4;
  expect_refused (f->dev, p, ACCEL_DLPACK_COPY_IF_NEEDED, ACCEL_ERROR_DTYPE_UNSUPPORTED, "4 lanes");
  t->dtype.lanes = 1;

  t->strides = p->strides;
  p->strides[0] = -p->strides[0];
  expect_refused (f->dev, p, ACCEL_DLPACK_COPY_IF_NEEDED, ACCEL_ERROR_INVALID_ARGUMENT, "negative");
  p->strides[0] = -p->strides[0];
  p->shape[1] = -1;
  expect_refused (f->dev, p, ACCEL_DLPACK_COPY_IF_NEEDED, ACCEL_ERROR_INVALID_ARGUMENT, "negative");
  p->shape[1] = dims[1];
  t->ndim = 9;
  expect_refused (f->dev, p, ACCEL_DLPACK_COPY_IF_NEEDED, ACCEL_ERROR_INVALID_ARGUMENT, "rank 9");
  t->ndim = 2;
  t->byte_offset = 2;
  expect_refused (f->dev, p, ACCEL_DLPACK_COPY_IF_NEEDED, ACCEL_ERROR_INVALID_ARGUMENT, "aligned");
  t->byte_offset = 0;
  p->strides[0] = G_MAXINT64 / 2;
  expect_refused (f->dev, p, ACCEL_DLPACK_COPY_IF_NEEDED, ACCEL_ERROR_INVALID_ARGUMENT, "addressed");
  /* 4 steps of that and 3 of one reach offset 2^64 - 1 exactly: one past
   * it wraps to 0 elements, which must not pass for a small tensor. */
  p->shape[0] = 5;
  p->shape[1] = 4;
  p->strides[1] = 1;
  expect_refused (f->dev, p, ACCEL_DLPACK_COPY_IF_NEEDED, ACCEL_ERROR_INVALID_ARGUMENT, "addressed");
  p->shape[0] = dims[0];
  p->shape[1] = dims[1];
  p->strides[0] = dims[1];

  /* Memory of a GPU: neither shared nor copied by a cpu device. */
  t->device.device_type = ACCEL_DLPACK_DEVICE_CUDA;
  expect_refused (f->dev, p, ACCEL_DLPACK_COPY_NEVER, ACCEL_ERROR_NOT_SUPPORTED, "(2, 0)");
  expect_refused (f->dev, p, ACCEL_DLPACK_COPY_IF_NEEDED, ACCEL_ERROR_NOT_SUPPORTED, "only host memory");
  /* Pinned host memory is host memory. */
  t->device.device_type = ACCEL_DLPACK_DEVICE_CUDA_HOST;
  g_assert_cmpint (deleted, ==, 0);
  g_autoptr(GError) error = NULL;
  AccelBuffer *b = accel_buffer_new_from_dlpack (f->dev, &p->tensor, ACCEL_DLPACK_COPY_NEVER, &error);
  g_assert_no_error (error);
  g_object_unref (b);
  g_assert_cmpint (deleted, ==, 1);
}

/* A device behind accel-device-host: lending is refused with the reason;
 * a host copy lands in the shared host memory; borrowing copies. */
static void
test_remote (void)
{
  g_autoptr(AccelSystem) system = accel_test_new_system ();
  g_autoptr(GError) error = NULL;
  const gsize region = 1 << 20;
  g_autoptr(AccelDevice) dev = accel_test_remote_cpu_device_full (system, "cpu:0", NULL, 0, region);
  AccelRemoteDevice *remote = ACCEL_REMOTE_DEVICE (dev);
  g_assert_false (accel_device_get_dlpack_device (dev, NULL, NULL));

  gint64 dims[2] = { g_test_rand_int_range (50, 300), g_test_rand_int_range (50, 300) };
  g_autoptr(AccelShape) s = accel_shape_new (dims, 2);
  guint8 *bytes;
  g_autoptr(AccelBuffer) b = alloc_random (dev, ACCEL_DTYPE_F32, s, &bytes);
  gsize size = accel_buffer_get_size (b);

  g_assert_null (accel_buffer_to_dlpack (b, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED);
  g_assert_nonnull (strstr (error->message, "accel-device-host"));
  g_assert_nonnull (strstr (error->message, "CUDA IPC"));
  g_clear_error (&error);
  g_assert_null (accel_buffer_to_dlpack_host (b, ACCEL_DLPACK_COPY_NEVER, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED);
  g_clear_error (&error);

  AccelDLManagedTensor *t = accel_buffer_to_dlpack_host (b, ACCEL_DLPACK_COPY_IF_NEEDED, &error);
  g_assert_no_error (error);
  g_assert_cmpint (t->dl_tensor.device.device_type, ==, ACCEL_DLPACK_DEVICE_CPU);
  g_assert_cmpmem (t->dl_tensor.data, size, bytes, size);
  /* The copy holds shared host memory: the whole region is not free. */
  g_assert_null (accel_remote_device_alloc_host_memory (remote, region, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_OUT_OF_MEMORY);
  g_clear_error (&error);
  t->deleter (t);
  gpointer all = accel_remote_device_alloc_host_memory (remote, region, &error);
  g_assert_no_error (error);
  /* With none left, the copy goes to memory of this process. */
  t = accel_buffer_to_dlpack_host (b, ACCEL_DLPACK_COPY_IF_NEEDED, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (t->dl_tensor.data, size, bytes, size);
  t->deleter (t);
  accel_remote_device_free_host_memory (remote, all);

  /* Borrowing host memory into the host's device: copied, deleter called. */
  int deleted = 0;
  Producer *p = producer_new (ACCEL_DTYPE_F32, dims, 2, 0, &deleted);
  g_autofree guint8 *expect = g_memdup2 (p->memory, size);
  expect_refused (dev, p, ACCEL_DLPACK_COPY_NEVER, ACCEL_ERROR_NOT_SUPPORTED, "accel-device-host");
  g_autoptr(AccelBuffer) in = accel_buffer_new_from_dlpack (dev, &p->tensor, ACCEL_DLPACK_COPY_IF_NEEDED, &error);
  g_assert_no_error (error);
  g_assert_cmpint (deleted, ==, 1);
  g_autofree guint8 *got = accel_test_read_bytes (in);
  g_assert_cmpmem (got, size, expect, size);
  g_free (bytes);
  accel_system_shutdown (system);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  accel_test_add_cpu ("/dlpack/device", NULL, test_device);
  accel_test_add_cpu ("/dlpack/export", NULL, test_export);
  accel_test_add_cpu ("/dlpack/export-view", NULL, test_export_view);
  g_test_add_func ("/dlpack/export-outlives-context", test_export_outlives_context);
  accel_test_add_cpu ("/dlpack/import", NULL, test_import);
  accel_test_add_cpu ("/dlpack/dtypes-round-trip", NULL, test_dtypes_round_trip);
  accel_test_add_cpu ("/dlpack/copies", NULL, test_copies);
  accel_test_add_cpu ("/dlpack/import-errors", NULL, test_import_errors);
  g_test_add_func ("/dlpack/remote", test_remote);
  return g_test_run ();
}
