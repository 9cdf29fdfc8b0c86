/* gstacceltransform.c: GstAccelTransform, the base of accelconvertscale
 * and accelfilter.
 *
 * Each frame runs one image op (made by the subclass for the negotiated
 * caps) on the element's device, blocking until it is done; the subclass
 * may put steps before it, each an op into a frame the element keeps on
 * the device (accelconvertscale shrinks in steps where one op cannot). Frames come
 * and go either in host memory, uploaded into and downloaded from device
 * buffers the element keeps, or as memory:AccelBuffer (a GstAccelMemory
 * on the same device), used in place: a chain of Accel elements moves
 * frames to the device once and back once. Output device frames come
 * from a GstVideoBufferPool on the element's GstAccelAllocator.
 *
 * A device fault (ACCEL_ERROR_CONTEXT_POISONED, or a buffer of an older
 * generation) either posts an error naming the device and generation
 * (on-fault=error) or, with on-fault=recover, lets every device buffer of
 * the old generation go and runs the frame again in the new one when its
 * input was host memory; a frame whose device memory was lost is dropped
 * with a warning. No frame is ever pushed that an op did not write.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include "gstacceltransform.h"
#include "gstaccelmemory.h"

GST_DEBUG_CATEGORY_STATIC (gst_accel_transform_debug);
#define GST_CAT_DEFAULT gst_accel_transform_debug

typedef struct {
  char *device_name;
  GstAccelOnFault on_fault;

  AccelDevice *device;
  GstAllocator *allocator;
  GstBufferPool *pool;           /* output frames on the device */
  GstVideoInfo in_info, out_info;
  gboolean in_device, out_device;  /* caps with memory:AccelBuffer */
  AccelOp *op;
  guint generation;              /* of the device when the element last ran well */
  AccelBuffer *upload;           /* staging for host input */
  AccelBuffer *download;         /* staging for host output */
  GPtrArray *steps;              /* Step, run before op */
} GstAccelTransformPrivate;

typedef struct {
  AccelOp *op;
  GstVideoInfo info;             /* of its output */
  AccelBuffer *frame;            /* its output, on the device */
} Step;

static void
step_free (gpointer data)
{
  Step *step = data;
  g_clear_object (&step->op);
  g_clear_object (&step->frame);
  g_free (step);
}

G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (GstAccelTransform, gst_accel_transform, GST_TYPE_BASE_TRANSFORM)

static GParamSpec *accel_device_pspec;   /* notified once started */

/* Every Accel element takes and gives any of the formats, in host or
 * device memory (its transform_caps says what may change across it): the
 * templates are the base class's, which the elements inherit. */
static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink", GST_PAD_SINK, GST_PAD_ALWAYS,
                                                                     GST_STATIC_CAPS (GST_ACCEL_CAPS));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src", GST_PAD_SRC, GST_PAD_ALWAYS,
                                                                    GST_STATIC_CAPS (GST_ACCEL_CAPS));

GType
gst_accel_on_fault_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    { GST_ACCEL_ON_FAULT_ERROR, "Post an error on the bus", "error" },
    { GST_ACCEL_ON_FAULT_RECOVER, "Go on in the device's new generation", "recover" },
    { 0, NULL, NULL },
  };
  if (g_once_init_enter (&type))
    g_once_init_leave (&type, g_enum_register_static ("GstAccelOnFault", values));
  return type;
}

/* One AccelSystem for the process, made on first use. */
static AccelSystem *
get_system (GError **error)
{
  static GMutex lock;
  static AccelSystem *system;

  g_mutex_lock (&lock);
  if (system == NULL)
    system = accel_system_new (error);
  AccelSystem *result = system ? g_object_ref (system) : NULL;
  g_mutex_unlock (&lock);
  return result;
}

/* formats and colorimetry */

