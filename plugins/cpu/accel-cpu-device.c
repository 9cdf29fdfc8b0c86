/* accel-cpu-device.c: the `cpu:0` device.
 *
 * Device memory is host memory, 64-byte aligned. Each context (one per
 * generation) records every block it handed out, so closing it after a
 * fault frees them all, as losing a GPU context would. `ACCEL_CPU_MEMORY_LIMIT`
 * (bytes; K, M and G suffixes accepted) caps what the device hands out, so
 * out-of-memory handling can be exercised without exhausting the machine.
 *
 * A block lent to another library (accel_buffer_to_dlpack()) is detached
 * from its context: it survives the context, still counts towards the
 * limit, and is freed when its buffer goes.
 *
 * Kernels run synchronously on the device thread, splitting large work over
 * the shared CPU thread pool.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "accel-cpu-device.h"
#include "accel-cpu-parallel.h"

typedef struct {
  GHashTable *blocks;     /* memory -> size */
  guint64 used;
} CpuContext;

/**
 * AccelCpuDevice:
 *
 * The device of the CPU backend.
 */
struct _AccelCpuDevice {
  AccelDevice parent_instance;

  /* The runtime calls open/close_context on the device thread and
   * mem_alloc/mem_free from any thread; query_memory may come at any time.
   * One lock covers the context and its accounting: allocation is not a
   * hot path. */
  GMutex lock;
  CpuContext *ctx;
  guint64 limit;          /* 0: none */
  guint64 detached;       /* bytes of blocks detached from their context */
  AccelCpuExec exec;      /* what kernels get as their context */
};

G_DEFINE_FINAL_TYPE (AccelCpuDevice, accel_cpu_device, ACCEL_TYPE_DEVICE)

/* n-threads is hand-written (id 1); the table's properties come after it. */
enum {
  PROP_0,
  PROP_N_THREADS,
};

static const AccelPropertyField cpu_device_fields[] = {
  /**
   * AccelCpuDevice:memory-limit:
   *
   * The cap on device memory from `ACCEL_CPU_MEMORY_LIMIT`, in bytes; 0 for none.
   */
  ACCEL_FIELD_UINT64 (AccelCpuDevice, limit, "memory-limit", "Cap on device memory in bytes (0: none)",
                      0, G_MAXUINT64, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS),
};

static guint64
parse_limit (const char *text)
{
  if (text == NULL || *text == '\0')
    return 0;

  char *end = NULL;
  guint64 v = g_ascii_strtoull (text, &end, 10);
  guint64 unit = 1;
  if (end && (*end == 'K' || *end == 'k'))
    unit = G_GUINT64_CONSTANT (1) << 10, end++;
  else if (end && (*end == 'M' || *end == 'm'))
    unit = G_GUINT64_CONSTANT (1) << 20, end++;
  else if (end && (*end == 'G' || *end == 'g'))
    unit = G_GUINT64_CONSTANT (1) << 30, end++;
  if (end == text || (end && *end != '\0') || v > G_MAXUINT64 / unit)
    {
      g_warning ("cpu: ignoring ACCEL_CPU_MEMORY_LIMIT=“%s”: not a byte count", text);
      return 0;
    }
  return v * unit;
}

static gboolean
accel_cpu_device_open_context (AccelDevice *device, GError **error)
{
  AccelCpuDevice *self = ACCEL_CPU_DEVICE (device);
  CpuContext *ctx = g_new0 (CpuContext, 1);

  ctx->blocks = g_hash_table_new (NULL, NULL);
  g_mutex_lock (&self->lock);
  g_assert (self->ctx == NULL);
  self->ctx = ctx;
  g_mutex_unlock (&self->lock);
  return TRUE;
}

static void
accel_cpu_device_close_context (AccelDevice *device)
{
  AccelCpuDevice *self = ACCEL_CPU_DEVICE (device);
  GHashTableIter iter;
  gpointer memory;

  g_mutex_lock (&self->lock);
  CpuContext *ctx = g_steal_pointer (&self->ctx);
  g_mutex_unlock (&self->lock);
  if (ctx == NULL)
    return;
  g_hash_table_iter_init (&iter, ctx->blocks);
  while (g_hash_table_iter_next (&iter, &memory, NULL))
    free (memory);
  g_hash_table_unref (ctx->blocks);
  g_free (ctx);
}

