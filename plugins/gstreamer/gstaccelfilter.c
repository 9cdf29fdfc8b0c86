/* gstaccelfilter.c: accelfilter, any image op of Accel's portable set
 * (filter, morphology, warp-affine, warp-perspective, resize,
 * convert-color) on each frame, chosen by name, with the op's own
 * parameters as the element's properties:
 *
 *   gst-launch-1.0 videotestsrc ! video/x-raw,format=RGBA \
 *     ! accelfilter op=filter kind=gaussian sigma=2.0 ! autovideosink
 *
 * The element carries the union of the parameters of those op types
 * (everything but their images, which come from the caps); a parameter
 * set that the chosen op lacks is an error when the element starts.
 * resize lets the size change across the element, convert-color the
 * format; the others keep both. User kernels (`kernel` buffers) are for
 * the op API, not for this element.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include "gstaccelfilter.h"

struct _GstAccelFilter {
  GstAccelTransform parent_instance;
  char *op_name;
  GHashTable *values;      /* name -> GValue, the op parameters set */
};

G_DEFINE_FINAL_TYPE (GstAccelFilter, gst_accel_filter, GST_TYPE_ACCEL_TRANSFORM)
GST_ELEMENT_REGISTER_DEFINE (accelfilter, "accelfilter", GST_RANK_NONE, GST_TYPE_ACCEL_FILTER);

enum {
  PROP_0,
  PROP_OP,
  PROP_FIRST_OP_PARAM,
};

/* The op types the element runs; their parameters become its properties. */
static GType
op_types (guint i)
{
  switch (i)
    {
    case 0: return ACCEL_TYPE_FILTER;
    case 1: return ACCEL_TYPE_MORPHOLOGY;
    case 2: return ACCEL_TYPE_RESIZE;
    case 3: return ACCEL_TYPE_CONVERT_COLOR;
    case 4: return ACCEL_TYPE_WARP_AFFINE;
    case 5: return ACCEL_TYPE_WARP_PERSPECTIVE;
    default: return G_TYPE_INVALID;
    }
}

/* Parameters the caps set, or that the element cannot hold. */
static gboolean
is_image_property (GParamSpec *pspec)
{
  return g_str_has_prefix (pspec->name, "src") || g_str_has_prefix (pspec->name, "dst")
      || g_str_equal (pspec->name, "lane") || G_PARAM_SPEC_VALUE_TYPE (pspec) == ACCEL_TYPE_BUFFER;
}

/* An element property standing for the op parameter @op_pspec. */
static GParamSpec *
proxy_pspec (GParamSpec *p)
{
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY;
  const char *blurb = g_param_spec_get_blurb (p);
  GType t = G_PARAM_SPEC_VALUE_TYPE (p);

  if (G_IS_PARAM_SPEC_ENUM (p))
    return g_param_spec_enum (p->name, NULL, blurb, t, G_PARAM_SPEC_ENUM (p)->default_value, flags);
  if (G_IS_PARAM_SPEC_BOOLEAN (p))
    return g_param_spec_boolean (p->name, NULL, blurb, G_PARAM_SPEC_BOOLEAN (p)->default_value, flags);
  if (G_IS_PARAM_SPEC_INT (p))
    {
      GParamSpecInt *s = G_PARAM_SPEC_INT (p);
      return g_param_spec_int (p->name, NULL, blurb, s->minimum, s->maximum,
                               CLAMP (s->default_value, s->minimum, s->maximum), flags);
    }
  if (G_IS_PARAM_SPEC_DOUBLE (p))
    {
      GParamSpecDouble *s = G_PARAM_SPEC_DOUBLE (p);
      return g_param_spec_double (p->name, NULL, blurb, s->minimum, s->maximum,
                                  CLAMP (s->default_value, s->minimum, s->maximum), flags);
    }
  return NULL;
}

static void
install_op_params (GObjectClass *object_class)
{
  guint id = PROP_FIRST_OP_PARAM;
  for (guint i = 0; op_types (i) != G_TYPE_INVALID; i++)
    {
      GObjectClass *op_class = g_type_class_ref (op_types (i));
      guint n = 0;
      g_autofree GParamSpec **pspecs = g_object_class_list_properties (op_class, &n);
      for (guint k = 0; k < n; k++)
        {
          GParamSpec *existing = g_object_class_find_property (object_class, pspecs[k]->name);
          if (is_image_property (pspecs[k]))
            continue;
          if (existing)
            {
              /* Shared by several ops (method, border, ksize…): one property. */
              g_warn_if_fail (G_PARAM_SPEC_VALUE_TYPE (existing) == G_PARAM_SPEC_VALUE_TYPE (pspecs[k]));
              continue;
            }
          GParamSpec *proxy = proxy_pspec (pspecs[k]);
          if (proxy)
            g_object_class_install_property (object_class, id++, proxy);
        }
      g_type_class_unref (op_class);
    }
}

/* What may change across the element: the size for resize, the format
 * for convert-color, nothing for the others. */
