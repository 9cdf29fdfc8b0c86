/* The gpu-multi suite: collectives on several GPUs of one machine through
 * NCCL, against the CPU oracle on as many cpu devices; peer copies between
 * every pair of GPUs; a real sticky fault on one rank while the others
 * run collectives. Skips with fewer than two GPUs (issue 17 runs it on 2
 * and 4 H200s, in both isolation modes).
 *
 * Reductions of floating types differ from the oracle only by rounding:
 * NCCL rounds after every step, in an order of its own, the oracle once.
 * Each element may be off by n-ranks roundings of the sum of the
 * magnitudes; integers and data movement must match exactly.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include "cuda-test.h"

#define MAX_GPUS 16

static AccelDevice *gpus[MAX_GPUS];
static AccelDevice *cpus[MAX_GPUS];
static guint n_gpus;

/* ACCEL_TEST_MULTI_ON_CPU=1 runs the suite's logic with cpu:8… standing in
 * for the GPUs (ACCEL_CPU_DEVICES=16), to check the tests themselves on a
 * machine without GPUs. */
static gboolean
stand_ins (void)
{
  if (g_strcmp0 (g_getenv ("ACCEL_TEST_MULTI_ON_CPU"), "1") != 0)
    return FALSE;
  for (n_gpus = 0; n_gpus < 4; n_gpus++)
    {
      g_autofree char *name = g_strdup_printf ("cpu:%u", 8 + n_gpus);
      g_autofree char *cpu = g_strdup_printf ("cpu:%u", n_gpus);
      g_autoptr(AccelDevice) g = accel_system_get_device (ct_system (), name, NULL);
      g_autoptr(AccelDevice) c = accel_system_get_device (ct_system (), cpu, NULL);
      g_assert_nonnull (g);
      g_assert_nonnull (c);
      gpus[n_gpus] = g;
      cpus[n_gpus] = c;
    }
  return TRUE;
}

static gboolean
have_gpus (void)
{
  if (n_gpus == 0 && !stand_ins ())
    {
      g_autoptr(GPtrArray) all = accel_system_list_devices (ct_system ());
      for (guint i = 0; i < all->len && n_gpus < MAX_GPUS; i++)
        {
          g_autofree char *name = g_strdup_printf ("cuda:%u", n_gpus);
          if (g_strcmp0 (accel_device_get_name (all->pdata[i]), name) != 0)
            continue;
          gpus[n_gpus] = all->pdata[i];
          g_autofree char *cpu = g_strdup_printf ("cpu:%u", n_gpus);
          g_autoptr(GError) error = NULL;
          g_autoptr(AccelDevice) c = accel_system_get_device (ct_system (), cpu, &error);
          g_assert_no_error (error);
          cpus[n_gpus] = c;
          n_gpus++;
          i = (guint) -1;   /* look for the next one from the start */
        }
    }
  if (n_gpus < 2)
    {
      g_test_skip ("fewer than two CUDA devices");
      return FALSE;
    }
  return TRUE;
}

/* 2, 4 and every GPU, those there are. */
static guint
rank_counts (guint *out)
{
  guint k = 0;
  out[k++] = 2;
  if (n_gpus >= 4)
    out[k++] = 4;
  if (n_gpus != 2 && n_gpus != 4)
    out[k++] = n_gpus;
  return k;
}

static AccelCommunicator *
comm_over (AccelDevice **devices, guint n)
{
  g_autoptr(GError) error = NULL;
  AccelCommunicator *comm = accel_communicator_new (devices, n, &error);
  g_assert_no_error (error);
  return comm;
}

static double
eps_of (AccelDType dtype)
{
  switch (dtype)
    {
    case ACCEL_DTYPE_FP8_E4M3: return 0x1p-3;
    case ACCEL_DTYPE_FP8_E5M2: return 0x1p-2;
    default: return ct_eps (dtype);
    }
}

typedef struct {
  guint n;
  AccelBuffer *src[2][MAX_GPUS];   /* [0] cpu, [1] gpu */
  AccelBuffer *dst[2][MAX_GPUS];
  double *values[MAX_GPUS];
} Job;

