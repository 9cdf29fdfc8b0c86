/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-types.h"
#include "accel-buffer.h"
#include "accel-property-field.h"

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

/**
 * AccelOpParamKind:
 * @ACCEL_OP_PARAM_BUFFER: an #AccelBuffer field (`AccelBuffer *`), a
 *   property of type #AccelBuffer with an #AccelAccess
 * @ACCEL_OP_PARAM_BOOLEAN: a `gboolean` field
 * @ACCEL_OP_PARAM_INT: an `int` field
 * @ACCEL_OP_PARAM_UINT: a `guint` field
 * @ACCEL_OP_PARAM_INT64: a `gint64` field
 * @ACCEL_OP_PARAM_UINT64: a `guint64` field
 * @ACCEL_OP_PARAM_DOUBLE: a `double` field
 * @ACCEL_OP_PARAM_ENUM: a field of a registered enum type (stored as an `int`)
 * @ACCEL_OP_PARAM_FLAGS: a field of a registered flags type (stored as a `guint`)
 * @ACCEL_OP_PARAM_STRING: a `char *` field the op owns
 * @ACCEL_OP_PARAM_OBJECT: a #GObject field (of the entry's type) the op
 *   holds a reference to; not serialised by the table (a class with one
 *   writes what a device host needs of it in its `serialize_extra`)
 *
 * What one entry of an op's parameter table (#AccelOpParam) holds.
 */
typedef enum {
  ACCEL_OP_PARAM_BUFFER = 1,
  ACCEL_OP_PARAM_BOOLEAN,
  ACCEL_OP_PARAM_INT,
  ACCEL_OP_PARAM_UINT,
  ACCEL_OP_PARAM_INT64,
  ACCEL_OP_PARAM_UINT64,
  ACCEL_OP_PARAM_DOUBLE,
  ACCEL_OP_PARAM_ENUM,
  ACCEL_OP_PARAM_FLAGS,
  ACCEL_OP_PARAM_STRING,
  ACCEL_OP_PARAM_OBJECT,
} AccelOpParamKind;

/**
 * AccelOpParamFlags:
 * @ACCEL_OP_PARAM_DEFAULT: nothing special
 * @ACCEL_OP_PARAM_REQUIRED: a buffer the op cannot run without
 *   (accel_op_validate() fails while it is unset)
 * @ACCEL_OP_PARAM_ALLOW_NAN: a double that may be NaN; its range bounds
 *   every other value (a range of `-INFINITY` to `INFINITY` with this flag
 *   takes every binary64 value)
 *
 * How an entry of a parameter table is checked.
 */
typedef enum /*< flags >*/ {
  ACCEL_OP_PARAM_DEFAULT = 0,
  ACCEL_OP_PARAM_REQUIRED = 1 << 0,
  ACCEL_OP_PARAM_ALLOW_NAN = 1 << 1,
} AccelOpParamFlags;

/**
 * AccelOpParam: (skip)
 * @name: the property name (kebab-case)
 * @blurb: one line for `accel-inspect`
 * @kind: what the field holds
 * @offset: the field's offset in the instance struct (G_STRUCT_OFFSET())
 * @access: for buffers, how the op uses it
 * @flags: checks
 * @get_type: for enums, flags and objects, the type's `get_type` function
 * @min: the smallest value of an integer field
 * @max: the largest value of an integer field (for
 *   %ACCEL_OP_PARAM_UINT64, the bits of a #guint64)
 * @def: the default of an integer, boolean, enum or flags field
 * @dmin: the smallest value of a double field
 * @dmax: the largest value of a double field
 * @ddef: the default of a double field
 *
 * One parameter of an op type. An op class declares its parameters as a
 * static table of these (best written with ACCEL_OP_BUFFER(),
 * ACCEL_OP_INT(), ACCEL_OP_DOUBLE() and friends) and installs it with
 * accel_op_class_install_params(): #AccelOp then makes the properties and
 * does their get, set, defaults, dispose, range checks, serialisation and
 * buffer walking from the table. Values outside an entry's range can be
 * set; accel_op_validate() refuses them with an error that names the
 * property, so a wrong value is never replaced by a silent default.
 */
typedef struct {
  const char *name;
  const char *blurb;
  AccelOpParamKind kind;
  guint offset;
  AccelAccess access;
  AccelOpParamFlags flags;
  GType (*get_type) (void);
  gint64 min;
  gint64 max;
  gint64 def;
  double dmin;
  double dmax;
  double ddef;
} AccelOpParam;

/* The offset of @field in @Type, checked against @CType at compile time:
 * accel-property-field.h's checks. Not for bindings. */
