/* accel-channel.c: shared-memory rings between an application and its
 * `accel-device-host`. See accel-channel.h for the shape of the channel.
 *
 * Memory ordering: a producer copies a record into the ring, then publishes
 * it by storing `head` with release semantics; the consumer loads `head`
 * with acquire semantics, copies the record out, then gives the space back
 * by storing `tail` with release semantics. Each side keeps its own
 * position privately and never re-reads it from shared memory, so the
 * peer can corrupt only what it owns, which is checked before use.
 *
 * Parking (Dekker style, all sequentially consistent): the consumer sets
 * `parked`, reads `seq`, checks the ring once more and only then waits on
 * `seq`; the producer publishes, bumps `seq`, and wakes only if `parked`
 * is set. Either the consumer sees the record or the producer sees the
 * consumer parked (and `seq` has moved, so the wait returns at once).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "accel-channel.h"
#define ACCEL_INSIDE
#include "accel-types.h"
#include "accel-error.h"
#include "accel-private.h"
#undef ACCEL_INSIDE

/* A message's kind and id, before its body (see _accel_channel_send()). */
#define MESSAGE_HEADER_SIZE 16
/* Our bodies' types are short; a longer one is refused rather than handed
 * to GLib (a deeply nested type costs it stack). */
#define MAX_BODY_TYPE_LENGTH 64

#define CHANNEL_MAGIC G_GUINT64_CONSTANT (0x3154534f484c4341)   /* "ACLHOST1" */
#define CHANNEL_VERSION 2
#define HEADER_SIZE 4096
#define MIN_RING_SIZE 4096
#define MAX_RING_SIZE (G_GUINT64_CONSTANT (1) << 28)
#define MAX_ARENA_SIZE (G_GUINT64_CONSTANT (1) << 36)

/* One ring's control words: the producer's and the consumer's on separate
 * cache lines. */
typedef struct {
  guint64 head;           /* bytes published, written by the producer */
  guint32 seq;            /* futex word: bumped after each publish */
  guint32 pad0;
  guint8 pad1[48];
  guint64 tail;           /* bytes consumed, written by the consumer */
  guint32 parked;         /* the consumer is (about to be) asleep on seq */
  guint32 pad2;
  guint8 pad3[48];
} Ring;

typedef struct {
  guint64 magic;
  guint32 version;
  guint32 header_size;
  guint64 ring_size;
  guint64 arena_size;
  guint8 pad[96];
  Ring rings[2];          /* 0: requests, 1: replies */
} Shared;

/* A reply slot: the host's answer to one request, for a caller that waits
 * for it itself (see accel-channel.h). Written by the host: done_id; by
 * the application: parked. */
typedef struct {
  guint64 done_id;
  guint32 parked;
  guint8 pad[52];
} Slot;

#define SLOTS_OFFSET 1024

G_STATIC_ASSERT (sizeof (Ring) == 128);
G_STATIC_ASSERT (sizeof (Shared) <= SLOTS_OFFSET);
G_STATIC_ASSERT (sizeof (Slot) == 64);
G_STATIC_ASSERT (SLOTS_OFFSET + ACCEL_CHANNEL_N_SLOTS * sizeof (Slot) <= HEADER_SIZE);

struct _AccelChannel {
  int fd;
  guint8 *map;
  gsize map_size;
  gsize ring_size;
  gsize arena_size;
  Ring *tx;
  Ring *rx;
  guint8 *tx_data;
  guint8 *rx_data;
  guint8 *arena;
  guint64 tx_head;        /* our own positions, never read back from the map */
  guint64 rx_tail;
  gint interrupted;
  gint kicked;            /* a wake-up not yet seen by the receiver */
  gint64 spin_us;         /* the receiver's current spin, adapted per wait */
  gint64 spin_cap;
  gboolean few_cores;
  Slot *slots;
};

/* The longest a receiver spins before it parks ($ACCEL_CHANNEL_SPIN_US;
 * 100 µs, or 200 µs with 8 cores or more).
 * The spin actually made adapts between MIN_SPIN_US and this: it grows
 * while messages come soon after the receiver would have parked, and
 * shrinks while parks are long (the peer is idle, or busy for longer than
 * spinning is worth), so an idle side costs one short spin per wait. */
#define DEFAULT_SPIN_CAP_US 100
#define MIN_SPIN_US 2

