/* accel-plugin-private.h: the plugin's fields, shared by accel-plugin.c
 * and accel-plugin-metadata.c. Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel-private.h"

G_BEGIN_DECLS

/* A plugin file (or a plugin linked into the program). Known by its
 * metadata without loading it; see accel-plugin.c. */
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

/* Appends @value to an array of strings unless it is there already. */
void _accel_plugin_add_unique (GPtrArray *array, const char *value);

G_END_DECLS
