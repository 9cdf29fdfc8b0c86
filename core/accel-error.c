/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-private.h"

/**
 * accel_error_quark:
 *
 * The error domain of Accel: every #GError it reports is in it, with an
 * #AccelError code.
 *
 * Returns: the quark of the %ACCEL_ERROR domain
 */
G_DEFINE_QUARK (accel-error-quark, accel_error)
