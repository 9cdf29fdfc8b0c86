/* accel-property-field.c: GObject properties declared by a table of fields.
 *
 * A class whose properties are plain fields (of its instance or of its
 * private struct) lists them once, as a static table of AccelPropertyField;
 * this file makes the pspecs (GLib's own: g_param_spec_uint() and friends)
 * and does get, set and the release of what the fields own, which classes
 * used to write by hand as switches. The op layer's parameter tables
 * (accel-op-params.c) store and load their fields with the same functions.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include "accel-property-field-private.h"

/* Fields: stored, loaded and cleared by the fundamental type of the value. */

#define STORE_SCALAR(ctype, getter)                    \
  G_STMT_START {                                       \
    ctype v_ = getter (value);                         \
    ctype *f_ = field;                                 \
    changed = memcmp (f_, &v_, sizeof v_) != 0;        \
    *f_ = v_;                                          \
  } G_STMT_END

gboolean
_accel_field_store (gpointer field, const GValue *value)
{
  gboolean changed = FALSE;

  switch (G_TYPE_FUNDAMENTAL (G_VALUE_TYPE (value)))
    {
    case G_TYPE_BOOLEAN:
      {
        gboolean v = g_value_get_boolean (value) ? TRUE : FALSE;
        changed = *(gboolean *) field != v;
        *(gboolean *) field = v;
        break;
      }
    case G_TYPE_INT: STORE_SCALAR (int, g_value_get_int); break;
    case G_TYPE_UINT: STORE_SCALAR (guint, g_value_get_uint); break;
    case G_TYPE_INT64: STORE_SCALAR (gint64, g_value_get_int64); break;
    case G_TYPE_UINT64: STORE_SCALAR (guint64, g_value_get_uint64); break;
    /* Bit patterns are compared, so NaN and -0.0 notify too. */
    case G_TYPE_DOUBLE: STORE_SCALAR (double, g_value_get_double); break;
    case G_TYPE_ENUM: STORE_SCALAR (int, g_value_get_enum); break;
    case G_TYPE_FLAGS: STORE_SCALAR (guint, g_value_get_flags); break;
    case G_TYPE_STRING:
      {
        const char *v = g_value_get_string (value);
        char **f = field;
        changed = g_strcmp0 (*f, v) != 0;
        if (changed)
          {
            g_free (*f);
            *f = g_strdup (v);
          }
        break;
      }
    case G_TYPE_OBJECT:
    case G_TYPE_INTERFACE:
      changed = g_set_object ((GObject **) field, g_value_get_object (value));
      break;
    case G_TYPE_BOXED:
      {
        gpointer *f = field;
        gpointer old = *f;
        *f = g_value_dup_boxed (value);
        changed = old != NULL || *f != NULL;
        if (old != NULL)
          g_boxed_free (G_VALUE_TYPE (value), old);
        break;
      }
    case G_TYPE_VARIANT:
      {
        GVariant **f = field;
        GVariant *old = *f;
        *f = g_value_dup_variant (value);
        changed = old != *f && (old == NULL || *f == NULL || !g_variant_equal (old, *f));
        g_clear_pointer (&old, g_variant_unref);
        break;
      }
    default:
      g_return_val_if_reached (FALSE);
    }
  return changed;
}

#undef STORE_SCALAR

void
_accel_field_load (gconstpointer field, GValue *value)
{
  switch (G_TYPE_FUNDAMENTAL (G_VALUE_TYPE (value)))
    {
    case G_TYPE_BOOLEAN: g_value_set_boolean (value, *(const gboolean *) field); break;
    case G_TYPE_INT: g_value_set_int (value, *(const int *) field); break;
    case G_TYPE_UINT: g_value_set_uint (value, *(const guint *) field); break;
    case G_TYPE_INT64: g_value_set_int64 (value, *(const gint64 *) field); break;
    case G_TYPE_UINT64: g_value_set_uint64 (value, *(const guint64 *) field); break;
    case G_TYPE_DOUBLE: g_value_set_double (value, *(const double *) field); break;
    case G_TYPE_ENUM: g_value_set_enum (value, *(const int *) field); break;
    case G_TYPE_FLAGS: g_value_set_flags (value, *(const guint *) field); break;
    case G_TYPE_STRING: g_value_set_string (value, *(char * const *) field); break;
    case G_TYPE_OBJECT:
    case G_TYPE_INTERFACE: g_value_set_object (value, *(GObject * const *) field); break;
    case G_TYPE_BOXED: g_value_set_boxed (value, *(const gpointer *) field); break;
    case G_TYPE_VARIANT: g_value_set_variant (value, *(GVariant * const *) field); break;
    default:
      g_return_if_reached ();
    }
}

