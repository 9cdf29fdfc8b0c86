/* op-params.c: the parameter tables of every op type: defaults, a
 * serialisation round trip with random values, values out of range refused
 * at validation and at deserialisation, the buffer slots, and the base
 * class's lane, which travels with the parameters.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include <accel.h>

static AccelSystem *sys;
static AccelDevice *dev;
static GHashTable *buffers_by_handle;   /* handle -> AccelBuffer */

static GStrv
op_type_names (void)
{
  return accel_registry_list_op_types (accel_system_get_registry (sys));
}

static AccelBuffer *
random_buffer (void)
{
  gint64 dims[2] = { g_test_rand_int_range (1, 7), g_test_rand_int_range (1, 7) };
  g_autoptr(AccelShape) shape = accel_shape_new (dims, 2);
  g_autoptr(GError) error = NULL;
  AccelBuffer *b = accel_device_alloc (dev, ACCEL_DTYPE_F32, shape, &error);
  g_assert_no_error (error);
  g_hash_table_insert (buffers_by_handle, GSIZE_TO_POINTER (accel_buffer_get_handle (b)), b);
  return b;
}

static AccelBuffer *
resolve (guint64 handle, gpointer data)
{
  AccelBuffer *b = g_hash_table_lookup (buffers_by_handle, GSIZE_TO_POINTER (handle));
  return b ? g_object_ref (b) : NULL;
}

/* A random value of @pspec's type within its range. */
static void
random_value (GParamSpec *pspec, GValue *v)
{
  g_value_init (v, pspec->value_type);
  if (G_IS_PARAM_SPEC_INT (pspec))
    {
      GParamSpecInt *s = G_PARAM_SPEC_INT (pspec);
      gint64 hi = MIN ((gint64) s->maximum, (gint64) s->minimum + 1000);
      g_value_set_int (v, (int) (s->minimum + g_test_rand_int_range (0, (int) (hi - s->minimum) + 1)));
    }
  else if (G_IS_PARAM_SPEC_UINT (pspec))
    {
      GParamSpecUInt *s = G_PARAM_SPEC_UINT (pspec);
      g_value_set_uint (v, s->minimum + (guint) g_test_rand_int_range (0, (int) MIN (s->maximum - s->minimum, 1000) + 1));
    }
  else if (G_IS_PARAM_SPEC_INT64 (pspec))
    g_value_set_int64 (v, MAX (G_PARAM_SPEC_INT64 (pspec)->minimum, 0) + g_test_rand_int_range (0, 1 << 30));
  else if (G_IS_PARAM_SPEC_UINT64 (pspec))
    g_value_set_uint64 (v, ((guint64) g_test_rand_int () << 32) | (guint32) g_test_rand_int ());
  else if (G_IS_PARAM_SPEC_DOUBLE (pspec))
    {
      GParamSpecDouble *s = G_PARAM_SPEC_DOUBLE (pspec);
      double lo = MAX (s->minimum, -1e6), hi = MIN (s->maximum, 1e6);
      g_value_set_double (v, g_test_rand_double_range (lo, hi));
    }
  else if (G_IS_PARAM_SPEC_BOOLEAN (pspec))
    g_value_set_boolean (v, g_test_rand_bit ());
  else if (G_IS_PARAM_SPEC_ENUM (pspec))
    {
      GEnumClass *ec = G_PARAM_SPEC_ENUM (pspec)->enum_class;
      g_value_set_enum (v, ec->values[g_test_rand_int_range (0, (int) ec->n_values)].value);
    }
  else if (pspec->value_type == ACCEL_TYPE_BUFFER)
    g_value_set_object (v, random_buffer ());
  else if (G_IS_PARAM_SPEC_STRING (pspec))
    g_value_take_string (v, g_strdup_printf ("s%08x/%u", g_test_rand_int (), (guint) g_test_rand_int_range (0, 100)));
  else
    g_assert_not_reached ();
}

static void
test_defaults (void)
{
  g_auto(GStrv) names = op_type_names ();
  g_assert_cmpuint (g_strv_length (names), >=, 35);
  for (guint i = 0; names[i]; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(AccelOp) op = accel_op_new_by_name (names[i], &error);
      g_assert_no_error (error);
      guint n;
      g_autofree GParamSpec **pspecs = g_object_class_list_properties (G_OBJECT_GET_CLASS (op), &n);
      for (guint j = 0; j < n; j++)
        {
          GValue v = G_VALUE_INIT;
          g_value_init (&v, pspecs[j]->value_type);
          g_object_get_property (G_OBJECT (op), pspecs[j]->name, &v);
          if (g_param_values_cmp (pspecs[j], &v, g_param_spec_get_default_value (pspecs[j])) != 0)
            g_error ("%s: property %s does not start at its default", names[i], pspecs[j]->name);
          g_value_unset (&v);
        }
    }
}

