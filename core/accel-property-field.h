/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-types.h"

G_BEGIN_DECLS

/**
 * AccelPropertyField: (skip)
 * @name: the property name (kebab-case, static)
 * @nick: the nick, or %NULL
 * @blurb: one line for `accel-inspect`
 * @fundamental: the fundamental type of the value: %G_TYPE_BOOLEAN,
 *   %G_TYPE_INT, %G_TYPE_UINT, %G_TYPE_INT64, %G_TYPE_UINT64,
 *   %G_TYPE_DOUBLE, %G_TYPE_ENUM, %G_TYPE_FLAGS, %G_TYPE_STRING,
 *   %G_TYPE_OBJECT, %G_TYPE_BOXED or %G_TYPE_VARIANT
 * @get_type: for enums, flags, objects (or interfaces) and boxed types,
 *   the value type's `get_type` function
 * @flags: the #GParamFlags of the property, as given to g_param_spec_*()
 * @offset: where the field sits, from the start of the instance struct or
 *   of the class's private struct (G_STRUCT_OFFSET())
 * @min: the smallest value of an integer field
 * @max: the largest value of an integer field (for %G_TYPE_UINT64, the bits
 *   of a #guint64)
 * @def: the default of an integer, boolean, enum or flags field
 * @dmin: the smallest value of a double field
 * @dmax: the largest value of a double field
 * @ddef: the default of a double field
 * @str: the default of a string field; the type string of a variant field
 * @get: for a property read through a function instead of a field (a
 *   computed one, or one read under a lock or with g_atomic), that getter
 *   (see ACCEL_ACCESSOR_UINT()); %NULL for a field
 * @set: the setter of such a property, or %NULL when it is read-only
 * @owned: the getter returns a value of its own, which the property's
 *   value takes: a new string or a new reference to an object (see
 *   ACCEL_ACCESSOR_DUP_STRING_NICK() and ACCEL_ACCESSOR_DUP_OBJECT())
 *
 * One property of a GObject class whose value is a plain field of its
 * instance (or of its private struct), declared once in a static table:
 * accel_object_class_install_fields() makes the #GParamSpec of each entry
 * with the entry's name, nick, blurb, range, default and flags (the pspec
 * GLib's own g_param_spec_*() would make), and the class then gets and sets
 * the fields without a hand-written switch. Write entries with
 * ACCEL_FIELD_UINT(), ACCEL_FIELD_STRING() and the other `ACCEL_FIELD_`
 * macros, which refuse at compile time a field of another C type.
 *
 * Setting a field stores the value (a copy of a string, boxed value or
 * variant, a new reference to an object) and frees the old one; GObject
 * notifies as for any property, and a property with
 * %G_PARAM_EXPLICIT_NOTIFY is notified only when its value changed. An
 * integer field holds what was set: the pspec's range is checked by
 * GObject before the class sees the value.
 *
 * An entry may instead name a getter and a setter (ACCEL_ACCESSOR_UINT()
 * and the other `ACCEL_ACCESSOR_` macros): the property is then read by
 * calling the getter and written by calling the setter, usually the
 * class's public accessors. The setter does all that setting means,
 * including the notification of a %G_PARAM_EXPLICIT_NOTIFY property. The
 * mutex of a locked table is not held around them: they lock what they
 * read themselves.
 */
typedef struct {
  const char *name;
  const char *nick;
  const char *blurb;
  GType fundamental;
  GType (*get_type) (void);
  GParamFlags flags;
  guint offset;
  gint64 min;
  gint64 max;
  gint64 def;
  double dmin;
  double dmax;
  double ddef;
  const char *str;
  GCallback get;
  GCallback set;
  gboolean owned;
} AccelPropertyField;

/* The offset of @field in @Type, refused at compile time unless the field
 * has the C type @CType (ACCEL_FIELD_OFFSET_), or its size (ACCEL_FIELD_SIZED_,
 * for enums and flags, whose C type is the enum's). Not for bindings. */
