/* accel-op-params.c: op parameters declared by a table.
 *
 * An op class lists its parameters once, as a static table of AccelOpParam
 * (name, blurb, kind, range, default, the field's offset), as GEGL's op
 * files do with their property_*() lists. From that table this file makes
 * the GObject properties and does what each op class used to write by
 * hand: get and set (with accel-property-field.c's field access, which
 * plain GObject classes share), defaults, dispose, and the range checks
 * at submit.
 *
 * The pspecs of numbers and enums are of permissive subtypes of GLib's
 * own (AccelParamInt derives from GParamSpecInt, and so on): they carry
 * the declared range and default for introspection and `accel-inspect`,
 * but accept any value of the field's C type, so that a value out of range
 * is stored and then refused by accel_op_validate() with an error naming
 * the property, instead of being dropped with a warning while the op runs
 * with its default.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include "accel-op-private.h"
#include "accel-property-field-private.h"

/* Permissive pspec types. */

static gboolean
permissive_validate (GParamSpec *pspec, GValue *value)
{
  return FALSE;   /* nothing changed */
}

static gboolean
permissive_is_valid (GParamSpec *pspec, const GValue *value)
{
  return TRUE;
}

static void
permissive_class_init (gpointer klass, gpointer data)
{
  GParamSpecClass *pclass = klass;
  pclass->value_validate = permissive_validate;
  pclass->value_is_valid = permissive_is_valid;
}

static GType
permissive_type (GType parent, const char *name, guint instance_size)
{
  return g_type_register_static_simple (parent, g_intern_static_string (name),
                                        sizeof (GParamSpecClass), permissive_class_init,
                                        instance_size, NULL, 0);
}

typedef struct {
  GType int_type, uint_type, int64_type, uint64_type, double_type, enum_type, flags_type;
} PermissiveTypes;

static const PermissiveTypes *
permissive_types (void)
{
  static PermissiveTypes types;
  static gsize once = 0;
  if (g_once_init_enter (&once))
    {
      types.int_type = permissive_type (G_TYPE_PARAM_INT, "AccelParamInt", sizeof (GParamSpecInt));
      types.uint_type = permissive_type (G_TYPE_PARAM_UINT, "AccelParamUInt", sizeof (GParamSpecUInt));
      types.int64_type = permissive_type (G_TYPE_PARAM_INT64, "AccelParamInt64", sizeof (GParamSpecInt64));
      types.uint64_type = permissive_type (G_TYPE_PARAM_UINT64, "AccelParamUInt64", sizeof (GParamSpecUInt64));
      types.double_type = permissive_type (G_TYPE_PARAM_DOUBLE, "AccelParamDouble", sizeof (GParamSpecDouble));
      types.enum_type = permissive_type (G_TYPE_PARAM_ENUM, "AccelParamEnum", sizeof (GParamSpecEnum));
      types.flags_type = permissive_type (G_TYPE_PARAM_FLAGS, "AccelParamFlags", sizeof (GParamSpecFlags));
      g_once_init_leave (&once, 1);
    }
  return &types;
}

#define PARAM_FLAGS (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY)

