/* accel-op.c: the base of every typed op envelope.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-private.h"

typedef struct {
  int lane;
} AccelOpPrivate;

/**
 * AccelOp:
 *
 * The base of every op type (`gemm`, `fft`, `fill`…). An op's parameters and
 * buffers are GObject properties, so any language can make one by name with
 * accel_op_new_by_name() and set its properties, or build one of the core
 * op classes directly:
 *
 * ```python
 * op = Accel.Op.new_by_name("gemm")
 * op.props.a, op.props.b, op.props.c = a, b, c
 * op2 = Accel.Gemm(a=a, b=b, c=c, alpha=2.0)
 * ```
 *
 * An op is checked (accel_op_validate()) when it is submitted; nothing is
 * launched for an op that fails.
 */
G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (AccelOp, accel_op, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_LANE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* What the runtime knows of an op class, kept as qdata on its GType. */
typedef struct {
  char *name;
  char *description;
  GParamSpec **buffers;   /* NULL until first listed */
  guint n_buffers;
} OpClassInfo;

G_LOCK_DEFINE_STATIC (op_types);
static GHashTable *op_types_by_name;   /* name -> GType */

static GQuark
info_quark (void)
{
  static GQuark q;
  if (G_UNLIKELY (q == 0))
    q = g_quark_from_static_string ("accel-op-class-info");
  return q;
}

static GQuark
access_quark (void)
{
  static GQuark q;
  if (G_UNLIKELY (q == 0))
    q = g_quark_from_static_string ("accel-op-buffer-access");
  return q;
}

static OpClassInfo *
class_info (GType type)
{
  OpClassInfo *info = g_type_get_qdata (type, info_quark ());
  if (info == NULL)
    {
      G_LOCK (op_types);
      info = g_type_get_qdata (type, info_quark ());
      if (info == NULL)
        {
          info = g_new0 (OpClassInfo, 1);
          g_type_set_qdata (type, info_quark (), info);
        }
      G_UNLOCK (op_types);
    }
  return info;
}

static GParamSpec **
class_buffers (GType type, guint *n)
{
  OpClassInfo *info = class_info (type);

  if (g_atomic_pointer_get (&info->buffers) == NULL)
    {
      GObjectClass *klass = g_type_class_ref (type);
      guint n_props;
      GParamSpec **props = g_object_class_list_properties (klass, &n_props);
      GPtrArray *bufs = g_ptr_array_new ();
      for (guint i = 0; i < n_props; i++)
        if (g_param_spec_get_qdata (props[i], access_quark ()) != NULL)
          g_ptr_array_add (bufs, props[i]);
      g_free (props);
      G_LOCK (op_types);
      if (info->buffers == NULL)
        {
          info->n_buffers = bufs->len;
          g_ptr_array_add (bufs, NULL);
          g_atomic_pointer_set (&info->buffers, (GParamSpec **) g_ptr_array_free (bufs, FALSE));
        }
      else
        g_ptr_array_free (bufs, TRUE);
      G_UNLOCK (op_types);
      g_type_class_unref (klass);
    }
  *n = info->n_buffers;
  return info->buffers;
}

GParamSpec **
_accel_op_class_list_buffer_pspecs (AccelOpClass *klass, guint *n)
{
  return class_buffers (G_TYPE_FROM_CLASS (klass), n);
}

static void
register_name (const char *name, GType type)
{
  G_LOCK (op_types);
  if (op_types_by_name == NULL)
    op_types_by_name = g_hash_table_new (g_str_hash, g_str_equal);
  GType old = GPOINTER_TO_SIZE (g_hash_table_lookup (op_types_by_name, name));
  if (old != 0 && old != type)
    g_warning ("Op type name “%s” is taken by %s; %s is not registered under it",
               name, g_type_name (old), g_type_name (type));
  else
    g_hash_table_insert (op_types_by_name, (gpointer) g_intern_string (name), GSIZE_TO_POINTER (type));
  G_UNLOCK (op_types);
}

GType
_accel_op_type_from_name (const char *name)
{
  GType type = 0;
  G_LOCK (op_types);
  if (op_types_by_name)
    type = GPOINTER_TO_SIZE (g_hash_table_lookup (op_types_by_name, name));
  G_UNLOCK (op_types);
  return type;
}

static GType
lookup_type (const char *type_name, GError **error)
{
  GType type = _accel_op_type_from_name (type_name);
  if (type != 0)
    return type;

  /* Maybe a plugin registers it: ask the process's registry. */
  AccelSystem *system = accel_system_get_default ();
  if (system == NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_UNKNOWN_TYPE,
                   "No op type is named “%s”", type_name);
      return 0;
    }
  return accel_registry_lookup_op_type (accel_system_get_registry (system), type_name, error);
}

