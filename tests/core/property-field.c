/* Properties declared by a table of fields (AccelPropertyField): the pspecs
 * are those g_param_spec_*() makes from the same arguments, get and set
 * reach the fields (of the instance and of the private struct) or the
 * accessor entries' functions, notify follows GObject's rules, the
 * class's own accessors serve its other properties (and a subclass's),
 * what the fields own is released, and locked fields are read and written
 * under their mutex.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <accel.h>
#include <string.h>

/* A base class with every kind of field in its instance, and one property
 * of its own written by hand. */

#define TEST_TYPE_FIELDS (test_fields_get_type ())
GType test_fields_get_type (void);

typedef struct {
  GObjectClass parent_class;
} TestFieldsClass;

typedef struct {
  GObject parent_instance;
  gboolean flag;
  int i;
  guint u;
  gint64 i64;
  guint64 u64;
  double d;
  AccelDType dtype;
  GApplicationFlags pflags;
  char *s;
  GObject *object;
  GListModel *list;
  char **strv;
  GVariant *variant;
  guint hand;   /* the hand-written property: twice what was set */
} TestFields;

typedef struct {
  guint deep;
  char *label;
} TestFieldsPrivate;

#define CONSTRUCT (G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS)
#define RW (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS)
#define RW_EXPLICIT (RW | G_PARAM_EXPLICIT_NOTIFY)

static const AccelPropertyField instance_fields[] = {
  ACCEL_FIELD_BOOLEAN (TestFields, flag, "flag", "A boolean", TRUE, RW),
  ACCEL_FIELD_INT (TestFields, i, "i", "An int", -1000, 1000, -7, RW),
  ACCEL_FIELD_UINT (TestFields, u, "u", "A uint", 3, 1 << 20, 32, RW_EXPLICIT),
  ACCEL_FIELD_INT64 (TestFields, i64, "i64", "An int64", G_MININT64, G_MAXINT64, -5, RW),
  ACCEL_FIELD_UINT64 (TestFields, u64, "u64", "A uint64", 0, G_MAXUINT64, G_MAXUINT64, RW_EXPLICIT),
  ACCEL_FIELD_DOUBLE (TestFields, d, "d", "A double", -G_MAXDOUBLE, G_MAXDOUBLE, 0.5, RW),
  ACCEL_FIELD_ENUM (TestFields, dtype, "dtype", "An enum", accel_dtype_get_type, ACCEL_DTYPE_F16, RW),
  ACCEL_FIELD_FLAGS (TestFields, pflags, "pflags", "Flags", g_application_flags_get_type, G_APPLICATION_NON_UNIQUE, RW),
  ACCEL_FIELD_STRING (TestFields, s, "s", "A string", "default", CONSTRUCT),
  ACCEL_FIELD_OBJECT (TestFields, object, "object", "An object", g_object_get_type, RW_EXPLICIT),
  ACCEL_FIELD_OBJECT (TestFields, list, "list", "An interface", g_list_model_get_type, RW),
  ACCEL_FIELD_BOXED (TestFields, strv, "strv", "A boxed", g_strv_get_type, RW),
  ACCEL_FIELD_VARIANT (TestFields, variant, "variant", "A variant", "at", RW_EXPLICIT),
};

enum { PROP_HAND = G_N_ELEMENTS (instance_fields) + 1 };

G_DEFINE_TYPE_WITH_PRIVATE (TestFields, test_fields, G_TYPE_OBJECT)

static const AccelPropertyField private_fields[] = {
  ACCEL_FIELD_UINT (TestFieldsPrivate, deep, "deep", "A private uint", 0, 99, 9, CONSTRUCT),
  ACCEL_FIELD_STRING (TestFieldsPrivate, label, "label", "A private string", NULL, RW),
};

static void
test_fields_set_hand (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  g_assert_cmpuint (prop_id, ==, PROP_HAND);
  ((TestFields *) object)->hand = 2 * g_value_get_uint (value);
}

static void
test_fields_get_hand (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  g_assert_cmpuint (prop_id, ==, PROP_HAND);
  g_value_set_uint (value, ((TestFields *) object)->hand);
}

static void
test_fields_dispose (GObject *object)
{
  accel_object_dispose_fields (object, TEST_TYPE_FIELDS);
  G_OBJECT_CLASS (test_fields_parent_class)->dispose (object);
}

static void
test_fields_finalize (GObject *object)
{
  accel_object_finalize_fields (object, TEST_TYPE_FIELDS);
  G_OBJECT_CLASS (test_fields_parent_class)->finalize (object);
}

static void
test_fields_class_init (TestFieldsClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = test_fields_dispose;
  object_class->finalize = test_fields_finalize;
  object_class->set_property = test_fields_set_hand;
  object_class->get_property = test_fields_get_hand;
  accel_object_class_install_fields (object_class, instance_fields, G_N_ELEMENTS (instance_fields));
  g_object_class_install_property (object_class, PROP_HAND,
                                   g_param_spec_uint ("hand", NULL, "By hand", 0, G_MAXUINT, 0, RW));
  accel_object_class_install_private_fields (object_class, private_fields, G_N_ELEMENTS (private_fields));
}

static void
test_fields_init (TestFields *self)
{
  TestFields *f = self;
  f->flag = TRUE, f->i = -7, f->u = 32, f->i64 = -5, f->u64 = G_MAXUINT64, f->d = 0.5;
  f->dtype = ACCEL_DTYPE_F16, f->pflags = G_APPLICATION_NON_UNIQUE;
}