gboolean
gst_accel_image_format (GstVideoFormat format, AccelImageFormat *out)
{
  static const struct {
    GstVideoFormat gst;
    AccelImageFormat accel;
  } map[] = {
    { GST_VIDEO_FORMAT_NV12, ACCEL_IMAGE_FORMAT_NV12 }, { GST_VIDEO_FORMAT_I420, ACCEL_IMAGE_FORMAT_I420 },
    { GST_VIDEO_FORMAT_YUY2, ACCEL_IMAGE_FORMAT_YUY2 }, { GST_VIDEO_FORMAT_P010_10LE, ACCEL_IMAGE_FORMAT_P010 },
    { GST_VIDEO_FORMAT_RGBA, ACCEL_IMAGE_FORMAT_RGBA }, { GST_VIDEO_FORMAT_BGRA, ACCEL_IMAGE_FORMAT_BGRA },
    { GST_VIDEO_FORMAT_RGB, ACCEL_IMAGE_FORMAT_RGB }, { GST_VIDEO_FORMAT_BGR, ACCEL_IMAGE_FORMAT_BGR },
    { GST_VIDEO_FORMAT_GRAY8, ACCEL_IMAGE_FORMAT_GRAY8 }, { GST_VIDEO_FORMAT_GRAY16_LE, ACCEL_IMAGE_FORMAT_GRAY16 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (map); i++)
    if (map[i].gst == format)
      {
        *out = map[i].accel;
        return TRUE;
      }
  return FALSE;
}

void
gst_accel_colorimetry (const GstVideoInfo *info, AccelColorMatrix *matrix, AccelColorRange *range,
                       AccelChromaSiting *siting)
{
  const GstVideoColorimetry *c = &info->colorimetry;

  switch (c->matrix)
    {
    case GST_VIDEO_COLOR_MATRIX_BT601: case GST_VIDEO_COLOR_MATRIX_FCC:
      *matrix = ACCEL_COLOR_MATRIX_BT601;
      break;
    case GST_VIDEO_COLOR_MATRIX_BT2020:
      *matrix = ACCEL_COLOR_MATRIX_BT2020;
      break;
    case GST_VIDEO_COLOR_MATRIX_BT709: case GST_VIDEO_COLOR_MATRIX_SMPTE240M:
      *matrix = ACCEL_COLOR_MATRIX_BT709;
      break;
    default:
      /* GStreamer's own default: BT.601 below HD. */
      *matrix = GST_VIDEO_INFO_HEIGHT (info) < 720 ? ACCEL_COLOR_MATRIX_BT601 : ACCEL_COLOR_MATRIX_BT709;
    }
  *range = c->range == GST_VIDEO_COLOR_RANGE_0_255 ? ACCEL_COLOR_RANGE_FULL : ACCEL_COLOR_RANGE_LIMITED;
  GstVideoChromaSite site = info->chroma_site;
  if ((site & GST_VIDEO_CHROMA_SITE_H_COSITED) && (site & GST_VIDEO_CHROMA_SITE_V_COSITED))
    *siting = ACCEL_CHROMA_SITING_COSITED;
  else if (site & GST_VIDEO_CHROMA_SITE_H_COSITED)
    *siting = ACCEL_CHROMA_SITING_MPEG2;
  else if (site == GST_VIDEO_CHROMA_SITE_NONE)
    *siting = ACCEL_CHROMA_SITING_JPEG;
  else
    *siting = ACCEL_CHROMA_SITING_MPEG2;
}

GstCaps *
gst_accel_caps_finish (GstCaps *caps, GstCaps *filter)
{
  static GstStaticCaps all = GST_STATIC_CAPS (GST_ACCEL_CAPS);
  GstCaps *both = gst_caps_new_empty ();
  for (guint i = 0; i < gst_caps_get_size (caps); i++)
    {
      GstStructure *s = gst_caps_get_structure (caps, i);
      gst_caps_append_structure_full (both, gst_structure_copy (s),
                                      gst_caps_features_new_single (GST_CAPS_FEATURE_MEMORY_ACCEL_BUFFER));
      gst_caps_append_structure_full (both, gst_structure_copy (s),
                                      gst_caps_features_new_single (GST_CAPS_FEATURE_MEMORY_SYSTEM_MEMORY));
    }
  gst_caps_unref (caps);
  GstCaps *templ = gst_static_caps_get (&all);
  GstCaps *ret = gst_caps_intersect (both, templ);
  gst_caps_unref (both);
  gst_caps_unref (templ);
  if (filter)
    {
      GstCaps *f = gst_caps_intersect_full (filter, ret, GST_CAPS_INTERSECT_FIRST);
      gst_caps_unref (ret);
      ret = f;
    }
  return ret;
}

static gboolean
caps_on_device (GstCaps *caps)
{
  GstCapsFeatures *f = gst_caps_get_features (caps, 0);
  return f && gst_caps_features_contains (f, GST_CAPS_FEATURE_MEMORY_ACCEL_BUFFER);
}

/* The image of a frame on an op: its buffer, format, size and layout. */
static gboolean
set_image (AccelOp *op, const char *side, AccelBuffer *buffer, const GstVideoInfo *info, GstVideoMeta *meta,
           gboolean geometry)
{
  AccelImageFormat format;
  if (!gst_accel_image_format (GST_VIDEO_INFO_FORMAT (info), &format))
    return FALSE;
  int n = GST_VIDEO_INFO_N_PLANES (info);
  gsize offset[3] = { 0 };
  int stride[3] = { 0 };
  for (int p = 0; p < n; p++)
    {
      offset[p] = meta ? meta->offset[p] : GST_VIDEO_INFO_PLANE_OFFSET (info, p);
      stride[p] = meta ? meta->stride[p] : GST_VIDEO_INFO_PLANE_STRIDE (info, p);
    }
  /* Plane 0 starts the buffer's bytes: a view where it does not. */
  g_autoptr(AccelBuffer) view = NULL;
  if (offset[0] != 0)
    {
      gsize size = accel_buffer_get_size (buffer) - offset[0];
      gint64 dims[1] = { (gint64) size };
      g_autoptr(AccelShape) shape = accel_shape_new (dims, 1);
      view = accel_buffer_new_view (buffer, (gint64) offset[0], shape, NULL);
      if (view == NULL)
        return FALSE;
      buffer = view;
    }
  char names[5][24];
  g_snprintf (names[0], sizeof names[0], "%s-stride", side);
  g_snprintf (names[1], sizeof names[1], "%s-uv-stride", side);
  g_snprintf (names[2], sizeof names[2], "%s-uv-offset", side);
  g_snprintf (names[3], sizeof names[3], "%s-v-offset", side);
  g_object_set (op, side, buffer, names[0], stride[0], names[1], n > 1 ? stride[1] : 0,
                names[2], (gint64) (n > 1 ? offset[1] - offset[0] : 0),
                names[3], (gint64) (n > 2 ? offset[2] - offset[0] : 0), NULL);
  if (geometry)
    {
      char f[24], w[24], h[24];
      g_snprintf (f, sizeof f, "%s-format", side);
      g_snprintf (w, sizeof w, "%s-width", side);
      g_snprintf (h, sizeof h, "%s-height", side);
      g_object_set (op, f, format, w, GST_VIDEO_INFO_WIDTH (info), h, GST_VIDEO_INFO_HEIGHT (info), NULL);
    }
  return TRUE;
}

static gboolean
op_has_property (AccelOp *op, const char *name)
{
  return g_object_class_find_property (G_OBJECT_GET_CLASS (op), name) != NULL;
}

/* Device buffers: the staging buffers, the output pool. */

/* The staging buffers go; output frames from the pool are renewed as
 * they come when stale (prepare_output_buffer). */
static void
drop_device_buffers (GstAccelTransform *self)
{
  GstAccelTransformPrivate *priv = gst_accel_transform_get_instance_private (self);
  g_clear_object (&priv->upload);
  g_clear_object (&priv->download);
  for (guint i = 0; i < priv->steps->len; i++)
    g_clear_object (&((Step *) priv->steps->pdata[i])->frame);
}

/* A staging buffer of exactly @size bytes, in the device's current generation. */
static AccelBuffer *
staging (GstAccelTransform *self, AccelBuffer **slot, gsize size, GError **error)
{
  GstAccelTransformPrivate *priv = gst_accel_transform_get_instance_private (self);
  if (*slot && (accel_buffer_get_size (*slot) != size || accel_buffer_is_stale (*slot)))
    g_clear_object (slot);
  if (*slot == NULL)
    {
      gint64 dims[1] = { (gint64) size };
      g_autoptr(AccelShape) shape = accel_shape_new (dims, 1);
      *slot = accel_device_alloc (priv->device, ACCEL_DTYPE_U8, shape, error);
    }
  return *slot;
}

static GstBufferPool *
make_pool (GstAccelTransform *self, GstCaps *caps)
{
  GstAccelTransformPrivate *priv = gst_accel_transform_get_instance_private (self);
  GstBufferPool *pool = gst_video_buffer_pool_new ();
  GstStructure *config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_set_params (config, caps, GST_VIDEO_INFO_SIZE (&priv->out_info), 2, 0);
  gst_buffer_pool_config_set_allocator (config, priv->allocator, NULL);
  gst_buffer_pool_config_add_option (config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  if (!gst_buffer_pool_set_config (pool, config))
    {
      gst_object_unref (pool);
      return NULL;
    }
  return pool;
}

/* GstBaseTransform */

static gboolean
gst_accel_transform_start (GstBaseTransform *trans)
{
  GstAccelTransform *self = GST_ACCEL_TRANSFORM (trans);
  GstAccelTransformPrivate *priv = gst_accel_transform_get_instance_private (self);
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelSystem) system = get_system (&error);
  const char *name = priv->device_name ? priv->device_name : "default";

  if (system)
    priv->device = accel_system_get_device (system, name, &error);
  if (priv->device == NULL)
    {
      GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND, ("No Accel device “%s”: %s", name, error->message), (NULL));
      return FALSE;
    }
  priv->allocator = gst_accel_allocator_new (priv->device);
  priv->generation = accel_device_get_generation (priv->device);
  GST_INFO_OBJECT (self, "running on %s", accel_device_get_name (priv->device));
  g_object_notify_by_pspec (G_OBJECT (self), accel_device_pspec);
  return TRUE;
}

