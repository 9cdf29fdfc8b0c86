/* accel-nvrtc-private.h: what the files of the nvrtc plugin share.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel-cuda.h"

G_BEGIN_DECLS

/* A compiled program, as the compiler and the cache hand it around. */
typedef struct {
  GBytes *image;
  AccelModuleImageKind kind;
  GHashTable *lowered;          /* name expression -> symbol */
  char *log;
} AccelNvrtcResult;

void accel_nvrtc_result_clear (AccelNvrtcResult *result);
GVariant *accel_nvrtc_lowered_to_variant (GHashTable *lowered);

/* accel-nvrtc-cache.c: compiled images on disk, under
 * $XDG_CACHE_HOME/accel-1.0/kernels/, one file per key. */
char *accel_nvrtc_cache_key (const char *source,
                             const char *name,
                             const char * const *options,
                             const char * const *name_expressions,
                             const char *arch,
                             const char *compiler_version);
char *accel_nvrtc_cache_path (const char *key);
gboolean accel_nvrtc_cache_read (const char *key, AccelNvrtcResult *result);
void accel_nvrtc_cache_write (const char *key, const AccelNvrtcResult *result);

/* accel-nvrtc-compiler.c */
#define ACCEL_TYPE_NVRTC_COMPILER (accel_nvrtc_compiler_get_type ())
G_DECLARE_FINAL_TYPE (AccelNvrtcCompiler, accel_nvrtc_compiler, ACCEL, NVRTC_COMPILER, AccelActor)

/* accel-nvrtc-kernels.c */
void accel_nvrtc_register_kernels (AccelPlugin *plugin);

G_END_DECLS
