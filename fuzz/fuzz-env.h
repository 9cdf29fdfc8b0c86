/* fuzz-env.h: what every libFuzzer harness of Accel shares.
 *
 * The harnesses link the core and the CPU plugin in statically (so that
 * they reach the library's private readers), and run sealed off from the
 * machine: a registry file in a private temporary directory, no plugin
 * path, the CPU backend registered as a static plugin.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "accel-private.h"
#include "accel-channel.h"

G_BEGIN_DECLS

/* libFuzzer's entry points: fuzz-env.c's set-up (the system and its
 * cpu:0, then warnings fatal), and each harness's input. */
int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* The process's system, made on first use (transfer none). */
AccelSystem *accel_fuzz_get_system (void);

/* `cpu:0` of that system (transfer none). */
AccelDevice *accel_fuzz_get_cpu (void);

/* A private directory for the harness's files, removed at exit. */
const char *accel_fuzz_get_tmpdir (void);

/* Reads fuzz input front to back; reading past its end gives zeroes. */
typedef struct {
  const guint8 *data;
  gsize size;
  gsize pos;
} AccelFuzzInput;

guint8 accel_fuzz_input_u8 (AccelFuzzInput *in);
guint32 accel_fuzz_input_u32 (AccelFuzzInput *in);
guint64 accel_fuzz_input_u64 (AccelFuzzInput *in);
/* Up to @max bytes (fewer at the end of the input). */
const guint8 *accel_fuzz_input_bytes (AccelFuzzInput *in, gsize max, gsize *got);

/* A variant of @type over a private, aligned copy of @size bytes of
 * @data, not trusted (as every reader in Accel makes them). */
GVariant *accel_fuzz_variant (const GVariantType *type, const guint8 *data, gsize size);

/* Plays the peer of @receiver's ring with the rest of @in, a sequence of
 *
 *   tag u8 < 0xf0, length u16, payload     one well-framed record
 *   tag 0xff, advance u64, length u16, bytes  raw bytes, head moved by advance
 *
 * (integers little-endian), and hands each message @receiver reads to
 * @handle. Stops at the end of the input, or when the receiver finds the
 * ring corrupt (as a real one stops trusting its peer). Returns the
 * number of messages handled. */
typedef void (*AccelFuzzMessageFunc) (GVariant *message, gpointer user_data);
guint accel_fuzz_feed_channel (AccelChannel *receiver,
                               AccelFuzzInput *in,
                               AccelFuzzMessageFunc handle,
                               gpointer user_data);

#define ACCEL_FUZZ_TAG_RAW 0xff

/* Work whose size has no bound but a deadline (a broadcast input of 10^16
 * elements, digested or read element by element) is left out of the
 * harnesses that run ops: a real application's deadline kills such a
 * host, and a fuzzer would only time out on it. */
#define ACCEL_FUZZ_MAX_ELEMENTS (1 << 22)

/* Whether a buffer of @table (an array of tuples with their dimensions,
 * `ax`, at child @dims_index) has more than ACCEL_FUZZ_MAX_ELEMENTS
 * elements. Entries with a negative dimension are left to the reader,
 * which refuses them; zero dimensions are passed over (a [0, 10^12] buffer
 * counts as big: its allocation may still be). */
gboolean accel_fuzz_table_too_big (GVariant *table, gsize dims_index);

G_END_DECLS