static gboolean
gst_accel_transform_stop (GstBaseTransform *trans)
{
  GstAccelTransform *self = GST_ACCEL_TRANSFORM (trans);
  GstAccelTransformPrivate *priv = gst_accel_transform_get_instance_private (self);

  drop_device_buffers (self);
  if (priv->pool)
    gst_buffer_pool_set_active (priv->pool, FALSE);
  g_clear_object (&priv->pool);
  g_clear_object (&priv->op);
  g_ptr_array_set_size (priv->steps, 0);
  g_clear_object (&priv->allocator);
  g_clear_object (&priv->device);
  return TRUE;
}

static gboolean
gst_accel_transform_set_caps (GstBaseTransform *trans, GstCaps *incaps, GstCaps *outcaps)
{
  GstAccelTransform *self = GST_ACCEL_TRANSFORM (trans);
  GstAccelTransformPrivate *priv = gst_accel_transform_get_instance_private (self);
  g_autoptr(GError) error = NULL;

  if (!gst_video_info_from_caps (&priv->in_info, incaps) || !gst_video_info_from_caps (&priv->out_info, outcaps))
    return FALSE;
  priv->in_device = caps_on_device (incaps);
  priv->out_device = caps_on_device (outcaps);
  g_clear_object (&priv->op);
  g_ptr_array_set_size (priv->steps, 0);
  priv->op = GST_ACCEL_TRANSFORM_GET_CLASS (self)->make_op (self, &priv->in_info, &priv->out_info, &error);
  if (priv->op == NULL)
    {
      GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, ("Cannot run %" GST_PTR_FORMAT " into %" GST_PTR_FORMAT ": %s",
                                                   incaps, outcaps, error->message), (NULL));
      return FALSE;
    }
  GST_DEBUG_OBJECT (self, "%s from %" GST_PTR_FORMAT " to %" GST_PTR_FORMAT, accel_op_get_type_name (priv->op),
                    incaps, outcaps);
  return TRUE;
}

