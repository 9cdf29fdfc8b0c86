/* accel-cuda-flashattn-bench.c: the attention groups of accel-bench, each
 * figure beside its baseline in the same run, on the bench's device (a
 * cuda:N, in whichever isolation ACCEL_CUDA_ISOLATION chose):
 *
 * - attention: `attention` and `attention-backward` through the op, bf16,
 *   on the shapes of the FlashAttention papers (batch × seqlen = 16k
 *   tokens, hidden 2048, heads = 2048 / d; d = 64, 128, 256; seqlen 512 to
 *   16k; causal and not), in TFLOP/s as those papers count (forward
 *   4·B·H·S²·d, halved when causal; backward 2.5× forward), beside the
 *   kernels' C entry points (accel_flashattn_fwd/bwd, accel-flashattn.h)
 *   called directly on copies of the same data: the ratio is what the op's
 *   dispatch costs. --quick: d = 128, seqlen 1k and 4k.
 * - attention-decode: `attention-kvcache` decode (one query per sequence),
 *   batch 64, 8192 cached keys per sequence in pages of 256 rows scattered
 *   by a random block table, d = 128, bf16, heads 16/16 and 32/8, in GB/s
 *   of K and V read, beside a device-to-device cudaMemcpyAsync moving as
 *   many bytes (half read, half written); and the kernel's entry point
 *   (accel_flashattn_kvcache) beside the same copy. --quick: batch 16.
 *
 * Each side runs a burst back to back after a warm-up (the op through
 * submit_async with the burst in flight, the raw side timed with CUDA events
 * on its own stream); the median of REPS bursts counts.
 *
 * Built into `accel-bench-flashattn` (tools/accel-bench.c with these groups).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include "accel-cuda.h"
#include "accel-bench.h"
#include "accel-bench-raw.h"
#include "accel-flashattn.h"

#define REPS 5
#define KVCACHE_OP "attention-kvcache"

typedef AccelBenchRaw Raw;
typedef AccelBenchRawCall RawCall;

static gboolean
cuda_ok (cudaError_t status, const char *what, GError **error)
{
  return accel_cuda_check (status, what, error);
}

static gboolean
fa_ok (int status, const char *what, GError **error)
{
  if (status == ACCEL_FA_UNSUPPORTED)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NO_KERNEL, "%s: parameters not supported", what);
      return FALSE;
    }
  return cuda_ok ((cudaError_t) status, what, error);
}

static AccelBuffer *
alloc_buffer (AccelDevice *device, AccelDType dtype, const gint64 *dims, guint rank, GError **error)
{
  g_autoptr(AccelShape) shape = accel_shape_new (dims, rank);
  return accel_device_alloc (device, dtype, shape, error);
}

/* Seconds per op of a burst of @n submissions of @op, all in flight. */
static double
accel_burst (AccelDevice *device, AccelOp *op, guint n, GError **error)
{
  double elapsed = accel_bench_run_in_flight (device, op, n, n, error);
  return elapsed < 0 ? -1 : elapsed / n;
}

/* One side of a figure: an op, or a raw call. */
typedef struct {
  AccelOp *op;
  RawCall call;
  gpointer data;
} Side;

static double
side_burst (Raw *raw, const Side *s, guint n, GError **error)
{
  return s->op ? accel_burst (raw->device, s->op, n, error) : accel_bench_raw_burst (raw, s->call, s->data, n, error);
}

/* Reports @work / (median seconds per run) of @value beside the same of
 * @baseline, over REPS bursts of @burst runs after a warm-up burst. */
static gboolean
compare (Raw *raw, const char *label, const Side *value, const Side *baseline, guint burst, double work,
         const char *unit, GError **error)
{
  double tv[REPS], tb[REPS];
  for (int r = -1; r < REPS; r++)
    {
      accel_bench_progress (raw->bench, "%s: %d/%d", label, r + 1, REPS);
      double a = side_burst (raw, value, burst, error);
      double b = a >= 0 ? side_burst (raw, baseline, burst, error) : -1;
      if (a < 0 || b < 0)
        return FALSE;
      if (r >= 0)
        tv[r] = a, tb[r] = b;
    }
  accel_bench_report (raw->bench, label, unit, work / accel_bench_quantile (tv, REPS, 0.5),
                      work / accel_bench_quantile (tb, REPS, 0.5));
  return TRUE;
}