static gint64
spin_cap (void)
{
  static gsize once = 0;
  static gint64 budget;
  if (g_once_init_enter (&once))
    {
      const char *env = g_getenv ("ACCEL_CHANNEL_SPIN_US");
      /* With cores to spare, long enough to cover a whole round trip. */
      gint64 dflt = g_get_num_processors () >= 8 ? 2 * DEFAULT_SPIN_CAP_US : DEFAULT_SPIN_CAP_US;
      gint64 v = env ? g_ascii_strtoll (env, NULL, 10) : dflt;
      budget = CLAMP (v, 0, 10000);
      g_once_init_leave (&once, 1);
    }
  return budget;
}

static void
futex_wait (guint32 *addr, guint32 value, gint64 timeout_us)
{
  struct timespec ts, *tsp = NULL;
  if (timeout_us >= 0)
    {
      ts.tv_sec = timeout_us / G_USEC_PER_SEC;
      ts.tv_nsec = (timeout_us % G_USEC_PER_SEC) * 1000;
      tsp = &ts;
    }
  /* Not FUTEX_PRIVATE_FLAG: the word lives in memory shared by two processes. */
  syscall (SYS_futex, addr, FUTEX_WAIT, value, tsp, NULL, 0);
}

static void
futex_wake (guint32 *addr, int n)
{
  syscall (SYS_futex, addr, FUTEX_WAKE, n, NULL, NULL, 0);
}

static gsize
record_size (gsize payload)
{
  return (4 + payload + 7) & ~(gsize) 7;
}

static void
copy_in (guint8 *ring, gsize ring_size, guint64 pos, const void *src, gsize len)
{
  gsize at = pos & (ring_size - 1);
  gsize first = MIN (len, ring_size - at);
  memcpy (ring + at, src, first);
  if (first < len)
    memcpy (ring, (const guint8 *) src + first, len - first);
}

static void
copy_out (const guint8 *ring, gsize ring_size, guint64 pos, void *dst, gsize len)
{
  gsize at = pos & (ring_size - 1);
  gsize first = MIN (len, ring_size - at);
  memcpy (dst, ring + at, first);
  if (first < len)
    memcpy ((guint8 *) dst + first, ring, len - first);
}

/* The channel over a mapping of @fd whose header is (or was just) written:
 * the application's side, or with @host_side the host's, whose rings are
 * the other way round. Takes @fd and @map. */
static AccelChannel *
channel_over_map (int fd, void *map, gsize map_size, gsize ring_size, gsize arena_size, gboolean host_side)
{
  AccelChannel *self = g_new0 (AccelChannel, 1);
  self->fd = fd;
  self->map = map;
  self->map_size = map_size;
  self->ring_size = ring_size;
  self->arena_size = arena_size;

  Shared *sh = (Shared *) self->map;
  guint8 *rings = self->map + HEADER_SIZE;

  self->tx = &sh->rings[host_side ? 1 : 0];
  self->rx = &sh->rings[host_side ? 0 : 1];
  self->tx_data = rings + (host_side ? self->ring_size : 0);
  self->rx_data = rings + (host_side ? 0 : self->ring_size);
  self->arena = rings + 2 * self->ring_size;
  self->slots = (Slot *) (self->map + SLOTS_OFFSET);
  self->spin_cap = spin_cap ();
  self->spin_us = MIN (self->spin_cap, MIN_SPIN_US * 8);
  self->few_cores = _accel_have_few_cores ();
  return self;
}

/* Makes a channel (the application side). */
AccelChannel *
_accel_channel_new (gsize ring_size, gsize arena_size, GError **error)
{
  gsize rs = MIN_RING_SIZE;
  while (rs < ring_size && rs < MAX_RING_SIZE)
    rs <<= 1;
  gsize as = (MAX (arena_size, 4096) + 4095) & ~(gsize) 4095;
  if (as > MAX_ARENA_SIZE)
    as = MAX_ARENA_SIZE;
  gsize total = HEADER_SIZE + 2 * rs + as;

  int fd = memfd_create ("accel-channel", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0)
    {
      int e = errno;
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_FAILED,
                   "Cannot create the shared memory of a device host channel: memfd_create: %s",
                   g_strerror (e));
      return NULL;
    }
  if (ftruncate (fd, total) != 0)
    {
      int e = errno;
      close (fd);
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_OUT_OF_MEMORY,
                   "Cannot size the shared memory of a device host channel to %" G_GSIZE_FORMAT
                   " bytes: %s", total, g_strerror (e));
      return NULL;
    }
  /* The host cannot shrink the file under us (which would fault our reads). */
  (void) fcntl (fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);

  void *map = mmap (NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED)
    {
      int e = errno;
      close (fd);
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_OUT_OF_MEMORY,
                   "Cannot map %" G_GSIZE_FORMAT " bytes of shared memory: %s", total, g_strerror (e));
      return NULL;
    }

  Shared *sh = map;
  sh->version = CHANNEL_VERSION;
  sh->header_size = HEADER_SIZE;
  sh->ring_size = rs;
  sh->arena_size = as;
  __atomic_store_n (&sh->magic, CHANNEL_MAGIC, __ATOMIC_RELEASE);
  return channel_over_map (fd, map, total, rs, as, FALSE);
}

