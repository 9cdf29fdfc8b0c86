/* accel-journal-private.h: the journal's file format, its recording hook in
 * the device, and its reader (for accel-replay and the fuzzer of the
 * reader). Not installed.
 *
 * A journal file is a 16-byte header, "ACCELJNL", the format version (u32)
 * and 0 (u32), then records appended one after the other:
 *
 *   u32 length of what follows the checksum (kind, reserved, body)
 *   u32 checksum of those bytes: the low 32 bits of their XXH3-64 hash
 *   u32 kind, u32 0
 *   body
 *
 * all little-endian (journals are made and read on little-endian hosts),
 * each record followed by zeroes up to a multiple of 8 bytes. Bodies: a serialised
 * GVariant in normal form for SESSION `a{sv}`, DEVICE `(us)` (its index in
 * this journal, its name), OP `(t(sa{sv})a(ttttuaxax))` (the op's id in
 * this journal, accel_op_serialize(), its buffer table), WRITE
 * `(ttuu(ttttuaxax)ay)` and ZERO `(ttuu(ttttuaxax))` (sequence number, 0,
 * device index, generation, the buffer, the bytes written); and for RUN,
 * which is written for every op run and so is kept cheap to make, the
 * AccelJournalRunHeader below, its digests, an error message if it failed,
 * and the recorded bytes.
 *
 * A buffer table entry `(ttttuaxax)` is the buffer's handle, its base
 * allocation's handle and size in bytes, its byte offset in that
 * allocation, dtype, dimensions and strides.
 *
 * Sequence numbers count the work of all devices of a journal in the order
 * each device ran it; records are appended as work completes, so they may
 * come out of that order.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel-device-private.h"

G_BEGIN_DECLS

#define ACCEL_JOURNAL_MAGIC "ACCELJNL"
#define ACCEL_JOURNAL_VERSION 2     /* 1 had zlib's CRC-32 where 2 has XXH3 */
#define ACCEL_JOURNAL_HEADER_SIZE 16
#define ACCEL_JOURNAL_RECORD_HEAD 16    /* length, checksum, kind, 0 */
#define ACCEL_JOURNAL_MAX_RECORD (G_GUINT64_CONSTANT (1) << 32)

typedef enum {
  ACCEL_JOURNAL_SESSION = 1,
  ACCEL_JOURNAL_DEVICE,
  ACCEL_JOURNAL_OP,
  ACCEL_JOURNAL_RUN,
  ACCEL_JOURNAL_WRITE,
  ACCEL_JOURNAL_ZERO,
} AccelJournalKind;

#define ACCEL_JOURNAL_ENTRY_TYPE "(ttttuaxax)"
#define ACCEL_JOURNAL_DEVICE_TYPE "(us)"
#define ACCEL_JOURNAL_OP_TYPE "(t(sa{sv})a" ACCEL_JOURNAL_ENTRY_TYPE ")"
#define ACCEL_JOURNAL_WRITE_TYPE "(ttuu" ACCEL_JOURNAL_ENTRY_TYPE "ay)"
#define ACCEL_JOURNAL_ZERO_TYPE "(ttuu" ACCEL_JOURNAL_ENTRY_TYPE ")"

/* What a buffer held: a hash of its elements' bytes (the low 32 bits of
 * XXH3-64, in index order, so
 * gaps of a strided layout do not count), and for real and complex dtypes
 * the sum of its values, the sum of their magnitudes and how many are not
 * finite (for integers: as doubles too). Comparing sums tells results
 * that agree within a tolerance from results that differ, when the bytes
 * were not kept. */
typedef struct {
  guint64 handle;
  guint32 hash;
  guint32 has_bytes;        /* the bytes follow, after all digests */
  guint64 n_bytes;          /* of the elements, in index order */
  double sum;
  double l1;
  guint64 nonfinite;
} AccelJournalDigest;

G_STATIC_ASSERT (sizeof (AccelJournalDigest) == 48);

/* RUN's body starts so: then n_inputs + n_outputs AccelJournalDigest,
 * then message_length bytes of the error's message (padded to 8), then
 * the bytes of each digest that has them (each padded to 8). */
typedef struct {
  guint64 seq;
  guint64 op;               /* its OP record's id */
  guint32 device;
  guint32 generation;
  gint32 error_code;        /* 0: it ran; else the code of its error */
  guint32 error_domain;     /* 0: none, 1: AccelError, 2: another domain */
  guint32 n_inputs;
  guint32 n_outputs;
  guint32 message_length;
  guint32 reserved;
} AccelJournalRunHeader;

G_STATIC_ASSERT (sizeof (AccelJournalRunHeader) == 48);

