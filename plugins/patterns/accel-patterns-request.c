/* accel-patterns-request.c: a serving actor's request, read from its
 * GVariant, and the reply built for it.
 *
 * A request is an `a{sv}`: each model input by name as `(saxay)` (dtype
 * name, shape `[rows, item dims…]`, the row-major bytes), and optionally
 * `priority` (u, 1 the highest; 0 the default), `timeout-us` (x),
 * `tenant` (s) and `sequence` (t, echoed in the reply). A reply is an
 * `a{sv}`: each output by name as `(saxay)`, and `model-version` (u),
 * `batch-size` (u: rows in the batch it ran in), `queue-us` (x: from its
 * arrival to the start of that batch), `batch` (t: that batch's number,
 * from 1, in the order batches started), `sequence` when asked. Everything
 * in a request comes from a user: each check names the field.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-patterns-request.h"

#include <string.h>

static const char *const optional_keys[] = { "priority", "timeout-us", "tenant", "sequence", NULL };

void
accel_patterns_request_free (AccelPatternsRequest *request)
{
  if (request == NULL)
    return;
  g_clear_pointer (&request->inputs, g_ptr_array_unref);
  g_free (request->tenant);
  g_free (request);
}

static gboolean
bad (GError **error, const char *format, ...) G_GNUC_PRINTF (2, 3);

static gboolean
bad (GError **error, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *message = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error_literal (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, message);
  return FALSE;
}

static char *
dims_string (const gint64 *dims, gsize n)
{
  GString *s = g_string_new ("[");
  for (gsize i = 0; i < n; i++)
    g_string_append_printf (s, "%s%" G_GINT64_FORMAT, i ? ", " : "", dims[i]);
  g_string_append_c (s, ']');
  return g_string_free (s, FALSE);
}

/* Reads one input: checks its dtype, item shape and size; returns its rows
 * through @rows and its bytes. */
static GBytes *
read_input (GVariant *value, const AccelTensorSpec *spec, guint *rows, GError **error)
{
  const char *name = accel_tensor_spec_get_name (spec);
  if (!g_variant_is_of_type (value, G_VARIANT_TYPE ("(saxay)")))
    {
      bad (error, "Input “%s” must be (saxay): dtype name, shape, bytes; it is %s",
           name, g_variant_get_type_string (value));
      return NULL;
    }
  const char *dtype_name;
  g_autoptr(GVariant) shape_v = NULL, data_v = NULL;
  g_variant_get (value, "(&s@ax@ay)", &dtype_name, &shape_v, &data_v);

  AccelDType dtype;
  if (!accel_dtype_parse (dtype_name, &dtype))
    {
      bad (error, "Input “%s” names the unknown dtype “%s”", name, dtype_name);
      return NULL;
    }
  if (dtype != accel_tensor_spec_get_dtype (spec))
    {
      bad (error, "Input “%s” holds %s; the model takes %s", name, accel_dtype_get_name (dtype),
           accel_dtype_get_name (accel_tensor_spec_get_dtype (spec)));
      return NULL;
    }

  gsize rank = 0;
  const gint64 *dims = g_variant_get_fixed_array (shape_v, &rank, sizeof (gint64));
  guint n_item = 0;
  const gint64 *item = accel_tensor_spec_get_item_dims (spec, &n_item);
  gboolean fits = rank == n_item + 1 && dims[0] >= 1 && dims[0] <= G_MAXUINT32;
  for (guint d = 0; fits && d < n_item; d++)
    fits = dims[d + 1] == item[d];
  if (!fits)
    {
      g_autofree char *have = dims_string (dims, rank);
      g_autofree char *want = accel_tensor_spec_to_string (spec);
      bad (error, "Input “%s” has the shape %s; the model takes %s with n at least 1", name, have, want);
      return NULL;
    }
  *rows = (guint) dims[0];
  gsize want_size = (gsize) *rows * accel_tensor_spec_get_item_size (spec);
  if (g_variant_get_size (data_v) != want_size)
    {
      g_autofree char *have = dims_string (dims, rank);
      bad (error, "Input “%s” has %" G_GSIZE_FORMAT " bytes; %s of %s takes %" G_GSIZE_FORMAT,
           name, g_variant_get_size (data_v), have, accel_dtype_get_name (dtype), want_size);
      return NULL;
    }
  return g_variant_get_data_as_bytes (data_v);
}

