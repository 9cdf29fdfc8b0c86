/* patterns-test.h: what the programs testing the serving patterns share: a
 * sealed system, `linear` models with their weights kept for references,
 * requests and replies, asks collected on the main context, a gate that
 * holds an actor's thread, and `TestAffine`, a model whose runs the test
 * can hold back or make fail.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <accel.h>

G_BEGIN_DECLS

AccelSystem *pt_system (void);
AccelDevice *pt_cpu (void);
int pt_run (void);
AccelActor *pt_spawn (const char *type, const char *first, ...) G_GNUC_NULL_TERMINATED;

/* Uniform values in [lo, hi), never zero, rounded to @dtype. */
double *pt_random (AccelDType dtype, gsize n, double lo, double hi);
double pt_round (AccelDType dtype, double v);
double pt_eps (AccelDType dtype);
GBytes *pt_bytes (AccelDType dtype, const double *values, gsize n);

/* A `linear` model of random weights (and biases), kept for the reference. */
typedef struct {
  AccelModel *model;
  AccelDType dtype;
  guint n_layers;
  gint64 *sizes;
  double **weights;             /* per layer, [k, n] */
  double **biases;              /* per layer, [n] */
  int activation;               /* 0 none, 1 relu, 2 gelu */
  int output_activation;
} PtLinear;

PtLinear *pt_linear_new (AccelDType dtype, const gint64 *sizes, guint n_sizes,
                         const char *activation, const char *output_activation);
void pt_linear_free (PtLinear *linear);
double *pt_linear_reference (PtLinear *linear, const double *x, guint rows);
double *pt_linear_reference_scaled (PtLinear *linear, const double *x, guint rows, double **scale);
void pt_linear_check (PtLinear *linear, const char *what, const double *x, guint rows, const double *y,
                      double rtol, double atol);

/* A request of @rows rows of @x ([rows, d]) for input @input; more keys
 * may be added to the dict before g_variant_dict_end(). */
GVariantDict *pt_request (const char *input, AccelDType dtype, const double *x, guint rows, gint64 d);
GVariant *pt_request_end (GVariantDict *dict);
/* Output @name of a reply, widened; its rows and item size through @rows
 * and @d. */
double *pt_reply_output (GVariant *reply, const char *name, AccelDType dtype, guint *rows, gint64 *d);
guint32 pt_reply_u32 (GVariant *reply, const char *key);

/* Asks answered on the main context, in the order they came back. */
typedef struct {
  GVariant *reply;
  GError *error;
  gint order;                   /* -1 until answered */
} PtAnswer;

typedef struct {
  guint n;
  guint done;
  PtAnswer *answers;
} PtAsks;

PtAsks *pt_asks_new (guint n);
void pt_asks_free (PtAsks *asks);
void pt_ask (PtAsks *asks, AccelActor *actor, guint index, GVariant *message);
void pt_asks_wait (PtAsks *asks, guint count);

/* Holds @actor's dispatcher thread, so that what is sent meanwhile is
 * received in one go after pt_gate_release(). */
typedef struct _PtGate PtGate;
PtGate *pt_gate_hold (AccelActor *actor);
void pt_gate_release (PtGate *gate);

/* Polls until @actor's uint64 property @name reaches @value (30 s at most). */
void pt_wait_for_stat (AccelActor *actor, const char *name, guint64 value);

guint pt_moe_check_reply (GVariant *reply, guint rows, const double *scores, double **outs, guint n_experts, guint k,
                          gint64 h);

/* TestAffine: input "x" f32 [d]; output "y" = scale · x + shift, and with
 * @confidence also "confidence" f32 [] = x[0]. Its runs can be held until
 * released, and a row whose x[0] is @fail_on fails the run with
 * ACCEL_ERROR_FAILED; device faults can be injected into its runs. */
#define PT_TYPE_AFFINE (pt_affine_get_type ())
G_DECLARE_FINAL_TYPE (PtAffine, pt_affine, PT, AFFINE, GObject)

PtAffine *pt_affine_new (gint64 d, double scale, double shift, gboolean confidence);
void pt_affine_set_fail_on (PtAffine *self, double value);
void pt_affine_hold (PtAffine *self, gboolean hold);
void pt_affine_inject_device_faults (PtAffine *self, guint skip, guint count);
guint pt_affine_get_faults_pending (PtAffine *self);
guint pt_affine_get_runs (PtAffine *self);
guint pt_affine_get_prepares (PtAffine *self);
double pt_affine_value (double scale, double shift, double x);
guint pt_cascade_check_reply (GVariant *reply, const double *x, guint rows, gint64 d, double threshold,
                              const double *scale, const double *shift);

G_END_DECLS