static void
accel_op_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  AccelOpPrivate *priv = accel_op_get_instance_private (ACCEL_OP (object));
  switch (prop_id)
    {
    case PROP_LANE:
      priv->lane = g_value_get_int (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_op_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  AccelOpPrivate *priv = accel_op_get_instance_private (ACCEL_OP (object));
  switch (prop_id)
    {
    case PROP_LANE:
      g_value_set_int (value, priv->lane);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_op_class_init (AccelOpClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->set_property = accel_op_set_property;
  object_class->get_property = accel_op_get_property;

  /**
   * AccelOp:lane:
   *
   * The lane (stream) to run on, or -1 for the next free one.
   */
  properties[PROP_LANE] =
    g_param_spec_int ("lane", NULL, "Lane to run on, -1 for any", -1, 1024, -1,
                      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
accel_op_init (AccelOp *self)
{
  AccelOpPrivate *priv = accel_op_get_instance_private (self);
  priv->lane = -1;
}

/**
 * accel_op_class_set_metadata:
 * @klass: an op class, in its class_init
 * @name: the op type name users write (`gemm`, `rng-fill`)
 * @description: one line for `accel-inspect`
 *
 * Names an op type.
 */
void
accel_op_class_set_metadata (AccelOpClass *klass, const char *name, const char *description)
{
  g_return_if_fail (ACCEL_IS_OP_CLASS (klass));
  g_return_if_fail (name != NULL);

  OpClassInfo *info = class_info (G_TYPE_FROM_CLASS (klass));
  g_free (info->name);
  g_free (info->description);
  info->name = g_strdup (name);
  info->description = g_strdup (description);
  register_name (name, G_TYPE_FROM_CLASS (klass));
}

/**
 * accel_op_class_install_buffer:
 * @klass: an op class, in its class_init
 * @property_id: the property id the subclass's get/set_property handle
 * @name: the property name
 * @blurb: what the buffer is
 * @access: how the op uses it
 * @required: whether validation fails without it
 *
 * Installs a buffer property (of type #AccelBuffer) and records its access,
 * so the runtime can order work and check generations and devices.
 */
void
accel_op_class_install_buffer (AccelOpClass *klass,
                               guint property_id,
                               const char *name,
                               const char *blurb,
                               AccelAccess access,
                               gboolean required)
{
  g_return_if_fail (ACCEL_IS_OP_CLASS (klass));
  g_return_if_fail (access != 0);

  GParamSpec *pspec = g_param_spec_object (name, NULL, blurb, ACCEL_TYPE_BUFFER,
                                           G_PARAM_READWRITE | G_PARAM_STATIC_NAME | G_PARAM_STATIC_BLURB);
  g_param_spec_set_qdata (pspec, access_quark (),
                          GUINT_TO_POINTER ((guint) access | (required ? 0x100u : 0u)));
  g_object_class_install_property (G_OBJECT_CLASS (klass), property_id, pspec);
}

/**
 * accel_op_class_get_name:
 * @klass: an op class
 *
 * Returns: (nullable): the op type name
 */
const char *
accel_op_class_get_name (AccelOpClass *klass)
{
  g_return_val_if_fail (ACCEL_IS_OP_CLASS (klass), NULL);
  return class_info (G_TYPE_FROM_CLASS (klass))->name;
}

/**
 * accel_op_class_get_description:
 * @klass: an op class
 *
 * Returns: (nullable): the one-line description
 */
const char *
accel_op_class_get_description (AccelOpClass *klass)
{
  g_return_val_if_fail (ACCEL_IS_OP_CLASS (klass), NULL);
  return class_info (G_TYPE_FROM_CLASS (klass))->description;
}

/**
 * accel_op_class_get_buffer_access:
 * @klass: an op class
 * @property: a property name
 *
 * Returns: how the op uses that buffer property, or 0 if it is not one
 */
AccelAccess
accel_op_class_get_buffer_access (AccelOpClass *klass, const char *property)
{
  g_return_val_if_fail (ACCEL_IS_OP_CLASS (klass), 0);
  GParamSpec *pspec = g_object_class_find_property (G_OBJECT_CLASS (klass), property);
  if (pspec == NULL)
    return 0;
  return GPOINTER_TO_UINT (g_param_spec_get_qdata (pspec, access_quark ())) & 0xff;
}

static gboolean
pspec_required (GParamSpec *pspec)
{
  return (GPOINTER_TO_UINT (g_param_spec_get_qdata (pspec, access_quark ())) & 0x100u) != 0;
}

static AccelAccess
pspec_access (GParamSpec *pspec)
{
  return GPOINTER_TO_UINT (g_param_spec_get_qdata (pspec, access_quark ())) & 0xffu;
}

/**
 * accel_op_new: (skip)
 * @type_name: an op type name such as `gemm`
 * @first_property_name: (nullable): the first property to set, then its
 *   value, then more pairs, ending with %NULL
 * @...: the values and further names
 *
 * Makes an op by name, like g_object_new(). An unknown name or property is
 * a programmer error here; use accel_op_new_with_properties() for a #GError.
 *
 * Returns: (transfer full) (nullable): the op
 */
AccelOp *
accel_op_new (const char *type_name, const char *first_property_name, ...)
{
  g_return_val_if_fail (type_name != NULL, NULL);
  g_autoptr(GError) error = NULL;
  GType type = lookup_type (type_name, &error);
  if (type == 0)
    {
      g_critical ("%s", error->message);
      return NULL;
    }
  va_list args;
  va_start (args, first_property_name);
  GObject *op = g_object_new_valist (type, first_property_name, args);
  va_end (args);
  return ACCEL_OP (op);
}

/**
 * accel_op_new_by_name:
 * @type_name: an op type name such as `gemm`
 * @error: return location for a #GError
 *
 * Makes an op with default properties; set them afterwards. Loads the plugin
 * that registers the type if needed.
 *
 * Returns: (transfer full): the op, or %NULL with %ACCEL_ERROR_UNKNOWN_TYPE
 */
AccelOp *
accel_op_new_by_name (const char *type_name, GError **error)
{
  return accel_op_new_with_properties (type_name, 0, NULL, NULL, error);
}

/**
 * accel_op_new_with_properties: (rename-to accel_op_new)
 * @type_name: an op type name
 * @n_properties: how many properties follow
 * @names: (array length=n_properties): property names
 * @values: (array length=n_properties): their values
 * @error: return location for a #GError
 *
 * Returns: (transfer full): the op, or %NULL if the type or a property is unknown
 */
AccelOp *
accel_op_new_with_properties (const char *type_name,
                              guint n_properties,
                              const char **names,
                              const GValue *values,
                              GError **error)
{
  g_return_val_if_fail (type_name != NULL, NULL);

  GType type = lookup_type (type_name, error);
  if (type == 0)
    return NULL;

  GObjectClass *klass = g_type_class_ref (type);
  for (guint i = 0; i < n_properties; i++)
    {
      GParamSpec *pspec = g_object_class_find_property (klass, names[i]);
      if (pspec == NULL)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "Op type “%s” has no property “%s”", type_name, names[i]);
          g_type_class_unref (klass);
          return NULL;
        }
      if (!g_value_type_transformable (G_VALUE_TYPE (&values[i]), pspec->value_type))
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "Property “%s” of “%s” takes %s, not %s", names[i], type_name,
                       g_type_name (pspec->value_type), G_VALUE_TYPE_NAME (&values[i]));
          g_type_class_unref (klass);
          return NULL;
        }
    }
  g_type_class_unref (klass);
  return ACCEL_OP (g_object_new_with_properties (type, n_properties, names, values));
}

/**
 * accel_op_get_type_name:
 * @self: an op
 *
 * Returns: its op type name (`gemm`)
 */
const char *
accel_op_get_type_name (AccelOp *self)
{
  g_return_val_if_fail (ACCEL_IS_OP (self), NULL);
  const char *name = class_info (G_OBJECT_TYPE (self))->name;
  return name ? name : G_OBJECT_TYPE_NAME (self);
}

/**
 * accel_op_get_lane:
 * @self: an op
 *
 * Returns: the lane it asks for, or -1
 */
int
accel_op_get_lane (AccelOp *self)
{
  g_return_val_if_fail (ACCEL_IS_OP (self), -1);
  AccelOpPrivate *priv = accel_op_get_instance_private (self);
  return priv->lane;
}

/**
 * accel_op_set_lane:
 * @self: an op
 * @lane: a lane index, or -1 for any
 *
 * Sets the lane to run on.
 */
void
accel_op_set_lane (AccelOp *self, int lane)
{
  g_return_if_fail (ACCEL_IS_OP (self));
  AccelOpPrivate *priv = accel_op_get_instance_private (self);
  priv->lane = lane;
}

/**
 * accel_op_peek_buffer: (skip)
 * @self: an op
 * @property: a buffer property name
 *
 * Returns: (transfer none) (nullable): the buffer set on @property
 */
AccelBuffer *
accel_op_peek_buffer (AccelOp *self, const char *property)
{
  g_return_val_if_fail (ACCEL_IS_OP (self), NULL);
  GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (self), property);
  g_return_val_if_fail (pspec != NULL && pspec->value_type == ACCEL_TYPE_BUFFER, NULL);

  GValue v = G_VALUE_INIT;
  g_value_init (&v, ACCEL_TYPE_BUFFER);
  g_object_get_property (G_OBJECT (self), property, &v);
  AccelBuffer *buffer = g_value_get_object (&v);
  g_value_unset (&v);   /* the op keeps its own reference */
  return buffer;
}

