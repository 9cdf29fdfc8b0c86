/* accel-patterns-request.h: a serving actor's request, read from its
 * GVariant, and the reply built for it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <accel.h>

G_BEGIN_DECLS

typedef struct {
  guint64 ticket;              /* from accel_actor_defer_reply() */
  guint64 seq;                 /* arrival order among accepted requests */
  gint64 arrival_us;
  gint64 deadline_us;          /* 0: none */
  guint priority;              /* 1 is the highest; 0 in a parsed request: the default */
  gint64 timeout_us;           /* as asked; -1: the default */
  char *tenant;                /* as asked, or NULL */
  guint tenant_index;
  gboolean delayed;            /* timed out and kept (timeout-action delay) */
  gboolean has_sequence;
  guint64 sequence;
  guint rows;
  GPtrArray *inputs;           /* GBytes, one per model input */

  /* Where the queue keeps it. */
  GList link;
  GQueue *queue;
  GList deadline_link;
} AccelPatternsRequest;

AccelPatternsRequest *accel_patterns_request_parse (GVariant *message,
                                                    GPtrArray *input_specs,
                                                    guint max_rows,
                                                    GError **error);
void accel_patterns_request_free (AccelPatternsRequest *request);

GVariant *accel_patterns_tensor_new (const AccelTensorSpec *spec, guint rows, GBytes *bytes);

typedef struct {
  guint64 batch;
  guint32 model_version;
  guint32 batch_size;
  gint64 queue_us;
  const char *tags_key;        /* NULL: no tags */
  const guint32 *tags;         /* tags_per_row per row of the request */
  guint tags_per_row;
} AccelPatternsReplyInfo;

GVariant *accel_patterns_reply_new (AccelPatternsRequest *request,
                                    GPtrArray *output_specs,
                                    GPtrArray *outputs,
                                    guint first_row,
                                    const AccelPatternsReplyInfo *info);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AccelPatternsRequest, accel_patterns_request_free)

G_END_DECLS
