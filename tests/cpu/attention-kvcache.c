/* attention-kvcache on cpu:0 against a dense reference built here: the
 * pages are gathered back into contiguous keys and values through a
 * shuffled block table, the mask is written out key by key, and the
 * softmax is computed in binary64 on the stored inputs. Decode and chunked
 * prefill, odd page sizes, grouped heads, windows with sinks, ALiBi, soft
 * cap, lse; then every bad input.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include "cpu-test.h"
#include "accel-test-values.h"

typedef struct {
  gint64 B, Hq, Hkv, Sq, D, Dv, page, max_blocks;
  gint64 lens[4];
  gboolean causal;
  int window_left, window_right, sinks;
  double softcap;
  gboolean alibi;
} KvCase;

typedef struct {
  AccelBuffer *q, *k, *v, *table, *lens, *out, *lse, *slopes;
  double *hq, *hk, *hv, *hslopes;
  gint32 *htable;
  gint64 P;
} KvBuffers;

static void
kv_buffers_clear (KvBuffers *b)
{
  g_clear_object (&b->q);
  g_clear_object (&b->k);
  g_clear_object (&b->v);
  g_clear_object (&b->table);
  g_clear_object (&b->lens);
  g_clear_object (&b->out);
  g_clear_object (&b->lse);
  g_clear_object (&b->slopes);
  g_free (b->hq);
  g_free (b->hk);
  g_free (b->hv);
  g_free (b->hslopes);
  g_free (b->htable);
}

/* Writes the block table of @b, with entry @at (if not negative) replaced
 * by @value. */
static void
write_table (const KvCase *c, const KvBuffers *b, gint64 at, double value)
{
  g_autofree double *table = g_new (double, c->B * c->max_blocks);
  for (gint64 i = 0; i < c->B * c->max_blocks; i++)
    table[i] = b->htable[i];
  if (at >= 0)
    table[at] = value;
  cpu_test_write (b->table, table);
}

/* Writes the sequence lengths of @c, with that of sequence @at (if not
 * negative) replaced by @value. */
static void
write_lens (const KvCase *c, const KvBuffers *b, gint64 at, double value)
{
  double lens[4];
  for (gint64 i = 0; i < c->B; i++)
    lens[i] = (double) c->lens[i];
  if (at >= 0)
    lens[at] = value;
  cpu_test_write (b->lens, lens);
}

/* The row of the caches that holds key @j of kv head @hk of sequence @bb. */
static gint64
cache_row (const KvCase *c, const KvBuffers *b, gint64 bb, gint64 hk, gint64 j)
{
  gint64 page = b->htable[bb * c->max_blocks + j / c->page];
  return (page * c->page + j % c->page) * c->Hkv + hk;
}

/* Pages are handed out in a shuffled order, with one spare page. */
static AccelOp *
make_op (AccelDType dt, const KvCase *c, KvBuffers *b)
{
  b->P = c->B * c->max_blocks + 1;
  gint64 dq[4] = { c->B, c->Hq, c->Sq, c->D }, dk[4] = { b->P, c->page, c->Hkv, c->D };
  gint64 dv[4] = { b->P, c->page, c->Hkv, c->Dv }, dout[4] = { c->B, c->Hq, c->Sq, c->Dv };
  gint64 dt2[2] = { c->B, c->max_blocks }, dl[1] = { c->B }, dlse[3] = { c->B, c->Hq, c->Sq };
  gint64 ds[1] = { c->Hq };

  b->q = cpu_test_alloc (dt, dq, 4);
  b->k = cpu_test_alloc (dt, dk, 4);
  b->v = cpu_test_alloc (dt, dv, 4);
  b->hq = cpu_test_fill_random (b->q, -1, 1);
  b->hk = cpu_test_fill_random (b->k, -1, 1);
  b->hv = cpu_test_fill_random (b->v, -1, 1);
  b->out = cpu_test_alloc (dt, dout, 4);
  b->lse = cpu_test_alloc (ACCEL_DTYPE_F32, dlse, 3);

  gint64 n = c->B * c->max_blocks;
  gint32 *perm = accel_test_random_permutation (b->P);
  b->htable = g_new (gint32, n);
  for (gint64 i = 0; i < n; i++)
    b->htable[i] = perm[i];
  g_free (perm);
  b->table = cpu_test_alloc (ACCEL_DTYPE_I32, dt2, 2);
  write_table (c, b, -1, 0);
  b->lens = cpu_test_alloc (ACCEL_DTYPE_I32, dl, 1);
  write_lens (c, b, -1, 0);

  AccelOp *op = accel_attention_kvcache_new (b->q, b->k, b->v, b->table, b->lens, b->out);
  g_object_set (op, "lse", b->lse, "causal", c->causal, "window-left", c->window_left,
                "window-right", c->window_right, "sinks", c->sinks, "softcap", c->softcap, NULL);
  if (c->alibi)
    {
      b->slopes = cpu_test_alloc (ACCEL_DTYPE_F32, ds, 1);
      b->hslopes = cpu_test_fill_random (b->slopes, 0.01, 0.5);
      g_object_set (op, "alibi-slopes", b->slopes, NULL);
    }
  return op;
}

