/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"
#include "../accel-function.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_LAUNCH (accel_launch_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelLaunch, accel_launch, ACCEL, LAUNCH, AccelOp)

/**
 * AccelLaunchArg: (skip)
 * @kind: what the argument is
 * @access: for a buffer, how the kernel uses it
 * @value: the value: `buffer` (transfer none) for %ACCEL_ARG_BUFFER,
 *   `i32`, `i64`, `f32` or `f64` for the others
 *
 * One argument of a `launch`, as its kernel reads it
 * (accel_launch_peek_args()).
 */
typedef struct {
  AccelArgKind kind;
  AccelAccess access;
  union {
    AccelBuffer *buffer;
    gint32 i32;
    gint64 i64;
    float f32;
    double f64;
  } value;
} AccelLaunchArg;

struct _AccelLaunch {
  AccelOp parent_instance;

  /*< public >*/
  /* The kernel to run */
  AccelFunction *function; /*< required >*/
  /* Blocks along x. */
  guint grid_x; /*< min=1 max=G_MAXINT default=1 >*/
  /* Blocks along y. */
  guint grid_y; /*< min=1 max=65535 default=1 >*/
  /* Blocks along z. */
  guint grid_z; /*< min=1 max=65535 default=1 >*/
  /* Threads of a block along x. */
  guint block_x; /*< min=1 max=1024 default=1 >*/
  /* Threads of a block along y. */
  guint block_y; /*< min=1 max=1024 default=1 >*/
  /* Threads of a block along z. */
  guint block_z; /*< min=1 max=64 default=1 >*/
  /* Bytes of dynamic shared memory per block (the device's limit is checked
   * when it launches). */
  guint shared_memory; /*< min=0 max=G_MAXINT default=0 >*/

  /*< private >*/
  GArray *args;
  guint n_buffers;
  guint8 buffer_args[ACCEL_FUNCTION_MAX_ARGS];
};

ACCEL_API
AccelOp *accel_launch_new (AccelFunction *function);
ACCEL_API
void accel_launch_set_grid (AccelLaunch *self, guint x, guint y, guint z);
ACCEL_API
void accel_launch_set_block (AccelLaunch *self, guint x, guint y, guint z);
ACCEL_API
void accel_launch_add_buffer (AccelLaunch *self, AccelBuffer *buffer, AccelAccess access);
ACCEL_API
void accel_launch_add_int32 (AccelLaunch *self, gint32 value);
ACCEL_API
void accel_launch_add_int64 (AccelLaunch *self, gint64 value);
ACCEL_API
void accel_launch_add_float32 (AccelLaunch *self, float value);
ACCEL_API
void accel_launch_add_float64 (AccelLaunch *self, double value);
ACCEL_API
void accel_launch_clear_args (AccelLaunch *self);
ACCEL_API
guint accel_launch_get_n_args (AccelLaunch *self);
ACCEL_API
AccelArgKind accel_launch_get_arg_kind (AccelLaunch *self, guint index);
ACCEL_API
const AccelLaunchArg *accel_launch_peek_args (AccelLaunch *self, guint *n_args);

G_END_DECLS
