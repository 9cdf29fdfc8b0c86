/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-patterns-server.h"

G_BEGIN_DECLS

#define ACCEL_PATTERNS_TYPE_SINGLE (accel_patterns_single_get_type ())
G_DECLARE_DERIVABLE_TYPE (AccelPatternsSingle, accel_patterns_single, ACCEL_PATTERNS, SINGLE, AccelPatternsServer)

struct _AccelPatternsSingleClass {
  AccelPatternsServerClass parent_class;

  gpointer padding[4];
};

void accel_patterns_single_class_install_model (AccelPatternsSingleClass *klass, gboolean swappable);
guint32 accel_patterns_single_get_model_version (AccelPatternsSingle *self);

G_END_DECLS