static gboolean
visible (const KvCase *c, gint64 L, gint64 p, gint64 j)
{
  if (j >= L)
    return FALSE;
  if (c->causal && j > p)
    return FALSE;
  if (c->window_right >= 0 && j > p + c->window_right)
    return FALSE;
  if (c->window_left >= 0 && j < p - c->window_left && j >= c->sinks)
    return FALSE;
  return TRUE;
}

static void
check_case (AccelDType dt, const KvCase *c)
{
  KvBuffers b = { 0 };
  g_autoptr(AccelOp) op = make_op (dt, c, &b);
  cpu_test_submit (op);
  g_autofree double *got = cpu_test_read (b.out);
  g_autofree double *got_lse = cpu_test_read (b.lse);

  gint64 rows = c->B * c->Hq * c->Sq, longest = 0;
  for (gint64 i = 0; i < c->B; i++)
    longest = MAX (longest, c->lens[i]);
  g_autofree double *want = g_new0 (double, rows * c->Dv);
  g_autofree double *want_lse = g_new (double, rows);
  g_autofree double *scale_o = g_new0 (double, rows * c->Dv);
  g_autofree double *kk = g_new (double, MAX (longest, 1) * c->D);
  g_autofree double *vv = g_new (double, MAX (longest, 1) * c->Dv);
  g_autofree double *s = g_new (double, MAX (longest, 1));
  double scale = 1 / sqrt ((double) c->D);

  for (gint64 bb = 0; bb < c->B; bb++)
    for (gint64 h = 0; h < c->Hq; h++)
      {
        gint64 hk = h / (c->Hq / c->Hkv), L = c->lens[bb];
        /* Gather this head's keys and values back into order. */
        for (gint64 j = 0; j < L; j++)
          {
            gint64 r = cache_row (c, &b, bb, hk, j);
            for (gint64 e = 0; e < c->D; e++)
              kk[j * c->D + e] = b.hk[r * c->D + e];
            for (gint64 e = 0; e < c->Dv; e++)
              vv[j * c->Dv + e] = b.hv[r * c->Dv + e];
          }
        for (gint64 i = 0; i < c->Sq; i++)
          {
            gint64 row = (bb * c->Hq + h) * c->Sq + i, p = L - c->Sq + i;
            double m = -INFINITY, sum = 0;
            for (gint64 j = 0; j < L; j++)
              {
                if (!visible (c, L, p, j))
                  continue;
                double d = 0;
                for (gint64 e = 0; e < c->D; e++)
                  d += b.hq[row * c->D + e] * kk[j * c->D + e];
                d *= scale;
                if (c->softcap > 0)
                  d = c->softcap * tanh (d / c->softcap);
                if (c->alibi)
                  d -= b.hslopes[h] * fabs ((double) (p - j));
                s[j] = d;
                m = MAX (m, d);
              }
            for (gint64 j = 0; j < L; j++)
              if (visible (c, L, p, j))
                sum += exp (s[j] - m);
            want_lse[row] = sum > 0 ? m + log (sum) : -INFINITY;
            for (gint64 j = 0; j < L; j++)
              if (visible (c, L, p, j))
                {
                  double w = exp (s[j] - m) / sum;
                  for (gint64 e = 0; e < c->Dv; e++)
                    {
                      want[row * c->Dv + e] += w * vv[j * c->Dv + e];
                      scale_o[row * c->Dv + e] += w * fabs (vv[j * c->Dv + e]);
                    }
                }
          }
      }

  double eps = cpu_test_eps (dt);
  cpu_test_assert_close ("attention-kvcache out", got, want, scale_o, rows * c->Dv, 4 * eps + 1e-12, 1e-12);
  for (gint64 r = 0; r < rows; r++)
    {
      if (isinf (want_lse[r]))
        g_assert_true (isinf (got_lse[r]) && got_lse[r] < 0);
      else
        g_assert_cmpfloat (fabs (got_lse[r] - want_lse[r]), <=, 1e-5 * (1 + fabs (want_lse[r])));
    }
  kv_buffers_clear (&b);
}

