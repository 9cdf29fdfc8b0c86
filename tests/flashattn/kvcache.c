/* attention-kvcache on cuda:0 (the split-KV kernels of cuda_flashattn)
 * against the CPU oracle on cpu:0, on fresh random inputs: decode (Sq = 1)
 * and chunked prefill (Sq = 37), pages of 16, 256 and 7 rows scattered
 * through the cache by a random block table (entries past each sequence's
 * blocks hold garbage, which must be neither read nor reported), context
 * lengths of 0, odd, and on and beside page boundaries, grouped and
 * multi-query heads, windows with sinks, ALiBi, soft cap, causal prefill
 * whose early queries see no key, forced and automatic split counts, lse;
 * bf16 and f16 at head dims 64, 128 and 256. Then the device-side checks: a
 * bad seqlens-k or block-table entry fails the op with
 * ACCEL_ERROR_INVALID_ARGUMENT naming the sequence (and block), and the
 * device goes on working.
 *
 * Tolerances (relative L2 error of the whole output): 1e-2 for bf16, 5e-3
 * for f16; lse within 1e-3 (relative above 1); no NaN anywhere.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include "../cuda/cuda-test.h"

#define OP_NAME "attention-kvcache"
#define MAX_B 8

typedef struct {
  const char *name;
  gint64 B, Hq, Hkv, Sq, page;
  int lens[MAX_B];          /* L of each sequence */
  gboolean causal;
  int window_left, window_right, sinks;
  int alibi;                /* 0: none, 1: [Hq], 2: [B, Hq] */
  double softcap;
  int num_splits;           /* 0: the kernel chooses */
} Case;

static const Case cases[] = {
  { "decode-mha-page16", 6, 4, 4, 1, 16, { 0, 16, 17, 1, 203, 255 }, FALSE, -1, -1, 0, 0, 0, 0 },
  { "decode-gqa-page256", 4, 8, 2, 1, 256, { 256, 257, 511, 1000 }, FALSE, -1, -1, 0, 0, 0, 0 },
  { "decode-mqa-page7", 3, 6, 1, 1, 7, { 7, 50, 333 }, FALSE, -1, -1, 0, 0, 0, 0 },
  { "decode-window-sinks", 3, 4, 2, 1, 16, { 300, 41, 5 }, TRUE, 40, -1, 4, 0, 0, 0 },
  { "decode-alibi-softcap", 3, 4, 4, 1, 16, { 100, 190, 64 }, TRUE, -1, -1, 0, 2, 30.0, 0 },
  { "decode-alibi-heads", 2, 4, 1, 1, 7, { 90, 13 }, FALSE, -1, -1, 0, 1, 0, 0 },
  { "decode-seven-splits", 2, 4, 2, 1, 16, { 1000, 33 }, FALSE, -1, -1, 0, 0, 0, 7 },
  { "decode-one-split", 2, 4, 2, 1, 16, { 1000, 0 }, FALSE, -1, -1, 0, 0, 0, 1 },
  { "prefill-causal", 3, 4, 2, 37, 16, { 137, 37, 20 }, TRUE, -1, -1, 0, 0, 0, 0 },   /* L < Sq: early rows see nothing */
  { "prefill-causal-window-page7", 2, 8, 2, 37, 7, { 200, 90 }, TRUE, 50, -1, 3, 0, 0, 0 },
  { "prefill-right-window-page256", 2, 2, 2, 37, 256, { 300, 37 }, FALSE, -1, 5, 0, 1, 0, 3 },
};

typedef struct {
  AccelDType dtype;
  gint64 D;
  const Case *c;
} Param;

/* Whether the op type and its CPU oracle exist yet; skips otherwise. */
static gboolean
have_op (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelOp) op = accel_op_new_by_name (OP_NAME, &error);
  if (op == NULL)
    {
      g_autofree char *why = g_strdup_printf ("no op type “" OP_NAME "” (%s)", error->message);
      g_test_skip (why);
      return FALSE;
    }
  return TRUE;
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

static void
expect_close (const char *what, AccelBuffer *got_buffer, AccelBuffer *want_buffer, double tol)
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