#ifndef __GI_SCANNER__
#define ACCEL_OP_FIELD_OFFSET_(Type, field, CType) ACCEL_FIELD_OFFSET_ (Type, field, CType)
#define ACCEL_OP_FIELD_SIZED_(Type, field, CType) ACCEL_FIELD_SIZED_ (Type, field, CType)
#endif

/**
 * ACCEL_OP_BUFFER: (skip)
 * @Type: the instance struct
 * @field: its `AccelBuffer *` field
 * @name: the property name
 * @blurb: what the buffer is
 * @access: an #AccelAccess
 * @flags: #AccelOpParamFlags, such as %ACCEL_OP_PARAM_REQUIRED
 *
 * A buffer entry of a parameter table.
 */
#define ACCEL_OP_BUFFER(Type, field, name, blurb, access, flags)                          \
  { (name), (blurb), ACCEL_OP_PARAM_BUFFER, ACCEL_OP_FIELD_OFFSET_ (Type, field, AccelBuffer *), \
    (access), (AccelOpParamFlags) (flags), NULL, 0, 0, 0, 0.0, 0.0, 0.0 }

/**
 * ACCEL_OP_BOOLEAN: (skip)
 * @Type: the instance struct
 * @field: its `gboolean` field
 * @name: the property name
 * @blurb: what it means
 * @def: the default
 *
 * A boolean entry of a parameter table.
 */
#define ACCEL_OP_BOOLEAN(Type, field, name, blurb, def)                                   \
  { (name), (blurb), ACCEL_OP_PARAM_BOOLEAN, ACCEL_OP_FIELD_OFFSET_ (Type, field, gboolean), \
    0, 0, NULL, 0, 1, (def) ? 1 : 0, 0.0, 0.0, 0.0 }

/**
 * ACCEL_OP_INT: (skip)
 * @Type: the instance struct
 * @field: its `int` field
 * @name: the property name
 * @blurb: what it means
 * @min: the smallest value accepted
 * @max: the largest value accepted
 * @def: the default
 *
 * An `int` entry of a parameter table.
 */
#define ACCEL_OP_INT(Type, field, name, blurb, min, max, def)                             \
  { (name), (blurb), ACCEL_OP_PARAM_INT, ACCEL_OP_FIELD_OFFSET_ (Type, field, int),     \
    0, 0, NULL, (min), (max), (def), 0.0, 0.0, 0.0 }

/**
 * ACCEL_OP_UINT: (skip)
 * @Type: the instance struct
 * @field: its `guint` field
 * @name: the property name
 * @blurb: what it means
 * @min: the smallest value accepted
 * @max: the largest value accepted
 * @def: the default
 *
 * A `guint` entry of a parameter table.
 */
#define ACCEL_OP_UINT(Type, field, name, blurb, min, max, def)                            \
  { (name), (blurb), ACCEL_OP_PARAM_UINT, ACCEL_OP_FIELD_OFFSET_ (Type, field, guint),  \
    0, 0, NULL, (min), (max), (def), 0.0, 0.0, 0.0 }

/**
 * ACCEL_OP_INT64: (skip)
 * @Type: the instance struct
 * @field: its `gint64` field
 * @name: the property name
 * @blurb: what it means
 * @min: the smallest value accepted
 * @max: the largest value accepted
 * @def: the default
 *
 * A `gint64` entry of a parameter table.
 */
#define ACCEL_OP_INT64(Type, field, name, blurb, min, max, def)                           \
  { (name), (blurb), ACCEL_OP_PARAM_INT64, ACCEL_OP_FIELD_SIZED_ (Type, field, gint64), \
    0, 0, NULL, (min), (max), (def), 0.0, 0.0, 0.0 }

/**
 * ACCEL_OP_UINT64: (skip)
 * @Type: the instance struct
 * @field: its `guint64` field
 * @name: the property name
 * @blurb: what it means
 * @min: the smallest value accepted
 * @max: the largest value accepted
 * @def: the default
 *
 * A `guint64` entry of a parameter table.
 */
#define ACCEL_OP_UINT64(Type, field, name, blurb, min, max, def)                          \
  { (name), (blurb), ACCEL_OP_PARAM_UINT64, ACCEL_OP_FIELD_SIZED_ (Type, field, guint64), \
    0, 0, NULL, (gint64) (guint64) (min), (gint64) (guint64) (max), (gint64) (guint64) (def), 0.0, 0.0, 0.0 }

/**
 * ACCEL_OP_DOUBLE: (skip)
 * @Type: the instance struct
 * @field: its `double` field
 * @name: the property name
 * @blurb: what it means
 * @min: the smallest value accepted
 * @max: the largest value accepted
 * @def: the default
 * @flags: #AccelOpParamFlags, such as %ACCEL_OP_PARAM_ALLOW_NAN
 *
 * A `double` entry of a parameter table.
 */
