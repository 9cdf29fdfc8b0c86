/* accel-module.c: run-time compiled code on a device.
 *
 * A module is compiled where the application runs and loaded where the
 * device's context lives. Compilation is asked of the backend's module
 * compiler, an actor a plugin registers (for CUDA: NVRTC, with a disk
 * cache), on its own thread: never on a device's dispatch thread. Loading
 * is an op, `module-load`, submitted like any other, so it reaches a
 * device host process in the same ordered stream as the ops that use the
 * module; the image travels in chunks small enough for the host channel.
 * The module is named everywhere by a handle, unique in this process, as
 * buffers are. When the device rebuilds its context (a new host process),
 * it loads every live module again before it serves anything queued; when
 * the module goes, a `module-load` op with `unload` set frees its code.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-module-private.h"

#define PROGRAM_NAME "module.cu"

/**
 * AccelModule:
 *
 * Code compiled at run time for one device and loaded into its context, as
 * CuPy's `RawModule`: made from CUDA source (accel_module_new_from_source(),
 * compiled by the backend's module compiler, with a disk cache) or from a
 * cubin, PTX or fatbin image (accel_module_new_from_image()). Its kernels
 * are #AccelFunction objects (accel_module_get_function()) that `launch`
 * ops (#AccelLaunch) run.
 *
 * ```c
 * const char *src = "extern \"C\" __global__ void scale (float *x, float a, int n)"
 *                   "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; }";
 * g_autoptr(AccelModule) module = accel_module_new_from_source (device, src, NULL, NULL, NULL, &error);
 * g_autoptr(AccelFunction) scale = accel_module_get_function (module, "scale", "buffer, float32, int32", &error);
 * ```
 *
 * A module survives a rebuild of its device's context: the device loads it
 * again. Immutable once made; any thread.
 */
struct _AccelModule {
  GObject parent_instance;

  AccelDevice *device;
  guint64 handle;
  GBytes *image;
  AccelModuleImageKind image_kind;
  GHashTable *lowered;          /* name expression -> symbol */
  char *log;
  char *target;
  gboolean compiled;
  gboolean loaded;
};

G_DEFINE_FINAL_TYPE (AccelModule, accel_module, G_TYPE_OBJECT)

static guint64 next_handle;

/* Compilers. */

G_LOCK_DEFINE_STATIC (compilers);

static void
compiler_free (gpointer data)
{
  AccelActor *actor = data;
  accel_actor_stop (actor);
  g_object_unref (actor);
}

/**
 * accel_module_get_compiler:
 * @system: a system
 * @backend: a backend name (`cuda`)
 * @error: return location for a #GError
 *
 * The module compiler of @backend (#AccelBackendClass.module_compiler): an
 * actor on a thread of its own, made on first use and kept by @system. It
 * answers messages of type %ACCEL_MODULE_COMPILE_REQUEST_TYPE with an
 * %ACCEL_MODULE_COMPILE_REPLY_TYPE; accel_module_new_from_source() uses
 * it, and it may be asked directly, also for an architecture with no
 * device on this machine.
 *
 * Returns: (transfer full): the compiler, or %NULL with
 *   %ACCEL_ERROR_NOT_SUPPORTED if the backend has none
 */
AccelActor *
accel_module_get_compiler (AccelSystem *system, const char *backend, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_SYSTEM (system), NULL);
  g_return_val_if_fail (backend != NULL, NULL);

  AccelBackend *be = accel_system_get_backend (system, backend, error);
  if (be == NULL)
    return NULL;
  const char *type_name = ACCEL_BACKEND_GET_CLASS (be)->module_compiler;
  if (type_name == NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                   "Backend “%s” runs no run-time compiled modules", backend);
      return NULL;
    }

  g_autofree char *key = g_strconcat ("accel-module-compiler:", type_name, NULL);
  G_LOCK (compilers);
  AccelActor *actor = g_object_get_data (G_OBJECT (system), key);
  if (actor)
    {
      g_object_ref (actor);
      G_UNLOCK (compilers);
      return actor;
    }
  g_autofree char *thread = g_strdup_printf ("accel-%s-compile", backend);
  g_autoptr(AccelDispatcher) dispatcher = accel_dispatcher_new (thread);
  actor = accel_system_spawn (system, type_name, error, "system", system, "dispatcher", dispatcher, NULL);
  if (actor)
    g_object_set_data_full (G_OBJECT (system), key, g_object_ref (actor), compiler_free);
  G_UNLOCK (compilers);
  return actor;
}

