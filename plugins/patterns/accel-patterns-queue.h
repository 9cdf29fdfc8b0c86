/* accel-patterns-queue.h: the queue of a serving actor: priority levels,
 * weighted fair queuing among tenants, deadlines.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel-patterns-request.h"

G_BEGIN_DECLS

typedef struct _AccelPatternsQueue AccelPatternsQueue;

AccelPatternsQueue *accel_patterns_queue_new (guint levels, guint n_tenants, const double *weights);
void accel_patterns_queue_free (AccelPatternsQueue *self);
void accel_patterns_queue_push (AccelPatternsQueue *self, AccelPatternsRequest *request);
guint accel_patterns_queue_get_n_requests (AccelPatternsQueue *self);
guint64 accel_patterns_queue_get_n_rows (AccelPatternsQueue *self);
gint64 accel_patterns_queue_get_oldest_arrival (AccelPatternsQueue *self);
gint64 accel_patterns_queue_get_next_deadline (AccelPatternsQueue *self);
AccelPatternsRequest *accel_patterns_queue_pop_expired (AccelPatternsQueue *self, gint64 now);
void accel_patterns_queue_push_delayed (AccelPatternsQueue *self, AccelPatternsRequest *request);
AccelPatternsRequest *accel_patterns_queue_take (AccelPatternsQueue *self, guint room);
GPtrArray *accel_patterns_queue_drain (AccelPatternsQueue *self);

G_END_DECLS
