/* accel-ops.c: the portable op set, registered with every registry.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-private.h"

/* The core op types, their classes made (which names them) once. */
static const GType *
core_types (guint *n)
{
  static GType types[64];
  static guint n_types;
  static gsize once = 0;

  if (g_once_init_enter (&once))
    {
      const GType all[] = {
    ACCEL_TYPE_COPY, ACCEL_TYPE_FILL, ACCEL_TYPE_CAST, ACCEL_TYPE_GEMM,
    ACCEL_TYPE_AXPY, ACCEL_TYPE_SCAL, ACCEL_TYPE_RNG_FILL, ACCEL_TYPE_FFT,
    ACCEL_TYPE_REDUCE, ACCEL_TYPE_SOFTMAX, ACCEL_TYPE_ATTENTION,
    ACCEL_TYPE_ATTENTION_BACKWARD, ACCEL_TYPE_ATTENTION_VARLEN, ACCEL_TYPE_ATTENTION_VARLEN_BACKWARD,
    ACCEL_TYPE_ATTENTION_KVCACHE,
    /* linear algebra, sparse, convolution, normalisation, primitives */
    ACCEL_TYPE_MATMUL, ACCEL_TYPE_QR, ACCEL_TYPE_LU, ACCEL_TYPE_LU_SOLVE,
    ACCEL_TYPE_CHOLESKY, ACCEL_TYPE_CHOLESKY_SOLVE, ACCEL_TYPE_SVD,
    ACCEL_TYPE_EIGH, ACCEL_TYPE_SPMV, ACCEL_TYPE_SPMM, ACCEL_TYPE_CONV2D,
    ACCEL_TYPE_CONV2D_BACKWARD_DATA, ACCEL_TYPE_CONV2D_BACKWARD_FILTER,
    ACCEL_TYPE_POOL2D, ACCEL_TYPE_LAYERNORM, ACCEL_TYPE_RMSNORM,
    ACCEL_TYPE_SORT, ACCEL_TYPE_SCAN, ACCEL_TYPE_HISTOGRAM, ACCEL_TYPE_SELECT,
    ACCEL_TYPE_SEGMENTED_REDUCE, ACCEL_TYPE_GROUPED_GEMM, ACCEL_TYPE_QUANT_MATMUL,
    /* run-time modules and graphs */
    ACCEL_TYPE_LAUNCH, ACCEL_TYPE_MODULE_LOAD, ACCEL_TYPE_REPLAY,
    /* collectives */
    ACCEL_TYPE_ALL_REDUCE, ACCEL_TYPE_ALL_GATHER, ACCEL_TYPE_REDUCE_SCATTER, ACCEL_TYPE_BROADCAST,
    ACCEL_TYPE_ROOT_REDUCE, ACCEL_TYPE_ALL_TO_ALL, ACCEL_TYPE_SEND, ACCEL_TYPE_RECV, ACCEL_TYPE_SEND_RECV,
    ACCEL_TYPE_COLLECTIVE_BOOTSTRAP, ACCEL_TYPE_COLLECTIVE_ABORT,
    /* images */
    ACCEL_TYPE_CONVERT_COLOR, ACCEL_TYPE_RESIZE, ACCEL_TYPE_FILTER, ACCEL_TYPE_WARP_AFFINE,
    ACCEL_TYPE_WARP_PERSPECTIVE, ACCEL_TYPE_MORPHOLOGY,
      };
      G_STATIC_ASSERT (G_N_ELEMENTS (all) <= G_N_ELEMENTS (types));
      for (guint i = 0; i < G_N_ELEMENTS (all); i++)
        {
          /* Class init names the op type; the class then stays for the process. */
          g_type_class_ref (all[i]);
          types[i] = all[i];
        }
      n_types = G_N_ELEMENTS (all);
      g_once_init_leave (&once, 1);
    }
  *n = n_types;
  return types;
}

void
_accel_ops_ensure_core (void)
{
  guint n;
  core_types (&n);
}

void
_accel_ops_register_core (AccelRegistry *registry)
{
  guint n;
  const GType *types = core_types (&n);
  for (guint i = 0; i < n; i++)
    _accel_registry_register_core_op_type (registry, types[i]);
}
