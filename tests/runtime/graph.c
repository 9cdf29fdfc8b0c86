/* Tests of AccelGraph on cpu:0, in this process and behind an
 * `accel-device-host` (the same semantics a CUDA graph has): a recorded
 * chain replayed several times against a float64 reference on random data
 * of odd sizes, recorded copies that later changes to an op do not touch,
 * the order of a replay among other ops, a graph recorded before a context
 * rebuild (STALE_BUFFER), bad recordings, the serialised replay read by a
 * device host (one message per replay; the host's cache), and the device
 * `stats` property.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <accel.h>
#include <math.h>
#include <string.h>
#include "accel-test-buffers.h"

static AccelBuffer *
alloc_f64 (AccelDevice *dev, gint64 n, double *host)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelShape) s = accel_shape_new_1d (n);
  AccelBuffer *b = accel_device_alloc (dev, ACCEL_DTYPE_F64, s, &error);
  g_assert_no_error (error);
  for (gint64 i = 0; i < n; i++)
    host[i] = g_test_rand_double_range (-1, 1);
  accel_buffer_write (b, (guint8 *) host, n * sizeof (double), &error);
  g_assert_no_error (error);
  return b;
}

static void
assert_buffer_equals (AccelBuffer *b, const double *want, gint64 n)
{
  g_autoptr(GError) error = NULL;
  g_autofree double *got = g_new (double, n);
  accel_buffer_read (b, (guint8 *) got, n * sizeof (double), &error);
  g_assert_no_error (error);
  for (gint64 i = 0; i < n; i++)
    if (fabs (got[i] - want[i]) > 1e-12 * (1 + fabs (want[i])))
      g_error ("element %" G_GINT64_FORMAT ": got %.17g, want %.17g", i, got[i], want[i]);
}

/* x *= a; y += b x; y *= c; x <- y; on the host. */
static void
reference_step (double *x, double *y, gint64 n, double a, double b, double c)
{
  for (gint64 i = 0; i < n; i++)
    {
      x[i] *= a;
      y[i] += b * x[i];
      y[i] *= c;
      x[i] = y[i];
    }
}

static AccelGraph *
record_chain (AccelDevice *dev, AccelBuffer *x, AccelBuffer *y, double a, double b, double c)
{
  g_autoptr(GError) error = NULL;
  AccelGraph *graph = accel_graph_new (dev, -1);
  g_autoptr(AccelOp) scal_x = accel_scal_new (a, x);
  g_autoptr(AccelOp) axpy = accel_axpy_new (b, x, y);
  g_autoptr(AccelOp) scal_y = accel_scal_new (c, y);
  g_autoptr(AccelOp) copy = accel_copy_new (y, x);
  AccelOp *ops[] = { scal_x, axpy, scal_y, copy };
  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    {
      g_assert_true (accel_graph_add (graph, ops[i], &error));
      g_assert_no_error (error);
    }
  /* The graph holds a copy: changing the op now changes nothing. */
  g_object_set (scal_x, "alpha", a + 1.0, NULL);
  g_assert_cmpuint (accel_graph_get_n_ops (graph), ==, 4);
  g_assert_true (accel_graph_instantiate (graph, &error));
  g_assert_no_error (error);
  return graph;
}

/* x and y of random values on a device, kept on the host for the
 * reference, and the chain recorded over them. */
typedef struct {
  double *x, *y;
  AccelBuffer *bx, *by;
  AccelGraph *graph;
} Chain;

static Chain
chain_new (AccelDevice *dev, gint64 n, double a, double b, double c)
{
  Chain ch = { g_new (double, n), g_new (double, n), NULL, NULL, NULL };
  ch.bx = alloc_f64 (dev, n, ch.x);
  ch.by = alloc_f64 (dev, n, ch.y);
  ch.graph = record_chain (dev, ch.bx, ch.by, a, b, c);
  return ch;
}

