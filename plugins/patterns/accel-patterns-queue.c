/* accel-patterns-queue.c: the queue of a serving actor.
 *
 * Requests wait in one FIFO per (priority level, tenant), plus one FIFO of
 * requests whose timeout passed under timeout-action `delay`, served after
 * everything else. A batch takes from the highest level that has work;
 * within a level, from the tenant with the smallest virtual time, which
 * grows by rows / weight as the tenant is served (start-time fair
 * queuing): a tenant that floods the queue only lengthens its own wait. A
 * tenant that comes back from idle starts at the current virtual time, so
 * it cannot have saved credit. With one tenant this is plain FIFO.
 *
 * Deadlines are kept in a second list, sorted, so that the earliest is
 * found at once.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-patterns-queue.h"

struct _AccelPatternsQueue {
  guint levels;
  guint n_tenants;
  GQueue *fifos;               /* levels × n_tenants */
  double *weights;
  double *vtime;               /* per tenant */
  guint *backlog;              /* requests queued per tenant, delayed ones aside */
  double now_vtime;
  GQueue delayed;
  GQueue deadlines;            /* by deadline_us, through deadline_link */
  guint n_requests;
  guint64 n_rows;
};

AccelPatternsQueue *
accel_patterns_queue_new (guint levels, guint n_tenants, const double *weights)
{
  AccelPatternsQueue *self = g_new0 (AccelPatternsQueue, 1);
  self->levels = MAX (levels, 1);
  self->n_tenants = MAX (n_tenants, 1);
  self->fifos = g_new0 (GQueue, self->levels * self->n_tenants);
  self->weights = g_new (double, self->n_tenants);
  self->vtime = g_new0 (double, self->n_tenants);
  self->backlog = g_new0 (guint, self->n_tenants);
  for (guint t = 0; t < self->n_tenants; t++)
    self->weights[t] = weights && weights[t] > 0 ? weights[t] : 1.0;
  g_queue_init (&self->delayed);
  g_queue_init (&self->deadlines);
  return self;
}

void
accel_patterns_queue_free (AccelPatternsQueue *self)
{
  g_autoptr(GPtrArray) left = accel_patterns_queue_drain (self);
  g_ptr_array_set_free_func (left, (GDestroyNotify) accel_patterns_request_free);
  g_free (self->fifos);
  g_free (self->weights);
  g_free (self->vtime);
  g_free (self->backlog);
  g_free (self);
}

static void
add_deadline (AccelPatternsQueue *self, AccelPatternsRequest *request)
{
  if (request->deadline_us == 0)
    return;
  /* Most requests share one timeout, so the new one usually goes last. */
  GList *after = self->deadlines.tail;
  while (after && ((AccelPatternsRequest *) after->data)->deadline_us > request->deadline_us)
    after = after->prev;
  request->deadline_link.data = request;
  if (after)
    g_queue_insert_after_link (&self->deadlines, after, &request->deadline_link);
  else
    g_queue_push_head_link (&self->deadlines, &request->deadline_link);
}

static void
enqueue (AccelPatternsQueue *self, GQueue *fifo, AccelPatternsRequest *request)
{
  request->link.data = request;
  request->queue = fifo;
  g_queue_push_tail_link (fifo, &request->link);
  self->n_requests++;
  self->n_rows += request->rows;
}

void
accel_patterns_queue_push (AccelPatternsQueue *self, AccelPatternsRequest *request)
{
  guint level = CLAMP (request->priority, 1, self->levels) - 1;
  guint tenant = MIN (request->tenant_index, self->n_tenants - 1);

  if (self->backlog[tenant]++ == 0)
    self->vtime[tenant] = MAX (self->vtime[tenant], self->now_vtime);
  enqueue (self, &self->fifos[level * self->n_tenants + tenant], request);
  add_deadline (self, request);
}

/* Takes @request out of whichever FIFO holds it (not the deadlines). */
static void
unlink_request (AccelPatternsQueue *self, AccelPatternsRequest *request)
{
  g_queue_unlink (request->queue, &request->link);
  if (request->queue != &self->delayed)
    self->backlog[MIN (request->tenant_index, self->n_tenants - 1)]--;
  request->queue = NULL;
  self->n_requests--;
  self->n_rows -= request->rows;
}

