/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-op-enums.h"
#include "accel-copy.h"
#include "accel-fill.h"
#include "accel-cast.h"
#include "accel-gemm.h"
#include "accel-axpy.h"
#include "accel-scal.h"
#include "accel-rng-fill.h"
#include "accel-fft.h"
#include "accel-reduce.h"
#include "accel-softmax.h"
#include "accel-attention.h"

