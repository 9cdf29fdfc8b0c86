/* accel-rendezvous-private.h: the rendezvous's wire format, shared by the
 * store (the listener) and its clients. Not installed.
 *
 * A message is a 4-byte big-endian length, then that many bytes holding a
 * serialised GVariant `(utv)`: the kind, the request it belongs to (0 for
 * none) and the kind's payload. Every length, type and field read off a
 * socket is checked before it is used: a message longer than the limit,
 * a variant that is not in normal form, a payload of the wrong type, is an
 * error, never a crash or an allocation beyond the limit.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel-private.h"

G_BEGIN_DECLS

typedef enum {
  ACCEL_WIRE_HELLO = 1,     /* c->s (suu): token, process rank, world size */
  ACCEL_WIRE_WELCOME,       /* s->c (su): job id, largest message */
  ACCEL_WIRE_PING,          /* c->s (): I am alive */
  ACCEL_WIRE_PONG,          /* s->c () */
  ACCEL_WIRE_EXCHANGE,      /* c->s (sauay): tag, processes, this process's bytes */
  ACCEL_WIRE_RESULT,        /* s->c aay: every process's bytes, in the order asked */
  ACCEL_WIRE_ABORT,         /* c->s (ss): tag prefix, reason */
  ACCEL_WIRE_NOTICE,        /* s->c (usus): what, tag prefix, process, reason */
  ACCEL_WIRE_ERROR,         /* s->c (us): AccelError code, message */
  ACCEL_WIRE_N_KINDS
} AccelWireKind;

#define ACCEL_WIRE_NOTICE_ABORTED 0
#define ACCEL_WIRE_NOTICE_LOST 1

/* Longest tag, prefix and token; longest reason kept. */
#define ACCEL_WIRE_MAX_NAME 256
#define ACCEL_WIRE_MAX_REASON 1024
/* Room a message needs beyond its data (header, variant framing, offsets). */
#define ACCEL_WIRE_OVERHEAD 4096
#define ACCEL_WIRE_DEFAULT_MAX_MESSAGE (8 * 1024 * 1024)
#define ACCEL_WIRE_MIN_MAX_MESSAGE (64 * 1024)

const char *_accel_wire_payload_type (AccelWireKind kind);

/* Reads one message within @deadline_us (monotonic; 0 for none). With
 * @idle_ok, a deadline that passes before the first byte is reported as
 * G_IO_ERROR_TIMED_OUT and nothing was consumed. Returns the (utv) as
 * three parts; the payload is of the kind's type. */
gboolean _accel_wire_read (GSocket *socket,
                           gsize max_message,
                           gint64 deadline_us,
                           GCancellable *cancellable,
                           AccelWireKind *kind,
                           guint64 *request,
                           GVariant **payload,
                           GError **error);
gboolean _accel_wire_write (GSocket *socket,
                            AccelWireKind kind,
                            guint64 request,
                            GVariant *payload,
                            gint64 deadline_us,
                            GError **error);

/* Whether @a and @b are equal, in time that does not depend on where they differ. */
gboolean _accel_wire_token_equal (const char *a, const char *b);

/* Byte counts from the environment (K, M, G suffixes); @fallback if unset. */
gboolean _accel_wire_env_uint (const char *name, guint64 max, guint64 fallback, guint64 *value, GError **error);

G_END_DECLS
