/* accel.h: the one header applications include.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#define ACCEL_INSIDE
#include "accel-types.h"
#include "accel-error.h"
#include "accel-dtype.h"
#include "accel-shape.h"
#include "accel-enum-types.h"
#include "accel-kernel.h"
#include "accel-plugin.h"
#include "accel-registry.h"
#include "accel-backend.h"
#include "accel-property-field.h"
#include "actor/accel-dispatcher.h"
#include "actor/accel-actor.h"
#include "accel-buffer.h"
#include "accel-op.h"
#include "accel-journal.h"
#include "accel-function.h"
#include "accel-module.h"
#include "accel-graph.h"
#include "accel-device.h"
#include "accel-remote-device.h"
#include "accel-tensor-spec.h"
#include "accel-model.h"
#include "accel-system.h"
#include "accel-dlpack.h"
#include "accel-rendezvous-store.h"
#include "accel-rendezvous.h"
#include "accel-communicator.h"
#include "ops/accel-ops.h"
#undef ACCEL_INSIDE