/* A cpu device: its buffers are host memory that maps in place. */
static gboolean
host_addressable (AccelDevice *device)
{
  return g_str_equal (accel_device_get_backend_name (device), "cpu");
}

static gboolean
gst_accel_transform_get_unit_size (GstBaseTransform *trans, GstCaps *caps, gsize *size)
{
  GstVideoInfo info;
  if (!gst_video_info_from_caps (&info, caps))
    return FALSE;
  *size = GST_VIDEO_INFO_SIZE (&info);
  return TRUE;
}

static gboolean
gst_accel_transform_decide_allocation (GstBaseTransform *trans, GstQuery *query)
{
  GstAccelTransform *self = GST_ACCEL_TRANSFORM (trans);
  GstAccelTransformPrivate *priv = gst_accel_transform_get_instance_private (self);
  GstCaps *caps = NULL;

  gst_query_parse_allocation (query, &caps, NULL);
  if (caps == NULL || (!caps_on_device (caps) && !host_addressable (priv->device)))
    return GST_BASE_TRANSFORM_CLASS (gst_accel_transform_parent_class)->decide_allocation (trans, query);

  /* Device frames always come from this element's own pool; so do host
   * frames of a cpu device, whose memory maps as it is (no download). */
  if (priv->pool)
    gst_buffer_pool_set_active (priv->pool, FALSE);
  g_clear_object (&priv->pool);
  priv->pool = make_pool (self, caps);
  if (priv->pool == NULL)
    return FALSE;
  guint size = GST_VIDEO_INFO_SIZE (&priv->out_info);
  /* The base class configures the pool with the query's first allocator. */
  GstAllocationParams params;
  gst_allocation_params_init (&params);
  if (gst_query_get_n_allocation_params (query) > 0)
    gst_query_set_nth_allocation_param (query, 0, priv->allocator, &params);
  else
    gst_query_add_allocation_param (query, priv->allocator, &params);
  if (gst_query_get_n_allocation_pools (query) > 0)
    gst_query_set_nth_allocation_pool (query, 0, priv->pool, size, 2, 0);
  else
    gst_query_add_allocation_pool (query, priv->pool, size, 2, 0);
  return GST_BASE_TRANSFORM_CLASS (gst_accel_transform_parent_class)->decide_allocation (trans, query);
}