#ifndef __GI_SCANNER__
/* The flags most entries take: a property set once, when the object is
 * made (ACCEL_FIELD_CONSTRUCT), and one read only (ACCEL_FIELD_READABLE). */
#define ACCEL_FIELD_CONSTRUCT (G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS)
#define ACCEL_FIELD_READABLE (G_PARAM_READABLE | G_PARAM_STATIC_STRINGS)
#if defined(__GNUC__) && !defined(__cplusplus)
#define ACCEL_FIELD_OFFSET_(Type, field, CType)                                           \
  ((guint) (G_STRUCT_OFFSET (Type, field)                                                \
            + 0 * sizeof (char[__builtin_types_compatible_p (__typeof__ (((Type *) 0)->field), CType) ? 1 : -1])))
#else
#define ACCEL_FIELD_OFFSET_(Type, field, CType)                                           \
  ((guint) (G_STRUCT_OFFSET (Type, field) + 0 * sizeof (char[sizeof (((Type *) 0)->field) == sizeof (CType) ? 1 : -1])))
#endif
#define ACCEL_FIELD_SIZED_(Type, field, CType)                                            \
  ((guint) (G_STRUCT_OFFSET (Type, field) + 0 * sizeof (char[sizeof (((Type *) 0)->field) == sizeof (CType) ? 1 : -1])))
/* 0, refused at compile time unless @get is a getter of @Type returning
 * @CType (ACCEL_ACCESSOR_OFFSET_) or a value of its size (_SIZED_, for
 * enums), and @set is %NULL or a setter of @Type taking @CType. */
#if defined(__GNUC__) && !defined(__cplusplus)
#define ACCEL_ACCESSOR_IS_(f, FType) __builtin_types_compatible_p (__typeof__ (0 ? (f) : (f)), FType)
#define ACCEL_ACCESSOR_TYPED_(Type, get, set, GetCType, SetCType)                             \
  ((guint) (0 * sizeof (char[ACCEL_ACCESSOR_IS_ (get, GetCType (*) (Type *)) ? 1 : -1])        \
            + 0 * sizeof (char[ACCEL_ACCESSOR_IS_ (set, void (*) (Type *, SetCType))          \
                               || ACCEL_ACCESSOR_IS_ (set, void *) ? 1 : -1])))
#else
#define ACCEL_ACCESSOR_TYPED_(Type, get, set, GetCType, SetCType)                             \
  ((guint) (0 * sizeof (char[sizeof ((get) ((Type *) 0)) == sizeof (GetCType) ? 1 : -1])))
#endif
#define ACCEL_ACCESSOR_OFFSET_(Type, get, set, CType) ACCEL_ACCESSOR_TYPED_ (Type, get, set, CType, CType)
#define ACCEL_ACCESSOR_SIZED_(Type, get, set, CType)                                         \
  ((guint) (0 * sizeof (char[sizeof ((get) ((Type *) 0)) == sizeof (CType) ? 1 : -1])))
#define ACCEL_ACCESSOR_ENTRY_(Type, get, set, name, nick, blurb, fundamental, CType, SIZED, get_type, flags) \
  (name), (nick), (blurb), (fundamental), (get_type), (GParamFlags) (flags),                              \
    ACCEL_ACCESSOR_##SIZED##_ (Type, get, set, CType)
#define ACCEL_FIELD_ENTRY_(Type, field, name, nick, blurb, fundamental, CType, SIZED, get_type, flags) \
  (name), (nick), (blurb), (fundamental), (get_type), (GParamFlags) (flags),                       \
    ACCEL_FIELD_##SIZED##_ (Type, field, CType)
#endif

/**
 * ACCEL_FIELD_BOOLEAN: (skip)
 * @Type: the struct holding the field (the instance, or the private struct)
 * @field: its `gboolean` field
 * @name: the property name
 * @blurb: what it is
 * @def: the default
 * @flags: the #GParamFlags
 *
 * A boolean entry of an #AccelPropertyField table.
 */
