/* accel-patterns-fair-share.c: the `fair-share` actor type: a batcher
 * whose queue is shared among tenants by weighted fair queuing, so that
 * one tenant flooding it cannot starve the others.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-patterns-fair-share.h"

#include <stdlib.h>

struct _AccelPatternsFairShare {
  AccelPatternsSingle parent_instance;
  char **tenants;
};

/**
 * AccelPatternsFairShare:
 *
 * `fair-share`: serves as `batcher` does; every request names its
 * `tenant`, one of `tenants` (`NAME` or `NAME:WEIGHT`). Within a priority
 * level, each batch takes rows from the tenants in proportion to their
 * weights (start-time fair queuing): a tenant that sends ten times more
 * only waits longer itself.
 */
G_DEFINE_FINAL_TYPE (AccelPatternsFairShare, accel_patterns_fair_share, ACCEL_PATTERNS_TYPE_SINGLE)

/* `model` is installed on this class too (by
 * accel_patterns_single_class_install_model()) with the id the parent
 * handles, so this class's own ids start far above it and the rest is
 * passed on. */
enum {
  PROP_TENANTS = 100,
};

static AccelPatternsServerClass *server_class;

static void
accel_patterns_fair_share_finalize (GObject *object)
{
  g_strfreev (ACCEL_PATTERNS_FAIR_SHARE (object)->tenants);
  G_OBJECT_CLASS (accel_patterns_fair_share_parent_class)->finalize (object);
}

static void
accel_patterns_fair_share_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  AccelPatternsFairShare *self = ACCEL_PATTERNS_FAIR_SHARE (object);
  if (prop_id == PROP_TENANTS)
    {
      g_strfreev (self->tenants);
      self->tenants = g_value_dup_boxed (value);
    }
  else
    G_OBJECT_CLASS (accel_patterns_fair_share_parent_class)->set_property (object, prop_id, value, pspec);
}

static void
accel_patterns_fair_share_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  AccelPatternsFairShare *self = ACCEL_PATTERNS_FAIR_SHARE (object);
  if (prop_id == PROP_TENANTS)
    g_value_set_boxed (value, self->tenants);
  else
    G_OBJECT_CLASS (accel_patterns_fair_share_parent_class)->get_property (object, prop_id, value, pspec);
}

static gboolean
accel_patterns_fair_share_setup (AccelPatternsServer *server, GError **error)
{
  AccelPatternsFairShare *self = ACCEL_PATTERNS_FAIR_SHARE (server);
  const char *name = accel_actor_get_name (ACCEL_ACTOR (self));
  guint n = self->tenants ? g_strv_length (self->tenants) : 0;

  if (n == 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s: “tenants” is empty; name each tenant (NAME or NAME:WEIGHT)", name);
      return FALSE;
    }
  g_auto(GStrv) names = g_new0 (char *, n + 1);
  g_autofree double *weights = g_new (double, n);
  for (guint i = 0; i < n; i++)
    {
      const char *colon = strchr (self->tenants[i], ':');
      names[i] = colon ? g_strndup (self->tenants[i], colon - self->tenants[i]) : g_strdup (self->tenants[i]);
      weights[i] = 1.0;
      char *end = NULL;
      if (colon)
        weights[i] = g_ascii_strtod (colon + 1, &end);
      if (*names[i] == '\0' || (colon && (end == colon + 1 || *end != '\0' || !(weights[i] > 0) || weights[i] > 1e9)))
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "%s: “tenants” entry “%s” is not NAME or NAME:WEIGHT with a weight above 0",
                       name, self->tenants[i]);
          return FALSE;
        }
      for (guint j = 0; j < i; j++)
        if (g_str_equal (names[j], names[i]))
          {
            g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                         "%s: “tenants” names “%s” twice", name, names[i]);
            return FALSE;
          }
    }
  accel_patterns_server_set_tenants (server, n, names, weights);
  return server_class->setup (server, error);
}

static void
accel_patterns_fair_share_class_init (AccelPatternsFairShareClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  server_class = g_type_class_peek_parent (klass);
  object_class->finalize = accel_patterns_fair_share_finalize;
  object_class->set_property = accel_patterns_fair_share_set_property;
  object_class->get_property = accel_patterns_fair_share_get_property;
  ACCEL_PATTERNS_SERVER_CLASS (klass)->setup = accel_patterns_fair_share_setup;

  accel_actor_class_set_metadata (ACCEL_ACTOR_CLASS (klass), "fair-share",
                                  "A batcher sharing its queue among tenants by weighted fair queuing");
  accel_patterns_single_class_install_model (ACCEL_PATTERNS_SINGLE_CLASS (klass), FALSE);
  g_object_class_install_property (object_class, PROP_TENANTS,
                                   g_param_spec_boxed ("tenants", NULL,
                                                       "Tenants requests name, as NAME or NAME:WEIGHT (weight 1 by default)",
                                                       G_TYPE_STRV,
                                                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));
}

static void
accel_patterns_fair_share_init (AccelPatternsFairShare *self)
{
}
