/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>
#include "accel-types.h"
#include "accel-function.h"

G_BEGIN_DECLS

/**
 * AccelModuleImageKind:
 * @ACCEL_MODULE_IMAGE_CUBIN: an ELF image of machine code for one architecture
 * @ACCEL_MODULE_IMAGE_PTX: PTX text, compiled for the device when loaded
 * @ACCEL_MODULE_IMAGE_FATBIN: a fat binary holding several images
 *
 * What a module's image holds.
 */
typedef enum {
  ACCEL_MODULE_IMAGE_CUBIN,
  ACCEL_MODULE_IMAGE_PTX,
  ACCEL_MODULE_IMAGE_FATBIN,
} AccelModuleImageKind;

/**
 * ACCEL_MODULE_COMPILE_REQUEST_TYPE:
 *
 * The type of the message a backend's module compiler
 * (#AccelBackendClass.module_compiler) is asked (accel_actor_ask()):
 * `(source, program name, options, name expressions, target)`, where the
 * target is a device name (`cuda:0`: compile for its architecture) or an
 * architecture (`sm_90a`).
 */
#define ACCEL_MODULE_COMPILE_REQUEST_TYPE ((const GVariantType *) "(ssasass)")

/**
 * ACCEL_MODULE_COMPILE_REPLY_TYPE:
 *
 * The type of a module compiler's answer: `(image, image kind, lowered
 * names, log, compiled, architecture)`: the image bytes, an
 * #AccelModuleImageKind, each name expression with the symbol it lowered
 * to, the compiler's log (warnings), whether the compiler ran (%FALSE when
 * the image came from its disk cache), and the architecture compiled for.
 * A source that does not compile is an %ACCEL_ERROR_INVALID_ARGUMENT error
 * whose message starts with the first error's `name:line:column:` and
 * holds the compiler's log.
 */
#define ACCEL_MODULE_COMPILE_REPLY_TYPE ((const GVariantType *) "(ayua{ss}sbs)")

#define ACCEL_TYPE_MODULE (accel_module_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelModule, accel_module, ACCEL, MODULE, GObject)

ACCEL_API
AccelModule *accel_module_new_from_source (AccelDevice *device,
                                           const char *source,
                                           const char * const *options,
                                           const char * const *name_expressions,
                                           GCancellable *cancellable,
                                           GError **error);
ACCEL_API
void accel_module_new_from_source_async (AccelDevice *device,
                                         const char *source,
                                         const char * const *options,
                                         const char * const *name_expressions,
                                         GCancellable *cancellable,
                                         GAsyncReadyCallback callback,
                                         gpointer user_data);
ACCEL_API
AccelModule *accel_module_new_from_source_finish (GAsyncResult *result, GError **error);
ACCEL_API
AccelModule *accel_module_new_from_image (AccelDevice *device,
                                          GBytes *image,
                                          GCancellable *cancellable,
                                          GError **error);

ACCEL_API
AccelFunction *accel_module_get_function (AccelModule *self,
                                          const char *name,
                                          const char *signature,
                                          GError **error);
ACCEL_API
AccelDevice *accel_module_get_device (AccelModule *self);
ACCEL_API
guint64 accel_module_get_handle (AccelModule *self);
ACCEL_API
GBytes *accel_module_get_image (AccelModule *self);
ACCEL_API
AccelModuleImageKind accel_module_get_image_kind (AccelModule *self);
ACCEL_API
const char *accel_module_get_log (AccelModule *self);
ACCEL_API
const char *accel_module_get_target (AccelModule *self);
ACCEL_API
gboolean accel_module_get_compiled (AccelModule *self);
ACCEL_API
const char *accel_module_get_lowered_name (AccelModule *self, const char *name_expression);

ACCEL_API
AccelActor *accel_module_get_compiler (AccelSystem *system, const char *backend, GError **error);

G_END_DECLS
