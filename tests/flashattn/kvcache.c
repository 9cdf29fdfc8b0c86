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
#include <string.h>
#include "flashattn-test.h"
#include "accel-test-values.h"

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

/* The paged inputs of one case, the same on both devices. */
typedef struct {
  gint64 P, max_blocks;
  FtTensors t;                       /* k and v: the caches */
  AccelBuffer *table[2], *lens[2];   /* [0] cpu, [1] gpu */
} Inputs;

static void
inputs_clear (Inputs *in)
{
  ft_tensors_clear (&in->t);
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

  g_autofree gint32 *perm = accel_test_random_permutation (in->P);
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
  ft_tensors_init (&in->t, dtype, dtype, 4, dq, dc, dc, dq, dl, c->alibi, c->B, c->Hq);
  gint64 db[1] = { c->B };
  for (guint i = 0; i < 2; i++)
    {
      AccelDevice *device = i ? ct_gpu () : ct_cpu ();
      in->table[i] = ft_int_buffer (device, dt, 2, table);
      in->lens[i] = ft_int_buffer (device, db, 1, lens);
    }
}

static AccelOp *
make_op (const Case *c, const Inputs *in, gboolean on_gpu)
{
  int i = on_gpu ? 1 : 0;
  AccelOp *op = accel_op_new (OP_NAME, "q", ft_side (in->t.q, on_gpu), "k-cache", ft_side (in->t.k, on_gpu),
                              "v-cache", ft_side (in->t.v, on_gpu), "block-table", in->table[i],
                              "seqlens-k", in->lens[i], "out", ft_side (in->t.out, on_gpu),
                              "lse", ft_side (in->t.lse, on_gpu),
                              "causal", c->causal, "window-left", c->window_left,
                              "window-right", c->window_right, "sinks", c->sinks, "softcap", c->softcap,
                              "num-splits", c->num_splits, NULL);
  if (in->t.alibi)
    g_object_set (op, "alibi-slopes", ft_side (in->t.alibi, on_gpu), NULL);
  return op;
}

static void
test_kvcache (gconstpointer data)
{
  const FtParam *p = data;
  const Case *c = p->c;
  if (ct_gpu () == NULL || !ft_have_op (OP_NAME))
    return;

  Inputs in;
  inputs_make (&in, c, p->dtype, p->D);
  g_test_message ("%" G_GINT64_FORMAT " pages of %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT " blocks per sequence",
                  in.P, c->page, in.max_blocks);
  g_autoptr(AccelOp) on_cpu = make_op (c, &in, FALSE);
  g_autoptr(AccelOp) on_gpu = make_op (c, &in, TRUE);
  ft_expect_same_forward ("out", on_cpu, on_gpu, in.t.out, in.t.lse, ft_tolerance (p->dtype));
  inputs_clear (&in);
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
  ft_expect_same_forward ("out after the error", on_cpu, on_gpu, in.t.out, NULL, 1e-2);
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
  ft_poke (in.table[1], 1 * in.max_blocks + block, value);
  g_autoptr(AccelOp) op = make_op (&c, &in, TRUE);
  g_autofree char *where = g_strdup_printf ("sequence 1, block %d", block);
  ft_expect_invalid_argument (op, "block-table", where);
  inputs_clear (&in);
}

static void
test_bad_block (void)
{
  if (ct_gpu () == NULL || !ft_have_op (OP_NAME))
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
  ft_poke (in.lens[1], 2, value);
  g_autoptr(AccelOp) op = make_op (&bad_case, &in, TRUE);
  ft_expect_invalid_argument (op, "seqlens-k", "sequence 2");
  inputs_clear (&in);
}

static void
test_bad_length (void)
{
  if (ct_gpu () == NULL || !ft_have_op (OP_NAME))
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
  if (ct_gpu () == NULL || !ft_have_op (OP_NAME))
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
  ft_expect_same_forward ("out", on_cpu, on_gpu, in.t.out, in.t.lse, 5e-3);
  inputs_clear (&in);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  for (guint k = 0; k < G_N_ELEMENTS (ft_specialised_kinds); k++)
    for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
      {
        const FtKind *kind = &ft_specialised_kinds[k];
        ft_add_case_test ("kvcache", kind->dtype, kind->D, kind->D, cases[i].name, &cases[i], test_kvcache);
      }
  g_test_add_func ("/flashattn/kvcache/full-table", test_full_table);
  g_test_add_func ("/flashattn/kvcache/error/block-table", test_bad_block);
  g_test_add_func ("/flashattn/kvcache/error/seqlens-k", test_bad_length);
  return ct_run ();
}