/* accel-journal.c: the journal object, shared with accel-journal-record.c. */
struct _AccelJournal {
  GObject parent_instance;

  char *path;
  AccelJournalFlags flags;
  guint serial;                 /* tells this journal's cached records from another's */
  int fd;
  guint64 next_seq;             /* atomic */
  guint64 next_op;              /* atomic */
  guint next_device;            /* atomic */

  GMutex write_lock;            /* serialises writes to fd (keeps records in order) */
  GMutex lock;                  /* guards what follows */
  GCond cond;
  GByteArray *pending;          /* records not yet written */
  GByteArray *spare;            /* written out, emptied, kept for the next swap */
  guint64 n_records;
  gboolean stopping;
  GError *write_error;          /* the first failure: recording stops */
  GThread *writer;
  gint failed;                  /* atomic: write_error is set */
};

/* Reserves a record of @body_size bytes at the end of what is pending and
 * returns where its body goes, under the journal's lock, which
 * _accel_journal_close_record() (which counts it; the writer thread makes
 * its checksum) drops. %NULL, not
 * locked, once writing has failed. */
guint8 *_accel_journal_open_record (AccelJournal *self, AccelJournalKind kind, gsize body_size, gsize *at);
void _accel_journal_close_record (AccelJournal *self, gsize at);
/* A record whose body is @body (floating or not). */
void _accel_journal_append (AccelJournal *self, AccelJournalKind kind, GVariant *body);

/* The journal $ACCEL_JOURNAL names (made once per process), or %NULL. */
AccelJournal *_accel_journal_ref_from_environment (void);

/* accel-journal-record.c */

/* On the device thread, instead of the backend's execute: runs @work and
 * records it. */
void _accel_journal_execute (AccelJournal *self, AccelDevice *device, AccelWork *work);

/* accel-journal-digest.c */

/* A record's checksum, and a digest's hash: the low 32 bits of the XXH3-64
 * hash of @size bytes (one-shot; the hash of bytes in several pieces is
 * that of the pieces joined). */
ACCEL_API
guint32 _accel_journal_checksum (const void *data, gsize size);

/* The digest of @n_bytes of elements at @data, laid out as @dtype and
 * @shape describe (strides relative to @data). */
ACCEL_API
void _accel_journal_digest (AccelJournalDigest *digest,
                            AccelDType dtype,
                            const AccelShape *shape,
                            const guint8 *data);
/* The bytes of the elements in index order (for a contiguous shape, the
 * buffer's bytes); @n_bytes is set to their count. */
ACCEL_API
guint8 *_accel_journal_gather (AccelDType dtype, const AccelShape *shape, const guint8 *data, gsize *n_bytes);
/* Puts gathered bytes (as many as the shape's elements take) back in place. */
ACCEL_API
void _accel_journal_scatter (AccelDType dtype, const AccelShape *shape, const guint8 *gathered, guint8 *data);
/* The value of one element (the real part; the imaginary one in @imag). */
ACCEL_API
double _accel_journal_element_value (AccelDType dtype, const guint8 *p, double *imag);

/* accel-journal-reader.c */

typedef struct {
  AccelJournalKind kind;
  guint64 offset;           /* in the file, of its length word */
  GVariant *body;           /* all but RUN: of the kind's type, in normal form */
  /* RUN */
  AccelJournalRunHeader run;
  const AccelJournalDigest *digests;   /* inputs, then outputs; aligned copies in the record */
  char *message;            /* of a failed run */
  const guint8 **bytes;     /* per digest, or NULL */
  GBytes *storage;
} AccelJournalRecord;

ACCEL_API
void _accel_journal_record_free (AccelJournalRecord *record);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AccelJournalRecord, _accel_journal_record_free)

typedef struct _AccelJournalReader AccelJournalReader;

/* Reads a journal's bytes: %NULL with @error if they do not start with a
 * journal header of this version. */
ACCEL_API
AccelJournalReader *_accel_journal_reader_new (GBytes *bytes, GError **error);
ACCEL_API
void _accel_journal_reader_free (AccelJournalReader *self);
/* The next good record; %NULL at the end, or at the first damaged one
 * (truncated, checksum wrong, body unreadable), with @error saying where
 * and why. Nothing after a damaged record is read. */
ACCEL_API
AccelJournalRecord *_accel_journal_reader_next (AccelJournalReader *self, GError **error);
/* Where the next record would start. */
ACCEL_API
guint64 _accel_journal_reader_get_offset (AccelJournalReader *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AccelJournalReader, _accel_journal_reader_free)

G_END_DECLS
