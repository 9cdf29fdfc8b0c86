/* accel-patterns-rows.h: picking rows out of host blocks, and reading and
 * writing float rows of any float dtype, for the patterns that split a
 * batch (cascade, moe-router).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <accel.h>

G_BEGIN_DECLS

GBytes *accel_patterns_rows_gather (GBytes *block, gsize item_size, const guint *rows, guint n_rows);
gboolean accel_patterns_dtype_is_real (AccelDType dtype);
void accel_patterns_to_f32 (AccelDType dtype, gconstpointer src, float *dst, gsize n);
void accel_patterns_from_f32 (AccelDType dtype, const float *src, gpointer dst, gsize n);

G_END_DECLS