static gboolean
read_optional (AccelPatternsRequest *request, const char *key, GVariant *value, GError **error)
{
  if (g_str_equal (key, "priority"))
    {
      if (!g_variant_is_of_type (value, G_VARIANT_TYPE_UINT32))
        return bad (error, "“priority” must be a u (1 is the highest); it is %s", g_variant_get_type_string (value));
      request->priority = g_variant_get_uint32 (value);
    }
  else if (g_str_equal (key, "timeout-us"))
    {
      if (!g_variant_is_of_type (value, G_VARIANT_TYPE_INT64))
        return bad (error, "“timeout-us” must be an x; it is %s", g_variant_get_type_string (value));
      request->timeout_us = g_variant_get_int64 (value);
      if (request->timeout_us < 0)
        return bad (error, "“timeout-us” is %" G_GINT64_FORMAT "; it must be 0 (none) or more", request->timeout_us);
    }
  else if (g_str_equal (key, "tenant"))
    {
      if (!g_variant_is_of_type (value, G_VARIANT_TYPE_STRING))
        return bad (error, "“tenant” must be an s; it is %s", g_variant_get_type_string (value));
      request->tenant = g_variant_dup_string (value, NULL);
    }
  else
    {
      if (!g_variant_is_of_type (value, G_VARIANT_TYPE_UINT64))
        return bad (error, "“sequence” must be a t; it is %s", g_variant_get_type_string (value));
      request->has_sequence = TRUE;
      request->sequence = g_variant_get_uint64 (value);
    }
  return TRUE;
}

static gboolean
is_input (GPtrArray *specs, const char *key)
{
  for (guint i = 0; i < specs->len; i++)
    if (g_str_equal (accel_tensor_spec_get_name (specs->pdata[i]), key))
      return TRUE;
  return FALSE;
}

/* Reads a request: its inputs checked against @input_specs (and no more
 * than @max_rows rows), its optional keys read but not yet judged (the
 * server knows its priorities and tenants). */
AccelPatternsRequest *
accel_patterns_request_parse (GVariant *message, GPtrArray *input_specs, guint max_rows, GError **error)
{
  if (message == NULL || !g_variant_is_of_type (message, G_VARIANT_TYPE_VARDICT))
    {
      bad (error, "A request is an a{sv} of inputs and options, not %s",
           message ? g_variant_get_type_string (message) : "nothing");
      return NULL;
    }

  g_autoptr(AccelPatternsRequest) request = g_new0 (AccelPatternsRequest, 1);
  request->timeout_us = -1;
  request->inputs = g_ptr_array_new_full (input_specs->len, (GDestroyNotify) g_bytes_unref);

  GVariantIter iter;
  const char *key;
  GVariant *value;
  g_variant_iter_init (&iter, message);
  while (g_variant_iter_loop (&iter, "{&sv}", &key, &value))
    {
      if (g_strv_contains (optional_keys, key))
        {
          if (!read_optional (request, key, value, error))
            {
              g_variant_unref (value);
              return NULL;
            }
        }
      else if (!is_input (input_specs, key))
        {
          GString *names = g_string_new (NULL);
          for (guint i = 0; i < input_specs->len; i++)
            g_string_append_printf (names, "%s“%s”", i ? ", " : "", accel_tensor_spec_get_name (input_specs->pdata[i]));
          bad (error, "Unknown key “%s” (inputs: %s; options: priority, timeout-us, tenant, sequence)",
               key, names->str);
          g_string_free (names, TRUE);
          g_variant_unref (value);
          return NULL;
        }
    }

  for (guint i = 0; i < input_specs->len; i++)
    {
      const AccelTensorSpec *spec = input_specs->pdata[i];
      const char *name = accel_tensor_spec_get_name (spec);
      g_autoptr(GVariant) input = g_variant_lookup_value (message, name, NULL);
      if (input == NULL)
        {
          bad (error, "Input “%s” is missing", name);
          return NULL;
        }
      guint rows = 0;
      GBytes *bytes = read_input (input, spec, &rows, error);
      if (bytes == NULL)
        return NULL;
      g_ptr_array_add (request->inputs, bytes);
      if (i > 0 && rows != request->rows)
        {
          bad (error, "Input “%s” has %u rows; input “%s” has %u", name, rows,
               accel_tensor_spec_get_name (input_specs->pdata[0]), request->rows);
          return NULL;
        }
      request->rows = rows;
    }
  if (request->rows > max_rows)
    {
      bad (error, "Input “%s” has %u rows; “max-batch-size” is %u",
           accel_tensor_spec_get_name (input_specs->pdata[0]), request->rows, max_rows);
      return NULL;
    }
  return g_steal_pointer (&request);
}