#define ACCEL_FIELD_BOOLEAN(Type, field, name, blurb, def, flags)                               \
  { ACCEL_FIELD_ENTRY_ (Type, field, name, NULL, blurb, G_TYPE_BOOLEAN, gboolean, OFFSET, NULL, flags), \
    0, 0, (def), 0.0, 0.0, 0.0, NULL }

/**
 * ACCEL_FIELD_INT: (skip)
 * @Type: the struct holding the field
 * @field: its `int` field
 * @name: the property name
 * @blurb: what it is
 * @min: the smallest value
 * @max: the largest value
 * @def: the default
 * @flags: the #GParamFlags
 *
 * An `int` entry of an #AccelPropertyField table.
 */
#define ACCEL_FIELD_INT(Type, field, name, blurb, min, max, def, flags)                         \
  { ACCEL_FIELD_ENTRY_ (Type, field, name, NULL, blurb, G_TYPE_INT, int, OFFSET, NULL, flags),       \
    (min), (max), (def), 0.0, 0.0, 0.0, NULL }

/**
 * ACCEL_FIELD_UINT: (skip)
 * @Type: the struct holding the field
 * @field: its `guint` field
 * @name: the property name
 * @blurb: what it is
 * @min: the smallest value
 * @max: the largest value
 * @def: the default
 * @flags: the #GParamFlags
 *
 * A `guint` entry of an #AccelPropertyField table.
 */
#define ACCEL_FIELD_UINT(Type, field, name, blurb, min, max, def, flags)                        \
  { ACCEL_FIELD_ENTRY_ (Type, field, name, NULL, blurb, G_TYPE_UINT, guint, OFFSET, NULL, flags),    \
    (min), (max), (def), 0.0, 0.0, 0.0, NULL }

/**
 * ACCEL_FIELD_INT64: (skip)
 * @Type: the struct holding the field
 * @field: its `gint64` field
 * @name: the property name
 * @blurb: what it is
 * @min: the smallest value
 * @max: the largest value
 * @def: the default
 * @flags: the #GParamFlags
 *
 * A `gint64` entry of an #AccelPropertyField table.
 */
#define ACCEL_FIELD_INT64(Type, field, name, blurb, min, max, def, flags)                       \
  { ACCEL_FIELD_ENTRY_ (Type, field, name, NULL, blurb, G_TYPE_INT64, gint64, SIZED, NULL, flags),   \
    (min), (max), (def), 0.0, 0.0, 0.0, NULL }

/**
 * ACCEL_FIELD_UINT64: (skip)
 * @Type: the struct holding the field
 * @field: its `guint64` field
 * @name: the property name
 * @blurb: what it is
 * @min: the smallest value
 * @max: the largest value
 * @def: the default
 * @flags: the #GParamFlags
 *
 * A `guint64` entry of an #AccelPropertyField table.
 */
#define ACCEL_FIELD_UINT64(Type, field, name, blurb, min, max, def, flags)                      \
  { ACCEL_FIELD_ENTRY_ (Type, field, name, NULL, blurb, G_TYPE_UINT64, guint64, SIZED, NULL, flags), \
    (gint64) (min), (gint64) (max), (gint64) (def), 0.0, 0.0, 0.0, NULL }

/**
 * ACCEL_FIELD_DOUBLE: (skip)
 * @Type: the struct holding the field
 * @field: its `double` field
 * @name: the property name
 * @blurb: what it is
 * @min: the smallest value
 * @max: the largest value
 * @def: the default
 * @flags: the #GParamFlags
 *
 * A `double` entry of an #AccelPropertyField table.
 */
#define ACCEL_FIELD_DOUBLE(Type, field, name, blurb, min, max, def, flags)                      \
  { ACCEL_FIELD_ENTRY_ (Type, field, name, NULL, blurb, G_TYPE_DOUBLE, double, OFFSET, NULL, flags), \
    0, 0, 0, (min), (max), (def), NULL }

