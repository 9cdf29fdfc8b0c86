/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-types.h"

G_BEGIN_DECLS

/**
 * AccelArgKind:
 * @ACCEL_ARG_BUFFER: a device pointer, given as an #AccelBuffer
 * @ACCEL_ARG_INT32: a 32-bit integer (`int`, `unsigned`)
 * @ACCEL_ARG_INT64: a 64-bit integer (`long long`, `size_t`)
 * @ACCEL_ARG_FLOAT32: a `float`
 * @ACCEL_ARG_FLOAT64: a `double`
 *
 * The kind of one argument of a run-time compiled function, as the caller
 * declares it in the function's signature.
 */
typedef enum {
  ACCEL_ARG_BUFFER,
  ACCEL_ARG_INT32,
  ACCEL_ARG_INT64,
  ACCEL_ARG_FLOAT32,
  ACCEL_ARG_FLOAT64,
} AccelArgKind;

/**
 * ACCEL_FUNCTION_MAX_ARGS:
 *
 * The most arguments a function may declare.
 */
#define ACCEL_FUNCTION_MAX_ARGS 64

#define ACCEL_TYPE_FUNCTION (accel_function_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelFunction, accel_function, ACCEL, FUNCTION, GObject)

ACCEL_API
AccelModule *accel_function_get_module (AccelFunction *self);
ACCEL_API
guint64 accel_function_get_module_handle (AccelFunction *self);
ACCEL_API
const char *accel_function_get_name (AccelFunction *self);
ACCEL_API
const char *accel_function_get_symbol (AccelFunction *self);
ACCEL_API
char *accel_function_get_signature (AccelFunction *self);
ACCEL_API
guint accel_function_get_n_args (AccelFunction *self);
ACCEL_API
AccelArgKind accel_function_get_arg_kind (AccelFunction *self, guint index);
ACCEL_API
const char *accel_arg_kind_get_name (AccelArgKind kind);

G_END_DECLS
