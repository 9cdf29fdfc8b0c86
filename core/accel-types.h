/* accel-types.h: forward declarations shared by the public headers.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ACCEL_INSIDE) && !defined(ACCEL_COMPILATION)
#error "Only <accel.h> can be included directly."
#endif

#include <glib-object.h>

G_BEGIN_DECLS

#define ACCEL_API __attribute__ ((visibility ("default"))) extern

typedef struct _AccelSystem AccelSystem;
typedef struct _AccelRegistry AccelRegistry;
typedef struct _AccelPlugin AccelPlugin;
typedef struct _AccelBackend AccelBackend;
typedef struct _AccelDevice AccelDevice;
typedef struct _AccelBuffer AccelBuffer;
typedef struct _AccelOp AccelOp;
typedef struct _AccelKernel AccelKernel;
typedef struct _AccelActor AccelActor;
typedef struct _AccelDispatcher AccelDispatcher;
typedef struct _AccelShape AccelShape;
typedef struct _AccelModule AccelModule;
typedef struct _AccelFunction AccelFunction;
typedef struct _AccelGraph AccelGraph;

G_END_DECLS
