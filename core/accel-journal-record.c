/* accel-journal-record.c: what a device records into its journal, on its
 * own thread, around the backend's execute (the device's one hook, in
 * run_work()).
 *
 * Each op's serialised form is written once per state of the op object (an
 * OP record; an op submitted again unchanged costs a comparison), and
 * every run of it as a RUN record with digests of the buffers it reads,
 * taken before it runs, and of those it writes, taken once it has
 * completed. Where the device's memory is this process's (in-process CPU
 * devices) digests are made from it directly; elsewhere (device hosts,
 * GPUs) the buffers are read into host memory through the device's own
 * transfers, in order with the op. Uploads and zeroes are recorded whole:
 * a replay starts from them.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include "accel-journal-private.h"

static GVariant *
entry_variant (AccelBuffer *b)
{
  AccelBuffer *base = accel_buffer_get_base (b) ? accel_buffer_get_base (b) : b;
  guint rank;
  const AccelShape *shape = accel_buffer_get_shape (b);
  const gint64 *dims = accel_shape_get_dims (shape, &rank);
  const gint64 *strides = accel_shape_get_strides (shape, &rank);
  return g_variant_new ("(ttttu@ax@ax)", accel_buffer_get_handle (b), accel_buffer_get_handle (base),
                        (guint64) accel_buffer_get_size (base),
                        (guint64) (accel_buffer_get_offset (b) - accel_buffer_get_offset (base)),
                        (guint32) accel_buffer_get_dtype (b),
                        g_variant_new_fixed_array (G_VARIANT_TYPE_INT64, dims, rank, sizeof (gint64)),
                        g_variant_new_fixed_array (G_VARIANT_TYPE_INT64, strides, rank, sizeof (gint64)));
}

typedef struct _Run Run;
static void run_destroy (Run *run);
typedef struct _OpForm OpForm;
static void op_form_unref (gpointer data);

/* What the journal knows of a device: kept as its qdata (a reference),
 * until another journal records the device. */
typedef struct {
  gint ref_count;               /* the device's, and a run's that outlives its start */
  guint serial;                 /* of the journal it was recorded in */
  guint index;
  gboolean host_memory;         /* its buffers are this process's memory */
  Run *spare;                   /* atomic: a finished run, to reuse */
  /* The form of the last op it ran, and that op's serial: an op run again
   * finds its form here, without the lock of the op's qdata, which the
   * submitting thread's references to the op contend with. The device
   * thread's only. */
  guint64 last_op;
  OpForm *last_form;
} DeviceInfo;

static void
device_info_unref (gpointer data)
{
  DeviceInfo *info = data;
  if (!g_atomic_int_dec_and_test (&info->ref_count))
    return;
  if (info->spare)
    run_destroy (info->spare);
  op_form_unref (info->last_form);
  g_free (info);
}

static GQuark
device_quark (void)
{
  static gsize quark;
  if (g_once_init_enter (&quark))
    g_once_init_leave (&quark, g_quark_from_static_string ("accel-journal-device"));
  return (GQuark) quark;
}

/* On the device thread (the only one that sets it). A device's thread
 * serves only it, so the last answer is kept in the thread. */
static DeviceInfo *
device_info (AccelJournal *self, AccelDevice *device)
{
  static __thread AccelDevice *last_device;
  static __thread DeviceInfo *last_info;
  if (G_LIKELY (last_device == device && last_info->serial == self->serial))
    return last_info;

  DeviceInfo *info = g_object_get_qdata (G_OBJECT (device), device_quark ());
  if (info && info->serial == self->serial)
    {
      last_device = device;
      last_info = info;
      return info;
    }

  info = g_new0 (DeviceInfo, 1);
  info->ref_count = 1;
  info->serial = self->serial;
  info->index = g_atomic_int_add (&self->next_device, 1);
  info->host_memory = !ACCEL_IS_REMOTE_DEVICE (device)
                      && g_strcmp0 (accel_device_get_backend_name (device), "cpu") == 0;
  g_object_set_qdata_full (G_OBJECT (device), device_quark (), info, device_info_unref);
  _accel_journal_append (self, ACCEL_JOURNAL_DEVICE,
                  g_variant_new ("(us)", info->index, accel_device_get_name (device)));
  last_device = device;
  last_info = info;
  return info;
}

/* The recorded form of an op object in one state: its OP record's id and
 * its buffers. Kept as the op's qdata (a reference-counted copy taken under
 * GLib's lock, since one op may run on several devices at once), and
 * made again when the op changes: its count of property notifications
 * moves, or its instance's bytes differ. */