/* Upstream may write its frames straight into a cpu device's memory (no
 * upload); other devices' memory is offered only as device frames. */
static gboolean
gst_accel_transform_propose_allocation (GstBaseTransform *trans, GstQuery *decide_query, GstQuery *query)
{
  GstAccelTransform *self = GST_ACCEL_TRANSFORM (trans);
  GstAccelTransformPrivate *priv = gst_accel_transform_get_instance_private (self);
  GstCaps *caps = NULL;
  gboolean need_pool = FALSE;
  GstVideoInfo info;

  gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL);
  gst_query_parse_allocation (query, &caps, &need_pool);
  if (decide_query == NULL || caps == NULL || priv->device == NULL || !host_addressable (priv->device)
      || !gst_video_info_from_caps (&info, caps))
    return TRUE;
  GstAllocationParams params;
  gst_allocation_params_init (&params);
  gst_query_add_allocation_param (query, priv->allocator, &params);
  if (need_pool)
    {
      GstBufferPool *pool = gst_video_buffer_pool_new ();
      GstStructure *config = gst_buffer_pool_get_config (pool);
      gst_buffer_pool_config_set_params (config, caps, GST_VIDEO_INFO_SIZE (&info), 0, 0);
      gst_buffer_pool_config_set_allocator (config, priv->allocator, &params);
      gst_buffer_pool_config_add_option (config, GST_BUFFER_POOL_OPTION_VIDEO_META);
      if (gst_buffer_pool_set_config (pool, config))
        gst_query_add_allocation_pool (query, pool, GST_VIDEO_INFO_SIZE (&info), 0, 0);
      gst_object_unref (pool);
    }
  return TRUE;
}

static gboolean
is_fault (const GError *error)
{
  return g_error_matches (error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED)
      || g_error_matches (error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER);
}

/* @op from @src (@src_info, laid out as @src_meta says where given) into
 * @dst, blocking; the op holds no frame afterwards. */
static gboolean
run_op (GstAccelTransform *self, AccelOp *op, AccelBuffer *src, const GstVideoInfo *src_info,
        GstVideoMeta *src_meta, AccelBuffer *dst, const GstVideoInfo *dst_info, GstVideoMeta *dst_meta,
        GError **error)
{
  GstAccelTransformPrivate *priv = gst_accel_transform_get_instance_private (self);
  if (!set_image (op, "src", src, src_info, src_meta, TRUE)
      || !set_image (op, "dst", dst, dst_info, dst_meta, op_has_property (op, "dst-format")))
    {
      g_set_error_literal (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "a frame's layout does not fit");
      return FALSE;
    }
  gboolean ok = accel_device_submit (priv->device, op, NULL, error);
  g_object_set (op, "src", NULL, "dst", NULL, NULL);
  return ok;
}

/* One attempt at a frame: the input on the device, the op, the output
 * where it goes. */
