/* accel-dlpack.c: buffers lent to and borrowed from other array libraries
 * through DLPack.
 *
 * Lending (accel_buffer_to_dlpack()): the tensor points at the buffer's
 * memory and keeps the buffer alive until the consumer calls its deleter.
 * A device's context frees all of its memory when it closes (after a
 * fault, or at shutdown), which would leave the consumer's array dangling,
 * so the first loan detaches the memory from the context: it is then freed
 * when the last buffer over it goes, whatever happened to the context.
 *
 * Borrowing (accel_buffer_new_from_dlpack()): the buffer points at the
 * producer's memory and calls the tensor's deleter when it is finalized.
 * The buffer belongs to the device's current generation like any other,
 * so after a restart it is stale, although the memory is still there.
 *
 * Neither direction orders work: the memory holds what the ops that
 * completed before the exchange wrote, and the two libraries must not
 * write it at the same time (as with any shared memory).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-private.h"
#include "accel-dlpack.h"

/* The end of the largest user address space of the machines Accel runs on
 * (57-bit virtual addresses with 5-level paging): a tensor said to reach
 * past it is malformed, whatever its sizes multiply to. */
#define ADDRESS_LIMIT ((guint64) 1 << 57)

/* The DLPack type of each dtype, and back. */
static const AccelDLDataType dtype_codes[ACCEL_DTYPE_N_TYPES] = {
  [ACCEL_DTYPE_F16] = { ACCEL_DLPACK_CODE_FLOAT, 16, 1 },
  [ACCEL_DTYPE_BF16] = { ACCEL_DLPACK_CODE_BFLOAT, 16, 1 },
  [ACCEL_DTYPE_F32] = { ACCEL_DLPACK_CODE_FLOAT, 32, 1 },
  [ACCEL_DTYPE_F64] = { ACCEL_DLPACK_CODE_FLOAT, 64, 1 },
  [ACCEL_DTYPE_C64] = { ACCEL_DLPACK_CODE_COMPLEX, 64, 1 },
  [ACCEL_DTYPE_C128] = { ACCEL_DLPACK_CODE_COMPLEX, 128, 1 },
  [ACCEL_DTYPE_I8] = { ACCEL_DLPACK_CODE_INT, 8, 1 },
  [ACCEL_DTYPE_U8] = { ACCEL_DLPACK_CODE_UINT, 8, 1 },
  [ACCEL_DTYPE_I32] = { ACCEL_DLPACK_CODE_INT, 32, 1 },
  [ACCEL_DTYPE_U32] = { ACCEL_DLPACK_CODE_UINT, 32, 1 },
  [ACCEL_DTYPE_I64] = { ACCEL_DLPACK_CODE_INT, 64, 1 },
  [ACCEL_DTYPE_FP8_E4M3] = { ACCEL_DLPACK_CODE_FLOAT8_E4M3FN, 8, 1 },
  [ACCEL_DTYPE_FP8_E5M2] = { ACCEL_DLPACK_CODE_FLOAT8_E5M2, 8, 1 },
};

static gboolean
dtype_from_dlpack (AccelDLDataType t, AccelDType *dtype, GError **error)
{
  for (guint i = 0; t.lanes == 1 && i < ACCEL_DTYPE_N_TYPES; i++)
    if (dtype_codes[i].code == t.code && dtype_codes[i].bits == t.bits)
      {
        *dtype = (AccelDType) i;
        return TRUE;
      }
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED,
               "No dtype of Accel holds the DLPack tensor's dtype (code %u, %u bits, %u lanes)",
               t.code, t.bits, t.lanes);
  return FALSE;
}

/**
 * accel_device_get_dlpack_device:
 * @self: a device
 * @device_type: (out) (optional): the DLPack device type of its buffer
 *   memory (%ACCEL_DLPACK_DEVICE_CPU, %ACCEL_DLPACK_DEVICE_CUDA)
 * @device_id: (out) (optional): the ordinal of that device
 *
 * Where the memory of @self's buffers is, as DLPack names it, for devices
 * whose memory a pointer in this process reaches: `cpu` devices
 * (%ACCEL_DLPACK_DEVICE_CPU) and CUDA devices with `isolation=none`
 * (%ACCEL_DLPACK_DEVICE_CUDA and the CUDA ordinal). The buffers of a device
 * served by an `accel-device-host` process are that process's memory.
 *
 * Returns: %TRUE if its buffer memory can be lent and borrowed here
 */