/**
 * accel_op_get_buffers:
 * @self: an op
 * @access: which buffers: those read, written, or both (any bit matches)
 *
 * Returns: (transfer container) (element-type AccelBuffer): the buffers set
 *   on buffer properties whose access shares a bit with @access
 */
GPtrArray *
accel_op_get_buffers (AccelOp *self, AccelAccess access)
{
  g_return_val_if_fail (ACCEL_IS_OP (self), NULL);
  guint n;
  GParamSpec **pspecs = class_buffers (G_OBJECT_TYPE (self), &n);
  GPtrArray *out = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < n; i++)
    {
      if ((pspec_access (pspecs[i]) & access) == 0)
        continue;
      AccelBuffer *b = accel_op_peek_buffer (self, pspecs[i]->name);
      if (b)
        g_ptr_array_add (out, g_object_ref (b));
    }
  return out;
}

/* Visits every buffer set on @self, with its property. For the runtime. */
void
_accel_op_foreach_buffer (AccelOp *self,
                          void (*func) (AccelOp *, GParamSpec *, AccelBuffer *, AccelAccess, gpointer),
                          gpointer data)
{
  guint n;
  GParamSpec **pspecs = class_buffers (G_OBJECT_TYPE (self), &n);
  for (guint i = 0; i < n; i++)
    {
      AccelBuffer *b = accel_op_peek_buffer (self, pspecs[i]->name);
      if (b)
        func (self, pspecs[i], b, pspec_access (pspecs[i]), data);
    }
}