/* Runs in a burst that lasts about 30 ms at @rate work per second. */
static guint
burst_for (double work, double rate)
{
  double n = ceil (0.03 * rate / work);
  return (guint) CLAMP (n, 3, 200);
}

/* attention */

static gboolean
fwd_call (Raw *raw, gpointer data, GError **error)
{
  AccelFlashAttnBwdParams *p = data;
  return fa_ok (accel_flashattn_fwd (&p->fwd, raw->stream), "accel_flashattn_fwd", error);
}

typedef struct {
  AccelFlashAttnBwdParams p;
  void *workspace;
} BwdCall;

static gboolean
bwd_call (Raw *raw, gpointer data, GError **error)
{
  BwdCall *c = data;
  return fa_ok (accel_flashattn_bwd (&c->p, c->workspace, raw->stream), "accel_flashattn_bwd", error);
}

static void
contiguous_strides (int64_t s[3], gint64 H, gint64 S, gint64 d)
{
  s[2] = d;
  s[1] = S * d;
  s[0] = H * S * d;
}

static gboolean
bench_attention_shape (Raw *raw, gint64 d, gint64 S, gboolean causal, GError **error)
{
  gint64 B = 16384 / S, H = 2048 / d;
  gint64 dims[4] = { B, H, S, d }, dl[3] = { B, H, S };
  AccelDType dt = ACCEL_DTYPE_BF16;
  g_autoptr(AccelBuffer) q = accel_bench_raw_random_buffer (raw->device, dt, dims, 4, -1, 1, 31, error);
  g_autoptr(AccelBuffer) k = q ? accel_bench_raw_random_buffer (raw->device, dt, dims, 4, -1, 1, 32, error) : NULL;
  g_autoptr(AccelBuffer) v = k ? accel_bench_raw_random_buffer (raw->device, dt, dims, 4, -1, 1, 33, error) : NULL;
  g_autoptr(AccelBuffer) dout = v ? accel_bench_raw_random_buffer (raw->device, dt, dims, 4, -1, 1, 34, error)
                                  : NULL;
  g_autoptr(AccelBuffer) out = dout ? alloc_buffer (raw->device, dt, dims, 4, error) : NULL;
  g_autoptr(AccelBuffer) lse = out ? alloc_buffer (raw->device, ACCEL_DTYPE_F32, dl, 3, error) : NULL;
  g_autoptr(AccelBuffer) dq = lse ? alloc_buffer (raw->device, dt, dims, 4, error) : NULL;
  g_autoptr(AccelBuffer) dk = dq ? alloc_buffer (raw->device, dt, dims, 4, error) : NULL;
  g_autoptr(AccelBuffer) dv = dk ? alloc_buffer (raw->device, dt, dims, 4, error) : NULL;
  if (dv == NULL)
    return FALSE;

  g_autoptr(AccelOp) fwd = accel_attention_new (q, k, v, out);
  g_object_set (fwd, "lse", lse, "causal", causal, NULL);
  g_autoptr(AccelOp) bwd = accel_attention_backward_new (q, k, v, out, dout, lse, dq, dk, dv);
  g_object_set (bwd, "causal", causal, NULL);
  /* The backward pass reads the forward's out and lse. */
  if (!accel_device_submit (raw->device, fwd, NULL, error))
    return FALSE;

  BwdCall c;
  memset (&c, 0, sizeof c);
  AccelFlashAttnFwdParams *f = &c.p.fwd;
  gsize elems_bytes = accel_buffer_get_size (q);
  gboolean ok = (f->q = accel_bench_raw_copy_of (q, error)) && (f->k = accel_bench_raw_copy_of (k, error))
    && (f->v = accel_bench_raw_copy_of (v, error)) && (f->out = accel_bench_raw_copy_of (out, error))
    && (f->lse = accel_bench_raw_copy_of (lse, error)) && (c.p.dout = accel_bench_raw_copy_of (dout, error))
    && cuda_ok (cudaMalloc (&c.p.dq, elems_bytes), "cudaMalloc", error)
    && cuda_ok (cudaMalloc (&c.p.dk, elems_bytes), "cudaMalloc", error)
    && cuda_ok (cudaMalloc (&c.p.dv, elems_bytes), "cudaMalloc", error);
  if (ok)
    {
      contiguous_strides (f->q_strides, H, S, d);
      memcpy (f->k_strides, f->q_strides, sizeof f->q_strides);
      memcpy (f->v_strides, f->q_strides, sizeof f->q_strides);
      memcpy (f->o_strides, f->q_strides, sizeof f->q_strides);
      memcpy (c.p.do_strides, f->q_strides, sizeof f->q_strides);
      memcpy (c.p.dq_strides, f->q_strides, sizeof f->q_strides);
      memcpy (c.p.dk_strides, f->q_strides, sizeof f->q_strides);
      memcpy (c.p.dv_strides, f->q_strides, sizeof f->q_strides);
      f->batch = (int32_t) B;
      f->heads_q = f->heads_kv = (int32_t) H;
      f->seqlen_q = f->seqlen_k = (int32_t) S;
      f->head_dim = (int32_t) d;
      f->dtype = ACCEL_FA_BF16;
      f->causal = causal ? 1 : 0;
      f->window_left = f->window_right = -1;
      f->path = ACCEL_FA_PATH_AUTO;
      const char *why = accel_flashattn_bwd_check (&c.p);
      if (why == NULL)
        why = accel_flashattn_fwd_check (f);
      if (why != NULL)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NO_KERNEL, "attention d=%" G_GINT64_FORMAT ": %s", d, why);
          ok = FALSE;
        }
    }
  if (ok)
    ok = cuda_ok (cudaMalloc (&c.workspace, MAX (accel_flashattn_bwd_workspace_size (&c.p), 1)), "cudaMalloc", error);
  if (ok)
    {
      double flops = 4.0 * B * H * S * S * d / (causal ? 2 : 1) * 1e-12;
      const char *mask = causal ? "causal" : "full";
      g_autofree char *lf = g_strdup_printf ("attention.fwd.d%" G_GINT64_FORMAT ".s%" G_GINT64_FORMAT ".%s", d, S, mask);
      g_autofree char *lb = g_strdup_printf ("attention.bwd.d%" G_GINT64_FORMAT ".s%" G_GINT64_FORMAT ".%s", d, S, mask);
      Side op_f = { fwd, NULL, NULL }, raw_f = { NULL, fwd_call, &c.p };
      Side op_b = { bwd, NULL, NULL }, raw_b = { NULL, bwd_call, &c };
      ok = compare (raw, lf, &op_f, &raw_f, burst_for (flops, 300), flops, "TFLOP/s", error)
           && compare (raw, lb, &op_b, &raw_b, burst_for (2.5 * flops, 150), 2.5 * flops, "TFLOP/s", error);
    }
  cudaFree ((void *) f->q);
  cudaFree ((void *) f->k);
  cudaFree ((void *) f->v);
  cudaFree (f->out);
  cudaFree (f->lse);
  cudaFree ((void *) c.p.dout);
  cudaFree (c.p.dq);
  cudaFree (c.p.dk);
  cudaFree (c.p.dv);
  cudaFree (c.workspace);
  return ok;
}