/* What a digest needs of a buffer, read once (a buffer never changes). A
 * run's last part may take its digests after the op and its buffers are
 * gone, so the shape is the form's own copy. */
typedef struct {
  AccelBuffer *buffer;          /* unowned: the op holds it while its form is current */
  guint64 handle;
  AccelDType dtype;
  AccelShape *shape;
  guint8 *data;                 /* where memory is this process's */
  gsize size;
} FormBuffer;

struct _OpForm {
  gint ref_count;
  guint serial;
  guint64 id;
  guint changes;                /* the op's, when the form was made */
  int lane;
  gsize n_bytes;
  guint8 *bytes;                /* the instance after its GObject header */
  guint n_inputs;
  guint n_outputs;
  FormBuffer *buffers;          /* what it reads, then what it writes */
};

static gpointer
op_form_ref (gpointer data, gpointer unused)
{
  OpForm *form = data;
  if (form)
    g_atomic_int_inc (&form->ref_count);
  return form;
}

static void
op_form_unref (gpointer data)
{
  OpForm *form = data;
  if (form && g_atomic_int_dec_and_test (&form->ref_count))
    {
      for (guint i = 0; i < form->n_inputs + form->n_outputs; i++)
        accel_shape_free (form->buffers[i].shape);
      g_free (form->bytes);
      g_free (form->buffers);
      g_free (form);
    }
}

static GQuark
op_quark (void)
{
  static gsize quark;
  if (g_once_init_enter (&quark))
    g_once_init_leave (&quark, g_quark_from_static_string ("accel-journal-op"));
  return (GQuark) quark;
}

static gsize
instance_size (AccelOp *op)
{
  GTypeQuery q;
  g_type_query (G_OBJECT_TYPE (op), &q);
  return q.instance_size > sizeof (GObject) ? q.instance_size - sizeof (GObject) : 0;
}

typedef struct {
  GPtrArray *inputs;
  GPtrArray *outputs;
  GPtrArray *entries;           /* one per distinct buffer */
  GPtrArray *seen;
} FormBuffers;

static void
add_form_buffer (AccelOp *op, GParamSpec *pspec, AccelBuffer *b, AccelAccess access, gpointer data)
{
  FormBuffers *fb = data;
  if (access & ACCEL_ACCESS_READ)
    g_ptr_array_add (fb->inputs, b);
  if (access & ACCEL_ACCESS_WRITE)
    g_ptr_array_add (fb->outputs, b);
  if (!g_ptr_array_find (fb->seen, b, NULL))
    {
      g_ptr_array_add (fb->seen, b);
      g_ptr_array_add (fb->entries, entry_variant (b));
    }
}

static gboolean
op_form_is_current (OpForm *form, AccelJournal *self, AccelOp *op, guint changes)
{
  return form->serial == self->serial && form->changes == changes && form->lane == accel_op_get_lane (op)
         && memcmp (form->bytes, (const guint8 *) op + sizeof (GObject), form->n_bytes) == 0;
}

static void
remember_form (DeviceInfo *info, AccelOp *op, OpForm *form)
{
  if (info->last_form == form)
    return;
  op_form_unref (info->last_form);
  info->last_form = op_form_ref (form, NULL);
  info->last_op = _accel_op_get_serial (op);
}