/* A subclass that installs a property by hand and chains its accessors up
 * to the base class's (GObject does not inherit them): the base's table
 * still serves the base's properties, and the base's hand-written accessors
 * the subclass's. */
#define TEST_TYPE_SUB (test_sub_get_type ())
GType test_sub_get_type (void);
typedef struct {
  TestFields parent_instance;
} TestSub;
typedef struct {
  TestFieldsClass parent_class;
} TestSubClass;
G_DEFINE_FINAL_TYPE (TestSub, test_sub, TEST_TYPE_FIELDS)

static void
test_sub_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  G_OBJECT_CLASS (test_sub_parent_class)->set_property (object, prop_id, value, pspec);
}

static void
test_sub_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  G_OBJECT_CLASS (test_sub_parent_class)->get_property (object, prop_id, value, pspec);
}

static void
test_sub_class_init (TestSubClass *klass)
{
  G_OBJECT_CLASS (klass)->set_property = test_sub_set_property;
  G_OBJECT_CLASS (klass)->get_property = test_sub_get_property;
  g_object_class_install_property (G_OBJECT_CLASS (klass), PROP_HAND,
                                   g_param_spec_uint ("sub-hand", NULL, "By hand, on the subclass",
                                                      0, G_MAXUINT, 0, RW));
}

static void
test_sub_init (TestSub *self)
{
}

/* The pspecs: what g_param_spec_*() makes from the same arguments. */

