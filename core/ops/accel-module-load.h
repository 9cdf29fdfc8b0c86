/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"
#include "../accel-module.h"

G_BEGIN_DECLS

/**
 * ACCEL_MODULE_LOAD_CHUNK:
 *
 * The largest piece of a module's image one `module-load` op carries, so
 * that it fits the channel to a device host.
 */
#define ACCEL_MODULE_LOAD_CHUNK (256 * 1024)

#define ACCEL_TYPE_MODULE_LOAD (accel_module_load_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelModuleLoad, accel_module_load, ACCEL, MODULE_LOAD, AccelOp)

/**
 * AccelModuleLoad:
 * @module: the module's handle (accel_module_get_handle())
 * @unload: whether the op frees the module's code instead
 * @image_kind: what the image holds
 * @image_size: the size of the whole image in bytes
 * @image_offset: where @chunk starts in it
 * @chunk: (nullable): the bytes of the image from @image_offset on
 *
 * The op through which #AccelModule makes its code known to its device's
 * context (in a device host too), one chunk of the image per op; the last
 * chunk loads it. With @unload set, it drops the code. #AccelModule submits
 * these; applications have no need to.
 */
struct _AccelModuleLoad {
  AccelOp parent_instance;

  /*< public >*/
  /* The handle of the module the op loads or frees. */
  guint64 module; /*< min=0 max=G_MAXUINT64 default=0 >*/
  /* Whether the op frees the module's code instead of loading a chunk. */
  gboolean unload; /*< default=FALSE >*/
  /* What the image holds. */
  AccelModuleImageKind image_kind; /*< default=ACCEL_MODULE_IMAGE_CUBIN >*/
  /* The size of the whole image in bytes. */
  guint64 image_size; /*< min=0 max=G_MAXUINT64 default=0 >*/
  /* Where the op's chunk starts in the image. */
  guint64 image_offset; /*< min=0 max=G_MAXUINT64 default=0 >*/
  GBytes *chunk;
};

ACCEL_API
AccelOp *accel_module_load_new (guint64 module,
                                AccelModuleImageKind image_kind,
                                guint64 image_size,
                                guint64 image_offset,
                                GBytes *chunk);

G_END_DECLS