static const KvCase cases[] = {
  /* B  Hq Hkv Sq  D   Dv  page  max_blocks  lens            causal wl  wr  sinks softcap alibi */
  { 3, 4, 2, 1, 16, 16, 7, 5, { 33, 1, 35 }, TRUE, -1, -1, 0, 0, FALSE },     /* decode, odd pages */
  { 2, 6, 2, 1, 8, 5, 16, 3, { 0, 48 }, TRUE, -1, -1, 0, 0, TRUE },           /* an empty sequence */
  { 2, 4, 1, 9, 16, 16, 4, 6, { 21, 9 }, TRUE, 5, -1, 2, 0, FALSE },          /* chunked prefill, sinks */
  { 1, 2, 2, 13, 8, 8, 3, 9, { 25 }, FALSE, 4, 3, 1, 0, TRUE },               /* windows both ways */
  { 2, 3, 3, 5, 12, 7, 5, 4, { 3, 20 }, TRUE, -1, -1, 0, 4.0, FALSE },        /* Sq > L: rows see nothing */
  { 4, 8, 2, 2, 32, 32, 16, 4, { 64, 17, 1, 40 }, FALSE, -1, -1, 0, 2.0, TRUE },
};

static void
test_kvcache (gconstpointer data)
{
  AccelDType dt = GPOINTER_TO_INT (data);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    check_case (dt, &cases[i]);
}

/* The same op against plain `attention` run on each sequence's keys and
 * values gathered back into contiguous buffers, with per-batch ALiBi
 * slopes [B, Hq], an explicit scale and a split-count hint (which must not
 * change the result). */
