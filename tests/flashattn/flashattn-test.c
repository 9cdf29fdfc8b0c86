/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>
#include <string.h>
#include "flashattn-test.h"

const FtKind ft_specialised_kinds[6] = {
  { ACCEL_DTYPE_BF16, 64 }, { ACCEL_DTYPE_BF16, 128 }, { ACCEL_DTYPE_BF16, 256 },
  { ACCEL_DTYPE_F16, 64 }, { ACCEL_DTYPE_F16, 128 }, { ACCEL_DTYPE_F16, 256 },
};

void
ft_add_case_test (const char *group, AccelDType dtype, gint64 D, gint64 Dv, const char *name, gconstpointer c,
                  GTestDataFunc func)
{
  FtParam *p = g_new (FtParam, 1);   /* lives as long as the test list */
  p->dtype = dtype;
  p->D = D;
  p->Dv = Dv;
  p->c = c;
  g_autofree char *dims = D == Dv ? g_strdup_printf ("d%" G_GINT64_FORMAT, D)
                                  : g_strdup_printf ("d%" G_GINT64_FORMAT "-dv%" G_GINT64_FORMAT, D, Dv);
  g_autofree char *path = g_strdup_printf ("/flashattn/%s%s%s/%s/%s", group ? group : "", group ? "/" : "",
                                           accel_dtype_get_name (dtype), dims, name);
  g_test_add_data_func_full (path, p, func, g_free);
}

double
ft_tolerance (AccelDType dtype)
{
  return dtype == ACCEL_DTYPE_BF16 ? 1e-2 : dtype == ACCEL_DTYPE_F16 ? 5e-3 : 1e-5;
}

static double
rel_error (const double *got, const double *want, gsize n, gsize *n_nan)
{
  double e2 = 0, r2 = 0;
  *n_nan = 0;
  for (gsize i = 0; i < n; i++)
    {
      if (!isfinite (got[i]))
        {
          (*n_nan)++;
          continue;
        }
      e2 += (got[i] - want[i]) * (got[i] - want[i]);
      r2 += want[i] * want[i];
    }
  return r2 > 0 ? sqrt (e2 / r2) : sqrt (e2);
}

void
ft_expect_close (const char *what, AccelBuffer *got_buffer, AccelBuffer *want_buffer, double tol)
{
  g_autofree double *got = ct_read (got_buffer);
  g_autofree double *want = ct_read (want_buffer);
  gsize n = accel_buffer_get_n_elements (want_buffer), n_nan;
  double rel = rel_error (got, want, n, &n_nan);

  g_test_message ("%s: relative error %.3g (tolerance %.3g)", what, rel, tol);
  if (n_nan != 0 || !(rel <= tol))
    g_test_fail_printf ("%s: relative error %.3g (tolerance %.3g), %" G_GSIZE_FORMAT " non-finite of %" G_GSIZE_FORMAT,
                        what, rel, tol, n_nan, n);
}

void
ft_expect_lse_close (AccelBuffer *got_buffer, AccelBuffer *want_buffer)
{
  g_autofree double *got = ct_read (got_buffer);
  g_autofree double *want = ct_read (want_buffer);
  gsize n = accel_buffer_get_n_elements (want_buffer);
  for (gsize i = 0; i < n; i++)
    {
      if (isinf (want[i]) && want[i] < 0)
        {
          if (!(isinf (got[i]) && got[i] < 0))
            {
              g_test_fail_printf ("lse[%" G_GSIZE_FORMAT "] is %g, expected -inf", i, got[i]);
              return;
            }
          continue;
        }
      if (!(fabs (got[i] - want[i]) <= 1e-3 * MAX (1.0, fabs (want[i]))))
        {
          g_test_fail_printf ("lse[%" G_GSIZE_FORMAT "] is %g, expected %g", i, got[i], want[i]);
          return;
        }
    }
}

void
ft_expect_same_forward (const char *what, AccelOp *on_cpu, AccelOp *on_gpu, const CtPair *out, const CtPair *lse,
                        double tol)
{
  ct_submit (ct_cpu (), on_cpu);
  ct_submit (ct_gpu (), on_gpu);
  ft_expect_close (what, out->gpu, out->cpu, tol);
  if (lse != NULL)
    ft_expect_lse_close (lse->gpu, lse->cpu);
}

gboolean
ft_have_op (const char *op_name)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelOp) op = accel_op_new_by_name (op_name, &error);
  if (op == NULL)
    {
      g_autofree char *why = g_strdup_printf ("no op type “%s” (%s)", op_name, error->message);
      g_test_skip (why);
      return FALSE;
    }
  return TRUE;
}

GError *
ft_gpu_refusal (AccelOp *op)
{
  GError *error = NULL;
  gboolean ok = accel_device_submit (ct_gpu (), op, NULL, &error);
  g_assert_false (ok);
  g_assert_nonnull (error);
  g_assert_true (error->domain == ACCEL_ERROR);
  g_test_message ("refused: %s", error->message);
  return error;
}

void
ft_expect_mention (const GError *error, const char *fragment)
{
  if (fragment && !strstr (error->message, fragment))
    g_test_fail_printf ("error '%s' does not mention '%s'", error->message, fragment);
}

void
ft_expect_invalid_argument (AccelOp *op, const char *fragment, const char *fragment2)
{
  g_autoptr(GError) error = ft_gpu_refusal (op);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  ft_expect_mention (error, fragment);
  ft_expect_mention (error, fragment2);
}

CtPair *
ft_alibi_new (int kind, gint64 B, gint64 Hq)
{
  gint64 dims[2] = { B, Hq };
  if (kind == 1)
    return ct_pair_new (ACCEL_DTYPE_F32, &dims[1], 1, 0.01, 0.5);
  if (kind == 2)
    return ct_pair_new (ACCEL_DTYPE_F32, dims, 2, 0.01, 0.5);
  return NULL;
}

void
ft_tensors_init (FtTensors *t, AccelDType dtype, AccelDType out_dtype, guint rank, const gint64 *dq, const gint64 *dk,
                 const gint64 *dv, const gint64 *dout, const gint64 *dlse, int alibi, gint64 B, gint64 Hq)
{
  t->q = ct_pair_new (dtype, dq, rank, -2, 2);
  t->k = ct_pair_new (dtype, dk, rank, -2, 2);
  t->v = ct_pair_new (dtype, dv, rank, -1, 1);
  t->out = ct_pair_new (out_dtype, dout, rank, -9, 9);
  t->lse = ct_pair_new (ACCEL_DTYPE_F32, dlse, rank - 1, -9, 9);
  t->alibi = ft_alibi_new (alibi, B, Hq);
}

void
ft_tensors_clear (FtTensors *t)
{
  g_clear_pointer (&t->q, ct_pair_free);
  g_clear_pointer (&t->k, ct_pair_free);
  g_clear_pointer (&t->v, ct_pair_free);
  g_clear_pointer (&t->out, ct_pair_free);
  g_clear_pointer (&t->lse, ct_pair_free);
  g_clear_pointer (&t->alibi, ct_pair_free);
}

void
ft_poke (AccelBuffer *buffer, gint64 index, double value)
{
  g_autofree double *values = ct_read (buffer);
  values[index] = value;
  ct_write (buffer, values);
}

AccelBuffer *
ft_int_buffer (AccelDevice *device, const gint64 *dims, guint rank, const double *values)
{
  AccelBuffer *b = ct_alloc (device, ACCEL_DTYPE_I32, dims, rank);
  ct_write (b, values);
  return b;
}
