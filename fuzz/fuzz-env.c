/* fuzz-env.c: the set-up every harness shares. See fuzz-env.h.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdlib.h>
#include <string.h>
#include <glib/gstdio.h>

#include "fuzz-env.h"

/* The CPU plugin, linked in (see fuzz/meson.build). */
gboolean accel_plugin_cpu_register (AccelRegistry *registry, GError **error);

static char *tmpdir;
static AccelSystem *fuzz_system;
static AccelDevice *fuzz_cpu;
static gboolean warnings_fatal;

static void
remove_tmpdir (void)
{
  g_autoptr(GDir) dir = tmpdir ? g_dir_open (tmpdir, 0, NULL) : NULL;
  const char *name;
  while (dir && (name = g_dir_read_name (dir)))
    {
      g_autofree char *path = g_build_filename (tmpdir, name, NULL);
      g_remove (path);
    }
  if (tmpdir)
    g_rmdir (tmpdir);
}

const char *
accel_fuzz_get_tmpdir (void)
{
  if (tmpdir == NULL)
    {
      g_autoptr(GError) error = NULL;
      tmpdir = g_dir_make_tmp ("accel-fuzz-XXXXXX", &error);
      if (tmpdir == NULL)
        g_error ("Cannot make a temporary directory: %s", error->message);
      atexit (remove_tmpdir);
    }
  return tmpdir;
}

static GLogWriterOutput
log_writer (GLogLevelFlags level, const GLogField *fields, gsize n_fields, gpointer data)
{
  if (warnings_fatal && (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING)))
    {
      g_log_writer_standard_streams (level, fields, n_fields, data);
      abort ();
    }
  /* Debug output of millions of inputs helps nobody. */
  if (level & (G_LOG_LEVEL_DEBUG | G_LOG_LEVEL_INFO))
    return G_LOG_WRITER_HANDLED;
  return g_log_writer_standard_streams (level, fields, n_fields, data);
}

/* Every harness's set-up: the system and its cpu:0 made before the first
 * input; from then on a warning or critical aborts, since either means
 * input reached a programmer error (set-up itself may warn). */
int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  accel_fuzz_get_cpu ();
  warnings_fatal = TRUE;
  return 0;
}

AccelSystem *
accel_fuzz_get_system (void)
{
  if (fuzz_system)
    return fuzz_system;

  g_log_set_writer_func (log_writer, NULL, NULL);
  g_autofree char *registry = g_build_filename (accel_fuzz_get_tmpdir (), "registry.bin", NULL);
  g_autofree char *config = g_build_filename (accel_fuzz_get_tmpdir (), "config", NULL);
  g_setenv ("ACCEL_REGISTRY", registry, TRUE);
  g_setenv ("ACCEL_PLUGIN_PATH", "", TRUE);
  g_setenv ("ACCEL_PLUGIN_SYSTEM_PATH", "", TRUE);
  g_setenv ("XDG_CONFIG_HOME", config, TRUE);
  g_setenv ("XDG_CACHE_HOME", config, TRUE);
  g_setenv ("ACCEL_REGISTRY_FORK", "no", TRUE);
  /* Small: a fuzzer's input may ask for any size. */
  g_setenv ("ACCEL_CPU_MEMORY_LIMIT", "4M", TRUE);
  g_setenv ("ACCEL_CPU_THREADS", "1", TRUE);

  g_autoptr(GError) error = NULL;
  fuzz_system = accel_system_new (&error);
  if (fuzz_system == NULL)
    g_error ("Cannot make the fuzzer's system: %s", error->message);
  if (!accel_plugin_cpu_register (accel_system_get_registry (fuzz_system), &error))
    g_error ("Cannot link the CPU plugin in: %s", error->message);
  return fuzz_system;
}

