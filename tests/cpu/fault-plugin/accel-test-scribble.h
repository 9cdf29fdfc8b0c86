/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <accel.h>

G_BEGIN_DECLS

#define ACCEL_TYPE_TEST_SCRIBBLE (accel_test_scribble_get_type ())
G_DECLARE_FINAL_TYPE (AccelTestScribble, accel_test_scribble, ACCEL, TEST_SCRIBBLE, AccelOp)

/* Its CPU kernel. */
extern const AccelKernelVTable accel_test_scribble_kernel;

G_END_DECLS
