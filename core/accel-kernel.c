/* accel-kernel.c: the implementation of one op type on one backend.
 *
 * Kernels belong to the plugin that registered them (and so to its
 * registry): a kernel lives as long as its registry, copying one hands back
 * the same pointer and freeing one does nothing. A kernel known only from
 * the registry cache has no vtable yet; the first time it is asked to run,
 * its plugin is loaded.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-private.h"

static AccelKernel *
accel_kernel_copy (AccelKernel *kernel)
{
  return kernel;
}

static void
accel_kernel_unref (AccelKernel *kernel)
{
}

/**
 * AccelKernel:
 *
 * The implementation of one op type on one backend, with a rank: of the
 * kernels of an (op type, backend) pair, the highest-ranked one that
 * supports an op instance runs it.
 *
 * Kernels are owned by the registry and live as long as it does; copying
 * one returns the same pointer and freeing one does nothing.
 */
G_DEFINE_BOXED_TYPE (AccelKernel, accel_kernel, accel_kernel_copy, accel_kernel_unref)

AccelKernel *
_accel_kernel_new (AccelPlugin *plugin,
                   const char *op_type,
                   const char *backend,
                   guint rank,
                   const AccelKernelVTable *vtable)
{
  AccelKernel *kernel = g_new0 (AccelKernel, 1);

  kernel->op_type = g_strdup (op_type);
  kernel->backend = g_strdup (backend);
  kernel->rank = rank;
  kernel->plugin = plugin;
  kernel->plugin_name = g_strdup (plugin ? accel_plugin_get_name (plugin) : NULL);
  if (vtable)
    {
      kernel->vtable = *vtable;
      kernel->has_vtable = TRUE;
    }
  return kernel;
}

/* Called under the plugin lock when a plugin that was known from the cache
 * registers this kernel for real. Readers test has_vtable first, so the
 * vtable is written before it is published. */
void
_accel_kernel_set_vtable (AccelKernel *kernel, guint rank, const AccelKernelVTable *vtable)
{
  kernel->rank = rank;
  kernel->vtable = *vtable;
  g_atomic_int_set (&kernel->has_vtable, TRUE);
}

void
_accel_kernel_free (AccelKernel *kernel)
{
  if (kernel == NULL)
    return;
  g_free (kernel->op_type);
  g_free (kernel->backend);
  g_free (kernel->plugin_name);
  g_free (kernel);
}

/* Loads the plugin of a kernel known only from the cache. */
static gboolean
ensure_vtable (const AccelKernel *kernel, GError **error)
{
  if (G_LIKELY (g_atomic_int_get (&kernel->has_vtable)))
    return TRUE;

  if (kernel->plugin == NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_PLUGIN,
                   "Kernel for op “%s” on backend “%s” has no implementation",
                   kernel->op_type, kernel->backend);
      return FALSE;
    }
  if (!accel_plugin_load (kernel->plugin, error))
    return FALSE;
  if (!g_atomic_int_get (&kernel->has_vtable))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_PLUGIN,
                   "Plugin “%s” no longer registers a kernel for op “%s” on backend “%s”",
                   kernel->plugin_name, kernel->op_type, kernel->backend);
      return FALSE;
    }
  return TRUE;
}

/**
 * accel_kernel_get_op_type:
 * @kernel: a kernel
 *
 * Gets the name of the op type it implements (`gemm`).
 *
 * Returns: the name of the op type it implements (`gemm`)
 */
const char *
accel_kernel_get_op_type (const AccelKernel *kernel)
{
  g_return_val_if_fail (kernel != NULL, NULL);
  return kernel->op_type;
}

/**
 * accel_kernel_get_backend:
 * @kernel: a kernel
 *
 * Gets the name of the backend it runs on (`cpu`, `cuda`).
 *
 * Returns: the name of the backend it runs on (`cpu`, `cuda`)
 */
const char *
accel_kernel_get_backend (const AccelKernel *kernel)
{
  g_return_val_if_fail (kernel != NULL, NULL);
  return kernel->backend;
}