AccelDevice *
accel_fuzz_get_cpu (void)
{
  if (fuzz_cpu == NULL)
    {
      g_autoptr(GError) error = NULL;
      fuzz_cpu = accel_system_get_device (accel_fuzz_get_system (), "cpu:0", &error);
      if (fuzz_cpu == NULL)
        g_error ("No cpu:0 in the fuzzer: %s", error->message);
    }
  return fuzz_cpu;
}

guint8
accel_fuzz_input_u8 (AccelFuzzInput *in)
{
  return in->pos < in->size ? in->data[in->pos++] : 0;
}

guint32
accel_fuzz_input_u32 (AccelFuzzInput *in)
{
  guint32 v = 0;
  for (guint i = 0; i < 4; i++)
    v |= (guint32) accel_fuzz_input_u8 (in) << (8 * i);
  return v;
}

guint64
accel_fuzz_input_u64 (AccelFuzzInput *in)
{
  guint64 lo = accel_fuzz_input_u32 (in);
  return lo | (guint64) accel_fuzz_input_u32 (in) << 32;
}

const guint8 *
accel_fuzz_input_bytes (AccelFuzzInput *in, gsize max, gsize *got)
{
  const guint8 *p = in->data + in->pos;
  *got = MIN (max, in->size - in->pos);
  in->pos += *got;
  return p;
}

GVariant *
accel_fuzz_variant (const GVariantType *type, const guint8 *data, gsize size)
{
  g_autoptr(GBytes) bytes = g_bytes_new (data, size);
  return g_variant_ref_sink (g_variant_new_from_bytes (type, bytes, FALSE));
}

static guint16
input_u16 (AccelFuzzInput *in)
{
  guint16 lo = accel_fuzz_input_u8 (in);
  return lo | (guint16) accel_fuzz_input_u8 (in) << 8;
}

guint
accel_fuzz_feed_channel (AccelChannel *receiver,
                         AccelFuzzInput *in,
                         AccelFuzzMessageFunc handle,
                         gpointer user_data)
{
  guint n = 0;

  while (in->pos < in->size)
    {
      guint8 tag = accel_fuzz_input_u8 (in);
      gsize len;
      if (tag == ACCEL_FUZZ_TAG_RAW)
        {
          guint64 advance = accel_fuzz_input_u64 (in);
          const guint8 *bytes = accel_fuzz_input_bytes (in, input_u16 (in), &len);
          _accel_channel_fuzz_peer_write (receiver, bytes, len, advance);
        }
      else if (tag < 0xf0)
        {
          const guint8 *payload = accel_fuzz_input_bytes (in, input_u16 (in), &len);
          if (!_accel_channel_fuzz_peer_send (receiver, payload, len))
            continue;
        }
      else
        continue;

      for (;;)
        {
          g_autoptr(GError) error = NULL;
          g_autoptr(GVariant) message = _accel_channel_receive (receiver, &error);
          if (error)
            {
              g_assert (message == NULL);
              return n;
            }
          if (message == NULL)
            break;
          handle (message, user_data);
          n++;
        }
    }
  return n;
}

gboolean
accel_fuzz_table_too_big (GVariant *table, gsize dims_index)
{
  gsize n = g_variant_n_children (table);
  for (gsize i = 0; i < n; i++)
    {
      g_autoptr(GVariant) entry = g_variant_get_child_value (table, i);
      g_autoptr(GVariant) dims_v = g_variant_get_child_value (entry, dims_index);
      gsize rank;
      const gint64 *dims = g_variant_get_fixed_array (dims_v, &rank, sizeof (gint64));
      guint64 elements = 1;
      gboolean overflow = FALSE, invalid = FALSE;
      for (gsize d = 0; d < rank; d++)
        if (dims[d] < 0)
          invalid = TRUE;
        else if (dims[d] > 0 && __builtin_mul_overflow (elements, (guint64) dims[d], &elements))
          overflow = TRUE;
      gboolean big = !invalid && (overflow || elements > ACCEL_FUZZ_MAX_ELEMENTS);
      if (big)
        return TRUE;
    }
  return FALSE;
}