/**
 * accel_op_validate:
 * @self: an op
 * @error: return location for a #GError
 *
 * Checks that every required buffer is set, then runs the class's own
 * checks. Submission calls this; nothing is launched for an op that fails.
 *
 * Returns: %TRUE if the op is well-formed
 */
gboolean
accel_op_validate (AccelOp *self, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_OP (self), FALSE);

  guint n;
  GParamSpec **pspecs = class_buffers (G_OBJECT_TYPE (self), &n);
  for (guint i = 0; i < n; i++)
    if (pspec_required (pspecs[i]) && accel_op_peek_buffer (self, pspecs[i]->name) == NULL)
      {
        g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                     "Op “%s” needs a buffer in property “%s”",
                     accel_op_get_type_name (self), pspecs[i]->name);
        return FALSE;
      }

  AccelOpClass *klass = ACCEL_OP_GET_CLASS (self);
  if (klass->validate)
    return klass->validate (self, error);
  return TRUE;
}

/* Serialisation: (type name, {property: value}), buffers as handles. */

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
      info->keys = g_new0 (GVariant *, n + 1);
      for (guint i = 0; i < n; i++)
        if ((all[i]->flags & G_PARAM_READWRITE) == G_PARAM_READWRITE)
          {
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
 * (accel_buffer_get_handle()). accel_op_deserialize() reads it back exactly.
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
  g_autofree GVariant **heap_entries = info->n > G_N_ELEMENTS (stack_entries) ? g_new (GVariant *, info->n) : NULL;
  GVariant **entries = heap_entries ? heap_entries : stack_entries;
  guint n = 0;

  for (guint i = 0; i < info->n; i++)
    {
      GParamSpec *pspec = info->pspecs[i];
      GValue v = G_VALUE_INIT;
      g_value_init (&v, pspec->value_type);
      g_object_get_property (G_OBJECT (self), pspec->name, &v);
      GVariant *var = value_to_variant (&v, pspec);
      g_value_unset (&v);
      if (var)
        entries[n++] = g_variant_new_dict_entry (info->keys[i], g_variant_new_variant (var));
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

  GType type = lookup_type (type_name, error);
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
  GVariant *value;
  while (g_variant_iter_next (iter, "{&sv}", &name, &value))
    {
      g_autoptr(GVariant) owned = value;
      GParamSpec *pspec = g_object_class_find_property (klass, name);
      if (pspec == NULL || (pspec->flags & G_PARAM_READWRITE) != G_PARAM_READWRITE)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "Op type “%s” has no writable property “%s”", type_name, name);
          return NULL;
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

/* Validation helpers. */

static AccelBuffer *
need_buffer (AccelOp *self, const char *property, GError **error)
{
  AccelBuffer *b = accel_op_peek_buffer (self, property);
  if (b == NULL)
    g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                 "Op “%s” needs a buffer in property “%s”", accel_op_get_type_name (self), property);
  return b;
}

/**
 * accel_op_check_dtype:
 * @self: an op
 * @property: a buffer property
 * @allowed: (array length=n_allowed): the dtypes accepted
 * @n_allowed: how many
 * @error: return location for a #GError
 *
 * Returns: %TRUE if the buffer's dtype is one of @allowed; else
 *   %ACCEL_ERROR_DTYPE_UNSUPPORTED naming the property
 */
gboolean
accel_op_check_dtype (AccelOp *self, const char *property, const AccelDType *allowed, guint n_allowed, GError **error)
{
  AccelBuffer *b = need_buffer (self, property, error);
  if (b == NULL)
    return FALSE;
  AccelDType dt = accel_buffer_get_dtype (b);
  for (guint i = 0; i < n_allowed; i++)
    if (allowed[i] == dt)
      return TRUE;

  g_autoptr(GString) list = g_string_new (NULL);
  for (guint i = 0; i < n_allowed; i++)
    g_string_append_printf (list, "%s%s", i ? ", " : "", accel_dtype_get_name (allowed[i]));
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED,
               "Property “%s” of “%s” has dtype %s; it takes %s", property,
               accel_op_get_type_name (self), accel_dtype_get_name (dt), list->str);
  return FALSE;
}