/**
 * ACCEL_FIELD_ENUM: (skip)
 * @Type: the struct holding the field
 * @field: its field of the enum type
 * @name: the property name
 * @blurb: what it is
 * @get_type: the enum type's `get_type` function
 * @def: the default
 * @flags: the #GParamFlags
 *
 * An enum entry of an #AccelPropertyField table.
 */
#define ACCEL_FIELD_ENUM(Type, field, name, blurb, get_type, def, flags) \
  ACCEL_FIELD_ENUM_NICK (Type, field, name, NULL, blurb, get_type, def, flags)

/**
 * ACCEL_FIELD_ENUM_NICK: (skip)
 * @Type: the struct holding the field
 * @field: its field of the enum type
 * @name: the property name
 * @nick: the nick (GStreamer elements give one, as `gst-inspect-1.0` shows)
 * @blurb: what it is
 * @get_type: the enum type's `get_type` function
 * @def: the default
 * @flags: the #GParamFlags
 *
 * ACCEL_FIELD_ENUM() with a nick.
 */
#define ACCEL_FIELD_ENUM_NICK(Type, field, name, nick, blurb, get_type, def, flags)              \
  { ACCEL_FIELD_ENTRY_ (Type, field, name, nick, blurb, G_TYPE_ENUM, int, SIZED, get_type, flags), \
    0, 0, (def), 0.0, 0.0, 0.0, NULL }

/**
 * ACCEL_FIELD_FLAGS: (skip)
 * @Type: the struct holding the field
 * @field: its field of the flags type
 * @name: the property name
 * @blurb: what it is
 * @get_type: the flags type's `get_type` function
 * @def: the default
 * @flags: the #GParamFlags
 *
 * A flags entry of an #AccelPropertyField table.
 */
#define ACCEL_FIELD_FLAGS(Type, field, name, blurb, get_type, def, flags)                       \
  { ACCEL_FIELD_ENTRY_ (Type, field, name, NULL, blurb, G_TYPE_FLAGS, guint, SIZED, get_type, flags), \
    0, 0, (def), 0.0, 0.0, 0.0, NULL }

/**
 * ACCEL_FIELD_STRING: (skip)
 * @Type: the struct holding the field
 * @field: its `char *` field, which the object owns
 * @name: the property name
 * @blurb: what it is
 * @def: (nullable): the default
 * @flags: the #GParamFlags
 *
 * A string entry of an #AccelPropertyField table.
 */
#define ACCEL_FIELD_STRING(Type, field, name, blurb, def, flags)                                \
  { ACCEL_FIELD_ENTRY_ (Type, field, name, NULL, blurb, G_TYPE_STRING, char *, OFFSET, NULL, flags), \
    0, 0, 0, 0.0, 0.0, 0.0, (def) }

/**
 * ACCEL_FIELD_OBJECT: (skip)
 * @Type: the struct holding the field
 * @field: its pointer to an object, of which the object holds a reference
 * @name: the property name
 * @blurb: what it is
 * @get_type: the value type's `get_type` function (a class or an interface)
 * @flags: the #GParamFlags
 *
 * An object entry of an #AccelPropertyField table.
 */
#define ACCEL_FIELD_OBJECT(Type, field, name, blurb, get_type, flags) \
  ACCEL_FIELD_OBJECT_NICK (Type, field, name, NULL, blurb, get_type, flags)

/**
 * ACCEL_FIELD_OBJECT_NICK: (skip)
 * @Type: the struct holding the field
 * @field: its pointer to an object, of which the object holds a reference
 * @name: the property name
 * @nick: the nick
 * @blurb: what it is
 * @get_type: the value type's `get_type` function (a class or an interface)
 * @flags: the #GParamFlags
 *
 * ACCEL_FIELD_OBJECT() with a nick.
 */
#define ACCEL_FIELD_OBJECT_NICK(Type, field, name, nick, blurb, get_type, flags)                       \
  { ACCEL_FIELD_ENTRY_ (Type, field, name, nick, blurb, G_TYPE_OBJECT, gpointer, SIZED, get_type, flags), \
    0, 0, 0, 0.0, 0.0, 0.0, NULL }