void
_accel_field_clear (gpointer field, GType value_type, gboolean objects_only)
{
  switch (G_TYPE_FUNDAMENTAL (value_type))
    {
    case G_TYPE_OBJECT:
    case G_TYPE_INTERFACE:
      g_clear_object ((GObject **) field);
      break;
    case G_TYPE_STRING:
      if (!objects_only)
        g_clear_pointer ((char **) field, g_free);
      break;
    case G_TYPE_BOXED:
      if (!objects_only && *(gpointer *) field != NULL)
        {
          g_boxed_free (value_type, *(gpointer *) field);
          *(gpointer *) field = NULL;
        }
      break;
    case G_TYPE_VARIANT:
      if (!objects_only)
        g_clear_pointer ((GVariant **) field, g_variant_unref);
      break;
    default:
      break;   /* scalars own nothing */
    }
}

void
_accel_field_set_property (GObject *object, gpointer field, const GValue *value, GParamSpec *pspec)
{
  if (_accel_field_store (field, value) && (pspec->flags & G_PARAM_EXPLICIT_NOTIFY))
    g_object_notify_by_pspec (object, pspec);
}

/* Accessors: the value got and set through the class's functions, called
 * with the C type the value's fundamental type has in a field (GLib's own
 * convention for signal handlers and GCallbacks): an int for booleans,
 * integers of 32 bits, enums and flags, a 64-bit integer, a double or a
 * pointer. The value passes through a field of that type, so the fields'
 * own load and store do the rest. */

typedef union {
  int i;
  gint64 i64;
  double d;
  gpointer p;
} AccessorValue;

static gboolean
holds_pointer (GType fundamental)
{
  return fundamental == G_TYPE_STRING || fundamental == G_TYPE_OBJECT || fundamental == G_TYPE_INTERFACE
         || fundamental == G_TYPE_BOXED || fundamental == G_TYPE_VARIANT;
}

static void
accessor_load (GCallback get, gboolean owned, GObject *object, GValue *value)
{
  AccessorValue v;
  GType fundamental = G_TYPE_FUNDAMENTAL (G_VALUE_TYPE (value));

  if (fundamental == G_TYPE_INT64 || fundamental == G_TYPE_UINT64)
    v.i64 = ((gint64 (*) (gpointer)) get) (object);
  else if (fundamental == G_TYPE_DOUBLE)
    v.d = ((double (*) (gpointer)) get) (object);
  else if (holds_pointer (fundamental))
    v.p = ((gpointer (*) (gpointer)) get) (object);
  else
    v.i = ((int (*) (gpointer)) get) (object);
  /* A variant getter returns a new (or floating) reference; an owned
   * string or object is the value's. */
  if (fundamental == G_TYPE_VARIANT)
    g_value_take_variant (value, v.p);
  else if (owned && fundamental == G_TYPE_STRING)
    g_value_take_string (value, v.p);
  else if (owned)
    g_value_take_object (value, v.p);
  else
    _accel_field_load (&v, value);
}

static void
accessor_store (GCallback set, GObject *object, const GValue *value)
{
  GType fundamental = G_TYPE_FUNDAMENTAL (G_VALUE_TYPE (value));

  /* A pointer goes to the setter as the value holds it (transfer none,
   * as setters take it); a scalar through its field type. */
  if (holds_pointer (fundamental))
    {
      ((void (*) (gpointer, gpointer)) set) (object, g_value_peek_pointer (value));
      return;
    }
  AccessorValue v = { 0 };
  _accel_field_store (&v, value);
  if (fundamental == G_TYPE_INT64 || fundamental == G_TYPE_UINT64)
    ((void (*) (gpointer, gint64)) set) (object, v.i64);
  else if (fundamental == G_TYPE_DOUBLE)
    ((void (*) (gpointer, double)) set) (object, v.d);
  else
    ((void (*) (gpointer, int)) set) (object, v.i);
}

/* Classes. */

typedef struct {
  GParamSpec *pspec;
  gssize offset;            /* from the start of the instance (negative: private) */
  gboolean locked;          /* read and written under the GMutex at lock_offset */
  gssize lock_offset;
  GCallback get, set;       /* an accessor's functions (offset unused) */
  gboolean owned;           /* the getter's value is the property's */
} FieldSlot;

/* What one class installed, as qdata on its GType; lives as long as the
 * process, as classes do. */
typedef struct {
  GPtrArray *slots;         /* FieldSlot */
  GObjectSetPropertyFunc set_other;   /* the class's own, for its other properties */
  GObjectGetPropertyFunc get_other;
} ClassFields;