static void
check_against_attention (AccelDType dt, const KvCase *c, double scale, int num_splits)
{
  KvCase plain_case = *c;
  plain_case.alibi = FALSE;
  KvBuffers b = { 0 };
  g_autoptr(AccelOp) op = make_op (dt, &plain_case, &b);
  gint64 dslopes[2] = { c->B, c->Hq };
  g_autoptr(AccelBuffer) slopes = c->alibi ? cpu_test_alloc (ACCEL_DTYPE_F32, dslopes, 2) : NULL;
  g_autofree double *hslopes = slopes ? cpu_test_fill_random (slopes, 0.01, 0.5) : NULL;
  g_object_set (op, "alibi-slopes", slopes, "scale", scale, "num-splits", num_splits, NULL);
  cpu_test_submit (op);
  g_autofree double *got = cpu_test_read (b.out);
  g_autofree double *got_lse = cpu_test_read (b.lse);
  g_autofree char *what = g_strdup_printf ("attention-kvcache %s vs attention: B%" G_GINT64_FORMAT " Hq%"
                                           G_GINT64_FORMAT " Hkv%" G_GINT64_FORMAT " Sq%" G_GINT64_FORMAT
                                           " page %" G_GINT64_FORMAT " causal %d window %d,%d sinks %d"
                                           " scale %g softcap %g splits %d alibi %d",
                                           accel_dtype_get_name (dt), c->B, c->Hq, c->Hkv, c->Sq, c->page,
                                           c->causal, c->window_left, c->window_right, c->sinks, scale,
                                           c->softcap, num_splits, c->alibi);

  for (gint64 bb = 0; bb < c->B; bb++)
    {
      gint64 L = c->lens[bb], n = c->Hq * c->Sq;
      const double *got_b = got + bb * n * c->Dv, *got_lse_b = got_lse + bb * n;
      g_autofree char *bwhat = g_strdup_printf ("%s, sequence %" G_GINT64_FORMAT " (L %" G_GINT64_FORMAT ")",
                                                what, bb, L);
      if (L == 0)
        {
          /* No cached key: zeros and -inf (plain attention has no empty key axis). */
          for (gint64 r = 0; r < n * c->Dv; r++)
            g_assert_cmpfloat (got_b[r], ==, 0.0);
          for (gint64 r = 0; r < n; r++)
            g_assert_true (isinf (got_lse_b[r]) && got_lse_b[r] < 0);
          continue;
        }
      gint64 dq[4] = { 1, c->Hq, c->Sq, c->D }, dk[4] = { 1, c->Hkv, L, c->D };
      gint64 dv[4] = { 1, c->Hkv, L, c->Dv }, dout[4] = { 1, c->Hq, c->Sq, c->Dv }, dh[1] = { c->Hq };
      g_autoptr(AccelBuffer) q1 = cpu_test_alloc (dt, dq, 4);
      g_autoptr(AccelBuffer) k1 = cpu_test_alloc (dt, dk, 4);
      g_autoptr(AccelBuffer) v1 = cpu_test_alloc (dt, dv, 4);
      g_autoptr(AccelBuffer) o1 = cpu_test_alloc (dt, dout, 4);
      g_autoptr(AccelBuffer) l1 = cpu_test_alloc (ACCEL_DTYPE_F32, dout, 3);
      g_autoptr(AccelBuffer) a1 = slopes ? cpu_test_alloc (ACCEL_DTYPE_F32, dh, 1) : NULL;
      g_autofree double *tk = g_new (double, c->Hkv * L * c->D);
      g_autofree double *tv = g_new (double, c->Hkv * L * c->Dv);
      for (gint64 hk = 0; hk < c->Hkv; hk++)
        for (gint64 j = 0; j < L; j++)
          {
            gint64 r = cache_row (c, &b, bb, hk, j);
            memcpy (tk + (hk * L + j) * c->D, b.hk + r * c->D, c->D * sizeof (double));
            memcpy (tv + (hk * L + j) * c->Dv, b.hv + r * c->Dv, c->Dv * sizeof (double));
          }
      cpu_test_write (q1, b.hq + bb * n * c->D);
      cpu_test_write (k1, tk);
      cpu_test_write (v1, tv);
      if (a1 != NULL)
        cpu_test_write (a1, hslopes + bb * c->Hq);
      g_autoptr(AccelOp) one = accel_attention_new (q1, k1, v1, o1);
      g_object_set (one, "lse", l1, "causal", c->causal, "window-left", c->window_left,
                    "window-right", c->window_right, "sinks", c->sinks, "scale", scale,
                    "softcap", c->softcap, "alibi-slopes", a1, NULL);
      cpu_test_submit (one);
      g_autofree double *want = cpu_test_read (o1);
      g_autofree double *want_lse = cpu_test_read (l1);
      /* Both round a weighted mean of values in [-1, 1] to the dtype once. */
      cpu_test_assert_close (bwhat, got_b, want, NULL, n * c->Dv, 0.0, 2 * cpu_test_eps (dt) + 2e-5);
      for (gint64 r = 0; r < n; r++)
        {
          if (isinf (want_lse[r]))
            g_assert_true (isinf (got_lse_b[r]) && got_lse_b[r] < 0);
          else if (fabs (got_lse_b[r] - want_lse[r]) > 2e-5 * (1 + fabs (want_lse[r])))
            g_error ("%s: lse of row %" G_GINT64_FORMAT " is %.9g, plain attention gives %.9g",
                     bwhat, r, got_lse_b[r], want_lse[r]);
        }
    }
  kv_buffers_clear (&b);
}

static void
test_kvcache_vs_attention (gconstpointer data)
{
  AccelDType dt = GPOINTER_TO_INT (data);
  const KvCase vs_cases[] = {
    /* B  Hq Hkv Sq D   Dv  page max_blocks lens             causal wl  wr sinks softcap alibi */
    { 3, 6, 3, 1, 11, 7, 5, 7, { 31, 0, 9 }, TRUE, -1, -1, 0, 0, TRUE },        /* decode */
    { 2, 4, 1, 7, 9, 13, 3, 9, { 25, 7 }, TRUE, 4, -1, 3, 0, TRUE },            /* prefill, sinks */
    { 2, 2, 2, 5, 16, 8, 16, 2, { 19, 3 }, FALSE, 2, 1, 1, 2.5, TRUE },         /* Sq > L, windows */
    { 4, 3, 1, 3, 5, 5, 1, 11, { 11, 1, 4, 0 }, TRUE, 0, -1, 2, 0, FALSE },     /* one-row pages */
  };
  const int splits[] = { 0, 1, 3, 64 };

  for (guint i = 0; i < G_N_ELEMENTS (vs_cases); i++)
    check_against_attention (dt, &vs_cases[i], 0.13 + 0.2 * i, splits[i]);
}

