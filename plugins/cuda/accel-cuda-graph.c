/* accel-cuda-graph.c: an AccelGraph as a CUDA graph.
 *
 * At its first replay in a context, the graph's ops' kernels are run once
 * on the lane's stream under stream capture, and what they enqueued
 * becomes an executable CUDA graph, kept with the AccelGraph for that
 * context; every replay is then one cudaGraphLaunch on the lane's stream.
 * The capture is relaxed: a kernel may make its library handle (cuBLAS
 * allocates with cudaMalloc) on first use during it, which is not
 * recorded; a capture that fails anyway is tried once more, when such a
 * handle exists (nothing runs during a capture, so that is safe). A kernel's scratch memory (accel_cuda_lane_alloc_workspace())
 * becomes allocation and free nodes of the graph. A kernel that checks its
 * results on the host (accel_cuda_lane_check_after()), or one that does
 * what no capture allows (synchronising its stream), makes the replay fail
 * with %ACCEL_ERROR_NOT_SUPPORTED, and the context stays as it was.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cuda-private.h"

typedef struct {
  AccelCudaContext *ctx;        /* strong: the exec lives in it */
  cudaGraphExec_t exec;
  guint n_ops;
} GraphExec;

static GQuark
exec_quark (void)
{
  static GQuark q;
  if (G_UNLIKELY (q == 0))
    q = g_quark_from_static_string ("accel-cuda-graph-exec");
  return q;
}

/* Any thread: the graph's last reference may go anywhere. */
static void
graph_exec_free (gpointer data)
{
  GraphExec *ge = data;
  if (g_atomic_int_get (&ge->ctx->alive))
    {
      int previous = -1;
      (void) cudaGetDevice (&previous);
      if (previous == ge->ctx->ordinal || cudaSetDevice (ge->ctx->ordinal) == cudaSuccess)
        (void) cudaGraphExecDestroy (ge->exec);
      if (previous >= 0 && previous != ge->ctx->ordinal)
        (void) cudaSetDevice (previous);
      (void) cudaGetLastError ();
    }
  accel_cuda_context_unref (ge->ctx);
  g_free (ge);
}

/* Runs the graph's kernels under capture; on success @graph_out holds
 * what they enqueued. The capture is ended whatever happens. Nothing runs
 * during a capture, so a failed one can be tried again: @again says
 * whether that may help (a library handle made during the first attempt
 * exists for the second). */
static gboolean
capture (AccelCudaLane *lane, AccelGraph *graph, cudaGraph_t *graph_out, gboolean *again, GError **error)
{
  AccelDevice *device = ACCEL_DEVICE (lane->device);
  guint n = accel_graph_get_n_ops (graph);
  GError *local = NULL;

  *again = TRUE;

  if (!ACCEL_CUDA_CHECK (cudaStreamBeginCapture (lane->stream, cudaStreamCaptureModeRelaxed), error))
    return FALSE;
  for (guint i = 0; i < n && local == NULL; i++)
    {
      AccelOp *op = accel_graph_get_op (graph, i);
      const AccelKernel *kernel = accel_graph_get_kernel (graph, i, device, &local);
      if (kernel == NULL)
        break;
      gboolean ok = accel_kernel_run (kernel, op, lane, &local);
      if (ok && lane->check != NULL)
        {
          *again = FALSE;
          accel_cuda_lane_drop_check (lane);
          local = g_error_new (ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                               "its kernel checks its results on the host, which a CUDA graph cannot do");
        }
      else if (!ok && local == NULL)
        local = g_error_new (ACCEL_ERROR, ACCEL_ERROR_FAILED, "its kernel failed without saying why");
      /* Scratch memory goes back inside the graph, after the op's work. */
      GError *ws_error = NULL;
      if (lane->workspaces->len > 0 && !accel_cuda_lane_release_workspaces (lane, &ws_error) && local == NULL)
        local = ws_error;
      else
        g_clear_error (&ws_error);
      if (local)
        g_prefix_error (&local, "op %u (%s) of the graph: ", i, accel_op_get_type_name (op));
    }

  cudaGraph_t captured = NULL;
  cudaError_t status = cudaStreamEndCapture (lane->stream, &captured);
  if (local == NULL && status != cudaSuccess)
    {
      if (accel_cuda_error_is_sticky (status))
        (void) accel_cuda_check (status, "cudaStreamEndCapture", &local);
      else
        local = g_error_new (ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                             "a kernel of the graph did what stream capture forbids (%s)", cudaGetErrorName (status));
    }
  if (status != cudaSuccess && !accel_cuda_error_is_sticky (status))
    (void) cudaGetLastError ();
  if (local)
    {
      if (captured)
        (void) cudaGraphDestroy (captured);
      if (local->code == ACCEL_ERROR_CONTEXT_POISONED || local->code == ACCEL_ERROR_NO_KERNEL)
        *again = FALSE;
      /* A call refused during capture leaves its error behind. */
      cudaError_t left = cudaPeekAtLastError ();
      if (left != cudaSuccess && !accel_cuda_error_is_sticky (left))
        (void) cudaGetLastError ();
      g_propagate_prefixed_error (error, local, "replay: ");
      return FALSE;
    }
  *graph_out = captured;
  return TRUE;
}

/**
 * accel_cuda_lane_run_graph:
 * @lane: the lane the replay runs on
 * @graph: an instantiated graph
 * @error: return location for a #GError
 *
 * Enqueues one replay of @graph on @lane's stream: a launch of the CUDA
 * graph captured from the graph's kernels, made at the first replay in
 * the lane's context. The `replay` kernel of the `cuda` backend; on the
 * device thread.
 *
 * Returns: %TRUE if the replay was enqueued
 */
gboolean
accel_cuda_lane_run_graph (AccelCudaLane *lane, AccelGraph *graph, GError **error)
{
  g_return_val_if_fail (lane != NULL, FALSE);
  g_return_val_if_fail (ACCEL_IS_GRAPH (graph), FALSE);

  GraphExec *ge = g_object_get_qdata (G_OBJECT (graph), exec_quark ());
  if (G_UNLIKELY (ge == NULL || ge->ctx != lane->ctx))
    {
      cudaGraph_t captured = NULL;
      gboolean again = FALSE;
      GError *first = NULL;
      if (!capture (lane, graph, &captured, &again, &first))
        {
          if (!again)
            {
              g_propagate_error (error, first);
              return FALSE;
            }
          g_debug ("%s: capturing again after: %s", accel_device_get_name (ACCEL_DEVICE (lane->device)),
                   first->message);
          g_clear_error (&first);
          if (!capture (lane, graph, &captured, &again, error))
            return FALSE;
        }
      cudaGraphExec_t exec = NULL;
      cudaError_t status = cudaGraphInstantiate (&exec, captured, 0);
      (void) cudaGraphDestroy (captured);
      if (!accel_cuda_check (status, "cudaGraphInstantiate", error))
        return FALSE;
      ge = g_new0 (GraphExec, 1);
      ge->ctx = accel_cuda_context_ref (lane->ctx);
      ge->exec = exec;
      ge->n_ops = accel_graph_get_n_ops (graph);
      g_object_set_qdata_full (G_OBJECT (graph), exec_quark (), ge, graph_exec_free);
    }
  return ACCEL_CUDA_CHECK (cudaGraphLaunch (ge->exec, lane->stream), error);
}
