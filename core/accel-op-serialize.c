/* accel-op-serialize.c: an op as a GVariant and back.
 *
 * `(sa{sv})`: the op type name and every readable and writable property,
 * buffers as their handles, and under the key `@extra` (which no property
 * can have) what the class's serialize_extra adds. This is the form ops cross to a device host
 * in, and the form the replay journal keeps, so the reader treats every
 * byte as hostile. Table parameters are read and written straight from
 * their fields; properties a class handles by hand go through GValues.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-op-private.h"

static GVariant *
value_to_variant (const GValue *value, GParamSpec *pspec)
{
  GType t = G_VALUE_TYPE (value);

  if (t == ACCEL_TYPE_BUFFER)
    {
      AccelBuffer *b = g_value_get_object (value);
      return b ? g_variant_new_uint64 (accel_buffer_get_handle (b)) : NULL;
    }
  if (t == ACCEL_TYPE_SHAPE)
    {
      const AccelShape *s = g_value_get_boxed (value);
      if (s == NULL)
        return NULL;
      guint rank;
      const gint64 *dims = accel_shape_get_dims (s, &rank);
      const gint64 *strides = accel_shape_get_strides (s, &rank);
      return g_variant_new ("(@ax@ax)",
                            g_variant_new_fixed_array (G_VARIANT_TYPE_INT64, dims, rank, sizeof (gint64)),
                            g_variant_new_fixed_array (G_VARIANT_TYPE_INT64, strides, rank, sizeof (gint64)));
    }
  if (G_TYPE_IS_ENUM (t))
    return g_variant_new_int32 (g_value_get_enum (value));
  if (G_TYPE_IS_FLAGS (t))
    return g_variant_new_uint32 (g_value_get_flags (value));

  switch (G_TYPE_FUNDAMENTAL (t))
    {
    case G_TYPE_BOOLEAN: return g_variant_new_boolean (g_value_get_boolean (value));
    case G_TYPE_INT: return g_variant_new_int32 (g_value_get_int (value));
    case G_TYPE_UINT: return g_variant_new_uint32 (g_value_get_uint (value));
    case G_TYPE_INT64: return g_variant_new_int64 (g_value_get_int64 (value));
    case G_TYPE_UINT64: return g_variant_new_uint64 (g_value_get_uint64 (value));
    case G_TYPE_LONG: return g_variant_new_int64 (g_value_get_long (value));
    case G_TYPE_ULONG: return g_variant_new_uint64 (g_value_get_ulong (value));
    case G_TYPE_FLOAT: return g_variant_new_double (g_value_get_float (value));
    case G_TYPE_DOUBLE: return g_variant_new_double (g_value_get_double (value));
    case G_TYPE_STRING:
      return g_value_get_string (value) ? g_variant_new_string (g_value_get_string (value)) : NULL;
    case G_TYPE_VARIANT:
      return g_value_get_variant (value) ? g_variant_new_variant (g_value_get_variant (value)) : NULL;
    default:
      g_warning ("Property “%s” of type %s cannot be serialised", pspec->name, g_type_name (t));
      return NULL;
    }
}

/* A table field as the variant value_to_variant() makes of its property. */
static GVariant *
field_to_variant (AccelOp *self, const AccelOpSlot *slot)
{
  gconstpointer field = G_STRUCT_MEMBER_P (self, slot->offset);
  switch (slot->kind)
    {
    case ACCEL_OP_PARAM_BUFFER:
      {
        AccelBuffer *b = *(AccelBuffer * const *) field;
        return b ? g_variant_new_uint64 (accel_buffer_get_handle (b)) : NULL;
      }
    case ACCEL_OP_PARAM_BOOLEAN: return g_variant_new_boolean (*(const gboolean *) field);
    case ACCEL_OP_PARAM_INT: return g_variant_new_int32 (*(const int *) field);
    case ACCEL_OP_PARAM_UINT: return g_variant_new_uint32 (*(const guint *) field);
    case ACCEL_OP_PARAM_INT64: return g_variant_new_int64 (*(const gint64 *) field);
    case ACCEL_OP_PARAM_UINT64: return g_variant_new_uint64 (*(const guint64 *) field);
    case ACCEL_OP_PARAM_DOUBLE: return g_variant_new_double (*(const double *) field);
    case ACCEL_OP_PARAM_ENUM: return g_variant_new_int32 (*(const int *) field);
    case ACCEL_OP_PARAM_FLAGS: return g_variant_new_uint32 (*(const guint *) field);
    case ACCEL_OP_PARAM_STRING:
      {
        const char *str = *(char * const *) field;
        return str ? g_variant_new_string (str) : NULL;
      }
    case ACCEL_OP_PARAM_OBJECT:
      return NULL;   /* the class's serialize_extra says what is needed of it */
    default:
      g_return_val_if_reached (NULL);
    }
}