gboolean
accel_device_get_dlpack_device (AccelDevice *self, gint32 *device_type, gint32 *device_id)
{
  g_return_val_if_fail (ACCEL_IS_DEVICE (self), FALSE);
  AccelDeviceClass *klass = ACCEL_DEVICE_GET_CLASS (self);
  gint32 type = 0, id = 0;

  if (klass->get_dlpack_device == NULL || !klass->get_dlpack_device (self, &type, &id))
    return FALSE;
  if (device_type)
    *device_type = type;
  if (device_id)
    *device_id = id;
  return TRUE;
}

/* Why the buffers of @device cannot be lent here. */
static void
set_not_addressable (AccelDevice *device, GError **error)
{
  if (ACCEL_IS_REMOTE_DEVICE (device))
    g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                 "“%s” is served by an accel-device-host process (pid %d), so its buffers are memory "
                 "of that process, which no pointer here reaches. They are not mapped through CUDA IPC: "
                 "that would open a CUDA context in this process, which the isolation keeps out, the "
                 "device's stream-ordered memory pool is not shareable between processes, and a mapping "
                 "would dangle once a fault replaces the host. Use isolation=none to exchange memory "
                 "without a copy, or a host copy (accel_buffer_to_dlpack_host(), Buffer.numpy())",
                 accel_device_get_name (device),
                 (int) accel_remote_device_get_host_pid (ACCEL_REMOTE_DEVICE (device)));
  else
    g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                 "The backend “%s” of “%s” does not say where its buffer memory is, so it cannot be "
                 "exchanged through DLPack without a copy",
                 accel_device_get_backend_name (device), accel_device_get_name (device));
}

/* What a lent tensor owns: the buffer (a loan), or a host copy. */
typedef struct {
  AccelDLManagedTensor tensor;
  int64_t shape[ACCEL_SHAPE_MAX_RANK];
  int64_t strides[ACCEL_SHAPE_MAX_RANK];
  AccelBuffer *buffer;
  AccelRemoteDevice *remote;   /* host_copy is its shared host memory */
  gpointer host_copy;          /* otherwise from g_aligned_alloc */
} Loan;

static void
loan_delete (AccelDLManagedTensor *tensor)
{
  Loan *loan = tensor->manager_ctx;

  if (loan->remote)
    {
      accel_remote_device_free_host_memory (loan->remote, loan->host_copy);
      g_object_unref (loan->remote);
    }
  else
    g_aligned_free (loan->host_copy);
  g_clear_object (&loan->buffer);
  g_free (loan);
}

static Loan *
loan_new (AccelBuffer *buffer, gint32 device_type, gint32 device_id)
{
  Loan *loan = g_new0 (Loan, 1);
  const AccelShape *shape = accel_buffer_get_shape (buffer);
  guint rank = accel_shape_get_rank (shape);

  for (guint i = 0; i < rank; i++)
    {
      loan->shape[i] = accel_shape_get_dim (shape, i);
      loan->strides[i] = accel_shape_get_stride (shape, i);
    }
  loan->tensor.dl_tensor.device.device_type = device_type;
  loan->tensor.dl_tensor.device.device_id = device_id;
  loan->tensor.dl_tensor.ndim = (int32_t) rank;
  loan->tensor.dl_tensor.dtype = dtype_codes[accel_buffer_get_dtype (buffer)];
  loan->tensor.dl_tensor.shape = loan->shape;
  loan->tensor.dl_tensor.strides = loan->strides;
  loan->tensor.manager_ctx = loan;
  loan->tensor.deleter = loan_delete;
  return loan;
}

/**
 * accel_buffer_to_dlpack:
 * @self: a buffer of a device whose memory is in this process (see
 *   accel_device_get_dlpack_device())
 * @error: return location for a #GError
 *
 * Lends the buffer's memory to another library as a DLPack tensor, without
 * a copy. The tensor keeps @self alive until its deleter is called, and its
 * memory stays valid until then even if the device restarts or shuts down
 * meanwhile (the buffer is then stale for Accel, but its memory is not
 * freed under the borrower). Strides are always given, in elements.
 *
 * The tensor holds what the ops completed so far wrote; ordering later
 * work on either side is the caller's concern. Python's `__dlpack__` is
 * built on this.
 *
 * Returns: (type gpointer) (transfer full): the tensor (an #AccelDLManagedTensor;
 *   a pointer as an integer for bindings), to be released with its deleter, or
 *   %NULL with %ACCEL_ERROR_NOT_SUPPORTED (the memory is not in this
 *   process; the message says why) or %ACCEL_ERROR_STALE_BUFFER
 */
