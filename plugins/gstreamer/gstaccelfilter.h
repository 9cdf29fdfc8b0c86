/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "gstacceltransform.h"

G_BEGIN_DECLS

#define GST_TYPE_ACCEL_FILTER (gst_accel_filter_get_type ())
G_DECLARE_FINAL_TYPE (GstAccelFilter, gst_accel_filter, GST, ACCEL_FILTER, GstAccelTransform)

GST_ELEMENT_REGISTER_DECLARE (accelfilter);

G_END_DECLS