/* `(saxay)` of @rows items of @spec, over @bytes without a copy. */
GVariant *
accel_patterns_tensor_new (const AccelTensorSpec *spec, guint rows, GBytes *bytes)
{
  gint64 dims[ACCEL_SHAPE_MAX_RANK];
  guint n_item = 0;
  const gint64 *item = accel_tensor_spec_get_item_dims (spec, &n_item);
  dims[0] = rows;
  memcpy (dims + 1, item, n_item * sizeof (gint64));
  GVariant *children[3] = {
    g_variant_new_string (accel_dtype_get_name (accel_tensor_spec_get_dtype (spec))),
    g_variant_new_fixed_array (G_VARIANT_TYPE_INT64, dims, n_item + 1, sizeof (gint64)),
    g_variant_new_from_bytes (G_VARIANT_TYPE_BYTESTRING, bytes, TRUE),
  };
  return g_variant_new_tuple (children, 3);
}

/* The reply to @request, whose rows start at @first_row of @outputs (one
 * GBytes per output spec, covering the whole batch). */
GVariant *
accel_patterns_reply_new (AccelPatternsRequest *request,
                          GPtrArray *output_specs,
                          GPtrArray *outputs,
                          guint first_row,
                          const AccelPatternsReplyInfo *info)
{
  GVariantBuilder builder;
  g_variant_builder_init (&builder, G_VARIANT_TYPE_VARDICT);
  for (guint i = 0; i < output_specs->len; i++)
    {
      const AccelTensorSpec *spec = output_specs->pdata[i];
      gsize item = accel_tensor_spec_get_item_size (spec);
      g_autoptr(GBytes) rows = g_bytes_new_from_bytes (outputs->pdata[i], first_row * item, request->rows * item);
      g_variant_builder_add (&builder, "{sv}", accel_tensor_spec_get_name (spec),
                             accel_patterns_tensor_new (spec, request->rows, rows));
    }
  g_variant_builder_add (&builder, "{sv}", "model-version", g_variant_new_uint32 (info->model_version));
  g_variant_builder_add (&builder, "{sv}", "batch-size", g_variant_new_uint32 (info->batch_size));
  g_variant_builder_add (&builder, "{sv}", "queue-us", g_variant_new_int64 (info->queue_us));
  g_variant_builder_add (&builder, "{sv}", "batch", g_variant_new_uint64 (info->batch));
  if (request->has_sequence)
    g_variant_builder_add (&builder, "{sv}", "sequence", g_variant_new_uint64 (request->sequence));
  if (info->tags_key)
    g_variant_builder_add (&builder, "{sv}", info->tags_key,
                           g_variant_new_fixed_array (G_VARIANT_TYPE_UINT32, info->tags + (gsize) first_row * info->tags_per_row,
                                                      (gsize) request->rows * info->tags_per_row, sizeof (guint32)));
  return g_variant_builder_end (&builder);
}