/* Writes a serialised value into a table field; its range is checked
 * like every submitted op's. */
static gboolean
variant_to_field (AccelOp *op, const AccelOpSlot *slot, GVariant *var,
                  AccelBufferResolveFunc resolve, gpointer user_data, GError **error)
{
  static const GVariantType *const types[] = {
    [ACCEL_OP_PARAM_BUFFER] = G_VARIANT_TYPE_UINT64,
    [ACCEL_OP_PARAM_BOOLEAN] = G_VARIANT_TYPE_BOOLEAN,
    [ACCEL_OP_PARAM_INT] = G_VARIANT_TYPE_INT32,
    [ACCEL_OP_PARAM_UINT] = G_VARIANT_TYPE_UINT32,
    [ACCEL_OP_PARAM_INT64] = G_VARIANT_TYPE_INT64,
    [ACCEL_OP_PARAM_UINT64] = G_VARIANT_TYPE_UINT64,
    [ACCEL_OP_PARAM_DOUBLE] = G_VARIANT_TYPE_DOUBLE,
    [ACCEL_OP_PARAM_ENUM] = G_VARIANT_TYPE_INT32,
    [ACCEL_OP_PARAM_FLAGS] = G_VARIANT_TYPE_UINT32,
    [ACCEL_OP_PARAM_STRING] = G_VARIANT_TYPE_STRING,
  };
  const char *name = slot->pspec->name;
  gpointer field = G_STRUCT_MEMBER_P (op, slot->offset);

  if (slot->kind >= G_N_ELEMENTS (types) || types[slot->kind] == NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "Property “%s” is not serialised; it cannot be read from a serialised op", name);
      return FALSE;
    }
  if (!g_variant_is_of_type (var, types[slot->kind]))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "Serialised property “%s” has type “%s”, expected “%s”", name,
                   g_variant_get_type_string (var), (const char *) types[slot->kind]);
      return FALSE;
    }
  switch (slot->kind)
    {
    case ACCEL_OP_PARAM_BUFFER:
      {
        guint64 handle = g_variant_get_uint64 (var);
        AccelBuffer *b = resolve ? resolve (handle, user_data) : NULL;
        if (b == NULL)
          {
            g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER,
                         "Property “%s” names buffer handle %" G_GUINT64_FORMAT ", which is not known here",
                         name, handle);
            return FALSE;
          }
        AccelBuffer **f = field;
        g_clear_object (f);
        *f = b;   /* resolve gave a reference */
        return TRUE;
      }
    case ACCEL_OP_PARAM_BOOLEAN: *(gboolean *) field = g_variant_get_boolean (var); break;
    case ACCEL_OP_PARAM_INT: *(int *) field = g_variant_get_int32 (var); break;
    case ACCEL_OP_PARAM_UINT: *(guint *) field = g_variant_get_uint32 (var); break;
    case ACCEL_OP_PARAM_INT64: *(gint64 *) field = g_variant_get_int64 (var); break;
    case ACCEL_OP_PARAM_UINT64: *(guint64 *) field = g_variant_get_uint64 (var); break;
    case ACCEL_OP_PARAM_DOUBLE: *(double *) field = g_variant_get_double (var); break;
    case ACCEL_OP_PARAM_ENUM: *(int *) field = g_variant_get_int32 (var); break;
    case ACCEL_OP_PARAM_FLAGS: *(guint *) field = g_variant_get_uint32 (var); break;
    case ACCEL_OP_PARAM_STRING:
      g_free (*(char **) field);
      *(char **) field = g_variant_dup_string (var, NULL);
      return TRUE;
    default:
      g_return_val_if_reached (FALSE);
    }
  /* Values out of the property's range are refused, not clamped. */
  return _accel_op_slot_check (op, slot, error);
}