static OpForm *
op_form (AccelJournal *self, DeviceInfo *info, AccelOp *op)
{
  guint changes = _accel_op_get_changes (op);
  OpForm *form = info->last_form && info->last_op == _accel_op_get_serial (op)
                 ? op_form_ref (info->last_form, NULL)
                 : g_object_dup_qdata (G_OBJECT (op), op_quark (), op_form_ref, NULL);
  if (G_LIKELY (form && op_form_is_current (form, self, op, changes)))
    {
      remember_form (info, op, form);
      return form;
    }
  op_form_unref (form);

  const guint8 *now = (const guint8 *) op + sizeof (GObject);
  form = g_new0 (OpForm, 1);
  form->ref_count = 1;
  form->serial = self->serial;
  form->changes = changes;
  form->lane = accel_op_get_lane (op);
  form->n_bytes = instance_size (op);
  form->bytes = g_memdup2 (now, form->n_bytes);
  form->id = __atomic_add_fetch (&self->next_op, 1, __ATOMIC_RELAXED);

  FormBuffers fb = { g_ptr_array_new (), g_ptr_array_new (), g_ptr_array_new (), g_ptr_array_new () };
  _accel_op_foreach_buffer (op, add_form_buffer, &fb);
  form->n_inputs = fb.inputs->len;
  form->n_outputs = fb.outputs->len;
  form->buffers = g_new (FormBuffer, form->n_inputs + form->n_outputs + 1);
  for (guint i = 0; i < form->n_inputs + form->n_outputs; i++)
    {
      AccelBuffer *b = i < form->n_inputs ? fb.inputs->pdata[i] : fb.outputs->pdata[i - form->n_inputs];
      form->buffers[i] = (FormBuffer) { b, accel_buffer_get_handle (b), accel_buffer_get_dtype (b),
                                        accel_shape_copy (accel_buffer_get_shape (b)), accel_buffer_get_data (b),
                                        accel_buffer_get_size (b) };
    }
  g_autoptr(GPtrArray) entries = fb.entries;
  g_ptr_array_unref (fb.inputs);
  g_ptr_array_unref (fb.outputs);
  g_ptr_array_unref (fb.seen);
  g_autoptr(GVariant) serialized = accel_op_serialize (op);   /* a full reference */
  _accel_journal_append (self, ACCEL_JOURNAL_OP,
                  g_variant_new ("(t@(sa{sv})@a" ACCEL_JOURNAL_ENTRY_TYPE ")", form->id,
                                 serialized,
                                 g_variant_new_array (G_VARIANT_TYPE (ACCEL_JOURNAL_ENTRY_TYPE),
                                                      (GVariant **) entries->pdata, entries->len)));
  g_object_set_qdata_full (G_OBJECT (op), op_quark (), op_form_ref (form, NULL), op_form_unref);
  remember_form (info, op, form);
  return form;
}

/* One run of an op, upload or zero, from the device thread until all its
 * parts are done: the work itself and, on devices whose memory is not
 * ours, the reads of its buffers. */
#define INLINE_DIGESTS 6

struct _Run {
  AccelJournal *journal;
  AccelDevice *device;          /* unowned: each part is a work, which holds it */
  DeviceInfo *info;
  AccelWorkKind kind;
  guint64 seq;
  guint generation;
  guint device_index;
  gboolean host_memory;
  gboolean keep_bytes;
  gboolean journal_ref;         /* the run holds the journal and its device info: it outlived its start */
  OpForm *form;
  AccelBuffer *buffer;          /* of an upload or zero */
  gint remaining;               /* atomic: parts not yet done, +1 while being issued */
  GError *error;                /* how the work ended */
  guint n_inputs;
  guint n_outputs;
  AccelJournalDigest *digests;  /* inputs, then outputs: inline_digests, or allocated */
  guint8 **staging;             /* per digest: the buffer's bytes read back, or NULL */
  guint8 **bytes;               /* per digest: the gathered bytes kept, or NULL */
  AccelJournalDigest inline_digests[INLINE_DIGESTS];
};

static void
run_destroy (Run *run)
{
  g_free (run);
}

/* A run of @info's device: its spare one (a run per device is the common
 * case, the next one starting once the last is recorded), or a new one. */
static Run *
run_new (DeviceInfo *info)
{
  Run *run = g_atomic_pointer_exchange (&info->spare, NULL);
  if (run)
    memset (run, 0, sizeof *run);
  else
    run = g_new0 (Run, 1);
  run->info = info;
  return run;
}

static void
run_free (Run *run)
{
  guint n = run->n_inputs + run->n_outputs;
  for (guint i = 0; i < n; i++)
    {
      if (run->staging)
        g_free (run->staging[i]);
      if (run->bytes)
        g_free (run->bytes[i]);
    }
  g_free (run->staging);
  g_free (run->bytes);
  if (run->digests != run->inline_digests)
    g_free (run->digests);
  op_form_unref (run->form);
  g_clear_object (&run->buffer);
  g_clear_error (&run->error);
  /* Once it is the spare, the device thread may take it again. */
  DeviceInfo *info = run->info;
  gboolean held = run->journal_ref;
  if (held)
    g_object_unref (run->journal);
  if (!g_atomic_pointer_compare_and_exchange (&info->spare, NULL, run))
    run_destroy (run);
  if (held)
    device_info_unref (info);
}

static inline const FormBuffer *
digest_buffer (Run *run, guint i)
{
  return &run->form->buffers[i];
}

