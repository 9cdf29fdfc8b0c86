/* gstaccel.c: the `accel` GStreamer plugin: accelconvertscale and
 * accelfilter, Accel image ops in media pipelines.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-config.h"
#include "gstaccelconvertscale.h"
#include "gstaccelfilter.h"

static gboolean
plugin_init (GstPlugin *plugin)
{
  gboolean ok = GST_ELEMENT_REGISTER (accelconvertscale, plugin);
  ok &= GST_ELEMENT_REGISTER (accelfilter, plugin);
  return ok;
}

#define PACKAGE "accel"
GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, accel,
                   "Accel image ops (colour conversion, scaling, filters, warps, morphology) on CPU and GPU devices",
                   plugin_init, ACCEL_VERSION, "LGPL", "Accel", "https://github.com/accel")
