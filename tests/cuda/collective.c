/* Collectives on cuda:0 through NCCL (the nccl plugin): every collective on
 * a 1-rank communicator, against the same collective on a 1-rank CPU
 * communicator (the oracle) on the same fresh random data, odd sizes and
 * in-place forms included; lane hazards around a collective; many in
 * flight; and, in a device host process, a rebuild after a real sticky
 * fault: the collectives in flight fail with CONTEXT_POISONED, none is
 * lost, and the next collective runs right on a rebuilt communicator. In
 * this process, the fault leaves the device FAILED and the communicator
 * says its device is gone.
 *
 * (send and recv need two ranks: the gpu-multi suite runs them.)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include "cuda-test.h"

static const AccelDType dtypes[] = {
  ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16, ACCEL_DTYPE_C64, ACCEL_DTYPE_C128,
  ACCEL_DTYPE_I8, ACCEL_DTYPE_U8, ACCEL_DTYPE_I32, ACCEL_DTYPE_U32, ACCEL_DTYPE_I64,
  ACCEL_DTYPE_FP8_E4M3, ACCEL_DTYPE_FP8_E5M2,
};
static const AccelReduction reductions[] = {
  ACCEL_REDUCTION_SUM, ACCEL_REDUCTION_PROD, ACCEL_REDUCTION_MIN, ACCEL_REDUCTION_MAX, ACCEL_REDUCTION_AVG,
};
static const gint64 counts[] = { 1, 7, 1001, 65537 };

static AccelCommunicator *
comm_of (AccelDevice *device)
{
  g_autoptr(GError) error = NULL;
  AccelCommunicator *comm = accel_communicator_new (&device, 1, &error);
  g_assert_no_error (error);
  return comm;
}

static gboolean
gpu_reduces (AccelDType dtype)
{
  int major = 0, minor = 0;
  if ((dtype != ACCEL_DTYPE_FP8_E4M3 && dtype != ACCEL_DTYPE_FP8_E5M2)
      || g_object_class_find_property (G_OBJECT_GET_CLASS (ct_gpu ()), "compute-capability-major") == NULL)
    return TRUE;
  g_object_get (ct_gpu (), "compute-capability-major", &major, "compute-capability-minor", &minor, NULL);
  return major >= 9;
}

/* Fresh random values for @dtype, written to both devices' buffers. */
static double *
random_values (AccelDType dtype, gsize n)
{
  double *v = g_new (double, MAX (n, 1));
  for (gsize i = 0; i < n; i++)
    {
      if (accel_dtype_is_integer (dtype))
        v[i] = g_test_rand_int_range (1, 100);
      else
        do
          v[i] = g_test_rand_double_range (-2.0, 2.0);
        while (fabs (v[i]) < 1e-3);
    }
  return v;
}

typedef struct {
  AccelBuffer *src[2];   /* [0] cpu, [1] gpu */
  AccelBuffer *dst[2];
} Pair;

static void
pair_clear (Pair *p)
{
  for (guint i = 0; i < 2; i++)
    {
      g_clear_object (&p->src[i]);
      g_clear_object (&p->dst[i]);
    }
}

static void
alloc_pair (Pair *p, AccelDType dtype, gint64 count, gboolean in_place)
{
  AccelDevice *devices[2] = { ct_cpu (), ct_gpu () };
  gsize n = count * ct_components (dtype);
  g_autofree double *v = random_values (dtype, n);
  for (guint i = 0; i < 2; i++)
    {
      p->src[i] = ct_alloc (devices[i], dtype, &count, 1);
      ct_write (p->src[i], v);
      if (in_place)
        p->dst[i] = g_object_ref (p->src[i]);
      else
        {
          p->dst[i] = ct_alloc (devices[i], dtype, &count, 1);
          /* Something else than the result in dst first, on both. */
          g_autofree double *w = random_values (dtype, n);
          ct_write (p->dst[i], w);
        }
    }
}

/* Runs @make's op on both 1-rank communicators, over buffers of @count
 * elements of @dtype (alloc_pair()), and compares dst. */
typedef AccelOp *(*MakeOp) (AccelBuffer *src, AccelBuffer *dst, gpointer data);

static void
run_both (AccelCommunicator *cpu, AccelCommunicator *gpu, AccelDType dtype, gint64 count, gboolean in_place,
          MakeOp make, gpointer data, const char *what)
{
  AccelCommunicator *comms[2] = { cpu, gpu };
  Pair p = { 0 };
  alloc_pair (&p, dtype, count, in_place);
  for (guint i = 0; i < 2; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(AccelOp) op = make (p.src[i], p.dst[i], data);
      gboolean ok = accel_communicator_submit (comms[i], &op, 1, NULL, &error);
      g_assert_no_error (error);
      g_assert_true (ok);
    }
  ct_assert_same_bytes (what, p.dst[0], p.dst[1]);
  pair_clear (&p);
}

static AccelOp *
make_all_reduce (AccelBuffer *src, AccelBuffer *dst, gpointer data)
{
  return accel_all_reduce_new (src, dst, GPOINTER_TO_INT (data));
}