static void
test_round_trip (void)
{
  g_auto(GStrv) names = op_type_names ();
  for (guint i = 0; names[i]; i++)
    for (guint round = 0; round < 4; round++)
      {
        g_autoptr(GError) error = NULL;
        g_autoptr(AccelOp) op = accel_op_new_by_name (names[i], &error);
        g_assert_no_error (error);
        guint n;
        g_autofree GParamSpec **pspecs = g_object_class_list_properties (G_OBJECT_GET_CLASS (op), &n);
        for (guint j = 0; j < n; j++)
          {
            if (g_test_rand_bit () && pspecs[j]->value_type == ACCEL_TYPE_BUFFER)
              continue;   /* leave some buffers unset */
            if (G_IS_PARAM_SPEC_OBJECT (pspecs[j]) && pspecs[j]->value_type != ACCEL_TYPE_BUFFER)
              continue;   /* a function, a graph: not serialised by the table (see tests of launch, graph) */
            GValue v = G_VALUE_INIT;
            random_value (pspecs[j], &v);
            g_object_set_property (G_OBJECT (op), pspecs[j]->name, &v);
            g_value_unset (&v);
          }

        g_autoptr(GVariant) wire = accel_op_serialize (op);
        g_autoptr(AccelOp) back = accel_op_deserialize (wire, resolve, NULL, &error);
        g_assert_no_error (error);
        g_assert_true (G_OBJECT_TYPE (back) == G_OBJECT_TYPE (op));
        for (guint j = 0; j < n; j++)
          {
            GValue a = G_VALUE_INIT, b = G_VALUE_INIT;
            g_value_init (&a, pspecs[j]->value_type);
            g_value_init (&b, pspecs[j]->value_type);
            g_object_get_property (G_OBJECT (op), pspecs[j]->name, &a);
            g_object_get_property (G_OBJECT (back), pspecs[j]->name, &b);
            if (pspecs[j]->value_type == ACCEL_TYPE_BUFFER)
              g_assert_true (g_value_get_object (&a) == g_value_get_object (&b));
            else if (G_IS_PARAM_SPEC_DOUBLE (pspecs[j]))
              g_assert_cmpfloat (g_value_get_double (&a), ==, g_value_get_double (&b));
            else if (g_param_values_cmp (pspecs[j], &a, &b) != 0)
              g_error ("%s: property %s changed in the round trip", names[i], pspecs[j]->name);
            g_value_unset (&a);
            g_value_unset (&b);
          }
        g_autoptr(GVariant) again = accel_op_serialize (back);
        g_assert_true (g_variant_equal (wire, again));

        /* The buffer slots list what is set, with the access of the class. */
        guint slots = accel_op_get_n_buffer_slots (op), set = 0;
        for (guint s = 0; s < slots; s++)
          {
            AccelAccess access = 0;
            const char *prop = NULL;
            AccelBuffer *b = accel_op_peek_buffer_slot (op, s, &access, &prop);
            g_assert_nonnull (prop);
            g_assert_cmpint (access, ==, accel_op_class_get_buffer_access (ACCEL_OP_GET_CLASS (op), prop));
            g_assert_true (b == accel_op_peek_buffer (op, prop));
            set += b != NULL;
          }
        g_autoptr(GPtrArray) listed = accel_op_get_buffers (op, ACCEL_ACCESS_READ_WRITE);
        g_assert_cmpuint (listed->len, ==, set);
      }
}

/* A value just outside a finite bound of an int or double property is
 * stored, refused by validation with an error naming the property, and
 * refused by deserialisation. */