/* What serialising an op of one class needs, made once per class:
 * serialising is on every op's path to a device host, and listing a
 * class's properties allocates and walks its whole ancestry. A class's
 * properties are all installed in its class_init, so the list never
 * changes; it is kept as qdata of the type for the life of the process
 * (op types are never unregistered), with the dictionary keys and the type
 * name already made as (trusted, sunk) variants. */
typedef struct {
  GVariant *type_name;
  guint n;
  GParamSpec **pspecs;          /* the readable and writable properties */
  const AccelOpSlot **slots;    /* their table slots, NULL for those handled by hand */
  GVariant **keys;              /* their names */
} SerializeInfo;

static const SerializeInfo *
serialize_info (AccelOp *op)
{
  static GMutex lock;
  static gsize quark_once = 0;
  GObjectClass *klass = G_OBJECT_GET_CLASS (op);
  GType type = G_OBJECT_CLASS_TYPE (klass);

  if (g_once_init_enter (&quark_once))
    g_once_init_leave (&quark_once, g_quark_from_static_string ("accel-op-serialize-info"));
  GQuark quark = (GQuark) quark_once;
  SerializeInfo *info = g_type_get_qdata (type, quark);
  if (G_LIKELY (info != NULL))
    return info;

  g_mutex_lock (&lock);
  info = g_type_get_qdata (type, quark);
  if (info == NULL)
    {
      guint n;
      g_autofree GParamSpec **all = g_object_class_list_properties (klass, &n);
      info = g_new0 (SerializeInfo, 1);
      info->type_name = g_variant_ref_sink (g_variant_new_string (accel_op_get_type_name (op)));
      info->pspecs = g_new0 (GParamSpec *, n + 1);
      info->slots = g_new0 (const AccelOpSlot *, n + 1);
      info->keys = g_new0 (GVariant *, n + 1);
      for (guint i = 0; i < n; i++)
        if ((all[i]->flags & G_PARAM_READWRITE) == G_PARAM_READWRITE)
          {
            const AccelOpSlot *slot = _accel_op_slot_of_pspec (all[i]);
            info->slots[info->n] = slot != NULL && slot->offset >= 0 ? slot : NULL;
            info->pspecs[info->n] = all[i];
            info->keys[info->n] = g_variant_ref_sink (g_variant_new_string (all[i]->name));
            info->n++;
          }
      g_type_set_qdata (type, quark, info);
    }
  g_mutex_unlock (&lock);
  return info;
}

/**
 * accel_op_serialize:
 * @self: an op
 *
 * Writes the op as a #GVariant of type `(sa{sv})`: its type name and every
 * readable and writable property, buffers as their handles
 * (accel_buffer_get_handle()), and, under the key `@extra`, what the class
 * adds with #AccelOpClass.serialize_extra. accel_op_deserialize() reads it
 * back exactly.
 *
 * Returns: (transfer full): a new, non-floating variant
 */
GVariant *
accel_op_serialize (AccelOp *self)
{
  g_return_val_if_fail (ACCEL_IS_OP (self), NULL);

  const SerializeInfo *info = serialize_info (self);
  /* Built from values, without format strings or a builder: this is on
   * every remote op's path. */
  GVariant *stack_entries[32];
  g_autofree GVariant **heap_entries = info->n + 1 > G_N_ELEMENTS (stack_entries) ? g_new (GVariant *, info->n + 1)
                                                                                : NULL;
  GVariant **entries = heap_entries ? heap_entries : stack_entries;
  guint n = 0;

  for (guint i = 0; i < info->n; i++)
    {
      GVariant *var;
      if (info->slots[i] != NULL)
        var = field_to_variant (self, info->slots[i]);
      else
        {
          GParamSpec *pspec = info->pspecs[i];
          GValue v = G_VALUE_INIT;
          g_value_init (&v, pspec->value_type);
          g_object_get_property (G_OBJECT (self), pspec->name, &v);
          var = value_to_variant (&v, pspec);
          g_value_unset (&v);
        }
      if (var)
        entries[n++] = g_variant_new_dict_entry (info->keys[i], g_variant_new_variant (var));
    }
  AccelOpClass *klass = ACCEL_OP_GET_CLASS (self);
  if (klass->serialize_extra)
    {
      GVariant *extra = klass->serialize_extra (self);
      if (extra)
        entries[n++] = g_variant_new_dict_entry (g_variant_new_string (ACCEL_OP_EXTRA_KEY),
                                                 g_variant_new_variant (extra));
    }
  GVariant *fields[2] = { info->type_name, g_variant_new_array (G_VARIANT_TYPE ("{sv}"), entries, n) };
  return g_variant_ref_sink (g_variant_new_tuple (fields, 2));
}