static AccelOp *
make_reduce_scatter (AccelBuffer *src, AccelBuffer *dst, gpointer data)
{
  return accel_reduce_scatter_new (src, dst, GPOINTER_TO_INT (data));
}

static AccelOp *
make_root_reduce (AccelBuffer *src, AccelBuffer *dst, gpointer data)
{
  return accel_root_reduce_new (src, dst, GPOINTER_TO_INT (data), 0);
}

static AccelOp *
make_all_gather (AccelBuffer *src, AccelBuffer *dst, gpointer data)
{
  return accel_all_gather_new (src, dst);
}

static AccelOp *
make_broadcast (AccelBuffer *src, AccelBuffer *dst, gpointer data)
{
  return accel_broadcast_new (src, dst, 0);
}

static AccelOp *
make_all_to_all (AccelBuffer *src, AccelBuffer *dst, gpointer data)
{
  return accel_all_to_all_new (src, dst);
}

static void
test_reductions (void)
{
  AccelDevice *gpu = ct_gpu ();
  if (!gpu)
    return;
  g_autoptr(AccelCommunicator) cpu_comm = comm_of (ct_cpu ());
  g_autoptr(AccelCommunicator) gpu_comm = comm_of (gpu);
  const MakeOp makers[] = { make_all_reduce, make_reduce_scatter, make_root_reduce };
  const char *names[] = { "all-reduce", "reduce-scatter", "root-reduce" };

  for (guint m = 0; m < G_N_ELEMENTS (makers); m++)
    for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
      for (guint e = 0; e < G_N_ELEMENTS (reductions); e++)
        {
          AccelDType dtype = dtypes[d];
          if ((accel_dtype_is_complex (dtype) && reductions[e] != ACCEL_REDUCTION_SUM
               && reductions[e] != ACCEL_REDUCTION_AVG) || !gpu_reduces (dtype))
            continue;
          for (guint c = 0; c < G_N_ELEMENTS (counts); c++)
            {
              g_autofree char *what = g_strdup_printf ("%s %s reduction %d count %" G_GINT64_FORMAT, names[m],
                                                       accel_dtype_get_name (dtype), reductions[e], counts[c]);
              run_both (cpu_comm, gpu_comm, dtype, counts[c], c == 1, makers[m], GINT_TO_POINTER (reductions[e]),
                        what);
            }
        }
}

static void
test_movement (void)
{
  AccelDevice *gpu = ct_gpu ();
  if (!gpu)
    return;
  g_autoptr(AccelCommunicator) cpu_comm = comm_of (ct_cpu ());
  g_autoptr(AccelCommunicator) gpu_comm = comm_of (gpu);
  const MakeOp makers[] = { make_all_gather, make_broadcast, make_all_to_all };
  const char *names[] = { "all-gather", "broadcast", "all-to-all" };

  for (guint m = 0; m < G_N_ELEMENTS (makers); m++)
    for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
      for (guint c = 0; c < G_N_ELEMENTS (counts); c++)
        {
          g_autofree char *what = g_strdup_printf ("%s %s count %" G_GINT64_FORMAT, names[m],
                                                   accel_dtype_get_name (dtypes[d]), counts[c]);
          /* In place for a broadcast at the root; an all-to-all never. */
          run_both (cpu_comm, gpu_comm, dtypes[d], counts[c], c == 2 && m == 1, makers[m], NULL, what);
        }
}

/* The bootstrap op makes NCCL's unique id on the device's own process. */
static void
test_bootstrap (void)
{
  AccelDevice *gpu = ct_gpu ();
  if (!gpu)
    return;
  if (g_strcmp0 (accel_device_get_backend_name (gpu), "cuda") != 0)
    {
      g_test_skip ("collective-bootstrap has a kernel on cuda only");
      return;
    }
  gint64 n = ACCEL_COLLECTIVE_ID_SIZE;
  g_autoptr(AccelBuffer) a = ct_alloc (gpu, ACCEL_DTYPE_U8, &n, 1);
  g_autoptr(AccelBuffer) b = ct_alloc (gpu, ACCEL_DTYPE_U8, &n, 1);
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelOp) op = accel_op_new_by_name ("collective-bootstrap", &error);
  g_assert_no_error (error);
  g_object_set (op, "id", a, NULL);
  ct_submit (gpu, op);
  g_object_set (op, "id", b, NULL);
  ct_submit (gpu, op);
  g_autofree guint8 *ia = ct_read_bytes (a);
  g_autofree guint8 *ib = ct_read_bytes (b);
  /* Two ids differ (each names its own bootstrap root). */
  g_assert_true (memcmp (ia, ib, n) != 0);
}

/* A collective on lane 0 waits for a write on another lane, and a read on
 * another lane waits for it; many of them in flight complete each once. */
