/* attention-errors.c: the attention variants' errors (each names the
 * property that is wrong and harms nothing else), which buffers each
 * variant reads and writes, and their serialisation round trip.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include "cpu-test.h"

/* `attention` on @q, @k, @v, @out with the properties that follow
 * @first_property set (none when it is NULL) must fail with @code and an
 * error naming @needle. */
static void
expect_attention_error (AccelBuffer *q, AccelBuffer *k, AccelBuffer *v, AccelBuffer *out, AccelError code,
                        const char *needle, const char *first_property, ...)
{
  g_autoptr(AccelOp) op = accel_attention_new (q, k, v, out);
  if (first_property != NULL)
    {
      va_list args;
      va_start (args, first_property);
      g_object_set_valist (G_OBJECT (op), first_property, args);
      va_end (args);
    }
  cpu_test_expect_error_naming (op, code, needle);
}

static void
test_attention_variant_errors (void)
{
  gint64 d4[4] = { 2, 4, 5, 8 }, dk4[4] = { 2, 2, 7, 8 }, dlse[3] = { 2, 4, 5 };
  g_autoptr(AccelBuffer) q = cpu_test_alloc (ACCEL_DTYPE_F32, d4, 4);
  g_autoptr(AccelBuffer) k = cpu_test_alloc (ACCEL_DTYPE_F32, dk4, 4);
  g_autoptr(AccelBuffer) v = cpu_test_alloc (ACCEL_DTYPE_F32, dk4, 4);
  g_autoptr(AccelBuffer) out = cpu_test_alloc (ACCEL_DTYPE_F32, d4, 4);
  g_autoptr(AccelBuffer) lse = cpu_test_alloc (ACCEL_DTYPE_F32, dlse, 3);
  g_autoptr(AccelBuffer) q8 = cpu_test_alloc (ACCEL_DTYPE_FP8_E4M3, d4, 4);
  g_autoptr(AccelBuffer) k8 = cpu_test_alloc (ACCEL_DTYPE_FP8_E4M3, dk4, 4);
  g_autoptr(AccelBuffer) v8 = cpu_test_alloc (ACCEL_DTYPE_FP8_E4M3, dk4, 4);
  g_autoptr(AccelBuffer) kbf = cpu_test_alloc (ACCEL_DTYPE_BF16, dk4, 4);
  g_autoptr(AccelBuffer) obf = cpu_test_alloc (ACCEL_DTYPE_BF16, d4, 4);
  g_autoptr(AccelBuffer) o8 = cpu_test_alloc (ACCEL_DTYPE_FP8_E4M3, d4, 4);
  gint64 d_bad[1] = { 3 }, d_b_hq[2] = { 2, 4 }, d_hq[1] = { 4 };
  g_autoptr(AccelBuffer) slopes_bad = cpu_test_alloc (ACCEL_DTYPE_F32, d_bad, 1);
  g_autoptr(AccelBuffer) slopes_f64 = cpu_test_alloc (ACCEL_DTYPE_F64, d_hq, 1);
  g_autoptr(AccelBuffer) slopes_2d = cpu_test_alloc (ACCEL_DTYPE_F32, d_b_hq, 2);
  g_autofree double *h1 = cpu_test_fill_random (q, -1, 1);
  g_autofree double *h2 = cpu_test_fill_random (k, -1, 1);
  g_autofree double *h3 = cpu_test_fill_random (v, -1, 1);
  g_autofree double *h4 = cpu_test_fill_random (slopes_2d, 0.1, 0.5);

  expect_attention_error (q, k, v, out, ACCEL_ERROR_SHAPE_MISMATCH, "alibi-slopes", "alibi-slopes", slopes_bad, NULL);
  expect_attention_error (q, k, v, out, ACCEL_ERROR_DTYPE_UNSUPPORTED, "alibi-slopes", "alibi-slopes", slopes_f64,
                          NULL);
  expect_attention_error (q, k, v, out, ACCEL_ERROR_SHAPE_MISMATCH, "alibi-slopes", "alibi-slopes", out, NULL);
  expect_attention_error (q, k, v, out, ACCEL_ERROR_INVALID_ARGUMENT, "k-descale", "k-descale", 2.0, NULL);
  expect_attention_error (q8, k8, v8, obf, ACCEL_ERROR_INVALID_ARGUMENT, "q-descale", "q-descale", 0.0, NULL);
  {
    /* Slopes that are a view of the result. */
    gint64 dh[1] = { 4 };
    g_autoptr(AccelShape) sh = accel_shape_new (dh, 1);
    g_autoptr(GError) verr = NULL;
    g_autoptr(AccelBuffer) view = accel_buffer_new_view (out, 8, sh, &verr);
    g_assert_no_error (verr);
    expect_attention_error (q, k, v, out, ACCEL_ERROR_INVALID_ARGUMENT, "alibi-slopes", "alibi-slopes", view, NULL);
  }
  {
    g_autoptr(AccelOp) op = accel_attention_new (q8, k8, v8, obf);
    g_object_set (op, "v-descale", G_MAXDOUBLE, NULL);
    cpu_test_submit (op);  /* large but finite is allowed */
  }
  expect_attention_error (q8, k8, v8, o8, ACCEL_ERROR_DTYPE_UNSUPPORTED, "out", NULL);
  expect_attention_error (q8, kbf, v8, obf, ACCEL_ERROR_DTYPE_UNSUPPORTED, "k", NULL);
  expect_attention_error (q, k, v, obf, ACCEL_ERROR_DTYPE_UNSUPPORTED, "out", NULL);
  {
    g_autoptr(AccelBuffer) dq = cpu_test_alloc (ACCEL_DTYPE_F32, d4, 4);
    g_autoptr(AccelBuffer) dk = cpu_test_alloc (ACCEL_DTYPE_F32, dk4, 4);
    g_autoptr(AccelBuffer) dv = cpu_test_alloc (ACCEL_DTYPE_F32, dk4, 4);
    g_autoptr(AccelOp) op = accel_attention_backward_new (q, k, v, out, out, lse, dq, dk, dv);
    g_object_set (op, "alibi-slopes", slopes_bad, NULL);
    cpu_test_expect_error_naming (op, ACCEL_ERROR_SHAPE_MISMATCH, "alibi-slopes");
    g_object_set (op, "alibi-slopes", slopes_f64, NULL);
    cpu_test_expect_error_naming (op, ACCEL_ERROR_DTYPE_UNSUPPORTED, "alibi-slopes");
    g_object_set (op, "alibi-slopes", slopes_2d, "sinks", 2, "window-left", 1, NULL);
    cpu_test_submit (op);  /* and it still runs */
  }
}