AccelDLManagedTensor *
accel_buffer_to_dlpack (AccelBuffer *self, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_BUFFER (self), NULL);
  AccelDevice *device = accel_buffer_get_device (self);
  gint32 type, id;

  if (!accel_device_get_dlpack_device (device, &type, &id))
    {
      set_not_addressable (device, error);
      return NULL;
    }
  if (!_accel_buffer_detach_memory (self, error))
    return NULL;

  AccelBuffer *base = accel_buffer_get_base (self) ? accel_buffer_get_base (self) : self;
  Loan *loan = loan_new (self, type, id);
  loan->buffer = g_object_ref (self);
  loan->tensor.dl_tensor.data = accel_buffer_get_memory (base);
  loan->tensor.dl_tensor.byte_offset = accel_buffer_get_offset (self);
  return &loan->tensor;
}

/**
 * accel_buffer_to_dlpack_host:
 * @self: a buffer
 * @copy: whether the data may, must or must not be copied
 * @error: return location for a #GError
 *
 * The buffer's data as a DLPack tensor in host memory of this process
 * (%ACCEL_DLPACK_DEVICE_CPU). Where the buffer's memory is host memory (a
 * `cpu` device) it is lent as by accel_buffer_to_dlpack(), unless @copy is
 * %ACCEL_DLPACK_COPY_ALWAYS. Otherwise the data are copied once, after the
 * ops submitted before the call: for a device served by an
 * `accel-device-host` with #AccelRemoteDevice:host-memory-size, into that
 * shared memory, where the host moves them in place; else into memory
 * allocated here. Numpy's view of a buffer (`Buffer.numpy()` in Python)
 * is built on this.
 *
 * Returns: (type gpointer) (transfer full): the tensor (an #AccelDLManagedTensor;
 *   a pointer as an integer for bindings), to be released with its deleter, or
 *   %NULL with %ACCEL_ERROR_NOT_SUPPORTED (a copy was needed and @copy is
 *   %ACCEL_DLPACK_COPY_NEVER), %ACCEL_ERROR_STALE_BUFFER, or the error of
 *   the transfer
 */
AccelDLManagedTensor *
accel_buffer_to_dlpack_host (AccelBuffer *self, AccelDLPackCopy copy, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_BUFFER (self), NULL);
  AccelDevice *device = accel_buffer_get_device (self);
  gint32 type = 0;

  if (copy != ACCEL_DLPACK_COPY_ALWAYS && accel_device_get_dlpack_device (device, &type, NULL)
      && type == ACCEL_DLPACK_DEVICE_CPU)
    return accel_buffer_to_dlpack (self, error);
  if (copy == ACCEL_DLPACK_COPY_NEVER)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                   "The memory of buffers of “%s” is not host memory of this process: it can only "
                   "be had in host memory by a copy", accel_device_get_name (device));
      return NULL;
    }
  if (accel_buffer_is_stale (self))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER,
                   "The buffer belongs to generation %u of “%s”, whose memory is gone",
                   accel_buffer_get_generation (self), accel_device_get_name (device));
      return NULL;
    }

  gsize size = accel_buffer_get_size (self);
  Loan *loan = loan_new (self, ACCEL_DLPACK_DEVICE_CPU, 0);
  if (ACCEL_IS_REMOTE_DEVICE (device))
    {
      /* Without host memory to hand out (or with too little left), the
       * copy goes through the transfer arena into memory of our own. */
      loan->host_copy = accel_remote_device_alloc_host_memory (ACCEL_REMOTE_DEVICE (device),
                                                               MAX (size, 1), NULL);
      if (loan->host_copy)
        loan->remote = g_object_ref (ACCEL_REMOTE_DEVICE (device));
    }
  if (loan->host_copy == NULL)
    loan->host_copy = g_aligned_alloc (MAX (size, 1), 1, 64);
  if (!accel_buffer_read (self, loan->host_copy, size, error))
    {
      loan_delete (&loan->tensor);
      return NULL;
    }
  loan->tensor.dl_tensor.data = loan->host_copy;
  return &loan->tensor;
}

