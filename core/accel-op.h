/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-types.h"
#include "accel-buffer.h"

G_BEGIN_DECLS

/**
 * AccelAccess:
 * @ACCEL_ACCESS_READ: the op reads the buffer
 * @ACCEL_ACCESS_WRITE: the op writes the buffer
 * @ACCEL_ACCESS_READ_WRITE: both
 *
 * How an op uses one of its buffer properties, so the runtime can order work.
 */
typedef enum /*< flags >*/ {
  ACCEL_ACCESS_READ = 1 << 0,
  ACCEL_ACCESS_WRITE = 1 << 1,
  ACCEL_ACCESS_READ_WRITE = ACCEL_ACCESS_READ | ACCEL_ACCESS_WRITE,
} AccelAccess;

#define ACCEL_TYPE_OP (accel_op_get_type ())
ACCEL_API
G_DECLARE_DERIVABLE_TYPE (AccelOp, accel_op, ACCEL, OP, GObject)

/**
 * AccelOpClass:
 * @parent_class: the parent class
 * @validate: checks the op's parameters and buffers together (shapes,
 *   dtypes); the required buffers are checked before it runs
 *
 * The class of every op type. Parameters and buffers are properties.
 */
struct _AccelOpClass {
  GObjectClass parent_class;

  gboolean (*validate) (AccelOp *self, GError **error);

  /*< private >*/
  gpointer padding[8];
};

/**
 * AccelBufferResolveFunc:
 * @handle: a buffer handle as written by accel_op_serialize()
 * @user_data: closure data
 *
 * Returns: (transfer full) (nullable): the buffer, or %NULL if unknown
 */
typedef AccelBuffer *(*AccelBufferResolveFunc) (guint64 handle, gpointer user_data);

ACCEL_API
void accel_op_class_set_metadata (AccelOpClass *klass, const char *name, const char *description);
ACCEL_API
void accel_op_class_install_buffer (AccelOpClass *klass,
                                    guint property_id,
                                    const char *name,
                                    const char *blurb,
                                    AccelAccess access,
                                    gboolean required);
ACCEL_API
const char *accel_op_class_get_name (AccelOpClass *klass);
ACCEL_API
const char *accel_op_class_get_description (AccelOpClass *klass);
ACCEL_API
AccelAccess accel_op_class_get_buffer_access (AccelOpClass *klass, const char *property);

ACCEL_API
AccelOp *accel_op_new (const char *type_name, const char *first_property_name, ...);
ACCEL_API
AccelOp *accel_op_new_by_name (const char *type_name, GError **error);
ACCEL_API
AccelOp *accel_op_new_with_properties (const char *type_name,
                                       guint n_properties,
                                       const char **names,
                                       const GValue *values,
                                       GError **error);
ACCEL_API
const char *accel_op_get_type_name (AccelOp *self);
ACCEL_API
int accel_op_get_lane (AccelOp *self);
ACCEL_API
void accel_op_set_lane (AccelOp *self, int lane);
ACCEL_API
gboolean accel_op_validate (AccelOp *self, GError **error);
ACCEL_API
GPtrArray *accel_op_get_buffers (AccelOp *self, AccelAccess access);
ACCEL_API
GVariant *accel_op_serialize (AccelOp *self);
ACCEL_API
AccelOp *accel_op_deserialize (GVariant *variant,
                               AccelBufferResolveFunc resolve,
                               gpointer user_data,
                               GError **error);

/* Helpers for validate implementations: each names the property in its error. */
ACCEL_API
AccelBuffer *accel_op_peek_buffer (AccelOp *self, const char *property);
ACCEL_API
gboolean accel_op_check_dtype (AccelOp *self, const char *property, const AccelDType *allowed, guint n_allowed, GError **error);
ACCEL_API
gboolean accel_op_check_same_dtype (AccelOp *self, const char *property_a, const char *property_b, GError **error);
ACCEL_API
gboolean accel_op_check_rank (AccelOp *self, const char *property, guint min_rank, guint max_rank, GError **error);
ACCEL_API
gboolean accel_op_check_contiguous (AccelOp *self, const char *property, GError **error);

G_END_DECLS
