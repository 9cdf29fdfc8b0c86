/* accel-cpu-fft.c: fft on the CPU through FFTW3.
 *
 * Plans are made with FFTW_ESTIMATE (which neither times nor touches the
 * arrays) on the op's own arrays, cached by everything a plan depends on,
 * and run with the new-array execute functions, which FFTW allows from any
 * thread at once. FFTW's planner is not thread-safe, so making and
 * destroying plans happens under one lock. The cache is bounded: the least
 * recently used plan is dropped once nothing runs it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include <fftw3.h>
#include "accel-cpu-kernels.h"

#define PLAN_CACHE_SIZE 64
/* Transforms with at least this many points use FFTW's threads. */
#define THREADED_POINTS (1 << 15)

typedef struct {
  int kind;
  int direction;
  int is_double;
  int rank;
  int n[3];
  int howmany;
  int inplace;
  int align_in;
  int align_out;
  int n_threads;
} PlanKey;

typedef struct {
  PlanKey key;
  gpointer plan;      /* fftw_plan or fftwf_plan */
  int ref;            /* under planner_lock: the cache's and each user's */
  GList link;         /* in lru, while cached */
  gboolean cached;
} PlanEntry;

static GMutex planner_lock;
static GHashTable *plans;       /* PlanKey -> PlanEntry, under planner_lock */
static GQueue lru = G_QUEUE_INIT;

static guint
plan_key_hash (gconstpointer p)
{
  const int *v = p;
  guint h = 5381;
  for (gsize i = 0; i < sizeof (PlanKey) / sizeof (int); i++)
    h = h * 33 + (guint) v[i];
  return h;
}

static gboolean
plan_key_equal (gconstpointer a, gconstpointer b)
{
  return memcmp (a, b, sizeof (PlanKey)) == 0;
}

static void
threads_init_once (void)
{
#ifdef ACCEL_CPU_HAVE_FFTW_THREADS
  static gsize once = 0;
  if (g_once_init_enter (&once))
    {
      fftw_init_threads ();
      fftwf_init_threads ();
      g_once_init_leave (&once, 1);
    }
#endif
}

/* Under planner_lock. */
static void
entry_destroy_locked (PlanEntry *e)
{
  if (e->key.is_double)
    fftw_destroy_plan (e->plan);
  else
    fftwf_destroy_plan (e->plan);
  g_free (e);
}

static void
entry_unref_locked (PlanEntry *e)
{
  if (--e->ref == 0)
    entry_destroy_locked (e);
}

static gpointer
make_plan_locked (const PlanKey *k, void *in, void *out)
{
  const unsigned flags = FFTW_ESTIMATE;
  int points = 1;
  for (int i = 0; i < k->rank; i++)
    points *= k->n[i];
  int half = k->n[k->rank - 1] / 2 + 1;
  int cpoints = points / k->n[k->rank - 1] * half;
  int sign = k->direction == ACCEL_FFT_FORWARD ? FFTW_FORWARD : FFTW_BACKWARD;

#ifdef ACCEL_CPU_HAVE_FFTW_THREADS
  if (k->is_double)
    fftw_plan_with_nthreads (k->n_threads);
  else
    fftwf_plan_with_nthreads (k->n_threads);
#endif

  if (k->is_double)
    switch (k->kind)
      {
      case ACCEL_FFT_C2C:
        return fftw_plan_many_dft (k->rank, k->n, k->howmany, in, NULL, 1, points,
                                   out, NULL, 1, points, sign, flags);
      case ACCEL_FFT_R2C:
        return fftw_plan_many_dft_r2c (k->rank, k->n, k->howmany, in, NULL, 1, points,
                                       out, NULL, 1, cpoints, flags);
      default:
        return fftw_plan_many_dft_c2r (k->rank, k->n, k->howmany, in, NULL, 1, cpoints,
                                       out, NULL, 1, points, flags);
      }
  switch (k->kind)
    {
    case ACCEL_FFT_C2C:
      return fftwf_plan_many_dft (k->rank, k->n, k->howmany, in, NULL, 1, points,
                                  out, NULL, 1, points, sign, flags);
    case ACCEL_FFT_R2C:
      return fftwf_plan_many_dft_r2c (k->rank, k->n, k->howmany, in, NULL, 1, points,
                                      out, NULL, 1, cpoints, flags);
    default:
      return fftwf_plan_many_dft_c2r (k->rank, k->n, k->howmany, in, NULL, 1, cpoints,
                                      out, NULL, 1, points, flags);
    }
}

