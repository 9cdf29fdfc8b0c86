/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-types.h"
#include "accel-dtype.h"
#include "accel-shape.h"

G_BEGIN_DECLS

typedef struct _AccelTensorSpec AccelTensorSpec;

#define ACCEL_TYPE_TENSOR_SPEC (accel_tensor_spec_get_type ())
ACCEL_API
GType accel_tensor_spec_get_type (void) G_GNUC_CONST;

ACCEL_API
AccelTensorSpec *accel_tensor_spec_new (const char *name,
                                        AccelDType dtype,
                                        const gint64 *item_dims,
                                        guint n_item_dims);
ACCEL_API
AccelTensorSpec *accel_tensor_spec_ref (AccelTensorSpec *self);
ACCEL_API
void accel_tensor_spec_unref (AccelTensorSpec *self);
ACCEL_API
const char *accel_tensor_spec_get_name (const AccelTensorSpec *self);
ACCEL_API
AccelDType accel_tensor_spec_get_dtype (const AccelTensorSpec *self);
ACCEL_API
const gint64 *accel_tensor_spec_get_item_dims (const AccelTensorSpec *self, guint *n_item_dims);
ACCEL_API
gint64 accel_tensor_spec_get_item_elements (const AccelTensorSpec *self);
ACCEL_API
gsize accel_tensor_spec_get_item_size (const AccelTensorSpec *self);
ACCEL_API
AccelShape *accel_tensor_spec_get_batch_shape (const AccelTensorSpec *self, gint64 batch);
ACCEL_API
gboolean accel_tensor_spec_equal (const AccelTensorSpec *a, const AccelTensorSpec *b);
ACCEL_API
char *accel_tensor_spec_to_string (const AccelTensorSpec *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AccelTensorSpec, accel_tensor_spec_unref)

G_END_DECLS