static gboolean
run_attention (AccelBench *bench, GError **error)
{
  static const gint64 all_dims[] = { 64, 128, 256 }, quick_dims[] = { 128 };
  static const gint64 all_seqs[] = { 512, 1024, 2048, 4096, 8192, 16384 }, quick_seqs[] = { 1024, 4096 };
  gboolean quick = accel_bench_is_quick (bench);
  const gint64 *dims = quick ? quick_dims : all_dims, *seqs = quick ? quick_seqs : all_seqs;
  guint n_dims = quick ? G_N_ELEMENTS (quick_dims) : G_N_ELEMENTS (all_dims);
  guint n_seqs = quick ? G_N_ELEMENTS (quick_seqs) : G_N_ELEMENTS (all_seqs);
  Raw raw;
  gboolean ok = accel_bench_raw_open (bench, &raw, "attention", error);
  for (guint i = 0; ok && i < n_dims; i++)
    for (guint j = 0; ok && j < n_seqs; j++)
      for (int causal = 0; ok && causal < 2; causal++)
        ok = bench_attention_shape (&raw, dims[i], seqs[j], causal, error);
  accel_bench_raw_close (&raw);
  return ok;
}

/* attention-decode */

typedef struct {
  AccelFlashAttnKvcacheParams p;
  void *workspace;
} KvCall;