static void
job_clear (Job *j)
{
  for (guint r = 0; r < MAX_GPUS; r++)
    {
      for (guint s = 0; s < 2; s++)
        {
          g_clear_object (&j->src[s][r]);
          g_clear_object (&j->dst[s][r]);
        }
      g_clear_pointer (&j->values[r], g_free);
    }
}

static void
job_alloc (Job *j, guint n, AccelDType dtype, gint64 src_count, gint64 dst_count, gboolean small_ints)
{
  j->n = n;
  gsize k = ct_components (dtype);
  for (guint r = 0; r < n; r++)
    {
      j->values[r] = g_new (double, src_count * k);
      for (gsize i = 0; i < (gsize) src_count * k; i++)
        j->values[r][i] = accel_dtype_is_integer (dtype) ? g_test_rand_int_range (1, small_ints ? 4 : 30)
                                                         : g_test_rand_double_range (-1.0, 1.0);
      AccelDevice *devs[2] = { cpus[r], gpus[r] };
      for (guint s = 0; s < 2; s++)
        {
          j->src[s][r] = ct_alloc (devs[s], dtype, &src_count, 1);
          ct_write (j->src[s][r], j->values[r]);
          j->dst[s][r] = ct_alloc (devs[s], dtype, &dst_count, 1);
        }
      /* Something else than the result in dst first, the same on both. */
      g_autofree double *before = g_new (double, dst_count * k);
      for (gsize i = 0; i < (gsize) dst_count * k; i++)
        before[i] = accel_dtype_is_integer (dtype) ? 7 : g_test_rand_double_range (2.0, 3.0);
      ct_write (j->dst[0][r], before);
      ct_write (j->dst[1][r], before);
    }
}

typedef AccelOp *(*MakeOp) (AccelBuffer *src, AccelBuffer *dst, int rank, gpointer data);

/* Runs the collective on both communicators; compares every rank's dst. */
static void
run_and_compare (Job *j, AccelCommunicator *cpu, AccelCommunicator *gpu, MakeOp make, gpointer data,
                 AccelReduction reduction, gboolean reduces, gboolean scatter, const char *what)
{
  AccelCommunicator *comms[2] = { cpu, gpu };
  for (guint s = 0; s < 2; s++)
    {
      AccelOp *ops[MAX_GPUS];
      for (guint r = 0; r < j->n; r++)
        ops[r] = make (j->src[s][r], j->dst[s][r], r, data);
      g_autoptr(GError) error = NULL;
      g_assert_true (accel_communicator_submit (comms[s], ops, j->n, NULL, &error));
      g_assert_no_error (error);
      for (guint r = 0; r < j->n; r++)
        g_object_unref (ops[r]);
    }
  AccelDType dtype = accel_buffer_get_dtype (j->dst[0][0]);
  for (guint r = 0; r < j->n; r++)
    {
      g_autofree char *name = g_strdup_printf ("%s, %u GPUs, rank %u", what, j->n, r);
      if (!reduces || accel_dtype_is_integer (dtype) || reduction == ACCEL_REDUCTION_MIN
          || reduction == ACCEL_REDUCTION_MAX)
        {
          ct_assert_same_bytes (name, j->dst[1][r], j->dst[0][r]);
          continue;
        }
      g_autofree double *got = ct_read (j->dst[1][r]);
      g_autofree double *want = ct_read (j->dst[0][r]);
      gsize n = accel_buffer_get_n_elements (j->dst[0][r]) * ct_components (dtype);
      /* The magnitude each element's rounding errors scale with: the
       * inputs' (a product's is its own). */
      g_autofree double *scale = g_new0 (double, n);
      /* Element i of rank r's dst reduces element i (i + r n, scattered) of every src. */
      gsize offset = scatter ? r * n : 0;
      for (gsize i = 0; i < n; i++)
        {
          for (guint q = 0; q < j->n; q++)
            scale[i] += fabs (j->values[q][offset + i]);
          if (reduction == ACCEL_REDUCTION_PROD)
            scale[i] = fabs (want[i]) + fabs (got[i]);
        }
      ct_assert_close (name, got, want, scale, n, (j->n + 1) * eps_of (dtype), 0);
    }
}

