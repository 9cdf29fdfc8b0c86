/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelRmsnorm:
 *
 * Root-mean-square normalisation over the last axis: for each row `x[i, :]`
 * of `n` elements, `y = x / √(Σ x² / n + eps) · gamma + beta`. `gamma` and
 * `beta` are optional (1 and 0). Types: f32, f16 or bf16 for every buffer,
 * computed in f32; contiguous. `y` may be `x` itself (in place).
 *
 * Op name: `rmsnorm`.
 */

ACCEL_DEFINE_OP_TYPE (AccelRmsnorm, accel_rmsnorm, "rmsnorm",
                                "RMS normalisation over the last axis: x / sqrt(mean(x^2) + eps) * gamma + beta",
                                _accel_norm_fields_params, _accel_norm_validate)