static void
expect_table_error (const KvCase *c, gint64 seq, gint64 block, gint32 page_value, gint32 len_value,
                    const char *substring)
{
  KvBuffers b = { 0 };
  g_autoptr(AccelOp) op = make_op (ACCEL_DTYPE_F32, c, &b);
  g_autoptr(GError) error = NULL;

  if (block >= 0)
    write_table (c, &b, seq * c->max_blocks + block, page_value);
  else
    write_lens (c, &b, seq, len_value);
  accel_device_submit (cpu_test_device (), op, NULL, &error);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, substring));
  kv_buffers_clear (&b);
}

/* make_op's f32 op of @c, with its buffer @property replaced by a fresh
 * @dtype one of @dims, fails with @code and a message naming @needle. */
static void
expect_replaced_error (const KvCase *c, const char *property, AccelDType dtype, const gint64 *dims, guint rank,
                       AccelError code, const char *needle)
{
  KvBuffers b = { 0 };
  g_autoptr(AccelOp) op = make_op (ACCEL_DTYPE_F32, c, &b);
  g_autoptr(AccelBuffer) bad = cpu_test_alloc (dtype, dims, rank);
  g_object_set (op, property, bad, NULL);
  cpu_test_expect_error_naming (op, code, needle);
  kv_buffers_clear (&b);
}