G_DEFINE_QUARK (accel-property-field-slot, slot)
G_DEFINE_QUARK (accel-property-field-class, class_fields)

/* The fields of @type, or of its nearest ancestor that installed some: a
 * subclass that chains its own accessors up to its parent class's (for a
 * property the parent installs on it, as GObject allows) reaches the
 * parent's hand-written accessors that way. */
static const ClassFields *
class_fields_of (GType type)
{
  for (; type != 0; type = g_type_parent (type))
    {
      const ClassFields *cf = g_type_get_qdata (type, class_fields_quark ());
      if (cf != NULL)
        return cf;
    }
  return NULL;
}

static void
fields_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  const FieldSlot *slot = g_param_spec_get_qdata (pspec, slot_quark ());
  if (slot != NULL && slot->set != NULL)
    {
      accessor_store (slot->set, object, value);
      return;
    }
  if (slot != NULL && slot->locked)
    {
      GMutex *lock = G_STRUCT_MEMBER_P (object, slot->lock_offset);
      g_mutex_lock (lock);
      gboolean changed = _accel_field_store (G_STRUCT_MEMBER_P (object, slot->offset), value);
      g_mutex_unlock (lock);
      if (changed && (pspec->flags & G_PARAM_EXPLICIT_NOTIFY))
        g_object_notify_by_pspec (object, pspec);
      return;
    }
  if (slot != NULL)
    {
      _accel_field_set_property (object, G_STRUCT_MEMBER_P (object, slot->offset), value, pspec);
      return;
    }
  const ClassFields *cf = class_fields_of (pspec->owner_type);
  if (cf != NULL && cf->set_other != NULL)
    cf->set_other (object, prop_id, value, pspec);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
fields_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  const FieldSlot *slot = g_param_spec_get_qdata (pspec, slot_quark ());
  if (slot != NULL && slot->get != NULL)
    {
      accessor_load (slot->get, slot->owned, object, value);
      return;
    }
  if (slot != NULL && slot->locked)
    {
      GMutex *lock = G_STRUCT_MEMBER_P (object, slot->lock_offset);
      g_mutex_lock (lock);
      _accel_field_load (G_STRUCT_MEMBER_P (object, slot->offset), value);
      g_mutex_unlock (lock);
      return;
    }
  if (slot != NULL)
    {
      _accel_field_load (G_STRUCT_MEMBER_P (object, slot->offset), value);
      return;
    }
  const ClassFields *cf = class_fields_of (pspec->owner_type);
  if (cf != NULL && cf->get_other != NULL)
    cf->get_other (object, prop_id, value, pspec);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static GParamSpec *
make_pspec (const AccelPropertyField *f)
{
  const char *name = f->name, *nick = f->nick, *blurb = f->blurb;
  GParamFlags flags = f->flags;

  switch (f->fundamental)
    {
    case G_TYPE_BOOLEAN:
      return g_param_spec_boolean (name, nick, blurb, f->def != 0, flags);
    case G_TYPE_INT:
      return g_param_spec_int (name, nick, blurb, (int) f->min, (int) f->max, (int) f->def, flags);
    case G_TYPE_UINT:
      return g_param_spec_uint (name, nick, blurb, (guint) f->min, (guint) f->max, (guint) f->def, flags);
    case G_TYPE_INT64:
      return g_param_spec_int64 (name, nick, blurb, f->min, f->max, f->def, flags);
    case G_TYPE_UINT64:
      return g_param_spec_uint64 (name, nick, blurb, (guint64) f->min, (guint64) f->max, (guint64) f->def, flags);
    case G_TYPE_DOUBLE:
      return g_param_spec_double (name, nick, blurb, f->dmin, f->dmax, f->ddef, flags);
    case G_TYPE_ENUM:
      g_return_val_if_fail (f->get_type != NULL, NULL);
      return g_param_spec_enum (name, nick, blurb, f->get_type (), (int) f->def, flags);
    case G_TYPE_FLAGS:
      g_return_val_if_fail (f->get_type != NULL, NULL);
      return g_param_spec_flags (name, nick, blurb, f->get_type (), (guint) f->def, flags);
    case G_TYPE_STRING:
      return g_param_spec_string (name, nick, blurb, f->str, flags);
    case G_TYPE_OBJECT:
      g_return_val_if_fail (f->get_type != NULL, NULL);
      return g_param_spec_object (name, nick, blurb, f->get_type (), flags);
    case G_TYPE_BOXED:
      g_return_val_if_fail (f->get_type != NULL, NULL);
      return g_param_spec_boxed (name, nick, blurb, f->get_type (), flags);
    case G_TYPE_VARIANT:
      g_return_val_if_fail (f->str != NULL && g_variant_type_string_is_valid (f->str), NULL);
      return g_param_spec_variant (name, nick, blurb, G_VARIANT_TYPE (f->str), NULL, flags);
    default:
      g_return_val_if_reached (NULL);
    }
}