static AccelOp *
make_all_reduce (AccelBuffer *src, AccelBuffer *dst, int rank, gpointer data)
{
  return accel_all_reduce_new (src, dst, GPOINTER_TO_INT (data));
}

static AccelOp *
make_reduce_scatter (AccelBuffer *src, AccelBuffer *dst, int rank, gpointer data)
{
  return accel_reduce_scatter_new (src, dst, GPOINTER_TO_INT (data));
}

static AccelOp *
make_root_reduce (AccelBuffer *src, AccelBuffer *dst, int rank, gpointer data)
{
  return accel_root_reduce_new (src, dst, GPOINTER_TO_INT (data), 1);
}

static AccelOp *
make_all_gather (AccelBuffer *src, AccelBuffer *dst, int rank, gpointer data)
{
  return accel_all_gather_new (src, dst);
}

static AccelOp *
make_broadcast (AccelBuffer *src, AccelBuffer *dst, int rank, gpointer data)
{
  int root = GPOINTER_TO_INT (data);
  return accel_broadcast_new (rank == root ? src : NULL, dst, root);
}

static AccelOp *
make_all_to_all (AccelBuffer *src, AccelBuffer *dst, int rank, gpointer data)
{
  return accel_all_to_all_new (src, dst);
}

static void
test_collectives (void)
{
  if (!have_gpus ())
    return;
  const AccelDType dtypes[] = { ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16,
                                ACCEL_DTYPE_I32, ACCEL_DTYPE_U8, ACCEL_DTYPE_I64, ACCEL_DTYPE_C64 };
  const AccelReduction reductions[] = { ACCEL_REDUCTION_SUM, ACCEL_REDUCTION_PROD, ACCEL_REDUCTION_MIN,
                                        ACCEL_REDUCTION_MAX, ACCEL_REDUCTION_AVG };
  guint counts[4];
  guint n_counts = rank_counts (counts);

  for (guint c = 0; c < n_counts; c++)
    {
      guint n = counts[c];
      g_autoptr(AccelCommunicator) cpu = comm_over (cpus, n);
      g_autoptr(AccelCommunicator) gpu = comm_over (gpus, n);
      for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
        for (guint e = 0; e < G_N_ELEMENTS (reductions); e++)
          {
            AccelDType dtype = dtypes[d];
            if (accel_dtype_is_complex (dtype) && reductions[e] != ACCEL_REDUCTION_SUM
                && reductions[e] != ACCEL_REDUCTION_AVG)
              continue;
            gint64 count = 1 + g_test_rand_int_range (0, 3) * 1000 + 17;   /* odd */
            gboolean small = reductions[e] == ACCEL_REDUCTION_PROD;
            Job j = { 0 };
            job_alloc (&j, n, dtype, count, count, small);
            g_autofree char *what = g_strdup_printf ("all-reduce %s %d", accel_dtype_get_name (dtype), reductions[e]);
            run_and_compare (&j, cpu, gpu, make_all_reduce, GINT_TO_POINTER (reductions[e]), reductions[e], TRUE, FALSE,
                             what);
            job_clear (&j);

            job_alloc (&j, n, dtype, count * n, count, small);
            g_free (what);
            what = g_strdup_printf ("reduce-scatter %s %d", accel_dtype_get_name (dtype), reductions[e]);
            run_and_compare (&j, cpu, gpu, make_reduce_scatter, GINT_TO_POINTER (reductions[e]), reductions[e], TRUE,
                             TRUE, what);
            job_clear (&j);

            job_alloc (&j, n, dtype, count, count, small);
            g_free (what);
            what = g_strdup_printf ("root-reduce %s %d", accel_dtype_get_name (dtype), reductions[e]);
            run_and_compare (&j, cpu, gpu, make_root_reduce, GINT_TO_POINTER (reductions[e]), reductions[e], TRUE,
                             FALSE, what);
            job_clear (&j);
          }

      for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
        {
          AccelDType dtype = dtypes[d];
          gint64 count = 333 + 2 * d;
          Job j = { 0 };
          job_alloc (&j, n, dtype, count, count * n, FALSE);
          run_and_compare (&j, cpu, gpu, make_all_gather, NULL, 0, FALSE, FALSE, "all-gather");
          job_clear (&j);
          for (guint root = 0; root < n; root++)
            {
              job_alloc (&j, n, dtype, count, count, FALSE);
              run_and_compare (&j, cpu, gpu, make_broadcast, GINT_TO_POINTER (root), 0, FALSE, FALSE, "broadcast");
              job_clear (&j);
            }
          job_alloc (&j, n, dtype, count * n, count * n, FALSE);
          run_and_compare (&j, cpu, gpu, make_all_to_all, NULL, 0, FALSE, FALSE, "all-to-all");
          job_clear (&j);
        }
    }
}

