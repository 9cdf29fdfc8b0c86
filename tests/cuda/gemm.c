/* gemm on cuda:0 (cuBLAS) against cpu:0 for every dtype, both transposes,
 * alpha and beta, batches, and tf32, at sizes that are no multiple of any
 * tile. The bound is per element: a multiple of the dtype's precision times
 * the sum of |a_ik b_kj| (plus |beta c|), computed here in binary64.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include "cuda-test.h"

typedef struct {
  CtPair *a, *b, *c;
  gboolean transa, transb;
  double alpha, beta;
  AccelGemmCompute compute;
} GemmCase;

static AccelOp *
make_gemm (gboolean on_gpu, gpointer data)
{
  GemmCase *g = data;
  return accel_op_new ("gemm",
                       "a", on_gpu ? g->a->gpu : g->a->cpu,
                       "b", on_gpu ? g->b->gpu : g->b->cpu,
                       "c", on_gpu ? g->c->gpu : g->c->cpu,
                       "transa", g->transa, "transb", g->transb,
                       "alpha", g->alpha, "beta", g->beta,
                       "compute", g->compute, NULL);
}

/* |alpha| sum_k |a_ik| |b_kj| + |beta c_ij|, per element of c (real parts
 * and imaginary parts bound together by the moduli). */
static double *
error_scale (GemmCase *g, gint64 batch, gint64 m, gint64 n, gint64 k, guint comps)
{
  double *scale = g_new0 (double, batch * m * n * comps);
  const double *a = g->a->values, *b = g->b->values, *c = g->c->values;

  for (gint64 p = 0; p < batch; p++)
    for (gint64 i = 0; i < m; i++)
      for (gint64 j = 0; j < n; j++)
        {
          double s = 0.0;
          for (gint64 l = 0; l < k; l++)
            {
              gint64 ia = p * m * k + (g->transa ? l * m + i : i * k + l);
              gint64 ib = p * k * n + (g->transb ? j * k + l : l * n + j);
              double ma = comps == 2 ? hypot (a[2 * ia], a[2 * ia + 1]) : fabs (a[ia]);
              double mb = comps == 2 ? hypot (b[2 * ib], b[2 * ib + 1]) : fabs (b[ib]);
              s += ma * mb;
            }
          gint64 ic = p * m * n + i * n + j;
          double mc = comps == 2 ? hypot (c[2 * ic], c[2 * ic + 1]) : fabs (c[ic]);
          for (guint q = 0; q < comps; q++)
            scale[ic * comps + q] = fabs (g->alpha) * s + fabs (g->beta) * mc;
        }
  return scale;
}

static void
run_case (AccelDType dtype, AccelGemmCompute compute, gint64 batch, gint64 m, gint64 n, gint64 k,
          gboolean transa, gboolean transb, double alpha, double beta)
{
  gint64 da[3] = { batch, transa ? k : m, transa ? m : k };
  gint64 db[3] = { batch, transb ? n : k, transb ? k : n };
  gint64 dc[3] = { batch, m, n };
  guint rank = batch > 1 ? 3 : 2;
  const gint64 *pa = rank == 3 ? da : da + 1, *pb = rank == 3 ? db : db + 1, *pc = rank == 3 ? dc : dc + 1;
  g_autoptr(CtPair) a = ct_pair_new (dtype, pa, rank, -1, 1);
  g_autoptr(CtPair) b = ct_pair_new (dtype, pb, rank, -1, 1);
  g_autoptr(CtPair) c = ct_pair_new (dtype, pc, rank, -1, 1);
  GemmCase g = { a, b, c, transa, transb, alpha, beta, compute };

  ct_submit_both (make_gemm, &g);

  guint comps = ct_components (dtype);
  g_autofree double *scale = error_scale (&g, batch, m, n, k, comps);
  /* Each side: the result's rounding plus an accumulation error that grows
   * with k (tensor cores add in f32 for f16/bf16; tf32 rounds inputs to
   * 10 bits). */
  double eps = compute == ACCEL_GEMM_COMPUTE_TF32 ? 0x1p-10 : ct_eps (dtype);
  double acc = (dtype == ACCEL_DTYPE_F16 || dtype == ACCEL_DTYPE_BF16) ? 0x1p-23 * sqrt ((double) k) : 0.0;
  double rtol = 2 * (2 * eps + eps * sqrt ((double) k) + acc);
  g_autofree char *what = g_strdup_printf ("gemm %s%s b=%" G_GINT64_FORMAT " m=%" G_GINT64_FORMAT
                                           " n=%" G_GINT64_FORMAT " k=%" G_GINT64_FORMAT " ta=%d tb=%d",
                                           accel_dtype_get_name (dtype),
                                           compute == ACCEL_GEMM_COMPUTE_TF32 ? " (tf32)" : "",
                                           batch, m, n, k, transa, transb);
  ct_assert_pair_close (what, c, scale, rtol, 0.0);
}

static void
test_gemm_dtypes (void)
{
  static const AccelDType types[] = {
    ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_C64, ACCEL_DTYPE_C128, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16,
  };
  static const gint64 dims[][3] = { { 1, 1, 1 }, { 33, 17, 65 }, { 257, 129, 33 }, { 31, 257, 255 } };
  if (!ct_gpu ())
    return;
  for (guint t = 0; t < G_N_ELEMENTS (types); t++)
    for (guint d = 0; d < G_N_ELEMENTS (dims); d++)
      for (int tr = 0; tr < 4; tr++)
        run_case (types[t], ACCEL_GEMM_COMPUTE_DEFAULT, 1, dims[d][0], dims[d][1], dims[d][2],
                  tr & 1, (tr >> 1) & 1, g_test_rand_double_range (-2, 2), tr == 0 ? 0.0 : 0.5);
}

static void
test_gemm_tf32 (void)
{
  if (!ct_gpu ())
    return;
  run_case (ACCEL_DTYPE_F32, ACCEL_GEMM_COMPUTE_TF32, 1, 257, 129, 1023, FALSE, FALSE, 1.0, 0.0);
  run_case (ACCEL_DTYPE_F32, ACCEL_GEMM_COMPUTE_TF32, 1, 33, 1023, 65, TRUE, TRUE, -0.5, 2.0);
  run_case (ACCEL_DTYPE_F32, ACCEL_GEMM_COMPUTE_F32, 1, 129, 33, 257, TRUE, FALSE, 1.0, 1.0);
}

static void
test_gemm_batched (void)
{
  static const AccelDType types[] = { ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_C64, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16 };
  if (!ct_gpu ())
    return;
  for (guint t = 0; t < G_N_ELEMENTS (types); t++)
    {
      run_case (types[t], ACCEL_GEMM_COMPUTE_DEFAULT, 7, 33, 65, 17, FALSE, TRUE, 1.5, 0.0);
      run_case (types[t], ACCEL_GEMM_COMPUTE_DEFAULT, 3, 129, 31, 257, TRUE, FALSE, 1.0, -1.0);
    }
  run_case (ACCEL_DTYPE_F32, ACCEL_GEMM_COMPUTE_TF32, 5, 65, 65, 129, FALSE, FALSE, 1.0, 0.0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cuda/gemm/dtypes", test_gemm_dtypes);
  g_test_add_func ("/cuda/gemm/tf32", test_gemm_tf32);
  g_test_add_func ("/cuda/gemm/batched", test_gemm_batched);
  return ct_run ();
}