static AccelActor *
device_compiler (AccelDevice *device, GError **error)
{
  AccelSystem *system = accel_device_get_system (device);
  if (system == NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                   "Device “%s” belongs to no system", accel_device_get_name (device));
      return NULL;
    }
  GError *local = NULL;
  AccelActor *compiler = accel_module_get_compiler (system, accel_device_get_backend_name (device), &local);
  if (compiler == NULL)
    {
      g_set_error (error, ACCEL_ERROR, local->code, "Device “%s” cannot compile modules: %s",
                   accel_device_get_name (device), local->message);
      g_error_free (local);
    }
  return compiler;
}

static GVariant *
compile_request (AccelDevice *device, const char *source, const char * const *options,
                 const char * const *name_expressions)
{
  const char * const none[] = { NULL };
  return g_variant_new ("(ss^as^ass)", source, PROGRAM_NAME, options ? options : none,
                        name_expressions ? name_expressions : none, accel_device_get_name (device));
}

/* Module objects. */

static AccelModule *
module_new (AccelDevice *device, GBytes *image, AccelModuleImageKind kind)
{
  AccelModule *self = g_object_new (ACCEL_TYPE_MODULE, NULL);
  self->device = g_object_ref (device);
  self->handle = __atomic_add_fetch (&next_handle, 1, __ATOMIC_RELAXED);
  self->image = g_bytes_ref (image);
  self->image_kind = kind;
  return self;
}

static AccelModule *
module_from_reply (AccelDevice *device, GVariant *reply, GError **error)
{
  if (reply == NULL || !g_variant_is_of_type (reply, ACCEL_MODULE_COMPILE_REPLY_TYPE))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_FAILED,
                   "The module compiler of “%s” answered with %s, not %s", accel_device_get_name (device),
                   reply ? g_variant_get_type_string (reply) : "nothing",
                   (const char *) ACCEL_MODULE_COMPILE_REPLY_TYPE);
      return NULL;
    }
  g_autoptr(GVariant) image_v = g_variant_get_child_value (reply, 0);
  g_autoptr(GBytes) image = g_variant_get_data_as_bytes (image_v);
  guint32 kind;
  g_autoptr(GVariantIter) lowered = NULL;
  const char *log, *target;
  gboolean compiled;
  g_variant_get (reply, "(@ayua{ss}&sb&s)", NULL, &kind, &lowered, &log, &compiled, &target);
  if (kind > ACCEL_MODULE_IMAGE_FATBIN || g_bytes_get_size (image) == 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_FAILED, "The module compiler gave no usable image");
      return NULL;
    }
  AccelModule *self = module_new (device, image, kind);
  const char *expr, *symbol;
  while (g_variant_iter_next (lowered, "{&s&s}", &expr, &symbol))
    g_hash_table_insert (self->lowered, g_strdup (expr), g_strdup (symbol));
  self->log = g_strdup (log);
  self->target = g_strdup (target);
  self->compiled = compiled;
  return self;
}

/* The ops that load @self's image into its device's context, in chunks
 * that fit the channel to a device host. */
static GPtrArray *
load_ops (GObject *object)
{
  AccelModule *self = ACCEL_MODULE (object);
  GPtrArray *ops = g_ptr_array_new_with_free_func (g_object_unref);
  gsize size = g_bytes_get_size (self->image);

  for (gsize off = 0; off < size; off += ACCEL_MODULE_LOAD_CHUNK)
    {
      g_autoptr(GBytes) chunk = g_bytes_new_from_bytes (self->image, off, MIN (ACCEL_MODULE_LOAD_CHUNK, size - off));
      g_ptr_array_add (ops, accel_module_load_new (self->handle, self->image_kind, size, off, chunk));
    }
  return ops;
}

static void
module_loaded (AccelModule *self)
{
  self->loaded = TRUE;
  _accel_device_add_context_resource (self->device, G_OBJECT (self), load_ops);
}

static gboolean
load_sync (AccelModule *self, GCancellable *cancellable, GError **error)
{
  g_autoptr(GPtrArray) ops = load_ops (G_OBJECT (self));
  for (guint i = 0; i < ops->len; i++)
    if (!accel_device_submit (self->device, ops->pdata[i], cancellable, error))
      {
        g_prefix_error (error, "Cannot load the module into “%s”: ", accel_device_get_name (self->device));
        return FALSE;
      }
  module_loaded (self);
  return TRUE;
}