static gboolean
variant_to_value (GVariant *var, GParamSpec *pspec, GValue *value,
                  AccelBufferResolveFunc resolve, gpointer user_data, GError **error)
{
  GType t = pspec->value_type;
  const GVariantType *want = NULL;

#define EXPECT(vt) G_STMT_START { want = (vt); if (!g_variant_is_of_type (var, want)) goto bad_type; } G_STMT_END

  g_value_init (value, t);
  if (t == ACCEL_TYPE_BUFFER)
    {
      EXPECT (G_VARIANT_TYPE_UINT64);
      guint64 handle = g_variant_get_uint64 (var);
      AccelBuffer *b = resolve ? resolve (handle, user_data) : NULL;
      if (b == NULL)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER,
                       "Property “%s” names buffer handle %" G_GUINT64_FORMAT ", which is not known here",
                       pspec->name, handle);
          return FALSE;
        }
      g_value_take_object (value, b);
      return TRUE;
    }
  if (t == ACCEL_TYPE_SHAPE)
    {
      EXPECT (G_VARIANT_TYPE ("(axax)"));
      g_autoptr(GVariant) dv = g_variant_get_child_value (var, 0);
      g_autoptr(GVariant) sv = g_variant_get_child_value (var, 1);
      gsize nd, ns;
      const gint64 *dims = g_variant_get_fixed_array (dv, &nd, sizeof (gint64));
      const gint64 *strides = g_variant_get_fixed_array (sv, &ns, sizeof (gint64));
      if (nd != ns || nd > ACCEL_SHAPE_MAX_RANK)
        goto bad_type;
      for (gsize i = 0; i < nd; i++)
        if (dims[i] < 0)
          goto bad_type;
      g_value_take_boxed (value, accel_shape_new_strided (dims, strides, nd));
      return TRUE;
    }
  if (G_TYPE_IS_ENUM (t))
    {
      EXPECT (G_VARIANT_TYPE_INT32);
      g_value_set_enum (value, g_variant_get_int32 (var));
    }
  else if (G_TYPE_IS_FLAGS (t))
    {
      EXPECT (G_VARIANT_TYPE_UINT32);
      g_value_set_flags (value, g_variant_get_uint32 (var));
    }
  else
    switch (G_TYPE_FUNDAMENTAL (t))
      {
      case G_TYPE_BOOLEAN: EXPECT (G_VARIANT_TYPE_BOOLEAN); g_value_set_boolean (value, g_variant_get_boolean (var)); break;
      case G_TYPE_INT: EXPECT (G_VARIANT_TYPE_INT32); g_value_set_int (value, g_variant_get_int32 (var)); break;
      case G_TYPE_UINT: EXPECT (G_VARIANT_TYPE_UINT32); g_value_set_uint (value, g_variant_get_uint32 (var)); break;
      case G_TYPE_INT64: EXPECT (G_VARIANT_TYPE_INT64); g_value_set_int64 (value, g_variant_get_int64 (var)); break;
      case G_TYPE_UINT64: EXPECT (G_VARIANT_TYPE_UINT64); g_value_set_uint64 (value, g_variant_get_uint64 (var)); break;
      case G_TYPE_LONG: EXPECT (G_VARIANT_TYPE_INT64); g_value_set_long (value, g_variant_get_int64 (var)); break;
      case G_TYPE_ULONG: EXPECT (G_VARIANT_TYPE_UINT64); g_value_set_ulong (value, g_variant_get_uint64 (var)); break;
      case G_TYPE_FLOAT: EXPECT (G_VARIANT_TYPE_DOUBLE); g_value_set_float (value, g_variant_get_double (var)); break;
      case G_TYPE_DOUBLE: EXPECT (G_VARIANT_TYPE_DOUBLE); g_value_set_double (value, g_variant_get_double (var)); break;
      case G_TYPE_STRING: EXPECT (G_VARIANT_TYPE_STRING); g_value_set_string (value, g_variant_get_string (var, NULL)); break;
      case G_TYPE_VARIANT: EXPECT (G_VARIANT_TYPE_VARIANT); g_value_take_variant (value, g_variant_get_variant (var)); break;
      default:
        goto bad_type;
      }

  /* Values out of the property's range are refused, not clamped. */
  if (g_param_value_validate (pspec, value))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "Serialised value of property “%s” is out of its range", pspec->name);
      return FALSE;
    }
  return TRUE;