static GParamSpec *
make_pspec (const AccelOpParam *p, gpointer *enum_class)
{
  const PermissiveTypes *t = permissive_types ();
  GParamSpec *pspec = NULL;

  switch (p->kind)
    {
    case ACCEL_OP_PARAM_BUFFER:
      return g_param_spec_object (p->name, NULL, p->blurb, ACCEL_TYPE_BUFFER, PARAM_FLAGS);
    case ACCEL_OP_PARAM_BOOLEAN:
      return g_param_spec_boolean (p->name, NULL, p->blurb, p->def != 0, PARAM_FLAGS);
    case ACCEL_OP_PARAM_STRING:
      return g_param_spec_string (p->name, NULL, p->blurb, NULL, PARAM_FLAGS);
    case ACCEL_OP_PARAM_OBJECT:
      g_return_val_if_fail (p->get_type != NULL, NULL);
      return g_param_spec_object (p->name, NULL, p->blurb, p->get_type (), PARAM_FLAGS);
    case ACCEL_OP_PARAM_INT:
      {
        GParamSpecInt *s = g_param_spec_internal (t->int_type, p->name, NULL, p->blurb, PARAM_FLAGS);
        s->minimum = (int) p->min, s->maximum = (int) p->max, s->default_value = (int) p->def;
        pspec = G_PARAM_SPEC (s);
        break;
      }
    case ACCEL_OP_PARAM_UINT:
      {
        GParamSpecUInt *s = g_param_spec_internal (t->uint_type, p->name, NULL, p->blurb, PARAM_FLAGS);
        s->minimum = (guint) p->min, s->maximum = (guint) p->max, s->default_value = (guint) p->def;
        pspec = G_PARAM_SPEC (s);
        break;
      }
    case ACCEL_OP_PARAM_INT64:
      {
        GParamSpecInt64 *s = g_param_spec_internal (t->int64_type, p->name, NULL, p->blurb, PARAM_FLAGS);
        s->minimum = p->min, s->maximum = p->max, s->default_value = p->def;
        pspec = G_PARAM_SPEC (s);
        break;
      }
    case ACCEL_OP_PARAM_UINT64:
      {
        GParamSpecUInt64 *s = g_param_spec_internal (t->uint64_type, p->name, NULL, p->blurb, PARAM_FLAGS);
        s->minimum = (guint64) p->min, s->maximum = (guint64) p->max, s->default_value = (guint64) p->def;
        pspec = G_PARAM_SPEC (s);
        break;
      }
    case ACCEL_OP_PARAM_DOUBLE:
      {
        GParamSpecDouble *s = g_param_spec_internal (t->double_type, p->name, NULL, p->blurb, PARAM_FLAGS);
        s->minimum = p->dmin, s->maximum = p->dmax, s->default_value = p->ddef;
        s->epsilon = 1e-90;   /* g_param_spec_double's */
        pspec = G_PARAM_SPEC (s);
        break;
      }
    case ACCEL_OP_PARAM_ENUM:
      {
        g_return_val_if_fail (p->get_type != NULL, NULL);
        GType et = p->get_type ();
        g_return_val_if_fail (G_TYPE_IS_ENUM (et), NULL);
        GParamSpecEnum *s = g_param_spec_internal (t->enum_type, p->name, NULL, p->blurb, PARAM_FLAGS);
        s->enum_class = g_type_class_ref (et);
        s->default_value = (int) p->def;
        G_PARAM_SPEC (s)->value_type = et;
        *enum_class = g_type_class_ref (et);
        pspec = G_PARAM_SPEC (s);
        break;
      }
    case ACCEL_OP_PARAM_FLAGS:
      {
        g_return_val_if_fail (p->get_type != NULL, NULL);
        GType ft = p->get_type ();
        g_return_val_if_fail (G_TYPE_IS_FLAGS (ft), NULL);
        GParamSpecFlags *s = g_param_spec_internal (t->flags_type, p->name, NULL, p->blurb, PARAM_FLAGS);
        s->flags_class = g_type_class_ref (ft);
        s->default_value = (guint) p->def;
        G_PARAM_SPEC (s)->value_type = ft;
        *enum_class = g_type_class_ref (ft);
        pspec = G_PARAM_SPEC (s);
        break;
      }
    default:
      g_return_val_if_reached (NULL);
    }
  return pspec;
}

/* get and set, from the table. GObject calls the set_property of the
 * class that installed the pspec, with that class's property id. */

static const AccelOpSlot *
own_slot (GParamSpec *pspec, guint prop_id)
{
  AccelOpClassInfo *info = _accel_op_class_info (pspec->owner_type);
  g_return_val_if_fail (info->own != NULL && prop_id >= 1 && prop_id <= info->own->len, NULL);
  return g_ptr_array_index (info->own, prop_id - 1);
}

static void
params_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  const AccelOpSlot *slot = own_slot (pspec, prop_id);
  if (slot == NULL)
    {
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      return;
    }
  /* Every table pspec has G_PARAM_EXPLICIT_NOTIFY: a change notifies. */
  _accel_field_set_property (object, G_STRUCT_MEMBER_P (object, slot->offset), value, pspec);
}

static void
params_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  const AccelOpSlot *slot = own_slot (pspec, prop_id);
  if (slot == NULL)
    {
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      return;
    }
  _accel_field_load (G_STRUCT_MEMBER_P (object, slot->offset), value);
}