/* Asynchronous loads: every chunk is queued at once (the device serves
 * them in order); the task completes with the last answer. */
typedef struct {
  AccelModule *module;
  guint pending;
  GError *error;
} LoadState;

static void
load_state_free (gpointer data)
{
  LoadState *state = data;
  g_clear_object (&state->module);
  g_clear_error (&state->error);
  g_free (state);
}

static void
chunk_loaded (GObject *source, GAsyncResult *result, gpointer data)
{
  GTask *task = data;
  LoadState *state = g_task_get_task_data (task);
  GError *error = NULL;

  if (!accel_device_submit_finish (ACCEL_DEVICE (source), result, &error))
    {
      if (state->error == NULL)
        state->error = error;
      else
        g_error_free (error);
    }
  if (--state->pending == 0)
    {
      if (state->error)
        {
          GError *e = g_steal_pointer (&state->error);
          g_prefix_error (&e, "Cannot load the module into “%s”: ", accel_device_get_name (state->module->device));
          g_task_return_error (task, e);
        }
      else
        {
          module_loaded (state->module);
          g_task_return_pointer (task, g_object_ref (state->module), g_object_unref);
        }
    }
  g_object_unref (task);
}

/* Takes @self. */
static void
load_async (AccelModule *self, GTask *task)
{
  g_autoptr(GPtrArray) ops = load_ops (G_OBJECT (self));
  LoadState *state = g_new0 (LoadState, 1);
  state->module = self;
  state->pending = ops->len;
  g_task_set_task_data (task, state, load_state_free);
  for (guint i = 0; i < ops->len; i++)
    accel_device_submit_async (self->device, ops->pdata[i], g_task_get_cancellable (task), chunk_loaded,
                               g_object_ref (task));
  g_object_unref (task);
}

/**
 * accel_module_new_from_source:
 * @device: the device to run the code on
 * @source: the CUDA C++ source; kernels to be named by their plain name
 *   must be `extern "C"`
 * @options: (array zero-terminated=1) (nullable): compiler options, such
 *   as `-std=c++17`, `-DBLOCK=128`, `-I/opt/include`, `--use_fast_math`; the
 *   architecture is the device's (`sm_90a` on an H100) unless an `-arch`
 *   option says otherwise
 * @name_expressions: (array zero-terminated=1) (nullable): expressions
 *   naming template instances to compile (`scale<float>`), as
 *   accel_module_get_function() will ask for them
 * @cancellable: (nullable): cancels the load while it is queued
 * @error: return location for a #GError
 *
 * Compiles @source for @device with the module compiler of its backend,
 * on the compiler's thread (a compiled image is kept in a disk cache
 * under `$XDG_CACHE_HOME/accel-1.0/kernels/`, keyed by the source, the
 * options, the architecture and the compiler's version), and loads it
 * into the device's context. Blocks; see
 * accel_module_new_from_source_async().
 *
 * Returns: (transfer full): the module, or %NULL with
 *   %ACCEL_ERROR_INVALID_ARGUMENT (the source does not compile: the
 *   message starts with `module.cu:LINE:COLUMN:` and holds the compiler's
 *   log), %ACCEL_ERROR_NOT_SUPPORTED (the backend compiles nothing) or the
 *   device's error
 */
AccelModule *
accel_module_new_from_source (AccelDevice *device,
                              const char *source,
                              const char * const *options,
                              const char * const *name_expressions,
                              GCancellable *cancellable,
                              GError **error)
{
  g_return_val_if_fail (ACCEL_IS_DEVICE (device), NULL);
  g_return_val_if_fail (source != NULL, NULL);

  g_autoptr(AccelActor) compiler = device_compiler (device, error);
  if (compiler == NULL)
    return NULL;
  g_autoptr(GVariant) reply = accel_actor_ask (compiler, compile_request (device, source, options, name_expressions),
                                               cancellable, error);
  if (reply == NULL)
    return NULL;
  g_autoptr(AccelModule) self = module_from_reply (device, reply, error);
  if (self == NULL || !load_sync (self, cancellable, error))
    return NULL;
  return g_steal_pointer (&self);
}