/* Maps a channel made by the application (the host side). Takes @fd. */
AccelChannel *
_accel_channel_attach (int fd, GError **error)
{
  struct stat st;
  if (fstat (fd, &st) != 0 || st.st_size < HEADER_SIZE)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "fd %d is not the shared memory of a device host channel", fd);
      return NULL;
    }
  gsize size = st.st_size;
  void *map = mmap (NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED)
    {
      int e = errno;
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_FAILED,
                   "Cannot map the channel's shared memory: %s", g_strerror (e));
      return NULL;
    }

  /* Read the geometry once and check it against the file we were given. */
  Shared *sh = map;
  guint64 magic = __atomic_load_n (&sh->magic, __ATOMIC_ACQUIRE);
  guint32 version = sh->version, header_size = sh->header_size;
  guint64 rs = sh->ring_size, as = sh->arena_size;
  if (magic != CHANNEL_MAGIC || version != CHANNEL_VERSION || header_size != HEADER_SIZE
      || rs < MIN_RING_SIZE || rs > MAX_RING_SIZE || (rs & (rs - 1)) != 0
      || as == 0 || as > MAX_ARENA_SIZE || (as & 4095) != 0
      || HEADER_SIZE + 2 * rs + as != size)
    {
      munmap (map, size);
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "The channel's shared memory has a bad header (version %u, expected %u)",
                   version, CHANNEL_VERSION);
      return NULL;
    }

  return channel_over_map (fd, map, size, rs, as, TRUE);
}

void
_accel_channel_free (AccelChannel *self)
{
  if (self == NULL)
    return;
  munmap (self->map, self->map_size);
  if (self->fd >= 0)
    close (self->fd);
  g_free (self);
}

int
_accel_channel_get_fd (AccelChannel *self)
{
  return self->fd;
}

guint8 *
_accel_channel_get_arena (AccelChannel *self, gsize *size)
{
  if (size)
    *size = self->arena_size;
  return self->arena;
}

