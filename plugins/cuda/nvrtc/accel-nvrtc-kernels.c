/* accel-nvrtc-kernels.c: the kernels of `module-load` and `launch` on the
 * cuda backend, in whichever process owns the context (the application's
 * with isolation=none, the device host's otherwise).
 *
 * Modules are CUDA libraries (cudaLibraryLoadData: loaded into the
 * contexts that use them, independently of a stream), kept in one table of
 * this process by module handle. `module-load` assembles a module's image
 * from its chunks, in order, and loads it with the last one; with `unload`
 * it drops the library. `launch` finds its kernel (cudaLibraryGetKernel,
 * once per device and symbol, with the kernel's attributes and the size of
 * each parameter), checks the op against them (the declared signature
 * against the parameters, the block against the kernel's thread limit, the
 * dynamic shared memory against the device's) and launches on the lane's
 * stream. Every check happens before the launch, so a wrong op leaves the
 * context as it was.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include "accel-nvrtc-private.h"

#include <cuda.h>

#define DEFAULT_SHARED_LIMIT (48 * 1024)

typedef struct {
  cudaKernel_t kernel;
  int max_threads;
  size_t static_shared;
  int shared_optin;             /* the device's largest dynamic + static per block */
  guint shared_set;             /* dynamic shared memory the kernel was allowed */
  guint n_params;
  size_t *param_sizes;
} KernelInfo;

typedef struct {
  guint64 size;
  guint64 received;
  AccelModuleImageKind kind;
  GByteArray *pending;          /* the image while its chunks come */
  cudaLibrary_t library;        /* once loaded */
  GHashTable *kernels;          /* "ordinal:symbol" -> KernelInfo */
} Module;

G_LOCK_DEFINE_STATIC (modules);
static GHashTable *modules;     /* handle -> Module */

static void
kernel_info_free (gpointer data)
{
  KernelInfo *info = data;
  g_free (info->param_sizes);
  g_free (info);
}

static void
module_free (gpointer data)
{
  Module *m = data;
  if (m->pending)
    g_byte_array_unref (m->pending);
  if (m->library)
    (void) cudaLibraryUnload (m->library);
  (void) cudaGetLastError ();
  g_hash_table_unref (m->kernels);
  g_free (m);
}

static GHashTable *
module_table (void)
{
  if (modules == NULL)
    modules = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, module_free);
  return modules;
}

/* Kernels. */

static size_t
kind_size (AccelArgKind kind)
{
  switch (kind)
    {
    case ACCEL_ARG_BUFFER: return sizeof (void *);
    case ACCEL_ARG_INT32: return 4;
    case ACCEL_ARG_INT64: return 8;
    case ACCEL_ARG_FLOAT32: return 4;
    case ACCEL_ARG_FLOAT64: return 8;
    default: return 0;
    }
}

/* What a launch needs to know of @kernel on device @ordinal: its
 * attributes and the size of each parameter (read from the image: they
 * load nothing into the context, load_kernel() does). */
static KernelInfo *
make_kernel_info (cudaKernel_t kernel, int ordinal, GError **error)
{
  struct cudaFuncAttributes attr;
  if (!ACCEL_CUDA_CHECK (cudaFuncGetAttributes (&attr, (const void *) kernel), error))
    return NULL;
  int optin = 0;
  if (!ACCEL_CUDA_CHECK (cudaDeviceGetAttribute (&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, ordinal), error))
    return NULL;

  g_autoptr(GArray) sizes = g_array_new (FALSE, FALSE, sizeof (size_t));
  for (guint i = 0; i <= ACCEL_FUNCTION_MAX_ARGS; i++)
    {
      size_t offset = 0, size = 0;
      if (cudaFuncGetParamInfo ((const void *) kernel, i, &offset, &size) != cudaSuccess)
        {
          (void) cudaGetLastError ();   /* the index past the last parameter */
          break;
        }
      g_array_append_val (sizes, size);
    }

  KernelInfo *info = g_new0 (KernelInfo, 1);
  info->kernel = kernel;
  info->max_threads = attr.maxThreadsPerBlock;
  info->static_shared = attr.sharedSizeBytes;
  info->shared_optin = optin;
  info->n_params = sizes->len;
  info->param_sizes = (size_t *) g_array_free (g_steal_pointer (&sizes), FALSE);
  return info;
}