/**
 * accel_op_class_install_params_at: (skip)
 * @klass: an op class, in its class_init
 * @base_offset: added to every entry's offset: where the struct the
 *   entries describe sits in the instance (0 for the instance itself)
 * @params: (array length=n_params): the table; its strings must be static
 * @n_params: how many entries
 *
 * Installs the parameters of @params as properties of @klass, as
 * accel_op_class_install_params() does, for a table written against a
 * struct embedded in the instance. An op family shares one table this way:
 * the geometry of `conv2d` and its backward ops is one table of
 * #AccelConv2dParams fields, installed at each op's `params` member.
 *
 * A class may call this several times; a class that installs a table
 * handles no properties of its own by hand.
 */
void
accel_op_class_install_params_at (AccelOpClass *klass,
                                  gsize base_offset,
                                  const AccelOpParam *params,
                                  guint n_params)
{
  g_return_if_fail (ACCEL_IS_OP_CLASS (klass));
  g_return_if_fail (params != NULL || n_params == 0);

  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AccelOpClassInfo *info = _accel_op_class_info (G_TYPE_FROM_CLASS (klass));
  g_return_if_fail (!g_atomic_int_get (&info->flat));   /* only in class_init */

  object_class->set_property = params_set_property;
  object_class->get_property = params_get_property;
  if (info->own == NULL)
    info->own = g_ptr_array_new ();

  for (guint i = 0; i < n_params; i++)
    {
      const AccelOpParam *p = &params[i];
      AccelOpSlot *slot = g_new0 (AccelOpSlot, 1);
      slot->pspec = make_pspec (p, &slot->enum_class);
      if (slot->pspec == NULL)
        {
          g_free (slot);
          continue;
        }
      slot->kind = p->kind;
      slot->offset = (gssize) (base_offset + p->offset);
      slot->access = p->kind == ACCEL_OP_PARAM_BUFFER ? p->access : 0;
      slot->flags = p->flags;
      slot->min = p->min;
      slot->max = p->max;
      slot->dmin = p->dmin;
      slot->dmax = p->dmax;
      g_return_if_fail (p->kind != ACCEL_OP_PARAM_BUFFER || p->access != 0);
      g_ptr_array_add (info->own, slot);
      g_param_spec_set_qdata (slot->pspec, g_quark_from_static_string ("accel-op-slot"), slot);
      g_object_class_install_property (object_class, info->own->len, slot->pspec);
    }
}

/**
 * accel_op_class_install_params: (skip)
 * @klass: an op class, in its class_init
 * @params: (array length=n_params): the table; its strings must be static
 * @n_params: how many entries
 *
 * Installs one property per entry of @params, with the entry's name,
 * blurb, range and default. #AccelOp then gets and sets the fields, sets
 * the defaults when an op is made, releases buffers and strings, refuses
 * values out of range in accel_op_validate() (naming the property), and
 * serialises and walks the buffers, all from the table: an op file holds
 * its doc comment, its table and its `validate`.
 *
 * ```c
 * static const AccelOpParam gemm_params[] = {
 *   ACCEL_OP_BUFFER (AccelGemm, a, "a", "Left matrix [m, k]", ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
 *   ACCEL_OP_DOUBLE (AccelGemm, alpha, "alpha", "Scale of the product", -G_MAXDOUBLE, G_MAXDOUBLE, 1.0, 0),
 * };
 * accel_op_class_install_params (op_class, gemm_params, G_N_ELEMENTS (gemm_params));
 * ```
 */
void
accel_op_class_install_params (AccelOpClass *klass, const AccelOpParam *params, guint n_params)
{
  accel_op_class_install_params_at (klass, 0, params, n_params);
}

/* Defaults, dispose and finalize of every table field of @self's class and
 * its ancestors. */

