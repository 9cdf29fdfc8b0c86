/* accel-channel.h: the shared-memory channel between an application's
 * AccelRemoteDevice and its `accel-device-host` child. Not installed:
 * compiled into libaccel and into the host program, and nothing else.
 *
 * One memfd holds a header page, two single-producer single-consumer rings
 * of length-prefixed serialised GVariant messages (requests: application to
 * host; replies: host to application) and a bulk data arena through which
 * uploads and downloads travel. The application creates it and hands it to
 * the child as fd %ACCEL_CHANNEL_FD_SHM; a socket pair at
 * %ACCEL_CHANNEL_FD_SOCKET tells each side when the other has gone.
 *
 * Wake-ups: a receiver spins briefly on its ring, then announces that it is
 * parked and sleeps on a futex (a sequence word in the shared header); a
 * sender makes the FUTEX_WAKE system call only when the receiver announced
 * it is parked, so no system call is made per message while work flows.
 * The spin adapts to how soon messages come (at most $ACCEL_CHANNEL_SPIN_US,
 * 100 µs or 200 µs with 8 cores or more; a few µs once the peer is idle), and on a machine with fewer than four
 * cores it yields the core on every turn.
 *
 * Reply slots: a request whose id carries a slot
 * (ACCEL_CHANNEL_ID_WITH_SLOT()) is answered, when it succeeds, by the host
 * writing its id into that slot of the shared header, where the waiting
 * caller spins on it without any thread in between; only if the caller
 * has marked the slot parked does the answer travel through the ring too.
 * Failures always travel through the ring.
 *
 * Neither side trusts what it reads: ring positions and message lengths are
 * checked against the sizes each side computed itself, and messages are
 * copied out of shared memory before they are parsed as untrusted GVariants.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define ACCEL_CHANNEL_FD_SHM 3
#define ACCEL_CHANNEL_FD_SOCKET 4

/* Every message is a `(utv)`: its kind, an id, and a body whose type the
 * kind fixes. The host answers each request that has an id other than 0
 * with REPLY or FAILED carrying that id. */
#define ACCEL_CHANNEL_MESSAGE_TYPE ((const GVariantType *) "(utv)")

typedef enum {
  /* application -> host */
  ACCEL_CHANNEL_ALLOC = 1,      /* t size                           -> t allocation */
  ACCEL_CHANNEL_FREE,           /* t allocation                     (no answer) */
  ACCEL_CHANNEL_WRITE,          /* (tttt) alloc, offset, length, arena offset -> () */
  ACCEL_CHANNEL_READ,           /* (tttt) alloc, offset, length, arena offset -> () */
  ACCEL_CHANNEL_ZERO,           /* (ttt) alloc, offset, length      -> () */
  ACCEL_CHANNEL_OP,             /* ((sa{sv})a(tttuaxax)) op, buffer table -> () */
  ACCEL_CHANNEL_MEMORY,         /* ()                               -> (tt) total, free */
  ACCEL_CHANNEL_HANG,           /* () tests only: stop answering    (no answer) */

  /* host -> application */
  ACCEL_CHANNEL_HELLO = 64,     /* a{sv} the hosted device, or (sis) on failure (id 0) */
  ACCEL_CHANNEL_REPLY,          /* the answer to request id */
  ACCEL_CHANNEL_FAILED,         /* (sis) domain, code, message: request id failed */
  ACCEL_CHANNEL_POISONED,       /* (sis): the context is lost; the host is exiting */
} AccelChannelKind;

/* The buffer table of an OP message: one entry per buffer handle the
 * serialised op names: (handle, allocation, byte offset, dtype, dims, strides). */
#define ACCEL_CHANNEL_OP_BODY_TYPE ((const GVariantType *) "((sa{sv})a(tttuaxax))")
#define ACCEL_CHANNEL_ERROR_TYPE ((const GVariantType *) "(sis)")

