/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "gstacceltransform.h"

G_BEGIN_DECLS

#define GST_TYPE_ACCEL_CONVERT_SCALE (gst_accel_convert_scale_get_type ())
G_DECLARE_FINAL_TYPE (GstAccelConvertScale, gst_accel_convert_scale, GST, ACCEL_CONVERT_SCALE, GstAccelTransform)

GST_ELEMENT_REGISTER_DECLARE (accelconvertscale);

G_END_DECLS