void
_accel_op_params_set_defaults (AccelOp *self)
{
  const AccelOpClassInfo *info = _accel_op_class_info_flat (G_OBJECT_TYPE (self));
  for (guint i = 0; i < info->n_params; i++)
    {
      const AccelOpSlot *slot = info->params[i];
      gpointer field = G_STRUCT_MEMBER_P (self, slot->offset);
      GParamSpec *pspec = slot->pspec;
      switch (slot->kind)
        {
        case ACCEL_OP_PARAM_BOOLEAN:
          *(gboolean *) field = G_PARAM_SPEC_BOOLEAN (pspec)->default_value;
          break;
        case ACCEL_OP_PARAM_INT: *(int *) field = G_PARAM_SPEC_INT (pspec)->default_value; break;
        case ACCEL_OP_PARAM_UINT: *(guint *) field = G_PARAM_SPEC_UINT (pspec)->default_value; break;
        case ACCEL_OP_PARAM_INT64: *(gint64 *) field = G_PARAM_SPEC_INT64 (pspec)->default_value; break;
        case ACCEL_OP_PARAM_UINT64: *(guint64 *) field = G_PARAM_SPEC_UINT64 (pspec)->default_value; break;
        case ACCEL_OP_PARAM_DOUBLE: *(double *) field = G_PARAM_SPEC_DOUBLE (pspec)->default_value; break;
        case ACCEL_OP_PARAM_ENUM: *(int *) field = G_PARAM_SPEC_ENUM (pspec)->default_value; break;
        case ACCEL_OP_PARAM_FLAGS: *(guint *) field = G_PARAM_SPEC_FLAGS (pspec)->default_value; break;
        default:
          break;   /* buffers and strings start as NULL */
        }
    }
}

/* Every op passes here twice: the scalar parameters, most of them, own
 * nothing and are skipped by their kind. */
static void
params_clear (AccelOp *self, gboolean objects_only)
{
  const AccelOpClassInfo *info = _accel_op_class_info_flat (G_OBJECT_TYPE (self));
  for (guint i = 0; i < info->n_params; i++)
    {
      const AccelOpSlot *slot = info->params[i];
      if (slot->kind == ACCEL_OP_PARAM_BUFFER || slot->kind == ACCEL_OP_PARAM_OBJECT
          || (slot->kind == ACCEL_OP_PARAM_STRING && !objects_only))
        _accel_field_clear (G_STRUCT_MEMBER_P (self, slot->offset), slot->pspec->value_type, objects_only);
    }
}

void
_accel_op_params_dispose (AccelOp *self)
{
  params_clear (self, TRUE);
}

void
_accel_op_params_finalize (AccelOp *self)
{
  params_clear (self, FALSE);
}

/* Range checks. */

static gboolean
out_of_range (AccelOp *self, const AccelOpSlot *slot, const char *value, const char *lo, const char *hi,
              gboolean lo_is_type_min, gboolean hi_is_type_max, GError **error)
{
  const char *op = accel_op_get_type_name (self);
  const char *name = slot->pspec->name;
  if (hi_is_type_max)
    g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                 "%s: property “%s” is %s; it must be at least %s", op, name, value, lo);
  else if (lo_is_type_min)
    g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                 "%s: property “%s” is %s; it must be at most %s", op, name, value, hi);
  else
    g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                 "%s: property “%s” is %s; it must be in [%s, %s]", op, name, value, lo, hi);
  return FALSE;
}

static gboolean
check_signed (AccelOp *self, const AccelOpSlot *slot, gint64 v, gint64 type_min, gint64 type_max, GError **error)
{
  if (v >= slot->min && v <= slot->max)
    return TRUE;
  char value[32], lo[32], hi[32];
  g_snprintf (value, sizeof value, "%" G_GINT64_FORMAT, v);
  g_snprintf (lo, sizeof lo, "%" G_GINT64_FORMAT, slot->min);
  g_snprintf (hi, sizeof hi, "%" G_GINT64_FORMAT, slot->max);
  return out_of_range (self, slot, value, lo, hi, slot->min <= type_min, slot->max >= type_max, error);
}

static gboolean
check_unsigned (AccelOp *self, const AccelOpSlot *slot, guint64 v, guint64 type_max, GError **error)
{
  guint64 min = (guint64) slot->min, max = (guint64) slot->max;
  if (v >= min && v <= max)
    return TRUE;
  char value[32], lo[32], hi[32];
  g_snprintf (value, sizeof value, "%" G_GUINT64_FORMAT, v);
  g_snprintf (lo, sizeof lo, "%" G_GUINT64_FORMAT, min);
  g_snprintf (hi, sizeof hi, "%" G_GUINT64_FORMAT, max);
  return out_of_range (self, slot, value, lo, hi, min == 0, max >= type_max, error);
}