gboolean
_accel_channel_send (AccelChannel *self,
                     AccelChannelKind kind,
                     guint64 id,
                     GVariant *body,
                     gint64 timeout_us,
                     GError **error)
{
  /* The serialised form of the `(utv)`, written straight into the ring
   * rather than built as a variant first (this is on every message's
   * path): the u at 0, the t at 8, and from 16 the v: its value's bytes, a
   * nul and its type string (the last member of a tuple has no framing
   * offset). */
  if (body == NULL)
    {
      /* Most answers carry nothing: one unit for them all. */
      static gsize unit;
      if (g_once_init_enter (&unit))
        g_once_init_leave (&unit, (gsize) g_variant_ref_sink (g_variant_new_tuple (NULL, 0)));
      body = (GVariant *) unit;
    }
  gsize body_size = g_variant_get_size (body);
  gconstpointer body_data = g_variant_get_data (body);
  const char *type = g_variant_get_type_string (body);
  gsize type_len = strlen (type);
  struct {
    guint32 kind;
    guint32 zero;
    guint64 id;
  } header = { kind, 0, id };
  G_STATIC_ASSERT (sizeof header == MESSAGE_HEADER_SIZE);
  gsize len = MESSAGE_HEADER_SIZE + body_size + 1 + type_len;
  gsize need = record_size (len);

  if (need > self->ring_size || len > G_MAXUINT32)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "A message of %" G_GSIZE_FORMAT " bytes does not fit the device host channel "
                   "(%" G_GSIZE_FORMAT " bytes)", len, self->ring_size);
      return FALSE;
    }

  guint64 head = self->tx_head;
  gint64 start = 0;
  for (guint spins = 0;; spins++)
    {
      guint64 tail = __atomic_load_n (&self->tx->tail, __ATOMIC_ACQUIRE);
      guint64 used = head - tail;
      if (used > self->ring_size)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_FAILED,
                       "The device host channel is corrupt (the peer moved its position to %"
                       G_GUINT64_FORMAT ")", tail);
          return FALSE;
        }
      if (self->ring_size - used >= need)
        break;
      if (g_atomic_int_get (&self->interrupted))
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED,
                       "The device host went away");
          return FALSE;
        }
      /* Full: the peer is behind. Spin a little, then poll gently. */
      gint64 now = g_get_monotonic_time ();
      if (start == 0)
        start = now;
      if (timeout_us >= 0 && now - start > timeout_us)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_TIMED_OUT,
                       "The device host did not read its channel for %" G_GINT64_FORMAT " ms",
                       timeout_us / 1000);
          return FALSE;
        }
      if (spins < 256)
        _accel_cpu_relax ();
      else if (spins < 1024)
        sched_yield ();
      else
        g_usleep (50);
    }

  guint32 len32 = len;
  guint64 at = head + 4;
  copy_in (self->tx_data, self->ring_size, head, &len32, 4);
  copy_in (self->tx_data, self->ring_size, at, &header, MESSAGE_HEADER_SIZE);
  at += MESSAGE_HEADER_SIZE;
  if (body_size > 0)
    copy_in (self->tx_data, self->ring_size, at, body_data, body_size);
  at += body_size;
  copy_in (self->tx_data, self->ring_size, at, "", 1);
  copy_in (self->tx_data, self->ring_size, at + 1, type, type_len);
  head += need;
  self->tx_head = head;
  __atomic_store_n (&self->tx->head, head, __ATOMIC_RELEASE);
  __atomic_add_fetch (&self->tx->seq, 1, __ATOMIC_SEQ_CST);
  if (__atomic_load_n (&self->tx->parked, __ATOMIC_SEQ_CST))
    {
      futex_wake (&self->tx->seq, 1);
      sched_yield ();
    }
  return TRUE;
}

static inline gboolean
has_data (AccelChannel *self)
{
  return __atomic_load_n (&self->rx->head, __ATOMIC_ACQUIRE) != self->rx_tail;
}

GVariant *
_accel_channel_receive (AccelChannel *self, GError **error)
{
  guint64 tail = self->rx_tail;
  guint64 head = __atomic_load_n (&self->rx->head, __ATOMIC_ACQUIRE);
  if (head == tail)
    return NULL;

  guint64 avail = head - tail;
  guint32 len = 0;
  if (avail <= self->ring_size && avail >= 8 && (avail & 7) == 0)
    copy_out (self->rx_data, self->ring_size, tail, &len, 4);
  if (len == 0 || record_size (len) > avail)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_FAILED,
                   "The device host channel is corrupt (%" G_GUINT64_FORMAT " bytes announced, "
                   "a record of %u)", avail, len);
      return NULL;
    }

  /* Copied out before parsing: the peer could change the bytes meanwhile. */
  guint8 *buf = g_malloc (len);
  copy_out (self->rx_data, self->ring_size, tail + 4, buf, len);
  tail += record_size (len);
  self->rx_tail = tail;
  __atomic_store_n (&self->rx->tail, tail, __ATOMIC_RELEASE);

  g_autoptr(GBytes) bytes = g_bytes_new_take (buf, len);
  return g_variant_ref_sink (g_variant_new_from_bytes (ACCEL_CHANNEL_MESSAGE_TYPE, bytes, FALSE));
}

gboolean
_accel_channel_has_data (AccelChannel *self)
{
  return has_data (self);
}

void
_accel_channel_fuzz_peer_write (AccelChannel *self, const void *bytes, gsize len, guint64 head_advance)
{
  guint64 tail = self->rx_tail;
  copy_in (self->rx_data, self->ring_size, tail, bytes, MIN (len, self->ring_size));
  __atomic_store_n (&self->rx->head, tail + head_advance, __ATOMIC_RELEASE);
}