/* Digest (and gathered bytes) of buffer @i from @data, its bytes; from
 * its memory when @data is NULL. */
static void
take_digest (Run *run, guint i, const guint8 *data)
{
  const FormBuffer *fb = digest_buffer (run, i);
  AccelJournalDigest *d = &run->digests[i];
  if (data == NULL)
    data = fb->data;
  d->handle = fb->handle;
  _accel_journal_digest (d, fb->dtype, fb->shape, data);
  if (run->keep_bytes)
    {
      gsize n;
      run->bytes[i] = _accel_journal_gather (fb->dtype, fb->shape, data, &n);
      d->has_bytes = 1;
    }
}

static void
write_run (Run *run)
{
  AccelJournal *self = run->journal;
  guint n = run->n_inputs + run->n_outputs;
  const char *message = run->error ? run->error->message : "";
  gsize message_length = strlen (message);
  gsize size = sizeof (AccelJournalRunHeader) + n * sizeof (AccelJournalDigest) + ((message_length + 7) & ~7);
  for (guint i = 0; i < n; i++)
    if (run->digests[i].has_bytes)
      size += (run->digests[i].n_bytes + 7) & ~(gsize) 7;
  if (size + ACCEL_JOURNAL_RECORD_HEAD >= ACCEL_JOURNAL_MAX_RECORD)
    {
      /* Too big for one record: the digests only. */
      for (guint i = 0; i < n; i++)
        run->digests[i].has_bytes = 0;
      return write_run (run);
    }

  gsize at;
  guint8 *p = _accel_journal_open_record (self, ACCEL_JOURNAL_RUN, size, &at);
  if (p == NULL)
    return;
  AccelJournalRunHeader head = {
    .seq = run->seq,
    .op = run->form->id,
    .device = run->device_index,
    .generation = run->generation,
    .error_code = run->error ? run->error->code : 0,
    .error_domain = run->error == NULL ? 0 : run->error->domain == ACCEL_ERROR ? 1 : 2,
    .n_inputs = run->n_inputs,
    .n_outputs = run->n_outputs,
    .message_length = message_length,
  };
  memcpy (p, &head, sizeof head);
  p += sizeof head;
  memcpy (p, run->digests, n * sizeof (AccelJournalDigest));
  p += n * sizeof (AccelJournalDigest);
  memcpy (p, message, message_length);
  p += (message_length + 7) & ~7;
  for (guint i = 0; i < n; i++)
    if (run->digests[i].has_bytes)
      {
        memcpy (p, run->bytes[i], run->digests[i].n_bytes);
        p += (run->digests[i].n_bytes + 7) & ~(gsize) 7;
      }
  _accel_journal_close_record (self, at);
}

/* While the upload's host data is still there (before it completes). */
static void
write_transfer (Run *run, const guint8 *data, gsize size)
{
  GVariant *entry = entry_variant (run->buffer);
  if (run->kind == ACCEL_WORK_ZERO)
    {
      _accel_journal_append (run->journal, ACCEL_JOURNAL_ZERO,
                      g_variant_new ("(ttuu@" ACCEL_JOURNAL_ENTRY_TYPE ")", run->seq, (guint64) 0,
                                     run->device_index, run->generation, entry));
      return;
    }
  _accel_journal_append (run->journal, ACCEL_JOURNAL_WRITE,
                  g_variant_new ("(ttuu@" ACCEL_JOURNAL_ENTRY_TYPE "@ay)", run->seq, (guint64) 0,
                                 run->device_index, run->generation, entry,
                                 g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, data, size, 1)));
}

/* On the device thread, before its hold on @run is given back: neither
 * the journal nor the device's info for it can go before this thread
 * returns to its mailbox (a device lets go of a journal there, and only
 * this thread replaces the info, when another journal records it), so a
 * run that ends before that needs no reference to them; one that goes
 * on, on other threads, takes one of each. */
static void
release_hold (Run *run)
{
  if (g_atomic_int_get (&run->remaining) > 1)
    {
      run->journal_ref = TRUE;
      g_object_ref (run->journal);
      g_atomic_int_inc (&run->info->ref_count);
    }
}

/* One part of a run is done; the last one writes its record. */
static void
run_part_done (Run *run)
{
  if (!g_atomic_int_dec_and_test (&run->remaining))
    return;
  if (run->kind == ACCEL_WORK_OP)
    {
      for (guint i = 0; run->staging && i < run->n_inputs + run->n_outputs; i++)
        {
          if (run->staging[i])
            take_digest (run, i, run->staging[i]);
          else
            run->digests[i].handle = digest_buffer (run, i)->handle;   /* its read failed: no digest */
        }
      write_run (run);
    }
  run_free (run);
}