/**
 * ACCEL_FIELD_BOXED: (skip)
 * @Type: the struct holding the field
 * @field: its pointer to a boxed value, which the object owns
 * @name: the property name
 * @blurb: what it is
 * @get_type: the boxed type's `get_type` function
 * @flags: the #GParamFlags
 *
 * A boxed entry of an #AccelPropertyField table (a #GStrv, an #AccelShape…).
 */
#define ACCEL_FIELD_BOXED(Type, field, name, blurb, get_type, flags)                            \
  { ACCEL_FIELD_ENTRY_ (Type, field, name, NULL, blurb, G_TYPE_BOXED, gpointer, SIZED, get_type, flags), \
    0, 0, 0, 0.0, 0.0, 0.0, NULL }

/**
 * ACCEL_FIELD_VARIANT: (skip)
 * @Type: the struct holding the field
 * @field: its `GVariant *` field, of which the object holds a reference
 * @name: the property name
 * @blurb: what it is
 * @type_string: the variant type, as a string (`"au"`)
 * @flags: the #GParamFlags
 *
 * A variant entry of an #AccelPropertyField table; its default is %NULL.
 */
#define ACCEL_FIELD_VARIANT(Type, field, name, blurb, type_string, flags)                       \
  { ACCEL_FIELD_ENTRY_ (Type, field, name, NULL, blurb, G_TYPE_VARIANT, GVariant *, OFFSET, NULL, flags), \
    0, 0, 0, 0.0, 0.0, 0.0, (type_string) }

/**
 * ACCEL_ACCESSOR_INT: (skip)
 * @Type: the instance struct
 * @get: the getter, `int get (Type *self)`
 * @set: (nullable): the setter, `void set (Type *self, int value)`, or
 *   %NULL for a read-only property
 * @name: the property name
 * @blurb: what it is
 * @min: the smallest value
 * @max: the largest value
 * @def: the default
 * @flags: the #GParamFlags
 *
 * An `int` entry of an #AccelPropertyField table read and written through
 * functions.
 */
#define ACCEL_ACCESSOR_INT(Type, get, set, name, blurb, min, max, def, flags)                     \
  { ACCEL_ACCESSOR_ENTRY_ (Type, get, set, name, NULL, blurb, G_TYPE_INT, int, OFFSET, NULL, flags),    \
    (min), (max), (def), 0.0, 0.0, 0.0, NULL, (GCallback) (get), (GCallback) (set) }

/**
 * ACCEL_ACCESSOR_UINT: (skip)
 * @Type: the instance struct
 * @get: the getter, `guint get (Type *self)`
 * @set: (nullable): the setter, `void set (Type *self, guint value)`, or
 *   %NULL for a read-only property
 * @name: the property name
 * @blurb: what it is
 * @min: the smallest value
 * @max: the largest value
 * @def: the default
 * @flags: the #GParamFlags
 *
 * A `guint` entry of an #AccelPropertyField table read and written through
 * functions.
 */
#define ACCEL_ACCESSOR_UINT(Type, get, set, name, blurb, min, max, def, flags)                    \
  { ACCEL_ACCESSOR_ENTRY_ (Type, get, set, name, NULL, blurb, G_TYPE_UINT, guint, OFFSET, NULL, flags), \
    (min), (max), (def), 0.0, 0.0, 0.0, NULL, (GCallback) (get), (GCallback) (set) }

/**
 * ACCEL_ACCESSOR_UINT64: (skip)
 * @Type: the instance struct
 * @get: the getter, `guint64 get (Type *self)` (a `gsize` one where that
 *   is the same type)
 * @set: (nullable): the setter, `void set (Type *self, guint64 value)`, or
 *   %NULL for a read-only property
 * @name: the property name
 * @blurb: what it is
 * @min: the smallest value
 * @max: the largest value
 * @def: the default
 * @flags: the #GParamFlags
 *
 * A `guint64` entry of an #AccelPropertyField table read and written
 * through functions.
 */