static void
call_deleter (gpointer data)
{
  AccelDLManagedTensor *tensor = data;
  if (tensor->deleter)
    tensor->deleter (tensor);
}

/* Whether memory of DLPack device (@type, @id) is addressable by a device
 * whose memory is (@dev_type, @dev_id). */
static gboolean
reaches (gint32 dev_type, gint32 dev_id, gint32 type, gint32 id)
{
  switch (dev_type)
    {
    case ACCEL_DLPACK_DEVICE_CPU:
      return type == ACCEL_DLPACK_DEVICE_CPU || type == ACCEL_DLPACK_DEVICE_CUDA_HOST
             || type == ACCEL_DLPACK_DEVICE_CUDA_MANAGED;
    case ACCEL_DLPACK_DEVICE_CUDA:
      return (type == ACCEL_DLPACK_DEVICE_CUDA && id == dev_id) || type == ACCEL_DLPACK_DEVICE_CUDA_HOST
             || type == ACCEL_DLPACK_DEVICE_CUDA_MANAGED;
    default:
      return type == dev_type && id == dev_id;
    }
}

/* The shape of @t, its size in bytes (the span of its strides) and the
 * address of its first element, checked: a tensor is outside input. */
static AccelShape *
tensor_shape (const AccelDLTensor *t, AccelDType dtype, gsize *size, guint8 **first, GError **error)
{
  gint64 dims[ACCEL_SHAPE_MAX_RANK], strides[ACCEL_SHAPE_MAX_RANK];
  gsize esize = accel_dtype_get_size (dtype);
  guint64 bytes = 0;
  gboolean contiguous = TRUE;
  gint64 expect = 1;

  if (t->ndim < 0 || t->ndim > ACCEL_SHAPE_MAX_RANK || (t->ndim > 0 && t->shape == NULL))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "The DLPack tensor has rank %d; Accel takes 0 to %d", t->ndim, ACCEL_SHAPE_MAX_RANK);
      return NULL;
    }
  for (int i = t->ndim - 1; i >= 0; i--)
    {
      dims[i] = t->shape[i];
      /* A dimension of one is never stepped over: its stride is free. */
      strides[i] = t->strides && dims[i] != 1 ? t->strides[i] : expect;
      if (dims[i] < 0 || strides[i] < 0)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "The DLPack tensor's dimension %d has size %" G_GINT64_FORMAT " and stride %"
                       G_GINT64_FORMAT "; Accel takes no negative sizes or strides", i, dims[i], strides[i]);
          return NULL;
        }
      contiguous = contiguous && strides[i] == expect;
      if (dims[i] != 0 && __builtin_mul_overflow (expect, dims[i], &expect))
        expect = G_MAXINT64;
    }
  guint64 start, end;
  if (!_accel_layout_span_bytes (dims, strides, (guint) t->ndim, esize, &bytes)
      || !g_uint64_checked_add (&start, (guint64) GPOINTER_TO_SIZE (t->data), t->byte_offset)
      || !g_uint64_checked_add (&end, start, bytes) || end > ADDRESS_LIMIT)
    goto too_large;

  *first = (guint8 *) GSIZE_TO_POINTER ((gsize) start);
  if (bytes > 0 && (t->data == NULL || GPOINTER_TO_SIZE (*first) % esize != 0))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "The DLPack tensor's data (%p + %" G_GUINT64_FORMAT " bytes) is not aligned to its "
                   "%" G_GSIZE_FORMAT "-byte %s elements", t->data, (guint64) t->byte_offset, esize,
                   accel_dtype_get_name (dtype));
      return NULL;
    }
  *size = (gsize) bytes;
  return contiguous ? accel_shape_new (dims, (guint) t->ndim)
                    : accel_shape_new_strided (dims, strides, (guint) t->ndim);

too_large:
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
               "The DLPack tensor spans more memory than can be addressed");
  return NULL;
}