#define ACCEL_OP_DOUBLE(Type, field, name, blurb, min, max, def, flags)                   \
  { (name), (blurb), ACCEL_OP_PARAM_DOUBLE, ACCEL_OP_FIELD_OFFSET_ (Type, field, double), \
    0, (AccelOpParamFlags) (flags), NULL, 0, 0, 0, (min), (max), (def) }

/**
 * ACCEL_OP_ENUM: (skip)
 * @Type: the instance struct
 * @field: its enum field
 * @name: the property name
 * @blurb: what it means
 * @get_type: the enum type's `get_type` function
 * @def: the default
 *
 * An enum entry of a parameter table.
 */
#define ACCEL_OP_ENUM(Type, field, name, blurb, get_type, def)                            \
  { (name), (blurb), ACCEL_OP_PARAM_ENUM, ACCEL_OP_FIELD_SIZED_ (Type, field, int),     \
    0, 0, (get_type), 0, 0, (def), 0.0, 0.0, 0.0 }

/**
 * ACCEL_OP_FLAGS: (skip)
 * @Type: the instance struct
 * @field: its flags field
 * @name: the property name
 * @blurb: what it means
 * @get_type: the flags type's `get_type` function
 * @def: the default
 *
 * A flags entry of a parameter table.
 */
#define ACCEL_OP_FLAGS(Type, field, name, blurb, get_type, def)                           \
  { (name), (blurb), ACCEL_OP_PARAM_FLAGS, ACCEL_OP_FIELD_SIZED_ (Type, field, guint),  \
    0, 0, (get_type), 0, 0, (def), 0.0, 0.0, 0.0 }

/**
 * ACCEL_OP_STRING: (skip)
 * @Type: the instance struct
 * @field: its `char *` field
 * @name: the property name
 * @blurb: what it means
 *
 * A string entry of a parameter table (default %NULL; the op owns a copy).
 */
#define ACCEL_OP_STRING(Type, field, name, blurb)                                         \
  { (name), (blurb), ACCEL_OP_PARAM_STRING, ACCEL_OP_FIELD_OFFSET_ (Type, field, char *), \
    0, 0, NULL, 0, 0, 0, 0.0, 0.0, 0.0 }

/**
 * ACCEL_OP_OBJECT: (skip)
 * @Type: the instance struct
 * @field: its object field (a pointer to a #GObject subtype)
 * @name: the property name
 * @blurb: what it is
 * @get_type: the object type's `get_type` function
 * @flags: #AccelOpParamFlags, such as %ACCEL_OP_PARAM_REQUIRED
 *
 * An object entry of a parameter table (default %NULL; the op holds a
 * reference). Such a field is not serialised: a class with one writes what
 * another process needs of it in #AccelOpClass.serialize_extra.
 */
#define ACCEL_OP_OBJECT(Type, field, name, blurb, get_type, flags)                        \
  { (name), (blurb), ACCEL_OP_PARAM_OBJECT, ACCEL_OP_FIELD_SIZED_ (Type, field, gpointer), \
    0, (AccelOpParamFlags) (flags), (get_type), 0, 0, 0, 0.0, 0.0, 0.0 }

/**
 * ACCEL_DEFINE_OP_TYPE: (skip)
 * @TN: the type name, `AccelGemm`
 * @t_n: its lower-case prefix, `accel_gemm`
 * @op_name: the op type name users write, `"gemm"`
 * @description: one line for `accel-inspect`
 * @params: the static #AccelOpParam table (an array, not a pointer)
 * @validate_func: the class's #AccelOpClass.validate, or %NULL
 *
 * Defines a final op type declared by its parameter table, with
 * G_DECLARE_FINAL_TYPE (@TN, @t_n, …, #AccelOp) in its header: the GType,
 * a class_init that names the type, installs @params and sets @validate_func,
 * and an empty instance init (the table sets the defaults). Place it after
 * the table and the validate function.
 */
#define ACCEL_DEFINE_OP_TYPE(TN, t_n, op_name, description, params, validate_func) \
  ACCEL_DEFINE_OP_TYPE_WITH_CODE (TN, t_n, op_name, description, params, validate_func, {})

/**
 * ACCEL_DEFINE_OP_TYPE_WITH_CODE: (skip)
 * @TN: the type name
 * @t_n: its lower-case prefix
 * @op_name: the op type name users write
 * @description: one line for `accel-inspect`
 * @params: the static #AccelOpParam table
 * @validate_func: the class's validate, or %NULL
 * @_C_: more code for class_init, where `op_class` is the #AccelOpClass;
 *   an op family installs its shared tables here
 *
 * As ACCEL_DEFINE_OP_TYPE(), with code added to class_init.
 */