static gboolean
run_frame (GstAccelTransform *self, GstBuffer *inbuf, GstBuffer *outbuf, GError **error)
{
  GstAccelTransformPrivate *priv = gst_accel_transform_get_instance_private (self);
  AccelBuffer *src = gst_accel_buffer_peek (inbuf, priv->device);
  AccelBuffer *dst = gst_accel_buffer_peek (outbuf, priv->device);

  if (src == NULL)
    {
      GstMapInfo map;
      if (!gst_buffer_map (inbuf, &map, GST_MAP_READ))
        {
          g_set_error_literal (error, ACCEL_ERROR, ACCEL_ERROR_FAILED, "cannot map the input frame");
          return FALSE;
        }
      src = staging (self, &priv->upload, map.size, error);
      gboolean ok = src && accel_buffer_write (src, map.data, map.size, error);
      gst_buffer_unmap (inbuf, &map);
      if (!ok)
        return FALSE;
    }
  gsize out_size = gst_buffer_get_size (outbuf);
  if (dst == NULL && (dst = staging (self, &priv->download, out_size, error)) == NULL)
    return FALSE;

  const GstVideoInfo *src_info = &priv->in_info;
  GstVideoMeta *src_meta = gst_buffer_get_video_meta (inbuf);
  for (guint i = 0; i < priv->steps->len; i++)
    {
      Step *step = priv->steps->pdata[i];
      if (staging (self, &step->frame, GST_VIDEO_INFO_SIZE (&step->info), error) == NULL
          || !run_op (self, step->op, src, src_info, src_meta, step->frame, &step->info, NULL, error))
        return FALSE;
      src = step->frame;
      src_info = &step->info;
      src_meta = NULL;
    }
  if (!run_op (self, priv->op, src, src_info, src_meta, dst, &priv->out_info, gst_buffer_get_video_meta (outbuf),
               error))
    return FALSE;

  gboolean ok = TRUE;
  if (dst == priv->download)
    {
      GstMapInfo map;
      if (!gst_buffer_map (outbuf, &map, GST_MAP_WRITE))
        {
          g_set_error_literal (error, ACCEL_ERROR, ACCEL_ERROR_FAILED, "cannot map the output frame");
          return FALSE;
        }
      ok = accel_buffer_read (dst, map.data, map.size, error);
      gst_buffer_unmap (outbuf, &map);
    }
  return ok;
}

/* After a fault: a fresh device buffer for an output frame from the pool. */
static gboolean
renew_output (GstAccelTransform *self, GstBuffer *outbuf)
{
  GstAccelTransformPrivate *priv = gst_accel_transform_get_instance_private (self);
  if (gst_buffer_n_memory (outbuf) != 1 || !gst_is_accel_memory (gst_buffer_peek_memory (outbuf, 0)))
    return TRUE;
  GstMemory *mem = gst_allocator_alloc (priv->allocator, gst_buffer_get_size (outbuf), NULL);
  if (mem == NULL)
    return FALSE;
  gst_buffer_replace_all_memory (outbuf, mem);
  return TRUE;
}

static GstFlowReturn
gst_accel_transform_transform (GstBaseTransform *trans, GstBuffer *inbuf, GstBuffer *outbuf)
{
  GstAccelTransform *self = GST_ACCEL_TRANSFORM (trans);
  GstAccelTransformPrivate *priv = gst_accel_transform_get_instance_private (self);

  for (int attempt = 0;; attempt++)
    {
      g_autoptr(GError) error = NULL;
      guint generation = accel_device_get_generation (priv->device);
      /* A new generation is a fault even where no buffer of this frame
       * would notice it. */
      if (generation != priv->generation)
        g_set_error (&error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED,
                     "the device was restarted since the last frame (generation %u, now %u)", priv->generation,
                     generation);
      else if (run_frame (self, inbuf, outbuf, &error))
        return GST_FLOW_OK;
      generation = accel_device_get_generation (priv->device);
      if (!is_fault (error))
        {
          GST_ELEMENT_ERROR (self, LIBRARY, FAILED, ("%s on %s failed: %s", accel_op_get_type_name (priv->op),
                                                     accel_device_get_name (priv->device), error->message), (NULL));
          return GST_FLOW_ERROR;
        }
      if (priv->on_fault == GST_ACCEL_ON_FAULT_ERROR || attempt > 0)
        {
          GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
                             ("Accel device %s faulted (now in generation %u): %s",
                              accel_device_get_name (priv->device), generation, error->message),
                             ("set on-fault=recover to go on in the new generation"));
          return GST_FLOW_ERROR;
        }
      /* Recover: every device buffer of the old generation goes. */
      GST_WARNING_OBJECT (self, "device %s faulted, going on in generation %u: %s",
                          accel_device_get_name (priv->device), generation, error->message);
      drop_device_buffers (self);
      priv->generation = generation;
      AccelBuffer *in_device = gst_accel_buffer_peek (inbuf, priv->device);
      if (in_device && accel_buffer_is_stale (in_device))
        {
          GST_ELEMENT_WARNING (self, RESOURCE, FAILED,
                               ("Dropped a frame: its device memory was lost when %s faulted (now generation %u)",
                                accel_device_get_name (priv->device), generation), (NULL));
          return GST_BASE_TRANSFORM_FLOW_DROPPED;
        }
      if (!renew_output (self, outbuf))
        {
          GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT, ("No device memory for a frame on %s",
                                                             accel_device_get_name (priv->device)), (NULL));
          return GST_FLOW_ERROR;
        }
    }
}