/* Returns a referenced entry for @key, planning on @in/@out if needed. */
static PlanEntry *
plan_acquire (const PlanKey *key, void *in, void *out, GError **error)
{
  threads_init_once ();

  g_mutex_lock (&planner_lock);
  if (plans == NULL)
    plans = g_hash_table_new (plan_key_hash, plan_key_equal);

  PlanEntry *e = g_hash_table_lookup (plans, key);
  if (e != NULL)
    {
      g_queue_unlink (&lru, &e->link);
      g_queue_push_head_link (&lru, &e->link);
      e->ref++;
      g_mutex_unlock (&planner_lock);
      return e;
    }

  gpointer plan = make_plan_locked (key, in, out);
  if (plan == NULL)
    {
      g_mutex_unlock (&planner_lock);
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_LIBRARY,
                   "FFTW: could not plan a %d-dimensional transform of %d x %d x %d, batch %d",
                   key->rank, key->n[0], key->rank > 1 ? key->n[1] : 1,
                   key->rank > 2 ? key->n[2] : 1, key->howmany);
      return NULL;
    }

  while (g_queue_get_length (&lru) >= PLAN_CACHE_SIZE)
    {
      GList *last = g_queue_pop_tail_link (&lru);
      PlanEntry *old = last->data;
      g_hash_table_remove (plans, &old->key);
      old->cached = FALSE;
      entry_unref_locked (old);
    }

  e = g_new0 (PlanEntry, 1);
  e->key = *key;
  e->plan = plan;
  e->ref = 2;   /* the cache's and the caller's */
  e->cached = TRUE;
  e->link.data = e;
  g_hash_table_insert (plans, &e->key, e);
  g_queue_push_head_link (&lru, &e->link);
  g_mutex_unlock (&planner_lock);
  return e;
}

static void
plan_release (PlanEntry *e)
{
  g_mutex_lock (&planner_lock);
  entry_unref_locked (e);
  g_mutex_unlock (&planner_lock);
}

gboolean
accel_cpu_fft_run (AccelOp *op, gpointer context, GError **error)
{
  AccelFft *self = ACCEL_FFT (op);
  AccelBuffer *real = self->kind == ACCEL_FFT_C2R ? self->output : self->input;
  const AccelShape *shape = accel_buffer_get_shape (real);   /* the logical (real-side) shape */
  guint rank = accel_shape_get_rank (shape);
  guint n_axes = self->n_axes;
  PlanKey key;
  gint64 batch = 1, points = 1;

  memset (&key, 0, sizeof key);
  key.kind = self->kind;
  key.direction = self->direction;
  key.rank = (int) n_axes;
  for (guint i = 0; i < rank - n_axes; i++)
    batch *= accel_shape_get_dim (shape, i);
  for (guint i = 0; i < n_axes; i++)
    {
      key.n[i] = (int) accel_shape_get_dim (shape, rank - n_axes + i);
      points *= key.n[i];
    }
  if (batch == 0)
    return TRUE;
  if (batch > G_MAXINT || points > G_MAXINT || batch * points > G_MAXINT)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                   "cpu fft: %" G_GINT64_FORMAT " transforms of %" G_GINT64_FORMAT
                   " points exceed FFTW's int indexing", batch, points);
      return FALSE;
    }

  AccelDType in_type = accel_buffer_get_dtype (self->input);
  key.is_double = in_type == ACCEL_DTYPE_F64 || in_type == ACCEL_DTYPE_C128;
  key.howmany = (int) batch;
  guint threads = accel_cpu_exec_get_threads (context);
#ifdef ACCEL_CPU_HAVE_FFTW_THREADS
  key.n_threads = batch * points >= THREADED_POINTS ? (int) threads : 1;
#else
  key.n_threads = 1;
  (void) threads;
#endif

  void *in = accel_buffer_get_data (self->input);
  void *out = accel_buffer_get_data (self->output);
  void *scratch = NULL;

  /* FFTW's multi-dimensional c2r overwrites its input, which the op only
   * reads: it transforms a copy. */
  if (self->kind == ACCEL_FFT_C2R)
    {
      gsize size = accel_buffer_get_size (self->input);
      scratch = accel_cpu_scratch_alloc (size, error);
      if (scratch == NULL)
        return FALSE;
      memcpy (scratch, in, size);
      in = scratch;
    }

  key.inplace = in == out;
  key.align_in = key.is_double ? fftw_alignment_of (in) : fftwf_alignment_of (in);
  key.align_out = key.is_double ? fftw_alignment_of (out) : fftwf_alignment_of (out);

  PlanEntry *e = plan_acquire (&key, in, out, error);
  if (e == NULL)
    {
      accel_cpu_scratch_free (scratch);
      return FALSE;
    }

  if (key.is_double)
    switch (self->kind)
      {
      case ACCEL_FFT_C2C: fftw_execute_dft (e->plan, in, out); break;
      case ACCEL_FFT_R2C: fftw_execute_dft_r2c (e->plan, in, out); break;
      default: fftw_execute_dft_c2r (e->plan, in, out); break;
      }
  else
    switch (self->kind)
      {
      case ACCEL_FFT_C2C: fftwf_execute_dft (e->plan, in, out); break;
      case ACCEL_FFT_R2C: fftwf_execute_dft_r2c (e->plan, in, out); break;
      default: fftwf_execute_dft_c2r (e->plan, in, out); break;
      }

  plan_release (e);
  accel_cpu_scratch_free (scratch);
  return TRUE;
}