/**
 * accel_op_check_same_dtype:
 * @self: an op
 * @property_a: a buffer property
 * @property_b: another
 * @error: return location for a #GError
 *
 * Returns: %TRUE if both buffers have the same dtype
 */
gboolean
accel_op_check_same_dtype (AccelOp *self, const char *property_a, const char *property_b, GError **error)
{
  AccelBuffer *a = need_buffer (self, property_a, error);
  if (a == NULL)
    return FALSE;
  AccelBuffer *b = need_buffer (self, property_b, error);
  if (b == NULL)
    return FALSE;
  if (accel_buffer_get_dtype (a) != accel_buffer_get_dtype (b))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED,
                   "Properties “%s” (%s) and “%s” (%s) of “%s” must have the same dtype",
                   property_a, accel_dtype_get_name (accel_buffer_get_dtype (a)),
                   property_b, accel_dtype_get_name (accel_buffer_get_dtype (b)),
                   accel_op_get_type_name (self));
      return FALSE;
    }
  return TRUE;
}

/**
 * accel_op_check_rank:
 * @self: an op
 * @property: a buffer property
 * @min_rank: smallest rank accepted
 * @max_rank: largest rank accepted
 * @error: return location for a #GError
 *
 * Returns: %TRUE if the buffer's rank is within the bounds; else
 *   %ACCEL_ERROR_SHAPE_MISMATCH naming the property and its shape
 */
gboolean
accel_op_check_rank (AccelOp *self, const char *property, guint min_rank, guint max_rank, GError **error)
{
  AccelBuffer *b = need_buffer (self, property, error);
  if (b == NULL)
    return FALSE;
  guint rank = accel_shape_get_rank (accel_buffer_get_shape (b));
  if (rank < min_rank || rank > max_rank)
    {
      g_autofree char *s = accel_shape_to_string (accel_buffer_get_shape (b));
      if (min_rank == max_rank)
        g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH,
                     "Property “%s” of “%s” has shape %s; it must have rank %u",
                     property, accel_op_get_type_name (self), s, min_rank);
      else
        g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH,
                     "Property “%s” of “%s” has shape %s; it must have rank %u to %u",
                     property, accel_op_get_type_name (self), s, min_rank, max_rank);
      return FALSE;
    }
  return TRUE;
}

/**
 * accel_op_check_contiguous:
 * @self: an op
 * @property: a buffer property
 * @error: return location for a #GError
 *
 * Returns: %TRUE if the buffer's shape is contiguous row-major
 */
gboolean
accel_op_check_contiguous (AccelOp *self, const char *property, GError **error)
{
  AccelBuffer *b = need_buffer (self, property, error);
  if (b == NULL)
    return FALSE;
  if (!accel_shape_is_contiguous (accel_buffer_get_shape (b)))
    {
      g_autofree char *s = accel_shape_to_string (accel_buffer_get_shape (b));
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "Property “%s” of “%s” must be contiguous; its shape is %s",
                   property, accel_op_get_type_name (self), s);
      return FALSE;
    }
  return TRUE;
}