static AccelOp *
varlen_op_with_cu (AccelBuffer *q, AccelBuffer *k, AccelBuffer *v, AccelBuffer *out,
                   const double *cu_q, const double *cu_k, gint64 n_q, gint64 n_k)
{
  gint64 dq[1] = { n_q }, dk[1] = { n_k };
  g_autoptr(AccelBuffer) bq = cpu_test_alloc (ACCEL_DTYPE_I32, dq, 1);
  g_autoptr(AccelBuffer) bk = cpu_test_alloc (ACCEL_DTYPE_I32, dk, 1);
  cpu_test_write (bq, cu_q);
  cpu_test_write (bk, cu_k);
  return accel_attention_varlen_new (q, k, v, out, bq, bk);
}

static void
test_attention_varlen_errors (void)
{
  gint64 dq[3] = { 10, 4, 8 }, dk[3] = { 12, 2, 8 }, dv[3] = { 12, 2, 6 }, dout[3] = { 10, 4, 6 };
  g_autoptr(AccelBuffer) q = cpu_test_alloc (ACCEL_DTYPE_F32, dq, 3);
  g_autoptr(AccelBuffer) k = cpu_test_alloc (ACCEL_DTYPE_F32, dk, 3);
  g_autoptr(AccelBuffer) v = cpu_test_alloc (ACCEL_DTYPE_F32, dv, 3);
  g_autoptr(AccelBuffer) out = cpu_test_alloc (ACCEL_DTYPE_F32, dout, 3);
  g_autofree double *h1 = cpu_test_fill_random (q, -1, 1);
  g_autofree double *h2 = cpu_test_fill_random (k, -1, 1);
  g_autofree double *h3 = cpu_test_fill_random (v, -1, 1);
  const double good_q[3] = { 0, 4, 10 }, good_k[3] = { 0, 7, 12 };

  /* Bad cumulative lengths: the error names the entry, or the property
   * where the two counts disagree or leave no sequence. */
  static const struct {
    double cu_q[4], cu_k[4];
    gint64 n_q, n_k;
    AccelError code;
    const char *needle;
  } bad_cu[] = {
    { { 1, 4, 10 }, { 0, 7, 12 }, 3, 3, ACCEL_ERROR_INVALID_ARGUMENT, "“cu-seqlens-q”[0]" },
    { { 0, 4, 4, 10 }, { 0, 8, 5, 12 }, 4, 4, ACCEL_ERROR_INVALID_ARGUMENT, "“cu-seqlens-k”[2]" },
    { { 0, 4, 9 }, { 0, 7, 12 }, 3, 3, ACCEL_ERROR_INVALID_ARGUMENT, "“cu-seqlens-q”[2]" },
    { { 0, 4, 10 }, { 0, 4, 13 }, 3, 3, ACCEL_ERROR_INVALID_ARGUMENT, "“cu-seqlens-k”[2]" },
    { { 0, 4, 10 }, { 0, 3, 7, 12 }, 3, 4, ACCEL_ERROR_SHAPE_MISMATCH, "cu-seqlens-k" },
    { { 0 }, { 0 }, 1, 1, ACCEL_ERROR_SHAPE_MISMATCH, "cu-seqlens-q" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (bad_cu); i++)
    {
      g_autoptr(AccelOp) op = varlen_op_with_cu (q, k, v, out, bad_cu[i].cu_q, bad_cu[i].cu_k, bad_cu[i].n_q,
                                                 bad_cu[i].n_k);
      cpu_test_expect_error_naming (op, bad_cu[i].code, bad_cu[i].needle);
    }
  {
    gint64 d_bad_lse[2] = { 10, 4 };
    g_autoptr(AccelBuffer) lse = cpu_test_alloc (ACCEL_DTYPE_F32, d_bad_lse, 2);
    g_autoptr(AccelOp) op = varlen_op_with_cu (q, k, v, out, good_q, good_k, 3, 3);
    g_object_set (op, "lse", lse, NULL);
    cpu_test_expect_error_naming (op, ACCEL_ERROR_SHAPE_MISMATCH, "lse");
  }
  {
    gint64 d_bad[2] = { 3, 4 };
    g_autoptr(AccelBuffer) slopes = cpu_test_alloc (ACCEL_DTYPE_F32, d_bad, 2);
    g_autoptr(AccelOp) op = varlen_op_with_cu (q, k, v, out, good_q, good_k, 3, 3);
    g_object_set (op, "alibi-slopes", slopes, NULL);
    cpu_test_expect_error_naming (op, ACCEL_ERROR_SHAPE_MISMATCH, "alibi-slopes");
  }
  {
    gint64 d1[1] = { 3 };
    g_autoptr(AccelBuffer) cu64 = cpu_test_alloc (ACCEL_DTYPE_I64, d1, 1);
    g_autoptr(AccelBuffer) cuk = cpu_test_alloc (ACCEL_DTYPE_I32, d1, 1);
    cpu_test_write (cu64, good_q);
    cpu_test_write (cuk, good_k);
    g_autoptr(AccelOp) op = accel_attention_varlen_new (q, k, v, out, cu64, cuk);
    cpu_test_expect_error_naming (op, ACCEL_ERROR_DTYPE_UNSUPPORTED, "cu-seqlens-q");
  }
  {
    g_autoptr(AccelBuffer) q64 = cpu_test_alloc (ACCEL_DTYPE_F64, dq, 3);
    g_autoptr(AccelOp) op = varlen_op_with_cu (q64, k, v, out, good_q, good_k, 3, 3);
    cpu_test_expect_error_naming (op, ACCEL_ERROR_DTYPE_UNSUPPORTED, "k");
  }
  {
    g_autoptr(AccelBuffer) v_d = cpu_test_alloc (ACCEL_DTYPE_F32, dk, 3);
    g_autoptr(AccelOp) op = varlen_op_with_cu (q, k, v_d, q, good_q, good_k, 3, 3);
    cpu_test_expect_error_naming (op, ACCEL_ERROR_INVALID_ARGUMENT, "overlaps");
  }

  /* The device still works. */
  gint64 dims[1] = { 17 };
  g_autoptr(AccelBuffer) after = cpu_test_alloc (ACCEL_DTYPE_F64, dims, 1);
  double value = g_test_rand_double_range (-10, 10);
  g_autoptr(AccelOp) fill = accel_fill_new (after, value);
  cpu_test_submit (fill);
  g_autofree double *got = cpu_test_read (after);
  for (guint i = 0; i < 17; i++)
    g_assert_cmpfloat (got[i], ==, value);
}

/* The device's hazard tracking orders ops by what they read and write:
 * every buffer property of the variants states its access. */
static void
test_attention_buffer_access (void)
{
  static const struct {
    const char *op, *property;
    AccelAccess access;
  } table[] = {
    { "attention", "q", ACCEL_ACCESS_READ },
    { "attention", "k", ACCEL_ACCESS_READ },
    { "attention", "v", ACCEL_ACCESS_READ },
    { "attention", "alibi-slopes", ACCEL_ACCESS_READ },
    { "attention", "out", ACCEL_ACCESS_WRITE },
    { "attention", "lse", ACCEL_ACCESS_WRITE },
    { "attention-backward", "alibi-slopes", ACCEL_ACCESS_READ },
    { "attention-backward", "lse", ACCEL_ACCESS_READ },
    { "attention-backward", "dq", ACCEL_ACCESS_WRITE },
    { "attention-varlen", "q", ACCEL_ACCESS_READ },
    { "attention-varlen", "k", ACCEL_ACCESS_READ },
    { "attention-varlen", "v", ACCEL_ACCESS_READ },
    { "attention-varlen", "cu-seqlens-q", ACCEL_ACCESS_READ },
    { "attention-varlen", "cu-seqlens-k", ACCEL_ACCESS_READ },
    { "attention-varlen", "alibi-slopes", ACCEL_ACCESS_READ },
    { "attention-varlen", "out", ACCEL_ACCESS_WRITE },
    { "attention-varlen", "lse", ACCEL_ACCESS_WRITE },
    { "attention-kvcache", "q", ACCEL_ACCESS_READ },
    { "attention-kvcache", "k-cache", ACCEL_ACCESS_READ },
    { "attention-kvcache", "v-cache", ACCEL_ACCESS_READ },
    { "attention-kvcache", "block-table", ACCEL_ACCESS_READ },
    { "attention-kvcache", "seqlens-k", ACCEL_ACCESS_READ },
    { "attention-kvcache", "alibi-slopes", ACCEL_ACCESS_READ },
    { "attention-kvcache", "out", ACCEL_ACCESS_WRITE },
    { "attention-kvcache", "lse", ACCEL_ACCESS_WRITE },
  };

  for (guint i = 0; i < G_N_ELEMENTS (table); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(AccelOp) op = accel_op_new_by_name (table[i].op, &error);
      g_assert_no_error (error);
      AccelAccess got = accel_op_class_get_buffer_access (ACCEL_OP_GET_CLASS (op), table[i].property);
      if (got != table[i].access)
        g_test_fail_printf ("%s: “%s” has access %u, expected %u", table[i].op, table[i].property,
                            (guint) got, (guint) table[i].access);
    }
}

/* Ops cross to the device host process serialised: the new properties of
 * each variant, all away from their defaults, come back as they were. */
static void
test_attention_serialize (void)
{
  gint64 d4[4] = { 2, 4, 5, 8 }, d3[3] = { 7, 4, 8 }, d2[2] = { 2, 4 }, d1[1] = { 3 };
  g_autoptr(AccelBuffer) a = cpu_test_alloc (ACCEL_DTYPE_FP8_E4M3, d4, 4);
  g_autoptr(AccelBuffer) b = cpu_test_alloc (ACCEL_DTYPE_BF16, d4, 4);
  g_autoptr(AccelBuffer) c = cpu_test_alloc (ACCEL_DTYPE_F32, d3, 3);
  g_autoptr(AccelBuffer) slopes = cpu_test_alloc (ACCEL_DTYPE_F32, d2, 2);
  g_autoptr(AccelBuffer) cu_q = cpu_test_alloc (ACCEL_DTYPE_I32, d1, 1);
  g_autoptr(AccelBuffer) cu_k = cpu_test_alloc (ACCEL_DTYPE_I32, d1, 1);
  g_autoptr(AccelBuffer) lse = cpu_test_alloc (ACCEL_DTYPE_F32, d2, 2);
  g_autoptr(GPtrArray) buffers = g_ptr_array_new ();
  AccelBuffer *all[] = { a, b, c, slopes, cu_q, cu_k, lse };
  for (guint i = 0; i < G_N_ELEMENTS (all); i++)
    g_ptr_array_add (buffers, all[i]);

  AccelOp *ops[] = {
    accel_attention_new (a, a, a, b),
    accel_attention_backward_new (b, b, b, b, b, lse, c, c, c),
    accel_attention_varlen_new (c, c, c, c, cu_q, cu_k),
    accel_attention_kvcache_new (b, b, b, cu_q, cu_k, c),
  };
  g_object_set (ops[0], "alibi-slopes", slopes, "sinks", 3, "q-descale", 0.1, "k-descale", 1e-30,
                "v-descale", 12345.678, "window-left", 2, NULL);
  g_object_set (ops[1], "alibi-slopes", slopes, "sinks", 17, "causal", TRUE, NULL);
  g_object_set (ops[2], "alibi-slopes", slopes, "lse", lse, "sinks", 4, "causal", TRUE, "window-left", 9,
                "window-right", 0, "scale", 0.3, "softcap", 20.0, NULL);
  g_object_set (ops[3], "alibi-slopes", slopes, "lse", lse, "sinks", 1, "num-splits", 7, "causal", TRUE,
                "window-left", 5, "window-right", 2, "scale", 0.7, "softcap", 3.5, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    {
      g_autoptr(AccelOp) back = cpu_test_round_trip (ops[i], buffers);
      /* The fields the kernels read, not only the serialised form. */
      AccelBuffer *got_slopes = NULL;
      int sinks = -1;
      g_object_get (back, "alibi-slopes", &got_slopes, "sinks", &sinks, NULL);
      g_assert_true (got_slopes == slopes);
      g_clear_object (&got_slopes);
      g_assert_cmpint (sinks, ==, ((const int[]) { 3, 17, 4, 1 })[i]);
      g_object_unref (ops[i]);
      ops[i] = g_steal_pointer (&back);
    }

  AccelAttention *att = ACCEL_ATTENTION (ops[0]);
  g_assert_cmpfloat (att->q_descale, ==, 0.1);
  g_assert_cmpfloat (att->k_descale, ==, 1e-30);
  g_assert_cmpfloat (att->v_descale, ==, 12345.678);
  g_assert_true (att->alibi_slopes == slopes);
  g_assert_cmpint (att->sinks, ==, 3);
  AccelAttentionBackward *bwd = ACCEL_ATTENTION_BACKWARD (ops[1]);
  g_assert_true (bwd->alibi_slopes == slopes);
  g_assert_cmpint (bwd->sinks, ==, 17);
  AccelAttentionVarlen *var = ACCEL_ATTENTION_VARLEN (ops[2]);
  g_assert_true (var->cu_seqlens_q == cu_q && var->cu_seqlens_k == cu_k && var->lse == lse);
  g_assert_true (var->alibi_slopes == slopes);
  g_assert_cmpint (var->sinks, ==, 4);
  g_assert_cmpint (var->window_left, ==, 9);
  g_assert_cmpint (var->window_right, ==, 0);
  g_assert_cmpfloat (var->scale, ==, 0.3);
  g_assert_cmpfloat (var->softcap, ==, 20.0);
  g_assert_true (var->causal);
  AccelAttentionKvcache *kv = ACCEL_ATTENTION_KVCACHE (ops[3]);
  g_assert_true (kv->q == b && kv->k_cache == b && kv->v_cache == b && kv->out == c);
  g_assert_true (kv->block_table == cu_q && kv->seqlens_k == cu_k && kv->lse == lse);
  g_assert_true (kv->alibi_slopes == slopes);
  g_assert_cmpint (kv->sinks, ==, 1);
  g_assert_cmpint (kv->num_splits, ==, 7);
  g_assert_cmpint (kv->window_left, ==, 5);
  g_assert_cmpint (kv->window_right, ==, 2);
  g_assert_cmpfloat (kv->scale, ==, 0.7);
  g_assert_cmpfloat (kv->softcap, ==, 3.5);
  g_assert_true (kv->causal);

  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    g_object_unref (ops[i]);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cpu/attention/variant-errors", test_attention_variant_errors);
  g_test_add_func ("/cpu/attention-varlen/errors", test_attention_varlen_errors);
  g_test_add_func ("/cpu/attention/ops/buffer-access", test_attention_buffer_access);
  g_test_add_func ("/cpu/attention/ops/serialize", test_attention_serialize);
  return cpu_test_run ();
}