bad_type:
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
               "Serialised property “%s” has type “%s”, expected “%s”", pspec->name,
               g_variant_get_type_string (var), want ? (const char *) want : "a valid value");
  return FALSE;
#undef EXPECT
}

/**
 * accel_op_deserialize:
 * @variant: a `(sa{sv})` variant made by accel_op_serialize()
 * @resolve: (scope call) (nullable): maps buffer handles to buffers
 * @user_data: data for @resolve
 * @error: return location for a #GError
 *
 * Rebuilds an op. Nothing in @variant is trusted: an unknown type, property,
 * value type or buffer handle is an error.
 *
 * Returns: (transfer full): the op, or %NULL with @error set
 */
AccelOp *
accel_op_deserialize (GVariant *variant,
                      AccelBufferResolveFunc resolve,
                      gpointer user_data,
                      GError **error)
{
  g_return_val_if_fail (variant != NULL, NULL);

  if (!g_variant_is_of_type (variant, G_VARIANT_TYPE ("(sa{sv})")))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "A serialised op has type (sa{sv}), not %s", g_variant_get_type_string (variant));
      return NULL;
    }

  const char *type_name;
  g_autoptr(GVariantIter) iter = NULL;
  g_variant_get (variant, "(&sa{sv})", &type_name, &iter);

  GType type = _accel_op_lookup_type (type_name, error);
  if (type == 0)
    return NULL;
  if (!g_type_is_a (type, ACCEL_TYPE_OP))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_UNKNOWN_TYPE, "“%s” is not an op type", type_name);
      return NULL;
    }

  g_autoptr(AccelOp) op = g_object_new (type, NULL);
  GObjectClass *klass = G_OBJECT_GET_CLASS (op);
  const char *name;
  GVariant *next;
  AccelOpClass *op_class = ACCEL_OP_GET_CLASS (op);
  while (g_variant_iter_next (iter, "{&sv}", &name, &next))
    {
      g_autoptr(GVariant) value = next;
      if (strcmp (name, ACCEL_OP_EXTRA_KEY) == 0 && op_class->deserialize_extra)
        {
          if (!op_class->deserialize_extra (op, value, resolve, user_data, error))
            return NULL;
          continue;
        }
      GParamSpec *pspec = g_object_class_find_property (klass, name);
      if (pspec == NULL || (pspec->flags & G_PARAM_READWRITE) != G_PARAM_READWRITE)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "Op type “%s” has no writable property “%s”", type_name, name);
          return NULL;
        }
      const AccelOpSlot *slot = _accel_op_slot_of_pspec (pspec);
      if (slot != NULL && slot->offset >= 0)
        {
          if (!variant_to_field (op, slot, value, resolve, user_data, error))
            return NULL;
          continue;
        }
      GValue v = G_VALUE_INIT;
      if (!variant_to_value (value, pspec, &v, resolve, user_data, error))
        {
          if (G_IS_VALUE (&v))
            g_value_unset (&v);
          return NULL;
        }
      g_object_set_property (G_OBJECT (op), name, &v);
      g_value_unset (&v);
    }
  return g_steal_pointer (&op);
}