static void
test_out_of_range (void)
{
  g_auto(GStrv) names = op_type_names ();
  guint checked = 0;
  for (guint i = 0; names[i]; i++)
    {
      g_autoptr(AccelOp) probe = accel_op_new_by_name (names[i], NULL);
      guint n;
      g_autofree GParamSpec **pspecs = g_object_class_list_properties (G_OBJECT_GET_CLASS (probe), &n);
      for (guint j = 0; j < n; j++)
        {
          GValue bad = G_VALUE_INIT;
          if (G_IS_PARAM_SPEC_INT (pspecs[j]) && G_PARAM_SPEC_INT (pspecs[j])->minimum > G_MININT)
            {
              g_value_init (&bad, G_TYPE_INT);
              g_value_set_int (&bad, G_PARAM_SPEC_INT (pspecs[j])->minimum - g_test_rand_int_range (1, 5));
            }
          else if (G_IS_PARAM_SPEC_DOUBLE (pspecs[j]) && G_PARAM_SPEC_DOUBLE (pspecs[j])->minimum > -G_MAXDOUBLE)
            {
              g_value_init (&bad, G_TYPE_DOUBLE);
              g_value_set_double (&bad, G_PARAM_SPEC_DOUBLE (pspecs[j])->minimum - g_test_rand_double_range (0.5, 3));
            }
          else if (G_IS_PARAM_SPEC_DOUBLE (pspecs[j]) && G_PARAM_SPEC_DOUBLE (pspecs[j])->maximum == G_MAXDOUBLE)
            {
              g_value_init (&bad, G_TYPE_DOUBLE);
              g_value_set_double (&bad, g_test_rand_bit () ? INFINITY : NAN);
            }
          else
            continue;
          if (g_str_equal (pspecs[j]->name, "lane"))
            {
              g_value_unset (&bad);
              continue;   /* the base class's own property */
            }

          g_autoptr(AccelOp) op = accel_op_new_by_name (names[i], NULL);
          /* Every buffer set, so the range check is what fails. */
          for (guint k = 0; k < n; k++)
            if (pspecs[k]->value_type == ACCEL_TYPE_BUFFER)
              g_object_set (op, pspecs[k]->name, random_buffer (), NULL);
          g_object_set_property (G_OBJECT (op), pspecs[j]->name, &bad);
          g_value_unset (&bad);

          g_autoptr(GError) error = NULL;
          g_assert_false (accel_op_validate (op, &error));
          g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
          g_autofree char *quoted = g_strdup_printf ("“%s”", pspecs[j]->name);
          if (strstr (error->message, quoted) == NULL)
            g_error ("%s: the error for %s does not name it: %s", names[i], pspecs[j]->name, error->message);
          g_clear_error (&error);

          g_autoptr(GVariant) wire = accel_op_serialize (op);
          g_autoptr(AccelOp) back = accel_op_deserialize (wire, resolve, NULL, &error);
          g_assert_null (back);
          g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
          g_assert_nonnull (strstr (error->message, quoted));
          checked++;
        }
    }
  g_assert_cmpuint (checked, >=, 40);
}

/* An enum value outside its type is an error at validation too. */
static void
test_bad_enum (void)
{
  g_autoptr(AccelOp) op = accel_op_new_by_name ("gemm", NULL);
  for (guint i = 0; i < 3; i++)
    g_object_set (op, (const char *[]) { "a", "b", "c" }[i], random_buffer (), NULL);
  ACCEL_GEMM (op)->compute = 77;
  g_autoptr(GError) error = NULL;
  g_assert_false (accel_op_validate (op, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "“compute”"));
}

static void
count_notify (GObject *object, GParamSpec *pspec, gpointer data)
{
  (*(guint *) data)++;
}

/* accel_op_set_lane() notifies where the lane changes (a device host is
 * sent an op's kept bytes until a property notifies), and the lane is in
 * the serialised op and read back from it. */
static void
test_lane (void)
{
  g_autoptr(AccelOp) op = accel_op_new_by_name ("scal", NULL);
  guint notified = 0;
  g_signal_connect (op, "notify::lane", G_CALLBACK (count_notify), &notified);
  int lane = g_test_rand_int_range (0, 1025);
  accel_op_set_lane (op, lane);
  g_assert_cmpuint (notified, ==, 1);
  accel_op_set_lane (op, lane);
  g_assert_cmpuint (notified, ==, 1);

  g_autoptr(GVariant) sent = accel_op_serialize (op);
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelOp) back = accel_op_deserialize (sent, resolve, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (accel_op_get_lane (back), ==, lane);

  accel_op_set_lane (op, -1);
  g_assert_cmpuint (notified, ==, 2);
  g_autoptr(GVariant) again = accel_op_serialize (op);
  g_assert_false (g_variant_equal (sent, again));
  g_autoptr(AccelOp) any = accel_op_deserialize (again, resolve, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (accel_op_get_lane (any), ==, -1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_autoptr(GError) error = NULL;
  sys = accel_system_new (&error);
  g_assert_no_error (error);
  dev = accel_system_get_device (sys, "cpu:0", &error);
  g_assert_no_error (error);
  buffers_by_handle = g_hash_table_new_full (NULL, NULL, NULL, g_object_unref);

  g_test_add_func ("/op-params/defaults", test_defaults);
  g_test_add_func ("/op-params/round-trip", test_round_trip);
  g_test_add_func ("/op-params/out-of-range", test_out_of_range);
  g_test_add_func ("/op-params/bad-enum", test_bad_enum);
  g_test_add_func ("/op-params/lane", test_lane);
  int rc = g_test_run ();
  g_hash_table_unref (buffers_by_handle);
  g_object_unref (dev);
  g_object_unref (sys);
  return rc;
}