/* A pool made before a fault hands out stale frames: renew them. */
static GstFlowReturn
gst_accel_transform_prepare_output_buffer (GstBaseTransform *trans, GstBuffer *inbuf, GstBuffer **outbuf)
{
  GstAccelTransform *self = GST_ACCEL_TRANSFORM (trans);
  GstAccelTransformPrivate *priv = gst_accel_transform_get_instance_private (self);
  GstFlowReturn ret = GST_BASE_TRANSFORM_CLASS (gst_accel_transform_parent_class)->prepare_output_buffer (trans, inbuf,
                                                                                                      outbuf);
  if (ret != GST_FLOW_OK || !priv->out_device || *outbuf == inbuf)
    return ret;
  AccelBuffer *b = gst_accel_buffer_peek (*outbuf, priv->device);
  if (b && accel_buffer_is_stale (b) && !renew_output (self, *outbuf))
    return GST_FLOW_ERROR;
  return GST_FLOW_OK;
}

/* Fixes what is left open the way videoconvertscale does: the input's
 * format if allowed, its size (or, with one side given, the side that
 * keeps the picture's aspect), its pixel aspect ratio. */
static GstCaps *
gst_accel_transform_fixate_caps (GstBaseTransform *trans, GstPadDirection direction, GstCaps *caps,
                                 GstCaps *othercaps)
{
  othercaps = gst_caps_make_writable (gst_caps_truncate (othercaps));
  GstStructure *ins = gst_caps_get_structure (caps, 0);
  GstStructure *outs = gst_caps_get_structure (othercaps, 0);
  const char *format = gst_structure_get_string (ins, "format");
  int in_w = 0, in_h = 0, w = 0, h = 0;

  if (format)
    gst_structure_fixate_field_string (outs, "format", format);
  gst_structure_get_int (ins, "width", &in_w);
  gst_structure_get_int (ins, "height", &in_h);
  gboolean w_fixed = gst_structure_get_int (outs, "width", &w);
  gboolean h_fixed = gst_structure_get_int (outs, "height", &h);
  if (in_w > 0 && in_h > 0)
    {
      if (w_fixed && !h_fixed)
        gst_structure_fixate_field_nearest_int (outs, "height", (int) MAX (1, ((gint64) w * in_h + in_w / 2) / in_w));
      else if (h_fixed && !w_fixed)
        gst_structure_fixate_field_nearest_int (outs, "width", (int) MAX (1, ((gint64) h * in_w + in_h / 2) / in_h));
      else if (!w_fixed && !h_fixed)
        {
          gst_structure_fixate_field_nearest_int (outs, "width", in_w);
          gst_structure_fixate_field_nearest_int (outs, "height", in_h);
        }
    }
  int par_n, par_d;
  if (gst_structure_get_fraction (ins, "pixel-aspect-ratio", &par_n, &par_d)
      && gst_structure_has_field (outs, "pixel-aspect-ratio"))
    gst_structure_fixate_field_nearest_fraction (outs, "pixel-aspect-ratio", par_n, par_d);
  return gst_caps_fixate (othercaps);
}

/* GObject */

/* The device name is read and written under the object lock, as GStreamer
 * elements do; unset, it is "default". */
static char *
gst_accel_transform_dup_device_name (GstAccelTransform *self)
{
  GstAccelTransformPrivate *priv = gst_accel_transform_get_instance_private (self);
  GST_OBJECT_LOCK (self);
  char *name = g_strdup (priv->device_name ? priv->device_name : "default");
  GST_OBJECT_UNLOCK (self);
  return name;
}