gboolean
_accel_channel_fuzz_peer_send (AccelChannel *self, const void *payload, gsize len)
{
  guint32 len32 = len;
  gsize need = record_size (len);
  guint64 head = __atomic_load_n (&self->rx->head, __ATOMIC_ACQUIRE);
  if (len == 0 || len > G_MAXUINT32 || need > self->ring_size - (head - self->rx_tail))
    return FALSE;
  copy_in (self->rx_data, self->ring_size, head, &len32, 4);
  copy_in (self->rx_data, self->ring_size, head + 4, payload, len);
  __atomic_store_n (&self->rx->head, head + need, __ATOMIC_RELEASE);
  return TRUE;
}

gint64
_accel_channel_get_spin_cap (AccelChannel *self)
{
  return self->spin_cap;
}

static gboolean
stop_waiting (AccelChannel *self)
{
  return g_atomic_int_get (&self->interrupted) || g_atomic_int_get (&self->kicked);
}

/* After a wait that parked for @parked_us and then found a message: had
 * the spin been long enough to cover it, grow it to cover the next such
 * gap (with room); a long park means spinning would only have burnt the
 * core, so halve it. */
static void
adapt_spin (AccelChannel *self, gint64 parked_us, gboolean found)
{
  if (self->spin_cap <= 0)
    {
      self->spin_us = 0;
      return;
    }
  if (found && parked_us < self->spin_cap)
    self->spin_us = MIN (self->spin_cap, MAX (self->spin_us * 2, self->spin_us + 2 * parked_us));
  else
    self->spin_us = MAX (MIN_SPIN_US, self->spin_us / 2);
}

static gboolean
wait_for_data (AccelChannel *self, gint64 timeout_us)
{
  gint64 now = g_get_monotonic_time ();
  gint64 end = timeout_us < 0 ? G_MAXINT64 : now + timeout_us;
  gint64 spin_end = MIN (end, now + self->spin_us);
  for (guint n = 1; now < spin_end; n++)
    {
      if (has_data (self))
        {
          /* Caught while spinning: keep the spin (it grows only from
           * parks that a longer spin would have saved). */
          return TRUE;
        }
      if (stop_waiting (self))
        return FALSE;
      /* On a machine with fewer cores than busy threads, let the one that
       * is about to answer run. */
      if (self->few_cores || (n & 63) == 0)
        sched_yield ();
      else
        _accel_cpu_relax ();
      now = g_get_monotonic_time ();
    }

  __atomic_store_n (&self->rx->parked, 1, __ATOMIC_SEQ_CST);
  guint32 seq = __atomic_load_n (&self->rx->seq, __ATOMIC_SEQ_CST);
  gint64 parked_at = now;
  if (!has_data (self) && !stop_waiting (self))
    {
      now = g_get_monotonic_time ();
      if (end == G_MAXINT64)
        futex_wait (&self->rx->seq, seq, -1);
      else if (end > now)
        futex_wait (&self->rx->seq, seq, end - now);
    }
  __atomic_store_n (&self->rx->parked, 0, __ATOMIC_SEQ_CST);
  gboolean found = has_data (self);
  /* A kick is no message: it says nothing of how soon messages come. */
  if (!stop_waiting (self))
    adapt_spin (self, g_get_monotonic_time () - parked_at, found);
  return found;
}

gboolean
_accel_channel_wait (AccelChannel *self, gint64 timeout_us)
{
  gboolean got = has_data (self);

  /* A kick is sticky until a wait ends: the receiver may have been about
   * to wait for a timeout computed before the kick. */
  if (!got && !stop_waiting (self))
    got = wait_for_data (self, timeout_us);
  __atomic_store_n (&self->kicked, 0, __ATOMIC_SEQ_CST);
  return got;
}

void
_accel_channel_wake (AccelChannel *self)
{
  __atomic_store_n (&self->kicked, 1, __ATOMIC_SEQ_CST);
  __atomic_add_fetch (&self->rx->seq, 1, __ATOMIC_SEQ_CST);
  futex_wake (&self->rx->seq, INT_MAX);
}

void
_accel_channel_interrupt (AccelChannel *self)
{
  g_atomic_int_set (&self->interrupted, 1);
  _accel_channel_wake (self);
}

gboolean
_accel_channel_is_interrupted (AccelChannel *self)
{
  return g_atomic_int_get (&self->interrupted);
}

/* Reads the `(utv)` from its serialised bytes (which
 * _accel_channel_receive() copied out of shared memory) rather than
 * through GVariant accessors: kind and id at fixed offsets, the body as a
 * variant over the bytes it occupies. As GLib does for a `v`, a body
 * that cannot be read is the unit `()`. */