/* Checks one table field of @self against its declared range. */
gboolean
_accel_op_slot_check (AccelOp *self, const AccelOpSlot *slot, GError **error)
{
  gconstpointer field = G_STRUCT_MEMBER_P (self, slot->offset);

  switch (slot->kind)
    {
    case ACCEL_OP_PARAM_INT:
      return check_signed (self, slot, *(const int *) field, G_MININT, G_MAXINT, error);
    case ACCEL_OP_PARAM_INT64:
      return check_signed (self, slot, *(const gint64 *) field, G_MININT64, G_MAXINT64, error);
    case ACCEL_OP_PARAM_UINT:
      return check_unsigned (self, slot, *(const guint *) field, G_MAXUINT, error);
    case ACCEL_OP_PARAM_UINT64:
      return check_unsigned (self, slot, *(const guint64 *) field, G_MAXUINT64, error);
    case ACCEL_OP_PARAM_BOOLEAN:
      return TRUE;
    case ACCEL_OP_PARAM_DOUBLE:
      {
        double v = *(const double *) field;
        if (isnan (v) ? (slot->flags & ACCEL_OP_PARAM_ALLOW_NAN) != 0 : (v >= slot->dmin && v <= slot->dmax))
          return TRUE;
        char value[G_ASCII_DTOSTR_BUF_SIZE], lo[G_ASCII_DTOSTR_BUF_SIZE], hi[G_ASCII_DTOSTR_BUF_SIZE];
        g_ascii_formatd (value, sizeof value, "%g", v);
        g_ascii_formatd (lo, sizeof lo, "%g", slot->dmin);
        g_ascii_formatd (hi, sizeof hi, "%g", slot->dmax);
        if (isnan (v))
          {
            g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                         "%s: property “%s” is NaN; it must be a number in [%s, %s]",
                         accel_op_get_type_name (self), slot->pspec->name, lo, hi);
            return FALSE;
          }
        return out_of_range (self, slot, value, lo, hi, slot->dmin <= -G_MAXDOUBLE,
                             slot->dmax >= G_MAXDOUBLE, error);
      }
    case ACCEL_OP_PARAM_ENUM:
      {
        int v = *(const int *) field;
        if (g_enum_get_value (slot->enum_class, v) != NULL)
          return TRUE;
        g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                     "%s: property “%s” has the unknown value %d (not a %s)",
                     accel_op_get_type_name (self), slot->pspec->name, v,
                     g_type_name (G_ENUM_CLASS_TYPE (slot->enum_class)));
        return FALSE;
      }
    case ACCEL_OP_PARAM_FLAGS:
      {
        guint v = *(const guint *) field;
        guint unknown = v & ~((GFlagsClass *) slot->enum_class)->mask;
        if (unknown == 0)
          return TRUE;
        g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                     "%s: property “%s” has the unknown bits 0x%x (not a %s)",
                     accel_op_get_type_name (self), slot->pspec->name, unknown,
                     g_type_name (G_FLAGS_CLASS_TYPE (slot->enum_class)));
        return FALSE;
      }
    default:
      return TRUE;
    }
}

/* Checks every table field of @self against its declared range, and that
 * every required buffer is set. */
gboolean
_accel_op_params_check (AccelOp *self, const AccelOpClassInfo *info, GError **error)
{
  for (guint i = 0; i < info->n_buffers; i++)
    {
      const AccelOpSlot *slot = info->buffers[i];
      if ((slot->flags & ACCEL_OP_PARAM_REQUIRED) && _accel_op_slot_peek_buffer (self, slot) == NULL)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "Op “%s” needs a buffer in property “%s”",
                       accel_op_get_type_name (self), slot->pspec->name);
          return FALSE;
        }
    }
  for (guint i = 0; i < info->n_params; i++)
    {
      const AccelOpSlot *slot = info->params[i];
      if (slot->kind == ACCEL_OP_PARAM_OBJECT && (slot->flags & ACCEL_OP_PARAM_REQUIRED)
          && G_STRUCT_MEMBER (GObject *, self, slot->offset) == NULL)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "Op “%s” needs a %s in property “%s”", accel_op_get_type_name (self),
                       g_type_name (slot->pspec->value_type), slot->pspec->name);
          return FALSE;
        }
      if (!_accel_op_slot_check (self, slot, error))
        return FALSE;
    }
  return TRUE;
}
