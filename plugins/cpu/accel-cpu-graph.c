/* accel-cpu-graph.c: a graph replay on the CPU: its ops' kernels, in
 * order, with the device's execution context. The kernels are chosen once
 * per graph and device; nothing is launched ahead, so the replay has the
 * semantics a CUDA graph has.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cpu-kernels.h"

gboolean
accel_cpu_replay_run (AccelOp *op, gpointer context, GError **error)
{
  AccelGraph *graph = ACCEL_REPLAY (op)->graph;
  AccelCpuExec *exec = context;

  if (exec == NULL || exec->device == NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                   "replay: a graph runs on a device, not by a direct kernel call");
      return FALSE;
    }
  guint n = accel_graph_get_n_ops (graph);
  for (guint i = 0; i < n; i++)
    {
      const AccelKernel *kernel = accel_graph_get_kernel (graph, i, exec->device, error);
      AccelOp *step = accel_graph_get_op (graph, i);
      if (kernel == NULL || !accel_kernel_run (kernel, step, exec, error))
        {
          if (error && *error == NULL)
            g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_FAILED, "the kernel failed without saying why");
          g_prefix_error (error, "replay: op %u (%s) of the graph: ", i, accel_op_get_type_name (step));
          return FALSE;
        }
    }
  return TRUE;
}