/**
 * accel_buffer_new_from_dlpack:
 * @device: the device the buffer is for
 * @tensor: (type gpointer): a DLPack tensor (an #AccelDLManagedTensor; a
 *   pointer as an integer for bindings) from another library
 * @copy: whether the data may, must or must not be copied
 * @error: return location for a #GError
 *
 * Borrows another library's array (a PyTorch or CuPy tensor, a numpy
 * array) as a buffer of @device. Where @device addresses the tensor's
 * memory (host memory on a `cpu` device, memory of the same GPU on a CUDA
 * device with `isolation=none`; see accel_device_get_dlpack_device()) and
 * @copy allows, the buffer is that memory, with the tensor's strides:
 * ops see the producer's data and the producer sees what ops write. The
 * buffer then owns @tensor and calls its deleter when it is finalized.
 *
 * Otherwise the tensor must be in host memory and the data are copied into
 * a new buffer of @device (with the same layout), and @tensor's deleter is
 * called before this returns.
 *
 * Dtypes map as their DLPack codes say (bfloat16 to %ACCEL_DTYPE_BF16,
 * `float8_e4m3fn` to %ACCEL_DTYPE_FP8_E4M3, …); vector lanes, booleans,
 * 16-bit and unsigned 64-bit integers have no Accel dtype. Negative
 * strides are refused, and so is data not aligned to its element size.
 *
 * Returns: (transfer full): the buffer, or %NULL with
 *   %ACCEL_ERROR_DTYPE_UNSUPPORTED, %ACCEL_ERROR_INVALID_ARGUMENT,
 *   %ACCEL_ERROR_NOT_SUPPORTED (the memory is out of the device's reach,
 *   and @copy or the tensor's location rule a copy out),
 *   %ACCEL_ERROR_DEVICE_FAILED or the error of the allocation or transfer;
 *   on failure @tensor is left to the caller, who calls its deleter
 */
AccelBuffer *
accel_buffer_new_from_dlpack (AccelDevice *device,
                              AccelDLManagedTensor *tensor,
                              AccelDLPackCopy copy,
                              GError **error)
{
  g_return_val_if_fail (ACCEL_IS_DEVICE (device), NULL);
  g_return_val_if_fail (tensor != NULL, NULL);
  const AccelDLTensor *t = &tensor->dl_tensor;
  AccelDType dtype;
  gsize size = 0;
  guint8 *first = NULL;
  gint32 dev_type = 0, dev_id = 0;

  if (!dtype_from_dlpack (t->dtype, &dtype, error))
    return NULL;
  g_autoptr(AccelShape) shape = tensor_shape (t, dtype, &size, &first, error);
  if (shape == NULL)
    return NULL;
  if (accel_device_get_state (device) == ACCEL_DEVICE_STATE_FAILED)
    {
      const GError *why = accel_device_get_failure (device);
      g_set_error_literal (error, ACCEL_ERROR, ACCEL_ERROR_DEVICE_FAILED,
                           why ? why->message : "The device has failed");
      return NULL;
    }

  gboolean shared = accel_device_get_dlpack_device (device, &dev_type, &dev_id)
                    && reaches (dev_type, dev_id, t->device.device_type, t->device.device_id);
  if (shared && copy != ACCEL_DLPACK_COPY_ALWAYS)
    return _accel_buffer_new_external (device, dtype, shape, first, size, call_deleter, tensor);

  if (copy == ACCEL_DLPACK_COPY_NEVER)
    {
      if (ACCEL_IS_REMOTE_DEVICE (device))
        set_not_addressable (device, error);
      else
        g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                     "“%s” cannot address memory of DLPack device (%d, %d), so the tensor could only "
                     "be copied", accel_device_get_name (device), t->device.device_type,
                     t->device.device_id);
      return NULL;
    }
  if (!reaches (ACCEL_DLPACK_DEVICE_CPU, 0, t->device.device_type, t->device.device_id))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                   "The tensor is in memory of DLPack device (%d, %d), which “%s” cannot address; "
                   "only host memory is copied", t->device.device_type, t->device.device_id,
                   accel_device_get_name (device));
      return NULL;
    }
  g_autoptr(AccelBuffer) buffer = accel_device_alloc (device, dtype, shape, error);
  if (buffer == NULL || !accel_buffer_write (buffer, first, size, error))
    return NULL;
  call_deleter (tensor);
  return g_steal_pointer (&buffer);
}