static void
assert_same_pspec (GParamSpec *got, GParamSpec *want)
{
  g_assert_cmpstr (got->name, ==, want->name);
  g_assert_cmpstr (g_param_spec_get_nick (got), ==, g_param_spec_get_nick (want));
  g_assert_cmpstr (g_param_spec_get_blurb (got), ==, g_param_spec_get_blurb (want));
  g_assert_cmpstr (G_PARAM_SPEC_TYPE_NAME (got), ==, G_PARAM_SPEC_TYPE_NAME (want));
  g_assert_true (got->value_type == want->value_type);
  g_assert_cmpint (got->flags, ==, want->flags);

  GValue a = G_VALUE_INIT, b = G_VALUE_INIT;
  g_value_init (&a, got->value_type);
  g_value_init (&b, want->value_type);
  g_param_value_set_default (got, &a);
  g_param_value_set_default (want, &b);
  g_assert_cmpint (g_param_values_cmp (got, &a, &b), ==, 0);
  g_value_unset (&a);
  g_value_unset (&b);

  /* Ranges: the values just out of range are refused alike. */
#define RANGE(T) \
  if (G_IS_PARAM_SPEC_##T (got)) \
    { \
      g_assert_true (G_PARAM_SPEC_##T (got)->minimum == G_PARAM_SPEC_##T (want)->minimum); \
      g_assert_true (G_PARAM_SPEC_##T (got)->maximum == G_PARAM_SPEC_##T (want)->maximum); \
    }
  RANGE (INT) RANGE (UINT) RANGE (INT64) RANGE (UINT64) RANGE (DOUBLE)
#undef RANGE
  if (G_IS_PARAM_SPEC_DOUBLE (got))
    g_assert_cmpfloat (G_PARAM_SPEC_DOUBLE (got)->epsilon, ==, G_PARAM_SPEC_DOUBLE (want)->epsilon);
  if (G_IS_PARAM_SPEC_VARIANT (got))
    g_assert_true (g_variant_type_equal (G_PARAM_SPEC_VARIANT (got)->type, G_PARAM_SPEC_VARIANT (want)->type));
  g_param_spec_unref (g_param_spec_ref_sink (want));
}

static void
test_pspecs (void)
{
  GObjectClass *klass = g_type_class_ref (TEST_TYPE_FIELDS);
#define P(name) g_object_class_find_property (klass, name)
  assert_same_pspec (P ("flag"), g_param_spec_boolean ("flag", NULL, "A boolean", TRUE, RW));
  assert_same_pspec (P ("i"), g_param_spec_int ("i", NULL, "An int", -1000, 1000, -7, RW));
  assert_same_pspec (P ("u"), g_param_spec_uint ("u", NULL, "A uint", 3, 1 << 20, 32, RW_EXPLICIT));
  assert_same_pspec (P ("i64"), g_param_spec_int64 ("i64", NULL, "An int64", G_MININT64, G_MAXINT64, -5, RW));
  assert_same_pspec (P ("u64"), g_param_spec_uint64 ("u64", NULL, "A uint64", 0, G_MAXUINT64, G_MAXUINT64,
                                                     RW_EXPLICIT));
  assert_same_pspec (P ("d"), g_param_spec_double ("d", NULL, "A double", -G_MAXDOUBLE, G_MAXDOUBLE, 0.5, RW));
  assert_same_pspec (P ("dtype"), g_param_spec_enum ("dtype", NULL, "An enum", ACCEL_TYPE_DTYPE,
                                                     ACCEL_DTYPE_F16, RW));
  assert_same_pspec (P ("pflags"), g_param_spec_flags ("pflags", NULL, "Flags", G_TYPE_APPLICATION_FLAGS,
                                                       G_APPLICATION_NON_UNIQUE, RW));
  assert_same_pspec (P ("s"), g_param_spec_string ("s", NULL, "A string", "default", CONSTRUCT));
  assert_same_pspec (P ("object"), g_param_spec_object ("object", NULL, "An object", G_TYPE_OBJECT, RW_EXPLICIT));
  assert_same_pspec (P ("list"), g_param_spec_object ("list", NULL, "An interface", G_TYPE_LIST_MODEL, RW));
  assert_same_pspec (P ("strv"), g_param_spec_boxed ("strv", NULL, "A boxed", G_TYPE_STRV, RW));
  assert_same_pspec (P ("variant"), g_param_spec_variant ("variant", NULL, "A variant", G_VARIANT_TYPE ("at"),
                                                          NULL, RW_EXPLICIT));
  assert_same_pspec (P ("deep"), g_param_spec_uint ("deep", NULL, "A private uint", 0, 99, 9, CONSTRUCT));
  assert_same_pspec (P ("label"), g_param_spec_string ("label", NULL, "A private string", NULL, RW));
#undef P

  /* Ids in the table's order, the hand-written one where its id says, the
   * private table after it. */
  guint n;
  GParamSpec **pspecs = g_object_class_list_properties (klass, &n);
  g_assert_cmpuint (n, ==, G_N_ELEMENTS (instance_fields) + 1 + G_N_ELEMENTS (private_fields));
  for (guint i = 0; i < G_N_ELEMENTS (instance_fields); i++)
    {
      g_assert_cmpstr (pspecs[i]->name, ==, instance_fields[i].name);
      g_assert_cmpuint (pspecs[i]->param_id, ==, i + 1);
    }
  g_assert_cmpstr (pspecs[G_N_ELEMENTS (instance_fields)]->name, ==, "hand");
  g_assert_cmpstr (pspecs[n - 2]->name, ==, "deep");
  g_assert_cmpstr (pspecs[n - 1]->name, ==, "label");
  g_free (pspecs);
  g_type_class_unref (klass);
}

/* Get and set reach the fields. */

static void
count_notify (GObject *object, GParamSpec *pspec, gpointer data)
{
  guint *counts = data;
  counts[pspec->param_id]++;
}

static void
test_get_set (void)
{
  guint32 r = g_test_rand_int ();
  int i = g_test_rand_int_range (-1000, 1001);
  guint u = (guint) g_test_rand_int_range (3, (1 << 20) + 1);
  gint64 i64 = (gint64) (((guint64) (guint32) g_test_rand_int () << 32) | r);
  guint64 u64 = ((guint64) g_test_rand_int () << 32) | g_test_rand_int ();
  double d = g_test_rand_double_range (-1e6, 1e6);
  char *s = g_strdup_printf ("s-%u", r);
  char *label = g_strdup_printf ("label-%u", g_test_rand_int ());
  guint deep = (guint) g_test_rand_int_range (0, 100);
  guint hand = (guint) g_test_rand_int_range (0, 1 << 30);
  const char *strv[] = { s, label, NULL };
  guint64 sizes[] = { u64, r, 7 };
  g_autoptr(GVariant) variant = g_variant_ref_sink (g_variant_new_fixed_array (G_VARIANT_TYPE_UINT64, sizes,
                                                                              G_N_ELEMENTS (sizes), sizeof (guint64)));
  g_autoptr(GObject) other = g_object_new (G_TYPE_OBJECT, NULL);
  g_autoptr(GListStore) list = g_list_store_new (G_TYPE_OBJECT);

  TestFields *self = g_object_new (TEST_TYPE_FIELDS, "s", s, "deep", deep, NULL);
  TestFields *f = self;
  TestFieldsPrivate *priv = test_fields_get_instance_private (self);

  /* Defaults: of construct properties from the pspec, of the others from init. */
  g_assert_cmpstr (f->s, ==, s);
  g_assert_true (f->s != s);
  g_assert_cmpuint (priv->deep, ==, deep);
  g_object_set (self, "i", i, "u", u, "i64", i64, "u64", u64, "d", d, "dtype", ACCEL_DTYPE_BF16,
                "pflags", G_APPLICATION_IS_SERVICE | G_APPLICATION_HANDLES_OPEN, "flag", FALSE, "object", other,
                "list", list, "strv", strv, "variant", variant, "label", label, "hand", hand, NULL);
  g_assert_cmpint (f->i, ==, i);
  g_assert_cmpuint (f->u, ==, u);
  g_assert_cmpint (f->i64, ==, i64);
  g_assert_cmpuint (f->u64, ==, u64);
  g_assert_cmpfloat (f->d, ==, d);
  g_assert_cmpint (f->dtype, ==, ACCEL_DTYPE_BF16);
  g_assert_cmpint (f->pflags, ==, G_APPLICATION_IS_SERVICE | G_APPLICATION_HANDLES_OPEN);
  g_assert_false (f->flag);
  g_assert_true (f->object == other);
  g_assert_true (f->list == G_LIST_MODEL (list));
  g_assert_true (g_strv_equal ((const char * const *) f->strv, strv));
  g_assert_true ((gpointer) f->strv != (gpointer) strv);
  g_assert_true (g_variant_equal (f->variant, variant));
  g_assert_cmpstr (priv->label, ==, label);
  g_assert_true (priv->label != label);
  g_assert_cmpuint (f->hand, ==, 2 * hand);

  int gi;
  guint gu, gdeep, ghand;
  gint64 gi64;
  guint64 gu64;
  double gd;
  AccelDType gdtype;
  gboolean gflag;
  g_autofree char *gs = NULL, *glabel = NULL;
  g_autoptr(GObject) gobject = NULL;
  g_auto(GStrv) gstrv = NULL;
  g_autoptr(GVariant) gvariant = NULL;
  g_object_get (self, "i", &gi, "u", &gu, "i64", &gi64, "u64", &gu64, "d", &gd, "dtype", &gdtype,
                "flag", &gflag, "s", &gs, "object", &gobject, "strv", &gstrv, "variant", &gvariant,
                "deep", &gdeep, "label", &glabel, "hand", &ghand, NULL);
  g_assert_cmpint (gi, ==, i);
  g_assert_cmpuint (gu, ==, u);
  g_assert_cmpint (gi64, ==, i64);
  g_assert_cmpuint (gu64, ==, u64);
  g_assert_cmpfloat (gd, ==, d);
  g_assert_cmpint (gdtype, ==, ACCEL_DTYPE_BF16);
  g_assert_false (gflag);
  g_assert_cmpstr (gs, ==, s);
  g_assert_true (gobject == other);
  g_assert_true (g_strv_equal ((const char * const *) gstrv, strv));
  g_assert_true (g_variant_equal (gvariant, variant));
  g_assert_cmpuint (gdeep, ==, deep);
  g_assert_cmpstr (glabel, ==, label);
  g_assert_cmpuint (ghand, ==, 2 * hand);

  /* A subclass's instance: its own property by hand, the base's from the table. */
  TestSub *sub = g_object_new (TEST_TYPE_SUB, "sub-hand", hand, "u", u, NULL);
  guint sub_hand;
  g_object_get (sub, "sub-hand", &sub_hand, NULL);
  g_assert_cmpuint (sub_hand, ==, 2 * hand);
  g_assert_cmpuint (((TestFields *) sub)->u, ==, u);
  g_object_unref (sub);

  /* What the fields own goes with the object: the reference to @other
   * in dispose, the rest in finalize (LeakSanitizer checks those). */
  g_clear_object (&gobject);
  g_object_add_weak_pointer (G_OBJECT (self), (gpointer *) &self);
  g_object_unref (self);
  g_assert_null (self);
  g_assert_cmpuint (G_OBJECT (other)->ref_count, ==, 1);
  g_assert_cmpuint (G_OBJECT (list)->ref_count, ==, 1);
  g_free (s);
  g_free (label);
}

/* Notify: every set of a plain property; a set of an explicit-notify one
 * only when the value changed. */
static void
test_notify (void)
{
  guint counts[32] = { 0 };
  TestFields *self = g_object_new (TEST_TYPE_FIELDS, NULL);
  g_signal_connect (self, "notify", G_CALLBACK (count_notify), counts);
  int i = g_test_rand_int_range (-1000, 1001);
  guint u = (guint) g_test_rand_int_range (3, 1 << 20);
  g_autoptr(GObject) other = g_object_new (G_TYPE_OBJECT, NULL);

  for (int round = 0; round < 2; round++)
    g_object_set (self, "i", i, "u", u, "object", other, NULL);
  g_assert_cmpuint (counts[2], ==, 2);   /* i */
  g_assert_cmpuint (counts[3], ==, 1);   /* u */
  g_assert_cmpuint (counts[10], ==, 1);  /* object */
  g_object_set (self, "u", u + 1, "object", NULL, NULL);
  g_assert_cmpuint (counts[3], ==, 2);
  g_assert_cmpuint (counts[10], ==, 2);
  g_assert_null (((TestFields *) self)->object);
  g_object_unref (self);
}

/* Accessor entries: properties read and written through the class's
 * functions (computed, or kept elsewhere than a field), beside a field. */

#define TEST_TYPE_ACCESSORS (test_accessors_get_type ())
GType test_accessors_get_type (void);

typedef struct {
  GObjectClass parent_class;
} TestAccessorsClass;

typedef struct {
  GObject parent_instance;
  int lane;            /* kept negated, so only the accessors read it right */
  guint timeout;       /* atomic */
  guint sets;          /* calls of the setters */
  gsize size;
  AccelDType dtype;
  char name[32];
  guint plain;         /* a field of the table */
} TestAccessors;

G_DEFINE_FINAL_TYPE (TestAccessors, test_accessors, G_TYPE_OBJECT)

static GParamSpec *accessors_timeout_pspec;

static int
test_accessors_get_lane (TestAccessors *self)
{
  return -self->lane;
}

static void
test_accessors_set_lane (TestAccessors *self, int lane)
{
  self->sets++;
  self->lane = -lane;
}

static guint
test_accessors_get_timeout (TestAccessors *self)
{
  return (guint) g_atomic_int_get (&self->timeout);
}

/* Notifies itself, on a change only (explicit notify). */
static void
test_accessors_set_timeout (TestAccessors *self, guint timeout)
{
  self->sets++;
  if ((guint) g_atomic_int_get (&self->timeout) == timeout)
    return;
  g_atomic_int_set (&self->timeout, timeout);
  g_object_notify_by_pspec (G_OBJECT (self), accessors_timeout_pspec);
}

static gsize
test_accessors_get_bytes (TestAccessors *self)
{
  return 3 * self->size;
}

static void
test_accessors_set_bytes (TestAccessors *self, guint64 bytes)
{
  self->sets++;
  self->size = bytes / 3;
}

static AccelDType
test_accessors_get_dtype (TestAccessors *self)
{
  return self->dtype;
}

static const char *
test_accessors_get_name (TestAccessors *self)
{
  return self->name[0] ? self->name : NULL;
}

/* A new floating reference at each call. */
static GVariant *
test_accessors_get_info (TestAccessors *self)
{
  GVariantDict dict;
  g_variant_dict_init (&dict, NULL);
  g_variant_dict_insert (&dict, "size", "t", (guint64) self->size);
  g_variant_dict_insert (&dict, "name", "s", self->name);
  return g_variant_dict_end (&dict);
}

static const AccelPropertyField accessor_fields[] = {
  ACCEL_ACCESSOR_INT (TestAccessors, test_accessors_get_lane, test_accessors_set_lane, "lane", "An int",
                      -1, 1024, 5, CONSTRUCT),
  ACCEL_ACCESSOR_UINT (TestAccessors, test_accessors_get_timeout, test_accessors_set_timeout, "timeout", "A uint",
                       0, G_MAXUINT, 60000, RW_EXPLICIT | G_PARAM_CONSTRUCT),
  ACCEL_FIELD_UINT (TestAccessors, plain, "plain", "A field", 0, 100, 0, RW),
  ACCEL_ACCESSOR_UINT64 (TestAccessors, test_accessors_get_bytes, test_accessors_set_bytes, "bytes",
                         "A computed uint64", 0, G_MAXUINT64, 0, RW),
  ACCEL_ACCESSOR_ENUM (TestAccessors, test_accessors_get_dtype, "dtype", "A computed enum", accel_dtype_get_type,
                       ACCEL_DTYPE_F64, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY),
  ACCEL_ACCESSOR_STRING (TestAccessors, test_accessors_get_name, "name", "A computed string", "none",
                         G_PARAM_READABLE),
  ACCEL_ACCESSOR_VARIANT (TestAccessors, test_accessors_get_info, "info", "A computed variant", "a{sv}",
                          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS),
};

static void
test_accessors_finalize (GObject *object)
{
  /* Frees the field entries' values only: the accessors' are not the
   * object's fields. */
  accel_object_finalize_fields (object, TEST_TYPE_ACCESSORS);
  G_OBJECT_CLASS (test_accessors_parent_class)->finalize (object);
}

static void
test_accessors_class_init (TestAccessorsClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = test_accessors_finalize;
  accel_object_class_install_fields (object_class, accessor_fields, G_N_ELEMENTS (accessor_fields));
  accessors_timeout_pspec = g_object_class_find_property (object_class, "timeout");
}

static void
test_accessors_init (TestAccessors *self)
{
}

static void
test_accessor_pspecs (void)
{
  GObjectClass *klass = g_type_class_ref (TEST_TYPE_ACCESSORS);
#define P(name) g_object_class_find_property (klass, name)
  assert_same_pspec (P ("lane"), g_param_spec_int ("lane", NULL, "An int", -1, 1024, 5, CONSTRUCT));
  assert_same_pspec (P ("timeout"), g_param_spec_uint ("timeout", NULL, "A uint", 0, G_MAXUINT, 60000,
                                                       RW_EXPLICIT | G_PARAM_CONSTRUCT));
  assert_same_pspec (P ("plain"), g_param_spec_uint ("plain", NULL, "A field", 0, 100, 0, RW));
  assert_same_pspec (P ("bytes"), g_param_spec_uint64 ("bytes", NULL, "A computed uint64", 0, G_MAXUINT64, 0, RW));
  assert_same_pspec (P ("dtype"), g_param_spec_enum ("dtype", NULL, "A computed enum", ACCEL_TYPE_DTYPE,
                                                     ACCEL_DTYPE_F64,
                                                     G_PARAM_READABLE | G_PARAM_STATIC_STRINGS
                                                       | G_PARAM_EXPLICIT_NOTIFY));
  assert_same_pspec (P ("name"), g_param_spec_string ("name", NULL, "A computed string", "none", G_PARAM_READABLE));
  assert_same_pspec (P ("info"), g_param_spec_variant ("info", NULL, "A computed variant", G_VARIANT_TYPE_VARDICT,
                                                       NULL, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
#undef P
  guint n;
  GParamSpec **pspecs = g_object_class_list_properties (klass, &n);
  g_assert_cmpuint (n, ==, G_N_ELEMENTS (accessor_fields));
  for (guint i = 0; i < n; i++)
    {
      g_assert_cmpstr (pspecs[i]->name, ==, accessor_fields[i].name);
      g_assert_cmpuint (pspecs[i]->param_id, ==, i + 1);
    }
  g_free (pspecs);
  g_type_class_unref (klass);
}

/* Get calls the getter, set the setter (construct properties too); the
 * setter of an explicit-notify property notifies, GObject the others. */
static void
test_accessor_get_set (void)
{
  guint counts[32] = { 0 };
  int lane = g_test_rand_int_range (-1, 1025);
  guint timeout = (guint) g_test_rand_int ();
  guint plain = (guint) g_test_rand_int_range (0, 101);
  gsize size = (gsize) g_test_rand_int () << 8 | 0x5;

  TestAccessors *self = g_object_new (TEST_TYPE_ACCESSORS, "lane", lane, NULL);
  g_assert_cmpint (self->lane, ==, -lane);
  g_assert_cmpuint (self->timeout, ==, 60000);   /* the default, through the setter */
  g_assert_cmpuint (self->sets, ==, 2);
  self->size = size;
  self->dtype = ACCEL_DTYPE_BF16;
  g_snprintf (self->name, sizeof self->name, "n-%u", timeout);

  g_signal_connect (self, "notify", G_CALLBACK (count_notify), counts);
  for (int round = 0; round < 2; round++)
    g_object_set (self, "timeout", timeout, "plain", plain, NULL);
  g_assert_cmpuint (self->timeout, ==, timeout);
  g_assert_cmpuint (self->plain, ==, plain);
  g_assert_cmpuint (self->sets, ==, 4);
  g_assert_cmpuint (counts[2], ==, timeout == 60000 ? 0 : 1);   /* timeout: by its setter, on a change */
  g_assert_cmpuint (counts[3], ==, 2);                          /* plain: by GObject */

  int glane;
  guint gtimeout, gplain;
  guint64 gbytes;
  AccelDType gdtype;
  g_autofree char *gname = NULL;
  g_autoptr(GVariant) ginfo = NULL;
  g_object_get (self, "lane", &glane, "timeout", &gtimeout, "plain", &gplain, "bytes", &gbytes, "dtype", &gdtype,
                "name", &gname, "info", &ginfo, NULL);
  g_assert_cmpint (glane, ==, lane);
  g_assert_cmpuint (gtimeout, ==, timeout);
  g_assert_cmpuint (gplain, ==, plain);
  g_assert_cmpuint (gbytes, ==, (guint64) 3 * size);
  g_assert_cmpint (gdtype, ==, ACCEL_DTYPE_BF16);
  g_assert_cmpstr (gname, ==, self->name);
  g_assert_true (gname != self->name);
  g_assert_false (g_variant_is_floating (ginfo));
  guint64 isize = 0;
  g_assert_true (g_variant_lookup (ginfo, "size", "t", &isize));
  g_assert_cmpuint (isize, ==, size);

  /* A 64-bit value through the setter, beyond 32 bits. */
  guint64 bytes = 3 * (((guint64) (guint32) g_test_rand_int () << 20) | 0x7);
  g_object_set (self, "bytes", bytes, NULL);
  g_assert_cmpuint (self->sets, ==, 5);
  g_assert_cmpuint (self->size, ==, bytes / 3);
  g_object_get (self, "bytes", &gbytes, NULL);
  g_assert_cmpuint (gbytes, ==, bytes);

  /* A NULL from a string getter. */
  self->name[0] = '\0';
  g_clear_pointer (&gname, g_free);
  g_object_get (self, "name", &gname, NULL);
  g_assert_null (gname);
  g_object_unref (self);
}

/* Locked fields: a class whose fields another thread writes under a mutex
 * (of the instance, and of the private struct). A boxed field whose copy
 * function checks the mutex shows that get and set hold it; notify comes
 * after it is let go. */

#define TEST_TYPE_LOCKED (test_locked_get_type ())
GType test_locked_get_type (void);
typedef struct {
  GObject parent_instance;
  GMutex lock;
  guint64 count;
  guint level;
  gpointer probe;     /* a Probe */
} TestLocked;
typedef struct {
  GObjectClass parent_class;
} TestLockedClass;
typedef struct {
  GMutex lock;
  double mean;
} TestLockedPrivate;

/* A boxed value that counts its copies made with its mutex held (GObject
 * copies it too, outside). */
typedef struct {
  GMutex *lock;
  guint value;
  guint *held_copies;
} Probe;

static gpointer
probe_copy (gpointer data)
{
  Probe *probe = data;
  if (g_mutex_trylock (probe->lock))
    g_mutex_unlock (probe->lock);
  else
    (*probe->held_copies)++;
  return g_memdup2 (probe, sizeof (Probe));
}

G_DEFINE_BOXED_TYPE (Probe, probe, probe_copy, g_free)
G_DEFINE_FINAL_TYPE_WITH_PRIVATE (TestLocked, test_locked, G_TYPE_OBJECT)

static const AccelPropertyField locked_fields[] = {
  ACCEL_FIELD_UINT64 (TestLocked, count, "count", "A counter", 0, G_MAXUINT64, 0,
                      G_PARAM_READABLE | G_PARAM_STATIC_STRINGS),
  ACCEL_FIELD_UINT (TestLocked, level, "level", "A level", 0, 1000, 0, RW_EXPLICIT),
  ACCEL_FIELD_BOXED (TestLocked, probe, "probe", "A probe of the lock", probe_get_type, RW),
};

static const AccelPropertyField locked_private_fields[] = {
  ACCEL_FIELD_DOUBLE (TestLockedPrivate, mean, "mean", "A private mean", 0, 1, 0,
                      G_PARAM_READABLE | G_PARAM_STATIC_STRINGS),
};

static void
test_locked_finalize (GObject *object)
{
  TestLocked *self = (TestLocked *) object;
  TestLockedPrivate *priv = test_locked_get_instance_private (self);
  accel_object_finalize_fields (object, TEST_TYPE_LOCKED);
  g_mutex_clear (&self->lock);
  g_mutex_clear (&priv->lock);
  G_OBJECT_CLASS (test_locked_parent_class)->finalize (object);
}

static void
test_locked_class_init (TestLockedClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = test_locked_finalize;
  accel_object_class_install_locked_fields (object_class, locked_fields, G_N_ELEMENTS (locked_fields),
                                            G_STRUCT_OFFSET (TestLocked, lock));
  accel_object_class_install_private_locked_fields (object_class, locked_private_fields,
                                                    G_N_ELEMENTS (locked_private_fields),
                                                    G_STRUCT_OFFSET (TestLockedPrivate, lock));
}

static void
test_locked_init (TestLocked *self)
{
  g_mutex_init (&self->lock);
  g_mutex_init (&((TestLockedPrivate *) test_locked_get_instance_private (self))->lock);
}

typedef struct {
  TestLocked *self;
  guint64 rounds;
} Writer;

static gpointer
write_counts (gpointer data)
{
  Writer *writer = data;
  TestLockedPrivate *priv = test_locked_get_instance_private (writer->self);
  for (guint64 i = 0; i < writer->rounds; i++)
    {
      g_mutex_lock (&writer->self->lock);
      writer->self->count++;
      g_mutex_unlock (&writer->self->lock);
      g_mutex_lock (&priv->lock);
      priv->mean = (double) (i + 1) / (double) writer->rounds;
      g_mutex_unlock (&priv->lock);
    }
  return NULL;
}

static void
check_unlocked (GObject *object, GParamSpec *pspec, gpointer data)
{
  TestLocked *self = (TestLocked *) object;
  g_assert_true (g_mutex_trylock (&self->lock));
  g_mutex_unlock (&self->lock);
  (*(guint *) data)++;
}

static void
test_locked (void)
{
  TestLocked *self = g_object_new (TEST_TYPE_LOCKED, NULL);
  GObjectClass *klass = G_OBJECT_GET_CLASS (self);
  g_assert_true (g_object_class_find_property (klass, "count")->flags == (G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_assert_nonnull (g_object_class_find_property (klass, "mean"));

  /* Reads while another thread counts: each read is a value it wrote, and
   * never goes back. */
  Writer writer = { self, 20000 + g_test_rand_int_range (0, 10000) };
  GThread *thread = g_thread_new ("writer", write_counts, &writer);
  guint64 last = 0;
  double last_mean = 0;
  for (int i = 0; i < 2000; i++)
    {
      guint64 count;
      double mean;
      g_object_get (self, "count", &count, "mean", &mean, NULL);
      g_assert_cmpuint (count, >=, last);
      g_assert_cmpuint (count, <=, writer.rounds);
      g_assert_cmpfloat (mean, >=, last_mean);
      g_assert_cmpfloat (mean, <=, 1.0);
      last = count, last_mean = mean;
    }
  g_thread_join (thread);
  guint64 count;
  double mean;
  g_object_get (self, "count", &count, "mean", &mean, NULL);
  g_assert_cmpuint (count, ==, writer.rounds);
  g_assert_cmpfloat (mean, ==, 1.0);

  /* Set and get of a boxed value copy it with the lock held; a change is
   * notified with it let go, an explicit-notify one only when it changed. */
  guint notified = 0;
  g_signal_connect (self, "notify", G_CALLBACK (check_unlocked), &notified);
  guint held_copies = 0;
  Probe probe = { &self->lock, g_test_rand_int (), &held_copies };
  g_object_set (self, "probe", &probe, NULL);
  g_assert_cmpuint (held_copies, ==, 1);   /* the store */
  Probe *got = NULL;
  g_object_get (self, "probe", &got, NULL);
  g_assert_cmpuint (held_copies, ==, 2);   /* the load */
  g_assert_cmpuint (got->value, ==, probe.value);
  g_free (got);
  guint level = (guint) g_test_rand_int_range (1, 1001);
  g_object_set (self, "level", level, NULL);
  g_object_set (self, "level", level, NULL);
  guint got_level = 0;
  g_object_get (self, "level", &got_level, NULL);
  g_assert_cmpuint (got_level, ==, level);
  g_assert_cmpuint (notified, ==, 2);   /* probe, then level once */
  g_object_unref (self);
}

/* Nicks (GStreamer elements give them), owned getters (a string copied
 * under a lock, an object from a weak reference), an object accessor with
 * a setter of its own and a computed double. */

#define TEST_TYPE_NICKED (test_nicked_get_type ())
GType test_nicked_get_type (void);
typedef struct {
  GObject parent_instance;
  GMutex lock;
  char *device;        /* under lock; unset reads "default" */
  AccelDType dtype;
  GObject *object;
  GWeakRef weak;
  GObject *held;
  guint held_sets;
  double half;
} TestNicked;
typedef struct {
  GObjectClass parent_class;
} TestNickedClass;
G_DEFINE_FINAL_TYPE (TestNicked, test_nicked, G_TYPE_OBJECT)

static char *
test_nicked_dup_device (TestNicked *self)
{
  g_mutex_lock (&self->lock);
  char *device = g_strdup (self->device ? self->device : "default");
  g_mutex_unlock (&self->lock);
  return device;
}

static void
test_nicked_set_device (TestNicked *self, const char *device)
{
  g_mutex_lock (&self->lock);
  g_free (self->device);
  self->device = g_strdup (device);
  g_mutex_unlock (&self->lock);
}

static GObject *
test_nicked_dup_weak (TestNicked *self)
{
  return g_weak_ref_get (&self->weak);
}

static void
test_nicked_set_weak (TestNicked *self, GObject *object)
{
  g_weak_ref_set (&self->weak, object);
}

static GObject *
test_nicked_get_held (TestNicked *self)
{
  return self->held;
}

static void
test_nicked_set_held (TestNicked *self, GObject *object)
{
  self->held_sets++;
  g_set_object (&self->held, object);
}

static double
test_nicked_get_twice (TestNicked *self)
{
  return 2 * self->half;
}

static const AccelPropertyField nicked_fields[] = {
  ACCEL_ACCESSOR_DUP_STRING_NICK (TestNicked, test_nicked_dup_device, test_nicked_set_device, "device", "Device",
                                  "A string under a lock", "default", RW),
  ACCEL_FIELD_ENUM_NICK (TestNicked, dtype, "dtype", "Data type", "An enum", accel_dtype_get_type, ACCEL_DTYPE_F32,
                         RW),
  ACCEL_FIELD_OBJECT_NICK (TestNicked, object, "object", "Object", "An object", g_object_get_type,
                           G_PARAM_READABLE | G_PARAM_STATIC_STRINGS),
  ACCEL_ACCESSOR_DUP_OBJECT (TestNicked, test_nicked_dup_weak, test_nicked_set_weak, "weak", "A weak reference",
                             g_object_get_type, CONSTRUCT),
  ACCEL_ACCESSOR_OBJECT (TestNicked, test_nicked_get_held, test_nicked_set_held, "held", "An object with a setter",
                         g_object_get_type, RW),
  ACCEL_ACCESSOR_DOUBLE (TestNicked, test_nicked_get_twice, "twice", "A computed double", -1, G_MAXDOUBLE, 0,
                         G_PARAM_READABLE),
};

static void
test_nicked_finalize (GObject *object)
{
  TestNicked *self = (TestNicked *) object;
  accel_object_finalize_fields (object, TEST_TYPE_NICKED);
  g_free (self->device);
  g_clear_object (&self->held);
  g_weak_ref_clear (&self->weak);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (test_nicked_parent_class)->finalize (object);
}

static void
test_nicked_class_init (TestNickedClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = test_nicked_finalize;
  accel_object_class_install_fields (G_OBJECT_CLASS (klass), nicked_fields, G_N_ELEMENTS (nicked_fields));
}

static void
test_nicked_init (TestNicked *self)
{
  g_mutex_init (&self->lock);
  g_weak_ref_init (&self->weak, NULL);
  self->dtype = ACCEL_DTYPE_F32;
}

static void
test_nicked (void)
{
  GObjectClass *klass = g_type_class_ref (TEST_TYPE_NICKED);
#define P(name) g_object_class_find_property (klass, name)
  assert_same_pspec (P ("device"), g_param_spec_string ("device", "Device", "A string under a lock", "default", RW));
  assert_same_pspec (P ("dtype"), g_param_spec_enum ("dtype", "Data type", "An enum", ACCEL_TYPE_DTYPE,
                                                     ACCEL_DTYPE_F32, RW));
  assert_same_pspec (P ("object"), g_param_spec_object ("object", "Object", "An object", G_TYPE_OBJECT,
                                                        G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  assert_same_pspec (P ("weak"), g_param_spec_object ("weak", NULL, "A weak reference", G_TYPE_OBJECT, CONSTRUCT));
  assert_same_pspec (P ("held"), g_param_spec_object ("held", NULL, "An object with a setter", G_TYPE_OBJECT, RW));
  assert_same_pspec (P ("twice"), g_param_spec_double ("twice", NULL, "A computed double", -1, G_MAXDOUBLE, 0,
                                                       G_PARAM_READABLE));
#undef P
  g_type_class_unref (klass);

  GObject *weak = g_object_new (G_TYPE_OBJECT, NULL);
  GObject *held = g_object_new (G_TYPE_OBJECT, NULL);
  TestNicked *self = g_object_new (TEST_TYPE_NICKED, "weak", weak, NULL);
  self->half = g_test_rand_double_range (-0.5, 1e6);

  /* Unset, the getter's "default"; set, a copy, which the value takes
   * (LeakSanitizer checks it is freed once). */
  g_autofree char *device = NULL;
  g_object_get (self, "device", &device, NULL);
  g_assert_cmpstr (device, ==, "default");
  g_autofree char *name = g_strdup_printf ("cpu:%d", g_test_rand_int_range (0, 64));
  g_object_set (self, "device", name, "dtype", ACCEL_DTYPE_BF16, "held", held, NULL);
  g_assert_cmpstr (self->device, ==, name);
  g_assert_true (self->device != name);
  g_assert_cmpint (self->dtype, ==, ACCEL_DTYPE_BF16);
  g_assert_true (self->held == held);
  g_assert_cmpuint (self->held_sets, ==, 1);
  g_clear_pointer (&device, g_free);

  /* The weak reference: a new reference the value takes, then none. */
  GObject *got_weak = NULL, *got_held = NULL;
  double twice;
  g_object_get (self, "device", &device, "weak", &got_weak, "held", &got_held, "twice", &twice, NULL);
  g_assert_cmpstr (device, ==, name);
  g_assert_true (got_weak == weak);
  g_assert_cmpuint (weak->ref_count, ==, 2);
  g_assert_true (got_held == held);
  g_assert_cmpuint (held->ref_count, ==, 3);
  g_assert_cmpfloat (twice, ==, 2 * self->half);
  g_object_unref (got_weak);
  g_object_unref (got_held);
  g_object_add_weak_pointer (weak, (gpointer *) &weak);
  g_object_unref (weak);
  g_assert_null (weak);
  g_object_get (self, "weak", &got_weak, NULL);
  g_assert_null (got_weak);
  g_object_unref (self);
  g_assert_cmpuint (held->ref_count, ==, 1);
  g_object_unref (held);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/property-field/pspecs", test_pspecs);
  g_test_add_func ("/property-field/get-set", test_get_set);
  g_test_add_func ("/property-field/notify", test_notify);
  g_test_add_func ("/property-field/accessor-pspecs", test_accessor_pspecs);
  g_test_add_func ("/property-field/accessor-get-set", test_accessor_get_set);
  g_test_add_func ("/property-field/locked", test_locked);
  g_test_add_func ("/property-field/nicked", test_nicked);
  return g_test_run ();
}