static gboolean
kvcache_call (Raw *raw, gpointer data, GError **error)
{
  KvCall *c = data;
  return fa_ok (accel_flashattn_kvcache (&c->p, c->workspace, raw->stream), "accel_flashattn_kvcache", error);
}

static AccelBuffer *
int_buffer (AccelDevice *device, const gint64 *dims, guint rank, const gint32 *values, GError **error)
{
  AccelBuffer *b = alloc_buffer (device, ACCEL_DTYPE_I32, dims, rank, error);
  if (b && !accel_buffer_write (b, (const guint8 *) values, accel_buffer_get_size (b), error))
    g_clear_object (&b);
  return b;
}

static gboolean
bench_decode (Raw *raw, gint64 B, gint64 Hq, gint64 Hkv, gint64 ctx, gint64 page, gint64 d, GError **error)
{
  gint64 blocks = ctx / page, P = B * blocks;
  gint64 dq[4] = { B, Hq, 1, d }, dc[4] = { P, page, Hkv, d }, dt[2] = { B, blocks }, db[1] = { B };
  AccelDType dtype = ACCEL_DTYPE_BF16;

  /* Every sequence's blocks on pages drawn at random. */
  g_autofree gint32 *table = g_new (gint32, P);
  g_autofree gint32 *lens = g_new (gint32, B);
  g_autoptr(GRand) rand = g_rand_new_with_seed (7);
  for (gint64 i = 0; i < P; i++)
    table[i] = (gint32) i;
  for (gint64 i = P - 1; i > 0; i--)
    {
      gint64 j = g_rand_int_range (rand, 0, (gint32) i + 1);
      gint32 t = table[i];
      table[i] = table[j];
      table[j] = t;
    }
  for (gint64 b = 0; b < B; b++)
    lens[b] = (gint32) ctx;

  g_autoptr(AccelBuffer) q = accel_bench_raw_random_buffer (raw->device, dtype, dq, 4, -1, 1, 41, error);
  g_autoptr(AccelBuffer) kc = q ? accel_bench_raw_random_buffer (raw->device, dtype, dc, 4, -1, 1, 42, error) : NULL;
  g_autoptr(AccelBuffer) vc = kc ? accel_bench_raw_random_buffer (raw->device, dtype, dc, 4, -1, 1, 43, error) : NULL;
  g_autoptr(AccelBuffer) out = vc ? alloc_buffer (raw->device, dtype, dq, 4, error) : NULL;
  g_autoptr(AccelBuffer) bt = out ? int_buffer (raw->device, dt, 2, table, error) : NULL;
  g_autoptr(AccelBuffer) sl = bt ? int_buffer (raw->device, db, 1, lens, error) : NULL;
  if (sl == NULL)
    return FALSE;

  gsize cache_bytes = accel_buffer_get_size (kc);
  double gb = 2.0 * cache_bytes * 1e-9;
  KvCall c;
  memset (&c, 0, sizeof c);
  AccelBenchRawCopy copy = { NULL, NULL, cache_bytes };   /* reads and writes 2 × cache_bytes / 2 each way */
  gboolean ok = (c.p.q = accel_bench_raw_copy_of (q, error))
    && (c.p.k_cache = accel_bench_raw_copy_of (kc, error)) && (c.p.v_cache = accel_bench_raw_copy_of (vc, error))
    && (c.p.block_table = accel_bench_raw_copy_of (bt, error))
    && (c.p.seqlens_k = accel_bench_raw_copy_of (sl, error))
    && cuda_ok (cudaMalloc (&c.p.out, accel_buffer_get_size (out)), "cudaMalloc", error)
    && accel_bench_raw_copy_init (raw, &copy, cache_bytes, error);
  if (ok)
    {
      c.p.batch = (int32_t) B;
      c.p.heads_q = (int32_t) Hq;
      c.p.heads_kv = (int32_t) Hkv;
      c.p.seqlen_q = 1;
      c.p.head_dim = (int32_t) d;
      c.p.num_pages = (int32_t) P;
      c.p.page_size = (int32_t) page;
      c.p.max_blocks = (int32_t) blocks;
      c.p.dtype = ACCEL_FA_BF16;
      c.p.window_left = c.p.window_right = -1;
      const char *why = accel_flashattn_kvcache_check (&c.p);
      if (why != NULL)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NO_KERNEL, "attention-kvcache: %s", why);
          ok = FALSE;
        }
    }
  if (ok)
    {
      c.p.num_splits = accel_flashattn_kvcache_num_splits (&c.p);
      gsize ws = accel_flashattn_kvcache_workspace_size (&c.p);
      ok = ws == 0 || cuda_ok (cudaMalloc (&c.workspace, ws), "cudaMalloc", error);
    }
  if (ok)
    {
      g_autofree char *name = g_strdup_printf ("h%" G_GINT64_FORMAT "-%" G_GINT64_FORMAT ".b%" G_GINT64_FORMAT
                                               ".ctx%" G_GINT64_FORMAT ".d%" G_GINT64_FORMAT ".page%" G_GINT64_FORMAT,
                                               Hq, Hkv, B, ctx, d, page);
      g_autofree char *l_raw = g_strdup_printf ("attention-decode.kernel.%s.splits%d", name, c.p.num_splits);
      g_autofree char *l_op = g_strdup_printf ("attention-decode.%s", name);
      Side kernel = { NULL, kvcache_call, &c };
      Side memcpy_side = { NULL, accel_bench_raw_copy_call, &copy };
      guint burst = burst_for (gb, 2500);
      ok = compare (raw, l_raw, &kernel, &memcpy_side, burst, gb, "GB/s", error);

      g_autoptr(GError) missing = NULL;
      g_autoptr(AccelOp) op = ok ? accel_op_new_by_name (KVCACHE_OP, &missing) : NULL;
      if (ok && op == NULL)
        g_printerr ("accel-bench: %s: no op figure (%s)\n", l_op, missing->message);
      else if (ok)
        {
          g_object_set (op, "q", q, "k-cache", kc, "v-cache", vc, "block-table", bt, "seqlens-k", sl, "out", out, NULL);
          Side op_side = { op, NULL, NULL };
          ok = compare (raw, l_op, &op_side, &memcpy_side, burst, gb, "GB/s", error);
        }
    }
  cudaFree ((void *) c.p.q);
  cudaFree ((void *) c.p.k_cache);
  cudaFree ((void *) c.p.v_cache);
  cudaFree ((void *) c.p.block_table);
  cudaFree ((void *) c.p.seqlens_k);
  cudaFree (c.p.out);
  cudaFree (c.workspace);
  accel_bench_raw_copy_clear (&copy);
  return ok;
}

static gboolean
run_attention_decode (AccelBench *bench, GError **error)
{
  gint64 B = accel_bench_is_quick (bench) ? 16 : 64;
  Raw raw;
  gboolean ok = accel_bench_raw_open (bench, &raw, "attention", error)
                && bench_decode (&raw, B, 16, 16, 8192, 256, 128, error)
                && bench_decode (&raw, B, 32, 8, 8192, 256, 128, error);
  accel_bench_raw_close (&raw);
  return ok;
}

const AccelBenchGroup accel_bench_flashattn_groups[] = {
  { "attention", "attention and attention-backward bf16 (16k tokens, hidden 2048, d 64/128/256, seqlen 512..16k, "
    "causal and not) in TFLOP/s beside the kernels' entry points", run_attention },
  { "attention-decode", "attention-kvcache decode (batch 64, ctx 8192, page 256, d 128, heads 16/16 and 32/8) in GB/s "
    "of K+V beside a cudaMemcpyAsync moving as many bytes; the kernel's entry point beside the same", run_attention_decode },
  { NULL, NULL, NULL },
};