#define ACCEL_ACCESSOR_UINT64(Type, get, set, name, blurb, min, max, def, flags)                      \
  { ACCEL_ACCESSOR_ENTRY_ (Type, get, set, name, NULL, blurb, G_TYPE_UINT64, guint64, OFFSET, NULL, flags), \
    (gint64) (min), (gint64) (max), (gint64) (def), 0.0, 0.0, 0.0, NULL, (GCallback) (get), (GCallback) (set) }

/**
 * ACCEL_ACCESSOR_ENUM: (skip)
 * @Type: the instance struct
 * @get: the getter, returning a value of the enum type
 * @name: the property name
 * @blurb: what it is
 * @get_type: the enum type's `get_type` function
 * @def: the default
 * @flags: the #GParamFlags (readable only)
 *
 * A read-only enum entry of an #AccelPropertyField table, read through a
 * function.
 */
#define ACCEL_ACCESSOR_ENUM(Type, get, name, blurb, get_type, def, flags)                             \
  { ACCEL_ACCESSOR_ENTRY_ (Type, get, NULL, name, NULL, blurb, G_TYPE_ENUM, int, SIZED, get_type, flags), \
    0, 0, (def), 0.0, 0.0, 0.0, NULL, (GCallback) (get), NULL }

/**
 * ACCEL_ACCESSOR_STRING: (skip)
 * @Type: the instance struct
 * @get: the getter, `const char *get (Type *self)` (transfer none)
 * @name: the property name
 * @blurb: what it is
 * @def: (nullable): the default
 * @flags: the #GParamFlags (readable only)
 *
 * A read-only string entry of an #AccelPropertyField table, read through a
 * function.
 */
#define ACCEL_ACCESSOR_STRING(Type, get, name, blurb, def, flags)                                              \
  { ACCEL_ACCESSOR_ENTRY_ (Type, get, NULL, name, NULL, blurb, G_TYPE_STRING, const char *, OFFSET, NULL, flags), \
    0, 0, 0, 0.0, 0.0, 0.0, (def), (GCallback) (get), NULL }

/**
 * ACCEL_ACCESSOR_VARIANT: (skip)
 * @Type: the instance struct
 * @get: the getter, `GVariant *get (Type *self)`, which returns a new (or
 *   floating) reference
 * @name: the property name
 * @blurb: what it is
 * @type_string: the variant type, as a string (`"a{sv}"`)
 * @flags: the #GParamFlags (readable only)
 *
 * A read-only variant entry of an #AccelPropertyField table, read through
 * a function; its default is %NULL.
 */
#define ACCEL_ACCESSOR_VARIANT(Type, get, name, blurb, type_string, flags)                                   \
  { ACCEL_ACCESSOR_ENTRY_ (Type, get, NULL, name, NULL, blurb, G_TYPE_VARIANT, GVariant *, OFFSET, NULL, flags), \
    0, 0, 0, 0.0, 0.0, 0.0, (type_string), (GCallback) (get), NULL }

/**
 * ACCEL_ACCESSOR_DOUBLE: (skip)
 * @Type: the instance struct
 * @get: the getter, `double get (Type *self)`
 * @name: the property name
 * @blurb: what it is
 * @min: the smallest value
 * @max: the largest value
 * @def: the default
 * @flags: the #GParamFlags (readable only)
 *
 * A read-only `double` entry of an #AccelPropertyField table, read through
 * a function (a statistic computed on read, most often).
 */
#define ACCEL_ACCESSOR_DOUBLE(Type, get, name, blurb, min, max, def, flags)                              \
  { ACCEL_ACCESSOR_ENTRY_ (Type, get, NULL, name, NULL, blurb, G_TYPE_DOUBLE, double, OFFSET, NULL, flags), \
    0, 0, 0, (min), (max), (def), NULL, (GCallback) (get), NULL }