static char *
kernel_key (int ordinal, const char *symbol, char *stack, gsize stack_size)
{
  if (g_snprintf (stack, stack_size, "%d:%s", ordinal, symbol) < (int) stack_size)
    return NULL;
  return g_strdup_printf ("%d:%s", ordinal, symbol);
}

/* module-load */

static gboolean
bad_chunk (GError **error, AccelModuleLoad *op, const char *why)
{
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
               "module-load: chunk at %" G_GUINT64_FORMAT " of module %" G_GUINT64_FORMAT ": %s",
               op->image_offset, op->module, why);
  return FALSE;
}

/* cuKernelGetFunction, which the runtime API lacks; %NULL on a driver
 * without it. */
typedef CUresult (*KernelGetFunction) (CUfunction *function, CUkernel kernel);

static KernelGetFunction
kernel_get_function (void)
{
  static gsize once = 0;
  static KernelGetFunction fn;

  if (g_once_init_enter (&once))
    {
      void *p = NULL;
      enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
      if (cudaGetDriverEntryPointByVersion ("cuKernelGetFunction", &p, 12000, cudaEnableDefault, &found)
          != cudaSuccess || found != cudaDriverEntryPointSuccess)
        {
          (void) cudaGetLastError ();
          p = NULL;
        }
      fn = (KernelGetFunction) p;
      g_once_init_leave (&once, 1);
    }
  return fn;
}

/* Loads @kernel into the current context. Under lazy module loading (the
 * driver's default since CUDA 12.2) cudaLibraryLoadData only reads the
 * image, and the attribute queries of make_kernel_info() answer from it
 * for the device without loading anything: machine code for another
 * architecture (an sm_80 cubin on sm_90) passed them all and failed only
 * at its first launch. Asking for the kernel's function in the context
 * loads (or JIT-compiles) it, and fails now for an image the device cannot
 * run (CUDA_ERROR_NO_BINARY_FOR_GPU). */
static gboolean
load_kernel (cudaKernel_t kernel, const char *symbol, GError **error)
{
  KernelGetFunction get = kernel_get_function ();
  CUfunction function = NULL;

  if (get == NULL)
    return TRUE;   /* the launch reports an image the device cannot run */
  CUresult result = get (&function, (CUkernel) kernel);
  if (result == CUDA_SUCCESS)
    return TRUE;
  /* The runtime's codes are the driver's for what a load returns. */
  cudaError_t status = (cudaError_t) result;
  if (accel_cuda_error_is_sticky (status))
    return accel_cuda_check (status, "cuKernelGetFunction", error);
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "kernel “%s”: %s (CUresult %d, %s)", symbol,
               cudaGetErrorString (status), (int) result, cudaGetErrorName (status));
  return FALSE;
}

/* Makes the kernels of a freshly loaded module known on device @ordinal,
 * which also loads them into its context (load_kernel()): nothing is left
 * to load when a launch is captured into a CUDA graph, and an image the
 * device cannot run is refused now. */
static gboolean
prepare_kernels (Module *m, int ordinal, GError **error)
{
  unsigned int count = 0;
  if (!ACCEL_CUDA_CHECK (cudaLibraryGetKernelCount (&count, m->library), error))
    return FALSE;
  g_autofree cudaKernel_t *kernels = g_new0 (cudaKernel_t, MAX (count, 1));
  if (count > 0 && !ACCEL_CUDA_CHECK (cudaLibraryEnumerateKernels (kernels, count, m->library), error))
    return FALSE;
  for (unsigned int i = 0; i < count; i++)
    {
      const char *symbol = NULL;
      if (!ACCEL_CUDA_CHECK (cudaFuncGetName (&symbol, (const void *) kernels[i]), error)
          || !load_kernel (kernels[i], symbol, error))
        return FALSE;
      KernelInfo *info = make_kernel_info (kernels[i], ordinal, error);
      if (info == NULL)
        return FALSE;
      char stack_key[256];
      g_autofree char *heap_key = kernel_key (ordinal, symbol, stack_key, sizeof stack_key);
      g_hash_table_replace (m->kernels, g_strdup (heap_key ? heap_key : stack_key), info);
    }
  return TRUE;
}