static guint
next_property_id (GObjectClass *klass)
{
  guint n, next = 1;
  GParamSpec **pspecs = g_object_class_list_properties (klass, &n);
  for (guint i = 0; i < n; i++)
    if (pspecs[i]->owner_type == G_OBJECT_CLASS_TYPE (klass))
      next = MAX (next, pspecs[i]->param_id + 1);
  g_free (pspecs);
  return next;
}

/* Installs @fields, at @base + their offsets; with @lock_offset >= 0, they
 * are read and written under the GMutex at @base + @lock_offset. */
static void
install_fields (GObjectClass *klass, gssize base, const AccelPropertyField *fields, guint n_fields,
                gssize lock_offset)
{
  g_return_if_fail (G_IS_OBJECT_CLASS (klass));
  g_return_if_fail (fields != NULL || n_fields == 0);

  GType type = G_OBJECT_CLASS_TYPE (klass);
  ClassFields *cf = g_type_get_qdata (type, class_fields_quark ());

  if (cf == NULL)
    {
      cf = g_new0 (ClassFields, 1);
      cf->slots = g_ptr_array_new ();
      g_type_set_qdata (type, class_fields_quark (), cf);
    }
  /* Accessors the class set before (GObject does not inherit them) handle
   * its other properties. */
  if (klass->set_property != NULL && klass->set_property != fields_set_property)
    cf->set_other = klass->set_property;
  if (klass->get_property != NULL && klass->get_property != fields_get_property)
    cf->get_other = klass->get_property;
  klass->set_property = fields_set_property;
  klass->get_property = fields_get_property;

  guint id = next_property_id (klass);
  for (guint i = 0; i < n_fields; i++)
    {
      /* An accessor is read through its getter, and written through its
       * setter, which a writable one must have. */
      g_return_if_fail (fields[i].set == NULL || fields[i].get != NULL);
      g_return_if_fail (fields[i].get == NULL || fields[i].set != NULL || !(fields[i].flags & G_PARAM_WRITABLE));
      g_return_if_fail (!fields[i].owned || fields[i].fundamental == G_TYPE_STRING
                        || fields[i].fundamental == G_TYPE_OBJECT);
      GParamSpec *pspec = make_pspec (&fields[i]);
      if (pspec == NULL)
        continue;
      FieldSlot *slot = g_new0 (FieldSlot, 1);
      slot->pspec = pspec;
      slot->offset = base + (gssize) fields[i].offset;
      slot->locked = lock_offset >= 0;
      slot->lock_offset = base + lock_offset;
      slot->get = fields[i].get;
      slot->set = fields[i].set;
      slot->owned = fields[i].owned;
      g_ptr_array_add (cf->slots, slot);
      g_param_spec_set_qdata (pspec, slot_quark (), slot);
      g_object_class_install_property (klass, id++, pspec);
    }
}

/* install_fields() for fields of the private struct. */
static void
install_private_fields (GObjectClass *klass, const AccelPropertyField *fields, guint n_fields, gssize lock_offset)
{
  g_return_if_fail (G_IS_OBJECT_CLASS (klass));

  gint private_offset = g_type_class_get_instance_private_offset (klass);
  g_return_if_fail (private_offset != 0);
  install_fields (klass, private_offset, fields, n_fields, lock_offset);
}

/**
 * accel_object_class_install_fields: (skip)
 * @klass: a GObject class, in its class_init
 * @fields: (array length=n_fields): the table, whose entries' offsets are
 *   into the instance struct; its strings must be static
 * @n_fields: how many entries
 *
 * Installs one property per entry of @fields, with the entry's name, nick,
 * blurb, flags, range and default, and makes the class get and set them as
 * the fields the entries name (or through the functions that accessor
 * entries name): the class writes no `get_property` or `set_property` for
 * them, and releases what the fields own with
 * accel_object_dispose_fields() and accel_object_finalize_fields().
 *
 * The properties take the ids after the highest one the class has
 * installed, in the table's order (the order g_object_class_list_properties()
 * gives). A class with properties that are not plain fields (computed on
 * read, or with side effects when set) installs those itself and sets its
 * own `set_property` and `get_property` for them before calling this: they
 * are then called for every property of the class that is not in a table.
 *
 * ```c
 * static const AccelPropertyField cascade_fields[] = {
 *   ACCEL_FIELD_OBJECT (AccelPatternsCascade, device, "device", "Device both models run on",
 *                       accel_device_get_type, CONSTRUCT),
 *   ACCEL_FIELD_DOUBLE (AccelPatternsCascade, threshold, "threshold", "Rows below go to the large model",
 *                       -G_MAXDOUBLE, G_MAXDOUBLE, 0.5, CONSTRUCT),
 * };
 * accel_object_class_install_fields (object_class, cascade_fields, G_N_ELEMENTS (cascade_fields));
 * ```
 */