static void
unlink_deadline (AccelPatternsQueue *self, AccelPatternsRequest *request)
{
  if (request->deadline_link.data != NULL)
    {
      g_queue_unlink (&self->deadlines, &request->deadline_link);
      request->deadline_link.data = NULL;
    }
}

guint
accel_patterns_queue_get_n_requests (AccelPatternsQueue *self)
{
  return self->n_requests;
}

guint64
accel_patterns_queue_get_n_rows (AccelPatternsQueue *self)
{
  return self->n_rows;
}

/* The arrival time of the request that waited longest, or G_MAXINT64. */
gint64
accel_patterns_queue_get_oldest_arrival (AccelPatternsQueue *self)
{
  gint64 oldest = G_MAXINT64;
  for (guint i = 0; i < self->levels * self->n_tenants; i++)
    if (self->fifos[i].head)
      oldest = MIN (oldest, ((AccelPatternsRequest *) self->fifos[i].head->data)->arrival_us);
  if (self->delayed.head)
    oldest = MIN (oldest, ((AccelPatternsRequest *) self->delayed.head->data)->arrival_us);
  return oldest;
}

/* The earliest deadline of a queued request, or G_MAXINT64. */
gint64
accel_patterns_queue_get_next_deadline (AccelPatternsQueue *self)
{
  return self->deadlines.head ? ((AccelPatternsRequest *) self->deadlines.head->data)->deadline_us : G_MAXINT64;
}

/* Takes out the request with the earliest deadline if it is at or before
 * @now; the caller rejects it or gives it back with _push_delayed(). */
AccelPatternsRequest *
accel_patterns_queue_pop_expired (AccelPatternsQueue *self, gint64 now)
{
  if (self->deadlines.head == NULL)
    return NULL;
  AccelPatternsRequest *request = self->deadlines.head->data;
  if (request->deadline_us > now)
    return NULL;
  unlink_deadline (self, request);
  unlink_request (self, request);
  return request;
}

void
accel_patterns_queue_push_delayed (AccelPatternsQueue *self, AccelPatternsRequest *request)
{
  request->delayed = TRUE;
  enqueue (self, &self->delayed, request);
}

/* The next request to serve, if it has no more than @room rows. */
AccelPatternsRequest *
accel_patterns_queue_take (AccelPatternsQueue *self, guint room)
{
  GQueue *fifo = NULL;
  for (guint level = 0; level < self->levels && fifo == NULL; level++)
    {
      double best = G_MAXDOUBLE;
      for (guint t = 0; t < self->n_tenants; t++)
        {
          GQueue *q = &self->fifos[level * self->n_tenants + t];
          if (q->head && self->vtime[t] < best)
            {
              best = self->vtime[t];
              fifo = q;
            }
        }
    }
  if (fifo == NULL)
    fifo = self->delayed.head ? &self->delayed : NULL;
  if (fifo == NULL)
    return NULL;

  AccelPatternsRequest *request = fifo->head->data;
  if (request->rows > room)
    return NULL;
  if (fifo != &self->delayed)
    {
      guint t = MIN (request->tenant_index, self->n_tenants - 1);
      self->now_vtime = self->vtime[t];
      self->vtime[t] += request->rows / self->weights[t];
    }
  unlink_deadline (self, request);
  unlink_request (self, request);
  return request;
}

/* Everything still queued, oldest level first; the queue is then empty. */
GPtrArray *
accel_patterns_queue_drain (AccelPatternsQueue *self)
{
  GPtrArray *all = g_ptr_array_new ();
  for (guint i = 0; i <= self->levels * self->n_tenants; i++)
    {
      GQueue *q = i < self->levels * self->n_tenants ? &self->fifos[i] : &self->delayed;
      while (q->head)
        {
          AccelPatternsRequest *request = q->head->data;
          unlink_deadline (self, request);
          unlink_request (self, request);
          g_ptr_array_add (all, request);
        }
    }
  return all;
}