static void
chain_clear (Chain *ch)
{
  g_clear_object (&ch->graph);
  g_clear_object (&ch->by);
  g_clear_object (&ch->bx);
  g_clear_pointer (&ch->y, g_free);
  g_clear_pointer (&ch->x, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Chain, chain_clear)

/* On cpu:0 in this process, and behind a device host. */
static void
test_chain (AccelTestDeviceFixture *f, gconstpointer user_data)
{
  AccelDevice *dev = f->dev;
  g_autoptr(GError) error = NULL;
  gint64 n = g_test_rand_int_range (1, 3000) | 1;
  double a = g_test_rand_double_range (0.5, 1.5), b = g_test_rand_double_range (-1, 1);
  double c = g_test_rand_double_range (0.5, 1.0);
  g_auto(Chain) ch = chain_new (dev, n, a, b, c);
  g_autoptr(AccelOp) replay = accel_graph_new_replay (ch.graph);
  guint reps = g_test_rand_int_range (2, 6);
  for (guint r = 0; r < reps; r++)
    {
      g_assert_true (accel_device_submit (dev, replay, NULL, &error));
      g_assert_no_error (error);
      reference_step (ch.x, ch.y, n, a, b, c);
    }
  assert_buffer_equals (ch.bx, ch.x, n);
  assert_buffer_equals (ch.by, ch.y, n);

  /* Ops submitted around a replay see its effects in order. */
  double v = g_test_rand_double_range (-2, 2);
  g_autoptr(AccelOp) fill = accel_fill_new (ch.bx, v);
  g_assert_true (accel_device_submit (dev, fill, NULL, &error));
  g_assert_true (accel_graph_replay (ch.graph, NULL, &error));
  g_assert_no_error (error);
  for (gint64 i = 0; i < n; i++)
    ch.x[i] = v;
  reference_step (ch.x, ch.y, n, a, b, c);
  assert_buffer_equals (ch.by, ch.y, n);

  /* One work item per replay, whatever the graph holds. */
  g_autoptr(GVariant) before = accel_device_get_stats (dev);
  guint64 ops_before = 0, ops_after = 0;
  g_variant_lookup (before, "ops-completed", "t", &ops_before);
  g_assert_true (accel_graph_replay (ch.graph, NULL, &error));
  g_autoptr(GVariant) after = accel_device_get_stats (dev);
  g_variant_lookup (after, "ops-completed", "t", &ops_after);
  g_assert_cmpuint (ops_after, ==, ops_before + 1);
  reference_step (ch.x, ch.y, n, a, b, c);
  assert_buffer_equals (ch.by, ch.y, n);
}


typedef struct {
  gint pending;
  GError *error;
} AsyncState;

static void
replayed (GObject *source, GAsyncResult *result, gpointer data)
{
  AsyncState *state = data;
  GError *error = NULL;
  if (!accel_graph_replay_finish (ACCEL_GRAPH (source), result, &error) && state->error == NULL)
    state->error = error;
  else
    g_clear_error (&error);
  state->pending--;
}

/* Many replays queued at once run in order. */
static void
test_async (AccelTestDeviceFixture *f, gconstpointer user_data)
{
  AccelDevice *dev = f->dev;
  gint64 n = g_test_rand_int_range (1, 500);
  double a = g_test_rand_double_range (0.9, 1.1), b = g_test_rand_double_range (-0.5, 0.5);
  double c = g_test_rand_double_range (0.5, 1.0);
  g_auto(Chain) ch = chain_new (dev, n, a, b, c);

  AsyncState state = { 0, NULL };
  guint reps = g_test_rand_int_range (5, 20);
  for (guint r = 0; r < reps; r++)
    {
      state.pending++;
      accel_graph_replay_async (ch.graph, NULL, replayed, &state);
      reference_step (ch.x, ch.y, n, a, b, c);
    }
  while (state.pending > 0)
    g_main_context_iteration (NULL, TRUE);
  g_assert_no_error (state.error);
  assert_buffer_equals (ch.by, ch.y, n);
}

/* On cpu:0 in this process, and behind a device host. */
static void
test_stale (AccelTestDeviceFixture *f, gconstpointer user_data)
{
  AccelDevice *dev = f->dev;
  g_autoptr(GError) error = NULL;
  accel_actor_set_strategy (ACCEL_ACTOR (dev), 3, 60000, NULL, NULL, NULL);
  gint64 n = g_test_rand_int_range (1, 100);
  g_auto(Chain) ch = chain_new (dev, n, 1.5, 0.5, 0.75);
  g_autoptr(AccelGraph) open = accel_graph_new (dev, 0);

  accel_test_assert_fault_poisons (dev);
  g_assert_cmpuint (accel_device_get_generation (dev), ==, 1);

  /* The graph's memory went with the old context: its replay is refused
   * before anything runs, and so is recording into an old graph. */
  g_assert_false (accel_graph_replay (ch.graph, NULL, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER);
  g_clear_error (&error);
  g_autofree double *z = g_new (double, n);
  g_autoptr(AccelBuffer) bz = alloc_f64 (dev, n, z);
  g_autoptr(AccelOp) scal = accel_scal_new (2.0, bz);
  g_assert_false (accel_graph_add (open, scal, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER);
  g_clear_error (&error);

  /* A graph of the new generation works. */
  g_autofree double *w = g_new (double, n);
  g_autoptr(AccelBuffer) bw = alloc_f64 (dev, n, w);
  g_autoptr(AccelGraph) fresh = record_chain (dev, bz, bw, 0.5, 2.0, 0.25);
  g_assert_true (accel_graph_replay (fresh, NULL, &error));
  g_assert_no_error (error);
  reference_step (z, w, n, 0.5, 2.0, 0.25);
  assert_buffer_equals (bw, w, n);
}


static void
test_bad_input (AccelTestDeviceFixture *f, gconstpointer user_data)
{
  AccelDevice *dev = f->dev;
  g_autoptr(AccelDevice) other = accel_test_remote_cpu_device (f->system);
  g_autoptr(GError) error = NULL;
  gint64 n = g_test_rand_int_range (2, 50);
  g_autofree double *x = g_new (double, n);
  g_autoptr(AccelBuffer) bx = alloc_f64 (dev, n, x);
  g_autoptr(AccelBuffer) elsewhere = alloc_f64 (other, n, x);

  g_autoptr(AccelGraph) graph = accel_graph_new (dev, -1);
  /* Nothing recorded: nothing to instantiate. */
  g_assert_false (accel_graph_instantiate (graph, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  /* An op that would not validate is refused, naming its property. */
  g_autoptr(AccelOp) bad = accel_op_new_by_name ("axpy", &error);
  g_assert_no_error (error);
  g_object_set (bad, "x", bx, NULL);
  g_assert_false (accel_graph_add (graph, bad, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "“y”"));
  g_clear_error (&error);

  /* A buffer of another device. */
  g_autoptr(AccelOp) foreign = accel_scal_new (2.0, elsewhere);
  g_assert_false (accel_graph_add (graph, foreign, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_WRONG_DEVICE);
  g_clear_error (&error);

  /* A replay cannot be recorded; a graph that is not instantiated cannot
   * be replayed; an instantiated one takes no more ops. */
  g_autoptr(AccelOp) scal = accel_scal_new (3.0, bx);
  g_assert_true (accel_graph_add (graph, scal, &error));
  g_autoptr(AccelOp) early = accel_graph_new_replay (graph);
  g_assert_false (accel_device_submit (dev, early, NULL, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_true (accel_graph_instantiate (graph, &error));
  g_assert_false (accel_graph_add (graph, scal, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_autoptr(AccelGraph) outer = accel_graph_new (dev, -1);
  g_autoptr(AccelOp) nested = accel_graph_new_replay (graph);
  g_assert_false (accel_graph_add (outer, nested, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED);
  g_clear_error (&error);

  /* A replay on another device is refused: its buffers are not there. */
  g_assert_false (accel_device_submit (other, nested, NULL, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_WRONG_DEVICE);
  g_clear_error (&error);
}

static AccelBuffer *
resolve_from_table (guint64 handle, gpointer data)
{
  AccelBuffer *b = g_hash_table_lookup (data, &handle);
  return b ? g_object_ref (b) : NULL;
}

/* What a device host does with a replay: it reads the graph once and
 * keeps it while the content under its handle stays the same. */
static void
test_serialised (AccelTestDeviceFixture *f, gconstpointer user_data)
{
  AccelDevice *dev = f->dev;
  g_autoptr(GError) error = NULL;
  gint64 n = g_test_rand_int_range (1, 64);
  g_auto(Chain) ch = chain_new (dev, n, 1.25, -0.5, 0.5);
  g_autoptr(AccelOp) replay = accel_graph_new_replay (ch.graph);

  g_autoptr(GHashTable) table = g_hash_table_new (g_int64_hash, g_int64_equal);
  guint64 hx = accel_buffer_get_handle (ch.bx), hy = accel_buffer_get_handle (ch.by);
  g_hash_table_insert (table, &hx, ch.bx);
  g_hash_table_insert (table, &hy, ch.by);

  g_autoptr(GVariant) form = accel_op_serialize (replay);
  g_autoptr(AccelOp) read1 = accel_op_deserialize (form, resolve_from_table, table, &error);
  g_assert_no_error (error);
  g_autoptr(AccelOp) read2 = accel_op_deserialize (form, resolve_from_table, table, &error);
  g_assert_no_error (error);
  AccelGraph *g1 = ACCEL_REPLAY (read1)->graph, *g2 = ACCEL_REPLAY (read2)->graph;
  g_assert_true (g1 == g2);
  g_assert_true (g1 != ch.graph);
  g_assert_cmpuint (accel_graph_get_n_ops (g1), ==, 4);
  g_assert_null (accel_graph_get_device (g1));
  g_assert_cmpuint (accel_op_get_n_buffer_slots (read1), ==, 2);
  g_autoptr(GVariant) again = accel_op_serialize (read1);
  g_assert_true (g_variant_equal (form, again));

  /* The graph read back runs like the original. */
  g_assert_true (accel_device_submit (dev, read1, NULL, &error));
  g_assert_no_error (error);
  reference_step (ch.x, ch.y, n, 1.25, -0.5, 0.5);
  assert_buffer_equals (ch.by, ch.y, n);

  /* A hostile form: an unknown handle. */
  g_hash_table_remove (table, &hy);
  g_autoptr(AccelGraph) other = record_chain (dev, ch.bx, ch.by, 2.0, 1.0, 0.5);
  g_autoptr(AccelOp) other_replay = accel_graph_new_replay (other);
  g_autoptr(GVariant) other_form = accel_op_serialize (other_replay);
  g_assert_null (accel_op_deserialize (other_form, resolve_from_table, table, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER);
}

static void
test_stats (AccelTestDeviceFixture *f, gconstpointer user_data)
{
  AccelDevice *dev = f->dev;
  g_autoptr(GError) error = NULL;
  gint64 n = g_test_rand_int_range (1, 1000);
  g_autofree double *x = g_new (double, n);
  g_autoptr(AccelBuffer) bx = alloc_f64 (dev, n, x);   /* one write */
  guint ops = g_test_rand_int_range (1, 10);
  for (guint i = 0; i < ops; i++)
    {
      g_autoptr(AccelOp) scal = accel_scal_new (0.5, bx);
      g_assert_true (accel_device_submit (dev, scal, NULL, &error));
    }
  g_autofree double *back = g_new (double, n);
  g_assert_true (accel_buffer_read (bx, (guint8 *) back, n * sizeof (double), &error));
  g_autoptr(AccelOp) fault = accel_op_new_by_name ("fault", &error);
  g_assert_false (accel_device_submit (dev, fault, NULL, &error));
  g_clear_error (&error);

  g_autoptr(GVariant) stats = NULL;
  g_object_get (dev, "stats", &stats, NULL);
  guint64 v = 0;
  g_assert_true (g_variant_lookup (stats, "ops-completed", "t", &v));
  g_assert_cmpuint (v, ==, ops + 1);
  g_assert_true (g_variant_lookup (stats, "transfers-completed", "t", &v));
  g_assert_cmpuint (v, ==, 2);
  g_assert_true (g_variant_lookup (stats, "errors", "t", &v));
  g_assert_cmpuint (v, ==, 1);
  g_assert_true (g_variant_lookup (stats, "bytes-written", "t", &v));
  g_assert_cmpuint (v, ==, n * sizeof (double));
  g_assert_true (g_variant_lookup (stats, "bytes-moved", "t", &v));
  g_assert_cmpuint (v, ==, 2 * n * sizeof (double));
  g_assert_true (g_variant_lookup (stats, "busy-us", "t", &v));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  accel_test_add_cpu ("/graph/chain", NULL, test_chain);
  accel_test_add_remote_cpu ("/graph/chain-remote", NULL, test_chain);
  accel_test_add_cpu ("/graph/async", NULL, test_async);
  accel_test_add_cpu ("/graph/stale", NULL, test_stale);
  accel_test_add_remote_cpu ("/graph/stale-remote", NULL, test_stale);
  accel_test_add_cpu ("/graph/bad-input", NULL, test_bad_input);
  accel_test_add_cpu ("/graph/serialised", NULL, test_serialised);
  accel_test_add_cpu ("/graph/stats", NULL, test_stats);
  return g_test_run ();
}