static void
compiled_cb (GObject *source, GAsyncResult *result, gpointer data)
{
  GTask *task = data;
  AccelDevice *device = g_task_get_task_data (task);
  GError *error = NULL;

  g_autoptr(GVariant) reply = accel_actor_ask_finish (ACCEL_ACTOR (source), result, &error);
  AccelModule *self = reply ? module_from_reply (device, reply, &error) : NULL;
  if (self == NULL)
    {
      g_task_return_error (task, error);
      g_object_unref (task);
      return;
    }
  load_async (self, task);
}

/**
 * accel_module_new_from_source_async:
 * @device: the device to run the code on
 * @source: the CUDA C++ source
 * @options: (array zero-terminated=1) (nullable): compiler options
 * @name_expressions: (array zero-terminated=1) (nullable): name
 *   expressions of template instances
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called on the thread-default main context of
 *   the caller when the module is loaded, or has failed
 * @user_data: data for @callback
 *
 * The asynchronous form of accel_module_new_from_source(): the caller's
 * thread does not wait for the compiler or the device.
 */
void
accel_module_new_from_source_async (AccelDevice *device,
                                    const char *source,
                                    const char * const *options,
                                    const char * const *name_expressions,
                                    GCancellable *cancellable,
                                    GAsyncReadyCallback callback,
                                    gpointer user_data)
{
  g_return_if_fail (ACCEL_IS_DEVICE (device));
  g_return_if_fail (source != NULL);

  GTask *task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, accel_module_new_from_source_async);
  g_task_set_task_data (task, g_object_ref (device), g_object_unref);
  GError *error = NULL;
  g_autoptr(AccelActor) compiler = device_compiler (device, &error);
  if (compiler == NULL)
    {
      g_task_return_error (task, error);
      g_object_unref (task);
      return;
    }
  accel_actor_ask_async (compiler, compile_request (device, source, options, name_expressions), cancellable,
                         compiled_cb, task);
}

/**
 * accel_module_new_from_source_finish:
 * @result: the result given to the callback
 * @error: return location for a #GError
 *
 * Finishes accel_module_new_from_source_async().
 *
 * Returns: (transfer full): the module, or %NULL with @error set as
 *   accel_module_new_from_source() would
 */
AccelModule *
accel_module_new_from_source_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

static gboolean
detect_kind (GBytes *image, AccelModuleImageKind *kind, GError **error)
{
  gsize size;
  const guint8 *p = g_bytes_get_data (image, &size);
  static const guint8 elf[4] = { 0x7f, 'E', 'L', 'F' };
  static const guint8 fatbin[4] = { 0x50, 0xed, 0x55, 0xba };

  if (size >= 4 && memcmp (p, elf, 4) == 0)
    *kind = ACCEL_MODULE_IMAGE_CUBIN;
  else if (size >= 4 && memcmp (p, fatbin, 4) == 0)
    *kind = ACCEL_MODULE_IMAGE_FATBIN;
  else
    {
      /* PTX is text: its first word is a comment or a directive. */
      gsize i = 0;
      while (i < size && g_ascii_isspace (p[i]))
        i++;
      gsize len = size;
      while (len > 0 && p[len - 1] == '\0')
        len--;
      if (i >= len || !(p[i] == '.' || (p[i] == '/' && i + 1 < len && p[i + 1] == '/'))
          || memchr (p, '\0', len) != NULL)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "The image (%" G_GSIZE_FORMAT " bytes) is not a cubin, a fatbin or PTX text", size);
          return FALSE;
        }
      *kind = ACCEL_MODULE_IMAGE_PTX;
    }
  return TRUE;
}

/**
 * accel_module_new_from_image:
 * @device: the device to run the code on
 * @image: a cubin, a fatbin or PTX text (as nvcc or NVRTC write them)
 * @cancellable: (nullable): cancels the load while it is queued
 * @error: return location for a #GError
 *
 * Loads compiled code into @device's context. Blocks.
 *
 * Returns: (transfer full): the module, or %NULL with
 *   %ACCEL_ERROR_INVALID_ARGUMENT (not an image, or one the device cannot
 *   load) or the device's error
 */
AccelModule *
accel_module_new_from_image (AccelDevice *device, GBytes *image, GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_DEVICE (device), NULL);
  g_return_val_if_fail (image != NULL, NULL);

  AccelModuleImageKind kind;
  if (!detect_kind (image, &kind, error))
    return NULL;
  g_autoptr(AccelModule) self = module_new (device, image, kind);
  if (!load_sync (self, cancellable, error))
    return NULL;
  return g_steal_pointer (&self);
}