static void
expect_lse_close (AccelBuffer *got_buffer, AccelBuffer *want_buffer)
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

static AccelBuffer *
int_buffer (AccelDevice *device, const gint64 *dims, guint rank, const double *values)
{
  AccelBuffer *b = ct_alloc (device, ACCEL_DTYPE_I32, dims, rank);
  ct_write (b, values);
  return b;
}

/* The paged inputs of one case, the same on both devices. */
typedef struct {
  gint64 P, max_blocks;
  CtPair *q, *k_cache, *v_cache, *out, *lse, *alibi;
  AccelBuffer *table[2], *lens[2];   /* [0] cpu, [1] gpu */
} Inputs;

static void
inputs_clear (Inputs *in)
{
  g_clear_pointer (&in->q, ct_pair_free);
  g_clear_pointer (&in->k_cache, ct_pair_free);
  g_clear_pointer (&in->v_cache, ct_pair_free);
  g_clear_pointer (&in->out, ct_pair_free);
  g_clear_pointer (&in->lse, ct_pair_free);
  g_clear_pointer (&in->alibi, ct_pair_free);
  for (guint i = 0; i < 2; i++)
    {
      g_clear_object (&in->table[i]);
      g_clear_object (&in->lens[i]);
    }
}

/* A cache with a few pages to spare, each sequence's blocks on pages drawn
 * at random without repetition, and garbage past each sequence's blocks. */