static void
test_lanes (void)
{
  AccelDevice *gpu = ct_gpu ();
  if (!gpu)
    return;
  g_autoptr(AccelCommunicator) comm = comm_of (gpu);
  gint64 n = 300007;
  g_autoptr(AccelBuffer) x = ct_alloc (gpu, ACCEL_DTYPE_F32, &n, 1);
  g_autoptr(AccelBuffer) y = ct_alloc (gpu, ACCEL_DTYPE_F32, &n, 1);
  double value = g_test_rand_double_range (0.5, 1.5);
  const int rounds = 12;

  g_autoptr(AccelOp) fill = accel_op_new ("fill", "dst", x, "value", value, NULL);
  accel_op_set_lane (fill, 3);
  ct_submit (gpu, fill);
  for (int k = 0; k < rounds; k++)
    {
      /* y = sum over one rank of x (lane 0), then x = 2 y on lane 2. */
      g_autoptr(GError) error = NULL;
      g_autoptr(AccelOp) ar = accel_all_reduce_new (x, y, ACCEL_REDUCTION_SUM);
      g_assert_true (accel_communicator_submit (comm, &ar, 1, NULL, &error));
      g_assert_no_error (error);
      g_autoptr(AccelOp) copy = accel_op_new ("copy", "src", y, "dst", x, NULL);
      accel_op_set_lane (copy, 2);
      ct_submit (gpu, copy);
      g_autoptr(AccelOp) scal = accel_op_new ("scal", "x", x, "alpha", 2.0, NULL);
      accel_op_set_lane (scal, 1);
      ct_submit (gpu, scal);
    }
  g_autofree double *got = ct_read (x);
  double want = (float) value;
  for (int k = 0; k < rounds; k++)
    want *= 2;
  for (gint64 i = 0; i < n; i += 997)
    g_assert_cmpfloat (got[i], ==, want);
}

/* A real sticky fault (tests/cuda/fault-plugin) while collectives run. */
static void
test_fault (void)
{
  AccelDevice *gpu = ct_gpu ();
  if (!gpu)
    return;
  g_autoptr(AccelCommunicator) comm = comm_of (gpu);
  gint64 n = 1 << 20;
  g_autoptr(AccelBuffer) x = ct_alloc (gpu, ACCEL_DTYPE_F32, &n, 1);
  g_autoptr(AccelOp) ar = accel_all_reduce_new (x, x, ACCEL_REDUCTION_SUM);
  g_autoptr(GError) error = NULL;
  g_assert_true (accel_communicator_submit (comm, &ar, 1, NULL, &error));
  g_assert_no_error (error);
  guint gen = accel_device_get_generation (gpu);

  const int before = 20, after = 20;
  CtTally t = { 0 };
  for (int k = 0; k < before; k++)
    accel_communicator_submit_async (comm, &ar, 1, NULL, ct_tally, &t);
  g_autoptr(AccelOp) fault = accel_op_new_by_name ("fault", &error);
  g_assert_no_error (error);
  /* On the collectives' lane: those after it come after it on the GPU
   * (on another lane, all of them could finish before it faults). */
  accel_op_set_lane (fault, accel_communicator_get_lane (comm));
  accel_device_submit_async (gpu, fault, NULL, ct_tally, &t);
  for (int k = 0; k < after; k++)
    accel_communicator_submit_async (comm, &ar, 1, NULL, ct_tally, &t);
  ct_tally_wait (&t, before + after + 1);
  /* The fault's own answer is one of them. */
  g_test_message ("%d of %d answers were errors, %d CONTEXT_POISONED", t.failed, before + after + 1, t.poisoned);
  g_assert_cmpint (t.failed, >=, 2);

  /* A CUDA device in this process cannot recover (a CPU stand-in can). */
  if (!ct_gpu_is_remote () && g_strcmp0 (accel_device_get_backend_name (gpu), "cuda") == 0)
    {
      /* In this process the fault is for good: the communicator says so. */
      g_assert_cmpint (accel_device_get_state (gpu), ==, ACCEL_DEVICE_STATE_FAILED);
      g_assert_false (accel_communicator_submit (comm, &ar, 1, NULL, &error));
      g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_DEVICE_FAILED);
      return;
    }

  g_assert_cmpuint (accel_device_get_generation (gpu), >, gen);
  g_assert_cmpint (t.poisoned, >=, 2);
  /* The old buffer went with the context; a new one runs on a rebuilt
   * communicator, right. */
  g_assert_false (accel_communicator_submit (comm, &ar, 1, NULL, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER);
  g_clear_error (&error);
  /* The epoch moves when the next collective rebuilds the communicator. */
  guint epoch = accel_communicator_get_epoch (comm);
  g_autoptr(AccelCommunicator) cpu_comm = comm_of (ct_cpu ());
  run_both (cpu_comm, comm, ACCEL_DTYPE_F32, 4099, FALSE, make_all_reduce, GINT_TO_POINTER (ACCEL_REDUCTION_SUM),
            "all-reduce after the rebuild");
  g_assert_cmpuint (accel_communicator_get_epoch (comm), >, epoch);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cuda/collective/reductions", test_reductions);
  g_test_add_func ("/cuda/collective/movement", test_movement);
  g_test_add_func ("/cuda/collective/bootstrap", test_bootstrap);
  g_test_add_func ("/cuda/collective/lanes", test_lanes);
  g_test_add_func ("/cuda/collective/fault", test_fault);
  return ct_run ();
}
