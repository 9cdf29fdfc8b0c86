/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-types.h"

G_BEGIN_DECLS

/**
 * ACCEL_SHAPE_MAX_RANK:
 *
 * The largest number of dimensions an #AccelShape can have.
 */
#define ACCEL_SHAPE_MAX_RANK 8

#define ACCEL_TYPE_SHAPE (accel_shape_get_type ())

ACCEL_API
GType accel_shape_get_type (void) G_GNUC_CONST;

ACCEL_API
AccelShape *accel_shape_new (const gint64 *dims, guint n_dims);
ACCEL_API
AccelShape *accel_shape_new_strided (const gint64 *dims, const gint64 *strides, guint n_dims);
ACCEL_API
AccelShape *accel_shape_new_1d (gint64 d0);
ACCEL_API
AccelShape *accel_shape_new_2d (gint64 d0, gint64 d1);
ACCEL_API
AccelShape *accel_shape_new_3d (gint64 d0, gint64 d1, gint64 d2);
ACCEL_API
AccelShape *accel_shape_copy (const AccelShape *shape);
ACCEL_API
void accel_shape_free (AccelShape *shape);
ACCEL_API
guint accel_shape_get_rank (const AccelShape *shape);
ACCEL_API
gint64 accel_shape_get_dim (const AccelShape *shape, guint axis);
ACCEL_API
gint64 accel_shape_get_stride (const AccelShape *shape, guint axis);
ACCEL_API
const gint64 *accel_shape_get_dims (const AccelShape *shape, guint *n_dims);
ACCEL_API
const gint64 *accel_shape_get_strides (const AccelShape *shape, guint *n_dims);
ACCEL_API
gint64 accel_shape_get_n_elements (const AccelShape *shape);
ACCEL_API
gint64 accel_shape_get_extent (const AccelShape *shape);
ACCEL_API
gboolean accel_shape_is_contiguous (const AccelShape *shape);
ACCEL_API
gboolean accel_shape_may_overlap (const AccelShape *shape);
ACCEL_API
gboolean accel_shape_equal (const AccelShape *a, const AccelShape *b);
ACCEL_API
gboolean accel_shape_same_dims (const AccelShape *a, const AccelShape *b);
ACCEL_API
guint accel_shape_hash (const AccelShape *shape);
ACCEL_API
char *accel_shape_to_string (const AccelShape *shape);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AccelShape, accel_shape_free)

G_END_DECLS