void
_accel_channel_parse (GVariant *message, guint32 *kind, guint64 *id, GVariant **body)
{
  gsize size = g_variant_get_size (message);
  const guint8 *data = g_variant_get_data (message);

  *kind = 0;
  *id = 0;
  *body = NULL;
  if (data != NULL && size >= MESSAGE_HEADER_SIZE)
    {
      memcpy (kind, data, 4);
      memcpy (id, data + 8, 8);
      /* The type string follows the last nul. */
      gsize zero = size;
      while (zero > MESSAGE_HEADER_SIZE && data[zero - 1] != 0)
        zero--;
      gsize type_len = size - zero;
      if (zero > MESSAGE_HEADER_SIZE && type_len > 0 && type_len <= MAX_BODY_TYPE_LENGTH)
        {
          char type[MAX_BODY_TYPE_LENGTH + 1];
          const char *end;
          memcpy (type, data + zero, type_len);
          type[type_len] = 0;
          /* A valid type string may still be indefinite (`*`, `r`, `m?`), of
           * which no value can be made: GLib aborts on those. */
          if (g_variant_type_string_scan (type, type + type_len, &end) && end == type + type_len
              && g_variant_type_is_definite (G_VARIANT_TYPE (type)))
            {
              g_autoptr(GBytes) all = g_variant_get_data_as_bytes (message);
              g_autoptr(GBytes) value = g_bytes_new_from_bytes (all, MESSAGE_HEADER_SIZE,
                                                                zero - 1 - MESSAGE_HEADER_SIZE);
              *body = g_variant_ref_sink (g_variant_new_from_bytes (G_VARIANT_TYPE (type), value, FALSE));
            }
        }
    }
  if (*body == NULL)
    *body = g_variant_ref_sink (g_variant_new_tuple (NULL, 0));
}

GVariant *
_accel_channel_error_to_variant (const GError *error)
{
  return g_variant_new ("(sis)", g_quark_to_string (error->domain), error->code, error->message);
}

GError *
_accel_channel_error_from_variant (GVariant *variant)
{
  if (variant == NULL || !g_variant_is_of_type (variant, ACCEL_CHANNEL_ERROR_TYPE))
    return g_error_new_literal (ACCEL_ERROR, ACCEL_ERROR_FAILED,
                                "The device host sent a malformed error");
  const char *domain, *message;
  gint32 code;
  g_variant_get (variant, "(&si&s)", &domain, &code, &message);
  /* Never make quarks from what a peer sends: unknown domains become
   * FAILED. Ours may not be registered yet in this process. */
  GQuark quark = g_str_equal (domain, g_quark_to_string (ACCEL_ERROR)) ? ACCEL_ERROR
                                                                        : g_quark_try_string (domain);
  if (quark == 0)
    return g_error_new (ACCEL_ERROR, ACCEL_ERROR_FAILED, "%s (%s %d)", message, domain, code);
  return g_error_new_literal (quark, code, message);
}

/* Reply slots. Dekker style, as parking: the application marks a slot
 * parked, then looks for the answer; the host writes the answer, then
 * looks for the mark. At least one sees the other's write, so a parked
 * caller always gets the answer through the ring as well. */

void
_accel_channel_slot_arm (AccelChannel *self, guint slot)
{
  g_return_if_fail (slot < ACCEL_CHANNEL_N_SLOTS);
  __atomic_store_n (&self->slots[slot].parked, 0, __ATOMIC_RELAXED);
}

gboolean
_accel_channel_slot_answered (AccelChannel *self, guint slot, guint64 id)
{
  return __atomic_load_n (&self->slots[slot].done_id, __ATOMIC_ACQUIRE) == id;
}

gboolean
_accel_channel_slot_park (AccelChannel *self, guint slot, guint64 id)
{
  __atomic_store_n (&self->slots[slot].parked, 1, __ATOMIC_SEQ_CST);
  return __atomic_load_n (&self->slots[slot].done_id, __ATOMIC_SEQ_CST) == id;
}

gboolean
_accel_channel_slot_answer (AccelChannel *self, guint slot, guint64 id)
{
  if (slot >= ACCEL_CHANNEL_N_SLOTS)
    return TRUE;
  __atomic_store_n (&self->slots[slot].done_id, id, __ATOMIC_SEQ_CST);
  return __atomic_load_n (&self->slots[slot].parked, __ATOMIC_SEQ_CST) != 0;
}