static void
test_kvcache_bad (void)
{
  const KvCase c = { 2, 4, 2, 1, 8, 8, 4, 3, { 9, 12 }, TRUE, -1, -1, 0, 0, FALSE };

  /* A page past the cache, a negative one, in a block in use. */
  expect_table_error (&c, 1, 2, 7, 0, "[1, 2]");
  expect_table_error (&c, 0, 0, -1, 0, "[0, 0]");
  /* Lengths beyond max_blocks x page, or negative. */
  expect_table_error (&c, 0, -1, 0, 13, "sequence 0");
  expect_table_error (&c, 1, -1, 0, -2, "sequence 1");
  /* A bad entry in a block no sequence uses is never read: fine. */
  {
    const KvCase short_case = { 2, 4, 2, 1, 8, 8, 4, 3, { 5, 12 }, TRUE, -1, -1, 0, 0, FALSE };
    KvBuffers b = { 0 };
    g_autoptr(AccelOp) op = make_op (ACCEL_DTYPE_F32, &short_case, &b);
    write_table (&short_case, &b, 2, 1000);   /* sequence 0 has 5 keys: blocks 0 and 1 */
    cpu_test_submit (op);
    kv_buffers_clear (&b);
  }

  /* Shapes and types, refused at validation. */
  const gint64 P = c.B * c.max_blocks + 1;
  const gint64 d_k3[4] = { P, c.page, 3, c.D }, d_b1[1] = { 3 }, d_table[2] = { c.B, c.max_blocks };
  const gint64 d_h5[1] = { 5 }, d_q[4] = { c.B, c.Hq, c.Sq, c.D }, d_v[4] = { P, c.page + 1, c.Hkv, c.Dv };
  expect_replaced_error (&c, "k-cache", ACCEL_DTYPE_F32, d_k3, 4, ACCEL_ERROR_SHAPE_MISMATCH, "3 heads");
  expect_replaced_error (&c, "seqlens-k", ACCEL_DTYPE_I32, d_b1, 1, ACCEL_ERROR_SHAPE_MISMATCH, "seqlens-k");
  expect_replaced_error (&c, "block-table", ACCEL_DTYPE_I64, d_table, 2, ACCEL_ERROR_DTYPE_UNSUPPORTED,
                         "block-table");
  expect_replaced_error (&c, "alibi-slopes", ACCEL_DTYPE_F32, d_h5, 1, ACCEL_ERROR_SHAPE_MISMATCH, "alibi-slopes");
  /* q of another dtype than the caches. */
  expect_replaced_error (&c, "q", ACCEL_DTYPE_F16, d_q, 4, ACCEL_ERROR_DTYPE_UNSUPPORTED, "k-cache");
  /* v-cache pages of another size. */
  expect_replaced_error (&c, "v-cache", ACCEL_DTYPE_F32, d_v, 4, ACCEL_ERROR_SHAPE_MISMATCH, "v-cache");
  {
    /* fp8 is a forward type of plain attention only. */
    KvBuffers b = { 0 };
    g_autoptr(AccelOp) op = make_op (ACCEL_DTYPE_F32, &c, &b);
    gint64 dq[4] = { c.B, c.Hq, c.Sq, c.D }, dk[4] = { b.P, c.page, c.Hkv, c.D };
    g_autoptr(AccelBuffer) q8 = cpu_test_alloc (ACCEL_DTYPE_FP8_E4M3, dq, 4);
    g_autoptr(AccelBuffer) k8 = cpu_test_alloc (ACCEL_DTYPE_FP8_E4M3, dk, 4);
    g_object_set (op, "q", q8, "k-cache", k8, "v-cache", k8, NULL);
    cpu_test_expect_error_naming (op, ACCEL_ERROR_DTYPE_UNSUPPORTED, "q");
    kv_buffers_clear (&b);
  }
  {
    /* A block table for another batch, seqlens-k of another type, an lse of another shape. */
    KvBuffers b = { 0 };
    g_autoptr(AccelOp) op = make_op (ACCEL_DTYPE_F32, &c, &b);
    gint64 dt[2] = { c.B + 1, c.max_blocks }, dl[1] = { c.B }, dlse[3] = { c.B, c.Sq, c.Hq + 1 };
    g_autoptr(AccelBuffer) table = cpu_test_alloc (ACCEL_DTYPE_I32, dt, 2);
    g_autoptr(AccelBuffer) lens = cpu_test_alloc (ACCEL_DTYPE_F32, dl, 1);
    g_autoptr(AccelBuffer) lse = cpu_test_alloc (ACCEL_DTYPE_F32, dlse, 3);
    AccelBuffer *old_table = g_object_ref (b.table), *old_lens = g_object_ref (b.lens);
    g_object_set (op, "block-table", table, NULL);
    cpu_test_expect_error_naming (op, ACCEL_ERROR_SHAPE_MISMATCH, "block-table");
    g_object_set (op, "block-table", old_table, "seqlens-k", lens, NULL);
    cpu_test_expect_error_naming (op, ACCEL_ERROR_DTYPE_UNSUPPORTED, "seqlens-k");
    g_object_set (op, "seqlens-k", old_lens, "lse", lse, NULL);
    cpu_test_expect_error_naming (op, ACCEL_ERROR_SHAPE_MISMATCH, "lse");
    g_object_unref (old_table);
    g_object_unref (old_lens);
    kv_buffers_clear (&b);
  }
  {
    /* Results that overlap an input: out on q, ALiBi slopes inside out. */
    KvBuffers b = { 0 };
    g_autoptr(AccelOp) op = make_op (ACCEL_DTYPE_F32, &c, &b);
    g_object_set (op, "out", b.q, NULL);
    cpu_test_expect_error_naming (op, ACCEL_ERROR_INVALID_ARGUMENT, "overlaps");
    gint64 dh[1] = { c.Hq };
    g_autoptr(AccelShape) sh = accel_shape_new (dh, 1);
    g_autoptr(GError) verr = NULL;
    g_autoptr(AccelBuffer) view = accel_buffer_new_view (b.out, 3, sh, &verr);
    g_assert_no_error (verr);
    g_object_set (op, "out", b.out, "alibi-slopes", view, NULL);
    cpu_test_expect_error_naming (op, ACCEL_ERROR_INVALID_ARGUMENT, "alibi-slopes");
    kv_buffers_clear (&b);
  }

  /* The device still works. */
  check_case (ACCEL_DTYPE_F32, &c);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  cpu_test_add_per_float_dtype ("/cpu/attention-kvcache", test_kvcache);
  cpu_test_add_per_float_dtype ("/cpu/attention-kvcache/vs-attention", test_kvcache_vs_attention);
  g_test_add_func ("/cpu/attention-kvcache/bad-input", test_kvcache_bad);
  return cpu_test_run ();
}