/* The architecture a cubin's ELF header names (80 for sm_80), or 0 where
 * the header is not one this knows: CUDA's own OS ABI, version 7, keeps it
 * in the low byte of e_flags; the OS ABI of CUDA 13's toolchain
 * (ELFOSABI 65, version 8) in the second byte. */
static int
cubin_arch (const guint8 *image, gsize size)
{
  if (size < 52 || memcmp (image, "\177ELF", 4) != 0 || image[4] != 2 /* ELFCLASS64 */ || image[5] != 1)
    return 0;
  guint32 flags = (guint32) image[48] | (guint32) image[49] << 8 | (guint32) image[50] << 16
                  | (guint32) image[51] << 24;
  if (image[7] == 51 && image[8] == 7)
    return flags & 0xff;
  if (image[7] == 65 && image[8] == 8)
    return (flags >> 8) & 0xff;
  return 0;
}

/* Machine code for X.y runs on a device of X.z with z >= y only (CUDA's
 * binary compatibility); the driver may accept other code and fail at the
 * first launch, so it is refused here, naming both. */
static gboolean
check_cubin_arch (Module *m, guint64 handle, int ordinal, GError **error)
{
  int arch = cubin_arch (m->pending->data, m->pending->len);
  int major = 0, minor = 0;
  if (arch == 0 || cudaDeviceGetAttribute (&major, cudaDevAttrComputeCapabilityMajor, ordinal) != cudaSuccess
      || cudaDeviceGetAttribute (&minor, cudaDevAttrComputeCapabilityMinor, ordinal) != cudaSuccess)
    {
      (void) cudaGetLastError ();
      return TRUE;
    }
  if (arch / 10 == major && arch % 10 <= minor)
    return TRUE;
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
               "module-load: the device cannot load module %" G_GUINT64_FORMAT ": it is machine code for sm_%d, "
               "and the device has compute capability %d.%d", handle, arch, major, minor);
  return FALSE;
}

static gboolean
load_library (Module *m, guint64 handle, int ordinal, GError **error)
{
  if (m->kind == ACCEL_MODULE_IMAGE_CUBIN && !check_cubin_arch (m, handle, ordinal, error))
    {
      g_clear_pointer (&m->pending, g_byte_array_unref);
      return FALSE;
    }
  if (m->kind == ACCEL_MODULE_IMAGE_PTX)
    g_byte_array_append (m->pending, (const guint8 *) "", 1);   /* PTX is loaded as a C string */
  cudaError_t status = cudaLibraryLoadData (&m->library, m->pending->data, NULL, NULL, 0, NULL, NULL, 0);
  g_clear_pointer (&m->pending, g_byte_array_unref);
  if (status == cudaSuccess)
    {
      GError *local = NULL;
      if (prepare_kernels (m, ordinal, &local))
        return TRUE;
      if (local->code == ACCEL_ERROR_CONTEXT_POISONED)
        {
          g_propagate_error (error, local);
          return FALSE;
        }
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "module-load: the device cannot run module %" G_GUINT64_FORMAT ": %s", handle, local->message);
      g_error_free (local);
      return FALSE;
    }
  m->library = NULL;
  if (accel_cuda_error_is_sticky (status))
    return accel_cuda_check (status, "cudaLibraryLoadData", error);
  (void) cudaGetLastError ();
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
               "module-load: the device cannot load module %" G_GUINT64_FORMAT ": %s (%s)", handle,
               cudaGetErrorString (status), cudaGetErrorName (status));
  return FALSE;
}