/**
 * ACCEL_ACCESSOR_OBJECT: (skip)
 * @Type: the instance struct
 * @get: the getter, returning a pointer to an object (transfer none)
 * @set: (nullable): the setter, `void set (Type *self, Value *value)`, or
 *   %NULL for a read-only property
 * @name: the property name
 * @blurb: what it is
 * @get_type: the value type's `get_type` function (a class or an interface)
 * @flags: the #GParamFlags
 *
 * An object entry of an #AccelPropertyField table read and written through
 * functions (a setter with more to do than store the object).
 */
#define ACCEL_ACCESSOR_OBJECT(Type, get, set, name, blurb, get_type, flags)                                  \
  { ACCEL_ACCESSOR_ENTRY_ (Type, get, set, name, NULL, blurb, G_TYPE_OBJECT, gpointer, SIZED, get_type, flags), \
    0, 0, 0, 0.0, 0.0, 0.0, NULL, (GCallback) (get), (GCallback) (set) }

/**
 * ACCEL_ACCESSOR_DUP_OBJECT: (skip)
 * @Type: the instance struct
 * @get: the getter, returning a new reference to an object or %NULL
 *   (transfer full: g_weak_ref_get() of a #GWeakRef, most often)
 * @set: (nullable): the setter, `void set (Type *self, Value *value)`, or
 *   %NULL for a read-only property
 * @name: the property name
 * @blurb: what it is
 * @get_type: the value type's `get_type` function (a class or an interface)
 * @flags: the #GParamFlags
 *
 * ACCEL_ACCESSOR_OBJECT() for a getter that returns a new reference, which
 * the property's value takes.
 */
#define ACCEL_ACCESSOR_DUP_OBJECT(Type, get, set, name, blurb, get_type, flags)                              \
  { ACCEL_ACCESSOR_ENTRY_ (Type, get, set, name, NULL, blurb, G_TYPE_OBJECT, gpointer, SIZED, get_type, flags), \
    0, 0, 0, 0.0, 0.0, 0.0, NULL, (GCallback) (get), (GCallback) (set), TRUE }

/**
 * ACCEL_ACCESSOR_DUP_STRING_NICK: (skip)
 * @Type: the instance struct
 * @get: the getter, `char *get (Type *self)`, returning a new string
 *   (transfer full), which the property's value takes: one that copies a
 *   field under a lock
 * @set: (nullable): the setter, `void set (Type *self, const char *value)`,
 *   or %NULL for a read-only property
 * @name: the property name
 * @nick: (nullable): the nick
 * @blurb: what it is
 * @def: (nullable): the default
 * @flags: the #GParamFlags
 *
 * A string entry of an #AccelPropertyField table read and written through
 * functions.
 */
#define ACCEL_ACCESSOR_DUP_STRING_NICK(Type, get, set, name, nick, blurb, def, flags)                  \
  { (name), (nick), (blurb), G_TYPE_STRING, NULL, (GParamFlags) (flags),                               \
    ACCEL_ACCESSOR_TYPED_ (Type, get, set, char *, const char *), 0, 0, 0, 0.0, 0.0, 0.0, (def),        \
    (GCallback) (get), (GCallback) (set), TRUE }

ACCEL_API
void accel_object_class_install_fields (GObjectClass *klass,
                                        const AccelPropertyField *fields,
                                        guint n_fields);
ACCEL_API
void accel_object_class_install_private_fields (GObjectClass *klass,
                                                const AccelPropertyField *fields,
                                                guint n_fields);
ACCEL_API
void accel_object_class_install_locked_fields (GObjectClass *klass,
                                               const AccelPropertyField *fields,
                                               guint n_fields,
                                               guint lock_offset);
ACCEL_API
void accel_object_class_install_private_locked_fields (GObjectClass *klass,
                                                       const AccelPropertyField *fields,
                                                       guint n_fields,
                                                       guint lock_offset);
ACCEL_API
void accel_object_dispose_fields (GObject *object, GType type);
ACCEL_API
void accel_object_finalize_fields (GObject *object, GType type);

G_END_DECLS
