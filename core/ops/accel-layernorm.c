/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelLayernorm:
 *
 * Layer normalisation over the last axis: for each row `x[i, :]` of `n`
 * elements, `y = (x − μ) / √(σ² + eps) · gamma + beta` with `μ` the row's mean
 * and `σ²` its biased variance. `gamma` and `beta` are optional (1 and 0).
 * Types: f32, f16 or bf16 for every buffer, computed in f32; contiguous. `y`
 * may be `x` itself (in place).
 *
 * Op name: `layernorm`.
 */

ACCEL_DEFINE_OP_TYPE (AccelLayernorm, accel_layernorm, "layernorm",
                                "Layer normalisation over the last axis: (x - mean) / sqrt(var + eps) * gamma + beta",
                                _accel_norm_fields_params, _accel_norm_validate)