/* Reply slots in the header; a request id's top byte names one (slot + 1). */
#define ACCEL_CHANNEL_N_SLOTS 32
#define ACCEL_CHANNEL_ID_WITH_SLOT(seq, slot) ((seq) | ((guint64) ((slot) + 1) << 56))
#define ACCEL_CHANNEL_ID_SLOT(id) ((guint) ((id) >> 56))   /* slot + 1, or 0 for none */

typedef struct _AccelChannel AccelChannel;

AccelChannel *_accel_channel_new (gsize ring_size, gsize arena_size, GError **error);
AccelChannel *_accel_channel_attach (int fd, GError **error);
void _accel_channel_free (AccelChannel *self);
int _accel_channel_get_fd (AccelChannel *self);
guint8 *_accel_channel_get_arena (AccelChannel *self, gsize *size);

/* Senders of one direction must be serialised by the caller. Waits (spins,
 * then sleeps briefly) while the ring is full, up to @timeout_us (< 0: no
 * limit) or until _accel_channel_interrupt(). */
gboolean _accel_channel_send (AccelChannel *self,
                              AccelChannelKind kind,
                              guint64 id,
                              GVariant *body,
                              gint64 timeout_us,
                              GError **error);

/* The one receiver of a side. Returns the next message (a `(utv)`), or
 * %NULL if none is there; a malformed ring sets @error (the peer is then
 * not to be trusted any longer). */
GVariant *_accel_channel_receive (AccelChannel *self, GError **error);

/* Spins, then parks until a message may be there, @timeout_us passes
 * (< 0: no limit) or _accel_channel_interrupt() is called. Returns %TRUE if
 * a message is there. */
gboolean _accel_channel_wait (AccelChannel *self, gint64 timeout_us);

/* Whether a message is there (for the receiver). */
gboolean _accel_channel_has_data (AccelChannel *self);

/* From any thread: wakes this side's receiver (it returns from
 * _accel_channel_wait() and looks around). */
void _accel_channel_wake (AccelChannel *self);

/* From any thread: wakes this side's receiver and makes waiting senders give up. */
void _accel_channel_interrupt (AccelChannel *self);
gboolean _accel_channel_is_interrupted (AccelChannel *self);

/* For the fuzzers (fuzz/), which play a hostile peer: the peer's side of
 * this side's receiving ring. _accel_channel_fuzz_peer_write() puts @len
 * raw bytes where the next record would start and moves the peer's head
 * @head_advance bytes past it, whatever they say; _accel_channel_fuzz_peer_send()
 * appends one well-framed record with an arbitrary @payload (FALSE if it
 * does not fit). */
void _accel_channel_fuzz_peer_write (AccelChannel *self, const void *bytes, gsize len, guint64 head_advance);
gboolean _accel_channel_fuzz_peer_send (AccelChannel *self, const void *payload, gsize len);

/* Application: a slot about to be named by a request; TRUE once the host
 * answered @id there; marks it parked and says whether the answer came
 * meanwhile (if not, the answer also comes through the ring). */
void _accel_channel_slot_arm (AccelChannel *self, guint slot);
/* The longest a receiver of the channel spins before it parks. */
gint64 _accel_channel_get_spin_cap (AccelChannel *self);
gboolean _accel_channel_slot_answered (AccelChannel *self, guint slot, guint64 id);
gboolean _accel_channel_slot_park (AccelChannel *self, guint slot, guint64 id);
/* Host: answers @id in @slot; TRUE if the answer must also go through the
 * ring (the caller parked, or @slot is not one). */
gboolean _accel_channel_slot_answer (AccelChannel *self, guint slot, guint64 id);

/* Splits a received `(utv)`; @body is a new reference. */
void _accel_channel_parse (GVariant *message, guint32 *kind, guint64 *id, GVariant **body);

GVariant *_accel_channel_error_to_variant (const GError *error);
GError *_accel_channel_error_from_variant (GVariant *variant);

G_END_DECLS