static gboolean
module_load_run (AccelOp *op, gpointer context, GError **error)
{
  AccelModuleLoad *self = ACCEL_MODULE_LOAD (op);
  gboolean ok = TRUE;

  G_LOCK (modules);
  GHashTable *table = module_table ();
  if (self->unload)
    {
      /* Kernels of the module may still run: the device drains first. */
      if (g_hash_table_contains (table, &self->module))
        {
          (void) cudaDeviceSynchronize ();
          g_hash_table_remove (table, &self->module);
        }
      G_UNLOCK (modules);
      return TRUE;
    }

  gsize len = g_bytes_get_size (self->chunk);
  Module *m = g_hash_table_lookup (table, &self->module);
  if (self->image_offset == 0)
    {
      /* A first chunk starts the module over (a load that failed half-way). */
      m = g_new0 (Module, 1);
      m->size = self->image_size;
      m->kind = self->image_kind;
      m->pending = g_byte_array_sized_new (MIN (self->image_size, 64u << 20));
      m->kernels = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, kernel_info_free);
      guint64 *key = g_new (guint64, 1);
      *key = self->module;
      g_hash_table_replace (table, key, m);
    }
  else if (m == NULL || m->pending == NULL)
    ok = bad_chunk (error, self, "no earlier chunk of the module came");
  else if (m->received != self->image_offset || m->size != self->image_size || m->kind != self->image_kind)
    ok = bad_chunk (error, self, "it does not follow the chunks that came before");

  if (ok)
    {
      g_byte_array_append (m->pending, g_bytes_get_data (self->chunk, NULL), len);
      m->received += len;
      if (m->received == m->size)
        ok = load_library (m, self->module, accel_cuda_lane_get_ordinal (context), error);
      if (!ok)
        g_hash_table_remove (table, &self->module);
    }
  G_UNLOCK (modules);
  return ok;
}

/* launch */

/* Under the modules lock. Every kernel of a module is known once it is
 * loaded on a device (see prepare_kernels()); another device of this
 * process finds them here on first use. */
static KernelInfo *
kernel_info (Module *m, AccelFunction *fn, int ordinal, GError **error)
{
  const char *symbol = accel_function_get_symbol (fn);
  char stack_key[256];
  g_autofree char *heap_key = kernel_key (ordinal, symbol, stack_key, sizeof stack_key);
  const char *key = heap_key ? heap_key : stack_key;
  KernelInfo *info = g_hash_table_lookup (m->kernels, key);
  if (G_LIKELY (info != NULL))
    return info;

  cudaKernel_t kernel = NULL;
  cudaError_t status = cudaLibraryGetKernel (&kernel, m->library, symbol);
  if (status != cudaSuccess)
    {
      if (accel_cuda_error_is_sticky (status))
        {
          accel_cuda_check (status, "cudaLibraryGetKernel", error);
          return NULL;
        }
      (void) cudaGetLastError ();
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "launch: the module has no kernel “%s”%s (%s)", accel_function_get_name (fn),
                   strcmp (symbol, accel_function_get_name (fn)) != 0 ? " at its lowered name" : "",
                   cudaGetErrorName (status));
      return NULL;
    }
  info = make_kernel_info (kernel, ordinal, error);
  if (info)
    g_hash_table_insert (m->kernels, g_strdup (key), info);
  return info;
}

