/* accel-plugin-private.h: the plugin object as accel-plugin.c and
 * accel-plugin-metadata.c share it. Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel-private.h"

G_BEGIN_DECLS

struct _AccelPlugin {
  GObject parent_instance;

  char *name;
  char *description;
  char *version;
  char *license;
  char *filename;              /* NULL for a static plugin */
  AccelPluginStatus status;
  char *reason;

  const AccelPluginDesc *desc; /* NULL until the module is opened, or static */
  gboolean loaded;             /* atomic */
  gboolean initialising;
  AccelRegistry *registry;     /* unowned: the registry owns its plugins */

  GPtrArray *features[ACCEL_PLUGIN_N_FEATURE_KINDS];   /* AccelPluginFeature */
  GPtrArray *kernels;          /* AccelKernel, owned */
  GPtrArray *dep_env;          /* char * */
  GPtrArray *dep_paths;        /* char * */
};

/* Adds a copy of @value to @array of strings unless it is there. */
void _accel_plugin_add_unique (GPtrArray *array, const char *value);

G_END_DECLS