static gpointer
accel_cpu_device_mem_alloc (AccelDevice *device, gsize size, GError **error)
{
  AccelCpuDevice *self = ACCEL_CPU_DEVICE (device);
  gpointer memory = NULL;

  g_mutex_lock (&self->lock);
  CpuContext *ctx = self->ctx;
  if (ctx == NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DEVICE_FAILED,
                   "%s: no open context to allocate in", accel_device_get_name (device));
      g_mutex_unlock (&self->lock);
      return NULL;
    }
  if (self->limit != 0 && (size > self->limit || ctx->used + self->detached > self->limit - size))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_OUT_OF_MEMORY,
                   "%s: allocating %" G_GSIZE_FORMAT " bytes would exceed ACCEL_CPU_MEMORY_LIMIT=%"
                   G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT " bytes in use)",
                   accel_device_get_name (device), size, self->limit, ctx->used + self->detached);
      g_mutex_unlock (&self->lock);
      return NULL;
    }
  /* Round up so that the size is a multiple of the alignment, as
   * aligned_alloc wants, and the tail of a vector loop stays in bounds. */
  gsize rounded = (MAX (size, 1) + 63) & ~(gsize) 63;
  if (rounded < size || posix_memalign (&memory, 64, rounded) != 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_OUT_OF_MEMORY,
                   "%s: the system could not allocate %" G_GSIZE_FORMAT " bytes",
                   accel_device_get_name (device), size);
      g_mutex_unlock (&self->lock);
      return NULL;
    }
  g_hash_table_insert (ctx->blocks, memory, GSIZE_TO_POINTER (size));
  ctx->used += size;
  g_mutex_unlock (&self->lock);
  return memory;
}

static void
accel_cpu_device_mem_free (AccelDevice *device, gpointer memory, gsize size)
{
  AccelCpuDevice *self = ACCEL_CPU_DEVICE (device);
  gpointer stored;

  if (memory == NULL)
    return;
  g_mutex_lock (&self->lock);
  /* Memory this context does not know went with an older one. */
  CpuContext *ctx = self->ctx;
  if (ctx != NULL && g_hash_table_steal_extended (ctx->blocks, memory, NULL, &stored))
    {
      ctx->used -= GPOINTER_TO_SIZE (stored);
      free (memory);
    }
  g_mutex_unlock (&self->lock);
}

static gboolean
accel_cpu_device_get_dlpack_device (AccelDevice *device, gint32 *device_type, gint32 *device_id)
{
  *device_type = ACCEL_DLPACK_DEVICE_CPU;
  *device_id = 0;
  return TRUE;
}

static gboolean
accel_cpu_device_detach_memory (AccelDevice *device, gpointer memory, gsize size)
{
  AccelCpuDevice *self = ACCEL_CPU_DEVICE (device);
  gpointer stored;
  gboolean found = FALSE;

  g_mutex_lock (&self->lock);
  CpuContext *ctx = self->ctx;
  if (ctx != NULL && g_hash_table_steal_extended (ctx->blocks, memory, NULL, &stored))
    {
      ctx->used -= GPOINTER_TO_SIZE (stored);
      self->detached += GPOINTER_TO_SIZE (stored);
      found = TRUE;
    }
  g_mutex_unlock (&self->lock);
  return found;
}

static void
accel_cpu_device_free_detached_memory (AccelDevice *device, gpointer memory, gsize size)
{
  AccelCpuDevice *self = ACCEL_CPU_DEVICE (device);

  g_mutex_lock (&self->lock);
  self->detached -= size;
  g_mutex_unlock (&self->lock);
  free (memory);
}

static void
copy_host (AccelWork *work, gboolean to_device)
{
  AccelBuffer *buffer = accel_work_get_buffer (work);
  gsize host_size = 0;
  guint8 *host = accel_work_get_host_data (work, &host_size);
  gsize size = MIN (host_size, accel_buffer_get_size (buffer));

  if (to_device)
    memcpy (accel_buffer_get_data (buffer), host, size);
  else
    memcpy (host, accel_buffer_get_data (buffer), size);
}

static void
accel_cpu_device_execute (AccelDevice *device, AccelWork *work)
{
  AccelCpuDevice *self = ACCEL_CPU_DEVICE (device);
  GError *error = NULL;

  switch (accel_work_get_kind (work))
    {
    case ACCEL_WORK_OP:
      {
        const AccelKernel *kernel = accel_work_get_kernel (work);
        AccelOp *op = accel_work_get_op (work);
        if (kernel == NULL)
          error = g_error_new (ACCEL_ERROR, ACCEL_ERROR_NO_KERNEL,
                               "%s: no kernel was chosen for op “%s”",
                               accel_device_get_name (device), accel_op_get_type_name (op));
        else if (!accel_kernel_run (kernel, op, &self->exec, &error) && error == NULL)
          error = g_error_new (ACCEL_ERROR, ACCEL_ERROR_FAILED,
                               "%s: the kernel of op “%s” failed without saying why",
                               accel_device_get_name (device), accel_op_get_type_name (op));
      }
      break;
    case ACCEL_WORK_WRITE:
      copy_host (work, TRUE);
      break;
    case ACCEL_WORK_READ:
      copy_host (work, FALSE);
      break;
    case ACCEL_WORK_ZERO:
      {
        AccelBuffer *buffer = accel_work_get_buffer (work);
        memset (accel_buffer_get_data (buffer), 0, accel_buffer_get_size (buffer));
      }
      break;
    default:
      error = g_error_new (ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                           "%s: unknown kind of work %d", accel_device_get_name (device),
                           accel_work_get_kind (work));
    }
  accel_device_complete_work (device, work, error);
}