static GstCaps *
gst_accel_filter_transform_caps (GstBaseTransform *trans, GstPadDirection direction, GstCaps *caps,
                                 GstCaps *filter)
{
  GstAccelFilter *self = GST_ACCEL_FILTER (trans);
  GST_OBJECT_LOCK (self);
  gboolean resize = g_strcmp0 (self->op_name, "resize") == 0;
  gboolean convert = g_strcmp0 (self->op_name, "convert-color") == 0;
  GST_OBJECT_UNLOCK (self);

  GstCaps *open = gst_caps_new_empty ();
  for (guint i = 0; i < gst_caps_get_size (caps); i++)
    {
      GstStructure *s = gst_structure_copy (gst_caps_get_structure (caps, i));
      if (resize)
        gst_structure_set (s, "width", GST_TYPE_INT_RANGE, 1, ACCEL_IMAGE_MAX_SIZE, "height", GST_TYPE_INT_RANGE, 1,
                           ACCEL_IMAGE_MAX_SIZE, NULL);
      if (convert)
        gst_structure_remove_fields (s, "format", "colorimetry", "chroma-site", NULL);
      gst_caps_append_structure (open, s);
    }
  return gst_accel_caps_finish (open, filter);
}

static AccelOp *
gst_accel_filter_make_op (GstAccelTransform *trans, const GstVideoInfo *in, const GstVideoInfo *out, GError **error)
{
  GstAccelFilter *self = GST_ACCEL_FILTER (trans);
  GST_OBJECT_LOCK (self);
  g_autofree char *name = g_strdup (self->op_name);
  GST_OBJECT_UNLOCK (self);

  g_autoptr(AccelOp) op = accel_op_new_by_name (name, error);
  if (op == NULL)
    return NULL;
  if (g_object_class_find_property (G_OBJECT_GET_CLASS (op), "src-format") == NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "“%s” is not an image op", name);
      return NULL;
    }

  GHashTableIter iter;
  gpointer key, value;
  g_hash_table_iter_init (&iter, self->values);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      if (g_object_class_find_property (G_OBJECT_GET_CLASS (op), key) == NULL)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "property “%s” is set but op “%s” has no such parameter", (const char *) key, name);
          return NULL;
        }
      g_object_set_property (G_OBJECT (op), key, value);
    }

  /* Colorimetry from the caps, for the ops that convert colour. */
  AccelColorMatrix m;
  AccelColorRange r;
  AccelChromaSiting s;
  if (g_object_class_find_property (G_OBJECT_GET_CLASS (op), "src-matrix"))
    {
      gst_accel_colorimetry (in, &m, &r, &s);
      g_object_set (op, "src-matrix", m, "src-range", r, "src-chroma-siting", s, NULL);
      gst_accel_colorimetry (out, &m, &r, &s);
      g_object_set (op, "dst-matrix", m, "dst-range", r, "dst-chroma-siting", s, NULL);
    }
  return g_steal_pointer (&op);
}

static void
gst_accel_filter_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  GstAccelFilter *self = GST_ACCEL_FILTER (object);

  if (prop_id == PROP_OP)
    {
      GST_OBJECT_LOCK (self);
      g_free (self->op_name);
      self->op_name = g_value_dup_string (value);
      GST_OBJECT_UNLOCK (self);
      gst_base_transform_reconfigure_src (GST_BASE_TRANSFORM (self));
      return;
    }
  GValue *copy = g_new0 (GValue, 1);
  g_value_init (copy, G_VALUE_TYPE (value));
  g_value_copy (value, copy);
  GST_OBJECT_LOCK (self);
  g_hash_table_replace (self->values, (gpointer) pspec->name, copy);
  GST_OBJECT_UNLOCK (self);
}

static void
gst_accel_filter_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  GstAccelFilter *self = GST_ACCEL_FILTER (object);

  GST_OBJECT_LOCK (self);
  if (prop_id == PROP_OP)
    g_value_set_string (value, self->op_name);
  else
    {
      const GValue *set = g_hash_table_lookup (self->values, pspec->name);
      if (set)
        g_value_copy (set, value);
      else
        g_param_value_set_default (pspec, value);
    }
  GST_OBJECT_UNLOCK (self);
}

static void
free_value (gpointer data)
{
  g_value_unset (data);
  g_free (data);
}

static void
gst_accel_filter_finalize (GObject *object)
{
  GstAccelFilter *self = GST_ACCEL_FILTER (object);

  g_free (self->op_name);
  g_hash_table_unref (self->values);
  G_OBJECT_CLASS (gst_accel_filter_parent_class)->finalize (object);
}

static void
gst_accel_filter_class_init (GstAccelFilterClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);

  object_class->set_property = gst_accel_filter_set_property;
  object_class->get_property = gst_accel_filter_get_property;
  object_class->finalize = gst_accel_filter_finalize;
  g_object_class_install_property (object_class, PROP_OP,
    g_param_spec_string ("op", "Op", "The image op to run: filter, morphology, warp-affine, warp-perspective, "
                         "resize, convert-color", "filter",
                         G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY));
  install_op_params (object_class);

  gst_element_class_set_static_metadata (element_class, "Accel image op", "Filter/Effect/Video/Hardware",
                                         "Runs an Accel image op (filter, morphology, warps, resize, convert-color) "
                                         "on each frame on an Accel device", "Accel contributors");
  trans_class->transform_caps = gst_accel_filter_transform_caps;
  trans_class->passthrough_on_same_caps = FALSE;
  GST_ACCEL_TRANSFORM_CLASS (klass)->make_op = gst_accel_filter_make_op;
}

static void
gst_accel_filter_init (GstAccelFilter *self)
{
  self->op_name = g_strdup ("filter");
  self->values = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, free_value);
}
