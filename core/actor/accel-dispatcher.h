/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-types.h"

G_BEGIN_DECLS

/**
 * AccelDispatchFunc:
 * @data: the data posted with it
 *
 * A message run on a dispatcher's thread.
 */
typedef void (*AccelDispatchFunc) (gpointer data);

#define ACCEL_TYPE_DISPATCHER (accel_dispatcher_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelDispatcher, accel_dispatcher, ACCEL, DISPATCHER, GObject)

ACCEL_API
AccelDispatcher *accel_dispatcher_new (const char *name);
ACCEL_API
const char *accel_dispatcher_get_name (AccelDispatcher *self);
ACCEL_API
GMainContext *accel_dispatcher_get_context (AccelDispatcher *self);
ACCEL_API
gboolean accel_dispatcher_is_current (AccelDispatcher *self);
ACCEL_API
void accel_dispatcher_post (AccelDispatcher *self, AccelDispatchFunc func, gpointer data);
ACCEL_API
void accel_dispatcher_stop (AccelDispatcher *self);

G_END_DECLS