/* Functions. */

/**
 * accel_module_get_function:
 * @self: a module
 * @name: a kernel's `extern "C"` name, or one of the module's name
 *   expressions (`scale<float>`)
 * @signature: its arguments' kinds, comma-separated: `buffer`, `int32`,
 *   `int64`, `float32`, `float64` (also `ptr`, `int`, `float`, `double`,
 *   `i32`, `i64`, `f32`, `f64`); "" for none
 * @error: return location for a #GError
 *
 * A kernel of the module with the signature its launches will be checked
 * against. Whether the module has a kernel of that name, and whether its
 * parameters match the signature in number and size, the device checks
 * before the first launch (an %ACCEL_ERROR_INVALID_ARGUMENT error then).
 *
 * Returns: (transfer full): the function, or %NULL with
 *   %ACCEL_ERROR_INVALID_ARGUMENT for a bad signature or a template
 *   name that was not among the module's name expressions
 */
AccelFunction *
accel_module_get_function (AccelModule *self, const char *name, const char *signature, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_MODULE (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (signature != NULL, NULL);

  g_autoptr(GArray) kinds = _accel_function_parse_signature (signature, error);
  if (kinds == NULL)
    return NULL;
  const char *symbol = g_hash_table_lookup (self->lowered, name);
  if (symbol == NULL)
    {
      if (strpbrk (name, "<>(): ") != NULL)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "“%s” is not a name expression the module was compiled with; give it in "
                       "“name_expressions” to accel_module_new_from_source()", name);
          return NULL;
        }
      symbol = name;
    }

  return _accel_function_new (self, self->handle, name, symbol, (const AccelArgKind *) kinds->data, kinds->len);
}

/* Functions of modules known here by their handle only (a device host),
 * kept so that a launch op read from the channel makes no new object.
 * Bounded: a host that sees many functions starts over now and then. */
G_LOCK_DEFINE_STATIC (host_functions);
static GHashTable *host_functions;   /* "handle\nsymbol" -> GPtrArray of AccelFunction */

AccelFunction *
_accel_module_function_for_handle (guint64 module_handle,
                                   const char *name,
                                   const char *symbol,
                                   const AccelArgKind *kinds,
                                   guint n_args)
{
  char stack_key[256];
  g_autofree char *heap_key = NULL;
  const char *key = stack_key;
  if (g_snprintf (stack_key, sizeof stack_key, "%" G_GUINT64_FORMAT "\n%s", module_handle, symbol)
      >= (int) sizeof stack_key)
    key = heap_key = g_strdup_printf ("%" G_GUINT64_FORMAT "\n%s", module_handle, symbol);

  G_LOCK (host_functions);
  if (host_functions == NULL)
    host_functions = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_ptr_array_unref);
  GPtrArray *list = g_hash_table_lookup (host_functions, key);
  AccelFunction *fn = NULL;
  for (guint i = 0; list && i < list->len && fn == NULL; i++)
    if (_accel_function_matches (list->pdata[i], symbol, kinds, n_args))
      fn = g_object_ref (list->pdata[i]);
  if (fn == NULL)
    {
      if (g_hash_table_size (host_functions) >= 4096)
        {
          g_hash_table_remove_all (host_functions);
          list = NULL;
        }
      if (list == NULL)
        {
          list = g_ptr_array_new_with_free_func (g_object_unref);
          g_hash_table_replace (host_functions, g_strdup (key), list);
        }
      fn = _accel_function_new (NULL, module_handle, name, symbol, kinds, n_args);
      g_ptr_array_add (list, g_object_ref (fn));
    }
  G_UNLOCK (host_functions);
  return fn;
}

/* GObject */

static void
accel_module_dispose (GObject *object)
{
  AccelModule *self = ACCEL_MODULE (object);

  if (self->device && self->loaded)
    {
      self->loaded = FALSE;
      _accel_device_remove_context_resource (self->device, object);
      if (accel_device_get_state (self->device) != ACCEL_DEVICE_STATE_FAILED)
        {
          g_autoptr(AccelOp) op = accel_module_load_new (self->handle, self->image_kind, 0, 0, NULL);
          ACCEL_MODULE_LOAD (op)->unload = TRUE;
          /* No one waits: a device that is gone or fails has dropped the
           * code already. */
          _accel_device_submit_detached (self->device, op);
        }
    }
  g_clear_object (&self->device);
  G_OBJECT_CLASS (accel_module_parent_class)->dispose (object);
}