/* A ring shift, every rank sending and receiving in one submission. */
static void
test_send_recv (void)
{
  if (!have_gpus ())
    return;
  guint counts[4];
  guint n_counts = rank_counts (counts);
  for (guint c = 0; c < n_counts; c++)
    {
      guint n = counts[c];
      g_autoptr(AccelCommunicator) gpu = comm_over (gpus, n);
      gint64 count = 100003;
      AccelBuffer *src[MAX_GPUS], *dst[MAX_GPUS];
      AccelOp *ops[2 * MAX_GPUS];
      double *values[MAX_GPUS];
      for (guint r = 0; r < n; r++)
        {
          values[r] = g_new (double, count);
          for (gint64 i = 0; i < count; i++)
            values[r][i] = g_test_rand_double_range (-1, 1);
          src[r] = ct_alloc (gpus[r], ACCEL_DTYPE_F64, &count, 1);
          dst[r] = ct_alloc (gpus[r], ACCEL_DTYPE_F64, &count, 1);
          ct_write (src[r], values[r]);
          ops[2 * r] = accel_send_new (src[r], (r + 1) % n);
          ops[2 * r + 1] = accel_recv_new (dst[r], (r + n - 1) % n);
        }
      g_autoptr(GError) error = NULL;
      g_assert_true (accel_communicator_submit (gpu, ops, 2 * n, NULL, &error));
      g_assert_no_error (error);
      for (guint r = 0; r < n; r++)
        {
          g_autofree double *got = ct_read (dst[r]);
          g_assert_cmpmem (got, count * sizeof (double), values[(r + n - 1) % n], count * sizeof (double));
        }
      for (guint r = 0; r < n; r++)
        {
          g_object_unref (ops[2 * r]);
          g_object_unref (ops[2 * r + 1]);
          g_object_unref (src[r]);
          g_object_unref (dst[r]);
          g_free (values[r]);
        }
    }
}

/* Peer copies between every pair: the destination gets the source's bytes,
 * written just before by a fill the copy must wait for; a later write to
 * the source does not reach the copy. */
static void
test_peer_copies (void)
{
  if (!have_gpus ())
    return;
  gint64 n = (1 << 22) + 3;
  for (guint a = 0; a < n_gpus; a++)
    for (guint b = 0; b < n_gpus; b++)
      {
        if (a == b)
          continue;
        g_autoptr(AccelBuffer) src = ct_alloc (gpus[a], ACCEL_DTYPE_F32, &n, 1);
        g_autoptr(AccelBuffer) dst = ct_alloc (gpus[b], ACCEL_DTYPE_F32, &n, 1);
        double value = g_test_rand_double_range (1, 2);
        g_autoptr(AccelOp) fill = accel_op_new ("fill", "dst", src, "value", value, NULL);
        g_autoptr(AccelOp) copy = accel_op_new ("copy", "src", src, "dst", dst, NULL);
        g_autoptr(AccelOp) later = accel_op_new ("fill", "dst", src, "value", value + 1, NULL);
        accel_device_submit_async (gpus[a], fill, NULL, NULL, NULL);
        g_autoptr(GError) error = NULL;
        g_assert_true (accel_device_submit (gpus[b], copy, NULL, &error));
        g_assert_no_error (error);
        ct_submit (gpus[a], later);
        g_autofree double *got = ct_read (dst);
        for (gint64 i = 0; i < n; i += 4099)
          g_assert_cmpfloat (got[i], ==, (float) value);
        g_assert_cmpfloat (got[n - 1], ==, (float) value);
      }
}

