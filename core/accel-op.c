/* accel-op.c: the base of every typed op envelope.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-op-private.h"

typedef struct {
  int lane;
  guint64 serial;
  guint changes;             /* atomic: property notifications so far */
  /* The last successful check for a device (see _accel_op_ready_*): */
  gint ready_lock;           /* bit 0, g_bit_lock() */
  gboolean ready;
  guint ready_changes;
  guint64 ready_device;      /* the device's serial */
  guint ready_kernels;       /* the registry's kernels serial */
  gconstpointer ready_kernel;
  /* The body it was last sent to a device host with (see _accel_op_kept_body_*), under ready_lock: */
  GVariant *kept_body;
  guint kept_body_changes;
  guint64 kept_body_connection;   /* the connection's serial */
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
 *
 * A core op type's public instance fields hold its properties, for kernels
 * to read: each in a field of its name with `_` for `-`, or a group of them
 * in a struct field (an #AccelImage for `src`, `src-format`, `src-width`…;
 * #AccelConv2dParams for a convolution's geometry). They are documented as
 * the properties; set them through the properties.
 */
G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (AccelOp, accel_op, G_TYPE_OBJECT)

static const AccelPropertyField op_fields[] = {
  /**
   * AccelOp:lane:
   *
   * The lane (stream) to run on, or -1 for the next free one.
   */
  ACCEL_FIELD_INT (AccelOpPrivate, lane, "lane", "Lane to run on, -1 for any", -1, ACCEL_LANE_MAX, -1,
                   G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS),
};

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
slot_quark (void)
{
  static GQuark q;
  if (G_UNLIKELY (q == 0))
    q = g_quark_from_static_string ("accel-op-slot");
  return q;
}

AccelOpClassInfo *
_accel_op_class_info (GType type)
{
  AccelOpClassInfo *info = g_type_get_qdata (type, info_quark ());
  if (info == NULL)
    {
      G_LOCK (op_types);
      info = g_type_get_qdata (type, info_quark ());
      if (info == NULL)
        {
          info = g_new0 (AccelOpClassInfo, 1);
          g_type_set_qdata (type, info_quark (), info);
        }
      G_UNLOCK (op_types);
    }
  return info;
}

const AccelOpSlot *
_accel_op_slot_of_pspec (GParamSpec *pspec)
{
  return g_param_spec_get_qdata (pspec, slot_quark ());
}

AccelOpSlot *
_accel_op_slot_new_buffer (GParamSpec *pspec, AccelAccess access, gboolean required)
{
  AccelOpSlot *slot = g_new0 (AccelOpSlot, 1);
  slot->pspec = pspec;
  slot->kind = ACCEL_OP_PARAM_BUFFER;
  slot->offset = -1;
  slot->access = access;
  slot->flags = required ? ACCEL_OP_PARAM_REQUIRED : 0;
  g_param_spec_set_qdata (pspec, slot_quark (), slot);
  return slot;
}

/* The flat lists of a class: its table slots and those of its ancestors
 * (the order their properties were installed in), and every buffer slot in
 * the order of g_object_class_list_properties(), which serialisation uses
 * too. A class's properties are all installed in its class_init, so the
 * lists are made once and kept for the life of the process. */
const AccelOpClassInfo *
_accel_op_class_info_flat (GType type)
{
  AccelOpClassInfo *info = _accel_op_class_info (type);
  if (G_LIKELY (g_atomic_int_get (&info->flat)))
    return info;

  GObjectClass *klass = g_type_class_ref (type);
  GPtrArray *params = g_ptr_array_new ();
  GPtrArray *buffers = g_ptr_array_new ();

  guint depth = g_type_depth (type), op_depth = g_type_depth (ACCEL_TYPE_OP);
  for (guint d = op_depth + 1; d <= depth; d++)
    {
      GType t = type;
      while (g_type_depth (t) > d)
        t = g_type_parent (t);
      AccelOpClassInfo *ti = _accel_op_class_info (t);
      if (ti->own != NULL)
        for (guint i = 0; i < ti->own->len; i++)
          g_ptr_array_add (params, g_ptr_array_index (ti->own, i));
    }

  guint n_props;
  g_autofree GParamSpec **props = g_object_class_list_properties (klass, &n_props);
  for (guint i = 0; i < n_props; i++)
    {
      const AccelOpSlot *slot = _accel_op_slot_of_pspec (props[i]);
      if (slot != NULL && slot->kind == ACCEL_OP_PARAM_BUFFER)
        g_ptr_array_add (buffers, (gpointer) slot);
    }

  G_LOCK (op_types);
  if (!info->flat)
    {
      info->n_params = params->len;
      g_ptr_array_add (params, NULL);
      info->params = (const AccelOpSlot **) g_ptr_array_free (params, FALSE);
      info->n_buffers = buffers->len;
      g_ptr_array_add (buffers, NULL);
      info->buffers = (const AccelOpSlot **) g_ptr_array_free (buffers, FALSE);
      g_atomic_int_set (&info->flat, TRUE);
    }
  else
    {
      g_ptr_array_free (params, TRUE);
      g_ptr_array_free (buffers, TRUE);
    }
  G_UNLOCK (op_types);
  g_type_class_unref (klass);
  return info;
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

static GPtrArray *type_sources;   /* GWeakRef to AccelRegistry; under op_types */

void
_accel_op_add_type_source (AccelRegistry *registry)
{
  GWeakRef *ref = g_new0 (GWeakRef, 1);
  g_weak_ref_init (ref, registry);
  G_LOCK (op_types);
  if (type_sources == NULL)
    type_sources = g_ptr_array_new ();
  g_ptr_array_add (type_sources, ref);
  G_UNLOCK (op_types);
}

/* Drops @registry, and any source already gone. */
void
_accel_op_remove_type_source (AccelRegistry *registry)
{
  G_LOCK (op_types);
  for (guint i = 0; type_sources != NULL && i < type_sources->len;)
    {
      GWeakRef *ref = type_sources->pdata[i];
      gpointer r = g_weak_ref_get (ref);
      if (r == NULL || r == (gpointer) registry)
        {
          g_ptr_array_remove_index_fast (type_sources, i);
          g_weak_ref_clear (ref);
          g_free (ref);
        }
      else
        i++;
      if (r != NULL)
        g_object_unref (r);
    }
  G_UNLOCK (op_types);
}

/* The op type named @type_name: a core type, one already registered, or
 * one a plugin registers, which an open registry loads. Nothing here
 * makes a system or scans plugins as a side effect. */
GType
_accel_op_lookup_type (const char *type_name, GError **error)
{
  _accel_ops_ensure_core ();
  GType type = _accel_op_type_from_name (type_name);
  if (type != 0)
    return type;

  g_autoptr(GPtrArray) sources = g_ptr_array_new_with_free_func (g_object_unref);
  G_LOCK (op_types);
  for (guint i = 0; type_sources != NULL && i < type_sources->len; i++)
    {
      gpointer r = g_weak_ref_get (type_sources->pdata[i]);
      if (r != NULL)
        g_ptr_array_add (sources, r);
    }
  G_UNLOCK (op_types);

  for (guint i = 0; i < sources->len; i++)
    {
      g_autoptr(GError) local = NULL;
      type = accel_registry_lookup_op_type (sources->pdata[i], type_name, &local);
      if (type != 0)
        return type;
      if (!g_error_matches (local, ACCEL_ERROR, ACCEL_ERROR_UNKNOWN_TYPE))
        {
          /* Its plugin is known but failed to load: say why. */
          g_propagate_error (error, g_steal_pointer (&local));
          return 0;
        }
    }
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_UNKNOWN_TYPE,
               sources->len ? "No op type is named “%s”"
                            : "No op type is named “%s” (plugin op types are known once an AccelSystem exists)",
               type_name);
  return 0;
}

/* The table defaults are set once the op is made and before the properties
 * given to g_object_new() are: the table is the one place a default is
 * written. */
static void
accel_op_constructed (GObject *object)
{
  _accel_op_params_set_defaults (ACCEL_OP (object));
  G_OBJECT_CLASS (accel_op_parent_class)->constructed (object);
}

static void
accel_op_dispose (GObject *object)
{
  _accel_op_params_dispose (ACCEL_OP (object));
  G_OBJECT_CLASS (accel_op_parent_class)->dispose (object);
}

static void
accel_op_finalize (GObject *object)
{
  AccelOpPrivate *priv = accel_op_get_instance_private (ACCEL_OP (object));
  g_clear_pointer (&priv->kept_body, g_variant_unref);
  _accel_op_params_finalize (ACCEL_OP (object));
  G_OBJECT_CLASS (accel_op_parent_class)->finalize (object);
}

/* Every property change that notifies passes here: a table parameter
 * notifies when its value changes, a buffer when it is replaced. */
static void
accel_op_dispatch_properties_changed (GObject *object, guint n_pspecs, GParamSpec **pspecs)
{
  AccelOpPrivate *priv = accel_op_get_instance_private (ACCEL_OP (object));
  g_atomic_int_inc (&priv->changes);
  G_OBJECT_CLASS (accel_op_parent_class)->dispatch_properties_changed (object, n_pspecs, pspecs);
}

guint
_accel_op_get_changes (AccelOp *self)
{
  AccelOpPrivate *priv = accel_op_get_instance_private (self);
  return (guint) g_atomic_int_get (&priv->changes);
}

guint64
_accel_op_get_serial (AccelOp *self)
{
  AccelOpPrivate *priv = accel_op_get_instance_private (self);
  return priv->serial;
}

gboolean
_accel_op_ready_lookup (AccelOp *self, guint64 device, guint kernels, guint changes, gconstpointer *kernel)
{
  AccelOpPrivate *priv = accel_op_get_instance_private (self);
  g_bit_lock (&priv->ready_lock, 0);
  gboolean hit = priv->ready && priv->ready_changes == changes && priv->ready_device == device
                 && priv->ready_kernels == kernels;
  if (hit)
    *kernel = priv->ready_kernel;
  g_bit_unlock (&priv->ready_lock, 0);
  return hit;
}

void
_accel_op_ready_store (AccelOp *self, guint64 device, guint kernels, guint changes, gconstpointer kernel)
{
  AccelOpPrivate *priv = accel_op_get_instance_private (self);
  g_bit_lock (&priv->ready_lock, 0);
  priv->ready = TRUE;
  priv->ready_changes = changes;
  priv->ready_device = device;
  priv->ready_kernels = kernels;
  priv->ready_kernel = kernel;
  g_bit_unlock (&priv->ready_lock, 0);
}

GVariant *
_accel_op_kept_body_get (AccelOp *self, guint64 connection, guint changes)
{
  AccelOpPrivate *priv = accel_op_get_instance_private (self);
  GVariant *body = NULL;
  g_bit_lock (&priv->ready_lock, 0);
  if (priv->kept_body && priv->kept_body_changes == changes && priv->kept_body_connection == connection)
    body = g_variant_ref (priv->kept_body);
  g_bit_unlock (&priv->ready_lock, 0);
  return body;
}

void
_accel_op_kept_body_set (AccelOp *self, guint64 connection, guint changes, GVariant *body)
{
  AccelOpPrivate *priv = accel_op_get_instance_private (self);
  GVariant *old;
  g_bit_lock (&priv->ready_lock, 0);
  old = priv->kept_body;
  priv->kept_body = g_variant_ref (body);
  priv->kept_body_changes = changes;
  priv->kept_body_connection = connection;
  g_bit_unlock (&priv->ready_lock, 0);
  if (old)
    g_variant_unref (old);
}

static void
accel_op_class_init (AccelOpClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispatch_properties_changed = accel_op_dispatch_properties_changed;
  object_class->constructed = accel_op_constructed;
  object_class->dispose = accel_op_dispose;
  object_class->finalize = accel_op_finalize;

  accel_object_class_install_private_fields (object_class, op_fields, G_N_ELEMENTS (op_fields));
}

static void
accel_op_init (AccelOp *self)
{
  static guint64 next_serial;
  AccelOpPrivate *priv = accel_op_get_instance_private (self);
  priv->lane = -1;
  priv->serial = __atomic_add_fetch (&next_serial, 1, __ATOMIC_RELAXED);
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

  AccelOpClassInfo *info = _accel_op_class_info (G_TYPE_FROM_CLASS (klass));
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
 * Installs a buffer property (of type #AccelBuffer) that the subclass gets
 * and sets itself, and records its access, so the runtime can order work
 * and check generations and devices. An op class with a parameter table
 * (accel_op_class_install_params()) lists its buffers there instead.
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
  _accel_op_slot_new_buffer (pspec, access, required);
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
  return _accel_op_class_info (G_TYPE_FROM_CLASS (klass))->name;
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
  return _accel_op_class_info (G_TYPE_FROM_CLASS (klass))->description;
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
  const AccelOpSlot *slot = _accel_op_slot_of_pspec (pspec);
  return slot != NULL && slot->kind == ACCEL_OP_PARAM_BUFFER ? slot->access : 0;
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
  GType type = _accel_op_lookup_type (type_name, &error);
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
 * Makes an op by name with the properties given, loading the plugin that
 * registers the type if need be; the binding-friendly form of
 * accel_op_new(). A value out of a property's range is accepted here and
 * refused by accel_op_validate().
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

  GType type = _accel_op_lookup_type (type_name, error);
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
 * The name users write for the op's type, as accel_op_new_by_name() takes it.
 *
 * Returns: its op type name (`gemm`)
 */
const char *
accel_op_get_type_name (AccelOp *self)
{
  g_return_val_if_fail (ACCEL_IS_OP (self), NULL);
  const char *name = _accel_op_class_info (G_OBJECT_TYPE (self))->name;
  return name ? name : G_OBJECT_TYPE_NAME (self);
}

/**
 * accel_op_get_lane:
 * @self: an op
 *
 * The lane (stream) the op asks to run on (#AccelOp:lane).
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
 * Sets the lane to run on (#AccelOp:lane), and notifies where it changes.
 */
void
accel_op_set_lane (AccelOp *self, int lane)
{
  g_return_if_fail (ACCEL_IS_OP (self));
  g_return_if_fail (lane >= -1 && lane <= ACCEL_LANE_MAX);
  AccelOpPrivate *priv = accel_op_get_instance_private (self);
  if (priv->lane == lane)
    return;
  /* A change, like any property's: an op sent to a device host before is
   * sent again with new bytes, not the ones kept from last time. */
  priv->lane = lane;
  g_object_notify (G_OBJECT (self), "lane");
}

static const AccelOpSlot *
find_buffer_slot (AccelOp *self, const char *property)
{
  const AccelOpClassInfo *info = _accel_op_class_info_flat (G_OBJECT_TYPE (self));
  for (guint i = 0; i < info->n_buffers; i++)
    if (strcmp (info->buffers[i]->pspec->name, property) == 0)
      return info->buffers[i];
  return NULL;
}

/**
 * accel_op_peek_buffer: (skip)
 * @self: an op
 * @property: a buffer property name
 *
 * Reads a buffer property without taking a reference: for validate
 * implementations and kernels.
 *
 * Returns: (transfer none) (nullable): the buffer set on @property
 */
AccelBuffer *
accel_op_peek_buffer (AccelOp *self, const char *property)
{
  g_return_val_if_fail (ACCEL_IS_OP (self), NULL);
  const AccelOpSlot *slot = find_buffer_slot (self, property);
  g_return_val_if_fail (slot != NULL, NULL);
  return _accel_op_slot_peek_buffer (self, slot);
}

static guint
n_extra_buffers (AccelOp *self)
{
  AccelOpClass *klass = ACCEL_OP_GET_CLASS (self);
  return klass->get_n_extra_buffers ? klass->get_n_extra_buffers (self) : 0;
}

/**
 * accel_op_get_n_buffer_slots:
 * @self: an op
 *
 * How many buffers the op can name: its class's buffer properties, set or
 * not, then the extra buffers of this instance (the arguments of a
 * `launch`, the buffers of a recorded graph): the slots
 * accel_op_peek_buffer_slot() reads.
 *
 * Returns: the number of buffer slots
 */
guint
accel_op_get_n_buffer_slots (AccelOp *self)
{
  g_return_val_if_fail (ACCEL_IS_OP (self), 0);
  return _accel_op_class_info_flat (G_OBJECT_TYPE (self))->n_buffers + n_extra_buffers (self);
}

/**
 * accel_op_peek_buffer_slot: (skip)
 * @self: an op
 * @slot: a slot index, below accel_op_get_n_buffer_slots()
 * @access: (out) (optional): how the op uses the buffer
 * @property: (out) (optional) (transfer none) (nullable): the property's
 *   name, %NULL for an extra buffer
 *
 * Reads one buffer by its index, without a lookup by name: the walk over
 * an op's buffers that backends make on every op.
 *
 * Returns: (transfer none) (nullable): the buffer, or %NULL if it is unset
 */
AccelBuffer *
accel_op_peek_buffer_slot (AccelOp *self, guint slot, AccelAccess *access, const char **property)
{
  g_return_val_if_fail (ACCEL_IS_OP (self), NULL);
  const AccelOpClassInfo *info = _accel_op_class_info_flat (G_OBJECT_TYPE (self));
  if (slot >= info->n_buffers)
    {
      AccelOpClass *klass = ACCEL_OP_GET_CLASS (self);
      g_return_val_if_fail (slot - info->n_buffers < n_extra_buffers (self), NULL);
      AccelAccess a = 0;
      AccelBuffer *b = klass->peek_extra_buffer (self, slot - info->n_buffers, &a);
      if (access)
        *access = a;
      if (property)
        *property = NULL;
      return b;
    }
  const AccelOpSlot *s = info->buffers[slot];
  if (access)
    *access = s->access;
  if (property)
    *property = s->pspec->name;
  return _accel_op_slot_peek_buffer (self, s);
}

/**
 * accel_op_get_buffers:
 * @self: an op
 * @access: which buffers: those read, written, or both (any bit matches)
 *
 * Lists the buffers set on the op, as the runtime walks them to order work
 * and check devices and generations.
 *
 * Returns: (transfer container) (element-type AccelBuffer): the buffers set
 *   on buffer properties, and the op's extra buffers, whose access shares a
 *   bit with @access
 */
GPtrArray *
accel_op_get_buffers (AccelOp *self, AccelAccess access)
{
  g_return_val_if_fail (ACCEL_IS_OP (self), NULL);
  GPtrArray *out = g_ptr_array_new_with_free_func (g_object_unref);
  guint n = accel_op_get_n_buffer_slots (self);
  for (guint i = 0; i < n; i++)
    {
      AccelAccess a = 0;
      AccelBuffer *b = accel_op_peek_buffer_slot (self, i, &a, NULL);
      if (b && (a & access))
        g_ptr_array_add (out, g_object_ref (b));
    }
  return out;
}

/* Visits every buffer set on @self, with its property (%NULL for extra
 * buffers). For the runtime. */
void
_accel_op_foreach_buffer (AccelOp *self,
                          void (*func) (AccelOp *, GParamSpec *, AccelBuffer *, AccelAccess, gpointer),
                          gpointer data)
{
  const AccelOpClassInfo *info = _accel_op_class_info_flat (G_OBJECT_TYPE (self));
  for (guint i = 0; i < info->n_buffers; i++)
    {
      AccelBuffer *b = _accel_op_slot_peek_buffer (self, info->buffers[i]);
      if (b)
        func (self, info->buffers[i]->pspec, b, info->buffers[i]->access, data);
    }
  AccelOpClass *klass = ACCEL_OP_GET_CLASS (self);
  if (G_LIKELY (klass->get_n_extra_buffers == NULL))
    return;
  guint n = klass->get_n_extra_buffers (self);
  for (guint i = 0; i < n; i++)
    {
      AccelAccess access = 0;
      AccelBuffer *b = klass->peek_extra_buffer (self, i, &access);
      if (b)
        func (self, NULL, b, access, data);
    }
}

gboolean
_accel_buffers_alias (AccelBuffer *a, AccelBuffer *b)
{
  AccelBuffer *ra = accel_buffer_get_base (a), *rb = accel_buffer_get_base (b);
  if ((ra != NULL ? ra : a) != (rb != NULL ? rb : b))
    return FALSE;
  gsize a0 = accel_buffer_get_offset (a), a1 = a0 + accel_buffer_get_size (a);
  gsize b0 = accel_buffer_get_offset (b), b1 = b0 + accel_buffer_get_size (b);
  return a0 < b1 && b0 < a1;
}

/* Results must not alias any other buffer of the op, nor each other: the
 * check of every op whose kernels cannot work in place. */
gboolean
_accel_op_check_results_alias (AccelOp *self, GError **error)
{
  const AccelOpClassInfo *info = _accel_op_class_info_flat (G_OBJECT_TYPE (self));
  for (guint r = 0; r < info->n_buffers; r++)
    {
      if ((info->buffers[r]->access & ACCEL_ACCESS_WRITE) == 0)
        continue;
      AccelBuffer *result = _accel_op_slot_peek_buffer (self, info->buffers[r]);
      if (result == NULL)
        continue;
      for (guint i = 0; i < info->n_buffers; i++)
        {
          AccelBuffer *other = i != r ? _accel_op_slot_peek_buffer (self, info->buffers[i]) : NULL;
          if (other == NULL || !_accel_buffers_alias (result, other))
            continue;
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "%s: “%s” overlaps “%s”; results must not alias other buffers",
                       accel_op_get_type_name (self), info->buffers[r]->pspec->name,
                       info->buffers[i]->pspec->name);
          return FALSE;
        }
    }
  return TRUE;
}

/**
 * accel_op_validate:
 * @self: an op
 * @error: return location for a #GError
 *
 * Checks that every required buffer is set and every parameter is within
 * its declared range (an error names the property), then runs the class's
 * own checks. Submission calls this; nothing is launched for an op that
 * fails.
 *
 * Returns: %TRUE if the op is well-formed
 */
gboolean
accel_op_validate (AccelOp *self, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_OP (self), FALSE);

  const AccelOpClassInfo *info = _accel_op_class_info_flat (G_OBJECT_TYPE (self));
  if (!_accel_op_params_check (self, info, error))
    return FALSE;

  AccelOpClass *klass = ACCEL_OP_GET_CLASS (self);
  if (klass->validate)
    return klass->validate (self, error);
  return TRUE;
}
