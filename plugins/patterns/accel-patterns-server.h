/* accel-patterns-server.h: the base of the serving actors.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <accel.h>
#include "accel-patterns-request.h"

G_BEGIN_DECLS

/* One batch: requests taken from the queue, their inputs gathered. */
typedef struct {
  gpointer server;             /* unowned: the server that formed it */
  guint64 epoch;               /* the server's restart epoch it was formed in */
  guint64 serial;              /* batches started before it, plus one */
  GPtrArray *requests;         /* AccelPatternsRequest, owned */
  guint rows;
  GPtrArray *inputs;           /* GBytes, one per input spec, covering every row */
  gint64 start_us;
  guint32 model_version;
  const char *tags_key;        /* per-row tags for the replies, or NULL */
  GArray *tags;                /* guint32, tags_per_row per row */
  guint tags_per_row;
  gpointer slot;               /* where a subclass runs it */
  guint attempts;
  GSource *watchdog;
  gboolean over;               /* answered (or abandoned): late results are dropped */
} AccelPatternsBatch;

/* What a failure of a batch says about whom. */
typedef enum {
  ACCEL_PATTERNS_FAILURE_REQUEST,   /* the requests' own: the actor goes on */
  ACCEL_PATTERNS_FAILURE_DEVICE,    /* the device lost its context or stopped: retry elsewhere or later */
  ACCEL_PATTERNS_FAILURE_CRASH,     /* the model or the actor broke: its supervisor decides */
} AccelPatternsFailure;

#define ACCEL_PATTERNS_TYPE_SERVER (accel_patterns_server_get_type ())
G_DECLARE_DERIVABLE_TYPE (AccelPatternsServer, accel_patterns_server, ACCEL_PATTERNS, SERVER, AccelActor)

/*
 * AccelPatternsServerClass:
 * @setup: checks the subclass's properties and calls
 *   accel_patterns_server_set_io() (once, from g_initable_init())
 * @get_capacity: how many more batches may start now
 * @execute: runs a batch; ends with accel_patterns_server_finish_batch()
 * @reset: after a restart: forget what ran (runners), make it anew
 */
struct _AccelPatternsServerClass {
  AccelActorClass parent_class;

  gboolean (*setup) (AccelPatternsServer *self, GError **error);
  guint (*get_capacity) (AccelPatternsServer *self);
  void (*execute) (AccelPatternsServer *self, AccelPatternsBatch *batch);
  void (*reset) (AccelPatternsServer *self);

  gpointer padding[4];
};

void accel_patterns_server_set_io (AccelPatternsServer *self, GPtrArray *input_specs, GPtrArray *output_specs);
void accel_patterns_server_set_tenants (AccelPatternsServer *self, guint n_tenants, char **names, const double *weights);
void accel_patterns_server_finish_batch (AccelPatternsServer *self,
                                         AccelPatternsBatch *batch,
                                         GPtrArray *outputs,
                                         const GError *error);
void accel_patterns_server_finish_or_retry (AccelPatternsServer *self,
                                            AccelPatternsBatch *batch,
                                            GPtrArray *outputs,
                                            const GError *error);
void accel_patterns_server_schedule (AccelPatternsServer *self);
gboolean accel_patterns_server_batch_is_current (AccelPatternsServer *self, AccelPatternsBatch *batch);
gboolean accel_patterns_server_batch_may_retry (AccelPatternsServer *self,
                                                AccelPatternsBatch *batch,
                                                const GError *error);
guint accel_patterns_server_get_max_batch_size (AccelPatternsServer *self);
AccelDevice *accel_patterns_server_find_device (AccelPatternsServer *self, const char *name, GError **error);
void accel_patterns_server_run_on_thread (AccelPatternsServer *self, GSourceFunc func, gpointer data);
AccelPatternsFailure accel_patterns_failure_of (const GError *error);
gboolean accel_patterns_specs_equal (GPtrArray *a, GPtrArray *b);

G_END_DECLS