static void
inputs_make (Inputs *in, const Case *c, AccelDType dtype, gint64 D)
{
  gint64 used = 0, max_blocks = 1;
  for (gint64 b = 0; b < c->B; b++)
    {
      gint64 n = (c->lens[b] + c->page - 1) / c->page;
      used += n;
      max_blocks = MAX (max_blocks, n + 2);
    }
  memset (in, 0, sizeof *in);
  in->P = used + 3;
  in->max_blocks = max_blocks;

  g_autofree gint32 *perm = g_new (gint32, in->P);
  for (gint64 i = 0; i < in->P; i++)
    perm[i] = (gint32) i;
  for (gint64 i = in->P - 1; i > 0; i--)
    {
      gint64 j = g_test_rand_int_range (0, (gint32) i + 1);
      gint32 t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
  g_autofree double *table = g_new (double, c->B * max_blocks);
  g_autofree double *lens = g_new (double, c->B);
  gint64 next = 0;
  for (gint64 b = 0; b < c->B; b++)
    {
      gint64 n = (c->lens[b] + c->page - 1) / c->page;
      for (gint64 k = 0; k < max_blocks; k++)
        table[b * max_blocks + k] = k < n ? perm[next++] : (k % 2 ? -5 : in->P + 1000);
      lens[b] = c->lens[b];
    }

  gint64 dq[4] = { c->B, c->Hq, c->Sq, D };
  gint64 dc[4] = { in->P, c->page, c->Hkv, D };
  gint64 dl[3] = { c->B, c->Hq, c->Sq };
  gint64 dt[2] = { c->B, max_blocks };
  in->q = ct_pair_new (dtype, dq, 4, -2, 2);
  in->k_cache = ct_pair_new (dtype, dc, 4, -2, 2);
  in->v_cache = ct_pair_new (dtype, dc, 4, -1, 1);
  /* Outputs start as garbage, so unwritten elements show. */
  in->out = ct_pair_new (dtype, dq, 4, -9, 9);
  in->lse = ct_pair_new (ACCEL_DTYPE_F32, dl, 3, -9, 9);
  if (c->alibi == 1)
    in->alibi = ct_pair_new (ACCEL_DTYPE_F32, &c->Hq, 1, 0.01, 0.5);
  else if (c->alibi == 2)
    {
      gint64 da[2] = { c->B, c->Hq };
      in->alibi = ct_pair_new (ACCEL_DTYPE_F32, da, 2, 0.01, 0.5);
    }
  gint64 db[1] = { c->B };
  for (guint i = 0; i < 2; i++)
    {
      AccelDevice *device = i ? ct_gpu () : ct_cpu ();
      in->table[i] = int_buffer (device, dt, 2, table);
      in->lens[i] = int_buffer (device, db, 1, lens);
    }
}

static AccelOp *
make_op (const Case *c, const Inputs *in, gboolean on_gpu)
{
  int i = on_gpu ? 1 : 0;
#define SIDE(pair) ((pair) ? (on_gpu ? (pair)->gpu : (pair)->cpu) : NULL)
  AccelOp *op = accel_op_new (OP_NAME, "q", SIDE (in->q), "k-cache", SIDE (in->k_cache),
                              "v-cache", SIDE (in->v_cache), "block-table", in->table[i],
                              "seqlens-k", in->lens[i], "out", SIDE (in->out), "lse", SIDE (in->lse),
                              "causal", c->causal, "window-left", c->window_left,
                              "window-right", c->window_right, "sinks", c->sinks, "softcap", c->softcap,
                              "num-splits", c->num_splits, NULL);
  if (in->alibi)
    g_object_set (op, "alibi-slopes", SIDE (in->alibi), NULL);
#undef SIDE
  return op;
}

static void
test_kvcache (gconstpointer data)
{
  const Param *p = data;
  const Case *c = p->c;
  if (ct_gpu () == NULL || !have_op ())
    return;

  Inputs in;
  inputs_make (&in, c, p->dtype, p->D);
  g_test_message ("%" G_GINT64_FORMAT " pages of %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT " blocks per sequence",
                  in.P, c->page, in.max_blocks);
  g_autoptr(AccelOp) on_cpu = make_op (c, &in, FALSE);
  g_autoptr(AccelOp) on_gpu = make_op (c, &in, TRUE);
  ct_submit (ct_cpu (), on_cpu);
  ct_submit (ct_gpu (), on_gpu);
  expect_close ("out", in.out->gpu, in.out->cpu, p->dtype == ACCEL_DTYPE_BF16 ? 1e-2 : 5e-3);
  expect_lse_close (in.lse->gpu, in.lse->cpu);
  inputs_clear (&in);
}

static void
expect_gpu_error (AccelOp *op, const char *fragment, const char *fragment2)
{
  g_autoptr(GError) error = NULL;
  gboolean ok = accel_device_submit (ct_gpu (), op, NULL, &error);
  g_assert_false (ok);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  g_test_message ("refused: %s", error->message);
  if (fragment && !strstr (error->message, fragment))
    g_test_fail_printf ("error '%s' does not mention '%s'", error->message, fragment);
  if (fragment2 && !strstr (error->message, fragment2))
    g_test_fail_printf ("error '%s' does not mention '%s'", error->message, fragment2);
}

/* A good decode after a refused one: the device still works. */
static void
expect_device_works (void)
{
  static const Case good = { "after-error", 2, 4, 2, 1, 16, { 77, 160 }, FALSE, -1, -1, 0, 0, 0, 0 };
  Inputs in;
  inputs_make (&in, &good, ACCEL_DTYPE_BF16, 128);
  g_autoptr(AccelOp) on_cpu = make_op (&good, &in, FALSE);
  g_autoptr(AccelOp) on_gpu = make_op (&good, &in, TRUE);
  ct_submit (ct_cpu (), on_cpu);
  ct_submit (ct_gpu (), on_gpu);
  expect_close ("out after the error", in.out->gpu, in.out->cpu, 1e-2);
  inputs_clear (&in);
}

static const Case bad_case = { "bad", 3, 4, 2, 1, 16, { 40, 100, 7 }, FALSE, -1, -1, 0, 0, 0, 0 };

/* Sequence 1 has 7 blocks; block @block of it points below 0 or past the
 * cache. A left window that hides the block from every query does not
 * excuse it (every block below ceil (L / page) must be a page). */
static void
run_bad_block (gint32 value, int window_left, int block)
{
  Case c = bad_case;
  c.window_left = window_left;
  Inputs in;
  inputs_make (&in, &c, ACCEL_DTYPE_BF16, 64);
  g_autofree double *table = ct_read (in.table[1]);
  table[1 * in.max_blocks + block] = value;
  ct_write (in.table[1], table);
  g_autoptr(AccelOp) op = make_op (&c, &in, TRUE);
  g_autofree char *where = g_strdup_printf ("sequence 1, block %d", block);
  expect_gpu_error (op, "block-table", where);
  inputs_clear (&in);
}

static void
test_bad_block (void)
{
  if (ct_gpu () == NULL || !have_op ())
    return;
  run_bad_block (-1, -1, 5);
  run_bad_block (1 << 30, -1, 6);
  run_bad_block (-3, 8, 2);    /* the query at 99 sees keys 91..99; block 2 holds 32..47 */
  expect_device_works ();
}

static void
run_bad_length (double value)
{
  Inputs in;
  inputs_make (&in, &bad_case, ACCEL_DTYPE_BF16, 64);
  g_autofree double *lens = ct_read (in.lens[1]);
  lens[2] = value;
  ct_write (in.lens[1], lens);
  g_autoptr(AccelOp) op = make_op (&bad_case, &in, TRUE);
  expect_gpu_error (op, "seqlens-k", "sequence 2");
  inputs_clear (&in);
}

static void
test_bad_length (void)
{
  if (ct_gpu () == NULL || !have_op ())
    return;
  /* bad_case has 9 blocks of 16 rows per sequence (7 used + 2). */
  run_bad_length (9 * 16 + 1);
  run_bad_length (-1);
  run_bad_length (G_MAXINT32);
  expect_device_works ();
}

/* The largest length the table allows is fine, and so are its full pages. */
static void
test_full_table (void)
{
  if (ct_gpu () == NULL || !have_op ())
    return;
  static const Case c = { "full", 2, 2, 2, 1, 16, { 128, 16 }, TRUE, -1, -1, 0, 0, 0, 0 };
  Inputs in;
  inputs_make (&in, &c, ACCEL_DTYPE_F16, 64);
  /* Both sequences use every block of their rows (max_blocks = 8 + 2 = 10,
   * so raise L to 10 pages for sequence 0 and point its last blocks at real pages). */
  g_autofree double *table = ct_read (in.table[1]);
  g_autofree double *lens = ct_read (in.lens[1]);
  table[8] = 0;
  table[9] = (double) (in.P - 1);
  lens[0] = (double) (in.max_blocks * c.page);
  for (guint i = 0; i < 2; i++)
    {
      ct_write (in.table[i], table);
      ct_write (in.lens[i], lens);
    }
  g_autoptr(AccelOp) on_cpu = make_op (&c, &in, FALSE);
  g_autoptr(AccelOp) on_gpu = make_op (&c, &in, TRUE);
  ct_submit (ct_cpu (), on_cpu);
  ct_submit (ct_gpu (), on_gpu);
  expect_close ("out", in.out->gpu, in.out->cpu, 5e-3);
  expect_lse_close (in.lse->gpu, in.lse->cpu);
  inputs_clear (&in);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  static const AccelDType dtypes[] = { ACCEL_DTYPE_BF16, ACCEL_DTYPE_F16 };
  static const gint64 dims[] = { 64, 128, 256 };
  for (guint t = 0; t < G_N_ELEMENTS (dtypes); t++)
    for (guint d = 0; d < G_N_ELEMENTS (dims); d++)
      for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
        {
          Param *p = g_new (Param, 1);   /* lives as long as the test list */
          p->dtype = dtypes[t];
          p->D = dims[d];
          p->c = &cases[i];
          g_autofree char *path = g_strdup_printf ("/flashattn/kvcache/%s/d%" G_GINT64_FORMAT "/%s",
                                                   accel_dtype_get_name (dtypes[t]), dims[d], cases[i].name);
          g_test_add_data_func_full (path, p, test_kvcache, g_free);
        }
  g_test_add_func ("/flashattn/kvcache/full-table", test_full_table);
  g_test_add_func ("/flashattn/kvcache/error/block-table", test_bad_block);
  g_test_add_func ("/flashattn/kvcache/error/seqlens-k", test_bad_length);
  return ct_run ();
}