/* The checks against the compiled kernel and the device. */
static gboolean
check_launch (AccelLaunch *self, KernelInfo *info, const AccelLaunchArg *args, guint n_args, int ordinal,
              GError **error)
{
  AccelFunction *fn = self->function;
  const char *name = accel_function_get_name (fn);

  /* A kernel whose image lists no parameters may be one without the
   * parameter table (older images): then the signature cannot be checked. */
  if (info->n_params == 0 && n_args > 0)
    g_debug ("launch: kernel “%s” lists no parameters; its signature is taken as declared", name);
  else if (info->n_params != n_args)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "launch: kernel “%s” has %u parameters, but its signature declares %u", name,
                   info->n_params, n_args);
      return FALSE;
    }
  for (guint i = 0; i < MIN (n_args, info->n_params); i++)
    if (info->param_sizes[i] != kind_size (args[i].kind))
      {
        g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                     "launch: parameter %u of kernel “%s” has %" G_GSIZE_FORMAT " bytes; the declared %s has %"
                     G_GSIZE_FORMAT, i, name, (gsize) info->param_sizes[i], accel_arg_kind_get_name (args[i].kind),
                     (gsize) kind_size (args[i].kind));
        return FALSE;
      }
  guint64 threads = (guint64) self->block_x * self->block_y * self->block_z;
  if (threads > (guint64) info->max_threads)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "launch: a block of %u×%u×%u is %" G_GUINT64_FORMAT " threads; kernel “%s” runs at most %d "
                   "per block on cuda:%d", self->block_x, self->block_y, self->block_z, threads, name,
                   info->max_threads, ordinal);
      return FALSE;
    }
  if ((guint64) self->shared_memory + info->static_shared > (guint64) info->shared_optin)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "launch: %u bytes of dynamic shared memory (and %" G_GSIZE_FORMAT " static) exceed the %d "
                   "bytes a block may have on cuda:%d", self->shared_memory, (gsize) info->static_shared,
                   info->shared_optin, ordinal);
      return FALSE;
    }
  if (self->shared_memory > DEFAULT_SHARED_LIMIT && self->shared_memory > info->shared_set)
    {
      if (!ACCEL_CUDA_CHECK (cudaFuncSetAttribute ((const void *) info->kernel,
                                                   cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                   (int) self->shared_memory), error))
        return FALSE;
      info->shared_set = self->shared_memory;
    }
  return TRUE;
}

static gboolean
launch_run (AccelOp *op, gpointer context, GError **error)
{
  AccelLaunch *self = ACCEL_LAUNCH (op);
  AccelCudaLane *lane = context;
  AccelFunction *fn = self->function;
  int ordinal = accel_cuda_lane_get_ordinal (lane);
  guint n_args;
  const AccelLaunchArg *args = accel_launch_peek_args (self, &n_args);
  guint64 handle = accel_function_get_module_handle (fn);

  G_LOCK (modules);
  Module *m = modules ? g_hash_table_lookup (modules, &handle) : NULL;
  KernelInfo *info = NULL;
  if (m == NULL || m->library == NULL)
    g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                 "launch: module %" G_GUINT64_FORMAT " of kernel “%s” is not loaded on cuda:%d", handle,
                 accel_function_get_name (fn), ordinal);
  else
    info = kernel_info (m, fn, ordinal, error);
  gboolean ok = info != NULL && check_launch (self, info, args, n_args, ordinal, error);
  cudaKernel_t kernel = info ? info->kernel : NULL;
  G_UNLOCK (modules);
  if (!ok)
    return FALSE;

  union {
    void *ptr;
    gint32 i32;
    gint64 i64;
    float f32;
    double f64;
  } values[ACCEL_FUNCTION_MAX_ARGS];
  void *params[ACCEL_FUNCTION_MAX_ARGS];
  for (guint i = 0; i < n_args; i++)
    {
      switch (args[i].kind)
        {
        case ACCEL_ARG_BUFFER: values[i].ptr = accel_buffer_get_data (args[i].value.buffer); break;
        case ACCEL_ARG_INT32: values[i].i32 = args[i].value.i32; break;
        case ACCEL_ARG_INT64: values[i].i64 = args[i].value.i64; break;
        case ACCEL_ARG_FLOAT32: values[i].f32 = args[i].value.f32; break;
        case ACCEL_ARG_FLOAT64: values[i].f64 = args[i].value.f64; break;
        }
      params[i] = &values[i];
    }
  dim3 grid = { self->grid_x, self->grid_y, self->grid_z };
  dim3 block = { self->block_x, self->block_y, self->block_z };
  return ACCEL_CUDA_CHECK (cudaLaunchKernel ((const void *) kernel, grid, block, params, self->shared_memory,
                                             accel_cuda_lane_get_stream (lane)),
                           error);
}

static const AccelKernelVTable module_load_kernel = { .run = module_load_run };
static const AccelKernelVTable launch_kernel = { .run = launch_run };

void
accel_nvrtc_register_kernels (AccelPlugin *plugin)
{
  accel_plugin_register_kernel (plugin, "module-load", ACCEL_CUDA_BACKEND_NAME, 100, &module_load_kernel);
  accel_plugin_register_kernel (plugin, "launch", ACCEL_CUDA_BACKEND_NAME, 100, &launch_kernel);
}