#define ACCEL_DEFINE_OP_TYPE_WITH_CODE(TN, t_n, op_name, description, params, validate_func, _C_) \
  G_DEFINE_FINAL_TYPE (TN, t_n, ACCEL_TYPE_OP)                                                 \
  static void                                                                                  \
  t_n##_class_init (TN##Class *klass)                                                          \
  {                                                                                            \
    AccelOpClass *op_class = ACCEL_OP_CLASS (klass);                                           \
    op_class->validate = (validate_func);                                                      \
    accel_op_class_set_metadata (op_class, (op_name), (description));                          \
    accel_op_class_install_params (op_class, (params), G_N_ELEMENTS (params));                 \
    { _C_; }                                                                                   \
  }                                                                                            \
  static void                                                                                  \
  t_n##_init (TN *self)                                                                        \
  {                                                                                            \
  }

#define ACCEL_TYPE_OP (accel_op_get_type ())
ACCEL_API
G_DECLARE_DERIVABLE_TYPE (AccelOp, accel_op, ACCEL, OP, GObject)

/**
 * AccelBufferResolveFunc:
 * @handle: a buffer handle as written by accel_op_serialize()
 * @user_data: closure data
 *
 * Maps the handle of a serialised buffer property to the buffer it names,
 * for accel_op_deserialize(): a device host resolves the handles of the
 * application's buffers to its own.
 *
 * Returns: (transfer full) (nullable): the buffer, or %NULL if unknown
 */
typedef AccelBuffer *(*AccelBufferResolveFunc) (guint64 handle, gpointer user_data);

/**
 * AccelOpClass:
 * @parent_class: the parent class
 * @validate: checks the op's parameters and buffers together (shapes,
 *   dtypes); the required buffers are checked before it runs
 * @get_n_extra_buffers: (nullable): for an op whose buffers are not all
 *   properties (the arguments of a `launch`, the buffers of a recorded
 *   graph): how many more this instance has
 * @peek_extra_buffer: (nullable): the extra buffer @index (below what
 *   @get_n_extra_buffers says) and how the op uses it; transfer none
 * @serialize_extra: (nullable): what accel_op_serialize() cannot read from
 *   the properties (extra buffers as their handles, objects as what the
 *   other process needs of them), or %NULL for nothing; a new floating or
 *   full reference
 * @deserialize_extra: (nullable): reads back what @serialize_extra wrote,
 *   resolving buffer handles with @resolve; it must treat every byte as
 *   hostile
 *
 * The class of every op type. Parameters and buffers are properties; an
 * op with a variable number of buffers (each with its own access) declares
 * them with the four `extra` functions, and the runtime then checks,
 * orders and serialises them like property buffers.
 */
struct _AccelOpClass {
  GObjectClass parent_class;

  gboolean (*validate) (AccelOp *self, GError **error);
  guint (*get_n_extra_buffers) (AccelOp *self);
  AccelBuffer *(*peek_extra_buffer) (AccelOp *self, guint index, AccelAccess *access);
  GVariant *(*serialize_extra) (AccelOp *self);
  gboolean (*deserialize_extra) (AccelOp *self,
                                 GVariant *extra,
                                 AccelBufferResolveFunc resolve,
                                 gpointer user_data,
                                 GError **error);

  /*< private >*/
  gpointer padding[4];
};

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
void accel_op_class_install_params (AccelOpClass *klass, const AccelOpParam *params, guint n_params);
ACCEL_API
void accel_op_class_install_params_at (AccelOpClass *klass,
                                       gsize base_offset,
                                       const AccelOpParam *params,
                                       guint n_params);
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
guint accel_op_get_n_buffer_slots (AccelOp *self);
ACCEL_API
AccelBuffer *accel_op_peek_buffer_slot (AccelOp *self, guint slot, AccelAccess *access, const char **property);
ACCEL_API
gboolean accel_op_check_dtype (AccelOp *self, const char *property, const AccelDType *allowed, guint n_allowed, GError **error);
ACCEL_API
gboolean accel_op_check_same_dtype (AccelOp *self, const char *property_a, const char *property_b, GError **error);
ACCEL_API
gboolean accel_op_check_rank (AccelOp *self, const char *property, guint min_rank, guint max_rank, GError **error);
ACCEL_API
gboolean accel_op_check_contiguous (AccelOp *self, const char *property, GError **error);

G_END_DECLS