/* A real sticky fault on the last rank while collectives run. */
static void
test_fault (void)
{
  if (!have_gpus ())
    return;
  if (!ct_gpu_is_remote ())
    {
      g_test_skip ("a sticky fault in this process ends the device for good: needs ACCEL_CUDA_ISOLATION=process");
      return;
    }
  guint n = n_gpus;
  g_autoptr(AccelCommunicator) gpu = comm_over (gpus, n);
  g_autoptr(AccelCommunicator) cpu = comm_over (cpus, n);
  gint64 count = 1 << 20;
  AccelBuffer *x[MAX_GPUS];
  AccelOp *ops[MAX_GPUS];
  for (guint r = 0; r < n; r++)
    {
      x[r] = ct_alloc (gpus[r], ACCEL_DTYPE_F32, &count, 1);
      ops[r] = accel_all_reduce_new (x[r], x[r], ACCEL_REDUCTION_AVG);
    }
  g_autoptr(GError) error = NULL;
  g_assert_true (accel_communicator_submit (gpu, ops, n, NULL, &error));
  g_assert_no_error (error);
  guint gen0 = accel_device_get_generation (gpus[0]);
  guint gen_last = accel_device_get_generation (gpus[n - 1]);

  const int before = 10, after = 30;
  CtTally t = { 0 };
  for (int k = 0; k < before; k++)
    accel_communicator_submit_async (gpu, ops, n, NULL, ct_tally, &t);
  g_autoptr(AccelOp) fault = accel_op_new_by_name ("fault", &error);
  g_assert_no_error (error);
  accel_device_submit_async (gpus[n - 1], fault, NULL, ct_tally, &t);
  for (int k = 0; k < after; k++)
    accel_communicator_submit_async (gpu, ops, n, NULL, ct_tally, &t);
  ct_tally_wait (&t, before + after + 1);
  g_test_message ("%d of %d answers were errors, %d CONTEXT_POISONED", t.failed, before + after + 1, t.poisoned);
  g_assert_cmpint (t.poisoned, >=, 2);   /* the fault's own answer, and collectives */
  g_assert_cmpuint (accel_device_get_generation (gpus[n - 1]), >, gen_last);
  g_assert_cmpuint (accel_device_get_generation (gpus[0]), ==, gen0);

  /* The last rank's buffer is stale; with a new one, the collective runs
   * on a rebuilt communicator and is right. */
  g_clear_object (&x[n - 1]);
  x[n - 1] = ct_alloc (gpus[n - 1], ACCEL_DTYPE_F32, &count, 1);
  g_object_set (ops[n - 1], "src", x[n - 1], "dst", x[n - 1], NULL);
  for (guint r = 0; r < n; r++)
    g_object_unref (ops[r]);
  Job j = { 0 };
  job_alloc (&j, n, ACCEL_DTYPE_F32, 5001, 5001, FALSE);
  run_and_compare (&j, cpu, gpu, make_all_reduce, GINT_TO_POINTER (ACCEL_REDUCTION_SUM), ACCEL_REDUCTION_SUM, TRUE,
                   FALSE, "all-reduce after the rebuild");
  job_clear (&j);
  g_assert_cmpuint (accel_communicator_get_epoch (gpu), >=, 1);
  for (guint r = 0; r < n; r++)
    g_object_unref (x[r]);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cuda/multi/collectives", test_collectives);
  g_test_add_func ("/cuda/multi/send-recv", test_send_recv);
  g_test_add_func ("/cuda/multi/peer-copies", test_peer_copies);
  g_test_add_func ("/cuda/multi/fault", test_fault);
  return ct_run ();
}