/**
 * accel_kernel_get_rank:
 * @kernel: a kernel
 *
 * Gets its rank; of the kernels for one op type and backend, the highest rank
 * is tried first.
 *
 * Returns: its rank; of the kernels for one op type and backend, the highest
 *   rank is tried first
 */
guint
accel_kernel_get_rank (const AccelKernel *kernel)
{
  g_return_val_if_fail (kernel != NULL, 0);
  return kernel->rank;
}

/**
 * accel_kernel_get_plugin_name:
 * @kernel: a kernel
 *
 * Gets the name of the plugin that registered it.
 *
 * Returns: (nullable): the name of the plugin that registered it
 */
const char *
accel_kernel_get_plugin_name (const AccelKernel *kernel)
{
  g_return_val_if_fail (kernel != NULL, NULL);
  return kernel->plugin_name;
}

/**
 * accel_kernel_get_vtable: (skip)
 * @kernel: a kernel
 *
 * The kernel's functions. A kernel known only from the registry cache has
 * none until its plugin is loaded (accel_kernel_run() and
 * accel_kernel_supports() load it).
 *
 * Returns: (nullable): the vtable, or %NULL if its plugin is not loaded yet
 */
const AccelKernelVTable *
accel_kernel_get_vtable (const AccelKernel *kernel)
{
  g_return_val_if_fail (kernel != NULL, NULL);
  if (!g_atomic_int_get (&kernel->has_vtable))
    return NULL;
  return &kernel->vtable;
}

/**
 * accel_kernel_supports:
 * @kernel: a kernel
 * @op: a validated op of the kernel's op type
 * @device: the device it would run on
 * @error: return location for the reason it is not supported
 *
 * Asks whether the kernel can run this op instance (dtypes, layouts,
 * compute capability...). Loads the kernel's plugin if needed.
 *
 * Returns: %TRUE if it can; %FALSE with @error set if not
 */
gboolean
accel_kernel_supports (const AccelKernel *kernel, AccelOp *op, AccelDevice *device, GError **error)
{
  g_return_val_if_fail (kernel != NULL, FALSE);
  g_return_val_if_fail (ACCEL_IS_OP (op), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!ensure_vtable (kernel, error))
    return FALSE;
  if (kernel->vtable.supports == NULL)
    return TRUE;

  GError *local_error = NULL;
  if (kernel->vtable.supports (op, device, &local_error))
    {
      g_clear_error (&local_error);
      return TRUE;
    }
  if (local_error == NULL)
    local_error = g_error_new (ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                               "The %s kernel of plugin “%s” for op “%s” does not take this op",
                               kernel->backend, kernel->plugin_name, kernel->op_type);
  g_propagate_error (error, local_error);
  return FALSE;
}

/**
 * accel_kernel_run:
 * @kernel: a kernel
 * @op: a validated op whose buffers all belong to the device
 * @context: (nullable): the backend's execution context
 * @error: return location for a #GError
 *
 * Runs, or for asynchronous backends enqueues, @op. A kernel known only
 * from the registry cache loads its plugin first.
 *
 * Returns: %TRUE on success
 */
gboolean
accel_kernel_run (const AccelKernel *kernel, AccelOp *op, gpointer context, GError **error)
{
  g_return_val_if_fail (kernel != NULL, FALSE);
  g_return_val_if_fail (ACCEL_IS_OP (op), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!ensure_vtable (kernel, error))
    return FALSE;

  GError *local_error = NULL;
  if (kernel->vtable.run (op, context, &local_error))
    {
      g_clear_error (&local_error);
      return TRUE;
    }
  if (local_error == NULL)
    local_error = g_error_new (ACCEL_ERROR, ACCEL_ERROR_FAILED,
                               "The %s kernel of plugin “%s” for op “%s” failed without a reason",
                               kernel->backend, kernel->plugin_name, kernel->op_type);
  g_propagate_error (error, local_error);
  return FALSE;
}