typedef struct {
  Run *run;
  guint index;
} ReadPart;

static void
read_done (AccelWork *work, const GError *error, gpointer data)
{
  ReadPart *part = data;
  if (error)
    g_clear_pointer (&part->run->staging[part->index], g_free);
  run_part_done (part->run);
  g_free (part);
}

static void
issue_reads (Run *run, guint first, guint last)
{
  for (guint i = first; i < last; i++)
    {
      const FormBuffer *fb = digest_buffer (run, i);
      gsize size = fb->size;
      ReadPart *part = g_new (ReadPart, 1);
      part->run = run;
      part->index = i;
      run->staging[i] = g_malloc (size ? size : 1);
      g_atomic_int_inc (&run->remaining);
      _accel_device_execute_read (run->device, fb->buffer, run->staging[i], size, read_done, part);
    }
}

static void
work_done (AccelWork *work, const GError *error, gpointer data)
{
  Run *run = data;
  if (error)
    run->error = g_error_copy (error);
  /* Where memory is ours, the outputs are final now. */
  if (run->kind == ACCEL_WORK_OP && run->host_memory)
    for (guint i = run->n_inputs; i < run->n_inputs + run->n_outputs; i++)
      take_digest (run, i, NULL);
  /* A failed upload or zero wrote nothing a replay needs to know of. */
  if (run->kind != ACCEL_WORK_OP && error == NULL)
    {
      gsize size;
      const guint8 *host = accel_work_get_host_data (work, &size);
      write_transfer (run, host, run->kind == ACCEL_WORK_WRITE ? size : 0);
    }
  run_part_done (run);
}

void
_accel_journal_execute (AccelJournal *self, AccelDevice *device, AccelWork *work)
{
  AccelWorkKind kind = accel_work_get_kind (work);
  if (kind == ACCEL_WORK_READ || g_atomic_int_get (&self->failed))
    {
      ACCEL_DEVICE_GET_CLASS (device)->execute (device, work);
      return;
    }

  DeviceInfo *info = device_info (self, device);
  Run *run = run_new (info);
  run->journal = self;
  run->device = device;
  run->kind = kind;
  run->seq = __atomic_add_fetch (&self->next_seq, 1, __ATOMIC_RELAXED);
  run->generation = accel_device_get_generation (device);
  run->device_index = info->index;
  run->host_memory = info->host_memory;
  run->keep_bytes = (self->flags & ACCEL_JOURNAL_FLAGS_BYTES) != 0;
  run->remaining = 2;   /* the work, and this function while it issues the parts */

  if (kind != ACCEL_WORK_OP)
    {
      run->buffer = g_object_ref (accel_work_get_buffer (work));
      _accel_device_execute_observed (device, work, work_done, run);
      release_hold (run);
      run_part_done (run);
      return;
    }

  run->form = op_form (self, info, accel_work_get_op (work));
  run->n_inputs = run->form->n_inputs;
  run->n_outputs = run->form->n_outputs;
  guint n = run->n_inputs + run->n_outputs;
  run->digests = n <= INLINE_DIGESTS ? run->inline_digests : g_new0 (AccelJournalDigest, n);
  if (run->keep_bytes)
    run->bytes = g_new0 (guint8 *, n);
  if (run->host_memory)
    for (guint i = 0; i < run->n_inputs; i++)
      take_digest (run, i, NULL);
  else
    {
      run->staging = g_new0 (guint8 *, n);
      issue_reads (run, 0, run->n_inputs);
    }
  /* The op may complete, and its caller drop it and its buffers, before
   * the reads of its outputs are issued: they are held until then. */
  AccelBuffer **outputs = NULL;
  if (!run->host_memory)
    {
      outputs = g_newa (AccelBuffer *, run->n_outputs + 1);
      for (guint i = 0; i < run->n_outputs; i++)
        outputs[i] = g_object_ref (digest_buffer (run, run->n_inputs + i)->buffer);
    }
  _accel_device_execute_observed (device, work, work_done, run);
  if (!run->host_memory)
    {
      issue_reads (run, run->n_inputs, n);
      for (guint i = 0; i < run->n_outputs; i++)
        g_object_unref (outputs[i]);
    }
  release_hold (run);
  run_part_done (run);
}