static void
gst_accel_transform_set_device_name (GstAccelTransform *self, const char *name)
{
  GstAccelTransformPrivate *priv = gst_accel_transform_get_instance_private (self);
  GST_OBJECT_LOCK (self);
  g_free (priv->device_name);
  priv->device_name = g_strdup (name);
  GST_OBJECT_UNLOCK (self);
}

static const AccelPropertyField transform_fields[] = {
  ACCEL_ACCESSOR_DUP_STRING_NICK (GstAccelTransform, gst_accel_transform_dup_device_name,
                                  gst_accel_transform_set_device_name, "device", "Device",
                                  "The Accel device: default, cpu:0, cuda:0…", "default",
                                  G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY),
  ACCEL_FIELD_ENUM_NICK (GstAccelTransformPrivate, on_fault, "on-fault", "On fault",
                         "What to do when the device faults", gst_accel_on_fault_get_type,
                         GST_ACCEL_ON_FAULT_ERROR, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS),
  ACCEL_FIELD_OBJECT_NICK (GstAccelTransformPrivate, device, "accel-device", "Accel device",
                           "The AccelDevice the element runs on, once started", accel_device_get_type,
                           G_PARAM_READABLE | G_PARAM_STATIC_STRINGS),
};

static void
gst_accel_transform_finalize (GObject *object)
{
  GstAccelTransform *self = GST_ACCEL_TRANSFORM (object);
  GstAccelTransformPrivate *priv = gst_accel_transform_get_instance_private (self);

  g_free (priv->device_name);
  g_ptr_array_unref (priv->steps);
  G_OBJECT_CLASS (gst_accel_transform_parent_class)->finalize (object);
}

static void
gst_accel_transform_class_init (GstAccelTransformClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);

  object_class->finalize = gst_accel_transform_finalize;

  /* The device is the element's until stop: no field is released here. */
  accel_object_class_install_private_fields (object_class, transform_fields, G_N_ELEMENTS (transform_fields));
  accel_device_pspec = g_object_class_find_property (object_class, "accel-device");
  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);

  trans_class->start = gst_accel_transform_start;
  trans_class->stop = gst_accel_transform_stop;
  trans_class->set_caps = gst_accel_transform_set_caps;
  trans_class->decide_allocation = gst_accel_transform_decide_allocation;
  trans_class->propose_allocation = gst_accel_transform_propose_allocation;
  trans_class->prepare_output_buffer = gst_accel_transform_prepare_output_buffer;
  trans_class->transform = gst_accel_transform_transform;
  trans_class->fixate_caps = gst_accel_transform_fixate_caps;
  trans_class->get_unit_size = gst_accel_transform_get_unit_size;
  trans_class->passthrough_on_same_caps = TRUE;

  gst_type_mark_as_plugin_api (GST_TYPE_ACCEL_TRANSFORM, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_ACCEL_ON_FAULT, 0);
  GST_DEBUG_CATEGORY_INIT (gst_accel_transform_debug, "acceltransform", 0, "Accel elements");
}

static void
gst_accel_transform_init (GstAccelTransform *self)
{
  GstAccelTransformPrivate *priv = gst_accel_transform_get_instance_private (self);
  priv->steps = g_ptr_array_new_with_free_func (step_free);
}

/**
 * gst_accel_transform_get_device:
 * @self: an Accel element
 *
 * Returns: (transfer none) (nullable): the device it runs on, once started
 */
AccelDevice *
gst_accel_transform_get_device (GstAccelTransform *self)
{
  GstAccelTransformPrivate *priv = gst_accel_transform_get_instance_private (self);
  return priv->device;
}

/**
 * gst_accel_transform_add_step:
 * @self: an Accel element, in its make_op
 * @op: (transfer full): an image op
 * @info: the frames @op makes
 *
 * Puts a step before the element's op: @op turns each frame (or the
 * previous step's output) into a frame of @info, which the element keeps
 * on its device; the element's op reads the last step's.
 */
void
gst_accel_transform_add_step (GstAccelTransform *self, AccelOp *op, const GstVideoInfo *info)
{
  GstAccelTransformPrivate *priv = gst_accel_transform_get_instance_private (self);
  Step *step = g_new0 (Step, 1);
  step->op = op;
  step->info = *info;
  g_ptr_array_add (priv->steps, step);
}