static void
accel_module_finalize (GObject *object)
{
  AccelModule *self = ACCEL_MODULE (object);

  g_clear_pointer (&self->image, g_bytes_unref);
  g_hash_table_unref (self->lowered);
  g_free (self->log);
  g_free (self->target);
  G_OBJECT_CLASS (accel_module_parent_class)->finalize (object);
}

static void
accel_module_class_init (AccelModuleClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = accel_module_dispose;
  object_class->finalize = accel_module_finalize;
}

static void
accel_module_init (AccelModule *self)
{
  self->lowered = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
}

/**
 * accel_module_get_device:
 * @self: a module
 *
 * The device it runs on.
 *
 * Returns: (transfer none): the device it runs on
 */
AccelDevice *
accel_module_get_device (AccelModule *self)
{
  g_return_val_if_fail (ACCEL_IS_MODULE (self), NULL);
  return self->device;
}

/**
 * accel_module_get_handle:
 * @self: a module
 *
 * The number that names the module to its device's context, in this process
 * and in a device host; unique in this process.
 *
 * Returns: the number that names the module to its device's context, in
 *   this process and in a device host; unique in this process
 */
guint64
accel_module_get_handle (AccelModule *self)
{
  g_return_val_if_fail (ACCEL_IS_MODULE (self), 0);
  return self->handle;
}

/**
 * accel_module_get_image:
 * @self: a module
 *
 * The compiled image that was loaded.
 *
 * Returns: (transfer none): the compiled image that was loaded
 */
GBytes *
accel_module_get_image (AccelModule *self)
{
  g_return_val_if_fail (ACCEL_IS_MODULE (self), NULL);
  return self->image;
}

/**
 * accel_module_get_image_kind:
 * @self: a module
 *
 * What the image holds.
 *
 * Returns: what the image holds
 */
AccelModuleImageKind
accel_module_get_image_kind (AccelModule *self)
{
  g_return_val_if_fail (ACCEL_IS_MODULE (self), ACCEL_MODULE_IMAGE_CUBIN);
  return self->image_kind;
}

/**
 * accel_module_get_log:
 * @self: a module
 *
 * What the compiler said (warnings), or %NULL for a module made from an
 * image.
 *
 * Returns: (nullable): what the compiler said (warnings), or %NULL for a
 *   module made from an image
 */
const char *
accel_module_get_log (AccelModule *self)
{
  g_return_val_if_fail (ACCEL_IS_MODULE (self), NULL);
  return self->log;
}

/**
 * accel_module_get_target:
 * @self: a module
 *
 * The architecture its source was compiled for (`sm_90a`), or %NULL for a
 * module made from an image.
 *
 * Returns: (nullable): the architecture its source was compiled for
 *   (`sm_90a`), or %NULL for a module made from an image
 */
const char *
accel_module_get_target (AccelModule *self)
{
  g_return_val_if_fail (ACCEL_IS_MODULE (self), NULL);
  return self->target;
}

/**
 * accel_module_get_compiled:
 * @self: a module
 *
 * %TRUE if the compiler ran to make the module, %FALSE when its image came
 * from the disk cache or was given.
 *
 * Returns: %TRUE if the compiler ran to make the module, %FALSE when its
 *   image came from the disk cache or was given
 */
gboolean
accel_module_get_compiled (AccelModule *self)
{
  g_return_val_if_fail (ACCEL_IS_MODULE (self), FALSE);
  return self->compiled;
}

/**
 * accel_module_get_lowered_name:
 * @self: a module
 * @name_expression: one of the name expressions it was compiled with
 *
 * The symbol the expression lowered to, or %NULL.
 *
 * Returns: (nullable): the symbol the expression lowered to, or %NULL
 */
const char *
accel_module_get_lowered_name (AccelModule *self, const char *name_expression)
{
  g_return_val_if_fail (ACCEL_IS_MODULE (self), NULL);
  g_return_val_if_fail (name_expression != NULL, NULL);
  return g_hash_table_lookup (self->lowered, name_expression);
}