void
accel_object_class_install_fields (GObjectClass *klass, const AccelPropertyField *fields, guint n_fields)
{
  install_fields (klass, 0, fields, n_fields, -1);
}

/**
 * accel_object_class_install_private_fields: (skip)
 * @klass: a GObject class with a private struct (G_ADD_PRIVATE()), in its
 *   class_init
 * @fields: (array length=n_fields): the table, whose entries' offsets are
 *   into the class's private struct; its strings must be static
 * @n_fields: how many entries
 *
 * As accel_object_class_install_fields(), for fields of the private struct.
 */
void
accel_object_class_install_private_fields (GObjectClass *klass, const AccelPropertyField *fields, guint n_fields)
{
  install_private_fields (klass, fields, n_fields, -1);
}

/**
 * accel_object_class_install_locked_fields: (skip)
 * @klass: a GObject class, in its class_init
 * @fields: (array length=n_fields): the table, whose entries' offsets are
 *   into the instance struct; its strings must be static
 * @n_fields: how many entries
 * @lock_offset: where a #GMutex of the instance struct sits
 *   (G_STRUCT_OFFSET()), which the instance initialises and clears
 *
 * As accel_object_class_install_fields(), for fields that other threads
 * write under that mutex (statistics, most often): each is read and written
 * with the mutex held. A change is notified after the mutex is let go.
 */
void
accel_object_class_install_locked_fields (GObjectClass *klass,
                                          const AccelPropertyField *fields,
                                          guint n_fields,
                                          guint lock_offset)
{
  install_fields (klass, 0, fields, n_fields, lock_offset);
}

/**
 * accel_object_class_install_private_locked_fields: (skip)
 * @klass: a GObject class with a private struct (G_ADD_PRIVATE()), in its
 *   class_init
 * @fields: (array length=n_fields): the table, whose entries' offsets are
 *   into the class's private struct; its strings must be static
 * @n_fields: how many entries
 * @lock_offset: where a #GMutex of the private struct sits
 *
 * As accel_object_class_install_locked_fields(), for fields (and a mutex)
 * of the private struct.
 */
void
accel_object_class_install_private_locked_fields (GObjectClass *klass,
                                                  const AccelPropertyField *fields,
                                                  guint n_fields,
                                                  guint lock_offset)
{
  install_private_fields (klass, fields, n_fields, lock_offset);
}

static void
clear_fields (GObject *object, GType type, gboolean objects_only)
{
  const ClassFields *cf = g_type_get_qdata (type, class_fields_quark ());
  g_return_if_fail (cf != NULL);

  for (guint i = 0; i < cf->slots->len; i++)
    {
      const FieldSlot *slot = cf->slots->pdata[i];
      if (slot->get != NULL)
        continue;   /* an accessor's value is not the object's to free */
      _accel_field_clear (G_STRUCT_MEMBER_P (object, slot->offset), slot->pspec->value_type, objects_only);
    }
}

/**
 * accel_object_dispose_fields: (skip)
 * @object: an instance of @type
 * @type: a class that installed fields with
 *   accel_object_class_install_fields() or
 *   accel_object_class_install_private_fields()
 *
 * Drops the references that the object fields @type installed hold: call
 * it from @type's dispose. Its other fields are left as they are.
 */
void
accel_object_dispose_fields (GObject *object, GType type)
{
  g_return_if_fail (G_TYPE_CHECK_INSTANCE_TYPE (object, type));

  clear_fields (object, type, TRUE);
}

/**
 * accel_object_finalize_fields: (skip)
 * @object: an instance of @type
 * @type: a class that installed fields
 *
 * Frees what every field @type installed owns (strings, boxed values,
 * variants, and references left by objects): call it from @type's
 * finalize.
 */
void
accel_object_finalize_fields (GObject *object, GType type)
{
  g_return_if_fail (G_TYPE_CHECK_INSTANCE_TYPE (object, type));

  clear_fields (object, type, FALSE);
}