static void
accel_cpu_device_query_memory (AccelDevice *device, guint64 *total, guint64 *free_bytes)
{
  AccelCpuDevice *self = ACCEL_CPU_DEVICE (device);
  long page = sysconf (_SC_PAGESIZE);
  long phys = sysconf (_SC_PHYS_PAGES);
  long avail = sysconf (_SC_AVPHYS_PAGES);
  guint64 sys_total = page > 0 && phys > 0 ? (guint64) page * (guint64) phys : 0;
  guint64 sys_free = page > 0 && avail > 0 ? (guint64) page * (guint64) avail : 0;

  if (self->limit == 0)
    {
      *total = sys_total;
      *free_bytes = sys_free;
      return;
    }

  guint64 used = 0;
  g_mutex_lock (&self->lock);
  used = self->detached;
  if (self->ctx != NULL)
    used += self->ctx->used;
  g_mutex_unlock (&self->lock);
  *total = self->limit;
  *free_bytes = MIN (self->limit - MIN (used, self->limit), sys_free ? sys_free : G_MAXUINT64);
}

static void
accel_cpu_device_finalize (GObject *object)
{
  AccelCpuDevice *self = ACCEL_CPU_DEVICE (object);

  /* The runtime closes the context before the device goes; this is for a
   * device that was never opened or shut down. */
  accel_cpu_device_close_context (ACCEL_DEVICE (self));
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (accel_cpu_device_parent_class)->finalize (object);
}

/* n-threads is an int the kernels read atomically, set as a guint. */
static void
accel_cpu_device_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  AccelCpuDevice *self = ACCEL_CPU_DEVICE (object);

  if (prop_id != PROP_N_THREADS)
    {
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      return;
    }
  gint n = (gint) g_value_get_uint (value);
  if (g_atomic_int_get (&self->exec.n_threads) != n)
    {
      g_atomic_int_set (&self->exec.n_threads, n);
      g_object_notify_by_pspec (object, pspec);
    }
}

static void
accel_cpu_device_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  AccelCpuDevice *self = ACCEL_CPU_DEVICE (object);

  if (prop_id == PROP_N_THREADS)
    g_value_set_uint (value, (guint) g_atomic_int_get (&self->exec.n_threads));
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
accel_cpu_device_class_init (AccelCpuDeviceClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AccelDeviceClass *device_class = ACCEL_DEVICE_CLASS (klass);

  object_class->set_property = accel_cpu_device_set_property;
  object_class->get_property = accel_cpu_device_get_property;
  object_class->finalize = accel_cpu_device_finalize;

  device_class->open_context = accel_cpu_device_open_context;
  device_class->close_context = accel_cpu_device_close_context;
  device_class->mem_alloc = accel_cpu_device_mem_alloc;
  device_class->mem_free = accel_cpu_device_mem_free;
  device_class->execute = accel_cpu_device_execute;
  device_class->query_memory = accel_cpu_device_query_memory;
  device_class->get_dlpack_device = accel_cpu_device_get_dlpack_device;
  device_class->detach_memory = accel_cpu_device_detach_memory;
  device_class->free_detached_memory = accel_cpu_device_free_detached_memory;

  /**
   * AccelCpuDevice:n-threads:
   *
   * How many threads one kernel may use (the device thread included);
   * 0 means `ACCEL_CPU_THREADS`, or one per processor. Results do not
   * depend on it. BLAS and FFT calls keep their library's own threading.
   */
  g_object_class_install_property (object_class, PROP_N_THREADS,
                                   g_param_spec_uint ("n-threads", NULL, "Threads per kernel (0: one per processor)",
                                                      0, 1024, 0,
                                                      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS
                                                        | G_PARAM_EXPLICIT_NOTIFY));
  accel_object_class_install_fields (object_class, cpu_device_fields, G_N_ELEMENTS (cpu_device_fields));
}

static void
accel_cpu_device_init (AccelCpuDevice *self)
{
  g_mutex_init (&self->lock);
  self->limit = parse_limit (g_getenv ("ACCEL_CPU_MEMORY_LIMIT"));
  self->exec.device = self;
}
